/*
 * Scenario keys: the key table, the keys' names (with hints for a typo),
 * value parsing and the typed values; ini.c reads files into them.
 */
#include "scn_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/alloc.h"

struct keydef {
    const char *sec, *key;
    enum scn_vt type;
    const char *def, *choices;
    uint64_t lo, hi;
    const char *doc;
};

#define SCN_DEF(id, sec, key, type, def, choices, lo, hi, doc)                                     \
    {sec, key, type, def, choices, (uint64_t)(lo), (uint64_t)(hi), doc},
static const struct keydef keys[K_COUNT] = {SCN_KEYS(SCN_DEF)};
#undef SCN_DEF

static const char *const sections[] = {"fabric", "routing", "transport", "switch", "workload",
                                       "host",   "arbor",   "run",       "lab"};

static char *dup_str(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = arb_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

const char *scn_key_default(enum scn_key k)
{
    return keys[k].def ? keys[k].def : scn_engine_default(k);
}

size_t arb_scenario_n_keys(void)
{
    return K_COUNT;
}

int arb_scenario_key(size_t i, arb_scenario_key_info *info)
{
    if (i >= K_COUNT) return ARB_EINVAL;
    info->section = keys[i].sec;
    info->key = keys[i].key;
    info->def = scn_key_default((enum scn_key)i);
    info->doc = keys[i].doc;
    info->choices = keys[i].choices;
    return 0;
}

static void value_clear(struct scn_value *v)
{
    arb_free(v->text);
    arb_free(v->file);
    arb_free(v->dir);
    memset(v, 0, sizeof *v);
}

int arb_scenario_new(arb_scenario **out)
{
    *out = NULL;
    arb_scenario *sc = arb_calloc(1, sizeof *sc);
    if (!sc) return ARB_ENOMEM;
    for (int k = 0; k < K_COUNT; k++) {
        sc->v[k].text = dup_str(scn_key_default((enum scn_key)k));
        if (!sc->v[k].text) {
            arb_scenario_free(sc);
            return ARB_ENOMEM;
        }
    }
    *out = sc;
    return 0;
}

void arb_scenario_free(arb_scenario *sc)
{
    if (!sc) return;
    for (int k = 0; k < K_COUNT; k++)
        value_clear(&sc->v[k]);
    arb_free(sc->file);
    arb_free(sc);
}

void arb_scenario_set_logger(arb_scenario *sc, const arb_logger *lg)
{
    if (lg)
        sc->log = *lg;
    else
        memset(&sc->log, 0, sizeof sc->log);
}

const char *arb_scenario_file(const arb_scenario *sc)
{
    return sc->file;
}

int scn_find_key(const char *sec, const char *key)
{
    for (int k = 0; k < K_COUNT; k++)
        if (strcmp(keys[k].sec, sec) == 0 && strcmp(keys[k].key, key) == 0) return k;
    return -1;
}

/* The optimal string alignment distance between a and b (edits, and swaps
 * of two neighbours), or a large number past 31 characters. */
static unsigned edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 31 || m > 31) return 99;
    unsigned d[32][32];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            unsigned c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < c)
                c = d[i - 2][j - 2] + 1;
            d[i][j] = c;
        }
    return d[n][m];
}

/* " (did you mean SECTION.KEY?)" for the key nearest to `key`, a typo away
 * (two edits, one for a key of four characters or fewer), in section sec,
 * or in every section when sec is NULL or has none so near; keys equally
 * near are all named ("transport.window or arbor.window"); "" for none. */
const char *scn_key_hint(const char *sec, const char *key, char *buf, size_t len)
{
    const unsigned near = strlen(key) > 4 ? 3 : 2; /* below this */
    for (int pass = sec ? 0 : 1; pass < 2; pass++) {
        const char *scope = pass == 0 ? sec : NULL; /* NULL: every section */
        unsigned best = near;
        int hit[3], n = 0;
        for (int k = 0; k < K_COUNT; k++) {
            if (scope && strcmp(keys[k].sec, scope) != 0) continue;
            unsigned d = edit_distance(key, keys[k].key);
            if (d >= near) continue;
            if (d < best) n = 0, best = d;
            if (d == best && n < 3) hit[n++] = k;
        }
        if (n == 0) continue;
        size_t used = 0;
        for (int i = 0; i < n; i++) {
            int w = snprintf(buf + used, len - used, "%s%s.%s",
                             i == 0       ? " (did you mean "
                             : i == n - 1 ? " or "
                                          : ", ",
                             keys[hit[i]].sec, keys[hit[i]].key);
            if (w < 0 || (size_t)w >= len - used) return "";
            used += (size_t)w;
        }
        if ((size_t)snprintf(buf + used, len - used, "?)") >= len - used) return "";
        return buf;
    }
    return "";
}

int scn_known_section(const char *sec)
{
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (strcmp(sections[i], sec) == 0) return 1;
    return 0;
}

const char *arb_scenario_get(const arb_scenario *sc, const char *section, const char *key)
{
    int k = scn_find_key(section, key);
    return k < 0 ? NULL : sc->v[k].text;
}

const char *arb_scenario_origin(const arb_scenario *sc, const char *section, const char *key,
                                unsigned *line)
{
    int k = scn_find_key(section, key);
    if (line) *line = k < 0 ? 0 : sc->v[k].line;
    return k < 0 ? NULL : sc->v[k].file;
}

/* A value set by a command-line option: "-s section.key" as the user wrote
 * it, or "--pcap (run.pcap)" for an option that stands for a key. */
static void option_where(const char *option, int k, char *buf, size_t len)
{
    if (strcmp(option, "-s") == 0)
        snprintf(buf, len, "-s %s.%s", keys[k].sec, keys[k].key);
    else
        snprintf(buf, len, "%s (%s.%s)", option, keys[k].sec, keys[k].key);
}

void scn_where(const arb_scenario *sc, enum scn_key k, char *buf, size_t len)
{
    const struct scn_value *v = &sc->v[k];
    if (v->file && v->line == 0)
        option_where(v->file, k, buf, len);
    else if (v->file)
        snprintf(buf, len, "%s:%u: %s.%s", v->file, v->line, keys[k].sec, keys[k].key);
    else
        snprintf(buf, len, "%s.%s", keys[k].sec, keys[k].key);
}

int scn_key_fail(const arb_scenario *sc, enum scn_key k, char *err, size_t errlen, int code,
                 const char *msg)
{
    char where[512];
    scn_where(sc, k, where, sizeof where);
    return arb_errf(err, errlen, code, "%s: %s", where, msg);
}

/* ---- value parsing ----------------------------------------------------- */

/* A size (arb_parse_size) of any value: 0, or an ARB_E* code. */
static int parse_size(const char *s, uint64_t *out)
{
    return arb_parse_size(s, strlen(s), UINT64_MAX, out);
}

static int parse_bool(const char *s)
{
    static const char *const yes[] = {"on", "true", "yes", "1"};
    static const char *const no[] = {"off", "false", "no", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) return 1;
        if (strcasecmp(s, no[i]) == 0) return 0;
    }
    return -1;
}

static int parse_rate(const char *s, uint64_t *out)
{
    char buf[64];
    size_t n = strlen(s);
    if (n >= sizeof buf) return ARB_EPARSE;
    memcpy(buf, s, n + 1);
    if (n > 3 && strcasecmp(buf + n - 3, "bps") == 0)
        buf[n - 3] = '\0';
    else if (n > 3 && strcasecmp(buf + n - 3, "b/s") == 0)
        buf[n - 3] = '\0';
    return arb_topo_parse_rate(buf, out);
}

static int enum_index(const char *choices, const char *s)
{
    int i = 0;
    const char *p = choices;
    size_t n = strlen(s);
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0) return i;
        if (!bar) return -1;
        p = bar + 1;
        i++;
    }
}

/* One item of a list key: 0 and its value, or -1. */
static int list_item(enum scn_vt type, const char *s, uint64_t *v)
{
    arb_time t;
    char *end;
    switch (type) {
    case VT_TIMES:
        if (arb_topo_parse_time(s, &t) < 0) return -1;
        *v = t;
        return 0;
    case VT_SIZES:
        return parse_size(s, v) == 0 ? 0 : -1;
    default:
        if (*s < '0' || *s > '9') return -1;
        errno = 0;
        *v = strtoull(s, &end, 10);
        return errno || *end ? -1 : 0;
    }
}

/* The comma-separated items of s (blanks around them ignored) into
 * vals[0..*n) (either may be NULL): 0, or -1 with the first bad item in bad. */
static int each_item(enum scn_vt type, const char *s, uint64_t *vals, uint32_t *n, char *bad,
                     size_t badlen)
{
    uint32_t k = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *e = strchr(p, ',');
        size_t il = e ? (size_t)(e - p) : strlen(p);
        while (il && (p[il - 1] == ' ' || p[il - 1] == '\t'))
            il--;
        char item[64];
        uint64_t v = 0;
        if (il == 0 || il >= sizeof item ||
            (memcpy(item, p, il), item[il] = '\0', list_item(type, item, &v) < 0)) {
            snprintf(bad, badlen, "%.*s", (int)(il < 60 ? il : 60), p);
            return -1;
        }
        if (vals) vals[k] = v;
        k++;
        p = e ? e + 1 : p + strlen(p);
        if (e && !*p) { /* a trailing comma: an empty item */
            snprintf(bad, badlen, "%s", "");
            return -1;
        }
    }
    if (n) *n = k;
    return 0;
}

static int check_items(enum scn_vt type, const char *s, char *msg, size_t len)
{
    static const char *const what[] = {
        "times (a number with ps, ns, us, ms or s)",
        "sizes (a number with an optional unit: " ARB_SIZE_UNITS ")",
        "whole numbers",
    };
    char bad[64];
    if (each_item(type, s, NULL, NULL, bad, sizeof bad) == 0) return 0;
    return arb_errf(msg, len, ARB_EPARSE, "'%s' in '%s': expected a list of %s", bad, s,
                    what[type - VT_TIMES]);
}

int scn_list(const arb_scenario *sc, enum scn_key k, uint64_t **out, uint32_t *n)
{
    const char *s = sc->v[k].text;
    *out = NULL;
    *n = 0;
    if (!*s) return 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    uint64_t *v = arb_malloc(cap * sizeof *v);
    if (!v) return ARB_ENOMEM;
    char bad[64];
    if (each_item(keys[k].type, s, v, n, bad, sizeof bad) < 0) { /* checked when set */
        arb_free(v);
        return ARB_EPARSE;
    }
    *out = v;
    return 0;
}

int scn_is_default(const arb_scenario *sc, enum scn_key k)
{
    return strcmp(sc->v[k].text, scn_key_default(k)) == 0;
}

/* "'s' is not in LO..HI" for a value out of key d's range; a size's
 * bound that is a power of two from 1 MiB on is written as one, and in
 * its binary unit ("2^50 bytes (1 PiB)"). */
static int out_of_range(const struct keydef *d, const char *s, char *msg, size_t len)
{
    uint64_t hi = d->hi;
    if (d->type != VT_SIZE || hi < ((uint64_t)1 << 20) || (hi & (hi - 1)))
        return arb_errf(msg, len, ARB_EPARSE, "'%s' is not in %llu..%llu", s,
                        (unsigned long long)d->lo, (unsigned long long)hi);
    static const char *const units[] = {"MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned n = 0, u = 0;
    while ((hi >> n) > 1)
        n++;
    while (u < 4 && n >= 30 + 10 * u)
        u++;
    return arb_errf(msg, len, ARB_EPARSE, "'%s' is not in %llu..2^%u bytes (%llu %s)", s,
                    (unsigned long long)d->lo, n, (unsigned long long)(hi >> (20 + 10 * u)),
                    units[u]);
}

/* Check `s` for key k; on error write what is wrong into msg. */
int scn_check_value(int k, const char *s, char *msg, size_t len)
{
    const struct keydef *d = &keys[k];
    uint64_t v = 0;
    arb_time t;
    switch (d->type) {
    case VT_STR:
        if (!*s) return arb_errf(msg, len, ARB_EPARSE, "an empty value");
        return 0;
    case VT_LIST:
    case VT_PATH:
        return 0;
    case VT_TIMES:
    case VT_SIZES:
    case VT_COUNTS:
        return check_items(d->type, s, msg, len);
    case VT_SIZE: {
        int rc = arb_parse_size(s, strlen(s), d->hi, &v);
        if (rc == ARB_ERANGE) return out_of_range(d, s, msg, len);
        if (rc < 0) return arb_errf(msg, len, ARB_EPARSE, "'%s' %s", s, arb_size_why(rc));
        break;
    }
    case VT_TIME_OFF:
        if (strcmp(s, "off") == 0) return 0;
        /* fall through */
    case VT_TIME_AUTO:
        if (d->type == VT_TIME_AUTO && strcmp(s, "auto") == 0) return 0;
        /* fall through */
    case VT_TIME: {
        int rc = arb_topo_parse_time(s, &t);
        if (rc < 0)
            return arb_errf(msg, len, ARB_EPARSE,
                            "'%s' is not a time (a number with ps, ns, us, ms or s%s)", s,
                            d->type == VT_TIME_OFF    ? ", or off"
                            : d->type == VT_TIME_AUTO ? ", or auto"
                                                      : "");
        if (d->lo && t < d->lo) return arb_errf(msg, len, ARB_EPARSE, "'%s': must be above 0", s);
        if (d->hi && t > d->hi) { /* (the bounds in use are whole microseconds) */
            int ms = d->hi % ARB_PS_PER_MS == 0;
            return arb_errf(msg, len, ARB_EPARSE, "'%s': must be at most %llu%s", s,
                            (unsigned long long)(d->hi / (ms ? ARB_PS_PER_MS : ARB_PS_PER_US)),
                            ms ? "ms" : "us");
        }
        return 0;
    }
    case VT_RATE:
    case VT_RATE0:
        if (d->type == VT_RATE0 && strcmp(s, "0") == 0) return 0;
        if (parse_rate(s, &v) < 0)
            return arb_errf(msg, len, ARB_EPARSE,
                            "'%s' is not a rate (bits/s with K, M, G or T, e.g. 100G)", s);
        return 0;
    case VT_U64: {
        char *end;
        errno = 0;
        if (!*s || *s == '-' || *s == '+' || *s == ' ')
            return arb_errf(msg, len, ARB_EPARSE, "'%s' is not a whole number", s);
        unsigned long long x = strtoull(s, &end, 10);
        if (errno || *end) return arb_errf(msg, len, ARB_EPARSE, "'%s' is not a whole number", s);
        v = x;
        break;
    }
    case VT_BOOL:
        if (parse_bool(s) < 0)
            return arb_errf(msg, len, ARB_EPARSE, "'%s' is not on/off, true/false, yes/no, 1/0", s);
        return 0;
    case VT_REAL: {
        char *end;
        errno = 0;
        double x = strtod(s, &end);
        if (!*s || errno || *end || !isfinite(x))
            return arb_errf(msg, len, ARB_EPARSE, "'%s' is not a number", s);
        if (x < (double)d->lo || x > (double)d->hi)
            return arb_errf(msg, len, ARB_EPARSE, "'%s' is not in %llu..%llu", s,
                            (unsigned long long)d->lo, (unsigned long long)d->hi);
        return 0;
    }
    case VT_ENUM:
        if (enum_index(d->choices, s) < 0)
            return arb_errf(msg, len, ARB_EPARSE, "'%s' is not one of %s", s, d->choices);
        return 0;
    }
    if (v < d->lo || v > d->hi) return out_of_range(d, s, msg, len);
    return 0;
}

const char *scn_str(const arb_scenario *sc, enum scn_key k)
{
    return sc->v[k].text;
}

uint64_t scn_u64(const arb_scenario *sc, enum scn_key k)
{
    const char *s = sc->v[k].text;
    uint64_t v = 0;
    arb_time t = 0;
    switch (keys[k].type) {
    case VT_SIZE:
        parse_size(s, &v);
        return v;
    case VT_TIME_OFF:
        if (strcmp(s, "off") == 0) return UINT64_MAX;
        /* fall through */
    case VT_TIME_AUTO:
        if (strcmp(s, "auto") == 0) return 0;
        /* fall through */
    case VT_TIME:
        arb_topo_parse_time(s, &t);
        return t;
    case VT_RATE:
    case VT_RATE0:
        if (strcmp(s, "0") == 0) return 0;
        parse_rate(s, &v);
        return v;
    case VT_BOOL:
        return (uint64_t)parse_bool(s);
    default:
        return strtoull(s, NULL, 10);
    }
}

double scn_real(const arb_scenario *sc, enum scn_key k)
{
    return strtod(sc->v[k].text, NULL);
}

char *scn_path(const arb_scenario *sc, enum scn_key k)
{
    const struct scn_value *v = &sc->v[k];
    if (!v->text || !*v->text) return NULL;
    if (v->text[0] == '/' || !v->dir || !*v->dir) return dup_str(v->text);
    size_t n = strlen(v->dir) + strlen(v->text) + 2;
    char *p = arb_malloc(n);
    if (p) snprintf(p, n, "%s/%s", v->dir, v->text);
    return p;
}

/* Trim in place: returns the first non-blank character. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

int scn_set_value(arb_scenario *sc, int k, const char *text, const char *file, unsigned line,
                  const char *dir)
{
    char *t = dup_str(text), *f = dup_str(file), *d = dup_str(dir);
    if (!t || (file && !f) || (dir && !d)) {
        arb_free(t);
        arb_free(f);
        arb_free(d);
        return ARB_ENOMEM;
    }
    value_clear(&sc->v[k]);
    sc->v[k].text = t;
    sc->v[k].file = f;
    sc->v[k].line = line;
    sc->v[k].dir = d;
    return 0;
}

int arb_scenario_set(arb_scenario *sc, const char *assignment, char *err, size_t errlen)
{
    return arb_scenario_set_from(sc, assignment, "-s", err, errlen);
}

/* How many sections have a key named nm, and the first of them in *k. */
static int bare_hits(const char *nm, int *k)
{
    int hits = 0;
    for (int i = 0; i < K_COUNT; i++)
        if (strcmp(keys[i].key, nm) == 0 && hits++ == 0) *k = i;
    return hits;
}

/* Section sec's keys as "sec.a, sec.b, ...": the first four of a longer
 * list, and how many. */
static const char *section_keys(const char *sec, char *buf, size_t len)
{
    int n = 0;
    for (int i = 0; i < K_COUNT; i++)
        n += strcmp(keys[i].sec, sec) == 0;
    size_t used = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int i = 0; i < K_COUNT && (n <= 5 || shown < 4); i++) {
        if (strcmp(keys[i].sec, sec) != 0) continue;
        int w = snprintf(buf + used, len - used, "%s%s.%s", shown ? ", " : "", sec, keys[i].key);
        if (w < 0 || (size_t)w >= len - used) return buf;
        used += (size_t)w;
        shown++;
    }
    if (shown < n) snprintf(buf + used, len - used, ", ... %d in all", n);
    return buf;
}

/* The key a bare name (no section) on a command line stands for, or an
 * error naming the nearest keys of every section. */
static int resolve_bare(const char *nm, const char *opt, char *err, size_t errlen)
{
    int k = -1;
    /* The run's seed is what "seed" means on a command line; the routing
     * seed is reached as routing.seed. */
    if (strcmp(nm, "seed") == 0) return scn_find_key("run", "seed");
    int hits = bare_hits(nm, &k);
    char hint[160];
    if (hits == 0 && scn_known_section(nm))
        return arb_errf(err, errlen, ARB_EPARSE, "%s %s: a section, not a key (its keys: %s)", opt,
                        nm, section_keys(nm, hint, sizeof hint));
    if (hits == 0)
        return arb_errf(err, errlen, ARB_EPARSE, "%s %s: unknown key%s", opt, nm,
                        scn_key_hint(NULL, nm, hint, sizeof hint));
    if (hits > 1) {
        char list[160] = "";
        for (int i = 0; i < K_COUNT; i++)
            if (strcmp(keys[i].key, nm) == 0) {
                size_t used = strlen(list);
                snprintf(list + used, sizeof list - used, "%s%s.%s", used ? ", " : "", keys[i].sec,
                         nm);
            }
        return arb_errf(err, errlen, ARB_EPARSE, "%s %s: ambiguous key: %s", opt, nm, list);
    }
    return k;
}

/* The key "section.key", or a bare "key" (one with a dot of its own, as
 * cc.rate, included), names on a command line; an ARB_E* code with the
 * message otherwise. */
static int resolve_key(char *nm, const char *opt, char *err, size_t errlen)
{
    int k = -1;
    char *dot = strchr(nm, '.');
    if (!dot || bare_hits(nm, &k) > 0) return resolve_bare(nm, opt, err, errlen);
    *dot = '\0';
    char *sec = trim(nm), *key = trim(dot + 1);
    char hint[160];
    if (!scn_known_section(sec)) {
        char whole[128]; /* the name whole: a key with a dot of its own, misspelt? */
        snprintf(whole, sizeof whole, "%s.%s", sec, key);
        if (*scn_key_hint(NULL, whole, hint, sizeof hint))
            return arb_errf(err, errlen, ARB_EPARSE, "%s %s: unknown key%s", opt, whole, hint);
        return arb_errf(err, errlen, ARB_EPARSE, "%s %s: unknown section [%s]", opt, whole, sec);
    }
    k = scn_find_key(sec, key);
    if (k < 0)
        return arb_errf(err, errlen, ARB_EPARSE, "%s %s.%s: unknown key in [%s]%s", opt, sec, key,
                        sec, scn_key_hint(sec, key, hint, sizeof hint));
    return k;
}

int arb_scenario_set_from(arb_scenario *sc, const char *assignment, const char *option, char *err,
                          size_t errlen)
{
    const char *opt = option && *option ? option : "-s";
    const char *eq = strchr(assignment, '=');
    if (!eq)
        return arb_errf(err, errlen, ARB_EPARSE, "%s %s: expected section.key=value", opt,
                        assignment);
    char name[128];
    size_t nl = (size_t)(eq - assignment);
    if (nl >= sizeof name) nl = sizeof name - 1;
    memcpy(name, assignment, nl);
    name[nl] = '\0';
    int k = resolve_key(trim(name), opt, err, errlen);
    if (k < 0) return k;
    char *val = dup_str(eq + 1);
    if (!val) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    char *v = trim(val);
    char msg[256];
    int rc = scn_check_value(k, v, msg, sizeof msg);
    if (rc < 0) {
        arb_free(val);
        char where[160];
        option_where(opt, k, where, sizeof where);
        return arb_errf(err, errlen, rc, "%s: %s", where, msg);
    }
    rc = scn_set_value(sc, k, v, opt, 0, NULL);
    arb_free(val);
    if (rc < 0) return arb_errf(err, errlen, rc, "out of memory");
    return 0;
}

/* Does key k take a list (which may go on over continuation lines)? */
int scn_key_is_list(int k)
{
    return keys[k].type == VT_LIST || keys[k].type == VT_TIMES || keys[k].type == VT_SIZES ||
           keys[k].type == VT_COUNTS;
}
