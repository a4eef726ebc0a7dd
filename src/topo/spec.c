/*
 * Text input of the topology module: the generator specs, rates,
 * durations and failure lists. Every fault is reported with a message
 * naming the field or item.
 */
#include "topo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

#define KINDS "star, leafspine, kary, pgft, dualplane, rail"

/* ------------------------------------------------------------------ */
/* Fields                                                               */
/* ------------------------------------------------------------------ */

/* A field of a comma- or semicolon-separated list: [s, s + n). */
struct field {
    const char *s;
    size_t n;
};

/* Split s at `sep` into at most max fields; returns the count (max + 1 if more). */
static size_t split(const char *s, size_t len, char sep, struct field *f, size_t max)
{
    size_t count = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == sep) {
            if (count < max) {
                f[count].s = s + start;
                f[count].n = i - start;
            }
            count++;
            start = i + 1;
        }
    }
    return count > max ? max + 1 : count;
}

/*
 * A whole decimal number in 1..UINT32_MAX. The caller names the field in
 * `what`; every fault is ARB_EPARSE.
 */
static int field_u32(const struct field *f, const char *gen, const char *what, uint32_t *out,
                     char *err, size_t errlen)
{
    if (f->n == 0) return arb_errf(err, errlen, ARB_EPARSE, "%s: %s is empty", gen, what);
    uint64_t v = 0;
    for (size_t i = 0; i < f->n; i++) {
        char c = f->s[i];
        if (c < '0' || c > '9')
            return arb_errf(err, errlen, ARB_EPARSE, "%s: %s '%.*s' is not a whole number", gen,
                            what, (int)f->n, f->s);
        v = v * 10 + (uint64_t)(c - '0');
        if (v > UINT32_MAX)
            return arb_errf(err, errlen, ARB_EPARSE, "%s: %s '%.*s' is too large", gen, what,
                            (int)f->n, f->s);
    }
    if (v == 0)
        return arb_errf(err, errlen, ARB_EPARSE, "%s: %s is 0 (must be at least 1)", gen, what);
    *out = (uint32_t)v;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Rates and durations                                                  */
/* ------------------------------------------------------------------ */

/*
 * digits[.digits] then a unit multiplier: value = (int + frac) * mult,
 * exact or ARB_ERANGE. `units` maps suffixes to multipliers; `unit_needed`
 * refuses a bare number other than 0.
 */
struct unit {
    const char *name;
    uint64_t mult;
};

static int parse_scaled(const char *s, const struct unit *units, size_t n_units, int unit_needed,
                        uint64_t *out)
{
    if (!s || !*s) return ARB_EPARSE;
    uint64_t ip = 0, frac = 0, fdiv = 1;
    size_t i = 0, idig = 0, fdig = 0;
    for (; s[i] >= '0' && s[i] <= '9'; i++, idig++) {
        if (ip > (UINT64_MAX - 9) / 10) return ARB_ERANGE;
        ip = ip * 10 + (uint64_t)(s[i] - '0');
    }
    if (s[i] == '.') {
        i++;
        for (; s[i] >= '0' && s[i] <= '9'; i++, fdig++) {
            if (fdig >= 18) return ARB_ERANGE;
            frac = frac * 10 + (uint64_t)(s[i] - '0');
            fdiv *= 10;
        }
        if (fdig == 0) return ARB_EPARSE;
    }
    if (idig == 0) return ARB_EPARSE;
    uint64_t mult = 0;
    if (s[i] == '\0') {
        if (unit_needed && (ip != 0 || frac != 0)) return ARB_EPARSE;
        mult = 1;
    } else {
        for (size_t u = 0; u < n_units; u++) {
            const char *a = units[u].name, *b = s + i;
            while (*a && *b && (*a | 0x20) == (*b | 0x20))
                a++, b++;
            if (*a == '\0' && *b == '\0') {
                mult = units[u].mult;
                break;
            }
        }
        if (mult == 0) return ARB_EPARSE;
    }
    if (ip > UINT64_MAX / mult) return ARB_ERANGE;
    uint64_t v = ip * mult;
    if (frac) {
        /* frac / fdiv * mult must be whole: reduce before multiplying. */
        uint64_t g = mult, r = fdiv;
        while (r) {
            uint64_t tmp = g % r;
            g = r;
            r = tmp;
        }
        uint64_t m2 = mult / g, d2 = fdiv / g;
        if (frac % d2 != 0) return ARB_ERANGE;
        uint64_t fpart = frac / d2;
        if (fpart > UINT64_MAX / m2 || v > UINT64_MAX - fpart * m2) return ARB_ERANGE;
        v += fpart * m2;
    }
    *out = v;
    return 0;
}

int arb_topo_parse_rate(const char *s, uint64_t *out)
{
    static const struct unit units[] = {
        {"k", 1000}, {"m", 1000000}, {"g", 1000000000}, {"t", 1000000000000}};
    uint64_t v;
    int rc = parse_scaled(s, units, sizeof units / sizeof units[0], 0, &v);
    if (rc < 0) return rc;
    if (v == 0 || v > ARB_RATE_MAX) return ARB_ERANGE;
    if (out) *out = v;
    return 0;
}

int arb_topo_parse_time(const char *s, arb_time *out)
{
    static const struct unit units[] = {{"ps", 1},
                                        {"ns", ARB_PS_PER_NS},
                                        {"us", ARB_PS_PER_US},
                                        {"ms", ARB_PS_PER_MS},
                                        {"s", ARB_PS_PER_S}};
    uint64_t v;
    int rc = parse_scaled(s, units, sizeof units / sizeof units[0], 1, &v);
    if (rc < 0) return rc;
    if (out) *out = v;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Generator specs                                                      */
/* ------------------------------------------------------------------ */

/* Parse `n` comma-separated positive numbers named names[i] (n_opt of them optional). */
static int parse_list(const char *gen, const char *syntax, const char *params,
                      const char *const *names, size_t n, size_t n_opt, uint32_t *v, size_t *got,
                      struct field *fields, char *err, size_t errlen)
{
    size_t c = split(params, strlen(params), ',', fields, n);
    if (c > n || c < n - n_opt)
        return arb_errf(err, errlen, ARB_EPARSE, "%s: expected %s, got %s%zu value%s", gen, syntax,
                        c > n ? "more than " : "", c > n ? n : c, (c > n ? n : c) == 1 ? "" : "s");
    for (size_t i = 0; i < c; i++) {
        if (v) {
            int rc = field_u32(&fields[i], gen, names[i], &v[i], err, errlen);
            if (rc < 0) return rc;
        }
    }
    *got = c;
    return 0;
}

static int finish(arb_topo **out, arb_topo_kind kind, arb_pgft *g, const struct topo_rates *r,
                  const char *gen, char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;

static int finish(arb_topo **out, arb_topo_kind kind, arb_pgft *g, const struct topo_rates *r,
                  const char *gen, char *err, size_t errlen, const char *fmt, ...)
{
    arb_topo *t;
    int rc = topo_build(&t, g, r, gen, ARB_EPARSE, err, errlen);
    if (rc < 0) return rc;
    t->kind = kind;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->spec, sizeof t->spec, fmt, ap);
    va_end(ap);
    *out = t;
    return 0;
}

static void set_level(arb_pgft *g, unsigned l, uint32_t m, uint32_t w, uint32_t p)
{
    g->m[l] = m;
    g->w[l] = w;
    g->p[l] = p;
}

/* A generator's parameters: its fields, their numbers, and the tree. */
struct gen_spec {
    const char *gen; /* the kind's name */
    arb_pgft g;
    struct field f[8];
    uint32_t v[8];
    size_t c; /* fields given */
};

/* The parameters of a generator of `kind` (see parse_list; numbers: every
 * field read as one into v). */
static int gen_parse(struct gen_spec *gs, arb_topo_kind kind, const char *syntax,
                     const char *params, const char *const *names, size_t n, size_t n_opt,
                     int numbers, char *err, size_t errlen)
{
    memset(gs, 0, sizeof *gs);
    gs->gen = arb_topo_kind_name(kind);
    return parse_list(gs->gen, syntax, params, names, n, n_opt, numbers ? gs->v : NULL, &gs->c,
                      gs->f, err, errlen);
}

static int gen_pgft(arb_topo **out, const char *params, const struct topo_rates *r, char *err,
                    size_t errlen)
{
    const char *gen = "pgft";
    struct field parts[5];
    size_t np = split(params, strlen(params), ';', parts, 4);
    if (np != 4)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "pgft: expected H;m1,..;w1,..;p1,.. (4 parts separated by ';'), got %s%zu",
                        np > 4 ? "more than " : "", np > 4 ? (size_t)4 : np);
    uint32_t h;
    int rc = field_u32(&parts[0], gen, "H", &h, err, errlen);
    if (rc < 0) return rc;
    if (h > ARB_TOPO_MAX_HEIGHT)
        return arb_errf(err, errlen, ARB_EPARSE, "pgft: H is %u, above %d levels", h,
                        ARB_TOPO_MAX_HEIGHT);
    arb_pgft g;
    memset(&g, 0, sizeof g);
    g.h = h;
    uint32_t *lists[3] = {g.m, g.w, g.p};
    static const char *const lname[3] = {"m", "w", "p"};
    for (int li = 0; li < 3; li++) {
        struct field f[ARB_TOPO_MAX_HEIGHT + 1];
        size_t c = split(parts[1 + li].s, parts[1 + li].n, ',', f, ARB_TOPO_MAX_HEIGHT);
        if (parts[1 + li].n == 0)
            return arb_errf(err, errlen, ARB_EPARSE, "pgft: %s list is empty, H is %u", lname[li],
                            h);
        if (c != h)
            return arb_errf(err, errlen, ARB_EPARSE, "pgft: %s list has %s%zu value%s, H is %u",
                            lname[li], c > ARB_TOPO_MAX_HEIGHT ? "more than " : "",
                            c > ARB_TOPO_MAX_HEIGHT ? (size_t)ARB_TOPO_MAX_HEIGHT : c,
                            c == 1 ? "" : "s", h);
        for (unsigned l = 1; l <= h; l++) {
            char what[16];
            snprintf(what, sizeof what, "%s_%u", lname[li], l);
            rc = field_u32(&f[l - 1], gen, what, &lists[li][l], err, errlen);
            if (rc < 0) return rc;
        }
    }
    arb_topo *t;
    rc = topo_build(&t, &g, r, gen, ARB_EPARSE, err, errlen);
    if (rc < 0) return rc;
    t->kind = ARB_TOPO_PGFT;
    size_t n = (size_t)snprintf(t->spec, sizeof t->spec, "pgft:%u", h);
    for (int li = 0; li < 3; li++)
        for (unsigned l = 1; l <= h && n < sizeof t->spec; l++)
            n += (size_t)snprintf(t->spec + n, sizeof t->spec - n, "%c%u", l == 1 ? ';' : ',',
                                  lists[li][l]);
    *out = t;
    return 0;
}

static int gen_star(arb_topo **out, const char *params, const struct topo_rates *r, char *err,
                    size_t errlen)
{
    static const char *const names[] = {"N"};
    struct gen_spec gs;
    int rc = gen_parse(&gs, ARB_TOPO_STAR, "N", params, names, 1, 0, 1, err, errlen);
    if (rc < 0) return rc;
    gs.g.h = 1;
    set_level(&gs.g, 1, gs.v[0], 1, 1);
    return finish(out, ARB_TOPO_STAR, &gs.g, r, gs.gen, err, errlen, "star:%u", gs.v[0]);
}

/* leafspine's UPRATE field into r->up_rate, and ",UPRATE" as written into
 * txt for the canonical spec. */
static int leafspine_uprate(const struct field *f, struct topo_rates *r, char *txt, size_t len,
                            char *err, size_t errlen)
{
    char buf[64];
    if (f->n == 0 || f->n >= sizeof buf)
        return arb_errf(err, errlen, ARB_EPARSE, "leafspine: UPRATE is %s",
                        f->n ? "too long" : "empty");
    memcpy(buf, f->s, f->n);
    buf[f->n] = '\0';
    uint64_t ur;
    if (arb_topo_parse_rate(buf, &ur) < 0)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "leafspine: UPRATE '%s' is not a rate in 1..10T b/s (e.g. 400G)", buf);
    r->up_rate = ur;
    snprintf(txt, len, ",%s", buf);
    return 0;
}

static int gen_leafspine(arb_topo **out, const char *params, const struct topo_rates *rates,
                         char *err, size_t errlen)
{
    static const char *const names[] = {"LEAVES", "DOWN", "UP"};
    struct topo_rates r = *rates;
    struct gen_spec gs;
    int rc = gen_parse(&gs, ARB_TOPO_LEAFSPINE, "LEAVES,DOWN,UP[,UPRATE]", params, names, 4, 1, 0,
                       err, errlen);
    if (rc < 0) return rc;
    for (size_t i = 0; i < 3; i++)
        if ((rc = field_u32(&gs.f[i], gs.gen, names[i], &gs.v[i], err, errlen)) < 0) return rc;
    char rate_txt[80] = "";
    if (gs.c == 4 &&
        (rc = leafspine_uprate(&gs.f[3], &r, rate_txt, sizeof rate_txt, err, errlen)) < 0)
        return rc;
    gs.g.h = 2;
    set_level(&gs.g, 1, gs.v[1], 1, 1);
    set_level(&gs.g, 2, gs.v[0], gs.v[2], 1);
    return finish(out, ARB_TOPO_LEAFSPINE, &gs.g, &r, gs.gen, err, errlen, "leafspine:%u,%u,%u%s",
                  gs.v[0], gs.v[1], gs.v[2], rate_txt);
}

static int gen_kary(arb_topo **out, const char *params, const struct topo_rates *r, char *err,
                    size_t errlen)
{
    static const char *const names[] = {"K", "N"};
    struct gen_spec gs;
    int rc = gen_parse(&gs, ARB_TOPO_KARY, "K,N", params, names, 2, 0, 1, err, errlen);
    if (rc < 0) return rc;
    if (gs.v[1] > ARB_TOPO_MAX_HEIGHT)
        return arb_errf(err, errlen, ARB_EPARSE, "kary: N is %u, above %d levels", gs.v[1],
                        ARB_TOPO_MAX_HEIGHT);
    gs.g.h = gs.v[1];
    for (unsigned l = 1; l <= gs.g.h; l++)
        set_level(&gs.g, l, gs.v[0], l == 1 ? 1 : gs.v[0], 1);
    return finish(out, ARB_TOPO_KARY, &gs.g, r, gs.gen, err, errlen, "kary:%u,%u", gs.v[0],
                  gs.v[1]);
}

static int gen_dualplane(arb_topo **out, const char *params, const struct topo_rates *r, char *err,
                         size_t errlen)
{
    static const char *const names[] = {"PAIRS", "HOSTS", "AGGS", "PODS", "CORES"};
    struct gen_spec gs;
    int rc = gen_parse(&gs, ARB_TOPO_DUALPLANE, "PAIRS,HOSTS,AGGS[,PODS,CORES]", params, names, 5,
                       2, 1, err, errlen);
    if (rc < 0) return rc;
    if (gs.c == 4)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "dualplane: PODS needs CORES (PAIRS,HOSTS,AGGS[,PODS,CORES])");
    set_level(&gs.g, 1, gs.v[1], 2, 1);
    set_level(&gs.g, 2, gs.v[0], gs.v[2], 1);
    if (gs.c == 3) {
        gs.g.h = 2;
        return finish(out, ARB_TOPO_DUALPLANE, &gs.g, r, gs.gen, err, errlen, "dualplane:%u,%u,%u",
                      gs.v[0], gs.v[1], gs.v[2]);
    }
    gs.g.h = 3;
    set_level(&gs.g, 3, gs.v[3], gs.v[4], 1);
    return finish(out, ARB_TOPO_DUALPLANE, &gs.g, r, gs.gen, err, errlen,
                  "dualplane:%u,%u,%u,%u,%u", gs.v[0], gs.v[1], gs.v[2], gs.v[3], gs.v[4]);
}

static int gen_rail(arb_topo **out, const char *params, const struct topo_rates *r, char *err,
                    size_t errlen)
{
    static const char *const names[] = {"GROUPS", "SERVERS", "RAILS", "SPINES"};
    struct gen_spec gs;
    int rc = gen_parse(&gs, ARB_TOPO_RAIL, "GROUPS,SERVERS,RAILS,SPINES", params, names, 4, 0, 1,
                       err, errlen);
    if (rc < 0) return rc;
    uint64_t leaves = (uint64_t)gs.v[0] * gs.v[2];
    if (leaves > ARB_TOPO_MAX_NODES)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "rail: GROUPS * RAILS = %llu rail switches, above %u",
                        (unsigned long long)leaves, ARB_TOPO_MAX_NODES);
    gs.g.h = 2;
    set_level(&gs.g, 1, gs.v[1], 1, 1);
    set_level(&gs.g, 2, (uint32_t)leaves, gs.v[3], 1);
    return finish(out, ARB_TOPO_RAIL, &gs.g, r, gs.gen, err, errlen, "rail:%u,%u,%u,%u", gs.v[0],
                  gs.v[1], gs.v[2], gs.v[3]);
}

int arb_topo_new(arb_topo **out, const char *spec, const arb_topo_config *cfg, char *err,
                 size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (out) *out = NULL;
    if (!out || !spec) return arb_errf(err, errlen, ARB_EINVAL, "topology: no output or spec");
    arb_topo_config def = arb_topo_config_default();
    if (!cfg) cfg = &def;
    if (cfg->rate == 0 || cfg->rate > ARB_RATE_MAX || cfg->up_rate > ARB_RATE_MAX)
        return arb_errf(err, errlen, ARB_EINVAL, "topology: link rate outside 1..%llu b/s",
                        (unsigned long long)ARB_RATE_MAX);
    struct topo_rates r = {cfg->rate, cfg->up_rate ? cfg->up_rate : cfg->rate, cfg->delay};

    const char *colon = strchr(spec, ':');
    size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
    int kind = -1;
    for (int k = 0; k <= ARB_TOPO_RAIL; k++)
        if (strlen(arb_topo_kind_name(k)) == klen &&
            strncmp(arb_topo_kind_name(k), spec, klen) == 0)
            kind = k;
    if (kind < 0)
        return arb_errf(err, errlen, ARB_EPARSE, "unknown topology '%.*s' (%s)",
                        (int)(klen > 40 ? 40 : klen), spec, KINDS);
    if (!colon)
        return arb_errf(err, errlen, ARB_EPARSE, "%s: missing ':' and parameters",
                        arb_topo_kind_name(kind));
    const char *params = colon + 1;
    switch (kind) {
    case ARB_TOPO_STAR:
        return gen_star(out, params, &r, err, errlen);
    case ARB_TOPO_LEAFSPINE:
        return gen_leafspine(out, params, &r, err, errlen);
    case ARB_TOPO_KARY:
        return gen_kary(out, params, &r, err, errlen);
    case ARB_TOPO_PGFT:
        return gen_pgft(out, params, &r, err, errlen);
    case ARB_TOPO_DUALPLANE:
        return gen_dualplane(out, params, &r, err, errlen);
    case ARB_TOPO_RAIL:
        return gen_rail(out, params, &r, err, errlen);
    default:
        break;
    }
    return arb_errf(err, errlen, ARB_EPARSE, "unknown topology (%s)", KINDS);
}

/* ------------------------------------------------------------------ */
/* Failure lists                                                        */
/* ------------------------------------------------------------------ */

/* One parsed failure: a switch, or a set of ports (each failed with its reverse). */
struct fail_item {
    uint32_t node;     /* switch: the node */
    uint32_t first;    /* ports: first port of a run, or ARB_TOPO_NONE */
    uint32_t peer;     /* link:A-B: ports of `node` toward peer; ARB_TOPO_NONE otherwise */
    uint32_t parallel; /* link:A-B/K: K; UINT32_MAX for all */
    int is_switch;
};

/* Copy a name [s, s+n) into buf and look it up. */
static int find_name(const arb_topo *t, const char *s, size_t n, uint32_t *node, const char *item,
                     char *err, size_t errlen)
{
    char buf[48];
    if (n == 0 || n >= sizeof buf)
        return arb_errf(err, errlen, ARB_EPARSE, "fail: '%s': %s node name", item,
                        n ? "overlong" : "missing");
    memcpy(buf, s, n);
    buf[n] = '\0';
    int rc = arb_topo_find(t, buf, node);
    if (rc == ARB_EPARSE)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "fail: '%s': '%s' is not a node name (h<host> or L<level>.<index>)", item,
                        buf);
    if (rc == ARB_ENOENT)
        return arb_errf(err, errlen, ARB_ENOENT, "fail: '%s': no node %s in %s", item, buf,
                        t->spec);
    return rc;
}

static int parse_u32_text(const char *s, size_t n, uint32_t *v)
{
    uint64_t x = 0;
    if (n == 0 || n > 10) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    if (x > UINT32_MAX) return -1;
    *v = (uint32_t)x;
    return 0;
}

static int parse_item(const arb_topo *t, const char *item, struct fail_item *fi, char *err,
                      size_t errlen)
{
    static const char usage[] = "switch:NAME, link:A-B[/K], up:NAME:Q, down:NAME:D or "
                                "port:NAME:P";
    memset(fi, 0, sizeof *fi);
    fi->first = fi->peer = ARB_TOPO_NONE;
    fi->parallel = UINT32_MAX;
    const char *colon = strchr(item, ':');
    if (!colon) return arb_errf(err, errlen, ARB_EPARSE, "fail: '%s' is not %s", item, usage);
    size_t tl = (size_t)(colon - item);
    const char *rest = colon + 1;
    int rc;
    if (tl == 6 && strncmp(item, "switch", 6) == 0) {
        rc = find_name(t, rest, strlen(rest), &fi->node, item, err, errlen);
        if (rc < 0) return rc;
        if (t->nodes[fi->node].kind != ARB_NODE_SWITCH)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "fail: '%s': %s is a host; fail its links with link:", item, rest);
        fi->is_switch = 1;
        return 0;
    }
    if (tl == 4 && strncmp(item, "link", 4) == 0) {
        const char *dash = strchr(rest, '-');
        if (!dash)
            return arb_errf(err, errlen, ARB_EPARSE, "fail: '%s': expected link:A-B[/K]", item);
        const char *slash = strchr(dash, '/');
        size_t bl = slash ? (size_t)(slash - dash - 1) : strlen(dash + 1);
        uint32_t a, b;
        if ((rc = find_name(t, rest, (size_t)(dash - rest), &a, item, err, errlen)) < 0 ||
            (rc = find_name(t, dash + 1, bl, &b, item, err, errlen)) < 0)
            return rc;
        if (slash && parse_u32_text(slash + 1, strlen(slash + 1), &fi->parallel) < 0)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "fail: '%s': parallel-link index '%s' is not a whole number", item,
                            slash + 1);
        /* Look from the lower node's up ports. */
        if (t->nodes[a].level > t->nodes[b].level) {
            uint32_t tmp = a;
            a = b;
            b = tmp;
        }
        const arb_node *na = &t->nodes[a];
        int found = 0;
        for (uint32_t q = 0; q < na->n_up; q++) {
            const arb_port *p = &t->ports[na->first_up + q];
            if (p->peer == b && (fi->parallel == UINT32_MAX || p->parallel == fi->parallel))
                found = 1;
        }
        if (!found) {
            if (fi->parallel != UINT32_MAX)
                return arb_errf(err, errlen, ARB_ENOENT,
                                "fail: '%s': no parallel link %u "
                                "between these nodes",
                                item, fi->parallel);
            return arb_errf(err, errlen, ARB_ENOENT, "fail: '%s': the nodes are not linked", item);
        }
        fi->node = a;
        fi->peer = b;
        return 0;
    }
    int which = -1; /* 0 up, 1 down, 2 port */
    if (tl == 2 && strncmp(item, "up", 2) == 0)
        which = 0;
    else if (tl == 4 && strncmp(item, "down", 4) == 0)
        which = 1;
    else if (tl == 4 && strncmp(item, "port", 4) == 0)
        which = 2;
    if (which < 0)
        return arb_errf(err, errlen, ARB_EPARSE, "fail: '%s': unknown kind '%.*s' (%s)", item,
                        (int)tl, item, usage);
    const char *c2 = strrchr(rest, ':');
    if (!c2)
        return arb_errf(err, errlen, ARB_EPARSE, "fail: '%s': expected %.*s:NAME:NUMBER", item,
                        (int)tl, item);
    uint32_t node, num;
    if ((rc = find_name(t, rest, (size_t)(c2 - rest), &node, item, err, errlen)) < 0) return rc;
    if (parse_u32_text(c2 + 1, strlen(c2 + 1), &num) < 0)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "fail: '%s': port number '%s' is not a whole "
                        "number",
                        item, c2 + 1);
    const arb_node *n = &t->nodes[node];
    uint32_t limit = which == 0 ? n->n_up : which == 1 ? n->n_down : (uint32_t)n->n_down + n->n_up;
    if (num >= limit)
        return arb_errf(err, errlen, ARB_ENOENT, "fail: '%s': %.*s has %u %sport%s", item,
                        (int)(c2 - rest), rest, limit,
                        which == 0   ? "up "
                        : which == 1 ? "down "
                                     : "",
                        limit == 1 ? "" : "s");
    fi->node = node;
    fi->first = (which == 0 ? n->first_up : n->first_port) + num;
    return 0;
}

/* What separates the items of a failure list: commas, blanks or both
 * ("a,b", "a, b", "a b"); a run of them is one separator, so a list
 * continued on another line after a comma reads as written. */
static const char fail_seps[] = ", \t";

static int is_fail_sep(char c)
{
    return c != '\0' && strchr(fail_seps, c) != NULL;
}

static size_t count_items(const char *list)
{
    size_t n = 0;
    for (const char *p = list; *p; p++)
        n += !is_fail_sep(*p) && (p == list || is_fail_sep(p[-1]));
    return n;
}

/* One item of a list; a ';' in it is a separator this list does not take
 * (fabric.fail_at's entries take it), said as such. */
static int parse_listed(const arb_topo *t, const char *item, struct fail_item *fi, char *err,
                        size_t errlen)
{
    if (strchr(item, ';'))
        return arb_errf(err, errlen, ARB_EPARSE,
                        "fail: '%s': items are separated by commas or blanks, not ';'", item);
    return parse_item(t, item, fi, err, errlen);
}

/* Parse a failure list into *items (calloc'd, *n of them; NULL for an
 * empty list); nothing is applied. */
static int fail_parse(const arb_topo *t, const char *list, struct fail_item **items, size_t *n,
                      char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    *items = NULL;
    *n = 0;
    if (!t || !list) return arb_errf(err, errlen, ARB_EINVAL, "fail: no topology or list");
    size_t count = count_items(list);
    if (count == 0) return 0;
    size_t len = strlen(list);
    struct fail_item *it = arb_calloc(count, sizeof *it);
    char *copy = arb_malloc(len + 1);
    if (!it || !copy) {
        arb_free(it);
        arb_free(copy);
        return arb_errf(err, errlen, ARB_ENOMEM, "fail: out of memory");
    }
    memcpy(copy, list, len + 1);
    int rc = 0;
    size_t i = 0;
    char *save = NULL;
    for (char *s = strtok_r(copy, fail_seps, &save); s && rc == 0;
         s = strtok_r(NULL, fail_seps, &save))
        rc = parse_listed(t, s, &it[i++], err, errlen);
    arb_free(copy);
    if (rc < 0) {
        arb_free(it);
        return rc;
    }
    *items = it;
    *n = count;
    return 0;
}

int arb_topo_fail_check(const arb_topo *t, const char *list, char *err, size_t errlen)
{
    struct fail_item *items;
    size_t n;
    int rc = fail_parse(t, list, &items, &n, err, errlen);
    arb_free(items);
    return rc;
}

/* Fail or restore (`up`) one parsed item: a switch, the ports of a link
 * between two nodes, or one port. */
static void apply_item(arb_topo *t, const struct fail_item *fi, int up)
{
    if (fi->is_switch) {
        if (up)
            arb_topo_restore_node(t, fi->node);
        else
            arb_topo_fail_node(t, fi->node);
        return;
    }
    if (fi->peer == ARB_TOPO_NONE) {
        if (up)
            arb_topo_restore_link(t, fi->first);
        else
            arb_topo_fail_link(t, fi->first);
        return;
    }
    const arb_node *na = &t->nodes[fi->node];
    for (uint32_t q = 0; q < na->n_up; q++) {
        const arb_port *p = &t->ports[na->first_up + q];
        if (p->peer != fi->peer || (fi->parallel != UINT32_MAX && p->parallel != fi->parallel))
            continue;
        if (up)
            arb_topo_restore_link(t, na->first_up + q);
        else
            arb_topo_fail_link(t, na->first_up + q);
    }
}

/* Parse `list` and fail (or restore) every item: all or nothing. */
static int apply_list(arb_topo *t, const char *list, int up, char *err, size_t errlen)
{
    struct fail_item *items;
    size_t n;
    int rc = fail_parse(t, list, &items, &n, err, errlen);
    int links = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        links |= !items[i].is_switch;
    if (rc == 0 && links && !up && topo_cut_room(t) < 0)
        rc = arb_errf(err, errlen, ARB_ENOMEM, "fail: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++)
        apply_item(t, &items[i], up);
    arb_free(items);
    return rc;
}

int arb_topo_fail(arb_topo *t, const char *list, char *err, size_t errlen)
{
    return apply_list(t, list, 0, err, errlen);
}

int arb_topo_restore(arb_topo *t, const char *list, char *err, size_t errlen)
{
    return apply_list(t, list, 1, err, errlen);
}
