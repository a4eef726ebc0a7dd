/*
 * Parameter sweeps (sweep.h): the file is cut into literal text and slots,
 * each slot standing for one variable; a point's scenario is the pieces
 * joined with the point's value in each slot. The [sweep] section's lines
 * become blank lines, so every line keeps its number.
 */
#include "sweep_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

/* ---- small helpers ------------------------------------------------------ */

static char *dup_n(const char *s, size_t n)
{
    char *d = arb_malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static int is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_ident(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

static unsigned slot_line(const arb_sweep *sw, const char *section, const char *key);

/* Parser state: where we are, for messages. */
struct parse {
    arb_sweep *sw;
    unsigned line;
    char section[64];
    char key[128];  /* the key of the current (or last) key line */
    int seen_sweep; /* a [sweep] header was read */
    char *err;
    size_t errlen;
};

static int perr(struct parse *ps, const char *fmt, ...) ARB_PRINTF(2, 3);

static int perr(struct parse *ps, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return arb_errf(ps->err, ps->errlen, ARB_EPARSE, "%s:%u: %s", ps->sw->name, ps->line, msg);
}

static int oom(struct parse *ps)
{
    return arb_errf(ps->err, ps->errlen, ARB_ENOMEM, "out of memory");
}

static int add_piece(arb_sweep *sw, struct piece pc)
{
    if (sw->n_pieces == sw->cap_pieces) {
        size_t cap = sw->cap_pieces ? sw->cap_pieces * 2 : 16;
        struct piece *np = arb_realloc(sw->pieces, cap * sizeof *np);
        if (!np) return ARB_ENOMEM;
        sw->pieces = np;
        sw->cap_pieces = cap;
    }
    sw->pieces[sw->n_pieces++] = pc;
    return 0;
}

static int add_literal(arb_sweep *sw, const char *s, size_t n)
{
    if (n == 0) return 0;
    /* join with a literal just before */
    if (sw->n_pieces && sw->pieces[sw->n_pieces - 1].lit) {
        struct piece *last = &sw->pieces[sw->n_pieces - 1];
        size_t old = strlen(last->lit);
        char *t = arb_realloc(last->lit, old + n + 1);
        if (!t) return ARB_ENOMEM;
        memcpy(t + old, s, n);
        t[old + n] = '\0';
        last->lit = t;
        return 0;
    }
    char *d = dup_n(s, n);
    if (!d) return ARB_ENOMEM;
    int rc = add_piece(sw, (struct piece){d, 0, 0, NULL, NULL});
    if (rc < 0) arb_free(d);
    return rc;
}

static int var_add_value(struct sweep_var *v, char *text)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        char **nv = arb_realloc(v->values, cap * sizeof *nv);
        if (!nv) return ARB_ENOMEM;
        v->values = nv;
        v->cap = cap;
    }
    v->values[v->n++] = text;
    return 0;
}

static long find_var(const arb_sweep *sw, const char *name)
{
    for (size_t i = 0; i < sw->n_vars; i++)
        if (strcmp(sw->vars[i].name, name) == 0) return (long)i;
    return -1;
}

/* ---- ranges: A..B [step S], decimals kept exact ---------------------- */

struct dec {
    uint64_t m; /* the digits */
    int d;      /* of them after the point */
};

/* A decimal at *s (digits, optional .digits); advances *s. -1 when none. */
static int parse_dec(const char **s, struct dec *out)
{
    const char *p = *s;
    uint64_t m = 0;
    int d = 0, digits = 0, seen_dot = 0;
    for (;; p++) {
        if (*p >= '0' && *p <= '9') {
            if (++digits > 15) return -1;
            m = m * 10 + (uint64_t)(*p - '0');
            if (seen_dot) d++;
        } else if (*p == '.' && !seen_dot && p[1] >= '0' && p[1] <= '9' && digits) {
            seen_dot = 1;
        } else {
            break;
        }
    }
    if (!digits) return -1;
    *s = p;
    out->m = m;
    out->d = d;
    return 0;
}

static uint64_t pow10u(int d)
{
    uint64_t x = 1;
    while (d-- > 0)
        x *= 10;
    return x;
}

/* The value v / 10^d as the shortest decimal text. */
static char *dec_text(uint64_t v, int d)
{
    char buf[48];
    uint64_t p = pow10u(d);
    uint64_t whole = v / p, frac = v % p;
    int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)whole);
    if (frac) {
        char f[24];
        snprintf(f, sizeof f, "%0*llu", d, (unsigned long long)frac);
        size_t fl = strlen(f);
        while (fl > 0 && f[fl - 1] == '0')
            f[--fl] = '\0';
        snprintf(buf + n, sizeof buf - (size_t)n, ".%s", f);
    }
    return dup_n(buf, strlen(buf));
}

/*
 * If item (bare text) is a range "A..B" or "A..B step S", append its
 * values to v and return 1; 0 when it is not a range; < 0 on an error
 * (message set).
 */
static int not_range(struct parse *ps, const struct sweep_var *v, const char *item)
{
    return perr(
        ps,
        "${%s}: '%s': a range is A..B or A..B step S, each a plain decimal number of 0 or more "
        "(0.001, not 1e-3; no unit: ${x=1..3}us); quote a value that is not a range",
        v->name, item);
}

static int expand_range(struct parse *ps, struct sweep_var *v, const char *item)
{
    const char *p = item;
    struct dec a, b, s = {1, 0};
    /* what reads as a range but is none (1us..3us, -2..2, 1e-3..2e-3) is an
     * error, not a literal: a literal with ".." in it (a path) starts
     * otherwise, or is quoted */
    int looks = (isdigit((unsigned char)item[0]) || item[0] == '-') && strstr(item, "..");
    if (parse_dec(&p, &a) < 0 || strncmp(p, "..", 2) != 0)
        return looks ? not_range(ps, v, item) : 0;
    p += 2;
    if (parse_dec(&p, &b) < 0) return looks ? not_range(ps, v, item) : 0;
    while (is_blank(*p))
        p++;
    if (*p) {
        if (strncmp(p, "step", 4) != 0) return not_range(ps, v, item);
        p += 4;
        int gap = is_blank(*p);
        while (is_blank(*p))
            p++;
        if (!gap || parse_dec(&p, &s) < 0 || *p)
            return perr(ps, "${%s}: '%s': a range is A..B or A..B step S (S a positive number)",
                        v->name, item);
    }
    int d = a.d > b.d ? a.d : b.d;
    if (s.d > d) d = s.d;
    if (d > 9) return perr(ps, "${%s}: '%s': at most 9 decimals", v->name, item);
    uint64_t lo = a.m * pow10u(d - a.d), hi = b.m * pow10u(d - b.d), st = s.m * pow10u(d - s.d);
    if (st == 0) return perr(ps, "${%s}: '%s': the step must be above 0", v->name, item);
    if (hi < lo) return perr(ps, "${%s}: '%s': the range ends below its start", v->name, item);
    if ((hi - lo) / st >= ARB_SWEEP_MAX_POINTS)
        return perr(ps, "${%s}: '%s': more than %u values", v->name, item, ARB_SWEEP_MAX_POINTS);
    for (uint64_t x = lo; x <= hi; x += st) {
        char *t = dec_text(x, d);
        if (!t || var_add_value(v, t) < 0) {
            arb_free(t);
            return oom(ps);
        }
        if (hi - x < st) break;
    }
    return 1;
}

/* ---- ${...} ------------------------------------------------------------ */

/* One value of a list starting at *pp (after blanks); advances past it and
 * its blanks. */
static int list_item(struct parse *ps, struct sweep_var *v, const char **pp, const char *end)
{
    const char *p = *pp;
    while (p < end && is_blank(*p))
        p++;
    if (p < end && *p == '"') {
        char *buf = arb_malloc((size_t)(end - p) + 1);
        if (!buf) return oom(ps);
        size_t n = 0;
        for (p++; p < end && *p != '"'; p++) {
            if (*p == '\\' && p + 1 < end && (p[1] == '"' || p[1] == '\\')) p++;
            buf[n++] = *p;
        }
        buf[n] = '\0';
        if (p >= end) {
            arb_free(buf);
            return perr(ps, "${%s}: a quoted value without its closing '\"'", v->name);
        }
        p++;
        while (p < end && is_blank(*p))
            p++;
        if (p < end && *p != ',') {
            arb_free(buf);
            return perr(ps, "${%s}: text after a quoted value (values are separated by ',')",
                        v->name);
        }
        if (var_add_value(v, buf) < 0) {
            arb_free(buf);
            return oom(ps);
        }
        *pp = p;
        return 0;
    }
    const char *q = p;
    while (q < end && *q != ',')
        q++;
    const char *e = q;
    while (e > p && is_blank(e[-1]))
        e--;
    if (e == p) return perr(ps, "${%s}: an empty value (quote it: \"\")", v->name);
    char *item = dup_n(p, (size_t)(e - p));
    if (!item) return oom(ps);
    if (strchr(item, '"')) {
        arb_free(item);
        return perr(ps, "${%s}: a '\"' inside a value (quote the whole value)", v->name);
    }
    int rc = expand_range(ps, v, item);
    if (rc == 0) {
        if (var_add_value(v, item) < 0) {
            arb_free(item);
            return oom(ps);
        }
        item = NULL;
    }
    arb_free(item);
    if (rc < 0) return rc;
    *pp = q;
    return 0;
}

static int new_var(struct parse *ps, const char *name, size_t *idx)
{
    arb_sweep *sw = ps->sw;
    long prev = find_var(sw, name);
    if (prev >= 0)
        return perr(ps, "${%s}: declared again (first on line %u); refer to it as ${%s}", name,
                    sw->vars[prev].line, name);
    if (sw->n_vars == sw->cap_vars) {
        size_t cap = sw->cap_vars ? sw->cap_vars * 2 : 8;
        struct sweep_var *nv = arb_realloc(sw->vars, cap * sizeof *nv);
        if (!nv) return oom(ps);
        sw->vars = nv;
        sw->cap_vars = cap;
    }
    struct sweep_var *v = &sw->vars[sw->n_vars];
    memset(v, 0, sizeof *v);
    v->name = dup_n(name, strlen(name));
    if (!v->name) return oom(ps);
    v->line = ps->line;
    *idx = sw->n_vars++;
    return 0;
}

/* A slot for variable var (or the reference ref, resolved later) in the
 * value of the current key. */
static int add_slot(struct parse *ps, size_t var, char *ref)
{
    size_t n = strlen(ps->section) + strlen(ps->key) + 2;
    char *key = arb_malloc(n);
    if (!key) return ARB_ENOMEM;
    snprintf(key, n, "%s.%s", ps->section, ps->key);
    if (add_piece(ps->sw, (struct piece){NULL, var, ps->line, ref, key}) < 0) {
        arb_free(key);
        return ARB_ENOMEM;
    }
    return 0;
}

/* Is there a "${" in body[0..len)? */
static int has_open(const char *body, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++)
        if (body[i] == '$' && body[i + 1] == '{') return 1;
    return 0;
}

/* Does an unnamed list start as a declaration whose name is not one
 * (${1x=1,2}, ${a-b=1,2})? Letters, digits, '_' and '-' up to an '=', the
 * whole not a name. (Other text before an '=' is a value: up:L1.0 rate=2G.) */
static int bad_name(const char *body, size_t len)
{
    size_t i = 0;
    while (i < len && is_blank(body[i]))
        i++;
    size_t from = i;
    while (i < len && (is_ident(body[i]) || body[i] == '-'))
        i++;
    size_t to = i;
    while (i < len && is_blank(body[i]))
        i++;
    return to > from && i < len && body[i] == '=';
}

/* The construct between "${" and its '}' (body, len): a declaration or a
 * reference; appends its slot. */
static int construct(struct parse *ps, const char *body, size_t len)
{
    arb_sweep *sw = ps->sw;
    const char *end = body + len, *p = body;
    while (p < end && is_blank(*p))
        p++;
    const char *id = p;
    if (p < end && is_ident_start(*p))
        while (p < end && is_ident(*p))
            p++;
    const char *id_end = p;
    while (p < end && is_blank(*p))
        p++;
    char name[256]; /* section (63) . key (127) #N */
    const char *values;
    if (has_open(body, len))
        return perr(ps, "${...}: a ${ inside another (one variable per ${...}; put a reference "
                        "${name} beside it, not in it)");
    if (id_end > id && p == end) { /* ${name}: a reference */
        size_t n = (size_t)(id_end - id);
        if (n >= sizeof name) return perr(ps, "${...}: a variable name longer than 63 characters");
        char *ref = dup_n(id, n);
        if (!ref) return oom(ps);
        if (add_slot(ps, 0, ref) < 0) {
            arb_free(ref);
            return oom(ps);
        }
        return 0;
    }
    if (id_end > id && *p == '=') { /* ${name=values} */
        size_t n = (size_t)(id_end - id);
        if (n > 63) return perr(ps, "${...}: a variable name longer than 63 characters");
        memcpy(name, id, n);
        name[n] = '\0';
        values = p + 1;
    } else { /* ${values}: named after its key */
        if (!ps->key[0]) return perr(ps, "${...}: outside a key's value");
        if (bad_name(body, len))
            return perr(ps,
                        "${%.*s}: a variable's name is a letter or '_', then letters, digits "
                        "or '_'",
                        (int)len, body);
        snprintf(name, sizeof name, "%s.%s", ps->section, ps->key);
        for (int k = 2; find_var(sw, name) >= 0; k++)
            snprintf(name, sizeof name, "%s.%s#%d", ps->section, ps->key, k);
        values = body;
    }
    size_t idx = 0;
    int rc = new_var(ps, name, &idx);
    if (rc < 0) return rc;
    struct sweep_var *v = &sw->vars[idx];
    const char *q = values;
    for (;;) {
        rc = list_item(ps, v, &q, end);
        if (rc < 0) return rc;
        if (q >= end) break;
        q++; /* the ',' */
    }
    if (v->n > ARB_SWEEP_MAX_POINTS)
        return perr(ps, "${%s}: more than %u values", v->name, ARB_SWEEP_MAX_POINTS);
    if (add_slot(ps, idx, NULL) < 0) return oom(ps);
    return 0;
}

/* The end of a ${...} starting at body: its '}' outside quotes, or NULL. */
static const char *construct_end(const char *body, const char *eol)
{
    int quoted = 0;
    for (const char *p = body; p < eol; p++) {
        if (quoted && *p == '\\' && p + 1 < eol)
            p++;
        else if (*p == '"')
            quoted = !quoted;
        else if (*p == '}' && !quoted)
            return p;
    }
    return NULL;
}

/* A key line, or a continuation (indented) of the last key's value: its
 * literal text and slots. */
static int key_line(struct parse *ps, const char *s, const char *eol, int continuation)
{
    arb_sweep *sw = ps->sw;
    if (!continuation) {
        const char *eq = memchr(s, '=', (size_t)(eol - s));
        const char *colon = memchr(s, ':', (size_t)(eol - s));
        if (colon && (!eq || colon < eq)) eq = colon;
        const char *k = s, *ke = eq ? eq : s;
        while (k < ke && is_blank(*k))
            k++;
        while (ke > k && is_blank(ke[-1]))
            ke--;
        size_t n = (size_t)(ke - k);
        if (n >= sizeof ps->key) n = sizeof ps->key - 1;
        memcpy(ps->key, k, n);
        ps->key[n] = '\0';
    }
    const char *p = s, *lit = s;
    while (p < eol) {
        if (*p == ';' && p > s && is_blank(p[-1])) break; /* an inline comment */
        if (p[0] == '$' && p + 1 < eol && p[1] == '{') {
            if (add_literal(sw, lit, (size_t)(p - lit)) < 0) return oom(ps);
            const char *close = construct_end(p + 2, eol);
            if (!close) return perr(ps, "%s.%s: '${' without its '}'", ps->section, ps->key);
            int rc = construct(ps, p + 2, (size_t)(close - p - 2));
            if (rc < 0) return rc;
            p = lit = close + 1;
            continue;
        }
        p++;
    }
    return add_literal(sw, lit, (size_t)(eol - lit)) < 0 ? oom(ps) : 0;
}

/* A line of [sweep]: repeat = N or seeds = A..B. */
static int sweep_line(struct parse *ps, const char *s, const char *eol)
{
    arb_sweep *sw = ps->sw;
    char buf[256];
    size_t n = (size_t)(eol - s);
    if (n >= sizeof buf) return perr(ps, "sweep: the line is too long");
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *semi = strstr(buf, " ;");
    if (semi) *semi = '\0';
    char *eq = strchr(buf, '=');
    if (!eq) return perr(ps, "sweep: expected key = value (repeat, seeds)");
    *eq = '\0';
    char *k = buf, *v = eq + 1;
    while (is_blank(*k))
        k++;
    for (char *e = k + strlen(k); e > k && is_blank(e[-1]);)
        *--e = '\0';
    while (is_blank(*v))
        v++;
    for (char *e = v + strlen(v); e > v && is_blank(e[-1]);)
        *--e = '\0';
    if (strstr(v, "${")) return perr(ps, "sweep.%s: a [sweep] key cannot be swept", k);
    if (strcmp(k, "repeat") == 0) {
        char *e;
        errno = 0;
        unsigned long long r = strtoull(v, &e, 10);
        if (!*v || *e || errno || r < 1 || r > ARB_SWEEP_MAX_REPS || *v == '-')
            return perr(ps, "sweep.repeat: '%s' is not a count from 1 to %u", v,
                        ARB_SWEEP_MAX_REPS);
        if (sw->have_seeds) return perr(ps, "sweep.repeat: not with sweep.seeds (one or other)");
        if (sw->have_repeat)
            return perr(ps, "sweep.repeat: again (first on line %u)", sw->repeat_line);
        sw->repeat_line = ps->line;
        sw->reps = (unsigned)r;
        sw->have_repeat = 1;
        return 0;
    }
    if (strcmp(k, "seeds") == 0) {
        char *dots = strstr(v, ".."), *e1, *e2;
        if (sw->have_repeat) return perr(ps, "sweep.seeds: not with sweep.repeat (one or other)");
        if (sw->have_seeds)
            return perr(ps, "sweep.seeds: again (first on line %u)", sw->seeds_line);
        unsigned long long a = 0, b = 0;
        int ok = dots != NULL && dots != v && *v != '-' && dots[2] != '-';
        if (ok) {
            errno = 0;
            a = strtoull(v, &e1, 10);
            b = strtoull(dots + 2, &e2, 10);
            ok = !errno && e1 == dots && dots[2] && !*e2 && a <= b && b - a < ARB_SWEEP_MAX_REPS;
        }
        if (!ok)
            return perr(ps, "sweep.seeds: '%s' is not A..B with A <= B, at most %u seeds", v,
                        ARB_SWEEP_MAX_REPS);
        sw->have_seeds = 1;
        sw->seeds_line = ps->line;
        sw->seed_first = a;
        sw->reps = (unsigned)(b - a + 1);
        return 0;
    }
    return perr(ps, "sweep.%s: unknown key in [sweep] (repeat, seeds)", k);
}

static int parse_text(struct parse *ps, const char *text)
{
    arb_sweep *sw = ps->sw;
    int in_sweep = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        const char *eol = nl ? nl : p + strlen(p);
        const char *next = nl ? nl + 1 : eol;
        ps->line++;
        const char *s = p;
        while (s < eol && is_blank(*s))
            s++;
        int rc = 0;
        if (s < eol && *s == '[') {
            const char *e = memchr(s, ']', (size_t)(eol - s));
            size_t n = e ? (size_t)(e - s - 1) : 0;
            if (n >= sizeof ps->section) n = sizeof ps->section - 1;
            memcpy(ps->section, s + 1, n);
            ps->section[n] = '\0';
            ps->key[0] = '\0';
            in_sweep = strcmp(ps->section, "sweep") == 0;
            if (in_sweep && ps->seen_sweep)
                return perr(ps, "[sweep] again: one [sweep] section per file");
            ps->seen_sweep |= in_sweep;
            /* [sweep] is the sweep's own: the scenario sees a blank line */
            if (in_sweep)
                rc = add_literal(sw, "\n", 1) < 0 ? oom(ps) : 0;
            else
                rc = add_literal(sw, p, (size_t)(next - p)) < 0 ? oom(ps) : 0;
        } else if (in_sweep) {
            if (s < eol && *s != ';' && *s != '#') rc = sweep_line(ps, s, eol);
            if (rc == 0 && add_literal(sw, "\n", 1) < 0) rc = oom(ps);
        } else if (s == eol || *s == ';' || *s == '#') {
            rc = add_literal(sw, p, (size_t)(next - p)) < 0 ? oom(ps) : 0;
        } else {
            rc = key_line(ps, p, eol, s != p);
            if (rc == 0 && nl && add_literal(sw, "\n", 1) < 0) rc = oom(ps);
        }
        if (rc < 0) return rc;
        p = next;
    }
    /* references, now that every declaration is known */
    for (size_t i = 0; i < sw->n_pieces; i++) {
        struct piece *pc = &sw->pieces[i];
        if (!pc->ref) continue;
        long v = find_var(sw, pc->ref);
        if (v < 0) {
            ps->line = pc->line;
            return perr(ps, "${%s}: no variable %s is declared (declare it as ${%s=A,B,...})",
                        pc->ref, pc->ref, pc->ref);
        }
        pc->var = (size_t)v;
        arb_free(pc->ref);
        pc->ref = NULL;
    }
    /* a swept run.seed: seeds = A..B would set it over every point's value */
    unsigned seed_at = slot_line(sw, "run", "seed");
    if (seed_at && sw->have_seeds) {
        ps->line = seed_at;
        return perr(ps,
                    "run.seed: swept here, and sweep.seeds (line %u) sets it for each "
                    "replication: one or other (or sweep.repeat, which counts up from each value)",
                    sw->seeds_line);
    }
    sw->n_points = 1;
    for (size_t i = sw->n_vars; i-- > 0;) {
        sw->vars[i].stride = sw->n_points;
        if (sw->vars[i].n > ARB_SWEEP_MAX_POINTS / sw->n_points) {
            ps->line = sw->vars[i].line;
            return perr(ps, "${%s}: the sweep has more than %u points", sw->vars[i].name,
                        ARB_SWEEP_MAX_POINTS);
        }
        sw->n_points *= sw->vars[i].n;
    }
    return 0;
}

/* ---- the API ------------------------------------------------------------ */

static unsigned slot_line(const arb_sweep *sw, const char *section, const char *key)
{
    size_t sl = section ? strlen(section) : 0;
    for (size_t i = 0; i < sw->n_pieces; i++) {
        const char *k = sw->pieces[i].key;
        if (!k) continue;
        const char *dot = strchr(k, '.');
        if (section && (strncmp(k, section, sl) != 0 || k + sl != dot)) continue;
        if (strcmp(dot + 1, key) == 0) return sw->pieces[i].line;
    }
    return 0;
}

unsigned arb_sweep_sets_key(const arb_sweep *sw, const char *section, const char *key)
{
    unsigned at = slot_line(sw, section, key);
    if (!at && sw->have_seeds && (!section || strcmp(section, "run") == 0) &&
        strcmp(key, "seed") == 0)
        at = sw->seeds_line;
    return at;
}

void arb_sweep_free(arb_sweep *sw)
{
    if (!sw) return;
    for (size_t i = 0; i < sw->n_pieces; i++) {
        arb_free(sw->pieces[i].lit);
        arb_free(sw->pieces[i].ref);
        arb_free(sw->pieces[i].key);
    }
    arb_free(sw->pieces);
    for (size_t i = 0; i < sw->n_vars; i++) {
        for (size_t j = 0; j < sw->vars[i].n; j++)
            arb_free(sw->vars[i].values[j]);
        arb_free(sw->vars[i].values);
        arb_free(sw->vars[i].name);
    }
    arb_free(sw->vars);
    arb_free(sw->name);
    arb_free(sw->dir);
    arb_free(sw);
}

int arb_sweep_parse(const char *text, const char *name, const char *dir, arb_sweep **out, char *err,
                    size_t errlen)
{
    *out = NULL;
    arb_sweep *sw = arb_calloc(1, sizeof *sw);
    if (!sw) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    if (!name) name = "scenario";
    sw->name = dup_n(name, strlen(name));
    sw->dir = dir ? dup_n(dir, strlen(dir)) : NULL;
    sw->reps = 1;
    if (!sw->name || (dir && !sw->dir)) {
        arb_sweep_free(sw);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    struct parse ps;
    memset(&ps, 0, sizeof ps);
    ps.sw = sw;
    ps.err = err;
    ps.errlen = errlen;
    int rc = parse_text(&ps, text);
    if (rc < 0) {
        arb_sweep_free(sw);
        return rc;
    }
    *out = sw;
    return 0;
}

int arb_sweep_load(const char *path, arb_sweep **out, char *err, size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return arb_errf(err, errlen, ARB_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = arb_malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            char *nb = cap < (1u << 24) ? arb_realloc(buf, cap * 2) : NULL;
            if (!nb) {
                arb_free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) break;
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        arb_free(buf);
        return arb_errf(err, errlen, buf ? ARB_EIO : ARB_ENOMEM, "%s: cannot read", path);
    }
    buf[len] = '\0';
    if (memchr(buf, '\0', len)) {
        arb_free(buf);
        return arb_errf(err, errlen, ARB_EPARSE, "%s: a NUL byte: not a scenario file", path);
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash == path ? dup_n("/", 1) : dup_n(path, slash ? (size_t)(slash - path) : 0);
    int rc = dir ? arb_sweep_parse(buf, path, dir, out, err, errlen)
                 : arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    arb_free(dir);
    arb_free(buf);
    return rc;
}
