/** @file
 * arbor/agg.h - the aggregator engine of one switch (docs/protocol.md sections 2, 5, 6
 * and 7): a pool of aggregation slots shared by every port and every job.
 *
 * Sans-IO: the engine reads no clock, touches no socket and holds no
 * global. The driver (the simulator's switch or the runtime's software
 * switch) decodes a packet, decides from its tree tables that this switch
 * aggregates for the packet's tree, and hands the packet to arb_agg_recv()
 * with the current time. The engine answers with one arb_agg_result saying
 * what to send: nothing, the packet itself (possibly with its location
 * stack pushed or popped), an aggregate, or an AGG_MISS. It never allocates
 * per packet: accumulators are allocated with the engine.
 *
 * The engine holds no group, rank or address table. A slot is found only
 * from the packet's location stack and checked against its owner
 * (channel identity, credit offset, attempt). The channel identity is a uint64_t the
 * driver chooses and the engine only compares: the runtime packs
 * (responder IPv4 << 16 | channel UDP port), the simulator uses its channel
 * id. The same channel must always be given the same identity.
 *
 * Per packet (docs/aggregator.md has the full table):
 *
 *   RESPONSE, credit_valid = 1, repair = 0 (a credit going down): allocate
 *     the next slot in rotation, own it (channel, offset_b, attempt), push its id at
 *     agg_loc[agg_depth], agg_depth++. FORWARD (replicate to the children).
 *     With local repair, a credit of attempt > 0 whose offset an earlier
 *     attempt took here within the hold (same channel, same stack depth)
 *     does not allocate: a partial slot is taken over (FORWARD, ADOPT: its owner's
 *     attempt becomes the credit's, what it counted stays, and res.have
 *     names the ports that contributed, which the credit skips); a
 *     complete one answers with its aggregate again (EMIT_AGGREGATE,
 *     REPLAY: a DATA_REQUEST of the credit's attempt on the credit's stack,
 *     sent up in the credit's place, which goes no further); a copy of a
 *     credit whose slot is live here is dropped (HELD), and so is a later
 *     attempt that takes over a slot this engine re-credits itself, while
 *     its copy is young and every port it lacks answered last with CE
 *     (HELD: the copy is queued on its way; docs/aggregator.md).
 *     A seeded credit (payload_kind SEED, on the credit that takes the
 *     first slot of its stack, agg_depth 0) leaves its payload, the
 *     responder's own contribution, in the slot it takes (values mode: as
 *     the accumulator's first input; header-only: as a mark) and goes on
 *     bare (payload_valid 0, kind DATA, res.payload NULL); a seed deeper in
 *     the stack is stripped alike and kept nowhere. A seeded slot's
 *     aggregate carries kind SEED (it is the whole result) and res.down = 1.
 *     Call it only for credits going down: a credit climbing to the root is
 *     forwarded by the driver without the engine; the root calls the engine
 *     before it replicates.
 *   DATA_REQUEST, repair = 0, agg_depth > 0 (a request going up): the slot
 *     at agg_loc[agg_depth-1] with fan-in fanin[agg_depth-1]:
 *       fan-in 1        pop, FORWARD; no slot is read or written;
 *       owner mismatch  EMIT_MISS: a header-only AGG_MISS to the responder
 *                       (channel or offset differ; it carries the request's
 *                       attempt);
 *       other attempt   DROP (STALE): the same offset, another attempt
 *                       (with local repair: only a later one; an earlier
 *                       attempt's input counts as the owner's);
 *       otherwise       count, reduce; CONSUMED, or EMIT_AGGREGATE (popped,
 *                       aggregated = 1, offset_b = count) once the count
 *                       reaches the fan-in (the aggregate carries the
 *                       owner's attempt);
 *       duplicate port, completed slot, inconsistent input: DROP.
 *   Everything else (repair requests and credits, tails, REGISTER, END, the
 *   acks, AGG_MISS, requests with agg_depth 0): FORWARD unchanged.
 *
 * A header that fails arb_hdr_validate() is dropped (ARB_AGG_R_MALFORMED);
 * every header the engine emits passes arb_hdr_validate() with the
 * payload length it reports.
 */
#ifndef ARBOR_AGG_H
#define ARBOR_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"
#include "arbor/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Slot ids travel in 16-bit agg_loc entries. */
#define ARB_AGG_SLOTS_MAX 65536
/** Ports per switch the contributor bitmap covers (ports 0..255). */
#define ARB_AGG_PORTS_MAX 256

/* Defaults of arb_agg_config_default(). */
#define ARB_AGG_SLOTS_DEFAULT 1024 /**< slots, by default */
#define ARB_AGG_PORTS_DEFAULT 64   /**< ports, by default */
/** The re-credit timer's floor, by default: 20 us (a driver that knows its
 * fabric's loop gives its own). */
#define ARB_AGG_RECREDIT_MIN_DEFAULT (20 * ARB_PS_PER_US)
/** The re-credit timer's ceiling, by default: 1 ms. */
#define ARB_AGG_RECREDIT_MAX_DEFAULT ARB_PS_PER_MS
/** How long a slot counts as its context's for a later attempt or a copy
 * of its credit, by default: 1 ms (arb_agg_config.recredit_hold). */
#define ARB_AGG_HOLD_DEFAULT ARB_PS_PER_MS
/** The re-credit timer is this many times the completion estimate (see
 * arb_agg_config.recredit_min). */
#define ARB_AGG_RECREDIT_PATIENCE 4
/** Re-credits of one slot, by default, before it is left to the responder. */
#define ARB_AGG_RECREDIT_TRIES_DEFAULT 3

/** An engine's configuration (arb_agg_config_default). */
typedef struct arb_agg_config {
    /** A: slots in the pool, 1..ARB_AGG_SLOTS_MAX (default 1024). Size it as
     * A >= ceil(lambda x R): credits per second through this switch times
     * the longest credit-to-aggregate round trip (docs/aggregator.md). */
    uint32_t slots;
    /** Accumulator bytes per slot, 1..ARB_PAYLOAD_MAX (default 8192). A
     * contribution with a longer payload is a protocol error. */
    uint32_t max_payload;
    /** 1: header-only mode. No accumulator is allocated and payload bytes
     * are never read; counting, owner checks and fan-in work as usual. */
    int header_only;
    /** Switch ports the driver names, 1..ARB_AGG_PORTS_MAX (default 64):
     * every port given to arb_agg_recv must be below it. */
    uint32_t ports;
    /** 1 (the default): local repair (docs/protocol.md section 6.4): a
     * credit of a later attempt takes over, or answers from, the slot an
     * earlier attempt of its offset still holds here; an earlier attempt's
     * input counts in a slot a later one took over. 0: every attempt is a
     * context of its own, as before. Costs a table of 2A to 4A slot ids,
     * and for the re-credits (arb_agg_arm) per slot the credit's header,
     * a port bitmap and in values mode its payload (max_payload bytes: the
     * pool's memory doubles), and a timer queue of 2A entries. */
    int local_repair;
    /** The re-credit timer (arb_agg_arm): ARB_AGG_RECREDIT_PATIENCE times
     * the larger of srtt + 4 rttvar and the recent largest + rttvar of
     * this pool's own credit-to-aggregate times (times 2 for each spurious
     * re-credit seen lately, up to 64), at least recredit_min (0: the
     * default), at most recredit_max, doubled per re-credit;
     * recredit_tries re-credits per slot at most (0: none). */
    arb_time recredit_min;
    arb_time recredit_max;   /**< see recredit_min */
    uint32_t recredit_tries; /**< see recredit_min */
    /** 1 (the default): re-credit a port by order too, as soon as it
     * answered a credit armed after the one it has not answered (right
     * where every port's child answers credits in the order they went
     * down, as hosts do: the switch engine arms a switch's slots only where
     * its children are hosts). 0: by the timer only. */
    int recredit_order;
    /** How long after its allocation a slot may be taken over by a later
     * attempt of its offset, answer one from its aggregate, or hold a copy
     * of its credit (default ARB_AGG_HOLD_DEFAULT). A channel's identity
     * and offset may come round again (the runtime's 8-bit message ids,
     * each call's offsets from 0): they must not within the hold, which
     * keeps old data from ever answering a new message. */
    arb_time recredit_hold;
    arb_logger logger;  /**< DEBUG: one line per dropped or missed request */
    const arb_mem *mem; /**< allocator (base.h); NULL: the C library's */
} arb_agg_config;

/** What the driver does with the packet it passed in. */
typedef enum arb_agg_action {
    /** Absorbed into a slot: send nothing, free the packet. */
    ARB_AGG_CONSUMED = 0,
    /** Send the packet on: res.hdr (equal to the updated *h) with the
     * packet's own payload. Credits go to the tree's child ports,
     * everything else toward the responder. */
    ARB_AGG_FORWARD = 1,
    /** The packet completed a slot: free it and send res.hdr with the
     * aggregate res.payload / res.payload_len up the tree, CE = res.ce. */
    ARB_AGG_EMIT_AGGREGATE = 2,
    /** Owner mismatch: free the packet and send the header-only AGG_MISS
     * res.hdr straight to the responder (IP dst = the request's). */
    ARB_AGG_EMIT_MISS = 3,
    /** Free the packet and send nothing; res.reason says why. */
    ARB_AGG_DROP = 4
} arb_agg_action;

#define ARB_AGG_ACTION_COUNT 5 /**< the number of arb_agg_action values */

/** Why the engine chose its action. */
typedef enum arb_agg_reason {
    ARB_AGG_R_BYPASS = 0,      /**< FORWARD: not for a slot, unchanged */
    ARB_AGG_R_PUSH = 1,        /**< FORWARD: a credit allocated a slot and pushed it */
    ARB_AGG_R_FANIN1 = 2,      /**< FORWARD: fan-in 1, popped without a slot */
    ARB_AGG_R_COUNTED = 3,     /**< CONSUMED: counted, the slot waits for more */
    ARB_AGG_R_COMPLETE = 4,    /**< EMIT_AGGREGATE: the count reached the fan-in */
    ARB_AGG_R_OWNER = 5,       /**< EMIT_MISS: the slot belongs to another context */
    ARB_AGG_R_BAD_SLOT = 6,    /**< EMIT_MISS: slot id >= A */
    ARB_AGG_R_DUPLICATE = 7,   /**< DROP: this port already contributed */
    ARB_AGG_R_LATE = 8,        /**< DROP: the slot already completed */
    ARB_AGG_R_OVERCOUNT = 9,   /**< DROP: count would pass the fan-in */
    ARB_AGG_R_MISMATCH = 10,   /**< DROP: dtype, op, fan-in, payload flag or length
                                  differ from the slot's first contribution */
    ARB_AGG_R_TOO_LONG = 11,   /**< DROP: payload longer than max_payload */
    ARB_AGG_R_STACK_FULL = 12, /**< DROP: credit with agg_depth 3 */
    ARB_AGG_R_STACK_EXT = 13,  /**< DROP: credit in a 16 B header would need depth 2 */
    ARB_AGG_R_MALFORMED = 14,  /**< DROP: the header fails arb_hdr_validate */
    ARB_AGG_R_STALE = 15,      /**< DROP: the slot's owner is another attempt of the offset */
    ARB_AGG_R_ADOPT = 16,      /**< FORWARD: a later attempt's credit took over the partial
                                  slot of an earlier one (local repair); res.have */
    ARB_AGG_R_REPLAY = 17,     /**< EMIT_AGGREGATE: a later attempt's credit, or a copy of
                                  the credit, met the complete slot of its offset: its
                                  aggregate, sent again */
    ARB_AGG_R_HELD = 18        /**< DROP: a copy of a credit whose context holds a live slot
                                  here (a re-credit from above; this switch's own timer asks
                                  its children), or a later attempt that took over a slot whose
                                  missing children answer this switch's copy on a queued path */
} arb_agg_reason;

#define ARB_AGG_REASON_COUNT 19 /**< the number of arb_agg_reason values */

/**
 * The engine's answer to one packet. Nothing in it is allocated; `payload`
 * points into the engine (an aggregate) or at the caller's payload
 * (FORWARD) and is valid until the next call on the engine.
 */
typedef struct arb_agg_result {
    arb_agg_action action; /**< what to do with the packet */
    arb_agg_reason reason; /**< why */
    /** FORWARD, EMIT_*: the header to send. */
    arb_hdr hdr;
    /** FORWARD: the caller's payload. EMIT_AGGREGATE: the accumulator, or
     * NULL in header-only mode (payload_len is then the length the inputs
     * declared, so a driver can size the packet). EMIT_MISS, DROP,
     * CONSUMED: NULL and 0. */
    const void *payload;
    size_t payload_len; /**< bytes at payload */
    /** The CE bit to send with: the caller's for FORWARD and EMIT_MISS, the
     * OR over every input for EMIT_AGGREGATE. */
    uint8_t ce;
    /** The slot allocated or read (PUSH, COUNTED, COMPLETE, OWNER,
     * DUPLICATE, LATE, OVERCOUNT, MISMATCH, TOO_LONG, ADOPT, REPLAY); -1
     * when none. */
    int32_t slot;
    /** ADOPT: the ports (bit p of word p / 64) whose contribution the slot
     * holds already: the credit goes on only to the others. NULL otherwise;
     * valid until the next call on the engine. */
    const uint64_t *have;
    /** EMIT_AGGREGATE, COMPLETE of a seeded slot (its aggregate is the
     * whole result): 1, the aggregate also goes down to the slot's
     * children as the offset's tail result (switch.h builds it); else 0. */
    uint8_t down;
} arb_agg_result;

/** An engine's counters (arb_agg_get_stats). */
typedef struct arb_agg_stats {
    uint64_t packets;           /**< arb_agg_recv calls that returned 0 */
    uint64_t malformed;         /**< dropped: failed arb_hdr_validate */
    uint64_t bypass;            /**< forwarded unchanged */
    uint64_t credits;           /**< credits going down */
    uint64_t allocations;       /**< slots allocated (= credits - stack_overflow - adoptions -
                                     replays) */
    uint64_t stack_overflow;    /**< credits dropped: STACK_FULL or STACK_EXT */
    uint64_t reclaimed_live;    /**< allocations that took a slot still live */
    uint64_t requests;          /**< normal requests with agg_depth > 0 */
    uint64_t passthrough;       /**< of which fan-in 1, popped */
    uint64_t miss;              /**< of which AGG_MISS (OWNER and BAD_SLOT) */
    uint64_t contributions;     /**< of which counted into a slot */
    uint64_t duplicate;         /**< of which dropped as duplicates */
    uint64_t late;              /**< of which dropped as late */
    uint64_t protocol_error;    /**< of which dropped as OVERCOUNT, MISMATCH or TOO_LONG */
    uint64_t stale;             /**< of which dropped as STALE (another attempt's slot) */
    uint64_t aggregates;        /**< slots completed (aggregates emitted) */
    uint64_t adoptions;         /**< credits that took over an earlier attempt's partial slot */
    uint64_t replays;           /**< credits answered with an aggregate made here before */
    uint64_t seeds;             /**< slots a seeded credit took, its seed kept */
    uint64_t seeded_results;    /**< seeded slots completed: their results went down too */
    uint64_t dup_credits;       /**< credits dropped as HELD: copies of a credit whose slot is
                                     live here, and later attempts held on a queued path */
    uint64_t recredits;         /**< credits sent again to the children still missing */
    uint64_t recredits_order;   /**< of which because the child answered a later credit */
    uint64_t recredit_spurious; /**< re-credits answered sooner than a loop: the original
                                     was on its way (the timers grow) */
    uint64_t recredit_lost;     /**< timers lost to a full queue */
    uint64_t recredit_waits;    /**< timers that found every missing port still answering
                                     earlier credits, and waited for it to fall silent */
    uint64_t resets;            /**< arb_agg_reset calls (the switch lost its state) */
    uint64_t reset_live;        /**< slots live when a reset emptied the pool */
    uint32_t live;              /**< slots live now */
    uint32_t peak_live;         /**< most slots live at once */
    /** Time slots spent live (allocation to completion or reclaim), and
     * partially filled (first contribution to completion or reclaim), in
     * ps; arb_agg_get_stats adds the open intervals of live slots up to
     * `now`. Saturating. */
    arb_time slot_time;
    arb_time partial_slot_time; /**< see slot_time */
} arb_agg_stats;

/** An aggregator engine: one switch's slot pool (opaque). */
typedef struct arb_agg arb_agg;

/** 1024 slots of 8192 B, 64 ports, values mode, no logger. */
void arb_agg_config_default(arb_agg_config *cfg);

/**
 * Make an engine (cfg NULL: the defaults). Accumulators (slots x
 * max_payload bytes) are allocated here unless header_only.
 * Errors: ARB_EINVAL for a NULL out or a config field out of its range;
 * ARB_ENOMEM.
 */
int arb_agg_new(arb_agg **out, const arb_agg_config *cfg);

/** Free an engine; NULL is allowed. */
void arb_agg_free(arb_agg *a);

/**
 * Process one packet that arrived on switch port `port` at time `now`.
 *
 *   h            the decoded header; on FORWARD it is updated in place (a
 *                credit's push, a fan-in-1 pop) and res->hdr is a copy; on
 *                every other action it is left as it was.
 *   payload      the payload bytes (little-endian elements, as on the
 *                wire); may be NULL in header-only mode.
 *   payload_len  their length; in header-only mode the length the packet
 *                stands for (0 when payload_valid = 0).
 *   channel      the channel identity (see above); used by credits and
 *                requests only.
 *   port         the arrival port, < cfg.ports; used by requests only.
 *   ce           the packet's CE bit (nonzero = set).
 *   now          the current time; it must not go backwards.
 *
 * Returns 0 and fills *res, or an error for a call that breaks this
 * contract (nothing is changed then): ARB_EINVAL for a NULL a, h or res,
 * a port >= cfg.ports, or, in values mode, a NULL payload with a nonzero
 * length. Anything wrong with the packet itself is a DROP with a reason,
 * never an error.
 */
int arb_agg_recv(arb_agg *a, arb_hdr *h, const void *payload, size_t payload_len, uint64_t channel,
                 uint32_t port, int ce, arb_time now, arb_agg_result *res);

/** A re-credit to send (arb_agg_expire). */
typedef struct arb_agg_recredit {
    int32_t slot;        /**< the slot */
    uint64_t channel;    /**< its owner's channel identity */
    arb_hdr hdr;         /**< the credit as it went down (send it as is) */
    const void *payload; /**< its payload (values mode), valid until the next call */
    size_t payload_len;  /**< its length (header-only: the length it stands for) */
    int ce;              /**< the CE bit it went down with (send it with it) */
    /** The ports to send it to (bit p of word p / 64): those it went to
     * whose contribution the slot does not hold. */
    uint64_t missing[ARB_AGG_PORTS_MAX / 64];
    uint32_t words; /**< the words of missing in use */
} arb_agg_recredit;

/**
 * Local repair's timer (docs/protocol.md section 6.4): after a credit took
 * slot `slot` (FORWARD, PUSH or ADOPT) and the driver replicated it to
 * `ports` (global numbers; port - first_port < cfg.ports), it arms the
 * slot: the credit as sent (its stack pushed) and its CE bit, its payload (copied in
 * values mode) and the ports are kept, and if the slot is still partial
 * when its timer runs out, arb_agg_expire hands the credit back for the
 * ports whose contribution is missing and that have been silent since (a
 * port still answering earlier credits is waited for until it has been
 * silent a timeout, at most recredit_max after the credit went down, where
 * ports answer in order: cfg.recredit_order);
 * sooner, by order, for a port that
 * has answered a credit armed after it (credits go down a port, and are
 * answered, in order: the port lost it; a requester answers every copy of
 * a credit; a switch below answers from its slot, see ARB_AGG_R_REPLAY and
 * ARB_AGG_R_HELD). Nothing happens without local repair. Errors: ARB_EINVAL
 * for a NULL a or credit, a slot out of range or a port out of range.
 */
int arb_agg_arm(arb_agg *a, int32_t slot, const arb_hdr *credit, const void *payload, size_t len,
                int ce, const uint32_t *ports, uint32_t n_ports, uint32_t first_port, arb_time now);

/** The earliest re-credit timer (it may turn out to have nothing to do):
 * 0 when the oldest armed slot is already lost by order (or its timer is
 * stale: arb_agg_expire clears it; a timer leaves the front when its slot
 * completes or is armed again), ARB_TIME_NEVER when none is armed. */
arb_time arb_agg_next_expiry(const arb_agg *a);

/**
 * The next re-credit due at `now`: 1 and *out filled (send out->hdr with
 * out->payload to each port of out->missing), or 0 when none is left.
 * Each slot is re-credited at most cfg.recredit_tries times, its timer
 * doubling each time; then its offset is the responder's to repair.
 * Errors: ARB_EINVAL for a NULL a or out.
 */
int arb_agg_expire(arb_agg *a, arb_time now, arb_agg_recredit *out);

/** Does nothing (arb_agg_expire does the work). Errors: ARB_EINVAL for a
 * NULL a. */
int arb_agg_on_expiry(arb_agg *a, arb_time now);

/**
 * Empty the pool, as a switch that reboots loses its aggregation state:
 * every slot is freed (owner, count, contributors, first-contribution
 * fields; the accumulator is not cleared, the first contribution
 * overwrites it) and the rotation starts again at slot 0. A request
 * naming a slot of a context from before the reset then finds it free, or
 * owned by a context allocated since, and becomes an AGG_MISS (OWNER); a
 * request of another attempt of the same offset is STALE as ever: the
 * responder credits the lost offsets again (docs/protocol.md). No context
 * is ever mixed with another, because owners are only ever written by an
 * allocation. The counters are kept: the slots live at the reset close
 * their slot times at `now` and are counted in `reset_live`; `resets`
 * counts the calls; `peak_live` keeps its maximum.
 *
 * Returns the number of slots that were live (>= 0), or ARB_EINVAL for a
 * NULL engine. O(A).
 */
int arb_agg_reset(arb_agg *a, arb_time now);

/** Counters, with slot times closed at `now` for slots still live. */
void arb_agg_get_stats(const arb_agg *a, arb_time now, arb_agg_stats *out);

/**
 * Self-check of every slot and of the counters, O(A) (for tests and the
 * simulator's invariant checks):
 *   - no slot aggregated two contexts (attempts included): every contribution a slot holds was
 *     counted under its current owner, whose allocation it follows;
 *   - no port contributed twice: the contributor bitmap has one bit per
 *     contribution held;
 *   - a slot's count never passes its fan-in and equals it exactly when the
 *     slot completed; a free slot holds nothing;
 *   - the live count matches the slots, and the counters add up
 *     (packets = malformed + bypass + credits + requests, and requests and
 *     credits split exactly into their outcomes, STALE included; slots
 *     lost to resets are among the allocations).
 * Returns 0, or ARB_ESTATE on the first broken invariant (named through the
 * logger at ARB_LOG_ERROR); ARB_EINVAL for NULL.
 */
int arb_agg_check(const arb_agg *a);

/** "CONSUMED", "FORWARD", ...; NULL outside the enum. */
const char *arb_agg_action_name(int action);
/** "BYPASS", "PUSH", ...; NULL outside the enum. */
const char *arb_agg_reason_name(int reason);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_AGG_H */
