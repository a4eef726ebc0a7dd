/* Unit tests: the transports' timers (IRN's rto_low and rto_high, chosen by
 * the packets outstanding, derived from the fabric) and the tail-loss probe,
 * on star:2 with a switch that drops chosen transmissions of chosen PSNs. */
#include "arbor/sim.h"
#include "arbor/topo.h"
#include "simkit.h"
#include "testkit.h"

/* One packet of 4096 B on star:2 at 100 Gb/s and 1 us a link: 4178 wire
 * bytes serialise in T = 334,240 ps, an ack of 86 B in A = 6,880 ps; a hop
 * is serialisation and delay, host to host two hops. */
#define T 334240u
#define A 6880u
#define D ARB_PS_PER_US
#define DATA_HOP (T + D)
#define ACK_HOP (A + D)
/* star:2's loop: a data packet's two hops and its ack's two (h = 1). */
#define STAR_LOOP (2 * (DATA_HOP + ACK_HOP))

/* The switch's routing with a dropper: the first drop[psn] transmissions
 * of data PSN psn (of any flow) are dropped there (unroutable). */
struct dropper {
    unsigned drop[64];
};

static uint32_t drop_route(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                           const arb_sim_pkt_info *f, arb_time now)
{
    struct dropper *d = ctx;
    if (f->kind == ARB_SIM_DATA && f->psn < 64 && d->drop[f->psn]) {
        d->drop[f->psn]--;
        return ARB_TOPO_NONE;
    }
    return simkit_dmodk(NULL, sim, node, in_port, f, now);
}

/* One flow of n packets from host 0 to host 1 of star:2 at time 0 under
 * cfg (routing through d), run to the end; its result in *r and the run's
 * counters in *st. */
static void one_flow(arb_sim_config *cfg, struct dropper *d, uint32_t n, arb_sim_flow_result *r,
                     arb_sim_stats *st, arb_sim_timers *tm)
{
    arb_topo *t = simkit_topo("star:2");
    cfg->route = drop_route;
    cfg->route_ctx = d;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, cfg), 0);
    uint32_t id;
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, (uint64_t)n * 4096, 0, 1000, 7, &id), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    CHECK_EQ_I(arb_sim_flow(s, id, r), 0);
    arb_sim_get_stats(s, st);
    arb_sim_get_timers(s, tm);
    arb_sim_free(s);
    arb_topo_free(t);
}

static void irn_config(arb_sim_config *cfg)
{
    arb_sim_config_default(cfg);
    cfg->transport = ARB_TRANSPORT_IRN;
}

/*
 * The timers IRN derives (arb_sim_timers), from the fabric's parameters:
 * the loop is 2h data hops and 2h ack hops at the largest delay and
 * serialisation (h = 1 on star:2, 2 on leafspine:2,2,2); rto_low four
 * loops; rto_high rto_low plus a full 2 MiB switch queue at the slowest
 * link (167,772,160 ps at 100 Gb/s) at each of the longest path's 2h - 1
 * switch ports; the probe within [loop, rto_high].
 */
#define QUEUE_PS ((arb_time)(2u << 20) * 8 * 10) /* 10 ps a bit at 100 Gb/s */
TEST(irn_timers_derive_from_the_fabric)
{
    arb_sim_config cfg;
    irn_config(&cfg);
    cfg.route = simkit_dmodk;
    arb_topo *t = simkit_topo("star:2");
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_sim_timers tm;
    arb_sim_get_timers(s, &tm);
    CHECK_EQ_U(tm.loop, STAR_LOOP);
    CHECK_EQ_U(tm.rto_low, 4 * STAR_LOOP);
    CHECK_EQ_U(tm.rto_high, 4 * STAR_LOOP + QUEUE_PS);
    CHECK_EQ_U(tm.rto_low_n, 3);
    CHECK_EQ_I(tm.tlp, 1);
    CHECK_EQ_U(tm.pto_min, STAR_LOOP);
    CHECK_EQ_U(tm.pto_max, tm.rto_high);
    arb_sim_free(s);

    cfg.queue_bytes = 4178 * 8; /* 8 packets: 8 T */
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_sim_get_timers(s, &tm);
    CHECK_EQ_U(tm.rto_high, 4 * STAR_LOOP + 8 * T);
    arb_sim_free(s);

    cfg.queue_bytes = 2u << 20;
    cfg.rto_high = STAR_LOOP; /* below the derived rto_low, which follows it down */
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_sim_get_timers(s, &tm);
    CHECK_EQ_U(tm.rto_low, STAR_LOOP);
    CHECK_EQ_U(tm.rto_high, STAR_LOOP);
    arb_sim_free(s);

    cfg.rto_low = 2 * STAR_LOOP; /* set both: rto_low above rto_high is refused */
    CHECK_EQ_I(arb_sim_new(&s, t, &cfg), ARB_EINVAL);
    cfg.rto_low = cfg.rto_high = 0;
    cfg.tlp = 2;
    CHECK_EQ_I(arb_sim_new(&s, t, &cfg), ARB_EINVAL);
    arb_topo_free(t);

    t = simkit_topo("leafspine:2,2,2");
    irn_config(&cfg);
    cfg.route = simkit_dmodk;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_sim_get_timers(s, &tm);
    CHECK_EQ_U(tm.loop, 2 * STAR_LOOP);
    CHECK_EQ_U(tm.rto_low, 8 * STAR_LOOP);
    CHECK_EQ_U(tm.rto_high, 8 * STAR_LOOP + 3 * QUEUE_PS);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* Go-back-N keeps one timeout, cfg.rto, and no probe unless asked. */
TEST(gbn_keeps_one_timeout)
{
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = simkit_dmodk;
    cfg.rto = 200 * ARB_PS_PER_US;
    arb_topo *t = simkit_topo("star:2");
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_sim_timers tm;
    arb_sim_get_timers(s, &tm);
    CHECK_EQ_U(tm.rto_low, cfg.rto);
    CHECK_EQ_U(tm.rto_high, cfg.rto);
    CHECK_EQ_I(tm.tlp, 0);
    arb_sim_free(s);
    cfg.tlp = 1;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    arb_sim_get_timers(s, &tm);
    CHECK_EQ_I(tm.tlp, 1);
    arb_sim_free(s);
    arb_topo_free(t);
}

/*
 * Every first transmission of an n-packet flow is dropped: no ack ever
 * comes back before the timeout, so there is no round trip to probe by and
 * the timeout alone repairs. The timer starts with the first packet (time
 * 0). With n <= rto_low_n (3) outstanding it is rto_low; the fourth packet
 * sent makes it rto_high. At the timeout IRN resends every hole back to
 * back from the timeout on: packet i reaches host 1 at
 * timeout + (i + 2) T + 2 D (the switch's port is busy with packet i - 1
 * until packet i is in), so the flow finishes at timeout + (n + 1) T + 2 D.
 */
static void all_first_copies_lost(uint32_t n, uint32_t low_n, int want_high)
{
    arb_sim_config cfg;
    irn_config(&cfg);
    cfg.rto_low_n = low_n;
    struct dropper d = {{0}};
    for (uint32_t i = 0; i < n; i++)
        d.drop[i] = 1;
    arb_sim_flow_result r;
    arb_sim_stats st;
    arb_sim_timers tm;
    one_flow(&cfg, &d, n, &r, &st, &tm);
    arb_time rto = want_high ? tm.rto_high : tm.rto_low;
    CHECK(tm.rto_high > tm.rto_low);
    CHECK_EQ_U(r.timeouts, 1);
    CHECK_EQ_U(r.tlp_probes, 0);
    CHECK_EQ_U(r.finish, rto + (n + 1) * (arb_time)T + 2 * D);
    CHECK_EQ_U(st.unroutable, n);
}

TEST(one_lost_packet_waits_rto_low)
{
    all_first_copies_lost(1, 3, 0);
}

TEST(three_lost_packets_wait_rto_low)
{
    all_first_copies_lost(3, 3, 0);
}

TEST(four_lost_packets_wait_rto_high)
{
    all_first_copies_lost(4, 3, 1);
}

TEST(rto_low_n_zero_always_waits_rto_high)
{
    all_first_copies_lost(1, 0, 1);
}

/*
 * A flow of 4 packets whose last one is dropped once. Packets 0-2 reach
 * host 1 at (i + 2) T + 2 D and their acks host 0 at (i + 2) T + 2 A + 4 D:
 * every round trip sample is (i + 2) T + 2 A + 4 D - i T, the loop, so the
 * smoothed round trip is the loop and the probe timeout 2 loops (within
 * [loop, rto_low]). The last ack (packet 2's, at t2) arms the probe at
 * t2 + 2 loops; the probe, packet 3 again, reaches host 1 two data hops
 * later and ends the flow there: t2 + 2 loops + 2 data hops, well before
 * the timeout (t2 + rto_low, one packet outstanding), which is what repairs
 * it without the probe.
 */
static void lost_tail(arb_transport tr, int tlp, arb_time rto, arb_time *finish,
                      arb_sim_flow_result *out)
{
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.transport = tr;
    cfg.tlp = tlp;
    if (rto) cfg.rto = rto;
    struct dropper d = {{0}};
    d.drop[3] = 1;
    arb_sim_flow_result r;
    arb_sim_stats st;
    arb_sim_timers tm;
    one_flow(&cfg, &d, 4, &r, &st, &tm);
    *finish = r.finish;
    *out = r;
    CHECK_EQ_U(st.unroutable, 1);
}

#define T2 (4 * (arb_time)T + 2 * A + 4 * D) /* packet 2's ack at host 0 */

TEST(a_lost_tail_is_probed_not_timed_out)
{
    arb_sim_flow_result r;
    arb_time finish;
    lost_tail(ARB_TRANSPORT_IRN, ARB_SIM_TLP_AUTO, 0, &finish, &r);
    CHECK_EQ_U(finish, T2 + 2 * STAR_LOOP + 2 * DATA_HOP);
    CHECK(finish < T2 + 4 * STAR_LOOP); /* before rto_low after the last ack */
    CHECK_EQ_U(r.tlp_probes, 1);
    CHECK_EQ_U(r.timeouts, 0);
    CHECK_EQ_U(r.retx_bytes, 4096);
    /* the same without the probe: the timeout, rto_low after that ack */
    lost_tail(ARB_TRANSPORT_IRN, 0, 0, &finish, &r);
    CHECK_EQ_U(finish, T2 + 4 * STAR_LOOP + 2 * DATA_HOP);
    CHECK_EQ_U(r.tlp_probes, 0);
    CHECK_EQ_U(r.timeouts, 1);
}

/* Go-back-N probes only when asked (its default, tlp off, waits cfg.rto);
 * when it does, the probe is the expected PSN at the receiver, which takes
 * and acks it: the same repair as IRN's. */
TEST(gbn_probes_when_asked)
{
    arb_sim_flow_result r;
    arb_time finish;
    lost_tail(ARB_TRANSPORT_GBN, ARB_SIM_TLP_AUTO, 200 * ARB_PS_PER_US, &finish, &r);
    CHECK_EQ_U(finish, T2 + 200 * ARB_PS_PER_US + 2 * DATA_HOP);
    CHECK_EQ_U(r.tlp_probes, 0);
    CHECK_EQ_U(r.timeouts, 1);
    lost_tail(ARB_TRANSPORT_GBN, 1, 200 * ARB_PS_PER_US, &finish, &r);
    CHECK_EQ_U(finish, T2 + 2 * STAR_LOOP + 2 * DATA_HOP);
    CHECK_EQ_U(r.tlp_probes, 1);
    CHECK_EQ_U(r.timeouts, 0);
}

/*
 * A lost resend: packet 2 of 8 is dropped twice. The NACK of packet 3
 * exposes it (at 5 T + 2 A + 4 D) and its resend is dropped too; the
 * NACKs of 4-7 find nothing more. Six packets are outstanding, so the
 * timeout is rto_high away; every sample is again the loop. The last NACK
 * (packet 7's, at tl = 9 T + 2 A + 4 D) arms the probe at tl + 2 loops:
 * packet 7 again, whose NACK comes back a loop later echoing the probe's
 * send time, which takes packet 2 (last sent before it) as lost; its third
 * copy reaches host 1 two data hops after that and releases 3-7 held
 * there: tl + 3 loops + 2 data hops.
 */
TEST(a_lost_resend_is_found_by_the_probe)
{
    arb_sim_config cfg;
    irn_config(&cfg);
    struct dropper d = {{0}};
    d.drop[2] = 2;
    arb_sim_flow_result r;
    arb_sim_stats st;
    arb_sim_timers tm;
    one_flow(&cfg, &d, 8, &r, &st, &tm);
    arb_time tl = 9 * (arb_time)T + 2 * A + 4 * D;
    CHECK_EQ_U(r.finish, tl + 3 * STAR_LOOP + 2 * DATA_HOP);
    CHECK(r.finish < tl + tm.rto_high);
    CHECK_EQ_U(r.tlp_probes, 1);
    CHECK_EQ_U(r.timeouts, 0);
    CHECK_EQ_U(r.retx_bytes, 3 * 4096); /* packet 2 twice, the probe once */
    CHECK_EQ_U(st.tlp_probes, 1);
}

/*
 * A lost resend found by a later packet (RACK's rule, with the probes): 20
 * packets, packet 2 dropped twice. Packet 3's NACK (at 5 T + 2 A + 4 D)
 * exposes 2 while packet 17 is on the wire (17 T to 18 T); its resend goes
 * next, at 18 T, and is dropped; packets 18 and 19 follow at 19 T and
 * 20 T. The NACKs of 4-17 echo send times before the resend's, but packet
 * 18's (at 19 T + 2 T + 2 A + 4 D) echoes 19 T, after it: the resend was
 * lost, and packet 2 goes a third time at once, reaching host 1 two data
 * hops later: 23 T + 2 A + 6 D, no probe, no timeout. Without the rule the
 * probe finds it, two loops after the last NACK and a loop more.
 */
TEST(a_lost_resend_is_found_by_a_later_packet)
{
    arb_sim_config cfg;
    irn_config(&cfg);
    struct dropper d = {{0}};
    d.drop[2] = 2;
    arb_sim_flow_result r;
    arb_sim_stats st;
    arb_sim_timers tm;
    one_flow(&cfg, &d, 20, &r, &st, &tm);
    CHECK_EQ_U(r.finish, 23 * (arb_time)T + 2 * A + 6 * D);
    CHECK_EQ_U(r.tlp_probes, 0);
    CHECK_EQ_U(r.timeouts, 0);
    CHECK_EQ_U(r.retx_bytes, 2 * 4096);
}

/*
 * The probe is lost too: packet 2 of 8 is dropped twice as above, and
 * packet 7 twice (its first copy and the probe). The last NACK is packet
 * 6's, at t6 = 8 T + 2 A + 4 D; the probe leaves at t6 + 2 loops and is
 * dropped. Six packets are outstanding, but nothing came back for two
 * round trips: none of them is queued any more, and the timeout after the
 * probe is rto_low (4 loops, above the probe timeout's 2), not rto_high
 * from the last progress. It
 * resends the holes, 2 and 7, back to back; 7 reaches host 1 at
 * timeout + 3 T + 2 D.
 */
TEST(a_silent_probe_leaves_rto_low)
{
    arb_sim_config cfg;
    irn_config(&cfg);
    struct dropper d = {{0}};
    d.drop[2] = 2;
    d.drop[7] = 2;
    arb_sim_flow_result r;
    arb_sim_stats st;
    arb_sim_timers tm;
    one_flow(&cfg, &d, 8, &r, &st, &tm);
    arb_time t6 = 8 * (arb_time)T + 2 * A + 4 * D;
    arb_time timeout = t6 + 2 * STAR_LOOP + tm.rto_low;
    CHECK_EQ_U(r.finish, timeout + 3 * (arb_time)T + 2 * D);
    CHECK(timeout < 3 * (arb_time)T + 2 * A + 4 * D + tm.rto_high); /* packet 1's ack + rto_high */
    CHECK_EQ_U(r.tlp_probes, 1);
    CHECK_EQ_U(r.timeouts, 1);
}

int main(void)
{
    RUN(irn_timers_derive_from_the_fabric);
    RUN(gbn_keeps_one_timeout);
    RUN(one_lost_packet_waits_rto_low);
    RUN(three_lost_packets_wait_rto_low);
    RUN(four_lost_packets_wait_rto_high);
    RUN(rto_low_n_zero_always_waits_rto_high);
    RUN(a_lost_tail_is_probed_not_timed_out);
    RUN(gbn_probes_when_asked);
    RUN(a_lost_resend_is_found_by_the_probe);
    RUN(a_silent_probe_leaves_rto_low);
    RUN(a_lost_resend_is_found_by_a_later_packet);
    return testkit_done();
}
