/*
 * Traffic patterns. Regular patterns (shift, all2all, ring) are computed
 * per pair index; drawn and read ones (perm, bisect, file) keep their pair
 * list. Flows are expanded from pairs by the QP count at generation time.
 */
#include "arbor/traffic.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

enum kind { K_SHIFT, K_SHIFT_ALL, K_ALL2ALL, K_LIST };

struct pair {
    uint32_t src, dst;
    double demand;
};

struct arb_traffic {
    enum kind kind;
    uint32_t n;         /* hosts */
    uint32_t shift;     /* K_SHIFT */
    struct pair *pairs; /* K_LIST */
    size_t n_pairs;     /* pairs per phase */
    arb_traffic_config cfg;
    char spec[64];
};

void arb_traffic_config_default(arb_traffic_config *cfg)
{
    cfg->qps = 1;
    cfg->dport = ARB_ROCE_UDP_PORT;
    cfg->sport_lo = 49152;
    cfg->sport_hi = 65535;
}

/* A uniformly random derangement: Fisher-Yates, rejected while it has a
 * fixed point (about e tries on average). */
static void derangement(uint32_t *p, uint32_t n, arb_rng *r)
{
    for (;;) {
        for (uint32_t i = 0; i < n; i++)
            p[i] = i;
        for (uint32_t i = n - 1; i > 0; i--) {
            uint32_t j = (uint32_t)arb_rng_below(r, (uint64_t)i + 1);
            uint32_t t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        uint32_t i = 0;
        while (i < n && p[i] != i)
            i++;
        if (i == n) return;
    }
}

static int make_perm(arb_traffic *t, uint64_t seed)
{
    uint32_t *p = arb_malloc(sizeof *p * t->n);
    t->pairs = arb_malloc(sizeof *t->pairs * t->n);
    if (!p || !t->pairs) {
        arb_free(p);
        return ARB_ENOMEM;
    }
    arb_rng r;
    arb_rng_seed(&r, seed);
    derangement(p, t->n, &r);
    for (uint32_t i = 0; i < t->n; i++)
        t->pairs[i] = (struct pair){i, p[i], 1.0};
    t->n_pairs = t->n;
    arb_free(p);
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    return (x->dst > y->dst) - (x->dst < y->dst);
}

/* Random halves, matched at random; both directions. An odd host out
 * sends nothing. */
static int make_bisect(arb_traffic *t, uint64_t seed)
{
    uint32_t *p = arb_malloc(sizeof *p * t->n);
    uint32_t half = t->n / 2;
    t->pairs = arb_malloc(sizeof *t->pairs * 2 * (size_t)half);
    if (!p || !t->pairs) {
        arb_free(p);
        return ARB_ENOMEM;
    }
    arb_rng r;
    arb_rng_seed(&r, seed);
    for (uint32_t i = 0; i < t->n; i++)
        p[i] = i;
    for (uint32_t i = t->n - 1; i > 0; i--) {
        uint32_t j = (uint32_t)arb_rng_below(&r, (uint64_t)i + 1);
        uint32_t x = p[i];
        p[i] = p[j];
        p[j] = x;
    }
    /* p[0..half) is one half, p[half..2 half) the other, matched by position. */
    for (uint32_t i = 0; i < half; i++) {
        t->pairs[2 * i] = (struct pair){p[i], p[half + i], 1.0};
        t->pairs[2 * i + 1] = (struct pair){p[half + i], p[i], 1.0};
    }
    t->n_pairs = 2 * (size_t)half;
    qsort(t->pairs, t->n_pairs, sizeof *t->pairs, cmp_pair);
    arb_free(p);
    return 0;
}

/* Split a CSV line in place into at most 3 trimmed fields. */
static int split_csv(char *line, char *f[3])
{
    int n = 0;
    char *s = line;
    for (;;) {
        char *end = strchr(s, ',');
        if (end) *end = '\0';
        while (*s == ' ' || *s == '\t')
            s++;
        char *e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
            *--e = '\0';
        if (n == 3) return 4; /* too many */
        f[n++] = s;
        if (!end) return n;
        s = end + 1;
    }
}

static int parse_file_line(arb_traffic *t, char *line, size_t lineno, int with_demand,
                           const char *path, char *err, size_t errlen, struct pair *out)
{
    char *f[3] = {NULL, NULL, NULL};
    int nf = split_csv(line, f);
    int want = with_demand ? 3 : 2;
    if (nf < 2 || (nf == 3 && !with_demand) || nf > 3)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "%s line %zu: expected %d fields (src,dst%s), got %d", path, lineno, want,
                        with_demand ? ",demand" : "", nf > 3 ? 4 : nf);
    uint64_t v[2];
    for (int i = 0; i < 2; i++)
        if (arb_parse_u64(f[i], strlen(f[i]), t->n - 1, &v[i]) < 0)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "%s line %zu, field %s: '%s' is not a host index 0..%u", path, lineno,
                            i ? "dst" : "src", f[i], t->n - 1);
    if (v[0] == v[1])
        return arb_errf(err, errlen, ARB_EPARSE, "%s line %zu: src and dst are both %llu", path,
                        lineno, (unsigned long long)v[0]);
    double d = 1.0;
    if (nf == 3) {
        char *end;
        errno = 0;
        d = strtod(f[2], &end);
        if (f[2][0] == '\0' || *end || errno || !isfinite(d) || d <= 0)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "%s line %zu, field demand: '%s' is not a positive number", path,
                            lineno, f[2]);
    }
    *out = (struct pair){(uint32_t)v[0], (uint32_t)v[1], d};
    return 0;
}

static int read_file(arb_traffic *t, const char *path, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return arb_errf(err, errlen, ARB_EIO, "%s: cannot open: %s", path, strerror(errno));
    char line[512];
    size_t lineno = 0, cap = 0;
    int with_demand = -1, rc = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(fp)) {
            rc = arb_errf(err, errlen, ARB_EPARSE, "%s line %zu: longer than %zu characters", path,
                          lineno, sizeof line - 2);
            break;
        }
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0' || *s == '\n' || *s == '\r' || *s == '#') continue;
        if (with_demand < 0) {
            char *f[3] = {NULL, NULL, NULL};
            int nf = split_csv(s, f);
            if (nf >= 2 && nf <= 3 && strcmp(f[0], "src") == 0 && strcmp(f[1], "dst") == 0 &&
                (nf == 2 || strcmp(f[2], "demand") == 0)) {
                with_demand = nf == 3;
                continue;
            }
            rc = arb_errf(err, errlen, ARB_EPARSE,
                          "%s line %zu: the header must be 'src,dst' or 'src,dst,demand'", path,
                          lineno);
            break;
        }
        if (t->n_pairs == cap) {
            cap = cap ? cap * 2 : 256;
            struct pair *np = arb_realloc(t->pairs, cap * sizeof *np);
            if (!np) {
                rc = ARB_ENOMEM;
                break;
            }
            t->pairs = np;
        }
        rc = parse_file_line(t, s, lineno, with_demand, path, err, errlen, &t->pairs[t->n_pairs]);
        if (rc < 0) break;
        t->n_pairs++;
    }
    if (rc == 0 && ferror(fp)) rc = arb_errf(err, errlen, ARB_EIO, "%s: read error", path);
    if (rc == 0 && with_demand < 0)
        rc = arb_errf(err, errlen, ARB_EPARSE, "%s: no header line 'src,dst[,demand]'", path);
    if (rc == 0 && t->n_pairs == 0)
        rc = arb_errf(err, errlen, ARB_EPARSE, "%s: no flows after the header", path);
    fclose(fp);
    return rc;
}

static int parse_spec(arb_traffic *t, const char *spec, char *err, size_t errlen)
{
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *arg = colon ? colon + 1 : NULL;
    uint64_t v;

#define IS(name) (nlen == strlen(name) && strncmp(spec, name, nlen) == 0)
    if (IS("shift")) {
        if (arg && strcmp(arg, "all") == 0) {
            t->kind = K_SHIFT_ALL;
            t->n_pairs = t->n;
            snprintf(t->spec, sizeof t->spec, "shift:all");
            return 0;
        }
        if (!arg || arb_parse_u64(arg, strlen(arg), t->n - 1, &v) < 0 || v == 0)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "traffic shift: S must be 'all' or an integer 1..%u, got '%s'",
                            t->n - 1, arg ? arg : "");
        t->kind = K_SHIFT;
        t->shift = (uint32_t)v;
        t->n_pairs = t->n;
        snprintf(t->spec, sizeof t->spec, "shift:%u", t->shift);
        return 0;
    }
    if (IS("ring")) {
        if (arg)
            return arb_errf(err, errlen, ARB_EPARSE, "traffic ring takes no argument, got '%s'",
                            arg);
        t->kind = K_SHIFT;
        t->shift = 1;
        t->n_pairs = t->n;
        snprintf(t->spec, sizeof t->spec, "ring");
        return 0;
    }
    if (IS("all2all")) {
        if (arg)
            return arb_errf(err, errlen, ARB_EPARSE, "traffic all2all takes no argument, got '%s'",
                            arg);
        t->kind = K_ALL2ALL;
        t->n_pairs = (size_t)t->n * (t->n - 1);
        snprintf(t->spec, sizeof t->spec, "all2all");
        return 0;
    }
    if (IS("perm") || IS("bisect")) {
        int perm = IS("perm");
        if (!arg || arb_parse_u64(arg, strlen(arg), UINT64_MAX, &v) < 0)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "traffic %s: SEED must be an integer, got '%s'",
                            perm ? "perm" : "bisect", arg ? arg : "");
        t->kind = K_LIST;
        snprintf(t->spec, sizeof t->spec, "%s:%llu", perm ? "perm" : "bisect",
                 (unsigned long long)v);
        return perm ? make_perm(t, v) : make_bisect(t, v);
    }
    if (IS("file")) {
        if (!arg || !*arg)
            return arb_errf(err, errlen, ARB_EPARSE, "traffic file: needs a path (file:PATH)");
        t->kind = K_LIST;
        snprintf(t->spec, sizeof t->spec, "file:%.58s", arg);
        return read_file(t, arg, err, errlen);
    }
#undef IS
    return arb_errf(err, errlen, ARB_EPARSE,
                    "unknown traffic '%.*s' (shift:S, shift:all, perm:SEED, all2all, ring, "
                    "bisect:SEED, file:PATH)",
                    (int)nlen, spec);
}

int arb_traffic_new(arb_traffic **out, const char *spec, uint32_t n_hosts,
                    const arb_traffic_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen) err[0] = '\0';
    arb_traffic_config def;
    if (!cfg) {
        arb_traffic_config_default(&def);
        cfg = &def;
    }
    if (!spec) return arb_errf(err, errlen, ARB_EINVAL, "no traffic spec");
    if (n_hosts < 2)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "traffic needs at least 2 hosts, the fabric has %u", n_hosts);
    if (cfg->qps == 0 || cfg->qps > 255)
        return arb_errf(err, errlen, ARB_EINVAL, "qps must be 1..255, got %u", cfg->qps);
    if (cfg->sport_lo > cfg->sport_hi)
        return arb_errf(err, errlen, ARB_EINVAL, "source port range %u..%u is empty", cfg->sport_lo,
                        cfg->sport_hi);
    arb_traffic *t = arb_calloc(1, sizeof *t);
    if (!t) return ARB_ENOMEM;
    t->n = n_hosts;
    t->cfg = *cfg;
    int rc = parse_spec(t, spec, err, errlen);
    if (rc < 0) {
        if (rc == ARB_ENOMEM) arb_errf(err, errlen, rc, "out of memory");
        arb_traffic_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void arb_traffic_free(arb_traffic *t)
{
    if (!t) return;
    arb_free(t->pairs);
    arb_free(t);
}

uint32_t arb_traffic_phases(const arb_traffic *t)
{
    return t->kind == K_SHIFT_ALL ? t->n - 1 : 1;
}

size_t arb_traffic_max_flows(const arb_traffic *t)
{
    return t->n_pairs * t->cfg.qps;
}

const char *arb_traffic_spec(const arb_traffic *t)
{
    return t->spec;
}

static struct pair pair_at(const arb_traffic *t, uint32_t phase, size_t i)
{
    switch (t->kind) {
    case K_SHIFT:
        return (struct pair){(uint32_t)i, (uint32_t)((i + t->shift) % t->n), 1.0};
    case K_SHIFT_ALL:
        return (struct pair){(uint32_t)i, (uint32_t)((i + phase + 1) % t->n), 1.0};
    case K_ALL2ALL: {
        uint32_t src = (uint32_t)(i / (t->n - 1)), k = (uint32_t)(i % (t->n - 1));
        return (struct pair){src, k < src ? k : k + 1, 1.0};
    }
    default:
        return t->pairs[i];
    }
}

long arb_traffic_phase(const arb_traffic *t, uint32_t phase, arb_rng *rng, arb_flow *out,
                       size_t cap)
{
    if (phase >= arb_traffic_phases(t)) return ARB_EINVAL;
    size_t n = arb_traffic_max_flows(t);
    if (cap < n) return ARB_ENOSPC;
    uint32_t q = t->cfg.qps;
    uint64_t span = (uint64_t)t->cfg.sport_hi - t->cfg.sport_lo + 1;
    size_t k = 0;
    for (size_t i = 0; i < t->n_pairs; i++) {
        struct pair p = pair_at(t, phase, i);
        for (uint32_t j = 0; j < q; j++, k++) {
            arb_flow *f = &out[k];
            f->src = p.src;
            f->dst = p.dst;
            f->dport = t->cfg.dport;
            f->proto = ARB_IPPROTO_UDP;
            f->qp_index = (uint8_t)j;
            f->demand = p.demand / q;
            if (rng) {
                f->sport = (uint16_t)(t->cfg.sport_lo + arb_rng_below(rng, span));
                f->qp = (uint32_t)(arb_rng_next(rng) >> 40);
            } else {
                f->sport = (uint16_t)(t->cfg.sport_lo + j % span);
                f->qp = (uint32_t)(k & 0xFFFFFF);
            }
        }
    }
    return (long)n;
}
