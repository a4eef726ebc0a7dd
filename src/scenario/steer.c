/*
 * Per-link settings (fabric.link), timed route overrides (routing.steer)
 * and the per-QP order count (run.qp_order) of scenarios.
 *
 * Both list keys take entries of words separated by blanks, commas or
 * semicolons; a word with '=' is a setting of the current entry, a word
 * without one starts a new entry (fabric.link: the links the settings
 * apply to, several words allowed; routing.steer: the switch).
 */
#include "scn_int.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

#define NONE UINT32_MAX

/* Split text into words (a malloc'd copy with NULs; words[] point into it). */
static int split(const char *text, char **copy, char ***words, unsigned *n, char *msg, size_t len)
{
    size_t tl = strlen(text);
    *copy = arb_malloc(tl + 1);
    *words = arb_malloc((tl / 2 + 2) * sizeof **words);
    if (!*copy || !*words) {
        arb_free(*copy);
        arb_free(*words);
        return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    }
    memcpy(*copy, text, tl + 1);
    *n = 0;
    char *save = NULL;
    for (char *w = strtok_r(*copy, " \t,;", &save); w; w = strtok_r(NULL, " \t,;", &save))
        (*words)[(*n)++] = w;
    return 0;
}

/* ---- fabric.link ------------------------------------------------------- */

/* A probability setting NAME=V (what: its noun) in [0, 1). */
static int parse_prob(const char *item, const char *v, const char *what, double *out, char *msg,
                      size_t len)
{
    char *end;
    *out = strtod(v, &end);
    if (!*v || *end || !(*out >= 0 && *out < 1))
        return arb_errf(msg, len, ARB_EPARSE, "'%s': not a %s probability (a number in [0, 1))",
                        item, what);
    return 0;
}

int scn_links_apply(arb_topo *t, const char *text, char *msg, size_t len)
{
    char *copy, **w;
    unsigned n;
    int rc = split(text, &copy, &w, &n, msg, len);
    if (rc < 0) return rc;
    uint32_t np = arb_topo_n_ports(t);
    uint8_t *mark = arb_calloc(np ? np : 1, 1);
    if (!mark) rc = arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    unsigned i = 0;
    while (rc == 0 && i < n) {
        /* the links: words without '=' */
        memset(mark, 0, np);
        unsigned first = i;
        for (; i < n && !strchr(w[i], '=') && rc == 0; i++)
            rc = scn_port_mark(t, w[i], mark, msg, len);
        if (rc < 0) break;
        if (i == first) {
            rc = arb_errf(msg, len, ARB_EPARSE, "'%s': a setting before any link", w[i]);
            break;
        }
        uint64_t rate = 0;
        arb_time delay = ARB_TIME_NEVER;
        double loss = -1, dup = -1, reorder = -1;
        unsigned settings = 0;
        const char *given[5] = {"rate", "delay", "loss", "dup", "reorder"};
        unsigned seen = 0;
        for (; i < n && strchr(w[i], '='); i++, settings++) {
            const char *v = strchr(w[i], '=') + 1;
            size_t kl = (size_t)(v - 1 - w[i]);
            for (unsigned g = 0; g < 5; g++) {
                if (strlen(given[g]) != kl || strncmp(w[i], given[g], kl) != 0) continue;
                if (seen & (1u << g))
                    rc = arb_errf(msg, len, ARB_EPARSE, "'%s': %s= given twice for these links",
                                  w[i], given[g]);
                seen |= 1u << g;
            }
            if (rc < 0) break;
            if (kl == 4 && strncmp(w[i], "rate", 4) == 0) {
                if (arb_topo_parse_rate(v, &rate) < 0)
                    rc = arb_errf(msg, len, ARB_EPARSE, "'%s': not a rate", w[i]);
            } else if (kl == 5 && strncmp(w[i], "delay", 5) == 0) {
                if (arb_topo_parse_time(v, &delay) < 0)
                    rc = arb_errf(msg, len, ARB_EPARSE, "'%s': not a time", w[i]);
            } else if (kl == 4 && strncmp(w[i], "loss", 4) == 0) {
                rc = parse_prob(w[i], v, "loss", &loss, msg, len);
            } else if (kl == 3 && strncmp(w[i], "dup", 3) == 0) {
                rc = parse_prob(w[i], v, "duplication", &dup, msg, len);
            } else if (kl == 7 && strncmp(w[i], "reorder", 7) == 0) {
                rc = parse_prob(w[i], v, "reordering", &reorder, msg, len);
            } else {
                rc = arb_errf(msg, len, ARB_EPARSE,
                              "'%s': unknown setting (rate=, delay=, loss=, dup=, reorder=)", w[i]);
            }
            if (rc < 0) break;
        }
        if (rc == 0 && settings == 0)
            rc = arb_errf(msg, len, ARB_EPARSE,
                          "'%s': no rate=, delay=, loss=, dup= or reorder= for these links",
                          w[first]);
        for (uint32_t p = 0; rc == 0 && p < np; p++) {
            if (!mark[p]) continue;
            const arb_port *pt = arb_topo_port(t, p);
            rc = arb_topo_set_link(t, p, rate ? rate : pt->rate,
                                   delay != ARB_TIME_NEVER ? delay : pt->delay);
            if (rc < 0) {
                rc = arb_errf(msg, len, rc, "'%s': rate out of range", w[first]);
                break;
            }
            if (loss >= 0) rc = arb_topo_set_link_loss(t, p, loss);
            if (rc == 0 && dup >= 0) rc = arb_topo_set_link_dup(t, p, dup);
            if (rc == 0 && reorder >= 0) rc = arb_topo_set_link_reorder(t, p, reorder);
            if (rc < 0) rc = arb_errf(msg, len, rc, "out of memory");
        }
    }
    arb_free(mark);
    arb_free(w);
    arb_free(copy);
    return rc;
}

/* ---- routing.steer ----------------------------------------------------- */

struct rule {
    uint32_t node;
    uint32_t src, dst; /* host indices or NONE (any) */
    int kind;          /* -1 any, 0 data, 1 control (ack, NACK, CNP) */
    arb_time from, until;
    uint32_t port; /* global port */
};

struct scn_steer {
    arb_sim_route_fn base;
    void *base_ctx;
    struct rule *r;
    unsigned n;
    uint8_t *has; /* per node: a rule names it */
};

static uint32_t steer_route(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                            const arb_sim_pkt_info *f, arb_time now)
{
    const struct scn_steer *st = ctx;
    if (st->has[node]) {
        for (unsigned i = 0; i < st->n; i++) {
            const struct rule *r = &st->r[i];
            if (r->node != node || now < r->from || now >= r->until) continue;
            if ((r->src != NONE && f->src != r->src) || (r->dst != NONE && f->dst != r->dst))
                continue;
            if (r->kind >= 0 && (f->kind == ARB_SIM_DATA) != (r->kind == 0)) continue;
            return r->port;
        }
    }
    return st->base(st->base_ctx, s, node, in_port, f, now);
}

static int host_of(const arb_topo *t, const char *v, uint32_t *h)
{
    uint32_t node;
    if (arb_topo_find(t, v, &node) < 0) return -1;
    const arb_node *nd = arb_topo_node(t, node);
    if (nd->kind != ARB_NODE_HOST) return -1;
    *h = nd->index;
    return 0;
}

static int parse_u32(const char *s, uint32_t *v)
{
    char *end;
    unsigned long x = strtoul(s, &end, 10);
    if (!*s || *end || x > UINT32_MAX || *s == '-' || *s == '+') return -1;
    *v = (uint32_t)x;
    return 0;
}

static int rule_setting(const arb_topo *t, struct rule *r, const char *word, int *has_port,
                        char *msg, size_t len)
{
    const char *v = strchr(word, '=') + 1;
    size_t kl = (size_t)(v - 1 - word);
    const arb_node *nd = arb_topo_node(t, r->node);
#define IS(k) (kl == sizeof(k) - 1 && strncmp(word, k, kl) == 0)
    if (IS("src") || IS("dst")) {
        if (host_of(t, v, IS("src") ? &r->src : &r->dst) < 0)
            return arb_errf(msg, len, ARB_EPARSE, "'%s': not a host name (h0, h1, ...)", word);
    } else if (IS("kind")) {
        if (strcmp(v, "data") == 0)
            r->kind = 0;
        else if (strcmp(v, "ctrl") == 0)
            r->kind = 1;
        else if (strcmp(v, "any") == 0)
            r->kind = -1;
        else
            return arb_errf(msg, len, ARB_EPARSE, "'%s': kind is data, ctrl or any", word);
    } else if (IS("from") || IS("until")) {
        if (arb_topo_parse_time(v, IS("from") ? &r->from : &r->until) < 0)
            return arb_errf(msg, len, ARB_EPARSE, "'%s': not a time", word);
    } else if (IS("up") || IS("down") || IS("port")) {
        uint32_t q;
        uint32_t limit = IS("up") ? nd->n_up : IS("down") ? nd->n_down : nd->n_down + nd->n_up;
        if (parse_u32(v, &q) < 0 || q >= limit)
            return arb_errf(msg, len, ARB_ENOENT, "'%s': the switch has %u such ports", word,
                            limit);
        r->port = (IS("up") ? nd->first_up : nd->first_port) + q;
        *has_port = 1;
    } else {
        return arb_errf(msg, len, ARB_EPARSE,
                        "'%s': unknown setting (src=, dst=, kind=, from=, until=, up=, down=, "
                        "port=)",
                        word);
    }
#undef IS
    return 0;
}

void scn_steer_free(struct scn_steer *st)
{
    if (!st) return;
    arb_free(st->r);
    arb_free(st->has);
    arb_free(st);
}

int scn_steer_make(struct scn_steer **out, const arb_topo *t, const char *text, arb_sim_config *cfg,
                   char *msg, size_t len)
{
    *out = NULL;
    char *copy, **w;
    unsigned n;
    int rc = split(text, &copy, &w, &n, msg, len);
    if (rc < 0) return rc;
    struct scn_steer *st = arb_calloc(1, sizeof *st);
    if (st) {
        st->r = arb_calloc(n ? n : 1, sizeof *st->r);
        st->has = arb_calloc(arb_topo_n_nodes(t), 1);
    }
    if (!st || !st->r || !st->has) rc = arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    unsigned i = 0;
    while (rc == 0 && i < n) {
        struct rule *r = &st->r[st->n];
        if (strchr(w[i], '=')) {
            rc = arb_errf(msg, len, ARB_EPARSE, "'%s': a setting before any switch", w[i]);
            break;
        }
        int frc = arb_topo_find(t, w[i], &r->node);
        if (frc < 0 || arb_topo_node(t, r->node)->kind != ARB_NODE_SWITCH) {
            rc = arb_errf(msg, len, frc == ARB_ENOENT ? ARB_ENOENT : ARB_EPARSE,
                          "'%s' is not a switch of the fabric", w[i]);
            break;
        }
        const char *name = w[i++];
        r->src = r->dst = NONE;
        r->kind = -1;
        r->from = 0;
        r->until = ARB_TIME_NEVER;
        int has_port = 0;
        for (; i < n && strchr(w[i], '=') && rc == 0; i++)
            rc = rule_setting(t, r, w[i], &has_port, msg, len);
        if (rc == 0 && !has_port)
            rc = arb_errf(msg, len, ARB_EPARSE, "'%s': no up=, down= or port= for this rule", name);
        if (rc == 0 && r->from >= r->until)
            rc = arb_errf(msg, len, ARB_EPARSE, "'%s': from= is not before until=", name);
        if (rc == 0) {
            st->has[r->node] = 1;
            st->n++;
        }
    }
    arb_free(w);
    arb_free(copy);
    if (rc < 0) {
        scn_steer_free(st);
        return rc;
    }
    st->base = cfg->route;
    st->base_ctx = cfg->route_ctx;
    cfg->route = steer_route;
    cfg->route_ctx = st;
    *out = st;
    return 0;
}

/* ---- run.qp_order ------------------------------------------------------ */

struct qpent {
    uint64_t hosts; /* (src + 1) << 32 | dst; 0: empty */
    uint64_t qp;    /* sport << 32 | QP */
    uint64_t max;   /* highest (flow + 1) << 32 | psn seen */
};

struct scn_order {
    const arb_topo *t;
    struct qpent *tab;
    uint32_t cap, n;
    uint64_t ooo, pkts;
    int error;
    arb_sim_tap_fn next;
    void *next_ctx;
};

static uint32_t slot_of(uint64_t hosts, uint64_t qp, uint32_t cap)
{
    return (uint32_t)arb_mix64(hosts ^ arb_mix64(qp)) & (cap - 1);
}

static int order_grow(struct scn_order *o)
{
    uint32_t ncap = o->cap ? o->cap * 2 : 1024;
    struct qpent *nt = arb_calloc(ncap, sizeof *nt);
    if (!nt) return -1;
    for (uint32_t i = 0; i < o->cap; i++) {
        if (!o->tab[i].hosts) continue;
        uint32_t j = slot_of(o->tab[i].hosts, o->tab[i].qp, ncap);
        while (nt[j].hosts)
            j = (j + 1) & (ncap - 1);
        nt[j] = o->tab[i];
    }
    arb_free(o->tab);
    o->tab = nt;
    o->cap = ncap;
    return 0;
}

static void order_tap(void *ctx, const arb_sim *s, uint32_t port, const arb_sim_pkt_info *f,
                      arb_time now)
{
    struct scn_order *o = ctx;
    const arb_port *pt = arb_topo_port(o->t, port);
    if (f->kind == ARB_SIM_DATA && arb_topo_node(o->t, pt->peer)->kind == ARB_NODE_HOST &&
        !o->error) {
        if (2 * (o->n + 1) > o->cap && order_grow(o) < 0) {
            o->error = ARB_ENOMEM;
        } else {
            uint64_t hosts = ((uint64_t)f->src + 1) << 32 | f->dst;
            uint64_t qp = (uint64_t)f->sport << 32 | f->qp;
            uint32_t j = slot_of(hosts, qp, o->cap);
            while (o->tab[j].hosts && (o->tab[j].hosts != hosts || o->tab[j].qp != qp))
                j = (j + 1) & (o->cap - 1);
            if (!o->tab[j].hosts) {
                o->tab[j].hosts = hosts;
                o->tab[j].qp = qp;
                o->n++;
            }
            uint64_t seq = ((uint64_t)f->conn + 1) << 32 | f->psn;
            o->pkts++;
            if (seq < o->tab[j].max)
                o->ooo++;
            else
                o->tab[j].max = seq;
        }
    }
    if (o->next) o->next(o->next_ctx, s, port, f, now);
}

int scn_order_make(struct scn_order **out, const arb_topo *t, arb_sim_config *cfg)
{
    struct scn_order *o = arb_calloc(1, sizeof *o);
    if (!o) return ARB_ENOMEM;
    o->t = t;
    o->next = cfg->tap;
    o->next_ctx = cfg->tap_ctx;
    cfg->tap = order_tap;
    cfg->tap_ctx = o;
    *out = o;
    return 0;
}

int scn_order_merge(struct scn_order *o, const arb_sim_part_ops *ops)
{
    uint64_t v[2] = {o->ooo, o->pkts}, e = o->error ? (uint64_t)-o->error : UINT64_MAX;
    int rc = ops->allsum(ops->ctx, v, 2);
    if (rc == 0) rc = ops->allmin(ops->ctx, &e, 1);
    if (rc < 0) return rc;
    o->ooo = v[0];
    o->pkts = v[1];
    if (e != UINT64_MAX) o->error = -(int)e; /* (scn_order_get says it) */
    return 0;
}

int scn_order_get(const struct scn_order *o, uint64_t *ooo, uint64_t *pkts)
{
    *ooo = o->ooo;
    *pkts = o->pkts;
    return o->error;
}

void scn_order_free(struct scn_order *o)
{
    if (!o) return;
    arb_free(o->tab);
    arb_free(o);
}
