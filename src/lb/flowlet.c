/*
 * The schemes `flowlet` and `letflow` (lb.h): a packet arriving more than
 * the gap after the previous one of its flow at a switch starts a new
 * flowlet, which picks a port; the others keep it. flowlet picks as ar
 * does (with its bias toward the flowlet's last port); letflow (LetFlow,
 * Vanini et al., NSDI 2017) a uniformly random candidate.
 */
#include "lb_int.h"

#include <stdio.h>

extern const struct lb_scheme lb_scheme_letflow;

static uint32_t ar_fresh(arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                         const uint32_t *cands, unsigned n, uint32_t prev, arb_time now)
{
    (void)now;
    return lb_ar_choose(lb, s, node, k, cands, n, prev);
}

static uint32_t random_fresh(arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                             const uint32_t *cands, unsigned n, uint32_t prev, arb_time now)
{
    (void)s, (void)k, (void)prev, (void)now;
    return cands[arb_rng_below(&lb->rng[node], n)];
}

static uint32_t flowlet_choose(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                               const arb_route_key *k, const uint32_t *cands, unsigned n,
                               arb_time now)
{
    (void)in_port;
    return lb_flowlet_pick(lb, s, node, k, cands, n, now, ar_fresh);
}

static uint32_t letflow_choose(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                               const arb_route_key *k, const uint32_t *cands, unsigned n,
                               arb_time now)
{
    (void)in_port;
    return lb_flowlet_pick(lb, s, node, k, cands, n, now, random_fresh);
}

static int flowlet_option(arb_lb *lb, const char *key, const char *val)
{
    int rc = lb_option_flowlet(lb, key, val);
    return rc == ARB_ENOENT ? lb_option_bias(lb, key, val) : rc;
}

static int flowlet_init(arb_lb *lb, char *err, size_t errlen)
{
    int rc = lb_alloc_flowlets(lb);
    if (rc == 0 && lb->sc == &lb_scheme_letflow) rc = lb_alloc_rng(lb);
    return rc < 0 ? arb_errf(err, errlen, rc, "load balancing: out of memory") : 0;
}

static void flowlet_spec(const arb_lb *lb, char *buf, size_t len)
{
    char gap[32], bias[64];
    lb_fmt_time(gap, sizeof gap, lb->gap);
    lb_fmt_bias(lb, bias, sizeof bias);
    snprintf(buf, len, "flowlet:gap=%s,table=%llu,%s", gap, (unsigned long long)(lb->fl_mask + 1),
             bias);
}

static void letflow_spec(const arb_lb *lb, char *buf, size_t len)
{
    char gap[32];
    lb_fmt_time(gap, sizeof gap, lb->gap);
    snprintf(buf, len, "letflow:gap=%s,table=%llu", gap, (unsigned long long)(lb->fl_mask + 1));
}

const struct lb_scheme lb_scheme_flowlet = {
    .name = "flowlet",
    .gap = 256 * ARB_PS_PER_US,
    .option = flowlet_option,
    .init = flowlet_init,
    .spec = flowlet_spec,
    .choose = flowlet_choose,
};

const struct lb_scheme lb_scheme_letflow = {
    .name = "letflow",
    .gap = 500 * ARB_PS_PER_US,
    .option = lb_option_flowlet,
    .init = flowlet_init,
    .spec = letflow_spec,
    .choose = letflow_choose,
};
