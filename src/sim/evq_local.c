/* The event queue's local order (evq.h): the sort of a bucket, gathered
 * in the order its entries were appended, by (time, target, sequence).
 *
 * A fabric in lockstep schedules a bucket's events in rounds: the events
 * of one time, handled in target order, each schedule one or two more a
 * link or a transmission later, so that a round appends to a bucket a
 * block of each time it reaches, in target order. A time's entries are
 * then a few blocks: mostly two long ones (two rounds) and a few short
 * ones (the odd events of other rounds). So a bucket is sorted as its
 * blocks (sort_blocks): one pass finds them and numbers their times
 * (find_blocks); each time's blocks, the times in order, are merged into
 * place, the two longest and the others (sorted) in one three-way pass;
 * many short blocks (a transpose: one level of switches handing its
 * packets to the next) are radix sorted on the target. A bucket of a few
 * dozen entries is merged as its rounds instead (sort_by_rounds: fewer
 * pieces, on (time, target) keys), a handful of entries sorted by
 * insertion. A bucket of more than LOCAL_TIMES times is radix sorted whole
 * (sort_keys). Out of lockstep a bucket's blocks are short, and it is
 * sorted as cells instead (evq_cells.c; long_blocks tells the two apart).
 *
 * The order is the heap's of evq.c (less): entries of one time and target
 * are in insertion order in a bucket, a block keeps them so, and the
 * merges compare the sequence number after the target (okey). */
#include "evq.h"

#include <string.h>
#include "base/alloc.h"

#define BUCKET_PS (1u << EVQ_BUCKET_SHIFT)

/* Buckets of at most SMALL_LOCAL entries are sorted by insertion; of at
 * most ROUNDS_LOCAL, as rounds, unless they are more than ROUNDS_MAX;
 * larger ones, as blocks. */
#define SMALL_LOCAL 16
#define ROUNDS_LOCAL 128
#define ROUNDS_MAX 24

/* The most distinct times a bucket may hold for sort_blocks; a bucket
 * with more is radix sorted whole (sort_keys). */
#define LOCAL_TIMES 32

/* A stretch of entries, ascending in the local order. */
struct evq_span {
    const struct evq_entry *a;
    size_t n;
};

/* ---- helpers ------------------------------------------------------------ */

/* The local order's rank of an entry among those of its time: its target,
 * then its sequence number (every entry's own, so no two are equal). */
static inline uint64_t okey(const struct evq_entry *e)
{
    return e->key << EVQ_SEQ_BITS | e->key >> EVQ_TARGET_BITS;
}

/* Copy n entries. Long copies go in pieces that the C library would copy
 * with vector moves: past a few KiB it turns to `rep movsb`, which
 * callgrind, the measure of the simulator's cost (bench/sim_instr),
 * counts a byte at a time. */
#define COPY_PIECE 128

static void copy_entries(struct evq_entry *dst, const struct evq_entry *src, size_t n)
{
    while (n) {
        size_t c = n < COPY_PIECE ? n : COPY_PIECE;
        memcpy(dst, src, c * sizeof *dst);
        dst += c;
        src += c;
        n -= c;
    }
}

/* One step of the unrolled scans for a run's end (find_blocks,
 * find_rounds): entry e[i]'s target into cur; at an entry of another time
 * than pt, or a target below prev, e moves to it and the scan goes to
 * `out`. */
#define RUN_STEP(i, cur, prev, out)                                                                \
    cur = evq_target(&e[i]);                                                                       \
    if (e[i].t != pt || cur < prev) {                                                              \
        e += i;                                                                                    \
        goto out;                                                                                  \
    }

/* ceil(log2(r)), r >= 1. */
static unsigned log2_up(size_t r)
{
    return r > 1 ? 64 - (unsigned)__builtin_clzll(r - 1) : 0;
}

/* ---- the radix sort on (time, target) ------------------------------------ */

/* The local order's key of an entry of the bucket that starts at base:
 * its time within the bucket, then its target. A stable sort on it leaves
 * entries of one time and target in their (insertion) order. */
static inline uint64_t local_key(const struct evq_entry *e, arb_time base)
{
    return (uint64_t)(e->t - base) << EVQ_TARGET_BITS | (e->key & EVQ_TARGET_MAX);
}

/* One pass of a stable LSD radix sort of src[0..n) into dst on the `bits`
 * bits of t from `shift` on. */
static void key_pass(uint32_t *count, const struct evq_entry *src, struct evq_entry *dst, size_t n,
                     unsigned shift, unsigned bits)
{
    uint32_t mask = (1u << bits) - 1;
    memset(count, 0, ((size_t)mask + 1) * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[src[i].t >> shift & mask]++;
    uint32_t sum = 0;
    for (uint32_t k = 0; k <= mask; k++) {
        uint32_t c = count[k];
        count[k] = sum;
        sum += c;
    }
    for (size_t i = 0; i < n; i++)
        dst[count[src[i].t >> shift & mask]++] = src[i];
}

/* The current run's n entries by local key: a stable LSD radix sort over
 * the bits the keys differ in, in digits of up to EVQ_BUCKET_SHIFT bits
 * (fewer for a small bucket: the counters cost as much as the entries),
 * with each entry's key in place of its time meanwhile. */
static void sort_keys(struct evq *q, size_t n, arb_time base, uint64_t differ)
{
    unsigned digit = 6;
    while (digit < EVQ_BUCKET_SHIFT && (size_t)1 << (digit + 1) <= n)
        digit++;
    for (size_t i = 0; i < n; i++)
        q->run[i].t = local_key(&q->run[i], base);
    while (differ) {
        unsigned shift = (unsigned)__builtin_ctzll(differ);
        unsigned span = 64 - (unsigned)__builtin_clzll(differ) - shift;
        unsigned bits = span < digit ? span : digit;
        key_pass(q->count, q->run, q->scratch, n, shift, bits);
        evq_swap_run(q);
        differ &= ~(((UINT64_C(1) << bits) - 1) << shift);
    }
    for (size_t i = 0; i < n; i++)
        q->run[i].t = base + (q->run[i].t >> EVQ_TARGET_BITS);
}

/* The radix sort of the current run's n entries on (time, target), over
 * the bits the keys differ in (sort_keys). */
static void sort_all_keys(struct evq *q, size_t n, arb_time base)
{
    uint64_t any = 0, all = ~UINT64_C(0);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = local_key(&q->run[i], base);
        any |= x;
        all &= x;
    }
    sort_keys(q, n, base, any ^ all);
}

/* ---- merges of entries of one time (by okey) ---------------------------- */

/* The first index in [lo, n) of the ascending L whose okey exceeds k (n if
 * none): an exponential search from lo, then a binary one. */
static size_t first_above(const struct evq_entry *L, size_t lo, size_t n, uint64_t k)
{
    size_t hi = lo, step = 1;
    while (hi < n && okey(&L[hi]) < k) {
        lo = hi + 1;
        hi += step;
        step <<= 1;
    }
    if (hi > n) hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (okey(&L[mid]) < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A merge of a short sequence into one at least this many times longer
 * (and long) places the short one's entries by search (gallop) rather than
 * stepping through both. */
#define GALLOP 12
#define GALLOP_MIN 128

/* Merge the short ascending S[0..ns) into the long L[0..nl), into out. */
static void gallop(const struct evq_entry *S, size_t ns, const struct evq_entry *L, size_t nl,
                   struct evq_entry *out)
{
    size_t j = 0;
    for (size_t i = 0; i < ns; i++) {
        size_t p = first_above(L, j, nl, okey(&S[i]));
        copy_entries(out, L + j, p - j);
        out += p - j;
        *out++ = S[i];
        j = p;
    }
    copy_entries(out, L + j, nl - j);
}

/* Merge the ascending (by okey) A[0..na) and B[0..nb), both non-empty,
 * into out. */
static inline void merge2(const struct evq_entry *A, size_t na, const struct evq_entry *B,
                          size_t nb, struct evq_entry *out)
{
    if (okey(&A[na - 1]) < okey(&B[0])) {
        copy_entries(out, A, na);
        copy_entries(out + na, B, nb);
        return;
    }
    if (na + nb >= GALLOP_MIN) {
        if (na * GALLOP <= nb) {
            gallop(A, na, B, nb, out);
            return;
        }
        if (nb * GALLOP <= na) {
            gallop(B, nb, A, na, out);
            return;
        }
    }
    if (okey(&A[na - 1]) > okey(&B[nb - 1])) { /* A: the one that runs out first */
        const struct evq_entry *t = A;
        size_t tn = na;
        A = B;
        na = nb;
        B = t;
        nb = tn;
    }
    /* (B's last entry is above all of A's: B lasts while A does) */
    const struct evq_entry *ea = A + na, *eb = B + nb;
    uint64_t ka = okey(A), kb = okey(B);
    for (;;) {
        if (ka < kb) {
            *out++ = *A++;
            if (A == ea) break;
            ka = okey(A);
        } else {
            *out++ = *B++;
            kb = okey(B);
        }
    }
    copy_entries(out, B, (size_t)(eb - B));
}

/* Merge the ascending (by okey) A[0..na), B[0..nb) and C[0..nc), each
 * non-empty, into out: one pass while all three last, then the two left. */
static void merge3(const struct evq_entry *A, size_t na, const struct evq_entry *B, size_t nb,
                   const struct evq_entry *C, size_t nc, struct evq_entry *out)
{
    const struct evq_entry *ea = A + na, *eb = B + nb, *ec = C + nc;
    uint64_t ka = okey(A), kb = okey(B), kc = okey(C);
    for (;;) {
        if (ka < kb) {
            if (ka < kc) {
                *out++ = *A++;
                if (A == ea) break;
                ka = okey(A);
                continue;
            }
        } else if (kb < kc) {
            *out++ = *B++;
            if (B == eb) break;
            kb = okey(B);
            continue;
        }
        *out++ = *C++;
        if (C == ec) break;
        kc = okey(C);
    }
    if (A == ea) {
        A = C;
        ea = ec;
    } else if (B == eb) {
        B = C;
        eb = ec;
    }
    merge2(A, (size_t)(ea - A), B, (size_t)(eb - B), out);
}

/* Merge the spans s[0..r) of one time, m entries, into dst, using alt (as
 * long) meanwhile: the two halves (by entries) merged into alt, then
 * together. */
static void merge_spans(const struct evq_span *s, size_t r, size_t m, struct evq_entry *dst,
                        struct evq_entry *alt)
{
    if (r == 1) {
        copy_entries(dst, s[0].a, m);
        return;
    }
    size_t h = 1, ml = s[0].n;
    while (h + 1 < r && 2 * (ml + s[h].n) <= m)
        ml += s[h++].n;
    const struct evq_entry *L = s[0].a, *R = s[h].a;
    if (h > 1) {
        merge_spans(s, h, ml, alt, dst);
        L = alt;
    }
    if (r - h > 1) {
        merge_spans(s + h, r - h, m - ml, alt + ml, dst + ml);
        R = alt + ml;
    }
    merge2(L, ml, R, m - ml, dst);
}

/* Insertion sort of a[0..n) by okey. */
static void insertion_okey(struct evq_entry *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct evq_entry x = a[i];
        uint64_t k = okey(&x);
        size_t j = i;
        while (j > 0 && okey(&a[j - 1]) > k) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* ---- entries of one time distributed by target --------------------------- */

/* The bits of a digit of radix_spans at most. */
#define TARGET_DIGIT 11

/* The spans s[0..r) of one time, m entries, sorted by target into dst by
 * a stable LSD radix sort over the low `bits` bits of their targets (the
 * first pass reads the spans in place; alt holds the passes between).
 * Entries of one target keep their order, the spans' (insertion). */
static void radix_spans(const struct evq_span *s, size_t r, size_t m, unsigned bits,
                        uint32_t *count, struct evq_entry *dst, struct evq_entry *alt)
{
    unsigned passes = (bits + TARGET_DIGIT - 1) / TARGET_DIGIT;
    unsigned digit = (bits + passes - 1) / passes;
    uint32_t mask = (1u << digit) - 1, *c1 = count + mask + 1, *c2 = c1 + mask + 1;
    /* every pass's counts at once (passes * 2^digit <= BUCKET_PS counters) */
    memset(count, 0, (size_t)passes * (mask + 1) * sizeof *count);
    for (size_t i = 0; i < r; i++)
        for (const struct evq_entry *e = s[i].a, *end = e + s[i].n; e < end; e++) {
            uint32_t g = evq_target(e);
            count[g & mask]++;
            if (passes > 1) c1[g >> digit & mask]++;
            if (passes > 2) c2[g >> 2 * digit & mask]++;
        }
    for (unsigned p = 0; p < passes; p++) {
        uint32_t *c = count + p * (mask + 1), sum = 0;
        for (uint32_t k = 0; k <= mask; k++) {
            uint32_t x = c[k];
            c[k] = sum;
            sum += x;
        }
    }
    struct evq_span whole;
    for (unsigned p = 0, shift = 0; p < passes; p++, shift += digit) {
        struct evq_entry *out = (passes - 1 - p) % 2 ? alt : dst;
        uint32_t *c = count + p * (mask + 1);
        for (size_t i = 0; i < r; i++)
            for (const struct evq_entry *e = s[i].a, *end = e + s[i].n; e < end; e++)
                out[c[evq_target(e) >> shift & mask]++] = *e;
        whole = (struct evq_span){out, m};
        s = &whole;
        r = 1;
    }
}

/* The spans s[0..r) of one time, m entries, in the local order into dst:
 * distributed by the high bits of their targets into about m cells (one
 * counting pass), then sorted by insertion, which moves an entry only past
 * those of its cell. */
static void msd_spans(const struct evq_span *s, size_t r, size_t m, uint32_t *count,
                      struct evq_entry *dst)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < r; i++) {
        if (evq_target(s[i].a) < lo) lo = evq_target(s[i].a);
        if (evq_target(&s[i].a[s[i].n - 1]) > hi) hi = evq_target(&s[i].a[s[i].n - 1]);
    }
    unsigned bits = lo == hi ? 0 : 32 - (unsigned)__builtin_clz(hi - lo);
    unsigned cells = log2_up(m) < 12 ? log2_up(m) : 12;
    unsigned shift = bits > cells ? bits - cells : 0;
    uint32_t n = ((hi - lo) >> shift) + 1;
    memset(count, 0, n * sizeof *count);
    for (size_t i = 0; i < r; i++)
        for (const struct evq_entry *e = s[i].a, *end = e + s[i].n; e < end; e++)
            count[(evq_target(e) - lo) >> shift]++;
    uint32_t sum = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t c = count[k];
        count[k] = sum;
        sum += c;
    }
    for (size_t i = 0; i < r; i++)
        for (const struct evq_entry *e = s[i].a, *end = e + s[i].n; e < end; e++)
            dst[count[(evq_target(e) - lo) >> shift]++] = *e;
    insertion_okey(dst, m);
}

/* ---- a bucket as blocks ---------------------------------------------------- */

/* The times of a bucket's blocks (find_blocks): each numbered from 1 in
 * the order first met. */
struct times {
    arb_time t[LOCAL_TIMES];
    uint32_t blocks[LOCAL_TIMES + 1]; /* by number: how many blocks */
    uint32_t n;
};

/* The blocks of a[0..n), the bucket that starts at base: the longest
 * stretches of one time whose targets ascend. Their starts in b[0..k),
 * b[k] = n, and the numbers of their times in tix[0..k) (*tm: the times;
 * tmap maps a time within the bucket to its number, and is all 0 again on
 * return). Returns k, or 0 past LOCAL_TIMES times. The common case, 16
 * entries of one block, is tested in one step. */
static size_t find_blocks(const struct evq_entry *a, size_t n, arb_time base, uint8_t *tmap,
                          uint32_t *b, uint8_t *tix, struct times *tm)
{
    const struct evq_entry *e = a, *end = a + n, *end8 = n >= 16 ? end - 15 : a;
    arb_time pt = 0;
    uint32_t pg = 0, g, h, nt = 0;
    size_t k = 0;
    goto start;
    for (;;) {
        /* (16 entries a step, their targets in two registers in turn) */
        while (e < end8) {
            g = evq_target(&e[0]);
            if (e[0].t != pt || g < pg) goto start;
            RUN_STEP(1, h, g, start)
            RUN_STEP(2, g, h, start)
            RUN_STEP(3, h, g, start)
            RUN_STEP(4, g, h, start)
            RUN_STEP(5, h, g, start)
            RUN_STEP(6, g, h, start)
            RUN_STEP(7, h, g, start)
            RUN_STEP(8, g, h, start)
            RUN_STEP(9, h, g, start)
            RUN_STEP(10, g, h, start)
            RUN_STEP(11, h, g, start)
            RUN_STEP(12, g, h, start)
            RUN_STEP(13, h, g, start)
            RUN_STEP(14, g, h, start)
            RUN_STEP(15, h, g, start)
            pg = h;
            e += 16;
        }
        for (; e < end; e++) {
            g = evq_target(e);
            if (e->t != pt || g < pg) goto start;
            pg = g;
        }
        break;
    start: /* e starts a block */
        pt = e->t;
        uint8_t x = tmap[pt - base];
        if (!x) {
            if (nt == LOCAL_TIMES) {
                k = 0;
                break;
            }
            tm->t[nt++] = pt;
            tm->blocks[nt] = 0;
            x = tmap[pt - base] = (uint8_t)nt;
        }
        tm->blocks[x]++;
        tix[k] = x;
        b[k++] = (uint32_t)(e - a);
        pg = evq_target(e);
        e++;
    }
    for (uint32_t i = 0; i < nt; i++)
        tmap[tm->t[i] - base] = 0;
    tm->n = nt;
    b[k] = (uint32_t)n;
    return k;
}

/* The two longest of the spans s[0..r), r >= 2: *b1 the longest. */
static void two_longest(const struct evq_span *s, size_t r, size_t *b1, size_t *b2)
{
    size_t x = 0, y = 1;
    if (s[1].n > s[0].n) {
        x = 1;
        y = 0;
    }
    for (size_t i = 2; i < r; i++) {
        if (s[i].n > s[x].n) {
            y = x;
            x = i;
        } else if (s[i].n > s[y].n) {
            y = i;
        }
    }
    *b1 = x;
    *b2 = y;
}

/* Copy the spans s[0..r) but b1 and b2 to dst. */
static void copy_others(const struct evq_span *s, size_t r, size_t b1, size_t b2,
                        struct evq_entry *dst)
{
    for (size_t i = 0; i < r; i++)
        if (i != b1 && i != b2)
            for (size_t j = 0; j < s[i].n; j++)
                *dst++ = s[i].a[j];
}

/* A time of at most REST_INSERT entries (besides two long spans, or
 * none) is sorted by insertion; one of many spans of fewer than MSD_MAX,
 * by msd_spans; sort_time takes the two longest spans apart when the
 * spans are at most FEW_SPANS. */
#define REST_INSERT 24
#define MSD_MAX 1024
#define FEW_SPANS 12

/* The spans s[0..r) of one time, r >= 3, m entries, b1 and b2 the two
 * longest, in the local order into dst (alt as long, meanwhile). A few
 * spans, or two that hold half of the entries: the others are sorted into
 * alt (merged, by insertion, or as spans of their own) and the three
 * merged; one far longer than the rest takes them by gallop. Many short
 * spans: by insertion, msd_spans, or merged in halves or radix sorted on
 * the target, whichever takes fewer steps. s is reordered. */
static void sort_time(struct evq_span *s, size_t r, size_t m, size_t b1, size_t b2, uint32_t *count,
                      struct evq_entry *dst, struct evq_entry *alt)
{
    if (r <= FEW_SPANS || 2 * (s[b1].n + s[b2].n) >= m) {
        struct evq_span x = s[b1], y = s[b2];
        size_t mr = m - x.n - y.n, k = r - 2;
        const struct evq_entry *rest = NULL;
        if (m >= GALLOP_MIN && x.n >= GALLOP * (m - x.n)) {
            /* one far longer than the rest: they are merged, then galloped
             * into it */
            if (r == 2) {
                merge2(s[b2].a, s[b2].n, x.a, x.n, dst);
                return;
            }
            size_t n = 0;
            for (size_t i = 0; i < r; i++) /* (the others keep their order) */
                if (i != b1) s[n++] = s[i];
            size_t c1, c2;
            two_longest(s, n, &c1, &c2);
            sort_time(s, n, m - x.n, c1, c2, count, alt, dst);
            merge2(alt, m - x.n, x.a, x.n, dst);
            return;
        }
        if (k == 1) {
            rest = s[3 - b1 - b2].a;
        } else if (k > 1 && mr <= REST_INSERT) {
            copy_others(s, r, b1, b2, alt);
            insertion_okey(alt, mr);
            rest = alt;
        } else if (k > 1) {
            size_t n = 0;
            for (size_t i = 0; i < r; i++) /* (the others keep their order) */
                if (i != b1 && i != b2) s[n++] = s[i];
            if (k == 2) {
                merge2(s[0].a, s[0].n, s[1].a, s[1].n, alt);
            } else if (k == 3) {
                merge3(s[0].a, s[0].n, s[1].a, s[1].n, s[2].a, s[2].n, alt);
            } else if (k <= FEW_SPANS) {
                size_t c1, c2;
                two_longest(s, k, &c1, &c2);
                sort_time(s, k, mr, c1, c2, count, alt, dst);
            } else {
                msd_spans(s, k, mr, count, alt);
            }
            rest = alt;
        }
        if (k == 0)
            merge2(x.a, x.n, y.a, y.n, dst);
        else
            merge3(x.a, x.n, y.a, y.n, rest, mr, dst);
        return;
    }
    if (m <= REST_INSERT) {
        struct evq_entry *o = dst;
        for (size_t i = 0; i < r; i++)
            for (size_t j = 0; j < s[i].n; j++)
                *o++ = s[i].a[j];
        insertion_okey(dst, m);
        return;
    }
    if (m < MSD_MAX) {
        msd_spans(s, r, m, count, dst);
        return;
    }
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < r; i++) {
        if (evq_target(s[i].a) < lo) lo = evq_target(s[i].a);
        if (evq_target(&s[i].a[s[i].n - 1]) > hi) hi = evq_target(&s[i].a[s[i].n - 1]);
    }
    unsigned bits = lo == hi ? 0 : 32 - (unsigned)__builtin_clz(lo ^ hi);
    unsigned passes = (bits + TARGET_DIGIT - 1) / TARGET_DIGIT;
    /* (a merge level costs about 9 instructions an entry; the radix sort 5
     * to count, 9 a pass, and 4 a counter) */
    if (bits && (5 + 9 * passes) * m + passes * ((size_t)4 << (bits + passes - 1) / passes) <
                    (size_t)log2_up(r) * 9 * m)
        radix_spans(s, r, m, bits, count, dst, alt);
    else
        merge_spans(s, r, m, dst, alt);
}

/* The current run's n gathered entries in the local order as blocks
 * (find_blocks): those of each time, in the order of the times, merged
 * (sort_time) into place. */
static void sort_blocks(struct evq *q, size_t n, arb_time base)
{
    uint32_t *bnd = q->bnd;
    uint8_t *tix = q->tix;
    struct times tm;
    size_t k = find_blocks(q->run, n, base, q->tmap, bnd, tix, &tm);
    if (k == 0) {
        sort_all_keys(q, n, base);
        return;
    }
    /* the times in order (few) */
    uint32_t nt = tm.n, order[LOCAL_TIMES], first[LOCAL_TIMES + 1];
    int sorted = k == nt;
    for (uint32_t i = 0; i < nt; i++) {
        uint32_t p = i;
        while (p > 0 && tm.t[order[p - 1] - 1] > tm.t[i]) {
            order[p] = order[p - 1];
            p--;
        }
        sorted &= p == i;
        order[p] = i + 1;
    }
    if (sorted) return; /* one block a time, in order */
    /* the blocks as spans, those of each time together */
    struct evq_span *sp = q->spans;
    const struct evq_entry *src = q->run;
    if (nt == 1) {
        for (size_t b = 0; b < k; b++)
            sp[b] = (struct evq_span){src + bnd[b], bnd[b + 1] - bnd[b]};
    } else {
        uint32_t sum = 0;
        for (uint32_t i = 0; i < nt; i++) {
            first[order[i]] = sum;
            sum += tm.blocks[order[i]];
        }
        for (size_t b = 0; b < k; b++)
            sp[first[tix[b]]++] = (struct evq_span){src + bnd[b], bnd[b + 1] - bnd[b]};
    }
    evq_swap_run(q); /* (src is now the scratch array) */
    struct evq_entry *o = q->run, *alt = q->tmp;
    for (uint32_t i = 0; i < nt; i++) {
        uint32_t r = tm.blocks[order[i]];
        size_t m = 0;
        for (uint32_t j = 0; j < r; j++)
            m += sp[j].n;
        if (r == 1) {
            copy_entries(o, sp[0].a, m);
        } else if (r == 2) {
            merge2(sp[0].a, sp[0].n, sp[1].a, sp[1].n, o);
        } else {
            size_t b1, b2;
            two_longest(sp, r, &b1, &b2);
            sort_time(sp, r, m, b1, b2, q->count, o, alt);
        }
        sp += r;
        o += m;
        alt += m;
    }
}

/* ---- a bucket as rounds ------------------------------------------------------ */

/* Is (ta, ka) before (tb, kb) in the local order? (time, then okey) */
#define BEFORE(ta, ka, tb, kb) ((ta) < (tb) || ((ta) == (tb) && (ka) < (kb)))

/* Insertion sort of a[0..n) in the local order. */
static void insertion_local(struct evq_entry *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct evq_entry x = a[i];
        uint64_t k = okey(&x);
        size_t j = i;
        while (j > 0 && (a[j - 1].t > x.t || (a[j - 1].t == x.t && okey(&a[j - 1]) > k))) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* The rounds of a[0..n): the longest stretches in the local order. Their
 * starts in b[0..k), b[k] = n; returns k. (Eight entries of one time are
 * tested in one step.) */
static size_t find_rounds(const struct evq_entry *a, size_t n, uint32_t *b)
{
    const struct evq_entry *e = a + 1, *end = a + n, *end8 = n >= 8 ? end - 7 : a;
    arb_time pt = a[0].t;
    uint32_t pg = evq_target(&a[0]), g, h;
    size_t k = 1;
    b[0] = 0;
    for (;;) {
        while (e < end8) {
            g = evq_target(&e[0]);
            if (e[0].t != pt || g < pg) goto other;
            RUN_STEP(1, h, g, other)
            RUN_STEP(2, g, h, other)
            RUN_STEP(3, h, g, other)
            RUN_STEP(4, g, h, other)
            RUN_STEP(5, h, g, other)
            RUN_STEP(6, g, h, other)
            RUN_STEP(7, h, g, other)
            pg = h;
            e += 8;
        }
        for (; e < end; e++) {
            g = evq_target(e);
            if (e->t != pt || g < pg) goto other;
            pg = g;
        }
        break;
    other: /* e is of another time than the one before, or a lower target */
        if (e->t <= pt) b[k++] = (uint32_t)(e - a);
        pt = e->t;
        pg = evq_target(e);
        e++;
    }
    b[k] = (uint32_t)n;
    return k;
}

/* Merge A[0..na) and B[0..nb), each in the local order and non-empty,
 * into out. */
static void merge2c(const struct evq_entry *A, size_t na, const struct evq_entry *B, size_t nb,
                    struct evq_entry *out)
{
    if (!BEFORE(A[na - 1].t, okey(&A[na - 1]), B[nb - 1].t, okey(&B[nb - 1]))) {
        const struct evq_entry *t = A;
        size_t tn = na;
        A = B;
        na = nb;
        B = t;
        nb = tn;
    }
    const struct evq_entry *ea = A + na, *eb = B + nb;
    arb_time ta = A->t, tb = B->t;
    uint64_t ka = okey(A), kb = okey(B);
    for (;;) {
        if (BEFORE(ta, ka, tb, kb)) {
            *out++ = *A++;
            if (A == ea) break;
            ta = A->t;
            ka = okey(A);
        } else {
            *out++ = *B++;
            tb = B->t;
            kb = okey(B);
        }
    }
    copy_entries(out, B, (size_t)(eb - B));
}

/* Merge A[0..na), B[0..nb) and C[0..nc), each in the local order and
 * non-empty, into out. */
static void merge3c(const struct evq_entry *A, size_t na, const struct evq_entry *B, size_t nb,
                    const struct evq_entry *C, size_t nc, struct evq_entry *out)
{
    const struct evq_entry *ea = A + na, *eb = B + nb, *ec = C + nc;
    arb_time ta = A->t, tb = B->t, tc = C->t;
    uint64_t ka = okey(A), kb = okey(B), kc = okey(C);
    for (;;) {
        if (BEFORE(ta, ka, tb, kb)) {
            if (BEFORE(ta, ka, tc, kc)) {
                *out++ = *A++;
                if (A == ea) break;
                ta = A->t;
                ka = okey(A);
                continue;
            }
        } else if (BEFORE(tb, kb, tc, kc)) {
            *out++ = *B++;
            if (B == eb) break;
            tb = B->t;
            kb = okey(B);
            continue;
        }
        *out++ = *C++;
        if (C == ec) break;
        tc = C->t;
        kc = okey(C);
    }
    if (A == ea) {
        A = C;
        ea = ec;
    } else if (B == eb) {
        B = C;
        eb = ec;
    }
    merge2c(A, (size_t)(ea - A), B, (size_t)(eb - B), out);
}

/* The spans s[0..r) (rounds), m entries, in the local order into dst, alt
 * as long meanwhile: the two longest and the others (sorted into alt) in
 * one three-way merge. s is reordered. */
static void sort_rounds(struct evq_span *s, size_t r, size_t m, struct evq_entry *dst,
                        struct evq_entry *alt)
{
    if (r == 1) {
        copy_entries(dst, s[0].a, m);
        return;
    }
    if (r == 2) {
        merge2c(s[0].a, s[0].n, s[1].a, s[1].n, dst);
        return;
    }
    size_t b1 = 0, b2 = 1;
    if (s[1].n > s[0].n) {
        b1 = 1;
        b2 = 0;
    }
    for (size_t i = 2; i < r; i++) {
        if (s[i].n > s[b1].n) {
            b2 = b1;
            b1 = i;
        } else if (s[i].n > s[b2].n) {
            b2 = i;
        }
    }
    struct evq_span x = s[b1], y = s[b2];
    size_t k = 0;
    for (size_t i = 0; i < r; i++)
        if (i != b1 && i != b2) s[k++] = s[i];
    size_t mr = m - x.n - y.n;
    const struct evq_entry *rest = s[0].a;
    if (k > 1) {
        if (mr <= SMALL_LOCAL * 2) {
            struct evq_entry *o = alt;
            for (size_t i = 0; i < k; i++)
                for (size_t j = 0; j < s[i].n; j++)
                    *o++ = s[i].a[j];
            insertion_local(alt, mr);
        } else {
            sort_rounds(s, k, mr, alt, dst);
        }
        rest = alt;
    }
    merge3c(x.a, x.n, y.a, y.n, rest, mr, dst);
}

/* The current run's n gathered entries in the local order as rounds. */
static void sort_by_rounds(struct evq *q, size_t n, arb_time base)
{
    uint32_t *b = q->bnd;
    size_t k = find_rounds(q->run, n, b);
    if (k == 1) return;
    if (k > ROUNDS_MAX) { /* (many short rounds: as cells, or blocks) */
        if (!evq_sort_cells(q, n, base)) sort_blocks(q, n, base);
        return;
    }
    struct evq_span *sp = q->spans;
    for (size_t i = 0; i < k; i++)
        sp[i] = (struct evq_span){q->run + b[i], b[i + 1] - b[i]};
    evq_swap_run(q);
    sort_rounds(sp, k, n, q->run, q->tmp);
}

/* ---- the entry points --------------------------------------------------------- */

/* The arrays of blocks, freed. */
static void free_blocks(struct evq *q)
{
    arb_free(q->tmp);
    arb_free(q->bnd);
    arb_free(q->tix);
    arb_free(q->spans);
    q->tmp = NULL;
    q->bnd = NULL;
    q->tix = NULL;
    q->spans = NULL;
    q->blk_cap = 0;
}

/* Room for the blocks of a bucket of n entries (their bounds, times and
 * spans, and a third array for merges) and the map of times. */
int evq_local_room(struct evq *q, size_t n)
{
    if (n <= SMALL_LOCAL) return 0;            /* (by insertion: none needed) */
    if (n > UINT32_MAX - 1) return ARB_ENOMEM; /* (positions are 32-bit) */
    if (!q->tmap && !(q->tmap = arb_calloc(BUCKET_PS, 1))) return ARB_ENOMEM;
    if (!q->tadj && !(q->tadj = arb_malloc(BUCKET_PS * sizeof *q->tadj))) return ARB_ENOMEM;
    if (q->blk_cap > n) return 0;
    /* (what the arrays held is spent: new ones, not a copy) */
    size_t cap = 2 * n + 1;
    free_blocks(q);
    q->tmp = arb_malloc(cap * sizeof *q->tmp);
    q->bnd = arb_malloc(cap * sizeof *q->bnd);
    q->tix = arb_malloc(cap);
    q->spans = arb_malloc(cap * sizeof *q->spans);
    if (!q->tmp || !q->bnd || !q->tix || !q->spans) return ARB_ENOMEM;
    q->blk_cap = cap;
    return 0;
}

/* A bucket's blocks are long (a fabric in lockstep: sort_blocks) when
 * fewer than LONG_BREAKS of PROBE pairs of neighbours spread over it
 * break a block (another time, or a lower target); else it is sorted as
 * cells (evq_cells.c). Out of lockstep a block holds 2.7 entries on
 * average, 12 of 32 pairs breaking; in bench/sim_instr's 1024-host
 * stretch mostly 8 to 16 (the probe sends under 2% of the entries to
 * the cells), in its 16,384-host one hundreds. (64 pairs, each tested
 * with a branch, cost 0.6 instructions an entry more there.) */
#define PROBE 32
#define LONG_BREAKS 7

static int long_blocks(const struct evq_entry *a, size_t n)
{
    size_t step = n / PROBE, breaks = 0;
    for (size_t i = 1; i < n; i += step)
        breaks += (a[i].t != a[i - 1].t) | (evq_target(&a[i]) < evq_target(&a[i - 1]));
    return breaks < LONG_BREAKS;
}

void evq_sort_local(struct evq *q, size_t n, arb_time base)
{
    if (n <= SMALL_LOCAL)
        insertion_local(q->run, n);
    else if (n <= ROUNDS_LOCAL)
        sort_by_rounds(q, n, base);
    else if (long_blocks(q->run, n) || !evq_sort_cells(q, n, base))
        sort_blocks(q, n, base);
}

void evq_free_local(struct evq *q)
{
    free_blocks(q);
    arb_free(q->tmap);
    arb_free(q->tadj);
}
