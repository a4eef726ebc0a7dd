/*
 * The fabric: output queues, serialisers, wires, store-and-forward
 * switches, ECN marking and PFC. One pending arrival event per wire (its
 * head packet). A NIC, or a switch port with PFC or a DRE (which counts a
 * packet as it starts), has at most one pending end-of-transmission event,
 * armed only when something waits behind the packet on the wire; any other
 * switch port (PORT_SCHED) has none: a
 * packet it accepts is scheduled at once, to start when the ones ahead of
 * it are out, and its queue is counted up to the present when looked at.
 */
#include "rule.h"

#include <stdlib.h>
#include "base/alloc.h"

/* ---- DRE ------------------------------------------------------------ */

int net_init(arb_sim *s)
{
    if (s->cfg.dre_period == 0) return 0;
    double keep = (1.0 - s->cfg.dre_alpha) * 65536.0 + 0.5;
    s->dre_keep = keep < 0 ? 0 : keep > 65535 ? 65535 : (uint32_t)keep;
    s->dre = arb_calloc(s->n_ports, sizeof *s->dre);
    return s->dre ? 0 : ARB_ENOMEM;
}

void net_free(arb_sim *s)
{
    arb_free(s->dre);
    s->dre = NULL;
}

/* x decayed by `periods` steps of dre_keep (an empty count stays empty). */
static uint64_t dre_decay(const arb_sim *s, uint64_t x, uint64_t periods)
{
    while (periods-- && x)
        x = (x * s->dre_keep) >> 16;
    return x;
}

uint64_t net_dre(const arb_sim *s, uint32_t port)
{
    const struct dre *d = &s->dre[port];
    return dre_decay(s, d->x, s->now / s->cfg.dre_period - d->epoch) >> 8;
}

uint64_t arb_sim_port_dre(const arb_sim *s, uint32_t port)
{
    return s->dre && port < s->n_ports ? net_dre(s, port) : 0;
}

static void dre_add(arb_sim *s, uint32_t port, uint32_t bytes)
{
    struct dre *d = &s->dre[port];
    uint64_t e = s->now / s->cfg.dre_period;
    d->x = dre_decay(s, d->x, e - d->epoch) + ((uint64_t)bytes << 8);
    d->epoch = e;
}

/* ---- events --------------------------------------------------------- */

/* net_push_event, inlined where every arrival and transmission pushes. */
static SIM_ALWAYS_INLINE void push_event(arb_sim *s, arb_time t, uint32_t target)
{
    int64_t r = evq_push(&s->q, t, target);
    if (r < 0 && s->error == 0) s->error = (int)r;
}

void net_push_event(arb_sim *s, arb_time t, uint32_t target)
{
    push_event(s, t, target);
}

/* PFC's event for the port at the far end of a link: the other part's
 * when that port is across the cut. */
static void port_event(arb_sim *s, arb_time t, uint32_t port, uint32_t kind)
{
    if (s->pcut && s->pcut[port] == PCUT_IN)
        part_send_event(s, t, EV_PORT(port, kind));
    else
        net_push_event(s, t, EV_PORT(port, kind));
}

static int port_idle(const struct sport *sp, arb_time now)
{
    return !sp->txdone_armed && sp->busy_until <= now && !sp->paused;
}

/* PFC: an ingress port of a switch lets go of `bytes`. */
static void release_held(arb_sim *s, uint32_t in_port, uint32_t bytes)
{
    if (in_port == PKT_NONE || !s->cfg.pfc) return;
    struct sport *in = &s->sp[in_port];
    if (in->kind != PORT_EVENTS) return; /* only a switch port with PFC counts (pfc union) */
    in->pfc.held_bytes -= bytes;
    if (in->pfc.pause_sent && in->pfc.held_bytes <= s->cfg.pfc_xon) {
        in->pfc.pause_sent = 0;
        port_event(s, s->now + s->ports[in_port].delay, s->ports[in_port].peer_port, EV_RESUME);
    }
}

/* The next packet a port sends: queued first (acks ahead of data at a
 * NIC), then, at a NIC, one pulled from the host's connections. */
static uint32_t next_packet(arb_sim *s, uint32_t port)
{
    struct sport *sp = &s->sp[port];
    uint32_t i = plist_pop(&s->pool, &sp->q);
    if (i != PKT_NONE) {
        struct pkt *k = pool_get(&s->pool, i);
        sp->q_bytes -= k->bytes;
        release_held(s, k->in_port, k->bytes);
        return i;
    }
    if (sp->kind >= NIC_HOST) {
        i = plist_pop(&s->pool, &sp->arb_tx);
        if (i != PKT_NONE || sp->kind != NIC_RDMA) return i;
        return rdma_pull(s, s->owner[port]);
    }
    return PKT_NONE;
}

/* May a NIC have more to send once its packet is out? Arbor packets
 * waiting, or transport connections (rdma_pull decides, and paces); a NIC
 * with neither is kicked when its host hands it something. A host that
 * never had connections is not looked at. */
static int nic_may_send(const arb_sim *s, const struct sport *sp, uint32_t port)
{
    if (sp->arb_tx.head != PKT_NONE) return 1;
    if (sp->kind != NIC_RDMA) return 0;
    const struct host *ho = &s->hosts[s->owner[port]];
    return ho->n_conns > 0 || ho->pend_head < ho->n_pend;
}

/* arb_time_tx(bytes, rate), remembered in a small direct-mapped table. */
static arb_time tx_time(const arb_sim *s, uint32_t bytes, uint64_t rate)
{
    uint32_t h = ((bytes ^ (uint32_t)(rate >> 27)) * 0x9E3779B1u) >> (32 - 6);
    struct tx_memo *m = &s->txm[h & (TX_MEMO - 1)];
    if (m->rate != rate || m->bytes != bytes) {
        m->rate = rate;
        m->bytes = bytes;
        m->ps = arb_time_tx(bytes, rate);
    }
    return m->ps;
}

/* The serialisation of a frame of `bytes` on link lk: a product when the
 * rate allows (slink.ps_per_byte), else remembered (tx_time). */
static SIM_ALWAYS_INLINE arb_time link_tx(const arb_sim *s, const struct slink *lk, uint32_t bytes)
{
    return lk->ps_per_byte ? bytes * lk->ps_per_byte : tx_time(s, bytes, lk->rate);
}

/* Does the n-th packet port `port` sends meet an event of probability p
 * on its link? A function of the seed, a salt per kind of event, the port
 * and n alone (splitmix64's finaliser), so the draws do not depend on the
 * order in which ports are handled, nor on each other. */
static int link_draw(const arb_sim *s, uint64_t salt, uint32_t port, uint64_t n, double p)
{
    uint64_t z = s->cfg.seed ^ salt;
    z += (uint64_t)port * UINT64_C(0x9E3779B97F4A7C15) + n * UINT64_C(0xD1B54A32D192ED03);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53 < p;
}

#define SALT_LOSS UINT64_C(0x6C6F73735F726E67)    /* "loss_rng" */
#define SALT_DUP UINT64_C(0x6475705F5F726E67)     /* "dup__rng" */
#define SALT_REORDER UINT64_C(0x72656F72645F726E) /* "reord_rn" */
#define SALT_ECN UINT64_C(0x65636E5F6D61726B)     /* "ecn_mark" */

/* The link's loss, duplication and reordering for the n-th packet of port. */
static SIM_ALWAYS_INLINE void link_fate(const arb_sim *s, uint32_t port, uint64_t n,
                                        const struct slink *lk, struct pkt *k)
{
    if (lk->loss > 0 && link_draw(s, SALT_LOSS, port, n, lk->loss)) k->flags |= PF_LOST;
    if (lk->dup > 0 && link_draw(s, SALT_DUP, port, n, lk->dup)) k->flags |= PF_DUP;
    if (lk->reorder > 0 && link_draw(s, SALT_REORDER, port, n, lk->reorder)) k->flags |= PF_LATE;
}

/* Port `port` starts sending packet i at `start` (now, or for PORT_SCHED
 * when the packets ahead of it are out) on link lk. `plain` (a constant):
 * lk->odd is 0, so no tap, DRE, fate or cut is looked at. */
static SIM_ALWAYS_INLINE void transmit_as(arb_sim *s, uint32_t port, uint32_t i, arb_time start,
                                          const struct slink *lk, int plain)
{
    struct sport *sp = &s->sp[port];
    struct pkt *k = pool_get(&s->pool, i);
    arb_time end = start + link_tx(s, lk, k->bytes);
    arb_time tail_t = sp->busy_until + lk->delay; /* the wire's last packet arrives then */
    sp->busy_until = end;
    if (!plain && s->cfg.tap) {
        arb_sim_pkt_info f = pkt_info(k);
        f.index = i;
        s->cfg.tap(s->cfg.tap_ctx, s, port, &f, start);
    }
    sp->tx_bytes += k->bytes;
    uint8_t odd = plain ? 0 : lk->odd;
    if (odd & LK_FATE) link_fate(s, port, sp->tx_pkts, lk, k);
    sp->tx_pkts++;
    if (!plain && s->dre) dre_add(s, port, k->bytes);
    s->st.packet_hops++;
    k->t = end + lk->delay;
    if (odd & LK_CUT) {
        /* across the cut, the receiving part has the arrival events (this
         * part lets the packet go at the end of the window it arrives in) */
    } else if (sp->wire.head == PKT_NONE) {
        net_push_event(s, k->t, EV_PORT(port, EV_ARRIVE));
    } else { /* written, not read: the tail's line need not be waited for */
        arb_time gap = k->t - tail_t;
        pool_get(&s->pool, sp->wire.tail)->gap = gap < PKT_GAP_FAR ? (uint32_t)gap : PKT_GAP_FAR;
    }
    plist_push(&s->pool, &sp->wire, i);
    if (odd & LK_CUT) part_send_pkt(s, port, i);
    /* Something to send after this one? */
    if (sp->q.head != PKT_NONE || (sp->kind >= NIC_HOST && nic_may_send(s, sp, port))) {
        sp->txdone_armed = 1;
        push_event(s, end, EV_PORT(port, EV_TXDONE));
    }
}

/* transmit on a link with something odd (slink.odd), out of line. */
static void transmit_odd(arb_sim *s, uint32_t port, uint32_t i, arb_time start,
                         const struct slink *lk)
{
    transmit_as(s, port, i, start, lk, 0);
}

/* Port `port` starts sending packet i at `start`; inlined in its callers,
 * the per-hop path, for a plain link. */
static SIM_ALWAYS_INLINE void transmit(arb_sim *s, uint32_t port, uint32_t i, arb_time start)
{
    const struct slink *lk = &s->lk[s->sp[port].link];
    if (lk->odd)
        transmit_odd(s, port, i, start, lk);
    else
        transmit_as(s, port, i, start, lk, 1);
}

/* Port `port` starts sending the packet next_packet picks, if any. */
static void start_tx(arb_sim *s, uint32_t port)
{
    if (s->sp[port].failed) return; /* a dead link sends nothing */
    uint32_t i = next_packet(s, port);
    if (i != PKT_NONE) transmit(s, port, i, s->now);
}

/* PORT_SCHED: the packets that have started leave the queue's counts.
 * Each packet is passed once; its start is its arrival less the delay and
 * its serialisation. For an event, a packet starting at this very instant
 * is still queued (as if a port moved on only after every arrival of the
 * instant); between runs, every packet starting up to the end of the last
 * run has (every event up to there is done). */
static void sched_catch_up(const arb_sim *s, struct sport *sp)
{
    uint32_t i = sp->sched.head;
    if (i == PKT_NONE) return;
    const struct slink *lk = &s->lk[sp->link];
    arb_time upto = s->now; /* started: start < upto */
    if (!s->in_run) {
        arb_time h = s->horizon > s->now ? s->horizon : s->now;
        upto = h == ARB_TIME_NEVER ? h : h + 1;
    }
    do {
        const struct pkt *k = pool_get(&s->pool, i);
        if (k->t - lk->delay - link_tx(s, lk, k->bytes) >= upto) break;
        sp->q_bytes -= k->bytes;
        sp->sched.pkts--;
        i = k->next;
        /* The next one starts as this one ends (arrival less the delay):
         * if that is not yet, it need not be looked at (a cache miss). */
        if (k->t - lk->delay >= upto) break;
    } while (i != PKT_NONE);
    sp->sched.head = i;
}

/* PORT_SCHED, before queueing `bytes`: q_bytes may still count packets
 * that have started (it is brought up to date only when that could change
 * a decision). 1: a bound on the queue shows that the packet is neither
 * dropped, nor marked, nor makes a new deepest queue, and q_bytes is left
 * as it is; 0: q_bytes is now exact. */
static inline int sched_clear(const arb_sim *s, struct sport *sp, uint32_t bytes)
{
    if (sp->busy_until <= s->now) { /* idle: everything scheduled has started */
        sp->q_bytes = 0;
        sp->sched.pkts = 0;
        sp->sched.head = PKT_NONE;
        return 0;
    }
    if (sched_bound_clears(s, sp, s->now, bytes)) return 1;
    sched_catch_up(s, sp);
    return 0;
}

/* PORT_SCHED: packet i, accepted by the queue, starts when the port is
 * free; until then it counts as queued. `exact`: q_bytes is, and the
 * deepest queue is checked (sched_clear). */
static SIM_ALWAYS_INLINE void sched_send(arb_sim *s, struct sport *sp, uint32_t port, uint32_t i,
                                         uint32_t bytes, int exact)
{
    uint32_t q = sp->q_bytes + bytes;
    if (exact && q > sp->max_q) sp->max_q = q; /* queued, if only for no time */
    arb_time start = sp->busy_until > s->now ? sp->busy_until : s->now;
    transmit(s, port, i, start);
    if (start > s->now) {
        sp->q_bytes = q;
        if (sp->sched.pkts++ == 0) sp->sched.head = i;
    }
}

uint32_t net_queue_bytes(const arb_sim *s, uint32_t port)
{
    struct sport *sp = &s->sp[port];
    if (sp->kind == PORT_SCHED) sched_catch_up(s, sp);
    return sp->q_bytes;
}

uint64_t arb_sim_port_load(const arb_sim *s, uint32_t port)
{
    return net_queue_bytes(s, port) + (s->sp[port].paused ? s->cfg.queue_bytes : 0);
}

void net_sent(const arb_sim *s, uint32_t port, uint64_t *bytes, uint64_t *pkts)
{
    struct sport *sp = &s->sp[port];
    *bytes = sp->tx_bytes;
    *pkts = sp->tx_pkts;
    if (sp->kind == PORT_SCHED) { /* scheduled, not started: still queued */
        sched_catch_up(s, sp);
        *bytes -= sp->q_bytes;
        *pkts -= sp->sched.pkts;
    }
}

void net_nic_send(arb_sim *s, uint32_t port, uint32_t i)
{
    struct sport *sp = &s->sp[port];
    if (sp->q.head == PKT_NONE && sp->arb_tx.head == PKT_NONE && port_idle(sp, s->now) &&
        !sp->failed) {
        transmit(s, port, i, s->now); /* what next_packet would pick */
        return;
    }
    plist_push(&s->pool, &sp->arb_tx, i);
    net_kick_nic(s, port);
}

void net_kick_nic(arb_sim *s, uint32_t port)
{
    struct sport *sp = &s->sp[port];
    if (port_idle(sp, s->now))
        start_tx(s, port);
    else if (!sp->txdone_armed && !sp->paused) {
        sp->txdone_armed = 1;
        net_push_event(s, sp->busy_until, EV_PORT(port, EV_TXDONE));
    }
}

void net_on_txdone(arb_sim *s, uint32_t port)
{
    struct sport *sp = &s->sp[port];
    sp->txdone_armed = 0;
    if (!sp->paused) start_tx(s, port);
}

static SIM_COLD void drop(arb_sim *s, uint32_t port, uint32_t i)
{
    struct pkt *k = pool_get(&s->pool, i);
    s->st.drops++;
    s->st.drop_bytes += k->bytes;
    if (port != PKT_NONE) s->spc[port].drops++;
    if (k->kind == PK_ARBOR)
        arbor_queue_drop(s, port, i);
    else
        pool_release(&s->pool, i);
}

/* RED-style marking on the queue depth found on arrival. In the local
 * order the draw is the port's own (link_draw on its count of draws), so
 * that it depends on nothing another part of a partitioned fabric does. */
static void ecn_mark(arb_sim *s, uint32_t port, struct sport *sp, struct pkt *k)
{
    uint32_t q = sp->q_bytes;
    if (!(k->flags & PF_ECT) || q <= s->cfg.ecn_kmin) return;
    int mark = q >= s->cfg.ecn_kmax;
    if (!mark) {
        double p = s->cfg.ecn_pmax * (double)(q - s->cfg.ecn_kmin) /
                   (double)(s->cfg.ecn_kmax - s->cfg.ecn_kmin);
        mark = s->cfg.local_order ? link_draw(s, SALT_ECN, port, s->spc[port].ecn_draws++, p)
                                  : arb_rng_double(&s->rng) < p;
    }
    if (mark && !(k->flags & PF_CE)) {
        k->flags |= PF_CE;
        s->st.ecn_marks++;
    }
}

/* Does the queue of `port` take packet i (with q_bytes exact)? Dropped
 * if not; marked (ECN) as it deserves if so. */
static SIM_ALWAYS_INLINE int admit(arb_sim *s, uint32_t port, struct sport *sp, uint32_t i,
                                   struct pkt *k)
{
    if ((uint64_t)sp->q_bytes + k->bytes > s->cfg.queue_bytes || sp->failed) {
        drop(s, port, i);
        return 0;
    }
    if (s->cfg.ecn) ecn_mark(s, port, sp, k);
    return 1;
}

/* net_enqueue, inlined in the switch's forwarding (the per-hop path). */
static SIM_ALWAYS_INLINE void enqueue(arb_sim *s, uint32_t port, uint32_t i)
{
    struct sport *sp = &s->sp[port];
    struct pkt *k = pool_get(&s->pool, i);
    if (sp->kind == PORT_SCHED) { /* one call of sched_send: inlined */
        int exact = !sched_clear(s, sp, k->bytes) || sp->failed;
        if (exact && !admit(s, port, sp, i, k)) return;
        sched_send(s, sp, port, i, k->bytes, exact);
        return;
    }
    if (!admit(s, port, sp, i, k)) return;
    plist_push(&s->pool, &sp->q, i);
    sp->q_bytes += k->bytes;
    if (sp->q_bytes > sp->max_q) sp->max_q = sp->q_bytes;
    if (k->in_port != PKT_NONE && s->cfg.pfc && s->sp[k->in_port].kind == PORT_EVENTS) {
        struct sport *in = &s->sp[k->in_port];
        in->pfc.held_bytes += k->bytes;
        if (!in->pfc.pause_sent && in->pfc.held_bytes > s->cfg.pfc_xoff) {
            in->pfc.pause_sent = 1;
            s->st.pfc_pauses++;
            port_event(s, s->now + s->ports[k->in_port].delay, s->ports[k->in_port].peer_port,
                       EV_PAUSE);
        }
    }
    if (port_idle(sp, s->now))
        start_tx(s, port);
    else if (!sp->txdone_armed && !sp->paused) {
        sp->txdone_armed = 1;
        net_push_event(s, sp->busy_until, EV_PORT(port, EV_TXDONE));
    }
}

void net_enqueue(arb_sim *s, uint32_t port, uint32_t i)
{
    enqueue(s, port, i);
}

void net_on_pause(arb_sim *s, uint32_t port, int pause)
{
    struct sport *sp = &s->sp[port];
    if (pause) {
        if (!sp->paused) {
            sp->paused = 1;
            s->spc[port].paused_at = s->now;
        }
        return;
    }
    if (!sp->paused) return;
    sp->paused = 0;
    s->spc[port].paused_ps += s->now - s->spc[port].paused_at;
    if (sp->busy_until <= s->now && !sp->txdone_armed)
        start_tx(s, port);
    else if (!sp->txdone_armed) {
        sp->txdone_armed = 1;
        net_push_event(s, sp->busy_until, EV_PORT(port, EV_TXDONE));
    }
}

/* Switch node's decision for packet i by cfg.route, with the packet's
 * view and the guess made for it here, if any; then cfg.inband's word for
 * a routable decision. Out of line: the rule's path (rule_hop) needs no
 * view and no frame of this size. */
static SIM_NOINLINE uint32_t route_call(arb_sim *s, uint32_t node, uint32_t in_port, uint32_t i)
{
    struct pkt *k = pool_get(&s->pool, i);
    arb_sim_pkt_info f = pkt_info(k);
    uint32_t e = s->pf_cur; /* the guess made for this packet here, if any */
    if (s->pf.tok[e] && s->pf.pkt[e] == i && s->pf.node[e] == node && *s->topo_gen == s->pf_gen) {
        f.guess = s->pf.port[e];
        f.token = s->pf.tok[e];
    }
    uint32_t out = s->cfg.route(s->cfg.route_ctx, s, node, in_port, &f, s->now);
    if (s->cfg.inband && out < s->n_ports && !s->sp[out].failed)
        k->lb = s->cfg.inband(s->cfg.inband_ctx, s, node, in_port, out, &f, s->now);
    return out;
}

static void forward(arb_sim *s, uint32_t node, uint32_t in_port, uint32_t i)
{
    uint32_t out = s->rule ? rule_hop(s, node, pool_get(&s->pool, i), i) : ARB_TOPO_NONE;
    if (out == ARB_TOPO_NONE) out = route_call(s, node, in_port, i);
    if (out >= s->n_ports || s->sp[out].failed) { /* (ARB_TOPO_NONE among them) */
        if (out == ARB_SIM_ROUTE_ENOMEM && !s->error) s->error = ARB_ENOMEM;
        s->st.unroutable++;
        pool_release(&s->pool, i);
        return;
    }
    enqueue(s, out, i); /* k->in_port was set on arrival */
}

static SIM_ALWAYS_INLINE void deliver(arb_sim *s, uint32_t port, uint32_t node, uint32_t in_port,
                                      uint32_t i);
static void impaired(arb_sim *s, uint32_t port, uint32_t node, uint32_t in_port, uint32_t i);

static SIM_ALWAYS_INLINE void land(arb_sim *s, uint32_t port, uint32_t i);

/* Packet k, just popped off a wire: the arrival of the one now at the
 * wire's head (there is one), which then gets its arrival event
 * (wire_next). */
static SIM_ALWAYS_INLINE arb_time wire_next_t(const arb_sim *s, const struct sport *sp,
                                              const struct pkt *k)
{
    return k->gap != PKT_GAP_FAR ? k->t + k->gap : pool_get(&s->pool, sp->wire.head)->t;
}

static SIM_ALWAYS_INLINE void wire_next(arb_sim *s, const struct sport *sp, uint32_t port,
                                        const struct pkt *k)
{
    if (sp->wire.head != PKT_NONE) push_event(s, wire_next_t(s, sp, k), EV_PORT(port, EV_ARRIVE));
}

/* PORT_SCHED: packet i, just popped off the wire, is no longer counted
 * among those not yet started. */
static SIM_ALWAYS_INLINE void sched_popped(struct sport *sp, const struct pkt *k, uint32_t i)
{
    if (sp->kind == PORT_SCHED && sp->sched.head == i) {
        sp->q_bytes -= k->bytes;
        sp->sched.head = --sp->sched.pkts ? sp->wire.head : PKT_NONE;
    }
}

/* A partitioned run's arrival off a wire across the cut, at the receiving
 * part (the sending part has no arrival event: it lets the packet go at the
 * end of the window it arrives in, net_cut_gone): the packet lands, counted
 * live from here (part.c, receive_pkt), and the next on the wire, if any,
 * gets its arrival event, as in one process. */
static SIM_COLD void arrive_cut(arb_sim *s, uint32_t port)
{
    struct sport *sp = &s->sp[port];
    uint32_t i = plist_pop(&s->pool, &sp->wire);
    if (i == PKT_NONE) return;
    wire_next(s, sp, port, pool_get(&s->pool, i));
    s->pool.live++; /* as it was live before the event (moved, not made) */
    s->part_live0++;
    if (s->pool.live > s->pool.peak) s->pool.peak = s->pool.live;
    land(s, port, i);
}

void net_cut_put(arb_sim *s, uint32_t port, uint32_t i)
{
    struct sport *sp = &s->sp[port];
    const struct pkt *k = pool_get(&s->pool, i);
    if (sp->wire.head == PKT_NONE) {
        net_push_event(s, k->t, EV_PORT(port, EV_ARRIVE));
    } else { /* written, not read (busy_until has its arrival) */
        arb_time gap = k->t - sp->busy_until;
        pool_get(&s->pool, sp->wire.tail)->gap = gap < PKT_GAP_FAR ? (uint32_t)gap : PKT_GAP_FAR;
    }
    sp->busy_until = k->t;
    plist_push(&s->pool, &sp->wire, i);
}

/* sched.head, between net_cut_gone and net_cut_head: the first packet kept */
#define SCHED_NEXT (PKT_NONE - 1)

void net_cut_gone(arb_sim *s, const struct cut_sent *e, uint8_t *mark, size_t *marked)
{
    uint32_t port = e->port & ~CUT_ARBOR, i = e->i;
    struct sport *sp = &s->sp[port];
    if (sp->kind == PORT_SCHED && (sp->sched.head == i || sp->sched.head == SCHED_NEXT)) {
        sp->q_bytes -= e->bytes; /* counted as not yet started */
        sp->sched.head = --sp->sched.pkts ? SCHED_NEXT : PKT_NONE;
    }
    /* what has arrived is a prefix of the wire: its head becomes the first
     * packet kept (the port marked), or none (the tail went too) */
    sp->wire.head = PKT_NONE;
    uint8_t m = sp->wire.tail != i;
    if (m != mark[port]) {
        *marked = m ? *marked + 1 : *marked - 1;
        mark[port] = m;
    }
    if (!m) sp->wire.tail = PKT_NONE;
    if (e->port & CUT_ARBOR)
        arbor_pkt_release(s, i); /* and its payload buffer */
    else
        pool_release(&s->pool, i);
}

void net_cut_head(arb_sim *s, const struct cut_sent *e, uint8_t *mark, size_t *marked)
{
    uint32_t port = e->port & ~CUT_ARBOR;
    if (!mark[port]) return;
    mark[port] = 0;
    --*marked;
    struct sport *sp = &s->sp[port];
    sp->wire.head = e->i;
    if (sp->kind == PORT_SCHED && sp->sched.head == SCHED_NEXT) sp->sched.head = e->i;
}

/* An arrival whose next arrival event (at `next`) takes the event
 * queue's slow path: out of line, so that net_on_arrive makes no call it
 * returns from, and needs no frame. */
static SIM_NOINLINE void land_after_push(arb_sim *s, uint32_t port, uint32_t i, arb_time next)
{
    push_event(s, next, EV_PORT(port, EV_ARRIVE));
    land(s, port, i);
}

void net_on_arrive(arb_sim *s, uint32_t port)
{
    if (s->pcut && s->pcut[port]) {
        arrive_cut(s, port);
        return;
    }
    struct sport *sp = &s->sp[port];
    uint32_t i = plist_pop(&s->pool, &sp->wire);
    if (i == PKT_NONE) return;
    const struct pkt *k = pool_get(&s->pool, i);
    sched_popped(sp, k, i);
    if (sp->wire.head != PKT_NONE) { /* wire_next, its push tried inline */
        arb_time next = wire_next_t(s, sp, k);
        if (!evq_push_try(&s->q, next, EV_PORT(port, EV_ARRIVE))) {
            land_after_push(s, port, i, next);
            return;
        }
    }
    land(s, port, i);
}

/* Packet i, off the wire of `port`, reaches the far end. */
static SIM_ALWAYS_INLINE void land(arb_sim *s, uint32_t port, uint32_t i)
{
    struct pkt *k = pool_get(&s->pool, i);
    uint32_t in_port = s->far[port].in, node = s->far[port].node;
    k->in_port = in_port; /* the port of `node` it came in by */
    if (k->flags & PF_LOST) {
        s->st.drops++;
        s->st.lost++;
        s->st.drop_bytes += k->bytes;
        if (k->kind == PK_ARBOR)
            arbor_pkt_lost(s, port, node, i);
        else
            pool_release(&s->pool, i);
        return;
    }
    if (k->flags & (PF_DUP | PF_LATE)) {
        impaired(s, port, node, in_port, i);
        return;
    }
    deliver(s, port, node, in_port, i);
}

/* Packet i, off the wire of `port`, to `node`, which it enters by in_port:
 * inlined in the arrival, the per-hop path (a call less there). */
static SIM_ALWAYS_INLINE void deliver(arb_sim *s, uint32_t port, uint32_t node, uint32_t in_port,
                                      uint32_t i)
{
    if (pool_get(&s->pool, i)->kind == PK_ARBOR) {
        if (node < s->n_hosts)
            arbor_host_recv(s, port, node, i);
        else
            arbor_switch(s, port, node, in_port, i);
    } else if (node < s->n_hosts)
        rdma_on_packet(s, node, i);
    else
        forward(s, node, in_port, i);
}

/* deliver, out of line: for the rarer paths (duplicates, reordering). */
static void deliver_call(arb_sim *s, uint32_t port, uint32_t node, uint32_t in_port, uint32_t i)
{
    deliver(s, port, node, in_port, i);
}

/* A copy of packet i as the link delivers it a second time, or PKT_NONE
 * (out of memory: fatal). */
static uint32_t link_copy(arb_sim *s, uint32_t port, uint32_t i)
{
    if (pool_get(&s->pool, i)->kind == PK_ARBOR) return arbor_pkt_dup(s, port, i);
    uint32_t c = pool_alloc_raw(&s->pool);
    if (c == PKT_NONE) {
        if (!s->error) s->error = ARB_ENOMEM;
        return PKT_NONE;
    }
    *pool_get(&s->pool, c) = *pool_get(&s->pool, i);
    return c;
}

/* Hold packet i where it arrived, for reorder_delay: the late list is in
 * arrival order, and every packet on it waits the same, so it stays in
 * order of release. */
static void hold_late(arb_sim *s, uint32_t port, uint32_t i)
{
    struct plist *l = &s->spc[port].late;
    struct pkt *k = pool_get(&s->pool, i);
    k->t = s->now + s->cfg.reorder_delay;
    if (l->head == PKT_NONE) net_push_event(s, k->t, (s->n_ports << 2) + 2 * s->n_hosts + port);
    plist_push(&s->pool, l, i);
    s->st.reordered++;
}

/* A packet the link duplicates (the copy follows it at once) or reorders
 * (held back; its copy, if any, is not). */
static void impaired(arb_sim *s, uint32_t port, uint32_t node, uint32_t in_port, uint32_t i)
{
    struct pkt *k = pool_get(&s->pool, i);
    int dup = (k->flags & PF_DUP) != 0, late = (k->flags & PF_LATE) != 0;
    k->flags &= (uint8_t) ~(PF_DUP | PF_LATE);
    uint32_t c = dup ? link_copy(s, port, i) : PKT_NONE;
    if (c != PKT_NONE) s->st.duplicated++;
    if (late)
        hold_late(s, port, i);
    else
        deliver_call(s, port, node, in_port, i);
    if (c != PKT_NONE) deliver_call(s, port, node, in_port, c);
}

void net_on_late(arb_sim *s, uint32_t port)
{
    struct plist *l = &s->spc[port].late;
    uint32_t i = plist_pop(&s->pool, l);
    if (i == PKT_NONE) return;
    if (l->head != PKT_NONE) {
        arb_time next = pool_get(&s->pool, l->head)->t;
        net_push_event(s, next, (s->n_ports << 2) + 2 * s->n_hosts + port);
    }
    deliver_call(s, port, s->far[port].node, s->far[port].in, i);
}

/* ---- failures during a run ------------------------------------------- */

/* Drop what a failed port holds: its queue now, its wire on arrival. */
static void flush_failed_port(arb_sim *s, uint32_t port)
{
    struct sport *sp = &s->sp[port];
    uint32_t i;
    while ((i = plist_pop(&s->pool, &sp->q)) != PKT_NONE) {
        struct pkt *k = pool_get(&s->pool, i);
        sp->q_bytes -= k->bytes;
        release_held(s, k->in_port, k->bytes);
        drop(s, port, i);
    }
    for (i = sp->wire.head; i != PKT_NONE; i = pool_get(&s->pool, i)->next)
        pool_get(&s->pool, i)->flags |= PF_LOST;
}

/* Does this part send on port p (every port when whole)? */
static int sends_here(const arb_sim *s, uint32_t p)
{
    return !s->pcut || s->pcut[p] == PCUT_LOCAL || s->pcut[p] == PCUT_OUT;
}

/* A host NIC of this part whose link came back: what it kept goes out again. */
static int nic_back(const arb_sim *s, uint32_t p)
{
    return s->sp[p].kind >= NIC_HOST && s->sp[p].failed && !s->ports[p].failed && sends_here(s, p);
}

void arb_sim_fabric_changed(arb_sim *s)
{
    sim_to_run_end(s); /* the change's time, though the fabric was idle before it */
    sim_forget_guesses(s);
    uint32_t live = s->pool.live, n_up = 0, *up = NULL;
    for (uint32_t p = 0; p < s->n_ports; p++)
        n_up += nic_back(s, p);
    if (n_up && !(up = arb_malloc(n_up * sizeof *up)) && !s->error)
        s->error = ARB_ENOMEM; /* (a part goes on: the others wait in part_changed) */
    n_up = 0;
    for (uint32_t p = 0; up && p < s->n_ports; p++)
        if (nic_back(s, p)) up[n_up++] = p;
    int rc = sim_links(s); /* failures, rates and delays */
    if (rc < 0 && !s->error) s->error = rc;
    for (uint32_t p = 0; p < s->n_ports; p++)
        if (s->ports[p].failed) flush_failed_port(s, p);
    for (uint32_t k = 0; rc == 0 && k < n_up; k++)
        if (!s->sp[up[k]].paused) net_kick_nic(s, up[k]);
    arb_free(up);
    if (s->part) part_changed(s, live); /* the lookahead; what the flush sent across */
}
