/*
 * ep_util.h - helpers shared by the responder and the requester: member
 * bitmaps, 24-bit offsets, packet lengths and header templates.
 */
#ifndef ARBOR_EP_UTIL_H
#define ARBOR_EP_UTIL_H

#include <stdint.h>
#include <string.h>

#include "arbor/endpoint.h"

#define EP_WORDS(bits) (((bits) + 63u) / 64u)
#define EP_MEMBER_WORDS EP_WORDS(ARB_EP_MAX_MEMBERS)

static inline int bm_test(const uint64_t *b, uint32_t i)
{
    return (int)((b[i >> 6] >> (i & 63u)) & 1u);
}

static inline void bm_set(uint64_t *b, uint32_t i)
{
    b[i >> 6] |= (uint64_t)1 << (i & 63u);
}

/* Offset of message-relative packet `index`. */
static inline uint32_t ep_seq(uint32_t start, uint32_t index)
{
    return (start + index) & ARB_OFFSET_MASK;
}

/* Message-relative index of offset `k` (large when k precedes start). */
static inline uint32_t ep_index(uint32_t start, uint32_t k)
{
    return (k - start) & ARB_OFFSET_MASK;
}

/* Packets of a message of `length` bytes: 0 bytes is one empty packet. */
static inline uint64_t ep_packets(uint64_t length, uint32_t payload_size)
{
    return length ? (length + payload_size - 1) / payload_size : 1;
}

/* Bytes of packet `index` of a message. */
static inline size_t ep_len(uint64_t length, uint32_t payload_size, uint32_t index)
{
    uint64_t off = (uint64_t)index * payload_size;
    if (off >= length) return 0;
    uint64_t rest = length - off;
    return (size_t)(rest < payload_size ? rest : payload_size);
}

/* A header with every field zero but the ones every packet shares. */
static inline void ep_hdr(arb_hdr *h, arb_ptype type, uint8_t msg_id, uint8_t dtype, uint8_t ext)
{
    arb_hdr_init(h, type, msg_id, dtype, ext);
}

static inline int ep_kind_pull(arb_ep_kind k)
{
    return k == ARB_EP_PULL_RESULT || k == ARB_EP_PULL_COMPLETION;
}

#endif
