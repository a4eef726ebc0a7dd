/* The event queue: a timing wheel over a 4-ary overflow heap; see evq.h. */
#include "evq.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

#define NB (1u << EVQ_WHEEL_BITS)
#define MASK (NB - 1)
#define SMALL_SORT 24
#define BUCKET_PS (1u << EVQ_BUCKET_SHIFT)
#define NO_CHUNK UINT32_MAX

/* (time, key), or in the local order (time, target, sequence). */
static int less(const struct evq *q, const struct evq_entry *a, const struct evq_entry *b)
{
    if (a->t != b->t) return a->t < b->t;
    if (q->local && (a->key & EVQ_TARGET_MAX) != (b->key & EVQ_TARGET_MAX))
        return (a->key & EVQ_TARGET_MAX) < (b->key & EVQ_TARGET_MAX);
    return a->key < b->key;
}

int evq_init(struct evq *q, size_t cap)
{
    memset(q, 0, sizeof *q);
    q->hcap = cap ? cap : 64;
    q->h = arb_malloc(q->hcap * sizeof *q->h);
    q->wheel = arb_calloc(NB, sizeof *q->wheel);
    q->occ = arb_calloc(NB / 64, sizeof *q->occ);
    q->count = arb_malloc(BUCKET_PS * sizeof *q->count);
    q->free_chunk = NO_CHUNK;
    if (!q->h || !q->wheel || !q->occ || !q->count) {
        evq_free(q);
        return ARB_ENOMEM;
    }
    return 0;
}

void evq_set_local(struct evq *q)
{
    q->local = 1;
}

void evq_free(struct evq *q)
{
    arb_free(q->wheel);
    arb_free(q->occ);
    arb_free(q->chunks);
    arb_free(q->run);
    arb_free(q->h);
    arb_free(q->scratch);
    arb_free(q->count);
    evq_free_local(q);
    memset(q, 0, sizeof *q);
}

/* ---- the overflow heap ------------------------------------------------ */

static int heap_push(struct evq *q, struct evq_entry e)
{
    if (q->hn == q->hcap) {
        size_t ncap = q->hcap * 2;
        struct evq_entry *nh = arb_realloc(q->h, ncap * sizeof *nh);
        if (!nh) return ARB_ENOMEM;
        q->h = nh;
        q->hcap = ncap;
    }
    size_t i = q->hn++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!less(q, &e, &q->h[parent])) break;
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
            if (less(q, &q->h[k], &q->h[best])) best = k;
        if (!less(q, &q->h[best], &last)) break;
        q->h[i] = q->h[best];
        i = best;
    }
    if (n) q->h[i] = last;
    return top;
}

/* ---- buckets: chains of chunks ------------------------------------------ */

static uint32_t chunk_get(struct evq *q)
{
    uint32_t c = q->free_chunk;
    if (c != NO_CHUNK) {
        q->free_chunk = q->chunks[c].next;
        return c;
    }
    if (q->n_chunks == q->cap_chunks) {
        uint32_t ncap = q->cap_chunks ? q->cap_chunks * 2 : 256;
        struct evq_chunk *nc = arb_realloc(q->chunks, (size_t)ncap * sizeof *nc);
        if (!nc) return NO_CHUNK;
        q->chunks = nc;
        q->cap_chunks = ncap;
    }
    return q->n_chunks++;
}

static int bucket_append(struct evq *q, struct evq_bucket *b, struct evq_entry e)
{
    if (b->tn == 0 || b->tn == EVQ_CHUNK) {
        uint32_t c = chunk_get(q);
        if (c == NO_CHUNK) return ARB_ENOMEM;
        q->chunks[c].next = NO_CHUNK;
        if (b->tn == 0)
            b->head = c;
        else
            q->chunks[b->tail].next = c;
        b->tail = c;
        b->tn = 0;
    }
    q->chunks[b->tail].e[b->tn++] = e;
    return 0;
}

static int grow(struct evq_entry **a, size_t *cap, size_t n)
{
    if (*cap >= n) return 0;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < n)
        ncap *= 2;
    struct evq_entry *na = arb_realloc(*a, ncap * sizeof *na);
    if (!na) return ARB_ENOMEM;
    *a = na;
    *cap = ncap;
    return 0;
}

/* Insert e into the sorted current run. */
static int run_insert(struct evq *q, struct evq_entry e)
{
    if (grow(&q->run, &q->rcap, q->rn + 1) < 0) return ARB_ENOMEM;
    if (q->batch) { /* sorted in at evq_batch_end */
        q->run[q->rn++] = e;
        return 0;
    }
    size_t i = q->rn++;
    while (i > q->pos && less(q, &e, &q->run[i - 1])) {
        q->run[i] = q->run[i - 1];
        i--;
    }
    q->run[i] = e;
    return 0;
}

static void insertion_sort(const struct evq *q, struct evq_entry *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct evq_entry x = a[i];
        size_t j = i;
        while (j > 0 && less(q, &x, &a[j - 1])) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* One pass of a stable LSD radix sort of src[0..n) into dst on the `bits`
 * bits of (t - base) from `shift` on; entries of one digit keep their
 * order. */
static void radix_pass(uint32_t *count, const struct evq_entry *src, struct evq_entry *dst,
                       size_t n, arb_time base, unsigned shift, unsigned bits)
{
    uint32_t mask = (1u << bits) - 1;
    memset(count, 0, ((size_t)mask + 1) * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[(src[i].t - base) >> shift & mask]++;
    uint32_t sum = 0;
    for (uint32_t k = 0; k <= mask; k++) {
        uint32_t c = count[k];
        count[k] = sum;
        sum += c;
    }
    for (size_t i = 0; i < n; i++)
        dst[count[(src[i].t - base) >> shift & mask]++] = src[i];
}

/* The bits of a bucket's time the first pass of bucket_sort orders by (the
 * high ones): 2^TOP_BITS digits, a few entries each in a typical bucket, so
 * that the insertion pass after it moves few. */
#define TOP_BITS 7

/* Stable sort of a gathered bucket, scratch[0..n), into run by the time
 * within the bucket: entries of one time keep their (insertion) order. One
 * pass over all 2^EVQ_BUCKET_SHIFT ps for crowded buckets; otherwise one
 * pass on the high TOP_BITS bits, which leaves each entry behind at most
 * the few of its digit it should follow, then an insertion pass on the
 * time (stable: entries of one time are of one digit, in their order). */
static void bucket_sort(struct evq *q, size_t n, arb_time base)
{
    if (n >= BUCKET_PS / 2) {
        radix_pass(q->count, q->scratch, q->run, n, base, 0, EVQ_BUCKET_SHIFT);
        return;
    }
    radix_pass(q->count, q->scratch, q->run, n, base, EVQ_BUCKET_SHIFT - TOP_BITS, TOP_BITS);
    struct evq_entry *a = q->run;
    for (size_t i = 1; i < n; i++) {
        if (a[i].t >= a[i - 1].t) continue;
        struct evq_entry x = a[i];
        size_t j = i;
        do {
            a[j] = a[j - 1];
            j--;
        } while (j > 0 && x.t < a[j - 1].t);
        a[j] = x;
    }
}

/* (time, key) and (time, target, sequence), for qsort. */
static int cmp_global(const void *pa, const void *pb)
{
    const struct evq_entry *a = pa, *b = pb;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_local(const void *pa, const void *pb)
{
    const struct evq_entry *a = pa, *b = pb;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    uint64_t x = (a->key & EVQ_TARGET_MAX) << EVQ_SEQ_BITS | a->key >> EVQ_TARGET_BITS;
    uint64_t y = (b->key & EVQ_TARGET_MAX) << EVQ_SEQ_BITS | b->key >> EVQ_TARGET_BITS;
    return x < y ? -1 : x > y;
}

void evq_batch_begin(struct evq *q)
{
    q->batch = 1;
    q->batch_from = q->rn;
}

int evq_batch_end(struct evq *q)
{
    q->batch = 0;
    size_t a = q->pos, m = q->batch_from, n = q->rn;
    if (m == n) return 0;
    /* the run's entries not yet popped, sorted, and the batch: sort the
     * batch, then merge the two through the scratch array */
    qsort(q->run + m, n - m, sizeof *q->run, q->local ? cmp_local : cmp_global);
    if (m == a || !less(q, &q->run[m], &q->run[m - 1])) return 0;
    if (grow(&q->scratch, &q->scratch_cap, n - a) < 0) return ARB_ENOMEM;
    size_t i = a, j = m, k = 0;
    while (i < m && j < n)
        q->scratch[k++] = less(q, &q->run[j], &q->run[i]) ? q->run[j++] : q->run[i++];
    while (i < m)
        q->scratch[k++] = q->run[i++];
    while (j < n)
        q->scratch[k++] = q->run[j++];
    memcpy(q->run + a, q->scratch, (n - a) * sizeof *q->run);
    return 0;
}

/* Already in (time, key) order? Buckets often are: events pushed in
 * time order with equal delays, such as the copies of one packet. */
static int in_order(const struct evq *q, const struct evq_entry *a, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (less(q, &a[i], &a[i - 1])) return 0;
    return 1;
}

/* Make bucket q->cur the current run: gather its chunks (returning them to
 * the free list) and sort. Its entries were appended in sequence order
 * (the local order relies on it for entries of one time and one target). */
static int load_run(struct evq *q)
{
    struct evq_bucket *b = &q->wheel[q->cur & MASK];
    size_t n = 0;
    for (uint32_t c = b->head;; c = q->chunks[c].next) {
        n += c == b->tail ? b->tn : EVQ_CHUNK;
        if (c == b->tail) break;
    }
    /* (room for one more: evq_sort_cells's sentinel) */
    if (grow(&q->run, &q->rcap, n + 1) < 0 || grow(&q->scratch, &q->scratch_cap, n + 1) < 0 ||
        (q->local && n >= q->blk_cap && evq_local_room(q, n) < 0))
        return ARB_ENOMEM;
    size_t k = 0;
    for (uint32_t c = b->head;;) {
        uint32_t m = c == b->tail ? b->tn : EVQ_CHUNK, next = q->chunks[c].next;
        memcpy(q->run + k, q->chunks[c].e, m * sizeof *q->run);
        k += m;
        q->chunks[c].next = q->free_chunk;
        q->free_chunk = c;
        if (c == b->tail) break;
        c = next;
    }
    b->tn = 0;
    q->occ[(q->cur & MASK) >> 6] &= ~(UINT64_C(1) << (q->cur & 63));
    q->in_wheel -= n;
    arb_time base = q->cur << EVQ_BUCKET_SHIFT;
    if (q->local) {
        evq_sort_local(q, n, base);
    } else if (n <= SMALL_SORT) {
        insertion_sort(q, q->run, n);
    } else if (!in_order(q, q->run, n)) {
        evq_swap_run(q);
        bucket_sort(q, n, base);
    }
    q->pos = 0;
    q->rn = n;
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

static int wheel_append(struct evq *q, uint64_t bi, struct evq_entry e)
{
    int rc = bucket_append(q, &q->wheel[bi & MASK], e);
    if (rc < 0) return rc;
    mark(q, bi);
    q->in_wheel++;
    return 0;
}

int64_t evq_push_slow(struct evq *q, arb_time t, uint32_t target)
{
    if (target > EVQ_TARGET_MAX || q->seq > EVQ_SEQ_MAX) return ARB_ERANGE;
    uint64_t seq = q->seq;
    struct evq_entry e = {t, seq << EVQ_TARGET_BITS | target};
    uint64_t bi = t >> EVQ_BUCKET_SHIFT;
    int rc;
    if (bi <= q->cur)
        /* The current bucket (or, for a time the wheel has already turned
         * past while empty, still the current one: every later bucket only
         * holds later times). */
        rc = run_insert(q, e);
    else if (bi - q->cur < NB)
        rc = wheel_append(q, bi, e);
    else
        rc = heap_push(q, e);
    if (rc < 0) return rc;
    q->seq++;
    return (int64_t)seq;
}

/* Move overflow entries that are now within the horizon into the wheel.
 * They precede (in sequence) whatever the wheel's buckets get later, so a
 * bucket's entries of one time and target stay in insertion order. */
static int migrate(struct evq *q)
{
    while (q->hn && (q->h[0].t >> EVQ_BUCKET_SHIFT) - q->cur < NB) {
        struct evq_entry e = heap_pop(q);
        if (wheel_append(q, e.t >> EVQ_BUCKET_SHIFT, e) < 0) {
            heap_push(q, e); /* cannot fail: the heap just shrank */
            return ARB_ENOMEM;
        }
    }
    return 0;
}

int evq_load(struct evq *q)
{
    if (q->pos < q->rn) return 1;
    if (q->in_wheel == 0 && q->hn == 0) return 0; /* (and the run is drained) */
    q->pos = q->rn = 0;
    if (q->in_wheel == 0)
        q->cur = q->h[0].t >> EVQ_BUCKET_SHIFT; /* jump over the empty wheel */
    else
        q->cur = next_occupied(q); /* skip the empty buckets */
    if (migrate(q) < 0 || load_run(q) < 0) return ARB_ENOMEM;
    return 1;
}

arb_time evq_peek_time(struct evq *q)
{
    return evq_load(q) > 0 ? q->run[q->pos].t : ARB_TIME_NEVER;
}

int evq_pop(struct evq *q, arb_time *t, uint32_t *target, uint64_t *seq)
{
    return evq_pop_until(q, ARB_TIME_NEVER, t, target, seq);
}
