/*
 * TIMELY ("TIMELY: RTT-based Congestion Control for the Datacenter",
 * SIGCOMM 2015), on the responder's loop time.
 *
 * A rate R in bit/s, starting at line rate. The paper updates once per
 * completion of a 16-64 KB segment, about a round trip at line rate, so
 * each update sees the rate the previous one set; a credit is 8 KB and
 * completes many times per loop, so here an update takes a sample whose
 * credit left after the previous update (at most one per loop), and at
 * most one per `interval`. From that sample d:
 *
 *   diff      = d - d_prev                     (d_prev: the previous update's sample)
 *   rtt_diff  = (1 - alpha) rtt_diff + alpha diff
 *   g         = rtt_diff / interval            (the normalised gradient)
 *
 *   d < t_low:    R += delta
 *   d > t_high:   R *= 1 - beta (1 - t_high / d)
 *   g <= 0:       R += N delta, N = hai_factor after hai_after
 *                 non-positive gradients in a row (hyper increase), else 1
 *   otherwise:    R *= 1 - beta min(g, 1)
 *
 * then R is clamped to [min_rate, line_rate]. Capping g at 1 bounds one
 * cut to the factor 1 - beta, as the t_high branch is. With updates one
 * loop apart, g is the loop time's growth per unit time, i.e. the
 * bottleneck's overload (input - capacity) / capacity.
 *
 * Gates: spacing = credit_bytes x 8 / R; window = the loop's worth at line
 * rate (cc_rate_window): when R is too high for the path (at the start, or
 * before a cut has taken effect), at most that much is in flight.
 *
 * Loss: the paper runs over a lossless fabric and has no loss rule. A loss
 * is counted only; a stall (cc.c) halves R.
 */
#include "cc/cc_int.h"

void arb_cc_timely_default(arb_cc_timely_config *c)
{
    if (!c) return;
    c->alpha = 0.875;
    c->beta = 0.8;
    c->delta = 0;
    c->t_low = 0;
    c->t_high = 0;
    c->interval = 0;
    c->hai_after = 5;
    c->hai_factor = 5;
    c->min_rate = 0;
}

static uint64_t at_least_1(uint64_t x)
{
    return x ? x : 1;
}

static void timely_derive(arb_cc_config *c)
{
    arb_cc_timely_config *t = &c->timely;
    if (!t->delta) t->delta = at_least_1(c->line_rate / 100);
    if (!t->t_low) t->t_low = c->base_rtt + c->base_rtt / 2;
    if (!t->t_high) t->t_high = 10 * c->base_rtt;
    if (!t->interval) t->interval = c->base_rtt;
    if (!t->min_rate) t->min_rate = at_least_1(c->line_rate / 1000);
}

static const char *timely_check(const arb_cc_config *c)
{
    const arb_cc_timely_config *t = &c->timely;
    if (!(t->alpha > 0 && t->alpha <= 1)) return "timely.alpha: must be in (0, 1]";
    if (!(t->beta > 0 && t->beta <= 1)) return "timely.beta: must be in (0, 1]";
    if (t->delta > c->line_rate) return "timely.delta: above the line rate";
    if (t->t_low >= t->t_high) return "timely.t_low: must be below timely.t_high";
    if (t->hai_after == 0) return "timely.hai_after: must be at least 1";
    if (t->hai_factor == 0) return "timely.hai_factor: must be at least 1";
    if (t->min_rate > c->line_rate) return "timely.min_rate: above the line rate";
    return NULL;
}

static void timely_init(arb_cc *cc)
{
    struct timely_state *t = &cc->u.timely;
    t->rtt_diff = 0;
    t->prev_rtt = 0;
    t->last = ARB_TIME_NEVER;
    t->neg_count = 0;
    t->rate = cc_set_rate(cc, (double)cc->cfg.line_rate, (double)cc->cfg.timely.min_rate);
}

/* The new rate from one sample, by the rules above. */
static double timely_rate(struct timely_state *t, const arb_cc_timely_config *p, arb_time rtt)
{
    double diff = t->prev_rtt ? (double)rtt - (double)t->prev_rtt : 0;
    t->prev_rtt = rtt;
    t->rtt_diff = (1 - p->alpha) * t->rtt_diff + p->alpha * diff;
    double g = t->rtt_diff / (double)p->interval;
    t->neg_count = g <= 0 ? t->neg_count + 1 : 0;
    double delta = (double)p->delta;
    if (rtt < p->t_low) return t->rate + delta;
    if (rtt > p->t_high) return t->rate * (1 - p->beta * (1 - (double)p->t_high / (double)rtt));
    if (g <= 0) return t->rate + (t->neg_count >= p->hai_after ? p->hai_factor : 1) * delta;
    return t->rate * (1 - p->beta * (g < 1 ? g : 1));
}

static void timely_on_ack(arb_cc *cc, const arb_cc_sample *s, arb_time now)
{
    struct timely_state *t = &cc->u.timely;
    const arb_cc_timely_config *p = &cc->cfg.timely;
    if (t->last != ARB_TIME_NEVER && (now < t->last || now - t->last < p->interval)) return;
    /* the sample must have seen the last update's rate: its credit left after it */
    arb_time sent = now > s->rtt ? now - s->rtt : 0;
    if (t->last != ARB_TIME_NEVER && sent < t->last) return;
    t->last = now;
    double r = timely_rate(t, p, s->rtt);
    t->rate = cc_set_rate(cc, r, (double)p->min_rate);
}

static void timely_on_stall(arb_cc *cc, arb_time now)
{
    (void)now;
    struct timely_state *t = &cc->u.timely;
    t->rate = cc_set_rate(cc, t->rate / 2, (double)cc->cfg.timely.min_rate);
}

const cc_ops cc_timely_ops = {
    timely_check, timely_derive, timely_init, timely_on_ack, NULL, timely_on_stall, NULL, NULL,
};
