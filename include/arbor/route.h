/** @file
 * arbor/route.h - routing engines: which output port a switch (or a host's
 * NIC) gives a packet, and the link loads a traffic pattern puts on a
 * fabric under a routing scheme. These are the static routing functions
 * (a packet's port is a function of the packet, the topology and the
 * seed); the dynamic choosers of a running simulation are lb.h's.
 *
 * One object, arb_route, binds an engine to a built topology (topo.h).
 * The simulator calls arb_route_next per packet per hop; `arbor route`
 * calls it per flow per hop to count link loads without simulating. The
 * call is pure arithmetic over the topology's arrays and the engine's
 * precomputed tables: no allocation, no search over ports, no lock, so
 * any number of threads may share one arb_route.
 *
 * Candidate ports
 *   At node n (level l) a packet for host d may take only a minimal port:
 *   while d is not below n, the up ports of n; once d is below n, the down
 *   port(s) toward the child on d's path (several when that child is
 *   joined by parallel links). Failed ports are never candidates. Engines
 *   that reroute around failures (updown, dmodc) further keep only the up
 *   ports from which d is still reachable at the shortest up/down
 *   distance. arb_route_candidates returns this set; every engine picks
 *   from it, or (the static engines, when their one port failed) gives up.
 *
 * Engines (spec strings for arb_route_new; docs/routing.md has each
 * scheme with its source):
 *
 * @verbatim
 *   dmodk          D-mod-k (docs/routing.md): up port q_l(d) = floor(d / W_l) mod
 *                  (w_{l+1} p_{l+1}); down on parallel link floor(d / W_l)
 *                  mod p_l. The chosen port failed: no route.
 *   smodk          the same formulas on the source index s.
 *   rnca[:SEED]    random NCA: q_l(d) = R_l[floor(d / W_l)], R_l a seeded
 *                  balanced random map (each port value used equally
 *                  often) in place of "mod w p"; parallel link down by
 *                  the same map. D-mod-k is the case R_l(x) = x mod w p.
 *                  Default SEED 1. The chosen port failed: no route.
 *   pinning        Meta path pinning: at the source leaf, destination slice
 *                  k = d mod m_1 (the host's down port at its own leaf)
 *                  leaves on up port k mod U (U = up ports of the leaf);
 *                  with U > m_1 on one of the ports q = k (mod m_1),
 *                  picked by the ECMP hash. Pinned ports all failed, or
 *                  above the leaf: ECMP over the candidates.
 *   table[:PATH]   static port table (HPN core): at a switch, traffic for
 *                  pod i (host digit h: d / M_{h-1}, the subtree under a
 *                  top switch's down port) arriving on local port j leaves
 *                  on candidate C[(i + j) mod |C|] of the full minimal set
 *                  C (failed ports included). PATH overrides entries: CSV
 *                  with header `switch,pod,in_port,out_port`, in_port a
 *                  local port or `*`, out_port a local port that must be a
 *                  minimal port for that pod. The table's port failed:
 *                  ECMP over the live candidates.
 *   updown         shortest up/down routing on a degraded tree: tables of
 *                  the up/down distance from every switch to every leaf,
 *                  rebuilt by arb_route_refresh after failures; up ports
 *                  only toward parents one step closer; among those
 *                  survivors D-mod-k: C[floor(d / W_l) mod |C|].
 *   dmodc          Dmodc (Gliksberg et al., IEEE Micro 2023): the same
 *                  candidate sets, but the divider is computed from the
 *                  surviving subtree instead of W_l: Pi(leaf) = max
 *                  distinct live parents of its hosts; Pi(s) = max over
 *                  live children c of Pi(c) x (distinct live parents of
 *                  c); port C[floor(d / Pi(s)) mod |C|]. Equal to D-mod-k
 *                  on an intact PGFT.
 *   ecmp[:polarized]  hash of the five-tuple with a per-switch seed (see
 *                  arb_route_hash); `polarized`: one seed for every switch.
 *   eecmp[:polarized] ecmp that also hashes the destination QP.
 *   adaptive       every decision is made by cfg->choose (the simulator's
 *                  hook for per-packet AR, flowlets, LetFlow, CONGA,
 *                  spraying, ar_ftree): see arb_route_choose_fn.
   @endverbatim
 *
 * Addresses: host j has IPv4 address 10.0.0.0 + j (0x0A000000 | j; hosts
 * are below 2^24), so the hash sees the addresses a real fabric would.
 *
 * Pure: no clock, no I/O (except reading a table file at creation), no
 * printing; randomness only from seeds given here.
 */
#ifndef ARBOR_ROUTE_H
#define ARBOR_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"
#include "arbor/topo.h"
#include "arbor/traffic.h"

#ifdef __cplusplus
extern "C" {
#endif

/** "No port": the packet cannot be routed from here (failures). */
#define ARB_ROUTE_NONE UINT32_MAX

/** Longest path a flow may take: up to the top and down again, plus the NIC. */
#define ARB_ROUTE_MAX_HOPS (2 * ARB_TOPO_MAX_HEIGHT + 2)

/** The adaptive chooser is offered at most this many candidates (the
 * lowest-numbered ones; real radices are far smaller). */
#define ARB_ROUTE_MAX_CANDS 1024

/** The base of host addresses: host j is 10.0.0.0 + j. */
#define ARB_ROUTE_HOST_IP_BASE 0x0A000000u

/** The fields of a packet a switch looks at. */
typedef struct arb_route_key {
    uint32_t src;   /**< source host index */
    uint32_t dst;   /**< destination host index */
    uint16_t sport; /**< UDP source port */
    uint16_t dport; /**< UDP destination port */
    uint32_t qp;    /**< destination QP (24 bits) */
    uint8_t proto;  /**< IP protocol */
} arb_route_key;

/** The key of a traffic flow. */
static inline arb_route_key arb_route_key_of(const arb_flow *f)
{
    arb_route_key k;
    k.src = f->src;
    k.dst = f->dst;
    k.sport = f->sport;
    k.dport = f->dport;
    k.qp = f->qp;
    k.proto = f->proto;
    return k;
}

/** The routing engines (spec names as arb_route_kind_name gives them). */
typedef enum arb_route_kind {
    ARB_ROUTE_DMODK = 0,
    ARB_ROUTE_SMODK = 1,
    ARB_ROUTE_RNCA = 2,
    ARB_ROUTE_PINNING = 3,
    ARB_ROUTE_TABLE = 4,
    ARB_ROUTE_UPDOWN = 5,
    ARB_ROUTE_DMODC = 6,
    ARB_ROUTE_ECMP = 7,
    ARB_ROUTE_EECMP = 8,
    ARB_ROUTE_ADAPTIVE = 9
} arb_route_kind;

#define ARB_ROUTE_KIND_COUNT 10 /**< the number of arb_route_kind values */

/**
 * The chooser hook. At node `node` for packet `key`, arrived on global
 * port `in_port` (ARB_TOPO_NONE at the source host), pick one of the n
 * candidate global ports cands[0..n-1] (n >= 1; the live minimal ports in
 * ascending order) and return it, or ARB_ROUTE_NONE to drop. `ctx` is
 * cfg->choose_ctx: the simulator keeps its queue lengths, flowlet tables
 * or congestion feedback there; arb_route_hash gives a static tie-break.
 * Examples: per-packet AR returns argmin queue(cands[i]); flowlet AR
 * keeps (port, last time) per flow hash; spraying rotates a counter.
 */
typedef uint32_t (*arb_route_choose_fn)(void *ctx, uint32_t node, const arb_route_key *key,
                                        uint32_t in_port, const uint32_t *cands, unsigned n);

/** A router's configuration (arb_route_config_default). */
typedef struct arb_route_config {
    uint64_t seed;              /**< hashed engines: switch seeds derive from it (default 1) */
    arb_route_choose_fn choose; /**< adaptive: the decision; other engines ignore it */
    void *choose_ctx;           /**< passed to choose; borrowed */
} arb_route_config;

/** seed 1, no chooser. */
arb_route_config arb_route_config_default(void);

/** A routing engine bound to a topology (opaque; shareable, see above). */
typedef struct arb_route arb_route;

/**
 * Bind engine `spec` (see the list above) to topology t, which must
 * outlive the router. Tables depending on failures are computed now;
 * after changing failures call arb_route_refresh. cfg may be NULL.
 * Errors: ARB_EPARSE (unknown engine or bad option; err names it),
 * ARB_EIO (table file unreadable), ARB_EINVAL (NULL argument; `adaptive`
 * without cfg->choose; a topology that is not a PGFT), ARB_ENOMEM. On
 * error *out is NULL and err holds one line.
 */
int arb_route_new(arb_route **out, const arb_topo *t, const char *spec, const arb_route_config *cfg,
                  char *err, size_t errlen);

/** Free the router (NULL is ignored). */
void arb_route_free(arb_route *r);

/** The engine. */
arb_route_kind arb_route_get_kind(const arb_route *r);
/** The canonical spec ("ecmp:polarized", "rnca:7"). */
const char *arb_route_spec(const arb_route *r);
/** 1 when the engine hashes (ecmp, eecmp), else 0. Never fails. */
int arb_route_is_hashed(const arb_route *r);

/** "dmodk", ..., "adaptive"; NULL outside the enum. */
const char *arb_route_kind_name(int kind);

/**
 * Draw new switch seeds for the hashed engines (one trial of a Monte Carlo
 * study): switch n's seed becomes arb_mix64(seed + 0x9E3779B97F4A7C15 *
 * (n + 1)), or `seed` itself for every switch when polarized. No effect on
 * the other engines.
 */
void arb_route_reseed(arb_route *r, uint64_t seed);

/**
 * Recompute what depends on failures (the up/down distance tables of
 * updown and dmodc, Dmodc's dividers) after arb_topo_fail.
 * Errors: ARB_ENOMEM.
 */
int arb_route_refresh(arb_route *r);

/**
 * The ECMP hash of key at node (the per-switch seed of the last reseed):
 *   a = (src_ip << 32) | dst_ip
 *   b = (proto << 32) | (sport << 16) | dport
 *   h = arb_mix64(arb_mix64(seed ^ a) ^ b)
 *   eecmp: h = arb_mix64(h ^ qp)
 * and an ECMP switch takes candidate h mod n. Valid for every engine (the
 * fallbacks of pinning and table use it; ecmp's own variant decides
 * whether qp is hashed).
 */
uint64_t arb_route_hash(const arb_route *r, uint32_t node, const arb_route_key *key);

/**
 * The output port (global index) at `node` for `key`, which arrived on
 * global port in_port (ARB_TOPO_NONE at the source host; only the table
 * and adaptive engines read it). ARB_ROUTE_NONE when the packet cannot
 * go on (failures), or when node is the destination or out of range.
 * O(1) for dmodk, smodk, rnca, pinning, ecmp; O(candidates) for updown,
 * dmodc and the failure fallbacks; table files add a binary search.
 */
uint32_t arb_route_next(const arb_route *r, uint32_t node, const arb_route_key *key,
                        uint32_t in_port);

/**
 * The candidate set of `node` for `key` when it is a plain arithmetic range,
 * as on a node with no failed port under an engine without cost tables:
 * ports first, first + stride, ... (the return value, > 0, counts them).
 * 0 when the set has to be listed by arb_route_candidates (failures, cost
 * tables, or a bad argument). O(1); the set is the same either way.
 * Never fails.
 */
int arb_route_candidate_range(const arb_route *r, uint32_t node, const arb_route_key *key,
                              uint32_t *first, uint32_t *stride);

/**
 * Write the candidate set of `node` for `key` (see "Candidate ports") into
 * cands[0..cap) in ascending order and return its size (0: none survive).
 * Errors: ARB_ENOSPC when cap is too small (a node's radix always suffices),
 * ARB_EINVAL for a bad node or a node that is the destination.
 */
int arb_route_candidates(const arb_route *r, uint32_t node, const arb_route_key *key,
                         uint32_t *cands, unsigned cap);

/**
 * Trace a flow from its source host to its destination: ports[0..] are
 * the global ports it leaves on, the source NIC's first. Returns the hop
 * count, ARB_ENOENT when it cannot be routed (a failure on every path the
 * engine allows, or a loop), ARB_EINVAL for a bad key (hosts out of range
 * or src == dst), ARB_ENOSPC when cap < the hop count (ARB_ROUTE_MAX_HOPS
 * always suffices).
 */
int arb_route_path(const arb_route *r, const arb_route_key *key, uint32_t *ports, unsigned cap);

/**
 * HPN's host-side choice of paths: n UDP source ports in [lo, hi] for
 * RoCEv2 flows (dport 4791, proto UDP, qp 0) from host src to host dst
 * whose paths, traced with r's own hash (arb_route_path), share no
 * switch-to-switch link where that is possible. Greedy and deterministic:
 * scan lo, lo+1, ... and keep a port whose path uses no fabric link a kept
 * port uses, until n are kept; if the range runs out first, fill the rest
 * one at a time with the port that overlaps least (the number of kept
 * paths on its fabric links; ties: the lowest). out[0..n) receives the
 * ports in the order kept. Returns how many of them are pairwise disjoint
 * (n when all are; src and dst under one switch: every port is), or
 * ARB_EINVAL (r or out NULL, n 0 or above hi - lo + 1, a bad host, src ==
 * dst), ARB_ENOENT (fewer than n ports can be routed), ARB_ENOMEM.
 * Cost: (hi - lo + 1) path traces, times the ports still missing when
 * the fallback runs.
 */
int arb_route_disjoint_sports(const arb_route *r, uint32_t src, uint32_t dst, unsigned n,
                              uint16_t lo, uint16_t hi, uint16_t *out);

/* ------------------------------------------------------------------ */
/* Link loads                                                           */
/* ------------------------------------------------------------------ */

/**
 * Per-link counts of routed flows. A flow adds 1 to the flow count of
 * every directed link (port) on its path and its demand there: demand x
 * (rate of the source host's link / rate of the link), i.e. the share of
 * the link's capacity it asks for, with 1.0 = one host link's rate.
 * Links are grouped as host links (tier 0) and fabric links (switch to
 * switch); failed links are left out of means and histograms.
 *
 * A phase is routed at once; counts are per phase (only the touched
 * entries are reset between phases), and the statistics keep the worst
 * phase and the per-link maxima over all phases since the last reset.
 */
typedef struct arb_route_load arb_route_load;

/** Link-load statistics (arb_route_load_stats). */
typedef struct arb_route_stats {
    uint64_t phases;          /**< phases accumulated */
    uint64_t flows;           /**< flows offered */
    uint64_t unroutable;      /**< flows that could not be routed (not counted on links) */
    uint64_t hops;            /**< sum of path lengths of routed flows */
    uint32_t max_load;        /**< most flows on any directed link, worst phase */
    double max_demand;        /**< highest demand on any directed link, worst phase */
    uint32_t fabric_max_load; /**< the same over switch-to-switch links */
    double fabric_max_demand; /**< the same over switch-to-switch links */
    uint32_t host_max_load;   /**< the same over host links (both directions) */
    double host_max_demand;   /**< the same over host links (both directions) */
    double mean_load;         /**< flows per live directed link, averaged over phases */
    uint32_t worst_phase;     /**< first phase reaching max_load */
    uint32_t live_links;      /**< live directed links */
    uint32_t hist_len;        /**< entries of the histogram */
    const uint64_t *hist;     /**< hist[k]: (live link, phase) pairs carrying k flows */
} arb_route_stats;

/** Counters for topology t (memory: 28 bytes per port), which must outlive
 * them. Errors: ARB_EINVAL, ARB_ENOMEM. */
int arb_route_load_new(arb_route_load **out, const arb_topo *t);
/** Free the counters (NULL is ignored). */
void arb_route_load_free(arb_route_load *l);

/** Forget every phase (keeps the memory). */
void arb_route_load_reset(arb_route_load *l);

/**
 * Route flows[0..n) through r as one phase and add them to the counts.
 * Returns the number of unroutable flows of the phase (>= 0), or
 * ARB_EINVAL (r bound to another topology). ARB_ENOMEM if the histogram
 * must grow and cannot.
 */
long arb_route_load_phase(arb_route_load *l, const arb_route *r, const arb_flow *flows, size_t n);

/** Statistics since the last reset; hist stays valid until the next call on l. */
void arb_route_load_stats(const arb_route_load *l, arb_route_stats *out);

/* Per-port arrays (n_ports entries), owned by l and valid until its next
 * call: flows and demand of the last phase, and the maximum flows and
 * demand each port saw over all phases. */

/** Flows per port in the last phase (n_ports entries, owned by l). */
const uint32_t *arb_route_load_flows(const arb_route_load *l);
/** Demand per port in the last phase (n_ports entries, owned by l). */
const double *arb_route_load_demand(const arb_route_load *l);
/** Most flows each port carried in one phase (n_ports entries, owned by l). */
const uint32_t *arb_route_load_max_flows(const arb_route_load *l);
/** Highest demand each port carried in one phase (n_ports entries, owned by l). */
const double *arb_route_load_max_demand(const arb_route_load *l);

/* ------------------------------------------------------------------ */
/* Balls in bins (docs/routing.md, "Collision figures, reproduced") */
/* ------------------------------------------------------------------ */

/** prod_{i<flows} (1 - i/links): the chance no two of `flows` uniformly
 * hashed flows share one of `links` links. 0 when links is 0. */
double arb_route_bins_p_no_collision(uint64_t flows, uint64_t links);

/**
 * Monte Carlo: the mean over `trials` draws of the most flows in any of
 * `links` bins when `flows` flows each pick a uniform bin; *p_none (if
 * not NULL) gets the fraction of trials with no shared bin. Errors: ARB_EINVAL
 * for zero links or trials, or links above 2^24; ARB_ENOMEM.
 */
int arb_route_bins_busiest(uint64_t flows, uint64_t links, uint64_t trials, arb_rng *rng,
                           double *mean_busiest, double *p_none);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_ROUTE_H */
