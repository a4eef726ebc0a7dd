/** @file
 * arbor/plan.h - the planner (docs/protocol.md sections 10 and 12): a collective over a
 * group of ranks on a topology becomes channels, subchannel trees, the
 * switches that aggregate for each tree, replication sets, fan-in vectors
 * and a header profile.
 *
 * Pure: no clock, no I/O, no randomness. A plan is plain arrays the
 * drivers (the simulator, the runtime) read; it is built once per group
 * and read-only afterwards.
 *
 * Channels (docs/protocol.md section 10, N ranks, S bytes, e = element size):
 *
 * @verbatim
 *   AllReduce      N channels; channel c: responder rank c, requesters the
 *                  other N-1 ranks, bytes [c S/N, (c+1) S/N) rounded down
 *                  to whole elements (lo = floor(c E / N) e for E = S/e
 *                  elements); kind PULL_RESULT.
 *   Reduce         1 channel: responder the root, requesters the others,
 *                  bytes [0, S); PULL_COMPLETION.
 *   ReduceScatter  N channels as AllReduce; PULL_COMPLETION.
 *   Broadcast      1 channel: responder the root, requesters the others,
 *                  bytes [0, S); PUSH.
 *   AllGather      N channels as AllReduce (channel c pushes shard c of the
 *                  S-byte output); PUSH.
 *   Barrier        N channels, each one header-only offset; BARRIER.
   @endverbatim
 *
 * Trees (docs/protocol.md section 12). Subchannel s of channel c is a tree rooted at one switch
 * of the lowest level L whose switches each reach every host of the group
 * (a star: the switch; a fat-tree whose group spans several pods: a top
 * switch). The level-L switches above the group are numbered t = 0 ..
 * W_L - 1 by their upward digits; the tree of (c, s) is rooted at
 * t = (c + s + root_offset) mod W_L, so subchannels of one channel use different roots
 * (up to W_L of them) and channels spread over the roots. Every rank's path
 * to the root goes up on the first live parallel link toward the root's
 * digit at every level, so the tree is the union of these paths (the
 * responder's included: its credits climb it).
 *
 * Aggregation placement: a switch of the tree aggregates when its level is
 * in `agg_levels` (bit l for level l; 0 = every level) and it gathers the
 * contributions of at least two requesters, or when it is the root (which
 * always aggregates: with one requester, fan-in 1, two ranks degrade to
 * point to point). At most 3 tiers aggregate on a path (ARB_MAX_DEPTH).
 * A slot counts one contribution per switch port (docs/protocol.md section 5), so a switch
 * that merges requesters of several branches into its up port must
 * aggregate: a placement that leaves such a switch out is ARB_EINVAL
 * ("... does not aggregate ... add level l to agg_levels"). Levels can be
 * left out only where every switch of the level passes one branch on.
 *
 * Fan-in (docs/protocol.md section 10): for requester m on tree (c, s), fanin[i] is the number
 * of requesters of c whose path crosses the switch of m's i-th aggregating
 * tier, root tier first (the original contributions that tier gathers).
 *
 * Header profile: 20 B (ext = 1) when some tree has a path with more than
 * one aggregating tier, else 16 B; `header` may force 20 B, and asking for
 * 16 B when a path needs two tiers is an error.
 */
#ifndef ARBOR_PLAN_H
#define ARBOR_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"
#include "arbor/endpoint.h"
#include "arbor/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Ranks in one group (docs/protocol.md section 4: fan-ins are bytes). */
#define ARB_PLAN_MAX_RANKS 256
/** The largest buffer a collective plans: 2^50 bytes (1 PiB). */
#define ARB_PLAN_MAX_BYTES ((uint64_t)1 << 50)
#define ARB_PLAN_NONE UINT32_MAX /**< "none": no up port (at a tree's root) */

/** The collectives. */
typedef enum arb_coll {
    ARB_COLL_ALLREDUCE = 0,
    ARB_COLL_REDUCE = 1,
    ARB_COLL_REDUCESCATTER = 2,
    ARB_COLL_BROADCAST = 3,
    ARB_COLL_ALLGATHER = 4,
    ARB_COLL_BARRIER = 5
} arb_coll;

#define ARB_COLL_COUNT 6 /**< the number of arb_coll values */

/** "allreduce", "reduce", "reducescatter", "broadcast", "allgather",
 * "barrier"; NULL outside the enum. */
const char *arb_coll_name(int coll);
/** Parse a name above (case-insensitive); ARB_ENOENT otherwise. */
int arb_coll_parse(const char *name);

/** What to plan (arb_plan_config_default). */
typedef struct arb_plan_config {
    arb_coll coll;         /**< the collective (default AllReduce) */
    const uint32_t *ranks; /**< host index of rank r; distinct hosts */
    uint32_t n_ranks;      /**< 2 .. ARB_PLAN_MAX_RANKS */
    uint32_t root;         /**< Reduce, Broadcast: the root rank (default 0) */
    uint64_t bytes;        /**< S: the buffer, <= ARB_PLAN_MAX_BYTES (Barrier: ignored) */
    arb_dtype dtype;       /**< default f32 */
    uint32_t subchannels;  /**< trees per channel, 1 .. ARB_EP_MAX_SUBCHANNELS (default 1) */
    uint32_t agg_levels;   /**< bit l: level-l switches may aggregate; 0 (default): all */
    uint32_t header;       /**< 0 (default): the profile the trees need; 16 or 20 */
    uint32_t root_offset;  /**< trees rooted at (c + s + root_offset) mod W_L (default 0):
                              groups sharing a fabric pass different offsets so that
                              their trees take different top switches */
    const arb_mem *mem;    /**< allocator (base.h); NULL: the C library's */
} arb_plan_config;

/** One channel. Members are indices into the plan's `members` array. */
typedef struct arb_plan_channel {
    uint32_t responder;      /**< rank */
    uint32_t responder_host; /**< its host */
    uint32_t first_member;   /**< members[first_member .. + n_members): ranks, bitmap order */
    uint32_t n_members;      /**< R */
    uint64_t lo;             /**< the channel's bytes [lo, hi) of the S-byte buffer */
    uint64_t hi;             /**< see lo */
    arb_ep_kind kind;        /**< the engines' kind for the collective */
    arb_op op;               /**< SUM for pull kinds, NOP for push and barrier */
    uint32_t first_tree;     /**< trees[first_tree + s] is subchannel s */
} arb_plan_channel;

/** One tree: channel, subchannel, root, and its entries. */
typedef struct arb_plan_tree {
    uint32_t channel;     /**< the channel of the tree */
    uint32_t subchannel;  /**< its subchannel */
    uint32_t root;        /**< the root switch (node id) */
    uint32_t first_entry; /**< entries[first_entry .. + n_entries) */
    uint32_t n_entries;   /**< see first_entry */
    uint8_t max_depth;    /**< most aggregating tiers on one path */
} arb_plan_tree;

/**
 * The forwarding state one node keeps for one tree (docs/protocol.md section 12): switches of
 * the tree, and the hosts of the responder and the requesters (whose entry
 * names the NIC port their packets for the tree leave on).
 */
typedef struct arb_plan_entry {
    uint32_t node;        /**< the node (switch or host) */
    uint32_t up_port;     /**< global port toward the root; ARB_PLAN_NONE at the root */
    uint32_t first_child; /**< child_ports[first_child .. + n_children): down ports */
    uint32_t n_children;  /**< replication set: ports leading to requesters */
    uint8_t aggregate;    /**< 1: this switch aggregates for the tree */
    uint8_t gathers;      /**< requesters below it (255 max; hosts: 1 or 0) */
} arb_plan_entry;

/** A plan: plain arrays owned by the plan, freed by arb_plan_free. */
typedef struct arb_plan {
    arb_plan_config cfg;        /**< as given, ranks copied */
    uint32_t *ranks;            /**< the copy of cfg.ranks (cfg.ranks points here) */
    uint32_t n_channels;        /**< entries of channels */
    arb_plan_channel *channels; /**< the channels */
    uint32_t n_members;         /**< entries of members */
    uint32_t *members;          /**< ranks */
    uint32_t n_trees;           /**< entries of trees */
    arb_plan_tree *trees;       /**< the trees, channel by channel */
    uint32_t n_entries;         /**< entries of entries */
    arb_plan_entry *entries;    /**< the trees' forwarding state */
    uint32_t n_child_ports;     /**< entries of child_ports */
    uint32_t *child_ports;      /**< replication sets (global ports) */
    /** fanin[((first_member + m) * subchannels + s) * 3 + i]: member m of
     * its channel on subchannel s, tier i (root first); 1 above its depth.
     * So the rows of one member start at fanin + (first_member + m) *
     * subchannels * 3, the table arb_requester_config.fanin takes. */
    uint8_t *fanin;
    uint8_t *depth;      /**< depth[(first_member + m) * subchannels + s] */
    uint32_t root_level; /**< L: the level of the trees' roots */
    uint8_t ext;         /**< 1: 20 B headers */
    uint32_t hdr_len;    /**< 16 or 20 */
} arb_plan;

/** Fill *cfg with the defaults its fields name (no ranks). */
void arb_plan_config_default(arb_plan_config *cfg);

/**
 * Build the plan of `cfg` on topology t (failures honoured). On failure
 * *out is NULL and err (when not NULL) holds one line naming the problem.
 * Errors: ARB_EINVAL (NULL argument, fewer than 2 or more than 256 ranks,
 * a rank's host out of range or repeated, a root out of range, a
 * collective, dtype or subchannel count out of range, bytes not whole
 * elements, a header other than 0, 16 or 20, a topology that is not a
 * PGFT), ARB_ERANGE (a path with more than 3 aggregating tiers, or two
 * with a 16 B header; a tier gathering more than 255), ARB_ENOENT (no live
 * path from a rank to a root), ARB_ENOMEM.
 */
int arb_plan_new(arb_plan **out, const arb_topo *t, const arb_plan_config *cfg, char *err,
                 size_t errlen);
/** Free a plan and its arrays (NULL is ignored). */
void arb_plan_free(arb_plan *p);

/** The entry of node in tree `tree`, or NULL when the node is not in it. */
const arb_plan_entry *arb_plan_find(const arb_plan *p, uint32_t tree, uint32_t node);

/** The fan-in row (3 bytes, root first) of member m (0 .. R-1) of channel c
 * on subchannel s; NULL when out of range. */
const uint8_t *arb_plan_fanin(const arb_plan *p, uint32_t c, uint32_t m, uint32_t s);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_PLAN_H */
