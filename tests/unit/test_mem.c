/*
 * Unit tests: the allocator hook (base.h, arb_mem). Every engine and the
 * planner are made under an allocator that fails its Nth allocation, for
 * N = 1, 2, ... until the set-up succeeds: each failure must be a clean
 * ARB_ENOMEM (no object, nothing left allocated: the allocator counts
 * what is live; ASan sees the rest), and the object made once every
 * allocation succeeds must work and free everything it took. The same
 * for three whole scenario runs with the failing allocator as the process
 * allocator (arb_mem_set_default): every allocation of the set-up (the
 * scenario, topology, routing, simulator, plans, pools), of the run (its
 * queues and tables growing as packets flow, a switch's flowlet table at
 * its first decision; in the ASan build, one allocation per packet) and of
 * the results fails in turn.
 */
#include "arbor/agg.h"
#include "arbor/cc.h"
#include "arbor/endpoint.h"
#include "arbor/plan.h"
#include "arbor/scenario.h"
#include "arbor/switch.h"
#include "arbor/topo.h"
#include "simkit.h"
#include "testkit.h"

#include <stdlib.h>
#include <string.h>

/* An allocator that fails the fail_at-th allocation (0: none) and counts
 * the blocks live. */
struct failing {
    unsigned calls, fail_at;
    long live;
};

static int fails_now(struct failing *f)
{
    return ++f->calls == f->fail_at;
}

static void *f_malloc(size_t size, void *user)
{
    struct failing *f = user;
    if (fails_now(f)) return NULL;
    void *p = malloc(size ? size : 1);
    f->live += p != NULL;
    return p;
}

static void *f_calloc(size_t n, size_t size, void *user)
{
    struct failing *f = user;
    if (fails_now(f)) return NULL;
    void *p = calloc(n ? n : 1, size ? size : 1);
    f->live += p != NULL;
    return p;
}

static void *f_realloc(void *ptr, size_t size, void *user)
{
    struct failing *f = user;
    if (fails_now(f)) return NULL;
    void *p = realloc(ptr, size ? size : 1);
    f->live += p != NULL && ptr == NULL;
    return p;
}

static void f_free(void *ptr, void *user)
{
    struct failing *f = user;
    f->live -= ptr != NULL;
    free(ptr);
}

static void *f_aligned(size_t align, size_t size, void *user)
{
    struct failing *f = user;
    if (fails_now(f)) return NULL;
    void *p = aligned_alloc(align, size);
    f->live += p != NULL;
    return p;
}

/* Set-up under an allocator failing at `fail_at`: 0 or the call's error,
 * the object (if made) freed by the same function. */
typedef int (*setup_fn)(const arb_mem *mem, void *ctx);

/* Run `setup` failing the 1st, 2nd, ... allocation until it succeeds:
 * every failure ARB_ENOMEM with nothing left live. The number of
 * allocations the set-up makes. */
static unsigned every_failure(const char *what, setup_fn setup, void *ctx)
{
    for (unsigned n = 1; n < 10000; n++) {
        struct failing f = {0, n, 0};
        arb_mem mem = {&f, f_malloc, f_calloc, f_realloc, f_free, f_aligned};
        int rc = setup(&mem, ctx);
        if (f.live != 0) TESTKIT_REPORT("%s: %ld blocks left live failing at %u", what, f.live, n);
        if (rc == 0) {
            CHECK(f.calls < n); /* it succeeded because no call was the failing one */
            printf("  %s: %u allocations, each failed in turn\n", what, n - 1);
            return n - 1;
        }
        if (rc != ARB_ENOMEM) TESTKIT_REPORT("%s: failing at %u gave %d", what, n, rc);
    }
    TESTKIT_REPORT("%s: never succeeded", what);
    return 0;
}

/* ---- the engines -------------------------------------------------------- */

static int agg_setup(const arb_mem *mem, void *ctx)
{
    const int *header_only = ctx;
    arb_agg_config c;
    arb_agg_config_default(&c);
    c.slots = 64;
    c.header_only = *header_only;
    c.mem = mem;
    arb_agg *a = (arb_agg *)(uintptr_t)1; /* must come back NULL on failure */
    int rc = arb_agg_new(&a, &c);
    if (rc < 0) CHECK(a == NULL);
    arb_agg_free(a);
    return rc;
}

TEST(agg_fails_cleanly)
{
    int values = 0, header_only = 1;
    /* the engine, slots, bitmaps, accumulators; local repair's table of
     * recent slots, expected ports, credit payloads, timer queue, per-port
     * order, per-port CE and per-port last answer (header-only: no
     * accumulators, no payloads) */
    CHECK_EQ_U(every_failure("agg (values)", agg_setup, &values), 11);
    CHECK_EQ_U(every_failure("agg (header-only)", agg_setup, &header_only), 9);
}

static int switch_setup(const arb_mem *mem, void *ctx)
{
    (void)ctx;
    arb_switch_config c;
    arb_switch_config_default(&c);
    c.mem = mem;
    arb_switch *sw = NULL;
    int rc = arb_switch_new(&sw, &c);
    if (rc < 0) CHECK(sw == NULL);
    arb_switch_free(sw);
    return rc;
}

/* the switch engine: one block, its state */
TEST(switch_fails_cleanly)
{
    CHECK_EQ_U(every_failure("switch", switch_setup, NULL), 1);
}

static int cc_setup(const arb_mem *mem, void *ctx)
{
    arb_cc_kind kind = *(const arb_cc_kind *)ctx;
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.mem = mem;
    arb_cc *cc = NULL;
    int rc = arb_cc_new(&cc, kind, &c);
    if (rc < 0) CHECK(cc == NULL);
    arb_cc_free(cc);
    return rc;
}

TEST(cc_fails_cleanly)
{
    for (int k = 0; k < ARB_CC_KIND_COUNT; k++) {
        arb_cc_kind kind = (arb_cc_kind)k;
        CHECK_EQ_U(every_failure(arb_cc_kind_name(k), cc_setup, &kind), 1);
    }
}

static void ep_send_nothing(void *ctx, const arb_ep_dst *dst, const arb_hdr *h,
                            const uint8_t *payload, size_t len)
{
    (void)ctx, (void)dst, (void)h, (void)payload, (void)len;
}

/* A responder (values or header-only) and its first message. */
static int responder_setup(const arb_mem *mem, void *ctx)
{
    const int *header_only = ctx;
    static uint8_t own[4096], result[4096];
    arb_responder_config c;
    arb_responder_config_default(&c);
    c.members = 3;
    c.ep.payload = 256;
    c.dtype = ARB_DTYPE_I32;
    c.op = ARB_OP_SUM;
    c.kind = ARB_EP_PULL_RESULT;
    c.ep.header_only = *header_only;
    c.subchannels = 2;
    c.send = ep_send_nothing;
    c.mem = mem;
    arb_responder *r = NULL;
    int rc = arb_responder_new(&r, &c);
    if (rc < 0) CHECK(r == NULL);
    if (rc == 0) {
        rc = arb_responder_start_message(r, 0, sizeof own, own, result, 0);
        CHECK(rc == 0); /* the first message allocates nothing more */
    }
    arb_responder_free(r);
    return rc;
}

/* A requester and a message of more offsets than its first window holds:
 * the bitmap window is allocated at the start. */
static int requester_setup(const arb_mem *mem, void *ctx)
{
    const int *mode = ctx; /* 0 values, 1 header-only, 2 values with seeded credits */
    static uint8_t in[64 * 1024], out[64 * 1024];
    arb_requester_config c;
    arb_requester_config_default(&c);
    c.ep.payload = 16;
    c.dtype = ARB_DTYPE_I32;
    c.op = ARB_OP_SUM;
    c.kind = ARB_EP_PULL_RESULT;
    c.ep.header_only = *mode == 1;
    c.ep.seed = *mode == 2; /* a copy of two offsets' input, allocated once */
    c.send = NULL;
    c.mem = mem;
    arb_requester *q = NULL;
    int rc = arb_requester_new(&q, &c);
    CHECK_EQ_I(rc, ARB_EINVAL); /* no send callback: refused before any allocation */
    c.send = ep_send_nothing;
    rc = arb_requester_new(&q, &c);
    if (rc < 0) CHECK(q == NULL);
    if (rc == 0) {
        rc = arb_requester_start_message(q, 0, sizeof in, in, out, 0);
        if (rc == ARB_ENOMEM) { /* the requester is as before: a second try works */
            struct failing *f = mem->user;
            f->fail_at = 0;
            CHECK_EQ_I(arb_requester_start_message(q, 0, sizeof in, in, out, 0), 0);
        }
    }
    arb_requester_free(q);
    return rc;
}

TEST(endpoints_fail_cleanly)
{
    int values = 0, header_only = 1;
    CHECK(every_failure("responder (values)", responder_setup, &values) >= 7);
    CHECK(every_failure("responder (header-only)", responder_setup, &header_only) >= 6);
    int rv = every_failure("requester (values)", requester_setup, &values);
    CHECK(rv >= 3);
    CHECK(every_failure("requester (header-only)", requester_setup, &header_only) >= 2);
    int seeded = 2;
    CHECK_EQ_I(every_failure("requester (seeded)", requester_setup, &seeded), rv + 1);
}

/* ---- the planner -------------------------------------------------------- */

static int plan_setup(const arb_mem *mem, void *ctx)
{
    const arb_topo *t = ctx;
    static const uint32_t ranks[6] = {0, 1, 5, 9, 12, 15};
    arb_plan_config c;
    arb_plan_config_default(&c);
    c.ranks = ranks;
    c.n_ranks = 6;
    c.bytes = 1 << 20;
    c.subchannels = 2;
    c.mem = mem;
    arb_plan *p = NULL;
    char err[256];
    int rc = arb_topo_plan(&p, t, &c, err, sizeof err);
    if (rc < 0) CHECK(p == NULL);
    if (rc == ARB_ENOMEM && !strstr(err, "out of memory"))
        TESTKIT_REPORT("plan: ENOMEM, but \"%s\"", err);
    if (rc == 0) CHECK_EQ_U(arb_plan_n_channels(p), 6);
    arb_plan_free(p);
    return rc;
}

TEST(plan_fails_cleanly)
{
    arb_topo *t = simkit_topo("pgft:2;4,4;1,4;1,1");
    CHECK(every_failure("plan (allreduce, 6 ranks, 2 trees each)", plan_setup, t) > 8);
    arb_topo_free(t);
}

/* ---- the simulator: set-up and a whole run ------------------------------ */

/* A scenario run with `mem` as the process allocator: scenario, topology,
 * routing, simulator, plans, pools, workload, the run and its results (the
 * JSON and CSV texts included). A run that fails must say why. */
struct scn_case {
    const char *name, *text;
    arb_scenario_csv_kind csv;
    unsigned codes[4]; /* runs: ENOMEM, another error, (unused), success */
};

static int scenario_setup(const arb_mem *mem, void *ctx)
{
    struct scn_case *k = ctx;
    if (arb_mem_set_default(mem) < 0) return ARB_EINVAL;
    arb_scenario *sc = NULL;
    arb_scenario_result *r = NULL;
    char err[512] = "";
    int rc = arb_scenario_new(&sc);
    if (rc == 0) rc = arb_scenario_load_string(sc, k->text, k->name, NULL, err, sizeof err);
    if (rc == 0) rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
    if (rc < 0 && err[0] == '\0' && rc != ARB_ENOMEM)
        TESTKIT_REPORT("%s: error %d without a message", k->name, rc);
    if (rc == 0) {
        const char *why = NULL;
        arb_scenario_status st = arb_scenario_result_status(r, &why);
        if (st != ARB_SCN_DONE) {
            /* an allocation that failed mid-run ends the run with an error, not a
             * run that looks done or a silent failure */
            TESTKIT_REPORT("%s: run ended %d (%s) with no error", k->name, (int)st, why ? why : "");
            rc = ARB_EINVAL;
        }
    }
    if (rc == 0) {
        char *json = arb_scenario_json(r, NULL);
        char *csv = arb_scenario_csv(r, k->csv);
        if (!json || !csv) rc = ARB_ENOMEM; /* both say so by NULL */
        free(json);                         /* cJSON's text: the C library's */
        arb_mem_free(NULL, csv);            /* ours: the process allocator's */
    }
    k->codes[rc == 0 ? 3 : rc == ARB_ENOMEM ? 0 : 1]++;
    arb_scenario_result_free(r);
    arb_scenario_free(sc);
    arb_mem_set_default(NULL);
    return rc == 0 || rc == ARB_ENOMEM ? rc : (printf("  %s: %s\n", k->name, err), rc);
}

static struct scn_case arbor8 = {"arbor8.ini",
                                 "[fabric]\ntopology = leafspine:4,2,2\n"
                                 "[workload]\nkind = arbor\nsize = 64KiB\n"
                                 "[arbor]\nmode = values\npayload = 1024\nwindow = 4\n",
                                 ARB_SCN_CSV_RANKS,
                                 {0}};
static struct scn_case perm4 = {"perm4.ini",
                                "[fabric]\ntopology = leafspine:2,2,2\n"
                                "[routing]\nscheme = ecmp\n[transport]\nkind = irn\n"
                                "[workload]\nkind = perm\nseed = 7\nsize = 64KB\n",
                                ARB_SCN_CSV_FLOWS,
                                {0}};

/* a flowlet scheme: each leaf's table is made at its first decision, in the run */
static struct scn_case letflow4 = {"letflow4.ini",
                                   "[fabric]\ntopology = leafspine:2,2,2\n"
                                   "[routing]\nscheme = letflow:gap=5us\n[transport]\nkind = irn\n"
                                   "[workload]\nkind = perm\nseed = 7\nsize = 64KB\n",
                                   ARB_SCN_CSV_FLOWS,
                                   {0}};

TEST(scenario_fails_cleanly)
{
    struct scn_case *cases[] = {&arbor8, &perm4, &letflow4};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct scn_case *k = cases[i];
        unsigned n = every_failure(k->name, scenario_setup, k);
        printf("  %s: %u failures ENOMEM, %u another error\n", k->name, k->codes[0], k->codes[1]);
        CHECK(n > 50);
        CHECK_EQ_U(k->codes[1], 0);
    }
}

/* The default allocator is the C library's, and NULL means it. */
TEST(default_allocator)
{
    const arb_mem *d = arb_mem_default();
    REQUIRE(d != NULL);
    void *p = arb_mem_malloc(d, 16), *q = arb_mem_calloc(NULL, 4, 4);
    CHECK(p != NULL && q != NULL);
    CHECK(memcmp(q, (uint8_t[16]){0}, 16) == 0);
    p = arb_mem_realloc(NULL, p, 4096);
    CHECK(p != NULL);
    arb_mem_free(NULL, p);
    arb_mem_free(d, q);
    arb_mem_free(d, NULL);
}

/* The process allocator: set, used by NULL, refused without `aligned`,
 * restored by NULL; aligned and string allocations through it. */
TEST(process_allocator)
{
    struct failing f = {0, 0, 0};
    arb_mem mem = {&f, f_malloc, f_calloc, f_realloc, f_free, f_aligned};
    arb_mem half = mem;
    half.aligned = NULL;
    CHECK_EQ_I(arb_mem_set_default(&half), ARB_EINVAL);
    CHECK(arb_mem_default() != &half);
    REQUIRE_EQ_I(arb_mem_set_default(&mem), 0);
    CHECK(arb_mem_default() == &mem);
    void *p = arb_mem_malloc(NULL, 10);
    char *d = arb_mem_strdup(NULL, "arbor"), *e = arb_mem_strndup(NULL, "arbor", 3);
    uint8_t *a = arb_mem_aligned_alloc(NULL, 64, 100); /* rounded up to 128 */
    CHECK_EQ_U(f.calls, 4);
    CHECK_EQ_I(f.live, 4);
    CHECK(d && strcmp(d, "arbor") == 0);
    CHECK(e && strcmp(e, "arb") == 0);
    CHECK(a && ((uintptr_t)a & 63) == 0);
    CHECK(arb_mem_aligned_alloc(NULL, 48, 96) == NULL); /* not a power of two */
    arb_mem_free(NULL, p);
    arb_mem_free(NULL, d);
    arb_mem_free(NULL, e);
    arb_mem_free(NULL, a);
    CHECK_EQ_I(f.live, 0);
    CHECK_EQ_I(arb_mem_set_default(NULL), 0);
    CHECK(arb_mem_default() != &mem);
    p = arb_mem_malloc(NULL, 10); /* the C library's again: not counted */
    CHECK_EQ_U(f.calls, 4);
    arb_mem_free(NULL, p);
    CHECK(arb_mem_aligned_alloc(&half, 64, 64) == NULL); /* no aligned: refused */
}

int main(void)
{
    RUN(agg_fails_cleanly);
    RUN(switch_fails_cleanly);
    RUN(cc_fails_cleanly);
    RUN(endpoints_fail_cleanly);
    RUN(plan_fails_cleanly);
    RUN(scenario_fails_cleanly);
    RUN(default_allocator);
    RUN(process_allocator);
    return testkit_done();
}
