/*
 * lb_int.h - the insides of the load balancer (lb.h): the state every
 * scheme shares, the table of operations a scheme fills, and the helpers
 * the schemes share (choosers, option parsers, spec writers).
 *
 * A scheme is one `struct lb_scheme` in a file of its own (engine.c, ar.c,
 * flowlet.c, conga.c, spray.c), listed in the registry of lb.c under its
 * arb_lb_kind. lb.c parses the scheme string, makes the router, runs the
 * operations and installs the callbacks; a scheme never sees the string.
 *
 * Layering: the load balancer reads the simulator through its public API
 * only (arb_sim_port_load, arb_sim_port_dre) and asks for the simulator's
 * inline guesses through cfg.route_fast; the simulator includes nothing
 * of it.
 */
#ifndef ARBOR_LB_INT_H
#define ARBOR_LB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/lb.h"
#include "arbor/route.h"
#include "arbor/sim.h"
#include "arbor/topo.h"

#define LB_NONE UINT32_MAX

/* Kept out of the common path (a candidate list makes a deep frame). */
#if defined(__GNUC__)
#define LB_COLD __attribute__((cold, noinline))
#else
#define LB_COLD
#endif
/* Kept out of line so that the path around its call saves no registers
 * (a route callback's taken guess). */
#if defined(__GNUC__)
#define LB_NOINLINE __attribute__((noinline))
#else
#define LB_NOINLINE
#endif

/* One entry of a switch's flowlet table: 16 bytes. */
struct flowlet {
    arb_time last; /* arrival of the flow's latest packet at the switch */
    uint32_t port; /* the port it took; LB_NONE: empty */
    uint32_t unused;
};

/* A switch's flowlet table by default: 4,096 entries (64 KiB), rounded
 * as `table=` is (docs/load-balancing.md says why). */
#define LB_FLOWLET_TABLE 4096u

/*
 * One scheme. Every operation but spec is optional (NULL: the default
 * named with it). Operations get the load balancer whole; a scheme keeps
 * its own state in `priv` or in the shared fields it allocates.
 */
struct lb_scheme {
    const char *name; /* arb_lb_kind_name */
    arb_time gap;     /* the default flowlet gap (flowlet schemes; else 0) */
    /* Make lb->priv and set its defaults, before the options. 0 or ARB_ENOMEM. */
    int (*create)(arb_lb *lb);
    /* Take option `key` (val: its value, NULL for a bare word): 0, ARB_ENOENT
     * when the scheme has no such option, or another negative code for a bad
     * value. NULL: no options. */
    int (*option)(arb_lb *lb, const char *key, const char *val);
    /* After the options: allocate what the scheme decides with, set
     * lb->fast.rr / .ecmp if the simulator may guess inline. Errors as
     * arb_lb_new's, with err filled. */
    int (*init)(arb_lb *lb, char *err, size_t errlen);
    /* Forget the scheme's own state (lb.c resets the shared fields). */
    void (*reset)(arb_lb *lb);
    /* Free lb->priv. */
    void (*free)(arb_lb *lb);
    /* Required: the scheme with every option spelled out (arb_lb_spec). */
    void (*spec)(const arb_lb *lb, char *buf, size_t len);
    /* The route callback the simulator calls (ctx: the arb_lb; arb_lb_route
     * is the same decision): counts it in lb->st, takes back a guess its
     * peek made (f->token) if it still holds, else decides. NULL:
     * lb_route_listed, which calls `choose`. */
    arb_sim_route_fn route;
    /* Pick one of n >= 2 listed candidates (lb_decide_listed). */
    uint32_t (*choose)(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                       const arb_route_key *k, const uint32_t *cands, unsigned n, arb_time now);
    /* The route_peek callback (ctx: the arb_lb). NULL: ARB_TOPO_NONE always. */
    arb_sim_peek_fn peek;
    /* The in-band word at a switch hop (arb_lb_inband). NULL: unchanged,
     * and cfg.inband is not installed. */
    uint32_t (*inband)(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                       uint32_t out_port, const arb_sim_pkt_info *f, arb_time now);
    /* Set what else the scheme needs in the simulator's configuration. */
    void (*install)(const arb_lb *lb, arb_sim_config *cfg);
};

struct arb_lb {
    const struct lb_scheme *sc;
    arb_lb_kind kind;
    const arb_topo *t;
    const arb_pgft *g;
    const arb_node *nodes;
    const arb_port *ports;
    uint32_t n_nodes, n_ports, n_hosts;
    const arb_route *r; /* candidates and hash: base or own */
    arb_route *own;
    int route_adaptive;      /* r decides by its own chooser (route_peek cannot tell) */
    arb_sim_route_fast fast; /* what the event loop may guess inline (cfg.route_fast) */
    uint64_t seed;
    char spec[192];

    /* shared options */
    arb_time gap;        /* flowlet schemes */
    uint64_t table;      /* flowlet schemes: the table size asked for */
    uint64_t bias_milli; /* bias x 1000 */
    uint64_t thresh;     /* bytes */
    int biased;          /* bias or thresh given: keep the current port while good enough */
    int variant;         /* a scheme's own option (spray: 1 random) */

    /* shared state, each allocated by the schemes that use it */
    struct flowlet **fl; /* per node: its flowlet table of fl_mask + 1 entries, by flow
                          * hash; NULL until the switch's first flowlet decision */
    uint64_t fl_mask;
    arb_rng *rng; /* per node, reseeded by arb_lb_reset */
    uint32_t *rr; /* per node counters, zeroed by arb_lb_reset */
    void *priv;   /* the scheme's own */

    arb_lb_stats st;
    arb_sim_rule_counts made; /* the simulator's decisions by lb->fast's rule (in st for
                               * arb_lb_get_stats) */
};

/* ---- shared helpers (lb.c) ------------------------------------------- */

/* The routing key of a packet. Field by field, through a volatile view:
 * the caller has just written *f, and a compiler that merged two fields
 * into one wider load could span two of its stores, which the CPU cannot
 * forward: the load would wait for every older store to reach the cache,
 * cache misses included. */
static inline arb_route_key lb_key_of(const arb_sim_pkt_info *f)
{
    const volatile arb_sim_pkt_info *v = f;
    arb_route_key k;
    k.src = v->src;
    k.dst = v->dst;
    k.sport = v->sport;
    k.dport = v->dport;
    k.qp = v->qp;
    k.proto = v->proto;
    return k;
}

/* The route callback of the schemes that only choose among listed
 * candidates: no guess to take back. */
uint32_t lb_route_listed(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                         const arb_sim_pkt_info *f, arb_time now);

/* The decision among arb_route_candidates: none (unroutable), one, or
 * the scheme's choose among several. */
uint32_t lb_decide_listed(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                          const arb_route_key *k, arb_time now);

int lb_in_set(uint32_t p, const uint32_t *cands, unsigned n);

/* The candidate with the least arb_sim_port_load; among ties the (h mod
 * ties)-th, h the switch's ECMP hash of the packet. */
uint32_t lb_argmin(const arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                   const uint32_t *cands, unsigned n);

/* AR with the UGAL-style bias: keep `cur` (a candidate, or LB_NONE) while
 * load(cur) <= load(best) x bias + thresh. */
uint32_t lb_ar_choose(const arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                      const uint32_t *cands, unsigned n, uint32_t cur);

/* How a flowlet scheme picks the port of a new flowlet (prev: the
 * flowlet's last port if still a candidate, else LB_NONE). */
typedef uint32_t (*lb_fresh_fn)(arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                                const uint32_t *cands, unsigned n, uint32_t prev, arb_time now);

/* Keep the flowlet's port inside the gap; decide with `fresh` after it.
 * ARB_SIM_ROUTE_ENOMEM when the switch's table cannot be made. */
uint32_t lb_flowlet_pick(arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                         const uint32_t *cands, unsigned n, arb_time now, lb_fresh_fn fresh);

/* Options: gap= and table= (flowlet schemes); bias= and thresh=. 0,
 * ARB_ENOENT (not one of them) or a bad value's code. */
int lb_option_flowlet(arb_lb *lb, const char *key, const char *val);
int lb_option_bias(arb_lb *lb, const char *key, const char *val);
int lb_parse_double(const char *s, double *out);

/* Allocations: the flowlet tables (one pointer per node; a switch's table,
 * lb->table entries rounded up to a power of two, at its first flowlet
 * decision), one generator per node, one counter per node. 0 or
 * ARB_ENOMEM. */
int lb_alloc_flowlets(arb_lb *lb);
int lb_alloc_rng(arb_lb *lb);
int lb_alloc_rr(arb_lb *lb);

/* "256us": the largest unit that divides t. */
void lb_fmt_time(char *buf, size_t len, arb_time t);
/* "bias=1,thresh=0" */
void lb_fmt_bias(const arb_lb *lb, char *buf, size_t len);

#endif
