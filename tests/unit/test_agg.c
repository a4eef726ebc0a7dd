/*
 * Unit tests of the aggregator engine (agg.h): hand-made headers, a fake
 * clock, no mocks. Every call goes through feed(), which checks that the
 * call succeeded, that every header the engine asks to send passes
 * arb_hdr_validate, and that arb_agg_check holds afterwards.
 */
#include "arbor/agg.h"
#include "arbor/reduce.h"

#include <stdlib.h>

#include "testkit.h"
#include "aggkit.h"

/* ---- configuration ------------------------------------------------------- */

TEST(config_and_errors)
{
    arb_agg_config c;
    arb_agg_config_default(&c);
    CHECK_EQ_U(c.slots, ARB_AGG_SLOTS_DEFAULT);
    CHECK_EQ_U(c.max_payload, ARB_PAYLOAD_MAX);
    CHECK_EQ_U(c.ports, ARB_AGG_PORTS_DEFAULT);
    CHECK_EQ_I(c.header_only, 0);

    arb_agg *a = (arb_agg *)&a;
    REQUIRE_EQ_I(arb_agg_new(NULL, &c), ARB_EINVAL);
    arb_agg_config b = c;
    b.slots = 0;
    REQUIRE_EQ_I(arb_agg_new(&a, &b), ARB_EINVAL);
    CHECK(a == NULL);
    b = c, b.slots = ARB_AGG_SLOTS_MAX + 1;
    REQUIRE_EQ_I(arb_agg_new(&a, &b), ARB_EINVAL);
    b = c, b.max_payload = 0;
    REQUIRE_EQ_I(arb_agg_new(&a, &b), ARB_EINVAL);
    b = c, b.max_payload = ARB_PAYLOAD_MAX + 1;
    REQUIRE_EQ_I(arb_agg_new(&a, &b), ARB_EINVAL);
    b = c, b.ports = 0;
    REQUIRE_EQ_I(arb_agg_new(&a, &b), ARB_EINVAL);
    b = c, b.ports = ARB_AGG_PORTS_MAX + 1;
    REQUIRE_EQ_I(arb_agg_new(&a, &b), ARB_EINVAL);

    /* the largest pool in header-only mode, the default engine */
    b = c, b.slots = ARB_AGG_SLOTS_MAX, b.header_only = 1, b.ports = ARB_AGG_PORTS_MAX;
    REQUIRE_EQ_I(arb_agg_new(&a, &b), 0);
    CHECK_EQ_I(arb_agg_check(a), 0);
    arb_agg_free(a);
    REQUIRE_EQ_I(arb_agg_new(&a, NULL), 0);

    arb_hdr h = credit(1, 0, 0);
    arb_agg_result r;
    CHECK_EQ_I(arb_agg_recv(NULL, &h, NULL, 0, CH1, 0, 0, t, &r), ARB_EINVAL);
    CHECK_EQ_I(arb_agg_recv(a, NULL, NULL, 0, CH1, 0, 0, t, &r), ARB_EINVAL);
    CHECK_EQ_I(arb_agg_recv(a, &h, NULL, 0, CH1, 0, 0, t, NULL), ARB_EINVAL);
    CHECK_EQ_I(arb_agg_recv(a, &h, NULL, 0, CH1, ARB_AGG_PORTS_DEFAULT, 0, t, &r), ARB_EINVAL);
    CHECK_EQ_I(arb_agg_recv(a, &h, NULL, 4, CH1, 0, 0, t, &r), ARB_EINVAL); /* values mode */
    CHECK_EQ_U(stats(a).packets, 0);
    CHECK_EQ_I(arb_agg_recv(a, &h, NULL, 0, CH1, ARB_AGG_PORTS_DEFAULT - 1, 0, t, &r), 0);
    CHECK_EQ_U(stats(a).credits, 1);

    CHECK_EQ_U(arb_agg_next_expiry(a), ARB_TIME_NEVER);
    CHECK_EQ_I(arb_agg_on_expiry(a, t), 0);
    CHECK_EQ_I(arb_agg_on_expiry(NULL, t), ARB_EINVAL);
    CHECK_EQ_I(arb_agg_check(NULL), ARB_EINVAL);
    arb_agg_free(a);
    arb_agg_free(NULL);
}

TEST(names)
{
    CHECK_STR(arb_agg_action_name(ARB_AGG_EMIT_AGGREGATE), "EMIT_AGGREGATE");
    CHECK_STR(arb_agg_action_name(ARB_AGG_DROP), "DROP");
    CHECK(arb_agg_action_name(ARB_AGG_ACTION_COUNT) == NULL);
    CHECK(arb_agg_action_name(-1) == NULL);
    CHECK_STR(arb_agg_reason_name(ARB_AGG_R_BYPASS), "BYPASS");
    CHECK_STR(arb_agg_reason_name(ARB_AGG_R_MALFORMED), "MALFORMED");
    CHECK(arb_agg_reason_name(ARB_AGG_REASON_COUNT) == NULL);
    for (int i = 0; i < ARB_AGG_REASON_COUNT; i++)
        CHECK(arb_agg_reason_name(i) != NULL);
}

/* ---- credits ------------------------------------------------------------- */

TEST(rotation_and_push)
{
    arb_agg *a = make(4, 8, 1);
    for (uint32_t k = 0; k < 10; k++) {
        t += 100;
        arb_hdr h = credit(k, 0, 0);
        arb_agg_result r = feed(a, &h, NULL, 0, CH1, 0, 0);
        CHECK_EQ_I(r.action, ARB_AGG_FORWARD);
        CHECK_EQ_I(r.reason, ARB_AGG_R_PUSH);
        CHECK_EQ_I(r.slot, k % 4);
        CHECK_EQ_U(h.agg_depth, 1);
        CHECK_EQ_U(h.agg_loc[0], k % 4);
        CHECK_EQ_U(h.offset_b, k); /* the rest of the header is untouched */
        CHECK_EQ_U(h.message_id, 3);
    }
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.credits, 10);
    CHECK_EQ_U(st.allocations, 10);
    CHECK_EQ_U(st.reclaimed_live, 6); /* nothing completed: every reuse reclaims */
    CHECK_EQ_U(st.live, 4);
    CHECK_EQ_U(st.peak_live, 4);

    /* 20 B header: depth 1 -> 2 -> 3, then full (one pool standing for
     * the tiers: each push under a channel of its own, since a second
     * copy of one context's credit is HELD where its slot is live) */
    arb_hdr h = credit(77, 1, 1);
    arb_agg_result r = feed(a, &h, NULL, 0, CH1, 0, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_PUSH);
    CHECK_EQ_U(h.agg_depth, 2);
    CHECK_EQ_U(h.agg_loc[0], 100);
    CHECK_EQ_U(h.agg_loc[1], 2); /* 10 mod 4 */
    r = feed(a, &h, NULL, 0, CH2, 0, 0);
    CHECK_EQ_U(h.agg_depth, 3);
    CHECK_EQ_U(h.agg_loc[1], 2);
    CHECK_EQ_U(h.agg_loc[2], 3);
    r = feed(a, &h, NULL, 0, CH1 + 1, 0, 0);
    CHECK_EQ_I(r.action, ARB_AGG_DROP);
    CHECK_EQ_I(r.reason, ARB_AGG_R_STACK_FULL);
    CHECK_EQ_U(h.agg_depth, 3);

    /* 16 B header: depth 0 -> 1, then it cannot hold depth 2 */
    h = credit(78, 0, 1);
    r = feed(a, &h, NULL, 0, CH1, 0, 0);
    CHECK_EQ_I(r.action, ARB_AGG_DROP);
    CHECK_EQ_I(r.reason, ARB_AGG_R_STACK_EXT);
    CHECK_EQ_U(h.agg_depth, 1);

    st = stats(a);
    CHECK_EQ_U(st.credits, 14);
    CHECK_EQ_U(st.allocations, 12);
    CHECK_EQ_U(st.stack_overflow, 2);

    /* a credit carrying a result payload keeps it */
    float res[4] = {1, 2, 3, 4};
    h = credit(79, 0, 0);
    h.payload_valid = 1;
    arb_agg *v = make(2, 8, 0);
    r = feed(v, &h, res, sizeof res, CH1, 0, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_PUSH);
    CHECK(r.payload == res && r.payload_len == sizeof res);
    arb_agg_free(v);
    arb_agg_free(a);
}

/* ---- requests ------------------------------------------------------------ */

TEST(fanin1_passthrough)
{
    arb_agg *a = make(4, 8, 0);
    arb_hdr c = credit(5, 1, 1); /* pushed by an upper tier at 100 */
    feed(a, &c, NULL, 0, CH1, 0, 0);
    CHECK_EQ_U(c.agg_depth, 2);
    uint8_t fi[2] = {3, 1};
    int32_t v[2] = {7, -7};
    arb_hdr q = request(&c, 1, fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    arb_agg_result r = feed(a, &q, v, sizeof v, CH1, 1, 1);
    CHECK_EQ_I(r.action, ARB_AGG_FORWARD);
    CHECK_EQ_I(r.reason, ARB_AGG_R_FANIN1);
    CHECK_EQ_U(q.agg_depth, 1);
    CHECK_EQ_U(q.agg_loc[0], 100);
    CHECK_EQ_U(q.fanin[0], 3);
    CHECK_EQ_U(q.aggregated, 0);
    CHECK_EQ_U(q.offset_b, 1);
    CHECK_EQ_U(r.ce, 1);

    /* two ranks: depth 1 -> 0, even naming a slot that does not exist */
    arb_hdr c2 = credit(6, 0, 0);
    feed(a, &c2, NULL, 0, CH1, 0, 0);
    uint8_t one = 1;
    q = request(&c2, 1, &one, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    q.agg_loc[0] = 9999;
    r = feed(a, &q, v, sizeof v, CH1, 1, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_FANIN1);
    CHECK_EQ_U(q.agg_depth, 0);

    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.passthrough, 2);
    CHECK_EQ_U(st.contributions, 0);
    CHECK_EQ_U(st.live, 2); /* the slots were not touched */
    arb_agg_free(a);
}

TEST(counting_with_lower_tier_counts)
{
    arb_agg *a = make(8, 8, 1);
    arb_hdr c = credit(40, 0, 0);
    feed(a, &c, NULL, 0, CH1, 0, 0);
    uint8_t fi = 7;
    uint32_t counts[4] = {3, 2, 1, 1}; /* two lower-tier aggregates, two ranks */
    for (int i = 0; i < 4; i++) {
        t += 1000;
        arb_hdr q = request(&c, counts[i], &fi, 0, ARB_OP_NOP, ARB_DTYPE_F32);
        if (i == 0) q.aggregated = 1;
        arb_agg_result r = feed(a, &q, NULL, 0, CH1, (uint32_t)i, 0);
        if (i < 3) {
            CHECK_EQ_I(r.action, ARB_AGG_CONSUMED);
            CHECK_EQ_I(r.reason, ARB_AGG_R_COUNTED);
            CHECK_EQ_I(r.slot, 0);
        } else {
            CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
            CHECK_EQ_I(r.reason, ARB_AGG_R_COMPLETE);
            CHECK_EQ_U(r.hdr.packet_type, ARB_PT_DATA_REQUEST);
            CHECK_EQ_U(r.hdr.aggregated, 1);
            CHECK_EQ_U(r.hdr.agg_depth, 0);
            CHECK_EQ_U(r.hdr.offset_a, 40);
            CHECK_EQ_U(r.hdr.offset_b, 7);
            CHECK_EQ_U(r.hdr.payload_valid, 0);
            CHECK_EQ_U(r.hdr.message_id, 3);
            CHECK(r.payload == NULL && r.payload_len == 0);
        }
    }
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.requests, 4);
    CHECK_EQ_U(st.contributions, 4);
    CHECK_EQ_U(st.aggregates, 1);
    CHECK_EQ_U(st.live, 0);
    CHECK_EQ_U(st.peak_live, 1);
    arb_agg_free(a);
}

/* Three ports reduce 16-element payloads; the aggregate must equal `want`. */
static void run_values(arb_op op, arb_dtype dt, const void *in0, const void *in1, const void *in2,
                       const void *want, size_t bytes)
{
    arb_agg *a = make(4, 4, 0);
    arb_hdr c = credit(9, 0, 0);
    feed(a, &c, NULL, 0, CH1, 0, 0);
    uint8_t fi = 3;
    const void *in[3] = {in0, in1, in2};
    arb_agg_result r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 3; i++) {
        arb_hdr q = request(&c, 1, &fi, 1, op, dt);
        r = feed(a, &q, in[i], bytes, CH1, (uint32_t)i + 1, 0);
    }
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.payload_len, bytes);
    CHECK_EQ_U(r.hdr.payload_valid, 1);
    CHECK_EQ_U(r.hdr.op, op);
    CHECK_EQ_U(r.hdr.dtype, dt);
    CHECK(r.payload != NULL && memcmp(r.payload, want, bytes) == 0);
    /* the inputs are the caller's and stay as they were */
    arb_agg_free(a);
}

TEST(values_f32)
{
    float x[16], y[16], z[16];
    for (int i = 0; i < 16; i++) {
        x[i] = (float)i * 0.5f;        /* 0, 0.5, ..., 7.5 */
        y[i] = (float)(8 - i) * 0.25f; /* 2, 1.75, ..., -1.75 */
        z[i] = (i % 2) ? -1.0f : 4.0f;
    }
    /* small dyadic values: every sum is exact whatever the order */
    static const float sum[16] = {6, 1.25f, 6.5f, 1.75f, 7, 2.25f, 7.5f, 2.75f,
                                  8, 3.25f, 8.5f, 3.75f, 9, 4.25f, 9.5f, 4.75f};
    static const float mx[16] = {4, 1.75f, 4, 1.5f, 4, 2.5f, 4, 3.5f,
                                 4, 4.5f,  5, 5.5f, 6, 6.5f, 7, 7.5f};
    static const float mn[16] = {0, -1, 1,     -1, 1,  -1,     0.5f,  -1,
                                 0, -1, -0.5f, -1, -1, -1.25f, -1.5f, -1.75f};
    run_values(ARB_OP_SUM, ARB_DTYPE_F32, x, y, z, sum, sizeof x);
    run_values(ARB_OP_MAX, ARB_DTYPE_F32, x, y, z, mx, sizeof x);
    run_values(ARB_OP_MIN, ARB_DTYPE_F32, x, y, z, mn, sizeof x);
    /* order of arrival does not matter for these */
    run_values(ARB_OP_SUM, ARB_DTYPE_F32, z, x, y, sum, sizeof x);
    run_values(ARB_OP_MIN, ARB_DTYPE_F32, y, z, x, mn, sizeof x);
}

TEST(values_i64)
{
    int64_t x[16], y[16], z[16];
    for (int i = 0; i < 16; i++) {
        x[i] = (int64_t)i * 1000000000000ll;
        y[i] = -(int64_t)i * i;
        z[i] = (i == 3) ? INT64_MAX : 5 - i;
    }
    int64_t sum[16], mx[16], mn[16];
    for (int i = 0; i < 16; i++) {
        /* i = 3 wraps in two's complement: 3e12 - 9 + INT64_MAX */
        sum[i] = (int64_t)((uint64_t)x[i] + (uint64_t)y[i] + (uint64_t)z[i]);
        mx[i] = x[i] > y[i] ? x[i] : y[i];
        mx[i] = mx[i] > z[i] ? mx[i] : z[i];
        mn[i] = x[i] < y[i] ? x[i] : y[i];
        mn[i] = mn[i] < z[i] ? mn[i] : z[i];
    }
    CHECK(sum[0] == 5 && sum[2] == 2000000000000ll - 4 + 3);
    CHECK(sum[3] == INT64_MIN + 3000000000000ll - 10); /* wrapped */
    CHECK(mx[3] == INT64_MAX && mn[15] == -225 && mx[15] == 15000000000000ll);
    run_values(ARB_OP_SUM, ARB_DTYPE_I64, x, y, z, sum, sizeof x);
    run_values(ARB_OP_MAX, ARB_DTYPE_I64, x, y, z, mx, sizeof x);
    run_values(ARB_OP_MIN, ARB_DTYPE_I64, x, y, z, mn, sizeof x);
}

TEST(header_only_mode)
{
    arb_agg *a = make(2, 4, 1);
    arb_hdr c = credit(11, 0, 0);
    feed(a, &c, NULL, 0, CH1, 0, 0);
    uint8_t fi = 2;
    arb_hdr q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    arb_agg_result r = feed(a, &q, NULL, 8192, CH1, 0, 0);
    CHECK_EQ_I(r.action, ARB_AGG_CONSUMED);
    float junk[2] = {1, 2}; /* a payload given anyway is never read */
    q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    r = feed(a, &q, junk, 8192, CH1, 1, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK(r.payload == NULL);
    CHECK_EQ_U(r.payload_len, 8192);
    CHECK_EQ_U(r.hdr.payload_valid, 1);
    CHECK_EQ_I(arb_hdr_validate(&r.hdr, r.payload_len), 0);

    /* lengths are still compared */
    arb_hdr c2 = credit(12, 0, 0);
    feed(a, &c2, NULL, 0, CH1, 0, 0);
    q = request(&c2, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    feed(a, &q, NULL, 4096, CH1, 0, 0);
    q = request(&c2, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    r = feed(a, &q, NULL, 8192, CH1, 1, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_MISMATCH);
    arb_agg_free(a);
}

static void check_miss(const arb_agg_result *r, uint32_t offset, int ext)
{
    CHECK_EQ_I(r->action, ARB_AGG_EMIT_MISS);
    const arb_hdr *m = &r->hdr;
    CHECK_EQ_U(m->version, 2);
    CHECK_EQ_U(m->packet_type, ARB_PT_AGG_MISS);
    CHECK_EQ_U(m->repair, 0);
    CHECK_EQ_U(m->op, ARB_OP_NOP);
    CHECK_EQ_U(m->credit_valid, 0);
    CHECK_EQ_U(m->payload_valid, 0);
    CHECK_EQ_U(m->payload_kind, ARB_PK_DATA);
    CHECK_EQ_U(m->agg_depth, 0);
    CHECK_EQ_U(m->aggregated, 0);
    CHECK_EQ_U(m->offset_a, offset);
    CHECK_EQ_U(m->offset_b, 0);
    CHECK_EQ_U(m->ext, ext);
    CHECK_EQ_U(m->message_id, 3);
    for (int i = 0; i < ARB_MAX_DEPTH; i++)
        CHECK(m->agg_loc[i] == 0 && m->fanin[i] == 0);
    CHECK(r->payload == NULL && r->payload_len == 0);
    CHECK_EQ_I(arb_hdr_validate(m, 0), 0);
}

TEST(owner_mismatch_gives_agg_miss)
{
    arb_agg *a = make(4, 4, 0);
    arb_hdr c = credit(20, 0, 0);
    feed(a, &c, NULL, 0, CH1, 0, 0);
    uint8_t fi = 2;
    float v[2] = {1, 2};

    /* another channel naming the same slot */
    arb_hdr q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    arb_agg_result r = feed(a, &q, v, sizeof v, CH2, 0, 1);
    check_miss(&r, 20, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_OWNER);
    CHECK_EQ_U(r.ce, 1);
    /* the same channel, another offset */
    q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    q.offset_a = 21;
    r = feed(a, &q, v, sizeof v, CH1, 0, 0);
    check_miss(&r, 21, 0);
    /* a slot never allocated */
    q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    q.agg_loc[0] = 3;
    r = feed(a, &q, v, sizeof v, CH1, 0, 0);
    check_miss(&r, 20, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_OWNER);
    /* a 20 B request at depth 2 keeps its profile */
    arb_hdr c3 = credit(22, 1, 1);
    feed(a, &c3, NULL, 0, CH1, 0, 0);
    uint8_t fi2[2] = {4, 2};
    q = request(&c3, 1, fi2, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    r = feed(a, &q, v, sizeof v, CH2, 0, 0);
    check_miss(&r, 22, 1);

    /* nothing was counted: the rightful contributions still complete */
    q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    feed(a, &q, v, sizeof v, CH1, 0, 0);
    q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    r = feed(a, &q, v, sizeof v, CH1, 1, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK(((const float *)r.payload)[1] == 4.0f);
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.miss, 4);
    CHECK_EQ_U(st.contributions, 2);
    arb_agg_free(a);
}

/* The owner tag covers the attempt: two attempts of one offset hold two
 * slots, each counts only its own inputs, and an input of the other attempt
 * is dropped as STALE without an AGG_MISS (the responder is not told). */
/* Without local repair every attempt is a context of its own. */
TEST(attempts_keep_their_own_slots)
{
    arb_agg *a = make_lr(4, 4, 0, 0);
    arb_hdr c0 = credit(20, 0, 0), c1 = credit(20, 0, 0);
    c1.attempt = 1;
    CHECK_EQ_I(feed(a, &c0, NULL, 0, CH1, 0, 0).slot, 0);
    CHECK_EQ_I(feed(a, &c1, NULL, 0, CH1, 0, 0).slot, 1);
    uint8_t fi = 2;
    int32_t v[2] = {1, 2}, w[2] = {10, 20};

    /* attempt 0's input counted in slot 0 */
    arb_hdr q0 = request(&c0, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    q0.attempt = 0;
    CHECK_EQ_I(feed(a, &q0, v, sizeof v, CH1, 0, 0).action, ARB_AGG_CONSUMED);
    /* an attempt-0 input naming slot 1 (attempt 1's): stale, no miss */
    arb_hdr stale = q0;
    stale.agg_loc[0] = 1;
    arb_agg_result r = feed(a, &stale, v, sizeof v, CH1, 1, 0);
    CHECK_EQ_I(r.action, ARB_AGG_DROP);
    CHECK_EQ_I(r.reason, ARB_AGG_R_STALE);
    CHECK_EQ_I(r.slot, 1);
    /* an attempt-1 input naming slot 0: stale too */
    arb_hdr q1 = request(&c1, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    q1.attempt = 1;
    stale = q1;
    stale.agg_loc[0] = 0;
    CHECK_EQ_I(feed(a, &stale, w, sizeof w, CH1, 1, 0).reason, ARB_AGG_R_STALE);

    /* attempt 1 completes with its own inputs only, and says so */
    CHECK_EQ_I(feed(a, &q1, w, sizeof w, CH1, 0, 0).action, ARB_AGG_CONSUMED);
    r = feed(a, &q1, w, sizeof w, CH1, 2, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.attempt, 1);
    CHECK_EQ_U(r.hdr.offset_b, 2);
    CHECK_EQ_I(((const int32_t *)r.payload)[0], 20);
    CHECK_EQ_I(((const int32_t *)r.payload)[1], 40);
    /* attempt 0 can still complete in its own slot: the responder commits
     * whichever attempt arrives first */
    r = feed(a, &q0, v, sizeof v, CH1, 3, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.attempt, 0);
    CHECK_EQ_I(((const int32_t *)r.payload)[1], 4);

    /* an AGG_MISS carries the attempt of the request that missed */
    arb_hdr c2 = credit(21, 0, 0);
    feed(a, &c2, NULL, 0, CH1, 0, 0);
    arb_hdr q2 = request(&c2, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    q2.attempt = 5;
    q2.offset_a = 22;
    r = feed(a, &q2, v, sizeof v, CH1, 0, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_MISS);
    CHECK_EQ_U(r.hdr.attempt, 5);
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.stale, 2);
    CHECK_EQ_U(st.miss, 1);
    CHECK_EQ_U(st.aggregates, 2);
    arb_agg_free(a);
}

/* Local repair: a later attempt's credit takes over the partial slot its
 * offset's earlier attempt holds (the ports that contributed are named and
 * skipped), an earlier attempt's late input counts in it, and the
 * aggregate says the owner's (latest) attempt. */
TEST(local_repair_adopts_a_partial_slot)
{
    arb_agg *a = make(4, 4, 0);
    arb_hdr c0 = credit(20, 0, 0);
    CHECK_EQ_I(feed(a, &c0, NULL, 0, CH1, 0, 0).slot, 0);
    uint8_t fi = 3;
    int32_t v[2] = {1, 2}, w[2] = {10, 20}, x[2] = {100, 200};
    arb_hdr q0 = request(&c0, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    CHECK_EQ_I(feed(a, &q0, v, sizeof v, CH1, 0, 0).action, ARB_AGG_CONSUMED);
    /* attempt 1 of offset 20 (its credit down again): slot 0, port 0 has */
    arb_hdr c1 = credit(20, 0, 0);
    c1.attempt = 1;
    arb_agg_result r = feed(a, &c1, NULL, 0, CH1, 0, 0);
    CHECK_EQ_I(r.action, ARB_AGG_FORWARD);
    CHECK_EQ_I(r.reason, ARB_AGG_R_ADOPT);
    CHECK_EQ_I(r.slot, 0);
    REQUIRE(r.have != NULL);
    CHECK_EQ_U(r.have[0], 1); /* port 0 only */
    CHECK_EQ_U(c1.agg_depth, 1);
    CHECK_EQ_U(c1.agg_loc[0], 0);
    /* port 1 answers attempt 1; port 2's attempt-0 input comes late */
    arb_hdr q1 = request(&c1, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    CHECK_EQ_I(feed(a, &q1, w, sizeof w, CH1, 1, 0).action, ARB_AGG_CONSUMED);
    r = feed(a, &q0, x, sizeof x, CH1, 2, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.attempt, 1);
    CHECK_EQ_U(r.hdr.offset_b, 3);
    CHECK_EQ_I(((const int32_t *)r.payload)[0], 111);
    CHECK_EQ_I(((const int32_t *)r.payload)[1], 222);
    /* port 0 answering attempt 1 too: the slot is complete */
    arb_hdr again = request(&c1, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    CHECK_EQ_I(feed(a, &again, v, sizeof v, CH1, 0, 0).reason, ARB_AGG_R_LATE);
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.adoptions, 1);
    CHECK_EQ_U(st.allocations, 1);
    CHECK_EQ_U(st.credits, 2);
    CHECK_EQ_U(st.stale, 0);
    arb_agg_free(a);
}

/* A later attempt's credit meeting the complete slot of an earlier one:
 * the aggregate again, as a DATA_REQUEST of the credit's attempt on the
 * credit's stack (the tier above pushed a new slot), the stored fan-in of
 * the tier above, the same payload; the credit itself goes no further. */
TEST(local_repair_replays_a_complete_slot)
{
    arb_agg *a = make(8, 4, 0);
    arb_hdr c0 = credit(30, 1, 1); /* the tier above pushed slot 100 */
    CHECK_EQ_I(feed(a, &c0, NULL, 0, CH1, 3, 0).slot, 0);
    uint8_t fi[2] = {4, 2}; /* the tier above gathers 4, this one 2 */
    int32_t v[2] = {1, 2}, w[2] = {10, 20};
    arb_hdr q = request(&c0, 1, fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    feed(a, &q, v, sizeof v, CH1, 0, 0);
    arb_agg_result first = feed(a, &q, w, sizeof w, CH1, 1, 0);
    REQUIRE(first.action == ARB_AGG_EMIT_AGGREGATE);
    int32_t sum[2];
    memcpy(sum, first.payload, sizeof sum);
    arb_hdr c1 = credit(30, 1, 1);
    c1.attempt = 2;
    c1.agg_loc[0] = 107; /* the tier above's slot for attempt 2 */
    arb_hdr before = c1;
    arb_agg_result r = feed(a, &c1, NULL, 0, CH1, 3, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_I(r.reason, ARB_AGG_R_REPLAY);
    CHECK(memcmp(&before, &c1, sizeof c1) == 0); /* the credit is left as it came */
    CHECK_EQ_U(r.hdr.packet_type, ARB_PT_DATA_REQUEST);
    CHECK_EQ_U(r.hdr.aggregated, 1);
    CHECK_EQ_U(r.hdr.attempt, 2);
    CHECK_EQ_U(r.hdr.offset_a, 30);
    CHECK_EQ_U(r.hdr.offset_b, 2);
    CHECK_EQ_U(r.hdr.agg_depth, 1);
    CHECK_EQ_U(r.hdr.agg_loc[0], 107);
    CHECK_EQ_U(r.hdr.fanin[0], 4);
    CHECK_EQ_U(r.payload_len, sizeof sum);
    CHECK(r.payload && memcmp(r.payload, sum, sizeof sum) == 0);
    /* a credit of another depth (another tree shape) allocates afresh */
    arb_hdr c2 = credit(30, 1, 0);
    c2.attempt = 3;
    CHECK_EQ_I(feed(a, &c2, NULL, 0, CH1, 3, 0).reason, ARB_AGG_R_PUSH);
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.replays, 1);
    CHECK_EQ_U(st.allocations, 2);
    arb_agg_free(a);
}

/* A seeded credit (docs/protocol.md section 5, "Seeded credits"): the
 * first slot keeps the responder's input and the credit goes on bare; the
 * slot's aggregate holds every input, seed included, is marked SEED and
 * goes down too. Values: 1 + 2 + 4 in each element, any order. */
TEST(seeded_credit_makes_the_whole_result)
{
    arb_agg *a = make(4, 4, 0);
    int32_t seed[2] = {1, 10}, v[2] = {2, 20}, w[2] = {4, 40};
    arb_hdr c = credit(9, 0, 0);
    c.payload_valid = 1, c.payload_kind = ARB_PK_SEED, c.offset_a = 9;
    c.dtype = ARB_DTYPE_I32;
    arb_agg_result r = feed(a, &c, seed, sizeof seed, CH1, 3, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_PUSH);
    CHECK_EQ_U(c.agg_depth, 1);
    seed[0] = seed[1] = -99; /* kept by value: the caller's buffer may go */
    uint8_t fi[1] = {2};
    arb_hdr q = request(&c, 1, fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    CHECK_EQ_I(feed(a, &q, v, sizeof v, CH1, 0, 0).action, ARB_AGG_CONSUMED);
    r = feed(a, &q, w, sizeof w, CH1, 1, 0);
    REQUIRE(r.action == ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.payload_kind, ARB_PK_SEED);
    CHECK_EQ_U(r.hdr.offset_b, 2); /* the seed is no contribution */
    CHECK_EQ_U(r.hdr.agg_depth, 0);
    CHECK_EQ_U(r.down, 1);
    int32_t got[2];
    REQUIRE(r.payload && r.payload_len == sizeof got);
    memcpy(got, r.payload, sizeof got);
    CHECK_EQ_I(got[0], 7);
    CHECK_EQ_I(got[1], 70);
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.seeds, 1);
    CHECK_EQ_U(st.seeded_results, 1);
    /* an unseeded credit's aggregate is DATA and stays up */
    arb_hdr c2 = credit(10, 0, 0);
    c2.dtype = ARB_DTYPE_I32;
    feed(a, &c2, NULL, 0, CH1, 3, 0);
    arb_hdr q2 = request(&c2, 1, fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    feed(a, &q2, v, sizeof v, CH1, 0, 0);
    r = feed(a, &q2, w, sizeof w, CH1, 1, 0);
    REQUIRE(r.action == ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.payload_kind, ARB_PK_DATA);
    CHECK_EQ_U(r.down, 0);
    memcpy(got, r.payload, sizeof got);
    CHECK_EQ_I(got[0], 6);
    arb_agg_free(a);
}

/* A seed sets what the inputs must be: another length or type is a
 * protocol error; a seed below the first slot of its stack is stripped and
 * kept nowhere (only the top slot's aggregate is the whole result); a
 * later attempt's seeded credit that takes over the partial slot goes on
 * bare too. Header-only: the seed is a mark, its aggregate SEED as well. */
TEST(seeds_only_at_the_top_and_checked)
{
    arb_agg *a = make(8, 4, 0);
    int32_t seed[2] = {1, 1}, v[4] = {2, 2, 2, 2};
    arb_hdr c = credit(5, 0, 0);
    c.payload_valid = 1, c.payload_kind = ARB_PK_SEED, c.offset_a = 5;
    c.dtype = ARB_DTYPE_I32;
    feed(a, &c, seed, sizeof seed, CH1, 3, 0);
    uint8_t fi[1] = {2};
    arb_hdr q = request(&c, 1, fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    arb_agg_result r = feed(a, &q, v, sizeof v, CH1, 0, 0); /* 16 B against an 8 B seed */
    CHECK_EQ_I(r.action, ARB_AGG_DROP);
    CHECK_EQ_I(r.reason, ARB_AGG_R_MISMATCH);
    arb_hdr qf = request(&c, 1, fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    CHECK_EQ_I(feed(a, &qf, v, 8, CH1, 0, 0).reason, ARB_AGG_R_MISMATCH);
    /* a later attempt's seeded credit adopts the partial slot, bare */
    CHECK_EQ_I(feed(a, &q, v, 8, CH1, 0, 0).action, ARB_AGG_CONSUMED);
    arb_hdr c1 = credit(5, 0, 0);
    c1.payload_valid = 1, c1.payload_kind = ARB_PK_SEED, c1.offset_a = 5, c1.attempt = 1;
    c1.dtype = ARB_DTYPE_I32;
    r = feed(a, &c1, seed, sizeof seed, CH1, 3, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_ADOPT);
    arb_hdr q1 = request(&c1, 1, fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    r = feed(a, &q1, v, 8, CH1, 1, 0);
    REQUIRE(r.action == ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.payload_kind, ARB_PK_SEED);
    int32_t got[2];
    memcpy(got, r.payload, sizeof got);
    CHECK_EQ_I(got[0], 5); /* 1 + 2 + 2: the seed once */
    /* below the top of the stack: stripped, not kept */
    arb_hdr d = credit(6, 1, 1);
    d.payload_valid = 1, d.payload_kind = ARB_PK_SEED, d.offset_a = 6;
    d.dtype = ARB_DTYPE_I32;
    feed(a, &d, seed, sizeof seed, CH1, 3, 0);
    uint8_t fi2[2] = {4, 2};
    arb_hdr qd = request(&d, 1, fi2, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    feed(a, &qd, v, 8, CH1, 0, 0);
    r = feed(a, &qd, v, 8, CH1, 1, 0);
    REQUIRE(r.action == ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.payload_kind, ARB_PK_DATA);
    CHECK_EQ_U(r.down, 0);
    memcpy(got, r.payload, sizeof got);
    CHECK_EQ_I(got[0], 4);
    CHECK_EQ_U(stats(a).seeds, 1);
    arb_agg_free(a);

    arb_agg *h = make(4, 4, 1);
    arb_hdr ch = credit(7, 0, 0);
    ch.payload_kind = ARB_PK_SEED, ch.offset_a = 7;
    feed(h, &ch, NULL, 0, CH1, 3, 0);
    arb_hdr qh = request(&ch, 1, fi, 0, ARB_OP_SUM, ARB_DTYPE_F32);
    feed(h, &qh, NULL, 0, CH1, 0, 0);
    r = feed(h, &qh, NULL, 0, CH1, 1, 0);
    REQUIRE(r.action == ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.payload_kind, ARB_PK_SEED);
    CHECK_EQ_U(r.down, 1);
    arb_agg_free(h);
}

/* Where the earlier attempt's slot is gone (taken by the rotation, or
 * another channel's), or local repair is off, a later attempt allocates. */
TEST(local_repair_only_where_the_slot_is_held)
{
    arb_agg *a = make(2, 4, 0);
    arb_hdr c0 = credit(40, 0, 0), other = credit(41, 0, 0), c2 = credit(42, 0, 0);
    feed(a, &c0, NULL, 0, CH1, 0, 0);    /* slot 0 */
    feed(a, &other, NULL, 0, CH1, 0, 0); /* slot 1 */
    feed(a, &c2, NULL, 0, CH1, 0, 0);    /* slot 0 again: offset 40's is gone */
    arb_hdr c1 = credit(40, 0, 0);
    c1.attempt = 1;
    CHECK_EQ_I(feed(a, &c1, NULL, 0, CH1, 0, 0).reason, ARB_AGG_R_PUSH);
    /* the same offset on another channel is another context */
    arb_hdr d0 = credit(50, 0, 0), d1 = credit(50, 0, 0);
    d1.attempt = 1;
    feed(a, &d0, NULL, 0, CH1, 0, 0);
    CHECK_EQ_I(feed(a, &d1, NULL, 0, CH2, 0, 0).reason, ARB_AGG_R_PUSH);
    arb_agg_free(a);
    arb_agg *off = make_lr(4, 4, 0, 0);
    arb_hdr e0 = credit(60, 0, 0), e1 = credit(60, 0, 0);
    e1.attempt = 1;
    feed(off, &e0, NULL, 0, CH1, 0, 0);
    CHECK_EQ_I(feed(off, &e1, NULL, 0, CH1, 0, 0).reason, ARB_AGG_R_PUSH);
    CHECK_EQ_U(stats(off).adoptions, 0);
    arb_agg_free(off);
}

/* Contexts in flight together keep their shortcut whatever their hashes:
 * a pool of 2 slots has a recent table of one set of 4 ways, so every
 * pair of contexts shares it. Channels advance in step, so a direct-mapped
 * table's collision would cost a pair its shortcut on every attempt (one
 * pair in four of these 32 would have). */
TEST(local_repair_contexts_that_share_a_set)
{
    for (uint32_t k = 0; k < 32; k++) {
        arb_agg *a = make(2, 4, 0);
        uint64_t ch[2] = {CH1 + k, CH2 + 977 * k};
        uint32_t off[2] = {8 + k, 15 + 3 * k};
        for (int i = 0; i < 2; i++) {
            arb_hdr c0 = credit(off[i], 0, 0);
            CHECK_EQ_I(feed(a, &c0, NULL, 0, ch[i], 0, 0).slot, i);
        }
        for (uint8_t att = 1; att <= 3; att++)
            for (int i = 0; i < 2; i++) {
                arb_hdr c = credit(off[i], 0, 0);
                c.attempt = att;
                arb_agg_result r = feed(a, &c, NULL, 0, ch[i], 0, 0);
                CHECK_EQ_I(r.reason, ARB_AGG_R_ADOPT);
                CHECK_EQ_I(r.slot, i);
            }
        CHECK_EQ_U(stats(a).adoptions, 6);
        CHECK_EQ_U(stats(a).allocations, 2);
        arb_agg_free(a);
    }
}

TEST(bad_slot_index)
{
    arb_agg *a = make(4, 4, 1);
    arb_hdr c = credit(30, 0, 0);
    feed(a, &c, NULL, 0, CH1, 0, 0);
    uint8_t fi = 2;
    arb_hdr q = request(&c, 1, &fi, 0, ARB_OP_NOP, ARB_DTYPE_F32);
    q.agg_loc[0] = 4; /* == A */
    arb_agg_result r = feed(a, &q, NULL, 0, CH1, 0, 0);
    check_miss(&r, 30, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_BAD_SLOT);
    CHECK_EQ_I(r.slot, -1);
    q.agg_loc[0] = 0xFFFF;
    r = feed(a, &q, NULL, 0, CH1, 0, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_BAD_SLOT);
    CHECK_EQ_U(stats(a).miss, 2);
    arb_agg_free(a);
}

TEST(duplicate_from_same_port)
{
    arb_agg *a = make(4, 130, 0);
    arb_hdr c = credit(50, 0, 0);
    feed(a, &c, NULL, 0, CH1, 0, 0);
    uint8_t fi = 3;
    int32_t one[4] = {1, 1, 1, 1};
    arb_hdr q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    CHECK_EQ_I(feed(a, &q, one, sizeof one, CH1, 129, 0).action, ARB_AGG_CONSUMED);
    arb_agg_result r = feed(a, &q, one, sizeof one, CH1, 129, 0);
    CHECK_EQ_I(r.action, ARB_AGG_DROP);
    CHECK_EQ_I(r.reason, ARB_AGG_R_DUPLICATE);
    /* ports 1 and 65 share a bit position in different words */
    CHECK_EQ_I(feed(a, &q, one, sizeof one, CH1, 1, 0).action, ARB_AGG_CONSUMED);
    r = feed(a, &q, one, sizeof one, CH1, 65, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.offset_b, 3);
    CHECK_EQ_I(((const int32_t *)r.payload)[3], 3); /* the duplicate was not added */
    CHECK_EQ_U(stats(a).duplicate, 1);
    arb_agg_free(a);
}

TEST(late_after_completion)
{
    arb_agg *a = make(4, 4, 0);
    arb_hdr c = credit(60, 0, 0);
    feed(a, &c, NULL, 0, CH1, 0, 0);
    uint8_t fi = 2;
    int64_t v[1] = {5};
    arb_hdr q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I64);
    feed(a, &q, v, sizeof v, CH1, 0, 0);
    CHECK_EQ_I(feed(a, &q, v, sizeof v, CH1, 1, 0).action, ARB_AGG_EMIT_AGGREGATE);
    /* a third input (a new port, or a repeat of an old one) is late */
    arb_agg_result r = feed(a, &q, v, sizeof v, CH1, 2, 0);
    CHECK_EQ_I(r.action, ARB_AGG_DROP);
    CHECK_EQ_I(r.reason, ARB_AGG_R_LATE);
    r = feed(a, &q, v, sizeof v, CH1, 0, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_LATE);
    CHECK_EQ_U(stats(a).late, 2);
    CHECK_EQ_U(stats(a).aggregates, 1);
    arb_agg_free(a);
}

TEST(reclaim_live_then_old_context_misses)
{
    arb_agg *a = make(2, 4, 0);
    uint8_t fi = 2;
    int32_t v[2] = {10, 20};
    arb_hdr c0 = credit(100, 0, 0); /* slot 0 */
    feed(a, &c0, NULL, 0, CH1, 0, 0);
    arb_hdr q0 = request(&c0, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    CHECK_EQ_I(feed(a, &q0, v, sizeof v, CH1, 0, 0).action, ARB_AGG_CONSUMED);
    arb_hdr c1 = credit(101, 0, 0); /* slot 1 */
    feed(a, &c1, NULL, 0, CH1, 0, 0);
    arb_hdr c2 = credit(200, 0, 0); /* slot 0 again, for another channel: reclaim */
    arb_agg_result r = feed(a, &c2, NULL, 0, CH2, 0, 0);
    CHECK_EQ_I(r.slot, 0);
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.reclaimed_live, 1);
    CHECK_EQ_U(st.live, 2);

    /* the old context's second request now misses */
    r = feed(a, &q0, v, sizeof v, CH1, 1, 0);
    check_miss(&r, 100, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_OWNER);

    /* the new owner starts from nothing: port 0 is not a duplicate, and the
     * old contribution is not in the sum */
    int32_t w[2] = {1, 2};
    arb_hdr q2 = request(&c2, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    CHECK_EQ_I(feed(a, &q2, w, sizeof w, CH2, 0, 0).action, ARB_AGG_CONSUMED);
    r = feed(a, &q2, w, sizeof w, CH2, 1, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_I(((const int32_t *)r.payload)[0], 2);
    CHECK_EQ_I(((const int32_t *)r.payload)[1], 4);
    CHECK_EQ_U(r.hdr.offset_a, 200);
    arb_agg_free(a);
}

/* A reset (a switch that reboots) empties the pool: every request of a
 * context from before it misses, the rotation starts again at slot 0, a
 * later attempt of a lost offset gets a fresh slot that counts only its own
 * inputs, and the counters say what was lost. */
TEST(reset_empties_the_pool)
{
    arb_agg *a = make_lr(4, 4, 0, 0);
    uint8_t fi = 2;
    int32_t v[2] = {10, 20}, w[2] = {1, 2};
    t = 1000;
    arb_hdr c0 = credit(10, 0, 0), c1 = credit(11, 0, 0), c2 = credit(12, 0, 0);
    CHECK_EQ_I(feed(a, &c0, NULL, 0, CH1, 0, 0).slot, 0); /* live from 1000 */
    CHECK_EQ_I(feed(a, &c1, NULL, 0, CH1, 0, 0).slot, 1); /* live from 1000 */
    CHECK_EQ_I(feed(a, &c2, NULL, 0, CH1, 0, 0).slot, 2);
    arb_hdr q0 = request(&c0, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    arb_hdr q1 = request(&c1, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    arb_hdr q2 = request(&c2, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    t = 1100;
    CHECK_EQ_I(feed(a, &q0, v, sizeof v, CH1, 0, 0).action, ARB_AGG_CONSUMED); /* partial */
    feed(a, &q2, v, sizeof v, CH1, 0, 0);
    CHECK_EQ_I(feed(a, &q2, v, sizeof v, CH1, 1, 0).action, ARB_AGG_EMIT_AGGREGATE);
    arb_agg_stats before = stats(a);
    CHECK_EQ_U(before.live, 2);

    t = 1500;
    CHECK_EQ_I(arb_agg_reset(a, t), 2); /* slots 0 and 1 were live, slot 2 complete */
    CHECK_EQ_I(arb_agg_check(a), 0);
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.live, 0);
    CHECK_EQ_U(st.resets, 1);
    CHECK_EQ_U(st.reset_live, 2);
    CHECK_EQ_U(st.peak_live, before.peak_live);
    CHECK_EQ_U(st.allocations, 3);
    /* slots 0 and 1 live 1000..1500; slot 2 1000..1100; slot 0 partial 1100..1500 */
    CHECK_EQ_U(st.slot_time, 500 + 500 + 100);
    CHECK_EQ_U(st.partial_slot_time, 400);

    /* every old context misses, the completed one included (no longer LATE) */
    arb_agg_result r = feed(a, &q0, v, sizeof v, CH1, 1, 0);
    check_miss(&r, 10, 0);
    CHECK_EQ_I(r.reason, ARB_AGG_R_OWNER);
    r = feed(a, &q1, v, sizeof v, CH1, 0, 0);
    check_miss(&r, 11, 0);
    r = feed(a, &q2, v, sizeof v, CH1, 2, 0);
    check_miss(&r, 12, 0);

    /* the rotation starts again at 0; a new owner there turns an old
     * request into a miss, and a later attempt of a lost offset makes the
     * old attempt's input stale */
    arb_hdr c3 = credit(13, 0, 0), c1b = credit(11, 0, 0);
    c1b.attempt = 1;
    CHECK_EQ_I(feed(a, &c3, NULL, 0, CH1, 0, 0).slot, 0);
    CHECK_EQ_I(feed(a, &c1b, NULL, 0, CH1, 0, 0).slot, 1);
    r = feed(a, &q0, v, sizeof v, CH1, 1, 0);
    check_miss(&r, 10, 0);
    r = feed(a, &q1, v, sizeof v, CH1, 1, 0);
    CHECK_EQ_I(r.action, ARB_AGG_DROP);
    CHECK_EQ_I(r.reason, ARB_AGG_R_STALE);
    /* the new attempt's slot holds its own inputs only */
    arb_hdr q1b = request(&c1b, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
    CHECK_EQ_I(feed(a, &q1b, w, sizeof w, CH1, 0, 0).action, ARB_AGG_CONSUMED);
    r = feed(a, &q1b, w, sizeof w, CH1, 1, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_I(((const int32_t *)r.payload)[0], 2);
    CHECK_EQ_I(((const int32_t *)r.payload)[1], 4);
    CHECK_EQ_U(r.hdr.attempt, 1);

    /* an empty pool resets to nothing; NULL is refused */
    CHECK_EQ_I(arb_agg_reset(a, t), 1); /* slot 0 (offset 13) was live */
    CHECK_EQ_I(arb_agg_reset(a, t), 0);
    st = stats(a);
    CHECK_EQ_U(st.resets, 3);
    CHECK_EQ_U(st.reset_live, 3);
    CHECK_EQ_I(arb_agg_check(a), 0);
    CHECK_EQ_I(arb_agg_reset(NULL, t), ARB_EINVAL);
    arb_agg_free(a);
}

TEST(offset_wrap)
{
    arb_agg *a = make(3, 4, 1);
    uint32_t ks[5] = {0xFFFFFD, 0xFFFFFE, 0xFFFFFF, 0x000000, 0x000001};
    arb_hdr c[5];
    for (int i = 0; i < 5; i++) {
        c[i] = credit(ks[i], 0, 0);
        feed(a, &c[i], NULL, 0, CH1, 0, 0);
    }
    /* slots: FFFFFD and FFFFFE were reclaimed by 0 and 1 */
    CHECK_EQ_U(c[2].agg_loc[0], 2);
    CHECK_EQ_U(c[3].agg_loc[0], 0);
    CHECK_EQ_U(c[4].agg_loc[0], 1);
    uint8_t fi = 2;
    for (int i = 2; i < 5; i++)
        for (uint32_t p = 0; p < 2; p++) {
            arb_hdr q = request(&c[i], 1, &fi, 0, ARB_OP_NOP, ARB_DTYPE_F32);
            arb_agg_result r = feed(a, &q, NULL, 0, CH1, p, 0);
            CHECK_EQ_I(r.action, p ? ARB_AGG_EMIT_AGGREGATE : ARB_AGG_CONSUMED);
            if (p) CHECK_EQ_U(r.hdr.offset_a, ks[i]);
        }
    /* offset 0xFFFFFD in the slot now owned by 0: a miss, not a match
     * modulo 2^24 or anything else */
    arb_hdr q = request(&c[0], 1, &fi, 0, ARB_OP_NOP, ARB_DTYPE_F32);
    arb_agg_result r = feed(a, &q, NULL, 0, CH1, 3, 0);
    check_miss(&r, 0xFFFFFD, 0);
    arb_agg_free(a);
}

TEST(ce_is_ored)
{
    arb_agg *a = make(4, 4, 1);
    uint8_t fi = 3;
    for (int marked = -1; marked < 3; marked++) {
        arb_hdr c = credit((uint32_t)(marked + 10), 0, 0);
        feed(a, &c, NULL, 0, CH1, 0, 0);
        arb_agg_result r;
        memset(&r, 0, sizeof r);
        for (int p = 0; p < 3; p++) {
            arb_hdr q = request(&c, 1, &fi, 0, ARB_OP_NOP, ARB_DTYPE_F32);
            r = feed(a, &q, NULL, 0, CH1, (uint32_t)p, p == marked ? 7 : 0);
            if (p < 2) CHECK_EQ_I(r.action, ARB_AGG_CONSUMED);
        }
        CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
        CHECK_EQ_U(r.ce, marked >= 0);
    }
    arb_agg_free(a);
}

TEST(bypass_types)
{
    arb_agg *a = make(4, 4, 0);
    float v[2] = {1, 2};
    arb_hdr hs[9];
    size_t lens[9];
    memset(hs, 0, sizeof hs);
    for (int i = 0; i < 9; i++) {
        hs[i].version = 2;
        hs[i].offset_a = 77;
        hs[i].dtype = ARB_DTYPE_F32;
        lens[i] = 0;
    }
    hs[0].packet_type = ARB_PT_REGISTER, hs[0].repair = 1;
    hs[1].packet_type = ARB_PT_REGISTER_ACK, hs[1].repair = 1;
    hs[2].packet_type = ARB_PT_END;
    hs[3].packet_type = ARB_PT_END_ACK;
    hs[4].packet_type = ARB_PT_AGG_MISS;
    /* repair request with a payload */
    hs[5].packet_type = ARB_PT_DATA_REQUEST, hs[5].repair = 1, hs[5].offset_b = 1;
    hs[5].payload_valid = 1, hs[5].op = ARB_OP_SUM, lens[5] = sizeof v;
    /* repair credit replaying a result */
    hs[6].packet_type = ARB_PT_RESPONSE, hs[6].repair = 1, hs[6].credit_valid = 1;
    hs[6].payload_valid = 1, hs[6].payload_kind = ARB_PK_REPLAY, hs[6].offset_b = 77;
    lens[6] = sizeof v;
    /* tail result */
    hs[7].packet_type = ARB_PT_RESPONSE, hs[7].payload_kind = ARB_PK_COMPLETION;
    /* a normal request with an empty stack, on its way to the responder */
    hs[8].packet_type = ARB_PT_DATA_REQUEST, hs[8].offset_b = 31, hs[8].aggregated = 1;
    for (int i = 0; i < 9; i++) {
        CHECK_EQ_I(arb_hdr_validate(&hs[i], lens[i]), 0);
        arb_hdr before = hs[i];
        arb_agg_result r = feed(a, &hs[i], lens[i] ? v : NULL, lens[i], CH1, 2, i & 1);
        CHECK_EQ_I(r.action, ARB_AGG_FORWARD);
        CHECK_EQ_I(r.reason, ARB_AGG_R_BYPASS);
        CHECK(memcmp(&before, &hs[i], sizeof before) == 0);
    }
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.bypass, 9);
    CHECK_EQ_U(st.allocations, 0);
    CHECK_EQ_U(st.requests, 0);
    arb_agg_free(a);
}

TEST(malformed_dropped)
{
    arb_agg *a = make(4, 4, 1);
    arb_hdr c = credit(1, 0, 0);
    c.version = 1;
    arb_agg_result r = feed(a, &c, NULL, 0, CH1, 0, 0);
    CHECK_EQ_I(r.action, ARB_AGG_DROP);
    CHECK_EQ_I(r.reason, ARB_AGG_R_MALFORMED);
    c = credit(1, 0, 0);
    c.offset_b = 0x1000000; /* wider than 24 bits */
    CHECK_EQ_I(feed(a, &c, NULL, 0, CH1, 0, 0).reason, ARB_AGG_R_MALFORMED);
    c = credit(1, 0, 0);
    feed(a, &c, NULL, 0, CH1, 0, 0);
    uint8_t fi = 0; /* fan-in 0 below agg_depth */
    arb_hdr q = request(&c, 1, &fi, 0, ARB_OP_NOP, ARB_DTYPE_F32);
    CHECK_EQ_I(feed(a, &q, NULL, 0, CH1, 0, 0).reason, ARB_AGG_R_MALFORMED);
    fi = 2;
    q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    CHECK_EQ_I(feed(a, &q, NULL, 6, CH1, 0, 0).reason, ARB_AGG_R_MALFORMED); /* 1.5 elements */
    CHECK_EQ_U(stats(a).malformed, 4);
    arb_agg_free(a);
}

TEST(protocol_errors_never_mix)
{
    arb_agg_config cfg;
    arb_agg_config_default(&cfg);
    cfg.slots = 4;
    cfg.ports = 8;
    cfg.max_payload = 64;
    arb_agg *a = NULL;
    REQUIRE_EQ_I(arb_agg_new(&a, &cfg), 0);
    arb_hdr c = credit(70, 0, 0);
    feed(a, &c, NULL, 0, CH1, 0, 0);
    uint8_t fi = 4;
    float v[16], w[32];
    for (int i = 0; i < 16; i++)
        v[i] = 1.0f;
    for (int i = 0; i < 32; i++)
        w[i] = 100.0f;

    arb_hdr q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    CHECK_EQ_I(feed(a, &q, w, sizeof w, CH1, 0, 0).reason, ARB_AGG_R_TOO_LONG);
    CHECK_EQ_I(feed(a, &q, v, sizeof v, CH1, 0, 0).reason, ARB_AGG_R_COUNTED);

    struct {
        arb_op op;
        arb_dtype dt;
        size_t len;
        uint8_t fanin;
        int pv;
        uint32_t count;
        arb_agg_reason want;
    } bad[] = {
        {ARB_OP_SUM, ARB_DTYPE_I32, sizeof v, 4, 1, 1, ARB_AGG_R_MISMATCH}, /* dtype */
        {ARB_OP_MAX, ARB_DTYPE_F32, sizeof v, 4, 1, 1, ARB_AGG_R_MISMATCH}, /* op */
        {ARB_OP_SUM, ARB_DTYPE_F32, 32, 4, 1, 1, ARB_AGG_R_MISMATCH},       /* length */
        {ARB_OP_SUM, ARB_DTYPE_F32, sizeof v, 5, 1, 1, ARB_AGG_R_MISMATCH}, /* fan-in */
        {ARB_OP_SUM, ARB_DTYPE_F32, 0, 4, 0, 1, ARB_AGG_R_MISMATCH},        /* no payload */
        {ARB_OP_SUM, ARB_DTYPE_F32, sizeof v, 4, 1, 4, ARB_AGG_R_OVERCOUNT},
        {ARB_OP_SUM, ARB_DTYPE_F32, sizeof v, 4, 1, 200, ARB_AGG_R_OVERCOUNT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        q = request(&c, bad[i].count, &bad[i].fanin, bad[i].pv, bad[i].op, bad[i].dt);
        arb_agg_result r = feed(a, &q, bad[i].len ? w : NULL, bad[i].len, CH1, 1, 0);
        CHECK_EQ_I(r.action, ARB_AGG_DROP);
        CHECK_EQ_I(r.reason, bad[i].want);
    }
    /* the first contribution fixed the slot; the right inputs finish it */
    q = request(&c, 2, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    CHECK_EQ_I(feed(a, &q, v, sizeof v, CH1, 1, 0).action, ARB_AGG_CONSUMED);
    q = request(&c, 1, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    arb_agg_result r = feed(a, &q, v, sizeof v, CH1, 2, 0);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    for (int i = 0; i < 16; i++)
        CHECK(((const float *)r.payload)[i] == 3.0f);
    /* an overcount on the first contribution of a fresh slot */
    arb_hdr c2 = credit(71, 0, 0);
    feed(a, &c2, NULL, 0, CH1, 0, 0);
    fi = 2;
    q = request(&c2, 3, &fi, 1, ARB_OP_SUM, ARB_DTYPE_F32);
    CHECK_EQ_I(feed(a, &q, v, sizeof v, CH1, 0, 0).reason, ARB_AGG_R_OVERCOUNT);
    CHECK_EQ_U(stats(a).protocol_error, 9);
    arb_agg_free(a);
}

TEST(two_tiers)
{
    /* root R aggregates 4 ranks in two leaves L1, L2 (2 each); 20 B headers */
    arb_agg *root = make(8, 4, 0), *l1 = make(8, 4, 0), *l2 = make(8, 4, 0);
    arb_hdr c = credit(0x123456, 1, 0);
    feed(root, &c, NULL, 0, CH1, 0, 0);
    arb_hdr c1 = c, c2 = c;
    feed(l1, &c1, NULL, 0, CH1, 0, 0);
    feed(l2, &c2, NULL, 0, CH1, 0, 0);
    CHECK_EQ_U(c1.agg_depth, 2);
    CHECK_EQ_U(c1.agg_loc[0], 0);
    CHECK_EQ_U(c1.agg_loc[1], 0);
    uint8_t fi[2] = {4, 2};
    int64_t in[4][3] = {{1, 2, 3}, {10, 20, 30}, {100, 200, 300}, {1000, 2000, 3000}};
    arb_agg_result up[2];
    for (int leaf = 0; leaf < 2; leaf++) {
        arb_agg *l = leaf ? l2 : l1;
        const arb_hdr *cc = leaf ? &c2 : &c1;
        arb_agg_result r;
        memset(&r, 0, sizeof r);
        for (int p = 0; p < 2; p++) {
            t += 500;
            arb_hdr q = request(cc, 1, fi, 1, ARB_OP_SUM, ARB_DTYPE_I64);
            r = feed(l, &q, in[leaf * 2 + p], sizeof in[0], CH1, (uint32_t)p, leaf == 1 && p == 0);
        }
        CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
        CHECK_EQ_U(r.hdr.agg_depth, 1);
        CHECK_EQ_U(r.hdr.agg_loc[0], 0);
        CHECK_EQ_U(r.hdr.fanin[0], 4);
        CHECK_EQ_U(r.hdr.offset_b, 2);
        up[leaf] = r;
    }
    /* the leaves' aggregates go up on ports 2 and 3; copy them out as a
     * driver would before the next call */
    int64_t p0[3], p1[3];
    memcpy(p0, up[0].payload, sizeof p0);
    memcpy(p1, up[1].payload, sizeof p1);
    arb_agg_result r = feed(root, &up[0].hdr, p0, sizeof p0, CH1, 2, up[0].ce);
    CHECK_EQ_I(r.action, ARB_AGG_CONSUMED);
    r = feed(root, &up[1].hdr, p1, sizeof p1, CH1, 3, up[1].ce);
    CHECK_EQ_I(r.action, ARB_AGG_EMIT_AGGREGATE);
    CHECK_EQ_U(r.hdr.agg_depth, 0);
    CHECK_EQ_U(r.hdr.offset_b, 4);
    CHECK_EQ_U(r.hdr.offset_a, 0x123456);
    CHECK_EQ_U(r.hdr.aggregated, 1);
    CHECK_EQ_U(r.ce, 1);
    const int64_t *s = r.payload;
    CHECK(s[0] == 1111 && s[1] == 2222 && s[2] == 3333);
    arb_agg_free(root);
    arb_agg_free(l1);
    arb_agg_free(l2);
}

TEST(slot_time_accounting)
{
    arb_agg *a = make(2, 4, 1);
    t = 1000;
    arb_hdr c = credit(1, 0, 0);
    feed(a, &c, NULL, 0, CH1, 0, 0); /* live from 1000 */
    uint8_t fi = 2;
    t = 1010;
    arb_hdr q = request(&c, 1, &fi, 0, ARB_OP_NOP, ARB_DTYPE_F32);
    feed(a, &q, NULL, 0, CH1, 0, 0); /* partial from 1010 */
    t = 1030;
    feed(a, &q, NULL, 0, CH1, 1, 0); /* complete */
    arb_agg_stats st = stats(a);
    CHECK_EQ_U(st.slot_time, 30);
    CHECK_EQ_U(st.partial_slot_time, 20);

    arb_hdr c2 = credit(2, 0, 0);
    t = 2000;
    feed(a, &c2, NULL, 0, CH1, 0, 0); /* slot 1, live from 2000 */
    t = 2100;
    q = request(&c2, 1, &fi, 0, ARB_OP_NOP, ARB_DTYPE_F32);
    feed(a, &q, NULL, 0, CH1, 0, 0); /* partial from 2100 */
    arb_agg_get_stats(a, 2500, &st); /* still open: counted up to `now` */
    CHECK_EQ_U(st.slot_time, 30 + 500);
    CHECK_EQ_U(st.partial_slot_time, 20 + 400);
    /* reclaim closes the intervals */
    t = 3000;
    arb_hdr c3 = credit(3, 0, 0);
    feed(a, &c3, NULL, 0, CH1, 0, 0); /* slot 0: was completed, not a reclaim */
    arb_hdr c4 = credit(4, 0, 0);
    feed(a, &c4, NULL, 0, CH1, 0, 0); /* slot 1: reclaimed */
    arb_agg_get_stats(a, 3000, &st);
    CHECK_EQ_U(st.reclaimed_live, 1);
    CHECK_EQ_U(st.slot_time, 30 + 1000);
    CHECK_EQ_U(st.partial_slot_time, 20 + 900);
    arb_agg_get_stats(a, 3400, &st); /* two live, empty slots since 3000 */
    CHECK_EQ_U(st.slot_time, 30 + 1000 + 800);
    CHECK_EQ_U(st.partial_slot_time, 20 + 900);
    arb_agg_free(a);
}

static int log_lines;
static char log_last[256];

static void count_log(void *user, arb_log_level level, const char *msg)
{
    (void)user;
    (void)level;
    log_lines++;
    snprintf(log_last, sizeof log_last, "%s", msg);
}

TEST(logger_names_drops_and_misses)
{
    arb_agg_config c;
    arb_agg_config_default(&c);
    c.slots = 2;
    c.ports = 4;
    c.header_only = 1;
    c.logger.fn = count_log;
    c.logger.max_level = ARB_LOG_DEBUG;
    arb_agg *a = NULL;
    REQUIRE_EQ_I(arb_agg_new(&a, &c), 0);
    int base = log_lines;
    arb_hdr cr = credit(5, 0, 0);
    feed(a, &cr, NULL, 0, CH1, 0, 0);
    CHECK_EQ_I(log_lines, base); /* the normal path says nothing */
    uint8_t fi = 2;
    arb_hdr q = request(&cr, 1, &fi, 0, ARB_OP_NOP, ARB_DTYPE_F32);
    feed(a, &q, NULL, 0, CH1, 1, 0);
    feed(a, &q, NULL, 0, CH1, 1, 0);
    CHECK_EQ_I(log_lines, base + 1);
    CHECK(strstr(log_last, "DUPLICATE") != NULL);
    feed(a, &q, NULL, 0, CH2, 1, 0);
    CHECK_EQ_I(log_lines, base + 2);
    CHECK(strstr(log_last, "miss OWNER") != NULL);
    arb_agg_free(a);
}

/* Random operations across two channels and a small pool: the invariants
 * hold after every call, the counters add up, and every emitted header
 * validates (feed checks all three). */
TEST(random_sequences)
{
    for (uint64_t seed = 1; seed <= 20 && !TEST_FAILING(); seed++) {
        arb_rng rng;
        arb_rng_seed(&rng, seed);
        arb_agg *a = make(1 + (uint32_t)arb_rng_below(&rng, 6), 8, (int)(seed & 1));
        arb_hdr credits[16];
        uint64_t chans[16];
        int n = 0;
        int32_t v[4] = {1, 2, 3, 4};
        for (int step = 0; step < 2000 && !TEST_FAILING(); step++) {
            t += arb_rng_below(&rng, 3000);
            if (step == 1000) { /* halfway, the switch reboots */
                CHECK(arb_agg_reset(a, t) >= 0);
                CHECK_EQ_I(arb_agg_check(a), 0);
            }
            if (n == 0 || arb_rng_below(&rng, 4) == 0) {
                arb_hdr c = credit((uint32_t)arb_rng_below(&rng, 8) | 0xFFFFF8u * (step & 1), 1,
                                   (int)arb_rng_below(&rng, 3));
                c.attempt = (uint8_t)arb_rng_below(&rng, 3);
                uint64_t ch = arb_rng_below(&rng, 2) ? CH1 : CH2;
                arb_agg_result r = feed(a, &c, NULL, 0, ch, 0, 0);
                if (r.action == ARB_AGG_FORWARD) {
                    credits[n % 16] = c;
                    chans[n % 16] = ch;
                    n++;
                }
                continue;
            }
            int i = (int)arb_rng_below(&rng, (uint64_t)(n < 16 ? n : 16));
            uint8_t fi[3];
            for (int k = 0; k < 3; k++)
                fi[k] = (uint8_t)(1 + arb_rng_below(&rng, 4));
            uint32_t cnt = 1 + (uint32_t)arb_rng_below(&rng, 2);
            arb_hdr q = request(&credits[i], cnt, fi, 1, ARB_OP_SUM, ARB_DTYPE_I32);
            q.attempt =
                arb_rng_below(&rng, 8) ? credits[i].attempt : (uint8_t)arb_rng_below(&rng, 3);
            uint64_t ch = arb_rng_below(&rng, 10) ? chans[i] : CH1 ^ CH2 ^ chans[i];
            feed(a, &q, v, sizeof v, ch, (uint32_t)arb_rng_below(&rng, 8),
                 (int)arb_rng_below(&rng, 2));
        }
        arb_agg_stats st = stats(a);
        CHECK(st.requests > 0 && st.contributions > 0 && st.aggregates > 0);
        CHECK(st.miss > 0 && st.duplicate + st.late + st.protocol_error > 0);
        CHECK(st.stale > 0);
        arb_agg_free(a);
    }
}

int main(void)
{
    RUN(config_and_errors);
    RUN(names);
    RUN(rotation_and_push);
    RUN(fanin1_passthrough);
    RUN(counting_with_lower_tier_counts);
    RUN(values_f32);
    RUN(values_i64);
    RUN(header_only_mode);
    RUN(owner_mismatch_gives_agg_miss);
    RUN(attempts_keep_their_own_slots);
    RUN(local_repair_adopts_a_partial_slot);
    RUN(local_repair_replays_a_complete_slot);
    RUN(seeded_credit_makes_the_whole_result);
    RUN(seeds_only_at_the_top_and_checked);
    RUN(local_repair_only_where_the_slot_is_held);
    RUN(local_repair_contexts_that_share_a_set);
    RUN(bad_slot_index);
    RUN(duplicate_from_same_port);
    RUN(late_after_completion);
    RUN(reclaim_live_then_old_context_misses);
    RUN(reset_empties_the_pool);
    RUN(offset_wrap);
    RUN(ce_is_ored);
    RUN(bypass_types);
    RUN(malformed_dropped);
    RUN(protocol_errors_never_mix);
    RUN(two_tiers);
    RUN(slot_time_accounting);
    RUN(logger_names_drops_and_misses);
    RUN(random_sequences);
    return testkit_done();
}
