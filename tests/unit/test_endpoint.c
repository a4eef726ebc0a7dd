/*
 * Unit tests: the endpoint engines (responder and requester).
 *
 * Two kinds of test. Hand-made ones drive one engine with headers built
 * here and look at every packet it emits. Whole-message ones wire one
 * responder and R requesters back to back through a small network in this
 * file: a FIFO of packets with a per-hop latency, a fake clock that jumps to
 * the next packet or the earliest engine expiry, and an optional one-tier
 * "switch" that pushes a slot on each credit and sums the requests of a
 * credit context until the fan-in is reached (owner check included, so a
 * reallocated slot gives an AGG_MISS). A drop hook loses chosen packets.
 * Every packet either engine emits is checked with arb_hdr_validate, and
 * every result that rides a credit is checked to belong to that credit's
 * message.
 */
#include "arbor/endpoint.h"
#include "endpoint/ep_trusted.h"
#include "arbor/reduce.h"
#include "testkit.h"

#include <stdlib.h>

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

static void cap_send(void *ctx, const arb_ep_dst *dst, const arb_hdr *h, const uint8_t *payload,
                     size_t len)
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

static int cap_count(const capture *c, int type, int repair)
{
    int k = 0;
    for (int i = 0; i < c->n; i++)
        if (c->p[i].h.packet_type == type && (repair < 0 || c->p[i].h.repair == repair)) k++;
    return k;
}

static const cap_pkt *cap_last(const capture *c, int type)
{
    for (int i = c->n - 1; i >= 0; i--)
        if (c->p[i].h.packet_type == type) return &c->p[i];
    return NULL;
}

static arb_hdr mk(arb_ptype type, uint8_t msg, uint32_t a, uint32_t b)
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

static arb_hdr mk_register(uint8_t msg, uint32_t start)
{
    arb_hdr h = mk(ARB_PT_REGISTER, msg, start, 0);
    h.repair = 1;
    return h;
}

static arb_hdr mk_end(uint8_t msg, uint32_t start)
{
    return mk(ARB_PT_END, msg, start, 0);
}

/* A root master (agg_depth 0) of `count` contributions with a payload. */
static arb_hdr mk_master(uint8_t msg, uint32_t k, uint32_t count, int with_payload)
{
    arb_hdr h = mk(ARB_PT_DATA_REQUEST, msg, k, count);
    h.op = ARB_OP_SUM;
    h.payload_valid = (uint8_t)with_payload;
    h.aggregated = 1;
    return h;
}

static arb_hdr mk_repair_req(uint8_t msg, uint32_t k, int with_payload)
{
    arb_hdr h = mk(ARB_PT_DATA_REQUEST, msg, k, 1);
    h.op = ARB_OP_SUM;
    h.repair = 1;
    h.payload_valid = (uint8_t)with_payload;
    return h;
}

static arb_hdr mk_credit(uint8_t msg, uint32_t k)
{
    arb_hdr h = mk(ARB_PT_RESPONSE, msg, k, k);
    h.op = ARB_OP_SUM;
    h.credit_valid = 1;
    return h;
}

/* The original recovery: a loss is found only by a fixed 50 ms timer and goes
 * to the bypass repair at once (the tests of the bypass path use it). */
static void seed_recovery(arb_responder_config *c)
{
    c->ep.attempts = 1;
    c->ep.order_detection = 0;
    c->ep.adaptive_timeout = 0;
}

/* A responder with i32 SUM, 16 B packets (4 elements), R members. */
static void rsp_cfg(arb_responder_config *c, uint32_t members, capture *cap)
{
    arb_responder_config_default(c);
    c->members = members;
    c->ep.payload = 16;
    c->dtype = ARB_DTYPE_I32;
    c->op = ARB_OP_SUM;
    c->send = cap_send;
    c->send_ctx = cap;
}

static void req_cfg(arb_requester_config *c, uint32_t member, capture *cap)
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
static void register_all(arb_responder *r, uint32_t members, uint8_t msg, uint32_t start,
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

static void net_push(net *n, const net_pkt *p)
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

static void fill_pkt(net_pkt *p, const arb_hdr *h, const uint8_t *payload, size_t len)
{
    p->h = *h;
    p->len = len > NET_PAY ? NET_PAY : len;
    if (len) memcpy(p->data, payload, p->len);
}

static void net_from_responder(void *ctx, const arb_ep_dst *dst, const arb_hdr *h,
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

static void net_from_requester(void *ctx, const arb_ep_dst *dst, const arb_hdr *h,
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
static void switch_recv(net *n, net_pkt *p)
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

static void net_deliver(net *n, net_pkt *p)
{
    if (p->to == TO_SWITCH)
        switch_recv(n, p);
    else if (p->to == TO_RESPONDER)
        arb_responder_recv(n->r, &p->h, p->len ? p->data : NULL, p->len, p->from, n->t);
    else
        arb_requester_recv(n->q[p->to], &p->h, p->len ? p->data : NULL, p->len, p->sub, n->t);
}

static arb_time net_next_expiry(net *n)
{
    arb_time t = arb_responder_next_expiry(n->r);
    for (uint32_t j = 0; j < n->R; j++) {
        arb_time u = arb_requester_next_expiry(n->q[j]);
        if (u < t) t = u;
    }
    return t;
}

static int net_all_done(net *n)
{
    if (!arb_responder_done(n->r)) return 0;
    for (uint32_t j = 0; j < n->R; j++)
        if (!arb_requester_done(n->q[j])) return 0;
    return 1;
}

/* Run until everything is done and quiet, or `limit` events. Returns the
 * number of events. */
static long net_run(net *n, long limit)
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

static void net_opts_default(net_opts *o)
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

static int ep_pull(int kind)
{
    return kind == ARB_EP_PULL_RESULT || kind == ARB_EP_PULL_COMPLETION;
}

static net *net_new(const net_opts *o)
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

static void net_free(net *n)
{
    arb_responder_free(n->r);
    for (uint32_t j = 0; j < n->R; j++)
        arb_requester_free(n->q[j]);
    free(n->qbuf);
    free(n);
}

/* Inputs: requester j's element e is in_val(j, e); the responder's own
 * contribution is in_val(R, e) (its member index is past the set). */
static int32_t in_val(uint32_t j, size_t e)
{
    return (int32_t)(j * 1000 + e * 3 + 1) * ((e & 1) ? -1 : 1);
}

/* A pull-result message of `elems` i32 elements on every rank. */
typedef struct i32_msg {
    int32_t *in[NET_MAXR + 1];
    int32_t *out[NET_MAXR + 1];
    size_t elems;
} i32_msg;

static void i32_msg_init(i32_msg *m, uint32_t R, size_t elems)
{
    m->elems = elems;
    for (uint32_t j = 0; j <= R; j++) {
        m->in[j] = malloc((elems ? elems : 1) * sizeof(int32_t));
        m->out[j] = calloc(elems ? elems : 1, sizeof(int32_t));
        for (size_t e = 0; e < elems; e++)
            m->in[j][e] = in_val(j, e);
    }
}

static void i32_msg_free(i32_msg *m, uint32_t R)
{
    for (uint32_t j = 0; j <= R; j++) {
        free(m->in[j]);
        free(m->out[j]);
    }
}

/* Sum of every rank's input (the responder's included) at element e. */
static int32_t i32_expect(uint32_t R, size_t e)
{
    int64_t s = 0;
    for (uint32_t j = 0; j <= R; j++)
        s += in_val(j, e);
    return (int32_t)s;
}

/* Start message `id` everywhere. */
static void net_start(net *n, uint8_t id, i32_msg *m)
{
    uint64_t bytes = m->elems * sizeof(int32_t);
    if (arb_responder_start_message(n->r, id, bytes, m->in[n->R], m->out[n->R], n->t) != 0)
        n->invalid++;
    for (uint32_t j = 0; j < n->R; j++)
        if (arb_requester_start_message(n->q[j], id, bytes, m->in[j], m->out[j], n->t) != 0)
            n->invalid++;
}

static void set_msg_range(net *n, uint8_t id, uint32_t start, uint32_t count)
{
    n->msg_start[id] = start;
    n->msg_n[id] = count;
}

/* Check every rank's output of a pull-result message. */
static int i32_check(const i32_msg *m, uint32_t R)
{
    int bad = 0;
    for (uint32_t j = 0; j <= R; j++)
        for (size_t e = 0; e < m->elems; e++)
            if (m->out[j][e] != i32_expect(R, e)) bad++;
    return bad;
}

/* ------------------------------------------------------------------ */
/* Whole messages                                                       */
/* ------------------------------------------------------------------ */

static void run_pull_message(uint32_t R, int use_switch, size_t elems, uint32_t window)
{
    net_opts o;
    net_opts_default(&o);
    o.R = R;
    o.use_switch = use_switch;
    o.window = window;
    net *n = net_new(&o);
    i32_msg m;
    i32_msg_init(&m, R, elems);
    uint32_t count = (uint32_t)((elems * 4 + 15) / 16);
    if (!count) count = 1;
    set_msg_range(n, 0, 0, count);
    net_start(n, 0, &m);
    net_run(n, 1000000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(i32_check(&m, R), 0);
    CHECK_EQ_I(n->invalid, 0);
    CHECK_EQ_I(n->foreign_ride, 0);
    CHECK(n->max_outstanding <= window);
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    /* a message of one offset goes twice: its credit (attempts 0 and 1),
     * and its requesters' first REGISTER and END */
    uint32_t twice = count == 1 ? 2 : 1;
    CHECK_EQ_U(st.commits, count);
    CHECK_EQ_U(st.credits, count * twice);
    CHECK_EQ_U(st.twins, twice - 1);
    CHECK_EQ_U(st.repair_credits, 0);
    CHECK_EQ_U(st.messages, 1);
    CHECK_EQ_U(st.results_riding + st.tails, count);
    /* a sample a commit, but of the first offset when it was credited
     * before every member registered: its loop holds a late start */
    CHECK(st.early <= 1);
    CHECK_EQ_U(st.samples, count - st.early);
    for (uint32_t j = 0; j < R; j++) {
        arb_requester_stats qs;
        arb_requester_get_stats(n->q[j], &qs);
        CHECK_EQ_U(qs.requests, count * twice);
        CHECK_EQ_U(qs.results, count);
        CHECK_EQ_U(qs.registers, twice);
        CHECK_EQ_U(qs.ends, twice);
    }
    i32_msg_free(&m, R);
    net_free(n);
}

TEST(pull_message_through_switch)
{
    run_pull_message(3, 1, 37, 4); /* 10 packets, the last one short */
    run_pull_message(7, 1, 400, 8);
    run_pull_message(2, 1, 4, 4); /* one packet: its result is a tail */
}

TEST(pull_message_point_to_point)
{
    run_pull_message(1, 0, 37, 4); /* two ranks: fan-in 1 everywhere */
    run_pull_message(1, 0, 64, 1);
}

/* A pull-result run on another dtype / op with exact values. */
TEST(pull_message_f32_i64_max)
{
    /* f32 SUM of small integers and halves is exact */
    for (int variant = 0; variant < 3; variant++) {
        net_opts o;
        net_opts_default(&o);
        o.R = 4;
        o.dt = variant == 0 ? ARB_DTYPE_F32 : variant == 1 ? ARB_DTYPE_I64 : ARB_DTYPE_I32;
        o.op = variant == 2 ? ARB_OP_MAX : ARB_OP_SUM;
        o.payload = 32;
        net *n = net_new(&o);
        size_t es = arb_dtype_size(o.dt), elems = 50, bytes = elems * es;
        uint8_t *in[5], *out[5];
        for (int j = 0; j < 5; j++) {
            in[j] = malloc(bytes);
            out[j] = calloc(1, bytes);
            for (size_t e = 0; e < elems; e++) {
                if (o.dt == ARB_DTYPE_F32) {
                    float v = (float)(j * 7 + (int)e) * 0.5f;
                    memcpy(in[j] + e * 4, &v, 4);
                } else if (o.dt == ARB_DTYPE_I64) {
                    int64_t v = ((int64_t)1 << 40) * j + (int64_t)e;
                    memcpy(in[j] + e * 8, &v, 8);
                } else {
                    int32_t v = (int32_t)((j * 37 + e * 11) % 101) - 50;
                    memcpy(in[j] + e * 4, &v, 4);
                }
            }
        }
        set_msg_range(n, 0, 0, (uint32_t)((bytes + 31) / 32));
        CHECK_EQ_I(arb_responder_start_message(n->r, 0, bytes, in[4], out[4], 0), 0);
        for (uint32_t j = 0; j < 4; j++)
            CHECK_EQ_I(arb_requester_start_message(n->q[j], 0, bytes, in[j], out[j], 0), 0);
        net_run(n, 100000);
        CHECK(net_all_done(n));
        CHECK_EQ_I(n->invalid, 0);
        uint8_t *want = malloc(bytes);
        memcpy(want, in[0], bytes);
        for (int j = 1; j < 5; j++)
            arb_reduce_bytes(o.op, o.dt, want, in[j], bytes);
        for (int j = 0; j < 5; j++)
            CHECK(memcmp(out[j], want, bytes) == 0);
        if (o.dt == ARB_DTYPE_F32) {
            float f;
            memcpy(&f, want + 4 * 3, 4);
            CHECK(f == (float)(0 + 7 + 14 + 21 + 28 + 5 * 3) * 0.5f);
        }
        free(want);
        for (int j = 0; j < 5; j++) {
            free(in[j]);
            free(out[j]);
        }
        net_free(n);
    }
}

/* Reduce: the root holds the sum, requesters get COMPLETIONs. */
TEST(pull_completion_message)
{
    net_opts o;
    net_opts_default(&o);
    o.kind = ARB_EP_PULL_COMPLETION;
    net *n = net_new(&o);
    i32_msg m;
    i32_msg_init(&m, 3, 37);
    set_msg_range(n, 0, 0, 10);
    net_start(n, 0, &m);
    net_run(n, 100000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(n->invalid, 0);
    for (size_t e = 0; e < 37; e++)
        CHECK_EQ_I(m.out[3][e], i32_expect(3, e));
    for (uint32_t j = 0; j < 3; j++) {
        CHECK_EQ_I(m.out[j][0], 0); /* nothing written at requesters */
        arb_requester_stats qs;
        arb_requester_get_stats(n->q[j], &qs);
        CHECK_EQ_U(qs.results, 10);
    }
    i32_msg_free(&m, 3);
    net_free(n);
}

/* Broadcast: credit k carries offset k's data. */
TEST(push_message)
{
    net_opts o;
    net_opts_default(&o);
    o.kind = ARB_EP_PUSH;
    o.op = ARB_OP_NOP;
    net *n = net_new(&o);
    i32_msg m;
    i32_msg_init(&m, 3, 37);
    set_msg_range(n, 0, 0, 10);
    CHECK_EQ_I(arb_responder_start_message(n->r, 0, 37 * 4, m.in[3], NULL, 0), 0);
    for (uint32_t j = 0; j < 3; j++)
        CHECK_EQ_I(arb_requester_start_message(n->q[j], 0, 37 * 4, NULL, m.out[j], 0), 0);
    net_run(n, 100000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(n->invalid, 0);
    for (uint32_t j = 0; j < 3; j++)
        CHECK(memcmp(m.out[j], m.in[3], 37 * 4) == 0);
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(st.commits, 10);
    CHECK_EQ_U(st.tails, 0);
    i32_msg_free(&m, 3);
    net_free(n);
}

TEST(barrier_message)
{
    net_opts o;
    net_opts_default(&o);
    o.kind = ARB_EP_BARRIER;
    o.op = ARB_OP_NOP;
    net *n = net_new(&o);
    set_msg_range(n, 0, 0, 1);
    CHECK_EQ_I(arb_responder_start_message(n->r, 0, 4, NULL, NULL, 0), ARB_EINVAL);
    for (int round = 0; round < 3; round++) {
        CHECK_EQ_I(arb_responder_start_message(n->r, (uint8_t)round, 0, NULL, NULL, n->t), 0);
        for (uint32_t j = 0; j < 3; j++)
            CHECK_EQ_I(arb_requester_start_message(n->q[j], (uint8_t)round, 0, NULL, NULL, n->t),
                       0);
        set_msg_range(n, (uint8_t)round, (uint32_t)round, 1);
        net_run(n, 10000);
        CHECK(net_all_done(n));
    }
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(st.commits, 3);
    CHECK_EQ_U(st.messages, 3);
    CHECK_EQ_U(st.ends, 0);
    CHECK_EQ_I(n->invalid, 0);
    net_free(n);
}

TEST(zero_size_message)
{
    for (int kind = 0; kind < 3; kind++) {
        net_opts o;
        net_opts_default(&o);
        o.kind = (arb_ep_kind)kind;
        if (kind == ARB_EP_PUSH) o.op = ARB_OP_NOP;
        net *n = net_new(&o);
        set_msg_range(n, 0, 0, 1);
        CHECK_EQ_I(arb_responder_start_message(n->r, 0, 0, NULL, NULL, 0), 0);
        for (uint32_t j = 0; j < 3; j++)
            CHECK_EQ_I(arb_requester_start_message(n->q[j], 0, 0, NULL, NULL, 0), 0);
        net_run(n, 10000);
        CHECK(net_all_done(n));
        CHECK_EQ_I(n->invalid, 0);
        arb_responder_stats st;
        arb_responder_get_stats(n->r, &st);
        CHECK_EQ_U(st.commits, 1);
        CHECK_EQ_U(st.credits, 2); /* one offset: credited twice at once */
        CHECK_EQ_U(st.twins, 1);
        arb_requester_progress qp;
        arb_requester_get_progress(n->q[1], &qp);
        CHECK_EQ_U(qp.offsets, 1);
        CHECK(qp.complete);
        /* the next message starts one offset later */
        arb_responder_progress pr;
        arb_responder_get_progress(n->r, &pr);
        CHECK_EQ_U(pr.start_seq, 1);
        net_free(n);
    }
}

TEST(header_only_mode)
{
    for (int kind = 0; kind < 3; kind++) {
        net_opts o;
        net_opts_default(&o);
        o.kind = (arb_ep_kind)kind;
        if (kind == ARB_EP_PUSH) o.op = ARB_OP_NOP;
        o.header_only = 1;
        net *n = net_new(&o);
        set_msg_range(n, 0, 0, 64);
        CHECK_EQ_I(arb_responder_start_message(n->r, 0, 1024, NULL, NULL, 0), 0);
        for (uint32_t j = 0; j < 3; j++)
            CHECK_EQ_I(arb_requester_start_message(n->q[j], 0, 1024, NULL, NULL, 0), 0);
        net_run(n, 100000);
        CHECK(net_all_done(n));
        CHECK_EQ_I(n->invalid, 0);
        arb_responder_stats st;
        arb_responder_get_stats(n->r, &st);
        CHECK_EQ_U(st.commits, 64);
        for (uint32_t j = 0; j < 3; j++) {
            arb_requester_stats qs;
            arb_requester_get_stats(n->q[j], &qs);
            CHECK_EQ_U(qs.results, 64);
        }
        net_free(n);
    }
}

/* Every multicast copy delivered twice, and every packet in random order. */
TEST(duplicates_and_reordering)
{
    for (int mode = 0; mode < 2; mode++) {
        net_opts o;
        net_opts_default(&o);
        o.R = 4;
        o.window = 6;
        o.use_switch = mode == 1 ? 0 : 1;
        if (!o.use_switch) o.R = 1;
        net *n = net_new(&o);
        if (mode == 0) n->dup_group = 1;
        if (mode == 1) n->shuffle = 1;
        i32_msg m;
        i32_msg_init(&m, o.R, 200);
        set_msg_range(n, 0, 0, 50);
        net_start(n, 0, &m);
        net_run(n, 1000000);
        CHECK(net_all_done(n));
        CHECK_EQ_I(i32_check(&m, o.R), 0);
        CHECK_EQ_I(n->invalid, 0);
        arb_requester_stats qs;
        arb_requester_get_stats(n->q[0], &qs);
        arb_responder_stats rs;
        arb_responder_get_stats(n->r, &rs);
        /* every copy of a credit answered. Duplicated: every credit twice,
         * so two requests each, the second counted as a duplicate.
         * Reordered: some credits look lost and are credited again; each
         * credit the responder sent arrives once and is answered, but a
         * later attempt arriving once its offset's result is in (it
         * committed), which is a copy and is not: credits lie between the
         * requests and the requests plus the copies */
        if (mode == 0) {
            CHECK_EQ_U(rs.credits, 50);
            CHECK_EQ_U(qs.requests, 100);
            CHECK_EQ_U(qs.dup_credits, 50);
        } else {
            CHECK(qs.requests <= rs.credits && rs.credits <= qs.requests + qs.dup_credits);
            CHECK(rs.retries > 0);
        }
        if (mode == 0) {
            CHECK(qs.dup_credits >= 50);
            CHECK(qs.dup_results > 0);
        }
        i32_msg_free(&m, o.R);
        net_free(n);
    }
}

/* Loss hooks. */
static int drop_credit_to_1(net *n, const net_pkt *p)
{
    if (p->to == 1 && p->h.packet_type == ARB_PT_RESPONSE && p->h.credit_valid && !p->h.repair &&
        p->h.offset_b == n->drop_k && n->drop_state == 0) {
        n->drop_state = 1;
        return 1;
    }
    return 0;
}

static int drop_credit_and_first_repair(net *n, const net_pkt *p)
{
    if (p->to == 1 && p->h.packet_type == ARB_PT_RESPONSE && p->h.credit_valid &&
        p->h.offset_b == n->drop_k && n->drop_state < 2) {
        n->drop_state++;
        return 1;
    }
    return 0;
}

static int drop_last_tail_to_0(net *n, const net_pkt *p)
{
    if (p->to == 0 && p->h.packet_type == ARB_PT_RESPONSE && !p->h.credit_valid && !p->h.repair &&
        p->h.offset_a == 9 && n->drop_state == 0) {
        n->drop_state = 1;
        return 1;
    }
    return 0;
}

static int drop_request_from_2(net *n, const net_pkt *p)
{
    if (p->from == 2 && p->h.packet_type == ARB_PT_DATA_REQUEST && !p->h.repair &&
        p->h.offset_a == 5 && n->drop_state == 0) {
        n->drop_state = 1;
        return 1;
    }
    return 0;
}

static int drop_first_end_ack(net *n, const net_pkt *p)
{
    if (p->h.packet_type == ARB_PT_END_ACK && p->to == 2 && n->drop_state == 0) {
        n->drop_state = 1;
        return 1;
    }
    return 0;
}

static int drop_first_register_ack(net *n, const net_pkt *p)
{
    if (p->h.packet_type == ARB_PT_REGISTER_ACK && p->to == 0 && n->drop_state == 0) {
        n->drop_state = 1;
        return 1;
    }
    return 0;
}

/* Run a 10-packet pull-result message on R = 3 with a loss hook, with the
 * default recovery or the original design's (`seed`). */
static net *run_lossy_mode(drop_fn hook, arb_responder_stats *st, int *bad, int seed)
{
    net_opts o;
    net_opts_default(&o);
    o.seed = seed;
    net *n = net_new(&o);
    n->drop = hook;
    n->drop_k = 5;
    i32_msg m;
    i32_msg_init(&m, 3, 40);
    set_msg_range(n, 0, 0, 10);
    net_start(n, 0, &m);
    net_run(n, 1000000);
    *bad = i32_check(&m, 3) + n->invalid + n->foreign_ride + !net_all_done(n);
    arb_responder_get_stats(n->r, st);
    i32_msg_free(&m, 3);
    return n;
}

static net *run_lossy(drop_fn hook, arb_responder_stats *st, int *bad)
{
    return run_lossy_mode(hook, st, bad, 0);
}

static net *run_lossy_seed(drop_fn hook, arb_responder_stats *st, int *bad)
{
    return run_lossy_mode(hook, st, bad, 1);
}

/* The original recovery: the lost credit waits for the 50 ms timer, then the
 * bypass repair (every member answers straight to the responder). */
TEST(lost_credit_timeout_repair_replay)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy_seed(drop_credit_to_1, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(n->drop_state, 1);
    CHECK_EQ_U(st.timeouts, 1);
    CHECK_EQ_U(st.repair_credits, 1);
    CHECK_EQ_U(st.repair_commits, 1);
    CHECK_EQ_U(st.repair_requests, 3);
    CHECK(n->t >= 50 * MS); /* the original design's timeout */
    arb_requester_stats qs;
    arb_requester_get_stats(n->q[1], &qs);
    CHECK_EQ_U(qs.repair_requests, 1);
    CHECK_EQ_U(qs.requests, 9);
    /* credit 5 carried result 1 (window 4): the repair credit replayed it */
    arb_requester_get_stats(n->q[0], &qs);
    CHECK_EQ_U(qs.dup_results, 1);
    net_free(n);
}

/* The default recovery: the same lost credit is found by order (credit 6
 * on the same tree committed), credited again in the network as attempt 1
 * (replaying the result that rode it), and commits in a few loops: no
 * timer, no bypass repair. */
TEST(lost_credit_retried_in_network)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy(drop_credit_to_1, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(n->drop_state, 1);
    CHECK_EQ_U(st.losses_order, 1);
    CHECK_EQ_U(st.losses_timer, 0);
    CHECK_EQ_U(st.retries, 1);
    CHECK_EQ_U(st.repair_credits, 0);
    CHECK_EQ_U(st.repair_commits, 0);
    CHECK_EQ_U(st.commits, 10);
    CHECK(n->t < 100 * US); /* the loopback's loop is 4 us: a few loops */
    arb_requester_stats qs;
    arb_requester_get_stats(n->q[1], &qs);
    CHECK_EQ_U(qs.retry_answers, 1); /* member 1 answered attempt 1 */
    CHECK_EQ_U(qs.repair_requests, 0);
    arb_requester_get_stats(n->q[0], &qs);
    CHECK_EQ_U(qs.retry_answers, 1); /* so did every member: a fresh context */
    CHECK_EQ_U(qs.requests, 11);
    CHECK_EQ_U(qs.dup_results, 1); /* the replayed ride */
    net_free(n);
    /* the retry is lost too: found by order again (attempt 2) */
    n = run_lossy(drop_credit_and_first_repair, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(n->drop_state, 2);
    CHECK_EQ_U(st.retries, 2);
    CHECK_EQ_U(st.repair_commits, 0);
    net_free(n);
}

TEST(repair_credit_lost_sent_again)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy_seed(drop_credit_and_first_repair, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(n->drop_state, 2);
    CHECK_EQ_U(st.repair_credits, 2);
    CHECK_EQ_U(st.repair_repeats, 1);
    CHECK_EQ_U(st.repair_commits, 1);
    CHECK_EQ_U(st.dup_repairs, 0); /* the repeat went to member 1 alone */
    CHECK(n->t >= 100 * MS);
    net_free(n);
}

/* A lost tail shows up as a missing END: replayed to that member alone.
 * By order (the others' ENDs came in after the last tail) it is replayed
 * within a few loops; the original design's END wait takes its 50 ms timer. */
TEST(lost_tail_end_wait_replay)
{
    for (int seed = 0; seed < 2; seed++) {
        arb_responder_stats st;
        int bad;
        net *n = run_lossy_mode(drop_last_tail_to_0, &st, &bad, seed);
        CHECK_EQ_I(bad, 0);
        CHECK_EQ_U(n->drop_state, 1);
        CHECK(st.tails > 0);
        CHECK_EQ_U(st.tail_replays, st.tails); /* only member 0 was missing */
        CHECK_EQ_U(st.repair_credits, 0);
        arb_requester_stats qs;
        arb_requester_get_stats(n->q[0], &qs);
        CHECK(qs.dup_results > 0); /* replays of tails it already had are ignored */
        if (seed)
            CHECK(n->t >= 50 * MS);
        else
            CHECK(n->t < 100 * US); /* a 4 us loop: a few loops, no timer */
        net_free(n);
    }
}

/* Every normal credit of offset 5 to member 1 is lost, whatever its
 * attempt: after `attempts` credits the offset goes to the bypass repair,
 * whose repair credit gets through. */
static int drop_normal_credits_5_to_1(net *n, const net_pkt *p)
{
    (void)n;
    return p->to == 1 && p->h.packet_type == ARB_PT_RESPONSE && p->h.credit_valid && !p->h.repair &&
           p->h.offset_b == 5;
}

TEST(retry_fails_into_bypass)
{
    net_opts o;
    net_opts_default(&o);
    o.attempts = 3;
    net *n = net_new(&o);
    n->drop = drop_normal_credits_5_to_1;
    i32_msg m;
    i32_msg_init(&m, 3, 40);
    set_msg_range(n, 0, 0, 10);
    net_start(n, 0, &m);
    net_run(n, 1000000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(i32_check(&m, 3), 0);
    CHECK_EQ_I(n->invalid + n->foreign_ride, 0);
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(st.retries, 2);                        /* attempts 1 and 2 */
    CHECK_EQ_U(st.losses_order + st.losses_timer, 3); /* attempts 0, 1, 2 */
    CHECK_EQ_U(st.bypass, 1);
    CHECK_EQ_U(st.repair_credits, 1);
    CHECK_EQ_U(st.repair_commits, 1);
    CHECK_EQ_U(st.commits, 10);
    CHECK_EQ_U(n->dropped, 3);
    CHECK_EQ_I(arb_responder_error(n->r), 0);
    i32_msg_free(&m, 3);
    net_free(n);
}

/* Member 1 never hears of offset 5 again (every credit, normal or repair,
 * is lost): the channel fails within its bound, naming the offset and the
 * member, and stops. */
static int drop_all_credits_5_to_1(net *n, const net_pkt *p)
{
    (void)n;
    return p->to == 1 && p->h.packet_type == ARB_PT_RESPONSE && p->h.credit_valid &&
           p->h.offset_b == 5;
}

TEST(channel_fails_when_a_member_never_answers)
{
    net_opts o;
    net_opts_default(&o);
    o.attempts = 2;
    net *n = net_new(&o);
    n->drop = drop_all_credits_5_to_1;
    i32_msg m;
    i32_msg_init(&m, 3, 40);
    set_msg_range(n, 0, 0, 10);
    net_start(n, 0, &m);
    net_run(n, 1000000);
    CHECK_EQ_I(arb_responder_error(n->r), ARB_ETIMEDOUT);
    arb_responder_failure f;
    arb_responder_get_failure(n->r, &f);
    CHECK_EQ_I(f.error, ARB_ETIMEDOUT);
    CHECK_EQ_I(f.end_wait, 0);
    CHECK_EQ_U(f.offset, 5);
    CHECK_EQ_U(f.index, 5);
    CHECK_EQ_U(f.attempts, 2);
    CHECK_EQ_U(f.n_missing, 1);
    CHECK_EQ_U(f.missing[0], 1u << 1); /* member 1 */
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(st.repair_credits, ARB_EP_REPAIR_TRIES_DEFAULT);
    /* the bound: two credits, then repair credits waiting at most the 50 ms
     * ceiling each */
    CHECK(n->t <= (uint64_t)ARB_EP_REPAIR_TRIES_DEFAULT * 50 * MS);
    /* a failed channel sends nothing and waits for nothing */
    CHECK_EQ_U(arb_responder_next_expiry(n->r), ARB_TIME_NEVER);
    int before = (int)n->qlen;
    arb_hdr e = mk_end(0, 0);
    arb_responder_recv(n->r, &e, NULL, 0, 0, n->t);
    CHECK_EQ_I((int)n->qlen, before);
    CHECK_EQ_I(arb_responder_start_message(n->r, 1, 0, NULL, NULL, n->t), ARB_ESTATE);
    i32_msg_free(&m, 3);
    net_free(n);
}

/*
 * Order-based detection by hand (R = 1, one tree, window 4): offset 2
 * commits before 1, so 1 is lost once 1's send time + 2's completion time
 * + the reordering window (a quarter of the smallest completion time) has
 * passed; it is credited again as attempt 1. Its attempt-0 aggregate then
 * arrives after all: it commits, the loss was spurious, and the window
 * doubles; attempt 1's aggregate is a duplicate.
 */
TEST(order_detection_and_reordering_window)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 1, &cap);
    c.ep.window = 4;
    c.ep.timeout_min = 100 * US;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    static int32_t res[8 * 4];
    CHECK_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0);
    register_all(r, 1, 0, 0, 0); /* credits 0..3 at t = 0 */
    uint8_t pl[16] = {0};
    arb_hdr m0 = mk_master(0, 0, 1, 1);
    arb_responder_recv(r, &m0, pl, 16, ARB_EP_FROM_SWITCH, 10 * US); /* min rtt 10 us */
    arb_hdr m2 = mk_master(0, 2, 1, 1);
    arb_responder_recv(r, &m2, pl, 16, ARB_EP_FROM_SWITCH, 12 * US);
    /* 1 is due at 0 + 12 us + 10 / 4 us */
    arb_time due = 12 * US + 10 * US / 4;
    CHECK_EQ_U(arb_responder_next_expiry(r), due);
    cap.n = 0;
    arb_responder_on_expiry(r, due - 1);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_order, 0);
    arb_responder_on_expiry(r, due);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_order, 1);
    CHECK_EQ_U(st.retries, 1);
    const cap_pkt *retry = cap_last(&cap, ARB_PT_RESPONSE);
    CHECK(retry != NULL);
    if (retry) {
        CHECK_EQ_U(retry->h.offset_b, 1);
        CHECK_EQ_U(retry->h.attempt, 1);
        CHECK_EQ_U(retry->h.repair, 0);
        /* result 0 rode credit 4 (sent at 10 us): nothing rode credit 1 */
        CHECK_EQ_U(retry->h.payload_valid, 0);
    }
    CHECK_EQ_U(st.reo_wnd, 10 * US / 4);
    /* attempt 0 of offset 1 arrives after all: it commits */
    arb_hdr m1 = mk_master(0, 1, 1, 1);
    arb_responder_recv(r, &m1, pl, 16, ARB_EP_FROM_SWITCH, 16 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.late_masters, 1);
    CHECK_EQ_U(st.spurious, 1);
    CHECK_EQ_U(st.commits, 3);
    CHECK_EQ_U(st.reo_wnd, 2 * (10 * US / 4)); /* the multiplier went to 2 */
    /* attempt 1's aggregate: a duplicate */
    m1.attempt = 1;
    arb_responder_recv(r, &m1, pl, 16, ARB_EP_FROM_SWITCH, 20 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.dup_masters, 1);
    CHECK_EQ_U(st.commits, 3);
    /* a master of an attempt never sent is stale */
    arb_hdr m3 = mk_master(0, 3, 1, 1);
    m3.attempt = 2;
    arb_responder_recv(r, &m3, pl, 16, ARB_EP_FROM_SWITCH, 21 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.stale, 1);
    CHECK_EQ_U(st.commits, 3);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

/*
 * The timer by hand (R = 1, window 1, floor 20 us): before any warm sample
 * it is the initial 1 ms; the first commit's sample is cold (its credit left
 * before any commit) and does not count; then samples of 300 us give srtt
 * 300 us and rttvar halving from 150 us, the timer srtt + 4 rttvar (above
 * the recent maximum plus rttvar); an unanswered credit is lost that long
 * after the tree's last commit, its retry half as long again later.
 */
TEST(timer_estimate)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 1, &cap);
    c.ep.window = 1;
    c.ep.timeout_min = 20 * US;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.rto, 1 * MS);
    static int32_t res[8 * 4];
    CHECK_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0);
    register_all(r, 1, 0, 0, 0);
    uint8_t pl[16] = {0};
    arb_time now = 0;
    for (uint32_t k = 0; k < 4; k++) {
        now += 300 * US;
        arb_hdr m = mk_master(0, k, 1, 1);
        arb_responder_recv(r, &m, pl, sizeof pl, ARB_EP_FROM_SWITCH, now);
        arb_responder_get_stats(r, &st);
        if (k == 0) CHECK_EQ_U(st.rto, 1 * MS); /* a cold sample */
    }
    /* warm samples of 300 us: srtt 300, rttvar 150 -> 112.5 -> 84.375 */
    arb_time rttvar = 150 * US;
    for (int i = 0; i < 2; i++)
        rttvar = (3 * rttvar) / 4;
    arb_time rto = 300 * US + 4 * rttvar;
    CHECK(rto > 300 * US + rttvar); /* srtt + 4 rttvar is the larger here */
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.rto, rto);
    /* credit 4 left at `now`, with the last commit: due now + rto */
    CHECK_EQ_U(arb_responder_next_expiry(r), now + rto);
    arb_responder_on_expiry(r, now + rto - 1);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_timer, 0);
    cap.n = 0;
    arb_responder_on_expiry(r, now + rto);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_timer, 1);
    CHECK_EQ_U(st.retries, 1);
    CHECK_EQ_U(cap_last(&cap, ARB_PT_RESPONSE)->h.attempt, 1);
    /* the retry: lost 1.5 rto after it left */
    arb_time t1 = now + rto;
    CHECK_EQ_U(arb_responder_next_expiry(r), t1 + rto + rto / 2);
    arb_responder_free(r);
    /* timers below a microsecond, or a floor above the ceiling, are refused */
    c.ep.timeout_min = ARB_EP_TIMER_MIN - 1;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.timeout_min = c.ep.timeout + 1;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.timeout_min = 20 * US;
    c.ep.timeout = ARB_EP_TIMER_MIN - 1;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.timeout = 1 * MS;
    c.ep.attempts = 0;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.attempts = ARB_ATTEMPT_MAX + 2;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.attempts = ARB_EP_ATTEMPTS_DEFAULT;
    /* backed-off waits: 1..64 ceilings */
    c.ep.backoff_max = 0;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.backoff_max = ARB_EP_BACKOFF_MAX_DEFAULT + 1;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.backoff_max = 1;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    arb_responder_free(r);
}

/* A ceiling below the loaded loop: the estimate is cut to the ceiling,
 * every timer loss proves spurious, and each doubles the multiplier past
 * the usual 4, up to 64: the timer climbs above the loop instead of
 * retrying every credit for ever. With a ceiling that cuts nothing, the
 * multiplier stops at 4. */
static void spurious_timer_losses(arb_time ceiling, int rounds, arb_time *rto_after,
                                  uint32_t *mult_after)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 1, &cap);
    c.ep.window = 1;
    c.ep.timeout_min = 20 * US;
    c.ep.timeout = ceiling;
    c.ep.order_detection = 0;
    arb_responder *r = NULL;
    if (arb_responder_new(&r, &c) != 0) return;
    static int32_t res[32 * 4];
    arb_responder_start_message(r, 0, sizeof res, NULL, res, 0);
    register_all(r, 1, 0, 0, 0);
    uint8_t pl[16] = {0};
    arb_time now = 0;
    for (uint32_t k = 0; k < 4; k++) { /* samples of 300 us: above a 40 us ceiling */
        now += 300 * US;
        arb_hdr m = mk_master(0, k, 1, 1);
        arb_responder_recv(r, &m, pl, sizeof pl, ARB_EP_FROM_SWITCH, now);
    }
    for (int j = 0; j < rounds; j++) {
        uint32_t k = 4 + (uint32_t)j;
        arb_time due = arb_responder_next_expiry(r);
        arb_responder_on_expiry(r, due); /* credit k lost by timer; attempt 1 goes out */
        now = due + 10 * US;
        arb_hdr m = mk_master(0, k, 1, 1); /* attempt 0 answers after all */
        arb_responder_recv(r, &m, pl, sizeof pl, ARB_EP_FROM_SWITCH, now);
        arb_responder_stats st;
        arb_responder_get_stats(r, &st);
        rto_after[j] = st.rto;
        mult_after[j] = st.rto_mult;
    }
    arb_responder_free(r);
}

TEST(ceiling_below_loaded_loop_backs_off)
{
    arb_time rto[8] = {0};
    uint32_t mult[8] = {0};
    spurious_timer_losses(40 * US, 8, rto, mult);
    uint32_t want = 1;
    for (int j = 0; j < 8; j++) {
        want = want * 2 > 64 ? 64 : want * 2;
        CHECK_EQ_U(mult[j], want);
        CHECK_EQ_U(rto[j], (arb_time)want * 40 * US); /* the ceiling, times the multiplier */
    }
    CHECK(rto[7] > 300 * US); /* 2.56 ms: above the loaded loop */
    /* a ceiling that cuts nothing: the multiplier stops at 4 */
    spurious_timer_losses(50 * MS, 3, rto, mult);
    CHECK_EQ_U(mult[0], 2);
    CHECK_EQ_U(mult[1], 4);
    CHECK_EQ_U(mult[2], 4);
}

TEST(lost_request_agg_timeout)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy_seed(drop_request_from_2, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(st.timeouts, 1);
    CHECK_EQ_U(st.repair_commits, 1);
    net_free(n);
    /* the default: found by order, retried in the network */
    n = run_lossy(drop_request_from_2, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(st.losses_order, 1);
    CHECK_EQ_U(st.retries, 1);
    CHECK_EQ_U(st.repair_commits, 0);
    CHECK(n->t < 100 * US);
    net_free(n);
}

TEST(end_retry)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy(drop_first_end_ack, &st, &bad);
    CHECK_EQ_I(bad, 0);
    arb_requester_stats qs;
    arb_requester_get_stats(n->q[2], &qs);
    CHECK_EQ_U(qs.ends, 2);
    CHECK_EQ_U(st.ends, 4);
    net_free(n);
}

TEST(register_ack_lost_credit_acknowledges)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy(drop_first_register_ack, &st, &bad);
    CHECK_EQ_I(bad, 0);
    arb_requester_stats qs;
    arb_requester_get_stats(n->q[0], &qs);
    CHECK_EQ_U(qs.registers, 1); /* the first credit stood for the ack */
    net_free(n);
}

/* Slot reallocated under a live context: the switch answers AGG_MISS. */
static int delay_member2_request_0(net *n, const net_pkt *p)
{
    (void)n;
    (void)p;
    return 0;
}

/* Member 2's request for offset 0 reaches the switch after the slot was
 * reused (emulated by changing the slot's owner once credit 0 went down):
 * the switch answers AGG_MISS, and the offset is credited again in the
 * network (default) or repaired in bypass (the original recovery); no timer
 * either way. */
static void agg_miss_run(int seed)
{
    net_opts o;
    net_opts_default(&o);
    o.seed = seed;
    net *n = net_new(&o);
    n->drop = delay_member2_request_0;
    i32_msg m;
    i32_msg_init(&m, 3, 40);
    set_msg_range(n, 0, 0, 10);
    net_start(n, 0, &m);
    /* run until credit 0 went down, then steal its slot */
    for (int i = 0; i < 20 && n->sw_next == 0; i++)
        net_run(n, 1);
    n->sw[0].k = 0x777;
    net_run(n, 1000000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(i32_check(&m, 3), 0);
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    /* each member's request met the stolen slot: the first AGG_MISS gives
     * the attempt up, the other two are stale */
    CHECK_EQ_U(st.agg_miss, 1);
    CHECK_EQ_U(st.stale, 2);
    CHECK_EQ_U(st.losses_timer, 0);
    CHECK_EQ_U(st.repair_commits, seed ? 1 : 0);
    CHECK_EQ_U(st.retries, seed ? 0 : 1);
    CHECK(n->t < 1 * MS);
    i32_msg_free(&m, 3);
    net_free(n);
}

TEST(agg_miss_through_switch)
{
    agg_miss_run(0);
    agg_miss_run(1);
}

static int drop_random(net *n, const net_pkt *p)
{
    (void)p;
    return arb_rng_double(&n->loss_rng) < n->loss;
}

/*
 * `msgs` messages back to back with random loss: the responder starts one
 * ahead; each requester starts the next message as soon as its output is
 * complete (its END may still be waiting for the ack).
 */
static void run_pipelined(int kind, int header_only, double loss, uint64_t seed, int msgs)
{
    net_opts o;
    net_opts_default(&o);
    o.R = 4;
    o.kind = (arb_ep_kind)kind;
    o.header_only = header_only;
    o.window = 5;
    o.subchannels = 2;
    if (!ep_pull(kind)) o.op = ARB_OP_NOP;
    net *n = net_new(&o);
    n->drop = drop_random;
    n->loss = loss;
    arb_rng_seed(&n->loss_rng, seed);
    size_t elems = kind == ARB_EP_BARRIER ? 0 : 45; /* 12 packets */
    uint64_t bytes = elems * 4;
    i32_msg m;
    i32_msg_init(&m, 4, elems);
    int rs = 0, qs[NET_MAXR] = {0};
    long ev = 0;
    for (; ev < 2000000; ev++) {
        while (rs < msgs) {
            const void *own =
                kind == ARB_EP_PULL_COMPLETION || kind == ARB_EP_PULL_RESULT || kind == ARB_EP_PUSH
                    ? m.in[4]
                    : NULL;
            if (arb_responder_start_message(n->r, (uint8_t)rs, bytes, own, m.out[4], n->t) != 0)
                break;
            set_msg_range(n, (uint8_t)rs, (uint32_t)(rs * (kind == ARB_EP_BARRIER ? 1 : 12)),
                          kind == ARB_EP_BARRIER ? 1 : 12);
            rs++;
        }
        for (uint32_t j = 0; j < 4; j++) {
            if (qs[j] >= msgs) continue;
            arb_requester_progress qp;
            arb_requester_get_progress(n->q[j], &qp);
            if (qs[j] > 0 && !qp.complete) continue;
            const void *in = ep_pull(kind) ? m.in[j] : NULL;
            if (arb_requester_start_message(n->q[j], (uint8_t)qs[j], bytes, in, m.out[j], n->t) ==
                0)
                qs[j]++;
        }
        if (net_run(n, 1) == 0) break;
    }
    int all = rs == msgs;
    for (uint32_t j = 0; j < 4; j++)
        all &= qs[j] == msgs;
    CHECK(all);
    CHECK(net_all_done(n));
    CHECK_EQ_U(arb_responder_closed(n->r), (uint64_t)msgs);
    CHECK_EQ_I(n->invalid, 0);
    CHECK_EQ_I(n->foreign_ride, 0);
    if (!header_only && kind == ARB_EP_PULL_RESULT) CHECK_EQ_I(i32_check(&m, 4), 0);
    if (!header_only && kind == ARB_EP_PULL_COMPLETION)
        for (size_t e = 0; e < elems; e++)
            CHECK_EQ_I(m.out[4][e], i32_expect(4, e));
    if (!header_only && kind == ARB_EP_PUSH)
        for (uint32_t j = 0; j < 4; j++)
            CHECK(memcmp(m.out[j], m.in[4], bytes) == 0);
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(st.commits, (uint64_t)msgs * (kind == ARB_EP_BARRIER ? 1 : 12));
    if (loss > 0) CHECK(n->dropped > 0);
    if (getenv("EP_VERBOSE"))
        printf("  kind %d ho %d: dropped %llu repairs %llu tail_replays %llu timeouts %llu t=%.1f "
               "ms\n",
               kind, header_only, (unsigned long long)n->dropped,
               (unsigned long long)st.repair_commits, (unsigned long long)st.tail_replays,
               (unsigned long long)st.timeouts, (double)n->t / MS);
    if (TEST_FAILING()) {
        printf("  kind %d header_only %d loss %.2f seed %llu: t=%llu ev=%ld\n", kind, header_only,
               loss, (unsigned long long)seed, (unsigned long long)n->t, ev);
        arb_responder_progress rp;
        arb_responder_get_progress(n->r, &rp);
        printf("  responder: phase %d msg %u committed %u/%u ended %u closed %llu err %d\n",
               rp.phase, rp.msg_id, rp.committed, rp.offsets, rp.ended,
               (unsigned long long)rp.closed, arb_responder_error(n->r));
        for (uint32_t j = 0; j < 4; j++) {
            arb_requester_progress qp;
            arb_requester_get_progress(n->q[j], &qp);
            printf("  requester %u: phase %d msg %u results %u/%u err %d\n", j, qp.phase, qp.msg_id,
                   qp.results, qp.offsets, arb_requester_error(n->q[j]));
        }
    }
    i32_msg_free(&m, 4);
    net_free(n);
}

TEST(pipelined_messages_no_loss)
{
    for (int kind = 0; kind < ARB_EP_KIND_COUNT; kind++)
        for (int ho = 0; ho < 2; ho++)
            run_pipelined(kind, ho, 0.0, 1, 6);
}

TEST(pipelined_messages_random_loss)
{
    for (int kind = 0; kind < ARB_EP_KIND_COUNT && !TEST_FAILING(); kind++)
        for (int ho = 0; ho < 2; ho++)
            for (uint64_t seed = 1; seed <= 4; seed++)
                run_pipelined(kind, ho, 0.05, seed, 5);
}

/* ------------------------------------------------------------------ */
/* Wraps                                                                */
/* ------------------------------------------------------------------ */

TEST(message_id_wrap)
{
    net_opts o;
    net_opts_default(&o);
    o.R = 2;
    o.first_msg = 250;
    net *n = net_new(&o);
    i32_msg m;
    i32_msg_init(&m, 2, 10);
    uint32_t start = 0;
    for (int k = 0; k < 300; k++) {
        uint8_t id = (uint8_t)(250 + k);
        for (uint32_t j = 0; j <= 2; j++)
            memset(m.out[j], 0, 40);
        set_msg_range(n, id, start, 3);
        net_start(n, id, &m);
        net_run(n, 100000);
        start += 3;
        if (!net_all_done(n) || i32_check(&m, 2) != 0) {
            CHECK(!"message failed");
            break;
        }
    }
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(st.messages, 300);
    CHECK_EQ_I(n->invalid, 0);
    CHECK_EQ_I(n->foreign_ride, 0);
    CHECK_EQ_I(arb_responder_start_message(n->r, 0, 40, m.in[2], m.out[2], n->t), ARB_EINVAL);
    i32_msg_free(&m, 2);
    net_free(n);
}

TEST(offset_wrap_24bit)
{
    net_opts o;
    net_opts_default(&o);
    o.first_seq = 0xFFFFFA;
    o.subchannels = 3;
    net *n = net_new(&o);
    i32_msg m;
    i32_msg_init(&m, 3, 48); /* 12 packets: 0xFFFFFA .. 5 */
    set_msg_range(n, 0, 0xFFFFFA, 12);
    net_start(n, 0, &m);
    net_run(n, 100000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(i32_check(&m, 3), 0);
    CHECK_EQ_I(n->invalid, 0);
    arb_responder_progress pr;
    arb_responder_get_progress(n->r, &pr);
    CHECK_EQ_U(pr.start_seq, 6);
    /* a second message after the wrap, with a loss inside it */
    n->drop = drop_credit_to_1;
    n->drop_k = 9; /* credit 9 carries result 5 */
    for (uint32_t j = 0; j <= 3; j++)
        memset(m.out[j], 0, 48 * 4);
    set_msg_range(n, 1, 6, 12);
    net_start(n, 1, &m);
    net_run(n, 100000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(i32_check(&m, 3), 0);
    CHECK_EQ_I(n->drop_state, 1);
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(st.retries, 1); /* credited again in the network, across the wrap */
    CHECK_EQ_U(st.repair_commits, 0);
    i32_msg_free(&m, 3);
    net_free(n);
}

/* ------------------------------------------------------------------ */
/* Gates and limits                                                     */
/* ------------------------------------------------------------------ */

TEST(window_and_rate_gate)
{
    arb_cc *cc = NULL;
    arb_cc_config cfg;
    arb_cc_config_default(&cfg);
    cfg.window = 3;
    cfg.spacing = 1 * US; /* below the 3 us loop: the window binds too */
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_FIXED, &cfg), 0);
    net_opts o;
    net_opts_default(&o);
    o.cc = cc;
    o.window = 1000; /* ignored with a controller */
    net *n = net_new(&o);
    i32_msg m;
    i32_msg_init(&m, 3, 200);
    set_msg_range(n, 0, 0, 50);
    net_start(n, 0, &m);
    net_run(n, 1000000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(i32_check(&m, 3), 0);
    CHECK(n->max_outstanding <= 3);
    CHECK_EQ_U(n->max_outstanding, 3);
    CHECK(n->min_credit_gap >= 1 * US);
    arb_cc_stats cs;
    arb_cc_get_stats(cc, &cs);
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(cs.samples, 50 - st.early); /* an early first credit is no sample */
    CHECK(st.peak_outstanding <= 3);
    i32_msg_free(&m, 3);
    net_free(n);
    arb_cc_free(cc);
}

/* Hand-driven responder with R = 1: every credit it sends is captured. */
static arb_responder *hand_responder(capture *cap, uint32_t window, uint32_t ring, int32_t **bufs,
                                     uint64_t bytes)
{
    arb_responder_config c;
    rsp_cfg(&c, 1, cap);
    seed_recovery(&c); /* the bypass repair's budget and the ring, alone */
    c.ep.window = window;
    c.ring = ring;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    bufs[0] = calloc(bytes / 4 + 1, 4);
    bufs[1] = calloc(bytes / 4 + 1, 4);
    CHECK_EQ_I(arb_responder_start_message(r, 0, bytes, bufs[0], bufs[1], 0), 0);
    register_all(r, 1, 0, 0, 0);
    return r;
}

TEST(repair_budget_cap)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    int32_t *bufs[2];
    arb_responder *r = hand_responder(&cap, 40, 0, bufs, 100 * 16);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 40);
    /* every credit times out at once */
    CHECK_EQ_U(arb_responder_next_expiry(r), 50 * MS);
    cap.n = 0;
    arb_responder_on_expiry(r, 50 * MS);
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.repairs, 40);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 1), 16);
    /* outside the window: 40 fresh credits went out as well */
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 40);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.peak_repairs, 16);
    CHECK_EQ_U(st.timeouts, 40);
    /* completing one repair frees one repair credit for the next waiting offset */
    cap.n = 0;
    uint8_t pay[16] = {0};
    arb_hdr h = mk_repair_req(0, 0, 1);
    arb_responder_recv(r, &h, pay, 16, 0, 50 * MS + 1);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 1), 1);
    const cap_pkt *p = NULL;
    for (int i = 0; i < cap.n; i++)
        if (cap.p[i].h.repair) p = &cap.p[i];
    CHECK(p != NULL);
    if (p) CHECK_EQ_U(p->h.offset_b, 16);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
    free(bufs[0]);
    free(bufs[1]);
}

TEST(ring_limit)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    int32_t *bufs[2];
    arb_responder *r = hand_responder(&cap, 4, 0, bufs, 100 * 16); /* ring 16 */
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 4);
    uint8_t pay[16] = {0};
    /* offset 0 goes into repair and stays there */
    arb_hdr miss = mk(ARB_PT_AGG_MISS, 0, 0, 0);
    arb_responder_recv(r, &miss, NULL, 0, ARB_EP_FROM_SWITCH, 1);
    /* commit everything else as it is credited */
    for (uint32_t k = 1; k < 40; k++) {
        arb_hdr h = mk_master(0, k, 1, 1);
        arb_responder_recv(r, &h, pay, 16, ARB_EP_FROM_SWITCH, 2);
    }
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.issued, 16); /* the ring spans 4 x window from offset 0 */
    CHECK_EQ_U(pr.committed, 15);
    CHECK_EQ_U(pr.outstanding, 0);
    /* the repair completes: credit issue resumes */
    arb_hdr rq = mk_repair_req(0, 0, 1);
    arb_responder_recv(r, &rq, pay, 16, 0, 3);
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.committed, 16);
    CHECK_EQ_U(pr.issued, 20);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
    free(bufs[0]);
    free(bufs[1]);
}

/* The ring starts small and doubles when the offsets in play fill it, up
 * to ring_factor x the window: entries moved by a growth keep their state
 * (the repair still in progress completes, every offset commits once). */
TEST(ring_grows_with_offsets_in_play)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    int32_t *bufs[2];
    enum { W = 400, N = 3000 };
    arb_responder *r = hand_responder(&cap, W, 0, bufs, (uint64_t)N * 16);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK(st.ring < 4 * W); /* not the whole 4 x window at once */
    uint8_t pay[16] = {0};
    arb_hdr miss = mk(ARB_PT_AGG_MISS, 0, 0, 0); /* offset 0 stays in repair */
    arb_responder_recv(r, &miss, NULL, 0, ARB_EP_FROM_SWITCH, 1);
    for (uint32_t k = 1; k < N; k++) {
        cap.n = 0;
        arb_hdr h = mk_master(0, k, 1, 1);
        arb_responder_recv(r, &h, pay, 16, ARB_EP_FROM_SWITCH, 2);
    }
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.issued, 4 * W); /* the ring spans 4 x window from offset 0 */
    CHECK_EQ_U(pr.committed, 4 * W - 1);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.ring, 4 * W);
    CHECK(st.ring_grows >= 1);
    /* the repair completes; the rest is credited and committed */
    arb_hdr rq = mk_repair_req(0, 0, 1);
    arb_responder_recv(r, &rq, pay, 16, 0, 3);
    for (uint32_t k = 4 * W; k < N; k++) {
        cap.n = 0;
        arb_hdr h = mk_master(0, k, 1, 1);
        arb_responder_recv(r, &h, pay, 16, ARB_EP_FROM_SWITCH, 4);
    }
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.committed, N);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.commits, N);
    arb_responder_free(r);
    free(bufs[0]);
    free(bufs[1]);
}

/* ------------------------------------------------------------------ */
/* Responder, hand-made                                                 */
/* ------------------------------------------------------------------ */

TEST(responder_config_errors)
{
    capture cap;
    arb_responder_config c;
    arb_responder *r = NULL;
    rsp_cfg(&c, 3, &cap);
    REQUIRE_EQ_I(arb_responder_new(NULL, &c), ARB_EINVAL);
    REQUIRE_EQ_I(arb_responder_new(&r, NULL), ARB_EINVAL);
    c.members = 0;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.members = 257;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    c.ep.payload = 18; /* not whole i32 */
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    c.send = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    c.op = ARB_OP_NOP; /* pull needs an operator */
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    c.ep.timeout = 0;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    c.subchannels = 0;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    CHECK_EQ_I(arb_responder_start_message(r, 1, 16, NULL, NULL, 0), ARB_EINVAL); /* id */
    CHECK_EQ_I(arb_responder_start_message(r, 0, 15, NULL, NULL, 0), ARB_EINVAL); /* elems */
    CHECK_EQ_I(arb_responder_start_message(r, 0, 16, NULL, NULL, 0), ARB_EINVAL); /* no buf */
    int32_t buf[8];
    CHECK_EQ_I(arb_responder_start_message(r, 0, 16, NULL, buf, 0), 0);
    CHECK_EQ_I(arb_responder_start_message(r, 1, 16, NULL, buf, 0), 0); /* one ahead */
    CHECK_EQ_I(arb_responder_start_message(r, 2, 16, NULL, buf, 0), ARB_ESTATE);
    arb_hdr h = mk_register(0, 0);
    CHECK_EQ_I(arb_responder_recv(NULL, &h, NULL, 0, 0, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_responder_recv(r, NULL, NULL, 0, 0, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_responder_recv(r, &h, NULL, 4, 0, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_responder_on_expiry(NULL, 0), ARB_EINVAL);
    CHECK_STR(arb_ep_kind_name(ARB_EP_PUSH), "push");
    CHECK(arb_ep_kind_name(9) == NULL);
    arb_responder_free(r);
    arb_responder_free(NULL);
}

TEST(registration)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 3, &cap);
    c.first_seq = 100;
    c.ep.early = 1;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    /* REGISTERs before the local call are acknowledged and remembered */
    arb_hdr h = mk_register(0, 100);
    arb_responder_recv(r, &h, NULL, 0, 0, 0);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(cap.p[0].h.packet_type, ARB_PT_REGISTER_ACK);
    CHECK_EQ_U(cap.p[0].dst.kind, ARB_EP_DST_MEMBER);
    CHECK_EQ_U(cap.p[0].dst.member, 0);
    CHECK_EQ_U(cap.p[0].h.offset_a, 100);
    arb_responder_recv(r, &h, NULL, 0, 0, 0); /* a retry: ACKed again, counted once */
    CHECK_EQ_I(cap.n, 2);
    /* a non-member: dropped and counted, no ack */
    arb_responder_recv(r, &h, NULL, 0, ARB_EP_NOT_MEMBER, 0);
    arb_responder_recv(r, &h, NULL, 0, 3, 0);
    arb_responder_recv(r, &h, NULL, 0, ARB_EP_FROM_SWITCH, 0);
    CHECK_EQ_I(cap.n, 2);
    /* a REGISTER that disagrees on start_seq: dropped, no ack */
    arb_hdr bad = mk_register(0, 101);
    arb_responder_recv(r, &bad, NULL, 0, 1, 0);
    bad = mk_register(7, 100); /* a message that is not expected */
    arb_responder_recv(r, &bad, NULL, 0, 1, 0);
    CHECK_EQ_I(cap.n, 2);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.not_member, 3);
    CHECK_EQ_U(st.bad_registers, 2);
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.registered, 1);
    CHECK_EQ_U(pr.phase, ARB_RSP_IDLE);
    int32_t buf[8];
    CHECK_EQ_I(arb_responder_start_message(r, 0, 32, NULL, buf, 0), 0);
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.phase, ARB_RSP_REGISTER);
    /* a message of two offsets: nothing before registration, early
     * credits or not (ep.early credits a message of one offset) */
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), 0);
    /* message 1 may register ahead once message 0 is started locally */
    h = mk_register(1, 102);
    arb_responder_recv(r, &h, NULL, 0, 2, 0);
    CHECK_EQ_U(cap_last(&cap, ARB_PT_REGISTER_ACK)->h.message_id, 1);
    h = mk_register(0, 100);
    arb_responder_recv(r, &h, NULL, 0, 1, 0);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), 0);
    CHECK_EQ_U(arb_responder_next_expiry(r), ARB_TIME_NEVER);
    arb_responder_recv(r, &h, NULL, 0, 2, 5);
    /* complete: two credits (two packets) go out */
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 2);
    const cap_pkt *cr = cap_last(&cap, ARB_PT_RESPONSE);
    CHECK_EQ_U(cr->h.offset_b, 101);
    CHECK_EQ_U(cr->dst.kind, ARB_EP_DST_GROUP);
    CHECK(arb_responder_next_expiry(r) != ARB_TIME_NEVER);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.early, 0);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

/* Without early credits (ep.early = 0) no credit goes out before every
 * member has registered; with them, a pull message's first offset (and
 * its twin) does, but nothing of it commits before registration: an
 * aggregate that comes first is dropped and counted, and the offset is
 * credited again by its timer once registration is complete. */
TEST(responder_early_credit_commits_after_registration)
{
    for (int early = 0; early <= 1; early++) {
        static capture cap;
        memset(&cap, 0, sizeof cap);
        arb_responder_config c;
        rsp_cfg(&c, 2, &cap);
        c.ep.early = early;
        arb_responder *r = NULL;
        REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
        int32_t own[4] = {1, 2, 3, 4}, res[4] = {0};
        CHECK_EQ_I(arb_responder_start_message(r, 0, 16, own, res, 0), 0); /* one offset */
        /* one offset: the credit and its twin, or nothing */
        CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), early ? 2 : 0);
        int32_t agg[4] = {10, 20, 30, 40};
        arb_hdr m = mk_master(0, 0, 2, 1);
        arb_responder_recv(r, &m, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
        arb_responder_stats st;
        arb_responder_get_stats(r, &st);
        CHECK_EQ_U(st.commits, 0);
        CHECK_EQ_U(st.early_masters, (uint64_t)early);
        register_all(r, 2, 0, 0, 20);
        CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), 2); /* early: no new credit */
        /* the timer runs from registration, not from the early credit */
        arb_time t = arb_responder_next_expiry(r);
        CHECK(t != ARB_TIME_NEVER && t > 20);
        /* the aggregate of the attempt in flight now commits */
        m = mk_master(0, 0, 2, 1);
        arb_responder_recv(r, &m, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 30);
        arb_responder_get_stats(r, &st);
        CHECK_EQ_U(st.commits, 1);
        CHECK_EQ_I(res[0], 11);
        CHECK_EQ_I(res[3], 44);
        /* an early credit's loop includes the members' late start: no sample */
        CHECK_EQ_U(st.samples, early ? 0u : 1u);
        CHECK_EQ_U(st.early, (uint64_t)early);
        CHECK_EQ_I(cap.invalid, 0);
        arb_responder_free(r);
    }
}

/* A credit of a message not started yet (the responder's first credit
 * before registration) is held by the requester and answered when the
 * message starts, after its REGISTER; a credit of another message is
 * not held. */
TEST(requester_holds_early_credit)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_requester_config c;
    req_cfg(&c, 0, &cap);
    c.ep.header_only = 1;
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    arb_hdr c0 = mk_credit(0, 0);
    CHECK_EQ_I(arb_requester_recv(q, &c0, NULL, 0, 0, 1), 0);
    arb_hdr other = mk_credit(5, 0); /* not the next message */
    CHECK_EQ_I(arb_requester_recv(q, &other, NULL, 0, 0, 1), 0);
    CHECK_EQ_I(cap.n, 0);
    arb_requester_stats st;
    arb_requester_get_stats(q, &st);
    CHECK_EQ_U(st.held, 1);
    CHECK_EQ_U(st.stale, 1);
    CHECK_EQ_I(arb_requester_start_message(q, 0, 32, NULL, NULL, 2), 0); /* 2 packets */
    /* its REGISTER first, then the answer to the held credit */
    REQUIRE(cap.n >= 2);
    CHECK_EQ_U(cap.p[0].h.packet_type, ARB_PT_REGISTER);
    CHECK_EQ_U(cap.p[cap.n - 1].h.packet_type, ARB_PT_DATA_REQUEST);
    CHECK_EQ_U(cap.p[cap.n - 1].h.offset_a, 0);
    arb_requester_get_stats(q, &st);
    CHECK_EQ_U(st.requests, 1);
    /* the REGISTER is still retried: the credit came before registration */
    CHECK(arb_requester_next_expiry(q) != ARB_TIME_NEVER);
    arb_hdr ack = mk(ARB_PT_REGISTER_ACK, 0, 0, 0);
    ack.repair = 1;
    CHECK_EQ_I(arb_requester_recv(q, &ack, NULL, 0, 0, 3), 0);
    CHECK_EQ_U(arb_requester_next_expiry(q), ARB_TIME_NEVER);
    CHECK_EQ_I(cap.invalid, 0);
    arb_requester_free(q);
}

/* Pull-result with R = 2, window 2, 4 packets: the whole table of rides
 * (the original recovery: offset 0 committing after 1 is not a loss). */
TEST(responder_commit_rides_tails)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    seed_recovery(&c);
    c.ep.window = 2;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    int32_t own[16], res[16];
    for (int e = 0; e < 16; e++)
        own[e] = 100 * e;
    CHECK_EQ_I(arb_responder_start_message(r, 0, 64, own, res, 0), 0);
    register_all(r, 2, 0, 0, 0);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 2);
    const cap_pkt *c1 = cap_last(&cap, ARB_PT_RESPONSE);
    CHECK_EQ_U(c1->h.payload_valid, 0); /* nothing to ride yet */
    CHECK_EQ_U(c1->h.payload_kind, ARB_PK_DATA);
    CHECK_EQ_U(c1->h.credit_valid, 1);
    int32_t agg[4] = {1, 2, 3, 4};
    /* a master with the wrong count is dropped */
    arb_hdr h = mk_master(0, 1, 1, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
    /* with the wrong length */
    h = mk_master(0, 1, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 8, ARB_EP_FROM_SWITCH, 10);
    /* with agg_depth > 0 */
    arb_hdr deep = mk_master(0, 1, 2, 1);
    deep.agg_depth = 1;
    deep.fanin[0] = 2;
    arb_responder_recv(r, &deep, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
    /* an offset never credited */
    h = mk_master(0, 3, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.count_mismatch, 1);
    CHECK_EQ_U(st.bad_length, 1);
    CHECK_EQ_U(st.unexpected, 1);
    CHECK_EQ_U(st.stale, 1);
    CHECK_EQ_U(st.commits, 0);
    /* offset 1 commits first (out of order): the next credit carries it */
    cap.n = 0;
    h = mk_master(0, 1, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(cap.p[0].h.offset_b, 2);
    CHECK_EQ_U(cap.p[0].h.offset_a, 1);
    CHECK_EQ_U(cap.p[0].h.payload_valid, 1);
    CHECK_EQ_U(cap.p[0].len, 16);
    int32_t got[4];
    memcpy(got, cap.p[0].data, 16);
    CHECK_EQ_I(got[0], 1 + 400);
    CHECK_EQ_I(got[3], 4 + 700);
    CHECK_EQ_I(res[4], 401);
    /* a duplicate master: counted, nothing sent */
    cap.n = 0;
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 11);
    CHECK_EQ_I(cap.n, 0);
    /* offset 0 commits: credit 3 carries result 0 */
    h = mk_master(0, 0, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 12);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(cap.p[0].h.offset_b, 3);
    CHECK_EQ_U(cap.p[0].h.offset_a, 0);
    /* 2 and 3 commit: no credit left, results 2 and 3 are tails */
    cap.n = 0;
    h = mk_master(0, 3, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 13);
    h = mk_master(0, 2, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 14);
    CHECK_EQ_I(cap.n, 2);
    CHECK_EQ_U(cap.p[0].h.credit_valid, 0);
    CHECK_EQ_U(cap.p[0].h.offset_a, 3);
    CHECK_EQ_U(cap.p[0].h.offset_b, 0);
    CHECK_EQ_U(cap.p[1].h.offset_a, 2);
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.phase, ARB_RSP_DRAIN);
    CHECK_EQ_U(pr.committed, 4);
    /* END from a non-member, then from both members */
    cap.n = 0;
    arb_hdr e = mk_end(0, 0);
    arb_responder_recv(r, &e, NULL, 0, ARB_EP_NOT_MEMBER, 15);
    CHECK_EQ_I(cap.n, 0);
    /* END wait expires with both members missing: each of the two tails is
     * replayed once down the tree (a tail lost above both), not once a
     * member */
    CHECK_EQ_U(arb_responder_next_expiry(r), 14 + 50 * MS);
    arb_responder_on_expiry(r, 14 + 50 * MS);
    CHECK_EQ_I(cap.n, 2);
    CHECK_EQ_U(cap.p[0].h.repair, 1);
    CHECK_EQ_U(cap.p[0].h.payload_kind, ARB_PK_REPLAY);
    CHECK_EQ_U(cap.p[0].dst.kind, ARB_EP_DST_GROUP);
    CHECK_EQ_U(cap.p[1].dst.kind, ARB_EP_DST_GROUP);
    cap.n = 0;
    arb_responder_recv(r, &e, NULL, 0, 0, 20 + 50 * MS);
    CHECK_EQ_U(cap.p[0].h.packet_type, ARB_PT_END_ACK);
    /* the timer (fixed here, order detection off) 50 ms after the replay */
    arb_time due = arb_responder_next_expiry(r);
    CHECK_EQ_U(due, 14 + 100 * MS);
    arb_responder_on_expiry(r, due); /* only member 1 is missing now: to it alone */
    CHECK_EQ_I(cap.n, 3);
    CHECK_EQ_U(cap.p[1].dst.kind, ARB_EP_DST_MEMBER);
    CHECK_EQ_U(cap.p[1].dst.member, 1);
    CHECK_EQ_U(cap.p[2].dst.member, 1);
    arb_responder_recv(r, &e, NULL, 0, 1, due + 1);
    CHECK(arb_responder_done(r));
    CHECK_EQ_U(arb_responder_closed(r), 1);
    /* a late END of the closed message is ACKed again */
    cap.n = 0;
    arb_responder_recv(r, &e, NULL, 0, 1, 22 + 100 * MS);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(cap.p[0].h.packet_type, ARB_PT_END_ACK);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.not_member, 1);
    CHECK_EQ_U(st.dup_masters, 1);
    CHECK_EQ_U(st.tails, 2);
    CHECK_EQ_U(st.tail_replays, 4);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

/* A responder of 4 members whose 4 offsets have all committed at 10 us,
 * every result a tail; the adaptive timers and order detection on. */
static arb_responder *drained_four(capture *cap, uint32_t repair_tries)
{
    arb_responder_config c;
    rsp_cfg(&c, 4, cap);
    c.ep.window = 4;
    c.ep.repair_tries = repair_tries;
    arb_responder *r = NULL;
    if (arb_responder_new(&r, &c) != 0) return NULL;
    /* the buffers outlive this call: the responder reads and writes them */
    static int32_t own[16], res[16];
    arb_responder_start_message(r, 0, 64, own, res, 0);
    register_all(r, 4, 0, 0, 0);
    int32_t agg[4] = {1, 2, 3, 4};
    for (uint32_t k = 0; k < 4; k++) {
        arb_hdr h = mk_master(0, k, 4, 1);
        arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10 * US);
    }
    return r;
}

/* Replays of one END-wait round: how many, and to whom (-1: the group). */
static int replays_of(const capture *cap, int from, int *to)
{
    int n = 0;
    *to = -2;
    for (int i = from; i < cap->n; i++) {
        if (cap->p[i].h.packet_type != ARB_PT_RESPONSE || !cap->p[i].h.repair) continue;
        n++;
        *to = cap->p[i].dst.kind == ARB_EP_DST_GROUP ? -1 : (int)cap->p[i].dst.member;
    }
    return n;
}

/* The END wait by order: a replay round goes down the tree once when
 * several members are missing, to the member alone when one is; a round
 * ends a reordering window after the slowest END it brought (each END
 * moves the deadline on), well before the round's timer. */
TEST(responder_end_rounds_by_order)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = drained_four(&cap, 8);
    REQUIRE(r != NULL);
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    REQUIRE_EQ_U(pr.phase, ARB_RSP_DRAIN);
    /* no END at all: the timer, then every tail once, to the group */
    arb_time t1 = arb_responder_next_expiry(r), wait0 = t1 - 10 * US;
    int to, from = cap.n;
    arb_responder_on_expiry(r, t1);
    CHECK_EQ_I(replays_of(&cap, from, &to), 4);
    CHECK_EQ_I(to, -1);
    /* three ENDs come back; each moves the deadline on */
    arb_hdr e = mk_end(0, 0);
    arb_responder_recv(r, &e, NULL, 0, 0, t1 + 2 * US);
    arb_time due_a = arb_responder_next_expiry(r);
    arb_responder_recv(r, &e, NULL, 0, 1, t1 + 3 * US);
    arb_responder_recv(r, &e, NULL, 0, 2, t1 + 4 * US);
    arb_time due_b = arb_responder_next_expiry(r);
    CHECK(due_b >= due_a);
    CHECK(due_b > t1 + 4 * US);
    /* the round's timer is twice the first wait after a replay */
    CHECK(due_b < t1 + 2 * wait0);
    from = cap.n;
    arb_responder_on_expiry(r, due_b);
    CHECK_EQ_I(replays_of(&cap, from, &to), 4); /* to member 3 alone */
    CHECK_EQ_I(to, 3);
    arb_responder_recv(r, &e, NULL, 0, 3, due_b + 3 * US);
    CHECK(arb_responder_done(r));
    CHECK_EQ_I(arb_responder_error(r), 0);
    arb_responder_free(r);
}

/* A round that brings an END is progress: members answering one a round
 * never fail the channel, however many rounds that takes; repair_tries
 * rounds in a row that bring none do, naming the member. */
TEST(responder_end_rounds_fail_on_silence_only)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = drained_four(&cap, 2);
    REQUIRE(r != NULL);
    arb_hdr e = mk_end(0, 0);
    arb_time t = arb_responder_next_expiry(r);
    for (int j = 0; j < 3; j++) { /* rounds 1..3: one END each */
        arb_responder_on_expiry(r, t);
        arb_responder_recv(r, &e, NULL, 0, j, t + 2 * US);
        t = arb_responder_next_expiry(r);
        CHECK_EQ_I(arb_responder_error(r), 0);
    }
    /* member 3 never answers: round 4 replays to it, then two silent
     * rounds (repair_tries) fail the channel */
    int rounds = 0;
    while (arb_responder_error(r) == 0 && rounds < 10) {
        arb_responder_on_expiry(r, t);
        t = arb_responder_next_expiry(r);
        rounds++;
    }
    CHECK_EQ_I(rounds, 3);
    CHECK_EQ_I(arb_responder_error(r), ARB_ETIMEDOUT);
    arb_responder_failure f;
    arb_responder_get_failure(r, &f);
    CHECK_EQ_U(f.end_wait, 1);
    CHECK_EQ_U(f.n_missing, 1);
    CHECK_EQ_U(f.missing[0], 1u << 3);
    arb_responder_free(r);
}

/* The first replay round ends after a loop: when its replay is lost as
 * well, the next goes once the larger of srtt and the slowest END's delay
 * after the last tail, plus a reordering window (at most srtt), has passed
 * with no END: at most twice that loop. The round after a silent one waits
 * for its timer, eight times it (twice the loop, doubled for the replay
 * and for the silent round). Before, the first round waited for its timer
 * too: half the next one's. */
TEST(responder_end_first_round_after_a_loop)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = drained_four(&cap, 8);
    REQUIRE(r != NULL);
    arb_hdr e = mk_end(0, 0);
    for (int j = 0; j < 3; j++) /* members 0..2 END soon after the tails */
        arb_responder_recv(r, &e, NULL, 0, j, 10 * US + (arb_time)(j + 1) * US);
    arb_time t1 = arb_responder_next_expiry(r);
    int to, from = cap.n;
    arb_responder_on_expiry(r, t1); /* by order: member 3 alone */
    CHECK_EQ_I(replays_of(&cap, from, &to), 4);
    CHECK_EQ_I(to, 3);
    arb_time t2 = arb_responder_next_expiry(r);
    from = cap.n;
    arb_responder_on_expiry(r, t2); /* no END: member 3 again */
    CHECK_EQ_I(replays_of(&cap, from, &to), 4);
    CHECK_EQ_I(to, 3);
    arb_time t3 = arb_responder_next_expiry(r);
    CHECK(t2 > t1);
    CHECK(t3 - t2 >= 4 * (t2 - t1));
    arb_responder_recv(r, &e, NULL, 0, 3, t2 + 2 * US);
    CHECK(arb_responder_done(r));
    CHECK_EQ_I(arb_responder_error(r), 0);
    arb_responder_free(r);
}

/* The latest credit of offset k in the capture from `from` on: its attempt,
 * or -1. */
static int credit_attempt(const capture *cap, int from, uint32_t k)
{
    int a = -1;
    for (int i = from; i < cap->n; i++)
        if (cap->p[i].h.packet_type == ARB_PT_RESPONSE && cap->p[i].h.credit_valid &&
            cap->p[i].h.offset_b == k)
            a = cap->p[i].h.attempt;
    return a;
}

/* The tail probe (RACK-TLP's PTO): the newest credit of a message's tail
 * is credited again twice the smoothed loop after it left, and so is each
 * probe's own credit, each waiting twice as long as the last, three
 * probes at most; the loss timer alone, which still holds the loaded
 * loop's maxima, would wait many loops. */
/* A responder of 2 members with tail probes on, a window of 4, and a
 * fixed loss timer of 10 ms, far above the loop; a message of `n` offsets
 * (the buffers static: the responder reads and writes them) whose first
 * `commit` offsets commit, 0-3 at 10 us and the rest at 20 us: a loop of
 * 10 us. */
static arb_responder *probing_two(capture *cap, uint32_t n, uint32_t commit)
{
    arb_responder_config c;
    rsp_cfg(&c, 2, cap);
    c.ep.window = 4;
    c.ep.tail_probe = 1;
    c.ep.timeout_min = 10 * US;
    c.ep.adaptive_timeout = 0;
    c.ep.timeout = 10 * MS;
    arb_responder *r = NULL;
    if (arb_responder_new(&r, &c) != 0) return NULL;
    static int32_t own[64], res[64];
    memset(own, 0, sizeof own);
    if (n > 16 || arb_responder_start_message(r, 0, 16ull * n, own, res, 0) != 0) {
        arb_responder_free(r);
        return NULL;
    }
    register_all(r, 2, 0, 0, 0);
    int32_t agg[4] = {1, 2, 3, 4};
    for (uint32_t k = 0; k < commit; k++) {
        arb_hdr h = mk_master(0, k, 2, 1);
        arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH,
                           k < 4 ? 10 * US : 20 * US);
    }
    return r;
}

TEST(responder_tail_probes_back_off)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    /* 8 offsets: 0-3 commit at 10 us (credits 4-7 leave then), 4-6 at
     * 20 us; 7, the tail's newest credit, is not answered */
    arb_responder *r = probing_two(&cap, 8, 7);
    REQUIRE(r != NULL);
    REQUIRE_EQ_I(credit_attempt(&cap, 0, 7), 0);
    arb_time sent = 10 * US, gap[4];
    for (int p = 0; p < 3; p++) {
        arb_time due = arb_responder_next_expiry(r);
        gap[p] = due - sent;
        int from = cap.n;
        arb_responder_on_expiry(r, due);
        CHECK_EQ_I(credit_attempt(&cap, from, 7), p + 1);
        sent = due;
    }
    CHECK(gap[0] >= 20 * US); /* twice the loop, at least */
    CHECK_EQ_U(gap[1], 2 * gap[0]);
    CHECK_EQ_U(gap[2], 4 * gap[0]);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.tail_probes, 3);
    /* three probes: the fourth credit waits for the loss timer */
    CHECK_EQ_U(arb_responder_next_expiry(r), sent + 10 * MS);
    arb_hdr h = mk_master(0, 7, 2, 1);
    h.attempt = 3;
    int32_t agg[4] = {1, 2, 3, 4};
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, sent + 5 * US);
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.committed, 8);
    arb_responder_free(r);
}

/* A window lost whole before the message's tail: no later credit commits,
 * so order shows nothing, and the loss timer (10 ms here) would stall the
 * channel. The newest credit still out is probed twice the loop after its
 * tree last committed; a probe's commit shows the rest of the window lost
 * by order. */
TEST(responder_probes_a_window_lost_whole)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    /* 16 offsets: 0-3 commit at 10 us, 4-7 at 20 us (credits 8-11 leave
     * then), and none of 8-11 is answered: the window is lost whole */
    arb_responder *r = probing_two(&cap, 16, 8);
    REQUIRE(r != NULL);
    int32_t agg[4] = {1, 2, 3, 4};
    REQUIRE_EQ_I(credit_attempt(&cap, 0, 11), 0);
    arb_time due = arb_responder_next_expiry(r);
    CHECK(due >= 40 * US);  /* twice the loop after the last commit, at least */
    CHECK(due <= 100 * US); /* not the loss timer */
    int from = cap.n;
    arb_responder_on_expiry(r, due);
    CHECK_EQ_I(credit_attempt(&cap, from, 11), 1); /* the newest, probed */
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK(st.tail_probes >= 1);
    CHECK_EQ_U(st.losses_timer, 0);
    /* the probes commit, and whatever of the window is still out is lost
     * by order: the window is credited again within loops, not 10 ms */
    for (uint32_t k = 8; k < 12; k++) {
        arb_hdr h = mk_master(0, k, 2, 1);
        h.attempt = (uint8_t)credit_attempt(&cap, from, k);
        if (credit_attempt(&cap, from, k) > 0)
            arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, due + 10 * US);
    }
    arb_time next = arb_responder_next_expiry(r);
    CHECK(next < due + MS);
    arb_responder_on_expiry(r, next);
    for (uint32_t k = 8; k < 12; k++)
        CHECK(credit_attempt(&cap, 0, k) >= 1);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_timer, 0);
    arb_responder_free(r);
}

/* A message that lives in its first window: 2 offsets, a window of 4, both
 * credited at 0 before anything commits, on a responder of 2 members with
 * tail probes on, the adaptive timer and a floor of 10 us. It never gets a
 * warm sample, so RTO_INITIAL (1 ms) would be its only timer. */
static arb_responder *one_window_two(capture *cap)
{
    arb_responder_config c;
    rsp_cfg(&c, 2, cap);
    c.ep.window = 4;
    c.ep.tail_probe = 1;
    c.ep.timeout_min = 10 * US;
    arb_responder *r = NULL;
    if (arb_responder_new(&r, &c) != 0) return NULL;
    static int32_t own[8], res[8];
    memset(own, 0, sizeof own);
    if (arb_responder_start_message(r, 0, sizeof own, own, res, 0) != 0) {
        arb_responder_free(r);
        return NULL;
    }
    register_all(r, 2, 0, 0, 0);
    return r;
}

/* Before any sample, its newest credit is probed twice the floor after it
 * left (four unloaded loops), not after the 1 ms initial timer; the probe
 * is no timer loss. */
TEST(responder_one_window_probes_before_a_sample)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = one_window_two(&cap);
    REQUIRE(r != NULL);
    REQUIRE_EQ_I(credit_attempt(&cap, 0, 1), 0);
    CHECK_EQ_U(arb_responder_next_expiry(r), 20 * US);
    int from = cap.n;
    arb_responder_on_expiry(r, 20 * US);
    CHECK_EQ_I(credit_attempt(&cap, from, 1), 1);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK(st.tail_probes >= 1);
    CHECK_EQ_U(st.losses_timer, 0);
    /* the probe's own credit is probed in turn, twice as late */
    CHECK_EQ_U(arb_responder_next_expiry(r), 20 * US + 40 * US);
    arb_responder_free(r);
}

/* Once its first offset commits (a cold sample S of 50 us), the timer is
 * the cold estimate, max(S + 4 S/2, S + S/2) = 3 S, not 1 ms; the probe
 * waits twice the smaller of the cold srtt and the floor after the newest
 * credit left: 20 us. A message of more than one window keeps the 1 ms
 * initial timer after a cold sample (its next window queues behind every
 * channel's first). */
TEST(responder_one_window_cold_timer)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = one_window_two(&cap);
    REQUIRE(r != NULL);
    int32_t agg[4] = {1, 2, 3, 4};
    arb_hdr h = mk_master(0, 0, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 15 * US);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.rto, 45 * US);
    CHECK_EQ_U(arb_responder_next_expiry(r), 20 * US);
    arb_responder_free(r);

    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    c.ep.window = 4;
    c.ep.tail_probe = 1;
    c.ep.timeout_min = 10 * US;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    static int32_t own[32], res[32];
    memset(own, 0, sizeof own);
    REQUIRE_EQ_I(arb_responder_start_message(r, 0, sizeof own, own, res, 0), 0);
    register_all(r, 2, 0, 0, 0);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 15 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.rto, 1 * MS);
    CHECK_EQ_U(st.tail_probes, 0);
    arb_responder_free(r);
}

/* Its END wait, before any END, is at least three of its slowest cold
 * loops after the last commit, not the floor: the tails queue behind every
 * other channel's on the members' links, as the requests did on the way
 * up, and a wait on the floor replayed every tail round after round. */
TEST(responder_one_window_end_wait)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = one_window_two(&cap);
    REQUIRE(r != NULL);
    int32_t agg[4] = {1, 2, 3, 4};
    for (uint32_t k = 0; k < 2; k++) {
        arb_hdr h = mk_master(0, k, 2, 1);
        arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, (40 + 10 * k) * US);
    }
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    REQUIRE_EQ_I(pr.phase, ARB_RSP_DRAIN);
    /* cold samples of 40 and 50 us: the slowest 50 us */
    CHECK_EQ_U(arb_responder_next_expiry(r), 50 * US + 3 * 50 * US);
    arb_responder_stats st;
    arb_responder_on_expiry(r, 50 * US + 3 * 50 * US - 1);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.tail_replays, 0);
    /* one END: the rest is waited for by order, as before */
    arb_hdr e = mk_end(0, 0);
    arb_responder_recv(r, &e, NULL, 0, 0, 60 * US);
    CHECK(arb_responder_next_expiry(r) < 50 * US + 3 * 50 * US);
    arb_responder_free(r);
}

/* The bypass repair (the original recovery: AGG_MISS sends an offset there at
 * once): the repair credit, repair requests (deduplicated, non-members
 * dropped), the commit by repair; and a late normal master, which commits
 * whichever path completes first. */
TEST(responder_repair_path)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    seed_recovery(&c);
    c.ep.window = 2;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    int32_t own[16] = {0}, res[16];
    CHECK_EQ_I(arb_responder_start_message(r, 0, 64, own, res, 0), 0);
    register_all(r, 2, 0, 0, 0);
    int32_t a[4] = {10, 20, 30, 40}, b[4] = {1, 2, 3, 4};
    /* commit 0 so that credit 2 carries result 0 */
    arb_hdr h = mk_master(0, 0, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)a, 16, ARB_EP_FROM_SWITCH, 1);
    /* AGG_MISS for 2: the repair credit replays result 0 */
    cap.n = 0;
    arb_hdr miss = mk(ARB_PT_AGG_MISS, 0, 2, 0);
    arb_responder_recv(r, &miss, NULL, 0, ARB_EP_FROM_SWITCH, 2);
    CHECK_EQ_I(cap.n, 2); /* the repair credit, and credit 3 (2 left the window) */
    const cap_pkt *rc = &cap.p[0];
    CHECK_EQ_U(rc->h.repair, 1);
    CHECK_EQ_U(rc->h.credit_valid, 1);
    CHECK_EQ_U(rc->h.offset_b, 2);
    CHECK_EQ_U(rc->h.offset_a, 0);
    CHECK_EQ_U(rc->h.payload_kind, ARB_PK_REPLAY);
    CHECK_EQ_U(rc->h.attempt, 0); /* a repair credit has no attempt */
    CHECK(memcmp(rc->data, a, 16) == 0);
    /* a second AGG_MISS is stale (no attempt in flight) */
    arb_responder_recv(r, &miss, NULL, 0, ARB_EP_FROM_SWITCH, 3);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.agg_miss, 1);
    CHECK_EQ_U(st.bypass, 1);
    CHECK_EQ_U(st.stale, 1);
    /* repair requests: non-member dropped, duplicate dropped */
    arb_hdr rq = mk_repair_req(0, 2, 1);
    arb_responder_recv(r, &rq, (uint8_t *)a, 16, ARB_EP_NOT_MEMBER, 4);
    arb_responder_recv(r, &rq, (uint8_t *)a, 16, 0, 4);
    arb_responder_recv(r, &rq, (uint8_t *)b, 16, 0, 4);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.not_member, 1);
    CHECK_EQ_U(st.dup_repairs, 1);
    CHECK_EQ_U(st.commits, 1);
    /* a repair request for an offset not in repair */
    arb_hdr rq3 = mk_repair_req(0, 3, 1);
    arb_responder_recv(r, &rq3, (uint8_t *)a, 16, 0, 4);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.stale, 2);
    arb_responder_recv(r, &rq, (uint8_t *)b, 16, 1, 5);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.commits, 2);
    CHECK_EQ_U(st.repair_commits, 1);
    CHECK_EQ_I(res[8], 11); /* 10 + 1 + own 0 */
    CHECK_EQ_I(res[11], 44);
    /* after commit, more repair requests are duplicates */
    arb_responder_recv(r, &rq, (uint8_t *)b, 16, 1, 6);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.dup_repairs, 2);
    CHECK_EQ_U(st.samples, 1); /* the repaired commit is no CC sample */
    /* offset 3: AGG_MISS, one repair answer, then its normal master after
     * all: it commits (exactly once), the repair is dropped */
    miss.offset_a = 3;
    arb_responder_recv(r, &miss, NULL, 0, ARB_EP_FROM_SWITCH, 7);
    arb_hdr rq4 = mk_repair_req(0, 3, 1);
    arb_responder_recv(r, &rq4, (uint8_t *)b, 16, 0, 7);
    h = mk_master(0, 3, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)a, 16, ARB_EP_FROM_SWITCH, 8);
    arb_responder_recv(r, &rq4, (uint8_t *)b, 16, 1, 9); /* late: a duplicate now */
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.late_masters, 1);
    CHECK_EQ_U(st.commits, 3);
    CHECK_EQ_U(st.repair_commits, 1);
    CHECK_EQ_I(res[12], 10); /* the master's sum, not the half repair */
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.repairs, 0);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

TEST(responder_timeout_of_repair_is_repeated)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    seed_recovery(&c);
    c.ep.window = 1;
    c.ep.timeout = 1 * MS;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    int32_t res[8];
    CHECK_EQ_I(arb_responder_start_message(r, 0, 32, NULL, res, 0), 0);
    register_all(r, 2, 0, 0, 0);
    CHECK_EQ_U(arb_responder_next_expiry(r), 1 * MS);
    arb_responder_on_expiry(r, 1 * MS - 1); /* early: nothing */
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.timeouts, 0);
    cap.n = 0;
    arb_responder_on_expiry(r, 1 * MS);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 1), 1);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 1); /* credit 1 took the window */
    /* at 2 ms offset 0's repair credit is repeated, to each of the two
     * members by itself (neither answered), and offset 1 times out into
     * its first repair credit, down the tree; from 3 ms each expiry
     * repeats both offsets' credits to both members */
    for (int i = 2; i <= 4; i++) {
        arb_responder_on_expiry(r, (arb_time)i * MS);
        CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 1), 4 * (i - 1));
    }
    int group = 0, unicast = 0;
    for (int k = 0; k < cap.n; k++) {
        if (!cap.p[k].h.repair) continue;
        if (cap.p[k].dst.kind == ARB_EP_DST_GROUP) group++;
        if (cap.p[k].dst.kind == ARB_EP_DST_MEMBER) unicast++;
    }
    CHECK_EQ_I(group, 2); /* the first repair credit of each offset */
    CHECK_EQ_I(unicast, 10);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.timeouts, 2); /* offsets 0 and 1 */
    CHECK(st.repair_repeats >= 2);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

/* A responder of R = 1 with two trees; the test plays the network: every
 * normal credit on a tree marked alive is answered (its master, of the
 * credit's attempt) `lat` after it left; credits on a dead tree vanish. */
typedef struct tree_play {
    capture cap;
    int seen;     /* cap entries handled */
    int alive[2]; /* trees that answer */
    arb_time lat; /* credit to master */
    arb_time due[CAP_MAX];
    int pending[CAP_MAX];
    int on_tree[2]; /* normal credits sent down each tree */
    int retries_on[2];
    int repair_unicast;  /* repair credits sent to the member by itself */
    arb_time repair_lat; /* repair credit to its answer (0: lat) */
    int drop_mod[2];     /* a live tree loses every drop_mod-th credit sent down it (0: none) */
    int drop_next[2];    /* ... and the next drop_next credits sent down it */
} tree_play;

static arb_responder *tree_responder(tree_play *tp, int dynamic, uint32_t dead_after)
{
    memset(tp, 0, sizeof *tp);
    tp->alive[0] = tp->alive[1] = 1;
    tp->lat = 20 * US;
    arb_responder_config c;
    rsp_cfg(&c, 1, &tp->cap);
    c.ep.window = 4;
    c.subchannels = 2;
    c.ep.dynamic_subchannels = dynamic;
    c.ep.timeout_min = 50 * US;
    c.ep.dead_after = dead_after;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    return r;
}

/* Deliver what is due by `now`, then note the credits sent since; the
 * member sends its END once everything committed. */
static void tree_step(tree_play *tp, arb_responder *r, arb_time now)
{
    static const int32_t pay[4] = {1, 2, 3, 4};
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    if (pr.phase == ARB_RSP_DRAIN) {
        arb_hdr e = mk_end(pr.msg_id, pr.start_seq);
        arb_responder_recv(r, &e, NULL, 0, 0, now);
    }
    for (int i = 0; i < tp->seen; i++) {
        if (!tp->pending[i] || tp->due[i] > now) continue;
        tp->pending[i] = 0;
        if (tp->cap.p[i].h.repair) { /* the member answers a repair credit straight back */
            arb_hdr q = mk_repair_req(0, tp->cap.p[i].h.offset_b, 1);
            arb_responder_recv(r, &q, (const uint8_t *)pay, 16, 0, tp->due[i]);
            continue;
        }
        arb_hdr m = mk_master(0, tp->cap.p[i].h.offset_b, 1, 1);
        m.attempt = tp->cap.p[i].h.attempt;
        arb_responder_recv(r, &m, (const uint8_t *)pay, 16, ARB_EP_FROM_SWITCH, tp->due[i]);
    }
    for (; tp->seen < tp->cap.n; tp->seen++) {
        const cap_pkt *p = &tp->cap.p[tp->seen];
        if (p->h.packet_type == ARB_PT_RESPONSE && p->h.credit_valid && p->h.repair &&
            p->dst.kind == ARB_EP_DST_MEMBER) { /* unicast: no tree to lose it */
            tp->repair_unicast++;
            tp->pending[tp->seen] = 1;
            tp->due[tp->seen] = now + (tp->repair_lat ? tp->repair_lat : tp->lat);
            continue;
        }
        if (p->h.packet_type != ARB_PT_RESPONSE || !p->h.credit_valid || p->h.repair) continue;
        uint32_t s = p->dst.subchannel;
        tp->on_tree[s]++;
        tp->retries_on[s] += p->h.attempt > 0;
        if (!tp->alive[s]) continue;
        if (tp->drop_next[s] > 0) {
            tp->drop_next[s]--;
            continue;
        }
        if (tp->drop_mod[s] && tp->on_tree[s] % tp->drop_mod[s] == 0) continue;
        tp->pending[tp->seen] = 1;
        tp->due[tp->seen] = now + tp->lat;
    }
}

/* Run from `from` to `to` in steps of `step`, serving expiries. */
static void tree_run(tree_play *tp, arb_responder *r, arb_time from, arb_time to, arb_time step)
{
    for (arb_time t = from; t <= to && tp->cap.n < CAP_MAX - 8; t += step) {
        tree_step(tp, r, t);
        if (arb_responder_next_expiry(r) <= t) arb_responder_on_expiry(r, t);
        tree_step(tp, r, t);
    }
}

/*
 * Tree health, dynamic selection. Both trees answer (100 us loops) until
 * tree 0 goes silent: its credits in flight are lost by timer (no later
 * credit of tree 0 commits), two silences make it dead, their retries and
 * every credit after go down tree 1, but for probes of tree 0 at a growing
 * interval. When tree 0 answers again, a probe commits and revives it.
 */
TEST(tree_dies_is_probed_and_revives)
{
    static tree_play tp;
    arb_responder *r = tree_responder(&tp, 1, 2);
    if (!r) return;
    static int32_t res[200 * 4];
    CHECK_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0);
    register_all(r, 1, 0, 0, 0);
    tp.lat = 100 * US;
    tree_step(&tp, r, 0);
    CHECK_EQ_I(tp.on_tree[0], 2); /* no sample yet: ties from k mod 2 */
    CHECK_EQ_I(tp.on_tree[1], 2);
    tree_run(&tp, r, 1 * US, 500 * US, 1 * US);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_timer + st.losses_order, 0);
    CHECK(tp.on_tree[0] > 2 && tp.on_tree[1] > 2);
    /* tree 0 goes silent */
    tp.alive[0] = 0;
    int sent0 = tp.on_tree[0];
    tree_run(&tp, r, 501 * US, 2500 * US, 1 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.deaths, 1);
    CHECK_EQ_U(st.dead_subchannels, 1);
    CHECK(st.losses_timer >= 2);
    CHECK_EQ_U(st.repair_commits, 0);
    CHECK(st.probes >= 1);
    /* after its death tree 0 saw only probes; retries went to tree 1 */
    CHECK(tp.on_tree[0] - sent0 <= 2 + (int)st.probes); /* at most its window, then probes */
    CHECK_EQ_I(tp.retries_on[0], 0);
    CHECK_EQ_I(arb_responder_error(r), 0);
    /* tree 0 comes back: the next probe commits and revives it */
    tp.alive[0] = 1;
    int before = tp.on_tree[0];
    tree_run(&tp, r, 2501 * US, 12 * MS, 1 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.revivals, 1);
    CHECK_EQ_U(st.dead_subchannels, 0);
    CHECK(tp.on_tree[0] > before + 2); /* used again after the revival */
    CHECK_EQ_U(st.commits, 200);
    CHECK_EQ_I(tp.cap.invalid, 0);
    arb_responder_free(r);
}

/*
 * Static selection keeps sending each offset's first credit down its own
 * tree (k mod 2), dead or not; once tree 0 is dead, its credits are given
 * up after the floor (timeout_min) rather than the full timer, and their
 * retries go down tree 1: the message completes.
 */
TEST(static_selection_moves_retries_off_a_dead_tree)
{
    static tree_play tp;
    arb_responder *r = tree_responder(&tp, 0, 2);
    if (!r) return;
    static int32_t res[64 * 4];
    CHECK_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0); /* 64 offsets */
    register_all(r, 1, 0, 0, 0);
    tree_run(&tp, r, 0, 100 * US, 1 * US); /* both answer: warm samples */
    tp.alive[0] = 0;
    tree_run(&tp, r, 101 * US, 20 * MS, 1 * US);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK(arb_responder_done(r));
    CHECK_EQ_U(st.commits, 64);
    CHECK_EQ_U(st.repair_commits, 0);
    CHECK_EQ_I(tp.on_tree[0] - tp.retries_on[0], 32); /* every even offset's first credit */
    CHECK_EQ_I(tp.retries_on[0], 0);
    CHECK_EQ_U(st.deaths, 1);
    CHECK_EQ_U(st.probes, 0); /* static selection probes with its first credits */
    CHECK_EQ_I(tp.cap.invalid, 0);
    arb_responder_free(r);
}

/*
 * Random loss is not a failure. Tree 1 loses every second credit sent down
 * it; tree 0 loses the next 4 of its credits, then answers again: 4 timer
 * losses with no commit between, where dead_after is 2. Were tree 1
 * clean, two would make tree 0 dead (the next test); with tree 1 losing
 * half its credits, a run of n is what random loss gives once in 2^n runs,
 * so the verdict needs 14 (2^-14 <= 1/16384, docs/protocol.md 9.2) and
 * tree 0 stays alive. The message completes either way.
 */
static uint64_t silent_run_deaths(int loss_elsewhere)
{
    static tree_play tp;
    arb_responder *r = tree_responder(&tp, 0, 2);
    if (!r) return UINT64_MAX;
    static int32_t res[48 * 4];
    REQUIRE_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0);
    register_all(r, 1, 0, 0, 0);
    tp.drop_mod[1] = loss_elsewhere ? 2 : 0;
    tree_run(&tp, r, 0, 200 * US, 1 * US); /* warm samples on both */
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    uint64_t timer_before = st.losses_timer;
    tp.drop_next[0] = 4;
    tree_run(&tp, r, 201 * US, 40 * MS, 1 * US);
    arb_responder_get_stats(r, &st);
    CHECK(arb_responder_done(r));
    CHECK_EQ_U(st.commits, 48);
    CHECK(st.losses_timer >= timer_before + 2); /* tree 0's silence was seen */
    CHECK(tp.cap.n < CAP_MAX - 8);
    CHECK_EQ_I(tp.cap.invalid, 0);
    CHECK_EQ_I(arb_responder_error(r), 0);
    arb_responder_free(r);
    return st.deaths;
}

TEST(a_silence_where_other_trees_lose_too_is_not_a_death)
{
    CHECK_EQ_U(silent_run_deaths(1), 0);
}

TEST(a_silence_where_other_trees_lose_nothing_is_a_death)
{
    CHECK_EQ_U(silent_run_deaths(0), 1);
}

/* A tree that has failed is still found where the other loses half its
 * credits: every credit down it is lost, so its silences reach the 14 that
 * random loss at 1/2 would not give, and the message completes over the
 * other tree. */
TEST(a_dead_tree_is_found_where_the_other_is_lossy)
{
    static tree_play tp;
    arb_responder *r = tree_responder(&tp, 0, 2);
    if (!r) return;
    static int32_t res[64 * 4];
    CHECK_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0);
    register_all(r, 1, 0, 0, 0);
    tp.drop_mod[1] = 2;
    tree_run(&tp, r, 0, 200 * US, 1 * US);
    tp.alive[0] = 0;
    tree_run(&tp, r, 201 * US, 60 * MS, 1 * US);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK(arb_responder_done(r));
    CHECK_EQ_U(st.commits, 64);
    CHECK_EQ_U(st.deaths, 1);
    CHECK_EQ_U(st.dead_subchannels, 1);
    CHECK(st.losses_timer >= 14);
    CHECK(tp.cap.n < CAP_MAX - 8);
    CHECK_EQ_I(arb_responder_error(r), 0);
    arb_responder_free(r);
}

/* Both trees silent: one dies, then, after a silence of dead_after timers,
 * the last one too. The channel goes on through the bypass repair (its
 * repair credits go to the member by itself, and commit) while it probes
 * the trees; when they answer again a probe revives one and credits
 * resume: the message completes without an error. */
TEST(every_tree_dies_bypass_then_revival)
{
    static tree_play tp;
    arb_responder *r = tree_responder(&tp, 1, 1);
    if (!r) return;
    static int32_t res[180 * 4];
    CHECK_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0);
    register_all(r, 1, 0, 0, 0);
    tp.repair_lat = 300 * US; /* the bypass is slow: the probes find the trees back */
    tree_run(&tp, r, 0, 100 * US, 1 * US);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    uint64_t before = st.commits;
    tp.alive[0] = tp.alive[1] = 0;
    tree_run(&tp, r, 101 * US, 2 * MS, 1 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.deaths, 2);
    CHECK_EQ_U(st.dead_subchannels, 2);
    CHECK(st.bypass > 0);
    CHECK(tp.repair_unicast > 0);
    CHECK(st.repair_commits > 0);
    CHECK(st.commits > before); /* the bypass carries on */
    CHECK(st.probes > 0);
    CHECK(st.commits < 180); /* offsets remain for the trees when they answer again */
    tp.alive[0] = tp.alive[1] = 1;
    tree_run(&tp, r, 2 * MS + 1 * US, 60 * MS, 1 * US);

    arb_responder_get_stats(r, &st);
    CHECK(arb_responder_done(r));
    CHECK_EQ_U(st.commits, 180);
    CHECK(tp.cap.n < CAP_MAX - 8); /* the run was not cut by the capture */
    CHECK(st.revivals >= 1);
    CHECK_EQ_I(arb_responder_error(r), 0);
    arb_responder_free(r);
}

/* ------------------------------------------------------------------ */
/* Requester, hand-made                                                 */
/* ------------------------------------------------------------------ */

TEST(requester_register_retry_and_failure)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_requester_config c;
    req_cfg(&c, 1, &cap);
    c.redundant = 0; /* one REGISTER at a time (the message has one offset) */
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    int32_t in[4] = {0}, out[4];
    CHECK_EQ_I(arb_requester_start_message(q, 0, 16, in, out, 0), 0);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(cap.p[0].h.packet_type, ARB_PT_REGISTER);
    CHECK_EQ_U(cap.p[0].h.repair, 1);
    CHECK_EQ_U(cap.p[0].dst.kind, ARB_EP_DST_RESPONDER);
    /* retry_min (1 ms), doubling up to retry (10 ms): sends at 0, 1, 3, 7,
     * 15, 25, 35, ... ms */
    arb_time expect = 0, gap = c.ep.retry_min;
    int sent = 1;
    while (expect + gap < 100 * MS) {
        expect += gap;
        gap = gap * 2 > c.ep.retry ? c.ep.retry : gap * 2;
        CHECK_EQ_U(arb_requester_next_expiry(q), expect);
        arb_requester_on_expiry(q, expect - 1);
        CHECK_EQ_I(cap.n, sent);
        arb_requester_on_expiry(q, expect);
        CHECK_EQ_I(cap.n, ++sent);
    }
    CHECK_EQ_I(sent, 1 + 4 + 8); /* 1, 3, 7 and 15 ms, then 25 .. 95 ms */
    /* the channel fails once retry x (2^retry_tries - 1) = 2550 ms passed */
    arb_time give_up = c.ep.retry * ((UINT64_C(1) << c.ep.retry_tries) - 1);
    CHECK_EQ_U(give_up, 2550 * MS);
    while (arb_requester_next_expiry(q) < give_up && cap.n < CAP_MAX - 1) {
        arb_requester_on_expiry(q, arb_requester_next_expiry(q));
        CHECK_EQ_I(arb_requester_error(q), 0);
    }
    CHECK_EQ_U(arb_requester_next_expiry(q), give_up);
    int before = cap.n;
    arb_requester_on_expiry(q, give_up);
    CHECK_EQ_I(cap.n, before); /* no try at the give-up time */
    CHECK_EQ_I(arb_requester_error(q), ARB_ETIMEDOUT);
    arb_requester_progress qp;
    arb_requester_get_progress(q, &qp);
    CHECK_EQ_U(qp.phase, ARB_REQ_FAILED);
    CHECK_EQ_U(arb_requester_next_expiry(q), ARB_TIME_NEVER);
    CHECK_EQ_I(arb_requester_start_message(q, 1, 16, in, out, give_up), ARB_ESTATE);
    CHECK(!arb_requester_done(q));
    CHECK_EQ_I(cap.invalid, 0);
    arb_requester_free(q);
    /* retries shorter than a microsecond, or a first retry above the cap,
     * are refused */
    c.ep.retry_min = ARB_EP_TIMER_MIN - 1;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), ARB_EINVAL);
    c.ep.retry_min = c.ep.retry + 1;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), ARB_EINVAL);
}

/* arb_requester_recv_trusted (the simulator's entry): 1 when phases or retry
 * timers may have moved, 0 when only results and answers changed. */
TEST(requester_trusted_reports_moves)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_requester_config c;
    req_cfg(&c, 0, &cap);
    c.ep.header_only = 1;
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    CHECK_EQ_I(arb_requester_start_message(q, 0, 32, NULL, NULL, 0), 0); /* 2 packets */
    arb_hdr c0 = mk_credit(0, 0);
    arb_time retry = arb_requester_next_expiry(q);
    CHECK(retry != ARB_TIME_NEVER);
    /* the first credit moves the phase, but may have come before the
     * registration: the REGISTER is still retried */
    CHECK_EQ_I(arb_requester_recv_trusted(q, &c0, NULL, 0, 0, 1), 1);
    CHECK_EQ_U(arb_requester_next_expiry(q), retry);
    arb_hdr c1 = mk_credit(0, 1);
    c1.offset_a = 0;
    c1.payload_kind = ARB_PK_COMPLETION; /* result 0 rides credit 1 */
    /* a later credit (with a result) comes after registration: no retry */
    CHECK_EQ_I(arb_requester_recv_trusted(q, &c1, NULL, 0, 0, 2), 1);
    CHECK_EQ_U(arb_requester_next_expiry(q), ARB_TIME_NEVER);
    CHECK_EQ_I(arb_requester_recv_trusted(q, &c1, NULL, 0, 0, 2), 0); /* a copy: answered */
    arb_hdr tail = mk(ARB_PT_RESPONSE, 0, 1, 0);
    tail.op = ARB_OP_SUM;
    tail.payload_kind = ARB_PK_COMPLETION;
    CHECK_EQ_I(arb_requester_recv_trusted(q, &tail, NULL, 0, 0, 3), 1); /* all in: END */
    CHECK_EQ_U(cap_count(&cap, ARB_PT_END, 0), 1);
    CHECK(arb_requester_next_expiry(q) != ARB_TIME_NEVER);
    arb_hdr ack = mk(ARB_PT_END_ACK, 0, 0, 0);
    CHECK_EQ_I(arb_requester_recv_trusted(q, &ack, NULL, 0, 0, 4), 1);
    CHECK_EQ_I(arb_requester_done(q), 1);
    arb_requester_stats st;
    arb_requester_get_stats(q, &st);
    CHECK_EQ_U(st.results, 2);
    CHECK_EQ_U(st.requests, 3);
    CHECK_EQ_U(st.dup_results, 1);
    CHECK_EQ_U(st.dup_credits, 1);
    arb_requester_free(q);
}

TEST(requester_credits_and_results)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    static const uint8_t fan[6] = {5, 2, 1, 7, 3, 2};
    arb_requester_config c;
    req_cfg(&c, 2, &cap);
    c.fanin = fan;
    c.subchannels = 2;
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    int32_t in[12], out[12] = {0};
    for (int e = 0; e < 12; e++)
        in[e] = e + 1;
    CHECK_EQ_I(arb_requester_start_message(q, 0, 48, in, out, 0), 0); /* 3 packets */
    CHECK_EQ_I(arb_requester_start_message(q, 1, 48, in, out, 0), ARB_ESTATE);
    arb_hdr ack = mk(ARB_PT_REGISTER_ACK, 0, 0, 0);
    ack.repair = 1;
    CHECK_EQ_I(arb_requester_recv(q, &ack, NULL, 0, 0, 1), 0);
    CHECK_EQ_U(arb_requester_next_expiry(q), ARB_TIME_NEVER);
    arb_requester_recv(q, &ack, NULL, 0, 0, 1); /* a duplicate ack is stale */
    /* credit 1 on subchannel 1 through a two-tier tree */
    cap.n = 0;
    arb_hdr cr = mk_credit(0, 1);
    cr.ext = 1;
    cr.agg_depth = 2;
    cr.agg_loc[0] = 0x1234;
    cr.agg_loc[1] = 0x0042;
    arb_requester_recv(q, &cr, NULL, 0, 1, 2);
    CHECK_EQ_I(cap.n, 1);
    const cap_pkt *rq = &cap.p[0];
    CHECK_EQ_U(rq->h.packet_type, ARB_PT_DATA_REQUEST);
    CHECK_EQ_U(rq->h.repair, 0);
    CHECK_EQ_U(rq->h.offset_a, 1);
    CHECK_EQ_U(rq->h.offset_b, 1);
    CHECK_EQ_U(rq->h.agg_depth, 2);
    CHECK_EQ_U(rq->h.ext, 1);
    CHECK_EQ_U(rq->h.agg_loc[0], 0x1234);
    CHECK_EQ_U(rq->h.agg_loc[1], 0x0042);
    CHECK_EQ_U(rq->h.fanin[0], 7);
    CHECK_EQ_U(rq->h.fanin[1], 3);
    CHECK_EQ_U(rq->dst.subchannel, 1);
    CHECK_EQ_U(rq->len, 16);
    CHECK(memcmp(rq->data, in + 4, 16) == 0);
    /* the same credit again (a switch asks again where the answer is
     * missing): the same request again */
    arb_requester_recv(q, &cr, NULL, 0, 1, 3);
    REQUIRE_EQ_I(cap.n, 2);
    CHECK(memcmp(&cap.p[1].h, &rq->h, sizeof rq->h) == 0);
    CHECK(memcmp(cap.p[1].data, in + 4, 16) == 0);
    /* a credit of another message, and one past the message */
    arb_hdr st1 = mk_credit(9, 0);
    arb_requester_recv(q, &st1, NULL, 0, 0, 3);
    arb_hdr st2 = mk_credit(0, 3);
    arb_requester_recv(q, &st2, NULL, 0, 0, 3);
    CHECK_EQ_I(cap.n, 2);
    /* credit 0 carries result 1 */
    int32_t r1[4] = {-1, -2, -3, -4};
    arb_hdr c0 = mk_credit(0, 0);
    c0.offset_a = 1;
    c0.payload_valid = 1;
    arb_requester_recv(q, &c0, (uint8_t *)r1, 16, 0, 4);
    CHECK_EQ_I(out[4], -1);
    CHECK_EQ_I(out[7], -4);
    CHECK_EQ_U(cap.p[2].h.fanin[0], 5);
    /* a result of the wrong length is refused */
    arb_hdr t2 = mk(ARB_PT_RESPONSE, 0, 2, 0);
    t2.op = ARB_OP_SUM;
    t2.payload_valid = 1;
    arb_requester_recv(q, &t2, (uint8_t *)r1, 8, 0, 5);
    CHECK_EQ_I(out[8], 0);
    /* a repair credit for 2 replaying result 1: answered, every time */
    cap.n = 0;
    arb_hdr rc = mk_credit(0, 2);
    rc.repair = 1;
    rc.offset_a = 1;
    rc.payload_valid = 1;
    rc.payload_kind = ARB_PK_REPLAY;
    arb_requester_recv(q, &rc, (uint8_t *)r1, 16, 0, 6);
    arb_requester_recv(q, &rc, (uint8_t *)r1, 16, 0, 7);
    CHECK_EQ_I(cap.n, 2);
    CHECK_EQ_U(cap.p[0].h.repair, 1);
    CHECK_EQ_U(cap.p[0].h.agg_depth, 0);
    CHECK_EQ_U(cap.p[0].h.offset_b, 1);
    CHECK_EQ_U(cap.p[0].h.offset_a, 2);
    CHECK(memcmp(cap.p[0].data, in + 8, 16) == 0);
    /* the normal credit for 2 arriving late: answered as every copy is (the
     * responder has the offset in the bypass and passes it over) */
    arb_hdr c2 = mk_credit(0, 2);
    arb_requester_recv(q, &c2, NULL, 0, 0, 8);
    CHECK_EQ_I(cap.n, 3);
    /* tails 0 and 2: every result in, END goes out */
    int32_t r0[4] = {5, 6, 7, 8}, r2[4] = {9, 10, 11, 12};
    arb_hdr t0 = mk(ARB_PT_RESPONSE, 0, 0, 0);
    t0.op = ARB_OP_SUM;
    t0.payload_valid = 1;
    arb_requester_recv(q, &t0, (uint8_t *)r0, 16, 0, 9);
    arb_requester_progress qp;
    arb_requester_get_progress(q, &qp);
    CHECK_EQ_U(qp.results, 2);
    CHECK(!qp.complete);
    arb_requester_recv(q, &t2, (uint8_t *)r2, 16, 0, 10);
    CHECK_EQ_I(out[11], 12);
    const cap_pkt *end = cap_last(&cap, ARB_PT_END);
    REQUIRE(end != NULL);
    CHECK_EQ_U(end->h.offset_a, 0);
    arb_requester_get_progress(q, &qp);
    CHECK_EQ_U(qp.phase, ARB_REQ_END);
    CHECK(qp.complete);
    /* a replayed tail it already has: its result ignored, and the END said
     * again at once (the replay says the responder has not heard it) */
    arb_hdr tr = t0;
    tr.repair = 1;
    tr.payload_kind = ARB_PK_REPLAY;
    int before = cap.n;
    arb_requester_recv(q, &tr, (uint8_t *)r2, 16, 0, 11);
    CHECK_EQ_I(out[0], 5);
    CHECK_EQ_I(cap.n, before + 1);
    CHECK_EQ_U(cap.p[cap.n - 1].h.packet_type, ARB_PT_END);
    /* the next message may start now; the END keeps its retry */
    CHECK_EQ_I(arb_requester_start_message(q, 1, 16, in, out, 12), 0);
    CHECK(!arb_requester_done(q));
    CHECK_EQ_U(arb_requester_next_expiry(q), 10 + c.ep.retry_min);
    arb_requester_on_expiry(q, 10 + c.ep.retry_min);
    CHECK_EQ_U(cap_last(&cap, ARB_PT_END)->h.message_id, 0);
    arb_hdr ea = mk(ARB_PT_END_ACK, 0, 0, 0);
    arb_requester_recv(q, &ea, NULL, 0, 0, 13);
    arb_requester_recv(q, &ea, NULL, 0, 0, 13); /* duplicate: stale */
    arb_requester_stats s;
    arb_requester_get_stats(q, &s);
    CHECK_EQ_U(s.requests, 4);
    CHECK_EQ_U(s.repair_requests, 2);
    CHECK_EQ_U(s.dup_credits, 2);
    CHECK_EQ_U(s.results, 3);
    CHECK_EQ_U(s.dup_results, 3);
    CHECK_EQ_U(s.bad, 1);
    CHECK_EQ_U(s.stale, 4);
    CHECK_EQ_U(s.ends, 3);
    CHECK_EQ_U(s.end_answers, 1);
    CHECK_EQ_I(cap.invalid, 0);
    arb_requester_free(q);
}

/* A message of one offset (a barrier here) is credited twice at once, as
 * attempts 0 and 1, with one credit in the window; either aggregate commits
 * it, the other is a duplicate, and neither is a loss. Its requester sends
 * its first REGISTER twice. Without `redundant`, once. */
TEST(one_offset_messages_go_twice)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    c.kind = ARB_EP_BARRIER;
    c.op = ARB_OP_NOP;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    CHECK_EQ_I(arb_responder_start_message(r, 0, 0, NULL, NULL, 0), 0);
    register_all(r, 2, 0, 0, 0);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 2);
    const cap_pkt *twin = cap_last(&cap, ARB_PT_RESPONSE);
    CHECK(twin != NULL);
    if (twin) {
        CHECK_EQ_U(twin->h.attempt, 1);
        CHECK_EQ_U(twin->h.offset_b, 0);
    }
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.outstanding, 1);
    arb_hdr m = mk_master(0, 0, 2, 0);
    m.op = ARB_OP_NOP;
    arb_responder_recv(r, &m, NULL, 0, ARB_EP_FROM_SWITCH, 5 * US); /* attempt 0 first */
    m.attempt = 1;
    arb_responder_recv(r, &m, NULL, 0, ARB_EP_FROM_SWITCH, 6 * US);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.twins, 1);
    CHECK_EQ_U(st.retries, 0);
    CHECK_EQ_U(st.commits, 1);
    CHECK_EQ_U(st.stale, 1); /* the barrier closed at the first: the twin's is stale */
    CHECK_EQ_U(st.losses_order + st.losses_timer + st.spurious, 0);
    CHECK(arb_responder_done(r));
    arb_responder_free(r);
    /* a message of two offsets is credited once each */
    memset(&cap, 0, sizeof cap);
    rsp_cfg(&c, 2, &cap);
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    static int32_t res[8];
    CHECK_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0);
    register_all(r, 2, 0, 0, 0);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 2);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.twins, 0);
    arb_responder_free(r);
    /* the requester of a one-offset message: its first REGISTER twice */
    for (int red = 0; red < 2; red++) {
        memset(&cap, 0, sizeof cap);
        arb_requester_config qc;
        req_cfg(&qc, 0, &cap);
        qc.redundant = red;
        arb_requester *q = NULL;
        REQUIRE_EQ_I(arb_requester_new(&q, &qc), 0);
        int32_t in[4] = {0}, out[4];
        CHECK_EQ_I(arb_requester_start_message(q, 0, 16, in, out, 0), 0);
        CHECK_EQ_I(cap_count(&cap, ARB_PT_REGISTER, -1), red ? 2 : 1);
        arb_requester_free(q);
    }
}

/* Every copy of a credit is answered, with the same contribution: a
 * duplicate of attempt 0 (a switch's re-credit where the answer is
 * missing) and each attempt a >= 1, echoing its attempt and its own
 * location stack. */
TEST(requester_answers_each_attempt)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_requester_config c;
    req_cfg(&c, 0, &cap);
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    int32_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
    CHECK_EQ_I(arb_requester_start_message(q, 0, 32, in, out, 0), 0); /* 2 packets */
    cap.n = 0;
    arb_hdr c0 = mk_credit(0, 1);
    c0.agg_depth = 1;
    c0.agg_loc[0] = 7;
    arb_requester_recv(q, &c0, NULL, 0, 0, 1);
    arb_requester_recv(q, &c0, NULL, 0, 0, 2); /* a copy of attempt 0: answered again */
    arb_hdr c1 = c0;
    c1.attempt = 1;
    c1.agg_loc[0] = 9;
    arb_requester_recv(q, &c1, NULL, 0, 0, 3);
    arb_requester_recv(q, &c1, NULL, 0, 0, 4); /* attempt 1 again: answered again */
    REQUIRE_EQ_I(cap.n, 4);
    CHECK_EQ_U(cap.p[0].h.attempt, 0);
    CHECK_EQ_U(cap.p[0].h.agg_loc[0], 7);
    CHECK_EQ_U(cap.p[1].h.attempt, 0);
    CHECK_EQ_U(cap.p[1].h.agg_loc[0], 7);
    CHECK(memcmp(cap.p[1].data, in + 4, 16) == 0); /* the same contribution */
    CHECK_EQ_U(cap.p[2].h.attempt, 1);
    CHECK_EQ_U(cap.p[2].h.agg_loc[0], 9);
    CHECK(memcmp(cap.p[2].data, in + 4, 16) == 0);
    CHECK_EQ_U(cap.p[3].h.attempt, 1);
    /* a repair credit's answer carries no attempt */
    arb_hdr rc = mk_credit(0, 1);
    rc.repair = 1;
    arb_requester_recv(q, &rc, NULL, 0, 0, 5);
    CHECK_EQ_U(cap.p[4].h.repair, 1);
    CHECK_EQ_U(cap.p[4].h.attempt, 0);
    arb_requester_stats st;
    arb_requester_get_stats(q, &st);
    CHECK_EQ_U(st.requests, 4);
    CHECK_EQ_U(st.retry_answers, 2);
    CHECK_EQ_U(st.dup_credits, 3);
    arb_requester_progress qp;
    arb_requester_get_progress(q, &qp);
    CHECK_EQ_U(qp.answered, 1); /* one offset answered */
    CHECK_EQ_I(cap.invalid, 0);
    arb_requester_free(q);
}

TEST(requester_config_errors)
{
    capture cap;
    arb_requester_config c;
    arb_requester *q = NULL;
    req_cfg(&c, 0, &cap);
    REQUIRE_EQ_I(arb_requester_new(NULL, &c), ARB_EINVAL);
    c.member = 256;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), ARB_EINVAL);
    static const uint8_t zero_fan[3] = {2, 0, 1};
    req_cfg(&c, 0, &cap);
    c.fanin = zero_fan;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), ARB_EINVAL);
    req_cfg(&c, 0, &cap);
    c.ep.retry_tries = 0;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), ARB_EINVAL);
    req_cfg(&c, 0, &cap);
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    CHECK_EQ_I(arb_requester_start_message(q, 3, 16, NULL, NULL, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_requester_start_message(q, 0, 16, NULL, NULL, 0), ARB_EINVAL); /* input */
    CHECK_EQ_I(arb_requester_start_message(q, 0, 6, NULL, NULL, 0), ARB_EINVAL);
    arb_hdr h = mk_credit(0, 0);
    CHECK_EQ_I(arb_requester_recv(q, &h, NULL, 3, 0, 0), ARB_EINVAL);
    /* a malformed header is counted, not an error */
    h.version = 1;
    CHECK_EQ_I(arb_requester_recv(q, &h, NULL, 0, 0, 0), 0);
    arb_requester_stats s;
    arb_requester_get_stats(q, &s);
    CHECK_EQ_U(s.malformed, 1);
    CHECK(arb_requester_done(q));
    arb_requester_free(q);
    arb_requester_free(NULL);
}

/* The held/answered bitmaps follow the indices in play: a long message
 * whose results trail its credits by a fixed lag keeps a window of a few
 * groups of 64 (the initial 16), whatever its length; a late duplicate far
 * below the window still counts as a duplicate; a result that stays
 * missing holds the window open until it comes. */
TEST(requester_window_follows_indices_in_play)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    enum { N = 200000, LAG = 50 };
    arb_requester_config c;
    req_cfg(&c, 0, &cap);
    c.ep.header_only = 1;
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    REQUIRE_EQ_I(arb_requester_start_message(q, 0, (uint64_t)N * 16, NULL, NULL, 0), 0);
    uint32_t peak = 0;
    for (uint32_t k = 0; k < N + LAG; k++) {
        cap.n = 0;
        arb_hdr h = k < N ? mk_credit(0, k) : mk(ARB_PT_RESPONSE, 0, k - LAG, 0); /* tails */
        h.op = ARB_OP_SUM;
        if (k >= LAG) {
            h.offset_a = k - LAG;
            h.payload_kind = ARB_PK_COMPLETION; /* header-only: a result without bytes */
        }
        arb_requester_recv(q, &h, NULL, 0, 0, k + 1);
        arb_requester_progress pr;
        arb_requester_get_progress(q, &pr);
        if (pr.window > peak) peak = pr.window;
    }
    arb_requester_progress pr;
    arb_requester_get_progress(q, &pr);
    CHECK_EQ_U(pr.results, N);
    CHECK_EQ_U(pr.answered, N);
    CHECK(pr.complete);
    /* in play: LAG + 1 indices, at most 2 groups; the window never grows
     * past its initial 16 groups */
    CHECK(peak <= 16 * 64);
    CHECK(peak < N / 100);
    /* a late copy of index 5's credit: answered again (from the window's
     * record that it was answered, nothing grows), counted */
    arb_requester_stats st0, st1;
    arb_requester_get_stats(q, &st0);
    cap.n = 0;
    arb_hdr d = mk_credit(0, 5);
    d.offset_a = 5;
    d.payload_kind = ARB_PK_COMPLETION;
    arb_requester_recv(q, &d, NULL, 0, 0, N + LAG + 1);
    arb_requester_get_stats(q, &st1);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(st1.dup_credits, st0.dup_credits + 1);
    CHECK_EQ_U(st1.dup_results, st0.dup_results + 1);
    arb_requester_free(q);

    /* a result missing from the start: the window must cover every index
     * after it, and nothing is lost when it comes */
    memset(&cap, 0, sizeof cap);
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    enum { M = 5000 };
    REQUIRE_EQ_I(arb_requester_start_message(q, 0, (uint64_t)M * 16, NULL, NULL, 0), 0);
    for (uint32_t k = 0; k < M; k++) {
        cap.n = 0;
        arb_hdr h = mk_credit(0, k);
        h.offset_a = k;
        h.payload_kind = k ? ARB_PK_COMPLETION : ARB_PK_DATA; /* result 0 missing */
        arb_requester_recv(q, &h, NULL, 0, 0, k + 1);
    }
    arb_requester_get_progress(q, &pr);
    CHECK_EQ_U(pr.results, M - 1);
    CHECK(pr.window >= M);
    arb_hdr t0 = mk(ARB_PT_RESPONSE, 0, 0, 0);
    t0.op = ARB_OP_SUM;
    t0.payload_kind = ARB_PK_COMPLETION;
    arb_requester_recv(q, &t0, NULL, 0, 0, M + 1);
    arb_requester_get_progress(q, &pr);
    CHECK_EQ_U(pr.results, M);
    CHECK(pr.complete);
    arb_requester_free(q);
}

int main(void)
{
    RUN(responder_config_errors);
    RUN(one_offset_messages_go_twice);
    RUN(requester_answers_each_attempt);
    RUN(requester_config_errors);
    RUN(registration);
    RUN(responder_early_credit_commits_after_registration);
    RUN(requester_holds_early_credit);
    RUN(responder_commit_rides_tails);
    RUN(responder_tail_probes_back_off);
    RUN(responder_one_window_probes_before_a_sample);
    RUN(responder_one_window_cold_timer);
    RUN(responder_one_window_end_wait);
    RUN(responder_probes_a_window_lost_whole);
    RUN(responder_end_rounds_by_order);
    RUN(responder_end_rounds_fail_on_silence_only);
    RUN(responder_end_first_round_after_a_loop);
    RUN(responder_repair_path);
    RUN(responder_timeout_of_repair_is_repeated);
    RUN(tree_dies_is_probed_and_revives);
    RUN(static_selection_moves_retries_off_a_dead_tree);
    RUN(a_silence_where_other_trees_lose_too_is_not_a_death);
    RUN(a_silence_where_other_trees_lose_nothing_is_a_death);
    RUN(a_dead_tree_is_found_where_the_other_is_lossy);
    RUN(every_tree_dies_bypass_then_revival);
    RUN(requester_register_retry_and_failure);
    RUN(requester_credits_and_results);
    RUN(requester_window_follows_indices_in_play);
    RUN(requester_trusted_reports_moves);
    RUN(pull_message_through_switch);
    RUN(pull_message_point_to_point);
    RUN(pull_message_f32_i64_max);
    RUN(pull_completion_message);
    RUN(push_message);
    RUN(barrier_message);
    RUN(zero_size_message);
    RUN(header_only_mode);
    RUN(duplicates_and_reordering);
    RUN(lost_credit_timeout_repair_replay);
    RUN(lost_credit_retried_in_network);
    RUN(repair_credit_lost_sent_again);
    RUN(lost_tail_end_wait_replay);
    RUN(retry_fails_into_bypass);
    RUN(channel_fails_when_a_member_never_answers);
    RUN(order_detection_and_reordering_window);
    RUN(timer_estimate);
    RUN(ceiling_below_loaded_loop_backs_off);
    RUN(lost_request_agg_timeout);
    RUN(end_retry);
    RUN(register_ack_lost_credit_acknowledges);
    RUN(agg_miss_through_switch);
    RUN(pipelined_messages_no_loss);
    RUN(pipelined_messages_random_loss);
    RUN(message_id_wrap);
    RUN(offset_wrap_24bit);
    RUN(window_and_rate_gate);
    RUN(repair_budget_cap);
    RUN(ring_limit);
    RUN(ring_grows_with_offsets_in_play);
    return testkit_done();
}
