/*
 * The planner (plan.h): channels per collective, one tree per (channel,
 * subchannel) as the union of the ranks' up paths to its root, the
 * aggregating switches, replication sets and fan-in vectors.
 */
#include "arbor/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const coll_names[ARB_COLL_COUNT] = {"allreduce", "reduce",    "reducescatter",
                                                       "broadcast", "allgather", "barrier"};

const char *arb_coll_name(int coll)
{
    return coll >= 0 && coll < ARB_COLL_COUNT ? coll_names[coll] : NULL;
}

int arb_coll_parse(const char *name)
{
    if (!name) return ARB_ENOENT;
    for (int i = 0; i < ARB_COLL_COUNT; i++)
        if (strcasecmp(name, coll_names[i]) == 0) return i;
    return ARB_ENOENT;
}

void arb_plan_config_default(arb_plan_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->coll = ARB_COLL_ALLREDUCE;
    cfg->dtype = ARB_DTYPE_F32;
    cfg->subchannels = 1;
}

void arb_plan_free(arb_plan *p)
{
    if (!p) return;
    const arb_mem *mem = p->cfg.mem;
    arb_mem_free(mem, p->ranks);
    arb_mem_free(mem, p->channels);
    arb_mem_free(mem, p->members);
    arb_mem_free(mem, p->trees);
    arb_mem_free(mem, p->entries);
    arb_mem_free(mem, p->child_ports);
    arb_mem_free(mem, p->fanin);
    arb_mem_free(mem, p->depth);
    arb_mem_free(mem, p);
}

/* Growable arrays. */
static int grow(const arb_mem *mem, void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return 0;
    uint32_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    void *n = arb_mem_realloc(mem, *arr, (size_t)ncap * elem);
    if (!n) return ARB_ENOMEM;
    *arr = n;
    *cap = ncap;
    return 0;
}

/* Per-tree scratch: the path of one host up to the root. */
struct step {
    uint32_t node, up; /* node, and the port it leaves on toward the root */
};

struct build {
    const arb_topo *t;
    const arb_pgft *g;
    const arb_node *nodes;
    const arb_port *ports;
    arb_plan *p;
    uint32_t cap_entries, cap_children, cap_pairs;
    uint32_t *entry_of; /* node -> entry index in this tree, ARB_PLAN_NONE */
    uint32_t *pairs;    /* (entry, child port) pairs of this tree, flattened */
    uint32_t n_pairs;
    char *err;
    size_t errlen;
};

/* Walk host h up to level L toward root digits t. Returns the step count,
 * or ARB_ENOENT. */
static int walk_up(struct build *b, uint32_t h, unsigned L, uint32_t t, struct step *path)
{
    uint32_t n = h;
    for (unsigned l = 0; l < L; l++) {
        const arb_node *nd = &b->nodes[n];
        uint32_t w = b->g->w[l + 1], par = b->g->p[l + 1];
        uint32_t td = (t / b->g->W[l]) % w;
        uint32_t port = ARB_PLAN_NONE;
        for (uint32_t k = 0; k < par; k++) {
            uint32_t q = td + w * k;
            if (q >= nd->n_up) break;
            if (!b->ports[nd->first_up + q].failed) {
                port = nd->first_up + q;
                break;
            }
        }
        if (port == ARB_PLAN_NONE) return ARB_ENOENT;
        path[l].node = n;
        path[l].up = port;
        n = b->ports[port].peer;
    }
    path[L].node = n;
    path[L].up = ARB_PLAN_NONE;
    return (int)L + 1;
}

static uint32_t entry_for(struct build *b, uint32_t node, int *rc)
{
    arb_plan *p = b->p;
    if (b->entry_of[node] != ARB_PLAN_NONE) return b->entry_of[node];
    if (grow(b->p->cfg.mem, (void **)&p->entries, &b->cap_entries, p->n_entries + 1,
             sizeof *p->entries) < 0) {
        *rc = ARB_ENOMEM;
        return ARB_PLAN_NONE;
    }
    arb_plan_entry *e = &p->entries[p->n_entries];
    memset(e, 0, sizeof *e);
    e->node = node;
    e->up_port = ARB_PLAN_NONE;
    b->entry_of[node] = p->n_entries;
    return p->n_entries++;
}

static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Build tree `ti` (channel c, subchannel s). */
static int build_tree(struct build *b, uint32_t ti, uint32_t c, uint32_t s, unsigned L,
                      uint32_t group_key)
{
    arb_plan *p = b->p;
    const arb_plan_channel *ch = &p->channels[c];
    arb_plan_tree *tr = &p->trees[ti];
    uint32_t nsub = p->cfg.subchannels;
    uint32_t t = (uint32_t)(((uint64_t)c + s + p->cfg.root_offset) % b->g->W[L]);
    tr->channel = c;
    tr->subchannel = s;
    tr->root = arb_topo_node_id(b->t, L, t + b->g->W[L] * group_key);
    tr->first_entry = p->n_entries;
    tr->max_depth = 0;
    b->n_pairs = 0;
    struct step path[ARB_TOPO_MAX_HEIGHT + 1];
    int rc = 0;
    /* the responder's path first (up ports only), then the members' */
    for (uint32_t k = 0; k <= ch->n_members; k++) {
        uint32_t host =
            k == 0 ? ch->responder_host : p->ranks[p->members[ch->first_member + k - 1]];
        int n = walk_up(b, host, L, t, path);
        if (n < 0)
            return arb_errf(b->err, b->errlen, ARB_ENOENT,
                            "no live path from host %u to the root of channel %u subchannel %u",
                            host, c, s);
        uint32_t prev = ARB_PLAN_NONE;
        for (int i = n - 1; i >= 0; i--) { /* root first */
            uint32_t ei = entry_for(b, path[i].node, &rc);
            if (rc < 0) return rc;
            arb_plan_entry *e = &p->entries[ei];
            e->up_port = path[i].up;
            if (k > 0) {
                if (e->gathers < 255) e->gathers++;
                if (prev != ARB_PLAN_NONE) {
                    if (grow(b->p->cfg.mem, (void **)&b->pairs, &b->cap_pairs, 2 * (b->n_pairs + 1),
                             sizeof *b->pairs) < 0)
                        return ARB_ENOMEM;
                    b->pairs[2 * b->n_pairs] = prev;
                    b->pairs[2 * b->n_pairs + 1] = b->ports[path[i].up].peer_port;
                    b->n_pairs++;
                }
            }
            prev = ei;
        }
    }
    tr->n_entries = p->n_entries - tr->first_entry;
    /* replication sets: distinct child ports per entry */
    qsort(b->pairs, b->n_pairs, 2 * sizeof *b->pairs, cmp_pair);
    for (uint32_t i = 0; i < b->n_pairs; i++) {
        if (i > 0 && b->pairs[2 * i] == b->pairs[2 * i - 2] &&
            b->pairs[2 * i + 1] == b->pairs[2 * i - 1])
            continue;
        arb_plan_entry *e = &p->entries[b->pairs[2 * i]];
        if (e->n_children == 0) e->first_child = p->n_child_ports;
        if (grow(b->p->cfg.mem, (void **)&p->child_ports, &b->cap_children, p->n_child_ports + 1,
                 sizeof *p->child_ports) < 0)
            return ARB_ENOMEM;
        p->child_ports[p->n_child_ports++] = b->pairs[2 * i + 1];
        e->n_children++;
    }
    /* aggregating switches */
    uint32_t mask = p->cfg.agg_levels;
    for (uint32_t i = tr->first_entry; i < p->n_entries; i++) {
        arb_plan_entry *e = &p->entries[i];
        unsigned lvl = b->nodes[e->node].level;
        if (b->nodes[e->node].kind != ARB_NODE_SWITCH) continue;
        int in_mask = mask == 0 || (lvl < 32 && (mask >> lvl) & 1);
        e->aggregate = e->node == tr->root || (in_mask && e->gathers >= 2);
    }
    /* fan-in vectors: each member's aggregating tiers, root first */
    for (uint32_t m = 0; m < ch->n_members; m++) {
        uint32_t host = p->ranks[p->members[ch->first_member + m]];
        int n = walk_up(b, host, L, t, path);
        size_t row = ((size_t)(ch->first_member + m) * nsub + s);
        uint8_t *f = &p->fanin[row * 3];
        /* A slot counts one contribution per port (docs/protocol.md section 5's port bitmap), so a
         * switch that merges contributions of several branches into its up
         * port must aggregate them: otherwise the tier above drops all but
         * one as duplicates. */
        uint32_t carried = 1; /* requesters the contribution on this path stands for */
        for (int i = 1; i < n; i++) {
            const arb_plan_entry *e = &p->entries[b->entry_of[path[i].node]];
            if (e->aggregate) {
                carried = e->gathers;
            } else if (e->gathers > carried) {
                return arb_errf(b->err, b->errlen, ARB_EINVAL,
                                "channel %u subchannel %u: level-%u switch %u gathers %u "
                                "requesters but does not aggregate, and the tier above counts one "
                                "contribution per port (add level %u to agg_levels)",
                                c, s, (unsigned)b->nodes[path[i].node].level, path[i].node,
                                e->gathers, (unsigned)b->nodes[path[i].node].level);
            }
        }
        unsigned d = 0;
        for (int i = n - 1; i >= 0; i--) {
            const arb_plan_entry *e = &p->entries[b->entry_of[path[i].node]];
            if (!e->aggregate) continue;
            if (d == ARB_MAX_DEPTH)
                return arb_errf(b->err, b->errlen, ARB_ERANGE,
                                "channel %u subchannel %u: host %u's path has more than %d "
                                "aggregating tiers (restrict agg_levels)",
                                c, s, host, ARB_MAX_DEPTH);
            f[d++] = e->gathers;
        }
        for (unsigned i = d; i < ARB_MAX_DEPTH; i++)
            f[i] = 1;
        p->depth[row] = (uint8_t)d;
        if (d > tr->max_depth) tr->max_depth = (uint8_t)d;
    }
    for (uint32_t i = tr->first_entry; i < p->n_entries; i++)
        b->entry_of[p->entries[i].node] = ARB_PLAN_NONE;
    return 0;
}

static int make_channels(arb_plan *p, char *err, size_t errlen)
{
    const arb_plan_config *c = &p->cfg;
    uint32_t N = c->n_ranks;
    int one = c->coll == ARB_COLL_REDUCE || c->coll == ARB_COLL_BROADCAST;
    p->n_channels = one ? 1 : N;
    p->n_members = p->n_channels * (N - 1);
    p->channels = arb_mem_calloc(c->mem, p->n_channels, sizeof *p->channels);
    p->members = arb_mem_calloc(c->mem, p->n_members, sizeof *p->members);
    if (!p->channels || !p->members) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    size_t es = arb_dtype_size(c->dtype);
    uint64_t E = c->coll == ARB_COLL_BARRIER ? 0 : c->bytes / es;
    uint32_t mi = 0;
    for (uint32_t ch = 0; ch < p->n_channels; ch++) {
        arb_plan_channel *x = &p->channels[ch];
        x->responder = one ? c->root : ch;
        x->responder_host = p->ranks[x->responder];
        x->first_member = mi;
        x->n_members = N - 1;
        for (uint32_t r = 0; r < N; r++)
            if (r != x->responder) p->members[mi++] = r;
        if (one) {
            x->lo = 0;
            x->hi = E * es;
        } else {
            x->lo = E * ch / N * es;
            x->hi = E * (ch + 1) / N * es;
        }
        x->first_tree = ch * c->subchannels;
        switch (c->coll) {
        case ARB_COLL_ALLREDUCE:
            x->kind = ARB_EP_PULL_RESULT;
            x->op = ARB_OP_SUM;
            break;
        case ARB_COLL_REDUCE:
        case ARB_COLL_REDUCESCATTER:
            x->kind = ARB_EP_PULL_COMPLETION;
            x->op = ARB_OP_SUM;
            break;
        case ARB_COLL_BROADCAST:
        case ARB_COLL_ALLGATHER:
            x->kind = ARB_EP_PUSH;
            x->op = ARB_OP_NOP;
            break;
        default:
            x->kind = ARB_EP_BARRIER;
            x->op = ARB_OP_NOP;
            break;
        }
    }
    return 0;
}

int arb_plan_new(arb_plan **out, const arb_topo *t, const arb_plan_config *cfg, char *err,
                 size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return arb_errf(err, errlen, ARB_EINVAL, "plan: no output");
    *out = NULL;
    if (!t || !cfg || !cfg->ranks) return arb_errf(err, errlen, ARB_EINVAL, "plan: NULL argument");
    const arb_pgft *g = arb_topo_pgft(t);
    if (!g) return arb_errf(err, errlen, ARB_EINVAL, "plan: the topology is not a PGFT");
    if ((unsigned)cfg->coll >= ARB_COLL_COUNT)
        return arb_errf(err, errlen, ARB_EINVAL, "plan: collective %d is not one of the six",
                        (int)cfg->coll);
    if (cfg->n_ranks < 2 || cfg->n_ranks > ARB_PLAN_MAX_RANKS)
        return arb_errf(err, errlen, ARB_EINVAL, "plan: %u ranks; a group has 2..%d", cfg->n_ranks,
                        ARB_PLAN_MAX_RANKS);
    if (arb_dtype_size(cfg->dtype) == 0)
        return arb_errf(err, errlen, ARB_EINVAL, "plan: dtype %d is not one of the six",
                        (int)cfg->dtype);
    if (cfg->subchannels < 1 || cfg->subchannels > ARB_EP_MAX_SUBCHANNELS)
        return arb_errf(err, errlen, ARB_EINVAL, "plan: %u subchannels; 1..%d", cfg->subchannels,
                        ARB_EP_MAX_SUBCHANNELS);
    if (cfg->header != 0 && cfg->header != 16 && cfg->header != 20)
        return arb_errf(err, errlen, ARB_EINVAL, "plan: header %u; 0 (auto), 16 or 20",
                        cfg->header);
    if ((cfg->coll == ARB_COLL_REDUCE || cfg->coll == ARB_COLL_BROADCAST) &&
        cfg->root >= cfg->n_ranks)
        return arb_errf(err, errlen, ARB_EINVAL, "plan: root rank %u of %u ranks", cfg->root,
                        cfg->n_ranks);
    size_t es = arb_dtype_size(cfg->dtype);
    if (cfg->coll != ARB_COLL_BARRIER && cfg->bytes > ARB_PLAN_MAX_BYTES)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "plan: %llu bytes is above the largest message, 2^50 bytes (1 PiB)",
                        (unsigned long long)cfg->bytes);
    if (cfg->coll != ARB_COLL_BARRIER && cfg->bytes % es)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "plan: %llu bytes is not a whole number of %s elements (%zu B each)",
                        (unsigned long long)cfg->bytes, arb_dtype_name(cfg->dtype), es);
    uint32_t H = arb_topo_n_hosts(t);
    const arb_node *nodes = arb_topo_nodes(t);
    for (uint32_t r = 0; r < cfg->n_ranks; r++) {
        if (cfg->ranks[r] >= H)
            return arb_errf(err, errlen, ARB_EINVAL,
                            "plan: rank %u is on host %u; the fabric has %u", r, cfg->ranks[r], H);
        for (uint32_t q = 0; q < r; q++)
            if (cfg->ranks[q] == cfg->ranks[r])
                return arb_errf(err, errlen, ARB_EINVAL,
                                "plan: ranks %u and %u are both on host %u", q, r, cfg->ranks[r]);
    }
    /* the root level: the lowest switch level above every host of the group */
    unsigned L = 1;
    while (L < g->h) {
        uint32_t k0 = cfg->ranks[0] / g->M[L];
        int same = 1;
        for (uint32_t r = 1; r < cfg->n_ranks && same; r++)
            same = cfg->ranks[r] / g->M[L] == k0;
        if (same) break;
        L++;
    }
    uint32_t group_key = cfg->ranks[0] / g->M[L];

    const arb_mem *mem = cfg->mem;
    arb_plan *p = arb_mem_calloc(mem, 1, sizeof *p);
    if (!p) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    p->cfg = *cfg;
    p->ranks = arb_mem_malloc(mem, cfg->n_ranks * sizeof *p->ranks);
    if (!p->ranks) {
        arb_plan_free(p);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    memcpy(p->ranks, cfg->ranks, cfg->n_ranks * sizeof *p->ranks);
    p->cfg.ranks = p->ranks;
    p->root_level = L;
    int rc = make_channels(p, err, errlen);
    struct build b;
    memset(&b, 0, sizeof b);
    if (rc == 0) {
        p->n_trees = p->n_channels * cfg->subchannels;
        p->trees = arb_mem_calloc(mem, p->n_trees, sizeof *p->trees);
        size_t rows = (size_t)p->n_members * cfg->subchannels;
        p->fanin = arb_mem_calloc(mem, rows * 3 + 3, 1);
        p->depth = arb_mem_calloc(mem, rows + 1, 1);
        b.entry_of = arb_mem_malloc(mem, arb_topo_n_nodes(t) * sizeof *b.entry_of);
        if (!p->trees || !p->fanin || !p->depth || !b.entry_of)
            rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        for (uint32_t i = 0; i < arb_topo_n_nodes(t); i++)
            b.entry_of[i] = ARB_PLAN_NONE;
        b.t = t;
        b.g = g;
        b.nodes = nodes;
        b.ports = arb_topo_ports(t);
        b.p = p;
        b.err = err;
        b.errlen = errlen;
        for (uint32_t c = 0; c < p->n_channels && rc == 0; c++)
            for (uint32_t s = 0; s < cfg->subchannels && rc == 0; s++)
                rc = build_tree(&b, c * cfg->subchannels + s, c, s, L, group_key);
        if (rc == ARB_ENOMEM) /* a table that could not grow says nothing itself */
            rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    arb_mem_free(mem, b.entry_of);
    arb_mem_free(mem, b.pairs);
    if (rc == 0) {
        unsigned maxd = 0;
        for (uint32_t i = 0; i < p->n_trees; i++)
            if (p->trees[i].max_depth > maxd) maxd = p->trees[i].max_depth;
        if (cfg->header == 16 && maxd > 1)
            rc = arb_errf(
                err, errlen, ARB_ERANGE,
                "plan: a path has %u aggregating tiers; a 16 B header carries 1 (use 20 or "
                "restrict agg_levels)",
                maxd);
        p->ext = cfg->header == 20 || maxd > 1;
        p->hdr_len = p->ext ? 20 : 16;
    }
    if (rc < 0) {
        arb_plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

const arb_plan_entry *arb_plan_find(const arb_plan *p, uint32_t tree, uint32_t node)
{
    if (!p || tree >= p->n_trees) return NULL;
    const arb_plan_tree *tr = &p->trees[tree];
    for (uint32_t i = 0; i < tr->n_entries; i++)
        if (p->entries[tr->first_entry + i].node == node) return &p->entries[tr->first_entry + i];
    return NULL;
}

const uint8_t *arb_plan_fanin(const arb_plan *p, uint32_t c, uint32_t m, uint32_t s)
{
    if (!p || c >= p->n_channels || m >= p->channels[c].n_members || s >= p->cfg.subchannels)
        return NULL;
    return &p->fanin[((size_t)(p->channels[c].first_member + m) * p->cfg.subchannels + s) * 3];
}
