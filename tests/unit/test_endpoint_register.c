/*
 * Unit tests of the endpoint engines, hand-made (epkit.h): the
 * configuration errors of both engines, and registration: the responder's
 * REGISTERs (acknowledged, remembered, refused), early credits and what
 * commits before registration is complete, a requester holding an early
 * credit, and the requester's REGISTER retries and failure.
 */
#include "arbor/endpoint.h"

#include "testkit.h"
#include "epkit.h"

TEST(responder_config_errors)
{
    capture cap;
    arb_responder_config c;
    arb_responder *r = NULL;
    rsp_cfg(&c, 3, &cap);
    REQUIRE_EQ_I(arb_responder_new(NULL, &c), ARB_EINVAL);
    REQUIRE_EQ_I(arb_responder_new(&r, NULL), ARB_EINVAL);
    c.members = 0;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    c.members = 257;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    c.ep.payload = 18; /* not whole i32 */
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    c.send = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    c.op = ARB_OP_NOP; /* pull needs an operator */
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    c.ep.timeout = 0;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    c.subchannels = 0;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), ARB_EINVAL);
    rsp_cfg(&c, 3, &cap);
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    CHECK_EQ_I(arb_responder_start_message(r, 1, 16, NULL, NULL, 0), ARB_EINVAL); /* id */
    CHECK_EQ_I(arb_responder_start_message(r, 0, 15, NULL, NULL, 0), ARB_EINVAL); /* elems */
    CHECK_EQ_I(arb_responder_start_message(r, 0, 16, NULL, NULL, 0), ARB_EINVAL); /* no buf */
    int32_t buf[8];
    CHECK_EQ_I(arb_responder_start_message(r, 0, 16, NULL, buf, 0), 0);
    CHECK_EQ_I(arb_responder_start_message(r, 1, 16, NULL, buf, 0), 0); /* one ahead */
    CHECK_EQ_I(arb_responder_start_message(r, 2, 16, NULL, buf, 0), ARB_ESTATE);
    arb_hdr h = mk_register(0, 0);
    CHECK_EQ_I(arb_responder_recv(NULL, &h, NULL, 0, 0, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_responder_recv(r, NULL, NULL, 0, 0, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_responder_recv(r, &h, NULL, 4, 0, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_responder_on_expiry(NULL, 0), ARB_EINVAL);
    CHECK_STR(arb_ep_kind_name(ARB_EP_PUSH), "push");
    CHECK(arb_ep_kind_name(9) == NULL);
    arb_responder_free(r);
    arb_responder_free(NULL);
}

TEST(registration)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 3, &cap);
    c.first_seq = 100;
    c.ep.early = 1;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    /* REGISTERs before the local call are acknowledged and remembered */
    arb_hdr h = mk_register(0, 100);
    arb_responder_recv(r, &h, NULL, 0, 0, 0);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(cap.p[0].h.packet_type, ARB_PT_REGISTER_ACK);
    CHECK_EQ_U(cap.p[0].dst.kind, ARB_EP_DST_MEMBER);
    CHECK_EQ_U(cap.p[0].dst.member, 0);
    CHECK_EQ_U(cap.p[0].h.offset_a, 100);
    arb_responder_recv(r, &h, NULL, 0, 0, 0); /* a retry: ACKed again, counted once */
    CHECK_EQ_I(cap.n, 2);
    /* a non-member: dropped and counted, no ack */
    arb_responder_recv(r, &h, NULL, 0, ARB_EP_NOT_MEMBER, 0);
    arb_responder_recv(r, &h, NULL, 0, 3, 0);
    arb_responder_recv(r, &h, NULL, 0, ARB_EP_FROM_SWITCH, 0);
    CHECK_EQ_I(cap.n, 2);
    /* a REGISTER that disagrees on start_seq: dropped, no ack */
    arb_hdr bad = mk_register(0, 101);
    arb_responder_recv(r, &bad, NULL, 0, 1, 0);
    bad = mk_register(7, 100); /* a message that is not expected */
    arb_responder_recv(r, &bad, NULL, 0, 1, 0);
    CHECK_EQ_I(cap.n, 2);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.not_member, 3);
    CHECK_EQ_U(st.bad_registers, 2);
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.registered, 1);
    CHECK_EQ_U(pr.phase, ARB_RSP_IDLE);
    int32_t buf[8];
    CHECK_EQ_I(arb_responder_start_message(r, 0, 32, NULL, buf, 0), 0);
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.phase, ARB_RSP_REGISTER);
    /* a message of two offsets: nothing before registration, early
     * credits or not (ep.early credits a message of one offset) */
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), 0);
    /* message 1 may register ahead once message 0 is started locally */
    h = mk_register(1, 102);
    arb_responder_recv(r, &h, NULL, 0, 2, 0);
    CHECK_EQ_U(cap_last(&cap, ARB_PT_REGISTER_ACK)->h.message_id, 1);
    h = mk_register(0, 100);
    arb_responder_recv(r, &h, NULL, 0, 1, 0);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), 0);
    CHECK_EQ_U(arb_responder_next_expiry(r), ARB_TIME_NEVER);
    arb_responder_recv(r, &h, NULL, 0, 2, 5);
    /* complete: two credits (two packets) go out */
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 2);
    const cap_pkt *cr = cap_last(&cap, ARB_PT_RESPONSE);
    CHECK_EQ_U(cr->h.offset_b, 101);
    CHECK_EQ_U(cr->dst.kind, ARB_EP_DST_GROUP);
    CHECK(arb_responder_next_expiry(r) != ARB_TIME_NEVER);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.early, 0);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

/* Without early credits (ep.early = 0) no credit goes out before every
 * member has registered; with them, a pull message's first offset (and
 * its twin) does, but nothing of it commits before registration: an
 * aggregate that comes first is dropped and counted, and the offset is
 * credited again by its timer once registration is complete. */
TEST(responder_early_credit_commits_after_registration)
{
    for (int early = 0; early <= 1; early++) {
        static capture cap;
        memset(&cap, 0, sizeof cap);
        arb_responder_config c;
        rsp_cfg(&c, 2, &cap);
        c.ep.early = early;
        arb_responder *r = NULL;
        REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
        int32_t own[4] = {1, 2, 3, 4}, res[4] = {0};
        CHECK_EQ_I(arb_responder_start_message(r, 0, 16, own, res, 0), 0); /* one offset */
        /* one offset: the credit and its twin, or nothing */
        CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), early ? 2 : 0);
        int32_t agg[4] = {10, 20, 30, 40};
        arb_hdr m = mk_master(0, 0, 2, 1);
        arb_responder_recv(r, &m, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
        arb_responder_stats st;
        arb_responder_get_stats(r, &st);
        CHECK_EQ_U(st.commits, 0);
        CHECK_EQ_U(st.early_masters, (uint64_t)early);
        register_all(r, 2, 0, 0, 20);
        CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), 2); /* early: no new credit */
        /* the timer runs from registration, not from the early credit */
        arb_time t = arb_responder_next_expiry(r);
        CHECK(t != ARB_TIME_NEVER && t > 20);
        /* the aggregate of the attempt in flight now commits */
        m = mk_master(0, 0, 2, 1);
        arb_responder_recv(r, &m, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 30);
        arb_responder_get_stats(r, &st);
        CHECK_EQ_U(st.commits, 1);
        CHECK_EQ_I(res[0], 11);
        CHECK_EQ_I(res[3], 44);
        /* an early credit's loop includes the members' late start: no sample */
        CHECK_EQ_U(st.samples, early ? 0u : 1u);
        CHECK_EQ_U(st.early, (uint64_t)early);
        CHECK_EQ_I(cap.invalid, 0);
        arb_responder_free(r);
    }
}

/* Seeded credits (ep.seed; docs/protocol.md section 5): a one-offset
 * AllReduce is credited (and twinned) with the responder's own input; a
 * seeded aggregate is the whole result (nothing added), committed without
 * a tail of the responder's; one that comes before registration is kept
 * and commits once registration completes, an END completing it in place
 * of a lost REGISTER; a seeded message's END is acknowledged only after
 * the commit. Without ep.seed: bare credits, and the responder's input
 * added at commit. */
TEST(responder_seeded_credit)
{
    for (int seed = 0; seed <= 1; seed++) {
        static capture cap;
        memset(&cap, 0, sizeof cap);
        arb_responder_config c;
        rsp_cfg(&c, 2, &cap);
        c.ep.early = 1;
        c.ep.seed = seed;
        arb_responder *r = NULL;
        REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
        int32_t own[4] = {1, 2, 3, 4}, res[4] = {0};
        CHECK_EQ_I(arb_responder_start_message(r, 0, 16, own, res, 0), 0);
        REQUIRE_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), 2); /* the credit and its twin */
        for (int x = 0; x < 2; x++) {
            const cap_pkt *k = &cap.p[x];
            CHECK_EQ_U(k->h.credit_valid, 1);
            CHECK_EQ_U(k->h.payload_kind, seed ? ARB_PK_SEED : ARB_PK_DATA);
            CHECK_EQ_U(k->len, seed ? 16u : 0u);
            CHECK(!seed || memcmp(k->data, own, 16) == 0);
            CHECK_EQ_U(k->h.offset_a, k->h.offset_b);
        }
        int32_t agg[4] = {10, 20, 30, 40};
        arb_hdr m = mk_master(0, 0, 2, 1);
        if (seed) m.payload_kind = ARB_PK_SEED;
        arb_responder_recv(r, &m, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 10);
        agg[0] = -1; /* kept by value */
        arb_responder_stats st;
        arb_responder_get_stats(r, &st);
        CHECK_EQ_U(st.commits, 0);
        CHECK_EQ_U(st.held_masters, (uint64_t)seed);
        CHECK_EQ_U(st.early_masters, (uint64_t)!seed);
        /* member 0's END before its REGISTER: a registration where seeded,
         * acknowledged by neither */
        arb_hdr e0 = mk_end(0, 0);
        arb_responder_recv(r, &e0, NULL, 0, 0, 15);
        CHECK_EQ_I(cap_count(&cap, ARB_PT_END_ACK, -1), 0);
        arb_hdr g1 = mk_register(0, 0);
        arb_responder_recv(r, &g1, NULL, 0, 1, 20);
        arb_responder_get_stats(r, &st);
        CHECK_EQ_U(st.end_registers, (uint64_t)seed);
        CHECK_EQ_U(st.commits, (uint64_t)seed); /* the kept one commits at registration */
        CHECK_EQ_U(st.seeded_commits, (uint64_t)seed);
        if (seed) {
            CHECK_EQ_I(res[0], 10); /* the whole result: nothing added */
            CHECK_EQ_I(res[3], 40);
            CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), 2); /* no tail of its own */
            arb_responder_recv(r, &e0, NULL, 0, 0, 30);          /* END again: acknowledged */
            CHECK_EQ_I(cap_count(&cap, ARB_PT_END_ACK, -1), 1);
        } else {
            arb_hdr g0 = mk_register(0, 0);
            arb_responder_recv(r, &g0, NULL, 0, 0, 20);
            /* a whole result of a message it did not seed: refused, counted */
            m = mk_master(0, 0, 2, 1);
            m.payload_kind = ARB_PK_SEED;
            arb_responder_recv(r, &m, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 25);
            arb_responder_get_stats(r, &st);
            CHECK_EQ_U(st.commits, 0);
            CHECK_EQ_U(st.unexpected, 1);
            m = mk_master(0, 0, 2, 1);
            agg[0] = 10;
            arb_responder_recv(r, &m, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 30);
            arb_responder_get_stats(r, &st);
            CHECK_EQ_U(st.commits, 1);
            CHECK_EQ_I(res[0], 11); /* its own input added */
            CHECK_EQ_I(res[3], 44);
            CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, -1), 3); /* its tail */
        }
        CHECK_EQ_I(cap.invalid, 0);
        arb_responder_free(r);
    }
}

/* A seeded message's END that comes before the commit (the member has
 * its result from the switch, the responder's aggregate is late or lost)
 * is counted but not acknowledged: the member keeps answering the
 * offset's credits until the commit. */
TEST(responder_acks_a_seeded_end_after_commit)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_responder_config c;
    rsp_cfg(&c, 2, &cap);
    c.ep.early = 1;
    c.ep.seed = 1;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    int32_t own[4] = {1, 2, 3, 4}, res[4] = {0};
    CHECK_EQ_I(arb_responder_start_message(r, 0, 16, own, res, 0), 0);
    register_all(r, 2, 0, 0, 5);
    arb_hdr e0 = mk_end(0, 0);
    arb_responder_recv(r, &e0, NULL, 0, 0, 10);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_END_ACK, -1), 0);
    int32_t agg[4] = {5, 6, 7, 8};
    arb_hdr m = mk_master(0, 0, 2, 1);
    m.payload_kind = ARB_PK_SEED;
    arb_responder_recv(r, &m, (uint8_t *)agg, 16, ARB_EP_FROM_SWITCH, 20);
    CHECK_EQ_I(res[2], 7);
    arb_responder_recv(r, &e0, NULL, 0, 0, 30);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_END_ACK, -1), 1);
    arb_hdr e1 = mk_end(0, 0);
    arb_responder_recv(r, &e1, NULL, 0, 1, 31);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_END_ACK, -1), 2);
    CHECK_EQ_I(arb_responder_done(r), 1);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
}

/* A requester of a seeded message: a credit that still carries its seed
 * (no switch kept it) is a bare credit, never a result; once its result is
 * in (from the switch, before the responder committed), a credit sent
 * again is answered from the input it kept, whatever the caller did to
 * its buffer since. Without ep.seed such a copy is late and unanswered. */
TEST(requester_answers_a_seeded_message_until_acknowledged)
{
    for (int seed = 0; seed <= 1; seed++) {
        static capture cap;
        memset(&cap, 0, sizeof cap);
        arb_requester_config c;
        req_cfg(&c, 0, &cap);
        c.ep.seed = seed;
        arb_requester *q = NULL;
        REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
        int32_t in[4] = {1, 2, 3, 4}, out[4] = {0};
        CHECK_EQ_I(arb_requester_start_message(q, 0, 16, in, out, 0), 0);
        int32_t seedv[4] = {9, 9, 9, 9};
        arb_hdr k0 = mk_credit(0, 0);
        k0.payload_valid = 1, k0.payload_kind = ARB_PK_SEED;
        CHECK_EQ_I(arb_requester_recv(q, &k0, (uint8_t *)seedv, 16, 0, 1), 0);
        CHECK_EQ_I(out[0], 0); /* no result */
        int reqs = cap_count(&cap, ARB_PT_DATA_REQUEST, 0);
        CHECK_EQ_I(reqs, 1);
        CHECK(memcmp(cap_last(&cap, ARB_PT_DATA_REQUEST)->data, in, 16) == 0);
        in[0] = in[1] = in[2] = in[3] = -7; /* the call returns: the buffer is the caller's */
        int32_t sum[4] = {11, 12, 13, 14};
        arb_hdr tail = mk(ARB_PT_RESPONSE, 0, 0, 0);
        tail.op = ARB_OP_SUM;
        tail.payload_valid = 1;
        CHECK_EQ_I(arb_requester_recv(q, &tail, (uint8_t *)sum, 16, 0, 2), 0);
        CHECK_EQ_I(out[3], 14);
        CHECK_EQ_I(cap_count(&cap, ARB_PT_END, -1) > 0, 1);
        arb_hdr k2 = mk_credit(0, 0);
        k2.attempt = 2;
        CHECK_EQ_I(arb_requester_recv(q, &k2, NULL, 0, 0, 3), 0);
        CHECK_EQ_I(cap_count(&cap, ARB_PT_DATA_REQUEST, 0), reqs + seed);
        if (seed) {
            const cap_pkt *a = cap_last(&cap, ARB_PT_DATA_REQUEST);
            int32_t kept[4];
            memcpy(kept, a->data, 16);
            CHECK_EQ_I(kept[0], 1);
            CHECK_EQ_I(kept[3], 4);
            CHECK_EQ_U(a->h.attempt, 2);
        }
        CHECK_EQ_I(cap.invalid, 0);
        arb_requester_free(q);
    }
}

/* A credit of a message not started yet (the responder's first credit
 * before registration) is held by the requester and answered when the
 * message starts, after its REGISTER; a credit of another message is
 * not held. */
TEST(requester_holds_early_credit)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_requester_config c;
    req_cfg(&c, 0, &cap);
    c.ep.header_only = 1;
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    arb_hdr c0 = mk_credit(0, 0);
    CHECK_EQ_I(arb_requester_recv(q, &c0, NULL, 0, 0, 1), 0);
    arb_hdr other = mk_credit(5, 0); /* not the next message */
    CHECK_EQ_I(arb_requester_recv(q, &other, NULL, 0, 0, 1), 0);
    CHECK_EQ_I(cap.n, 0);
    arb_requester_stats st;
    arb_requester_get_stats(q, &st);
    CHECK_EQ_U(st.held, 1);
    CHECK_EQ_U(st.stale, 1);
    CHECK_EQ_I(arb_requester_start_message(q, 0, 32, NULL, NULL, 2), 0); /* 2 packets */
    /* its REGISTER first, then the answer to the held credit */
    REQUIRE(cap.n >= 2);
    CHECK_EQ_U(cap.p[0].h.packet_type, ARB_PT_REGISTER);
    CHECK_EQ_U(cap.p[cap.n - 1].h.packet_type, ARB_PT_DATA_REQUEST);
    CHECK_EQ_U(cap.p[cap.n - 1].h.offset_a, 0);
    arb_requester_get_stats(q, &st);
    CHECK_EQ_U(st.requests, 1);
    /* the REGISTER is still retried: the credit came before registration */
    CHECK(arb_requester_next_expiry(q) != ARB_TIME_NEVER);
    arb_hdr ack = mk(ARB_PT_REGISTER_ACK, 0, 0, 0);
    ack.repair = 1;
    CHECK_EQ_I(arb_requester_recv(q, &ack, NULL, 0, 0, 3), 0);
    CHECK_EQ_U(arb_requester_next_expiry(q), ARB_TIME_NEVER);
    CHECK_EQ_I(cap.invalid, 0);
    arb_requester_free(q);
}

TEST(requester_register_retry_and_failure)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    arb_requester_config c;
    req_cfg(&c, 1, &cap);
    c.redundant = 0; /* one REGISTER at a time (the message has one offset) */
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    int32_t in[4] = {0}, out[4];
    CHECK_EQ_I(arb_requester_start_message(q, 0, 16, in, out, 0), 0);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(cap.p[0].h.packet_type, ARB_PT_REGISTER);
    CHECK_EQ_U(cap.p[0].h.repair, 1);
    CHECK_EQ_U(cap.p[0].dst.kind, ARB_EP_DST_RESPONDER);
    /* retry_min (1 ms), doubling up to retry (10 ms): sends at 0, 1, 3, 7,
     * 15, 25, 35, ... ms */
    arb_time expect = 0, gap = c.ep.retry_min;
    int sent = 1;
    while (expect + gap < 100 * MS) {
        expect += gap;
        gap = gap * 2 > c.ep.retry ? c.ep.retry : gap * 2;
        CHECK_EQ_U(arb_requester_next_expiry(q), expect);
        arb_requester_on_expiry(q, expect - 1);
        CHECK_EQ_I(cap.n, sent);
        arb_requester_on_expiry(q, expect);
        CHECK_EQ_I(cap.n, ++sent);
    }
    CHECK_EQ_I(sent, 1 + 4 + 8); /* 1, 3, 7 and 15 ms, then 25 .. 95 ms */
    /* the channel fails once retry x (2^retry_tries - 1) = 2550 ms passed */
    arb_time give_up = c.ep.retry * ((UINT64_C(1) << c.ep.retry_tries) - 1);
    CHECK_EQ_U(give_up, 2550 * MS);
    while (arb_requester_next_expiry(q) < give_up && cap.n < CAP_MAX - 1) {
        arb_requester_on_expiry(q, arb_requester_next_expiry(q));
        CHECK_EQ_I(arb_requester_error(q), 0);
    }
    CHECK_EQ_U(arb_requester_next_expiry(q), give_up);
    int before = cap.n;
    arb_requester_on_expiry(q, give_up);
    CHECK_EQ_I(cap.n, before); /* no try at the give-up time */
    CHECK_EQ_I(arb_requester_error(q), ARB_ETIMEDOUT);
    arb_requester_progress qp;
    arb_requester_get_progress(q, &qp);
    CHECK_EQ_U(qp.phase, ARB_REQ_FAILED);
    CHECK_EQ_U(arb_requester_next_expiry(q), ARB_TIME_NEVER);
    CHECK_EQ_I(arb_requester_start_message(q, 1, 16, in, out, give_up), ARB_ESTATE);
    CHECK(!arb_requester_done(q));
    CHECK_EQ_I(cap.invalid, 0);
    arb_requester_free(q);
    /* retries shorter than a microsecond, or a first retry above the cap,
     * are refused */
    c.ep.retry_min = ARB_EP_TIMER_MIN - 1;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), ARB_EINVAL);
    c.ep.retry_min = c.ep.retry + 1;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), ARB_EINVAL);
}

TEST(requester_config_errors)
{
    capture cap;
    arb_requester_config c;
    arb_requester *q = NULL;
    req_cfg(&c, 0, &cap);
    REQUIRE_EQ_I(arb_requester_new(NULL, &c), ARB_EINVAL);
    c.member = 256;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), ARB_EINVAL);
    static const uint8_t zero_fan[3] = {2, 0, 1};
    req_cfg(&c, 0, &cap);
    c.fanin = zero_fan;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), ARB_EINVAL);
    req_cfg(&c, 0, &cap);
    c.ep.retry_tries = 0;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), ARB_EINVAL);
    req_cfg(&c, 0, &cap);
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    CHECK_EQ_I(arb_requester_start_message(q, 3, 16, NULL, NULL, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_requester_start_message(q, 0, 16, NULL, NULL, 0), ARB_EINVAL); /* input */
    CHECK_EQ_I(arb_requester_start_message(q, 0, 6, NULL, NULL, 0), ARB_EINVAL);
    arb_hdr h = mk_credit(0, 0);
    CHECK_EQ_I(arb_requester_recv(q, &h, NULL, 3, 0, 0), ARB_EINVAL);
    /* a malformed header is counted, not an error */
    h.version = 1;
    CHECK_EQ_I(arb_requester_recv(q, &h, NULL, 0, 0, 0), 0);
    arb_requester_stats s;
    arb_requester_get_stats(q, &s);
    CHECK_EQ_U(s.malformed, 1);
    CHECK(arb_requester_done(q));
    arb_requester_free(q);
    arb_requester_free(NULL);
}

int main(void)
{
    RUN(responder_config_errors);
    RUN(requester_config_errors);
    RUN(registration);
    RUN(responder_early_credit_commits_after_registration);
    RUN(requester_holds_early_credit);
    RUN(responder_seeded_credit);
    RUN(responder_acks_a_seeded_end_after_commit);
    RUN(requester_answers_a_seeded_message_until_acknowledged);
    RUN(requester_register_retry_and_failure);
    return testkit_done();
}
