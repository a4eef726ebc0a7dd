/*
 * arbor/cc.h - congestion control of a channel (spec section 8).
 *
 * Only the responder runs congestion control; switches keep no congestion
 * state and at most mark CE. A controller turns completion-time samples
 * into two gates on credit issue:
 *
 *   - the window gate, arb_cc_window(): normal credits outstanding (issued
 *     and not yet committed) the responder may have;
 *   - the rate gate, arb_cc_min_spacing(): the least time between two
 *     consecutive normal credits (0: no rate gate).
 *
 * Repair credits come from their own budget and pass neither gate.
 *
 * A sample is the completion time of a normal credit's first completion:
 * from the credit's first send to the arrival of its root aggregate (credit
 * down, consumption, request up, fan-in wait, aggregate back). ce_seen says
 * whether that aggregate carried CE (an aggregate carries CE when any of its
 * inputs did).
 *
 * Like every engine, a controller is sans-IO: it reads no clock and owns no
 * timer; each entry point takes the current time. The responder calls
 *
 *   arb_cc_on_sample(cc, sample, ce, now)   on every commit of a normal credit
 *   arb_cc_on_timeout(cc, now)              when an offset times out (repair)
 *
 * and reads the gates before each credit:
 *
 *   if (outstanding < arb_cc_window(cc) && now >= last_credit + arb_cc_min_spacing(cc))
 *       issue a credit
 *
 * Kinds:
 *   ARB_CC_DISABLED  a fixed window (cfg.window) and no rate gate; for
 *                    debugging. Samples and timeouts change nothing.
 *   ARB_CC_FIXED     a given rate, as a spacing (cfg.spacing), and a given
 *                    window (cfg.window); for isolation experiments.
 *                    Samples and timeouts change nothing.
 *   ARB_CC_TIMELY, ARB_CC_SWIFT, ARB_CC_DCQCN, ARB_CC_OSCAR
 *                    named for the controllers of spec section 8 (RTT
 *                    gradient; delay against a target; ECN; the hybrid of
 *                    delay, gradient and a reference amount in flight).
 *                    NOT YET IMPLEMENTED: arb_cc_new returns ARB_EINVAL
 *                    for them. They will plug in behind this interface
 *                    without changing it.
 *
 * Every kind keeps the same statistics (arb_cc_get_stats) so a run can
 * report its samples whatever the controller.
 */
#ifndef ARBOR_CC_H
#define ARBOR_CC_H

#include <stdint.h>

#include "arbor/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum arb_cc_kind {
    ARB_CC_DISABLED = 0,
    ARB_CC_FIXED = 1,
    ARB_CC_TIMELY = 2, /* not yet implemented */
    ARB_CC_SWIFT = 3,  /* not yet implemented */
    ARB_CC_DCQCN = 4,  /* not yet implemented */
    ARB_CC_OSCAR = 5   /* not yet implemented */
} arb_cc_kind;

#define ARB_CC_KIND_COUNT 6

/* Defaults of arb_cc_config_default(). */
#define ARB_CC_WINDOW_DEFAULT 64
#define ARB_CC_WINDOW_MAX 0xFFFFFFu /* an offset is 24 bits */

typedef struct arb_cc_config {
    /* Normal credits outstanding allowed, 1..ARB_CC_WINDOW_MAX
     * (default ARB_CC_WINDOW_DEFAULT). DISABLED and FIXED keep it. */
    uint32_t window;
    /* FIXED: the least time between two credits, in ps (default 0: no rate
     * gate). arb_cc_spacing_for_rate() turns a rate into a spacing.
     * DISABLED ignores it. */
    arb_time spacing;
    arb_logger logger;
} arb_cc_config;

typedef struct arb_cc_stats {
    uint64_t samples;    /* arb_cc_on_sample calls */
    uint64_t ce_samples; /* of which with ce_seen */
    uint64_t timeouts;   /* arb_cc_on_timeout calls */
    arb_time last;       /* last sample (0 before the first) */
    arb_time min;        /* smallest sample (ARB_TIME_NEVER before the first) */
    arb_time max;        /* largest sample (0 before the first) */
    arb_time sum;        /* sum of samples, saturating at ARB_TIME_NEVER */
} arb_cc_stats;

typedef struct arb_cc arb_cc;

/* window ARB_CC_WINDOW_DEFAULT, spacing 0, no logger. */
void arb_cc_config_default(arb_cc_config *cfg);

/*
 * Make a controller of `kind` (cfg NULL: the defaults).
 * Errors: ARB_EINVAL for a NULL out, a kind outside the enum or not yet
 * implemented (TIMELY, SWIFT, DCQCN, OSCAR), or a window of 0 or above
 * ARB_CC_WINDOW_MAX; ARB_ENOMEM.
 */
int arb_cc_new(arb_cc **out, arb_cc_kind kind, const arb_cc_config *cfg);

/* Free a controller; NULL is allowed. */
void arb_cc_free(arb_cc *cc);

/* One completion-time sample of a normal credit, with its CE bit. */
void arb_cc_on_sample(arb_cc *cc, arb_time sample, int ce_seen, arb_time now);

/* An offset timed out and went into repair. */
void arb_cc_on_timeout(arb_cc *cc, arb_time now);

/* A normal credit left, moving `bytes` of payload. */
void arb_cc_on_send(arb_cc *cc, uint32_t bytes, arb_time now);

/* A credit was presumed lost: by order (by_timer 0: a credit sent after it
 * committed) or by a timer (by_timer 1). arb_cc_on_timeout is
 * arb_cc_on_loss(cc, 1, now). */
void arb_cc_on_loss(arb_cc *cc, int by_timer, arb_time now);

/* Controllers with timers: when arb_cc_on_expiry has work
 * (ARB_TIME_NEVER: none), and that work. */
arb_time arb_cc_next_expiry(const arb_cc *cc);
void arb_cc_on_expiry(arb_cc *cc, arb_time now);

/* The window gate: normal credits outstanding allowed (>= 1). */
uint32_t arb_cc_window(const arb_cc *cc);

/* The rate gate: the least time between two normal credits (0: none). */
arb_time arb_cc_min_spacing(const arb_cc *cc);

arb_cc_kind arb_cc_get_kind(const arb_cc *cc);
void arb_cc_get_stats(const arb_cc *cc, arb_cc_stats *out);

/*
 * The spacing that holds credits to `bits_per_s` when each credit moves
 * `bytes_per_credit` bytes on the wire (e.g. 8274 B per 8192 B payload on
 * 100 Gb/s gives 661.92 ns), rounded up to the picosecond. ARB_TIME_NEVER
 * for a rate of 0 or above ARB_RATE_MAX (as arb_time_tx).
 */
arb_time arb_cc_spacing_for_rate(uint64_t bits_per_s, uint64_t bytes_per_credit);

/* "disabled", "fixed", "timely", "swift", "dcqcn", "oscar"; NULL outside. */
const char *arb_cc_kind_name(int kind);
/* Parse a name above (case-insensitive); ARB_ENOENT if unknown. */
int arb_cc_kind_parse(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_CC_H */
