/* Unit tests: the simulator's event queue (src/sim/evq.h), in the global
 * and the local order, against their definitions. */
#include "sim/evq.h"
#include "testkit.h"

TEST(evq_orders_by_time_then_insertion)
{
    struct evq q;
    REQUIRE_EQ_I(evq_init(&q, 2), 0);
    arb_rng r;
    arb_rng_seed(&r, 5);
    for (uint32_t i = 0; i < 5000; i++)
        CHECK(evq_push(&q, arb_rng_below(&r, 50), i) >= 0);
    arb_time last_t = 0, t;
    uint32_t target, last_target = 0;
    uint64_t seq;
    int n = 0;
    while (evq_pop(&q, &t, &target, &seq)) {
        CHECK(t >= last_t);
        if (n && t == last_t) CHECK(target > last_target); /* insertion order at equal times */
        CHECK_EQ_U(seq, target);
        last_t = t;
        last_target = target;
        n++;
    }
    CHECK_EQ_I(n, 5000);
    CHECK_EQ_U(evq_peek_time(&q), ARB_TIME_NEVER);
    CHECK_EQ_I(evq_push(&q, 1, EVQ_TARGET_MAX + 1), ARB_ERANGE);
    evq_free(&q);
}

/* The timing wheel must give exactly the order of a (time, sequence)
 * heap: interleave pushes near and far (beyond the wheel's horizon, into
 * the overflow heap) with pops, and compare with a brute-force reference. */
TEST(evq_matches_reference_order)
{
    enum { N = 20000 };
    static arb_time ref_t[N];
    static int ref_live[N];
    struct evq q;
    REQUIRE_EQ_I(evq_init(&q, 4), 0);
    arb_rng r;
    arb_rng_seed(&r, 11);
    arb_time now = 0;
    uint32_t pushed = 0, popped = 0;
    while (popped < N) {
        int pushes = pushed < N ? (int)arb_rng_below(&r, 4) : 0;
        for (int i = 0; i < pushes && pushed < N; i++) {
            uint64_t kind = arb_rng_below(&r, 10);
            arb_time dt = kind < 6   ? arb_rng_below(&r, 3000000)      /* within a few us */
                          : kind < 8 ? 0                               /* now */
                          : kind < 9 ? arb_rng_below(&r, 8192)         /* same bucket */
                                     : arb_rng_below(&r, 5000000000u); /* ms: overflow */
            ref_t[pushed] = now + dt;
            ref_live[pushed] = 1;
            CHECK_EQ_I(evq_push(&q, now + dt, pushed), (int64_t)pushed);
            pushed++;
        }
        if (pushed == popped) continue;
        /* The reference minimum: earliest time, then lowest sequence. */
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < pushed; i++)
            if (ref_live[i] && (best == UINT32_MAX || ref_t[i] < ref_t[best])) best = i;
        CHECK_EQ_U(evq_peek_time(&q), ref_t[best]);
        arb_time t;
        uint32_t target;
        uint64_t seq;
        CHECK_EQ_I(evq_pop(&q, &t, &target, &seq), 1);
        CHECK_EQ_U(target, best);
        CHECK_EQ_U(t, ref_t[best]);
        ref_live[best] = 0;
        now = t;
        popped++;
        if (TEST_FAILING()) break;
    }
    CHECK_EQ_U(evq_peek_time(&q), ARB_TIME_NEVER);
    evq_free(&q);
}

/* Crowded buckets (hundreds of events within a nanosecond, as on a large
 * fabric) take the counting sort; events pushed far ahead first and then
 * near (overflow heap, then direct) must still pop by (time, sequence). */
TEST(evq_crowded_buckets_keep_the_order)
{
    enum { N = 30000 };
    static arb_time ref_t[N];
    struct evq q;
    REQUIRE_EQ_I(evq_init(&q, 4), 0);
    arb_rng r;
    arb_rng_seed(&r, 23);
    arb_time base = (arb_time)1 << 36; /* beyond the horizon: via the heap */
    for (uint32_t i = 0; i < N; i++) {
        /* first half through the heap, second half straight into the
         * wheel once it has turned; few distinct times so ties abound */
        if (i == N / 2) {
            arb_time t;
            uint32_t target;
            CHECK_EQ_I(evq_push(&q, base - 5000, EVQ_TARGET_MAX), (int64_t)i);
            CHECK_EQ_I(evq_pop(&q, &t, &target, NULL), 1);
            CHECK_EQ_U(target, EVQ_TARGET_MAX);
            ref_t[i] = base + 3;
            CHECK(evq_push(&q, ref_t[i], i) >= 0);
            continue;
        }
        ref_t[i] = base + arb_rng_below(&r, 3000) / 7 * 7;
        CHECK(evq_push(&q, ref_t[i], i) >= 0);
    }
    arb_time last_t = 0, t;
    uint32_t target, last = 0;
    int n = 0;
    while (evq_pop(&q, &t, &target, NULL)) {
        CHECK_EQ_U(t, ref_t[target]);
        CHECK(t >= last_t);
        if (n && t == last_t) CHECK(target > last);
        last_t = t;
        last = target;
        n++;
        if (TEST_FAILING()) break;
    }
    CHECK_EQ_I(n, N);
    evq_free(&q);
}

/* Pop every event of q and check the local order's definition: times
 * ascending, those of one time by target, those of one target and time in
 * insertion order; each the event pushed as sequence number seq, at
 * ref_t[seq] for ref_target[seq], n in all. */
static void check_local_pops(struct evq *q, const arb_time *ref_t, const uint32_t *ref_target,
                             uint32_t n)
{
    arb_time t, last_t = 0;
    uint32_t target, last_target = 0, popped = 0;
    uint64_t seq, last_seq = 0;
    while (evq_pop(q, &t, &target, &seq) == 1) {
        REQUIRE(seq < n);
        CHECK_EQ_U(t, ref_t[seq]);
        CHECK_EQ_U(target, ref_target[seq]);
        if (popped) {
            CHECK(t >= last_t);
            if (t == last_t) CHECK(target >= last_target);
            if (t == last_t && target == last_target) CHECK(seq > last_seq);
        }
        last_t = t;
        last_target = target;
        last_seq = seq;
        popped++;
        if (TEST_FAILING()) break;
    }
    CHECK_EQ_U(popped, n);
}

/* The local order: events of one time pop by target, and those of one
 * target and time in insertion order. One bucket of too many ascending
 * runs to merge (so radix sorted), runs of ties with targets that differ
 * in every digit, in the low bits only (passes skipped), in the high bits
 * only, already in order, and all one target; checked against the
 * definition. */
TEST(evq_local_order_sorts_ties_by_target)
{
    enum { RUNS = 5, PER = 400, N = RUNS * PER };
    static arb_time ref_t[N];
    static uint32_t ref_target[N];
    struct evq q;
    REQUIRE_EQ_I(evq_init(&q, 4), 0);
    evq_set_local(&q);
    arb_rng r;
    arb_rng_seed(&r, 29);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t run = i / PER, k = i % PER, tg;
        if (run == 0)
            tg = (uint32_t)arb_rng_below(&r, EVQ_TARGET_MAX + 1);
        else if (run == 1)
            tg = (uint32_t)arb_rng_below(&r, 100); /* one digit of seven bits */
        else if (run == 2)
            tg = (uint32_t)arb_rng_below(&r, 8) << 22 | 5; /* the top digit only */
        else if (run == 3)
            tg = k * 3; /* in order already */
        else
            tg = 77; /* one target: insertion order */
        /* each run at its own time, in one bucket past the current one (so
         * the bucket is gathered and sorted, not inserted into) */
        ref_t[i] = ((arb_time)1 << 20) + (arb_time)run * 10;
        ref_target[i] = tg;
        CHECK_EQ_I(evq_push(&q, ref_t[i], tg), (int64_t)i);
    }
    check_local_pops(&q, ref_t, ref_target, N);
    evq_free(&q);
}

/* The local order of buckets pushed as a few ascending runs of (time,
 * target), which are merged rather than radix sorted: 2, 3, 7 and 32 runs,
 * and 33 (one too many to merge), each of a few times and a few targets so
 * that entries of one time and target fall in different runs; checked
 * against the definition. */
TEST(evq_local_order_merges_ascending_runs)
{
    enum { MAXN = 6000 };
    static const uint32_t runs[] = {2, 3, 7, 32, 33};
    static arb_time ref_t[MAXN];
    static uint32_t ref_target[MAXN];
    struct evq q;
    REQUIRE_EQ_I(evq_init(&q, 4), 0);
    evq_set_local(&q);
    arb_rng r;
    arb_rng_seed(&r, 31);
    uint32_t n = 0;
    for (uint32_t b = 0; b < sizeof runs / sizeof *runs; b++) {
        arb_time base = ((arb_time)1 << 20) + (arb_time)b * 4 * (1u << EVQ_BUCKET_SHIFT);
        for (uint32_t k = 0; k < runs[b]; k++) {
            /* a run from (base, 0) up to (base + 2, 20), ascending */
            uint32_t len = 2 + (uint32_t)arb_rng_below(&r, 40), key = 0;
            for (uint32_t i = 0; i < len; i++, n++) {
                REQUIRE(n < MAXN);
                if (i == len - 1)
                    key = 2 * 21 + 20;
                else if (i > 0)
                    key += (uint32_t)arb_rng_below(&r, 3);
                if (key > 2 * 21 + 20) key = 2 * 21 + 20;
                ref_t[n] = base + key / 21;
                ref_target[n] = key % 21;
                CHECK_EQ_I(evq_push(&q, ref_t[n], ref_target[n]), (int64_t)n);
            }
        }
    }
    check_local_pops(&q, ref_t, ref_target, n);
    evq_free(&q);
}

int main(void)
{
    RUN(evq_orders_by_time_then_insertion);
    RUN(evq_matches_reference_order);
    RUN(evq_crowded_buckets_keep_the_order);
    RUN(evq_local_order_sorts_ties_by_target);
    RUN(evq_local_order_merges_ascending_runs);
    return testkit_done();
}
