/*
 * lab_run.h - what arbor lab's run (cmd_lab.c) hands its report
 * (lab_report.c): the [lab] keys, the job as the lab runs it, each rank's
 * record (arbor bench --record) and the figures made of them.
 */
#ifndef ARBOR_LAB_RUN_H
#define ARBOR_LAB_RUN_H

#include "arbor/plan.h"
#include "arbor/scenario.h"
#include "lab.h"
#include "lab_sample.h"

#include <stdint.h>

/* [lab]: the scenario's keys for this command (docs/lab.md). */
struct lab_opts {
    double scale; /* 0: auto */
    uint64_t iters, warmup;
    int check;
    arb_time deadline;
    const char *deadline_text;
    arb_time sample;  /* run.sample: the scenario's interval (0: none) */
    const char *spin; /* lab.spin: the ranks' ARBOR_SPIN, the switches' --spin */
    arb_time spin_ps; /* the same, parsed (after lab_spin_auto) */
    int spin_auto;    /* lab.spin = auto: chosen by the processes a core */
};

/* One rank's record (arbor bench --record). */
struct rank_rec {
    uint64_t *start, *end; /* ns, per timed call */
    uint32_t n_calls;
    uint64_t wrong, retries, spurious, credits, repair_credits, tx_pkts, rx_pkts, tx_bytes,
        rx_bytes;
    uint64_t window; /* the window of its last channel of more than one offset (0: none) */
    int have_end;
    char status[512];
};

/* What the run is: the scenario's workload as the lab runs it. */
struct lab_job {
    arb_coll coll;
    const char *dtype;
    uint64_t bytes;
    uint32_t ranks, root;
    double scale;
    uint64_t host_rate; /* the scenario's host link, bits/s */
    double loss;        /* fabric.loss */
    uint64_t queue;     /* switch.queue: each tbf's queue */
    char secret[40];
    char self[4096]; /* this arbor */
};

/* The figures of a finished run. */
struct lab_figs {
    double cct_mean, cct_p50, cct_min, cct_max; /* us */
    double *calls;                              /* cct of each call, us */
    double *done;                               /* each rank's mean done time, us */
    uint32_t n_calls;
    uint64_t wrong, retries, spurious, credits, repair_credits, drops;
    double window_mean; /* over the ranks that had such a channel (0: none) */
    double goodput_gbps, wall_s;
};

/* Read rank's record at path into rr (at most max_calls calls): 0, or -1
 * when it cannot be read. */
int lab_read_rec(const char *path, struct rank_rec *rr, uint64_t max_calls);

/* The figures of n ranks' records into F (its calls and done arrays
 * malloc'd, the caller's to free). Call i's CCT: the last rank's return
 * minus the first rank's start (one clock: CLOCK_MONOTONIC is the
 * machine's, in every namespace). */
void lab_figures(const struct rank_rec *rr, uint32_t n, const struct lab_job *j,
                 struct lab_figs *F);

/* The run as JSON (arbor-lab/1), malloc'd; failure the run's one line, or
 * NULL when it completed. NULL when out of memory. */
char *lab_report_json(const arb_scenario *sc, const char *file, const struct lab_opts *o,
                      const struct lab *L, const struct lab_job *j, const struct lab_figs *F,
                      const struct rank_rec *rr, const char *failure);

/*
 * With --csv PREFIX, arbor sim --csv's files for arbor plot: PREFIX-util.csv
 * and PREFIX-queue.csv (S's samples), PREFIX-flows.csv (its header: an Arbor
 * collective has no flows), and with ranks PREFIX-ranks.csv (job 0, each
 * rank's mean done time; empty cells when the run did not finish). 0, or
 * -1 with err naming the file that could not be written.
 */
int lab_report_csv(const char *prefix, const struct lab_job *j, const struct lab_figs *F,
                   const struct lab_sampler *S, int ranks, char *err, size_t elen);

/* The run's text summary on stdout. */
void lab_report_text(const struct lab *L, const struct lab_job *j, const struct lab_opts *o,
                     const struct lab_figs *F);

#endif
