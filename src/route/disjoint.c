/*
 * HPN's host-side path selection (Alibaba HPN, SIGCOMM 2024, section 6.1):
 * the host reproduces the switches' hash to choose UDP source ports whose
 * paths share no switch-to-switch link, and opens one connection per path.
 *
 * Greedy and deterministic: ports lo, lo+1, ... are traced through the
 * router (arb_route_path, so every switch's own hash and seed is applied)
 * and a port is kept when its path uses no fabric link a kept port already
 * uses. When the range runs out before n are kept, the rest are filled one
 * at a time with the port whose path overlaps least (the sum, over its
 * fabric links, of the kept paths already on them; ties: the lowest port).
 */
#include "route_internal.h"

#include <stdlib.h>
#include "base/alloc.h"

#define ROCE_UDP_PORT 4791

static int trace(const arb_route *r, uint32_t src, uint32_t dst, uint16_t sport, uint32_t *ports)
{
    arb_route_key k = {0};
    k.src = src;
    k.dst = dst;
    k.sport = sport;
    k.dport = ROCE_UDP_PORT;
    k.proto = 17;
    return arb_route_path(r, &k, ports, ARB_ROUTE_MAX_HOPS);
}

/* Sum of the kept paths on the fabric links of ports[0..hops). */
static uint64_t overlap(const arb_route *r, const uint32_t *used, const uint32_t *ports, int hops)
{
    uint64_t o = 0;
    for (int i = 0; i < hops; i++)
        if (r->ports[ports[i]].tier > 0) o += used[ports[i]];
    return o;
}

static void keep(const arb_route *r, uint32_t *used, const uint32_t *ports, int hops)
{
    for (int i = 0; i < hops; i++)
        if (r->ports[ports[i]].tier > 0) used[ports[i]]++;
}

int arb_route_disjoint_sports(const arb_route *r, uint32_t src, uint32_t dst, unsigned n,
                              uint16_t lo, uint16_t hi, uint16_t *out)
{
    if (!r || !out || n == 0 || lo > hi || n > (unsigned)(hi - lo) + 1 || src >= r->n_hosts ||
        dst >= r->n_hosts || src == dst)
        return ARB_EINVAL;
    uint32_t n_ports = arb_topo_n_ports(r->t);
    uint32_t *used = arb_calloc(n_ports, sizeof *used);
    uint8_t *taken = arb_calloc((size_t)(hi - lo) + 1, 1);
    if (!used || !taken) {
        arb_free(used);
        arb_free(taken);
        return ARB_ENOMEM;
    }
    uint32_t ports[ARB_ROUTE_MAX_HOPS];
    unsigned found = 0;
    int rc = 0, any_route = 0;
    for (uint32_t sp = lo; sp <= hi && found < n; sp++) {
        int hops = trace(r, src, dst, (uint16_t)sp, ports);
        if (hops == ARB_ENOENT) continue;
        if (hops < 0) {
            rc = hops;
            goto out;
        }
        any_route = 1;
        if (overlap(r, used, ports, hops) == 0) {
            keep(r, used, ports, hops);
            taken[sp - lo] = 1;
            out[found++] = (uint16_t)sp;
        }
    }
    if (!any_route) {
        rc = ARB_ENOENT;
        goto out;
    }
    rc = (int)found;
    while (found < n) {
        uint64_t best = UINT64_MAX;
        uint32_t best_sp = 0;
        for (uint32_t sp = lo; sp <= hi; sp++) {
            if (taken[sp - lo]) continue;
            int hops = trace(r, src, dst, (uint16_t)sp, ports);
            if (hops < 0) continue;
            uint64_t o = overlap(r, used, ports, hops);
            if (o < best) {
                best = o;
                best_sp = sp;
            }
        }
        if (best == UINT64_MAX) { /* fewer routable ports than n */
            rc = ARB_ENOENT;
            goto out;
        }
        int hops = trace(r, src, dst, (uint16_t)best_sp, ports);
        keep(r, used, ports, hops);
        taken[best_sp - lo] = 1;
        out[found++] = (uint16_t)best_sp;
    }
out:
    arb_free(used);
    arb_free(taken);
    return rc;
}
