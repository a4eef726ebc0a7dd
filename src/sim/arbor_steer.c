/* Arbor in the simulator: switch steering -- tree packets by their tree
 * tables through the aggregators, the rest unicast (arbor_int.h). */
#include "arbor_int.h"

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

/* Packet i to every child port of entry e: copies for all but the first. */
static void replicate(arb_sim *s, struct ajob *j, uint32_t node, uint32_t in_port,
                      const arb_plan_entry *e, uint32_t i)
{
    uint32_t n = e->n_children;
    if (n == 0) {
        arbor_pkt_drop(s, node, i);
        return;
    }
    const uint32_t *ports = arb_plan_children(j->p, e);
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

/* A credit at a switch: up toward the root, or (arriving from above, or at
 * the root) through the aggregator where it aggregates, then to every child. */
static void sw_response(arb_sim *s, struct ajob *j, uint32_t node, uint32_t in_port, uint32_t i,
                        const arb_plan_entry *e)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    arb_hdr *h = &a->hdr[i];
    int down = e->up_port == NONE || in_port == e->up_port;
    if (!down) {
        sw_out(s, node, in_port, e->up_port, i);
        return;
    }
    if (e->aggregate && h->credit_valid && !h->repair) {
        arb_agg_result r;
        uint32_t lp = in_port - s->nodes[node].first_port;
        const uint8_t *cpl = k->aux != NONE ? a->bp.buf[k->aux] : NULL;
        size_t cplen = k->aux != NONE ? k->payload : 0;
        /* Headers here were built by the engines (valid by construction, and
         * round-tripped under --wire-check): the engines skip re-validation. */
        assert(arb_hdr_validate(h, cplen) == 0);
        size_t g = agg_index(a, node, j);
        int rc = arb_agg_recv_trusted(a->agg[g], h, cpl, cplen, k->conn, lp, k->flags & PF_CE,
                                      s->now, &r);
        if (rc < 0 || r.action != ARB_AGG_FORWARD) {
            if (rc < 0) fatal(s, rc);
            arbor_pkt_drop(s, node, i);
            return;
        }
        if (r.reason == ARB_AGG_R_PUSH) slot_taken(a, j, node, a->owner[g], (uint32_t)r.slot);
        if (j->cfg.wire_check) arbor_wire_check(s, k->conn, h, k->aux != NONE ? k->payload : 0);
    }
    replicate(s, j, node, in_port, e, i);
}

/* The aggregator's AGG_MISS replaces request i: unicast to the responder. */
static void sw_miss(arb_sim *s, const struct ajob *j, uint32_t node, uint32_t in_port, uint32_t i,
                    const arb_agg_result *r)
{
    struct pkt *k = pool_get(&s->pool, i);
    arb_hdr *h = &s->arb->hdr[i];
    *h = r->hdr;
    buf_put(s, k->aux);
    k->aux = NONE;
    k->payload = 0;
    k->flags = (uint8_t)((k->flags & ~PF_CE) | (r->ce ? PF_CE : 0) | PF_SWITCH);
    k->bytes = (uint16_t)wire_of(h, 0);
    if (j->cfg.wire_check) arbor_wire_check(s, k->conn, h, 0);
    sw_unicast(s, node, in_port, i);
}

/* The aggregate replaces request i (values: in a new payload buffer). 0, or
 * -1 when the packet was dropped. */
static int sw_aggregate(arb_sim *s, uint32_t node, uint32_t i, const arb_agg_result *r)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    a->hdr[i] = r->hdr;
    if (a->values && r->payload && r->payload_len) {
        uint32_t b = arbor_buf_get(s);
        if (b == NONE) {
            fatal(s, ARB_ENOMEM);
            arbor_pkt_drop(s, node, i);
            return -1;
        }
        memcpy(a->bp.buf[b], r->payload, r->payload_len);
        buf_put(s, k->aux);
        k->aux = b;
        k->payload = (uint16_t)r->payload_len;
    }
    k->flags = (uint8_t)((k->flags & ~PF_CE) | (r->ce ? PF_CE : 0));
    return 0;
}

/* A normal request climbing a tree: to the aggregator where the entry
 * aggregates, up the entry's up port otherwise; at the root (or with the
 * location stack empty) unicast to the responder. */
static void sw_request(arb_sim *s, struct ajob *j, uint32_t node, uint32_t in_port, uint32_t i,
                       const arb_plan_entry *e)
{
    struct arbor_job *a = s->arb;
    struct pkt *k = pool_get(&s->pool, i);
    arb_hdr *h = &a->hdr[i];
    if (!e->aggregate) {
        if (e->up_port == NONE)
            sw_unicast(s, node, in_port, i);
        else
            sw_out(s, node, in_port, e->up_port, i);
        return;
    }
    arb_agg_result r;
    uint32_t lp = in_port - s->nodes[node].first_port;
    const uint8_t *pl = k->aux != NONE ? a->bp.buf[k->aux] : NULL;
    size_t plen = k->aux != NONE ? k->payload : 0;
    assert(arb_hdr_validate(h, plen) == 0); /* built by an engine: see sw_response */
    size_t g = agg_index(a, node, j);
    int rc =
        arb_agg_recv_trusted(a->agg[g], h, pl, plen, k->conn, lp, k->flags & PF_CE, s->now, &r);
    if (rc < 0) {
        fatal(s, rc);
        arbor_pkt_drop(s, node, i);
        return;
    }
    switch (r.action) {
    case ARB_AGG_CONSUMED:
        a->acct[node].consumed++;
        pkt_free(s, i);
        return;
    case ARB_AGG_DROP:
        j->res.agg_drops++;
        arbor_pkt_drop(s, node, i);
        return;
    case ARB_AGG_EMIT_MISS:
        sw_miss(s, j, node, in_port, i, &r);
        return;
    case ARB_AGG_EMIT_AGGREGATE:
        slot_freed(a, node, a->owner[g], (uint32_t)r.slot);
        if (sw_aggregate(s, node, i, &r) < 0) return;
        break;
    default: /* FORWARD: a fan-in-1 pop, or unchanged */
        break;
    }
    k->flags |= PF_SWITCH;
    k->bytes = (uint16_t)wire_of(h, k->payload);
    if (j->cfg.wire_check) arbor_wire_check(s, k->conn, h, k->aux != NONE ? k->payload : 0);
    if (e->up_port == NONE || h->agg_depth == 0)
        sw_unicast(s, node, in_port, i);
    else
        sw_out(s, node, in_port, e->up_port, i);
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
    const arb_hdr *h = &a->hdr[i];
    if (h->packet_type == ARB_PT_RESPONSE)
        sw_response(s, j, node, in_port, i, e);
    else if (h->packet_type == ARB_PT_DATA_REQUEST && !h->repair && h->agg_depth > 0)
        sw_request(s, j, node, in_port, i, e);
    else /* other packets on a tree (none today): unicast */
        sw_unicast(s, node, in_port, i);
}
