/*
 * Unit tests: wire (the Arbor header codec and Ethernet / IPv4 / UDP framing).
 *
 * The golden vectors below were written by hand from the bit layout of
 * docs/wire.md section 1, not produced by the encoder. The test also carries its own
 * packer (raw_pack) and its own restatement of the validation rules
 * (ref_validate), written as plain if-chains, so that the table-driven
 * library code is checked against a second, independent reading of docs/wire.md.
 *
 * Every buffer handed to a decoder is malloc'd to its exact length so that
 * the sanitizer build catches any read past the end.
 */
#include "arbor/wire.h"
#include "testkit.h"

#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

static uint8_t *dup_exact(const uint8_t *p, size_t n)
{
    uint8_t *b = malloc(n ? n : 1);
    if (!b) {
        printf("out of memory\n");
        exit(2);
    }
    if (n) memcpy(b, p, n);
    return b;
}

/* Field by field, so that a failure names the field. */
#define CHECK_HDR_EQ(a, b)                                                                         \
    do {                                                                                           \
        const arb_hdr *x_ = (a), *y_ = (b);                                                        \
        CHECK_EQ_U(x_->version, y_->version);                                                      \
        CHECK_EQ_U(x_->packet_type, y_->packet_type);                                              \
        CHECK_EQ_U(x_->repair, y_->repair);                                                        \
        CHECK_EQ_U(x_->op, y_->op);                                                                \
        CHECK_EQ_U(x_->message_id, y_->message_id);                                                \
        CHECK_EQ_U(x_->payload_valid, y_->payload_valid);                                          \
        CHECK_EQ_U(x_->payload_kind, y_->payload_kind);                                            \
        CHECK_EQ_U(x_->credit_valid, y_->credit_valid);                                            \
        CHECK_EQ_U(x_->ext, y_->ext);                                                              \
        CHECK_EQ_U(x_->agg_depth, y_->agg_depth);                                                  \
        CHECK_EQ_U(x_->aggregated, y_->aggregated);                                                \
        CHECK_EQ_U(x_->offset_a, y_->offset_a);                                                    \
        CHECK_EQ_U(x_->offset_b, y_->offset_b);                                                    \
        CHECK_EQ_U(x_->agg_loc[0], y_->agg_loc[0]);                                                \
        CHECK_EQ_U(x_->agg_loc[1], y_->agg_loc[1]);                                                \
        CHECK_EQ_U(x_->agg_loc[2], y_->agg_loc[2]);                                                \
        CHECK_EQ_U(x_->fanin[0], y_->fanin[0]);                                                    \
        CHECK_EQ_U(x_->fanin[1], y_->fanin[1]);                                                    \
        CHECK_EQ_U(x_->fanin[2], y_->fanin[2]);                                                    \
        CHECK_EQ_U(x_->attempt, y_->attempt);                                                      \
        CHECK_EQ_U(x_->dtype, y_->dtype);                                                          \
    } while (0)

static int is_wire_error(int rc)
{
    return rc <= ARB_EWIRE_SHORT && rc >= ARB_EWIRE_ATTEMPT;
}

static int is_frame_error(int rc)
{
    return rc <= ARB_EFRAME_SHORT && rc >= ARB_EFRAME_UDP_CHECKSUM;
}

/*
 * The bit layout written out once more, independently of the library and
 * without any validation, so that tests can put invalid headers on the wire.
 * Returns the header length.
 */
static size_t raw_pack(const arb_hdr *h, uint8_t out[ARB_HDR_LEN_LONG])
{
    out[0] = (uint8_t)((h->version & 3) << 6 | (h->packet_type & 7) << 3 | (h->repair & 1) << 2 |
                       (h->op & 3));
    out[1] = h->message_id;
    out[2] = (uint8_t)((h->payload_valid & 1) << 7 | (h->payload_kind & 3) << 5 |
                       (h->credit_valid & 1) << 4 | (h->ext & 1) << 3 | (h->agg_depth & 3) << 1 |
                       (h->aggregated & 1));
    out[3] = (uint8_t)(h->offset_a >> 16);
    out[4] = (uint8_t)(h->offset_a >> 8);
    out[5] = (uint8_t)h->offset_a;
    out[6] = (uint8_t)(h->offset_b >> 16);
    out[7] = (uint8_t)(h->offset_b >> 8);
    out[8] = (uint8_t)h->offset_b;
    out[9] = (uint8_t)(h->agg_loc[0] >> 8);
    out[10] = (uint8_t)h->agg_loc[0];
    out[11] = h->fanin[0];
    out[12] = h->fanin[1];
    out[13] = h->fanin[2];
    out[14] = h->attempt;
    out[15] = h->dtype;
    if (!(h->ext & 1)) return 16;
    out[16] = (uint8_t)(h->agg_loc[1] >> 8);
    out[17] = (uint8_t)h->agg_loc[1];
    out[18] = (uint8_t)(h->agg_loc[2] >> 8);
    out[19] = (uint8_t)h->agg_loc[2];
    return 20;
}

/* Header bytes followed by plen payload bytes of a fixed pattern, in an
 * exact-size heap buffer. */
static uint8_t *make_packet(const uint8_t *hdr, size_t hlen, size_t plen, size_t *len)
{
    uint8_t *b = malloc(hlen + plen ? hlen + plen : 1);
    if (!b) exit(2);
    memcpy(b, hdr, hlen);
    for (size_t i = 0; i < plen; i++)
        b[hlen + i] = (uint8_t)(i * 7 + 1);
    *len = hlen + plen;
    return b;
}

/* decode(raw_pack(h) + plen payload bytes), returning the code. */
static int decode_raw(const arb_hdr *h, size_t plen)
{
    uint8_t hb[ARB_HDR_LEN_LONG];
    size_t len, hl = raw_pack(h, hb);
    uint8_t *b = make_packet(hb, hl, plen, &len);
    arb_hdr d;
    int rc = arb_hdr_decode(&d, b, len, NULL);
    free(b);
    return rc;
}

static int encode_rc(const arb_hdr *h, size_t plen)
{
    uint8_t b[ARB_HDR_LEN_LONG];
    return arb_hdr_encode(h, plen, b, sizeof b, NULL);
}

/* The rejection must be the same through validate, encode and decode. */
#define EXPECT_REJECT(hp, plen, code)                                                              \
    do {                                                                                           \
        CHECK_EQ_I(arb_hdr_validate((hp), (plen)), (code));                                        \
        CHECK_EQ_I(encode_rc((hp), (plen)), (code));                                               \
        CHECK_EQ_I(decode_raw((hp), (plen)), (code));                                              \
    } while (0)

#define EXPECT_ACCEPT(hp, plen)                                                                    \
    do {                                                                                           \
        CHECK_EQ_I(arb_hdr_validate((hp), (plen)), 0);                                             \
        CHECK_EQ_I(encode_rc((hp), (plen)), 0);                                                    \
        CHECK_EQ_I(decode_raw((hp), (plen)), 0);                                                   \
    } while (0)

/* ------------------------------------------------------------------ */
/* A second reading of docs/wire.md's rules                                 */
/* ------------------------------------------------------------------ */

static int ref_validate(const arb_hdr *h, size_t plen)
{
    if (h->version > 3 || h->packet_type > 7 || h->repair > 1 || h->op > 3 ||
        h->payload_valid > 1 || h->payload_kind > 3 || h->credit_valid > 1 || h->ext > 1 ||
        h->agg_depth > 3 || h->aggregated > 1 || h->offset_a > 0xFFFFFF || h->offset_b > 0xFFFFFF ||
        (!h->ext && (h->agg_loc[1] || h->agg_loc[2])))
        return ARB_ERANGE;
    if (h->version != 2) return ARB_EWIRE_VERSION;
    if (h->packet_type == 7) return ARB_EWIRE_TYPE;
    if (!h->ext && h->agg_depth > 1) return ARB_EWIRE_DEPTH_EXT;
    if (h->dtype > 5) return ARB_EWIRE_DTYPE;

    int t = h->packet_type, pv = h->payload_valid, k = h->payload_kind;
    int control = t == ARB_PT_REGISTER || t == ARB_PT_REGISTER_ACK || t == ARB_PT_END ||
                  t == ARB_PT_END_ACK || t == ARB_PT_AGG_MISS;
    if (control) {
        int want_repair = t == ARB_PT_REGISTER || t == ARB_PT_REGISTER_ACK;
        if (h->repair != want_repair) return ARB_EWIRE_REPAIR;
        if (h->credit_valid) return ARB_EWIRE_CREDIT;
        if (pv || k != ARB_PK_DATA) return ARB_EWIRE_PAYLOAD_FLAG;
        if (h->agg_depth) return ARB_EWIRE_DEPTH;
        if (h->aggregated) return ARB_EWIRE_AGGREGATED;
        if (h->offset_b) return ARB_EWIRE_OFFSET_B;
        if (h->op) return ARB_EWIRE_OP;
        if (h->attempt && t != ARB_PT_AGG_MISS) return ARB_EWIRE_ATTEMPT;
    } else if (t == ARB_PT_DATA_REQUEST) {
        if (h->credit_valid) return ARB_EWIRE_CREDIT;
        /* a seed only on a switch's aggregate */
        if (k != ARB_PK_DATA && !(k == ARB_PK_SEED && !h->repair && h->aggregated))
            return ARB_EWIRE_PAYLOAD_FLAG;
        if (h->repair) {
            if (h->agg_depth) return ARB_EWIRE_DEPTH;
            if (h->aggregated) return ARB_EWIRE_AGGREGATED;
            if (h->offset_b != 1) return ARB_EWIRE_OFFSET_B;
        } else if (h->offset_b == 0) {
            return ARB_EWIRE_OFFSET_B;
        }
        if (h->repair && h->attempt) return ARB_EWIRE_ATTEMPT;
        for (int i = 0; i < h->agg_depth; i++)
            if (!h->fanin[i]) return ARB_EWIRE_FANIN;
    } else { /* RESPONSE */
        int ok;
        if (!h->repair && h->credit_valid) /* a seed is its own offset's */
            ok = ((pv && k == ARB_PK_DATA) || (!pv && k != ARB_PK_REPLAY) ||
                  (pv && k == ARB_PK_SEED)) &&
                 (k != ARB_PK_SEED || h->offset_a == h->offset_b);
        else if (!h->repair)
            ok = (pv && k == ARB_PK_DATA) || (!pv && k == ARB_PK_COMPLETION);
        else if (h->credit_valid)
            ok = (pv && k == ARB_PK_REPLAY) || (!pv && k == ARB_PK_DATA);
        else
            ok = pv && k == ARB_PK_REPLAY;
        if (!ok) return ARB_EWIRE_PAYLOAD_FLAG;
        if (h->agg_depth && (h->repair || !h->credit_valid)) return ARB_EWIRE_DEPTH;
        if (h->aggregated) return ARB_EWIRE_AGGREGATED;
        if (!h->credit_valid && h->offset_b) return ARB_EWIRE_OFFSET_B;
        if (h->attempt && (h->repair || !h->credit_valid)) return ARB_EWIRE_ATTEMPT;
    }
    if (pv) {
        size_t es = h->dtype == 0 || h->dtype == 1 ? 2 : h->dtype == 3 || h->dtype == 5 ? 8 : 4;
        if (plen == 0) return ARB_EWIRE_PAYLOAD_MISSING;
        if (plen % es) return ARB_EWIRE_PAYLOAD_ALIGN;
        if (plen > 8192) return ARB_EWIRE_PAYLOAD_TOO_LONG;
    } else if (plen) {
        return ARB_EWIRE_PAYLOAD_UNEXPECTED;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Random valid headers                                                 */
/* ------------------------------------------------------------------ */

static uint32_t rnd(arb_rng *r, uint64_t bound)
{
    return (uint32_t)arb_rng_below(r, bound);
}

/*
 * A random header of `type` that docs/wire.md allows: pick the variant first
 * (repair, credit), then draw each field from its legal values. Returns the
 * payload length, at most max_elems elements.
 */
static size_t gen_valid(arb_rng *r, int type, arb_hdr *h, unsigned max_elems)
{
    memset(h, 0, sizeof *h);
    h->version = ARB_WIRE_VERSION;
    h->packet_type = (uint8_t)type;
    h->message_id = (uint8_t)rnd(r, 256);
    h->ext = (uint8_t)rnd(r, 2);
    h->offset_a = rnd(r, 1u << 24);
    h->agg_loc[0] = (uint16_t)rnd(r, 65536);
    if (h->ext) {
        h->agg_loc[1] = (uint16_t)rnd(r, 65536);
        h->agg_loc[2] = (uint16_t)rnd(r, 65536);
    }
    for (int i = 0; i < 3; i++)
        h->fanin[i] = (uint8_t)rnd(r, 256);
    h->dtype = (uint8_t)rnd(r, ARB_DTYPE_COUNT);

    unsigned max_depth = 0;
    switch (type) {
    case ARB_PT_REGISTER:
    case ARB_PT_REGISTER_ACK:
        h->repair = 1;
        break;
    case ARB_PT_DATA_REQUEST:
        h->repair = (uint8_t)rnd(r, 2);
        h->op = (uint8_t)rnd(r, 4);
        h->payload_valid = (uint8_t)rnd(r, 2);
        if (h->repair) {
            h->offset_b = 1;
        } else {
            max_depth = 3;
            h->aggregated = (uint8_t)rnd(r, 2);
            if (h->aggregated && !rnd(r, 4)) h->payload_kind = ARB_PK_SEED; /* a seeded slot's */
            /* Small counts are the common case; cover the whole range too. */
            h->offset_b = rnd(r, 2) ? 1 + rnd(r, 255) : 1 + rnd(r, 0xFFFFFF);
        }
        break;
    case ARB_PT_RESPONSE: {
        static const uint8_t pairs[4][3][2] = {
            /* [repair * 2 + credit]: allowed (payload_valid, kind) pairs */
            {{1, ARB_PK_DATA}, {0, ARB_PK_COMPLETION}, {1, ARB_PK_DATA}}, /* tail */
            {{1, ARB_PK_DATA}, {0, ARB_PK_COMPLETION}, {0, ARB_PK_DATA}}, /* credit */
            {{1, ARB_PK_REPLAY}, {1, ARB_PK_REPLAY}, {1, ARB_PK_REPLAY}}, /* tail replay */
            {{1, ARB_PK_REPLAY}, {0, ARB_PK_DATA}, {1, ARB_PK_REPLAY}}};  /* repair */
        h->repair = (uint8_t)rnd(r, 2);
        h->credit_valid = (uint8_t)rnd(r, 2);
        h->op = (uint8_t)rnd(r, 4);
        const uint8_t *p = pairs[h->repair * 2 + h->credit_valid][rnd(r, 3)];
        h->payload_valid = p[0];
        h->payload_kind = p[1];
        h->offset_b = h->credit_valid ? rnd(r, 1u << 24) : 0;
        max_depth = !h->repair && h->credit_valid ? 3 : 0;
        if (max_depth && !rnd(r, 4)) { /* a seeded credit: its own offset's */
            h->payload_kind = ARB_PK_SEED;
            h->payload_valid = (uint8_t)rnd(r, 2);
            h->offset_a = h->offset_b;
        }
        break;
    }
    default: /* END, END_ACK, AGG_MISS */
        break;
    }
    int may_attempt = (type == ARB_PT_DATA_REQUEST && !h->repair) || type == ARB_PT_AGG_MISS ||
                      (type == ARB_PT_RESPONSE && !h->repair && h->credit_valid);
    if (may_attempt && rnd(r, 2)) h->attempt = (uint8_t)(rnd(r, 4) ? 1 + rnd(r, 3) : rnd(r, 256));
    if (!h->ext && max_depth > 1) max_depth = 1;
    h->agg_depth = (uint8_t)rnd(r, max_depth + 1);
    if (type == ARB_PT_DATA_REQUEST)
        for (unsigned i = 0; i < h->agg_depth; i++)
            if (!h->fanin[i]) h->fanin[i] = (uint8_t)(1 + rnd(r, 255));
    if (!h->payload_valid) return 0;
    size_t es = arb_dtype_size(h->dtype);
    size_t most = ARB_PAYLOAD_MAX / es < max_elems ? ARB_PAYLOAD_MAX / es : max_elems;
    return es * (1 + rnd(r, most));
}

/* ------------------------------------------------------------------ */
/* Golden vectors                                                       */
/* ------------------------------------------------------------------ */

/*
 * byte 0 = version(7:6) type(5:3) repair(2) op(1:0); version 2 gives 0x80.
 * byte 2 = payload_valid(7) kind(6:5) credit(4) ext(3) depth(2:1) aggregated(0).
 */
struct golden {
    const char *name;
    uint8_t bytes[ARB_HDR_LEN_LONG];
    size_t hlen;
    size_t plen;
    arb_hdr h;
};

#define V ARB_WIRE_VERSION
static const struct golden goldens[] = {
    /* 0x80 | type 0 << 3 | repair 1 << 2 = 0x84; byte 2 all clear; start_seq 0x000100. */
    {"register",
     {0x84, 0x07, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x02},
     16,
     0,
     {.version = V,
      .packet_type = ARB_PT_REGISTER,
      .repair = 1,
      .message_id = 7,
      .offset_a = 0x100,
      .dtype = ARB_DTYPE_F32}},
    /* type 5: 0x80 | 0x28 | 0x04 = 0xAC; ext: byte 2 = 0x08. The agg_loc
     * entries of a control packet are ignored by the rules but carried. */
    {"register_ack_ext",
     {0xAC, 0x07, 0x08, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xBE, 0xEF, 0x01, 0x02},
     20,
     0,
     {.version = V,
      .packet_type = ARB_PT_REGISTER_ACK,
      .repair = 1,
      .message_id = 7,
      .ext = 1,
      .offset_a = 0x100,
      .agg_loc = {0, 0xBEEF, 0x0102},
      .dtype = ARB_DTYPE_F32}},
    /* type 1 op SUM: 0x89; byte 2 = 0x80 | ext 0x08 | depth 3 << 1 | aggregated = 0x8F. */
    {"request_ext_depth3",
     {0x89, 0x2A, 0x8F, 0x12, 0x34, 0x56, 0x00, 0x00, 0x05, 0x0A,
      0x0B, 0x08, 0x04, 0x02, 0x00, 0x02, 0x0C, 0x0D, 0x0E, 0x0F},
     20,
     16,
     {.version = V,
      .packet_type = ARB_PT_DATA_REQUEST,
      .op = ARB_OP_SUM,
      .message_id = 0x2A,
      .payload_valid = 1,
      .ext = 1,
      .agg_depth = 3,
      .aggregated = 1,
      .offset_a = 0x123456,
      .offset_b = 5,
      .agg_loc = {0x0A0B, 0x0C0D, 0x0E0F},
      .fanin = {8, 4, 2},
      .dtype = ARB_DTYPE_F32}},
    /* A push ACK: 0x88; byte 2 = depth 1 << 1 = 0x02; fanin[1..2] ignored
     * (0x00 here) since they lie at or above agg_depth. */
    {"request_push_ack",
     {0x88, 0x01, 0x02, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x01, 0xFF, 0xFE, 0x03, 0x00, 0x00, 0x00,
      0x05},
     16,
     0,
     {.version = V,
      .packet_type = ARB_PT_DATA_REQUEST,
      .message_id = 1,
      .agg_depth = 1,
      .offset_a = 0xFFFFFF,
      .offset_b = 1,
      .agg_loc = {0xFFFE},
      .fanin = {3},
      .dtype = ARB_DTYPE_I64}},
    /* 0x80 | 0x08 | repair 0x04 | MAX 2 = 0x8E; byte 2 = 0x80; one f64. */
    {"request_repair",
     {0x8E, 0x03, 0x80, 0x00, 0x00, 0x10, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x03},
     16,
     8,
     {.version = V,
      .packet_type = ARB_PT_DATA_REQUEST,
      .repair = 1,
      .op = ARB_OP_MAX,
      .message_id = 3,
      .payload_valid = 1,
      .offset_a = 0x10,
      .offset_b = 1,
      .dtype = ARB_DTYPE_F64}},
    /* type 2 SUM: 0x91; byte 2 = 0x80 | credit 0x10 | ext 0x08 | depth 2 << 1 = 0x9C. */
    {"response_credit_ext",
     {0x91, 0x04, 0x9C, 0x00, 0x0A, 0xBC, 0x00, 0x0A, 0xBD, 0x00,
      0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00},
     20,
     4,
     {.version = V,
      .packet_type = ARB_PT_RESPONSE,
      .op = ARB_OP_SUM,
      .message_id = 4,
      .payload_valid = 1,
      .credit_valid = 1,
      .ext = 1,
      .agg_depth = 2,
      .offset_a = 0xABC,
      .offset_b = 0xABD,
      .agg_loc = {1, 2, 0},
      .dtype = ARB_DTYPE_BF16}},
    /* A bare credit (Barrier): 0x90; byte 2 = 0x10. */
    {"response_bare_credit",
     {0x90, 0x05, 0x10, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00},
     16,
     0,
     {.version = V,
      .packet_type = ARB_PT_RESPONSE,
      .message_id = 5,
      .credit_valid = 1,
      .offset_b = 0x800000,
      .dtype = ARB_DTYPE_F16}},
    /* A credit carrying a COMPLETION: byte 2 = kind 1 << 5 | 0x10 | depth 1 << 1 = 0x32. */
    {"response_credit_completion",
     {0x91, 0x06, 0x32, 0x00, 0x00, 0x07, 0x00, 0x00, 0x09, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00,
      0x04},
     16,
     0,
     {.version = V,
      .packet_type = ARB_PT_RESPONSE,
      .op = ARB_OP_SUM,
      .message_id = 6,
      .payload_kind = ARB_PK_COMPLETION,
      .credit_valid = 1,
      .agg_depth = 1,
      .offset_a = 7,
      .offset_b = 9,
      .agg_loc = {0x42},
      .dtype = ARB_DTYPE_I32}},
    /* Tail result: byte 2 = 0x80, offset_b 0. */
    {"response_tail",
     {0x91, 0x07, 0x80, 0x00, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x02},
     16,
     4,
     {.version = V,
      .packet_type = ARB_PT_RESPONSE,
      .op = ARB_OP_SUM,
      .message_id = 7,
      .payload_valid = 1,
      .offset_a = 0xFF00,
      .dtype = ARB_DTYPE_F32}},
    /* Tail completion: byte 2 = 0x20. */
    {"response_tail_completion",
     {0x90, 0x08, 0x20, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x02},
     16,
     0,
     {.version = V,
      .packet_type = ARB_PT_RESPONSE,
      .message_id = 8,
      .payload_kind = ARB_PK_COMPLETION,
      .offset_a = 1,
      .dtype = ARB_DTYPE_F32}},
    /* Repair credit with a replay: 0x90 | 0x04 | SUM = 0x95; byte 2 = 0x80 |
     * REPLAY 2 << 5 | 0x10 | 0x08 = 0xD8. */
    {"response_repair_replay_ext",
     {0x95, 0x09, 0xD8, 0x00, 0x00, 0x20, 0x00, 0x00, 0x30, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00},
     20,
     8,
     {.version = V,
      .packet_type = ARB_PT_RESPONSE,
      .repair = 1,
      .op = ARB_OP_SUM,
      .message_id = 9,
      .payload_valid = 1,
      .payload_kind = ARB_PK_REPLAY,
      .credit_valid = 1,
      .ext = 1,
      .offset_a = 0x20,
      .offset_b = 0x30,
      .dtype = ARB_DTYPE_F64}},
    /* Bare repair credit: 0x94; byte 2 = 0x10. */
    {"response_repair_bare",
     {0x94, 0x0A, 0x10, 0x00, 0x00, 0x21, 0x00, 0x00, 0x31, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x02},
     16,
     0,
     {.version = V,
      .packet_type = ARB_PT_RESPONSE,
      .repair = 1,
      .message_id = 10,
      .credit_valid = 1,
      .offset_a = 0x21,
      .offset_b = 0x31,
      .dtype = ARB_DTYPE_F32}},
    /* Tail replay: byte 2 = 0x80 | 0x40 = 0xC0; two f32. */
    {"response_tail_replay",
     {0x95, 0x0B, 0xC0, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x02},
     16,
     8,
     {.version = V,
      .packet_type = ARB_PT_RESPONSE,
      .repair = 1,
      .op = ARB_OP_SUM,
      .message_id = 11,
      .payload_valid = 1,
      .payload_kind = ARB_PK_REPLAY,
      .offset_a = 0x22,
      .dtype = ARB_DTYPE_F32}},
    /* type 3: 0x98. */
    {"end",
     {0x98, 0x0C, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x02},
     16,
     0,
     {.version = V,
      .packet_type = ARB_PT_END,
      .message_id = 12,
      .offset_a = 0x200,
      .dtype = ARB_DTYPE_F32}},
    /* type 4: 0xA0; ext. */
    {"end_ack_ext",
     {0xA0, 0x0C, 0x08, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00},
     20,
     0,
     {.version = V,
      .packet_type = ARB_PT_END_ACK,
      .message_id = 12,
      .ext = 1,
      .offset_a = 0x200,
      .dtype = ARB_DTYPE_F32}},
    /* type 6: 0xB0; the location stack it came with is carried, ignored. */
    {"agg_miss",
     {0xB0, 0x0D, 0x00, 0x12, 0x34, 0x56, 0x00, 0x00, 0x00, 0x00, 0x07, 0x02, 0x00, 0x00, 0x00,
      0x02},
     16,
     0,
     {.version = V,
      .packet_type = ARB_PT_AGG_MISS,
      .message_id = 13,
      .offset_a = 0x123456,
      .agg_loc = {7},
      .fanin = {2},
      .dtype = ARB_DTYPE_F32}},
    /* A second attempt's credit: 0x91 (RESPONSE, SUM); byte 2 = credit 0x10 |
     * depth 1 << 1 = 0x12; slot 7, fan-in 31; byte 14 = attempt 3. */
    {"response_credit_attempt",
     {0x91, 0x09, 0x12, 0x00, 0x00, 0x42, 0x00, 0x00, 0x42, 0x00, 0x07, 0x1F, 0x00, 0x00, 0x03,
      0x02},
     16,
     0,
     {.version = V,
      .packet_type = ARB_PT_RESPONSE,
      .op = ARB_OP_SUM,
      .message_id = 9,
      .credit_valid = 1,
      .agg_depth = 1,
      .offset_a = 0x42,
      .offset_b = 0x42,
      .agg_loc = {7},
      .fanin = {31},
      .attempt = 3,
      .dtype = ARB_DTYPE_F32}},
    /* An AGG_MISS names the attempt whose slot was taken: byte 14 = 1. */
    {"agg_miss_attempt",
     {0xB0, 0x09, 0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
      0x02},
     16,
     0,
     {.version = V,
      .packet_type = ARB_PT_AGG_MISS,
      .message_id = 9,
      .offset_a = 0x42,
      .attempt = 1,
      .dtype = ARB_DTYPE_F32}},
};
#undef V
#define N_GOLDEN (sizeof goldens / sizeof goldens[0])

static const struct golden *golden_named(const char *name)
{
    for (size_t g = 0; g < N_GOLDEN; g++)
        if (strcmp(goldens[g].name, name) == 0) return &goldens[g];
    printf("no golden vector %s\n", name);
    exit(2);
}

/* ------------------------------------------------------------------ */
/* Names and lengths                                                    */
/* ------------------------------------------------------------------ */

TEST(names)
{
    for (int t = 0; t < ARB_PT_COUNT; t++)
        CHECK_EQ_I(arb_ptype_parse(arb_ptype_name(t)), t);
    for (int k = 0; k < 4; k++)
        CHECK_EQ_I(arb_pkind_parse(arb_pkind_name(k)), k);
    CHECK_STR(arb_ptype_name(ARB_PT_DATA_REQUEST), "DATA_REQUEST");
    CHECK_STR(arb_ptype_name(ARB_PT_AGG_MISS), "AGG_MISS");
    CHECK_STR(arb_pkind_name(ARB_PK_REPLAY), "REPLAY");
    CHECK_EQ_I(arb_ptype_parse("register_ack"), ARB_PT_REGISTER_ACK);
    CHECK_EQ_I(arb_pkind_parse("Completion"), ARB_PK_COMPLETION);
    CHECK(arb_ptype_name(7) == NULL);
    CHECK(arb_ptype_name(-1) == NULL);
    CHECK_STR(arb_pkind_name(ARB_PK_SEED), "SEED");
    CHECK(arb_pkind_name(4) == NULL);
    CHECK_EQ_I(arb_ptype_parse("REGISTE"), ARB_ENOENT);
    CHECK_EQ_I(arb_ptype_parse("REGISTERX"), ARB_ENOENT);
    CHECK_EQ_I(arb_ptype_parse(""), ARB_ENOENT);
    CHECK_EQ_I(arb_pkind_parse(NULL), ARB_ENOENT);
}

TEST(header_len)
{
    arb_hdr h = {0};
    CHECK_EQ_U(arb_hdr_len(&h), 16);
    h.ext = 1;
    CHECK_EQ_U(arb_hdr_len(&h), 20);
}

/* ------------------------------------------------------------------ */
/* Goldens                                                              */
/* ------------------------------------------------------------------ */

TEST(golden_decode)
{
    int types_seen = 0;
    for (size_t g = 0; g < N_GOLDEN; g++) {
        const struct golden *gv = &goldens[g];
        size_t len, off = 999;
        uint8_t *b = make_packet(gv->bytes, gv->hlen, gv->plen, &len);
        arb_hdr h;
        int rc = arb_hdr_decode(&h, b, len, &off);
        if (rc) printf("  golden %s: %s\n", gv->name, arb_errname(rc));
        CHECK_EQ_I(rc, 0);
        CHECK_EQ_U(off, gv->hlen);
        CHECK_HDR_EQ(&h, &gv->h);
        CHECK_EQ_U(arb_hdr_len(&h), gv->hlen);
        types_seen |= 1 << h.packet_type;
        free(b);
    }
    CHECK_EQ_U(types_seen, 0x7F);
}

TEST(golden_encode)
{
    int sizes_seen = 0;
    for (size_t g = 0; g < N_GOLDEN; g++) {
        const struct golden *gv = &goldens[g];
        uint8_t out[ARB_HDR_LEN_LONG + 4];
        memset(out, 0xEE, sizeof out);
        size_t n = 0;
        CHECK_EQ_I(arb_hdr_encode(&gv->h, gv->plen, out, sizeof out, &n), 0);
        CHECK_EQ_U(n, gv->hlen);
        CHECK(memcmp(out, gv->bytes, gv->hlen) == 0);
        CHECK_EQ_U(out[gv->hlen], 0xEE); /* nothing written past the header */
        /* The independent packer agrees with the hand-written bytes too. */
        uint8_t raw[ARB_HDR_LEN_LONG];
        CHECK_EQ_U(raw_pack(&gv->h, raw), gv->hlen);
        CHECK(memcmp(raw, gv->bytes, gv->hlen) == 0);
        sizes_seen |= 1 << (gv->hlen == 20);
    }
    CHECK_EQ_U(sizes_seen, 3);
}

/* Byte 14 is the attempt: a golden packet with 0xA5 there decodes to
 * attempt 0xA5 where the type carries one (normal credits, normal requests,
 * AGG_MISS), re-encoding the same bytes, and is rejected elsewhere. */
TEST(attempt_byte)
{
    int carried = 0, refused = 0;
    for (size_t g = 0; g < N_GOLDEN; g++) {
        const struct golden *gv = &goldens[g];
        const arb_hdr *w = &gv->h;
        int may = (w->packet_type == ARB_PT_RESPONSE && !w->repair && w->credit_valid) ||
                  (w->packet_type == ARB_PT_DATA_REQUEST && !w->repair) ||
                  w->packet_type == ARB_PT_AGG_MISS;
        uint8_t hb[ARB_HDR_LEN_LONG];
        memcpy(hb, gv->bytes, gv->hlen);
        hb[14] = 0xA5;
        size_t len;
        uint8_t *b = make_packet(hb, gv->hlen, gv->plen, &len);
        arb_hdr h;
        int rc = arb_hdr_decode(&h, b, len, NULL);
        if (may) {
            carried++;
            CHECK_EQ_I(rc, 0);
            CHECK_EQ_U(h.attempt, 0xA5);
            arb_hdr want = *w;
            want.attempt = 0xA5;
            CHECK(arb_hdr_equal(&h, &want));
            uint8_t out[ARB_HDR_LEN_LONG];
            CHECK_EQ_I(arb_hdr_encode(&h, gv->plen, out, sizeof out, NULL), 0);
            CHECK(memcmp(out, hb, gv->hlen) == 0);
        } else {
            refused++;
            CHECK_EQ_I(rc, ARB_EWIRE_ATTEMPT);
        }
        free(b);
    }
    CHECK(carried > 0 && refused > 0);
}

/* arb_hdr_equal looks at every field: changing any one makes it differ. */
TEST(hdr_equal_every_field)
{
    arb_hdr a;
    arb_hdr_init(&a, ARB_PT_DATA_REQUEST, 3, ARB_DTYPE_F32, 1);
    CHECK_EQ_U(a.version, ARB_WIRE_VERSION);
    CHECK_EQ_U(a.ext, 1);
    arb_hdr b = a;
    CHECK(arb_hdr_equal(&a, &b));
    CHECK(!arb_hdr_equal(&a, NULL) && !arb_hdr_equal(NULL, &a));
    uint8_t *fields[] = {&b.version,    &b.packet_type,   &b.repair,       &b.op,
                         &b.message_id, &b.payload_valid, &b.payload_kind, &b.credit_valid,
                         &b.ext,        &b.agg_depth,     &b.aggregated,   &b.fanin[0],
                         &b.fanin[1],   &b.fanin[2],      &b.attempt,      &b.dtype};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        b = a;
        uint8_t *p = (uint8_t *)&b + ((uint8_t *)fields[f] - (uint8_t *)&b);
        (*p)++;
        if (arb_hdr_equal(&a, &b)) TESTKIT_REPORT("field %zu not compared", f);
    }
    b = a, b.offset_a++;
    CHECK(!arb_hdr_equal(&a, &b));
    b = a, b.offset_b++;
    CHECK(!arb_hdr_equal(&a, &b));
    for (int i = 0; i < ARB_MAX_DEPTH; i++) {
        b = a, b.agg_loc[i]++;
        CHECK(!arb_hdr_equal(&a, &b));
    }
}

/* ------------------------------------------------------------------ */
/* Round trips                                                          */
/* ------------------------------------------------------------------ */

TEST(random_round_trips)
{
    arb_rng r;
    arb_rng_seed(&r, 1);
    for (int type = 0; type < ARB_PT_COUNT && !TEST_FAILING(); type++) {
        for (int i = 0; i < 4000 && !TEST_FAILING(); i++) {
            arb_hdr h, d;
            size_t plen = gen_valid(&r, type, &h, i % 16 ? 8 : 4096);
            CHECK_EQ_I(ref_validate(&h, plen), 0);
            uint8_t hb[ARB_HDR_LEN_LONG], raw[ARB_HDR_LEN_LONG];
            size_t n = 0;
            CHECK_EQ_I(arb_hdr_encode(&h, plen, hb, sizeof hb, &n), 0);
            CHECK_EQ_U(n, arb_hdr_len(&h));
            CHECK_EQ_U(raw_pack(&h, raw), n);
            CHECK(memcmp(hb, raw, n) == 0);

            size_t len, off = 0;
            uint8_t *b = make_packet(hb, n, plen, &len);
            CHECK_EQ_I(arb_hdr_decode(&d, b, len, &off), 0);
            CHECK_EQ_U(off, n);
            CHECK(arb_hdr_equal(&d, &h));

            /* encode(decode(bytes)) == bytes */
            uint8_t again[ARB_HDR_LEN_LONG];
            CHECK_EQ_I(arb_hdr_encode(&d, len - off, again, sizeof again, NULL), 0);
            CHECK(memcmp(again, b, n) == 0);
            free(b);
        }
    }
}

/* One field of h set to a value near or beyond the edge of its range. */
static void mutate_field(arb_rng *r, arb_hdr *h)
{
    static const uint32_t offs[] = {0, 1, 2, 0xFFFFFF, 0x1000000, 0xFFFFFFFF};
    uint8_t small = (uint8_t)rnd(r, rnd(r, 8) ? 4 : 256);
    switch (rnd(r, 17)) {
    case 16:
        h->attempt = small;
        break;
    case 0:
        h->version = small;
        break;
    case 1:
        h->packet_type = small;
        break;
    case 2:
        h->repair = small;
        break;
    case 3:
        h->op = small;
        break;
    case 4:
        h->payload_valid = small;
        break;
    case 5:
        h->payload_kind = small;
        break;
    case 6:
        h->credit_valid = small;
        break;
    case 7:
        h->ext = small;
        break;
    case 8:
        h->agg_depth = small;
        break;
    case 9:
        h->aggregated = small;
        break;
    case 10:
        h->offset_a = offs[rnd(r, 6)];
        break;
    case 11:
        h->offset_b = offs[rnd(r, 6)];
        break;
    case 12:
        h->agg_loc[rnd(r, 3)] = (uint16_t)rnd(r, 3);
        break;
    case 13:
        h->fanin[rnd(r, 3)] = (uint8_t)rnd(r, 2);
        break;
    default:
        h->dtype = small;
        break;
    }
}

/*
 * Headers near the valid set (a valid one with a few fields pushed to their
 * edges) and arbitrary ones: the library and the reference reading of the
 * rules must agree on the exact code, and every code must be reached.
 */
TEST(random_fields_match_reference)
{
    arb_rng r;
    arb_rng_seed(&r, 2);
    static const size_t plens[] = {0, 1, 2, 3, 4, 6, 8, 12, 16, 8190, 8192, 8194, 8200};
    long accepted = 0;
    int reached[128] = {0};
    for (int i = 0; i < 400000 && !TEST_FAILING(); i++) {
        arb_hdr h;
        size_t plen;
        if (i % 4) {
            plen = gen_valid(&r, (int)rnd(&r, ARB_PT_COUNT), &h, 8);
            for (uint32_t k = rnd(&r, 3); k > 0; k--)
                mutate_field(&r, &h);
            if (rnd(&r, 8) == 0) plen = plens[rnd(&r, 13)];
        } else {
            memset(&h, 0, sizeof h);
            h.version = (uint8_t)rnd(&r, 5);
            h.packet_type = (uint8_t)rnd(&r, 9);
            h.repair = (uint8_t)rnd(&r, 3);
            h.op = (uint8_t)rnd(&r, 5);
            h.payload_valid = (uint8_t)rnd(&r, 3);
            h.payload_kind = (uint8_t)rnd(&r, 5);
            h.credit_valid = (uint8_t)rnd(&r, 3);
            h.ext = (uint8_t)rnd(&r, 3);
            h.agg_depth = (uint8_t)rnd(&r, 5);
            h.aggregated = (uint8_t)rnd(&r, 3);
            h.offset_a = (uint32_t)arb_rng_next(&r) >> rnd(&r, 9);
            h.offset_b = (uint32_t)(arb_rng_next(&r) >> (32 + rnd(&r, 32))); /* 1..32 bits */
            for (int k = 0; k < 3; k++) {
                h.fanin[k] = (uint8_t)rnd(&r, 3);
                h.agg_loc[k] = (uint16_t)rnd(&r, 2);
            }
            h.dtype = (uint8_t)rnd(&r, 8);
            h.attempt = (uint8_t)(rnd(&r, 2) ? 0 : rnd(&r, 3));
            plen = plens[rnd(&r, 13)];
        }
        int want = ref_validate(&h, plen), got = arb_hdr_validate(&h, plen);
        if (want != got)
            printf("  type %u repair %u credit %u pv %u kind %u: want %s got %s\n", h.packet_type,
                   h.repair, h.credit_valid, h.payload_valid, h.payload_kind, arb_errname(want),
                   arb_errname(got));
        CHECK_EQ_I(got, want);
        reached[-got % 128] = 1;
        if (got == 0) {
            accepted++;
            uint8_t hb[ARB_HDR_LEN_LONG];
            size_t n;
            CHECK_EQ_I(arb_hdr_encode(&h, plen, hb, sizeof hb, &n), 0);
            arb_hdr d;
            size_t len;
            uint8_t *b = make_packet(hb, n, plen, &len);
            CHECK_EQ_I(arb_hdr_decode(&d, b, len, NULL), 0);
            CHECK(arb_hdr_equal(&d, &h));
            free(b);
        }
    }
    CHECK(accepted > 10000);
    CHECK(reached[-ARB_ERANGE]);
    /* every 2-bit payload_kind is a kind: EWIRE_KIND guards wider values,
     * which ERANGE refuses first */
    for (int c = ARB_EWIRE_VERSION; c >= ARB_EWIRE_ATTEMPT; c--)
        if (!reached[-c % 128] && c != ARB_EWIRE_KIND)
            TESTKIT_REPORT("never reached %s", arb_errname(c));
}

/* Arbitrary bytes: decode agrees with the reference applied to the raw
 * fields, and every accepted packet re-encodes to itself. */
TEST(random_bytes_match_reference)
{
    arb_rng r;
    arb_rng_seed(&r, 3);
    long accepted = 0;
    for (int i = 0; i < 200000 && !TEST_FAILING(); i++) {
        uint8_t tmp[64];
        size_t len = rnd(&r, 4) ? 16 + rnd(&r, 24) : rnd(&r, 40);
        for (size_t k = 0; k < len; k++)
            tmp[k] = (uint8_t)rnd(&r, 256);
        /* Steer towards plausible headers so that deep rules get reached. */
        if (len > 0 && rnd(&r, 4)) tmp[0] = (uint8_t)(0x80 | (tmp[0] & 0x3F));
        if (len > 2 && rnd(&r, 2)) tmp[2] &= 0x9F;
        if (len > 15 && rnd(&r, 2)) tmp[15] %= 6;
        if (len > 14 && rnd(&r, 2)) tmp[14] = 0;
        uint8_t *b = dup_exact(tmp, len);
        arb_hdr h;
        size_t off = 0;
        int got = arb_hdr_decode(&h, b, len, &off);
        size_t hl = len >= 3 && (tmp[2] & 8) ? 20 : 16;
        int want;
        if (len < 3 || len < hl) {
            want = ARB_EWIRE_SHORT;
        } else {
            arb_hdr ref = {0};
            ref.version = tmp[0] >> 6;
            ref.packet_type = tmp[0] >> 3 & 7;
            ref.repair = tmp[0] >> 2 & 1;
            ref.op = tmp[0] & 3;
            ref.payload_valid = tmp[2] >> 7;
            ref.payload_kind = tmp[2] >> 5 & 3;
            ref.offset_a = (uint32_t)tmp[3] << 16 | (uint32_t)tmp[4] << 8 | tmp[5];
            ref.credit_valid = tmp[2] >> 4 & 1;
            ref.ext = tmp[2] >> 3 & 1;
            ref.agg_depth = tmp[2] >> 1 & 3;
            ref.aggregated = tmp[2] & 1;
            ref.offset_b = (uint32_t)tmp[6] << 16 | (uint32_t)tmp[7] << 8 | tmp[8];
            memcpy(ref.fanin, tmp + 11, 3);
            ref.attempt = tmp[14];
            ref.dtype = tmp[15];
            want = ref_validate(&ref, len - hl);
        }
        CHECK_EQ_I(got, want);
        if (got == 0) {
            accepted++;
            CHECK_EQ_U(off, hl);
            uint8_t out[ARB_HDR_LEN_LONG];
            CHECK_EQ_I(arb_hdr_encode(&h, len - off, out, sizeof out, NULL), 0);
            CHECK(memcmp(out, tmp, hl) == 0);
        }
        free(b);
    }
    CHECK(accepted > 100);
}

/* ------------------------------------------------------------------ */
/* Bit flips and cuts                                                   */
/* ------------------------------------------------------------------ */

/*
 * Flip every bit of packet b[0..len) in turn. The decoder must either
 * reject with an ARB_EWIRE_* code, or accept a header that re-validates and
 * re-encodes to the flipped bytes.
 * Returns the number of accepted flips.
 */
static long flip_every_bit(const uint8_t *pkt, size_t len)
{
    long accepted = 0;
    uint8_t *b = dup_exact(pkt, len);
    for (size_t bit = 0; bit < len * 8 && !TEST_FAILING(); bit++) {
        b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        arb_hdr h;
        size_t off = 0;
        int rc = arb_hdr_decode(&h, b, len, &off);
        if (rc) {
            CHECK(is_wire_error(rc));
        } else {
            accepted++;
            CHECK_EQ_U(off, arb_hdr_len(&h));
            CHECK_EQ_I(arb_hdr_validate(&h, len - off), 0);
            uint8_t out[ARB_HDR_LEN_LONG], want[ARB_HDR_LEN_LONG];
            CHECK_EQ_I(arb_hdr_encode(&h, len - off, out, sizeof out, NULL), 0);
            memcpy(want, b, off);
            CHECK(memcmp(out, want, off) == 0);
        }
        b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    free(b);
    return accepted;
}

TEST(bit_flips_golden)
{
    long accepted = 0;
    for (size_t g = 0; g < N_GOLDEN; g++) {
        size_t len;
        uint8_t *b = make_packet(goldens[g].bytes, goldens[g].hlen, goldens[g].plen, &len);
        accepted += flip_every_bit(b, len);
        free(b);
    }
    /* Many fields are free (message_id, offset_a, ...): flips there stay
     * valid, so both outcomes are exercised. */
    CHECK(accepted > 100);
}

TEST(bit_flips_random)
{
    arb_rng r;
    arb_rng_seed(&r, 4);
    for (int i = 0; i < 3000 && !TEST_FAILING(); i++) {
        arb_hdr h;
        size_t plen = gen_valid(&r, i % ARB_PT_COUNT, &h, 4);
        uint8_t hb[ARB_HDR_LEN_LONG];
        size_t n, len;
        CHECK_EQ_I(arb_hdr_encode(&h, plen, hb, sizeof hb, &n), 0);
        uint8_t *b = make_packet(hb, n, plen, &len);
        flip_every_bit(b, len);
        free(b);
    }
}

/* Every prefix of a valid packet: inside the header it is SHORT; inside
 * the payload it is accepted exactly at element boundaries. */
static void cut_everywhere(const uint8_t *pkt, size_t len, const arb_hdr *h)
{
    size_t hl = arb_hdr_len(h), es = arb_dtype_size(h->dtype);
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *b = dup_exact(pkt, cut);
        arb_hdr d;
        int rc = arb_hdr_decode(&d, b, cut, NULL);
        free(b);
        if (cut < hl)
            CHECK_EQ_I(rc, ARB_EWIRE_SHORT);
        else if (cut == hl)
            CHECK_EQ_I(rc, ARB_EWIRE_PAYLOAD_MISSING); /* only payloads are cut here */
        else if ((cut - hl) % es)
            CHECK_EQ_I(rc, ARB_EWIRE_PAYLOAD_ALIGN);
        else
            CHECK_EQ_I(rc, 0);
    }
}

TEST(cuts_golden)
{
    for (size_t g = 0; g < N_GOLDEN; g++) {
        size_t len;
        uint8_t *b = make_packet(goldens[g].bytes, goldens[g].hlen, goldens[g].plen, &len);
        cut_everywhere(b, len, &goldens[g].h);
        free(b);
    }
}

TEST(cuts_random)
{
    arb_rng r;
    arb_rng_seed(&r, 5);
    for (int i = 0; i < 2000 && !TEST_FAILING(); i++) {
        arb_hdr h;
        size_t plen = gen_valid(&r, i % ARB_PT_COUNT, &h, 6);
        uint8_t hb[ARB_HDR_LEN_LONG];
        size_t n, len;
        CHECK_EQ_I(arb_hdr_encode(&h, plen, hb, sizeof hb, &n), 0);
        uint8_t *b = make_packet(hb, n, plen, &len);
        cut_everywhere(b, len, &h);
        free(b);
    }
}

TEST(short_buffers)
{
    arb_hdr h;
    CHECK_EQ_I(arb_hdr_decode(&h, NULL, 0, NULL), ARB_EWIRE_SHORT);
    /* Two bytes: the ext bit is not yet readable. */
    uint8_t *b = dup_exact((const uint8_t[]){0x98, 0x00}, 2);
    CHECK_EQ_I(arb_hdr_decode(&h, b, 2, NULL), ARB_EWIRE_SHORT);
    free(b);
    /* 16 bytes with ext set: the long header is 4 bytes short. */
    uint8_t hb[16];
    memcpy(hb, golden_named("register")->bytes, 16);
    hb[2] |= 0x08;
    b = dup_exact(hb, 16);
    CHECK_EQ_I(arb_hdr_decode(&h, b, 16, NULL), ARB_EWIRE_SHORT);
    free(b);
    /* The same with ext clear is a whole REGISTER. */
    b = dup_exact(golden_named("register")->bytes, 16);
    CHECK_EQ_I(arb_hdr_decode(&h, b, 16, NULL), 0);
    free(b);
}

/* ------------------------------------------------------------------ */
/* Rejections, one rule at a time                                       */
/* ------------------------------------------------------------------ */

/* A valid header of each table row, header-only where the row allows it. */
static arb_hdr row_base(int type, int repair, int credit)
{
    arb_hdr h = {.version = ARB_WIRE_VERSION,
                 .packet_type = (uint8_t)type,
                 .repair = (uint8_t)repair,
                 .credit_valid = (uint8_t)credit,
                 .offset_a = 0x10,
                 .dtype = ARB_DTYPE_F32};
    if (type == ARB_PT_DATA_REQUEST) h.offset_b = 1;
    if (type == ARB_PT_RESPONSE && credit) h.offset_b = 0x11;
    if (type == ARB_PT_RESPONSE && !credit) {
        /* Tails carry a result (tail replay allows nothing else). */
        h.payload_valid = 1;
        h.payload_kind = repair ? ARB_PK_REPLAY : ARB_PK_DATA;
    }
    return h;
}

/* The rules shared by REGISTER, the acks, END and AGG_MISS. */
static void check_control_row(int type, int repair)
{
    arb_hdr b = row_base(type, repair, 0), h;
    EXPECT_ACCEPT(&b, 0);
    h = b, h.repair = (uint8_t)!repair;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_REPAIR);
    h = b, h.credit_valid = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_CREDIT);
    h = b, h.payload_valid = 1;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_kind = ARB_PK_COMPLETION;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_kind = ARB_PK_REPLAY;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.agg_depth = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_DEPTH);
    h = b, h.ext = 1, h.agg_depth = 3;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_DEPTH);
    h = b, h.aggregated = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_AGGREGATED);
    h = b, h.offset_b = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_OFFSET_B);
    for (int op = 1; op < 4; op++) {
        h = b, h.op = (uint8_t)op;
        EXPECT_REJECT(&h, 0, ARB_EWIRE_OP);
    }
    h = b, h.fanin[0] = 0, h.agg_loc[0] = 0xFFFF; /* ignored */
    EXPECT_ACCEPT(&h, 0);
    h = b, h.attempt = 1;
    if (type == ARB_PT_AGG_MISS) /* names the attempt it missed */
        EXPECT_ACCEPT(&h, 0);
    else
        EXPECT_REJECT(&h, 0, ARB_EWIRE_ATTEMPT);
    h = b;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_PAYLOAD_UNEXPECTED);
}

/* Each row of the table: attempt 0 everywhere; nonzero only on a normal
 * credit, a normal request and AGG_MISS. */
TEST(attempt_by_row)
{
    static const struct {
        int type, repair, credit, may;
    } rows[] = {
        {ARB_PT_REGISTER, 1, 0, 0},     {ARB_PT_REGISTER_ACK, 1, 0, 0},
        {ARB_PT_END, 0, 0, 0},          {ARB_PT_END_ACK, 0, 0, 0},
        {ARB_PT_AGG_MISS, 0, 0, 1},     {ARB_PT_DATA_REQUEST, 0, 0, 1},
        {ARB_PT_DATA_REQUEST, 1, 0, 0}, {ARB_PT_RESPONSE, 0, 1, 1},
        {ARB_PT_RESPONSE, 0, 0, 0},     {ARB_PT_RESPONSE, 1, 1, 0},
        {ARB_PT_RESPONSE, 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        arb_hdr h = row_base(rows[i].type, rows[i].repair, rows[i].credit);
        size_t plen = h.payload_valid ? 4 : 0;
        EXPECT_ACCEPT(&h, plen);
        for (unsigned a = 1; a <= ARB_ATTEMPT_MAX; a += 127) {
            h.attempt = (uint8_t)a;
            if (rows[i].may)
                EXPECT_ACCEPT(&h, plen);
            else
                EXPECT_REJECT(&h, plen, ARB_EWIRE_ATTEMPT);
        }
    }
}

TEST(reject_register)
{
    check_control_row(ARB_PT_REGISTER, 1);
}

TEST(reject_register_ack)
{
    check_control_row(ARB_PT_REGISTER_ACK, 1);
}

TEST(reject_end)
{
    check_control_row(ARB_PT_END, 0);
}

TEST(reject_end_ack)
{
    check_control_row(ARB_PT_END_ACK, 0);
}

TEST(reject_agg_miss)
{
    check_control_row(ARB_PT_AGG_MISS, 0);
}

TEST(reject_request_normal)
{
    arb_hdr b = row_base(ARB_PT_DATA_REQUEST, 0, 0), h;
    EXPECT_ACCEPT(&b, 0);
    h = b, h.payload_valid = 1;
    EXPECT_ACCEPT(&h, 4);
    h = b, h.credit_valid = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_CREDIT);
    h = b, h.payload_kind = ARB_PK_COMPLETION;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_valid = 1, h.payload_kind = ARB_PK_REPLAY;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.offset_b = 0;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_OFFSET_B);
    h = b, h.offset_b = 0xFFFFFF;
    EXPECT_ACCEPT(&h, 0);
    h = b, h.aggregated = 1;
    EXPECT_ACCEPT(&h, 0);
    for (int op = 0; op < 4; op++) {
        h = b, h.op = (uint8_t)op;
        EXPECT_ACCEPT(&h, 0);
    }
    h = b, h.ext = 1, h.agg_depth = 3, h.fanin[0] = h.fanin[1] = h.fanin[2] = 1;
    EXPECT_ACCEPT(&h, 0);
}

TEST(reject_request_repair)
{
    arb_hdr b = row_base(ARB_PT_DATA_REQUEST, 1, 0), h;
    EXPECT_ACCEPT(&b, 0);
    h = b, h.payload_valid = 1, h.op = ARB_OP_MIN;
    EXPECT_ACCEPT(&h, 8);
    h = b, h.credit_valid = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_CREDIT);
    h = b, h.payload_kind = ARB_PK_COMPLETION;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.agg_depth = 1, h.fanin[0] = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_DEPTH);
    h = b, h.aggregated = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_AGGREGATED);
    h = b, h.offset_b = 0;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_OFFSET_B);
    h = b, h.offset_b = 2;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_OFFSET_B);
}

TEST(reject_response_credit)
{
    arb_hdr b = row_base(ARB_PT_RESPONSE, 0, 1), h;
    EXPECT_ACCEPT(&b, 0); /* bare credit */
    h = b, h.payload_valid = 1;
    EXPECT_ACCEPT(&h, 4);
    h = b, h.payload_kind = ARB_PK_COMPLETION;
    EXPECT_ACCEPT(&h, 0);
    h = b, h.payload_valid = 1, h.payload_kind = ARB_PK_COMPLETION;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_valid = 1, h.payload_kind = ARB_PK_REPLAY;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_kind = ARB_PK_REPLAY;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.ext = 1, h.agg_depth = 3; /* fanin ignored on responses */
    EXPECT_ACCEPT(&h, 0);
    h = b, h.aggregated = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_AGGREGATED);
    h = b, h.offset_b = 0, h.offset_a = 0xFFFFFF;
    EXPECT_ACCEPT(&h, 0);
}

TEST(reject_response_tail)
{
    arb_hdr b = row_base(ARB_PT_RESPONSE, 0, 0), h;
    EXPECT_ACCEPT(&b, 4);
    h = b, h.payload_valid = 0, h.payload_kind = ARB_PK_COMPLETION;
    EXPECT_ACCEPT(&h, 0);
    h = b, h.payload_valid = 0; /* a bare tail carries nothing at all */
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_kind = ARB_PK_REPLAY;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.agg_depth = 1;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_DEPTH);
    h = b, h.aggregated = 1;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_AGGREGATED);
    h = b, h.offset_b = 1;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_OFFSET_B);
}

TEST(reject_response_repair)
{
    arb_hdr b = row_base(ARB_PT_RESPONSE, 1, 1), h;
    EXPECT_ACCEPT(&b, 0);
    h = b, h.payload_valid = 1, h.payload_kind = ARB_PK_REPLAY;
    EXPECT_ACCEPT(&h, 4);
    h = b, h.payload_valid = 1;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_kind = ARB_PK_COMPLETION;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_kind = ARB_PK_REPLAY;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.agg_depth = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_DEPTH);
    h = b, h.aggregated = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_AGGREGATED);
    h = b, h.offset_b = 0;
    EXPECT_ACCEPT(&h, 0);
}

TEST(reject_response_tail_replay)
{
    arb_hdr b = row_base(ARB_PT_RESPONSE, 1, 0), h;
    EXPECT_ACCEPT(&b, 4);
    h = b, h.payload_kind = ARB_PK_DATA;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_valid = 0, h.payload_kind = ARB_PK_DATA;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_valid = 0, h.payload_kind = ARB_PK_COMPLETION;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.agg_depth = 1;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_DEPTH);
    h = b, h.aggregated = 1;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_AGGREGATED);
    h = b, h.offset_b = 5;
    EXPECT_REJECT(&h, 4, ARB_EWIRE_OFFSET_B);
}

TEST(reject_header_fields)
{
    arb_hdr b = row_base(ARB_PT_DATA_REQUEST, 0, 0), h;
    for (int v = 0; v < 4; v++) {
        h = b, h.version = (uint8_t)v;
        if (v == 2)
            EXPECT_ACCEPT(&h, 0);
        else
            EXPECT_REJECT(&h, 0, ARB_EWIRE_VERSION);
    }
    h = b, h.packet_type = 7;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_TYPE);
    /* kind 3 (SEED) on a request only as a switch's aggregate */
    h = b, h.payload_kind = ARB_PK_SEED, h.aggregated = 0;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.payload_kind = ARB_PK_SEED, h.aggregated = 1;
    EXPECT_ACCEPT(&h, 0);
    /* on a credit, only its own offset's: offset_a = offset_b */
    arb_hdr c = row_base(ARB_PT_RESPONSE, 0, 1);
    c.payload_kind = ARB_PK_SEED, c.offset_a = 5, c.offset_b = 5;
    EXPECT_ACCEPT(&c, 0);
    c.offset_a = 4;
    EXPECT_REJECT(&c, 0, ARB_EWIRE_PAYLOAD_FLAG);
    c = row_base(ARB_PT_RESPONSE, 0, 0); /* a tail carries no seed */
    c.payload_kind = ARB_PK_SEED;
    EXPECT_REJECT(&c, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = b, h.agg_depth = 2, h.fanin[0] = h.fanin[1] = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_DEPTH_EXT);
    h.agg_depth = 3;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_DEPTH_EXT);
    h.ext = 1, h.fanin[2] = 1;
    EXPECT_ACCEPT(&h, 0);
    h = b, h.agg_depth = 1, h.fanin[0] = 1; /* one tier fits the short header */
    EXPECT_ACCEPT(&h, 0);
    for (int d = 6; d < 256; d++) {
        h = b, h.dtype = (uint8_t)d;
        EXPECT_REJECT(&h, 0, ARB_EWIRE_DTYPE);
    }
    /* The checks run in the documented order: the first broken rule wins. */
    h = b, h.version = 1, h.packet_type = 7;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_VERSION);
    h = b, h.packet_type = 7, h.payload_kind = 3;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_TYPE);
    h = b, h.agg_depth = 2, h.dtype = 9;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_DEPTH_EXT);
    h = b, h.dtype = 9, h.credit_valid = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_DTYPE);
    h = row_base(ARB_PT_END, 0, 0), h.repair = 1, h.credit_valid = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_REPAIR);
    h = b, h.credit_valid = 1, h.payload_kind = ARB_PK_REPLAY;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_CREDIT);
    h = b, h.payload_kind = ARB_PK_REPLAY, h.agg_depth = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_FLAG);
    h = row_base(ARB_PT_DATA_REQUEST, 1, 0), h.agg_depth = 1, h.aggregated = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_DEPTH);
    h = row_base(ARB_PT_DATA_REQUEST, 1, 0), h.aggregated = 1, h.offset_b = 0;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_AGGREGATED);
    h = row_base(ARB_PT_END, 0, 0), h.offset_b = 3, h.op = ARB_OP_SUM;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_OFFSET_B);
    h = b, h.agg_depth = 1, h.offset_b = 0;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_OFFSET_B); /* before the fan-in */
    h = b, h.agg_depth = 1, h.payload_valid = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_FANIN); /* before the payload */
}

TEST(reject_fanin)
{
    arb_hdr b = row_base(ARB_PT_DATA_REQUEST, 0, 0), h;
    b.ext = 1;
    for (int depth = 1; depth <= 3; depth++)
        for (int zero = 0; zero < 3; zero++) {
            h = b;
            h.agg_depth = (uint8_t)depth;
            h.fanin[0] = h.fanin[1] = h.fanin[2] = 255;
            h.fanin[zero] = 0;
            if (zero < depth)
                EXPECT_REJECT(&h, 0, ARB_EWIRE_FANIN);
            else
                EXPECT_ACCEPT(&h, 0); /* at or above agg_depth: ignored */
        }
    /* Responses are not checked: their fan-in is filled in by requesters. */
    h = row_base(ARB_PT_RESPONSE, 0, 1), h.ext = 1, h.agg_depth = 3;
    EXPECT_ACCEPT(&h, 0);
}

TEST(reject_payload)
{
    arb_hdr h = row_base(ARB_PT_DATA_REQUEST, 0, 0);
    h.payload_valid = 1;
    EXPECT_REJECT(&h, 0, ARB_EWIRE_PAYLOAD_MISSING);
    for (int dt = 0; dt < ARB_DTYPE_COUNT; dt++) {
        h.dtype = (uint8_t)dt;
        size_t es = arb_dtype_size(dt);
        EXPECT_ACCEPT(&h, es);
        EXPECT_ACCEPT(&h, ARB_PAYLOAD_MAX);
        for (size_t k = 1; k < es; k++) {
            EXPECT_REJECT(&h, k, ARB_EWIRE_PAYLOAD_ALIGN);
            EXPECT_REJECT(&h, 3 * es + k, ARB_EWIRE_PAYLOAD_ALIGN);
        }
        EXPECT_REJECT(&h, ARB_PAYLOAD_MAX + es, ARB_EWIRE_PAYLOAD_TOO_LONG);
        if (es > 1) /* misalignment is reported before length */
            EXPECT_REJECT(&h, ARB_PAYLOAD_MAX + 1, ARB_EWIRE_PAYLOAD_ALIGN);
    }
    h.payload_valid = 0;
    EXPECT_REJECT(&h, 1, ARB_EWIRE_PAYLOAD_UNEXPECTED);
    EXPECT_REJECT(&h, 8, ARB_EWIRE_PAYLOAD_UNEXPECTED);
    h.dtype = ARB_DTYPE_F32;
    CHECK_EQ_I(arb_hdr_validate(&h, (size_t)-1), ARB_EWIRE_PAYLOAD_UNEXPECTED);
    h.payload_valid = 1;
    CHECK_EQ_I(arb_hdr_validate(&h, (size_t)-4), ARB_EWIRE_PAYLOAD_TOO_LONG);
}

TEST(reject_out_of_range_fields)
{
    arb_hdr b = row_base(ARB_PT_DATA_REQUEST, 0, 0), h;
    struct {
        uint8_t *field;
        uint8_t bad;
    } narrow[] = {
        {&h.version, 4},       {&h.packet_type, 8},  {&h.repair, 2},       {&h.op, 4},
        {&h.payload_valid, 2}, {&h.payload_kind, 4}, {&h.credit_valid, 2}, {&h.ext, 2},
        {&h.agg_depth, 4},     {&h.aggregated, 2},
    };
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++) {
        h = b;
        *narrow[i].field = narrow[i].bad;
        CHECK_EQ_I(arb_hdr_validate(&h, 0), ARB_ERANGE);
        CHECK_EQ_I(encode_rc(&h, 0), ARB_ERANGE);
        h = b;
        *narrow[i].field = 255;
        CHECK_EQ_I(arb_hdr_validate(&h, 0), ARB_ERANGE);
    }
    h = b, h.offset_a = 0x1000000;
    CHECK_EQ_I(arb_hdr_validate(&h, 0), ARB_ERANGE);
    h = b, h.offset_b = 0xFFFFFFFF;
    CHECK_EQ_I(arb_hdr_validate(&h, 0), ARB_ERANGE);
    /* A 16 B header has no room for agg_loc[1] / [2]. */
    h = b, h.agg_loc[1] = 1;
    CHECK_EQ_I(arb_hdr_validate(&h, 0), ARB_ERANGE);
    h = b, h.agg_loc[2] = 0x8000;
    CHECK_EQ_I(encode_rc(&h, 0), ARB_ERANGE);
    h.ext = 1;
    EXPECT_ACCEPT(&h, 0);
    /* Range comes first of all. */
    h = b, h.version = 0, h.op = 4;
    CHECK_EQ_I(arb_hdr_validate(&h, 0), ARB_ERANGE);
}

TEST(encode_errors)
{
    arb_hdr h = golden_named("request_ext_depth3")->h; /* 20 B, 16 B payload */
    uint8_t buf[ARB_HDR_LEN_LONG];
    size_t n = 77;
    CHECK_EQ_I(arb_hdr_encode(&h, 16, buf, 19, &n), ARB_ENOSPC);
    CHECK_EQ_U(n, 77);
    CHECK_EQ_I(arb_hdr_encode(&h, 16, buf, 20, NULL), 0);
    /* Validation comes before the capacity check. */
    CHECK_EQ_I(arb_hdr_encode(&h, 3, buf, 0, NULL), ARB_EWIRE_PAYLOAD_ALIGN);
    CHECK_EQ_I(arb_hdr_encode(NULL, 0, buf, sizeof buf, NULL), ARB_EINVAL);
    CHECK_EQ_I(arb_hdr_encode(&h, 16, NULL, sizeof buf, NULL), ARB_EINVAL);
    CHECK_EQ_I(arb_hdr_validate(NULL, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_hdr_decode(NULL, buf, sizeof buf, NULL), ARB_EINVAL);
    h = golden_named("register")->h;
    CHECK_EQ_I(arb_hdr_encode(&h, 0, buf, 16, &n), 0);
    CHECK_EQ_U(n, 16);
}

/* ------------------------------------------------------------------ */
/* Framing                                                              */
/* ------------------------------------------------------------------ */

TEST(inet_checksum_known)
{
    /* RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to ddf2. */
    static const uint8_t rfc[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    CHECK_EQ_U(arb_inet_checksum(rfc, sizeof rfc), 0x220d);
    /* A textbook IPv4 header (192.168.0.1 -> 192.168.0.199) with checksum b861. */
    uint8_t ip[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                    0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    CHECK_EQ_U(arb_inet_checksum(ip, sizeof ip), 0);
    ip[10] = ip[11] = 0;
    CHECK_EQ_U(arb_inet_checksum(ip, sizeof ip), 0xb861);
    /* Odd length: the last byte is the high half of a zero-padded word. */
    static const uint8_t one[] = {0x01};
    CHECK_EQ_U(arb_inet_checksum(one, 1), 0xFEFF);
    CHECK_EQ_U(arb_inet_checksum(rfc, 0), 0xFFFF);
    /* 0001 + f203 + f4f5 + f600 = 2dcf9, folded dcfb, complemented 2304. */
    CHECK_EQ_U(arb_inet_checksum(rfc, 7), 0x2304);
}

/*
 * One END packet (golden "end") from 10.0.0.1:49152 to 10.0.0.2:17470.
 * IPv4 checksum: 4500 + 002c + 1234 + 4000 + 4011 + 0a00 + 0001 + 0a00 +
 * 0002 = eb74, so ~eb74 = 148b.
 * UDP checksum: pseudo-header 0a00 + 0001 + 0a00 + 0002 + 0011 + 0018 =
 * 142c; UDP header c000 + 443e + 0018 = 10456; payload 980c + 0200 + 0002 =
 * 9a0e; total 1b290, folded b291, so ~b291 = 4d6e.
 */
static const uint8_t golden_frame[] = {
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, /* eth */
    0x45, 0x00, 0x00, 0x2c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x14, 0x8b, 0x0a, 0x00, 0x00, 0x01,
    0x0a, 0x00, 0x00, 0x02,                         /* ip */
    0xc0, 0x00, 0x44, 0x3e, 0x00, 0x18, 0x4d, 0x6e, /* udp */
    0x98, 0x0C, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02};

static const arb_frame_addr golden_addr = {.eth_dst = {2, 0, 0, 0, 0, 2},
                                           .eth_src = {2, 0, 0, 0, 0, 1},
                                           .ip_src = 0x0A000001,
                                           .ip_dst = 0x0A000002,
                                           .udp_src = 49152,
                                           .udp_dst = ARB_UDP_PORT_DEFAULT,
                                           .ip_ttl = 64,
                                           .ip_tos = 0,
                                           .ip_id = 0x1234};

static int addr_same(const arb_frame_addr *a, const arb_frame_addr *b)
{
    return memcmp(a->eth_dst, b->eth_dst, 6) == 0 && memcmp(a->eth_src, b->eth_src, 6) == 0 &&
           a->ip_src == b->ip_src && a->ip_dst == b->ip_dst && a->udp_src == b->udp_src &&
           a->udp_dst == b->udp_dst && a->ip_ttl == b->ip_ttl && a->ip_tos == b->ip_tos &&
           a->ip_id == b->ip_id;
}

static int parse_copy(const uint8_t *f, size_t len)
{
    uint8_t *b = dup_exact(f, len);
    const uint8_t *p;
    size_t pl;
    int rc = arb_frame_parse(b, len, NULL, &p, &pl);
    free(b);
    return rc;
}

static void fix_ip_checksum(uint8_t *f)
{
    f[24] = f[25] = 0;
    uint16_t c = arb_inet_checksum(f + 14, 20);
    f[24] = (uint8_t)(c >> 8);
    f[25] = (uint8_t)c;
}

TEST(frame_golden)
{
    CHECK_EQ_U(sizeof golden_frame, 58); /* the single-tier profile's 58 B of headers */
    uint8_t buf[128];
    size_t n = 0;
    CHECK_EQ_I(arb_frame_build(&golden_addr, golden_named("end")->bytes, 16, buf, sizeof buf, &n),
               0);
    CHECK_EQ_U(n, sizeof golden_frame);
    CHECK(memcmp(buf, golden_frame, sizeof golden_frame) == 0);

    uint8_t *f = dup_exact(golden_frame, sizeof golden_frame);
    arb_frame_addr a;
    const uint8_t *p = NULL;
    size_t pl = 0;
    REQUIRE_EQ_I(arb_frame_parse(f, sizeof golden_frame, &a, &p, &pl), 0);
    CHECK(addr_same(&a, &golden_addr));
    CHECK(p == f + 42);
    CHECK_EQ_U(pl, 16);
    arb_hdr h;
    CHECK_EQ_I(arb_hdr_decode(&h, p, pl, NULL), 0);
    CHECK(arb_hdr_equal(&h, &golden_named("end")->h));
    free(f);
}

TEST(frame_round_trips)
{
    arb_rng r;
    arb_rng_seed(&r, 6);
    static uint8_t buf[ARB_FRAME_OVERHEAD + 9000], payload[9000];
    for (int i = 0; i < 3000 && !TEST_FAILING(); i++) {
        arb_frame_addr a, got;
        for (int k = 0; k < 6; k++) {
            a.eth_dst[k] = (uint8_t)rnd(&r, 256);
            a.eth_src[k] = (uint8_t)rnd(&r, 256);
        }
        a.ip_src = (uint32_t)arb_rng_next(&r);
        a.ip_dst = (uint32_t)arb_rng_next(&r);
        a.udp_src = (uint16_t)rnd(&r, 65536);
        a.udp_dst = (uint16_t)rnd(&r, 65536);
        a.ip_ttl = (uint8_t)rnd(&r, 256);
        a.ip_tos = (uint8_t)rnd(&r, 256);
        a.ip_id = (uint16_t)rnd(&r, 65536);
        size_t len = i % 10 ? rnd(&r, 100) : rnd(&r, sizeof payload + 1);
        for (size_t k = 0; k < len; k++)
            payload[k] = (uint8_t)rnd(&r, 256);
        size_t n = 0;
        CHECK_EQ_I(arb_frame_build(&a, payload, len, buf, sizeof buf, &n), 0);
        CHECK_EQ_U(n, ARB_FRAME_OVERHEAD + len);
        CHECK(buf[40] || buf[41]); /* a UDP checksum is always sent */
        uint8_t *f = dup_exact(buf, n);
        const uint8_t *p;
        size_t pl;
        REQUIRE_EQ_I(arb_frame_parse(f, n, &got, &p, &pl), 0);
        if (a.ip_ttl == 0) a.ip_ttl = 64;
        CHECK(addr_same(&a, &got));
        CHECK_EQ_U(pl, len);
        CHECK(p == f + ARB_FRAME_OVERHEAD);
        CHECK(len == 0 || memcmp(p, payload, len) == 0);
        /* Every single-bit error inside the IP datagram is caught. */
        if (i % 50 == 0 && n < 200)
            for (size_t bit = ARB_ETH_LEN * 8; bit < n * 8; bit++) {
                f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
                int rc = arb_frame_parse(f, n, NULL, NULL, NULL);
                if (f[40] == 0 && f[41] == 0)
                    CHECK_EQ_I(rc, 0); /* the flip turned the checksum off */
                else
                    CHECK(is_frame_error(rc));
                f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            }
        free(f);
    }
}

TEST(frame_build_details)
{
    uint8_t buf[ARB_FRAME_OVERHEAD + 64], payload[16] = {1, 2, 3};
    arb_frame_addr a = golden_addr;
    a.ip_ttl = 0;
    size_t n;
    CHECK_EQ_I(arb_frame_build(&a, payload, 16, buf, sizeof buf, &n), 0);
    CHECK_EQ_U(buf[22], 64);   /* ttl 0 is sent as 64 */
    CHECK_EQ_U(buf[20], 0x40); /* DF */
    CHECK_EQ_U(buf[21], 0x00);
    CHECK_EQ_I(arb_frame_build(&a, payload, 16, buf, ARB_FRAME_OVERHEAD + 15, &n), ARB_ENOSPC);
    CHECK_EQ_I(arb_frame_build(&a, payload, 65508, buf, sizeof buf, &n), ARB_ERANGE);
    CHECK_EQ_I(arb_frame_build(&a, NULL, 0, buf, ARB_FRAME_OVERHEAD, &n), 0);
    CHECK_EQ_U(n, ARB_FRAME_OVERHEAD);
    CHECK_EQ_I(parse_copy(buf, n), 0);
    CHECK_EQ_I(arb_frame_build(NULL, payload, 16, buf, sizeof buf, &n), ARB_EINVAL);
    CHECK_EQ_I(arb_frame_build(&a, NULL, 16, buf, sizeof buf, &n), ARB_EINVAL);
    CHECK_EQ_I(arb_frame_build(&a, payload, 16, NULL, sizeof buf, &n), ARB_EINVAL);
    CHECK_EQ_I(arb_frame_build(&a, payload, 16, buf, sizeof buf, NULL), 0);
    CHECK_EQ_I(arb_frame_parse(NULL, 5, NULL, NULL, NULL), ARB_EINVAL);

    /* The largest datagram IPv4 carries: total length 0xFFFF. */
    size_t big_len = 65535 - 28;
    uint8_t *big = calloc(1, ARB_FRAME_OVERHEAD + big_len);
    CHECK(big != NULL);
    if (big) {
        CHECK_EQ_I(arb_frame_build(&a, big + ARB_FRAME_OVERHEAD, big_len, big,
                                   ARB_FRAME_OVERHEAD + big_len, &n),
                   0);
        CHECK_EQ_U(big[16], 0xFF);
        CHECK_EQ_U(big[17], 0xFF);
        const uint8_t *p;
        size_t pl;
        REQUIRE_EQ_I(arb_frame_parse(big, n, NULL, &p, &pl), 0);
        CHECK_EQ_U(pl, big_len);
        free(big);
    }

    /* Building in place: the payload already sits where it belongs. */
    uint8_t inplace[ARB_FRAME_OVERHEAD + 16];
    memcpy(inplace + ARB_FRAME_OVERHEAD, golden_named("end")->bytes, 16);
    CHECK_EQ_I(arb_frame_build(&golden_addr, inplace + ARB_FRAME_OVERHEAD, 16, inplace,
                               sizeof inplace, &n),
               0);
    CHECK(memcmp(inplace, golden_frame, sizeof golden_frame) == 0);
    /* Or overlaps the headers. */
    uint8_t overlap[ARB_FRAME_OVERHEAD + 16];
    memcpy(overlap + 3, golden_named("end")->bytes, 16);
    CHECK_EQ_I(arb_frame_build(&golden_addr, overlap + 3, 16, overlap, sizeof overlap, &n), 0);
    CHECK(memcmp(overlap, golden_frame, sizeof golden_frame) == 0);
}

/* A payload whose checksum before the final complement is exactly 0: the
 * UDP checksum must then be sent as ffff, never as 0 ("none"). */
TEST(frame_udp_checksum_zero_sent_as_ffff)
{
    arb_frame_addr a = golden_addr;
    a.udp_src = 0;
    a.udp_dst = 0;
    /* Pseudo-header + UDP header for a 2-byte payload: 0a00 + 0001 + 0a00 +
     * 0002 + 0011 + 000a (udp length) + 000a (udp length again) = 1428.
     * A payload word of ffff - 1428 = ebd7 makes the sum ffff. */
    uint8_t payload[2] = {0xeb, 0xd7}, buf[64];
    size_t n;
    CHECK_EQ_I(arb_frame_build(&a, payload, 2, buf, sizeof buf, &n), 0);
    CHECK_EQ_U(buf[40], 0xFF);
    CHECK_EQ_U(buf[41], 0xFF);
    CHECK_EQ_I(parse_copy(buf, n), 0);
}

TEST(frame_checksum_corruption)
{
    /* Every bit of each checksum byte. */
    for (int byte = 24; byte <= 25; byte++)
        for (int bit = 0; bit < 8; bit++) {
            uint8_t f[sizeof golden_frame];
            memcpy(f, golden_frame, sizeof f);
            f[byte] ^= (uint8_t)(1u << bit);
            CHECK_EQ_I(parse_copy(f, sizeof f), ARB_EFRAME_IP_CHECKSUM);
        }
    for (int byte = 40; byte <= 41; byte++)
        for (int v = 1; v < 256; v++) {
            uint8_t f[sizeof golden_frame];
            memcpy(f, golden_frame, sizeof f);
            f[byte] ^= (uint8_t)v;
            if (f[40] == 0 && f[41] == 0) continue; /* "no checksum" is tested below */
            CHECK_EQ_I(parse_copy(f, sizeof f), ARB_EFRAME_UDP_CHECKSUM);
        }
    /* Corrupted data under each checksum. */
    uint8_t f[sizeof golden_frame];
    memcpy(f, golden_frame, sizeof f);
    f[29] ^= 0x01; /* ip src */
    CHECK_EQ_I(parse_copy(f, sizeof f), ARB_EFRAME_IP_CHECKSUM);
    memcpy(f, golden_frame, sizeof f);
    f[50] ^= 0x80; /* Arbor payload */
    CHECK_EQ_I(parse_copy(f, sizeof f), ARB_EFRAME_UDP_CHECKSUM);
    memcpy(f, golden_frame, sizeof f);
    f[29] ^= 0x01; /* ip src, with the ip checksum repaired: caught by the pseudo-header */
    fix_ip_checksum(f);
    CHECK_EQ_I(parse_copy(f, sizeof f), ARB_EFRAME_UDP_CHECKSUM);
}

TEST(frame_udp_checksum_absent)
{
    uint8_t f[sizeof golden_frame];
    memcpy(f, golden_frame, sizeof f);
    f[40] = f[41] = 0;
    CHECK_EQ_I(parse_copy(f, sizeof f), 0);
    f[50] ^= 0x80; /* nothing can tell */
    CHECK_EQ_I(parse_copy(f, sizeof f), 0);
}

TEST(frame_padding)
{
    /* A 58 B frame padded to the 60 B Ethernet minimum, then much more. */
    uint8_t f[100];
    memcpy(f, golden_frame, sizeof golden_frame);
    for (size_t i = sizeof golden_frame; i < sizeof f; i++)
        f[i] = (uint8_t)(0xA0 + i);
    for (size_t len = sizeof golden_frame; len <= sizeof f; len++) {
        uint8_t *b = dup_exact(f, len);
        const uint8_t *p;
        size_t pl;
        REQUIRE_EQ_I(arb_frame_parse(b, len, NULL, &p, &pl), 0);
        CHECK_EQ_U(pl, 16);
        CHECK(p == b + 42);
        free(b);
    }
    /* Bytes past the UDP length but inside the IP datagram are ignored too. */
    memcpy(f, golden_frame, sizeof golden_frame);
    f[17] = 0x2c + 4; /* ip total length 48 */
    fix_ip_checksum(f);
    uint8_t *b = dup_exact(f, sizeof golden_frame + 4);
    const uint8_t *p;
    size_t pl;
    REQUIRE_EQ_I(arb_frame_parse(b, sizeof golden_frame + 4, NULL, &p, &pl), 0);
    CHECK_EQ_U(pl, 16);
    free(b);
}

TEST(frame_truncations)
{
    for (size_t len = 0; len < sizeof golden_frame; len++) {
        int rc = parse_copy(golden_frame, len);
        if (len < ARB_FRAME_OVERHEAD)
            CHECK_EQ_I(rc, ARB_EFRAME_SHORT);
        else
            CHECK_EQ_I(rc, ARB_EFRAME_IP_LENGTH);
    }
    CHECK_EQ_I(arb_frame_parse(NULL, 0, NULL, NULL, NULL), ARB_EFRAME_SHORT);
}

TEST(frame_each_error)
{
    uint8_t f[sizeof golden_frame];
#define MUTATE(stmt, code)                                                                         \
    do {                                                                                           \
        memcpy(f, golden_frame, sizeof f);                                                         \
        stmt;                                                                                      \
        CHECK_EQ_I(parse_copy(f, sizeof f), (code));                                               \
    } while (0)
    MUTATE((void)0, 0);
    MUTATE(f[12] = 0x86, ARB_EFRAME_ETHERTYPE);                 /* 0x86DD: IPv6 */
    MUTATE((f[12] = 0x81, f[13] = 0x00), ARB_EFRAME_ETHERTYPE); /* a VLAN tag */
    MUTATE(f[14] = 0x65, ARB_EFRAME_IP_VERSION);
    MUTATE(f[14] = 0x46, ARB_EFRAME_IP_IHL);
    MUTATE(f[14] = 0x44, ARB_EFRAME_IP_IHL);
    MUTATE(f[25] ^= 0x10, ARB_EFRAME_IP_CHECKSUM);
    MUTATE((f[20] = 0x20, fix_ip_checksum(f)), ARB_EFRAME_IP_FRAGMENT); /* MF */
    MUTATE((f[20] = 0x60, fix_ip_checksum(f)), ARB_EFRAME_IP_FRAGMENT); /* DF + MF */
    MUTATE((f[21] = 0x01, fix_ip_checksum(f)), ARB_EFRAME_IP_FRAGMENT); /* offset 8 B */
    MUTATE((f[20] = 0x5F, f[21] = 0xFF, fix_ip_checksum(f)), ARB_EFRAME_IP_FRAGMENT);
    MUTATE((f[20] = 0x00, fix_ip_checksum(f)), 0); /* DF is not required */
    MUTATE((f[23] = 6, fix_ip_checksum(f)), ARB_EFRAME_IP_PROTO);
    MUTATE((f[17] = 0x2d, fix_ip_checksum(f)), ARB_EFRAME_IP_LENGTH); /* 1 B beyond */
    MUTATE((f[16] = 0xFF, fix_ip_checksum(f)), ARB_EFRAME_IP_LENGTH);
    MUTATE((f[17] = 19, fix_ip_checksum(f)), ARB_EFRAME_IP_LENGTH);
    MUTATE((f[17] = 20, fix_ip_checksum(f)), ARB_EFRAME_UDP_LENGTH); /* no room for UDP */
    MUTATE((f[17] = 27, fix_ip_checksum(f)), ARB_EFRAME_UDP_LENGTH);
    MUTATE(f[39] = 7, ARB_EFRAME_UDP_LENGTH);
    MUTATE(f[39] = 0, ARB_EFRAME_UDP_LENGTH);
    MUTATE(f[39] = 0x19, ARB_EFRAME_UDP_LENGTH); /* 1 B more than the datagram */
    MUTATE(f[38] = 0x01, ARB_EFRAME_UDP_LENGTH);
    MUTATE(f[39] = 0x17, ARB_EFRAME_UDP_CHECKSUM); /* shorter: the sum changes */
    MUTATE(f[57] ^= 1, ARB_EFRAME_UDP_CHECKSUM);
    MUTATE(f[0] ^= 1, 0);                         /* Ethernet addresses are not checksummed here */
    MUTATE(f[15] = 0xB8, ARB_EFRAME_IP_CHECKSUM); /* tos, unrepaired */
#undef MUTATE
    /* Short frames by stage. */
    CHECK_EQ_I(parse_copy(golden_frame, 13), ARB_EFRAME_SHORT);
    CHECK_EQ_I(parse_copy(golden_frame, 14), ARB_EFRAME_SHORT);
    CHECK_EQ_I(parse_copy(golden_frame, 33), ARB_EFRAME_SHORT);
    CHECK_EQ_I(parse_copy(golden_frame, 41), ARB_EFRAME_SHORT);
    memcpy(f, golden_frame, sizeof f);
    f[12] = 0x86;
    CHECK_EQ_I(parse_copy(f, 20), ARB_EFRAME_ETHERTYPE);
}

int main(void)
{
    RUN(names);
    RUN(header_len);
    RUN(golden_decode);
    RUN(golden_encode);
    RUN(attempt_byte);
    RUN(attempt_by_row);
    RUN(hdr_equal_every_field);
    RUN(random_round_trips);
    RUN(random_fields_match_reference);
    RUN(random_bytes_match_reference);
    RUN(bit_flips_golden);
    RUN(bit_flips_random);
    RUN(cuts_golden);
    RUN(cuts_random);
    RUN(short_buffers);
    RUN(reject_register);
    RUN(reject_register_ack);
    RUN(reject_end);
    RUN(reject_end_ack);
    RUN(reject_agg_miss);
    RUN(reject_request_normal);
    RUN(reject_request_repair);
    RUN(reject_response_credit);
    RUN(reject_response_tail);
    RUN(reject_response_repair);
    RUN(reject_response_tail_replay);
    RUN(reject_header_fields);
    RUN(reject_fanin);
    RUN(reject_payload);
    RUN(reject_out_of_range_fields);
    RUN(encode_errors);
    RUN(inet_checksum_known);
    RUN(frame_golden);
    RUN(frame_round_trips);
    RUN(frame_build_details);
    RUN(frame_udp_checksum_zero_sent_as_ffff);
    RUN(frame_checksum_corruption);
    RUN(frame_udp_checksum_absent);
    RUN(frame_padding);
    RUN(frame_truncations);
    RUN(frame_each_error);
    return testkit_done();
}
