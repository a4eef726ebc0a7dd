/** @file
 * arbor/lb.h - load balancing in the simulated switches: the dynamic
 * choosers (they read the simulator's queues, keep per-switch state, draw
 * random numbers), and every routing engine of route.h, behind one route
 * callback. The static routing functions are route.h's; this module
 * decides per packet in a running simulation. Code: src/lb/, one file per
 * scheme (docs/load-balancing.md).
 *
 * One call turns a scheme name into what the simulator needs:
 *
 * @code
 *   arb_sim_config cfg;
 *   arb_sim_config_default(&cfg);
 *   cfg.seed = seed;                        (read by arb_lb_new)
 *   arb_lb *lb;
 *   if (arb_lb_new(&lb, topo, NULL, "flowlet:gap=256us", &cfg, err, sizeof err) < 0) ...
 *   arb_sim_new(&sim, topo, &cfg);          (cfg.route, route_ctx, route_peek,
 *                                            route_fast set, and for conga the
 *                                            in-band hook and DRE)
 *   ... run ...
 *   arb_sim_free(sim);
 *   arb_lb_free(lb);
 * @endcode
 *
 * One arb_lb serves one simulator at a time (it keeps per-switch state:
 * flowlet tables, counters, CONGA tables); arb_lb_reset forgets that state
 * for a new run.
 *
 * Schemes (NAME or NAME:OPTIONS; options are comma-separated key=value
 * pairs, times as arb_topo_parse_time reads them: "256us", "0.5ms"):
 *
 * @verbatim
 *   dmodk smodk rnca[:SEED] pinning table[:PATH] updown dmodc
 *   ecmp[:polarized] eecmp[:polarized]
 *                the route.h engines, unchanged (arb_route_next per hop).
 *   route        the router given as `base`, as it is.
 *   ar           per-packet adaptive routing: at every switch the live
 *                minimal candidate with the fewest queued bytes; among
 *                ties the (h mod ties)-th, h = arb_route_hash of the
 *                switch. Options bias=F, thresh=BYTES (see Bias).
 *   ar_ftree     D-mod-k on the way down (the parallel link D-mod-k names;
 *                the others only if it failed), ar on the way up.
 *   flowlet      per-flowlet AR: a flowlet table (last port, last time)
 *                indexed by the flow hash; a packet arriving more than gap
 *                after the previous one of its flow (at that switch) starts
 *                a new flowlet and takes the ar choice, otherwise it keeps
 *                the port. Options gap=TIME (default 256us), table=N
 *                entries of each switch's own table (default 4096, rounded
 *                up to a power of two; 16 bytes an entry, made at the
 *                switch's first flowlet decision), bias, thresh.
 *   letflow      LetFlow (Vanini et al., NSDI 2017): as flowlet, but a new
 *                flowlet takes a uniformly random candidate (one seeded
 *                generator per switch). gap (default 500us), table.
 *   conga        CONGA (Alizadeh et al., SIGCOMM 2014) at the leaves: see
 *                docs/load-balancing.md. gap (default 500us), table,
 *                tdre=TIME (20us), alpha=F (0.1), age=TIME (10ms),
 *                above=ecmp|ar (the choice above the leaves, ecmp).
 *   spray        packet spraying, round robin: one counter per switch,
 *                advanced at every decision with more than one candidate.
 *   spray:random packet spraying, a uniformly random candidate per packet.
   @endverbatim
 *
 * Bias (UGAL style, ar, ar_ftree and flowlet): a decision keeps the
 * current port c (flowlet: the flowlet's last port; ar: the static ECMP
 * port) while q(c) <= q(best) x bias + thresh. bias=1 and thresh=0 (the
 * defaults) are plain argmin.
 *
 * Queue cost of a port: arb_sim_port_load (its queued bytes, plus the queue
 * capacity when the port is paused by PFC: a paused port looks empty but
 * carries nothing).
 *
 * Candidates are arb_route_candidates of the base router: the live minimal
 * ports (updown and dmodc: only those that still reach the destination at
 * the shortest distance). Without a base router, adaptive schemes make an
 * ecmp router seeded with cfg->seed for the candidates and the hash.
 *
 * Determinism: every decision is a function of the simulator's state, the
 * scheme and cfg->seed, and reads and writes only the deciding switch's own
 * state (so a partitioned run decides as one process). No allocation per
 * packet: a flowlet scheme allocates a switch's table at the switch's first
 * flowlet decision; if that fails, the route callback returns
 * ARB_SIM_ROUTE_ENOMEM and the run ends with ARB_ENOMEM.
 */
#ifndef ARBOR_LB_H
#define ARBOR_LB_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"
#include "arbor/route.h"
#include "arbor/sim.h"
#include "arbor/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The family of a scheme (arb_lb_get_kind). */
typedef enum arb_lb_kind {
    ARB_LB_ROUTE = 0,    /**< a route.h engine */
    ARB_LB_AR = 1,       /**< per-packet adaptive */
    ARB_LB_AR_FTREE = 2, /**< D-mod-k down, adaptive up */
    ARB_LB_FLOWLET = 3,  /**< per-flowlet adaptive */
    ARB_LB_LETFLOW = 4,  /**< random at flowlet boundaries */
    ARB_LB_CONGA = 5,    /**< leaf-to-leaf congestion feedback */
    ARB_LB_SPRAY = 6     /**< per-packet round robin or random */
} arb_lb_kind;

#define ARB_LB_KIND_COUNT 7 /**< the number of arb_lb_kind values */

/** "route", "ar", "ar_ftree", "flowlet", "letflow", "conga", "spray"; NULL
 * outside the enum. */
const char *arb_lb_kind_name(int kind);

/** A load balancer: one scheme's state for one simulator (opaque). */
typedef struct arb_lb arb_lb;

/**
 * Make the load balancer `scheme` (see above) for topology t and install
 * it in the simulator configuration: cfg->route and cfg->route_ctx (the
 * scheme's own route callback: the decision arb_lb_route makes),
 * cfg->route_peek and cfg->peek_ctx (likewise arb_lb_route_peek's),
 * cfg->route_fast (the round robin or ECMP rule the simulator may guess
 * inline, and decide by while cfg->route is the load balancer's own,
 * counting those decisions in the load balancer; owned by the load
 * balancer), and for conga cfg->inband,
 * cfg->inband_ctx, cfg->dre_period and cfg->dre_alpha. cfg->seed must already hold the run's seed.
 * `base` (may be NULL) is a router on t that supplies candidate sets and the hash (and is the whole
 * decision for scheme "route"); it must outlive the load balancer. t must outlive it too. Errors:
 * ARB_EPARSE (unknown scheme or a bad option; err names it), ARB_EINVAL (NULL argument; "route"
 * without base; a plain engine with a base; t not a PGFT; conga on leaves of more than 255
 * uplinks), ARB_EIO (table file), ARB_ENOMEM. On error *out is NULL, cfg is unchanged and err holds
 * one line. The callbacks installed in cfg borrow the load balancer: free
 * the simulator made from cfg before it.
 */
int arb_lb_new(arb_lb **out, const arb_topo *t, const arb_route *base, const char *scheme,
               arb_sim_config *cfg, char *err, size_t errlen);

/** Free the load balancer (NULL is ignored). */
void arb_lb_free(arb_lb *lb);

/** After the topology's failures changed: rebuild what the load balancer's
 * own router derived from them (arb_route_refresh). A `base` router passed
 * to arb_lb_new is the caller's to refresh. Errors: ARB_ENOMEM. */
int arb_lb_refresh(arb_lb *lb);

/** Forget the per-switch state (flowlet tables, counters, generators
 * reseeded, CONGA tables, statistics), as if just made. */
void arb_lb_reset(arb_lb *lb);

/**
 * The route callback (an arb_sim_route_fn; ctx is the arb_lb): the
 * decision of the callback arb_lb_new installed. Returns ARB_TOPO_NONE
 * when no candidate survives.
 */
uint32_t arb_lb_route(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                      const arb_sim_pkt_info *f, arb_time now);

/**
 * The route_peek callback (an arb_sim_peek_fn; ctx, peek_ctx, is the
 * arb_lb): the port arb_lb_route would return for this packet after
 * `before` other decisions at the node, with no state changed (no counter
 * advanced, no generator drawn, no statistic counted), for the schemes
 * that decide without reading queues: the routing engines' own (adaptive
 * excepted) and spraying (random spraying only for `before` 0);
 * ARB_TOPO_NONE for the others. Installed by arb_lb_new. The token it
 * sets (all but random spraying) lets arb_lb_route take the guess back
 * instead of deciding again: a routing engine's, a lone candidate's, or
 * round-robin spraying's when the node's counter still reads what the
 * guess assumed (the counter then moves on as the decision would move it).
 */
uint32_t arb_lb_route_peek(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                           const arb_sim_pkt_info *f, uint32_t before, uint64_t *token);

/**
 * CONGA's in-band hook (an arb_sim_inband_fn; ctx is the arb_lb): reads
 * and rewrites the packet's load-balancing word at every switch hop.
 * Installed by arb_lb_new for conga; a no-op for the other schemes.
 */
uint32_t arb_lb_inband(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                       uint32_t out_port, const arb_sim_pkt_info *f, arb_time now);

/** The family of the scheme the load balancer runs. */
arb_lb_kind arb_lb_get_kind(const arb_lb *lb);

/** The scheme with every option spelled out ("flowlet:gap=256us,table=4096,
 * bias=1,thresh=0"); plain engines as arb_route_spec. */
const char *arb_lb_spec(const arb_lb *lb);

/** The router supplying candidates and the hash (base or the one made). */
const arb_route *arb_lb_router(const arb_lb *lb);

/** What the choosers did (all zero for plain engines but `decisions`). */
typedef struct arb_lb_stats {
    uint64_t decisions;   /**< route calls */
    uint64_t choices;     /**< decisions among two or more candidates */
    uint64_t flowlets;    /**< flowlet schemes: new flowlets (table misses or gaps) */
    uint64_t moves;       /**< flowlet schemes: new flowlets that changed port */
    uint64_t tables;      /**< flowlet schemes: switches whose flowlet table was made (at
                           * their first flowlet decision; each `table` x 16 bytes) */
    uint64_t unroutable;  /**< decisions with no candidate */
    uint64_t fb_sent;     /**< conga: feedback metrics piggybacked */
    uint64_t fb_received; /**< conga: feedback metrics stored at a source leaf */
    uint64_t guessed;     /**< decisions taken back from route_peek's guess (a run that
                           * prefetches; the rest of the counts are the same without) */
} arb_lb_stats;

/** Copy the counts since arb_lb_new or arb_lb_reset into *st. */
void arb_lb_get_stats(const arb_lb *lb, arb_lb_stats *st);

/**
 * CONGA's congestion-to-leaf metric (0..7) held by leaf switch `leaf`
 * (a node id) for destination host group `group` (hosts group x m_1 to
 * group x m_1 + m_1 - 1) on up port q, aged at time now; 0 for other
 * schemes or arguments out of range. For tests and reports.
 */
unsigned arb_lb_conga_metric(const arb_lb *lb, uint32_t leaf, uint32_t group, unsigned q,
                             arb_time now);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_LB_H */
