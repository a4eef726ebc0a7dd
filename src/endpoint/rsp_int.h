/*
 * rsp_int.h - the responder's state, shared by its files: responder.c
 * (messages, credits, commit, receive), handshake.c (registration, END),
 * recovery.c (loss detection, retries in the network, bypass repair,
 * timers) and trees.c (tree health, the choice of a credit's tree).
 * docs/endpoint.md and docs/protocol.md describe the state machine.
 */
#ifndef ARBOR_RSP_INT_H
#define ARBOR_RSP_INT_H

#include <assert.h>

#include "arbor/endpoint.h"
#include "endpoint/ep_util.h"

/* Ring entry states. ISSUED: a normal credit (of attempt `attempt`) is in
 * flight and counts in the window. LOST: that credit was presumed lost; the
 * offset waits for a credit of the next attempt. REPAIR: the offset fell
 * back to the bypass repair. COMMITTED: done (until `base` passes it). */
enum { E_FREE = 0, E_ISSUED = 1, E_LOST = 2, E_REPAIR = 3, E_COMMITTED = 4 };

/* How an attempt was given up (rentry.why), for spurious-loss accounting. */
enum { WHY_NONE = 0, WHY_ORDER = 1, WHY_TIMER = 2, WHY_MISS = 3, WHY_PROBE = 4 };

/* Tree health (per subchannel). */
enum { T_LIVE = 0, T_SUSPECT = 1, T_DEAD = 2 };

#define NO_RIDE UINT32_MAX
#define RING_MAX (1u << 20)
#define RING_INITIAL 16u /* the smallest ring a responder starts with */
#define RING_START 1024u /* the largest */

struct rentry {
    uint8_t state;
    uint8_t attempt;  /* of the credit in flight, or of the last one */
    uint8_t misses;   /* AGG_MISS for this offset */
    uint8_t expiries; /* timer losses of this offset: its timer doubles */
    uint8_t why;      /* how the last attempt was given up (WHY_*) */
    uint8_t probes;   /* tail probes of this offset: each waits twice the last */
    uint8_t early;    /* credited before registration: its loop is no sample */
    uint8_t seeded;   /* committed from a seeded aggregate: the switch sent its result */
    uint32_t rslot;   /* repair slot + 1; 0 while waiting for the budget */
    uint32_t ride;    /* index of the result that rode the credits, or NO_RIDE */
    uint32_t sub;     /* the tree of the current attempt */
    uint64_t seq;     /* issue order of the current attempt (credit sequence) */
    arb_time sent;    /* send time of the current attempt */
    arb_time first;   /* send time of attempt 0 */
    /* The last ATT_KEEP attempts, by attempt mod ATT_KEEP: when each left
     * and down which tree, so that an earlier attempt's aggregate is still
     * a completion sample (the attempt number makes it unambiguous, as
     * TCP's timestamps make a retransmission's ACK). */
    arb_time att_sent[4];
    uint32_t att_sub[4];
};
#define ATT_KEEP 4u

/* One bypass repair in progress: its bitmap of members and its accumulator. */
struct rrep {
    int used;
    uint32_t index;
    uint32_t count;
    uint64_t bits[EP_MEMBER_WORDS];
    arb_time deadline;
    uint32_t tries; /* repair credits sent for it */
    uint8_t *acc;
};

struct rmsg {
    int started;
    uint8_t id;
    uint32_t start;
    uint32_t n;
    uint64_t length;
    const uint8_t *own;
    uint8_t *result;
    uint64_t reg[EP_MEMBER_WORDS];
    uint32_t nreg;
};

/* Per subchannel: its place in dynamic selection, its order-based loss
 * detection (the most recently sent credit committed on it) and its
 * health. */
struct rsub {
    arb_time ct;        /* EWMA of credit-to-commit; 0: no sample yet */
    uint32_t out;       /* normal credits outstanding on it */
    uint8_t health;     /* T_* */
    uint8_t silences;   /* timer losses on it since its last commit */
    uint8_t rounds;     /* of those, the ones a timer apart (the last live tree dies by these) */
    arb_time round_at;  /* when the last of those rounds was counted */
    uint32_t done;      /* its credits resolved lately (committed or lost; halved past 256) */
    uint32_t lost;      /* of those, the ones presumed lost */
    uint64_t rack_seq;  /* seq of the most recently sent credit committed on it (0: none) */
    arb_time rack_rtt;  /* that credit's completion time */
    arb_time progress;  /* time of its last commit (0: none) */
    arb_time probe_at;  /* dead: when the next probe may go */
    arb_time probe_gap; /* dead: the probe interval now (doubles) */
};

struct arb_responder {
    arb_responder_config cfg;
    struct rmsg msg[2]; /* [0] in progress or next expected, [1] ahead */
    uint32_t next_seq;  /* start of msg[0] when it is not started yet */
    /* The two messages closed last ([0] the latest): their REGISTER and
     * END retries are acknowledged again. Two, because a requester may
     * wait for the END_ACKs of two messages at once (its current one and
     * the one moved aside), both already counted here when the ack of the
     * older was lost. */
    int prev_valid[2];
    uint8_t prev_id[2];
    uint32_t prev_start[2];
    arb_responder_phase phase;

    /* The message in progress. */
    uint32_t base, next, committed;
    uint32_t outstanding;    /* ISSUED entries (the window gate) */
    uint32_t lost;           /* LOST entries (waiting for a retry credit) */
    uint32_t in_repair;      /* REPAIR entries */
    uint32_t waiting_repair; /* REPAIR entries without a slot */
    uint32_t reps_used;
    arb_time last_credit;
    int any_credit;
    uint64_t ends[EP_MEMBER_WORDS];
    uint32_t nends;
    arb_time end_deadline; /* the earlier of end_timer and the order's due */
    arb_time end_timer;    /* the END wait's timer */
    uint32_t end_rounds;   /* END-wait replays sent */
    uint32_t end_silent;   /* replay rounds in a row that brought no END */
    arb_time last_tail;    /* when the last tail left (0: none) */
    arb_time end_delay;    /* the longest an END took to arrive after the last tail */
    arb_time replay_at;    /* when the last replay round left */
    arb_time round_delay;  /* the longest an END took after it (0: none came yet) */
    int one_window;        /* every offset (2 or more) had its first credit before any committed */

    struct rentry *ring;
    uint32_t ring_cap;
    uint32_t ring_max; /* the ring grows up to this (cfg.ring, or ring_factor x max window) */
    uint32_t *pending; /* FIFO of committed indices awaiting delivery */
    uint32_t pend_head, pend_len;
    uint32_t *tails;
    uint32_t ntails;
    struct rrep *rep;
    uint8_t *scratch; /* fill output: own data or push payload */
    /* a seeded aggregate that came before registration completed (ep.seed):
     * its payload waits in the message's result buffer */
    int held;
    int held_ce;
    arb_hdr held_h;
    size_t held_len;

    arb_responder_stats st;
    uint64_t closed;
    struct rsub *sub;   /* per subchannel */
    uint32_t live_subs; /* subchannels not dead */
    uint32_t probe_sub; /* every tree dead: the one the next credit probes */

    /* Loss detection and timers. */
    uint64_t seq;               /* credits issued (normal, every attempt): the order of issue */
    uint64_t rack_seq;          /* the most recently sent credit committed on any tree */
    arb_time rack_rtt;          /* its completion time */
    arb_time srtt, rttvar;      /* 0, 0: no sample yet */
    arb_time min_rtt;           /* smallest sample (ARB_TIME_NEVER: none) */
    arb_time max_cur, max_prev; /* the largest sample of this and the last window of samples */
    uint32_t max_n;             /* samples in this window */
    uint64_t n_samples;         /* warm completion samples taken (the timer's) */
    /* RFC 6298's estimator and the largest sample over the cold samples
     * (0: none): the loop of a message that lives in its first window
     * (one_window), which never gets a warm sample. */
    arb_time cold_srtt, cold_rttvar, cold_max;
    arb_time first_commit; /* the responder's first commit (0: none yet) */
    arb_time reo_seen;     /* largest reordering measured (a late commit past its window) */
    uint32_t reo_mult;     /* the reordering window's multiplier (spurious losses raise it) */
    uint32_t rto_mult;     /* the timer's multiplier (spurious timer losses raise it) */
    uint32_t clean;        /* samples since the last spurious loss (the multipliers decay) */
    arb_time next_due;     /* the earliest loss deadline of an ISSUED entry (detect_losses) */

    /* A channel that could not finish (arb_responder_error). */
    int error;
    arb_responder_failure failure;
};

/* recovery.c */
void rsp_detect_losses(arb_responder *r, arb_time now);
void rsp_on_commit_sample(arb_responder *r, struct rentry *e, arb_time sample, arb_time now);
void rsp_on_late_commit(arb_responder *r, struct rentry *e, uint8_t attempt, arb_time now);
void rsp_give_up(arb_responder *r, uint32_t i, int why, arb_time now);
void rsp_start_repairs(arb_responder *r, arb_time now);
void rsp_repair_expiries(arb_responder *r, arb_time now);
int rsp_repair_answer(arb_responder *r, uint32_t i, const uint8_t *payload, size_t len, int from,
                      arb_time now);
/* How long the END wait waits: first, and after each round of replays. */
arb_time rsp_end_wait(const arb_responder *r, unsigned rounds);
void rsp_end_expiry(arb_responder *r, arb_time now);
arb_time rsp_end_due(const arb_responder *r);
void rsp_end_seen(arb_responder *r, arb_time now);
void rsp_end_arm(arb_responder *r);
arb_time rsp_rto(const arb_responder *r);
/* The bound of every backed-off wait. */
arb_time rsp_backoff_cap(const arb_responder *r);
arb_time rsp_timers(const arb_responder *r);
/* Offset e goes to the bypass repair (waiting for a repair slot). */
void rsp_enter_bypass(arb_responder *r, struct rentry *e);
void rsp_fail(arb_responder *r, uint32_t i, int end_wait, const uint64_t *answered);

/* trees.c */
uint32_t rsp_pick_sub(arb_responder *r, uint32_t k, int first_attempt, uint32_t prev,
                      uint8_t expiries, arb_time now);
uint32_t rsp_live_sub(const arb_responder *r, uint32_t s, uint32_t k);
uint32_t rsp_quiet_sub(const arb_responder *r, uint32_t s, uint32_t k);
/* A dead tree due for a probe (its next probe time moves on), or UINT32_MAX. */
uint32_t rsp_probe_due(arb_responder *r, uint32_t home, arb_time now);
void rsp_tree_commit(arb_responder *r, uint32_t s, arb_time now);
/* A credit on tree u was resolved: committed in time (lost 0) or presumed lost. */
void rsp_tree_outcome(struct rsub *u, int lost);
/* A credit on tree s was lost (by its timer, or by order). */
void rsp_tree_loss(arb_responder *r, uint32_t s, int by_timer, arb_time now);
void rsp_reset_trees(arb_responder *r);

/* responder.c */
void rsp_send_repair_credit(arb_responder *r, uint32_t i);
void rsp_send_tail(arb_responder *r, uint32_t p, int replay, int member);
void rsp_commit(arb_responder *r, uint32_t i, const uint8_t *data, uint32_t count, int repaired,
                uint8_t attempt, arb_time now);

/* handshake.c: a REGISTER, an END from member `from` */
void rsp_on_register(arb_responder *r, const arb_hdr *h, int from);
void rsp_on_end(arb_responder *r, const arb_hdr *h, int from, arb_time now);
void rsp_registered(arb_responder *r, arb_time now);

/* a x 2^k, saturating at cap. */
static inline arb_time rsp_doubled(arb_time a, unsigned k, arb_time cap)
{
    for (; k > 0 && a < cap; k--)
        a = a > cap / 2 ? cap : a * 2;
    return a < cap ? a : cap;
}

/* Is `from` one of the group's members? */
static inline int rsp_is_member(const arb_responder *r, int from)
{
    return from >= 0 && (uint32_t)from < r->cfg.members;
}

/* Hand a packet to the driver (a valid header, by construction). */
static inline void rsp_emit(arb_responder *r, arb_ep_dst_kind kind, uint32_t sub, uint32_t member,
                            const arb_hdr *h, const uint8_t *payload, size_t len)
{
    arb_ep_dst d = {kind, sub, member};
    assert(arb_hdr_validate(h, len) == 0);
    r->cfg.send(r->cfg.send_ctx, &d, h, len ? payload : NULL, len);
}

/* Does message m's credit carry the responder's own contribution (ep.seed):
 * an AllReduce of one offset with bytes to carry. */
static inline int rsp_seeds(const arb_responder *r, const struct rmsg *m)
{
    return r->cfg.ep.seed && r->cfg.kind == ARB_EP_PULL_RESULT && m->n == 1 && m->length > 0 &&
           (r->cfg.ep.header_only || m->own || r->cfg.fill);
}

/* Bytes of index i of the message in progress. */
static inline size_t rsp_pkt_len(const arb_responder *r, uint32_t i)
{
    return ep_len(r->msg[0].length, r->cfg.ep.payload, i);
}

/* Is `len` bytes (payload_valid `pv`) the contribution index i needs? */
static inline int rsp_contribution_ok(const arb_responder *r, uint32_t i, const arb_hdr *h,
                                      size_t len)
{
    if (r->cfg.ep.header_only) return 1;
    size_t want = ep_kind_pull(r->cfg.kind) ? rsp_pkt_len(r, i) : 0;
    if (want == 0) return h->payload_valid == 0;
    return h->payload_valid && len == want;
}

/* A root aggregate (a master): commit it, or say why not (responder.c). */
void rsp_on_master(arb_responder *r, const arb_hdr *h, const uint8_t *payload, size_t len, int ce,
                   arb_time now);
/* seed.c: credit h (index i of m) carries the responder's own input. */
void rsp_seed_fields(arb_responder *r, const struct rmsg *m, uint32_t i, arb_hdr *h,
                     const uint8_t **pl, size_t *len);
/* seed.c: a seeded aggregate before registration completed is kept: 1. */
int rsp_hold_seeded(arb_responder *r, const arb_hdr *h, const uint8_t *payload, size_t len, int ce);
/* seed.c: registration completed: the aggregate kept meanwhile commits. */
void rsp_release_held(arb_responder *r, arb_time now);

static inline struct rentry *rsp_entry(arb_responder *r, uint32_t i)
{
    return &r->ring[i % r->ring_cap];
}

static inline const struct rentry *rsp_entry_c(const arb_responder *r, uint32_t i)
{
    return &r->ring[i % r->ring_cap];
}

#endif
