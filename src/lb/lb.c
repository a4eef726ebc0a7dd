/*
 * Load balancing in the simulated switches (lb.h): the dynamic choosers,
 * each a scheme of its own (lb_int.h), behind one route callback, and
 * CONGA's in-band hook. The static routing functions are route/'s
 * (route.h); a routing engine named as a scheme is the `route` scheme
 * (engine.c) deciding by arb_route_next alone.
 *
 * This file: the registry of schemes, parsing a scheme string, the
 * callbacks the simulator calls (dispatched to the scheme), and the
 * helpers the schemes share. Per packet and hop: the candidate set into a
 * stack array, a few loads, at most two hashes; no allocation.
 */
#include "lb_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

/* The registry: one scheme per arb_lb_kind (each defined in its own file). */
extern const struct lb_scheme lb_scheme_route, lb_scheme_ar, lb_scheme_ar_ftree, lb_scheme_flowlet,
    lb_scheme_letflow, lb_scheme_conga, lb_scheme_spray;
static const struct lb_scheme *const schemes[ARB_LB_KIND_COUNT] = {
    [ARB_LB_ROUTE] = &lb_scheme_route,       [ARB_LB_AR] = &lb_scheme_ar,
    [ARB_LB_AR_FTREE] = &lb_scheme_ar_ftree, [ARB_LB_FLOWLET] = &lb_scheme_flowlet,
    [ARB_LB_LETFLOW] = &lb_scheme_letflow,   [ARB_LB_CONGA] = &lb_scheme_conga,
    [ARB_LB_SPRAY] = &lb_scheme_spray,
};

const char *arb_lb_kind_name(int kind)
{
    return kind >= 0 && kind < ARB_LB_KIND_COUNT ? schemes[kind]->name : NULL;
}

/* ------------------------------------------------------------------ */
/* Shared choosers                                                      */
/* ------------------------------------------------------------------ */

int lb_in_set(uint32_t p, const uint32_t *cands, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (cands[i] == p) return 1;
    return 0;
}

uint32_t lb_argmin(const arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                   const uint32_t *cands, unsigned n)
{
    uint64_t best = UINT64_MAX;
    unsigned ties = 0, first = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t c = arb_sim_port_load(s, cands[i]);
        if (c < best) {
            best = c;
            ties = 1;
            first = i;
        } else if (c == best) {
            ties++;
        }
    }
    if (ties == 1) return cands[first];
    unsigned want = (unsigned)(arb_route_hash(lb->r, node, k) % ties);
    for (unsigned i = first; i < n; i++)
        if (arb_sim_port_load(s, cands[i]) == best && want-- == 0) return cands[i];
    return cands[first]; /* not reached */
}

uint32_t lb_ar_choose(const arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                      const uint32_t *cands, unsigned n, uint32_t cur)
{
    uint32_t best = lb_argmin(lb, s, node, k, cands, n);
    if (!lb->biased || cur == LB_NONE || cur == best) return best;
    uint64_t qc = arb_sim_port_load(s, cur), qb = arb_sim_port_load(s, best);
    return qc * 1000 <= qb * lb->bias_milli + lb->thresh * 1000 ? cur : best;
}

/* The switch's flowlet table, made at its first flowlet decision: every
 * entry empty. NULL when it cannot be allocated. */
static LB_COLD struct flowlet *flowlet_table(arb_lb *lb, uint32_t node)
{
    struct flowlet *t = arb_malloc(sizeof *t * (lb->fl_mask + 1));
    if (!t) return NULL;
    for (uint64_t i = 0; i <= lb->fl_mask; i++)
        t[i] = (struct flowlet){0, LB_NONE, 0};
    lb->fl[node] = t;
    lb->st.tables++;
    return t;
}

uint32_t lb_flowlet_pick(arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                         const uint32_t *cands, unsigned n, arb_time now, lb_fresh_fn fresh)
{
    struct flowlet *t = lb->fl[node];
    if (!t && !(t = flowlet_table(lb, node))) return ARB_SIM_ROUTE_ENOMEM;
    uint64_t h = arb_route_hash(lb->r, node, k);
    struct flowlet *e = &t[arb_mix64(h ^ (0x9E3779B97F4A7C15ull * (node + 1))) & lb->fl_mask];
    uint32_t prev = e->port;
    if (prev != LB_NONE && !lb_in_set(prev, cands, n)) prev = LB_NONE; /* failed since */
    if (prev != LB_NONE && now - e->last <= lb->gap) {
        e->last = now;
        return prev;
    }
    uint32_t p = fresh(lb, s, node, k, cands, n, prev, now);
    lb->st.flowlets++;
    if (prev != LB_NONE && p != prev) lb->st.moves++;
    e->port = p;
    e->last = now;
    return p;
}

LB_COLD uint32_t lb_decide_listed(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                                  const arb_route_key *kp, arb_time now)
{
    arb_route_key k = *kp;
    uint32_t cands[ARB_ROUTE_MAX_CANDS];
    int c = arb_route_candidates(lb->r, node, &k, cands, ARB_ROUTE_MAX_CANDS);
    if (c <= 0) {
        lb->st.unroutable++;
        return ARB_TOPO_NONE;
    }
    unsigned n = (unsigned)c;
    if (n == 1) return cands[0];
    lb->st.choices++;
    return lb->sc->choose(lb, s, node, in_port, &k, cands, n, now);
}

/* ------------------------------------------------------------------ */
/* The simulator's callbacks                                            */
/* ------------------------------------------------------------------ */

uint32_t lb_route_listed(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                         const arb_sim_pkt_info *f, arb_time now)
{
    arb_lb *lb = ctx;
    lb->st.decisions++;
    arb_route_key k = lb_key_of(f);
    return lb_decide_listed(lb, s, node, in_port, &k, now);
}

static uint32_t peek_none(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                          const arb_sim_pkt_info *f, uint32_t before, uint64_t *token)
{
    (void)ctx, (void)s, (void)node, (void)in_port, (void)f, (void)before, (void)token;
    return ARB_TOPO_NONE;
}

/* The callbacks arb_lb_new installs: the scheme's own (cfg.route is the
 * scheme's function, not a dispatcher in front of it). */
static arb_sim_route_fn route_fn(const arb_lb *lb)
{
    return lb->sc->route ? lb->sc->route : lb_route_listed;
}

static arb_sim_peek_fn peek_fn(const arb_lb *lb)
{
    return lb->sc->peek ? lb->sc->peek : peek_none;
}

uint32_t arb_lb_route(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                      const arb_sim_pkt_info *f, arb_time now)
{
    return route_fn(ctx)(ctx, s, node, in_port, f, now);
}

uint32_t arb_lb_route_peek(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                           const arb_sim_pkt_info *f, uint32_t before, uint64_t *token)
{
    return peek_fn(ctx)(ctx, s, node, in_port, f, before, token);
}

uint32_t arb_lb_inband(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                       uint32_t out_port, const arb_sim_pkt_info *f, arb_time now)
{
    arb_lb *lb = ctx;
    return lb->sc->inband ? lb->sc->inband(lb, s, node, in_port, out_port, f, now) : f->lb;
}

/* ------------------------------------------------------------------ */
/* Options and specs                                                    */
/* ------------------------------------------------------------------ */

static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s) return ARB_EPARSE;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return ARB_EPARSE;
        if (v > (UINT64_MAX - 9) / 10) return ARB_ERANGE;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

int lb_parse_double(const char *s, double *out)
{
    if (!s || !*s) return ARB_EPARSE;
    char *end;
    double v = strtod(s, &end);
    if (*end || !isfinite(v)) return ARB_EPARSE;
    *out = v;
    return 0;
}

int lb_option_flowlet(arb_lb *lb, const char *key, const char *val)
{
    if (!val) return ARB_ENOENT;
    if (strcmp(key, "gap") == 0) return arb_topo_parse_time(val, &lb->gap);
    if (strcmp(key, "table") != 0) return ARB_ENOENT;
    int rc = parse_u64(val, &lb->table);
    if (rc == 0 && (lb->table == 0 || lb->table > (1u << 30))) rc = ARB_ERANGE;
    return rc;
}

int lb_option_bias(arb_lb *lb, const char *key, const char *val)
{
    if (!val) return ARB_ENOENT;
    if (strcmp(key, "bias") == 0) {
        double b;
        int rc = lb_parse_double(val, &b);
        if (rc == 0 && !(b > 0 && b <= 1e6)) rc = ARB_ERANGE;
        if (rc == 0) lb->bias_milli = (uint64_t)llround(b * 1000);
        if (rc == 0 && lb->bias_milli == 0) rc = ARB_ERANGE;
        return rc;
    }
    if (strcmp(key, "thresh") == 0) {
        int rc = parse_u64(val, &lb->thresh);
        if (rc == 0 && lb->thresh > UINT32_MAX) rc = ARB_ERANGE;
        return rc;
    }
    return ARB_ENOENT;
}

/* The scheme's options: comma-separated key=value pairs (or bare words). */
static int parse_options(arb_lb *lb, const char *name, const char *opt, char *err, size_t errlen)
{
    char buf[256];
    if (strlen(opt) >= sizeof buf)
        return arb_errf(err, errlen, ARB_EPARSE, "load balancing: %s: options too long", name);
    memcpy(buf, opt, strlen(opt) + 1);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        const char *val = eq ? eq + 1 : NULL;
        if (eq) *eq = '\0';
        int rc = lb->sc->option ? lb->sc->option(lb, item, val) : ARB_ENOENT;
        if (rc == ARB_ENOENT && !val)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "load balancing: %s: option '%s' needs a value", name, item);
        if (rc == ARB_ENOENT)
            return arb_errf(err, errlen, ARB_EPARSE, "load balancing: %s has no option '%s'", name,
                            item);
        if (rc < 0)
            return arb_errf(err, errlen, ARB_EPARSE, "load balancing: %s: bad value '%s' for %s",
                            name, val, item);
    }
    return 0;
}

void lb_fmt_time(char *buf, size_t len, arb_time t)
{
    static const struct {
        arb_time ps;
        const char *unit;
    } units[] = {{ARB_PS_PER_S, "s"},
                 {ARB_PS_PER_MS, "ms"},
                 {ARB_PS_PER_US, "us"},
                 {ARB_PS_PER_NS, "ns"},
                 {1, "ps"}};
    if (t == 0) {
        snprintf(buf, len, "0");
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (t % units[i].ps == 0) {
            snprintf(buf, len, "%llu%s", (unsigned long long)(t / units[i].ps), units[i].unit);
            return;
        }
}

void lb_fmt_bias(const arb_lb *lb, char *buf, size_t len)
{
    unsigned long long bi = (unsigned long long)lb->bias_milli;
    if (bi % 1000 == 0)
        snprintf(buf, len, "bias=%llu,thresh=%llu", bi / 1000, (unsigned long long)lb->thresh);
    else
        snprintf(buf, len, "bias=%llu.%03llu,thresh=%llu", bi / 1000, bi % 1000,
                 (unsigned long long)lb->thresh);
}

/* ------------------------------------------------------------------ */
/* Shared state                                                         */
/* ------------------------------------------------------------------ */

int lb_alloc_flowlets(arb_lb *lb)
{
    uint64_t size = 1;
    while (size < lb->table)
        size <<= 1;
    lb->fl_mask = size - 1;
    lb->fl = arb_calloc(lb->n_nodes, sizeof *lb->fl);
    return lb->fl ? 0 : ARB_ENOMEM;
}

/* Every switch's flowlet table let go: the next run makes them anew. */
static void free_flowlets(arb_lb *lb)
{
    if (lb->fl)
        for (uint32_t n = 0; n < lb->n_nodes; n++) {
            arb_free(lb->fl[n]);
            lb->fl[n] = NULL;
        }
}

int lb_alloc_rng(arb_lb *lb)
{
    lb->rng = arb_malloc(sizeof *lb->rng * lb->n_nodes);
    return lb->rng ? 0 : ARB_ENOMEM;
}

int lb_alloc_rr(arb_lb *lb)
{
    lb->rr = arb_calloc(lb->n_nodes, sizeof *lb->rr);
    return lb->rr ? 0 : ARB_ENOMEM;
}

void arb_lb_reset(arb_lb *lb)
{
    if (!lb) return;
    memset(&lb->st, 0, sizeof lb->st);
    memset(&lb->made, 0, sizeof lb->made);
    free_flowlets(lb);
    if (lb->rr) memset(lb->rr, 0, sizeof *lb->rr * lb->n_nodes);
    if (lb->rng) {
        /* a stream of its own, apart from the simulator's generator */
        arb_rng root;
        arb_rng_seed(&root, arb_mix64(lb->seed ^ 0x6C6F61642D62616Cull));
        for (uint32_t n = 0; n < lb->n_nodes; n++)
            arb_rng_split(&root, n, &lb->rng[n]);
    }
    if (lb->sc->reset) lb->sc->reset(lb);
}

/* fast.plain_gen: the present failure generation if no port has failed
 * and the router's candidate sets are plain ranges (no cost tables, its
 * view of the failures current: a probe at the first switch tells). */
static void fast_update(arb_lb *lb)
{
    lb->fast.plain_gen = UINT64_MAX;
    for (uint32_t p = 0; p < lb->n_ports; p++)
        if (lb->ports[p].failed) return;
    arb_route_key k;
    memset(&k, 0, sizeof k);
    uint32_t first, stride;
    if (lb->n_nodes > lb->n_hosts &&
        arb_route_candidate_range(lb->r, lb->n_hosts, &k, &first, &stride) > 0)
        lb->fast.plain_gen = arb_topo_failure_gen(lb->t);
}

int arb_lb_refresh(arb_lb *lb)
{
    if (!lb) return 0;
    int rc = lb->own ? arb_route_refresh(lb->own) : 0;
    fast_update(lb);
    return rc;
}

void arb_lb_free(arb_lb *lb)
{
    if (!lb) return;
    if (lb->sc && lb->sc->free) lb->sc->free(lb);
    arb_route_free(lb->own);
    free_flowlets(lb);
    arb_free(lb->fl);
    arb_free(lb->rng);
    arb_free(lb->rr);
    arb_free(lb);
}

/* ------------------------------------------------------------------ */
/* Creation                                                             */
/* ------------------------------------------------------------------ */

/* "ar, ar_ftree, ...": the choosers (every scheme but route). */
static void chooser_list(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < ARB_LB_KIND_COUNT && at < len; i++)
        if (i != ARB_LB_ROUTE)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", schemes[i]->name);
}

/* Which scheme `name` is (*kind), or which routing engine (*engine), or
 * an error naming what exists. */
static int find_scheme(const char *name, int *kind, int *engine, char *err, size_t errlen)
{
    *kind = *engine = -1;
    for (int i = 0; i < ARB_LB_KIND_COUNT; i++)
        if (strcmp(name, schemes[i]->name) == 0) *kind = i;
    for (int i = 0; i < ARB_ROUTE_KIND_COUNT; i++)
        if (strcmp(name, arb_route_kind_name(i)) == 0) *engine = i;
    char choosers[160];
    chooser_list(choosers, sizeof choosers);
    if (*engine == ARB_ROUTE_ADAPTIVE)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "load balancing: 'adaptive' is the router's hook; name a chooser (%s)",
                        choosers);
    if (*kind < 0 && *engine < 0)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "load balancing: unknown scheme '%s' (engines dmodk, smodk, rnca, pinning, "
                        "table, updown, dmodc, ecmp, eecmp; choosers %s; route)",
                        name, choosers);
    return 0;
}

/* The scheme's state and router, its options parsed: 0 or an error. */
static int lb_make(arb_lb *lb, const arb_route *base, const char *scheme, const char *name,
                   const char *colon, int engine, char *err, size_t errlen)
{
    int rc = lb->sc->create ? lb->sc->create(lb) : 0;
    if (rc < 0) return arb_errf(err, errlen, rc, "load balancing: out of memory");
    if (engine < 0 && colon) rc = parse_options(lb, name, colon + 1, err, errlen);
    lb->biased = lb->bias_milli != 1000 || lb->thresh != 0;
    if (rc == 0 && (engine >= 0 || !base)) {
        arb_route_config rc_cfg = arb_route_config_default();
        rc_cfg.seed = lb->seed;
        rc = arb_route_new(&lb->own, lb->t, engine >= 0 ? scheme : "ecmp", &rc_cfg, err, errlen);
        lb->r = lb->own;
    } else {
        lb->r = base;
    }
    lb->route_adaptive = lb->r && arb_route_get_kind(lb->r) == ARB_ROUTE_ADAPTIVE;
    if (rc == 0 && lb->sc->init) rc = lb->sc->init(lb, err, errlen);
    return rc;
}

int arb_lb_new(arb_lb **out, const arb_topo *t, const arb_route *base, const char *scheme,
               arb_sim_config *cfg, char *err, size_t errlen)
{
    if (out) *out = NULL;
    if (!out || !t || !scheme || !cfg)
        return arb_errf(err, errlen, ARB_EINVAL, "load balancing: NULL argument");
    const arb_pgft *g = arb_topo_pgft(t);
    if (!g) return arb_errf(err, errlen, ARB_EINVAL, "load balancing: the topology is not a PGFT");

    char name[32];
    const char *colon = strchr(scheme, ':');
    size_t nlen = colon ? (size_t)(colon - scheme) : strlen(scheme);
    if (nlen == 0 || nlen >= sizeof name)
        return arb_errf(err, errlen, ARB_EPARSE, "load balancing: '%s' is not a scheme", scheme);
    memcpy(name, scheme, nlen);
    name[nlen] = '\0';
    int kind, engine;
    int rc = find_scheme(name, &kind, &engine, err, errlen);
    if (rc < 0) return rc;
    if (kind == ARB_LB_ROUTE && !base)
        return arb_errf(err, errlen, ARB_EINVAL, "load balancing: 'route' needs a router");
    if (kind == ARB_LB_ROUTE && colon)
        return arb_errf(err, errlen, ARB_EPARSE, "load balancing: route takes no option");
    if (engine >= 0 && base)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "load balancing: '%s' is a routing engine; give it or a router, not both",
                        name);

    arb_lb *lb = arb_calloc(1, sizeof *lb);
    if (!lb) return arb_errf(err, errlen, ARB_ENOMEM, "load balancing: out of memory");
    lb->kind = engine >= 0 ? ARB_LB_ROUTE : (arb_lb_kind)kind;
    lb->sc = schemes[lb->kind];
    lb->t = t;
    lb->g = g;
    lb->nodes = arb_topo_nodes(t);
    lb->ports = arb_topo_ports(t);
    lb->n_nodes = arb_topo_n_nodes(t);
    lb->n_ports = arb_topo_n_ports(t);
    lb->n_hosts = arb_topo_n_hosts(t);
    lb->seed = cfg->seed;
    lb->bias_milli = 1000;
    lb->gap = lb->sc->gap;
    lb->table = LB_FLOWLET_TABLE;
    rc = lb_make(lb, base, scheme, name, colon, engine, err, errlen);
    if (rc < 0) {
        arb_lb_free(lb);
        return rc;
    }
    arb_lb_reset(lb);
    lb->sc->spec(lb, lb->spec, sizeof lb->spec);
    fast_update(lb);

    cfg->route = route_fn(lb);
    cfg->route_ctx = lb;
    cfg->route_peek = peek_fn(lb);
    cfg->peek_ctx = lb;
    cfg->route_fast = &lb->fast;
    lb->fast.route = cfg->route;
    lb->fast.ctx = lb;
    if (lb->sc->inband) {
        cfg->inband = arb_lb_inband;
        cfg->inband_ctx = lb;
    } else if (cfg->inband == arb_lb_inband) {
        cfg->inband = NULL;
        cfg->inband_ctx = NULL;
    }
    if (lb->sc->install) lb->sc->install(lb, cfg);
    *out = lb;
    return 0;
}

arb_lb_kind arb_lb_get_kind(const arb_lb *lb)
{
    return lb->kind;
}

const char *arb_lb_spec(const arb_lb *lb)
{
    return lb->spec;
}

const arb_route *arb_lb_router(const arb_lb *lb)
{
    return lb->r;
}

void arb_lb_get_stats(const arb_lb *lb, arb_lb_stats *st)
{
    *st = lb->st;
    st->decisions += lb->made.decisions;
    st->choices += lb->made.choices;
    st->guessed += lb->made.guessed;
}
