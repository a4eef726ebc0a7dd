/*
 * The responder engine: credit issue through the window and rate gates,
 * commit, result delivery, the receive path. The REGISTER and END
 * handshakes live in handshake.c; loss detection, retries in the network,
 * the bypass repair, tree health and the timers in recovery.c; the state
 * they share is in rsp_int.h. docs/endpoint.md walks
 * through the state machine, docs/protocol.md through recovery.
 *
 * Offsets of the message in progress are kept by message-relative index i
 * (offset = start_seq + i, 24-bit). The ring holds the entries of indices
 * [base, next): `next` is the next index to credit for the first time,
 * `base` the oldest not yet committed. Committed results wait in `pending`
 * for a credit to ride on; once every offset has had its first credit they
 * leave as tails and are listed in `tails` for the END-wait replay. The
 * result buffer of the message is the result cache: nothing is copied per
 * packet.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>

#include "arbor/endpoint.h"
#include "arbor/reduce.h"
#include "endpoint/rsp_int.h"

void arb_responder_config_default(arb_responder_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->members = 1;
    cfg->dtype = ARB_DTYPE_F32;
    cfg->op = ARB_OP_SUM;
    cfg->kind = ARB_EP_PULL_RESULT;
    cfg->subchannels = 1;
    arb_ep_settings_default(&cfg->ep);
    cfg->redundant = 1;
    cfg->repair_budget = ARB_EP_REPAIR_BUDGET_DEFAULT;
    cfg->ring_factor = ARB_EP_RING_FACTOR_DEFAULT;
}

static uint32_t window_of(const arb_responder *r)
{
    uint32_t w = r->cfg.cc ? arb_cc_window(r->cfg.cc) : r->cfg.ep.window;
    return w ? w : 1;
}

static arb_time spacing_of(const arb_responder *r)
{
    return r->cfg.cc ? arb_cc_min_spacing(r->cfg.cc) : 0;
}

/* How far ahead of the oldest open offset credits may go: ring_factor x
 * the window, within the message and the ring's largest size. */
static uint32_t ring_want(const arb_responder *r)
{
    uint64_t l = (uint64_t)r->cfg.ring_factor * window_of(r);
    if (l > r->msg[0].n) l = r->msg[0].n ? r->msg[0].n : 1;
    return l < r->ring_max ? (uint32_t)l : r->ring_max;
}

/* Grow the ring and its FIFOs to hold `want` offsets (doubling, at most
 * ring_max): the ring follows the offsets in play, not the largest window
 * the controller might open. Out of memory, the ring stays as it is and
 * stops growing (the window is held to it). */
static void grow_ring(arb_responder *r, uint32_t want)
{
    uint32_t cap = r->ring_cap;
    while (cap < want)
        cap = cap > r->ring_max / 2 ? r->ring_max : cap * 2;
    struct rentry *ring = arb_mem_calloc(r->cfg.mem, cap, sizeof *ring);
    uint32_t *pending = arb_mem_malloc(r->cfg.mem, (size_t)cap * sizeof *pending);
    uint32_t *tails = arb_mem_malloc(r->cfg.mem, (size_t)cap * sizeof *tails);
    if (!ring || !pending || !tails) {
        arb_mem_free(r->cfg.mem, ring);
        arb_mem_free(r->cfg.mem, pending);
        arb_mem_free(r->cfg.mem, tails);
        r->ring_max = r->ring_cap;
        return;
    }
    for (uint32_t i = r->base; i < r->next; i++)
        ring[i % cap] = r->ring[i % r->ring_cap];
    for (uint32_t k = 0; k < r->pend_len; k++)
        pending[k] = r->pending[(r->pend_head + k) % r->ring_cap];
    memcpy(tails, r->tails, (size_t)r->ntails * sizeof *tails);
    arb_mem_free(r->cfg.mem, r->ring);
    arb_mem_free(r->cfg.mem, r->pending);
    arb_mem_free(r->cfg.mem, r->tails);
    r->ring = ring;
    r->pending = pending;
    r->tails = tails;
    r->pend_head = 0;
    r->ring_cap = cap;
    r->st.ring_grows++;
}

/* The limit in force; the ring doubles when the offsets in play fill it
 * and the window wants more, so it follows what is in flight. */
static uint32_t ring_limit(arb_responder *r)
{
    uint32_t l = ring_want(r);
    if (l > r->ring_cap && r->next - r->base >= r->ring_cap)
        grow_ring(r, r->ring_cap < l / 2 ? 2 * r->ring_cap : l);
    return l < r->ring_cap ? l : r->ring_cap;
}

static uint8_t op_of(const arb_responder *r)
{
    return ep_kind_pull(r->cfg.kind) ? (uint8_t)r->cfg.op : (uint8_t)ARB_OP_NOP;
}

/* ------------------------------------------------------------------ */
/* Payloads                                                             */
/* ------------------------------------------------------------------ */

/* Does result (or pushed packet) i travel with bytes? */
static int carries_data(const arb_responder *r, uint32_t i)
{
    if (r->cfg.ep.header_only || rsp_pkt_len(r, i) == 0) return 0;
    return r->cfg.kind == ARB_EP_PULL_RESULT || r->cfg.kind == ARB_EP_PUSH;
}

/* The bytes of result i (pull) or of packet i to push. */
static const uint8_t *data_of(arb_responder *r, uint32_t i)
{
    const struct rmsg *m = &r->msg[0];
    size_t off = (size_t)i * r->cfg.ep.payload;
    if (r->cfg.kind == ARB_EP_PULL_RESULT) return m->result + off;
    if (m->own) return m->own + off;
    r->cfg.fill(r->cfg.fill_ctx, m->id, i, r->scratch, rsp_pkt_len(r, i));
    return r->scratch;
}

/* What rides a credit, a tail or a replay: result `p` (pull kinds) or
 * packet `p` itself (push). `replay` selects REPLAY over DATA. */
static void ride_fields(arb_responder *r, arb_hdr *h, uint32_t p, int replay, const uint8_t **pl,
                        size_t *len)
{
    h->offset_a = ep_seq(r->msg[0].start, p);
    if (carries_data(r, p)) {
        h->payload_valid = 1;
        h->payload_kind = replay ? ARB_PK_REPLAY : ARB_PK_DATA;
        *pl = data_of(r, p);
        *len = rsp_pkt_len(r, p);
    } else {
        h->payload_valid = 0;
        h->payload_kind = ARB_PK_COMPLETION;
        *pl = NULL;
        *len = 0;
    }
}

/* ------------------------------------------------------------------ */
/* Credits                                                              */
/* ------------------------------------------------------------------ */

/*
 * A normal credit for index i: its first (the entry is new: i == next) or
 * a later attempt (the entry is LOST). A later attempt carries the result
 * that rode the first, so that a requester who lost it gets it again.
 */
static void send_credit(arb_responder *r, uint32_t i, arb_time now)
{
    struct rmsg *m = &r->msg[0];
    struct rentry *e = rsp_entry(r, i);
    uint32_t k = ep_seq(m->start, i);
    int first = i == r->next;
    arb_hdr h;
    const uint8_t *pl = NULL;
    size_t len = 0;

    if (first) {
        e->attempt = 0;
        e->misses = 0;
        e->expiries = 0;
        e->probes = 0;
        e->early = r->phase == ARB_RSP_REGISTER;
        e->seeded = 0;
        e->why = WHY_NONE;
        e->rslot = 0;
        e->ride = NO_RIDE;
        e->first = now;
    } else {
        assert(e->state == E_LOST);
        e->attempt++;
        r->lost--;
        r->st.retries++;
    }
    e->state = E_ISSUED;
    e->sub = rsp_pick_sub(r, k, first, first ? UINT32_MAX : e->sub, e->expiries, now);
    r->sub[e->sub].out++;
    e->seq = ++r->seq;
    e->sent = now;
    e->att_sent[e->attempt % ATT_KEEP] = now;
    e->att_sub[e->attempt % ATT_KEEP] = e->sub;

    ep_hdr(&h, ARB_PT_RESPONSE, m->id, (uint8_t)r->cfg.dtype, r->cfg.ext);
    h.op = op_of(r);
    h.credit_valid = 1;
    h.offset_b = k;
    h.offset_a = k;
    h.attempt = e->attempt;
    if (r->cfg.kind == ARB_EP_PUSH) {
        ride_fields(r, &h, i, 0, &pl, &len);
        if (!h.payload_valid) h.payload_kind = ARB_PK_DATA; /* bare: the credit is the data */
    } else if (ep_kind_pull(r->cfg.kind)) {
        if (first && r->pend_len) {
            e->ride = r->pending[r->pend_head];
            r->pend_head = (r->pend_head + 1) % r->ring_cap;
            r->pend_len--;
            r->st.results_riding++;
        }
        if (e->ride != NO_RIDE)
            ride_fields(r, &h, e->ride, 0, &pl, &len);
        else if (rsp_seeds(r, m))
            rsp_seed_fields(r, m, i, &h, &pl, &len);
    }
    if (first) r->next++;
    if (first && r->next == m->n && m->n > 1 && r->committed == 0) r->one_window = 1;
    r->outstanding++;
    if (r->outstanding > r->st.peak_outstanding) r->st.peak_outstanding = r->outstanding;
    r->last_credit = now;
    r->any_credit = 1;
    r->st.credits++;
    if (r->cfg.cc) arb_cc_on_send(r->cfg.cc, 0, now); /* the controller's credit_bytes */
    rsp_emit(r, ARB_EP_DST_GROUP, e->sub, 0, &h, pl, len);
}

void rsp_send_repair_credit(arb_responder *r, uint32_t i)
{
    struct rmsg *m = &r->msg[0];
    struct rentry *e = rsp_entry(r, i);
    uint32_t k = ep_seq(m->start, i);
    arb_hdr h;
    const uint8_t *pl = NULL;
    size_t len = 0;

    ep_hdr(&h, ARB_PT_RESPONSE, m->id, (uint8_t)r->cfg.dtype, r->cfg.ext);
    h.op = op_of(r);
    h.repair = 1;
    h.credit_valid = 1;
    h.offset_b = k;
    h.offset_a = k;
    uint32_t p = r->cfg.kind == ARB_EP_PUSH ? i : e->ride;
    if (p != NO_RIDE) {
        ride_fields(r, &h, p, 1, &pl, &len);
        /* A repair credit has no COMPLETION form: 0 / DATA whose offset_a
         * names the replayed result (it differs from the credit offset
         * whenever something rode; docs/endpoint.md). */
        if (!h.payload_valid) h.payload_kind = ARB_PK_DATA;
    }
    r->st.repair_credits++;
    e->sub = rsp_live_sub(r, e->sub, k);
    const struct rrep *rp = e->rslot ? &r->rep[e->rslot - 1] : NULL;
    if (r->live_subs > 0 && (!rp || rp->tries <= 1)) {
        rsp_emit(r, ARB_EP_DST_GROUP, e->sub, 0, &h, pl, len);
        return;
    }
    /* A repeat: the tree did not bring every answer (it may be the one
     * that failed), so the credit goes to each member still missing by
     * itself, routed like any unicast packet; so does every repair credit
     * while no tree is alive. */
    for (uint32_t j = 0; j < r->cfg.members; j++)
        if (!bm_test(rp->bits, j)) rsp_emit(r, ARB_EP_DST_MEMBER, e->sub, j, &h, pl, len);
}

void rsp_send_tail(arb_responder *r, uint32_t p, int replay, int member)
{
    arb_hdr h;
    const uint8_t *pl = NULL;
    size_t len = 0;
    ep_hdr(&h, ARB_PT_RESPONSE, r->msg[0].id, (uint8_t)r->cfg.dtype, r->cfg.ext);
    h.op = op_of(r);
    ride_fields(r, &h, p, replay, &pl, &len);
    /* A tail replay exists only with a payload; without one the replay is
     * the tail COMPLETION sent again. */
    if (replay && h.payload_valid) h.repair = 1;
    uint32_t k = ep_seq(r->msg[0].start, p);
    /* not down a tree that has gone silent: it may have failed
     * for some members, and a short message ends before its verdict */
    uint32_t sub = rsp_quiet_sub(r, k % r->cfg.subchannels, k);
    if (member >= 0)
        rsp_emit(r, ARB_EP_DST_MEMBER, sub, (uint32_t)member, &h, pl, len);
    else if (r->live_subs > 0)
        rsp_emit(r, ARB_EP_DST_GROUP, sub, 0, &h, pl, len);
    else /* no tree to carry it: to each member */
        for (uint32_t j = 0; j < r->cfg.members; j++)
            rsp_emit(r, ARB_EP_DST_MEMBER, sub, j, &h, pl, len);
}

/* Results that have no first credit left to ride leave as tails. */
static void flush_tails(arb_responder *r, arb_time now)
{
    if (r->pend_len) r->last_tail = now;
    while (r->pend_len) {
        uint32_t p = r->pending[r->pend_head];
        r->pend_head = (r->pend_head + 1) % r->ring_cap;
        r->pend_len--;
        if (!rsp_entry(r, p)->seeded) rsp_send_tail(r, p, 0, -1); /* else the switch sent it */
        assert(r->ntails < r->ring_cap);
        r->tails[r->ntails++] = p;
        r->st.tails++;
    }
}

static void close_message(arb_responder *r, arb_time now);

static int all_ended(const arb_responder *r)
{
    return r->cfg.kind == ARB_EP_BARRIER || r->nends == r->cfg.members;
}

/*
 * A message of one offset (a barrier, a zero-length or a small message) is
 * latency-bound: its only credit has no later credit to reveal its loss, and
 * a timer costs more than the whole message. It goes out twice at once, as
 * attempts 0 and 1 (each in its own slots): either one completing commits
 * it, so one lost copy costs nothing. Attempt 0 leaves the window without
 * counting as a loss.
 */
static void send_twin(arb_responder *r, arb_time now)
{
    struct rentry *e = rsp_entry(r, 0);
    r->outstanding--;
    r->sub[e->sub].out--;
    e->state = E_LOST;
    e->why = WHY_NONE;
    r->lost++;
    r->st.twins++;
    send_credit(r, 0, now);
    r->st.retries--; /* a twin, not a retry */
}

/* The oldest offset waiting for a retry credit, or UINT32_MAX. */
static uint32_t oldest_lost(const arb_responder *r)
{
    for (uint32_t i = r->base; r->lost && i < r->next; i++)
        if (rsp_entry_c(r, i)->state == E_LOST) return i;
    return UINT32_MAX;
}

/* Every tree is dead: offset i (fresh, or lost) goes to the bypass repair
 * without a credit, unless a tree has no credit in flight: then it is
 * that tree's probe (1: handled here; 0: send the credit). One probe per
 * tree always in flight finds a tree back within a loop of its return (a
 * tree killed by a run of random losses is back at once). A fresh offset
 * takes the oldest result waiting to ride, which its repair credits
 * carry. */
static int no_tree(arb_responder *r, uint32_t i, arb_time now)
{
    uint32_t k = ep_seq(r->msg[0].start, i), n = r->cfg.subchannels;
    for (uint32_t x = 0; x < n; x++) {
        uint32_t s = (k + x) % n;
        if (r->sub[s].out == 0) {
            r->probe_sub = s;
            r->st.probes++;
            return 0;
        }
    }
    struct rentry *e = rsp_entry(r, i);
    if (i == r->next) {
        e->attempt = 0;
        e->misses = e->expiries = 0;
        e->why = WHY_NONE;
        e->rslot = 0;
        e->ride = NO_RIDE;
        e->first = e->sent = now;
        e->seq = ++r->seq;
        e->sub = k % r->cfg.subchannels;
        if (ep_kind_pull(r->cfg.kind) && r->pend_len) {
            e->ride = r->pending[r->pend_head];
            r->pend_head = (r->pend_head + 1) % r->ring_cap;
            r->pend_len--;
            r->st.results_riding++;
        }
        r->next++;
    } else {
        r->lost--;
    }
    rsp_enter_bypass(r, e);
    return 1;
}

/* Credits the gates allow: retries of lost offsets first (oldest first),
 * then offsets credited for the first time. */
static void issue_credits(arb_responder *r, arb_time now)
{
    const struct rmsg *m = &r->msg[0];
    uint32_t win = window_of(r), lim = ring_limit(r);
    arb_time sp = spacing_of(r);
    while (r->outstanding < win) {
        if (r->any_credit && sp && now < r->last_credit + sp) break;
        uint32_t i = oldest_lost(r);
        if (i == UINT32_MAX) {
            if (r->next < m->n && r->next - r->base >= lim) lim = ring_limit(r); /* it may grow */
            if (r->next >= m->n || r->next - r->base >= lim) break;
            i = r->next;
        }
        int first = i == r->next;
        if (r->live_subs == 0 && no_tree(r, i, now)) continue;
        send_credit(r, i, now);
        if (first && m->n == 1 && r->cfg.redundant && r->cfg.ep.attempts > 1) send_twin(r, now);
    }
}

/*
 * Before every member has registered (ep.early): a pull message of one
 * offset is credited, with its twin, so that a member that starts after
 * this responder finds its credit waiting (docs/protocol.md section 5). A
 * longer message ends with its last offsets, credited after registration
 * anyway: crediting its first early only splits its credits in two waves.
 * A pull message's first credit carries no result, and nothing commits
 * before registration, so a member whose start_seq disagrees is still
 * refused before any of its bytes count.
 */
static void credit_early(arb_responder *r, arb_time now)
{
    const struct rmsg *m = &r->msg[0];
    if (!r->cfg.ep.early || !ep_kind_pull(r->cfg.kind) || r->next != 0 || m->n != 1 ||
        r->live_subs == 0)
        return;
    send_credit(r, 0, now);
    if (r->cfg.redundant && r->cfg.ep.attempts > 1) send_twin(r, now);
}

/* Issue what the gates allow; start repairs the budget allows; flush
 * tails; move through the phases. */
static void pump(arb_responder *r, arb_time now)
{
    struct rmsg *m = &r->msg[0];
    if (r->error) return;
    if (r->phase == ARB_RSP_DRAIN && all_ended(r)) {
        close_message(r, now);
        return;
    }
    if (r->phase == ARB_RSP_REGISTER && m->started) {
        if (m->nreg < r->cfg.members) {
            credit_early(r, now);
            return;
        }
        rsp_registered(r, now);
        rsp_release_held(r, now);
    }
    if (r->phase != ARB_RSP_ACTIVE) return;

    rsp_detect_losses(r, now);
    rsp_start_repairs(r, now);
    issue_credits(r, now);
    if (r->waiting_repair) rsp_start_repairs(r, now); /* no tree: offsets went to the bypass */
    if (r->next == m->n) flush_tails(r, now);
    if (r->committed == m->n) {
        r->phase = ARB_RSP_DRAIN;
        r->end_rounds = 0;
        r->end_silent = 0;
        r->end_timer = now + rsp_end_wait(r, 0);
        rsp_end_arm(r);
        if (all_ended(r)) close_message(r, now);
    } else {
        rsp_detect_losses(r, now); /* the deadlines of the credits just sent */
    }
}

/* ------------------------------------------------------------------ */
/* Commit                                                               */
/* ------------------------------------------------------------------ */

void rsp_commit(arb_responder *r, uint32_t i, const uint8_t *data, uint32_t count, int repaired,
                uint8_t attempt, arb_time now)
{
    struct rmsg *m = &r->msg[0];
    struct rentry *e = rsp_entry(r, i);
    size_t len = rsp_pkt_len(r, i);
    const uint8_t *res = NULL;

    e->state = E_COMMITTED;
    if (!r->first_commit) r->first_commit = now ? now : 1;
    r->committed++;
    r->st.commits++;
    if (repaired) r->st.repair_commits++;

    if (ep_kind_pull(r->cfg.kind) && !r->cfg.ep.header_only && len && m->result) {
        uint8_t *dst = m->result + (size_t)i * r->cfg.ep.payload;
        if (data)
            memcpy(dst, data, len);
        else
            memset(dst, 0, len);
        const uint8_t *own = NULL;
        if (e->seeded) {
            /* the switch's slot held it: the aggregate is the whole result */
        } else if (m->own) {
            own = m->own + (size_t)i * r->cfg.ep.payload;
        } else if (r->cfg.fill) {
            r->cfg.fill(r->cfg.fill_ctx, m->id, i, r->scratch, len);
            own = r->scratch;
        }
        if (own) {
            int rc = arb_reduce_bytes(r->cfg.op, r->cfg.dtype, dst, own, len);
            assert(rc == 0);
            (void)rc;
        }
        res = dst;
    }
    if (r->cfg.on_commit) {
        arb_commit_info c = {m->id,    ep_seq(m->start, i),    i,       res, res ? len : 0, count,
                             repaired, repaired ? 0 : attempt, e->first};
        r->cfg.on_commit(r->cfg.commit_ctx, &c);
    }
    if (ep_kind_pull(r->cfg.kind)) {
        assert(r->pend_len < r->ring_cap);
        r->pending[(r->pend_head + r->pend_len) % r->ring_cap] = i;
        r->pend_len++;
    }
    while (r->base < r->next && rsp_entry(r, r->base)->state == E_COMMITTED) {
        rsp_entry(r, r->base)->state = E_FREE;
        r->base++;
    }
}

/* ------------------------------------------------------------------ */
/* Messages                                                             */
/* ------------------------------------------------------------------ */

static void reset_run(arb_responder *r)
{
    for (uint32_t i = 0; i < r->ring_cap; i++)
        r->ring[i].state = E_FREE;
    for (uint32_t s = 0; s < r->cfg.repair_budget; s++)
        r->rep[s].used = 0;
    r->base = r->next = r->committed = 0;
    r->outstanding = r->lost = r->in_repair = r->waiting_repair = r->reps_used = 0;
    rsp_reset_trees(r);
    r->any_credit = 0;
    r->last_credit = 0;
    memset(r->ends, 0, sizeof r->ends);
    r->nends = 0;
    r->end_deadline = r->end_timer = ARB_TIME_NEVER;
    r->end_rounds = 0;
    r->end_silent = 0;
    r->last_tail = 0;
    r->end_delay = 0;
    r->replay_at = 0;
    r->round_delay = 0;
    r->pend_head = r->pend_len = 0;
    r->ntails = 0;
    r->one_window = 0;
    r->held = 0;
    r->next_due = ARB_TIME_NEVER;
}

static void close_message(arb_responder *r, arb_time now)
{
    struct rmsg *m = &r->msg[0];
    r->st.messages++;
    r->closed++;
    r->prev_valid[1] = r->prev_valid[0];
    r->prev_id[1] = r->prev_id[0];
    r->prev_start[1] = r->prev_start[0];
    r->prev_valid[0] = 1;
    r->prev_id[0] = m->id;
    r->prev_start[0] = m->start;
    r->next_seq = ep_seq(m->start, m->n);
    r->msg[0] = r->msg[1];
    memset(&r->msg[1], 0, sizeof r->msg[1]);
    r->msg[1].id = (uint8_t)(r->msg[0].id + 1);
    reset_run(r);
    r->phase = r->msg[0].started ? ARB_RSP_REGISTER : ARB_RSP_IDLE;
    arb_log(&r->cfg.logger, ARB_LOG_DEBUG, "responder %llu: message %u closed",
            (unsigned long long)r->cfg.channel, (unsigned)r->prev_id[0]);
    pump(r, now);
}

static int config_ok(const arb_responder_config *cfg)
{
    size_t es = arb_dtype_size(cfg->dtype);
    if (!cfg->send || cfg->members == 0 || cfg->members > ARB_EP_MAX_MEMBERS || es == 0 ||
        cfg->ep.payload == 0 || cfg->ep.payload > ARB_PAYLOAD_MAX || cfg->ep.payload % es != 0 ||
        (unsigned)cfg->op >= ARB_OP_COUNT || (unsigned)cfg->kind >= ARB_EP_KIND_COUNT ||
        cfg->subchannels == 0 || cfg->subchannels > ARB_EP_MAX_SUBCHANNELS || cfg->ext > 1)
        return 0;
    if (cfg->ep.timeout < ARB_EP_TIMER_MIN || cfg->ep.timeout == ARB_TIME_NEVER ||
        (cfg->ep.adaptive_timeout &&
         (cfg->ep.timeout_min < ARB_EP_TIMER_MIN || cfg->ep.timeout_min > cfg->ep.timeout)))
        return 0;
    if (cfg->ep.attempts == 0 || cfg->ep.attempts > ARB_ATTEMPT_MAX + 1u ||
        cfg->ep.miss_limit == 0 || cfg->ep.dead_after == 0 || cfg->ep.repair_tries == 0 ||
        cfg->ep.repair_tries > 64 || cfg->ep.backoff_max == 0 ||
        cfg->ep.backoff_max > ARB_EP_BACKOFF_MAX_DEFAULT)
        return 0;
    if (cfg->repair_budget == 0 || cfg->repair_budget > ARB_EP_MAX_MEMBERS ||
        cfg->ring_factor == 0 || (!cfg->cc && cfg->ep.window == 0) || cfg->ring > RING_MAX ||
        cfg->first_seq > ARB_OFFSET_MASK)
        return 0;
    return !(ep_kind_pull(cfg->kind) && cfg->op == ARB_OP_NOP);
}

int arb_responder_new(arb_responder **out, const arb_responder_config *cfg)
{
    if (!out || !cfg) return ARB_EINVAL;
    *out = NULL;
    if (!config_ok(cfg)) return ARB_EINVAL;

    arb_responder *r = arb_mem_calloc(cfg->mem, 1, sizeof *r);
    if (!r) return ARB_ENOMEM;
    r->cfg = *cfg;
    uint32_t cap = cfg->ring;
    if (!cap) {
        /* at most: the largest window the controller may ever open */
        uint32_t w = cfg->cc ? arb_cc_max_window(cfg->cc) : cfg->ep.window;
        uint64_t c = (uint64_t)cfg->ring_factor * (w ? w : 1);
        cap = c > RING_MAX ? RING_MAX : (uint32_t)c;
    }
    r->ring_max = cap;
    /* to begin with: the window it opens with, within [RING_INITIAL,
     * RING_START] (a rate-based controller's window is its largest); the
     * ring grows with the offsets in play */
    uint64_t c0 = (uint64_t)cfg->ring_factor * (cfg->cc ? arb_cc_window(cfg->cc) : cfg->ep.window);
    if (c0 < RING_INITIAL) c0 = RING_INITIAL;
    if (c0 > RING_START) c0 = RING_START;
    r->ring_cap = c0 < cap ? (uint32_t)c0 : cap;
    cap = r->ring_cap;
    const arb_mem *mem = cfg->mem;
    r->ring = arb_mem_calloc(mem, cap, sizeof *r->ring);
    r->pending = arb_mem_calloc(mem, cap, sizeof *r->pending);
    r->tails = arb_mem_calloc(mem, cap, sizeof *r->tails);
    r->rep = arb_mem_calloc(mem, cfg->repair_budget, sizeof *r->rep);
    r->scratch = arb_mem_malloc(mem, cfg->ep.payload);
    r->sub = arb_mem_calloc(mem, cfg->subchannels, sizeof *r->sub);
    int bad = !r->ring || !r->pending || !r->tails || !r->rep || !r->scratch || !r->sub;
    for (uint32_t s = 0; !bad && !cfg->ep.header_only && s < cfg->repair_budget; s++) {
        r->rep[s].acc = arb_mem_malloc(mem, cfg->ep.payload);
        if (!r->rep[s].acc) bad = 1;
    }
    if (bad) {
        arb_responder_free(r);
        return ARB_ENOMEM;
    }
    r->msg[0].id = cfg->first_msg_id;
    r->msg[1].id = (uint8_t)(cfg->first_msg_id + 1);
    r->next_seq = cfg->first_seq;
    r->phase = ARB_RSP_IDLE;
    r->min_rtt = ARB_TIME_NEVER;
    r->reo_mult = 1;
    r->rto_mult = 1;
    r->live_subs = cfg->subchannels;
    reset_run(r);
    *out = r;
    return 0;
}

void arb_responder_free(arb_responder *r)
{
    if (!r) return;
    const arb_mem *mem = r->cfg.mem;
    if (r->rep)
        for (uint32_t s = 0; s < r->cfg.repair_budget; s++)
            arb_mem_free(mem, r->rep[s].acc);
    arb_mem_free(mem, r->rep);
    arb_mem_free(mem, r->ring);
    arb_mem_free(mem, r->pending);
    arb_mem_free(mem, r->tails);
    arb_mem_free(mem, r->scratch);
    arb_mem_free(mem, r->sub);
    arb_mem_free(mem, r);
}

int arb_responder_start_message(arb_responder *r, uint8_t msg_id, uint64_t length,
                                const void *own_data, void *result_buf, arb_time now)
{
    if (!r) return ARB_EINVAL;
    if (r->error) return ARB_ESTATE;
    int s = !r->msg[0].started ? 0 : !r->msg[1].started ? 1 : -1;
    if (s < 0) return ARB_ESTATE;
    struct rmsg *m = &r->msg[s];
    if (msg_id != m->id) return ARB_EINVAL;
    if (length % arb_dtype_size(r->cfg.dtype) != 0) return ARB_EINVAL;
    if (r->cfg.kind == ARB_EP_BARRIER && length != 0) return ARB_EINVAL;
    uint64_t n = ep_packets(length, r->cfg.ep.payload);
    if (n > ARB_EP_MAX_OFFSETS) return ARB_EINVAL;
    if (!r->cfg.ep.header_only && length > 0) {
        if (r->cfg.kind == ARB_EP_PULL_RESULT && !result_buf) return ARB_EINVAL;
        if (r->cfg.kind == ARB_EP_PUSH && !own_data && !r->cfg.fill) return ARB_EINVAL;
    }
    m->started = 1;
    m->length = length;
    m->n = (uint32_t)n;
    m->own = own_data;
    m->result = result_buf;
    m->start = s == 0 ? r->next_seq : ep_seq(r->msg[0].start, r->msg[0].n);
    if (s == 0) {
        r->phase = ARB_RSP_REGISTER;
        pump(r, now);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Receive                                                              */
/* ------------------------------------------------------------------ */

/* The index of a packet for the message in progress, or -1 (counted). */
static int64_t locate(arb_responder *r, const arb_hdr *h)
{
    const struct rmsg *m = &r->msg[0];
    if (r->phase == ARB_RSP_REGISTER && h->message_id == m->id && r->next) {
        r->st.early_masters++; /* before registration: the timer will retry it */
        return -1;
    }
    if ((r->phase != ARB_RSP_ACTIVE && r->phase != ARB_RSP_DRAIN) || h->message_id != m->id) {
        r->st.stale++;
        return -1;
    }
    uint32_t i = ep_index(m->start, h->offset_a);
    if (i >= r->next) {
        r->st.stale++;
        return -1;
    }
    return i;
}

/* One completion sample for the controller: the credits outstanding when
 * it arrived include this one. */
static void cc_sample(arb_responder *r, arb_time rtt, int ce, arb_time now)
{
    r->st.samples++;
    if (!r->cfg.cc) return;
    arb_cc_sample x = {rtt, ce, r->outstanding + 1, 0};
    arb_cc_on_ack(r->cfg.cc, &x, now);
}

/*
 * A root aggregate (a "master"). Whichever attempt completes first commits
 * the offset, exactly once: the attempt in flight (a completion sample), an
 * earlier one the responder had given up on (a spurious loss), or any
 * attempt while the bypass repair is under way (the repair is abandoned).
 */
void rsp_on_master(arb_responder *r, const arb_hdr *h, const uint8_t *payload, size_t len, int ce,
                   arb_time now)
{
    if (h->agg_depth != 0) { /* it should have been aggregated on the way */
        r->st.unexpected++;
        return;
    }
    if (rsp_hold_seeded(r, h, payload, len, ce)) return;
    int64_t at = locate(r, h);
    if (at < 0) return;
    uint32_t i = (uint32_t)at;
    if (i < r->base) {
        r->st.dup_masters++;
        return;
    }
    struct rentry *e = rsp_entry(r, i);
    if (e->state == E_COMMITTED) {
        r->st.dup_masters++;
        return;
    }
    if (h->attempt > e->attempt) { /* a credit never sent */
        r->st.stale++;
        return;
    }
    if (h->offset_b != r->cfg.members) {
        r->st.count_mismatch++;
        return;
    }
    if (!rsp_contribution_ok(r, i, h, len)) {
        r->st.bad_length++;
        return;
    }
    if (h->payload_kind == ARB_PK_SEED && !rsp_seeds(r, &r->msg[0])) {
        r->st.unexpected++; /* a whole result of a message this responder did not seed */
        return;
    }
    const uint8_t *data = r->cfg.ep.header_only || !h->payload_valid ? NULL : payload;
    e->seeded = h->payload_kind == ARB_PK_SEED;
    if (e->seeded) r->st.seeded_commits++;
    if (e->state == E_ISSUED && h->attempt == e->attempt) {
        arb_time sample = now - e->sent;
        r->outstanding--;
        r->sub[e->sub].out--;
        if (e->early) /* its loop includes a member's late start: no sample */
            rsp_tree_commit(r, e->sub, now);
        else
            rsp_on_commit_sample(r, e, sample, now);
        rsp_commit(r, i, data, h->offset_b, 0, h->attempt, now);
        if (!e->early) cc_sample(r, sample, ce, now);
        return;
    }
    /* An earlier attempt completed after all. */
    if (e->state == E_ISSUED) {
        r->outstanding--;
        r->sub[e->sub].out--;
    } else if (e->state == E_LOST) {
        r->lost--;
    } else if (e->state == E_REPAIR) {
        if (e->rslot) {
            r->rep[e->rslot - 1].used = 0;
            r->reps_used--;
            e->rslot = 0;
        } else {
            r->waiting_repair--;
        }
        r->in_repair--;
    }
    r->st.late_masters++;
    rsp_on_late_commit(r, e, h->attempt, now);
    rsp_commit(r, i, data, h->offset_b, 0, h->attempt, now);
    if (!e->early && (unsigned)(e->attempt - h->attempt) < ATT_KEEP)
        cc_sample(r, now - e->att_sent[h->attempt % ATT_KEEP], ce, now);
}

static void on_repair_request(arb_responder *r, const arb_hdr *h, const uint8_t *payload,
                              size_t len, int from, arb_time now)
{
    if (!rsp_is_member(r, from)) {
        r->st.not_member++;
        return;
    }
    int64_t at = locate(r, h);
    if (at < 0) return;
    uint32_t i = (uint32_t)at;
    if (i < r->base || rsp_entry(r, i)->state == E_COMMITTED) {
        r->st.dup_repairs++;
        return;
    }
    struct rentry *e = rsp_entry(r, i);
    if (e->state != E_REPAIR || e->rslot == 0) {
        r->st.stale++;
        return;
    }
    if (!rsp_contribution_ok(r, i, h, len)) {
        r->st.bad_length++;
        return;
    }
    rsp_repair_answer(r, i, payload, len, from, now);
}

static void on_miss(arb_responder *r, const arb_hdr *h, arb_time now)
{
    int64_t at = locate(r, h);
    if (at < 0) return;
    uint32_t i = (uint32_t)at;
    struct rentry *e = rsp_entry(r, i);
    if (i < r->base || e->state != E_ISSUED || h->attempt != e->attempt) {
        r->st.stale++; /* an attempt already given up, or an offset done */
        return;
    }
    r->st.agg_miss++;
    e->misses++;
    rsp_give_up(r, i, WHY_MISS, now);
}

int arb_responder_recv_ce(arb_responder *r, const arb_hdr *h, const uint8_t *payload, size_t len,
                          int from, int ce, arb_time now)
{
    if (!r || !h || (!payload && len)) return ARB_EINVAL;
    if (arb_hdr_validate(h, len) != 0) {
        r->st.malformed++;
        return 0;
    }
    if (r->error) {
        r->st.stale++; /* a failed channel ignores everything */
        return 0;
    }
    switch (h->packet_type) {
    case ARB_PT_REGISTER:
        rsp_on_register(r, h, from);
        break;
    case ARB_PT_DATA_REQUEST:
        if (h->repair)
            on_repair_request(r, h, payload, len, from, now);
        else
            rsp_on_master(r, h, payload, len, ce, now);
        break;
    case ARB_PT_END:
        rsp_on_end(r, h, from, now);
        break;
    case ARB_PT_AGG_MISS:
        on_miss(r, h, now);
        break;
    default:
        r->st.unexpected++;
        break;
    }
    pump(r, now);
    return 0;
}

int arb_responder_recv(arb_responder *r, const arb_hdr *h, const uint8_t *payload, size_t len,
                       int from, arb_time now)
{
    return arb_responder_recv_ce(r, h, payload, len, from, 0, now);
}

/* ------------------------------------------------------------------ */
/* Timers                                                               */
/* ------------------------------------------------------------------ */

static arb_time tmin(arb_time a, arb_time b)
{
    return a < b ? a : b;
}

arb_time arb_responder_next_expiry(const arb_responder *r)
{
    if (!r || r->error) return ARB_TIME_NEVER;
    arb_time t = ARB_TIME_NEVER;
    if (r->phase == ARB_RSP_ACTIVE) {
        t = rsp_timers(r);
        arb_time sp = spacing_of(r);
        int can = r->lost || (r->next < r->msg[0].n && r->next - r->base < ring_want(r));
        if (sp && r->any_credit && can && r->outstanding < window_of(r))
            t = tmin(t, r->last_credit + sp);
    } else if (r->phase == ARB_RSP_DRAIN) {
        t = r->end_deadline;
    }
    if (r->cfg.cc && r->phase != ARB_RSP_IDLE) t = tmin(t, arb_cc_next_expiry(r->cfg.cc));
    return t;
}

int arb_responder_on_expiry(arb_responder *r, arb_time now)
{
    if (!r) return ARB_EINVAL;
    if (r->error) return 0;
    if (r->cfg.cc && arb_cc_next_expiry(r->cfg.cc) <= now) arb_cc_on_expiry(r->cfg.cc, now);
    if (r->phase == ARB_RSP_ACTIVE) {
        rsp_detect_losses(r, now);
        rsp_repair_expiries(r, now);
    } else if (r->phase == ARB_RSP_DRAIN && r->end_deadline <= now) {
        rsp_end_expiry(r, now);
    }
    pump(r, now);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Queries                                                              */
/* ------------------------------------------------------------------ */

void arb_responder_get_progress(const arb_responder *r, arb_responder_progress *out)
{
    memset(out, 0, sizeof *out);
    if (!r) return;
    const struct rmsg *m = &r->msg[0];
    out->phase = r->phase;
    out->msg_id = m->id;
    out->start_seq = m->started ? m->start : r->next_seq;
    out->offsets = m->started ? m->n : 0;
    out->issued = r->next;
    out->committed = r->committed;
    out->registered = m->nreg;
    out->ended = r->nends;
    out->outstanding = r->outstanding;
    out->repairs = r->in_repair;
    out->closed = r->closed;
    out->ahead = r->msg[1].started;
}

void arb_responder_get_stats(const arb_responder *r, arb_responder_stats *out)
{
    if (!r) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = r->st;
    out->timeouts = r->st.losses_timer;
    out->dead_subchannels = r->cfg.subchannels - r->live_subs;
    out->rto = rsp_rto(r);
    out->rto_mult = r->rto_mult;
    out->ring = r->ring_cap;
}

int arb_responder_done(const arb_responder *r)
{
    return r && r->phase == ARB_RSP_IDLE;
}

uint64_t arb_responder_closed(const arb_responder *r)
{
    return r ? r->closed : 0;
}

int arb_responder_error(const arb_responder *r)
{
    return r ? r->error : 0;
}

void arb_responder_get_failure(const arb_responder *r, arb_responder_failure *out)
{
    if (!out) return;
    if (!r || !r->error) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = r->failure;
}
