/** @file
 * arbor/cc.h - congestion control of a channel.
 *
 * Only the responder runs congestion control; switches keep no congestion
 * state and at most mark CE. A controller turns completion-time samples
 * into two gates on credit issue:
 *
 *   - the window gate, arb_cc_window(): normal credits outstanding (issued
 *     and not yet committed) the responder may have, an integer >= 1;
 *   - the rate gate, arb_cc_min_spacing(): the least time between two
 *     consecutive normal credits (0: no rate gate).
 *
 * Repair credits come from their own budget and pass neither gate.
 *
 * A sample is the completion time of a normal credit's first completion:
 * from the credit's first send to the arrival of its root aggregate (credit
 * down, consumption, request up, fan-in wait, aggregate back): the slowest
 * branch's closed loop, not a single round trip. Its CE bit says whether
 * that aggregate carried CE (an aggregate carries CE when any of its inputs
 * did).
 *
 * Like every engine, a controller is sans-IO: it reads no clock and owns no
 * timer; each entry point takes the current time, and a controller with
 * timers (DCQCN) says when it next wants to be called. The responder calls
 *
 *   arb_cc_on_send(cc, bytes, now)       when a normal credit leaves
 *   arb_cc_on_ack(cc, &sample, now)      on every commit of a normal credit
 *   arb_cc_on_loss(cc, by_timer, now)    when a normal credit is presumed lost
 *   arb_cc_on_expiry(cc, now)            once now >= arb_cc_next_expiry(cc)
 *
 * and reads the gates before each credit:
 *
 *   if (outstanding < arb_cc_window(cc) && now >= last_credit + arb_cc_min_spacing(cc))
 *       issue a credit
 *
 * The older calls arb_cc_on_sample() and arb_cc_on_timeout() remain as thin
 * wrappers. Every entry point first runs the timer events due at `now`, so a
 * driver that calls arb_cc_on_expiry late (or never) sees the same state as
 * one that calls it on time, as soon as it calls anything.
 *
 * Kinds (docs/cc.md has each rule, its parameters and their defaults):
 *   ARB_CC_DISABLED  a fixed window (cfg.window) and no rate gate; for
 *                    debugging. Nothing it observes changes the gates.
 *   ARB_CC_FIXED     a given spacing (cfg.spacing) and window (cfg.window);
 *                    for isolation experiments. Nothing changes the gates.
 *   ARB_CC_TIMELY    rate from the gradient of the loop time ("TIMELY:
 *                    RTT-based Congestion Control for the Datacenter").
 *                    Gates: spacing from the rate; window = the loop's
 *                    worth at line rate (below).
 *   ARB_CC_SWIFT     window from the loop time against a target ("Swift:
 *                    Delay is Simple and Effective for Congestion Control
 *                    in the Datacenter"). A window below one credit becomes
 *                    pacing: window 1 and a spacing of srtt / cwnd.
 *   ARB_CC_DCQCN     rate from CE marks ("Congestion Control for
 *                    Large-Scale RDMA Deployments"): a CE sample stands for
 *                    a CNP; alpha and rate-increase timers, a byte counter
 *                    fed by arb_cc_on_send. Gates: spacing from the rate;
 *                    window = the loop's worth at line rate (below).
 *   ARB_CC_OSCAR     the project's own: once per loop the window steps
 *                    toward a reference amount in flight, the measured
 *                    delivery rate times the target loop time (what was in
 *                    flight scaled by target over measured loop), the step
 *                    damped when the loop time is already moving its way.
 *                    Paced: spacing = loop / window.
 *
 * Losses: the adaptive controllers take congestion from delay or CE, never
 * from a loss alone: in this transport a lost credit is repaired and random
 * loss (per link, compounded over a whole tree) would otherwise collapse
 * them. A loss inferred from order is counted and ignored. A timer loss is
 * counted, and when no credit has completed for twice the larger of the
 * smoothed loop time and the spacing (the loop stalled rather than one
 * credit being lost), the controller backs off once per loop (TIMELY and
 * Oscar halve, Swift cuts by max_mdf and after swift.stall_reset stalls in
 * a row drops to its least window, DCQCN treats it as a CNP).
 *
 * Ownership and threads: arb_cc_new allocates one object; nothing else
 * allocates. A controller is used by one thread at a time. Every call but
 * arb_cc_new accepts a NULL controller and does nothing (the gates of NULL
 * are window 1 and spacing 0).
 */
#ifndef ARBOR_CC_H
#define ARBOR_CC_H

#include <stdint.h>

#include "arbor/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The congestion controllers. */
typedef enum arb_cc_kind {
    ARB_CC_DISABLED = 0,
    ARB_CC_FIXED = 1,
    ARB_CC_TIMELY = 2,
    ARB_CC_SWIFT = 3,
    ARB_CC_DCQCN = 4,
    ARB_CC_OSCAR = 5
} arb_cc_kind;

#define ARB_CC_KIND_COUNT 6 /**< the number of arb_cc_kind values */

/* Defaults of arb_cc_config_default(). */
#define ARB_CC_WINDOW_DEFAULT 64      /**< window of DISABLED and FIXED, initial window */
#define ARB_CC_WINDOW_MAX 0xFFFFFFu   /**< the largest window: an offset is 24 bits */
#define ARB_CC_WINDOW_MAX_DEFAULT 256 /**< window_max */
#define ARB_CC_LINE_RATE_DEFAULT 100000000000ull     /**< 100 Gb/s */
#define ARB_CC_CREDIT_BYTES_DEFAULT 8274             /**< 8192 B payload + headers */
#define ARB_CC_BASE_RTT_DEFAULT (10 * ARB_PS_PER_US) /**< base_rtt: 10 us */

/*
 * A parameter whose sensible value depends on the fabric (the line rate or
 * the unloaded loop) defaults to 0, which arb_cc_new replaces by the value
 * derived from the common fields, as each comment says. The figures in
 * brackets are those derived values at 100 Gb/s and a 10 us loop.
 */

/** TIMELY: at most one rate update per `interval` and per loop (a sample
 * whose credit left after the previous update), from that sample. */
typedef struct arb_cc_timely_config {
    double alpha;        /**< EWMA weight of the newest loop-time difference, (0, 1] (0.875) */
    double beta;         /**< multiplicative decrease, (0, 1] (0.8) */
    uint64_t delta;      /**< additive increase per update, bit/s (0: line_rate / 100 [1 Gb/s]) */
    arb_time t_low;      /**< a loop below this always increases (0: 3/2 base_rtt [15 us]) */
    arb_time t_high;     /**< a loop above this decreases in proportion (0: 10 base_rtt
                          * [100 us]); t_low < t_high */
    arb_time interval;   /**< least time between two updates, also the gradient's
                          * normaliser (0: base_rtt [10 us]) */
    uint32_t hai_after;  /**< non-positive gradients in a row before hyper increase, >= 1 (5) */
    uint32_t hai_factor; /**< hyper increase: this many deltas per update, >= 1 (5) */
    uint64_t min_rate;   /**< the rate never goes below, bit/s (0: line_rate / 1000 [100 Mb/s]);
                          * <= line_rate */
} arb_cc_timely_config;

/** Swift's fs_range that turns flow scaling off. */
#define ARB_CC_SWIFT_FS_OFF ARB_TIME_NEVER

/** Swift: a fractional window cwnd, in credits. */
typedef struct arb_cc_swift_config {
    arb_time base_target; /**< target loop time before scaling (0: 3/2 base_rtt [15 us]) */
    arb_time per_hop;     /**< hop scaling: target += hops x per_hop (0) */
    uint32_t hops;        /**< hops of the loop, for hop scaling (0) */
    arb_time fs_range;    /**< flow scaling: at most this is added to the target, more for
                           * a smaller cwnd (0: base_rtt / 2 [5 us]; ARB_CC_SWIFT_FS_OFF:
                           * no flow scaling); at most 1 s */
    double fs_min_cwnd;   /**< flow scaling reaches fs_range at this cwnd, > 0 (0.1) */
    double fs_max_cwnd;   /**< and 0 at this one, > fs_min_cwnd (100) */
    double ai;            /**< additive increase per loop, credits, > 0 (1) */
    double beta;          /**< decrease gain on (delay - target) / delay, (0, 1] (0.8) */
    double max_mdf;       /**< largest decrease per loop, as a fraction, (0, 1) (0.5) */
    double min_cwnd;      /**< least cwnd, credits, (0, 1] (0.001) */
    uint32_t stall_reset; /**< stalls in a row (no completion between) that send cwnd
                           * to min_cwnd, >= 1 (3) */
} arb_cc_swift_config;

/** DCQCN: rates in bit/s; Rc the current rate, Rt the target rate. */
typedef struct arb_cc_dcqcn_config {
    arb_time cnp_interval; /**< at most one cut per interval, > 0 (50 us) */
    double g;              /**< alpha gain, (0, 1) (1/256) */
    double alpha_init;     /**< alpha before the first cut, (0, 1] (1) */
    arb_time alpha_timer;  /**< K: alpha decays once per K without a cut, > 0 (55 us) */
    arb_time rate_timer;   /**< T: a rate increase per T after a cut, > 0 (55 us) */
    uint64_t byte_counter; /**< B: a rate increase per B wire bytes sent after a cut (0: 2 ms at
                            * line rate, line_rate / 4000 [25 MB]) */
    uint32_t f;            /**< F: fast-recovery steps before additive increase, >= 1 (5) */
    uint64_t rai;          /**< additive increase (0: host_rate / 1000 [100 Mb/s], at most
                            * line_rate) */
    uint64_t rhai;         /**< hyper increase (0: host_rate / 100 [1 Gb/s], at most line_rate) */
    uint64_t min_rate;     /**< the rate never goes below (0: line_rate / 1000 [100 Mb/s]);
                            * <= line_rate */
} arb_cc_dcqcn_config;

/** Oscar: a fractional window, updated once per loop (docs/cc.md derives it). */
typedef struct arb_cc_oscar_config {
    arb_time target;   /**< d*: the loop time to hold (0: 3/2 base_rtt [15 us]) */
    double gain;       /**< gamma: share of the step to the reference per loop, (0, 1] (0.5) */
    double kappa;      /**< gradient damping: a step with the loop's trend is divided by
                        * 1 + kappa |m - m_prev| / target, [0, 10] (1) */
    double headroom;   /**< a: credits each channel keeps beyond the target, >= 0 (1) */
    double max_growth; /**< the reference is at most this times cwnd, > 1 (2) */
    double min_cwnd;   /**< least cwnd, credits, (0, 1] (0.01) */
} arb_cc_oscar_config;

/** A controller's configuration (arb_cc_config_default). */
typedef struct arb_cc_config {
    /** DISABLED and FIXED: the window, 1..ARB_CC_WINDOW_MAX (default
     * ARB_CC_WINDOW_DEFAULT). SWIFT and OSCAR: the initial window, within
     * [window_min, window_max]. TIMELY and DCQCN do not read it. */
    uint32_t window;
    /** FIXED: the least time between two credits, in ps (default 0: no rate
     * gate). arb_cc_spacing_for_rate() turns a rate into a spacing. The
     * other kinds ignore it. */
    arb_time spacing;
    arb_logger logger;  /**< where the controller reports (none by default) */
    const arb_mem *mem; /**< allocator (base.h); NULL: the C library's */

    /* Common to TIMELY, SWIFT, DCQCN, OSCAR (DISABLED and FIXED ignore
     * them). */
    uint64_t line_rate;    /**< the responder's bottleneck link, bit/s, 1..ARB_RATE_MAX
                            * (ARB_CC_LINE_RATE_DEFAULT); the rate never exceeds it */
    uint64_t host_rate;    /**< the rate of the host's link, of which line_rate is this
                            * controller's share, bit/s: 0 (the same as line_rate), or from
                            * line_rate to ARB_RATE_MAX. DCQCN's increase steps (rai, rhai)
                            * scale from it: the paper's are constants of each reaction
                            * point, however many share a NIC (docs/cc.md) */
    uint32_t credit_bytes; /**< wire bytes a credit moves per link, >= 1
                            * (ARB_CC_CREDIT_BYTES_DEFAULT) */
    arb_time base_rtt;     /**< the fabric's unloaded loop, 1 ps..1 s (ARB_CC_BASE_RTT_DEFAULT) */
    uint32_t window_min;   /**< the window gate never goes below, >= 1 (1) */
    uint32_t window_max;   /**< nor above, window_min..ARB_CC_WINDOW_MAX
                            * (ARB_CC_WINDOW_MAX_DEFAULT). The rate-based kinds
                            * (TIMELY, DCQCN) hold the loop's worth at line rate,
                            * ceil(line_rate x base_rtt / (8 credit_bytes)), within
                            * [window_min, window_max]: a rate too high for the path
                            * puts at most that much in flight (the BDP cap of
                            * "Revisiting Network Support for RDMA") */

    arb_cc_timely_config timely; /**< TIMELY's own parameters */
    arb_cc_swift_config swift;   /**< Swift's own parameters */
    arb_cc_dcqcn_config dcqcn;   /**< DCQCN's own parameters */
    arb_cc_oscar_config oscar;   /**< Oscar's own parameters */
} arb_cc_config;

/** One completion sample. */
typedef struct arb_cc_sample {
    arb_time rtt;      /**< first send of the credit to its commit */
    int ce;            /**< the root aggregate carried CE */
    uint32_t inflight; /**< normal credits outstanding when the commit arrived, this one
                        * included (so >= 1; 0: unknown) */
    uint32_t bytes;    /**< the wire bytes the credit moved per link (0: cfg.credit_bytes) */
} arb_cc_sample;

/** A controller's counters and state (arb_cc_get_stats). */
typedef struct arb_cc_stats {
    uint64_t samples;    /**< completion samples (arb_cc_on_ack, arb_cc_on_sample) */
    uint64_t ce_samples; /**< of which with CE */
    uint64_t timeouts;   /**< losses found by a timer (arb_cc_on_timeout, on_loss by timer) */
    arb_time last;       /**< last sample (0 before the first) */
    arb_time min;        /**< smallest sample (ARB_TIME_NEVER before the first) */
    arb_time max;        /**< largest sample (0 before the first) */
    arb_time sum;        /**< sum of samples, saturating at ARB_TIME_NEVER */

    uint64_t losses;    /**< losses inferred from order (on_loss, by_timer 0) */
    uint64_t stalls;    /**< timer losses taken as a stalled loop and reacted to */
    uint64_t sends;     /**< arb_cc_on_send calls */
    uint64_t expiries;  /**< timer events run (DCQCN) */
    uint64_t increases; /**< updates that raised the window or the rate */
    uint64_t decreases; /**< updates that lowered it */
    uint32_t window;    /**< the window gate now */
    arb_time spacing;   /**< the rate gate now */
    double cwnd;        /**< the window in credits, fractional for SWIFT and OSCAR */
    double rate;        /**< bit/s: the rate of TIMELY and DCQCN; for the others
                         * cwnd x credit_bytes x 8 / srtt (0 before a sample,
                         * and for DISABLED and FIXED) */
    double cwnd_lowest; /**< the least cwnd reached */
    double rate_lowest; /**< the least rate reached (TIMELY, DCQCN; else 0) */
} arb_cc_stats;

/** A congestion controller: one responder's window and rate gates (opaque). */
typedef struct arb_cc arb_cc;

/**
 * The rule `cfg` (NULL: the defaults) breaks for `kind`, naming the field
 * as in "timely.beta: must be in (0, 1]" (a static string), or NULL when
 * arb_cc_new would accept it. For a caller that reports bad input.
 */
const char *arb_cc_check(arb_cc_kind kind, const arb_cc_config *cfg);

/** Every field's default as listed above; no logger. NULL: nothing. */
void arb_cc_config_default(arb_cc_config *cfg);

/** TIMELY's defaults alone (the values arb_cc_config_default sets). */
void arb_cc_timely_default(arb_cc_timely_config *c);
/** Swift's defaults alone (the values arb_cc_config_default sets). */
void arb_cc_swift_default(arb_cc_swift_config *c);
/** DCQCN's defaults alone (the values arb_cc_config_default sets). */
void arb_cc_dcqcn_default(arb_cc_dcqcn_config *c);
/** Oscar's defaults alone (the values arb_cc_config_default sets). */
void arb_cc_oscar_default(arb_cc_oscar_config *c);

/**
 * Make a controller of `kind` (cfg NULL: the defaults). Only the fields the
 * kind reads are checked, each against the rule in its comment above, after
 * the derived defaults are filled in: DISABLED and FIXED read window (and
 * FIXED spacing); the adaptive kinds read the common fields and their own
 * struct, and need window_min <= window <= window_max.
 * Errors: ARB_EINVAL for a NULL out, a kind outside the enum, or a field
 * outside its rule (a NaN is outside every rule); ARB_ENOMEM.
 */
int arb_cc_new(arb_cc **out, arb_cc_kind kind, const arb_cc_config *cfg);

/** Free a controller; NULL is allowed. */
void arb_cc_free(arb_cc *cc);

/** One completion sample (sample NULL: nothing). */
void arb_cc_on_ack(arb_cc *cc, const arb_cc_sample *sample, arb_time now);

/** A normal credit left, moving `bytes` wire bytes per link (0: cfg.credit_bytes). */
void arb_cc_on_send(arb_cc *cc, uint32_t bytes, arb_time now);

/** A normal credit is presumed lost: by_timer 0 inferred from order, 1 by a timer. */
void arb_cc_on_loss(arb_cc *cc, int by_timer, arb_time now);

/** When the controller next wants arb_cc_on_expiry (ARB_TIME_NEVER: no timer). */
arb_time arb_cc_next_expiry(const arb_cc *cc);

/** Run the timer events due at or before now, in time order. */
void arb_cc_on_expiry(arb_cc *cc, arb_time now);

/** The older form of arb_cc_on_ack: inflight and bytes unknown. */
void arb_cc_on_sample(arb_cc *cc, arb_time sample, int ce_seen, arb_time now);

/** arb_cc_on_loss(cc, 1, now): an offset timed out and went into repair. */
void arb_cc_on_timeout(arb_cc *cc, arb_time now);

/** The window gate: normal credits outstanding allowed (>= 1). */
uint32_t arb_cc_window(const arb_cc *cc);

/**
 * The largest window the controller can ever return (cfg.window for
 * DISABLED and FIXED, window_max otherwise): size the responder's ring of
 * offsets from it.
 */
uint32_t arb_cc_max_window(const arb_cc *cc);

/** The rate gate: the least time between two normal credits (0: none). */
arb_time arb_cc_min_spacing(const arb_cc *cc);

/** The controller's kind. */
arb_cc_kind arb_cc_get_kind(const arb_cc *cc);
/** Copy the controller's counters and state into *out. */
void arb_cc_get_stats(const arb_cc *cc, arb_cc_stats *out);

/** The configuration in effect (for reports): as given, with the derived
 * defaults of an adaptive kind filled in. NULL cc or out: nothing. */
void arb_cc_get_config(const arb_cc *cc, arb_cc_config *out);

/**
 * The spacing that holds credits to `bits_per_s` when each credit moves
 * `bytes_per_credit` bytes on the wire (e.g. 8274 B per 8192 B payload on
 * 100 Gb/s gives 661.92 ns), rounded up to the picosecond. ARB_TIME_NEVER
 * for a rate of 0 or above ARB_RATE_MAX (as arb_time_tx).
 */
arb_time arb_cc_spacing_for_rate(uint64_t bits_per_s, uint64_t bytes_per_credit);

/**
 * The credits a channel needs to keep its share of a link busy: the bits
 * of one `loop` (a credit's round trip) at `bits_per_s` shared by `share`
 * channels, over the bits of a frame of `frame_bytes`, rounded up, and
 * within [least, most] (least for a loop, rate or frame of 0). The
 * simulator's default window (arb_sim_arbor_window, its least 4) and the
 * runtime's ARBOR_WINDOW=auto (the loop it measured, at most 16) are this
 * rule: more credits than the loop holds only queue.
 */
uint32_t arb_cc_loop_window(arb_time loop, uint64_t bits_per_s, uint32_t share,
                            uint32_t frame_bytes, uint32_t least, uint32_t most);

/** "disabled", "fixed", "timely", "swift", "dcqcn", "oscar"; NULL outside. */
const char *arb_cc_kind_name(int kind);
/** Parse a name above (case-insensitive); ARB_ENOENT if unknown. */
int arb_cc_kind_parse(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_CC_H */
