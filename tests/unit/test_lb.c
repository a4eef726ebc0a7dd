/* Unit tests: the load-balancing choosers (lb.h), each on a hand-made
 * case, and small simulations of reordering under spraying and flowlets. */
#include "arbor/lb.h"
#include "arbor/route.h"
#include "arbor/sim.h"
#include "arbor/topo.h"
#include "sim/sim_int.h"
#include "order_tap.h"
#include "simkit.h"
#include "testkit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A load balancer and an idle simulator to read queues from. */
struct rig {
    arb_topo *t;
    arb_lb *lb;
    arb_sim *s;
    arb_sim_config cfg;
};

static int rig_open(struct rig *g, const char *topo_spec, const char *scheme)
{
    char err[256];
    memset(g, 0, sizeof *g);
    g->t = simkit_topo(topo_spec);
    if (!g->t) return -1;
    arb_sim_config_default(&g->cfg);
    g->cfg.seed = 7;
    int rc = arb_lb_new(&g->lb, g->t, NULL, scheme, &g->cfg, err, sizeof err);
    if (rc < 0) {
        printf("  lb %s: %s\n", scheme, err);
        return rc;
    }
    return arb_sim_new(&g->s, g->t, &g->cfg);
}

static void rig_close(struct rig *g)
{
    arb_sim_free(g->s);
    arb_lb_free(g->lb);
    arb_topo_free(g->t);
}

static arb_sim_pkt_info pkt(uint32_t src, uint32_t dst, uint16_t sport)
{
    arb_sim_pkt_info f;
    memset(&f, 0, sizeof f);
    f.src = src;
    f.dst = dst;
    f.sport = sport;
    f.dport = 4791;
    f.qp = 1;
    f.proto = 17;
    f.bytes = 4178;
    f.payload = 4096;
    return f;
}

static arb_route_key key_of(const arb_sim_pkt_info *f)
{
    arb_route_key k = {f->src, f->dst, f->sport, f->dport, f->qp, f->proto};
    return k;
}

/* Leaf `leaf` of a two-level fabric, its up port q, and a down port. */
static uint32_t leaf_id(const arb_topo *t, uint32_t leaf)
{
    return arb_topo_node_id(t, 1, leaf);
}

static uint32_t up(const arb_topo *t, uint32_t node, unsigned q)
{
    return arb_topo_node(t, node)->first_up + q;
}

/* The port a host's packet arrives on at its leaf. */
static uint32_t from_host(const arb_topo *t, uint32_t host)
{
    return arb_topo_port(t, arb_topo_node(t, host)->first_up)->peer_port;
}

static uint32_t route(struct rig *g, uint32_t node, uint32_t in_port, const arb_sim_pkt_info *f,
                      arb_time now)
{
    return g->cfg.route(g->cfg.route_ctx, g->s, node, in_port, f, now);
}

TEST(names_and_errors)
{
    arb_topo *t = simkit_topo("leafspine:2,2,4");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    arb_lb *lb = NULL;
    char err[256];
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, "ecmp", &cfg, err, sizeof err), 0);
    CHECK_STR(arb_lb_spec(lb), "ecmp");
    CHECK(cfg.route != NULL && cfg.route_ctx == lb); /* the scheme's own callback */
    CHECK(cfg.inband == NULL);
    CHECK_EQ_I(arb_lb_get_kind(lb), ARB_LB_ROUTE);
    arb_lb_free(lb);
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, "flowlet", &cfg, err, sizeof err), 0);
    CHECK_STR(arb_lb_spec(lb), "flowlet:gap=256us,table=4096,bias=1,thresh=0");
    arb_lb_free(lb);
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, "flowlet:gap=0.5ms,table=1000,bias=2.5,thresh=4096", &cfg,
                            err, sizeof err),
                 0);
    CHECK_STR(arb_lb_spec(lb), "flowlet:gap=500us,table=1024,bias=2.500,thresh=4096");
    arb_lb_free(lb);
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, "conga", &cfg, err, sizeof err), 0);
    CHECK_STR(arb_lb_spec(lb),
              "conga:gap=500us,table=4096,tdre=20us,alpha=0.1,age=10ms,above=ecmp");
    CHECK(cfg.inband == arb_lb_inband && cfg.dre_period == 20 * ARB_PS_PER_US);
    arb_lb_free(lb);
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, "spray:random", &cfg, err, sizeof err), 0);
    CHECK_STR(arb_lb_spec(lb), "spray:random");
    CHECK(cfg.inband == NULL); /* a previous conga's hook is taken out */
    arb_lb_free(lb);
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, "letflow:gap=50us", &cfg, err, sizeof err), 0);
    CHECK_STR(arb_lb_spec(lb), "letflow:gap=50us,table=4096");
    arb_lb_free(lb);

    CHECK_EQ_I(arb_lb_new(&lb, t, NULL, "nope", &cfg, err, sizeof err), ARB_EPARSE);
    CHECK(lb == NULL);
    CHECK_EQ_I(arb_lb_new(&lb, t, NULL, "flowlet:gap=fast", &cfg, err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "load balancing: flowlet: bad value 'fast' for gap");
    CHECK_EQ_I(arb_lb_new(&lb, t, NULL, "ar:gap=1us", &cfg, err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "load balancing: ar has no option 'gap'");
    CHECK_EQ_I(arb_lb_new(&lb, t, NULL, "flowlet:bias=0", &cfg, err, sizeof err), ARB_EPARSE);
    CHECK_EQ_I(arb_lb_new(&lb, t, NULL, "conga:alpha=2", &cfg, err, sizeof err), ARB_EPARSE);
    CHECK_EQ_I(arb_lb_new(&lb, t, NULL, "adaptive", &cfg, err, sizeof err), ARB_EPARSE);
    CHECK_EQ_I(arb_lb_new(&lb, t, NULL, "route", &cfg, err, sizeof err), ARB_EINVAL);
    CHECK_EQ_I(arb_lb_new(&lb, t, NULL, "ecmp:bogus", &cfg, err, sizeof err), ARB_EPARSE);

    /* a given router: "route" is it, adaptive schemes take candidates and hash from it */
    arb_route *r = NULL;
    REQUIRE_EQ_I(arb_route_new(&r, t, "dmodk", NULL, err, sizeof err), 0);
    CHECK_EQ_I(arb_lb_new(&lb, t, r, "dmodk", &cfg, err, sizeof err), ARB_EINVAL);
    REQUIRE_EQ_I(arb_lb_new(&lb, t, r, "route", &cfg, err, sizeof err), 0);
    CHECK_STR(arb_lb_spec(lb), "dmodk");
    CHECK(arb_lb_router(lb) == r);
    arb_lb_free(lb);
    arb_route_free(r);
    for (int k = 0; k < ARB_LB_KIND_COUNT; k++)
        CHECK(arb_lb_kind_name(k) != NULL);
    CHECK(arb_lb_kind_name(ARB_LB_KIND_COUNT) == NULL);
    arb_topo_free(t);
}

/* A plain engine gives what arb_route_next gives. */
TEST(plain_engine_matches_router)
{
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "kary:4,2", "dmodk"), 0);
    arb_route *r = NULL;
    char err[200];
    REQUIRE_EQ_I(arb_route_new(&r, g.t, "dmodk", NULL, err, sizeof err), 0);
    uint32_t hosts = arb_topo_n_hosts(g.t);
    for (uint32_t s = 0; s < hosts; s++)
        for (uint32_t d = 0; d < hosts; d++) {
            if (s == d) continue;
            arb_sim_pkt_info f = pkt(s, d, 1000);
            arb_route_key k = key_of(&f);
            uint32_t node = arb_topo_port(g.t, arb_topo_node(g.t, s)->first_up)->peer;
            uint32_t in = from_host(g.t, s);
            while (node != d) {
                uint32_t a = route(&g, node, in, &f, 0), b = arb_route_next(r, node, &k, in);
                CHECK_EQ_U(a, b);
                const arb_port *p = arb_topo_port(g.t, a);
                in = p->peer_port;
                node = p->peer;
            }
        }
    arb_route_free(r);
    rig_close(&g);
}

/* Per-packet AR: the shallowest uplink; ties by hash; PFC pause counts. */
TEST(ar_argmin_and_ties)
{
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,4", "ar"), 0);
    uint32_t L0 = leaf_id(g.t, 0), in = from_host(g.t, 0);
    arb_sim_pkt_info f = pkt(0, 2, 1000);
    arb_route_key k = key_of(&f);
    uint32_t q[4] = {5000, 3000, 100, 7000};
    for (unsigned i = 0; i < 4; i++)
        g.s->sp[up(g.t, L0, i)].q_bytes = q[i];
    CHECK_EQ_U(route(&g, L0, in, &f, 0), up(g.t, L0, 2));
    /* a paused port looks empty but is not taken */
    g.s->sp[up(g.t, L0, 2)].paused = 1;
    CHECK_EQ_U(route(&g, L0, in, &f, 0), up(g.t, L0, 1));
    g.s->sp[up(g.t, L0, 2)].paused = 0;
    /* ports 1 and 2 tied at 3000: the (hash mod 2)-th of them */
    g.s->sp[up(g.t, L0, 2)].q_bytes = 3000;
    uint64_t h = arb_route_hash(arb_lb_router(g.lb), L0, &k);
    CHECK_EQ_U(route(&g, L0, in, &f, 0), up(g.t, L0, 1 + (unsigned)(h % 2)));
    /* all empty: hash mod 4, the ECMP choice */
    for (unsigned i = 0; i < 4; i++)
        g.s->sp[up(g.t, L0, i)].q_bytes = 0;
    CHECK_EQ_U(route(&g, L0, in, &f, 0), up(g.t, L0, (unsigned)(h % 4)));
    /* down at the spine: one candidate */
    uint32_t S1 = arb_topo_node_id(g.t, 2, 1);
    uint32_t down = arb_topo_node(g.t, S1)->first_port + 1; /* to leaf 1 */
    CHECK_EQ_U(route(&g, S1, arb_topo_port(g.t, up(g.t, L0, 1))->peer_port, &f, 0), down);
    arb_lb_stats st;
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.decisions, 5);
    CHECK_EQ_U(st.choices, 4);
    rig_close(&g);
}

/* The UGAL-style bias keeps the ECMP port while q(cur) <= 2 q(best). */
TEST(ar_bias_keeps_current)
{
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,4", "ar:bias=2"), 0);
    uint32_t L0 = leaf_id(g.t, 0), in = from_host(g.t, 0);
    arb_sim_pkt_info f = pkt(0, 2, 1000);
    arb_route_key k = key_of(&f);
    unsigned cur = (unsigned)(arb_route_hash(arb_lb_router(g.lb), L0, &k) % 4);
    unsigned other = (cur + 1) % 4;
    for (unsigned i = 0; i < 4; i++)
        g.s->sp[up(g.t, L0, i)].q_bytes = 5000;
    g.s->sp[up(g.t, L0, other)].q_bytes = 600;
    g.s->sp[up(g.t, L0, cur)].q_bytes = 1200; /* 1200 <= 2 x 600: stay */
    CHECK_EQ_U(route(&g, L0, in, &f, 0), up(g.t, L0, cur));
    g.s->sp[up(g.t, L0, cur)].q_bytes = 1201; /* clearly worse: move */
    CHECK_EQ_U(route(&g, L0, in, &f, 0), up(g.t, L0, other));
    rig_close(&g);

    /* bias 1 with a threshold: stay while within thresh bytes */
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,4", "ar:thresh=1000"), 0);
    for (unsigned i = 0; i < 4; i++)
        g.s->sp[up(g.t, L0, i)].q_bytes = 5000;
    g.s->sp[up(g.t, L0, other)].q_bytes = 600;
    g.s->sp[up(g.t, L0, cur)].q_bytes = 1600;
    CHECK_EQ_U(route(&g, L0, in, &f, 0), up(g.t, L0, cur));
    g.s->sp[up(g.t, L0, cur)].q_bytes = 1601;
    CHECK_EQ_U(route(&g, L0, in, &f, 0), up(g.t, L0, other));
    rig_close(&g);
}

/* Flowlet AR: the port holds inside the gap whatever the queues do, and
 * the argmin is taken again after it. */
TEST(flowlet_keeps_port_inside_gap)
{
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,4", "flowlet:gap=10us"), 0);
    uint32_t L0 = leaf_id(g.t, 0), in = from_host(g.t, 0);
    arb_sim_pkt_info f = pkt(0, 2, 1000), f2 = pkt(1, 3, 2000);
    const arb_time us = ARB_PS_PER_US;
    uint32_t q[4] = {900, 500, 700, 800};
    for (unsigned i = 0; i < 4; i++)
        g.s->sp[up(g.t, L0, i)].q_bytes = q[i];
    CHECK_EQ_U(route(&g, L0, in, &f, 0), up(g.t, L0, 1));
    g.s->sp[up(g.t, L0, 1)].q_bytes = 90000; /* port 1 congests */
    CHECK_EQ_U(route(&g, L0, in, &f, 5 * us), up(g.t, L0, 1));
    CHECK_EQ_U(route(&g, L0, in, &f, 15 * us), up(g.t, L0, 1)); /* exactly gap: same flowlet */
    /* another flow, new: the argmin now, port 2 */
    CHECK_EQ_U(route(&g, L0, from_host(g.t, 1), &f2, 15 * us), up(g.t, L0, 2));
    CHECK_EQ_U(route(&g, L0, in, &f, 25 * us + 1), up(g.t, L0, 2)); /* gap exceeded: move */
    g.s->sp[up(g.t, L0, 2)].q_bytes = 90000;
    CHECK_EQ_U(route(&g, L0, in, &f, 30 * us), up(g.t, L0, 2));
    arb_lb_stats st;
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.flowlets, 3); /* f twice, f2 once */
    CHECK_EQ_U(st.moves, 1);
    /* reset forgets the flowlets */
    arb_lb_reset(g.lb);
    CHECK_EQ_U(route(&g, L0, in, &f, 31 * us), up(g.t, L0, 3));
    rig_close(&g);
}

/* Flowlet with bias: at a boundary the last port stays unless clearly worse. */
TEST(flowlet_bias)
{
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,2", "flowlet:gap=10us,bias=2"), 0);
    uint32_t L0 = leaf_id(g.t, 0), in = from_host(g.t, 0);
    arb_sim_pkt_info f = pkt(0, 2, 1000);
    const arb_time us = ARB_PS_PER_US;
    g.s->sp[up(g.t, L0, 0)].q_bytes = 100;
    g.s->sp[up(g.t, L0, 1)].q_bytes = 0;
    CHECK_EQ_U(route(&g, L0, in, &f, 0), up(g.t, L0, 1));
    g.s->sp[up(g.t, L0, 0)].q_bytes = 1000;
    g.s->sp[up(g.t, L0, 1)].q_bytes = 1900;
    CHECK_EQ_U(route(&g, L0, in, &f, 20 * us), up(g.t, L0, 1)); /* 1900 <= 2000 */
    g.s->sp[up(g.t, L0, 1)].q_bytes = 2001;
    CHECK_EQ_U(route(&g, L0, in, &f, 40 * us), up(g.t, L0, 0));
    rig_close(&g);
}

/* Each switch has a flowlet table of its own, made at its first flowlet
 * decision: with one entry a switch, a leaf's entry survives the other
 * leaf's decisions (one table for all would have let them evict it), while
 * two flows of one leaf share its entry (no tag, as in hardware). */
TEST(flowlet_tables_per_switch)
{
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,2", "flowlet:gap=10us,table=1"), 0);
    const arb_time us = ARB_PS_PER_US;
    uint32_t L0 = leaf_id(g.t, 0), L1 = leaf_id(g.t, 1);
    arb_sim_pkt_info f = pkt(0, 2, 1000), back = pkt(2, 0, 1000), f2 = pkt(1, 3, 2000);
    arb_lb_stats st;
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.tables, 0); /* none before a decision */
    g.s->sp[up(g.t, L0, 1)].q_bytes = 100;
    g.s->sp[up(g.t, L1, 0)].q_bytes = 100;
    CHECK_EQ_U(route(&g, L0, from_host(g.t, 0), &f, 0), up(g.t, L0, 0));
    CHECK_EQ_U(route(&g, L1, from_host(g.t, 2), &back, 1 * us), up(g.t, L1, 1));
    g.s->sp[up(g.t, L0, 0)].q_bytes = 90000;
    CHECK_EQ_U(route(&g, L0, from_host(g.t, 0), &f, 2 * us), up(g.t, L0, 0));  /* kept */
    CHECK_EQ_U(route(&g, L0, from_host(g.t, 1), &f2, 3 * us), up(g.t, L0, 0)); /* shared */
    /* a spine has one way down to each leaf: it never decides */
    uint32_t S = arb_topo_port(g.t, up(g.t, L0, 0))->peer;
    CHECK_EQ_U(route(&g, S, arb_topo_port(g.t, up(g.t, L0, 0))->peer_port, &f, 4 * us),
               arb_topo_node(g.t, S)->first_port + 1);
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.flowlets, 2);
    CHECK_EQ_U(st.tables, 2);
    /* reset lets the tables go; the next decision makes its switch's anew */
    arb_lb_reset(g.lb);
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.tables, 0);
    CHECK_EQ_U(route(&g, L0, from_host(g.t, 0), &f, 5 * us), up(g.t, L0, 1));
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.tables, 1);
    CHECK_EQ_U(st.flowlets, 1);
    rig_close(&g);
}

/* Round-robin spraying: one counter per switch, exact alternation. */
TEST(spray_round_robin)
{
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,3", "spray"), 0);
    uint32_t L0 = leaf_id(g.t, 0), in = from_host(g.t, 0);
    arb_sim_pkt_info f = pkt(0, 2, 1000), f2 = pkt(1, 3, 5);
    for (unsigned i = 0; i < 7; i++)
        CHECK_EQ_U(route(&g, L0, in, &f, i), up(g.t, L0, i % 3));
    /* the counter is the switch's: another flow continues the rotation */
    CHECK_EQ_U(route(&g, L0, from_host(g.t, 1), &f2, 8), up(g.t, L0, 1));
    /* another switch has its own counter */
    uint32_t L1 = leaf_id(g.t, 1);
    arb_sim_pkt_info b = pkt(2, 0, 1000);
    CHECK_EQ_U(route(&g, L1, from_host(g.t, 2), &b, 9), up(g.t, L1, 0));
    rig_close(&g);
}

/* Random spraying: reproducible from the seed, every port used. */
TEST(spray_random_is_seeded)
{
    struct rig a, b;
    REQUIRE_EQ_I(rig_open(&a, "leafspine:2,2,4", "spray:random"), 0);
    REQUIRE_EQ_I(rig_open(&b, "leafspine:2,2,4", "spray:random"), 0);
    uint32_t L0 = leaf_id(a.t, 0), in = from_host(a.t, 0);
    arb_sim_pkt_info f = pkt(0, 2, 1000);
    unsigned used[4] = {0};
    for (unsigned i = 0; i < 400; i++) {
        uint32_t pa = route(&a, L0, in, &f, i), pb = route(&b, L0, in, &f, i);
        CHECK_EQ_U(pa, pb);
        used[pa - up(a.t, L0, 0)]++;
    }
    for (unsigned i = 0; i < 4; i++)
        CHECK(used[i] > 60 && used[i] < 140);
    rig_close(&a);
    rig_close(&b);
}

static uint32_t peek(struct rig *g, uint32_t node, uint32_t in_port, const arb_sim_pkt_info *f,
                     uint32_t before)
{
    uint64_t token = 0;
    return g->cfg.route_peek(g->cfg.peek_ctx, g->s, node, in_port, f, before, &token);
}

/* route_peek: the decision route makes next (or `before` decisions on),
 * with nothing changed, for the schemes that can tell; none for the rest. */
TEST(route_peek_guesses_without_deciding)
{
    static const char *const exact[] = {"ecmp", "dmodk", "spray", "spray:random"};
    for (unsigned e = 0; e < sizeof exact / sizeof exact[0]; e++) {
        struct rig g;
        REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,3", exact[e]), 0);
        CHECK(g.cfg.route_peek != NULL && g.cfg.peek_ctx == g.lb);
        uint32_t L0 = leaf_id(g.t, 0), in = from_host(g.t, 0);
        arb_sim_pkt_info f = pkt(0, 2, 1000), back = pkt(2, 0, 7);
        arb_lb_stats st0, st1;
        for (unsigned i = 0; i < 7; i++) {
            arb_lb_get_stats(g.lb, &st0);
            uint32_t guess = peek(&g, L0, in, &f, 0), again = peek(&g, L0, in, &f, 0);
            arb_lb_get_stats(g.lb, &st1);
            uint64_t token = 0; /* the public entry points are the installed callbacks */
            CHECK_EQ_U(arb_lb_route_peek(g.lb, g.s, L0, in, &f, 0, &token), guess);
            CHECK_EQ_U(guess, again); /* peeking moved nothing */
            CHECK(memcmp(&st0, &st1, sizeof st0) == 0);
            if (i % 2)
                CHECK_EQ_U(arb_lb_route(g.lb, g.s, L0, in, &f, i), guess);
            else
                CHECK_EQ_U(route(&g, L0, in, &f, i), guess);
        }
        /* down to a host: one candidate, whatever the scheme */
        uint32_t down = peek(&g, L0, up(g.t, L0, 0), &back, 0);
        CHECK_EQ_U(route(&g, L0, up(g.t, L0, 0), &back, 8), down);
        rig_close(&g);
    }
    /* round robin: `before` decisions ahead */
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,3", "spray"), 0);
    uint32_t L0 = leaf_id(g.t, 0), in = from_host(g.t, 0);
    arb_sim_pkt_info f = pkt(0, 2, 1000);
    uint32_t ahead[4];
    for (unsigned b = 0; b < 4; b++)
        ahead[b] = peek(&g, L0, in, &f, b);
    for (unsigned b = 0; b < 4; b++)
        CHECK_EQ_U(route(&g, L0, in, &f, b), ahead[b]);
    rig_close(&g);
    /* random spraying tells only the next draw; the queue-reading schemes nothing */
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,3", "spray:random"), 0);
    CHECK_EQ_U(peek(&g, L0, in, &f, 1), ARB_TOPO_NONE);
    rig_close(&g);
    static const char *const none[] = {"ar", "flowlet", "letflow", "conga"};
    for (unsigned e = 0; e < sizeof none / sizeof none[0]; e++) {
        REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,3", none[e]), 0);
        CHECK_EQ_U(peek(&g, L0, in, &f, 0), ARB_TOPO_NONE);
        rig_close(&g);
    }
}

/* cfg.route passed on unchanged through a wrapper: the simulator then
 * calls it for every decision (arb_sim_route_fast.route is not cfg.route). */
static arb_sim_route_fn wrapped_route;
static uint32_t wrap_route(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                           const arb_sim_pkt_info *f, arb_time now)
{
    return wrapped_route(ctx, s, node, in_port, f, now);
}

/* A 128-host fat tree, every host sending 300 kB to host + 37 at once
 * (events crowd the buckets, so the prefetching stages run), with
 * prefetching on whatever the size (pf_min_bytes 0) or off; with `wrap`,
 * cfg.route wrapped (the switches do not decide by cfg.route_fast's rule). */
static void run_prefetch(const char *scheme, arb_transport tr, int pfc, double loss,
                         const char *fail, int on, int wrap, arb_sim_stats *st,
                         arb_sim_flow_result *fl, uint64_t *staged, arb_lb_stats *ls)
{
    arb_topo *t = simkit_topo("pgft:3;4,4,8;1,4,4;1,1,1");
    char ferr[200];
    int mid = fail && fail[0] == '@'; /* "@ITEM": fails 20 us into the run */
    if (fail && !mid) CHECK_EQ_I(arb_topo_fail(t, fail, ferr, sizeof ferr), 0);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.transport = tr;
    cfg.pfc = pfc;
    cfg.loss = loss;
    cfg.queue_bytes = pfc ? 4u << 20 : 200000;
    cfg.rto = 200 * ARB_PS_PER_US;
    arb_lb *lb = NULL;
    char err[200];
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, scheme, &cfg, err, sizeof err), 0);
    if (wrap) {
        wrapped_route = cfg.route;
        cfg.route = wrap_route;
    }
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    s->pf_min_bytes = on ? 0 : SIZE_MAX;
    /* the event loop guesses round-robin spraying and ECMP inline on an
     * intact fabric, as the load balancer asks through cfg.route_fast */
    const arb_sim_route_fast *rf = s->cfg.route_fast;
    REQUIRE(rf != NULL);
    CHECK((rf->rr != NULL) == (strcmp(scheme, "spray") == 0));
    CHECK((rf->ecmp != NULL) == (strcmp(scheme, "ecmp") == 0 || strcmp(scheme, "eecmp") == 0));
    CHECK(rf->plain_gen == (fail && !mid ? UINT64_MAX : arb_topo_failure_gen(t)));
    for (uint32_t h = 0; h < 128; h++)
        CHECK_EQ_I(arb_sim_add_flow(s, h, (h + 37) % 128, 300000, 0, 0, 1, NULL), 0);
    if (mid) {
        CHECK_EQ_I(arb_sim_run(s, 20 * ARB_PS_PER_US), 0);
        CHECK_EQ_I(arb_topo_fail(t, fail + 1, ferr, sizeof ferr), 0);
        CHECK_EQ_I(arb_lb_refresh(lb), 0);
        arb_sim_fabric_changed(s);
        CHECK(rf->plain_gen == UINT64_MAX);
    }
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_get_stats(s, st);
    for (uint32_t f = 0; f < 128; f++)
        arb_sim_flow(s, f, &fl[f]);
    *staged = s->pf_events;
    /* the switches decided by the rule unless route was wrapped */
    CHECK((rf->made != NULL) == (rf->rr != NULL || rf->ecmp != NULL));
    CHECK((s->rule != NULL) == (!wrap && rf->made != NULL));
    arb_lb_get_stats(lb, ls);
    arb_sim_free(s);
    arb_lb_free(lb);
    arb_topo_free(t);
}

/* Prefetching is a hint, and a guess taken back is the decision: the same
 * run with it and without, to the byte; and the same again when every
 * decision is route's (cfg.route wrapped) rather than cfg.route_fast's rule
 * applied by the simulator. */
TEST(prefetching_changes_nothing)
{
    static const struct {
        const char *scheme;
        arb_transport tr;
        int pfc;
        double loss;
        int guesses; /* route takes guesses back: 2 most, 3 some, 1 lone candidates only, 0 none */
        const char *fail;
    } cases[] = {
        {"spray", ARB_TRANSPORT_IRN, 0, 0.0, 2, NULL},
        {"spray", ARB_TRANSPORT_IRN, 0, 0.0, 3, "switch:L3.0"},
        {"spray", ARB_TRANSPORT_IRN, 0, 0.0, 3, "@switch:L3.1"},
        {"ecmp", ARB_TRANSPORT_IRN, 0, 0.0, 3, "@switch:L3.1"},
        {"spray:random", ARB_TRANSPORT_IRN, 0, 0.001, 1, NULL},
        {"ecmp", ARB_TRANSPORT_GBN, 1, 0.0, 2, NULL},
        {"dmodk", ARB_TRANSPORT_IRN, 0, 0.001, 2, NULL},
        {"eecmp", ARB_TRANSPORT_IRN, 0, 0.0, 2, NULL},
        {"flowlet", ARB_TRANSPORT_GBN, 0, 0.0, 0, NULL},
    };
    static arb_sim_flow_result fl[3][128];
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        arb_sim_stats st[3];
        arb_lb_stats ls[3];
        uint64_t staged[3];
        for (int m = 0; m < 3; m++) /* off, on, on with route wrapped */
            run_prefetch(cases[c].scheme, cases[c].tr, cases[c].pfc, cases[c].loss, cases[c].fail,
                         m > 0, m == 2, &st[m], fl[m], &staged[m], &ls[m]);
        CHECK_EQ_U(st[0].flows_done, 128);
        CHECK(staged[0] == 0 && staged[1] > st[1].events / 8); /* the stages ran */
        CHECK(memcmp(&st[0], &st[1], sizeof st[0]) == 0);
        CHECK(memcmp(fl[0], fl[1], sizeof fl[0]) == 0);
        CHECK(memcmp(&st[1], &st[2], sizeof st[0]) == 0);
        CHECK(memcmp(fl[1], fl[2], sizeof fl[0]) == 0);
        CHECK(memcmp(&ls[1], &ls[2], sizeof ls[0]) == 0); /* the same guesses taken too */
        printf("  %s%s%s: %llu of %llu decisions taken back from guesses (%llu choices)\n",
               cases[c].scheme, cases[c].fail ? ", failing " : "",
               cases[c].fail ? cases[c].fail : "", (unsigned long long)ls[1].guessed,
               (unsigned long long)ls[1].decisions, (unsigned long long)ls[1].choices);
        CHECK_EQ_U(ls[0].guessed, 0);
        /* Guesses are made for the events eight or more places into their
         * event-wheel bucket, so for a part of the decisions only (fewer
         * with PFC, whose pauses thin the buckets out). */
        if (cases[c].guesses == 2) CHECK(ls[1].guessed > ls[1].decisions / 4);
        if (cases[c].guesses == 3) CHECK(ls[1].guessed > 0);
        if (cases[c].guesses == 1)
            CHECK(ls[1].guessed > 0 && ls[1].guessed <= ls[1].decisions - ls[1].choices);
        if (cases[c].guesses == 0) CHECK_EQ_U(ls[1].guessed, 0);
        ls[1].guessed = 0;
        CHECK(memcmp(&ls[0], &ls[1], sizeof ls[0]) == 0);
    }
}

/* A guess comes back with its token: route takes it when the state it
 * assumed holds (and moves the counter as deciding would), else decides. */
TEST(route_takes_back_a_guess_only_if_it_holds)
{
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,3", "spray"), 0);
    uint32_t L0 = leaf_id(g.t, 0), in = from_host(g.t, 0);
    arb_sim_pkt_info f = pkt(0, 2, 1000);
    uint64_t tok0 = 0, tok1 = 0;
    uint32_t p0 = g.cfg.route_peek(g.cfg.peek_ctx, g.s, L0, in, &f, 0, &tok0);
    uint32_t p1 = g.cfg.route_peek(g.cfg.peek_ctx, g.s, L0, in, &f, 1, &tok1);
    CHECK(tok0 != 0 && tok1 != 0 && tok0 != tok1 && p0 != p1);
    /* the guess made one decision ahead is not the one now */
    arb_sim_pkt_info h = f;
    h.guess = p1;
    h.token = tok1;
    arb_lb_stats st;
    CHECK_EQ_U(route(&g, L0, in, &h, 0), p0);
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.guessed, 0);
    /* now it is, and is taken: the next decision is the one after it */
    CHECK_EQ_U(route(&g, L0, in, &h, 1), p1);
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.guessed, 1);
    CHECK_EQ_U(st.decisions, 2);
    CHECK_EQ_U(st.choices, 2);
    uint32_t p2 = route(&g, L0, in, &f, 2); /* three up ports: p0, p1, then the third */
    CHECK(p2 != p0 && p2 != p1 && p2 != ARB_TOPO_NONE);
    rig_close(&g);
    /* a routing engine's guess holds whatever came between */
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,3", "ecmp"), 0);
    tok0 = 0;
    p0 = g.cfg.route_peek(g.cfg.peek_ctx, g.s, L0, in, &f, 0, &tok0);
    CHECK(tok0 != 0);
    h = f;
    h.guess = p0;
    h.token = tok0;
    CHECK_EQ_U(route(&g, L0, in, &f, 0), p0);
    CHECK_EQ_U(route(&g, L0, in, &h, 1), p0);
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.guessed, 1);
    CHECK_EQ_U(st.decisions, 2);
    rig_close(&g);
    /* random spraying gives no token; its guess is never taken back */
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,3", "spray:random"), 0);
    tok0 = 0;
    p0 = g.cfg.route_peek(g.cfg.peek_ctx, g.s, L0, in, &f, 0, &tok0);
    CHECK(p0 != ARB_TOPO_NONE && tok0 == 0);
    rig_close(&g);
}

/* LetFlow: the port changes only at flowlet boundaries. */
TEST(letflow_changes_only_at_boundaries)
{
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,4", "letflow:gap=10us"), 0);
    uint32_t L0 = leaf_id(g.t, 0), in = from_host(g.t, 0);
    arb_sim_pkt_info f = pkt(0, 2, 1000);
    const arb_time us = ARB_PS_PER_US;
    unsigned distinct = 0, seen[4] = {0};
    uint32_t prev = ARB_TOPO_NONE;
    int changes = 0;
    for (unsigned fl = 0; fl < 20; fl++) {
        arb_time t0 = fl * 30 * us; /* 30 us apart: 20 us of silence between flowlets */
        uint32_t p = route(&g, L0, in, &f, t0);
        for (unsigned i = 1; i < 10; i++)
            CHECK_EQ_U(route(&g, L0, in, &f, t0 + i * us), p);
        if (!seen[p - up(g.t, L0, 0)]++) distinct++;
        if (prev != ARB_TOPO_NONE && p != prev) changes++;
        prev = p;
    }
    CHECK(distinct >= 3);
    arb_lb_stats st;
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.flowlets, 20);
    CHECK_EQ_U(st.moves, (uint64_t)changes);
    rig_close(&g);
}

/* ar_ftree: D-mod-k's parallel link on the way down whatever the queues,
 * argmin on the way up; ar takes the argmin down as well. */
TEST(ar_ftree_down_is_dmodk)
{
    /* 2 leaves of 2 hosts, 2 spines, 2 parallel links leaf-spine */
    const char *spec = "pgft:2;2,2;1,2;1,2";
    struct rig g, a;
    REQUIRE_EQ_I(rig_open(&g, spec, "ar_ftree"), 0);
    REQUIRE_EQ_I(rig_open(&a, spec, "ar"), 0);
    const arb_pgft *pg = arb_topo_pgft(g.t);
    uint32_t S0 = arb_topo_node_id(g.t, 2, 0), L0 = leaf_id(g.t, 0);
    const arb_node *sn = arb_topo_node(g.t, S0);
    for (uint32_t d = 2; d < 4; d++) {
        arb_sim_pkt_info f = pkt(0, d, 1000);
        uint32_t dm = arb_pgft_down_port(pg, sn, d);
        uint32_t other = dm == sn->first_port + 1 ? sn->first_port + 3 : sn->first_port + 1;
        g.s->sp[dm].q_bytes = a.s->sp[dm].q_bytes = 50000;
        uint32_t in = sn->first_up; /* unused by the choosers: any port of S0 */
        (void)in;
        uint32_t from_l0 = arb_topo_port(g.t, up(g.t, L0, 0))->peer_port;
        CHECK_EQ_U(route(&g, S0, from_l0, &f, 0), dm);
        CHECK_EQ_U(route(&a, S0, from_l0, &f, 0), other);
        g.s->sp[dm].q_bytes = a.s->sp[dm].q_bytes = 0;
    }
    /* up at the leaf: 4 up ports (2 spines x 2 links), the shallowest */
    arb_sim_pkt_info f = pkt(0, 3, 1000);
    for (unsigned q = 0; q < 4; q++)
        g.s->sp[up(g.t, L0, q)].q_bytes = 1000 * (4 - q);
    CHECK_EQ_U(route(&g, L0, from_host(g.t, 0), &f, 0), up(g.t, L0, 3));
    rig_close(&g);
    rig_close(&a);
}

/* CONGA by hand on leafspine:2,2,2: a flowlet takes uplink u; the spine's
 * downlink on that path is congested (DRE 1.6 MB of 2.5 MB full, metric
 * 5); the destination leaf learns it, feeds it back on a reverse packet;
 * the source leaf's next flowlet takes the other uplink. */
TEST(conga_moves_after_feedback)
{
    struct rig g;
    REQUIRE_EQ_I(rig_open(&g, "leafspine:2,2,2", "conga:gap=50us"), 0);
    const arb_time us = ARB_PS_PER_US;
    uint32_t L0 = leaf_id(g.t, 0), L1 = leaf_id(g.t, 1);
    arb_sim_pkt_info f = pkt(0, 2, 1000);
    /* flowlet 1: both uplinks idle, no feedback: a seeded random one */
    uint32_t u = route(&g, L0, from_host(g.t, 0), &f, 0);
    unsigned q = u - up(g.t, L0, 0);
    CHECK(q < 2);
    uint32_t w = arb_lb_inband(g.lb, g.s, L0, from_host(g.t, 0), u, &f, 0);
    CHECK_EQ_U(w, q | 0x800u); /* LBTag q, CE 0, no feedback yet */
    /* at the spine: CE = max(CE, metric of the downlink to L1) */
    uint32_t S = arb_topo_port(g.t, u)->peer, s_in = arb_topo_port(g.t, u)->peer_port;
    uint32_t s_out = route(&g, S, s_in, &f, 2 * us);
    CHECK_EQ_U(s_out, arb_topo_node(g.t, S)->first_port + 1);
    g.s->now = 2 * us;
    g.s->dre[s_out].x = (uint64_t)1600000 << 8; /* 1.6 MB: 8 x 1.6 / 2.5 = 5.12 */
    g.s->dre[s_out].epoch = 0;
    CHECK_EQ_U(arb_sim_port_dre(g.s, s_out), 1600000);
    f.lb = w;
    w = arb_lb_inband(g.lb, g.s, S, s_in, s_out, &f, 2 * us);
    CHECK_EQ_U(w, q | 0x800u | (5u << 8));
    /* destination leaf: stores CE for (source group 0, tag q), strips the word */
    f.lb = w;
    uint32_t l1_in = arb_topo_port(g.t, s_out)->peer_port;
    uint32_t to_host = route(&g, L1, l1_in, &f, 3 * us);
    CHECK_EQ_U(arb_lb_inband(g.lb, g.s, L1, l1_in, to_host, &f, 3 * us), 0);
    /* a reverse packet (the ack) leaves L1: it carries the feedback */
    arb_sim_pkt_info a = pkt(2, 0, 1000);
    uint32_t ru = route(&g, L1, from_host(g.t, 2), &a, 4 * us);
    uint32_t rw = arb_lb_inband(g.lb, g.s, L1, from_host(g.t, 2), ru, &a, 4 * us);
    CHECK_EQ_U(rw, (ru - up(g.t, L1, 0)) | 0x800u | (q << 12) | (5u << 20) | 0x800000u);
    /* ... and reaches L0 (its spine metric is 0 here) */
    a.lb = rw;
    uint32_t l0_in = up(g.t, L0, ru - up(g.t, L1, 0));
    CHECK_EQ_U(arb_lb_conga_metric(g.lb, L0, 1, q, 5 * us), 0);
    CHECK_EQ_U(arb_lb_inband(g.lb, g.s, L0, l0_in, from_host(g.t, 0), &a, 5 * us), 0);
    CHECK_EQ_U(arb_lb_conga_metric(g.lb, L0, 1, q, 5 * us), 5);
    /* inside the gap the flowlet stays on u ... */
    CHECK_EQ_U(route(&g, L0, from_host(g.t, 0), &f, 40 * us), u);
    /* ... after it, the other uplink (metric 0 against 5) */
    CHECK_EQ_U(route(&g, L0, from_host(g.t, 0), &f, 91 * us), up(g.t, L0, 1 - q));
    /* the metric ages out after 10 ms */
    CHECK_EQ_U(arb_lb_conga_metric(g.lb, L0, 1, q, 5 * us + 10 * ARB_PS_PER_MS), 5);
    CHECK_EQ_U(arb_lb_conga_metric(g.lb, L0, 1, q, 5 * us + 10 * ARB_PS_PER_MS + 1), 0);
    arb_lb_stats st;
    arb_lb_get_stats(g.lb, &st);
    CHECK_EQ_U(st.fb_sent, 1);
    CHECK_EQ_U(st.fb_received, 1);
    CHECK_EQ_U(st.moves, 1);
    CHECK_EQ_U(st.tables, 2); /* the source leaves' (L0, and L1 for the ack); not the spine's */
    rig_close(&g);
}

/* The DRE: bytes on transmit, decayed by (1 - alpha) per period. */
TEST(dre_counts_and_decays)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    arb_lb *lb = NULL;
    char err[200];
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, "conga:tdre=10us,alpha=0.5", &cfg, err, sizeof err), 0);
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 4096, 0, 1, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, 9 * ARB_PS_PER_US), 0);
    uint32_t nic = arb_topo_node(t, 0)->first_up;
    /* the packet (4178 B) left at 0; the ack came back at about 4.7 us,
     * before the first period ends: no decay yet */
    CHECK(arb_sim_now(s) < 10 * ARB_PS_PER_US);
    CHECK_EQ_U(arb_sim_port_dre(s, nic), 4178);
    s->now = 10 * ARB_PS_PER_US;
    CHECK_EQ_U(arb_sim_port_dre(s, nic), 2089);
    s->now = 30 * ARB_PS_PER_US + 5;
    CHECK_EQ_U(arb_sim_port_dre(s, nic), 522); /* 4178 / 8 = 522.25 */
    CHECK_EQ_U(arb_sim_port_dre(s, 12345), 0);
    arb_sim_free(s);
    arb_lb_free(lb);
    arb_topo_free(t);
}

/* A switch port's DRE counts a packet as it starts on the link, not when
 * it is queued behind another (CONGA's DRE counts the bytes sent): two
 * hosts' packets reach the switch at once for the same host; half-way
 * through the first one's transmission the downlink's DRE holds it alone,
 * half-way through the second's both. */
TEST(dre_counts_a_packet_as_it_starts)
{
    arb_topo *t = simkit_topo("star:3");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    arb_lb *lb = NULL;
    char err[200];
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, "conga:tdre=100us,alpha=0.5", &cfg, err, sizeof err), 0);
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 2, 4096, 0, 1, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 1, 2, 4096, 0, 2, 1, NULL), 0);
    const arb_port *ports = arb_topo_ports(t);
    uint32_t nic = arb_topo_node(t, 0)->first_up, down = UINT32_MAX;
    const arb_node *sw = arb_topo_node(t, 3);
    for (uint32_t p = sw->first_port; p < sw->first_up + sw->n_up; p++)
        if (ports[p].peer == 2) down = p;
    REQUIRE(down != UINT32_MAX);
    arb_time tx = arb_time_tx(4178, ports[nic].rate), at = tx + ports[nic].delay;
    CHECK_EQ_I(arb_sim_run(s, at + tx / 2), 0);
    CHECK_EQ_U(arb_sim_port_dre(s, down), 4178); /* the second waits: not sent yet */
    CHECK_EQ_I(arb_sim_run(s, at + tx + tx / 2), 0);
    CHECK_EQ_U(arb_sim_port_dre(s, down), 2 * 4178); /* (no period has passed: no decay) */
    arb_sim_free(s);
    arb_lb_free(lb);
    arb_topo_free(t);
}

/* ------------------------------------------------------------------ */
/* Small simulations                                                    */
/* ------------------------------------------------------------------ */

/* leafspine:2,1,2 with the link leaf 0 - spine 1 delay 1 us + skew. */
static arb_topo *skewed(const char *spec, arb_time skew)
{
    arb_topo *t = simkit_topo(spec);
    uint32_t L0 = leaf_id(t, 0);
    const arb_port *p = arb_topo_port(t, up(t, L0, 1));
    CHECK_EQ_I(arb_topo_set_link(t, up(t, L0, 1), p->rate, p->delay + skew), 0);
    return t;
}

struct spray_result {
    arb_sim_flow_result r;
    arb_sim_stats st;
};

static void run_spray(arb_transport tr, arb_time reorder, struct spray_result *out)
{
    arb_topo *t = skewed("leafspine:2,1,2", 20 * ARB_PS_PER_US);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.transport = tr;
    cfg.irn_reorder = reorder;
    arb_lb *lb = NULL;
    char err[200];
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, "spray", &cfg, err, sizeof err), 0);
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 1000000, 0, 1000, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow(s, 0, &out->r);
    arb_sim_get_stats(s, &out->st);
    arb_sim_free(s);
    arb_lb_free(lb);
    arb_topo_free(t);
}

/* Spraying over two paths 20 us apart: every other packet is overtaken.
 * Go-back-N discards and resends; IRN with a reorder window of 25 us
 * resends nothing and holds the overtaking packets meanwhile. */
TEST(spray_skew_gbn_against_irn)
{
    struct spray_result gbn, irn, irn0;
    run_spray(ARB_TRANSPORT_GBN, 0, &gbn);
    run_spray(ARB_TRANSPORT_IRN, 25 * ARB_PS_PER_US, &irn);
    run_spray(ARB_TRANSPORT_IRN, 0, &irn0);
    CHECK(gbn.r.finish != ARB_TIME_NEVER && irn.r.finish != ARB_TIME_NEVER);
    CHECK(gbn.r.ooo_pkts > 0 && irn.r.ooo_pkts > 0);
    CHECK(gbn.r.retx_bytes > 1000000); /* more than the message again */
    CHECK_EQ_U(irn.r.retx_bytes, 0);
    CHECK(irn0.r.retx_bytes > 0); /* without the window IRN takes late packets for lost */
    CHECK(gbn.r.finish > 2 * irn.r.finish);
    /* the reorder buffer: the fast path's half of 100 Gb/s for 20 us =
     * 125 kB, give or take a packet */
    CHECK(irn.r.reorder_peak_bytes > 110000 && irn.r.reorder_peak_bytes < 140000);
    printf("  spray 1 MB, 20 us skew: gbn finish %.1f us retx %llu ooo %llu; irn(25us) finish "
           "%.1f us retx %llu ooo %llu peak %u; irn(0) finish %.1f us retx %llu ooo %llu\n",
           (double)(gbn.r.finish - gbn.r.start) / 1e6, (unsigned long long)gbn.r.retx_bytes,
           (unsigned long long)gbn.r.ooo_pkts, (double)(irn.r.finish - irn.r.start) / 1e6,
           (unsigned long long)irn.r.retx_bytes, (unsigned long long)irn.r.ooo_pkts,
           irn.r.reorder_peak_bytes, (double)(irn0.r.finish - irn0.r.start) / 1e6,
           (unsigned long long)irn0.r.retx_bytes, (unsigned long long)irn0.r.ooo_pkts);
}

/* Messages of 8 packets every 4 us (a burst of 2.7 us at the 100 Gb/s
 * host, 5.3 us to drain into a 50 Gb/s uplink) in two trains of 40, the
 * second starting at 300 us, after the first has drained: the uplink
 * still busy with the previous message makes flowlet AR move each message
 * when the gap allows. */
static void run_trains(const char *scheme, struct order *o, arb_lb_stats *lst)
{
    arb_topo *t = skewed("leafspine:2,1,2,50G", 20 * ARB_PS_PER_US);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.ack_every = 1000; /* only the last ack of each message */
    memset(o, 0, sizeof *o);
    o->port = arb_topo_node(t, leaf_id(t, 1))->first_port; /* leaf 1 -> host 1 */
    cfg.tap = order_tap;
    cfg.tap_ctx = o;
    arb_lb *lb = NULL;
    char err[200];
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, scheme, &cfg, err, sizeof err), 0);
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    for (uint32_t m = 0; m < 80; m++) {
        arb_time start = m * 4 * ARB_PS_PER_US + (m >= 40 ? 140 * ARB_PS_PER_US : 0);
        CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 8 * 4096, start, 1000, 1, NULL), 0);
    }
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.flows_done, 80);
    CHECK_EQ_U(o->n, 640);
    arb_lb_get_stats(lb, lst);
    arb_sim_free(s);
    arb_lb_free(lb);
    arb_topo_free(t);
}

TEST(flowlet_gap_against_skew)
{
    struct order small, large, lf;
    arb_lb_stats s1, s2, s3;
    run_trains("flowlet:gap=1us", &small, &s1);
    run_trains("flowlet:gap=25us", &large, &s2);
    run_trains("letflow:gap=25us", &lf, &s3);
    /* gap 1 us < 20 us of skew: messages move while the slow path still
     * carries the previous ones */
    CHECK(s1.moves > 10);
    CHECK(small.ooo > 0);
    /* gap 25 us > skew: the only boundary is the silence between the
     * trains, and nothing arrives out of order (two flowlets of data at
     * leaf 0, two of acks at leaf 1) */
    CHECK_EQ_U(s2.flowlets, 4);
    CHECK_EQ_U(large.ooo, 0);
    CHECK_EQ_U(s3.flowlets, 4);
    CHECK_EQ_U(lf.ooo, 0);
    printf("  trains: flowlet gap 1us: %llu flowlets, %llu moves, %llu of 640 out of order; "
           "gap 25us: %llu flowlets, %llu out of order; letflow 25us: %llu moves, %llu\n",
           (unsigned long long)s1.flowlets, (unsigned long long)s1.moves,
           (unsigned long long)small.ooo, (unsigned long long)s2.flowlets,
           (unsigned long long)large.ooo, (unsigned long long)s3.moves, (unsigned long long)lf.ooo);
}

/* Same scheme, same seed: the same run, to the byte. */
TEST(deterministic_runs)
{
    const char *schemes[] = {"letflow:gap=1us", "spray:random", "conga:gap=1us", "ar"};
    for (unsigned i = 0; i < 4; i++) {
        arb_sim_stats st[2];
        arb_lb_stats ls[2];
        for (int k = 0; k < 2; k++) {
            arb_topo *t = simkit_topo("leafspine:2,4,4");
            arb_sim_config cfg;
            arb_sim_config_default(&cfg);
            cfg.seed = 99;
            cfg.transport = ARB_TRANSPORT_IRN;
            arb_lb *lb = NULL;
            char err[200];
            REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, schemes[i], &cfg, err, sizeof err), 0);
            arb_sim *s = NULL;
            REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
            for (uint32_t h = 0; h < 8; h++)
                arb_sim_add_flow(s, h, (h + 4) % 8, 300000, h * 1000, (uint16_t)(100 + h), 1, NULL);
            CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
            arb_sim_get_stats(s, &st[k]);
            arb_lb_get_stats(lb, &ls[k]);
            CHECK_EQ_U(st[k].flows_done, 8);
            CHECK_EQ_U(st[k].pkts_sent,
                       st[k].pkts_delivered + st[k].drops + st[k].unroutable + st[k].in_flight);
            arb_sim_free(s);
            arb_lb_free(lb);
            arb_topo_free(t);
        }
        CHECK(memcmp(&st[0], &st[1], sizeof st[0]) == 0);
        CHECK(memcmp(&ls[0], &ls[1], sizeof ls[0]) == 0);
    }
}

int main(void)
{
    RUN(names_and_errors);
    RUN(plain_engine_matches_router);
    RUN(ar_argmin_and_ties);
    RUN(ar_bias_keeps_current);
    RUN(flowlet_keeps_port_inside_gap);
    RUN(flowlet_bias);
    RUN(flowlet_tables_per_switch);
    RUN(spray_round_robin);
    RUN(spray_random_is_seeded);
    RUN(route_peek_guesses_without_deciding);
    RUN(prefetching_changes_nothing);
    RUN(route_takes_back_a_guess_only_if_it_holds);
    RUN(letflow_changes_only_at_boundaries);
    RUN(ar_ftree_down_is_dmodk);
    RUN(conga_moves_after_feedback);
    RUN(dre_counts_and_decays);
    RUN(dre_counts_a_packet_as_it_starts);
    RUN(spray_skew_gbn_against_irn);
    RUN(flowlet_gap_against_skew);
    RUN(deterministic_runs);
    return testkit_done();
}
