/* Routing engines and link loads against hand-worked cases and docs/routing.md, "Collision figures,
 * reproduced". */
#include "arbor/route.h"
#include "arbor/topo.h"
#include "arbor/traffic.h"
#include "testkit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static arb_topo *topo(const char *spec, const char *fails)
{
    arb_topo *t = NULL;
    char err[256];
    if (arb_topo_new(&t, spec, NULL, err, sizeof err) < 0) printf("  topo %s: %s\n", spec, err);
    REQUIRE(t != NULL);
    if (fails && arb_topo_fail(t, fails, err, sizeof err) < 0) {
        printf("  fail %s: %s\n", fails, err);
        arb_topo_free(t);
        REQUIRE(!"the failure list applies");
    }
    return t;
}

static arb_route *router(const arb_topo *t, const char *spec)
{
    arb_route *r = NULL;
    char err[256];
    if (arb_route_new(&r, t, spec, NULL, err, sizeof err) < 0)
        printf("  route %s: %s\n", spec, err);
    REQUIRE(r != NULL);
    return r;
}

static arb_route_key key(uint32_t s, uint32_t d)
{
    arb_route_key k = {s, d, 49152, ARB_ROCE_UDP_PORT, 0, ARB_IPPROTO_UDP};
    return k;
}

/* The path of s -> d as "p,p,p" or "none". */
static const char *path_str(const arb_route *r, arb_route_key k)
{
    static char buf[256];
    uint32_t ports[ARB_ROUTE_MAX_HOPS];
    int n = arb_route_path(r, &k, ports, ARB_ROUTE_MAX_HOPS);
    if (n < 0) return "none";
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%u", i ? "," : "", ports[i]);
    return buf;
}

/*
 * leafspine:4,2,2 = PGFT(2; 2,4; 1,2; 1,1). Global ports: host j owns port
 * j; leaf i owns 8+4i .. 11+4i (down 0, down 1, up 0, up 1); spine s owns
 * 24+4s .. 27+4s (down port i to leaf i).
 */
TEST(hand_dmodk_smodk)
{
    arb_topo *t = topo("leafspine:4,2,2", NULL);
    arb_route *d = router(t, "dmodk"), *s = router(t, "smodk");
    /* 0 -> 5: leaf 0 up q = 5 mod 2 = 1 (port 11), spine 1 down 2 (30), leaf 2 down 1 (17) */
    CHECK_STR(path_str(d, key(0, 5)), "0,11,30,17");
    /* S-mod-k: q = 0 mod 2 = 0 (port 10), spine 0 down 2 (26) */
    CHECK_STR(path_str(s, key(0, 5)), "0,10,26,17");
    /* same leaf: 0 -> 1 turns at the leaf */
    CHECK_STR(path_str(d, key(0, 1)), "0,9");
    /* 6 -> 3: leaf 3 up q = 3 mod 2 = 1 (port 23), spine 1 down 1 (29), leaf 1 down 1 (13) */
    CHECK_STR(path_str(d, key(6, 3)), "6,23,29,13");
    /* the port the formula names failed: no route */
    arb_topo_fail(t, "up:L1.0:1", NULL, 0);
    CHECK_STR(path_str(d, key(0, 5)), "none");
    CHECK_STR(path_str(s, key(0, 5)), "0,10,26,17");
    arb_route_free(d);
    arb_route_free(s);
    arb_topo_free(t);
}

/* PGFT(2; 4,4; 1,2; 1,2): parallel links. Leaf i: ports 16+8i: down 0..3, up 0..3
 * (up q -> spine q mod 2, parallel q / 2). Spine s: ports 48+8s, down d -> leaf
 * d mod 4 on parallel d / 4. */
TEST(hand_dmodk_parallel)
{
    arb_topo *t = topo("pgft:2;4,4;1,2;1,2", NULL);
    arb_route *d = router(t, "dmodk");
    /* 0 -> 7: q_1 = 7 mod 4 = 3: leaf 0 up 3 (port 23) = spine 1 parallel 1;
     * spine 1 down: child 7/4 mod 4 = 1, parallel floor(7/2) mod 2 = 1: d = 1 + 4 = 5 (61);
     * leaf 1 down 7 mod 4 = 3 (27) */
    CHECK_STR(path_str(d, key(0, 7)), "0,23,61,27");
    /* 5 -> 8: q_1 = 0: leaf 1 up 0 (28), spine 0 child 2 parallel 4 mod 2 = 0: d 2 (50), leaf 2
     * down 0 (32) */
    CHECK_STR(path_str(d, key(5, 8)), "5,28,50,32");
    arb_route_free(d);
    arb_topo_free(t);
}

TEST(hand_pinning_table)
{
    arb_topo *t = topo("leafspine:4,2,2", NULL);
    arb_route *p = router(t, "pinning"), *tb = router(t, "table");
    /* slice of 5 = 5 mod 2 = 1: uplink 1 (11); slice of 4 = 0: uplink 0 (10) */
    CHECK_STR(path_str(p, key(0, 5)), "0,11,30,17");
    CHECK_STR(path_str(p, key(1, 4)), "1,10,26,16");
    /* table: pod of 5 = 5 / M_1 = 2; from h0 (arrival local port 0): C[(2+0) mod 2] = up 0 */
    CHECK_STR(path_str(tb, key(0, 5)), "0,10,26,17");
    /* from h1 (local port 1): C[(2+1) mod 2] = up 1 */
    CHECK_STR(path_str(tb, key(1, 5)), "1,11,30,17");
    /* failures: pinning and table fall back to the hash over live ports: the one left */
    arb_topo_fail(t, "up:L1.0:1", NULL, 0);
    CHECK_STR(path_str(p, key(0, 5)), "0,10,26,17");
    CHECK_STR(path_str(tb, key(1, 5)), "1,10,26,17");
    arb_route_free(p);
    arb_route_free(tb);
    arb_topo_free(t);
}

TEST(hand_table_file)
{
    arb_topo *t = topo("leafspine:4,2,2", NULL);
    const char *path = "/tmp/arbor_test_route_table.csv";
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    fprintf(f, "switch,pod,in_port,out_port\n# h0 toward pod 2 on up port 1 (local 3)\n"
               "L1.0,2,0,3\nL1.0,2,*,2\n");
    fclose(f);
    char spec[128];
    snprintf(spec, sizeof spec, "table:%s", path);
    arb_route *tb = router(t, spec);
    CHECK(tb != NULL);
    if (tb) {
        CHECK_STR(path_str(tb, key(0, 5)), "0,11,30,17");
        CHECK_STR(path_str(tb, key(1, 5)), "1,10,26,17");
        /* pod 1 = 2 / 2, from local port 0: C[(1 + 0) mod 2] = up 1 (11), spine 1 down 1 (29) */
        CHECK_STR(path_str(tb, key(0, 2)), "0,11,29,12");
    }
    arb_route_free(tb);
    /* bad files name the line */
    const char *bad[][2] = {
        {"switch,pod,in_port,out_port\nL1.9,0,*,2\n", "line 2: switch 'L1.9'"},
        {"switch,pod,in_port,out_port\nL1.0,4,*,2\n", "line 2: pod '4'"},
        {"switch,pod,in_port,out_port\n\nL1.0,1,*,0\n",
         "line 3: out_port 0 of L1.0 is not a minimal"},
        {"switch,pod,in,out\n", "line 1: want the header"},
        {"switch,pod,in_port,out_port\nL1.0,1,x,2\n", "line 2: in_port 'x'"},
        {"switch,pod,in_port,out_port\nL1.0,1\n", "line 2: want switch,pod"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen(path, "w");
        REQUIRE(f != NULL);
        fputs(bad[i][0], f);
        fclose(f);
        arb_route *r = NULL;
        char err[256] = "";
        CHECK_EQ_I(arb_route_new(&r, t, spec, NULL, err, sizeof err), ARB_EPARSE);
        CHECK(strstr(err, bad[i][1]) != NULL);
        if (!strstr(err, bad[i][1])) printf("  got: %s\n", err);
        CHECK(r == NULL);
    }
    remove(path);
    arb_route *r = NULL;
    CHECK_EQ_I(arb_route_new(&r, t, "table:/nonexistent/x.csv", NULL, NULL, 0), ARB_EIO);
    arb_topo_free(t);
}

/* The range form of the candidate set lists the same ports as
 * arb_route_candidates wherever it answers, and declines once a port of the
 * node has failed (its set is then no longer a plain range). */
TEST(candidate_range_matches_the_list)
{
    arb_topo *t = topo("pgft:3;2,2,4;1,2,2;1,2,1", NULL);
    arb_route *r = router(t, "ecmp");
    uint32_t n_nodes = arb_topo_n_nodes(t), n_hosts = arb_topo_n_hosts(t), ranges = 0;
    for (uint32_t node = n_hosts; node < n_nodes; node++)
        for (uint32_t d = 0; d < n_hosts; d++) {
            arb_route_key k = key(0, d);
            uint32_t cands[ARB_ROUTE_MAX_CANDS], first = 0, stride = 0;
            int c = arb_route_candidates(r, node, &k, cands, ARB_ROUTE_MAX_CANDS);
            int m = arb_route_candidate_range(r, node, &k, &first, &stride);
            CHECK_EQ_I(m, c);
            for (int q = 0; q < m && q < c; q++)
                CHECK_EQ_U(first + stride * (uint32_t)q, cands[q]);
            ranges += m > 1 && stride > 1; /* parallel down links */
        }
    CHECK(ranges > 0);
    uint32_t leaf = arb_topo_node_id(t, 1, 0), first, stride;
    arb_route_key k = key(0, n_hosts - 1);
    CHECK(arb_route_candidate_range(r, leaf, &k, &first, &stride) > 1);
    CHECK_EQ_I(arb_topo_fail_link(t, first), 0);
    arb_route_refresh(r);
    CHECK_EQ_I(arb_route_candidate_range(r, leaf, &k, &first, &stride), 0);
    arb_route_free(r);
    arb_topo_free(t);
}

TEST(hand_updown_dmodc)
{
    arb_topo *t = topo("leafspine:4,2,2", "up:L1.0:1");
    arb_route *u = router(t, "updown"), *c = router(t, "dmodc"), *d = router(t, "dmodk");
    /* leaf 0 lost spine 1: 0 -> 5 leaves on up 0 (10), spine 0 down 2 (26) */
    CHECK_STR(path_str(u, key(0, 5)), "0,10,26,17");
    CHECK_STR(path_str(c, key(0, 5)), "0,10,26,17");
    /* 2 -> 1: D-mod-k takes spine 1 (15), which cannot reach leaf 0; up/down only spine 0 (14) */
    CHECK_STR(path_str(d, key(2, 1)), "none");
    CHECK_STR(path_str(u, key(2, 1)), "2,14,24,9");
    CHECK_STR(path_str(c, key(2, 1)), "2,14,24,9");
    /* 2 -> 7 does not touch leaf 0: D-mod-k over both ports, q = 7 mod 2 = 1 (15) */
    CHECK_STR(path_str(u, key(2, 7)), "2,15,31,21");
    uint32_t cands[8];
    arb_route_key k = key(2, 1);
    CHECK_EQ_I(arb_route_candidates(u, arb_topo_node_id(t, 1, 1), &k, cands, 8), 1);
    CHECK_EQ_U(cands[0], 14);
    CHECK_EQ_I(arb_route_candidates(d, arb_topo_node_id(t, 1, 1), &k, cands, 8), 2);
    CHECK_EQ_I(arb_route_candidates(d, arb_topo_node_id(t, 1, 1), &k, cands, 1), ARB_ENOSPC);
    /* cut host 1 off: unroutable for everyone, never a crash */
    arb_topo_fail(t, "link:h1-L1.0", NULL, 0);
    arb_route_refresh(u);
    arb_route_refresh(c);
    CHECK_STR(path_str(u, key(2, 1)), "none");
    CHECK_STR(path_str(c, key(2, 1)), "none");
    /* host 1 back: its paths are those it had */
    CHECK_EQ_I(arb_topo_restore(t, "link:h1-L1.0", NULL, 0), 0);
    arb_route_refresh(u);
    arb_route_refresh(c);
    CHECK_STR(path_str(u, key(2, 1)), "2,14,24,9");
    CHECK_STR(path_str(c, key(2, 1)), "2,14,24,9");
    arb_route_free(u);
    arb_route_free(c);
    arb_route_free(d);
    arb_topo_free(t);
}

/*
 * Dmodc's divider, worked by hand on kary:2,3 = PGFT(3; 2,2,2; 1,2,2; 1,1,1)
 * (8 hosts; leaves L1.0..3 = nodes 8..11, L2.0..3 = 12..15, tops 16..19).
 * Intact: Pi(leaf) = 1, Pi(L2) = 1 x 2 = 2 = W_2. Fail the second uplink
 * of both leaves under L2.0 (L1.0 and L1.1): their live parents drop to 1,
 * so Pi(L2.0) = 1 while updown keeps W_2 = 2.
 */
TEST(hand_dmodc_divider)
{
    arb_topo *t = topo("kary:2,3", "up:L1.0:1,up:L1.1:1");
    arb_route *c = router(t, "dmodc"), *u = router(t, "updown");
    /* 0 -> 6 at L2.0 (node 12, up ports 16+12... ): D-mod-k up digit floor(6/2) mod 2 = 1,
     * dmodc floor(6/1) mod 2 = 0. */
    const arb_node *l20 = arb_topo_node(t, 12);
    arb_route_key k = key(0, 6);
    CHECK_EQ_U(arb_route_next(u, 12, &k, ARB_TOPO_NONE), l20->first_up + 1);
    CHECK_EQ_U(arb_route_next(c, 12, &k, ARB_TOPO_NONE), l20->first_up + 0);
    k = key(0, 5);
    CHECK_EQ_U(arb_route_next(u, 12, &k, ARB_TOPO_NONE), l20->first_up + 0);
    CHECK_EQ_U(arb_route_next(c, 12, &k, ARB_TOPO_NONE), l20->first_up + 1);
    arb_route_free(c);
    arb_route_free(u);
    arb_topo_free(t);
}

/* The documented hash, computed here from its definition. */
static uint64_t doc_hash(uint64_t seed, arb_route_key k, int qp)
{
    uint64_t a = ((uint64_t)(0x0A000000u | k.src) << 32) | (0x0A000000u | k.dst);
    uint64_t b = ((uint64_t)k.proto << 32) | ((uint64_t)k.sport << 16) | k.dport;
    uint64_t h = arb_mix64(arb_mix64(seed ^ a) ^ b);
    return qp ? arb_mix64(h ^ k.qp) : h;
}

TEST(hand_ecmp_hash)
{
    arb_topo *t = topo("leafspine:4,2,2", NULL);
    arb_route *e = router(t, "ecmp"), *ee = router(t, "eecmp"), *pol = router(t, "ecmp:polarized");
    arb_route_reseed(e, 42);
    arb_route_reseed(ee, 42);
    arb_route_reseed(pol, 42);
    for (uint16_t sp = 49152; sp < 49200; sp++) {
        arb_route_key k = key(0, 5);
        k.sport = sp;
        k.qp = sp * 7u;
        uint64_t s8 = arb_mix64(42 + 0x9E3779B97F4A7C15ull * 9); /* leaf 0 is node 8 */
        CHECK_EQ_U(arb_route_hash(e, 8, &k), doc_hash(s8, k, 0));
        CHECK_EQ_U(arb_route_next(e, 8, &k, 0), 10 + doc_hash(s8, k, 0) % 2);
        CHECK_EQ_U(arb_route_next(ee, 8, &k, 0), 10 + doc_hash(s8, k, 1) % 2);
        CHECK_EQ_U(arb_route_next(pol, 8, &k, 0), 10 + doc_hash(42, k, 0) % 2);
    }
    CHECK_STR(arb_route_spec(pol), "ecmp:polarized");
    arb_route_free(e);
    arb_route_free(ee);
    arb_route_free(pol);
    arb_topo_free(t);
}

/* rnca: the balanced map rebuilt here from its definition (Fisher-Yates over i mod U). */
TEST(hand_rnca)
{
    arb_topo *t = topo("leafspine:4,2,2", NULL);
    arb_route *r = router(t, "rnca:7");
    CHECK_STR(arb_route_spec(r), "rnca:7");
    arb_rng g;
    arb_rng_seed(&g, 7);
    uint16_t m0[8], m1[8];
    for (int i = 0; i < 8; i++)
        m0[i] = 0;
    for (uint64_t i = 8; i > 1; i--)
        arb_rng_below(&g, i); /* level 0: all zeros, shuffled */
    for (int i = 0; i < 8; i++)
        m1[i] = (uint16_t)(i % 2);
    for (uint64_t i = 8; i > 1; i--) {
        uint64_t j = arb_rng_below(&g, i);
        uint16_t x = m1[i - 1];
        m1[i - 1] = m1[j];
        m1[j] = x;
    }
    (void)m0;
    int ones = 0;
    for (uint32_t d = 2; d < 8; d++) {
        arb_route_key k = key(0, d);
        CHECK_EQ_U(arb_route_next(r, 8, &k, 0), 10 + m1[d]);
    }
    for (int i = 0; i < 8; i++)
        ones += m1[i];
    CHECK_EQ_I(ones, 4); /* balanced */
    arb_route_free(r);
    arb_topo_free(t);
}

static uint32_t pick_last(void *ctx, uint32_t node, const arb_route_key *k, uint32_t in,
                          const uint32_t *c, unsigned n)
{
    (void)node;
    (void)k;
    (void)in;
    (*(int *)ctx)++;
    return c[n - 1];
}

TEST(hand_adaptive)
{
    arb_topo *t = topo("leafspine:4,2,2", NULL);
    int calls = 0;
    arb_route_config cfg = arb_route_config_default();
    arb_route *r = NULL;
    CHECK_EQ_I(arb_route_new(&r, t, "adaptive", &cfg, NULL, 0), ARB_EINVAL);
    cfg.choose = pick_last;
    cfg.choose_ctx = &calls;
    REQUIRE_EQ_I(arb_route_new(&r, t, "adaptive", &cfg, NULL, 0), 0);
    CHECK_STR(path_str(r, key(0, 5)), "0,11,30,17");
    CHECK_EQ_I(calls, 4);
    arb_route_free(r);
    arb_topo_free(t);
}

/* Route every shift of N hosts; the worst max load over all shifts. */
static uint32_t worst_shift(const arb_topo *t, const arb_route *r, int *unroutable)
{
    uint32_t n = arb_topo_n_hosts(t), worst = 0;
    arb_route_load *l = NULL;
    REQUIRE_EQ_I(arb_route_load_new(&l, t), 0);
    arb_flow *f = calloc(n, sizeof *f);
    *unroutable = 0;
    for (uint32_t s = 1; s < n; s++) {
        for (uint32_t i = 0; i < n; i++) {
            arb_flow x = {i, (i + s) % n, 49152, ARB_ROCE_UDP_PORT, i, ARB_IPPROTO_UDP, 0, 1.0};
            f[i] = x;
        }
        *unroutable += (int)arb_route_load_phase(l, r, f, n);
    }
    arb_route_stats st;
    arb_route_load_stats(l, &st);
    worst = st.max_load;
    free(f);
    arb_route_load_free(l);
    return worst;
}

TEST(dmodk_shift_rlft_exhaustive)
{
    const char *specs[] = {
        "pgft:2;4,4;1,2;1,2", "pgft:3;4,2,2;1,2,2;1,2,2", "pgft:3;4,4,8;1,4,4;1,1,1", "kary:4,3",
        "kary:2,4",           "leafspine:8,4,4"};
    const char *engines[] = {"dmodk", "dmodc", "updown"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        for (size_t e = 0; e < 3; e++) {
            arb_topo *t = topo(specs[i], NULL);
            arb_route *r = router(t, engines[e]);
            int bad;
            uint32_t w = worst_shift(t, r, &bad);
            if (w != 1) printf("  %s %s: max load %u\n", engines[e], specs[i], w);
            CHECK_EQ_U(w, 1);
            CHECK_EQ_I(bad, 0);
            arb_route_free(r);
            arb_topo_free(t);
        }
}

/* On a slimmed tree D-mod-k cannot keep every link at one flow. */
TEST(dmodk_slimmed_contention)
{
    arb_topo *t = topo("pgft:2;4,4;1,2;1,1", NULL);
    arb_route *r = router(t, "dmodk");
    int bad;
    CHECK(worst_shift(t, r, &bad) >= 2);
    arb_route_free(r);
    arb_topo_free(t);
}

/* dmodc and updown equal D-mod-k hop by hop on an intact tree. */
TEST(dmodc_equals_dmodk_intact)
{
    arb_topo *t = topo("pgft:3;4,2,2;1,2,2;1,2,2", NULL);
    arb_route *d = router(t, "dmodk"), *c = router(t, "dmodc"), *u = router(t, "updown");
    uint32_t n = arb_topo_n_hosts(t);
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t x = 0; x < n; x++) {
            if (s == x) continue;
            char a[256];
            snprintf(a, sizeof a, "%s", path_str(d, key(s, x)));
            CHECK_STR(path_str(c, key(s, x)), a);
            CHECK_STR(path_str(u, key(s, x)), a);
            if (TEST_FAILING()) return;
        }
    arb_route_free(d);
    arb_route_free(c);
    arb_route_free(u);
    arb_topo_free(t);
}

/* Shortest up/down distance from host s to host d by brute force (BFS over
 * (node, going-down) states); -1 when none. */
static int updown_dist(const arb_topo *t, uint32_t s, uint32_t d)
{
    uint32_t nn = arb_topo_n_nodes(t);
    int *dist = malloc(sizeof *dist * nn * 2);
    uint32_t *q = malloc(sizeof *q * nn * 2);
    for (uint32_t i = 0; i < nn * 2; i++)
        dist[i] = -1;
    size_t head = 0, tail = 0;
    dist[s * 2] = 0;
    q[tail++] = s * 2;
    int found = -1;
    while (head < tail) {
        uint32_t st = q[head++], node = st / 2, down = st % 2;
        if (node == d) {
            found = dist[st];
            break;
        }
        const arb_node *n = arb_topo_node(t, node);
        for (unsigned i = 0; i < (unsigned)n->n_down + n->n_up; i++) {
            const arb_port *p = arb_topo_port(t, n->first_port + i);
            if (p->failed) continue;
            int is_up = p->role == ARB_LINK_UP;
            if (down && is_up) continue;
            if (arb_topo_node(t, p->peer)->kind == ARB_NODE_HOST && p->peer != d) continue;
            uint32_t ns = p->peer * 2 + (is_up ? 0 : 1);
            if (dist[ns] >= 0) continue;
            dist[ns] = dist[st] + 1;
            q[tail++] = ns;
        }
    }
    free(dist);
    free(q);
    return found;
}

TEST(updown_dmodc_degraded)
{
    const char *specs[] = {"kary:4,3", "pgft:3;4,2,2;1,2,2;1,2,2"};
    for (size_t si = 0; si < 2; si++) {
        arb_rng g;
        arb_rng_seed(&g, 99 + si);
        for (int round = 0; round < 6; round++) {
            arb_topo *t = topo(specs[si], NULL);
            uint32_t np = arb_topo_n_ports(t);
            int nfail = 3 + round * 4; /* from light to heavy damage */
            for (int i = 0; i < nfail; i++) {
                uint32_t p = (uint32_t)arb_rng_below(&g, np);
                if (arb_topo_port(t, p)->tier == 0) continue; /* keep hosts attached */
                arb_topo_fail_link(t, p);
            }
            arb_route *u = router(t, "updown"), *c = router(t, "dmodc");
            uint32_t n = arb_topo_n_hosts(t);
            for (uint32_t s = 0; s < n; s++)
                for (uint32_t d = 0; d < n; d++) {
                    if (s == d) continue;
                    int want = updown_dist(t, s, d);
                    uint32_t ports[ARB_ROUTE_MAX_HOPS];
                    arb_route_key k = key(s, d);
                    int a = arb_route_path(u, &k, ports, ARB_ROUTE_MAX_HOPS);
                    int b = arb_route_path(c, &k, ports, ARB_ROUTE_MAX_HOPS);
                    if (want < 0) {
                        CHECK_EQ_I(a, ARB_ENOENT);
                        CHECK_EQ_I(b, ARB_ENOENT);
                    } else {
                        CHECK_EQ_I(a, want);
                        CHECK_EQ_I(b, want);
                    }
                    if (TEST_FAILING()) {
                        printf("  %s round %d: %u -> %u want %d got %d %d\n", specs[si], round, s,
                               d, want, a, b);
                        return;
                    }
                }
            arb_route_free(u);
            arb_route_free(c);
            arb_topo_free(t);
        }
    }
    /* a disconnected pair is reported by the loads, not a crash */
    arb_topo *t = topo("kary:2,2", "link:L1.0-L2.0,link:L1.0-L2.1");
    arb_route *u = router(t, "updown");
    arb_route_load *l = NULL;
    REQUIRE_EQ_I(arb_route_load_new(&l, t), 0);
    arb_flow f[2] = {{0, 3, 1, 4791, 0, 17, 0, 1.0}, {0, 1, 1, 4791, 0, 17, 0, 1.0}};
    CHECK_EQ_I(arb_route_load_phase(l, u, f, 2), 1);
    arb_route_stats st;
    arb_route_load_stats(l, &st);
    CHECK_EQ_U(st.unroutable, 1);
    CHECK_EQ_U(st.hops, 2);
    arb_route_load_free(l);
    arb_route_free(u);
    arb_topo_free(t);
}

/*
 * Balls in bins, exactly: F flows hashed uniformly onto L links. The
 * probability that no link gets two is prod_{i<F} (1 - i/L). The busiest
 * link's load M has P(M <= c) = Q_L(F), where Q_b(m) is the probability
 * that m balls in b bins leave every bin at or below c: the first bin takes
 * j ~ Binomial(m, 1/b), the other b - 1 bins the rest,
 *   Q_b(m) = sum_{j <= min(c, m)} C(m, j) b^-j (1 - 1/b)^(m-j) Q_{b-1}(m - j),
 * Q_1(m) = [m <= c]. Then E[M] = sum_{k >= 1} P(M >= k) and
 * E[M^2] = sum_{k >= 1} (2k - 1) P(M >= k); P(M >= k) = 1 for k <= F/L.
 * These are the published figures of the model (0.667 and 1.35 for 4 flows
 * on 16 links, 77 for 1000), computed here from the model itself.
 */
static double p_no_collision(unsigned flows, unsigned links)
{
    double p = 1;
    for (unsigned i = 0; i < flows; i++)
        p *= 1.0 - (double)i / links;
    return p < 0 ? 0 : p;
}

static double p_busiest_at_most(unsigned flows, unsigned links, unsigned c, double *q, double *nq)
{
    for (unsigned m = 0; m <= flows; m++)
        q[m] = m <= c;
    for (unsigned b = 2; b <= links; b++) {
        double p = 1.0 / b, r = 1.0 - p, rm = 1.0;
        for (unsigned m = 0; m <= flows; m++, rm *= r) {
            double pmf = rm, sum = 0; /* C(m, j) p^j r^(m-j), from j = 0 */
            for (unsigned j = 0; j <= m && j <= c; j++) {
                sum += pmf * q[m - j];
                pmf *= (double)(m - j) / (j + 1) * p / r;
            }
            nq[m] = sum;
        }
        double *t = q;
        q = nq;
        nq = t;
    }
    return q[flows];
}

/* E[M] and the standard deviation of M, the busiest of `links` links. */
static void busiest_exact(unsigned flows, unsigned links, double *mean, double *sd)
{
    double *q = malloc((flows + 1) * sizeof *q), *nq = malloc((flows + 1) * sizeof *nq);
    REQUIRE(q && nq);
    double e = 0, e2 = 0;
    for (unsigned k = 1; k <= flows; k++) {
        double ge = k <= flows / links ? 1.0 : 1.0 - p_busiest_at_most(flows, links, k - 1, q, nq);
        e += ge;
        e2 += (2.0 * k - 1) * ge;
        if (ge < 1e-15) break;
    }
    free(q);
    free(nq);
    *mean = e;
    *sd = sqrt(e2 - e * e);
}

/* The model's figures against docs/routing.md, "Collision figures, reproduced"'s, and the Monte
 * Carlo means within 4 standard errors of the exact expectation. */
TEST(bins_figures)
{
    double m, sd;
    busiest_exact(4, 16, &m, &sd);
    CHECK(fabs(p_no_collision(4, 16) - 0.667) < 0.001 && fabs(m - 1.35) < 0.005);
    busiest_exact(1000, 16, &m, &sd);
    CHECK(fabs(m - 77) < 0.5);
    static const unsigned links[] = {16, 16, 16, 60};
    static const unsigned flows[] = {4, 8, 16, 16};
    for (size_t i = 0; i < 4; i++) {
        double want = p_no_collision(flows[i], links[i]);
        if (fabs(arb_route_bins_p_no_collision(flows[i], links[i]) - want) > 1e-12 * want)
            TESTKIT_REPORT("p_no_collision(%u, %u) = %.9g, want %.9g", flows[i], links[i],
                           arb_route_bins_p_no_collision(flows[i], links[i]), want);
    }
    CHECK(arb_route_bins_p_no_collision(17, 16) == 0.0);
    static const unsigned rows[] = {4, 8, 16, 32, 64, 1000};
    const unsigned trials = 4000;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        arb_rng g;
        arb_rng_seed(&g, 1);
        double mean, none;
        CHECK_EQ_I(arb_route_bins_busiest(rows[i], 16, trials, &g, &mean, &none), 0);
        busiest_exact(rows[i], 16, &m, &sd);
        double tol = 4 * sd / sqrt(trials);
        if (fabs(mean - m) > tol)
            TESTKIT_REPORT("%u flows: busiest %.4f, exact %.4f +- %.4f", rows[i], mean, m, tol);
        /* the share of trials with no collision: a binomial proportion */
        double p = p_no_collision(rows[i], 16), ptol = 4 * sqrt(p * (1 - p) / trials) + 1e-12;
        if (fabs(none - p) > ptol)
            TESTKIT_REPORT("%u flows: no collision in %.4f of the trials, want %.4f +- %.4f",
                           rows[i], none, p, ptol);
    }
}

/*
 * The leaf-spine figures through the real engines: GPUS hosts on leaf 0 of
 * leafspine:2,GPUS,UP each send one link of demand over QPS flows to the
 * host above them on leaf 1. The mean busiest uplink demand over trials.
 */
static double rack(uint32_t gpus, uint32_t qps, uint32_t up, int trials, double *p_none,
                   double *busiest_flows)
{
    char spec[64];
    snprintf(spec, sizeof spec, "leafspine:2,%u,%u", gpus, up);
    arb_topo *t = topo(spec, NULL);
    arb_route *r = router(t, "ecmp");
    arb_route_load *l = NULL;
    REQUIRE_EQ_I(arb_route_load_new(&l, t), 0);
    arb_flow *f = calloc((size_t)gpus * qps, sizeof *f);
    arb_rng g;
    arb_rng_seed(&g, 5);
    double sum = 0, sumf = 0;
    int none = 0;
    const arb_node *leaf = arb_topo_node(t, arb_topo_node_id(t, 1, 0));
    for (int tr = 0; tr < trials; tr++) {
        arb_route_reseed(r, arb_rng_next(&g));
        for (uint32_t i = 0; i < gpus * qps; i++) {
            arb_flow x = {i / qps,
                          gpus + i / qps,
                          (uint16_t)(49152 + arb_rng_below(&g, 16384)),
                          4791,
                          (uint32_t)(arb_rng_next(&g) >> 40),
                          17,
                          0,
                          1.0 / qps};
            f[i] = x;
        }
        arb_route_load_reset(l);
        arb_route_load_phase(l, r, f, (size_t)gpus * qps);
        const uint32_t *fl = arb_route_load_flows(l);
        const double *dm = arb_route_load_demand(l);
        double best = 0;
        uint32_t bf = 0;
        for (unsigned q = 0; q < leaf->n_up; q++) {
            if (dm[leaf->first_up + q] > best) best = dm[leaf->first_up + q];
            if (fl[leaf->first_up + q] > bf) bf = fl[leaf->first_up + q];
        }
        sum += best;
        sumf += bf;
        none += bf <= 1;
    }
    free(f);
    arb_route_load_free(l);
    arb_route_free(r);
    arb_topo_free(t);
    if (p_none) *p_none = (double)none / trials;
    if (busiest_flows) *busiest_flows = sumf / trials;
    return sum / trials;
}

/*
 * With ECMP hashing like uniform random choice, the GPUS x QPS flows of
 * leaf 0 are balls in the UP uplinks: the busiest uplink carries M flows of
 * 1/QPS link each, so its mean demand is E[M] / QPS (exact, above). The
 * rack figures of docs/routing.md, "Collision figures, reproduced" (1.21x, none, 1.97x,
 * about 1.35x, 11% and about 2) are these expectations; the engine's means over the trials must lie
 * within 4 standard errors of them.
 */
static void rack_case(uint32_t gpus, uint32_t qps, uint32_t up, int trials)
{
    double none, bf, m, sd;
    double s = rack(gpus, qps, up, trials, &none, &bf);
    busiest_exact(gpus * qps, up, &m, &sd);
    double se = sd / sqrt(trials);
    printf("  %u GPUs x %u QPs, %u up: %.3f links (exact %.3f), busiest %.2f flows (exact %.2f)\n",
           gpus, qps, up, s, m / qps, bf, m);
    if (fabs(bf - m) > 4 * se)
        TESTKIT_REPORT("%u x %u on %u: busiest %.3f flows, exact %.3f +- %.3f", gpus, qps, up, bf,
                       m, 4 * se);
    if (fabs(s - m / qps) > 4 * se / qps)
        TESTKIT_REPORT("%u x %u on %u: busiest %.4f links, exact %.4f +- %.4f", gpus, qps, up, s,
                       m / qps, 4 * se / qps);
    if (qps == 1) {
        double p = p_no_collision(gpus, up), ptol = 4 * sqrt(p * (1 - p) / trials);
        if (fabs(none - p) > ptol)
            TESTKIT_REPORT("%u flows on %u: no shared uplink %.4f, exact %.4f +- %.4f", gpus, up,
                           none, p, ptol);
    }
}

TEST(leafspine_figures)
{
    rack_case(8, 4, 16, 2000);  /* published: 1.21x */
    rack_case(8, 16, 16, 1000); /* none: below one link */
    rack_case(16, 4, 16, 2000); /* 1.97x */
    rack_case(16, 4, 32, 2000); /* about 1.35x */
    rack_case(16, 1, 60, 4000); /* 11% with no shared uplink, busiest about 2 */
    /* and the published figures, from the exact model */
    double m, sd;
    busiest_exact(32, 16, &m, &sd);
    CHECK(fabs(m / 4 - 1.21) < 0.005);
    busiest_exact(128, 16, &m, &sd);
    CHECK(m / 16 < 1.0);
    busiest_exact(64, 16, &m, &sd);
    CHECK(fabs(m / 4 - 1.97) < 0.005);
    busiest_exact(64, 32, &m, &sd);
    CHECK(fabs(m / 4 - 1.35) < 0.01);
    busiest_exact(16, 60, &m, &sd);
    CHECK(fabs(p_no_collision(16, 60) - 0.11) < 0.005 && fabs(m - 2.0) < 0.05);
}

/*
 * Meta path pinning: leafspine:9,16,16, 16 GPUs on leaf 0 each send one
 * link of demand spread over every active GPU of 8 destination racks; k
 * racks have only slices 0..7. Busiest uplink 16/(16-k).
 */
static void pinning_case(uint32_t k, const char *fails, double *busiest, int *idle)
{
    arb_topo *t = topo("leafspine:9,16,16", fails);
    arb_route *r = router(t, "pinning");
    uint32_t active = 8 * (16 - k);
    arb_flow *f = calloc((size_t)16 * active, sizeof *f);
    size_t n = 0;
    for (uint32_t s = 0; s < 16; s++)
        for (uint32_t rk = 1; rk <= 8; rk++)
            for (uint32_t sl = 0; sl < (rk <= k ? 8u : 16u); sl++) {
                arb_flow x = {s, rk * 16 + sl, (uint16_t)(49152 + n), 4791, (uint32_t)n, 17,
                              0, 1.0 / active};
                f[n++] = x;
            }
    arb_route_load *l = NULL;
    REQUIRE_EQ_I(arb_route_load_new(&l, t), 0);
    arb_route_load_phase(l, r, f, n);
    const double *dm = arb_route_load_demand(l);
    const arb_node *leaf = arb_topo_node(t, arb_topo_node_id(t, 1, 0));
    *busiest = 0;
    *idle = 0;
    for (unsigned q = 0; q < leaf->n_up; q++) {
        double v = dm[leaf->first_up + q];
        if (v > *busiest) *busiest = v;
        if (v == 0) (*idle)++;
    }
    free(f);
    arb_route_load_free(l);
    arb_route_free(r);
    arb_topo_free(t);
}

TEST(pinning_figures)
{
    double b;
    int idle;
    pinning_case(0, NULL, &b, &idle);
    CHECK(fabs(b - 1.0) < 1e-9 && idle == 0);
    pinning_case(4, NULL, &b, &idle);
    CHECK(fabs(b - 16.0 / 12.0) < 1e-9 && idle == 0);
    pinning_case(8, NULL, &b, &idle);
    CHECK(fabs(b - 2.0) < 1e-9);
    CHECK_EQ_I(idle, 8);
    /* a failed uplink pushes its slice back to ECMP, on top of pinned slices */
    pinning_case(0, "up:L1.0:3", &b, &idle);
    CHECK(b > 1.0 + 1e-9);
    CHECK_EQ_I(idle, 1);
}

TEST(ecmp_seeds_and_polarization)
{
    arb_topo *t = topo("kary:4,3", NULL);
    arb_route *a = router(t, "ecmp"), *b = router(t, "ecmp"), *pol = router(t, "ecmp:polarized");
    arb_route_reseed(a, 11);
    arb_route_reseed(b, 11);
    int differ = 0;
    for (uint32_t s = 0; s < 64; s++) {
        arb_route_key k = key(s, (s + 37) % 64);
        char pa[256];
        snprintf(pa, sizeof pa, "%s", path_str(a, k));
        CHECK_STR(path_str(b, k), pa);
    }
    arb_route_reseed(b, 12);
    for (uint32_t s = 0; s < 64; s++) {
        arb_route_key k = key(s, (s + 37) % 64);
        char pa[256];
        snprintf(pa, sizeof pa, "%s", path_str(a, k));
        differ += strcmp(path_str(b, k), pa) != 0;
    }
    CHECK(differ > 0);
    /* Flows from leaf 0 to the far pods: of the pairs that share the leaf's
     * uplink, how many share the next uplink too? Polarized: all; per-switch
     * seeds: about 1/4. */
    int shared[2] = {0, 0}, again[2] = {0, 0};
    arb_rng g;
    arb_rng_seed(&g, 3);
    for (int trial = 0; trial < 400; trial++) {
        arb_route_key k1 = key(0, 16 + (uint32_t)arb_rng_below(&g, 48));
        arb_route_key k2 = key(1, 16 + (uint32_t)arb_rng_below(&g, 48));
        k1.sport = (uint16_t)(49152 + arb_rng_below(&g, 16384));
        k2.sport = (uint16_t)(49152 + arb_rng_below(&g, 16384));
        for (int v = 0; v < 2; v++) {
            arb_route *r = v ? pol : a;
            arb_route_reseed(r, arb_rng_next(&g));
            uint32_t p1[8], p2[8];
            arb_route_path(r, &k1, p1, 8);
            arb_route_path(r, &k2, p2, 8);
            if (p1[1] == p2[1]) {
                shared[v]++;
                again[v] += p1[2] == p2[2];
            }
        }
    }
    printf("  shared leaf uplink then next: per-switch %d/%d, polarized %d/%d\n", again[0],
           shared[0], again[1], shared[1]);
    CHECK(shared[1] > 50 && again[1] == shared[1]);
    CHECK(shared[0] > 50 && again[0] < shared[0] / 2);
    arb_route_free(a);
    arb_route_free(b);
    arb_route_free(pol);
    arb_topo_free(t);
}

TEST(eecmp_hashes_qp)
{
    arb_topo *t = topo("leafspine:2,4,16", NULL);
    arb_route *e = router(t, "ecmp"), *ee = router(t, "eecmp");
    uint32_t seen_e = 0, seen_ee = 0;
    for (uint32_t qp = 0; qp < 64; qp++) {
        arb_route_key k = key(0, 5);
        k.qp = qp;
        uint32_t p[8];
        arb_route_path(e, &k, p, 8);
        seen_e |= 1u << (p[1] % 32);
        arb_route_path(ee, &k, p, 8);
        seen_ee |= 1u << (p[1] % 32);
    }
    CHECK_EQ_I(__builtin_popcount(seen_e), 1);
    CHECK(__builtin_popcount(seen_ee) > 8);
    arb_route_free(e);
    arb_route_free(ee);
    arb_topo_free(t);
}

TEST(load_stats_hand)
{
    /* leafspine:4,2,2, dmodk, flows 0->5 and 1->5: host link 17 carries 2 flows;
     * leaf 0 ups: 5 mod 2 = 1 for both: port 11 carries 2. */
    arb_topo *t = topo("leafspine:4,2,2", NULL);
    arb_route *r = router(t, "dmodk");
    arb_route_load *l = NULL;
    REQUIRE_EQ_I(arb_route_load_new(&l, t), 0);
    arb_flow f[2] = {{0, 5, 1, 4791, 0, 17, 0, 0.5}, {1, 5, 1, 4791, 0, 17, 0, 1.0}};
    CHECK_EQ_I(arb_route_load_phase(l, r, f, 2), 0);
    arb_route_stats st;
    arb_route_load_stats(l, &st);
    CHECK_EQ_U(st.max_load, 2);
    CHECK_EQ_U(st.fabric_max_load, 2);
    CHECK_EQ_U(st.host_max_load, 2);
    CHECK(fabs(st.max_demand - 1.5) < 1e-12);
    CHECK_EQ_U(st.hops, 8);
    CHECK_EQ_U(st.live_links, 32); /* 8 host links + 8 leaf-spine links, both ways */
    CHECK(fabs(st.mean_load - 8.0 / 32) < 1e-12);
    CHECK_EQ_U(st.hist_len, 3);
    CHECK_EQ_U(st.hist[0], 27);
    CHECK_EQ_U(st.hist[1], 2);
    CHECK_EQ_U(st.hist[2], 3);
    CHECK_EQ_U(arb_route_load_flows(l)[11], 2);
    CHECK_EQ_U(arb_route_load_flows(l)[30], 2);
    /* a second phase resets the counts but keeps the maxima */
    arb_flow g1[1] = {{2, 3, 1, 4791, 0, 17, 0, 1.0}};
    arb_route_load_phase(l, r, g1, 1);
    CHECK_EQ_U(arb_route_load_flows(l)[11], 0);
    CHECK_EQ_U(arb_route_load_max_flows(l)[11], 2);
    arb_route_load_stats(l, &st);
    CHECK_EQ_U(st.phases, 2);
    CHECK_EQ_U(st.max_load, 2);
    arb_route_load_free(l);
    arb_route_free(r);
    /* a faster uplink halves its demand */
    arb_topo_free(t);
    arb_topo_config cfg = arb_topo_config_default();
    cfg.up_rate = 2 * cfg.rate;
    REQUIRE_EQ_I(arb_topo_new(&t, "leafspine:4,2,2", &cfg, NULL, 0), 0);
    r = router(t, "dmodk");
    REQUIRE_EQ_I(arb_route_load_new(&l, t), 0);
    arb_route_load_phase(l, r, f, 2);
    CHECK(fabs(arb_route_load_demand(l)[11] - 0.75) < 1e-12);
    arb_route_load_free(l);
    arb_route_free(r);
    arb_topo_free(t);
}

TEST(bad_specs)
{
    arb_topo *t = topo("kary:2,2", NULL);
    const char *bad[][2] = {{"foo", "unknown engine 'foo'"}, {"ecmp:x", "ecmp option 'x'"},
                            {"rnca:abc", "rnca seed 'abc'"}, {"dmodk:1", "dmodk takes no option"},
                            {"", "not an engine name"},      {"table:", "empty file name"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        arb_route *r = (arb_route *)1;
        char err[256] = "";
        CHECK_EQ_I(arb_route_new(&r, t, bad[i][0], NULL, err, sizeof err), ARB_EPARSE);
        CHECK(r == NULL);
        CHECK(strstr(err, bad[i][1]) != NULL);
    }
    for (int k = 0; k < ARB_ROUTE_KIND_COUNT; k++)
        CHECK(arb_route_kind_name(k) != NULL);
    CHECK(arb_route_kind_name(ARB_ROUTE_KIND_COUNT) == NULL);
    arb_route *r = router(t, "dmodk");
    arb_route_key k = key(0, 9);
    CHECK_EQ_U(arb_route_next(r, 0, &k, ARB_TOPO_NONE), ARB_ROUTE_NONE);
    k = key(0, 0);
    uint32_t p[4];
    CHECK_EQ_I(arb_route_path(r, &k, p, 4), ARB_EINVAL);
    k = key(0, 3);
    CHECK_EQ_I(arb_route_path(r, &k, p, 1), ARB_ENOSPC);
    arb_route_free(r);
    arb_topo_free(t);
}

int main(void)
{
    RUN(hand_dmodk_smodk);
    RUN(hand_dmodk_parallel);
    RUN(hand_pinning_table);
    RUN(hand_table_file);
    RUN(hand_updown_dmodc);
    RUN(hand_dmodc_divider);
    RUN(hand_ecmp_hash);
    RUN(hand_rnca);
    RUN(hand_adaptive);
    RUN(dmodk_shift_rlft_exhaustive);
    RUN(dmodk_slimmed_contention);
    RUN(dmodc_equals_dmodk_intact);
    RUN(updown_dmodc_degraded);
    RUN(bins_figures);
    RUN(leafspine_figures);
    RUN(pinning_figures);
    RUN(ecmp_seeds_and_polarization);
    RUN(eecmp_hashes_qp);
    RUN(load_stats_hand);
    RUN(bad_specs);
    RUN(candidate_range_matches_the_list);
    return testkit_done();
}
