/* Arbor in the simulator: accounting and invariants -- values checked,
 * exactly-once commits, wire checks, drops counted, the results (arbor_int.h). */
#include "arbor_int.h"

#include <math.h>
#include <string.h>
#include "base/alloc.h"

/* Rank r's element e: an integer in [-8, 8], so every partial sum of up to
 * 2^p / 8 ranks is exact in a format with p significand bits. */
static int32_t val(uint32_t r, uint64_t e)
{
    return (int32_t)((7u * r + (uint32_t)((13u * (e % 17u)) % 17u)) % 17u) - 8;
}

/* First element of packet `index` of channel ch. */
static uint64_t elem0(const struct ajob *j, uint32_t ch, uint32_t index)
{
    size_t es = arb_dtype_size(arb_plan_get_config(j->p)->dtype);
    return (arb_plan_get_channel(j->p, ch)->lo + (uint64_t)index * j->cfg.ep.payload) / es;
}

void arbor_fill(void *ctx, uint8_t msg_id, uint32_t index, uint8_t *dst, size_t len)
{
    arb_hep *e = ctx;
    const struct ajob *j = ej(e);
    arb_dtype dt = arb_plan_get_config(j->p)->dtype;
    size_t es = arb_dtype_size(dt);
    uint64_t e0 = elem0(j, e->ch, index);
    (void)msg_id;
    for (size_t k = 0; k < len / es; k++)
        arb_elem_put(dst + k * es, dt, val(e->rank, e0 + k));
}

/* Check `len` bytes of packet `index` of channel ch against the result. */
static void check(struct ajob *j, uint32_t ch, uint32_t index, const uint8_t *d, size_t len)
{
    const arb_plan_channel *c = arb_plan_get_channel(j->p, ch);
    arb_dtype dt = arb_plan_get_config(j->p)->dtype;
    size_t es = arb_dtype_size(dt);
    uint64_t e0 = elem0(j, ch, index);
    int push = c->kind == ARB_EP_PUSH;
    int32_t base = -8 * (int32_t)arb_plan_get_config(j->p)->n_ranks;
    for (size_t k = 0; k < len / es; k++) {
        uint64_t e = e0 + k;
        double want = push ? val(c->responder, e) : j->sum17[(13u * (e % 17u)) % 17u] + base;
        double got = arb_elem_get(d + k * es, dt);
        j->res.checked++;
        if (!(fabs(got - want) <= j->tol)) j->res.wrong++;
    }
}

/* Mark offset i committed: 1 if it was new, 0 if it was already, -1 if
 * the window could not grow (counted as a breach by the caller). */
static int cwin_add(struct cwin *c, uint32_t i)
{
    uint32_t wd = i >> 6;
    if (wd < c->base) return 0;
    if (wd - c->base >= c->used) {
        uint32_t k = 0;
        while (k < c->used && c->w[k] == UINT64_MAX)
            k++;
        if (k) {
            memmove(c->w, c->w + k, (size_t)(c->used - k) * sizeof *c->w);
            c->used -= k;
            c->base += k;
        }
        uint32_t need = wd - c->base + 1;
        if (need > c->cap) {
            uint32_t cap = c->cap ? c->cap : 1;
            while (cap < need)
                cap *= 2;
            uint64_t *nw = arb_realloc(c->w, (size_t)cap * sizeof *nw);
            if (!nw) return -1;
            c->w = nw;
            c->cap = cap;
        }
        memset(c->w + c->used, 0, (size_t)(need - c->used) * sizeof *c->w);
        c->used = need;
    }
    uint64_t *w = &c->w[wd - c->base], bit = (uint64_t)1 << (i & 63u);
    if (*w & bit) return 0;
    *w |= bit;
    return 1;
}

void arbor_cwin_free(struct cwin *c)
{
    if (c) arb_free(c->w);
    arb_free(c);
}

/* The rank driver counts the commit unless this returns -1. */
int arbor_on_commit(arb_hep *e, const arb_commit_info *c)
{
    struct ajob *j = ej(e);
    uint32_t index = c->index;
    int added = index < e->offsets ? cwin_add(e_committed(e), index) : 0;
    if (added < 0) { /* the window could not grow: the run ends, out of memory */
        fatal(j->s, ARB_ENOMEM);
        return -1;
    }
    if (added != 1) {
        j->res.inv_dup_commit++;
        return -1;
    }
    if (!c->repaired && c->attempt == 0) {
        arb_time rtt = j->s->now - c->first_sent;
        j->rtt_sum += rtt;
        j->rtt_n++;
        if (rtt > j->res.rtt_max) j->res.rtt_max = rtt;
    }
    if (c->count != arb_plan_get_channel(j->p, e->ch)->n_members) j->res.inv_count++;
    if (j->cfg.values && c->result && c->len) check(j, e->ch, index, c->result, c->len);
    j->a->committed_bytes += len_of(j, e->c, index);
    return 0;
}

/* Values mode: every result a requester delivers (the rank driver counts it). */
void arbor_on_result(arb_hep *e, uint32_t index, const uint8_t *data, size_t len)
{
    struct ajob *j = ej(e);
    if (j->cfg.values && data && len) check(j, e->ch, index, data, len);
}

/* --wire-check: encode, decode, compare. A mismatch fails the run. */
void arbor_wire_check(arb_sim *s, uint32_t conn, const arb_hdr *h, size_t len)
{
    struct ajob *j = job_of(s, conn);
    uint8_t buf[ARB_HDR_LEN_LONG + ARB_PAYLOAD_MAX];
    size_t hl = 0, off = 0;
    j->res.wire_checks++;
    int rc = arb_hdr_encode(h, len, buf, sizeof buf, &hl);
    arb_hdr d;
    if (rc == 0) {
        memset(buf + hl, 0, len);
        rc = arb_hdr_decode(&d, buf, hl + len, &off);
    }
    if (rc < 0 || off != hl || !arb_hdr_equal(h, &d)) {
        j->res.wire_errors++;
        arb_log(&s->cfg.log, ARB_LOG_ERROR, "wire check: %s packet type %u offset %u: %s",
                rc < 0 ? "cannot round-trip" : "differs after round trip", (unsigned)h->packet_type,
                (unsigned)h->offset_a, arb_strerror(rc));
        fatal(s, ARB_ESTATE);
    }
}

void arbor_queue_drop(arb_sim *s, uint32_t port, uint32_t i)
{
    const struct pkt *k = pool_get(&s->pool, i);
    job_of(s, k->conn)->pacct[port].drop_bytes += k->bytes;
    arbor_pkt_drop(s, s->owner[port], i);
}

void arbor_pkt_lost(arb_sim *s, uint32_t port, uint32_t node, uint32_t i)
{
    if (s->arb) {
        const struct pkt *k = pool_get(&s->pool, i);
        count_sent(job_of(s, k->conn), port, k);
        s->arb->acct[node].in++;
    }
    arbor_pkt_drop(s, node, i);
}

/* Job j's packets and wire bytes in list l. */
static void list_sums(const arb_sim *s, const struct ajob *j, const struct plist *l, uint64_t *pkts,
                      uint64_t *bytes)
{
    for (uint32_t i = l->head; i != PKT_NONE; i = pool_get(&s->pool, i)->next) {
        const struct pkt *k = pool_get(&s->pool, i);
        if (k->kind == PK_ARBOR && job_of(s, k->conn) == j) {
            (*pkts)++;
            *bytes += k->bytes;
        }
    }
}

/* The job's per-port counters summed: packets and bytes sent (those that
 * reached the far end of their wire, and those on it), and per tier the
 * wire bytes queued (sent, dropped by the queue, or still in it). */
static void port_sums(const arb_sim *s, const struct ajob *j, arb_sim_arbor_result *r)
{
    for (uint32_t port = 0; port < s->n_ports; port++) {
        const struct pacct *pa = &j->pacct[port];
        const struct sport *sp = &s->sp[port];
        uint64_t pkts = pa->tx_pkts, bytes = pa->tx_bytes, qp = 0, qb = 0;
        if (counts_port(s, port)) { /* partitioned: the sending part's lists */
            list_sums(s, j, &sp->wire, &pkts, &bytes);
            list_sums(s, j, &sp->q, &qp, &qb);
            if (sp->kind >= NIC_HOST) list_sums(s, j, &sp->arb_tx, &qp, &qb);
        }
        r->pkts += pkts;
        r->wire_bytes += bytes;
        uint32_t t = s->ports[port].tier < 3 ? s->ports[port].tier : 3;
        uint64_t queued = bytes + pa->drop_bytes + qb;
        if (s->ports[port].role == ARB_LINK_UP)
            r->tier_up_bytes[t] += queued;
        else
            r->tier_down_bytes[t] += queued;
    }
}

/* Nodes where in + copies != out + consumed + drops + delivered + queued,
 * every job's packets together; out: the packets that reached the far end
 * of a wire, and those on one. A partitioned run: each part's share of
 * every node's balance (the events it ran, the lists it counts), summed
 * over the parts (every part calls it). 0 or an error. */
static int conservation_errors(const arb_sim *s, uint64_t *out)
{
    const struct arbor_job *a = s->arb;
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    uint64_t *left = a->left; /* out + queued */
    memset(left, 0, (size_t)n_nodes * sizeof *left);
    for (uint32_t port = 0; port < s->n_ports; port++) {
        uint32_t owner = s->owner[port];
        for (uint32_t x = 0; x < a->n_jobs; x++)
            left[owner] += a->jobs[x]->pacct[port].tx_pkts;
        const struct sport *sp = &s->sp[port];
        const struct plist *ls[3] = {&sp->q, &sp->wire, &sp->arb_tx}; /* arb_tx: NICs' */
        if (!counts_port(s, port)) continue;
        for (int l = 0; l < (sp->kind >= NIC_HOST ? 3 : 2); l++)
            for (uint32_t i = ls[l]->head; i != PKT_NONE; i = pool_get(&s->pool, i)->next)
                if (pool_get(&s->pool, i)->kind == PK_ARBOR) left[owner]++;
    }
    uint64_t bad = 0;
    if (s->part) {
        int64_t *bal = (int64_t *)(void *)left; /* in place: in + copies - the rest */
        for (uint32_t n = 0; n < n_nodes; n++) {
            const struct nacct *c = &a->acct[n];
            bal[n] = (int64_t)(c->in + c->copies) -
                     (int64_t)(c->consumed + c->drops + c->delivered + left[n]);
        }
        return arbor_part_conservation(s, bal, n_nodes, out);
    }
    for (uint32_t n = 0; n < n_nodes; n++) {
        const struct nacct *c = &a->acct[n];
        if (c->in + c->copies != c->consumed + c->drops + c->delivered + left[n]) bad++;
    }
    *out = bad;
    return 0;
}

/* The aggregators job j uses (its part of the pool of each switch where it
 * aggregates; j NULL: every aggregator), their counters and self-checks
 * into r. */
static void agg_sums(const arb_sim *s, const struct ajob *j, arb_sim_arbor_result *r)
{
    const struct arbor_job *a = s->arb;
    size_t n = j ? j->n_agg_nodes : (size_t)arb_topo_n_nodes(s->topo) * a->n_parts;
    arb_time now = arb_sim_now(s); /* partitioned: the whole run's (slots live till then) */
    for (size_t x = 0; x < n; x++) {
        arb_agg *g = a->agg[j ? agg_index(a, j->agg_nodes[x], j) : x];
        if (!g || !owns_node(s, j ? j->agg_nodes[x] : (uint32_t)(x / a->n_parts))) continue;
        arb_agg_stats st;
        arb_agg_get_stats(g, now, &st);
        r->agg_inputs += st.contributions;
        r->agg_aggregates += st.aggregates;
        r->agg_passthrough += st.passthrough;
        if (st.peak_live > r->peak_live_slots) r->peak_live_slots = st.peak_live;
        r->agg_allocations += st.allocations;
        r->agg_reclaimed += st.reclaimed_live;
        r->agg_adoptions += st.adoptions;
        r->agg_replays += st.replays;
        r->agg_held += st.dup_credits;
        r->slot_time += st.slot_time;
        r->partial_slot_time += st.partial_slot_time;
        if (arb_agg_check(g) < 0) r->inv_agg_check++;
    }
}

/* The engines' counters and the per-engine invariants of job j into r
 * (partitioned: those this part runs); the controllers' window gates
 * summed into *window, and their number into *n_cc (integers, so that the
 * parts' sums add up exactly). */
static void engine_sums(const arb_sim *s, const struct ajob *j, arb_sim_arbor_result *r,
                        uint64_t *window, uint64_t *n_cc)
{
    const arb_plan *p = j->p;
    for (uint32_t i = 0; i < j->n_eps; i++) {
        const arb_hep *e = &j->eps[i];
        if (!owns_node(s, e->host)) continue;
        if (e->r) {
            arb_responder_stats st;
            arb_responder_get_stats(e->r, &st);
            r->commits += st.commits;
            r->repair_commits += st.repair_commits;
            r->repair_credits += st.repair_credits;
            r->timeouts += st.timeouts;
            r->agg_miss += st.agg_miss;
            r->late_masters += st.late_masters;
            r->tail_replays += st.tail_replays;
            r->credits += st.credits;
            r->dead_subchannels += st.dead_subchannels;
            r->retries += st.retries;
            r->losses_order += st.losses_order;
            r->losses_timer += st.losses_timer;
            r->spurious += st.spurious;
            r->bypass += st.bypass;
            r->deaths += st.deaths;
            r->probes += st.probes;
            r->revivals += st.revivals;
            if (e->cc) {
                arb_cc_stats cs;
                arb_cc_get_stats(e->cc, &cs);
                r->cc_increases += cs.increases;
                r->cc_decreases += cs.decreases;
                r->cc_ce_samples += cs.ce_samples;
                r->cc_stalls += cs.stalls;
                *window += cs.window;
                (*n_cc)++;
            }
        } else {
            arb_requester_stats st;
            arb_requester_get_stats(e->q, &st);
            r->requests += st.requests + st.repair_requests;
            r->results += st.results;
            r->registers += st.registers;
            r->ends += st.ends;
            /* every requester receives every result (pull-result, push) */
            arb_ep_kind kind = arb_plan_get_channel(p, e->ch)->kind;
            /* header-only: results held (one message per engine: its stats' count) */
            uint64_t got = j->cfg.values ? e->results : st.results;
            if (r->done && kind != ARB_EP_BARRIER && got < e->offsets)
                r->inv_missing += e->offsets - got;
            if (e->cond_done && arb_plan_get_config(p)->coll != ARB_COLL_REDUCE &&
                kind != ARB_EP_BARRIER && got < e->offsets)
                r->inv_early++;
        }
        if (e->r && e->cond_done && e->results < e->offsets) r->inv_early++;
    }
}

static void finish_invariants(arb_sim_arbor_result *r, int values)
{
    r->invariant_errors = r->inv_dup_commit + r->inv_count + r->inv_agg_check + r->inv_missing +
                          r->inv_early + r->inv_conservation;
    /* values mode: correct only if every rank's output is final and
     * something was checked, unless the collective carries no data
     * (Barrier: bytes 0, done is the answer) */
    if (values)
        r->correct = r->wrong == 0 && r->ranks_done == r->ranks && r->inv_missing == 0 &&
                     (r->checked > 0 || r->bytes == 0);
    r->bytes_per_packet = (uint32_t)(sizeof(struct pkt) + sizeof(arb_hdr));
}

/* Job j's figures: its engines, its packets, the switches it aggregates at
 * (whose pools other jobs may share), the fabric's conservation; *rtt: its
 * credit-to-commit times' sum and count (partitioned: every part's, as
 * the figures; every part calls it). 0 or an error. */
static int job_result(const arb_sim *s, const struct ajob *j, uint64_t conservation,
                      arb_sim_arbor_result *out, uint64_t rtt[2])
{
    arb_sim_arbor_result r = j->res;
    const arb_plan *p = j->p;
    r.ranks = arb_plan_get_config(p)->n_ranks;
    r.ranks_done = job_ranks_done(j);
    r.port = SIM_ARBOR_DPORT + j->port;
    r.done = job_done(j);
    r.bytes = arb_plan_get_config(p)->coll == ARB_COLL_BARRIER ? 0 : arb_plan_get_config(p)->bytes;
    r.finish = ARB_TIME_NEVER;
    if (r.ranks_done == arb_plan_get_config(p)->n_ranks) {
        r.finish = 0;
        for (uint32_t k = 0; k < arb_plan_get_config(p)->n_ranks; k++)
            if (j->host->rank_done[k] > r.finish) r.finish = j->host->rank_done[k];
        r.cct = r.finish - r.start;
        r.goodput_gbps = r.cct ? (double)r.bytes * 8.0 / ((double)r.cct / 1e12) / 1e9 : 0;
    }
    uint64_t x[4] = {0, 0, j->rtt_sum, j->rtt_n}; /* window gates, controllers; rtt */
    engine_sums(s, j, &r, &x[0], &x[1]);
    agg_sums(s, j, &r);
    port_sums(s, j, &r);
    int rc = arbor_part_merge(s, &r, x, 4);
    if (rc < 0) return rc;
    r.cc_window_mean = x[1] ? (double)x[0] / (double)x[1] : 0;
    r.inv_conservation = conservation;
    finish_invariants(&r, j->cfg.values);
    r.rtt_mean = x[3] ? x[2] / x[3] : 0;
    rtt[0] = x[2];
    rtt[1] = x[3];
    *out = r;
    return 0;
}

/* Job figures w += r: counts summed, the span from the first start to the
 * last finish, goodputs summed (docs/arbor-sim.md). */
static void result_add(arb_sim_arbor_result *w, const arb_sim_arbor_result *r)
{
    w->done = w->done && r->done;
    w->ranks += r->ranks;
    w->ranks_done += r->ranks_done;
    if (r->start < w->start) w->start = r->start;
    if (w->finish == ARB_TIME_NEVER || r->finish == ARB_TIME_NEVER)
        w->finish = ARB_TIME_NEVER;
    else if (r->finish > w->finish)
        w->finish = r->finish;
    w->bytes += r->bytes;
    w->goodput_gbps += r->goodput_gbps;
    uint64_t *const wc[] = {
        &w->commits,     &w->repair_commits, &w->repair_credits,   &w->timeouts,
        &w->agg_miss,    &w->late_masters,   &w->tail_replays,     &w->credits,
        &w->requests,    &w->results,        &w->registers,        &w->ends,
        &w->agg_drops,   &w->copies,         &w->checked,          &w->wrong,
        &w->wire_checks, &w->wire_errors,    &w->inv_dup_commit,   &w->inv_count,
        &w->inv_missing, &w->inv_early,      &w->dead_subchannels, &w->pkts,
        &w->wire_bytes,  &w->retries,        &w->losses_order,     &w->losses_timer,
        &w->spurious,    &w->bypass,         &w->deaths,           &w->probes,
        &w->revivals,    &w->cc_increases,   &w->cc_decreases,     &w->cc_ce_samples,
        &w->cc_stalls};
    const uint64_t rc[] = {r->commits,     r->repair_commits, r->repair_credits,   r->timeouts,
                           r->agg_miss,    r->late_masters,   r->tail_replays,     r->credits,
                           r->requests,    r->results,        r->registers,        r->ends,
                           r->agg_drops,   r->copies,         r->checked,          r->wrong,
                           r->wire_checks, r->wire_errors,    r->inv_dup_commit,   r->inv_count,
                           r->inv_missing, r->inv_early,      r->dead_subchannels, r->pkts,
                           r->wire_bytes,  r->retries,        r->losses_order,     r->losses_timer,
                           r->spurious,    r->bypass,         r->deaths,           r->probes,
                           r->revivals,    r->cc_increases,   r->cc_decreases,     r->cc_ce_samples,
                           r->cc_stalls};
    for (size_t k = 0; k < sizeof rc / sizeof rc[0]; k++)
        *wc[k] += rc[k];
    for (int t = 0; t < 4; t++) {
        w->tier_up_bytes[t] += r->tier_up_bytes[t];
        w->tier_down_bytes[t] += r->tier_down_bytes[t];
    }
    if (r->rtt_max > w->rtt_max) w->rtt_max = r->rtt_max;
}

/* Several jobs: the whole (docs/arbor-sim.md section 2). 0 or an error. */
static int whole_result(const arb_sim *s, uint64_t conservation, arb_sim_arbor_result *out)
{
    const struct arbor_job *a = s->arb;
    arb_sim_arbor_result w;
    memset(&w, 0, sizeof w);
    w.done = 1;
    w.start = ARB_TIME_NEVER;
    w.finish = 0;
    uint64_t rtt_sum = 0, rtt_n = 0, n_cc = 0;
    double window_sum = 0;
    for (uint32_t x = 0; x < a->n_jobs; x++) {
        arb_sim_arbor_result r;
        uint64_t rtt[2];
        int rc = job_result(s, a->jobs[x], conservation, &r, rtt);
        if (rc < 0) return rc;
        result_add(&w, &r);
        if (r.peak_job_slots > w.peak_job_slots) w.peak_job_slots = r.peak_job_slots;
        rtt_sum += rtt[0];
        rtt_n += rtt[1];
        /* the mean over every channel: each job's mean weighted by its channels */
        window_sum += r.cc_window_mean * arb_plan_n_channels(a->jobs[x]->p);
        n_cc += arb_plan_n_channels(a->jobs[x]->p);
    }
    w.cc_window_mean = n_cc ? window_sum / (double)n_cc : 0;
    if (w.finish != ARB_TIME_NEVER)
        w.cct = w.finish - w.start;
    else
        w.goodput_gbps = 0;
    if (!s->part) {
        agg_sums(s, NULL, &w); /* every pool once: they are shared */
    } else {                   /* every part's pools, summed over the parts */
        arb_sim_arbor_result g;
        memset(&g, 0, sizeof g);
        agg_sums(s, NULL, &g);
        int rc = arbor_part_merge(s, &g, NULL, 0);
        if (rc < 0) return rc;
        w.agg_inputs += g.agg_inputs;
        w.agg_aggregates += g.agg_aggregates;
        w.agg_passthrough += g.agg_passthrough;
        if (g.peak_live_slots > w.peak_live_slots) w.peak_live_slots = g.peak_live_slots;
        w.agg_allocations += g.agg_allocations;
        w.agg_reclaimed += g.agg_reclaimed;
        w.agg_adoptions += g.agg_adoptions;
        w.agg_replays += g.agg_replays;
        w.agg_held += g.agg_held;
        w.slot_time += g.slot_time;
        w.partial_slot_time += g.partial_slot_time;
        w.inv_agg_check += g.inv_agg_check;
    }
    w.inv_conservation = conservation;
    w.correct = a->values ? 1 : -1;
    finish_invariants(&w, a->values);
    w.rtt_mean = rtt_n ? rtt_sum / rtt_n : 0;
    *out = w;
    return 0;
}

int arb_sim_arbor_result_get(const arb_sim *s, arb_sim_arbor_result *out)
{
    const struct arbor_job *a = s->arb;
    if (!a || !a->n_jobs || !out) return ARB_EINVAL;
    uint64_t conservation, rtt[2];
    int rc = conservation_errors(s, &conservation);
    if (rc < 0) return rc;
    if (a->n_jobs == 1) return job_result(s, a->jobs[0], conservation, out, rtt);
    return whole_result(s, conservation, out);
}

int arb_sim_arbor_job_result(const arb_sim *s, int job, arb_sim_arbor_result *out)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a || job < 0 || (uint32_t)job >= a->n_jobs || !out) return ARB_EINVAL;
    uint64_t conservation, rtt[2];
    int rc = conservation_errors(s, &conservation);
    return rc < 0 ? rc : job_result(s, a->jobs[job], conservation, out, rtt);
}
