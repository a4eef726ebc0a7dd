/*
 * Fuzz target: the wire decoders. One input is read three ways:
 *
 *  1. as an Arbor packet (header then payload): an accepted packet must
 *     re-validate and re-encode to the same bytes, and decode again to the
 *     same header;
 *  2. as an Ethernet frame: an accepted frame is rebuilt from what the parser
 *     returned and must parse to the same addresses and payload; its UDP
 *     payload then goes through (1);
 *  3. as a header struct given field by field (arbitrary, often out-of-range
 *     values): whatever arb_hdr_validate accepts must encode, and decode back
 *     to the same struct.
 *
 * A broken invariant calls abort(), which the fuzzer reports as a crash.
 * Run it for longer with `make fuzz`, then
 *   ./build-fuzz/fuzz_wire -max_total_time=600 tests/fuzz/corpus/wire
 */
#include "arbor/wire.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond) abort();
}

static int is_wire_error(int rc)
{
    return rc <= ARB_EWIRE_SHORT && rc >= ARB_EWIRE_ATTEMPT;
}

static void check_packet(const uint8_t *buf, size_t len)
{
    arb_hdr h;
    size_t off = 0;
    int rc = arb_hdr_decode(&h, buf, len, &off);
    if (rc) {
        require(is_wire_error(rc));
        return;
    }
    size_t hl = arb_hdr_len(&h);
    require(off == hl && off <= len);
    require(arb_hdr_validate(&h, len - off) == 0);

    uint8_t out[ARB_HDR_LEN_LONG], want[ARB_HDR_LEN_LONG];
    size_t n = 0;
    require(arb_hdr_encode(&h, len - off, out, sizeof out, &n) == 0);
    require(n == hl);
    memcpy(want, buf, hl);
    require(memcmp(out, want, hl) == 0);

    /* The re-encoded header, with the same payload, decodes to the same. */
    arb_hdr again;
    size_t off2 = 0;
    uint8_t *copy = malloc(len);
    require(copy != NULL);
    memcpy(copy, out, n);
    memcpy(copy + n, buf + off, len - off);
    require(arb_hdr_decode(&again, copy, len, &off2) == 0);
    require(off2 == off && arb_hdr_equal(&again, &h));
    free(copy);
}

static int addr_same(const arb_frame_addr *a, const arb_frame_addr *b)
{
    return memcmp(a->eth_dst, b->eth_dst, 6) == 0 && memcmp(a->eth_src, b->eth_src, 6) == 0 &&
           a->ip_src == b->ip_src && a->ip_dst == b->ip_dst && a->udp_src == b->udp_src &&
           a->udp_dst == b->udp_dst && a->ip_ttl == b->ip_ttl && a->ip_tos == b->ip_tos &&
           a->ip_id == b->ip_id;
}

static void check_frame(const uint8_t *frame, size_t len)
{
    arb_frame_addr a;
    const uint8_t *p = NULL;
    size_t pl = 0;
    int rc = arb_frame_parse(frame, len, &a, &p, &pl);
    if (rc) {
        require(rc <= ARB_EFRAME_SHORT && rc >= ARB_EFRAME_UDP_CHECKSUM);
        return;
    }
    require(p == frame + ARB_FRAME_OVERHEAD && pl <= len - ARB_FRAME_OVERHEAD);

    /* Rebuild from the parsed fields: the result parses to the same thing
     * (a ttl of 0 is sent as 64). */
    size_t cap = ARB_FRAME_OVERHEAD + pl;
    uint8_t *built = malloc(cap);
    require(built != NULL);
    size_t n = 0;
    require(arb_frame_build(&a, p, pl, built, cap, &n) == 0 && n == cap);
    arb_frame_addr b;
    const uint8_t *bp;
    size_t bpl;
    require(arb_frame_parse(built, n, &b, &bp, &bpl) == 0);
    if (a.ip_ttl == 0) a.ip_ttl = 64;
    require(addr_same(&a, &b) && bpl == pl && memcmp(bp, p, pl) == 0);
    /* Ethernet, addresses, ports and payload are the input's own bytes. */
    require(memcmp(built, frame, 14) == 0);
    require(memcmp(built + 26, frame + 26, 12) == 0);
    free(built);

    check_packet(p, pl);
}

/* Fields taken one byte at a time (offsets from three bytes, with a fourth
 * deciding whether to push them out of range). */
static void check_struct(const uint8_t *d, size_t size)
{
    if (size < 28) return;
    arb_hdr h;
    h.version = d[0];
    h.packet_type = d[1];
    h.repair = d[2];
    h.op = d[3];
    h.message_id = d[4];
    h.payload_valid = d[5];
    h.payload_kind = d[6];
    h.credit_valid = d[7];
    h.ext = d[8];
    h.agg_depth = d[9];
    h.aggregated = d[10];
    h.offset_a = (uint32_t)d[11] << 16 | (uint32_t)d[12] << 8 | d[13] | (d[14] & 1u) << 24;
    h.offset_b = (uint32_t)d[15] << 16 | (uint32_t)d[16] << 8 | d[17] | (d[14] & 2u) << 23;
    h.agg_loc[0] = (uint16_t)(d[18] << 8 | d[19]);
    h.agg_loc[1] = (uint16_t)(d[20] << 8 | d[21]);
    h.agg_loc[2] = (uint16_t)(d[22] << 8 | d[23]);
    h.fanin[0] = d[24];
    h.fanin[1] = d[25];
    h.fanin[2] = d[26];
    h.dtype = d[27];
    /* the attempt from the high bits of the out-of-range byte: often 0 */
    h.attempt = (uint8_t)(d[14] >> 2);
    size_t plen = size - 28;

    int rc = arb_hdr_validate(&h, plen);
    uint8_t out[ARB_HDR_LEN_LONG];
    size_t n = 0;
    int erc = arb_hdr_encode(&h, plen, out, sizeof out, &n);
    require(erc == rc);
    if (rc) {
        require(rc == ARB_ERANGE || is_wire_error(rc));
        return;
    }
    uint8_t *pkt = malloc(n + plen);
    require(pkt != NULL);
    memcpy(pkt, out, n);
    memcpy(pkt + n, d + 28, plen);
    arb_hdr back;
    size_t off = 0;
    require(arb_hdr_decode(&back, pkt, n + plen, &off) == 0);
    require(off == n && arb_hdr_equal(&back, &h));
    free(pkt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_packet(data, size);
    check_frame(data, size);
    check_struct(data, size);
    return 0;
}
