/*
 * Unit tests of congestion control (cc.h): the common interface, DISABLED
 * and FIXED, each adaptive controller's rules one gate at a time, and the
 * four adaptive controllers driven by a tiny bottleneck model (an incast,
 * the recovery after it, two channels sharing, random loss).
 *
 * Every expected figure is computed here from the parameters by the rule
 * the comment states, never copied from a run.
 */
#include "arbor/cc.h"

#include <math.h>
#include <stdlib.h>

#include "testkit.h"

/* The fabric of the tests: 100 Gb/s, a 10 us unloaded loop, 8274 B credits. */
#define LINE 100000000000ull
#define CREDIT 8274u
#define BASE (10 * ARB_PS_PER_US)
#define US ARB_PS_PER_US

/* One credit's serialisation at line rate, ps (661.92 ns). */
static double t_credit(void)
{
    return CREDIT * 8.0 * (double)ARB_PS_PER_S / (double)LINE;
}

/* Credits in flight that fill the unloaded loop at line rate (15.1). */
static double bdp(void)
{
    return (double)BASE / t_credit();
}

static int near(double a, double b, double tol)
{
    return fabs(a - b) <= tol * (fabs(b) > 1 ? fabs(b) : 1);
}

#define CHECK_NEAR(a, b)                                                                           \
    do {                                                                                           \
        double na_ = (a), nb_ = (b);                                                               \
        if (!near(na_, nb_, 1e-9)) TESTKIT_REPORT("%s ~ %s: %.12g != %.12g", #a, #b, na_, nb_);    \
    } while (0)

static arb_cc *make(arb_cc_kind kind, const arb_cc_config *c)
{
    arb_cc *cc = NULL;
    int rc = arb_cc_new(&cc, kind, c);
    if (rc) TESTKIT_REPORT("arb_cc_new(%s) = %d", arb_cc_kind_name(kind), rc);
    return cc;
}

static arb_cc_stats stats_of(const arb_cc *cc)
{
    arb_cc_stats st;
    arb_cc_get_stats(cc, &st);
    return st;
}

/* One sample of loop time rtt, at now, with the given CE and inflight. */
static void ack(arb_cc *cc, arb_time rtt, int ce, uint32_t inflight, arb_time now)
{
    arb_cc_sample s = {rtt, ce, inflight, CREDIT};
    arb_cc_on_ack(cc, &s, now);
}

/* ==== the interface, DISABLED and FIXED =================================== */

TEST(defaults)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    CHECK_EQ_U(c.window, ARB_CC_WINDOW_DEFAULT);
    CHECK_EQ_U(c.spacing, 0);
    CHECK_EQ_U(c.line_rate, ARB_CC_LINE_RATE_DEFAULT);
    CHECK_EQ_U(c.credit_bytes, ARB_CC_CREDIT_BYTES_DEFAULT);
    CHECK_EQ_U(c.base_rtt, ARB_CC_BASE_RTT_DEFAULT);
    CHECK_EQ_U(c.window_min, 1);
    CHECK_EQ_U(c.window_max, ARB_CC_WINDOW_MAX_DEFAULT);

    arb_cc_timely_config t;
    arb_cc_timely_default(&t);
    CHECK(t.alpha == c.timely.alpha && t.beta == c.timely.beta && t.delta == c.timely.delta);
    arb_cc_swift_config w;
    arb_cc_swift_default(&w);
    CHECK(w.ai == c.swift.ai && w.max_mdf == c.swift.max_mdf && w.min_cwnd == c.swift.min_cwnd);
    arb_cc_dcqcn_config d;
    arb_cc_dcqcn_default(&d);
    CHECK(d.g == c.dcqcn.g && d.rate_timer == c.dcqcn.rate_timer && d.f == c.dcqcn.f);
    arb_cc_oscar_config o;
    arb_cc_oscar_default(&o);
    CHECK(o.gain == c.oscar.gain && o.kappa == c.oscar.kappa && o.headroom == c.oscar.headroom);

    arb_cc *cc = NULL;
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_DISABLED, NULL), 0);
    REQUIRE(cc != NULL);
    CHECK_EQ_U(arb_cc_window(cc), ARB_CC_WINDOW_DEFAULT);
    CHECK_EQ_U(arb_cc_max_window(cc), ARB_CC_WINDOW_DEFAULT);
    CHECK_EQ_U(arb_cc_min_spacing(cc), 0);
    CHECK_EQ_I(arb_cc_get_kind(cc), ARB_CC_DISABLED);
    CHECK_EQ_U(arb_cc_next_expiry(cc), ARB_TIME_NEVER);
    arb_cc_free(cc);
    arb_cc_free(NULL);
}

/* The zero (derived) defaults become the documented functions of the
 * common fields. */
TEST(derived_defaults)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.line_rate = 400000000000ull;
    c.base_rtt = 8 * US;
    arb_cc_config got;
    arb_cc *cc = make(ARB_CC_TIMELY, &c);
    arb_cc_get_config(cc, &got);
    CHECK_EQ_U(got.timely.delta, c.line_rate / 100);
    CHECK_EQ_U(got.timely.min_rate, c.line_rate / 1000);
    CHECK_EQ_U(got.timely.t_low, 12 * US);
    CHECK_EQ_U(got.timely.t_high, 80 * US);
    CHECK_EQ_U(got.timely.interval, 8 * US);
    arb_cc_free(cc);
    cc = make(ARB_CC_SWIFT, &c);
    arb_cc_get_config(cc, &got);
    CHECK_EQ_U(got.swift.base_target, 12 * US);
    CHECK_EQ_U(got.swift.fs_range, 4 * US); /* flow scaling on: base_rtt / 2 */
    arb_cc_free(cc);
    cc = make(ARB_CC_DCQCN, &c);
    arb_cc_get_config(cc, &got);
    CHECK_EQ_U(got.dcqcn.rai, c.line_rate / 1000);
    CHECK_EQ_U(got.dcqcn.rhai, c.line_rate / 100);
    CHECK_EQ_U(got.dcqcn.min_rate, c.line_rate / 1000);
    /* the paper's B, 10 MB at 40 Gb/s, is 2 ms at line rate: 100 MB at 400 Gb/s */
    CHECK_EQ_U(got.dcqcn.byte_counter, 100000000);
    arb_cc_free(cc);
    /* a channel's share of a host link: the increase steps follow the host's
     * link (the paper's are per reaction point), the floor and B the share */
    c.host_rate = 8 * c.line_rate;
    cc = make(ARB_CC_DCQCN, &c);
    arb_cc_get_config(cc, &got);
    CHECK_EQ_U(got.dcqcn.rai, c.host_rate / 1000);
    CHECK_EQ_U(got.dcqcn.rhai, c.host_rate / 100);
    CHECK_EQ_U(got.dcqcn.min_rate, c.line_rate / 1000);
    CHECK_EQ_U(got.dcqcn.byte_counter, 100000000);
    arb_cc_free(cc);
    /* a share below a hundredth of the host's link: the steps stop at it */
    c.line_rate = 1000000000ull;
    c.host_rate = 200 * c.line_rate;
    cc = make(ARB_CC_DCQCN, &c);
    arb_cc_get_config(cc, &got);
    CHECK_EQ_U(got.dcqcn.rai, c.host_rate / 1000);
    CHECK_EQ_U(got.dcqcn.rhai, c.line_rate);
    arb_cc_free(cc);
    c.host_rate = 0;
    cc = make(ARB_CC_OSCAR, &c);
    arb_cc_get_config(cc, &got);
    CHECK_EQ_U(got.oscar.target, 12 * US);
    arb_cc_free(cc);
    /* an explicit value stays */
    c.timely.t_low = 20 * US;
    cc = make(ARB_CC_TIMELY, &c);
    arb_cc_get_config(cc, &got);
    CHECK_EQ_U(got.timely.t_low, 20 * US);
    arb_cc_free(cc);
}

TEST(disabled_ignores_spacing_and_samples)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.window = 7;
    c.spacing = 5 * ARB_PS_PER_US; /* DISABLED has no rate gate */
    arb_cc *cc = NULL;
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_DISABLED, &c), 0);
    arb_time t = 0;
    for (int i = 0; i < 100; i++) {
        t += 3 * ARB_PS_PER_US;
        arb_cc_on_sample(cc, (arb_time)(i + 1) * ARB_PS_PER_US, i % 3 == 0, t);
        if (i % 10 == 0) arb_cc_on_timeout(cc, t);
        arb_cc_on_send(cc, CREDIT, t);
        CHECK_EQ_U(arb_cc_window(cc), 7);
        CHECK_EQ_U(arb_cc_min_spacing(cc), 0);
    }
    arb_cc_stats st;
    arb_cc_get_stats(cc, &st);
    CHECK_EQ_U(st.samples, 100);
    CHECK_EQ_U(st.ce_samples, 34);
    CHECK_EQ_U(st.timeouts, 10);
    CHECK_EQ_U(st.sends, 100);
    CHECK_EQ_U(st.stalls, 0);
    CHECK_EQ_U(st.increases + st.decreases, 0);
    CHECK_EQ_U(st.window, 7);
    CHECK_EQ_U(st.min, 1 * ARB_PS_PER_US);
    CHECK_EQ_U(st.max, 100 * ARB_PS_PER_US);
    CHECK_EQ_U(st.last, 100 * ARB_PS_PER_US);
    CHECK_EQ_U(st.sum, 5050 * ARB_PS_PER_US);
    arb_cc_free(cc);
}

TEST(fixed_holds_rate_and_window)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.window = 12;
    c.spacing = arb_cc_spacing_for_rate(100000000000ull, 8274); /* 100 Gb/s */
    CHECK_EQ_U(c.spacing, 661920);                              /* 661.92 ns */
    arb_cc *cc = NULL;
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_FIXED, &c), 0);
    CHECK_EQ_I(arb_cc_get_kind(cc), ARB_CC_FIXED);
    arb_time t = 0;
    for (int i = 0; i < 50; i++) {
        t += ARB_PS_PER_US;
        arb_cc_on_sample(cc, 40 * ARB_PS_PER_US, 1, t); /* congestion everywhere */
        arb_cc_on_timeout(cc, t);
        arb_cc_on_loss(cc, 0, t);
        CHECK_EQ_U(arb_cc_window(cc), 12);
        CHECK_EQ_U(arb_cc_min_spacing(cc), 661920);
    }
    arb_cc_stats st;
    arb_cc_get_stats(cc, &st);
    CHECK_EQ_U(st.samples, 50);
    CHECK_EQ_U(st.ce_samples, 50);
    CHECK_EQ_U(st.timeouts, 50);
    CHECK_EQ_U(st.losses, 50);
    CHECK_EQ_U(st.spacing, 661920);
    arb_cc_free(cc);
}

TEST(stats_before_any_sample_and_saturation)
{
    arb_cc *cc = NULL;
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_FIXED, NULL), 0);
    arb_cc_stats st;
    arb_cc_get_stats(cc, &st);
    CHECK_EQ_U(st.samples, 0);
    CHECK_EQ_U(st.min, ARB_TIME_NEVER);
    CHECK_EQ_U(st.max, 0);
    CHECK_EQ_U(st.last, 0);
    arb_cc_on_sample(cc, ARB_TIME_NEVER - 5, 0, 0);
    arb_cc_on_sample(cc, 10, 0, 0);
    arb_cc_get_stats(cc, &st);
    CHECK_EQ_U(st.sum, ARB_TIME_NEVER);
    CHECK_EQ_U(st.min, 10);
    CHECK_EQ_U(st.max, ARB_TIME_NEVER - 5);
    arb_cc_free(cc);
}

/* One rule of arb_cc_new broken at a time: each must give ARB_EINVAL. */
typedef void (*breaker)(arb_cc_config *c);

static void bad_line_0(arb_cc_config *c)
{
    c->line_rate = 0;
}
static void bad_line_max(arb_cc_config *c)
{
    c->line_rate = ARB_RATE_MAX + 1;
}
static void bad_host_below(arb_cc_config *c)
{
    c->host_rate = c->line_rate - 1;
}
static void bad_host_max(arb_cc_config *c)
{
    c->host_rate = ARB_RATE_MAX + 1;
}
static void bad_credit(arb_cc_config *c)
{
    c->credit_bytes = 0;
}
static void bad_base_0(arb_cc_config *c)
{
    c->base_rtt = 0;
}
static void bad_base_max(arb_cc_config *c)
{
    c->base_rtt = ARB_PS_PER_S + 1;
}
static void bad_wmin_0(arb_cc_config *c)
{
    c->window_min = 0;
}
static void bad_wmin_gt_max(arb_cc_config *c)
{
    c->window_min = c->window_max + 1;
}
static void bad_wmax(arb_cc_config *c)
{
    c->window_max = ARB_CC_WINDOW_MAX + 1;
}
static void bad_w_below(arb_cc_config *c)
{
    c->window_min = 8, c->window = 4;
}
static void bad_w_above(arb_cc_config *c)
{
    c->window = c->window_max + 1;
}

static const breaker common_breaks[] = {bad_line_0,      bad_line_max, bad_host_below, bad_host_max,
                                        bad_credit,      bad_base_0,   bad_base_max,   bad_wmin_0,
                                        bad_wmin_gt_max, bad_wmax};
/* only for the kinds that start from cfg.window */
static const breaker window_breaks[] = {bad_w_below, bad_w_above};

static void bad_t_alpha0(arb_cc_config *c)
{
    c->timely.alpha = 0;
}
static void bad_t_alpha(arb_cc_config *c)
{
    c->timely.alpha = 1.5;
}
static void bad_t_alpha_nan(arb_cc_config *c)
{
    c->timely.alpha = NAN;
}
static void bad_t_beta(arb_cc_config *c)
{
    c->timely.beta = 0;
}
static void bad_t_delta(arb_cc_config *c)
{
    c->timely.delta = c->line_rate + 1;
}
static void bad_t_low_high(arb_cc_config *c)
{
    c->timely.t_low = 30 * US, c->timely.t_high = 30 * US;
}
static void bad_t_hai_after(arb_cc_config *c)
{
    c->timely.hai_after = 0;
}
static void bad_t_hai_factor(arb_cc_config *c)
{
    c->timely.hai_factor = 0;
}
static void bad_t_min_rate(arb_cc_config *c)
{
    c->timely.min_rate = c->line_rate + 1;
}

static const breaker timely_breaks[] = {bad_t_alpha0,    bad_t_alpha,      bad_t_alpha_nan,
                                        bad_t_beta,      bad_t_delta,      bad_t_low_high,
                                        bad_t_hai_after, bad_t_hai_factor, bad_t_min_rate};

static void bad_s_target(arb_cc_config *c)
{
    c->swift.base_target = ARB_PS_PER_S + 1;
}
static void bad_s_hops(arb_cc_config *c)
{
    c->swift.hops = 2, c->swift.per_hop = ARB_PS_PER_S;
}
static void bad_s_fs_range(arb_cc_config *c)
{
    c->swift.fs_range = ARB_PS_PER_S + 1;
}
static void bad_s_fs_min(arb_cc_config *c)
{
    c->swift.fs_min_cwnd = 0;
}
static void bad_s_fs_order(arb_cc_config *c)
{
    c->swift.fs_max_cwnd = c->swift.fs_min_cwnd;
}
static void bad_s_ai(arb_cc_config *c)
{
    c->swift.ai = 0;
}
static void bad_s_ai_nan(arb_cc_config *c)
{
    c->swift.ai = NAN;
}
static void bad_s_beta(arb_cc_config *c)
{
    c->swift.beta = 1.01;
}
static void bad_s_mdf0(arb_cc_config *c)
{
    c->swift.max_mdf = 0;
}
static void bad_s_mdf1(arb_cc_config *c)
{
    c->swift.max_mdf = 1;
}
static void bad_s_min_cwnd0(arb_cc_config *c)
{
    c->swift.min_cwnd = 0;
}
static void bad_s_min_cwnd(arb_cc_config *c)
{
    c->swift.min_cwnd = 1.5;
}
static void bad_s_stall(arb_cc_config *c)
{
    c->swift.stall_reset = 0;
}

static const breaker swift_breaks[] = {bad_s_target,   bad_s_hops, bad_s_fs_range,  bad_s_fs_min,
                                       bad_s_fs_order, bad_s_ai,   bad_s_ai_nan,    bad_s_beta,
                                       bad_s_mdf0,     bad_s_mdf1, bad_s_min_cwnd0, bad_s_min_cwnd,
                                       bad_s_stall};

static void bad_d_cnp(arb_cc_config *c)
{
    c->dcqcn.cnp_interval = 0;
}
static void bad_d_k(arb_cc_config *c)
{
    c->dcqcn.alpha_timer = 0;
}
static void bad_d_t(arb_cc_config *c)
{
    c->dcqcn.rate_timer = 0;
}
static void bad_d_g0(arb_cc_config *c)
{
    c->dcqcn.g = 0;
}
static void bad_d_g1(arb_cc_config *c)
{
    c->dcqcn.g = 1;
}
static void bad_d_alpha(arb_cc_config *c)
{
    c->dcqcn.alpha_init = 0;
}
static void bad_d_f(arb_cc_config *c)
{
    c->dcqcn.f = 0;
}
static void bad_d_rai(arb_cc_config *c)
{
    c->dcqcn.rai = c->line_rate + 1;
}
static void bad_d_rhai(arb_cc_config *c)
{
    c->dcqcn.rhai = c->line_rate + 1;
}
static void bad_d_min(arb_cc_config *c)
{
    c->dcqcn.min_rate = c->line_rate + 1;
}

/* (byte_counter has no rule left: 0 is the derived default, anything else is valid) */
static const breaker dcqcn_breaks[] = {bad_d_cnp,   bad_d_k, bad_d_t,   bad_d_g0,   bad_d_g1,
                                       bad_d_alpha, bad_d_f, bad_d_rai, bad_d_rhai, bad_d_min};

static void bad_o_target(arb_cc_config *c)
{
    c->oscar.target = ARB_PS_PER_S + 1;
}
static void bad_o_gain0(arb_cc_config *c)
{
    c->oscar.gain = 0;
}
static void bad_o_gain(arb_cc_config *c)
{
    c->oscar.gain = 1.2;
}
static void bad_o_kappa(arb_cc_config *c)
{
    c->oscar.kappa = -0.1;
}
static void bad_o_kappa1(arb_cc_config *c)
{
    c->oscar.kappa = 10.5;
}
static void bad_o_headroom(arb_cc_config *c)
{
    c->oscar.headroom = -1;
}
static void bad_o_headroom_nan(arb_cc_config *c)
{
    c->oscar.headroom = NAN;
}
static void bad_o_growth(arb_cc_config *c)
{
    c->oscar.max_growth = 1;
}
static void bad_o_min_cwnd(arb_cc_config *c)
{
    c->oscar.min_cwnd = 0;
}

static const breaker oscar_breaks[] = {bad_o_target,       bad_o_gain0,  bad_o_gain,
                                       bad_o_kappa,        bad_o_kappa1, bad_o_headroom,
                                       bad_o_headroom_nan, bad_o_growth, bad_o_min_cwnd};

static void check_rules(arb_cc_kind kind, const breaker *rules, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        arb_cc_config c;
        arb_cc_config_default(&c);
        rules[i](&c);
        arb_cc *cc = (arb_cc *)&c;
        int rc = arb_cc_new(&cc, kind, &c);
        if (rc != ARB_EINVAL || cc != NULL)
            TESTKIT_REPORT("%s rule %zu: arb_cc_new = %d", arb_cc_kind_name(kind), i, rc);
        arb_cc_free(rc ? NULL : cc);
    }
}

#define NRULES(a) (sizeof(a) / sizeof((a)[0]))

TEST(errors)
{
    arb_cc *cc = (arb_cc *)&cc;
    arb_cc_config c;
    arb_cc_config_default(&c);
    REQUIRE_EQ_I(arb_cc_new(NULL, ARB_CC_FIXED, &c), ARB_EINVAL);
    REQUIRE_EQ_I(arb_cc_new(&cc, (arb_cc_kind)ARB_CC_KIND_COUNT, &c), ARB_EINVAL);
    CHECK(cc == NULL);
    REQUIRE_EQ_I(arb_cc_new(&cc, (arb_cc_kind)-1, &c), ARB_EINVAL);
    c.window = 0;
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_DISABLED, &c), ARB_EINVAL);
    c.window = ARB_CC_WINDOW_MAX + 1;
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_FIXED, &c), ARB_EINVAL);
    /* DISABLED and FIXED read only window (and spacing): window_max does
     * not bind them */
    c.window = ARB_CC_WINDOW_MAX;
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_FIXED, &c), 0);
    CHECK_EQ_U(arb_cc_window(cc), ARB_CC_WINDOW_MAX);
    CHECK_EQ_U(arb_cc_max_window(cc), ARB_CC_WINDOW_MAX);
    arb_cc_free(cc);
    arb_cc_config_default(&c);
    c.swift.fs_range = ARB_CC_SWIFT_FS_OFF; /* not a range: flow scaling off */
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_SWIFT, &c), 0);
    arb_cc_free(cc);
    arb_cc_config_default(&c);
    c.timely.alpha = 7; /* another kind's field is not read */
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_SWIFT, &c), 0);
    arb_cc_free(cc);

    for (int k = ARB_CC_TIMELY; k <= ARB_CC_OSCAR; k++)
        check_rules((arb_cc_kind)k, common_breaks, NRULES(common_breaks));
    check_rules(ARB_CC_SWIFT, window_breaks, NRULES(window_breaks));
    check_rules(ARB_CC_OSCAR, window_breaks, NRULES(window_breaks));
    check_rules(ARB_CC_TIMELY, timely_breaks, NRULES(timely_breaks));
    check_rules(ARB_CC_SWIFT, swift_breaks, NRULES(swift_breaks));
    check_rules(ARB_CC_DCQCN, dcqcn_breaks, NRULES(dcqcn_breaks));
    check_rules(ARB_CC_OSCAR, oscar_breaks, NRULES(oscar_breaks));

    CHECK_EQ_U(arb_cc_spacing_for_rate(0, 8274), ARB_TIME_NEVER);
    /* NULL controller: harmless, the tightest gates */
    arb_cc_sample s = {1, 1, 1, 1};
    arb_cc_on_sample(NULL, 1, 1, 0);
    arb_cc_on_ack(NULL, &s, 0);
    arb_cc_on_send(NULL, 1, 0);
    arb_cc_on_loss(NULL, 1, 0);
    arb_cc_on_timeout(NULL, 0);
    arb_cc_on_expiry(NULL, 0);
    CHECK_EQ_U(arb_cc_next_expiry(NULL), ARB_TIME_NEVER);
    CHECK_EQ_U(arb_cc_window(NULL), 1);
    CHECK_EQ_U(arb_cc_max_window(NULL), 1);
    CHECK_EQ_U(arb_cc_min_spacing(NULL), 0);
    arb_cc_get_stats(NULL, NULL);
    arb_cc_get_config(NULL, NULL);
    arb_cc_config_default(NULL);
    /* a NULL sample is nothing */
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_SWIFT, NULL), 0);
    arb_cc_on_ack(cc, NULL, 5);
    CHECK_EQ_U(stats_of(cc).samples, 0);
    arb_cc_free(cc);
}

/* arb_cc_check names the field a configuration breaks, and agrees with
 * arb_cc_new on every case. */
TEST(check_names_the_field)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    for (int k = 0; k < ARB_CC_KIND_COUNT; k++)
        CHECK(arb_cc_check((arb_cc_kind)k, &c) == NULL);
    CHECK(arb_cc_check((arb_cc_kind)ARB_CC_KIND_COUNT, &c) != NULL);
    static const struct {
        arb_cc_kind kind;
        const char *field;
    } cases[] = {{ARB_CC_TIMELY, "timely.beta:"}, {ARB_CC_SWIFT, "swift.max_mdf:"},
                 {ARB_CC_DCQCN, "dcqcn.g:"},      {ARB_CC_OSCAR, "oscar.gain:"},
                 {ARB_CC_SWIFT, "window_min:"},   {ARB_CC_FIXED, "window:"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        arb_cc_config b = c;
        switch (i) {
        case 0:
            b.timely.beta = 1.5;
            break;
        case 1:
            b.swift.max_mdf = 1;
            break;
        case 2:
            b.dcqcn.g = 0;
            break;
        case 3:
            b.oscar.gain = 0;
            break;
        case 4:
            b.window_min = b.window_max + 1;
            break;
        default:
            b.window = 0;
            break;
        }
        const char *why = arb_cc_check(cases[i].kind, &b);
        CHECK(why != NULL && strncmp(why, cases[i].field, strlen(cases[i].field)) == 0);
        arb_cc *cc = NULL;
        REQUIRE_EQ_I(arb_cc_new(&cc, cases[i].kind, &b), ARB_EINVAL);
        CHECK(cc == NULL);
    }
}

TEST(names)
{
    CHECK_STR(arb_cc_kind_name(ARB_CC_DISABLED), "disabled");
    CHECK_STR(arb_cc_kind_name(ARB_CC_FIXED), "fixed");
    CHECK_STR(arb_cc_kind_name(ARB_CC_OSCAR), "oscar");
    CHECK(arb_cc_kind_name(ARB_CC_KIND_COUNT) == NULL);
    CHECK(arb_cc_kind_name(-1) == NULL);
    CHECK_EQ_I(arb_cc_kind_parse("FIXED"), ARB_CC_FIXED);
    CHECK_EQ_I(arb_cc_kind_parse("Swift"), ARB_CC_SWIFT);
    CHECK_EQ_I(arb_cc_kind_parse("fix"), ARB_ENOENT);
    CHECK_EQ_I(arb_cc_kind_parse(NULL), ARB_ENOENT);
    for (int k = 0; k < ARB_CC_KIND_COUNT; k++)
        CHECK_EQ_I(arb_cc_kind_parse(arb_cc_kind_name(k)), k);
}

/* ==== losses and stalls (common to the adaptive kinds) ===================== */

/*
 * A loss inferred from order never moves a gate; a timer loss moves one
 * only when nothing completed for 2 x max(srtt, spacing), and then at most
 * once per srtt.
 */
TEST(losses_and_stalls)
{
    for (int k = ARB_CC_TIMELY; k <= ARB_CC_OSCAR; k++) {
        arb_cc *cc = make((arb_cc_kind)k, NULL);
        arb_time t = 100 * US, rtt = BASE;
        ack(cc, rtt, 0, 0, t); /* srtt = rtt */
        arb_cc_stats st0 = stats_of(cc);
        for (int i = 0; i < 50; i++) {
            t += US;
            arb_cc_on_loss(cc, 0, t);
        }
        arb_cc_stats st = stats_of(cc);
        CHECK_EQ_U(st.losses, 50);
        CHECK(st.window == st0.window && st.spacing == st0.spacing && st.cwnd == st0.cwnd);
        /* a timer loss right after a completion is one lost credit among
         * flowing ones: no reaction */
        t += US;
        ack(cc, rtt, 0, 0, t);
        st0 = stats_of(cc);
        arb_cc_on_timeout(cc, t + rtt);
        st = stats_of(cc);
        CHECK_EQ_U(st.timeouts, 1);
        CHECK_EQ_U(st.stalls, 0);
        CHECK(st.cwnd == st0.cwnd && st.rate == st0.rate);
        /* nothing for 2 loops (spacing at line rate is below a loop): a
         * stall, the gate falls; a second timer loss within one srtt is
         * not another */
        arb_time stall = t + 2 * rtt;
        arb_cc_on_loss(cc, 1, stall);
        st = stats_of(cc);
        CHECK_EQ_U(st.stalls, 1);
        if (k == ARB_CC_TIMELY || k == ARB_CC_DCQCN)
            CHECK(st.rate < st0.rate);
        else
            CHECK(st.cwnd < st0.cwnd);
        arb_cc_on_loss(cc, 1, stall + rtt - 1);
        CHECK_EQ_U(stats_of(cc).stalls, 1);
        arb_cc_on_loss(cc, 1, stall + rtt + 60 * US); /* past srtt and cnp_interval */
        CHECK_EQ_U(stats_of(cc).stalls, 2);
        CHECK_EQ_U(stats_of(cc).timeouts, 4);
        arb_cc_free(cc);
    }
}

/* Before any completion every timer loss is a stall (the loop never ran). */
TEST(stall_before_first_sample)
{
    arb_cc *cc = make(ARB_CC_OSCAR, NULL);
    double w0 = stats_of(cc).cwnd;
    arb_cc_on_timeout(cc, 50 * ARB_PS_PER_MS);
    CHECK_EQ_U(stats_of(cc).stalls, 1);
    CHECK_NEAR(stats_of(cc).cwnd, w0 / 2);
    arb_cc_free(cc);
}

/* ==== TIMELY, rule by rule ================================================== */

static double timely_rate(const arb_cc *cc)
{
    return stats_of(cc).rate;
}

TEST(timely_rules)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    arb_cc *cc = make(ARB_CC_TIMELY, &c);
    arb_cc_config p;
    arb_cc_get_config(cc, &p);
    const arb_cc_timely_config *q = &p.timely;
    double line = (double)LINE, delta = (double)q->delta;

    /* line rate at first: the window is the loop's worth at line rate
     * (ceil(bdp()) = 16), the spacing a credit's serialisation */
    CHECK_EQ_U(arb_cc_window(cc), (uint32_t)ceil(bdp()));
    CHECK_EQ_U(arb_cc_max_window(cc), c.window_max);
    CHECK_EQ_U(arb_cc_min_spacing(cc), arb_cc_spacing_for_rate(LINE, CREDIT));
    CHECK_EQ_U(arb_cc_next_expiry(cc), ARB_TIME_NEVER);

    /* above t_high: R *= 1 - beta (1 - t_high / d); d = 2 t_high gives
     * 1 - beta / 2 */
    arb_time t = 1000 * US;
    ack(cc, 2 * q->t_high, 0, 0, t);
    double r = line * (1 - q->beta / 2);
    CHECK_NEAR(timely_rate(cc), r);
    CHECK_EQ_U(arb_cc_min_spacing(cc), arb_cc_spacing_for_rate((uint64_t)r, CREDIT));
    CHECK_EQ_U(arb_cc_window(cc), (uint32_t)ceil(bdp())); /* the rate does not move it */

    /* within one interval: no update */
    ack(cc, 4 * q->t_high, 0, 0, t + q->interval - 1);
    CHECK_NEAR(timely_rate(cc), r);
    /* an interval on, but the sample's credit left before that update (it
     * never saw the new rate): no update, at most one per loop */
    ack(cc, 4 * q->t_high, 0, 0, t + 2 * q->t_high);
    CHECK_NEAR(timely_rate(cc), r);

    /* the gradient from here on: rtt_diff = (1 - alpha) rtt_diff + alpha diff */
    double rtt_diff = 0, prev = (double)(2 * q->t_high);
    uint32_t neg = 1; /* the first update's gradient was 0 */
    arb_time mid = (q->t_low + q->t_high) / 2;
    for (int i = 0; i < 6; i++) {
        t += mid; /* each sample's credit left after the previous update */
        ack(cc, mid, 0, 0, t);
        rtt_diff = (1 - q->alpha) * rtt_diff + q->alpha * ((double)mid - prev);
        prev = (double)mid;
        neg = rtt_diff <= 0 ? neg + 1 : 0;
        /* falling or flat loop time between the thresholds: + delta, or
         * hai_factor deltas from the hai_after-th in a row */
        r += (neg >= q->hai_after ? q->hai_factor : 1) * delta;
        CHECK_NEAR(timely_rate(cc), r);
    }
    CHECK(neg >= q->hai_after); /* the loop did reach hyper increase */

    /* a rising loop time between the thresholds: R *= 1 - beta min(g, 1) */
    arb_time up = mid + q->interval / 4;
    t += up;
    ack(cc, up, 0, 0, t);
    rtt_diff = (1 - q->alpha) * rtt_diff + q->alpha * ((double)up - prev);
    double g = rtt_diff / (double)q->interval;
    CHECK(g > 0 && g < 1);
    r *= 1 - q->beta * g;
    CHECK_NEAR(timely_rate(cc), r);

    /* a steep rise: g is capped at 1, the cut at 1 - beta */
    t += q->t_high;
    ack(cc, q->t_high, 0, 0, t); /* t_high itself is not above t_high */
    rtt_diff = (1 - q->alpha) * rtt_diff + q->alpha * ((double)q->t_high - (double)up);
    CHECK(rtt_diff / (double)q->interval > 1);
    r *= 1 - q->beta;
    CHECK_NEAR(timely_rate(cc), r);

    /* below t_low: + delta whatever the gradient */
    t += q->t_low;
    ack(cc, q->t_low - 1, 0, 0, t);
    r += delta;
    CHECK_NEAR(timely_rate(cc), r);

    /* the floor: enough cuts reach min_rate, and its spacing */
    for (int i = 0; i < 60; i++) {
        t += 10 * q->t_high;
        ack(cc, 10 * q->t_high, 0, 0, t);
    }
    CHECK_NEAR(timely_rate(cc), (double)q->min_rate);
    CHECK_EQ_U(arb_cc_min_spacing(cc), arb_cc_spacing_for_rate(q->min_rate, CREDIT));
    CHECK_NEAR(stats_of(cc).rate_lowest, (double)q->min_rate);
    /* and the ceiling: line rate */
    for (int i = 0; i < 2000; i++) {
        t += q->interval;
        ack(cc, BASE, 0, 0, t);
    }
    CHECK_NEAR(timely_rate(cc), line);
    CHECK(stats_of(cc).increases > 0 && stats_of(cc).decreases > 0);
    arb_cc_free(cc);
}

/* ==== Swift, rule by rule =================================================== */

TEST(swift_rules)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.window = 20;
    c.swift.fs_range = ARB_CC_SWIFT_FS_OFF; /* the target is base_target (scaling: below) */
    arb_cc *cc = make(ARB_CC_SWIFT, &c);
    arb_cc_config p;
    arb_cc_get_config(cc, &p);
    const arb_cc_swift_config *q = &p.swift;
    double target = (double)q->base_target;

    CHECK_EQ_U(arb_cc_window(cc), 20);
    CHECK_EQ_U(arb_cc_min_spacing(cc), 0);
    CHECK_EQ_U(arb_cc_max_window(cc), c.window_max);

    /* below target, window full: cwnd += ai / cwnd */
    arb_time t = 1000 * US, below = q->base_target - US;
    double w = 20;
    ack(cc, below, 0, 20, t);
    w += q->ai / w;
    CHECK_NEAR(stats_of(cc).cwnd, w);
    /* below target, window not full (held by something else): no growth */
    ack(cc, below, 0, 12, t);
    CHECK_NEAR(stats_of(cc).cwnd, w);
    /* inflight unknown (the older call): treated as full */
    arb_cc_on_sample(cc, below, 0, t);
    w += q->ai / w;
    CHECK_NEAR(stats_of(cc).cwnd, w);

    /* above target: cwnd *= max(1 - beta (d - target) / d, 1 - max_mdf) */
    arb_time d1 = q->base_target + 5 * US;
    t += 100 * US;
    ack(cc, d1, 0, 20, t);
    w *= 1 - q->beta * ((double)d1 - target) / (double)d1;
    CHECK_NEAR(stats_of(cc).cwnd, w);
    CHECK_EQ_U(arb_cc_window(cc), (uint32_t)floor(w));
    /* once per loop: a sample whose credit left before the cut changes nothing */
    ack(cc, d1, 0, 20, t + d1 - 1);
    CHECK_NEAR(stats_of(cc).cwnd, w);
    /* a big excess is capped at max_mdf (its credit left after the cut) */
    arb_time big = 100 * q->base_target;
    t += big;
    ack(cc, big, 0, 20, t);
    w *= 1 - q->max_mdf;
    CHECK_NEAR(stats_of(cc).cwnd, w);

    /* below one credit: window 1 and a spacing of srtt / cwnd (srtt of
     * equal samples is that sample) */
    arb_cc_free(cc);
    c.window = 1;
    cc = make(ARB_CC_SWIFT, &c);
    arb_time d = 3 * q->base_target; /* f = 1 - 0.8 x 2/3 < 1 - max_mdf: a halving */
    t = 1000 * US;
    w = 1;
    for (int i = 0; i < 5; i++) {
        t += d;
        ack(cc, d, 0, 1, t);
        w *= 1 - q->max_mdf;
        CHECK_NEAR(stats_of(cc).cwnd, w);
        CHECK_EQ_U(arb_cc_window(cc), 1);
        CHECK_EQ_U(arb_cc_min_spacing(cc), (arb_time)ceil((double)d / w));
    }
    /* below one credit the increase is ai per sample (not ai / cwnd) */
    t += d;
    ack(cc, below, 0, 1, t);
    w += q->ai;
    CHECK_NEAR(stats_of(cc).cwnd, w);
    CHECK(w >= 1);
    CHECK_EQ_U(arb_cc_min_spacing(cc), 0);
    /* the floor min_cwnd */
    for (int i = 0; i < 40; i++) {
        t += d;
        ack(cc, d, 0, 1, t);
    }
    CHECK_NEAR(stats_of(cc).cwnd, q->min_cwnd);
    CHECK_NEAR(stats_of(cc).cwnd_lowest, q->min_cwnd);
    arb_cc_free(cc);

    /* the ceiling window_max */
    c.window = c.window_max;
    cc = make(ARB_CC_SWIFT, &c);
    for (int i = 0; i < 100; i++)
        ack(cc, below, 0, c.window_max, t += US);
    CHECK_NEAR(stats_of(cc).cwnd, (double)c.window_max);
    CHECK_EQ_U(arb_cc_window(cc), c.window_max);
    arb_cc_free(cc);
}

/* hops x per_hop and flow scaling move the target. */
TEST(swift_target_scaling)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.window = 10;
    c.swift.hops = 4;
    c.swift.per_hop = US;
    c.swift.fs_range = ARB_CC_SWIFT_FS_OFF;
    arb_cc *cc = make(ARB_CC_SWIFT, &c);
    arb_cc_config p;
    arb_cc_get_config(cc, &p);
    /* between the base target and base + 4 us: below the scaled target */
    arb_time d = p.swift.base_target + 3 * US;
    ack(cc, d, 0, 10, 1000 * US);
    CHECK_NEAR(stats_of(cc).cwnd, 10 + p.swift.ai / 10);
    arb_cc_free(cc);

    /* flow scaling: fs_range at fs_min_cwnd, nothing at fs_max_cwnd */
    arb_cc_config_default(&c);
    c.swift.fs_range = 10 * US;
    c.swift.fs_min_cwnd = 1;
    c.swift.fs_max_cwnd = 16;
    c.window = 16;
    cc = make(ARB_CC_SWIFT, &c);
    arb_cc_get_config(cc, &p);
    d = p.swift.base_target + 2 * US;
    ack(cc, d, 0, 16, 1000 * US); /* at fs_max_cwnd: target = base, a cut */
    CHECK(stats_of(cc).cwnd < 16);
    arb_cc_free(cc);
    c.window = 1;
    cc = make(ARB_CC_SWIFT, &c);
    ack(cc, p.swift.base_target + 9 * US, 0, 1, 1000 * US); /* target base + 10 us */
    CHECK_NEAR(stats_of(cc).cwnd, 1 + p.swift.ai);
    arb_cc_free(cc);
    /* at cwnd 4: A = 10 us / (1 - 1/4), B = -A / 4, fs = A / 2 + B = A / 4 */
    c.window = 4;
    cc = make(ARB_CC_SWIFT, &c);
    double a = 10.0 * US / 0.75, fs = a / 2 - a / 4;
    arb_time just_below = p.swift.base_target + (arb_time)fs - 1;
    ack(cc, just_below, 0, 4, 1000 * US);
    double w4 = 4 + p.swift.ai / 4;
    CHECK_NEAR(stats_of(cc).cwnd, w4);
    /* just above it (fs only shrinks as cwnd grew): a cut */
    ack(cc, p.swift.base_target + (arb_time)fs + 2, 0, 4, 1000 * US + 1);
    CHECK(stats_of(cc).cwnd < w4);
    arb_cc_free(cc);

    /* flow scaling is on by default: fs_range base_rtt / 2 between cwnd 0.1
     * and 100; at cwnd 1, A = R / (1 / sqrt(0.1) - 1 / sqrt(100)), B = -A / 10,
     * fs = A + B = 0.9 A. A sample just under base_target + fs grows the
     * window; with ARB_CC_SWIFT_FS_OFF the same sample cuts it. */
    arb_cc_config_default(&c);
    c.window = 1;
    cc = make(ARB_CC_SWIFT, &c);
    arb_cc_get_config(cc, &p);
    CHECK_EQ_U(p.swift.fs_range, BASE / 2);
    double r = (double)BASE / 2, fs1 = 0.9 * r / (1 / sqrt(0.1) - 0.1);
    arb_time under = p.swift.base_target + (arb_time)fs1 - 1;
    ack(cc, under, 0, 1, 1000 * US);
    CHECK_NEAR(stats_of(cc).cwnd, 1 + p.swift.ai);
    arb_cc_free(cc);
    c.swift.fs_range = ARB_CC_SWIFT_FS_OFF;
    cc = make(ARB_CC_SWIFT, &c);
    ack(cc, under, 0, 1, 1000 * US);
    CHECK(stats_of(cc).cwnd < 1);
    arb_cc_free(cc);
}

/* A stall cuts by max_mdf once per loop; stall_reset in a row: min_cwnd. */
TEST(swift_stalls)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.window = 32;
    arb_cc *cc = make(ARB_CC_SWIFT, &c);
    arb_time t = 1000 * US;
    ack(cc, BASE, 0, 0, t); /* srtt = BASE; grows cwnd by ai / 32 */
    double w = 32 + c.swift.ai / 32;
    t += 3 * BASE;
    for (uint32_t i = 1; i < c.swift.stall_reset; i++) {
        arb_cc_on_timeout(cc, t);
        w *= 1 - c.swift.max_mdf;
        CHECK_NEAR(stats_of(cc).cwnd, w);
        t += BASE;
    }
    arb_cc_on_timeout(cc, t);
    CHECK_NEAR(stats_of(cc).cwnd, c.swift.min_cwnd);
    CHECK_EQ_U(stats_of(cc).stalls, c.swift.stall_reset);
    /* a completion resets the count */
    ack(cc, BASE, 0, 1, t += US);
    t += 3 * BASE;
    double before = stats_of(cc).cwnd;
    arb_cc_on_timeout(cc, t);
    CHECK_NEAR(stats_of(cc).cwnd, before * (1 - c.swift.max_mdf) > c.swift.min_cwnd
                                      ? before * (1 - c.swift.max_mdf)
                                      : c.swift.min_cwnd);
    arb_cc_free(cc);
}

/* The window gate stays within [window_min, window_max]; the rate-based
 * kinds hold window_max and do not read window. */
/* arb_cc_loop_window: ceil(loop x rate / share / frame bits) within
 * [least, most]. The test fabric's loop (10 us at 100 Gb/s) holds
 * 1e6 bits, 15.1 credits of 8274 B: 16 alone, 4 a channel of 4 (3.78),
 * and the floor of 4 at 8 channels (1.89). */
TEST(loop_window)
{
    CHECK_EQ_U(arb_cc_loop_window(BASE, LINE, 1, CREDIT, 4, 65535), 16);
    CHECK_EQ_U(arb_cc_loop_window(BASE, LINE, 4, CREDIT, 4, 65535), 4);
    CHECK_EQ_U(arb_cc_loop_window(BASE, LINE, 4, CREDIT, 1, 65535), 4);
    CHECK_EQ_U(arb_cc_loop_window(BASE, LINE, 8, CREDIT, 1, 65535), 2);
    CHECK_EQ_U(arb_cc_loop_window(BASE, LINE, 8, CREDIT, 4, 65535), 4);
    /* 3 ms at 1 Gb/s over 4 channels: 750000 bits, 11.3 frames of 8270 B */
    CHECK_EQ_U(arb_cc_loop_window(3 * ARB_PS_PER_MS, 1000000000ull, 4, 8270, 4, 16), 12);
    /* the ceiling, and share 0 read as 1 */
    CHECK_EQ_U(arb_cc_loop_window(100 * BASE, LINE, 1, CREDIT, 4, 16), 16);
    CHECK_EQ_U(arb_cc_loop_window(BASE, LINE, 0, CREDIT, 4, 65535), 16);
    /* nothing to go by: the least */
    CHECK_EQ_U(arb_cc_loop_window(0, LINE, 1, CREDIT, 4, 16), 4);
    CHECK_EQ_U(arb_cc_loop_window(BASE, 0, 1, CREDIT, 4, 16), 4);
    CHECK_EQ_U(arb_cc_loop_window(BASE, LINE, 1, 0, 4, 16), 4);
}

TEST(window_bounds)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.window_min = 4;
    c.window_max = 40;
    c.window = 10;
    for (int k = ARB_CC_SWIFT; k <= ARB_CC_OSCAR; k += ARB_CC_OSCAR - ARB_CC_SWIFT) {
        arb_cc *cc = make((arb_cc_kind)k, &c);
        arb_time t = 1000 * US;
        for (int i = 0; i < 200; i++) { /* far above target: cuts */
            t += 2 * ARB_PS_PER_MS;
            ack(cc, ARB_PS_PER_MS, 0, 10, t);
            CHECK(arb_cc_window(cc) >= 4);
        }
        CHECK(stats_of(cc).cwnd < 4);
        CHECK_EQ_U(arb_cc_window(cc), 4);
        for (int i = 0; i < 20000; i++) { /* at base, window full, fast acks: growth */
            t += 200 * ARB_PS_PER_NS;
            ack(cc, BASE, 0, 0, t);
            CHECK(arb_cc_window(cc) <= 40);
        }
        CHECK_EQ_U(arb_cc_window(cc), 40);
        CHECK_EQ_U(arb_cc_max_window(cc), 40);
        arb_cc_free(cc);
    }
    /* TIMELY and DCQCN hold the loop's worth at line rate, ceil(bdp()) = 16,
     * within [window_min, window_max]: 16 in [4, 40], 40 when it is the
     * floor, 8 when it is the ceiling; the rate never moves it */
    c.window = 100; /* above window_max: not read by TIMELY and DCQCN */
    for (int k = ARB_CC_TIMELY; k <= ARB_CC_DCQCN; k += ARB_CC_DCQCN - ARB_CC_TIMELY) {
        arb_cc *cc = make((arb_cc_kind)k, &c);
        CHECK_EQ_U(arb_cc_window(cc), (uint32_t)ceil(bdp()));
        CHECK_EQ_U(arb_cc_max_window(cc), 40);
        arb_time t = 1000 * US;
        /* far above every threshold, marked, a cnp_interval apart (before
         * DCQCN's rate timer): a cut each */
        for (int i = 0; i < 50; i++)
            ack(cc, ARB_PS_PER_MS, 1, 10, t += 50 * US);
        CHECK(stats_of(cc).rate < (double)LINE / 2);
        CHECK_EQ_U(arb_cc_window(cc), (uint32_t)ceil(bdp()));
        arb_cc_free(cc);
        c.window_min = 40;
        cc = make((arb_cc_kind)k, &c);
        CHECK_EQ_U(arb_cc_window(cc), 40);
        arb_cc_free(cc);
        c.window_min = 4, c.window_max = 8;
        cc = make((arb_cc_kind)k, &c);
        CHECK_EQ_U(arb_cc_window(cc), 8);
        arb_cc_free(cc);
        c.window_max = 40;
        /* the loop's worth scales with line rate and loop: 4 x 16 us at 25 Gb/s
         * is ceil(25e9 x 64e-6 / (8 x 8274)) = ceil(24.17) = 25 */
        c.line_rate = 25000000000ull, c.base_rtt = 64 * US;
        cc = make((arb_cc_kind)k, &c);
        CHECK_EQ_U(arb_cc_window(cc), 25);
        arb_cc_free(cc);
        c.line_rate = LINE, c.base_rtt = BASE;
    }
}

/* ==== DCQCN, rule by rule and its timers ==================================== */

/* The paper's reaction point, computed here alongside the controller. */
typedef struct dcq_ref {
    double rc, rt, alpha;
    uint32_t t, b;
} dcq_ref;

static void ref_cut(dcq_ref *r, const arb_cc_dcqcn_config *p)
{
    r->rt = r->rc;
    r->rc *= 1 - r->alpha / 2;
    if (r->rc < (double)p->min_rate) r->rc = (double)p->min_rate;
    r->alpha = (1 - p->g) * r->alpha + p->g;
    r->t = r->b = 0;
}

static void ref_increase(dcq_ref *r, const arb_cc_dcqcn_config *p, int by_timer)
{
    uint32_t mx = r->t > r->b ? r->t : r->b, mn = r->t < r->b ? r->t : r->b;
    if (mn >= p->f)
        r->rt += (double)(mn - p->f + 1) * (double)p->rhai;
    else if (mx >= p->f)
        r->rt += (double)p->rai;
    if (r->rt > (double)LINE) r->rt = (double)LINE;
    r->rc = (r->rt + r->rc) / 2;
    if (by_timer)
        r->t++;
    else
        r->b++;
}

TEST(dcqcn_rules_and_timers)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.dcqcn.byte_counter = 10 * CREDIT;
    c.dcqcn.rate_timer = 55 * US;
    c.dcqcn.alpha_timer = 40 * US; /* apart from T, to see each timer */
    arb_cc *cc = make(ARB_CC_DCQCN, &c);
    arb_cc_config p;
    arb_cc_get_config(cc, &p);
    const arb_cc_dcqcn_config *q = &p.dcqcn;
    dcq_ref r = {(double)LINE, (double)LINE, q->alpha_init, 0, 0};

    CHECK_EQ_U(arb_cc_min_spacing(cc), arb_cc_spacing_for_rate(LINE, CREDIT));
    CHECK_EQ_U(arb_cc_window(cc), (uint32_t)ceil(bdp()));
    CHECK_EQ_U(arb_cc_next_expiry(cc), ARB_TIME_NEVER); /* no timer before a cut */
    arb_time t = 1000 * US;
    ack(cc, BASE, 0, 0, t); /* no CE: nothing */
    CHECK_NEAR(stats_of(cc).rate, (double)LINE);
    arb_cc_on_send(cc, 0, t); /* no byte counter at line rate */

    /* CE: a cut, alpha_init = 1 halves */
    ack(cc, BASE, 1, 0, t);
    ref_cut(&r, q);
    CHECK_NEAR(stats_of(cc).rate, (double)LINE / 2);
    CHECK_NEAR(stats_of(cc).rate, r.rc);
    CHECK_EQ_U(arb_cc_min_spacing(cc), arb_cc_spacing_for_rate((uint64_t)r.rc, CREDIT));
    arb_time cut_at = t, alpha_at = t + q->alpha_timer, inc_at = t + q->rate_timer;
    CHECK_EQ_U(arb_cc_next_expiry(cc), alpha_at);

    /* CE again within cnp_interval: nothing */
    ack(cc, BASE, 1, 0, cut_at + q->cnp_interval - 1);
    CHECK_NEAR(stats_of(cc).rate, r.rc);

    /* the alpha timer: alpha *= 1 - g, and the next one K later */
    arb_cc_on_expiry(cc, alpha_at);
    r.alpha *= 1 - q->g;
    alpha_at += q->alpha_timer;
    CHECK_NEAR(stats_of(cc).rate, r.rc); /* alpha alone moves no rate */
    CHECK_EQ_U(stats_of(cc).expiries, 1);

    /* the rate timer: fast recovery Rc = (Rt + Rc) / 2 */
    CHECK_EQ_U(arb_cc_next_expiry(cc), inc_at < alpha_at ? inc_at : alpha_at);
    arb_cc_on_expiry(cc, inc_at);
    ref_increase(&r, q, 1);
    inc_at += q->rate_timer;
    CHECK_NEAR(stats_of(cc).rate, r.rc);
    CHECK_NEAR(stats_of(cc).rate, 0.75 * (double)LINE);

    /* CE after cnp_interval: a cut with the decayed alpha, both timers
     * restart, stages go to 0 */
    t = cut_at + q->cnp_interval + 10 * US;
    arb_cc_on_expiry(cc, t); /* nothing due yet */
    ack(cc, BASE, 1, 0, t);
    ref_cut(&r, q);
    CHECK_NEAR(stats_of(cc).rate, r.rc);
    alpha_at = t + q->alpha_timer;
    inc_at = t + q->rate_timer;
    CHECK_EQ_U(arb_cc_next_expiry(cc), alpha_at);

    /* the byte counter: B bytes since the cut make one increase (byte stage) */
    for (int i = 0; i < 9; i++)
        arb_cc_on_send(cc, CREDIT, t);
    CHECK_NEAR(stats_of(cc).rate, r.rc);
    arb_cc_on_send(cc, CREDIT, t);
    ref_increase(&r, q, 0);
    CHECK_NEAR(stats_of(cc).rate, r.rc);

    /* F timer events of fast recovery, then additive (+R_AI), then with F
     * byte events too, hyper (+ (min - F + 1) R_HAI) */
    for (uint32_t i = 0; i < q->f + 2; i++) {
        arb_time at = inc_at;
        /* the alpha timers due before it run first, each K */
        while (alpha_at <= at) {
            r.alpha *= 1 - q->g;
            alpha_at += q->alpha_timer;
        }
        arb_cc_on_expiry(cc, at);
        ref_increase(&r, q, 1);
        inc_at += q->rate_timer;
        CHECK_NEAR(stats_of(cc).rate, r.rc);
    }
    CHECK(r.t > q->f && r.b < q->f); /* additive stage reached */
    for (uint32_t i = 0; i < q->f; i++) {
        for (int j = 0; j < 10; j++)
            arb_cc_on_send(cc, CREDIT, inc_at - 1);
        ref_increase(&r, q, 0);
        CHECK_NEAR(stats_of(cc).rate, r.rc);
    }
    CHECK(r.b >= q->f); /* the last ones were hyper increases */

    /* a late caller: every entry point first runs what is due, in order */
    arb_time late = inc_at + 3 * q->rate_timer;
    int n_inc = 0;
    for (arb_time at = inc_at; at <= late; at += q->rate_timer)
        n_inc++;
    for (int i = 0; i < n_inc; i++)
        ref_increase(&r, q, 1);
    ack(cc, BASE, 0, 0, late);
    CHECK_NEAR(stats_of(cc).rate, r.rc < (double)LINE ? r.rc : (double)LINE);
    arb_cc_free(cc);
}

/* Recovered to line rate, the rate timer stops; alpha decays to below
 * 1e-6 and its timer stops too: no expiry left. */
TEST(dcqcn_timers_stop)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    arb_cc *cc = make(ARB_CC_DCQCN, &c);
    arb_cc_config p;
    arb_cc_get_config(cc, &p);
    ack(cc, BASE, 1, 0, 1000 * US);
    /* fast recovery halves the gap to Rt = line each event, so within
     * log2(1 / 2e-6) < 20 events Rc is within a millionth of line and
     * snaps; the rate timer stops */
    arb_time t = 1000 * US;
    int events = 0;
    while (arb_cc_next_expiry(cc) != ARB_TIME_NEVER && events < 100000) {
        t = arb_cc_next_expiry(cc);
        arb_cc_on_expiry(cc, t);
        events++;
    }
    CHECK_EQ_U(arb_cc_next_expiry(cc), ARB_TIME_NEVER);
    CHECK_NEAR(stats_of(cc).rate, (double)LINE);
    /* alpha went from (1 - g) + g = 1 to below 1e-6: n = ceil(ln 1e-6 /
     * ln(1 - g)) alpha events, plus at most 20 rate events (a call runs
     * every event due, two when the timers coincide) */
    uint64_t n_alpha = (uint64_t)ceil(log(1e-6) / log(1 - p.dcqcn.g));
    uint64_t ran = stats_of(cc).expiries;
    CHECK(ran >= n_alpha + 1 && ran <= n_alpha + 20);
    CHECK((uint64_t)events <= ran);
    arb_cc_free(cc);
}

/* ==== Oscar, rule by rule ==================================================== */

TEST(oscar_rules)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.window = 8;
    arb_cc *cc = make(ARB_CC_OSCAR, &c);
    arb_cc_config p;
    arb_cc_get_config(cc, &p);
    const arb_cc_oscar_config *q = &p.oscar;
    double target = (double)q->target;

    /* before a round: window ceil(8) and pacing base_rtt / 8 */
    CHECK_EQ_U(arb_cc_window(cc), 8);
    CHECK_EQ_U(arb_cc_min_spacing(cc), (arb_time)ceil((double)BASE / 8));

    /* round 1: opened by the first sample at t0; n samples of loop d, the
     * last one's credit left after t0, closing it at t1 */
    arb_time t0 = 1000 * US, d = 2 * q->target;
    ack(cc, d, 0, 8, t0);
    int n = 6;
    arb_time t1 = t0 + d + 3 * US;
    for (int i = 1; i < n; i++)
        ack(cc, d, 0, 8, t0 + (arb_time)i * US); /* left before t0 */
    CHECK_NEAR(stats_of(cc).cwnd, 8);
    ack(cc, d, 0, 8, t1);
    /* r = n / (t1 - t0); W* = min(r d*, max_growth W); no previous round,
     * no gradient: W += gain (W* + a - W) */
    double rate = n / (double)(t1 - t0), ref = rate * target;
    if (ref > q->max_growth * 8) ref = q->max_growth * 8;
    double w = 8 + q->gain * (ref + q->headroom - 8);
    CHECK_NEAR(stats_of(cc).cwnd, w);
    CHECK_EQ_U(arb_cc_window(cc), (uint32_t)ceil(w));
    CHECK_EQ_U(arb_cc_min_spacing(cc), (arb_time)ceil((double)d / w));

    /* round 2: more samples (a growing step) while the loop lengthens by
     * 4 us: the step is damped by 1 + kappa 4 us / d* */
    arb_time d2 = d + 4 * US, t2 = t1 + d2 + US;
    int n2 = 14;
    for (int i = 1; i < n2; i++)
        ack(cc, d2, 0, 8, t1 + (arb_time)i * US);
    ack(cc, d2, 0, 8, t2);
    rate = n2 / (double)(t2 - t1);
    ref = rate * target;
    double step = q->gain * (ref + q->headroom - w);
    CHECK(step > 0);
    step /= 1 + q->kappa * (double)(d2 - d) / target;
    w += step;
    CHECK_NEAR(stats_of(cc).cwnd, w);

    /* round 3: few samples (a shrinking step) while the loop shortens by
     * 6 us: damped by 1 + kappa 6 us / d* */
    arb_time d3 = d2 - 6 * US, t3 = t2 + d3 + US;
    ack(cc, d3, 0, 8, t2 + US);
    ack(cc, d3, 0, 8, t3);
    rate = 2 / (double)(t3 - t2);
    step = q->gain * (rate * target + q->headroom - w);
    CHECK(step < 0);
    step /= 1 + q->kappa * (double)(d2 - d3) / target;
    w += step;
    CHECK_NEAR(stats_of(cc).cwnd, w);

    /* round 4: the loop lengthens again and the step shrinks: against the
     * trend, not damped */
    arb_time d4 = d3 + 10 * US, t4 = t3 + d4 + US;
    ack(cc, d4, 0, 8, t3 + US);
    ack(cc, d4, 0, 8, t4);
    rate = 2 / (double)(t4 - t3);
    step = q->gain * (rate * target + q->headroom - w);
    CHECK(step < 0);
    w += step;
    CHECK_NEAR(stats_of(cc).cwnd, w);

    /* app-limited round (every inflight below floor(W)) at or below target:
     * W holds */
    double held = w;
    arb_time d5 = q->target / 2, t5 = t4 + d5 + US;
    ack(cc, d5, 0, 1, t4 + US);
    ack(cc, d5, 0, 1, t5);
    CHECK(floor(held) > 1);
    CHECK_NEAR(stats_of(cc).cwnd, held);
    arb_cc_free(cc);

    /* unloaded loop, window-limited (floor(W) samples a round, each
     * reporting floor(W) in flight): W* = r d* with r = n / D > W / d, so
     * W grows */
    c.window = 2;
    cc = make(ARB_CC_OSCAR, &c);
    arb_time t = 1000 * US;
    w = 2;
    ack(cc, BASE, 0, 2, t); /* opens the first round */
    for (int k = 0; k < 6; k++) {
        arb_time start = t;
        int nk = (int)floor(w);
        for (int i = 1; i < nk; i++)
            ack(cc, BASE, 0, (uint32_t)nk, start + (arb_time)i * 100);
        t = start + BASE + US;
        ack(cc, BASE, 0, (uint32_t)nk, t); /* left at start + 1 us: closes the round */
        rate = nk / (double)(t - start);
        ref = rate * target;
        if (ref > q->max_growth * w) ref = q->max_growth * w;
        double w1 = w + q->gain * (ref + q->headroom - w); /* the loop is steady: no damping */
        CHECK(w1 > w);
        w = w1;
        CHECK_NEAR(stats_of(cc).cwnd, w);
    }
    arb_cc_free(cc);
}

/*
 * Below one credit: window 1, spacing loop / W; the floor min_cwnd. With
 * no headroom and a loop far above target (samples as the gate lets them
 * come), each round multiplies W by about (1 - gain) + gain d* / d < 1.
 */
TEST(oscar_pacing_below_one)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.window = 1;
    c.oscar.headroom = 0;
    arb_cc *cc = make(ARB_CC_OSCAR, &c);
    arb_time t = 1000 * US, d = 40 * BASE;
    ack(cc, d, 0, 1, t);
    int paced = 0;
    for (int i = 0; i < 60; i++) {
        arb_time gap = arb_cc_min_spacing(cc);
        t += (gap > d ? gap : d) + US;
        ack(cc, d, 0, 1, t);
        arb_cc_stats st = stats_of(cc);
        if (st.cwnd < 1) {
            paced++;
            CHECK_EQ_U(st.window, 1);
            CHECK_EQ_U(st.spacing, (arb_time)ceil((double)d / st.cwnd));
        }
    }
    CHECK(paced > 0);
    CHECK_NEAR(stats_of(cc).cwnd, c.oscar.min_cwnd);
    CHECK_NEAR(stats_of(cc).cwnd_lowest, c.oscar.min_cwnd);
    arb_cc_free(cc);
}

/* ==== a bottleneck driven by the controllers' own gates ======================= */

/*
 * N responders share one bottleneck link of rate C. Each sends a credit
 * when its window and spacing allow and its own NIC (line rate) is free.
 * A credit enters the bottleneck queue on its send; it finds backlog q, so
 * its loop is base + q / C, and it carries CE when q exceeds K (marking on
 * arrival). The queue drains at C. Completions come back in send order (a
 * FIFO), each a sample with the outstanding count on arrival. A credit may
 * be lost (a seeded draw): it then comes back at its due time as a loss
 * inferred from order (as a later completion would reveal it) and frees
 * its slot. Everything is exact event by event: no time step.
 */
#define QM_FLOWS 8
#define QM_RING 1024

typedef struct qm_credit {
    arb_time sent, done;
    int ce, lost;
} qm_credit;

typedef struct qm_flow {
    arb_cc *cc;
    int active;
    arb_time last_send; /* ARB_TIME_NEVER: none yet */
    qm_credit ring[QM_RING];
    uint32_t head, len;
    uint64_t done; /* credits completed */
} qm_flow;

typedef struct qm {
    double bps;    /* bottleneck, bit/s */
    arb_time base; /* unloaded loop */
    double ecn_k;  /* CE when the backlog found exceeds this, bytes */
    arb_time nic;  /* a sender's own serialisation of one credit */
    double loss;   /* probability a credit is lost */
    uint64_t seed; /* the loss draws */
    arb_time t;
    double q; /* backlog, bytes */
    int n;
    unsigned turn; /* who acts first at one time */
    qm_flow f[QM_FLOWS];
    /* the window of observation (qm_watch) */
    arb_time w_start;
    double q_area, q_max, rtt_sum;
    uint64_t rtt_n, served0;
    double served; /* bytes the bottleneck has sent */
} qm;

static double qm_bytes_per_ps(const qm *m)
{
    return m->bps / 8.0 / (double)ARB_PS_PER_S;
}

static qm *qm_new(double ecn_k)
{
    qm *m = calloc(1, sizeof *m);
    m->bps = (double)LINE;
    m->base = BASE;
    m->ecn_k = ecn_k;
    m->nic = arb_cc_spacing_for_rate(LINE, CREDIT);
    m->seed = 0x5eed;
    return m;
}

static void qm_free(qm *m)
{
    for (int i = 0; i < m->n; i++)
        arb_cc_free(m->f[i].cc);
    free(m);
}

static int qm_add(qm *m, arb_cc *cc)
{
    qm_flow *f = &m->f[m->n];
    f->cc = cc;
    f->last_send = ARB_TIME_NEVER;
    return m->n++;
}

/* Start a window of observation: mean backlog, its peak, mean loop time. */
static void qm_watch(qm *m)
{
    m->w_start = m->t;
    m->q_area = 0;
    m->q_max = m->q;
    m->rtt_sum = 0;
    m->rtt_n = 0;
    m->served0 = (uint64_t)m->served;
}

static double qm_mean_q(const qm *m)
{
    return m->t > m->w_start ? m->q_area / (double)(m->t - m->w_start) : m->q;
}

static double qm_mean_rtt(const qm *m)
{
    return m->rtt_n ? m->rtt_sum / (double)m->rtt_n : 0;
}

/* Share of the window the bottleneck was sending. */
static double qm_util(const qm *m)
{
    double dt = (double)(m->t - m->w_start);
    return dt > 0 ? (m->served - (double)m->served0) / (qm_bytes_per_ps(m) * dt) : 0;
}

static void qm_drain(qm *m, arb_time t)
{
    double dt = (double)(t - m->t), c = qm_bytes_per_ps(m);
    double q1 = m->q - c * dt;
    if (q1 > 0) {
        m->q_area += (m->q + q1) / 2 * dt;
        m->served += c * dt;
    } else {
        m->q_area += m->q * m->q / (2 * c);
        m->served += m->q;
    }
    m->q = q1 > 0 ? q1 : 0;
    m->t = t;
}

/* SplitMix64: the loss draws, a fixed sequence from the seed. */
static double qm_draw(qm *m)
{
    uint64_t z = (m->seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

static arb_time qm_next_send(const qm *m, const qm_flow *f)
{
    if (!f->active || f->len >= arb_cc_window(f->cc) || f->len >= QM_RING) return ARB_TIME_NEVER;
    if (f->last_send == ARB_TIME_NEVER) return m->t;
    arb_time gap = arb_cc_min_spacing(f->cc);
    if (gap < m->nic) gap = m->nic;
    arb_time at = f->last_send > ARB_TIME_NEVER - gap ? ARB_TIME_NEVER : f->last_send + gap;
    return at < m->t ? m->t : at;
}

static void qm_send(qm *m, qm_flow *f)
{
    qm_credit *c = &f->ring[(f->head + f->len) % QM_RING];
    c->sent = m->t;
    c->ce = m->q > m->ecn_k;
    c->done = m->t + m->base + (arb_time)(m->q / qm_bytes_per_ps(m));
    c->lost = m->loss > 0 && qm_draw(m) < m->loss;
    m->q += CREDIT;
    if (m->q > m->q_max) m->q_max = m->q;
    f->len++;
    f->last_send = m->t;
    arb_cc_on_send(f->cc, CREDIT, m->t);
}

static void qm_complete(qm *m, qm_flow *f)
{
    qm_credit *c = &f->ring[f->head];
    arb_cc_sample s = {c->done - c->sent, c->ce, f->len, CREDIT};
    int lost = c->lost;
    f->head = (f->head + 1) % QM_RING;
    f->len--;
    if (lost) {
        arb_cc_on_loss(f->cc, 0, m->t);
        return;
    }
    f->done++;
    m->rtt_sum += (double)s.rtt;
    m->rtt_n++;
    arb_cc_on_ack(f->cc, &s, m->t);
}

static arb_time qm_next_event(const qm *m)
{
    arb_time next = ARB_TIME_NEVER;
    for (int i = 0; i < m->n; i++) {
        const qm_flow *f = &m->f[i];
        arb_time a = f->len ? f->ring[f->head].done : ARB_TIME_NEVER;
        arb_time b = qm_next_send(m, f);
        arb_time c = arb_cc_next_expiry(f->cc);
        next = a < next ? a : next;
        next = b < next ? b : next;
        next = c < next ? c : next;
    }
    return next;
}

/*
 * Run every event up to `until`. At one time the flows act in an order
 * that rotates from one event time to the next, so that no flow always
 * finds the queue before the others (its credits would then see less
 * delay, a bias of the model, not of the controller).
 */
static void qm_run(qm *m, arb_time until)
{
    for (;;) {
        arb_time next = qm_next_event(m);
        if (next > until) break;
        if (next > m->t) qm_drain(m, next);
        m->turn++;
        for (int k = 0; k < m->n; k++) {
            qm_flow *f = &m->f[(k + m->turn) % (unsigned)m->n];
            while (f->len && f->ring[f->head].done <= m->t)
                qm_complete(m, f);
            if (arb_cc_next_expiry(f->cc) <= m->t) arb_cc_on_expiry(f->cc, m->t);
            if (qm_next_send(m, f) <= m->t) qm_send(m, f);
        }
    }
    if (until > m->t) qm_drain(m, until);
}

/* Bit/s flow i completed since it had done0 credits, over dt. */
static double qm_rate(const qm *m, int i, uint64_t done0, arb_time dt)
{
    return (double)(m->f[i].done - done0) * CREDIT * 8.0 * (double)ARB_PS_PER_S / (double)dt;
}

/* ==== arbitrary call sequences ================================================== */

/* SplitMix64 for the sequences below. */
static uint64_t mix_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A loop time from the whole range: 0, tiny, ordinary, huge. */
static arb_time any_time(uint64_t *s)
{
    uint64_t z = mix_next(s);
    switch (z % 5) {
    case 0:
        return 0;
    case 1:
        return z % 1000;
    case 2:
        return z % (1000 * US);
    case 3:
        return ARB_TIME_NEVER - z % 3;
    default:
        return z;
    }
}

/*
 * Every kind fed 20,000 calls with values from the whole range (time
 * jumping, stalling and going back, samples of 0 and of 2^64 - 1, any
 * inflight and byte count): the window stays within [max(1, window_min),
 * max window], the statistics stay numbers, and after arb_cc_on_expiry(now)
 * nothing is due at now.
 */
TEST(arbitrary_sequences_keep_invariants)
{
    for (int k = 0; k < ARB_CC_KIND_COUNT; k++) {
        arb_cc_config c;
        arb_cc_config_default(&c);
        c.window_min = 2;
        c.window = 8;
        c.window_max = 64;
        if (k == ARB_CC_FIXED) c.spacing = 123456;
        arb_cc *cc = make((arb_cc_kind)k, &c);
        uint64_t seed = 0xC0FFEE + (uint64_t)k;
        arb_time now = 0;
        uint32_t lo = k == ARB_CC_DISABLED || k == ARB_CC_FIXED ? c.window : c.window_min;
        for (int i = 0; i < 20000 && !TEST_FAILING(); i++) {
            uint64_t z = mix_next(&seed);
            switch (z % 8) {
            case 0:
                now += mix_next(&seed) % (100 * US);
                break;
            case 1:
                now = now > 50 * US ? now - 50 * US : 0; /* back in time */
                break;
            case 2:
                if (now < ARB_TIME_NEVER / 2) now += any_time(&seed) / 4;
                break;
            case 3: {
                arb_cc_sample smp = {any_time(&seed), (int)(z >> 8 & 1),
                                     (uint32_t)(mix_next(&seed) % 100), (uint32_t)(z >> 16)};
                arb_cc_on_ack(cc, &smp, now);
                break;
            }
            case 4:
                arb_cc_on_send(cc, (uint32_t)(z >> 16), now);
                break;
            case 5:
                arb_cc_on_loss(cc, (int)(z >> 8 & 1), now);
                break;
            case 6:
                arb_cc_on_expiry(cc, now);
                CHECK(arb_cc_next_expiry(cc) > now);
                break;
            default:
                arb_cc_on_sample(cc, any_time(&seed), (int)(z >> 8 & 1), now);
                break;
            }
            arb_cc_stats st = stats_of(cc);
            uint32_t w = arb_cc_window(cc);
            CHECK(w >= lo && w <= arb_cc_max_window(cc));
            CHECK(st.window == w && st.spacing == arb_cc_min_spacing(cc));
            CHECK(isfinite(st.cwnd) && st.cwnd > 0 && isfinite(st.rate) && st.rate >= 0);
        }
        arb_cc_free(cc);
    }
}

/* ==== the scenarios =========================================================== */

#define N_INCAST 8
#define ECN_K 100000.0 /* bytes: the simulator's default ecn_kmin */
#define WARM (1000 * US)
#define INCAST (3000 * US)
#define TAIL (1000 * US) /* the incast's last part, where it has settled */
#define STEP (10 * US)
#define THR_WINDOW (50 * US) /* throughput is measured over this */
#define FRACTION 0.9         /* recovery: at least this share of line rate */

static int rate_based(arb_cc_kind k)
{
    return k == ARB_CC_TIMELY || k == ARB_CC_DCQCN;
}

/* What the controller holds: its rate (bit/s) or its window (credits). */
static double gate_of(const arb_cc *cc)
{
    arb_cc_stats st = stats_of(cc);
    return rate_based(arb_cc_get_kind(cc)) ? st.rate : st.cwnd;
}

typedef struct incast_result {
    double before;      /* flow 0's gate after running alone */
    double after;       /* and at the end of the incast */
    double q_peak;      /* the largest backlog during the incast */
    double q_tail;      /* mean backlog over the incast's last TAIL */
    double rtt_tail;    /* mean loop time over it */
    double util_tail;   /* bottleneck use over it */
    double q_leave;     /* backlog when the others leave */
    double gate_leave;  /* flow 0's gate then */
    arb_time recovered; /* from their leaving to flow 0 at FRACTION of line rate
                         * over THR_WINDOW (ARB_TIME_NEVER: not within budget) */
} incast_result;

/*
 * Flow 0 runs alone for WARM, N_INCAST - 1 more join for INCAST, then they
 * leave and flow 0 runs alone until it reaches FRACTION of line rate or
 * `budget` passes.
 */
static incast_result run_incast(arb_cc_kind kind, const arb_cc_config *c, arb_time budget)
{
    incast_result res = {0};
    qm *m = qm_new(ECN_K);
    for (int i = 0; i < N_INCAST; i++)
        qm_add(m, make(kind, c));
    m->f[0].active = 1;
    qm_run(m, WARM);
    res.before = gate_of(m->f[0].cc);

    for (int i = 1; i < N_INCAST; i++)
        m->f[i].active = 1;
    qm_watch(m);
    qm_run(m, WARM + INCAST - TAIL);
    res.q_peak = m->q_max;
    qm_watch(m);
    qm_run(m, WARM + INCAST);
    res.q_tail = qm_mean_q(m);
    res.rtt_tail = qm_mean_rtt(m);
    res.util_tail = qm_util(m);
    res.after = gate_of(m->f[0].cc);

    for (int i = 1; i < N_INCAST; i++)
        m->f[i].active = 0;
    res.q_leave = m->q;
    res.gate_leave = res.after;
    res.recovered = ARB_TIME_NEVER;
    arb_time left = m->t;
    uint64_t hist[THR_WINDOW / STEP + 1];
    size_t nh = sizeof hist / sizeof hist[0], k = 0;
    for (size_t i = 0; i < nh; i++)
        hist[i] = m->f[0].done;
    while (m->t < left + budget) {
        qm_run(m, m->t + STEP);
        uint64_t old = hist[k % nh];
        hist[k++ % nh] = m->f[0].done;
        if (k >= nh - 1 && qm_rate(m, 0, old, (arb_time)(nh - 1) * STEP) >= FRACTION * LINE) {
            res.recovered = m->t - left;
            break;
        }
    }
    qm_free(m);
    return res;
}

static void expect_backoff(const incast_result *r)
{
    CHECK(r->after < r->before);       /* the gate fell below its uncongested value */
    CHECK(r->q_tail < r->q_peak / 10); /* and the queue with it */
}

/*
 * Swift. Incast: the loop settles near the target, at most base_target +
 * fs_range with flow scaling (on by default): above it, every channel
 * cuts within a loop; in the loop before the cut acts, the N channels add
 * at most ai credits each, so the excess stays under 2 N ai credits of
 * queue. Recovery alone: the queue empties within q / C; then the loop is
 * base (+ one credit) and the window, fully used, gets floor(W) acks a
 * loop, each adding ai / W: at least ai (W0 - 1) / W0 a loop from W0 >= 2
 * on, at least ai / 2 from 1 on, and a whole ai below 1.
 */
static double swift_loops(double w0, double w1, double ai)
{
    if (w0 >= 2) return (w1 - w0) / (ai * (w0 - 1) / w0) + 2;
    return 1 + 2 * (w1 - 1) / ai + 2;
}

TEST(swift_incast_and_recovery)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    double target = 1.5 * (double)BASE + (double)BASE / 2, ai = c.swift.ai;
    double loop = (double)BASE + t_credit(), w1 = FRACTION * bdp();
    double q_max_bytes = (double)N_INCAST * QM_RING * CREDIT;
    arb_time budget =
        (arb_time)(q_max_bytes * 8e12 / (double)LINE + swift_loops(0, w1, ai) * loop) + THR_WINDOW;
    incast_result r = run_incast(ARB_CC_SWIFT, &c, budget);
    expect_backoff(&r);
    CHECK(r.rtt_tail <= target + 2.0 * N_INCAST * ai * t_credit());
    CHECK(r.rtt_tail >= (double)BASE);
    /* the derived recovery time from the state it actually left */
    double bound =
        r.q_leave / ((double)LINE / 8e12) + swift_loops(r.gate_leave, w1, ai) * loop + THR_WINDOW;
    CHECK(r.recovered != ARB_TIME_NEVER && (double)r.recovered <= bound);
}

/*
 * Oscar. Incast: with N channels each keeping a credits beyond the target
 * the loop settles at d* + N a / C (docs/cc.md); one more credit for the
 * rounding of pacing. At the fixed point the queue holds N a credits, so
 * the bottleneck never idles. Recovery alone: while the window is below
 * BDP the loop is base (+ one credit), so each round (at most two loops
 * of d*) multiplies W by at least 1 + gain (d* / loop - 1).
 */
TEST(oscar_incast_and_recovery)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    double dstar = 1.5 * (double)BASE, a = c.oscar.headroom;
    double loop = (double)BASE + t_credit();
    double growth = 1 + c.oscar.gain * (dstar / loop - 1);
    double q_max_bytes = (double)N_INCAST * QM_RING * CREDIT;
    double rounds_worst = log(FRACTION * bdp() / c.oscar.min_cwnd) / log(growth) + 2;
    arb_time budget =
        (arb_time)(q_max_bytes * 8e12 / (double)LINE + rounds_worst * 2 * dstar) + THR_WINDOW;
    incast_result r = run_incast(ARB_CC_OSCAR, &c, budget);
    expect_backoff(&r);
    CHECK(r.rtt_tail <= dstar + (N_INCAST * a + 1) * t_credit());
    CHECK(r.rtt_tail >= dstar); /* the target is reached, not undershot */
    CHECK(r.util_tail >= 0.99);
    double rounds = log(FRACTION * bdp() / r.gate_leave) / log(growth) + 2;
    double bound = r.q_leave / ((double)LINE / 8e12) + rounds * 2 * dstar + THR_WINDOW;
    CHECK(r.recovered != ARB_TIME_NEVER && (double)r.recovered <= bound);
}

/*
 * TIMELY. Incast: above t_high every update cuts, so a settled loop stays
 * below it. Recovery alone: below t_low every update adds delta; an update
 * needs a sample whose credit left after the previous one, so updates are
 * at most a credit spacing at the rate R0 it left from (spacing only
 * shrinks as R grows) plus a loop apart, the loop being base plus its own
 * credit once the queue has drained, and at least an interval.
 */
TEST(timely_incast_and_recovery)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    double delta = (double)LINE / 100, interval = (double)BASE + t_credit();
    double t_high = 10 * (double)BASE;
    double gap_worst = (double)arb_cc_spacing_for_rate(LINE / 1000, CREDIT);
    double q_max_bytes = (double)N_INCAST * QM_RING * CREDIT;
    arb_time budget = (arb_time)(q_max_bytes * 8e12 / (double)LINE + 2 * t_high +
                                 (FRACTION * LINE / delta + 2) * (interval + gap_worst)) +
                      THR_WINDOW;
    incast_result r = run_incast(ARB_CC_TIMELY, &c, budget);
    expect_backoff(&r);
    CHECK(r.rtt_tail <= t_high);
    double gap = (double)arb_cc_spacing_for_rate((uint64_t)r.gate_leave, CREDIT);
    double bound = r.q_leave / ((double)LINE / 8e12) + 2 * t_high +
                   ((FRACTION * LINE - r.gate_leave) / delta + 2) * (interval + gap) + THR_WINDOW +
                   (double)BASE;
    CHECK(r.recovered != ARB_TIME_NEVER && (double)r.recovered <= bound);
}

/*
 * DCQCN. Incast: marks above K make every channel cut while they last.
 * Recovery alone: marks stop once the queue has drained and the last
 * marked credit is back (q / C + base + q / C); then only the rate timer
 * is counted (byte events only add): with e = Rt - Rc, an event gives
 * e' = (e + inc) / 2 <= (e + R_AI) / 2, so after k events, k > F,
 * Rc >= Rc0 + (k - F - 1) R_AI - line / 2^k. Enough events:
 * k = F + 2 + (FRACTION line - Rc0) / R_AI, with 2^k >= line / R_AI.
 */
TEST(dcqcn_incast_and_recovery)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    double rai = (double)LINE / 1000, timer = (double)c.dcqcn.rate_timer;
    double q_max_bytes = (double)N_INCAST * QM_RING * CREDIT;
    double drain_worst = 2 * q_max_bytes * 8e12 / (double)LINE + (double)BASE;
    double k_worst = c.dcqcn.f + 2 + FRACTION * (double)LINE / rai;
    arb_time budget = (arb_time)(drain_worst + (k_worst + 1) * timer) + THR_WINDOW;
    incast_result r = run_incast(ARB_CC_DCQCN, &c, budget);
    expect_backoff(&r);
    double k = c.dcqcn.f + 2 + ceil((FRACTION * (double)LINE - r.gate_leave) / rai);
    CHECK(pow(2, k) >= (double)LINE / rai);
    double bound = 2 * r.q_leave * 8e12 / (double)LINE + (double)BASE + (k + 1) * timer +
                   THR_WINDOW + (double)BASE;
    CHECK(r.recovered != ARB_TIME_NEVER && (double)r.recovered <= bound);
}

/* ==== two channels sharing: fairness ============================================ */

/* Jain's index of two throughputs: (x + y)^2 / (2 (x^2 + y^2)) = 1 / (1 + e^2)
 * with e = |x - y| / (x + y). */
static double jain2(double x, double y)
{
    return (x + y) * (x + y) / (2 * (x * x + y * y));
}

/*
 * Flow 0 runs alone for WARM, flow 1 joins; after `settle` both are
 * measured over `measure`. Returns Jain's index of their throughputs.
 */
static double run_pair(arb_cc_kind kind, const arb_cc_config *c, arb_time settle, arb_time measure)
{
    qm *m = qm_new(ECN_K);
    qm_add(m, make(kind, c));
    qm_add(m, make(kind, c));
    m->f[0].active = 1;
    qm_run(m, WARM);
    m->f[1].active = 1;
    qm_run(m, WARM + settle);
    uint64_t d0 = m->f[0].done, d1 = m->f[1].done;
    qm_run(m, WARM + settle + measure);
    double x = qm_rate(m, 0, d0, measure), y = qm_rate(m, 1, d1, measure);
    qm_free(m);
    return jain2(x, y);
}

/*
 * Oscar: on a shared bottleneck both channels see the same loop d, and the
 * difference of their windows shrinks each round by
 * rho = 1 - gain (1 - d* / d), d = d* + 2 a / C at the fixed point
 * (docs/cc.md); a round is at most two loops. The relative difference e
 * starts at most 1, so after `settle` e <= rho^(settle / (2 d)); add one
 * credit of rounding over the window sum C d.
 */
TEST(oscar_two_flows_fair)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    double dstar = 1.5 * (double)BASE, a = c.oscar.headroom;
    double d = dstar + 2 * a * t_credit();
    double rho = 1 - c.oscar.gain * (1 - dstar / d);
    arb_time settle = 3000 * US, measure = 1000 * US;
    double e = pow(rho, (double)settle / (2 * d)) + t_credit() / d;
    double j = run_pair(ARB_CC_OSCAR, &c, settle, measure);
    CHECK(j >= 1 / (1 + e * e));
}

/*
 * Swift: both channels see the same loop, hence the same target and the
 * same cut factor f; an increase adds ai per loop to each. In steady state
 * the cuts take back what the increases add: over a cycle of L loops the
 * window sum S grows by 2 ai L and one cut removes (1 - f) S, so
 * f = 1 - 2 ai L / S, and the difference shrinks by f per cycle:
 * exp(-2 ai T / S) over T loops whatever L. S ~ C d* (BDP plus the
 * target's queue). Not every cut hits both channels in the same loop, so
 * only half the exponent is claimed, plus one credit in S of rounding
 * (integer windows). That is plain AIMD (flow scaling off). Flow scaling
 * gives the smaller window the larger target, so it is cut less: the
 * difference shrinks at least as fast, with the loop (and S) up to
 * fs_range longer, which the second claim uses.
 */
TEST(swift_two_flows_fair)
{
    for (int fs = 0; fs < 2; fs++) {
        arb_cc_config c;
        arb_cc_config_default(&c);
        if (!fs) c.swift.fs_range = ARB_CC_SWIFT_FS_OFF;
        double dstar = 1.5 * (double)BASE + (fs ? (double)BASE / 2 : 0);
        double s = dstar / t_credit();
        arb_time settle = 3000 * US, measure = 1000 * US;
        double loops = (double)settle / dstar;
        double e = exp(-c.swift.ai * loops / s) + 1 / s;
        double j = run_pair(ARB_CC_SWIFT, &c, settle, measure);
        CHECK(j >= 1 / (1 + e * e));
    }
}

/* ==== random loss does not collapse a controller ================================= */

/*
 * One channel alone, 10% of credits lost (about 0.5% per link over a tree
 * of twenty links), each loss found from order. No controller treats it as
 * congestion: the delivered rate stays at least FRACTION of what the
 * surviving credits can carry, (1 - p) line rate.
 */
TEST(random_loss_no_collapse)
{
    for (int k = ARB_CC_TIMELY; k <= ARB_CC_OSCAR; k++) {
        arb_cc_config c;
        arb_cc_config_default(&c);
        qm *m = qm_new(ECN_K);
        m->loss = 0.1;
        qm_add(m, make((arb_cc_kind)k, &c));
        m->f[0].active = 1;
        qm_run(m, WARM);
        uint64_t d0 = m->f[0].done;
        qm_run(m, 2 * WARM);
        double x = qm_rate(m, 0, d0, WARM);
        arb_cc_stats st = stats_of(m->f[0].cc);
        if (!(x >= FRACTION * (1 - m->loss) * (double)LINE))
            TESTKIT_REPORT("%s: %.3g bit/s under 10%% loss", arb_cc_kind_name(k), x);
        CHECK(st.losses > 0);
        CHECK_EQ_U(st.stalls, 0);
        qm_free(m);
    }
}

/*
 * `test_cc --report`: the scenarios' figures for each adaptive controller,
 * printed instead of checked (docs/cc.md quotes them).
 */
static void report(void)
{
    printf("model: %d channels, bottleneck %.0f Gb/s, loop %.0f us, credit %u B, CE above "
           "%.0f KB\n",
           N_INCAST, (double)LINE / 1e9, (double)BASE / 1e6, CREDIT, ECN_K / 1e3);
    printf("%-7s %11s %11s %9s %9s %9s %6s %12s %8s\n", "kind", "gate alone", "gate incast",
           "peak KB", "tail KB", "tail us", "use", "recovery us", "Jain 2");
    for (int k = ARB_CC_TIMELY; k <= ARB_CC_OSCAR; k++) {
        arb_cc_config c;
        arb_cc_config_default(&c);
        incast_result r = run_incast((arb_cc_kind)k, &c, 100 * ARB_PS_PER_MS);
        double j = run_pair((arb_cc_kind)k, &c, 3000 * US, 1000 * US);
        double unit = rate_based((arb_cc_kind)k) ? 1e9 : 1; /* Gb/s or credits */
        printf("%-7s %11.3g %11.3g %9.0f %9.1f %9.2f %6.3f %12.0f %8.4f\n", arb_cc_kind_name(k),
               r.before / unit, r.after / unit, r.q_peak / 1e3, r.q_tail / 1e3, r.rtt_tail / 1e6,
               r.util_tail, r.recovered == ARB_TIME_NEVER ? -1.0 : (double)r.recovered / 1e6, j);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--report") == 0) {
        report();
        return 0;
    }
    RUN(defaults);
    RUN(derived_defaults);
    RUN(disabled_ignores_spacing_and_samples);
    RUN(fixed_holds_rate_and_window);
    RUN(stats_before_any_sample_and_saturation);
    RUN(errors);
    RUN(check_names_the_field);
    RUN(names);
    RUN(losses_and_stalls);
    RUN(stall_before_first_sample);
    RUN(timely_rules);
    RUN(swift_rules);
    RUN(swift_target_scaling);
    RUN(swift_stalls);
    RUN(loop_window);
    RUN(window_bounds);
    RUN(dcqcn_rules_and_timers);
    RUN(dcqcn_timers_stop);
    RUN(oscar_rules);
    RUN(oscar_pacing_below_one);
    RUN(arbitrary_sequences_keep_invariants);
    RUN(swift_incast_and_recovery);
    RUN(oscar_incast_and_recovery);
    RUN(timely_incast_and_recovery);
    RUN(dcqcn_incast_and_recovery);
    RUN(oscar_two_flows_fair);
    RUN(swift_two_flows_fair);
    RUN(random_loss_no_collapse);
    return testkit_done();
}
