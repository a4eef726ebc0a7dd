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
 * payload (values: the aggregate in a new payload buffer). 0, or -1 when
 * the packet was dropped. */
static int sw_replace(arb_sim *s, uint32_t node, uint32_t i, const arb_switch_packet *pk, int miss)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    a->hdr[i] = *pk->hdr;
    if (a->values && pk->payload && pk->payload_len) {
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
    } else if (miss) { /* an AGG_MISS: header only (header-only mode keeps the
                        * length an aggregate stands for) */
        buf_put(s, k->aux);
        k->aux = NONE;
        k->payload = 0;
    }
    return 0;
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
                   const arb_switch_packet *pk, const arb_switch_action *act)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    if (act->error) fatal(s, act->error);
    if (act->made && sw_replace(s, node, i, pk, act->agg.action == ARB_AGG_EMIT_MISS) < 0) return;
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

void arbor_switch(arb_sim *s, uint32_t port, uint32_t node, uint32_t in_port, uint32_t i)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    a->acct[node].in++;
    struct ajob *j = job_of(s, k->conn);
    count_sent(j, port, k);
    if ((k->psn & 1u) == ROUTE_UNICAST) {
        sw_unicast(s, node, in_port, i);
        return;
    }
    uint32_t ei = entry_of(j, node, k->qp);
    if (ei == NONE) {
        s->st.unroutable++;
        arbor_pkt_drop(s, node, i);
        return;
    }
    const arb_plan_entry *e = arb_plan_get_entry(j->p, ei);
    size_t g = agg_index(a, node, j);
    arb_switch_packet pk = {.hdr = &a->hdr[i],
                            .payload = k->aux != NONE ? a->bp.buf[k->aux] : NULL,
                            .payload_len = k->aux != NONE ? k->payload : 0,
                            .channel = k->conn,
                            .port = in_port,
                            .ce = (k->flags & PF_CE) != 0};
    /* Headers here were built by the engines (valid by construction, and
     * round-tripped under --wire-check): the engine skips re-validation. */
    assert(arb_hdr_validate(pk.hdr, pk.payload_len) == 0);
    arb_switch_action act;
    switch_decide(a->sw[node], a->agg[g], j->p, e, &pk, s->now, &act);
    if (act.agg_called) slot_account(a, j, node, g, &act.agg);
    sw_act(s, j, node, in_port, i, &pk, &act);
}
