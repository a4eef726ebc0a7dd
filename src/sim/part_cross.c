/* What crosses the cut of a partitioned run (src/sim/part_int.h, part.c):
 * packets, events, completions, port and flow halves, capture frames and
 * live-packet changes written as records during a window, exchanged
 * between the parts at its end and taken in, in one order on every part. */
#include "part_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

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

int part_buf_put(struct buf *b, const void *p, size_t n)
{
    uint8_t *w = buf_room(b, n);
    if (!w) return ARB_ENOMEM;
    memcpy(w, p, n);
    return 0;
}

void part_fail(arb_sim *s, int rc)
{
    if (rc < 0 && !s->error) s->error = rc;
}

/* v (n used of *cap, `size` bytes each) with room for one more: itself,
 * or grown to twice (from `first`), or NULL (out of memory: v stays). */
void *part_room(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
    if (n < *cap) return v;
    size_t ncap = *cap ? *cap * 2 : first;
    void *nv = arb_realloc(v, ncap * size);
    if (nv) *cap = ncap;
    return nv;
}

/* ---- the packets on the wires across the cut (struct cut_wires) --------- */

void part_cut_wires_free(struct cut_wires *w)
{
    for (size_t k = 0; k < w->cap; k++)
        arb_free(w->b[k].e);
    arb_free(w->b);
    w->b = NULL;
    w->cap = w->n = 0;
}

/* Buckets of the largest power of two of picoseconds up to the lookahead
 * (1.024 ns at least, 1.1 s at most). */
unsigned part_cut_wires_shift(arb_time lookahead)
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
    part_cut_wires_free(w);
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
void part_cut_wires_drain(arb_sim *s, struct cut_wires *w, arb_time t, uint32_t target,
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
    struct note *nv = part_room(*v, *n, cap, sizeof *nv, 256);
    if (!nv) return ARB_ENOMEM;
    *v = nv;
    nv[(*n)++] = *x;
    return 0;
}

/* The part that owns port p's sending side. */
static uint32_t port_part(const arb_sim *s, uint32_t p)
{
    return s->part->node_part[s->owner[p]];
}

/* ---- what crosses ------------------------------------------------------- */

/* The bucket's array grown for one more note (cut_wires_note). */
static SIM_COLD int cut_bucket_grow(struct cut_bucket *k)
{
    struct cut_sent *ne = part_room(k->e, k->n, &k->cap, sizeof *ne, 64);
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
        part_fail(s, ARB_ENOMEM);
        return;
    }
    memcpy(w + sizeof(struct rec_pkt), k, sizeof *k);
    part_fail(s, cut_wires_note(&P->sent, &e));
    P->info.sent++;
}

void part_send_event(arb_sim *s, arb_time t, uint32_t target)
{
    struct sim_part *P = s->part;
    struct rec r = {REC_EVENT, target, t, 0, 0, 0};
    part_fail(s, part_buf_put(&P->out[port_part(s, target >> 2)], &r, sizeof r));
}

void part_take_done(arb_sim *s, uint32_t target)
{
    struct sim_part *P = s->part;
    for (uint32_t k = 0; k < s->n_done; k++) {
        struct note x = {s->now, target, P->ops.rank, 0, s->done[k], 0};
        if (x.flow != SIM_ARBOR_NOTE) {
            x.idx = P->seq++;
            part_fail(s, note_add(&P->done, &P->n_done, &P->cap_done, &x));
            continue;
        }
        for (uint32_t i = 0, n = arbor_n_notes(s); i < n; i++) { /* as arbor_report runs them */
            x.idx = P->seq++;
            x.arg = arbor_note(s, i);
            part_fail(s, note_add(&P->done, &P->n_done, &P->cap_done, &x));
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
        part_fail(s, ARB_ENOMEM);
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
            part_fail(s, rc);
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
void part_replay_done(arb_sim *s)
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
    size_t *ns = part_room(P->seg, P->n_seg, &P->cap_seg, sizeof *ns, 16);
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
    part_fail(s, seg_push(P, L->n));
    part_fail(s, merge_runs(P, L));
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
        part_fail(s, ARB_EINVAL); /* cut short */
        return -1;
    }
    memcpy(&h, d + *o, sizeof h);
    size_t plen = sizeof h + sizeof(struct pkt) + (size_t)h.extra;
    if (plen > n - *o || h.hlen > h.extra || h.port >= s->n_ports) {
        part_fail(s, ARB_EINVAL); /* cut short, or not one of this fabric's */
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
            part_fail(s, ARB_EINVAL); /* cut short */
            return;
        }
        memcpy(&type, d + o, sizeof type);
        if (type == REC_PKT) {
            take_fetch(s, d, n, o);
            if (take_pkt(s, d, n, &o, &i, &port) < 0) return;
            continue;
        }
        if (o + sizeof(struct rec) > n) {
            part_fail(s, ARB_EINVAL); /* cut short */
            return;
        }
        struct rec r;
        memcpy(&r, d + o, sizeof r);
        o += sizeof r;
        if (r.type == REC_EVENT) {
            net_push_event(s, r.t, r.a);
        } else if (r.type == REC_DONE) {
            struct note x = {r.t, r.b, from, r.c, r.a, r.d};
            part_fail(s, note_add(&P->done, &P->n_done, &P->cap_done, &x));
        } else if (r.type == REC_LIVE && r.d <= n - o && r.d % sizeof(struct lnote) == 0) {
            part_fail(s, take_live(P, &s->plog, d + o, (size_t)r.d / sizeof(struct lnote)));
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
                part_fail(s, ARB_EINVAL); /* not followed by its packet */
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
            part_fail(s, ARB_EINVAL); /* a record this build does not know */
            return;
        }
    }
}

/* Send every part what this one has for it; take what they have for it. */
int part_exchange(arb_sim *s)
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
        if (n && !w) part_fail(s, ARB_ENOMEM);
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
    part_fail(s, evq_batch_end(&s->q));
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
void part_post_notes(arb_sim *s)
{
    struct sim_part *P = s->part;
    uint32_t R = P->ops.n_ranks, me = P->ops.rank;
    for (size_t k = 0; k < P->n_done; k++) {
        const struct note *x = &P->done[k];
        if (x->rank != me) continue;
        struct rec r = {REC_DONE, x->flow, x->t, x->target, x->idx, x->arg};
        for (uint32_t q = 0; q < R; q++)
            if (q != me) part_fail(s, part_buf_put(&P->out[q], &r, sizeof r));
    }
}

/*
 * The pool's peak over the parts: each part's highest point in the window
 * (above the window's start) summed bounds the whole fabric's; only when
 * that bound passes the peak so far do the parts send each other their
 * changes, event by event, to be merged in the sequential order (the peak
 * is climbing; once it stands, windows cost two numbers).
 */
int part_live_window(arb_sim *s)
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
        part_fail(s, seg_push(P, 0));
        struct rec r = {REC_LIVE, 0, 0, 0, 0, bytes};
        for (uint32_t q = 0; q < R; q++) {
            uint8_t *w = q != me ? buf_room(&P->out[q], sizeof r + bytes) : NULL;
            if (q != me && !w) part_fail(s, ARB_ENOMEM);
            if (!w) continue;
            memcpy(w, &r, sizeof r);
            if (bytes) memcpy(w + sizeof r, L->v, bytes);
        }
        rc = part_exchange(s);
        if (rc < 0) return rc;
        merge_live(s);
    } else {
        P->glive += delta;
    }
    L->n = 0;
    L->cur = L->up = 0;
    return 0;
}
