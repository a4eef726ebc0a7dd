/** @file
 * arbor/workload.h - what the simulated hosts send: flows from a traffic
 * pattern, incast, traces with start times (our CSV and htsim's connection
 * matrix), ring AllReduce as NCCL runs it, the other host-based collectives
 * (below) and training iterations replayed from traces (text or Chakra).
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

/** How a ring AllReduce spreads a connection over its QPs (docs/workloads.md). */
typedef enum arb_qp_mode { ARB_QP_SPLIT = 0, ARB_QP_RR = 1, ARB_QP_HPN = 2 } arb_qp_mode;

/** "split", "rr", "hpn"; NULL outside the enum. */
const char *arb_qp_mode_name(int m);
/** Parse "split", "rr" or "hpn"; ARB_ENOENT otherwise. */
int arb_qp_mode_parse(const char *name);

/** The kinds of workload. */
typedef enum arb_workload_kind {
    ARB_WL_FLOWS = 0,     /**< a given list of flows */
    ARB_WL_PATTERN = 1,   /**< a traffic.h pattern */
    ARB_WL_INCAST = 2,    /**< many senders to one receiver */
    ARB_WL_TRACE = 3,     /**< CSV trace */
    ARB_WL_HTSIM = 4,     /**< htsim connection matrix */
    ARB_WL_ALLREDUCE = 5, /**< ring AllReduce */
    ARB_WL_HCOLL = 6,     /**< one host-based collective (docs/workloads.md) */
    ARB_WL_ITERATION = 7  /**< a training iteration replayed from a trace */
} arb_workload_kind;

/** "flows", "pattern", "incast", "trace", "htsim", "ring_allreduce",
 * "host_collective", "iteration". */
const char *arb_workload_kind_name(int k);

/** What every kind of workload shares (arb_workload_config_default). */
typedef struct arb_workload_config {
    uint64_t seed;        /**< source ports and QP numbers (default 1) */
    uint32_t qps;         /**< QPs per connection (default 1) */
    arb_qp_mode qp_mode;  /**< default split; rr and hpn: ring AllReduce only (every
                             other kind refuses them: ARB_EINVAL, "qp_mode: ...") */
    uint16_t sport_lo;    /**< source ports are drawn from [sport_lo, sport_hi] */
    uint16_t sport_hi;    /**< (default 49152..65535) */
    int shared_sport;     /**< 1: the QPs of a connection share its first QP's source
                             port and differ only in the QP number (NICs that do so;
                             E-ECMP tells them apart, ECMP cannot). Not with hpn. */
    arb_time start_delay; /**< from the event that lets a message start (the delivery
                             it waits for, its QP's previous message leaving) to its
                             start: ring AllReduce, host collectives (also inside
                             iterations), a pattern's next phase. Default 0. */
} arb_workload_config;

/** Fill *cfg with the defaults its fields name. */
void arb_workload_config_default(arb_workload_config *cfg);

/** One flow of a static workload; sport 0 and qp 0 mean "draw one". */
typedef struct arb_wl_flow {
    uint32_t src;   /**< source host */
    uint32_t dst;   /**< destination host */
    uint64_t bytes; /**< payload bytes */
    arb_time start; /**< when it starts */
    uint16_t sport; /**< UDP source port; 0: drawn */
    uint32_t qp;    /**< destination QP number (24 bits) */
} arb_wl_flow;

/** A workload: the flows it adds to a simulator and what it measured (opaque). */
typedef struct arb_workload arb_workload;

/**
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

/** Every pair of traffic.h `spec` sends `bytes` from `start`. Errors: as
 * arb_workload_new_flows. */
int arb_workload_new_pattern(arb_workload **out, const char *spec, uint32_t n_hosts, uint64_t bytes,
                             arb_time start, const arb_workload_config *cfg, char *err,
                             size_t errlen);

/** `senders` hosts (receiver+1, receiver+2, ... mod n_hosts) each send
 * `bytes` to `receiver` from `start`. Errors: as arb_workload_new_flows. */
int arb_workload_new_incast(arb_workload **out, uint32_t n_hosts, uint32_t receiver,
                            uint32_t senders, uint64_t bytes, arb_time start,
                            const arb_workload_config *cfg, char *err, size_t errlen);

/** A trace file (ARB_WL_TRACE: CSV, ARB_WL_HTSIM: connection matrix).
 * Errors: as arb_workload_new_flows. */
int arb_workload_new_file(arb_workload **out, arb_workload_kind kind, const char *path,
                          uint32_t n_hosts, const arb_workload_config *cfg, char *err,
                          size_t errlen);

/** The same from text in memory; `name` stands for the path in messages.
 * Errors: as arb_workload_new_flows. */
int arb_workload_parse(arb_workload **out, arb_workload_kind kind, const char *text,
                       const char *name, uint32_t n_hosts, const arb_workload_config *cfg,
                       char *err, size_t errlen);

/** A ring AllReduce (arb_workload_new_allreduce). */
typedef struct arb_allreduce_config {
    const uint32_t *hosts; /**< host of rank r; NULL: rank r on host r */
    uint32_t ranks;        /**< N >= 2 */
    uint64_t bytes;        /**< S, the buffer each rank reduces */
    uint64_t chunk;        /**< pipeline slice bytes; 0: one message per step */
    arb_time start;        /**< every rank starts at this time */
} arb_allreduce_config;

/** A ring AllReduce of `ar` (hosts borrowed during the call). Errors: as
 * arb_workload_new_flows. */
int arb_workload_new_allreduce(arb_workload **out, const arb_allreduce_config *ar, uint32_t n_hosts,
                               const arb_workload_config *cfg, char *err, size_t errlen);

/** Free the workload (NULL is ignored). */
void arb_workload_free(arb_workload *w);

/** The workload's kind. */
arb_workload_kind arb_workload_get_kind(const arb_workload *w);

/**
 * Add the first flows to s (made with this workload's callback). Call once.
 * Errors: those of arb_sim_add_flow; ARB_ESTATE when called twice.
 */
int arb_workload_start(arb_workload *w, arb_sim *s);

/** The simulator's arb_sim_done_fn; ctx is the workload. An error inside
 * (no memory) is kept for arb_workload_error. */
void arb_workload_on_flow_done(void *ctx, arb_sim *s, uint32_t flow, arb_time now);

struct arb_route;

/**
 * HPN (qp_mode hpn, ring AllReduce): give every rank's qps connections the
 * source ports arb_route_disjoint_sports finds for its pair over `r`, the
 * switches' router (arb_lb_router), in [sport_lo, sport_hi]; paths are
 * traced for QP 0, so they are exact for hashes that leave the QP out
 * (ECMP). Call before arb_workload_start; without it the ports are drawn.
 * *n_disjoint (may be NULL) receives the ranks whose ports are all
 * disjoint. Errors: ARB_EINVAL (another kind or mode), ARB_ESTATE
 * (started), those of arb_route_disjoint_sports.
 */
int arb_workload_route_sports(arb_workload *w, const struct arb_route *r, uint32_t *n_disjoint);

/** The simulator's on_flow_sent (ctx: the workload). Optional: with it, a
 * ring AllReduce QP launches its next message as soon as the previous one
 * has sent its last packet (back to back, as a NIC runs a QP's send
 * queue); without it, only once the previous one has been delivered. */
void arb_workload_on_flow_sent(void *ctx, arb_sim *s, uint32_t flow, arb_time now);

/** The first error met while driving the simulator (an ARB_E* code such as
 * ARB_ENOMEM), or 0. */
int arb_workload_error(const arb_workload *w);

/** What a workload measured (arb_workload_get_result). */
typedef struct arb_workload_result {
    arb_workload_kind kind; /**< the workload's kind */
    uint64_t flows_planned; /**< simulator flows the workload will add in all */
    uint64_t flows_added;   /**< added so far */
    uint64_t flows_done;    /**< done so far */
    uint64_t bytes_planned; /**< payload bytes of all its flows */
    arb_time start;         /**< earliest start */
    arb_time finish;        /**< last flow done; ARB_TIME_NEVER while not all are */
    int done;               /**< every flow (every rank) is done */
    uint32_t phases;        /**< pattern phases (1 otherwise) */
    /* ring AllReduce */
    uint32_t ranks;        /**< N */
    uint32_t qps;          /**< QPs per connection */
    uint32_t slices;       /**< pipeline slices per step */
    uint32_t steps;        /**< steps = 2(N-1) */
    uint64_t messages;     /**< per rank: steps x slices */
    uint64_t buffer_bytes; /**< S */
    arb_time cct;          /**< last rank done - start; NEVER while not done */
    double algbw_gbps;     /**< S / CCT, Gb/s; 0 while not done */
    double busbw_gbps;     /**< algbw x the bus factor; 0 while not done */
    /* host collective (ring AllReduce too: coll allreduce, algo ring) */
    int coll;                /**< arb_coll */
    int algo;                /**< arb_hc_algo (resolved) */
    uint64_t messages_total; /**< messages of all ranks */
    double busbw_factor;     /**< nccl-tests' factor (arb_coll_busbw_factor) */
    /* iteration */
    arb_time iter_time;    /**< last rank's last node done - start; NEVER while not done */
    arb_time exposed_max;  /**< the most exposed communication of a rank */
    arb_time exposed_mean; /**< mean over ranks (rounded down) */
    arb_time compute_max;  /**< the most compute time of a rank */
    uint64_t nodes;        /**< trace nodes */
    uint64_t collectives;  /**< collective calls (each once) */
    uint64_t p2p;          /**< sends (each once) */
} arb_workload_result;

/** Copy what the workload measured so far into *r. */
void arb_workload_get_result(const arb_workload *w, arb_workload_result *r);

/**
 * Ring AllReduce and host collectives: rank r's host, the time it was
 * done (ARB_TIME_NEVER if not yet), the payload bytes it sent and the
 * messages it received. Errors: ARB_EINVAL for another kind or a rank out of
 * range.
 */
int arb_workload_rank(const arb_workload *w, uint32_t rank, uint32_t *host, arb_time *done,
                      uint64_t *bytes_sent, uint64_t *msgs_received);

/* ------------------------------------------------------------------ */
/* Host-based collectives (docs/workloads.md)                           */
/* ------------------------------------------------------------------ */

/**
 * The collectives NCCL and MPI run on the hosts, over the simulator's
 * RoCE transports: every collective is a static plan of messages between
 * ranks, each message a simulator flow that may start once the data it
 * carries has arrived at its sender (its dependencies are delivered).
 * Every (sender, receiver, channel) is one connection of `qps` QPs (a
 * message is split over them, as qp_mode split) that carries its messages
 * in order: the next one enters the simulator when the previous one has
 * sent its last packet. Header-only: bytes move, values do not.
 *
 * @verbatim
 *   collective     algorithms (auto picks the first unless noted)
 *   allreduce      ring (NCCL's ring: reduce-scatter then all-gather,
 *                  2(n-1) steps), tree (NCCL's double binary tree: two
 *                  complementary binary trees, each reducing half of the
 *                  buffer up and broadcasting it down, pipelined), rd
 *                  (recursive doubling: log2 n exchanges of the whole
 *                  buffer; ranks beyond a power of two fold in first and
 *                  get the result last); auto: rd up to 64 KiB, else ring
 *   reduce         binomial (binomial tree to the root), chain (= ring:
 *                  the pipelined chain toward the root)
 *   reducescatter  ring (n-1 steps)
 *   broadcast      chain (= ring: root -> root+1 -> ..., pipelined),
 *                  binomial
 *   allgather      ring (n-1 steps)
 *   barrier        rd (recursive doubling of 1-byte messages: the
 *                  simulator carries no empty flow)
 *   alltoall       direct (every rank sends its S/n block to every
 *                  other rank at once, one connection each)
   @endverbatim
 *
 * S (bytes) is nccl-tests' size: the buffer each rank reduces (allreduce,
 * reduce), broadcasts (broadcast), the whole buffer of which every rank
 * holds 1/n at the end (reducescatter) or at the start (allgather), and
 * the send buffer of an alltoall. algbw = S / CCT, busbw = algbw x
 * factor (arb_coll_busbw_factor): allreduce 2(n-1)/n, reducescatter,
 * allgather and alltoall (n-1)/n, broadcast and reduce 1, barrier 0 (no data).
 * With `chunk` > 0 the unit a message carries (ring: S/n; tree: S/2;
 * chain, binomial, rd: S; alltoall: S/n) is cut into
 * P = ceil(unit / chunk) slices of near-equal size, pipelined.
 * A rank is done when it has entered and every message it sends or
 * receives has been delivered; CCT is the last rank's, from the start.
 */
typedef arb_coll arb_hc_coll;

/** @name Former names
 * A host collective is an arb_coll (base.h); these names of the host
 * collectives' own enum, name table and busbw factor stay for source
 * compatibility: new code writes the arb_coll ones.
 * @{ */
#define ARB_HC_ALLREDUCE ARB_COLL_ALLREDUCE         /**< ARB_COLL_ALLREDUCE */
#define ARB_HC_REDUCE ARB_COLL_REDUCE               /**< ARB_COLL_REDUCE */
#define ARB_HC_REDUCESCATTER ARB_COLL_REDUCESCATTER /**< ARB_COLL_REDUCESCATTER */
#define ARB_HC_BROADCAST ARB_COLL_BROADCAST         /**< ARB_COLL_BROADCAST */
#define ARB_HC_ALLGATHER ARB_COLL_ALLGATHER         /**< ARB_COLL_ALLGATHER */
#define ARB_HC_BARRIER ARB_COLL_BARRIER             /**< ARB_COLL_BARRIER */
#define ARB_HC_ALLTOALL ARB_COLL_ALLTOALL           /**< ARB_COLL_ALLTOALL */
/** arb_coll_name */
#define arb_hc_coll_name(c) arb_coll_name(c)
/** arb_coll_parse */
#define arb_hc_coll_parse(name) arb_coll_parse(name)
/** arb_coll_busbw_factor */
#define arb_hc_busbw_factor(c, ranks) arb_coll_busbw_factor((c), (ranks))
/** @} */

/** The host algorithms (see arb_hc_coll). */
typedef enum arb_hc_algo {
    ARB_HC_AUTO = 0,
    ARB_HC_RING = 1,
    ARB_HC_TREE = 2,
    ARB_HC_RD = 3,
    ARB_HC_DIRECT = 4,
    ARB_HC_CHAIN = 5,
    ARB_HC_BINOMIAL = 6
} arb_hc_algo;

/** The algorithm's name as the scenario keys spell it; NULL outside the enum. */
const char *arb_hc_algo_name(int a);
/** Parse an algorithm's name (case-insensitive). Errors: ARB_ENOENT. */
int arb_hc_algo_parse(const char *name);

/** The algorithm that runs `c` with `a` (auto resolved; ring for reduce
 * and broadcast is chain), or ARB_EINVAL when `c` has no such algorithm. */
int arb_hc_algo_resolve(arb_coll c, arb_hc_algo a, uint64_t bytes);

/** A host collective (arb_workload_new_hcoll). */
typedef struct arb_hcoll_config {
    arb_coll coll;         /**< the collective */
    arb_hc_algo algo;      /**< its algorithm (AUTO: see arb_hc_coll) */
    const uint32_t *hosts; /**< host of rank r; NULL: rank r on host r */
    uint32_t ranks;        /**< n >= 2 */
    uint64_t bytes;        /**< S (ignored by barrier) */
    uint64_t chunk;        /**< pipeline slice bytes; 0: one slice */
    uint32_t root;         /**< reduce, broadcast */
    arb_time start;        /**< every rank enters at this time */
} arb_hcoll_config;

/** The defaults of a host collective: AllReduce, algorithm AUTO, root 0,
 * one slice, rank r on host r, starting at 0; ranks and bytes 0 (the
 * caller's to set). */
void arb_hcoll_config_default(arb_hcoll_config *hc);

/** A host collective. Errors: as arb_workload_new_allreduce, the message naming the field
 * first ("size:", "chunk:", "root:", "ranks:", "hosts:", "algorithm:"). */
int arb_workload_new_hcoll(arb_workload **out, const arb_hcoll_config *hc, uint32_t n_hosts,
                           const arb_workload_config *cfg, char *err, size_t errlen);

/** One message of a host collective: ranks, payload bytes, the messages
 * it waits for (indices; borrowed from the workload), when its first flow
 * entered the simulator and when its last part was delivered
 * (ARB_TIME_NEVER if not yet). */
typedef struct arb_hc_msg {
    uint32_t src;         /**< sending rank */
    uint32_t dst;         /**< receiving rank */
    uint64_t bytes;       /**< payload bytes */
    uint32_t n_deps;      /**< entries of deps */
    const uint32_t *deps; /**< the messages it waits for */
    arb_time posted;      /**< its first flow entered the simulator */
    arb_time delivered;   /**< its last part was delivered */
} arb_hc_msg;

/** Messages of a host collective (0 for another kind). */
uint64_t arb_workload_hc_messages(const arb_workload *w);
/** Message i of a host collective into *m. Errors: ARB_EINVAL for another
 * kind or i out of range. */
int arb_workload_hc_msg(const arb_workload *w, uint64_t i, arb_hc_msg *m);

/* ------------------------------------------------------------------ */
/* Training-iteration traces (docs/workloads.md)                        */
/* ------------------------------------------------------------------ */

/**
 * A trace is, per rank, a DAG of nodes: compute (a duration), a
 * collective (kind, bytes, group of ranks), a point-to-point send or
 * receive (bytes, peer, tag), or a no-op (Chakra's other node types).
 * Two readers fill it: our text format and MLCommons Chakra execution
 * traces (protobuf, one file per rank; needs the build with protobuf-c,
 * arb_trace_chakra_available). Both check the same rules: node ids unique
 * per rank, dependencies on existing nodes of the rank and no cycle,
 * ranks and peers in range, collectives matched across their group (the
 * k-th call of a group on every member has the same kind and bytes,
 * every member calls it as often), sends matched by receives (same
 * peer pair, tag and bytes, in order). A malformed trace is ARB_EPARSE
 * with one line naming the record and the rule ("F:LINE: field: rule"
 * for text, "F: node ID (record K): rule" for Chakra).
 */
typedef struct arb_trace arb_trace;

/** The format of a trace file. */
typedef enum arb_trace_format {
    ARB_TRACE_AUTO = 0,  /**< by the file name: *.et is Chakra, else text */
    ARB_TRACE_TEXT = 1,  /**< the text format (docs/workloads.md) */
    ARB_TRACE_CHAKRA = 2 /**< MLCommons Chakra execution traces */
} arb_trace_format;

/** Text trace from memory; `name` stands for the file in messages.
 * Errors: ARB_EPARSE (see above), ARB_ENOMEM. */
int arb_trace_parse_text(arb_trace **out, const char *text, size_t len, const char *name, char *err,
                         size_t errlen);
/** Chakra trace from memory: bufs[r] is rank r's file. Errors: ARB_EINVAL
 * (without protobuf-c: "built without protobuf-c"), ARB_EPARSE. */
int arb_trace_parse_chakra(arb_trace **out, const uint8_t *const *bufs, const size_t *lens,
                           uint32_t n_ranks, const char *name, char *err, size_t errlen);
/** From a file: text, or Chakra where `path` names rank 0's file
 * PREFIX.0.et and the ranks' files PREFIX.R.et follow while they exist.
 * ARB_EIO for a file that cannot be read. */
int arb_trace_load(arb_trace **out, const char *path, arb_trace_format fmt, char *err,
                   size_t errlen);
/** Free a trace (NULL is ignored). */
void arb_trace_free(arb_trace *t);
/** The trace's ranks. */
uint32_t arb_trace_ranks(const arb_trace *t);
/** The trace's nodes, over every rank. */
uint64_t arb_trace_nodes(const arb_trace *t);
/** 1 when this build reads Chakra traces, else 0. Never fails. */
int arb_trace_chakra_available(void);

struct arb_plan_config;

/** A training iteration replayed from a trace (arb_workload_new_iteration). */
typedef struct arb_iteration_config {
    const uint32_t *hosts; /**< host of trace rank r; NULL: rank r on host r */
    uint32_t n_map;        /**< entries of hosts (at least the trace's ranks) */
    arb_hc_algo algo;      /**< collectives' algorithm: auto, or one every kind has */
    uint64_t chunk;        /**< pipeline slice bytes of the collectives */
    arb_time start;        /**< the iteration starts here */
    /** The collectives' backend. 0 (default): the host algorithms. 1: Arbor
     * (below); AllToAll and sends stay on the host transport. */
    int arbor;
    const arb_topo *topo;                   /**< Arbor: the fabric to plan on (borrowed) */
    const arb_sim_arbor_config *arbor_cfg;  /**< Arbor: every collective's engine settings;
                                               plan, start, deferred and the callback
                                               are the workload's */
    const struct arb_plan_config *plan_cfg; /**< Arbor: dtype, subchannels, agg_levels,
                                               header; the rest per collective */
    uint32_t inner_ranks;  /**< Arbor: an AllReduce over more than 256 ranks runs in inner groups
                              of this many (0: the divisor of its ranks nearest their root) */
    uint32_t inner_pieces; /**< Arbor: ... its buffer cut into this many pieces, pipelined
                              through the phases (0: 1) */
} arb_iteration_config;

/** The defaults of an iteration: the host algorithms (AUTO), trace rank r
 * on host r, one slice, starting at 0; for the Arbor backend inner groups
 * chosen by the ranks (inner_ranks 0) and the buffer in 2 pieces
 * (inner_pieces; a zeroed configuration's 0 means 1). */
void arb_iteration_config_default(arb_iteration_config *ic);

/**
 * Replay a trace (the workload takes it, also on error). Every rank runs
 * its DAG: a node starts when all its dependencies are done; compute nodes
 * of a rank run one at a time (one compute stream, in the order they
 * become ready) and take their duration; a collective runs the host
 * algorithm over its group (a message waits for both its ranks to have
 * called it); a send starts its flow when issued and is done when
 * delivered; a receive is done when issued and its data has arrived.
 * With ic->arbor, a collective of 2..256 ranks is an Arbor job instead
 * (arb_sim_arbor_add, deferred, added when its first member calls it; each
 * member enters when its node is reached and its node is done when the
 * simulator reports its rank done), and an AllReduce of more ranks runs
 * as an Arbor ReduceScatter in inner groups, an AllReduce of each shard
 * across them and an AllGather in them; the workload must then be the only
 * one adding Arbor jobs to the simulator. Plans are built here: a
 * collective the planner refuses is an error naming its trace record.
 * Exposed communication of a rank: the time some communication node of it
 * is running while its compute stream is idle. Compute needs timers:
 * drive arb_workload_next_timer / arb_workload_timer beside the simulator.
 * Errors: those of the constructors; ARB_EINVAL for a rank without a host.
 */
int arb_workload_new_iteration(arb_workload **out, arb_trace *trace, const arb_iteration_config *ic,
                               uint32_t n_hosts, const arb_workload_config *cfg, char *err,
                               size_t errlen);

/** The next time the workload must be woken (ARB_TIME_NEVER: none; always
 * so for the other kinds). Run the simulator up to it, then call
 * arb_workload_timer with that time. */
arb_time arb_workload_next_timer(const arb_workload *w);
/** An iteration's shortest compute node that takes time (ARB_TIME_NEVER:
 * none, or another kind): a partitioned run needs it at least the
 * lookahead, as the timer it sets may be set at a window's end. */
arb_time arb_workload_min_compute(const arb_workload *w);
/** Run what is due at `now` (arb_workload_next_timer), adding flows to s. */
void arb_workload_timer(arb_workload *w, arb_sim *s, arb_time now);

/** One rank of an iteration (arb_workload_iter_rank). */
typedef struct arb_iter_rank {
    uint32_t host;       /**< its host */
    uint64_t nodes;      /**< its trace nodes */
    uint64_t nodes_done; /**< of which done */
    arb_time finish;     /**< its last node done (ARB_TIME_NEVER if not yet) */
    arb_time compute;    /**< time its compute stream was busy */
    arb_time comm;       /**< time some communication node of it was running */
    arb_time exposed;    /**< of which with the compute stream idle */
} arb_iter_rank;

/** Rank `rank` of an iteration into *out. Errors: ARB_EINVAL for another
 * kind or a rank out of range. */
int arb_workload_iter_rank(const arb_workload *w, uint32_t rank, arb_iter_rank *out);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_WORKLOAD_H */
