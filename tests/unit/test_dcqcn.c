/* Unit tests: DCQCN in the simulator (notification point, reaction point,
 * pacing) on small stars; the simulator's reaction point and the
 * responder's controller (cc.h) give the same rates on one sequence of
 * events. */
#include "arbor/cc.h"
#include "arbor/sim.h"
#include "arbor/topo.h"
#include "sim/sim_int.h"
#include "simkit.h"
#include "testkit.h"

#include <stdlib.h>
#include <string.h>

/* What a tap saw: data bytes per flow per 1 ms slot on one port, data
 * send times on another, CNP times per flow. */
#define SLOTS 64
#define MAX_LOG 4096
struct seen {
    uint32_t bottleneck;      /* port whose data is counted per slot */
    uint64_t bytes[2][SLOTS]; /* flows 0 and 1 */
    uint32_t nic;             /* port whose data start times are logged */
    uint32_t np;              /* the receiver's NIC port (CNPs leave there) */
    arb_time tx[MAX_LOG];
    uint32_t n_tx;
    arb_time cnp[2][MAX_LOG];
    uint32_t n_cnp[2];
};

static void tap(void *ctx, const arb_sim *s, uint32_t port, const arb_sim_pkt_info *f, arb_time now)
{
    (void)s;
    struct seen *w = ctx;
    if (f->kind == ARB_SIM_DATA && port == w->bottleneck && f->conn < 2) {
        uint64_t slot = now / ARB_PS_PER_MS;
        if (slot < SLOTS) w->bytes[f->conn][slot] += f->bytes;
    }
    if (f->kind == ARB_SIM_DATA && port == w->nic && w->n_tx < MAX_LOG) w->tx[w->n_tx++] = now;
    if (f->kind == ARB_SIM_CNP && port == w->np && f->conn < 2 && w->n_cnp[f->conn] < MAX_LOG)
        w->cnp[f->conn][w->n_cnp[f->conn]++] = now;
}

/* Gb/s of flow f over slots [a, b). */
static double gbps(const struct seen *w, int f, int a, int b)
{
    uint64_t sum = 0;
    for (int i = a; i < b; i++)
        sum += w->bytes[f][i];
    return (double)sum * 8 / ((double)(b - a) * 1e-3) / 1e9;
}

/* star:3, hosts 1 and 2 send to host 0 (ports: the switch is node 3, its
 * down port 0 leads to host 0; host h's NIC is its port 0). */
static arb_sim *incast_sim(const arb_topo *t, arb_sim_config *cfg, struct seen *w)
{
    cfg->route = simkit_dmodk;
    cfg->tap = tap;
    cfg->tap_ctx = w;
    memset(w, 0, sizeof *w);
    w->bottleneck = arb_topo_node(t, 3)->first_port;
    w->nic = arb_topo_node(t, 1)->first_port;
    w->np = arb_topo_node(t, 0)->first_port;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, cfg), 0);
    return s;
}

/*
 * Flow 0 (host 1) streams alone at line rate for 5 ms, then flow 1
 * (host 2) joins. Without DCQCN the bottleneck queue grows at 100 Gb/s
 * until the 16 MB buffer overflows. With DCQCN (defaults: g 1/256, T 55
 * us, B 10 MB, F 5, R_AI 40 Mb/s) the first CNPs cut both flows, fast
 * recovery and additive increase bring them back, and the queue stays
 * near the marking band (kmin 100 KB .. kmax 400 KB): measured peak
 * 447,046 B (409,444 with run.order = global). Over 40..60 ms the two
 * flows carry the link (measured 46.6 and 53.4 Gb/s; 56.2 and 43.7 in the
 * global order): DCQCN converges slowly and its byte counter favours the
 * faster flow (it reaches B sooner and so increases more often), which
 * leaves a lasting gap of up to about 10% of the link at these parameters,
 * to whichever flow got ahead (the order of simultaneous events decides
 * it: incast_dcqcn_symmetric_is_fair below). The
 * test asks for each flow within 50 +- 10 Gb/s (Jain index >= 0.96) and
 * the pair within 5% of line rate.
 */
TEST(incast_dcqcn_bounds_queue_and_shares)
{
    arb_topo *t = simkit_topo("star:3");
    static struct seen w, w0;
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.queue_bytes = 16u << 20;
    cfg.dcqcn = 1;
    arb_sim *s = incast_sim(t, &cfg, &w);
    CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, 600000000, 0, 1001, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 2, 0, 600000000, 5 * ARB_PS_PER_MS, 1002, 2, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, 60 * ARB_PS_PER_MS), 0);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    arb_sim_port_stats ps;
    CHECK_EQ_I(arb_sim_port(s, w.bottleneck, &ps), 0);
    CHECK(ps.max_queue < 500000);
    CHECK_EQ_U(st.drops, 0);
    CHECK(st.cnps_sent > 0);
    CHECK_EQ_U(st.cnps_sent, st.cnps_received); /* nothing lost on the way back */
    CHECK_EQ_U(st.rate_cuts, st.cnps_received);
    /* Alone, flow 0 runs at line rate (full slots 1..4). */
    CHECK(gbps(&w, 0, 1, 5) > 99.9);
    double a = gbps(&w, 0, 40, 60), b = gbps(&w, 1, 40, 60);
    CHECK(a > 40 && a < 60);
    CHECK(b > 40 && b < 60);
    CHECK(a + b > 95);
    double jain = (a + b) * (a + b) / (2 * (a * a + b * b));
    CHECK(jain >= 0.96);
    arb_sim_flow_result r0, r1;
    arb_sim_flow(s, 0, &r0);
    arb_sim_flow(s, 1, &r1);
    CHECK(r0.rate_cuts > 0 && r1.rate_cuts > 0);
    CHECK_EQ_U(r0.rate_cuts + r1.rate_cuts, st.rate_cuts);
    CHECK(r0.min_rate < 50000000000u);
    arb_sim_free(s);

    /* The same without DCQCN: the queue fills the buffer and drops. */
    cfg.dcqcn = 0;
    s = incast_sim(t, &cfg, &w0);
    CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, 600000000, 0, 1001, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 2, 0, 600000000, 5 * ARB_PS_PER_MS, 1002, 2, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, 20 * ARB_PS_PER_MS), 0);
    arb_sim_port_stats ps0;
    arb_sim_port(s, w0.bottleneck, &ps0);
    arb_sim_get_stats(s, &st);
    CHECK(ps0.max_queue > 16000000);
    CHECK(st.drops > 0);
    CHECK_EQ_U(st.cnps_sent, 0);
    CHECK(ps.max_queue * 30 < ps0.max_queue);
    arb_sim_free(s);
    arb_topo_free(t);
}

/*
 * Symmetric starts: two flows of one size from hosts 1 and 2, both at time
 * 0, through one bottleneck. Nothing in DCQCN pulls the two rates
 * together within 60 ms (its byte counter favours whichever flow is ahead,
 * above), so which flow ends up ahead, and by how much, is decided by the
 * draws of the ECN marks and the order of simultaneous events, not by the
 * flows: one seed's split is not a property to hold a bound to (in either
 * order of simultaneous events one flow's share over 40..60 ms reaches 2/3
 * at some seed in 1..10). What does not depend on the split: (a) every
 * seed's pair fills the link, as in the test above (DCQCN holds the queue
 * in the marking band, so the port is never left idle for long: more than
 * 95 of 100 Gb/s); (b) by symmetry neither flow is favoured: were
 * each seed a fair coin for which flow is ahead, one flow would be ahead
 * in 9 or all 10 of seeds 1..10 with probability 2 x 11/1024 = 2.1%; the
 * test asks each flow to be ahead at two seeds or more, a check that fails
 * a systematic bias toward one host (a flow ahead at every seed) and not
 * the scatter of fair draws.
 */
TEST(incast_dcqcn_symmetric_is_fair)
{
    arb_topo *t = simkit_topo("star:3");
    static struct seen w;
    int ahead[2] = {0, 0};
    for (uint64_t seed = 1; seed <= 10; seed++) {
        arb_sim_config cfg;
        arb_sim_config_default(&cfg);
        cfg.dcqcn = 1;
        cfg.seed = seed;
        arb_sim *s = incast_sim(t, &cfg, &w);
        CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, 600000000, 0, 1001, 1, NULL), 0);
        CHECK_EQ_I(arb_sim_add_flow(s, 2, 0, 600000000, 0, 1002, 2, NULL), 0);
        CHECK_EQ_I(arb_sim_run(s, 60 * ARB_PS_PER_MS), 0);
        double a = gbps(&w, 0, 40, 60), b = gbps(&w, 1, 40, 60);
        if (!(a + b > 95))
            TESTKIT_REPORT("seed %llu: the pair carries %.2f Gb/s", (unsigned long long)seed,
                           a + b);
        ahead[a < b]++;
        arb_sim_free(s);
    }
    if (!(ahead[0] >= 2 && ahead[1] >= 2))
        TESTKIT_REPORT("flow 0 ahead at %d of 10 seeds, flow 1 at %d", ahead[0], ahead[1]);
    arb_topo_free(t);
}

/* Without congestion DCQCN never acts: the timing of test_sim's
 * link_timing_pipelined holds to the picosecond (3 full packets of T =
 * 334240 ps, a last one of 918 + 82 B = 80000 ps, two 1 us wires). */
TEST(no_congestion_keeps_line_rate_timing)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.dcqcn = 1;
    cfg.route = simkit_dmodk;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 2 * 4096 + 918, 0, 1000, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow_result r;
    arb_sim_flow(s, 0, &r);
    CHECK_EQ_U(r.finish, 3 * 334240 + 80000 + 2 * ARB_PS_PER_US);
    CHECK_EQ_U(r.rate_cuts, 0);
    CHECK_EQ_U(r.min_rate, 100000000000u);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.cnps_sent, 0);
    arb_sim_free(s);

    /* A long flow alone: 1000 packets back to back, last byte at 1000 T +
     * T + 2 us (NIC, switch, two wires), exactly as without DCQCN. */
    s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 1000 * 4096, 0, 1000, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow(s, 0, &r);
    CHECK_EQ_U(r.finish, 1001 * 334240 + 2 * ARB_PS_PER_US);
    arb_sim_free(s);
    arb_topo_free(t);
}

/*
 * Every packet marked (kmin 0, kmax 1: any queue marks) and a minimum
 * rate of 60 Gb/s, so that the two senders (at least 120 Gb/s into a
 * 100 Gb/s port) keep a queue and marks keep coming: the receiver sends
 * at most one CNP per flow per 50 us, and one as soon as the interval has
 * passed.
 */
TEST(cnp_spacing)
{
    arb_topo *t = simkit_topo("star:3");
    static struct seen w;
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.dcqcn = 1;
    cfg.ecn_kmin = 0;
    cfg.ecn_kmax = 1;
    cfg.dcqcn_min_rate = 60000000000u;
    arb_sim *s = incast_sim(t, &cfg, &w);
    CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, 20000000, 0, 1001, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 2, 0, 20000000, 0, 1002, 2, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, 2 * ARB_PS_PER_MS), 0);
    for (int f = 0; f < 2; f++) {
        CHECK(w.n_cnp[f] >= 35 && w.n_cnp[f] <= 40); /* 2 ms / 50 us */
        arb_time min_gap = ARB_TIME_NEVER;
        for (uint32_t i = 1; i < w.n_cnp[f]; i++) {
            arb_time g = w.cnp[f][i] - w.cnp[f][i - 1];
            if (g < min_gap) min_gap = g;
        }
        CHECK(min_gap >= 50 * ARB_PS_PER_US);
        /* Marked data arrives every few hundred ns, so each CNP follows
         * the interval within one packet time (plus the ack ahead of it). */
        CHECK(min_gap < 52 * ARB_PS_PER_US);
    }
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.cnps_sent, (uint64_t)w.n_cnp[0] + w.n_cnp[1]);
    arb_sim_free(s);

    /* A longer interval spaces them further. */
    cfg.dcqcn_cnp_interval = 200 * ARB_PS_PER_US;
    s = incast_sim(t, &cfg, &w);
    CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, 20000000, 0, 1001, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 2, 0, 20000000, 0, 1002, 2, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, 2 * ARB_PS_PER_MS), 0);
    for (int f = 0; f < 2; f++) {
        CHECK(w.n_cnp[f] >= 3 && w.n_cnp[f] <= 11);
        for (uint32_t i = 1; i < w.n_cnp[f]; i++)
            CHECK(w.cnp[f][i] - w.cnp[f][i - 1] >= 200 * ARB_PS_PER_US);
    }
    arb_sim_free(s);
    arb_topo_free(t);
}

/*
 * Pacing to the picosecond: one CNP per flow (interval 1 s) with alpha 1
 * halves the rate to 50 Gb/s, and no increase comes (T and B huge), so
 * from then on the sender's NIC starts a full packet (4178 B) every
 * 4178 x 8 / 50e9 s = 668480 ps, twice the 334240 ps it takes at line
 * rate. Before the cut the gaps are exactly 334240 ps.
 */
TEST(pacing_exact_after_cut)
{
    arb_topo *t = simkit_topo("star:3");
    static struct seen w;
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.dcqcn = 1;
    cfg.ecn_kmin = 0;
    cfg.ecn_kmax = 1;
    cfg.dcqcn_cnp_interval = ARB_PS_PER_S;
    cfg.dcqcn_rate_timer = ARB_PS_PER_S;
    cfg.dcqcn_byte_counter = UINT64_C(1) << 50;
    arb_sim *s = incast_sim(t, &cfg, &w);
    CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, 4096 * 2000, 0, 1001, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 2, 0, 4096 * 2000, 0, 1002, 2, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.cnps_sent, 2);
    CHECK_EQ_U(st.rate_cuts, 2);
    arb_sim_flow_result r;
    arb_sim_flow(s, 0, &r);
    CHECK_EQ_U(r.min_rate, 50000000000u);
    CHECK(r.finish != ARB_TIME_NEVER);
    CHECK_EQ_U(w.n_tx, 2000);
    uint32_t fast = 0, slow = 0, other = 0;
    int after_cut = 0;
    for (uint32_t i = 1; i < w.n_tx; i++) {
        arb_time g = w.tx[i] - w.tx[i - 1];
        if (g == 334240 && !after_cut)
            fast++;
        else if (g == 668480)
            slow++, after_cut = 1;
        else
            other++; /* the gap the cut fell in */
    }
    CHECK(fast > 5);
    CHECK(slow > 1900);
    CHECK(other <= 1);
    CHECK_EQ_U(fast + slow + other, 1999);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* After the competing flow ends, timer and byte counter bring the rate
 * back to line rate; the last slots run at 100 Gb/s again. */
TEST(recovers_line_rate_after_congestion)
{
    arb_topo *t = simkit_topo("star:3");
    static struct seen w;
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.dcqcn = 1;
    arb_sim *s = incast_sim(t, &cfg, &w);
    CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, 600000000, 0, 1001, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 2, 0, 20000000, 0, 1002, 2, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, 60 * ARB_PS_PER_MS), 0);
    arb_sim_flow_result r;
    arb_sim_flow(s, 1, &r);
    CHECK(r.finish != ARB_TIME_NEVER && r.finish < 20 * ARB_PS_PER_MS);
    CHECK(gbps(&w, 0, 55, 60) > 99.9);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* Same inputs, same run. */
TEST(deterministic)
{
    arb_topo *t = simkit_topo("star:3");
    static struct seen w;
    arb_sim_stats a, b;
    for (int k = 0; k < 2; k++) {
        arb_sim_config cfg;
        arb_sim_config_default(&cfg);
        cfg.dcqcn = 1;
        cfg.transport = ARB_TRANSPORT_IRN;
        cfg.queue_bytes = 300000;
        arb_sim *s = incast_sim(t, &cfg, &w);
        CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, 30000000, 0, 1001, 1, NULL), 0);
        CHECK_EQ_I(arb_sim_add_flow(s, 2, 0, 30000000, 100, 1002, 2, NULL), 0);
        CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
        arb_sim_get_stats(s, k ? &b : &a);
        CHECK_EQ_U((k ? b : a).flows_done, 2);
        CHECK_EQ_U((k ? b : a).in_flight, 0);
        arb_sim_free(s);
    }
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    CHECK(a.rate_cuts > 0);
    arb_topo_free(t);
}

TEST(bad_config)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = simkit_dmodk;
    cfg.dcqcn = 1;
    arb_sim *s = NULL;
    cfg.dcqcn_g = 0;
    CHECK_EQ_I(arb_sim_new(&s, t, &cfg), ARB_EINVAL);
    cfg.dcqcn_g = 1.5;
    CHECK_EQ_I(arb_sim_new(&s, t, &cfg), ARB_EINVAL);
    cfg.dcqcn_g = 1.0 / 16;
    cfg.dcqcn_rate_timer = 0;
    CHECK_EQ_I(arb_sim_new(&s, t, &cfg), ARB_EINVAL);
    cfg.dcqcn_rate_timer = 1;
    cfg.dcqcn_min_rate = 0;
    CHECK_EQ_I(arb_sim_new(&s, t, &cfg), ARB_EINVAL);
    cfg.dcqcn_min_rate = 1;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* ---- the simulator and the controller: one rate increase ---- */

/* The parameters both take: T and K 55 us, B 1 MB, F 5, R_AI 1 Gb/s,
 * R_HAI 10 Gb/s (of 100 Gb/s: back to line rate in tens of steps), the
 * floor 100 Mb/s, g 1/256. */
#define T_RATE (55 * ARB_PS_PER_US)
#define K_ALPHA (55 * ARB_PS_PER_US)
#define BYTES 1000000u
#define F 5u
#define RAI 1000000000u
#define RHAI 10000000000u
#define MIN_RATE 100000000u
#define G (1.0 / 256)

static arb_sim *dcqcn_sim(const arb_topo *t)
{
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = simkit_dmodk;
    cfg.dcqcn = 1;
    cfg.dcqcn_g = G;
    cfg.dcqcn_alpha_timer = K_ALPHA;
    cfg.dcqcn_rate_timer = T_RATE;
    cfg.dcqcn_byte_counter = BYTES;
    cfg.dcqcn_f = F;
    cfg.dcqcn_rai = RAI;
    cfg.dcqcn_rhai = RHAI;
    cfg.dcqcn_min_rate = MIN_RATE;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    return s;
}

/* The controller at the same line rate; every CE sample cuts (the
 * simulator's notification point gates its CNPs, the test sends each). */
static arb_cc *dcqcn_cc(uint64_t line)
{
    arb_cc_config c;
    arb_cc_config_default(&c);
    c.line_rate = line;
    c.dcqcn.cnp_interval = 1;
    c.dcqcn.g = G;
    c.dcqcn.alpha_init = 1;
    c.dcqcn.alpha_timer = K_ALPHA;
    c.dcqcn.rate_timer = T_RATE;
    c.dcqcn.byte_counter = BYTES;
    c.dcqcn.f = F;
    c.dcqcn.rai = RAI;
    c.dcqcn.rhai = RHAI;
    c.dcqcn.min_rate = MIN_RATE;
    arb_cc *cc = NULL;
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_DCQCN, &c), 0);
    return cc;
}

static double cc_rate(const arb_cc *cc)
{
    arb_cc_stats st;
    arb_cc_get_stats(cc, &st);
    return st.rate;
}

TEST(same_rates_as_the_controller)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim *s = dcqcn_sim(t);
    struct conn c;
    memset(&c, 0, sizeof c);
    c.src = 0;
    dcqcn_init(s, &c);
    arb_cc *cc = dcqcn_cc((uint64_t)c.cc.line);
    CHECK(cc_rate(cc) == c.cc.r.rc);
    arb_rng r;
    arb_rng_seed(&r, 7);
    arb_time now = 0;
    uint32_t cuts = 0, sends = 0, changes = 0, recovered = 0;
    for (uint32_t i = 0; i < 4000; i++) {
        /* mostly sends, a cut now and then, and quiet stretches in which
         * only the timers raise the rate (up to 20 T: back to line rate) */
        uint64_t what = arb_rng_below(&r, 100);
        now += 1 +
               (what < 97 ? arb_rng_below(&r, 20 * ARB_PS_PER_US) : arb_rng_below(&r, 20 * T_RATE));
        double before = c.cc.r.rc;
        s->now = now;
        dcqcn_catch_up(s, &c);
        if (what < 3) {
            dcqcn_on_cnp(s, &c);
            arb_cc_on_sample(cc, 10 * ARB_PS_PER_US, 1, now);
            cuts++;
        } else {
            uint32_t bytes = 1000 + (uint32_t)arb_rng_below(&r, 400000);
            dcqcn_on_sent(s, &c, bytes);
            arb_cc_on_send(cc, bytes, now);
            sends++;
        }
        if (cc_rate(cc) != c.cc.r.rc) {
            TESTKIT_REPORT("event %u at %llu ps: controller %.17g, simulator %.17g", i,
                           (unsigned long long)now, cc_rate(cc), c.cc.r.rc);
            break;
        }
        changes += c.cc.r.rc != before;
        recovered += c.cc.r.rc == c.cc.line && before < c.cc.line;
    }
    /* the sequence went through every rule */
    CHECK(cuts > 50);
    CHECK(sends > 1000);
    CHECK(changes > 500);
    CHECK(recovered > 20);
    arb_cc_stats st;
    arb_cc_get_stats(cc, &st);
    CHECK(st.expiries > 100);
    CHECK_EQ_U(c.cc.cuts, cuts);
    arb_cc_free(cc);
    arb_sim_free(s);
    arb_topo_free(t);
}

int main(void)
{
    RUN(incast_dcqcn_bounds_queue_and_shares);
    RUN(incast_dcqcn_symmetric_is_fair);
    RUN(no_congestion_keeps_line_rate_timing);
    RUN(cnp_spacing);
    RUN(pacing_exact_after_cut);
    RUN(recovers_line_rate_after_congestion);
    RUN(deterministic);
    RUN(bad_config);
    RUN(same_rates_as_the_controller);
    return testkit_done();
}
