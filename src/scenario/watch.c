/*
 * run.watch: chosen links, each direction a port, reported one by one with
 * who crossed them. A tap counts every packet that starts on a watched port
 * by party (each Arbor job; the transport flows) in bins of time by its
 * start; the sampler adds the port's queue at each sample. At the end each
 * port reports its queue over the run, and over the window in which every
 * party that crossed it was active (the overlap): the queue there, each
 * party's rate there and Jain's index of those rates. docs/scenarios.md.
 */
#include "scn_int.h"

#include "arbor/wire.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/json_out.h"

#define NONE UINT32_MAX

/* What the end of the run leaves for the report, per port. */
struct wport {
    uint32_t port;
    char name[40]; /* "L1.0->h0" */
    uint64_t rate;
    uint64_t tx_bytes;
    uint32_t max_queue;
};

struct scn_watch {
    uint32_t n;        /* watched ports */
    struct wport *p;   /* n */
    uint32_t *slot_of; /* per fabric port: index in p, or NONE */
    uint32_t n_ports;  /* the fabric's */
    uint32_t jobs;     /* Arbor jobs; party `jobs` is the transport flows */
    uint32_t *ch_end;  /* job k's global channels end at ch_end[k] */
    arb_time bin;      /* width of a byte bin */
    uint64_t *bytes;   /* [bin][port][party]: wire bytes starting in the bin */
    uint32_t n_bins, cap_bins;
    uint32_t *q;  /* [sample][port]: queue bytes */
    arb_time *qt; /* sample times */
    uint32_t n_samp, cap_samp;
    arb_time now;        /* the run's end */
    arb_time *from, *to; /* per party: active window ([0, 0): absent) */
    int error;
    arb_sim_tap_fn next;
    void *next_ctx;
};

static uint32_t parties(const struct scn_watch *w)
{
    return w->jobs + 1;
}

/* The party of a packet: the Arbor job of its channel, or the flows. */
static uint32_t party_of(const struct scn_watch *w, const arb_sim_pkt_info *f)
{
    /* transport packets (RoCE kinds); an Arbor job's port need not be the default one */
    if (f->kind != ARB_SIM_ARBOR) return w->jobs;
    for (uint32_t k = 0; k < w->jobs; k++)
        if (f->conn < w->ch_end[k]) return k;
    return w->jobs; /* not a channel of any job: cannot happen */
}

static int grow_bins(struct scn_watch *w, uint32_t need)
{
    size_t row = (size_t)w->n * parties(w);
    uint32_t cap = w->cap_bins ? w->cap_bins : 256;
    while (cap <= need) {
        if (cap > UINT32_MAX / 2) return ARB_ENOMEM;
        cap *= 2;
    }
    uint64_t *nb = arb_realloc(w->bytes, (size_t)cap * row * sizeof *nb);
    if (!nb) return ARB_ENOMEM;
    memset(nb + (size_t)w->cap_bins * row, 0, (size_t)(cap - w->cap_bins) * row * sizeof *nb);
    w->bytes = nb;
    w->cap_bins = cap;
    return 0;
}

static void watch_tap(void *ctx, const arb_sim *s, uint32_t port, const arb_sim_pkt_info *f,
                      arb_time now)
{
    struct scn_watch *w = ctx;
    uint32_t slot = port < w->n_ports ? w->slot_of[port] : NONE;
    if (slot != NONE && !w->error) {
        arb_time b = now / w->bin;
        if (b >= UINT32_MAX / 2 || (b >= w->cap_bins && grow_bins(w, (uint32_t)b) < 0)) {
            w->error = ARB_ENOMEM;
        } else {
            w->bytes[((size_t)b * w->n + slot) * parties(w) + party_of(w, f)] += f->bytes;
            if (b >= w->n_bins) w->n_bins = (uint32_t)b + 1;
        }
    }
    if (w->next) w->next(w->next_ctx, s, port, f, now);
}

int scn_watch_make(struct scn_watch **out, const arb_topo *t, const char *list, arb_time bin,
                   arb_sim_config *cfg, char *msg, size_t len)
{
    *out = NULL;
    struct scn_watch *w = arb_calloc(1, sizeof *w);
    if (!w) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    uint32_t *ports = NULL;
    unsigned n = 0;
    int rc = scn_port_list(t, list, &ports, &n, msg, len);
    if (rc < 0) {
        arb_free(w);
        return rc;
    }
    w->n = n;
    w->n_ports = arb_topo_n_ports(t);
    w->bin = bin ? bin : 10 * ARB_PS_PER_US;
    w->p = arb_calloc(n ? n : 1, sizeof *w->p);
    w->slot_of = arb_malloc((w->n_ports ? w->n_ports : 1) * sizeof *w->slot_of);
    w->from = arb_calloc(1, sizeof *w->from);
    w->to = arb_calloc(1, sizeof *w->to);
    if (!w->p || !w->slot_of || !w->from || !w->to) {
        arb_free(ports);
        scn_watch_free(w);
        return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    }
    for (uint32_t p = 0; p < w->n_ports; p++)
        w->slot_of[p] = NONE;
    for (uint32_t i = 0; i < n; i++) {
        const arb_port *pt = arb_topo_port(t, ports[i]);
        char a[16] = "?", b[16] = "?";
        arb_topo_node_name(t, arb_topo_port(t, pt->peer_port)->peer, a, sizeof a);
        arb_topo_node_name(t, pt->peer, b, sizeof b);
        w->p[i].port = ports[i];
        w->p[i].rate = pt->rate;
        if (pt->parallel)
            snprintf(w->p[i].name, sizeof w->p[i].name, "%s->%s/%u", a, b, pt->parallel);
        else
            snprintf(w->p[i].name, sizeof w->p[i].name, "%s->%s", a, b);
        w->slot_of[ports[i]] = i;
    }
    arb_free(ports);
    w->next = cfg->tap;
    w->next_ctx = cfg->tap_ctx;
    cfg->tap = watch_tap;
    cfg->tap_ctx = w;
    *out = w;
    return 0;
}

int scn_watch_jobs(struct scn_watch *w, const uint32_t *ch_end, uint32_t jobs)
{
    if (w->bytes) return ARB_ESTATE; /* parties are fixed once bytes are counted */
    uint32_t *ce = arb_malloc((jobs ? jobs : 1) * sizeof *ce);
    arb_time *from = arb_calloc(jobs + 1, sizeof *from), *to = arb_calloc(jobs + 1, sizeof *to);
    if (!ce || !from || !to) {
        arb_free(ce);
        arb_free(from);
        arb_free(to);
        return ARB_ENOMEM;
    }
    if (jobs) memcpy(ce, ch_end, jobs * sizeof *ce);
    arb_free(w->ch_end);
    arb_free(w->from);
    arb_free(w->to);
    w->ch_end = ce;
    w->from = from;
    w->to = to;
    w->jobs = jobs;
    return 0;
}

int scn_watch_sample(struct scn_watch *w, const arb_sim *s, arb_time t)
{
    if (w->n_samp == w->cap_samp) {
        uint32_t cap = w->cap_samp ? w->cap_samp * 2 : 256;
        uint32_t *nq = arb_realloc(w->q, (size_t)cap * (w->n ? w->n : 1) * sizeof *nq);
        if (nq) w->q = nq;
        arb_time *nt = arb_realloc(w->qt, cap * sizeof *nt);
        if (nt) w->qt = nt;
        if (!nq || !nt) return ARB_ENOMEM;
        w->cap_samp = cap;
    }
    for (uint32_t i = 0; i < w->n; i++)
        w->q[(size_t)w->n_samp * w->n + i] = arb_sim_port_queue(s, w->p[i].port);
    w->qt[w->n_samp++] = t;
    return 0;
}

int scn_watch_end(struct scn_watch *w, const arb_sim *s, const arb_time *from, const arb_time *to)
{
    w->now = arb_sim_now(s);
    for (uint32_t i = 0; i < w->n; i++) {
        arb_sim_port_stats ps;
        arb_sim_port(s, w->p[i].port, &ps);
        w->p[i].tx_bytes = ps.tx_bytes;
        w->p[i].max_queue = ps.max_queue;
    }
    for (uint32_t k = 0; k < parties(w); k++) {
        w->from[k] = from[k];
        w->to[k] = to[k] == ARB_TIME_NEVER ? w->now : to[k];
    }
    return w->error;
}

int scn_watch_merge(struct scn_watch *w, const arb_sim_part_ops *ops)
{
    /* as many bins in every part: the most any has */
    uint64_t v[2] = {UINT64_MAX - w->n_bins, w->error ? (uint64_t)-w->error : UINT64_MAX};
    int rc = ops->allmin(ops->ctx, v, 2);
    if (rc < 0) return rc;
    if (v[1] != UINT64_MAX) return -(int)v[1];
    uint32_t bins = (uint32_t)(UINT64_MAX - v[0]);
    uint64_t fail = bins > w->cap_bins && grow_bins(w, bins) < 0;
    rc = ops->allsum(ops->ctx, &fail, 1); /* every part has the room, or none goes on */
    if (rc < 0) return rc;
    if (fail) return ARB_ENOMEM;
    w->n_bins = bins;
    size_t n = (size_t)bins * w->n * parties(w);
    return n ? ops->allsum(ops->ctx, w->bytes, n) : 0;
}

/* Wire bytes of party k on port i that started in [lo, hi), a bin's
 * bytes taken in proportion to the part of it inside. */
static double bytes_in(const struct scn_watch *w, uint32_t i, uint32_t k, arb_time lo, arb_time hi)
{
    double sum = 0;
    for (uint32_t b = (uint32_t)(lo / w->bin); b < w->n_bins && (arb_time)b * w->bin < hi; b++) {
        uint64_t v = w->bytes[((size_t)b * w->n + i) * parties(w) + k];
        if (!v) continue;
        arb_time b0 = (arb_time)b * w->bin, b1 = b0 + w->bin;
        arb_time x0 = b0 > lo ? b0 : lo, x1 = b1 < hi ? b1 : hi;
        sum += (double)v * (double)(x1 - x0) / (double)w->bin;
    }
    return sum;
}

static uint64_t party_bytes(const struct scn_watch *w, uint32_t i, uint32_t k)
{
    uint64_t sum = 0;
    for (uint32_t b = 0; b < w->n_bins; b++)
        sum += w->bytes[((size_t)b * w->n + i) * parties(w) + k];
    return sum;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Queue figures of port i over the samples taken in (lo, hi]. */
struct qfig {
    uint32_t n, p99, max;
    double mean;
};

static struct qfig queue_in(const struct scn_watch *w, uint32_t i, arb_time lo, arb_time hi)
{
    struct qfig f = {0, 0, 0, 0};
    uint32_t *v = arb_malloc((w->n_samp ? w->n_samp : 1) * sizeof *v);
    if (!v) return f;
    double sum = 0;
    for (uint32_t x = 0; x < w->n_samp; x++) {
        if (w->qt[x] <= lo || w->qt[x] > hi) continue;
        uint32_t q = w->q[(size_t)x * w->n + i];
        v[f.n++] = q;
        sum += q;
        if (q > f.max) f.max = q;
    }
    if (f.n) {
        qsort(v, f.n, sizeof *v, cmp_u32);
        uint64_t r = ((uint64_t)f.n * 99 + 99) / 100; /* nearest rank */
        f.p99 = v[r - 1];
        f.mean = sum / f.n;
    }
    arb_free(v);
    return f;
}

static void j_queue(cJSON *o, const struct qfig *f)
{
    arb_json_u64(o, "p99_bytes", f->p99);
    arb_json_fixed(o, "mean_bytes", f->mean, 1);
    arb_json_u64(o, "samples", f->n);
}

static void party_name(const struct scn_watch *w, uint32_t k, char *buf, size_t len)
{
    if (k == w->jobs)
        snprintf(buf, len, "flows");
    else if (w->jobs == 1)
        snprintf(buf, len, "arbor");
    else
        snprintf(buf, len, "job %u", k);
}

/* One port: its queue, its parties and the window they share. */
static void port_json(const struct scn_watch *w, uint32_t i, cJSON *e)
{
    const struct wport *p = &w->p[i];
    double secs = (double)w->now / (double)ARB_PS_PER_S;
    cJSON_AddStringToObject(e, "port", p->name);
    arb_json_fixed(e, "rate_gbps", (double)p->rate / 1e9, 3);
    arb_json_u64(e, "bytes", p->tx_bytes);
    arb_json_fixed(e, "utilisation",
                   secs > 0 && p->rate ? (double)p->tx_bytes * 8.0 / ((double)p->rate * secs) : 0,
                   6);
    cJSON *q = cJSON_AddObjectToObject(e, "queue");
    struct qfig all = queue_in(w, i, 0, ARB_TIME_NEVER);
    if (q) {
        arb_json_u64(q, "max_bytes", p->max_queue);
        j_queue(q, &all);
    }
    /* the parties that crossed it, and the window where all were active */
    arb_time lo = 0, hi = ARB_TIME_NEVER;
    uint32_t crossed = 0;
    uint64_t *pb = arb_calloc(parties(w), sizeof *pb);
    if (!pb) return;
    for (uint32_t k = 0; k < parties(w); k++) {
        pb[k] = party_bytes(w, i, k);
        if (!pb[k]) continue;
        crossed++;
        if (w->from[k] > lo) lo = w->from[k];
        if (w->to[k] < hi) hi = w->to[k];
    }
    int overlap = crossed > 0 && hi > lo;
    double secs_ov = overlap ? (double)(hi - lo) / (double)ARB_PS_PER_S : 0;
    double sum = 0, sum2 = 0;
    cJSON *arr = cJSON_AddArrayToObject(e, "parties");
    for (uint32_t k = 0; arr && k < parties(w); k++) {
        if (!pb[k]) continue;
        cJSON *o = cJSON_CreateObject();
        if (!o) break;
        char name[24];
        party_name(w, k, name, sizeof name);
        cJSON_AddStringToObject(o, "party", name);
        arb_json_u64(o, "bytes", pb[k]);
        double gbps = overlap ? bytes_in(w, i, k, lo, hi) * 8.0 / secs_ov / 1e9 : 0;
        sum += gbps;
        sum2 += gbps * gbps;
        if (overlap)
            arb_json_fixed(o, "overlap_gbps", gbps, 3);
        else
            cJSON_AddNullToObject(o, "overlap_gbps");
        cJSON_AddItemToArray(arr, o);
    }
    arb_free(pb);
    if (!overlap) {
        cJSON_AddNullToObject(e, "overlap");
        return;
    }
    cJSON *ov = cJSON_AddObjectToObject(e, "overlap");
    if (!ov) return;
    arb_json_us(ov, "from_us", lo);
    arb_json_us(ov, "to_us", hi);
    arb_json_fixed(ov, "gbps", sum, 3);
    arb_json_fixed(ov, "utilisation", p->rate ? sum * 1e9 / (double)p->rate : 0, 6);
    arb_json_fixed(ov, "jain", sum2 > 0 ? sum * sum / ((double)crossed * sum2) : 1.0, 6);
    struct qfig f = queue_in(w, i, lo, hi);
    arb_json_u64(ov, "max_bytes", f.max);
    j_queue(ov, &f);
}

void scn_watch_json(const struct scn_watch *w, cJSON *obj)
{
    cJSON *arr = cJSON_AddArrayToObject(obj, "watch");
    for (uint32_t i = 0; arr && i < w->n; i++) {
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        port_json(w, i, e);
        cJSON_AddItemToArray(arr, e);
    }
}

void scn_watch_free(struct scn_watch *w)
{
    if (!w) return;
    arb_free(w->p);
    arb_free(w->slot_of);
    arb_free(w->ch_end);
    arb_free(w->bytes);
    arb_free(w->q);
    arb_free(w->qt);
    arb_free(w->from);
    arb_free(w->to);
    arb_free(w);
}
