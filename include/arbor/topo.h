/** @file
 * arbor/topo.h - the fabric's topology: hosts, switches and the directed
 * links between them, built from a one-line spec.
 *
 * The model is plain arrays, not a pointer graph, because the simulator
 * reads it per packet and `arbor route` per hop of every flow:
 *
 * @verbatim
 *   nodes  0 .. H-1 are the hosts (host j is node j), then the switches of
 *          level 1 (the leaves) in index order, then level 2, ... up to the
 *          top level h. Node id of (level l, index i) = level_first(l) + i.
 *   ports  every node owns a contiguous run of ports; a port is one
 *          direction of one link (an output port with its wire). A node's
 *          down ports come first, then its up ports:
 *            down port d (d = 0 .. n_down-1) is port first_port + d,
 *            up port q   (q = 0 .. n_up-1)   is port first_up + q.
 *          Every port knows the node and the port at the other end, so a
 *          link is the pair (p, port[p].peer_port).
   @endverbatim
 *
 * Every generator of this version builds a PGFT (docs/topology.md, "Numbering and wiring";
 * numbering, wiring and D-mod-k, exactly"); the generic ones (star,
 * leaf-spine, k-ary n-tree, dual-plane, rail) are PGFT parameter choices
 * with their own spec syntax, documented at arb_topo_new. The numbering and
 * wiring follow docs/topology.md exactly:
 *
 *   - a level-l node has label digits a_1..a_h, a_i in [0, w_i) for i <= l
 *     and in [0, m_i) for i > l; its index within the level is the
 *     little-endian number of its digits (digit 1 fastest);
 *   - up port q of a level-l node goes to the parent whose digit l+1 is
 *     q mod w_{l+1}, on parallel link floor(q / w_{l+1});
 *   - down port d of a level-l node goes to the child whose digit l is
 *     d mod m_l, on parallel link floor(d / m_l). (This order mirrors the
 *     up ports: the child's up port for that link is b_l + w_l * k, where
 *     b_l is the parent's digit l and k the parallel-link index.)
 *
 * So a router finds ports in O(1) without searching:
 *   - up port q of node n:            n->first_up + q;
 *   - down port of switch n toward host j (j below n): arb_pgft_down_port,
 *     which takes child digit (j / M_{l-1}) mod m_l and parallel link
 *     floor(j / W_l) mod p_l as docs/topology.md says;
 *   - whether host j is below switch n: arb_pgft_below.
 *
 * Failures (arb_topo_fail) mark links failed in both directions and leave
 * every array and index unchanged; routers skip failed ports. A failed
 * link or switch can be brought back (arb_topo_restore).
 *
 * The module is pure: no clock, no I/O, no randomness, no printing. A
 * built topology is read-only except for failures and arb_topo_set_link,
 * so any number of readers may share it.
 */
#ifndef ARBOR_TOPO_H
#define ARBOR_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Limits                                                               */
/* ------------------------------------------------------------------ */

#define ARB_TOPO_MAX_HEIGHT 16        /**< switch levels h (levels 0..h) */
#define ARB_TOPO_MAX_HOSTS (1u << 24) /**< hosts (end nodes) */
#define ARB_TOPO_MAX_RADIX 65535u     /**< ports of one node, down + up */
#define ARB_TOPO_MAX_NODES (1u << 30) /**< hosts + switches */
#define ARB_TOPO_MAX_PORTS (1u << 28) /**< directed links (8 GiB of ports) */
#define ARB_TOPO_NONE UINT32_MAX      /**< "no node" / "no port" */

/** Defaults of arb_topo_config_default(). */
#define ARB_TOPO_DEFAULT_RATE ((uint64_t)100000000000) /**< 100 Gb/s */
#define ARB_TOPO_DEFAULT_DELAY ARB_PS_PER_US           /**< 1 us per link */

/* ------------------------------------------------------------------ */
/* Plain data: nodes and ports                                          */
/* ------------------------------------------------------------------ */

/** A node is a host or a switch. */
typedef enum arb_node_kind { ARB_NODE_HOST = 0, ARB_NODE_SWITCH = 1 } arb_node_kind;

/**
 * A port's role, seen from the node that owns it. UP goes to a node one
 * level higher (a host's NIC ports are UP), DOWN to a node one level lower.
 * A switch port facing a host is DOWN with tier 0.
 */
typedef enum arb_link_role { ARB_LINK_DOWN = 0, ARB_LINK_UP = 1 } arb_link_role;

/** One node: 24 bytes. */
typedef struct arb_node {
    uint32_t first_port; /**< global index of its port 0 (its first down port) */
    uint32_t first_up;   /**< global index of up port q = 0; = first_port + n_down */
    uint32_t index;      /**< index within its level (host j: j) */
    uint32_t hosts_from; /**< the hosts below it are hosts_from .. hosts_from + M_level - 1 */
    uint16_t n_down;     /**< down ports (0 for hosts) */
    uint16_t n_up;       /**< up ports (0 for the top level) */
    uint8_t kind;        /**< arb_node_kind */
    uint8_t level;       /**< 0 hosts, 1 leaves, ..., h top */
    uint8_t failed;      /**< 1: the switch failed (every link of it is failed) */
    uint8_t reserved;    /**< 0 */
} arb_node;

/** One directed link, leaving its owner: 32 bytes. */
typedef struct arb_port {
    uint64_t rate;      /**< bits per second */
    arb_time delay;     /**< propagation delay, picoseconds */
    uint32_t peer;      /**< node at the other end */
    uint32_t peer_port; /**< global index of the same link in the other direction */
    uint16_t num;       /**< role UP: the up-port number q; DOWN: the down-port number d */
    uint16_t parallel;  /**< index of this link among the parallel links of the node pair */
    uint8_t role;       /**< arb_link_role */
    uint8_t tier;       /**< level of the lower end: 0 host links, l for level l <-> l+1 */
    uint8_t failed;     /**< 1: the link is down (both directions are marked) */
    uint8_t reserved;   /**< 0 */
} arb_port;

/* ------------------------------------------------------------------ */
/* PGFT parameters and digit arithmetic                                 */
/* ------------------------------------------------------------------ */

/**
 * PGFT(h; m_1..m_h; w_1..w_h; p_1..p_h) with the prefix products routers
 * need. Arrays are indexed by level 1..h; index 0 holds 1 so that the
 * formulas work at level 0 and level 1 alike.
 */
typedef struct arb_pgft {
    unsigned h;                             /**< switch levels */
    uint32_t m[ARB_TOPO_MAX_HEIGHT + 1];    /**< children of a level-l node */
    uint32_t w[ARB_TOPO_MAX_HEIGHT + 1];    /**< distinct parents of a level-(l-1) node */
    uint32_t p[ARB_TOPO_MAX_HEIGHT + 1];    /**< parallel links to each parent */
    uint32_t W[ARB_TOPO_MAX_HEIGHT + 1];    /**< W[l] = w_1 * ... * w_l, W[0] = 1 */
    uint32_t M[ARB_TOPO_MAX_HEIGHT + 1];    /**< M[l] = m_1 * ... * m_l, M[0] = 1, M[h] = hosts */
    uint32_t size[ARB_TOPO_MAX_HEIGHT + 1]; /**< nodes of level l: W[l] * M[h] / M[l] */
} arb_pgft;

/** Digit i (1..h) of host j: floor(j / M[i-1]) mod m[i]; 0 for i outside 1..h. */
static inline uint32_t arb_pgft_host_digit(const arb_pgft *g, uint32_t j, unsigned i)
{
    if (i == 0 || i > g->h) return 0;
    return (j / g->M[i - 1]) % g->m[i];
}

/**
 * Digit i (1..h) of the node at `level` with index `idx`: radix w_i for
 * i <= level, m_i above; 0 for i outside 1..h.
 */
static inline uint32_t arb_pgft_node_digit(const arb_pgft *g, unsigned level, uint32_t idx,
                                           unsigned i)
{
    if (i == 0 || i > g->h || level > g->h) return 0;
    if (i <= level) return (idx / g->W[i - 1]) % g->w[i];
    return (uint32_t)(((uint64_t)idx / ((uint64_t)g->W[level] * (g->M[i - 1] / g->M[level]))) %
                      g->m[i]);
}

/**
 * Whether host j is in the subtree of node n (its digits above n's level
 * equal j's): floor(index / W_l) == floor(j / M_l). A host is "below"
 * itself only.
 */
static inline int arb_pgft_below(const arb_pgft *g, const arb_node *n, uint32_t j)
{
    return j - n->hosts_from < g->M[n->level]; /**< n->index / W_l == j / M_l */
}

/**
 * Global port index of the down port of switch n (level l >= 1) toward
 * host j, which must be below n: child digit c = (j / M_{l-1}) mod m_l,
 * parallel link k = floor(j / W_l) mod p_l, port first_port + c + m_l * k.
 * Unchecked: see arb_topo_down_port for the checked form.
 */
static inline uint32_t arb_pgft_down_port(const arb_pgft *g, const arb_node *n, uint32_t j)
{
    unsigned l = n->level ? n->level : 1; /**< a host has no down port; stay in bounds */
    uint32_t c = (j / g->M[l - 1]) % g->m[l];
    uint32_t k = (j / g->W[l]) % g->p[l];
    return n->first_port + c + g->m[l] * k;
}

/**
 * The minimal next hops of switch n toward host j when none of its ports
 * failed: ports *first, *first + *stride, ... (the return value counts
 * them): the p_l parallel links toward the child on j's path when j is
 * below n, else every up port. Unchecked (n a switch, j a host).
 */
static inline unsigned arb_pgft_next_range(const arb_pgft *g, const arb_node *n, uint32_t j,
                                           uint32_t *first, uint32_t *stride)
{
    unsigned l = n->level;
    uint32_t r = j - n->hosts_from; /**< j below n: r < M_l, hosts_from a multiple of M_l */
    if (l > 0 && r < g->M[l]) {
        *first = n->first_port + r / g->M[l - 1]; /**< (j / M_{l-1}) mod m_l, one division */
        *stride = g->m[l];
        return g->p[l];
    }
    *first = n->first_up;
    *stride = 1;
    return n->n_up;
}

/* ------------------------------------------------------------------ */
/* Building                                                             */
/* ------------------------------------------------------------------ */

/** A built topology: its nodes, ports and failures (opaque). */
typedef struct arb_topo arb_topo;

/** The generator a topology came from. */
typedef enum arb_topo_kind {
    ARB_TOPO_STAR = 0,
    ARB_TOPO_LEAFSPINE = 1,
    ARB_TOPO_KARY = 2,
    ARB_TOPO_PGFT = 3,
    ARB_TOPO_DUALPLANE = 4,
    ARB_TOPO_RAIL = 5
} arb_topo_kind;

/** Link rates and delay for a topology (arb_topo_config_default). */
typedef struct arb_topo_config {
    uint64_t rate;    /**< host links (tier 0), bits/s; default 100 Gb/s */
    uint64_t up_rate; /**< switch-to-switch links; 0 (default) = rate */
    arb_time delay;   /**< propagation delay of every link, ps; default 1 us */
} arb_topo_config;

/** rate 100 Gb/s, up_rate 0 (same as rate), delay 1 us. */
arb_topo_config arb_topo_config_default(void);

/**
 * Build the topology `spec` describes. cfg may be NULL for the defaults.
 * On failure *out is NULL and, when err is not NULL, err holds one line
 * naming the generator and the field ("pgft: m list has 2 values, H is 3").
 *
 * Spec syntax (all numbers decimal; RATE as for arb_topo_parse_rate):
 *
 * @verbatim
 *   star:N
 *       N hosts on one switch = PGFT(1; N; 1; 1).
 *   leafspine:LEAVES,DOWN,UP[,UPRATE]
 *       LEAVES leaves with DOWN hosts each and UP uplinks, one to each of
 *       UP spines = PGFT(2; DOWN,LEAVES; 1,UP; 1,1). Host h is on leaf
 *       floor(h / DOWN) at down port h mod DOWN; up port u of every leaf
 *       goes to spine u; spine down port i goes to leaf i. UPRATE, when
 *       given, is the rate of the leaf-spine links (overrides cfg->up_rate).
 *   kary:K,N
 *       Petrini's k-ary n-tree, K^N hosts, N levels of K^(N-1) switches
 *       = PGFT(N; K,..,K; 1,K,..,K; 1,..,1).
 *   pgft:H;m1,..,mH;w1,..,wH;p1,..,pH
 *       exactly docs/topology.md. RLFTs (m_l p_l = w_{l+1} p_{l+1}) and slimmed
 *       trees (w_{l+1} p_{l+1} < m_l p_l) are parameter choices.
 *   dualplane:PAIRS,HOSTS,AGGS[,PODS,CORES]
 *       Alibaba HPN's dual-ToR, dual-plane pod. A host is one NIC with two
 *       ports; its HOSTS-host group hangs on a ToR pair: NIC port 0 on the
 *       pair's plane-0 ToR, port 1 on its plane-1 ToR (same down port, the
 *       host's position in the pair). Every plane-0 ToR uplinks once to
 *       each of the AGGS aggregation switches of plane 0, every plane-1
 *       ToR to the AGGS of plane 1; nothing joins the planes below the
 *       hosts. = PGFT(2; HOSTS,PAIRS; 2,AGGS; 1,1): the plane of a switch
 *       is its digit 1, that is index mod 2 (ToR pair i = L1.2i, L1.2i+1;
 *       aggregation switch a of plane s = L2.(s + 2a)). With PODS and
 *       CORES, PODS such pods are joined by a core tier that keeps the
 *       planes apart: aggregation switch a of plane s in every pod uplinks
 *       to the CORES core switches of group (s, a). Aggregation switch a of
 *       plane s in pod o is L2.(s + 2a + 2 AGGS o); core c of group (s, a)
 *       is L3.(s + 2a + 2 AGGS c), and its down port o goes to pod o.
 *       = PGFT(3; HOSTS,PAIRS,PODS; 2,AGGS,CORES; 1,1,1).
 *   rail:GROUPS,SERVERS,RAILS,SPINES
 *       Rail-optimised: GROUPS groups of SERVERS servers with RAILS GPUs,
 *       one NIC each; NIC k of every server of a group is on rail switch k
 *       of that group, and SPINES spines join every rail switch of every
 *       group. A host is one GPU/NIC; host j is GPU k = (j / SERVERS) mod
 *       RAILS of server s = j mod SERVERS of group g = j / (SERVERS *
 *       RAILS), on rail switch L1.(k + RAILS * g) at down port s. GPUs of
 *       one server talk over the server's own links (not modelled here);
 *       same-rail traffic crosses one switch.
 *       = PGFT(2; SERVERS,RAILS*GROUPS; 1,SPINES; 1,1).
   @endverbatim
 *
 * Links of tier 0 (host links) get cfg->rate, all others cfg->up_rate
 * (or cfg->rate when it is 0); every link gets cfg->delay.
 *
 * Errors: ARB_EPARSE for every fault of the spec (syntax, a field that is
 * 0, a fabric beyond the limits above; the message names the field),
 * ARB_EINVAL (NULL out or spec, or a config rate outside 1..ARB_RATE_MAX),
 * ARB_ENOMEM.
 */
int arb_topo_new(arb_topo **out, const char *spec, const arb_topo_config *cfg, char *err,
                 size_t errlen);

/**
 * Build a PGFT from parameters (h, m[1..h], w[1..h], p[1..h] of g; the
 * other fields are ignored and filled in the built topology). Errors as
 * arb_topo_new, but ARB_ERANGE where arb_topo_new gives ARB_EPARSE.
 */
int arb_topo_new_pgft(arb_topo **out, const arb_pgft *g, const arb_topo_config *cfg, char *err,
                      size_t errlen);

/** Free a topology; NULL is ignored. */
void arb_topo_free(arb_topo *t);

/* ------------------------------------------------------------------ */
/* Reading                                                              */
/* ------------------------------------------------------------------ */

/** The spec in canonical form (e.g. "leafspine:4,2,2"); never NULL. */
const char *arb_topo_spec(const arb_topo *t);

/** The generator the topology came from. */
arb_topo_kind arb_topo_get_kind(const arb_topo *t);

/** "star", "leafspine", "kary", "pgft", "dualplane", "rail"; NULL outside the enum. */
const char *arb_topo_kind_name(int kind);

/** PGFT parameters; NULL if the topology is not a PGFT (every generator of
 * this version builds one). */
const arb_pgft *arb_topo_pgft(const arb_topo *t);

/** Switch levels h: levels are 0 (hosts) .. h. */
unsigned arb_topo_height(const arb_topo *t);

/** Hosts H (node ids 0 .. H-1). */
uint32_t arb_topo_n_hosts(const arb_topo *t);
/** Nodes: hosts and switches. */
uint32_t arb_topo_n_nodes(const arb_topo *t);
/** Ports, directed: twice the links. */
uint32_t arb_topo_n_ports(const arb_topo *t);

/** Nodes of level l; 0 for l > h. */
uint32_t arb_topo_level_size(const arb_topo *t, unsigned level);
/** The node id of index 0 of level l; 0 for l > h. */
uint32_t arb_topo_level_first(const arb_topo *t, unsigned level);

/** Node id of (level, index), or ARB_TOPO_NONE when out of range. */
uint32_t arb_topo_node_id(const arb_topo *t, unsigned level, uint32_t index);

/**
 * The node array itself, for loops that read many entries: n_nodes
 * entries, owned by t, valid until arb_topo_free (failures update them).
 */
const arb_node *arb_topo_nodes(const arb_topo *t);
/** The port array (n_ports entries), as arb_topo_nodes. */
const arb_port *arb_topo_ports(const arb_topo *t);

/** One node, or NULL when the id is out of range. */
const arb_node *arb_topo_node(const arb_topo *t, uint32_t node);
/** One port, or NULL when the id is out of range. */
const arb_port *arb_topo_port(const arb_topo *t, uint32_t port);

/** The node that owns `port` (the peer of its peer port); ARB_TOPO_NONE
 * when out of range. */
uint32_t arb_topo_port_owner(const arb_topo *t, uint32_t port);

/**
 * A short name for the level: "host"; then by generator: star "switch";
 * leafspine "leaf", "spine"; rail "rail", "spine"; dualplane "tor", "agg",
 * "core"; kary and pgft "leaf", then "spine" (h = 2) or "L2".."L<h-1>",
 * "top". NULL for a level above h.
 */
const char *arb_topo_level_name(const arb_topo *t, unsigned level);

/**
 * The checked form of the PGFT helper: 1 if host j is below `node`, 0 if
 * not. Errors: ARB_EINVAL for an id out of range.
 */
int arb_topo_below(const arb_topo *t, uint32_t node, uint32_t j);
/**
 * The global port of switch `node` toward host j, into *port. Errors:
 * ARB_EINVAL (node is a host or an id is out of range), ARB_ENOENT (j is
 * not below node).
 */
int arb_topo_down_port(const arb_topo *t, uint32_t node, uint32_t j, uint32_t *port);

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */

/**
 * Write the name of node into buf: hosts are "h<j>" (h0, h12), switches
 * "L<level>.<index>" (L1.5 is leaf 5, L3.0 the first top switch); 16 bytes
 * always suffice. Errors: ARB_ENOSPC when it does not fit, ARB_EINVAL for
 * a bad id.
 */
int arb_topo_node_name(const arb_topo *t, uint32_t node, char *buf, size_t len);
/**
 * The node named `name` (as arb_topo_node_name writes it), into *node.
 * Errors: ARB_EPARSE when it is not of that form, ARB_ENOENT when no such
 * node exists.
 */
int arb_topo_find(const arb_topo *t, const char *name, uint32_t *node);

/* ------------------------------------------------------------------ */
/* Failures and link changes                                            */
/* ------------------------------------------------------------------ */

/** Mark the link of `port` failed in both directions. ARB_EINVAL: bad id;
 * ARB_ENOMEM: no room for the record of links failed as links (made the
 * first time one fails). */
int arb_topo_fail_link(arb_topo *t, uint32_t port);

/** Mark switch `node` failed and every link of it. ARB_EINVAL: bad id or a
 * host (fail a host's links instead). */
int arb_topo_fail_node(arb_topo *t, uint32_t node);

/**
 * Parse a failure list and apply it: all or nothing (nothing changes when
 * an item is wrong). Items are separated by commas, blanks (spaces, tabs)
 * or both, a run of them counting as one ("a,b", "a, b", "a b"; a ';' is
 * refused as a separator, naming the item); each is one of
 *
 * @verbatim
 *   switch:NAME       the switch and all its links       switch:L2.3
 *   link:A-B          every parallel link between A, B   link:L1.0-L2.1
 *   link:A-B/K        parallel link K between A and B    link:h3-L1.1/0
 *   up:NAME:Q         up port Q of NAME and its reverse  up:L1.5:3
 *   down:NAME:D       down port D of NAME                down:L2.0:7
 *   port:NAME:P       node-local port P (down ports 0..n_down-1, then up)
   @endverbatim
 *
 * An empty list is no failure. Errors: ARB_EPARSE (syntax; the message
 * names the item), ARB_ENOENT (a node, port or link that does not exist).
 */
int arb_topo_fail(arb_topo *t, const char *list, char *err, size_t errlen);

/** Check a failure list as arb_topo_fail does, without failing anything
 * (for lists applied later, such as failures at a time during a run).
 * Errors: those of arb_topo_fail. */
int arb_topo_fail_check(const arb_topo *t, const char *list, char *err, size_t errlen);

/**
 * Recovery: bring back what failed. A link is up when it was not failed as
 * a link (arb_topo_fail_link, or a link:/up:/down:/port: item) and neither
 * of its ends is a failed switch; so restoring a switch brings back every
 * link of it except those failed by themselves, and restoring a link of a
 * failed switch clears its own failure only (it comes up with the
 * switch). Restoring what is up changes nothing. Every call changes
 * arb_topo_failure_gen.
 *
 * This one restores the link of `port`, both directions.
 * Errors: ARB_EINVAL for a bad id.
 */
int arb_topo_restore_link(arb_topo *t, uint32_t port);
/** Restore switch `node` (see arb_topo_restore_link). Errors: ARB_EINVAL
 * for a bad id or a host. */
int arb_topo_restore_node(arb_topo *t, uint32_t node);
/** Restore each item of a list as arb_topo_fail takes it (see
 * arb_topo_restore_link); all or nothing. Errors: those of arb_topo_fail. */
int arb_topo_restore(arb_topo *t, const char *list, char *err, size_t errlen);

/** Clear every failure (links and switches all up). */
void arb_topo_clear_failures(arb_topo *t);

/**
 * A number that changes whenever a failed flag is set or cleared, so that
 * a reader can tell whether what it derived from the failures is current.
 */
uint64_t arb_topo_failure_gen(const arb_topo *t);
/** Where arb_topo_failure_gen's number lives, for a reader that checks it
 * on every decision (the simulator's forwarding) without a call: valid as
 * long as t is. */
const uint64_t *arb_topo_failure_gen_ref(const arb_topo *t);

/** Failed links (each counted once, not per direction) and failed switches. */
void arb_topo_count_failed(const arb_topo *t, uint32_t *links, uint32_t *switches);

/**
 * Set the rate and delay of the link of `port`, both directions (for
 * skewed or mixed-speed experiments). ARB_EINVAL: bad id or a rate outside
 * 1..ARB_RATE_MAX.
 */
int arb_topo_set_link(arb_topo *t, uint32_t port, uint64_t rate, arb_time delay);

/**
 * Give the link of `port`, both directions, its own probability of losing
 * each packet (a flaky link), in [0, 1); the simulator uses it instead of
 * its configured loss there. ARB_EINVAL: bad id or probability; ARB_ENOMEM.
 */
int arb_topo_set_link_loss(arb_topo *t, uint32_t port, double loss);

/** The link's own loss probability, or -1 when none was set. */
double arb_topo_link_loss(const arb_topo *t, uint32_t port);

/** Give the link of `port`, both directions, its own duplication
 * probability in [0, 1) (arb_sim_config.dup). Errors: as
 * arb_topo_set_link_loss. */
int arb_topo_set_link_dup(arb_topo *t, uint32_t port, double dup);
/** The link's own duplication probability, or -1 when none was set. */
double arb_topo_link_dup(const arb_topo *t, uint32_t port);
/** Give the link of `port`, both directions, its own reordering
 * probability in [0, 1) (arb_sim_config.reorder). Errors: as
 * arb_topo_set_link_loss. */
int arb_topo_set_link_reorder(arb_topo *t, uint32_t port, double reorder);
/** The link's own reordering probability, or -1 when none was set. */
double arb_topo_link_reorder(const arb_topo *t, uint32_t port);

/* ------------------------------------------------------------------ */
/* Planning a group on the fabric (the planner is plan.h)                */
/* ------------------------------------------------------------------ */

struct arb_plan;
struct arb_plan_config;

/**
 * Plan `cfg` (plan.h) on topology t, failures honoured: the fabric's part
 * of planning. The candidate roots are the switches of the lowest level L
 * whose switches each reach every host of cfg->ranks, numbered by their
 * upward digits; a host's path to root t climbs, at each level, the first
 * live parallel link toward t's digit. arb_plan_new makes the plan from
 * these paths. On failure *out is NULL and err (when not NULL) holds one
 * line naming the problem. Errors: ARB_EINVAL (t NULL, or as
 * arb_plan_new), ARB_ERANGE, ARB_ENOENT (no live path from a rank to a
 * root), ARB_ENOMEM, as arb_plan_new.
 */
int arb_topo_plan(struct arb_plan **out, const arb_topo *t, const struct arb_plan_config *cfg,
                  char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Value parsing shared with the command line                            */
/* ------------------------------------------------------------------ */

/**
 * A rate in bits per second: digits with an optional fraction and an
 * optional decimal unit K, M, G or T (case-insensitive), e.g. "400G",
 * "2.5G", "100000000000". ARB_EPARSE for other text, ARB_ERANGE outside
 * 1..ARB_RATE_MAX or for a fraction of a bit.
 */
int arb_topo_parse_rate(const char *s, uint64_t *out);

/**
 * A duration: digits with an optional fraction and a unit ps, ns, us, ms
 * or s ("1us", "500ns", "0.5us"); "0" needs no unit. ARB_EPARSE for other
 * text, ARB_ERANGE when it overflows or is a fraction of a picosecond.
 */
int arb_topo_parse_time(const char *s, arb_time *out);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_TOPO_H */
