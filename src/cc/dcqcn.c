/*
 * DCQCN ("Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015), adapted to the responder: the CE bit of a sample (the
 * root aggregate carried CE) stands for the paper's CNP, and the
 * notification point's "at most one CNP per interval" becomes "at most one
 * cut per cnp_interval". Rates in bit/s: Rc the current rate, Rt the
 * target, both starting at line rate; alpha starts at alpha_init.
 *
 *   cut (a CE sample at least cnp_interval after the last cut, or the
 *   first one):
 *       Rt = Rc;  Rc = max(min_rate, Rc (1 - alpha/2));
 *       alpha = (1 - g) alpha + g;
 *       the alpha timer restarts (K), the rate timer restarts (T), both
 *       stage counters and the byte counter go to 0.
 *   alpha timer, every K without a cut: alpha = (1 - g) alpha; it stops
 *       once alpha < 1e-6 (a cut at that alpha changes the rate by less
 *       than a millionth) and restarts at the next cut.
 *   rate increase, when the rate timer T expires or B bytes have been sent
 *   (arb_cc_on_send) since the last such event or cut: dcqcn_rate.h, the
 *   simulator's DCQCN's step too; once Rc is back at line rate the rate
 *   timer and byte counter stop until the next cut.
 *
 * Gates: spacing = credit_bytes x 8 / Rc; window = the loop's worth at line
 * rate (cc_rate_window): when Rc is too high for the path (at the start,
 * or before a cut has taken effect), at most that much is in flight.
 *
 * Timers: arb_cc_next_expiry is the earlier of the alpha and rate timers
 * (ARB_TIME_NEVER before the first cut and after full recovery). Both start
 * at the first cut; before it there is no alpha to decay.
 *
 * Loss: the paper relies on a lossless fabric and has no loss rule. A loss
 * is counted only; a stall (cc.c) counts as a CE sample (a cut, subject to
 * cnp_interval).
 */
#include "cc/cc_int.h"

#define ALPHA_FLOOR 1e-6

void arb_cc_dcqcn_default(arb_cc_dcqcn_config *c)
{
    if (!c) return;
    c->cnp_interval = 50 * ARB_PS_PER_US;
    c->g = 1.0 / 256;
    c->alpha_init = 1;
    c->alpha_timer = 55 * ARB_PS_PER_US;
    c->rate_timer = 55 * ARB_PS_PER_US;
    c->byte_counter = 0;
    c->f = 5;
    c->rai = 0;
    c->rhai = 0;
    c->min_rate = 0;
}

static uint64_t at_least_1(uint64_t x)
{
    return x ? x : 1;
}

static uint64_t at_most(uint64_t x, uint64_t hi)
{
    return x < hi ? x : hi;
}

/* The increase steps are the paper's per reaction point (40 Mb/s of a
 * 40 Gb/s NIC for each QP, however many share it): a thousandth and a
 * hundredth of the host's link, not of this channel's share of it. */
static void dcqcn_derive(arb_cc_config *c)
{
    arb_cc_dcqcn_config *d = &c->dcqcn;
    uint64_t host = c->host_rate ? c->host_rate : c->line_rate;
    if (!d->rai) d->rai = at_least_1(at_most(host / 1000, c->line_rate));
    if (!d->rhai) d->rhai = at_least_1(at_most(host / 100, c->line_rate));
    if (!d->min_rate) d->min_rate = at_least_1(c->line_rate / 1000);
    /* the paper's 10 MB on 40 Gb/s NICs: 2 ms at line rate */
    if (!d->byte_counter) d->byte_counter = at_least_1(c->line_rate / 4000);
}

static const char *dcqcn_check(const arb_cc_config *c)
{
    const arb_cc_dcqcn_config *d = &c->dcqcn;
    if (d->cnp_interval == 0) return "dcqcn.cnp_interval: must be above 0";
    if (d->alpha_timer == 0) return "dcqcn.alpha_timer: must be above 0";
    if (d->rate_timer == 0) return "dcqcn.rate_timer: must be above 0";
    if (!(d->g > 0 && d->g < 1)) return "dcqcn.g: must be in (0, 1)";
    if (!(d->alpha_init > 0 && d->alpha_init <= 1)) return "dcqcn.alpha_init: must be in (0, 1]";
    if (d->f == 0) return "dcqcn.f: must be at least 1";
    if (d->rai > c->line_rate) return "dcqcn.rai: above the line rate";
    if (d->rhai > c->line_rate) return "dcqcn.rhai: above the line rate";
    if (d->min_rate > c->line_rate) return "dcqcn.min_rate: above the line rate";
    return NULL;
}

static void dcqcn_init(arb_cc *cc)
{
    struct dcqcn_state *d = &cc->u.dcqcn;
    d->r.rc = d->r.rt = (double)cc->cfg.line_rate;
    d->alpha = cc->cfg.dcqcn.alpha_init;
    d->last_cut = ARB_TIME_NEVER;
    d->alpha_at = ARB_TIME_NEVER;
    d->inc_at = ARB_TIME_NEVER;
    d->byte_cnt = 0;
    d->r.t_stage = d->r.b_stage = 0;
    cc_set_rate(cc, d->r.rc, (double)cc->cfg.dcqcn.min_rate);
}

static arb_time after(arb_time now, arb_time dt)
{
    return now > ARB_TIME_NEVER - dt ? ARB_TIME_NEVER - 1 : now + dt;
}

static void cut(arb_cc *cc, arb_time now)
{
    struct dcqcn_state *d = &cc->u.dcqcn;
    const arb_cc_dcqcn_config *p = &cc->cfg.dcqcn;
    d->r.rt = d->r.rc;
    d->r.rc = cc_set_rate(cc, d->r.rc * (1 - d->alpha / 2), (double)p->min_rate);
    d->alpha = (1 - p->g) * d->alpha + p->g;
    d->alpha_at = after(now, p->alpha_timer);
    d->inc_at = after(now, p->rate_timer);
    d->r.t_stage = d->r.b_stage = 0;
    d->byte_cnt = 0;
    d->last_cut = now;
}

/* A CE sample (or a stall) cuts, at most once per cnp_interval. */
static void maybe_cut(arb_cc *cc, arb_time now)
{
    struct dcqcn_state *d = &cc->u.dcqcn;
    if (d->last_cut != ARB_TIME_NEVER &&
        (now < d->last_cut || now - d->last_cut < cc->cfg.dcqcn.cnp_interval))
        return;
    cut(cc, now);
}

/* One rate increase; by_timer says which stage it advances. */
static void increase(arb_cc *cc, int by_timer)
{
    struct dcqcn_state *d = &cc->u.dcqcn;
    const arb_cc_dcqcn_config *p = &cc->cfg.dcqcn;
    if (dcqcn_increase(&d->r, by_timer, (double)cc->cfg.line_rate, p->f, (double)p->rai,
                       (double)p->rhai)) {
        d->inc_at = ARB_TIME_NEVER;
        d->byte_cnt = 0;
    }
    d->r.rc = cc_set_rate(cc, d->r.rc, (double)p->min_rate);
}

static void dcqcn_on_ack(arb_cc *cc, const arb_cc_sample *s, arb_time now)
{
    if (s->ce) maybe_cut(cc, now);
}

static void dcqcn_on_send(arb_cc *cc, uint32_t bytes, arb_time now)
{
    (void)now;
    struct dcqcn_state *d = &cc->u.dcqcn;
    if (d->inc_at == ARB_TIME_NEVER) return; /* at line rate: nothing to recover */
    d->byte_cnt += bytes;
    while (d->inc_at != ARB_TIME_NEVER && d->byte_cnt >= cc->cfg.dcqcn.byte_counter) {
        d->byte_cnt -= cc->cfg.dcqcn.byte_counter;
        increase(cc, 0);
    }
}

static void dcqcn_on_stall(arb_cc *cc, arb_time now)
{
    maybe_cut(cc, now);
}

static arb_time dcqcn_next_expiry(const arb_cc *cc)
{
    const struct dcqcn_state *d = &cc->u.dcqcn;
    return d->alpha_at < d->inc_at ? d->alpha_at : d->inc_at;
}

static void decay_alpha(arb_cc *cc)
{
    struct dcqcn_state *d = &cc->u.dcqcn;
    d->alpha *= 1 - cc->cfg.dcqcn.g;
    d->alpha_at =
        d->alpha < ALPHA_FLOOR ? ARB_TIME_NEVER : after(d->alpha_at, cc->cfg.dcqcn.alpha_timer);
}

/* The events due by now, earliest first (alpha before rate on a tie). */
static void dcqcn_on_expiry(arb_cc *cc, arb_time now)
{
    struct dcqcn_state *d = &cc->u.dcqcn;
    for (;;) {
        arb_time next = dcqcn_next_expiry(cc);
        if (next > now) return;
        cc->st.expiries++;
        if (d->alpha_at == next) {
            decay_alpha(cc);
        } else {
            d->inc_at = after(d->inc_at, cc->cfg.dcqcn.rate_timer);
            increase(cc, 1);
        }
    }
}

const cc_ops cc_dcqcn_ops = {
    dcqcn_check,   dcqcn_derive,   dcqcn_init,        dcqcn_on_ack,
    dcqcn_on_send, dcqcn_on_stall, dcqcn_next_expiry, dcqcn_on_expiry,
};
