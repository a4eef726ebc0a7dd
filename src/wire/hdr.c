/*
 * The Arbor header codec (docs/protocol.md section 4): bit layout, the per-type
 * validation table, and the names of packet types and payload kinds.
 *
 * Validation is one pass over a small table indexed by (packet_type,
 * repair, credit_valid): a missing row is a combination docs/wire.md forbids,
 * and each column of a row is one rule with its own error code. Encoding
 * and decoding share that single validator, so a packet the decoder
 * accepts is exactly a header the encoder writes.
 */
#include "arbor/wire.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */

static const char *const ptype_names[ARB_PT_COUNT] = {"REGISTER", "DATA_REQUEST", "RESPONSE", "END",
                                                      "END_ACK",  "REGISTER_ACK", "AGG_MISS"};

#define PK_COUNT 4
static const char *const pkind_names[PK_COUNT] = {"DATA", "COMPLETION", "REPLAY", "SEED"};

const char *arb_ptype_name(int pt)
{
    return pt >= 0 && pt < ARB_PT_COUNT ? ptype_names[pt] : NULL;
}

const char *arb_pkind_name(int pk)
{
    return pk >= 0 && pk < PK_COUNT ? pkind_names[pk] : NULL;
}

int arb_ptype_parse(const char *name)
{
    return arb_name_index(ptype_names, ARB_PT_COUNT, name);
}

int arb_pkind_parse(const char *name)
{
    return arb_name_index(pkind_names, PK_COUNT, name);
}

/* ------------------------------------------------------------------ */
/* The per-type table                                                   */
/* ------------------------------------------------------------------ */

/* One bit per (payload_valid, payload_kind) pair a row allows. */
#define PAIR(pv, kind) (1u << ((pv)*4 + (kind)))
#define P0_DATA PAIR(0, ARB_PK_DATA)
#define P0_COMPLETION PAIR(0, ARB_PK_COMPLETION)
#define P1_DATA PAIR(1, ARB_PK_DATA)
#define P1_REPLAY PAIR(1, ARB_PK_REPLAY)
#define P0_SEED PAIR(0, ARB_PK_SEED) /* header-only: a seed that stands for its bytes */
#define P1_SEED PAIR(1, ARB_PK_SEED)

enum offb_rule { OFFB_ANY, OFFB_ZERO, OFFB_ONE, OFFB_NONZERO };

struct rule {
    uint8_t pairs;       /* allowed payload_valid / payload_kind pairs */
    uint8_t max_depth;   /* agg_depth 0..max_depth */
    uint8_t may_agg;     /* aggregated may be 1 */
    uint8_t offb;        /* enum offb_rule */
    uint8_t any_op;      /* 0: op must be NOP */
    uint8_t check_fanin; /* fanin[i] >= 1 for i < agg_depth */
    uint8_t attempt;     /* the attempt byte may be nonzero */
};

/* Rows named after the protocol's table (docs/wire.md):
 * {pairs, max_depth, may_agg, offb, any_op, check_fanin, attempt}. */
static const struct rule row_control = {P0_DATA, 0, 0, OFFB_ZERO, 0, 0, 0};
static const struct rule row_miss = {P0_DATA, 0, 0, OFFB_ZERO, 0, 0, 1};
static const struct rule row_request = {
    P0_DATA | P1_DATA | P0_SEED | P1_SEED, 3, 1, OFFB_NONZERO, 1, 1, 1};
static const struct rule row_request_repair = {P0_DATA | P1_DATA, 0, 0, OFFB_ONE, 1, 1, 0};
static const struct rule row_response = {
    P1_DATA | P0_COMPLETION | P0_DATA | P0_SEED | P1_SEED, 3, 0, OFFB_ANY, 1, 0, 1};
static const struct rule row_response_tail = {P1_DATA | P0_COMPLETION, 0, 0, OFFB_ZERO, 1, 0, 0};
static const struct rule row_response_repair = {P1_REPLAY | P0_DATA, 0, 0, OFFB_ANY, 1, 0, 0};
static const struct rule row_response_tail_replay = {P1_REPLAY, 0, 0, OFFB_ZERO, 1, 0, 0};

/* rules[type][repair][credit_valid]; NULL where docs/wire.md has no such row. */
static const struct rule *const rules[ARB_PT_COUNT][2][2] = {
    [ARB_PT_REGISTER] = {[1] = {[0] = &row_control}},
    [ARB_PT_REGISTER_ACK] = {[1] = {[0] = &row_control}},
    [ARB_PT_DATA_REQUEST] = {[0] = {[0] = &row_request}, [1] = {[0] = &row_request_repair}},
    [ARB_PT_RESPONSE] = {[0] = {[0] = &row_response_tail, [1] = &row_response},
                         [1] = {[0] = &row_response_tail_replay, [1] = &row_response_repair}},
    [ARB_PT_END] = {[0] = {[0] = &row_control}},
    [ARB_PT_END_ACK] = {[0] = {[0] = &row_control}},
    [ARB_PT_AGG_MISS] = {[0] = {[0] = &row_miss}},
};

/* Fields wider than their wire width cannot be encoded at all. */
static int check_ranges(const arb_hdr *h)
{
    const struct {
        uint32_t value, max;
    } f[] = {
        {h->version, 3},
        {h->packet_type, 7},
        {h->repair, 1},
        {h->op, 3},
        {h->payload_valid, 1},
        {h->payload_kind, 3},
        {h->credit_valid, 1},
        {h->ext, 1},
        {h->agg_depth, 3},
        {h->aggregated, 1},
        {h->offset_a, ARB_OFFSET_MASK},
        {h->offset_b, ARB_OFFSET_MASK},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].value > f[i].max) return ARB_ERANGE;
    /* A 16 B header has no bytes for the deeper tiers: a nonzero value there
     * would be lost, breaking decode(encode(h)) == h. */
    if (!h->ext && (h->agg_loc[1] || h->agg_loc[2])) return ARB_ERANGE;
    return 0;
}

static int check_row(const arb_hdr *h, const struct rule *r)
{
    if (!(r->pairs & PAIR(h->payload_valid, h->payload_kind))) return ARB_EWIRE_PAYLOAD_FLAG;
    /* a seed is the credited offset's own (offset_a = offset_b); a request
     * carries one only as a switch's aggregate */
    if (h->payload_kind == ARB_PK_SEED &&
        (h->packet_type == ARB_PT_RESPONSE ? h->offset_a != h->offset_b : !h->aggregated))
        return ARB_EWIRE_PAYLOAD_FLAG;
    if (h->agg_depth > r->max_depth) return ARB_EWIRE_DEPTH;
    if (h->aggregated && !r->may_agg) return ARB_EWIRE_AGGREGATED;
    switch (r->offb) {
    case OFFB_ZERO:
        if (h->offset_b != 0) return ARB_EWIRE_OFFSET_B;
        break;
    case OFFB_ONE:
        if (h->offset_b != 1) return ARB_EWIRE_OFFSET_B;
        break;
    case OFFB_NONZERO:
        if (h->offset_b == 0) return ARB_EWIRE_OFFSET_B;
        break;
    default:
        break;
    }
    if (h->op != ARB_OP_NOP && !r->any_op) return ARB_EWIRE_OP;
    if (h->attempt && !r->attempt) return ARB_EWIRE_ATTEMPT;
    if (r->check_fanin)
        for (unsigned i = 0; i < h->agg_depth; i++)
            if (h->fanin[i] == 0) return ARB_EWIRE_FANIN;
    return 0;
}

int arb_hdr_validate(const arb_hdr *h, size_t payload_len)
{
    if (!h) return ARB_EINVAL;
    int rc = check_ranges(h);
    if (rc) return rc;
    if (h->version != ARB_WIRE_VERSION) return ARB_EWIRE_VERSION;
    if (h->packet_type >= ARB_PT_COUNT) return ARB_EWIRE_TYPE;
    if (h->payload_kind >= PK_COUNT) return ARB_EWIRE_KIND;
    if (h->agg_depth > 1 && !h->ext) return ARB_EWIRE_DEPTH_EXT;
    if (h->dtype >= ARB_DTYPE_COUNT) return ARB_EWIRE_DTYPE;

    const struct rule *const *by_repair = rules[h->packet_type][h->repair];
    if (!by_repair[0] && !by_repair[1]) return ARB_EWIRE_REPAIR;
    const struct rule *r = by_repair[h->credit_valid];
    if (!r) return ARB_EWIRE_CREDIT;
    rc = check_row(h, r);
    if (rc) return rc;

    if (!h->payload_valid) return payload_len ? ARB_EWIRE_PAYLOAD_UNEXPECTED : 0;
    if (payload_len == 0) return ARB_EWIRE_PAYLOAD_MISSING;
    if (payload_len % arb_dtype_size(h->dtype)) return ARB_EWIRE_PAYLOAD_ALIGN;
    if (payload_len > ARB_PAYLOAD_MAX) return ARB_EWIRE_PAYLOAD_TOO_LONG;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Bytes                                                                */
/* ------------------------------------------------------------------ */

void arb_hdr_init(arb_hdr *h, arb_ptype type, uint8_t message_id, uint8_t dtype, uint8_t ext)
{
    if (!h) return;
    memset(h, 0, sizeof *h);
    h->version = ARB_WIRE_VERSION;
    h->packet_type = (uint8_t)type;
    h->message_id = message_id;
    h->dtype = dtype;
    h->ext = ext ? 1 : 0;
}

/* The layout arb_hdr_equal below (and test_wire.c's hdr_equal_every_field)
 * was written for: a field added to arb_hdr moves one of these, and then
 * belongs in both. */
_Static_assert(sizeof(arb_hdr) == 32 && offsetof(arb_hdr, offset_a) == 12 &&
                   offsetof(arb_hdr, agg_loc) == 20 && offsetof(arb_hdr, dtype) == 30,
               "arb_hdr changed: compare the new field in arb_hdr_equal and its test");

int arb_hdr_equal(const arb_hdr *a, const arb_hdr *b)
{
    if (!a || !b) return 0;
    if (a->version != b->version || a->packet_type != b->packet_type || a->repair != b->repair ||
        a->op != b->op || a->message_id != b->message_id || a->payload_valid != b->payload_valid ||
        a->payload_kind != b->payload_kind || a->credit_valid != b->credit_valid ||
        a->ext != b->ext || a->agg_depth != b->agg_depth || a->aggregated != b->aggregated ||
        a->offset_a != b->offset_a || a->offset_b != b->offset_b || a->attempt != b->attempt ||
        a->dtype != b->dtype)
        return 0;
    for (int i = 0; i < ARB_MAX_DEPTH; i++)
        if (a->agg_loc[i] != b->agg_loc[i] || a->fanin[i] != b->fanin[i]) return 0;
    return 1;
}

size_t arb_hdr_len(const arb_hdr *h)
{
    return h && h->ext ? ARB_HDR_LEN_LONG : ARB_HDR_LEN_SHORT;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 16);
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

int arb_hdr_encode(const arb_hdr *h, size_t payload_len, uint8_t *buf, size_t cap, size_t *out_len)
{
    int rc = arb_hdr_validate(h, payload_len);
    if (rc) return rc;
    size_t n = arb_hdr_len(h);
    if (cap < n) return ARB_ENOSPC;
    if (!buf) return ARB_EINVAL;

    buf[0] = (uint8_t)(h->version << 6 | h->packet_type << 3 | h->repair << 2 | h->op);
    buf[1] = h->message_id;
    buf[2] = (uint8_t)(h->payload_valid << 7 | h->payload_kind << 5 | h->credit_valid << 4 |
                       h->ext << 3 | h->agg_depth << 1 | h->aggregated);
    put24(buf + 3, h->offset_a);
    put24(buf + 6, h->offset_b);
    put16(buf + 9, h->agg_loc[0]);
    buf[11] = h->fanin[0];
    buf[12] = h->fanin[1];
    buf[13] = h->fanin[2];
    buf[14] = h->attempt;
    buf[15] = h->dtype;
    if (h->ext) {
        put16(buf + 16, h->agg_loc[1]);
        put16(buf + 18, h->agg_loc[2]);
    }
    if (out_len) *out_len = n;
    return 0;
}

int arb_hdr_decode(arb_hdr *h, const uint8_t *buf, size_t len, size_t *payload_off)
{
    if (!h || (!buf && len)) return ARB_EINVAL;
    memset(h, 0, sizeof *h);
    /* The ext bit lives in byte 2: only with three bytes in hand do we know
     * how long the header is. */
    if (len < 3) return ARB_EWIRE_SHORT;
    size_t n = buf[2] & 0x08 ? ARB_HDR_LEN_LONG : ARB_HDR_LEN_SHORT;
    if (len < n) return ARB_EWIRE_SHORT;

    h->version = buf[0] >> 6;
    h->packet_type = buf[0] >> 3 & 7;
    h->repair = buf[0] >> 2 & 1;
    h->op = buf[0] & 3;
    h->message_id = buf[1];
    h->payload_valid = buf[2] >> 7;
    h->payload_kind = buf[2] >> 5 & 3;
    h->credit_valid = buf[2] >> 4 & 1;
    h->ext = buf[2] >> 3 & 1;
    h->agg_depth = buf[2] >> 1 & 3;
    h->aggregated = buf[2] & 1;
    h->offset_a = get24(buf + 3);
    h->offset_b = get24(buf + 6);
    h->agg_loc[0] = get16(buf + 9);
    h->fanin[0] = buf[11];
    h->fanin[1] = buf[12];
    h->fanin[2] = buf[13];
    h->attempt = buf[14];
    h->dtype = buf[15];
    if (h->ext) {
        h->agg_loc[1] = get16(buf + 16);
        h->agg_loc[2] = get16(buf + 18);
    }
    int rc = arb_hdr_validate(h, len - n);
    if (rc) return rc;
    if (payload_off) *payload_off = n;
    return 0;
}
