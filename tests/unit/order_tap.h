/*
 * order_tap.h - a simulator tap, shared by the load-balancing and
 * reproduction tests, that counts out-of-order arrivals on the packet
 * stream leaving one port over a train of messages on one five-tuple (one
 * QP): message m's packets are numbered m x 1000 + psn.
 */
#ifndef ARBOR_TEST_ORDER_TAP_H
#define ARBOR_TEST_ORDER_TAP_H

#include "arbor/sim.h"

struct order {
    uint32_t port;
    uint64_t max_seen, ooo, n;
};

static void order_tap(void *ctx, const arb_sim *s, uint32_t port, const arb_sim_pkt_info *f,
                      arb_time now)
{
    (void)s, (void)now;
    struct order *o = ctx;
    if (port != o->port || f->kind != ARB_SIM_DATA) return;
    uint64_t seq = (uint64_t)f->conn * 1000 + f->psn + 1;
    o->n++;
    if (seq < o->max_seen)
        o->ooo++;
    else
        o->max_seen = seq;
}

#endif
