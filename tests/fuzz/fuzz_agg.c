/*
 * Fuzz target: the aggregator engine fed an arbitrary sequence of packets.
 *
 * The first byte configures a small engine (1..8 slots, header-only or
 * values, 1..16 ports); every following operation starts with one byte:
 *
 *   0 credit    a credit (offset near 0, near 2^24 or anywhere, 16 B or 20 B
 *               header, depth 0..3) on one of two channels, or a remembered
 *               credit pushed once more; a pushed credit is remembered (the
 *               last 8)
 *   1 request   a request answering a remembered credit: count, fan-ins,
 *               port, CE, op, dtype, payload flag and length from the input,
 *               sometimes the other channel, a changed offset or slot, or
 *               the other attempt (a credit "anywhere" takes attempt 0 or 1
 *               from its offset's top bit)
 *   2 raw       a header built field by field from the input (mostly
 *               invalid: exercises the MALFORMED and BYPASS paths)
 *   3 feedback  the last aggregate, sent back in as a lower tier's output
 *   4 time      the clock moves on; 249 and 254 also reset the engine (a
 *               switch that reboots: every slot free, the rotation at 0)
 *
 * After every call: the call succeeds, every header the engine asks to send
 * passes arb_hdr_validate, an aggregate's payload is readable to its length,
 * arb_agg_check holds, and the action, reason and slot agree with a small
 * reference model of the pool written here independently of the engine
 * (the rotation, owners, counts, contributor sets and first-contribution
 * fields, checked in the documented order). Anything else calls abort().
 *
 * Run it for longer with
 *   CC=clang cmake -S . -B build-fuzz -DARB_FUZZ=ON && cmake --build build-fuzz --target fuzz_agg
 *   ./build-fuzz/fuzz_agg -max_total_time=600 tests/fuzz/corpus/agg
 */
#include "arbor/agg.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond) abort();
}

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t next(reader *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

static uint32_t next24(reader *r)
{
    uint32_t v = next(r);
    v = v << 8 | next(r);
    return v << 8 | next(r);
}

#define CHANNELS 2
static const uint64_t channel_ids[CHANNELS] = {(uint64_t)0x0A000001 << 16 | 17470,
                                               (uint64_t)0x0A000002 << 16 | 17471};

/* The reference model: what docs/aggregator.md says a slot is. */
typedef struct ref_slot {
    int used, done;
    uint64_t ch;
    uint32_t off, count, n;
    uint8_t port_seen[16];
    uint8_t fanin, dtype, op, pv, attempt;
    size_t len;
    /* a seeded credit's slot: the seed sets the inputs' dtype, op and
     * length (values mode), and the aggregate is the whole result */
    uint8_t seeded, sdtype, sop;
    size_t slen;
} ref_slot;

typedef struct state {
    arb_agg *a;
    uint32_t nslots, next;
    ref_slot ref[8];
    uint32_t ports;
    int header_only;
    arb_time now;
    arb_hdr credits[8];
    uint64_t credit_ch[8];
    int ncredits;
    arb_hdr last_agg; /* the last aggregate, for feedback */
    uint64_t last_ch;
    size_t last_len;
    int have_agg;
    uint8_t payload[ARB_PAYLOAD_MAX];
    uint8_t agg_payload[ARB_PAYLOAD_MAX];
} state;

/* Predict the reason for a packet and apply it to the model. */
static arb_agg_reason predict(state *s, const arb_hdr *h, size_t len, uint64_t ch, uint32_t port,
                              int32_t *slot)
{
    *slot = -1;
    if (arb_hdr_validate(h, len) != 0) return ARB_AGG_R_MALFORMED;
    if (!h->repair && h->packet_type == ARB_PT_RESPONSE && h->credit_valid) {
        if (h->agg_depth == 3) return ARB_AGG_R_STACK_FULL;
        if (h->agg_depth == 1 && !h->ext) return ARB_AGG_R_STACK_EXT;
        ref_slot *x = &s->ref[s->next];
        *slot = (int32_t)s->next;
        s->next = (s->next + 1) % s->nslots;
        memset(x, 0, sizeof *x);
        x->used = 1;
        x->ch = ch;
        x->off = h->offset_b;
        x->attempt = h->attempt;
        if (h->payload_kind == ARB_PK_SEED && h->agg_depth == 0 &&
            (s->header_only || (h->payload_valid && len))) {
            x->seeded = 1;
            x->sdtype = h->dtype;
            x->sop = h->op;
            x->slen = len;
        }
        return ARB_AGG_R_PUSH;
    }
    if (h->repair || h->packet_type != ARB_PT_DATA_REQUEST || h->agg_depth == 0)
        return ARB_AGG_R_BYPASS;
    int top = h->agg_depth - 1;
    if (h->fanin[top] == 1) return ARB_AGG_R_FANIN1;
    uint32_t id = h->agg_loc[top];
    if (id >= s->nslots) return ARB_AGG_R_BAD_SLOT;
    ref_slot *x = &s->ref[id];
    *slot = (int32_t)id;
    if (!x->used || x->ch != ch || x->off != h->offset_a) return ARB_AGG_R_OWNER;
    if (x->attempt != h->attempt) return ARB_AGG_R_STALE;
    if (x->done) return ARB_AGG_R_LATE;
    if (x->port_seen[port]) return ARB_AGG_R_DUPLICATE;
    size_t plen = h->payload_valid ? len : 0;
    if (plen > ARB_PAYLOAD_MAX) return ARB_AGG_R_TOO_LONG;
    if (x->n && (x->fanin != h->fanin[top] || x->dtype != h->dtype || x->op != h->op ||
                 x->pv != h->payload_valid || x->len != plen))
        return ARB_AGG_R_MISMATCH;
    if (!x->n && x->seeded && !s->header_only &&
        (h->dtype != x->sdtype || h->op != x->sop || !h->payload_valid || plen != x->slen))
        return ARB_AGG_R_MISMATCH;
    if (x->count + h->offset_b > h->fanin[top]) return ARB_AGG_R_OVERCOUNT;
    if (!x->n) {
        x->fanin = h->fanin[top];
        x->dtype = h->dtype;
        x->op = h->op;
        x->pv = h->payload_valid;
        x->len = plen;
    }
    x->n++;
    x->count += h->offset_b;
    x->port_seen[port] = 1;
    if (x->count < x->fanin) return ARB_AGG_R_COUNTED;
    x->done = 1;
    return ARB_AGG_R_COMPLETE;
}

static void feed(state *s, arb_hdr *h, const void *p, size_t len, uint64_t ch, uint32_t port,
                 int ce)
{
    port %= s->ports;
    int32_t want_slot;
    arb_agg_reason want = predict(s, h, len, ch, port, &want_slot);
    arb_agg_result r;
    int rc = arb_agg_recv(s->a, h, p, len, ch, port, ce, s->now, &r);
    require(rc == 0);
    require(r.reason == want);
    if (want != ARB_AGG_R_MALFORMED && want != ARB_AGG_R_BYPASS && want != ARB_AGG_R_FANIN1 &&
        want != ARB_AGG_R_BAD_SLOT && want != ARB_AGG_R_STACK_FULL && want != ARB_AGG_R_STACK_EXT)
        require(r.slot == want_slot);
    switch (r.action) {
    case ARB_AGG_FORWARD:
        require(memcmp(&r.hdr, h, sizeof *h) == 0);
        require(arb_hdr_validate(&r.hdr, r.payload_len) == 0);
        /* a credit never carries its seed past the engine */
        require(!(h->packet_type == ARB_PT_RESPONSE && h->credit_valid && !h->repair) ||
                (h->payload_kind != ARB_PK_SEED && (r.payload_len == 0) == !h->payload_valid));
        if (r.reason == ARB_AGG_R_PUSH) {
            int i = s->ncredits++ % 8;
            s->credits[i] = *h;
            s->credit_ch[i] = ch;
        }
        break;
    case ARB_AGG_EMIT_AGGREGATE:
        require(arb_hdr_validate(&r.hdr, r.payload_len) == 0);
        require(r.hdr.aggregated == 1 && r.hdr.offset_b >= 2 && r.hdr.offset_b <= 255);
        require(r.payload_len <= ARB_PAYLOAD_MAX);
        /* the whole result only from a seeded slot, and only it goes down */
        if (r.reason == ARB_AGG_R_COMPLETE) {
            require((r.hdr.payload_kind == ARB_PK_SEED) == (s->ref[want_slot].seeded != 0));
            require(r.down == (s->ref[want_slot].seeded && r.hdr.agg_depth == 0));
        }
        if (s->header_only || !r.hdr.payload_valid) {
            require(r.payload == NULL);
        } else {
            require(r.payload != NULL);
            memcpy(s->agg_payload, r.payload, r.payload_len); /* ASan: readable */
        }
        s->last_agg = r.hdr;
        s->last_ch = ch;
        s->last_len = r.payload_len;
        s->have_agg = 1;
        break;
    case ARB_AGG_EMIT_MISS:
        require(arb_hdr_validate(&r.hdr, 0) == 0);
        require(r.hdr.packet_type == ARB_PT_AGG_MISS && r.payload == NULL);
        break;
    case ARB_AGG_CONSUMED:
    case ARB_AGG_DROP:
        require(r.payload == NULL && r.payload_len == 0);
        break;
    default:
        require(0);
    }
    require(arb_agg_check(s->a) == 0);
}

static void op_credit(state *s, reader *r)
{
    uint8_t b = next(r);
    if ((b & 3) == 3 && s->ncredits) {
        /* push a remembered credit again, as a lower tier in the same
         * switch: requests then climb two levels of this engine */
        int n = s->ncredits < 8 ? s->ncredits : 8;
        int i = (b >> 2) % n;
        arb_hdr h = s->credits[i];
        feed(s, &h, NULL, 0, s->credit_ch[i], 0, 0);
        return;
    }
    uint32_t k;
    switch (b & 3) {
    case 0:
        k = next(r);
        break;
    case 1:
        k = 0xFFFFFFu - next(r);
        break;
    default:
        k = next24(r);
    }
    arb_hdr h;
    memset(&h, 0, sizeof h);
    h.version = ARB_WIRE_VERSION;
    h.packet_type = ARB_PT_RESPONSE;
    h.credit_valid = 1;
    h.op = (b >> 2) & 3;
    h.ext = (b >> 4) & 1;
    h.agg_depth = (uint8_t)((b >> 5) & 3);
    if (!h.ext && h.agg_depth > 1) h.agg_depth = 1;
    for (int i = 0; i < h.agg_depth; i++)
        h.agg_loc[i] = (uint16_t)(200 + i);
    h.offset_b = k;
    if ((b & 3) == 2) h.attempt = (uint8_t)(k >> 23); /* attempts 0 and 1 */
    h.dtype = ARB_DTYPE_I64;
    feed(s, &h, NULL, 0, channel_ids[b >> 7], 0, 0);
}

static void op_request(state *s, reader *r)
{
    if (s->ncredits == 0) return;
    int n = s->ncredits < 8 ? s->ncredits : 8;
    uint8_t sel = next(r);
    const arb_hdr *c = &s->credits[sel % n];
    uint64_t ch = s->credit_ch[sel % n];
    uint8_t flags = next(r);
    uint8_t tweak = next(r);

    arb_hdr h;
    memset(&h, 0, sizeof h);
    h.version = ARB_WIRE_VERSION;
    h.packet_type = ARB_PT_DATA_REQUEST;
    h.op = flags & 3;
    h.payload_valid = (flags >> 2) & 1;
    h.dtype = (uint8_t)(((flags >> 3) & 7) % ARB_DTYPE_COUNT);
    h.ext = c->ext;
    h.agg_depth = c->agg_depth;
    h.offset_a = c->offset_b;
    h.offset_b = 1 + (next(r) & 3);
    for (int i = 0; i < c->agg_depth; i++) {
        h.agg_loc[i] = c->agg_loc[i];
        h.fanin[i] = (uint8_t)(1 + next(r) % 6);
    }
    if (tweak & 1) ch = channel_ids[(sel >> 7) & 1];
    if (tweak & 2) h.offset_a = (h.offset_a + 1) & ARB_OFFSET_MASK;
    if ((tweak & 12) == 12 && h.agg_depth) h.agg_loc[h.agg_depth - 1] = next(r);
    if (tweak & 16) h.aggregated = 1;
    h.attempt = c->attempt;
    if ((tweak & 12) == 4) h.attempt ^= 1; /* another attempt of the offset */

    size_t len = 0;
    if (h.payload_valid) {
        size_t es = arb_dtype_size(h.dtype);
        len = es * (1 + next(r) % 64u);
        if (tweak & 32) len = 8192 - (tweak & 64 ? es : 0);
        if ((tweak & 0xC0) == 0xC0) len += 1; /* not a whole element: malformed */
        if (len > ARB_PAYLOAD_MAX) len = ARB_PAYLOAD_MAX;
        for (size_t i = 0; i < 8 && i < len; i++)
            s->payload[i] = next(r);
    }
    uint8_t pc = next(r);
    feed(s, &h, s->header_only ? NULL : s->payload, len, ch, pc >> 1, pc & 1);
}

static void op_raw(state *s, reader *r)
{
    arb_hdr h;
    h.version = next(r) & 3;
    uint8_t b = next(r);
    h.packet_type = b & 7;
    h.repair = (b >> 3) & 1;
    h.op = (b >> 4) & 3;
    h.payload_valid = (b >> 6) & 1;
    h.credit_valid = b >> 7;
    b = next(r);
    h.payload_kind = b & 3;
    h.ext = (b >> 2) & 1;
    h.agg_depth = (b >> 3) & 3;
    h.aggregated = (b >> 5) & 1;
    h.message_id = next(r);
    h.offset_a = next24(r);
    h.offset_b = next24(r);
    for (int i = 0; i < 3; i++) {
        h.agg_loc[i] = next(r) & 15;
        h.fanin[i] = next(r) & 7;
    }
    h.dtype = next(r) & 7;
    h.attempt = (uint8_t)(h.message_id >> 7);
    size_t len = next(r);
    if (len > 200) len = ARB_PAYLOAD_MAX + (len - 200);
    if (len > sizeof s->payload) len = ARB_PAYLOAD_MAX; /* the buffer's size */
    uint8_t pc = next(r);
    feed(s, &h, s->header_only ? NULL : s->payload, len, channel_ids[pc & 1], pc >> 1, pc & 2);
}

static void op_feedback(state *s, reader *r)
{
    if (!s->have_agg || s->last_agg.agg_depth == 0) return;
    arb_hdr h = s->last_agg;
    uint8_t pc = next(r);
    const void *p = s->header_only || !h.payload_valid ? NULL : s->agg_payload;
    feed(s, &h, p, s->last_len, s->last_ch, pc >> 1, pc & 1);
}

/* The switch reboots: the engine and the model forget every slot. */
static void op_reset(state *s)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < s->nslots; i++)
        live += s->ref[i].used && !s->ref[i].done;
    arb_agg_stats before;
    arb_agg_get_stats(s->a, s->now, &before);
    require(arb_agg_reset(s->a, s->now) == (int)live);
    memset(s->ref, 0, sizeof s->ref);
    s->next = 0;
    arb_agg_stats st;
    arb_agg_get_stats(s->a, s->now, &st);
    require(st.live == 0 && st.resets == before.resets + 1 &&
            st.reset_live == before.reset_live + live);
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
    cfg.local_repair =
        0; /* the reference below is the per-attempt pool (fuzz_agg_repair: local repair) */
    s.ports = cfg.ports;
    s.nslots = cfg.slots;
    s.header_only = cfg.header_only;
    require(arb_agg_new(&s.a, &cfg) == 0);

    int ops = 0;
    while (r.n && ops++ < 4096) {
        uint8_t op = next(&r);
        switch (op % 5) {
        case 0:
            op_credit(&s, &r);
            break;
        case 1:
            op_request(&s, &r);
            break;
        case 2:
            op_raw(&s, &r);
            break;
        case 3:
            op_feedback(&s, &r);
            break;
        default:
            s.now += (arb_time)(op >> 3) * 1000;
            if (op >= 249) op_reset(&s);
        }
    }
    arb_agg_stats st;
    arb_agg_get_stats(s.a, s.now, &st);
    require(st.live <= cfg.slots && st.peak_live <= cfg.slots);
    arb_agg_free(s.a);
    return 0;
}
