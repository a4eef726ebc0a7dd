/** @file
 * arbor/endpoint.h - the endpoint engines of a channel (docs/protocol.md sections 5, 6,
 * 8, 9, 10 and 12): the responder, one per channel, and the requester, one
 * per (rank, channel).
 *
 * Both engines are sans-IO. They read no clock, own no timer, touch no
 * socket and hold no global: every entry point takes the current time, a
 * driver asks arb_*_next_expiry() when to call arb_*_on_expiry(), and every
 * packet an engine emits leaves synchronously through the send callback of
 * its config, as a decoded header (which always passes arb_hdr_validate)
 * plus payload bytes that are valid only during the call. The driver
 * encodes and sends it (runtime) or hands the header to the fabric
 * (simulator).
 *
 * Addressing without addresses: the engines never see an IP address. A
 * packet out names a destination kind (arb_ep_dst): the responder, the tree
 * of one subchannel (multicast), or one member of the requester set by its
 * index (the planner's bitmap index, 0..R-1). The driver maps these to
 * addresses or simulator nodes. Packets in carry what the driver knows
 * about their sender: a member index where the protocol needs one (REGISTER,
 * END and repair requests from outside the requester set are dropped and
 * counted), ARB_EP_FROM_SWITCH for aggregates and AGG_MISS, and for the
 * requester the subchannel a credit came down (the UDP source port).
 *
 * Allocation happens in arb_*_new (rings, repair accumulators, scratch) and
 * in arb_requester_start_message (two bitmaps per message, reused when big
 * enough); never per packet. docs/endpoint.md describes the state machines.
 */
#ifndef ARBOR_ENDPOINT_H
#define ARBOR_ENDPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"
#include "arbor/cc.h"
#include "arbor/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A requester set has at most 256 members (docs/protocol.md section 4: fan-ins are bytes). */
#define ARB_EP_MAX_MEMBERS 256
/** Subchannels of one channel (they travel in the UDP source port). */
#define ARB_EP_MAX_SUBCHANNELS 1024
/** Offsets in one message: half the 24-bit space, so serial arithmetic never
 * confuses a message with the one before it. */
#define ARB_EP_MAX_OFFSETS 0x800000u

/** Defaults (arb_ep_settings_default, arb_*_config_default). */
#define ARB_EP_TIMEOUT_DEFAULT                                                                     \
    (50 * ARB_PS_PER_MS) /**< the timers' ceiling (the original design's timeout) */
#define ARB_EP_TIMEOUT_MIN_DEFAULT (1 * ARB_PS_PER_MS) /**< the timers' floor */
#define ARB_EP_ATTEMPTS_DEFAULT 8                      /**< credits per offset in the network */
#define ARB_EP_MISS_LIMIT_DEFAULT 2                    /**< AGG_MISS per offset before bypass */
#define ARB_EP_DEAD_AFTER_DEFAULT 3                    /**< silences that make a tree dead */
#define ARB_EP_REPAIR_TRIES_DEFAULT 8                  /**< bypass repair / END-wait rounds */
#define ARB_EP_BACKOFF_MAX_DEFAULT 64   /**< backed-off waits: at most this many ceilings */
#define ARB_EP_REPAIR_BUDGET_DEFAULT 16 /**< repair credits outstanding */
#define ARB_EP_RING_FACTOR_DEFAULT 4    /**< ring spans 4 x the window */
#define ARB_EP_RETRY_DEFAULT (10 * ARB_PS_PER_MS)    /**< REGISTER / END retry interval cap */
#define ARB_EP_RETRY_MIN_DEFAULT (1 * ARB_PS_PER_MS) /**< first REGISTER / END retry */
#define ARB_EP_RETRY_TRIES_DEFAULT 8                 /**< sets the give-up time (see retry) */
/** Timers below this are refused: no fabric loop is shorter. */
#define ARB_EP_TIMER_MIN (1 * ARB_PS_PER_US)

/** The `from` argument of arb_responder_recv for senders that are not members. */
#define ARB_EP_NOT_MEMBER (-1)  /**< an address outside the requester set */
#define ARB_EP_FROM_SWITCH (-2) /**< an aggregating switch (aggregates, AGG_MISS) */

/** Collective kinds (docs/protocol.md section 10). */
typedef enum arb_ep_kind {
    /** Requests carry contributions; credits carry earlier results
     * (AllReduce). */
    ARB_EP_PULL_RESULT = 0,
    /** Requests carry contributions; credits carry COMPLETIONs (Reduce,
     * ReduceScatter). */
    ARB_EP_PULL_COMPLETION = 1,
    /** Credit k carries offset k of the responder's data; requests are
     * header-only acknowledgements (Broadcast, AllGather). */
    ARB_EP_PUSH = 2,
    /** One header-only offset, bare credits, no END (Barrier). */
    ARB_EP_BARRIER = 3
} arb_ep_kind;

#define ARB_EP_KIND_COUNT 4 /**< the number of arb_ep_kind values */

/** "pull-result", "pull-completion", "push", "barrier"; NULL outside. */
const char *arb_ep_kind_name(int kind);

/** How a packet is addressed (arb_ep_dst). */
typedef enum arb_ep_dst_kind {
    ARB_EP_DST_RESPONDER = 0, /**< unicast to the channel's responder */
    ARB_EP_DST_GROUP = 1,     /**< multicast down the tree of `subchannel` */
    ARB_EP_DST_MEMBER = 2     /**< unicast to requester `member` */
} arb_ep_dst_kind;

/**
 * Where a packet goes. `subchannel` is the tree for GROUP and the UDP
 * source port for every packet (requests climb the tree their credit came
 * down); `member` is meaningful for MEMBER only.
 */
typedef struct arb_ep_dst {
    arb_ep_dst_kind kind; /**< unicast or multicast */
    uint32_t subchannel;  /**< the tree and the UDP source port */
    uint32_t member;      /**< MEMBER: the requester */
} arb_ep_dst;

/** Emit one packet. `payload` (len bytes, NULL when len is 0) is valid only
 * during the call; `h` passes arb_hdr_validate(h, len). The callback must
 * not call back into the engine. */
typedef void (*arb_ep_send_fn)(void *ctx, const arb_ep_dst *dst, const arb_hdr *h,
                               const uint8_t *payload, size_t len);

/**
 * Optional source of data by offset, for drivers that hold no full buffers
 * (the simulator's values mode): write the `len` bytes of message-relative
 * packet `index` of message `msg_id` into dst. Used when the input buffer
 * given to start_message is NULL.
 */
typedef void (*arb_ep_fill_fn)(void *ctx, uint8_t msg_id, uint32_t index, uint8_t *dst, size_t len);

/** What the responder's on_commit sees for one committed offset. */
typedef struct arb_commit_info {
    uint8_t msg_id;        /**< the message */
    uint32_t offset;       /**< the 24-bit offset */
    uint32_t index;        /**< message-relative packet index */
    const uint8_t *result; /**< the committed bytes, local contribution added (NULL in
                              header-only mode, for push and barrier, or without a
                              result buffer) */
    size_t len;            /**< bytes at result (0 when result is NULL) */
    uint32_t count;        /**< contributions counted: R */
    int repaired;          /**< 1: committed by the bypass repair */
    uint8_t attempt;       /**< the attempt whose aggregate committed (0 when repaired) */
    arb_time first_sent;   /**< when attempt 0's credit left */
} arb_commit_info;

/**
 * The settings a driver gives both engines of a channel, and the only
 * source of their defaults (arb_ep_settings_default). Drivers hold one and
 * copy it into each engine's configuration (`ep`); the responder reads
 * every field but the retry ones, the requester payload, header_only and
 * the retry ones.
 */
typedef struct arb_ep_settings {
    uint32_t payload; /**< bytes per offset: 1..8192, whole elements (default 8192) */
    int header_only;  /**< 1: no payload bytes at all; results are COMPLETIONs */
    uint32_t window;  /**< responder: used only when its cc is NULL (default 64) */
    /** Responder timers (docs/endpoint.md, "Loss detection"). `timeout` is their
     * ceiling (default 50 ms, the original design's fixed timeout) and `timeout_min`
     * their floor (default 1 ms; a driver that knows its fabric sets it
     * from the fabric's loop). With adaptive_timeout (default 1) a credit
     * is presumed lost when its tree has been silent (no commit, and the
     * credit outstanding) for srtt + 4 rttvar of the completion samples,
     * within [timeout_min, timeout]; 3 x timeout_min before the first
     * sample; doubled for each earlier timer loss of the same offset. With
     * adaptive_timeout 0 every timer is `timeout`, from the credit's send
     * time (the original design's behaviour). */
    arb_time timeout;
    arb_time timeout_min; /**< see timeout */
    int adaptive_timeout; /**< see timeout */
    /** Order-based loss detection (default 1): a credit is presumed lost
     * once a credit sent after it on the same tree has committed and a
     * reordering window has passed (RACK, RFC 8985, for groups). 0: timers
     * only. */
    int order_detection;
    /** Early credits (default 0; the runtime's 1): the responder credits a
     * pull message of one offset (and its twin) as soon as the message
     * starts there, before every member has registered (docs/protocol.md
     * section 5), so that a member starting later finds the credit
     * waiting and answers it with its REGISTER: the registration pass
     * leaves a small call's path. Nothing commits and no timer runs until
     * every member has registered; the offset's loop is no sample. */
    int early;
    /** Seeded credits (default 0; the runtime's 1): an AllReduce message
     * (ARB_EP_PULL_RESULT) of one offset is credited with the responder's
     * own contribution (payload_kind SEED). The first switch that takes a
     * slot for it keeps it, so the slot's aggregate is the whole result,
     * which that switch sends down to the members itself as well as up to
     * the responder (docs/protocol.md section 5, "Seeded credits"): the
     * responder's pass leaves a small call's path. The responder adds
     * nothing to a seeded aggregate, sends no tail of its own for it, and
     * keeps one that arrives before registration completes until it does
     * (the members hold it already); an END then counts as its member's
     * REGISTER. Where no switch aggregates, the credit arrives with its
     * seed, the requester ignores it, and nothing changes. */
    int seed;
    /** Tail probes (default 0; on where the switches repair locally): once
     * every offset of a message has had its first credit, the newest
     * credit still out is credited again (its next attempt) twice the
     * smoothed loop after it left, as RACK-TLP probes a tail (RFC 8985):
     * no later credit will show it lost by order, and with local repair a
     * switch answers the probe from what it holds, so it costs what was
     * lost. Before the tail the same probe goes out twice the larger of
     * the smoothed loop and its tree's latest loop (that of the newest
     * credit that committed on it) after the newest credit left or its
     * tree last committed, whichever is later: a window lost whole shows
     * nothing by order either. Its original committing is not a spurious loss. */
    int tail_probe;
    /** Credits per offset in the network (attempts 0 .. attempts-1),
     * 1..ARB_ATTEMPT_MAX + 1 (default 8); then the bypass repair. 1: the
     * first loss goes to the bypass repair at once (the original recovery). */
    uint32_t attempts;
    /** AGG_MISS for one offset that send it to the bypass repair at once
     * (default 2): the switches' slot pools cannot hold it. */
    uint32_t miss_limit;
    /** Timer losses on one tree, with no commit on it in between, that make
     * it dead (default 3) where the channel's other trees lose nothing;
     * where they lose a share p of their credits, the least n >= this with
     * p^n <= 1/16384. A dead tree is probed and revived by a commit. */
    uint32_t dead_after;
    /** Bypass repair credits sent for one offset, and END-wait replay
     * rounds, before the channel fails with ARB_ETIMEDOUT (default 8). */
    uint32_t repair_tries;
    /** Backed-off waits (an offset lost again, repair tries, END rounds,
     * probes of a dead tree) double from the timer up to this many timer
     * ceilings (`timeout`), 1..64 (default 64: a ceiling below the loaded
     * loop then slows a run instead of failing it). 1: never past the
     * ceiling, so that repair_tries rounds take at most repair_tries
     * ceilings (the UDP runtime's choice). */
    uint32_t backoff_max;
    /** Requester: REGISTER and END are sent again after retry_min (default
     * 1 ms), then at doubling intervals up to `retry` (default 10 ms); the
     * channel fails (ARB_ETIMEDOUT) once retry x (2^retry_tries - 1) has
     * passed without an answer (retry_tries default 8: 2.55 s). */
    arb_time retry;
    arb_time retry_min;   /**< see retry */
    uint32_t retry_tries; /**< see retry */
    /** Responder: dynamic selection (default 0: static): a credit goes to
     * the live tree with the least recent completion time x (its credits
     * outstanding + 1), ties from k mod n on; a suspect tree's estimate
     * counts double. An EWMA (1/8) of credit-to-commit. Static selection
     * sends the first credit of offset k down tree k mod n whatever its
     * health; both modes send retries, repairs and tails of a dead tree's
     * offsets down a live one (docs/endpoint.md, "Tree health"). */
    int dynamic_subchannels;
} arb_ep_settings;

/** Fill *s with the engines' defaults (the ones its fields name). */
void arb_ep_settings_default(arb_ep_settings *s);

/* ------------------------------------------------------------------ */
/* Responder                                                            */
/* ------------------------------------------------------------------ */

/** A responder's configuration (arb_responder_config_default). */
typedef struct arb_responder_config {
    uint64_t channel;     /**< the channel identity (opaque; for logs) */
    uint32_t members;     /**< R: the requester set, 1..ARB_EP_MAX_MEMBERS */
    arb_dtype dtype;      /**< default f32 */
    arb_op op;            /**< default SUM (NOP for push and barrier) */
    arb_ep_kind kind;     /**< default PULL_RESULT */
    uint32_t subchannels; /**< n trees: offset k's first credit takes tree k mod n (default 1) */
    arb_ep_settings ep;   /**< payload, window, timers, recovery (arb_ep_settings_default) */
    uint8_t ext;          /**< 1: 20 B headers (multi-tier trees); default 0 */
    /** A message of one offset is credited twice at once, as attempts 0 and
     * 1, so that one lost copy costs nothing (default 1; it needs attempts
     * >= 2): such a message has no later credit to reveal a loss, and a
     * timer would cost many times the message. */
    int redundant;
    uint32_t repair_budget; /**< repair credits outstanding, 1..256 (default 16) */
    uint32_t ring_factor;   /**< ring limit = ring_factor x window (default 4) */
    /** Ring capacity in offsets; 0 (default): ring_factor x the window the
     * controller reports at creation. The limit in force is
     * min(ring_factor x window, ring). */
    uint32_t ring;
    arb_cc *cc;           /**< the window and rate gates; not owned. NULL:
                             a window of `ep.window` and no rate gate */
    uint8_t first_msg_id; /**< id of the channel's first message (default 0) */
    uint32_t first_seq;   /**< start_seq of the first message (default 0) */
    arb_ep_send_fn send;  /**< required */
    void *send_ctx;       /**< passed to send; borrowed */
    arb_ep_fill_fn fill;  /**< own contribution / push data when own_data is NULL */
    void *fill_ctx;       /**< passed to fill; borrowed */
    /** Called once per committed offset, after the local contribution was
     * added (arb_commit_info). */
    void (*on_commit)(void *ctx, const arb_commit_info *c);
    void *commit_ctx;   /**< passed to on_commit; borrowed */
    arb_logger logger;  /**< where the engine reports (none by default) */
    const arb_mem *mem; /**< allocator (base.h); NULL: the C library's */
} arb_responder_config;

/** A responder's counters (arb_responder_get_stats). */
typedef struct arb_responder_stats {
    uint64_t credits;          /**< normal credits sent */
    uint64_t results_riding;   /**< results that rode a credit */
    uint64_t tails;            /**< tail RESPONSEs (credit_valid = 0) */
    uint64_t retries;          /**< normal credits of attempt >= 1 (included in credits) */
    uint64_t twins;            /**< one-offset messages credited twice at once (cfg.redundant) */
    uint64_t early;            /**< credits sent before the last REGISTER came (ep.early) */
    uint64_t early_masters;    /**< aggregates dropped because they came before registration */
    uint64_t seeded;           /**< credits sent with the responder's contribution (ep.seed) */
    uint64_t seeded_commits;   /**< commits of seeded aggregates: the switch sent their results */
    uint64_t held_masters;     /**< seeded aggregates kept until registration completed */
    uint64_t end_registers;    /**< ENDs that registered their member (ep.seed) */
    uint64_t losses_order;     /**< attempts presumed lost by order (a later credit committed) */
    uint64_t losses_timer;     /**< attempts presumed lost by a timer (tail, silent tree) */
    uint64_t tail_probes;      /**< newest credits credited again by the probe (tail_probe) */
    uint64_t spurious;         /**< presumed losses whose attempt committed after all */
    uint64_t bypass;           /**< offsets that fell back to the bypass repair */
    uint64_t probes;           /**< credits sent down a dead tree to probe it */
    uint64_t revivals;         /**< dead trees revived by a commit */
    uint64_t deaths;           /**< trees declared dead */
    uint64_t repair_credits;   /**< repair credits sent, repeats included */
    uint64_t repair_repeats;   /**< of which sent again on a timeout */
    uint64_t tail_replays;     /**< tail results replayed after the END wait */
    uint64_t commits;          /**< offsets committed */
    uint64_t repair_commits;   /**< of which by the repair path */
    uint64_t timeouts;         /**< = losses_timer (kept for reports) */
    uint64_t agg_miss;         /**< AGG_MISS for the attempt in flight */
    uint64_t samples;          /**< CC samples taken */
    uint64_t late_masters;     /**< complete masters of an earlier attempt that committed */
    uint64_t dup_masters;      /**< normal masters for a committed offset */
    uint64_t repair_requests;  /**< repair requests counted */
    uint64_t dup_repairs;      /**< repair requests from a member already counted */
    uint64_t count_mismatch;   /**< masters whose count is not R */
    uint64_t bad_length;       /**< contributions of the wrong length */
    uint64_t not_member;       /**< REGISTER / END / repair from outside the set */
    uint64_t stale;            /**< packets for another message or offset */
    uint64_t unexpected;       /**< packet types a responder never receives, bad depth */
    uint64_t malformed;        /**< headers failing arb_hdr_validate */
    uint64_t registers;        /**< REGISTERs accepted (ACKed) */
    uint64_t bad_registers;    /**< REGISTERs with a wrong start_seq or message */
    uint64_t ends;             /**< ENDs accepted (ACKed) */
    uint64_t messages;         /**< messages closed */
    uint32_t peak_outstanding; /**< most normal credits outstanding at once */
    uint32_t peak_repairs;     /**< most repair credits outstanding at once */
    uint32_t ring_grows;       /**< times the offset ring grew with the offsets in play */
    uint32_t ring;             /**< the ring's size now, in offsets */
    uint32_t dead_subchannels; /**< trees dead now */
    arb_time rto;              /**< the timer in force now (adaptive: the estimate) */
    arb_time reo_wnd;          /**< the reordering window in force now */
    uint32_t rto_mult;         /**< the timer's multiplier now (spurious timer losses raise it) */
} arb_responder_stats;

/** Where a responder's current message is. */
typedef enum arb_responder_phase {
    ARB_RSP_IDLE = 0,     /**< no message started locally */
    ARB_RSP_REGISTER = 1, /**< started; waiting for the registration bitmap */
    ARB_RSP_ACTIVE = 2,   /**< issuing credits, committing */
    ARB_RSP_DRAIN = 3     /**< every offset committed; waiting for ENDs */
} arb_responder_phase;

/** A responder's progress (arb_responder_get_progress). */
typedef struct arb_responder_progress {
    arb_responder_phase phase; /**< where the message is */
    uint8_t msg_id;            /**< the message in progress (or next expected) */
    uint32_t start_seq;        /**< its first offset */
    uint32_t offsets;          /**< offsets of the message */
    uint32_t issued;           /**< offsets credited so far */
    uint32_t committed;        /**< offsets committed */
    uint32_t registered;       /**< REGISTERs in the bitmap */
    uint32_t ended;            /**< ENDs in the bitmap */
    uint32_t outstanding;      /**< normal credits outstanding (window gate) */
    uint32_t repairs;          /**< offsets in repair mode */
    uint64_t closed;           /**< messages closed since creation */
    int ahead;                 /**< 1: the next message is started locally */
} arb_responder_progress;

/** Why a channel could not finish (arb_responder_get_failure). */
typedef struct arb_responder_failure {
    int error;           /**< ARB_ETIMEDOUT, or 0 while the channel is well */
    uint8_t msg_id;      /**< the message */
    uint32_t start_seq;  /**< its first offset */
    int end_wait;        /**< 1: every offset committed, ENDs missing (tails lost) */
    uint32_t offset;     /**< the offset that could not commit (end_wait 0) */
    uint32_t index;      /**< its message-relative index */
    uint32_t subchannel; /**< the tree its last credit took */
    uint32_t attempts;   /**< credits it had in the network */
    uint32_t tries;      /**< repair credits (or END-wait rounds) that went unanswered */
    arb_time waited;     /**< how long the last of them waited */
    uint32_t n_missing;  /**< members that never answered its repair (or END) */
    uint64_t missing[(ARB_EP_MAX_MEMBERS + 63) / 64]; /**< their bitmap, by member index */
} arb_responder_failure;

/** The responder engine of one channel (opaque). */
typedef struct arb_responder arb_responder;

/** Fill *cfg with the defaults its fields name (no send callback). */
void arb_responder_config_default(arb_responder_config *cfg);

/**
 * Make a responder. Errors: ARB_EINVAL for a NULL out or cfg, no send
 * callback, or a field out of its range (members, ep.payload not whole
 * elements, dtype, op, kind, subchannels, repair_budget, ring_factor,
 * ep.attempts, miss_limit, dead_after, repair_tries, backoff_max, a
 * timeout or floor below ARB_EP_TIMER_MIN, a floor above the ceiling);
 * ARB_ENOMEM.
 */
int arb_responder_new(arb_responder **out, const arb_responder_config *cfg);
/** Free a responder (NULL is ignored); the buffers it was given stay the caller's. */
void arb_responder_free(arb_responder *r);

/**
 * The local call of message `msg_id` (the collective on this rank):
 * `length` bytes (whole elements; 0 is one header-only offset), `own_data`
 * the responder's own contribution (pull kinds; NULL: none, or cfg.fill)
 * or the data to push (push), `result_buf` where committed results land
 * (pull kinds, `length` bytes; it is also the result cache the credits and
 * replays read from). Buffers must stay valid until the message closes.
 * Message ids follow each other (mod 256) from cfg.first_msg_id; one
 * message may be started ahead of the one in progress.
 * Errors: ARB_EINVAL (NULL r, a wrong msg_id, length not whole elements
 * or above ARB_EP_MAX_OFFSETS packets, a required buffer missing: the
 * result buffer of PULL_RESULT or the data of PUSH when not header-only,
 * length > 0 and no fill callback); ARB_ESTATE (two messages already
 * started).
 */
int arb_responder_start_message(arb_responder *r, uint8_t msg_id, uint64_t length,
                                const void *own_data, void *result_buf, arb_time now);

/**
 * A packet for this channel. `from` is the sender's member index, or
 * ARB_EP_NOT_MEMBER / ARB_EP_FROM_SWITCH; `ce` its CE mark. Every problem
 * with the packet is a counter, never an error. Errors: ARB_EINVAL for a
 * NULL r or h, or a NULL payload with len > 0.
 */
int arb_responder_recv(arb_responder *r, const arb_hdr *h, const uint8_t *payload, size_t len,
                       int from, arb_time now);
/** arb_responder_recv with the packet's CE mark (nonzero: set). Errors: as
 * arb_responder_recv. */
int arb_responder_recv_ce(arb_responder *r, const arb_hdr *h, const uint8_t *payload, size_t len,
                          int from, int ce, arb_time now);

/** The earliest time at which arb_responder_on_expiry has work, or
 * ARB_TIME_NEVER. */
arb_time arb_responder_next_expiry(const arb_responder *r);
/** Timeouts, repair repeats, END-wait replays, rate-gated credits due at
 * `now`. Errors: ARB_EINVAL for NULL. */
int arb_responder_on_expiry(arb_responder *r, arb_time now);

/** Copy the responder's progress into *out. */
void arb_responder_get_progress(const arb_responder *r, arb_responder_progress *out);
/** Copy the responder's counters into *out. */
void arb_responder_get_stats(const arb_responder *r, arb_responder_stats *out);
/** 1 when no message is in progress (every started message closed), else 0.
 * Never fails. */
int arb_responder_done(const arb_responder *r);
/** 0, or ARB_ETIMEDOUT once an offset's bypass repair, or the END wait,
 * went unanswered after repair_tries rounds: the channel has stopped
 * (nothing is sent, packets are ignored). */
int arb_responder_error(const arb_responder *r);
/** What was lost when arb_responder_error is set (error 0 otherwise). */
void arb_responder_get_failure(const arb_responder *r, arb_responder_failure *out);
/** Messages closed since creation. */
uint64_t arb_responder_closed(const arb_responder *r);

/* ------------------------------------------------------------------ */
/* Requester                                                            */
/* ------------------------------------------------------------------ */

/** A requester's configuration (arb_requester_config_default). */
typedef struct arb_requester_config {
    uint64_t channel;   /**< the channel identity (opaque; for logs) */
    uint32_t member;    /**< this requester's index in the requester set */
    arb_dtype dtype;    /**< as the responder's */
    arb_op op;          /**< as the responder's */
    arb_ep_kind kind;   /**< as the responder's */
    arb_ep_settings ep; /**< payload, header_only, retry, retry_min, retry_tries (as the
                           responder's; the rest is the responder's alone) */
    uint8_t ext;        /**< 1: 20 B headers for the packets this engine starts */
    /** Fan-in vectors per subchannel, root tier first: fanin[s * 3 + i] is
     * what this rank writes in fanin[i] of a request on subchannel s
     * (the planner's table). NULL: every tier 1. Not copied: it must
     * outlive the engine. */
    const uint8_t *fanin;
    uint32_t subchannels; /**< rows of `fanin` (default 1) */
    /** A message of one offset sends its first REGISTER and END twice, so
     * that one lost copy costs nothing (default 1; the responder's
     * `redundant` credits it twice likewise). */
    int redundant;
    uint8_t first_msg_id; /**< as the responder's */
    uint32_t first_seq;   /**< as the responder's */
    arb_ep_send_fn send;  /**< required */
    void *send_ctx;       /**< passed to send; borrowed */
    arb_ep_fill_fn fill;  /**< contributions when start_message's input is NULL */
    void *fill_ctx;       /**< passed to fill; borrowed */
    /** Called once per result (or COMPLETION) newly delivered: `data` holds
     * its bytes (NULL when none travel). */
    void (*on_result)(void *ctx, uint8_t msg_id, uint32_t offset, uint32_t index,
                      const uint8_t *data, size_t len);
    void *result_ctx;   /**< passed to on_result; borrowed */
    arb_logger logger;  /**< where the engine reports (none by default) */
    const arb_mem *mem; /**< allocator (base.h); NULL: the C library's */
} arb_requester_config;

/** A requester's counters (arb_requester_get_stats). */
typedef struct arb_requester_stats {
    uint64_t registers;       /**< REGISTERs sent, retries included */
    uint64_t ends;            /**< ENDs sent, retries included */
    uint64_t end_answers;     /**< of ENDs: sent again at once for a tail replayed after it */
    uint64_t requests;        /**< normal DATA_REQUESTs */
    uint64_t repair_requests; /**< repair DATA_REQUESTs */
    uint64_t retry_answers;   /**< of requests: answers to credits of attempt >= 1 */
    uint64_t dup_credits;     /**< normal credits already answered */
    uint64_t held;            /**< credits that came before their message started here, held
                                 and answered when it started (arb_ep_settings.early) */
    uint64_t results;         /**< results / COMPLETIONs delivered */
    uint64_t dup_results;     /**< results already held */
    uint64_t stale;           /**< packets for another message or offset */
    uint64_t bad;             /**< wrong lengths, fan-in missing, unexpected types */
    uint64_t malformed;       /**< headers failing arb_hdr_validate */
    uint64_t no_memory; /**< packets dropped: the window of held/answered bits could not grow */
} arb_requester_stats;

/** Where a requester's current message is. */
typedef enum arb_requester_phase {
    ARB_REQ_IDLE = 0,     /**< no message */
    ARB_REQ_REGISTER = 1, /**< REGISTER sent, no ack or credit yet */
    ARB_REQ_ACTIVE = 2,   /**< answering credits, collecting results (the REGISTER is retried
                               until its ack, a result or a later credit comes: a first
                               credit may have been sent before registration) */
    ARB_REQ_END = 3,      /**< every result in; END sent, no END_ACK yet */
    ARB_REQ_DONE = 4,     /**< END_ACK in (barrier: request sent) */
    ARB_REQ_FAILED = 5    /**< REGISTER or END unanswered after every try */
} arb_requester_phase;

/** A requester's progress (arb_requester_get_progress). */
typedef struct arb_requester_progress {
    arb_requester_phase phase; /**< where the message is */
    uint8_t msg_id;            /**< the message in progress */
    uint32_t start_seq;        /**< its first offset */
    uint32_t offsets;          /**< offsets of the message */
    uint32_t results;          /**< results held */
    uint32_t answered;         /**< credits answered */
    int complete;              /**< every result in (the output is final) */
    uint32_t window;           /**< indices the held/answered bitmaps have room for: it follows the
                                * indices in play (oldest missing to newest seen), not the length */
} arb_requester_progress;

/** The requester engine of one rank on one channel (opaque). */
typedef struct arb_requester arb_requester;

/** Fill *cfg with the defaults its fields name (no send callback). */
void arb_requester_config_default(arb_requester_config *cfg);

/**
 * Make a requester. Errors: ARB_EINVAL (NULL out or cfg, no send callback, member >=
 * ARB_EP_MAX_MEMBERS, a field out of range, retry or retry_min below
 * ARB_EP_TIMER_MIN or retry_min above retry, a fan-in table with a 0 in
 * it); ARB_ENOMEM.
 */
int arb_requester_new(arb_requester **out, const arb_requester_config *cfg);
/** Free a requester (NULL is ignored); the buffers it was given stay the caller's. */
void arb_requester_free(arb_requester *q);

/**
 * Start message `msg_id` of `length` bytes: `input` is this rank's
 * contribution (pull kinds; NULL: cfg.fill, or nothing for header-only),
 * `output` where results land (PULL_RESULT and PUSH; NULL: only
 * cfg.on_result sees them). Sends REGISTER. Allowed while the previous
 * message waits for its END_ACK (its output is complete); the engine keeps
 * retrying that END. Errors: ARB_EINVAL (NULL q, a wrong msg_id, a length
 * not whole elements or too large, the contribution missing); ARB_ESTATE
 * (a message whose output is not complete, or a failed channel);
 * ARB_ENOMEM.
 */
int arb_requester_start_message(arb_requester *q, uint8_t msg_id, uint64_t length,
                                const void *input, void *output, arb_time now);

/**
 * A packet from the responder (credits, results, acks). `subchannel` is
 * the tree it came down (the UDP source port): the request answering a
 * credit climbs the same tree. Errors: ARB_EINVAL for NULL q or h, or a
 * NULL payload with len > 0.
 */
int arb_requester_recv(arb_requester *q, const arb_hdr *h, const uint8_t *payload, size_t len,
                       uint32_t subchannel, arb_time now);

/** The earliest time at which arb_requester_on_expiry has work (REGISTER or
 * END retries), or ARB_TIME_NEVER. */
arb_time arb_requester_next_expiry(const arb_requester *q);
/** The retries due at `now`. Errors: ARB_EINVAL for NULL. */
int arb_requester_on_expiry(arb_requester *q, arb_time now);

/** Copy the requester's progress into *out. */
void arb_requester_get_progress(const arb_requester *q, arb_requester_progress *out);
/** Copy the requester's counters into *out. */
void arb_requester_get_stats(const arb_requester *q, arb_requester_stats *out);
/** 1 when the current message (and any earlier one) is finished, else 0.
 * Never fails. */
int arb_requester_done(const arb_requester *q);
/** 0, or ARB_ETIMEDOUT once REGISTER or END went unanswered after every try. */
int arb_requester_error(const arb_requester *q);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_ENDPOINT_H */
