/*
 * The topology arrays: building a PGFT by the closed-form wiring of docs/topology.md,
 * accessors, names and failures.
 */
#include "topo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

arb_topo_config arb_topo_config_default(void)
{
    arb_topo_config c;
    c.rate = ARB_TOPO_DEFAULT_RATE;
    c.up_rate = 0;
    c.delay = ARB_TOPO_DEFAULT_DELAY;
    return c;
}

/* ------------------------------------------------------------------ */
/* Building                                                             */
/* ------------------------------------------------------------------ */

/* Ports of a level-l node: m_l p_l down (l >= 1), w_{l+1} p_{l+1} up (l < h). */
static uint64_t down_ports(const arb_pgft *g, unsigned l)
{
    return l == 0 ? 0 : (uint64_t)g->m[l] * g->p[l];
}

static uint64_t up_ports(const arb_pgft *g, unsigned l)
{
    return l >= g->h ? 0 : (uint64_t)g->w[l + 1] * g->p[l + 1];
}

static int check_params(arb_pgft *g, const char *gen, int code, char *err, size_t errlen,
                        uint64_t *total_nodes, uint64_t *total_ports)
{
    if (g->h < 1 || g->h > ARB_TOPO_MAX_HEIGHT)
        return arb_errf(err, errlen, code, "%s: height %u is outside 1..%d", gen, g->h,
                        ARB_TOPO_MAX_HEIGHT);
    g->m[0] = g->w[0] = g->p[0] = 1;
    for (unsigned l = 1; l <= g->h; l++) {
        if (g->m[l] == 0)
            return arb_errf(err, errlen, code, "%s: m_%u is 0 (must be at least 1)", gen, l);
        if (g->w[l] == 0)
            return arb_errf(err, errlen, code, "%s: w_%u is 0 (must be at least 1)", gen, l);
        if (g->p[l] == 0)
            return arb_errf(err, errlen, code, "%s: p_%u is 0 (must be at least 1)", gen, l);
    }
    for (unsigned l = g->h + 1; l <= ARB_TOPO_MAX_HEIGHT; l++)
        g->m[l] = g->w[l] = g->p[l] = g->W[l] = g->M[l] = g->size[l] = 0;
    /* Hosts: M_h = m_1 ... m_h. */
    uint64_t M = 1, W = 1;
    g->M[0] = g->W[0] = 1;
    for (unsigned l = 1; l <= g->h; l++) {
        M *= g->m[l];
        if (M > ARB_TOPO_MAX_HOSTS)
            return arb_errf(err, errlen, code,
                            "%s: m_1 * ... * m_%u exceeds %u hosts, the largest fabric", gen, l,
                            ARB_TOPO_MAX_HOSTS);
        W *= g->w[l];
        if (W > ARB_TOPO_MAX_NODES)
            return arb_errf(err, errlen, code, "%s: w_1 * ... * w_%u exceeds %u nodes at level %u",
                            gen, l, ARB_TOPO_MAX_NODES, l);
        g->M[l] = (uint32_t)M;
        g->W[l] = (uint32_t)W;
    }
    uint64_t nodes = 0, ports = 0;
    for (unsigned l = 0; l <= g->h; l++) {
        uint64_t size = (uint64_t)g->W[l] * (g->M[g->h] / g->M[l]);
        if (size > ARB_TOPO_MAX_NODES)
            return arb_errf(err, errlen, code, "%s: level %u would have %llu nodes, above %u", gen,
                            l, (unsigned long long)size, ARB_TOPO_MAX_NODES);
        g->size[l] = (uint32_t)size;
        uint64_t radix = down_ports(g, l) + up_ports(g, l);
        if (radix > ARB_TOPO_MAX_RADIX) {
            if (l == 0)
                return arb_errf(err, errlen, code,
                                "%s: a host would have %llu ports (w_1 p_1), above %u", gen,
                                (unsigned long long)radix, ARB_TOPO_MAX_RADIX);
            return arb_errf(err, errlen, code,
                            "%s: a level-%u switch would have %llu ports (m_%u p_%u + "
                            "w_%u p_%u), above %u",
                            gen, l, (unsigned long long)radix, l, l, l + 1, l + 1,
                            ARB_TOPO_MAX_RADIX);
        }
        nodes += size;
        ports += size * radix;
        if (nodes > ARB_TOPO_MAX_NODES)
            return arb_errf(err, errlen, code, "%s: more than %u nodes", gen, ARB_TOPO_MAX_NODES);
        if (ports > ARB_TOPO_MAX_PORTS)
            return arb_errf(err, errlen, code, "%s: more than %u directed links", gen,
                            ARB_TOPO_MAX_PORTS);
    }
    *total_nodes = nodes;
    *total_ports = ports;
    return 0;
}

int topo_build(arb_topo **out, arb_pgft *g, const struct topo_rates *r, const char *gen, int code,
               char *err, size_t errlen)
{
    uint64_t n_nodes = 0, n_ports = 0;
    int rc = check_params(g, gen, code, err, errlen, &n_nodes, &n_ports);
    if (rc < 0) return rc;
    arb_topo *t = arb_calloc(1, sizeof *t);
    if (!t) return arb_errf(err, errlen, ARB_ENOMEM, "%s: out of memory", gen);
    t->g = *g;
    t->n_hosts = g->M[g->h];
    t->n_nodes = (uint32_t)n_nodes;
    t->n_ports = (uint32_t)n_ports;
    t->nodes = arb_malloc((size_t)n_nodes * sizeof *t->nodes);
    /* Line-aligned: a port (32 bytes) never straddles two cache lines, so a
     * simulator's one prefetch of it brings all of it. */
    _Static_assert(64 % sizeof(arb_port) == 0, "ports tile cache lines");
    size_t port_bytes = (n_ports ? (size_t)n_ports : 1) * sizeof *t->ports;
    t->ports = arb_aligned_alloc(64, (port_bytes + 63) / 64 * 64);
    if (!t->nodes || !t->ports) {
        arb_topo_free(t);
        return arb_errf(err, errlen, ARB_ENOMEM,
                        "%s: out of memory for %llu nodes and %llu "
                        "ports",
                        gen, (unsigned long long)n_nodes, (unsigned long long)n_ports);
    }

    /* Nodes, level by level; each node's ports follow the previous node's. */
    uint32_t id = 0, port = 0;
    for (unsigned l = 0; l <= g->h; l++) {
        t->level_first[l] = id;
        uint16_t nd = (uint16_t)down_ports(g, l), nu = (uint16_t)up_ports(g, l);
        for (uint32_t i = 0; i < g->size[l]; i++, id++) {
            arb_node *n = &t->nodes[id];
            n->first_port = port;
            n->first_up = port + nd;
            n->index = i;
            n->hosts_from = i / g->W[l] * g->M[l];
            n->n_down = nd;
            n->n_up = nu;
            n->kind = l == 0 ? ARB_NODE_HOST : ARB_NODE_SWITCH;
            n->level = (uint8_t)l;
            n->failed = 0;
            n->reserved = 0;
            port += (uint32_t)nd + nu;
        }
    }
    t->level_first[g->h + 1] = id;

    /*
     * Links, from below: up port q of level-l node idx goes to the parent
     * whose digit l+1 is b = q mod w_{l+1}, parallel link k = q / w_{l+1};
     * the parent's down port is d = a + m_{l+1} k with a the child's digit
     * l+1. Every down port is the reverse of exactly one up port, so this
     * loop fills every port once.
     */
    for (unsigned l = 0; l < g->h; l++) {
        uint32_t Wl = g->W[l], wn = g->w[l + 1], mn = g->m[l + 1];
        uint64_t rate = l == 0 ? r->host_rate : r->up_rate;
        for (uint32_t i = 0; i < g->size[l]; i++) {
            const arb_node *n = &t->nodes[t->level_first[l] + i];
            uint32_t lo = i % Wl, a = (i / Wl) % mn, hi = i / Wl / mn;
            for (uint32_t q = 0; q < n->n_up; q++) {
                uint32_t b = q % wn, k = q / wn;
                uint32_t pidx = lo + b * Wl + hi * (Wl * wn);
                uint32_t parent = t->level_first[l + 1] + pidx;
                uint32_t d = a + mn * k;
                uint32_t up = n->first_up + q, down = t->nodes[parent].first_port + d;
                arb_port *pu = &t->ports[up], *pd = &t->ports[down];
                pu->rate = pd->rate = rate;
                pu->delay = pd->delay = r->delay;
                pu->peer = parent;
                pu->peer_port = down;
                pu->num = (uint16_t)q;
                pu->role = ARB_LINK_UP;
                pd->peer = t->level_first[l] + i;
                pd->peer_port = up;
                pd->num = (uint16_t)d;
                pd->role = ARB_LINK_DOWN;
                pu->parallel = pd->parallel = (uint16_t)k;
                pu->tier = pd->tier = (uint8_t)l;
                pu->failed = pd->failed = 0;
                pu->reserved = pd->reserved = 0;
            }
        }
    }
    *out = t;
    return 0;
}

int arb_topo_new_pgft(arb_topo **out, const arb_pgft *g, const arb_topo_config *cfg, char *err,
                      size_t errlen)
{
    if (out) *out = NULL;
    if (!out || !g) return arb_errf(err, errlen, ARB_EINVAL, "pgft: no output or parameters");
    arb_topo_config def = arb_topo_config_default();
    if (!cfg) cfg = &def;
    if (cfg->rate == 0 || cfg->rate > ARB_RATE_MAX || cfg->up_rate > ARB_RATE_MAX)
        return arb_errf(err, errlen, ARB_EINVAL, "pgft: link rate outside 1..%llu b/s",
                        (unsigned long long)ARB_RATE_MAX);
    struct topo_rates r = {cfg->rate, cfg->up_rate ? cfg->up_rate : cfg->rate, cfg->delay};
    arb_pgft copy = *g;
    arb_topo *t;
    int rc = topo_build(&t, &copy, &r, "pgft", ARB_ERANGE, err, errlen);
    if (rc < 0) return rc;
    t->kind = ARB_TOPO_PGFT;
    /* Canonical spec: pgft:H;m..;w..;p.. */
    size_t n = (size_t)snprintf(t->spec, sizeof t->spec, "pgft:%u", t->g.h);
    const uint32_t *lists[3] = {t->g.m, t->g.w, t->g.p};
    for (int li = 0; li < 3; li++)
        for (unsigned l = 1; l <= t->g.h && n < sizeof t->spec; l++)
            n += (size_t)snprintf(t->spec + n, sizeof t->spec - n, "%c%u", l == 1 ? ';' : ',',
                                  lists[li][l]);
    *out = t;
    return 0;
}

void arb_topo_free(arb_topo *t)
{
    if (!t) return;
    arb_free(t->nodes);
    arb_free(t->ports);
    arb_free(t->loss);
    arb_free(t->dup);
    arb_free(t->reorder);
    arb_free(t->cut);
    arb_free(t);
}

/* ------------------------------------------------------------------ */
/* Reading                                                              */
/* ------------------------------------------------------------------ */

const char *arb_topo_spec(const arb_topo *t)
{
    return t->spec;
}

arb_topo_kind arb_topo_get_kind(const arb_topo *t)
{
    return t->kind;
}

const char *arb_topo_kind_name(int kind)
{
    static const char *const names[] = {"star", "leafspine", "kary", "pgft", "dualplane", "rail"};
    if (kind < 0 || kind >= (int)(sizeof names / sizeof names[0])) return NULL;
    return names[kind];
}

const arb_pgft *arb_topo_pgft(const arb_topo *t)
{
    return &t->g;
}

unsigned arb_topo_height(const arb_topo *t)
{
    return t->g.h;
}

uint32_t arb_topo_n_hosts(const arb_topo *t)
{
    return t->n_hosts;
}

uint32_t arb_topo_n_nodes(const arb_topo *t)
{
    return t->n_nodes;
}

uint32_t arb_topo_n_ports(const arb_topo *t)
{
    return t->n_ports;
}

uint32_t arb_topo_level_size(const arb_topo *t, unsigned level)
{
    return level > t->g.h ? 0 : t->g.size[level];
}

uint32_t arb_topo_level_first(const arb_topo *t, unsigned level)
{
    return level > t->g.h ? 0 : t->level_first[level];
}

uint32_t arb_topo_node_id(const arb_topo *t, unsigned level, uint32_t index)
{
    if (level > t->g.h || index >= t->g.size[level]) return ARB_TOPO_NONE;
    return t->level_first[level] + index;
}

const arb_node *arb_topo_nodes(const arb_topo *t)
{
    return t->nodes;
}

const arb_port *arb_topo_ports(const arb_topo *t)
{
    return t->ports;
}

const arb_node *arb_topo_node(const arb_topo *t, uint32_t node)
{
    return node < t->n_nodes ? &t->nodes[node] : NULL;
}

const arb_port *arb_topo_port(const arb_topo *t, uint32_t port)
{
    return port < t->n_ports ? &t->ports[port] : NULL;
}

uint32_t arb_topo_port_owner(const arb_topo *t, uint32_t port)
{
    if (port >= t->n_ports) return ARB_TOPO_NONE;
    return t->ports[t->ports[port].peer_port].peer;
}

const char *arb_topo_level_name(const arb_topo *t, unsigned level)
{
    static const char *const generic[] = {"L0",  "L1",  "L2",  "L3",  "L4",  "L5",
                                          "L6",  "L7",  "L8",  "L9",  "L10", "L11",
                                          "L12", "L13", "L14", "L15", "L16"};
    unsigned h = t->g.h;
    if (level > h) return NULL;
    if (level == 0) return "host";
    switch (t->kind) {
    case ARB_TOPO_STAR:
        return "switch";
    case ARB_TOPO_LEAFSPINE:
        return level == 1 ? "leaf" : "spine";
    case ARB_TOPO_RAIL:
        return level == 1 ? "rail" : "spine";
    case ARB_TOPO_DUALPLANE:
        return level == 1 ? "tor" : level == 2 ? "agg" : "core";
    default:
        break;
    }
    if (level == 1) return h == 1 ? "switch" : "leaf";
    if (level == h) return h == 2 ? "spine" : "top";
    return generic[level];
}

int arb_topo_below(const arb_topo *t, uint32_t node, uint32_t j)
{
    if (node >= t->n_nodes || j >= t->n_hosts) return ARB_EINVAL;
    return arb_pgft_below(&t->g, &t->nodes[node], j);
}

int arb_topo_down_port(const arb_topo *t, uint32_t node, uint32_t j, uint32_t *port)
{
    if (node >= t->n_nodes || j >= t->n_hosts || t->nodes[node].kind != ARB_NODE_SWITCH)
        return ARB_EINVAL;
    if (!arb_pgft_below(&t->g, &t->nodes[node], j)) return ARB_ENOENT;
    if (port) *port = arb_pgft_down_port(&t->g, &t->nodes[node], j);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */

int arb_topo_node_name(const arb_topo *t, uint32_t node, char *buf, size_t len)
{
    if (node >= t->n_nodes) return ARB_EINVAL;
    const arb_node *n = &t->nodes[node];
    int w = n->kind == ARB_NODE_HOST ? snprintf(buf, len, "h%u", n->index)
                                     : snprintf(buf, len, "L%u.%u", n->level, n->index);
    return w < 0 || (size_t)w >= len ? ARB_ENOSPC : 0;
}

/* Digits into *v (no sign, no leading '+', at most 10 digits); returns chars used. */
static size_t scan_u32(const char *s, uint32_t *v)
{
    uint64_t x = 0;
    size_t i = 0;
    while (s[i] >= '0' && s[i] <= '9') {
        x = x * 10 + (uint64_t)(s[i] - '0');
        if (x > UINT32_MAX) return 0;
        i++;
    }
    *v = (uint32_t)x;
    return i;
}

int arb_topo_find(const arb_topo *t, const char *name, uint32_t *node)
{
    if (!name) return ARB_EPARSE;
    uint32_t a, b;
    size_t n;
    if (name[0] == 'h') {
        n = scan_u32(name + 1, &a);
        if (n == 0 || name[1 + n] != '\0') return ARB_EPARSE;
        if (a >= t->n_hosts) return ARB_ENOENT;
        if (node) *node = a;
        return 0;
    }
    if (name[0] != 'L') return ARB_EPARSE;
    n = scan_u32(name + 1, &a);
    if (n == 0 || name[1 + n] != '.') return ARB_EPARSE;
    const char *s = name + 2 + n;
    n = scan_u32(s, &b);
    if (n == 0 || s[n] != '\0') return ARB_EPARSE;
    if (a == 0 || a > t->g.h || b >= t->g.size[a]) return ARB_ENOENT;
    if (node) *node = t->level_first[a] + b;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Failures                                                             */
/* ------------------------------------------------------------------ */

int topo_cut_room(arb_topo *t)
{
    if (!t->cut) t->cut = arb_calloc(t->n_ports ? t->n_ports : 1, 1);
    return t->cut ? 0 : ARB_ENOMEM;
}

/* Set the failed flag of both directions of port's link. */
static void mark_link(arb_topo *t, uint32_t port, uint8_t failed)
{
    t->ports[port].failed = failed;
    t->ports[t->ports[port].peer_port].failed = failed;
}

/* Whether a switch at either end of port's link is failed. */
static int end_failed(const arb_topo *t, uint32_t port)
{
    const arb_port *p = &t->ports[port];
    return t->nodes[p->peer].failed || t->nodes[t->ports[p->peer_port].peer].failed;
}

int arb_topo_fail_link(arb_topo *t, uint32_t port)
{
    if (port >= t->n_ports) return ARB_EINVAL;
    if (topo_cut_room(t) < 0) return ARB_ENOMEM;
    t->cut[port] = t->cut[t->ports[port].peer_port] = 1;
    mark_link(t, port, 1);
    t->failure_gen++;
    return 0;
}

int arb_topo_fail_node(arb_topo *t, uint32_t node)
{
    if (node >= t->n_nodes || t->nodes[node].kind != ARB_NODE_SWITCH) return ARB_EINVAL;
    arb_node *n = &t->nodes[node];
    n->failed = 1;
    uint32_t end = n->first_port + n->n_down + n->n_up;
    for (uint32_t p = n->first_port; p < end; p++)
        mark_link(t, p, 1);
    t->failure_gen++;
    return 0;
}

int arb_topo_restore_link(arb_topo *t, uint32_t port)
{
    if (!t || port >= t->n_ports) return ARB_EINVAL;
    if (t->cut) t->cut[port] = t->cut[t->ports[port].peer_port] = 0;
    mark_link(t, port, (uint8_t)end_failed(t, port));
    t->failure_gen++;
    return 0;
}

int arb_topo_restore_node(arb_topo *t, uint32_t node)
{
    if (!t || node >= t->n_nodes || t->nodes[node].kind != ARB_NODE_SWITCH) return ARB_EINVAL;
    arb_node *n = &t->nodes[node];
    n->failed = 0;
    uint32_t end = n->first_port + n->n_down + n->n_up;
    for (uint32_t p = n->first_port; p < end; p++)
        mark_link(t, p, (uint8_t)((t->cut && t->cut[p]) || end_failed(t, p)));
    t->failure_gen++;
    return 0;
}

void arb_topo_clear_failures(arb_topo *t)
{
    for (uint32_t i = 0; i < t->n_nodes; i++)
        t->nodes[i].failed = 0;
    for (uint32_t p = 0; p < t->n_ports; p++)
        t->ports[p].failed = 0;
    if (t->cut) memset(t->cut, 0, t->n_ports);
    t->failure_gen++;
}

uint64_t arb_topo_failure_gen(const arb_topo *t)
{
    return t->failure_gen;
}

const uint64_t *arb_topo_failure_gen_ref(const arb_topo *t)
{
    return &t->failure_gen;
}

void arb_topo_count_failed(const arb_topo *t, uint32_t *links, uint32_t *switches)
{
    uint32_t nl = 0, ns = 0;
    for (uint32_t p = 0; p < t->n_ports; p++)
        if (t->ports[p].failed && t->ports[p].role == ARB_LINK_UP) nl++;
    for (uint32_t i = t->n_hosts; i < t->n_nodes; i++)
        ns += t->nodes[i].failed;
    if (links) *links = nl;
    if (switches) *switches = ns;
}

/* Set a per-link probability in *arr (made on first use, -1 for unset). */
static int set_link_prob(arb_topo *t, double **arr, uint32_t port, double p)
{
    if (!t || port >= t->n_ports || !(p >= 0 && p < 1)) return ARB_EINVAL;
    if (!*arr) {
        *arr = arb_malloc(t->n_ports * sizeof **arr);
        if (!*arr) return ARB_ENOMEM;
        for (uint32_t i = 0; i < t->n_ports; i++)
            (*arr)[i] = -1;
    }
    (*arr)[port] = (*arr)[t->ports[port].peer_port] = p;
    return 0;
}

static double link_prob(const arb_topo *t, const double *arr, uint32_t port)
{
    return t && arr && port < t->n_ports ? arr[port] : -1;
}

int arb_topo_set_link_loss(arb_topo *t, uint32_t port, double loss)
{
    return set_link_prob(t, t ? &t->loss : NULL, port, loss);
}

double arb_topo_link_loss(const arb_topo *t, uint32_t port)
{
    return link_prob(t, t ? t->loss : NULL, port);
}

int arb_topo_set_link_dup(arb_topo *t, uint32_t port, double dup)
{
    return set_link_prob(t, t ? &t->dup : NULL, port, dup);
}

double arb_topo_link_dup(const arb_topo *t, uint32_t port)
{
    return link_prob(t, t ? t->dup : NULL, port);
}

int arb_topo_set_link_reorder(arb_topo *t, uint32_t port, double reorder)
{
    return set_link_prob(t, t ? &t->reorder : NULL, port, reorder);
}

double arb_topo_link_reorder(const arb_topo *t, uint32_t port)
{
    return link_prob(t, t ? t->reorder : NULL, port);
}

int arb_topo_set_link(arb_topo *t, uint32_t port, uint64_t rate, arb_time delay)
{
    if (port >= t->n_ports || rate == 0 || rate > ARB_RATE_MAX) return ARB_EINVAL;
    arb_port *a = &t->ports[port], *b = &t->ports[t->ports[port].peer_port];
    a->rate = b->rate = rate;
    a->delay = b->delay = delay;
    return 0;
}
