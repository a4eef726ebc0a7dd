/*
 * The schemes `ar` and `ar_ftree` (lb.h): per-packet adaptive routing.
 * ar: at every switch the live minimal candidate with the least load
 * (arb_sim_port_load), ties broken by the switch's hash, with the
 * UGAL-style bias toward the static ECMP port. ar_ftree: D-mod-k's
 * parallel link on the way down while it lives, ar on the way up.
 */
#include "lb_int.h"

#include <stdio.h>

static uint32_t ar_pick(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                        const arb_route_key *k, const uint32_t *cands, unsigned n, arb_time now)
{
    (void)in_port, (void)now;
    uint32_t cur = LB_NONE;
    if (lb->biased) cur = cands[arb_route_hash(lb->r, node, k) % n];
    return lb_ar_choose(lb, s, node, k, cands, n, cur);
}

static uint32_t ar_ftree_pick(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                              const arb_route_key *k, const uint32_t *cands, unsigned n,
                              arb_time now)
{
    (void)in_port, (void)now;
    const arb_node *nd = &lb->nodes[node];
    if (cands[0] < nd->first_up) { /* down: D-mod-k's parallel link while it lives */
        uint32_t p = arb_pgft_down_port(lb->g, nd, k->dst);
        if (lb_in_set(p, cands, n)) return p;
    }
    return lb_ar_choose(lb, s, node, k, cands, n, LB_NONE);
}

static void ar_spec(const arb_lb *lb, char *buf, size_t len)
{
    char bias[64];
    lb_fmt_bias(lb, bias, sizeof bias);
    snprintf(buf, len, "%s:%s", lb->sc->name, bias);
}

const struct lb_scheme lb_scheme_ar = {
    .name = "ar",
    .option = lb_option_bias,
    .spec = ar_spec,
    .choose = ar_pick,
};

const struct lb_scheme lb_scheme_ar_ftree = {
    .name = "ar_ftree",
    .option = lb_option_bias,
    .spec = ar_spec,
    .choose = ar_ftree_pick,
};
