/*
 * The Arbor transport in the simulator (docs/arbor-sim.md): hosts run the
 * responder and requester engines of the plan's channels, switches run
 * the aggregator engine where the plan says so and steer tree packets by
 * their tree tables; everything else is unicast through the routing.
 *
 * A packet is a struct pkt (pool.h) of kind PK_ARBOR:
 *   conn   the channel            sport  the subchannel (UDP source port)
 *   qp     the tree index         psn    ROUTE_TREE or ROUTE_UNICAST, and the
 *                                        job's port << 1 (the UDP port's offset)
 *   dst    unicast: the host      aux    the payload buffer, or NONE
 *   payload  the payload bytes it carries, or in header-only mode the
 *            bytes it stands for (what values mode would carry)
 * and its decoded header lives in hdr[index], a side table as long as the
 * pool: 64 + 32 = 96 bytes per packet alive.
 */
#include "arbor/agg.h"
#include "arbor/endpoint.h"
#include "arbor/plan.h"
#include "arbor/reduce.h"
#include "arbor/wire.h"
#include "agg/agg_trusted.h"
#include "endpoint/ep_trusted.h"
#include "host/host.h"
#include "sim_int.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
enum { ROUTE_TREE = 0, ROUTE_UNICAST = 1 };

/* Payload buffers: one payload each, shared by copies (reference counts). */
struct bufpool {
    uint8_t **buf;
    uint32_t *ref;
    uint32_t *free_ids;
    uint32_t n, cap, n_free;
    uint32_t size;
};

/* The offsets a responder committed, for the exactly-once check: a bitmap
 * over a window of 64-offset words that slides past full words (every
 * offset below it committed), so it follows the offsets in flight, not the
 * message's length. */
struct cwin {
    uint64_t *w;
    uint32_t base;      /* the first word held */
    uint32_t used, cap; /* words in use, allocated */
};

/* One engine is an arb_hep (host/host.h): the rank driver shared with the
 * runtime makes, starts and serves the engines; its ctx is the job. */

/* Per node; the packets a node sends (`out`) are counted per port (pacct). */
struct nacct {
    uint64_t in, copies, consumed, drops, delivered;
};

/* Per port: the packets and bytes it sent (count_sent), and the bytes its
 * queue dropped. The wire bytes queued on it (the result's tier_*_bytes)
 * are these bytes, sent or dropped, and those still queued (port_sums). */
struct pacct {
    uint64_t tx_pkts, tx_bytes, drop_bytes;
};

/* One collective (arb_sim_arbor_add): its plan, engines, tables and figures. */
struct ajob {
    arb_sim *s;
    struct arbor_job *a;
    uint32_t index;   /* job index (arb_sim_arbor_add's return) */
    uint32_t ch_base; /* its channel c travels as ch_base + c (pkt->conn, the aggregators' id) */
    arb_sim_arbor_config cfg;
    const arb_plan *p;
    uint64_t rtt_sum, rtt_n; /* credit-to-commit times (rtt_mean) */
    uint32_t *entry;         /* n_nodes x n_trees: entry index or NONE */
    uint32_t n_trees;
    uint32_t *agg_nodes; /* the switches where this job aggregates */
    uint32_t n_agg_nodes;
    arb_host *host; /* the ranks' engines and done conditions */
    arb_hep *eps;   /* host's engine records */
    uint32_t n_eps;
    uint32_t *host_first; /* CSR over hosts: eps of host h */
    uint32_t *host_eps;
    uint32_t *ep_at; /* rank x channel: the rank's engine of that channel, or NONE */
    uint32_t *ep_of; /* host x channel: the host's engine of that channel, or NONE */
    uint32_t n_channels;
    uint32_t *tree_ports; /* eps x subchannels: the port up the subchannel's tree */
    uint32_t *rank_of_host;
    struct pacct *pacct; /* per port: this job's packets */
    double tol;          /* values: tolerance of float results */
    arb_time floor;      /* the timers' floor: cfg.timeout_min, or twice the fabric's loop */
    int32_t sum17[17];   /* sum over ranks of ((7r + x) mod 17) */
    uint32_t port;       /* its channels' UDP port: SIM_ARBOR_DPORT + port (pkt psn >> 1) */
    uint32_t part;       /* its part of every switch's pool (index mod the pool's parts) */
    /* per rank: when its engines start (ARB_TIME_NEVER: a deferred rank not
     * entered yet), whether they have, whether its host is through with
     * them (every engine finished, no timer left), whether its done was
     * reported (cfg.on_rank_done) */
    arb_time *start_at;
    uint8_t *started, *idle, *reported;
    uint32_t *live_at; /* per node: slots this job holds live there */
    arb_sim_arbor_result res;
};

/* The jobs with engines on one host, in the order they were added. */
struct hjobs {
    struct ajob **v;
    uint32_t n, cap;
};

/* A rank done, to report after the event (cfg.on_rank_done). */
struct rnote {
    uint32_t job, rank;
};

/* In a slot owner table: the owner's job index, and whether the slot is live. */
#define SLOT_LIVE 0x80000000u

/* The simulator's Arbor state (s->arb): what the jobs share -- the packet
 * side table, the payload buffers, one aggregator (one slot pool) per
 * switch, per-node counts and the host timers -- and the jobs. */
struct arbor_job {
    arb_hdr *hdr; /* side table, by packet index */
    uint32_t cap_hdr;
    struct bufpool bp;
    /* n_nodes x n_parts: switch n's pool part k (k = a job's index mod
     * n_parts; one part, the whole pool, unless partitioned); NULL where no
     * job of that part aggregates; owner[]: per engine, each slot's owning
     * job and liveness (SLOT_LIVE), the jobs' live_at kept from them */
    arb_agg **agg;
    uint32_t **owner;
    uint32_t n_parts;
    struct nacct *acct; /* per node, every job's packets */
    uint32_t spare;     /* a received packet its engine may reuse for a reply, or NONE */
    uint8_t echo_ce;    /* a requester is answering a credit that arrived with CE */
    arb_time *timer_at; /* per host (a host belongs to one job) */
    uint64_t *timer_seq;
    arb_time *lag;       /* per host: packets are handled this long after arrival (its job's) */
    struct plist *held;  /* per host: arrived packets waiting for their lag (ts = due) */
    uint64_t n_held;     /* packets in the held lists */
    struct hjobs *hj;    /* per host: the jobs with engines there */
    uint32_t *next_port; /* per host: the port its next job's channels take */
    struct rnote *notes; /* ranks done in this event, to report after it */
    uint32_t n_notes, cap_notes;
    struct ajob **chan_job; /* per global channel (pkt->conn): its job */
    uint32_t n_chan, cap_chan;
    struct ajob **jobs;
    uint32_t n_jobs;
    /* the first job's, which every job must share: the pools are common */
    uint32_t slots, payload;
    int values;
    arb_sim_arbor_failure failure; /* the first engine that gave up */
    /* arb_sim_arbor_counters_get: payload bytes committed and sent again,
     * retry and repair credits sent, and the watch for the first of those
     * at or after watch_from (arb_sim_arbor_watch) */
    uint64_t committed_bytes, resent_bytes, resends;
    arb_time watch_from, watch_hit;
    int watching;
};

/* The job of engine e. */
static inline struct ajob *ej(const arb_hep *e)
{
    return e->h->cfg.ctx;
}

/* The job of global channel `conn`. */
static inline struct ajob *job_of(const arb_sim *s, uint32_t conn)
{
    return s->arb->chan_job[conn];
}

/* splitmix64: the start skew's generator (deterministic, seeded). */
static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void arb_sim_arbor_config_default(arb_sim_arbor_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->payload = ARB_PAYLOAD_MAX;
    cfg->window = 0; /* arb_sim_arbor_window */
    cfg->slots = ARB_AGG_SLOTS_DEFAULT;
    cfg->timeout = ARB_EP_TIMEOUT_DEFAULT;
    cfg->adaptive_timeout = 1;
    cfg->order_detection = 1;
    cfg->attempts = ARB_EP_ATTEMPTS_DEFAULT;
    cfg->miss_limit = ARB_EP_MISS_LIMIT_DEFAULT;
    cfg->dead_after = ARB_EP_DEAD_AFTER_DEFAULT;
    cfg->repair_tries = ARB_EP_REPAIR_TRIES_DEFAULT;
    cfg->retry = ARB_EP_RETRY_DEFAULT;
    cfg->cc_kind = ARB_CC_FIXED;
    arb_cc_config_default(&cfg->cc);
    cfg->cc.spacing = 0;
}

arb_time arb_sim_arbor_loop(const arb_sim *s, const arb_plan *plan, uint32_t payload)
{
    if (!s || !plan) return 0;
    arb_time hop = 0;
    uint32_t frame = ARB_FRAME_OVERHEAD + plan->hdr_len + payload + ARB_WIRE_EXTRA;
    for (uint32_t p = 0; p < s->n_ports; p++) {
        arb_time t = s->ports[p].delay + arb_time_tx(frame, s->ports[p].rate);
        if (s->ports[p].rate && t > hop) hop = t;
    }
    uint32_t levels = plan->root_level ? plan->root_level : 1;
    return 4 * (arb_time)levels * hop;
}

/* ---- values ------------------------------------------------------------ */

/* Rank r's element e: an integer in [-8, 8], so every partial sum of up to
 * 2^p / 8 ranks is exact in a format with p significand bits. */
static int32_t val(uint32_t r, uint64_t e)
{
    return (int32_t)((7u * r + (uint32_t)((13u * (e % 17u)) % 17u)) % 17u) - 8;
}

static void put_elem(uint8_t *d, arb_dtype dt, double v)
{
    switch (dt) {
    case ARB_DTYPE_F16: {
        uint16_t h = arb_f32_to_f16((float)v);
        memcpy(d, &h, 2);
        break;
    }
    case ARB_DTYPE_BF16: {
        uint16_t h = arb_f32_to_bf16((float)v);
        memcpy(d, &h, 2);
        break;
    }
    case ARB_DTYPE_F32: {
        float f = (float)v;
        memcpy(d, &f, 4);
        break;
    }
    case ARB_DTYPE_F64:
        memcpy(d, &v, 8);
        break;
    case ARB_DTYPE_I32: {
        int32_t x = (int32_t)v;
        memcpy(d, &x, 4);
        break;
    }
    default: {
        int64_t x = (int64_t)v;
        memcpy(d, &x, 8);
        break;
    }
    }
}

static double get_elem(const uint8_t *d, arb_dtype dt)
{
    switch (dt) {
    case ARB_DTYPE_F16: {
        uint16_t h;
        memcpy(&h, d, 2);
        return arb_f16_to_f32(h);
    }
    case ARB_DTYPE_BF16: {
        uint16_t h;
        memcpy(&h, d, 2);
        return arb_bf16_to_f32(h);
    }
    case ARB_DTYPE_F32: {
        float f;
        memcpy(&f, d, 4);
        return f;
    }
    case ARB_DTYPE_F64: {
        double v;
        memcpy(&v, d, 8);
        return v;
    }
    case ARB_DTYPE_I32: {
        int32_t x;
        memcpy(&x, d, 4);
        return x;
    }
    default: {
        int64_t x;
        memcpy(&x, d, 8);
        return (double)x;
    }
    }
}

/* First element of packet `index` of channel ch. */
static uint64_t elem0(const struct ajob *j, uint32_t ch, uint32_t index)
{
    size_t es = arb_dtype_size(j->p->cfg.dtype);
    return (j->p->channels[ch].lo + (uint64_t)index * j->cfg.payload) / es;
}

static void fill_cb(void *ctx, uint8_t msg_id, uint32_t index, uint8_t *dst, size_t len)
{
    arb_hep *e = ctx;
    const struct ajob *j = ej(e);
    arb_dtype dt = j->p->cfg.dtype;
    size_t es = arb_dtype_size(dt);
    uint64_t e0 = elem0(j, e->ch, index);
    (void)msg_id;
    for (size_t k = 0; k < len / es; k++)
        put_elem(dst + k * es, dt, val(e->rank, e0 + k));
}

/* Check `len` bytes of packet `index` of channel ch against the result. */
static void check(struct ajob *j, uint32_t ch, uint32_t index, const uint8_t *d, size_t len)
{
    const arb_plan_channel *c = &j->p->channels[ch];
    arb_dtype dt = j->p->cfg.dtype;
    size_t es = arb_dtype_size(dt);
    uint64_t e0 = elem0(j, ch, index);
    int push = c->kind == ARB_EP_PUSH;
    int32_t base = -8 * (int32_t)j->p->cfg.n_ranks;
    for (size_t k = 0; k < len / es; k++) {
        uint64_t e = e0 + k;
        double want = push ? val(c->responder, e) : j->sum17[(13u * (e % 17u)) % 17u] + base;
        double got = get_elem(d + k * es, dt);
        j->res.checked++;
        if (!(fabs(got - want) <= j->tol)) j->res.wrong++;
    }
}

/* ---- rank progress ------------------------------------------------------ */

/* Mark offset i committed: 1 if it was new, 0 if it was already, -1 if
 * the window could not grow (counted as a breach by the caller). */
static int cwin_add(struct cwin *c, uint32_t i)
{
    uint32_t wd = i >> 6;
    if (wd < c->base) return 0;
    if (wd - c->base >= c->used) {
        uint32_t k = 0;
        while (k < c->used && c->w[k] == UINT64_MAX)
            k++;
        if (k) {
            memmove(c->w, c->w + k, (size_t)(c->used - k) * sizeof *c->w);
            c->used -= k;
            c->base += k;
        }
        uint32_t need = wd - c->base + 1;
        if (need > c->cap) {
            uint32_t cap = c->cap ? c->cap : 1;
            while (cap < need)
                cap *= 2;
            uint64_t *nw = realloc(c->w, (size_t)cap * sizeof *nw);
            if (!nw) return -1;
            c->w = nw;
            c->cap = cap;
        }
        memset(c->w + c->used, 0, (size_t)(need - c->used) * sizeof *c->w);
        c->used = need;
    }
    uint64_t *w = &c->w[wd - c->base], bit = (uint64_t)1 << (i & 63u);
    if (*w & bit) return 0;
    *w |= bit;
    return 1;
}

static void cwin_free(struct cwin *c)
{
    if (c) free(c->w);
    free(c);
}

/* The responder's record of committed offsets (arb_hep.committed is the
 * driver's). */
static struct cwin *e_committed(const arb_hep *e)
{
    return e->committed;
}

static uint32_t len_of(const struct ajob *j, const arb_plan_channel *c, uint32_t index);

/* The rank driver counts the commit unless this returns -1. */
static int on_commit_cb(arb_hep *e, const arb_commit_info *c)
{
    struct ajob *j = ej(e);
    uint32_t index = c->index;
    if (index >= e->offsets || cwin_add(e_committed(e), index) != 1) {
        j->res.inv_dup_commit++;
        return -1;
    }
    if (!c->repaired && c->attempt == 0) {
        arb_time rtt = j->s->now - c->first_sent;
        j->rtt_sum += rtt;
        j->rtt_n++;
        if (rtt > j->res.rtt_max) j->res.rtt_max = rtt;
    }
    if (c->count != j->p->channels[e->ch].n_members) j->res.inv_count++;
    if (j->cfg.values && c->result && c->len) check(j, e->ch, index, c->result, c->len);
    j->a->committed_bytes += len_of(j, e->c, index);
    return 0;
}

/* Values mode: every result a requester delivers (the rank driver counts it). */
static void on_result_cb(arb_hep *e, uint32_t index, const uint8_t *data, size_t len)
{
    struct ajob *j = ej(e);
    if (j->cfg.values && data && len) check(j, e->ch, index, data, len);
}

/* ---- packets ------------------------------------------------------------ */

static int hdr_room(arb_sim *s, uint32_t i)
{
    struct arbor_job *a = s->arb;
    if (i < a->cap_hdr) return 0;
    uint32_t ncap = a->cap_hdr ? a->cap_hdr : 4096;
    while (ncap <= i)
        ncap *= 2;
    arb_hdr *n = realloc(a->hdr, (size_t)ncap * sizeof *n);
    if (!n) return ARB_ENOMEM;
    a->hdr = n;
    a->cap_hdr = ncap;
    return 0;
}

static uint32_t buf_get(arb_sim *s)
{
    struct bufpool *b = &s->arb->bp;
    if (b->n_free) {
        uint32_t id = b->free_ids[--b->n_free];
        b->ref[id] = 1;
        return id;
    }
    if (b->n == b->cap) {
        uint32_t ncap = b->cap ? b->cap * 2 : 256;
        uint8_t **nb = realloc(b->buf, ncap * sizeof *nb);
        if (nb) b->buf = nb;
        uint32_t *nr = realloc(b->ref, ncap * sizeof *nr);
        if (nr) b->ref = nr;
        uint32_t *nf = realloc(b->free_ids, ncap * sizeof *nf);
        if (nf) b->free_ids = nf;
        if (!nb || !nr || !nf) return NONE;
        b->cap = ncap;
    }
    b->buf[b->n] = malloc(b->size);
    if (!b->buf[b->n]) return NONE;
    b->ref[b->n] = 1;
    return b->n++;
}

static inline void buf_put(arb_sim *s, uint32_t id)
{
    struct bufpool *b = &s->arb->bp;
    if (id == NONE) return;
    if (--b->ref[id] == 0) b->free_ids[b->n_free++] = id;
}

static void pkt_free(arb_sim *s, uint32_t i)
{
    buf_put(s, pool_get(&s->pool, i)->aux);
    pool_release(&s->pool, i);
}

void arbor_pkt_drop(arb_sim *s, uint32_t node, uint32_t i)
{
    if (s->arb) s->arb->acct[node].drops++;
    pkt_free(s, i);
}

/* Packet k of job j, sent on `port`, reached the far end of its wire. */
static inline void count_sent(struct ajob *j, uint32_t port, const struct pkt *k)
{
    struct pacct *a = &j->pacct[port];
    a->tx_pkts++;
    a->tx_bytes += k->bytes;
}

void arbor_queue_drop(arb_sim *s, uint32_t port, uint32_t i)
{
    const struct pkt *k = pool_get(&s->pool, i);
    job_of(s, k->conn)->pacct[port].drop_bytes += k->bytes;
    arbor_pkt_drop(s, s->owner[port], i);
}

void arbor_pkt_lost(arb_sim *s, uint32_t port, uint32_t node, uint32_t i)
{
    if (s->arb) {
        const struct pkt *k = pool_get(&s->pool, i);
        count_sent(job_of(s, k->conn), port, k);
        s->arb->acct[node].in++;
    }
    arbor_pkt_drop(s, node, i);
}

static void fatal(arb_sim *s, int rc)
{
    if (!s->error) s->error = rc;
}

/* --wire-check: encode, decode, compare. A mismatch fails the run. */
static void wire_check(arb_sim *s, uint32_t conn, const arb_hdr *h, size_t len)
{
    struct ajob *j = job_of(s, conn);
    uint8_t buf[ARB_HDR_LEN_LONG + ARB_PAYLOAD_MAX];
    size_t hl = 0, off = 0;
    j->res.wire_checks++;
    int rc = arb_hdr_encode(h, len, buf, sizeof buf, &hl);
    arb_hdr d;
    if (rc == 0) {
        memset(buf + hl, 0, len);
        rc = arb_hdr_decode(&d, buf, hl + len, &off);
    }
    if (rc < 0 || off != hl || !arb_hdr_equal(h, &d)) {
        j->res.wire_errors++;
        arb_log(&s->cfg.log, ARB_LOG_ERROR, "wire check: %s packet type %u offset %u: %s",
                rc < 0 ? "cannot round-trip" : "differs after round trip", (unsigned)h->packet_type,
                (unsigned)h->offset_a, arb_strerror(rc));
        fatal(s, ARB_ESTATE);
    }
}

/* Payload bytes of packet `index` of channel ch. */
static uint32_t len_of(const struct ajob *j, const arb_plan_channel *c, uint32_t index)
{
    uint64_t len = c->hi - c->lo, lo = (uint64_t)index * j->cfg.payload;
    if (lo >= len) return 0;
    return (uint32_t)(len - lo < j->cfg.payload ? len - lo : j->cfg.payload);
}

/* Header-only mode: the payload a packet stands for (what values mode sends). */
static uint32_t virtual_len(const struct ajob *j, const arb_plan_channel *c, const arb_hdr *h)
{
    arb_ep_kind kind = c->kind;
    uint32_t mask = ARB_OFFSET_MASK;
    if (h->packet_type == ARB_PT_DATA_REQUEST)
        return kind == ARB_EP_PULL_RESULT || kind == ARB_EP_PULL_COMPLETION
                   ? len_of(j, c, h->offset_a & mask)
                   : 0;
    if (h->packet_type != ARB_PT_RESPONSE) return 0;
    if (kind == ARB_EP_PULL_RESULT) {
        int rides = h->payload_kind == ARB_PK_COMPLETION ||
                    (h->repair && h->credit_valid && h->offset_a != h->offset_b);
        return rides ? len_of(j, c, h->offset_a & mask) : 0;
    }
    if (kind == ARB_EP_PUSH && h->credit_valid) return len_of(j, c, h->offset_b & mask);
    return 0;
}

static uint32_t wire_of(const arb_hdr *h, uint32_t payload)
{
    uint32_t hl = h->ext ? ARB_HDR_LEN_LONG : ARB_HDR_LEN_SHORT; /* arb_hdr_len */
    return ARB_FRAME_OVERHEAD + hl + payload + ARB_WIRE_EXTRA;
}

static uint32_t entry_of(const struct ajob *j, uint32_t node, uint32_t tree)
{
    return j->entry[(size_t)node * j->n_trees + tree];
}

static void host_send(arb_sim *s, uint32_t port, uint32_t i)
{
    struct pkt *k = pool_get(&s->pool, i);
    s->st.pkts_sent++;
    s->st.bytes_sent += k->bytes;
    net_nic_send(s, port, i);
}

/* A new packet with room in the header table, or PKT_NONE (fatal). Not
 * zeroed: its callers (pkt_copy, ep_send) write all of it. */
static uint32_t pkt_new(arb_sim *s)
{
    uint32_t i = pool_alloc_raw(&s->pool);
    if (i == PKT_NONE || hdr_room(s, i) < 0) {
        if (i != PKT_NONE) pool_release(&s->pool, i);
        fatal(s, ARB_ENOMEM);
        return PKT_NONE;
    }
    return i;
}

/* A packet for an engine to send (ep_send writes all of it): the received
 * packet its host is handling (host_process), or a new one. */
static uint32_t pkt_take(arb_sim *s)
{
    struct arbor_job *a = s->arb;
    uint32_t i = a->spare;
    if (i == NONE) return pkt_new(s);
    a->spare = NONE;
    return i;
}

/* The engines' send callback. */
/* Values mode: a payload buffer holding `len` bytes of `payload`, or NONE. */
static uint32_t put_payload(arb_sim *s, const uint8_t *payload, size_t len)
{
    uint32_t b = buf_get(s);
    if (b != NONE) memcpy(s->arb->bp.buf[b], payload, len);
    return b;
}

/* Where an engine's packet goes: up its tree (psn ROUTE_TREE, port the tree's
 * up port) or unicast from its NIC (ROUTE_UNICAST); *dst_host: the
 * destination host, NONE for the group. */
static uint32_t send_route(const arb_hep *e, const arb_ep_dst *dst, const arb_hdr *h,
                           uint32_t *port, uint32_t *dst_host)
{
    const arb_plan_channel *c = e->c;
    int via_tree = dst->kind == ARB_EP_DST_GROUP ||
                   (dst->kind == ARB_EP_DST_RESPONDER && h->packet_type == ARB_PT_DATA_REQUEST &&
                    !h->repair && h->agg_depth > 0);
    if (via_tree) {
        *dst_host = dst->kind == ARB_EP_DST_GROUP ? NONE : c->responder_host;
        *port = e->tree_port[dst->subchannel];
        return ROUTE_TREE;
    }
    const arb_plan *p = ej(e)->p;
    *dst_host = dst->kind == ARB_EP_DST_MEMBER ? p->ranks[p->members[c->first_member + dst->member]]
                                               : c->responder_host;
    *port = e->nic_port;
    return ROUTE_UNICAST;
}

/* ECN echo: the request that answers a credit marked CE carries CE, so
 * that a mark anywhere on the loop (the credit's way down included) reaches
 * the responder in the aggregate, as a receiver's echo does for a sender. */
static uint8_t echo_ce(const arb_sim *s, const arb_hdr *h)
{
    return s->arb->echo_ce && h->packet_type == ARB_PT_DATA_REQUEST && !h->repair ? PF_CE : 0;
}

/* A packet of a retry (attempt >= 1) or of the bypass repair leaves a
 * host: its payload is sent again; a credit among them is a responder's
 * answer to a loss it found (arb_sim_arbor_counters). */
static SIM_COLD void resent(struct arbor_job *a, const arb_hdr *h, uint32_t plen, arb_time now)
{
    a->resent_bytes += plen;
    if (h->packet_type != ARB_PT_RESPONSE || !h->credit_valid) return;
    a->resends++;
    if (a->watching && now >= a->watch_from) {
        a->watch_hit = now;
        a->watching = 0;
    }
}

/* The engines' send callback. */
static void ep_send(void *ctx, const arb_ep_dst *dst, const arb_hdr *h, const uint8_t *payload,
                    size_t len)
{
    arb_hep *e = ctx;
    struct ajob *j = ej(e);
    arb_sim *s = j->s;
    uint32_t i = pkt_take(s);
    if (i == PKT_NONE) return;
    j->a->hdr[i] = *h;
    uint32_t aux = NONE, plen;
    if (!j->cfg.values) {
        plen = virtual_len(j, e->c, h);
    } else {
        plen = (uint32_t)len;
        if (len && (aux = put_payload(s, payload, len)) == NONE) {
            pool_release(&s->pool, i);
            fatal(s, ARB_ENOMEM);
            return;
        }
    }
    if (j->cfg.wire_check) wire_check(s, j->ch_base + e->ch, h, len);
    if (h->repair || h->attempt) resent(s->arb, h, plen, s->now);
    uint32_t port, dst_host;
    uint32_t route = send_route(e, dst, h, &port, &dst_host);
    *pool_get(&s->pool, i) = (struct pkt){.next = PKT_NONE,
                                          .conn = j->ch_base + e->ch,
                                          .src = e->host,
                                          .dst = dst_host,
                                          .psn = route | j->port << 1,
                                          .aux = aux,
                                          .qp = e->c->first_tree + dst->subchannel,
                                          .in_port = PKT_NONE,
                                          .ts = s->now,
                                          .bytes = (uint16_t)wire_of(h, plen),
                                          .payload = (uint16_t)plen,
                                          .sport = (uint16_t)dst->subchannel,
                                          .kind = PK_ARBOR,
                                          .flags = (uint8_t)(PF_ECT | echo_ce(s, h))};
    j->a->acct[e->host].in++;
    host_send(s, port, i);
}

/* ---- switches ------------------------------------------------------------ */

/* The engine of job j's part of switch `node`'s pool. */
static inline size_t agg_index(const struct arbor_job *a, uint32_t node, const struct ajob *j)
{
    return (size_t)node * a->n_parts + j->part;
}

/* Job j's credit took `slot` of a pool at `node` (owner: its owner table):
 * the slot's previous owner loses it if it was live (the rotation came
 * back to it), j holds one more there. */
static inline void slot_taken(struct arbor_job *a, struct ajob *j, uint32_t node, uint32_t *owner,
                              uint32_t slot)
{
    uint32_t o = owner[slot];
    if (o & SLOT_LIVE) a->jobs[o & ~SLOT_LIVE]->live_at[node]--;
    owner[slot] = j->index | SLOT_LIVE;
    if (++j->live_at[node] > j->res.peak_job_slots) j->res.peak_job_slots = j->live_at[node];
}

/* `slot` completed: its owner holds one fewer at `node`. */
static inline void slot_freed(struct arbor_job *a, uint32_t node, uint32_t *owner, uint32_t slot)
{
    uint32_t o = owner[slot];
    if (!(o & SLOT_LIVE)) return;
    a->jobs[o & ~SLOT_LIVE]->live_at[node]--;
    owner[slot] = o & ~SLOT_LIVE;
}

/* Queue packet i (its in_port set) on `port`, or drop it there is none. */
static void sw_send(arb_sim *s, uint32_t node, uint32_t port, uint32_t i)
{
    if (port == NONE || port >= s->n_ports || s->sp[port].failed) {
        s->st.unroutable++;
        arbor_pkt_drop(s, node, i);
        return;
    }
    net_enqueue(s, port, i);
}

static void sw_out(arb_sim *s, uint32_t node, uint32_t in_port, uint32_t port, uint32_t i)
{
    pool_get(&s->pool, i)->in_port = in_port;
    sw_send(s, node, port, i);
}

static void sw_unicast(arb_sim *s, uint32_t node, uint32_t in_port, uint32_t i)
{
    struct pkt *k = pool_get(&s->pool, i);
    k->psn |= ROUTE_UNICAST; /* the job's port above the route bit stays */
    arb_sim_pkt_info f = pkt_info(k);
    uint32_t out = s->cfg.route(s->cfg.route_ctx, s, node, in_port, &f, s->now);
    sw_out(s, node, in_port, out, i);
}

/* A copy of packet i (header, payload reference), or PKT_NONE. */
static uint32_t pkt_copy(arb_sim *s, uint32_t i)
{
    struct arbor_job *a = s->arb;
    uint32_t c = pkt_new(s);
    if (c == PKT_NONE) return PKT_NONE;
    *pool_get(&s->pool, c) = *pool_get(&s->pool, i);
    a->hdr[c] = a->hdr[i];
    uint32_t b = pool_get(&s->pool, c)->aux;
    if (b != NONE) a->bp.ref[b]++;
    return c;
}

uint32_t arbor_pkt_dup(arb_sim *s, uint32_t port, uint32_t i)
{
    uint32_t c = pkt_copy(s, i);
    if (c != PKT_NONE) s->arb->acct[s->owner[port]].copies++;
    return c;
}

/* Packet i to every child port of entry e: copies for all but the first. */
static void replicate(arb_sim *s, struct ajob *j, uint32_t node, uint32_t in_port,
                      const arb_plan_entry *e, uint32_t i)
{
    uint32_t n = e->n_children;
    if (n == 0) {
        arbor_pkt_drop(s, node, i);
        return;
    }
    const uint32_t *ports = j->p->child_ports + e->first_child;
    pool_get(&s->pool, i)->in_port = in_port; /* the copies inherit it */
    uint32_t made = 0;
    for (uint32_t c = 1; c < n; c++) {
        uint32_t cp = pkt_copy(s, i);
        if (cp == PKT_NONE) break;
        made++;
        sw_send(s, node, ports[c], cp);
    }
    s->arb->acct[node].copies += made;
    j->res.copies += made;
    sw_send(s, node, ports[0], i);
}

/* A credit at a switch: up toward the root, or (arriving from above, or at
 * the root) through the aggregator where it aggregates, then to every child. */
static void sw_response(arb_sim *s, struct ajob *j, uint32_t node, uint32_t in_port, uint32_t i,
                        const arb_plan_entry *e)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    arb_hdr *h = &a->hdr[i];
    int down = e->up_port == NONE || in_port == e->up_port;
    if (!down) {
        sw_out(s, node, in_port, e->up_port, i);
        return;
    }
    if (e->aggregate && h->credit_valid && !h->repair) {
        arb_agg_result r;
        uint32_t lp = in_port - s->nodes[node].first_port;
        const uint8_t *cpl = k->aux != NONE ? a->bp.buf[k->aux] : NULL;
        size_t cplen = k->aux != NONE ? k->payload : 0;
        /* Headers here were built by the engines (valid by construction, and
         * round-tripped under --wire-check): the engines skip re-validation. */
        assert(arb_hdr_validate(h, cplen) == 0);
        size_t g = agg_index(a, node, j);
        int rc = arb_agg_recv_trusted(a->agg[g], h, cpl, cplen, k->conn, lp, k->flags & PF_CE,
                                      s->now, &r);
        if (rc < 0 || r.action != ARB_AGG_FORWARD) {
            if (rc < 0) fatal(s, rc);
            arbor_pkt_drop(s, node, i);
            return;
        }
        if (r.reason == ARB_AGG_R_PUSH) slot_taken(a, j, node, a->owner[g], (uint32_t)r.slot);
        if (j->cfg.wire_check) wire_check(s, k->conn, h, k->aux != NONE ? k->payload : 0);
    }
    replicate(s, j, node, in_port, e, i);
}

/* The aggregator's AGG_MISS replaces request i: unicast to the responder. */
static void sw_miss(arb_sim *s, const struct ajob *j, uint32_t node, uint32_t in_port, uint32_t i,
                    const arb_agg_result *r)
{
    struct pkt *k = pool_get(&s->pool, i);
    arb_hdr *h = &s->arb->hdr[i];
    *h = r->hdr;
    buf_put(s, k->aux);
    k->aux = NONE;
    k->payload = 0;
    k->flags = (uint8_t)((k->flags & ~PF_CE) | (r->ce ? PF_CE : 0) | PF_SWITCH);
    k->bytes = (uint16_t)wire_of(h, 0);
    if (j->cfg.wire_check) wire_check(s, k->conn, h, 0);
    sw_unicast(s, node, in_port, i);
}

/* The aggregate replaces request i (values: in a new payload buffer). 0, or
 * -1 when the packet was dropped. */
static int sw_aggregate(arb_sim *s, uint32_t node, uint32_t i, const arb_agg_result *r)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    a->hdr[i] = r->hdr;
    if (a->values && r->payload && r->payload_len) {
        uint32_t b = buf_get(s);
        if (b == NONE) {
            fatal(s, ARB_ENOMEM);
            arbor_pkt_drop(s, node, i);
            return -1;
        }
        memcpy(a->bp.buf[b], r->payload, r->payload_len);
        buf_put(s, k->aux);
        k->aux = b;
        k->payload = (uint16_t)r->payload_len;
    }
    k->flags = (uint8_t)((k->flags & ~PF_CE) | (r->ce ? PF_CE : 0));
    return 0;
}

/* A normal request climbing a tree: to the aggregator where the entry
 * aggregates, up the entry's up port otherwise; at the root (or with the
 * location stack empty) unicast to the responder. */
static void sw_request(arb_sim *s, struct ajob *j, uint32_t node, uint32_t in_port, uint32_t i,
                       const arb_plan_entry *e)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    arb_hdr *h = &a->hdr[i];
    if (!e->aggregate) {
        if (e->up_port == NONE)
            sw_unicast(s, node, in_port, i);
        else
            sw_out(s, node, in_port, e->up_port, i);
        return;
    }
    arb_agg_result r;
    uint32_t lp = in_port - s->nodes[node].first_port;
    const uint8_t *pl = k->aux != NONE ? a->bp.buf[k->aux] : NULL;
    size_t plen = k->aux != NONE ? k->payload : 0;
    assert(arb_hdr_validate(h, plen) == 0); /* built by an engine: see sw_response */
    size_t g = agg_index(a, node, j);
    int rc =
        arb_agg_recv_trusted(a->agg[g], h, pl, plen, k->conn, lp, k->flags & PF_CE, s->now, &r);
    if (rc < 0) {
        fatal(s, rc);
        arbor_pkt_drop(s, node, i);
        return;
    }
    switch (r.action) {
    case ARB_AGG_CONSUMED:
        a->acct[node].consumed++;
        pkt_free(s, i);
        return;
    case ARB_AGG_DROP:
        j->res.agg_drops++;
        arbor_pkt_drop(s, node, i);
        return;
    case ARB_AGG_EMIT_MISS:
        sw_miss(s, j, node, in_port, i, &r);
        return;
    case ARB_AGG_EMIT_AGGREGATE:
        slot_freed(a, node, a->owner[g], (uint32_t)r.slot);
        if (sw_aggregate(s, node, i, &r) < 0) return;
        break;
    default: /* FORWARD: a fan-in-1 pop, or unchanged */
        break;
    }
    k->flags |= PF_SWITCH;
    k->bytes = (uint16_t)wire_of(h, k->payload);
    if (j->cfg.wire_check) wire_check(s, k->conn, h, k->aux != NONE ? k->payload : 0);
    if (e->up_port == NONE || h->agg_depth == 0)
        sw_unicast(s, node, in_port, i);
    else
        sw_out(s, node, in_port, e->up_port, i);
}

void arbor_switch(arb_sim *s, uint32_t port, uint32_t node, uint32_t in_port, uint32_t i)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    a->acct[node].in++;
    struct ajob *j = job_of(s, k->conn);
    count_sent(j, port, k);
    if ((k->psn & 1u) == ROUTE_UNICAST) {
        sw_unicast(s, node, in_port, i);
        return;
    }
    uint32_t ei = entry_of(j, node, k->qp);
    if (ei == NONE) {
        s->st.unroutable++;
        arbor_pkt_drop(s, node, i);
        return;
    }
    const arb_plan_entry *e = &j->p->entries[ei];
    const arb_hdr *h = &a->hdr[i];
    if (h->packet_type == ARB_PT_RESPONSE)
        sw_response(s, j, node, in_port, i, e);
    else if (h->packet_type == ARB_PT_DATA_REQUEST && !h->repair && h->agg_depth > 0)
        sw_request(s, j, node, in_port, i, e);
    else /* other packets on a tree (none today): unicast */
        sw_unicast(s, node, in_port, i);
}

/* ---- hosts --------------------------------------------------------------- */

static void arm(arb_sim *s, uint32_t h, arb_time t)
{
    struct arbor_job *a = s->arb;
    if (t == ARB_TIME_NEVER || a->timer_at[h] <= t) return;
    if (t < s->now) t = s->now;
    int64_t seq = evq_push(&s->q, t, (s->n_ports << 2) + s->n_hosts + h);
    if (seq < 0) {
        fatal(s, (int)seq);
        return;
    }
    a->timer_at[h] = t;
    a->timer_seq[h] = (uint64_t)seq;
}

/* Engine e gave up: what it lost, in hosts (the first failure is kept). */
static void note_failure(arb_sim *s, const arb_hep *e)
{
    arb_sim_arbor_failure *f = &s->arb->failure;
    const struct ajob *j = ej(e);
    const arb_plan *p = j->p;
    const arb_plan_channel *c = e->c;
    if (f->failed) return;
    f->failed = 1;
    f->job = j->index;
    f->channel = e->ch;
    f->responder_host = c->responder_host;
    if (e->q) {
        f->requester = 1;
        f->n_missing = 1;
        f->missing_hosts[0] = e->host;
        return;
    }
    arb_responder_failure rf;
    arb_responder_get_failure(e->r, &rf);
    f->end_wait = rf.end_wait;
    f->offset = rf.offset;
    f->subchannel = rf.subchannel;
    f->attempts = rf.attempts;
    f->tries = rf.tries;
    f->waited = rf.waited;
    f->n_missing = rf.n_missing;
    uint32_t k = 0;
    for (uint32_t m = 0; m < c->n_members && k < 16; m++)
        if ((rf.missing[m >> 6] >> (m & 63)) & 1)
            f->missing_hosts[k++] = p->ranks[p->members[c->first_member + m]];
}

int arb_sim_arbor_failure_get(const arb_sim *s, arb_sim_arbor_failure *out)
{
    if (!s || !s->arb || !out) return ARB_EINVAL;
    *out = s->arb->failure;
    return 0;
}

/* The rank driver's on_failure: engine e gave up, the run fails. */
static void on_failure_cb(arb_hep *e)
{
    arb_sim *s = ej(e)->s;
    note_failure(s, e);
    fatal(s, ARB_ETIMEDOUT);
}

/* Rank r of job j is done: report it after the event (the simulator's
 * done list, as a flow's end), so that the callback may add flows and jobs. */
static SIM_COLD void note_rank(arb_sim *s, struct ajob *j, uint32_t r)
{
    struct arbor_job *a = s->arb;
    j->reported[r] = 1;
    if (a->n_notes == a->cap_notes) {
        uint32_t cap = a->cap_notes ? a->cap_notes * 2 : 64;
        struct rnote *n = realloc(a->notes, cap * sizeof *n);
        if (!n) {
            fatal(s, ARB_ENOMEM);
            return;
        }
        a->notes = n;
        a->cap_notes = cap;
    }
    if (a->n_notes == 0) sim_note_done(s, SIM_ARBOR_NOTE);
    a->notes[a->n_notes++] = (struct rnote){j->index, r};
}

/* After a call on engine e: its rank may just be done (a rank's condition
 * moves only in calls on its own engines). */
static inline void rank_check(arb_sim *s, struct ajob *j, const arb_hep *e)
{
    if (j->cfg.on_rank_done && !j->reported[e->rank] &&
        j->host->rank_done[e->rank] != ARB_TIME_NEVER)
        note_rank(s, j, e->rank);
}

void arbor_report(arb_sim *s)
{
    struct arbor_job *a = s->arb;
    /* by index: a callback may enter ranks, which reports nothing at once */
    for (uint32_t x = 0; a && x < a->n_notes; x++) {
        struct ajob *j = a->jobs[a->notes[x].job];
        j->cfg.on_rank_done(j->cfg.rank_ctx, s, (int)j->index, a->notes[x].rank, s->now);
    }
    if (a) a->n_notes = 0;
}

static inline void host_process(arb_sim *s, uint32_t host, uint32_t i);
static int host_engines(arb_sim *s, struct ajob *j, uint32_t h, int start, arb_time *next);
static void host_idle(struct ajob *j, uint32_t h);

void arbor_host_recv(arb_sim *s, uint32_t port, uint32_t host, uint32_t i)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    count_sent(job_of(s, k->conn), port, k);
    if (a->lag && a->lag[host]) {
        k->ts = s->now + a->lag[host];
        plist_push(&s->pool, &a->held[host], i);
        a->n_held++;
        arm(s, host, k->ts);
        return;
    }
    host_process(s, host, i);
}

/* Where a packet for a responder comes from: a member index, a switch, or
 * not a member. */
static int sender_of(const struct ajob *j, const struct pkt *k)
{
    const arb_plan_channel *c = &j->p->channels[k->conn - j->ch_base];
    if (k->flags & PF_SWITCH) return ARB_EP_FROM_SWITCH;
    uint32_t r = j->rank_of_host[k->src];
    if (r == NONE || k->src == c->responder_host) return ARB_EP_NOT_MEMBER;
    return (int)(r - (r > c->responder));
}

/* Hand packet i to its host's engine. The engine reads a copy of the header
 * and may reuse the packet itself for its first reply (pkt_take); the
 * payload buffer is released only after the engine is done with it. */
static inline void host_process(arb_sim *s, uint32_t host, uint32_t i)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    a->acct[host].in++;
    a->acct[host].delivered++;
    s->st.pkts_delivered++;
    struct ajob *j = job_of(s, k->conn);
    uint32_t x = j->ep_of[(size_t)host * j->n_channels + (k->conn - j->ch_base)];
    if (x == NONE) {
        pkt_free(s, i);
        return;
    }
    arb_hep *e = &j->eps[x];
    arb_hdr h = a->hdr[i];
    uint32_t aux = k->aux;
    const uint8_t *pl = aux != NONE ? a->bp.buf[aux] : NULL;
    size_t len = aux != NONE ? k->payload : 0;
    a->spare = i;
    int from = e->r ? sender_of(j, k) : 0;
    int ce = (k->flags & PF_CE) != 0;
    assert(e->r || arb_hdr_validate(&h, len) == 0); /* built by an engine: see arbor_switch */
    a->echo_ce = (uint8_t)(!e->r && ce); /* a request answering this credit echoes its CE */
    arb_time t = arb_host_deliver(e, &h, pl, len, from, k->sport, ce, 1, s->now);
    a->echo_ce = 0;
    if (t != ARB_TIME_NEVER) {
        arm(s, e->host, t);
        j->idle[e->rank] = 0; /* its timer serves the job again */
    }
    rank_check(s, j, e);
    if (a->spare == i) {
        a->spare = NONE;
        pkt_free(s, i);
    } else {
        buf_put(s, aux); /* the packet left as the engine's reply */
    }
}

void arbor_on_timer(arb_sim *s, uint32_t h, uint64_t seq)
{
    struct arbor_job *a = s->arb;
    if (!a || seq != a->timer_seq[h] || a->timer_at[h] != s->now) return;
    a->timer_at[h] = ARB_TIME_NEVER;
    arb_time next = ARB_TIME_NEVER;
    if (a->held) {
        struct plist *l = &a->held[h];
        while (l->head != PKT_NONE && pool_get(&s->pool, l->head)->ts <= s->now) {
            a->n_held--;
            host_process(s, h, plist_pop(&s->pool, l));
            if (s->error) return;
        }
        if (l->head != PKT_NONE) next = pool_get(&s->pool, l->head)->ts;
    }
    const struct hjobs *hl = &a->hj[h];
    for (uint32_t x = 0; x < hl->n; x++) {
        struct ajob *j = hl->v[x];
        uint32_t r = j->rank_of_host[h];
        if (j->idle[r]) continue;
        int start = !j->started[r];
        if (start && j->start_at[r] > s->now) { /* later, or not entered yet */
            if (j->start_at[r] < next) next = j->start_at[r];
            continue;
        }
        j->started[r] = 1;
        if (host_engines(s, j, h, start, &next) < 0) return;
    }
    arm(s, h, next);
}

/* Host h's engines of job j at its timer: started (`start`), or their
 * expiries served; *next: the earliest expiry left. -1: the run failed. */
static int host_engines(arb_sim *s, struct ajob *j, uint32_t h, int start, arb_time *next)
{
    for (uint32_t x = j->host_first[h]; x < j->host_first[h + 1]; x++) {
        arb_hep *e = &j->eps[j->host_eps[x]];
        const arb_plan_channel *c = &j->p->channels[e->ch];
        if (start) {
            uint64_t len = c->hi - c->lo;
            int rc = 0;
            if (e->r && j->cfg.values && len && c->kind != ARB_EP_PUSH &&
                c->kind != ARB_EP_BARRIER && !e->result) {
                e->result = malloc(len);
                if (!e->result) rc = ARB_ENOMEM;
            }
            if (rc == 0) rc = arb_host_start(e, NULL, e->r ? e->result : NULL, s->now);
            if (rc < 0) {
                fatal(s, rc);
                return -1;
            }
        } else {
            arb_host_expire(e, s->now);
        }
        arb_time t = arb_host_after(e, s->now);
        arm(s, e->host, t);
        if (t < *next) *next = t;
        rank_check(s, j, e);
    }
    host_idle(j, h);
    return 0;
}

/* Host h is through with job j when every engine it runs for it has
 * finished and waits for no timer: its timer skips the job from then on
 * (nothing would move). */
static void host_idle(struct ajob *j, uint32_t h)
{
    for (uint32_t x = j->host_first[h]; x < j->host_first[h + 1]; x++) {
        const arb_hep *e = &j->eps[j->host_eps[x]];
        if (!e->finished || arb_host_expiry(e) != ARB_TIME_NEVER) return;
    }
    j->idle[j->rank_of_host[h]] = 1;
}

/* ---- setup --------------------------------------------------------------- */

static void job_free(struct ajob *j)
{
    if (!j) return;
    for (uint32_t i = 0; j->eps && i < j->n_eps; i++) {
        cwin_free(e_committed(&j->eps[i]));
        free(j->eps[i].result);
    }
    arb_host_free(j->host);
    free(j->entry);
    free(j->agg_nodes);
    free(j->host_first);
    free(j->host_eps);
    free(j->ep_at);
    free(j->ep_of);
    free(j->tree_ports);
    free(j->pacct);
    free(j->rank_of_host);
    free(j->start_at);
    free(j->started);
    free(j->idle);
    free(j->reported);
    free(j->live_at);
    free(j);
}

void arbor_free(arb_sim *s)
{
    struct arbor_job *a = s->arb;
    if (!a) return;
    for (uint32_t x = 0; x < a->n_jobs; x++)
        job_free(a->jobs[x]);
    size_t n_agg = (size_t)arb_topo_n_nodes(s->topo) * a->n_parts;
    for (size_t g = 0; a->agg && g < n_agg; g++)
        arb_agg_free(a->agg[g]);
    for (size_t g = 0; a->owner && g < n_agg; g++)
        free(a->owner[g]);
    if (a->hj)
        for (uint32_t h = 0; h < s->n_hosts; h++)
            free(a->hj[h].v);
    for (uint32_t b = 0; b < a->bp.n; b++)
        free(a->bp.buf[b]);
    free(a->bp.buf);
    free(a->bp.ref);
    free(a->bp.free_ids);
    free(a->agg);
    free(a->owner);
    free(a->acct);
    free(a->timer_at);
    free(a->timer_seq);
    free(a->lag);
    free(a->held);
    free(a->hj);
    free(a->next_port);
    free(a->notes);
    free(a->chan_job);
    free(a->jobs);
    free(a->hdr);
    free(a);
    s->arb = NULL;
}

/* Per engine: its NIC port and the port up each subchannel's tree; per
 * host and channel: the engine a packet is for. */
static int route_engines(arb_sim *s, struct ajob *j)
{
    const arb_plan *p = j->p;
    uint32_t subs = p->cfg.subchannels;
    j->n_channels = p->n_channels;
    j->ep_of = malloc((size_t)s->n_hosts * p->n_channels * sizeof *j->ep_of);
    j->tree_ports = malloc((size_t)j->n_eps * subs * sizeof *j->tree_ports);
    if (!j->ep_of || !j->tree_ports) return ARB_ENOMEM;
    for (size_t i = 0; i < (size_t)s->n_hosts * p->n_channels; i++)
        j->ep_of[i] = NONE;
    for (uint32_t x = 0; x < j->n_eps; x++) {
        arb_hep *e = &j->eps[x];
        uint32_t *tp = &j->tree_ports[(size_t)x * subs];
        e->nic_port = s->hosts[e->host].nic_port;
        e->tree_port = tp;
        for (uint32_t u = 0; u < subs; u++) {
            uint32_t ei = entry_of(j, e->host, p->channels[e->ch].first_tree + u);
            tp[u] = ei != NONE ? p->entries[ei].up_port : e->nic_port;
        }
        j->ep_of[(size_t)e->host * p->n_channels + e->ch] = x;
    }
    return 0;
}

arb_time arb_sim_arbor_cc_loop(const arb_sim *s, const arb_plan *plan, uint32_t payload)
{
    if (!s || !plan) return 0;
    uint32_t frame = ARB_FRAME_OVERHEAD + plan->hdr_len + payload + ARB_WIRE_EXTRA;
    uint64_t rate = UINT64_MAX;
    for (uint32_t h = 0; h < plan->cfg.n_ranks; h++) {
        uint64_t r = s->ports[s->hosts[plan->ranks[h]].nic_port].rate;
        if (r && r < rate) rate = r;
    }
    if (rate == UINT64_MAX) return arb_sim_arbor_loop(s, plan, payload);
    /* a host takes part in every channel (a sharded collective) or one: a
     * credit of each can meet at its downlink; the requests they trigger
     * leave at the pace the credits arrived, so they do not queue again */
    uint32_t per_host = plan->n_channels > 1 ? plan->n_channels : 1;
    return arb_sim_arbor_loop(s, plan, payload) + (arb_time)per_host * arb_time_tx(frame, rate);
}

uint32_t arb_sim_arbor_window(const arb_sim *s, const arb_plan *plan, uint32_t payload)
{
    if (!s || !plan) return 0;
    uint32_t frame = ARB_FRAME_OVERHEAD + plan->hdr_len + payload + ARB_WIRE_EXTRA;
    uint64_t rate = UINT64_MAX;
    for (uint32_t h = 0; h < plan->cfg.n_ranks; h++) {
        uint64_t r = s->ports[s->hosts[plan->ranks[h]].nic_port].rate;
        if (r && r < rate) rate = r;
    }
    if (rate == UINT64_MAX) return ARB_SIM_ARBOR_WINDOW_MIN;
    uint32_t per_host = plan->n_channels > 1 ? plan->n_channels : 1;
    /* the loop's bits at the channel's share, over a frame's bits */
    double bits = (double)arb_sim_arbor_cc_loop(s, plan, payload) / (double)ARB_PS_PER_S *
                  (double)rate / per_host;
    double w = ceil(bits / (8.0 * frame));
    if (w > 65535) w = 65535;
    return w > ARB_SIM_ARBOR_WINDOW_MIN ? (uint32_t)w : ARB_SIM_ARBOR_WINDOW_MIN;
}

/* Engine e's controller: the job's kind and parameters, with the fabric's
 * line rate (its host's link), a full frame per credit, and its loop. */
static int channel_cc(arb_sim *s, const struct ajob *j, arb_hep *e)
{
    const arb_sim_arbor_config *cfg = &j->cfg;
    arb_cc_config c = cfg->cc;
    const arb_port *nic = &s->ports[s->hosts[e->host].nic_port];
    /* a channel's share of its host's link: every channel a host takes
     * part in moves a frame per credit across it */
    uint32_t per_host = j->p->n_channels > 1 ? j->p->n_channels : 1;
    c.line_rate = nic->rate / per_host ? nic->rate / per_host : 1;
    /* and its share of the link's headroom: Oscar's costs a link the sum
     * over the channels on it (docs/cc.md) */
    c.oscar.headroom /= per_host;
    c.credit_bytes = ARB_FRAME_OVERHEAD + j->p->hdr_len + cfg->payload + ARB_WIRE_EXTRA;
    c.base_rtt = cfg->cc_base_rtt ? cfg->cc_base_rtt : arb_sim_arbor_cc_loop(s, j->p, cfg->payload);
    if (cfg->cc_kind == ARB_CC_DISABLED || cfg->cc_kind == ARB_CC_FIXED || !c.window)
        c.window = cfg->window;
    if (c.window > c.window_max && cfg->cc_kind != ARB_CC_DISABLED && cfg->cc_kind != ARB_CC_FIXED)
        c.window = c.window_max;
    c.logger = s->cfg.log;
    return arb_cc_new(&e->cc, cfg->cc_kind, &c);
}

/* The rank driver's make_cc: channel_cc for the job's responders. */
static int job_cc(void *ctx, arb_hep *e, arb_cc **out)
{
    struct ajob *j = ctx;
    (void)out; /* channel_cc writes e->cc */
    return channel_cc(j->s, j, e);
}

static int make_engines(arb_sim *s, struct ajob *j)
{
    const arb_plan *p = j->p;
    const arb_sim_arbor_config *cfg = &j->cfg;
    arb_host_config hc;
    arb_host_config_default(&hc);
    hc.plan = p;
    hc.payload = cfg->payload;
    hc.window = cfg->window;
    hc.timeout = cfg->timeout;
    hc.timeout_min = j->floor;
    hc.retry = cfg->retry;
    hc.retry_min = cfg->retry_min ? cfg->retry_min : j->floor;
    if (hc.retry_min > hc.retry) hc.retry_min = hc.retry;
    hc.adaptive_timeout = cfg->adaptive_timeout;
    hc.order_detection = cfg->order_detection;
    hc.dynamic_subchannels = cfg->dynamic_subchannels;
    hc.attempts = cfg->attempts;
    hc.miss_limit = cfg->miss_limit;
    hc.dead_after = cfg->dead_after;
    hc.repair_tries = cfg->repair_tries;
    hc.header_only = !cfg->values;
    hc.send = ep_send;
    hc.fill = cfg->values ? fill_cb : NULL;
    hc.on_commit = on_commit_cb;
    hc.on_result = cfg->values ? on_result_cb : NULL; /* arb_host_results */
    hc.make_cc = job_cc;
    hc.on_failure = on_failure_cb;
    hc.ctx = j;
    hc.logger = s->cfg.log;
    int rc = arb_host_new(&j->host, &hc);
    if (rc < 0) return rc;
    j->eps = (arb_hep *)(void *)j->host->eps;
    j->n_eps = j->host->n_eps;
    j->host_first = calloc(s->n_hosts + 1, sizeof *j->host_first);
    j->host_eps = calloc(j->n_eps, sizeof *j->host_eps);
    j->ep_at = malloc((size_t)p->cfg.n_ranks * p->n_channels * sizeof *j->ep_at);
    if (!j->host_first || !j->host_eps || !j->ep_at) return ARB_ENOMEM;
    for (size_t i = 0; i < (size_t)p->cfg.n_ranks * p->n_channels; i++)
        j->ep_at[i] = NONE;
    for (uint32_t x = 0; x < j->n_eps; x++) {
        arb_hep *e = &j->eps[x];
        j->ep_at[(size_t)e->rank * p->n_channels + e->ch] = x;
        j->host_first[e->host + 1]++;
        if (e->r) {
            e->committed = calloc(1, sizeof(struct cwin));
            if (!e->committed) return ARB_ENOMEM;
        }
    }
    for (uint32_t h = 0; h < s->n_hosts; h++)
        j->host_first[h + 1] += j->host_first[h];
    uint32_t *fill = calloc(s->n_hosts, sizeof *fill);
    if (!fill) return ARB_ENOMEM;
    for (uint32_t i = 0; i < j->n_eps; i++) {
        uint32_t h = j->eps[i].host;
        j->host_eps[j->host_first[h] + fill[h]++] = i;
    }
    free(fill);
    return route_engines(s, j);
}

/* What the jobs share, made with the first job: its payload, slots and mode
 * become every job's (one slot pool per switch, one buffer pool). */
static int arbor_state(arb_sim *s, const arb_sim_arbor_config *cfg)
{
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    struct arbor_job *a = calloc(1, sizeof *a);
    if (!a) return ARB_ENOMEM;
    s->arb = a;
    a->bp.size = cfg->payload;
    a->payload = cfg->payload;
    a->slots = cfg->slots;
    a->values = cfg->values;
    a->spare = NONE;
    a->watch_hit = ARB_TIME_NEVER;
    a->n_parts = cfg->partitions > 1 ? cfg->partitions : 1;
    a->agg = calloc((size_t)n_nodes * a->n_parts, sizeof *a->agg);
    a->owner = calloc((size_t)n_nodes * a->n_parts, sizeof *a->owner);
    a->acct = calloc(n_nodes, sizeof *a->acct);
    a->timer_at = malloc(s->n_hosts * sizeof *a->timer_at);
    a->timer_seq = calloc(s->n_hosts, sizeof *a->timer_seq);
    a->hj = calloc(s->n_hosts, sizeof *a->hj);
    a->next_port = calloc(s->n_hosts, sizeof *a->next_port);
    if (!a->agg || !a->owner || !a->acct || !a->timer_at || !a->timer_seq || !a->hj ||
        !a->next_port) {
        arbor_free(s);
        return ARB_ENOMEM;
    }
    for (uint32_t h = 0; h < s->n_hosts; h++)
        a->timer_at[h] = ARB_TIME_NEVER;
    return 0;
}

/* The engine of part `part` of switch `node`'s pool, made if it has none
 * yet: the whole pool (slots), shared by every job, or with a partitioned
 * pool (n_parts > 1) an equal share of it, used by the jobs of that part
 * only: a static partition is disjoint pools. ARB_EINVAL: a switch of more
 * than 256 ports. */
static int pool_part(arb_sim *s, uint32_t node, uint32_t part)
{
    struct arbor_job *a = s->arb;
    size_t g = (size_t)node * a->n_parts + part;
    if (a->agg[g]) return 0;
    const arb_node *nd = &s->nodes[node];
    uint32_t radix = (uint32_t)nd->n_down + nd->n_up;
    if (radix > ARB_AGG_PORTS_MAX) return ARB_EINVAL;
    arb_agg_config ac;
    arb_agg_config_default(&ac);
    ac.slots = a->slots / a->n_parts;
    ac.max_payload = a->payload;
    ac.header_only = !a->values;
    ac.ports = radix;
    ac.logger = s->cfg.log;
    a->owner[g] = calloc(ac.slots, sizeof *a->owner[g]);
    if (!a->owner[g]) return ARB_ENOMEM;
    return arb_agg_new(&a->agg[g], &ac);
}

/* The job's tree tables, and an aggregator on every switch where it
 * aggregates that has none yet for its part of the pool (one pool per
 * switch shared by jobs, unless partitioned). */
static int job_trees(arb_sim *s, struct ajob *j)
{
    const arb_plan *p = j->p;
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    uint8_t *mark = calloc(n_nodes, 1);
    if (!mark) return ARB_ENOMEM;
    int rc = 0;
    for (uint32_t t = 0; t < p->n_trees && rc == 0; t++) {
        const arb_plan_tree *tr = &p->trees[t];
        for (uint32_t x = 0; x < tr->n_entries && rc == 0; x++) {
            const arb_plan_entry *e = &p->entries[tr->first_entry + x];
            j->entry[(size_t)e->node * p->n_trees + t] = tr->first_entry + x;
            if (!e->aggregate) continue;
            if (!mark[e->node]) j->n_agg_nodes++;
            mark[e->node] = 1;
            rc = pool_part(s, e->node, j->part);
        }
    }
    j->agg_nodes = malloc((j->n_agg_nodes ? j->n_agg_nodes : 1) * sizeof *j->agg_nodes);
    if (rc == 0 && !j->agg_nodes) rc = ARB_ENOMEM;
    for (uint32_t n = 0, k = 0; rc == 0 && n < n_nodes; n++)
        if (mark[n]) j->agg_nodes[k++] = n;
    free(mark);
    return rc;
}

/* Values mode: the expected sums and the tolerance of float results. */
static void job_values(struct ajob *j)
{
    const arb_plan *p = j->p;
    uint32_t N = p->cfg.n_ranks;
    for (uint32_t x = 0; x < 17; x++) {
        j->sum17[x] = 0;
        for (uint32_t r = 0; r < N; r++)
            j->sum17[x] += (int32_t)((7u * r + x) % 17u);
    }
    static const int mant[ARB_DTYPE_COUNT] = {11, 8, 24, 53, 63, 63};
    double bound = 8.0 * N;
    j->tol =
        bound <= ldexp(1.0, mant[p->cfg.dtype]) ? 0 : N * bound * ldexp(1.0, -mant[p->cfg.dtype]);
}

/* A job with its tables, aggregators and engines, not yet registered. */
static int job_new(arb_sim *s, const arb_sim_arbor_config *cfg, struct ajob **out)
{
    struct arbor_job *a = s->arb;
    const arb_plan *p = cfg->plan;
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    struct ajob *j = calloc(1, sizeof *j);
    *out = j;
    if (!j) return ARB_ENOMEM;
    j->s = s;
    j->a = a;
    j->index = a->n_jobs;
    j->ch_base = a->n_chan;
    j->cfg = *cfg;
    if (!j->cfg.window) j->cfg.window = arb_sim_arbor_window(s, p, cfg->payload);
    j->p = p;
    j->n_trees = p->n_trees;
    j->part = j->index % a->n_parts;
    j->res.correct = cfg->values ? 1 : -1;
    j->entry = malloc((size_t)n_nodes * p->n_trees * sizeof *j->entry);
    j->rank_of_host = malloc(s->n_hosts * sizeof *j->rank_of_host);
    j->pacct = calloc(s->n_ports, sizeof *j->pacct);
    uint32_t R = p->cfg.n_ranks;
    j->start_at = malloc(R * sizeof *j->start_at);
    j->started = calloc(R, 1);
    j->idle = calloc(R, 1);
    j->reported = calloc(R, 1);
    j->live_at = calloc(n_nodes, sizeof *j->live_at);
    if (!j->entry || !j->rank_of_host || !j->pacct || !j->start_at || !j->started || !j->idle ||
        !j->reported || !j->live_at)
        return ARB_ENOMEM;
    for (uint32_t r = 0; r < R; r++)
        j->start_at[r] = ARB_TIME_NEVER;
    for (size_t i = 0; i < (size_t)n_nodes * p->n_trees; i++)
        j->entry[i] = NONE;
    for (uint32_t h = 0; h < s->n_hosts; h++)
        j->rank_of_host[h] = NONE;
    for (uint32_t r = 0; r < p->cfg.n_ranks; r++)
        j->rank_of_host[p->ranks[r]] = r;
    j->floor = cfg->timeout_min ? cfg->timeout_min : 2 * arb_sim_arbor_loop(s, p, cfg->payload);
    if (j->floor < ARB_EP_TIMER_MIN) j->floor = ARB_EP_TIMER_MIN;
    if (j->floor > cfg->timeout) j->floor = cfg->timeout;
    int rc = job_trees(s, j);
    if (rc == 0) rc = make_engines(s, j);
    if (rc == 0) job_values(j);
    return rc;
}

/* Room for one more job in host h's list. */
static int hjobs_room(struct hjobs *l)
{
    if (l->n < l->cap) return 0;
    uint32_t cap = l->cap ? l->cap * 2 : 2;
    struct ajob **v = realloc(l->v, cap * sizeof *v);
    if (!v) return ARB_ENOMEM;
    l->v = v;
    l->cap = cap;
    return 0;
}

/* The job joins the simulator: its channels, its hosts. Its channels'
 * UDP port is the first one none of its hosts has given an earlier job:
 * jobs on disjoint hosts all keep SIM_ARBOR_DPORT, and a host's jobs have
 * channels of different names. ARB_ERANGE past the last UDP port. */
static int job_register(arb_sim *s, struct ajob *j)
{
    struct arbor_job *a = s->arb;
    const arb_plan *p = j->p;
    uint32_t port = 0;
    for (uint32_t r = 0; r < p->cfg.n_ranks; r++) {
        uint32_t h = p->ranks[r];
        if (a->next_port[h] > port) port = a->next_port[h];
        if (hjobs_room(&a->hj[h]) < 0) return ARB_ENOMEM;
    }
    if (port > 65535u - SIM_ARBOR_DPORT) return ARB_ERANGE;
    uint32_t n_chan = a->n_chan + p->n_channels;
    if (n_chan > a->cap_chan) {
        uint32_t cap = a->cap_chan ? a->cap_chan : 64;
        while (cap < n_chan)
            cap *= 2;
        struct ajob **nc = realloc(a->chan_job, cap * sizeof *nc);
        if (!nc) return ARB_ENOMEM;
        a->chan_job = nc;
        a->cap_chan = cap;
    }
    struct ajob **nj = realloc(a->jobs, (a->n_jobs + 1) * sizeof *nj);
    if (!nj) return ARB_ENOMEM;
    a->jobs = nj;
    a->jobs[a->n_jobs++] = j;
    for (uint32_t c = a->n_chan; c < n_chan; c++)
        a->chan_job[c] = j;
    a->n_chan = n_chan;
    j->port = port;
    for (uint32_t r = 0; r < p->cfg.n_ranks; r++) {
        uint32_t h = p->ranks[r];
        a->next_port[h] = port + 1;
        a->hj[h].v[a->hj[h].n++] = j;
    }
    return 0;
}

/* Lag mode: rank r's host handles its packets r x skew late. */
static int job_lag(arb_sim *s, const struct ajob *j)
{
    struct arbor_job *a = s->arb;
    if (!a->lag) {
        a->lag = calloc(s->n_hosts, sizeof *a->lag);
        a->held = malloc(s->n_hosts * sizeof *a->held);
        if (!a->lag || !a->held) return ARB_ENOMEM;
        for (uint32_t h = 0; h < s->n_hosts; h++)
            a->held[h].head = a->held[h].tail = PKT_NONE;
    }
    for (uint32_t r = 0; r < j->p->cfg.n_ranks; r++)
        a->lag[j->p->ranks[r]] = (arb_time)r * j->cfg.skew;
    return 0;
}

/* Every rank's host timer at its start time (skew). */
static int job_start(arb_sim *s, struct ajob *j)
{
    const arb_sim_arbor_config *cfg = &j->cfg;
    const arb_plan *p = j->p;
    if (cfg->deferred) { /* each rank at arb_sim_arbor_enter */
        j->res.start = ARB_TIME_NEVER;
        return s->error;
    }
    j->res.start = cfg->start < s->now ? s->now : cfg->start;
    uint64_t g = cfg->seed;
    if (cfg->skew && cfg->skew_random == 2 && job_lag(s, j) < 0) return ARB_ENOMEM;
    for (uint32_t r = 0; r < p->cfg.n_ranks; r++) {
        uint32_t h = p->ranks[r];
        arb_time at = j->res.start;
        if (cfg->skew && cfg->skew_random == 1)
            at += splitmix(&g) % (cfg->skew + 1);
        else if (!cfg->skew_random)
            at += (arb_time)r * cfg->skew;
        j->start_at[r] = at;
        if (j->host_first[h + 1] > j->host_first[h]) arm(s, h, at);
    }
    return s->error;
}

/* ARB_EINVAL when cfg cannot run beside the jobs already added: the slot
 * pools and payload buffers are common (slots, their partition, payload,
 * mode), and a host that delays its packets (skew mode lag) does so for
 * one job only. */
static int job_fits(const arb_sim *s, const arb_sim_arbor_config *cfg)
{
    const struct arbor_job *a = s->arb;
    uint32_t parts = cfg->partitions > 1 ? cfg->partitions : 1;
    if (parts > ARB_AGG_SLOTS_MAX || cfg->slots / parts == 0) return ARB_EINVAL;
    if (cfg->deferred && cfg->skew && cfg->skew_random == 2) return ARB_EINVAL;
    if (!a) return 0;
    if (cfg->values != a->values || cfg->payload != a->payload || cfg->slots != a->slots ||
        parts != a->n_parts)
        return ARB_EINVAL;
    int lag = cfg->skew && cfg->skew_random == 2;
    for (uint32_t r = 0; r < cfg->plan->cfg.n_ranks; r++) {
        uint32_t h = cfg->plan->ranks[r];
        if ((lag && a->hj[h].n) || (a->lag && a->lag[h])) return ARB_EINVAL;
    }
    return 0;
}

int arb_sim_arbor_add(arb_sim *s, const arb_sim_arbor_config *cfg)
{
    if (!s || !cfg || !cfg->plan) return ARB_EINVAL;
    const arb_plan *p = cfg->plan;
    size_t es = arb_dtype_size(p->cfg.dtype);
    if (cfg->payload == 0 || cfg->payload > ARB_PAYLOAD_MAX || cfg->payload % es ||
        cfg->slots == 0 || cfg->slots > ARB_AGG_SLOTS_MAX || cfg->timeout < ARB_EP_TIMER_MIN ||
        cfg->retry < ARB_EP_TIMER_MIN ||
        (cfg->timeout_min &&
         (cfg->timeout_min < ARB_EP_TIMER_MIN || cfg->timeout_min > cfg->timeout)) ||
        (cfg->retry_min && (cfg->retry_min < ARB_EP_TIMER_MIN || cfg->retry_min > cfg->retry)))
        return ARB_EINVAL;
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    for (uint32_t r = 0; r < p->cfg.n_ranks; r++)
        if (p->ranks[r] >= s->n_hosts) return ARB_EINVAL;
    for (uint32_t i = 0; i < p->n_entries; i++)
        if (p->entries[i].node >= n_nodes) return ARB_EINVAL;
    if (job_fits(s, cfg) < 0) return ARB_EINVAL;
    int first = s->arb == NULL;
    int rc = first ? arbor_state(s, cfg) : 0;
    if (rc < 0) return rc;
    struct ajob *j = NULL;
    rc = job_new(s, cfg, &j);
    if (rc == 0) rc = job_register(s, j);
    if (rc < 0) {
        if (first) {
            job_free(j);
            arbor_free(s);
        } else if (!s->arb->n_jobs || s->arb->jobs[s->arb->n_jobs - 1] != j) {
            job_free(j);
        }
        return rc;
    }
    rc = job_start(s, j);
    return rc < 0 ? rc : (int)j->index;
}

int arb_sim_arbor_enter(arb_sim *s, int job, uint32_t rank, arb_time at)
{
    struct arbor_job *a = s ? s->arb : NULL;
    if (!a || job < 0 || (uint32_t)job >= a->n_jobs) return ARB_EINVAL;
    struct ajob *j = a->jobs[job];
    if (!j->cfg.deferred || rank >= j->p->cfg.n_ranks || j->start_at[rank] != ARB_TIME_NEVER)
        return ARB_EINVAL;
    if (at < s->now) at = s->now;
    j->start_at[rank] = at;
    if (at < j->res.start) j->res.start = at;
    arm(s, j->p->ranks[rank], at);
    return s->error;
}

static int job_done(const struct ajob *j)
{
    return arb_host_done(j->host);
}

int arb_sim_arbor_done(const arb_sim *s)
{
    const struct arbor_job *a = s->arb;
    if (!a || !a->n_jobs) return 0;
    for (uint32_t x = 0; x < a->n_jobs; x++)
        if (!job_done(a->jobs[x])) return 0;
    return 1;
}

int arb_sim_arbor_jobs(const arb_sim *s)
{
    return s && s->arb ? (int)s->arb->n_jobs : 0;
}

int arb_sim_arbor_rank(const arb_sim *s, int job, uint32_t rank, uint32_t *host, arb_time *done)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a || job < 0 || (uint32_t)job >= a->n_jobs) return ARB_EINVAL;
    const struct ajob *j = a->jobs[job];
    if (rank >= j->p->cfg.n_ranks) return ARB_EINVAL;
    if (host) *host = j->p->ranks[rank];
    if (done) *done = j->host->rank_done[rank];
    return 0;
}

uint32_t arb_sim_arbor_job_ranks(const arb_sim *s, int job)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a || job < 0 || (uint32_t)job >= a->n_jobs) return 0;
    return a->jobs[job]->p->cfg.n_ranks;
}

int arb_sim_arbor_slots(const arb_sim *s, uint32_t *live, uint32_t *max_live)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a) return ARB_EINVAL;
    uint32_t sum = 0, mx = 0;
    for (uint32_t n = 0; n < arb_topo_n_nodes(s->topo); n++) {
        if (!a->agg[n]) continue;
        arb_agg_stats st;
        arb_agg_get_stats(a->agg[n], s->now, &st);
        sum += st.live;
        if (st.live > mx) mx = st.live;
    }
    if (live) *live = sum;
    if (max_live) *max_live = mx;
    return 0;
}

int arb_sim_arbor_reboot(arb_sim *s, uint32_t node)
{
    struct arbor_job *a = s ? s->arb : NULL;
    if (!a || node >= arb_topo_n_nodes(s->topo) || s->nodes[node].kind != ARB_NODE_SWITCH)
        return ARB_EINVAL;
    int lost = 0;
    for (uint32_t k = 0; k < a->n_parts; k++) {
        size_t g = (size_t)node * a->n_parts + k;
        if (!a->agg[g]) continue;
        int n = arb_agg_reset(a->agg[g], s->now);
        if (n < 0) return n;
        lost += n;
        /* the owners go with the slots: each job holds none there now */
        for (uint32_t slot = 0; slot < a->slots / a->n_parts; slot++)
            slot_freed(a, node, a->owner[g], slot);
    }
    return lost;
}

int arb_sim_arbor_watch(arb_sim *s, arb_time from)
{
    struct arbor_job *a = s ? s->arb : NULL;
    if (!a) return ARB_EINVAL;
    a->watch_from = from;
    a->watch_hit = ARB_TIME_NEVER;
    a->watching = 1;
    return 0;
}

int arb_sim_arbor_counters_get(const arb_sim *s, arb_sim_arbor_counters *out)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a || !out) return ARB_EINVAL;
    out->committed_bytes = a->committed_bytes;
    out->resent_bytes = a->resent_bytes;
    out->resends = a->resends;
    out->resend_at = a->watch_hit;
    return 0;
}

int arb_sim_arbor_progress(const arb_sim *s, uint32_t *ranks_done, uint32_t *ranks)
{
    const struct arbor_job *a = s->arb;
    if (!a || !a->n_jobs) return ARB_EINVAL;
    *ranks_done = 0;
    *ranks = 0;
    for (uint32_t x = 0; x < a->n_jobs; x++) {
        *ranks_done += a->jobs[x]->host->ranks_done;
        *ranks += a->jobs[x]->p->cfg.n_ranks;
    }
    return 0;
}

/* Job j's packets and wire bytes in list l. */
static void list_sums(const arb_sim *s, const struct ajob *j, const struct plist *l, uint64_t *pkts,
                      uint64_t *bytes)
{
    for (uint32_t i = l->head; i != PKT_NONE; i = pool_get(&s->pool, i)->next) {
        const struct pkt *k = pool_get(&s->pool, i);
        if (k->kind == PK_ARBOR && job_of(s, k->conn) == j) {
            (*pkts)++;
            *bytes += k->bytes;
        }
    }
}

/* The job's per-port counters summed: packets and bytes sent (those that
 * reached the far end of their wire, and those on it), and per tier the
 * wire bytes queued (sent, dropped by the queue, or still in it). */
static void port_sums(const arb_sim *s, const struct ajob *j, arb_sim_arbor_result *r)
{
    for (uint32_t port = 0; port < s->n_ports; port++) {
        const struct pacct *pa = &j->pacct[port];
        const struct sport *sp = &s->sp[port];
        uint64_t pkts = pa->tx_pkts, bytes = pa->tx_bytes, qp = 0, qb = 0;
        list_sums(s, j, &sp->wire, &pkts, &bytes);
        list_sums(s, j, &sp->q, &qp, &qb);
        if (sp->kind >= NIC_HOST) list_sums(s, j, &sp->arb_tx, &qp, &qb);
        r->pkts += pkts;
        r->wire_bytes += bytes;
        uint32_t t = s->ports[port].tier < 3 ? s->ports[port].tier : 3;
        uint64_t queued = bytes + pa->drop_bytes + qb;
        if (s->ports[port].role == ARB_LINK_UP)
            r->tier_up_bytes[t] += queued;
        else
            r->tier_down_bytes[t] += queued;
    }
}

/* Nodes where in + copies != out + consumed + drops + delivered + queued,
 * every job's packets together; out: the packets that reached the far end
 * of a wire, and those on one. */
static uint64_t conservation_errors(const arb_sim *s)
{
    const struct arbor_job *a = s->arb;
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    uint64_t *left = calloc(n_nodes, sizeof *left); /* out + queued */
    if (!left) return 0;
    for (uint32_t port = 0; port < s->n_ports; port++) {
        uint32_t owner = s->owner[port];
        for (uint32_t x = 0; x < a->n_jobs; x++)
            left[owner] += a->jobs[x]->pacct[port].tx_pkts;
        const struct sport *sp = &s->sp[port];
        const struct plist *ls[3] = {&sp->q, &sp->wire, &sp->arb_tx}; /* arb_tx: NICs' */
        for (int l = 0; l < (sp->kind >= NIC_HOST ? 3 : 2); l++)
            for (uint32_t i = ls[l]->head; i != PKT_NONE; i = pool_get(&s->pool, i)->next)
                if (pool_get(&s->pool, i)->kind == PK_ARBOR) left[owner]++;
    }
    uint64_t bad = 0;
    for (uint32_t n = 0; n < n_nodes; n++) {
        const struct nacct *c = &a->acct[n];
        if (c->in + c->copies != c->consumed + c->drops + c->delivered + left[n]) bad++;
    }
    free(left);
    return bad;
}

/* The aggregators job j uses (its part of the pool of each switch where it
 * aggregates; j NULL: every aggregator), their counters and self-checks
 * into r. */
static void agg_sums(const arb_sim *s, const struct ajob *j, arb_sim_arbor_result *r)
{
    const struct arbor_job *a = s->arb;
    size_t n = j ? j->n_agg_nodes : (size_t)arb_topo_n_nodes(s->topo) * a->n_parts;
    for (size_t x = 0; x < n; x++) {
        arb_agg *g = a->agg[j ? agg_index(a, j->agg_nodes[x], j) : x];
        if (!g) continue;
        arb_agg_stats st;
        arb_agg_get_stats(g, s->now, &st);
        r->agg_inputs += st.contributions;
        r->agg_aggregates += st.aggregates;
        r->agg_passthrough += st.passthrough;
        if (st.peak_live > r->peak_live_slots) r->peak_live_slots = st.peak_live;
        r->agg_allocations += st.allocations;
        r->agg_reclaimed += st.reclaimed_live;
        r->slot_time += st.slot_time;
        r->partial_slot_time += st.partial_slot_time;
        if (arb_agg_check(g) < 0) r->inv_agg_check++;
    }
}

/* The engines' counters and the per-engine invariants of job j into r. */
static void engine_sums(const struct ajob *j, arb_sim_arbor_result *r)
{
    const arb_plan *p = j->p;
    uint32_t n_cc = 0;
    for (uint32_t i = 0; i < j->n_eps; i++) {
        const arb_hep *e = &j->eps[i];
        if (e->r) {
            arb_responder_stats st;
            arb_responder_get_stats(e->r, &st);
            r->commits += st.commits;
            r->repair_commits += st.repair_commits;
            r->repair_credits += st.repair_credits;
            r->timeouts += st.timeouts;
            r->agg_miss += st.agg_miss;
            r->late_masters += st.late_masters;
            r->tail_replays += st.tail_replays;
            r->credits += st.credits;
            r->dead_subchannels += st.dead_subchannels;
            r->retries += st.retries;
            r->losses_order += st.losses_order;
            r->losses_timer += st.losses_timer;
            r->spurious += st.spurious;
            r->bypass += st.bypass;
            r->deaths += st.deaths;
            r->probes += st.probes;
            r->revivals += st.revivals;
            if (e->cc) {
                arb_cc_stats cs;
                arb_cc_get_stats(e->cc, &cs);
                r->cc_increases += cs.increases;
                r->cc_decreases += cs.decreases;
                r->cc_ce_samples += cs.ce_samples;
                r->cc_stalls += cs.stalls;
                r->cc_window_mean += cs.window;
                n_cc++;
            }
        } else {
            arb_requester_stats st;
            arb_requester_get_stats(e->q, &st);
            r->requests += st.requests + st.repair_requests;
            r->results += st.results;
            r->registers += st.registers;
            r->ends += st.ends;
            /* every requester receives every result (pull-result, push) */
            arb_ep_kind kind = p->channels[e->ch].kind;
            /* header-only: results held (one message per engine: its stats' count) */
            uint64_t got = j->cfg.values ? e->results : st.results;
            if (r->done && kind != ARB_EP_BARRIER && got < e->offsets)
                r->inv_missing += e->offsets - got;
            if (e->cond_done && p->cfg.coll != ARB_COLL_REDUCE && kind != ARB_EP_BARRIER &&
                got < e->offsets)
                r->inv_early++;
        }
        if (e->r && e->cond_done && e->results < e->offsets) r->inv_early++;
    }
    if (n_cc) r->cc_window_mean /= n_cc;
}

static void finish_invariants(arb_sim_arbor_result *r, int values)
{
    r->invariant_errors = r->inv_dup_commit + r->inv_count + r->inv_agg_check + r->inv_missing +
                          r->inv_early + r->inv_conservation;
    /* values mode: correct only if every rank's output is final and
     * something was checked, unless the collective carries no data
     * (Barrier: bytes 0, done is the answer) */
    if (values)
        r->correct = r->wrong == 0 && r->ranks_done == r->ranks && r->inv_missing == 0 &&
                     (r->checked > 0 || r->bytes == 0);
    r->bytes_per_packet = (uint32_t)(sizeof(struct pkt) + sizeof(arb_hdr));
}

/* Job j's figures: its engines, its packets, the switches it aggregates at
 * (whose pools other jobs may share), the fabric's conservation. */
static void job_result(const arb_sim *s, const struct ajob *j, uint64_t conservation,
                       arb_sim_arbor_result *out)
{
    arb_sim_arbor_result r = j->res;
    const arb_plan *p = j->p;
    r.ranks = p->cfg.n_ranks;
    r.ranks_done = j->host->ranks_done;
    r.port = SIM_ARBOR_DPORT + j->port;
    r.done = job_done(j);
    r.bytes = p->cfg.coll == ARB_COLL_BARRIER ? 0 : p->cfg.bytes;
    r.finish = ARB_TIME_NEVER;
    if (j->host->ranks_done == p->cfg.n_ranks) {
        r.finish = 0;
        for (uint32_t k = 0; k < p->cfg.n_ranks; k++)
            if (j->host->rank_done[k] > r.finish) r.finish = j->host->rank_done[k];
        r.cct = r.finish - r.start;
        r.goodput_gbps = r.cct ? (double)r.bytes * 8.0 / ((double)r.cct / 1e12) / 1e9 : 0;
    }
    engine_sums(j, &r);
    agg_sums(s, j, &r);
    port_sums(s, j, &r);
    r.inv_conservation = conservation;
    finish_invariants(&r, j->cfg.values);
    r.rtt_mean = j->rtt_n ? j->rtt_sum / j->rtt_n : 0;
    *out = r;
}

/* Job figures w += r: counts summed, the span from the first start to the
 * last finish, goodputs summed (docs/arbor-sim.md). */
static void result_add(arb_sim_arbor_result *w, const arb_sim_arbor_result *r)
{
    w->done = w->done && r->done;
    w->ranks += r->ranks;
    w->ranks_done += r->ranks_done;
    if (r->start < w->start) w->start = r->start;
    if (w->finish == ARB_TIME_NEVER || r->finish == ARB_TIME_NEVER)
        w->finish = ARB_TIME_NEVER;
    else if (r->finish > w->finish)
        w->finish = r->finish;
    w->bytes += r->bytes;
    w->goodput_gbps += r->goodput_gbps;
    uint64_t *const wc[] = {
        &w->commits,     &w->repair_commits, &w->repair_credits,   &w->timeouts,
        &w->agg_miss,    &w->late_masters,   &w->tail_replays,     &w->credits,
        &w->requests,    &w->results,        &w->registers,        &w->ends,
        &w->agg_drops,   &w->copies,         &w->checked,          &w->wrong,
        &w->wire_checks, &w->wire_errors,    &w->inv_dup_commit,   &w->inv_count,
        &w->inv_missing, &w->inv_early,      &w->dead_subchannels, &w->pkts,
        &w->wire_bytes,  &w->retries,        &w->losses_order,     &w->losses_timer,
        &w->spurious,    &w->bypass,         &w->deaths,           &w->probes,
        &w->revivals,    &w->cc_increases,   &w->cc_decreases,     &w->cc_ce_samples,
        &w->cc_stalls};
    const uint64_t rc[] = {r->commits,     r->repair_commits, r->repair_credits,   r->timeouts,
                           r->agg_miss,    r->late_masters,   r->tail_replays,     r->credits,
                           r->requests,    r->results,        r->registers,        r->ends,
                           r->agg_drops,   r->copies,         r->checked,          r->wrong,
                           r->wire_checks, r->wire_errors,    r->inv_dup_commit,   r->inv_count,
                           r->inv_missing, r->inv_early,      r->dead_subchannels, r->pkts,
                           r->wire_bytes,  r->retries,        r->losses_order,     r->losses_timer,
                           r->spurious,    r->bypass,         r->deaths,           r->probes,
                           r->revivals,    r->cc_increases,   r->cc_decreases,     r->cc_ce_samples,
                           r->cc_stalls};
    for (size_t k = 0; k < sizeof rc / sizeof rc[0]; k++)
        *wc[k] += rc[k];
    for (int t = 0; t < 4; t++) {
        w->tier_up_bytes[t] += r->tier_up_bytes[t];
        w->tier_down_bytes[t] += r->tier_down_bytes[t];
    }
    if (r->rtt_max > w->rtt_max) w->rtt_max = r->rtt_max;
}

/* Several jobs: the whole (docs/arbor-sim.md section 2). */
static void whole_result(const arb_sim *s, uint64_t conservation, arb_sim_arbor_result *out)
{
    const struct arbor_job *a = s->arb;
    arb_sim_arbor_result w;
    memset(&w, 0, sizeof w);
    w.done = 1;
    w.start = ARB_TIME_NEVER;
    w.finish = 0;
    uint64_t rtt_sum = 0, rtt_n = 0, n_cc = 0;
    double window_sum = 0;
    for (uint32_t x = 0; x < a->n_jobs; x++) {
        arb_sim_arbor_result r;
        job_result(s, a->jobs[x], conservation, &r);
        result_add(&w, &r);
        if (r.peak_job_slots > w.peak_job_slots) w.peak_job_slots = r.peak_job_slots;
        rtt_sum += a->jobs[x]->rtt_sum;
        rtt_n += a->jobs[x]->rtt_n;
        /* the mean over every channel: each job's mean weighted by its channels */
        window_sum += r.cc_window_mean * a->jobs[x]->p->n_channels;
        n_cc += a->jobs[x]->p->n_channels;
    }
    w.cc_window_mean = n_cc ? window_sum / (double)n_cc : 0;
    if (w.finish != ARB_TIME_NEVER)
        w.cct = w.finish - w.start;
    else
        w.goodput_gbps = 0;
    agg_sums(s, NULL, &w); /* every pool once: they are shared */
    w.inv_conservation = conservation;
    w.correct = a->values ? 1 : -1;
    finish_invariants(&w, a->values);
    w.rtt_mean = rtt_n ? rtt_sum / rtt_n : 0;
    *out = w;
}

int arb_sim_arbor_result_get(const arb_sim *s, arb_sim_arbor_result *out)
{
    const struct arbor_job *a = s->arb;
    if (!a || !a->n_jobs || !out) return ARB_EINVAL;
    uint64_t conservation = conservation_errors(s);
    if (a->n_jobs == 1)
        job_result(s, a->jobs[0], conservation, out);
    else
        whole_result(s, conservation, out);
    return 0;
}

int arb_sim_arbor_job_result(const arb_sim *s, int job, arb_sim_arbor_result *out)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a || job < 0 || (uint32_t)job >= a->n_jobs || !out) return ARB_EINVAL;
    job_result(s, a->jobs[job], conservation_errors(s), out);
    return 0;
}

int arb_sim_arbor_header(const arb_sim *s, uint32_t index, arb_hdr *h)
{
    const struct arbor_job *a = s->arb;
    if (!a || index >= a->cap_hdr || index >= s->pool.made ||
        !s->pool.chunks[index >> POOL_CHUNK_BITS] || pool_get(&s->pool, index)->kind != PK_ARBOR)
        return ARB_ENOENT;
    *h = a->hdr[index];
    return 0;
}
