/*
 * xoshiro256** seeded through SplitMix64; see base.h for the exact
 * seeding and splitting rules, which are part of the reproducibility
 * contract and must not change without a version note.
 */
#include "arbor/base.h"

uint64_t arb_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15u;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    return x ^ (x >> 31);
}

void arb_rng_seed(arb_rng *r, uint64_t seed)
{
    /* SplitMix64: state advances by the golden gamma, output is the mix. */
    for (int i = 0; i < 4; i++) {
        r->s[i] = arb_mix64(seed);
        seed += 0x9E3779B97F4A7C15u;
    }
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t arb_rng_next(arb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

void arb_rng_split(arb_rng *parent, uint64_t stream, arb_rng *child)
{
    arb_rng_seed(child, arb_rng_next(parent) ^ (stream * 0x9E3779B97F4A7C15u));
}

uint64_t arb_rng_below(arb_rng *r, uint64_t bound)
{
    if (bound == 0) return 0;
    /* Lemire: the high word of x * bound, rejecting the biased low range.
     * The 128-bit product is built from 32-bit halves to stay in C11. */
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
        uint64_t x = arb_rng_next(r);
        uint64_t xl = x & 0xFFFFFFFFu, xh = x >> 32;
        uint64_t bl = bound & 0xFFFFFFFFu, bh = bound >> 32;
        uint64_t ll = xl * bl, lh = xl * bh, hl = xh * bl, hh = xh * bh;
        uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFu) + (hl & 0xFFFFFFFFu);
        uint64_t lo = (ll & 0xFFFFFFFFu) | (mid << 32);
        uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
        if (lo >= threshold) return hi;
    }
}

double arb_rng_double(arb_rng *r)
{
    return (double)(arb_rng_next(r) >> 11) * 0x1.0p-53;
}
