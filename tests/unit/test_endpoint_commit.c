/*
 * Unit tests of the endpoint engines, hand-made (epkit.h): credits, commits
 * and results. The responder's commits with the results that ride credits
 * and the tails, END and the tail replay; the requester's answers to
 * credits of every kind and attempt, its results, and what
 * arb_requester_recv_trusted reports.
 */
#include "arbor/endpoint.h"
#include "endpoint/ep_trusted.h"

#include "testkit.h"
#include "epkit.h"

/* Pull-result with R = 2, window 2, 4 packets: the whole table of rides
 * (the original recovery: offset 0 committing after 1 is not a loss). */
TEST(responder_commit_rides_tails)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    seed_recovery(&c);
    c.ep.window = 2;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    int32_t own[16], res[16];
    for (int e = 0; e < 16; e++)
        own[e] = 100 * e;
    CHECK_EQ_I(arb_responder_start_message(r, 0, 64, own, res, 0), 0);
    register_all(r, 2, 0, 0, 0);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 2);
    const cap_pkt *c1 = cap_last(&cap, ARB_PT_RESPONSE);
    CHECK_EQ_U(c1->h.payload_valid, 0); /* nothing to ride yet */
    CHECK_EQ_U(c1->h.payload_kind, ARB_PK_DATA);
    CHECK_EQ_U(c1->h.credit_valid, 1);
    int32_t agg[4] = {1, 2, 3, 4};
    /* a master with the wrong count is dropped */
    arb_hdr h = mk_master(0, 1, 1, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
    /* with the wrong length */
    h = mk_master(0, 1, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 8, ARB_EP_FROM_SWITCH, 10);
    /* with agg_depth > 0 */
    arb_hdr deep = mk_master(0, 1, 2, 1);
    deep.agg_depth = 1;
    deep.fanin[0] = 2;
    arb_responder_recv(r, &deep, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
    /* an offset never credited */
    h = mk_master(0, 3, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.count_mismatch, 1);
    CHECK_EQ_U(st.bad_length, 1);
    CHECK_EQ_U(st.unexpected, 1);
    CHECK_EQ_U(st.stale, 1);
    CHECK_EQ_U(st.commits, 0);
    /* offset 1 commits first (out of order): the next credit carries it */
    cap.n = 0;
    h = mk_master(0, 1, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(cap.p[0].h.offset_b, 2);
    CHECK_EQ_U(cap.p[0].h.offset_a, 1);
    CHECK_EQ_U(cap.p[0].h.payload_valid, 1);
    CHECK_EQ_U(cap.p[0].len, 16);
    int32_t got[4];
    memcpy(got, cap.p[0].data, 16);
    CHECK_EQ_I(got[0], 1 + 400);
    CHECK_EQ_I(got[3], 4 + 700);
    CHECK_EQ_I(res[4], 401);
    /* a duplicate master: counted, nothing sent */
    cap.n = 0;
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 11);
    CHECK_EQ_I(cap.n, 0);
    /* offset 0 commits: credit 3 carries result 0 */
    h = mk_master(0, 0, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 12);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(cap.p[0].h.offset_b, 3);
    CHECK_EQ_U(cap.p[0].h.offset_a, 0);
    /* 2 and 3 commit: no credit left, results 2 and 3 are tails */
    cap.n = 0;
    h = mk_master(0, 3, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 13);
    h = mk_master(0, 2, 2, 1);
    arb_responder_recv(r, &h, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 14);
    CHECK_EQ_I(cap.n, 2);
    CHECK_EQ_U(cap.p[0].h.credit_valid, 0);
    CHECK_EQ_U(cap.p[0].h.offset_a, 3);
    CHECK_EQ_U(cap.p[0].h.offset_b, 0);
    CHECK_EQ_U(cap.p[1].h.offset_a, 2);
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.phase, ARB_RSP_DRAIN);
    CHECK_EQ_U(pr.committed, 4);
    /* END from a non-member, then from both members */
    cap.n = 0;
    arb_hdr e = mk_end(0, 0);
    arb_responder_recv(r, &e, NULL, 0, ARB_EP_NOT_MEMBER, 15);
    CHECK_EQ_I(cap.n, 0);
    /* END wait expires with both members missing: each of the two tails is
     * replayed once down the tree (a tail lost above both), not once a
     * member */
    CHECK_EQ_U(arb_responder_next_expiry(r), 14 + 50 * MS);
    arb_responder_on_expiry(r, 14 + 50 * MS);
    CHECK_EQ_I(cap.n, 2);
    CHECK_EQ_U(cap.p[0].h.repair, 1);
    CHECK_EQ_U(cap.p[0].h.payload_kind, ARB_PK_REPLAY);
    CHECK_EQ_U(cap.p[0].dst.kind, ARB_EP_DST_GROUP);
    CHECK_EQ_U(cap.p[1].dst.kind, ARB_EP_DST_GROUP);
    cap.n = 0;
    arb_responder_recv(r, &e, NULL, 0, 0, 20 + 50 * MS);
    CHECK_EQ_U(cap.p[0].h.packet_type, ARB_PT_END_ACK);
    /* the timer (fixed here, order detection off) 50 ms after the replay */
    arb_time due = arb_responder_next_expiry(r);
    CHECK_EQ_U(due, 14 + 100 * MS);
    arb_responder_on_expiry(r, due); /* only member 1 is missing now: to it alone */
    CHECK_EQ_I(cap.n, 3);
    CHECK_EQ_U(cap.p[1].dst.kind, ARB_EP_DST_MEMBER);
    CHECK_EQ_U(cap.p[1].dst.member, 1);
    CHECK_EQ_U(cap.p[2].dst.member, 1);
    arb_responder_recv(r, &e, NULL, 0, 1, due + 1);
    CHECK(arb_responder_done(r));
    CHECK_EQ_U(arb_responder_closed(r), 1);
    /* a late END of the closed message is ACKed again */
    cap.n = 0;
    arb_responder_recv(r, &e, NULL, 0, 1, 22 + 100 * MS);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(cap.p[0].h.packet_type, ARB_PT_END_ACK);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.not_member, 1);
    CHECK_EQ_U(st.dup_masters, 1);
    CHECK_EQ_U(st.tails, 2);
    CHECK_EQ_U(st.tail_replays, 4);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

/* arb_requester_recv_trusted (the simulator's entry): 1 when phases or retry
 * timers may have moved, 0 when only results and answers changed. */
TEST(requester_trusted_reports_moves)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_requester_config c;
    req_cfg(&c, 0, &cap);
    c.ep.header_only = 1;
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    CHECK_EQ_I(arb_requester_start_message(q, 0, 32, NULL, NULL, 0), 0); /* 2 packets */
    arb_hdr c0 = mk_credit(0, 0);
    arb_time retry = arb_requester_next_expiry(q);
    CHECK(retry != ARB_TIME_NEVER);
    /* the first credit moves the phase, but may have come before the
     * registration: the REGISTER is still retried */
    CHECK_EQ_I(arb_requester_recv_trusted(q, &c0, NULL, 0, 0, 1), 1);
    CHECK_EQ_U(arb_requester_next_expiry(q), retry);
    arb_hdr c1 = mk_credit(0, 1);
    c1.offset_a = 0;
    c1.payload_kind = ARB_PK_COMPLETION; /* result 0 rides credit 1 */
    /* a later credit (with a result) comes after registration: no retry */
    CHECK_EQ_I(arb_requester_recv_trusted(q, &c1, NULL, 0, 0, 2), 1);
    CHECK_EQ_U(arb_requester_next_expiry(q), ARB_TIME_NEVER);
    CHECK_EQ_I(arb_requester_recv_trusted(q, &c1, NULL, 0, 0, 2), 0); /* a copy: answered */
    arb_hdr tail = mk(ARB_PT_RESPONSE, 0, 1, 0);
    tail.op = ARB_OP_SUM;
    tail.payload_kind = ARB_PK_COMPLETION;
    CHECK_EQ_I(arb_requester_recv_trusted(q, &tail, NULL, 0, 0, 3), 1); /* all in: END */
    CHECK_EQ_U(cap_count(&cap, ARB_PT_END, 0), 1);
    CHECK(arb_requester_next_expiry(q) != ARB_TIME_NEVER);
    arb_hdr ack = mk(ARB_PT_END_ACK, 0, 0, 0);
    CHECK_EQ_I(arb_requester_recv_trusted(q, &ack, NULL, 0, 0, 4), 1);
    CHECK_EQ_I(arb_requester_done(q), 1);
    arb_requester_stats st;
    arb_requester_get_stats(q, &st);
    CHECK_EQ_U(st.results, 2);
    CHECK_EQ_U(st.requests, 3);
    CHECK_EQ_U(st.dup_results, 1);
    CHECK_EQ_U(st.dup_credits, 1);
    arb_requester_free(q);
}

TEST(requester_credits_and_results)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    static const uint8_t fan[6] = {5, 2, 1, 7, 3, 2};
    arb_requester_config c;
    req_cfg(&c, 2, &cap);
    c.fanin = fan;
    c.subchannels = 2;
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    int32_t in[12], out[12] = {0};
    for (int e = 0; e < 12; e++)
        in[e] = e + 1;
    CHECK_EQ_I(arb_requester_start_message(q, 0, 48, in, out, 0), 0); /* 3 packets */
    CHECK_EQ_I(arb_requester_start_message(q, 1, 48, in, out, 0), ARB_ESTATE);
    arb_hdr ack = mk(ARB_PT_REGISTER_ACK, 0, 0, 0);
    ack.repair = 1;
    CHECK_EQ_I(arb_requester_recv(q, &ack, NULL, 0, 0, 1), 0);
    CHECK_EQ_U(arb_requester_next_expiry(q), ARB_TIME_NEVER);
    arb_requester_recv(q, &ack, NULL, 0, 0, 1); /* a duplicate ack is stale */
    /* credit 1 on subchannel 1 through a two-tier tree */
    cap.n = 0;
    arb_hdr cr = mk_credit(0, 1);
    cr.ext = 1;
    cr.agg_depth = 2;
    cr.agg_loc[0] = 0x1234;
    cr.agg_loc[1] = 0x0042;
    arb_requester_recv(q, &cr, NULL, 0, 1, 2);
    CHECK_EQ_I(cap.n, 1);
    const cap_pkt *rq = &cap.p[0];
    CHECK_EQ_U(rq->h.packet_type, ARB_PT_DATA_REQUEST);
    CHECK_EQ_U(rq->h.repair, 0);
    CHECK_EQ_U(rq->h.offset_a, 1);
    CHECK_EQ_U(rq->h.offset_b, 1);
    CHECK_EQ_U(rq->h.agg_depth, 2);
    CHECK_EQ_U(rq->h.ext, 1);
    CHECK_EQ_U(rq->h.agg_loc[0], 0x1234);
    CHECK_EQ_U(rq->h.agg_loc[1], 0x0042);
    CHECK_EQ_U(rq->h.fanin[0], 7);
    CHECK_EQ_U(rq->h.fanin[1], 3);
    CHECK_EQ_U(rq->dst.subchannel, 1);
    CHECK_EQ_U(rq->len, 16);
    CHECK(memcmp(rq->data, in + 4, 16) == 0);
    /* the same credit again (a switch asks again where the answer is
     * missing): the same request again */
    arb_requester_recv(q, &cr, NULL, 0, 1, 3);
    REQUIRE_EQ_I(cap.n, 2);
    CHECK(memcmp(&cap.p[1].h, &rq->h, sizeof rq->h) == 0);
    CHECK(memcmp(cap.p[1].data, in + 4, 16) == 0);
    /* a credit of another message, and one past the message */
    arb_hdr st1 = mk_credit(9, 0);
    arb_requester_recv(q, &st1, NULL, 0, 0, 3);
    arb_hdr st2 = mk_credit(0, 3);
    arb_requester_recv(q, &st2, NULL, 0, 0, 3);
    CHECK_EQ_I(cap.n, 2);
    /* credit 0 carries result 1 */
    int32_t r1[4] = {-1, -2, -3, -4};
    arb_hdr c0 = mk_credit(0, 0);
    c0.offset_a = 1;
    c0.payload_valid = 1;
    arb_requester_recv(q, &c0, (uint8_t *)r1, 16, 0, 4);
    CHECK_EQ_I(out[4], -1);
    CHECK_EQ_I(out[7], -4);
    CHECK_EQ_U(cap.p[2].h.fanin[0], 5);
    /* a result of the wrong length is refused */
    arb_hdr t2 = mk(ARB_PT_RESPONSE, 0, 2, 0);
    t2.op = ARB_OP_SUM;
    t2.payload_valid = 1;
    arb_requester_recv(q, &t2, (uint8_t *)r1, 8, 0, 5);
    CHECK_EQ_I(out[8], 0);
    /* a repair credit for 2 replaying result 1: answered, every time */
    cap.n = 0;
    arb_hdr rc = mk_credit(0, 2);
    rc.repair = 1;
    rc.offset_a = 1;
    rc.payload_valid = 1;
    rc.payload_kind = ARB_PK_REPLAY;
    arb_requester_recv(q, &rc, (uint8_t *)r1, 16, 0, 6);
    arb_requester_recv(q, &rc, (uint8_t *)r1, 16, 0, 7);
    CHECK_EQ_I(cap.n, 2);
    CHECK_EQ_U(cap.p[0].h.repair, 1);
    CHECK_EQ_U(cap.p[0].h.agg_depth, 0);
    CHECK_EQ_U(cap.p[0].h.offset_b, 1);
    CHECK_EQ_U(cap.p[0].h.offset_a, 2);
    CHECK(memcmp(cap.p[0].data, in + 8, 16) == 0);
    /* the normal credit for 2 arriving late: answered as every copy is (the
     * responder has the offset in the bypass and passes it over) */
    arb_hdr c2 = mk_credit(0, 2);
    arb_requester_recv(q, &c2, NULL, 0, 0, 8);
    CHECK_EQ_I(cap.n, 3);
    /* tails 0 and 2: every result in, END goes out */
    int32_t r0[4] = {5, 6, 7, 8}, r2[4] = {9, 10, 11, 12};
    arb_hdr t0 = mk(ARB_PT_RESPONSE, 0, 0, 0);
    t0.op = ARB_OP_SUM;
    t0.payload_valid = 1;
    arb_requester_recv(q, &t0, (uint8_t *)r0, 16, 0, 9);
    arb_requester_progress qp;
    arb_requester_get_progress(q, &qp);
    CHECK_EQ_U(qp.results, 2);
    CHECK(!qp.complete);
    arb_requester_recv(q, &t2, (uint8_t *)r2, 16, 0, 10);
    CHECK_EQ_I(out[11], 12);
    const cap_pkt *end = cap_last(&cap, ARB_PT_END);
    REQUIRE(end != NULL);
    CHECK_EQ_U(end->h.offset_a, 0);
    arb_requester_get_progress(q, &qp);
    CHECK_EQ_U(qp.phase, ARB_REQ_END);
    CHECK(qp.complete);
    /* a replayed tail it already has: its result ignored, and the END said
     * again at once (the replay says the responder has not heard it) */
    arb_hdr tr = t0;
    tr.repair = 1;
    tr.payload_kind = ARB_PK_REPLAY;
    int before = cap.n;
    arb_requester_recv(q, &tr, (uint8_t *)r2, 16, 0, 11);
    CHECK_EQ_I(out[0], 5);
    CHECK_EQ_I(cap.n, before + 1);
    CHECK_EQ_U(cap.p[cap.n - 1].h.packet_type, ARB_PT_END);
    /* the next message may start now; the END keeps its retry */
    CHECK_EQ_I(arb_requester_start_message(q, 1, 16, in, out, 12), 0);
    CHECK(!arb_requester_done(q));
    CHECK_EQ_U(arb_requester_next_expiry(q), 10 + c.ep.retry_min);
    arb_requester_on_expiry(q, 10 + c.ep.retry_min);
    CHECK_EQ_U(cap_last(&cap, ARB_PT_END)->h.message_id, 0);
    arb_hdr ea = mk(ARB_PT_END_ACK, 0, 0, 0);
    arb_requester_recv(q, &ea, NULL, 0, 0, 13);
    arb_requester_recv(q, &ea, NULL, 0, 0, 13); /* duplicate: stale */
    arb_requester_stats s;
    arb_requester_get_stats(q, &s);
    CHECK_EQ_U(s.requests, 4);
    CHECK_EQ_U(s.repair_requests, 2);
    CHECK_EQ_U(s.dup_credits, 2);
    CHECK_EQ_U(s.results, 3);
    CHECK_EQ_U(s.dup_results, 3);
    CHECK_EQ_U(s.bad, 1);
    CHECK_EQ_U(s.stale, 4);
    CHECK_EQ_U(s.ends, 3);
    CHECK_EQ_U(s.end_answers, 1);
    CHECK_EQ_I(cap.invalid, 0);
    arb_requester_free(q);
}

/* Every copy of a credit is answered, with the same contribution: a
 * duplicate of attempt 0 (a switch's re-credit where the answer is
 * missing) and each attempt a >= 1, echoing its attempt and its own
 * location stack. */
TEST(requester_answers_each_attempt)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_requester_config c;
    req_cfg(&c, 0, &cap);
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    int32_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
    CHECK_EQ_I(arb_requester_start_message(q, 0, 32, in, out, 0), 0); /* 2 packets */
    cap.n = 0;
    arb_hdr c0 = mk_credit(0, 1);
    c0.agg_depth = 1;
    c0.agg_loc[0] = 7;
    arb_requester_recv(q, &c0, NULL, 0, 0, 1);
    arb_requester_recv(q, &c0, NULL, 0, 0, 2); /* a copy of attempt 0: answered again */
    arb_hdr c1 = c0;
    c1.attempt = 1;
    c1.agg_loc[0] = 9;
    arb_requester_recv(q, &c1, NULL, 0, 0, 3);
    arb_requester_recv(q, &c1, NULL, 0, 0, 4); /* attempt 1 again: answered again */
    REQUIRE_EQ_I(cap.n, 4);
    CHECK_EQ_U(cap.p[0].h.attempt, 0);
    CHECK_EQ_U(cap.p[0].h.agg_loc[0], 7);
    CHECK_EQ_U(cap.p[1].h.attempt, 0);
    CHECK_EQ_U(cap.p[1].h.agg_loc[0], 7);
    CHECK(memcmp(cap.p[1].data, in + 4, 16) == 0); /* the same contribution */
    CHECK_EQ_U(cap.p[2].h.attempt, 1);
    CHECK_EQ_U(cap.p[2].h.agg_loc[0], 9);
    CHECK(memcmp(cap.p[2].data, in + 4, 16) == 0);
    CHECK_EQ_U(cap.p[3].h.attempt, 1);
    /* a repair credit's answer carries no attempt */
    arb_hdr rc = mk_credit(0, 1);
    rc.repair = 1;
    arb_requester_recv(q, &rc, NULL, 0, 0, 5);
    CHECK_EQ_U(cap.p[4].h.repair, 1);
    CHECK_EQ_U(cap.p[4].h.attempt, 0);
    arb_requester_stats st;
    arb_requester_get_stats(q, &st);
    CHECK_EQ_U(st.requests, 4);
    CHECK_EQ_U(st.retry_answers, 2);
    CHECK_EQ_U(st.dup_credits, 3);
    arb_requester_progress qp;
    arb_requester_get_progress(q, &qp);
    CHECK_EQ_U(qp.answered, 1); /* one offset answered */
    CHECK_EQ_I(cap.invalid, 0);
    arb_requester_free(q);
}

int main(void)
{
    RUN(requester_answers_each_attempt);
    RUN(responder_commit_rides_tails);
    RUN(requester_credits_and_results);
    RUN(requester_trusted_reports_moves);
    return testkit_done();
}
