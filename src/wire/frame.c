/*
 * Ethernet II / IPv4 / UDP framing around an Arbor packet, and the Internet
 * checksum. The runtime sends through UDP sockets and never needs this; the
 * simulator's pcap output, the software switch's raw path and the tests do,
 * so every byte here is checked as strictly as a host stack would.
 */
#include "arbor/wire.h"

#include <string.h>

#define ETHERTYPE_IPV4 0x0800
#define IPPROTO_UDP_NUM 17
#define IP_FLAG_DF 0x4000
#define IP_FLAG_MF 0x2000
#define IP_FRAG_OFFSET 0x1FFF
#define IP_TTL_DEFAULT 64
/* The IPv4 total length field caps the UDP payload. */
#define UDP_PAYLOAD_MAX (0xFFFF - ARB_IPV4_LEN - ARB_UDP_LEN)

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/*
 * Add buf as big-endian 16-bit words to a running sum (RFC 1071). An odd
 * final byte is padded with a zero, so only the last piece of a checksummed
 * region may have an odd length. 64 bits cannot overflow for any datagram.
 */
static uint64_t sum_words(uint64_t acc, const uint8_t *buf, size_t len)
{
    size_t i = 0;
    for (; i + 1 < len; i += 2)
        acc += (uint32_t)buf[i] << 8 | buf[i + 1];
    if (i < len) acc += (uint32_t)buf[i] << 8;
    return acc;
}

static uint16_t fold_complement(uint64_t acc)
{
    while (acc >> 16)
        acc = (acc & 0xFFFF) + (acc >> 16);
    return (uint16_t)~acc;
}

uint16_t arb_inet_checksum(const uint8_t *buf, size_t len)
{
    return fold_complement(buf ? sum_words(0, buf, len) : 0);
}

/* The checksum over the RFC 768 pseudo-header and the whole UDP datagram
 * (header included, as it stands in `udp`). */
static uint16_t udp_checksum(uint32_t src, uint32_t dst, const uint8_t *udp, size_t udp_len)
{
    uint64_t acc = (src >> 16) + (src & 0xFFFF) + (dst >> 16) + (dst & 0xFFFF);
    acc += IPPROTO_UDP_NUM + udp_len;
    return fold_complement(sum_words(acc, udp, udp_len));
}

int arb_frame_build(const arb_frame_addr *a, const uint8_t *udp_payload, size_t len, uint8_t *buf,
                    size_t cap, size_t *out_len)
{
    if (!a || (!udp_payload && len)) return ARB_EINVAL;
    if (len > UDP_PAYLOAD_MAX) return ARB_ERANGE;
    if (cap < ARB_FRAME_OVERHEAD + len) return ARB_ENOSPC;
    if (!buf) return ARB_EINVAL;

    uint8_t *eth = buf, *ip = buf + ARB_ETH_LEN, *udp = ip + ARB_IPV4_LEN;
    /* Move the payload first: a caller may have placed it at its final spot
     * already, or anywhere that overlaps the headers written below. */
    if (len) memmove(udp + ARB_UDP_LEN, udp_payload, len);

    memcpy(eth, a->eth_dst, 6);
    memcpy(eth + 6, a->eth_src, 6);
    put16(eth + 12, ETHERTYPE_IPV4);

    ip[0] = 0x45; /* version 4, IHL 5 words */
    ip[1] = a->ip_tos;
    put16(ip + 2, (uint16_t)(ARB_IPV4_LEN + ARB_UDP_LEN + len));
    put16(ip + 4, a->ip_id);
    put16(ip + 6, IP_FLAG_DF);
    ip[8] = a->ip_ttl ? a->ip_ttl : IP_TTL_DEFAULT;
    ip[9] = IPPROTO_UDP_NUM;
    put16(ip + 10, 0);
    put32(ip + 12, a->ip_src);
    put32(ip + 16, a->ip_dst);
    put16(ip + 10, arb_inet_checksum(ip, ARB_IPV4_LEN));

    size_t udp_len = ARB_UDP_LEN + len;
    put16(udp, a->udp_src);
    put16(udp + 2, a->udp_dst);
    put16(udp + 4, (uint16_t)udp_len);
    put16(udp + 6, 0);
    uint16_t c = udp_checksum(a->ip_src, a->ip_dst, udp, udp_len);
    /* 0 on the wire means "no checksum" (RFC 768); the same value in one's
     * complement is 0xFFFF. */
    put16(udp + 6, c ? c : 0xFFFF);

    if (out_len) *out_len = ARB_FRAME_OVERHEAD + len;
    return 0;
}

int arb_frame_parse(const uint8_t *frame, size_t len, arb_frame_addr *a,
                    const uint8_t **udp_payload, size_t *udp_payload_len)
{
    if (!frame && len) return ARB_EINVAL;
    if (len < ARB_ETH_LEN) return ARB_EFRAME_SHORT;
    if (get16(frame + 12) != ETHERTYPE_IPV4) return ARB_EFRAME_ETHERTYPE;
    if (len < ARB_ETH_LEN + ARB_IPV4_LEN) return ARB_EFRAME_SHORT;

    const uint8_t *ip = frame + ARB_ETH_LEN;
    if (ip[0] >> 4 != 4) return ARB_EFRAME_IP_VERSION;
    if ((ip[0] & 0x0F) != ARB_IPV4_LEN / 4) return ARB_EFRAME_IP_IHL;
    /* A header that fails its checksum has no field worth believing, the
     * lengths included, so the checksum comes before them (as in a host
     * stack). A valid header sums to zero. */
    if (arb_inet_checksum(ip, ARB_IPV4_LEN) != 0) return ARB_EFRAME_IP_CHECKSUM;
    if (get16(ip + 6) & (IP_FLAG_MF | IP_FRAG_OFFSET)) return ARB_EFRAME_IP_FRAGMENT;
    if (ip[9] != IPPROTO_UDP_NUM) return ARB_EFRAME_IP_PROTO;
    if (len < ARB_FRAME_OVERHEAD) return ARB_EFRAME_SHORT;

    /* Bytes past the IP total length are Ethernet padding (a 60 B minimum
     * frame): ignored. */
    size_t total = get16(ip + 2);
    if (total < ARB_IPV4_LEN || total > len - ARB_ETH_LEN) return ARB_EFRAME_IP_LENGTH;
    const uint8_t *udp = ip + ARB_IPV4_LEN;
    size_t udp_len = get16(udp + 4);
    if (total - ARB_IPV4_LEN < ARB_UDP_LEN || udp_len < ARB_UDP_LEN ||
        udp_len > total - ARB_IPV4_LEN)
        return ARB_EFRAME_UDP_LENGTH;
    uint32_t src = get32(ip + 12), dst = get32(ip + 16);
    if (get16(udp + 6) != 0 && udp_checksum(src, dst, udp, udp_len) != 0)
        return ARB_EFRAME_UDP_CHECKSUM;

    if (a) {
        memcpy(a->eth_dst, frame, 6);
        memcpy(a->eth_src, frame + 6, 6);
        a->ip_src = src;
        a->ip_dst = dst;
        a->udp_src = get16(udp);
        a->udp_dst = get16(udp + 2);
        a->ip_ttl = ip[8];
        a->ip_tos = ip[1];
        a->ip_id = get16(ip + 4);
    }
    if (udp_payload) *udp_payload = udp + ARB_UDP_LEN;
    if (udp_payload_len) *udp_payload_len = udp_len - ARB_UDP_LEN;
    return 0;
}
