/*
 * Iteration traces: the text reader (docs/workloads.md has the grammar).
 *
 *   arbor-trace 1                       first line that is not a comment
 *   ranks N                             before any node
 *   group NAME RANKS                    a named group, e.g. group dp 0-3
 *   RANK ID comp DURATION [deps=IDS]
 *   RANK ID coll KIND BYTES [group=NAME|RANKS] [root=I] [deps=IDS]
 *   RANK ID send BYTES to=PEER [tag=T] [deps=IDS]
 *   RANK ID recv BYTES from=PEER [tag=T] [deps=IDS]
 *
 * RANK is a rank or `*` (the node on every rank); `#` starts a comment.
 */
#include "tr_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

struct tx {
    arb_trace *t;
    const char *name;
    unsigned line;
    char *err;
    size_t errlen;
    int have_header;
};

static int tx_fail(struct tx *x, const char *field, const char *fmt, ...) ARB_PRINTF(3, 4);

static int tx_fail(struct tx *x, const char *field, const char *fmt, ...)
{
    char rule[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rule, sizeof rule, fmt, ap);
    va_end(ap);
    return arb_errf(x->err, x->errlen, ARB_EPARSE, "%s:%u: %s: %s", x->name, x->line, field, rule);
}

static int parse_num(const char *s, uint64_t max, uint64_t *out)
{
    return arb_parse_u64(s, strlen(s), max, out);
}

/* Bytes: a size (arb_parse_size) of any value: 0, or an ARB_E* code. */
static int parse_bytes(const char *s, uint64_t *out)
{
    return arb_parse_size(s, strlen(s), UINT64_MAX, out);
}

/* "0-3,8" into ranks below n (malloc'd). */
static int parse_ranks(const char *s, uint32_t n, uint32_t **out, uint32_t *cnt)
{
    uint32_t *v = NULL, k = 0, cap = 0;
    const char *p = s;
    while (*p) {
        char *e;
        if (*p < '0' || *p > '9') goto bad;
        errno = 0;
        unsigned long a = strtoul(p, &e, 10), b = a;
        if (errno) goto bad;
        p = e;
        if (*p == '-') {
            if (p[1] < '0' || p[1] > '9') goto bad;
            b = strtoul(p + 1, &e, 10);
            if (errno || b < a) goto bad;
            p = e;
        }
        if (b >= n) goto bad;
        for (unsigned long r = a; r <= b; r++) {
            if (k == cap) {
                if (cap >= n) goto bad; /* more than n ranks: some twice */
                cap = cap ? cap * 2 : 16;
                uint32_t *nv = arb_realloc(v, cap * sizeof *nv);
                if (!nv) goto bad;
                v = nv;
            }
            v[k++] = (uint32_t)r;
        }
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    if (k == 0) goto bad;
    for (uint32_t i = 0; i < k; i++) /* each rank once */
        for (uint32_t j = i + 1; j < k; j++)
            if (v[i] == v[j]) goto bad;
    *out = v;
    *cnt = k;
    return 0;
bad:
    arb_free(v);
    return ARB_EPARSE;
}

#define MAX_TOK 40

static int parse_group_line(struct tx *x, char **tok, int nt)
{
    if (!x->t) return tx_fail(x, "group", "%s", "before `ranks N`");
    if (nt != 3) return tx_fail(x, "group", "%s", "expected `group NAME RANKS`");
    if (tok[1][0] >= '0' && tok[1][0] <= '9')
        return tx_fail(x, "group", "name '%s' must not start with a digit", tok[1]);
    for (uint32_t g = 0; g < x->t->n_groups; g++)
        if (x->t->g[g].name && strcmp(x->t->g[g].name, tok[1]) == 0)
            return tx_fail(x, "group", "'%s' is defined twice", tok[1]);
    uint32_t *rk, n;
    if (parse_ranks(tok[2], x->t->n_ranks, &rk, &n) < 0)
        return tx_fail(x, "group", "'%s' is not a list of distinct ranks below `ranks`", tok[2]);
    long g = tr_group(x->t, rk, n, tok[1]);
    arb_free(rk);
    return g < 0 ? arb_errf(x->err, x->errlen, ARB_ENOMEM, "out of memory") : 0;
}

/* The group named by `group=` (a name or a rank list), or every rank. */
static long group_of(struct tx *x, const char *spec)
{
    arb_trace *t = x->t;
    if (!spec) {
        uint32_t *all = arb_malloc((size_t)t->n_ranks * sizeof *all);
        if (!all) return ARB_ENOMEM;
        for (uint32_t r = 0; r < t->n_ranks; r++)
            all[r] = r;
        long g = tr_group(t, all, t->n_ranks, NULL);
        arb_free(all);
        return g;
    }
    if (spec[0] < '0' || spec[0] > '9') {
        for (uint32_t g = 0; g < t->n_groups; g++)
            if (t->g[g].name && strcmp(t->g[g].name, spec) == 0) return g;
        return tx_fail(x, "group", "'%s' is not a defined group", spec);
    }
    uint32_t *rk, n;
    if (parse_ranks(spec, t->n_ranks, &rk, &n) < 0)
        return tx_fail(x, "group", "'%s' is not a list of distinct ranks below `ranks`", spec);
    long g = tr_group(t, rk, n, NULL);
    arb_free(rk);
    return g;
}

static int in_group(const arb_trace *t, uint32_t g, uint32_t r)
{
    for (uint32_t i = 0; i < t->g[g].n; i++)
        if (t->g[g].ranks[i] == r) return 1;
    return 0;
}

/* A node line: tok[0] rank or '*', tok[1] id, tok[2] op, then args. */
/* A node's op (tok "comp", "coll", "send", "recv") into proto, and the
 * positional arguments that follow it in *npos. */
static int node_op(struct tx *x, const char *op, struct tr_node *proto, int *npos)
{
    static const struct {
        const char *name;
        uint8_t op;
        int npos;
    } ops[] = {
        {"comp", TR_COMP, 1}, {"coll", TR_COLL, 2}, {"send", TR_SEND, 1}, {"recv", TR_RECV, 1}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i].name) == 0) {
            proto->op = ops[i].op;
            *npos = ops[i].npos;
            return 0;
        }
    return tx_fail(x, "op", "'%s' is not comp, coll, send or recv", op);
}

/* The positional arguments after the op: comp's duration, coll's kind and
 * bytes, send's and recv's bytes. */
static int node_args(struct tx *x, char **tok, struct tr_node *proto)
{
    int rc;
    if (proto->op == TR_COMP) {
        if (arb_topo_parse_time(tok[3], &proto->dur) < 0)
            return tx_fail(x, "duration", "'%s' is not a time (a number with ps, ns, us, ms or s)",
                           tok[3]);
    } else if (proto->op == TR_COLL) {
        int c = arb_coll_parse(tok[3]);
        if (c < 0)
            return tx_fail(x, "kind",
                           "'%s' is not allreduce, reduce, reducescatter, broadcast, allgather, "
                           "barrier or alltoall",
                           tok[3]);
        proto->coll = (uint8_t)c;
        if ((rc = parse_bytes(tok[4], &proto->bytes)) < 0)
            return tx_fail(x, "bytes", "'%s' %s", tok[4], arb_size_why(rc));
        if (proto->bytes == 0 && c != ARB_COLL_BARRIER)
            return tx_fail(x, "bytes", "%s", "must be at least 1 (only a barrier carries none)");
    } else {
        if ((rc = parse_bytes(tok[3], &proto->bytes)) < 0)
            return tx_fail(x, "bytes", "'%s' %s", tok[3], arb_size_why(rc));
        if (proto->bytes == 0) return tx_fail(x, "bytes", "%s", "must be at least 1");
    }
    return 0;
}

/* A node's key=value arguments, each split at its '=' in place: root, to,
 * from and tag into proto; group= and deps= kept as written. */
struct node_keys {
    const char *gspec, *deps;
    int have_peer;
};

static int node_key(struct tx *x, const char *op, const char *k, const char *v,
                    struct tr_node *proto, struct node_keys *nk)
{
    uint64_t u;
    if (strcmp(k, "deps") == 0) {
        nk->deps = v;
    } else if (strcmp(k, "group") == 0 && proto->op == TR_COLL) {
        nk->gspec = v;
    } else if (strcmp(k, "root") == 0 && proto->op == TR_COLL) {
        if (parse_num(v, TR_MAX_RANKS, &u) < 0)
            return tx_fail(x, "root", "'%s' is not a rank index", v);
        proto->root = (uint32_t)u;
    } else if ((strcmp(k, "to") == 0 && proto->op == TR_SEND) ||
               (strcmp(k, "from") == 0 && proto->op == TR_RECV)) {
        if (parse_num(v, x->t->n_ranks - 1, &u) < 0)
            return tx_fail(x, k, "'%s' is not a rank below `ranks`", v);
        proto->peer = (uint32_t)u;
        nk->have_peer = 1;
    } else if (strcmp(k, "tag") == 0 && (proto->op == TR_SEND || proto->op == TR_RECV)) {
        if (parse_num(v, UINT32_MAX, &u) < 0)
            return tx_fail(x, "tag", "'%s' is not a tag (0..4294967295)", v);
        proto->tag = (uint32_t)u;
    } else {
        return tx_fail(x, k, "not a key of %s", op);
    }
    return 0;
}

static int node_keys(struct tx *x, char **tok, int first, int nt, struct tr_node *proto,
                     struct node_keys *nk)
{
    for (int i = first; i < nt; i++) {
        char *eq = strchr(tok[i], '=');
        if (!eq) return tx_fail(x, "key", "'%s' is not key=value", tok[i]);
        *eq = '\0';
        int rc = node_key(x, tok[2], tok[i], eq + 1, proto, nk);
        if (rc < 0) return rc;
    }
    if ((proto->op == TR_SEND || proto->op == TR_RECV) && !nk->have_peer)
        return tx_fail(x, proto->op == TR_SEND ? "to" : "from", "%s", "missing");
    return 0;
}

/* A collective's group (group=, else every rank) and its root checked. */
static int node_group(struct tx *x, const char *gspec, struct tr_node *proto)
{
    long g = group_of(x, gspec);
    if (g == ARB_ENOMEM) return arb_errf(x->err, x->errlen, ARB_ENOMEM, "out of memory");
    if (g < 0) return (int)g;
    proto->group = (uint32_t)g;
    if ((proto->coll == ARB_COLL_REDUCE || proto->coll == ARB_COLL_BROADCAST) &&
        proto->root >= x->t->g[g].n)
        return tx_fail(x, "root", "%s", "not below the group's size");
    return 0;
}

/* The node proto on rank r, with its dependencies (deps=, node ids
 * separated by commas; NULL: none). */
static int place_node(struct tx *x, const struct tr_node *proto, uint32_t r, const char *deps)
{
    arb_trace *t = x->t;
    struct tr_node *n = tr_add_node(t, r);
    if (!n) return tx_fail(x, "id", "%s", "too many nodes (out of memory or above 2^22)");
    uint32_t off = n->dep_off;
    *n = *proto;
    n->dep_off = off;
    n->n_deps = 0;
    for (const char *p = deps; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        uint64_t d;
        if (arb_parse_u64(p, len, UINT64_MAX, &d) < 0)
            return tx_fail(x, "deps", "'%s' is not a list of node ids", deps);
        if (tr_add_dep(t, r, d) < 0)
            return arb_errf(x->err, x->errlen, ARB_ENOMEM, "out of memory");
        p = e ? e + 1 : p + len;
        if (e && !*p) return tx_fail(x, "deps", "'%s' is not a list of node ids", deps);
    }
    return 0;
}

static int parse_node_line(struct tx *x, char **tok, int nt)
{
    arb_trace *t = x->t;
    if (!t) return tx_fail(x, "ranks", "%s", "`ranks N` must come before the nodes");
    uint64_t rank = 0, id;
    int rc, all = strcmp(tok[0], "*") == 0;
    if (!all && parse_num(tok[0], t->n_ranks - 1, &rank) < 0)
        return tx_fail(x, "rank", "'%s' is not a rank below `ranks` (or *)", tok[0]);
    if (nt < 3) return tx_fail(x, "op", "%s", "expected RANK ID OP ...");
    if (parse_num(tok[1], UINT64_MAX, &id) < 0)
        return tx_fail(x, "id", "'%s' is not a node id (a whole number)", tok[1]);
    struct tr_node proto;
    memset(&proto, 0, sizeof proto);
    proto.id = id;
    proto.where = x->line;
    proto.group = TR_NONE;
    proto.peer = TR_NONE;
    int npos = 0; /* positional arguments after the op */
    if ((rc = node_op(x, tok[2], &proto, &npos)) < 0) return rc;
    if (nt < 3 + npos) return tx_fail(x, tok[2], "%s", "missing arguments");
    if ((rc = node_args(x, tok, &proto)) < 0) return rc;
    struct node_keys nk = {NULL, NULL, 0};
    if ((rc = node_keys(x, tok, 3 + npos, nt, &proto, &nk)) < 0) return rc;
    if (proto.op == TR_COLL && (rc = node_group(x, nk.gspec, &proto)) < 0) return rc;
    uint32_t lo = all ? 0 : (uint32_t)rank, hi = all ? t->n_ranks : (uint32_t)rank + 1;
    for (uint32_t r = lo; r < hi; r++) {
        if (proto.op == TR_COLL && !in_group(t, proto.group, r)) {
            if (all) continue; /* `*`: the group's members only */
            return tx_fail(x, "group", "%s", "the node's rank is not in its group");
        }
        if ((proto.op == TR_SEND || proto.op == TR_RECV) && proto.peer == r)
            return tx_fail(x, proto.op == TR_SEND ? "to" : "from", "%s", "a rank's own rank");
        if ((rc = place_node(x, &proto, r, nk.deps)) < 0) return rc;
    }
    return 0;
}

static int parse_line(struct tx *x, char *s)
{
    char *tok[MAX_TOK];
    int nt = 0;
    for (char *p = s;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p || *p == '#') break;
        if (nt == MAX_TOK) return tx_fail(x, "line", "%s", "too many fields");
        tok[nt++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        if (*p) *p++ = '\0';
    }
    if (nt == 0) return 0;
    if (!x->have_header) {
        if (nt != 2 || strcmp(tok[0], "arbor-trace") != 0 || strcmp(tok[1], "1") != 0)
            return tx_fail(x, "header", "%s", "the first line must be `arbor-trace 1`");
        x->have_header = 1;
        return 0;
    }
    if (strcmp(tok[0], "ranks") == 0) {
        uint64_t n;
        if (x->t) return tx_fail(x, "ranks", "%s", "given twice");
        if (nt != 2 || parse_num(tok[1], TR_MAX_RANKS, &n) < 0 || n == 0)
            return tx_fail(x, "ranks", "expected `ranks N` with N in 1..%u", TR_MAX_RANKS);
        if (tr_new(&x->t, x->name, (uint32_t)n, 0) < 0)
            return arb_errf(x->err, x->errlen, ARB_ENOMEM, "out of memory");
        return 0;
    }
    if (strcmp(tok[0], "group") == 0) return parse_group_line(x, tok, nt);
    return parse_node_line(x, tok, nt);
}

int arb_trace_parse_text(arb_trace **out, const char *text, size_t len, const char *name, char *err,
                         size_t errlen)
{
    *out = NULL;
    struct tx x;
    memset(&x, 0, sizeof x);
    x.name = name ? name : "(trace)";
    x.err = err;
    x.errlen = errlen;
    char *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t pos = 0; rc == 0 && pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        x.line++;
        if (n + 1 > cap) {
            cap = n + 1 > 256 ? n + 1 : 256;
            char *nb = arb_realloc(buf, cap);
            if (!nb) {
                rc = arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
                break;
            }
            buf = nb;
        }
        memcpy(buf, text + pos, n);
        buf[n] = '\0';
        if (memchr(buf, '\0', n))
            rc = tx_fail(&x, "line", "%s", "a NUL byte in the text");
        else
            rc = parse_line(&x, buf);
        pos += n + (nl != NULL);
    }
    arb_free(buf);
    if (rc == 0 && !x.have_header) {
        x.line = 1;
        rc = tx_fail(&x, "header", "%s", "empty trace: the first line must be `arbor-trace 1`");
    }
    if (rc == 0 && !x.t) rc = tx_fail(&x, "ranks", "%s", "no `ranks N` line");
    if (rc == 0) rc = tr_finish(x.t, err, errlen);
    if (rc < 0) {
        arb_trace_free(x.t);
        return rc;
    }
    *out = x.t;
    return 0;
}
