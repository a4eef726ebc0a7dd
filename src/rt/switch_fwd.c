/* The software switch's data path (src/rt/switch_int.h): a datagram in,
 * a tree's packets through the switch engine, what it decided out; the
 * switch's own re-credits; ECN marking. */
#define _GNU_SOURCE
#include "rt/switch_int.h"

#include <string.h>

/* One Arbor packet in flight through the switch. */
struct fwd {
    struct sjob *j;
    rt_hdr rh;
    arb_hdr h;
    const uint8_t *payload;
    size_t plen;
    int copy;     /* payload must be copied (an aggregate) */
    uint32_t agg; /* the aggregator of its channel (its owner's) */
};

/* Send f out of local port p: to the rank or switch at its far end. */
static void send_port(struct sw_worker *wk, const struct fwd *f, uint32_t p)
{
    arb_rt_switch *s = wk->s;
    const struct sockaddr_in *to = NULL;
    uint32_t src = 0;
    int to_switch = 0;
    if (p < s->radix) {
        uint32_t peer = s->ports[s->nd->first_port + p].peer;
        if (peer < arb_topo_n_hosts(s->t)) {
            uint32_t r = peer - f->j->base;
            if (peer >= f->j->base && r < f->j->size && f->j->joined[r]) {
                to = &f->j->addr[r];
                src = f->j->local[r];
            }
        } else if (s->port_peer[p] >= 0) {
            to = &s->peer_addr[s->port_peer[p]];
            to_switch = 1;
            src = rt_sw_peer_local(s, (uint32_t)s->port_peer[p]);
        }
    }
    if (!to) {
        wk->st.unroutable++;
        return;
    }
    size_t hl = 0;
    rt_hdr_put(wk->head, &f->rh);
    if (arb_hdr_encode(&f->h, f->plen, wk->head + RT_HDR_LEN, ARB_HDR_LEN_LONG, &hl) < 0) {
        wk->st.undecodable++;
        return;
    }
    wk->tx.by_channel = to_switch; /* a peer switch may steer by channel */
    rt_tx_src(&wk->tx, to, src, wk->head, RT_HDR_LEN + hl, f->payload, f->plen, f->copy);
}

/* Unicast toward host `host`: down toward it when it is below, else up. */
static void unicast(struct sw_worker *wk, const struct fwd *f, uint32_t host)
{
    arb_rt_switch *s = wk->s;
    if (arb_pgft_below(s->g, s->nd, host)) {
        send_port(wk, f, arb_pgft_down_port(s->g, s->nd, host) - s->nd->first_port);
        return;
    }
    if (s->nd->n_up == 0) {
        wk->st.unroutable++;
        return;
    }
    send_port(wk, f, s->nd->n_down); /* up port 0 */
}

/* The aggregator's channel identity: job, tree (subchannel), channel and
 * message, each in its own bits (a job's channels and subchannels are
 * fewer than 2^16 and 2^8). */
static uint64_t chan_id(const struct fwd *f)
{
    return (uint64_t)f->j->id << 32 | (uint64_t)(f->rh.sub & 0xFF) << 24 |
           (uint64_t)f->rh.channel << 8 | f->h.message_id;
}

static uint32_t local(const arb_rt_switch *s, uint32_t global_port)
{
    return global_port == ARB_PLAN_NONE ? NONE : global_port - s->nd->first_port;
}

/* A seeded slot's aggregate, the offset's whole result, down to the
 * channel's members as its tail result, from the switch (act->down). */
static void send_down(struct sw_worker *wk, const struct fwd *f, const arb_switch_action *act)
{
    struct fwd g = *f;
    g.h = act->down_hdr;
    g.rh.dst_kind = 1;
    g.rh.dst = 0;
    g.rh.flags = RT_F_SWITCH;
    g.rh.src = RT_SWITCH_RANK;
    for (uint32_t c = 0; c < act->n_ports; c++)
        send_port(wk, &g, local(wk->s, act->ports[c]));
    wk->st.results_down++;
    if (act->n_ports > 1) wk->st.copies += act->n_ports - 1;
}

/* A packet of a tree (a credit, or a normal request climbing), through the
 * switch engine: what it decided, sent. */
static void on_tree(struct sw_worker *wk, struct fwd *f, const arb_plan_entry *e, uint32_t in,
                    uint32_t resp_host, arb_time now)
{
    arb_rt_switch *s = wk->s;
    arb_switch_packet pk = {.hdr = &f->h,
                            .payload = f->payload,
                            .payload_len = f->plen,
                            .channel = chan_id(f),
                            .port = in + s->nd->first_port,
                            .ce = (f->rh.flags & RT_F_CE) != 0};
    int credit = f->h.packet_type == ARB_PT_RESPONSE;
    if (!credit) wk->st.requests++;
    arb_switch_action act;
    if (arb_switch_recv(wk->eng, s->aggs[f->agg], f->j->plan, e, &pk, now, &act) < 0) {
        wk->st.agg_drops++;
        return;
    }
    if (credit && (act.agg_called || act.error)) wk->st.credits++;
    if (act.agg_called && act.agg.reason == ARB_AGG_R_ADOPT) wk->st.adoptions++;
    if (act.agg_called && act.agg.reason == ARB_AGG_R_REPLAY) wk->st.replays++;
    if (act.error || (act.agg_called &&
                      ((credit && act.verb == ARB_SWITCH_DROP) || act.agg.action == ARB_AGG_DROP)))
        wk->st.agg_drops++;
    if (act.made) {
        if (credit) f->rh.dst_kind = 0; /* an earlier attempt's aggregate in its place */
        f->payload = pk.payload;
        f->plen = pk.payload_len;
        f->copy = pk.payload != NULL; /* an aggregate: in the aggregator's slot */
        f->rh.flags = (uint8_t)(RT_F_SWITCH | (pk.ce ? RT_F_CE : 0));
        f->rh.src = RT_SWITCH_RANK;
        if (act.agg.action == ARB_AGG_EMIT_MISS)
            wk->st.agg_miss++;
        else
            wk->st.aggregates++;
    } else {
        if (act.aggregated) f->rh.flags |= RT_F_SWITCH;
        f->payload = pk.payload; /* a credit's seed stays in the slot */
        f->plen = pk.payload_len;
    }
    if (act.down) send_down(wk, f, &act);
    switch (act.verb) {
    case ARB_SWITCH_UP:
        send_port(wk, f, local(s, act.port));
        return;
    case ARB_SWITCH_CHILDREN:
        for (uint32_t c = 0; c < act.n_ports; c++)
            send_port(wk, f, local(s, act.ports[c]));
        if (act.n_ports > 1) wk->st.copies += act.n_ports - 1;
        return;
    case ARB_SWITCH_UNICAST:
        unicast(wk, f, resp_host);
        return;
    default: /* DROP, CONSUMED */
        return;
    }
}

/* Local repair: the credits this worker's aggregator wants sent again to
 * the ranks still missing (arb_switch_expire), each as its tree's group
 * packet from the switch. Under the jobs lock (read). */
void rt_sw_recredit(struct sw_worker *wk, arb_time now)
{
    arb_rt_switch *s = wk->s;
    arb_agg *agg = s->aggs[wk->id];
    if (arb_switch_next_expiry(wk->eng, agg) > now) return;
    if (s->n_workers > 1) pthread_mutex_lock(&s->agg_lock[wk->id]);
    arb_switch_recredit rc;
    while (arb_switch_expire(wk->eng, agg, now, &rc) == 1) {
        struct fwd f;
        memset(&f, 0, sizeof f);
        f.j = rt_sw_find_job(s, (uint32_t)(rc.channel >> 32)); /* chan_id's fields */
        if (!f.j || !f.j->size) continue;
        f.rh = (rt_hdr){.kind = RT_K_ARBOR,
                        .flags = (uint8_t)(RT_F_SWITCH | (rc.ce ? RT_F_CE : 0)),
                        .dst_kind = 1,
                        .job = f.j->id,
                        .channel = (uint16_t)(rc.channel >> 8),
                        .sub = (uint16_t)(rc.channel >> 24 & 0xFF),
                        .src = RT_SWITCH_RANK};
        f.h = rc.hdr;
        f.payload = rc.payload;
        f.plen = rc.payload_len;
        f.copy = rc.payload != NULL; /* it lives in the aggregator */
        for (uint32_t c = 0; c < rc.n_ports; c++)
            send_port(wk, &f, local(s, rc.ports[c]));
        wk->st.recredits++;
    }
    if (s->n_workers > 1) pthread_mutex_unlock(&s->agg_lock[wk->id]);
}

/* When this worker's next re-credit is due, or ARB_TIME_NEVER. */
arb_time rt_sw_recredit_due(const struct sw_worker *wk)
{
    return arb_switch_next_expiry(wk->eng, wk->s->aggs[wk->id]);
}

/* With several threads, the aggregator of f's channel is locked while an
 * entry that aggregates handles f (uncontended unless f reached another
 * thread than its channel's owner). */
static void agg_lock(arb_rt_switch *s, const struct fwd *f, const arb_plan_entry *e)
{
    if (s->n_workers > 1 && e->aggregate) pthread_mutex_lock(&s->agg_lock[f->agg]);
}

static void agg_unlock(arb_rt_switch *s, const struct fwd *f, const arb_plan_entry *e)
{
    if (s->n_workers > 1 && e->aggregate) pthread_mutex_unlock(&s->agg_lock[f->agg]);
}

/* ECN: mark a datagram of the batch CE with the batch's probability
 * (requests carry it into their aggregate, credits into the requests that
 * answer them). */
static void mark(struct sw_worker *wk, rt_hdr *rh)
{
    if (wk->mark_p <= 0 || (rh->flags & RT_F_CE)) return;
    if (wk->mark_p < 1 && arb_rng_double(&wk->ecn_rng) >= wk->mark_p) return;
    rh->flags |= RT_F_CE;
    wk->st.ecn_marks++;
}

/* After a batch is read: the bytes still queued behind it (the queue's
 * peak) set the marking probability of its datagrams. */
void rt_sw_measure_queue(struct sw_worker *wk)
{
    int64_t q = rt_rx_queued(&wk->rx);
    if (q < 0) {
        wk->mark_p = 0;
        return;
    }
    if ((uint64_t)q > wk->st.queue_peak) wk->st.queue_peak = (uint64_t)q;
    wk->st.queue_reads++;
    wk->st.queue_sum += (uint64_t)q;
    wk->mark_p = rt_ecn_p(&wk->s->cfg.ecn, (uint64_t)q);
}

static void on_arbor(struct sw_worker *wk, const struct sockaddr_in *from, const rt_hdr *rh,
                     uint8_t *b, size_t len, arb_time now)
{
    arb_rt_switch *s = wk->s;
    struct fwd f;
    memset(&f, 0, sizeof f);
    f.rh = *rh;
    f.j = rt_sw_find_job(s, rh->job);
    if (!f.j || !f.j->size) {
        wk->st.unknown_job++;
        if (f.j && rt_sw_peer_of(s, from) < 0) rt_sw_notice(wk, from, rh, now);
        return;
    }
    /* the arrival port: a peer switch's, or the port of an admitted rank */
    uint32_t in;
    int peer = rt_sw_peer_of(s, from);
    if (peer >= 0) {
        in = s->peer_port[peer];
    } else {
        uint32_t r = rh->src;
        if (r >= f.j->size || !f.j->joined[r] || !rt_addr_eq(from, &f.j->addr[r])) {
            wk->st.strangers++;
            rt_sw_notice(wk, from, rh, now);
            return;
        }
        in = arb_pgft_down_port(s->g, s->nd, f.j->base + r) - s->nd->first_port;
        /* several threads: any of them may write it, none reads it but a JOIN */
        __atomic_store_n(&f.j->seen[r], now, __ATOMIC_RELAXED);
    }
    size_t off;
    if (in == NONE || arb_hdr_decode(&f.h, b + RT_HDR_LEN, len - RT_HDR_LEN, &off) < 0) {
        wk->st.undecodable++;
        return;
    }
    f.payload = b + RT_HDR_LEN + off;
    f.plen = len - RT_HDR_LEN - off;
    if (rh->channel >= f.j->size) {
        wk->st.unknown_channel++;
        return;
    }
    uint32_t resp_host = f.j->base + rh->channel;
    mark(wk, &f.rh);
    f.agg = rt_sw_owner_of(s, f.j->id, rh->channel);
    if (f.agg != wk->id) wk->st.foreign++;
    if (rh->dst_kind == 1) { /* group */
        const arb_plan_entry *e = arb_plan_find_sub(f.j->plan, rh->channel, rh->sub, s->node);
        if (!e || f.h.packet_type != ARB_PT_RESPONSE) {
            wk->st.unknown_channel++;
            return;
        }
        agg_lock(s, &f, e);
        on_tree(wk, &f, e, in, resp_host, now);
        agg_unlock(s, &f, e);
    } else if (rh->dst_kind == 0) { /* responder */
        if (f.h.packet_type == ARB_PT_DATA_REQUEST && !f.h.repair && f.h.agg_depth > 0) {
            const arb_plan_entry *e = arb_plan_find_sub(f.j->plan, rh->channel, rh->sub, s->node);
            if (!e) {
                wk->st.unknown_channel++;
                return;
            }
            /* held until what it emits is queued: an aggregate's payload
             * is in the aggregator's slot until then */
            agg_lock(s, &f, e);
            on_tree(wk, &f, e, in, resp_host, now);
            agg_unlock(s, &f, e);
        } else {
            unicast(wk, &f, resp_host);
        }
    } else if (rh->dst_kind == 2 && rh->dst < f.j->size) { /* member */
        unicast(wk, &f, f.j->base + rh->dst);
    } else {
        wk->st.unknown_channel++;
    }
}

static void on_datagram(struct sw_worker *wk, const struct sockaddr_in *from, uint32_t local,
                        uint8_t *b, size_t len, arb_time now)
{
    arb_rt_switch *s = wk->s;
    rt_hdr h;
    wk->st.rx_pkts++;
    wk->st.rx_bytes += len;
    wk->cur_local = local;
    if (local) {
        int peer = rt_sw_peer_of(s, from);
        if (peer >= 0 && rt_sw_peer_local(s, (uint32_t)peer) != local)
            __atomic_store_n(&s->peer_local[peer], local, __ATOMIC_RELAXED);
    }
    if (rt_hdr_get(&h, b, len) < 0) {
        wk->st.undecodable++;
        return;
    }
    switch (h.kind) {
    case RT_K_ARBOR:
        on_arbor(wk, from, &h, b, len, now);
        break;
    case RT_K_JOIN:
        rt_sw_on_join(wk, from, b, len, now);
        break;
    case RT_K_JOBINFO:
        rt_sw_on_jobinfo(wk, from, &h, b, len);
        break;
    default:
        wk->st.undecodable++;
        break;
    }
}

/* JOIN and JOBINFO may change the job table: they take its write side. */
static int writes_jobs(const uint8_t *b, size_t len)
{
    return len >= RT_HDR_LEN && b[0] == RT_MAGIC && (b[1] == RT_K_JOIN || b[1] == RT_K_JOBINFO);
}

/* Handle one datagram; the caller holds the job table's read side, which
 * a JOIN or JOBINFO trades for the write side while it is handled. */
void rt_sw_handle(struct sw_worker *wk, const struct sockaddr_in *from, uint32_t local, uint8_t *b,
                  size_t len, arb_time now)
{
    if (!writes_jobs(b, len)) {
        on_datagram(wk, from, local, b, len, now);
        return;
    }
    pthread_rwlock_unlock(&wk->s->jobs_lock);
    pthread_rwlock_wrlock(&wk->s->jobs_lock);
    on_datagram(wk, from, local, b, len, now);
    pthread_rwlock_unlock(&wk->s->jobs_lock);
    pthread_rwlock_rdlock(&wk->s->jobs_lock);
}
