/*
 * Oscar: the project's controller, a hybrid of delay, gradient and a
 * reference amount in flight. docs/cc.md derives it and shows where it
 * converges; in short:
 *
 * A fractional window W in credits, starting at cfg.window, updated once
 * per loop (a round: it ends at the first sample whose credit left after
 * the round began). Over a round of n samples lasting D, with mean loop
 * time m, and m_prev the previous round's:
 *
 *   r     = n / D               the delivery rate, credits per unit time
 *   F     = r m                 what was in flight over the round (Little's law)
 *   W*    = F d* / m = r d*     the reference amount in flight: what was in
 *                               flight scaled by target over measured loop,
 *                               i.e. the window that at this delivery rate
 *                               gives a loop of d*; at most max_growth W
 *   s     = gain (W* + a - W)   the step toward it, a = headroom
 *   s    /= 1 + kappa |m - m_prev| / d*   when s goes the way the loop is
 *                               already moving (growing while it lengthens,
 *                               shrinking while it shortens): the gradient
 *                               damps a step the trend is already taking
 *   W    <- W + s
 *
 * then W is clamped to [min_cwnd, window_max]. While the bottleneck is
 * saturated r is the channel's share of it; with N channels on one
 * bottleneck of C credits per unit time the loop settles at d* + N a / C,
 * the windows converge to equal shares, and near that point (m steady) the
 * damping is 1 and the error shrinks by 1 - gain per round (docs/cc.md).
 * A round in which the channel did not fill its window (every sample's
 * inflight below floor(W)) and the loop was at or below target leaves W
 * alone: demand, not the network, limited it.
 *
 * Gates: window max(window_min, ceil(W)) and a spacing of m_prev / W
 * (base_rtt / W before the first round): pacing makes a fractional window
 * count, and below one credit it is the only gate.
 *
 * Loss: counted only; a stall (cc.c) halves W.
 */
#include <math.h>

#include "cc/cc_int.h"

void arb_cc_oscar_default(arb_cc_oscar_config *c)
{
    if (!c) return;
    c->target = 0;
    c->gain = 0.5;
    c->kappa = 1;
    c->headroom = 1;
    c->max_growth = 2;
    c->min_cwnd = 0.01;
}

static void oscar_derive(arb_cc_config *c)
{
    if (!c->oscar.target) c->oscar.target = c->base_rtt + c->base_rtt / 2;
}

static const char *oscar_check(const arb_cc_config *c)
{
    const arb_cc_oscar_config *p = &c->oscar;
    if (p->target > ARB_PS_PER_S) return "oscar.target: above 1 s";
    if (!(p->gain > 0 && p->gain <= 1)) return "oscar.gain: must be in (0, 1]";
    if (!cc_in(p->kappa, 0, 10)) return "oscar.kappa: must be in [0, 10]";
    if (!cc_in(p->headroom, 0, (double)c->window_max))
        return "oscar.headroom: must be in [0, window_max]";
    if (!(p->max_growth > 1 && p->max_growth <= 1e6))
        return "oscar.max_growth: must be in (1, 1e6]";
    if (!(p->min_cwnd > 0 && p->min_cwnd <= 1)) return "oscar.min_cwnd: must be in (0, 1]";
    return NULL;
}

static void new_round(struct oscar_state *o, arb_time now)
{
    o->start = now;
    o->n = 0;
    o->sum_rtt = 0;
    o->max_inflight = 0;
    o->inflight_known = 0;
}

/* Pacing follows the last round's mean loop time (base_rtt before one). */
static arb_time pace_loop(const arb_cc *cc)
{
    double m = cc->u.oscar.prev_mean;
    if (!(m >= 1)) return cc->cfg.base_rtt;
    return m < 0x1p62 ? (arb_time)m : (arb_time)1 << 62; /* a loop of 53 days is plenty */
}

static void oscar_init(arb_cc *cc)
{
    struct oscar_state *o = &cc->u.oscar;
    new_round(o, ARB_TIME_NEVER);
    o->prev_mean = 0;
    o->cwnd = cc_set_cwnd(cc, (double)cc->cfg.window, cc->cfg.oscar.min_cwnd, pace_loop(cc));
}

/* The window at the end of a round that lasted `dur` ps. */
static double oscar_update(const arb_cc *cc, const struct oscar_state *o, arb_time dur)
{
    const arb_cc_oscar_config *p = &cc->cfg.oscar;
    double mean = o->sum_rtt / o->n;
    double rate = (double)o->n / (double)dur;
    double target = (double)p->target;
    int app_limited = o->inflight_known && (double)o->max_inflight < floor(o->cwnd);
    if (app_limited && mean <= target) return o->cwnd;
    double ref = rate * target;
    if (ref > p->max_growth * o->cwnd) ref = p->max_growth * o->cwnd;
    double step = p->gain * (ref + p->headroom - o->cwnd);
    double grad = o->prev_mean > 0 ? mean - o->prev_mean : 0;
    if (step * grad > 0) step /= 1 + p->kappa * fabs(grad) / target;
    return o->cwnd + step;
}

static void oscar_on_ack(arb_cc *cc, const arb_cc_sample *s, arb_time now)
{
    struct oscar_state *o = &cc->u.oscar;
    if (o->start == ARB_TIME_NEVER) {
        new_round(o, now);
    } else {
        o->n++;
        o->sum_rtt += (double)s->rtt;
        if (s->inflight) {
            o->inflight_known = 1;
            if (s->inflight > o->max_inflight) o->max_inflight = s->inflight;
        }
        arb_time sent = now > s->rtt ? now - s->rtt : 0;
        if (sent >= o->start && now > o->start) {
            double mean = o->sum_rtt / o->n;
            o->cwnd = oscar_update(cc, o, now - o->start);
            o->prev_mean = mean;
            new_round(o, now);
        }
    }
    o->cwnd = cc_set_cwnd(cc, o->cwnd, cc->cfg.oscar.min_cwnd, pace_loop(cc));
}

static void oscar_on_stall(arb_cc *cc, arb_time now)
{
    (void)now;
    struct oscar_state *o = &cc->u.oscar;
    o->cwnd = cc_set_cwnd(cc, o->cwnd / 2, cc->cfg.oscar.min_cwnd, pace_loop(cc));
}

const cc_ops cc_oscar_ops = {
    oscar_check, oscar_derive, oscar_init, oscar_on_ack, NULL, oscar_on_stall, NULL, NULL,
};
