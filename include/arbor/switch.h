/** @file
 * arbor/switch.h - the switch engine: what an Arbor switch does with one
 * Arbor packet of a tree (docs/protocol.md sections 2, 5 and 8).
 *
 * Sans-IO, as the aggregator it drives: the driver (the simulator's switch,
 * src/sim/arbor_steer.c, or the runtime's software switch, src/rt/switch.c)
 * decodes the packet, finds its tree's entry at this switch in the job's
 * plan (arb_plan_find) and hands both to arb_switch_recv() with the
 * arrival port, the switch's aggregator and the time. The engine decides,
 * and calls the aggregator where the entry aggregates:
 *
 *   RESPONSE (a credit)
 *     arriving from below, not at the root   UP: on toward the root;
 *     from above, or at the root             through the aggregator where the
 *                                            entry aggregates (a normal credit
 *                                            takes a slot), then CHILDREN: a
 *                                            copy to each port of the entry's
 *                                            replication set (none: DROP);
 *                                            local repair: a later attempt's
 *                                            credit goes only to the children
 *                                            whose contribution the slot it
 *                                            took over lacks, and where an
 *                                            earlier attempt's slot completed,
 *                                            its aggregate goes UP (or UNICAST
 *                                            at the root) in the credit's place;
 *   DATA_REQUEST, repair = 0, agg_depth > 0 (a request climbing its tree)
 *     entry does not aggregate               UP, or UNICAST at the root;
 *     entry aggregates                       the aggregator's answer: CONSUMED,
 *                                            DROP, an AGG_MISS (UNICAST to the
 *                                            responder), or the request or its
 *                                            aggregate on: UP, or UNICAST at the
 *                                            root or once the location stack is
 *                                            empty; the aggregate of a seeded
 *                                            slot (agg.down) also goes DOWN,
 *                                            as the tail result, to every
 *                                            child (arb_switch_action.down);
 *   anything else on a tree                  UNICAST toward the responder.
 *
 * What the driver keeps: its I/O (queues or sockets), turning ports into
 * links or addresses, payload buffers, its own counters, and the packet's
 * unicast route. The engine holds no packet and never allocates per call.
 */
#ifndef ARBOR_SWITCH_H
#define ARBOR_SWITCH_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/agg.h"
#include "arbor/base.h"
#include "arbor/plan.h"
#include "arbor/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the driver does with the packet it passed in. */
typedef enum arb_switch_verb {
    /** Free the packet, send nothing (the aggregator dropped it, or a
     * credit has no child to go to); see arb_switch_action.agg. */
    ARB_SWITCH_DROP = 0,
    /** The aggregator kept its contribution: free the packet, send nothing. */
    ARB_SWITCH_CONSUMED = 1,
    /** Send it on global port arb_switch_action.port, toward the root. */
    ARB_SWITCH_UP = 2,
    /** Send a copy to each of arb_switch_action.ports[0..n_ports). */
    ARB_SWITCH_CHILDREN = 3,
    /** Route it to its responder, as any unicast packet. */
    ARB_SWITCH_UNICAST = 4
} arb_switch_verb;

#define ARB_SWITCH_VERB_COUNT 5 /**< the number of arb_switch_verb values */

/**
 * One packet as the engine reads it, and as the driver then sends it: on
 * return hdr, payload, payload_len and ce are what to send (an aggregate
 * or an AGG_MISS replaces the request's).
 */
typedef struct arb_switch_packet {
    arb_hdr *hdr;        /**< the decoded header; updated in place */
    const void *payload; /**< its payload (NULL with none, or header-only) */
    size_t payload_len;  /**< bytes at payload (header-only: the length it stands for) */
    uint64_t channel;    /**< the channel identity the aggregator compares (agg.h) */
    uint32_t port;       /**< the arrival port, global (the plan's numbering) */
    int ce;              /**< the CE bit it arrived with; on return, the one to send */
} arb_switch_packet;

/** The engine's answer to one packet (nothing in it is allocated). */
typedef struct arb_switch_action {
    arb_switch_verb verb; /**< what to do */
    uint32_t port;        /**< UP: the global port toward the root */
    /** CHILDREN: the entry's replication set, global ports, in the plan
     * (valid while the plan is); n_ports copies in all. */
    const uint32_t *ports;
    uint32_t n_ports; /**< CHILDREN: how many ports */
    /** 1: the request went through this switch's aggregator and goes on
     * (its own, popped, or its aggregate or an AGG_MISS in its place): the
     * driver marks it as the switch's. */
    uint8_t aggregated;
    /** 1: the packet was replaced by one the switch made (an aggregate or an
     * AGG_MISS): hdr, payload and payload_len are the switch's. */
    uint8_t made;
    /** 1: the aggregator saw the packet; agg is its answer (the slot taken
     * or freed, its reason). 0: agg is not set (not even zeroed). */
    uint8_t agg_called;
    /** 1 (UNICAST of a seeded slot's aggregate, agg.down): the aggregate is
     * also the offset's whole result, sent down as its tail result: a copy
     * of down_hdr with the packet's payload (payload_len, ce 0) to each of
     * ports[0..n_ports), the entry's replication set, marked as the
     * switch's. 0 otherwise. */
    uint8_t down;
    /** down: the tail result's header (RESPONSE, credit_valid 0, kind DATA,
     * offset_a the offset, agg_depth 0). */
    arb_hdr down_hdr;
    /** The aggregator refused the call (a driver's contract broken; agg.h):
     * its error code, agg_called 0 and verb DROP; 0 otherwise. */
    int error;
    arb_agg_result agg; /**< the aggregator's answer, when agg_called */
} arb_switch_action;

/** One decision, as a tap sees it (arb_switch_set_tap). */
typedef struct arb_switch_event {
    uint32_t node;                /**< the engine's cfg.node */
    arb_time now;                 /**< the time of the call */
    const arb_hdr *in;            /**< the header as it arrived */
    const void *in_payload;       /**< its payload as it arrived */
    size_t in_len;                /**< and its length */
    int in_ce;                    /**< its CE bit as it arrived */
    const arb_switch_packet *out; /**< the packet as it is sent (hdr, payload, ce, port) */
    const arb_switch_action *act; /**< the decision */
} arb_switch_event;

/** A tap: called after every decision, before arb_switch_recv returns. */
typedef void (*arb_switch_tap)(void *ctx, const arb_switch_event *ev);

/** An engine's configuration (arb_switch_config_default). */
typedef struct arb_switch_config {
    /** The global number of the switch's port 0: the aggregator is given
     * ports relative to it (< its cfg.ports). */
    uint32_t first_port;
    /** 1: the headers were built by engines of this process and are valid by
     * construction (the simulator): the aggregator skips re-validating
     * them. 0 (the default): every header is validated (the runtime). */
    int trusted;
    /** The switch's node id, for taps (arb_switch_event.node); 0 by default. */
    uint32_t node;
    const arb_mem *mem; /**< allocator (base.h); NULL: the C library's */
} arb_switch_config;

/** A switch engine (opaque). */
typedef struct arb_switch arb_switch;

/** first_port 0, untrusted, the C library's allocator. */
void arb_switch_config_default(arb_switch_config *cfg);

/**
 * Make an engine (cfg NULL: the defaults).
 * Errors: ARB_EINVAL for a NULL out; ARB_ENOMEM.
 */
int arb_switch_new(arb_switch **out, const arb_switch_config *cfg);

/** Free an engine; NULL is allowed. */
void arb_switch_free(arb_switch *sw);

/**
 * Decide what to do with one packet of a tree that arrived at this switch.
 *
 *   agg    this switch's aggregator for the packet's job (may be NULL where
 *          the entry does not aggregate)
 *   plan   the job's plan, and e its entry for the packet's tree at this
 *          switch (arb_plan_find)
 *   pkt    the packet; updated to what is sent
 *   now    the current time; it must not go backwards
 *
 * Returns 0 and fills *out (an aggregator's refusal is out->error, with a
 * DROP), or ARB_EINVAL for a NULL sw, plan, e, pkt, pkt->hdr or out, or a
 * NULL agg where e aggregates.
 */
int arb_switch_recv(arb_switch *sw, arb_agg *agg, const arb_plan *plan, const arb_plan_entry *e,
                    arb_switch_packet *pkt, arb_time now, arb_switch_action *out);

/**
 * Watch every decision (tests that compare drivers, traces): tap(ctx, ev)
 * after each successful arb_switch_recv; NULL stops it. Errors: ARB_EINVAL
 * for a NULL sw.
 */
int arb_switch_set_tap(arb_switch *sw, arb_switch_tap tap, void *ctx);

/** A credit a switch sends again to the children still missing (local
 * repair; arb_switch_expire). */
typedef struct arb_switch_recredit {
    uint64_t channel;      /**< the channel identity the aggregator was given */
    arb_hdr hdr;           /**< the credit as it first went down: send it as is */
    const void *payload;   /**< its payload (values mode; valid until the next call) */
    size_t payload_len;    /**< its length (header-only: the length it stands for) */
    int ce;                /**< the CE bit it went down with */
    const uint32_t *ports; /**< global ports to send a copy to (valid until the next call) */
    uint32_t n_ports;      /**< how many */
} arb_switch_recredit;

/** When the switch's aggregator next has a re-credit to look at
 * (arb_agg_next_expiry), or ARB_TIME_NEVER (also for a NULL agg). */
arb_time arb_switch_next_expiry(const arb_switch *sw, const arb_agg *agg);

/**
 * The next credit due to go again: 1 and *out, or 0 when none is due at
 * `now` (arb_agg_expire). The driver sends out->hdr with out->payload on
 * each of out->ports, as it replicates a credit. Errors: ARB_EINVAL for a
 * NULL sw, agg or out.
 */
int arb_switch_expire(arb_switch *sw, arb_agg *agg, arb_time now, arb_switch_recredit *out);

/** Decisions counted by verb, and the calls that reached the aggregator. */
typedef struct arb_switch_stats {
    uint64_t packets;                      /**< arb_switch_recv calls that returned 0 */
    uint64_t verbs[ARB_SWITCH_VERB_COUNT]; /**< by arb_switch_verb */
    uint64_t agg_calls;                    /**< of which the aggregator saw */
    uint64_t copies;                       /**< CHILDREN: copies beyond the first */
    /** Children a later attempt's credit skipped: the slot it took over held
     * their contribution (local repair). */
    uint64_t spared;
    uint64_t recredits;       /**< credits sent again by the switch's own timer */
    uint64_t recredit_copies; /**< the copies they made */
    uint64_t results_down;    /**< seeded aggregates also sent down as tail results */
} arb_switch_stats;

/** The engine's counters. */
void arb_switch_get_stats(const arb_switch *sw, arb_switch_stats *out);

/** "DROP", "CONSUMED", "UP", "CHILDREN", "UNICAST"; NULL outside the enum. */
const char *arb_switch_verb_name(int verb);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_SWITCH_H */
