/* Arbor in the simulator: the hosts -- the engines' sends, received
 * packets (lagged or not), timers and ranks done (arbor_int.h). */
#include "arbor_int.h"

#include <assert.h>
#include "base/alloc.h"

static void host_send(arb_sim *s, uint32_t port, uint32_t i)
{
    struct pkt *k = pool_get(&s->pool, i);
    s->st.pkts_sent++;
    s->st.bytes_sent += k->bytes;
    net_nic_send(s, port, i);
}

/* Where an engine's packet goes: up its tree (psn ROUTE_TREE, port the tree's
 * up port) or unicast from its NIC (ROUTE_UNICAST); *dst_host: the
 * destination host, NONE for the group. */
static uint32_t send_route(const arb_hep *e, const arb_ep_dst *dst, const arb_hdr *h,
                           uint32_t *port, uint32_t *dst_host)
{
    const arb_plan_channel *c = e->c;
    int via_tree = dst->kind == ARB_EP_DST_GROUP ||
                   (dst->kind == ARB_EP_DST_RESPONDER && h->packet_type == ARB_PT_DATA_REQUEST &&
                    !h->repair && h->agg_depth > 0);
    if (via_tree) {
        *dst_host = dst->kind == ARB_EP_DST_GROUP ? NONE : c->responder_host;
        *port = e->tree_port[dst->subchannel];
        return ROUTE_TREE;
    }
    const arb_plan *p = ej(e)->p;
    *dst_host = dst->kind == ARB_EP_DST_MEMBER
                    ? arb_plan_host(p, arb_plan_member(p, e->ch, dst->member))
                    : c->responder_host;
    *port = e->nic_port;
    return ROUTE_UNICAST;
}

/* ECN echo: the request that answers a credit marked CE carries CE, so
 * that a mark anywhere on the loop (the credit's way down included) reaches
 * the responder in the aggregate, as a receiver's echo does for a sender. */
static uint8_t echo_ce(const arb_sim *s, const arb_hdr *h)
{
    return s->arb->echo_ce && h->packet_type == ARB_PT_DATA_REQUEST && !h->repair ? PF_CE : 0;
}

/* A packet of a retry (attempt >= 1) or of the bypass repair leaves a
 * host: its payload is sent again; a credit among them is a responder's
 * answer to a loss it found (arb_sim_arbor_counters). */
static SIM_COLD void resent(struct arbor_job *a, const arb_hdr *h, uint32_t plen, arb_time now)
{
    a->resent_bytes += plen;
    if (h->packet_type != ARB_PT_RESPONSE || !h->credit_valid) return;
    a->resends++;
    if (a->watching && now >= a->watch_from) {
        a->watch_hit = now;
        a->watching = 0;
    }
}

/* The engines' send callback. */
void arbor_ep_send(void *ctx, const arb_ep_dst *dst, const arb_hdr *h, const uint8_t *payload,
                   size_t len)
{
    arb_hep *e = ctx;
    struct ajob *j = ej(e);
    arb_sim *s = j->s;
    uint32_t i = pkt_take(s);
    if (i == PKT_NONE) return;
    j->a->hdr[i] = *h;
    uint32_t aux = NONE, plen;
    if (!j->cfg.values) {
        plen = arbor_virtual_len(j, e->c, h);
    } else {
        plen = (uint32_t)len;
        if (len && (aux = arbor_put_payload(s, payload, len)) == NONE) {
            pool_release(&s->pool, i);
            fatal(s, ARB_ENOMEM);
            return;
        }
    }
    if (j->cfg.wire_check) arbor_wire_check(s, j->ch_base + e->ch, h, len);
    if (h->repair || h->attempt) resent(s->arb, h, plen, s->now);
    uint32_t port, dst_host;
    uint32_t route = send_route(e, dst, h, &port, &dst_host);
    *pool_get(&s->pool, i) = (struct pkt){.next = PKT_NONE,
                                          .conn = j->ch_base + e->ch,
                                          .src = e->host,
                                          .dst = dst_host,
                                          .psn = route | j->port << 1,
                                          .aux = aux,
                                          .qp = e->c->first_tree + dst->subchannel,
                                          .in_port = PKT_NONE,
                                          .ts = s->now,
                                          .bytes = (uint16_t)wire_of(h, plen),
                                          .payload = (uint16_t)plen,
                                          .sport = (uint16_t)dst->subchannel,
                                          .kind = PK_ARBOR,
                                          .flags = (uint8_t)(PF_ECT | echo_ce(s, h))};
    j->a->acct[e->host].in++;
    if (s->arb->busy && s->arb->busy[e->host] < s->now) s->arb->busy[e->host] = s->now; /* awake */
    host_send(s, port, i);
}

arb_time arbor_cost_due(struct arbor_job *a, uint32_t node, int host, uint32_t bytes, arb_time now)
{
    const arb_sim_arbor_cost *c = &a->cost;
    arb_time t = a->busy[node];
    uint64_t rate = host ? c->host_rate : c->switch_rate;
    if (t < now) { /* idle since t: asleep after spin */
        t = now + (now - a->busy[node] > c->spin ? (host ? c->host_wake : c->switch_wake) : 0);
    }
    arb_time each = (host ? c->host_pkt : c->switch_pkt) + (rate ? arb_time_tx(bytes, rate) : 0);
    if (c->cores) { /* on the core free first, once it is */
        uint32_t k = 0;
        for (uint32_t x = 1; x < c->cores; x++)
            if (a->core_free[x] < a->core_free[k]) k = x;
        if (a->core_free[k] > t) t = a->core_free[k];
        a->core_free[k] = t + each;
    }
    a->busy[node] = t + each;
    return a->busy[node];
}

void arbor_arm(arb_sim *s, uint32_t h, arb_time t)
{
    struct arbor_job *a = s->arb;
    if (t == ARB_TIME_NEVER || a->timer_at[h] <= t) return;
    if (t < s->now) t = s->now;
    int64_t seq = evq_push(&s->q, t, (s->n_ports << 2) + s->n_hosts + h);
    if (seq < 0) {
        fatal(s, (int)seq);
        return;
    }
    a->timer_at[h] = t;
    a->timer_seq[h] = (uint64_t)seq;
}

/* Engine e gave up: what it lost, in hosts (the first failure is kept). */
static void note_failure(arb_sim *s, const arb_hep *e)
{
    arb_sim_arbor_failure *f = &s->arb->failure;
    const struct ajob *j = ej(e);
    const arb_plan *p = j->p;
    const arb_plan_channel *c = e->c;
    if (f->failed) return;
    f->failed = 1;
    s->arb->fail_at = s->now; /* a partitioned run: the parts keep the earliest */
    s->arb->fail_event = s->part_target;
    f->job = j->index;
    f->channel = e->ch;
    f->responder_host = c->responder_host;
    if (e->q) {
        f->requester = 1;
        f->n_missing = 1;
        f->missing_hosts[0] = e->host;
        return;
    }
    arb_responder_failure rf;
    arb_responder_get_failure(e->r, &rf);
    f->end_wait = rf.end_wait;
    f->offset = rf.offset;
    f->subchannel = rf.subchannel;
    f->attempts = rf.attempts;
    f->tries = rf.tries;
    f->waited = rf.waited;
    f->n_missing = rf.n_missing;
    uint32_t k = 0;
    for (uint32_t m = 0; m < c->n_members && k < 16; m++)
        if ((rf.missing[m >> 6] >> (m & 63)) & 1)
            f->missing_hosts[k++] = arb_plan_host(p, arb_plan_member(p, e->ch, m));
}

/* The rank driver's on_failure: engine e gave up, the run fails. */
void arbor_on_failure(arb_hep *e)
{
    arb_sim *s = ej(e)->s;
    note_failure(s, e);
    fatal(s, ARB_ETIMEDOUT);
}

/* Rank r of job j is done: report it after the event (the simulator's
 * done list, as a flow's end), so that the callback may add flows and jobs. */
static SIM_COLD void note_rank(arb_sim *s, struct ajob *j, uint32_t r)
{
    struct arbor_job *a = s->arb;
    j->reported[r] = 1;
    if (a->n_notes == a->cap_notes) {
        uint32_t cap = a->cap_notes ? a->cap_notes * 2 : 64;
        struct rnote *n = arb_realloc(a->notes, cap * sizeof *n);
        if (!n) {
            fatal(s, ARB_ENOMEM);
            return;
        }
        a->notes = n;
        a->cap_notes = cap;
    }
    if (a->n_notes == 0) sim_note_done(s, SIM_ARBOR_NOTE);
    a->notes[a->n_notes++] = (struct rnote){j->index, r};
}

/* After a call on engine e: its rank may just be done (a rank's condition
 * moves only in calls on its own engines). */
static inline void rank_check(arb_sim *s, struct ajob *j, const arb_hep *e)
{
    if (j->cfg.on_rank_done && !j->reported[e->rank] &&
        j->host->rank_done[e->rank] != ARB_TIME_NEVER)
        note_rank(s, j, e->rank);
}

void arbor_report(arb_sim *s)
{
    struct arbor_job *a = s->arb;
    /* by index: a callback may enter ranks, which reports nothing at once */
    for (uint32_t x = 0; a && x < a->n_notes; x++) {
        struct ajob *j = a->jobs[a->notes[x].job];
        j->cfg.on_rank_done(j->cfg.rank_ctx, s, (int)j->index, a->notes[x].rank, s->now);
    }
    if (a) a->n_notes = 0;
}

uint32_t arbor_n_notes(const arb_sim *s)
{
    return s->arb ? s->arb->n_notes : 0;
}

uint64_t arbor_note(const arb_sim *s, uint32_t x)
{
    const struct rnote *n = &s->arb->notes[x];
    return (uint64_t)n->job << 32 | n->rank;
}

void arbor_notes_taken(arb_sim *s)
{
    if (s->arb) s->arb->n_notes = 0;
}

void arbor_report_note(arb_sim *s, uint64_t note)
{
    uint32_t job = (uint32_t)(note >> 32), r = (uint32_t)note;
    struct arbor_job *a = s->arb;
    if (!a || job >= a->n_jobs || !a->jobs[job]->cfg.on_rank_done) {
        fatal(s, ARB_ESTATE); /* a note no job made: a bug */
        return;
    }
    struct ajob *j = a->jobs[job];
    j->cfg.on_rank_done(j->cfg.rank_ctx, s, (int)job, r, s->now);
}

/* ---- entries deferred by a completion callback (arbor_int.h) -------- */

int arbor_defer_enter(arb_sim *s, struct ajob *j, uint32_t r, arb_time at)
{
    struct arbor_job *a = s->arb;
    uint32_t h = arb_plan_host(j->p, r);
    if (!owns_node(s, h)) return 0; /* another part enters it */
    if (!a->enters && !(a->enters = arb_calloc(s->n_hosts, sizeof *a->enters))) return ARB_ENOMEM;
    struct aenters *l = &a->enters[h];
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 4;
        struct aenter *v = arb_realloc(l->v, cap * sizeof *v);
        if (!v) return ARB_ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    int64_t seq = evq_push(&s->q, at, SIM_ENTER_TARGET(s, h));
    if (seq < 0) return (int)seq;
    uint32_t k = l->n++; /* after those due no later */
    while (k > l->head && l->v[k - 1].at > at) {
        l->v[k] = l->v[k - 1];
        k--;
    }
    l->v[k] = (struct aenter){at, j->index, r};
    return 0;
}

/* One event per deferred entry: the host's first one is due now. */
void arbor_on_enter(arb_sim *s, uint32_t h)
{
    struct arbor_job *a = s->arb;
    struct aenters *l = a && a->enters ? &a->enters[h] : NULL;
    if (!l || l->head == l->n || l->v[l->head].at != s->now) {
        fatal(s, ARB_ESTATE); /* an event without its entry: a bug */
        return;
    }
    struct aenter e = l->v[l->head++];
    if (l->head == l->n) l->head = l->n = 0; /* the list holds what is pending only */
    a->jobs[e.job]->start_at[e.rank] = s->now;
    arbor_arm(s, h, s->now);
}

static inline void host_process(arb_sim *s, uint32_t host, uint32_t i);
static int host_engines(arb_sim *s, struct ajob *j, uint32_t h, int start, arb_time *next);
static void host_idle(struct ajob *j, uint32_t h);

void arbor_host_recv(arb_sim *s, uint32_t port, uint32_t host, uint32_t i)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    count_sent(job_of(s, k->conn), port, k);
    arb_time lag = a->lag ? a->lag[host] : 0;
    if (lag || a->busy) { /* handled later: its lag, the host's cost */
        k->ts = (a->busy ? arbor_cost_due(a, host, 1, k->bytes, s->now) : s->now) + lag;
        plist_push(&s->pool, &a->held[host], i);
        a->n_held++;
        arbor_arm(s, host, k->ts);
        return;
    }
    host_process(s, host, i);
}

/* Where a packet for a responder comes from: a member index, a switch, or
 * not a member. */
static int sender_of(const struct ajob *j, const struct pkt *k)
{
    const arb_plan_channel *c = arb_plan_get_channel(j->p, k->conn - j->ch_base);
    if (k->flags & PF_SWITCH) return ARB_EP_FROM_SWITCH;
    uint32_t r = j->rank_of_host[k->src];
    if (r == NONE || k->src == c->responder_host) return ARB_EP_NOT_MEMBER;
    return (int)(r - (r > c->responder));
}

/* Hand packet i to its host's engine. The engine reads a copy of the header
 * and may reuse the packet itself for its first reply (pkt_take); the
 * payload buffer is released only after the engine is done with it. */
static inline void host_process(arb_sim *s, uint32_t host, uint32_t i)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    a->acct[host].in++;
    a->acct[host].delivered++;
    s->st.pkts_delivered++;
    struct ajob *j = job_of(s, k->conn);
    uint32_t x = j->ep_of[(size_t)host * j->n_channels + (k->conn - j->ch_base)];
    if (x == NONE) {
        pkt_free(s, i);
        return;
    }
    arb_hep *e = &j->eps[x];
    arb_hdr h = a->hdr[i];
    uint32_t aux = k->aux;
    const uint8_t *pl = aux != NONE ? a->bp.buf[aux] : NULL;
    size_t len = aux != NONE ? k->payload : 0;
    a->spare = i;
    int from = e->r ? sender_of(j, k) : 0;
    int ce = (k->flags & PF_CE) != 0;
    assert(e->r || arb_hdr_validate(&h, len) == 0); /* built by an engine: see arbor_switch */
    a->echo_ce = (uint8_t)(!e->r && ce); /* a request answering this credit echoes its CE */
    arb_time t = arb_host_deliver(e, &h, pl, len, from, k->sport, ce, 1, s->now);
    a->echo_ce = 0;
    if (t != ARB_TIME_NEVER) {
        arbor_arm(s, e->host, t);
        j->idle[e->rank] = 0; /* its timer serves the job again */
    }
    rank_check(s, j, e);
    if (a->spare == i) {
        a->spare = NONE;
        pkt_free(s, i);
    } else {
        buf_put(s, aux); /* the packet left as the engine's reply */
    }
}

void arbor_on_timer(arb_sim *s, uint32_t h, uint64_t seq)
{
    struct arbor_job *a = s->arb;
    if (!a || seq != a->timer_seq[h] || a->timer_at[h] != s->now) return;
    a->timer_at[h] = ARB_TIME_NEVER;
    arb_time next = ARB_TIME_NEVER;
    if (a->held) {
        struct plist *l = &a->held[h];
        while (l->head != PKT_NONE && pool_get(&s->pool, l->head)->ts <= s->now) {
            a->n_held--;
            host_process(s, h, plist_pop(&s->pool, l));
            if (s->error) return;
        }
        if (l->head != PKT_NONE) next = pool_get(&s->pool, l->head)->ts;
    }
    const struct hjobs *hl = &a->hj[h];
    for (uint32_t x = 0; x < hl->n; x++) {
        struct ajob *j = hl->v[x];
        uint32_t r = j->rank_of_host[h];
        if (j->idle[r]) continue;
        int start = !j->started[r];
        if (start && j->start_at[r] > s->now) { /* later, or not entered yet */
            if (j->start_at[r] < next) next = j->start_at[r];
            continue;
        }
        j->started[r] = 1;
        if (host_engines(s, j, h, start, &next) < 0) return;
    }
    arbor_arm(s, h, next);
}

/* Host h's engines of job j at its timer: started (`start`), or their
 * expiries served; *next: the earliest expiry left. -1: the run failed. */
static int host_engines(arb_sim *s, struct ajob *j, uint32_t h, int start, arb_time *next)
{
    for (uint32_t x = j->host_first[h]; x < j->host_first[h + 1]; x++) {
        arb_hep *e = &j->eps[j->host_eps[x]];
        const arb_plan_channel *c = arb_plan_get_channel(j->p, e->ch);
        if (start) {
            uint64_t len = c->hi - c->lo;
            int rc = 0;
            if (e->r && j->cfg.values && len && c->kind != ARB_EP_PUSH &&
                c->kind != ARB_EP_BARRIER && !e->result) {
                e->result = arb_malloc(len);
                if (!e->result) rc = ARB_ENOMEM;
            }
            if (rc == 0) rc = arb_host_start(e, NULL, e->r ? e->result : NULL, s->now);
            if (rc < 0) {
                fatal(s, rc);
                return -1;
            }
        } else {
            arb_host_expire(e, s->now);
        }
        arb_time t = arb_host_after(e, s->now);
        arbor_arm(s, e->host, t);
        if (t < *next) *next = t;
        rank_check(s, j, e);
    }
    host_idle(j, h);
    return 0;
}

/* Host h is through with job j when every engine it runs for it has
 * finished and waits for no timer: its timer skips the job from then on
 * (nothing would move). */
static void host_idle(struct ajob *j, uint32_t h)
{
    for (uint32_t x = j->host_first[h]; x < j->host_first[h + 1]; x++) {
        const arb_hep *e = &j->eps[j->host_eps[x]];
        if (!e->finished || arb_host_expiry(e) != ARB_TIME_NEVER) return;
    }
    j->idle[j->rank_of_host[h]] = 1;
}
