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
 *
 * This file: set-up, the run, reading and cutting the fabric; what crosses
 * the cut is part_cross.c's (src/sim/part_int.h).
 */
#include "part_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbor/base.h"
#include "base/alloc.h"

/* ---- set-up ------------------------------------------------------------- */

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
    part_cut_wires_free(&P->sent);
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
                        "local, the default): the global order has no parts");
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
    P->sent.shift = part_cut_wires_shift(P->lookahead);
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

/* ---- the run ------------------------------------------------------------ */

int part_live_grow(arb_sim *s)
{
    struct live_log *L = &s->plog;
    struct lnote *nv = part_room(L->v, L->n, &L->cap, sizeof *nv, 1024);
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
        if (!P->sps || !P->sq || !P->stx) part_fail(s, ARB_ENOMEM);
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
            part_fail(s, part_buf_put(&P->out[0], &r, sizeof r));
            part_fail(s, part_buf_put(&P->out[0], &ps, sizeof ps));
        }
    if (me == 0 && !P->mps) {
        P->mps = arb_calloc(s->n_ports ? s->n_ports : 1, sizeof *P->mps);
        P->mq = arb_calloc(s->n_ports ? s->n_ports : 1, sizeof *P->mq);
        P->mhave = arb_calloc(s->n_ports ? s->n_ports : 1, 1);
        if (!P->mps || !P->mq || !P->mhave) part_fail(s, ARB_ENOMEM);
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
    return part_buf_put(&s->part->out[s->lk[s->sp[port].link].to], &r, sizeof r);
}

int part_flush(arb_sim *s)
{
    return part_exchange(s);
}

int arb_sim_part_ports(arb_sim *s)
{
    if (!s || !s->part) return 0;
    if (s->in_run) return ARB_ESTATE;
    post_ports(s);
    return part_exchange(s);
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
    part_cut_wires_drain(s, &P->sent, t, target, P->mark);
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
        part_post_notes(s);
        rc = part_exchange(s);
        if (rc < 0) break;
        s->stop_at = until;
        part_replay_done(s);
        if (s->stop_at < until) { /* a callback's timer: the run ends there */
            if (s->stop_at <= end) part_fail(s, ARB_ESTATE); /* inside the window just run */
            until = s->stop_at;
        }
        rc = part_live_window(s);
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
    part_fail(s, P->ops.allsum(P->ops.ctx, &d, 1)); /* two's complement: the sum wraps right */
    P->glive += (int64_t)d;
    arb_time la = cut_lookahead(s);
    if (la == 0)
        part_fail(s, ARB_EINVAL); /* a part would reach another at once */
    else
        P->lookahead = P->info.lookahead = la;
    /* what the flush sent across (PFC's resumes of the queues it emptied) */
    part_fail(s, part_exchange(s));
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

void part_moved_to(arb_sim *s, arb_time now)
{
    s->part->gnow = now;
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
                part_fail(s, part_buf_put(&P->out[0], &r, sizeof r));
                part_fail(s, part_buf_put(&P->out[0], &x, sizeof x));
            }
        }
    int rc = part_exchange(s);
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
