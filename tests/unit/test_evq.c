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
 * target and time in insertion order. One bucket of five times, each a
 * run of ties: targets that differ in every digit, in the low bits only,
 * in the high bits only, already in order, and all one target; checked
 * against the definition. */
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

/* The local order of buckets pushed as ascending runs of (time, target):
 * 2, 3, 7, 32 and 33 runs, each of a few times and a few targets so that
 * entries of one time and target fall in different runs; checked against
 * the definition. */
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

/* A queue in the local order for push_bucket. */
struct lq {
    struct evq q;
    arb_time t[40000];
    uint32_t target[40000];
    uint32_t n;
};

/* Push (base + dt, target) as the next event of l (all of one bucket past
 * the current one, so that it is gathered and sorted when reached). */
static void lq_push(struct lq *l, arb_time base, uint32_t dt, uint32_t target)
{
    REQUIRE(l->n < 40000);
    l->t[l->n] = base + dt;
    l->target[l->n] = target;
    CHECK_EQ_I(evq_push(&l->q, base + dt, target), (int64_t)l->n);
    l->n++;
}

/* An empty queue in the local order (0), or -1 where it could not be made. */
static int lq_start(struct lq *l)
{
    l->n = 0;
    CHECK_EQ_I(evq_init(&l->q, 4), 0);
    if (TEST_FAILING()) return -1;
    evq_set_local(&l->q);
    return 0;
}

/* Every event pushed pops in the local order; the queue freed. */
static void lq_finish(struct lq *l)
{
    check_local_pops(&l->q, l->t, l->target, l->n);
    evq_free(&l->q);
}

#define LQ_BASE ((arb_time)1 << 24) /* a bucket's start, ahead of the first */

/* Rounds as a fabric in lockstep schedules them: each round a block of
 * ascending targets (per_block of them, from a random subset) at each of
 * `times` times, and `strays` single events at random times and targets
 * after each round. */
static void push_rounds(struct lq *l, arb_rng *r, int rounds, int times, int per_block, int strays)
{
    for (int k = 0; k < rounds; k++) {
        for (int i = 0; i < times; i++) {
            uint32_t g = (uint32_t)arb_rng_below(r, 8);
            for (int j = 0; j < per_block; j++) {
                g += 1 + (uint32_t)arb_rng_below(r, 16);
                lq_push(l, LQ_BASE, 320 * (uint32_t)i + 96, g);
            }
        }
        for (int j = 0; j < strays; j++)
            lq_push(l, LQ_BASE, 320 * (uint32_t)arb_rng_below(r, (uint64_t)times) + 96,
                    (uint32_t)arb_rng_below(r, 4000));
    }
}

/* Buckets shaped as a fabric's: rounds of blocks and stray events, small
 * (sorted as rounds) and large (as blocks: per time two long blocks and a
 * rest of a few entries, of many entries in many spans, of many entries in
 * a few spans); each checked against the definition of the local order. */
TEST(evq_local_order_sorts_rounds_and_blocks)
{
    static const int shape[][4] = {
        /* rounds, times, per block, strays */
        {2, 3, 6, 2},    /* 40: as rounds */
        {3, 4, 8, 3},    /* 105: as rounds, three long and the rest */
        {30, 1, 1, 1},   /* 60 in 60 short rounds: as blocks */
        {2, 4, 60, 5},   /* 490: as blocks, a rest of a few entries per time */
        {2, 2, 200, 40}, /* 880: a rest of many entries in many spans */
        {6, 2, 100, 0},  /* 1200: six long blocks a time */
        {2, 5, 40, 12},  /* 424 */
    };
    static struct lq l;
    arb_rng r;
    arb_rng_seed(&r, 41);
    for (size_t k = 0; k < sizeof shape / sizeof *shape; k++) {
        REQUIRE(lq_start(&l) == 0);
        push_rounds(&l, &r, shape[k][0], shape[k][1], shape[k][2], shape[k][3]);
        lq_finish(&l);
        if (TEST_FAILING()) break;
    }
}

/* Buckets of one time in many short blocks, as one level of a fabric's
 * switches hands its packets to the next: a transpose (targets j + K * i
 * pushed by j, then i), of fewer entries than take a radix sort and of
 * more; one long block with scattered singletons (galloped into it); one
 * long block and a few far shorter; every target twice in two blocks
 * (ties in insertion order); blocks of one time each, in order; and 14
 * blocks of targets spread over 22 bits (merged in halves rather than
 * radix sorted). */
TEST(evq_local_order_sorts_transposes_and_ties)
{
    static struct lq l;
    arb_rng r;
    arb_rng_seed(&r, 43);
    for (int shape = 0; shape < 7; shape++) {
        REQUIRE(lq_start(&l) == 0);
        if (shape == 0 || shape == 1) {
            uint32_t K = shape == 0 ? 64 : 600, L = 8;
            for (uint32_t j = 0; j < K; j++)
                for (uint32_t i = 0; i < L; i++)
                    lq_push(&l, LQ_BASE, 7, 4 * (j + K * i) + 1);
        } else if (shape == 2) {
            for (uint32_t i = 0; i < 3000; i++)
                lq_push(&l, LQ_BASE, 7, 3 * i);
            for (uint32_t i = 0; i < 20; i++)
                lq_push(&l, LQ_BASE, 7, (uint32_t)arb_rng_below(&r, 9000));
        } else if (shape == 3) {
            for (uint32_t i = 0; i < 2000; i++)
                lq_push(&l, LQ_BASE, 7, 2 * i);
            for (uint32_t b = 0; b < 5; b++)
                for (uint32_t i = 0; i < 8; i++)
                    lq_push(&l, LQ_BASE, 7, 500 * b + 37 * i);
        } else if (shape == 4) {
            for (uint32_t rep = 0; rep < 2; rep++)
                for (uint32_t i = 0; i < 300; i++) {
                    lq_push(&l, LQ_BASE, 7, i);
                    lq_push(&l, LQ_BASE, 7, i);
                }
        } else if (shape == 5) {
            for (uint32_t t = 0; t < 10; t++)
                for (uint32_t i = 0; i < 30; i++)
                    lq_push(&l, LQ_BASE, 100 * t, 5 * i + t);
        } else {
            for (uint32_t b = 0; b < 14; b++)
                for (uint32_t i = 0, g = 0; i < 80; i++) {
                    g += 1 + (uint32_t)arb_rng_below(&r, 1u << 16);
                    lq_push(&l, LQ_BASE, 7, g);
                }
        }
        lq_finish(&l);
        if (TEST_FAILING()) break;
    }
}

/* A bucket of more distinct times than the blocks are sorted by (40
 * times): radix sorted whole. */
TEST(evq_local_order_sorts_many_times)
{
    static struct lq l;
    arb_rng r;
    arb_rng_seed(&r, 47);
    REQUIRE(lq_start(&l) == 0);
    for (int round = 0; round < 3; round++)
        for (uint32_t t = 0; t < 40; t++)
            for (uint32_t i = 0, g = 0; i < 5; i++) {
                g += 1 + (uint32_t)arb_rng_below(&r, 50);
                lq_push(&l, LQ_BASE, 60 * t, g);
            }
    lq_finish(&l);
}

/* Buckets out of lockstep (sorted as cells, evq_cells.c): every entry at
 * one of `times` times drawn at random, so that a block holds one or two
 * entries (far more than 13 of the 64 neighbours evq_sort_local probes
 * break a block); targets drawn from [0, range), or 9 in 10 from a
 * cluster of 100 at 1000; one entry in `dup` repeats a target already
 * pushed (the same time and target: insertion order). Also one time of
 * 500 entries all of one target beside times of one entry each, targets
 * up to EVQ_TARGET_MAX, and 300 distinct times (more than a time's number
 * fits in a byte: sorted as blocks). Each checked against the definition
 * of the local order. */
TEST(evq_local_order_sorts_cells)
{
    static const uint32_t shape[][5] = {
        /* times, entries, target range, clustered, dup (0: none) */
        {25, 700, 1u << 19, 0, 10},            /* as the 16k benchmark's */
        {40, 2000, EVQ_TARGET_MAX + 1u, 1, 7}, /* crowded cells */
        {3, 129, 1u << 10, 0, 3},              /* few times, many repeats */
        {200, 3000, 1u << 17, 0, 0},           /* many times */
        {300, 1500, 1u << 16, 0, 0},           /* too many: as blocks */
    };
    static struct lq l;
    arb_rng r;
    arb_rng_seed(&r, 59);
    for (size_t k = 0; k < sizeof shape / sizeof shape[0]; k++) {
        const uint32_t *sh = shape[k];
        REQUIRE(lq_start(&l) == 0);
        uint32_t first = l.n;
        for (uint32_t i = 0; i < sh[1]; i++) {
            uint32_t t = 13 * (uint32_t)arb_rng_below(&r, sh[0]), g;
            if (sh[4] && i > first && arb_rng_below(&r, sh[4]) == 0) {
                uint32_t j = first + (uint32_t)arb_rng_below(&r, i - first);
                t = (uint32_t)(l.t[j] - LQ_BASE);
                g = l.target[j];
            } else if (sh[3] && arb_rng_below(&r, 10) != 0) {
                g = 1000 + (uint32_t)arb_rng_below(&r, 100);
            } else {
                g = (uint32_t)arb_rng_below(&r, sh[2]);
            }
            lq_push(&l, LQ_BASE, t, g);
        }
        lq_finish(&l);
        if (TEST_FAILING()) return;
    }
    REQUIRE(lq_start(&l) == 0);
    for (uint32_t i = 0; i < 500; i++) {
        lq_push(&l, LQ_BASE, 2000, 77);
        if (i % 5 == 0) lq_push(&l, LQ_BASE, 3 * i, (uint32_t)arb_rng_below(&r, 1u << 12));
    }
    lq_finish(&l);
}

/* An allocator that fails on demand, the C library's otherwise. */
static int fail_alloc;
static void *f_malloc(size_t n, void *u)
{
    (void)u;
    return fail_alloc ? NULL : malloc(n);
}
static void *f_calloc(size_t n, size_t s, void *u)
{
    (void)u;
    return fail_alloc ? NULL : calloc(n, s);
}
static void *f_realloc(void *p, size_t n, void *u)
{
    (void)u;
    return fail_alloc ? NULL : realloc(p, n);
}
static void f_free(void *p, void *u)
{
    (void)u;
    free(p);
}
static void *f_aligned(size_t a, size_t n, void *u)
{
    (void)u;
    return fail_alloc ? NULL : aligned_alloc(a, n);
}

/* A bucket of the local order whose sort finds no memory for its blocks:
 * the pop fails with ARB_ENOMEM and leaves the queue as it was, and the
 * events pop in order once memory is back. */
TEST(evq_local_order_without_memory)
{
    static const arb_mem failing = {NULL, f_malloc, f_calloc, f_realloc, f_free, f_aligned};
    REQUIRE_EQ_I(arb_mem_set_default(&failing), 0);
    static struct lq l;
    arb_rng r;
    arb_rng_seed(&r, 53);
    fail_alloc = 0;
    REQUIRE(lq_start(&l) == 0);
    /* a first bucket of a few entries (sorted by insertion, with no
     * memory of its own: the run and scratch arrays take room for 64),
     * then one of 57 in rounds, reached with every allocation failing */
    for (uint32_t i = 0; i < 8; i++)
        lq_push(&l, LQ_BASE - 100000, 0, 8 - i);
    push_rounds(&l, &r, 3, 4, 4, 3);
    arb_time t;
    uint32_t target;
    uint64_t seq;
    for (uint32_t i = 0; i < 8; i++) {
        CHECK_EQ_I(evq_pop(&l.q, &t, &target, &seq), 1);
        CHECK_EQ_U(target, i + 1);
    }
    fail_alloc = 1;
    CHECK_EQ_I(evq_pop(&l.q, &t, &target, &seq), ARB_ENOMEM);
    CHECK_EQ_I(evq_pop(&l.q, &t, &target, &seq), ARB_ENOMEM);
    fail_alloc = 0;
    /* the rest, as if nothing had happened */
    arb_time last_t = 0;
    uint32_t last_target = 0, popped = 0;
    uint64_t last_seq = 0;
    while (evq_pop(&l.q, &t, &target, &seq) == 1) {
        REQUIRE(seq >= 8 && seq < l.n);
        CHECK_EQ_U(t, l.t[seq]);
        CHECK_EQ_U(target, l.target[seq]);
        if (popped) {
            CHECK(t >= last_t);
            if (t == last_t) CHECK(target >= last_target);
            if (t == last_t && target == last_target) CHECK(seq > last_seq);
        }
        last_t = t;
        last_target = target;
        last_seq = seq;
        popped++;
    }
    CHECK_EQ_U(popped, l.n - 8);
    evq_free(&l.q);
    arb_mem_set_default(NULL);
}

/* The local order against a brute-force reference: pushes near and far
 * (into the overflow heap, the current bucket, the next) interleaved with
 * pops, targets from a small set so that ties of time and target abound. */
TEST(evq_local_order_matches_reference)
{
    enum { N = 20000 };
    static arb_time ref_t[N];
    static uint32_t ref_g[N];
    static int ref_live[N];
    struct evq q;
    REQUIRE_EQ_I(evq_init(&q, 4), 0);
    evq_set_local(&q);
    arb_rng r;
    arb_rng_seed(&r, 59);
    arb_time now = 0;
    uint32_t pushed = 0, popped = 0;
    while (popped < N) {
        int pushes = pushed < N ? (int)arb_rng_below(&r, 6) : 0;
        for (int i = 0; i < pushes && pushed < N; i++) {
            uint64_t kind = arb_rng_below(&r, 10);
            arb_time dt = kind < 5   ? arb_rng_below(&r, 30) * 320     /* lockstep times */
                          : kind < 7 ? 0                               /* now */
                          : kind < 9 ? arb_rng_below(&r, 3000000)      /* within a few us */
                                     : arb_rng_below(&r, 5000000000u); /* ms: overflow */
            ref_t[pushed] = now + dt;
            ref_g[pushed] = (uint32_t)arb_rng_below(&r, 40);
            ref_live[pushed] = 1;
            CHECK_EQ_I(evq_push(&q, ref_t[pushed], ref_g[pushed]), (int64_t)pushed);
            pushed++;
        }
        if (pushed == popped) continue;
        /* the reference minimum: earliest time, then lowest target, then
         * lowest sequence */
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < pushed; i++)
            if (ref_live[i] && (best == UINT32_MAX || ref_t[i] < ref_t[best] ||
                                (ref_t[i] == ref_t[best] && ref_g[i] < ref_g[best])))
                best = i;
        CHECK_EQ_U(evq_peek_time(&q), ref_t[best]);
        arb_time t;
        uint32_t target;
        uint64_t seq;
        CHECK_EQ_I(evq_pop(&q, &t, &target, &seq), 1);
        CHECK_EQ_U(seq, best);
        CHECK_EQ_U(t, ref_t[best]);
        CHECK_EQ_U(target, ref_g[best]);
        ref_live[best] = 0;
        now = t;
        popped++;
        if (TEST_FAILING()) break;
    }
    CHECK_EQ_U(evq_peek_time(&q), ARB_TIME_NEVER);
    evq_free(&q);
}

int main(void)
{
    RUN(evq_orders_by_time_then_insertion);
    RUN(evq_matches_reference_order);
    RUN(evq_crowded_buckets_keep_the_order);
    RUN(evq_local_order_sorts_ties_by_target);
    RUN(evq_local_order_merges_ascending_runs);
    RUN(evq_local_order_sorts_rounds_and_blocks);
    RUN(evq_local_order_sorts_transposes_and_ties);
    RUN(evq_local_order_sorts_many_times);
    RUN(evq_local_order_sorts_cells);
    RUN(evq_local_order_without_memory);
    RUN(evq_local_order_matches_reference);
    return testkit_done();
}
