/*
 * Unit tests: topology generators against hand-counted small fabrics,
 * docs/topology.md's wiring rule checked digit by digit, D-mod-k over the built
 * ports, failures, names and every kind of bad spec.
 */
#include "arbor/topo.h"
#include "testkit.h"

#include <stdlib.h>

static arb_topo *build(const char *spec)
{
    arb_topo *t = NULL;
    char err[256];
    int rc = arb_topo_new(&t, spec, NULL, err, sizeof err);
    if (rc < 0) printf("  build %s: %s\n", spec, err);
    REQUIRE(t != NULL);
    return t;
}

/* Node id of a name, or ARB_TOPO_NONE. */
static uint32_t id(const arb_topo *t, const char *name)
{
    uint32_t n;
    return arb_topo_find(t, name, &n) == 0 ? n : ARB_TOPO_NONE;
}

/* The node of a name; the test stops when there is none. */
static const arb_node *named(const arb_topo *t, const char *name)
{
    const arb_node *n = arb_topo_node(t, id(t, name));
    if (!n) printf("  no node %s\n", name);
    REQUIRE(n != NULL);
    return n;
}

/* The port record of up port q / down port d of a named node (the test
 * stops when there is no such port). */
static const arb_port *up(const arb_topo *t, const char *name, uint32_t q)
{
    const arb_node *n = named(t, name);
    REQUIRE(q < n->n_up);
    return arb_topo_port(t, n->first_up + q);
}

static const arb_port *down(const arb_topo *t, const char *name, uint32_t d)
{
    const arb_node *n = named(t, name);
    REQUIRE(d < n->n_down);
    return arb_topo_port(t, n->first_port + d);
}

/* Port p goes to node `peer` (by name), arriving on its port number `num` of the other role. */
#define CHECK_LINK(t, p, peer_name, peer_num, par)                                                 \
    do {                                                                                           \
        const arb_port *p_ = (p);                                                                  \
        CHECK(p_ != NULL);                                                                         \
        if (p_) {                                                                                  \
            CHECK_EQ_U(p_->peer, id(t, peer_name));                                                \
            CHECK_EQ_U(arb_topo_port(t, p_->peer_port)->num, peer_num);                            \
            CHECK_EQ_U(p_->parallel, par);                                                         \
        }                                                                                          \
    } while (0)

/* Counts per level and totals. */
static void check_counts(const arb_topo *t, unsigned h, const uint32_t *sizes, uint32_t ports)
{
    CHECK_EQ_U(arb_topo_height(t), h);
    uint32_t nodes = 0;
    for (unsigned l = 0; l <= h; l++) {
        CHECK_EQ_U(arb_topo_level_size(t, l), sizes[l]);
        CHECK_EQ_U(arb_topo_level_first(t, l), nodes);
        nodes += sizes[l];
    }
    CHECK_EQ_U(arb_topo_n_hosts(t), sizes[0]);
    CHECK_EQ_U(arb_topo_n_nodes(t), nodes);
    CHECK_EQ_U(arb_topo_n_ports(t), ports);
    CHECK_EQ_U(arb_topo_level_size(t, h + 1), 0);
}

/*
 * Every structural invariant, checked on every port:
 *  - peer/peer_port symmetry, opposite roles, same tier, parallel, rate;
 *  - docs/topology.md: an up port q of a level-l node reaches the level-(l+1) node
 *    whose digit l+1 is q mod w_{l+1}, on parallel link floor(q / w_{l+1}),
 *    every other digit equal; the down port d reaches digit l = d mod m_l
 *    on parallel link floor(d / m_l);
 *  - ports are contiguous and ordered down then up.
 */
static void check_invariants(const arb_topo *t)
{
    const arb_pgft *g = arb_topo_pgft(t);
    const arb_node *nodes = arb_topo_nodes(t);
    const arb_port *ports = arb_topo_ports(t);
    uint32_t next = 0;
    for (uint32_t i = 0; i < arb_topo_n_nodes(t) && !TEST_FAILING(); i++) {
        const arb_node *n = &nodes[i];
        unsigned l = n->level;
        CHECK_EQ_U(n->first_port, next);
        CHECK_EQ_U(n->first_up, n->first_port + n->n_down);
        CHECK_EQ_U(n->kind, l == 0 ? ARB_NODE_HOST : ARB_NODE_SWITCH);
        CHECK_EQ_U(i, arb_topo_level_first(t, l) + n->index);
        CHECK_EQ_U(n->n_down, l ? g->m[l] * g->p[l] : 0);
        CHECK_EQ_U(n->n_up, l < g->h ? g->w[l + 1] * g->p[l + 1] : 0);
        next += (uint32_t)n->n_down + n->n_up;
        for (uint32_t k = 0; k < (uint32_t)n->n_down + n->n_up; k++) {
            uint32_t pi = n->first_port + k;
            const arb_port *p = &ports[pi];
            REQUIRE(p->peer_port < arb_topo_n_ports(t) && p->peer < arb_topo_n_nodes(t));
            const arb_port *r = &ports[p->peer_port];
            const arb_node *peer = &nodes[p->peer];
            int is_up = k >= n->n_down;
            CHECK_EQ_U(p->role, is_up ? ARB_LINK_UP : ARB_LINK_DOWN);
            CHECK_EQ_U(p->num, is_up ? k - n->n_down : k);
            CHECK_EQ_U(r->peer_port, pi);
            CHECK_EQ_U(r->peer, i);
            CHECK_EQ_U(arb_topo_port_owner(t, pi), i);
            CHECK(r->role != p->role);
            CHECK_EQ_U(r->tier, p->tier);
            CHECK_EQ_U(r->parallel, p->parallel);
            CHECK_EQ_U(r->rate, p->rate);
            CHECK_EQ_U(p->tier, is_up ? l : l - 1);
            CHECK_EQ_U(peer->level, is_up ? l + 1 : l - 1);
            unsigned lo = is_up ? l : l - 1; /* the child's level */
            const arb_node *child = is_up ? n : peer, *parent = is_up ? peer : n;
            uint32_t q = is_up ? p->num : r->num, d = is_up ? r->num : p->num;
            uint32_t wn = g->w[lo + 1], mn = g->m[lo + 1];
            CHECK_EQ_U(arb_pgft_node_digit(g, lo + 1, parent->index, lo + 1), q % wn);
            CHECK_EQ_U(p->parallel, q / wn);
            CHECK_EQ_U(arb_pgft_node_digit(g, lo, child->index, lo + 1), d % mn);
            CHECK_EQ_U(p->parallel, d / mn);
            for (unsigned di = 1; di <= g->h; di++)
                if (di != lo + 1)
                    CHECK_EQ_U(arb_pgft_node_digit(g, lo, child->index, di),
                               arb_pgft_node_digit(g, lo + 1, parent->index, di));
        }
    }
    CHECK_EQ_U(next, arb_topo_n_ports(t));
}

/*
 * For every switch and host: arb_pgft_below agrees with the digits, and
 * following arb_pgft_down_port from any switch above j reaches host j.
 */
static void check_down_ports(const arb_topo *t)
{
    const arb_pgft *g = arb_topo_pgft(t);
    const arb_node *nodes = arb_topo_nodes(t);
    const arb_port *ports = arb_topo_ports(t);
    for (uint32_t i = arb_topo_n_hosts(t); i < arb_topo_n_nodes(t) && !TEST_FAILING(); i++) {
        const arb_node *n = &nodes[i];
        for (uint32_t j = 0; j < arb_topo_n_hosts(t); j++) {
            int below = 1;
            for (unsigned di = n->level + 1; di <= g->h; di++)
                if (arb_pgft_node_digit(g, n->level, n->index, di) != arb_pgft_host_digit(g, j, di))
                    below = 0;
            CHECK_EQ_U(arb_pgft_below(g, n, j), below);
            CHECK_EQ_I(arb_topo_below(t, i, j), below);
            uint32_t port = 0;
            CHECK_EQ_I(arb_topo_down_port(t, i, j, &port), below ? 0 : ARB_ENOENT);
            if (!below) continue;
            uint32_t cur = i;
            while (nodes[cur].level > 0) {
                uint32_t pp = arb_pgft_down_port(g, &nodes[cur], j);
                const arb_port *p = &ports[pp];
                CHECK_EQ_U(p->role, ARB_LINK_DOWN);
                CHECK_EQ_U(p->parallel, (j / g->W[nodes[cur].level]) % g->p[nodes[cur].level]);
                cur = p->peer;
                CHECK(arb_pgft_below(g, &nodes[cur], j));
            }
            CHECK_EQ_U(cur, j);
        }
    }
}

static void check_all(const arb_topo *t)
{
    check_invariants(t);
    check_down_ports(t);
}

TEST(star_4)
{
    arb_topo *t = build("star:4");
    REQUIRE(t != NULL);
    static const uint32_t sizes[] = {4, 1};
    check_counts(t, 1, sizes, 8);
    CHECK_STR(arb_topo_spec(t), "star:4");
    CHECK_EQ_U(arb_topo_get_kind(t), ARB_TOPO_STAR);
    for (uint32_t j = 0; j < 4; j++) {
        char h[8];
        snprintf(h, sizeof h, "h%u", j);
        CHECK_LINK(t, up(t, h, 0), "L1.0", j, 0);
        CHECK_LINK(t, down(t, "L1.0", j), h, 0, 0);
        CHECK_EQ_U(up(t, h, 0)->rate, ARB_TOPO_DEFAULT_RATE);
        CHECK_EQ_U(up(t, h, 0)->delay, ARB_PS_PER_US);
        CHECK_EQ_U(up(t, h, 0)->tier, 0);
    }
    CHECK_STR(arb_topo_level_name(t, 1), "switch");
    check_all(t);
    arb_topo_free(t);
}

TEST(leafspine_4_2_2)
{
    arb_topo *t = build("leafspine:4,2,2");
    REQUIRE(t != NULL);
    /* 8 hosts, 4 leaves of 2 down + 2 up, 2 spines of 4 down: 8 + 16 + 8 ports. */
    static const uint32_t sizes[] = {8, 4, 2};
    check_counts(t, 2, sizes, 32);
    /* Host h on leaf floor(h/2) at down port h mod 2. */
    for (uint32_t h = 0; h < 8; h++) {
        char hn[8], ln[8];
        snprintf(hn, sizeof hn, "h%u", h);
        snprintf(ln, sizeof ln, "L1.%u", h / 2);
        CHECK_LINK(t, up(t, hn, 0), ln, h % 2, 0);
        CHECK_LINK(t, down(t, ln, h % 2), hn, 0, 0);
    }
    /* Uplink u of every leaf to spine u, arriving at spine down port = leaf index. */
    for (uint32_t l = 0; l < 4; l++)
        for (uint32_t u = 0; u < 2; u++) {
            char ln[8], sn[8];
            snprintf(ln, sizeof ln, "L1.%u", l);
            snprintf(sn, sizeof sn, "L2.%u", u);
            CHECK_LINK(t, up(t, ln, u), sn, l, 0);
            CHECK_EQ_U(up(t, ln, u)->tier, 1);
        }
    /* Node ids: hosts 0-7, leaves 8-11, spines 12-13. */
    CHECK_EQ_U(id(t, "L1.0"), 8);
    CHECK_EQ_U(id(t, "L2.1"), 13);
    CHECK_STR(arb_topo_level_name(t, 1), "leaf");
    CHECK_STR(arb_topo_level_name(t, 2), "spine");
    check_all(t);
    arb_topo_free(t);
}

TEST(leafspine_uprate)
{
    arb_topo *t = build("leafspine:4,2,2,400G");
    REQUIRE(t != NULL);
    CHECK_STR(arb_topo_spec(t), "leafspine:4,2,2,400G");
    CHECK_EQ_U(up(t, "h0", 0)->rate, 100000000000u);
    CHECK_EQ_U(up(t, "L1.3", 1)->rate, 400000000000u);
    CHECK_EQ_U(down(t, "L2.1", 3)->rate, 400000000000u);
    arb_topo_free(t);

    /* Config rates and delay. */
    arb_topo_config cfg = arb_topo_config_default();
    cfg.rate = 200000000000u;
    cfg.up_rate = 400000000000u;
    cfg.delay = 500 * ARB_PS_PER_NS;
    char err[256];
    REQUIRE_EQ_I(arb_topo_new(&t, "kary:2,2", &cfg, err, sizeof err), 0);
    if (!t) return;
    for (uint32_t p = 0; p < arb_topo_n_ports(t); p++) {
        const arb_port *pp = arb_topo_port(t, p);
        CHECK_EQ_U(pp->rate, pp->tier == 0 ? 200000000000u : 400000000000u);
        CHECK_EQ_U(pp->delay, 500000);
    }
    arb_topo_free(t);
    cfg.rate = 0;
    CHECK_EQ_I(arb_topo_new(&t, "kary:2,2", &cfg, err, sizeof err), ARB_EINVAL);
    CHECK(t == NULL);
}

TEST(kary_2_3)
{
    arb_topo *t = build("kary:2,3");
    REQUIRE(t != NULL);
    /* 8 hosts, 3 levels of 4 switches; ports 8 + 4*4 + 4*4 + 4*2 = 48. */
    static const uint32_t sizes[] = {8, 4, 4, 4};
    check_counts(t, 3, sizes, 48);
    /* L1.i up q -> L2.(q + 2*(i/2)) at its down port i mod 2. */
    CHECK_LINK(t, up(t, "L1.3", 0), "L2.2", 1, 0);
    CHECK_LINK(t, up(t, "L1.3", 1), "L2.3", 1, 0);
    CHECK_LINK(t, up(t, "L1.1", 0), "L2.0", 1, 0);
    CHECK_LINK(t, up(t, "L1.0", 1), "L2.1", 0, 0);
    /* L2.i up q -> L3.(i mod 2 + 2q) at its down port i / 2. */
    CHECK_LINK(t, up(t, "L2.3", 1), "L3.3", 1, 0);
    CHECK_LINK(t, up(t, "L2.2", 1), "L3.2", 1, 0);
    CHECK_LINK(t, up(t, "L2.1", 0), "L3.1", 0, 0);
    CHECK_LINK(t, down(t, "L3.0", 1), "L2.2", 0, 0);
    /* Hosts 2j, 2j+1 on leaf j. */
    CHECK_LINK(t, up(t, "h5", 0), "L1.2", 1, 0);
    CHECK_STR(arb_topo_level_name(t, 2), "L2");
    CHECK_STR(arb_topo_level_name(t, 3), "top");
    check_all(t);
    arb_topo_free(t);
}

TEST(kary_4_2)
{
    arb_topo *t = build("kary:4,2");
    REQUIRE(t != NULL);
    /* 16 hosts, 4 leaves of 4 + 4, 4 spines of 4: 16 + 32 + 16 ports. */
    static const uint32_t sizes[] = {16, 4, 4};
    check_counts(t, 2, sizes, 64);
    for (uint32_t i = 0; i < 4; i++)
        for (uint32_t q = 0; q < 4; q++) {
            char ln[8], sn[8];
            snprintf(ln, sizeof ln, "L1.%u", i);
            snprintf(sn, sizeof sn, "L2.%u", q);
            CHECK_LINK(t, up(t, ln, q), sn, i, 0);
        }
    CHECK_LINK(t, up(t, "h13", 0), "L1.3", 1, 0);
    const arb_pgft *g = arb_topo_pgft(t);
    CHECK_EQ_U(g->h, 2);
    CHECK_EQ_U(g->m[1], 4);
    CHECK_EQ_U(g->w[2], 4);
    CHECK_EQ_U(g->W[2], 4);
    CHECK_EQ_U(g->M[2], 16);
    check_all(t);
    arb_topo_free(t);
}

TEST(pgft_parallel_2_level)
{
    arb_topo *t = build("pgft:2;4,4;1,2;1,2");
    REQUIRE(t != NULL);
    CHECK_STR(arb_topo_spec(t), "pgft:2;4,4;1,2;1,2");
    /* 16 hosts; 4 leaves of 4 down + 2x2 up; 2 tops of 4x2 down. */
    static const uint32_t sizes[] = {16, 4, 2};
    check_counts(t, 2, sizes, 16 + 4 * 8 + 2 * 8);
    /*
     * Up port q -> parent q mod w = q mod 2, parallel link q / 2. The wrong
     * mapping (parent q / p, link q mod p) would send up port 1 to L2.0
     * and up port 2 to L2.1: these lines catch it.
     */
    for (uint32_t i = 0; i < 4; i++) {
        char ln[8];
        snprintf(ln, sizeof ln, "L1.%u", i);
        CHECK_LINK(t, up(t, ln, 0), "L2.0", i, 0);
        CHECK_LINK(t, up(t, ln, 1), "L2.1", i, 0);
        CHECK_LINK(t, up(t, ln, 2), "L2.0", i + 4, 1);
        CHECK_LINK(t, up(t, ln, 3), "L2.1", i + 4, 1);
    }
    /* Down port d of a top: child d mod 4, parallel link d / 4. */
    CHECK_LINK(t, down(t, "L2.0", 5), "L1.1", 2, 1);
    CHECK_LINK(t, down(t, "L2.1", 6), "L1.2", 3, 1);
    /* Toward host 9 (leaf 2, W_2 = 2): top parallel link floor(9/2) mod 2 = 0. */
    uint32_t port;
    CHECK_EQ_I(arb_topo_down_port(t, id(t, "L2.1"), 9, &port), 0);
    CHECK_EQ_U(port, named(t, "L2.1")->first_port + 2);
    CHECK_EQ_I(arb_topo_down_port(t, id(t, "L2.1"), 11, &port), 0);
    CHECK_EQ_U(port, named(t, "L2.1")->first_port + 2 + 4);
    check_all(t);
    arb_topo_free(t);
}

TEST(pgft_parallel_3_level)
{
    arb_topo *t = build("pgft:3;4,2,2;1,2,2;1,2,2");
    REQUIRE(t != NULL);
    /* 16 hosts; 4 per level; L1, L2 8 ports each, L3 4 down: 16 + 32 + 32 + 16. */
    static const uint32_t sizes[] = {16, 4, 4, 4};
    check_counts(t, 3, sizes, 96);
    /* L1.i up q -> L2.(q mod 2 + 2 (i/2)), link q/2, at down port (i mod 2) + 2 (q/2). */
    CHECK_LINK(t, up(t, "L1.3", 3), "L2.3", 3, 1);
    CHECK_LINK(t, up(t, "L1.3", 1), "L2.3", 1, 0);
    CHECK_LINK(t, up(t, "L1.2", 2), "L2.2", 2, 1);
    CHECK_LINK(t, up(t, "L1.1", 1), "L2.1", 1, 0);
    /* L2.i up q -> L3.(i mod 2 + 2 (q mod 2)), link q/2, at down port (i/2) + 2 (q/2). */
    CHECK_LINK(t, up(t, "L2.3", 1), "L3.3", 1, 0);
    CHECK_LINK(t, up(t, "L2.3", 2), "L3.1", 3, 1);
    CHECK_LINK(t, up(t, "L2.0", 3), "L3.2", 2, 1);
    check_all(t);
    arb_topo_free(t);
}

TEST(pgft_plain_128)
{
    arb_topo *t = build("pgft:3;4,4,8;1,4,4;1,1,1");
    REQUIRE(t != NULL);
    /* 128 hosts, 32 leaves, 32 middle switches, 16 tops. */
    static const uint32_t sizes[] = {128, 32, 32, 16};
    check_counts(t, 3, sizes, 128 + 32 * 8 + 32 * 8 + 16 * 8);
    /* L1.i (i = a2 + 4 a3) up q -> L2.(q + 4 a3); L2.i (b2 + 4 a3) up q -> L3.(b2 + 4q). */
    CHECK_LINK(t, up(t, "L1.13", 2), "L2.14", 1, 0);
    CHECK_LINK(t, up(t, "L2.14", 3), "L3.14", 3, 0);
    CHECK_LINK(t, up(t, "L2.31", 0), "L3.3", 7, 0);
    check_all(t);
    arb_topo_free(t);
}

/* Route every flow of every shift with D-mod-k; return the largest flows on a port. */
static unsigned dmodk_max_load(const arb_topo *t, int wrong_mapping)
{
    const arb_pgft *g = arb_topo_pgft(t);
    const arb_node *nodes = arb_topo_nodes(t);
    const arb_port *ports = arb_topo_ports(t);
    uint32_t n = arb_topo_n_hosts(t);
    unsigned *load = malloc(arb_topo_n_ports(t) * sizeof *load);
    unsigned worst = 0;
    if (!load) return 999;
    for (uint32_t s = 1; s < n; s++) {
        for (uint32_t p = 0; p < arb_topo_n_ports(t); p++)
            load[p] = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t j = (i + s) % n, cur = i;
            while (!arb_pgft_below(g, &nodes[cur], j)) {
                unsigned l = nodes[cur].level;
                uint32_t wp = g->w[l + 1] * g->p[l + 1];
                uint32_t q = (j / g->W[l]) % wp;
                if (wrong_mapping) /* port meant as parent q / p, link q mod p */
                    q = q / g->p[l + 1] + g->w[l + 1] * (q % g->p[l + 1]);
                uint32_t pi = nodes[cur].first_up + q;
                load[pi]++;
                cur = ports[pi].peer;
            }
            while (cur != j) {
                uint32_t pi = arb_pgft_down_port(g, &nodes[cur], j);
                load[pi]++;
                cur = ports[pi].peer;
            }
        }
        for (uint32_t p = 0; p < arb_topo_n_ports(t); p++)
            if (load[p] > worst) worst = load[p];
    }
    free(load);
    return worst;
}

TEST(dmodk_shift_rlft)
{
    /* docs/topology.md: one flow per link for every shift on RLFTs,
     * and the wrong port mapping puts two flows on some link. */
    static const char *const rlft[] = {"pgft:2;4,4;1,2;1,2",
                                       "pgft:3;4,2,2;1,2,2;1,2,2",
                                       "pgft:3;4,4,8;1,4,4;1,1,1",
                                       "kary:2,3",
                                       "kary:4,2",
                                       "leafspine:4,2,2",
                                       "star:5"};
    for (size_t i = 0; i < sizeof rlft / sizeof rlft[0]; i++) {
        arb_topo *t = build(rlft[i]);
        CHECK(t != NULL);
        if (!t) continue;
        CHECK_EQ_U(dmodk_max_load(t, 0), 1);
        arb_topo_free(t);
    }
    static const char *const parallel[] = {"pgft:2;4,4;1,2;1,2", "pgft:3;4,2,2;1,2,2;1,2,2"};
    for (size_t i = 0; i < 2; i++) {
        arb_topo *t = build(parallel[i]);
        if (!t) continue;
        CHECK(dmodk_max_load(t, 1) >= 2);
        arb_topo_free(t);
    }
    /* A slimmed tree: 4 hosts per leaf, 2 uplinks. */
    arb_topo *t = build("leafspine:4,4,2");
    if (t) {
        CHECK_EQ_U(dmodk_max_load(t, 0), 2);
        arb_topo_free(t);
    }
}

TEST(dualplane)
{
    arb_topo *t = build("dualplane:2,3,2");
    REQUIRE(t != NULL);
    /* 6 hosts of 2 ports; 4 ToRs of 3 down + 2 up; 4 aggs of 2 down: 12 + 20 + 8 ports. */
    static const uint32_t sizes[] = {6, 4, 4};
    check_counts(t, 2, sizes, 40);
    CHECK_EQ_U(arb_topo_node(t, 0)->n_up, 2);
    /* Host j: pair j/3, position j mod 3; port 0 -> plane-0 ToR L1.(2 pair), port 1 -> L1.(2 pair +
     * 1). */
    for (uint32_t j = 0; j < 6; j++) {
        char hn[8], t0[8], t1[8];
        snprintf(hn, sizeof hn, "h%u", j);
        snprintf(t0, sizeof t0, "L1.%u", 2 * (j / 3));
        snprintf(t1, sizeof t1, "L1.%u", 2 * (j / 3) + 1);
        CHECK_LINK(t, up(t, hn, 0), t0, j % 3, 0);
        CHECK_LINK(t, up(t, hn, 1), t1, j % 3, 0);
    }
    /* ToR of plane s in pair i: up a -> agg L2.(s + 2a) at its down port i. */
    CHECK_LINK(t, up(t, "L1.0", 0), "L2.0", 0, 0);
    CHECK_LINK(t, up(t, "L1.0", 1), "L2.2", 0, 0);
    CHECK_LINK(t, up(t, "L1.2", 1), "L2.2", 1, 0);
    CHECK_LINK(t, up(t, "L1.1", 0), "L2.1", 0, 0);
    CHECK_LINK(t, up(t, "L1.3", 1), "L2.3", 1, 0);
    /* Planes never meet: every ToR-agg link joins switches of equal parity. */
    const arb_port *ports = arb_topo_ports(t);
    for (uint32_t p = 0; p < arb_topo_n_ports(t); p++)
        if (ports[p].tier == 1)
            CHECK_EQ_U(arb_topo_node(t, ports[p].peer)->index % 2,
                       arb_topo_node(t, arb_topo_port_owner(t, p))->index % 2);
    CHECK_STR(arb_topo_level_name(t, 1), "tor");
    CHECK_STR(arb_topo_level_name(t, 2), "agg");
    check_all(t);
    arb_topo_free(t);

    /* Two pods joined by a core that keeps the planes: 12 hosts, 8 ToRs, 8 aggs, 8 cores. */
    t = build("dualplane:2,3,2,2,2");
    REQUIRE(t != NULL);
    static const uint32_t sizes3[] = {12, 8, 8, 8};
    check_counts(t, 3, sizes3, 24 + 8 * 5 + 8 * 4 + 8 * 2);
    /* Agg a of plane s in pod o is L2.(s + 2a + 4o); up c -> core L3.(s + 2a + 4c). */
    CHECK_LINK(t, up(t, "L2.7", 0), "L3.3", 1, 0);
    CHECK_LINK(t, up(t, "L2.6", 1), "L3.6", 1, 0);
    CHECK_STR(arb_topo_level_name(t, 3), "core");
    for (uint32_t p = 0; p < arb_topo_n_ports(t); p++)
        if (arb_topo_port(t, p)->tier >= 1)
            CHECK_EQ_U(arb_topo_node(t, arb_topo_port(t, p)->peer)->index % 2,
                       arb_topo_node(t, arb_topo_port_owner(t, p))->index % 2);
    check_all(t);
    arb_topo_free(t);
}

TEST(rail)
{
    arb_topo *t = build("rail:2,3,4,2");
    REQUIRE(t != NULL);
    /* 24 GPUs; 8 rail switches of 3 down + 2 up; 2 spines of 8 down: 24 + 40 + 16. */
    static const uint32_t sizes[] = {24, 8, 2};
    check_counts(t, 2, sizes, 80);
    /* GPU k of server s in group g is host s + 3 (k + 4 g), on L1.(k + 4g) at port s. */
    for (uint32_t g = 0; g < 2; g++)
        for (uint32_t s = 0; s < 3; s++)
            for (uint32_t k = 0; k < 4; k++) {
                char hn[8], rn[8];
                snprintf(hn, sizeof hn, "h%u", s + 3 * (k + 4 * g));
                snprintf(rn, sizeof rn, "L1.%u", k + 4 * g);
                CHECK_LINK(t, up(t, hn, 0), rn, s, 0);
            }
    CHECK_LINK(t, up(t, "h17", 0), "L1.5", 2, 0);
    CHECK_LINK(t, up(t, "L1.5", 1), "L2.1", 5, 0);
    CHECK_STR(arb_topo_level_name(t, 1), "rail");
    check_all(t);
    arb_topo_free(t);
}

/* Items are separated by commas, blanks or both, a run of them one
 * separator: every way of writing a list fails the same links. */
TEST(failure_list_separators)
{
    static const char *const lists[] = {
        "switch:L2.1,up:L1.2:0",   "switch:L2.1, up:L1.2:0",  "switch:L2.1 up:L1.2:0",
        "switch:L2.1\tup:L1.2:0",  "switch:L2.1 , up:L1.2:0", "switch:L2.1,,up:L1.2:0",
        " switch:L2.1 up:L1.2:0,",
    };
    char err[256];
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        arb_topo *t = build("leafspine:4,2,2");
        REQUIRE(t != NULL);
        CHECK_EQ_I(arb_topo_fail(t, lists[i], err, sizeof err), 0);
        uint32_t links, switches;
        arb_topo_count_failed(t, &links, &switches);
        CHECK_EQ_U(switches, 1);
        CHECK_EQ_U(links, 5); /* the 4 of L2.1 and L1.2-L2.0 */
        CHECK(up(t, "L1.2", 0)->failed);
        CHECK_EQ_I(arb_topo_fail_check(t, lists[i], err, sizeof err), 0);
        CHECK_EQ_I(arb_topo_restore(t, lists[i], err, sizeof err), 0);
        arb_topo_count_failed(t, &links, &switches);
        CHECK_EQ_U(links + switches, 0);
        arb_topo_free(t);
    }
}

TEST(failures)
{
    arb_topo *t = build("leafspine:4,2,2");
    REQUIRE(t != NULL);
    char err[256];
    CHECK_EQ_I(arb_topo_fail(t,
                             "switch:L2.1,link:L1.0-L2.0,link:h3-L1.1,up:L1.2:1,"
                             "down:L2.0:3,port:L1.3:0",
                             err, sizeof err),
               0);
    uint32_t links, switches;
    arb_topo_count_failed(t, &links, &switches);
    /* 4 links of L2.1, L1.0-L2.0, h3-L1.1, (L1.2-L2.1 again), L2.0-L1.3, L1.3-h6. */
    CHECK_EQ_U(links, 8);
    CHECK_EQ_U(switches, 1);
    CHECK(named(t, "L2.1")->failed);
    CHECK(up(t, "L1.0", 0)->failed);
    CHECK(down(t, "L2.0", 0)->failed);
    CHECK(!up(t, "L1.1", 0)->failed);
    CHECK(up(t, "h3", 0)->failed);
    CHECK(down(t, "L1.1", 1)->failed);
    CHECK(!up(t, "h2", 0)->failed);
    CHECK(up(t, "L1.3", 0)->failed);
    CHECK(up(t, "h6", 0)->failed);
    for (uint32_t p = 0; p < arb_topo_n_ports(t); p++)
        CHECK_EQ_U(arb_topo_port(t, p)->failed,
                   arb_topo_port(t, arb_topo_port(t, p)->peer_port)->failed);
    /* Indices are stable: counts unchanged. */
    CHECK_EQ_U(arb_topo_n_ports(t), 32);

    /* All or nothing, and each fault named. */
    arb_topo_clear_failures(t);
    arb_topo_count_failed(t, &links, &switches);
    CHECK_EQ_U(links + switches, 0);
    static const struct {
        const char *list;
        int rc;
        const char *word;
    } bad[] = {
        {"switch:L2.0,switch:L9.0", ARB_ENOENT, "L9.0"},
        {"switch:h3", ARB_EPARSE, "h3"},
        {"switch:", ARB_EPARSE, "missing"},
        {"switch:X1", ARB_EPARSE, "X1"},
        {"link:h0-L2.0", ARB_ENOENT, "not linked"},
        {"link:L1.0-L2.0/1", ARB_ENOENT, "parallel link 1"},
        {"link:L1.0", ARB_EPARSE, "link:A-B"},
        {"link:L1.0-L2.0/x", ARB_EPARSE, "'x'"},
        {"up:L1.0:2", ARB_ENOENT, "2 up ports"},
        {"down:L1.0:9", ARB_ENOENT, "down"},
        {"port:L1.0:4", ARB_ENOENT, "4 port"},
        {"up:L1.0", ARB_EPARSE, "up:NAME:NUMBER"},
        {"up:L1.0:-1", ARB_EPARSE, "'-1'"},
        {"frob:L1.0", ARB_EPARSE, "frob"},
        {"L1.0", ARB_EPARSE, "switch:NAME"},
        {"switch:L2.0;switch:L2.1", ARB_EPARSE, "commas or blanks, not ';'"},
        {"switch:L2.0 switch:L9.0", ARB_ENOENT, "'switch:L9.0'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int rc = arb_topo_fail(t, bad[i].list, err, sizeof err);
        CHECK_EQ_I(rc, bad[i].rc);
        if (!strstr(err, bad[i].word))
            TESTKIT_REPORT("'%s': message '%s' does not name '%s'", bad[i].list, err, bad[i].word);
        arb_topo_count_failed(t, &links, &switches);
        CHECK_EQ_U(links + switches, 0);
    }
    CHECK_EQ_I(arb_topo_fail(t, "", err, sizeof err), 0);
    CHECK_EQ_I(arb_topo_fail(t, " ,\t, ", err, sizeof err), 0);
    arb_topo_count_failed(t, &links, &switches);
    CHECK_EQ_U(links + switches, 0);
    CHECK_EQ_I(arb_topo_fail_node(t, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_topo_fail_link(t, 32), ARB_EINVAL);
    arb_topo_free(t);

    /* Parallel links: fail one of two. */
    t = build("pgft:2;4,4;1,2;1,2");
    if (!t) return;
    CHECK_EQ_I(arb_topo_fail(t, "link:L2.1-L1.2/1", err, sizeof err), 0);
    CHECK(up(t, "L1.2", 3)->failed);
    CHECK(!up(t, "L1.2", 1)->failed);
    CHECK(down(t, "L2.1", 6)->failed);
    arb_topo_clear_failures(t);
    CHECK_EQ_I(arb_topo_fail(t, "link:L1.2-L2.1", err, sizeof err), 0);
    arb_topo_count_failed(t, &links, &switches);
    CHECK_EQ_U(links, 2);
    arb_topo_free(t);
}

/* Every port's failed flag from first principles: a link is down when it
 * failed as a link or a switch at either end is down. */
static void check_up_rule(const arb_topo *t, const uint8_t *cut)
{
    for (uint32_t p = 0; p < arb_topo_n_ports(t); p++) {
        const arb_port *pp = arb_topo_port(t, p);
        int want = cut[p] || arb_topo_node(t, pp->peer)->failed ||
                   arb_topo_node(t, arb_topo_port_owner(t, p))->failed;
        CHECK_EQ_U(pp->failed, (unsigned)want);
    }
}

TEST(restore)
{
    arb_topo *t = build("leafspine:4,2,2");
    REQUIRE(t != NULL);
    char err[256];
    uint8_t cut[32] = {0};
    REQUIRE_EQ_U(arb_topo_n_ports(t), 32);
    /* the links failed as links, in both directions (the test's own record) */
    const arb_port *l0 = up(t, "L1.0", 0), *l1 = up(t, "L1.1", 1), *h3 = up(t, "h3", 0);
    uint32_t pl0 = (uint32_t)(l0 - arb_topo_port(t, 0)), pl1 = (uint32_t)(l1 - arb_topo_port(t, 0)),
             ph3 = (uint32_t)(h3 - arb_topo_port(t, 0));
    cut[pl0] = cut[l0->peer_port] = cut[pl1] = cut[l1->peer_port] = cut[ph3] = cut[h3->peer_port] =
        1;
    CHECK_EQ_I(arb_topo_fail(t,
                             "switch:L2.0,link:L1.0-L2.0,link:L1.1-L2.1,link:h3-L1.1,switch:L1.1",
                             err, sizeof err),
               0);
    check_up_rule(t, cut);
    uint32_t links, switches;
    arb_topo_count_failed(t, &links, &switches);
    /* L2.0's 4 links; L1.1's two host links and its link to L2.1 (the one to
     * L2.0 counted with L2.0's); the links failed by themselves are among them */
    CHECK_EQ_U(links, 7);
    CHECK_EQ_U(switches, 2);

    /* the spine comes back with every link but the one failed by itself */
    uint64_t gen = arb_topo_failure_gen(t);
    CHECK_EQ_I(arb_topo_restore(t, "switch:L2.0", err, sizeof err), 0);
    CHECK(arb_topo_failure_gen(t) != gen);
    CHECK(!named(t, "L2.0")->failed);
    CHECK(l0->failed);
    CHECK(!down(t, "L2.0", 2)->failed); /* to L1.2 */
    CHECK(down(t, "L2.0", 1)->failed);  /* to L1.1, still down */
    check_up_rule(t, cut);
    /* a link of a failed switch: its own failure clears, it stays down */
    CHECK_EQ_I(arb_topo_restore(t, "link:L1.1-L2.1", err, sizeof err), 0);
    cut[pl1] = cut[l1->peer_port] = 0;
    CHECK(l1->failed);
    check_up_rule(t, cut);
    /* the leaf comes back: its links up but the host link failed by itself */
    CHECK_EQ_I(arb_topo_restore_node(t, id(t, "L1.1")), 0);
    CHECK(!l1->failed);
    CHECK(!down(t, "L2.0", 1)->failed);
    CHECK(h3->failed);
    CHECK(!up(t, "h2", 0)->failed);
    check_up_rule(t, cut);
    CHECK_EQ_I(arb_topo_restore(t, "link:L1.0-L2.0,link:h3-L1.1", err, sizeof err), 0);
    arb_topo_count_failed(t, &links, &switches);
    CHECK_EQ_U(links + switches, 0);
    /* restoring what is up changes nothing */
    CHECK_EQ_I(arb_topo_restore(t, "switch:L2.1,up:L1.2:1", err, sizeof err), 0);
    arb_topo_count_failed(t, &links, &switches);
    CHECK_EQ_U(links + switches, 0);

    /* all or nothing; errors as arb_topo_fail's */
    CHECK_EQ_I(arb_topo_fail(t, "switch:L2.1", err, sizeof err), 0);
    CHECK_EQ_I(arb_topo_restore(t, "switch:L2.1,switch:L9.0", err, sizeof err), ARB_ENOENT);
    CHECK(strstr(err, "L9.0") != NULL);
    CHECK(named(t, "L2.1")->failed);
    CHECK_EQ_I(arb_topo_restore(t, "frob:L2.1", err, sizeof err), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_restore_node(t, 0), ARB_EINVAL); /* a host */
    CHECK_EQ_I(arb_topo_restore_node(t, 99), ARB_EINVAL);
    CHECK_EQ_I(arb_topo_restore_link(t, 32), ARB_EINVAL);
    /* a cleared fabric forgets which links failed by themselves */
    CHECK_EQ_I(arb_topo_fail(t, "link:L1.2-L2.0", err, sizeof err), 0);
    arb_topo_clear_failures(t);
    CHECK_EQ_I(arb_topo_fail(t, "switch:L2.0", err, sizeof err), 0);
    CHECK_EQ_I(arb_topo_restore(t, "switch:L2.0", err, sizeof err), 0);
    arb_topo_count_failed(t, &links, &switches);
    CHECK_EQ_U(links + switches, 0);
    arb_topo_free(t);
}

TEST(set_link)
{
    arb_topo *t = build("star:2");
    if (!t) return;
    CHECK_EQ_I(arb_topo_set_link(t, 0, 25000000000u, 7), 0);
    CHECK_EQ_U(down(t, "L1.0", 0)->rate, 25000000000u);
    CHECK_EQ_U(down(t, "L1.0", 0)->delay, 7);
    CHECK_EQ_U(up(t, "h1", 0)->rate, ARB_TOPO_DEFAULT_RATE);
    CHECK_EQ_I(arb_topo_set_link(t, 0, 0, 7), ARB_EINVAL);
    CHECK_EQ_I(arb_topo_set_link(t, 4, 1, 7), ARB_EINVAL);
    arb_topo_free(t);
}

TEST(names)
{
    arb_topo *t = build("kary:2,3");
    if (!t) return;
    for (uint32_t i = 0; i < arb_topo_n_nodes(t); i++) {
        char name[16];
        CHECK_EQ_I(arb_topo_node_name(t, i, name, sizeof name), 0);
        CHECK_EQ_U(id(t, name), i);
    }
    char small[3];
    CHECK_EQ_I(arb_topo_node_name(t, 10, small, sizeof small), ARB_ENOSPC);
    CHECK_EQ_I(arb_topo_node_name(t, 20, small, sizeof small), ARB_EINVAL);
    uint32_t n;
    CHECK_EQ_I(arb_topo_find(t, "h8", &n), ARB_ENOENT);
    CHECK_EQ_I(arb_topo_find(t, "L4.0", &n), ARB_ENOENT);
    CHECK_EQ_I(arb_topo_find(t, "L0.0", &n), ARB_ENOENT);
    CHECK_EQ_I(arb_topo_find(t, "L1.4", &n), ARB_ENOENT);
    CHECK_EQ_I(arb_topo_find(t, "L1.x", &n), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_find(t, "L1", &n), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_find(t, "h", &n), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_find(t, "h1x", &n), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_find(t, "x", &n), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_find(t, "L1.99999999999", &n), ARB_EPARSE);
    CHECK_EQ_U(arb_topo_node_id(t, 2, 3), 8 + 4 + 3);
    CHECK_EQ_U(arb_topo_node_id(t, 2, 4), ARB_TOPO_NONE);
    CHECK_EQ_U(arb_topo_node_id(t, 4, 0), ARB_TOPO_NONE);
    CHECK(arb_topo_node(t, 20) == NULL);
    CHECK(arb_topo_port(t, 48) == NULL);
    CHECK_EQ_U(arb_topo_port_owner(t, 48), ARB_TOPO_NONE);
    CHECK_EQ_I(arb_topo_below(t, 20, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_topo_down_port(t, 0, 0, NULL), ARB_EINVAL);
    CHECK_STR(arb_topo_kind_name(ARB_TOPO_DUALPLANE), "dualplane");
    CHECK(arb_topo_kind_name(6) == NULL);
    CHECK(arb_topo_level_name(t, 4) == NULL);
    arb_topo_free(t);
}

TEST(bad_specs)
{
    static const struct {
        const char *spec;
        const char *word; /* the field the message must name */
    } bad[] = {
        {"", "unknown topology"},
        {"foo:3", "'foo'"},
        {"star", "missing ':'"},
        {"star:", "N is empty"},
        {"star:0", "N is 0"},
        {"star:x", "N 'x'"},
        {"star:-3", "N '-3'"},
        {"star:1,2", "expected N"},
        {"star:70000", "ports"},
        {"star:99999999999", "too large"},
        {"leafspine:4,2", "LEAVES,DOWN,UP"},
        {"leafspine:4,2,2,1,1", "LEAVES,DOWN,UP"},
        {"leafspine:0,2,2", "LEAVES"},
        {"leafspine:4,0,2", "DOWN"},
        {"leafspine:4,2,", "UP is empty"},
        {"leafspine:4,2,2,fast", "UPRATE"},
        {"leafspine:4,2,2,0", "UPRATE"},
        {"leafspine:4,2,2,", "UPRATE"},
        {"leafspine:4,40000,40000", "ports"},
        {"kary:4", "K,N"},
        {"kary:0,2", "K is 0"},
        {"kary:2,0", "N is 0"},
        {"kary:2,17", "N is 17"},
        {"kary:4,13", "hosts"},
        {"pgft:3;4,4;1,4,4;1,1,1", "m list has 2 values, H is 3"},
        {"pgft:2;4,4;1,4,4;1,1", "w list has 3 values, H is 2"},
        {"pgft:2;4,4;1,4;1", "p list has 1 value, H is 2"},
        {"pgft:2;4,4;1,0;1,1", "w_2 is 0"},
        {"pgft:2;4,4;1,4;1,1x", "p_2 '1x'"},
        {"pgft:2;4,4;1,4", "4 parts"},
        {"pgft:2;4,4;1,4;1,1;9", "4 parts"},
        {"pgft:0;;;", "H is 0"},
        {"pgft:17;1;1;1", "H is 17"},
        {"pgft:2;;1,4;1,1", "m list is empty"},
        {"pgft:2;65536,65536;1,1;1,1", "hosts"},
        {"pgft:1;4294967296;1;1", "m_1 '4294967296' is too large"},
        {"pgft:2;4,4;1,65536;1,1", "ports"},
        {"pgft:2;2,2;1,4;1,70000", "ports"},
        {"pgft:2;4096,4096;1,30000;1,1", "directed links"},
        {"dualplane:2,3", "PAIRS,HOSTS,AGGS"},
        {"dualplane:2,3,2,2", "CORES"},
        {"dualplane:0,3,2", "PAIRS is 0"},
        {"dualplane:2,3,0", "AGGS is 0"},
        {"dualplane:2,3,2,2,0", "CORES is 0"},
        {"rail:2,3,4", "GROUPS,SERVERS,RAILS,SPINES"},
        {"rail:2,3,0,2", "RAILS is 0"},
        {"rail:2,0,4,2", "SERVERS is 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        arb_topo *t = (arb_topo *)1;
        char err[256] = "";
        int rc = arb_topo_new(&t, bad[i].spec, NULL, err, sizeof err);
        if (rc != ARB_EPARSE) TESTKIT_REPORT("'%s': rc %d, want ARB_EPARSE", bad[i].spec, rc);
        CHECK(t == NULL);
        if (!strstr(err, bad[i].word))
            TESTKIT_REPORT("'%s': message '%s' does not name '%s'", bad[i].spec, err, bad[i].word);
        arb_topo_free(t == (arb_topo *)1 ? NULL : t);
    }
    arb_topo *t;
    CHECK_EQ_I(arb_topo_new(&t, NULL, NULL, NULL, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_topo_new(NULL, "star:2", NULL, NULL, 0), ARB_EINVAL);
    /* Parameters directly: ERANGE. */
    arb_pgft g;
    memset(&g, 0, sizeof g);
    g.h = 2;
    g.m[1] = 4;
    g.m[2] = 4;
    g.w[1] = 1;
    g.w[2] = 0;
    g.p[1] = g.p[2] = 1;
    char err[256];
    CHECK_EQ_I(arb_topo_new_pgft(&t, &g, NULL, err, sizeof err), ARB_ERANGE);
    CHECK(strstr(err, "w_2") != NULL);
    g.w[2] = 2;
    REQUIRE_EQ_I(arb_topo_new_pgft(&t, &g, NULL, err, sizeof err), 0);
    if (t) {
        CHECK_STR(arb_topo_spec(t), "pgft:2;4,4;1,2;1,1");
        CHECK_EQ_U(arb_topo_n_nodes(t), 16 + 4 + 2);
        arb_topo_free(t);
    }
}

TEST(values)
{
    uint64_t r = 0;
    CHECK_EQ_I(arb_topo_parse_rate("400G", &r), 0);
    CHECK_EQ_U(r, 400000000000u);
    CHECK_EQ_I(arb_topo_parse_rate("2.5g", &r), 0);
    CHECK_EQ_U(r, 2500000000u);
    CHECK_EQ_I(arb_topo_parse_rate("100000000000", &r), 0);
    CHECK_EQ_U(r, 100000000000u);
    CHECK_EQ_I(arb_topo_parse_rate("1.6T", &r), 0);
    CHECK_EQ_U(r, 1600000000000u);
    CHECK_EQ_I(arb_topo_parse_rate("10T", &r), 0);
    CHECK_EQ_I(arb_topo_parse_rate("10.5T", &r), ARB_ERANGE);
    CHECK_EQ_I(arb_topo_parse_rate("1.5", &r), ARB_ERANGE);
    CHECK_EQ_I(arb_topo_parse_rate("0", &r), ARB_ERANGE);
    CHECK_EQ_I(arb_topo_parse_rate("0G", &r), ARB_ERANGE);
    CHECK_EQ_I(arb_topo_parse_rate("x", &r), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_parse_rate("4Gb", &r), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_parse_rate("", &r), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_parse_rate(".5G", &r), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_parse_rate("5.G", &r), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_parse_rate("99999999999999999999999", &r), ARB_ERANGE);
    arb_time d = 0;
    CHECK_EQ_I(arb_topo_parse_time("1us", &d), 0);
    CHECK_EQ_U(d, 1000000);
    CHECK_EQ_I(arb_topo_parse_time("500ns", &d), 0);
    CHECK_EQ_U(d, 500000);
    CHECK_EQ_I(arb_topo_parse_time("0.5us", &d), 0);
    CHECK_EQ_U(d, 500000);
    CHECK_EQ_I(arb_topo_parse_time("2ms", &d), 0);
    CHECK_EQ_U(d, 2000000000u);
    CHECK_EQ_I(arb_topo_parse_time("1s", &d), 0);
    CHECK_EQ_U(d, ARB_PS_PER_S);
    CHECK_EQ_I(arb_topo_parse_time("0", &d), 0);
    CHECK_EQ_U(d, 0);
    CHECK_EQ_I(arb_topo_parse_time("10", &d), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_parse_time("1.5ps", &d), ARB_ERANGE);
    CHECK_EQ_I(arb_topo_parse_time("3 us", &d), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_parse_time("3min", &d), ARB_EPARSE);
    CHECK_EQ_I(arb_topo_parse_time("99999999999s", &d), ARB_ERANGE);
}

int main(void)
{
    RUN(star_4);
    RUN(leafspine_4_2_2);
    RUN(leafspine_uprate);
    RUN(kary_2_3);
    RUN(kary_4_2);
    RUN(pgft_parallel_2_level);
    RUN(pgft_parallel_3_level);
    RUN(pgft_plain_128);
    RUN(dmodk_shift_rlft);
    RUN(dualplane);
    RUN(rail);
    RUN(failures);
    RUN(failure_list_separators);
    RUN(restore);
    RUN(set_link);
    RUN(names);
    RUN(bad_specs);
    RUN(values);
    return testkit_done();
}
