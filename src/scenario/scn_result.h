/*
 * scn_result.h - a scenario run's result (arb_scenario_result), private to
 * the scenario module: run.c and its steps fill it, report.c writes it as
 * JSON and CSV.
 */
#ifndef ARBOR_SCN_RESULT_H
#define ARBOR_SCN_RESULT_H

#include "scn_int.h"

#define MAX_CLASSES (2 * ARB_TOPO_MAX_HEIGHT)

/* Port classes: per tier, up (toward the top) and down. */
struct pclass {
    char name[24];    /* "tier0_up" */
    char label[40];   /* "host->leaf" */
    uint32_t ports;   /* live ports */
    double rate_bits; /* summed rates of the live ports */
    uint32_t max_q;
    double sum_q;
    uint64_t n_q;
    uint64_t *hist; /* queue samples: bucket 0 empty, b: ((b-1)w, bw] */
    uint32_t n_hist;
    double util_mean, util_max;
};

struct flowrec {
    uint32_t src, dst;
    uint64_t bytes;
    arb_time start, finish;
    uint64_t retx_bytes;
    uint32_t qp;
    uint16_t sport;
    arb_time ideal;   /* alone on an idle fabric (flow_ideal) */
    arb_time gave_up; /* its sender gave up (transport.retry_limit); ARB_TIME_NEVER: not */
};

struct arb_scenario_result {
    char *echo[K_COUNT];
    char *file;
    char topo_spec[128], route_spec[96];
    uint32_t hosts, switches, links;
    unsigned height;
    uint32_t mtu, hdr_bytes; /* the transport's packets, for the flows' ideal times */
    arb_sim_stats st;
    arb_workload_result wr;
    arb_time active; /* the last event that did something (sim_time_us,
                        arb_scenario_result_time) */
    int stopped;     /* run.stop came first */
    int failed;      /* an engine or a flow gave up: the run cannot finish (failure says what) */
    int warned;      /* an engine gave up after every rank was done (failure says what) */
    char failure[768];
    int is_arbor;   /* workload.kind = arbor: `ar` holds the collective's figures */
    int iter_arbor; /* an iteration over Arbor (workload.backend): `ar` holds its jobs' whole */
    uint32_t iter_jobs;
    arb_sim_arbor_result ar;
    arb_sim_arbor_result *ar_jobs; /* arbor.jobs > 1 or arbor.calls > 1: each job's figures */
    uint32_t n_ar_jobs;
    /* arbor.calls: each rank's calls (a job each, the next one entered
     * host_call after its previous one is done), the first `warmup` not
     * timed; with calls > 1, `ar` holds the timed calls' mean cct */
    uint32_t calls, warmup;
    arb_time host_call;
    uint32_t arb_hdr_len;
    int has_bg;               /* arbor.background: transport flows beside the collective */
    arb_workload_result bg;   /* their workload's figures */
    struct scn_watch *watch;  /* run.watch, or NULL */
    struct scn_recovery *rec; /* fault events' recovery (fail_at, restore_at, reboot_at), or NULL */
    struct flowrec *flows;
    uint32_t n_flows;
    arb_iter_rank *iter; /* workload.kind = iteration: per rank */
    uint32_t n_iter;
    uint64_t fct_n;
    double fct_mean;
    arb_time fct_p50, fct_p99, fct_max;
    uint64_t timeouts;
    uint32_t reorder_peak;
    int has_order; /* run.qp_order */
    uint64_t order_ooo, order_pkts;
    unsigned n_cls;
    struct pclass cls[MAX_CLASSES];
    uint32_t bucket; /* queue histogram bucket width */
    /* time series: a row per row_every samples (1 until the rows reach
     * ROWS_MAX; then adjacent rows merge and row_every doubles), so its
     * memory does not grow with the run's length */
    uint64_t n_samp; /* samples taken */
    uint32_t n_rows, cap_rows, row_every, pend_n;
    arb_time *samp_t;
    double *samp_util;  /* n_rows x n_cls */
    double *samp_qmean; /* n_rows x n_cls */
    uint32_t *samp_qmax;
    uint32_t *samp_slots; /* n_rows x 2: live slots summed over switches, most in one (Arbor) */
    /* run.sample_ports: the ports with their own series, and per row each
     * one's utilisation and queue bytes (n_rows x n_sp) */
    uint32_t *sp_ports, n_sp;
    char (*sp_name)[48];
    double *samp_port_util;
    uint32_t *samp_port_q;
    /* the row in progress: sums weighted by each sample's interval, the
     * last sample's figures, maxima */
    double pend_util[MAX_CLASSES], pend_qmean[MAX_CLASSES], pend_secs, pend_live, last_live;
    double last_util[MAX_CLASSES], last_qmean[MAX_CLASSES];
    uint32_t pend_qmax[MAX_CLASSES], pend_most;
    double *pend_port_util, *last_port_util; /* n_sp each */
    uint32_t *pend_port_q;                   /* n_sp: the largest */
    arb_time pend_t;                         /* its last sample */
    /* Arbor: every job's ranks, job-major: host and done time */
    uint32_t n_ar_ranks;
    uint32_t *ar_rank_job, *ar_rank_host;
    arb_time *ar_rank_done;
    /* a partitioned run: this part's figures */
    int has_part;
    arb_sim_part_info part;
};

/* sampler.c: the time series' row in progress, as it will be written. */
void scn_pending_row(const arb_scenario_result *r, double *util, double *qmean, uint32_t *live,
                     double *port_util);

#endif
