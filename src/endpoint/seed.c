/*
 * The responder's seeded credits (rsp_int.h; docs/protocol.md section 5,
 * "Seeded credits"): a one-offset AllReduce's credit carries the
 * responder's own input, and a switch's seeded aggregate, the whole result,
 * may come before registration completes: it is kept until then.
 */
#include "endpoint/rsp_int.h"

#include <string.h>

/* The seed of credit h (index i): the responder's own input to it. */
void rsp_seed_fields(arb_responder *r, const struct rmsg *m, uint32_t i, arb_hdr *h,
                     const uint8_t **pl, size_t *len)
{
    h->payload_valid = !r->cfg.ep.header_only; /* header-only: it stands for its bytes */
    h->payload_kind = ARB_PK_SEED;
    h->offset_a = h->offset_b;
    *len = h->payload_valid ? rsp_pkt_len(r, i) : 0;
    if (r->cfg.ep.header_only) {
        *pl = NULL;
    } else if (m->own) {
        *pl = m->own + (size_t)i * r->cfg.ep.payload;
    } else {
        r->cfg.fill(r->cfg.fill_ctx, m->id, i, r->scratch, *len);
        *pl = r->scratch;
    }
    r->st.seeded++;
}

/*
 * A seeded aggregate before registration completed: the members hold its
 * result already (the switch sent it down), and may have finished their
 * calls, so it is kept, its payload in the result buffer, and committed
 * once every member has registered (rsp_release_held) rather than dropped and
 * credited again. 1 when h was kept (or is a copy of the one kept).
 */
int rsp_hold_seeded(arb_responder *r, const arb_hdr *h, const uint8_t *payload, size_t len, int ce)
{
    struct rmsg *m = &r->msg[0];
    if (h->payload_kind != ARB_PK_SEED || !rsp_seeds(r, m) || r->phase != ARB_RSP_REGISTER ||
        h->message_id != m->id || !r->next || ep_index(m->start, h->offset_a) != 0 ||
        h->offset_b != r->cfg.members || !rsp_contribution_ok(r, 0, h, len))
        return 0;
    if (!r->held) {
        r->held = 1;
        r->held_h = *h;
        r->held_len = len;
        r->held_ce = ce;
        if (!r->cfg.ep.header_only && len && m->result) memcpy(m->result, payload, len);
        r->st.held_masters++;
    }
    return 1;
}

/* Registration completed: the seeded aggregate kept meanwhile commits. */
void rsp_release_held(arb_responder *r, arb_time now)
{
    if (!r->held) return;
    r->held = 0;
    const uint8_t *data = NULL;
    if (!r->cfg.ep.header_only && r->held_len && r->msg[0].result)
        data = memcpy(r->scratch, r->msg[0].result, r->held_len);
    arb_hdr h = r->held_h;
    rsp_on_master(r, &h, data, r->held_len, r->held_ce, now);
}
