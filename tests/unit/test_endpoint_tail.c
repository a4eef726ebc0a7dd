/*
 * Unit tests of the responder's message tail, hand-made (epkit.h): the END
 * wait's replay rounds, the tail probes, and messages that live in their
 * first window or are one offset long (credited, and registered, twice at
 * once).
 */
#include "arbor/endpoint.h"

#include "testkit.h"
#include "epkit.h"

/* A responder of 4 members whose 4 offsets have all committed at 10 us,
 * every result a tail; the adaptive timers and order detection on. */
static arb_responder *drained_four(capture *cap, uint32_t repair_tries)
{
    arb_responder_config c;
    rsp_cfg(&c, 4, cap);
    c.ep.window = 4;
    c.ep.repair_tries = repair_tries;
    arb_responder *r = NULL;
    if (arb_responder_new(&r, &c) != 0) return NULL;
    /* the buffers outlive this call: the responder reads and writes them */
    static int32_t own[16], res[16];
    arb_responder_start_message(r, 0, 64, own, res, 0);
    register_all(r, 4, 0, 0, 0);
    int32_t agg[4] = {1, 2, 3, 4};
    for (uint32_t k = 0; k < 4; k++) {
        arb_hdr h = mk_master(0, k, 4, 1);
        arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10 * US);
    }
    return r;
}

/* Replays of one END-wait round: how many, and to whom (-1: the group). */
static int replays_of(const capture *cap, int from, int *to)
{
    int n = 0;
    *to = -2;
    for (int i = from; i < cap->n; i++) {
        if (cap->p[i].h.packet_type != ARB_PT_RESPONSE || !cap->p[i].h.repair) continue;
        n++;
        *to = cap->p[i].dst.kind == ARB_EP_DST_GROUP ? -1 : (int)cap->p[i].dst.member;
    }
    return n;
}

/* The END wait by order: a replay round goes down the tree once when
 * several members are missing, to the member alone when one is; a round
 * ends a reordering window after the slowest END it brought (each END
 * moves the deadline on), well before the round's timer. */
TEST(responder_end_rounds_by_order)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = drained_four(&cap, 8);
    REQUIRE(r != NULL);
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    REQUIRE_EQ_U(pr.phase, ARB_RSP_DRAIN);
    /* no END at all: the timer, then every tail once, to the group */
    arb_time t1 = arb_responder_next_expiry(r), wait0 = t1 - 10 * US;
    int to, from = cap.n;
    arb_responder_on_expiry(r, t1);
    CHECK_EQ_I(replays_of(&cap, from, &to), 4);
    CHECK_EQ_I(to, -1);
    /* three ENDs come back; each moves the deadline on */
    arb_hdr e = mk_end(0, 0);
    arb_responder_recv(r, &e, NULL, 0, 0, t1 + 2 * US);
    arb_time due_a = arb_responder_next_expiry(r);
    arb_responder_recv(r, &e, NULL, 0, 1, t1 + 3 * US);
    arb_responder_recv(r, &e, NULL, 0, 2, t1 + 4 * US);
    arb_time due_b = arb_responder_next_expiry(r);
    CHECK(due_b >= due_a);
    CHECK(due_b > t1 + 4 * US);
    /* the round's timer is twice the first wait after a replay */
    CHECK(due_b < t1 + 2 * wait0);
    from = cap.n;
    arb_responder_on_expiry(r, due_b);
    CHECK_EQ_I(replays_of(&cap, from, &to), 4); /* to member 3 alone */
    CHECK_EQ_I(to, 3);
    arb_responder_recv(r, &e, NULL, 0, 3, due_b + 3 * US);
    CHECK(arb_responder_done(r));
    CHECK_EQ_I(arb_responder_error(r), 0);
    arb_responder_free(r);
}

/* A round that brings an END is progress: members answering one a round
 * never fail the channel, however many rounds that takes; repair_tries
 * rounds in a row that bring none do, naming the member. */
TEST(responder_end_rounds_fail_on_silence_only)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = drained_four(&cap, 2);
    REQUIRE(r != NULL);
    arb_hdr e = mk_end(0, 0);
    arb_time t = arb_responder_next_expiry(r);
    for (int j = 0; j < 3; j++) { /* rounds 1..3: one END each */
        arb_responder_on_expiry(r, t);
        arb_responder_recv(r, &e, NULL, 0, j, t + 2 * US);
        t = arb_responder_next_expiry(r);
        CHECK_EQ_I(arb_responder_error(r), 0);
    }
    /* member 3 never answers: round 4 replays to it, then two silent
     * rounds (repair_tries) fail the channel */
    int rounds = 0;
    while (arb_responder_error(r) == 0 && rounds < 10) {
        arb_responder_on_expiry(r, t);
        t = arb_responder_next_expiry(r);
        rounds++;
    }
    CHECK_EQ_I(rounds, 3);
    CHECK_EQ_I(arb_responder_error(r), ARB_ETIMEDOUT);
    arb_responder_failure f;
    arb_responder_get_failure(r, &f);
    CHECK_EQ_U(f.end_wait, 1);
    CHECK_EQ_U(f.n_missing, 1);
    CHECK_EQ_U(f.missing[0], 1u << 3);
    arb_responder_free(r);
}

/* The first replay round ends after a loop: when its replay is lost as
 * well, the next goes once the larger of srtt and the slowest END's delay
 * after the last tail, plus a reordering window (at most srtt), has passed
 * with no END: at most twice that loop. The round after a silent one waits
 * for its timer, eight times it (twice the loop, doubled for the replay
 * and for the silent round). Before, the first round waited for its timer
 * too: half the next one's. */
TEST(responder_end_first_round_after_a_loop)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = drained_four(&cap, 8);
    REQUIRE(r != NULL);
    arb_hdr e = mk_end(0, 0);
    for (int j = 0; j < 3; j++) /* members 0..2 END soon after the tails */
        arb_responder_recv(r, &e, NULL, 0, j, 10 * US + (arb_time)(j + 1) * US);
    arb_time t1 = arb_responder_next_expiry(r);
    int to, from = cap.n;
    arb_responder_on_expiry(r, t1); /* by order: member 3 alone */
    CHECK_EQ_I(replays_of(&cap, from, &to), 4);
    CHECK_EQ_I(to, 3);
    arb_time t2 = arb_responder_next_expiry(r);
    from = cap.n;
    arb_responder_on_expiry(r, t2); /* no END: member 3 again */
    CHECK_EQ_I(replays_of(&cap, from, &to), 4);
    CHECK_EQ_I(to, 3);
    arb_time t3 = arb_responder_next_expiry(r);
    CHECK(t2 > t1);
    CHECK(t3 - t2 >= 4 * (t2 - t1));
    arb_responder_recv(r, &e, NULL, 0, 3, t2 + 2 * US);
    CHECK(arb_responder_done(r));
    CHECK_EQ_I(arb_responder_error(r), 0);
    arb_responder_free(r);
}

/* The latest credit of offset k in the capture from `from` on: its attempt,
 * or -1. */
static int credit_attempt(const capture *cap, int from, uint32_t k)
{
    int a = -1;
    for (int i = from; i < cap->n; i++)
        if (cap->p[i].h.packet_type == ARB_PT_RESPONSE && cap->p[i].h.credit_valid &&
            cap->p[i].h.offset_b == k)
            a = cap->p[i].h.attempt;
    return a;
}

/* The tail probe (RACK-TLP's PTO): the newest credit of a message's tail
 * is credited again twice the smoothed loop after it left, and so is each
 * probe's own credit, the second and later waiting twice as long as the
 * first (the tail's fabric drains: its loop does not grow), eight probes
 * at most; the loss timer alone, which still holds the loaded loop's
 * maxima, would wait many loops. */
/* A responder of 2 members with tail probes on, a window of 4, a fixed
 * loss timer of 10 ms, far above the loop, and 16 attempts an offset (the
 * default 8 would send the eighth probe's offset to the bypass repair
 * instead of its timer); a message of `n` offsets
 * (the buffers static: the responder reads and writes them) whose first
 * `commit` offsets commit, 0-3 at 10 us and the rest at 20 us: a loop of
 * 10 us. */
static arb_responder *probing_two(capture *cap, uint32_t n, uint32_t commit)
{
    arb_responder_config c;
    rsp_cfg(&c, 2, cap);
    c.ep.window = 4;
    c.ep.tail_probe = 1;
    c.ep.timeout_min = 10 * US;
    c.ep.adaptive_timeout = 0;
    c.ep.timeout = 10 * MS;
    c.ep.attempts = 16;
    arb_responder *r = NULL;
    if (arb_responder_new(&r, &c) != 0) return NULL;
    static int32_t own[64], res[64];
    memset(own, 0, sizeof own);
    if (n > 16 || arb_responder_start_message(r, 0, 16ull * n, own, res, 0) != 0) {
        arb_responder_free(r);
        return NULL;
    }
    register_all(r, 2, 0, 0, 0);
    int32_t agg[4] = {1, 2, 3, 4};
    for (uint32_t k = 0; k < commit; k++) {
        arb_hdr h = mk_master(0, k, 2, 1);
        arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH,
                           k < 4 ? 10 * US : 20 * US);
    }
    return r;
}

TEST(responder_tail_probes_back_off)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    /* 8 offsets: 0-3 commit at 10 us (credits 4-7 leave then), 4-6 at
     * 20 us; 7, the tail's newest credit, is not answered */
    arb_responder *r = probing_two(&cap, 8, 7);
    REQUIRE(r != NULL);
    REQUIRE_EQ_I(credit_attempt(&cap, 0, 7), 0);
    arb_time sent = 10 * US, gap[8];
    for (int p = 0; p < 8; p++) {
        arb_time due = arb_responder_next_expiry(r);
        gap[p] = due - sent;
        int from = cap.n;
        arb_responder_on_expiry(r, due);
        CHECK_EQ_I(credit_attempt(&cap, from, 7), p + 1);
        sent = due;
    }
    CHECK(gap[0] >= 20 * US); /* twice the loop, at least */
    for (int p = 1; p < 8; p++)
        CHECK_EQ_U(gap[p], 2 * gap[0]);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.tail_probes, 8);
    /* eight probes: the ninth credit waits for the loss timer */
    CHECK_EQ_U(arb_responder_next_expiry(r), sent + 10 * MS);
    arb_hdr h = mk_master(0, 7, 2, 1);
    h.attempt = 8;
    int32_t agg[4] = {1, 2, 3, 4};
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, sent + 5 * US);
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.committed, 8);
    arb_responder_free(r);
}

/* A window lost whole before the message's tail: no later credit commits,
 * so order shows nothing, and the loss timer (10 ms here) would stall the
 * channel. The newest credit still out is probed twice the loop after its
 * tree last committed; a probe's commit shows the rest of the window lost
 * by order. */
TEST(responder_probes_a_window_lost_whole)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    /* 16 offsets: 0-3 commit at 10 us, 4-7 at 20 us (credits 8-11 leave
     * then), and none of 8-11 is answered: the window is lost whole */
    arb_responder *r = probing_two(&cap, 16, 8);
    REQUIRE(r != NULL);
    int32_t agg[4] = {1, 2, 3, 4};
    REQUIRE_EQ_I(credit_attempt(&cap, 0, 11), 0);
    arb_time due = arb_responder_next_expiry(r);
    CHECK(due >= 40 * US);  /* twice the loop after the last commit, at least */
    CHECK(due <= 100 * US); /* not the loss timer */
    int from = cap.n;
    arb_responder_on_expiry(r, due);
    CHECK_EQ_I(credit_attempt(&cap, from, 11), 1); /* the newest, probed */
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK(st.tail_probes >= 1);
    CHECK_EQ_U(st.losses_timer, 0);
    /* the probes commit, and whatever of the window is still out is lost
     * by order: the window is credited again within loops, not 10 ms */
    for (uint32_t k = 8; k < 12; k++) {
        arb_hdr h = mk_master(0, k, 2, 1);
        h.attempt = (uint8_t)credit_attempt(&cap, from, k);
        if (credit_attempt(&cap, from, k) > 0)
            arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, due + 10 * US);
    }
    arb_time next = arb_responder_next_expiry(r);
    CHECK(next < due + MS);
    arb_responder_on_expiry(r, next);
    for (uint32_t k = 8; k < 12; k++)
        CHECK(credit_attempt(&cap, 0, k) >= 1);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.losses_timer, 0);
    arb_responder_free(r);
}

/* A message that lives in its first window: 2 offsets, a window of 4, both
 * credited at 0 before anything commits, on a responder of 2 members with
 * tail probes on, the adaptive timer and a floor of 10 us. It never gets a
 * warm sample, so RTO_INITIAL (1 ms) would be its only timer. */
static arb_responder *one_window_two(capture *cap)
{
    arb_responder_config c;
    rsp_cfg(&c, 2, cap);
    c.ep.window = 4;
    c.ep.tail_probe = 1;
    c.ep.timeout_min = 10 * US;
    arb_responder *r = NULL;
    if (arb_responder_new(&r, &c) != 0) return NULL;
    static int32_t own[8], res[8];
    memset(own, 0, sizeof own);
    if (arb_responder_start_message(r, 0, sizeof own, own, res, 0) != 0) {
        arb_responder_free(r);
        return NULL;
    }
    register_all(r, 2, 0, 0, 0);
    return r;
}

/* Before any sample, its newest credit is probed twice the floor after it
 * left (four unloaded loops), not after the 1 ms initial timer; the probe
 * is no timer loss. */
TEST(responder_one_window_probes_before_a_sample)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = one_window_two(&cap);
    REQUIRE(r != NULL);
    REQUIRE_EQ_I(credit_attempt(&cap, 0, 1), 0);
    CHECK_EQ_U(arb_responder_next_expiry(r), 20 * US);
    int from = cap.n;
    arb_responder_on_expiry(r, 20 * US);
    CHECK_EQ_I(credit_attempt(&cap, from, 1), 1);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK(st.tail_probes >= 1);
    CHECK_EQ_U(st.losses_timer, 0);
    /* the probe's own credit is probed in turn, twice as late */
    CHECK_EQ_U(arb_responder_next_expiry(r), 20 * US + 40 * US);
    arb_responder_free(r);
}

/* Once its first offset commits (a cold sample S of 50 us), the timer is
 * the cold estimate, max(S + 4 S/2, S + S/2) = 3 S, not 1 ms; the probe
 * waits twice the smaller of the cold srtt and the floor after the newest
 * credit left: 20 us. A message of more than one window keeps the 1 ms
 * initial timer after a cold sample (its next window queues behind every
 * channel's first). */
TEST(responder_one_window_cold_timer)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = one_window_two(&cap);
    REQUIRE(r != NULL);
    int32_t agg[4] = {1, 2, 3, 4};
    arb_hdr h = mk_master(0, 0, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 15 * US);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.rto, 45 * US);
    CHECK_EQ_U(arb_responder_next_expiry(r), 20 * US);
    arb_responder_free(r);

    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    c.ep.window = 4;
    c.ep.tail_probe = 1;
    c.ep.timeout_min = 10 * US;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    static int32_t own[32], res[32];
    memset(own, 0, sizeof own);
    REQUIRE_EQ_I(arb_responder_start_message(r, 0, sizeof own, own, res, 0), 0);
    register_all(r, 2, 0, 0, 0);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 15 * US);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.rto, 1 * MS);
    CHECK_EQ_U(st.tail_probes, 0);
    arb_responder_free(r);
}

/* Its END wait, before any END, is at least three of its slowest cold
 * loops after the last commit, not the floor: the tails queue behind every
 * other channel's on the members' links, as the requests did on the way
 * up, and a wait on the floor replayed every tail round after round. */
TEST(responder_one_window_end_wait)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder *r = one_window_two(&cap);
    REQUIRE(r != NULL);
    int32_t agg[4] = {1, 2, 3, 4};
    for (uint32_t k = 0; k < 2; k++) {
        arb_hdr h = mk_master(0, k, 2, 1);
        arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, (40 + 10 * k) * US);
    }
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    REQUIRE_EQ_I(pr.phase, ARB_RSP_DRAIN);
    /* cold samples of 40 and 50 us: the slowest 50 us */
    CHECK_EQ_U(arb_responder_next_expiry(r), 50 * US + 3 * 50 * US);
    arb_responder_stats st;
    arb_responder_on_expiry(r, 50 * US + 3 * 50 * US - 1);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.tail_replays, 0);
    /* one END: the rest is waited for by order, as before */
    arb_hdr e = mk_end(0, 0);
    arb_responder_recv(r, &e, NULL, 0, 0, 60 * US);
    CHECK(arb_responder_next_expiry(r) < 50 * US + 3 * 50 * US);
    arb_responder_free(r);
}

/* A message of one offset (a barrier here) is credited twice at once, as
 * attempts 0 and 1, with one credit in the window; either aggregate commits
 * it, the other is a duplicate, and neither is a loss. Its requester sends
 * its first REGISTER twice. Without `redundant`, once. */
TEST(one_offset_messages_go_twice)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    c.kind = ARB_EP_BARRIER;
    c.op = ARB_OP_NOP;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    CHECK_EQ_I(arb_responder_start_message(r, 0, 0, NULL, NULL, 0), 0);
    register_all(r, 2, 0, 0, 0);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 2);
    const cap_pkt *twin = cap_last(&cap, ARB_PT_RESPONSE);
    CHECK(twin != NULL);
    if (twin) {
        CHECK_EQ_U(twin->h.attempt, 1);
        CHECK_EQ_U(twin->h.offset_b, 0);
    }
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.outstanding, 1);
    arb_hdr m = mk_master(0, 0, 2, 0);
    m.op = ARB_OP_NOP;
    arb_responder_recv(r, &m, NULL, 0, ARB_EP_FROM_SWITCH, 5 * US); /* attempt 0 first */
    m.attempt = 1;
    arb_responder_recv(r, &m, NULL, 0, ARB_EP_FROM_SWITCH, 6 * US);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.twins, 1);
    CHECK_EQ_U(st.retries, 0);
    CHECK_EQ_U(st.commits, 1);
    CHECK_EQ_U(st.stale, 1); /* the barrier closed at the first: the twin's is stale */
    CHECK_EQ_U(st.losses_order + st.losses_timer + st.spurious, 0);
    CHECK(arb_responder_done(r));
    arb_responder_free(r);
    /* a message of two offsets is credited once each */
    memset(&cap, 0, sizeof cap);
    rsp_cfg(&c, 2, &cap);
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    static int32_t res[8];
    CHECK_EQ_I(arb_responder_start_message(r, 0, sizeof res, NULL, res, 0), 0);
    register_all(r, 2, 0, 0, 0);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 2);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.twins, 0);
    arb_responder_free(r);
    /* the requester of a one-offset message: its first REGISTER twice */
    for (int red = 0; red < 2; red++) {
        memset(&cap, 0, sizeof cap);
        arb_requester_config qc;
        req_cfg(&qc, 0, &cap);
        qc.redundant = red;
        arb_requester *q = NULL;
        REQUIRE_EQ_I(arb_requester_new(&q, &qc), 0);
        int32_t in[4] = {0}, out[4];
        CHECK_EQ_I(arb_requester_start_message(q, 0, 16, in, out, 0), 0);
        CHECK_EQ_I(cap_count(&cap, ARB_PT_REGISTER, -1), red ? 2 : 1);
        arb_requester_free(q);
    }
}

int main(void)
{
    RUN(one_offset_messages_go_twice);
    RUN(responder_tail_probes_back_off);
    RUN(responder_one_window_probes_before_a_sample);
    RUN(responder_one_window_cold_timer);
    RUN(responder_one_window_end_wait);
    RUN(responder_probes_a_window_lost_whole);
    RUN(responder_end_rounds_by_order);
    RUN(responder_end_rounds_fail_on_silence_only);
    RUN(responder_end_first_round_after_a_loop);
    return testkit_done();
}
