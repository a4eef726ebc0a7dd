/*
 * Workloads: static flow sets (lists, patterns, incast, traces) and ring
 * AllReduce, driven through the simulator's flow-completion callback.
 *
 * Ring AllReduce keeps no per-message table: a QP carries its messages in
 * order, so "message m from the left neighbour has arrived" is a
 * comparison against that neighbour's QP cursors (see received()).
 */
#include "wl_int.h"

#include "arbor/route.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

static const char *const qp_mode_names[] = {"split", "rr", "hpn"};
static const char *const kind_names[] = {"flows", "pattern",        "incast",          "trace",
                                         "htsim", "ring_allreduce", "host_collective", "iteration"};

const char *arb_qp_mode_name(int m)
{
    return m >= 0 && m <= ARB_QP_HPN ? qp_mode_names[m] : NULL;
}

int arb_qp_mode_parse(const char *name)
{
    if (!name) return ARB_ENOENT;
    for (int i = 0; i <= ARB_QP_HPN; i++)
        if (strcmp(name, qp_mode_names[i]) == 0) return i;
    return ARB_ENOENT;
}

const char *arb_workload_kind_name(int k)
{
    return k >= 0 && k <= ARB_WL_ITERATION ? kind_names[k] : NULL;
}

void arb_workload_config_default(arb_workload_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->seed = 1;
    cfg->qps = 1;
    cfg->qp_mode = ARB_QP_SPLIT;
    cfg->sport_lo = 49152;
    cfg->sport_hi = 65535;
}

/* rr and hpn spread a connection's messages over its QPs: only the ring
 * AllReduce has several messages per connection to spread; every other kind
 * splits each flow over its QPs, and is told so rather than ignoring them. */
static int check_qp_mode(arb_workload_kind kind, arb_qp_mode m, char *err, size_t errlen)
{
    static const char *const split_kinds[] = {
        [ARB_WL_FLOWS] = "flow lists",
        [ARB_WL_PATTERN] = "patterns (pattern, perm, shift, all2all)",
        [ARB_WL_INCAST] = "incasts",
        [ARB_WL_TRACE] = "traces",
        [ARB_WL_HTSIM] = "htsim matrices",
        [ARB_WL_HCOLL] = "host collectives",
        [ARB_WL_ITERATION] = "iterations",
    };
    if (m > ARB_QP_HPN) return arb_errf(err, errlen, ARB_EINVAL, "qp_mode: unknown");
    if (m == ARB_QP_SPLIT || kind == ARB_WL_ALLREDUCE) return 0;
    return arb_errf(err, errlen, ARB_EINVAL,
                    "qp_mode: %s: only ring_allreduce takes rr or hpn; %s split every message "
                    "over the QPs (split)",
                    qp_mode_names[m], split_kinds[kind]);
}

static int check_cfg(arb_workload_kind kind, const arb_workload_config *cfg, char *err,
                     size_t errlen)
{
    if (cfg->qps == 0 || cfg->qps > 65535)
        return arb_errf(err, errlen, ARB_EINVAL, "qps: %u is not in 1..65535", cfg->qps);
    int rc = check_qp_mode(kind, cfg->qp_mode, err, errlen);
    if (rc < 0) return rc;
    if (cfg->qp_mode == ARB_QP_HPN && cfg->shared_sport)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "qp_mode: hpn gives every connection its own source port; no shared port");
    if (cfg->sport_lo == 0 || cfg->sport_hi < cfg->sport_lo)
        return arb_errf(err, errlen, ARB_EINVAL, "source port range %u..%u", cfg->sport_lo,
                        cfg->sport_hi);
    return 0;
}

int wl_alloc(arb_workload **out, arb_workload_kind kind, uint32_t n_hosts,
             const arb_workload_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    arb_workload_config def;
    if (!cfg) {
        arb_workload_config_default(&def);
        cfg = &def;
    }
    int rc = check_cfg(kind, cfg, err, errlen);
    if (rc < 0) return rc;
    arb_workload *w = arb_calloc(1, sizeof *w);
    if (!w) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    w->kind = kind;
    w->cfg = *cfg;
    w->n_hosts = n_hosts;
    w->phases = 1;
    w->start = ARB_TIME_NEVER;
    w->finish = ARB_TIME_NEVER;
    arb_rng_seed(&w->rng, cfg->seed);
    *out = w;
    return 0;
}

void arb_workload_free(arb_workload *w)
{
    if (!w) return;
    arb_free(w->flows);
    arb_traffic_free(w->tr);
    arb_free(w->tbuf);
    arb_free(w->hosts);
    arb_free(w->next_post);
    arb_free(w->qp_next);
    arb_free(w->qp_send);
    arb_free(w->qp_head);
    arb_free(w->qp_tail);
    arb_free(w->qp_busy);
    arb_free(w->msg_nxt);
    arb_free(w->msg_done);
    arb_free(w->recv_cnt);
    arb_free(w->qp_out);
    arb_free(w->qp_qtail);
    arb_free(w->hpn_last);
    arb_free(w->qp_sport);
    arb_free(w->qp_num);
    arb_free(w->sent);
    arb_free(w->done_at);
    arb_free(w->tags);
    hc_exec_free(w->hx);
    wl_iter_free(w->it);
    iter_arb_free(w->ia);
    arb_free(w);
}

arb_workload_kind arb_workload_get_kind(const arb_workload *w)
{
    return w->kind;
}

int arb_workload_error(const arb_workload *w)
{
    return w->error;
}

static uint16_t draw_sport(arb_workload *w)
{
    uint64_t span = (uint64_t)w->cfg.sport_hi - w->cfg.sport_lo + 1;
    return (uint16_t)(w->cfg.sport_lo + arb_rng_below(&w->rng, span));
}

static uint32_t draw_qp(arb_workload *w)
{
    return (uint32_t)(arb_rng_next(&w->rng) >> 40);
}

/* ---- static flow sets --------------------------------------------------- */

int wl_set_flows(arb_workload *w, arb_wl_flow *flows, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        const arb_wl_flow *f = &flows[i];
        if (f->src >= w->n_hosts || f->dst >= w->n_hosts)
            return arb_errf(err, errlen, ARB_EINVAL,
                            "flow %zu: host %u is not below the fabric's %u hosts", i,
                            f->src >= w->n_hosts ? f->src : f->dst, w->n_hosts);
        if (f->src == f->dst)
            return arb_errf(err, errlen, ARB_EINVAL, "flow %zu: source and destination are %u", i,
                            f->src);
        if (f->bytes < w->cfg.qps)
            return arb_errf(err, errlen, ARB_EINVAL, "flow %zu: %llu bytes for %u QPs", i,
                            (unsigned long long)f->bytes, w->cfg.qps);
        if (f->bytes > UINT64_MAX - w->bytes_planned)
            return arb_errf(err, errlen, ARB_EINVAL, "flow %zu: the flows' bytes add up past 2^64",
                            i);
        w->bytes_planned += f->bytes;
        if (f->start < w->start) w->start = f->start;
    }
    w->flows = flows;
    w->n_flows = n;
    w->planned = (uint64_t)n * w->cfg.qps;
    return 0;
}

int arb_workload_new_flows(arb_workload **out, const arb_wl_flow *flows, size_t n, uint32_t n_hosts,
                           const arb_workload_config *cfg, char *err, size_t errlen)
{
    arb_workload *w;
    int rc = wl_alloc(&w, ARB_WL_FLOWS, n_hosts, cfg, err, errlen);
    if (rc < 0) return rc;
    arb_wl_flow *copy = arb_malloc((n ? n : 1) * sizeof *copy);
    if (!copy) {
        arb_workload_free(w);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    if (n) memcpy(copy, flows, n * sizeof *copy);
    rc = wl_set_flows(w, copy, n, err, errlen);
    if (rc < 0) {
        arb_free(copy);
        arb_workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int arb_workload_new_incast(arb_workload **out, uint32_t n_hosts, uint32_t receiver,
                            uint32_t senders, uint64_t bytes, arb_time start,
                            const arb_workload_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    if (receiver >= n_hosts)
        return arb_errf(err, errlen, ARB_EINVAL, "receiver: host %u is not below %u", receiver,
                        n_hosts);
    if (senders == 0 || senders >= n_hosts)
        return arb_errf(err, errlen, ARB_EINVAL, "senders: %u is not in 1..%u", senders,
                        n_hosts - 1);
    arb_wl_flow *f = arb_calloc(senders, sizeof *f);
    if (!f) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < senders; i++) {
        f[i].src = (receiver + 1 + i) % n_hosts;
        f[i].dst = receiver;
        f[i].bytes = bytes;
        f[i].start = start;
    }
    arb_workload *w = NULL;
    int rc = wl_alloc(&w, ARB_WL_INCAST, n_hosts, cfg, err, errlen);
    if (rc == 0) rc = wl_set_flows(w, f, senders, err, errlen);
    if (rc < 0) {
        arb_free(f);
        arb_workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int arb_workload_new_pattern(arb_workload **out, const char *spec, uint32_t n_hosts, uint64_t bytes,
                             arb_time start, const arb_workload_config *cfg, char *err,
                             size_t errlen)
{
    arb_workload *w;
    int rc = wl_alloc(&w, ARB_WL_PATTERN, n_hosts, cfg, err, errlen);
    if (rc < 0) return rc;
    if (bytes < w->cfg.qps) {
        arb_workload_free(w);
        return arb_errf(err, errlen, ARB_EINVAL, "size: %llu bytes for %u QPs",
                        (unsigned long long)bytes, w->cfg.qps);
    }
    arb_traffic_config tc;
    arb_traffic_config_default(&tc);
    tc.qps = w->cfg.qps;
    tc.sport_lo = w->cfg.sport_lo;
    tc.sport_hi = w->cfg.sport_hi;
    rc = arb_traffic_new(&w->tr, spec, n_hosts, &tc, err, errlen);
    if (rc < 0) {
        arb_workload_free(w);
        return rc;
    }
    size_t cap = arb_traffic_max_flows(w->tr);
    w->tbuf = arb_malloc((cap ? cap : 1) * sizeof *w->tbuf);
    if (!w->tbuf) {
        arb_workload_free(w);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    w->phases = arb_traffic_phases(w->tr);
    w->pat_bytes = bytes;
    w->start = start;
    w->planned = (uint64_t)w->phases * cap;
    w->bytes_planned = (uint64_t)w->phases * (cap / w->cfg.qps) * bytes;
    *out = w;
    return 0;
}

static int add_flow(arb_workload *w, arb_sim *s, uint32_t src, uint32_t dst, uint64_t bytes,
                    arb_time start, uint16_t sport, uint32_t qp, uint32_t *id)
{
    int rc = arb_sim_add_flow(s, src, dst, bytes, start, sport, qp, id);
    if (rc < 0) {
        if (!w->error) w->error = rc;
        return rc;
    }
    w->added++;
    return 0;
}

/* Add the flows of pattern phase w->phase, starting at `at`. */
static int pattern_phase(arb_workload *w, arb_sim *s, arb_time at)
{
    long n = arb_traffic_phase(w->tr, w->phase, &w->rng, w->tbuf, arb_traffic_max_flows(w->tr));
    if (n < 0) return w->error = (int)n;
    uint32_t q = w->cfg.qps;
    w->outstanding = (uint64_t)n;
    uint16_t first = 0; /* the pair's first QP's port (shared_sport) */
    for (long i = 0; i < n; i++) {
        const arb_flow *f = &w->tbuf[i];
        uint64_t b = w->pat_bytes / q + (f->qp_index < w->pat_bytes % q);
        if (f->qp_index == 0) first = f->sport;
        uint16_t sport = w->cfg.shared_sport ? first : f->sport;
        if (add_flow(w, s, f->src, f->dst, b, at, sport, f->qp, NULL) < 0) return w->error;
    }
    return 0;
}

static int static_start(arb_workload *w, arb_sim *s)
{
    uint32_t q = w->cfg.qps;
    for (size_t i = 0; i < w->n_flows; i++) {
        const arb_wl_flow *f = &w->flows[i];
        uint16_t first = 0;
        for (uint32_t j = 0; j < q; j++) {
            uint16_t sport = j == 0 && f->sport ? f->sport : draw_sport(w);
            if (j == 0) first = sport;
            if (w->cfg.shared_sport) sport = first;
            uint32_t qp = j == 0 && f->qp ? f->qp : draw_qp(w);
            uint64_t b = f->bytes / q + (j < f->bytes % q);
            if (add_flow(w, s, f->src, f->dst, b, f->start, sport, qp, NULL) < 0) return w->error;
        }
    }
    w->outstanding = w->planned;
    return 0;
}

/* ---- ring AllReduce ---------------------------------------------------- */

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

int arb_workload_new_allreduce(arb_workload **out, const arb_allreduce_config *ar, uint32_t n_hosts,
                               const arb_workload_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    if (!ar) return arb_errf(err, errlen, ARB_EINVAL, "no AllReduce configuration");
    uint32_t n = ar->ranks;
    if (n < 2) return arb_errf(err, errlen, ARB_EINVAL, "ranks: %u, at least 2 are needed", n);
    if (!ar->hosts && n > n_hosts)
        return arb_errf(err, errlen, ARB_EINVAL, "ranks: %u ranks on %u hosts", n, n_hosts);
    arb_workload *w;
    int rc = wl_alloc(&w, ARB_WL_ALLREDUCE, n_hosts, cfg, err, errlen);
    if (rc < 0) return rc;
    uint32_t q = w->cfg.qps;
    uint64_t per = ar->bytes / n;
    uint64_t slices = ar->chunk ? ceil_div(ceil_div(ar->bytes, n), ar->chunk) : 1;
    uint64_t need = w->cfg.qp_mode == ARB_QP_SPLIT ? q : 1;
    int hpn = w->cfg.qp_mode == ARB_QP_HPN;
    if (per == 0 || per / slices < need) {
        arb_workload_free(w);
        return arb_errf(err, errlen, ARB_EINVAL,
                        "size: %llu bytes is too small for %u ranks x %llu slices x %llu QP parts",
                        (unsigned long long)ar->bytes, n, (unsigned long long)slices,
                        (unsigned long long)need);
    }
    uint64_t msgs = 2 * (uint64_t)(n - 1) * slices;
    if (msgs > UINT32_MAX / 2) {
        arb_workload_free(w);
        return arb_errf(err, errlen, ARB_EINVAL, "chunk: %llu messages per rank are too many",
                        (unsigned long long)msgs);
    }
    w->N = n;
    w->Q = q;
    w->P = (uint32_t)slices;
    w->M = msgs;
    w->S = ar->bytes;
    w->start = ar->start;
    w->hosts = arb_malloc(n * sizeof *w->hosts);
    w->next_post = arb_calloc(n, sizeof *w->next_post);
    w->qp_next = arb_calloc((size_t)n * q, sizeof *w->qp_next);
    w->qp_send = arb_calloc((size_t)n * q, sizeof *w->qp_send);
    w->qp_head = arb_malloc((size_t)n * q * sizeof *w->qp_head);
    w->qp_tail = arb_malloc((size_t)n * q * sizeof *w->qp_tail);
    w->qp_busy = arb_calloc((size_t)n * q, 1);
    w->qp_sport = arb_calloc((size_t)n * q, sizeof *w->qp_sport);
    w->qp_num = arb_calloc((size_t)n * q, sizeof *w->qp_num);
    w->sent = arb_calloc(n, sizeof *w->sent);
    w->done_at = arb_malloc(n * sizeof *w->done_at);
    if (hpn) {
        w->msg_nxt = arb_malloc((size_t)n * msgs * sizeof *w->msg_nxt);
        w->msg_done = arb_calloc((size_t)n * msgs, 1);
        w->recv_cnt = arb_calloc(n, sizeof *w->recv_cnt);
        w->qp_out = arb_calloc((size_t)n * q, sizeof *w->qp_out);
        w->qp_qtail = arb_malloc((size_t)n * q * sizeof *w->qp_qtail);
        w->hpn_last = arb_malloc(n * sizeof *w->hpn_last);
        if (!w->msg_nxt || !w->msg_done || !w->recv_cnt || !w->qp_out || !w->qp_qtail ||
            !w->hpn_last) {
            arb_workload_free(w);
            return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < (size_t)n * msgs; i++)
            w->msg_nxt[i] = WL_NONE;
        for (uint32_t r = 0; r < n; r++)
            w->hpn_last[r] = q - 1;
    }
    uint8_t *seen = arb_calloc(n_hosts ? n_hosts : 1, 1);
    if (!w->hosts || !w->next_post || !w->qp_next || !w->qp_send || !w->qp_head || !w->qp_tail ||
        !w->qp_busy || !w->qp_sport || !w->qp_num || !w->sent || !w->done_at || !seen) {
        arb_free(seen);
        arb_workload_free(w);
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    }
    for (uint32_t r = 0; r < n; r++) {
        uint32_t h = ar->hosts ? ar->hosts[r] : r;
        if (h >= n_hosts || seen[h]) {
            arb_free(seen);
            arb_workload_free(w);
            return arb_errf(err, errlen, ARB_EINVAL,
                            h >= n_hosts ? "hosts: rank %u on host %u, not below the fabric's %u"
                                         : "hosts: rank %u on host %u, which has a rank already",
                            r, h, n_hosts);
        }
        seen[h] = 1;
        w->hosts[r] = h;
        w->done_at[r] = ARB_TIME_NEVER;
        for (uint32_t j = 0; j < q; j++) {
            size_t k = (size_t)r * q + j;
            w->qp_next[k] = w->cfg.qp_mode == ARB_QP_RR ? j : 0;
            w->qp_send[k] = hpn ? UINT64_MAX : w->qp_next[k];
            w->qp_head[k] = w->qp_tail[k] = WL_NONE;
            if (hpn) w->qp_qtail[k] = WL_NONE;
            w->qp_sport[k] = draw_sport(w);
            w->qp_num[k] = draw_qp(w);
            if (w->cfg.shared_sport) w->qp_sport[k] = w->qp_sport[(size_t)r * q];
        }
    }
    arb_free(seen);
    /* every message has a part on every QP (split) or one part (rr) */
    if (w->cfg.qp_mode == ARB_QP_SPLIT) /* hpn and rr: one part */
        w->planned = (uint64_t)n * msgs * q;
    else
        w->planned = (uint64_t)n * msgs;
    w->bytes_planned = 0;
    for (uint32_t c = 0; c < n; c++) /* every chunk crosses 2(N-1) links */
        w->bytes_planned += (per + (c < ar->bytes % n)) * 2 * (uint64_t)(n - 1);
    *out = w;
    return 0;
}

/* Payload bytes of message m of rank r. */
static uint64_t msg_bytes(const arb_workload *w, uint32_t r, uint64_t m)
{
    uint64_t k = m / w->P, j = m % w->P;
    uint32_t c = (uint32_t)((r + w->N - k % w->N) % w->N);
    uint64_t cs = w->S / w->N + (c < w->S % w->N);
    return cs / w->P + (j < cs % w->P);
}

static uint64_t part_bytes(const arb_workload *w, uint32_t r, uint64_t m, uint32_t q)
{
    uint64_t b = msg_bytes(w, r, m);
    if (w->cfg.qp_mode != ARB_QP_SPLIT) return b;
    return b / w->Q + (q < b % w->Q);
}

/* Whether rank r's left neighbour has delivered message m to it. */
static int received(const arb_workload *w, uint32_t r, uint64_t m)
{
    uint32_t left = (r + w->N - 1) % w->N;
    if (w->cfg.qp_mode == ARB_QP_HPN) return w->msg_done[(size_t)left * w->M + m];
    /* a QP has delivered every message before its cursor */
    const uint64_t *nx = &w->qp_next[(size_t)left * w->Q];
    if (w->cfg.qp_mode == ARB_QP_RR) return m < nx[m % w->Q];
    for (uint32_t q = 0; q < w->Q; q++)
        if (nx[q] <= m) return 0;
    return 1;
}

/* Messages rank r has received in all (they arrive as a prefix per QP). */
static uint64_t received_count(const arb_workload *w, uint32_t r)
{
    uint32_t left = (r + w->N - 1) % w->N;
    if (w->cfg.qp_mode == ARB_QP_HPN) return w->recv_cnt[r];
    const uint64_t *nx = &w->qp_next[(size_t)left * w->Q];
    if (w->cfg.qp_mode == ARB_QP_SPLIT) {
        uint64_t mn = nx[0];
        for (uint32_t q = 1; q < w->Q; q++)
            if (nx[q] < mn) mn = nx[q];
        return mn;
    }
    uint64_t total = 0;
    for (uint32_t q = 0; q < w->Q; q++)
        total += nx[q] > q ? (nx[q] - q + w->Q - 1) / w->Q : 0;
    return total;
}

static int grow_tags(arb_workload *w)
{
    if (w->n_tags < w->cap_tags) return 0;
    size_t ncap = w->cap_tags ? w->cap_tags * 2 : 1024;
    struct wl_tag *nt = arb_realloc(w->tags, ncap * sizeof *nt);
    if (!nt) return w->error = ARB_ENOMEM;
    w->tags = nt;
    w->cap_tags = ncap;
    return 0;
}

/* Start every idle QP of rank r that has a posted message. */
static void launch(arb_workload *w, arb_sim *s, uint32_t r, arb_time now)
{
    uint32_t right = (r + 1) % w->N;
    for (uint32_t q = 0; q < w->Q; q++) {
        size_t k = (size_t)r * w->Q + q;
        /* hpn: qp_send is the QP's next given message (given when posted) */
        if (w->qp_busy[k] || w->qp_send[k] >= w->M || w->qp_send[k] >= w->next_post[r]) continue;
        if (grow_tags(w) < 0) return;
        uint64_t m = w->qp_send[k];
        uint64_t b = part_bytes(w, r, m, q);
        uint32_t id;
        if (add_flow(w, s, w->hosts[r], w->hosts[right], b, now, w->qp_sport[k], w->qp_num[k],
                     &id) < 0)
            return;
        if (id != w->first_id + w->n_tags) {
            w->error = ARB_ESTATE; /* someone else adds flows to this simulator */
            return;
        }
        struct wl_tag *t = &w->tags[w->n_tags];
        t->rq = (uint32_t)k;
        t->msg = (uint32_t)m;
        t->next_q = WL_NONE;
        t->sent = t->done = 0;
        if (w->qp_tail[k] == WL_NONE)
            w->qp_head[k] = (uint32_t)w->n_tags;
        else
            w->tags[w->qp_tail[k]].next_q = (uint32_t)w->n_tags;
        w->qp_tail[k] = (uint32_t)w->n_tags;
        w->n_tags++;
        w->qp_busy[k] = 1;
        w->sent[r] += b;
        if (w->cfg.qp_mode == ARB_QP_HPN) {
            uint32_t nx = w->msg_nxt[(size_t)r * w->M + m];
            w->qp_send[k] = nx == WL_NONE ? UINT64_MAX : nx;
        }
    }
}

/* hpn: give message m of rank r to the QP with the fewest bytes posted and
 * not yet delivered. */
static void hpn_give(arb_workload *w, uint32_t r, uint64_t m)
{
    size_t base = (size_t)r * w->Q;
    uint32_t best = 0;
    uint64_t least = UINT64_MAX;
    for (uint32_t i = 1; i <= w->Q; i++) {
        uint32_t q = (w->hpn_last[r] + i) % w->Q;
        if (w->qp_out[base + q] < least) {
            least = w->qp_out[base + q];
            best = q;
        }
    }
    size_t k = base + best;
    w->hpn_last[r] = best;
    w->qp_out[k] += msg_bytes(w, r, m);
    if (w->qp_qtail[k] != WL_NONE) w->msg_nxt[(size_t)r * w->M + w->qp_qtail[k]] = (uint32_t)m;
    if (w->qp_send[k] == UINT64_MAX) w->qp_send[k] = m;
    w->qp_qtail[k] = (uint32_t)m;
}

/* Post the messages of rank r whose data dependency is met. */
static void post(arb_workload *w, uint32_t r)
{
    while (w->next_post[r] < w->M &&
           (w->next_post[r] < w->P || received(w, r, w->next_post[r] - w->P))) {
        if (w->cfg.qp_mode == ARB_QP_HPN) hpn_give(w, r, w->next_post[r]);
        w->next_post[r]++;
    }
}

static int allreduce_start(arb_workload *w, arb_sim *s)
{
    w->first_id = arb_sim_n_flows(s);
    for (uint32_t r = 0; r < w->N; r++)
        post(w, r);
    for (uint32_t r = 0; r < w->N; r++) {
        launch(w, s, r, w->start);
        if (w->error) return w->error;
    }
    return 0;
}

/* A message has sent all its data: its QP may launch the next one. */
static void allreduce_sent(arb_workload *w, arb_sim *s, uint32_t flow, arb_time now)
{
    if (flow < w->first_id || flow - w->first_id >= w->n_tags) return;
    struct wl_tag *t = &w->tags[flow - w->first_id];
    if (t->sent) return;
    t->sent = 1;
    size_t k = t->rq;
    w->qp_busy[k] = 0;
    if (w->cfg.qp_mode != ARB_QP_HPN) /* hpn moved on at launch */
        w->qp_send[k] = (uint64_t)t->msg + (w->cfg.qp_mode == ARB_QP_RR ? w->Q : 1);
    launch(w, s, (uint32_t)(k / w->Q), now + w->cfg.start_delay);
}

static void allreduce_done(arb_workload *w, arb_sim *s, uint32_t flow, arb_time now)
{
    if (flow < w->first_id || flow - w->first_id >= w->n_tags) return;
    uint32_t ti = flow - w->first_id;
    /* without the simulator's sent notifications, delivery implies it */
    if (!w->tags[ti].sent) allreduce_sent(w, s, flow, now);
    if (w->error) return;
    w->tags[ti].done = 1;
    size_t k = w->tags[ti].rq;
    uint32_t r = (uint32_t)(k / w->Q);
    /* the QP's delivered prefix: messages may complete out of order
     * (a retransmitted tail), the cursor moves over the done ones */
    uint32_t right = (r + 1) % w->N;
    if (w->cfg.qp_mode == ARB_QP_HPN) w->qp_out[k] -= msg_bytes(w, r, w->tags[ti].msg);
    while (w->qp_head[k] != WL_NONE && w->tags[w->qp_head[k]].done) {
        const struct wl_tag *h = &w->tags[w->qp_head[k]];
        w->qp_next[k] = (uint64_t)h->msg + (w->cfg.qp_mode == ARB_QP_RR ? w->Q : 1);
        if (w->cfg.qp_mode == ARB_QP_HPN) {
            w->msg_done[(size_t)r * w->M + h->msg] = 1;
            w->recv_cnt[right]++;
        }
        w->qp_head[k] = h->next_q;
    }
    if (w->qp_head[k] == WL_NONE) w->qp_tail[k] = WL_NONE;
    if (w->done_at[right] == ARB_TIME_NEVER && received_count(w, right) == w->M) {
        w->done_at[right] = now;
        if (++w->ranks_done == w->N) w->finish = now;
    }
    post(w, right);
    launch(w, s, right, now + w->cfg.start_delay);
    launch(w, s, r, now + w->cfg.start_delay);
}

/* ---- driving ----------------------------------------------------------- */

int arb_workload_start(arb_workload *w, arb_sim *s)
{
    if (w->started) return ARB_ESTATE;
    w->started = 1;
    if (w->kind == ARB_WL_ALLREDUCE) return allreduce_start(w, s);
    if (w->kind == ARB_WL_HCOLL) return wl_hcoll_start(w, s);
    if (w->kind == ARB_WL_ITERATION) return wl_iter_start(w, s);
    if (w->kind == ARB_WL_PATTERN) return pattern_phase(w, s, w->start);
    return static_start(w, s);
}

void arb_workload_on_flow_done(void *ctx, arb_sim *s, uint32_t flow, arb_time now)
{
    arb_workload *w = ctx;
    w->flows_done++;
    if (w->kind == ARB_WL_ALLREDUCE) {
        allreduce_done(w, s, flow, now);
        return;
    }
    if (w->hx) {
        hc_exec_flow_done(w->hx, s, flow, now);
        return;
    }
    if (w->outstanding && --w->outstanding == 0) {
        if (w->kind == ARB_WL_PATTERN && w->phase + 1 < w->phases) {
            w->phase++;
            pattern_phase(w, s, now + w->cfg.start_delay);
        } else {
            w->finish = now;
        }
    }
}

arb_time arb_workload_min_compute(const arb_workload *w)
{
    return w->kind == ARB_WL_ITERATION ? wl_iter_min_compute(w) : ARB_TIME_NEVER;
}

int arb_workload_route_sports(arb_workload *w, const struct arb_route *r, uint32_t *n_disjoint)
{
    if (n_disjoint) *n_disjoint = 0;
    if (!r || w->kind != ARB_WL_ALLREDUCE || w->cfg.qp_mode != ARB_QP_HPN) return ARB_EINVAL;
    if (w->started) return ARB_ESTATE;
    uint32_t good = 0;
    for (uint32_t k = 0; k < w->N; k++) {
        uint32_t a = w->hosts[k], b = w->hosts[(k + 1) % w->N];
        int rc = arb_route_disjoint_sports(r, a, b, w->Q, w->cfg.sport_lo, w->cfg.sport_hi,
                                           &w->qp_sport[(size_t)k * w->Q]);
        if (rc < 0) return rc;
        good += (uint32_t)rc == w->Q;
    }
    if (n_disjoint) *n_disjoint = good;
    return 0;
}

void arb_workload_on_flow_sent(void *ctx, arb_sim *s, uint32_t flow, arb_time now)
{
    arb_workload *w = ctx;
    if (w->kind == ARB_WL_ALLREDUCE) allreduce_sent(w, s, flow, now);
    if (w->hx) hc_exec_flow_sent(w->hx, s, flow, now);
}

void arb_workload_get_result(const arb_workload *w, arb_workload_result *r)
{
    memset(r, 0, sizeof *r);
    r->kind = w->kind;
    r->flows_planned = w->planned;
    r->flows_added = w->added;
    r->flows_done = w->flows_done;
    r->bytes_planned = w->bytes_planned;
    r->start = w->start == ARB_TIME_NEVER ? 0 : w->start;
    r->finish = w->finish;
    r->phases = w->phases;
    r->cct = ARB_TIME_NEVER;
    r->iter_time = ARB_TIME_NEVER;
    if (w->kind == ARB_WL_ALLREDUCE) {
        r->done = w->ranks_done == w->N;
        r->ranks = w->N;
        r->qps = w->Q;
        r->slices = w->P;
        r->steps = 2 * (w->N - 1);
        r->messages = w->M;
        r->buffer_bytes = w->S;
        r->coll = ARB_COLL_ALLREDUCE;
        r->algo = ARB_HC_RING;
        r->messages_total = w->M * w->N;
        r->busbw_factor = arb_coll_busbw_factor(ARB_COLL_ALLREDUCE, w->N);
        if (r->done) {
            r->cct = w->finish - w->start;
            double secs = (double)r->cct / (double)ARB_PS_PER_S;
            if (secs > 0) {
                r->algbw_gbps = (double)w->S * 8.0 / secs / 1e9;
                r->busbw_gbps = r->algbw_gbps * 2.0 * (double)(w->N - 1) / (double)w->N;
            }
        }
    } else if (w->kind == ARB_WL_HCOLL) {
        wl_hcoll_result(w, r);
    } else if (w->kind == ARB_WL_ITERATION) {
        wl_iter_result(w, r);
    } else {
        r->done = w->started && w->flows_done == w->planned;
        r->qps = w->cfg.qps;
    }
    if (!r->done) r->finish = ARB_TIME_NEVER;
}

int arb_workload_rank(const arb_workload *w, uint32_t rank, uint32_t *host, arb_time *done,
                      uint64_t *bytes_sent, uint64_t *msgs_received)
{
    if (w->kind == ARB_WL_HCOLL)
        return hc_exec_rank_pub(w, rank, host, done, bytes_sent, msgs_received);
    if (w->kind != ARB_WL_ALLREDUCE || rank >= w->N) return ARB_EINVAL;
    if (host) *host = w->hosts[rank];
    if (done) *done = w->done_at[rank];
    if (bytes_sent) *bytes_sent = w->sent[rank];
    if (msgs_received) *msgs_received = received_count(w, rank);
    return 0;
}
