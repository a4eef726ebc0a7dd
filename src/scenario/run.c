/*
 * Running a scenario: build the fabric, routing, simulator and workload it
 * names, run the simulator in slices of run.sample (sampling every port's
 * queue and transmitted bytes between slices; slicing changes nothing in
 * the run), and gather its figures into the result (report.c writes them
 * out as JSON and CSV).
 */
#include "scn_result.h"

#include "arbor/plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

#define ROWS_MAX 16384u

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = arb_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void arb_scenario_result_free(arb_scenario_result *r)
{
    if (!r) return;
    for (int k = 0; k < K_COUNT; k++)
        arb_free(r->echo[k]);
    arb_free(r->file);
    arb_free(r->flows);
    arb_free(r->iter);
    arb_free(r->ar_jobs);
    scn_watch_free(r->watch);
    scn_recovery_free(r->rec);
    for (unsigned c = 0; c < MAX_CLASSES; c++)
        arb_free(r->cls[c].hist);
    arb_free(r->samp_t);
    arb_free(r->samp_util);
    arb_free(r->samp_qmean);
    arb_free(r->samp_qmax);
    arb_free(r->samp_slots);
    arb_free(r->sp_ports);
    arb_free(r->sp_name);
    arb_free(r->samp_port_util);
    arb_free(r->samp_port_q);
    arb_free(r->pend_port_util);
    arb_free(r->last_port_util);
    arb_free(r->pend_port_q);
    arb_free(r->ar_rank_job);
    arb_free(r->ar_rank_host);
    arb_free(r->ar_rank_done);
    arb_free(r);
}

const arb_sim_stats *arb_scenario_result_stats(const arb_scenario_result *r)
{
    return &r->st;
}

const arb_workload_result *arb_scenario_result_workload(const arb_scenario_result *r)
{
    return &r->wr;
}

arb_time arb_scenario_result_time(const arb_scenario_result *r)
{
    return r->active;
}

int arb_scenario_result_part(const arb_scenario_result *r, arb_sim_part_info *out)
{
    if (!r->has_part) return ARB_EINVAL;
    *out = r->part;
    return 0;
}

const arb_sim_arbor_result *arb_scenario_result_arbor(const arb_scenario_result *r)
{
    return r->is_arbor ? &r->ar : NULL;
}

arb_scenario_status arb_scenario_result_status(const arb_scenario_result *r, const char **why)
{
    if (why) *why = NULL;
    if (!r) return ARB_SCN_DONE;
    if (r->failed) {
        if (why) *why = r->failure;
        return ARB_SCN_FAILED;
    }
    if (r->warned && why) *why = r->failure;
    if (r->stopped) return ARB_SCN_INCOMPLETE;
    return ARB_SCN_DONE;
}

/* Nodes reachable from `from` over links that have not failed, marked in
 * seen (n_nodes bytes); queue has room for n_nodes. */
static void reach(const arb_topo *t, uint32_t from, uint8_t *seen, uint32_t *queue)
{
    uint32_t head = 0, tail = 0;
    seen[from] = 1;
    queue[tail++] = from;
    while (head < tail) {
        const arb_node *v = arb_topo_node(t, queue[head++]);
        for (uint32_t p = v->first_port; p < v->first_up + v->n_up; p++) {
            const arb_port *pt = arb_topo_port(t, p);
            if (pt->failed || seen[pt->peer]) continue;
            seen[pt->peer] = 1;
            queue[tail++] = pt->peer;
        }
    }
}

/* The hosts of f.missing_hosts the failures cut off from the responder,
 * as "h3,h9" into buf (empty: none, or no memory to tell). */
static void cut_off(const arb_topo *t, const arb_sim_arbor_failure *f, char *buf, size_t len)
{
    uint32_t n = arb_topo_n_nodes(t);
    uint8_t *seen = arb_calloc(n, 1);
    uint32_t *queue = arb_malloc((size_t)n * sizeof *queue);
    buf[0] = 0;
    if (seen && queue) {
        reach(t, f->responder_host, seen, queue);
        size_t used = 0, cap = sizeof f->missing_hosts / sizeof *f->missing_hosts;
        /* (the record holds the first `cap` of n_missing) */
        for (uint32_t k = 0; k < f->n_missing && k < cap && used < len; k++)
            if (f->missing_hosts[k] < n && !seen[f->missing_hosts[k]])
                used += (size_t)snprintf(buf + used, len - used, "%sh%u", used ? "," : "",
                                         f->missing_hosts[k]);
    }
    arb_free(seen);
    arb_free(queue);
}

/* Is host b reachable from host a over links that have not failed? 1, 0,
 * or -1 (no memory to tell). */
static int connected(const arb_topo *t, uint32_t a, uint32_t b)
{
    uint32_t n = arb_topo_n_nodes(t);
    if (a >= n || b >= n) return -1;
    uint8_t *seen = arb_calloc(n, 1);
    uint32_t *queue = arb_malloc((size_t)n * sizeof *queue);
    int rc = -1;
    if (seen && queue) {
        reach(t, a, seen, queue);
        rc = seen[b];
    }
    arb_free(seen);
    arb_free(queue);
    return rc;
}

/* The fabric failures in force (fabric.fail, arbor.fail, the fail_at
 * entries applied so far), hosts they cut off, and packets no route could
 * carry, appended to the line in buf: what a failed engine (f), or a flow
 * from host pair[0] to pair[1] that gave up, most likely ran into. */
static void failure_context(const arb_scenario *sc, const struct scn_failat *fa, const arb_topo *t,
                            const arb_sim_arbor_failure *f, const uint32_t *pair,
                            const arb_sim_stats *st, char *buf, size_t len)
{
    size_t used = strlen(buf);
    const char *sep = "; the fabric: ";
#define CTX(...)                                                                                   \
    do {                                                                                           \
        if (used < len) used += (size_t)snprintf(buf + used, len - used, __VA_ARGS__);             \
    } while (0)
    if (*scn_str(sc, K_FAB_FAIL)) {
        CTX("%sfabric.fail %s", sep, scn_str(sc, K_FAB_FAIL));
        sep = ", ";
    }
    if (*scn_str(sc, K_AR_FAIL)) {
        CTX("%sarbor.fail %s", sep, scn_str(sc, K_AR_FAIL));
        sep = ", ";
    }
    static const char *const verb[] = {"failed", "restored", "rebooted", "back after a reboot"};
    for (unsigned i = 0; fa && i < fa->next; i++) {
        CTX("%s%s %s at %s", sep, fa->e[i].items, verb[fa->e[i].kind], fa->e[i].text);
        sep = ", ";
    }
    char cut[160] = "";
    if (f && f->failed) cut_off(t, f, cut, sizeof cut);
    const char *scheme = scn_str(sc, K_RT_SCHEME);
    int around = !strcmp(scheme, "updown") || !strcmp(scheme, "dmodc");
    if (*cut)
        CTX("; no path is left between h%u and %s", f->responder_host, cut);
    else if (pair && connected(t, pair[0], pair[1]) == 0)
        CTX("; no path is left between h%u and h%u", pair[0], pair[1]);
    else if (st->unroutable && around)
        CTX("; %llu packets found no route", (unsigned long long)st->unroutable);
    else if (st->unroutable)
        CTX("; %llu packets found no route (routing.scheme %s does not route around what failed; "
            "updown and dmodc do)",
            (unsigned long long)st->unroutable, scheme);
    else if (pair && *sep == ';') /* nothing failed: the load, or the links' loss */
        CTX("; nothing in the fabric failed: congestion or the links' loss kept it from "
            "progressing (a higher transport.retry_limit or transport.rto lets it wait longer)");
#undef CTX
}

static const char *plural(uint32_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* A flow's sender gave up (transport.retry_limit): the run cannot finish.
 * One line naming the first to give up (by time, then index), how many
 * did, and what failed in the fabric. An Arbor engine's failure, found
 * first, keeps its line. */
static void describe_gave_up(const arb_scenario *sc, const struct scn_failat *fa, const arb_topo *t,
                             arb_scenario_result *r)
{
    if (r->st.flows_gave_up == 0 || r->failed) return;
    const struct flowrec *f = NULL;
    uint32_t id = 0;
    for (uint32_t i = 0; i < r->n_flows; i++)
        if (r->flows[i].gave_up != ARB_TIME_NEVER && (!f || r->flows[i].gave_up < f->gave_up)) {
            f = &r->flows[i];
            id = i;
        }
    if (!f) return;
    r->failed = 1;
    r->warned = 0; /* (an Arbor warning's line gives way) */
    uint64_t limit = scn_u64(sc, K_TR_RETRY);
    int n = snprintf(r->failure, sizeof r->failure,
                     "flow %u (h%u -> h%u, QP %u) gave up at %.3f us: %llu retransmission "
                     "timeouts in a row without progress, past transport.retry_limit = %llu",
                     id, f->src, f->dst, f->qp, (double)f->gave_up / ARB_PS_PER_US,
                     (unsigned long long)limit + 1, (unsigned long long)limit);
    if (r->st.flows_gave_up > 1 && n > 0 && (size_t)n < sizeof r->failure)
        snprintf(r->failure + n, sizeof r->failure - (size_t)n, " (%u flows gave up)",
                 r->st.flows_gave_up);
    uint32_t pair[2] = {f->src, f->dst};
    failure_context(sc, fa, t, NULL, pair, &r->st, r->failure, sizeof r->failure);
}

/* An Arbor engine gave up: one line naming the job, channel, what was lost,
 * the hosts that never answered (arb_sim_arbor_failure) and what failed in
 * the fabric. If every rank was done by then (the collective's outputs are
 * final and only a channel's closing failed), it is a warning, not a
 * failure. */
static void describe_failure(const arb_scenario *sc, const struct scn_failat *fa, const arb_topo *t,
                             const arb_sim *s, arb_scenario_result *r)
{
    arb_sim_arbor_failure f;
    uint32_t done = 0, ranks = 0;
    arb_sim_arbor_progress(s, &done, &ranks);
    if (ranks && done == ranks)
        r->warned = 1;
    else
        r->failed = 1;
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    if (arb_sim_arbor_failure_get(s, &f) < 0 || !f.failed) {
        snprintf(r->failure, sizeof r->failure, "an Arbor engine gave up");
        failure_context(sc, fa, t, NULL, NULL, &st, r->failure, sizeof r->failure);
        return;
    }
    char hosts[200] = "";
    size_t used = 0;
    for (uint32_t k = 0; k < f.n_missing && k < 16 && used < sizeof hosts; k++)
        used += (size_t)snprintf(hosts + used, sizeof hosts - used, "%sh%u", k ? "," : "",
                                 f.missing_hosts[k]);
    if (f.n_missing > 16 && used < sizeof hosts)
        snprintf(hosts + used, sizeof hosts - used, ",... (%u in all)", f.n_missing);
    char job[32] = "";
    if (arb_sim_arbor_jobs(s) > 1) snprintf(job, sizeof job, "job %u, ", f.job);
    const char *after = r->warned ? " (after every rank was done)" : "";
    if (f.requester)
        snprintf(r->failure, sizeof r->failure,
                 "%schannel %u (responder h%u): the requester on %s got no answer to its "
                 "REGISTER or END%s",
                 job, f.channel, f.responder_host, hosts, after);
    else if (f.end_wait)
        snprintf(r->failure, sizeof r->failure,
                 "%schannel %u (responder h%u): every offset committed, but %u %s sent no "
                 "END after %u tail replays (the last waited %.3f us)%s: %s",
                 job, f.channel, f.responder_host, f.n_missing,
                 plural(f.n_missing, "member", "members"), f.tries,
                 (double)f.waited / ARB_PS_PER_US, after, hosts);
    else
        snprintf(r->failure, sizeof r->failure,
                 "%schannel %u (responder h%u): offset %u lost on tree %u after %u credits; %u "
                 "%s had not answered its %u repair credits (the last waited %.3f us)%s: %s",
                 job, f.channel, f.responder_host, f.offset, f.subchannel, f.attempts, f.n_missing,
                 plural(f.n_missing, "member", "members"), f.tries,
                 (double)f.waited / ARB_PS_PER_US, after, hosts);
    failure_context(sc, fa, t, &f, NULL, &st, r->failure, sizeof r->failure);
}

const char *arb_scenario_default_text(void)
{
    return "; the built-in default: an Arbor AllReduce of 64 MiB over star-32\n"
           "[fabric]\n"
           "topology = star:32\n"
           "[workload]\n"
           "kind = arbor\n"
           "size = 64MiB\n";
}

/* The Arbor collective: its plan from [arbor] and the group from
 * workload.ranks / workload.hosts. */
static int arbor_setup(const arb_scenario *sc, arb_scenario_result *r, arb_topo *t, arb_sim *s,
                       arb_plan ***plans, uint32_t *n_plans, char *err, size_t errlen);

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

/* An error about key k: "WHERE: message". */
static int key_fail(const arb_scenario *sc, enum scn_key k, char *err, size_t errlen, int code,
                    const char *msg)
{
    char where[512];
    scn_where(sc, k, where, sizeof where);
    return arb_errf(err, errlen, code, "%s: %s", where, msg);
}

/* "0-7,16,20-23" into hosts (malloc'd); ARB_EPARSE with msg. */
int scn_parse_hosts(const char *s, uint32_t n_hosts, uint32_t **out, uint32_t *n, char *msg,
                    size_t len)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    uint32_t *v = NULL;
    const char *p = s;
    while (*p) {
        char *end;
        unsigned long a = strtoul(p, &end, 10), b;
        if (end == p) {
            arb_free(v);
            return arb_errf(msg, len, ARB_EPARSE, "'%s' is not a list of hosts like 0-7,16", s);
        }
        b = a;
        p = end;
        if (*p == '-') {
            const char *q = p + 1;
            b = strtoul(q, &end, 10);
            if (end == q || b < a) {
                arb_free(v);
                return arb_errf(msg, len, ARB_EPARSE, "'%s': a bad range", s);
            }
            p = end;
        }
        if (b >= n_hosts) {
            arb_free(v);
            return arb_errf(msg, len, ARB_EINVAL, "host %lu is not below the fabric's %u hosts", b,
                            n_hosts);
        }
        for (unsigned long h = a; h <= b; h++) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 64;
                uint32_t *nv = arb_realloc(v, cap * sizeof *nv);
                if (!nv) {
                    arb_free(v);
                    return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
                }
                v = nv;
            }
            v[(*n)++] = (uint32_t)h;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ',')
            p++;
        else if (*p) {
            arb_free(v);
            return arb_errf(msg, len, ARB_EPARSE, "'%s' is not a list of hosts like 0-7,16", s);
        }
        while (*p == ' ' || *p == '\t')
            p++;
    }
    *out = v;
    return 0;
}

static int make_workload(const arb_scenario *sc, const arb_topo *t, uint64_t run_seed,
                         arb_workload **w, char *err, size_t errlen)
{
    uint32_t n_hosts = arb_topo_n_hosts(t);
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    uint64_t wseed = scn_u64(sc, K_WL_SEED);
    if (wseed == 0) wseed = run_seed;
    wc.seed = wseed;
    wc.qps = (uint32_t)scn_u64(sc, K_WL_QPS);
    wc.qp_mode = (arb_qp_mode)scn_enum(sc, K_WL_QPMODE);
    wc.shared_sport = (int)scn_u64(sc, K_WL_SHAREDSPORT);
    wc.start_delay = scn_u64(sc, K_WL_START_DELAY);
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
            if (rc < 0) return key_fail(sc, K_WL_HOSTS, err, errlen, rc, msg);
        }
        uint64_t ranks = scn_u64(sc, K_WL_RANKS);
        uint32_t avail = *hl ? nh : n_hosts;
        if (ranks == 0) ranks = avail;
        if (ranks > avail) {
            arb_free(hosts);
            snprintf(msg, sizeof msg, "%llu ranks, but only %u hosts", (unsigned long long)ranks,
                     avail);
            return key_fail(sc, K_WL_RANKS, err, errlen, ARB_EINVAL, msg);
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
            return key_fail(sc, K_WL_FILE, err, errlen, ARB_EINVAL,
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
        return key_fail(sc, blame, err, errlen, rc, msg);
    }
    return 0;
}

/* arbor.background: a CSV trace of transport flows run beside the collective. */
static int make_background(const arb_scenario *sc, uint32_t n_hosts, uint64_t run_seed,
                           arb_workload **w, char *err, size_t errlen)
{
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    uint64_t wseed = scn_u64(sc, K_WL_SEED);
    wc.seed = wseed ? wseed : run_seed;
    char msg[512], *path = scn_path(sc, K_AR_BACKGROUND);
    if (!path) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    int rc = arb_workload_new_file(w, ARB_WL_TRACE, path, n_hosts, &wc, msg, sizeof msg);
    arb_free(path);
    return rc < 0 ? key_fail(sc, K_AR_BACKGROUND, err, errlen, rc, msg) : 0;
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

/* ---- sampling ------------------------------------------------------------ */

struct sampler {
    arb_scenario_result *r;
    const arb_sim *s;
    uint8_t *cls_of;       /* per port; 255: failed */
    int32_t *port_of;      /* per port: its column in run.sample_ports, or -1 */
    double *cur_port_util; /* run.sample_ports: this sample's figures (n_sp) */
    uint32_t *cur_port_q;
    uint64_t *prev_tx;
    uint32_t n_ports;
    arb_time prev_t;
};

/* One sample's figures: per port class, the Arbor slots, and the ports of
 * run.sample_ports (NULL without). */
struct sample_figs {
    const double *util, *qmean;
    const uint32_t *qmax;
    uint32_t live, most;
    const double *port_util;
    const uint32_t *port_q;
};

/* Room for one more row. */
static int grow_rows(arb_scenario_result *r)
{
    if (r->n_rows < r->cap_rows) return 0;
    unsigned nc = r->n_cls;
    size_t nsp = r->n_sp ? r->n_sp : 1;
    uint32_t ncap = r->cap_rows ? r->cap_rows * 2 : 256;
    arb_time *nt = arb_realloc(r->samp_t, ncap * sizeof *nt);
    if (nt) r->samp_t = nt;
    double *nu = arb_realloc(r->samp_util, (size_t)ncap * nc * sizeof *nu);
    if (nu) r->samp_util = nu;
    double *nq = arb_realloc(r->samp_qmean, (size_t)ncap * nc * sizeof *nq);
    if (nq) r->samp_qmean = nq;
    uint32_t *nm = arb_realloc(r->samp_qmax, (size_t)ncap * nc * sizeof *nm);
    if (nm) r->samp_qmax = nm;
    uint32_t *ns = arb_realloc(r->samp_slots, (size_t)ncap * 2 * sizeof *ns);
    if (ns) r->samp_slots = ns;
    double *npu = arb_realloc(r->samp_port_util, (size_t)ncap * nsp * sizeof *npu);
    if (npu) r->samp_port_util = npu;
    uint32_t *npq = arb_realloc(r->samp_port_q, (size_t)ncap * nsp * sizeof *npq);
    if (npq) r->samp_port_q = npq;
    if (!nt || !nu || !nq || !nm || !ns || !npu || !npq) return ARB_ENOMEM;
    r->cap_rows = ncap;
    return 0;
}

static double wmean(double x, double wx, double y, double wy)
{
    return (x * wx + y * wy) / (wx + wy);
}

static uint32_t umax(uint32_t x, uint32_t y)
{
    return x > y ? x : y;
}

/* Merge adjacent rows: the later time, the larger maxima, and the means
 * weighted by the rows' intervals (a row ends at its time and starts at
 * the previous row's, the first at 0; slices grow while the fabric idles,
 * so intervals differ). */
static void halve_rows(arb_scenario_result *r)
{
    unsigned nc = r->n_cls;
    size_t np = r->n_sp;
    for (uint32_t i = 0; i < r->n_rows / 2; i++) {
        size_t a = (size_t)2 * i * nc, b = a + nc, o = (size_t)i * nc;
        arb_time t0 = i ? r->samp_t[2 * i - 1] : 0, t1 = r->samp_t[2 * i],
                 t2 = r->samp_t[2 * i + 1];
        double wa = (double)(t1 - t0), wb = (double)(t2 - t1);
        if (wa + wb <= 0) wa = wb = 1;
        for (unsigned c = 0; c < nc; c++) {
            r->samp_util[o + c] = wmean(r->samp_util[a + c], wa, r->samp_util[b + c], wb);
            r->samp_qmean[o + c] = wmean(r->samp_qmean[a + c], wa, r->samp_qmean[b + c], wb);
            r->samp_qmax[o + c] = umax(r->samp_qmax[a + c], r->samp_qmax[b + c]);
        }
        uint32_t *sa = r->samp_slots + 4 * (size_t)i, *so = r->samp_slots + 2 * (size_t)i;
        uint32_t live = (uint32_t)(wmean(sa[0], wa, sa[2], wb) + 0.5), most = umax(sa[1], sa[3]);
        so[0] = live;
        so[1] = most;
        for (size_t k = 0; k < np; k++) {
            size_t pa = 2 * i * np + k, pb = pa + np, po = i * np + k;
            r->samp_port_util[po] = wmean(r->samp_port_util[pa], wa, r->samp_port_util[pb], wb);
            r->samp_port_q[po] = umax(r->samp_port_q[pa], r->samp_port_q[pb]);
        }
        r->samp_t[i] = t2;
    }
    r->n_rows /= 2;
    r->row_every *= 2;
}

/* The row in progress, as written: a row of one sample keeps its figures
 * as they are; more, their means weighted by the samples' intervals. */
void scn_pending_row(const arb_scenario_result *r, double *util, double *qmean, uint32_t *live,
                     double *port_util)
{
    int one = r->pend_n == 1 || r->pend_secs <= 0;
    for (unsigned c = 0; c < r->n_cls; c++) {
        util[c] = one ? r->last_util[c] : r->pend_util[c] / r->pend_secs;
        qmean[c] = one ? r->last_qmean[c] : r->pend_qmean[c] / r->pend_secs;
    }
    *live = (uint32_t)(one ? r->last_live : r->pend_live / r->pend_secs + 0.5);
    for (uint32_t k = 0; port_util && k < r->n_sp; k++)
        port_util[k] = one ? r->last_port_util[k] : r->pend_port_util[k] / r->pend_secs;
}

static void clear_pending(arb_scenario_result *r)
{
    for (unsigned c = 0; c < r->n_cls; c++) {
        r->pend_util[c] = r->pend_qmean[c] = 0;
        r->pend_qmax[c] = 0;
    }
    for (uint32_t k = 0; k < r->n_sp; k++) {
        r->pend_port_util[k] = 0;
        r->pend_port_q[k] = 0;
    }
    r->pend_live = 0;
    r->pend_most = 0;
    r->pend_n = 0;
    r->pend_secs = 0;
}

/* Add one sample's figures (over `secs`) to the row in progress; write the
 * row when it holds row_every samples. */
static int add_to_row(arb_scenario_result *r, arb_time t, double secs, const struct sample_figs *f)
{
    unsigned nc = r->n_cls;
    if (!r->row_every) r->row_every = 1;
    for (unsigned c = 0; c < nc; c++) {
        r->pend_util[c] += f->util[c] * secs;
        r->pend_qmean[c] += f->qmean[c] * secs;
        r->last_util[c] = f->util[c];
        r->last_qmean[c] = f->qmean[c];
        r->pend_qmax[c] = umax(r->pend_qmax[c], f->qmax[c]);
    }
    r->pend_live += f->live * secs;
    r->last_live = f->live;
    r->pend_most = umax(r->pend_most, f->most);
    for (uint32_t k = 0; k < r->n_sp; k++) {
        r->pend_port_util[k] += f->port_util[k] * secs;
        r->last_port_util[k] = f->port_util[k];
        r->pend_port_q[k] = umax(r->pend_port_q[k], f->port_q[k]);
    }
    r->pend_secs += secs;
    r->pend_t = t;
    if (++r->pend_n < r->row_every) return 0;
    if (r->n_rows == ROWS_MAX) {
        halve_rows(r);
        return 0;
    }
    if (grow_rows(r) != 0) return ARB_ENOMEM;
    size_t row = (size_t)r->n_rows * nc, prow = (size_t)r->n_rows * r->n_sp;
    scn_pending_row(r, r->samp_util + row, r->samp_qmean + row,
                    &r->samp_slots[2 * (size_t)r->n_rows], r->samp_port_util + prow);
    r->samp_slots[2 * (size_t)r->n_rows + 1] = r->pend_most;
    for (unsigned c = 0; c < nc; c++)
        r->samp_qmax[row + c] = r->pend_qmax[c];
    for (uint32_t k = 0; k < r->n_sp; k++)
        r->samp_port_q[prow + k] = r->pend_port_q[k];
    r->samp_t[r->n_rows++] = t;
    clear_pending(r);
    return 0;
}

static int sample(struct sampler *sp, arb_time t)
{
    arb_scenario_result *r = sp->r;
    unsigned nc = r->n_cls;
    double secs_p = (double)(t - sp->prev_t) / (double)ARB_PS_PER_S;
    double *port_util = r->n_sp ? sp->cur_port_util : NULL;
    uint32_t *port_q = r->n_sp ? sp->cur_port_q : NULL;
    for (uint32_t i = 0; i < r->n_sp; i++) { /* failed ports read 0 */
        port_util[i] = 0;
        port_q[i] = 0;
    }
    double tx[MAX_CLASSES] = {0}, qs[MAX_CLASSES] = {0};
    uint32_t qm[MAX_CLASSES] = {0};
    for (uint32_t p = 0; p < sp->n_ports; p++) {
        unsigned c = sp->cls_of[p];
        if (c == 255) continue;
        uint32_t q = arb_sim_port_queue(sp->s, p);
        arb_sim_port_stats ps;
        arb_sim_port(sp->s, p, &ps);
        tx[c] += (double)(ps.tx_bytes - sp->prev_tx[p]);
        if (sp->port_of && sp->port_of[p] >= 0) {
            const arb_port *pt = arb_topo_port(arb_sim_topo(sp->s), p);
            double bits = (double)pt->rate * secs_p;
            port_util[sp->port_of[p]] =
                bits > 0 ? (double)(ps.tx_bytes - sp->prev_tx[p]) * 8.0 / bits : 0;
            port_q[sp->port_of[p]] = q;
        }
        sp->prev_tx[p] = ps.tx_bytes;
        qs[c] += q;
        if (q > qm[c]) qm[c] = q;
        struct pclass *pc = &r->cls[c];
        pc->sum_q += q;
        pc->n_q++;
        uint32_t b = q == 0 ? 0 : 1 + (q - 1) / r->bucket;
        if (b >= pc->n_hist) b = pc->n_hist - 1;
        pc->hist[b]++;
    }
    double secs = (double)(t - sp->prev_t) / (double)ARB_PS_PER_S;
    double util[MAX_CLASSES], qmean[MAX_CLASSES];
    for (unsigned c = 0; c < nc; c++) {
        const struct pclass *pc = &r->cls[c];
        util[c] = pc->rate_bits > 0 && secs > 0 ? tx[c] * 8.0 / (pc->rate_bits * secs) : 0;
        qmean[c] = pc->ports ? qs[c] / pc->ports : 0;
    }
    uint32_t live = 0, most = 0;
    arb_sim_arbor_slots(sp->s, &live, &most); /* stays 0 without Arbor */
    r->n_samp++;
    sp->prev_t = t;
    struct sample_figs f = {util, qmean, qm, live, most, port_util, port_q};
    int rc = add_to_row(r, t, secs, &f);
    if (rc == 0 && r->watch) rc = scn_watch_sample(r->watch, sp->s, t);
    return rc;
}

/* run.sample_ports: the ports with their own series and their names
 * ("NODE:pK->PEER", K the port's number at its node). */
static int setup_port_series(const arb_scenario *sc, arb_scenario_result *r, const arb_topo *t,
                             struct sampler *sp, char *err, size_t errlen)
{
    const char *list = scn_str(sc, K_RUN_SAMPLEPORTS);
    if (!*list) return 0;
    char msg[512];
    unsigned n = 0;
    int rc = scn_port_list(t, list, &r->sp_ports, &n, msg, sizeof msg);
    if (rc < 0) return key_fail(sc, K_RUN_SAMPLEPORTS, err, errlen, rc, msg);
    if (n == 0) { /* all */
        n = arb_topo_n_ports(t);
        arb_free(r->sp_ports);
        r->sp_ports = arb_malloc((n ? n : 1) * sizeof *r->sp_ports);
        if (!r->sp_ports) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        for (unsigned i = 0; i < n; i++)
            r->sp_ports[i] = i;
    }
    r->n_sp = n;
    r->sp_name = arb_malloc((n ? n : 1) * sizeof *r->sp_name);
    sp->port_of = arb_malloc(arb_topo_n_ports(t) * sizeof *sp->port_of);
    sp->cur_port_util = arb_calloc(n ? n : 1, sizeof *sp->cur_port_util);
    sp->cur_port_q = arb_calloc(n ? n : 1, sizeof *sp->cur_port_q);
    r->pend_port_util = arb_calloc(n ? n : 1, sizeof *r->pend_port_util);
    r->last_port_util = arb_calloc(n ? n : 1, sizeof *r->last_port_util);
    r->pend_port_q = arb_calloc(n ? n : 1, sizeof *r->pend_port_q);
    if (!r->sp_name || !sp->port_of || !sp->cur_port_util || !sp->cur_port_q ||
        !r->pend_port_util || !r->last_port_util || !r->pend_port_q)
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    for (uint32_t p = 0; p < arb_topo_n_ports(t); p++)
        sp->port_of[p] = -1;
    for (unsigned i = 0; i < n; i++) {
        uint32_t p = r->sp_ports[i], owner = arb_topo_port_owner(t, p);
        char a[16], b[16];
        arb_topo_node_name(t, owner, a, sizeof a);
        arb_topo_node_name(t, arb_topo_port(t, p)->peer, b, sizeof b);
        snprintf(r->sp_name[i], sizeof r->sp_name[i], "%s:p%u->%s", a,
                 p - arb_topo_node(t, owner)->first_port, b);
        sp->port_of[p] = (int32_t)i;
    }
    return 0;
}

static int setup_classes(arb_scenario_result *r, const arb_topo *t, uint64_t queue,
                         struct sampler *sp)
{
    unsigned h = arb_topo_height(t);
    r->height = h;
    r->n_cls = 2 * h;
    if (r->n_cls > MAX_CLASSES) r->n_cls = MAX_CLASSES;
    r->bucket = 1024;
    if (queue / 4096 > r->bucket) r->bucket = (uint32_t)(queue / 4096);
    uint32_t n_hist = (uint32_t)(queue / r->bucket + 3);
    for (unsigned c = 0; c < r->n_cls; c++) {
        struct pclass *pc = &r->cls[c];
        unsigned tier = c / 2;
        int up = c % 2 == 0;
        snprintf(pc->name, sizeof pc->name, "tier%u_%s", tier, up ? "up" : "down");
        const char *lo = arb_topo_level_name(t, tier), *hi = arb_topo_level_name(t, tier + 1);
        snprintf(pc->label, sizeof pc->label, "%s->%s", up ? lo : hi, up ? hi : lo);
        pc->hist = arb_calloc(n_hist, sizeof *pc->hist);
        if (!pc->hist) return ARB_ENOMEM;
        pc->n_hist = n_hist;
    }
    uint32_t np = arb_topo_n_ports(t);
    sp->n_ports = np;
    sp->cls_of = arb_malloc(np ? np : 1);
    sp->prev_tx = arb_calloc(np ? np : 1, sizeof *sp->prev_tx);
    if (!sp->cls_of || !sp->prev_tx) return ARB_ENOMEM;
    const arb_port *ports = arb_topo_ports(t);
    for (uint32_t p = 0; p < np; p++) {
        unsigned c = 2u * ports[p].tier + (ports[p].role == ARB_LINK_UP ? 0 : 1);
        if (ports[p].failed || c >= r->n_cls) {
            sp->cls_of[p] = 255;
            continue;
        }
        sp->cls_of[p] = (uint8_t)c;
        r->cls[c].ports++;
        r->cls[c].rate_bits += (double)ports[p].rate;
    }
    return 0;
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

static int check_sim_config(const arb_scenario *sc, const arb_sim_config *c, char *err,
                            size_t errlen)
{
    char msg[160];
    if ((uint64_t)c->mtu + c->hdr_bytes > 65535) {
        snprintf(msg, sizeof msg, "mtu %u + header %u exceeds 65535 wire bytes", c->mtu,
                 c->hdr_bytes);
        return key_fail(sc, K_TR_MTU, err, errlen, ARB_EINVAL, msg);
    }
    if (c->ecn && c->ecn_kmax <= c->ecn_kmin) {
        snprintf(msg, sizeof msg, "kmax %u must be above kmin %u", c->ecn_kmax, c->ecn_kmin);
        return key_fail(sc, K_SW_KMAX, err, errlen, ARB_EINVAL, msg);
    }
    if (c->pfc && c->pfc_xon >= c->pfc_xoff) {
        snprintf(msg, sizeof msg, "xon %u must be below xoff %u", c->pfc_xon, c->pfc_xoff);
        return key_fail(sc, K_SW_XON, err, errlen, ARB_EINVAL, msg);
    }
    return 0;
}

/* Run up to every fabric.fail_at entry and workload timer due by `until`
 * and apply each at its time (failures first on a tie). A timer the
 * workload sets during a run stops that run at its time (arb_sim_stop_at). */
static int run_failing(struct scn_failat *fa, arb_topo *t, arb_lb *lb, arb_sim *s, arb_workload *w,
                       arb_time until)
{
    char msg[256];
    int rc = 0;
    while (rc == 0) {
        arb_time fat = scn_failat_next(fa), wat = w ? arb_workload_next_timer(w) : ARB_TIME_NEVER;
        arb_time at = fat < wat ? fat : wat;
        if (at > until) break;
        rc = arb_sim_run(s, at);
        if (rc == 0 && w && arb_workload_next_timer(w) < at) continue; /* set meanwhile: first */
        if (rc == 0 && fat == at)
            rc = scn_failat_apply(fa, t, lb, s, at, msg, sizeof msg);
        else if (rc == 0)
            arb_workload_timer(w, s, at);
    }
    return rc;
}

/* The simulator up to `until`, failures and workload timers included. */
static int run_to(struct scn_failat *fa, arb_topo *t, arb_lb *lb, arb_sim *s, arb_workload *w,
                  arb_time until)
{
    int rc = run_failing(fa, t, lb, s, w, until);
    if (rc == 0) rc = arb_sim_run(s, until);
    while (rc == 0 && w && arb_workload_next_timer(w) <= until) { /* set during that run */
        rc = run_failing(fa, t, lb, s, w, until);
        if (rc == 0) rc = arb_sim_run(s, until);
    }
    return rc;
}

/* One run of a scenario: its inputs, what it has built so far (NULL or
 * empty until built; run_end releases it all) and its result. Each step
 * below takes it one stage further and returns 0 or a negative ARB_E*
 * code with err written. */
struct scn_run {
    const arb_scenario *sc;
    arb_scenario_progress_fn progress;
    void *ctx;
    char *err;
    size_t errlen;
    arb_scenario_result *r;
    uint64_t seed; /* run.seed */
    int arbor;     /* workload.kind = arbor */
    arb_topo *t;
    struct scn_failat failat; /* fabric.fail_at, restore_at, reboot_at */
    arb_workload *w;          /* the flows (with Arbor: the background's, if any) */
    arb_sim_config cfg;
    struct scn_route route;
    struct scn_steer *steer;
    struct scn_order *order;
    arb_sim_pcap *pcap;
    char *pcap_path; /* a partitioned run's: part 0 creates it once the run is set up */
    arb_sim *s;
    struct sampler sp;
    arb_plan **plans; /* Arbor: one per job */
    uint32_t n_plans;
    const arb_sim_part_ops *part; /* a partitioned run's part (NULL: whole) */
    int stop;                     /* a run again, stopping at the failure of the first */
    arb_time stop_t;
    uint32_t stop_event;
};

/* The result, echoing every key's value and the file. */
static int run_result(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    arb_scenario_result *r = arb_calloc(1, sizeof *r);
    run->r = r;
    if (!r) return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
    for (int k = 0; k < K_COUNT; k++)
        if (!(r->echo[k] = dup_str(sc->v[k].text)))
            return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
    if (sc->file && !(r->file = dup_str(sc->file)))
        return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
    run->seed = scn_u64(sc, K_RUN_SEED);
    run->arbor = strcmp(scn_str(sc, K_WL_KIND), "arbor") == 0;
    return 0;
}

/* The topology of [fabric] with its rates and delay, and fabric.fail applied. */
static int fabric_topo(const arb_scenario *sc, arb_topo **out, char *err, size_t errlen)
{
    char msg[512];
    arb_topo_config tc = arb_topo_config_default();
    tc.rate = scn_u64(sc, K_FAB_RATE);
    tc.up_rate = scn_u64(sc, K_FAB_UPRATE);
    tc.delay = scn_u64(sc, K_FAB_DELAY);
    int rc = arb_topo_new(out, scn_str(sc, K_FAB_TOPO), &tc, msg, sizeof msg);
    if (rc < 0) return key_fail(sc, K_FAB_TOPO, err, errlen, rc, msg);
    if (*scn_str(sc, K_FAB_FAIL)) {
        rc = arb_topo_fail(*out, scn_str(sc, K_FAB_FAIL), msg, sizeof msg);
        if (rc < 0) return key_fail(sc, K_FAB_FAIL, err, errlen, rc, msg);
    }
    return 0;
}

int arb_scenario_fabric(const arb_scenario *sc, arb_topo **out, char *err, size_t errlen)
{
    char msg[512];
    *out = NULL;
    int rc = fabric_topo(sc, out, err, errlen);
    if (rc == 0 && *scn_str(sc, K_FAB_LINK)) {
        rc = scn_links_apply(*out, scn_str(sc, K_FAB_LINK), msg, sizeof msg);
        if (rc < 0) rc = key_fail(sc, K_FAB_LINK, err, errlen, rc, msg);
    }
    if (rc < 0) {
        arb_topo_free(*out);
        *out = NULL;
    }
    return rc;
}

/* [fabric]: the topology, what has failed, what fails during the run, and
 * the links set apart. */
static int run_fabric(struct scn_run *run)
{
    static const enum scn_key at_keys[] = {K_FAB_FAILAT, K_FAB_RESTOREAT, K_FAB_REBOOTAT};
    static const int at_kinds[] = {SCN_EV_FAIL, SCN_EV_RESTORE, SCN_EV_REBOOT};
    const arb_scenario *sc = run->sc;
    arb_scenario_result *r = run->r;
    char msg[512];
    int rc = fabric_topo(sc, &run->t, run->err, run->errlen);
    if (rc < 0) return rc;
    for (int k = 0; k < 3; k++) {
        if (!*scn_str(sc, at_keys[k])) continue;
        rc = scn_failat_add(&run->failat, run->t, scn_str(sc, at_keys[k]), at_kinds[k], msg,
                            sizeof msg);
        if (rc < 0) return key_fail(sc, at_keys[k], run->err, run->errlen, rc, msg);
    }
    if (*scn_str(sc, K_FAB_LINK)) {
        rc = scn_links_apply(run->t, scn_str(sc, K_FAB_LINK), msg, sizeof msg);
        if (rc < 0) return key_fail(sc, K_FAB_LINK, run->err, run->errlen, rc, msg);
    }
    snprintf(r->topo_spec, sizeof r->topo_spec, "%s", arb_topo_spec(run->t));
    r->hosts = arb_topo_n_hosts(run->t);
    r->switches = arb_topo_n_nodes(run->t) - r->hosts;
    r->links = arb_topo_n_ports(run->t) / 2;
    return 0;
}

/* workload.qp_mode with an Arbor collective: its engines have no QPs, and
 * arbor.background's flows are a trace, which splits over them. */
static int arbor_qp_mode_fail(const arb_scenario *sc, char *err, size_t errlen)
{
    char msg[256];
    snprintf(msg, sizeof msg,
             "qp_mode: %s: only ring_allreduce takes rr or hpn; the Arbor collective has no "
             "QPs (split)",
             arb_qp_mode_name(scn_enum(sc, K_WL_QPMODE)));
    return key_fail(sc, K_WL_QPMODE, err, errlen, ARB_EINVAL, msg);
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
        return key_fail(sc, K_WL_CHUNK, err, errlen, ARB_EINVAL, msg);
    }
    if (arbor && !has_bg && scn_u64(sc, K_WL_QPS) != 1)
        return key_fail(sc, K_WL_QPS, err, errlen, ARB_EINVAL,
                        "the Arbor collective has no QPs; qps splits only arbor.background's "
                        "flows, and there are none (1)");
    if (arbor && !has_bg && scn_u64(sc, K_WL_SHAREDSPORT))
        return key_fail(sc, K_WL_SHAREDSPORT, err, errlen, ARB_EINVAL,
                        "the Arbor collective has no QPs; shared_sport acts only on "
                        "arbor.background's flows, and there are none (off)");
    return 0;
}

/* [workload]: the flows (with Arbor, only its background's). */
static int run_workload(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    arb_scenario_result *r = run->r;
    r->is_arbor = run->arbor;
    r->iter_arbor = scn_enum(sc, K_WL_BACKEND) == 1;
    if (r->iter_arbor && strcmp(scn_str(sc, K_WL_KIND), "iteration") != 0)
        return key_fail(sc, K_WL_BACKEND, run->err, run->errlen, ARB_EINVAL,
                        "arbor only for workload.kind = iteration (kind arbor runs Arbor itself)");
    r->has_bg = *scn_str(sc, K_AR_BACKGROUND) != '\0';
    if (r->has_bg && !run->arbor)
        return key_fail(sc, K_AR_BACKGROUND, run->err, run->errlen, ARB_EINVAL,
                        "only beside an Arbor collective (workload.kind = arbor)");
    if (run->arbor && scn_enum(sc, K_WL_QPMODE) != ARB_QP_SPLIT)
        return arbor_qp_mode_fail(sc, run->err, run->errlen);
    if (unused_keys(sc, run->arbor, r->has_bg, run->err, run->errlen) < 0) return ARB_EINVAL;
    if (run->arbor && !r->has_bg) return 0;
    int rc = run->arbor ? make_background(sc, r->hosts, run->seed, &run->w, run->err, run->errlen)
                        : make_workload(sc, run->t, run->seed, &run->w, run->err, run->errlen);
    return rc < 0 ? rc : 0;
}

/* [transport]'s timers: go-back-N's rto; IRN's rto_low, rto_high and
 * rto_low_n, or one fixed timeout an explicit rto sets; the probes. The
 * simulator derives what is left at 0 from the fabric. */
static int transport_timers(const arb_scenario *sc, arb_sim_config *cfg, char *err, size_t errlen)
{
    static const enum scn_key irn_keys[] = {K_TR_RTOLOW, K_TR_RTOHIGH, K_TR_RTON};
    int irn = cfg->transport == ARB_TRANSPORT_IRN;
    arb_time rto = scn_u64(sc, K_TR_RTO); /* 0: auto */
    for (size_t i = 0; i < sizeof irn_keys / sizeof irn_keys[0]; i++) {
        if (scn_is_default(sc, irn_keys[i])) continue;
        if (!irn)
            return key_fail(sc, irn_keys[i], err, errlen, ARB_EINVAL,
                            "IRN's timers; go-back-N has one, transport.rto");
        if (rto)
            return key_fail(sc, irn_keys[i], err, errlen, ARB_EINVAL,
                            "transport.rto is set, which makes IRN's timeout one fixed value; set "
                            "rto_low and rto_high, or rto");
    }
    cfg->rto = rto ? rto : ARB_PS_PER_MS;
    cfg->rto_low_n = (uint32_t)scn_u64(sc, K_TR_RTON);
    if (irn) {
        cfg->rto_low = rto ? rto : scn_u64(sc, K_TR_RTOLOW);
        cfg->rto_high = rto ? rto : scn_u64(sc, K_TR_RTOHIGH);
    }
    if (cfg->rto_low && cfg->rto_high && cfg->rto_low > cfg->rto_high) {
        char msg[160];
        snprintf(msg, sizeof msg, "above transport.rto_high (%s)", scn_str(sc, K_TR_RTOHIGH));
        return key_fail(sc, K_TR_RTOLOW, err, errlen, ARB_EINVAL, msg);
    }
    int tlp = scn_enum(sc, K_TR_TLP); /* auto|on|off */
    cfg->tlp = tlp == 0 ? ARB_SIM_TLP_AUTO : tlp == 1;
    return 0;
}

/* [transport], [switch] and the fabric's faults: the simulator's configuration. */
static int run_sim_config(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    arb_sim_config *cfg = &run->cfg;
    arb_sim_config_default(cfg);
    cfg->seed = run->seed;
    cfg->mtu = (uint32_t)scn_u64(sc, K_TR_MTU);
    cfg->hdr_bytes = (uint32_t)scn_u64(sc, K_TR_HDR);
    run->r->mtu = cfg->mtu;
    run->r->hdr_bytes = cfg->hdr_bytes;
    cfg->ctrl_bytes = (uint32_t)scn_u64(sc, K_TR_CTRL);
    cfg->transport = scn_enum(sc, K_TR_KIND) == 2 ? ARB_TRANSPORT_IRN : ARB_TRANSPORT_GBN;
    int rc = transport_timers(sc, cfg, run->err, run->errlen);
    if (rc < 0) return rc;
    cfg->retry_limit = (uint32_t)scn_u64(sc, K_TR_RETRY);
    cfg->window = (uint32_t)scn_u64(sc, K_TR_WINDOW);
    cfg->ack_every = (uint32_t)scn_u64(sc, K_TR_ACKEVERY);
    cfg->irn_reorder = scn_u64(sc, K_TR_REORDER);
    cfg->queue_bytes = scn_u64(sc, K_SW_QUEUE);
    cfg->ecn = (int)scn_u64(sc, K_SW_ECN);
    cfg->ecn_kmin = (uint32_t)scn_u64(sc, K_SW_KMIN);
    cfg->ecn_kmax = (uint32_t)scn_u64(sc, K_SW_KMAX);
    cfg->ecn_pmax = scn_real(sc, K_SW_PMAX);
    cfg->pfc = (int)scn_u64(sc, K_SW_PFC);
    cfg->pfc_xoff = (uint32_t)scn_u64(sc, K_SW_XOFF);
    cfg->pfc_xon = (uint32_t)scn_u64(sc, K_SW_XON);
    cfg->dcqcn = (int)scn_u64(sc, K_TR_DCQCN);
    cfg->local_order = scn_enum(sc, K_RUN_ORDER) == 1;
    if (run->w) {
        cfg->on_flow_done = arb_workload_on_flow_done;
        cfg->done_ctx = run->w;
        cfg->on_flow_sent = arb_workload_on_flow_sent;
        cfg->sent_ctx = run->w;
    }
    cfg->loss = scn_real(sc, K_FAB_LOSS);
    cfg->dup = scn_real(sc, K_FAB_DUP);
    cfg->reorder = scn_real(sc, K_FAB_REORDER);
    cfg->reorder_delay = scn_u64(sc, K_FAB_REORDER_DELAY);
    enum scn_key bad = cfg->loss >= 1      ? K_FAB_LOSS
                       : cfg->dup >= 1     ? K_FAB_DUP
                       : cfg->reorder >= 1 ? K_FAB_REORDER
                                           : K_COUNT;
    if (bad != K_COUNT)
        return key_fail(sc, bad, run->err, run->errlen, ARB_EINVAL, "must be below 1");
    if (cfg->reorder > 0 && cfg->reorder_delay == 0)
        return key_fail(sc, K_FAB_REORDER_DELAY, run->err, run->errlen, ARB_EINVAL,
                        "must be above 0 when fabric.reorder is");
    rc = check_sim_config(sc, cfg, run->err, run->errlen);
    return rc < 0 ? rc : 0;
}

/* [routing]: the scheme, HPN's source ports, steering, and the order check
 * (run.qp_order). */
static int run_routing(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    char msg[512];
    uint64_t rseed = scn_u64(sc, K_RT_SEED);
    int rc = scn_route_make(&run->route, run->t, scn_str(sc, K_RT_SCHEME),
                            rseed ? rseed : run->seed, &run->cfg, msg, sizeof msg);
    if (rc < 0) return key_fail(sc, K_RT_SCHEME, run->err, run->errlen, rc, msg);
    snprintf(run->r->route_spec, sizeof run->r->route_spec, "%s", run->route.spec);
    if (run->w && arb_workload_get_kind(run->w) == ARB_WL_ALLREDUCE &&
        scn_enum(sc, K_WL_QPMODE) == ARB_QP_HPN) {
        /* HPN's host side: ports whose paths the switches' hash keeps apart */
        rc = arb_workload_route_sports(run->w, arb_lb_router(run->route.ctx), NULL);
        if (rc < 0)
            return key_fail(sc, K_WL_QPMODE, run->err, run->errlen, rc,
                            rc == ARB_EINVAL
                                ? "hpn: the ranks' source port range is smaller than qps"
                                : "hpn: no source ports with routable paths");
    }
    if (*scn_str(sc, K_RT_STEER)) {
        rc = scn_steer_make(&run->steer, run->t, scn_str(sc, K_RT_STEER), &run->cfg, msg,
                            sizeof msg);
        if (rc < 0) return key_fail(sc, K_RT_STEER, run->err, run->errlen, rc, msg);
    }
    if (scn_u64(sc, K_RUN_QPORDER)) {
        rc = scn_order_make(&run->order, run->t, &run->cfg);
        if (rc < 0) return arb_errf(run->err, run->errlen, rc, "out of memory");
    }
    return 0;
}

/* run.pcap could not be made or given its file: the key named, and the
 * file as the user wrote it. */
static int pcap_fail(const arb_scenario *sc, int rc, char *err, size_t errlen)
{
    char msg[320];
    if (rc == ARB_EIO)
        snprintf(msg, sizeof msg, "%s: cannot create the file", scn_str(sc, K_RUN_PCAP));
    else
        snprintf(msg, sizeof msg, "%s", rc == ARB_ENOMEM ? "out of memory" : arb_strerror(rc));
    return key_fail(sc, K_RUN_PCAP, err, errlen, rc, msg);
}

/* run.pcap (after the routing, whose tap it chains to) and run.watch. A
 * partitioned run's capture gets its file later (run_pcap_file), once
 * everything a partitioned run refuses has been refused. */
static int run_taps(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    char msg[512];
    char *pcap_path = scn_path(sc, K_RUN_PCAP);
    if (pcap_path) {
        uint32_t *pp = NULL;
        unsigned npp = 0;
        int rc = scn_port_list(run->t, scn_str(sc, K_RUN_PCAPPORTS), &pp, &npp, msg, sizeof msg);
        if (rc < 0) {
            arb_free(pcap_path);
            return key_fail(sc, K_RUN_PCAPPORTS, run->err, run->errlen, rc, msg);
        }
        uint32_t snap = (uint32_t)scn_u64(sc, K_RUN_PCAPSNAP);
        if (run->part) {
            rc = arb_sim_pcap_new(&run->pcap, pp, npp, snap);
            run->pcap_path = pcap_path;
        } else {
            rc = arb_sim_pcap_open(&run->pcap, pcap_path, pp, npp, snap);
            arb_free(pcap_path);
        }
        arb_free(pp);
        if (rc < 0) return pcap_fail(sc, rc, run->err, run->errlen);
        arb_sim_pcap_install(run->pcap, &run->cfg);
    }
    if (*scn_str(sc, K_RUN_WATCH)) {
        int rc = scn_watch_make(&run->r->watch, run->t, scn_str(sc, K_RUN_WATCH),
                                scn_u64(sc, K_RUN_SAMPLE), &run->cfg, msg, sizeof msg);
        if (rc < 0) return key_fail(sc, K_RUN_WATCH, run->err, run->errlen, rc, msg);
    }
    return 0;
}

/* A partitioned run's capture: its file, in part 0 (every part fails alike). */
static int run_pcap_file(struct scn_run *run)
{
    if (!run->part || !run->pcap) return 0;
    int rc = arb_sim_pcap_partition(run->pcap, run->s, run->pcap_path);
    return rc < 0 ? pcap_fail(run->sc, rc, run->err, run->errlen) : 0;
}

/* run.qp_order in a partitioned run: each host is reached through the
 * ports of one part (its links' far ends in one part), so that a QP's
 * packets are counted, in order, in one part. */
static int order_one_part(const arb_topo *t, const uint32_t *np, char *msg, size_t len)
{
    uint32_t H = arb_topo_n_hosts(t);
    const arb_node *nodes = arb_topo_nodes(t);
    const arb_port *ports = arb_topo_ports(t);
    for (uint32_t h = 0; h < H; h++) {
        const arb_node *n = &nodes[h];
        for (uint32_t p = n->first_port + 1; p < n->first_port + n->n_up; p++) {
            uint32_t a = ports[n->first_port].peer, b = ports[p].peer;
            if (np[a] == np[b]) continue;
            char ha[16] = "?", na[16] = "?", nb[16] = "?";
            arb_topo_node_name(t, h, ha, sizeof ha);
            arb_topo_node_name(t, a, na, sizeof na);
            arb_topo_node_name(t, b, nb, sizeof nb);
            return arb_errf(msg, len, ARB_EINVAL,
                            "not supported by this partitioned run (--partition): host %s is "
                            "reached from %s (part %u) and %s (part %u), and a QP's order is "
                            "counted in one part",
                            ha, na, np[a], nb, np[b]);
        }
    }
    return 0;
}

/* A partitioned run of a workload whose flows start on others'
 * completions: each part hears of a completion in another part at the end
 * of the window it falls in, so what it starts must start a lookahead or
 * more after it (workload.start_delay). */
static int chained_starts(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    if (!run->w) return 0;
    arb_workload_kind wk = arb_workload_get_kind(run->w);
    arb_workload_result wr;
    arb_workload_get_result(run->w, &wr);
    if (wk != ARB_WL_ALLREDUCE && wk != ARB_WL_HCOLL && wk != ARB_WL_ITERATION &&
        !(wk == ARB_WL_PATTERN && wr.phases > 1))
        return 0;
    arb_sim_part_info pi;
    if (arb_sim_part_figures(run->s, &pi) < 0 || pi.n_ranks == 1) return 0;
    if (pi.lookahead == ARB_TIME_NEVER) /* parts with no link between them */
        return key_fail(sc, K_WL_KIND, run->err, run->errlen, ARB_EINVAL,
                        "not supported by a partitioned run (--partition) whose parts no link "
                        "joins: its flows start on others' completions");
    char msg[320];
    arb_time comp = arb_workload_min_compute(run->w);
    if (comp < pi.lookahead) {
        snprintf(msg, sizeof msg,
                 "not supported by this partitioned run (--partition): a compute node of %.6f "
                 "us, shorter than the lookahead, %.6f us, would end inside the window it "
                 "started in (docs/partition.md)",
                 (double)comp / (double)ARB_PS_PER_US,
                 (double)pi.lookahead / (double)ARB_PS_PER_US);
        return key_fail(sc, K_WL_FILE, run->err, run->errlen, ARB_EINVAL, msg);
    }
    if (scn_u64(sc, K_WL_START_DELAY) >= pi.lookahead) return 0;
    snprintf(msg, sizeof msg,
             "a partitioned run (--partition) of %s needs at least the lookahead, %.6f us: a "
             "part hears of a completion in another part only at the end of the window it "
             "falls in (docs/partition.md)",
             wk == ARB_WL_PATTERN ? "a pattern of several phases" : scn_str(sc, K_WL_KIND),
             (double)pi.lookahead / (double)ARB_PS_PER_US);
    return key_fail(sc, K_WL_START_DELAY, run->err, run->errlen, ARB_EINVAL, msg);
}

/* A partitioned run: what it does not support, by the key that asks for
 * it (docs/partition.md); then the fabric cut by subtree. */
static int run_partition(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    char msg[512];
    if (!run->cfg.local_order)
        return key_fail(sc, K_RUN_ORDER, run->err, run->errlen, ARB_EINVAL,
                        "a partitioned run (--partition) needs local: the global order has no "
                        "parts");
    uint32_t n = arb_topo_n_nodes(run->t);
    uint32_t *np = arb_malloc((n ? n : 1) * sizeof *np);
    if (!np) return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
    int rc = arb_sim_part_subtrees(run->t, run->part->n_ranks, np);
    if (rc < 0) {
        arb_free(np);
        return arb_errf(run->err, run->errlen, rc, "--partition %u: %s", run->part->n_ranks,
                        rc == ARB_EINVAL ? "more parts than the fabric has hosts"
                                         : "out of memory");
    }
    if (run->order && (rc = order_one_part(run->t, np, msg, sizeof msg)) < 0) {
        arb_free(np);
        return key_fail(sc, K_RUN_QPORDER, run->err, run->errlen, rc, msg);
    }
    rc = arb_sim_partition(run->s, run->part, np, msg, sizeof msg);
    arb_free(np);
    if (rc == 0 && run->stop) rc = arb_sim_part_stop_after(run->s, run->stop_t, run->stop_event);
    if (rc < 0) return arb_errf(run->err, run->errlen, rc, "%s", msg);
    return chained_starts(run);
}

/* t as a scenario time that reads back exactly: whole seconds,
 * milliseconds or microseconds, else microseconds with up to 6 decimals. */
static void fmt_time(char *buf, size_t len, arb_time t)
{
    static const struct {
        arb_time ps;
        const char *unit;
    } whole[] = {{ARB_PS_PER_S, "s"}, {ARB_PS_PER_MS, "ms"}, {ARB_PS_PER_US, "us"}};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
        if (t && t % whole[i].ps == 0) {
            snprintf(buf, len, "%llu%s", (unsigned long long)(t / whole[i].ps), whole[i].unit);
            return;
        }
    char frac[8];
    snprintf(frac, sizeof frac, "%06llu", (unsigned long long)(t % ARB_PS_PER_US));
    for (size_t n = strlen(frac); n > 1 && frac[n - 1] == '0'; n--)
        frac[n - 1] = '\0';
    snprintf(buf, len, "%llu.%sus", (unsigned long long)(t / ARB_PS_PER_US), frac);
}

/* Key k's echo, "auto" where it was left so, replaced by `used`. */
static int echo_used(arb_scenario_result *r, enum scn_key k, const char *used)
{
    if (strcmp(r->echo[k], "auto") != 0) return 0;
    char *d = dup_str(used);
    if (!d) return ARB_ENOMEM;
    arb_free(r->echo[k]);
    r->echo[k] = d;
    return 0;
}

/* The report's [transport] timers as the simulator runs them: what was
 * left at auto, derived from the fabric (arb_sim_timers). IRN's rto stays
 * auto (its two timers are in force). */
static int echo_timers(struct scn_run *run)
{
    arb_sim_timers tm;
    arb_sim_get_timers(run->s, &tm);
    char low[32], high[32], rto[32];
    fmt_time(low, sizeof low, tm.rto_low);
    fmt_time(high, sizeof high, tm.rto_high);
    fmt_time(rto, sizeof rto, run->cfg.rto);
    arb_scenario_result *r = run->r;
    int rc = run->cfg.transport == ARB_TRANSPORT_GBN ? echo_used(r, K_TR_RTO, rto) : 0;
    if (rc == 0) rc = echo_used(r, K_TR_RTOLOW, low);
    if (rc == 0) rc = echo_used(r, K_TR_RTOHIGH, high);
    if (rc == 0) rc = echo_used(r, K_TR_TLP, tm.tlp ? "on" : "off");
    return rc;
}

/* The simulator, its sampler and the fault events' recovery figures. */
static int run_simulator(struct scn_run *run)
{
    arb_scenario_result *r = run->r;
    int rc = arb_sim_new(&run->s, run->t, &run->cfg);
    if (rc < 0) return arb_errf(run->err, run->errlen, rc, "simulator: %s", arb_strerror(rc));
    if (echo_timers(run) < 0) return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
    if (run->part && (rc = run_partition(run)) < 0) return rc;
    rc = setup_classes(r, run->t, run->cfg.queue_bytes, &run->sp);
    if (rc < 0) return arb_errf(run->err, run->errlen, rc, "out of memory");
    rc = setup_port_series(run->sc, r, run->t, &run->sp, run->err, run->errlen);
    if (rc < 0) return rc;
    run->sp.r = r;
    run->sp.s = run->s;
    if (run->failat.n_events) {
        rc = scn_recovery_new(&r->rec, &run->failat, scn_u64(run->sc, K_RUN_FAULTWIN), run->arbor);
        if (rc < 0) return arb_errf(run->err, run->errlen, rc, "out of memory");
        run->failat.rec = r->rec;
    }
    return 0;
}

/* The Arbor jobs (workload.kind = arbor), the watch's view of their
 * channels, and the workload's start. */
static int run_start(struct scn_run *run)
{
    arb_scenario_result *r = run->r;
    int rc;
    if (run->arbor) {
        rc = arbor_setup(run->sc, r, run->t, run->s, &run->plans, &run->n_plans, run->err,
                         run->errlen);
        if (rc < 0) return rc;
    }
    if (r->watch && run->n_plans) {
        uint32_t *ch_end = arb_malloc(run->n_plans * sizeof *ch_end);
        for (uint32_t k = 0; ch_end && k < run->n_plans; k++)
            ch_end[k] = (k ? ch_end[k - 1] : 0) + arb_plan_n_channels(run->plans[k]);
        rc = ch_end ? scn_watch_jobs(r->watch, ch_end, run->n_plans) : ARB_ENOMEM;
        arb_free(ch_end);
        if (rc < 0) return arb_errf(run->err, run->errlen, rc, "out of memory");
    }
    if (run->w) {
        rc = arb_workload_start(run->w, run->s);
        if (rc < 0) return arb_errf(run->err, run->errlen, rc, "workload: %s", arb_strerror(rc));
    }
    return 0;
}

/* After a slice: the figures so far (with Arbor, the ranks done until
 * every one is, then the full figures). */
static void slice_figures(struct scn_run *run)
{
    arb_scenario_result *r = run->r;
    arb_sim_get_stats(run->s, &r->st);
    if (!run->arbor) {
        arb_workload_get_result(run->w, &r->wr);
    } else if (!arb_sim_arbor_done(run->s)) {
        /* the full figures (invariants) only when needed */
        uint32_t ranks_done, ranks;
        arb_sim_arbor_progress(run->s, &ranks_done, &ranks);
        r->wr.done = 0;
        r->wr.flows_done = ranks_done;
        r->wr.flows_planned = ranks;
    } else {
        arb_sim_arbor_result_get(run->s, &r->ar);
        r->wr.done = r->ar.done;
        r->wr.flows_done = r->ar.ranks_done;
        r->wr.flows_planned = r->ar.ranks;
        r->wr.finish = r->ar.finish;
    }
    if (r->has_bg) { /* the run goes on until the background is done too */
        arb_workload_get_result(run->w, &r->bg);
        if (!r->bg.done) r->wr.done = 0;
    }
}

/* The simulator up to `next`: 0, 1 when an Arbor engine gave up (the run
 * ends there, reporting what it got and what was lost), or an error. */
static int run_slice(struct scn_run *run, arb_time next)
{
    arb_scenario_result *r = run->r;
    int rc = run_to(&run->failat, run->t, run->route.ctx, run->s, run->w, next);
    if (rc == 0 && r->rec) scn_recovery_read(r->rec, run->s, next);
    if (rc == 0 && run->w) rc = arb_workload_error(run->w);
    if (rc == ARB_ETIMEDOUT && (run->arbor || r->iter_arbor)) {
        /* not bad input: what the run got is reported, with what was lost */
        describe_failure(run->sc, &run->failat, run->t, run->s, r);
        arb_sim_get_stats(run->s, &r->st);
        return 1;
    }
    if (rc < 0)
        return arb_errf(run->err, run->errlen, rc, "simulation stopped at %" PRIu64 " ps: %s",
                        arb_sim_now(run->s), arb_strerror(rc));
    slice_figures(run);
    return 0;
}

/* No event left in the simulator, no workload timer and no fault event to
 * come: nothing will happen, though the workload is not done (a flow's
 * sender gave up, transport.retry_limit). */
static int nothing_left(const struct scn_run *run)
{
    return arb_sim_next_event(run->s) == ARB_TIME_NEVER &&
           scn_failat_next(&run->failat) == ARB_TIME_NEVER &&
           (!run->w || arb_workload_next_timer(run->w) == ARB_TIME_NEVER);
}

/* Run in slices of run.sample (10 us without samples) until the workload is
 * done and no packet is left in flight, checked at slice ends; idle
 * stretches are skipped with growing slices. */
static int run_slices(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    arb_scenario_result *r = run->r;
    arb_time stop = scn_u64(sc, K_RUN_STOP), every = scn_u64(sc, K_RUN_SAMPLE);
    arb_time base = every ? every : 10 * ARB_PS_PER_US;
    arb_time slice = base, now = 0;
    for (;;) {
        arb_time next = now + slice;
        if (next < now) next = ARB_TIME_NEVER - 1;
        if (stop && next > stop) next = stop;
        uint64_t ev0 = r->st.events;
        int rc = run_slice(run, next);
        if (rc != 0) return rc < 0 ? rc : 0;
        int idle = r->st.events == ev0;
        if (every && (!idle || !r->wr.done)) {
            /* partitioned: every port's counters to part 0 first */
            rc = arb_sim_part_ports(run->s);
            if (rc < 0)
                return arb_errf(run->err, run->errlen, rc, "partition: %s", arb_strerror(rc));
            if (sample(&run->sp, next) < 0)
                return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
        }
        now = next;
        if (run->progress)
            run->progress(run->ctx, now, stop, r->wr.flows_done, r->wr.flows_planned);
        if (stop && now >= stop) {
            r->stopped = !r->wr.done;
            return 0;
        }
        /* done and nothing on the wires: what is left are stale timers */
        if (r->wr.done && (idle || r->st.in_flight == 0)) return 0;
        if (idle) {
            if (slice > ARB_TIME_NEVER / 4) return 0; /* nothing will ever happen */
            if (nothing_left(run)) return 0;
            slice *= 2;
        } else {
            slice = base;
        }
    }
}

/* The run's figures once it is over: ports, flows, ranks, jobs, the
 * background, the watch and the recovery. */
static int run_figures(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    arb_scenario_result *r = run->r;
    arb_sim *s = run->s;
    char *err = run->err;
    size_t errlen = run->errlen;
    int rc = arb_sim_part_collect(s); /* a partitioned run: every flow's figures to part 0 */
    if (rc < 0) return arb_errf(err, errlen, rc, "partition: %s", arb_strerror(rc));
    rc = collect(r, s, run->t);
    if (rc == 0) describe_gave_up(sc, &run->failat, run->t, r);
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

/* Release what the run built, in order: the capture's file closed (a write
 * that failed fails the run), the simulator, and what it used; run.qp_order's
 * figures are read on the way when the run went well. rc: the run's status
 * so far; returns it, or the first error met here. */
static int run_end(struct scn_run *run, int rc)
{
    if (run->pcap) { /* (partitioned: collective) */
        int prc = arb_sim_pcap_close(run->pcap);
        if (prc < 0 && rc == 0)
            rc = key_fail(run->sc, K_RUN_PCAP, run->err, run->errlen, prc,
                          prc == ARB_ENOMEM ? "out of memory" : "a write failed");
    }
    arb_free(run->pcap_path);
    if (run->s && run->r && arb_sim_part_figures(run->s, &run->r->part) == 0) run->r->has_part = 1;
    arb_sim_free(run->s);
    scn_steer_free(run->steer);
    if (run->order && rc == 0) {
        run->r->has_order = 1;
        rc = scn_order_get(run->order, &run->r->order_ooo, &run->r->order_pkts);
        if (rc < 0) rc = arb_errf(run->err, run->errlen, rc, "run.qp_order: out of memory");
    }
    scn_order_free(run->order);
    scn_failat_free(&run->failat);
    for (uint32_t k = 0; k < run->n_plans; k++)
        arb_plan_free(run->plans[k]);
    arb_free(run->plans);
    arb_workload_free(run->w);
    if (run->route.destroy) run->route.destroy(run->route.ctx);
    arb_topo_free(run->t);
    arb_free(run->sp.cls_of);
    arb_free(run->sp.port_of);
    arb_free(run->sp.cur_port_util);
    arb_free(run->sp.cur_port_q);
    arb_free(run->sp.prev_tx);
    return rc;
}

int arb_scenario_run(const arb_scenario *sc, arb_scenario_progress_fn progress, void *ctx,
                     arb_scenario_result **out, char *err, size_t errlen)
{
    return arb_scenario_run_part(sc, NULL, progress, ctx, out, err, errlen);
}

int arb_scenario_run_part(const arb_scenario *sc, const arb_sim_part_ops *ops,
                          arb_scenario_progress_fn progress, void *ctx, arb_scenario_result **out,
                          char *err, size_t errlen)
{
    struct scn_run run;
    *out = NULL;
    int rc;
    arb_time stop_t = 0;
    uint32_t stop_event = 0;
    for (int again = 0;; again++) {
        memset(&run, 0, sizeof run);
        run.part = ops;
        run.sc = sc;
        run.progress = progress;
        run.ctx = ctx;
        run.err = err;
        run.errlen = errlen;
        run.stop = again;
        run.stop_t = stop_t;
        run.stop_event = stop_event;
        rc = run_result(&run);
        if (rc == 0) rc = run_fabric(&run);
        if (rc == 0) rc = run_workload(&run);
        if (rc == 0) rc = run_sim_config(&run);
        if (rc == 0) rc = run_routing(&run);
        if (rc == 0) rc = run_taps(&run);
        if (rc == 0) rc = run_simulator(&run);
        if (rc == 0) rc = run_start(&run);
        if (rc == 0) rc = run_pcap_file(&run);
        if (rc == 0) rc = run_slices(&run);
        /* A partitioned run that an Arbor engine's failure ended: the other
         * parts ran on to the end of that window. Once again, every part
         * stopping at the failure, as one process does (docs/partition.md);
         * every part decides alike (the failure is every part's). */
        if (rc != 0 || again || !ops || !(run.r->failed || run.r->warned) ||
            arb_sim_arbor_failure_point(run.s, &stop_t, &stop_event) < 0)
            break;
        run_end(&run, 0);
        arb_scenario_result_free(run.r);
    }
    if (rc == 0) rc = run_figures(&run);
    rc = run_end(&run, rc);
    if (rc < 0) {
        arb_scenario_result_free(run.r);
        return rc;
    }
    *out = run.r;
    return 0;
}

/* Too many or too few ranks for a group: blame what the user gave, the
 * ranks, the host list or else the fabric (the ranks' default is every host). */
static int arbor_ranks_fail(const arb_scenario *sc, uint64_t ranks, uint32_t avail, char *err,
                            size_t errlen)
{
    char msg[512];
    if (sc->v[K_WL_RANKS].file) {
        snprintf(msg, sizeof msg, "%llu ranks: a group has 2..%d, and %u hosts are available",
                 (unsigned long long)ranks, ARB_PLAN_MAX_RANKS, avail);
        return key_fail(sc, K_WL_RANKS, err, errlen, ARB_EINVAL, msg);
    }
    if (*scn_str(sc, K_WL_HOSTS)) {
        snprintf(msg, sizeof msg,
                 "%u hosts listed: an Arbor group has 2..%d ranks (workload.ranks, by default "
                 "every listed host)",
                 avail, ARB_PLAN_MAX_RANKS);
        return key_fail(sc, K_WL_HOSTS, err, errlen, ARB_EINVAL, msg);
    }
    snprintf(msg, sizeof msg,
             "'%s' has %u hosts, and workload.ranks (default 0) puts a rank on every one: an Arbor "
             "group has 2..%d ranks (set workload.ranks or workload.hosts)",
             scn_str(sc, K_FAB_TOPO), avail, ARB_PLAN_MAX_RANKS);
    return key_fail(sc, K_FAB_TOPO, err, errlen, ARB_EINVAL, msg);
}

/* The hosts of the ranks (workload.ranks, workload.hosts) into *rk. */
static int arbor_ranks(const arb_scenario *sc, const arb_scenario_result *r, uint32_t **rk,
                       uint32_t *n, char *err, size_t errlen)
{
    char msg[512];
    uint32_t *hosts = NULL, nh = 0;
    const char *hl = scn_str(sc, K_WL_HOSTS);
    if (*hl) {
        int rc = scn_parse_hosts(hl, r->hosts, &hosts, &nh, msg, sizeof msg);
        if (rc < 0) return key_fail(sc, K_WL_HOSTS, err, errlen, rc, msg);
    }
    uint64_t ranks = scn_u64(sc, K_WL_RANKS);
    uint32_t avail = *hl ? nh : r->hosts;
    if (ranks == 0) ranks = avail;
    if (scn_u64(sc, K_WL_RANKS) == 0 && *scn_str(sc, K_AR_JOBRANKS)) {
        /* arbor.job_ranks names the ranks: as many as they add up to */
        uint64_t *c = NULL, sum = 0;
        uint32_t nc = 0;
        if (scn_list(sc, K_AR_JOBRANKS, &c, &nc) < 0) {
            arb_free(hosts);
            return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        }
        for (uint32_t k = 0; k < nc; k++)
            sum += c[k] < UINT32_MAX ? c[k] : UINT32_MAX;
        arb_free(c);
        if (sum <= avail) ranks = sum;
    }
    if (ranks > avail || ranks < 2 || ranks > ARB_PLAN_MAX_RANKS * scn_u64(sc, K_AR_JOBS)) {
        arb_free(hosts);
        return arbor_ranks_fail(sc, ranks, avail, err, errlen);
    }
    *rk = arb_malloc(ranks * sizeof **rk);
    if (!*rk) {
        arb_free(hosts);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < ranks; i++)
        (*rk)[i] = hosts ? hosts[i] : i;
    arb_free(hosts);
    *n = (uint32_t)ranks;
    return 0;
}

/* The jobs of [arbor]: job k runs on ranks first[k] .. first[k] + count[k]
 * - 1 with a buffer of bytes[k], from start[k]. */
struct layout {
    uint32_t jobs;
    uint32_t *first, *count;
    uint64_t *bytes;
    arb_time *start;
};

static void layout_free(struct layout *l)
{
    arb_free(l->first);
    arb_free(l->count);
    arb_free(l->bytes);
    arb_free(l->start);
}

/* A list key with one value per job (empty: NULL); the error names it. */
static int per_job(const arb_scenario *sc, enum scn_key k, uint32_t jobs, uint64_t **v, char *err,
                   size_t errlen)
{
    uint32_t n;
    if (scn_list(sc, k, v, &n) < 0) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    if (*v && n != jobs) {
        char msg[160];
        snprintf(msg, sizeof msg, "%u values for arbor.jobs = %u (one per job, in job order)", n,
                 jobs);
        arb_free(*v);
        *v = NULL;
        return key_fail(sc, k, err, errlen, ARB_EINVAL, msg);
    }
    return 0;
}

/* arbor.jobs and the per-job keys: the ranks split into equal groups of
 * two or more (or as arbor.job_ranks says), each job's buffer and start. */
static int arbor_layout(const arb_scenario *sc, uint32_t ranks, struct layout *l, char *err,
                        size_t errlen)
{
    char msg[200];
    uint32_t jobs = l->jobs = (uint32_t)scn_u64(sc, K_AR_JOBS);
    uint64_t *cnt = NULL, *size = NULL, *start = NULL;
    int rc = per_job(sc, K_AR_JOBRANKS, jobs, &cnt, err, errlen);
    if (rc == 0) rc = per_job(sc, K_AR_JOBSIZE, jobs, &size, err, errlen);
    if (rc == 0) rc = per_job(sc, K_AR_JOBSTART, jobs, &start, err, errlen);
    l->first = arb_calloc(jobs, sizeof *l->first);
    l->count = arb_calloc(jobs, sizeof *l->count);
    l->bytes = arb_calloc(jobs, sizeof *l->bytes);
    l->start = arb_calloc(jobs, sizeof *l->start);
    if (rc == 0 && (!l->first || !l->count || !l->bytes || !l->start))
        rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    uint64_t at = 0;
    for (uint32_t k = 0; rc == 0 && k < jobs; k++) {
        uint64_t c = cnt ? cnt[k] : ranks / jobs;
        if (!cnt && (ranks % jobs || c < 2 || c > ARB_PLAN_MAX_RANKS)) {
            snprintf(msg, sizeof msg,
                     "%u jobs: %u ranks do not split into equal groups of 2..%d ranks", jobs, ranks,
                     ARB_PLAN_MAX_RANKS);
            rc = key_fail(sc, K_AR_JOBS, err, errlen, ARB_EINVAL, msg);
        } else if (c < 2 || c > ARB_PLAN_MAX_RANKS) {
            snprintf(msg, sizeof msg, "job %u: %llu ranks (a job has 2..%d)", k,
                     (unsigned long long)c, ARB_PLAN_MAX_RANKS);
            rc = key_fail(sc, K_AR_JOBRANKS, err, errlen, ARB_EINVAL, msg);
        } else if (size && size[k] == 0) {
            snprintf(msg, sizeof msg, "job %u: a buffer of 0 bytes", k);
            rc = key_fail(sc, K_AR_JOBSIZE, err, errlen, ARB_EINVAL, msg);
        }
        if (rc < 0) break;
        l->first[k] = (uint32_t)at;
        l->count[k] = (uint32_t)c;
        l->bytes[k] = size ? size[k] : scn_u64(sc, K_WL_SIZE);
        l->start[k] = scn_u64(sc, K_WL_START) + (start ? start[k] : 0);
        at += c;
    }
    if (rc == 0 && cnt && at != ranks) {
        snprintf(msg, sizeof msg,
                 "the jobs' ranks add up to %llu, but there are %u ranks (workload.ranks, "
                 "workload.hosts)",
                 (unsigned long long)at, ranks);
        rc = key_fail(sc, K_AR_JOBRANKS, err, errlen, ARB_EINVAL, msg);
    }
    arb_free(cnt);
    arb_free(size);
    arb_free(start);
    return rc;
}

/* The plan configuration of [arbor] (ranks and bytes apart). */
static int arbor_plan_config(const arb_scenario *sc, arb_plan_config *pc, char *err, size_t errlen)
{
    arb_plan_config_default(pc);
    pc->coll = (arb_coll)scn_enum(sc, K_AR_COLL);
    pc->root = (uint32_t)scn_u64(sc, K_AR_ROOT);
    pc->bytes = scn_u64(sc, K_WL_SIZE);
    pc->dtype = (arb_dtype)scn_enum(sc, K_AR_DTYPE);
    pc->subchannels = (uint32_t)scn_u64(sc, K_AR_SUBCH);
    int prof = scn_enum(sc, K_AR_PROFILE);
    pc->header = prof == 1 ? 16 : prof == 2 ? 20 : 0;
    const char *lv = scn_str(sc, K_AR_LEVELS);
    for (const char *q = lv; *q;) {
        char *end;
        unsigned long l = strtoul(q, &end, 10);
        if (end == q || l == 0 || l > 31 || (*end && *end != ','))
            return key_fail(sc, K_AR_LEVELS, err, errlen, ARB_EPARSE,
                            "expected switch levels 1..31 separated by commas");
        pc->agg_levels |= 1u << l;
        q = *end ? end + 1 : end;
    }
    return 0;
}

/* The key a planner's message is about: what makes the plan impossible. */
static enum scn_key arbor_plan_blame(const arb_scenario *sc, const char *msg)
{
    if (strstr(msg, "no live path")) return K_FAB_FAIL; /* the failures cut a tree */
    if (strstr(msg, "on host")) /* the ranks' hosts: listed, or the first N */
        return *scn_str(sc, K_WL_HOSTS) ? K_WL_HOSTS : K_WL_RANKS;
    if (strstr(msg, "bytes")) return *scn_str(sc, K_AR_JOBSIZE) ? K_AR_JOBSIZE : K_WL_SIZE;
    if (strstr(msg, "root rank")) return K_AR_ROOT;
    if (strstr(msg, "add level")) return K_AR_LEVELS;
    if (strstr(msg, "tiers")) return K_AR_PROFILE;
    if (strstr(msg, "subchannels")) return K_AR_SUBCH;
    return K_AR_COLL;
}

/* Job k's plan: its ranks of rk, its buffer. The error names the key to blame. */
static int arbor_plan(const arb_scenario *sc, arb_topo *t, const arb_plan_config *base,
                      const uint32_t *rk, uint32_t k, const struct layout *l, arb_plan **plan,
                      char *err, size_t errlen)
{
    char msg[512], full[560];
    uint32_t jobs = l->jobs;
    arb_plan_config pc = *base;
    pc.ranks = rk + l->first[k];
    pc.n_ranks = l->count[k];
    pc.bytes = l->bytes[k];
    pc.root_offset = l->first[k]; /* job k's trees after job k-1's (its channels or fewer) */
    int rc = arb_topo_plan(plan, t, &pc, msg, sizeof msg);
    if (rc == 0) return 0;
    enum scn_key blame = arbor_plan_blame(sc, msg);
    if (jobs > 1)
        snprintf(full, sizeof full, "job %u: %s", k, msg);
    else
        snprintf(full, sizeof full, "%s", msg);
    /* what the scenario asks is impossible: a usage error, not a failed run */
    return key_fail(sc, blame, err, errlen, rc == ARB_ENOMEM ? rc : ARB_EINVAL, full);
}

/* The responders' controller of [arbor] (arbor.cc, arbor.cc.*). */
static void arbor_cc_config(const arb_scenario *sc, arb_sim_arbor_config *ac)
{
    arb_cc_config *c = &ac->cc;
    ac->cc_kind = (arb_cc_kind)scn_enum(sc, K_AR_CC);
    ac->cc_base_rtt = scn_u64(sc, K_AR_CC_BASERTT);
    uint64_t rate = scn_u64(sc, K_AR_CC_RATE);
    uint32_t frame = ARB_FRAME_OVERHEAD + ARB_HDR_LEN_LONG + ac->payload + ARB_WIRE_EXTRA;
    c->spacing = rate ? arb_cc_spacing_for_rate(rate, frame) : 0;
    c->window = (uint32_t)scn_u64(sc, K_AR_CC_WINDOW);
    c->window_min = (uint32_t)scn_u64(sc, K_AR_CC_WMIN);
    c->window_max = (uint32_t)scn_u64(sc, K_AR_CC_WMAX);
    c->timely.alpha = scn_real(sc, K_AR_TI_ALPHA);
    c->timely.beta = scn_real(sc, K_AR_TI_BETA);
    c->timely.delta = scn_u64(sc, K_AR_TI_DELTA);
    c->timely.t_low = scn_u64(sc, K_AR_TI_TLOW);
    c->timely.t_high = scn_u64(sc, K_AR_TI_THIGH);
    c->timely.interval = scn_u64(sc, K_AR_TI_INTERVAL);
    c->timely.hai_after = (uint32_t)scn_u64(sc, K_AR_TI_HAI);
    c->timely.hai_factor = (uint32_t)scn_u64(sc, K_AR_TI_HAIF);
    c->timely.min_rate = scn_u64(sc, K_AR_TI_MINRATE);
    c->swift.base_target = scn_u64(sc, K_AR_SW_TARGET);
    c->swift.per_hop = scn_u64(sc, K_AR_SW_PERHOP);
    c->swift.hops = (uint32_t)scn_u64(sc, K_AR_SW_HOPS);
    c->swift.fs_range = scn_u64(sc, K_AR_SW_FSRANGE);
    c->swift.ai = scn_real(sc, K_AR_SW_AI);
    c->swift.beta = scn_real(sc, K_AR_SW_BETA);
    c->swift.max_mdf = scn_real(sc, K_AR_SW_MAXMDF);
    c->swift.min_cwnd = scn_real(sc, K_AR_SW_MINCWND);
    c->swift.fs_min_cwnd = scn_real(sc, K_AR_SW_FSMIN);
    c->swift.fs_max_cwnd = scn_real(sc, K_AR_SW_FSMAX);
    c->swift.stall_reset = (uint32_t)scn_u64(sc, K_AR_SW_STALL);
    c->dcqcn.cnp_interval = scn_u64(sc, K_AR_DC_CNP);
    c->dcqcn.g = scn_real(sc, K_AR_DC_G);
    c->dcqcn.alpha_init = scn_real(sc, K_AR_DC_ALPHA0);
    c->dcqcn.alpha_timer = scn_u64(sc, K_AR_DC_ALPHAT);
    c->dcqcn.rate_timer = scn_u64(sc, K_AR_DC_RATET);
    c->dcqcn.byte_counter = scn_u64(sc, K_AR_DC_BYTES);
    c->dcqcn.f = (uint32_t)scn_u64(sc, K_AR_DC_F);
    c->dcqcn.rai = scn_u64(sc, K_AR_DC_RAI);
    c->dcqcn.rhai = scn_u64(sc, K_AR_DC_RHAI);
    c->dcqcn.min_rate = scn_u64(sc, K_AR_DC_MINRATE);
    c->oscar.target = scn_u64(sc, K_AR_OS_TARGET);
    c->oscar.gain = scn_real(sc, K_AR_OS_GAIN);
    c->oscar.kappa = scn_real(sc, K_AR_OS_KAPPA);
    c->oscar.headroom = scn_real(sc, K_AR_OS_HEADROOM);
    c->oscar.max_growth = scn_real(sc, K_AR_OS_GROWTH);
    c->oscar.min_cwnd = scn_real(sc, K_AR_OS_MINCWND);
}

/* The key a controller's rule names ("timely.beta: ..." is arbor.cc.timely.beta). */
static enum scn_key cc_key(const char *why)
{
    static const struct {
        const char *field;
        enum scn_key key;
    } map[] = {{"window_min", K_AR_CC_WMIN},
               {"window_max", K_AR_CC_WMAX},
               {"window", K_AR_CC_WINDOW},
               {"base_rtt", K_AR_CC_BASERTT},
               {"timely.alpha", K_AR_TI_ALPHA},
               {"timely.beta", K_AR_TI_BETA},
               {"timely.delta", K_AR_TI_DELTA},
               {"timely.t_low", K_AR_TI_TLOW},
               {"timely.t_high", K_AR_TI_THIGH},
               {"timely.hai_after", K_AR_TI_HAI},
               {"timely.hai_factor", K_AR_TI_HAIF},
               {"timely.min_rate", K_AR_TI_MINRATE},
               {"swift.base_target", K_AR_SW_TARGET},
               {"swift.per_hop", K_AR_SW_PERHOP},
               {"swift.fs_range", K_AR_SW_FSRANGE},
               {"swift.ai", K_AR_SW_AI},
               {"swift.beta", K_AR_SW_BETA},
               {"swift.max_mdf", K_AR_SW_MAXMDF},
               {"swift.min_cwnd", K_AR_SW_MINCWND},
               {"swift.fs_min_cwnd", K_AR_SW_FSMIN},
               {"swift.fs_max_cwnd", K_AR_SW_FSMAX},
               {"swift.stall_reset", K_AR_SW_STALL},
               {"dcqcn.cnp_interval", K_AR_DC_CNP},
               {"dcqcn.g", K_AR_DC_G},
               {"dcqcn.alpha_init", K_AR_DC_ALPHA0},
               {"dcqcn.alpha_timer", K_AR_DC_ALPHAT},
               {"dcqcn.rate_timer", K_AR_DC_RATET},
               {"dcqcn.byte_counter", K_AR_DC_BYTES},
               {"dcqcn.f", K_AR_DC_F},
               {"dcqcn.rai", K_AR_DC_RAI},
               {"dcqcn.rhai", K_AR_DC_RHAI},
               {"dcqcn.min_rate", K_AR_DC_MINRATE},
               {"oscar.target", K_AR_OS_TARGET},
               {"oscar.gain", K_AR_OS_GAIN},
               {"oscar.kappa", K_AR_OS_KAPPA},
               {"oscar.headroom", K_AR_OS_HEADROOM},
               {"oscar.max_growth", K_AR_OS_GROWTH},
               {"oscar.min_cwnd", K_AR_OS_MINCWND}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        size_t n = strlen(map[i].field);
        if (strncmp(why, map[i].field, n) == 0 && why[n] == ':') return map[i].key;
    }
    return K_AR_CC;
}

/* The simulator's Arbor configuration of [arbor] (the plan apart). */
static void arbor_sim_config(const arb_scenario *sc, arb_sim_arbor_config *ac)
{
    arb_sim_arbor_config_default(ac);
    ac->payload = (uint32_t)scn_u64(sc, K_AR_PAYLOAD);
    ac->values = scn_enum(sc, K_AR_MODE) == 1;
    ac->window = (uint32_t)scn_u64(sc, K_AR_WINDOW);
    ac->slots = (uint32_t)scn_u64(sc, K_AR_SLOTS);
    ac->local_repair = scn_enum(sc, K_AR_REPAIR) == 0;
    ac->timeout = scn_u64(sc, K_AR_TIMEOUT);
    ac->adaptive_timeout = scn_enum(sc, K_AR_TOMODE) == 1;
    ac->timeout_min = scn_u64(sc, K_AR_TOMIN);
    ac->order_detection = scn_enum(sc, K_AR_DETECT) == 0;
    ac->attempts = (uint32_t)scn_u64(sc, K_AR_ATTEMPTS);
    ac->miss_limit = (uint32_t)scn_u64(sc, K_AR_MISSLIMIT);
    ac->dead_after = (uint32_t)scn_u64(sc, K_AR_DEADAFTER);
    ac->repair_tries = (uint32_t)scn_u64(sc, K_AR_REPTRIES);
    ac->retry = scn_u64(sc, K_AR_RETRY);
    ac->retry_min = scn_u64(sc, K_AR_RETRYMIN);
    ac->start = scn_u64(sc, K_WL_START);
    ac->wire_check = (int)scn_u64(sc, K_AR_WIRECHECK);
    ac->skew = scn_u64(sc, K_AR_SKEW);
    ac->skew_random = scn_enum(sc, K_AR_SKEWMODE);
    ac->seed = scn_u64(sc, K_RUN_SEED);
    ac->dynamic_subchannels = scn_enum(sc, K_AR_SUBMODE) == 1;
    arbor_cc_config(sc, ac);
}

/* A timer ceiling below the fabric's loop cannot work: no completion can
 * come before it, so every credit would be presumed lost. */
static int timers_above_loop(const arb_scenario *sc, const arb_sim *s,
                             const arb_sim_arbor_config *ac, char *err, size_t errlen)
{
    arb_time loop = arb_sim_arbor_loop(s, ac->plan, ac->payload);
    char why[128];
    snprintf(why, sizeof why, "below the fabric's loop (%.3f us here): no answer can come sooner",
             (double)loop / ARB_PS_PER_US);
    if (ac->timeout < loop) return key_fail(sc, K_AR_TIMEOUT, err, errlen, ARB_EINVAL, why);
    if (ac->retry < loop) return key_fail(sc, K_AR_RETRY, err, errlen, ARB_EINVAL, why);
    /* a controller's base loop below the fabric's: every sample looks
     * congested, and a delay-based controller starves the channel */
    if (ac->cc_base_rtt && ac->cc_base_rtt < loop)
        return key_fail(sc, K_AR_CC_BASERTT, err, errlen, ARB_EINVAL,
                        "below the fabric's loop: every completion would look like congestion");
    return 0;
}

/* The settings of [arbor] every job shares, checked (the plans apart):
 * scn_arbor_config's result with the rules only the scenario can name. */
int scn_arbor_config(const arb_scenario *sc, arb_sim_arbor_config *ac, arb_plan_config *pc,
                     char *err, size_t errlen)
{
    int rc = arbor_plan_config(sc, pc, err, errlen);
    if (rc < 0) return rc;
    arbor_sim_config(sc, ac);
    if (ac->timeout < ARB_EP_TIMER_MIN)
        return key_fail(sc, K_AR_TIMEOUT, err, errlen, ARB_EINVAL,
                        "below 1 us: no fabric loop is that short");
    if (ac->timeout_min && ac->timeout_min < ARB_EP_TIMER_MIN)
        return key_fail(sc, K_AR_TOMIN, err, errlen, ARB_EINVAL,
                        "below 1 us: no fabric loop is that short (0: from the fabric)");
    if (ac->timeout_min > ac->timeout)
        return key_fail(sc, K_AR_TOMIN, err, errlen, ARB_EINVAL,
                        "above arbor.timeout, the timers' ceiling");
    /* the controller's rules, on the fabric's figures (a channel's own
     * line rate and loop are filled in by the simulator) */
    arb_cc_config cc = ac->cc;
    if (ac->cc_kind == ARB_CC_DISABLED || ac->cc_kind == ARB_CC_FIXED || !cc.window)
        cc.window = ac->window ? ac->window : ARB_SIM_ARBOR_WINDOW_MIN; /* 0: at least that */
    cc.base_rtt = ac->cc_base_rtt ? ac->cc_base_rtt : ARB_CC_BASE_RTT_DEFAULT;
    const char *why = arb_cc_check(ac->cc_kind, &cc);
    if (why) {
        enum scn_key k = cc_key(why);
        const char *rule = strchr(why, ':');
        if (k == K_AR_SW_TARGET && !scn_u64(sc, K_AR_SW_TARGET)) /* derived from base_rtt */
            return key_fail(sc, K_AR_CC_BASERTT, err, errlen, ARB_EINVAL,
                            "Swift's base target, 1.5 x it, would be above 1 s");
        return key_fail(sc, k, err, errlen, ARB_EINVAL, rule ? rule + 2 : why);
    }
    if (ac->retry < ARB_EP_TIMER_MIN)
        return key_fail(sc, K_AR_RETRY, err, errlen, ARB_EINVAL,
                        "below 1 us: no fabric loop is that short");
    if (ac->retry_min && (ac->retry_min < ARB_EP_TIMER_MIN || ac->retry_min > ac->retry))
        return key_fail(sc, K_AR_RETRYMIN, err, errlen, ARB_EINVAL,
                        "must be 1 us .. arbor.retry (0: the timers' floor)");
    if (ac->payload % arb_dtype_size(pc->dtype))
        return key_fail(sc, K_AR_PAYLOAD, err, errlen, ARB_EINVAL,
                        "not a whole number of elements of the dtype");
    return 0;
}

static int arbor_setup(const arb_scenario *sc, arb_scenario_result *r, arb_topo *t, arb_sim *s,
                       arb_plan ***plans, uint32_t *n_plans, char *err, size_t errlen)
{
    char msg[512];
    uint32_t *rk = NULL, ranks = 0;
    struct layout l;
    memset(&l, 0, sizeof l);
    arb_plan_config pc;
    arb_sim_arbor_config ac;
    int rc = arbor_ranks(sc, r, &rk, &ranks, err, errlen);
    if (rc == 0) rc = arbor_layout(sc, ranks, &l, err, errlen);
    if (rc == 0) rc = arbor_plan_config(sc, &pc, err, errlen);
    if (rc == 0 && !(*plans = arb_calloc(l.jobs, sizeof **plans)))
        rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    for (uint32_t k = 0; rc == 0 && k < l.jobs; k++) {
        rc = arbor_plan(sc, t, &pc, rk, k, &l, &(*plans)[k], err, errlen);
        if (rc == 0) *n_plans = k + 1;
    }
    arb_free(rk);
    if (rc == 0) rc = scn_arbor_config(sc, &ac, &pc, err, errlen);
    if (rc == 0 && scn_enum(sc, K_AR_PARTITION) == 1) { /* static */
        ac.partitions = l.jobs;
        if (ac.slots < l.jobs) {
            snprintf(msg, sizeof msg,
                     "static: %u jobs need at least a slot each at every switch (arbor.slots = %u)",
                     l.jobs, ac.slots);
            rc = key_fail(sc, K_AR_PARTITION, err, errlen, ARB_EINVAL, msg);
        }
    }
    if (rc == 0 && *scn_str(sc, K_AR_FAIL)) {
        /* after the plans: their trees still use what fails here */
        rc = arb_topo_fail(t, scn_str(sc, K_AR_FAIL), msg, sizeof msg);
        if (rc < 0) rc = key_fail(sc, K_AR_FAIL, err, errlen, rc, msg);
    }
    for (uint32_t k = 0; rc == 0 && k < l.jobs; k++)
        if (arb_plan_hdr_len((*plans)[k]) > r->arb_hdr_len)
            r->arb_hdr_len = arb_plan_hdr_len((*plans)[k]);
    for (uint32_t k = 0; rc == 0 && k < l.jobs; k++) {
        ac.plan = (*plans)[k];
        ac.start = l.start[k];
        rc = timers_above_loop(sc, s, &ac, err, errlen);
        if (rc < 0) break;
        int job = arb_sim_arbor_add(s, &ac);
        if (job < 0) rc = arb_errf(err, errlen, job, "arbor: %s", arb_strerror(job));
    }
    layout_free(&l);
    return rc;
}
