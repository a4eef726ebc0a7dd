/*
 * The responder engine (spec sections 5, 6, 8, 9, 10, 12): registration,
 * credit issue through the window and rate gates, commit, repair, result
 * delivery and END. docs/endpoint.md walks through the state machine.
 *
 * Offsets of the message in progress are kept by message-relative index i
 * (offset = start_seq + i, 24-bit). The ring holds the entries of indices
 * [base, next): `next` is the next index to credit, `base` the oldest not
 * yet committed. Committed results wait in `pending` for a credit to ride
 * on; once every credit is issued they leave as tails and are listed in
 * `tails` for the END-wait replay. The result buffer of the message is the
 * result cache: nothing is copied per packet.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "arbor/endpoint.h"
#include "arbor/reduce.h"
#include "endpoint/ep_util.h"

enum { E_FREE = 0, E_ISSUED = 1, E_REPAIR = 2, E_COMMITTED = 3 };

#define NO_RIDE UINT32_MAX
#define RING_MAX (1u << 20)

struct rentry {
    uint8_t state;
    uint32_t rslot; /* repair slot + 1; 0 while waiting for the budget */
    uint32_t ride;  /* index of the result that rode the credit, or NO_RIDE */
    uint32_t sub;
    arb_time sent;     /* first send of the normal credit */
    arb_time deadline; /* ISSUED: its timeout */
};

/* One repair in progress: its bitmap of members and its accumulator. */
struct rrep {
    int used;
    uint32_t index;
    uint32_t count;
    uint64_t bits[EP_MEMBER_WORDS];
    arb_time deadline;
    uint32_t tries; /* repair credits sent for it (the adaptive timeout doubles per try) */
    uint8_t *acc;
};

struct rmsg {
    int started;
    uint8_t id;
    uint32_t start;
    uint32_t n;
    uint64_t length;
    const uint8_t *own;
    uint8_t *result;
    uint64_t reg[EP_MEMBER_WORDS];
    uint32_t nreg;
};

/* Dynamic subchannel selection (spec 9). */
struct rsub {
    arb_time ct;  /* EWMA of credit-to-commit; 0: no sample yet */
    uint32_t out; /* normal credits outstanding on it */
    uint8_t dead; /* a credit timed out: not used again */
};

struct arb_responder {
    arb_responder_config cfg;
    struct rmsg msg[2]; /* [0] in progress or next expected, [1] ahead */
    uint32_t next_seq;  /* start of msg[0] when it is not started yet */
    int prev_valid;
    uint8_t prev_id;
    uint32_t prev_start;
    arb_responder_phase phase;

    /* The message in progress. */
    uint32_t base, next, committed;
    uint32_t outstanding;    /* ISSUED entries (the window gate) */
    uint32_t in_repair;      /* REPAIR entries */
    uint32_t waiting_repair; /* REPAIR entries without a slot */
    uint32_t reps_used;
    arb_time last_credit;
    int any_credit;
    uint64_t ends[EP_MEMBER_WORDS];
    uint32_t nends;
    arb_time end_deadline;

    struct rentry *ring;
    uint32_t ring_cap;
    uint32_t *pending; /* FIFO of committed indices awaiting delivery */
    uint32_t pend_head, pend_len;
    uint32_t *tails;
    uint32_t ntails;
    struct rrep *rep;
    uint8_t *scratch; /* fill output: own data or push payload */

    arb_responder_stats st;
    uint64_t closed;
    struct rsub *sub; /* per subchannel (dynamic selection) */

    /* Adaptive timeout (cfg.adaptive_timeout). */
    arb_time srtt, rttvar;  /* 0, 0: no sample yet */
    arb_time last_deadline; /* of the last normal credit: deadlines never go back */
};

const char *arb_ep_kind_name(int kind)
{
    static const char *const names[] = {"pull-result", "pull-completion", "push", "barrier"};
    return kind >= 0 && kind < ARB_EP_KIND_COUNT ? names[kind] : NULL;
}

void arb_responder_config_default(arb_responder_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->members = 1;
    cfg->payload_size = ARB_PAYLOAD_MAX;
    cfg->dtype = ARB_DTYPE_F32;
    cfg->op = ARB_OP_SUM;
    cfg->kind = ARB_EP_PULL_RESULT;
    cfg->subchannels = 1;
    cfg->timeout = ARB_EP_TIMEOUT_DEFAULT;
    cfg->timeout_min = ARB_EP_TIMEOUT_MIN_DEFAULT;
    cfg->repair_budget = ARB_EP_REPAIR_BUDGET_DEFAULT;
    cfg->ring_factor = ARB_EP_RING_FACTOR_DEFAULT;
    cfg->window = ARB_CC_WINDOW_DEFAULT;
}

static uint32_t window_of(const arb_responder *r)
{
    uint32_t w = r->cfg.cc ? arb_cc_window(r->cfg.cc) : r->cfg.window;
    return w ? w : 1;
}

static arb_time spacing_of(const arb_responder *r)
{
    return r->cfg.cc ? arb_cc_min_spacing(r->cfg.cc) : 0;
}

static uint32_t ring_limit(const arb_responder *r)
{
    uint64_t l = (uint64_t)r->cfg.ring_factor * window_of(r);
    return l < r->ring_cap ? (uint32_t)l : r->ring_cap;
}

static struct rentry *entry(arb_responder *r, uint32_t i)
{
    return &r->ring[i % r->ring_cap];
}

static const struct rentry *entry_c(const arb_responder *r, uint32_t i)
{
    return &r->ring[i % r->ring_cap];
}

static int is_member(const arb_responder *r, int from)
{
    return from >= 0 && (uint32_t)from < r->cfg.members;
}

static uint8_t op_of(const arb_responder *r)
{
    return ep_kind_pull(r->cfg.kind) ? (uint8_t)r->cfg.op : (uint8_t)ARB_OP_NOP;
}

static void emit(arb_responder *r, arb_ep_dst_kind kind, uint32_t sub, uint32_t member,
                 const arb_hdr *h, const uint8_t *payload, size_t len)
{
    arb_ep_dst d = {kind, sub, member};
    assert(arb_hdr_validate(h, len) == 0);
    r->cfg.send(r->cfg.send_ctx, &d, h, len ? payload : NULL, len);
}

/* ------------------------------------------------------------------ */
/* Payloads                                                             */
/* ------------------------------------------------------------------ */

static size_t pkt_len(const arb_responder *r, uint32_t i)
{
    return ep_len(r->msg[0].length, r->cfg.payload_size, i);
}

/* Does result (or pushed packet) i travel with bytes? */
static int carries_data(const arb_responder *r, uint32_t i)
{
    if (r->cfg.header_only || pkt_len(r, i) == 0) return 0;
    return r->cfg.kind == ARB_EP_PULL_RESULT || r->cfg.kind == ARB_EP_PUSH;
}

/* The bytes of result i (pull) or of packet i to push. */
static const uint8_t *data_of(arb_responder *r, uint32_t i)
{
    const struct rmsg *m = &r->msg[0];
    size_t off = (size_t)i * r->cfg.payload_size;
    if (r->cfg.kind == ARB_EP_PULL_RESULT) return m->result + off;
    if (m->own) return m->own + off;
    r->cfg.fill(r->cfg.fill_ctx, m->id, i, r->scratch, pkt_len(r, i));
    return r->scratch;
}

/* What rides a credit, a tail or a replay: result `p` (pull kinds) or
 * packet `p` itself (push). `replay` selects REPLAY over DATA. Returns 0
 * when the packet can carry nothing of it (the caller then decides). */
static void ride_fields(arb_responder *r, arb_hdr *h, uint32_t p, int replay, const uint8_t **pl,
                        size_t *len)
{
    h->offset_a = ep_seq(r->msg[0].start, p);
    if (carries_data(r, p)) {
        h->payload_valid = 1;
        h->payload_kind = replay ? ARB_PK_REPLAY : ARB_PK_DATA;
        *pl = data_of(r, p);
        *len = pkt_len(r, p);
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

/* The subchannel for offset k: k mod n, or the dynamic choice (see
 * arb_responder_config.dynamic_subchannels). */
static uint32_t pick_sub(const arb_responder *r, uint32_t k)
{
    uint32_t n = r->cfg.subchannels, first = k % n;
    if (!r->cfg.dynamic_subchannels || n == 1) return first;
    uint32_t best = first;
    double best_est = -1;
    for (uint32_t x = 0; x < n; x++) {
        uint32_t s = (first + x) % n;
        const struct rsub *u = &r->sub[s];
        if (u->dead) continue;
        double est = (double)u->ct * (u->out + 1);
        if (best_est < 0 || est < best_est) {
            best = s;
            best_est = est;
        }
    }
    return best;
}

/* A subchannel for an offset that was on `s`: s, unless s is dead. */
static uint32_t live_sub(const arb_responder *r, uint32_t s, uint32_t k)
{
    return r->cfg.dynamic_subchannels && r->sub[s].dead ? pick_sub(r, k) : s;
}

/* ---- the timeout ---------------------------------------------------- */

/* The timeout in force: cfg.timeout, or the adaptive estimate. */
static arb_time rto_of(const arb_responder *r)
{
    arb_time max = r->cfg.timeout;
    if (!r->cfg.adaptive_timeout || r->srtt == 0) return max;
    arb_time t = r->srtt + 4 * r->rttvar;
    if (t < r->cfg.timeout_min) t = r->cfg.timeout_min;
    return t < max ? t : max;
}

/* When a normal credit times out: fixed when it was sent, or with the
 * adaptive timeout, its send time plus the estimate in force now (so the
 * first window, sent before any sample, does not keep the ceiling). */
static arb_time due(const arb_responder *r, const struct rentry *e)
{
    return r->cfg.adaptive_timeout ? e->sent + rto_of(r) : e->deadline;
}

/* A repair credit's timeout: the timeout in force, doubled for every
 * earlier try of the same repair when adaptive (up to cfg.timeout). */
static arb_time repair_rto(const arb_responder *r, const struct rrep *rp)
{
    arb_time t = rto_of(r);
    if (!r->cfg.adaptive_timeout) return t;
    for (uint32_t b = 1; b < rp->tries && t < r->cfg.timeout; b++)
        t *= 2;
    return t < r->cfg.timeout ? t : r->cfg.timeout;
}

/* A credit-to-commit sample of an offset committed on its first credit. */
static void rto_sample(arb_responder *r, arb_time sample)
{
    if (r->srtt == 0) {
        r->srtt = sample ? sample : 1;
        r->rttvar = sample / 2;
    } else {
        arb_time d = r->srtt > sample ? r->srtt - sample : sample - r->srtt;
        r->rttvar = (3 * r->rttvar + d) / 4;
        r->srtt = (7 * r->srtt + sample) / 8;
        if (r->srtt == 0) r->srtt = 1;
    }
}

static void send_credit(arb_responder *r, uint32_t i, arb_time now)
{
    struct rmsg *m = &r->msg[0];
    struct rentry *e = entry(r, i);
    uint32_t k = ep_seq(m->start, i);
    arb_hdr h;
    const uint8_t *pl = NULL;
    size_t len = 0;

    e->state = E_ISSUED;
    e->rslot = 0;
    e->sub = pick_sub(r, k);
    r->sub[e->sub].out++;
    e->sent = now;
    e->deadline = now + rto_of(r);
    e->ride = NO_RIDE;

    ep_hdr(&h, ARB_PT_RESPONSE, m->id, (uint8_t)r->cfg.dtype, r->cfg.ext);
    h.op = op_of(r);
    h.credit_valid = 1;
    h.offset_b = k;
    h.offset_a = k;
    if (r->cfg.kind == ARB_EP_PUSH) {
        ride_fields(r, &h, i, 0, &pl, &len);
        if (!h.payload_valid) h.payload_kind = ARB_PK_DATA; /* bare: the credit is the data */
    } else if (ep_kind_pull(r->cfg.kind) && r->pend_len) {
        uint32_t p = r->pending[r->pend_head];
        r->pend_head = (r->pend_head + 1) % r->ring_cap;
        r->pend_len--;
        e->ride = p;
        ride_fields(r, &h, p, 0, &pl, &len);
        r->st.results_riding++;
    }
    r->next++;
    r->outstanding++;
    if (r->outstanding > r->st.peak_outstanding) r->st.peak_outstanding = r->outstanding;
    r->last_credit = now;
    r->any_credit = 1;
    r->st.credits++;
    emit(r, ARB_EP_DST_GROUP, e->sub, 0, &h, pl, len);
}

static void send_repair_credit(arb_responder *r, uint32_t i)
{
    struct rmsg *m = &r->msg[0];
    struct rentry *e = entry(r, i);
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
    e->sub = live_sub(r, e->sub, k);
    emit(r, ARB_EP_DST_GROUP, e->sub, 0, &h, pl, len);
}

static void send_tail(arb_responder *r, uint32_t p, int replay, int member)
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
    uint32_t sub = live_sub(r, k % r->cfg.subchannels, k);
    if (member < 0)
        emit(r, ARB_EP_DST_GROUP, sub, 0, &h, pl, len);
    else
        emit(r, ARB_EP_DST_MEMBER, sub, (uint32_t)member, &h, pl, len);
}

/* Results that have no credit left to ride leave as tails. */
static void flush_tails(arb_responder *r)
{
    while (r->pend_len) {
        uint32_t p = r->pending[r->pend_head];
        r->pend_head = (r->pend_head + 1) % r->ring_cap;
        r->pend_len--;
        send_tail(r, p, 0, -1);
        assert(r->ntails < r->ring_cap);
        r->tails[r->ntails++] = p;
        r->st.tails++;
    }
}

static void start_repair(arb_responder *r, uint32_t i, arb_time now)
{
    struct rentry *e = entry(r, i);
    uint32_t s;
    for (s = 0; s < r->cfg.repair_budget; s++)
        if (!r->rep[s].used) break;
    assert(s < r->cfg.repair_budget);
    struct rrep *rp = &r->rep[s];
    rp->used = 1;
    rp->index = i;
    rp->count = 0;
    memset(rp->bits, 0, sizeof rp->bits);
    rp->tries = 1;
    rp->deadline = now + repair_rto(r, rp);
    e->rslot = s + 1;
    r->waiting_repair--;
    r->reps_used++;
    if (r->reps_used > r->st.peak_repairs) r->st.peak_repairs = r->reps_used;
    send_repair_credit(r, i);
}

/* Spec 6: timeout or AGG_MISS switches i into repair mode, at once: from
 * here a late normal master for i is discarded. */
static void enter_repair(arb_responder *r, uint32_t i, arb_time now)
{
    struct rentry *e = entry(r, i);
    assert(e->state == E_ISSUED);
    e->state = E_REPAIR;
    e->rslot = 0;
    r->outstanding--;
    r->sub[e->sub].out--;
    r->in_repair++;
    r->waiting_repair++;
    if (r->reps_used < r->cfg.repair_budget) start_repair(r, i, now);
}

static void close_message(arb_responder *r, arb_time now);

static int all_ended(const arb_responder *r)
{
    return r->cfg.kind == ARB_EP_BARRIER || r->nends == r->cfg.members;
}

/* Issue what the gates allow; start repairs the budget allows; flush
 * tails; move through the phases. */
static void pump(arb_responder *r, arb_time now)
{
    struct rmsg *m = &r->msg[0];
    if (r->phase == ARB_RSP_DRAIN && all_ended(r)) {
        close_message(r, now);
        return;
    }
    if (r->phase == ARB_RSP_REGISTER && m->started && m->nreg == r->cfg.members) {
        r->phase = ARB_RSP_ACTIVE;
        r->any_credit = 0;
    }
    if (r->phase != ARB_RSP_ACTIVE) return;

    for (uint32_t i = r->base;
         r->waiting_repair && r->reps_used < r->cfg.repair_budget && i < r->next; i++) {
        struct rentry *e = entry(r, i);
        if (e->state == E_REPAIR && e->rslot == 0) start_repair(r, i, now);
    }

    uint32_t win = window_of(r), lim = ring_limit(r);
    arb_time sp = spacing_of(r);
    while (r->next < m->n && r->outstanding < win && r->next - r->base < lim) {
        if (r->any_credit && sp && now < r->last_credit + sp) break;
        send_credit(r, r->next, now);
    }
    if (r->next == m->n) flush_tails(r);
    if (r->committed == m->n) {
        r->phase = ARB_RSP_DRAIN;
        r->end_deadline = now + rto_of(r);
        if (all_ended(r)) close_message(r, now);
    }
}

/* ------------------------------------------------------------------ */
/* Commit                                                               */
/* ------------------------------------------------------------------ */

static void commit(arb_responder *r, uint32_t i, const uint8_t *data, uint32_t count, int repaired)
{
    struct rmsg *m = &r->msg[0];
    struct rentry *e = entry(r, i);
    size_t len = pkt_len(r, i);
    const uint8_t *res = NULL;

    e->state = E_COMMITTED;
    r->committed++;
    r->st.commits++;
    if (repaired) r->st.repair_commits++;

    if (ep_kind_pull(r->cfg.kind) && !r->cfg.header_only && len && m->result) {
        uint8_t *dst = m->result + (size_t)i * r->cfg.payload_size;
        if (data)
            memcpy(dst, data, len);
        else
            memset(dst, 0, len);
        const uint8_t *own = NULL;
        if (m->own) {
            own = m->own + (size_t)i * r->cfg.payload_size;
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
    if (r->cfg.on_commit)
        r->cfg.on_commit(r->cfg.commit_ctx, m->id, ep_seq(m->start, i), i, res, res ? len : 0,
                         count, repaired);
    if (ep_kind_pull(r->cfg.kind)) {
        assert(r->pend_len < r->ring_cap);
        r->pending[(r->pend_head + r->pend_len) % r->ring_cap] = i;
        r->pend_len++;
    }
    while (r->base < r->next && entry(r, r->base)->state == E_COMMITTED) {
        entry(r, r->base)->state = E_FREE;
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
    r->outstanding = r->in_repair = r->waiting_repair = r->reps_used = 0;
    for (uint32_t s = 0; r->sub && s < r->cfg.subchannels; s++)
        r->sub[s].out = 0;
    r->any_credit = 0;
    r->last_credit = 0;
    memset(r->ends, 0, sizeof r->ends);
    r->nends = 0;
    r->end_deadline = ARB_TIME_NEVER;
    r->pend_head = r->pend_len = 0;
    r->ntails = 0;
}

static void close_message(arb_responder *r, arb_time now)
{
    struct rmsg *m = &r->msg[0];
    r->st.messages++;
    r->closed++;
    r->prev_valid = 1;
    r->prev_id = m->id;
    r->prev_start = m->start;
    r->next_seq = ep_seq(m->start, m->n);
    r->msg[0] = r->msg[1];
    memset(&r->msg[1], 0, sizeof r->msg[1]);
    r->msg[1].id = (uint8_t)(r->msg[0].id + 1);
    reset_run(r);
    r->phase = r->msg[0].started ? ARB_RSP_REGISTER : ARB_RSP_IDLE;
    arb_log(&r->cfg.logger, ARB_LOG_DEBUG, "responder %llu: message %u closed",
            (unsigned long long)r->cfg.channel, (unsigned)r->prev_id);
    pump(r, now);
}

int arb_responder_new(arb_responder **out, const arb_responder_config *cfg)
{
    if (!out || !cfg) return ARB_EINVAL;
    *out = NULL;
    size_t es = arb_dtype_size(cfg->dtype);
    if (!cfg->send || cfg->members == 0 || cfg->members > ARB_EP_MAX_MEMBERS || es == 0 ||
        cfg->payload_size == 0 || cfg->payload_size > ARB_PAYLOAD_MAX ||
        cfg->payload_size % es != 0 || (unsigned)cfg->op >= ARB_OP_COUNT ||
        (unsigned)cfg->kind >= ARB_EP_KIND_COUNT || cfg->subchannels == 0 ||
        cfg->subchannels > ARB_EP_MAX_SUBCHANNELS || cfg->ext > 1 || cfg->timeout == 0 ||
        cfg->timeout == ARB_TIME_NEVER ||
        (cfg->adaptive_timeout && (cfg->timeout_min == 0 || cfg->timeout_min > cfg->timeout)) ||
        cfg->repair_budget == 0 || cfg->repair_budget > ARB_EP_MAX_MEMBERS ||
        cfg->ring_factor == 0 || (!cfg->cc && cfg->window == 0) || cfg->ring > RING_MAX ||
        cfg->first_seq > ARB_OFFSET_MASK)
        return ARB_EINVAL;
    if (ep_kind_pull(cfg->kind) && cfg->op == ARB_OP_NOP) return ARB_EINVAL;

    arb_responder *r = calloc(1, sizeof *r);
    if (!r) return ARB_ENOMEM;
    r->cfg = *cfg;
    uint32_t cap = cfg->ring;
    if (!cap) {
        uint32_t w = cfg->cc ? arb_cc_window(cfg->cc) : cfg->window;
        uint64_t c = (uint64_t)cfg->ring_factor * (w ? w : 1);
        cap = c > RING_MAX ? RING_MAX : (uint32_t)c;
    }
    r->ring_cap = cap;
    r->ring = calloc(cap, sizeof *r->ring);
    r->pending = calloc(cap, sizeof *r->pending);
    r->tails = calloc(cap, sizeof *r->tails);
    r->rep = calloc(cfg->repair_budget, sizeof *r->rep);
    r->scratch = malloc(cfg->payload_size);
    r->sub = calloc(cfg->subchannels, sizeof *r->sub);
    int bad = !r->ring || !r->pending || !r->tails || !r->rep || !r->scratch || !r->sub;
    for (uint32_t s = 0; !bad && !cfg->header_only && s < cfg->repair_budget; s++) {
        r->rep[s].acc = malloc(cfg->payload_size);
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
    reset_run(r);
    *out = r;
    return 0;
}

void arb_responder_free(arb_responder *r)
{
    if (!r) return;
    if (r->rep)
        for (uint32_t s = 0; s < r->cfg.repair_budget; s++)
            free(r->rep[s].acc);
    free(r->rep);
    free(r->ring);
    free(r->pending);
    free(r->tails);
    free(r->scratch);
    free(r->sub);
    free(r);
}

int arb_responder_start_message(arb_responder *r, uint8_t msg_id, uint64_t length,
                                const void *own_data, void *result_buf, arb_time now)
{
    if (!r) return ARB_EINVAL;
    int s = !r->msg[0].started ? 0 : !r->msg[1].started ? 1 : -1;
    if (s < 0) return ARB_ESTATE;
    struct rmsg *m = &r->msg[s];
    if (msg_id != m->id) return ARB_EINVAL;
    if (length % arb_dtype_size(r->cfg.dtype) != 0) return ARB_EINVAL;
    if (r->cfg.kind == ARB_EP_BARRIER && length != 0) return ARB_EINVAL;
    uint64_t n = ep_packets(length, r->cfg.payload_size);
    if (n > ARB_EP_MAX_OFFSETS) return ARB_EINVAL;
    if (!r->cfg.header_only && length > 0) {
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

static void send_ack(arb_responder *r, arb_ptype type, uint8_t id, uint32_t start, int member)
{
    arb_hdr h;
    ep_hdr(&h, type, id, (uint8_t)r->cfg.dtype, r->cfg.ext);
    h.repair = type == ARB_PT_REGISTER_ACK;
    h.offset_a = start;
    emit(r, ARB_EP_DST_MEMBER, 0, (uint32_t)member, &h, NULL, 0);
}

static void on_register(arb_responder *r, const arb_hdr *h, int from)
{
    if (!is_member(r, from)) {
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
    if (r->prev_valid && h->message_id == r->prev_id && h->offset_a == r->prev_start) {
        r->st.registers++; /* a retry whose ack was lost: ack again */
        send_ack(r, ARB_PT_REGISTER_ACK, h->message_id, h->offset_a, from);
        return;
    }
    r->st.bad_registers++;
}

static void on_end(arb_responder *r, const arb_hdr *h, int from)
{
    if (!is_member(r, from)) {
        r->st.not_member++;
        return;
    }
    struct rmsg *m = &r->msg[0];
    if ((r->phase == ARB_RSP_ACTIVE || r->phase == ARB_RSP_DRAIN) &&
        r->cfg.kind != ARB_EP_BARRIER && h->message_id == m->id && h->offset_a == m->start) {
        if (!bm_test(r->ends, (uint32_t)from)) {
            bm_set(r->ends, (uint32_t)from);
            r->nends++;
        }
        r->st.ends++;
        send_ack(r, ARB_PT_END_ACK, m->id, m->start, from);
        return;
    }
    if (r->prev_valid && h->message_id == r->prev_id && h->offset_a == r->prev_start) {
        r->st.ends++;
        send_ack(r, ARB_PT_END_ACK, h->message_id, h->offset_a, from);
        return;
    }
    r->st.stale++;
}

/* The index of a packet for the message in progress, or -1 (counted). */
static int64_t locate(arb_responder *r, const arb_hdr *h)
{
    const struct rmsg *m = &r->msg[0];
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

/* Is `len` bytes (payload_valid `pv`) the contribution index i needs? */
static int contribution_ok(const arb_responder *r, uint32_t i, const arb_hdr *h, size_t len)
{
    if (r->cfg.header_only) return 1;
    size_t want = ep_kind_pull(r->cfg.kind) ? pkt_len(r, i) : 0;
    if (want == 0) return h->payload_valid == 0;
    return h->payload_valid && len == want;
}

static void on_master(arb_responder *r, const arb_hdr *h, const uint8_t *payload, size_t len,
                      int ce, arb_time now)
{
    if (h->agg_depth != 0) { /* it should have been aggregated on the way */
        r->st.unexpected++;
        return;
    }
    int64_t at = locate(r, h);
    if (at < 0) return;
    uint32_t i = (uint32_t)at;
    if (i < r->base) {
        r->st.dup_masters++;
        return;
    }
    struct rentry *e = entry(r, i);
    if (e->state == E_REPAIR) {
        r->st.late_masters++;
        return;
    }
    if (e->state == E_COMMITTED) {
        r->st.dup_masters++;
        return;
    }
    if (h->offset_b != r->cfg.members) {
        r->st.count_mismatch++;
        return;
    }
    if (!contribution_ok(r, i, h, len)) {
        r->st.bad_length++;
        return;
    }
    r->outstanding--;
    arb_time sample = now - e->sent;
    struct rsub *u = &r->sub[e->sub];
    u->out--;
    u->ct = u->ct ? (7 * u->ct + sample) / 8 : sample;
    rto_sample(r, sample);
    commit(r, i, r->cfg.header_only || !h->payload_valid ? NULL : payload, h->offset_b, 0);
    if (r->cfg.cc) arb_cc_on_sample(r->cfg.cc, sample, ce, now);
    r->st.samples++;
}

static void on_repair_request(arb_responder *r, const arb_hdr *h, const uint8_t *payload,
                              size_t len, int from)
{
    if (!is_member(r, from)) {
        r->st.not_member++;
        return;
    }
    int64_t at = locate(r, h);
    if (at < 0) return;
    uint32_t i = (uint32_t)at;
    if (i < r->base || entry(r, i)->state == E_COMMITTED) {
        r->st.dup_repairs++;
        return;
    }
    struct rentry *e = entry(r, i);
    if (e->state != E_REPAIR || e->rslot == 0) {
        r->st.stale++;
        return;
    }
    struct rrep *rp = &r->rep[e->rslot - 1];
    if (bm_test(rp->bits, (uint32_t)from)) {
        r->st.dup_repairs++;
        return;
    }
    if (!contribution_ok(r, i, h, len)) {
        r->st.bad_length++;
        return;
    }
    bm_set(rp->bits, (uint32_t)from);
    r->st.repair_requests++;
    size_t L = pkt_len(r, i);
    if (ep_kind_pull(r->cfg.kind) && !r->cfg.header_only && L) {
        if (rp->count == 0) {
            memcpy(rp->acc, payload, L);
        } else {
            int rc = arb_reduce_bytes(r->cfg.op, r->cfg.dtype, rp->acc, payload, L);
            assert(rc == 0);
            (void)rc;
        }
    }
    rp->count++;
    if (rp->count == r->cfg.members) {
        rp->used = 0;
        r->reps_used--;
        r->in_repair--;
        e->rslot = 0;
        commit(r, i, r->cfg.header_only ? NULL : rp->acc, rp->count, 1);
    }
}

static void on_miss(arb_responder *r, const arb_hdr *h, arb_time now)
{
    int64_t at = locate(r, h);
    if (at < 0) return;
    uint32_t i = (uint32_t)at;
    if (i < r->base || entry(r, i)->state != E_ISSUED) {
        r->st.stale++;
        return;
    }
    r->st.agg_miss++;
    enter_repair(r, i, now);
}

int arb_responder_recv_ce(arb_responder *r, const arb_hdr *h, const uint8_t *payload, size_t len,
                          int from, int ce, arb_time now)
{
    if (!r || !h || (!payload && len)) return ARB_EINVAL;
    if (arb_hdr_validate(h, len) != 0) {
        r->st.malformed++;
        return 0;
    }
    switch (h->packet_type) {
    case ARB_PT_REGISTER:
        on_register(r, h, from);
        break;
    case ARB_PT_DATA_REQUEST:
        if (h->repair)
            on_repair_request(r, h, payload, len, from);
        else
            on_master(r, h, payload, len, ce, now);
        break;
    case ARB_PT_END:
        on_end(r, h, from);
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
    if (!r) return ARB_TIME_NEVER;
    arb_time t = ARB_TIME_NEVER;
    if (r->phase == ARB_RSP_ACTIVE) {
        /* A fixed timeout makes normal deadlines grow with the index, so the
         * first ISSUED is the earliest; an adaptive one may shrink, so every
         * ISSUED entry (at most the ring's) is looked at. */
        for (uint32_t i = r->base; i < r->next; i++) {
            const struct rentry *e = entry_c(r, i);
            if (e->state == E_ISSUED) {
                t = tmin(t, due(r, e));
                if (!r->cfg.adaptive_timeout) break;
            }
        }
        for (uint32_t s = 0; r->reps_used && s < r->cfg.repair_budget; s++)
            if (r->rep[s].used) t = tmin(t, r->rep[s].deadline);
        arb_time sp = spacing_of(r);
        if (sp && r->any_credit && r->next < r->msg[0].n && r->outstanding < window_of(r) &&
            r->next - r->base < ring_limit(r))
            t = tmin(t, r->last_credit + sp);
    } else if (r->phase == ARB_RSP_DRAIN) {
        t = r->end_deadline;
    }
    return t;
}

int arb_responder_on_expiry(arb_responder *r, arb_time now)
{
    if (!r) return ARB_EINVAL;
    if (r->phase == ARB_RSP_ACTIVE) {
        for (uint32_t i = r->base; i < r->next; i++) {
            struct rentry *e = entry(r, i);
            if (e->state != E_ISSUED) continue;
            if (due(r, e) > now) {
                if (r->cfg.adaptive_timeout) continue;
                break;
            }
            r->st.timeouts++;
            if (r->cfg.cc) arb_cc_on_timeout(r->cfg.cc, now);
            if (r->cfg.dynamic_subchannels && !r->sub[e->sub].dead &&
                r->st.dead_subchannels + 1 < r->cfg.subchannels) {
                r->sub[e->sub].dead = 1;
                r->st.dead_subchannels++;
            }
            enter_repair(r, i, now);
        }
        for (uint32_t s = 0; r->reps_used && s < r->cfg.repair_budget; s++) {
            struct rrep *rp = &r->rep[s];
            if (!rp->used || rp->deadline > now) continue;
            rp->tries++;
            rp->deadline = now + repair_rto(r, rp);
            r->st.repair_repeats++;
            send_repair_credit(r, rp->index);
        }
    } else if (r->phase == ARB_RSP_DRAIN && r->end_deadline <= now) {
        /* Spec 12: a lost tail result shows up as a missing END. */
        for (uint32_t j = 0; j < r->cfg.members; j++) {
            if (bm_test(r->ends, j)) continue;
            for (uint32_t t = 0; t < r->ntails; t++) {
                send_tail(r, r->tails[t], 1, (int)j);
                r->st.tail_replays++;
            }
        }
        r->end_deadline = now + rto_of(r);
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
    out->rto = rto_of(r);
}

int arb_responder_done(const arb_responder *r)
{
    return r && r->phase == ARB_RSP_IDLE;
}

uint64_t arb_responder_closed(const arb_responder *r)
{
    return r ? r->closed : 0;
}
