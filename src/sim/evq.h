/*
 * evq.h - the simulator's event queue: a 4-ary min-heap of (time, seq)
 * keys, each naming a target slot. Equal times pop in insertion order, so a
 * run is a pure function of its inputs.
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

struct evq_entry {
    arb_time t;
    uint64_t key; /* seq << EVQ_TARGET_BITS | target */
};

struct evq {
    struct evq_entry *h;
    size_t n, cap;
    uint64_t seq; /* next insertion sequence number */
};

int evq_init(struct evq *q, size_t cap);
void evq_free(struct evq *q);

/*
 * Insert an event for `target` at time t; returns its sequence number
 * (>= 0) or ARB_ENOMEM / ARB_ERANGE (target too large, or the sequence
 * space is exhausted).
 */
int64_t evq_push(struct evq *q, arb_time t, uint32_t target);

/* The earliest event's time, or ARB_TIME_NEVER when empty. */
static inline arb_time evq_peek_time(const struct evq *q)
{
    return q->n ? q->h[0].t : ARB_TIME_NEVER;
}

/* Remove the earliest event; 0 when empty, 1 otherwise. */
int evq_pop(struct evq *q, arb_time *t, uint32_t *target, uint64_t *seq);

#endif
