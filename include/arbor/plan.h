/** @file
 * arbor/plan.h - the planner (docs/protocol.md sections 10 and 12): a collective over a
 * group of ranks on a fabric becomes channels, subchannel trees, the
 * switches that aggregate for each tree, replication sets, fan-in vectors
 * and a header profile.
 *
 * The planner does not read a topology. It sees the fabric through an
 * arb_plan_fabric: how many nodes, how many candidate roots, and the path
 * of a host up to a root, hop by hop (node, up port, level). The fabric
 * layer fills one from its topology: arb_topo_plan (topo.h) plans a group
 * on a PGFT, and any other fabric can supply its own paths. From the
 * paths the planner makes the trees (their union), the replication sets,
 * the aggregating switches and the fan-in rows.
 *
 * Pure: no clock, no I/O, no randomness. A plan is opaque: the drivers
 * (the simulator, the runtime) read its channels, trees, entries and fan-in
 * rows through the accessors below, which return plain read-only records.
 * It is built once per group and read-only afterwards, so any number of
 * threads may read one plan.
 *
 * Channels (docs/protocol.md section 10, N ranks, S bytes, e = element size):
 *
 * @verbatim
 *   AllReduce      C channels: N, or with share_min
 *                  min(N, ceil(S / share_min)) (at least 1); channel c:
 *                  responder rank c, requesters the other N-1 ranks, bytes
 *                  [c S/C, (c+1) S/C) rounded down to whole elements
 *                  (lo = floor(c E / C) e for E = S/e elements); kind
 *                  PULL_RESULT. With share_min a small AllReduce is one
 *                  channel: N channels of a few bytes each would cost N
 *                  times the packets for the same passes through the
 *                  fabric.
 *   Reduce         1 channel: responder the root, requesters the others,
 *                  bytes [0, S); PULL_COMPLETION.
 *   ReduceScatter  N channels as AllReduce; PULL_COMPLETION.
 *   Broadcast      1 channel: responder the root, requesters the others,
 *                  bytes [0, S); PUSH.
 *   AllGather      N channels as AllReduce (channel c pushes shard c of the
 *                  S-byte output); PUSH.
 *   Barrier        N channels, each one header-only offset; with
 *                  share_min one channel (responder rank 0); BARRIER.
   @endverbatim
 *
 * Trees (docs/protocol.md section 12). Subchannel s of channel c is a tree rooted at one of
 * the fabric's n_roots candidate roots: root (c + s + root_offset) mod
 * n_roots, so subchannels of one channel use different roots (up to
 * n_roots of them) and channels spread over the roots. The tree is the
 * union of the fabric's paths from every rank of the channel up to that
 * root (the responder's included: its credits climb it). On a PGFT
 * (arb_topo_plan) the candidates are the switches of the lowest level L
 * that each reach every host of the group (a star: the switch; a fat-tree
 * whose group spans several pods: a top switch), numbered t = 0 .. W_L - 1
 * by their upward digits, and a rank climbs on the first live parallel
 * link toward the root's digit at every level.
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

#ifdef __cplusplus
extern "C" {
#endif

/** Ranks in one group (docs/protocol.md section 4: fan-ins are bytes). */
#define ARB_PLAN_MAX_RANKS 256
/** arb_plan_config.share_min of the runtime and the simulator: 8192 B, the
 * protocol's payload per packet (docs/protocol.md section 4.6). */
#define ARB_PLAN_SHARE_MIN 8192u
/** The largest buffer a collective plans: 2^50 bytes (1 PiB). */
#define ARB_PLAN_MAX_BYTES ((uint64_t)1 << 50)
#define ARB_PLAN_NONE UINT32_MAX /**< "none": no up port (at a tree's root), no such rank */
/** Hops of one path: a host and up to 16 switch levels above it. */
#define ARB_PLAN_MAX_HOPS 17

/** The planner plans the arb_coll values below this (base.h): every
 * collective but ARB_COLL_ALLTOALL, which only the hosts run
 * (workload.h's host collectives). */
#define ARB_PLAN_COLL_COUNT 6

/** What to plan (arb_plan_config_default). */
typedef struct arb_plan_config {
    arb_coll coll;         /**< the collective, below ARB_PLAN_COLL_COUNT (default AllReduce) */
    const uint32_t *ranks; /**< host index of rank r; distinct hosts */
    uint32_t n_ranks;      /**< 2 .. ARB_PLAN_MAX_RANKS */
    uint32_t root;         /**< Reduce, Broadcast: the root rank (default 0) */
    uint64_t bytes;        /**< S: the buffer, <= ARB_PLAN_MAX_BYTES (Barrier: ignored) */
    arb_dtype dtype;       /**< default f32 */
    uint32_t subchannels;  /**< trees per channel, 1 .. ARB_EP_MAX_SUBCHANNELS (default 1) */
    uint32_t agg_levels;   /**< bit l: level-l switches may aggregate; 0 (default): all */
    uint32_t header;       /**< 0 (default): the profile the trees need; 16 or 20 */
    /** 0 (default): a channel for every rank (AllReduce, ReduceScatter,
     * AllGather, Barrier). Else the least bytes an AllReduce channel's
     * share carries before the buffer is split among more responders
     * (ARB_PLAN_SHARE_MIN: one packet's payload), and a Barrier has one
     * channel. The runtime and the simulator's Arbor jobs plan with
     * ARB_PLAN_SHARE_MIN. */
    uint32_t share_min;
    uint32_t root_offset; /**< trees rooted at (c + s + root_offset) mod W_L (default 0):
                             groups sharing a fabric pass different offsets so that
                             their trees take different top switches */
    const arb_mem *mem;   /**< allocator (base.h); NULL: the C library's */
} arb_plan_config;

/** One channel. Its members (requesters) are ranks m = 0 .. n_members - 1 of
 * the channel, read with arb_plan_member. */
typedef struct arb_plan_channel {
    uint32_t responder;      /**< rank */
    uint32_t responder_host; /**< its host */
    uint32_t first_member;   /**< the channel's members start at the plan's member
                                  first_member (bitmap order; read with arb_plan_member) */
    uint32_t n_members;      /**< R */
    uint64_t lo;             /**< the channel's bytes [lo, hi) of the S-byte buffer */
    uint64_t hi;             /**< see lo */
    arb_ep_kind kind;        /**< the engines' kind for the collective */
    arb_op op;               /**< SUM for pull kinds, NOP for push and barrier */
    uint32_t first_tree;     /**< tree first_tree + s is subchannel s */
} arb_plan_channel;

/** One tree: channel, subchannel, root, and its entries. */
typedef struct arb_plan_tree {
    uint32_t channel;     /**< the channel of the tree */
    uint32_t subchannel;  /**< its subchannel */
    uint32_t root;        /**< the root switch (node id) */
    uint32_t first_entry; /**< its entries are first_entry .. first_entry + n_entries - 1 */
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
    uint32_t first_child; /**< where its replication set starts (arb_plan_children) */
    uint32_t n_children;  /**< replication set: ports leading to requesters */
    uint8_t aggregate;    /**< 1: this switch aggregates for the tree */
    uint8_t gathers;      /**< requesters below it (255 max; hosts: 1 or 0) */
    uint8_t level;        /**< the node's level: 0 a host, 1 and up a switch */
} arb_plan_entry;

/** A plan: opaque, built by arb_plan_new (or arb_topo_plan), read through
 * the accessors below, freed by arb_plan_free. */
typedef struct arb_plan arb_plan;

/**
 * One hop of a host's path up to a tree's root: the node, and the link it
 * leaves on toward the root, seen from both ends.
 */
typedef struct arb_plan_hop {
    uint32_t node;    /**< node id, < arb_plan_fabric.n_nodes (hosts: their host index) */
    uint32_t up_port; /**< port of `node` toward the root; ARB_PLAN_NONE at the root */
    uint32_t up_peer; /**< the same link's port at the next node up (its down port toward
                           `node`); ARB_PLAN_NONE at the root */
    uint8_t level;    /**< 0: a host; 1 and up: a switch of that level */
} arb_plan_hop;

/**
 * The fabric as one group sees it: what the planner needs of a topology.
 * The fabric layer fills it for the group's hosts (arb_topo_plan does for a
 * PGFT). Tree (c, s) is rooted at candidate root (c + s + root_offset) mod
 * n_roots; `path` gives a host's way up to a candidate root.
 */
typedef struct arb_plan_fabric {
    uint32_t n_hosts;    /**< hosts are nodes 0 .. n_hosts - 1 */
    uint32_t n_nodes;    /**< node ids are below n_nodes */
    uint32_t n_roots;    /**< candidate roots (switches that reach every host of the group), >= 1 */
    uint32_t root_level; /**< the level of the candidate roots (reported by arb_plan_root_level) */
    /** Fill hops[0 .. n) with host's path up to candidate root `root`: hops[0]
     * the host, hops[n - 1] the root (up_port ARB_PLAN_NONE), at most
     * ARB_PLAN_MAX_HOPS; the planner calls it only for hosts below n_hosts
     * and roots below n_roots. Returns n, or ARB_ENOENT when no live path
     * leads there. */
    int (*path)(const void *ctx, uint32_t host, uint32_t root, arb_plan_hop *hops);
    const void *ctx; /**< passed to path */
} arb_plan_fabric;

/** Fill *cfg with the defaults its fields name (no ranks). */
void arb_plan_config_default(arb_plan_config *cfg);

/**
 * Build the plan of `cfg` on fabric f (arb_topo_plan builds one from a
 * topology). On failure *out is NULL and err (when not NULL) holds one line
 * naming the problem. Errors: ARB_EINVAL (NULL argument, a fabric without
 * a path function or roots, fewer than 2 or more than 256 ranks, a rank's
 * host out of range or repeated, a root out of range, a collective, dtype
 * or subchannel count out of range, bytes not whole elements, a header
 * other than 0, 16 or 20, a path from the fabric that is empty, too long
 * or names a node out of range), ARB_ERANGE (a path with more than 3
 * aggregating tiers, or two with a 16 B header; a tier gathering more than
 * 255), ARB_ENOENT (no live path from a rank to a root), ARB_ENOMEM.
 */
int arb_plan_new(arb_plan **out, const arb_plan_fabric *f, const arb_plan_config *cfg, char *err,
                 size_t errlen);
/** Free a plan and its arrays (NULL is ignored). */
void arb_plan_free(arb_plan *p);

/** The configuration the plan was built from; its `ranks` point at the
 * plan's own copy. */
const arb_plan_config *arb_plan_get_config(const arb_plan *p);
/** The host of rank r; ARB_PLAN_NONE when r is out of range. */
uint32_t arb_plan_host(const arb_plan *p, uint32_t r);

/** How many channels the plan has (N, or 1 for Reduce and Broadcast; with
 * share_min 1 for Barrier and 1..N for AllReduce). */
uint32_t arb_plan_n_channels(const arb_plan *p);
/** Channel c; NULL when out of range. */
const arb_plan_channel *arb_plan_get_channel(const arb_plan *p, uint32_t c);
/** The rank of member m (0 .. n_members - 1, bitmap order) of channel c;
 * ARB_PLAN_NONE when out of range. */
uint32_t arb_plan_member(const arb_plan *p, uint32_t c, uint32_t m);

/** How many trees: channels x subchannels. */
uint32_t arb_plan_n_trees(const arb_plan *p);
/** Tree t (channel by channel, subchannel by subchannel); NULL when out of range. */
const arb_plan_tree *arb_plan_get_tree(const arb_plan *p, uint32_t t);

/** How many entries, over every tree. */
uint32_t arb_plan_n_entries(const arb_plan *p);
/** Entry i (tree by tree: a tree's entries are its first_entry .. +
 * n_entries - 1, contiguous, so arb_plan_get_entry(p, i) equals
 * arb_plan_get_entry(p, 0) + i); NULL when out of range. */
const arb_plan_entry *arb_plan_get_entry(const arb_plan *p, uint32_t i);
/** The replication set of entry e (an entry of p): its n_children down
 * ports; NULL when it has none. */
const uint32_t *arb_plan_children(const arb_plan *p, const arb_plan_entry *e);

/** The entry of node in tree `tree`, or NULL when the node is not in it
 * (or either is out of range). Constant time: the plan holds an index of
 * n_nodes + (nodes in some tree) x n_trees words, what a switch reads for
 * every packet of a tree. */
const arb_plan_entry *arb_plan_find(const arb_plan *p, uint32_t tree, uint32_t node);
/** The entry of node in the tree of channel c on subchannel s (the tree
 * channel c's first_tree + s), or NULL when any is out of range or the node
 * is not in that tree. */
const arb_plan_entry *arb_plan_find_sub(const arb_plan *p, uint32_t c, uint32_t s, uint32_t node);

/** The fan-in row (3 bytes, root first; 1 above the member's depth) of
 * member m (0 .. R-1) of channel c on subchannel s, the table
 * arb_requester_config.fanin takes (the member's rows for its subchannels
 * follow one another); NULL when out of range. */
const uint8_t *arb_plan_fanin(const arb_plan *p, uint32_t c, uint32_t m, uint32_t s);
/** The aggregating tiers (0 .. 3) on the path of member m of channel c on
 * subchannel s; 0 when out of range. */
unsigned arb_plan_depth(const arb_plan *p, uint32_t c, uint32_t m, uint32_t s);

/** The header length the trees need: 16, or 20 (ext = 1). */
uint32_t arb_plan_hdr_len(const arb_plan *p);
/** L: the level of the trees' roots (arb_plan_fabric.root_level). */
uint32_t arb_plan_root_level(const arb_plan *p);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_PLAN_H */
