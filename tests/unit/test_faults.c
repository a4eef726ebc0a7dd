/* Faults a link injects beside loss: duplication and reordering
 * (fabric.dup, fabric.reorder, fabric.reorder_delay, fabric.link dup= /
 * reorder=), under Arbor and under the RoCE transports. */
#include "arbor/scenario.h"
#include "testkit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run `text` with `sets` applied (NULL-terminated); NULL on error. */
static arb_scenario_result *run_text(const char *text, const char *const *sets)
{
    char err[512];
    arb_scenario *sc = NULL;
    if (arb_scenario_new(&sc) != 0) return NULL;
    arb_scenario_result *r = NULL;
    int rc = arb_scenario_load_string(sc, text, "t.ini", NULL, err, sizeof err);
    for (; rc == 0 && sets && *sets; sets++)
        rc = arb_scenario_set(sc, *sets, err, sizeof err);
    if (rc == 0) rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
    if (rc < 0) printf("  %s\n", err);
    arb_scenario_free(sc);
    return r;
}

static const char *arbor_values = "[fabric]\ntopology = star:8\n"
                                  "[workload]\nkind = arbor\nsize = 4MiB\n"
                                  "[arbor]\nmode = values\n"
                                  "[run]\nstop = 0\nsample = 0\n";

/* |x - n p| within 6 standard deviations of a binomial(n, p): a bound that
 * a correct draw breaks with probability below 1e-8. */
static int binomial_ok(uint64_t x, uint64_t n, double p)
{
    double mean = (double)n * p, sd = sqrt((double)n * p * (1 - p));
    return fabs((double)x - mean) <= 6 * sd + 1;
}

/* Every offset committed exactly once and the results exact, whatever the
 * links duplicate, reorder and lose together; the counts of duplicated and
 * reordered packets are those of their probabilities over the hops. */
TEST(arbor_under_dup_reorder_loss)
{
    const char *sets[] = {"fabric.dup=0.01", "fabric.reorder=0.01", "fabric.loss=0.001", NULL};
    arb_scenario_result *r = run_text(arbor_values, sets);
    REQUIRE(r != NULL);
    const arb_sim_arbor_result *a = arb_scenario_result_arbor(r);
    const arb_sim_stats *st = arb_scenario_result_stats(r);
    CHECK(a->done);
    CHECK_EQ_I(a->correct, 1);
    CHECK_EQ_U(a->invariant_errors, 0);
    CHECK_EQ_U(a->inv_dup_commit, 0);
    CHECK_EQ_U(a->wrong, 0);
    /* each hop draws once: a lost packet is dropped before the others act */
    uint64_t hops = st->packet_hops;
    CHECK(st->duplicated > 0 && binomial_ok(st->duplicated, hops, 0.01 * (1 - 0.001)));
    CHECK(st->reordered > 0 && binomial_ok(st->reordered, hops, 0.01 * (1 - 0.001)));
    arb_scenario_result_free(r);
}

/* The same seed gives the same run; another seed other draws. */
TEST(draws_follow_the_seed)
{
    const char *s1[] = {"fabric.dup=0.02", "fabric.reorder=0.02", NULL};
    const char *s2[] = {"fabric.dup=0.02", "fabric.reorder=0.02", "run.seed=7", NULL};
    arb_scenario_result *a = run_text(arbor_values, s1), *b = run_text(arbor_values, s1),
                        *c = run_text(arbor_values, s2);
    REQUIRE(a && b && c);
    char *ja = arb_scenario_json(a, NULL), *jb = arb_scenario_json(b, NULL);
    CHECK(ja && jb && strcmp(ja, jb) == 0);
    CHECK(arb_scenario_result_stats(a)->duplicated != arb_scenario_result_stats(c)->duplicated ||
          arb_scenario_result_stats(a)->reordered != arb_scenario_result_stats(c)->reordered);
    free(ja);
    free(jb);
    arb_scenario_result_free(a);
    arb_scenario_result_free(b);
    arb_scenario_result_free(c);
}

/* One flow over one link pair: a held packet is overtaken (IRN sees it out
 * of order) and a duplicate is absorbed; every byte arrives once. */
TEST(rdma_under_dup_and_reorder)
{
    static const char *text = "[fabric]\ntopology = star:2\n"
                              "[transport]\nkind = irn\n"
                              "[workload]\nkind = pattern\ntraffic = perm:1\nsize = 4MiB\n"
                              "[run]\nstop = 0\nsample = 0\n";
    const char *sets[] = {"fabric.dup=0.01", "fabric.reorder=0.01", NULL};
    arb_scenario_result *r = run_text(text, sets);
    REQUIRE(r != NULL);
    const arb_sim_stats *st = arb_scenario_result_stats(r);
    const arb_workload_result *w = arb_scenario_result_workload(r);
    CHECK(w->done);
    CHECK(st->duplicated > 0);
    CHECK(st->reordered > 0);
    CHECK(st->ooo_pkts > 0);                               /* reordering shows at the receiver */
    CHECK_EQ_U(st->payload_delivered, 2 * 4 * 1048576ull); /* perm:1 over 2 hosts: 2 flows */
    arb_scenario_result_free(r);
}

/* A reordered packet is held reorder_delay: with every packet held, a
 * one-packet message takes that much longer, hop by hop. */
TEST(reorder_delay_is_the_hold)
{
    static const char *text = "[fabric]\ntopology = star:2\n"
                              "[workload]\nkind = pattern\ntraffic = perm:1\nsize = 1000\n"
                              "[run]\nstop = 0\nsample = 0\n";
    const char *plain[] = {NULL};
    const char *held[] = {"fabric.reorder=0.999999999", "fabric.reorder_delay=3us", NULL};
    arb_scenario_result *a = run_text(text, plain), *b = run_text(text, held);
    REQUIRE(a && b);
    const arb_workload_result *wa = arb_scenario_result_workload(a),
                              *wb = arb_scenario_result_workload(b);
    CHECK(wa->done && wb->done);
    /* data: two hops held; its ack: two more, but the flow ends when the
     * data is in: 2 x 3 us */
    CHECK_EQ_U(wb->finish - wa->finish, 2 * 3 * ARB_PS_PER_US);
    arb_scenario_result_free(a);
    arb_scenario_result_free(b);
}

/* A link's own settings: only that link duplicates. */
TEST(per_link_settings)
{
    const char *sets[] = {"fabric.link=host:h3 dup=0.05 reorder=0.05", NULL};
    arb_scenario_result *r = run_text(arbor_values, sets);
    REQUIRE(r != NULL);
    const arb_sim_arbor_result *a = arb_scenario_result_arbor(r);
    CHECK_EQ_I(a->correct, 1);
    CHECK(arb_scenario_result_stats(r)->duplicated > 0);
    arb_scenario_result_free(r);
}

/* Bad settings name the key and the rule. */
TEST(errors)
{
    static const struct {
        const char *set, *want;
    } cases[] = {
        {"fabric.dup=1", "fabric.dup: '1' is not below 1 (a probability in 0..1, 1 excluded)"},
        {"fabric.reorder=1.5", "fabric.reorder: '1.5' is not in 0..1"},
        {"fabric.link=host:h1 dup=2", "'dup=2': not a duplication probability"},
        {"fabric.link=host:h1 reorder=x", "'reorder=x': not a reordering probability"},
        {"fabric.link=host:h1 dup=0.1 dup=0.2", "'dup=0.2': dup= given twice for these links"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512] = "";
        arb_scenario *sc = NULL;
        REQUIRE_EQ_I(arb_scenario_new(&sc), 0);
        REQUIRE_EQ_I(arb_scenario_load_string(sc, arbor_values, "t.ini", NULL, err, sizeof err), 0);
        arb_scenario_result *r = NULL;
        int rc = arb_scenario_set(sc, cases[i].set, err, sizeof err);
        if (rc == 0) rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
        CHECK(rc < 0);
        if (!strstr(err, cases[i].want))
            TESTKIT_REPORT("%s: got '%s', want '...%s...'", cases[i].set, err, cases[i].want);
        arb_scenario_result_free(r);
        arb_scenario_free(sc);
    }
    /* a hold of 0 with reordering on */
    char err[512] = "";
    const char *sets[] = {"fabric.reorder=0.1", "fabric.reorder_delay=0", NULL};
    arb_scenario *sc = NULL;
    REQUIRE_EQ_I(arb_scenario_new(&sc), 0);
    REQUIRE_EQ_I(arb_scenario_load_string(sc, arbor_values, "t.ini", NULL, err, sizeof err), 0);
    for (const char *const *s = sets; *s; s++)
        REQUIRE_EQ_I(arb_scenario_set(sc, *s, err, sizeof err), 0);
    arb_scenario_result *r = NULL;
    CHECK(arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err) < 0);
    CHECK(strstr(err, "fabric.reorder_delay: must be above 0") != NULL);
    arb_scenario_free(sc);
}

int main(void)
{
    RUN(arbor_under_dup_reorder_loss);
    RUN(draws_follow_the_seed);
    RUN(rdma_under_dup_and_reorder);
    RUN(reorder_delay_is_the_hold);
    RUN(per_link_settings);
    RUN(errors);
    return testkit_done();
}
