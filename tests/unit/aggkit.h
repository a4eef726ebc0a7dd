/*
 * Helpers of the aggregator engine's unit tests (test_agg.c, test_recredit.c):
 * hand-made credits and requests, a fake clock, and feed(), which checks
 * that a call succeeded, that every header the engine asks to send passes
 * arb_hdr_validate, and that arb_agg_check holds afterwards. Include after
 * testkit.h.
 */
#ifndef ARB_TEST_AGGKIT_H
#define ARB_TEST_AGGKIT_H

#include <string.h>

#include "arbor/agg.h"

#define CH1 ((uint64_t)0x0A000001 << 16 | 17470) /* responder 10.0.0.1, port 17470 */
#define CH2 ((uint64_t)0x0A000002 << 16 | 17470)

static arb_time t; /* the fake clock */

static inline arb_agg *make_lr(uint32_t slots, uint32_t ports, int header_only, int local_repair)
{
    arb_agg_config c;
    arb_agg_config_default(&c);
    c.slots = slots;
    c.ports = ports;
    c.header_only = header_only;
    c.local_repair = local_repair;
    arb_agg *a = NULL;
    REQUIRE_EQ_I(arb_agg_new(&a, &c), 0);
    return a;
}

/* local repair on, as by default */
static inline arb_agg *make(uint32_t slots, uint32_t ports, int header_only)
{
    return make_lr(slots, ports, header_only, 1);
}

/* A bare credit (RESPONSE, credit_valid = 1, 0 / DATA) for credit offset k. */
static inline arb_hdr credit(uint32_t k, int ext, int depth)
{
    arb_hdr h;
    memset(&h, 0, sizeof h);
    h.version = ARB_WIRE_VERSION;
    h.packet_type = ARB_PT_RESPONSE;
    h.op = ARB_OP_SUM;
    h.message_id = 3;
    h.credit_valid = 1;
    h.ext = (uint8_t)ext;
    h.agg_depth = (uint8_t)depth;
    for (int i = 0; i < depth; i++)
        h.agg_loc[i] = (uint16_t)(100 + i);
    h.offset_a = 0;
    h.offset_b = k;
    h.dtype = ARB_DTYPE_F32;
    return h;
}

/* A normal request for offset k carrying `count` contributions, answering a
 * credit whose pushed header was `c` (the location stack is echoed), with
 * fan-ins fanin[0..depth). */
static inline arb_hdr request(const arb_hdr *c, uint32_t count, const uint8_t *fanin,
                              int payload_valid, arb_op op, arb_dtype dt)
{
    arb_hdr h;
    memset(&h, 0, sizeof h);
    h.version = ARB_WIRE_VERSION;
    h.packet_type = ARB_PT_DATA_REQUEST;
    h.op = (uint8_t)op;
    h.message_id = c->message_id;
    h.payload_valid = (uint8_t)payload_valid;
    h.ext = c->ext;
    h.agg_depth = c->agg_depth;
    h.offset_a = c->offset_b;
    h.offset_b = count;
    h.attempt = c->attempt; /* a requester answers the credit's attempt */
    for (int i = 0; i < c->agg_depth; i++) {
        h.agg_loc[i] = c->agg_loc[i];
        h.fanin[i] = fanin[i];
    }
    h.dtype = (uint8_t)dt;
    return h;
}

/* One engine call with every cross-check. */
static inline arb_agg_result feed(arb_agg *a, arb_hdr *h, const void *p, size_t len, uint64_t ch,
                                  uint32_t port, int ce)
{
    arb_agg_result r;
    memset(&r, 0xA5, sizeof r);
    arb_hdr before = *h;
    CHECK_EQ_I(arb_agg_recv(a, h, p, len, ch, port, ce, t, &r), 0);
    switch (r.action) {
    case ARB_AGG_FORWARD:
        CHECK(memcmp(&r.hdr, h, sizeof *h) == 0);
        if (before.payload_kind == ARB_PK_SEED && before.packet_type == ARB_PT_RESPONSE) {
            /* a seed stays here: the credit goes on bare */
            CHECK(r.payload == NULL && r.payload_len == 0);
            CHECK(h->payload_valid == 0 && h->payload_kind == ARB_PK_DATA);
        } else {
            CHECK(r.payload == p && r.payload_len == len);
        }
        CHECK_EQ_I(arb_hdr_validate(&r.hdr, r.payload_len), 0);
        CHECK_EQ_U(r.ce, ce != 0);
        break;
    case ARB_AGG_EMIT_AGGREGATE:
        CHECK_EQ_I(arb_hdr_validate(&r.hdr, r.payload_len), 0);
        CHECK(memcmp(&before, h, sizeof *h) == 0);
        break;
    case ARB_AGG_EMIT_MISS:
        CHECK_EQ_I(arb_hdr_validate(&r.hdr, 0), 0);
        CHECK(r.payload == NULL && r.payload_len == 0);
        CHECK(memcmp(&before, h, sizeof *h) == 0);
        break;
    case ARB_AGG_CONSUMED:
    case ARB_AGG_DROP:
        CHECK(r.payload == NULL && r.payload_len == 0);
        CHECK(memcmp(&before, h, sizeof *h) == 0);
        break;
    default:
        CHECK(!"unknown action");
    }
    CHECK_EQ_I(arb_agg_check(a), 0);
    return r;
}

static inline arb_agg_stats stats(const arb_agg *a)
{
    arb_agg_stats st;
    arb_agg_get_stats(a, t, &st);
    return st;
}

#endif
