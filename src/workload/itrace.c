/*
 * Iteration traces: the model and the rules both readers share (the text
 * reader is itrace_text.c, Chakra's chakra.c; docs/workloads.md has the
 * grammar).
 */
#include "tr_int.h"

#include "base/file.h"

#include "arbor/topo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

/* ---- the model ------------------------------------------------------------ */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = arb_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int tr_new(arb_trace **out, const char *name, uint32_t n_ranks, int chakra)
{
    arb_trace *t = arb_calloc(1, sizeof *t);
    if (!t) return ARB_ENOMEM;
    t->chakra = chakra;
    t->name = dup_str(name ? name : "(trace)");
    t->n_ranks = n_ranks;
    t->rk = arb_calloc(n_ranks ? n_ranks : 1, sizeof *t->rk);
    if (!t->name || !t->rk) {
        arb_trace_free(t);
        return ARB_ENOMEM;
    }
    *out = t;
    return 0;
}

void arb_trace_free(arb_trace *t)
{
    if (!t) return;
    for (uint32_t r = 0; t->rk && r < t->n_ranks; r++) {
        arb_free(t->rk[r].nodes);
        arb_free(t->rk[r].raw);
        arb_free(t->rk[r].dep);
        arb_free(t->rk[r].rdep_off);
        arb_free(t->rk[r].rdep);
    }
    arb_free(t->rk);
    for (uint32_t g = 0; g < t->n_groups; g++) {
        arb_free(t->g[g].ranks);
        arb_free(t->g[g].name);
    }
    arb_free(t->g);
    arb_free(t->rank_off);
    arb_free(t->colls);
    arb_free(t->coll_nodes);
    arb_free(t->p2p);
    arb_free(t->name);
    arb_free(t);
}

uint32_t arb_trace_ranks(const arb_trace *t)
{
    return t->n_ranks;
}

uint64_t arb_trace_nodes(const arb_trace *t)
{
    uint64_t n = 0;
    for (uint32_t r = 0; r < t->n_ranks; r++)
        n += t->rk[r].n;
    return n;
}

struct tr_node *tr_add_node(arb_trace *t, uint32_t r)
{
    struct tr_rank *k = &t->rk[r];
    if (t->total >= TR_MAX_NODES) return NULL;
    if (k->n == k->cap) {
        uint32_t nc = k->cap ? k->cap * 2 : 16;
        struct tr_node *nn = arb_realloc(k->nodes, (size_t)nc * sizeof *nn);
        if (!nn) return NULL;
        k->nodes = nn;
        k->cap = nc;
    }
    struct tr_node *n = &k->nodes[k->n++];
    t->total++;
    memset(n, 0, sizeof *n);
    n->dep_off = k->n_raw;
    n->group = TR_NONE;
    n->match = TR_NONE;
    return n;
}

int tr_add_dep(arb_trace *t, uint32_t r, uint64_t id)
{
    struct tr_rank *k = &t->rk[r];
    if (k->n_raw == k->cap_raw) {
        if (k->cap_raw >= TR_MAX_NODES * 4u) return ARB_ENOMEM;
        uint32_t nc = k->cap_raw ? k->cap_raw * 2 : 16;
        uint64_t *nr = arb_realloc(k->raw, (size_t)nc * sizeof *nr);
        if (!nr) return ARB_ENOMEM;
        k->raw = nr;
        k->cap_raw = nc;
    }
    k->raw[k->n_raw++] = id;
    k->nodes[k->n - 1].n_deps++;
    return 0;
}

long tr_group(arb_trace *t, const uint32_t *ranks, uint32_t n, const char *name)
{
    for (uint32_t g = 0; g < t->n_groups; g++) {
        const struct tr_group *x = &t->g[g];
        if (name ? x->name && strcmp(x->name, name) == 0
                 : !x->name && x->n == n && memcmp(x->ranks, ranks, (size_t)n * sizeof *ranks) == 0)
            return g;
    }
    if (t->n_groups == t->cap_groups) {
        uint32_t nc = t->cap_groups ? t->cap_groups * 2 : 8;
        struct tr_group *ng = arb_realloc(t->g, nc * sizeof *ng);
        if (!ng) return ARB_ENOMEM;
        t->g = ng;
        t->cap_groups = nc;
    }
    struct tr_group *x = &t->g[t->n_groups];
    x->ranks = arb_malloc((n ? n : 1) * sizeof *x->ranks);
    x->name = name ? dup_str(name) : NULL;
    if (!x->ranks || (name && !x->name)) {
        arb_free(x->ranks);
        arb_free(x->name);
        return ARB_ENOMEM;
    }
    if (n) memcpy(x->ranks, ranks, (size_t)n * sizeof *ranks);
    x->n = n;
    return t->n_groups++;
}

void tr_where(const arb_trace *t, uint32_t r, uint32_t i, char *buf, size_t len)
{
    const struct tr_node *n = &t->rk[r].nodes[i];
    if (t->chakra)
        snprintf(buf, len, "%s.%u.et: node %llu (record %u)", t->name, r, (unsigned long long)n->id,
                 n->where);
    else
        snprintf(buf, len, "%s:%u", t->name, n->where);
}

/* ---- the shared rules ----------------------------------------------------- */

struct idx {
    uint64_t id;
    uint32_t i;
};

static int cmp_idx(const void *a, const void *b)
{
    const struct idx *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int node_fail(const arb_trace *t, uint32_t r, uint32_t i, char *err, size_t errlen,
                     const char *field, const char *rule)
{
    char where[600];
    tr_where(t, r, i, where, sizeof where);
    if (t->chakra) return arb_errf(err, errlen, ARB_EPARSE, "%s: %s", where, rule);
    return arb_errf(err, errlen, ARB_EPARSE, "%s: %s: %s", where, field, rule);
}

/* Ids unique, dependencies resolved to indices, no cycle; the dependents. */
static int resolve_rank(arb_trace *t, uint32_t r, char *err, size_t errlen)
{
    struct tr_rank *k = &t->rk[r];
    char rule[160];
    struct idx *ix = arb_malloc(((size_t)k->n + 1) * sizeof *ix);
    k->dep = arb_malloc(((size_t)k->n_raw + 1) * sizeof *k->dep);
    k->rdep_off = arb_calloc((size_t)k->n + 1, sizeof *k->rdep_off);
    k->rdep = arb_malloc(((size_t)k->n_raw + 1) * sizeof *k->rdep);
    uint32_t *indeg = arb_calloc((size_t)k->n + 1, sizeof *indeg);
    uint32_t *queue = arb_malloc(((size_t)k->n + 1) * sizeof *queue);
    int rc = 0;
    if (!ix || !k->dep || !k->rdep_off || !k->rdep || !indeg || !queue) {
        rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < k->n; i++) {
        ix[i].id = k->nodes[i].id;
        ix[i].i = i;
    }
    qsort(ix, k->n, sizeof *ix, cmp_idx);
    for (uint32_t i = 1; i < k->n; i++)
        if (ix[i].id == ix[i - 1].id) {
            snprintf(rule, sizeof rule, "node id %llu is used twice on rank %u",
                     (unsigned long long)ix[i].id, r);
            rc = node_fail(t, r, ix[i].i, err, errlen, "id", rule);
            goto out;
        }
    for (uint32_t i = 0; i < k->n; i++) {
        const struct tr_node *n = &k->nodes[i];
        for (uint32_t d = 0; d < n->n_deps; d++) {
            uint64_t id = k->raw[n->dep_off + d];
            uint32_t lo = 0, hi = k->n;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (ix[mid].id < id)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == k->n || ix[lo].id != id) {
                snprintf(rule, sizeof rule, "dependency %llu is not a node of rank %u",
                         (unsigned long long)id, r);
                rc = node_fail(t, r, i, err, errlen, "deps", rule);
                goto out;
            }
            if (ix[lo].i == i) {
                rc = node_fail(t, r, i, err, errlen, "deps", "a node cannot depend on itself");
                goto out;
            }
            k->dep[n->dep_off + d] = ix[lo].i;
            k->rdep_off[ix[lo].i + 1]++;
            indeg[i]++;
        }
    }
    for (uint32_t i = 0; i < k->n; i++)
        k->rdep_off[i + 1] += k->rdep_off[i];
    {
        uint32_t *fill = queue; /* reused below after the fill */
        memset(fill, 0, ((size_t)k->n + 1) * sizeof *fill);
        for (uint32_t i = 0; i < k->n; i++)
            for (uint32_t d = 0; d < k->nodes[i].n_deps; d++) {
                uint32_t p = k->dep[k->nodes[i].dep_off + d];
                k->rdep[k->rdep_off[p] + fill[p]++] = i;
            }
    }
    /* Kahn: every node must come out */
    uint32_t head = 0, tail = 0;
    for (uint32_t i = 0; i < k->n; i++)
        if (indeg[i] == 0) queue[tail++] = i;
    while (head < tail) {
        uint32_t i = queue[head++];
        for (uint32_t e = k->rdep_off[i]; e < k->rdep_off[i + 1]; e++)
            if (--indeg[k->rdep[e]] == 0) queue[tail++] = k->rdep[e];
    }
    if (tail < k->n) {
        uint32_t bad = 0;
        while (indeg[bad] == 0)
            bad++;
        rc = node_fail(t, r, bad, err, errlen, "deps", "the dependencies form a cycle");
    }
out:
    arb_free(ix);
    arb_free(indeg);
    arb_free(queue);
    return rc;
}

/* The k-th call of a group on every member: same kind, bytes and root. */
static int match_colls(arb_trace *t, char *err, size_t errlen)
{
    char rule[200];
    uint32_t total = 0;
    for (uint32_t r = 0; r < t->n_ranks; r++)
        for (uint32_t i = 0; i < t->rk[r].n; i++)
            if (t->rk[r].nodes[i].op == TR_COLL) total++;
    uint32_t *cur = arb_calloc(t->n_ranks ? t->n_ranks : 1, sizeof *cur);
    t->coll_nodes = arb_malloc(((size_t)total + 1) * sizeof *t->coll_nodes);
    t->colls = arb_malloc(((size_t)total + 1) * sizeof *t->colls);
    if (!cur || !t->coll_nodes || !t->colls) {
        arb_free(cur);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    uint32_t used = 0;
    int rc = 0;
    for (uint32_t g = 0; rc == 0 && g < t->n_groups; g++) {
        const struct tr_group *G = &t->g[g];
        for (uint32_t m = 0; m < G->n; m++)
            cur[G->ranks[m]] = 0;
        for (;;) {
            /* the next call of g on every member */
            uint32_t found = 0, first = TR_NONE;
            for (uint32_t m = 0; m < G->n; m++) {
                uint32_t r = G->ranks[m];
                struct tr_rank *k = &t->rk[r];
                while (cur[r] < k->n &&
                       !(k->nodes[cur[r]].op == TR_COLL && k->nodes[cur[r]].group == g))
                    cur[r]++;
                if (cur[r] < k->n) {
                    found++;
                    if (first == TR_NONE) first = m;
                }
            }
            if (found == 0) break;
            if (found < G->n) { /* some member has one call more */
                uint32_t m = first, miss = 0;
                while (cur[G->ranks[miss]] < t->rk[G->ranks[miss]].n)
                    miss++;
                snprintf(rule, sizeof rule,
                         "collective call %u of its group has no match on rank %u (every member "
                         "must make the same calls)",
                         t->n_colls, G->ranks[miss]);
                rc = node_fail(t, G->ranks[m], cur[G->ranks[m]], err, errlen, "group", rule);
                break;
            }
            const struct tr_node *a = &t->rk[G->ranks[0]].nodes[cur[G->ranks[0]]];
            struct tr_coll *c = &t->colls[t->n_colls];
            c->group = g;
            c->coll = a->coll;
            c->bytes = a->bytes;
            c->root = a->root;
            c->node_off = used;
            for (uint32_t m = 0; m < G->n && rc == 0; m++) {
                uint32_t r = G->ranks[m];
                struct tr_node *b = &t->rk[r].nodes[cur[r]];
                if (b->coll != a->coll || b->bytes != a->bytes || b->root != a->root) {
                    snprintf(rule, sizeof rule,
                             "collective differs from rank %u's matching call (%s of %llu bytes, "
                             "root %u)",
                             G->ranks[0], arb_coll_name(a->coll), (unsigned long long)a->bytes,
                             a->root);
                    rc = node_fail(t, r, cur[r], err, errlen, "kind", rule);
                    break;
                }
                b->match = t->n_colls;
                t->coll_nodes[used++] = t->rank_off[r] + cur[r];
                cur[r]++;
            }
            if (rc < 0) break;
            t->n_colls++;
        }
    }
    arb_free(cur);
    return rc;
}

struct pkey {
    uint32_t src, dst, tag, r, i;
};

static int cmp_pkey(const void *a, const void *b)
{
    const struct pkey *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int same_pair(const struct pkey *x, const struct pkey *y)
{
    return x->src == y->src && x->dst == y->dst && x->tag == y->tag;
}

/* Sends and receives of the same (source, destination, tag), in order. */
static int match_p2p(arb_trace *t, char *err, size_t errlen)
{
    char rule[200];
    uint32_t ns = 0, nr = 0;
    for (uint32_t r = 0; r < t->n_ranks; r++)
        for (uint32_t i = 0; i < t->rk[r].n; i++) {
            ns += t->rk[r].nodes[i].op == TR_SEND;
            nr += t->rk[r].nodes[i].op == TR_RECV;
        }
    struct pkey *S = arb_malloc(((size_t)ns + 1) * sizeof *S),
                *R = arb_malloc(((size_t)nr + 1) * sizeof *R);
    t->p2p = arb_malloc(((size_t)ns + 1) * sizeof *t->p2p);
    if (!S || !R || !t->p2p) {
        arb_free(S);
        arb_free(R);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    ns = nr = 0;
    for (uint32_t r = 0; r < t->n_ranks; r++)
        for (uint32_t i = 0; i < t->rk[r].n; i++) {
            const struct tr_node *n = &t->rk[r].nodes[i];
            if (n->op == TR_SEND) S[ns++] = (struct pkey){r, n->peer, n->tag, r, i};
            if (n->op == TR_RECV) R[nr++] = (struct pkey){n->peer, r, n->tag, r, i};
        }
    qsort(S, ns, sizeof *S, cmp_pkey);
    qsort(R, nr, sizeof *R, cmp_pkey);
    uint32_t a = 0, b = 0;
    int rc = 0;
    while (rc == 0 && (a < ns || b < nr)) {
        int c = a == ns ? 1 : b == nr ? -1 : cmp_pkey(&S[a], &R[b]);
        if (a < ns && b < nr && same_pair(&S[a], &R[b])) c = 0;
        if (c != 0) {
            const struct pkey *x = c < 0 ? &S[a] : &R[b];
            snprintf(rule, sizeof rule, "no matching %s (%u -> %u, tag %u)",
                     c < 0 ? "recv" : "send", x->src, x->dst, x->tag);
            rc = node_fail(t, x->r, x->i, err, errlen, c < 0 ? "to" : "from", rule);
            break;
        }
        struct tr_node *sn = &t->rk[S[a].r].nodes[S[a].i], *rn = &t->rk[R[b].r].nodes[R[b].i];
        if (sn->bytes != rn->bytes) {
            snprintf(rule, sizeof rule, "%llu bytes, but the matching send (rank %u) has %llu",
                     (unsigned long long)rn->bytes, S[a].r, (unsigned long long)sn->bytes);
            rc = node_fail(t, R[b].r, R[b].i, err, errlen, "bytes", rule);
            break;
        }
        struct tr_p2p *p = &t->p2p[t->n_p2p];
        p->src = S[a].src;
        p->dst = S[a].dst;
        p->bytes = sn->bytes;
        p->send_node = t->rank_off[S[a].r] + S[a].i;
        p->recv_node = t->rank_off[R[b].r] + R[b].i;
        sn->match = rn->match = t->n_p2p++;
        a++;
        b++;
    }
    arb_free(S);
    arb_free(R);
    return rc;
}

int tr_finish(arb_trace *t, char *err, size_t errlen)
{
    t->rank_off = arb_malloc(((size_t)t->n_ranks + 1) * sizeof *t->rank_off);
    if (!t->rank_off) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    uint64_t off = 0;
    for (uint32_t r = 0; r < t->n_ranks; r++) {
        t->rank_off[r] = (uint32_t)off;
        off += t->rk[r].n;
    }
    t->rank_off[t->n_ranks] = (uint32_t)off;
    t->n_nodes = off;
    for (uint32_t r = 0; r < t->n_ranks; r++) {
        int rc = resolve_rank(t, r, err, errlen);
        if (rc < 0) return rc;
    }
    int rc = match_colls(t, err, errlen);
    if (rc == 0) rc = match_p2p(t, err, errlen);
    return rc;
}

/* ---- files ------------------------------------------------------------------ */

/* A whole file; ARB_EIO also when it cannot be opened (a rank's file that
 * is not there ends the ranks). */
static int read_file(const char *path, char **data, size_t *len)
{
    int rc = arb_file_read(path, 0, data, len);
    return rc == ARB_ENOENT ? ARB_EIO : rc;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int load_chakra(arb_trace **out, const char *path, char *err, size_t errlen)
{
    if (!ends_with(path, ".0.et"))
        return arb_errf(err, errlen, ARB_EINVAL,
                        "%s: a Chakra trace is named by rank 0's file, PREFIX.0.et", path);
    size_t plen = strlen(path) - 5;
    char *prefix = arb_malloc(plen + 1), *fname = arb_malloc(plen + 32);
    uint8_t **bufs = NULL;
    size_t *lens = NULL;
    uint32_t n = 0, cap = 0;
    int rc = 0;
    if (!prefix || !fname) rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    if (prefix) {
        memcpy(prefix, path, plen);
        prefix[plen] = '\0';
    }
    while (rc == 0 && n < TR_MAX_RANKS) {
        snprintf(fname, plen + 32, "%s.%u.et", prefix, n);
        char *data;
        size_t len;
        int k = read_file(fname, &data, &len);
        if (k == ARB_EIO && n > 0) break; /* the ranks end at the first missing file */
        if (k < 0) {
            rc = arb_errf(err, errlen, k, "%s: cannot read: %s", fname,
                          k == ARB_EIO ? strerror(errno) : "out of memory");
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            uint8_t **nb = arb_realloc(bufs, cap * sizeof *nb);
            size_t *nl = arb_realloc(lens, cap * sizeof *nl);
            if (nb) bufs = nb;
            if (nl) lens = nl;
            if (!nb || !nl) {
                arb_free(data);
                rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
                break;
            }
        }
        bufs[n] = (uint8_t *)data;
        lens[n++] = len;
    }
    if (rc == 0)
        rc =
            arb_trace_parse_chakra(out, (const uint8_t *const *)bufs, lens, n, prefix, err, errlen);
    for (uint32_t i = 0; i < n; i++)
        arb_free(bufs[i]);
    arb_free(bufs);
    arb_free(lens);
    arb_free(prefix);
    arb_free(fname);
    return rc;
}

int arb_trace_load(arb_trace **out, const char *path, arb_trace_format fmt, char *err,
                   size_t errlen)
{
    *out = NULL;
    if (fmt == ARB_TRACE_AUTO) fmt = ends_with(path, ".et") ? ARB_TRACE_CHAKRA : ARB_TRACE_TEXT;
    if (fmt == ARB_TRACE_CHAKRA) return load_chakra(out, path, err, errlen);
    char *data;
    size_t len;
    int rc = read_file(path, &data, &len);
    if (rc < 0)
        return arb_errf(err, errlen, rc, "%s: cannot read: %s", path,
                        rc == ARB_EIO ? strerror(errno) : "out of memory");
    rc = arb_trace_parse_text(out, data, len, path, err, errlen);
    arb_free(data);
    return rc;
}
