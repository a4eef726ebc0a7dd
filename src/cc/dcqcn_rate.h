/*
 * DCQCN's rate increase (SIGCOMM 2015), inline: the one step of both of
 * its reaction points, the responder's controller (src/cc/dcqcn.c) and
 * the simulator's RoCE senders (src/sim/dcqcn.c, which takes it per
 * timer and byte-counter event). Rates in bit/s.
 *
 * An increase comes when the rate timer T expires (timer stage t + 1) or
 * B bytes have been sent since the last such event or cut (byte stage
 * b + 1); with t, b the stages before the event:
 *     max(t, b) < F:   fast recovery   Rc = (Rt + Rc) / 2
 *     min(t, b) >= F:  hyper increase  Rt += (min(t, b) - F + 1) R_HAI;
 *                                      Rc = (Rt + Rc) / 2
 *     otherwise:       additive        Rt += R_AI; Rc = (Rt + Rc) / 2
 * Rt is capped at line rate after a step; once it is there and Rc within a millionth
 * of it, Rc snaps to line rate: recovered, the caller stops its rate
 * timer and byte counter until the next cut.
 */
#ifndef ARB_CC_DCQCN_RATE_H
#define ARB_CC_DCQCN_RATE_H

#include <stdint.h>

/* A reaction point's rates and stages; a cut sets rt = rc, lowers rc and
 * zeroes both stages (the callers' own rules). */
struct dcqcn_rate {
    double rc, rt;    /* current and target rate */
    uint32_t t_stage; /* timer events since the last cut */
    uint32_t b_stage; /* byte-counter events since the last cut */
};

/* One increase, by the timer (by_timer) or the byte counter, with F = f
 * and the steps rai and rhai. Returns 1 when it recovered (Rc snapped to
 * line rate), else 0. */
static inline int dcqcn_increase(struct dcqcn_rate *r, int by_timer, double line, uint32_t f,
                                 double rai, double rhai)
{
    uint32_t t = r->t_stage, b = r->b_stage;
    uint32_t mx = t > b ? t : b, mn = t < b ? t : b;
    if (mx >= f) {
        r->rt += mn >= f ? (double)(mn - f + 1) * rhai : rai;
        if (r->rt > line) r->rt = line;
    }
    r->rc = (r->rt + r->rc) / 2;
    if (by_timer)
        r->t_stage++;
    else
        r->b_stage++;
    if (r->rt >= line && line - r->rc <= line * 1e-6) {
        r->rc = line;
        return 1;
    }
    return 0;
}

#endif
