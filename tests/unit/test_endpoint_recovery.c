/*
 * Unit tests of the endpoint engines' loss recovery. Through the loopback
 * network of epkit.h, with hooks that lose chosen packets: a lost credit,
 * retry, repair credit, tail, request, END_ACK or REGISTER_ACK, an AGG_MISS
 * from a reused switch slot, retries that end in the bypass repair, and a
 * channel that fails when a member never answers; each with the default
 * recovery and, where it differs, the original one. By hand: loss by order
 * and its reordering window, the loss timer's estimate and its backoff,
 * and the bypass repair path with its repeats.
 */
#include "arbor/endpoint.h"

#include "testkit.h"
#include "epkit.h"

/* Loss hooks (and drop_credit_to_1, in epkit.h). */
static int drop_credit_and_first_repair(net *n, const net_pkt *p)
{
    if (p->to == 1 && p->h.packet_type == ARB_PT_RESPONSE && p->h.credit_valid &&
        p->h.offset_b == n->drop_k && n->drop_state < 2) {
        n->drop_state++;
        return 1;
    }
    return 0;
}

static int drop_last_tail_to_0(net *n, const net_pkt *p)
{
    if (p->to == 0 && p->h.packet_type == ARB_PT_RESPONSE && !p->h.credit_valid && !p->h.repair &&
        p->h.offset_a == 9 && n->drop_state == 0) {
        n->drop_state = 1;
        return 1;
    }
    return 0;
}

static int drop_request_from_2(net *n, const net_pkt *p)
{
    if (p->from == 2 && p->h.packet_type == ARB_PT_DATA_REQUEST && !p->h.repair &&
        p->h.offset_a == 5 && n->drop_state == 0) {
        n->drop_state = 1;
        return 1;
    }
    return 0;
}

static int drop_first_end_ack(net *n, const net_pkt *p)
{
    if (p->h.packet_type == ARB_PT_END_ACK && p->to == 2 && n->drop_state == 0) {
        n->drop_state = 1;
        return 1;
    }
    return 0;
}

static int drop_first_register_ack(net *n, const net_pkt *p)
{
    if (p->h.packet_type == ARB_PT_REGISTER_ACK && p->to == 0 && n->drop_state == 0) {
        n->drop_state = 1;
        return 1;
    }
    return 0;
}

/* Run a 10-packet pull-result message on R = 3 with a loss hook, with the
 * default recovery or the original design's (`seed`). */
static net *run_lossy_mode(drop_fn hook, arb_responder_stats *st, int *bad, int seed)
{
    net_opts o;
    net_opts_default(&o);
    o.seed = seed;
    net *n = net_new(&o);
    n->drop = hook;
    n->drop_k = 5;
    i32_msg m;
    i32_msg_init(&m, 3, 40);
    set_msg_range(n, 0, 0, 10);
    net_start(n, 0, &m);
    net_run(n, 1000000);
    *bad = i32_check(&m, 3) + n->invalid + n->foreign_ride + !net_all_done(n);
    arb_responder_get_stats(n->r, st);
    i32_msg_free(&m, 3);
    return n;
}

static net *run_lossy(drop_fn hook, arb_responder_stats *st, int *bad)
{
    return run_lossy_mode(hook, st, bad, 0);
}

static net *run_lossy_seed(drop_fn hook, arb_responder_stats *st, int *bad)
{
    return run_lossy_mode(hook, st, bad, 1);
}

/* The original recovery: the lost credit waits for the 50 ms timer, then the
 * bypass repair (every member answers straight to the responder). */
TEST(lost_credit_timeout_repair_replay)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy_seed(drop_credit_to_1, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(n->drop_state, 1);
    CHECK_EQ_U(st.timeouts, 1);
    CHECK_EQ_U(st.repair_credits, 1);
    CHECK_EQ_U(st.repair_commits, 1);
    CHECK_EQ_U(st.repair_requests, 3);
    CHECK(n->t >= 50 * MS); /* the original design's timeout */
    arb_requester_stats qs;
    arb_requester_get_stats(n->q[1], &qs);
    CHECK_EQ_U(qs.repair_requests, 1);
    CHECK_EQ_U(qs.requests, 9);
    /* credit 5 carried result 1 (window 4): the repair credit replayed it */
    arb_requester_get_stats(n->q[0], &qs);
    CHECK_EQ_U(qs.dup_results, 1);
    net_free(n);
}

/* The default recovery: the same lost credit is found by order (credit 6
 * on the same tree committed), credited again in the network as attempt 1
 * (replaying the result that rode it), and commits in a few loops: no
 * timer, no bypass repair. */
TEST(lost_credit_retried_in_network)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy(drop_credit_to_1, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(n->drop_state, 1);
    CHECK_EQ_U(st.losses_order, 1);
    CHECK_EQ_U(st.losses_timer, 0);
    CHECK_EQ_U(st.retries, 1);
    CHECK_EQ_U(st.repair_credits, 0);
    CHECK_EQ_U(st.repair_commits, 0);
    CHECK_EQ_U(st.commits, 10);
    CHECK(n->t < 100 * US); /* the loopback's loop is 4 us: a few loops */
    arb_requester_stats qs;
    arb_requester_get_stats(n->q[1], &qs);
    CHECK_EQ_U(qs.retry_answers, 1); /* member 1 answered attempt 1 */
    CHECK_EQ_U(qs.repair_requests, 0);
    arb_requester_get_stats(n->q[0], &qs);
    CHECK_EQ_U(qs.retry_answers, 1); /* so did every member: a fresh context */
    CHECK_EQ_U(qs.requests, 11);
    CHECK_EQ_U(qs.dup_results, 1); /* the replayed ride */
    net_free(n);
    /* the retry is lost too: found by order again (attempt 2) */
    n = run_lossy(drop_credit_and_first_repair, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(n->drop_state, 2);
    CHECK_EQ_U(st.retries, 2);
    CHECK_EQ_U(st.repair_commits, 0);
    net_free(n);
}

TEST(repair_credit_lost_sent_again)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy_seed(drop_credit_and_first_repair, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(n->drop_state, 2);
    CHECK_EQ_U(st.repair_credits, 2);
    CHECK_EQ_U(st.repair_repeats, 1);
    CHECK_EQ_U(st.repair_commits, 1);
    CHECK_EQ_U(st.dup_repairs, 0); /* the repeat went to member 1 alone */
    CHECK(n->t >= 100 * MS);
    net_free(n);
}

/* A lost tail shows up as a missing END: replayed to that member alone.
 * By order (the others' ENDs came in after the last tail) it is replayed
 * within a few loops; the original design's END wait takes its 50 ms timer. */
TEST(lost_tail_end_wait_replay)
{
    for (int seed = 0; seed < 2; seed++) {
        arb_responder_stats st;
        int bad;
        net *n = run_lossy_mode(drop_last_tail_to_0, &st, &bad, seed);
        CHECK_EQ_I(bad, 0);
        CHECK_EQ_U(n->drop_state, 1);
        CHECK(st.tails > 0);
        CHECK_EQ_U(st.tail_replays, st.tails); /* only member 0 was missing */
        CHECK_EQ_U(st.repair_credits, 0);
        arb_requester_stats qs;
        arb_requester_get_stats(n->q[0], &qs);
        CHECK(qs.dup_results > 0); /* replays of tails it already had are ignored */
        if (seed)
            CHECK(n->t >= 50 * MS);
        else
            CHECK(n->t < 100 * US); /* a 4 us loop: a few loops, no timer */
        net_free(n);
    }
}

/* Every normal credit of offset 5 to member 1 is lost, whatever its
 * attempt: after `attempts` credits the offset goes to the bypass repair,
 * whose repair credit gets through. */
static int drop_normal_credits_5_to_1(net *n, const net_pkt *p)
{
    (void)n;
    return p->to == 1 && p->h.packet_type == ARB_PT_RESPONSE && p->h.credit_valid && !p->h.repair &&
           p->h.offset_b == 5;
}

TEST(retry_fails_into_bypass)
{
    net_opts o;
    net_opts_default(&o);
    o.attempts = 3;
    net *n = net_new(&o);
    n->drop = drop_normal_credits_5_to_1;
    i32_msg m;
    i32_msg_init(&m, 3, 40);
    set_msg_range(n, 0, 0, 10);
    net_start(n, 0, &m);
    net_run(n, 1000000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(i32_check(&m, 3), 0);
    CHECK_EQ_I(n->invalid + n->foreign_ride, 0);
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(st.retries, 2);                        /* attempts 1 and 2 */
    CHECK_EQ_U(st.losses_order + st.losses_timer, 3); /* attempts 0, 1, 2 */
    CHECK_EQ_U(st.bypass, 1);
    CHECK_EQ_U(st.repair_credits, 1);
    CHECK_EQ_U(st.repair_commits, 1);
    CHECK_EQ_U(st.commits, 10);
    CHECK_EQ_U(n->dropped, 3);
    CHECK_EQ_I(arb_responder_error(n->r), 0);
    i32_msg_free(&m, 3);
    net_free(n);
}

/* Member 1 never hears of offset 5 again (every credit, normal or repair,
 * is lost): the channel fails within its bound, naming the offset and the
 * member, and stops. */
static int drop_all_credits_5_to_1(net *n, const net_pkt *p)
{
    (void)n;
    return p->to == 1 && p->h.packet_type == ARB_PT_RESPONSE && p->h.credit_valid &&
           p->h.offset_b == 5;
}

TEST(channel_fails_when_a_member_never_answers)
{
    net_opts o;
    net_opts_default(&o);
    o.attempts = 2;
    net *n = net_new(&o);
    n->drop = drop_all_credits_5_to_1;
    i32_msg m;
    i32_msg_init(&m, 3, 40);
    set_msg_range(n, 0, 0, 10);
    net_start(n, 0, &m);
    net_run(n, 1000000);
    CHECK_EQ_I(arb_responder_error(n->r), ARB_ETIMEDOUT);
    arb_responder_failure f;
    arb_responder_get_failure(n->r, &f);
    CHECK_EQ_I(f.error, ARB_ETIMEDOUT);
    CHECK_EQ_I(f.end_wait, 0);
    CHECK_EQ_U(f.offset, 5);
    CHECK_EQ_U(f.index, 5);
    CHECK_EQ_U(f.attempts, 2);
    CHECK_EQ_U(f.n_missing, 1);
    CHECK_EQ_U(f.missing[0], 1u << 1); /* member 1 */
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(st.repair_credits, ARB_EP_REPAIR_TRIES_DEFAULT);
    /* the bound: two credits, then repair credits waiting at most the 50 ms
     * ceiling each */
    CHECK(n->t <= (uint64_t)ARB_EP_REPAIR_TRIES_DEFAULT * 50 * MS);
    /* a failed channel sends nothing and waits for nothing */
    CHECK_EQ_U(arb_responder_next_expiry(n->r), ARB_TIME_NEVER);
    int before = (int)n->qlen;
    arb_hdr e = mk_end(0, 0);
    arb_responder_recv(n->r, &e, NULL, 0, 0, n->t);
    CHECK_EQ_I((int)n->qlen, before);
    CHECK_EQ_I(arb_responder_start_message(n->r, 1, 0, NULL, NULL, n->t), ARB_ESTATE);
    i32_msg_free(&m, 3);
    net_free(n);
}

/*
 * Order-based detection by hand (R = 1, one tree, window 4): offset 2
 * commits before 1, so 1 is lost once 1's send time + 2's completion time
 * + the reordering window (a quarter of the smallest completion time) has
 * passed; it is credited again as attempt 1. Its attempt-0 aggregate then
 * arrives after all: it commits, the loss was spurious, and the window
 * doubles; attempt 1's aggregate is a duplicate.
 */
TEST(order_detection_and_reordering_window)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 1, &cap);
    c.ep.window = 4;
    c.ep.timeout_min = 100 * US;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    static int32_t res[8 * 4];
    CHECK_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0);
    register_all(r, 1, 0, 0, 0); /* credits 0..3 at t = 0 */
    uint8_t pl[16] = {0};
    arb_hdr m0 = mk_master(0, 0, 1, 1);
    arb_responder_recv(r, &m0, pl, 16, ARB_EP_FROM_SWITCH, 10 * US); /* min rtt 10 us */
    arb_hdr m2 = mk_master(0, 2, 1, 1);
    arb_responder_recv(r, &m2, pl, 16, ARB_EP_FROM_SWITCH, 12 * US);
    /* 1 is due at 0 + 12 us + 10 / 4 us */
    arb_time due = 12 * US + 10 * US / 4;
    CHECK_EQ_U(arb_responder_next_expiry(r), due);
    cap.n = 0;
    arb_responder_on_expiry(r, due - 1);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_order, 0);
    arb_responder_on_expiry(r, due);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_order, 1);
    CHECK_EQ_U(st.retries, 1);
    const cap_pkt *retry = cap_last(&cap, ARB_PT_RESPONSE);
    CHECK(retry != NULL);
    if (retry) {
        CHECK_EQ_U(retry->h.offset_b, 1);
        CHECK_EQ_U(retry->h.attempt, 1);
        CHECK_EQ_U(retry->h.repair, 0);
        /* result 0 rode credit 4 (sent at 10 us): nothing rode credit 1 */
        CHECK_EQ_U(retry->h.payload_valid, 0);
    }
    CHECK_EQ_U(st.reo_wnd, 10 * US / 4);
    /* attempt 0 of offset 1 arrives after all: it commits */
    arb_hdr m1 = mk_master(0, 1, 1, 1);
    arb_responder_recv(r, &m1, pl, 16, ARB_EP_FROM_SWITCH, 16 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.late_masters, 1);
    CHECK_EQ_U(st.spurious, 1);
    CHECK_EQ_U(st.commits, 3);
    CHECK_EQ_U(st.reo_wnd, 2 * (10 * US / 4)); /* the multiplier went to 2 */
    /* attempt 1's aggregate: a duplicate */
    m1.attempt = 1;
    arb_responder_recv(r, &m1, pl, 16, ARB_EP_FROM_SWITCH, 20 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.dup_masters, 1);
    CHECK_EQ_U(st.commits, 3);
    /* a master of an attempt never sent is stale */
    arb_hdr m3 = mk_master(0, 3, 1, 1);
    m3.attempt = 2;
    arb_responder_recv(r, &m3, pl, 16, ARB_EP_FROM_SWITCH, 21 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.stale, 1);
    CHECK_EQ_U(st.commits, 3);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

/*
 * The timer by hand (R = 1, window 1, floor 20 us): before any warm sample
 * it is the initial 1 ms; the first commit's sample is cold (its credit left
 * before any commit) and does not count; then samples of 300 us give srtt
 * 300 us and rttvar halving from 150 us, the timer srtt + 4 rttvar (above
 * the recent maximum plus rttvar); an unanswered credit is lost that long
 * after the tree's last commit, its retry half as long again later.
 */
TEST(timer_estimate)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 1, &cap);
    c.ep.window = 1;
    c.ep.timeout_min = 20 * US;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.rto, 1 * MS);
    static int32_t res[8 * 4];
    CHECK_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0);
    register_all(r, 1, 0, 0, 0);
    uint8_t pl[16] = {0};
    arb_time now = 0;
    for (uint32_t k = 0; k < 4; k++) {
        now += 300 * US;
        arb_hdr m = mk_master(0, k, 1, 1);
        arb_responder_recv(r, &m, pl, sizeof pl, ARB_EP_FROM_SWITCH, now);
        arb_responder_get_stats(r, &st);
        if (k == 0) CHECK_EQ_U(st.rto, 1 * MS); /* a cold sample */
    }
    /* warm samples of 300 us: srtt 300, rttvar 150 -> 112.5 -> 84.375 */
    arb_time rttvar = 150 * US;
    for (int i = 0; i < 2; i++)
        rttvar = (3 * rttvar) / 4;
    arb_time rto = 300 * US + 4 * rttvar;
    CHECK(rto > 300 * US + rttvar); /* srtt + 4 rttvar is the larger here */
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.rto, rto);
    /* credit 4 left at `now`, with the last commit: due now + rto */
    CHECK_EQ_U(arb_responder_next_expiry(r), now + rto);
    arb_responder_on_expiry(r, now + rto - 1);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_timer, 0);
    cap.n = 0;
    arb_responder_on_expiry(r, now + rto);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_timer, 1);
    CHECK_EQ_U(st.retries, 1);
    CHECK_EQ_U(cap_last(&cap, ARB_PT_RESPONSE)->h.attempt, 1);
    /* the retry: lost 1.5 rto after it left */
    arb_time t1 = now + rto;
    CHECK_EQ_U(arb_responder_next_expiry(r), t1 + rto + rto / 2);
    arb_responder_free(r);
    /* timers below a microsecond, or a floor above the ceiling, are refused */
    c.ep.timeout_min = ARB_EP_TIMER_MIN - 1;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.timeout_min = c.ep.timeout + 1;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.timeout_min = 20 * US;
    c.ep.timeout = ARB_EP_TIMER_MIN - 1;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.timeout = 1 * MS;
    c.ep.attempts = 0;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.attempts = ARB_ATTEMPT_MAX + 2;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.attempts = ARB_EP_ATTEMPTS_DEFAULT;
    /* backed-off waits: 1..64 ceilings */
    c.ep.backoff_max = 0;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.backoff_max = ARB_EP_BACKOFF_MAX_DEFAULT + 1;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.ep.backoff_max = 1;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    arb_responder_free(r);
}

/* A ceiling below the loaded loop: the estimate is cut to the ceiling,
 * every timer loss proves spurious, and each doubles the multiplier past
 * the usual 4, up to 64: the timer climbs above the loop instead of
 * retrying every credit for ever. With a ceiling that cuts nothing, the
 * multiplier stops at 4. */
static void spurious_timer_losses(arb_time ceiling, int rounds, arb_time *rto_after,
                                  uint32_t *mult_after)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 1, &cap);
    c.ep.window = 1;
    c.ep.timeout_min = 20 * US;
    c.ep.timeout = ceiling;
    c.ep.order_detection = 0;
    arb_responder *r = NULL;
    if (arb_responder_new(&r, &c) != 0) return;
    static int32_t res[32 * 4];
    arb_responder_start_message(r, 0, sizeof res, NULL, res, 0);
    register_all(r, 1, 0, 0, 0);
    uint8_t pl[16] = {0};
    arb_time now = 0;
    for (uint32_t k = 0; k < 4; k++) { /* samples of 300 us: above a 40 us ceiling */
        now += 300 * US;
        arb_hdr m = mk_master(0, k, 1, 1);
        arb_responder_recv(r, &m, pl, sizeof pl, ARB_EP_FROM_SWITCH, now);
    }
    for (int j = 0; j < rounds; j++) {
        uint32_t k = 4 + (uint32_t)j;
        arb_time due = arb_responder_next_expiry(r);
        arb_responder_on_expiry(r, due); /* credit k lost by timer; attempt 1 goes out */
        now = due + 10 * US;
        arb_hdr m = mk_master(0, k, 1, 1); /* attempt 0 answers after all */
        arb_responder_recv(r, &m, pl, sizeof pl, ARB_EP_FROM_SWITCH, now);
        arb_responder_stats st;
        arb_responder_get_stats(r, &st);
        rto_after[j] = st.rto;
        mult_after[j] = st.rto_mult;
    }
    arb_responder_free(r);
}

TEST(ceiling_below_loaded_loop_backs_off)
{
    arb_time rto[8] = {0};
    uint32_t mult[8] = {0};
    spurious_timer_losses(40 * US, 8, rto, mult);
    uint32_t want = 1;
    for (int j = 0; j < 8; j++) {
        want = want * 2 > 64 ? 64 : want * 2;
        CHECK_EQ_U(mult[j], want);
        CHECK_EQ_U(rto[j], (arb_time)want * 40 * US); /* the ceiling, times the multiplier */
    }
    CHECK(rto[7] > 300 * US); /* 2.56 ms: above the loaded loop */
    /* a ceiling that cuts nothing: the multiplier stops at 4 */
    spurious_timer_losses(50 * MS, 3, rto, mult);
    CHECK_EQ_U(mult[0], 2);
    CHECK_EQ_U(mult[1], 4);
    CHECK_EQ_U(mult[2], 4);
}

TEST(lost_request_agg_timeout)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy_seed(drop_request_from_2, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(st.timeouts, 1);
    CHECK_EQ_U(st.repair_commits, 1);
    net_free(n);
    /* the default: found by order, retried in the network */
    n = run_lossy(drop_request_from_2, &st, &bad);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_U(st.losses_order, 1);
    CHECK_EQ_U(st.retries, 1);
    CHECK_EQ_U(st.repair_commits, 0);
    CHECK(n->t < 100 * US);
    net_free(n);
}

TEST(end_retry)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy(drop_first_end_ack, &st, &bad);
    CHECK_EQ_I(bad, 0);
    arb_requester_stats qs;
    arb_requester_get_stats(n->q[2], &qs);
    CHECK_EQ_U(qs.ends, 2);
    CHECK_EQ_U(st.ends, 4);
    net_free(n);
}

TEST(register_ack_lost_credit_acknowledges)
{
    arb_responder_stats st;
    int bad;
    net *n = run_lossy(drop_first_register_ack, &st, &bad);
    CHECK_EQ_I(bad, 0);
    arb_requester_stats qs;
    arb_requester_get_stats(n->q[0], &qs);
    CHECK_EQ_U(qs.registers, 1); /* the first credit stood for the ack */
    net_free(n);
}

/* Slot reallocated under a live context: the switch answers AGG_MISS. */
static int delay_member2_request_0(net *n, const net_pkt *p)
{
    (void)n;
    (void)p;
    return 0;
}

/* Member 2's request for offset 0 reaches the switch after the slot was
 * reused (emulated by changing the slot's owner once credit 0 went down):
 * the switch answers AGG_MISS, and the offset is credited again in the
 * network (default) or repaired in bypass (the original recovery); no timer
 * either way. */
static void agg_miss_run(int seed)
{
    net_opts o;
    net_opts_default(&o);
    o.seed = seed;
    net *n = net_new(&o);
    n->drop = delay_member2_request_0;
    i32_msg m;
    i32_msg_init(&m, 3, 40);
    set_msg_range(n, 0, 0, 10);
    net_start(n, 0, &m);
    /* run until credit 0 went down, then steal its slot */
    for (int i = 0; i < 20 && n->sw_next == 0; i++)
        net_run(n, 1);
    n->sw[0].k = 0x777;
    net_run(n, 1000000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(i32_check(&m, 3), 0);
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    /* each member's request met the stolen slot: the first AGG_MISS gives
     * the attempt up, the other two are stale */
    CHECK_EQ_U(st.agg_miss, 1);
    CHECK_EQ_U(st.stale, 2);
    CHECK_EQ_U(st.losses_timer, 0);
    CHECK_EQ_U(st.repair_commits, seed ? 1 : 0);
    CHECK_EQ_U(st.retries, seed ? 0 : 1);
    CHECK(n->t < 1 * MS);
    i32_msg_free(&m, 3);
    net_free(n);
}

TEST(agg_miss_through_switch)
{
    agg_miss_run(0);
    agg_miss_run(1);
}

/* The bypass repair (the original recovery: AGG_MISS sends an offset there at
 * once): the repair credit, repair requests (deduplicated, non-members
 * dropped), the commit by repair; and a late normal master, which commits
 * whichever path completes first. */
TEST(responder_repair_path)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    seed_recovery(&c);
    c.ep.window = 2;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    int32_t own[16] = {0}, res[16];
    CHECK_EQ_I(arb_responder_start_message(r, 0, 64, own, res, 0), 0);
    register_all(r, 2, 0, 0, 0);
    int32_t a[4] = {10, 20, 30, 40}, b[4] = {1, 2, 3, 4};
    /* commit 0 so that credit 2 carries result 0 */
    arb_hdr h = mk_master(0, 0, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)a, 16, ARB_EP_FROM_SWITCH, 1);
    /* AGG_MISS for 2: the repair credit replays result 0 */
    cap.n = 0;
    arb_hdr miss = mk(ARB_PT_AGG_MISS, 0, 2, 0);
    arb_responder_recv(r, &miss, NULL, 0, ARB_EP_FROM_SWITCH, 2);
    CHECK_EQ_I(cap.n, 2); /* the repair credit, and credit 3 (2 left the window) */
    const cap_pkt *rc = &cap.p[0];
    CHECK_EQ_U(rc->h.repair, 1);
    CHECK_EQ_U(rc->h.credit_valid, 1);
    CHECK_EQ_U(rc->h.offset_b, 2);
    CHECK_EQ_U(rc->h.offset_a, 0);
    CHECK_EQ_U(rc->h.payload_kind, ARB_PK_REPLAY);
    CHECK_EQ_U(rc->h.attempt, 0); /* a repair credit has no attempt */
    CHECK(memcmp(rc->data, a, 16) == 0);
    /* a second AGG_MISS is stale (no attempt in flight) */
    arb_responder_recv(r, &miss, NULL, 0, ARB_EP_FROM_SWITCH, 3);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.agg_miss, 1);
    CHECK_EQ_U(st.bypass, 1);
    CHECK_EQ_U(st.stale, 1);
    /* repair requests: non-member dropped, duplicate dropped */
    arb_hdr rq = mk_repair_req(0, 2, 1);
    arb_responder_recv(r, &rq, (uint8_t *)a, 16, ARB_EP_NOT_MEMBER, 4);
    arb_responder_recv(r, &rq, (uint8_t *)a, 16, 0, 4);
    arb_responder_recv(r, &rq, (uint8_t *)b, 16, 0, 4);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.not_member, 1);
    CHECK_EQ_U(st.dup_repairs, 1);
    CHECK_EQ_U(st.commits, 1);
    /* a repair request for an offset not in repair */
    arb_hdr rq3 = mk_repair_req(0, 3, 1);
    arb_responder_recv(r, &rq3, (uint8_t *)a, 16, 0, 4);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.stale, 2);
    arb_responder_recv(r, &rq, (uint8_t *)b, 16, 1, 5);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.commits, 2);
    CHECK_EQ_U(st.repair_commits, 1);
    CHECK_EQ_I(res[8], 11); /* 10 + 1 + own 0 */
    CHECK_EQ_I(res[11], 44);
    /* after commit, more repair requests are duplicates */
    arb_responder_recv(r, &rq, (uint8_t *)b, 16, 1, 6);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.dup_repairs, 2);
    CHECK_EQ_U(st.samples, 1); /* the repaired commit is no CC sample */
    /* offset 3: AGG_MISS, one repair answer, then its normal master after
     * all: it commits (exactly once), the repair is dropped */
    miss.offset_a = 3;
    arb_responder_recv(r, &miss, NULL, 0, ARB_EP_FROM_SWITCH, 7);
    arb_hdr rq4 = mk_repair_req(0, 3, 1);
    arb_responder_recv(r, &rq4, (uint8_t *)b, 16, 0, 7);
    h = mk_master(0, 3, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)a, 16, ARB_EP_FROM_SWITCH, 8);
    arb_responder_recv(r, &rq4, (uint8_t *)b, 16, 1, 9); /* late: a duplicate now */
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.late_masters, 1);
    CHECK_EQ_U(st.commits, 3);
    CHECK_EQ_U(st.repair_commits, 1);
    CHECK_EQ_I(res[12], 10); /* the master's sum, not the half repair */
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.repairs, 0);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

TEST(responder_timeout_of_repair_is_repeated)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    seed_recovery(&c);
    c.ep.window = 1;
    c.ep.timeout = 1 * MS;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    int32_t res[8];
    CHECK_EQ_I(arb_responder_start_message(r, 0, 32, NULL, res, 0), 0);
    register_all(r, 2, 0, 0, 0);
    CHECK_EQ_U(arb_responder_next_expiry(r), 1 * MS);
    arb_responder_on_expiry(r, 1 * MS - 1); /* early: nothing */
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.timeouts, 0);
    cap.n = 0;
    arb_responder_on_expiry(r, 1 * MS);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 1), 1);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 1); /* credit 1 took the window */
    /* at 2 ms offset 0's repair credit is repeated, to each of the two
     * members by itself (neither answered), and offset 1 times out into
     * its first repair credit, down the tree; from 3 ms each expiry
     * repeats both offsets' credits to both members */
    for (int i = 2; i <= 4; i++) {
        arb_responder_on_expiry(r, (arb_time)i * MS);
        CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 1), 4 * (i - 1));
    }
    int group = 0, unicast = 0;
    for (int k = 0; k < cap.n; k++) {
        if (!cap.p[k].h.repair) continue;
        if (cap.p[k].dst.kind == ARB_EP_DST_GROUP) group++;
        if (cap.p[k].dst.kind == ARB_EP_DST_MEMBER) unicast++;
    }
    CHECK_EQ_I(group, 2); /* the first repair credit of each offset */
    CHECK_EQ_I(unicast, 10);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.timeouts, 2); /* offsets 0 and 1 */
    CHECK(st.repair_repeats >= 2);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

int main(void)
{
    RUN(responder_repair_path);
    RUN(responder_timeout_of_repair_is_repeated);
    RUN(lost_credit_timeout_repair_replay);
    RUN(lost_credit_retried_in_network);
    RUN(repair_credit_lost_sent_again);
    RUN(lost_tail_end_wait_replay);
    RUN(retry_fails_into_bypass);
    RUN(channel_fails_when_a_member_never_answers);
    RUN(order_detection_and_reordering_window);
    RUN(timer_estimate);
    RUN(ceiling_below_loaded_loop_backs_off);
    RUN(lost_request_agg_timeout);
    RUN(end_retry);
    RUN(register_ack_lost_credit_acknowledges);
    RUN(agg_miss_through_switch);
    return testkit_done();
}
