/*
 * lb_fast.h - what the event loop (sim.c) reads of the built-in load
 * balancer (lb.c) to guess a round-robin spraying or an ECMP decision
 * inline, without the route_peek call, and the tokens of route_peek's
 * guesses.
 */
#ifndef ARBOR_SIM_LB_FAST_H
#define ARBOR_SIM_LB_FAST_H

#include "arbor/lb.h"
#include "arbor/route.h"
#include "arbor/topo.h"

/*
 * The tokens of route_peek's guesses, checked by arb_lb_route when a packet
 * comes back with one (the simulator hands a guess back only for the same
 * packet at the same node, with the fabric as it was): LB_TOKEN_PURE, a
 * decision that reads no state of the load balancer (a routing engine that
 * does not adapt, a single candidate); LB_TOKEN_RR | c, spraying's round
 * robin when the node's counter reads c.
 */
#define LB_TOKEN_PURE UINT64_C(1)
#define LB_TOKEN_RR (UINT64_C(1) << 32)

struct lb_fast {
    const uint32_t *rr;    /* round-robin spraying: the counter of every node; else NULL */
    const arb_route *ecmp; /* scheme `route` with an ecmp or eecmp router: it; else NULL */
    const arb_pgft *g;     /* the fabric's PGFT */
    uint64_t plain_gen;    /* the topology's failure generation in which no port has
                            * failed and every candidate set is a plain range
                            * (arb_route_candidate_range); UINT64_MAX: none */
};

/* The load balancer's (lb.c keeps it current). */
const struct lb_fast *lb_fast_of(const arb_lb *lb);

/* Round robin over ports first, first + stride, ... (m of them, m > 1) at
 * `node`, `before` decisions on: the port, and its token. */
static inline uint32_t lb_spray_pick(const uint32_t *rr, uint32_t node, uint32_t first,
                                     uint32_t stride, unsigned m, uint32_t before, uint64_t *token)
{
    uint32_t c = rr[node] + before;
    *token = LB_TOKEN_RR | c;
    return first + stride * (c % m);
}

/* route_peek's guess for round-robin spraying on a plain fabric (the
 * caller checked f->rr and f->plain_gen): switch `node` (record n) routing
 * toward host dst after `before` other decisions there. */
static inline uint32_t lb_fast_spray(const struct lb_fast *f, const arb_node *n, uint32_t node,
                                     uint32_t dst, uint32_t before, uint64_t *token)
{
    uint32_t first, stride;
    unsigned m = arb_pgft_next_range(f->g, n, dst, &first, &stride);
    if (m == 1) {
        *token = LB_TOKEN_PURE;
        return first;
    }
    return m ? lb_spray_pick(f->rr, node, first, stride, m, before, token) : ARB_TOPO_NONE;
}

/* route_peek's guess for an ECMP router on a plain fabric (the caller
 * checked f->ecmp and f->plain_gen): the hash of key picks among the
 * minimal next hops of switch `node` (record n). */
static inline uint32_t lb_fast_ecmp(const struct lb_fast *f, const arb_node *n, uint32_t node,
                                    const arb_route_key *key, uint64_t *token)
{
    uint32_t first, stride;
    unsigned m = arb_pgft_next_range(f->g, n, key->dst, &first, &stride);
    if (m == 0) return ARB_TOPO_NONE;
    *token = LB_TOKEN_PURE;
    return m == 1 ? first : first + stride * (uint32_t)(arb_route_hash(f->ecmp, node, key) % m);
}

#endif
