/* The event queue's local order (evq.h) for a bucket out of lockstep:
 * the bucket sorted by (time, target, sequence) as cells.
 *
 * Out of lockstep a bucket holds some 25 times, appended interleaved in
 * stretches of about three entries of one time, and a time's targets in
 * no order to speak of (scenarios/bench-perm16k.ini between 40 and 60 us:
 * blocks of 2.7 entries, half the entries in times of 128 or more).
 * Merging such blocks (evq_local.c) took 86 instructions an entry there.
 * Here each time gets as many cells as it has entries, rounded up to a
 * power of two, over the range of its targets (a cell holds one entry on
 * average, a few in a crowded stretch of targets): 68 an entry.
 *
 * Two passes over the bucket and one over the cells: the stretches of one
 * time (the times numbered through q->tmap; each time's count and least
 * and greatest target); each entry onto its cell's list, the lists kept
 * in the order the entries were appended; the cells in the order of
 * (time, target), each entry of a cell inserted after those of the cell
 * it follows, by target and then sequence number (okey): the order of
 * evq.c's heap. (Lists rather than a counting sort: no pass over the
 * cells to sum their counts, and no array of each entry's cell, 1.7
 * instructions an entry fewer. Half as many cells cost 1.1 more; twice
 * as many, 11 more, measured with the counting sort.) */
#include "evq.h"

#include <string.h>

#define BUCKET_PS (1u << EVQ_BUCKET_SHIFT)

/* The most times a bucket may hold here (numbered in a byte). */
#define CELL_TIMES 255

/* (as evq_local.c's) */
static inline uint64_t okey(const struct evq_entry *e)
{
    return e->key << EVQ_SEQ_BITS | e->key >> EVQ_TARGET_BITS;
}

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

/* Each time of a bucket, by its number (1..): its time, entries, least
 * and greatest target; then its cells: the shift of a target and the
 * offset that make (target >> sh) + adj its cell. */
struct cell_times {
    arb_time t[CELL_TIMES + 1];
    uint32_t cnt[CELL_TIMES + 1], lo[CELL_TIMES + 1], hi[CELL_TIMES + 1], adj[CELL_TIMES + 1];
    uint8_t sh[CELL_TIMES + 1];
    uint32_t n;
};

/* The stretches of one time of e[0..n) (e[n] a sentinel of another time
 * than e[n - 1]'s):
 * their starts in rs[0..k), rs[k] = n, their times' numbers in rx[0..k),
 * the times in *ct (tmap maps a time within the bucket to its number).
 * Returns k, or 0 past CELL_TIMES times (tmap all 0 again). */
static size_t find_times(const struct evq_entry *e, size_t n, arb_time base, uint8_t *tmap,
                         uint32_t *rs, uint8_t *rx, struct cell_times *ct)
{
    const struct evq_entry *p = e, *end = e + n;
    uint32_t nt = 0;
    size_t k = 0;
    while (p < end) {
        arb_time t = p->t;
        const struct evq_entry *r = p++;
        uint32_t l = evq_target(r), h = l;
        while (p->t == t) { /* (the sentinel ends the last) */
            uint32_t g = evq_target(p++);
            l = g < l ? g : l;
            h = g > h ? g : h;
        }
        uint32_t d = (uint32_t)(t - base), x = tmap[d];
        if (__builtin_expect(!x, 0)) {
            if (nt == CELL_TIMES) {
                for (uint32_t i = 1; i <= nt; i++)
                    tmap[ct->t[i] - base] = 0;
                return 0;
            }
            x = tmap[d] = (uint8_t)++nt;
            ct->t[x] = t;
            ct->cnt[x] = 0;
            ct->lo[x] = l;
            ct->hi[x] = h;
        }
        ct->cnt[x] += (uint32_t)(p - r);
        ct->lo[x] = l < ct->lo[x] ? l : ct->lo[x];
        ct->hi[x] = h > ct->hi[x] ? h : ct->hi[x];
        rs[k] = (uint32_t)(r - e);
        rx[k++] = (uint8_t)x;
    }
    rs[k] = (uint32_t)n;
    ct->n = nt;
    return k;
}

/* The cells of the times of *ct, in the order of the times (found in a
 * map of the bucket's picoseconds; tmap all 0 again): each time's shift
 * and offset. Returns the number of cells, at most 2n: a time of m > 1
 * entries takes at most 2^log2_up(m) + 1 <= 2m, one of one entry one. */
static uint32_t lay_cells(struct cell_times *ct, arb_time base, uint8_t *tmap)
{
    uint64_t tbits[BUCKET_PS / 64] = {0};
    for (uint32_t x = 1; x <= ct->n; x++) {
        uint32_t d = (uint32_t)(ct->t[x] - base);
        tbits[d >> 6] |= UINT64_C(1) << (d & 63);
    }
    uint32_t cells = 0;
    for (uint32_t w = 0; w < BUCKET_PS / 64; w++)
        for (uint64_t bits = tbits[w]; bits; bits &= bits - 1) {
            uint32_t d = w << 6 | (uint32_t)__builtin_ctzll(bits), x = tmap[d];
            tmap[d] = 0;
            uint32_t lo = ct->lo[x], hi = ct->hi[x];
            unsigned span = lo == hi ? 0 : 32 - (unsigned)__builtin_clz(hi - lo);
            unsigned want = log2_up(ct->cnt[x]), sh = span > want ? span - want : 0;
            ct->sh[x] = (uint8_t)sh;
            ct->adj[x] = cells - (lo >> sh);
            cells += (hi >> sh) - (lo >> sh) + 1;
        }
    return cells;
}

int evq_sort_cells(struct evq *q, size_t n, arb_time base)
{
    struct cell_times ct;
    struct evq_entry *e = q->run;
    /* (evq_local_room: blk_cap > n, so the work arrays hold n + 1 each) */
    uint8_t *rx = q->tix;
    uint32_t *rs = q->bnd, *next = (uint32_t *)(void *)q->tmp;
    uint32_t *head = (uint32_t *)(void *)q->spans;
    e[n].t = ~e[n - 1].t; /* (a sentinel: the last stretch's time it is not) */
    size_t k = find_times(e, n, base, q->tmap, rs, rx, &ct);
    if (k == 0) return 0;
    uint32_t cells = lay_cells(&ct, base, q->tmap);
    /* each cell's entries in a list (1 + index; 0 ends it), in the order
     * they were appended: the stretches taken from the last */
    zero_counts(head, cells);
    for (size_t r = k; r-- > 0;) {
        uint32_t x = rx[r], sh = ct.sh[x], adj = ct.adj[x];
        for (uint32_t i = rs[r + 1]; i-- > rs[r];) {
            uint32_t c = (evq_target(&e[i]) >> sh) + adj;
            next[i] = head[c];
            head[c] = i + 1;
        }
    }
    /* the cells in order, each entry inserted after those of its cell it
     * follows */
    struct evq_entry *o = q->scratch;
    for (uint32_t c = 0; c < cells; c++) {
        uint32_t i = head[c];
        if (!i) continue;
        struct evq_entry *cs = o;
        *o++ = e[i - 1];
        for (i = next[i - 1]; i; i = next[i - 1]) {
            struct evq_entry *w = o++;
            uint64_t key = okey(&e[i - 1]);
            while (w > cs && okey(w - 1) > key) {
                *w = w[-1];
                w--;
            }
            *w = e[i - 1];
        }
    }
    evq_swap_run(q);
    return 1;
}
