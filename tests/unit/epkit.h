/*
 * Helpers of the endpoint engines' unit tests (test_endpoint*.c). Include
 * after testkit.h.
 *
 * Hand-made tests drive one engine with headers built here (mk_*) and look
 * at every packet it emits: rsp_cfg and req_cfg configure an engine that
 * sends into a capture (cap_send; cap_count and cap_last read it).
 *
 * Whole-message tests wire one responder and R requesters back to back
 * through the small network here: a FIFO of packets with a per-hop latency,
 * a fake clock that jumps to the next packet or the earliest engine expiry,
 * and an optional one-tier "switch" that pushes a slot on each credit and
 * sums the requests of a credit context until the fan-in is reached (owner
 * check included, so a reallocated slot gives an AGG_MISS). A drop hook
 * loses chosen packets. Every packet either engine emits is checked with
 * arb_hdr_validate, and every result that rides a credit is checked to
 * belong to that credit's message.
 */
#ifndef ARB_TEST_EPKIT_H
#define ARB_TEST_EPKIT_H

#include <stdlib.h>
#include <string.h>

#include "arbor/endpoint.h"
#include "arbor/reduce.h"

#define US ARB_PS_PER_US
#define MS ARB_PS_PER_MS

/* ------------------------------------------------------------------ */
/* Capture: hand-made tests record what an engine emits                 */
/* ------------------------------------------------------------------ */

#define CAP_MAX 512
#define CAP_PAY 1024

typedef struct cap_pkt {
    arb_ep_dst dst;
    arb_hdr h;
    size_t len;
    uint8_t data[CAP_PAY];
} cap_pkt;

typedef struct capture {
    cap_pkt p[CAP_MAX];
    int n;
    int invalid;
} capture;

static inline void cap_send(void *ctx, const arb_ep_dst *dst, const arb_hdr *h,
                            const uint8_t *payload, size_t len)
{
    capture *c = ctx;
    if (arb_hdr_validate(h, len) != 0) c->invalid++;
    if (c->n >= CAP_MAX || len > CAP_PAY) {
        c->invalid++;
        return;
    }
    cap_pkt *p = &c->p[c->n++];
    p->dst = *dst;
    p->h = *h;
    p->len = len;
    if (len) memcpy(p->data, payload, len);
}

static inline int cap_count(const capture *c, int type, int repair)
{
    int k = 0;
    for (int i = 0; i < c->n; i++)
        if (c->p[i].h.packet_type == type && (repair < 0 || c->p[i].h.repair == repair)) k++;
    return k;
}

static inline const cap_pkt *cap_last(const capture *c, int type)
{
    for (int i = c->n - 1; i >= 0; i--)
        if (c->p[i].h.packet_type == type) return &c->p[i];
    return NULL;
}

static inline arb_hdr mk(arb_ptype type, uint8_t msg, uint32_t a, uint32_t b)
{
    arb_hdr h;
    memset(&h, 0, sizeof h);
    h.version = ARB_WIRE_VERSION;
    h.packet_type = (uint8_t)type;
    h.message_id = msg;
    h.offset_a = a;
    h.offset_b = b;
    h.dtype = ARB_DTYPE_I32;
    return h;
}

static inline arb_hdr mk_register(uint8_t msg, uint32_t start)
{
    arb_hdr h = mk(ARB_PT_REGISTER, msg, start, 0);
    h.repair = 1;
    return h;
}

static inline arb_hdr mk_end(uint8_t msg, uint32_t start)
{
    return mk(ARB_PT_END, msg, start, 0);
}

/* A root master (agg_depth 0) of `count` contributions with a payload. */
static inline arb_hdr mk_master(uint8_t msg, uint32_t k, uint32_t count, int with_payload)
{
    arb_hdr h = mk(ARB_PT_DATA_REQUEST, msg, k, count);
    h.op = ARB_OP_SUM;
    h.payload_valid = (uint8_t)with_payload;
    h.aggregated = 1;
    return h;
}

static inline arb_hdr mk_repair_req(uint8_t msg, uint32_t k, int with_payload)
{
    arb_hdr h = mk(ARB_PT_DATA_REQUEST, msg, k, 1);
    h.op = ARB_OP_SUM;
    h.repair = 1;
    h.payload_valid = (uint8_t)with_payload;
    return h;
}

static inline arb_hdr mk_credit(uint8_t msg, uint32_t k)
{
    arb_hdr h = mk(ARB_PT_RESPONSE, msg, k, k);
    h.op = ARB_OP_SUM;
    h.credit_valid = 1;
    return h;
}

/* The original recovery: a loss is found only by a fixed 50 ms timer and goes
 * to the bypass repair at once (the tests of the bypass path use it). */
static inline void seed_recovery(arb_responder_config *c)
{
    c->ep.attempts = 1;
    c->ep.order_detection = 0;
    c->ep.adaptive_timeout = 0;
}

/* A responder with i32 SUM, 16 B packets (4 elements), R members. */
static inline void rsp_cfg(arb_responder_config *c, uint32_t members, capture *cap)
{
    arb_responder_config_default(c);
    c->members = members;
    c->ep.payload = 16;
    c->dtype = ARB_DTYPE_I32;
    c->op = ARB_OP_SUM;
    c->send = cap_send;
    c->send_ctx = cap;
}

static inline void req_cfg(arb_requester_config *c, uint32_t member, capture *cap)
{
    arb_requester_config_default(c);
    c->member = member;
    c->ep.payload = 16;
    c->dtype = ARB_DTYPE_I32;
    c->op = ARB_OP_SUM;
    c->send = cap_send;
    c->send_ctx = cap;
}

/* Register every member of message `msg` at `start`. */
static inline void register_all(arb_responder *r, uint32_t members, uint8_t msg, uint32_t start,
                                arb_time now)
{
    for (uint32_t j = 0; j < members; j++) {
        arb_hdr h = mk_register(msg, start);
        arb_responder_recv(r, &h, NULL, 0, (int)j, now);
    }
}

/* ------------------------------------------------------------------ */
/* The loopback network                                                 */
/* ------------------------------------------------------------------ */

#define NET_MAXR 8
#define NET_Q 16384
#define NET_PAY 256
#define SW_SLOTS 64
#define TO_RESPONDER (-1)
#define TO_SWITCH (-2)

typedef struct net_pkt {
    arb_time at;
    int to;   /* member index, TO_RESPONDER or TO_SWITCH */
    int from; /* member index or ARB_EP_FROM_SWITCH (to the responder) */
    uint32_t sub;
    arb_hdr h;
    size_t len;
    uint8_t data[NET_PAY];
} net_pkt;

typedef struct net net;
/* Return 1 to lose packet p (it is about to be queued). */
typedef int (*drop_fn)(net *n, const net_pkt *p);

typedef struct sw_slot {
    int live;
    uint8_t msg;
    uint8_t attempt;
    uint32_t k;
    uint32_t count;
    uint64_t seen; /* the members (ports) that contributed: a second is dropped */
    uint8_t acc[NET_PAY];
} sw_slot;

typedef struct req_ctx {
    net *n;
    int j;
} req_ctx;

struct net {
    arb_responder *r;
    arb_requester *q[NET_MAXR];
    req_ctx rc[NET_MAXR];
    uint32_t R;
    int use_switch;
    uint32_t sw_next;
    sw_slot sw[SW_SLOTS];
    arb_dtype dt;
    arb_op op;
    arb_time t, lat;
    net_pkt *qbuf;
    size_t qhead, qlen;
    drop_fn drop;
    int drop_state;  /* for the hooks */
    uint32_t drop_k; /* the offset they aim at */
    double loss;     /* drop_random: probability per packet */
    arb_rng loss_rng;
    int dup_group; /* deliver every multicast copy twice */
    int shuffle;   /* deliver queued packets in a random order */
    arb_rng rng;
    /* observations */
    int invalid;
    int foreign_ride; /* a result riding a credit of another message */
    uint64_t credits_sent, repair_credits_sent, tails_sent, dropped, stale;
    arb_time last_credit_at;
    arb_time min_credit_gap;
    uint32_t max_outstanding;
    /* message table (for the ride check): start and count per message id */
    uint32_t msg_start[256], msg_n[256];
};

static inline void net_push(net *n, const net_pkt *p)
{
    if (n->drop && n->drop(n, p)) {
        n->dropped++;
        return;
    }
    if (n->qlen >= NET_Q) {
        n->invalid++;
        return;
    }
    n->qbuf[(n->qhead + n->qlen) % NET_Q] = *p;
    n->qlen++;
}

static inline void fill_pkt(net_pkt *p, const arb_hdr *h, const uint8_t *payload, size_t len)
{
    p->h = *h;
    p->len = len > NET_PAY ? NET_PAY : len;
    if (len) memcpy(p->data, payload, p->len);
}

static inline void net_from_responder(void *ctx, const arb_ep_dst *dst, const arb_hdr *h,
                                      const uint8_t *payload, size_t len)
{
    net *n = ctx;
    if (arb_hdr_validate(h, len) != 0 || len > NET_PAY) n->invalid++;
    if (h->packet_type == ARB_PT_RESPONSE) {
        /* A result riding a credit belongs to the credit's message. */
        int rides = h->payload_valid || h->payload_kind == ARB_PK_COMPLETION;
        uint32_t idx = (h->offset_a - n->msg_start[h->message_id]) & ARB_OFFSET_MASK;
        if (rides && idx >= n->msg_n[h->message_id]) n->foreign_ride++;
        if (h->credit_valid && !h->repair) {
            if (n->credits_sent && n->t - n->last_credit_at < n->min_credit_gap)
                n->min_credit_gap = n->t - n->last_credit_at;
            n->last_credit_at = n->t;
            n->credits_sent++;
            arb_responder_progress pr;
            arb_responder_get_progress(n->r, &pr);
            if (pr.outstanding > n->max_outstanding) n->max_outstanding = pr.outstanding;
        }
        if (h->credit_valid && h->repair) n->repair_credits_sent++;
        if (!h->credit_valid) n->tails_sent++;
    }
    net_pkt p;
    memset(&p, 0, sizeof p);
    p.at = n->t + n->lat;
    p.sub = dst->subchannel;
    p.from = TO_RESPONDER;
    fill_pkt(&p, h, payload, len);
    if (dst->kind == ARB_EP_DST_MEMBER) {
        p.to = (int)dst->member;
        net_push(n, &p);
        return;
    }
    if (dst->kind != ARB_EP_DST_GROUP) {
        n->invalid++;
        return;
    }
    if (n->use_switch && h->packet_type == ARB_PT_RESPONSE && h->credit_valid && !h->repair) {
        /* The root tier allocates a slot in rotation and pushes it. */
        uint32_t s = n->sw_next++ % SW_SLOTS;
        n->sw[s].live = 1;
        n->sw[s].msg = h->message_id;
        n->sw[s].k = h->offset_b;
        n->sw[s].attempt = h->attempt;
        n->sw[s].count = 0;
        n->sw[s].seen = 0;
        p.h.agg_loc[p.h.agg_depth] = (uint16_t)s;
        p.h.agg_depth++;
    }
    for (uint32_t j = 0; j < n->R; j++) {
        p.to = (int)j;
        net_push(n, &p);
        if (n->dup_group) net_push(n, &p);
    }
}

static inline void net_from_requester(void *ctx, const arb_ep_dst *dst, const arb_hdr *h,
                                      const uint8_t *payload, size_t len)
{
    req_ctx *rc = ctx;
    net *n = rc->n;
    if (arb_hdr_validate(h, len) != 0 || len > NET_PAY) n->invalid++;
    if (dst->kind != ARB_EP_DST_RESPONDER) n->invalid++;
    net_pkt p;
    memset(&p, 0, sizeof p);
    p.at = n->t + n->lat;
    p.sub = dst->subchannel;
    p.from = rc->j;
    fill_pkt(&p, h, payload, len);
    p.to = h->packet_type == ARB_PT_DATA_REQUEST && !h->repair && h->agg_depth > 0 ? TO_SWITCH
                                                                                   : TO_RESPONDER;
    net_push(n, &p);
}

/* The switch: owner check (another attempt of the offset: dropped), a
 * port's second contribution dropped, count, sum, pop at the fan-in. */
static inline void switch_recv(net *n, net_pkt *p)
{
    arb_hdr h = p->h;
    uint32_t s = h.agg_loc[h.agg_depth - 1] % SW_SLOTS;
    sw_slot *sl = &n->sw[s];
    net_pkt o;
    memset(&o, 0, sizeof o);
    o.at = n->t + n->lat;
    o.to = TO_RESPONDER;
    o.from = ARB_EP_FROM_SWITCH;
    o.sub = p->sub;
    if (!sl->live || sl->msg != h.message_id || sl->k != h.offset_a) {
        arb_hdr m = h;
        m.packet_type = ARB_PT_AGG_MISS;
        m.op = 0;
        m.payload_valid = 0;
        m.agg_depth = 0;
        m.aggregated = 0;
        m.offset_b = 0;
        fill_pkt(&o, &m, NULL, 0);
        if (arb_hdr_validate(&m, 0) != 0) n->invalid++;
        net_push(n, &o);
        return;
    }
    if (sl->attempt != h.attempt) {
        n->stale++;
        return;
    }
    uint64_t bit = (uint64_t)1 << (p->from % 64);
    if (sl->seen & bit) return; /* a duplicate: every copy of a credit is answered */
    sl->seen |= bit;
    if (sl->count == 0)
        memcpy(sl->acc, p->data, p->len);
    else
        arb_reduce_bytes(n->op, n->dt, sl->acc, p->data, p->len);
    sl->count += h.offset_b;
    if (sl->count < h.fanin[h.agg_depth - 1]) return;
    sl->live = 0;
    h.agg_depth--;
    h.aggregated = 1;
    h.offset_b = sl->count;
    fill_pkt(&o, &h, sl->acc, p->len);
    net_push(n, &o);
}

static inline void net_deliver(net *n, net_pkt *p)
{
    if (p->to == TO_SWITCH)
        switch_recv(n, p);
    else if (p->to == TO_RESPONDER)
        arb_responder_recv(n->r, &p->h, p->len ? p->data : NULL, p->len, p->from, n->t);
    else
        arb_requester_recv(n->q[p->to], &p->h, p->len ? p->data : NULL, p->len, p->sub, n->t);
}

static inline arb_time net_next_expiry(net *n)
{
    arb_time t = arb_responder_next_expiry(n->r);
    for (uint32_t j = 0; j < n->R; j++) {
        arb_time u = arb_requester_next_expiry(n->q[j]);
        if (u < t) t = u;
    }
    return t;
}

static inline int net_all_done(net *n)
{
    if (!arb_responder_done(n->r)) return 0;
    for (uint32_t j = 0; j < n->R; j++)
        if (!arb_requester_done(n->q[j])) return 0;
    return 1;
}

/* Run until everything is done and quiet, or `limit` events. Returns the
 * number of events. */
static inline long net_run(net *n, long limit)
{
    long ev = 0;
    while (ev < limit) {
        arb_time te = net_next_expiry(n);
        if (n->qlen == 0 && (te == ARB_TIME_NEVER || net_all_done(n))) break;
        if (n->qlen && n->qbuf[n->qhead].at <= te) {
            if (n->shuffle && n->qlen > 1) {
                /* swap the head with a random queued packet */
                size_t o = (size_t)arb_rng_below(&n->rng, n->qlen);
                net_pkt tmp = n->qbuf[n->qhead];
                n->qbuf[n->qhead] = n->qbuf[(n->qhead + o) % NET_Q];
                n->qbuf[(n->qhead + o) % NET_Q] = tmp;
            }
            net_pkt p = n->qbuf[n->qhead];
            n->qhead = (n->qhead + 1) % NET_Q;
            n->qlen--;
            if (p.at > n->t) n->t = p.at;
            net_deliver(n, &p);
        } else {
            if (te > n->t) n->t = te;
            arb_responder_on_expiry(n->r, n->t);
            for (uint32_t j = 0; j < n->R; j++)
                arb_requester_on_expiry(n->q[j], n->t);
        }
        ev++;
    }
    return ev;
}

typedef struct net_opts {
    uint32_t R;
    uint32_t payload;
    arb_dtype dt;
    arb_op op;
    arb_ep_kind kind;
    int use_switch;
    int header_only;
    uint32_t window;
    arb_cc *cc;
    uint8_t first_msg;
    uint32_t first_seq;
    uint32_t subchannels;
    uint32_t ring;
    int seed;          /* the original recovery: timers only, fixed 50 ms, bypass repair at once */
    uint32_t attempts; /* credits per offset in the network (0: the default) */
} net_opts;

static inline void net_opts_default(net_opts *o)
{
    memset(o, 0, sizeof *o);
    o->R = 3;
    o->payload = 16;
    o->dt = ARB_DTYPE_I32;
    o->op = ARB_OP_SUM;
    o->kind = ARB_EP_PULL_RESULT;
    o->use_switch = 1;
    o->window = 4;
    o->subchannels = 1;
}

static uint8_t fanin_tab[NET_MAXR * 3];

static inline int ep_pull(int kind)
{
    return kind == ARB_EP_PULL_RESULT || kind == ARB_EP_PULL_COMPLETION;
}

static inline net *net_new(const net_opts *o)
{
    net *n = calloc(1, sizeof *n);
    n->qbuf = malloc(NET_Q * sizeof *n->qbuf);
    n->R = o->R;
    n->use_switch = o->use_switch;
    n->dt = o->dt;
    n->op = o->op;
    n->lat = 1 * US;
    n->min_credit_gap = ARB_TIME_NEVER;
    arb_rng_seed(&n->rng, 42);

    arb_responder_config rc;
    arb_responder_config_default(&rc);
    rc.members = o->R;
    rc.ep.payload = o->payload;
    rc.dtype = o->dt;
    rc.op = o->op;
    rc.kind = o->kind;
    rc.ep.header_only = o->header_only;
    rc.ep.window = o->window;
    rc.cc = o->cc;
    rc.first_msg_id = o->first_msg;
    rc.first_seq = o->first_seq;
    rc.subchannels = o->subchannels;
    rc.ring = o->ring;
    rc.ep.timeout_min = 100 * US; /* the loopback's loop is a few us */
    if (o->attempts) rc.ep.attempts = o->attempts;
    if (o->seed) seed_recovery(&rc);
    rc.send = net_from_responder;
    rc.send_ctx = n;
    if (arb_responder_new(&n->r, &rc) != 0) n->invalid++;

    for (uint32_t s = 0; s < o->subchannels && s < NET_MAXR; s++) {
        fanin_tab[s * 3] = (uint8_t)(o->use_switch ? o->R : 1);
        fanin_tab[s * 3 + 1] = 1;
        fanin_tab[s * 3 + 2] = 1;
    }
    for (uint32_t j = 0; j < o->R; j++) {
        arb_requester_config qc;
        arb_requester_config_default(&qc);
        qc.member = j;
        qc.ep.payload = o->payload;
        qc.dtype = o->dt;
        qc.op = o->op;
        qc.kind = o->kind;
        qc.ep.header_only = o->header_only;
        qc.first_msg_id = o->first_msg;
        qc.first_seq = o->first_seq;
        qc.subchannels = o->subchannels;
        qc.fanin = fanin_tab;
        n->rc[j].n = n;
        n->rc[j].j = (int)j;
        qc.send = net_from_requester;
        qc.send_ctx = &n->rc[j];
        if (arb_requester_new(&n->q[j], &qc) != 0) n->invalid++;
    }
    return n;
}

static inline void net_free(net *n)
{
    arb_responder_free(n->r);
    for (uint32_t j = 0; j < n->R; j++)
        arb_requester_free(n->q[j]);
    free(n->qbuf);
    free(n);
}

/* Inputs: requester j's element e is in_val(j, e); the responder's own
 * contribution is in_val(R, e) (its member index is past the set). */
static inline int32_t in_val(uint32_t j, size_t e)
{
    return (int32_t)(j * 1000 + e * 3 + 1) * ((e & 1) ? -1 : 1);
}

/* A pull-result message of `elems` i32 elements on every rank. */
typedef struct i32_msg {
    int32_t *in[NET_MAXR + 1];
    int32_t *out[NET_MAXR + 1];
    size_t elems;
} i32_msg;

static inline void i32_msg_init(i32_msg *m, uint32_t R, size_t elems)
{
    m->elems = elems;
    for (uint32_t j = 0; j <= R; j++) {
        m->in[j] = malloc((elems ? elems : 1) * sizeof(int32_t));
        m->out[j] = calloc(elems ? elems : 1, sizeof(int32_t));
        for (size_t e = 0; e < elems; e++)
            m->in[j][e] = in_val(j, e);
    }
}

static inline void i32_msg_free(i32_msg *m, uint32_t R)
{
    for (uint32_t j = 0; j <= R; j++) {
        free(m->in[j]);
        free(m->out[j]);
    }
}

/* Sum of every rank's input (the responder's included) at element e. */
static inline int32_t i32_expect(uint32_t R, size_t e)
{
    int64_t s = 0;
    for (uint32_t j = 0; j <= R; j++)
        s += in_val(j, e);
    return (int32_t)s;
}

/* Start message `id` everywhere. */
static inline void net_start(net *n, uint8_t id, i32_msg *m)
{
    uint64_t bytes = m->elems * sizeof(int32_t);
    if (arb_responder_start_message(n->r, id, bytes, m->in[n->R], m->out[n->R], n->t) != 0)
        n->invalid++;
    for (uint32_t j = 0; j < n->R; j++)
        if (arb_requester_start_message(n->q[j], id, bytes, m->in[j], m->out[j], n->t) != 0)
            n->invalid++;
}

static inline void set_msg_range(net *n, uint8_t id, uint32_t start, uint32_t count)
{
    n->msg_start[id] = start;
    n->msg_n[id] = count;
}

/* Check every rank's output of a pull-result message. */
static inline int i32_check(const i32_msg *m, uint32_t R)
{
    int bad = 0;
    for (uint32_t j = 0; j <= R; j++)
        for (size_t e = 0; e < m->elems; e++)
            if (m->out[j][e] != i32_expect(R, e)) bad++;
    return bad;
}

/* A loss hook: the first normal credit of offset drop_k to member 1. */
static inline int drop_credit_to_1(net *n, const net_pkt *p)
{
    if (p->to == 1 && p->h.packet_type == ARB_PT_RESPONSE && p->h.credit_valid && !p->h.repair &&
        p->h.offset_b == n->drop_k && n->drop_state == 0) {
        n->drop_state = 1;
        return 1;
    }
    return 0;
}

#endif
