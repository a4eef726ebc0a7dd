/*
 * The software switch's ECN setting (arb_rt_ecn_parse) and RED's marking
 * probability (rt_ecn_p): the values each syntax gives, each malformed
 * setting refused with its rule, and the probability at and between the
 * thresholds, derived from the definition in rt.h.
 */
#define _GNU_SOURCE
#include "arbor/rt.h"
#include "rt/rt_int.h"
#include "testkit.h"

#include <math.h>
#include <string.h>

TEST(parse_forms)
{
    arb_rt_ecn e;
    char err[256];
    REQUIRE(arb_rt_ecn_parse("off", &e, err, sizeof err) == 0);
    CHECK(e.on == 0);
    REQUIRE(arb_rt_ecn_parse("on", &e, err, sizeof err) == 0);
    CHECK(e.on == 1);
    CHECK_EQ_U(e.kmin, 100000);
    CHECK_EQ_U(e.kmax, 400000);
    CHECK(e.pmax == 0.2);
    REQUIRE(arb_rt_ecn_parse("5KB,200KB,0.01", &e, err, sizeof err) == 0);
    CHECK(e.on == 1);
    CHECK_EQ_U(e.kmin, 5000);
    CHECK_EQ_U(e.kmax, 200000);
    CHECK(e.pmax == 0.01);
    REQUIRE(arb_rt_ecn_parse("1KiB,1.5MiB,1", &e, err, sizeof err) == 0);
    CHECK_EQ_U(e.kmin, 1024);
    CHECK_EQ_U(e.kmax, 1572864);
    CHECK(e.pmax == 1);
    REQUIRE(arb_rt_ecn_parse("0,0,0", &e, err, sizeof err) == 0);
    CHECK_EQ_U(e.kmin, 0);
    CHECK_EQ_U(e.kmax, 0);
    REQUIRE(arb_rt_ecn_parse("300B,1MB,0.5", &e, err, sizeof err) == 0);
    CHECK_EQ_U(e.kmin, 300);
    CHECK_EQ_U(e.kmax, 1000000);
    /* the one size syntax: K, M binary as KiB, MiB; units in any case */
    REQUIRE(arb_rt_ecn_parse("64k,1M,0.5", &e, err, sizeof err) == 0);
    CHECK_EQ_U(e.kmin, 64 * 1024);
    CHECK_EQ_U(e.kmax, 1024 * 1024);
    REQUIRE(arb_rt_ecn_parse("0.5mib,1gb,0.5", &e, err, sizeof err) == 0);
    CHECK_EQ_U(e.kmin, 512 * 1024);
    CHECK_EQ_U(e.kmax, 1000000000); /* the limit itself */
}

TEST(parse_errors)
{
    static const char *const bad[] = {
        "",          "yes",      "1,2",      "1,2,",        ",2,0.1",      "5,1,0.2",
        "1,2,1.5",   "1,2,-0.1", "-1,2,0.1", "1KB,2XB,0.1", "2GB,3GB,0.1", "1.5,2,0.1",
        "1,2,0.1,4", "1,2,0.1x", " 1,2,0.1", "1,1GiB,0.1",  "1e3,2e3,0.1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        arb_rt_ecn e = {7, 7, 7, 0.7};
        char err[256] = "";
        CHECK(arb_rt_ecn_parse(bad[i], &e, err, sizeof err) == ARB_EPARSE);
        CHECK(strstr(err, "want off, on, or KMIN,KMAX,PMAX") != NULL);
        CHECK(e.on == 7 && e.kmin == 7 && e.kmax == 7 && e.pmax == 0.7); /* untouched */
    }
}

TEST(red_probability)
{
    arb_rt_ecn e = {1, 100000, 400000, 0.2};
    CHECK(rt_ecn_p(&e, 0) == 0);
    CHECK(rt_ecn_p(&e, 99999) == 0);
    CHECK(rt_ecn_p(&e, 100000) == 0);                /* the line starts at 0 */
    CHECK(fabs(rt_ecn_p(&e, 250000) - 0.1) < 1e-12); /* halfway: pmax / 2 */
    CHECK(fabs(rt_ecn_p(&e, 399999) - 0.2 * 299999 / 300000) < 1e-12);
    CHECK(rt_ecn_p(&e, 400000) == 1); /* from kmax on: every one */
    CHECK(rt_ecn_p(&e, UINT64_MAX) == 1);
    e.on = 0;
    CHECK(rt_ecn_p(&e, UINT64_MAX) == 0);
    arb_rt_ecn all = {1, 0, 0, 0}; /* kmin = kmax = 0: every datagram */
    CHECK(rt_ecn_p(&all, 0) == 1);
    arb_rt_ecn step = {1, 1000, 1000, 0.5}; /* kmin = kmax: a step, no line */
    CHECK(rt_ecn_p(&step, 999) == 0);
    CHECK(rt_ecn_p(&step, 1000) == 1);
}

int main(void)
{
    RUN(parse_forms);
    RUN(parse_errors);
    RUN(red_probability);
    return testkit_done();
}
