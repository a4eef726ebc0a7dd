/* scn_int.h - the scenario module's private parts, shared by its files. */
#ifndef ARBOR_SCN_INT_H
#define ARBOR_SCN_INT_H

#include "arbor/lb.h"
#include "arbor/plan.h"
#include "arbor/route.h"
#include "arbor/scenario.h"
#include "arbor/topo.h"

/* The keys, in table order: X(id, section, key, type, default, choices, lo, hi, doc).
 * ENGINE: the default is the engine's, from its *_config_default()
 * (defaults.c, scn_key_default). */
#define ENGINE NULL
#define SCN_KEYS(X)                                                                                \
    X(FAB_TOPO, "fabric", "topology", VT_STR, "leafspine:4,4,4", NULL, 0, 0,                       \
      "the fabric, as for 'arbor topo' (star:N, leafspine:L,D,U, kary:K,N, pgft:..., ...)")        \
    X(FAB_RATE, "fabric", "link_rate", VT_RATE, ENGINE, NULL, 0, 0, "rate of host links")          \
    X(FAB_UPRATE, "fabric", "up_rate", VT_RATE0, ENGINE, NULL, 0, 0,                               \
      "rate of switch-to-switch links; 0: link_rate")                                              \
    X(FAB_DELAY, "fabric", "delay", VT_TIME, ENGINE, NULL, 0, 0,                                   \
      "propagation delay of every link")                                                           \
    X(FAB_FAIL, "fabric", "fail", VT_LIST, "", NULL, 0, 0,                                         \
      "failed links and switches, as for 'arbor topo --fail', separated by commas or blanks "      \
      "(empty: none)")                                                                             \
    X(FAB_FAILAT, "fabric", "fail_at", VT_LIST, "", NULL, 0, 0,                                    \
      "failures during the run: TIME ITEMS; ... (items as fabric.fail; what is queued there is "   \
      "dropped, what is on their wires lost)")                                                     \
    X(FAB_RESTOREAT, "fabric", "restore_at", VT_LIST, "", NULL, 0, 0,                              \
      "recoveries during the run: TIME ITEMS; ... (items as fabric.fail; each link or switch "     \
      "carries packets again)")                                                                    \
    X(FAB_REBOOTAT, "fabric", "reboot_at", VT_LIST, "", NULL, 0, 0,                                \
      "switch reboots during the run: TIME switch:NAME... [down=T]; ... (slot pools emptied; "     \
      "down=T: off the fabric for T, then back empty)")                                            \
    X(FAB_LOSS, "fabric", "loss", VT_REAL, ENGINE, NULL, 0, 1,                                     \
      "probability that a packet is lost on each link it crosses (seeded; below 1)")               \
    X(FAB_DUP, "fabric", "dup", VT_REAL, ENGINE, NULL, 0, 1,                                       \
      "probability that a link delivers a packet twice, the copy right after it (seeded; below "   \
      "1)")                                                                                        \
    X(FAB_REORDER, "fabric", "reorder", VT_REAL, ENGINE, NULL, 0, 1,                               \
      "probability that a link holds a packet back reorder_delay where it arrives, so later "      \
      "packets overtake it (seeded; below 1)")                                                     \
    X(FAB_REORDER_DELAY, "fabric", "reorder_delay", VT_TIME, ENGINE, NULL, 0, 0,                   \
      "how long a reordered packet is held")                                                       \
    X(FAB_LINK, "fabric", "link", VT_LIST, "", NULL, 0, 0,                                         \
      "per-link settings: LINKS rate=R delay=T loss=P dup=P reorder=P; ... (links as for "         \
      "pcap_ports, both directions; loss=, dup=, reorder=: that link's own instead of fabric's)")  \
    X(RT_SCHEME, "routing", "scheme", VT_STR, "ecmp", NULL, 0, 0,                                  \
      "the switches' routing (lb.h): dmodk, smodk, rnca[:SEED], pinning, table[:PATH], updown, "   \
      "dmodc, ecmp[:polarized], eecmp[:polarized], ar, ar_ftree, flowlet, letflow, conga, "        \
      "spray[:random], with options")                                                              \
    X(RT_SEED, "routing", "seed", VT_U64, "0", NULL, 0, UINT64_MAX,                                \
      "seed of the switches' hash functions; 0: run.seed")                                         \
    X(RT_STEER, "routing", "steer", VT_LIST, "", NULL, 0, 0,                                       \
      "route overrides: SWITCH [src=hI] [dst=hJ] [kind=data|ctrl] [from=T] [until=T] up=Q|down=D|" \
      "port=P; ... (first match wins, else routing.scheme)")                                       \
    X(TR_KIND, "transport", "kind", VT_ENUM, ENGINE, "gbn|roce|irn", 0, 0,                         \
      "gbn (RoCE go-back-N; roce is a synonym) or irn (selective repeat)")                         \
    X(TR_MTU, "transport", "mtu", VT_SIZE, ENGINE, NULL, 1, 65000, "payload bytes per packet")     \
    X(TR_HDR, "transport", "header", VT_SIZE, ENGINE, NULL, 0, 500,                                \
      "wire bytes a data packet adds to its payload (headers, preamble, gap)")                     \
    X(TR_CTRL, "transport", "ctrl", VT_SIZE, ENGINE, NULL, 1, 65535,                               \
      "wire bytes of an ack, NACK or CNP")                                                         \
    X(TR_RTO, "transport", "rto", VT_TIME_AUTO, "auto", NULL, 1, 0,                                \
      "go-back-N's retransmission timeout (auto: 1ms); irn: one fixed timeout in place of "        \
      "rto_low and rto_high (auto: those two)")                                                    \
    X(TR_RTOLOW, "transport", "rto_low", VT_TIME_AUTO, ENGINE, NULL, 1, 0,                         \
      "irn: the timeout while at most rto_low_n packets are outstanding (auto: 4 x the fabric's "  \
      "longest unloaded round trip)")                                                              \
    X(TR_RTOHIGH, "transport", "rto_high", VT_TIME_AUTO, ENGINE, NULL, 1, 0,                       \
      "irn: the timeout while more are outstanding (auto: rto_low + a full switch queue at each "  \
      "switch port of the longest path)")                                                          \
    X(TR_RTON, "transport", "rto_low_n", VT_U64, ENGINE, NULL, 0, UINT32_MAX,                      \
      "irn: the most packets outstanding for which rto_low applies (the IRN paper's N)")           \
    X(TR_TLP, "transport", "tlp", VT_ENUM, ENGINE, "auto|on|off", 0, 0,                            \
      "RACK-TLP (RFC 8985): after 2 x the smoothed round trip of silence the last packet again; "  \
      "irn: a lost resend found by a later packet (auto: on for irn, off for gbn)")                \
    X(TR_RETRY, "transport", "retry_limit", VT_U64, ENGINE, NULL, 0, UINT32_MAX,                   \
      "timeouts in a row without progress after which a QP gives up (IB's retry count; the run "   \
      "then fails naming it); 0: never")                                                           \
    X(TR_WINDOW, "transport", "window", VT_U64, ENGINE, NULL, 0, UINT32_MAX,                       \
      "packets in flight per QP; 0: no limit")                                                     \
    X(TR_ACKEVERY, "transport", "ack_every", VT_U64, ENGINE, NULL, 1, UINT32_MAX,                  \
      "the receiver acks every N-th in-order packet (and the last)")                               \
    X(TR_REORDER, "transport", "irn_reorder", VT_TIME, ENGINE, NULL, 0, 0,                         \
      "IRN: a hole is lost once a packet sent this much later has arrived")                        \
    X(TR_DCQCN, "transport", "dcqcn", VT_BOOL, ENGINE, NULL, 0, 0,                                 \
      "DCQCN rate control (CNPs for CE marks; defaults of docs/transports.md)")                    \
    X(SW_QUEUE, "switch", "queue", VT_SIZE, ENGINE, NULL, 1, UINT32_MAX,                           \
      "output queue capacity per port (drop-tail)")                                                \
    X(SW_ECN, "switch", "ecn", VT_BOOL, ENGINE, NULL, 0, 0, "RED-style ECN marking on enqueue")    \
    X(SW_KMIN, "switch", "kmin", VT_SIZE, ENGINE, NULL, 0, UINT32_MAX,                             \
      "queue depth where marking starts")                                                          \
    X(SW_KMAX, "switch", "kmax", VT_SIZE, ENGINE, NULL, 0, UINT32_MAX,                             \
      "queue depth where every packet is marked")                                                  \
    X(SW_PMAX, "switch", "pmax", VT_REAL, ENGINE, NULL, 0, 1, "marking probability at kmax")       \
    X(SW_PFC, "switch", "pfc", VT_BOOL, ENGINE, NULL, 0, 0, "PFC: lossless, pause per ingress")    \
    X(SW_XOFF, "switch", "xoff", VT_SIZE, ENGINE, NULL, 1, UINT32_MAX,                             \
      "bytes held per ingress port that send PAUSE")                                               \
    X(SW_XON, "switch", "xon", VT_SIZE, ENGINE, NULL, 0, UINT32_MAX,                               \
      "bytes held below which RESUME is sent")                                                     \
    X(WL_KIND, "workload", "kind", VT_ENUM, "ring_allreduce",                                      \
      "ring_allreduce|perm|shift|all2all|pattern|incast|trace|htsim|arbor|host_collective|"        \
      "iteration",                                                                                 \
      0, 0,                                                                                        \
      "what the hosts send (arbor: the Arbor collective of [arbor]; host_collective: the host "    \
      "algorithm of [host]; iteration: a training-iteration trace, workload.file)")                \
    X(WL_SIZE, "workload", "size", VT_SIZE, "4MiB", NULL, 1, ARB_PLAN_MAX_BYTES,                   \
      "bytes per flow (per pair); ring_allreduce, host_collective and arbor: the buffer S; "       \
      "1..2^50 (1 PiB)")                                                                           \
    X(WL_QPS, "workload", "qps", VT_U64, ENGINE, NULL, 1, 65535,                                   \
      "QPs per connection; each pair's flow is split over them")                                   \
    X(WL_QPMODE, "workload", "qp_mode", VT_ENUM, ENGINE, "split|rr|hpn", 0, 0,                     \
      "ring_allreduce: split every message over the QPs, rr whole messages round robin, or hpn "   \
      "(disjoint source ports, each message to the least-loaded connection); other kinds: split "  \
      "only")                                                                                      \
    X(WL_SHAREDSPORT, "workload", "shared_sport", VT_BOOL, ENGINE, NULL, 0, 0,                     \
      "the QPs of a connection share one UDP source port (only the QP number differs)")            \
    X(WL_CHUNK, "workload", "chunk", VT_SIZE, "0", NULL, 0, UINT64_MAX,                            \
      "ring_allreduce, host_collective, iteration: pipeline slice bytes; 0: one message per step") \
    X(WL_RANKS, "workload", "ranks", VT_U64, "0", NULL, 0, UINT32_MAX,                             \
      "ring_allreduce, host_collective, arbor: ranks; 0: every host (or every host of `hosts`)")   \
    X(WL_HOSTS, "workload", "hosts", VT_LIST, "", NULL, 0, 0,                                      \
      "ring_allreduce, host_collective, iteration, arbor: hosts of the ranks in order, e.g. "      \
      "0-7,16-23 (empty: 0, 1, ...)")                                                              \
    X(WL_TRAFFIC, "workload", "traffic", VT_STR, "perm:1", NULL, 0, 0,                             \
      "pattern: a traffic spec (shift:S, shift:all, perm:SEED, all2all, ring, bisect:SEED, "       \
      "file:PATH)")                                                                                \
    X(WL_SHIFT, "workload", "shift", VT_U64, "1", NULL, 1, UINT32_MAX, "shift: i sends to i + S")  \
    X(WL_SENDERS, "workload", "senders", VT_U64, "8", NULL, 1, UINT32_MAX,                         \
      "incast: senders (the hosts after the receiver)")                                            \
    X(WL_RECEIVER, "workload", "receiver", VT_U64, "0", NULL, 0, UINT32_MAX, "incast: receiver")   \
    X(WL_FILE, "workload", "file", VT_PATH, "", NULL, 0, 0,                                        \
      "trace: CSV src,dst,bytes,start_us[,sport]; htsim: connection matrix; iteration: a text "    \
      "trace or Chakra PREFIX.0.et")                                                               \
    X(WL_START, "workload", "start", VT_TIME, "0", NULL, 0, 0,                                     \
      "start time of pattern, incast, ring_allreduce, host_collective and iteration flows")        \
    X(WL_START_DELAY, "workload", "start_delay", VT_TIME, ENGINE, NULL, 0, 0,                      \
      "ring_allreduce, host_collective, iteration, pattern phases: from the delivery (or the "     \
      "QP's last message leaving) that lets a message start to its start")                         \
    X(WL_SEED, "workload", "seed", VT_U64, "0", NULL, 0, UINT64_MAX,                               \
      "source ports, QP numbers and perm's permutation; 0: run.seed")                              \
    X(WL_BACKEND, "workload", "backend", VT_ENUM, "host", "host|arbor", 0, 0,                      \
      "iteration: where the trace's collectives run: host (host.algorithm over [transport]) or "   \
      "arbor (the [arbor] engines and the switches; alltoall and sends stay on [transport])")      \
    X(HC_COLL, "host", "coll", VT_ENUM, ENGINE,                                                    \
      "allreduce|reduce|reducescatter|broadcast|allgather|barrier|alltoall", 0, 0,                 \
      "host_collective: the collective; its buffer is workload.size (docs/workloads.md)")          \
    X(HC_ALGO, "host", "algorithm", VT_ENUM, ENGINE, "auto|ring|tree|rd|direct|chain|binomial", 0, \
      0, "host_collective, iteration: the host algorithm (auto: per collective and size)")         \
    X(HC_ROOT, "host", "root_rank", VT_U64, ENGINE, NULL, 0, UINT32_MAX,                           \
      "host_collective: the root rank of reduce and broadcast")                                    \
    X(HC_FORMAT, "host", "trace_format", VT_ENUM, "auto", "auto|text|chakra", 0, 0,                \
      "iteration: the trace's format (auto: Chakra for a name ending .et, else text)")             \
    X(AR_COLL, "arbor", "collective", VT_ENUM, ENGINE,                                             \
      "allreduce|reduce|reducescatter|broadcast|allgather|barrier", 0, 0,                          \
      "the collective (docs/protocol.md section 10); its buffer is workload.size")                 \
    X(AR_DTYPE, "arbor", "dtype", VT_ENUM, ENGINE, "f16|bf16|f32|f64|i32|i64", 0, 0,               \
      "element type")                                                                              \
    X(AR_MODE, "arbor", "mode", VT_ENUM, ENGINE, "headers|values", 0, 0,                           \
      "headers: header-only (packets stand for their payload); values: real payloads, checked")    \
    X(AR_PAYLOAD, "arbor", "payload", VT_SIZE, ENGINE, NULL, 1, 8192,                              \
      "payload bytes per packet (whole elements)")                                                 \
    X(AR_WINDOW, "arbor", "window", VT_U64, ENGINE, NULL, 0, 65535,                                \
      "credits outstanding per channel (a fixed window, no rate gate); 0: the loop's worth at "    \
      "the channel's share of a host link, at least 4 (docs/arbor-sim.md)")                        \
    X(AR_SLOTS, "arbor", "slots", VT_U64, ENGINE, NULL, 1, 65536,                                  \
      "aggregation slots per aggregating switch (A)")                                              \
    X(AR_REPAIR, "arbor", "repair", VT_ENUM, ENGINE, "local|end-to-end", 0, 0,                     \
      "local: a later attempt of an offset is repaired where it was lost (the switches keep what " \
      "an earlier attempt gathered); end-to-end: every attempt gathers anew (docs/protocol.md)")   \
    X(AR_RCMIN, "arbor", "recredit_min", VT_TIME, ENGINE, NULL, 1, 0,                              \
      "the switches' re-credit timer's floor (agg.h; 1 us at least, at most recredit_max)")        \
    X(AR_RCMAX, "arbor", "recredit_max", VT_TIME, ENGINE, NULL, 1, 0,                              \
      "the switches' re-credit timer's ceiling (agg.h; at most 1 s)")                              \
    X(AR_RCORDER, "arbor", "recredit_order", VT_BOOL, ENGINE, NULL, 0, 0,                          \
      "the switches re-credit a port by order too (it answered a later credit), not by the "       \
      "timer only")                                                                                \
    X(AR_TIMEOUT, "arbor", "timeout", VT_TIME, ENGINE, NULL, 1, 0,                                 \
      "the responder's timers' ceiling (the original design's fixed per-offset timeout)")          \
    X(AR_TOMODE, "arbor", "timeout_mode", VT_ENUM, ENGINE, "fixed|adaptive", 0, 0,                 \
      "adaptive: a tree silent for srtt + 4 rttvar of the completion times (within timeout_min "   \
      "and timeout) loses its credits; fixed: every timer is arbor.timeout from the send")         \
    X(AR_TOMIN, "arbor", "timeout_min", VT_TIME, ENGINE, NULL, 0, 0,                               \
      "the timers' floor; 0: twice the fabric's unloaded loop (docs/arbor-sim.md)")                \
    X(AR_DETECT, "arbor", "detection", VT_ENUM, ENGINE, "order|timer", 0, 0,                       \
      "order: a credit is lost once a later one on its tree committed (and a reordering window "   \
      "passed), timers for the tail; timer: timers only")                                          \
    X(AR_ATTEMPTS, "arbor", "attempts", VT_U64, ENGINE, NULL, 1, 256,                              \
      "credits per offset in the network before the bypass repair (1: bypass at the first loss)")  \
    X(AR_MISSLIMIT, "arbor", "miss_limit", VT_U64, ENGINE, NULL, 1, 255,                           \
      "AGG_MISS for one offset that send it to the bypass repair")                                 \
    X(AR_DEADAFTER, "arbor", "dead_after", VT_U64, ENGINE, NULL, 1, 255,                           \
      "timer losses on a tree, with no commit between, that make it dead (it is probed)")          \
    X(AR_REPTRIES, "arbor", "repair_tries", VT_U64, ENGINE, NULL, 1, 64,                           \
      "bypass repair credits per offset, and END-wait rounds, before a channel fails")             \
    X(AR_RETRY, "arbor", "retry", VT_TIME, ENGINE, NULL, 1, 0,                                     \
      "requester REGISTER / END retry interval cap (doubling; failure after 255 x this)")          \
    X(AR_RETRYMIN, "arbor", "retry_min", VT_TIME, ENGINE, NULL, 0, 0,                              \
      "requester REGISTER / END first retry; 0: the timers' floor")                                \
    X(AR_CC, "arbor", "cc", VT_ENUM, ENGINE, "disabled|fixed|timely|swift|dcqcn|oscar", 0, 0,      \
      "the responders' congestion controller, one per channel (docs/cc.md); fixed: arbor.window "  \
      "and arbor.cc.rate")                                                                         \
    X(AR_CC_RATE, "arbor", "cc.rate", VT_RATE0, "0", NULL, 0, 0,                                   \
      "fixed: the credits' rate in wire bits/s (a full frame each); 0: no rate gate")              \
    X(AR_CC_WINDOW, "arbor", "cc.window", VT_U64, "0", NULL, 0, 0xFFFFFF,                          \
      "swift, oscar: the initial window; 0: arbor.window")                                         \
    X(AR_CC_WMIN, "arbor", "cc.window_min", VT_U64, ENGINE, NULL, 1, 0xFFFFFF,                     \
      "timely, swift, dcqcn, oscar: the least window")                                             \
    X(AR_CC_WMAX, "arbor", "cc.window_max", VT_U64, ENGINE, NULL, 1, 0xFFFFFF,                     \
      "timely, swift, dcqcn, oscar: the largest window (timely, dcqcn: the loop's worth at line "  \
      "rate, at most this)")                                                                       \
    X(AR_CC_BASERTT, "arbor", "cc.base_rtt", VT_TIME, ENGINE, NULL, 0, 0,                          \
      "the unloaded loop the adaptive kinds scale from; 0: the collective's (docs/cc.md)")         \
    X(AR_TI_ALPHA, "arbor", "cc.timely.alpha", VT_REAL, ENGINE, NULL, 0, 1,                        \
      "timely: EWMA weight of the newest loop-time difference, (0, 1]")                            \
    X(AR_TI_BETA, "arbor", "cc.timely.beta", VT_REAL, ENGINE, NULL, 0, 1,                          \
      "timely: multiplicative decrease, (0, 1]")                                                   \
    X(AR_TI_DELTA, "arbor", "cc.timely.delta", VT_RATE0, ENGINE, NULL, 0, 0,                       \
      "timely: additive increase per update; 0: line rate / 100")                                  \
    X(AR_TI_TLOW, "arbor", "cc.timely.t_low", VT_TIME, ENGINE, NULL, 0, 0,                         \
      "timely: a loop below this always increases; 0: 3/2 base_rtt")                               \
    X(AR_TI_THIGH, "arbor", "cc.timely.t_high", VT_TIME, ENGINE, NULL, 0, 0,                       \
      "timely: a loop above this decreases in proportion; 0: 10 base_rtt")                         \
    X(AR_TI_INTERVAL, "arbor", "cc.timely.interval", VT_TIME, ENGINE, NULL, 0, 0,                  \
      "timely: least time between updates, and the gradient's normaliser; 0: base_rtt")            \
    X(AR_TI_HAI, "arbor", "cc.timely.hai_after", VT_U64, ENGINE, NULL, 1, 1000000,                 \
      "timely: non-positive gradients in a row before hyper increase")                             \
    X(AR_TI_HAIF, "arbor", "cc.timely.hai_factor", VT_U64, ENGINE, NULL, 1, 1000000,               \
      "timely: deltas per update in hyper increase")                                               \
    X(AR_TI_MINRATE, "arbor", "cc.timely.min_rate", VT_RATE0, ENGINE, NULL, 0, 0,                  \
      "timely: the least rate; 0: line rate / 1000")                                               \
    X(AR_SW_TARGET, "arbor", "cc.swift.base_target", VT_TIME, ENGINE, NULL, 0, 0,                  \
      "swift: the target loop before scaling; 0: 3/2 base_rtt")                                    \
    X(AR_SW_PERHOP, "arbor", "cc.swift.per_hop", VT_TIME, ENGINE, NULL, 0, 0,                      \
      "swift: target added per hop of the loop (cc.swift.hops)")                                   \
    X(AR_SW_HOPS, "arbor", "cc.swift.hops", VT_U64, ENGINE, NULL, 0, 1000,                         \
      "swift: hops of the loop for hop scaling")                                                   \
    X(AR_SW_FSRANGE, "arbor", "cc.swift.fs_range", VT_TIME_OFF, ENGINE, NULL, 0, 0,                \
      "swift: flow scaling's largest addition to the target; 0: base_rtt / 2; off: none")          \
    X(AR_SW_AI, "arbor", "cc.swift.ai", VT_REAL, ENGINE, NULL, 0, 0xFFFFFF,                        \
      "swift: additive increase per loop, credits")                                                \
    X(AR_SW_BETA, "arbor", "cc.swift.beta", VT_REAL, ENGINE, NULL, 0, 1,                           \
      "swift: decrease gain on (delay - target) / delay, (0, 1]")                                  \
    X(AR_SW_MAXMDF, "arbor", "cc.swift.max_mdf", VT_REAL, ENGINE, NULL, 0, 1,                      \
      "swift: largest decrease per loop, (0, 1)")                                                  \
    X(AR_SW_MINCWND, "arbor", "cc.swift.min_cwnd", VT_REAL, ENGINE, NULL, 0, 1,                    \
      "swift: least window, credits, (0, 1] (below 1: pacing)")                                    \
    X(AR_SW_FSMIN, "arbor", "cc.swift.fs_min_cwnd", VT_REAL, ENGINE, NULL, 0, 1e9,                 \
      "swift: the window at which flow scaling adds all of fs_range, > 0")                         \
    X(AR_SW_FSMAX, "arbor", "cc.swift.fs_max_cwnd", VT_REAL, ENGINE, NULL, 0, 1e9,                 \
      "swift: the window at which flow scaling adds nothing, above fs_min_cwnd")                   \
    X(AR_SW_STALL, "arbor", "cc.swift.stall_reset", VT_U64, ENGINE, NULL, 1, 1000,                 \
      "swift: stalls in a row (no completion between) that send the window to min_cwnd")           \
    X(AR_DC_CNP, "arbor", "cc.dcqcn.cnp_interval", VT_TIME, ENGINE, NULL, 1, 0,                    \
      "dcqcn: at most one rate cut per interval")                                                  \
    X(AR_DC_G, "arbor", "cc.dcqcn.g", VT_REAL, ENGINE, NULL, 0, 1, "dcqcn: alpha gain, (0, 1)")    \
    X(AR_DC_ALPHA0, "arbor", "cc.dcqcn.alpha_init", VT_REAL, ENGINE, NULL, 0, 1,                   \
      "dcqcn: alpha before the first cut, (0, 1]")                                                 \
    X(AR_DC_ALPHAT, "arbor", "cc.dcqcn.alpha_timer", VT_TIME, ENGINE, NULL, 1, 0,                  \
      "dcqcn: alpha decays once per this without a cut")                                           \
    X(AR_DC_RATET, "arbor", "cc.dcqcn.rate_timer", VT_TIME, ENGINE, NULL, 1, 0,                    \
      "dcqcn: one rate increase per this after a cut")                                             \
    X(AR_DC_BYTES, "arbor", "cc.dcqcn.byte_counter", VT_SIZE, ENGINE, NULL, 0, UINT64_MAX,         \
      "dcqcn: one rate increase per this many wire bytes after a cut; 0: 2 ms at line rate")       \
    X(AR_DC_F, "arbor", "cc.dcqcn.f", VT_U64, ENGINE, NULL, 1, 1000000,                            \
      "dcqcn: fast-recovery steps before additive increase")                                       \
    X(AR_DC_RAI, "arbor", "cc.dcqcn.rai", VT_RATE0, ENGINE, NULL, 0, 0,                            \
      "dcqcn: additive increase; 0: line rate / 1000")                                             \
    X(AR_DC_RHAI, "arbor", "cc.dcqcn.rhai", VT_RATE0, ENGINE, NULL, 0, 0,                          \
      "dcqcn: hyper increase; 0: line rate / 100")                                                 \
    X(AR_DC_MINRATE, "arbor", "cc.dcqcn.min_rate", VT_RATE0, ENGINE, NULL, 0, 0,                   \
      "dcqcn: the least rate; 0: line rate / 1000")                                                \
    X(AR_OS_TARGET, "arbor", "cc.oscar.target", VT_TIME, ENGINE, NULL, 0, 0,                       \
      "oscar: the loop time to hold; 0: 3/2 base_rtt")                                             \
    X(AR_OS_GAIN, "arbor", "cc.oscar.gain", VT_REAL, ENGINE, NULL, 0, 1,                           \
      "oscar: share of the step to the reference per loop, (0, 1]")                                \
    X(AR_OS_KAPPA, "arbor", "cc.oscar.kappa", VT_REAL, ENGINE, NULL, 0, 10,                        \
      "oscar: gradient damping, [0, 10]")                                                          \
    X(AR_OS_HEADROOM, "arbor", "cc.oscar.headroom", VT_REAL, ENGINE, NULL, 0, 0xFFFFFF,            \
      "oscar: credits kept beyond the target per host link, shared by its channels")               \
    X(AR_OS_GROWTH, "arbor", "cc.oscar.max_growth", VT_REAL, ENGINE, NULL, 1, 1000000,             \
      "oscar: the reference is at most this times the window, > 1")                                \
    X(AR_OS_MINCWND, "arbor", "cc.oscar.min_cwnd", VT_REAL, ENGINE, NULL, 0, 1,                    \
      "oscar: least window, credits, (0, 1] (below 1: pacing)")                                    \
    X(AR_SUBCH, "arbor", "subchannels", VT_U64, ENGINE, NULL, 1, 1024,                             \
      "trees per channel (static choice: offset mod subchannels)")                                 \
    X(AR_LEVELS, "arbor", "agg_levels", VT_LIST, "", NULL, 0, 0,                                   \
      "switch levels that may aggregate, e.g. 1,3 (empty: all; the root always does)")             \
    X(AR_PROFILE, "arbor", "profile", VT_ENUM, ENGINE, "auto|16|20", 0, 0,                         \
      "Arbor header: auto (20 B when a path has two aggregating tiers), 16 or 20")                 \
    X(AR_ROOT, "arbor", "root", VT_U64, ENGINE, NULL, 0, 255, "reduce, broadcast: the root rank")  \
    X(AR_EARLY, "arbor", "early_credit", VT_BOOL, ENGINE, NULL, 0, 0,                              \
      "credit a pull message of one offset before every member has registered (the runtime's "     \
      "default)")                                                                                  \
    X(AR_SWRES, "arbor", "switch_results", VT_BOOL, ENGINE, NULL, 0, 0,                            \
      "a one-offset AllReduce's credit carries the responder's input and the switch that "         \
      "completes it sends the result down itself (the runtime's default)")                         \
    X(AR_WIRECHECK, "arbor", "wire_check", VT_BOOL, ENGINE, NULL, 0, 0,                            \
      "round-trip every Arbor header through the codec; a mismatch fails the run")                 \
    X(AR_SKEW, "arbor", "skew", VT_TIME, ENGINE, NULL, 0, 0,                                       \
      "rank r calls the collective at workload.start + r x skew (skew_mode linear)")               \
    X(AR_SKEWMODE, "arbor", "skew_mode", VT_ENUM, ENGINE, "linear|random|lag", 0, 0,               \
      "random: rank starts uniform in [0, skew] (run.seed); lag: rank r handles packets r x skew " \
      "late")                                                                                      \
    X(AR_SUBMODE, "arbor", "subchannel_mode", VT_ENUM, ENGINE, "static|dynamic", 0, 0,             \
      "static: offset k on tree k mod subchannels; dynamic: docs/protocol.md section 9 (best "     \
      "recent completion time)")                                                                   \
    X(AR_FAIL, "arbor", "fail", VT_LIST, "", NULL, 0, 0,                                           \
      "links and switches that fail after the plan is built (as fabric.fail; trees keep them)")    \
    X(AR_JOBS, "arbor", "jobs", VT_U64, "1", NULL, 1, 128,                                         \
      "jobs: the ranks split in order into this many equal groups, each running the collective "   \
      "of workload.size; every switch has one slot pool shared by all jobs")                       \
    X(AR_JOBSTART, "arbor", "job_start", VT_TIMES, "", NULL, 0, 0,                                 \
      "each job's start after workload.start, one time per job in job order, e.g. 0,100us,250us "  \
      "(empty: all at workload.start)")                                                            \
    X(AR_JOBSIZE, "arbor", "job_size", VT_SIZES, "", NULL, 0, 0,                                   \
      "each job's buffer, one size per job in job order, e.g. 64MiB,16MiB (empty: workload.size)") \
    X(AR_JOBRANKS, "arbor", "job_ranks", VT_COUNTS, "", NULL, 0, 0,                                \
      "each job's ranks (2..256), one count per job, taken in turn from the ranks in "             \
      "workload.hosts order (empty: arbor.jobs equal groups)")                                     \
    X(AR_PARTITION, "arbor", "slot_partition", VT_ENUM, "shared", "shared|static", 0, 0,           \
      "shared: a switch's slots go to whichever job's credit comes next; static: job k has only "  \
      "its slots / arbor.jobs of them at every switch")                                            \
    X(AR_INNER, "arbor", "inner_ranks", VT_U64, ENGINE, NULL, 0, 256,                              \
      "workload.backend arbor: an AllReduce over more than 256 ranks runs as ReduceScatter in "    \
      "groups of this many consecutive ranks, AllReduce across them, AllGather in them (0: the "   \
      "divisor nearest the square root)")                                                          \
    X(AR_PIECES, "arbor", "inner_pieces", VT_U64, ENGINE, NULL, 1, 64,                             \
      "workload.backend arbor: such an AllReduce's buffer in this many pieces, piece p+1's "       \
      "ReduceScatter beside piece p's AllGather")                                                  \
    X(AR_BACKGROUND, "arbor", "background", VT_PATH, "", NULL, 0, 0,                               \
      "transport flows beside the collective: a CSV trace as workload.file (src,dst,bytes,"        \
      "start_us[,sport]) run on [transport]; empty: none (JSON background)")                       \
    X(AR_CALLS, "arbor", "calls", VT_U64, "1", NULL, 1, 100000,                                    \
      "calls of the collective each rank makes, one after another (each a job; arbor.jobs 1): "    \
      "the JSON's cct_us is then the timed calls' mean (JSON arbor.calls)")                        \
    X(AR_WARMUP, "arbor", "warmup", VT_U64, "0", NULL, 0, 99999,                                   \
      "of arbor.calls, the first ones left out of cct_us (below arbor.calls)")                     \
    X(AR_HCALL, "arbor", "host_call", VT_TIME, "0", NULL, 0, 0,                                    \
      "a rank's own time per call: each call starts this long after its previous one ended (the "  \
      "first after workload.start)")                                                               \
    X(AR_HPKT, "arbor", "host_pkt", VT_TIME, "0", NULL, 0, 0,                                      \
      "a host's time per Arbor packet it receives, one at a time (0: none)")                       \
    X(AR_HRATE, "arbor", "host_rate", VT_RATE0, "0", NULL, 0, 0,                                   \
      "and each packet's wire bytes at this rate (0: none)")                                       \
    X(AR_HWAKE, "arbor", "host_wake", VT_TIME, "0", NULL, 0, 0,                                    \
      "a packet reaching a host idle for longer than arbor.spin waits this much more (0: none)")   \
    X(AR_SPKT, "arbor", "switch_pkt", VT_TIME, "0", NULL, 0, 0,                                    \
      "a switch's time per Arbor packet, one at a time (0: none)")                                 \
    X(AR_SRATE, "arbor", "switch_rate", VT_RATE0, "0", NULL, 0, 0,                                 \
      "and each packet's wire bytes at this rate (0: none)")                                       \
    X(AR_SWAKE, "arbor", "switch_wake", VT_TIME, "0", NULL, 0, 0,                                  \
      "a packet reaching a switch idle for longer than arbor.spin waits this much more (0: none)") \
    X(AR_CORES, "arbor", "cores", VT_U64, "0", NULL, 0, 1024,                                      \
      "cores the hosts and switches share: a packet waits for a free one (0: a core each)")        \
    X(AR_SPIN, "arbor", "spin", VT_TIME, "0", NULL, 0, 0,                                          \
      "a host or switch idle for longer than this sleeps: host_wake, switch_wake (0: at once)")    \
    X(RUN_SEED, "run", "seed", VT_U64, ENGINE, NULL, 0, UINT64_MAX,                                \
      "the run's seed (ECN marking; the 0 seeds above)")                                           \
    X(RUN_STOP, "run", "stop", VT_TIME, "1s", NULL, 0, 0,                                          \
      "stop at this simulated time; 0: when the fabric is idle")                                   \
    X(RUN_SAMPLE, "run", "sample", VT_TIME, "10us", NULL, 0, 0,                                    \
      "interval of queue and utilisation samples; 0: none")                                        \
    X(RUN_PCAP, "run", "pcap", VT_PATH, "", NULL, 0, 0,                                            \
      "write the frames of run.pcap_ports to this pcap file (empty: none)")                        \
    X(RUN_PCAPPORTS, "run", "pcap_ports", VT_LIST, "all", NULL, 0, 0,                              \
      "links to capture: all, host:hN, switch:NAME, link:A-B[/K], up:NAME:Q, down:NAME:D, "        \
      "port:NAME:P (both directions)")                                                             \
    X(RUN_SAMPLEPORTS, "run", "sample_ports", VT_LIST, "", NULL, 0, 0,                             \
      "links whose ports get their own utilisation and queue series (--csv: PREFIX-ports.csv), "   \
      "as pcap_ports; empty: none")                                                                \
    X(RUN_PCAPSNAP, "run", "pcap_snaplen", VT_U64, "0", NULL, 0, 65535,                            \
      "bytes kept of each captured frame; 0: whole frames (a cut frame keeps its length)")         \
    X(RUN_QPORDER, "run", "qp_order", VT_BOOL, "off", NULL, 0, 0,                                  \
      "count data packets reaching their host behind a later packet of the same QP (JSON "         \
      "qp_order)")                                                                                 \
    X(RUN_WATCH, "run", "watch", VT_LIST, "", NULL, 0, 0,                                          \
      "links whose queues and bytes per party (Arbor jobs, transport flows) are reported, both "   \
      "directions, as pcap_ports (JSON watch; empty: none)")                                       \
    X(RUN_FAULTWIN, "run", "fault_window", VT_TIME, "1ms", NULL, 1, 0,                             \
      "fault events (fail_at, restore_at, reboot_at): the goodput window before each and after "   \
      "its recovery (JSON faults)")                                                                \
    X(RUN_ORDER, "run", "order", VT_ENUM, ENGINE, "global|local", 0, 0,                            \
      "events of one time: local, in the order of what they happen to, with ECN draws per port "   \
      "(what a partitioned run computes, --partition: the same figures however many ranks); "      \
      "global, in the order they were scheduled (docs/partition.md)")                              \
    X(LAB_SCALE, "lab", "scale", VT_STR, "auto", NULL, 0, 0,                                       \
      "arbor lab: factor in (0, 1] on every link rate; auto: the host links at 1 Gbit/s "          \
      "(docs/lab.md; the simulator ignores [lab])")                                                \
    X(LAB_ITERS, "lab", "iters", VT_U64, "5", NULL, 1, 100000, "arbor lab: timed calls")           \
    X(LAB_WARMUP, "lab", "warmup", VT_U64, "1", NULL, 0, 100000,                                   \
      "arbor lab: untimed calls before them")                                                      \
    X(LAB_CHECK, "lab", "check", VT_BOOL, "on", NULL, 0, 0,                                        \
      "arbor lab: check every call's output against the reference")                                \
    X(LAB_DEADLINE, "lab", "deadline", VT_TIME, "120s", NULL, 1, 0,                                \
      "arbor lab: the whole run's bound (a call's deadline is at most 30 s of it)")                \
    X(LAB_SPIN, "lab", "spin", VT_TIME_AUTO, "auto", NULL, 0, 10000000000u,                        \
      "arbor lab: ranks and switches look again for up to this long (0, or up to 10ms such as "    \
      "50us) before blocking for their socket (ARBOR_SPIN, arbor switch --spin); auto: 50us "      \
      "while the lab's processes are at most 4 a core, else 0")

enum scn_vt {
    VT_STR,
    VT_LIST,
    VT_TIMES,  /* lists (comma-separated, continuation lines joined) of times, */
    VT_SIZES,  /* sizes */
    VT_COUNTS, /* and whole numbers, each checked when set */
    VT_PATH,
    VT_SIZE,
    VT_TIME,
    VT_TIME_OFF,  /* a time, or "off" (UINT64_MAX) */
    VT_TIME_AUTO, /* a time, or "auto" (0) */
    VT_RATE,
    VT_RATE0,
    VT_U64,
    VT_BOOL,
    VT_REAL,
    VT_ENUM
};

#define SCN_ID(id, ...) K_##id,
enum scn_key { SCN_KEYS(SCN_ID) K_COUNT };
#undef SCN_ID

struct scn_value {
    char *text;
    char *file; /* where it was set: a file (line 1 on), a command-line option ("-s",
                   "--pcap": line 0), or NULL (default) */
    unsigned line;
    char *dir; /* directory relative paths resolve against; NULL: cwd */
};

struct arb_scenario {
    struct scn_value v[K_COUNT];
    char *file;
    arb_logger log; /* a run's warnings (arb_scenario_set_logger) */
};

/* "FILE:LINE: section.key", "-s section.key", "OPTION (section.key)" (a
 * value an option other than -s set) or "section.key". */
void scn_where(const arb_scenario *sc, enum scn_key k, char *buf, size_t len);
/* The key table (scenario.c) for the INI reader (ini.c): key k of `sec`.`key`
 * or -1; a known section?; " (did you mean SECTION.KEY?)" for the nearest
 * key a typo away, in sec or else every section, or ""; `s` checked for key
 * k (0, or an ARB_E* code with msg); key k set to text, where it was set
 * (ARB_ENOMEM); does key k take a list (continuation lines)? */
int scn_find_key(const char *sec, const char *key);
int scn_known_section(const char *sec);
const char *scn_key_hint(const char *sec, const char *key, char *buf, size_t len);
int scn_check_value(int k, const char *s, char *msg, size_t len);
int scn_set_value(arb_scenario *sc, int k, const char *text, const char *file, unsigned line,
                  const char *dir);
int scn_key_is_list(int k);
/* Key k's default as the key table writes values: the table's, or for an
 * ENGINE key the engine's (defaults.c; NULL for a key the table has). */
const char *scn_key_default(enum scn_key k);
const char *scn_engine_default(enum scn_key k);
/* The ENGINE keys' values into an engine's configuration, cfg (which the
 * engine's *_config_default() filled): every key whose default is a field
 * of it, but a time left at auto (transport.rto_low, rto_high), which the
 * scenario derives. */
enum scn_engine {
    SCN_ENG_TOPO,
    SCN_ENG_SIM,
    SCN_ENG_ARBOR,
    SCN_ENG_PLAN,
    SCN_ENG_WORKLOAD,
    SCN_ENG_HCOLL,
    SCN_ENG_ITER
};
void scn_engine_apply(const arb_scenario *sc, enum scn_engine eng, void *cfg);
/* An error about key k: "WHERE: message" into err (as arb_errf); returns code. */
int scn_key_fail(const arb_scenario *sc, enum scn_key k, char *err, size_t errlen, int code,
                 const char *msg);
/* Typed values (checked when set, so these cannot fail). */
const char *scn_str(const arb_scenario *sc, enum scn_key k);
uint64_t scn_u64(const arb_scenario *sc, enum scn_key k);
double scn_real(const arb_scenario *sc, enum scn_key k);
/* The keys that take one of a set of names (choices.c): each name's value
 * (a name may have the value of another, as roce gbn's). scn_choice: key
 * k's value by its name (checked when set, so it cannot fail for a key
 * choices.c knows; 0 for another). scn_choice_parse: the value of `name`
 * for key k into *value, 0 or ARB_ENOENT. scn_choice_name: the first name of
 * `value`, or NULL. scn_choices: key k's table, ended by a NULL name (NULL
 * where the engine names its values: the collectives). */
struct scn_choice {
    const char *name;
    int value;
};
int scn_choice(const arb_scenario *sc, enum scn_key k);
int scn_choice_parse(enum scn_key k, const char *name, int *value);
const char *scn_choice_name(enum scn_key k, int value);
const struct scn_choice *scn_choices(enum scn_key k);
/* A path key resolved against its directory: malloc'd, NULL when empty. */
char *scn_path(const arb_scenario *sc, enum scn_key k);
/* The values of a VT_TIMES (ps), VT_SIZES (bytes) or VT_COUNTS key
 * (malloc'd, NULL and 0 when empty; checked when set). ARB_ENOMEM. */
int scn_list(const arb_scenario *sc, enum scn_key k, uint64_t **out, uint32_t *n);
/* 1 when key k holds its default (the JSON echoes some keys only when set). */
int scn_is_default(const arb_scenario *sc, enum scn_key k);

/* Routing schemes (schemes.c): installs cfg->route and what the scheme needs. */
struct scn_route {
    void *ctx;
    void (*destroy)(void *ctx);
    char spec[96]; /* canonical, for the report */
};
int scn_route_make(struct scn_route *r, arb_topo *t, const char *spec, uint64_t seed,
                   arb_sim_config *cfg, char *err, size_t errlen);

/* Port lists (ports.c): mark[p] = 1 for both directions of every link the
 * comma-separated list names (all, host:hN, switch:NAME, link:A-B[/K],
 * up:NAME:Q, down:NAME:D, port:NAME:P); scn_port_list returns the marked
 * ports in order (malloc'd). Errors ARB_EPARSE, ARB_ENOENT, ARB_ENOMEM with
 * the item in msg. */
int scn_port_mark(const arb_topo *t, const char *list, uint8_t *mark, char *msg, size_t len);
int scn_port_list(const arb_topo *t, const char *list, uint32_t **ports, unsigned *n_ports,
                  char *msg, size_t len);

/* steer.c: fabric.link (set the links' rate and delay), routing.steer
 * (wraps cfg->route; free after the simulator) and run.qp_order (chains
 * a tap into cfg). Errors ARB_EPARSE, ARB_ENOENT, ARB_ENOMEM with msg. */
int scn_links_apply(arb_topo *t, const char *text, char *msg, size_t len);
struct scn_steer;
int scn_steer_make(struct scn_steer **out, const arb_topo *t, const char *text, arb_sim_config *cfg,
                   char *msg, size_t len);
void scn_steer_free(struct scn_steer *st);
/* failat.c: fabric.fail_at, failures at times during the run. Parsing
 * checks every item against the topology (ARB_EPARSE, ARB_ENOENT,
 * ARB_ENOMEM with msg); apply fails, in the topology, every entry due by
 * `now`, refreshes the load balancer's router and tells the simulator. */
enum scn_ev_kind { SCN_EV_FAIL, SCN_EV_RESTORE, SCN_EV_REBOOT, SCN_EV_REBOOT_UP };
struct scn_failure {
    arb_time t;
    char *items;    /* comma-separated, as fabric.fail */
    unsigned order; /* as written (ties keep it; fail_at's first, then restore_at's, reboot_at's) */
    char text[32];  /* the time as written, for messages */
    uint8_t kind;   /* enum scn_ev_kind; REBOOT_UP: the end of a reboot's down time */
    arb_time down;  /* REBOOT: down= (0: the switch stays on the fabric) */
    unsigned event; /* its fault event (scn_recovery): REBOOT_UP its reboot's */
    unsigned up_of; /* REBOOT_UP: its reboot's order */
};
struct scn_recovery;
struct scn_failat {
    struct scn_failure *e;
    unsigned n, cap, next;
    unsigned n_events;        /* fault events: entries but REBOOT_UP */
    struct scn_recovery *rec; /* told of each event as it is applied (NULL: none) */
};
/* Add the entries of fabric.fail_at (SCN_EV_FAIL), restore_at (SCN_EV_RESTORE)
 * or reboot_at (SCN_EV_REBOOT, and a REBOOT_UP for each down=) from `text`,
 * in time order with those added before; fa starts zeroed. Errors
 * (ARB_EPARSE, ARB_ENOENT, ARB_ENOMEM with msg) leave the entries as they
 * were. */
int scn_failat_add(struct scn_failat *fa, const arb_topo *t, const char *text, int kind, char *msg,
                   size_t len);
arb_time scn_failat_next(const struct scn_failat *fa); /* ARB_TIME_NEVER when none is left */
int scn_failat_apply(struct scn_failat *fa, arb_topo *t, arb_lb *lb, arb_sim *s, arb_time now,
                     char *msg, size_t len);
void scn_failat_free(struct scn_failat *fa);

/* recovery.c: what each fault event did to the run (JSON faults, docs/scenarios.md,
 * "Faults and recovery"). Readings of the goodput counters are taken at each
 * event and at the end of each slice of the run. */
struct scn_recovery;
int scn_recovery_new(struct scn_recovery **out, const struct scn_failat *fa, arb_time window,
                     int arbor);
void scn_recovery_event(struct scn_recovery *rc, const struct scn_failure *f, arb_sim *s,
                        int slots_lost);
void scn_recovery_read(struct scn_recovery *rc, arb_sim *s, arb_time now);
/* The run is over: start, finish (ARB_TIME_NEVER: not done) of the collective. */
void scn_recovery_finish(struct scn_recovery *rc, arb_sim *s, arb_time start, arb_time finish);
int scn_recovery_failed(const struct scn_recovery *rc); /* 1: out of memory on the way */
struct cJSON;
void scn_recovery_json(const struct scn_recovery *rc, struct cJSON *j);
void scn_recovery_free(struct scn_recovery *rc);
struct scn_order;
int scn_order_make(struct scn_order **out, const arb_topo *t, arb_sim_config *cfg);
/* Packets overtaken (or retransmitted) and packets counted; ARB_ENOMEM if
 * the count stopped for want of memory. */
int scn_order_get(const struct scn_order *o, uint64_t *ooo, uint64_t *pkts);
/* A partitioned run (collective, after it): every part's counts summed,
 * as each QP's packets reach their host through one part's ports (checked
 * by partition.c); an error of any part is every part's. 0 or the operations'
 * ARB_E*. */
int scn_order_merge(struct scn_order *o, const arb_sim_part_ops *ops);
void scn_order_free(struct scn_order *o);

/* arbor_config.c: the [arbor] settings every Arbor collective of the scenario
 * shares -- the simulator's (plan, start apart) and the planner's (ranks,
 * bytes, collective, root apart) -- checked, the error naming the key. */
struct arb_plan_config;
/* arbor.subchannels above the distinct trees the fabric offers the group
 * of `hosts`: a warning (workload.backend = arbor iterations). */
void scn_arbor_warn_subchannels(const arb_scenario *sc, const arb_topo *t,
                                const struct arb_plan_config *base, const uint32_t *hosts,
                                uint32_t n);
int scn_arbor_config(const arb_scenario *sc, arb_sim_arbor_config *ac, struct arb_plan_config *pc,
                     char *err, size_t errlen);
/* hosts.c: "0-7,16,20-23" into hosts (malloc'd); ARB_EPARSE / ARB_EINVAL with msg. */
int scn_parse_hosts(const char *s, uint32_t n_hosts, uint32_t **out, uint32_t *n, char *msg,
                    size_t len);
/* hostwl.c: workload.kind host_collective and iteration ([host]); the
 * iteration's per-rank figures (NULL, 0 for another kind); their JSON. */
int scn_host_workload(const arb_scenario *sc, const arb_topo *t, const arb_workload_config *wc,
                      arb_workload **w, char *err, size_t errlen);
int scn_host_ranks(const arb_workload *w, arb_iter_rank **out, uint32_t *n);
struct cJSON;
void scn_host_json(struct cJSON *j, const arb_workload_result *wr, const arb_iter_rank *ir,
                   uint32_t n);
/* watch.c: run.watch. make: the ports of `list` (as pcap_ports, both
 * directions of each link), their bytes counted by a tap chained into cfg
 * in bins of `bin` (0: 10 us); errors as scn_port_list. jobs: the parties
 * are Arbor jobs 0..jobs-1, job k's global channels ending at ch_end[k],
 * and the transport flows (call before the run; ARB_ESTATE after,
 * ARB_ENOMEM). sample: every port's queue at t (ARB_ENOMEM). end: each
 * party's active window [from, to) (to ARB_TIME_NEVER: the run's end; a
 * party that sent nothing is ignored); returns the tap's error, if any.
 * json: the "watch" array into obj. */
struct scn_watch;
int scn_watch_make(struct scn_watch **out, const arb_topo *t, const char *list, arb_time bin,
                   arb_sim_config *cfg, char *msg, size_t len);
int scn_watch_jobs(struct scn_watch *w, const uint32_t *ch_end, uint32_t jobs);
int scn_watch_sample(struct scn_watch *w, const arb_sim *s, arb_time t);
int scn_watch_end(struct scn_watch *w, const arb_sim *s, const arb_time *from, const arb_time *to);
/* A partitioned run (collective, after it, before end): every part's
 * bytes summed (a port's packets start in its own part only); a tap's
 * error in any part is every part's. */
int scn_watch_merge(struct scn_watch *w, const arb_sim_part_ops *ops);
void scn_watch_json(const struct scn_watch *w, struct cJSON *obj);
void scn_watch_free(struct scn_watch *w);

#endif
