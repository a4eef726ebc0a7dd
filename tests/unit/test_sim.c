/* Unit tests: the simulator's packet pool, link timing,
 * queues, ECN, PFC and both transports, on small fabrics. */
#include "arbor/lb.h"
#include "arbor/sim.h"
#include "arbor/topo.h"
#include "sim/pool.h"
#include "simkit.h"
#include "testkit.h"

#include <stdlib.h>

/* D-mod-k on a PGFT, written here so the test does not lean on the
 * routing module: down toward the destination when it is below, else up
 * port floor(dst / W_l) mod (w_{l+1} p_{l+1}). */
static arb_sim *sim_on(const arb_topo *t, arb_sim_config *cfg)
{
    cfg->route = simkit_dmodk;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, cfg), 0);
    return s;
}

/* s partitioned into one part, every node in it (arb_sim_partition). */
static void one_part(arb_sim *s, const arb_topo *t)
{
    arb_sim_part_ops ops = {NULL, 0, 1, simkit_one_alltoall, simkit_one_reduce, simkit_one_reduce};
    uint32_t *np = calloc(arb_topo_n_nodes(t), sizeof *np);
    char err[128];
    REQUIRE(np != NULL);
    REQUIRE_EQ_I(arb_sim_partition(s, &ops, np, err, sizeof err), 0);
    free(np);
}

/* Every packet a host sent is delivered, dropped, unroutable or still alive. */
static void check_conservation(const arb_sim *s)
{
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.pkts_sent, st.pkts_delivered + st.drops + st.unroutable + st.in_flight);
}

TEST(pool_recycles)
{
    struct pool p;
    pool_init(&p);
    uint32_t a = pool_alloc(&p), b = pool_alloc(&p);
    CHECK(a != PKT_NONE && b != PKT_NONE && a != b);
    pool_get(&p, a)->psn = 7;
    pool_release(&p, a);
    uint32_t c = pool_alloc(&p);
    CHECK_EQ_U(pool_get(&p, c)->psn, 0); /* handed out zeroed */
    CHECK_EQ_U(p.live, 2);
    CHECK_EQ_U(p.peak, 2);
    uint32_t many[10000];
    for (int i = 0; i < 10000; i++)
        many[i] = pool_alloc(&p);
    for (int i = 0; i < 10000; i++)
        pool_release(&p, many[i]);
    CHECK_EQ_U(p.live, 2);
    pool_free_all(&p);
}

/* One packet across a star: NIC serialisation, wire, switch
 * serialisation, wire; to the picosecond. */
TEST(link_timing_one_packet)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    arb_sim *s = sim_on(t, &cfg);
    uint32_t id;
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 4096, 5 * ARB_PS_PER_US, 1000, 1, &id), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow_result r;
    CHECK_EQ_I(arb_sim_flow(s, id, &r), 0);
    /* 4096 + 82 = 4178 B at 100 Gb/s = 334.24 ns; twice, plus 2 x 1 us. */
    CHECK_EQ_U(r.finish - r.start, 2 * (334240 + 1000000));
    CHECK_EQ_U(r.start, 5 * ARB_PS_PER_US);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.packet_hops, 4); /* data two hops, ack two hops */
    CHECK_EQ_U(st.flows_done, 1);
    CHECK_EQ_U(st.in_flight, 0);
    check_conservation(s);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* A run's activity ends with the last ACK; the host timer armed with the
 * flow's timeout still fires (run to the end of time) but finds nothing to
 * do, so it is not what the run's length reports. */
TEST(stale_timer_is_not_activity)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    arb_sim *s = sim_on(t, &cfg);
    uint32_t id;
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 4096, 5 * ARB_PS_PER_US, 1000, 1, &id), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow_result r;
    CHECK_EQ_I(arb_sim_flow(s, id, &r), 0);
    /* the ACK: cfg.ctrl_bytes at 100 Gb/s (x 80 ps a byte) and 1 us, twice */
    arb_time ack = 2 * ((arb_time)cfg.ctrl_bytes * 80 + ARB_PS_PER_US);
    CHECK_EQ_U(arb_sim_last_activity(s), r.finish + ack);
    /* the timeout armed at the start fired, idle, cfg.rto later */
    CHECK(arb_sim_now(s) >= r.start + cfg.rto);
    CHECK(arb_sim_now(s) > arb_sim_last_activity(s));
    arb_sim_free(s);
    arb_topo_free(t);
}

/* A host timer superseded by one armed earlier is no activity either: the
 * first flow's timeout (armed at 0 for cfg.rto) is replaced when the second
 * flow's start (500 us) needs the timer sooner; when that start has run,
 * the timer is armed anew for the second flow's timeout. The first event
 * still fires at cfg.rto and does nothing: the last activity is the second
 * flow's ack, two ack hops after it finished. */
TEST(superseded_timer_is_not_activity)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    arb_sim *s = sim_on(t, &cfg);
    uint32_t a, b;
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 4096, 0, 1000, 1, &a), 0);
    CHECK_EQ_I(arb_sim_run(s, 100 * ARB_PS_PER_US), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 4096, 500 * ARB_PS_PER_US, 1000, 2, &b), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow_result r;
    CHECK_EQ_I(arb_sim_flow(s, b, &r), 0);
    arb_time ack = 2 * ((arb_time)cfg.ctrl_bytes * 80 + ARB_PS_PER_US);
    CHECK_EQ_U(arb_sim_last_activity(s), r.finish + ack);
    CHECK(arb_sim_now(s) >= r.start + cfg.rto); /* the second timeout, idle */
    arb_sim_free(s);
    arb_topo_free(t);
}

/* Three packets pipeline: the last leaves the NIC after 3 serialisations,
 * then one switch serialisation and two wires. A partial last packet. */
/* The simulator reads the links' rates and delays when it is made and when
 * told the fabric changed: host 0's link at 25 Gb/s and 3 us from then on. */
TEST(link_changes_take_effect_when_told)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    arb_sim *s = sim_on(t, &cfg);
    uint32_t nic = arb_topo_node(t, 0)->first_up;
    CHECK_EQ_I(arb_topo_set_link(t, nic, 25000000000u, 3 * ARB_PS_PER_US), 0);
    arb_sim_fabric_changed(s);
    uint32_t id;
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 4096, 0, 1000, 1, &id), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow_result r;
    CHECK_EQ_I(arb_sim_flow(s, id, &r), 0);
    /* 4178 B: 1336.96 ns at 25 Gb/s and 3 us, then 334.24 ns and 1 us */
    CHECK_EQ_U(r.finish, 1336960 + 3 * ARB_PS_PER_US + 334240 + ARB_PS_PER_US);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* Links of more than 65,536 different (rate, delay) pairs: the simulator
 * refuses the fabric (ARB_ERANGE), at creation or when told of a change. */
TEST(too_many_kinds_of_link)
{
    arb_topo *t = simkit_topo("pgft:3;32,32,32;1,32,32;1,1,1"); /* 98,304 links */
    uint32_t n = arb_topo_n_ports(t), kinds = 1;
    CHECK(n / 2 > 65536);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = simkit_dmodk;
    arb_sim *s = NULL;
    for (uint32_t p = 0; p < n && kinds < 65536; p++)
        if (arb_topo_port(t, p)->peer_port > p)
            CHECK_EQ_I(arb_topo_set_link(t, p, 100000000000u, ARB_PS_PER_US + kinds++), 0);
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0); /* 65,536 kinds: the most there may be */
    uint32_t last = 0;
    for (uint32_t p = 0; p < n; p++)
        if (arb_topo_port(t, p)->peer_port > p) last = p;
    CHECK(arb_topo_port(t, last)->delay == ARB_PS_PER_US); /* one left as it was */
    CHECK_EQ_I(arb_topo_set_link(t, last, 100000000000u, 2 * ARB_PS_PER_US), 0);
    arb_sim_fabric_changed(s);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), ARB_ERANGE);
    arb_sim_free(s);
    s = NULL;
    CHECK_EQ_I(arb_sim_new(&s, t, &cfg), ARB_ERANGE);
    CHECK(s == NULL);
    arb_topo_free(t);
}

TEST(link_timing_pipelined)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    arb_sim *s = sim_on(t, &cfg);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 2 * 4096 + 918, 0, 1000, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow_result r;
    arb_sim_flow(s, 0, &r);
    /* Full packets take T = 334240 ps; the last carries 918 + 82 = 1000 B =
     * 80000 ps. Full packet i reaches the switch at (i+1)T + 1 us and the
     * switch sends it back to back, finishing packet 1 at 3T + 1 us. The
     * last packet arrived before that (at 2T + 80000 + 1 us) and waits:
     * it leaves the switch at 3T + 80000 + 1 us and lands 1 us later. */
    CHECK_EQ_U(r.finish, 3 * 334240 + 80000 + 2 * ARB_PS_PER_US);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* A switch port without PFC schedules a packet when it queues it and counts
 * it as queued until its start: read between runs, the run's end counts
 * (the same three packets as link_timing_pipelined: the last waits at the
 * switch from 2T + 80000 + 1 us until 3T + 1 us). */
TEST(switch_queue_counts_until_the_start)
{
    const arb_time T = 334240, us = ARB_PS_PER_US;
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    arb_sim *s = sim_on(t, &cfg);
    uint32_t down = arb_topo_node(t, 2)->first_port + 1; /* the switch's port to host 1 */
    CHECK_EQ_U(arb_topo_port(t, down)->peer, 1);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 2 * 4096 + 918, 0, 1000, 1, NULL), 0);
    arb_sim_port_stats ps;
    CHECK_EQ_I(arb_sim_run(s, 2 * T + 80000 + us - 1), 0);
    CHECK_EQ_U(arb_sim_port_queue(s, down), 0); /* packet 1 has started, 2 not arrived */
    CHECK_EQ_I(arb_sim_run(s, 2 * T + 80000 + us), 0);
    CHECK_EQ_U(arb_sim_port_queue(s, down), 1000);
    arb_sim_port(s, down, &ps);
    CHECK_EQ_U(ps.tx_bytes, 2 * 4178);
    CHECK_EQ_U(ps.tx_pkts, 2);
    CHECK_EQ_I(arb_sim_run(s, 3 * T + us - 1), 0);
    CHECK_EQ_U(arb_sim_port_queue(s, down), 1000);
    CHECK_EQ_I(arb_sim_run(s, 3 * T + us), 0); /* it starts at the end of this run */
    CHECK_EQ_U(arb_sim_port_queue(s, down), 0);
    arb_sim_port(s, down, &ps);
    CHECK_EQ_U(ps.tx_bytes, 2 * 4178 + 1000);
    CHECK_EQ_U(ps.tx_pkts, 3);
    CHECK_EQ_U(ps.max_queue, 4178); /* every packet counts as it is queued, if only for no time */
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow_result r;
    arb_sim_flow(s, 0, &r);
    CHECK_EQ_U(r.finish, 3 * T + 80000 + 2 * us);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* star:9's hosts 1-8 each send 200,000 B to host 0 (flow h - 1 from host h). */
static arb_sim *incast_on(const arb_topo *t, arb_sim_config *cfg)
{
    arb_sim *s = sim_on(t, cfg);
    for (uint32_t h = 1; s && h < 9; h++)
        CHECK_EQ_I(arb_sim_add_flow(s, h, 0, 200000, 0, (uint16_t)(1000 + h), h, NULL), 0);
    return s;
}

/* Running in slices, with every port's queue and counters read between
 * them, gives the same run as one call: reading a queue counts it up to
 * the present, which must not move anything. Incast with drops, ECN marks
 * and random loss. */
TEST(slices_and_reads_change_nothing)
{
    arb_sim_stats st[2];
    arb_time fin[2][8];
    for (int sliced = 0; sliced < 2; sliced++) {
        arb_topo *t = simkit_topo("star:9");
        arb_sim_config cfg;
        arb_sim_config_default(&cfg);
        cfg.transport = ARB_TRANSPORT_IRN;
        cfg.queue_bytes = 50000;
        cfg.ecn = 1;
        cfg.ecn_kmin = 10000;
        cfg.ecn_kmax = 40000;
        cfg.loss = 0.002;
        cfg.rto = 100 * ARB_PS_PER_US;
        arb_sim *s = incast_on(t, &cfg);
        if (!sliced) {
            CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
        } else {
            uint32_t n_ports = arb_topo_n_ports(t);
            uint64_t sum = 0;
            for (arb_time at = 0; at < 2 * ARB_PS_PER_MS; at += 333333) {
                CHECK_EQ_I(arb_sim_run(s, at), 0);
                for (uint32_t p = 0; p < n_ports; p++) {
                    arb_sim_port_stats ps;
                    arb_sim_port(s, p, &ps);
                    sum += arb_sim_port_queue(s, p) + ps.tx_bytes;
                }
            }
            CHECK(sum > 0);
            CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
        }
        arb_sim_get_stats(s, &st[sliced]);
        for (uint32_t f = 0; f < 8; f++) {
            arb_sim_flow_result r;
            arb_sim_flow(s, f, &r);
            fin[sliced][f] = r.finish;
        }
        CHECK_EQ_U(st[sliced].flows_done, 8);
        arb_sim_free(s);
        arb_topo_free(t);
    }
    CHECK(st[0].drops > st[0].lost && st[0].lost > 0 && st[0].ecn_marks > 0);
    CHECK(memcmp(&st[0], &st[1], sizeof st[0]) == 0);
    CHECK(memcmp(fin[0], fin[1], sizeof fin[0]) == 0);
}

/* A partitioned run (of one part) to ARB_TIME_NEVER ends when the
 * queues are empty, as one process's does, with its figures; and again on
 * the empty queue. */
TEST(a_partitioned_run_to_never_ends)
{
    arb_sim_stats st[2];
    for (int part = 0; part < 2; part++) {
        arb_topo *t = simkit_topo("star:9");
        arb_sim_config cfg;
        arb_sim_config_default(&cfg);
        cfg.transport = ARB_TRANSPORT_IRN;
        cfg.queue_bytes = 50000;
        cfg.loss = 0.002;
        cfg.local_order = 1;
        arb_sim *s = sim_on(t, &cfg);
        if (part) one_part(s, t);
        for (uint32_t h = 1; h < 9; h++)
            CHECK_EQ_I(arb_sim_add_flow(s, h, 0, 200000, 0, (uint16_t)(1000 + h), h, NULL), 0);
        CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
        CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
        arb_sim_get_stats(s, &st[part]);
        CHECK_EQ_U(st[part].flows_done, 8);
        arb_sim_free(s);
        arb_topo_free(t);
    }
    CHECK(st[0].lost > 0);
    CHECK_EQ_U(st[1].events, st[0].events);
    CHECK_EQ_U(st[1].pkts_delivered, st[0].pkts_delivered);
    CHECK_EQ_U(st[1].pool_peak, st[0].pool_peak);
}

/* A link of its own loss (arb_topo_set_link_loss): only the flow through
 * it loses packets; a loss of 0 set on a link changes nothing. */
TEST(a_flaky_link_loses_alone)
{
    arb_sim_stats st[2];
    uint64_t retx[2][8];
    for (int run = 0; run < 2; run++) {
        arb_topo *t = simkit_topo("star:9");
        if (!t) return;
        uint32_t host3 = arb_topo_node(t, 3)->first_up; /* host 3's link, its direction up */
        uint32_t back = arb_topo_port(t, host3)->peer_port;
        CHECK(arb_topo_link_loss(t, host3) < 0);
        CHECK_EQ_I(arb_topo_set_link_loss(t, host3, run ? 0.05 : 0), 0);
        CHECK(arb_topo_link_loss(t, back) == (run ? 0.05 : 0)); /* both directions */
        CHECK(arb_topo_link_loss(t, arb_topo_node(t, 4)->first_up) < 0);
        CHECK_EQ_I(arb_topo_set_link_loss(t, host3, 1), ARB_EINVAL);
        CHECK_EQ_I(arb_topo_set_link_loss(t, arb_topo_n_ports(t), 0.1), ARB_EINVAL);
        arb_sim_config cfg;
        arb_sim_config_default(&cfg);
        cfg.transport = ARB_TRANSPORT_IRN;
        cfg.queue_bytes = 1 << 24; /* no queue drops: every loss is the link's */
        cfg.rto = 100 * ARB_PS_PER_US;
        arb_sim *s = incast_on(t, &cfg);
        CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
        arb_sim_get_stats(s, &st[run]);
        CHECK_EQ_U(st[run].flows_done, 8);
        for (uint32_t f = 0; f < 8; f++) {
            arb_sim_flow_result r;
            arb_sim_flow(s, f, &r);
            retx[run][f] = r.retx_bytes;
        }
        check_conservation(s);
        arb_sim_free(s);
        arb_topo_free(t);
    }
    CHECK_EQ_U(st[0].lost, 0);
    CHECK(st[1].lost > 0 && st[1].drops == st[1].lost);
    for (uint32_t f = 0; f < 8; f++) {
        CHECK_EQ_U(retx[0][f], 0);
        if (f == 2) /* the flow of host 3 (flows are hosts 1..8) */
            CHECK(retx[1][f] > 0);
        else
            CHECK_EQ_U(retx[1][f], 0);
    }
}

static void run_incast(arb_transport tr, int pfc, uint64_t queue, arb_sim_stats *st, int *all_done,
                       uint64_t *retx)
{
    arb_topo *t = simkit_topo("star:9");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.transport = tr;
    cfg.pfc = pfc;
    cfg.queue_bytes = queue;
    cfg.pfc_xoff = 40000;
    cfg.pfc_xon = 20000;
    cfg.rto = 100 * ARB_PS_PER_US;
    arb_sim *s = incast_on(t, &cfg);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_get_stats(s, st);
    *all_done = 1;
    *retx = 0;
    for (uint32_t f = 0; f < arb_sim_n_flows(s); f++) {
        arb_sim_flow_result r;
        arb_sim_flow(s, f, &r);
        if (r.finish == ARB_TIME_NEVER) *all_done = 0;
        *retx += r.retx_bytes;
    }
    CHECK_EQ_U(st->payload_delivered, 8 * 200000);
    check_conservation(s);
    arb_sim_free(s);
    arb_topo_free(t);
}

TEST(incast_drops_and_recovers_gbn)
{
    arb_sim_stats st;
    int done;
    uint64_t retx;
    run_incast(ARB_TRANSPORT_GBN, 0, 50000, &st, &done, &retx);
    CHECK(done);
    CHECK(st.drops > 0);
    CHECK(retx > 0);
    CHECK_EQ_U(st.retx_bytes, retx);
    CHECK_EQ_U(st.in_flight, 0);
}

TEST(incast_drops_and_recovers_irn)
{
    arb_sim_stats st, gbn;
    int done;
    uint64_t retx, retx_gbn;
    run_incast(ARB_TRANSPORT_IRN, 0, 50000, &st, &done, &retx);
    CHECK(done);
    CHECK(st.drops > 0);
    CHECK(retx > 0);
    run_incast(ARB_TRANSPORT_GBN, 0, 50000, &gbn, &done, &retx_gbn);
    /* Selective repeat resends less than go-back-N under the same loss. */
    CHECK(retx < retx_gbn);
}

TEST(incast_pfc_is_lossless)
{
    arb_sim_stats st;
    int done;
    uint64_t retx;
    run_incast(ARB_TRANSPORT_GBN, 1, 1000000, &st, &done, &retx);
    CHECK(done);
    CHECK_EQ_U(st.drops, 0);
    CHECK(st.pfc_pauses > 0);
    CHECK(st.pfc_paused_ps > 0);
    CHECK_EQ_U(retx, 0);
    CHECK(st.ecn_marks > 0);
}

TEST(deterministic)
{
    arb_sim_stats a, b;
    int done;
    uint64_t r1, r2;
    run_incast(ARB_TRANSPORT_IRN, 0, 50000, &a, &done, &r1);
    run_incast(ARB_TRANSPORT_IRN, 0, 50000, &b, &done, &r2);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
}

TEST(leafspine_permutation_completes)
{
    arb_topo *t = simkit_topo("leafspine:4,4,4");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.ack_every = 1000; /* only the final ack: acks would share the data links */
    arb_sim *s = sim_on(t, &cfg);
    for (uint32_t h = 0; h < 16; h++)
        CHECK_EQ_I(arb_sim_add_flow(s, h, (h + 5) % 16, 100000, 0, 1000, h, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.flows_done, 16);
    CHECK_EQ_U(st.drops, 0);
    CHECK_EQ_U(st.retx_bytes, 0);
    /* D-mod-k on a full-bisection leaf-spine puts one flow per link, so
     * each flow streams at line rate over 4 links (NIC, leaf up, spine
     * down, leaf down): 24 full packets of T = 334240 ps and a last one of
     * 1696 + 82 B, S = 142240 ps. Full packet i leaves switch 3 at
     * (i+4)T + 3 us; the last one waits behind packet 23 at every switch
     * and lands at 27T + S + 4 us. */
    for (uint32_t f = 0; f < 16; f++) {
        arb_sim_flow_result r;
        arb_sim_flow(s, f, &r);
        CHECK_EQ_U(r.finish, 27 * 334240 + 142240 + 4 * ARB_PS_PER_US);
    }
    check_conservation(s);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* A spine fails while four flows cross the leaf-spine: what it queued is
 * dropped, what was on its wires lost; ECMP moves to the other spine, IRN
 * repairs, every flow completes, the dead spine sends nothing more and the
 * packet count still balances. */
TEST(spine_fails_during_the_run)
{
    arb_topo *t = simkit_topo("leafspine:2,4,2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.transport = ARB_TRANSPORT_IRN;
    cfg.rto = 100 * ARB_PS_PER_US;
    arb_lb *lb = NULL;
    char err[200];
    REQUIRE_EQ_I(arb_lb_new(&lb, t, NULL, "ecmp", &cfg, err, sizeof err), 0);
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    for (uint32_t h = 0; h < 4; h++)
        CHECK_EQ_I(arb_sim_add_flow(s, h, 4 + h, 400000, 0, 1000 + h, h, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, 10 * ARB_PS_PER_US), 0);
    arb_sim_stats before;
    arb_sim_get_stats(s, &before);
    CHECK_EQ_I(arb_topo_fail(t, "switch:L2.0", err, sizeof err), 0);
    CHECK_EQ_I(arb_lb_refresh(lb), 0);
    arb_sim_fabric_changed(s);
    const arb_node *spine = arb_topo_node(t, arb_topo_node_id(t, 2, 0));
    uint64_t spine_tx[8];
    for (uint32_t p = 0; p < (uint32_t)(spine->n_down + spine->n_up) && p < 8; p++) {
        arb_sim_port_stats ps;
        CHECK_EQ_I(arb_sim_port(s, spine->first_port + p, &ps), 0);
        spine_tx[p] = ps.tx_pkts;
    }
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.flows_done, 4);
    CHECK(st.drops > before.drops); /* the spine held packets */
    CHECK_EQ_U(st.unroutable, 0);   /* the other spine always remained */
    for (uint32_t p = 0; p < (uint32_t)(spine->n_down + spine->n_up) && p < 8; p++) {
        arb_sim_port_stats ps;
        arb_sim_port(s, spine->first_port + p, &ps);
        CHECK_EQ_U(ps.tx_pkts, spine_tx[p]);
    }
    check_conservation(s);
    arb_sim_free(s);
    arb_lb_free(lb);
    arb_topo_free(t);
}

struct chain {
    int steps;
    arb_time done_at[4];
};

static void next_step(void *ctx, arb_sim *s, uint32_t flow, arb_time now)
{
    struct chain *ch = ctx;
    ch->done_at[flow] = now;
    /* Each step starts when the previous one lands, in the other direction. */
    arb_sim_flow_result r;
    arb_sim_flow(s, flow, &r);
    if (++ch->steps < 4) CHECK_EQ_I(arb_sim_add_flow(s, r.dst, r.src, 4096, now, 1, 1, NULL), 0);
}

TEST(flow_done_callback_chains_flows)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    struct chain ch = {0, {0}};
    cfg.on_flow_done = next_step;
    cfg.done_ctx = &ch;
    arb_sim *s = sim_on(t, &cfg);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 4096, 0, 1, 1, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    CHECK_EQ_I(ch.steps, 4);
    CHECK_EQ_U(arb_sim_n_flows(s), 4);
    /* One packet takes 2 x (334240 + 1 us); the steps run back to back,
     * except that each new sender first sends its ack of the step it just
     * received (86 B = 6880 ps): acks go ahead of data. */
    for (int i = 0; i < 4; i++)
        CHECK_EQ_U(ch.done_at[i], (uint64_t)(i + 1) * 2 * (334240 + ARB_PS_PER_US) + i * 6880u);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* The figures of one packet of 4096 B on star:2 at 100 Gb/s and 1 us a
 * link: 4178 wire bytes take 334,240 ps, an ack of 86 B 6,880 ps; a hop is
 * serialisation and delay, host to host two hops. */
#define ONE_DATA_HOP (334240 + ARB_PS_PER_US)
#define ONE_ACK_HOP (6880 + ARB_PS_PER_US)

/* The fabric `spec` with host h's link failed, and a default configuration
 * with rto 100 us and retry_limit `limit`. */
static arb_topo *dead_end(const char *spec, uint32_t h, arb_sim_config *cfg, uint32_t limit)
{
    arb_topo *t = simkit_topo(spec);
    REQUIRE_EQ_I(arb_topo_fail_link(t, arb_topo_node(t, h)->first_up), 0);
    arb_sim_config_default(cfg);
    cfg->rto = 100 * ARB_PS_PER_US;
    cfg->retry_limit = limit;
    return t;
}

/* IRN's rto_low on star fabrics (arb_sim_timers): four loops of a data
 * packet's two hops and its ack's two. */
#define STAR_RTO_LOW (4 * 2 * (ONE_DATA_HOP + ONE_ACK_HOP))

/*
 * A flow whose receiver's only link has failed hears nothing back: its
 * first packets leave at its start (5 us), timeouts 1 .. retry_limit come
 * rto apart and each resends all three packets (go-back-N from snd_una;
 * IRN takes every hole as lost), and timeout retry_limit + 1 gives up, at
 * start + (retry_limit + 1) x rto. Go-back-N's rto is cfg.rto; IRN's is
 * its rto_low (three packets outstanding, at most rto_low_n), derived from
 * the fabric, and no probe goes (no ack: no round trip to time it by).
 * Nothing is left to wait for: a run to the end of time ends there, and a
 * second run has no event to run.
 */
static void gives_up_alone(arb_transport tr)
{
    arb_sim_config cfg;
    arb_topo *t = dead_end("star:2", 1, &cfg, 3);
    cfg.transport = tr;
    arb_sim *s = sim_on(t, &cfg);
    arb_time start = 5 * ARB_PS_PER_US;
    arb_time rto = tr == ARB_TRANSPORT_IRN ? STAR_RTO_LOW : cfg.rto;
    uint32_t id;
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 3 * 4096, start, 1000, 7, &id), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow_result r;
    CHECK_EQ_I(arb_sim_flow(s, id, &r), 0);
    CHECK_EQ_U(r.gave_up, start + 4 * rto);
    CHECK_EQ_U(r.tlp_probes, 0);
    CHECK_EQ_U(r.timeouts, 4);
    CHECK_EQ_U(r.finish, ARB_TIME_NEVER);
    CHECK_EQ_U(r.retx_bytes, 3 * 3 * 4096);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.flows_gave_up, 1);
    CHECK_EQ_U(st.flows_done, 0);
    CHECK_EQ_U(st.timeouts, 4);
    CHECK_EQ_U(st.data_pkts_sent, 3 * 4);
    CHECK_EQ_U(arb_sim_now(s), r.gave_up);
    CHECK_EQ_U(arb_sim_last_activity(s), r.gave_up);
    CHECK_EQ_U(arb_sim_next_event(s), ARB_TIME_NEVER);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_stats again;
    arb_sim_get_stats(s, &again);
    CHECK_EQ_U(again.events, st.events);
    check_conservation(s);
    arb_sim_free(s);
    arb_topo_free(t);
}

TEST(a_flow_that_hears_nothing_gives_up_gbn)
{
    gives_up_alone(ARB_TRANSPORT_GBN);
}

TEST(a_flow_that_hears_nothing_gives_up_irn)
{
    gives_up_alone(ARB_TRANSPORT_IRN);
}

/*
 * With retry_limit 0 the same flow never gives up: it is still resending
 * when the run stops, one timeout every rto.
 */
TEST(retry_limit_zero_never_gives_up)
{
    arb_sim_config cfg;
    arb_topo *t = dead_end("star:2", 1, &cfg, 0);
    arb_sim *s = sim_on(t, &cfg);
    uint32_t id;
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 4096, 0, 1000, 7, &id), 0);
    CHECK_EQ_I(arb_sim_run(s, 1000 * cfg.rto), 0);
    arb_sim_flow_result r;
    CHECK_EQ_I(arb_sim_flow(s, id, &r), 0);
    CHECK_EQ_U(r.gave_up, ARB_TIME_NEVER);
    CHECK_EQ_U(r.timeouts, 1000);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.flows_gave_up, 0);
    arb_sim_free(s);
    arb_topo_free(t);
}

/*
 * The count is of timeouts in a row: progress between them starts it
 * again. retry_limit 1, one packet in flight (window 1), two packets, the
 * receiver's link down whenever a packet first crosses it:
 *   - down from the start: packet 0 (sent at 0) is lost; the link comes
 *     back at 50 us; timeout 1 at rto resends it, its ack comes back at
 *     rto + 2 data hops + 2 ack hops, and packet 1 leaves then (ta);
 *   - down again at ta + 300 ns (the ack has crossed, packet 1 is on host
 *     0's wire): packet 1 is lost at the switch; back at 150 us; timeout 2
 *     at ta + rto (the ack restarted the timer) resends it, delivered two
 *     data hops later.
 * Two timeouts, retry_limit + 1, but never two in a row: the flow finishes
 * at ta + rto + 2 data hops and does not give up.
 */
TEST(progress_between_timeouts_is_not_given_up)
{
    arb_sim_config cfg;
    arb_topo *t = dead_end("star:2", 1, &cfg, 1);
    uint32_t link = arb_topo_node(t, 1)->first_up;
    cfg.window = 1;
    arb_sim *s = sim_on(t, &cfg);
    uint32_t id;
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 2 * 4096, 0, 1000, 7, &id), 0);
    CHECK_EQ_U(arb_sim_next_event(s), 0); /* before the first run */
    CHECK_EQ_I(arb_sim_run(s, 50 * ARB_PS_PER_US), 0);
    CHECK_EQ_U(arb_sim_next_event(s), cfg.rto); /* what is left: the timeout */
    CHECK_EQ_I(arb_topo_restore_link(t, link), 0);
    arb_sim_fabric_changed(s);
    arb_time ta = cfg.rto + 2 * ONE_DATA_HOP + 2 * ONE_ACK_HOP;
    CHECK_EQ_I(arb_sim_run(s, ta + 300000), 0);
    CHECK_EQ_I(arb_topo_fail_link(t, link), 0);
    arb_sim_fabric_changed(s);
    CHECK_EQ_I(arb_sim_run(s, 150 * ARB_PS_PER_US), 0);
    CHECK_EQ_I(arb_topo_restore_link(t, link), 0);
    arb_sim_fabric_changed(s);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    arb_sim_flow_result r;
    CHECK_EQ_I(arb_sim_flow(s, id, &r), 0);
    CHECK_EQ_U(r.timeouts, 2);
    CHECK_EQ_U(r.gave_up, ARB_TIME_NEVER);
    CHECK_EQ_U(r.finish, ta + cfg.rto + 2 * ONE_DATA_HOP);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.flows_gave_up, 0);
    CHECK_EQ_U(st.flows_done, 1);
    arb_sim_free(s);
    arb_topo_free(t);
}

/*
 * A partitioned simulator (one part) gives up as the whole one does: the
 * same time, the same count (each flow once, though every run's end tells
 * the parts of it), the same events. Two flows of host 1 into a failed
 * link and one that finishes; the run in slices. Each of the two has at
 * most two packets outstanding: IRN's timeout is its rto_low, and with
 * retry_limit 2 each gives up 3 rto_low after its start.
 */
TEST(a_partitioned_run_gives_up_alike)
{
    arb_sim_stats st[2];
    arb_time at[2][2];
    for (int part = 0; part < 2; part++) {
        arb_sim_config cfg;
        arb_topo *t = dead_end("star:3", 2, &cfg, 2);
        cfg.transport = ARB_TRANSPORT_IRN;
        cfg.local_order = 1;
        arb_sim *s = sim_on(t, &cfg);
        if (part) one_part(s, t);
        CHECK_EQ_I(arb_sim_add_flow(s, 1, 2, 8192, 0, 1001, 1, NULL), 0);
        CHECK_EQ_I(arb_sim_add_flow(s, 1, 2, 4096, 20 * ARB_PS_PER_US, 1002, 2, NULL), 0);
        CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, 4096, 0, 1003, 3, NULL), 0);
        for (arb_time until = 50 * ARB_PS_PER_US; until < ARB_PS_PER_MS;
             until += 50 * ARB_PS_PER_US)
            CHECK_EQ_I(arb_sim_run(s, until), 0);
        CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
        CHECK_EQ_U(arb_sim_next_event(s), ARB_TIME_NEVER);
        arb_sim_get_stats(s, &st[part]);
        for (uint32_t f = 0; f < 2; f++) {
            arb_sim_flow_result r;
            arb_sim_flow(s, f, &r);
            at[part][f] = r.gave_up;
        }
        arb_sim_free(s);
        arb_topo_free(t);
    }
    CHECK_EQ_U(at[0][0], 3 * STAR_RTO_LOW);
    CHECK_EQ_U(at[0][1], 20 * ARB_PS_PER_US + 3 * STAR_RTO_LOW);
    for (int f = 0; f < 2; f++)
        CHECK_EQ_U(at[1][f], at[0][f]);
    CHECK_EQ_U(st[0].flows_gave_up, 2);
    CHECK_EQ_U(st[0].flows_done, 1);
    CHECK_EQ_U(st[1].flows_gave_up, st[0].flows_gave_up);
    CHECK_EQ_U(st[1].flows_done, st[0].flows_done);
    CHECK_EQ_U(st[1].events, st[0].events);
    CHECK_EQ_U(st[1].timeouts, st[0].timeouts);
}

TEST(bad_config)
{
    arb_topo *t = simkit_topo("star:2");
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    arb_sim *s = NULL;
    CHECK_EQ_I(arb_sim_new(&s, t, &cfg), ARB_EINVAL); /* no route function */
    cfg.route = simkit_dmodk;
    cfg.mtu = 0;
    CHECK_EQ_I(arb_sim_new(&s, t, &cfg), ARB_EINVAL);
    cfg.mtu = 4096;
    cfg.pfc = 1;
    cfg.pfc_xon = cfg.pfc_xoff;
    CHECK_EQ_I(arb_sim_new(&s, t, &cfg), ARB_EINVAL);
    cfg.pfc = 0;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 0, 100, 0, 1, 1, NULL), ARB_EINVAL);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 2, 100, 0, 1, 1, NULL), ARB_EINVAL);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 0, 0, 1, 1, NULL), ARB_EINVAL);
    arb_sim_free(s);
    arb_topo_free(t);
}

int main(void)
{
    RUN(pool_recycles);
    RUN(link_timing_one_packet);
    RUN(link_timing_pipelined);
    RUN(stale_timer_is_not_activity);
    RUN(superseded_timer_is_not_activity);
    RUN(link_changes_take_effect_when_told);
    RUN(too_many_kinds_of_link);
    RUN(switch_queue_counts_until_the_start);
    RUN(slices_and_reads_change_nothing);
    RUN(incast_drops_and_recovers_gbn);
    RUN(incast_drops_and_recovers_irn);
    RUN(incast_pfc_is_lossless);
    RUN(a_flaky_link_loses_alone);
    RUN(deterministic);
    RUN(leafspine_permutation_completes);
    RUN(flow_done_callback_chains_flows);
    RUN(spine_fails_during_the_run);
    RUN(a_partitioned_run_to_never_ends);
    RUN(a_flow_that_hears_nothing_gives_up_gbn);
    RUN(a_flow_that_hears_nothing_gives_up_irn);
    RUN(retry_limit_zero_never_gives_up);
    RUN(progress_between_timeouts_is_not_given_up);
    RUN(a_partitioned_run_gives_up_alike);
    RUN(bad_config);
    return testkit_done();
}
