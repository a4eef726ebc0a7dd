/* Private parts of the routing module shared by route.c, table.c and load.c. */
#ifndef ARBOR_ROUTE_INTERNAL_H
#define ARBOR_ROUTE_INTERNAL_H

#include "arbor/route.h"

/* An unreachable leaf in the up/down distance table. */
#define COST_INF 255u

/* One line of a table file: at `node`, pod `pod` arriving on local port
 * `in` (UINT32_MAX: any) leaves on local port `out`. */
struct route_entry {
    uint32_t node, pod, in, out;
};

struct arb_route {
    const arb_topo *t;
    const arb_pgft *g;
    const arb_node *nodes;
    const arb_port *ports;
    uint32_t n_nodes, n_hosts, first_switch, n_leaves;
    unsigned h;
    arb_route_kind kind;
    arb_route_config cfg;
    char spec[64];
    /* PGFT arithmetic, copied so the hot loop reads one small block */
    uint32_t W[ARB_TOPO_MAX_HEIGHT + 1], M[ARB_TOPO_MAX_HEIGHT + 1];
    uint32_t m[ARB_TOPO_MAX_HEIGHT + 1], w[ARB_TOPO_MAX_HEIGHT + 1];
    uint32_t p[ARB_TOPO_MAX_HEIGHT + 1];
    uint32_t U[ARB_TOPO_MAX_HEIGHT + 1]; /* up ports of a level-l node: w_{l+1} p_{l+1} */
    uint64_t seed;                       /* the last reseed */
    uint64_t *sw_seed;                   /* per node; NULL when polarized */
    uint16_t *rmap[ARB_TOPO_MAX_HEIGHT]; /* rnca: level l maps floor(d / W_l) to an up port */
    uint8_t *cost;               /* updown, dmodc: [switch - first_switch][leaf] up/down distance */
    uint64_t *div;               /* dmodc: divider per node */
    uint8_t *intact;             /* per node: none of its ports failed (ECMP's fast path) */
    uint64_t intact_gen;         /* the topology's failure generation `intact` was built at */
    struct route_entry *entries; /* table file, sorted */
    size_t n_entries;
};

static inline uint64_t route_hash(uint64_t seed, const arb_route_key *k, int with_qp)
{
    uint64_t a = ((uint64_t)(ARB_ROUTE_HOST_IP_BASE | k->src) << 32) |
                 (uint64_t)(ARB_ROUTE_HOST_IP_BASE | k->dst);
    uint64_t b = ((uint64_t)k->proto << 32) | ((uint64_t)k->sport << 16) | (uint64_t)k->dport;
    uint64_t h = arb_mix64(arb_mix64(seed ^ a) ^ b);
    if (with_qp) h = arb_mix64(h ^ (uint64_t)(k->qp & 0xFFFFFFu));
    return h;
}

/* The static engines' up port number at level l (dmodk, smodk, rnca). */
static inline uint32_t static_up(const arb_route *r, unsigned l, const arb_route_key *k)
{
    switch (r->kind) {
    case ARB_ROUTE_SMODK:
        return (k->src / r->W[l]) % r->U[l];
    case ARB_ROUTE_RNCA:
        return r->rmap[l][k->dst / r->W[l]];
    default:
        return (k->dst / r->W[l]) % r->U[l];
    }
}

/* arb_route_next without argument checks. */
uint32_t route_next_fast(const arb_route *r, uint32_t node, const arb_route_key *k,
                         uint32_t in_port);

/* table.c: read a table file into r->entries; the local out port for
 * (node, pod, in) or ARB_ROUTE_NONE. */
int route_table_load(arb_route *r, const char *path, char *err, size_t errlen);
uint32_t route_table_lookup(const arb_route *r, uint32_t node, uint32_t pod, uint32_t in);

#endif
