/*
 * A scenario run's result: releasing it, and what the public API reads of it
 * (scenario.h). run.c and the files of its steps fill it; report.c writes it.
 */
#include "scn_result.h"

#include "base/alloc.h"

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
