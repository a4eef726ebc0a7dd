/*
 * [workload] built: the flows of every kind but the Arbor collective
 * (arbor_jobs.c) and the host algorithms (hostwl.c), arbor.background's
 * trace, and the keys a workload would ignore, refused.
 */
#include "scn_run.h"

#include <stdio.h>
#include <string.h>
#include "base/alloc.h"

static int make_workload(const arb_scenario *sc, const arb_topo *t, uint64_t run_seed,
                         arb_workload **w, char *err, size_t errlen)
{
    uint32_t n_hosts = arb_topo_n_hosts(t);
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    uint64_t wseed = scn_u64(sc, K_WL_SEED);
    if (wseed == 0) wseed = run_seed;
    scn_engine_apply(sc, SCN_ENG_WORKLOAD, &wc); /* qps, qp_mode, shared_sport, start_delay */
    wc.seed = wseed;
    uint64_t size = scn_u64(sc, K_WL_SIZE);
    arb_time start = scn_u64(sc, K_WL_START);
    const char *kind = scn_str(sc, K_WL_KIND);
    char msg[512], spec[64];
    int rc;
    enum scn_key blame = K_WL_KIND;
    if (strcmp(kind, "host_collective") == 0 || strcmp(kind, "iteration") == 0)
        return scn_host_workload(sc, t, &wc, w, err, errlen);
    if (strcmp(kind, "ring_allreduce") == 0) {
        uint32_t *hosts = NULL, nh = 0;
        const char *hl = scn_str(sc, K_WL_HOSTS);
        if (*hl) {
            rc = scn_parse_hosts(hl, n_hosts, &hosts, &nh, msg, sizeof msg);
            if (rc < 0) return scn_key_fail(sc, K_WL_HOSTS, err, errlen, rc, msg);
        }
        uint64_t ranks = scn_u64(sc, K_WL_RANKS);
        uint32_t avail = *hl ? nh : n_hosts;
        if (ranks == 0) ranks = avail;
        if (ranks > avail) {
            arb_free(hosts);
            snprintf(msg, sizeof msg, "%llu ranks, but only %u hosts", (unsigned long long)ranks,
                     avail);
            return scn_key_fail(sc, K_WL_RANKS, err, errlen, ARB_EINVAL, msg);
        }
        arb_allreduce_config ar;
        memset(&ar, 0, sizeof ar);
        ar.hosts = hosts;
        ar.ranks = (uint32_t)ranks;
        ar.bytes = size;
        ar.chunk = scn_u64(sc, K_WL_CHUNK);
        ar.start = start;
        rc = arb_workload_new_allreduce(w, &ar, n_hosts, &wc, msg, sizeof msg);
        arb_free(hosts);
        blame = strncmp(msg, "hosts", 5) == 0     ? K_WL_HOSTS
                : strncmp(msg, "ranks", 5) == 0   ? K_WL_RANKS
                : strncmp(msg, "size", 4) == 0    ? K_WL_SIZE
                : strncmp(msg, "chunk", 5) == 0   ? K_WL_CHUNK
                : strncmp(msg, "qp_mode", 7) == 0 ? K_WL_QPMODE
                                                  : K_WL_QPS;
    } else if (strcmp(kind, "incast") == 0) {
        rc = arb_workload_new_incast(w, n_hosts, (uint32_t)scn_u64(sc, K_WL_RECEIVER),
                                     (uint32_t)scn_u64(sc, K_WL_SENDERS), size, start, &wc, msg,
                                     sizeof msg);
        blame = strncmp(msg, "receiver", 8) == 0  ? K_WL_RECEIVER
                : strncmp(msg, "senders", 7) == 0 ? K_WL_SENDERS
                                                  : K_WL_SIZE;
    } else if (strcmp(kind, "trace") == 0 || strcmp(kind, "htsim") == 0) {
        char *path = scn_path(sc, K_WL_FILE);
        if (!path)
            return scn_key_fail(sc, K_WL_FILE, err, errlen, ARB_EINVAL,
                                "workload kind trace and htsim need a file");
        rc = arb_workload_new_file(w, kind[0] == 't' ? ARB_WL_TRACE : ARB_WL_HTSIM, path, n_hosts,
                                   &wc, msg, sizeof msg);
        arb_free(path);
        blame = K_WL_FILE;
    } else {
        const char *ts = spec;
        if (strcmp(kind, "perm") == 0)
            snprintf(spec, sizeof spec, "perm:%llu", (unsigned long long)wseed);
        else if (strcmp(kind, "shift") == 0)
            snprintf(spec, sizeof spec, "shift:%llu", (unsigned long long)scn_u64(sc, K_WL_SHIFT));
        else if (strcmp(kind, "all2all") == 0)
            snprintf(spec, sizeof spec, "all2all");
        else
            ts = scn_str(sc, K_WL_TRAFFIC);
        rc = arb_workload_new_pattern(w, ts, n_hosts, size, start, &wc, msg, sizeof msg);
        blame = strcmp(kind, "pattern") == 0 ? K_WL_TRAFFIC
                : strcmp(kind, "shift") == 0 ? K_WL_SHIFT
                                             : K_WL_KIND;
        if (strncmp(msg, "size", 4) == 0) blame = K_WL_SIZE;
    }
    if (rc < 0) {
        if (strncmp(msg, "qps", 3) == 0) blame = K_WL_QPS;
        if (strncmp(msg, "qp_mode", 7) == 0) blame = K_WL_QPMODE;
        return scn_key_fail(sc, blame, err, errlen, rc, msg);
    }
    return 0;
}

/* arbor.background: a CSV trace of transport flows run beside the collective. */
static int make_background(const arb_scenario *sc, uint32_t n_hosts, uint64_t run_seed,
                           arb_workload **w, char *err, size_t errlen)
{
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    scn_engine_apply(sc, SCN_ENG_WORKLOAD, &wc); /* qps, shared_sport: they split its flows */
    uint64_t wseed = scn_u64(sc, K_WL_SEED);
    wc.seed = wseed ? wseed : run_seed;
    char msg[512], *path = scn_path(sc, K_AR_BACKGROUND);
    if (!path) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    int rc = arb_workload_new_file(w, ARB_WL_TRACE, path, n_hosts, &wc, msg, sizeof msg);
    arb_free(path);
    return rc < 0 ? scn_key_fail(sc, K_AR_BACKGROUND, err, errlen, rc, msg) : 0;
}

/* workload.qp_mode with an Arbor collective: its engines have no QPs, and
 * arbor.background's flows are a trace, which splits over them. */
static int arbor_qp_mode_fail(const arb_scenario *sc, char *err, size_t errlen)
{
    char msg[256];
    snprintf(msg, sizeof msg,
             "qp_mode: %s: only ring_allreduce takes rr or hpn; the Arbor collective has no "
             "QPs (split)",
             arb_qp_mode_name(scn_choice(sc, K_WL_QPMODE)));
    return scn_key_fail(sc, K_WL_QPMODE, err, errlen, ARB_EINVAL, msg);
}

/* Keys a workload would ignore, refused rather than ignored: chunk (a
 * pipeline slice) where messages are not pipelined, and the QPs of an
 * Arbor collective with no background flows (its engines have none). */
static int unused_keys(const arb_scenario *sc, int arbor, int has_bg, char *err, size_t errlen)
{
    const char *kind = scn_str(sc, K_WL_KIND);
    if (scn_u64(sc, K_WL_CHUNK) != 0 && strcmp(kind, "ring_allreduce") != 0 &&
        strcmp(kind, "host_collective") != 0 && strcmp(kind, "iteration") != 0) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "only ring_allreduce, host_collective and iteration pipeline their messages; "
                 "kind %s does not (0)%s",
                 kind, arbor ? ": Arbor's engines send arbor.payload bytes a packet" : "");
        return scn_key_fail(sc, K_WL_CHUNK, err, errlen, ARB_EINVAL, msg);
    }
    if (arbor && !has_bg && scn_u64(sc, K_WL_QPS) != 1)
        return scn_key_fail(sc, K_WL_QPS, err, errlen, ARB_EINVAL,
                            "the Arbor collective has no QPs; qps splits only arbor.background's "
                            "flows, and there are none (1)");
    if (arbor && !has_bg && scn_u64(sc, K_WL_SHAREDSPORT))
        return scn_key_fail(sc, K_WL_SHAREDSPORT, err, errlen, ARB_EINVAL,
                            "the Arbor collective has no QPs; shared_sport acts only on "
                            "arbor.background's flows, and there are none (off)");
    return 0;
}

int scn_workload_fail(struct scn_run *run, int rc)
{
    const arb_scenario *sc = run->sc;
    if (rc != ARB_ERANGE)
        return arb_errf(run->err, run->errlen, rc, "workload: %s", arb_strerror(rc));
    const char *kind = scn_str(sc, K_WL_KIND);
    enum scn_key k = K_WL_SIZE; /* the flows' sizes: workload.size's, or a file's */
    if (run->arbor)
        k = K_AR_BACKGROUND;
    else if (strcmp(kind, "trace") == 0 || strcmp(kind, "htsim") == 0 ||
             strcmp(kind, "iteration") == 0)
        k = K_WL_FILE;
    char msg[256];
    snprintf(msg, sizeof msg,
             "makes a flow of more than %u packets of transport.mtu (%u B): a simulated flow "
             "carries at most %llu bytes",
             ARB_SIM_FLOW_MAX_PKTS, run->cfg.mtu,
             (unsigned long long)ARB_SIM_FLOW_MAX_PKTS * run->cfg.mtu);
    return scn_key_fail(sc, k, run->err, run->errlen, ARB_EINVAL, msg);
}

/* [workload]: the flows (with Arbor, only its background's). */
int scn_run_workload(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    arb_scenario_result *r = run->r;
    r->is_arbor = run->arbor;
    r->iter_arbor = scn_choice(sc, K_WL_BACKEND);
    if (r->iter_arbor && strcmp(scn_str(sc, K_WL_KIND), "iteration") != 0)
        return scn_key_fail(
            sc, K_WL_BACKEND, run->err, run->errlen, ARB_EINVAL,
            "arbor only for workload.kind = iteration (kind arbor runs Arbor itself)");
    r->has_bg = *scn_str(sc, K_AR_BACKGROUND) != '\0';
    if (r->has_bg && !run->arbor)
        return scn_key_fail(sc, K_AR_BACKGROUND, run->err, run->errlen, ARB_EINVAL,
                            "only beside an Arbor collective (workload.kind = arbor)");
    if (run->arbor && scn_choice(sc, K_WL_QPMODE) != ARB_QP_SPLIT)
        return arbor_qp_mode_fail(sc, run->err, run->errlen);
    if (unused_keys(sc, run->arbor, r->has_bg, run->err, run->errlen) < 0) return ARB_EINVAL;
    if (run->arbor && !r->has_bg) return 0;
    int rc = run->arbor ? make_background(sc, r->hosts, run->seed, &run->w, run->err, run->errlen)
                        : make_workload(sc, run->t, run->seed, &run->w, run->err, run->errlen);
    return rc < 0 ? rc : 0;
}
