/*
 * Unit tests of the endpoint engines' gates and limits: a congestion
 * controller's window and rate gate (through the loopback network of
 * epkit.h), and by hand the bypass repair's budget, the responder's ring
 * and its growth, and the requester's window of indices in play.
 */
#include "arbor/endpoint.h"

#include <stdlib.h>

#include "testkit.h"
#include "epkit.h"

TEST(window_and_rate_gate)
{
    arb_cc *cc = NULL;
    arb_cc_config cfg;
    arb_cc_config_default(&cfg);
    cfg.window = 3;
    cfg.spacing = 1 * US; /* below the 3 us loop: the window binds too */
    REQUIRE_EQ_I(arb_cc_new(&cc, ARB_CC_FIXED, &cfg), 0);
    net_opts o;
    net_opts_default(&o);
    o.cc = cc;
    o.window = 1000; /* ignored with a controller */
    net *n = net_new(&o);
    i32_msg m;
    i32_msg_init(&m, 3, 200);
    set_msg_range(n, 0, 0, 50);
    net_start(n, 0, &m);
    net_run(n, 1000000);
    CHECK(net_all_done(n));
    CHECK_EQ_I(i32_check(&m, 3), 0);
    CHECK(n->max_outstanding <= 3);
    CHECK_EQ_U(n->max_outstanding, 3);
    CHECK(n->min_credit_gap >= 1 * US);
    arb_cc_stats cs;
    arb_cc_get_stats(cc, &cs);
    arb_responder_stats st;
    arb_responder_get_stats(n->r, &st);
    CHECK_EQ_U(cs.samples, 50 - st.early); /* an early first credit is no sample */
    CHECK(st.peak_outstanding <= 3);
    i32_msg_free(&m, 3);
    net_free(n);
    arb_cc_free(cc);
}

/* Hand-driven responder with R = 1: every credit it sends is captured. */
static arb_responder *hand_responder(capture *cap, uint32_t window, uint32_t ring, int32_t **bufs,
                                     uint64_t bytes)
{
    arb_responder_config c;
    rsp_cfg(&c, 1, cap);
    seed_recovery(&c); /* the bypass repair's budget and the ring, alone */
    c.ep.window = window;
    c.ring = ring;
    arb_responder *r = NULL;
    REQUIRE_EQ_I(arb_responder_new(&r, &c), 0);
    bufs[0] = calloc(bytes / 4 + 1, 4);
    bufs[1] = calloc(bytes / 4 + 1, 4);
    CHECK_EQ_I(arb_responder_start_message(r, 0, bytes, bufs[0], bufs[1], 0), 0);
    register_all(r, 1, 0, 0, 0);
    return r;
}

TEST(repair_budget_cap)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    int32_t *bufs[2];
    arb_responder *r = hand_responder(&cap, 40, 0, bufs, 100 * 16);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 40);
    /* every credit times out at once */
    CHECK_EQ_U(arb_responder_next_expiry(r), 50 * MS);
    cap.n = 0;
    arb_responder_on_expiry(r, 50 * MS);
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.repairs, 40);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 1), 16);
    /* outside the window: 40 fresh credits went out as well */
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 40);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.peak_repairs, 16);
    CHECK_EQ_U(st.timeouts, 40);
    /* completing one repair frees one repair credit for the next waiting offset */
    cap.n = 0;
    uint8_t pay[16] = {0};
    arb_hdr h = mk_repair_req(0, 0, 1);
    arb_responder_recv(r, &h, pay, 16, 0, 50 * MS + 1);
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 1), 1);
    const cap_pkt *p = NULL;
    for (int i = 0; i < cap.n; i++)
        if (cap.p[i].h.repair) p = &cap.p[i];
    CHECK(p != NULL);
    if (p) CHECK_EQ_U(p->h.offset_b, 16);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
    free(bufs[0]);
    free(bufs[1]);
}

TEST(ring_limit)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    int32_t *bufs[2];
    arb_responder *r = hand_responder(&cap, 4, 0, bufs, 100 * 16); /* ring 16 */
    CHECK_EQ_I(cap_count(&cap, ARB_PT_RESPONSE, 0), 4);
    uint8_t pay[16] = {0};
    /* offset 0 goes into repair and stays there */
    arb_hdr miss = mk(ARB_PT_AGG_MISS, 0, 0, 0);
    arb_responder_recv(r, &miss, NULL, 0, ARB_EP_FROM_SWITCH, 1);
    /* commit everything else as it is credited */
    for (uint32_t k = 1; k < 40; k++) {
        arb_hdr h = mk_master(0, k, 1, 1);
        arb_responder_recv(r, &h, pay, 16, ARB_EP_FROM_SWITCH, 2);
    }
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.issued, 16); /* the ring spans 4 x window from offset 0 */
    CHECK_EQ_U(pr.committed, 15);
    CHECK_EQ_U(pr.outstanding, 0);
    /* the repair completes: credit issue resumes */
    arb_hdr rq = mk_repair_req(0, 0, 1);
    arb_responder_recv(r, &rq, pay, 16, 0, 3);
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.committed, 16);
    CHECK_EQ_U(pr.issued, 20);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_free(r);
    free(bufs[0]);
    free(bufs[1]);
}

/* The ring starts small and doubles when the offsets in play fill it, up
 * to ring_factor x the window: entries moved by a growth keep their state
 * (the repair still in progress completes, every offset commits once). */
TEST(ring_grows_with_offsets_in_play)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    int32_t *bufs[2];
    enum { W = 400, N = 3000 };
    arb_responder *r = hand_responder(&cap, W, 0, bufs, (uint64_t)N * 16);
    arb_responder_stats st;
    arb_responder_get_stats(r, &st);
    CHECK(st.ring < 4 * W); /* not the whole 4 x window at once */
    uint8_t pay[16] = {0};
    arb_hdr miss = mk(ARB_PT_AGG_MISS, 0, 0, 0); /* offset 0 stays in repair */
    arb_responder_recv(r, &miss, NULL, 0, ARB_EP_FROM_SWITCH, 1);
    for (uint32_t k = 1; k < N; k++) {
        cap.n = 0;
        arb_hdr h = mk_master(0, k, 1, 1);
        arb_responder_recv(r, &h, pay, 16, ARB_EP_FROM_SWITCH, 2);
    }
    arb_responder_progress pr;
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.issued, 4 * W); /* the ring spans 4 x window from offset 0 */
    CHECK_EQ_U(pr.committed, 4 * W - 1);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.ring, 4 * W);
    CHECK(st.ring_grows >= 1);
    /* the repair completes; the rest is credited and committed */
    arb_hdr rq = mk_repair_req(0, 0, 1);
    arb_responder_recv(r, &rq, pay, 16, 0, 3);
    for (uint32_t k = 4 * W; k < N; k++) {
        cap.n = 0;
        arb_hdr h = mk_master(0, k, 1, 1);
        arb_responder_recv(r, &h, pay, 16, ARB_EP_FROM_SWITCH, 4);
    }
    arb_responder_get_progress(r, &pr);
    CHECK_EQ_U(pr.committed, N);
    CHECK_EQ_I(cap.invalid, 0);
    arb_responder_get_stats(r, &st);
    CHECK_EQ_U(st.commits, N);
    arb_responder_free(r);
    free(bufs[0]);
    free(bufs[1]);
}

/* The held/answered bitmaps follow the indices in play: a long message
 * whose results trail its credits by a fixed lag keeps a window of a few
 * groups of 64 (the initial 16), whatever its length; a late duplicate far
 * below the window still counts as a duplicate; a result that stays
 * missing holds the window open until it comes. */
TEST(requester_window_follows_indices_in_play)
{
    static capture cap;
    memset(&cap, 0, sizeof cap);
    enum { N = 200000, LAG = 50 };
    arb_requester_config c;
    req_cfg(&c, 0, &cap);
    c.ep.header_only = 1;
    arb_requester *q = NULL;
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    REQUIRE_EQ_I(arb_requester_start_message(q, 0, (uint64_t)N * 16, NULL, NULL, 0), 0);
    uint32_t peak = 0;
    for (uint32_t k = 0; k < N + LAG; k++) {
        cap.n = 0;
        arb_hdr h = k < N ? mk_credit(0, k) : mk(ARB_PT_RESPONSE, 0, k - LAG, 0); /* tails */
        h.op = ARB_OP_SUM;
        if (k >= LAG) {
            h.offset_a = k - LAG;
            h.payload_kind = ARB_PK_COMPLETION; /* header-only: a result without bytes */
        }
        arb_requester_recv(q, &h, NULL, 0, 0, k + 1);
        arb_requester_progress pr;
        arb_requester_get_progress(q, &pr);
        if (pr.window > peak) peak = pr.window;
    }
    arb_requester_progress pr;
    arb_requester_get_progress(q, &pr);
    CHECK_EQ_U(pr.results, N);
    CHECK_EQ_U(pr.answered, N);
    CHECK(pr.complete);
    /* in play: LAG + 1 indices, at most 2 groups; the window never grows
     * past its initial 16 groups */
    CHECK(peak <= 16 * 64);
    CHECK(peak < N / 100);
    /* a late copy of index 5's credit: answered again (from the window's
     * record that it was answered, nothing grows), counted */
    arb_requester_stats st0, st1;
    arb_requester_get_stats(q, &st0);
    cap.n = 0;
    arb_hdr d = mk_credit(0, 5);
    d.offset_a = 5;
    d.payload_kind = ARB_PK_COMPLETION;
    arb_requester_recv(q, &d, NULL, 0, 0, N + LAG + 1);
    arb_requester_get_stats(q, &st1);
    CHECK_EQ_I(cap.n, 1);
    CHECK_EQ_U(st1.dup_credits, st0.dup_credits + 1);
    CHECK_EQ_U(st1.dup_results, st0.dup_results + 1);
    arb_requester_free(q);

    /* a result missing from the start: the window must cover every index
     * after it, and nothing is lost when it comes */
    memset(&cap, 0, sizeof cap);
    REQUIRE_EQ_I(arb_requester_new(&q, &c), 0);
    enum { M = 5000 };
    REQUIRE_EQ_I(arb_requester_start_message(q, 0, (uint64_t)M * 16, NULL, NULL, 0), 0);
    for (uint32_t k = 0; k < M; k++) {
        cap.n = 0;
        arb_hdr h = mk_credit(0, k);
        h.offset_a = k;
        h.payload_kind = k ? ARB_PK_COMPLETION : ARB_PK_DATA; /* result 0 missing */
        arb_requester_recv(q, &h, NULL, 0, 0, k + 1);
    }
    arb_requester_get_progress(q, &pr);
    CHECK_EQ_U(pr.results, M - 1);
    CHECK(pr.window >= M);
    arb_hdr t0 = mk(ARB_PT_RESPONSE, 0, 0, 0);
    t0.op = ARB_OP_SUM;
    t0.payload_kind = ARB_PK_COMPLETION;
    arb_requester_recv(q, &t0, NULL, 0, 0, M + 1);
    arb_requester_get_progress(q, &pr);
    CHECK_EQ_U(pr.results, M);
    CHECK(pr.complete);
    arb_requester_free(q);
}

int main(void)
{
    RUN(requester_window_follows_indices_in_play);
    RUN(window_and_rate_gate);
    RUN(repair_budget_cap);
    RUN(ring_limit);
    RUN(ring_grows_with_offsets_in_play);
    return testkit_done();
}
