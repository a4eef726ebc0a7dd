/* The event queue's local order (evq.h) for a bucket out of lockstep:
 * the bucket sorted by (time, target, sequence) as cells.
 *
 * Out of lockstep a bucket holds some 25 times, appended interleaved in
 * stretches of about three entries of one time, and a time's targets in
 * no order to speak of (scenarios/bench-perm16k.ini between 40 and 60 us:
 * blocks of 2.7 entries, half the entries in times of 128 or more).
 * Merging such blocks (evq_local.c) took 86 instructions an entry there.
 * Here each time gets as many cells as it has entries, rounded up to a
 * power of two, over a range that holds its targets (a cell holds one
 * entry on average, a few in a crowded stretch of targets): 52 an entry.
 *
 * Two passes over the bucket and one over the cells: the stretches of one
 * time (the times numbered through q->tmap; each time's count, and the
 * bits all its targets have and those any has: the range from the one to
 * the other holds them, one instruction an entry each where the least
 * and greatest target took two and a load, for 0.3 more collisions an
 * entry in the cells); each entry onto its cell's list, its cell found
 * from its time within the bucket (q->tmap and q->tadj, laid out for the
 * bucket's times), the lists kept in the order the entries were
 * appended; the cells in the order of (time, target), each entry of a
 * cell inserted after those of the cell it follows by target, entries of
 * one target keeping the order they were appended in, that of their
 * sequence numbers: the order of evq.c's heap. (Lists rather than a
 * counting sort: no pass over the cells to sum their counts, and no array
 * of each entry's cell. Half as many cells or twice as many cost 2.1 and
 * 1.7 instructions an entry more.) */
#include "evq.h"

#include <string.h>

#define BUCKET_PS (1u << EVQ_BUCKET_SHIFT)

/* The most times a bucket may hold here (numbered in a byte). */
#define CELL_TIMES 255

static unsigned log2_up(size_t r)
{
    return r > 1 ? 64 - (unsigned)__builtin_clzll(r - 1) : 0;
}

/* Zero n counters in pieces: one memset of more than 2 KiB is `rep
 * stosb`, which callgrind (bench/sim_instr) counts a byte at a time (3.6
 * instructions an entry at first). */
#define ZERO_PIECE 256

static void zero_counts(uint32_t *c, size_t n)
{
    while (n) {
        size_t k = n < ZERO_PIECE ? n : ZERO_PIECE;
        memset(c, 0, k * sizeof *c);
        c += k;
        n -= k;
    }
}

/* The times of a bucket, by their numbers (1..): each time, its entries
 * (times 16: the bytes they take), and the bits all its entries' keys
 * have (lo) and any has (hi): its targets lie in [lo, hi] once the bits
 * above the target are cleared. */
struct cell_times {
    arb_time t[CELL_TIMES + 1];
    uint32_t bytes[CELL_TIMES + 1], lo[CELL_TIMES + 1], hi[CELL_TIMES + 1];
    uint32_t n;
};

/* The times of e[0..n) (e[n] a sentinel of another time than e[n - 1]'s),
 * taken in stretches of one time, into *ct (numbered through tmap, which
 * maps a time within the bucket to its number). 1, or 0 past CELL_TIMES
 * times (tmap all 0 again). */
static int find_times(const struct evq_entry *e, size_t n, arb_time base, uint8_t *restrict tmap,
                      struct cell_times *restrict ct)
{
    const struct evq_entry *p = e, *end = e + n;
    uint32_t nt = 0;
    while (p < end) {
        arb_time t = p->t;
        const struct evq_entry *r = p++;
        uint32_t all = (uint32_t)r->key, any = all;
        while (p->t == t) { /* (the sentinel ends the last) */
            all &= (uint32_t)p->key;
            any |= (uint32_t)p++->key;
        }
        uint32_t d = (uint32_t)(t - base), x = tmap[d];
        if (__builtin_expect(!x, 0)) {
            if (nt == CELL_TIMES) {
                for (uint32_t j = 1; j <= nt; j++)
                    tmap[ct->t[j] - base] = 0;
                return 0;
            }
            x = tmap[d] = (uint8_t)++nt;
            ct->t[x] = t;
            ct->bytes[x] = 0;
            ct->lo[x] = all;
            ct->hi[x] = any;
        }
        ct->bytes[x] += (uint32_t)((const char *)p - (const char *)r);
        ct->lo[x] &= all;
        ct->hi[x] |= any;
    }
    ct->n = nt;
    return 1;
}

/* The cells of the times of *ct, in the order of the times (found in a
 * map of the bucket's picoseconds): for a time d within the bucket, the
 * shift of a target and the offset that make (target >> tmap[d]) +
 * tadj[d] its cell. Returns the number of cells, at most 2n: a time of
 * m > 1 entries takes at most 2^log2_up(m) + 1 <= 2m, one of one entry
 * one. */
static uint32_t lay_cells(const struct cell_times *ct, arb_time base, uint8_t *restrict tmap,
                          int32_t *restrict tadj)
{
    uint64_t tbits[BUCKET_PS / 64] = {0};
    for (uint32_t x = 1; x <= ct->n; x++) {
        uint32_t d = (uint32_t)(ct->t[x] - base);
        tbits[d >> 6] |= UINT64_C(1) << (d & 63);
    }
    uint32_t cells = 0;
    for (uint32_t w = 0; w < BUCKET_PS / 64; w++)
        for (uint64_t bits = tbits[w]; bits; bits &= bits - 1) {
            uint32_t d = w << 6 | (uint32_t)__builtin_ctzll(bits);
            uint32_t x = tmap[d], lo = ct->lo[x] & EVQ_TARGET_MAX, hi = ct->hi[x] & EVQ_TARGET_MAX;
            unsigned span = lo == hi ? 0 : 32 - (unsigned)__builtin_clz(hi - lo);
            unsigned want = log2_up(ct->bytes[x] / sizeof(struct evq_entry));
            unsigned sh = span > want ? span - want : 0;
            tmap[d] = (uint8_t)sh;
            tadj[d] = (int32_t)cells - (int32_t)(lo >> sh);
            cells += (hi >> sh) - (lo >> sh) + 1;
        }
    return cells;
}

/* The cells' lists hold links: an entry's position in bytes (16 times
 * its index) plus 16, 0 ending a list; the link after an entry is in the
 * array of links (n entries of 16 bytes, the first 4 of each used) at
 * the entry's position, so one offset finds both. */
#define LINK(a, i) (*(uint32_t *)(void *)((char *)(a) + (i) - sizeof(struct evq_entry)))
#define LINKED(e, i)                                                                               \
    ((const struct evq_entry *)(const void *)((const char *)(e) + (i) - sizeof(struct evq_entry)))

/* Each entry onto its cell's list (head[] the cells'), in the order they
 * were appended: taken from the last. */
static void fill_cells(const struct evq_entry *e, size_t n, arb_time base, const uint8_t *tmap,
                       const int32_t *tadj, uint32_t *restrict head, struct evq_entry *links)
{
    for (size_t i = n * sizeof *e; i > 0; i -= sizeof *e) {
        const struct evq_entry *x = LINKED(e, i);
        size_t d = (size_t)(x->t - base);
        ptrdiff_t c = (ptrdiff_t)((x->key & EVQ_TARGET_MAX) >> tmap[d]) + tadj[d];
        LINK(links, i) = head[c];
        head[c] = (uint32_t)i;
    }
}

/* Cell i's list (i its first link, i > 0) into o, each entry inserted
 * after those it follows: by target (entries of one target are in the
 * order they were appended, that of their sequence numbers). Returns the
 * end of what it wrote. */
static inline struct evq_entry *write_cell(const struct evq_entry *e, struct evq_entry *links,
                                           uint32_t i, struct evq_entry *restrict o)
{
    struct evq_entry *cs = o;
    *o++ = *LINKED(e, i);
    for (i = LINK(links, i); i; i = LINK(links, i)) {
        const struct evq_entry *x = LINKED(e, i);
        uint32_t g = evq_target(x);
        struct evq_entry *w = o++;
        if (evq_target(w - 1) > g) { /* (w - 1 is of this cell) */
            do {
                *w = w[-1];
                w--;
            } while (w > cs && evq_target(w - 1) > g);
        }
        *w = *x;
    }
    return o;
}

/* The cells' lists in order into o; head[cells] is 0 (the cells are taken
 * in pairs, a pair of empty ones in one test). */
static void write_cells(const struct evq_entry *e, size_t cells, const uint32_t *head,
                        struct evq_entry *links, struct evq_entry *restrict o)
{
    for (size_t c = 0; c < cells; c += 2) {
        uint64_t two;
        memcpy(&two, head + c, sizeof two);
        if (!two) continue;
        if (head[c]) o = write_cell(e, links, head[c], o);
        if (head[c + 1]) o = write_cell(e, links, head[c + 1], o);
    }
}

int evq_sort_cells(struct evq *q, size_t n, arb_time base)
{
    struct cell_times ct;
    struct evq_entry *e = q->run;
    /* (evq_local_room: blk_cap > n, so the work arrays hold n + 1 each) */
    uint32_t *head = (uint32_t *)(void *)q->spans;
    e[n].t = ~e[n - 1].t; /* (a sentinel: the last stretch's time it is not) */
    if (n > UINT32_MAX / sizeof *e - 1 || !find_times(e, n, base, q->tmap, &ct)) return 0;
    uint32_t cells = lay_cells(&ct, base, q->tmap, q->tadj);
    zero_counts(head, cells + 1);
    fill_cells(e, n, base, q->tmap, q->tadj, head, q->tmp);
    for (uint32_t x = 1; x <= ct.n; x++)
        q->tmap[ct.t[x] - base] = 0;
    write_cells(e, cells, head, q->tmp, q->scratch);
    evq_swap_run(q);
    return 1;
}
