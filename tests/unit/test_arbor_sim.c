/*
 * The Arbor transport in the simulator: every collective on star:4 and a
 * leaf-spine in both modes, exact values, every invariant, the wire
 * check, determinism and random loss with repairs.
 */
#include "arbor/plan.h"
#include "arbor/sim.h"

#include <stdlib.h>

#include "simkit.h"
#include "testkit.h"

static uint32_t test_route(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                           const arb_sim_pkt_info *f, arb_time now)
{
    (void)ctx, (void)in_port, (void)now;
    const arb_topo *t = arb_sim_topo(sim);
    const arb_pgft *g = arb_topo_pgft(t);
    const arb_node *n = arb_topo_node(t, node);
    if (arb_pgft_below(g, n, f->dst)) return arb_pgft_down_port(g, n, f->dst);
    unsigned l = n->level;
    uint32_t ups = g->w[l + 1] * g->p[l + 1], q = (f->dst / g->W[l]) % ups;
    for (uint32_t x = 0; x < ups; x++) /* the next live up port */
        if (!arb_topo_port(t, n->first_up + (q + x) % ups)->failed)
            return n->first_up + (q + x) % ups;
    return n->first_up + q;
}

struct run {
    const char *topo;
    arb_coll coll;
    uint32_t ranks;
    uint64_t bytes;
    arb_dtype dtype;
    int values;
    double loss;
    uint32_t payload;
    uint32_t subchannels;
    uint32_t slots;
    uint64_t seed;
};

static arb_sim_arbor_failure g_failure;

/* rank skew for the next runs (arb_sim_arbor_config.skew, .skew_random) */
static arb_time g_skew;
static int g_skew_mode;
/* dynamic subchannels, and a switch failed after planning (0: none) */
static int g_dynamic;
static int g_seeded; /* ep.seed */
static int g_early;  /* ep.early */
static uint32_t g_fail_node;
static int g_fail_rc; /* arb_sim_run may fail with this (0: must not fail) */

/* What a tap saw: packets by kind, and those whose Arbor header the
 * simulator gave back. */
struct kinds {
    uint64_t by_kind[ARB_SIM_ARBOR + 2]; /* the last: any other value */
    uint64_t headers, header_mismatch;
};
static struct kinds *g_kinds; /* non-NULL: the next runs tap every packet */

static void kind_tap(void *ctx, const arb_sim *sim, uint32_t port, const arb_sim_pkt_info *f,
                     arb_time now)
{
    (void)port, (void)now;
    struct kinds *k = ctx;
    k->by_kind[f->kind <= ARB_SIM_ARBOR ? f->kind : ARB_SIM_ARBOR + 1]++;
    arb_hdr h;
    int found = arb_sim_arbor_header(sim, f->index, &h) == 0;
    k->headers += (uint64_t)found;
    if (found != (f->kind == ARB_SIM_ARBOR)) k->header_mismatch++;
}

static int run(const struct run *x, arb_sim_arbor_result *res, arb_sim_stats *st)
{
    arb_topo *t = NULL;
    char err[256];
    int rc = arb_topo_new(&t, x->topo, NULL, err, sizeof err);
    CHECK_EQ_I(rc, 0);
    uint32_t ranks[256];
    for (uint32_t r = 0; r < x->ranks; r++)
        ranks[r] = r;
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.coll = x->coll;
    pc.ranks = ranks;
    pc.n_ranks = x->ranks;
    pc.bytes = x->bytes;
    pc.dtype = x->dtype;
    pc.root = x->ranks - 1;
    pc.subchannels = x->subchannels ? x->subchannels : 1;
    arb_plan *p = NULL;
    rc = arb_topo_plan(&p, t, &pc, err, sizeof err);
    if (rc < 0) printf("  plan: %s\n", err);
    CHECK_EQ_I(rc, 0);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = test_route;
    cfg.loss = x->loss;
    cfg.seed = x->seed ? x->seed : 1;
    if (g_kinds) cfg.tap = kind_tap, cfg.tap_ctx = g_kinds;
    arb_sim *s = NULL;
    if (g_fail_node && p) CHECK_EQ_I(arb_topo_fail_node(t, g_fail_node), 0);
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_sim_arbor_config ac;
    arb_sim_arbor_config_default(&ac);
    ac.plan = p;
    ac.values = x->values;
    ac.wire_check = 1;
    ac.ep.timeout = 200 * ARB_PS_PER_US;
    ac.ep.retry = 100 * ARB_PS_PER_US;
    if (x->payload) ac.ep.payload = x->payload;
    if (x->slots) ac.slots = x->slots;
    ac.skew = g_skew;
    ac.skew_random = g_skew_mode;
    ac.seed = 7;
    ac.ep.dynamic_subchannels = g_dynamic;
    ac.ep.seed = g_seeded;
    ac.ep.early = g_early;
    uint32_t done = 0, all = 0;
    if (s) CHECK_EQ_I(arb_sim_arbor_progress(s, &done, &all), ARB_EINVAL); /* none yet */
    rc = s && p ? arb_sim_arbor_add(s, &ac) : ARB_EINVAL;
    CHECK_EQ_I(rc, 0);
    if (rc == 0) {
        CHECK_EQ_I(arb_sim_arbor_progress(s, &done, &all), 0);
        CHECK_EQ_U(done, 0);
        CHECK_EQ_U(all, x->ranks);
        rc = arb_sim_run(s, ARB_PS_PER_S);
    }
    if (g_fail_rc && rc == g_fail_rc)
        rc = 0; /* the failure the test expects; the figures say the rest */
    else
        CHECK_EQ_I(rc, 0);
    if (s && g_fail_rc) arb_sim_arbor_failure_get(s, &g_failure);
    if (s) {
        CHECK_EQ_I(arb_sim_arbor_result_get(s, res), 0);
        arb_sim_get_stats(s, st);
        if (arb_sim_arbor_progress(s, &done, &all) == 0) { /* the cheap view agrees */
            CHECK_EQ_U(done, res->ranks_done);
            CHECK_EQ_U(all, res->ranks);
        }
    }
    arb_sim_free(s);
    arb_plan_free(p);
    arb_topo_free(t);
    return rc;
}

static void check_good(const struct run *x, const arb_sim_arbor_result *r, const arb_sim_stats *st)
{
    CHECK(r->done);
    CHECK_EQ_U(r->ranks_done, x->ranks);
    CHECK_EQ_U(r->invariant_errors, 0);
    CHECK_EQ_U(r->inv_conservation, 0);
    CHECK_EQ_U(r->wire_errors, 0);
    CHECK(r->wire_checks > 0);
    CHECK_EQ_U(st->in_flight, 0);
    if (x->values) {
        CHECK_EQ_I(r->correct, 1);
        CHECK_EQ_U(r->wrong, 0);
        if (x->coll != ARB_COLL_BARRIER) /* Reduce and ReduceScatter: at their commits */
            CHECK(r->checked > 0);
    } else {
        CHECK_EQ_I(r->correct, -1);
    }
    if (TEST_FAILING())
        printf("  %s %s n=%u bytes=%llu values=%d: done %d ranks %u commits %llu inv %llu "
               "(dup %llu count %llu agg %llu miss %llu early %llu cons %llu) wrong %llu\n",
               x->topo, arb_coll_name(x->coll), x->ranks, (unsigned long long)x->bytes, x->values,
               r->done, r->ranks_done, (unsigned long long)r->commits,
               (unsigned long long)r->invariant_errors, (unsigned long long)r->inv_dup_commit,
               (unsigned long long)r->inv_count, (unsigned long long)r->inv_agg_check,
               (unsigned long long)r->inv_missing, (unsigned long long)r->inv_early,
               (unsigned long long)r->inv_conservation, (unsigned long long)r->wrong);
}

TEST(star4_allreduce_headers)
{
    struct run x = {"star:4", ARB_COLL_ALLREDUCE, 4, 256 * 1024, ARB_DTYPE_F32, 0, 0, 0, 0, 0, 0};
    arb_sim_arbor_result r;
    arb_sim_stats st;
    memset(&r, 0, sizeof r);
    if (run(&x, &r, &st) < 0) return;
    check_good(&x, &r, &st);
    /* 4 channels of 64 KiB: 8 offsets each */
    CHECK_EQ_U(r.commits, 32);
    CHECK_EQ_U(r.repair_credits, 0);
    CHECK_EQ_U(r.agg_miss, 0);
    CHECK_EQ_U(r.agg_aggregates, 32);
    CHECK_EQ_U(r.agg_inputs, 32 * 3);
    CHECK(r.copies >= 32 * 2 && r.copies % 2 == 0); /* credits and tails, 3 copies each */
    CHECK(r.bytes_per_packet < 100);
    CHECK(r.goodput_gbps > 10);
    /* every Arbor byte sent is on a host link of the star; both directions */
    CHECK_EQ_U(r.tier_up_bytes[0] + r.tier_down_bytes[0], r.wire_bytes);
    CHECK(r.tier_up_bytes[0] > 0 && r.tier_up_bytes[1] == 0 && r.tier_down_bytes[1] == 0);
    CHECK(r.rtt_mean > 0 && r.rtt_mean <= r.rtt_max);
    CHECK_EQ_U(r.agg_allocations, 32);
    CHECK_EQ_U(r.agg_reclaimed, 0);
    CHECK(r.partial_slot_time > 0 && r.partial_slot_time <= r.slot_time);
}

/* A tap sees every Arbor packet as ARB_SIM_ARBOR, with its header, and
 * nothing else: a collective alone on the fabric sends no RoCE packet. */
TEST(taps_see_arbor_packets_as_their_kind)
{
    struct run x = {"star:4", ARB_COLL_ALLREDUCE, 4, 64 * 1024, ARB_DTYPE_F32, 0, 0, 0, 0, 0, 0};
    arb_sim_arbor_result r;
    arb_sim_stats st;
    struct kinds k;
    memset(&k, 0, sizeof k);
    g_kinds = &k;
    int rc = run(&x, &r, &st);
    g_kinds = NULL;
    if (rc < 0) return;
    CHECK(k.by_kind[ARB_SIM_ARBOR] > 0);
    CHECK_EQ_U(k.headers, k.by_kind[ARB_SIM_ARBOR]);
    CHECK_EQ_U(k.header_mismatch, 0);
    for (int kind = 0; kind <= ARB_SIM_ARBOR + 1; kind++)
        if (kind != ARB_SIM_ARBOR) CHECK_EQ_U(k.by_kind[kind], 0);
}

TEST(rank_skew)
{
    /* lag: rank r handles every packet r x 2 us late; values stay exact and
     * slots stay partially filled for about the spread (3 x 2 us) each */
    struct run x = {"star:4", ARB_COLL_ALLREDUCE, 4, 1 << 20, ARB_DTYPE_I32, 1, 0, 0, 0, 0, 0};
    arb_sim_arbor_result r0, r1;
    arb_sim_stats st;
    if (run(&x, &r0, &st) < 0) return;
    check_good(&x, &r0, &st);
    g_skew = 2 * ARB_PS_PER_US;
    g_skew_mode = 2;
    if (run(&x, &r1, &st) < 0) return;
    check_good(&x, &r1, &st);
    CHECK_EQ_U(r1.commits, r0.commits);
    CHECK(r1.partial_slot_time > r0.partial_slot_time);
    /* each aggregate waits for the last rank: at least 2 x 2 us per slot
     * (the responder's own rank does not contribute through the switch) */
    CHECK(r1.partial_slot_time >= r1.agg_aggregates * 4 * ARB_PS_PER_US);
    CHECK(r1.cct > r0.cct);
    /* start skew, linear and random: complete and exact, the last start delays the end */
    g_skew_mode = 0;
    if (run(&x, &r1, &st) < 0) return;
    check_good(&x, &r1, &st);
    CHECK(r1.cct >= r0.cct);
    g_skew_mode = 1;
    g_skew = 50 * ARB_PS_PER_US;
    if (run(&x, &r1, &st) < 0) return;
    check_good(&x, &r1, &st);
    g_skew = 0;
    g_skew_mode = 0;
}

TEST(every_collective_both_modes)
{
    static const char *const topos[] = {"star:4", "leafspine:2,2,2", "pgft:3;2,2,2;1,2,2;1,1,1"};
    static const uint32_t n_of[] = {4, 4, 8};
    for (int ti = 0; ti < 3; ti++)
        for (int coll = 0; coll < ARB_PLAN_COLL_COUNT; coll++)
            for (int values = 0; values < 2; values++) {
                struct run x = {
                    topos[ti], (arb_coll)coll, n_of[ti], 100000, ARB_DTYPE_I32, values, 0, 0, 0, 0,
                    0};
                arb_sim_arbor_result r;
                arb_sim_stats st;
                memset(&r, 0, sizeof r);
                if (run(&x, &r, &st) < 0) return;
                check_good(&x, &r, &st);
                CHECK_EQ_U(r.repair_credits, 0);
                if (TEST_FAILING()) return;
            }
}

TEST(dtypes_and_two_ranks)
{
    for (int dt = 0; dt < ARB_DTYPE_COUNT; dt++) {
        struct run x = {
            "leafspine:2,2,2", ARB_COLL_ALLREDUCE, 4, 96 * 1024, (arb_dtype)dt, 1, 0, 0, 0, 0, 0};
        arb_sim_arbor_result r;
        arb_sim_stats st;
        if (run(&x, &r, &st) < 0) return;
        check_good(&x, &r, &st);
    }
    struct run x = {"star:4", ARB_COLL_ALLREDUCE, 2, 64 * 1024, ARB_DTYPE_F32, 1, 0, 0, 0, 0, 0};
    arb_sim_arbor_result r;
    arb_sim_stats st;
    if (run(&x, &r, &st) < 0) return;
    check_good(&x, &r, &st);
    CHECK(r.agg_passthrough > 0);
    CHECK_EQ_U(r.agg_aggregates, 0);
    /* two subchannels, odd payload */
    struct run y = {
        "leafspine:2,2,2", ARB_COLL_ALLREDUCE, 4, 50000, ARB_DTYPE_F32, 1, 0, 1000, 2, 0, 0};
    if (run(&y, &r, &st) < 0) return;
    check_good(&y, &r, &st);
}

TEST(deterministic)
{
    struct run x = {
        "leafspine:2,2,2", ARB_COLL_ALLREDUCE, 4, 200000, ARB_DTYPE_F32, 1, 0.01, 0, 0, 0, 7};
    arb_sim_arbor_result a, b;
    arb_sim_stats sa, sb;
    if (run(&x, &a, &sa) < 0 || run(&x, &b, &sb) < 0) return;
    CHECK_EQ_U(a.finish, b.finish);
    CHECK_EQ_U(a.pkts, b.pkts);
    CHECK_EQ_U(a.repair_credits, b.repair_credits);
    CHECK_EQ_U(sa.events, sb.events);
    CHECK_EQ_U(sa.lost, sb.lost);
}

TEST(loss_repairs)
{
    /* 0.1% on 2 MB: about 5,000 packet-hops, so some are lost */
    static const double loss[] = {0.001, 0.01, 0.05};
    static const uint64_t bytes[] = {2000000, 400000, 400000};
    for (int i = 0; i < 3; i++)
        for (int values = 0; values < 2; values++) {
            struct run x = {"leafspine:2,2,2",
                            ARB_COLL_ALLREDUCE,
                            4,
                            bytes[i],
                            ARB_DTYPE_I64,
                            values,
                            loss[i],
                            0,
                            0,
                            0,
                            3};
            arb_sim_arbor_result r;
            arb_sim_stats st;
            if (run(&x, &r, &st) < 0) return;
            check_good(&x, &r, &st);
            CHECK(st.lost > 0);
            CHECK(r.repair_credits > 0 || r.tail_replays > 0 || r.registers > 12);
        }
    for (int coll = 0; coll < ARB_PLAN_COLL_COUNT; coll++) {
        struct run x = {"star:4", (arb_coll)coll, 4, 300000, ARB_DTYPE_I32, 1, 0.02, 0, 0, 0, 5};
        arb_sim_arbor_result r;
        arb_sim_stats st;
        if (run(&x, &r, &st) < 0) return;
        check_good(&x, &r, &st);
    }
}

/* A good run of x with seeded credits on or off: its finish, or 0 when it
 * could not run. */
static uint64_t seeded_run(const struct run *x, int seeded)
{
    arb_sim_arbor_result r;
    arb_sim_stats st;
    g_seeded = seeded;
    int rc = run(x, &r, &st);
    g_seeded = 0;
    if (rc < 0) return 0;
    check_good(x, &r, &st);
    return r.finish;
}

/* Seeded credits (arbor.switch_results): a one-offset AllReduce's result
 * comes down from the switch that completes it, exact, on one switch and
 * on trees of two and three aggregating levels, header-only and with
 * values, loss-free and at 5% loss; loss-free it ends sooner than without
 * them (the responder's pass is off the path) and in the same time in both
 * modes (the seed stands for its bytes). Longer messages are untouched. */
TEST(switch_results_exact_and_sooner)
{
    static const char *const topos[] = {"star:4", "leafspine:2,2,2", "pgft:3;2,2,2;1,2,2;1,1,1"};
    static const uint32_t n_of[] = {4, 4, 8};
    g_early = 1; /* as the runtime: the difference is the switch's results alone */
    for (int ti = 0; ti < 3 && !TEST_FAILING(); ti++) {
        uint64_t fin[2][2] = {{0}};
        for (int seeded = 0; seeded < 2; seeded++)
            for (int values = 0; values < 2; values++) {
                struct run x = {topos[ti],
                                ARB_COLL_ALLREDUCE,
                                n_of[ti],
                                4096,
                                ARB_DTYPE_I32,
                                values,
                                0,
                                0,
                                0,
                                0,
                                0};
                fin[seeded][values] = seeded_run(&x, seeded);
                x.loss = 0.05;
                x.seed = 11;
                seeded_run(&x, seeded);
            }
        CHECK(fin[1][0] > 0 && fin[1][0] < fin[0][0]);
        CHECK_EQ_U(fin[1][0], fin[1][1]);
        CHECK_EQ_U(fin[0][0], fin[0][1]);
    }
    /* several offsets a channel: nothing seeds, the same run */
    struct run x = {
        "leafspine:2,2,2", ARB_COLL_ALLREDUCE, 4, 200000, ARB_DTYPE_I32, 1, 0, 0, 0, 0, 0};
    uint64_t f0 = seeded_run(&x, 0);
    CHECK(f0 > 0);
    CHECK_EQ_U(seeded_run(&x, 1), f0);
    g_early = 0;
}

TEST(small_slot_pool_misses)
{
    /* 8 slots for 4 channels x window 16: rotation steals live slots */
    struct run x = {"star:4", ARB_COLL_ALLREDUCE, 4, 1 << 20, ARB_DTYPE_I32, 1, 0, 0, 0, 8, 0};
    arb_sim_arbor_result r;
    arb_sim_stats st;
    if (run(&x, &r, &st) < 0) return;
    check_good(&x, &r, &st);
    CHECK(r.agg_miss > 0);
    CHECK(r.repair_commits > 0);
}

TEST(dynamic_subchannels_avoid_a_failed_tree)
{
    /* leafspine:4,2,2 (hosts 0-7, leaves 8-11, spines 12 and 13), two
     * subchannels: every channel has one tree on each spine. Spine 12 fails
     * after planning: every channel's tree there goes silent, its credits
     * are lost by timer, the tree is declared dead and its offsets are
     * credited again on the live tree, in the network (no bypass repair).
     * Both selections then send everything down the live tree but for
     * probes (static selection used to keep every other offset's first
     * credit on the dead tree and recover each on the live one): both
     * finish with exact values. */
    /* 4 MiB: 64 offsets a channel, long enough for every verdict (at 1 MiB
     * a channel may finish on the live tree before its dead one's) */
    struct run x = {
        "leafspine:4,2,2", ARB_COLL_ALLREDUCE, 8, 1 << 22, ARB_DTYPE_I32, 1, 0, 0, 2, 0, 0};
    arb_sim_arbor_result r;
    arb_sim_stats st;
    g_dynamic = 1;
    if (run(&x, &r, &st) < 0) goto out;
    check_good(&x, &r, &st); /* healthy: dynamic works as static does */
    CHECK_EQ_U(r.dead_subchannels, 0);
    CHECK_EQ_U(r.losses_timer + r.losses_order, 0);
    g_fail_node = 12;
    if (run(&x, &r, &st) < 0) goto out;
    check_good(&x, &r, &st);
    CHECK_EQ_U(r.dead_subchannels, 8); /* every channel lost its tree on spine 12 */
    CHECK_EQ_U(r.deaths, 8);
    CHECK(r.losses_timer > 0 && r.retries > 0);
    CHECK_EQ_U(r.repair_commits, 0);
    g_dynamic = 0;
    if (run(&x, &r, &st) < 0) goto out;
    check_good(&x, &r, &st);
    CHECK_EQ_U(r.deaths, 8);
    CHECK_EQ_U(r.repair_commits, 0);
    CHECK(r.probes > 0);
    /* not every even offset's first credit went down the dead tree (8
     * channels of 64 offsets: 256 of them, each credited again, when static
     * selection kept them there) */
    CHECK(r.retries < 256);
out:
    g_dynamic = 0;
    g_fail_node = 0;
    g_fail_rc = 0;
}

TEST(a_run_that_cannot_finish_names_what_was_lost)
{
    /* leaf 8 of leafspine:4,2,2 (above hosts 0 and 1) fails after planning:
     * no tree can reach hosts 0 and 1. The run ends with ARB_ETIMEDOUT
     * within the recovery's bounds, and the failure names a channel, an
     * offset or END wait, and hosts among 0 and 1 as the ones that never
     * answered (or a requester on them that got no answer). */
    struct run x = {
        "leafspine:4,2,2", ARB_COLL_ALLREDUCE, 8, 1 << 16, ARB_DTYPE_I32, 1, 0, 0, 1, 0, 0};
    arb_sim_arbor_result r;
    arb_sim_stats st;
    g_fail_node = 8;
    g_fail_rc = ARB_ETIMEDOUT;
    memset(&g_failure, 0, sizeof g_failure);
    int rc = run(&x, &r, &st);
    CHECK_EQ_I(rc, 0); /* the expected ETIMEDOUT */
    CHECK(!r.done);
    CHECK_EQ_U(r.invariant_errors - r.inv_missing - r.inv_conservation, 0);
    CHECK_EQ_I(g_failure.failed, 1);
    CHECK(g_failure.n_missing >= 1);
    for (uint32_t k = 0; k < g_failure.n_missing && k < 16; k++)
        CHECK(g_failure.missing_hosts[k] <= 1 || g_failure.responder_host <= 1);
    CHECK(g_failure.channel < 8);
    g_fail_node = 0;
    g_fail_rc = 0;
}

/* ---- several jobs ---------------------------------------------------- */

struct jobs {
    const char *topo;
    uint32_t n_jobs, ranks; /* job k: hosts first[k], first[k] + 1, ... */
    const uint32_t *first;
    uint64_t bytes;
    int values;
    uint32_t slots;
    const arb_time *start;     /* per job (NULL: all at 0) */
    uint32_t partitions;       /* arb_sim_arbor_config.partitions */
    const uint64_t *job_bytes; /* per job (NULL: bytes) */
    const uint32_t *job_ranks; /* per job (NULL: ranks) */
};

/* Run the jobs to the end: each job's figures in per[k], the whole in *all. */
static int run_jobs(const struct jobs *x, arb_sim_arbor_result *per, arb_sim_arbor_result *all)
{
    arb_topo *t = NULL;
    char err[256];
    CHECK_EQ_I(arb_topo_new(&t, x->topo, NULL, err, sizeof err), 0);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = test_route;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_plan *p[8] = {NULL};
    int rc = s ? 0 : ARB_ENOMEM;
    for (uint32_t k = 0; k < x->n_jobs && rc == 0; k++) {
        uint32_t ranks[256], nr = x->job_ranks ? x->job_ranks[k] : x->ranks;
        for (uint32_t r = 0; r < nr; r++)
            ranks[r] = x->first[k] + r;
        arb_plan_config pc;
        arb_plan_config_default(&pc);
        pc.ranks = ranks;
        pc.n_ranks = nr;
        pc.bytes = x->job_bytes ? x->job_bytes[k] : x->bytes;
        pc.dtype = ARB_DTYPE_I32;
        rc = arb_topo_plan(&p[k], t, &pc, err, sizeof err);
        CHECK_EQ_I(rc, 0);
        arb_sim_arbor_config ac;
        arb_sim_arbor_config_default(&ac);
        ac.plan = p[k];
        ac.values = x->values;
        ac.wire_check = 1;
        ac.ep.timeout = 200 * ARB_PS_PER_US;
        ac.ep.retry = 100 * ARB_PS_PER_US;
        if (x->slots) ac.slots = x->slots;
        if (x->start) ac.start = x->start[k];
        ac.partitions = x->partitions;
        if (rc == 0) rc = arb_sim_arbor_add(s, &ac);
        CHECK_EQ_I(rc, (int)k); /* the job's index */
        if (rc >= 0) rc = 0;
    }
    if (rc == 0) {
        CHECK_EQ_I(arb_sim_arbor_jobs(s), (int)x->n_jobs);
        rc = arb_sim_run(s, ARB_PS_PER_S);
        CHECK_EQ_I(rc, 0);
        for (uint32_t k = 0; k < x->n_jobs; k++)
            CHECK_EQ_I(arb_sim_arbor_job_result(s, (int)k, &per[k]), 0);
        CHECK_EQ_I(arb_sim_arbor_job_result(s, (int)x->n_jobs, &per[0]), ARB_EINVAL);
        CHECK_EQ_I(arb_sim_arbor_job_result(s, -1, &per[0]), ARB_EINVAL);
        if (x->n_jobs) CHECK_EQ_I(arb_sim_arbor_job_result(s, 0, &per[0]), 0);
        CHECK_EQ_I(arb_sim_arbor_result_get(s, all), 0);
        uint32_t done = 0, ranks = 0, want = 0;
        for (uint32_t k = 0; k < x->n_jobs; k++)
            want += x->job_ranks ? x->job_ranks[k] : x->ranks;
        CHECK_EQ_I(arb_sim_arbor_progress(s, &done, &ranks), 0);
        CHECK_EQ_U(ranks, want);
        CHECK_EQ_U(done, all->ranks_done);
        CHECK_EQ_I(arb_sim_arbor_done(s), all->done);
        arb_sim_stats st;
        arb_sim_get_stats(s, &st);
        CHECK_EQ_U(st.in_flight, 0);
    }
    arb_sim_free(s);
    for (uint32_t k = 0; k < 8; k++)
        arb_plan_free(p[k]);
    arb_topo_free(t);
    return TEST_FAILING() ? -1 : 0;
}

static void check_job(const arb_sim_arbor_result *r, uint32_t ranks, int values)
{
    CHECK(r->done);
    CHECK_EQ_U(r->ranks_done, ranks);
    CHECK_EQ_U(r->invariant_errors, 0);
    CHECK_EQ_U(r->wire_errors, 0);
    if (values) CHECK_EQ_I(r->correct, 1);
}

TEST(two_jobs_on_disjoint_hosts)
{
    static const uint32_t first[] = {0, 4};
    struct jobs x = {"star:8", 2, 4, first, 1 << 20, 1, 0, NULL, 0, NULL, NULL};
    arb_sim_arbor_result per[2], all;
    if (run_jobs(&x, per, &all) < 0) return;
    check_job(&per[0], 4, 1);
    check_job(&per[1], 4, 1);
    check_job(&all, 8, 1);
    CHECK(per[0].checked > 0 && per[1].checked > 0);
    CHECK_EQ_U(all.commits, per[0].commits + per[1].commits);
    CHECK_EQ_U(all.pkts, per[0].pkts + per[1].pkts);
    CHECK_EQ_U(all.bytes, 2u << 20);
    CHECK(all.goodput_gbps == per[0].goodput_gbps + per[1].goodput_gbps);
    arb_time first_start = per[0].start < per[1].start ? per[0].start : per[1].start;
    arb_time last = per[0].finish > per[1].finish ? per[0].finish : per[1].finish;
    CHECK_EQ_U(all.cct, last - first_start);
    /* one switch, one pool: both jobs' slots in it, counted once */
    CHECK_EQ_U(all.agg_allocations, per[0].agg_allocations);
    CHECK_EQ_U(all.peak_live_slots, per[1].peak_live_slots);
    /* eight ranks on four hosts' worth of channels each: 4 x 32 offsets per job */
    CHECK_EQ_U(per[0].commits, 4 * 32);
    /* a leaf-spine with a job per leaf, and eight jobs of two ranks on star:16 */
    static const uint32_t f8[] = {0, 2, 4, 6, 8, 10, 12, 14};
    struct jobs y = {"star:16", 8, 2, f8, 256 * 1024, 0, 0, NULL, 0, NULL, NULL};
    arb_sim_arbor_result per8[8];
    if (run_jobs(&y, per8, &all) < 0) return;
    for (int k = 0; k < 8; k++)
        check_job(&per8[k], 2, 0);
    check_job(&all, 16, 0);
}

TEST(a_neighbour_on_other_switches_changes_nothing)
{
    /* leafspine:2,4,2: a job on each leaf aggregates at its leaf alone */
    static const uint32_t first[] = {0, 4};
    struct jobs alone = {"leafspine:2,4,2", 1, 4, first, 1 << 20, 1, 0, NULL, 0, NULL, NULL};
    struct jobs both = {"leafspine:2,4,2", 2, 4, first, 1 << 20, 1, 0, NULL, 0, NULL, NULL};
    arb_sim_arbor_result a[1], aw, b[2], bw;
    if (run_jobs(&alone, a, &aw) < 0 || run_jobs(&both, b, &bw) < 0) return;
    check_job(&b[0], 4, 1);
    check_job(&b[1], 4, 1);
    CHECK(memcmp(&a[0], &aw, sizeof aw) == 0); /* one job: the whole is the job */
    CHECK_EQ_U(b[0].finish, a[0].finish);
    CHECK_EQ_U(b[0].cct, a[0].cct);
    CHECK(b[0].goodput_gbps == a[0].goodput_gbps);
    CHECK_EQ_U(b[0].pkts, a[0].pkts);
    CHECK_EQ_U(b[0].wire_bytes, a[0].wire_bytes);
    CHECK_EQ_U(b[0].peak_live_slots, a[0].peak_live_slots);
    CHECK_EQ_U(b[0].rtt_mean, a[0].rtt_mean);
    CHECK(memcmp(&b[0], &a[0], sizeof a[0]) == 0);
    /* the two jobs are mirror images */
    CHECK_EQ_U(b[1].cct, b[0].cct);
}

TEST(jobs_on_one_switch_share_its_pool)
{
    /* star:8, two jobs of 4 ranks: 4 channels x window 4 = 16 slots live per
     * job at most. A pool of 24 holds one job, not two: the rotation takes
     * live slots, AGG_MISS and repairs follow, and the values stay exact. */
    static const uint32_t first[] = {0, 4};
    struct jobs one = {"star:8", 1, 4, first, 1 << 20, 1, 24, NULL, 0, NULL, NULL};
    struct jobs two = {"star:8", 2, 4, first, 1 << 20, 1, 24, NULL, 0, NULL, NULL};
    arb_sim_arbor_result a[1], aw, b[2], bw;
    if (run_jobs(&one, a, &aw) < 0 || run_jobs(&two, b, &bw) < 0) return;
    check_job(&aw, 4, 1);
    check_job(&bw, 8, 1);
    CHECK(aw.peak_live_slots <= 16);
    CHECK_EQ_U(aw.agg_reclaimed, 0);
    CHECK(bw.peak_live_slots > aw.peak_live_slots); /* both jobs' slots at once */
    CHECK(bw.agg_reclaimed > 0);
    CHECK(bw.agg_miss > 0 && bw.repair_commits > 0);
    CHECK(bw.agg_allocations >= 2 * aw.agg_allocations);
    /* the same with 1024 slots: no contention */
    two.slots = 0;
    if (run_jobs(&two, b, &bw) < 0) return;
    check_job(&bw, 8, 1);
    CHECK_EQ_U(bw.agg_reclaimed, 0);
    CHECK_EQ_U(bw.repair_commits, 0);
    CHECK(bw.peak_live_slots > aw.peak_live_slots);
}

TEST(jobs_deterministic_and_refused)
{
    static const uint32_t first[] = {0, 4, 8, 12};
    struct jobs x = {"leafspine:4,4,2", 4, 4, first, 512 * 1024, 0, 32, NULL, 0, NULL, NULL};
    arb_sim_arbor_result a[4], aw, b[4], bw;
    if (run_jobs(&x, a, &aw) < 0 || run_jobs(&x, b, &bw) < 0) return;
    check_job(&aw, 16, 0);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(memcmp(&aw, &bw, sizeof aw) == 0);
    /* a pool configured twice: refused; a host in two jobs: its second job's
     * channels take the next UDP port */
    arb_topo *t = NULL;
    char err[256];
    CHECK_EQ_I(arb_topo_new(&t, "star:8", NULL, err, sizeof err), 0);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = test_route;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    uint32_t r0[] = {0, 1, 2, 3}, r1[] = {3, 4, 5, 6}, r2[] = {4, 5, 6, 7};
    arb_plan *p[3] = {NULL};
    const uint32_t *rk[3] = {r0, r1, r2};
    for (int k = 0; k < 3; k++) {
        arb_plan_config pc;
        arb_plan_config_default(&pc);
        pc.ranks = rk[k];
        pc.n_ranks = 4;
        pc.bytes = 64 * 1024;
        CHECK_EQ_I(arb_topo_plan(&p[k], t, &pc, err, sizeof err), 0);
    }
    arb_sim_arbor_config ac;
    arb_sim_arbor_config_default(&ac);
    ac.plan = p[0];
    ac.recredit_min = ARB_EP_TIMER_MIN - 1;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), ARB_EINVAL); /* a floor below 1 us */
    ac.recredit_min = ac.recredit_max + 1;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), ARB_EINVAL); /* a floor above the ceiling */
    ac.recredit_min = ARB_AGG_RECREDIT_MIN_DEFAULT;
    ac.recredit_max = ARB_PS_PER_S + 1;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), ARB_EINVAL); /* a ceiling above 1 s */
    ac.recredit_max = ARB_AGG_RECREDIT_MAX_DEFAULT;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), 0);
    ac.plan = p[2];
    ac.slots = 512;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), ARB_EINVAL); /* another pool size */
    ac.slots = 1024;
    ac.values = 1;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), ARB_EINVAL); /* another mode */
    ac.values = 0;
    ac.partitions = 2;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), ARB_EINVAL); /* another partition */
    ac.partitions = 0;
    ac.recredit_min *= 2;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), ARB_EINVAL); /* another re-credit floor */
    ac.recredit_min /= 2;
    ac.recredit_order = 0;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), ARB_EINVAL); /* re-credits by the timer only */
    ac.recredit_order = 1;
    ac.skew = 1000, ac.skew_random = 2;
    ac.plan = p[1];
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), ARB_EINVAL); /* lag on host 3, which job 0 has */
    ac.skew = 0, ac.skew_random = 0;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), 1);
    ac.plan = p[2];
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), 2);
    CHECK_EQ_I(arb_sim_arbor_jobs(s), 3);
    CHECK_EQ_I(arb_sim_run(s, ARB_PS_PER_S), 0);
    CHECK(arb_sim_arbor_done(s));
    arb_sim_arbor_result r[3];
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_I(arb_sim_arbor_job_result(s, k, &r[k]), 0);
        CHECK_EQ_U(r[k].invariant_errors, 0);
    }
    /* job 1 shares host 3 with job 0, job 2 hosts 4-6 with job 1 */
    CHECK_EQ_U(r[0].port, 17470);
    CHECK_EQ_U(r[1].port, 17471);
    CHECK_EQ_U(r[2].port, 17472);
    arb_sim_free(s);
    for (int k = 0; k < 3; k++)
        arb_plan_free(p[k]);
    arb_topo_free(t);
}

/* Two jobs on the same four hosts: their channels are told apart by UDP
 * port, both results are exact, and they share the host links: each host
 * sends (n-1)/n of a job's buffer up (its contributions to the other
 * ranks' channels) for each job, so the later finish is at least twice
 * 3/4 x 1 MiB at 100 Gb/s (80 ps a byte), and later than one job alone. */
TEST(jobs_on_the_same_hosts)
{
    static const uint32_t first[] = {0, 0};
    struct jobs one = {"star:4", 1, 4, first, 1 << 20, 1, 0, NULL, 0, NULL, NULL};
    struct jobs two = {"star:4", 2, 4, first, 1 << 20, 1, 0, NULL, 0, NULL, NULL};
    arb_sim_arbor_result a[1], aw, b[2], bw;
    if (run_jobs(&one, a, &aw) < 0 || run_jobs(&two, b, &bw) < 0) return;
    check_job(&b[0], 4, 1);
    check_job(&b[1], 4, 1);
    check_job(&bw, 8, 1);
    CHECK(b[0].checked > 0 && b[1].checked > 0);
    CHECK_EQ_U(b[0].port, 17470);
    CHECK_EQ_U(b[1].port, 17471);
    arb_time last = b[0].finish > b[1].finish ? b[0].finish : b[1].finish;
    CHECK(last >= 2 * (uint64_t)(3 * (1 << 20) / 4) * 80);
    CHECK(last > aw.finish);
    CHECK_EQ_U(b[0].commits, aw.commits);
}

/* Staggered starts and sizes: a job starts when it says, and its JCT (cct)
 * is at least its bytes over its bottleneck: (n-1)/n of its buffer up each
 * host link at 100 Gb/s. */
TEST(staggered_jobs_of_several_sizes)
{
    static const uint32_t first[] = {0, 2, 8};
    static const uint32_t nr[] = {2, 6, 4};
    static const uint64_t bytes[] = {1 << 20, 256 * 1024, 512 * 1024};
    static const arb_time start[] = {0, 30 * ARB_PS_PER_US, 5 * ARB_PS_PER_US};
    struct jobs x = {"star:12", 3, 0, first, 0, 0, 0, start, 0, bytes, nr};
    arb_sim_arbor_result per[3], all;
    if (run_jobs(&x, per, &all) < 0) return;
    for (int k = 0; k < 3; k++) {
        check_job(&per[k], nr[k], 0);
        CHECK_EQ_U(per[k].start, start[k]);
        CHECK_EQ_U(per[k].bytes, bytes[k]);
        CHECK_EQ_U(per[k].cct, per[k].finish - per[k].start);
        CHECK(per[k].cct >= bytes[k] * (nr[k] - 1) / nr[k] * 80);
        /* and at most 99 Gb/s of payload: the frame's headers */
        CHECK(per[k].goodput_gbps < 99.1);
    }
    CHECK_EQ_U(all.start, 0);
    CHECK_EQ_U(all.ranks, 12);
}

/* Deferred jobs: each rank starts when entered; its completion is reported
 * once, after all of the group has entered (an AllReduce needs every
 * contribution), at the time the job's figures say; a job added and
 * entered from inside the callback runs too, on the same hosts. */
struct deferred {
    arb_sim_arbor_config ac;
    arb_plan *second;
    int n_reports[2][4];
    arb_time at[2][4];
    int second_job;
    arb_time second_start;
};

static void on_rank(void *ctx, arb_sim *s, int job, uint32_t rank, arb_time now)
{
    struct deferred *d = ctx;
    CHECK(job >= 0 && job < 2 && rank < 4);
    if (job < 0 || job > 1 || rank > 3) return;
    d->n_reports[job][rank]++;
    d->at[job][rank] = now;
    if (job == 0 && d->second_job < 0) { /* the first rank done calls the next collective */
        arb_sim_arbor_config ac = d->ac;
        ac.plan = d->second;
        d->second_job = arb_sim_arbor_add(s, &ac);
        CHECK_EQ_I(d->second_job, 1);
        d->second_start = now;
        for (uint32_t r = 0; r < 4 && d->second_job == 1; r++)
            CHECK_EQ_I(arb_sim_arbor_enter(s, 1, r, now + r * ARB_PS_PER_US), 0);
    }
}

TEST(deferred_jobs_enter_and_report)
{
    arb_topo *t = NULL;
    char err[256];
    REQUIRE_EQ_I(arb_topo_new(&t, "star:4", NULL, err, sizeof err), 0);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = test_route;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    uint32_t ranks[4] = {0, 1, 2, 3};
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.ranks = ranks;
    pc.n_ranks = 4;
    pc.bytes = 256 * 1024;
    pc.dtype = ARB_DTYPE_I32;
    arb_plan *p = NULL;
    static struct deferred d;
    memset(&d, 0, sizeof d);
    d.second_job = -1;
    REQUIRE_EQ_I(arb_topo_plan(&p, t, &pc, err, sizeof err), 0);
    pc.coll = ARB_COLL_BROADCAST;
    REQUIRE_EQ_I(arb_topo_plan(&d.second, t, &pc, err, sizeof err), 0);
    arb_sim_arbor_config_default(&d.ac);
    d.ac.plan = p;
    d.ac.values = 1;
    d.ac.deferred = 1;
    d.ac.on_rank_done = on_rank;
    d.ac.rank_ctx = &d;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &d.ac), 0);
    static const arb_time enter[4] = {0, 10 * ARB_PS_PER_US, 20 * ARB_PS_PER_US,
                                      50 * ARB_PS_PER_US};
    for (uint32_t r = 0; r < 4; r++)
        CHECK_EQ_I(arb_sim_arbor_enter(s, 0, r, enter[r]), 0);
    CHECK_EQ_I(arb_sim_arbor_enter(s, 0, 2, 0), ARB_EINVAL); /* entered already */
    CHECK_EQ_I(arb_sim_arbor_enter(s, 0, 4, 0), ARB_EINVAL); /* no such rank */
    CHECK_EQ_I(arb_sim_arbor_enter(s, 1, 0, 0), ARB_EINVAL); /* no such job */
    CHECK_EQ_I(arb_sim_run(s, ARB_PS_PER_S), 0);
    CHECK(arb_sim_arbor_done(s));
    REQUIRE_EQ_I(d.second_job, 1);
    arb_sim_arbor_result r[2];
    for (int k = 0; k < 2; k++) {
        REQUIRE_EQ_I(arb_sim_arbor_job_result(s, k, &r[k]), 0);
        check_job(&r[k], 4, 1);
        arb_time last = 0;
        for (int x = 0; x < 4; x++) {
            CHECK_EQ_I(d.n_reports[k][x], 1);
            if (d.at[k][x] > last) last = d.at[k][x];
        }
        CHECK_EQ_U(last, r[k].finish);
    }
    CHECK_EQ_U(r[0].start, 0);
    for (int x = 0; x < 4; x++)
        CHECK(d.at[0][x] >= enter[3]);
    CHECK_EQ_U(r[1].start, d.second_start);
    CHECK_EQ_U(r[1].port, 17471);
    /* a job that is not deferred cannot be entered */
    arb_sim_arbor_config ac = d.ac;
    ac.deferred = 0;
    ac.on_rank_done = NULL;
    REQUIRE_EQ_I(arb_sim_arbor_add(s, &ac), 2);
    CHECK_EQ_I(arb_sim_arbor_enter(s, 2, 0, 0), ARB_EINVAL);
    arb_sim_free(s);
    arb_plan_free(p);
    arb_plan_free(d.second);
    arb_topo_free(t);
}

/* A switch's pool of 16 slots, two jobs of 4 channels x window 4 (16 credits
 * each at most). Shared, job 0 starts alone and takes more than half of the
 * pool; cut into two static parts of 8, no job ever holds more than 8, and
 * the results stay exact. */
TEST(static_partition_caps_each_job)
{
    static const uint32_t first[] = {0, 4};
    static const arb_time start[] = {0, 40 * ARB_PS_PER_US};
    struct jobs shared = {"star:8", 2, 4, first, 1 << 20, 1, 16, start, 0, NULL, NULL};
    struct jobs parts = {"star:8", 2, 4, first, 1 << 20, 1, 16, start, 2, NULL, NULL};
    arb_sim_arbor_result a[2], aw, b[2], bw;
    if (run_jobs(&shared, a, &aw) < 0 || run_jobs(&parts, b, &bw) < 0) return;
    for (int k = 0; k < 2; k++) {
        check_job(&a[k], 4, 1);
        check_job(&b[k], 4, 1);
        CHECK(b[k].peak_job_slots <= 8);
        CHECK(b[k].peak_live_slots <= 8); /* its part of the pool */
        CHECK(a[k].peak_job_slots <= 16);
    }
    CHECK(a[0].peak_job_slots > 8); /* borrowing: more than a static share */
    CHECK(bw.peak_job_slots <= 8);
    CHECK(aw.peak_live_slots <= 16);
    /* shared, one job alone has its window of slots; with a part of 8 it does not */
    CHECK(b[0].agg_reclaimed > 0 && b[0].repair_commits > 0);
}

/* With the pools cut in parts (two jobs, partitions 2: job k in part k),
 * arb_sim_arbor_slots counts every part of every switch: mid-run, its
 * live slots are what rebooting every switch then loses (the reboot
 * empties every part), and the most at one switch is at most the sum. It
 * read one part per node, by the wrong index, and said 0 before. */
TEST(slots_count_every_part)
{
    arb_topo *t = NULL;
    char err[256];
    REQUIRE_EQ_I(arb_topo_new(&t, "star:8", NULL, err, sizeof err), 0);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = test_route;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_plan *p[2] = {NULL, NULL};
    for (uint32_t k = 0; k < 2; k++) {
        uint32_t ranks[4];
        for (uint32_t r = 0; r < 4; r++)
            ranks[r] = 4 * k + r;
        arb_plan_config pc;
        arb_plan_config_default(&pc);
        pc.ranks = ranks;
        pc.n_ranks = 4;
        pc.bytes = 1 << 20;
        CHECK_EQ_I(arb_topo_plan(&p[k], t, &pc, err, sizeof err), 0);
        arb_sim_arbor_config ac;
        arb_sim_arbor_config_default(&ac);
        ac.plan = p[k];
        ac.partitions = 2;
        CHECK_EQ_I(p[k] ? arb_sim_arbor_add(s, &ac) : ARB_EINVAL, (int)k);
    }
    CHECK_EQ_I(arb_sim_run(s, 20 * ARB_PS_PER_US), 0);
    uint32_t live = 0, most = 0, sw = arb_topo_n_hosts(t);
    CHECK_EQ_I(arb_sim_arbor_slots(s, &live, &most), 0);
    CHECK(live > 0);
    CHECK(most <= live);
    int lost = arb_sim_arbor_reboot(s, sw); /* star: the one switch */
    CHECK_EQ_I(lost, (int)live);
    CHECK_EQ_U(most, live); /* one switch holds them all */
    arb_sim_free(s);
    arb_plan_free(p[0]);
    arb_plan_free(p[1]);
    arb_topo_free(t);
}

/* Read mid-run, with packets on the wires: every hop started counts as a
 * packet sent (those on a wire included), and every node's balance holds. */
/* Switches reboot mid-run (arb_sim_arbor_reboot): every switch's pools
 * emptied at once, then one spine again and again; what they held is
 * credited again and the results stay exact. The counters: no slot live
 * right after, resends only at or after a watch's time, every byte of the
 * buffer committed once by the end. */
TEST(reboots_lose_slots_results_exact)
{
    arb_topo *t = NULL;
    char err[256];
    CHECK_EQ_I(arb_topo_new(&t, "leafspine:2,4,2", NULL, err, sizeof err), 0);
    uint32_t ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.ranks = ranks;
    pc.n_ranks = 8;
    pc.bytes = 1 << 20;
    pc.dtype = ARB_DTYPE_I32;
    arb_plan *p = NULL;
    CHECK_EQ_I(arb_topo_plan(&p, t, &pc, err, sizeof err), 0);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = test_route;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_sim_arbor_counters c;
    CHECK_EQ_I(arb_sim_arbor_reboot(s, 8), ARB_EINVAL); /* no collective yet */
    CHECK_EQ_I(arb_sim_arbor_counters_get(s, &c), ARB_EINVAL);
    arb_sim_arbor_config ac;
    arb_sim_arbor_config_default(&ac);
    ac.plan = p;
    ac.values = 1;
    CHECK_EQ_I(s && p ? arb_sim_arbor_add(s, &ac) : ARB_EINVAL, 0);
    uint32_t first_sw = arb_topo_n_hosts(t), n_nodes = arb_topo_n_nodes(t), spine;
    REQUIRE_EQ_I(arb_topo_find(t, "L2.0", &spine), 0);
    CHECK_EQ_I(arb_sim_arbor_reboot(s, 0), ARB_EINVAL); /* a host */
    CHECK_EQ_I(arb_sim_arbor_reboot(s, n_nodes), ARB_EINVAL);
    CHECK_EQ_I(arb_sim_run(s, 20 * ARB_PS_PER_US), 0);
    uint32_t live, most;
    CHECK_EQ_I(arb_sim_arbor_slots(s, &live, &most), 0);
    CHECK(live > 0);
    int lost = 0;
    for (uint32_t n = first_sw; n < n_nodes; n++) {
        int k = arb_sim_arbor_reboot(s, n);
        CHECK(k >= 0);
        lost += k;
    }
    CHECK_EQ_I(lost, (int)live); /* every live slot was in some pool */
    CHECK_EQ_I(arb_sim_arbor_slots(s, &live, &most), 0);
    CHECK_EQ_U(live, 0);
    CHECK_EQ_I(arb_sim_arbor_watch(s, 20 * ARB_PS_PER_US), 0);
    for (arb_time at = 30 * ARB_PS_PER_US; !arb_sim_arbor_done(s) && at < ARB_PS_PER_S;
         at += 25 * ARB_PS_PER_US) {
        CHECK_EQ_I(arb_sim_run(s, at), 0);
        CHECK(arb_sim_arbor_reboot(s, spine) >= 0);
        if (TEST_FAILING()) break;
    }
    CHECK(arb_sim_arbor_done(s));
    arb_sim_arbor_result r;
    CHECK_EQ_I(arb_sim_arbor_result_get(s, &r), 0);
    CHECK_EQ_I(r.correct, 1);
    CHECK_EQ_U(r.invariant_errors, 0);
    CHECK(r.retries > 0);
    CHECK_EQ_I(arb_sim_arbor_counters_get(s, &c), 0);
    CHECK_EQ_U(c.committed_bytes, pc.bytes); /* each offset once */
    CHECK(c.resends > 0 && c.resent_bytes > 0);
    CHECK(c.resend_at != ARB_TIME_NEVER && c.resend_at >= 20 * ARB_PS_PER_US);
    arb_sim_free(s);
    arb_plan_free(p);
    arb_topo_free(t);
}

TEST(counts_hold_mid_run)
{
    arb_topo *t = NULL;
    char err[256];
    CHECK_EQ_I(arb_topo_new(&t, "leafspine:2,4,2", NULL, err, sizeof err), 0);
    uint32_t ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.ranks = ranks;
    pc.n_ranks = 8;
    pc.bytes = 1 << 20;
    arb_plan *p = NULL;
    CHECK_EQ_I(arb_topo_plan(&p, t, &pc, err, sizeof err), 0);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = test_route;
    cfg.loss = 0.001; /* lost packets are sent ones too */
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_sim_arbor_config ac;
    arb_sim_arbor_config_default(&ac);
    ac.plan = p;
    ac.ep.timeout = 200 * ARB_PS_PER_US;
    CHECK_EQ_I(s && p ? arb_sim_arbor_add(s, &ac) : ARB_EINVAL, 0);
    int seen_on_wire = 0;
    for (arb_time at = 7 * ARB_PS_PER_US + 333; s && !arb_sim_arbor_done(s) && at < ARB_PS_PER_S;
         at += 29 * ARB_PS_PER_US) {
        CHECK_EQ_I(arb_sim_run(s, at), 0);
        arb_sim_arbor_result r;
        arb_sim_stats st;
        CHECK_EQ_I(arb_sim_arbor_result_get(s, &r), 0);
        arb_sim_get_stats(s, &st);
        CHECK_EQ_U(r.inv_conservation, 0);
        CHECK_EQ_U(r.pkts, st.packet_hops);
        if (st.in_flight > 0) seen_on_wire = 1;
        if (TEST_FAILING()) break;
    }
    CHECK(seen_on_wire);
    CHECK(s && arb_sim_arbor_done(s));
    if (s) { /* at the end, with no queue drops: bytes queued per tier = bytes sent */
        arb_sim_arbor_result r;
        arb_sim_stats st;
        CHECK_EQ_I(arb_sim_arbor_result_get(s, &r), 0);
        arb_sim_get_stats(s, &st);
        CHECK(st.lost > 0);
        CHECK_EQ_U(st.drops, st.lost);
        uint64_t tiers = 0;
        for (int x = 0; x < 4; x++)
            tiers += r.tier_up_bytes[x] + r.tier_down_bytes[x];
        CHECK_EQ_U(tiers, r.wire_bytes);
    }
    arb_sim_free(s);
    arb_plan_free(p);
    arb_topo_free(t);
}

/* The ranks' completions reported (on_rank_done): how many, their times'
 * sum and the order they came in (a hash of (job, rank, time) in turn). */
static uint32_t g_ranks_done;
static arb_time g_done_sum;
static uint64_t g_done_order;

static void count_rank(void *ctx, arb_sim *s, int job, uint32_t rank, arb_time now)
{
    (void)ctx, (void)s;
    g_ranks_done++;
    g_done_sum += now;
    g_done_order = g_done_order * 1000003 + ((uint64_t)job << 40 ^ (uint64_t)rank << 32 ^ now);
}

/* A values AllReduce of two jobs over leafspine:4,4,2 in the local order,
 * whole (ops NULL) or as the one part of a partitioned run. */
static int run_local(const arb_sim_part_ops *ops, arb_sim_arbor_result *w, arb_sim_arbor_result *j1,
                     arb_time *done7, arb_time *resend)
{
    arb_topo *t = NULL;
    char err[256];
    if (arb_topo_new(&t, "leafspine:4,4,2", NULL, err, sizeof err) < 0) return -1;
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = test_route;
    cfg.local_order = 1;
    cfg.loss = 0.01;
    arb_sim *s = NULL;
    int rc = arb_sim_new(&s, t, &cfg);
    uint32_t *np = calloc(arb_topo_n_nodes(t), sizeof *np);
    if (rc == 0 && ops) rc = np ? arb_sim_partition(s, ops, np, err, sizeof err) : ARB_ENOMEM;
    arb_plan *p[2] = {NULL, NULL};
    uint32_t r0[] = {0, 1, 2, 3, 4, 5, 6, 7}, r1[] = {8, 9, 10, 11, 12, 13, 14, 15};
    arb_sim_arbor_config ac;
    arb_sim_arbor_config_default(&ac);
    ac.values = 1;
    ac.on_rank_done = count_rank;
    g_ranks_done = 0, g_done_sum = 0, g_done_order = 0;
    for (int k = 0; k < 2 && rc >= 0; k++) {
        arb_plan_config pc;
        arb_plan_config_default(&pc);
        pc.ranks = k ? r1 : r0;
        pc.n_ranks = 8;
        pc.bytes = 256 * 1024;
        rc = arb_topo_plan(&p[k], t, &pc, err, sizeof err);
        ac.plan = p[k];
        if (rc == 0) rc = arb_sim_arbor_add(s, &ac);
    }
    /* the first retry or repair credit: each part's, the earliest kept */
    if (rc >= 0) CHECK_EQ_I(arb_sim_arbor_watch(s, 0), 0);
    for (arb_time at = 0; rc >= 0 && !arb_sim_arbor_done(s) && at < ARB_PS_PER_S;)
        rc = arb_sim_run(s, at += 20 * ARB_PS_PER_US); /* in slices, as the scenario runner */
    if (rc >= 0) rc = arb_sim_arbor_result_get(s, w);
    if (rc >= 0) rc = arb_sim_arbor_job_result(s, 1, j1);
    if (rc >= 0) rc = arb_sim_arbor_rank(s, 0, 7, NULL, done7);
    arb_sim_arbor_counters c;
    if (rc >= 0) rc = arb_sim_arbor_counters_get(s, &c);
    if (rc >= 0) *resend = c.resend_at;
    arb_sim_free(s);
    for (int k = 0; k < 2; k++)
        arb_plan_free(p[k]);
    free(np);
    arb_topo_free(t);
    return rc < 0 ? rc : 0;
}

TEST(a_partitioned_run_of_one_part_is_the_whole_run)
{
    arb_sim_part_ops ops = {NULL, 0, 1, simkit_one_alltoall, simkit_one_reduce, simkit_one_reduce};
    arb_sim_arbor_result a, aj, b, bj;
    arb_time ta = 0, tb = 1, ra = 0, rb = 1;
    REQUIRE_EQ_I(run_local(NULL, &a, &aj, &ta, &ra), 0);
    uint32_t n_done = g_ranks_done;
    arb_time done_sum = g_done_sum;
    uint64_t done_order = g_done_order;
    REQUIRE_EQ_I(run_local(&ops, &b, &bj, &tb, &rb), 0);
    /* every rank's done reported once, at the same time, in the same order */
    CHECK_EQ_U(n_done, 16);
    CHECK_EQ_U(g_ranks_done, n_done);
    CHECK_EQ_U(g_done_sum, done_sum);
    CHECK_EQ_U(g_done_order, done_order);
    CHECK(a.done);
    CHECK_EQ_I(a.correct, 1);
    CHECK_EQ_U(a.invariant_errors, 0);
    CHECK(a.retries + a.timeouts > 0); /* losses recovered from */
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    CHECK(memcmp(&aj, &bj, sizeof aj) == 0);
    CHECK_EQ_U(ta, tb);
    CHECK(ra != ARB_TIME_NEVER); /* the losses were answered */
    CHECK_EQ_U(ra, rb);
}

int main(void)
{
    RUN(star4_allreduce_headers);
    RUN(taps_see_arbor_packets_as_their_kind);
    RUN(every_collective_both_modes);
    RUN(dtypes_and_two_ranks);
    RUN(deterministic);
    RUN(loss_repairs);
    RUN(switch_results_exact_and_sooner);
    RUN(small_slot_pool_misses);
    RUN(rank_skew);
    RUN(dynamic_subchannels_avoid_a_failed_tree);
    RUN(a_run_that_cannot_finish_names_what_was_lost);
    RUN(two_jobs_on_disjoint_hosts);
    RUN(a_neighbour_on_other_switches_changes_nothing);
    RUN(jobs_on_one_switch_share_its_pool);
    RUN(jobs_deterministic_and_refused);
    RUN(jobs_on_the_same_hosts);
    RUN(staggered_jobs_of_several_sizes);
    RUN(deferred_jobs_enter_and_report);
    RUN(static_partition_caps_each_job);
    RUN(counts_hold_mid_run);
    RUN(reboots_lose_slots_results_exact);
    RUN(slots_count_every_part);
    RUN(a_partitioned_run_of_one_part_is_the_whole_run);
    return testkit_done();
}
