/** @file
 * arbor/sim_arbor.h - Arbor collectives in the packet simulator
 * (docs/arbor-sim.md): the engines of every rank and switch driven by
 * sim.h's fabric, their configuration, results and counters. sim.h
 * includes it; it may be included alone.
 */
#ifndef ARBOR_SIM_ARBOR_H
#define ARBOR_SIM_ARBOR_H

#include "arbor/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Arbor collectives (docs/arbor-sim.md)                                */
/* ------------------------------------------------------------------ */

struct arb_plan;

/** Rank `rank` of job `job` is done (its condition on every engine met),
 * reported after the event that did it, as a flow's completion is: the
 * callback may add flows and jobs, enter ranks and call arb_sim_stop_at. */
typedef void (*arb_sim_arbor_rank_fn)(void *ctx, arb_sim *s, int job, uint32_t rank, arb_time now);

/**
 * The time the hosts and switches of an Arbor run spend on its packets
 * (docs/arbor-sim.md, "Host cost"): 0 in every field (the default) is none,
 * and the run is what it was without it. A node handles the Arbor packets
 * that reach it one at a time, in arrival order: a packet is handled (its
 * engine, or the switch, sees it) `*_pkt` plus its wire bytes at `*_rate`
 * after the node is free and the packet has arrived; a packet reaching a
 * node that has done nothing for longer than `spin` (handled no packet
 * and, a host, sent none) waits `*_wake` more first: the node was asleep.
 */
typedef struct arb_sim_arbor_cost {
    arb_time host_pkt;    /**< a host's time per packet it receives */
    uint64_t host_rate;   /**< and the packet's wire bytes at this rate, bits/s (0: none) */
    arb_time host_wake;   /**< a host's wake-up after more than `spin` idle */
    arb_time switch_pkt;  /**< a switch's time per packet */
    uint64_t switch_rate; /**< and the packet's wire bytes at this rate, bits/s (0: none) */
    arb_time switch_wake; /**< a switch's wake-up after more than `spin` idle */
    arb_time spin;        /**< idle time after which a node sleeps (0: at once) */
    /** The cores the nodes share (0: as many as nodes): a packet is handled
     * on the core free first, once the node and a core are both free
     * (the processes of one machine, as arbor lab runs them). */
    uint32_t cores;
} arb_sim_arbor_cost;

/**
 * One Arbor collective on the simulated fabric: the plan's channels run
 * their responder and requester engines (endpoint.h) on the hosts, the
 * switches the plan marks aggregate with an arb_agg each, and tree tables
 * per (channel, subchannel) steer credits down (replicated, one copy per
 * child port) and requests up; everything else is unicast through the
 * simulator's routing. Packets carry their decoded arb_hdr in a side
 * table indexed by packet index, and a payload buffer (from a pool) only
 * in values mode.
 */
typedef struct arb_sim_arbor_config {
    const struct arb_plan *plan; /**< borrowed; must outlive the simulator */
    int values;                  /**< 1: real payloads, checked; 0 (default): header-only */
    /** The engines' settings (endpoint.h, arb_ep_settings), their defaults
     * but for what the simulator derives from the fabric when 0 (the
     * default): ep.window, credits outstanding per channel
     * (arb_sim_arbor_window); ep.timeout_min, the timers' floor (twice the
     * fabric's loop, arb_sim_arbor_loop); ep.retry_min, the first REGISTER
     * / END retry (the timers' floor). ep.payload is every job's bytes per
     * offset. The simulator sets ep.header_only from `values` and
     * ep.tail_probe from `local_repair`. */
    arb_ep_settings ep;
    uint32_t slots; /**< slots per aggregating switch (default 1024) */
    /** 1 (the default): the switches repair locally (agg.h local_repair,
     * docs/protocol.md section 6.4); 0: every attempt is end to end. Every
     * job of a simulator must agree (the pools are shared). */
    int local_repair;
    /** The switches' re-credit timers (agg.h recredit_min, recredit_max,
     * recredit_order), by default the aggregator's (20 us, 1 ms, on);
     * recredit_min at least ARB_EP_TIMER_MIN, recredit_max from it to 1 s.
     * Every job of a simulator must agree (the pools are shared). */
    arb_time recredit_min;
    arb_time recredit_max; /**< see recredit_min */
    int recredit_order;    /**< see recredit_min */

    arb_time start;  /**< every rank calls the collective at this time (0) */
    arb_time skew;   /**< rank r calls it at start + r x skew (0: all at start) */
    int skew_random; /**< 1: at start + a uniform time in [0, skew], drawn from seed;
                        2 (lag): all start at `start`, and rank r handles every packet
                        it receives r x skew after its arrival */
    uint64_t seed;   /**< the skew's generator (skew_random) */
    int wire_check;  /**< round-trip every header through the codec */
    /** Congestion control: one controller per channel, at its responder
     * (cc.h). Default FIXED with `ep.window` and no rate gate (cc.spacing).
     * line_rate and credit_bytes are the fabric's (the channel's share of
     * its host's link, a full frame); base_rtt too when cc_base_rtt is 0
     * (arb_sim_arbor_cc_loop); oscar.headroom is a host link's, each of
     * its channels keeping its share; SWIFT and OSCAR start from `ep.window`. */
    arb_cc_kind cc_kind;
    arb_cc_config cc;     /**< see cc_kind */
    arb_time cc_base_rtt; /**< see cc_kind */
    /** The slot pools: 0 or 1 (default), every switch's pool of `slots` is
     * shared by every job; P > 1, it is cut into P static parts of
     * slots / P each, job k using part k mod P only (never another's
     * idle slots). The first job's, as `slots`. */
    uint32_t partitions;
    /** 1: no rank starts at `start`; each starts when arb_sim_arbor_enter
     * says (a collective called on demand); the job's start is the first
     * entry. Not with skew_random 2 (lag). */
    int deferred;
    /** Optional: each rank's completion (ctx: rank_ctx). */
    arb_sim_arbor_rank_fn on_rank_done;
    void *rank_ctx; /**< passed to on_rank_done; borrowed */
    /** The nodes' time per packet and wake-ups: the first job's, every
     * job's (a node is one). With skew_random 2 (lag), a host's lag
     * follows its cost. */
    arb_sim_arbor_cost cost;
} arb_sim_arbor_config;

/** Fill *cfg with the defaults its fields name (no plan). */
void arb_sim_arbor_config_default(arb_sim_arbor_config *cfg);

/**
 * Add a collective (a job); call again for more jobs on the same fabric,
 * before or during a run (from a callback). Returns the job's index (0 for
 * the first, then 1, 2, ...). Every switch where some job aggregates has
 * one arb_agg, one slot pool shared by every port and every job (or, with
 * `partitions`, one per part); packets name their job's channel by a
 * channel index global over the jobs (job k's channel c is the sum of the
 * earlier jobs' channels plus c). A host's channels are named on the wire
 * by its address and a UDP port: a job takes the first port (from
 * 17470, ARB_UDP_PORT_DEFAULT) that none of its hosts has given an earlier
 * job, so jobs on disjoint hosts share 17470 and jobs on one host differ
 * (arb_sim_arbor_result.port). Errors: ARB_EINVAL (no plan, a plan for
 * another topology, a field out of range, a switch with more than 256
 * ports that aggregates, partitions of no slot, deferred with lag; for a
 * later job: a payload, slots, partitions, mode or re-credit timers
 * other than the first job's, which the shared pools fix, or lag on a host another job uses),
 * ARB_ERANGE (a
 * host out of UDP ports), ARB_ENOMEM.
 */
int arb_sim_arbor_add(arb_sim *s, const arb_sim_arbor_config *cfg);

/**
 * Rank `rank` of a deferred job calls the collective at `at` (the current
 * time when earlier): its engines start then. Call before or during a run
 * (from a callback). An entry a callback makes for later than the event
 * starts by an event of its own at `at`, the rank's host unaware of it
 * until then (what the host does meanwhile does not depend on when the
 * callback ran). Errors: ARB_EINVAL (no such job, a job that is not
 * deferred, a rank out of range or already entered), ARB_ESTATE (a
 * partitioned simulator's callback entering at or before the end of the
 * window just run: the run fails), ARB_ENOMEM.
 */
int arb_sim_arbor_enter(arb_sim *s, int job, uint32_t rank, arb_time at);

/**
 * The unloaded loop of a plan's trees on this fabric: a credit up to the
 * root and down to a requester, the request up and the aggregate down (4 x
 * the root's level hops), each hop the slowest link's propagation and one
 * full frame's serialisation. Twice this is the timers' default floor.
 * 0 for a NULL s or plan.
 */
arb_time arb_sim_arbor_loop(const arb_sim *s, const struct arb_plan *plan, uint32_t payload);

/**
 * The unloaded loop of a collective, which the controllers scale from (their
 * base_rtt): the fabric's loop (above) plus one full frame from every
 * channel a host takes part in, serialised on its link: the loop when every
 * channel has one credit (the least window) in flight and nothing else
 * shares the fabric. The credits of all channels can meet at a host's
 * downlink; the requests they trigger leave the host at the pace its
 * credits arrived (its uplink has the same rate), so they do not queue a
 * second time. 0 for a NULL s or plan.
 */
arb_time arb_sim_arbor_cc_loop(const arb_sim *s, const struct arb_plan *plan, uint32_t payload);

/** The least window arb_sim_arbor_window gives (see there). */
#define ARB_SIM_ARBOR_WINDOW_MIN 4

/**
 * The window a channel gets when none is set (arb_sim_arbor_config.window
 * 0): the loop's worth of credits at the channel's share of its host's link
 * (arb_sim_arbor_cc_loop x (link rate / channels a host takes part in) /
 * one frame, rounded up), and never below ARB_SIM_ARBOR_WINDOW_MIN, the
 * window measured best where every host takes part in every channel (an
 * AllReduce on star-32, where the loop's worth is 2). A collective of one
 * channel (Reduce, Broadcast) gets the credits its single channel needs to
 * fill a host link: 12 on star-32. 0 for a NULL s or plan.
 */
uint32_t arb_sim_arbor_window(const arb_sim *s, const struct arb_plan *plan, uint32_t payload);

/** Why a run could not finish: an engine gave up (arb_sim_run returned
 * ARB_ETIMEDOUT). */
typedef struct arb_sim_arbor_failure {
    int failed;              /**< 1: an engine gave up */
    uint32_t job;            /**< its job */
    uint32_t channel;        /**< its channel (within the job) */
    int requester;           /**< 1: a requester (REGISTER or END unanswered); 0: the responder */
    int end_wait;            /**< responder: every offset committed, ENDs missing */
    uint32_t offset;         /**< responder: the offset that could not commit */
    uint32_t subchannel;     /**< its last tree */
    uint32_t attempts;       /**< its credits in the network */
    uint32_t tries;          /**< repair credits (or END-wait rounds) unanswered */
    arb_time waited;         /**< how long the last of them waited */
    uint32_t responder_host; /**< the channel's responder */
    uint32_t n_missing;      /**< hosts that never answered (requester: 1, itself) */
    uint32_t missing_hosts[16]; /**< the first 16 of them */
} arb_sim_arbor_failure;

/** The first engine failure of the run (failed 0 when none). ARB_EINVAL: no
 * collective added, or a NULL argument. */
int arb_sim_arbor_failure_get(const arb_sim *s, arb_sim_arbor_failure *out);

/** A partitioned run: the event the first engine gave up in (the earliest
 * over the parts in the local order), its time and target, for
 * arb_sim_part_stop_after. ARB_ENOENT: none gave up, not partitioned, or
 * inside a run. */
int arb_sim_arbor_failure_point(const arb_sim *s, arb_time *t, uint32_t *event);

/** 1 when every engine of every job is finished (all ENDs acknowledged,
 * every rank done), else 0. Never fails. */
int arb_sim_arbor_done(const arb_sim *s);

/** Jobs added (0: none). Never fails. */
int arb_sim_arbor_jobs(const arb_sim *s);

/** Ranks done so far and ranks in all, over every job, cheaply (for
 * progress reports; the full figures, invariants included, are
 * arb_sim_arbor_result_get's). ARB_EINVAL: no collective added. */
int arb_sim_arbor_progress(const arb_sim *s, uint32_t *ranks_done, uint32_t *ranks);

/** The Arbor collectives' figures (arb_sim_arbor_result_get, arb_sim_arbor_job_result). */
typedef struct arb_sim_arbor_result {
    int done;            /**< every engine finished */
    uint32_t ranks;      /**< ranks of the group */
    uint32_t ranks_done; /**< of which done */
    arb_time start;      /**< when the ranks called the collective */
    arb_time finish;     /**< when the last rank was done (ARB_TIME_NEVER if not) */
    arb_time cct;        /**< finish - start */
    uint64_t bytes;      /**< message bytes per rank (the buffer S) */
    double goodput_gbps; /**< bytes x 8 / cct */
    /* engines (arb_responder_stats, arb_requester_stats, summed) */
    uint64_t commits;        /**< offsets committed */
    uint64_t repair_commits; /**< of which by the repair path */
    uint64_t repair_credits; /**< repair credits sent (repeats included) */
    uint64_t timeouts;       /**< attempts presumed lost by a timer */
    uint64_t agg_miss;       /**< AGG_MISS for the attempt in flight */
    uint64_t late_masters;   /**< complete masters of an earlier attempt that committed */
    uint64_t tail_replays;   /**< tail results replayed after the END wait */
    /* recovery (arb_responder_stats) */
    uint64_t retries;      /**< credits of attempt >= 1 */
    uint64_t losses_order; /**< attempts presumed lost by order */
    uint64_t losses_timer; /**< attempts presumed lost by timer */
    uint64_t spurious;     /**< of those, found spurious */
    uint64_t bypass;       /**< offsets sent to the bypass repair */
    uint64_t deaths;       /**< trees declared dead */
    uint64_t probes;       /**< probes of dead trees */
    uint64_t revivals;     /**< trees revived */
    /* congestion control, over the responders' controllers */
    uint64_t cc_increases;  /**< updates that raised the gates */
    uint64_t cc_decreases;  /**< updates that lowered them */
    uint64_t cc_ce_samples; /**< samples with CE */
    uint64_t cc_stalls;     /**< stalls reacted to */
    double cc_window_mean;  /**< the mean window gate at the end */
    uint64_t credits;       /**< normal credits sent */
    uint64_t requests;      /**< normal DATA_REQUESTs sent */
    uint64_t results;       /**< results delivered to requesters */
    uint64_t registers;     /**< REGISTERs sent, retries included */
    uint64_t ends;          /**< ENDs sent, retries included */
    /* switches */
    uint64_t agg_inputs;      /**< contributions counted into slots */
    uint64_t agg_aggregates;  /**< aggregates emitted */
    uint64_t agg_drops;       /**< requests the aggregators dropped */
    uint64_t agg_passthrough; /**< fan-in 1 */
    uint32_t peak_live_slots; /**< the most any switch held */
    uint32_t peak_job_slots;  /**< the most slots this job held live at one switch at once
                                 (the whole: the most of any job) */
    uint32_t port;            /**< a job's channels' UDP port (the whole: 0) */
    uint64_t agg_allocations; /**< slots allocated by credits */
    uint64_t agg_reclaimed;   /**< of which took a slot still live (pool too small) */
    /* local repair (docs/protocol.md section 6.4) */
    uint64_t agg_adoptions; /**< later attempts' credits that took over an earlier's slot */
    uint64_t agg_replays;   /**< credits answered with an aggregate made before */
    uint64_t agg_held;  /**< credits dropped as HELD (copies; later attempts on a queued path) */
    uint64_t recredits; /**< credits the switches sent again to missing children */
    arb_time slot_time; /**< summed over switches: slots live (allocation to completion) */
    arb_time partial_slot_time; /**< summed: slots partially filled (first input to completion) */
    /** normal credit sent -> offset committed, at the responders (the loop R): mean */
    arb_time rtt_mean;
    arb_time rtt_max; /**< and maximum */
    /** wire bytes of Arbor packets sent upward on links of tier t (0: host links, t: level
     * t <-> t+1; tiers above 3 are added to 3) */
    uint64_t tier_up_bytes[4];
    uint64_t tier_down_bytes[4]; /**< the same, downward */
    uint64_t copies;             /**< extra copies made by replication */
    uint64_t checked;            /**< values mode: elements checked */
    uint64_t wrong;              /**< values mode: of which wrong */
    int correct;          /**< values mode: 1 when every rank is done with every element right
                             (some checked unless there is no data); -1 in header-only mode */
    uint64_t wire_checks; /**< wire check: headers round-tripped through the codec */
    uint64_t wire_errors; /**< wire check: of which failed to round-trip or came back different */
    /* invariants (0 in a good run) */
    uint64_t inv_dup_commit;   /**< an offset committed twice */
    uint64_t inv_count;        /**< a commit whose count is not R */
    uint64_t inv_agg_check;    /**< arb_agg_check failures */
    uint64_t inv_missing;      /**< results a requester lacks at the end (when done) */
    uint64_t inv_early;        /**< a rank done before all of its output was in */
    uint64_t inv_conservation; /**< nodes whose packet balance does not hold */
    uint64_t dead_subchannels; /**< dynamic selection: trees the responders stopped using */
    uint64_t invariant_errors; /**< the sum of the six */
    /* fabric: Arbor packets */
    uint64_t pkts;             /**< sent by hosts and switches (emissions and copies) */
    uint64_t wire_bytes;       /**< their wire bytes */
    uint32_t bytes_per_packet; /**< simulator memory per in-flight packet */
} arb_sim_arbor_result;

/**
 * The figures so far (invariants are evaluated now). ARB_EINVAL: no job.
 * One job: its figures (arb_sim_arbor_job_result). Several: the whole --
 * counts summed over the jobs (ranks, bytes, engines, packets, invariants),
 * done when every job is, start the first start, finish the last finish,
 * cct = finish - start, goodput_gbps the sum of the jobs' goodputs (each
 * its bytes x 8 / its own cct: the aggregate rate while they all run);
 * the switch counters (agg_*, slot times, peak_live_slots, inv_agg_check)
 * once per switch, and inv_conservation once for the fabric. Partitioned
 * (arb_sim_partition): collective, every part calls it between runs in the
 * same order and gets the whole fabric's figures; an error of the
 * operations is returned.
 */
int arb_sim_arbor_result_get(const arb_sim *s, arb_sim_arbor_result *r);

/**
 * Job `job`'s figures: its engines, its packets (pkts, wire and tier
 * bytes), its invariants. The switch counters are those of the switches
 * where it aggregates -- their pools are shared, so they include other
 * jobs' use of the same switches -- and inv_conservation is the fabric's
 * (every job's packets together). ARB_EINVAL: no such job. Partitioned:
 * collective, as arb_sim_arbor_result_get.
 */
int arb_sim_arbor_job_result(const arb_sim *s, int job, arb_sim_arbor_result *r);

/** Job `job`'s rank count (0 for no such job). */
uint32_t arb_sim_arbor_job_ranks(const arb_sim *s, int job);
/** Rank `rank`'s host and the time it was done (ARB_TIME_NEVER while it is
 * not). Errors: ARB_EINVAL: no such job or rank. */
int arb_sim_arbor_rank(const arb_sim *s, int job, uint32_t rank, uint32_t *host, arb_time *done);

/**
 * Switch `node` reboots now (between runs: at the end of the last run, the
 * clock moving there as for arb_sim_fabric_changed; or from a callback): every
 * aggregator pool of it is emptied (arb_agg_reset: slots, owners and
 * contributions gone) and no job holds a slot there any more. What is in
 * flight goes on; a request for a slot of before finds it free or taken
 * by a newer credit, and the responders credit those offsets again. The
 * switch forwards as before: a reboot that also takes it off the fabric
 * for a while is a failure of the switch (arb_topo_fail_node) and its
 * restore, with arb_sim_fabric_changed. Returns the slots that were live
 * (0 where no job aggregates), or ARB_EINVAL: no Arbor collective, or not
 * a switch. Collective in a partitioned simulator, between runs (the
 * switch's part holds its slots; every part returns the whole's count).
 */
int arb_sim_arbor_reboot(arb_sim *s, uint32_t node);

/** Cumulative figures over every job, cheap enough to read between runs.
 * Payload bytes count what values mode carries (header-only mode: what it
 * would). */
typedef struct arb_sim_arbor_counters {
    uint64_t committed_bytes; /**< payload of the offsets the responders committed (once each) */
    uint64_t resent_bytes;    /**< payload hosts sent again: packets of a retry (attempt >= 1)
                                 or of the bypass repair */
    uint64_t resends;         /**< of those, credits: retries and repair credits, each a
                                 responder's answer to a loss it found (by order, timer,
                                 AGG_MISS, or a tree found dead) */
    arb_time resend_at;       /**< the first of those credits at or after the watch's
                                 time (arb_sim_arbor_watch); ARB_TIME_NEVER: none yet */
} arb_sim_arbor_counters;

/** Watch for the first retry or repair credit sent at or after `from`
 * (from now on: arb_sim_arbor_counters.resend_at; a new watch replaces
 * the last). In a partitioned simulator every part calls it alike, and
 * resend_at, read between runs, is the earliest part's as of the last
 * run. ARB_EINVAL: no Arbor collective. */
int arb_sim_arbor_watch(arb_sim *s, arb_time from);
/** ARB_EINVAL: no Arbor collective, or a NULL out. */
int arb_sim_arbor_counters_get(const arb_sim *s, arb_sim_arbor_counters *out);

/** The aggregation slots live now: summed over the switches, and the most in
 * one switch. ARB_EINVAL: no Arbor collective. */
int arb_sim_arbor_slots(const arb_sim *s, uint32_t *live, uint32_t *max_live);

/**
 * The decoded Arbor header of the packet with index `index` (a tap's
 * arb_sim_pkt_info.index) while it is alive, for captures and checks.
 * Errors: ARB_ENOENT when no Arbor collective runs or the packet is not an
 * Arbor packet.
 */
int arb_sim_arbor_header(const arb_sim *s, uint32_t index, arb_hdr *h);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_SIM_ARBOR_H */
