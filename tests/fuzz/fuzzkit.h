/*
 * fuzzkit.h - what the engine fuzz targets share: the reader that turns the
 * input into a program of bytes, the breach check, and the two ways a
 * target makes a header (decoded from raw bytes, or built plausible).
 */
#ifndef ARBOR_FUZZKIT_H
#define ARBOR_FUZZKIT_H

#include <stdint.h>
#include <stdlib.h>

#include "arbor/wire.h"

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

/* The next byte of the program; 0 once it is used up. */
static inline uint8_t take(reader *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

/* A breach of what the target checks: abort, which the fuzzer reports. */
static inline void require(int cond)
{
    if (!cond) abort();
}

/* A header decoded from up to 63 raw bytes of the program (a length byte,
 * then the bytes) into *h, its payload left in buf (64 bytes) at
 * *payload / *len: 1 when the bytes decode, else 0. */
static inline int fuzz_raw_header(reader *rd, uint8_t *buf, arb_hdr *h, const uint8_t **payload,
                                  size_t *len)
{
    uint8_t l = take(rd) % 64;
    size_t got = 0, off = 0;
    while (got < l && rd->n)
        buf[got++] = take(rd);
    if (arb_hdr_decode(h, buf, got, &off) != 0) return 0;
    *payload = got > off ? buf + off : NULL;
    *len = got - off;
    return 1;
}

#endif
