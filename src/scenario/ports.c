/*
 * Port lists of scenarios (run.pcap_ports, fabric.link): links named as
 * the topology's failure syntax names them, plus `host:` and `all`.
 * Every item names one or more links; a link stands for both of its
 * directions.
 */
#include "scn_int.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

static int parse_num(const char *s, uint32_t *v)
{
    uint64_t x = 0;
    if (!*s || strlen(s) > 10) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    if (x > UINT32_MAX) return -1;
    *v = (uint32_t)x;
    return 0;
}

static int find(const arb_topo *t, const char *name, size_t n, uint32_t *node, const char *item,
                char *msg, size_t len)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return arb_errf(msg, len, ARB_EPARSE, "'%s': a node name is missing or too long", item);
    memcpy(buf, name, n);
    buf[n] = '\0';
    int rc = arb_topo_find(t, buf, node);
    if (rc == ARB_ENOENT) return arb_errf(msg, len, ARB_ENOENT, "'%s': no node %s", item, buf);
    if (rc < 0) return arb_errf(msg, len, ARB_EPARSE, "'%s': '%s' is not a node name", item, buf);
    return 0;
}

static void mark_link(const arb_topo *t, uint8_t *mark, uint32_t port)
{
    mark[port] = 1;
    mark[arb_topo_port(t, port)->peer_port] = 1;
}

/* Mark the links item names. */
static int mark_item(const arb_topo *t, const char *item, uint8_t *mark, char *msg, size_t len)
{
    static const char usage[] = "all, host:hN, switch:NAME, link:A-B[/K], up:NAME:Q, down:NAME:D "
                                "or port:NAME:P";
    uint32_t n_ports = arb_topo_n_ports(t);
    if (strcmp(item, "all") == 0) {
        memset(mark, 1, n_ports);
        return 0;
    }
    const char *colon = strchr(item, ':');
    if (!colon) return arb_errf(msg, len, ARB_EPARSE, "'%s' is not %s", item, usage);
    size_t tl = (size_t)(colon - item);
    const char *rest = colon + 1;
    uint32_t node;
    int rc;
    if ((tl == 4 && strncmp(item, "host", 4) == 0) ||
        (tl == 6 && strncmp(item, "switch", 6) == 0)) {
        if ((rc = find(t, rest, strlen(rest), &node, item, msg, len)) < 0) return rc;
        const arb_node *nd = arb_topo_node(t, node);
        if ((nd->kind == ARB_NODE_HOST) != (tl == 4))
            return arb_errf(msg, len, ARB_EPARSE, "'%s': %s is not a %s", item, rest,
                            tl == 4 ? "host" : "switch");
        for (uint32_t p = 0; p < (uint32_t)nd->n_down + nd->n_up; p++)
            mark_link(t, mark, nd->first_port + p);
        return 0;
    }
    if (tl == 4 && strncmp(item, "link", 4) == 0) {
        const char *dash = strchr(rest, '-');
        if (!dash) return arb_errf(msg, len, ARB_EPARSE, "'%s': expected link:A-B[/K]", item);
        const char *slash = strchr(dash, '/');
        size_t bl = slash ? (size_t)(slash - dash - 1) : strlen(dash + 1);
        uint32_t a, b, k = UINT32_MAX;
        if ((rc = find(t, rest, (size_t)(dash - rest), &a, item, msg, len)) < 0 ||
            (rc = find(t, dash + 1, bl, &b, item, msg, len)) < 0)
            return rc;
        if (slash && parse_num(slash + 1, &k) < 0)
            return arb_errf(msg, len, ARB_EPARSE, "'%s': '%s' is not a whole number", item,
                            slash + 1);
        const arb_node *na = arb_topo_node(t, a);
        int found = 0;
        for (uint32_t p = 0; p < (uint32_t)na->n_down + na->n_up; p++) {
            const arb_port *pt = arb_topo_port(t, na->first_port + p);
            if (pt->peer == b && (k == UINT32_MAX || pt->parallel == k)) {
                mark_link(t, mark, na->first_port + p);
                found = 1;
            }
        }
        if (!found) return arb_errf(msg, len, ARB_ENOENT, "'%s': no such link", item);
        return 0;
    }
    int which = -1;
    if (tl == 2 && strncmp(item, "up", 2) == 0)
        which = 0;
    else if (tl == 4 && strncmp(item, "down", 4) == 0)
        which = 1;
    else if (tl == 4 && strncmp(item, "port", 4) == 0)
        which = 2;
    if (which < 0) return arb_errf(msg, len, ARB_EPARSE, "'%s': unknown kind (%s)", item, usage);
    const char *c2 = strrchr(rest, ':');
    if (!c2 || c2 == rest)
        return arb_errf(msg, len, ARB_EPARSE, "'%s': expected %.*s:NAME:NUMBER", item, (int)tl,
                        item);
    uint32_t num;
    if ((rc = find(t, rest, (size_t)(c2 - rest), &node, item, msg, len)) < 0) return rc;
    if (parse_num(c2 + 1, &num) < 0)
        return arb_errf(msg, len, ARB_EPARSE, "'%s': '%s' is not a whole number", item, c2 + 1);
    const arb_node *nd = arb_topo_node(t, node);
    uint32_t limit = which == 0   ? nd->n_up
                     : which == 1 ? nd->n_down
                                  : (uint32_t)nd->n_down + nd->n_up;
    if (num >= limit)
        return arb_errf(msg, len, ARB_ENOENT, "'%s': the node has %u such ports", item, limit);
    mark_link(t, mark, (which == 0 ? nd->first_up : nd->first_port) + num);
    return 0;
}

int scn_port_mark(const arb_topo *t, const char *list, uint8_t *mark, char *msg, size_t len)
{
    size_t n = strlen(list);
    char *copy = arb_malloc(n + 1);
    if (!copy) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    memcpy(copy, list, n + 1);
    int rc = 0, items = 0;
    char *save = NULL;
    for (char *it = strtok_r(copy, ", \t", &save); it && rc == 0;
         it = strtok_r(NULL, ", \t", &save)) {
        rc = mark_item(t, it, mark, msg, len);
        items++;
    }
    if (rc == 0 && items == 0) rc = arb_errf(msg, len, ARB_EPARSE, "no port named");
    arb_free(copy);
    return rc;
}

int scn_port_list(const arb_topo *t, const char *list, uint32_t **ports, unsigned *n_ports,
                  char *msg, size_t len)
{
    *ports = NULL;
    *n_ports = 0;
    uint32_t np = arb_topo_n_ports(t);
    uint8_t *mark = arb_calloc(np ? np : 1, 1);
    if (!mark) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    int rc = scn_port_mark(t, list, mark, msg, len);
    unsigned cnt = 0;
    for (uint32_t p = 0; rc == 0 && p < np; p++)
        cnt += mark[p];
    uint32_t *out = rc == 0 ? arb_malloc((cnt ? cnt : 1) * sizeof *out) : NULL;
    if (rc == 0 && !out) rc = arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    if (rc == 0) {
        cnt = 0;
        for (uint32_t p = 0; p < np; p++)
            if (mark[p]) out[cnt++] = p;
        *ports = out;
        *n_ports = cnt;
    }
    arb_free(mark);
    return rc;
}
