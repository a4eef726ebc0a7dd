/*
 * The fabric's part of planning (topo.h, arb_topo_plan): the roots a group's
 * trees may take on a PGFT and a host's path up to one of them, handed to
 * the planner (plan.h) as an arb_plan_fabric.
 */
#include "arbor/plan.h"
#include "arbor/topo.h"

/* One group on one topology: the roots' level. A host climbing toward root
 * digits r reaches the level-L switch above the group with upward digits r. */
struct group {
    const arb_topo *t;
    const arb_pgft *g;
    const arb_node *nodes;
    const arb_port *ports;
    unsigned L; /* the roots' level */
};

/* Walk host h up to level L toward root digits r, on the first live
 * parallel link at each level. */
static int walk_up(const void *ctx, uint32_t h, uint32_t r, arb_plan_hop *path)
{
    const struct group *x = ctx;
    const arb_pgft *g = x->g;
    uint32_t n = h;
    for (unsigned l = 0; l < x->L; l++) {
        const arb_node *nd = &x->nodes[n];
        uint32_t w = g->w[l + 1], par = g->p[l + 1];
        uint32_t td = (r / g->W[l]) % w;
        uint32_t port = ARB_PLAN_NONE;
        for (uint32_t k = 0; k < par; k++) {
            uint32_t q = td + w * k;
            if (q >= nd->n_up) break;
            if (!x->ports[nd->first_up + q].failed) {
                port = nd->first_up + q;
                break;
            }
        }
        if (port == ARB_PLAN_NONE) return ARB_ENOENT;
        path[l].node = n;
        path[l].up_port = port;
        path[l].up_peer = x->ports[port].peer_port;
        path[l].level = (uint8_t)l;
        n = x->ports[port].peer;
    }
    path[x->L].node = n;
    path[x->L].up_port = ARB_PLAN_NONE;
    path[x->L].up_peer = ARB_PLAN_NONE;
    path[x->L].level = (uint8_t)x->L;
    return (int)x->L + 1;
}

/* The root level: the lowest switch level above every host of the group.
 * Only arithmetic on the ranks: arb_plan_new checks them. */
static void root_level(struct group *x, const uint32_t *ranks, uint32_t n)
{
    const arb_pgft *g = x->g;
    unsigned L = 1;
    while (L < g->h && n > 0) {
        uint32_t k0 = ranks[0] / g->M[L];
        int same = 1;
        for (uint32_t r = 1; r < n && same; r++)
            same = ranks[r] / g->M[L] == k0;
        if (same) break;
        L++;
    }
    x->L = L;
}

int arb_topo_plan(arb_plan **out, const arb_topo *t, const arb_plan_config *cfg, char *err,
                  size_t errlen)
{
    if (out) *out = NULL;
    if (!t) return arb_errf(err, errlen, ARB_EINVAL, "plan: NULL argument");
    struct group x = {
        .t = t, .g = arb_topo_pgft(t), .nodes = arb_topo_nodes(t), .ports = arb_topo_ports(t)};
    uint32_t n = cfg && cfg->ranks && cfg->n_ranks <= ARB_PLAN_MAX_RANKS ? cfg->n_ranks : 0;
    root_level(&x, n ? cfg->ranks : NULL, n);
    arb_plan_fabric f = {.n_hosts = arb_topo_n_hosts(t),
                         .n_nodes = arb_topo_n_nodes(t),
                         .n_roots = x.g->W[x.L],
                         .root_level = x.L,
                         .path = walk_up,
                         .ctx = &x};
    return arb_plan_new(out, &f, cfg, err, errlen);
}
