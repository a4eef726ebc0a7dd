/*
 * Fuzz target: the aggregator engine with local repair (agg.h), fed an
 * arbitrary sequence of credits, their later attempts and copies, requests
 * of every attempt, arming and the re-credit timer.
 *
 * The first byte configures a small engine (1..8 slots, header-only or
 * values, 1..16 ports); every following operation starts with one byte:
 *
 *   0 credit    a credit for one of 8 offsets on one of two channels, of an
 *               attempt 0..3, at depth 0 or 1 (20 B header); a PUSH or
 *               ADOPT is armed with a set of ports from the input
 *   1 request   a request answering a remembered credit (its stack, its
 *               attempt or another), fan-in 2..4, count 1, a port
 *   2 expire    the clock moves on and every re-credit due is taken
 *   3 reset     the engine loses its state (a switch that reboots)
 *
 * After every call: it succeeds; a header the engine asks to send passes
 * arb_hdr_validate; a replayed aggregate is a DATA_REQUEST of the credit's
 * attempt on the credit's stack; an adoption names ports it holds; a
 * re-credit names only ports its slot was armed with and lacks; and
 * arb_agg_check holds (no slot ever mixes two offsets or channels, counts
 * add up). Anything else calls abort().
 *
 *   ./build-fuzz/fuzz_agg_repair -max_total_time=600 tests/fuzz/corpus/agg_repair
 */
#include "arbor/agg.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond) abort();
}

typedef struct {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t next(reader *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

#define REMEMBER 8
typedef struct {
    arb_agg *a;
    arb_time now;
    uint32_t ports;
    int header_only;
    arb_hdr credits[REMEMBER]; /* pushed or adopted credits, as sent on */
    uint64_t credit_ch[REMEMBER];
    uint32_t ncredits;
    uint8_t payload[ARB_PAYLOAD_MAX];
} state;

static arb_hdr credit(uint32_t offset, uint8_t attempt, int depth)
{
    arb_hdr h;
    arb_hdr_init(&h, ARB_PT_RESPONSE, 1, ARB_DTYPE_I32, 1);
    h.op = ARB_OP_SUM;
    h.credit_valid = 1;
    h.offset_a = h.offset_b = offset;
    h.attempt = attempt;
    h.agg_depth = (uint8_t)depth;
    if (depth) h.agg_loc[0] = 7;
    return h;
}

static void op_credit(state *s, reader *r)
{
    uint8_t b = next(r), ports = next(r);
    uint64_t ch = (b >> 7) ? 2 : 1;
    arb_hdr h = credit(b & 7, (uint8_t)((b >> 3) & 3), (b >> 5) & 1);
    arb_hdr before = h;
    arb_agg_result res;
    require(arb_agg_recv(s->a, &h, NULL, 0, ch, 0, 0, s->now, &res) == 0);
    if (res.action == ARB_AGG_FORWARD) {
        require(arb_hdr_validate(&res.hdr, 0) == 0);
        if (res.reason == ARB_AGG_R_ADOPT) {
            require(res.have != NULL && res.slot >= 0);
        }
        if (res.reason == ARB_AGG_R_PUSH || res.reason == ARB_AGG_R_ADOPT) {
            uint32_t list[16], n = 0;
            for (uint32_t p = 0; p < s->ports && p < 8; p++)
                if (ports >> p & 1) list[n++] = 100 + p;
            require(arb_agg_arm(s->a, res.slot, &h, NULL, 0, ports & 1, list, n, 100, s->now) == 0);
            s->credits[s->ncredits % REMEMBER] = h;
            s->credit_ch[s->ncredits % REMEMBER] = ch;
            s->ncredits++;
        }
    } else if (res.action == ARB_AGG_EMIT_AGGREGATE) {
        require(res.reason == ARB_AGG_R_REPLAY);
        require(arb_hdr_validate(&res.hdr, res.payload_len) == 0);
        require(res.hdr.packet_type == ARB_PT_DATA_REQUEST && res.hdr.aggregated == 1);
        require(res.hdr.attempt == before.attempt && res.hdr.agg_depth == before.agg_depth);
        require(res.hdr.offset_a == before.offset_b);
        require(memcmp(&h, &before, sizeof h) == 0); /* the credit goes no further */
        if (res.payload_len && !s->header_only && res.hdr.payload_valid)
            memcpy(s->payload, res.payload, res.payload_len);
    } else {
        require(res.action == ARB_AGG_DROP);
    }
    require(arb_agg_check(s->a) == 0);
}

static void op_request(state *s, reader *r)
{
    if (!s->ncredits) return;
    uint8_t b = next(r), c = next(r);
    uint32_t k = b % (s->ncredits < REMEMBER ? s->ncredits : REMEMBER);
    const arb_hdr *cr = &s->credits[k];
    arb_hdr h;
    arb_hdr_init(&h, ARB_PT_DATA_REQUEST, cr->message_id, ARB_DTYPE_I32, 1);
    h.op = ARB_OP_SUM;
    h.payload_valid = 1;
    h.agg_depth = cr->agg_depth;
    memcpy(h.agg_loc, cr->agg_loc, sizeof h.agg_loc);
    for (int i = 0; i < h.agg_depth; i++)
        h.fanin[i] = (uint8_t)(2 + (c & 1));
    h.offset_a = cr->offset_b;
    h.offset_b = 1;
    h.attempt = (uint8_t)((b >> 4) & 1 ? cr->attempt : (c >> 2) & 3);
    int32_t v[2] = {b, c};
    arb_agg_result res;
    uint32_t port = (c >> 4) % s->ports;
    require(arb_agg_recv(s->a, &h, v, sizeof v, s->credit_ch[k], port, c & 2, s->now, &res) == 0);
    if (res.action == ARB_AGG_EMIT_AGGREGATE || res.action == ARB_AGG_FORWARD)
        require(arb_hdr_validate(&res.hdr, res.payload_len) == 0);
    if (res.action == ARB_AGG_EMIT_MISS) require(arb_hdr_validate(&res.hdr, 0) == 0);
    require(arb_agg_check(s->a) == 0);
}

static void op_expire(state *s, reader *r)
{
    s->now += (arb_time)next(r) * 5 * ARB_PS_PER_US;
    arb_agg_recredit rc;
    int got, n = 0;
    while ((got = arb_agg_expire(s->a, s->now, &rc)) == 1) {
        require(arb_hdr_validate(&rc.hdr, rc.payload_len) == 0);
        require(rc.hdr.packet_type == ARB_PT_RESPONSE && rc.hdr.credit_valid);
        int any = 0;
        for (uint32_t w = 0; w < rc.words; w++)
            any |= rc.missing[w] != 0;
        require(any);
        require(++n < 10000);
    }
    require(got == 0);
    require(arb_agg_check(s->a) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    static state s; /* large buffers: not on the stack */
    memset(&s, 0, sizeof s);
    uint8_t cfgb = next(&r);
    arb_agg_config cfg;
    arb_agg_config_default(&cfg);
    cfg.slots = 1 + (cfgb & 7);
    cfg.header_only = (cfgb >> 3) & 1;
    cfg.ports = 1 + (cfgb >> 4);
    cfg.recredit_min = ARB_PS_PER_US;
    s.ports = cfg.ports;
    s.header_only = cfg.header_only;
    s.now = 1;
    require(arb_agg_new(&s.a, &cfg) == 0);
    int ops = 0;
    while (r.n && ops++ < 4096) {
        uint8_t op = next(&r);
        switch (op % 4) {
        case 0:
            op_credit(&s, &r);
            break;
        case 1:
            op_request(&s, &r);
            break;
        case 2:
            op_expire(&s, &r);
            break;
        default:
            if (op >= 250) {
                require(arb_agg_reset(s.a, s.now) >= 0);
                s.ncredits = 0;
            }
        }
    }
    arb_agg_free(s.a);
    return 0;
}
