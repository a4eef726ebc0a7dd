/*
 * The Arbor collective of workload.kind = arbor: its ranks (workload.ranks,
 * workload.hosts), its jobs (arbor.jobs and the per-job keys), a plan for
 * each, and each job added to the simulator.
 */
#include "scn_run.h"

#include "arbor/plan.h"

#include <stdio.h>
#include <string.h>
#include "base/alloc.h"

/* Too many or too few ranks for a group: blame what the user gave, the
 * ranks, the host list or else the fabric (the ranks' default is every host). */
static int arbor_ranks_fail(const arb_scenario *sc, uint64_t ranks, uint32_t avail, char *err,
                            size_t errlen)
{
    char msg[512];
    if (sc->v[K_WL_RANKS].file) {
        snprintf(msg, sizeof msg, "%llu ranks: a group has 2..%d, and %u hosts are available",
                 (unsigned long long)ranks, ARB_PLAN_MAX_RANKS, avail);
        return scn_key_fail(sc, K_WL_RANKS, err, errlen, ARB_EINVAL, msg);
    }
    if (*scn_str(sc, K_WL_HOSTS)) {
        snprintf(msg, sizeof msg,
                 "%u hosts listed: an Arbor group has 2..%d ranks (workload.ranks, by default "
                 "every listed host)",
                 avail, ARB_PLAN_MAX_RANKS);
        return scn_key_fail(sc, K_WL_HOSTS, err, errlen, ARB_EINVAL, msg);
    }
    snprintf(msg, sizeof msg,
             "'%s' has %u hosts, and workload.ranks (default 0) puts a rank on every one: an Arbor "
             "group has 2..%d ranks (set workload.ranks or workload.hosts)",
             scn_str(sc, K_FAB_TOPO), avail, ARB_PLAN_MAX_RANKS);
    return scn_key_fail(sc, K_FAB_TOPO, err, errlen, ARB_EINVAL, msg);
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
        if (rc < 0) return scn_key_fail(sc, K_WL_HOSTS, err, errlen, rc, msg);
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
        return scn_key_fail(sc, k, err, errlen, ARB_EINVAL, msg);
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
            rc = scn_key_fail(sc, K_AR_JOBS, err, errlen, ARB_EINVAL, msg);
        } else if (c < 2 || c > ARB_PLAN_MAX_RANKS) {
            snprintf(msg, sizeof msg, "job %u: %llu ranks (a job has 2..%d)", k,
                     (unsigned long long)c, ARB_PLAN_MAX_RANKS);
            rc = scn_key_fail(sc, K_AR_JOBRANKS, err, errlen, ARB_EINVAL, msg);
        } else if (size && size[k] == 0) {
            snprintf(msg, sizeof msg, "job %u: a buffer of 0 bytes", k);
            rc = scn_key_fail(sc, K_AR_JOBSIZE, err, errlen, ARB_EINVAL, msg);
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
        rc = scn_key_fail(sc, K_AR_JOBRANKS, err, errlen, ARB_EINVAL, msg);
    }
    arb_free(cnt);
    arb_free(size);
    arb_free(start);
    return rc;
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

/* A ReduceScatter or AllGather splits its buffer into a block per rank:
 * fewer elements than ranks would leave some ranks none. 0, or
 * ARB_EINVAL with the rule in msg (its "bytes" blames the size), as
 * arbor bench refuses such a size. */
static int per_rank_block(const arb_plan_config *pc, char *msg, size_t len)
{
    if (pc->coll != ARB_COLL_REDUCESCATTER && pc->coll != ARB_COLL_ALLGATHER) return 0;
    size_t es = arb_dtype_size(pc->dtype);
    if (pc->bytes / es >= pc->n_ranks) return 0;
    snprintf(msg, len,
             "%s of %llu bytes over %u ranks: below one %s element per rank (want %llu B or more)",
             arb_coll_name(pc->coll), (unsigned long long)pc->bytes, pc->n_ranks,
             arb_dtype_name(pc->dtype), (unsigned long long)(es * pc->n_ranks));
    return ARB_EINVAL;
}

/* Each channel's share of the buffer is one message of the engines: at
 * most ARB_EP_MAX_OFFSETS offsets of arbor.payload. 0, or ARB_EINVAL with
 * the rule in msg (its "bytes" blames the size). */
static int channel_offsets(const arb_plan *p, uint32_t payload, char *msg, size_t len)
{
    for (uint32_t c = 0; c < arb_plan_n_channels(p); c++) {
        const arb_plan_channel *ch = arb_plan_get_channel(p, c);
        uint64_t n = (ch->hi - ch->lo + payload - 1) / payload;
        if (n <= ARB_EP_MAX_OFFSETS) continue;
        snprintf(msg, len,
                 "%llu bytes over %u channels: channel %u's share, %llu bytes, is %llu offsets "
                 "of arbor.payload (%u B), above the 2^23 of a channel's message (%llu bytes)",
                 (unsigned long long)arb_plan_get_config(p)->bytes, arb_plan_n_channels(p), c,
                 (unsigned long long)(ch->hi - ch->lo), (unsigned long long)n, payload,
                 (unsigned long long)ARB_EP_MAX_OFFSETS * payload);
        return ARB_EINVAL;
    }
    return 0;
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
    int rc = per_rank_block(&pc, msg, sizeof msg);
    if (rc == 0) rc = arb_topo_plan(plan, t, &pc, msg, sizeof msg);
    if (rc == 0) rc = channel_offsets(*plan, (uint32_t)scn_u64(sc, K_AR_PAYLOAD), msg, sizeof msg);
    if (rc == 0) return 0;
    if (*plan) { /* (a plan whose channels the engines cannot carry) */
        arb_plan_free(*plan);
        *plan = NULL;
    }
    enum scn_key blame = arbor_plan_blame(sc, msg);
    if (jobs > 1)
        snprintf(full, sizeof full, "job %u: %s", k, msg);
    else
        snprintf(full, sizeof full, "%s", msg);
    /* what the scenario asks is impossible: a usage error, not a failed run */
    return scn_key_fail(sc, blame, err, errlen, rc == ARB_ENOMEM ? rc : ARB_EINVAL, full);
}

/* The distinct trees of a channel of plan p: its subchannels' roots
 * (subchannel s of channel c is rooted at candidate root c + s mod the
 * fabric's candidates, so channel 0's say how many there are). */
static uint32_t distinct_trees(const arb_plan *p)
{
    const arb_plan_channel *ch = arb_plan_get_channel(p, 0);
    uint32_t nsub = arb_plan_get_config(p)->subchannels, n = 0;
    for (uint32_t s = 0; s < nsub; s++) {
        uint32_t root = arb_plan_get_tree(p, ch->first_tree + s)->root, seen = 0;
        for (uint32_t q = 0; q < s && !seen; q++)
            seen = arb_plan_get_tree(p, ch->first_tree + q)->root == root;
        n += !seen;
    }
    return n;
}

/* arbor.subchannels above the distinct trees the fabric offers a job's
 * group: legal, but the subchannels past them repeat a tree's links; one
 * warning line, for the job with the fewest. */
static void subchannels_warn(const arb_scenario *sc, arb_plan *const *plans, uint32_t jobs)
{
    uint32_t nsub = (uint32_t)scn_u64(sc, K_AR_SUBCH), fewest = nsub, job = 0;
    for (uint32_t k = 0; k < jobs && nsub > 1; k++) {
        uint32_t n = distinct_trees(plans[k]);
        if (n < fewest) {
            fewest = n;
            job = k;
        }
    }
    if (fewest == nsub) return;
    char where[160], pre[32] = "";
    scn_where(sc, K_AR_SUBCH, where, sizeof where);
    if (jobs > 1) snprintf(pre, sizeof pre, "job %u: ", job);
    arb_log(&sc->log, ARB_LOG_WARN,
            "%s: %s%u subchannels, but the fabric offers the group %u distinct tree%s a channel "
            "(%u candidate root%s): subchannel s takes the links of subchannel s - %u",
            where, pre, nsub, fewest, fewest == 1 ? "" : "s", fewest, fewest == 1 ? "" : "s",
            fewest);
}

/* An iteration's Arbor collectives (workload.backend = arbor): the same
 * warning, for the group of all the trace's hosts (a plan of theirs made
 * for it alone; its groups of fewer hosts may offer fewer trees). */
void scn_arbor_warn_subchannels(const arb_scenario *sc, const arb_topo *t,
                                const arb_plan_config *base, const uint32_t *hosts, uint32_t n)
{
    if (scn_u64(sc, K_AR_SUBCH) < 2 || n < 2) return;
    uint32_t *all = NULL; /* no host list: host r is rank r */
    if (!hosts && !(hosts = all = arb_calloc(n, sizeof *all))) return;
    for (uint32_t r = 0; all && r < n; r++)
        all[r] = r;
    arb_plan_config pc = *base;
    pc.coll = ARB_COLL_ALLREDUCE;
    pc.ranks = hosts;
    pc.n_ranks = n;
    pc.bytes = (uint64_t)n * arb_dtype_size(pc.dtype);
    arb_plan *p = NULL;
    char msg[256];
    if (arb_topo_plan(&p, t, &pc, msg, sizeof msg) == 0) subchannels_warn(sc, &p, 1);
    arb_plan_free(p);
    arb_free(all);
}

/* A timer ceiling below the fabric's loop cannot work: no completion can
 * come before it, so every credit would be presumed lost. */
static int timers_above_loop(const arb_scenario *sc, const arb_sim *s,
                             const arb_sim_arbor_config *ac, char *err, size_t errlen)
{
    arb_time loop = arb_sim_arbor_loop(s, ac->plan, ac->ep.payload);
    char why[128];
    snprintf(why, sizeof why, "below the fabric's loop (%.3f us here): no answer can come sooner",
             (double)loop / ARB_PS_PER_US);
    if (ac->ep.timeout < loop) return scn_key_fail(sc, K_AR_TIMEOUT, err, errlen, ARB_EINVAL, why);
    if (ac->ep.retry < loop) return scn_key_fail(sc, K_AR_RETRY, err, errlen, ARB_EINVAL, why);
    /* a controller's base loop below the fabric's: every sample looks
     * congested, and a delay-based controller starves the channel */
    if (ac->cc_base_rtt && ac->cc_base_rtt < loop)
        return scn_key_fail(sc, K_AR_CC_BASERTT, err, errlen, ARB_EINVAL,
                            "below the fabric's loop: every completion would look like congestion");
    return 0;
}

/* arbor.calls: rank `rank` is done with call `job`; its next call starts
 * arbor.host_call later (ctx: the result, which holds both). */
static void next_call(void *ctx, arb_sim *s, int job, uint32_t rank, arb_time now)
{
    const arb_scenario_result *r = ctx;
    if ((uint32_t)job + 1 < r->calls)
        (void)arb_sim_arbor_enter(s, job + 1, rank, now + r->host_call);
}

/* arbor.calls and arbor.warmup: one job, at least one timed call. */
static int calls_check(const arb_scenario *sc, arb_scenario_result *r, const struct layout *l,
                       char *err, size_t errlen)
{
    r->calls = (uint32_t)scn_u64(sc, K_AR_CALLS);
    r->warmup = (uint32_t)scn_u64(sc, K_AR_WARMUP);
    r->host_call = scn_u64(sc, K_AR_HCALL);
    if (r->calls > 1 && l->jobs > 1)
        return scn_key_fail(sc, K_AR_CALLS, err, errlen, ARB_EINVAL,
                            "repeated calls of one job: arbor.jobs must be 1");
    if (r->warmup >= r->calls)
        return scn_key_fail(sc, K_AR_WARMUP, err, errlen, ARB_EINVAL,
                            "leaves no timed call (it must be below arbor.calls)");
    return 0;
}

/* Add the job of plan p, and with arbor.calls its later calls (deferred:
 * each rank enters call k + 1 from its done of call k, next_call). */
static int add_calls(arb_sim *s, arb_scenario_result *r, arb_sim_arbor_config *ac, char *err,
                     size_t errlen)
{
    ac->start += r->host_call;
    if (r->calls > 1) {
        ac->on_rank_done = next_call;
        ac->rank_ctx = r;
    }
    for (uint32_t k = 0; k < r->calls; k++) {
        ac->deferred = k > 0;
        int job = arb_sim_arbor_add(s, ac);
        if (job < 0) return arb_errf(err, errlen, job, "arbor: %s", arb_strerror(job));
    }
    return 0;
}

/* The Arbor collective: its plan from [arbor] and the group from
 * workload.ranks / workload.hosts. */
int scn_arbor_setup(const arb_scenario *sc, arb_scenario_result *r, arb_topo *t, arb_sim *s,
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
    if (rc == 0) rc = calls_check(sc, r, &l, err, errlen);
    if (rc == 0) rc = scn_arbor_plan_config(sc, &pc, err, errlen);
    if (rc == 0 && !(*plans = arb_calloc(l.jobs, sizeof **plans)))
        rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    for (uint32_t k = 0; rc == 0 && k < l.jobs; k++) {
        rc = arbor_plan(sc, t, &pc, rk, k, &l, &(*plans)[k], err, errlen);
        if (rc == 0) *n_plans = k + 1;
    }
    arb_free(rk);
    if (rc == 0) subchannels_warn(sc, *plans, l.jobs);
    if (rc == 0) rc = scn_arbor_config(sc, &ac, &pc, err, errlen);
    if (rc == 0 && scn_choice(sc, K_AR_PARTITION)) { /* static */
        ac.partitions = l.jobs;
        if (ac.slots < l.jobs) {
            snprintf(msg, sizeof msg,
                     "static: %u jobs need at least a slot each at every switch (arbor.slots = %u)",
                     l.jobs, ac.slots);
            rc = scn_key_fail(sc, K_AR_PARTITION, err, errlen, ARB_EINVAL, msg);
        }
    }
    if (rc == 0 && *scn_str(sc, K_AR_FAIL)) {
        /* after the plans: their trees still use what fails here */
        rc = arb_topo_fail(t, scn_str(sc, K_AR_FAIL), msg, sizeof msg);
        if (rc < 0) rc = scn_key_fail(sc, K_AR_FAIL, err, errlen, rc, msg);
    }
    for (uint32_t k = 0; rc == 0 && k < l.jobs; k++)
        if (arb_plan_hdr_len((*plans)[k]) > r->arb_hdr_len)
            r->arb_hdr_len = arb_plan_hdr_len((*plans)[k]);
    for (uint32_t k = 0; rc == 0 && k < l.jobs; k++) {
        ac.plan = (*plans)[k];
        ac.start = l.start[k];
        rc = timers_above_loop(sc, s, &ac, err, errlen);
        if (rc == 0) rc = add_calls(s, r, &ac, err, errlen);
    }
    layout_free(&l);
    return rc;
}
