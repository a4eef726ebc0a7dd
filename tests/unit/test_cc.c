/* Unit tests of the congestion-control interface (cc.h): DISABLED and FIXED. */
#include "arbor/cc.h"

#include "testkit.h"

TEST(defaults)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    CHECK_EQ_U(c.window, ARB_CC_WINDOW_DEFAULT);
    CHECK_EQ_U(c.spacing, 0);

    arb_cc *cc = NULL;
    CHECK_EQ_I(arb_cc_new(&cc, ARB_CC_DISABLED, NULL), 0);
    CHECK(cc != NULL);
    CHECK_EQ_U(arb_cc_window(cc), ARB_CC_WINDOW_DEFAULT);
    CHECK_EQ_U(arb_cc_min_spacing(cc), 0);
    CHECK_EQ_I(arb_cc_get_kind(cc), ARB_CC_DISABLED);
    arb_cc_free(cc);
    arb_cc_free(NULL);
}

TEST(disabled_ignores_spacing_and_samples)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.window = 7;
    c.spacing = 5 * ARB_PS_PER_US; /* DISABLED has no rate gate */
    arb_cc *cc = NULL;
    CHECK_EQ_I(arb_cc_new(&cc, ARB_CC_DISABLED, &c), 0);
    arb_time t = 0;
    for (int i = 0; i < 100; i++) {
        t += 3 * ARB_PS_PER_US;
        arb_cc_on_sample(cc, (arb_time)(i + 1) * ARB_PS_PER_US, i % 3 == 0, t);
        if (i % 10 == 0) arb_cc_on_timeout(cc, t);
        CHECK_EQ_U(arb_cc_window(cc), 7);
        CHECK_EQ_U(arb_cc_min_spacing(cc), 0);
    }
    arb_cc_stats st;
    arb_cc_get_stats(cc, &st);
    CHECK_EQ_U(st.samples, 100);
    CHECK_EQ_U(st.ce_samples, 34);
    CHECK_EQ_U(st.timeouts, 10);
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
    CHECK_EQ_I(arb_cc_new(&cc, ARB_CC_FIXED, &c), 0);
    CHECK_EQ_I(arb_cc_get_kind(cc), ARB_CC_FIXED);
    arb_time t = 0;
    for (int i = 0; i < 50; i++) {
        t += ARB_PS_PER_US;
        arb_cc_on_sample(cc, 40 * ARB_PS_PER_US, 1, t); /* congestion everywhere */
        arb_cc_on_timeout(cc, t);
        CHECK_EQ_U(arb_cc_window(cc), 12);
        CHECK_EQ_U(arb_cc_min_spacing(cc), 661920);
    }
    arb_cc_stats st;
    arb_cc_get_stats(cc, &st);
    CHECK_EQ_U(st.samples, 50);
    CHECK_EQ_U(st.ce_samples, 50);
    CHECK_EQ_U(st.timeouts, 50);
    arb_cc_free(cc);
}

TEST(stats_before_any_sample_and_saturation)
{
    arb_cc *cc = NULL;
    CHECK_EQ_I(arb_cc_new(&cc, ARB_CC_FIXED, NULL), 0);
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

TEST(errors)
{
    arb_cc *cc = (arb_cc *)&cc;
    arb_cc_config c;
    arb_cc_config_default(&c);
    CHECK_EQ_I(arb_cc_new(NULL, ARB_CC_FIXED, &c), ARB_EINVAL);
    for (int k = ARB_CC_TIMELY; k <= ARB_CC_OSCAR; k++) {
        CHECK_EQ_I(arb_cc_new(&cc, (arb_cc_kind)k, &c), ARB_EINVAL);
        CHECK(cc == NULL);
    }
    CHECK_EQ_I(arb_cc_new(&cc, (arb_cc_kind)ARB_CC_KIND_COUNT, &c), ARB_EINVAL);
    CHECK_EQ_I(arb_cc_new(&cc, (arb_cc_kind)-1, &c), ARB_EINVAL);
    c.window = 0;
    CHECK_EQ_I(arb_cc_new(&cc, ARB_CC_DISABLED, &c), ARB_EINVAL);
    c.window = ARB_CC_WINDOW_MAX + 1;
    CHECK_EQ_I(arb_cc_new(&cc, ARB_CC_FIXED, &c), ARB_EINVAL);
    c.window = ARB_CC_WINDOW_MAX;
    CHECK_EQ_I(arb_cc_new(&cc, ARB_CC_FIXED, &c), 0);
    CHECK_EQ_U(arb_cc_window(cc), ARB_CC_WINDOW_MAX);
    arb_cc_free(cc);

    CHECK_EQ_U(arb_cc_spacing_for_rate(0, 8274), ARB_TIME_NEVER);
    /* NULL controller: harmless, the tightest gates */
    arb_cc_on_sample(NULL, 1, 1, 0);
    arb_cc_on_timeout(NULL, 0);
    CHECK_EQ_U(arb_cc_window(NULL), 1);
    CHECK_EQ_U(arb_cc_min_spacing(NULL), 0);
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

int main(void)
{
    RUN(defaults);
    RUN(disabled_ignores_spacing_and_samples);
    RUN(fixed_holds_rate_and_window);
    RUN(stats_before_any_sample_and_saturation);
    RUN(errors);
    RUN(names);
    return testkit_done();
}
