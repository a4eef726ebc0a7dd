/*
 * cc_int.h - what the controllers of src/cc share: the object, each kind's
 * state, the table of per-kind functions, and the helpers of cc.c that set
 * the gates. Not a public header.
 */
#ifndef ARBOR_CC_INT_H
#define ARBOR_CC_INT_H

#include "arbor/cc.h"
#include "cc/dcqcn_rate.h"

/* What a kind does; a NULL hook means "nothing". */
typedef struct cc_ops {
    /* Check the kind's own parameters (derived defaults already filled):
     * NULL, or the broken rule naming its field ("timely.beta: ..."). */
    const char *(*check)(const arb_cc_config *cfg);
    /* Fill the kind's zero (derived) parameters from the common fields. */
    void (*derive)(arb_cc_config *cfg);
    /* Set the initial state and gates. */
    void (*init)(arb_cc *cc);
    void (*on_ack)(arb_cc *cc, const arb_cc_sample *s, arb_time now);
    void (*on_send)(arb_cc *cc, uint32_t bytes, arb_time now);
    /* A timer loss while the loop had stalled (cc.c decides, once per loop). */
    void (*on_stall)(arb_cc *cc, arb_time now);
    arb_time (*next_expiry)(const arb_cc *cc);
    /* Run the events due at or before now; cc.c calls it only when one is. */
    void (*on_expiry)(arb_cc *cc, arb_time now);
} cc_ops;

struct timely_state {
    double rate;        /* bit/s */
    double rtt_diff;    /* EWMA of loop-time differences, ps */
    arb_time prev_rtt;  /* the sample of the previous update (0: none) */
    arb_time last;      /* time of the previous update (ARB_TIME_NEVER: none) */
    uint32_t neg_count; /* non-positive gradients in a row */
};

struct swift_state {
    double cwnd;       /* credits */
    arb_time last_cut; /* time of the last decrease (ARB_TIME_NEVER: none) */
    uint32_t stalls;   /* stalls since the last completion */
};

struct dcqcn_state {
    struct dcqcn_rate r; /* rates (bit/s) and stages: dcqcn_rate.h */
    double alpha;
    arb_time last_cut; /* ARB_TIME_NEVER before the first */
    arb_time alpha_at; /* next alpha decay (ARB_TIME_NEVER: off) */
    arb_time inc_at;   /* next timer increase (ARB_TIME_NEVER: recovered) */
    uint64_t byte_cnt; /* bytes since the last byte-counter event */
};

struct oscar_state {
    double cwnd;           /* credits */
    arb_time start;        /* when the current loop (round) began (ARB_TIME_NEVER: none) */
    uint32_t n;            /* samples in the round */
    double sum_rtt;        /* their loop times, ps */
    uint32_t max_inflight; /* the most in flight a sample of the round reported */
    int inflight_known;    /* some sample of the round reported inflight */
    double prev_mean;      /* the previous round's mean loop time (0: none) */
};

struct arb_cc {
    arb_cc_kind kind;
    const cc_ops *ops;
    arb_cc_config cfg; /* with the derived defaults filled in */
    uint32_t window;   /* the window gate now */
    arb_time spacing;  /* the rate gate now */
    arb_cc_stats st;
    /* shared measurements */
    arb_time srtt;       /* EWMA (1/8) of the samples; cfg.base_rtt before the first */
    arb_time last_ack;   /* time of the last sample (ARB_TIME_NEVER: none) */
    arb_time last_stall; /* time of the last stall reaction (ARB_TIME_NEVER: none) */
    union {
        struct timely_state timely;
        struct swift_state swift;
        struct dcqcn_state dcqcn;
        struct oscar_state oscar;
    } u;
};

extern const cc_ops cc_timely_ops;
extern const cc_ops cc_swift_ops;
extern const cc_ops cc_dcqcn_ops;
extern const cc_ops cc_oscar_ops;

/*
 * Set a rate-based kind's rate (bit/s), clamped to [min_rate, line_rate]:
 * spacing from the rate, window = cc_rate_window(), stats (and the counts
 * of increases and decreases) follow. Returns the clamped rate.
 */
double cc_set_rate(arb_cc *cc, double rate, double min_rate);

/*
 * Set a window-based kind's cwnd (credits), clamped to [min_cwnd,
 * window_max]; stats follow. Returns the clamped cwnd.
 *   pace_loop 0 (Swift): window gate max(window_min, floor(cwnd)); below
 *     one credit a spacing of srtt / cwnd, else no rate gate.
 *   pace_loop > 0 (Oscar): window gate max(window_min, ceil(cwnd)) and
 *     always a spacing of pace_loop / cwnd, so that a fractional window is
 *     honoured on average.
 */
double cc_set_cwnd(arb_cc *cc, double cwnd, double min_cwnd, arb_time pace_loop);

/*
 * The window of a rate-based kind: the credits that fill base_rtt at
 * line rate, ceil(line_rate x base_rtt / (8 credit_bytes)), within
 * [window_min, window_max].
 */
uint32_t cc_rate_window(const arb_cc_config *cfg);

/* A rate as an integer for arb_time_tx: at least 1, at most ARB_RATE_MAX. */
uint64_t cc_rate_u64(double rate);

/* True when x is a number in [lo, hi] (false for NaN). */
int cc_in(double x, double lo, double hi);

#endif /* ARBOR_CC_INT_H */
