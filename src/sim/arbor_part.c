/*
 * Arbor in a partitioned run (docs/partition.md; arbor_int.h). Every part
 * holds every job's engines and every switch's aggregators, but runs only
 * those of its own nodes: a host's engines in the host's part, a switch's
 * aggregator in the switch's. What the jobs count is then spread over the
 * parts, each event's figures in the part that ran it; this file merges
 * them: after each run (arbor_part_sync, from part.c's sync_end) what the
 * scenario runner decides on (the ranks done and the engines finished,
 * hence a job's done; the failure; the counters; the switches' live
 * slots), and on demand a job's whole figures (arbor_part_merge, from
 * arb_sim_arbor_result_get), so that every part reads what one process
 * would.
 */
#include "arbor_int.h"

#include <stddef.h>
#include <string.h>
#include "base/alloc.h"

/* Every part's done times into host->rank_done (a rank's time is set in
 * its host's part alone; the others hold ARB_TIME_NEVER), while some rank
 * is not done. */
static int merge_ranks(arb_sim *s, struct ajob *j)
{
    struct arbor_job *a = s->arb;
    uint32_t R = arb_plan_get_config(j->p)->n_ranks;
    if (j->g_ranks_done == R) return 0;
    if (a->cap_scratch < R) {
        arb_time *n = arb_realloc(a->scratch, (size_t)R * sizeof *n);
        if (!n) return ARB_ENOMEM;
        a->scratch = n;
        a->cap_scratch = R;
    }
    memcpy(a->scratch, j->host->rank_done, (size_t)R * sizeof *a->scratch);
    int rc = part_allmin(s, a->scratch, R);
    if (rc < 0) return rc;
    uint32_t n = 0;
    for (uint32_t r = 0; r < R; r++) {
        j->host->rank_done[r] = a->scratch[r];
        n += a->scratch[r] != ARB_TIME_NEVER;
    }
    j->g_ranks_done = n;
    return 0;
}

/* The first engine to give up over every part: the earliest in the local
 * order (time, then the event's target: one process stops at the first),
 * its record to every part. */
static int merge_failure(arb_sim *s, uint64_t t)
{
    struct arbor_job *a = s->arb;
    uint64_t h = a->fail_at == t ? a->fail_event : UINT64_MAX;
    int rc = part_allmin(s, &h, 1);
    if (rc < 0) return rc;
    int mine = a->fail_at == t && a->fail_event == h;
    uint64_t w[(sizeof(arb_sim_arbor_failure) + 7) / 8];
    memset(w, 0xff, sizeof w);
    if (mine) {
        memset(w, 0, sizeof w);
        memcpy(w, &a->failure, sizeof a->failure);
    }
    rc = part_allmin(s, w, sizeof w / sizeof *w); /* the minimum of one record and all ones */
    if (rc < 0) return rc;
    memcpy(&a->failure, w, sizeof a->failure);
    a->fail_at = t;
    a->fail_event = (uint32_t)h;
    return 0;
}

int arb_sim_arbor_failure_point(const arb_sim *s, arb_time *t, uint32_t *event)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a || !s->part || a->fail_at == ARB_TIME_NEVER || s->in_run) return ARB_ENOENT;
    *t = a->fail_at;
    *event = a->fail_event;
    return 0;
}

int arbor_part_sync(arb_sim *s)
{
    struct arbor_job *a = s->arb;
    uint32_t J = a->n_jobs;
    int rc = 0;
    for (uint32_t x = 0; x < J && rc == 0; x++)
        rc = merge_ranks(s, a->jobs[x]);
    if (rc < 0) return rc;
    /* the live slots of this part's switches: their sum, the most at one */
    uint32_t live, most;
    arbor_slots_live(s, &live, &most);
    uint64_t *v = arb_malloc(((size_t)J + 4) * sizeof *v);
    if (!v) return ARB_ENOMEM;
    for (uint32_t x = 0; x < J; x++)
        v[x] = a->jobs[x]->host->eps_finished;
    v[J] = a->committed_bytes;
    v[J + 1] = a->resent_bytes;
    v[J + 2] = a->resends;
    v[J + 3] = live;
    rc = part_allsum(s, v, (size_t)J + 4);
    if (rc == 0) {
        for (uint32_t x = 0; x < J; x++)
            a->jobs[x]->g_eps_finished = (uint32_t)v[x];
        a->g_committed_bytes = v[J];
        a->g_resent_bytes = v[J + 1];
        a->g_resends = v[J + 2];
        a->g_live = (uint32_t)v[J + 3];
        uint64_t mn[3] = {UINT64_MAX - most, a->fail_at, a->watch_hit};
        rc = part_allmin(s, mn, 3);
        a->g_most = (uint32_t)(UINT64_MAX - mn[0]);
        a->g_watch_hit = mn[2];
        if (rc == 0 && mn[1] != ARB_TIME_NEVER) rc = merge_failure(s, mn[1]);
    }
    arb_free(v);
    return rc;
}

/* The figures summed over the parts, and those whose maximum is the whole's. */
#define F(x) offsetof(arb_sim_arbor_result, x)
static const size_t sums[] = {F(commits),
                              F(repair_commits),
                              F(repair_credits),
                              F(timeouts),
                              F(agg_miss),
                              F(late_masters),
                              F(tail_replays),
                              F(retries),
                              F(losses_order),
                              F(losses_timer),
                              F(spurious),
                              F(bypass),
                              F(deaths),
                              F(probes),
                              F(revivals),
                              F(cc_increases),
                              F(cc_decreases),
                              F(cc_ce_samples),
                              F(cc_stalls),
                              F(credits),
                              F(requests),
                              F(results),
                              F(registers),
                              F(ends),
                              F(agg_inputs),
                              F(agg_aggregates),
                              F(agg_drops),
                              F(agg_passthrough),
                              F(agg_allocations),
                              F(agg_reclaimed),
                              F(agg_adoptions),
                              F(agg_replays),
                              F(agg_held),
                              F(recredits),
                              F(slot_time),
                              F(partial_slot_time),
                              F(copies),
                              F(checked),
                              F(wrong),
                              F(wire_checks),
                              F(wire_errors),
                              F(inv_dup_commit),
                              F(inv_count),
                              F(inv_agg_check),
                              F(inv_missing),
                              F(inv_early),
                              F(dead_subchannels),
                              F(pkts),
                              F(wire_bytes),
                              F(tier_up_bytes),
                              F(tier_up_bytes) + 8,
                              F(tier_up_bytes) + 16,
                              F(tier_up_bytes) + 24,
                              F(tier_down_bytes),
                              F(tier_down_bytes) + 8,
                              F(tier_down_bytes) + 16,
                              F(tier_down_bytes) + 24};
#undef F
#define N_SUMS (sizeof sums / sizeof *sums)
/* A field added to the figures must be merged here (summed, a maximum, or
 * derived after the merge, in arbor_check.c): this fails until it is. */
#if defined(__LP64__)
_Static_assert(sizeof(arb_sim_arbor_result) == 584, "arbor_part_merge: a new figure to merge");
#endif
#define N_EXTRA_MAX 8

int arbor_part_merge(const arb_sim *s, arb_sim_arbor_result *r, uint64_t *extra, uint32_t n_extra)
{
    _Static_assert(sizeof(r->tier_up_bytes[0]) == 8 && sizeof(r->slot_time) == 8 &&
                       sizeof(r->commits) == 8,
                   "the summed figures are 64-bit");
    if (!s->part) return 0;
    if (n_extra > N_EXTRA_MAX) return ARB_EINVAL;
    uint64_t v[N_SUMS + N_EXTRA_MAX];
    unsigned char *base = (unsigned char *)r;
    for (size_t k = 0; k < N_SUMS; k++)
        memcpy(&v[k], base + sums[k], 8);
    for (uint32_t k = 0; k < n_extra; k++)
        v[N_SUMS + k] = extra[k];
    int rc = part_allsum(s, v, N_SUMS + n_extra);
    if (rc < 0) return rc;
    for (size_t k = 0; k < N_SUMS; k++)
        memcpy(base + sums[k], &v[k], 8);
    for (uint32_t k = 0; k < n_extra; k++)
        extra[k] = v[N_SUMS + k];
    uint64_t mx[3] = {UINT64_MAX - r->rtt_max, UINT64_MAX - r->peak_live_slots,
                      UINT64_MAX - r->peak_job_slots};
    rc = part_allmin(s, mx, 3);
    if (rc < 0) return rc;
    r->rtt_max = UINT64_MAX - mx[0];
    r->peak_live_slots = (uint32_t)(UINT64_MAX - mx[1]);
    r->peak_job_slots = (uint32_t)(UINT64_MAX - mx[2]);
    return 0;
}

int arbor_part_conservation(const arb_sim *s, int64_t *bal, uint32_t n_nodes, uint64_t *bad)
{
    int rc = part_allsum(s, (uint64_t *)(void *)bal, n_nodes); /* two's complement sums */
    if (rc < 0) return rc;
    *bad = 0;
    for (uint32_t n = 0; n < n_nodes; n++)
        *bad += bal[n] != 0;
    return 0;
}
