/*
 * Link loads of routed flows (route.h "Link loads") and the balls-in-bins
 * model. Per-port counters are reset through the list of ports the last
 * phase touched, so a phase costs its flows' hops, not the fabric's size.
 */
#include "route_internal.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

struct arb_route_load {
    const arb_topo *t;
    const arb_node *nodes;
    const arb_port *ports;
    uint32_t n_ports, n_hosts, live_links;
    uint32_t *flows, *maxf, *touched;
    double *demand, *maxd;
    size_t n_touched;
    uint64_t *hist;
    uint32_t hist_cap;
    arb_route_stats st; /* hist pointer and length filled on read */
    uint64_t phase_index;
};

int arb_route_load_new(arb_route_load **out, const arb_topo *t)
{
    if (!out || !t) return ARB_EINVAL;
    *out = NULL;
    arb_route_load *l = arb_calloc(1, sizeof *l);
    if (!l) return ARB_ENOMEM;
    l->t = t;
    l->nodes = arb_topo_nodes(t);
    l->ports = arb_topo_ports(t);
    l->n_ports = arb_topo_n_ports(t);
    l->n_hosts = arb_topo_n_hosts(t);
    size_t n = l->n_ports ? l->n_ports : 1;
    l->flows = arb_calloc(n, sizeof *l->flows);
    l->maxf = arb_calloc(n, sizeof *l->maxf);
    l->touched = arb_malloc(n * sizeof *l->touched);
    l->demand = arb_calloc(n, sizeof *l->demand);
    l->maxd = arb_calloc(n, sizeof *l->maxd);
    l->hist_cap = 16;
    l->hist = arb_calloc(l->hist_cap, sizeof *l->hist);
    if (!l->flows || !l->maxf || !l->touched || !l->demand || !l->maxd || !l->hist) {
        arb_route_load_free(l);
        return ARB_ENOMEM;
    }
    arb_route_load_reset(l);
    *out = l;
    return 0;
}

void arb_route_load_free(arb_route_load *l)
{
    if (!l) return;
    arb_free(l->flows);
    arb_free(l->maxf);
    arb_free(l->touched);
    arb_free(l->demand);
    arb_free(l->maxd);
    arb_free(l->hist);
    arb_free(l);
}

void arb_route_load_reset(arb_route_load *l)
{
    if (!l) return;
    memset(l->flows, 0, sizeof *l->flows * l->n_ports);
    memset(l->maxf, 0, sizeof *l->maxf * l->n_ports);
    memset(l->demand, 0, sizeof *l->demand * l->n_ports);
    memset(l->maxd, 0, sizeof *l->maxd * l->n_ports);
    memset(l->hist, 0, sizeof *l->hist * l->hist_cap);
    memset(&l->st, 0, sizeof l->st);
    l->n_touched = 0;
    l->phase_index = 0;
    l->live_links = 0;
    for (uint32_t p = 0; p < l->n_ports; p++)
        if (!l->ports[p].failed) l->live_links++;
}

/* Trace one flow; the hop count or -1 when it cannot be routed. */
static int trace(const arb_route *r, const arb_route_key *k, uint32_t *buf)
{
    uint32_t node = k->src, in = ARB_TOPO_NONE;
    int hops = 0;
    while (node != k->dst) {
        if (hops >= ARB_ROUTE_MAX_HOPS) return -1;
        uint32_t p = r->kind == ARB_ROUTE_ADAPTIVE ? arb_route_next(r, node, k, in)
                                                   : route_next_fast(r, node, k, in);
        if (p == ARB_ROUTE_NONE) return -1;
        buf[hops++] = p;
        in = r->ports[p].peer_port;
        node = r->ports[p].peer;
    }
    return hops;
}

long arb_route_load_phase(arb_route_load *l, const arb_route *r, const arb_flow *flows, size_t n)
{
    if (!l || !r || (n && !flows) || r->t != l->t) return ARB_EINVAL;
    for (size_t i = 0; i < l->n_touched; i++) {
        uint32_t p = l->touched[i];
        l->flows[p] = 0;
        l->demand[p] = 0.0;
    }
    l->n_touched = 0;
    long bad = 0;
    uint64_t hops = 0;
    uint32_t buf[ARB_ROUTE_MAX_HOPS];
    for (size_t i = 0; i < n; i++) {
        const arb_flow *f = &flows[i];
        if (f->src >= l->n_hosts || f->dst >= l->n_hosts || f->src == f->dst) {
            bad++;
            continue;
        }
        arb_route_key k = arb_route_key_of(f);
        int nh = trace(r, &k, buf);
        if (nh < 0) {
            bad++;
            continue;
        }
        hops += (uint64_t)nh;
        double src_rate = (double)l->ports[l->nodes[f->src].first_up].rate;
        for (int h = 0; h < nh; h++) {
            uint32_t p = buf[h];
            if (l->flows[p]++ == 0) l->touched[l->n_touched++] = p;
            double rate = (double)l->ports[p].rate;
            l->demand[p] += rate == src_rate ? f->demand : f->demand * (src_rate / rate);
        }
    }
    /* the phase's figures */
    arb_route_stats *st = &l->st;
    uint32_t pmax = 0, prev_max = st->max_load;
    for (size_t i = 0; i < l->n_touched; i++) {
        uint32_t p = l->touched[i], c = l->flows[p];
        double d = l->demand[p];
        if (c > pmax) pmax = c;
        if (c > st->max_load) st->max_load = c;
        if (d > st->max_demand) st->max_demand = d;
        if (l->ports[p].tier == 0) {
            if (c > st->host_max_load) st->host_max_load = c;
            if (d > st->host_max_demand) st->host_max_demand = d;
        } else {
            if (c > st->fabric_max_load) st->fabric_max_load = c;
            if (d > st->fabric_max_demand) st->fabric_max_demand = d;
        }
        if (c > l->maxf[p]) l->maxf[p] = c;
        if (d > l->maxd[p]) l->maxd[p] = d;
    }
    if (pmax >= l->hist_cap) {
        uint32_t nc = l->hist_cap;
        while (nc <= pmax)
            nc *= 2;
        uint64_t *nh = arb_realloc(l->hist, nc * sizeof *nh);
        if (!nh) return ARB_ENOMEM;
        memset(nh + l->hist_cap, 0, (nc - l->hist_cap) * sizeof *nh);
        l->hist = nh;
        l->hist_cap = nc;
    }
    for (size_t i = 0; i < l->n_touched; i++)
        l->hist[l->flows[l->touched[i]]]++;
    l->hist[0] += l->live_links - l->n_touched;
    if (pmax > prev_max) st->worst_phase = (uint32_t)l->phase_index;
    st->phases++;
    st->flows += n;
    st->unroutable += (uint64_t)bad;
    st->hops += hops;
    l->phase_index++;
    return bad;
}

void arb_route_load_stats(const arb_route_load *l, arb_route_stats *out)
{
    *out = l->st;
    out->live_links = l->live_links;
    uint32_t len = 0;
    for (uint32_t k = 0; k < l->hist_cap; k++)
        if (l->hist[k]) len = k + 1;
    out->hist_len = len;
    out->hist = l->hist;
    out->mean_load = (l->st.phases && l->live_links)
                         ? (double)l->st.hops / ((double)l->st.phases * l->live_links)
                         : 0.0;
}

const uint32_t *arb_route_load_flows(const arb_route_load *l)
{
    return l->flows;
}

const double *arb_route_load_demand(const arb_route_load *l)
{
    return l->demand;
}

const uint32_t *arb_route_load_max_flows(const arb_route_load *l)
{
    return l->maxf;
}

const double *arb_route_load_max_demand(const arb_route_load *l)
{
    return l->maxd;
}

/* ------------------------------------------------------------------ */
/* Balls in bins                                                        */
/* ------------------------------------------------------------------ */

double arb_route_bins_p_no_collision(uint64_t flows, uint64_t links)
{
    if (links == 0) return 0.0;
    double p = 1.0;
    for (uint64_t i = 0; i < flows; i++) {
        if (i >= links) return 0.0;
        p *= 1.0 - (double)i / (double)links;
    }
    return p;
}

int arb_route_bins_busiest(uint64_t flows, uint64_t links, uint64_t trials, arb_rng *rng,
                           double *mean_busiest, double *p_none)
{
    if (!links || !trials || !rng || links > ((uint64_t)1 << 24)) return ARB_EINVAL;
    uint32_t *bin = arb_calloc((size_t)links, sizeof *bin);
    if (!bin) return ARB_ENOMEM;
    double sum = 0.0;
    uint64_t none = 0;
    for (uint64_t t = 0; t < trials; t++) {
        uint32_t best = 0;
        for (uint64_t f = 0; f < flows; f++) {
            uint32_t c = ++bin[arb_rng_below(rng, links)];
            if (c > best) best = c;
        }
        sum += best;
        if (best <= 1) none++;
        memset(bin, 0, (size_t)links * sizeof *bin);
    }
    arb_free(bin);
    if (mean_busiest) *mean_busiest = sum / (double)trials;
    if (p_none) *p_none = (double)none / (double)trials;
    return 0;
}
