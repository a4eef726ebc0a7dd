/* The event queue: a timing wheel over a 4-ary overflow heap; see evq.h. */
#include "evq.h"

#include <stdlib.h>
#include <string.h>

#define NB (1u << EVQ_WHEEL_BITS)
#define MASK (NB - 1)
#define SMALL_SORT 24

static int less(const struct evq_entry *a, const struct evq_entry *b)
{
    return a->t < b->t || (a->t == b->t && a->key < b->key);
}

int evq_init(struct evq *q, size_t cap)
{
    memset(q, 0, sizeof *q);
    q->hcap = cap ? cap : 64;
    q->h = malloc(q->hcap * sizeof *q->h);
    q->wheel = calloc(NB, sizeof *q->wheel);
    q->occ = calloc(NB / 64, sizeof *q->occ);
    if (!q->h || !q->wheel || !q->occ) {
        evq_free(q);
        return ARB_ENOMEM;
    }
    return 0;
}

void evq_free(struct evq *q)
{
    if (q->wheel)
        for (uint32_t i = 0; i < NB; i++)
            free(q->wheel[i].e);
    free(q->wheel);
    free(q->occ);
    free(q->h);
    free(q->scratch);
    memset(q, 0, sizeof *q);
}

/* ---- the overflow heap ------------------------------------------------ */

static int heap_push(struct evq *q, struct evq_entry e)
{
    if (q->hn == q->hcap) {
        size_t ncap = q->hcap * 2;
        struct evq_entry *nh = realloc(q->h, ncap * sizeof *nh);
        if (!nh) return ARB_ENOMEM;
        q->h = nh;
        q->hcap = ncap;
    }
    size_t i = q->hn++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!less(&e, &q->h[parent])) break;
        q->h[i] = q->h[parent];
        i = parent;
    }
    q->h[i] = e;
    return 0;
}

static struct evq_entry heap_pop(struct evq *q)
{
    struct evq_entry top = q->h[0];
    struct evq_entry last = q->h[--q->hn];
    size_t n = q->hn, i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n) break;
        size_t best = c, end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++)
            if (less(&q->h[k], &q->h[best])) best = k;
        if (!less(&q->h[best], &last)) break;
        q->h[i] = q->h[best];
        i = best;
    }
    if (n) q->h[i] = last;
    return top;
}

/* ---- buckets ------------------------------------------------------------ */

static int bucket_append(struct evq_bucket *b, struct evq_entry e)
{
    if (b->n == b->cap) {
        uint32_t ncap = b->cap ? b->cap * 2 : 16;
        struct evq_entry *ne = realloc(b->e, ncap * sizeof *ne);
        if (!ne) return ARB_ENOMEM;
        b->e = ne;
        b->cap = ncap;
    }
    b->e[b->n++] = e;
    return 0;
}

/* Insert e into the sorted run b->e[from .. n). */
static int bucket_insert_sorted(struct evq_bucket *b, uint32_t from, struct evq_entry e)
{
    if (bucket_append(b, e) < 0) return ARB_ENOMEM;
    uint32_t i = b->n - 1;
    while (i > from && less(&e, &b->e[i - 1])) {
        b->e[i] = b->e[i - 1];
        i--;
    }
    b->e[i] = e;
    return 0;
}

static void insertion_sort(struct evq_entry *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct evq_entry x = a[i];
        size_t j = i;
        while (j > 0 && less(&x, &a[j - 1])) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* Bottom-up merge sort of a[0..n) through q's scratch buffer. */
static int sort_entries(struct evq *q, struct evq_entry *a, size_t n)
{
    if (n <= SMALL_SORT) {
        insertion_sort(a, n);
        return 0;
    }
    if (q->scratch_cap < n) {
        struct evq_entry *ns = realloc(q->scratch, n * sizeof *ns);
        if (!ns) return ARB_ENOMEM;
        q->scratch = ns;
        q->scratch_cap = n;
    }
    for (size_t i = 0; i < n; i += SMALL_SORT)
        insertion_sort(a + i, n - i < SMALL_SORT ? n - i : SMALL_SORT);
    struct evq_entry *src = a, *dst = q->scratch;
    for (size_t w = SMALL_SORT; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = less(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        struct evq_entry *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    return 0;
}

/* ---- the wheel ---------------------------------------------------------- */

static void mark(struct evq *q, uint64_t bi)
{
    q->occ[(bi & MASK) >> 6] |= UINT64_C(1) << (bi & 63);
}

/* The first occupied bucket after cur (the wheel holds cur .. cur + NB - 1
 * only, so the circular order from cur is the time order); cur + 1 when
 * none is marked. */
static uint64_t next_occupied(const struct evq *q)
{
    uint32_t from = (uint32_t)((q->cur + 1) & MASK);
    for (uint32_t k = 0; k <= NB / 64; k++) {
        uint32_t w = ((from >> 6) + k) & (NB / 64 - 1);
        uint64_t bits = q->occ[w];
        if (k == 0) bits &= ~UINT64_C(0) << (from & 63);
        if (k == NB / 64) bits &= (UINT64_C(1) << (from & 63)) - 1;
        if (bits) {
            uint32_t b = w << 6 | (uint32_t)__builtin_ctzll(bits);
            return q->cur + ((b - (uint32_t)(q->cur & MASK)) & MASK);
        }
    }
    return q->cur + 1;
}

int64_t evq_push(struct evq *q, arb_time t, uint32_t target)
{
    if (target > EVQ_TARGET_MAX || q->seq > EVQ_SEQ_MAX) return ARB_ERANGE;
    uint64_t seq = q->seq;
    struct evq_entry e = {t, seq << EVQ_TARGET_BITS | target};
    uint64_t bi = t >> EVQ_BUCKET_SHIFT;
    int rc;
    if (bi <= q->cur) {
        /* The current bucket (or, for a time the wheel has already turned
         * past while empty, still the current one: every later bucket only
         * holds later times). */
        struct evq_bucket *b = &q->wheel[q->cur & MASK];
        rc = q->sorted ? bucket_insert_sorted(b, q->pos, e) : bucket_append(b, e);
        q->in_wheel++;
        if (rc == 0) mark(q, q->cur);
    } else if (bi - q->cur < NB) {
        rc = bucket_append(&q->wheel[bi & MASK], e);
        q->in_wheel++;
        if (rc == 0) mark(q, bi);
    } else {
        rc = heap_push(q, e);
    }
    if (rc < 0) {
        if (bi - q->cur < NB) q->in_wheel--;
        return rc;
    }
    q->seq++;
    q->n++;
    return (int64_t)seq;
}

/* Move overflow entries that are now within the horizon into the wheel. */
static int migrate(struct evq *q)
{
    while (q->hn && (q->h[0].t >> EVQ_BUCKET_SHIFT) - q->cur < NB) {
        struct evq_entry e = heap_pop(q);
        if (bucket_append(&q->wheel[(e.t >> EVQ_BUCKET_SHIFT) & MASK], e) < 0) {
            heap_push(q, e); /* cannot fail: the heap just shrank */
            return ARB_ENOMEM;
        }
        mark(q, e.t >> EVQ_BUCKET_SHIFT);
        q->in_wheel++;
    }
    return 0;
}

/* The current bucket with an entry at pos, sorted from pos on; NULL when
 * the queue is empty or memory ran out. */
static struct evq_bucket *current(struct evq *q)
{
    if (q->n == 0) return NULL;
    struct evq_bucket *b = &q->wheel[q->cur & MASK];
    if (q->pos >= b->n) {
        b->n = 0;
        q->occ[(q->cur & MASK) >> 6] &= ~(UINT64_C(1) << (q->cur & 63));
        q->pos = 0;
        q->sorted = 0;
        do {
            if (q->in_wheel == 0)
                q->cur = q->h[0].t >> EVQ_BUCKET_SHIFT; /* jump over the empty wheel */
            else
                q->cur = next_occupied(q); /* skip the empty buckets */
            if (migrate(q) < 0) return NULL;
            b = &q->wheel[q->cur & MASK];
        } while (b->n == 0);
    }
    if (!q->sorted) {
        if (sort_entries(q, b->e + q->pos, b->n - q->pos) < 0) return NULL;
        q->sorted = 1;
    }
    return b;
}

arb_time evq_peek_time(struct evq *q)
{
    struct evq_bucket *b = current(q);
    return b ? b->e[q->pos].t : ARB_TIME_NEVER;
}

int evq_pop(struct evq *q, arb_time *t, uint32_t *target, uint64_t *seq)
{
    return evq_pop_until(q, ARB_TIME_NEVER, t, target, seq);
}

int evq_pop_until(struct evq *q, arb_time until, arb_time *t, uint32_t *target, uint64_t *seq)
{
    struct evq_bucket *b = current(q);
    if (!b || b->e[q->pos].t > until) return 0;
    struct evq_entry e = b->e[q->pos++];
    q->n--;
    q->in_wheel--;
    *t = e.t;
    *target = (uint32_t)(e.key & EVQ_TARGET_MAX);
    if (seq) *seq = e.key >> EVQ_TARGET_BITS;
    return 1;
}
