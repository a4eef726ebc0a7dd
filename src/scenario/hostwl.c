/*
 * The host-based workloads of a scenario: workload.kind = host_collective
 * (one collective of [host] over workload.ranks / workload.hosts) and
 * iteration (a training-iteration trace, workload.file), and their part of
 * the JSON report.
 */
#include "scn_int.h"

#include "arbor/plan.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/json_out.h"

/* workload.hosts (NULL when empty: rank r on host r) and its count. */
static int hosts_of(const arb_scenario *sc, uint32_t n_hosts, uint32_t **hosts, uint32_t *nh,
                    char *err, size_t errlen)
{
    char msg[512];
    *hosts = NULL;
    *nh = n_hosts;
    const char *hl = scn_str(sc, K_WL_HOSTS);
    if (!*hl) return 0;
    int rc = scn_parse_hosts(hl, n_hosts, hosts, nh, msg, sizeof msg);
    return rc < 0 ? scn_key_fail(sc, K_WL_HOSTS, err, errlen, rc, msg) : 0;
}

static enum scn_key blame_of(const char *msg)
{
    static const struct {
        const char *prefix;
        enum scn_key k;
    } tab[] = {{"hosts", K_WL_HOSTS}, {"ranks", K_WL_RANKS},    {"size", K_WL_SIZE},
               {"chunk", K_WL_CHUNK}, {"root", K_HC_ROOT},      {"algorithm", K_HC_ALGO},
               {"qps", K_WL_QPS},     {"qp_mode", K_WL_QPMODE}, {"collective", K_HC_COLL}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strncmp(msg, tab[i].prefix, strlen(tab[i].prefix)) == 0) return tab[i].k;
    return K_WL_KIND;
}

static int make_hcoll(const arb_scenario *sc, uint32_t n_hosts, const arb_workload_config *wc,
                      arb_workload **w, char *err, size_t errlen)
{
    char msg[512];
    uint32_t *hosts, nh;
    int rc = hosts_of(sc, n_hosts, &hosts, &nh, err, errlen);
    if (rc < 0) return rc;
    uint64_t ranks = scn_u64(sc, K_WL_RANKS);
    if (ranks == 0) ranks = nh;
    if (ranks > nh) {
        arb_free(hosts);
        snprintf(msg, sizeof msg, "%llu ranks, but only %u hosts", (unsigned long long)ranks, nh);
        return scn_key_fail(sc, K_WL_RANKS, err, errlen, ARB_EINVAL, msg);
    }
    arb_hcoll_config hc;
    arb_hcoll_config_default(&hc);
    scn_engine_apply(sc, SCN_ENG_HCOLL, &hc); /* coll, algorithm, root_rank */
    hc.hosts = hosts;
    hc.ranks = (uint32_t)ranks;
    hc.bytes = scn_u64(sc, K_WL_SIZE);
    hc.chunk = scn_u64(sc, K_WL_CHUNK);
    hc.start = scn_u64(sc, K_WL_START);
    rc = arb_workload_new_hcoll(w, &hc, n_hosts, wc, msg, sizeof msg);
    arb_free(hosts);
    return rc < 0 ? scn_key_fail(sc, blame_of(msg), err, errlen, rc, msg) : 0;
}

static int make_iteration(const arb_scenario *sc, const arb_topo *t, const arb_workload_config *wc,
                          arb_workload **w, char *err, size_t errlen)
{
    char msg[512];
    uint32_t n_hosts = arb_topo_n_hosts(t);
    arb_sim_arbor_config ac;
    arb_plan_config pc;
    int arbor = scn_choice(sc, K_WL_BACKEND);
    if (arbor) { /* the [arbor] settings every collective shares */
        int rc = scn_arbor_config(sc, &ac, &pc, err, errlen);
        if (rc < 0) return rc;
    }
    char *path = scn_path(sc, K_WL_FILE);
    if (!path)
        return scn_key_fail(sc, K_WL_FILE, err, errlen, ARB_EINVAL,
                            "workload kind iteration needs a trace file");
    arb_trace *tr = NULL;
    int rc =
        arb_trace_load(&tr, path, (arb_trace_format)scn_choice(sc, K_HC_FORMAT), msg, sizeof msg);
    arb_free(path);
    if (rc < 0) return scn_key_fail(sc, K_WL_FILE, err, errlen, rc, msg);
    uint32_t *hosts, nh;
    rc = hosts_of(sc, n_hosts, &hosts, &nh, err, errlen);
    if (rc < 0) {
        arb_trace_free(tr);
        return rc;
    }
    arb_iteration_config ic;
    arb_iteration_config_default(&ic);
    scn_engine_apply(sc, SCN_ENG_ITER, &ic); /* algorithm, inner_ranks, inner_pieces */
    ic.hosts = hosts;
    ic.n_map = nh;
    ic.chunk = scn_u64(sc, K_WL_CHUNK);
    ic.start = scn_u64(sc, K_WL_START);
    ic.arbor = arbor;
    ic.topo = t;
    ic.arbor_cfg = &ac;
    ic.plan_cfg = &pc;
    rc = arb_workload_new_iteration(w, tr, &ic, n_hosts, wc, msg, sizeof msg);
    if (rc >= 0 && arbor) scn_arbor_warn_subchannels(sc, t, &pc, hosts, nh);
    arb_free(hosts);
    if (rc < 0) {
        enum scn_key k = blame_of(msg);
        if (strstr(msg, ": inner_ranks: ")) k = K_AR_INNER;
        return scn_key_fail(sc, k == K_WL_KIND ? K_WL_FILE : k, err, errlen, rc, msg);
    }
    return 0;
}

int scn_host_workload(const arb_scenario *sc, const arb_topo *t, const arb_workload_config *wc,
                      arb_workload **w, char *err, size_t errlen)
{
    if (strcmp(scn_str(sc, K_WL_KIND), "iteration") == 0)
        return make_iteration(sc, t, wc, w, err, errlen);
    return make_hcoll(sc, arb_topo_n_hosts(t), wc, w, err, errlen);
}

int scn_host_ranks(const arb_workload *w, arb_iter_rank **out, uint32_t *n)
{
    *out = NULL;
    *n = 0;
    if (arb_workload_get_kind(w) != ARB_WL_ITERATION) return 0;
    arb_workload_result wr;
    arb_workload_get_result(w, &wr);
    if (wr.ranks == 0) return 0;
    *out = arb_calloc(wr.ranks, sizeof **out);
    if (!*out) return ARB_ENOMEM;
    for (uint32_t r = 0; r < wr.ranks; r++)
        arb_workload_iter_rank(w, r, &(*out)[r]);
    *n = wr.ranks;
    return 0;
}

/* ---- JSON (the formats of base/json_out.h, as report.c) ------------------- */

void scn_host_json(cJSON *j, const arb_workload_result *wr, const arb_iter_rank *ir, uint32_t n)
{
    if (wr->kind == ARB_WL_HCOLL) {
        cJSON *c = cJSON_AddObjectToObject(j, "collective");
        if (!c) return;
        cJSON_AddStringToObject(c, "kind", "host_collective");
        cJSON_AddStringToObject(c, "collective", arb_coll_name(wr->coll));
        cJSON_AddStringToObject(c, "algorithm", arb_hc_algo_name(wr->algo));
        arb_json_u64(c, "ranks", wr->ranks);
        arb_json_u64(c, "bytes", wr->buffer_bytes);
        arb_json_u64(c, "steps", wr->steps);
        arb_json_u64(c, "slices", wr->slices);
        arb_json_u64(c, "qps", wr->qps);
        arb_json_u64(c, "messages", wr->messages_total);
        arb_json_us(c, "cct_us", wr->cct);
        arb_json_fixed(c, "algbw_gbps", wr->algbw_gbps, 6);
        arb_json_fixed(c, "busbw_factor", wr->busbw_factor, 6);
        arb_json_fixed(c, "busbw_gbps", wr->busbw_gbps, 6);
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(j, "iteration");
    if (!o) return;
    arb_json_u64(o, "ranks", wr->ranks);
    arb_json_u64(o, "nodes", wr->nodes);
    arb_json_u64(o, "collectives", wr->collectives);
    arb_json_u64(o, "p2p", wr->p2p);
    arb_json_us(o, "iter_time_us", wr->iter_time);
    arb_json_us(o, "compute_max_us", wr->compute_max);
    arb_json_us(o, "exposed_max_us", wr->exposed_max);
    arb_json_us(o, "exposed_mean_us", wr->exposed_mean);
    cJSON *arr = cJSON_AddArrayToObject(o, "per_rank");
    for (uint32_t r = 0; arr && r < n; r++) {
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        arb_json_u64(e, "rank", r);
        arb_json_u64(e, "host", ir[r].host);
        arb_json_u64(e, "nodes_done", ir[r].nodes_done);
        arb_json_us(e, "finish_us", ir[r].finish);
        arb_json_us(e, "compute_us", ir[r].compute);
        arb_json_us(e, "comm_us", ir[r].comm);
        arb_json_us(e, "exposed_us", ir[r].exposed);
        cJSON_AddItemToArray(arr, e);
    }
}
