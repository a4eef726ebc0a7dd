/*
 * evq.h - the simulator's event queue: events ordered by (time, insertion
 * sequence), so that equal times pop in insertion order and a run is a pure
 * function of its inputs.
 *
 * Almost every event a packet simulator schedules lands a link delay or a
 * serialisation time ahead, so the queue is a timing wheel: 2^EVQ_WHEEL_BITS
 * buckets of 2^EVQ_BUCKET_SHIFT ps each. An event within the wheel's horizon
 * is appended to its bucket in O(1); a bucket is sorted once, when the wheel
 * reaches it. Events beyond the horizon (timeouts) wait in a 4-ary heap and
 * move into the wheel as it turns. The order is exactly that of a heap keyed
 * by (time, sequence); only the cost differs.
 *
 * An entry is 16 bytes: the time, and the insertion sequence number in the
 * high 36 bits of a second word whose low 28 bits name the target (a port
 * event slot or a host timer). Targets are small integers the simulator
 * assigns; the queue does not interpret them.
 */
#ifndef ARBOR_SIM_EVQ_H
#define ARBOR_SIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"

#define EVQ_TARGET_BITS 28
#define EVQ_TARGET_MAX ((1u << EVQ_TARGET_BITS) - 1)
#define EVQ_SEQ_MAX ((UINT64_C(1) << (64 - EVQ_TARGET_BITS)) - 1)

#define EVQ_BUCKET_SHIFT 10 /* 1.024 ns per bucket */
#define EVQ_WHEEL_BITS 14   /* 16384 buckets: a horizon of 16.8 us */

struct evq_entry {
    arb_time t;
    uint64_t key; /* seq << EVQ_TARGET_BITS | target */
};

struct evq_bucket {
    struct evq_entry *e;
    uint32_t n, cap;
};

struct evq {
    struct evq_bucket *wheel; /* 2^EVQ_WHEEL_BITS buckets */
    uint64_t cur;             /* absolute index (t >> shift) of the current bucket */
    uint32_t pos;             /* next entry of the current bucket */
    int sorted;               /* the current bucket is sorted from pos on */
    size_t in_wheel;          /* entries in the wheel */
    uint64_t *occ;            /* a bit per bucket: it holds entries */
    struct evq_entry *h;      /* the overflow heap */
    size_t hn, hcap;
    struct evq_entry *scratch; /* merge-sort buffer */
    size_t scratch_cap;
    size_t n;     /* entries in all */
    uint64_t seq; /* next insertion sequence number */
};

int evq_init(struct evq *q, size_t cap);
void evq_free(struct evq *q);

/*
 * Insert an event for `target` at time t, which must not be earlier than
 * the last event popped; returns its sequence number (>= 0) or ARB_ENOMEM /
 * ARB_ERANGE (target too large, or the sequence space is exhausted).
 */
int64_t evq_push(struct evq *q, arb_time t, uint32_t target);

/* The earliest event's time, or ARB_TIME_NEVER when empty. (It may sort
 * or advance the wheel, hence not const.) */
arb_time evq_peek_time(struct evq *q);

/* Remove the earliest event; 0 when empty, 1 otherwise. */
int evq_pop(struct evq *q, arb_time *t, uint32_t *target, uint64_t *seq);

/* The same, but only an event at or before `until` (0 otherwise): one
 * look at the wheel instead of a peek and a pop. */
int evq_pop_until(struct evq *q, arb_time until, arb_time *t, uint32_t *target, uint64_t *seq);

#endif
