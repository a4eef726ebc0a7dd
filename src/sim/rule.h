/*
 * rule.h - the routing rule of cfg.route_fast (sim.h), applied by the
 * simulator itself (private to src/sim): the prefetch stages guess with it
 * a few events ahead (prefetch.h), and the switch's forwarding decides
 * with it, without a packet view or a route call, when the router lets it
 * (arb_sim_route_fast.made; net.c, forward).
 */
#ifndef ARBOR_SIM_RULE_H
#define ARBOR_SIM_RULE_H

#include "sim_int.h"

#include "arbor/route.h"

/* cfg.route_fast's round robin (the caller checked rr and plain_gen):
 * switch `node` routing toward host dst after `before` other decisions. */
static inline uint32_t fast_rr(const arb_sim *s, const arb_sim_route_fast *rf, uint32_t node,
                               uint32_t dst, uint32_t before, uint64_t *token)
{
    uint32_t first, stride;
    unsigned m = arb_pgft_next_range(s->pgft, &s->nodes[node], dst, &first, &stride);
    if (m == 1) {
        *token = ARB_SIM_TOKEN_PURE;
        return first;
    }
    return m ? arb_sim_rr_pick(rf->rr, node, first, stride, m, before, token) : ARB_TOPO_NONE;
}

/* cfg.route_fast's ECMP (the caller checked ecmp and plain_gen): the hash
 * of key picks among the minimal next hops of switch `node`. */
static inline uint32_t fast_ecmp(const arb_sim *s, const arb_sim_route_fast *rf, uint32_t node,
                                 const arb_route_key *key, uint64_t *token)
{
    uint32_t first, stride;
    unsigned m = arb_pgft_next_range(s->pgft, &s->nodes[node], key->dst, &first, &stride);
    if (m == 0) return ARB_TOPO_NONE;
    *token = ARB_SIM_TOKEN_PURE;
    return m == 1 ? first : first + stride * (uint32_t)(arb_route_hash(rf->ecmp, node, key) % m);
}

/* The routing key of packet k, as its view (pkt_info) gives it. */
static inline arb_route_key rule_key(const struct pkt *k)
{
    arb_route_key key = {k->src, k->dst, k->sport, SIM_ROCE_DPORT, k->qp, 17};
    return key;
}

/* Would route take back the guess of slot e for packet i at switch node
 * now? Made for it there in this failure generation, and its token holds
 * (a round robin's: the counter still reads what the guess assumed). */
static SIM_ALWAYS_INLINE int rule_guess_holds(const arb_sim *s, const arb_sim_route_fast *rf,
                                              uint32_t e, uint32_t node, uint32_t i)
{
    uint64_t tok = s->pf.tok[e];
    return tok && s->pf.pkt[e] == i && s->pf.node[e] == node && *s->topo_gen == s->pf_gen &&
           (tok == ARB_SIM_TOKEN_PURE || (rf->rr && tok == (ARB_SIM_TOKEN_RR | rf->rr[node])));
}

/* Switch node's decision for packet k (index i) by the rule, counted and
 * made in the router's state (made, rr), or ARB_TOPO_NONE when the rule
 * does not decide it (then cfg.route does). s->rule is set: its router
 * lets the simulator decide. */
static SIM_ALWAYS_INLINE uint32_t rule_hop(arb_sim *s, uint32_t node, const struct pkt *k,
                                           uint32_t i)
{
    const arb_sim_route_fast *rf = s->rule;
    if (rf->plain_gen != *s->topo_gen || k->kind == PK_ARBOR) return ARB_TOPO_NONE;
    uint32_t e = s->pf_cur, out;
    uint64_t tok = 0;
    int guessed = rule_guess_holds(s, rf, e, node, i);
    if (guessed) {
        out = s->pf.port[e];
        tok = s->pf.tok[e];
    } else if (rf->rr) {
        out = fast_rr(s, rf, node, k->dst, 0, &tok);
    } else {
        arb_route_key key = rule_key(k);
        out = fast_ecmp(s, rf, node, &key, &tok);
    }
    if (out == ARB_TOPO_NONE) return out;
    arb_sim_rule_counts *n = rf->made;
    n->decisions++;
    n->guessed += (uint64_t)guessed;
    if (tok != ARB_SIM_TOKEN_PURE) { /* the round robin's choice: its counter moves */
        n->choices++;
        rf->rr[node]++;
    }
    return out;
}

/* s->rule: cfg.route_fast when its router lets the simulator decide by it
 * (net.c's forwarding), else NULL. */
static inline void rule_decide(arb_sim *s)
{
    const arb_sim_route_fast *rf = s->cfg.route_fast;
    s->rule = rf && rf->made && (rf->rr || rf->ecmp) && rf->route == s->cfg.route &&
                      rf->ctx == s->cfg.route_ctx && !s->cfg.inband && s->pgft
                  ? rf
                  : NULL;
}

#endif
