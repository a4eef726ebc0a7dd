/** @file
 * arbor/wire.h - the Arbor header (docs/protocol.md section 4) and its Ethernet / IPv4 /
 * UDP framing.
 *
 * The header codec validates every packet against the per-type table of
 * docs/protocol.md and docs/wire.md; each rule has its own error code (see base.h, ARB_EWIRE_*).
 * Decoders never read past the buffer they are given and never assert on
 * their input. Multi-byte header fields are big-endian. Payload elements
 * are little-endian (docs/protocol.md, "Payload byte order").
 */
#ifndef ARBOR_WIRE_H
#define ARBOR_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ARB_WIRE_VERSION 2        /**< the version field of every header */
#define ARB_HDR_LEN_SHORT 16      /**< ext = 0: single-tier profile */
#define ARB_HDR_LEN_LONG 20       /**< ext = 1: multi-tier profile */
#define ARB_PAYLOAD_MAX 8192      /**< largest payload one packet carries */
#define ARB_MAX_DEPTH 3           /**< location stack entries */
#define ARB_OFFSET_MASK 0xFFFFFFu /**< offsets are 24-bit serial numbers */

/** The default UDP port of a channel (configurable; not IANA-assigned). */
#define ARB_UDP_PORT_DEFAULT 17470

/** The UDP source port of a packet of subchannel s is ARB_UDP_SPORT_BASE + s
 * (docs/protocol.md section 4.4): in the dynamic range, never 0, and above
 * the channel's port so that a capture tool offers the packet to Arbor's
 * dissector first. Subchannels 0 .. ARB_UDP_SPORT_SUBCHANNELS - 1. */
#define ARB_UDP_SPORT_BASE 49152
#define ARB_UDP_SPORT_SUBCHANNELS 16384 /**< subchannels the source ports tell apart */

/** The UDP source port of subchannel s (modulo ARB_UDP_SPORT_SUBCHANNELS). */
static inline uint16_t arb_subchannel_sport(uint32_t subchannel)
{
    return (uint16_t)(ARB_UDP_SPORT_BASE + subchannel % ARB_UDP_SPORT_SUBCHANNELS);
}

/** The subchannel of a UDP source port, or -1 below ARB_UDP_SPORT_BASE. */
static inline int arb_sport_subchannel(uint16_t sport)
{
    return sport >= ARB_UDP_SPORT_BASE ? sport - ARB_UDP_SPORT_BASE : -1;
}

/** The packet_type field (docs/protocol.md section 4). */
typedef enum arb_ptype {
    ARB_PT_REGISTER = 0,
    ARB_PT_DATA_REQUEST = 1,
    ARB_PT_RESPONSE = 2,
    ARB_PT_END = 3,
    ARB_PT_END_ACK = 4,
    ARB_PT_REGISTER_ACK = 5,
    ARB_PT_AGG_MISS = 6
} arb_ptype;

#define ARB_PT_COUNT 7 /**< the number of arb_ptype values */

/** The payload_kind field (docs/protocol.md section 4). SEED: on a normal
 * credit, the responder's own contribution to the offset it credits, which
 * the first switch that takes a slot for it keeps; on an aggregate, that the
 * aggregate holds it, so that it is the whole result (docs/protocol.md
 * section 5, "Seeded credits"). */
typedef enum arb_pkind {
    ARB_PK_DATA = 0,
    ARB_PK_COMPLETION = 1,
    ARB_PK_REPLAY = 2,
    ARB_PK_SEED = 3
} arb_pkind;

/**
 * A decoded Arbor header. Field names and widths follow docs/protocol.md section 4;
 * each field holds the value on the wire (no implied scaling).
 */
typedef struct arb_hdr {
    uint8_t version;                 /**< 2 bits: always ARB_WIRE_VERSION */
    uint8_t packet_type;             /**< 3 bits: arb_ptype */
    uint8_t repair;                  /**< 1 bit */
    uint8_t op;                      /**< 2 bits: arb_op */
    uint8_t message_id;              /**< 8 bits */
    uint8_t payload_valid;           /**< 1 bit */
    uint8_t payload_kind;            /**< 2 bits: arb_pkind */
    uint8_t credit_valid;            /**< 1 bit */
    uint8_t ext;                     /**< 1 bit: 1 = 20 B header */
    uint8_t agg_depth;               /**< 2 bits: 0..3 */
    uint8_t aggregated;              /**< 1 bit */
    uint32_t offset_a;               /**< 24 bits */
    uint32_t offset_b;               /**< 24 bits */
    uint16_t agg_loc[ARB_MAX_DEPTH]; /**< [1], [2] only when ext = 1 */
    uint8_t fanin[ARB_MAX_DEPTH];    /**< root tier first */
    /** Byte 14: the attempt of a credit context (docs/protocol.md, "Attempts").
     * Nonzero only on a normal credit (RESPONSE, repair 0, credit_valid 1),
     * a normal DATA_REQUEST and an AGG_MISS; 0 on every other packet. */
    uint8_t attempt;
    uint8_t dtype; /**< arb_dtype */
} arb_hdr;

/** Attempts of one offset: 0 (the first credit) .. ARB_ATTEMPT_MAX. */
#define ARB_ATTEMPT_MAX 255

/** "REGISTER", "DATA_REQUEST", ...; NULL outside 0..6. */
const char *arb_ptype_name(int pt);
/** "DATA", "COMPLETION", "REPLAY", "SEED"; NULL outside 0..3. */
const char *arb_pkind_name(int pk);
/** Parse a name arb_ptype_name gives (case-insensitive); ARB_ENOENT if unknown. */
int arb_ptype_parse(const char *name);
/** Parse a name arb_pkind_name gives (case-insensitive); ARB_ENOENT if unknown. */
int arb_pkind_parse(const char *name);

/**
 * A header with every field 0 but version (ARB_WIRE_VERSION), packet_type,
 * message_id, dtype and ext (normalised to 0 or 1): the starting point of
 * every packet an engine or a switch builds. NULL h: nothing.
 */
void arb_hdr_init(arb_hdr *h, arb_ptype type, uint8_t message_id, uint8_t dtype, uint8_t ext);

/**
 * 1 when a and b hold the same value in every field (what decode(encode(h))
 * must give back), else 0. Compares fields, never padding bytes. Either
 * pointer NULL: 0. Never fails.
 */
int arb_hdr_equal(const arb_hdr *a, const arb_hdr *b);

/** 16 or 20: the header length `h` encodes to (from h->ext). */
size_t arb_hdr_len(const arb_hdr *h);

/**
 * Check `h`, followed by `payload_len` payload bytes, against every rule of
 * docs/protocol.md section 4. Fields wider than their wire width give ARB_ERANGE.
 * Returns 0 or the ARB_EWIRE_* code of the first rule broken, checked in
 * this order: range, version, type, kind, depth vs ext, dtype, the per-type
 * table (repair, credit_valid, payload flags, agg_depth, aggregated,
 * offset_b, op, attempt), fan-in, then the payload length.
 */
int arb_hdr_validate(const arb_hdr *h, size_t payload_len);

/**
 * Validate `h` for a payload of `payload_len` bytes and write its header to
 * buf[0 .. arb_hdr_len(h)). Byte 14 carries the attempt; fields
 * the format ignores (agg_loc / fanin entries at or above agg_depth) are
 * written as given, so that decode(encode(h)) == h for every valid h.
 * Errors: those of arb_hdr_validate; ARB_ENOSPC if cap is too small.
 * On success *out_len (may be NULL) is the header length.
 */
int arb_hdr_encode(const arb_hdr *h, size_t payload_len, uint8_t *buf, size_t cap, size_t *out_len);

/**
 * Decode and validate the UDP payload `buf[0..len)` (header then payload).
 * On success fills *h and *payload_off (the payload starts at
 * buf + *payload_off and runs to the end of the buffer; may be NULL).
 * Errors: ARB_EWIRE_SHORT, then the codes of arb_hdr_validate. On error *h
 * holds whatever was decoded before the rule broke.
 */
int arb_hdr_decode(arb_hdr *h, const uint8_t *buf, size_t len, size_t *payload_off);

/* ------------------------------------------------------------------ */
/* Ethernet / IPv4 / UDP                                                */
/* ------------------------------------------------------------------ */

#define ARB_ETH_LEN 14  /**< Ethernet II header bytes (no VLAN tag) */
#define ARB_IPV4_LEN 20 /**< IPv4 header bytes (no options) */
#define ARB_UDP_LEN 8   /**< UDP header bytes */
#define ARB_FRAME_OVERHEAD (ARB_ETH_LEN + ARB_IPV4_LEN + ARB_UDP_LEN) /**< 42 */
/** Bytes a frame costs on the wire beyond its length: FCS 4, preamble+SFD 8, IFG 12. */
#define ARB_WIRE_EXTRA 24

/**
 * Addresses of one frame. IPv4 addresses are host-order integers
 * (10.0.0.1 = 0x0A000001).
 */
typedef struct arb_frame_addr {
    uint8_t eth_dst[6]; /**< destination MAC */
    uint8_t eth_src[6]; /**< source MAC */
    uint32_t ip_src;    /**< source IPv4 address */
    uint32_t ip_dst;    /**< destination IPv4 address */
    uint16_t udp_src;   /**< arb_subchannel_sport(subchannel), docs/protocol.md section 4.4 */
    uint16_t udp_dst;   /**< the channel's port */
    uint8_t ip_ttl;     /**< 0 is sent as 64 */
    uint8_t ip_tos;     /**< DSCP << 2 | ECN; ECN CE = 3 */
    uint16_t ip_id;     /**< the IPv4 identification field */
} arb_frame_addr;

/**
 * Build Ethernet + IPv4 + UDP around the UDP payload `udp_payload[0..len)`
 * into buf. IPv4 header checksum and UDP checksum are computed; DF is set.
 * Errors: ARB_ENOSPC (cap < ARB_FRAME_OVERHEAD + len), ARB_ERANGE (len too
 * large for a UDP datagram). *out_len (may be NULL) receives the frame length.
 */
int arb_frame_build(const arb_frame_addr *a, const uint8_t *udp_payload, size_t len, uint8_t *buf,
                    size_t cap, size_t *out_len);

/**
 * Parse a frame: Ethernet II with EtherType IPv4, a 20 B IPv4 header (no
 * options) with a valid checksum and no fragmentation, UDP with a length
 * that fits the IP datagram and a valid checksum (a checksum of 0 means
 * "not computed", RFC 768, and is accepted). Trailing Ethernet padding
 * beyond the IP total length is ignored. On success fills *a (may be
 * NULL) and points *udp_payload / *udp_payload_len at the UDP payload inside
 * `frame`. Errors: the ARB_EFRAME_* codes.
 */
int arb_frame_parse(const uint8_t *frame, size_t len, arb_frame_addr *a,
                    const uint8_t **udp_payload, size_t *udp_payload_len);

/** The Internet checksum (RFC 1071) of buf, folded and complemented. */
uint16_t arb_inet_checksum(const uint8_t *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_WIRE_H */
