/*
 * scn_run.h - one run of a scenario (struct scn_run) and its steps, private
 * to the scenario module. run.c drives the steps in order; each file below
 * holds one job of the run.
 */
#ifndef ARBOR_SCN_RUN_H
#define ARBOR_SCN_RUN_H

#include "scn_result.h"

#include "arbor/plan.h"

/* sampler.c: the samples' state between slices. */
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

/* One run of a scenario: its inputs, what it has built so far (NULL or
 * empty until built; run_end releases it all) and its result. Each step
 * (run.c and the files below) takes it one stage further and returns 0 or a negative ARB_E*
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

/* wlbuild.c: [workload]: the flows (with Arbor, only arbor.background's),
 * the keys a workload would ignore refused. */
int scn_run_workload(struct scn_run *run);
/* wlbuild.c: the workload's error rc, when it starts or later, as the
 * run's: a flow above the simulator's packets (ARB_ERANGE) blames the key
 * its size came from, with the limit (ARB_EINVAL); any other, the workload. */
int scn_workload_fail(struct scn_run *run, int rc);
/* sim_config.c: [transport], [switch] and the fabric's faults into run->cfg,
 * checked; and after the simulator is made, the timers it derived echoed
 * where the keys were left at auto (ARB_ENOMEM). */
int scn_run_sim_config(struct scn_run *run);
int scn_echo_timers(struct scn_run *run);
/* partition.c: a partitioned run (run->part): what it does not support
 * refused, then the fabric cut by subtree. */
int scn_run_partition(struct scn_run *run);
/* figures.c: the run's figures once it is over (flows, ports, ranks, jobs,
 * the background, the watch, the recovery). */
int scn_run_figures(struct scn_run *run);

/* sampler.c: the port classes (tier, up or down) of t and the queue
 * histograms (ARB_ENOMEM); one sample at t (ARB_ENOMEM). */
int scn_setup_classes(arb_scenario_result *r, const arb_topo *t, uint64_t queue,
                      struct sampler *sp);
int scn_sample(struct sampler *sp, arb_time t);
/* port_series.c: run.sample_ports, the ports with their own series. */
int scn_setup_port_series(const arb_scenario *sc, arb_scenario_result *r, const arb_topo *t,
                          struct sampler *sp, char *err, size_t errlen);

/* diagnose.c: a flow's sender gave up (transport.retry_limit): r->failed
 * with one line naming the first, how many did, and what failed in the
 * fabric (nothing when none did, or an engine's failure came first). */
void scn_describe_gave_up(const arb_scenario *sc, const struct scn_failat *fa, const arb_topo *t,
                          arb_scenario_result *r);
/* diagnose.c: an Arbor engine gave up: r->failed (or r->warned when every
 * rank was done) with one line naming the job, channel, what was lost, the
 * hosts that never answered and what failed in the fabric. */
void scn_describe_failure(const arb_scenario *sc, const struct scn_failat *fa, const arb_topo *t,
                          const arb_sim *s, arb_scenario_result *r);

/* arbor_jobs.c: the Arbor collective: its plans from [arbor] (one per job,
 * *n_plans of them made, freed by the caller even on error) and the group
 * from workload.ranks / workload.hosts, each job added to s. */
int scn_arbor_setup(const arb_scenario *sc, arb_scenario_result *r, arb_topo *t, arb_sim *s,
                    arb_plan ***plans, uint32_t *n_plans, char *err, size_t errlen);
/* arbor_config.c: the plan configuration of [arbor] (ranks and bytes apart). */
int scn_arbor_plan_config(const arb_scenario *sc, arb_plan_config *pc, char *err, size_t errlen);
/* cc_config.c: the responders' controller of [arbor] beside the ENGINE keys
 * (arbor.cc.rate as a spacing, arbor.cc.window) into ac (ac->payload set
 * first); the key a controller's rule names
 * ("timely.beta: ..." is arbor.cc.timely.beta; else arbor.cc). */
void scn_arbor_cc_config(const arb_scenario *sc, arb_sim_arbor_config *ac);
enum scn_key scn_cc_key(const char *why);

#endif
