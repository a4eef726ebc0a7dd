/*
 * Trace files: our CSV (`src,dst,bytes,start_us[,sport[,qp]]`) and htsim's
 * connection matrix. Every complaint names the file, the line and the
 * field, since these files are written by hand or by other tools.
 */
#include "wl_int.h"

#include "base/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

struct reader {
    const char *name;
    const uint32_t *n_hosts;
    unsigned line;
    char *err;
    size_t errlen;
};

static int bad(const struct reader *rd, const char *field, const char *what, const char *tok,
               size_t len)
{
    if (len > 40) len = 40;
    return arb_errf(rd->err, rd->errlen, ARB_EPARSE, "%s:%u: %s: %s '%.*s'", rd->name, rd->line,
                    field, what, (int)len, tok);
}

/* Microseconds with up to six decimals, to picoseconds. */
static int parse_us(const char *s, size_t len, arb_time *out)
{
    const char *dot = memchr(s, '.', len);
    size_t il = dot ? (size_t)(dot - s) : len;
    uint64_t whole, frac = 0;
    if (arb_parse_u64(s, il, UINT64_MAX / ARB_PS_PER_US - 1, &whole) < 0) return -1;
    if (dot) {
        size_t fl = len - il - 1;
        if (fl == 0 || fl > 6 || arb_parse_u64(dot + 1, fl, 999999, &frac) < 0) return -1;
        for (size_t i = fl; i < 6; i++)
            frac *= 10;
    }
    *out = whole * ARB_PS_PER_US + frac;
    return 0;
}

static const char *trim(const char *b, const char *e, const char **end)
{
    while (b < e && (*b == ' ' || *b == '\t' || *b == '\r'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    *end = e;
    return b;
}

static int push(arb_wl_flow **v, size_t *n, size_t *cap, const arb_wl_flow *f)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        arb_wl_flow *nv = arb_realloc(*v, nc * sizeof *nv);
        if (!nv) return ARB_ENOMEM;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = *f;
    return 0;
}

static int host_field(const struct reader *rd, const char *field, const char *t, size_t len,
                      uint32_t *out)
{
    uint64_t v;
    if (arb_parse_u64(t, len, UINT32_MAX, &v) < 0)
        return bad(rd, field, "not a host index", t, len);
    if (v >= *rd->n_hosts) {
        char what[64];
        snprintf(what, sizeof what, "host not below the fabric's %u hosts:", *rd->n_hosts);
        return bad(rd, field, what, t, len);
    }
    *out = (uint32_t)v;
    return 0;
}

/* One CSV line after the header: split at commas into at most 6 fields. */
static int csv_line(const struct reader *rd, const char *b, const char *e, int has_sport,
                    arb_wl_flow *f)
{
    static const char *const names[] = {"src", "dst", "bytes", "start_us", "sport", "qp"};
    const char *fb[6], *fe[6];
    int nf = 0;
    const char *p = b;
    for (;;) {
        const char *c = memchr(p, ',', (size_t)(e - p));
        const char *end = c ? c : e;
        if (nf == 6) return bad(rd, "line", "too many fields in", b, (size_t)(e - b));
        fb[nf] = trim(p, end, &fe[nf]);
        nf++;
        if (!c) break;
        p = c + 1;
    }
    int want = 4 + has_sport; /* has_sport: 1 sport, 2 sport and qp */
    if (nf != want) {
        char what[64];
        snprintf(what, sizeof what, "%d fields where the header has %d in", nf, want);
        return bad(rd, "line", what, b, (size_t)(e - b));
    }
    memset(f, 0, sizeof *f);
    int rc;
    if ((rc = host_field(rd, names[0], fb[0], (size_t)(fe[0] - fb[0]), &f->src)) < 0) return rc;
    if ((rc = host_field(rd, names[1], fb[1], (size_t)(fe[1] - fb[1]), &f->dst)) < 0) return rc;
    if (f->src == f->dst)
        return bad(rd, "dst", "same host as src:", fb[1], (size_t)(fe[1] - fb[1]));
    if (arb_parse_u64(fb[2], (size_t)(fe[2] - fb[2]), UINT64_MAX, &f->bytes) < 0 || f->bytes == 0)
        return bad(rd, names[2], "not a positive byte count", fb[2], (size_t)(fe[2] - fb[2]));
    if (parse_us(fb[3], (size_t)(fe[3] - fb[3]), &f->start) < 0)
        return bad(rd, names[3], "not microseconds (up to 6 decimals)", fb[3],
                   (size_t)(fe[3] - fb[3]));
    if (has_sport && fe[4] > fb[4]) {
        uint64_t v;
        if (arb_parse_u64(fb[4], (size_t)(fe[4] - fb[4]), 65535, &v) < 0 || v == 0)
            return bad(rd, names[4], "not a UDP port 1..65535", fb[4], (size_t)(fe[4] - fb[4]));
        f->sport = (uint16_t)v;
    }
    if (has_sport == 2 && fe[5] > fb[5]) {
        uint64_t v;
        if (arb_parse_u64(fb[5], (size_t)(fe[5] - fb[5]), 0xFFFFFF, &v) < 0 || v == 0)
            return bad(rd, names[5], "not a QP number 1..16777215", fb[5], (size_t)(fe[5] - fb[5]));
        f->qp = (uint32_t)v;
    }
    return 0;
}

/* Next whitespace-separated token in [*p, e); NULL at the end. */
static const char *token(const char **p, const char *e, size_t *len)
{
    const char *s = *p;
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    if (s == e) return NULL;
    const char *t = s;
    while (t < e && *t != ' ' && *t != '\t' && *t != '\r')
        t++;
    *len = (size_t)(t - s);
    *p = t;
    return s;
}

static int tok_is(const char *t, size_t len, const char *word)
{
    return t && strlen(word) == len && memcmp(t, word, len) == 0;
}

/* `SRC->DST id I start T size BYTES` */
static int htsim_line(const struct reader *rd, const char *b, const char *e, arb_wl_flow *f)
{
    const char *p = b;
    size_t len;
    const char *t = token(&p, e, &len);
    const char *arrow = t ? strstr(t, "->") : NULL;
    if (!t || !arrow || arrow >= t + len)
        return bad(rd, "SRC->DST", "expected SRC->DST, got", t ? t : b, t ? len : 0);
    memset(f, 0, sizeof *f);
    int rc;
    if ((rc = host_field(rd, "SRC", t, (size_t)(arrow - t), &f->src)) < 0) return rc;
    if ((rc = host_field(rd, "DST", arrow + 2, (size_t)(t + len - arrow - 2), &f->dst)) < 0)
        return rc;
    if (f->src == f->dst) return bad(rd, "DST", "same host as SRC:", t, len);
    int have_id = 0, have_start = 0, have_size = 0;
    for (;;) {
        const char *k = token(&p, e, &len);
        if (!k) break;
        size_t kl = len;
        const char *v = token(&p, e, &len);
        if (!v) return bad(rd, "line", "a key without a value:", k, kl);
        if (tok_is(k, kl, "id")) {
            uint64_t id;
            if (arb_parse_u64(v, len, UINT64_MAX, &id) < 0)
                return bad(rd, "id", "not a number", v, len);
            have_id = 1;
        } else if (tok_is(k, kl, "start")) {
            if (parse_us(v, len, &f->start) < 0)
                return bad(rd, "start", "not microseconds (up to 6 decimals)", v, len);
            have_start = 1;
        } else if (tok_is(k, kl, "size")) {
            if (arb_parse_u64(v, len, UINT64_MAX, &f->bytes) < 0 || f->bytes == 0)
                return bad(rd, "size", "not a positive byte count", v, len);
            have_size = 1;
        } else {
            return bad(rd, "line", "unsupported key", k, kl);
        }
    }
    if (!have_id) return bad(rd, "id", "missing in", b, (size_t)(e - b));
    if (!have_start) return bad(rd, "start", "missing in", b, (size_t)(e - b));
    if (!have_size) return bad(rd, "size", "missing in", b, (size_t)(e - b));
    return 0;
}

/* `WORD N` header line of the connection matrix. */
static int htsim_header(const struct reader *rd, const char *b, const char *e, const char *word,
                        uint64_t *out)
{
    const char *p = b;
    size_t len;
    const char *t = token(&p, e, &len);
    if (!tok_is(t, len, word)) {
        char what[64];
        snprintf(what, sizeof what, "expected '%s N', got", word);
        return bad(rd, word, what, b, (size_t)(e - b));
    }
    const char *v = token(&p, e, &len);
    size_t rest;
    if (!v || arb_parse_u64(v, len, UINT32_MAX, out) < 0 || token(&p, e, &rest))
        return bad(rd, word, "not a count:", b, (size_t)(e - b));
    return 0;
}

static int parse_text(arb_workload_kind kind, const char *text, struct reader *rd,
                      arb_wl_flow **flows, size_t *n_flows)
{
    arb_wl_flow *v = NULL;
    size_t n = 0, cap = 0;
    int state = 0; /* CSV: 0 header, 1 rows. htsim: 0 Nodes, 1 Connections, 2 rows */
    int has_sport = 0;
    uint64_t conns = 0, total = 0;
    int rc = 0;
    const char *p = text;
    rd->line = 0;
    while (*p && rc == 0) {
        const char *nl = strchr(p, '\n');
        const char *e = nl ? nl : p + strlen(p);
        rd->line++;
        const char *te;
        const char *b = trim(p, e, &te);
        p = nl ? nl + 1 : e;
        if (b == te || *b == '#') continue;
        arb_wl_flow f;
        if (kind == ARB_WL_TRACE) {
            if (state == 0) {
                size_t len = (size_t)(te - b);
                char hdr[64];
                if (len >= sizeof hdr) len = sizeof hdr - 1;
                size_t k = 0;
                for (size_t i = 0; i < len; i++)
                    if (b[i] != ' ' && b[i] != '\t') hdr[k++] = b[i];
                hdr[k] = '\0';
                if (strcmp(hdr, "src,dst,bytes,start_us") == 0)
                    has_sport = 0;
                else if (strcmp(hdr, "src,dst,bytes,start_us,sport") == 0)
                    has_sport = 1;
                else if (strcmp(hdr, "src,dst,bytes,start_us,sport,qp") == 0)
                    has_sport = 2;
                else
                    rc = bad(rd, "header", "expected 'src,dst,bytes,start_us[,sport[,qp]]', got", b,
                             (size_t)(te - b));
                state = 1;
                continue;
            }
            rc = csv_line(rd, b, te, has_sport, &f);
        } else {
            if (state == 0) {
                uint64_t nodes;
                rc = htsim_header(rd, b, te, "Nodes", &nodes);
                if (rc == 0 && nodes > *rd->n_hosts)
                    rc = arb_errf(rd->err, rd->errlen, ARB_EPARSE,
                                  "%s:%u: Nodes: %llu nodes, the fabric has %u hosts", rd->name,
                                  rd->line, (unsigned long long)nodes, *rd->n_hosts);
                state = 1;
                continue;
            }
            if (state == 1) {
                rc = htsim_header(rd, b, te, "Connections", &conns);
                state = 2;
                continue;
            }
            rc = htsim_line(rd, b, te, &f);
        }
        if (rc == 0 && f.bytes > UINT64_MAX - total)
            rc = arb_errf(rd->err, rd->errlen, ARB_EPARSE,
                          "%s:%u: %s: the flows' bytes add up past 2^64", rd->name, rd->line,
                          kind == ARB_WL_TRACE ? "bytes" : "size");
        total += rc == 0 ? f.bytes : 0;
        if (rc == 0 && push(&v, &n, &cap, &f) < 0)
            rc = arb_errf(rd->err, rd->errlen, ARB_ENOMEM, "out of memory");
    }
    if (rc == 0 && kind == ARB_WL_TRACE && state == 0)
        rc = arb_errf(rd->err, rd->errlen, ARB_EPARSE, "%s: header: the file is empty", rd->name);
    if (rc == 0 && kind == ARB_WL_HTSIM && state < 2)
        rc = arb_errf(rd->err, rd->errlen, ARB_EPARSE, "%s:%u: %s: missing", rd->name, rd->line,
                      state == 0 ? "Nodes" : "Connections");
    if (rc == 0 && kind == ARB_WL_HTSIM && conns != n)
        rc = arb_errf(rd->err, rd->errlen, ARB_EPARSE,
                      "%s:%u: Connections: says %llu, the file has %zu", rd->name, rd->line,
                      (unsigned long long)conns, n);
    if (rc == 0 && n == 0)
        rc = arb_errf(rd->err, rd->errlen, ARB_EPARSE, "%s:%u: no flows", rd->name, rd->line);
    if (rc < 0) {
        arb_free(v);
        return rc;
    }
    *flows = v;
    *n_flows = n;
    return 0;
}

int arb_workload_parse(arb_workload **out, arb_workload_kind kind, const char *text,
                       const char *name, uint32_t n_hosts, const arb_workload_config *cfg,
                       char *err, size_t errlen)
{
    *out = NULL;
    if (!text || (kind != ARB_WL_TRACE && kind != ARB_WL_HTSIM))
        return arb_errf(err, errlen, ARB_EINVAL, "not a trace kind");
    struct reader rd = {name ? name : "trace", &n_hosts, 0, err, errlen};
    arb_workload *w = NULL;
    int rc = wl_alloc(&w, kind, n_hosts, cfg, err, errlen);
    if (rc < 0) return rc;
    arb_wl_flow *flows;
    size_t n;
    rc = parse_text(kind, text, &rd, &flows, &n);
    if (rc == 0) {
        rc = wl_set_flows(w, flows, n, err, errlen);
        if (rc < 0) arb_free(flows);
    }
    if (rc < 0) {
        arb_workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int arb_workload_new_file(arb_workload **out, arb_workload_kind kind, const char *path,
                          uint32_t n_hosts, const arb_workload_config *cfg, char *err,
                          size_t errlen)
{
    *out = NULL;
    char *buf;
    size_t len;
    int rc = arb_file_read(path, 0, &buf, &len);
    if (rc == ARB_ENOENT)
        return arb_errf(err, errlen, ARB_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (rc == ARB_ENOMEM) return arb_errf(err, errlen, rc, "%s: out of memory", path);
    if (rc < 0) return arb_errf(err, errlen, rc, "%s: read error", path);
    if (memchr(buf, '\0', len)) {
        arb_free(buf);
        return arb_errf(err, errlen, ARB_EPARSE, "%s: a NUL byte: not a text file", path);
    }
    rc = arb_workload_parse(out, kind, buf, path, n_hosts, cfg, err, errlen);
    arb_free(buf);
    return rc;
}
