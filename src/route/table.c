/*
 * The table engine's file: CSV with the header `switch,pod,in_port,out_port`
 * (route.h). Entries are kept sorted by (node, pod, in) and found by binary
 * search; a wildcard in_port sorts last.
 */
#include "route_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

#define WILDCARD UINT32_MAX

static int cmp_entry(const void *a, const void *b)
{
    const struct route_entry *x = a, *y = b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    if (x->pod != y->pod) return x->pod < y->pod ? -1 : 1;
    if (x->in != y->in) return x->in < y->in ? -1 : 1;
    return 0;
}

static int num(const char *s, uint32_t *out)
{
    if (!*s || *s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > 0xFFFFFFFEul) return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Trim blanks and the line end in place. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static int parse_line(arb_route *r, char *line, size_t lineno, const char *path,
                      struct route_entry *e, char *err, size_t errlen)
{
    char *f[4];
    int nf = 0;
    char *s = line;
    for (;;) {
        char *c = strchr(s, ',');
        if (nf == 4)
            return arb_errf(err, errlen, ARB_EPARSE, "table %s line %zu: more than 4 fields", path,
                            lineno);
        f[nf++] = trim(s);
        if (!c) break;
        *c = '\0';
        s = c + 1;
    }
    if (nf != 4)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "table %s line %zu: want switch,pod,in_port,out_port", path, lineno);
    uint32_t node;
    if (arb_topo_find(r->t, f[0], &node) < 0 || r->nodes[node].kind != ARB_NODE_SWITCH)
        return arb_errf(err, errlen, ARB_EPARSE, "table %s line %zu: switch '%s' does not exist",
                        path, lineno, f[0]);
    const arb_node *n = &r->nodes[node];
    uint32_t radix = (uint32_t)n->n_down + n->n_up;
    uint32_t pods = r->n_hosts / r->M[r->h - 1];
    uint32_t pod, in, out;
    if (num(f[1], &pod) < 0 || pod >= pods)
        return arb_errf(err, errlen, ARB_EPARSE, "table %s line %zu: pod '%s' is not in 0..%u",
                        path, lineno, f[1], pods - 1);
    if (strcmp(f[2], "*") == 0)
        in = WILDCARD;
    else if (num(f[2], &in) < 0 || in >= radix)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "table %s line %zu: in_port '%s' is not * or a port 0..%u of %s", path,
                        lineno, f[2], radix - 1, f[0]);
    if (num(f[3], &out) < 0 || out >= radix)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "table %s line %zu: out_port '%s' is not a port 0..%u of %s", path, lineno,
                        f[3], radix - 1, f[0]);
    int ok = out >= n->n_down; /* an up port */
    if (n->level == r->h && out < n->n_down) ok = (out % r->m[r->h]) == pod;
    if (!ok)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "table %s line %zu: out_port %u of %s is not a minimal port toward pod %u",
                        path, lineno, out, f[0], pod);
    e->node = node;
    e->pod = pod;
    e->in = in;
    e->out = out;
    return 0;
}

int route_table_load(arb_route *r, const char *path, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return arb_errf(err, errlen, ARB_EIO, "table %s: %s", path, strerror(errno));
    char line[512];
    size_t lineno = 0, cap = 0;
    int rc = 0, header = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(fp)) {
            rc = arb_errf(err, errlen, ARB_EPARSE, "table %s line %zu: longer than %zu bytes", path,
                          lineno, sizeof line - 2);
            break;
        }
        char *s = trim(line);
        if (!*s || *s == '#') continue;
        if (!header) {
            char h[64];
            size_t j = 0;
            for (const char *c = s; *c && j + 1 < sizeof h; c++)
                if (*c != ' ' && *c != '\t') h[j++] = *c;
            h[j] = '\0';
            if (strcmp(h, "switch,pod,in_port,out_port") != 0) {
                rc = arb_errf(err, errlen, ARB_EPARSE,
                              "table %s line %zu: want the header switch,pod,in_port,out_port",
                              path, lineno);
                break;
            }
            header = 1;
            continue;
        }
        if (r->n_entries == cap) {
            size_t nc = cap ? cap * 2 : 64;
            struct route_entry *ne = arb_realloc(r->entries, nc * sizeof *ne);
            if (!ne) {
                rc = arb_errf(err, errlen, ARB_ENOMEM, "table %s: out of memory", path);
                break;
            }
            r->entries = ne;
            cap = nc;
        }
        rc = parse_line(r, s, lineno, path, &r->entries[r->n_entries], err, errlen);
        if (rc < 0) break;
        r->n_entries++;
    }
    if (rc == 0 && ferror(fp)) rc = arb_errf(err, errlen, ARB_EIO, "table %s: read error", path);
    if (rc == 0 && !header)
        rc = arb_errf(err, errlen, ARB_EPARSE,
                      "table %s line %zu: no header switch,pod,in_port,out_port", path, lineno);
    fclose(fp);
    if (rc < 0) return rc;
    qsort(r->entries, r->n_entries, sizeof *r->entries, cmp_entry);
    for (size_t i = 1; i < r->n_entries; i++)
        if (cmp_entry(&r->entries[i - 1], &r->entries[i]) == 0)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "table %s: an entry (switch, pod, in_port) is repeated", path);
    return 0;
}

static const struct route_entry *find(const arb_route *r, uint32_t node, uint32_t pod, uint32_t in)
{
    struct route_entry key = {node, pod, in, 0};
    return bsearch(&key, r->entries, r->n_entries, sizeof key, cmp_entry);
}

uint32_t route_table_lookup(const arb_route *r, uint32_t node, uint32_t pod, uint32_t in)
{
    const struct route_entry *e = find(r, node, pod, in);
    if (!e) e = find(r, node, pod, WILDCARD);
    return e ? e->out : ARB_ROUTE_NONE;
}
