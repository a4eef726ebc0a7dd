/*
 * One host collective as a workload: a plan over the given hosts, every
 * rank entering at the start (docs/workloads.md).
 */
#include "hc_int.h"
#include "wl_int.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

void arb_hcoll_config_default(arb_hcoll_config *hc)
{
    memset(hc, 0, sizeof *hc);
    hc->coll = ARB_COLL_ALLREDUCE;
    hc->algo = ARB_HC_AUTO;
    hc->root = 0;
}

int arb_workload_new_hcoll(arb_workload **out, const arb_hcoll_config *hc, uint32_t n_hosts,
                           const arb_workload_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    if (!hc) return arb_errf(err, errlen, ARB_EINVAL, "no collective configuration");
    uint32_t n = hc->ranks;
    if (n < 2) return arb_errf(err, errlen, ARB_EINVAL, "ranks: %u, at least 2 are needed", n);
    if (!hc->hosts && n > n_hosts)
        return arb_errf(err, errlen, ARB_EINVAL, "ranks: %u ranks on %u hosts", n, n_hosts);
    if (!arb_coll_name((int)hc->coll))
        return arb_errf(err, errlen, ARB_EINVAL, "collective: unknown");
    arb_workload *w;
    int rc = wl_alloc(&w, ARB_WL_HCOLL, n_hosts, cfg, err, errlen);
    if (rc < 0) return rc;
    uint32_t *hosts = arb_malloc((size_t)n * sizeof *hosts);
    uint8_t *seen = arb_calloc(n_hosts ? n_hosts : 1, 1);
    if (!hosts || !seen) rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    for (uint32_t r = 0; rc == 0 && r < n; r++) {
        uint32_t h = hc->hosts ? hc->hosts[r] : r;
        if (h >= n_hosts || seen[h])
            rc = arb_errf(err, errlen, ARB_EINVAL,
                          h >= n_hosts ? "hosts: rank %u on host %u, not below the fabric's %u"
                                       : "hosts: rank %u on host %u, which has a rank already",
                          r, h, n_hosts);
        else
            seen[h] = 1;
        if (rc == 0) hosts[r] = h;
    }
    arb_free(seen);
    struct hc_plan *p = NULL;
    if (rc == 0)
        rc = hc_plan_build(&p, hc->coll, hc->algo, n, hc->bytes, hc->chunk, hc->root, err, errlen);
    if (rc == 0 && hc_exec_new(&w->hx, w, NULL, NULL) < 0)
        rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    if (rc == 0) {
        uint32_t nm = p->n_msgs;
        long k = hc_exec_add(w->hx, p, hosts, 1); /* takes p */
        p = NULL;
        if (k < 0) rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        w->planned = (uint64_t)nm; /* parts added below */
    }
    hc_plan_free(p);
    if (rc < 0) {
        arb_free(hosts);
        arb_workload_free(w);
        return rc;
    }
    const struct hc_plan *pl = hc_exec_plan(w->hx, 0);
    w->planned = 0;
    w->bytes_planned = 0;
    for (uint32_t m = 0; m < pl->n_msgs; m++) {
        w->planned += pl->bytes[m] < w->cfg.qps ? pl->bytes[m] : w->cfg.qps;
        w->bytes_planned += pl->bytes[m];
    }
    w->hosts = hosts;
    w->N = n;
    w->P = pl->slices;
    w->S = hc->coll == ARB_COLL_BARRIER ? 0 : hc->bytes;
    w->start = hc->start;
    w->hc_coll = (int)hc->coll;
    w->hc_algo = arb_hc_algo_resolve(hc->coll, hc->algo, hc->bytes);
    *out = w;
    return 0;
}

int wl_hcoll_start(arb_workload *w, arb_sim *s)
{
    for (uint32_t r = 0; r < w->N && !w->error; r++)
        hc_exec_enter(w->hx, s, 0, r, w->start);
    return w->error;
}

void wl_hcoll_result(const arb_workload *w, arb_workload_result *r)
{
    const struct hc_plan *p = hc_exec_plan(w->hx, 0);
    uint32_t done = hc_exec_ranks_done(w->hx, 0);
    r->done = done == w->N;
    r->ranks = w->N;
    r->qps = w->cfg.qps;
    r->slices = p->slices;
    r->steps = p->steps;
    r->messages_total = p->n_msgs;
    r->messages = (p->n_msgs + w->N - 1) / w->N;
    r->buffer_bytes = w->S;
    r->coll = w->hc_coll;
    r->algo = w->hc_algo;
    r->busbw_factor = arb_coll_busbw_factor((arb_coll)w->hc_coll, w->N);
    if (r->done) {
        arb_time last = 0;
        for (uint32_t k = 0; k < w->N; k++) {
            arb_time t = hc_exec_rank_done(w->hx, 0, k);
            if (t > last) last = t;
        }
        r->finish = last;
        r->cct = last - w->start;
        double secs = (double)r->cct / (double)ARB_PS_PER_S;
        if (secs > 0) {
            r->algbw_gbps = (double)w->S * 8.0 / secs / 1e9;
            r->busbw_gbps = r->algbw_gbps * r->busbw_factor;
        }
    }
}

int hc_exec_rank_pub(const arb_workload *w, uint32_t rank, uint32_t *host, arb_time *done,
                     uint64_t *bytes_sent, uint64_t *msgs_received)
{
    return hc_exec_rank(w->hx, 0, rank, host, done, bytes_sent, msgs_received);
}

uint64_t arb_workload_hc_messages(const arb_workload *w)
{
    return w->kind == ARB_WL_HCOLL ? hc_exec_plan(w->hx, 0)->n_msgs : 0;
}

int arb_workload_hc_msg(const arb_workload *w, uint64_t i, arb_hc_msg *m)
{
    if (w->kind != ARB_WL_HCOLL) return ARB_EINVAL;
    return hc_exec_msg(w->hx, 0, i, m);
}
