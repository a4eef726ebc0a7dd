/*
 * The responder's handshakes (rsp_int.h): REGISTER and END from the
 * members, each acknowledged (REGISTER_ACK, END_ACK), also when it is a
 * retry of a message closed already, and the end of registration
 * (docs/protocol.md section 5).
 */
#include "endpoint/rsp_int.h"

/* Is (id, start) one of the two messages closed last? */
static int closed_recently(const arb_responder *r, uint8_t id, uint32_t start)
{
    for (int x = 0; x < 2; x++)
        if (r->prev_valid[x] && id == r->prev_id[x] && start == r->prev_start[x]) return 1;
    return 0;
}

/* Is message `id` one that closed before the two remembered (1..127 ids
 * behind the message in progress)? A requester may keep retrying the END of
 * a message whose END_ACK was lost while it runs two more (each message
 * moves aside once its output is complete); every message before the one in
 * progress closed with all its ENDs in, so the END is acknowledged again. */
static int closed_long_ago(const arb_responder *r, uint8_t id)
{
    uint8_t behind = (uint8_t)(r->msg[0].id - id);
    return r->closed && behind >= 1 && behind < 128 && (uint64_t)behind <= r->closed;
}

static void send_ack(arb_responder *r, arb_ptype type, uint8_t id, uint32_t start, int member)
{
    arb_hdr h;
    ep_hdr(&h, type, id, (uint8_t)r->cfg.dtype, r->cfg.ext);
    h.repair = type == ARB_PT_REGISTER_ACK;
    h.offset_a = start;
    rsp_emit(r, ARB_EP_DST_MEMBER, 0, (uint32_t)member, &h, NULL, 0);
}

void rsp_on_register(arb_responder *r, const arb_hdr *h, int from)
{
    if (!rsp_is_member(r, from)) {
        r->st.not_member++;
        return;
    }
    for (int s = 0; s < 2; s++) {
        struct rmsg *m = &r->msg[s];
        if (h->message_id != m->id) continue;
        uint32_t want;
        if (s == 0)
            want = m->started ? m->start : r->next_seq;
        else if (r->msg[0].started)
            want = ep_seq(r->msg[0].start, r->msg[0].n);
        else
            break; /* two messages ahead of anything started locally */
        if (h->offset_a != want) break;
        if (!bm_test(m->reg, (uint32_t)from)) {
            bm_set(m->reg, (uint32_t)from);
            m->nreg++;
        }
        r->st.registers++;
        send_ack(r, ARB_PT_REGISTER_ACK, h->message_id, want, from);
        return;
    }
    if (closed_recently(r, h->message_id, h->offset_a)) {
        r->st.registers++; /* a retry whose ack was lost: ack again */
        send_ack(r, ARB_PT_REGISTER_ACK, h->message_id, h->offset_a, from);
        return;
    }
    r->st.bad_registers++;
}

void rsp_on_end(arb_responder *r, const arb_hdr *h, int from, arb_time now)
{
    if (!rsp_is_member(r, from)) {
        r->st.not_member++;
        return;
    }
    struct rmsg *m = &r->msg[0];
    if (r->phase == ARB_RSP_REGISTER && r->cfg.ep.seed && m->started && h->message_id == m->id &&
        h->offset_a == m->start) {
        /* A member that holds its result before its REGISTER came (a seeded
         * credit's, sent down by the switch: its REGISTER was lost, and it
         * stopped sending it once the result came): its END names the
         * message and its start as the REGISTER would. Acknowledged when it
         * comes again, once every member has registered. */
        if (!bm_test(m->reg, (uint32_t)from)) {
            bm_set(m->reg, (uint32_t)from);
            m->nreg++;
            r->st.end_registers++;
        }
        return;
    }
    if ((r->phase == ARB_RSP_ACTIVE || r->phase == ARB_RSP_DRAIN) &&
        r->cfg.kind != ARB_EP_BARRIER && h->message_id == m->id && h->offset_a == m->start) {
        if (!bm_test(r->ends, (uint32_t)from)) {
            bm_set(r->ends, (uint32_t)from);
            r->nends++;
            rsp_end_seen(r, now); /* the order of ENDs tells of lost tails */
            if (r->phase == ARB_RSP_DRAIN) rsp_end_arm(r);
        }
        r->st.ends++;
        /* a seeded message's member holds its result before the commit
         * (the switch sent it) and keeps its input for a credit sent again
         * until its END is acknowledged: after the commit */
        if (rsp_seeds(r, m) && r->committed < m->n) return;
        send_ack(r, ARB_PT_END_ACK, m->id, m->start, from);
        return;
    }
    if (closed_recently(r, h->message_id, h->offset_a) || closed_long_ago(r, h->message_id)) {
        r->st.ends++;
        send_ack(r, ARB_PT_END_ACK, h->message_id, h->offset_a, from);
        return;
    }
    r->st.stale++;
}

/* Every member registered: credits flow, and the loss timers of the
 * credits sent before (ep.early) run from now, since a member may have
 * started only now; their loops are no samples. A credit sent this instant
 * was not early after all. */
void rsp_registered(arb_responder *r, arb_time now)
{
    r->phase = ARB_RSP_ACTIVE;
    r->any_credit = 0;
    for (uint32_t i = r->base; i < r->next; i++) {
        struct rentry *e = rsp_entry(r, i);
        if (e->state != E_ISSUED || !e->early) continue;
        if (e->first == now) {
            e->early = 0;
            continue;
        }
        r->st.early++;
        e->sent = now;
        for (uint32_t a = 0; a < ATT_KEEP; a++)
            e->att_sent[a] = now;
    }
}
