/*
 * The scheme `spray` (lb.h): packet spraying over the minimal candidates,
 * round robin (one counter per switch, advanced at every decision with
 * more than one candidate; the simulator guesses it inline through
 * cfg.route_fast) or, with option `random`, a uniformly random candidate
 * per packet (one generator per switch).
 */
#include "lb_int.h"

#include <stdio.h>
#include <string.h>

/* lb->variant: 0 round robin, 1 random. */
static int is_random(const arb_lb *lb)
{
    return lb->variant == 1;
}

/* The index of the next candidate of n at node. */
static unsigned spray_index(arb_lb *lb, uint32_t node, unsigned n)
{
    if (is_random(lb)) return (unsigned)arb_rng_below(&lb->rng[node], n);
    return lb->rr[node]++ % n;
}

static uint32_t spray_choose(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                             const arb_route_key *k, const uint32_t *cands, unsigned n,
                             arb_time now)
{
    (void)s, (void)in_port, (void)k, (void)now;
    return cands[spray_index(lb, node, n)];
}

static uint32_t spray_peek(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                           const arb_sim_pkt_info *f, uint32_t before, uint64_t *token)
{
    const arb_lb *lb = ctx;
    (void)s, (void)in_port;
    arb_route_key k = lb_key_of(f);
    uint32_t first, stride;
    int m = arb_route_candidate_range(lb->r, node, &k, &first, &stride);
    if (m < 1) return ARB_TOPO_NONE;
    if (m == 1) {
        *token = ARB_SIM_TOKEN_PURE;
        return first;
    }
    if (is_random(lb)) {
        if (before) return ARB_TOPO_NONE;
        arb_rng r = lb->rng[node]; /* a copy: the draw the route will make */
        return first + stride * (uint32_t)arb_rng_below(&r, (unsigned)m);
    }
    return arb_sim_rr_pick(lb->rr, node, first, stride, (unsigned)m, before, token);
}

/* The guess f came back with, if it is the decision spray_route would make
 * now (then made: the counter moves as it would have), else ARB_TOPO_NONE. */
static uint32_t take_guess(arb_lb *lb, uint32_t node, const arb_sim_pkt_info *f)
{
    if (f->token == ARB_SIM_TOKEN_PURE) return f->guess;
    if (is_random(lb) || f->token != (ARB_SIM_TOKEN_RR | lb->rr[node])) return ARB_TOPO_NONE;
    lb->st.choices++;
    lb->rr[node]++;
    return f->guess;
}

/* spray_route's decision without a guess: out of line, so that a guess
 * taken back costs no frame. */
static LB_NOINLINE uint32_t spray_decide(arb_lb *lb, const arb_sim *s, uint32_t node,
                                         uint32_t in_port, const arb_sim_pkt_info *f, arb_time now)
{
    arb_route_key k = lb_key_of(f);
    /* a plain range needs no list: pick its index */
    uint32_t first, stride;
    int m = arb_route_candidate_range(lb->r, node, &k, &first, &stride);
    if (m == 1) return first;
    if (m > 1) {
        lb->st.choices++;
        return first + stride * spray_index(lb, node, (unsigned)m);
    }
    return lb_decide_listed(lb, s, node, in_port, &k, now);
}

static uint32_t spray_route(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                            const arb_sim_pkt_info *f, arb_time now)
{
    arb_lb *lb = ctx;
    lb->st.decisions++;
    if (f->token) {
        uint32_t p = take_guess(lb, node, f);
        if (p != ARB_TOPO_NONE) {
            lb->st.guessed++;
            return p;
        }
    }
    return spray_decide(lb, s, node, in_port, f, now);
}

static int spray_option(arb_lb *lb, const char *key, const char *val)
{
    if (val) return ARB_ENOENT;
    if (strcmp(key, "random") == 0)
        lb->variant = 1;
    else if (strcmp(key, "rr") == 0)
        lb->variant = 0;
    else
        return ARB_ENOENT;
    return 0;
}

static int spray_init(arb_lb *lb, char *err, size_t errlen)
{
    int rc = is_random(lb) ? lb_alloc_rng(lb) : lb_alloc_rr(lb);
    if (rc < 0) return arb_errf(err, errlen, rc, "load balancing: out of memory");
    lb->fast.rr = is_random(lb) ? NULL : lb->rr;
    lb->fast.made = is_random(lb) ? NULL : &lb->made;
    return 0;
}

static void spray_spec(const arb_lb *lb, char *buf, size_t len)
{
    snprintf(buf, len, "spray:%s", is_random(lb) ? "random" : "rr");
}

const struct lb_scheme lb_scheme_spray = {
    .name = "spray",
    .option = spray_option,
    .init = spray_init,
    .spec = spray_spec,
    .route = spray_route,
    .choose = spray_choose,
    .peek = spray_peek,
};
