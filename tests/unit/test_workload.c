/* Workloads: ring AllReduce against hand formulas, QP disciplines, patterns,
 * incast, and the CSV and htsim trace parsers with bad lines. */
#include "arbor/route.h"
#include "arbor/sim.h"
#include "arbor/topo.h"
#include "arbor/workload.h"
#include "testkit.h"

#include <stdlib.h>
#include <string.h>

static uint32_t route_fn(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                         const arb_sim_pkt_info *f, arb_time now)
{
    (void)sim;
    (void)now;
    arb_route_key k = {f->src, f->dst, f->sport, f->dport, f->qp, f->proto};
    return arb_route_next(ctx, node, &k, in_port);
}

/* A fabric, a router and a simulator driven by workload w. */
struct rig {
    arb_topo *t;
    arb_route *r;
    arb_sim *s;
};

static int rig_no_sent; /* 1: the simulator without on_flow_sent */
static int rig_hpn;     /* 1: HPN's disjoint source ports before the start */
static uint32_t rig_disjoint;
static arb_sim_tap_fn rig_tap;
static void *rig_tap_ctx;

static int rig_new(struct rig *g, const char *topo, arb_workload *w, uint32_t ack_every)
{
    memset(g, 0, sizeof *g);
    char err[256];
    if (arb_topo_new(&g->t, topo, NULL, err, sizeof err) < 0) return -1;
    if (arb_route_new(&g->r, g->t, "ecmp", NULL, err, sizeof err) < 0) return -1;
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = route_fn;
    cfg.route_ctx = g->r;
    cfg.on_flow_done = arb_workload_on_flow_done;
    cfg.done_ctx = w;
    if (!rig_no_sent) {
        cfg.on_flow_sent = arb_workload_on_flow_sent;
        cfg.sent_ctx = w;
    }
    cfg.ack_every = ack_every;
    cfg.tap = rig_tap;
    cfg.tap_ctx = rig_tap_ctx;
    if (arb_sim_new(&g->s, g->t, &cfg) < 0) return -1;
    if (rig_hpn && arb_workload_route_sports(w, g->r, &rig_disjoint) < 0) return -1;
    if (arb_workload_start(w, g->s) < 0) return -1;
    return arb_sim_run(g->s, ARB_TIME_NEVER - 1);
}

static void rig_free(struct rig *g)
{
    arb_sim_free(g->s);
    arb_route_free(g->r);
    arb_topo_free(g->t);
}

static arb_time rig_start_delay; /* the workloads' start_delay (allreduce) */

static arb_workload *allreduce(uint32_t ranks, uint64_t bytes, uint64_t chunk, uint32_t qps,
                               arb_qp_mode mode, uint32_t n_hosts)
{
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    wc.start_delay = rig_start_delay;
    wc.qps = qps;
    wc.qp_mode = mode;
    arb_allreduce_config ar = {NULL, ranks, bytes, chunk, 0};
    arb_workload *w = NULL;
    char err[256];
    if (arb_workload_new_allreduce(&w, &ar, n_hosts, &wc, err, sizeof err) < 0) {
        printf("  allreduce: %s\n", err);
        return NULL;
    }
    return w;
}

/* On an idle star, with one ack per message: step 0 takes (n+1) packet
 * times + 2 link delays (store and forward at the switch); every later
 * step starts one ack time later (the receiver's NIC sends the ack of the
 * message it just completed before the next message), or, with a
 * start_delay D longer than the ack, D later: each later flow starts D
 * after the step before it ended (the deferred start is an event of its
 * own). */
TEST(allreduce_star_formula)
{
    const uint32_t N = 4, n = 10;
    const uint64_t S = (uint64_t)N * n * 4096;
    arb_time tc = arb_time_tx(86, ARB_TOPO_DEFAULT_RATE);
    arb_time step =
        (n + 1) * arb_time_tx(4096 + 82, ARB_TOPO_DEFAULT_RATE) + 2 * ARB_TOPO_DEFAULT_DELAY;
    for (arb_time D = 0; D <= 3 * ARB_PS_PER_US; D += 3 * ARB_PS_PER_US) {
        rig_start_delay = D;
        arb_workload *w = allreduce(N, S, 0, 1, ARB_QP_SPLIT, N);
        rig_start_delay = 0;
        REQUIRE(w != NULL);
        struct rig g;
        REQUIRE_EQ_I(rig_new(&g, "star:4", w, 1000000), 0);
        arb_workload_result r;
        arb_workload_get_result(w, &r);
        CHECK(r.done);
        CHECK_EQ_U(r.steps, 2 * (N - 1));
        CHECK_EQ_U(r.messages, 2 * (N - 1));
        CHECK_EQ_U(r.flows_done, N * 2 * (N - 1));
        arb_time gap = D > tc ? D : tc;
        arb_time want = step + (2 * (N - 1) - 1) * (gap + step);
        CHECK_EQ_U(r.cct, want);
        for (uint32_t i = N; D && i < arb_sim_n_flows(g.s); i++) { /* flows after step 0 */
            arb_sim_flow_result fr;
            arb_sim_flow(g.s, i, &fr);
            arb_time k = (fr.start - D) / (D + step); /* its step, less one */
            CHECK_EQ_U(fr.start, step + D + k * (D + step));
        }
        for (uint32_t k = 0; k < N; k++) {
            uint64_t sent, got;
            arb_time done;
            CHECK_EQ_I(arb_workload_rank(w, k, NULL, &done, &sent, &got), 0);
            CHECK_EQ_U(sent, 2 * (N - 1) * S / N);
            CHECK_EQ_U(got, 2 * (N - 1));
            CHECK(done <= want);
        }
        double secs = (double)want / 1e12;
        CHECK(r.algbw_gbps > S * 8 / secs / 1e9 * 0.999999 &&
              r.algbw_gbps < S * 8 / secs / 1e9 * 1.000001);
        CHECK(r.busbw_gbps > r.algbw_gbps * 1.5 * 0.999999 &&
              r.busbw_gbps < r.algbw_gbps * 1.5 * 1.000001);
        arb_sim_stats st;
        arb_sim_get_stats(g.s, &st);
        CHECK_EQ_U(st.payload_delivered, 2 * (N - 1) * S);
        CHECK_EQ_U(st.drops, 0);
        rig_free(&g);
        arb_workload_free(w);
    }
}

/* An uneven buffer: chunk sizes differ by one byte; every byte still arrives. */
TEST(allreduce_uneven_chunks)
{
    const uint32_t N = 5;
    const uint64_t S = 100003;
    arb_workload *w = allreduce(N, S, 0, 1, ARB_QP_SPLIT, 8);
    REQUIRE(w != NULL);
    struct rig g;
    REQUIRE_EQ_I(rig_new(&g, "star:8", w, 1), 0);
    arb_workload_result r;
    arb_workload_get_result(w, &r);
    CHECK(r.done);
    CHECK_EQ_U(r.bytes_planned, 2 * (N - 1) * S);
    arb_sim_stats st;
    arb_sim_get_stats(g.s, &st);
    CHECK_EQ_U(st.payload_delivered, 2 * (N - 1) * S);
    uint64_t total = 0;
    for (uint32_t k = 0; k < N; k++) {
        uint64_t sent;
        arb_workload_rank(w, k, NULL, NULL, &sent, NULL);
        total += sent;
    }
    CHECK_EQ_U(total, 2 * (N - 1) * S);
    rig_free(&g);
    arb_workload_free(w);
}

/* split: every message on every QP (half each); rr: whole messages
 * alternate. Both deliver the same bytes; each flow's size shows which. */
TEST(allreduce_qp_disciplines)
{
    const uint32_t N = 4;
    const uint64_t S = 4 * 8192;
    for (int mode = 0; mode <= 1; mode++) {
        arb_workload *w = allreduce(N, S, 0, 2, (arb_qp_mode)mode, N);
        REQUIRE(w != NULL);
        struct rig g;
        REQUIRE_EQ_I(rig_new(&g, "star:4", w, 1), 0);
        arb_workload_result r;
        arb_workload_get_result(w, &r);
        CHECK(r.done);
        uint32_t nf = arb_sim_n_flows(g.s);
        CHECK_EQ_U(nf, mode == ARB_QP_SPLIT ? N * 6 * 2 : N * 6);
        CHECK_EQ_U(r.flows_planned, nf);
        for (uint32_t i = 0; i < nf; i++) {
            arb_sim_flow_result fr;
            arb_sim_flow(g.s, i, &fr);
            CHECK_EQ_U(fr.bytes, mode == ARB_QP_SPLIT ? 4096 : 8192);
            CHECK(fr.finish != ARB_TIME_NEVER);
            CHECK_EQ_U(fr.dst, (fr.src + 1) % N);
        }
        arb_sim_stats st;
        arb_sim_get_stats(g.s, &st);
        CHECK_EQ_U(st.payload_delivered, 6 * S);
        rig_free(&g);
        arb_workload_free(w);
    }
}

/* Pipelining by chunk: four slices per chunk, four times the messages. A
 * QP's next message enters as soon as the previous one has sent its last
 * packet (on_flow_sent), so the slices of a star keep every NIC busy and
 * the collective takes about 97 packet times + 2 delays against six
 * store-and-forward steps of 17 packet times + 2 delays unpipelined. */
TEST(allreduce_pipelined)
{
    const uint32_t N = 4;
    const uint64_t S = 4 * 65536;
    arb_time cct[2];
    for (int k = 0; k < 2; k++) {
        arb_workload *w = allreduce(N, S, k ? 16384 : 0, 1, ARB_QP_SPLIT, N);
        REQUIRE(w != NULL);
        struct rig g;
        REQUIRE_EQ_I(rig_new(&g, "star:4", w, 1), 0);
        arb_workload_result r;
        arb_workload_get_result(w, &r);
        CHECK(r.done);
        CHECK_EQ_U(r.slices, k ? 4 : 1);
        CHECK_EQ_U(r.messages, 6 * r.slices);
        CHECK_EQ_U(arb_sim_n_flows(g.s), N * r.messages);
        cct[k] = r.cct;
        rig_free(&g);
        arb_workload_free(w);
    }
    CHECK(cct[0] > 0 && cct[1] > 0);
    /* Pipelined, every NIC is the bottleneck: 24 slices of 4 packets back
     * to back, then the last packet's store and forward; the NIC's acks of
     * what it receives (one per packet) go ahead of data in between. */
    arb_time tf = arb_time_tx(4096 + 82, ARB_TOPO_DEFAULT_RATE);
    arb_time tc = arb_time_tx(86, ARB_TOPO_DEFAULT_RATE);
    arb_time d = ARB_TOPO_DEFAULT_DELAY;
    arb_time lo = 97 * tf + 2 * d;
    CHECK(cct[1] >= lo && cct[1] <= lo + 96 * tc);
    /* Unpipelined: six steps of a 16-packet message through the switch. */
    CHECK(cct[0] >= 6 * (17 * tf + 2 * d));
    CHECK(cct[1] < cct[0] * 4 / 5);
}

static void note_time(void *ctx, arb_sim *s, uint32_t flow, arb_time now)
{
    (void)s;
    ((arb_time *)ctx)[flow] = now;
}

/* The simulator's "all data sent": when the last packet starts on the
 * NIC (after n-1 serialisations and one ack), once, before the flow is
 * delivered. */
TEST(sim_flow_sent_notification)
{
    arb_topo *t;
    arb_route *r;
    arb_sim *s;
    char err[256];
    REQUIRE_EQ_I(arb_topo_new(&t, "star:2", NULL, err, sizeof err), 0);
    REQUIRE_EQ_I(arb_route_new(&r, t, "ecmp", NULL, err, sizeof err), 0);
    arb_time sent[2] = {ARB_TIME_NEVER, ARB_TIME_NEVER};
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = route_fn;
    cfg.route_ctx = r;
    cfg.on_flow_sent = note_time;
    cfg.sent_ctx = sent;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 10 * 4096, 0, 5000, 7, NULL), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, 100, 0, 5001, 8, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER - 1), 0);
    /* h0's NIC also sends the ack of h1's one-packet flow, ahead of data */
    CHECK_EQ_U(sent[0], 9 * arb_time_tx(4096 + 82, ARB_TOPO_DEFAULT_RATE) +
                            arb_time_tx(86, ARB_TOPO_DEFAULT_RATE));
    CHECK_EQ_U(sent[1], 0);
    arb_sim_flow_result fr;
    CHECK_EQ_I(arb_sim_flow(s, 0, &fr), 0);
    CHECK(fr.finish > sent[0]);
    arb_sim_free(s);
    arb_route_free(r);
    arb_topo_free(t);
}

/* Without the simulator's sent notifications a QP waits for delivery: the
 * same collective completes, later. */
TEST(allreduce_without_sent_callback)
{
    const uint64_t S = 4 * 65536;
    arb_time cct[2];
    for (int k = 0; k < 2; k++) {
        arb_workload *w = allreduce(4, S, 16384, 1, ARB_QP_SPLIT, 4);
        REQUIRE(w != NULL);
        rig_no_sent = k;
        struct rig g;
        REQUIRE_EQ_I(rig_new(&g, "star:4", w, 1), 0);
        rig_no_sent = 0;
        arb_workload_result r;
        arb_workload_get_result(w, &r);
        CHECK(r.done);
        cct[k] = r.cct;
        arb_sim_stats st;
        arb_sim_get_stats(g.s, &st);
        CHECK_EQ_U(st.payload_delivered, 6 * S);
        rig_free(&g);
        arb_workload_free(w);
    }
    CHECK(cct[0] < cct[1]);
}

/* Connections per leaf uplink: distinct (source host, source port) pairs
 * whose data leaves a leaf on each up port. */
struct uplinks {
    const arb_topo *t;
    uint32_t seen[64][128]; /* per port: src << 16 | sport */
    unsigned n[64];
};

static void uplink_tap(void *ctx, const arb_sim *s, uint32_t port, const arb_sim_pkt_info *f,
                       arb_time now)
{
    (void)s, (void)now;
    struct uplinks *u = ctx;
    const arb_port *p = arb_topo_port(u->t, port);
    if (f->kind != ARB_SIM_DATA || p->role != ARB_LINK_UP || p->tier != 1 || port >= 64) return;
    uint32_t key = f->src << 16 | f->sport;
    for (unsigned i = 0; i < u->n[port]; i++)
        if (u->seen[port][i] == key) return;
    if (u->n[port] < 128) u->seen[port][u->n[port]++] = key;
}

/* HPN's host side on leafspine:2,8,8 (8 spines), a ring whose every edge
 * crosses between the leaves, 8 connections per pair, messages pipelined
 * in slices: with the ports arb_route_disjoint_sports finds, a pair's 8
 * connections take the 8 uplinks, so every uplink carries exactly 8
 * connections; with drawn ports ECMP piles some onto one uplink, and the
 * collective is slower. */
TEST(allreduce_hpn_disjoint_ports)
{
    uint32_t hosts[16];
    for (uint32_t i = 0; i < 8; i++) {
        hosts[2 * i] = i;
        hosts[2 * i + 1] = 8 + i;
    }
    arb_time cct[2];
    unsigned most[2];
    for (int k = 0; k < 2; k++) {
        arb_workload_config wc;
        arb_workload_config_default(&wc);
        wc.qps = 8;
        wc.qp_mode = ARB_QP_HPN;
        arb_allreduce_config ar = {hosts, 16, 16 * 8 * 65536, 65536, 0};
        arb_workload *w = NULL;
        char err[256];
        REQUIRE_EQ_I(arb_workload_new_allreduce(&w, &ar, 16, &wc, err, sizeof err), 0);
        static struct uplinks u;
        memset(&u, 0, sizeof u);
        arb_topo *ut = NULL;
        REQUIRE_EQ_I(arb_topo_new(&ut, "leafspine:2,8,8", NULL, err, sizeof err), 0);
        u.t = ut;
        rig_hpn = k;
        rig_disjoint = 0;
        rig_tap = uplink_tap;
        rig_tap_ctx = &u;
        struct rig g;
        REQUIRE_EQ_I(rig_new(&g, "leafspine:2,8,8", w, 1), 0);
        rig_hpn = 0;
        rig_tap = NULL;
        rig_tap_ctx = NULL;
        arb_workload_result r;
        arb_workload_get_result(w, &r);
        CHECK(r.done);
        CHECK_EQ_U(r.slices, 8);
        if (k) CHECK_EQ_U(rig_disjoint, 16);
        cct[k] = r.cct;
        most[k] = 0;
        unsigned total = 0;
        for (unsigned p = 0; p < 64; p++) {
            if (u.n[p] > most[k]) most[k] = u.n[p];
            total += u.n[p];
        }
        CHECK_EQ_U(total, 16 * 8);
        arb_sim_stats st;
        arb_sim_get_stats(g.s, &st);
        CHECK_EQ_U(st.payload_delivered, 30ull * 16 * 8 * 65536);
        rig_free(&g);
        arb_topo_free(ut);
        arb_workload_free(w);
    }
    CHECK_EQ_U(most[1], 8);
    CHECK(most[0] > 8);
    CHECK(cct[1] < cct[0]);
    printf("  hpn, 16 ranks x 8 connections: most connections on one uplink %u drawn, %u "
           "disjoint; CCT %.2f us drawn, %.2f us disjoint\n",
           most[0], most[1], (double)cct[0] / 1e6, (double)cct[1] / 1e6);
}

/* Distinct source ports and QP numbers of the data a tap sees. */
struct ids {
    uint32_t sports[64], qps[64];
    unsigned n_sports, n_qps;
};

static void add_id(uint32_t *v, unsigned *n, uint32_t x)
{
    for (unsigned i = 0; i < *n; i++)
        if (v[i] == x) return;
    if (*n < 64) v[(*n)++] = x;
}

static void ids_tap(void *ctx, const arb_sim *s, uint32_t port, const arb_sim_pkt_info *f,
                    arb_time now)
{
    (void)s, (void)port, (void)now;
    struct ids *d = ctx;
    if (f->kind != ARB_SIM_DATA || f->src != 0) return;
    add_id(d->sports, &d->n_sports, f->sport);
    add_id(d->qps, &d->n_qps, f->qp);
}

/* shared_sport: the QPs of a connection keep one source port and differ
 * in the QP number only (a flow list and a ring AllReduce); without it,
 * every QP has its own port. hpn refuses it. */
TEST(shared_sport)
{
    for (int shared = 0; shared < 2; shared++) {
        for (int ring = 0; ring < 2; ring++) {
            arb_workload_config wc;
            arb_workload_config_default(&wc);
            wc.qps = 4;
            wc.shared_sport = shared;
            arb_workload *w = NULL;
            char err[256];
            if (ring) {
                arb_allreduce_config ar = {NULL, 4, 4 * 4 * 65536, 0, 0};
                REQUIRE_EQ_I(arb_workload_new_allreduce(&w, &ar, 4, &wc, err, sizeof err), 0);
            } else {
                arb_wl_flow f = {0, 1, 4 * 65536, 0, 0, 0};
                REQUIRE_EQ_I(arb_workload_new_flows(&w, &f, 1, 4, &wc, err, sizeof err), 0);
            }
            struct ids d;
            memset(&d, 0, sizeof d);
            rig_tap = ids_tap;
            rig_tap_ctx = &d;
            struct rig g;
            REQUIRE_EQ_I(rig_new(&g, "star:4", w, 1), 0);
            rig_tap = NULL;
            rig_tap_ctx = NULL;
            arb_workload_result r;
            arb_workload_get_result(w, &r);
            CHECK(r.done);
            CHECK_EQ_U(d.n_qps, 4);
            CHECK_EQ_U(d.n_sports, shared ? 1 : 4);
            rig_free(&g);
            arb_workload_free(w);
        }
    }
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    wc.qp_mode = ARB_QP_HPN;
    wc.shared_sport = 1;
    arb_allreduce_config ar = {NULL, 4, 65536, 0, 0};
    arb_workload *w;
    char err[256];
    CHECK_EQ_I(arb_workload_new_allreduce(&w, &ar, 4, &wc, err, sizeof err), ARB_EINVAL);
    CHECK(strncmp(err, "qp_mode:", 8) == 0);
}

TEST(allreduce_bad_config)
{
    char err[256];
    arb_workload *w;
    arb_allreduce_config ar = {NULL, 1, 1000, 0, 0};
    CHECK_EQ_I(arb_workload_new_allreduce(&w, &ar, 8, NULL, err, sizeof err), ARB_EINVAL);
    CHECK(w == NULL);
    ar.ranks = 4;
    ar.bytes = 3;
    CHECK_EQ_I(arb_workload_new_allreduce(&w, &ar, 8, NULL, err, sizeof err), ARB_EINVAL);
    CHECK(strncmp(err, "size:", 5) == 0);
    uint32_t hosts[3] = {1, 2, 1};
    ar.hosts = hosts;
    ar.ranks = 3;
    ar.bytes = 3000;
    CHECK_EQ_I(arb_workload_new_allreduce(&w, &ar, 8, NULL, err, sizeof err), ARB_EINVAL);
    CHECK(strstr(err, "host 1") != NULL);
    hosts[2] = 9;
    CHECK_EQ_I(arb_workload_new_allreduce(&w, &ar, 8, NULL, err, sizeof err), ARB_EINVAL);
}

/* rr and hpn spread a connection's messages over its QPs: only the ring
 * AllReduce has several to spread. Every other kind refuses them, naming
 * the mode and split, instead of running as split. */
TEST(qp_mode_split_only)
{
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    wc.qps = 2;
    arb_workload *w = NULL;
    char err[256];
    arb_wl_flow f = {0, 1, 4096, 0, 0, 0};
    arb_hcoll_config hc = {ARB_COLL_ALLREDUCE, ARB_HC_AUTO, NULL, 4, 4096, 0, 0, 0};
    for (int m = ARB_QP_RR; m <= ARB_QP_HPN; m++) {
        wc.qp_mode = (arb_qp_mode)m;
        int rc[5] = {
            arb_workload_new_pattern(&w, "shift:all", 4, 4096, 0, &wc, err, sizeof err),
            arb_workload_new_incast(&w, 4, 0, 2, 4096, 0, &wc, err, sizeof err),
            arb_workload_new_flows(&w, &f, 1, 4, &wc, err, sizeof err),
            arb_workload_parse(&w, ARB_WL_TRACE, "src,dst,bytes,start_us\n0,1,4096,0\n", "t.csv", 4,
                               &wc, err, sizeof err),
            arb_workload_new_hcoll(&w, &hc, 4, &wc, err, sizeof err),
        };
        for (int i = 0; i < 5; i++)
            CHECK_EQ_I(rc[i], ARB_EINVAL);
        CHECK(w == NULL);
        CHECK(strncmp(err, "qp_mode: ", 9) == 0);
        CHECK(strstr(err, arb_qp_mode_name(m)) != NULL);
        CHECK(strstr(err, "(split)") != NULL);
    }
    wc.qp_mode = ARB_QP_HPN;
    CHECK_EQ_I(arb_workload_new_pattern(&w, "perm:1", 4, 4096, 0, &wc, err, sizeof err),
               ARB_EINVAL);
    CHECK_STR(err, "qp_mode: hpn: only ring_allreduce takes rr or hpn; patterns (pattern, perm, "
                   "shift, all2all) split every message over the QPs (split)");
    wc.qp_mode = ARB_QP_SPLIT;
    REQUIRE_EQ_I(arb_workload_new_pattern(&w, "shift:all", 4, 4096, 0, &wc, err, sizeof err), 0);
    arb_workload_free(w);
}

/* shift:all on star:4: three phases, each starting when the last ended. */
TEST(pattern_phases)
{
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    wc.qps = 2;
    arb_workload *w;
    char err[256];
    REQUIRE_EQ_I(arb_workload_new_pattern(&w, "shift:all", 4, 10001, 0, &wc, err, sizeof err), 0);
    struct rig g;
    REQUIRE_EQ_I(rig_new(&g, "star:4", w, 1), 0);
    arb_workload_result r;
    arb_workload_get_result(w, &r);
    CHECK(r.done);
    CHECK_EQ_U(r.phases, 3);
    CHECK_EQ_U(arb_sim_n_flows(g.s), 3 * 4 * 2);
    arb_time phase_end = 0;
    for (uint32_t p = 0; p < 3; p++) {
        arb_time end = 0;
        uint64_t bytes = 0;
        for (uint32_t i = p * 8; i < p * 8 + 8; i++) {
            arb_sim_flow_result fr;
            arb_sim_flow(g.s, i, &fr);
            CHECK(fr.start >= phase_end);
            CHECK_EQ_U(fr.dst, (fr.src + p + 1) % 4);
            if (fr.finish > end) end = fr.finish;
            bytes += fr.bytes;
        }
        CHECK_EQ_U(bytes, 4 * 10001);
        phase_end = end;
    }
    CHECK_EQ_U(r.finish, phase_end);
    rig_free(&g);
    arb_workload_free(w);
    CHECK_EQ_I(arb_workload_new_pattern(&w, "shift:9", 4, 100, 0, NULL, err, sizeof err),
               ARB_EPARSE);
}

/* start_delay and a pattern: its next phase starts D after the last flow
 * of the one before (allreduce_star_formula checks the ring's). */
TEST(pattern_start_delay)
{
    const arb_time D = 3 * ARB_PS_PER_US;
    arb_workload *w;
    struct rig g;
    arb_workload_result r;
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    wc.start_delay = D;
    char err[256];
    REQUIRE_EQ_I(arb_workload_new_pattern(&w, "shift:all", 4, 10001, 0, &wc, err, sizeof err), 0);
    REQUIRE_EQ_I(rig_new(&g, "star:4", w, 1), 0);
    arb_workload_get_result(w, &r);
    CHECK(r.done);
    CHECK_EQ_U(arb_sim_n_flows(g.s), 3 * 4);
    arb_time phase_end = 0;
    for (uint32_t p = 0; p < 3; p++) {
        arb_time end = 0;
        for (uint32_t i = p * 4; i < p * 4 + 4; i++) {
            arb_sim_flow_result fr;
            arb_sim_flow(g.s, i, &fr);
            CHECK_EQ_U(fr.start, p ? phase_end + D : 0);
            if (fr.finish > end) end = fr.finish;
        }
        phase_end = end;
    }
    CHECK_EQ_U(r.finish, phase_end);
    rig_free(&g);
    arb_workload_free(w);
}

TEST(incast)
{
    arb_workload *w;
    char err[256];
    REQUIRE_EQ_I(arb_workload_new_incast(&w, 8, 2, 5, 50000, 0, NULL, err, sizeof err), 0);
    struct rig g;
    REQUIRE_EQ_I(rig_new(&g, "star:8", w, 1), 0);
    CHECK_EQ_U(arb_sim_n_flows(g.s), 5);
    for (uint32_t i = 0; i < 5; i++) {
        arb_sim_flow_result fr;
        arb_sim_flow(g.s, i, &fr);
        CHECK_EQ_U(fr.dst, 2);
        CHECK_EQ_U(fr.src, 3 + i);
    }
    arb_workload_result r;
    arb_workload_get_result(w, &r);
    CHECK(r.done);
    /* five senders share one link: at least five times one flow's time */
    CHECK(r.finish >= 5 * arb_time_tx(50000, ARB_TOPO_DEFAULT_RATE));
    rig_free(&g);
    arb_workload_free(w);
    CHECK_EQ_I(arb_workload_new_incast(&w, 8, 8, 5, 1, 0, NULL, err, sizeof err), ARB_EINVAL);
    CHECK_EQ_I(arb_workload_new_incast(&w, 8, 0, 8, 1, 0, NULL, err, sizeof err), ARB_EINVAL);
}

TEST(trace_csv)
{
    const char *good = "# a comment\n"
                       "src,dst,bytes,start_us,sport\n"
                       "0,1,5000,0,\n"
                       "\n"
                       "2, 3, 7000, 1.5, 50000\n";
    arb_workload *w;
    char err[256];
    REQUIRE_EQ_I(arb_workload_parse(&w, ARB_WL_TRACE, good, "t.csv", 4, NULL, err, sizeof err), 0);
    struct rig g;
    REQUIRE_EQ_I(rig_new(&g, "star:4", w, 1), 0);
    arb_sim_flow_result fr;
    arb_sim_flow(g.s, 1, &fr);
    CHECK_EQ_U(fr.start, 1500000);
    CHECK_EQ_U(fr.bytes, 7000);
    arb_workload_result r;
    arb_workload_get_result(w, &r);
    CHECK(r.done);
    rig_free(&g);
    arb_workload_free(w);

    /* a QP column: the flows keep the given QP numbers (empty: drawn) */
    const char *qps = "src,dst,bytes,start_us,sport,qp\n0,1,5000,0,50000,7\n0,1,5000,0,50000,\n";
    REQUIRE_EQ_I(arb_workload_parse(&w, ARB_WL_TRACE, qps, "t.csv", 4, NULL, err, sizeof err), 0);
    REQUIRE_EQ_I(rig_new(&g, "star:4", w, 1), 0);
    arb_workload_get_result(w, &r);
    CHECK(r.done);
    rig_free(&g);
    arb_workload_free(w);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"src,dst,bytes\n0,1,5\n", "t.csv:1: header:"},
        {"src,dst,bytes,start_us\n0,1,5,0\n0,1,5\n", "t.csv:3: line: 3 fields"},
        {"src,dst,bytes,start_us\n0,x,5,0\n", "t.csv:2: dst: not a host index 'x'"},
        {"src,dst,bytes,start_us\n0,4,5,0\n", "t.csv:2: dst: host not below"},
        {"src,dst,bytes,start_us\n\n1,1,5,0\n", "t.csv:3: dst: same host"},
        {"src,dst,bytes,start_us\n0,1,0,0\n", "t.csv:2: bytes:"},
        {"src,dst,bytes,start_us\n0,1,5,1.2345678\n", "t.csv:2: start_us:"},
        {"src,dst,bytes,start_us,sport\n0,1,5,0,70000\n", "t.csv:2: sport:"},
        {"src,dst,bytes,start_us,sport,qp\n0,1,5,0,7,0\n", "t.csv:2: qp:"},
        {"src,dst,bytes,start_us,sport,qp\n0,1,5,0,7,16777216\n", "t.csv:2: qp:"},
        {"src,dst,bytes,start_us,sport,qp\n0,1,5,0,7\n", "t.csv:2: line: 5 fields"},
        {"", "t.csv: header: the file is empty"},
        {"src,dst,bytes,start_us\n0,1,18446744073709551615,0\n1,0,1,0\n",
         "t.csv:3: bytes: the flows' bytes add up past 2^64"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int rc =
            arb_workload_parse(&w, ARB_WL_TRACE, bad[i].text, "t.csv", 4, NULL, err, sizeof err);
        CHECK_EQ_I(rc, ARB_EPARSE);
        CHECK(w == NULL);
        if (strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
            TESTKIT_REPORT("case %zu: got '%s', want '%s...'", i, err, bad[i].want);
    }
}

TEST(trace_htsim)
{
    const char *good = "Nodes 4\nConnections 2\n0->3 id 1 start 0 size 8000\n"
                       "2->1 id 2 start 2.5 size 4000\n";
    arb_workload *w;
    char err[256];
    REQUIRE_EQ_I(arb_workload_parse(&w, ARB_WL_HTSIM, good, "m.cm", 4, NULL, err, sizeof err), 0);
    struct rig g;
    REQUIRE_EQ_I(rig_new(&g, "star:4", w, 1), 0);
    arb_sim_flow_result fr;
    arb_sim_flow(g.s, 1, &fr);
    CHECK_EQ_U(fr.src, 2);
    CHECK_EQ_U(fr.dst, 1);
    CHECK_EQ_U(fr.start, 2500000);
    CHECK_EQ_U(fr.bytes, 4000);
    rig_free(&g);
    arb_workload_free(w);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"Connections 1\n0->1 id 1 start 0 size 5\n", "m.cm:1: Nodes:"},
        {"Nodes 8\nConnections 1\n0->1 id 1 start 0 size 5\n", "m.cm:1: Nodes: 8 nodes"},
        {"Nodes 4\nConnections 2\n0->1 id 1 start 0 size 5\n", "m.cm:3: Connections: says 2"},
        {"Nodes 4\nConnections 1\n0-1 id 1 start 0 size 5\n", "m.cm:3: SRC->DST:"},
        {"Nodes 4\nConnections 1\n0->9 id 1 start 0 size 5\n", "m.cm:3: DST: host not below"},
        {"Nodes 4\nConnections 1\n0->1 id 1 start x size 5\n", "m.cm:3: start:"},
        {"Nodes 4\nConnections 1\n0->1 id 1 start 0\n", "m.cm:3: size: missing"},
        {"Nodes 4\nConnections 1\n0->1 id 1 start 0 size 5 prio 2\n", "m.cm:3: line: unsupported"},
        {"Nodes 4\nConnections 2\n0->1 id 1 start 0 size 18446744073709551615\n"
         "1->0 id 2 start 0 size 1\n",
         "m.cm:4: size: the flows' bytes add up past 2^64"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int rc =
            arb_workload_parse(&w, ARB_WL_HTSIM, bad[i].text, "m.cm", 4, NULL, err, sizeof err);
        CHECK_EQ_I(rc, ARB_EPARSE);
        if (strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
            TESTKIT_REPORT("case %zu: got '%s', want '%s...'", i, err, bad[i].want);
    }
    CHECK_EQ_I(
        arb_workload_new_file(&w, ARB_WL_HTSIM, "/nonexistent/x.cm", 4, NULL, err, sizeof err),
        ARB_EIO);
    CHECK(strstr(err, "/nonexistent/x.cm") != NULL);
}

/* The speed benchmark's matrix, shipped in bench/data (scripts/gen_perm.py). */
TEST(htsim_benchmark_file)
{
    const char *path = "bench/data/perm1024.cm";
    arb_workload *w;
    char err[256];
    REQUIRE_EQ_I(arb_workload_new_file(&w, ARB_WL_HTSIM, path, 1024, NULL, err, sizeof err), 0);
    arb_workload_result r;
    arb_workload_get_result(w, &r);
    CHECK_EQ_U(r.flows_planned, 1024);
    CHECK_EQ_U(r.bytes_planned, 1024ull * 2000000);
    arb_workload_free(w);
    CHECK_EQ_I(arb_workload_new_file(&w, ARB_WL_HTSIM, path, 512, NULL, err, sizeof err),
               ARB_EPARSE);
}

TEST(names)
{
    CHECK_STR(arb_qp_mode_name(ARB_QP_RR), "rr");
    CHECK_EQ_I(arb_qp_mode_parse("split"), ARB_QP_SPLIT);
    CHECK_EQ_I(arb_qp_mode_parse("x"), ARB_ENOENT);
    CHECK_STR(arb_workload_kind_name(ARB_WL_ALLREDUCE), "ring_allreduce");
    CHECK(arb_workload_kind_name(99) == NULL);
}

int main(void)
{
    RUN(allreduce_star_formula);
    RUN(allreduce_uneven_chunks);
    RUN(allreduce_qp_disciplines);
    RUN(sim_flow_sent_notification);
    RUN(allreduce_pipelined);
    RUN(allreduce_without_sent_callback);
    RUN(allreduce_hpn_disjoint_ports);
    RUN(shared_sport);
    RUN(allreduce_bad_config);
    RUN(qp_mode_split_only);
    RUN(pattern_phases);
    RUN(pattern_start_delay);
    RUN(incast);
    RUN(trace_csv);
    RUN(trace_htsim);
    RUN(htsim_benchmark_file);
    RUN(names);
    return testkit_done();
}
