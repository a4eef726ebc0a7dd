/*
 * prefetch.h - the event loop's prefetch staging (private to src/sim):
 * what the events a little ahead in the bucket will touch, fetched in
 * stages. Only sim.c includes it: the stages are forced inline into
 * arb_sim_run, where a call per stage and event would cost more than the
 * prefetches save (tests/cli/test_prefetch.sh counts the prefetch
 * instructions left in arb_sim_run). prefetch.c turns the staging on and
 * off and clears its slots.
 */
#ifndef ARBOR_SIM_PREFETCH_H
#define ARBOR_SIM_PREFETCH_H

#include "rule.h"

/*
 * On large fabrics every port, packet and connection an event touches is a
 * cache miss, and each is found through the one before. The events a
 * little ahead in the bucket being drained are known, so their data is
 * fetched in stages, each a few events after the one whose data it reads:
 *   PF_PORT ahead: the port of the event (its rate, delay and failure
 *     flag are in it), and its far end (an arrival: the node and the port
 *     there) or the node it belongs to (an end of transmission);
 *   PF_PKT: the packet arriving off its wire and the record of the node it
 *     arrives at (routing reads it); for an end of transmission, the packet
 *     to send next and the tail of the wire (the next is linked behind it),
 *     and at a NIC its host (the longest chain: host, round robin slot,
 *     connection, its bitmap word and send-time slot);
 *   PF_ROUTE: where the arriving packet goes: at a switch, the output port
 *     cfg.route_peek names (and with PFC, the port it came in by, which
 *     counts what the switch holds); at a host, the transport connection
 *     and the host. At a NIC, the round robin's slot; with PFC, the port the
 *     next packet came in by (it lets go of the bytes held for it);
 *   PF_TAIL: at a switch, the tail of the output port's wire or queue and
 *     its first packet not yet started (the queue count may start there);
 *     at a host, the NIC's port and the connection's bitmaps; at a NIC, the
 *     connection its round robin serves next;
 *   PF_CONN: at a switch, the output port's second packet not yet started
 *     (the count may pass the first); at a host, the tails of the NIC's
 *     queue and wire (an ack is sent); at a NIC, the connection's acked
 *     bitmap word and send-time slot for the PSN it will send.
 * What a stage found (PF_PKT the host of a NIC, PF_ROUTE the rest) is kept
 * for the later stages in s->pf, by the event's position in the bucket,
 * and cleared when the event is handled. Hints only: nothing is decided on
 * them, and a wrong guess costs time.
 *
 * Prefetching costs instructions (bench/sim_instr: 578 per event at 128
 * hosts without it, 754 and 843 at 1024 and 16,384 with it; at 128 hosts
 * forced on, 12% more wall time), which pay only when
 * the data does not stay in the caches anyway: it is on while the state
 * the events touch at random (packets, ports, links, connections, hosts)
 * is larger than PF_MIN_BYTES (the L2 of a server core is 1-2 MiB).
 */
enum { PF_PORT = 16, PF_PKT = 12, PF_ROUTE = 8, PF_TAIL = 5, PF_CONN = 2 };

static SIM_ALWAYS_INLINE void pf_clear(arb_sim *s, uint32_t i)
{
    if (s->pf.node[i] != PKT_NONE) s->pf_pend[s->pf.node[i]]--;
    s->pf.node[i] = s->pf.port[i] = s->pf.host[i] = s->pf.conn[i] = PKT_NONE;
    s->pf.tok[i] = 0;
    s->pf.count[i] = 0;
}

static SIM_ALWAYS_INLINE const struct pkt *pf_pkt_at(const arb_sim *s, uint32_t i)
{
    return i == PKT_NONE ? NULL : pool_get(&s->pool, i);
}

static SIM_ALWAYS_INLINE void pf_line(const struct pkt *k)
{
    if (k) SIM_PREFETCH(k);
}

/* The packet arriving at the far end of port event a's wire, or NULL. */
static SIM_ALWAYS_INLINE const struct pkt *pf_arrival(const arb_sim *s, uint32_t a,
                                                      uint32_t port_events)
{
    if (a >= port_events || (a & 3) != EV_ARRIVE) return NULL;
    return pf_pkt_at(s, s->sp[a >> 2].wire.head);
}

/* PF_PKT for port event a. */
static SIM_ALWAYS_INLINE void pf_packet(arb_sim *s, uint32_t a, uint32_t port_events, uint32_t e)
{
    if (a >= port_events) return;
    const struct sport *sp = &s->sp[a >> 2];
    if ((a & 3) == EV_ARRIVE) {
        pf_line(pf_pkt_at(s, sp->wire.head));
        SIM_PREFETCH(&s->nodes[s->far[a >> 2].node]); /* routing reads the switch's record */
    } else if ((a & 3) == EV_TXDONE) {
        pf_line(pf_pkt_at(s, sp->q.head));
        pf_line(pf_pkt_at(s, sp->wire.tail));
        if (sp->kind == NIC_RDMA) { /* the host it pulls from: a longer chain */
            uint32_t h = s->owner[a >> 2];
            s->pf.host[e] = h;
            SIM_PREFETCH(&s->hosts[h]);
        }
    }
}

/* The lines holding a connection's first `bytes` bytes (a multiple of 64;
 * the array is line-aligned): the sender's line, or the receiver's too. */
static SIM_ALWAYS_INLINE void pf_conn(const arb_sim *s, uint32_t cid, size_t bytes)
{
    if (cid >= s->n_conns) return;
    const char *c = (const char *)&s->conns[cid];
    for (size_t off = 0; off < bytes; off += 64)
        SIM_PREFETCH(c + off);
}

/* PF_ROUTE for event a, whose slot e is clear: fills it. */
static SIM_ALWAYS_INLINE void pf_route(arb_sim *s, uint32_t a, uint32_t port_events, uint32_t e)
{
    if (a >= port_events) return;
    const struct sport *sp = &s->sp[a >> 2];
    if ((a & 3) == EV_TXDONE) {
        if (s->pf.host[e] != PKT_NONE) { /* a NIC: the slot its round robin serves */
            const struct host *ho = &s->hosts[s->pf.host[e]];
            if (ho->n_conns) SIM_PREFETCH(&ho->conns[ho->rr < ho->n_conns ? ho->rr : 0]);
        }
        const struct pkt *k = pf_pkt_at(s, sp->q.head);
        if (k && s->cfg.pfc && k->in_port < s->n_ports) SIM_PREFETCH(&s->sp[k->in_port]);
        return;
    }
    const struct pkt *k = pf_arrival(s, a, port_events);
    if (!k || k->kind == PK_ARBOR) return;
    uint32_t in_port = s->far[a >> 2].in, node = s->far[a >> 2].node;
    /* with PFC, a switch counts the bytes it holds against the port they
     * came in by */
    if (s->cfg.pfc) SIM_PREFETCH(&s->sp[in_port]);
    if (node < s->n_hosts) { /* at a host: the connection, and the host */
        s->pf.conn[e] = k->conn;
        pf_conn(s, k->conn, 128); /* lines 0 and 1 */
        if (k->dst < s->n_hosts) {
            s->pf.host[e] = k->dst;
            SIM_PREFETCH(&s->hosts[k->dst]);
        }
        return;
    }
    if (!s->cfg.route_peek) return;
    /* the routes at this switch from the event being handled on come first
     * (the slots hold events not yet handled only) */
    uint32_t out, before = s->pf_pend[node];
    uint64_t tok = 0;
    const arb_sim_route_fast *rf = s->cfg.route_fast;
    if (rf && rf->rr && rf->plain_gen == s->pf_gen) { /* round robin, inline */
        out = fast_rr(s, rf, node, k->dst, before, &tok);
    } else if (rf && rf->ecmp && rf->plain_gen == s->pf_gen) { /* ECMP, inline */
        arb_route_key key = {k->src, k->dst, k->sport, SIM_ROCE_DPORT, k->qp, 17}; /* pkt_info's */
        out = fast_ecmp(s, rf, node, &key, &tok);
    } else {
        arb_sim_pkt_info f = pkt_info(k);
        out = s->cfg.route_peek(s->cfg.peek_ctx, s, node, in_port, &f, before, &tok);
    }
    s->pf.node[e] = node;
    s->pf_pend[node]++;
    if (out >= s->n_ports) return;
    s->pf.port[e] = out;
    if (tok) { /* handed back to route with the packet, if it is still the one */
        s->pf.tok[e] = tok;
        s->pf.pkt[e] = sp->wire.head;
    }
    SIM_PREFETCH(&s->sp[out]);
}

/* PF_TAIL for event a, with its slot e. */
static SIM_ALWAYS_INLINE void pf_tail(arb_sim *s, uint32_t a, arb_time t, uint32_t e,
                                      uint32_t port_events)
{
    if (s->pf.port[e] != PKT_NONE) { /* a switch's output port */
        const struct sport *sp = &s->sp[s->pf.port[e]];
        pf_line(pf_pkt_at(s, sp->wire.tail));
        if (sp->kind != PORT_SCHED) {
            pf_line(pf_pkt_at(s, sp->q.tail));
            return;
        }
        /* its first packet not yet started, if the count will start there
         * (as the packet would be queued now) */
        const struct pkt *k = pf_arrival(s, a, port_events);
        if (k && sp->busy_until > t && !sched_bound_clears(s, sp, t, k->bytes)) {
            pf_line(pf_pkt_at(s, sp->sched.head));
            s->pf.count[e] = 1;
        }
        return;
    }
    if (s->pf.host[e] == PKT_NONE) return;
    const struct host *ho = &s->hosts[s->pf.host[e]];
    if ((a & 3) == EV_TXDONE) { /* a NIC: the connection it pulls from */
        if (ho->n_conns) {
            uint32_t cid = ho->conns[ho->rr < ho->n_conns ? ho->rr : 0];
            s->pf.conn[e] = cid;
            pf_conn(s, cid, 64); /* line 0 */
        }
        return;
    }
    SIM_PREFETCH(&s->sp[ho->nic_port]); /* an ack or NACK leaves there */
    const struct pkt *k = pf_arrival(s, a, port_events);
    if (!k || s->pf.conn[e] >= s->n_conns) return;
    const struct conn *c = &s->conns[s->pf.conn[e]];
    if (k->kind == PK_DATA && c->rcvd && k->psn < c->n_pkts)
        SIM_PREFETCH(&c->rcvd[k->psn >> 3]);
    else if (k->kind == PK_NACK && c->sacked && k->aux < c->n_pkts)
        SIM_PREFETCH(&c->sacked[k->aux >> 3]);
}

/* PF_CONN for event a, with its slot e. */
static SIM_ALWAYS_INLINE void pf_last(const arb_sim *s, uint32_t a, uint32_t e)
{
    if (s->pf.port[e] != PKT_NONE) { /* the queue count's second packet */
        const struct sport *sp = &s->sp[s->pf.port[e]];
        const struct pkt *k;
        if (s->pf.count[e] && (k = pf_pkt_at(s, sp->sched.head)) != NULL)
            pf_line(pf_pkt_at(s, k->next));
        return;
    }
    if (s->pf.host[e] == PKT_NONE) return;
    const struct host *ho = &s->hosts[s->pf.host[e]];
    if ((a & 3) == EV_TXDONE) { /* IRN: the bitmap word and send time of its next PSN */
        if (s->pf.conn[e] >= s->n_conns) return;
        const struct conn *c = &s->conns[s->pf.conn[e]];
        uint32_t psn = c->retx_cursor < c->lost_high ? c->retx_cursor : c->snd_nxt;
        if (c->sacked && psn < c->n_pkts) {
            SIM_PREFETCH(&c->sacked[psn >> 3]);
            SIM_PREFETCH(&c->sent_at[psn]);
        }
        return;
    }
    const struct sport *sp = &s->sp[ho->nic_port];
    pf_line(pf_pkt_at(s, sp->q.tail));
    pf_line(pf_pkt_at(s, sp->wire.tail));
}

/* Before the event just popped is handled: the stages for the ones ahead
 * in its bucket. */
static SIM_ALWAYS_INLINE void prefetch_ahead(arb_sim *s, uint32_t port_events)
{
    pf_clear(s, s->pf_cur); /* the event handled last */
    const struct evq *q = &s->q;
    size_t left = q->rn - q->pos; /* events after this one in the bucket */
    const struct evq_entry *run = q->run + q->pos;
    uint32_t at = (uint32_t)q->pos;
#define PF_TARGET(d) evq_target(&run[d])
    if (left > PF_PORT) {
        uint32_t a = PF_TARGET(PF_PORT);
        if (a < port_events) {
            SIM_PREFETCH(&s->sp[a >> 2]);
            /* an arrival reads its far end (node and port), an end of
             * transmission at a NIC whose NIC it is */
            if ((a & 3) == EV_TXDONE) {
                SIM_PREFETCH(&s->owner[a >> 2]);
            } else {
                SIM_PREFETCH(&s->far[a >> 2]);
            }
        }
    }
    if (left > PF_PKT) pf_packet(s, PF_TARGET(PF_PKT), port_events, (at + PF_PKT) & (PF_SLOTS - 1));
    if (left > PF_ROUTE) {
        pf_route(s, PF_TARGET(PF_ROUTE), port_events, (at + PF_ROUTE) & (PF_SLOTS - 1));
        s->pf_events++;
    }
    if (left > PF_TAIL)
        pf_tail(s, PF_TARGET(PF_TAIL), run[PF_TAIL].t, (at + PF_TAIL) & (PF_SLOTS - 1),
                port_events);
    if (left > PF_CONN) pf_last(s, PF_TARGET(PF_CONN), (at + PF_CONN) & (PF_SLOTS - 1));
#undef PF_TARGET
    s->pf_cur = (at - 1) & (PF_SLOTS - 1); /* the event about to be handled */
}

/* prefetch.c: turn prefetching on or off for the state's present size. */
void sim_pf_decide(arb_sim *s);

#endif
