/*
 * Hosts and the RoCE-style transports: go-back-N and IRN selective repeat,
 * both with a retransmission timeout and a window of packets in flight.
 *
 * IRN loss detection: a hole (a PSN below the highest selectively acked
 * one) is taken as lost when a packet sent at least `irn_reorder` after it
 * has arrived (the NACK echoes that packet's send time). With the default
 * 0 every NACK exposes the holes below it, as in the IRN paper; a window
 * at least as long as the path skew keeps packets that are merely late,
 * overtaken on a faster path, from being resent (a time-based reordering
 * window in the manner of RACK); a real loss is then repaired once a
 * packet sent a window later arrives, or at the timeout.
 *
 * The retry limit: a sender that meets cfg.retry_limit + 1 timeouts in a
 * row, its cumulative ack not moving between them, gives up (give_up).
 *
 * Timeouts: the timer restarts at every move of the cumulative ack, at
 * s->tm.rto_low while at most rto_low_n packets are outstanding and at
 * rto_high while more are (IRN's two timers; go-back-N has both at
 * cfg.rto). Tail-loss probes (s->tm.tlp): a sender with nothing left to
 * send arms a probe 2 x its smoothed round trip after its last send or ack;
 * when it fires, the highest PSN sent goes again, and its answer (an ack,
 * or IRN's NACK, which then takes every hole sent before the probe as
 * lost) repairs what an RTO would have. One probe until the cumulative ack
 * moves. With the probes IRN also finds a lost resend of the hole at the
 * cumulative ack by send time, as RACK does (irn_lost_resend).
 */
#include "sim_int.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

static int bit_get(const uint8_t *b, uint32_t i)
{
    return (b[i >> 3] >> (i & 7)) & 1;
}

static void bit_set(uint8_t *b, uint32_t i)
{
    b[i >> 3] |= (uint8_t)(1u << (i & 7));
}

static void bit_clear(uint8_t *b, uint32_t i)
{
    b[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

static uint32_t payload_of(const arb_sim *s, const struct conn *c, uint32_t psn)
{
    return psn + 1 == c->n_pkts ? c->last_payload : s->cfg.mtu;
}

/* When a started connection next needs its host's timer: its timeout, its
 * probe or its next DCQCN rate-increase timer. (Starts come from the host's
 * pending list; pacing waits are armed by rdma_pull when they leave the NIC
 * idle.) */
static arb_time conn_wake(const struct conn *c)
{
    arb_time t = c->cc.inc_at < c->rto_at ? c->cc.inc_at : c->rto_at;
    return c->pto_at < t ? c->pto_at : t;
}

/* ---- timers --------------------------------------------------------- */

/* The longest path's unloaded round trip (arb_sim_timers.loop). */
static arb_time fabric_loop(const arb_sim *s)
{
    arb_time data = 0, ack = 0;
    for (uint32_t p = 0; p < s->n_ports; p++) {
        const arb_port *pt = &s->ports[p];
        if (!pt->rate) continue;
        arb_time d = pt->delay + arb_time_tx(s->cfg.mtu + s->cfg.hdr_bytes, pt->rate);
        arb_time a = pt->delay + arb_time_tx(s->cfg.ctrl_bytes, pt->rate);
        if (d > data) data = d;
        if (a > ack) ack = a;
    }
    unsigned h = arb_topo_height(s->topo);
    return 2 * (arb_time)(h ? h : 1) * (data + ack);
}

/* The longest a packet can wait in queues on the longest path: a full
 * switch queue, drained at the slowest link, at each of its 2h - 1 switch
 * ports (arb_sim_timers.rto_high). */
static arb_time path_queues(const arb_sim *s)
{
    uint64_t rate = UINT64_MAX;
    for (uint32_t p = 0; p < s->n_ports; p++)
        if (s->ports[p].rate && s->ports[p].rate < rate) rate = s->ports[p].rate;
    if (rate == UINT64_MAX) return 0;
    unsigned h = arb_topo_height(s->topo);
    return (2 * (arb_time)(h ? h : 1) - 1) * arb_time_tx(s->cfg.queue_bytes, rate);
}

void rdma_timers(arb_sim *s)
{
    const arb_sim_config *c = &s->cfg;
    arb_sim_timers *t = &s->tm;
    t->loop = fabric_loop(s);
    t->rto_low_n = c->rto_low_n;
    t->tlp = c->tlp == ARB_SIM_TLP_AUTO ? c->transport == ARB_TRANSPORT_IRN : c->tlp;
    if (c->transport == ARB_TRANSPORT_GBN) {
        t->rto_low = t->rto_high = c->rto;
    } else {
        t->rto_low = c->rto_low ? c->rto_low : 4 * t->loop;
        if (!c->rto_low && c->rto_high && t->rto_low > c->rto_high) t->rto_low = c->rto_high;
        t->rto_high = c->rto_high ? c->rto_high : t->rto_low + path_queues(s);
    }
    t->pto_min = t->loop;
    t->pto_max = t->rto_high > t->loop ? t->rto_high : t->loop;
}

/* The timeout c's timer runs with now: by the packets outstanding. */
static arb_time rto_of(const arb_sim *s, const struct conn *c)
{
    return c->snd_max - c->snd_una <= s->tm.rto_low_n ? s->tm.rto_low : s->tm.rto_high;
}

/* The probe timeout: twice the smoothed round trip, within its bounds. */
static arb_time pto_of(const arb_sim *s, const struct conn *c)
{
    arb_time t = 2 * c->srtt;
    if (t < s->tm.pto_min) return s->tm.pto_min;
    return t > s->tm.pto_max ? s->tm.pto_max : t;
}

/*
 * The host timer. Invariant: a timer is pending no later than the wake
 * time of every connection of the host. A connection whose wake time moves
 * earlier calls rdma_arm_at (O(1)); one whose time moves later needs
 * nothing, since the pending timer fires, rdma_on_timer scans the host's
 * connections once and re-arms at their minimum (rdma_arm_host).
 */
void rdma_arm_host(arb_sim *s, uint32_t h)
{
    struct host *ho = &s->hosts[h];
    arb_time t =
        ho->pend_head < ho->n_pend ? s->conns[ho->pend[ho->pend_head]].start : ARB_TIME_NEVER;
    for (uint32_t k = 0; k < ho->n_conns; k++) {
        arb_time ct = conn_wake(&s->conns[ho->conns[k]]);
        if (ct < t) t = ct;
    }
    rdma_arm_at(s, h, t);
}

/* rdma_arm_at once its timer is to move earlier. */
static SIM_NOINLINE void arm_earlier(arb_sim *s, uint32_t h, arb_time t)
{
    struct host *ho = &s->hosts[h];
    if (s->part && !part_owns_host(s, h)) return; /* another part runs it */
    if (t < s->now) t = s->now;
    int64_t seq = evq_push(&s->q, t, (s->n_ports << 2) + h);
    if (seq < 0) {
        if (!s->error) s->error = (int)seq;
        return;
    }
    ho->timer_at = t;
    ho->timer_seq = (uint64_t)seq;
}

/* Host h's timer to fire by t: the test that an earlier one will (the
 * common case) inline in the transport's per-packet paths. */
static SIM_ALWAYS_INLINE void arm_at(arb_sim *s, uint32_t h, arb_time t)
{
    if (t != ARB_TIME_NEVER && s->hosts[h].timer_at > t) arm_earlier(s, h, t);
}

void rdma_arm_at(arb_sim *s, uint32_t h, arb_time t)
{
    arm_at(s, h, t); /* else an earlier timer will fire and look again */
}

/*
 * A host keeps its connections in two lists: those not started, ordered by
 * (start, index), and the started ones in index order, which the NIC's
 * round robin walks. A connection moves from the first to the second when
 * it starts and leaves the second when it is done sending, so the NIC and
 * the timer look only at connections that can act.
 */
/* Room for one more in the list v[*head .. *n) of capacity *cap: what
 * left its head is dropped first. 0 or ARB_ENOMEM. */
static int list_room(uint32_t **v, uint32_t *head, uint32_t *n, uint32_t *cap)
{
    if (*head > 0 && *n == *cap) {
        memmove(*v, *v + *head, (*n - *head) * sizeof **v);
        *n -= *head;
        *head = 0;
    }
    if (*n == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 4;
        uint32_t *nv = arb_realloc(*v, ncap * sizeof *nv);
        if (!nv) return ARB_ENOMEM;
        *v = nv;
        *cap = ncap;
    }
    return 0;
}

int rdma_host_reserve(arb_sim *s, uint32_t h)
{
    struct host *ho = &s->hosts[h];
    if (list_room(&ho->pend, &ho->pend_head, &ho->n_pend, &ho->cap_pend) < 0) return ARB_ENOMEM;
    /* Every connection not yet finished may be started at once. */
    uint32_t need = ho->n_conns + (ho->n_pend - ho->pend_head) + 1;
    if (need > ho->cap_conns) {
        uint32_t ncap = ho->cap_conns ? ho->cap_conns : 4;
        while (ncap < need)
            ncap *= 2;
        uint32_t *nc = arb_realloc(ho->conns, ncap * sizeof *nc);
        if (!nc) return ARB_ENOMEM;
        ho->conns = nc;
        ho->cap_conns = ncap;
    }
    return 0;
}

/* Host h's NICs pull from its connections from now on. */
static void nic_pulls(arb_sim *s, uint32_t h)
{
    const arb_node *n = &s->nodes[h];
    for (uint32_t q = 0; q < n->n_up; q++)
        s->sp[n->first_up + q].kind = NIC_RDMA;
}

/* Put connection cid into v[head .. n), ordered by (start, index), with
 * room for one more: after every connection that starts no later (flows
 * are mostly added in start order: usually no move at all). */
static void insert_by_start(const arb_sim *s, uint32_t *v, uint32_t head, uint32_t n, uint32_t cid)
{
    arb_time t = s->conns[cid].start;
    uint32_t lo = head, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->conns[v[mid]].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(v + lo + 1, v + lo, (n - lo) * sizeof *v);
    v[lo] = cid;
}

void rdma_host_add(arb_sim *s, uint32_t h, uint32_t cid)
{
    struct host *ho = &s->hosts[h];
    nic_pulls(s, h);
    insert_by_start(s, ho->pend, ho->pend_head, ho->n_pend, cid);
    ho->n_pend++;
    arm_at(s, h, s->conns[cid].start);
}

/* Move a connection that starts now into the round robin, at its index
 * position; the connection the robin would serve next stays next. */
static void start_conn(arb_sim *s, struct host *ho, uint32_t cid)
{
    s->conns[cid].started = 1;
    uint32_t lo = 0, hi = ho->n_conns;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ho->conns[mid] < cid)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(ho->conns + lo + 1, ho->conns + lo, (ho->n_conns - lo) * sizeof *ho->conns);
    ho->conns[lo] = cid;
    ho->n_conns++;
    if (lo < ho->rr) ho->rr++;
}

/* ---- starts deferred by a completion callback (sim_int.h) ----------- */

int rdma_defer(arb_sim *s, uint32_t h, uint32_t cid)
{
    nic_pulls(s, h);                                /* as rdma_host_add */
    if (s->part && !part_owns_host(s, h)) return 0; /* another part starts it */
    if (!s->defer && !(s->defer = arb_calloc(s->n_hosts, sizeof *s->defer))) return ARB_ENOMEM;
    struct sim_defer *d = &s->defer[h];
    if (list_room(&d->cid, &d->head, &d->n, &d->cap) < 0) return ARB_ENOMEM;
    int64_t seq = evq_push(&s->q, s->conns[cid].start, SIM_START_TARGET(s, h));
    if (seq < 0) return (int)seq;
    insert_by_start(s, d->cid, d->head, d->n, cid);
    d->n++;
    return 0;
}

/* One event per deferred start: the host's first one is due now. */
void rdma_on_start(arb_sim *s, uint32_t h)
{
    struct sim_defer *d = s->defer ? &s->defer[h] : NULL;
    if (!d || d->head == d->n || s->conns[d->cid[d->head]].start != s->now) {
        if (!s->error) s->error = ARB_ESTATE; /* an event without its start: a bug */
        return;
    }
    uint32_t cid = d->cid[d->head++];
    if (d->head == d->n) d->head = d->n = 0;
    int rc = rdma_host_reserve(s, h);
    if (rc < 0) {
        if (!s->error) s->error = rc;
        return;
    }
    struct host *ho = &s->hosts[h];
    start_conn(s, ho, cid);
    net_kick_nic(s, ho->nic_port);
}

void rdma_defer_free(arb_sim *s)
{
    if (s->defer)
        for (uint32_t h = 0; h < s->n_hosts; h++)
            arb_free(s->defer[h].cid);
    arb_free(s->defer);
    s->defer = NULL;
}

static void send_ctrl(arb_sim *s, struct conn *c, uint32_t cid, int kind, uint32_t psn,
                      uint32_t aux, arb_time echo)
{
    uint32_t i = pool_alloc(&s->pool);
    if (i == PKT_NONE) {
        if (!s->error) s->error = ARB_ENOMEM;
        return;
    }
    struct pkt *k = pool_get(&s->pool, i);
    k->kind = (uint8_t)kind;
    k->src = c->dst;
    k->dst = c->src;
    k->conn = cid;
    k->psn = psn;
    k->aux = aux;
    k->ts = echo;
    k->sport = c->sport;
    k->qp = c->qp;
    k->bytes = (uint16_t)s->cfg.ctrl_bytes;
    k->in_port = PKT_NONE;
    s->st.pkts_sent++;
    s->st.bytes_sent += k->bytes;
    net_enqueue(s, s->hosts[c->dst].nic_port, i);
}

/* ---- receiver ------------------------------------------------------- */

static void deliver(arb_sim *s, struct conn *c, uint32_t psn)
{
    s->st.payload_delivered += payload_of(s, c, psn);
    c->rcv_nxt++;
    if (c->rcv_nxt == c->n_pkts) {
        c->finish = s->now;
        s->st.flows_done++;
        if (s->cfg.on_flow_done) sim_note_done(s, (uint32_t)(c - s->conns));
    }
}

static void maybe_ack(arb_sim *s, struct conn *c, uint32_t cid, arb_time echo)
{
    if (++c->since_ack >= s->cfg.ack_every || c->rcv_nxt == c->n_pkts) {
        c->since_ack = 0;
        send_ctrl(s, c, cid, PK_ACK, c->rcv_nxt, 0, echo);
    }
}

static void on_data(arb_sim *s, uint32_t cid, const struct pkt *k)
{
    struct conn *c = &s->conns[cid];
    uint32_t psn = k->psn;
    if (s->cfg.dcqcn && (k->flags & PF_CE) && dcqcn_np_want_cnp(s, c)) {
        s->st.cnps_sent++;
        send_ctrl(s, c, cid, PK_CNP, psn, 0, k->ts);
    }
    if (psn < c->rcv_nxt) { /* a duplicate: tell the sender where we are */
        send_ctrl(s, c, cid, PK_ACK, c->rcv_nxt, 0, k->ts);
        return;
    }
    if (psn > c->rcv_nxt) {
        c->ooo_pkts++;
        s->st.ooo_pkts++;
        if (s->cfg.transport == ARB_TRANSPORT_GBN) {
            if (!c->nack_sent) {
                c->nack_sent = 1;
                send_ctrl(s, c, cid, PK_NACK, c->rcv_nxt, psn, k->ts);
            }
            return;
        }
        if (!bit_get(c->rcvd, psn)) {
            bit_set(c->rcvd, psn);
            c->held_bytes += k->payload;
            if (c->held_bytes > c->reorder_peak) c->reorder_peak = c->held_bytes;
        }
        send_ctrl(s, c, cid, PK_NACK, c->rcv_nxt, psn, k->ts);
        return;
    }
    c->nack_sent = 0;
    deliver(s, c, psn);
    if (s->cfg.transport == ARB_TRANSPORT_IRN) {
        while (c->rcv_nxt < c->n_pkts && bit_get(c->rcvd, c->rcv_nxt)) {
            bit_clear(c->rcvd, c->rcv_nxt);
            c->held_bytes -= payload_of(s, c, c->rcv_nxt);
            deliver(s, c, c->rcv_nxt);
        }
    }
    maybe_ack(s, c, cid, k->ts);
}

/* ---- sender --------------------------------------------------------- */

static void advance_una(arb_sim *s, struct conn *c, uint32_t a)
{
    if (a <= c->snd_una) return;
    c->snd_una = a;
    c->streak = 0;
    c->probe = c->probed = 0; /* progress: a probe due is no longer needed, */
    c->again = 0;             /* nor the resend of the hole just filled */
    if (c->snd_nxt < a) c->snd_nxt = a;
    if (c->snd_una >= c->n_pkts) {
        c->send_done = SEND_ACKED;
        c->rto_at = ARB_TIME_NEVER;
        c->pto_at = ARB_TIME_NEVER;
        s->hosts[c->src].n_finished++;
    } else {
        c->rto_at = s->now + rto_of(s, c);
    }
}

/* IRN: the next hole taken as lost and not yet resent, lost_high when
 * none is left (the cursor moves past what was acknowledged since). */
static uint32_t next_hole(struct conn *c)
{
    if (c->retx_cursor < c->snd_una) c->retx_cursor = c->snd_una;
    while (c->retx_cursor < c->lost_high && bit_get(c->sacked, c->retx_cursor))
        c->retx_cursor++;
    return c->retx_cursor;
}

/* Whether c has nothing it may send now: no hole taken as lost is left to
 * resend, and every PSN has been sent or the window is full. */
static int sender_idle(const arb_sim *s, struct conn *c)
{
    if (s->cfg.transport == ARB_TRANSPORT_IRN && (c->again || next_hole(c) < c->lost_high))
        return 0;
    return c->snd_nxt >= c->n_pkts || (s->cfg.window && c->snd_nxt - c->snd_una >= s->cfg.window);
}

/* After a send or an ack (probes on): arm c's probe when it has nothing
 * left to send and has not probed since its last progress; else disarm it
 * (what it is about to send arms it again). Never at or past the timeout. */
static void arm_pto(arb_sim *s, struct conn *c)
{
    arb_time t = ARB_TIME_NEVER;
    if (!c->probed && c->srtt && !c->send_done && sender_idle(s, c)) {
        t = s->now + pto_of(s, c);
        if (t >= c->rto_at) t = ARB_TIME_NEVER;
    }
    c->pto_at = t;
    arm_at(s, c->src, t);
}

/* An ack's round trip: the time since the packet it answers left (the ack
 * echoes its send time), into the smoothed round trip (RFC 6298's 1/8). */
static void rtt_sample(arb_sim *s, struct conn *c, arb_time echo)
{
    if (echo > s->now) return;
    arb_time r = s->now - echo;
    c->srtt = c->srtt ? c->srtt - c->srtt / 8 + r / 8 : r;
}

/* IRN: mark holes lost that a later-sent packet has overtaken by more
 * than the reorder window. */
static void irn_detect_loss(arb_sim *s, struct conn *c, uint32_t upto, arb_time sent_of_arrived)
{
    if (c->lost_high < c->snd_una) c->lost_high = c->snd_una;
    while (c->lost_high < upto) {
        uint32_t x = c->lost_high;
        arb_time sent = c->sent_at[x];
        int overtaken = sent < sent_of_arrived && sent_of_arrived - sent >= s->cfg.irn_reorder;
        if (!bit_get(c->sacked, x) && !overtaken) break;
        c->lost_high++;
    }
}

/* IRN with RACK-TLP (s->tm.tlp): the hole at the cumulative ack has been
 * resent, and a packet sent a reorder window after that resend has
 * arrived: the resend was lost too, as RACK finds a lost retransmission by
 * send time; it goes once more (next_psn), and the next is judged against
 * that send. */
static void irn_lost_resend(arb_sim *s, struct conn *c, arb_time sent_of_arrived)
{
    uint32_t x = c->snd_una;
    if (x >= c->n_pkts || x >= c->retx_cursor || x >= c->lost_high || bit_get(c->sacked, x)) return;
    arb_time sent = c->sent_at[x];
    if (sent < sent_of_arrived && sent_of_arrived - sent >= s->cfg.irn_reorder) c->again = 1;
}

static void on_ack(arb_sim *s, uint32_t cid, const struct pkt *k)
{
    struct conn *c = &s->conns[cid];
    if (c->send_done == SEND_GAVE_UP) return; /* nothing heeds it */
    if (s->tm.tlp) rtt_sample(s, c, k->ts);
    if (k->kind == PK_ACK) {
        advance_una(s, c, k->psn);
    } else if (s->cfg.transport == ARB_TRANSPORT_GBN) {
        advance_una(s, c, k->psn);
        if (k->psn < c->n_pkts && c->snd_nxt > k->psn) c->snd_nxt = k->psn; /* go back */
    } else {
        advance_una(s, c, k->psn);
        uint32_t r = k->aux;
        if (r < c->n_pkts && r >= c->snd_una) {
            bit_set(c->sacked, r);
            if (r + 1 > c->sack_high) c->sack_high = r + 1;
            irn_detect_loss(s, c, r, k->ts);
        }
        if (s->tm.tlp) irn_lost_resend(s, c, k->ts);
    }
    arm_at(s, c->src, c->rto_at);
    if (s->tm.tlp) arm_pto(s, c);
    net_kick_nic(s, s->hosts[c->src].nic_port);
}

static void on_cnp(arb_sim *s, uint32_t cid)
{
    struct conn *c = &s->conns[cid];
    s->st.cnps_received++;
    if (c->send_done == SEND_GAVE_UP) return;
    c->cc.cnps++;
    if (s->cfg.dcqcn) dcqcn_on_cnp(s, c);
}

void rdma_on_packet(arb_sim *s, uint32_t h, uint32_t i)
{
    struct pkt *k = pool_get(&s->pool, i);
    uint32_t cid = k->conn;
    (void)h;
    s->st.pkts_delivered++;
    if (cid < s->n_conns) {
        if (k->kind == PK_DATA)
            on_data(s, cid, k);
        else if (k->kind == PK_ACK || k->kind == PK_NACK)
            on_ack(s, cid, k);
        else if (k->kind == PK_CNP)
            on_cnp(s, cid);
    }
    pool_release(&s->pool, i);
}

/* A sender with nothing else to send: its probe when one is due (the
 * highest PSN sent), else -1. */
static int64_t probe_psn(struct conn *c)
{
    if (!c->probe) return -1;
    c->probe = 0;
    return (int64_t)c->snd_max - 1;
}

/* The PSN connection c sends next, or -1 when it may not send now. */
static int64_t next_psn(arb_sim *s, struct conn *c)
{
    if (!c->started || c->send_done) return -1;
    if (s->cfg.transport == ARB_TRANSPORT_IRN) {
        if (c->again) {
            c->again = 0;
            if (c->snd_una < c->n_pkts && !bit_get(c->sacked, c->snd_una)) return c->snd_una;
        }
        if (next_hole(c) < c->lost_high) return c->retx_cursor++;
    }
    if (c->snd_nxt >= c->n_pkts) return probe_psn(c);
    if (s->cfg.window && c->snd_nxt - c->snd_una >= s->cfg.window) return probe_psn(c);
    if (s->cfg.transport == ARB_TRANSPORT_IRN) {
        while (c->snd_nxt < c->n_pkts && bit_get(c->sacked, c->snd_nxt))
            c->snd_nxt++;
        if (c->snd_nxt >= c->n_pkts) return probe_psn(c);
    }
    return c->snd_nxt++;
}

/* Drop the connections that are done sending from the host's list, in
 * order, keeping the round robin on the same next connection: a host that
 * has run many flows scans only the live ones. */
static void drop_finished(arb_sim *s, struct host *ho)
{
    uint32_t k = 0, rr = 0;
    for (uint32_t i = 0; i < ho->n_conns; i++) {
        if (s->conns[ho->conns[i]].send_done) continue;
        if (i < ho->rr) rr++;
        ho->conns[k++] = ho->conns[i];
    }
    ho->n_conns = k;
    ho->rr = rr < k ? rr : 0;
    ho->n_finished = 0;
}

uint32_t rdma_pull(arb_sim *s, uint32_t h)
{
    struct host *ho = &s->hosts[h];
    if (ho->n_finished) drop_finished(s, ho);
    arb_time wake = ARB_TIME_NEVER; /* earliest pacing release seen */
    for (uint32_t n = 0; n < ho->n_conns; n++) {
        uint32_t slot = (ho->rr + n) % ho->n_conns;
        uint32_t cid = ho->conns[slot];
        struct conn *c = &s->conns[cid];
        if (s->cfg.dcqcn && c->started && !c->send_done) {
            if (c->cc.inc_at <= s->now) dcqcn_catch_up(s, c);
            if (c->cc.next_send > s->now) {
                if (c->cc.next_send < wake) wake = c->cc.next_send;
                continue;
            }
        }
        int64_t psn = next_psn(s, c);
        if (psn < 0) continue;
        ho->rr = (slot + 1) % ho->n_conns;
        uint32_t i = pool_alloc(&s->pool);
        if (i == PKT_NONE) {
            if (!s->error) s->error = ARB_ENOMEM;
            return PKT_NONE;
        }
        struct pkt *k = pool_get(&s->pool, i);
        uint32_t pl = payload_of(s, c, (uint32_t)psn);
        k->kind = PK_DATA;
        k->src = c->src;
        k->dst = c->dst;
        k->conn = cid;
        k->psn = (uint32_t)psn;
        k->sport = c->sport;
        k->qp = c->qp;
        k->payload = (uint16_t)pl;
        k->bytes = (uint16_t)(pl + s->cfg.hdr_bytes);
        k->flags = PF_ECT;
        k->ts = s->now;
        k->in_port = PKT_NONE;
        int fresh = (uint32_t)psn >= c->snd_max;
        if (!fresh) {
            k->flags |= PF_RETX;
            c->retx_bytes += pl;
            s->st.retx_bytes += pl;
        } else {
            c->snd_max = (uint32_t)psn + 1;
            if (c->snd_max == c->n_pkts && s->cfg.on_flow_sent)
                sim_note_done(s, cid | SIM_SENT_BIT);
        }
        if (c->sent_at) c->sent_at[psn] = s->now;
        if (s->cfg.dcqcn) dcqcn_on_sent(s, c, k->bytes);
        if (c->rto_at == ARB_TIME_NEVER) {
            c->rto_at = s->now + rto_of(s, c);
            arm_at(s, h, c->rto_at);
        } else if (fresh && c->snd_max - c->snd_una == s->tm.rto_low_n + 1) {
            /* more than rto_low_n outstanding from now: the timer armed at
             * the last progress (rto_low) runs to rto_high */
            c->rto_at += s->tm.rto_high - s->tm.rto_low;
        }
        if (s->tm.tlp) {
            c->probe = 0; /* what it sends now draws the answer a probe would */
            arm_pto(s, c);
        }
        s->st.pkts_sent++;
        s->st.data_pkts_sent++;
        s->st.bytes_sent += k->bytes;
        s->st.payload_sent += pl;
        return i;
    }
    /* Only paced connections could send: wake the NIC when the first may. */
    arm_at(s, h, wake);
    return PKT_NONE;
}

/* Past the retry limit: the sender stops for good, as an InfiniBand QP
 * does in its error state ("retry exceeded"). Nothing of it is left to
 * wake (no timeout, no rate timer), it leaves the round robin at the NIC's
 * next pull, and it heeds no answer that still comes (on_ack, on_cnp).
 * What it sent still arrives: the receiver is not told. */
static void give_up(arb_sim *s, struct conn *c)
{
    c->send_done = SEND_GAVE_UP;
    c->rto_at = ARB_TIME_NEVER;
    c->pto_at = ARB_TIME_NEVER;
    c->cc.inc_at = ARB_TIME_NEVER;
    s->hosts[c->src].n_finished++;
    sim_gave_up(s, (uint32_t)(c - s->conns));
}

static void on_timeout(arb_sim *s, struct conn *c)
{
    c->timeouts++;
    s->st.timeouts++;
    if (++c->streak > s->cfg.retry_limit && s->cfg.retry_limit) {
        give_up(s, c);
        return;
    }
    if (s->cfg.transport == ARB_TRANSPORT_GBN) {
        c->snd_nxt = c->snd_una;
    } else {
        c->lost_high = c->snd_max; /* every hole is now taken as lost */
        c->retx_cursor = c->snd_una;
    }
    c->rto_at = s->now + rto_of(s, c);
    c->pto_at = ARB_TIME_NEVER; /* the resends arm it again */
}

/* The probe timeout: a probe is due (next_psn sends it), and IRN takes
 * again, when its answer comes, every hole sent before it as lost (by send
 * time, irn_detect_loss from the cumulative ack: a resend that was lost
 * too is found as RACK finds it). */
static void on_probe(arb_sim *s, struct conn *c)
{
    c->pto_at = ARB_TIME_NEVER;
    c->probe = 1;
    c->probed = 1;
    /* nothing came back for twice the round trip: no window of this
     * connection is queued any more, and what rto_high allows for is gone;
     * the probe's answer is due within a round trip */
    arb_time pto = pto_of(s, c), wait = pto > s->tm.rto_low ? pto : s->tm.rto_low;
    if (s->now + wait < c->rto_at) c->rto_at = s->now + wait;
    c->tlp_probes++;
    s->st.tlp_probes++;
    if (s->cfg.transport == ARB_TRANSPORT_IRN) c->lost_high = c->retx_cursor = c->snd_una;
}

void rdma_on_timer(arb_sim *s, uint32_t h)
{
    struct host *ho = &s->hosts[h];
    ho->timer_at = ARB_TIME_NEVER;
    int kick = 0;
    while (ho->pend_head < ho->n_pend && s->conns[ho->pend[ho->pend_head]].start <= s->now) {
        start_conn(s, ho, ho->pend[ho->pend_head++]);
        kick = 1;
    }
    if (ho->pend_head == ho->n_pend) ho->pend_head = ho->n_pend = 0;
    for (uint32_t k = 0; k < ho->n_conns; k++) {
        struct conn *c = &s->conns[ho->conns[k]];
        if (c->rto_at <= s->now) {
            on_timeout(s, c);
            kick = 1;
        }
        if (c->pto_at <= s->now) {
            on_probe(s, c);
            kick = 1;
        }
        if (c->cc.inc_at <= s->now) {
            dcqcn_catch_up(s, c);
            kick = 1;
        }
    }
    /* A timer armed for a wake time that has since moved (an acknowledged
     * flow's timeout) finds nothing: the run's activity ended before it. */
    if (!kick) s->idle = 1;
    /* A pacing release: the pull that left the NIC idle asked for it. */
    if (s->cfg.dcqcn) kick = 1;
    rdma_arm_host(s, h);
    if (kick) net_kick_nic(s, ho->nic_port);
}

int rdma_conn_init(arb_sim *s, struct conn *c)
{
    dcqcn_init(s, c);
    if (s->cfg.transport != ARB_TRANSPORT_IRN) return 0;
    size_t bits = ((size_t)c->n_pkts + 7) / 8;
    c->sacked = arb_calloc(bits, 1);
    c->rcvd = arb_calloc(bits, 1);
    c->sent_at = arb_calloc(c->n_pkts, sizeof *c->sent_at);
    return c->sacked && c->rcvd && c->sent_at ? 0 : ARB_ENOMEM;
}

void rdma_conn_free(struct conn *c)
{
    arb_free(c->sacked);
    arb_free(c->rcvd);
    arb_free(c->sent_at);
}
