/*
 * Unit tests of the planner (plan.h): trees, aggregating switches,
 * replication sets and fan-in vectors computed by hand on star:4,
 * leafspine:4,2,2 and a 3-level PGFT; every collective's channels; the
 * error of every invalid input; the planner on a hand-made fabric that is
 * no PGFT (paths of different lengths), through arb_plan_fabric alone.
 */
#include "arbor/plan.h"
#include "arbor/topo.h"

#include <stdlib.h>

#include "testkit.h"

static const uint32_t seq8[8] = {0, 1, 2, 3, 4, 5, 6, 7};

static arb_topo *topo(const char *spec)
{
    arb_topo *t = NULL;
    char err[256];
    REQUIRE_EQ_I(arb_topo_new(&t, spec, NULL, err, sizeof err), 0);
    return t;
}

static arb_plan *plan(const arb_topo *t, arb_coll coll, uint32_t n, uint64_t bytes, uint32_t subch,
                      uint32_t levels)
{
    arb_plan_config c;
    arb_plan_config_default(&c);
    c.coll = coll;
    c.ranks = seq8;
    c.n_ranks = n;
    c.bytes = bytes;
    c.subchannels = subch;
    c.agg_levels = levels;
    arb_plan *p = NULL;
    char err[256];
    int rc = arb_topo_plan(&p, t, &c, err, sizeof err);
    if (rc < 0) printf("  plan: %s\n", err);
    CHECK_EQ_I(rc, 0);
    return p;
}

static int fan_is(const arb_plan *p, uint32_t c, uint32_t m, uint32_t s, unsigned d, int f0, int f1,
                  int f2)
{
    const uint8_t *f = arb_plan_fanin(p, c, m, s);
    unsigned dep = arb_plan_depth(p, c, m, s);
    return f && dep == d && f[0] == f0 && f[1] == f1 && f[2] == f2;
}

static int has_child(const arb_plan *p, const arb_plan_entry *e, uint32_t port)
{
    for (uint32_t i = 0; i < e->n_children; i++)
        if (arb_plan_children(p, e)[i] == port) return 1;
    return 0;
}

TEST(star4_allreduce)
{
    arb_topo *t = topo("star:4");
    arb_plan *p = plan(t, ARB_COLL_ALLREDUCE, 4, 4096, 1, 0);
    if (!p) goto out;
    CHECK_EQ_U(arb_plan_n_channels(p), 4);
    CHECK_EQ_U(arb_plan_hdr_len(p) == 20, 0);
    CHECK_EQ_U(arb_plan_hdr_len(p), 16);
    CHECK_EQ_U(arb_plan_root_level(p), 1);
    for (uint32_t c = 0; c < 4; c++) {
        const arb_plan_channel *ch = arb_plan_get_channel(p, c);
        CHECK_EQ_U(ch->responder, c);
        CHECK_EQ_U(ch->n_members, 3);
        CHECK_EQ_U(ch->lo, c * 1024);
        CHECK_EQ_U(ch->hi, (c + 1) * 1024);
        CHECK_EQ_U(ch->kind, ARB_EP_PULL_RESULT);
        const arb_plan_tree *tr = arb_plan_get_tree(p, ch->first_tree);
        CHECK_EQ_U(tr->root, 4);
        CHECK_EQ_U(tr->max_depth, 1);
        CHECK_EQ_U(tr->n_entries, 5); /* 4 hosts and the switch */
        const arb_plan_entry *sw = arb_plan_find(p, ch->first_tree, 4);
        CHECK(sw && sw->aggregate && sw->up_port == ARB_PLAN_NONE && sw->n_children == 3);
        for (uint32_t h = 0; h < 4 && sw; h++) {
            uint32_t down = arb_topo_node(t, 4)->first_port + h;
            CHECK_EQ_U(has_child(p, sw, down), h != c);
        }
        const arb_plan_entry *rh = arb_plan_find(p, ch->first_tree, c);
        CHECK(rh && rh->up_port == arb_topo_node(t, c)->first_up && rh->n_children == 0);
        for (uint32_t m = 0; m < 3; m++) {
            CHECK(fan_is(p, c, m, 0, 1, 3, 1, 1));
            CHECK(arb_plan_member(p, c, m) != c);
        }
    }
    CHECK(arb_plan_fanin(p, 4, 0, 0) == NULL);
    CHECK(arb_plan_fanin(p, 0, 3, 0) == NULL);
out:
    arb_plan_free(p);
    arb_topo_free(t);
}

TEST(two_ranks_point_to_point)
{
    arb_topo *t = topo("star:4");
    uint32_t r[2] = {0, 3};
    arb_plan_config c;
    arb_plan_config_default(&c);
    c.ranks = r;
    c.n_ranks = 2;
    c.bytes = 8192;
    arb_plan *p = NULL;
    REQUIRE_EQ_I(arb_topo_plan(&p, t, &c, NULL, 0), 0);
    if (p) {
        CHECK_EQ_U(arb_plan_n_channels(p), 2);
        CHECK(fan_is(p, 0, 0, 0, 1, 1, 1, 1));
        CHECK(fan_is(p, 1, 0, 0, 1, 1, 1, 1));
        CHECK_EQ_U(arb_plan_member(p, 1, 0), 0);
        CHECK_EQ_U(arb_plan_get_channel(p, 1)->responder_host, 3);
        CHECK_EQ_U(arb_plan_get_channel(p, 0)->hi, 4096);
        CHECK_EQ_U(arb_plan_hdr_len(p) == 20, 0);
    }
    arb_plan_free(p);
    arb_topo_free(t);
}

/* leafspine:4,2,2: hosts 0-7 (host h on leaf 8 + h/2), spines 12, 13. */
TEST(leafspine_two_tiers)
{
    arb_topo *t = topo("leafspine:4,2,2");
    arb_plan *p = plan(t, ARB_COLL_ALLREDUCE, 8, 8 * 8192, 2, 0);
    if (!p) goto out;
    CHECK_EQ_U(arb_plan_root_level(p), 2);
    CHECK_EQ_U(arb_plan_hdr_len(p) == 20, 1);
    CHECK_EQ_U(arb_plan_hdr_len(p), 20);
    /* channel 0: subchannel 0 on spine 12, 1 on spine 13; channel 1: 13, 12 */
    CHECK_EQ_U(arb_plan_get_tree(p, 0)->root, 12);
    CHECK_EQ_U(arb_plan_get_tree(p, 1)->root, 13);
    CHECK_EQ_U(arb_plan_get_tree(p, 2)->root, 13);
    CHECK_EQ_U(arb_plan_get_tree(p, 3)->root, 12);
    /* channel 0, members 1..7: leaf 8 holds host 1 only: it does not aggregate */
    const arb_plan_entry *l8 = arb_plan_find(p, 0, 8), *l9 = arb_plan_find(p, 0, 9);
    const arb_plan_entry *sp = arb_plan_find(p, 0, 12);
    CHECK(l8 && !l8->aggregate && l8->gathers == 1 && l8->n_children == 1);
    CHECK(l9 && l9->aggregate && l9->gathers == 2 && l9->n_children == 2);
    CHECK(sp && sp->aggregate && sp->gathers == 7 && sp->n_children == 4);
    CHECK(arb_plan_find(p, 0, 13) == NULL);
    if (l8) {
        CHECK(has_child(p, l8, arb_topo_node(t, 8)->first_port + 1));
        CHECK_EQ_U(l8->up_port, arb_topo_node(t, 8)->first_up + 0);
    }
    CHECK(fan_is(p, 0, 0, 0, 1, 7, 1, 1)); /* host 1 */
    CHECK(fan_is(p, 0, 1, 0, 2, 7, 2, 1)); /* host 2 */
    CHECK(fan_is(p, 0, 6, 1, 2, 7, 2, 1)); /* host 7 on subchannel 1 */
    const arb_plan_entry *l8b = arb_plan_find(p, 1, 8);
    CHECK(l8b && l8b->up_port == arb_topo_node(t, 8)->first_up + 1);
    /* channel 3 (responder host 3 on leaf 9): leaf 9 gathers host 2 only */
    CHECK(fan_is(p, 3, 0, 0, 2, 7, 2, 1)); /* host 0 */
    CHECK(fan_is(p, 3, 2, 0, 1, 7, 1, 1)); /* host 2 */
    /* spine only: leaf 9 would send hosts 2 and 3 up one port, and the
     * spine counts one contribution per port: refused */
    arb_plan_config c = *arb_plan_get_config(p);
    c.ranks = seq8; /* p's copy goes with p */
    c.subchannels = 1;
    c.agg_levels = 1u << 2;
    arb_plan_free(p);
    p = NULL;
    char err[256];
    CHECK_EQ_I(arb_topo_plan(&p, t, &c, err, sizeof err), ARB_EINVAL);
    CHECK(strstr(err, "level-1 switch") != NULL && strstr(err, "add level 1") != NULL);
    /* one rank per leaf: spine only is valid, 16 B headers */
    uint32_t per_leaf[4] = {0, 2, 4, 6};
    c.ranks = per_leaf;
    c.n_ranks = 4;
    c.bytes = 4 * 8192;
    REQUIRE_EQ_I(arb_topo_plan(&p, t, &c, err, sizeof err), 0);
    if (!p) goto out;
    CHECK_EQ_U(arb_plan_hdr_len(p) == 20, 0);
    CHECK(fan_is(p, 0, 0, 0, 1, 3, 1, 1));
    CHECK(!arb_plan_find(p, 0, 9)->aggregate);
    arb_plan_free(p);
    /* four ranks on two leaves */
    p = plan(t, ARB_COLL_ALLREDUCE, 4, 4 * 4, 1, 0);
    if (!p) goto out;
    CHECK_EQ_U(arb_plan_root_level(p), 2);
    CHECK(fan_is(p, 0, 0, 0, 1, 3, 1, 1)); /* host 1 alone under leaf 8 */
    CHECK(fan_is(p, 0, 1, 0, 2, 3, 2, 1)); /* host 2 */
    arb_plan_free(p);
    /* two ranks under one leaf: the leaf is the root */
    p = plan(t, ARB_COLL_ALLREDUCE, 2, 8, 1, 0);
    if (!p) goto out;
    CHECK_EQ_U(arb_plan_root_level(p), 1);
    CHECK_EQ_U(arb_plan_get_tree(p, 0)->root, 8);
    CHECK(fan_is(p, 0, 0, 0, 1, 1, 1, 1));
out:
    arb_plan_free(p);
    arb_topo_free(t);
}

/* pgft:3;2,2,2;1,2,2;1,1,1: 8 hosts, leaves of 2 hosts, pods of 4 hosts,
 * 4 top switches; every host below every top switch. */
TEST(pgft_three_levels)
{
    arb_topo *t = topo("pgft:3;2,2,2;1,2,2;1,1,1");
    arb_plan *p = plan(t, ARB_COLL_ALLREDUCE, 8, 8 * 4096, 1, 0);
    if (!p) goto out;
    CHECK_EQ_U(arb_plan_root_level(p), 3);
    CHECK_EQ_U(arb_plan_hdr_len(p) == 20, 1);
    CHECK_EQ_U(arb_topo_node(t, arb_plan_get_tree(p, 0)->root)->level, 3);
    CHECK_EQ_U(arb_topo_node(t, arb_plan_get_tree(p, 0)->root)->index, 0);
    CHECK_EQ_U(arb_topo_node(t, arb_plan_get_tree(p, 1)->root)->index, 1);
    CHECK_EQ_U(arb_topo_node(t, arb_plan_get_tree(p, 5)->root)->index, 1);
    /* channel 0, members 1..7 */
    CHECK(fan_is(p, 0, 0, 0, 2, 7, 3, 1)); /* host 1: its leaf gathers it alone */
    CHECK(fan_is(p, 0, 1, 0, 3, 7, 3, 2)); /* host 2 */
    CHECK(fan_is(p, 0, 3, 0, 3, 7, 4, 2)); /* host 4 */
    CHECK(fan_is(p, 0, 6, 0, 3, 7, 4, 2)); /* host 7 */
    CHECK_EQ_U(arb_plan_get_tree(p, 0)->max_depth, 3);
    /* 16 B headers cannot carry it */
    arb_plan_config c = *arb_plan_get_config(p);
    c.header = 16;
    arb_plan *q = NULL;
    char err[256];
    CHECK_EQ_I(arb_topo_plan(&q, t, &c, err, sizeof err), ARB_ERANGE);
    CHECK(strstr(err, "16 B") != NULL);
    /* top and leaves only: the pod switches would send the aggregates of
     * two leaves up one port, and the root counts one contribution per
     * port (docs/protocol.md section 5), so the placement is refused */
    c.header = 0;
    c.agg_levels = (1u << 1) | (1u << 3);
    CHECK_EQ_I(arb_topo_plan(&q, t, &c, err, sizeof err), ARB_EINVAL);
    CHECK(q == NULL);
    CHECK(strstr(err, "add level 2") != NULL);
    /* the root alone: the leaves merge two requesters */
    c.agg_levels = 1u << 3;
    CHECK_EQ_I(arb_topo_plan(&q, t, &c, err, sizeof err), ARB_EINVAL);
    CHECK(strstr(err, "does not aggregate") != NULL);
    /* one rank per pod (hosts 0 and 4): the leaves and pod switches pass a
     * single requester each, so the root alone is a valid placement */
    uint32_t two[2] = {0, 4};
    c.ranks = two;
    c.n_ranks = 2;
    c.bytes = 2 * 4096;
    REQUIRE_EQ_I(arb_topo_plan(&q, t, &c, err, sizeof err), 0);
    if (q) CHECK(fan_is(q, 0, 0, 0, 1, 1, 1, 1));
    arb_plan_free(q);
    q = NULL;
    /* one rank per leaf (hosts 0, 2, 4, 6): level 1 can be left out, not level 2 */
    uint32_t four[4] = {0, 2, 4, 6};
    c.ranks = four;
    c.n_ranks = 4;
    c.bytes = 4 * 4096;
    c.agg_levels = (1u << 2) | (1u << 3);
    REQUIRE_EQ_I(arb_topo_plan(&q, t, &c, err, sizeof err), 0);
    if (q) CHECK(fan_is(q, 0, 0, 0, 1, 3, 1, 1)); /* host 2: only the root gathers (3) */
    arb_plan_free(q);
    q = NULL;
    c.agg_levels = 1u << 3;
    CHECK_EQ_I(arb_topo_plan(&q, t, &c, err, sizeof err), ARB_EINVAL);
out:
    arb_plan_free(p);
    arb_topo_free(t);
}

TEST(collectives)
{
    arb_topo *t = topo("star:4");
    arb_plan_config c;
    arb_plan_config_default(&c);
    c.ranks = seq8;
    c.n_ranks = 4;
    c.bytes = 4000;
    c.root = 2;
    static const struct {
        arb_coll coll;
        uint32_t channels;
        arb_ep_kind kind;
        arb_op op;
    } want[] = {{ARB_COLL_ALLREDUCE, 4, ARB_EP_PULL_RESULT, ARB_OP_SUM},
                {ARB_COLL_REDUCE, 1, ARB_EP_PULL_COMPLETION, ARB_OP_SUM},
                {ARB_COLL_REDUCESCATTER, 4, ARB_EP_PULL_COMPLETION, ARB_OP_SUM},
                {ARB_COLL_BROADCAST, 1, ARB_EP_PUSH, ARB_OP_NOP},
                {ARB_COLL_ALLGATHER, 4, ARB_EP_PUSH, ARB_OP_NOP},
                {ARB_COLL_BARRIER, 4, ARB_EP_BARRIER, ARB_OP_NOP}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        c.coll = want[i].coll;
        arb_plan *p = NULL;
        REQUIRE_EQ_I(arb_topo_plan(&p, t, &c, NULL, 0), 0);
        if (!p) continue;
        CHECK_EQ_U(arb_plan_n_channels(p), want[i].channels);
        CHECK_EQ_U(arb_plan_get_channel(p, 0)->kind, want[i].kind);
        CHECK_EQ_U(arb_plan_get_channel(p, 0)->op, want[i].op);
        if (want[i].channels == 1) {
            CHECK_EQ_U(arb_plan_get_channel(p, 0)->responder, 2);
            CHECK_EQ_U(arb_plan_get_channel(p, 0)->hi, 4000);
            CHECK_EQ_U(arb_plan_member(p, 0, 0), 0);
            CHECK_EQ_U(arb_plan_member(p, 0, 2), 3);
        } else if (want[i].coll != ARB_COLL_BARRIER) {
            /* 1000 elements over 4: 250 each */
            CHECK_EQ_U(arb_plan_get_channel(p, 1)->lo, 1000);
            CHECK_EQ_U(arb_plan_get_channel(p, 3)->hi, 4000);
        } else {
            CHECK_EQ_U(arb_plan_get_channel(p, 3)->hi, 0);
        }
        arb_plan_free(p);
    }
    CHECK_STR(arb_coll_name(ARB_COLL_REDUCESCATTER), "reducescatter");
    CHECK_EQ_I(arb_coll_parse("AllGather"), ARB_COLL_ALLGATHER);
    CHECK_EQ_I(arb_coll_parse("gather"), ARB_ENOENT);
    CHECK(arb_coll_name(ARB_COLL_COUNT) == NULL);
    /* AllToAll is a host collective only: the planner refuses it */
    c.coll = ARB_COLL_ALLTOALL;
    arb_plan *a2a = NULL;
    CHECK_EQ_I(arb_topo_plan(&a2a, t, &c, NULL, 0), ARB_EINVAL);
    CHECK(a2a == NULL);
    /* uneven split: 10 elements over 4 channels: 2, 3, 2, 3 */
    c.coll = ARB_COLL_ALLREDUCE;
    c.bytes = 40;
    arb_plan *p = NULL;
    REQUIRE_EQ_I(arb_topo_plan(&p, t, &c, NULL, 0), 0);
    if (p) {
        CHECK_EQ_U(arb_plan_get_channel(p, 0)->hi, 8);
        CHECK_EQ_U(arb_plan_get_channel(p, 1)->hi, 20);
        CHECK_EQ_U(arb_plan_get_channel(p, 2)->hi, 28);
        CHECK_EQ_U(arb_plan_get_channel(p, 3)->hi, 40);
    }
    arb_plan_free(p);
    arb_topo_free(t);
}

/* root_offset moves every tree's root by that many top switches (mod
 * their number): four ranks on four leaves of leafspine:4,2,8, channel c
 * rooted at spine (c + offset) mod 8. */
TEST(root_offset_moves_the_roots)
{
    arb_topo *t = topo("leafspine:4,2,8");
    static const uint32_t across[4] = {0, 2, 4, 6}; /* one host per leaf */
    uint32_t offsets[2] = {0, 5};
    for (int o = 0; o < 2; o++) {
        arb_plan_config c;
        arb_plan_config_default(&c);
        c.ranks = across;
        c.n_ranks = 4;
        c.bytes = 1 << 20;
        c.root_offset = offsets[o];
        arb_plan *p = NULL;
        REQUIRE_EQ_I(arb_topo_plan(&p, t, &c, NULL, 0), 0);
        if (!p) continue;
        CHECK_EQ_U(arb_plan_n_trees(p), 4);
        for (uint32_t k = 0; k < arb_plan_n_trees(p); k++) {
            const arb_plan_tree *tr = arb_plan_get_tree(p, k);
            CHECK_EQ_U(tr->root, arb_topo_node_id(t, 2, (tr->channel + offsets[o]) % 8));
        }
        arb_plan_free(p);
    }
    arb_topo_free(t);
}

TEST(invalid_inputs)
{
    arb_topo *t = topo("star:4");
    uint32_t many[300];
    for (uint32_t i = 0; i < 300; i++)
        many[i] = i;
    arb_plan_config c;
    arb_plan *p = (arb_plan *)&c; /* set to NULL on failure */
    char err[256];
#define BAD(code, field, value, text)                                                              \
    do {                                                                                           \
        arb_plan_config_default(&c);                                                               \
        c.ranks = seq8;                                                                            \
        c.n_ranks = 4;                                                                             \
        c.bytes = 4096;                                                                            \
        c.field = value;                                                                           \
        CHECK_EQ_I(arb_topo_plan(&p, t, &c, err, sizeof err), code);                               \
        CHECK(p == NULL);                                                                          \
        if (!strstr(err, text)) TESTKIT_REPORT("error '%s' lacks '%s'", err, text);                \
    } while (0)
    BAD(ARB_EINVAL, n_ranks, 1, "2..256");
    BAD(ARB_EINVAL, n_ranks, 8, "host 4");
    BAD(ARB_EINVAL, coll, (arb_coll)6, "collective");
    BAD(ARB_EINVAL, dtype, (arb_dtype)9, "dtype");
    BAD(ARB_EINVAL, subchannels, 0, "subchannels");
    BAD(ARB_EINVAL, header, 18, "header");
    BAD(ARB_EINVAL, bytes, 4097, "whole number");
#undef BAD
    arb_plan_config_default(&c);
    c.ranks = many;
    c.n_ranks = 257;
    CHECK_EQ_I(arb_topo_plan(&p, t, &c, err, sizeof err), ARB_EINVAL);
    uint32_t dup[3] = {1, 2, 1};
    c.ranks = dup;
    c.n_ranks = 3;
    CHECK_EQ_I(arb_topo_plan(&p, t, &c, err, sizeof err), ARB_EINVAL);
    CHECK(strstr(err, "both on host 1") != NULL);
    c.ranks = seq8;
    c.coll = ARB_COLL_BROADCAST;
    c.root = 3;
    c.n_ranks = 3;
    CHECK_EQ_I(arb_topo_plan(&p, t, &c, err, sizeof err), ARB_EINVAL);
    CHECK(strstr(err, "root rank 3") != NULL);
    CHECK_EQ_I(arb_topo_plan(&p, NULL, &c, err, sizeof err), ARB_EINVAL);
    /* a failed host link: no path */
    arb_topo_fail(t, "link:h1-L1.0", NULL, 0);
    c.coll = ARB_COLL_ALLREDUCE;
    CHECK_EQ_I(arb_topo_plan(&p, t, &c, err, sizeof err), ARB_ENOENT);
    CHECK(strstr(err, "no live path from host 1") != NULL);
    arb_topo_free(t);
}

/* A fabric that is no PGFT, described by hand: hosts 0 and 1 under switch A
 * (node 3, level 1), host 2 straight under the root R (node 4, level 2), A
 * under R. Ports: h0 up 0 (A's side 1), h1 up 2 (3), h2 up 4 (R's side 5),
 * A up 6 (R's side 7). `broken` hosts have no path. */
struct hand {
    uint32_t broken;   /* host without a path, or ARB_PLAN_NONE */
    uint32_t bad_node; /* 1: host 0's path names a node out of range */
};

static int hand_path(const void *ctx, uint32_t host, uint32_t root, arb_plan_hop *hops)
{
    const struct hand *x = ctx;
    (void)root;
    if (host == x->broken) return ARB_ENOENT;
    static const uint32_t up[3] = {0, 2, 4}, peer[3] = {1, 3, 5};
    hops[0] = (arb_plan_hop){host, up[host], peer[host], 0};
    if (host == 2) {
        hops[1] = (arb_plan_hop){4, ARB_PLAN_NONE, ARB_PLAN_NONE, 2};
        return 2;
    }
    hops[1] = (arb_plan_hop){3, 6, 7, 1};
    hops[2] = (arb_plan_hop){x->bad_node && host == 0 ? 9 : 4, ARB_PLAN_NONE, ARB_PLAN_NONE, 2};
    return 3;
}

TEST(hand_made_fabric)
{
    struct hand x = {ARB_PLAN_NONE, 0};
    arb_plan_fabric f = {
        .n_hosts = 3, .n_nodes = 5, .n_roots = 1, .root_level = 2, .path = hand_path, .ctx = &x};
    arb_plan_config c;
    arb_plan_config_default(&c);
    c.ranks = seq8;
    c.n_ranks = 3;
    c.bytes = 3 * 64;
    arb_plan *p = NULL;
    char err[256];
    REQUIRE_EQ_I(arb_plan_new(&p, &f, &c, err, sizeof err), 0);
    if (!p) return;
    CHECK_EQ_U(arb_plan_n_channels(p), 3);
    CHECK_EQ_U(arb_plan_n_trees(p), 3);
    CHECK_EQ_U(arb_plan_root_level(p), 2);
    /* channel 2 (responder host 2): ranks 0 and 1 meet at A, which gathers
     * two and so aggregates; R is the root. Two tiers: 20 B headers. */
    CHECK(fan_is(p, 2, 0, 0, 2, 2, 2, 1));
    CHECK(fan_is(p, 2, 1, 0, 2, 2, 2, 1));
    CHECK_EQ_U(arb_plan_hdr_len(p), 20);
    const arb_plan_entry *a = arb_plan_find(p, 2, 3), *r = arb_plan_find(p, 2, 4);
    CHECK(a && a->aggregate && a->level == 1 && a->up_port == 6 && a->n_children == 2);
    CHECK(a && has_child(p, a, 1) && has_child(p, a, 3));
    CHECK(r && r->aggregate && r->up_port == ARB_PLAN_NONE && r->n_children == 1);
    CHECK(r && has_child(p, r, 7));
    CHECK_EQ_U(arb_plan_get_tree(p, 2)->root, 4);
    CHECK_EQ_U(arb_plan_get_tree(p, 2)->max_depth, 2);
    /* channel 0 (responder host 0): A passes host 1 on alone, so it does not
     * aggregate; R gathers hosts 1 and 2 */
    const arb_plan_entry *a0 = arb_plan_find(p, 0, 3), *r0 = arb_plan_find(p, 0, 4);
    CHECK(a0 && !a0->aggregate && a0->n_children == 1 && has_child(p, a0, 3));
    CHECK(r0 && r0->aggregate && r0->n_children == 2 && has_child(p, r0, 7) && has_child(p, r0, 5));
    CHECK(fan_is(p, 0, 0, 0, 1, 2, 1, 1));
    CHECK(fan_is(p, 0, 1, 0, 1, 2, 1, 1));
    CHECK_EQ_U(arb_plan_host(p, 2), 2);
    CHECK_EQ_U(arb_plan_host(p, 3), ARB_PLAN_NONE);
    CHECK_EQ_U(arb_plan_member(p, 0, 1), 2);
    CHECK_EQ_U(arb_plan_member(p, 0, 2), ARB_PLAN_NONE);
    CHECK(arb_plan_get_channel(p, 3) == NULL && arb_plan_get_tree(p, 3) == NULL);
    CHECK(arb_plan_get_entry(p, arb_plan_n_entries(p)) == NULL);
    CHECK(arb_plan_get_entry(p, 1) == arb_plan_get_entry(p, 0) + 1);
    arb_plan_free(p);
    p = NULL;
    /* the fabric's errors: a host with no path, a node out of range, no roots */
    x.broken = 1;
    CHECK_EQ_I(arb_plan_new(&p, &f, &c, err, sizeof err), ARB_ENOENT);
    CHECK(strstr(err, "no live path from host 1") != NULL);
    x.broken = ARB_PLAN_NONE;
    x.bad_node = 1;
    CHECK_EQ_I(arb_plan_new(&p, &f, &c, err, sizeof err), ARB_EINVAL);
    CHECK(strstr(err, "names node 9 of 5") != NULL);
    x.bad_node = 0;
    f.n_roots = 0;
    CHECK_EQ_I(arb_plan_new(&p, &f, &c, err, sizeof err), ARB_EINVAL);
    f.n_roots = 1;
    c.n_ranks = 4; /* rank 3 on host 3: the fabric has 3 */
    CHECK_EQ_I(arb_plan_new(&p, &f, &c, err, sizeof err), ARB_EINVAL);
    CHECK(p == NULL);
}

/* arb_plan_find's index answers what a scan of every tree's entries
 * answers, for every (tree, node) of the fabric and one past its end, and
 * arb_plan_find_sub names the channel's first_tree + s. */
static void find_matches_scan(const arb_topo *t, const arb_plan *p)
{
    uint32_t n_nodes = arb_topo_n_nodes(t), bad = 0, found = 0;
    for (uint32_t tr = 0; tr <= arb_plan_n_trees(p); tr++)
        for (uint32_t node = 0; node <= n_nodes; node++) {
            const arb_plan_entry *want = NULL;
            const arb_plan_tree *tt = arb_plan_get_tree(p, tr);
            for (uint32_t x = 0; tt && x < tt->n_entries; x++)
                if (arb_plan_get_entry(p, tt->first_entry + x)->node == node)
                    want = arb_plan_get_entry(p, tt->first_entry + x);
            if (arb_plan_find(p, tr, node) != want) bad++;
            if (want) found++;
        }
    CHECK_EQ_U(bad, 0);
    CHECK_EQ_U(found, arb_plan_n_entries(p));
    uint32_t subs = arb_plan_get_config(p)->subchannels;
    for (uint32_t c = 0; c < arb_plan_n_channels(p); c++)
        for (uint32_t s = 0; s < subs; s++) {
            const arb_plan_tree *tt =
                arb_plan_get_tree(p, arb_plan_get_channel(p, c)->first_tree + s);
            const arb_plan_entry *root = NULL;
            for (uint32_t x = 0; x < tt->n_entries; x++)
                if (arb_plan_get_entry(p, tt->first_entry + x)->node == tt->root)
                    root = arb_plan_get_entry(p, tt->first_entry + x);
            CHECK(root != NULL && arb_plan_find_sub(p, c, s, tt->root) == root);
        }
    CHECK(arb_plan_find_sub(p, arb_plan_n_channels(p), 0, 0) == NULL);
    CHECK(arb_plan_find_sub(p, 0, subs, arb_plan_get_tree(p, 0)->root) == NULL);
    CHECK(arb_plan_find(NULL, 0, 0) == NULL && arb_plan_find_sub(NULL, 0, 0, 0) == NULL);
}

TEST(find_index)
{
    const char *fabrics[] = {"star:4", "leafspine:4,2,2", "kary:4,2", "pgft:3;2,2,2;1,2,2;1,1,1"};
    for (size_t i = 0; i < sizeof fabrics / sizeof *fabrics; i++) {
        arb_topo *t = topo(fabrics[i]);
        if (!t) continue;
        uint32_t n = arb_topo_n_hosts(t) < 8 ? arb_topo_n_hosts(t) : 8;
        arb_plan *p = plan(t, ARB_COLL_ALLREDUCE, n, (uint64_t)n * 8192, 2, 0);
        if (p) find_matches_scan(t, p);
        arb_plan_free(p);
        arb_topo_free(t);
    }
}

int main(void)
{
    RUN(star4_allreduce);
    RUN(two_ranks_point_to_point);
    RUN(leafspine_two_tiers);
    RUN(pgft_three_levels);
    RUN(collectives);
    RUN(invalid_inputs);
    RUN(root_offset_moves_the_roots);
    RUN(hand_made_fabric);
    RUN(find_index);
    return testkit_done();
}
