/*
 * The switch engine's decision (switch.h), inline: arb_switch_recv is it
 * with its arguments checked, and the simulator's switch, whose every
 * packet of a tree passes here, calls switch_decide itself (its
 * arguments hold by construction). One implementation for both.
 */
#ifndef ARB_SWITCH_INT_H
#define ARB_SWITCH_INT_H

#include "arbor/switch.h"
#include "agg/agg_trusted.h"

struct arb_switch {
    arb_switch_config cfg;
    arb_switch_stats st;
    arb_switch_tap tap;
    void *tap_ctx;
    /* a replication set less the ports a slot holds already (local repair) */
    uint32_t left[ARB_AGG_PORTS_MAX];
};

void switch_tap_call(const arb_switch *sw, const arb_hdr *in, const void *in_payload, size_t in_len,
                     int in_ce, const arb_switch_packet *pkt, arb_time now,
                     const arb_switch_action *out);

/* The aggregator's answer to pkt, into out->agg. */
static inline int sw_agg_call(arb_switch *sw, arb_agg *agg, arb_switch_packet *pkt, arb_time now,
                              arb_switch_action *out)
{
    uint32_t port = pkt->port - sw->cfg.first_port;
    int rc = sw->cfg.trusted ? arb_agg_recv_trusted(agg, pkt->hdr, pkt->payload, pkt->payload_len,
                                                    pkt->channel, port, pkt->ce, now, &out->agg)
                             : arb_agg_recv(agg, pkt->hdr, pkt->payload, pkt->payload_len,
                                            pkt->channel, port, pkt->ce, now, &out->agg);
    out->agg_called = rc == 0; /* a refused call leaves agg unset */
    return rc;
}

/* UP on e's up port, or UNICAST at the root. */
static inline void sw_climb(const arb_plan_entry *e, arb_switch_action *out)
{
    if (e->up_port == ARB_PLAN_NONE) {
        out->verb = ARB_SWITCH_UNICAST;
    } else {
        out->verb = ARB_SWITCH_UP;
        out->port = e->up_port;
    }
}

/* The aggregate the aggregator made (r) takes the packet's place. */
static inline void sw_made(arb_switch_packet *pkt, const arb_agg_result *r, arb_switch_action *out)
{
    *pkt->hdr = r->hdr;
    pkt->payload = r->payload;
    pkt->payload_len = r->payload_len;
    pkt->ce = r->ce;
    out->made = out->aggregated = 1;
}

/* A credit of a later attempt that took over a partial slot goes on only
 * to the children whose contribution the slot does not hold. */
static inline void sw_skip_contributed(arb_switch *sw, arb_switch_action *out)
{
    const uint64_t *have = out->agg.have;
    uint32_t n = 0;
    for (uint32_t c = 0; c < out->n_ports; c++) {
        uint32_t p = out->ports[c] - sw->cfg.first_port;
        if (!(have[p / 64] >> (p % 64) & 1)) sw->left[n++] = out->ports[c];
    }
    sw->st.spared += out->n_ports - n;
    out->ports = sw->left;
    out->n_ports = n;
}

/* A credit: up from below; from above (or at the root) through the
 * aggregator where e aggregates, then to every child. */
static inline int sw_on_credit(arb_switch *sw, arb_agg *agg, const arb_plan *plan,
                               const arb_plan_entry *e, arb_switch_packet *pkt, arb_time now,
                               arb_switch_action *out)
{
    const arb_hdr *h = pkt->hdr;
    if (e->up_port != ARB_PLAN_NONE && pkt->port != e->up_port) {
        sw_climb(e, out);
        return 0;
    }
    if (e->aggregate && h->credit_valid && !h->repair) {
        int rc = sw_agg_call(sw, agg, pkt, now, out);
        if (rc == 0 && out->agg.action == ARB_AGG_EMIT_AGGREGATE) {
            /* local repair: an earlier attempt's aggregate, made here, goes
             * up in the credit's place; nothing below is asked again */
            sw_made(pkt, &out->agg, out);
            if (pkt->hdr->agg_depth == 0)
                out->verb = ARB_SWITCH_UNICAST;
            else
                sw_climb(e, out);
            return 0;
        }
        if (rc < 0 || out->agg.action != ARB_AGG_FORWARD) {
            out->error = rc < 0 ? rc : 0;
            out->verb = ARB_SWITCH_DROP;
            return 0;
        }
        /* a seed stays in the slot: the credit goes on bare */
        pkt->payload = out->agg.payload;
        pkt->payload_len = out->agg.payload_len;
    }
    out->ports = arb_plan_children(plan, e);
    out->n_ports = e->n_children;
    /* a switch whose children are hosts asks them again itself (local
     * repair); above, a child switch repairs its own subtree */
    if (e->level == 1 && out->agg_called &&
        (out->agg.reason == ARB_AGG_R_PUSH || out->agg.reason == ARB_AGG_R_ADOPT))
        arb_agg_arm(agg, out->agg.slot, pkt->hdr, pkt->payload, pkt->payload_len, pkt->ce,
                    out->ports, out->n_ports, sw->cfg.first_port, now);
    if (out->agg_called && out->agg.have) sw_skip_contributed(sw, out);
    out->verb = out->n_ports ? ARB_SWITCH_CHILDREN : ARB_SWITCH_DROP;
    return 0;
}

/* A seeded slot's aggregate (h) is the whole result: it also goes down to
 * e's children as the offset's tail result. */
static inline void sw_result_down(arb_switch *sw, const arb_plan *plan, const arb_plan_entry *e,
                                  const arb_hdr *h, arb_switch_action *out)
{
    arb_hdr *d = &out->down_hdr;
    arb_hdr_init(d, ARB_PT_RESPONSE, h->message_id, h->dtype, h->ext);
    d->op = h->op;
    d->payload_valid = h->payload_valid;
    /* header-only: a result that stands for its bytes */
    d->payload_kind = h->payload_valid ? ARB_PK_DATA : ARB_PK_COMPLETION;
    d->offset_a = h->offset_a;
    out->ports = arb_plan_children(plan, e);
    out->n_ports = e->n_children;
    out->down = out->n_ports > 0;
    sw->st.results_down += out->down;
}

/* A normal request climbing its tree: to the aggregator where e
 * aggregates, then on up (or to the responder at the root, or once its
 * location stack is empty). */
static inline int sw_on_request(arb_switch *sw, arb_agg *agg, const arb_plan *plan,
                                const arb_plan_entry *e, arb_switch_packet *pkt, arb_time now,
                                arb_switch_action *out)
{
    if (!e->aggregate) {
        sw_climb(e, out);
        return 0;
    }
    int rc = sw_agg_call(sw, agg, pkt, now, out);
    if (rc < 0) {
        out->error = rc;
        out->verb = ARB_SWITCH_DROP;
        return 0;
    }
    const arb_agg_result *r = &out->agg;
    switch (r->action) {
    case ARB_AGG_CONSUMED:
        out->verb = ARB_SWITCH_CONSUMED;
        return 0;
    case ARB_AGG_DROP:
        out->verb = ARB_SWITCH_DROP;
        return 0;
    case ARB_AGG_EMIT_MISS:
        *pkt->hdr = r->hdr;
        pkt->payload = NULL;
        pkt->payload_len = 0;
        pkt->ce = r->ce;
        out->made = out->aggregated = 1;
        out->verb = ARB_SWITCH_UNICAST;
        return 0;
    case ARB_AGG_EMIT_AGGREGATE:
        *pkt->hdr = r->hdr;
        pkt->payload = r->payload;
        pkt->payload_len = r->payload_len;
        out->made = 1;
        if (r->down) sw_result_down(sw, plan, e, pkt->hdr, out);
        break;
    default: /* FORWARD: a fan-in-1 pop */
        break;
    }
    pkt->ce = r->ce;
    out->aggregated = 1;
    if (pkt->hdr->agg_depth == 0)
        out->verb = ARB_SWITCH_UNICAST;
    else
        sw_climb(e, out);
    return 0;
}

/* arb_switch_recv without its argument checks: sw, plan, e, pkt, pkt->hdr
 * and out not NULL, agg not NULL where e aggregates. */
static inline int switch_decide(arb_switch *sw, arb_agg *agg, const arb_plan *plan,
                                const arb_plan_entry *e, arb_switch_packet *pkt, arb_time now,
                                arb_switch_action *out)
{
    /* every field but agg, which agg_called says is set */
    out->port = ARB_PLAN_NONE;
    out->ports = NULL;
    out->n_ports = 0;
    out->aggregated = out->made = out->agg_called = out->down = 0;
    out->error = 0;
    arb_hdr in;
    const void *in_payload = pkt->payload;
    size_t in_len = pkt->payload_len;
    int in_ce = pkt->ce;
    if (sw->tap) in = *pkt->hdr;
    const arb_hdr *h = pkt->hdr;
    int rc;
    if (h->packet_type == ARB_PT_RESPONSE)
        rc = sw_on_credit(sw, agg, plan, e, pkt, now, out);
    else if (h->packet_type == ARB_PT_DATA_REQUEST && !h->repair && h->agg_depth > 0)
        rc = sw_on_request(sw, agg, plan, e, pkt, now, out);
    else { /* other packets on a tree: toward the responder */
        out->verb = ARB_SWITCH_UNICAST;
        rc = 0;
    }
    if (rc < 0) return rc;
    sw->st.packets++;
    sw->st.verbs[out->verb]++;
    sw->st.agg_calls += out->agg_called;
    if (out->verb == ARB_SWITCH_CHILDREN) sw->st.copies += out->n_ports - 1;
    if (sw->tap) switch_tap_call(sw, &in, in_payload, in_len, in_ce, pkt, now, out);
    return 0;
}

#endif
