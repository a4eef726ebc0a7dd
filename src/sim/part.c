/*
 * A partitioned run: every process holds the same simulator and runs the
 * events of its own part of the fabric; what crosses the cut travels
 * through the caller's collective operations (arb_sim_part_ops), between
 * windows as long as the smallest delay of a cut link (the lookahead:
 * conservative synchronisation, nothing a part does in a window can reach
 * another part within it). docs/partition.md describes the scheme and why
 * it gives the sequential run's figures exactly.
 *
 * Records between parts, one after the other in a byte buffer: a packet
 * that starts across the cut (to the part that receives it, with its
 * arrival time), a PFC event for a port another part sends on, a
 * completion (to every part: all report it), and, to every part when the
 * pool's peak may climb, the changes the window's events made to the
 * number of live packets (the peak is the whole fabric's, which no part
 * can see alone: live_window); with a capture of the whole fabric
 * (arb_sim_pcap_partition), the frames each part took in the window, to
 * part 0, and the capture's state of a packet that starts across the cut,
 * ahead of its record.
 */
#include "sim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbor/base.h"
#include "base/alloc.h"

enum {
    REC_PKT = 1,
    REC_EVENT = 2,
    REC_DONE = 3,
    REC_PORT = 5, /* from here on, records with bytes after them (take) */
    REC_FLOW = 6,
    REC_CAP = 7,
    REC_HOP = 8,
    REC_LIVE = 9
};

/* Every record but a packet's and a HOP (struct rec_hop) starts so; a
 * port's is followed by an arb_sim_port_stats, a flow's by a struct
 * flow_half, a capture's frames (CAP) and a part's changes of live packets
 * (LIVE: struct lnote, in its order) by d bytes. */
struct rec {
    uint32_t type;
    uint32_t a; /* PKT, PORT: the port; EVENT: the target; DONE: the flow; FLOW: the flow */
    arb_time t; /* PKT: arrival; EVENT, DONE: its time */
    uint32_t b; /* DONE: the target of the event it finished in; PORT: queue */
    uint32_t c; /* DONE: order within the part */
    uint64_t d; /* DONE: its arg; CAP, LIVE: the bytes that follow */
};

/* The switches a packet that starts across the cut had crossed there (a
 * capture's, for its TTL), ahead of the packet's record: the first two
 * fields of a struct rec. */
struct rec_hop {
    uint32_t type; /* REC_HOP */
    uint32_t crossed;
};
_Static_assert(offsetof(struct rec, a) == offsetof(struct rec_hop, crossed),
               "a HOP record reads as the head of a struct rec");

/* A packet's record: this, its struct pkt (its arrival time in it), and
 * `extra` bytes: an Arbor packet's header (hlen) and payload. */
struct rec_pkt {
    uint32_t type; /* REC_PKT */
    uint32_t port; /* the wire it is on */
    uint32_t extra, hlen;
};

/* What one side of a flow knows (arb_sim_part_collect). */
struct flow_half {
    arb_time finish;
    uint64_t retx_bytes, ooo_pkts, timeouts, cnps, cuts, tlp_probes;
    uint32_t reorder_peak, side; /* side: 1 sender, 2 receiver */
    double min_rc;
};

struct buf {
    uint8_t *d;
    size_t n, cap;
};

/* The packets on a part's wires across the cut, until they arrive at the
 * other part, in buckets by arrival time (2^shift ps each, about the
 * lookahead): a ring of `cap` buckets, bucket b (absolute: arrival >>
 * shift) at b & (cap - 1). Each bucket holds its packets in the order they started, so each
 * wire's are in the wire's order across the buckets. A window's end lets
 * go the buckets before its own whole and tests its own: a packet is
 * looked at when it starts and when it arrives, not at every window
 * between. */
struct cut_bucket {
    struct cut_sent *e;
    size_t n, cap;
};

struct cut_wires {
    struct cut_bucket *b;
    size_t cap;        /* a power of two, or 0 */
    uint64_t base, hi; /* every packet is in buckets base .. hi, hi - base < cap */
    unsigned shift;
    size_t n; /* packets in all */
};

/* A completion of the window, with the order it sorts in; an Arbor
 * rank's done (flow SIM_ARBOR_NOTE) names it in arg (arbor_note). */
struct note {
    arb_time t;
    uint32_t target, rank, idx, flow;
    uint64_t arg;
};

struct sim_part {
    arb_sim_part_ops ops;
    uint32_t *node_part; /* per node */
    arb_time lookahead;
    arb_time win_end;      /* the last window's end: a callback's flow starts after it */
    struct buf *out;       /* per part */
    struct cut_wires sent; /* the packets on this part's wires across the cut */
    uint8_t *mark;         /* per port, for net_cut_gone */
    struct note *done;
    size_t n_done, cap_done;
    struct lnote *tmp; /* merging live notes (s->plog): room for its cap */
    size_t cap_tmp;
    size_t *seg; /* where each part's notes start in live (each part's are in order) */
    size_t n_seg, cap_seg;
    uint32_t seq;   /* order of this part's notes */
    int64_t glive;  /* live packets, whole fabric, after the last window (every part) */
    uint64_t gpeak; /* the most at once so far (every part) */
    /* this part's ports as last sent to part 0 (sync_end sends what changed) */
    arb_sim_port_stats *sps;
    uint32_t *sq;
    uint64_t *stx; /* and its packets started, as counted then (port_same) */
    /* part 0: the other parts' ports as last received */
    uint32_t *mq;
    arb_sim_port_stats *mps;
    uint8_t *mhave;
    /* the whole fabric's figures after the last run */
    arb_sim_stats gst;
    arb_time gnow, gactive;
    arb_sim_part_info info;
    /* part 0 with a capture (part_pcap_room): each part's frames of the
     * exchange (capd[r], capn[r] bytes; part 0's own are the capture's) */
    const uint8_t **capd;
    size_t *capn;
};

/* ---- buffers ------------------------------------------------------------ */

/* n bytes more at the end of b, or NULL (out of memory). */
static SIM_COLD int buf_grow(struct buf *b, size_t n)
{
    size_t ncap = b->cap ? b->cap * 2 : 4096;
    while (ncap < b->n + n)
        ncap *= 2;
    uint8_t *nd = arb_realloc(b->d, ncap);
    if (!nd) return ARB_ENOMEM;
    b->d = nd;
    b->cap = ncap;
    return 0;
}

static inline uint8_t *buf_room(struct buf *b, size_t n)
{
    if (b->n + n > b->cap && buf_grow(b, n) < 0) return NULL;
    b->n += n;
    return b->d + b->n - n;
}

static int buf_put(struct buf *b, const void *p, size_t n)
{
    uint8_t *w = buf_room(b, n);
    if (!w) return ARB_ENOMEM;
    memcpy(w, p, n);
    return 0;
}

static void fail(arb_sim *s, int rc)
{
    if (rc < 0 && !s->error) s->error = rc;
}

/* v (n used of *cap, `size` bytes each) with room for one more: itself,
 * or grown to twice (from `first`), or NULL (out of memory: v stays). */
static void *room(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
    if (n < *cap) return v;
    size_t ncap = *cap ? *cap * 2 : first;
    void *nv = arb_realloc(v, ncap * size);
    if (nv) *cap = ncap;
    return nv;
}

/* ---- the packets on the wires across the cut (struct cut_wires) --------- */

static void cut_wires_free(struct cut_wires *w)
{
    for (size_t k = 0; k < w->cap; k++)
        arb_free(w->b[k].e);
    arb_free(w->b);
    w->b = NULL;
    w->cap = w->n = 0;
}

/* Buckets of the largest power of two of picoseconds up to the lookahead
 * (1.024 ns at least, 1.1 s at most). */
static unsigned cut_wires_shift(arb_time lookahead)
{
    unsigned sh = 10;
    while (sh < 40 && (UINT64_C(1) << (sh + 1)) <= lookahead)
        sh++;
    return sh;
}

/* The ring grown to span buckets lo .. hi (each bucket it holds moved to
 * its new place; the empty ones' arrays let go). */
static int cut_wires_grow(struct cut_wires *w, uint64_t lo, uint64_t hi)
{
    size_t ncap = w->cap ? w->cap : 16;
    while (hi - lo >= ncap)
        ncap *= 2;
    struct cut_bucket *nb = arb_calloc(ncap, sizeof *nb);
    if (!nb) return ARB_ENOMEM;
    for (uint64_t a = w->base; w->n && a <= w->hi; a++) {
        struct cut_bucket *o = &w->b[a & (w->cap - 1)];
        nb[a & (ncap - 1)] = *o;
        o->e = NULL;
    }
    size_t n = w->n;
    cut_wires_free(w);
    w->b = nb;
    w->cap = ncap;
    w->n = n;
    return 0;
}

/* Has e arrived by the event (t, target) of the local order? */
static int cut_arrived(const struct cut_sent *e, arb_time t, uint32_t target)
{
    return e->t < t || (e->t == t && EV_PORT(e->port & ~CUT_ARBOR, EV_ARRIVE) <= target);
}

/* the port of the packet this far ahead is fetched */
#define CUT_AHEAD 24

/* What has arrived by the event (t, target) let go (net_cut_gone), in
 * the order each wire holds it: the buckets before t's whole (every packet
 * there arrived before t), t's tested; then each wire that still holds
 * packets gets its first as its head (net_cut_head). */
static void cut_wires_drain(arb_sim *s, struct cut_wires *w, arb_time t, uint32_t target,
                            uint8_t *mark)
{
    if (w->n == 0) return;
    uint64_t tb = t >> w->shift;
    size_t marked = 0;
    for (uint64_t b = w->base; b <= w->hi && b <= tb; b++) {
        struct cut_bucket *k = &w->b[b & (w->cap - 1)];
        size_t kept = 0;
        for (size_t j = 0; j < k->n; j++) {
            if (j + CUT_AHEAD < k->n) SIM_PREFETCH(&s->sp[k->e[j + CUT_AHEAD].port & ~CUT_ARBOR]);
            if (b == tb && !cut_arrived(&k->e[j], t, target))
                k->e[kept++] = k->e[j];
            else
                net_cut_gone(s, &k->e[j], mark, &marked);
        }
        w->n -= k->n - kept;
        k->n = kept;
    }
    if (w->n == 0) {
        w->base = w->hi = tb;
        return;
    }
    if (tb > w->base) w->base = tb; /* (tb <= hi: a later bucket holds packets) */
    for (uint64_t b = w->base; marked && b <= w->hi; b++) {
        const struct cut_bucket *k = &w->b[b & (w->cap - 1)];
        for (size_t j = 0; marked && j < k->n; j++)
            net_cut_head(s, &k->e[j], mark, &marked);
    }
}

static int note_add(struct note **v, size_t *n, size_t *cap, const struct note *x)
{
    struct note *nv = room(*v, *n, cap, sizeof *nv, 256);
    if (!nv) return ARB_ENOMEM;
    *v = nv;
    nv[(*n)++] = *x;
    return 0;
}

/* ---- set-up ------------------------------------------------------------- */

static uint32_t port_part(const arb_sim *s, uint32_t p)
{
    return s->part->node_part[s->owner[p]];
}

uint32_t part_of_far(const arb_sim *s, uint32_t p)
{
    return s->part ? s->part->node_part[s->far[p].node] : 0;
}

int part_late_start(const arb_sim *s, arb_time start)
{
    return s->in_report && start <= s->part->win_end;
}

int part_owns_host(const arb_sim *s, uint32_t h)
{
    return !s->part || s->part->node_part[h] == s->part->ops.rank;
}

uint32_t part_rank(const arb_sim *s)
{
    return s->part ? s->part->ops.rank : 0;
}

uint32_t part_count(const arb_sim *s)
{
    return s->part ? s->part->ops.n_ranks : 1;
}

int part_allsum(const arb_sim *s, uint64_t *v, size_t n)
{
    const struct sim_part *P = s->part;
    return P ? P->ops.allsum(P->ops.ctx, v, n) : 0;
}

int part_allmin(const arb_sim *s, uint64_t *v, size_t n)
{
    const struct sim_part *P = s->part;
    return P ? P->ops.allmin(P->ops.ctx, v, n) : 0;
}

void part_free(arb_sim *s)
{
    struct sim_part *P = s->part;
    if (!P) return;
    for (uint32_t r = 0; P->out && r < P->ops.n_ranks; r++)
        arb_free(P->out[r].d);
    arb_free(P->out);
    cut_wires_free(&P->sent);
    arb_free(P->mark);
    arb_free(P->node_part);
    arb_free(P->done);
    arb_free(s->plog.v);
    memset(&s->plog, 0, sizeof s->plog);
    arb_free(P->tmp);
    arb_free(P->seg);
    arb_free(P->mq);
    arb_free(P->mps);
    arb_free(P->mhave);
    arb_free(P->sps);
    arb_free(P->sq);
    arb_free(P->stx);
    arb_free(P->capd);
    arb_free(P->capn);
    arb_free(P);
    arb_free(s->pcut);
    s->part = NULL;
    s->pcut = NULL;
}

/* The names of port p's node and of the node at its far end (len bytes
 * each), or their numbers when the topology has no names for them. */
static void link_ends(const arb_sim *s, uint32_t p, char *a, char *b, size_t len)
{
    if (!s->topo || arb_topo_node_name(s->topo, s->owner[p], a, len) < 0)
        snprintf(a, len, "node %u", s->owner[p]);
    if (!s->topo || arb_topo_node_name(s->topo, s->far[p].node, b, len) < 0)
        snprintf(b, len, "node %u", s->far[p].node);
}

/* The smallest delay of a link across the cut; 0 if one has none. */
static arb_time cut_lookahead(const arb_sim *s)
{
    const uint32_t *np = s->part->node_part;
    arb_time la = ARB_TIME_NEVER;
    for (uint32_t p = 0; p < s->n_ports; p++)
        if (np[s->owner[p]] != np[s->far[p].node] && s->ports[p].delay < la) la = s->ports[p].delay;
    return la;
}

int arb_sim_partition(arb_sim *s, const arb_sim_part_ops *ops, const uint32_t *node_part, char *err,
                      size_t errlen)
{
    if (!s || !ops || !node_part || ops->n_ranks == 0 || ops->rank >= ops->n_ranks ||
        !ops->alltoall || !ops->allmin || !ops->allsum)
        return arb_errf(err, errlen, ARB_EINVAL, "partition: bad operations");
    if (s->part) return arb_errf(err, errlen, ARB_ESTATE, "partition: partitioned already");
    if (s->n_conns || s->arb)
        return arb_errf(err, errlen, ARB_ESTATE, "partition: flows were added already");
    if (!s->cfg.local_order)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "partition: the simulator must run in the local order (run.order = "
                        "local): the default order is global");
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    for (uint32_t v = 0; v < n_nodes; v++)
        if (node_part[v] >= ops->n_ranks)
            return arb_errf(err, errlen, ARB_EINVAL, "partition: node %u in part %u of %u", v,
                            node_part[v], ops->n_ranks);
    struct sim_part *P = arb_calloc(1, sizeof *P);
    uint8_t *pcut = arb_calloc(s->n_ports ? s->n_ports : 1, 1);
    if (P) {
        P->node_part = arb_malloc((size_t)n_nodes * sizeof *P->node_part);
        P->out = arb_calloc(ops->n_ranks, sizeof *P->out);
        P->mark = arb_calloc(s->n_ports ? s->n_ports : 1, 1);
    }
    if (!P || !pcut || !P->node_part || !P->out || !P->mark) {
        if (P) {
            arb_free(P->node_part);
            arb_free(P->out);
            arb_free(P->mark);
        }
        arb_free(P);
        arb_free(pcut);
        return arb_errf(err, errlen, ARB_ENOMEM, "partition: out of memory");
    }
    memcpy(P->node_part, node_part, (size_t)n_nodes * sizeof *node_part);
    P->ops = *ops;
    s->part_stop_t = ARB_TIME_NEVER;
    P->gnow = s->now;
    P->gactive = s->active;
    uint32_t me = ops->rank;
    s->part = P;
    s->part_solo = ops->n_ranks == 1;
    s->pcut = pcut;
    for (uint32_t p = 0; p < s->n_ports; p++) {
        uint32_t from = node_part[s->owner[p]], to = node_part[s->far[p].node];
        pcut[p] = from == to   ? (from == me ? PCUT_LOCAL : PCUT_FOREIGN)
                  : from == me ? PCUT_OUT
                  : to == me   ? PCUT_IN
                               : PCUT_FOREIGN;
        if (from != to) {
            arb_time d = s->ports[p].delay;
            if (d == 0) {
                char a[64], b[64];
                link_ends(s, p, a, b, sizeof a);
                part_free(s);
                return arb_errf(err, errlen, ARB_EINVAL,
                                "partition: the cut link link:%s-%s has no delay (a part must "
                                "not reach another at once: fabric.delay, or the link's own)",
                                a, b);
            }
            if (from == me) P->info.cut_links++;
        }
    }
    P->lookahead = cut_lookahead(s);
    P->sent.shift = cut_wires_shift(P->lookahead);
    int rc = sim_links(s); /* the links across the cut, a class of their own (LK_CUT) */
    if (rc < 0) {
        part_free(s);
        return arb_errf(err, errlen, rc, "partition: %s", arb_strerror(rc));
    }
    for (uint32_t v = 0; v < n_nodes; v++)
        P->info.nodes += node_part[v] == me;
    P->info.rank = me;
    P->info.n_ranks = ops->n_ranks;
    P->info.lookahead = P->lookahead;
    return 0;
}

int arb_sim_part_stop_after(arb_sim *s, arb_time t, uint32_t target)
{
    if (!s || !s->part || s->in_run) return ARB_EINVAL;
    s->part_stop_t = t;
    s->part_stop_target = target;
    return 0;
}

int arb_sim_part_figures(const arb_sim *s, arb_sim_part_info *out)
{
    if (!s->part) return ARB_EINVAL;
    *out = s->part->info;
    return 0;
}

/* ---- what crosses ------------------------------------------------------- */

/* The bucket's array grown for one more note (cut_wires_note). */
static SIM_COLD int cut_bucket_grow(struct cut_bucket *k)
{
    struct cut_sent *ne = room(k->e, k->n, &k->cap, sizeof *ne, 64);
    if (!ne) return ARB_ENOMEM;
    k->e = ne;
    return 0;
}

/* Packet i on the wire of `port` until it arrives (drain_wires): noted in
 * the bucket of its arrival, the ring grown when it spans more buckets. */
static inline int cut_wires_note(struct cut_wires *w, const struct cut_sent *e)
{
    uint64_t b = e->t >> w->shift;
    if (w->n == 0) w->base = w->hi = b; /* every bucket empty: the ring starts anywhere */
    if (b < w->base || b > w->hi || w->cap == 0) {
        uint64_t lo = b < w->base ? b : w->base, hi = b > w->hi ? b : w->hi;
        if (hi - lo >= w->cap && cut_wires_grow(w, lo, hi) < 0) return ARB_ENOMEM;
        w->base = lo;
        w->hi = hi;
    }
    struct cut_bucket *k = &w->b[b & (w->cap - 1)];
    if (k->n == k->cap && cut_bucket_grow(k) < 0) return ARB_ENOMEM;
    k->e[k->n++] = *e;
    w->n++;
    return 0;
}

/* An Arbor packet's record: its header and payload live beside it, and
 * travel after it. */
static SIM_COLD uint8_t *arbor_record(arb_sim *s, struct buf *b, uint32_t port, uint32_t i)
{
    const void *hdr = NULL, *pl = NULL;
    size_t hlen = 0, plen = 0;
    arbor_cut_parts(s, i, &hdr, &hlen, &pl, &plen);
    struct rec_pkt r = {REC_PKT, port, (uint32_t)(hlen + plen), (uint32_t)hlen};
    uint8_t *w = buf_room(b, sizeof r + sizeof(struct pkt) + hlen + plen);
    if (!w) return NULL;
    memcpy(w, &r, sizeof r);
    if (hlen) memcpy(w + sizeof r + sizeof(struct pkt), hdr, hlen);
    if (plen) memcpy(w + sizeof r + sizeof(struct pkt) + hlen, pl, plen);
    return w;
}

void part_send_pkt(arb_sim *s, uint32_t port, uint32_t i)
{
    struct sim_part *P = s->part;
    const struct pkt *k = pool_get(&s->pool, i);
    int arbor = k->kind == PK_ARBOR;
    struct cut_sent e = {k->t, port | (arbor ? CUT_ARBOR : 0), i, k->bytes};
    struct buf *b = &P->out[s->lk[s->sp[port].link].to]; /* the far end's part */
    uint8_t *w;
    if (arbor) {
        w = arbor_record(s, b, port, i);
    } else {
        struct rec_pkt r = {REC_PKT, port, 0, 0};
        w = buf_room(b, sizeof r + sizeof *k);
        if (w) memcpy(w, &r, sizeof r);
    }
    if (!w) {
        fail(s, ARB_ENOMEM);
        return;
    }
    memcpy(w + sizeof(struct rec_pkt), k, sizeof *k);
    fail(s, cut_wires_note(&P->sent, &e));
    P->info.sent++;
}

void part_send_event(arb_sim *s, arb_time t, uint32_t target)
{
    struct sim_part *P = s->part;
    struct rec r = {REC_EVENT, target, t, 0, 0, 0};
    fail(s, buf_put(&P->out[port_part(s, target >> 2)], &r, sizeof r));
}

void part_take_done(arb_sim *s, uint32_t target)
{
    struct sim_part *P = s->part;
    for (uint32_t k = 0; k < s->n_done; k++) {
        struct note x = {s->now, target, P->ops.rank, 0, s->done[k], 0};
        if (x.flow != SIM_ARBOR_NOTE) {
            x.idx = P->seq++;
            fail(s, note_add(&P->done, &P->n_done, &P->cap_done, &x));
            continue;
        }
        for (uint32_t i = 0, n = arbor_n_notes(s); i < n; i++) { /* as arbor_report runs them */
            x.idx = P->seq++;
            x.arg = arbor_note(s, i);
            fail(s, note_add(&P->done, &P->n_done, &P->cap_done, &x));
        }
        arbor_notes_taken(s);
    }
    s->n_done = 0;
}

/* A packet from another part, on the wire of `port` (PCUT_IN) until its
 * arrival: held, not counted live until it lands (arrive_cut, net.c). */
static uint32_t receive_pkt(arb_sim *s, uint32_t port, const uint8_t *src, const uint8_t *extra,
                            size_t hlen, size_t plen)
{
    uint32_t peak = s->pool.peak;
    uint32_t i = pool_alloc_raw(&s->pool);
    if (i == PKT_NONE) {
        fail(s, ARB_ENOMEM);
        return PKT_NONE;
    }
    s->pool.live--;
    s->pool.peak = peak;
    struct pkt *k = pool_get(&s->pool, i);
    memcpy(k, src, sizeof *k);
    if (k->kind == PK_ARBOR) { /* its header and payload, in this part's tables */
        int rc = arbor_cut_land(s, i, extra, hlen, extra + hlen, plen);
        if (rc < 0) {
            k->aux = UINT32_MAX;
            s->pool.live++;
            pool_release(&s->pool, i);
            fail(s, rc);
            return PKT_NONE;
        }
    }
    net_cut_put(s, port, i);
    s->part->info.received++;
    return i;
}

static int note_cmp(const void *a, const void *b)
{
    const struct note *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->target != y->target) return x->target < y->target ? -1 : 1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Every part's completions of the window, in the sequential run's order
 * (time, then the target of the event, then their order in it): the
 * callbacks as report_done (sim.c) would have run them. */
static void replay_done(arb_sim *s)
{
    struct sim_part *P = s->part;
    if (P->n_done) qsort(P->done, P->n_done, sizeof *P->done, note_cmp);
    arb_time now = s->now;
    s->in_report = 1;
    for (size_t k = 0; k < P->n_done; k++) {
        uint32_t f = P->done[k].flow;
        s->now = P->done[k].t;
        if (f == SIM_ARBOR_NOTE) {
            arbor_report_note(s, P->done[k].arg);
        } else if (f & SIM_SENT_BIT) {
            if (s->cfg.on_flow_sent)
                s->cfg.on_flow_sent(s->cfg.sent_ctx, s, f & ~SIM_SENT_BIT, s->now);
        } else if (s->cfg.on_flow_done) {
            s->cfg.on_flow_done(s->cfg.done_ctx, s, f, s->now);
        }
    }
    s->in_report = 0;
    s->now = now;
    P->n_done = 0;
}

/* The window's changes of live packets of every part, merged in the
 * sequential order, give the whole fabric's peak. */
static int seg_push(struct sim_part *P, size_t at)
{
    size_t *ns = room(P->seg, P->n_seg, &P->cap_seg, sizeof *ns, 16);
    if (!ns) return ARB_ENOMEM;
    P->seg = ns;
    P->seg[P->n_seg++] = at;
    return 0;
}

/* Another part's notes of the window (n, in its order, at d): a run of
 * their own in live. */
static int take_live(struct sim_part *P, struct live_log *L, const uint8_t *d, size_t n)
{
    int rc = seg_push(P, L->n);
    if (rc < 0) return rc;
    if (L->n + n > L->cap) {
        size_t ncap = L->cap ? L->cap : 1024;
        while (ncap < L->n + n)
            ncap *= 2;
        struct lnote *nv = arb_realloc(L->v, ncap * sizeof *nv);
        if (!nv) return ARB_ENOMEM;
        L->v = nv;
        L->cap = ncap;
    }
    if (n) memcpy(L->v + L->n, d, n * sizeof *L->v);
    L->n += n;
    return 0;
}

static int lnote_before(const struct lnote *x, const struct lnote *y)
{
    return x->t < y->t || (x->t == y->t && x->target < y->target);
}

/* live[0 .. n_live): runs (seg) each in order, merged pairwise into two
 * at most (stably: no two parts have a note of one time and target). */
static int merge_runs(struct sim_part *P, struct live_log *L)
{
    if (P->n_seg <= 3) return 0;
    if (P->cap_tmp < L->n) {
        struct lnote *nt = arb_realloc(P->tmp, L->n * sizeof *nt);
        if (!nt) return ARB_ENOMEM;
        P->tmp = nt;
        P->cap_tmp = L->n;
    }
    while (P->n_seg > 3) { /* seg holds n_seg - 1 runs and the end */
        size_t out = 0, k = 0, o = 0;
        for (; k + 2 < P->n_seg; k += 2) {
            size_t i = P->seg[k], m = P->seg[k + 1], j = m, e = P->seg[k + 2];
            P->seg[out++] = o;
            while (i < m && j < e)
                P->tmp[o++] = lnote_before(&L->v[j], &L->v[i]) ? L->v[j++] : L->v[i++];
            while (i < m)
                P->tmp[o++] = L->v[i++];
            while (j < e)
                P->tmp[o++] = L->v[j++];
        }
        if (k + 1 < P->n_seg) { /* an odd run left */
            size_t i = P->seg[k], e = P->seg[k + 1];
            P->seg[out++] = o;
            memcpy(P->tmp + o, L->v + i, (e - i) * sizeof *P->tmp);
            o += e - i;
        }
        P->seg[out++] = o;
        P->n_seg = out;
        struct lnote *t = L->v;
        size_t c = L->cap;
        L->v = P->tmp;
        L->cap = P->cap_tmp;
        P->tmp = t;
        P->cap_tmp = c;
    }
    return 0;
}

static void merge_live(arb_sim *s)
{
    struct sim_part *P = s->part;
    struct live_log *L = &s->plog;
    fail(s, seg_push(P, L->n));
    fail(s, merge_runs(P, L));
    /* the last two runs merged as they are read */
    const struct lnote *v = L->v;
    size_t i = 0, m = P->n_seg > 2 ? P->seg[1] : L->n, j = m, e = L->n;
    while (i < m || j < e) {
        const struct lnote *x = j < e && (i == m || lnote_before(&v[j], &v[i])) ? &v[j++] : &v[i++];
        uint64_t top = (uint64_t)(P->glive + (int64_t)x->up);
        if (top > P->gpeak) P->gpeak = top;
        P->glive += x->delta;
    }
    L->n = 0;
}

/* Some packets ahead of the one being parsed: the port it lands on,
 * fetched (a cache miss: the port was last used a window ago), and the
 * free packet it will land in (the pool's stack, top down). The records
 * between are taken to be as long as a plain packet's: a guess, which only
 * steers the fetch. */
#define TAKE_AHEAD 6

static inline void take_fetch(const arb_sim *s, const uint8_t *d, size_t n, size_t o)
{
    size_t a = o + TAKE_AHEAD * (sizeof(struct rec_pkt) + sizeof(struct pkt));
    struct rec_pkt h;
    if (a >= n || n - a < sizeof h) return;
    memcpy(&h, d + a, sizeof h);
    if (h.type != REC_PKT || h.port >= s->n_ports) return;
    SIM_PREFETCH(&s->sp[h.port]);
    if (s->pool.n_free > TAKE_AHEAD)
        SIM_PREFETCH(pool_get(&s->pool, s->pool.free_ids[s->pool.n_free - 1 - TAKE_AHEAD]));
}

/* The packet record at d + *o (of n bytes, REC_PKT) put on its wire
 * (*port), *o past it: 0 and *i its index here (PKT_NONE: it could not
 * land, the run failed), or -1 when the record is malformed (the run
 * failed). */
static inline int take_pkt(arb_sim *s, const uint8_t *d, size_t n, size_t *o, uint32_t *i,
                           uint32_t *port)
{
    struct rec_pkt h;
    if (n - *o < sizeof h + sizeof(struct pkt)) {
        fail(s, ARB_EINVAL); /* cut short */
        return -1;
    }
    memcpy(&h, d + *o, sizeof h);
    size_t plen = sizeof h + sizeof(struct pkt) + (size_t)h.extra;
    if (plen > n - *o || h.hlen > h.extra || h.port >= s->n_ports) {
        fail(s, ARB_EINVAL); /* cut short, or not one of this fabric's */
        return -1;
    }
    *port = h.port;
    *i = receive_pkt(s, h.port, d + *o + sizeof h, d + *o + sizeof h + sizeof(struct pkt), h.hlen,
                     h.extra - h.hlen);
    *o += plen;
    return 0;
}

/* Parse what part `from` sent. */
static void take(arb_sim *s, uint32_t from, const uint8_t *d, size_t n)
{
    struct sim_part *P = s->part;
    size_t o = 0;
    /* a run that failed before (an Arbor engine gave up) still gets the
     * figures: only an error met here stops the parsing */
    int before = s->error;
    while (o < n && s->error == before) {
        uint32_t type, i, port;
        if (n - o < sizeof type) {
            fail(s, ARB_EINVAL); /* cut short */
            return;
        }
        memcpy(&type, d + o, sizeof type);
        if (type == REC_PKT) {
            take_fetch(s, d, n, o);
            if (take_pkt(s, d, n, &o, &i, &port) < 0) return;
            continue;
        }
        if (o + sizeof(struct rec) > n) {
            fail(s, ARB_EINVAL); /* cut short */
            return;
        }
        struct rec r;
        memcpy(&r, d + o, sizeof r);
        o += sizeof r;
        if (r.type == REC_EVENT) {
            net_push_event(s, r.t, r.a);
        } else if (r.type == REC_DONE) {
            struct note x = {r.t, r.b, from, r.c, r.a, r.d};
            fail(s, note_add(&P->done, &P->n_done, &P->cap_done, &x));
        } else if (r.type == REC_LIVE && r.d <= n - o && r.d % sizeof(struct lnote) == 0) {
            fail(s, take_live(P, &s->plog, d + o, (size_t)r.d / sizeof(struct lnote)));
            o += (size_t)r.d;
        } else if (r.type == REC_PORT && o + sizeof(arb_sim_port_stats) <= n) {
            if (P->mps && r.a < s->n_ports) {
                memcpy(&P->mps[r.a], d + o, sizeof(arb_sim_port_stats));
                P->mq[r.a] = r.b;
                P->mhave[r.a] = 1;
            }
            o += sizeof(arb_sim_port_stats);
        } else if (r.type == REC_CAP && r.d <= n - o) {
            if (P->capd) { /* part 0: merged with the others' once all are in (exchange) */
                P->capd[from] = d + o;
                P->capn[from] = (size_t)r.d;
            }
            o += (size_t)r.d;
        } else if (r.type == REC_HOP) {
            /* a short record (r.a: the switches crossed), then the packet's,
             * whose copy here the capture follows from there */
            o += sizeof(struct rec_hop) - sizeof r;
            if (o + sizeof type > n || (memcpy(&type, d + o, sizeof type), type != REC_PKT)) {
                fail(s, ARB_EINVAL); /* not followed by its packet */
                return;
            }
            if (take_pkt(s, d, n, &o, &i, &port) < 0) return;
            if (s->pcap && i != PKT_NONE) pcap_part_land(s, i, port, r.a);
        } else if (r.type == REC_FLOW && o + sizeof(struct flow_half) <= n) {
            struct flow_half h;
            memcpy(&h, d + o, sizeof h);
            o += sizeof h;
            if (r.a < s->n_conns) {
                struct conn *c = &s->conns[r.a];
                if (h.side == 1) {
                    c->retx_bytes = h.retx_bytes;
                    c->timeouts = h.timeouts;
                    c->tlp_probes = h.tlp_probes;
                    c->cc.cnps = h.cnps;
                    c->cc.cuts = h.cuts;
                    c->cc.min_rc = h.min_rc;
                } else {
                    c->finish = h.finish;
                    c->ooo_pkts = h.ooo_pkts;
                    c->reorder_peak = h.reorder_peak;
                }
            }
        } else {
            fail(s, ARB_EINVAL); /* a record this build does not know */
            return;
        }
    }
}

/* Send every part what this one has for it; take what they have for it. */
static int exchange(arb_sim *s)
{
    struct sim_part *P = s->part;
    uint32_t R = P->ops.n_ranks, me = P->ops.rank;
    const uint8_t **send = arb_malloc(R * sizeof *send);
    size_t *len = arb_malloc(R * sizeof *len), *rlen = arb_malloc(R * sizeof *rlen);
    int rc = send && len && rlen ? 0 : ARB_ENOMEM;
    if (s->pcap && me != 0) { /* the frames this part took, to part 0 */
        size_t n = 0;
        const uint8_t *f = pcap_part_frames(s->pcap, &n);
        struct rec r = {REC_CAP, 0, 0, 0, 0, n};
        uint8_t *w = n ? buf_room(&P->out[0], sizeof r + n) : NULL;
        if (n && !w) fail(s, ARB_ENOMEM);
        if (w) {
            memcpy(w, &r, sizeof r);
            memcpy(w + sizeof r, f, n);
        }
        pcap_part_clear(s->pcap);
    }
    for (uint32_t r = 0; rc == 0 && r < R; r++) {
        send[r] = P->out[r].d;
        len[r] = r == me ? 0 : P->out[r].n;
    }
    uint8_t *recv = NULL;
    if (rc == 0) rc = P->ops.alltoall(P->ops.ctx, send, len, &recv, rlen);
    for (uint32_t r = 0; r < R; r++)
        P->out[r].n = 0;
    size_t o = 0;
    evq_batch_begin(&s->q);
    for (uint32_t r = 0; rc == 0 && r < R; r++) {
        if (r != me) take(s, r, recv + o, rlen[r]);
        o += rlen[r];
    }
    fail(s, evq_batch_end(&s->q));
    if (s->pcap && me == 0 && P->capd) { /* every part's frames, merged, to the file */
        P->capd[0] = pcap_part_frames(s->pcap, &P->capn[0]);
        if (rc == 0) pcap_part_write(s->pcap, P->capd, P->capn, R);
        pcap_part_clear(s->pcap);
        memset(P->capn, 0, R * sizeof *P->capn);
    }
    arb_free(send);
    arb_free(len);
    arb_free(rlen);
    return rc;
}

/* This part's completions of the window: to every part. */
static void post_notes(arb_sim *s)
{
    struct sim_part *P = s->part;
    uint32_t R = P->ops.n_ranks, me = P->ops.rank;
    for (size_t k = 0; k < P->n_done; k++) {
        const struct note *x = &P->done[k];
        if (x->rank != me) continue;
        struct rec r = {REC_DONE, x->flow, x->t, x->target, x->idx, x->arg};
        for (uint32_t q = 0; q < R; q++)
            if (q != me) fail(s, buf_put(&P->out[q], &r, sizeof r));
    }
}

/*
 * The pool's peak over the parts: each part's highest point in the window
 * (above the window's start) summed bounds the whole fabric's; only when
 * that bound passes the peak so far do the parts send each other their
 * changes, event by event, to be merged in the sequential order (the peak
 * is climbing; once it stands, windows cost two numbers).
 */
static int live_window(arb_sim *s)
{
    struct sim_part *P = s->part;
    struct live_log *L = &s->plog;
    uint32_t R = P->ops.n_ranks, me = P->ops.rank;
    uint64_t v[2] = {(uint64_t)L->up, (uint64_t)L->cur};
    int rc = P->ops.allsum(P->ops.ctx, v, 2); /* two's complement: the sum wraps right */
    if (rc < 0) return rc;
    int64_t up = (int64_t)v[0], delta = (int64_t)v[1];
    if (P->glive + up > (int64_t)P->gpeak) {
        size_t bytes = L->n * sizeof *L->v;
        P->n_seg = 0;
        fail(s, seg_push(P, 0));
        struct rec r = {REC_LIVE, 0, 0, 0, 0, bytes};
        for (uint32_t q = 0; q < R; q++) {
            uint8_t *w = q != me ? buf_room(&P->out[q], sizeof r + bytes) : NULL;
            if (q != me && !w) fail(s, ARB_ENOMEM);
            if (!w) continue;
            memcpy(w, &r, sizeof r);
            if (bytes) memcpy(w + sizeof r, L->v, bytes);
        }
        rc = exchange(s);
        if (rc < 0) return rc;
        merge_live(s);
    } else {
        P->glive += delta;
    }
    L->n = 0;
    L->cur = L->up = 0;
    return 0;
}

/* ---- the run ------------------------------------------------------------ */

int part_live_grow(arb_sim *s)
{
    struct live_log *L = &s->plog;
    struct lnote *nv = room(L->v, L->n, &L->cap, sizeof *nv, 1024);
    if (!nv) return ARB_ENOMEM;
    L->v = nv;
    return 0;
}
/* Are port p's counters (arb_sim_port, net_queue_bytes) as last sent to
 * part 0? Yes, without computing them, when nothing started, queued, was
 * dropped or paused there since: no packet scheduled and not yet started
 * (whose start would move the counters with time alone), and not paused
 * now. Otherwise they are computed and compared. */
static int port_same(const arb_sim *s, uint32_t p)
{
    const struct sim_part *P = s->part;
    const struct sport *sp = &s->sp[p];
    const struct sport_cold *c = &s->spc[p];
    return sp->tx_pkts == P->stx[p] && sp->q_bytes == P->sq[p] &&
           (sp->kind != PORT_SCHED || sp->sched.pkts == 0) && !sp->paused &&
           sp->max_q == P->sps[p].max_queue && c->drops == P->sps[p].drops &&
           c->paused_ps == P->sps[p].paused_ps;
}

/* This part's ports, for part 0: those that changed since last sent
 * (part 0 makes room for them). Sent with the next exchange. */
static void post_ports(arb_sim *s)
{
    struct sim_part *P = s->part;
    uint32_t me = P->ops.rank;
    if (me != 0 && !P->sps) {
        P->sps = arb_calloc(s->n_ports ? s->n_ports : 1, sizeof *P->sps);
        P->sq = arb_calloc(s->n_ports ? s->n_ports : 1, sizeof *P->sq);
        P->stx = arb_calloc(s->n_ports ? s->n_ports : 1, sizeof *P->stx);
        if (!P->sps || !P->sq || !P->stx) fail(s, ARB_ENOMEM);
    }
    if (me != 0 && P->sps && P->sq && P->stx)
        for (uint32_t p = 0; p < s->n_ports; p++) {
            if (s->pcut[p] != PCUT_LOCAL && s->pcut[p] != PCUT_OUT) continue;
            if (port_same(s, p)) continue;
            P->stx[p] = s->sp[p].tx_pkts;
            arb_sim_port_stats ps;
            memset(&ps, 0, sizeof ps);
            arb_sim_port(s, p, &ps);
            uint32_t q = net_queue_bytes(s, p);
            if (q == P->sq[p] && memcmp(&ps, &P->sps[p], sizeof ps) == 0) continue;
            P->sps[p] = ps;
            P->sq[p] = q;
            struct rec r = {REC_PORT, p, 0, q, 0, 0};
            fail(s, buf_put(&P->out[0], &r, sizeof r));
            fail(s, buf_put(&P->out[0], &ps, sizeof ps));
        }
    if (me == 0 && !P->mps) {
        P->mps = arb_calloc(s->n_ports ? s->n_ports : 1, sizeof *P->mps);
        P->mq = arb_calloc(s->n_ports ? s->n_ports : 1, sizeof *P->mq);
        P->mhave = arb_calloc(s->n_ports ? s->n_ports : 1, 1);
        if (!P->mps || !P->mq || !P->mhave) fail(s, ARB_ENOMEM);
    }
}

int part_pcap_room(arb_sim *s)
{
    struct sim_part *P = s->part;
    if (P->ops.rank != 0 || P->capd) return 0;
    P->capd = arb_calloc(P->ops.n_ranks, sizeof *P->capd);
    P->capn = arb_calloc(P->ops.n_ranks, sizeof *P->capn);
    return P->capd && P->capn ? 0 : ARB_ENOMEM;
}

int part_send_hop(const arb_sim *s, uint32_t port, uint32_t crossed)
{
    struct rec_hop r = {REC_HOP, crossed};
    return buf_put(&s->part->out[s->lk[s->sp[port].link].to], &r, sizeof r);
}

int part_flush(arb_sim *s)
{
    return exchange(s);
}

int arb_sim_part_ports(arb_sim *s)
{
    if (!s || !s->part) return 0;
    if (s->in_run) return ARB_ESTATE;
    post_ports(s);
    return exchange(s);
}

/* Every part's counters summed (or their extremes) into P->gst. */
static int sync_end(arb_sim *s)
{
    struct sim_part *P = s->part;
    /* between runs every part is where one process is: at the latest
     * part's last event (every event left is past the run's end), first,
     * so that what counts up to now (PFC pauses still open) counts alike */
    uint64_t last = UINT64_MAX - s->now;
    int rc = P->ops.allmin(P->ops.ctx, &last, 1);
    if (rc < 0) return rc;
    if (UINT64_MAX - last > s->now) s->now = UINT64_MAX - last;
    arb_sim_stats st;
    sim_local_stats(s, &st);
    P->info.events = st.events;
    rc = s->arb ? arbor_part_sync(s) : 0;
    if (rc < 0) return rc;
    uint64_t sum[25] = {
        st.events,     st.packet_hops,   st.pkts_sent,         st.pkts_delivered, st.data_pkts_sent,
        st.bytes_sent, st.payload_sent,  st.payload_delivered, st.retx_bytes,     st.drops,
        st.lost,       st.drop_bytes,    st.duplicated,        st.reordered,      st.unroutable,
        st.ecn_marks,  st.pfc_pauses,    st.pfc_paused_ps,     st.ooo_pkts,       st.timeouts,
        st.cnps_sent,  st.cnps_received, st.rate_cuts,         st.tlp_probes,     st.flows_done};
    uint64_t in_flight = st.in_flight;
    rc = P->ops.allsum(P->ops.ctx, sum, 25);
    if (rc == 0) rc = P->ops.allsum(P->ops.ctx, &in_flight, 1);
    /* maxima as minima of their complements; the error too */
    uint64_t mn[4] = {UINT64_MAX - s->active, UINT64_MAX - st.max_queue_bytes,
                      UINT64_MAX - P->gpeak,
                      s->error ? (uint64_t)(-(int64_t)s->error) : UINT64_MAX};
    if (rc == 0) rc = P->ops.allmin(P->ops.ctx, mn, 4);
    if (rc < 0) return rc;
    arb_sim_stats *g = &P->gst;
    uint64_t *f[24] = {
        &g->events,         &g->packet_hops,   &g->pkts_sent,    &g->pkts_delivered,
        &g->data_pkts_sent, &g->bytes_sent,    &g->payload_sent, &g->payload_delivered,
        &g->retx_bytes,     &g->drops,         &g->lost,         &g->drop_bytes,
        &g->duplicated,     &g->reordered,     &g->unroutable,   &g->ecn_marks,
        &g->pfc_pauses,     &g->pfc_paused_ps, &g->ooo_pkts,     &g->timeouts,
        &g->cnps_sent,      &g->cnps_received, &g->rate_cuts,    &g->tlp_probes};
    for (int k = 0; k < 24; k++)
        *f[k] = sum[k];
    g->flows_done = (uint32_t)sum[24];
    g->in_flight = (uint32_t)in_flight;
    g->max_queue_bytes = (uint32_t)(UINT64_MAX - mn[1]);
    uint64_t peak = UINT64_MAX - mn[2];
    g->pool_peak = (uint32_t)peak;
    g->pool_size = (uint32_t)((peak + POOL_CHUNK - 1) / POOL_CHUNK * POOL_CHUNK);
    P->gnow = s->now;
    P->gactive = UINT64_MAX - mn[0];
    if (mn[3] != UINT64_MAX && !s->error) s->error = -(int)mn[3];
    return 0;
}

/*
 * After a window run to `end`: what has arrived on this part's wires
 * across the cut is let go, as the arrival events one process has there
 * would have by then. Those are the events up to the window's end, or, in
 * a run that stopped sooner, up to its last event: the stopping point
 * (arb_sim_part_stop_after), or the event that failed.
 */
static void drain_wires(arb_sim *s, arb_time end)
{
    struct sim_part *P = s->part;
    arb_time t = end;
    uint32_t target = UINT32_MAX;
    if (s->error) {
        t = s->now;
        target = s->part_target;
    } else if (s->part_stop_t <= end) {
        t = s->part_stop_t;
        target = s->part_stop_target;
    }
    cut_wires_drain(s, &P->sent, t, target, P->mark);
}

int part_run(arb_sim *s, arb_time until)
{
    struct sim_part *P = s->part;
    int rc = 0;
    for (;;) {
        uint64_t v[2] = {evq_peek_time(&s->q),
                         s->error ? (uint64_t)(-(int64_t)s->error) : UINT64_MAX};
        rc = P->ops.allmin(P->ops.ctx, v, 2);
        if (rc < 0) break;
        if (v[1] != UINT64_MAX) {
            if (!s->error) s->error = -(int)v[1];
            /* the run ends at the last event of any part (an Arbor failure's,
             * arb_sim_part_stop_after): what starts by then has started in
             * every part's ports, as in one process (sched_catch_up) */
            uint64_t last = UINT64_MAX - s->now;
            rc = P->ops.allmin(P->ops.ctx, &last, 1);
            if (rc == 0 && UINT64_MAX - last > s->horizon) s->horizon = UINT64_MAX - last;
            break;
        }
        if (v[0] > until || v[0] == ARB_TIME_NEVER) break; /* (never: every queue is empty) */
        arb_time end = P->lookahead == ARB_TIME_NEVER || v[0] + P->lookahead - 1 < v[0]
                           ? until
                           : v[0] + P->lookahead - 1;
        if (end > until) end = until;
        sim_run_window(s, end);
        if (s->stop_at < end) until = s->stop_at; /* one part: a callback's timer (stop_at) */
        P->win_end = end;
        drain_wires(s, end);
        P->info.windows++;
        post_notes(s);
        rc = exchange(s);
        if (rc < 0) break;
        s->stop_at = until;
        replay_done(s);
        if (s->stop_at < until) {                       /* a callback's timer: the run ends there */
            if (s->stop_at <= end) fail(s, ARB_ESTATE); /* inside the window just run */
            until = s->stop_at;
        }
        rc = live_window(s);
        if (rc < 0) break;
    }
    /* the readers of a whole run see every event up to `until` done */
    if (rc == 0 && !s->error && until > s->horizon) s->horizon = until;
    if (rc == 0) rc = sync_end(s);
    if (rc < 0 && !s->error) s->error = rc;
    return s->error;
}

/* ---- the fabric changing between runs ----------------------------------- */

void part_changed(arb_sim *s, uint32_t live_before)
{
    struct sim_part *P = s->part;
    /* the packets the flush let go: the whole fabric's live count */
    uint64_t d = (uint64_t)((int64_t)s->pool.live - (int64_t)live_before);
    fail(s, P->ops.allsum(P->ops.ctx, &d, 1)); /* two's complement: the sum wraps right */
    P->glive += (int64_t)d;
    arb_time la = cut_lookahead(s);
    if (la == 0)
        fail(s, ARB_EINVAL); /* a part would reach another at once */
    else
        P->lookahead = P->info.lookahead = la;
    /* what the flush sent across (PFC's resumes of the queues it emptied) */
    fail(s, exchange(s));
}

/* ---- reading ------------------------------------------------------------- */

int part_port_mirror(const arb_sim *s, uint32_t port, uint32_t *q, arb_sim_port_stats *ps)
{
    const struct sim_part *P = s->part;
    if (!P || !P->mhave || !P->mhave[port] || s->in_run) return 0;
    if (q) *q = P->mq[port];
    if (ps) *ps = P->mps[port];
    return 1;
}

const arb_sim_stats *part_stats(const arb_sim *s)
{
    return s->part && !s->in_run ? &s->part->gst : NULL;
}

arb_time part_now(const arb_sim *s, int active)
{
    return active ? s->part->gactive : s->part->gnow;
}

int arb_sim_part_collect(arb_sim *s)
{
    struct sim_part *P = s->part;
    if (!P) return 0;
    uint32_t me = P->ops.rank;
    int run_error = s->error; /* the run's own (every part has it): not the collection's */
    post_ports(s);            /* and every port's counters */
    if (me != 0)
        for (uint32_t f = 0; f < s->n_conns; f++) {
            const struct conn *c = &s->conns[f];
            for (uint32_t side = 1; side <= 2; side++) {
                uint32_t h = side == 1 ? c->src : c->dst;
                if (P->node_part[h] != me) continue;
                struct rec r = {REC_FLOW, f, 0, 0, 0, 0};
                struct flow_half x = {c->finish,  c->retx_bytes, c->ooo_pkts,   c->timeouts,
                                      c->cc.cnps, c->cc.cuts,    c->tlp_probes, c->reorder_peak,
                                      side,       c->cc.min_rc};
                fail(s, buf_put(&P->out[0], &r, sizeof r));
                fail(s, buf_put(&P->out[0], &x, sizeof x));
            }
        }
    int rc = exchange(s);
    uint64_t e = s->error && s->error != run_error ? (uint64_t)(-(int64_t)s->error) : UINT64_MAX;
    if (rc == 0) rc = P->ops.allmin(P->ops.ctx, &e, 1);
    if (rc == 0 && e != UINT64_MAX) rc = -(int)e;
    return rc;
}

/* ---- cutting the fabric ------------------------------------------------- */

int arb_sim_part_subtrees(const arb_topo *topo, uint32_t n_parts, uint32_t *node_part)
{
    uint32_t H = arb_topo_n_hosts(topo), N = arb_topo_n_nodes(topo);
    if (n_parts == 0 || n_parts > H) return ARB_EINVAL;
    const arb_node *nodes = arb_topo_nodes(topo);
    const arb_port *ports = arb_topo_ports(topo);
    uint32_t *lo = arb_malloc((N ? N : 1) * sizeof *lo), *hi = arb_malloc((N ? N : 1) * sizeof *hi);
    if (!lo || !hi) {
        arb_free(lo);
        arb_free(hi);
        return ARB_ENOMEM;
    }
    unsigned top = 0;
    for (uint32_t v = 0; v < N; v++) {
        lo[v] = v < H ? v : UINT32_MAX;
        hi[v] = v < H ? v : 0;
        if (v < H) node_part[v] = (uint32_t)((uint64_t)v * n_parts / H);
        if (nodes[v].level > top) top = nodes[v].level;
    }
    for (unsigned l = 1; l <= top; l++) {
        uint32_t rr = 0;
        for (uint32_t v = H; v < N; v++) {
            const arb_node *n = &nodes[v];
            if (n->level != l) continue;
            for (uint32_t p = n->first_port; p < n->first_up; p++) {
                uint32_t u = ports[p].peer;
                if (lo[u] < lo[v]) lo[v] = lo[u];
                if (hi[u] > hi[v]) hi[v] = hi[u];
            }
            if (lo[v] == UINT32_MAX) /* nothing below it */
                node_part[v] = rr++ % n_parts;
            else if (node_part[lo[v]] == node_part[hi[v]])
                node_part[v] = node_part[lo[v]];
            else
                node_part[v] = rr++ % n_parts;
        }
    }
    arb_free(lo);
    arb_free(hi);
    return 0;
}
