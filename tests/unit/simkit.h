/*
 * simkit.h - what the simulator's unit tests share: a topology made from
 * its spec or the test stops, and D-mod-k routing written out here, so
 * that a test of the simulator does not lean on the routing module.
 */
#ifndef ARBOR_TEST_SIMKIT_H
#define ARBOR_TEST_SIMKIT_H

#include "arbor/sim.h"
#include "arbor/topo.h"
#include "testkit.h"

#include <stdlib.h>

/* The topology `spec`; the test stops (REQUIRE) when it cannot be made. */
static inline arb_topo *simkit_topo(const char *spec)
{
    arb_topo *t = NULL;
    char err[256];
    if (arb_topo_new(&t, spec, NULL, err, sizeof err) < 0) printf("  topo %s: %s\n", spec, err);
    REQUIRE(t != NULL);
    return t;
}

/* D-mod-k on a PGFT (an arb_sim_route_fn): down toward the destination
 * when it is below, else up port floor(dst / W_l) mod (w_{l+1} p_{l+1}). */
static inline uint32_t simkit_dmodk(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                                    const arb_sim_pkt_info *f, arb_time now)
{
    (void)ctx, (void)in_port, (void)now;
    const arb_topo *t = arb_sim_topo(sim);
    const arb_pgft *g = arb_topo_pgft(t);
    const arb_node *n = arb_topo_node(t, node);
    if (arb_pgft_below(g, n, f->dst)) return arb_pgft_down_port(g, n, f->dst);
    unsigned l = n->level;
    return n->first_up + (f->dst / g->W[l]) % (g->w[l + 1] * g->p[l + 1]);
}

/* The collective operations of a partitioned run's only part
 * (arb_sim_part_ops): nothing to exchange, every reduction its own input. */
static inline int simkit_one_alltoall(void *ctx, const uint8_t *const *send, const size_t *send_len,
                                      uint8_t **recv, size_t *recv_len)
{
    static uint8_t none;
    (void)ctx, (void)send, (void)send_len;
    *recv = &none;
    recv_len[0] = 0;
    return 0;
}
static inline int simkit_one_reduce(void *ctx, uint64_t *v, size_t n)
{
    (void)ctx, (void)v, (void)n;
    return 0;
}

#endif
