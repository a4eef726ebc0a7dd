/* Arbor in the simulator: the switches' I/O. A packet of a tree goes to
 * the switch engine (switch.h, inlined from switch/switch_int.h), which
 * decides; this file queues, copies, replaces payload buffers and keeps
 * the simulator's accounts. The rest is unicast (arbor_int.h). */
#include "arbor_int.h"
#include "switch/switch_int.h"

#include <assert.h>
#include <string.h>

/* Queue packet i (its in_port set) on `port`, or drop it there is none. */
static void sw_send(arb_sim *s, uint32_t node, uint32_t port, uint32_t i)
{
    if (port == NONE || port >= s->n_ports || s->sp[port].failed) {
        if (port == ARB_SIM_ROUTE_ENOMEM && !s->error) s->error = ARB_ENOMEM;
        s->st.unroutable++;
        arbor_pkt_drop(s, node, i);
        return;
    }
    net_enqueue(s, port, i);
}

static void sw_out(arb_sim *s, uint32_t node, uint32_t in_port, uint32_t port, uint32_t i)
{
    pool_get(&s->pool, i)->in_port = in_port;
    sw_send(s, node, port, i);
}

static void sw_unicast(arb_sim *s, uint32_t node, uint32_t in_port, uint32_t i)
{
    struct pkt *k = pool_get(&s->pool, i);
    k->psn |= ROUTE_UNICAST; /* the job's port above the route bit stays */
    arb_sim_pkt_info f = pkt_info(k);
    uint32_t out = s->cfg.route(s->cfg.route_ctx, s, node, in_port, &f, s->now);
    sw_out(s, node, in_port, out, i);
}

/* Packet i to every one of the n ports: copies for all but the first. */
static void replicate(arb_sim *s, struct ajob *j, uint32_t node, uint32_t in_port,
                      const uint32_t *ports, uint32_t n, uint32_t i)
{
    pool_get(&s->pool, i)->in_port = in_port; /* the copies inherit it */
    uint32_t made = 0;
    for (uint32_t c = 1; c < n; c++) {
        uint32_t cp = arbor_pkt_copy(s, i);
        if (cp == PKT_NONE) break;
        made++;
        sw_send(s, node, ports[c], cp);
    }
    s->arb->acct[node].copies += made;
    j->res.copies += made;
    sw_send(s, node, ports[0], i);
}

/* The aggregate or AGG_MISS the switch made replaces packet i's header and
 * payload (values: the aggregate in a new payload buffer; header-only: the
 * length it stands for). A credit whose earlier attempt's aggregate took
 * its place (local repair) now goes to the channel's responder. 0, or -1
 * when the packet was dropped. */
static int sw_replace(arb_sim *s, struct ajob *j, uint32_t node, uint32_t i,
                      const arb_switch_packet *pk, int was_credit)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    const arb_plan_channel *c = arb_plan_get_channel(j->p, k->conn - j->ch_base);
    if (was_credit) k->dst = c->responder_host;
    a->hdr[i] = *pk->hdr;
    if (!a->values) {
        k->payload = (uint16_t)arbor_virtual_len(j, c, pk->hdr);
    } else if (pk->payload && pk->payload_len) {
        uint32_t b = arbor_buf_get(s);
        if (b == NONE) {
            fatal(s, ARB_ENOMEM);
            arbor_pkt_drop(s, node, i);
            return -1;
        }
        memcpy(a->bp.buf[b], pk->payload, pk->payload_len);
        buf_put(s, k->aux);
        k->aux = b;
        k->payload = (uint16_t)pk->payload_len;
    } else { /* an AGG_MISS, or an aggregate of no payload */
        buf_put(s, k->aux);
        k->aux = NONE;
        k->payload = 0;
    }
    return 0;
}

/* A seeded slot's aggregate (packet i, made here) is the whole result: a
 * copy goes down to each of the entry's children as the offset's tail
 * result, from the switch (act->down). */
static void result_down(arb_sim *s, struct ajob *j, uint32_t node, uint32_t in_port, uint32_t i,
                        const arb_switch_action *act)
{
    struct arbor_job *a = s->arb;
    uint32_t d = arbor_pkt_copy(s, i);
    if (d == PKT_NONE) {
        fatal(s, ARB_ENOMEM);
        return;
    }
    a->acct[node].copies++; /* made here, as replicate's copies */
    j->res.copies++;
    struct pkt *k = pool_get(&s->pool, d);
    a->hdr[d] = act->down_hdr;
    if (!a->values)
        k->payload = (uint16_t)arbor_virtual_len(
            j, arb_plan_get_channel(j->p, k->conn - j->ch_base), &a->hdr[d]);
    k->bytes = (uint16_t)wire_of(&a->hdr[d], k->payload);
    k->flags = (uint8_t)((k->flags & ~PF_CE) | PF_SWITCH);
    if (j->cfg.wire_check)
        arbor_wire_check(s, k->conn, &a->hdr[d], k->aux != NONE ? k->payload : 0);
    replicate(s, j, node, in_port, act->ports, act->n_ports, d);
}

/* The slot accounting of the aggregator's answer (owner tables). */
static void slot_account(struct arbor_job *a, struct ajob *j, uint32_t node, size_t g,
                         const arb_agg_result *r)
{
    if (r->reason == ARB_AGG_R_PUSH) slot_taken(a, j, node, a->owner[g], (uint32_t)r->slot);
    if (r->action == ARB_AGG_EMIT_AGGREGATE) slot_freed(a, node, a->owner[g], (uint32_t)r->slot);
}

/* What the switch engine decided for packet i, carried out. */
static void sw_act(arb_sim *s, struct ajob *j, uint32_t node, uint32_t in_port, uint32_t i,
                   const arb_switch_packet *pk, const arb_switch_action *act, int was_credit)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    if (act->error) fatal(s, act->error);
    if (act->made && sw_replace(s, j, node, i, pk, was_credit) < 0) return;
    if (act->down) result_down(s, j, node, in_port, i, act);
    if (act->aggregated) {
        k->flags = (uint8_t)((k->flags & ~PF_CE) | (pk->ce ? PF_CE : 0) | PF_SWITCH);
        k->bytes = (uint16_t)wire_of(&a->hdr[i], k->payload); /* header-only: what it stands for */
    }
    /* what the aggregator changed and sends on: a request's, or a credit's push */
    if (j->cfg.wire_check &&
        (act->aggregated || (act->agg_called && act->verb == ARB_SWITCH_CHILDREN)))
        arbor_wire_check(s, k->conn, &a->hdr[i], k->aux != NONE ? k->payload : 0);
    switch (act->verb) {
    case ARB_SWITCH_CONSUMED:
        a->acct[node].consumed++;
        pkt_free(s, i);
        return;
    case ARB_SWITCH_DROP:
        if (act->agg_called && act->agg.action == ARB_AGG_DROP &&
            a->hdr[i].packet_type == ARB_PT_DATA_REQUEST)
            j->res.agg_drops++;
        arbor_pkt_drop(s, node, i);
        return;
    case ARB_SWITCH_UP:
        sw_out(s, node, in_port, act->port, i);
        return;
    case ARB_SWITCH_CHILDREN:
        replicate(s, j, node, in_port, act->ports, act->n_ports, i);
        return;
    default:
        sw_unicast(s, node, in_port, i);
        return;
    }
}

/* ---- re-credits: the switches' own timers --------------------------------- */

/* The earliest re-credit timer of any part of node's pool. */
static arb_time sw_next_expiry(const arb_sim *s, uint32_t node)
{
    const struct arbor_job *a = s->arb;
    arb_time t = ARB_TIME_NEVER;
    for (uint32_t k = 0; k < a->n_parts; k++) {
        arb_time x = arb_switch_next_expiry(a->sw[node], a->agg[(size_t)node * a->n_parts + k]);
        if (x < t) t = x;
    }
    return t;
}

static void sw_release(arb_sim *s, uint32_t node);
static void sw_handle(arb_sim *s, uint32_t node, uint32_t in_port, uint32_t i);

/* Node's re-credit timer at its pool's earliest, unless one is pending
 * earlier (it looks again when it fires). */
static void sw_timer_arm(arb_sim *s, uint32_t node)
{
    struct arbor_job *a = s->arb;
    arb_time t = sw_next_expiry(s, node);
    if (a->busy && a->held[node].head != PKT_NONE) { /* a held packet's turn */
        arb_time due = pool_get(&s->pool, a->held[node].head)->ts;
        if (due < t) t = due;
    }
    if (t == ARB_TIME_NEVER || a->sw_timer_at[node] <= t) return;
    if (t < s->now) t = s->now;
    int64_t seq =
        evq_push(&s->q, t, (s->n_ports << 2) + 3 * s->n_hosts + s->n_ports + s->n_hosts + node);
    if (seq < 0) {
        fatal(s, (int)seq);
        return;
    }
    a->sw_timer_at[node] = t;
    a->sw_timer_seq[node] = (uint64_t)seq;
}

/* One re-credit as a packet of its channel's tree, from the switch: a
 * copy to each port. */
static void sw_recredit(arb_sim *s, uint32_t node, const arb_switch_recredit *rc)
{
    struct arbor_job *a = s->arb;
    uint32_t conn = (uint32_t)rc->channel, tree = (uint32_t)(rc->channel >> 32);
    struct ajob *j = job_of(s, conn);
    const arb_plan_channel *c = arb_plan_get_channel(j->p, conn - j->ch_base);
    uint32_t i = pkt_new(s);
    if (i == PKT_NONE) return;
    uint32_t aux = NONE, plen = (uint32_t)rc->payload_len;
    if (!a->values)
        plen = arbor_virtual_len(j, c, &rc->hdr);
    else if (plen && (aux = arbor_put_payload(s, rc->payload, plen)) == NONE) {
        pool_release(&s->pool, i);
        fatal(s, ARB_ENOMEM);
        return;
    }
    a->hdr[i] = rc->hdr;
    *pool_get(&s->pool, i) =
        (struct pkt){.next = PKT_NONE,
                     .conn = conn,
                     .src = c->responder_host,
                     .dst = c->responder_host,
                     .psn = ROUTE_TREE | j->port << 1,
                     .aux = aux,
                     .qp = tree,
                     .in_port = PKT_NONE,
                     .ts = s->now,
                     .bytes = (uint16_t)wire_of(&rc->hdr, plen),
                     .payload = (uint16_t)plen,
                     .sport = (uint16_t)(tree - c->first_tree),
                     .kind = PK_ARBOR,
                     .flags = (uint8_t)(PF_ECT | PF_SWITCH | (rc->ce ? PF_CE : 0))};
    j->res.recredits++;
    a->acct[node].in++; /* made here: it enters the node's balance */
    replicate(s, j, node, PKT_NONE, rc->ports, rc->n_ports, i);
}

void arbor_on_switch_timer(arb_sim *s, uint32_t node, uint64_t seq)
{
    struct arbor_job *a = s->arb;
    if (!a || seq != a->sw_timer_seq[node] || a->sw_timer_at[node] != s->now) return;
    a->sw_timer_at[node] = ARB_TIME_NEVER;
    if (a->busy) sw_release(s, node);
    for (uint32_t k = 0; k < a->n_parts && !s->error; k++) {
        arb_agg *g = a->agg[(size_t)node * a->n_parts + k];
        arb_switch_recredit rc;
        while (g && arb_switch_expire(a->sw[node], g, s->now, &rc) == 1 && !s->error)
            sw_recredit(s, node, &rc);
    }
    sw_timer_arm(s, node);
}

void arbor_switch(arb_sim *s, uint32_t port, uint32_t node, uint32_t in_port, uint32_t i)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    count_sent(job_of(s, k->conn), port, k);
    if (a->busy) { /* the switch's cost: handled in its turn (sw_release) */
        k->ts = arbor_cost_due(a, node, 0, k->bytes, s->now);
        k->in_port = in_port;
        plist_push(&s->pool, &a->held[node], i);
        sw_timer_arm(s, node);
        return;
    }
    sw_handle(s, node, in_port, i);
}

/* The packets held at switch `node` whose turn has come, in order. */
static void sw_release(arb_sim *s, uint32_t node)
{
    struct plist *l = &s->arb->held[node];
    while (l->head != PKT_NONE && pool_get(&s->pool, l->head)->ts <= s->now && !s->error) {
        uint32_t i = plist_pop(&s->pool, l);
        sw_handle(s, node, pool_get(&s->pool, i)->in_port, i);
    }
}

/* Switch `node` handles Arbor packet i, which came in by in_port. */
static void sw_handle(arb_sim *s, uint32_t node, uint32_t in_port, uint32_t i)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    a->acct[node].in++;
    struct ajob *j = job_of(s, k->conn);
    if ((k->psn & 1u) == ROUTE_UNICAST) {
        sw_unicast(s, node, in_port, i);
        return;
    }
    const arb_plan_entry *e = arb_plan_find(j->p, k->qp, node);
    if (!e) {
        s->st.unroutable++;
        arbor_pkt_drop(s, node, i);
        return;
    }
    size_t g = agg_index(a, node, j);
    /* header-only: no payload, and no length (what a packet stands for is
     * arbor_virtual_len's, for what the switch makes) */
    arb_switch_packet pk = {.hdr = &a->hdr[i],
                            .payload = k->aux != NONE ? a->bp.buf[k->aux] : NULL,
                            .payload_len = k->aux != NONE ? k->payload : 0,
                            .channel = (uint64_t)k->qp << 32 | k->conn, /* the tree's */
                            .port = in_port,
                            .ce = (k->flags & PF_CE) != 0};
    /* Headers here were built by the engines (valid by construction, and
     * round-tripped under --wire-check): the engine skips re-validation. */
    assert(arb_hdr_validate(pk.hdr, pk.payload_len) == 0);
    arb_switch_action act;
    int was_credit = pk.hdr->packet_type == ARB_PT_RESPONSE;
    int was_seed = was_credit && pk.hdr->payload_kind == ARB_PK_SEED;
    switch_decide(a->sw[node], a->agg[g], j->p, e, &pk, s->now, &act);
    if (was_seed && a->hdr[i].payload_kind != ARB_PK_SEED) { /* kept in the slot: on bare */
        buf_put(s, k->aux);
        k->aux = NONE;
        k->payload = 0;
        k->bytes = (uint16_t)wire_of(&a->hdr[i], 0);
    }
    if (act.agg_called) slot_account(a, j, node, g, &act.agg);
    int armed = act.agg_called && act.verb == ARB_SWITCH_CHILDREN &&
                (act.agg.reason == ARB_AGG_R_PUSH || act.agg.reason == ARB_AGG_R_ADOPT);
    sw_act(s, j, node, in_port, i, &pk, &act, was_credit);
    /* a credit armed, or a contribution that may show an earlier one lost
     * by order: the node's timer at its pool's earliest */
    if (armed || (act.agg_called && act.agg.reason == ARB_AGG_R_COUNTED) ||
        (act.agg_called && act.agg.reason == ARB_AGG_R_COMPLETE))
        sw_timer_arm(s, node);
}
