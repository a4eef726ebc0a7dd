/*
 * The run's figures once it is over: every flow's (with its ideal time and
 * the completion times' percentiles), the port classes' utilisation, the
 * Arbor ranks and jobs, the background, the watch and the recovery.
 */
#include "scn_run.h"

#include <stdlib.h>
#include "base/alloc.h"

/* Several jobs: each one's figures (one job: r->ar is all). */
static int arbor_jobs_get(arb_scenario_result *r, const arb_sim *s)
{
    int n = arb_sim_arbor_jobs(s);
    if (n < 2) return 0;
    r->ar_jobs = arb_calloc((size_t)n, sizeof *r->ar_jobs);
    if (!r->ar_jobs) return ARB_ENOMEM;
    r->n_ar_jobs = (uint32_t)n;
    for (int k = 0; k < n; k++)
        arb_sim_arbor_job_result(s, k, &r->ar_jobs[k]);
    return 0;
}

/* arbor.calls > 1: the whole's cct is the timed calls' mean (as arbor lab
 * reports it), its goodput the buffer's bits over that mean; unfinished
 * while a timed call is. */
static void calls_mean(arb_scenario_result *r)
{
    if (r->calls < 2 || r->n_ar_jobs != r->calls) return;
    double sum = 0;
    for (uint32_t k = r->warmup; k < r->calls; k++) {
        if (r->ar_jobs[k].finish == ARB_TIME_NEVER) return; /* the whole is unfinished too */
        sum += (double)r->ar_jobs[k].cct;
    }
    double mean = sum / (double)(r->calls - r->warmup);
    r->ar.cct = (arb_time)(mean + 0.5);
    r->ar.goodput_gbps = (double)r->ar_jobs[0].bytes * 8e3 / mean; /* bits per ps x 1e3: Gb/s */
}

/* run.watch: each party's active window (Arbor jobs, then the transport
 * flows: first start to last finish) for the watched ports' report. */
static int watch_end(arb_scenario_result *r, const arb_sim *s)
{
    uint32_t jobs = r->is_arbor ? (r->n_ar_jobs ? r->n_ar_jobs : 1) : 0;
    arb_time *from = arb_calloc(jobs + 1, sizeof *from), *to = arb_calloc(jobs + 1, sizeof *to);
    if (!from || !to) {
        arb_free(from);
        arb_free(to);
        return ARB_ENOMEM;
    }
    for (uint32_t k = 0; k < jobs; k++) {
        const arb_sim_arbor_result *a = r->n_ar_jobs ? &r->ar_jobs[k] : &r->ar;
        from[k] = a->start;
        to[k] = a->finish;
    }
    from[jobs] = r->n_flows ? ARB_TIME_NEVER : 0;
    for (uint32_t i = 0; i < r->n_flows; i++) {
        const struct flowrec *f = &r->flows[i];
        if (f->start < from[jobs]) from[jobs] = f->start;
        if (f->finish > to[jobs]) to[jobs] = f->finish;
    }
    int rc = scn_watch_end(r->watch, s, from, to);
    arb_free(from);
    arb_free(to);
    return rc;
}

static int cmp_time(const void *a, const void *b)
{
    arb_time x = *(const arb_time *)a, y = *(const arb_time *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n). */
static arb_time pct(const arb_time *v, uint64_t n, unsigned p)
{
    if (n == 0) return 0;
    uint64_t k = (n * p + 99) / 100;
    return v[k ? k - 1 : 0];
}

/*
 * A flow's completion time alone on an idle fabric: its path climbs to the
 * lowest common ancestor of its hosts (level L) and back, 2L links; the
 * first packet is stored and forwarded on each (its serialisation and the
 * link's delay), the rest stream behind it at the slowest rate of the path.
 * Rates and delays are those of the tiers' first links (fabric.link_rate,
 * up_rate, delay; per-link settings are not counted). 0 when unknown.
 */
static arb_time flow_ideal(const arb_topo *t, const struct flowrec *f, uint32_t mtu, uint32_t hdr)
{
    const arb_pgft *g = arb_topo_pgft(t);
    if (!g || !mtu || f->src == f->dst) return 0;
    unsigned L = 1;
    while (L < g->h && f->src / g->M[L] != f->dst / g->M[L])
        L++;
    uint64_t pkts = (f->bytes + mtu - 1) / mtu;
    uint64_t first = (f->bytes < mtu ? f->bytes : mtu) + hdr;
    uint64_t wire = f->bytes + pkts * hdr;
    arb_time ideal = 0;
    uint64_t slowest = UINT64_MAX;
    for (unsigned l = 0; l < L; l++) {
        /* tier l: the up ports of the first node of level l */
        const arb_node *n = arb_topo_node(t, arb_topo_level_first(t, l));
        if (!n || !n->n_up) return 0;
        const arb_port *p = arb_topo_port(t, n->first_up);
        arb_time hop = arb_time_tx(first, p->rate) + p->delay;
        if (hop == ARB_TIME_NEVER) return 0;
        ideal += 2 * hop; /* up and down */
        if (p->rate < slowest) slowest = p->rate;
    }
    arb_time rest = arb_time_tx(wire - first, slowest);
    return rest == ARB_TIME_NEVER ? 0 : ideal + rest;
}

/* Every Arbor job's ranks: host and done time (none without Arbor). */
static int collect_ranks(arb_scenario_result *r, const arb_sim *s)
{
    uint32_t n = 0;
    int jobs = arb_sim_arbor_jobs(s);
    for (int k = 0; k < jobs; k++)
        n += arb_sim_arbor_job_ranks(s, k);
    if (!n) return 0;
    r->ar_rank_job = arb_malloc(n * sizeof *r->ar_rank_job);
    r->ar_rank_host = arb_malloc(n * sizeof *r->ar_rank_host);
    r->ar_rank_done = arb_malloc(n * sizeof *r->ar_rank_done);
    if (!r->ar_rank_job || !r->ar_rank_host || !r->ar_rank_done) return ARB_ENOMEM;
    for (int k = 0; k < jobs; k++)
        for (uint32_t i = 0; i < arb_sim_arbor_job_ranks(s, k); i++, r->n_ar_ranks++) {
            r->ar_rank_job[r->n_ar_ranks] = (uint32_t)k;
            arb_sim_arbor_rank(s, k, i, &r->ar_rank_host[r->n_ar_ranks],
                               &r->ar_rank_done[r->n_ar_ranks]);
        }
    return 0;
}

static int collect(arb_scenario_result *r, const arb_sim *s, const arb_topo *t)
{
    arb_sim_get_stats(s, &r->st);
    r->active = arb_sim_last_activity(s);
    uint32_t n = arb_sim_n_flows(s);
    r->flows = arb_malloc((n ? n : 1) * sizeof *r->flows);
    arb_time *fct = arb_malloc((n ? n : 1) * sizeof *fct);
    if (!r->flows || !fct) {
        arb_free(fct);
        return ARB_ENOMEM;
    }
    r->n_flows = n;
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        arb_sim_flow_result fr;
        arb_sim_flow(s, i, &fr);
        r->flows[i].src = fr.src;
        r->flows[i].dst = fr.dst;
        r->flows[i].bytes = fr.bytes;
        r->flows[i].start = fr.start;
        r->flows[i].finish = fr.finish;
        r->flows[i].retx_bytes = fr.retx_bytes;
        r->flows[i].qp = fr.qp;
        r->flows[i].sport = fr.sport;
        r->flows[i].gave_up = fr.gave_up;
        r->flows[i].ideal = flow_ideal(t, &r->flows[i], r->mtu, r->hdr_bytes);
        r->timeouts += fr.timeouts;
        if (fr.reorder_peak_bytes > r->reorder_peak) r->reorder_peak = fr.reorder_peak_bytes;
        if (fr.finish != ARB_TIME_NEVER) {
            fct[r->fct_n++] = fr.finish - fr.start;
            sum += (double)(fr.finish - fr.start);
        }
    }
    qsort(fct, r->fct_n, sizeof *fct, cmp_time);
    r->fct_mean = r->fct_n ? sum / (double)r->fct_n : 0;
    r->fct_p50 = pct(fct, r->fct_n, 50);
    r->fct_p99 = pct(fct, r->fct_n, 99);
    r->fct_max = r->fct_n ? fct[r->fct_n - 1] : 0;
    arb_free(fct);
    /* utilisation over the whole run (to its last activity: a timer that
     * fires after it and does nothing is not part of it), and the deepest
     * queue per class */
    double secs = (double)r->active / (double)ARB_PS_PER_S;
    const arb_port *ports = arb_topo_ports(t);
    uint32_t np = arb_topo_n_ports(t);
    for (uint32_t p = 0; p < np; p++) {
        unsigned c = 2u * ports[p].tier + (ports[p].role == ARB_LINK_UP ? 0 : 1);
        if (ports[p].failed || c >= r->n_cls) continue;
        arb_sim_port_stats ps;
        arb_sim_port(s, p, &ps);
        struct pclass *pc = &r->cls[c];
        if (ps.max_queue > pc->max_q) pc->max_q = ps.max_queue;
        double u = secs > 0 ? (double)ps.tx_bytes * 8.0 / ((double)ports[p].rate * secs) : 0;
        pc->util_mean += u;
        if (u > pc->util_max) pc->util_max = u;
    }
    for (unsigned c = 0; c < r->n_cls; c++)
        if (r->cls[c].ports) r->cls[c].util_mean /= r->cls[c].ports;
    return 0;
}

/* The run's figures once it is over: ports, flows, ranks, jobs, the
 * background, the watch and the recovery. */
int scn_run_figures(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    arb_scenario_result *r = run->r;
    arb_sim *s = run->s;
    char *err = run->err;
    size_t errlen = run->errlen;
    int rc = arb_sim_part_collect(s); /* a partitioned run: every flow's figures to part 0 */
    if (rc < 0) return arb_errf(err, errlen, rc, "partition: %s", arb_strerror(rc));
    rc = collect(r, s, run->t);
    if (rc == 0) scn_describe_gave_up(sc, &run->failat, run->t, r);
    if (rc == 0) rc = collect_ranks(r, s);
    if (rc == 0 && run->w) rc = scn_host_ranks(run->w, &r->iter, &r->n_iter);
    if (rc < 0) rc = arb_errf(err, errlen, rc, "out of memory");
    if (rc == 0 && r->iter_arbor) {
        int n = arb_sim_arbor_jobs(s);
        r->iter_jobs = n > 0 ? (uint32_t)n : 0;
        if (n > 0) arb_sim_arbor_result_get(s, &r->ar);
    }
    if (rc == 0 && run->arbor) {
        arb_sim_arbor_result_get(s, &r->ar);
        r->wr.done = r->ar.done;
        rc = arbor_jobs_get(r, s);
        if (rc < 0) rc = arb_errf(err, errlen, rc, "out of memory");
        calls_mean(r);
    }
    if (rc == 0 && r->has_bg) {
        arb_workload_get_result(run->w, &r->bg);
        if (!r->bg.done) r->wr.done = 0;
    }
    if (rc == 0 && run->part && run->order && (rc = scn_order_merge(run->order, run->part)) < 0)
        rc = arb_errf(err, errlen, rc, "partition: %s", arb_strerror(rc));
    if (rc == 0 && run->part && r->watch && (rc = scn_watch_merge(r->watch, run->part)) < 0)
        rc = arb_errf(err, errlen, rc, "run.watch: %s", arb_strerror(rc));
    if (rc == 0 && r->watch && (rc = watch_end(r, s)) < 0)
        rc = arb_errf(err, errlen, rc, "run.watch: out of memory");
    if (rc == 0 && r->rec) {
        if (run->arbor)
            scn_recovery_finish(r->rec, s, r->ar.start, r->ar.done ? r->ar.finish : ARB_TIME_NEVER);
        else
            scn_recovery_finish(r->rec, s, scn_u64(sc, K_WL_START),
                                r->wr.done ? r->wr.finish : ARB_TIME_NEVER);
        if (scn_recovery_failed(r->rec)) rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    return rc;
}
