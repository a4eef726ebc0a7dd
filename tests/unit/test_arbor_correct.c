/*
 * What "correct" means for an Arbor values run (docs/arbor-sim.md): every
 * rank done, nothing missing, nothing wrong, and something checked. A run
 * whose results reach the ranks without their bytes checks nothing and
 * must not be reported correct; Barrier, which carries no data, is correct
 * when it completes.
 *
 * To make such a run the test stands in for the engines' constructors
 * (ld's --wrap, named on the next line for the build) and, when told to,
 * hands the simulator's result and commit callbacks NULL data: the
 * collective runs and completes as before, but its checks see no byte.
 *
 * ld-wrap: arb_requester_new arb_responder_new
 */
#include "arbor/endpoint.h"
#include "arbor/scenario.h"
#include "arbor/sim.h"
#include "testkit.h"

#include <stdlib.h>

static int g_strip; /* 1: the engines deliver results without their bytes */

/* The callbacks the simulator installed, per engine. */
struct hop {
    void (*on_result)(void *ctx, uint8_t msg_id, uint32_t offset, uint32_t index,
                      const uint8_t *data, size_t len);
    void (*on_commit)(void *ctx, const arb_commit_info *c);
    void *ctx;
};
static struct hop hops[1024];
static unsigned n_hops;

static void strip_result(void *ctx, uint8_t msg_id, uint32_t offset, uint32_t index,
                         const uint8_t *data, size_t len)
{
    const struct hop *h = ctx;
    (void)data, (void)len;
    h->on_result(h->ctx, msg_id, offset, index, NULL, 0);
}

static void strip_commit(void *ctx, const arb_commit_info *ci)
{
    const struct hop *h = ctx;
    arb_commit_info c = *ci;
    c.result = NULL;
    c.len = 0;
    h->on_commit(h->ctx, &c);
}

int __real_arb_requester_new(arb_requester **out, const arb_requester_config *cfg);
int __wrap_arb_requester_new(arb_requester **out, const arb_requester_config *cfg);
int __real_arb_responder_new(arb_responder **out, const arb_responder_config *cfg);
int __wrap_arb_responder_new(arb_responder **out, const arb_responder_config *cfg);

int __wrap_arb_requester_new(arb_requester **out, const arb_requester_config *cfg)
{
    if (!g_strip || !cfg || !cfg->on_result) return __real_arb_requester_new(out, cfg);
    if (n_hops == sizeof hops / sizeof hops[0]) return ARB_ENOMEM;
    struct hop *h = &hops[n_hops++];
    h->on_result = cfg->on_result;
    h->ctx = cfg->result_ctx;
    arb_requester_config c = *cfg;
    c.on_result = strip_result;
    c.result_ctx = h;
    return __real_arb_requester_new(out, &c);
}

int __wrap_arb_responder_new(arb_responder **out, const arb_responder_config *cfg)
{
    if (!g_strip || !cfg || !cfg->on_commit) return __real_arb_responder_new(out, cfg);
    if (n_hops == sizeof hops / sizeof hops[0]) return ARB_ENOMEM;
    struct hop *h = &hops[n_hops++];
    h->on_commit = cfg->on_commit;
    h->ctx = cfg->commit_ctx;
    arb_responder_config c = *cfg;
    c.on_commit = strip_commit;
    c.commit_ctx = h;
    return __real_arb_responder_new(out, &c);
}

/* 64 KiB of i32 over star:4: 16384 elements. */
enum { RANKS = 4, BYTES = 65536, ELEMS = BYTES / 4 };

/* Run `collective` in values (or header-only) mode; its figures in *out. */
static void run(const char *collective, int values, int strip, arb_sim_arbor_result *out)
{
    char text[512], err[512];
    snprintf(text, sizeof text,
             "[fabric]\ntopology = star:%d\n[workload]\nkind = arbor\nsize = %d\n"
             "[arbor]\ncollective = %s\ndtype = i32\nmode = %s\npayload = 4096\n"
             "[run]\nstop = 0\nsample = 0\n",
             RANKS, BYTES, collective, values ? "values" : "headers");
    arb_scenario *sc = NULL;
    REQUIRE_EQ_I(arb_scenario_new(&sc), 0);
    int rc = arb_scenario_load_string(sc, text, "t.ini", NULL, err, sizeof err);
    if (rc < 0) printf("  load: %s\n", err);
    REQUIRE_EQ_I(rc, 0);
    arb_scenario_result *r = NULL;
    g_strip = strip;
    n_hops = 0;
    rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
    g_strip = 0;
    if (rc < 0) printf("  run: %s\n", err);
    arb_scenario_free(sc);
    REQUIRE_EQ_I(rc, 0);
    const arb_sim_arbor_result *a = arb_scenario_result_arbor(r);
    REQUIRE(a != NULL);
    *out = *a;
    if (strip) CHECK(n_hops > 0); /* the stand-ins were in the way */
    arb_scenario_result_free(r);
}

/* The run as it is: correct, and every rank checked its whole output. */
TEST(values_run_checks_and_is_correct)
{
    arb_sim_arbor_result a;
    run("allreduce", 1, 0, &a);
    CHECK(a.done);
    CHECK_EQ_U(a.invariant_errors, 0);
    CHECK_EQ_U(a.wrong, 0);
    /* AllReduce: each rank checks the whole buffer, its own shard at its
     * responder's commits, the others' as results */
    CHECK_EQ_U(a.checked, (uint64_t)RANKS * ELEMS);
    CHECK_EQ_I(a.correct, 1);
}

/* Results without their bytes: the collective completes, nothing is wrong
 * and nothing is missing, but nothing was checked: not correct. */
TEST(values_run_that_checks_nothing_is_not_correct)
{
    static const char *const colls[] = {"allreduce", "reduce", "reducescatter", "broadcast",
                                        "allgather"};
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        arb_sim_arbor_result a;
        run(colls[i], 1, 1, &a);
        if (!a.done || a.invariant_errors || a.wrong || a.checked || a.correct != 0)
            TESTKIT_REPORT("%s: done %d invariants %llu wrong %llu checked %llu correct %d "
                           "(want 1 0 0 0 0)",
                           colls[i], a.done, (unsigned long long)a.invariant_errors,
                           (unsigned long long)a.wrong, (unsigned long long)a.checked, a.correct);
        CHECK_EQ_U(a.bytes, BYTES);
    }
}

/* Barrier carries no data: nothing to check, correct when it completes. */
TEST(barrier_is_correct_when_done)
{
    for (int strip = 0; strip < 2; strip++) {
        arb_sim_arbor_result a;
        run("barrier", 1, strip, &a);
        CHECK(a.done);
        CHECK_EQ_U(a.bytes, 0);
        CHECK_EQ_U(a.checked, 0);
        CHECK_EQ_U(a.invariant_errors, 0);
        CHECK_EQ_I(a.correct, 1);
    }
}

/* Header-only: nothing to check, correct is "not known" (-1). */
TEST(header_only_is_not_judged)
{
    arb_sim_arbor_result a;
    run("allreduce", 0, 0, &a);
    CHECK(a.done);
    CHECK_EQ_U(a.checked, 0);
    CHECK_EQ_I(a.correct, -1);
}

int main(void)
{
    RUN(values_run_checks_and_is_correct);
    RUN(values_run_that_checks_nothing_is_not_correct);
    RUN(barrier_is_correct_when_done);
    RUN(header_only_is_not_judged);
    return testkit_done();
}
