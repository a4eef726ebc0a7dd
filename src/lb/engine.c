/*
 * The scheme `route` (lb.h): a routing engine of route.h, named as the
 * scheme ("dmodk", "ecmp", ...) or given as the base router, decides
 * alone: arb_route_next per hop. Its guesses are pure (they read no state
 * of the load balancer) unless the router adapts; an ECMP router's are
 * guessed by the simulator inline (cfg.route_fast).
 */
#include "lb_int.h"

#include <stdio.h>

static uint32_t route_route(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                            const arb_sim_pkt_info *f, arb_time now)
{
    arb_lb *lb = ctx;
    (void)s, (void)now;
    lb->st.decisions++;
    if (f->token == ARB_SIM_TOKEN_PURE && !lb->route_adaptive && f->guess != ARB_TOPO_NONE) {
        lb->st.guessed++;
        return f->guess;
    }
    arb_route_key k = lb_key_of(f);
    uint32_t p = arb_route_next(lb->r, node, &k, in_port);
    if (p == ARB_ROUTE_NONE) lb->st.unroutable++;
    return p == ARB_ROUTE_NONE ? ARB_TOPO_NONE : p;
}

static uint32_t route_peek(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                           const arb_sim_pkt_info *f, uint32_t before, uint64_t *token)
{
    const arb_lb *lb = ctx;
    (void)s, (void)before;
    arb_route_key k = lb_key_of(f);
    if (lb->route_adaptive) return ARB_TOPO_NONE;
    uint32_t p = arb_route_next(lb->r, node, &k, in_port);
    if (p == ARB_ROUTE_NONE) return ARB_TOPO_NONE;
    *token = ARB_SIM_TOKEN_PURE;
    return p;
}

static int route_init(arb_lb *lb, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    arb_route_kind rk = arb_route_get_kind(lb->r);
    if (rk == ARB_ROUTE_ECMP || rk == ARB_ROUTE_EECMP) {
        lb->fast.ecmp = lb->r;
        lb->fast.made = &lb->made;
    }
    return 0;
}

static void route_spec(const arb_lb *lb, char *buf, size_t len)
{
    snprintf(buf, len, "%s", arb_route_spec(lb->r));
}

const struct lb_scheme lb_scheme_route = {
    .name = "route",
    .init = route_init,
    .spec = route_spec,
    .route = route_route,
    .peek = route_peek,
};
