/*
 * Swift ("Swift: Delay is Simple and Effective for Congestion Control in
 * the Datacenter", SIGCOMM 2020), on the responder's loop time.
 *
 * A fractional window cwnd in credits, starting at cfg.window. On each
 * sample of loop time d (one credit acknowledged):
 *
 *   target = base_target + hops x per_hop + fs(cwnd)
 *   d < target:   cwnd += ai / cwnd   (cwnd >= 1: ai credits per loop)
 *                 cwnd += ai          (cwnd < 1)
 *   d >= target:  if the last decrease is at least d old (the sample's
 *                 credit left after it: at most one decrease per loop),
 *                 cwnd *= max(1 - beta (d - target) / d, 1 - max_mdf)
 *
 * then cwnd is clamped to [min_cwnd, window_max]. Flow scaling fs (on by
 * default, fs_range base_rtt / 2; off with ARB_CC_SWIFT_FS_OFF) adds more
 * delay allowance to a small window, so that channels converge to a fair
 * share and a channel whose loop sees more queue than its neighbours'
 * settles at a smaller window instead of pacing down to min_cwnd:
 *
 *   fs(cwnd) = clamp(A / sqrt(cwnd) + B, 0, fs_range),
 *   A = fs_range / (1/sqrt(fs_min_cwnd) - 1/sqrt(fs_max_cwnd)),
 *   B = -A / sqrt(fs_max_cwnd)
 *
 * (fs_range at fs_min_cwnd, 0 at fs_max_cwnd).
 *
 * Gates: window max(window_min, floor(cwnd)); below one credit the window
 * is 1 and the spacing srtt / cwnd (pacing), else no rate gate.
 *
 * Loss: the paper cuts by max_mdf on a fast retransmit; here a loss
 * inferred from order is counted only (random loss over a tree of links
 * would cut on most loops). A stall (cc.c) cuts by max_mdf at most once
 * per loop, and stall_reset stalls with no completion between them send
 * cwnd to min_cwnd, as the paper's retransmission-timeout rule does.
 */
#include <math.h>

#include "cc/cc_int.h"

void arb_cc_swift_default(arb_cc_swift_config *c)
{
    if (!c) return;
    c->base_target = 0;
    c->per_hop = 0;
    c->hops = 0;
    c->fs_range = 0;
    c->fs_min_cwnd = 0.1;
    c->fs_max_cwnd = 100;
    c->ai = 1;
    c->beta = 0.8;
    c->max_mdf = 0.5;
    c->min_cwnd = 0.001;
    c->stall_reset = 3;
}

static void swift_derive(arb_cc_config *c)
{
    if (!c->swift.base_target) c->swift.base_target = c->base_rtt + c->base_rtt / 2;
    /* the queueing the default target allows: a window at fs_min_cwnd may see twice it */
    if (!c->swift.fs_range) c->swift.fs_range = c->base_rtt / 2 ? c->base_rtt / 2 : 1;
}

static const char *swift_check(const arb_cc_config *c)
{
    const arb_cc_swift_config *p = &c->swift;
    if (p->base_target > ARB_PS_PER_S) return "swift.base_target: above 1 s";
    if (p->fs_range > ARB_PS_PER_S && p->fs_range != ARB_CC_SWIFT_FS_OFF)
        return "swift.fs_range: above 1 s";
    if (p->hops && p->per_hop > ARB_PS_PER_S / p->hops)
        return "swift.per_hop: hops x per_hop above 1 s";
    if (!cc_in(p->fs_min_cwnd, 1e-9, 1e9)) return "swift.fs_min_cwnd: must be in (0, 1e9]";
    if (!cc_in(p->fs_max_cwnd, 1e-9, 1e9) || !(p->fs_max_cwnd > p->fs_min_cwnd))
        return "swift.fs_max_cwnd: must be above swift.fs_min_cwnd";
    if (!cc_in(p->ai, 1e-9, (double)ARB_CC_WINDOW_MAX)) return "swift.ai: must be above 0";
    if (!(p->beta > 0 && p->beta <= 1)) return "swift.beta: must be in (0, 1]";
    if (!(p->max_mdf > 0 && p->max_mdf < 1)) return "swift.max_mdf: must be in (0, 1)";
    if (!(p->min_cwnd > 0 && p->min_cwnd <= 1)) return "swift.min_cwnd: must be in (0, 1]";
    if (p->stall_reset == 0) return "swift.stall_reset: must be at least 1";
    return NULL;
}

static void swift_init(arb_cc *cc)
{
    struct swift_state *w = &cc->u.swift;
    w->last_cut = ARB_TIME_NEVER;
    w->stalls = 0;
    w->cwnd = cc_set_cwnd(cc, (double)cc->cfg.window, cc->cfg.swift.min_cwnd, 0);
}

/* The flow-scaling allowance of a window, in ps. */
static double flow_scaling(const arb_cc_swift_config *p, double cwnd)
{
    if (p->fs_range == ARB_CC_SWIFT_FS_OFF) return 0;
    double range = (double)p->fs_range;
    double a = range / (1 / sqrt(p->fs_min_cwnd) - 1 / sqrt(p->fs_max_cwnd));
    double b = -a / sqrt(p->fs_max_cwnd);
    double fs = a / sqrt(cwnd) + b;
    return fs < 0 ? 0 : fs > range ? range : fs;
}

static double swift_target(const arb_cc_swift_config *p, double cwnd)
{
    return (double)p->base_target + (double)p->hops * (double)p->per_hop + flow_scaling(p, cwnd);
}

/* A decrease now acts on a loop of length `loop` only if the last one is older. */
static int can_decrease(const struct swift_state *w, arb_time now, arb_time loop)
{
    return w->last_cut == ARB_TIME_NEVER || (now >= w->last_cut && now - w->last_cut >= loop);
}

/*
 * The window was what held the channel back: the sample found the window
 * gate full (or did not say). Growing a window the channel does not fill
 * (held by its spacing, its NIC or its application) would only store up a
 * burst.
 */
static int window_limited(const arb_cc *cc, const arb_cc_sample *s)
{
    return s->inflight == 0 || s->inflight >= cc->window;
}

static void swift_on_ack(arb_cc *cc, const arb_cc_sample *s, arb_time now)
{
    struct swift_state *w = &cc->u.swift;
    const arb_cc_swift_config *p = &cc->cfg.swift;
    double cwnd = w->cwnd;
    double d = (double)s->rtt;
    double target = swift_target(p, cwnd);
    w->stalls = 0;
    if (d < target) {
        if (window_limited(cc, s)) cwnd += cwnd >= 1 ? p->ai / cwnd : p->ai;
    } else if (can_decrease(w, now, s->rtt)) {
        double f = 1 - p->beta * (d - target) / d;
        cwnd *= f > 1 - p->max_mdf ? f : 1 - p->max_mdf;
        w->last_cut = now;
    }
    w->cwnd = cc_set_cwnd(cc, cwnd, p->min_cwnd, 0);
}

static void swift_on_stall(arb_cc *cc, arb_time now)
{
    struct swift_state *w = &cc->u.swift;
    const arb_cc_swift_config *p = &cc->cfg.swift;
    double cwnd = w->cwnd;
    if (++w->stalls >= p->stall_reset) {
        cwnd = p->min_cwnd;
        w->last_cut = now;
    } else if (can_decrease(w, now, cc->srtt)) {
        cwnd *= 1 - p->max_mdf;
        w->last_cut = now;
    }
    w->cwnd = cc_set_cwnd(cc, cwnd, p->min_cwnd, 0);
}

const cc_ops cc_swift_ops = {
    swift_check, swift_derive, swift_init, swift_on_ack, NULL, swift_on_stall, NULL, NULL,
};
