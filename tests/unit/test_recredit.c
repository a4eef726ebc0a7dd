/*
 * Unit tests of local repair's re-credit state as a later attempt meets it
 * (agg.h: arb_agg_arm, arb_agg_expire, ARB_AGG_R_HELD): a later attempt is
 * held where the children it would go to are answering the switch's copy
 * on a queued path, and goes down as before everywhere else.
 */
#include "arbor/agg.h"

#include "testkit.h"
#include "aggkit.h"

#define US ((arb_time)1000000) /* arb_time is in ps */

static const uint8_t FANIN2 = 2;
static const uint32_t BOTH[2] = {0, 1};

/* Credit offset k down ports 0 and 1 (a PUSH here, armed at t). */
static arb_hdr push(arb_agg *a, uint32_t k)
{
    arb_hdr c = credit(k, 0, 0);
    arb_agg_result r = feed(a, &c, NULL, 0, CH1, 3, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_PUSH);
    CHECK_EQ_I(arb_agg_arm(a, r.slot, &c, NULL, 0, 0, BOTH, 2, 0, t), 0);
    return c; /* as sent down: its stack pushed */
}

/* Port p answers credit c (one contribution of a fan-in of 2), its
 * request marked CE or not. */
static arb_agg_result answer(arb_agg *a, const arb_hdr *c, uint32_t p, int ce)
{
    arb_hdr q = request(c, 1, &FANIN2, 0, ARB_OP_SUM, ARB_DTYPE_F32);
    return feed(a, &q, NULL, 0, CH1, p, ce);
}

/* A switch whose one completion took `loop` (srtt `loop`, rttvar half of
 * it), port 1's answer marked CE if `queued`. */
static arb_agg *warm(arb_agg *a, arb_time loop, int queued)
{
    arb_hdr c = push(a, 1);
    t += loop;
    answer(a, &c, 0, 0);
    CHECK_EQ_I(answer(a, &c, 1, queued).action, ARB_AGG_EMIT_AGGREGATE);
    return a;
}

static arb_agg *warmed(arb_time loop, int queued)
{
    return warm(make(16, 4, 1), loop, queued);
}

/* Attempt 1 of offset 50, whose slot has port 0's input and waits for port
 * 1's; `dt` after the credit went down. */
static arb_agg_result attempt_1(arb_agg *a, arb_hdr *c0, arb_time dt)
{
    *c0 = push(a, 50);
    answer(a, c0, 0, 0);
    t += dt;
    arb_hdr c1 = credit(50, 0, 0);
    c1.attempt = 1;
    return feed(a, &c1, NULL, 0, CH1, 3, 0);
}

/* Port 1's answers come marked CE, and its copy of the credit went down
 * less than a loop ago: it is queued on the way, and the later attempt
 * goes no further (HELD), taking the slot over; port 1's answer to the
 * first copy then completes it as attempt 1. */
TEST(later_attempt_held_on_a_queued_path)
{
    t = 0;
    arb_agg *a = warmed(10 * US, 1);
    arb_hdr c0;
    arb_agg_result r = attempt_1(a, &c0, 2 * US);
    CHECK_EQ_I(r.action, ARB_AGG_DROP);
    CHECK_EQ_I(r.reason, ARB_AGG_R_HELD);
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.dup_credits, 1);
    CHECK_EQ_U(st.adoptions, 0);
    r = answer(a, &c0, 1, 1); /* attempt 0's answer */
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.attempt, 1);
    arb_agg_free(a);
}

/* ... and goes down as before to port 1 where its answers were not marked
 * (case 0), where its copy went down longer than srtt + 4 rttvar ago (1:
 * 10 us + 4 x 5 us), and where the switch has spent its re-credits on the
 * slot (2: the offset is the responder's to repair). */
TEST(later_attempt_goes_down_where_the_path_is_clear)
{
    for (int c = 0; c < 3; c++) {
        t = 0;
        /* case 2: a 2 us loop, so that three timers fit within the hold */
        arb_agg *a = warmed(c == 2 ? 2 * US : 10 * US, c != 0);
        arb_hdr c0 = push(a, 50);
        answer(a, &c0, 0, 0);
        t += c == 1 ? 31 * US : 1 * US;
        if (c == 2) {
            arb_agg_config cfg;
            arb_agg_config_default(&cfg);
            arb_agg_recredit rc;
            for (uint32_t k = 0; k < cfg.recredit_tries; k++) {
                int got = 0;
                for (int i = 0; i < 4 && !got; i++) { /* a stale front first */
                    t = arb_agg_next_expiry(a);
                    REQUIRE(t != ARB_TIME_NEVER);
                    got = arb_agg_expire(a, t, &rc);
                }
                REQUIRE_EQ_I(got, 1);
                CHECK_EQ_U(rc.missing[0], 2); /* port 1 */
            }
            CHECK(t < cfg.recredit_hold);
        }
        arb_hdr c1 = credit(50, 0, 0);
        c1.attempt = 1;
        arb_agg_result r = feed(a, &c1, NULL, 0, CH1, 3, 0);
        CHECK_EQ_I(r.action, ARB_AGG_FORWARD);
        CHECK_EQ_I(r.reason, ARB_AGG_R_ADOPT);
        REQUIRE(r.have != NULL);
        CHECK_EQ_U(r.have[0], 1); /* port 0 has: it goes to port 1 */
        CHECK_EQ_U(stats(a).adoptions, 1);
        arb_agg_free(a);
    }
}

/* Without local repair nothing is held: every attempt allocates. */
TEST(nothing_held_without_local_repair)
{
    t = 0;
    arb_agg *a = make_lr(16, 4, 1, 0);
    arb_hdr c0 = credit(50, 0, 0), c1 = credit(50, 0, 0);
    feed(a, &c0, NULL, 0, CH1, 3, 0);
    answer(a, &c0, 1, 1);
    c1.attempt = 1;
    CHECK_EQ_I(feed(a, &c1, NULL, 0, CH1, 3, 0).reason, ARB_AGG_R_PUSH);
    CHECK_EQ_U(stats(a).dup_credits, 0);
    arb_agg_free(a);
}

/* Timers wait in a queue in the order they were armed, and the driver is
 * told when the front's is due. A front whose slot completed is stale: it
 * leaves the queue then, rather than at its own due, which held every
 * timer behind it, and every loss that order had found there, until then
 * (before a switch's first completion four floors times the patience: 320
 * us at the default 20 us floor). Offset 2 lost port 0's answer: port 0
 * has answered offset 3's credit, armed after it. */
TEST(a_completed_front_holds_no_timer_behind_it)
{
    t = 0;
    arb_agg *a = make(16, 4, 1);
    arb_hdr b = push(a, 1); /* the front of the queue */
    push(a, 2);
    arb_hdr d = push(a, 3);
    t = 5 * US;
    answer(a, &b, 0, 0);
    CHECK_EQ_I(answer(a, &b, 1, 0).action, ARB_AGG_EMIT_AGGREGATE);
    answer(a, &d, 0, 0);
    CHECK_EQ_U(arb_agg_next_expiry(a), 0);
    arb_agg_recredit rc;
    CHECK_EQ_I(arb_agg_expire(a, t, &rc), 1);
    CHECK_EQ_U(rc.hdr.offset_b, 2);
    CHECK_EQ_U(rc.missing[0], 1); /* port 0 */
    arb_agg_free(a);
}

/* A missing port that is still answering the credits sent before this one
 * (a host link that queues a window) has not lost it: the slot's timer
 * waits until the port has been silent a timeout, rather than asking
 * again, as a TCP sender restarts its timer on each acknowledgement.
 * Offsets 2..13 go down both ports at once; port 0 answers them all, port
 * 1 one every 50 us, in order. Every slot's timer (four times the 30 us
 * of srtt + 4 rttvar, from a 10 us loop: 120 us) runs out while port 1 is
 * still on its way through them: none is re-credited, each waits. That
 * holds where ports answer in order (recredit_order); where they do not
 * (the runtime's switch: datagrams of several sockets) an answer to
 * another credit says nothing of this one, and the timer asks at its due
 * (offset 4's, 120 us, at the check at 150 us). */
static void still_answering(int ordered)
{
    arb_agg_config cfg;
    arb_agg_config_default(&cfg);
    cfg.slots = 16;
    cfg.ports = 4;
    cfg.header_only = 1;
    cfg.recredit_order = ordered;
    arb_agg *a = NULL;
    REQUIRE_EQ_I(arb_agg_new(&a, &cfg), 0);
    t = 0;
    warm(a, 10 * US, 0);
    arb_time t0 = t;
    arb_hdr c[12];
    for (uint32_t k = 0; k < 12; k++)
        c[k] = push(a, 2 + k);
    for (uint32_t k = 0; k < 12; k++)
        answer(a, &c[k], 0, 0);
    arb_agg_recredit rc;
    uint64_t asked = 0;
    for (uint32_t k = 0; k < 12; k++) {
        t = t0 + (k + 1) * 50 * US;
        while (arb_agg_expire(a, t, &rc) == 1)
            asked++;
        CHECK_EQ_I(answer(a, &c[k], 1, 0).action, ARB_AGG_EMIT_AGGREGATE);
    }
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.recredits, asked);
    if (ordered) {
        CHECK_EQ_U(asked, 0);
        CHECK(st.recredit_waits >= 1);
    } else {
        CHECK(asked >= 1);
        CHECK_EQ_U(st.recredit_waits, 0);
    }
    arb_agg_free(a);
}

TEST(a_port_still_answering_is_not_asked_again)
{
    for (int ordered = 1; ordered >= 0; ordered--)
        still_answering(ordered);
}

/* ... but however long the port keeps answering, a slot it still owes is
 * asked again at most recredit_max after its credit went down. Offsets
 * 2..41 go down both ports at once (no loop sampled yet); port 0 answers
 * them all, port 1 answers offsets 2..40 one every 50 us, until 1.95 ms,
 * and never offset 41. */
TEST(a_port_answering_for_long_is_asked_again_within_the_bound)
{
    arb_agg_config cfg;
    arb_agg_config_default(&cfg);
    t = 0;
    arb_agg *a = make(64, 4, 1);
    arb_hdr c[40];
    for (uint32_t k = 0; k < 40; k++)
        c[k] = push(a, 2 + k);
    for (uint32_t k = 0; k < 40; k++)
        answer(a, &c[k], 0, 0);
    arb_time asked = ARB_TIME_NEVER;
    arb_agg_recredit rc;
    for (t = US; t <= 2 * cfg.recredit_max && asked == ARB_TIME_NEVER; t += US) {
        if (t % (50 * US) == 0 && t / (50 * US) <= 39)
            answer(a, &c[t / (50 * US) - 1], 1, 0); /* offset t / 50 us + 1 */
        while (arb_agg_expire(a, t, &rc) == 1) {
            CHECK_EQ_U(rc.missing[0], 2); /* port 1 */
            if (rc.hdr.offset_b == 41) asked = t;
        }
    }
    CHECK(asked <= cfg.recredit_max);
    CHECK(asked > 320 * US); /* the first timer (4 floors x 4) waited */
    CHECK(stats(a).recredit_waits >= 1);
    arb_agg_free(a);
}

int main(void)
{
    RUN(later_attempt_held_on_a_queued_path);
    RUN(later_attempt_goes_down_where_the_path_is_clear);
    RUN(nothing_held_without_local_repair);
    RUN(a_completed_front_holds_no_timer_behind_it);
    RUN(a_port_still_answering_is_not_asked_again);
    RUN(a_port_answering_for_long_is_asked_again_within_the_bound);
    return testkit_done();
}
