/*
 * Replaying a training iteration: every rank walks its DAG of trace
 * nodes. Compute nodes queue for the rank's one compute stream (in the
 * order they become ready) and end on a timer; collectives and
 * point-to-point transfers run as host-collective instances on the
 * executor (hc_exec.c): a collective waits for both ranks of each
 * message to have called it, a send starts when issued (eager) and a
 * receive ends once issued and its data has arrived.
 *
 * Ready nodes go on a work stack drained in a loop (never recursively:
 * a long chain of no-op nodes must not grow the C stack). Per rank, the
 * time is accounted at every change of its compute stream or of its
 * count of running communication nodes.
 */
#include "hc_int.h"
#include "tr_int.h"
#include "wl_int.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

struct wl_iter {
    arb_trace *tr;
    uint32_t R;
    uint32_t *host;       /* per trace rank */
    uint32_t n_coll_inst; /* executor instances 0..n_colls are the collectives (TR_NONE: a
                             group of one), then one per p2p */
    uint32_t *coll_inst;  /* per matched collective: executor instance or TR_NONE */
    uint32_t *coll_arb;   /* per matched collective: its Arbor collective (iter_arb.c) or
                             TR_NONE (the host algorithm, or a group of one) */
    uint32_t *inst_ref;   /* per executor instance: collective index, or n_colls + p2p index */
    /* per node (global index) */
    uint32_t *deps_left;
    uint8_t *done;
    /* per rank */
    uint32_t *cq; /* compute FIFO storage: rank_off[r] .. */
    uint32_t *cq_head, *cq_tail;
    uint32_t *computing;   /* node on the compute stream, TR_NONE: idle */
    arb_time *comp_end;    /* its end (ARB_TIME_NEVER when idle) */
    uint32_t *comm_active; /* communication nodes running */
    arb_time *last, *t_comp, *t_comm, *t_exp, *finish;
    uint64_t *nodes_done;
    uint32_t ranks_done;
    arb_time start, end;
    /* work stack of ready nodes */
    uint32_t *stack;
    size_t n_stack;
    int draining;
    arb_sim *sim;
};

void wl_iter_free(struct wl_iter *it)
{
    if (!it) return;
    arb_trace_free(it->tr);
    arb_free(it->host);
    arb_free(it->coll_inst);
    arb_free(it->coll_arb);
    arb_free(it->inst_ref);
    arb_free(it->deps_left);
    arb_free(it->done);
    arb_free(it->cq);
    arb_free(it->cq_head);
    arb_free(it->cq_tail);
    arb_free(it->computing);
    arb_free(it->comp_end);
    arb_free(it->comm_active);
    arb_free(it->last);
    arb_free(it->t_comp);
    arb_free(it->t_comm);
    arb_free(it->t_exp);
    arb_free(it->finish);
    arb_free(it->nodes_done);
    arb_free(it->stack);
    arb_free(it);
}

static uint32_t rank_of(const struct wl_iter *it, uint32_t g)
{
    const uint32_t *off = it->tr->rank_off;
    uint32_t lo = 0, hi = it->R; /* the last r with off[r] <= g */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (off[mid] <= g)
            lo = mid;
        else
            hi = mid;
    }
    while (lo + 1 < it->R && off[lo + 1] <= g) /* ranks without nodes */
        lo++;
    return lo;
}

static const struct tr_node *node_at(const struct wl_iter *it, uint32_t r, uint32_t g)
{
    return &it->tr->rk[r].nodes[g - it->tr->rank_off[r]];
}

/* Account rank r's time up to now. */
static void account(struct wl_iter *it, uint32_t r, arb_time now)
{
    arb_time dt = now - it->last[r];
    if (it->computing[r] != TR_NONE) it->t_comp[r] += dt;
    if (it->comm_active[r]) {
        it->t_comm[r] += dt;
        if (it->computing[r] == TR_NONE) it->t_exp[r] += dt;
    }
    it->last[r] = now;
}

static void push(arb_workload *w, uint32_t g)
{
    struct wl_iter *it = w->it;
    it->stack[it->n_stack++] = g; /* at most every node once: sized at n_nodes */
}

/* Node g of rank r is done: its dependents may become ready. */
static void complete(arb_workload *w, uint32_t r, uint32_t g, arb_time now)
{
    struct wl_iter *it = w->it;
    if (it->done[g]) return;
    it->done[g] = 1;
    const struct tr_rank *k = &it->tr->rk[r];
    uint32_t i = g - it->tr->rank_off[r];
    for (uint32_t e = k->rdep_off[i]; e < k->rdep_off[i + 1]; e++) {
        uint32_t d = it->tr->rank_off[r] + k->rdep[e];
        if (--it->deps_left[d] == 0) push(w, d);
    }
    if (++it->nodes_done[r] == k->n) {
        account(it, r, now);
        it->finish[r] = now;
        if (++it->ranks_done == it->R) it->end = now;
    }
}

/* Start the next queued compute node of rank r if its stream is idle. */
static void try_compute(arb_workload *w, uint32_t r, arb_time now)
{
    struct wl_iter *it = w->it;
    while (it->computing[r] == TR_NONE && it->cq_head[r] != it->cq_tail[r]) {
        uint32_t g = it->cq[it->cq_head[r]++];
        account(it, r, now);
        const struct tr_node *n = node_at(it, r, g);
        if (n->dur == 0) {
            complete(w, r, g, now);
            continue;
        }
        it->computing[r] = g;
        it->comp_end[r] = now + n->dur;
        arb_sim_stop_at(it->sim, it->comp_end[r]); /* inside a run: wake us then */
    }
}

static void comm_begin(struct wl_iter *it, uint32_t r, arb_time now)
{
    account(it, r, now);
    it->comm_active[r]++;
}

/* Dispatch ready node g. */
static void run_node(arb_workload *w, uint32_t g, arb_time now)
{
    struct wl_iter *it = w->it;
    uint32_t r = rank_of(it, g);
    const struct tr_node *n = node_at(it, r, g);
    switch (n->op) {
    case TR_COMP:
        it->cq[it->cq_tail[r]++] = g;
        try_compute(w, r, now);
        break;
    case TR_NOP:
        complete(w, r, g, now);
        break;
    case TR_COLL: {
        uint32_t inst = it->coll_inst[n->match], arb = it->coll_arb[n->match];
        if (inst == TR_NONE && arb == TR_NONE) { /* a group of one */
            complete(w, r, g, now);
            break;
        }
        const struct tr_group *G = &it->tr->g[it->tr->colls[n->match].group];
        uint32_t m = 0;
        while (G->ranks[m] != r)
            m++;
        comm_begin(it, r, now);
        if (arb != TR_NONE)
            iter_arb_enter(w, it->sim, arb, m, now);
        else
            hc_exec_enter(w->hx, it->sim, inst, m, now);
        break;
    }
    case TR_SEND:
    case TR_RECV:
        comm_begin(it, r, now);
        hc_exec_enter(w->hx, it->sim, it->n_coll_inst + n->match, n->op == TR_RECV, now);
        break;
    }
}

static void drain(arb_workload *w, arb_time now)
{
    struct wl_iter *it = w->it;
    if (it->draining) return; /* the outer loop takes what was pushed */
    it->draining = 1;
    while (it->n_stack && !w->error)
        run_node(w, it->stack[--it->n_stack], now);
    it->draining = 0;
}

/* The communication node g is done. */
static void comm_done(arb_workload *w, arb_sim *s, uint32_t g, arb_time now)
{
    struct wl_iter *it = w->it;
    it->sim = s;
    uint32_t r = rank_of(it, g);
    account(it, r, now);
    it->comm_active[r]--;
    complete(w, r, g, now);
    drain(w, now);
}

/* The executor: member `m` of instance `inst` is done. */
static void inst_done(void *ctx, arb_sim *s, uint32_t inst, uint32_t m, arb_time now)
{
    arb_workload *w = ctx;
    struct wl_iter *it = w->it;
    uint32_t ref = it->inst_ref[inst], g;
    if (ref < it->tr->n_colls)
        g = it->tr->coll_nodes[it->tr->colls[ref].node_off + m];
    else
        g = m == 0 ? it->tr->p2p[ref - it->tr->n_colls].send_node
                   : it->tr->p2p[ref - it->tr->n_colls].recv_node;
    comm_done(w, s, g, now);
}

void wl_iter_member_done(arb_workload *w, arb_sim *s, uint32_t ref, uint32_t m, arb_time now)
{
    const struct wl_iter *it = w->it;
    comm_done(w, s, it->tr->coll_nodes[it->tr->colls[ref].node_off + m], now);
}

/* The executor instances: every matched collective, then every p2p. */
static int make_instances(arb_workload *w, const arb_iteration_config *ic, char *err, size_t errlen)
{
    struct wl_iter *it = w->it;
    const arb_trace *t = it->tr;
    uint32_t *hosts = arb_malloc(((size_t)it->R + 2) * sizeof *hosts);
    it->coll_inst = arb_malloc(((size_t)t->n_colls + 1) * sizeof *it->coll_inst);
    it->coll_arb = arb_malloc(((size_t)t->n_colls + 1) * sizeof *it->coll_arb);
    it->inst_ref = arb_malloc(((size_t)t->n_colls + t->n_p2p + 1) * sizeof *it->inst_ref);
    if (!hosts || !it->coll_inst || !it->coll_arb || !it->inst_ref ||
        hc_exec_new(&w->hx, w, inst_done, w) < 0) {
        arb_free(hosts);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    char where[600], msg[400];
    int rc = ic->arbor ? iter_arb_new(&w->ia, ic, err, errlen) : 0;
    uint32_t n_inst = 0;
    for (uint32_t c = 0; rc == 0 && c < t->n_colls; c++) {
        const struct tr_coll *C = &t->colls[c];
        const struct tr_group *G = &t->g[C->group];
        it->coll_inst[c] = TR_NONE;
        it->coll_arb[c] = TR_NONE;
        if (G->n < 2) continue;
        for (uint32_t m = 0; m < G->n; m++)
            hosts[m] = it->host[G->ranks[m]];
        if (w->ia) { /* Arbor, unless it has no such collective */
            rc = iter_arb_add(w->ia, c, (arb_coll)C->coll, hosts, G->n, C->bytes, C->root,
                              &it->coll_arb[c], msg, sizeof msg);
            if (rc < 0) {
                uint32_t g0 = t->coll_nodes[C->node_off], r0 = rank_of(it, g0);
                tr_where(t, r0, g0 - t->rank_off[r0], where, sizeof where);
                rc = arb_errf(err, errlen, rc, "%s: %s", where, msg);
                break;
            }
            if (it->coll_arb[c] != TR_NONE) continue;
        }
        arb_hc_algo a = ic->algo;
        if (arb_hc_algo_resolve((arb_coll)C->coll, a, C->bytes) < 0) a = ARB_HC_AUTO;
        struct hc_plan *p;
        rc = hc_plan_build(&p, (arb_coll)C->coll, a, G->n, C->bytes, ic->chunk, C->root, msg,
                           sizeof msg);
        if (rc < 0) {
            uint32_t g0 = t->coll_nodes[C->node_off], r0 = rank_of(it, g0);
            tr_where(t, r0, g0 - t->rank_off[r0], where, sizeof where);
            rc = arb_errf(err, errlen, rc, "%s: %s", where, msg);
            break;
        }
        long k = hc_exec_add(w->hx, p, hosts, 1);
        if (k < 0) rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        it->coll_inst[c] = (uint32_t)k;
        it->inst_ref[n_inst++] = c;
    }
    it->n_coll_inst = n_inst;
    for (uint32_t q = 0; rc == 0 && q < t->n_p2p; q++) {
        struct hc_plan *p;
        if (hc_plan_p2p(&p, t->p2p[q].bytes) < 0) {
            rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
            break;
        }
        hosts[0] = it->host[t->p2p[q].src];
        hosts[1] = it->host[t->p2p[q].dst];
        if (hc_exec_add(w->hx, p, hosts, 0) < 0)
            rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        it->inst_ref[n_inst++] = t->n_colls + q;
    }
    arb_free(hosts);
    if (rc < 0) return rc;
    /* flows and bytes planned */
    for (uint32_t i = 0; i < n_inst; i++) {
        const struct hc_plan *p = hc_exec_plan(w->hx, i);
        for (uint32_t m = 0; m < p->n_msgs; m++) {
            w->planned += p->bytes[m] < w->cfg.qps ? p->bytes[m] : w->cfg.qps;
            w->bytes_planned += p->bytes[m];
        }
    }
    return 0;
}

void arb_iteration_config_default(arb_iteration_config *ic)
{
    memset(ic, 0, sizeof *ic);
    ic->algo = ARB_HC_AUTO;
    ic->inner_ranks = 0;
    ic->inner_pieces = 2;
}

int arb_workload_new_iteration(arb_workload **out, arb_trace *trace, const arb_iteration_config *ic,
                               uint32_t n_hosts, const arb_workload_config *cfg, char *err,
                               size_t errlen)
{
    *out = NULL;
    if (!trace) return arb_errf(err, errlen, ARB_EINVAL, "no trace");
    arb_iteration_config def;
    if (!ic) {
        memset(&def, 0, sizeof def);
        ic = &def;
    }
    arb_workload *w;
    int rc = wl_alloc(&w, ARB_WL_ITERATION, n_hosts, cfg, err, errlen);
    if (rc < 0) {
        arb_trace_free(trace);
        return rc;
    }
    struct wl_iter *it = arb_calloc(1, sizeof *it);
    if (!it) {
        arb_trace_free(trace);
        arb_workload_free(w);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    w->it = it;
    it->tr = trace;
    uint32_t R = it->R = trace->n_ranks;
    size_t N = (size_t)trace->n_nodes + 1;
    if (ic->hosts ? ic->n_map < R : n_hosts < R) {
        arb_workload_free(w);
        return arb_errf(err, errlen, ARB_EINVAL,
                        "hosts: the trace has %u ranks, but %u hosts are given", R,
                        ic->hosts ? ic->n_map : n_hosts);
    }
    it->host = arb_malloc((size_t)R * sizeof *it->host);
    it->deps_left = arb_malloc(N * sizeof *it->deps_left);
    it->done = arb_calloc(N, 1);
    it->cq = arb_malloc(N * sizeof *it->cq);
    it->stack = arb_malloc(N * sizeof *it->stack);
    it->cq_head = arb_malloc((size_t)R * sizeof *it->cq_head);
    it->cq_tail = arb_malloc((size_t)R * sizeof *it->cq_tail);
    it->computing = arb_malloc((size_t)R * sizeof *it->computing);
    it->comp_end = arb_malloc((size_t)R * sizeof *it->comp_end);
    it->comm_active = arb_calloc(R, sizeof *it->comm_active);
    it->last = arb_calloc(R, sizeof *it->last);
    it->t_comp = arb_calloc(R, sizeof *it->t_comp);
    it->t_comm = arb_calloc(R, sizeof *it->t_comm);
    it->t_exp = arb_calloc(R, sizeof *it->t_exp);
    it->finish = arb_malloc((size_t)R * sizeof *it->finish);
    it->nodes_done = arb_calloc(R, sizeof *it->nodes_done);
    uint8_t *seen = arb_calloc(n_hosts ? n_hosts : 1, 1);
    if (!it->host || !it->deps_left || !it->done || !it->cq || !it->stack || !it->cq_head ||
        !it->cq_tail || !it->computing || !it->comp_end || !it->comm_active || !it->last ||
        !it->t_comp || !it->t_comm || !it->t_exp || !it->finish || !it->nodes_done || !seen) {
        arb_free(seen);
        arb_workload_free(w);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    for (uint32_t r = 0; r < R; r++) {
        uint32_t h = ic->hosts ? ic->hosts[r] : r;
        if (h >= n_hosts || seen[h]) {
            arb_free(seen);
            arb_workload_free(w);
            return arb_errf(err, errlen, ARB_EINVAL,
                            h >= n_hosts ? "hosts: rank %u on host %u, not below the fabric's %u"
                                         : "hosts: rank %u on host %u, which has a rank already",
                            r, h, n_hosts);
        }
        seen[h] = 1;
        it->host[r] = h;
        it->cq_head[r] = it->cq_tail[r] = trace->rank_off[r];
        it->computing[r] = TR_NONE;
        it->comp_end[r] = ARB_TIME_NEVER;
        it->finish[r] = ARB_TIME_NEVER;
        const struct tr_rank *k = &trace->rk[r];
        for (uint32_t i = 0; i < k->n; i++)
            it->deps_left[trace->rank_off[r] + i] = k->nodes[i].n_deps;
    }
    arb_free(seen);
    it->start = ic->start;
    it->end = ARB_TIME_NEVER;
    w->start = ic->start;
    rc = make_instances(w, ic, err, errlen);
    if (rc < 0) {
        arb_workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int wl_iter_start(arb_workload *w, arb_sim *s)
{
    struct wl_iter *it = w->it;
    it->sim = s;
    for (uint32_t r = 0; r < it->R; r++) {
        it->last[r] = it->start;
        if (it->tr->rk[r].n == 0) {
            it->finish[r] = it->start;
            if (++it->ranks_done == it->R) it->end = it->start;
        }
    }
    for (uint64_t g = it->tr->n_nodes; g-- > 0;) /* pushed in reverse: run in trace order */
        if (it->deps_left[g] == 0) push(w, (uint32_t)g);
    drain(w, it->start);
    /* what enters a collective later waits for what let it: start_delay */
    if (w->hx) hc_exec_set_enter_delay(w->hx, w->cfg.start_delay);
    if (w->ia) iter_arb_set_enter_delay(w->ia, w->cfg.start_delay);
    return w->error;
}

arb_time wl_iter_min_compute(const arb_workload *w)
{
    const arb_trace *t = w->it->tr;
    arb_time m = ARB_TIME_NEVER;
    for (uint32_t r = 0; r < w->it->R; r++)
        for (uint32_t i = 0; i < t->rk[r].n; i++) {
            const struct tr_node *n = &t->rk[r].nodes[i];
            if (n->op == TR_COMP && n->dur && n->dur < m) m = n->dur;
        }
    return m;
}

arb_time arb_workload_next_timer(const arb_workload *w)
{
    if (w->kind != ARB_WL_ITERATION || !w->started) return ARB_TIME_NEVER;
    const struct wl_iter *it = w->it;
    arb_time t = ARB_TIME_NEVER;
    for (uint32_t r = 0; r < it->R; r++)
        if (it->comp_end[r] < t) t = it->comp_end[r];
    return t;
}

void arb_workload_timer(arb_workload *w, arb_sim *s, arb_time now)
{
    if (w->kind != ARB_WL_ITERATION || !w->started) return;
    struct wl_iter *it = w->it;
    it->sim = s;
    for (uint32_t r = 0; r < it->R; r++) {
        if (it->comp_end[r] > now) continue;
        arb_time at = it->comp_end[r];
        uint32_t g = it->computing[r];
        account(it, r, at);
        it->computing[r] = TR_NONE;
        it->comp_end[r] = ARB_TIME_NEVER;
        complete(w, r, g, at);
        try_compute(w, r, at);
    }
    drain(w, now);
}

void wl_iter_result(const arb_workload *w, arb_workload_result *r)
{
    const struct wl_iter *it = w->it;
    r->done = it->ranks_done == it->R;
    r->ranks = it->R;
    r->qps = w->cfg.qps;
    r->nodes = it->tr->n_nodes;
    r->collectives = it->tr->n_colls;
    r->p2p = it->tr->n_p2p;
    r->algo = -1;
    if (r->done) {
        r->finish = it->end;
        r->iter_time = it->end - it->start;
    }
    arb_time sum = 0;
    for (uint32_t k = 0; k < it->R; k++) {
        if (it->t_exp[k] > r->exposed_max) r->exposed_max = it->t_exp[k];
        if (it->t_comp[k] > r->compute_max) r->compute_max = it->t_comp[k];
        sum += it->t_exp[k];
    }
    r->exposed_mean = it->R ? sum / it->R : 0;
}

int arb_workload_iter_rank(const arb_workload *w, uint32_t rank, arb_iter_rank *out)
{
    if (w->kind != ARB_WL_ITERATION || rank >= w->it->R) return ARB_EINVAL;
    const struct wl_iter *it = w->it;
    out->host = it->host[rank];
    out->nodes = it->tr->rk[rank].n;
    out->nodes_done = it->nodes_done[rank];
    out->finish = it->finish[rank];
    out->compute = it->t_comp[rank];
    out->comm = it->t_comm[rank];
    out->exposed = it->t_exp[rank];
    return 0;
}
