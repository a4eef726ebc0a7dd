/*
 * The requester engine (docs/protocol.md sections 5, 6, 10, 12): REGISTER with retry,
 * one normal request per credit context, unconditional repair answers,
 * delivery of results into the output buffer, END with retry.
 *
 * The engine keeps two messages: `cur`, and `prev`, a message whose output
 * is complete but whose END is not yet acknowledged when the next one
 * starts. Each has two bitmaps by message-relative index, the results held
 * and the credits answered, interleaved word by word so that both bits of
 * an index share a cache line. The bitmaps cover a window of groups of 64
 * indices that slides past groups whose bits are all set (everything
 * below the window is held and answered): memory follows the indices in
 * play, not the message's length.
 *
 * Layout: what a RESPONSE reads and writes (the message's counters, the
 * request template, the callbacks, the counters) comes first, in a few
 * cache lines; a simulation holds a thousand engines and touches each of
 * them once every few dozen packets.
 */
#include <stdlib.h>
#include <string.h>

#include "arbor/endpoint.h"
#include "endpoint/ep_trusted.h"
#include "endpoint/ep_util.h"

/* A message: what a RESPONSE reads and writes ... */
struct qmsg {
    uint32_t start;
    uint32_t n;
    uint32_t nhave, nanswered;
    uint64_t *bits; /* word 2k: results held, 2k + 1: credits answered, of group gbase + k */
    arb_time timer; /* next REGISTER / END retry */
    uint8_t phase;  /* arb_requester_phase */
    uint8_t id;
    /* seeded (ep.seed): its result may come before the responder committed
     * it, so every copy of its credits is answered, from `keep`, until its
     * END is acknowledged */
    uint8_t seeded;
    uint32_t gbase; /* the first group in `bits`; every index below it is held and answered */
};

/* ... and the rest: payloads, capacity, retries. */
struct qrest {
    uint64_t length;
    const uint8_t *in;
    uint8_t *out;
    size_t groups;     /* capacity of `bits`, in groups of 64 indices */
    size_t used;       /* groups of `bits` in use: gbase .. gbase + used */
    arb_time interval; /* the current backoff */
    arb_time give_up;  /* REGISTER / END unanswered at this time: the channel fails */
    uint8_t *keep;     /* ep.seed: a copy of a seeded message's input (one offset) */
};

struct arb_requester {
    /* Two cache lines: everything an answered credit touches but the
     * bitmap word. cfg's fields used per packet are copied here. */
    struct qmsg cur;
    arb_ep_send_fn send;
    void *send_ctx;
    uint8_t kind, header_only, ext, dtype, req_op; /* req_op: a request's op field */
    /* Fixed by the configuration: requests carry the rank's bytes (pull
     * kinds, values); results or pushed packets carry bytes (pull-result,
     * push, values). Each still needs a non-empty packet (ep_len). */
    uint8_t in_bytes, out_bytes;
    void (*on_result)(void *ctx, uint8_t msg_id, uint32_t offset, uint32_t index,
                      const uint8_t *data, size_t len);
    void *result_ctx;
    const uint8_t *fanin;
    uint32_t subchannels;
    uint64_t results, requests; /* st.results, st.requests */
    /* The rest. */
    struct qmsg prev;
    struct qrest cur_rest, prev_rest;
    arb_requester_config cfg;
    arb_requester_stats st; /* but results and requests */
    uint8_t next_id;
    uint32_t next_seq;
    /* Credits of message next_id that came before it started (a responder
     * credits a pull message of one offset before registration): the
     * first credit and its twin, answered when the message starts. */
    struct {
        arb_hdr h;
        uint32_t sub;
    } held[2];
    uint32_t n_held;
    int failed;
    uint8_t *scratch; /* contributions from cfg.fill; values mode only */
    void *block;      /* the allocation q lies in (q is its first aligned line) */
};

static struct qrest *rest_of(arb_requester *q, const struct qmsg *m)
{
    return m == &q->cur ? &q->cur_rest : &q->prev_rest;
}

static const struct qrest *rest_c(const arb_requester *q, const struct qmsg *m)
{
    return m == &q->cur ? &q->cur_rest : &q->prev_rest;
}

/* The word pair of index i, or NULL when i is below the window (held and
 * answered) or beyond it (nothing seen yet). */
static uint64_t *pair_of(const struct qmsg *m, const struct qrest *x, uint32_t i)
{
    uint32_t g = i >> 6;
    if (g < m->gbase || g - m->gbase >= x->used) return NULL;
    return m->bits + (size_t)(g - m->gbase) * 2;
}

static int have_test(const arb_requester *q, const struct qmsg *m, uint32_t i)
{
    const uint64_t *w = pair_of(m, rest_c(q, m), i);
    return w ? bm_test(w, i & 63u) : (i >> 6) < m->gbase;
}

static int answered_test(const arb_requester *q, const struct qmsg *m, uint32_t i)
{
    const uint64_t *w = pair_of(m, rest_c(q, m), i);
    return w ? bm_test(w + 1, i & 63u) : (i >> 6) < m->gbase;
}

/* Set only after make_room(i). */
static void have_set(arb_requester *q, struct qmsg *m, uint32_t i)
{
    uint64_t *w = pair_of(m, rest_of(q, m), i);
    if (w) bm_set(w, i & 63u);
}

static void answered_set(arb_requester *q, struct qmsg *m, uint32_t i)
{
    uint64_t *w = pair_of(m, rest_of(q, m), i);
    if (w) bm_set(w + 1, i & 63u);
}

static int group_done(const uint64_t *w)
{
    return w[0] == UINT64_MAX && w[1] == UINT64_MAX;
}

/* Slide the window past its leading groups that are done. */
static void slide(struct qmsg *m, struct qrest *x)
{
    size_t k = 0;
    while (k < x->used && group_done(m->bits + k * 2))
        k++;
    if (!k) return;
    memmove(m->bits, m->bits + k * 2, (x->used - k) * 2 * sizeof *m->bits);
    x->used -= k;
    m->gbase += (uint32_t)k;
}

/* The window reaches index i (< m->n): slide it, and grow it (doubling,
 * at most to the message) when sliding frees less than half of it.
 * ARB_ENOMEM leaves it as it was. */
static int make_room(arb_requester *q, struct qmsg *m, uint32_t i)
{
    struct qrest *x = rest_of(q, m);
    uint32_t g = i >> 6;
    if (g < m->gbase || g - m->gbase < x->used) return 0;
    slide(m, x);
    size_t need = (size_t)(g - m->gbase) + 1;
    if (need > x->groups || x->used > x->groups / 2) {
        size_t cap = x->groups ? x->groups : 1;
        while (cap < need || cap < 2 * x->used)
            cap *= 2;
        size_t all = (size_t)EP_WORDS(m->n);
        if (cap > all) cap = all;
        if (cap > x->groups) {
            uint64_t *b = arb_mem_realloc(q->cfg.mem, m->bits, cap * 2 * sizeof *b);
            if (!b) return ARB_ENOMEM;
            m->bits = b;
            x->groups = cap;
        }
    }
    memset(m->bits + x->used * 2, 0, (need - x->used) * 2 * sizeof *m->bits);
    x->used = need;
    return 0;
}

void arb_requester_config_default(arb_requester_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->dtype = ARB_DTYPE_F32;
    cfg->op = ARB_OP_SUM;
    cfg->kind = ARB_EP_PULL_RESULT;
    cfg->subchannels = 1;
    arb_ep_settings_default(&cfg->ep);
    cfg->redundant = 1;
}

int arb_requester_new(arb_requester **out, const arb_requester_config *cfg)
{
    if (!out || !cfg) return ARB_EINVAL;
    *out = NULL;
    size_t es = arb_dtype_size(cfg->dtype);
    if (!cfg->send || cfg->member >= ARB_EP_MAX_MEMBERS || es == 0 || cfg->ep.payload == 0 ||
        cfg->ep.payload > ARB_PAYLOAD_MAX || cfg->ep.payload % es != 0 ||
        (unsigned)cfg->op >= ARB_OP_COUNT || (unsigned)cfg->kind >= ARB_EP_KIND_COUNT ||
        cfg->subchannels == 0 || cfg->subchannels > ARB_EP_MAX_SUBCHANNELS || cfg->ext > 1 ||
        cfg->ep.retry < ARB_EP_TIMER_MIN || cfg->ep.retry_min < ARB_EP_TIMER_MIN ||
        cfg->ep.retry_min > cfg->ep.retry || cfg->ep.retry == ARB_TIME_NEVER ||
        cfg->ep.retry_tries == 0 || cfg->ep.retry_tries > 32 || cfg->first_seq > ARB_OFFSET_MASK)
        return ARB_EINVAL;
    if (ep_kind_pull(cfg->kind) && cfg->op == ARB_OP_NOP) return ARB_EINVAL;
    if (cfg->fanin)
        for (uint32_t i = 0; i < cfg->subchannels * 3u; i++)
            if (cfg->fanin[i] == 0) return ARB_EINVAL;
    /* cache-line aligned: the per-packet fields are the first two lines */
    void *block = arb_mem_malloc(cfg->mem, sizeof(arb_requester) + 63);
    if (!block) return ARB_ENOMEM;
    arb_requester *q = (arb_requester *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    memset(q, 0, sizeof *q);
    q->block = block;
    if (!cfg->ep.header_only) {
        q->scratch = arb_mem_malloc(cfg->mem, cfg->ep.payload);
        /* seeded messages keep their input: one offset each, two at once */
        if (cfg->ep.seed && cfg->kind == ARB_EP_PULL_RESULT)
            q->cur_rest.keep = arb_mem_malloc(cfg->mem, 2 * (size_t)cfg->ep.payload);
        if (!q->scratch || (cfg->ep.seed && cfg->kind == ARB_EP_PULL_RESULT && !q->cur_rest.keep)) {
            arb_mem_free(cfg->mem, q->scratch);
            arb_mem_free(cfg->mem, q->cur_rest.keep);
            arb_mem_free(cfg->mem, block);
            return ARB_ENOMEM;
        }
        if (q->cur_rest.keep) q->prev_rest.keep = q->cur_rest.keep + cfg->ep.payload;
    }
    q->cfg = *cfg;
    q->send = cfg->send;
    q->send_ctx = cfg->send_ctx;
    q->kind = (uint8_t)cfg->kind;
    q->header_only = cfg->ep.header_only != 0;
    q->ext = cfg->ext;
    q->dtype = (uint8_t)cfg->dtype;
    q->req_op = ep_kind_pull(cfg->kind) ? (uint8_t)cfg->op : (uint8_t)ARB_OP_NOP;
    q->in_bytes = ep_kind_pull(cfg->kind) && !q->header_only;
    q->out_bytes = !q->header_only && (cfg->kind == ARB_EP_PULL_RESULT || cfg->kind == ARB_EP_PUSH);
    q->on_result = cfg->on_result;
    q->result_ctx = cfg->result_ctx;
    q->fanin = cfg->fanin;
    q->subchannels = cfg->subchannels;
    q->next_id = cfg->first_msg_id;
    q->next_seq = cfg->first_seq;
    *out = q;
    return 0;
}

void arb_requester_free(arb_requester *q)
{
    if (!q) return;
    const arb_mem *mem = q->cfg.mem;
    arb_mem_free(mem, q->cur.bits);
    arb_mem_free(mem, q->prev.bits);
    arb_mem_free(mem, q->scratch);
    /* the two halves of one block, in either order after swaps */
    arb_mem_free(mem, q->cur_rest.keep < q->prev_rest.keep ? q->cur_rest.keep : q->prev_rest.keep);
    arb_mem_free(mem, q->block);
}

static void emit(arb_requester *q, uint32_t sub, const arb_hdr *h, const uint8_t *payload,
                 size_t len)
{
    arb_ep_dst d = {ARB_EP_DST_RESPONDER, sub, 0};
    q->send(q->send_ctx, &d, h, len ? payload : NULL, len);
}

static void send_control(arb_requester *q, const struct qmsg *m, arb_ptype type)
{
    arb_hdr h;
    ep_hdr(&h, type, m->id, q->dtype, q->ext);
    h.repair = type == ARB_PT_REGISTER;
    h.offset_a = m->start;
    if (type == ARB_PT_REGISTER)
        q->st.registers++;
    else
        q->st.ends++;
    emit(q, 0, &h, NULL, 0);
}

/* The first REGISTER or END of a message; twice for a message of one
 * offset (cfg.redundant): its whole exchange is a few fabric loops, and a
 * lost REGISTER or END would cost a retry timer many times that. */
static void send_control_first(arb_requester *q, const struct qmsg *m, arb_ptype type)
{
    send_control(q, m, type);
    if (q->cfg.redundant && m->n == 1) send_control(q, m, type);
}

/* Does index i of m need the rank's contribution bytes? */
static int needs_input(const arb_requester *q, const struct qmsg *m, uint32_t i)
{
    return q->in_bytes && ep_len(rest_c(q, m)->length, q->cfg.ep.payload, i) > 0;
}

/* Does result (or pushed packet) i travel with bytes? */
static int result_has_data(const arb_requester *q, const struct qmsg *m, uint32_t i)
{
    return q->out_bytes && ep_len(rest_c(q, m)->length, q->cfg.ep.payload, i) > 0;
}

static void send_request(arb_requester *q, const struct qmsg *m, const arb_hdr *credit, uint32_t i,
                         uint32_t sub)
{
    arb_hdr h;
    const uint8_t *pl = NULL;
    size_t len = 0;
    int repair = credit->repair;

    ep_hdr(&h, ARB_PT_DATA_REQUEST, m->id, q->dtype, repair ? q->ext : credit->ext);
    if (!repair) h.attempt = credit->attempt; /* the credit context it answers */
    h.op = q->req_op;
    h.repair = (uint8_t)repair;
    h.offset_b = 1; /* one original contribution */
    h.offset_a = ep_seq(m->start, i);
    if (!repair) {
        /* Echo the whole location stack, fill this branch's fan-ins. */
        h.agg_depth = credit->agg_depth;
        memcpy(h.agg_loc, credit->agg_loc, sizeof h.agg_loc);
        if (q->fanin)
            memcpy(h.fanin, q->fanin + sub * 3u, ARB_MAX_DEPTH);
        else
            memset(h.fanin, 1, ARB_MAX_DEPTH);
    }
    if (needs_input(q, m, i)) {
        const struct qrest *x = rest_c(q, m);
        len = ep_len(x->length, q->cfg.ep.payload, i);
        if (x->in) {
            pl = x->in + (size_t)i * q->cfg.ep.payload;
        } else {
            q->cfg.fill(q->cfg.fill_ctx, m->id, i, q->scratch, len);
            pl = q->scratch;
        }
        h.payload_valid = 1;
    }
    if (repair)
        q->st.repair_requests++;
    else
        q->requests++;
    if (h.attempt) q->st.retry_answers++;
    emit(q, sub, &h, pl, len);
}

/* How long a REGISTER or END may go unanswered: retry x (2^retry_tries - 1),
 * what the doubling schedule from `retry` took (saturating). */
static arb_time give_up_span(const arb_requester *q)
{
    uint64_t mult = (UINT64_C(1) << q->cfg.ep.retry_tries) - 1;
    return q->cfg.ep.retry > ARB_TIME_NEVER / mult ? ARB_TIME_NEVER : q->cfg.ep.retry * mult;
}

/* The first REGISTER or END went out: retry after retry_min, doubling up
 * to retry; give up after give_up_span. */
static void arm(arb_requester *q, struct qmsg *m, arb_time now)
{
    struct qrest *x = rest_of(q, m);
    arb_time span = give_up_span(q);
    x->interval = q->cfg.ep.retry_min;
    x->give_up = span > ARB_TIME_NEVER - now ? ARB_TIME_NEVER : now + span;
    m->timer = now + x->interval;
}

/* Every result in: END (pull, push) or done (barrier). */
static void check_complete(arb_requester *q, struct qmsg *m, arb_time now)
{
    if (m->phase != ARB_REQ_ACTIVE) return;
    if (q->kind == ARB_EP_BARRIER) {
        if (m->nanswered == m->n) {
            m->phase = ARB_REQ_DONE;
            m->timer = ARB_TIME_NEVER;
        }
        return;
    }
    if (m->nhave < m->n) return;
    m->phase = ARB_REQ_END;
    send_control_first(q, m, ARB_PT_END);
    arm(q, m, now);
}

/* Groups a message's window starts with: most messages fit, so the packet
 * path rarely allocates. */
#define GROUPS_INITIAL 16u

static int start_window(const arb_mem *mem, struct qmsg *m, struct qrest *x)
{
    size_t want = (size_t)EP_WORDS(m->n);
    if (want > GROUPS_INITIAL) want = GROUPS_INITIAL;
    if (x->groups < want) {
        uint64_t *b = arb_mem_realloc(mem, m->bits, want * 2 * sizeof *b);
        if (!b) return ARB_ENOMEM;
        m->bits = b;
        x->groups = want;
    }
    m->gbase = 0;
    x->used = 0;
    return 0;
}

static void on_response(arb_requester *q, const arb_hdr *h, const uint8_t *payload, size_t len,
                        uint32_t sub, arb_time now);

/* The credits held for the message that just started, answered now. */
static void answer_held(arb_requester *q, arb_time now)
{
    uint32_t n = q->n_held;
    q->n_held = 0;
    for (uint32_t x = 0; x < n; x++)
        if (q->held[x].h.message_id == q->cur.id)
            on_response(q, &q->held[x].h, NULL, 0, q->held[x].sub, now);
}

/* A first credit of the message this engine starts next (it may come
 * before the message starts here): held, 1; or 0. Only a bare normal
 * credit of a pull message, which carries no bytes, is held. */
static int hold_early(arb_requester *q, const arb_hdr *h, uint32_t sub)
{
    if (!h->credit_valid || h->repair || (h->payload_valid && h->payload_kind != ARB_PK_SEED) ||
        !ep_kind_pull(q->kind) || h->message_id != q->next_id || q->n_held == 2)
        return 0;
    q->held[q->n_held].h = *h;
    q->held[q->n_held].h.payload_valid = 0; /* a seed no switch kept is no result */
    q->held[q->n_held].h.payload_kind = ARB_PK_DATA;
    q->held[q->n_held].sub = sub;
    q->n_held++;
    q->st.held++;
    return 1;
}

int arb_requester_start_message(arb_requester *q, uint8_t msg_id, uint64_t length,
                                const void *input, void *output, arb_time now)
{
    if (!q) return ARB_EINVAL;
    if (q->failed) return ARB_ESTATE;
    if (q->cur.phase == ARB_REQ_REGISTER || q->cur.phase == ARB_REQ_ACTIVE) return ARB_ESTATE;
    if (q->cur.phase == ARB_REQ_END && q->prev.phase == ARB_REQ_END) return ARB_ESTATE;
    if (msg_id != q->next_id) return ARB_EINVAL;
    if (length % arb_dtype_size(q->cfg.dtype) != 0) return ARB_EINVAL;
    if (q->kind == ARB_EP_BARRIER && length != 0) return ARB_EINVAL;
    uint64_t n = ep_packets(length, q->cfg.ep.payload);
    if (n > ARB_EP_MAX_OFFSETS) return ARB_EINVAL;
    if (ep_kind_pull(q->kind) && !q->header_only && length > 0 && !input && !q->cfg.fill)
        return ARB_EINVAL;

    /* A message waiting for its END_ACK moves aside and keeps retrying. */
    if (q->cur.phase == ARB_REQ_END) {
        struct qmsg t = q->prev;
        q->prev = q->cur;
        q->cur = t;
        struct qrest tx = q->prev_rest;
        q->prev_rest = q->cur_rest;
        q->cur_rest = tx;
    }
    struct qmsg *m = &q->cur;
    struct qrest *x = &q->cur_rest;
    m->n = (uint32_t)n;
    if (start_window(q->cfg.mem, m, x) != 0) {
        m->phase = ARB_REQ_IDLE;
        return ARB_ENOMEM;
    }
    m->phase = ARB_REQ_REGISTER;
    m->id = msg_id;
    m->start = q->next_seq;
    x->length = length;
    x->in = input;
    x->out = output;
    /* seeded (ep.seed, one offset): its input outlives the call */
    m->seeded = q->cfg.ep.seed && q->kind == ARB_EP_PULL_RESULT && n == 1 && length > 0;
    if (m->seeded && x->keep && input) x->in = memcpy(x->keep, input, length);
    m->nhave = m->nanswered = 0;
    q->next_id = (uint8_t)(msg_id + 1);
    q->next_seq = ep_seq(m->start, m->n);
    send_control_first(q, m, ARB_PT_REGISTER);
    arm(q, m, now);
    answer_held(q, now);
    return 0;
}

/* Deliver result / pushed packet index i; 1 if the packet now counts as held. */
static int deliver(arb_requester *q, struct qmsg *m, uint32_t i, const uint8_t *payload, size_t len,
                   int with_data)
{
    size_t want = q->out_bytes ? ep_len(rest_c(q, m)->length, q->cfg.ep.payload, i) : 0;
    if (want ? !with_data || len != want : with_data && !q->header_only) {
        q->st.bad++;
        return 0;
    }
    if (have_test(q, m, i)) {
        q->st.dup_results++;
        return 1;
    }
    have_set(q, m, i);
    m->nhave++;
    q->results++;
    if (want && rest_c(q, m)->out)
        memcpy(rest_c(q, m)->out + (size_t)i * q->cfg.ep.payload, payload, want);
    if (q->on_result)
        q->on_result(q->result_ctx, m->id, ep_seq(m->start, i), i, want ? payload : NULL, want);
    return 1;
}

/* The message a RESPONSE is for, or NULL. */
static struct qmsg *msg_of(arb_requester *q, const arb_hdr *h)
{
    if (h->message_id == q->cur.id && q->cur.phase >= ARB_REQ_REGISTER &&
        q->cur.phase <= ARB_REQ_DONE)
        return &q->cur;
    if (h->message_id == q->prev.id &&
        (q->prev.phase == ARB_REQ_END || q->prev.phase == ARB_REQ_DONE))
        return &q->prev;
    return NULL;
}

/* A RESPONSE for no message this engine tracks. */
static void on_stale_response(arb_requester *q, const arb_hdr *h, uint32_t sub)
{
    if (hold_early(q, h, sub)) return;
    q->st.stale++;
    /* A repair credit of a message this engine no longer tracks (it
     * finished, and the next one started). Its answer needs no bytes
     * for push and barrier, so it is given: another member's lost
     * acknowledgement may be what the repair waits for. Pull kinds
     * never repair a message whose results are all in. */
    if (h->repair && h->credit_valid && (!ep_kind_pull(q->kind) || q->header_only)) {
        arb_hdr r;
        ep_hdr(&r, ARB_PT_DATA_REQUEST, h->message_id, q->dtype, q->ext);
        r.op = q->req_op;
        r.repair = 1;
        r.offset_a = h->offset_b;
        r.offset_b = 1;
        q->st.repair_requests++;
        emit(q, sub, &r, NULL, 0);
    }
}

#define NO_RESULT UINT32_MAX
#define BAD_PACKET (UINT32_MAX - 1)

/* The index of the result (pull) or pushed packet a RESPONSE carries,
 * NO_RESULT, or BAD_PACKET (counted; the packet is ignored). */
static uint32_t result_index(arb_requester *q, const struct qmsg *m, const arb_hdr *h)
{
    if (q->kind == ARB_EP_PUSH) {
        if (!h->credit_valid) {
            q->st.bad++; /* push has no tails */
            return BAD_PACKET;
        }
        if (h->payload_valid && h->offset_a != h->offset_b) {
            q->st.bad++;
            return BAD_PACKET;
        }
        uint32_t i = ep_index(m->start, h->offset_b);
        if (i >= m->n) {
            q->st.stale++;
            return BAD_PACKET;
        }
        return i;
    }
    if (!ep_kind_pull(q->kind)) {
        if (h->payload_valid) q->st.bad++;
        return NO_RESULT;
    }
    int has = 0;
    if (h->payload_kind == ARB_PK_SEED) {
        /* the responder's own input, which no switch kept (none aggregates
         * on the way): a bare credit here */
    } else if (h->payload_valid || h->payload_kind == ARB_PK_COMPLETION) {
        has = 1;
    } else if (h->repair && h->credit_valid && h->offset_a != h->offset_b) {
        /* A replay that cannot carry bytes (docs/endpoint.md). */
        uint32_t p = ep_index(m->start, h->offset_a);
        has = p < m->n && !result_has_data(q, m, p);
    }
    if (!has) return NO_RESULT;
    uint32_t p = ep_index(m->start, h->offset_a);
    if (p >= m->n) {
        q->st.stale++;
        return NO_RESULT;
    }
    return p;
}

/* Should credit i be answered (`delivered`: its packet is held, push)?
 * Marks it answered. -1: a malformed credit (counted; the packet is ignored
 * from here). */
static int take_credit(arb_requester *q, struct qmsg *m, const arb_hdr *h, uint32_t i, uint32_t sub,
                       int delivered)
{
    if (h->repair) {
        /* Answer a repair credit unconditionally; the previous message
         * only while no contribution bytes are needed (its input may
         * be gone; pull kinds never repair a message whose results
         * are all in). */
        if (m == &q->prev && needs_input(q, m, i)) {
            q->st.stale++;
            return 0;
        }
        if (!delivered) return 0;
    } else {
        /* Every copy of a credit is answered, with the same contribution: a
         * switch sends a credit again where its answer is missing (local
         * repair), and a switch drops a second answer by its per-port
         * bitmap. A copy for the previous message is not answered: its
         * call has returned, and its input and op may be gone; nor a copy
         * whose offset's own result is in (it committed). */
        if (answered_test(q, m, i) && !m->seeded) {
            q->st.dup_credits++;
            if (m == &q->prev) return 0; /* its call has returned: its op, input are gone */
            /* offset i's own result is in: it committed, with this member's
             * contribution, so the copy is late; and the caller's input may
             * be gone already (the call returns once every result is in) */
            if (needs_input(q, m, i) && have_test(q, m, i)) return 0;
        } else if (answered_test(q, m, i)) {
            /* a seeded message's result comes from the switch, which may
             * hold it while the responder has not: answered from its kept
             * input until its END is acknowledged (after the commit) */
            q->st.dup_credits++;
        }
        if (!delivered) return 0;
        if (q->fanin && sub >= q->subchannels) {
            q->st.bad++;
            return -1;
        }
        if (!answered_test(q, m, i)) {
            answered_set(q, m, i);
            m->nanswered++;
        }
        return 1;
    }
    if (!answered_test(q, m, i)) {
        answered_set(q, m, i);
        m->nanswered++;
    }
    return 1;
}

/* Does RESPONSE h (result p) tell that the responder has every REGISTER?
 * Only a bare credit of the first offset may have been sent before
 * (arb_ep_settings.early); a result, a tail or any later credit
 * comes after registration. */
static int acks_register(const struct qmsg *m, const arb_hdr *h, uint32_t p)
{
    return p != NO_RESULT || !h->credit_valid || h->repair || ep_index(m->start, h->offset_b) != 0;
}

static void on_response(arb_requester *q, const arb_hdr *h, const uint8_t *payload, size_t len,
                        uint32_t sub, arb_time now)
{
    struct qmsg *m = msg_of(q, h);
    if (!m) {
        on_stale_response(q, h, sub);
        return;
    }
    if (m->phase == ARB_REQ_REGISTER) m->phase = ARB_REQ_ACTIVE; /* its REGISTER still retried */
    uint32_t p = result_index(q, m, h);
    if (p == BAD_PACKET) return;
    if (m->phase == ARB_REQ_ACTIVE && acks_register(m, h, p)) m->timer = ARB_TIME_NEVER;
    if (m->phase == ARB_REQ_END && !h->credit_valid) {
        /* A tail after every result is in: a replay, so the responder has
         * not heard our END. Say it again now rather than at our timer. */
        q->st.end_answers++;
        send_control(q, m, ARB_PT_END);
    }
    uint32_t i = h->credit_valid ? ep_index(m->start, h->offset_b) : UINT32_MAX;
    if ((p < m->n && make_room(q, m, p) != 0) || (i < m->n && make_room(q, m, i) != 0)) {
        q->st.no_memory++;
        return;
    }
    /* push: the credit's own packet must be held before it is answered */
    int delivered = p == NO_RESULT || deliver(q, m, p, payload, len, h->payload_valid) ||
                    q->kind != ARB_EP_PUSH;
    if (h->credit_valid) {
        int answer = 0;
        if (i >= m->n)
            q->st.stale++;
        else
            answer = take_credit(q, m, h, i, sub, delivered);
        if (answer < 0) return;
        if (answer) send_request(q, m, h, i, sub);
    }
    check_complete(q, m, now);
}

/* Is m's REGISTER unacknowledged (and retried)? */
static int registering(const struct qmsg *m)
{
    return m->phase == ARB_REQ_REGISTER ||
           (m->phase == ARB_REQ_ACTIVE && m->timer != ARB_TIME_NEVER);
}

/* Every packet type but RESPONSE. */
static void on_control(arb_requester *q, const arb_hdr *h)
{
    switch (h->packet_type) {
    case ARB_PT_REGISTER_ACK:
        if (registering(&q->cur) && h->message_id == q->cur.id && h->offset_a == q->cur.start) {
            q->cur.phase = ARB_REQ_ACTIVE;
            q->cur.timer = ARB_TIME_NEVER;
        } else {
            q->st.stale++;
        }
        break;
    case ARB_PT_END_ACK: {
        struct qmsg *m = NULL;
        if (q->cur.phase == ARB_REQ_END && h->message_id == q->cur.id &&
            h->offset_a == q->cur.start)
            m = &q->cur;
        else if (q->prev.phase == ARB_REQ_END && h->message_id == q->prev.id &&
                 h->offset_a == q->prev.start)
            m = &q->prev;
        if (m) {
            m->phase = ARB_REQ_DONE;
            m->timer = ARB_TIME_NEVER;
        } else {
            q->st.stale++;
        }
        break;
    }
    default:
        q->st.bad++;
        break;
    }
}

int arb_requester_recv(arb_requester *q, const arb_hdr *h, const uint8_t *payload, size_t len,
                       uint32_t subchannel, arb_time now)
{
    if (!q || !h || (!payload && len)) return ARB_EINVAL;
    if (arb_hdr_validate(h, len) != 0) {
        q->st.malformed++;
        return 0;
    }
    int rc = arb_requester_recv_trusted(q, h, payload, len, subchannel, now);
    return rc < 0 ? rc : 0;
}

/* Everything but the validation and the argument checks (ep_trusted.h);
 * arb_requester_recv's only path for a valid header. */
int arb_requester_recv_trusted(arb_requester *q, const arb_hdr *h, const uint8_t *payload,
                               size_t len, uint32_t subchannel, arb_time now)
{
    if (h->packet_type != ARB_PT_RESPONSE) {
        on_control(q, h);
        return 1; /* acknowledgements move phases and timers */
    }
    /* A RESPONSE moves only the current message's phase and timer (the
     * previous one is past ACTIVE). */
    uint8_t phase = q->cur.phase;
    arb_time timer = q->cur.timer;
    on_response(q, h, payload, len, subchannel, now);
    return q->cur.phase != phase || q->cur.timer != timer;
}

arb_time arb_requester_next_expiry(const arb_requester *q)
{
    if (!q || q->failed) return ARB_TIME_NEVER;
    arb_time t = ARB_TIME_NEVER;
    const struct qmsg *ms[2] = {&q->cur, &q->prev};
    for (int j = 0; j < 2; j++)
        if ((registering(ms[j]) || ms[j]->phase == ARB_REQ_END) && ms[j]->timer < t)
            t = ms[j]->timer;
    return t;
}

int arb_requester_on_expiry(arb_requester *q, arb_time now)
{
    if (!q) return ARB_EINVAL;
    if (q->failed) return 0;
    struct qmsg *ms[2] = {&q->cur, &q->prev};
    for (int j = 0; j < 2; j++) {
        struct qmsg *m = ms[j];
        if (!registering(m) && m->phase != ARB_REQ_END) continue;
        if (m->timer > now) continue;
        struct qrest *x = rest_of(q, m);
        if (now >= x->give_up) {
            arb_log(&q->cfg.logger, ARB_LOG_ERROR,
                    "requester %u of channel %llu: %s of message %u unanswered after %llu us",
                    (unsigned)q->cfg.member, (unsigned long long)q->cfg.channel,
                    m->phase == ARB_REQ_END ? "END" : "REGISTER", (unsigned)m->id,
                    (unsigned long long)(give_up_span(q) / ARB_PS_PER_US));
            m->phase = ARB_REQ_FAILED;
            m->timer = ARB_TIME_NEVER;
            q->failed = 1;
            return 0;
        }
        send_control(q, m, m->phase == ARB_REQ_END ? ARB_PT_END : ARB_PT_REGISTER);
        x->interval = x->interval > q->cfg.ep.retry / 2 ? q->cfg.ep.retry : x->interval * 2;
        m->timer = now + x->interval < x->give_up ? now + x->interval : x->give_up;
    }
    return 0;
}

void arb_requester_get_progress(const arb_requester *q, arb_requester_progress *out)
{
    memset(out, 0, sizeof *out);
    if (!q) return;
    const struct qmsg *m = &q->cur;
    out->phase = q->failed ? ARB_REQ_FAILED : (arb_requester_phase)m->phase;
    out->msg_id = m->phase == ARB_REQ_IDLE ? q->next_id : m->id;
    out->start_seq = m->phase == ARB_REQ_IDLE ? q->next_seq : m->start;
    out->offsets = m->n;
    out->results = m->nhave;
    out->answered = m->nanswered;
    out->complete = m->phase != ARB_REQ_IDLE && m->n > 0 &&
                    (q->kind == ARB_EP_BARRIER ? m->nanswered == m->n : m->nhave == m->n);
    out->window = (uint32_t)(q->cur_rest.groups * 64);
}

void arb_requester_get_stats(const arb_requester *q, arb_requester_stats *out)
{
    if (!q) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = q->st;
    out->results = q->results;
    out->requests = q->requests;
}

int arb_requester_done(const arb_requester *q)
{
    if (!q || q->failed) return 0;
    return (q->cur.phase == ARB_REQ_DONE || q->cur.phase == ARB_REQ_IDLE) &&
           (q->prev.phase == ARB_REQ_DONE || q->prev.phase == ARB_REQ_IDLE);
}

int arb_requester_error(const arb_requester *q)
{
    return q && q->failed ? ARB_ETIMEDOUT : 0;
}
