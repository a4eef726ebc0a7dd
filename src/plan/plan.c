/*
 * The planner (plan.h): channels per collective, one tree per (channel,
 * subchannel) as the union of the ranks' up paths to its root (the
 * fabric's, arb_plan_fabric), the aggregating switches, replication sets
 * and fan-in vectors.
 */
#include "arbor/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A plan: plain arrays owned by the plan. */
struct arb_plan {
    arb_plan_config cfg;        /* as given, ranks copied */
    uint32_t *ranks;            /* the copy of cfg.ranks (cfg.ranks points here) */
    uint32_t n_channels;        /* entries of channels */
    arb_plan_channel *channels; /* the channels */
    uint32_t n_members;         /* entries of members */
    uint32_t *members;          /* ranks */
    uint32_t n_trees;           /* entries of trees */
    arb_plan_tree *trees;       /* the trees, channel by channel */
    uint32_t n_entries;         /* entries of entries */
    arb_plan_entry *entries;    /* the trees' forwarding state */
    uint32_t n_child_ports;     /* entries of child_ports */
    uint32_t *child_ports;      /* replication sets (global ports) */
    /* fanin[((first_member + m) * subchannels + s) * 3 + i]: member m of
     * its channel on subchannel s, tier i (root first); 1 above its depth.
     * So the rows of one member start at fanin + (first_member + m) *
     * subchannels * 3, the table arb_requester_config.fanin takes. */
    uint8_t *fanin;
    uint8_t *depth;      /* depth[(first_member + m) * subchannels + s] */
    uint32_t root_level; /* L: the level of the trees' roots */
    uint32_t hdr_len;    /* 16 or 20 */
    /* arb_plan_find's index: node_row[node] is the node's row (ARB_PLAN_NONE
     * for a node in no tree), row_entry[row * n_trees + tree] its entry in
     * that tree (ARB_PLAN_NONE). Rows are the nodes some tree holds, so the
     * index is n_nodes + (nodes in the plan) x n_trees words. */
    uint32_t n_nodes;    /* the fabric's nodes (node_row's length) */
    uint32_t *node_row;  /* node -> row */
    uint32_t *row_entry; /* (row, tree) -> entry index */
};

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
    arb_mem_free(mem, p->node_row);
    arb_mem_free(mem, p->row_entry);
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

struct build {
    const arb_plan_fabric *f;
    arb_plan *p;
    uint32_t cap_entries, cap_children, cap_pairs;
    uint32_t *entry_of; /* node -> entry index in this tree, ARB_PLAN_NONE */
    uint32_t *pairs;    /* (entry, child port) pairs of this tree, flattened */
    uint32_t n_pairs;
    char *err;
    size_t errlen;
};

/* The fabric's path of host h up to candidate root r, checked. Returns the
 * hop count, ARB_ENOENT, or ARB_EINVAL for a path the planner cannot use. */
static int walk_up(struct build *b, uint32_t h, uint32_t r, arb_plan_hop *path, uint32_t c,
                   uint32_t s)
{
    int n = b->f->path(b->f->ctx, h, r, path);
    if (n == ARB_ENOENT)
        return arb_errf(b->err, b->errlen, ARB_ENOENT,
                        "no live path from host %u to the root of channel %u subchannel %u", h, c,
                        s);
    if (n < 1 || n > ARB_PLAN_MAX_HOPS)
        return arb_errf(b->err, b->errlen, ARB_EINVAL,
                        "plan: the fabric's path from host %u has %d hops; 1..%d", h, n,
                        ARB_PLAN_MAX_HOPS);
    for (int i = 0; i < n; i++)
        if (path[i].node >= b->f->n_nodes || (i < n - 1) != (path[i].up_port != ARB_PLAN_NONE))
            return arb_errf(b->err, b->errlen, ARB_EINVAL,
                            "plan: the fabric's path from host %u: hop %d names node %u of %u or "
                            "leaves the root",
                            h, i, path[i].node, b->f->n_nodes);
    return n;
}

static uint32_t entry_for(struct build *b, const arb_plan_hop *hop, int *rc)
{
    arb_plan *p = b->p;
    uint32_t node = hop->node;
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
    e->level = hop->level;
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
static int build_tree(struct build *b, uint32_t ti, uint32_t c, uint32_t s)
{
    arb_plan *p = b->p;
    const arb_plan_channel *ch = &p->channels[c];
    arb_plan_tree *tr = &p->trees[ti];
    uint32_t nsub = p->cfg.subchannels;
    uint32_t t = (uint32_t)(((uint64_t)c + s + p->cfg.root_offset) % b->f->n_roots);
    tr->channel = c;
    tr->subchannel = s;
    tr->root = ARB_PLAN_NONE;
    tr->first_entry = p->n_entries;
    tr->max_depth = 0;
    b->n_pairs = 0;
    arb_plan_hop path[ARB_PLAN_MAX_HOPS];
    int rc = 0;
    /* the responder's path first (up ports only), then the members' */
    for (uint32_t k = 0; k <= ch->n_members; k++) {
        uint32_t host =
            k == 0 ? ch->responder_host : p->ranks[p->members[ch->first_member + k - 1]];
        int n = walk_up(b, host, t, path, c, s);
        if (n < 0) return n;
        if (k == 0) tr->root = path[n - 1].node;
        if (path[n - 1].node != tr->root)
            return arb_errf(b->err, b->errlen, ARB_EINVAL,
                            "plan: the fabric's paths of channel %u subchannel %u end at nodes %u "
                            "and %u",
                            c, s, tr->root, path[n - 1].node);
        uint32_t prev = ARB_PLAN_NONE;
        for (int i = n - 1; i >= 0; i--) { /* root first */
            uint32_t ei = entry_for(b, &path[i], &rc);
            if (rc < 0) return rc;
            arb_plan_entry *e = &p->entries[ei];
            e->up_port = path[i].up_port;
            if (k > 0) {
                if (e->gathers < 255) e->gathers++;
                if (prev != ARB_PLAN_NONE) {
                    if (grow(b->p->cfg.mem, (void **)&b->pairs, &b->cap_pairs, 2 * (b->n_pairs + 1),
                             sizeof *b->pairs) < 0)
                        return ARB_ENOMEM;
                    b->pairs[2 * b->n_pairs] = prev;
                    b->pairs[2 * b->n_pairs + 1] = path[i].up_peer;
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
        unsigned lvl = e->level;
        if (lvl == 0) continue; /* a host */
        int in_mask = mask == 0 || (lvl < 32 && (mask >> lvl) & 1);
        e->aggregate = e->node == tr->root || (in_mask && e->gathers >= 2);
    }
    /* fan-in vectors: each member's aggregating tiers, root first */
    for (uint32_t m = 0; m < ch->n_members; m++) {
        uint32_t host = p->ranks[p->members[ch->first_member + m]];
        int n = walk_up(b, host, t, path, c, s);
        if (n < 0) return n;
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
                                c, s, (unsigned)e->level, path[i].node, e->gathers,
                                (unsigned)e->level);
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

/* How many channels the collective has (plan.h): one for a rooted one;
 * with share_min, one for a Barrier and one per share_min bytes of an
 * AllReduce up to N; else N. */
static uint32_t channels_of(const arb_plan_config *c)
{
    uint32_t N = c->n_ranks;
    if (c->coll == ARB_COLL_REDUCE || c->coll == ARB_COLL_BROADCAST) return 1;
    if (c->share_min == 0) return N;
    if (c->coll == ARB_COLL_BARRIER) return 1;
    if (c->coll != ARB_COLL_ALLREDUCE) return N;
    uint64_t k = (c->bytes + c->share_min - 1) / c->share_min;
    return k < 1 ? 1 : k < N ? (uint32_t)k : N;
}

static int make_channels(arb_plan *p, char *err, size_t errlen)
{
    const arb_plan_config *c = &p->cfg;
    uint32_t N = c->n_ranks;
    int one = c->coll == ARB_COLL_REDUCE || c->coll == ARB_COLL_BROADCAST;
    p->n_channels = channels_of(c);
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
        x->lo = E * ch / p->n_channels * es;
        x->hi = E * (ch + 1) / p->n_channels * es;
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

/* arb_plan_find's index over the built trees: a row per node some tree
 * holds, in the order the entries first name them. */
static int make_index(arb_plan *p, uint32_t n_nodes, char *err, size_t errlen)
{
    const arb_mem *mem = p->cfg.mem;
    p->n_nodes = n_nodes;
    p->node_row = arb_mem_malloc(mem, (size_t)n_nodes * sizeof *p->node_row);
    if (!p->node_row) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < n_nodes; i++)
        p->node_row[i] = ARB_PLAN_NONE;
    uint32_t rows = 0;
    for (uint32_t i = 0; i < p->n_entries; i++)
        if (p->node_row[p->entries[i].node] == ARB_PLAN_NONE)
            p->node_row[p->entries[i].node] = rows++;
    size_t cells = (size_t)rows * p->n_trees;
    p->row_entry = arb_mem_malloc(mem, (cells ? cells : 1) * sizeof *p->row_entry);
    if (!p->row_entry) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    for (size_t i = 0; i < cells; i++)
        p->row_entry[i] = ARB_PLAN_NONE;
    for (uint32_t t = 0; t < p->n_trees; t++)
        for (uint32_t x = 0; x < p->trees[t].n_entries; x++) {
            uint32_t e = p->trees[t].first_entry + x;
            p->row_entry[(size_t)p->node_row[p->entries[e].node] * p->n_trees + t] = e;
        }
    return 0;
}

int arb_plan_new(arb_plan **out, const arb_plan_fabric *f, const arb_plan_config *cfg, char *err,
                 size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return arb_errf(err, errlen, ARB_EINVAL, "plan: no output");
    *out = NULL;
    if (!f || !cfg || !cfg->ranks) return arb_errf(err, errlen, ARB_EINVAL, "plan: NULL argument");
    if (!f->path || f->n_roots == 0 || f->n_hosts > f->n_nodes)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "plan: the fabric has no path function, no roots or more hosts than nodes");
    if ((unsigned)cfg->coll >= ARB_PLAN_COLL_COUNT)
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
    uint32_t H = f->n_hosts;
    for (uint32_t r = 0; r < cfg->n_ranks; r++) {
        if (cfg->ranks[r] >= H)
            return arb_errf(err, errlen, ARB_EINVAL,
                            "plan: rank %u is on host %u; the fabric has %u", r, cfg->ranks[r], H);
        for (uint32_t q = 0; q < r; q++)
            if (cfg->ranks[q] == cfg->ranks[r])
                return arb_errf(err, errlen, ARB_EINVAL,
                                "plan: ranks %u and %u are both on host %u", q, r, cfg->ranks[r]);
    }
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
    p->root_level = f->root_level;
    int rc = make_channels(p, err, errlen);
    struct build b;
    memset(&b, 0, sizeof b);
    if (rc == 0) {
        p->n_trees = p->n_channels * cfg->subchannels;
        p->trees = arb_mem_calloc(mem, p->n_trees, sizeof *p->trees);
        size_t rows = (size_t)p->n_members * cfg->subchannels;
        p->fanin = arb_mem_calloc(mem, rows * 3 + 3, 1);
        p->depth = arb_mem_calloc(mem, rows + 1, 1);
        b.entry_of = arb_mem_malloc(mem, (size_t)f->n_nodes * sizeof *b.entry_of);
        if (!p->trees || !p->fanin || !p->depth || !b.entry_of)
            rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        for (uint32_t i = 0; i < f->n_nodes; i++)
            b.entry_of[i] = ARB_PLAN_NONE;
        b.f = f;
        b.p = p;
        b.err = err;
        b.errlen = errlen;
        for (uint32_t c = 0; c < p->n_channels && rc == 0; c++)
            for (uint32_t s = 0; s < cfg->subchannels && rc == 0; s++)
                rc = build_tree(&b, c * cfg->subchannels + s, c, s);
        if (rc == ARB_ENOMEM) /* a table that could not grow says nothing itself */
            rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    arb_mem_free(mem, b.entry_of);
    arb_mem_free(mem, b.pairs);
    if (rc == 0) rc = make_index(p, f->n_nodes, err, errlen);
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
        p->hdr_len = cfg->header == 20 || maxd > 1 ? 20 : 16;
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
    if (!p || tree >= p->n_trees || node >= p->n_nodes) return NULL;
    uint32_t row = p->node_row[node];
    if (row == ARB_PLAN_NONE) return NULL;
    uint32_t e = p->row_entry[(size_t)row * p->n_trees + tree];
    return e == ARB_PLAN_NONE ? NULL : &p->entries[e];
}

const arb_plan_entry *arb_plan_find_sub(const arb_plan *p, uint32_t c, uint32_t s, uint32_t node)
{
    if (!p || c >= p->n_channels || s >= p->cfg.subchannels) return NULL;
    return arb_plan_find(p, p->channels[c].first_tree + s, node);
}

const uint8_t *arb_plan_fanin(const arb_plan *p, uint32_t c, uint32_t m, uint32_t s)
{
    if (!p || c >= p->n_channels || m >= p->channels[c].n_members || s >= p->cfg.subchannels)
        return NULL;
    return &p->fanin[((size_t)(p->channels[c].first_member + m) * p->cfg.subchannels + s) * 3];
}

unsigned arb_plan_depth(const arb_plan *p, uint32_t c, uint32_t m, uint32_t s)
{
    if (!p || c >= p->n_channels || m >= p->channels[c].n_members || s >= p->cfg.subchannels)
        return 0;
    return p->depth[(size_t)(p->channels[c].first_member + m) * p->cfg.subchannels + s];
}

const arb_plan_config *arb_plan_get_config(const arb_plan *p)
{
    return p ? &p->cfg : NULL;
}

uint32_t arb_plan_host(const arb_plan *p, uint32_t r)
{
    return p && r < p->cfg.n_ranks ? p->ranks[r] : ARB_PLAN_NONE;
}

uint32_t arb_plan_n_channels(const arb_plan *p)
{
    return p ? p->n_channels : 0;
}

const arb_plan_channel *arb_plan_get_channel(const arb_plan *p, uint32_t c)
{
    return p && c < p->n_channels ? &p->channels[c] : NULL;
}

uint32_t arb_plan_member(const arb_plan *p, uint32_t c, uint32_t m)
{
    if (!p || c >= p->n_channels || m >= p->channels[c].n_members) return ARB_PLAN_NONE;
    return p->members[p->channels[c].first_member + m];
}

uint32_t arb_plan_n_trees(const arb_plan *p)
{
    return p ? p->n_trees : 0;
}

const arb_plan_tree *arb_plan_get_tree(const arb_plan *p, uint32_t t)
{
    return p && t < p->n_trees ? &p->trees[t] : NULL;
}

uint32_t arb_plan_n_entries(const arb_plan *p)
{
    return p ? p->n_entries : 0;
}

const arb_plan_entry *arb_plan_get_entry(const arb_plan *p, uint32_t i)
{
    return p && i < p->n_entries ? &p->entries[i] : NULL;
}

const uint32_t *arb_plan_children(const arb_plan *p, const arb_plan_entry *e)
{
    if (!p || !e || e->n_children == 0) return NULL;
    return &p->child_ports[e->first_child];
}

uint32_t arb_plan_hdr_len(const arb_plan *p)
{
    return p ? p->hdr_len : 0;
}

uint32_t arb_plan_root_level(const arb_plan *p)
{
    return p ? p->root_level : 0;
}
