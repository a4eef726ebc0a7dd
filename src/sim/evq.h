/*
 * evq.h - the simulator's event queue: events ordered by (time, insertion
 * sequence), so that equal times pop in insertion order and a run is a pure
 * function of its inputs; or, in the local order (evq_set_local), by (time,
 * target, insertion sequence).
 *
 * In the local order events of one time pop in the order of their targets
 * (a port's event slot, a host's timer: small integers the simulator
 * assigns), and only events of one target and one time in insertion order.
 * That order is one every part of a partitioned fabric can compute alone: a
 * target belongs to one part, which alone inserts its events, whereas a
 * global insertion counter would need every part's history
 * (docs/partition.md).
 *
 * Almost every event a packet simulator schedules lands a link delay or a
 * serialisation time ahead, so the queue is a timing wheel: 2^EVQ_WHEEL_BITS
 * buckets of 2^EVQ_BUCKET_SHIFT ps each. An event within the wheel's horizon
 * is appended to its bucket in O(1); buckets are chains of fixed chunks
 * drawn from one free list, so memory follows the events pending, not the
 * busiest bucket ever seen times the number of buckets. When the wheel
 * reaches a bucket its chunks are gathered into one array (the current
 * run) and sorted there: a bucket's entries were appended in sequence
 * order, so a stable counting sort on the time within the bucket gives
 * (time, sequence) order in linear time however many share the bucket. In
 * the local order the bucket is instead taken as the stretches of ascending
 * targets of one time it was appended in, a few for each time when events
 * are scheduled in that order as a fabric in lockstep mostly does, and
 * each time's are merged (evq_local.c).
 * Events beyond the horizon (timeouts) wait in a 4-ary heap and move into
 * the wheel as it turns. The order is exactly that of a heap keyed by
 * (time, key); only the cost differs. An event inserted at the time being
 * drained takes its place among those of that time not yet popped.
 *
 * An entry is 16 bytes: the time, and a key: the insertion sequence number
 * in the high 36 bits and the target (a port event slot or a host timer) in
 * the low 28 (the local order compares the target first). Targets are
 * small integers the simulator assigns; the queue does not interpret them.
 */
#ifndef ARBOR_SIM_EVQ_H
#define ARBOR_SIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"

#define EVQ_TARGET_BITS 28
#define EVQ_TARGET_MAX ((1u << EVQ_TARGET_BITS) - 1)
#define EVQ_SEQ_BITS (64 - EVQ_TARGET_BITS)
#define EVQ_SEQ_MAX ((UINT64_C(1) << EVQ_SEQ_BITS) - 1)

#define EVQ_BUCKET_SHIFT 12 /* 4.096 ns per bucket */
#define EVQ_WHEEL_BITS 14   /* 16384 buckets: a horizon of 67.1 us */

struct evq_entry {
    arb_time t;
    uint64_t key; /* seq << EVQ_TARGET_BITS | target */
};

#define EVQ_CHUNK 15 /* entries per chunk: 256-byte chunks */

struct evq_span; /* (evq_local.c) */

struct evq_chunk {
    struct evq_entry e[EVQ_CHUNK];
    uint32_t next; /* the next chunk of the bucket, or of the free list */
    uint32_t unused[3];
};
_Static_assert(sizeof(struct evq_chunk) == 256, "a chunk's index becomes its offset by a shift");

/* A bucket: a chain of chunks, `tn` entries in the last one. */
struct evq_bucket {
    uint32_t head, tail, tn;
};

struct evq {
    struct evq_bucket *wheel; /* 2^EVQ_WHEEL_BITS buckets */
    uint64_t *occ;            /* a bit per bucket: it holds entries */
    struct evq_chunk *chunks; /* every chunk, by index */
    uint32_t n_chunks, cap_chunks;
    uint32_t free_chunk;   /* head of the free chunks */
    uint64_t cur;          /* absolute index (t >> shift) of the current bucket */
    struct evq_entry *run; /* the current bucket, sorted: run[pos .. rn) */
    size_t pos, rn, rcap;
    size_t in_wheel;     /* entries in the wheel's chunks */
    struct evq_entry *h; /* the overflow heap */
    size_t hn, hcap;
    struct evq_entry *scratch; /* the gathered bucket before sorting */
    size_t scratch_cap;
    uint32_t *count;   /* counting sort: one counter per ps of a bucket */
    uint64_t seq;      /* next insertion sequence number */
    int local;         /* the local order: events of one time by target (evq_set_local) */
    int batch;         /* evq_batch_begin: pushes into the current run wait unsorted */
    size_t batch_from; /* where they start */
    /* the local order's sort of a bucket (evq_local.c) */
    struct evq_entry *tmp;  /* a third array for merges */
    uint32_t *bnd;          /* where each block or round starts */
    uint8_t *tix;           /* each block's time, numbered */
    struct evq_span *spans; /* the blocks or rounds as stretches */
    size_t blk_cap;         /* of tmp, bnd, tix and spans */
    uint8_t *tmap;          /* a time within the bucket's number (0: none yet) */
    int32_t *tadj;          /* evq_cells.c: a time within the bucket's first cell */
};

/* The target of an entry. */
static inline uint32_t evq_target(const struct evq_entry *e)
{
    return (uint32_t)(e->key & EVQ_TARGET_MAX);
}

/* Order events of one time by target (the local order), before the
 * first push. */
void evq_set_local(struct evq *q);

/* Many pushes at once (a partitioned run's arrivals from other parts):
 * between these two, those that fall in the bucket being drained are
 * appended unsorted, then sorted in together (one sort and a merge rather
 * than an insertion each). No pop between them. evq_batch_end: 0 or
 * ARB_ENOMEM. */
void evq_batch_begin(struct evq *q);
int evq_batch_end(struct evq *q);

int evq_init(struct evq *q, size_t cap);
void evq_free(struct evq *q);

/* The slow paths of the inline functions below (evq.c). */
int64_t evq_push_slow(struct evq *q, arb_time t, uint32_t target);
/* The current run with an entry to pop, the next bucket gathered and
 * sorted when it is drained: 1, 0 when the queue is empty, ARB_ENOMEM
 * when the bucket could not be gathered (the queue is unchanged). */
int evq_load(struct evq *q);

/* evq_push's common case, inline: a later bucket within the horizon whose
 * last chunk has room. 1 if the event went in; 0 if it did not, and
 * evq_push must insert it (a caller with nothing else to keep across that
 * call may then make it from a frame of its own). */
static inline int evq_push_try(struct evq *q, arb_time t, uint32_t target)
{
    uint64_t bi = t >> EVQ_BUCKET_SHIFT, seq = q->seq;
    struct evq_bucket *b = &q->wheel[bi & ((1u << EVQ_WHEEL_BITS) - 1)];
    if (bi - q->cur - 1 >= (1u << EVQ_WHEEL_BITS) - 1 || b->tn - 1u >= EVQ_CHUNK - 1u ||
        target > EVQ_TARGET_MAX || seq > EVQ_SEQ_MAX)
        return 0;
    struct evq_entry *e = &q->chunks[b->tail].e[b->tn++];
    e->t = t;
    e->key = seq << EVQ_TARGET_BITS | target;
    q->seq = seq + 1;
    q->in_wheel++;
    return 1;
}

/*
 * Insert an event for `target` at time t, which must not be earlier than
 * the last event popped; returns its sequence number (>= 0) or ARB_ENOMEM /
 * ARB_ERANGE (target too large, or the sequence space is exhausted).
 */
static inline int64_t evq_push(struct evq *q, arb_time t, uint32_t target)
{
    uint64_t seq = q->seq;
    return evq_push_try(q, t, target) ? (int64_t)seq : evq_push_slow(q, t, target);
}

/* Remove the earliest event if it is at or before `until`: 1 if one was
 * removed, 0 otherwise (none so early, or the queue is empty), ARB_ENOMEM
 * when the next bucket could not be gathered (the queue is unchanged). */
static inline int evq_pop_until(struct evq *q, arb_time until, arb_time *t, uint32_t *target,
                                uint64_t *seq)
{
    if (q->pos == q->rn) { /* (not handing the pointers out keeps them in registers) */
        int rc = evq_load(q);
        if (rc <= 0) return rc;
    }
    const struct evq_entry *e = &q->run[q->pos];
    if (e->t > until) return 0;
    q->pos++;
    *t = e->t;
    *target = evq_target(e);
    if (seq) *seq = e->key >> EVQ_TARGET_BITS;
    return 1;
}

/* The target of the event d places after the next one to pop, if it is in
 * the bucket being drained (a hint for prefetching), else UINT32_MAX. */
static inline uint32_t evq_ahead(const struct evq *q, size_t d)
{
    return q->pos + d < q->rn ? evq_target(&q->run[q->pos + d]) : UINT32_MAX;
}

/* Swap the current run and the scratch array (both with room for the
 * bucket): the gathered entries become a sort's input, run its output. */
static inline void evq_swap_run(struct evq *q)
{
    struct evq_entry *t = q->run;
    size_t cap = q->rcap;
    q->run = q->scratch;
    q->rcap = q->scratch_cap;
    q->scratch = t;
    q->scratch_cap = cap;
}

/* The local order's sort (evq_local.c) of the bucket that starts at base,
 * gathered into the current run's n entries in the order they were
 * appended (the run and the scratch array have room for n + 1), after
 * evq_local_room(q, n) (0 or ARB_ENOMEM) made room for its work (none
 * needed while n < blk_cap);
 * evq_free_local: the arrays it keeps, freed.
 * evq_sort_cells (evq_cells.c): the same sort for a bucket of many short
 * blocks (n > 16); 0 if the bucket holds too many times for it (nothing
 * changed), 1 when sorted. */
int evq_local_room(struct evq *q, size_t n);
void evq_sort_local(struct evq *q, size_t n, arb_time base);
void evq_free_local(struct evq *q);
int evq_sort_cells(struct evq *q, size_t n, arb_time base);

/* The earliest event's time, or ARB_TIME_NEVER when empty. (It may sort
 * or advance the wheel, hence not const.) */
arb_time evq_peek_time(struct evq *q);

/* Remove the earliest event; 0 when empty, 1 otherwise, or ARB_ENOMEM. */
int evq_pop(struct evq *q, arb_time *t, uint32_t *target, uint64_t *seq);

#endif
