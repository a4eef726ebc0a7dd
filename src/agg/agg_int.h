/*
 * The aggregator engine's insides, shared by its files: agg.c (the slot
 * pool, credits down, requests up) and recredit.c (local repair's
 * re-credit: the switch's own order and timer on its partial slots).
 */
#ifndef ARB_AGG_INT_H
#define ARB_AGG_INT_H

#include "arbor/agg.h"

enum { SLOT_FREE = 0, SLOT_LIVE = 1, SLOT_DONE = 2 };
/* Ways of the recent table's sets (local repair). */
#define RECENT_WAYS 4u

typedef struct slot {
    uint64_t channel;     /* owner: channel identity */
    uint64_t gen;         /* allocation number of the current owner (0: never) */
    uint64_t owner_sig;   /* mix of (channel, offset, attempt, gen), written at allocation */
    uint64_t contrib_gen; /* gen under which the held contributions were counted */
    arb_time t_alloc;     /* allocation time */
    arb_time t_first;     /* first contribution's time */
    uint32_t offset;      /* owner: credit offset (24 bits) */
    uint32_t count;       /* original contributions gathered (sum of offset_b) */
    uint32_t ncontrib;    /* packets counted, one per port */
    uint32_t len;         /* payload bytes of the first contribution */
    uint8_t state;        /* SLOT_* */
    uint8_t fanin;        /* fan-in of the first contribution (0: none yet) */
    uint8_t dtype;        /* of the first contribution */
    uint8_t op;           /* of the first contribution */
    uint8_t payload_valid;
    uint8_t ce;      /* OR of the contributions' CE bits */
    uint8_t attempt; /* owner: the credit context's attempt (the latest that adopted it) */
    /* once complete, what its aggregate carried beyond the slot's own
     * fields, to send it again for a later attempt (replay) */
    uint8_t msg_id, ext, pkind, out_depth;
    uint8_t at_depth; /* the stack depth the owning credit pushed it at */
    uint8_t seeded;   /* its credit's seed (the responder's own input) is in the accumulator */
    /* re-credit (local repair): the credit as it went down, when, to which
     * ports (expect, per slot in `bitmap`'s shape), and the timer */
    uint8_t tries;       /* re-credits sent */
    uint8_t resent;      /* its credit went down more than once (re-credit, adoption) */
    uint8_t cred_ce;     /* the CE bit its credit went down with */
    uint8_t judged;      /* an answer told whether its last re-credit was spurious */
    uint32_t arm_seq;    /* the queue entry that is this slot's timer */
    uint32_t cred_len;   /* its payload's length (header-only: what it stands for) */
    arb_time t_credit;   /* when it went down */
    arb_time due;        /* the timer; ARB_TIME_NEVER: none */
    arb_time t_recredit; /* the last re-credit */
    uint64_t arm_no;     /* its credit's place in the order credits went down (0: none) */
    arb_hdr cred;        /* the credit as it went down (its stack pushed) */
    uint8_t out_fanin[ARB_MAX_DEPTH];
} slot;

struct arb_agg {
    arb_agg_config cfg;
    uint32_t nslots;
    uint32_t next;  /* the next slot the rotation hands out */
    uint32_t words; /* bitmap words per slot */
    uint64_t gen;   /* allocations so far */
    slot *slots;
    uint64_t *bitmap; /* nslots x words: ports that contributed */
    uint8_t *acc;     /* nslots x max_payload, NULL in header-only mode */
    /* local repair: the slot a (channel, offset) was last given (id + 1;
     * 0 none), by hash, RECENT_WAYS-way set-associative: a hit is checked
     * against the slot's owner; an entry whose slot went to another
     * context, or is no longer fresh, is replaced first, then the oldest */
    uint32_t *recent;
    uint32_t recent_mask;
    /* re-credit: per slot the ports a credit went to, and (values) its
     * payload; a FIFO of timers by arming time (qcap entries); the
     * completion estimate (srtt, rttvar) of slots not re-credited */
    uint64_t *expect;
    uint8_t *cpay;
    struct timer {
        uint32_t slot, seq;
        arb_time due;
    } * q;
    uint32_t qcap, qhead, qlen;
    arb_time srtt, rttvar, maxrtt, minrtt;
    /* a re-credit answered sooner than half a loop was spurious (the
     * original was on its way): the timers grow (x2, up to 64) and shrink
     * back (/2) after 64 completions without one */
    uint32_t mult, clean;
    /* order: credits go down each port in the order they were armed, and a
     * child answers them in that order, so a port that answered a later
     * credit has lost an earlier one it has not answered (RACK, per port) */
    uint64_t arms;        /* credits armed so far */
    uint64_t *port_last;  /* per port: the latest armed credit it answered */
    uint8_t *port_ce;     /* per port: its latest answer carried CE (its loop is queued) */
    arb_time *port_heard; /* per port: when it last answered a credit (a counted input) */
    arb_agg_stats st;     /* slot times here are the closed intervals only */
};

static inline arb_time sat_add(arb_time x, arb_time y)
{
    return x > ARB_TIME_NEVER - y ? ARB_TIME_NEVER : x + y;
}

/* Time from t0 to t; 0 if the clock was given out of order. */
static inline arb_time since(arb_time t, arb_time t0)
{
    return t > t0 ? t - t0 : 0;
}

static inline uint64_t *slot_bits(const arb_agg *a, uint32_t id)
{
    return a->bitmap + (size_t)id * a->words;
}

/* A completion sample (credit down to aggregate up) of a slot that was not
 * re-credited (recredit.c). */
void agg_loop_sample(arb_agg *a, arb_time sample);
/* Drop the stale timers at the front of the re-credit queue (their slots
 * completed, or were armed again): the front's due is the driver's. */
void agg_drop_stale(arb_agg *a);

/* Whether the children a partial slot lacks are answering the copy this
 * switch sent them, on a queued path (recredit.c): a later attempt's
 * credit is not sent after it. */
int agg_answering(const arb_agg *a, uint32_t id, arb_time now);

#endif
