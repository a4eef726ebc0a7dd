/*
 * Routing engines: spec parsing, precomputed tables and the per-hop
 * decision (route.h). route/ holds the static routing functions: pure
 * arithmetic over the topology and the engine's tables, the same answer
 * for the same packet whenever asked. The dynamic choosers, which read a
 * running simulator's queues and keep state per switch, are lb/'s (lb.h);
 * they reach this module through arb_route_candidates and the `adaptive`
 * engine's hook. The decision is a switch over the engine kind
 * rather than a function pointer so that the static engines inline into
 * the tracing loop of load.c.
 */
#include "route_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

static const char *const kind_names[ARB_ROUTE_KIND_COUNT] = {
    "dmodk", "smodk", "rnca", "pinning", "table", "updown", "dmodc", "ecmp", "eecmp", "adaptive"};

const char *arb_route_kind_name(int kind)
{
    if (kind < 0 || kind >= ARB_ROUTE_KIND_COUNT) return NULL;
    return kind_names[kind];
}

arb_route_config arb_route_config_default(void)
{
    arb_route_config c;
    memset(&c, 0, sizeof c);
    c.seed = 1;
    return c;
}

/* ------------------------------------------------------------------ */
/* Hashing and seeds                                                    */
/* ------------------------------------------------------------------ */

static uint64_t node_seed(const arb_route *r, uint32_t node)
{
    return r->sw_seed ? r->sw_seed[node] : r->seed;
}

uint64_t arb_route_hash(const arb_route *r, uint32_t node, const arb_route_key *key)
{
    if (!r || !key || node >= r->n_nodes) return 0;
    return route_hash(node_seed(r, node), key, r->kind == ARB_ROUTE_EECMP);
}

void arb_route_reseed(arb_route *r, uint64_t seed)
{
    if (!r) return;
    r->seed = seed;
    if (r->sw_seed)
        for (uint32_t n = 0; n < r->n_nodes; n++)
            r->sw_seed[n] = arb_mix64(seed + 0x9E3779B97F4A7C15ull * ((uint64_t)n + 1));
}

/* ------------------------------------------------------------------ */
/* Candidate sets                                                       */
/* ------------------------------------------------------------------ */

/* Up/down distance from switch s to host d through d's live host links;
 * COST_INF when d is unreachable. Hosts: the distance through their own
 * up ports. */
static unsigned cost_to(const arb_route *r, uint32_t s, uint32_t d)
{
    const arb_node *hn = &r->nodes[d];
    unsigned best = COST_INF;
    for (unsigned q = 0; q < hn->n_up; q++) {
        const arb_port *hp = &r->ports[hn->first_up + q];
        if (hp->failed) continue;
        uint32_t leaf = hp->peer;
        unsigned c;
        if (s == leaf)
            c = 0;
        else if (r->nodes[s].kind == ARB_NODE_HOST)
            continue;
        else
            c = r->cost[(size_t)(s - r->first_switch) * r->n_leaves + (leaf - r->first_switch)];
        if (c + 1 < best) best = c + 1;
    }
    return best;
}

/* The distance from node n (host or switch) to host d. */
static unsigned node_cost(const arb_route *r, uint32_t n, uint32_t d)
{
    if (n == d) return 0;
    if (r->nodes[n].kind == ARB_NODE_SWITCH) return cost_to(r, n, d);
    /* a host: one more than its best parent */
    const arb_node *hn = &r->nodes[n];
    unsigned best = COST_INF;
    for (unsigned q = 0; q < hn->n_up; q++) {
        const arb_port *p = &r->ports[hn->first_up + q];
        if (p->failed) continue;
        unsigned c = cost_to(r, p->peer, d);
        if (c < COST_INF && c + 1 < best) best = c + 1;
    }
    return best;
}

/*
 * The candidate set of node n for key: minimal and not failed; with the
 * cost tables (updown, dmodc), only ports one step closer to d. `all`
 * keeps failed ports (the table engine's full set). Writes the first cap
 * members into cands (which may be NULL when cap is 0) and returns the
 * size of the whole set, so a caller can count first and then ask for one
 * member with candidate_at: no per-hop array of the radix's size.
 */
static unsigned candidates(const arb_route *r, uint32_t node, const arb_route_key *k,
                           uint32_t *cands, unsigned cap, int all)
{
    const arb_node *n = &r->nodes[node];
    uint32_t d = k->dst;
    unsigned l = n->level, cnt = 0;
    if (l > 0 && arb_pgft_below(r->g, n, d)) {
        uint32_t c = (d / r->M[l - 1]) % r->m[l];
        for (uint32_t par = 0; par < r->p[l]; par++) {
            uint32_t pt = n->first_port + c + r->m[l] * par;
            const arb_port *p = &r->ports[pt];
            if (!all && p->failed) continue;
            if (!all && r->cost && p->peer != d && cost_to(r, p->peer, d) >= COST_INF) continue;
            if (cnt < cap) cands[cnt] = pt;
            cnt++;
        }
        return cnt;
    }
    unsigned want = COST_INF;
    if (!all && r->cost) {
        unsigned mine = node_cost(r, node, d);
        if (mine >= COST_INF) return 0;
        want = mine - 1;
    }
    for (unsigned q = 0; q < n->n_up; q++) {
        uint32_t pt = n->first_up + q;
        const arb_port *p = &r->ports[pt];
        if (!all && p->failed) continue;
        if (want != COST_INF && cost_to(r, p->peer, d) != want) continue;
        if (cnt < cap) cands[cnt] = pt;
        cnt++;
    }
    return cnt;
}

/* Member i of the candidate set (i below its size). */
static uint32_t candidate_at(const arb_route *r, uint32_t node, const arb_route_key *k, unsigned i,
                             int all)
{
    uint32_t buf[64];
    if (i < 64) {
        unsigned n = candidates(r, node, k, buf, i + 1, all);
        return i < n ? buf[i] : ARB_ROUTE_NONE;
    }
    /* a rare radix: walk the set again, keeping only member i */
    const arb_node *n = &r->nodes[node];
    unsigned total = (unsigned)n->n_down + n->n_up;
    uint32_t *big = arb_malloc(sizeof *big * total);
    if (!big) return ARB_ROUTE_NONE;
    unsigned c = candidates(r, node, k, big, total, all);
    uint32_t out = i < c ? big[i] : ARB_ROUTE_NONE;
    arb_free(big);
    return out;
}

int arb_route_candidate_range(const arb_route *r, uint32_t node, const arb_route_key *key,
                              uint32_t *first, uint32_t *stride)
{
    if (!r || !key || node >= r->n_nodes || key->dst >= r->n_hosts || node == key->dst ||
        !r->intact[node] || r->cost || r->intact_gen != arb_topo_failure_gen(r->t))
        return 0;
    /* No failed port: the set is a plain range (see ecmp_pick). */
    return (int)arb_pgft_next_range(r->g, &r->nodes[node], key->dst, first, stride);
}

int arb_route_candidates(const arb_route *r, uint32_t node, const arb_route_key *key,
                         uint32_t *cands, unsigned cap)
{
    if (!r || !key || (cap && !cands) || node >= r->n_nodes || key->dst >= r->n_hosts ||
        node == key->dst)
        return ARB_EINVAL;
    uint32_t first, stride;
    int c = arb_route_candidate_range(r, node, key, &first, &stride);
    if (c > 0) {
        if ((unsigned)c > cap) return ARB_ENOSPC;
        for (int q = 0; q < c; q++)
            cands[q] = first + stride * (uint32_t)q;
        return c;
    }
    unsigned m = candidates(r, node, key, cands, cap, 0);
    if (m > cap) return ARB_ENOSPC;
    return (int)m;
}

/* ------------------------------------------------------------------ */
/* The decision                                                         */
/* ------------------------------------------------------------------ */

/* ECMP over the live minimal ports of node. On a node with no failed port
 * the set is a plain range (the parallel down links toward the child on
 * d's path, or every up port), so the hash picks from it directly: the
 * same port the general path below would give. Failures changed since the
 * last refresh: the general path, which reads the flags themselves. */
static uint32_t ecmp_pick(const arb_route *r, uint32_t node, const arb_route_key *k, int qp)
{
    if (r->intact[node] && !r->cost && r->intact_gen == arb_topo_failure_gen(r->t)) {
        const arb_node *n = &r->nodes[node];
        unsigned l = n->level;
        if (l > 0 && arb_pgft_below(r->g, n, k->dst)) {
            uint32_t c = n->first_port + (k->dst / r->M[l - 1]) % r->m[l];
            if (r->p[l] == 1) return c;
            return c + r->m[l] * (uint32_t)(route_hash(node_seed(r, node), k, qp) % r->p[l]);
        }
        if (n->n_up <= 1) return n->n_up ? n->first_up : ARB_ROUTE_NONE;
        return n->first_up + (uint32_t)(route_hash(node_seed(r, node), k, qp) % n->n_up);
    }
    uint32_t first;
    unsigned n = candidates(r, node, k, &first, 1, 0);
    if (n <= 1) return n ? first : ARB_ROUTE_NONE;
    return candidate_at(r, node, k, (unsigned)(route_hash(node_seed(r, node), k, qp) % n), 0);
}

/* updown and dmodc: D-mod-k over the surviving candidates with divider div. */
static uint32_t survivors_pick(const arb_route *r, uint32_t node, const arb_route_key *k,
                               uint64_t div)
{
    uint32_t first;
    unsigned n = candidates(r, node, k, &first, 1, 0);
    if (n <= 1) return n ? first : ARB_ROUTE_NONE;
    return candidate_at(r, node, k, (unsigned)((k->dst / div) % n), 0);
}

static uint32_t pinning_next(const arb_route *r, uint32_t node, const arb_route_key *k)
{
    const arb_node *n = &r->nodes[node];
    uint32_t d = k->dst;
    if (n->level != 1 || n->n_up == 0 || arb_pgft_below(r->g, n, d))
        return ecmp_pick(r, node, k, 0);
    uint32_t slices = r->m[1], up = n->n_up;
    uint32_t slice = d % slices;
    uint32_t cands[64];
    unsigned cnt = 0;
    if (up <= slices) {
        uint32_t pt = n->first_up + slice % up;
        if (!r->ports[pt].failed) return pt;
    } else {
        for (uint32_t q = slice; q < up && cnt < 64; q += slices)
            if (!r->ports[n->first_up + q].failed) cands[cnt++] = n->first_up + q;
        if (cnt == 1) return cands[0];
        if (cnt > 1) return cands[route_hash(node_seed(r, node), k, 0) % cnt];
    }
    return ecmp_pick(r, node, k, 0); /* the pinned uplink failed: back to ECMP */
}

static uint32_t table_next(const arb_route *r, uint32_t node, const arb_route_key *k,
                           uint32_t in_port)
{
    const arb_node *n = &r->nodes[node];
    if (n->kind == ARB_NODE_HOST) return ecmp_pick(r, node, k, 0);
    uint32_t pod = k->dst / r->M[r->h - 1];
    uint32_t j = 0;
    if (in_port != ARB_TOPO_NONE && in_port >= n->first_port &&
        in_port < n->first_port + n->n_down + n->n_up)
        j = in_port - n->first_port;
    uint32_t out = ARB_ROUTE_NONE;
    int going_up = !arb_pgft_below(r->g, n, k->dst);
    if (r->n_entries && (going_up || n->level == r->h)) {
        uint32_t local = route_table_lookup(r, node, pod, j);
        if (local != ARB_ROUTE_NONE) out = n->first_port + local;
    }
    if (out == ARB_ROUTE_NONE) {
        unsigned c = candidates(r, node, k, NULL, 0, 1);
        if (c == 0) return ARB_ROUTE_NONE;
        out = candidate_at(r, node, k, (unsigned)(((uint64_t)pod + j) % c), 1);
    }
    if (!r->ports[out].failed) return out;
    return ecmp_pick(r, node, k, 0); /* the table's port failed: hash */
}

uint32_t route_next_fast(const arb_route *r, uint32_t node, const arb_route_key *k,
                         uint32_t in_port)
{
    const arb_node *n = &r->nodes[node];
    uint32_t d = k->dst;
    unsigned l = n->level;
    switch (r->kind) {
    case ARB_ROUTE_DMODK:
    case ARB_ROUTE_SMODK:
    case ARB_ROUTE_RNCA: {
        uint32_t pt;
        if (l > 0 && arb_pgft_below(r->g, n, d)) {
            uint32_t c = (d / r->M[l - 1]) % r->m[l];
            uint32_t par = static_up(r, l - 1, k) / r->w[l];
            pt = n->first_port + c + r->m[l] * par;
        } else {
            if (n->n_up == 0) return ARB_ROUTE_NONE;
            pt = n->first_up + static_up(r, l, k);
        }
        return r->ports[pt].failed ? ARB_ROUTE_NONE : pt;
    }
    case ARB_ROUTE_ECMP:
        return ecmp_pick(r, node, k, 0);
    case ARB_ROUTE_EECMP:
        return ecmp_pick(r, node, k, 1);
    case ARB_ROUTE_PINNING:
        return pinning_next(r, node, k);
    case ARB_ROUTE_TABLE:
        return table_next(r, node, k, in_port);
    case ARB_ROUTE_UPDOWN:
        return survivors_pick(r, node, k, r->W[l]);
    case ARB_ROUTE_DMODC:
        return survivors_pick(r, node, k, r->div[node]);
    case ARB_ROUTE_ADAPTIVE: {
        uint32_t cands[ARB_ROUTE_MAX_CANDS];
        unsigned c = candidates(r, node, k, cands, ARB_ROUTE_MAX_CANDS, 0);
        if (c == 0) return ARB_ROUTE_NONE;
        if (c > ARB_ROUTE_MAX_CANDS) c = ARB_ROUTE_MAX_CANDS;
        return r->cfg.choose(r->cfg.choose_ctx, node, k, in_port, cands, c);
    }
    }
    return ARB_ROUTE_NONE;
}

uint32_t arb_route_next(const arb_route *r, uint32_t node, const arb_route_key *key,
                        uint32_t in_port)
{
    if (!r || !key || node >= r->n_nodes || key->dst >= r->n_hosts || key->src >= r->n_hosts ||
        node == key->dst)
        return ARB_ROUTE_NONE;
    uint32_t p = route_next_fast(r, node, key, in_port);
    /* an adaptive chooser may return anything: only a port of this node is a route */
    if (p != ARB_ROUTE_NONE && r->kind == ARB_ROUTE_ADAPTIVE) {
        const arb_node *n = &r->nodes[node];
        if (p < n->first_port || p >= n->first_port + n->n_down + n->n_up) return ARB_ROUTE_NONE;
    }
    return p;
}

int arb_route_path(const arb_route *r, const arb_route_key *key, uint32_t *ports, unsigned cap)
{
    if (!r || !key || key->src >= r->n_hosts || key->dst >= r->n_hosts || key->src == key->dst)
        return ARB_EINVAL;
    uint32_t node = key->src, in = ARB_TOPO_NONE;
    unsigned hops = 0;
    while (node != key->dst) {
        if (hops >= ARB_ROUTE_MAX_HOPS) return ARB_ENOENT;
        uint32_t p = arb_route_next(r, node, key, in);
        if (p == ARB_ROUTE_NONE) return ARB_ENOENT;
        if (hops >= cap) return ARB_ENOSPC;
        ports[hops++] = p;
        in = r->ports[p].peer_port;
        node = r->ports[p].peer;
    }
    return (int)hops;
}

/* ------------------------------------------------------------------ */
/* Tables that depend on failures                                       */
/* ------------------------------------------------------------------ */

/* The up/down distance from every switch to every leaf (updown, dmodc). */
static int build_costs(arb_route *r)
{
    uint32_t n_sw = r->n_nodes - r->first_switch;
    size_t cells = (size_t)n_sw * r->n_leaves;
    if (!r->cost) {
        r->cost = arb_malloc(cells ? cells : 1);
        if (!r->cost) return ARB_ENOMEM;
    }
    memset(r->cost, COST_INF, cells);
    uint32_t *frontier = arb_malloc(sizeof *frontier * (n_sw ? n_sw : 1));
    uint32_t *next = arb_malloc(sizeof *next * (n_sw ? n_sw : 1));
    if (!frontier || !next) {
        arb_free(frontier);
        arb_free(next);
        return ARB_ENOMEM;
    }
    for (uint32_t li = 0; li < r->n_leaves; li++) {
        uint8_t *row_base = r->cost + li; /* cell of switch s: row_base[(s - first) * n_leaves] */
#define CELL(s) row_base[(size_t)((s)-r->first_switch) * r->n_leaves]
        uint32_t leaf = r->first_switch + li;
        if (r->nodes[leaf].failed) continue;
        /* down-reach: the ancestors of the leaf joined to it by live links */
        CELL(leaf) = 0;
        size_t nf = 1;
        frontier[0] = leaf;
        while (nf) {
            size_t nn = 0;
            for (size_t i = 0; i < nf; i++) {
                const arb_node *x = &r->nodes[frontier[i]];
                for (unsigned q = 0; q < x->n_up; q++) {
                    const arb_port *p = &r->ports[x->first_up + q];
                    if (p->failed || r->nodes[p->peer].failed) continue;
                    if (CELL(p->peer) != COST_INF) continue;
                    CELL(p->peer) = (uint8_t)(r->nodes[p->peer].level - 1);
                    next[nn++] = p->peer;
                }
            }
            memcpy(frontier, next, nn * sizeof *next);
            nf = nn;
        }
        /* the rest go up first: one more than their best parent, top down */
        for (unsigned l = r->h; l >= 1; l--) {
            uint32_t first = arb_topo_level_first(r->t, l), size = arb_topo_level_size(r->t, l);
            for (uint32_t s = first; s < first + size; s++) {
                if (CELL(s) != COST_INF || r->nodes[s].failed) continue;
                const arb_node *x = &r->nodes[s];
                unsigned best = COST_INF;
                for (unsigned q = 0; q < x->n_up; q++) {
                    const arb_port *p = &r->ports[x->first_up + q];
                    if (p->failed) continue;
                    unsigned c = CELL(p->peer);
                    if (c < COST_INF && c + 1 < best) best = c + 1;
                }
                if (best < COST_INF) CELL(s) = (uint8_t)best;
            }
        }
#undef CELL
    }
    arb_free(frontier);
    arb_free(next);
    return 0;
}

/* Distinct live parents of node n. */
static uint32_t live_parents(const arb_route *r, uint32_t node)
{
    const arb_node *n = &r->nodes[node];
    uint32_t cnt = 0;
    for (unsigned q = 0; q < n->n_up; q++) {
        const arb_port *p = &r->ports[n->first_up + q];
        if (p->failed) continue;
        int seen = 0;
        for (unsigned e = 0; e < q && !seen; e++) {
            const arb_port *o = &r->ports[n->first_up + e];
            seen = !o->failed && o->peer == p->peer;
        }
        if (!seen) cnt++;
    }
    return cnt;
}

/* Dmodc's dividers, bottom up (see route.h). Hosts divide by 1. */
static void build_dividers(arb_route *r)
{
    for (uint32_t n = 0; n < r->first_switch; n++)
        r->div[n] = 1;
    for (unsigned l = 1; l <= r->h; l++) {
        uint32_t first = arb_topo_level_first(r->t, l), size = arb_topo_level_size(r->t, l);
        for (uint32_t s = first; s < first + size; s++) {
            const arb_node *x = &r->nodes[s];
            uint64_t best = 0;
            for (unsigned dp = 0; dp < x->n_down; dp++) {
                const arb_port *p = &r->ports[x->first_port + dp];
                if (p->failed) continue;
                uint64_t v;
                if (l == 1)
                    v = live_parents(r, p->peer);
                else
                    v = r->div[p->peer] * live_parents(r, p->peer);
                if (v > best) best = v;
            }
            r->div[s] = best ? best : 1;
        }
    }
}

/* Which nodes have no failed port: there ECMP hashes over a whole port
 * range without building the candidate set. */
static int build_intact(arb_route *r)
{
    if (!r->intact) {
        r->intact = arb_malloc(r->n_nodes);
        if (!r->intact) return ARB_ENOMEM;
    }
    for (uint32_t i = 0; i < r->n_nodes; i++) {
        const arb_node *n = &r->nodes[i];
        uint32_t end = n->first_port + n->n_down + n->n_up;
        uint8_t ok = 1;
        for (uint32_t pt = n->first_port; pt < end && ok; pt++)
            ok = !r->ports[pt].failed;
        r->intact[i] = ok;
    }
    r->intact_gen = arb_topo_failure_gen(r->t);
    return 0;
}

int arb_route_refresh(arb_route *r)
{
    if (!r) return ARB_EINVAL;
    int irc = build_intact(r);
    if (irc < 0) return irc;
    if (r->kind == ARB_ROUTE_UPDOWN || r->kind == ARB_ROUTE_DMODC) {
        int rc = build_costs(r);
        if (rc < 0) return rc;
    }
    if (r->kind == ARB_ROUTE_DMODC) build_dividers(r);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Construction                                                         */
/* ------------------------------------------------------------------ */

static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+' || *s == ' ') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

/* rnca's balanced random maps, one per level 0..h-1. */
static int build_rnca(arb_route *r, uint64_t seed)
{
    arb_rng rng;
    arb_rng_seed(&rng, seed);
    for (unsigned l = 0; l < r->h; l++) {
        uint64_t len = ((uint64_t)r->n_hosts + r->W[l] - 1) / r->W[l];
        uint32_t up = r->U[l];
        r->rmap[l] = arb_malloc(sizeof *r->rmap[l] * (size_t)len);
        if (!r->rmap[l]) return ARB_ENOMEM;
        for (uint64_t i = 0; i < len; i++)
            r->rmap[l][i] = (uint16_t)(i % up);
        for (uint64_t i = len; i > 1; i--) { /* Fisher-Yates */
            uint64_t j = arb_rng_below(&rng, i);
            uint16_t t = r->rmap[l][i - 1];
            r->rmap[l][i - 1] = r->rmap[l][j];
            r->rmap[l][j] = t;
        }
    }
    return 0;
}

int arb_route_new(arb_route **out, const arb_topo *t, const char *spec, const arb_route_config *cfg,
                  char *err, size_t errlen)
{
    if (out) *out = NULL;
    if (!out || !t || !spec) return arb_errf(err, errlen, ARB_EINVAL, "routing: NULL argument");
    const arb_pgft *g = arb_topo_pgft(t);
    if (!g) return arb_errf(err, errlen, ARB_EINVAL, "routing: the topology is not a PGFT");

    char name[32];
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *opt = colon ? colon + 1 : NULL;
    if (nlen == 0 || nlen >= sizeof name)
        return arb_errf(err, errlen, ARB_EPARSE, "routing: '%s' is not an engine name", spec);
    memcpy(name, spec, nlen);
    name[nlen] = '\0';
    int kind = -1;
    for (int i = 0; i < ARB_ROUTE_KIND_COUNT; i++)
        if (strcmp(name, kind_names[i]) == 0) kind = i;
    if (kind < 0)
        return arb_errf(
            err, errlen, ARB_EPARSE,
            "routing: unknown engine '%s' (dmodk, smodk, rnca[:SEED], pinning, "
            "table[:PATH], updown, dmodc, ecmp[:polarized], eecmp[:polarized], adaptive)",
            name);

    arb_route_config c = cfg ? *cfg : arb_route_config_default();
    int polarized = 0;
    uint64_t rnca_seed = 1;
    switch (kind) {
    case ARB_ROUTE_RNCA:
        if (opt && parse_u64(opt, &rnca_seed) < 0)
            return arb_errf(err, errlen, ARB_EPARSE, "routing: rnca seed '%s' is not a number",
                            opt);
        break;
    case ARB_ROUTE_ECMP:
    case ARB_ROUTE_EECMP:
        if (opt) {
            if (strcmp(opt, "polarized") != 0)
                return arb_errf(err, errlen, ARB_EPARSE,
                                "routing: %s option '%s' is not 'polarized'", name, opt);
            polarized = 1;
        }
        break;
    case ARB_ROUTE_TABLE:
        if (opt && !*opt)
            return arb_errf(err, errlen, ARB_EPARSE, "routing: table: empty file name");
        break;
    default:
        if (opt) return arb_errf(err, errlen, ARB_EPARSE, "routing: %s takes no option", name);
    }
    if (kind == ARB_ROUTE_ADAPTIVE && !c.choose)
        return arb_errf(err, errlen, ARB_EINVAL, "routing: adaptive needs a chooser (cfg->choose)");

    arb_route *r = arb_calloc(1, sizeof *r);
    if (!r) return arb_errf(err, errlen, ARB_ENOMEM, "routing: out of memory");
    r->t = t;
    r->g = g;
    r->nodes = arb_topo_nodes(t);
    r->ports = arb_topo_ports(t);
    r->n_nodes = arb_topo_n_nodes(t);
    r->n_hosts = arb_topo_n_hosts(t);
    r->h = g->h;
    r->kind = (arb_route_kind)kind;
    r->cfg = c;
    r->seed = c.seed;
    r->first_switch = arb_topo_level_first(t, 1);
    r->n_leaves = arb_topo_level_size(t, 1);
    for (unsigned l = 0; l <= g->h; l++) {
        r->W[l] = g->W[l];
        r->M[l] = g->M[l];
        r->m[l] = g->m[l];
        r->w[l] = g->w[l];
        r->p[l] = g->p[l];
        r->U[l] = l < g->h ? g->w[l + 1] * g->p[l + 1] : 0;
    }
    if (polarized)
        snprintf(r->spec, sizeof r->spec, "%s:polarized", name);
    else if (kind == ARB_ROUTE_RNCA)
        snprintf(r->spec, sizeof r->spec, "rnca:%llu", (unsigned long long)rnca_seed);
    else if (kind == ARB_ROUTE_TABLE && opt)
        snprintf(r->spec, sizeof r->spec, "table:%.50s", opt);
    else
        snprintf(r->spec, sizeof r->spec, "%s", name);

    int rc = 0;
    /* every engine may fall back to ECMP, so all keep seeds (8 bytes a node) */
    if (!polarized) {
        r->sw_seed = arb_malloc(sizeof *r->sw_seed * r->n_nodes);
        if (!r->sw_seed) rc = ARB_ENOMEM;
    }
    if (rc == 0) arb_route_reseed(r, r->seed);
    if (rc == 0 && kind == ARB_ROUTE_RNCA) rc = build_rnca(r, rnca_seed);
    if (rc == 0 && kind == ARB_ROUTE_DMODC) {
        r->div = arb_malloc(sizeof *r->div * r->n_nodes);
        if (!r->div) rc = ARB_ENOMEM;
    }
    if (rc == 0) rc = arb_route_refresh(r);
    if (rc < 0) {
        arb_route_free(r);
        return arb_errf(err, errlen, rc, "routing: out of memory");
    }
    if (kind == ARB_ROUTE_TABLE && opt) {
        rc = route_table_load(r, opt, err, errlen);
        if (rc < 0) {
            arb_route_free(r);
            return rc;
        }
    }
    *out = r;
    return 0;
}

void arb_route_free(arb_route *r)
{
    if (!r) return;
    for (unsigned l = 0; l < ARB_TOPO_MAX_HEIGHT; l++)
        arb_free(r->rmap[l]);
    arb_free(r->sw_seed);
    arb_free(r->cost);
    arb_free(r->div);
    arb_free(r->intact);
    arb_free(r->entries);
    arb_free(r);
}

arb_route_kind arb_route_get_kind(const arb_route *r)
{
    return r->kind;
}

const char *arb_route_spec(const arb_route *r)
{
    return r->spec;
}

int arb_route_is_hashed(const arb_route *r)
{
    return r->kind == ARB_ROUTE_ECMP || r->kind == ARB_ROUTE_EECMP;
}
