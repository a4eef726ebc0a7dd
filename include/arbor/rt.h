/** @file
 * arbor/rt.h - the real runtime: collectives over UDP through software
 * aggregation switches (docs/runtime.md).
 *
 * A communicator is one rank of a job: (rank, size, switch address, job id,
 * secret). It joins its switch with a JOIN whose MAC covers (job, rank,
 * size, host base, counter, nonce) under a key derived from the job's
 * secret (docs/runtime.md section 4), then runs the six collectives on user buffers of the
 * six dtypes, blocking or not. The protocol is the library's: every call
 * plans the collective (plan.h), and the rank driver (src/host) runs this
 * rank's responders and requesters; packets go over one UDP socket to the
 * switch, which holds the aggregator engine (agg.h) and the planner's tree
 * entries. Several switch processes form a multi-tier tree (a PGFT,
 * topo.h).
 *
 * Progress happens inside the library's calls (a blocking collective,
 * arb_rt_wait, arb_rt_test, arb_rt_progress): there is no thread. Engines
 * of a finished call keep answering (their ENDs) whenever a later call
 * progresses, and arb_rt_comm_free drains them.
 *
 * Every wait is bounded: a call fails with ARB_ETIMEDOUT after
 * cfg.timeout, or earlier when an engine gives up (a peer that never
 * answers its repair or END); arb_rt_errmsg names what was lost. Packets
 * that do not decode, come from anyone but the switch, or name unknown
 * channels are dropped and counted (arb_rt_get_stats), never an error.
 *
 * Thread safety: a communicator and its requests are used by one thread at
 * a time; distinct communicators are independent.
 */
#ifndef ARBOR_RT_H
#define ARBOR_RT_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"
#include "arbor/cc.h"
#include "arbor/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The switch's default UDP port (the Arbor channel port). */
#define ARB_RT_PORT_DEFAULT ARB_UDP_PORT_DEFAULT
/** The default fabric: one switch with up to 256 hosts. */
#define ARB_RT_TOPO_DEFAULT "star:256"
/** A call's default deadline (ARBOR_TIMEOUT). */
#define ARB_RT_TIMEOUT_DEFAULT (30 * ARB_PS_PER_S)
/** Secrets are 1..256 bytes of text. */
#define ARB_RT_SECRET_MAX 256

/** A rank's configuration (arb_rt_config_default, arb_rt_config_env). */
typedef struct arb_rt_config {
    uint32_t rank; /**< ARBOR_RANK: 0 <= rank < size */
    uint32_t size; /**< ARBOR_SIZE: 2 <= size <= 256 */
    /** ARBOR_SWITCH: "HOST:PORT" (or "HOST": port 17470) of the switch this
     * rank's host hangs from; HOST is a dotted IPv4 address or a name. */
    const char *sw;
    uint32_t job;       /**< ARBOR_JOB: the job id */
    const char *secret; /**< ARBOR_SECRET: the job's secret, text */
    const char *topo;   /**< ARBOR_TOPO: the fabric (topo.h spec); NULL: star:256 */
    uint32_t host_base; /**< ARBOR_HOST_BASE: rank r is host base + r (default 0) */
    const char *bind;   /**< ARBOR_BIND: local "HOST[:PORT]"; NULL: any */
    arb_time timeout;   /**< ARBOR_TIMEOUT: a call's deadline (default 30 s) */
    /** ARBOR_WINDOW: credits per channel; 0 (auto, the default): the
     * loop's worth at the channel's share of the link (line_rate over the
     * channels the rank takes part in, times the base loop: base_rtt, or
     * the one learnt), at least 4 and at most 16 (arb_cc_loop_window) */
    uint32_t window;
    uint32_t payload; /**< ARBOR_PAYLOAD: bytes per packet (default 8192) */
    /** ARBOR_TIMER_MIN: the engines' timer floor (default 10 ms: every call
     * has fresh engines whose first timers know no round trip, and ranks
     * that share cores stall for milliseconds; a lower floor turns those
     * stalls into spurious losses and retries) */
    arb_time timeout_min;
    /** The engines' timer ceiling and their bypass-repair rounds (default
     * 200 ms and 64, at most 64). No backed-off wait passes the ceiling,
     * so together they set the outage a collective survives (a switch
     * restarting: about repair_tries x timeout_max, 12.8 s), the loss it
     * survives (a repair round per ceiling until every member's answer got
     * through: docs/runtime.md section 5), and how long a dead peer takes
     * to be named when the deadline is longer. */
    arb_time timeout_max;
    uint32_t repair_tries; /**< see timeout_max */
    double drop;           /**< ARBOR_DROP: drop this fraction of sends (tests) */
    uint64_t seed;         /**< ARBOR_SEED: the drop generator's seed */
    /** ARBOR_GSO=0: no UDP GSO / GRO, plain sendmmsg / recvmmsg (captures on
     * loopback see a GSO send unsegmented, so they need it off). */
    int no_gso;
    /** ARBOR_SWITCH_RESULTS=0: a one-packet AllReduce's result goes down from
     * its responder, as every other result, instead of from the switch that
     * completed it (seeded credits, docs/protocol.md section 5; default 0:
     * the switch sends it, a pass less on a small call's path). */
    int responder_results;
    /** ARBOR_SPIN: before a call blocks for its socket, look again without
     * blocking for up to this long, yielding the core between looks (a
     * reply due within microseconds then costs no sleep and wake-up).
     * 0 (default): block at once. At most 10 ms. */
    arb_time spin;
    /** ARBOR_CC: the responders' congestion controller (cc.h), one per
     * channel and call. ARB_CC_FIXED (default) keeps ARBOR_WINDOW credits a
     * channel, no rate gate; ARB_CC_DISABLED the same; ARB_CC_TIMELY,
     * ARB_CC_SWIFT, ARB_CC_DCQCN, ARB_CC_OSCAR adapt to the loop they
     * measure (docs/runtime.md section 5.1). */
    arb_cc_kind cc;
    /** ARBOR_LINE_RATE: the rank's link in bit/s, shared by the channels it
     * takes part in as the adaptive kinds' line rate (default 100 Gbit/s;
     * 1 Mbit/s .. ARB_RATE_MAX) */
    uint64_t line_rate;
    /** ARBOR_BASE_RTT: the unloaded loop the adaptive kinds scale from;
     * 0 (default): measured, twice the round trip of the JOIN that got the
     * WELCOME (a credit's loop passes the switch twice) until a call's
     * controllers have sampled a shorter loop, then the shortest sampled;
     * at least 1 us */
    arb_time base_rtt;
    /** ARBOR_IO: the socket's I/O, ARB_RT_IO_MMSG (default) or
     * ARB_RT_IO_URING. io_uring where this library was built without
     * liburing is an error (ARB_EINVAL, "not built"); where the kernel
     * refuses a ring the communicator warns (logger) and uses sendmmsg
     * (arb_rt_stats.io_uring says which). */
    int io;
    arb_logger logger; /**< where the communicator reports (none by default) */
} arb_rt_config;

/** The sockets' I/O (arb_rt_config.io, arb_rt_switch_config.io). */
typedef enum arb_rt_io {
    ARB_RT_IO_MMSG = 0, /**< sendmmsg / recvmmsg, ppoll (default) */
    ARB_RT_IO_URING = 1 /**< io_uring (liburing), where built and allowed */
} arb_rt_io;

/** 1 when io_uring can be used here (built with liburing, and the kernel
 * gives this process a ring); else 0 with why in `why` ("not built ...",
 * or the kernel's refusal and kernel.io_uring_disabled; `why` may be NULL).
 * Never fails: the answer is 1 or 0. */
int arb_rt_io_uring_available(char *why, size_t len);

/** Defaults: rank 0 of 2, switch 127.0.0.1:17470, job 1, no secret, 30 s. */
void arb_rt_config_default(arb_rt_config *cfg);

/**
 * Read the ARBOR_* variables above into cfg (those unset keep cfg's
 * values; the strings point into the environment, which must not change
 * while cfg is used). Errors: ARB_EPARSE
 * naming the variable and its rule in err.
 */
int arb_rt_config_env(arb_rt_config *cfg, char *err, size_t errlen);

/** A communicator: one rank of a job (opaque). */
typedef struct arb_rt_comm arb_rt_comm;
/** A non-blocking call in flight, freed by arb_rt_wait (opaque). */
typedef struct arb_rt_request arb_rt_request;

/**
 * Open the socket, join the switch (JOIN, answered by an authenticated
 * WELCOME) and return the communicator. Blocks up to cfg.timeout.
 * Errors: ARB_EINVAL (a field out of range, no secret), ARB_EPARSE (an
 * address or topology that does not parse), ARB_EIO (socket), ARB_ESTATE
 * (the switch refused: unknown job or bad MAC), ARB_ETIMEDOUT (no
 * answer), ARB_ENOMEM. err names the problem.
 */
int arb_rt_comm_new(arb_rt_comm **out, const arb_rt_config *cfg, char *err, size_t errlen);

/** Finish lingering engines (bounded by the timeout), leave, free. NULL
 * is allowed. Returns 0, or ARB_ETIMEDOUT when some engine could not
 * finish (the communicator is freed anyway). */
int arb_rt_comm_free(arb_rt_comm *c);

/** This rank. */
uint32_t arb_rt_rank(const arb_rt_comm *c);
/** The job's ranks. */
uint32_t arb_rt_size(const arb_rt_comm *c);

/** Check a switch address as ARBOR_SWITCH takes it ("HOST[:PORT]", the
 * host a dotted quad or a name that resolves): 0, or ARB_EPARSE with the
 * rule in err. */
int arb_rt_addr_check(const char *addr, char *err, size_t errlen);

/** The last error of the communicator in words, owned by c and valid until
 * its next call: "" when none, and again once a new collective starts (a
 * failed call's message does not outlive the next call). */
const char *arb_rt_errmsg(const arb_rt_comm *c);

/**
 * Collectives (MPI's semantics; counts in elements, every rank passes the
 * same count, dtype, op and root). Buffers must stay valid until the call
 * completes. In-place: send == recv is allowed for AllReduce and Reduce.
 *
 *   allreduce      recv[i] = op over ranks of send[i], i < count
 *   reduce         at root, recv as allreduce; recv ignored elsewhere
 *   reducescatter  send holds size x count; rank r's recv = block r of
 *                  the reduction (count elements)
 *   broadcast      buf (count elements) of root to every rank
 *   allgather      send holds count; recv holds size x count, block r =
 *                  rank r's send
 *   barrier        returns once every rank has entered
 *
 * Errors: ARB_EINVAL (NULL buffer with count > 0, dtype, op or root out of
 * range, op NOP for a reduction; or another rank's packets of this call
 * carry another dtype or op), ARB_ETIMEDOUT (the deadline passed or a peer
 * never answered; arb_rt_errmsg says which), ARB_ESTATE (16 calls already
 * in flight), ARB_ENOMEM. A failed call does not poison the communicator:
 * the next call starts afresh (the job may not finish it, if a peer died).
 */
int arb_rt_allreduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                     arb_op op);
/** Reduce to `root` (see arb_rt_allreduce). Errors: as arb_rt_allreduce. */
int arb_rt_reduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                  arb_op op, uint32_t root);
/** ReduceScatter (see arb_rt_allreduce). Errors: as arb_rt_allreduce. */
int arb_rt_reducescatter(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                         arb_op op);
/** Broadcast from `root` (see arb_rt_allreduce). Errors: as arb_rt_allreduce. */
int arb_rt_broadcast(arb_rt_comm *c, void *buf, size_t count, arb_dtype dt, uint32_t root);
/** AllGather (see arb_rt_allreduce). Errors: as arb_rt_allreduce. */
int arb_rt_allgather(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt);
/** Barrier (see arb_rt_allreduce). Errors: as arb_rt_allreduce. */
int arb_rt_barrier(arb_rt_comm *c);

/** Non-blocking forms: start the call and return its request (*req). At
 * most 16 calls in flight per communicator (ARB_ESTATE beyond); calls
 * already waited for whose engines still owe answers count too, and a new
 * call progresses them until one finishes (ARB_ETIMEDOUT if none does
 * within the deadline). The request belongs to the caller until
 * arb_rt_wait frees it; the buffers stay in use until then. Errors: those
 * of arb_rt_allreduce, ARB_ESTATE as above. */
int arb_rt_iallreduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                      arb_op op, arb_rt_request **req);
/** Non-blocking arb_rt_reduce. Errors: as arb_rt_iallreduce. */
int arb_rt_ireduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                   arb_op op, uint32_t root, arb_rt_request **req);
/** Non-blocking arb_rt_reducescatter. Errors: as arb_rt_iallreduce. */
int arb_rt_ireducescatter(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                          arb_op op, arb_rt_request **req);
/** Non-blocking arb_rt_broadcast. Errors: as arb_rt_iallreduce. */
int arb_rt_ibroadcast(arb_rt_comm *c, void *buf, size_t count, arb_dtype dt, uint32_t root,
                      arb_rt_request **req);
/** Non-blocking arb_rt_allgather. Errors: as arb_rt_iallreduce. */
int arb_rt_iallgather(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                      arb_rt_request **req);
/** Non-blocking arb_rt_barrier. Errors: as arb_rt_iallreduce. */
int arb_rt_ibarrier(arb_rt_comm *c, arb_rt_request **req);

/** Wait for the request and free it. Errors: the call's (as arb_rt_allreduce). */
int arb_rt_wait(arb_rt_request *req);
/** Progress; *done = 1 when the request completed (then wait returns at
 * once). Errors: the call's (as arb_rt_allreduce). */
int arb_rt_test(arb_rt_request *req, int *done);
/** Progress every call of c without waiting. Errors: ARB_EINVAL for a NULL c
 * (a call's own error is its request's). */
int arb_rt_progress(arb_rt_comm *c);

/** A communicator's counters (arb_rt_get_stats). */
typedef struct arb_rt_stats {
    uint64_t calls;          /**< collectives completed */
    uint64_t tx_pkts;        /**< datagrams sent */
    uint64_t rx_pkts;        /**< datagrams received */
    uint64_t tx_bytes;       /**< bytes sent */
    uint64_t rx_bytes;       /**< bytes received */
    uint64_t dropped_tx;     /**< sends dropped on purpose (cfg.drop) */
    uint64_t rx_undecodable; /**< datagrams that failed to decode */
    uint64_t rx_strangers;   /**< datagrams from anyone but the switch */
    uint64_t rx_unknown;     /**< packets for no call or channel of this rank */
    uint64_t rx_late;        /**< packets for a call already freed */
    /** JOINs sent again because the switch did not know us (its NOTICE:
     * it restarted) */
    uint64_t rejoins;
    uint64_t send_errors; /**< sendmmsg failures (EAGAIN, ENOBUFS) */
    uint64_t gso_sends;   /**< sends of several datagrams at once (UDP GSO) */
    /* This rank's responders, over the calls freed so far (endpoint.h): */
    uint64_t credits;        /**< normal credits sent */
    uint64_t retries;        /**< credits of an offset given up as lost */
    uint64_t spurious;       /**< of those, losses that were not */
    uint64_t tail_replays;   /**< tails replayed to members whose END was late */
    uint64_t repair_credits; /**< bypass repair credits */
    uint64_t waits;          /**< times a call blocked for its socket (ppoll) */
    uint64_t spin_hits;      /**< waits that spinning (cfg.spin) found data for */
    /** JOINs sent again after 50 ms with nothing from the switch inside a
     * call (it may have restarted, or the peers are merely slow) */
    uint64_t keepalive_joins;
    /** The controllers' updates that lowered a window or rate, over the
     * calls freed so far (cfg.cc; 0 for FIXED and DISABLED) */
    uint64_t cc_decreases;
    uint64_t cc_increases; /**< and those that raised one */
    arb_time base_rtt;     /**< the loop the adaptive kinds scale from (cfg.base_rtt) */
    /** 1 when the socket's I/O goes through io_uring (ARBOR_IO=uring and
     * the kernel allowed it) */
    uint64_t io_uring;
    /** Arbor datagrams received marked CE (by a switch's ECN marking:
     * arb_rt_ecn), which the congestion controller of ARBOR_CC=dcqcn reads */
    uint64_t ce_marks;
    /** calls whose responder's controller continued from an earlier call's
     * (an adaptive ARBOR_CC: a controller outlives its call) */
    uint64_t cc_continued;
    /** first credits that came before this rank's call started (the
     * responder credits a message of one offset before registration: docs/protocol.md
     * section 5), kept and answered when the call started */
    uint64_t early_credits;
    /** the window this rank's last channel of more than one offset
     * started with (cfg.window, or what auto chose for it; 0 before
     * any) */
    uint32_t window;
} arb_rt_stats;

/** Copy the communicator's counters into *out. */
void arb_rt_get_stats(const arb_rt_comm *c, arb_rt_stats *out);

/** The busbw factor of nccl-tests for a collective over n ranks: the
 * former name of arb_coll_busbw_factor (base.h), kept for source
 * compatibility. */
#define arb_rt_busbw_factor(coll, n) arb_coll_busbw_factor((coll), (n))

/* ------------------------------------------------------------------ */
/* The software switch                                                  */
/* ------------------------------------------------------------------ */

#define ARB_RT_SWITCH_MAX_JOBS 64    /**< jobs one switch admits */
#define ARB_RT_SWITCH_MAX_PEERS 64   /**< peer switches one switch knows */
#define ARB_RT_SWITCH_MAX_THREADS 64 /**< threads one switch serves with */
/** The switch's re-credit timer (local repair, docs/runtime.md section 5),
 * by the timer only (datagrams of several sockets: no port order): a rank
 * descheduled for a time slice is not lost. */
#define ARB_RT_SWITCH_RECREDIT_MIN (2 * ARB_PS_PER_MS)
#define ARB_RT_SWITCH_RECREDIT_MAX (8 * ARB_PS_PER_MS) /**< see ARB_RT_SWITCH_RECREDIT_MIN */

/**
 * The switch's ECN marking (docs/runtime.md, section 5.1): RED on the bytes
 * still waiting in its socket's receive queue when it has read a batch
 * (the kernel's count, SO_MEMINFO), applied to every Arbor datagram of
 * that batch. Below kmin nothing is marked; from kmin to kmax a datagram
 * is marked CE with a probability rising linearly from 0 to pmax; from
 * kmax on every one is. A mark on a request travels up in its aggregate, a
 * mark on a credit comes back in the requests that answer it (the
 * requesters echo it), so the responder's congestion controller sees
 * every mark on its loop. Only DCQCN (ARBOR_CC=dcqcn) reacts to marks.
 */
typedef struct arb_rt_ecn {
    int on;        /**< 1: mark (the default); 0: never */
    uint32_t kmin; /**< queued bytes where marking starts (default 100 KB) */
    uint32_t kmax; /**< queued bytes from which every datagram is marked (default 400 KB) */
    double pmax;   /**< the marking probability just below kmax (default 0.2) */
} arb_rt_ecn;

#define ARB_RT_ECN_KMIN_DEFAULT 100000u /**< bytes, as the simulator's switch.kmin */
#define ARB_RT_ECN_KMAX_DEFAULT 400000u /**< bytes, as the simulator's switch.kmax */
#define ARB_RT_ECN_PMAX_DEFAULT 0.2     /**< as the simulator's switch.pmax */

/**
 * Parse an ECN setting (--ecn, the `ecn` key): "off", "on" (the defaults),
 * or "KMIN,KMAX,PMAX" with sizes as arb_parse_size reads them
 * ("100KB,400KB,0.2", "64K,1M,0.5"), KMIN <= KMAX <= 1 GB, 0 <= PMAX <= 1.
 * ARB_EPARSE with the rule in err otherwise; *out is untouched then.
 */
int arb_rt_ecn_parse(const char *spec, arb_rt_ecn *out, char *err, size_t errlen);

/** A software switch's configuration (arb_rt_switch_config_default). */
typedef struct arb_rt_switch_config {
    const char *listen; /**< "HOST:PORT" (default 127.0.0.1:17470) */
    const char *topo;   /**< the fabric (default star:256) */
    /** This switch's node: level (1 = leaves) and index within the level
     * (default 1, 0). */
    uint32_t level;
    uint32_t index; /**< see level */
    /** Other switches of the fabric: node (level, index) and address. */
    uint32_t n_peers;
    struct {
        uint32_t level, index;
        const char *addr;
    } peers[ARB_RT_SWITCH_MAX_PEERS]; /**< n_peers of them */
    /** Jobs admitted: id and secret. */
    uint32_t n_jobs;
    struct {
        uint32_t id;
        const char *secret;
    } jobs[ARB_RT_SWITCH_MAX_JOBS]; /**< n_jobs of them */
    uint32_t slots;                 /**< aggregator slots (default 4096) */
    double drop;                    /**< drop this fraction of sends (tests) */
    uint64_t seed;                  /**< the drop generator's seed */
    int no_gso;                     /**< 1: no UDP GSO / GRO (--no-gso) */
    /** Before blocking for its socket, look again without blocking for up
     * to this long, yielding the core between looks (--spin; 0: block at
     * once, the default; at most 10 ms). */
    arb_time spin;
    /** Threads serving the switch (--threads; 0 or 1: one, the default; at
     * most ARB_RT_SWITCH_MAX_THREADS). With n > 1 each thread has its own
     * socket, bound to the same address with SO_REUSEPORT, and its own
     * aggregator of `slots` slots, and owns the channels whose (job +
     * channel) mod n is its index; a classic BPF program on the socket
     * group makes the kernel hand each datagram to its channel's owner
     * (docs/runtime.md, section 7). arb_rt_switch_run runs the other n - 1
     * threads while it serves. */
    uint32_t threads;
    /** The sockets' I/O (--io): ARB_RT_IO_MMSG (default) or ARB_RT_IO_URING,
     * as arb_rt_config.io (not built: ARB_EINVAL; the kernel refuses: a
     * warning, and sendmmsg). */
    int io;
    arb_rt_ecn ecn;    /**< ECN marking (--ecn; on, 100 KB / 400 KB / 0.2 by default) */
    arb_logger logger; /**< where the switch reports (none by default) */
} arb_rt_switch_config;

/** Fill *cfg with the defaults its fields name (no job, no peer). */
void arb_rt_switch_config_default(arb_rt_switch_config *cfg);

/** A software aggregation switch (opaque). */
typedef struct arb_rt_switch arb_rt_switch;

/** Bind and build. Errors: ARB_EINVAL, ARB_EPARSE (addresses, topology,
 * a node not in it), ARB_EIO (bind), ARB_ENOMEM; err names it. */
int arb_rt_switch_new(arb_rt_switch **out, const arb_rt_switch_config *cfg, char *err,
                      size_t errlen);
/** Close the socket and free the switch (NULL is ignored). */
void arb_rt_switch_free(arb_rt_switch *s);

/** Add a peer switch after creation (when its address is known only then,
 * as with port 0), not while arb_rt_switch_run runs. Errors: as
 * arb_rt_switch_new's for cfg.peers. */
int arb_rt_switch_add_peer(arb_rt_switch *s, uint32_t level, uint32_t index, const char *addr,
                           char *err, size_t errlen);

/** Serve packets for up to `wait` (0: what is queued now; ARB_TIME_NEVER:
 * until *stop becomes nonzero, checked at least every 100 ms; `stop` may be
 * set from a signal handler or, with an atomic store, from another thread;
 * the calling thread alone reads it, atomically). With
 * cfg.threads n > 1 the call starts n - 1 threads, serves with them, and
 * joins them before it returns (with wait 0 it serves every socket once
 * in the calling thread). The first call warns (cfg.logger,
 * ARB_LOG_WARN) of every switch linked to this one in the fabric that is
 * no peer: what must cross that link is dropped. Errors: ARB_EINVAL for a
 * NULL s, ARB_ENOMEM when a thread could not start (those started are
 * stopped first); what goes wrong with a packet is counted, never an
 * error. Not thread-safe: one thread runs a switch at a time, and reads
 * its counters (arb_rt_switch_get_stats) only between runs. */
int arb_rt_switch_run(arb_rt_switch *s, arb_time wait, volatile int *stop);

/** The UDP port the switch listens on (useful with port 0). */
uint16_t arb_rt_switch_port(const arb_rt_switch *s);

/** A switch's counters (arb_rt_switch_get_stats). */
typedef struct arb_rt_switch_stats {
    uint64_t rx_pkts;       /**< datagrams received */
    uint64_t tx_pkts;       /**< datagrams sent */
    uint64_t rx_bytes;      /**< bytes received */
    uint64_t tx_bytes;      /**< bytes sent */
    uint64_t joins;         /**< JOINs accepted (retransmissions not counted) */
    uint64_t join_rejected; /**< JOINs refused (unknown job, bad MAC or fields, replay) */
    /** of the accepted, JOINs of a rank already joined, from a new address
     * (it restarted) */
    uint64_t rejoins;
    uint64_t undecodable;     /**< failed the runtime or Arbor decoder */
    uint64_t strangers;       /**< from an address that is no member or peer */
    uint64_t unknown_job;     /**< a job not admitted here */
    uint64_t unknown_channel; /**< a channel or tree not in the job's plan */
    uint64_t unroutable;      /**< a destination whose address is unknown */
    uint64_t dropped_tx;      /**< sends dropped on purpose (cfg.drop) */
    uint64_t send_errors;     /**< sendmmsg failures */
    uint64_t gso_sends;       /**< sends of several datagrams at once (UDP GSO) */
    uint64_t credits;         /**< credits this switch aggregates for */
    uint64_t requests;        /**< normal requests climbing a tree through it */
    uint64_t aggregates;      /**< aggregates emitted */
    uint64_t agg_miss;        /**< AGG_MISS sent */
    uint64_t agg_drops;       /**< credits and requests the aggregator dropped */
    uint64_t copies;          /**< extra copies made by replication */
    uint64_t recredits;       /**< credits sent again to ranks still missing (local repair) */
    uint64_t adoptions;       /**< later attempts' credits that took over a partial slot:
                               *   only the ranks missing from it were asked again */
    uint64_t replays;         /**< later attempts' credits answered with a complete slot's
                               *   aggregate (local repair) */
    /** seeded aggregates (small AllReduce calls) whose result this switch
     * also sent down to the members itself (docs/protocol.md section 5) */
    uint64_t results_down;
    uint64_t jobs;  /**< jobs known now */
    uint64_t waits; /**< times it blocked for its socket (ppoll) */
    /** JOINs of a rank already joined, from its address, with a newer
     * counter (a rank that heard nothing for 50 ms inside a call) */
    uint64_t keepalive_joins;
    /** Arbor datagrams a thread handled for a channel another thread owns
     * (cfg.threads > 1: a GSO or GRO train that mixed channels, or no
     * steering program); always 0 with one thread */
    uint64_t foreign;
    /** threads whose socket's I/O goes through io_uring */
    uint64_t io_uring;
    /** datagrams it marked CE (cfg.ecn; one that came marked is not counted) */
    uint64_t ecn_marks;
    /** the most bytes seen waiting in a socket's receive queue after a
     * batch was read (the kernel's count, buffers' overhead included; the
     * largest over the threads; 0 where the kernel does not tell) */
    uint64_t queue_peak;
    /** receive batches after which the queue was read, and the bytes seen
     * queued after them, summed (their ratio is the mean queue a batch
     * left behind) */
    uint64_t queue_reads;
    uint64_t queue_sum; /**< see queue_reads */
} arb_rt_switch_stats;

/** Copy the switch's counters, summed over its threads, into *out. */
void arb_rt_switch_get_stats(const arb_rt_switch *s, arb_rt_switch_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_RT_H */
