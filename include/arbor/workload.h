/*
 * arbor/workload.h - what the simulated hosts send: flows from a traffic
 * pattern, incast, traces with start times (our CSV and htsim's connection
 * matrix), and ring AllReduce as NCCL runs it.
 *
 * A workload drives a simulator (sim.h) through arb_sim_add_flow and the
 * flow-completion callback: make the workload, make the simulator with
 * cfg.on_flow_done = arb_workload_on_flow_done, cfg.on_flow_sent =
 * arb_workload_on_flow_sent and both contexts = the workload, call
 * arb_workload_start, then arb_sim_run. The workload must be the only one
 * adding flows to that simulator.
 *
 * Static workloads (patterns, incast, traces) add their flows at start;
 * a pattern of several phases (shift:all) runs them one after another,
 * each phase starting when every flow of the previous one has finished.
 * Each flow is split into `qps` flows (one per QP) of equal size
 * (the first ones take the remainder), each with its own source port.
 *
 * Ring AllReduce (NCCL's ring algorithm): ranks r = 0..N-1 on the given
 * hosts; rank r sends to rank r+1 (mod N). The buffer of S bytes is cut
 * into N chunks (chunk c has floor(S/N) bytes, plus one for c < S mod N).
 * There are 2(N-1) steps, N-1 of reduce-scatter and N-1 of all-gather; at
 * step k rank r sends chunk (r - k) mod N. With `chunk` > 0 every chunk
 * is cut into P = ceil(ceil(S/N) / chunk) slices of near-equal size, and
 * the message (step k, slice j) of rank r may start once rank r has
 * received message (step k-1, slice j) from rank r-1: the pipeline NCCL
 * runs. Messages of a rank are posted in order (step, slice).
 * Each rank has one connection to its right neighbour made of `qps` QPs,
 * each with its own UDP source port and QP number:
 *   split  every message is cut into qps parts, one per QP (Meta's
 *          "split" discipline); the message has arrived when all have;
 *   rr     whole messages go round robin over the QPs (message m on QP
 *          m mod qps);
 *   hpn    HPN's host side: qps connections (one QP each) whose source
 *          ports take disjoint paths (arb_workload_route_sports), and each
 *          whole message, when posted, goes to the connection with the
 *          fewest posted-but-undelivered bytes (ties: the next one after
 *          the last chosen).
 * A QP carries its messages in order: its next message enters the
 * simulator when the previous one has sent its last packet (with
 * arb_workload_on_flow_sent installed as the simulator's on_flow_sent;
 * otherwise when the previous one has been delivered). A message counts
 * as received once it and every earlier message of its QP are delivered.
 * A rank is done when it has received all 2(N-1)P messages; the
 * collective's completion time (CCT) is the last rank's, measured from the
 * start. nccl-tests conventions: algbw = S / CCT, busbw = algbw x 2(N-1)/N
 * (reported here in Gb/s; nccl-tests prints GB/s, 8 times less).
 *
 * Trace formats (one flow per line; `#` starts a comment line; blank lines
 * are skipped):
 *   CSV     header `src,dst,bytes,start_us[,sport[,qp]]`, then rows of
 *           host indices, bytes (> 0), start in microseconds (decimal
 *           fraction allowed, picosecond resolution), an optional UDP source
 *           port (1..65535) and QP number (1..2^24-1), each drawn when
 *           absent or empty. Flows with the same hosts, port and QP are
 *           messages of one QP (run.qp_order counts their order).
 *   htsim   htsim's connection matrix: `Nodes N`, `Connections C`, then C
 *           lines `SRC->DST id I start T size BYTES` (T in microseconds).
 *           N must not exceed the fabric's hosts; C must match the lines.
 * A malformed file is ARB_EPARSE with one line "PATH:LINE: FIELD: what".
 *
 * Pure: no clock, no I/O except reading trace files at creation, no
 * printing; randomness (source ports, QP numbers) from cfg->seed only.
 */
#ifndef ARBOR_WORKLOAD_H
#define ARBOR_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"
#include "arbor/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum arb_qp_mode { ARB_QP_SPLIT = 0, ARB_QP_RR = 1, ARB_QP_HPN = 2 } arb_qp_mode;

/* "split", "rr", "hpn"; NULL outside the enum. */
const char *arb_qp_mode_name(int m);
/* Parse "split", "rr" or "hpn"; ARB_ENOENT otherwise. */
int arb_qp_mode_parse(const char *name);

typedef enum arb_workload_kind {
    ARB_WL_FLOWS = 0,    /* a given list of flows */
    ARB_WL_PATTERN = 1,  /* a traffic.h pattern */
    ARB_WL_INCAST = 2,   /* many senders to one receiver */
    ARB_WL_TRACE = 3,    /* CSV trace */
    ARB_WL_HTSIM = 4,    /* htsim connection matrix */
    ARB_WL_ALLREDUCE = 5 /* ring AllReduce */
} arb_workload_kind;

/* "flows", "pattern", "incast", "trace", "htsim", "ring_allreduce". */
const char *arb_workload_kind_name(int k);

typedef struct arb_workload_config {
    uint64_t seed;       /* source ports and QP numbers (default 1) */
    uint32_t qps;        /* QPs per connection (default 1) */
    arb_qp_mode qp_mode; /* ring AllReduce only (default split) */
    uint16_t sport_lo;   /* source ports are drawn from [sport_lo, sport_hi] */
    uint16_t sport_hi;   /* (default 49152..65535) */
    int shared_sport;    /* 1: the QPs of a connection share its first QP's source
                            port and differ only in the QP number (NICs that do so;
                            E-ECMP tells them apart, ECMP cannot). Not with hpn. */
} arb_workload_config;

void arb_workload_config_default(arb_workload_config *cfg);

/* One flow of a static workload; sport 0 and qp 0 mean "draw one". */
typedef struct arb_wl_flow {
    uint32_t src, dst;
    uint64_t bytes;
    arb_time start;
    uint16_t sport;
    uint32_t qp; /* destination QP number (24 bits) */
} arb_wl_flow;

typedef struct arb_workload arb_workload;

/*
 * Constructors. n_hosts is the fabric's host count: every host index must
 * be below it. cfg may be NULL for the defaults. On error *out is NULL and
 * err (when not NULL) holds one line. Errors: ARB_EINVAL (a host out of
 * range, src == dst, 0 bytes, qps 0 or above 65535, fewer than 2 ranks, a
 * rank host twice, a buffer smaller than ranks x slices), ARB_EPARSE (a
 * pattern spec or a trace line), ARB_EIO (a file that cannot be read),
 * ARB_ENOMEM.
 */
int arb_workload_new_flows(arb_workload **out, const arb_wl_flow *flows, size_t n, uint32_t n_hosts,
                           const arb_workload_config *cfg, char *err, size_t errlen);

/* Every pair of traffic.h `spec` sends `bytes` from `start`. */
int arb_workload_new_pattern(arb_workload **out, const char *spec, uint32_t n_hosts, uint64_t bytes,
                             arb_time start, const arb_workload_config *cfg, char *err,
                             size_t errlen);

/* `senders` hosts (receiver+1, receiver+2, ... mod n_hosts) each send
 * `bytes` to `receiver` from `start`. */
int arb_workload_new_incast(arb_workload **out, uint32_t n_hosts, uint32_t receiver,
                            uint32_t senders, uint64_t bytes, arb_time start,
                            const arb_workload_config *cfg, char *err, size_t errlen);

/* A trace file (ARB_WL_TRACE: CSV, ARB_WL_HTSIM: connection matrix). */
int arb_workload_new_file(arb_workload **out, arb_workload_kind kind, const char *path,
                          uint32_t n_hosts, const arb_workload_config *cfg, char *err,
                          size_t errlen);

/* The same from text in memory; `name` stands for the path in messages. */
int arb_workload_parse(arb_workload **out, arb_workload_kind kind, const char *text,
                       const char *name, uint32_t n_hosts, const arb_workload_config *cfg,
                       char *err, size_t errlen);

typedef struct arb_allreduce_config {
    const uint32_t *hosts; /* host of rank r; NULL: rank r on host r */
    uint32_t ranks;        /* N >= 2 */
    uint64_t bytes;        /* S, the buffer each rank reduces */
    uint64_t chunk;        /* pipeline slice bytes; 0: one message per step */
    arb_time start;
} arb_allreduce_config;

int arb_workload_new_allreduce(arb_workload **out, const arb_allreduce_config *ar, uint32_t n_hosts,
                               const arb_workload_config *cfg, char *err, size_t errlen);

/* NULL is ignored. */
void arb_workload_free(arb_workload *w);

arb_workload_kind arb_workload_get_kind(const arb_workload *w);

/*
 * Add the first flows to s (made with this workload's callback). Call once.
 * Errors: those of arb_sim_add_flow; ARB_ESTATE when called twice.
 */
int arb_workload_start(arb_workload *w, arb_sim *s);

/* The simulator's arb_sim_done_fn; ctx is the workload. An error inside
 * (no memory) is kept for arb_workload_error. */
void arb_workload_on_flow_done(void *ctx, arb_sim *s, uint32_t flow, arb_time now);

/*
 * HPN (qp_mode hpn, ring AllReduce): give every rank's qps connections the
 * source ports arb_route_disjoint_sports finds for its pair over `r`, the
 * switches' router (arb_lb_router), in [sport_lo, sport_hi]; paths are
 * traced for QP 0, so they are exact for hashes that leave the QP out
 * (ECMP). Call before arb_workload_start; without it the ports are drawn.
 * *n_disjoint (may be NULL) receives the ranks whose ports are all
 * disjoint. Errors: ARB_EINVAL (another kind or mode), ARB_ESTATE
 * (started), those of arb_route_disjoint_sports.
 */
struct arb_route;
int arb_workload_route_sports(arb_workload *w, const struct arb_route *r, uint32_t *n_disjoint);

/* The simulator's on_flow_sent (ctx: the workload). Optional: with it, a
 * ring AllReduce QP launches its next message as soon as the previous one
 * has sent its last packet (back to back, as a NIC runs a QP's send
 * queue); without it, only once the previous one has been delivered. */
void arb_workload_on_flow_sent(void *ctx, arb_sim *s, uint32_t flow, arb_time now);

/* The first error met while driving the simulator, or 0. */
int arb_workload_error(const arb_workload *w);

typedef struct arb_workload_result {
    arb_workload_kind kind;
    uint64_t flows_planned; /* simulator flows the workload will add in all */
    uint64_t flows_added;   /* added so far */
    uint64_t flows_done;
    uint64_t bytes_planned; /* payload bytes of all its flows */
    arb_time start;         /* earliest start */
    arb_time finish;        /* last flow done; ARB_TIME_NEVER while not all are */
    int done;               /* every flow (every rank) is done */
    uint32_t phases;        /* pattern phases (1 otherwise) */
    /* ring AllReduce */
    uint32_t ranks, qps, slices, steps; /* steps = 2(N-1) */
    uint64_t messages;                  /* per rank: steps x slices */
    uint64_t buffer_bytes;              /* S */
    arb_time cct;                       /* last rank done - start; NEVER while not done */
    double algbw_gbps, busbw_gbps;      /* 0 while not done */
} arb_workload_result;

void arb_workload_get_result(const arb_workload *w, arb_workload_result *r);

/*
 * Ring AllReduce: rank r's host, the time it was done (ARB_TIME_NEVER if
 * not yet), the payload bytes it sent and the messages it received.
 * ARB_EINVAL for another kind or a rank out of range.
 */
int arb_workload_rank(const arb_workload *w, uint32_t rank, uint32_t *host, arb_time *done,
                      uint64_t *bytes_sent, uint64_t *msgs_received);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_WORKLOAD_H */
