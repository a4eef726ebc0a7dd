/*
 * Element-wise reduction kernels: acc[i] = acc[i] OP in[i].
 *
 * Every kernel is one plain loop that GCC vectorises at -O3 for baseline
 * x86-64 (SSE2) and that stays exact IEEE 754 arithmetic; docs/reduce.md has
 * the semantics, the rounding argument and the measured speed. Three rules
 * keep the loops vectorisable:
 *
 * - Elements are read and written with memcpy. The API promises nothing
 *   about alignment (payloads sit at arbitrary offsets in packets), and a
 *   fixed-size memcpy compiles to one unaligned load or store.
 * - Every floating-point operation is computed for every element, needed or
 *   not, and only its result is chosen, with all-ones / all-zeros masks
 *   (sel32, sel16) or a ?: between two values already computed. Without
 *   -fno-trapping-math GCC will not if-convert a branch that guards a
 *   floating-point operation, and one such branch stops vectorisation of the
 *   whole loop.
 * - Data stays in one lane width from load to store where it can (16-bit
 *   MAX / MIN), or changes width once each way (f16 / bf16 SUM): SSE2 has
 *   no single instruction to narrow 32-bit lanes to 16, so every extra
 *   narrowing costs several shuffles.
 *
 * acc == in is allowed: GCC's run-time alias check treats a zero distance as
 * safe, so that case is vectorised too.
 */
#include "arbor/reduce.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Bit casts and masks                                                  */
/* ------------------------------------------------------------------ */

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint64_t f64_bits(double f)
{
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline double f64_from_bits(uint64_t u)
{
    double f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* All ones when cond is true, else zero. */
static inline uint32_t mask32(int cond)
{
    return 0u - (uint32_t)cond;
}

static inline uint64_t mask64(int cond)
{
    return 0u - (uint64_t)cond;
}

/* x where mask is all ones, y where it is zero. */
static inline uint32_t sel32(uint32_t mask, uint32_t x, uint32_t y)
{
    return y ^ ((x ^ y) & mask);
}

static inline uint64_t sel64(uint64_t mask, uint64_t x, uint64_t y)
{
    return y ^ ((x ^ y) & mask);
}

/* ------------------------------------------------------------------ */
/* f16 and bf16 conversions                                             */
/* ------------------------------------------------------------------ */

/*
 * binary16 -> binary32, exact (the technique of Maratyszcza's FP16
 * library). `two` is h without its sign, shifted to the top. Normal numbers:
 * exponent and mantissa placed under an f32 exponent raised by 224, then
 * multiplied by 2^-112, leaving it raised by 112 = 127 - 15; exponent 31
 * lands on 255, so infinity stays infinite and NaN stays NaN (a signalling
 * NaN comes out quiet, from the multiplication). Subnormals
 * m * 2^-24: m placed under the exponent of 0.5 gives 0.5 + m * 2^-24, and
 * subtracting 0.5 is exact. No step meets an f32 subnormal, which some
 * hardware handles slowly.
 */
static inline float f16_to_f32(uint32_t h)
{
    uint32_t two = h << 17;
    float normal = f32_from_bits((two >> 4) + (224u << 23)) * 0x1p-112f;
    float sub = f32_from_bits((two >> 17) | (126u << 23)) - 0.5f;
    uint32_t r = sel32(mask32(two < (1u << 27)), f32_bits(sub), f32_bits(normal));
    return f32_from_bits(r | ((h & 0x8000u) << 16));
}

/*
 * binary32 -> binary16, round to nearest even, overflow to infinity. The
 * encoding is returned in bits 13..28 (bits below are garbage), so that the
 * caller's final shift is the only change of width and the vectorised loop
 * packs once.
 *
 * - Normal range (|f| >= 2^-14): rebias the exponent, add 0xfff plus the
 *   lowest kept bit (ties go to even). A carry out of the mantissa
 *   increments the exponent, which is right, up to and including rounding
 *   65520 and above to infinity (exponent 31, mantissa 0).
 * - Subnormal range (|f| < 2^-14): adding 0.5 puts the f16 quantum 2^-24 at
 *   the last place of the f32 sum, so the hardware addition does the
 *   rounding; the low bits of the sum are then the f16 encoding (0x400, the
 *   smallest normal, when it rounds up out of the subnormals).
 * - |f| >= 2^16 is infinity; NaN keeps its top payload bits and is made
 *   quiet.
 */
static inline uint32_t f32_to_f16_hi(float f)
{
    uint32_t u = f32_bits(f);
    uint32_t a = u & 0x7fffffffu;
    uint32_t normal = a - (112u << 23) + 0xfffu + ((a >> 13) & 1u);
    uint32_t sub = (f32_bits(f32_from_bits(a) + 0.5f) - f32_bits(0.5f)) << 13;
    uint32_t big = sel32(mask32(a > 0x7f800000u), 0x0fc00000u | (a & 0x007fe000u), 0x0f800000u);
    uint32_t r = sel32(mask32(a < 0x38800000u), sub, normal); /* 0x38800000 = 2^-14 */
    r = sel32(mask32(a >= 0x47800000u), big, r);              /* 0x47800000 = 2^16 */
    return r | ((u >> 3) & 0x10000000u);                      /* sign: bit 31 -> 28 */
}

/* bfloat16 is the top half of a binary32: widening is a shift. */
static inline float bf16_to_f32(uint32_t h)
{
    return f32_from_bits(h << 16);
}

/*
 * binary32 -> bfloat16, round to nearest even: add 0x7fff plus the lowest
 * kept bit and keep the top half. The carry handles mantissa overflow and
 * rounding past the largest finite value to infinity. NaN must not round (a
 * payload in the low half only would become infinity): it is made quiet and
 * truncated instead. The choice is made before the shift, so that the
 * vectorised loop packs one vector, not two.
 */
static inline uint32_t f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    uint32_t nan = mask32((u & 0x7fffffffu) > 0x7f800000u);
    return sel32(nan, u | 0x00400000u, u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

float arb_f16_to_f32(uint16_t h)
{
    return f16_to_f32(h);
}

uint16_t arb_f32_to_f16(float f)
{
    return (uint16_t)(f32_to_f16_hi(f) >> 13);
}

float arb_bf16_to_f32(uint16_t h)
{
    return bf16_to_f32(h);
}

uint16_t arb_f32_to_bf16(float f)
{
    return (uint16_t)f32_to_bf16(f);
}

/* ------------------------------------------------------------------ */
/* Element operators                                                    */
/* ------------------------------------------------------------------ */

static inline uint16_t mask16(int cond)
{
    return (uint16_t)(0u - (unsigned)cond);
}

static inline uint16_t sel16(uint16_t mask, uint16_t x, uint16_t y)
{
    return (uint16_t)(y ^ ((x ^ y) & mask));
}

/*
 * 16-bit floats, MAX / MIN. The result is one of the operands (or a quiet
 * NaN), so there is no need to widen, and everything stays in 16-bit lanes
 * (eight per SSE2 vector). A sign-magnitude encoding maps to an unsigned key
 * whose order is the numeric order with -0 < +0: flip all bits of a negative
 * number, only the sign bit of a positive one. `inf` is the encoding of
 * infinity and `quiet` the quiet-NaN bit of the format.
 */
static inline uint16_t key16(uint16_t h)
{
    return (uint16_t)(h ^ ((uint16_t)(0u - (unsigned)(h >> 15)) | 0x8000u));
}

static inline uint16_t nan16(uint16_t h, uint16_t inf)
{
    return mask16((uint16_t)(h & 0x7fffu) > inf);
}

static inline uint16_t max16(uint16_t a, uint16_t b, uint16_t inf, uint16_t quiet)
{
    uint16_t r = sel16(mask16(key16(b) > key16(a)), b, a);
    uint16_t na = nan16(a, inf), nb = nan16(b, inf);
    return sel16((uint16_t)(na | nb), (uint16_t)(sel16(na, a, b) | quiet), r);
}

static inline uint16_t min16(uint16_t a, uint16_t b, uint16_t inf, uint16_t quiet)
{
    uint16_t r = sel16(mask16(key16(b) < key16(a)), b, a);
    uint16_t na = nan16(a, inf), nb = nan16(b, inf);
    return sel16((uint16_t)(na | nb), (uint16_t)(sel16(na, a, b) | quiet), r);
}

static inline uint16_t f16_sum(uint16_t a, uint16_t b)
{
    return (uint16_t)(f32_to_f16_hi(f16_to_f32(a) + f16_to_f32(b)) >> 13);
}

static inline uint16_t f16_max(uint16_t a, uint16_t b)
{
    return max16(a, b, 0x7c00u, 0x0200u);
}

static inline uint16_t f16_min(uint16_t a, uint16_t b)
{
    return min16(a, b, 0x7c00u, 0x0200u);
}

static inline uint16_t bf16_sum(uint16_t a, uint16_t b)
{
    return (uint16_t)f32_to_bf16(bf16_to_f32(a) + bf16_to_f32(b));
}

static inline uint16_t bf16_max(uint16_t a, uint16_t b)
{
    return max16(a, b, 0x7f80u, 0x0040u);
}

static inline uint16_t bf16_min(uint16_t a, uint16_t b)
{
    return min16(a, b, 0x7f80u, 0x0040u);
}

/*
 * f32 / f64 MIN and MAX.
 *
 * With a and b not NaN, `a < b ? a : b` and `b < a ? b : a` are both the
 * minimum, and differ only for equal operands: then one is a and the other
 * b, and the OR of their encodings gives -0 for (+0, -0) and the common
 * value otherwise. With a NaN both compares fail, the two are a and b, and
 * their OR has an all-ones exponent and the NaN's mantissa bits: a NaN, and
 * quiet if the NaN operand was. GCC turns each select into one MINPS /
 * MINPD.
 *
 * Adding -0 first makes a signalling NaN quiet and leaves every other value,
 * zeros included, unchanged. The -0 is read from a volatile once per call:
 * assuming no signalling NaNs, the compiler would fold x + -0 into x.
 *
 * MAX is -MIN(-a, -b). -0 - x is the negation of x that also quiets NaN;
 * the final negation is a plain sign flip, the result being quiet already.
 */
static volatile const float f32_minus_zero = -0.0f;
static volatile const double f64_minus_zero = -0.0;

static inline float f32_min_quiet(float a, float b)
{
    float m1 = a < b ? a : b, m2 = b < a ? b : a;
    return f32_from_bits(f32_bits(m1) | f32_bits(m2));
}

static inline float f32_min(float a, float b, float z)
{
    return f32_min_quiet(a + z, b + z);
}

static inline float f32_max(float a, float b, float z)
{
    return -f32_min_quiet(z - a, z - b);
}

static inline float f32_sum(float a, float b)
{
    return a + b;
}

static inline double f64_min_quiet(double a, double b)
{
    double m1 = a < b ? a : b, m2 = b < a ? b : a;
    return f64_from_bits(f64_bits(m1) | f64_bits(m2));
}

static inline double f64_min(double a, double b, double z)
{
    return f64_min_quiet(a + z, b + z);
}

static inline double f64_max(double a, double b, double z)
{
    return -f64_min_quiet(z - a, z - b);
}

static inline double f64_sum(double a, double b)
{
    return a + b;
}

/*
 * 64-bit signed a < b as a mask, from the sign of a - b corrected for
 * overflow (Hacker's Delight 2-12). SSE2 has no 64-bit compare, so GCC does
 * not vectorise `a < b` on 64-bit lanes; subtraction, logic and shifts it
 * does vectorise.
 */
static inline uint64_t lt64(uint64_t a, uint64_t b)
{
    uint64_t d = a - b;
    return mask64((int)((d ^ ((a ^ b) & (d ^ a))) >> 63));
}

/* Integers: SUM in unsigned arithmetic, which wraps without undefined behaviour. */
static inline uint32_t i32_sum(uint32_t a, uint32_t b)
{
    return a + b;
}

static inline int32_t i32_max(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

static inline int32_t i32_min(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

static inline uint64_t i64_sum(uint64_t a, uint64_t b)
{
    return a + b;
}

static inline uint64_t i64_max(uint64_t a, uint64_t b)
{
    return sel64(lt64(a, b), b, a);
}

static inline uint64_t i64_min(uint64_t a, uint64_t b)
{
    return sel64(lt64(a, b), a, b);
}

/* ------------------------------------------------------------------ */
/* Kernels                                                              */
/* ------------------------------------------------------------------ */

typedef void (*kernel_fn)(unsigned char *acc, const unsigned char *in, size_t n);

/* One loop per (type, operator): T is the element as loaded, fn combines two. */
#define KERNEL(name, T, fn)                                                                        \
    static void name(unsigned char *acc, const unsigned char *in, size_t n)                        \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            T a, b;                                                                                \
            memcpy(&a, acc + i * sizeof(T), sizeof(T));                                            \
            memcpy(&b, in + i * sizeof(T), sizeof(T));                                             \
            a = fn(a, b);                                                                          \
            memcpy(acc + i * sizeof(T), &a, sizeof(T));                                            \
        }                                                                                          \
    }

/* The same for the float MIN / MAX, which also take -0 read once per call. */
#define KERNEL_Z(name, T, fn, minus_zero)                                                          \
    static void name(unsigned char *acc, const unsigned char *in, size_t n)                        \
    {                                                                                              \
        const T z = minus_zero;                                                                    \
        for (size_t i = 0; i < n; i++) {                                                           \
            T a, b;                                                                                \
            memcpy(&a, acc + i * sizeof(T), sizeof(T));                                            \
            memcpy(&b, in + i * sizeof(T), sizeof(T));                                             \
            a = fn(a, b, z);                                                                       \
            memcpy(acc + i * sizeof(T), &a, sizeof(T));                                            \
        }                                                                                          \
    }

KERNEL(k_f16_sum, uint16_t, f16_sum)
KERNEL(k_f16_max, uint16_t, f16_max)
KERNEL(k_f16_min, uint16_t, f16_min)
KERNEL(k_bf16_sum, uint16_t, bf16_sum)
KERNEL(k_bf16_max, uint16_t, bf16_max)
KERNEL(k_bf16_min, uint16_t, bf16_min)
KERNEL(k_f32_sum, float, f32_sum)
KERNEL_Z(k_f32_max, float, f32_max, f32_minus_zero)
KERNEL_Z(k_f32_min, float, f32_min, f32_minus_zero)
KERNEL(k_f64_sum, double, f64_sum)
KERNEL_Z(k_f64_max, double, f64_max, f64_minus_zero)
KERNEL_Z(k_f64_min, double, f64_min, f64_minus_zero)
KERNEL(k_i32_sum, uint32_t, i32_sum)
KERNEL(k_i32_max, int32_t, i32_max)
KERNEL(k_i32_min, int32_t, i32_min)
KERNEL(k_i64_sum, uint64_t, i64_sum)
KERNEL(k_i64_max, uint64_t, i64_max)
KERNEL(k_i64_min, uint64_t, i64_min)

/* Indexed by dtype, then op - 1 (NOP has no kernel). */
static const kernel_fn kernels[ARB_DTYPE_COUNT][ARB_OP_COUNT - 1] = {
    [ARB_DTYPE_F16] = {k_f16_sum, k_f16_max, k_f16_min},
    [ARB_DTYPE_BF16] = {k_bf16_sum, k_bf16_max, k_bf16_min},
    [ARB_DTYPE_F32] = {k_f32_sum, k_f32_max, k_f32_min},
    [ARB_DTYPE_F64] = {k_f64_sum, k_f64_max, k_f64_min},
    [ARB_DTYPE_I32] = {k_i32_sum, k_i32_max, k_i32_min},
    [ARB_DTYPE_I64] = {k_i64_sum, k_i64_max, k_i64_min},
};

/* ------------------------------------------------------------------ */
/* Entry points                                                         */
/* ------------------------------------------------------------------ */

int arb_reduce(arb_op op, arb_dtype dt, void *acc, const void *in, size_t n)
{
    /* Through unsigned so that values below the enum are rejected too. */
    if ((unsigned)op >= ARB_OP_COUNT || (unsigned)dt >= ARB_DTYPE_COUNT) return ARB_EINVAL;
    size_t size = arb_dtype_size(dt);
    if (n > SIZE_MAX / size) return ARB_EINVAL;
    if (n == 0) return 0;
    if (!acc || !in) return ARB_EINVAL;
    if (op == ARB_OP_NOP) return 0;
    kernels[dt][op - 1](acc, in, n);
    return 0;
}

int arb_reduce_bytes(arb_op op, arb_dtype dt, void *acc, const void *in, size_t bytes)
{
    if ((unsigned)dt >= ARB_DTYPE_COUNT) return ARB_EINVAL;
    size_t size = arb_dtype_size(dt);
    if (bytes % size != 0) return ARB_EINVAL;
    return arb_reduce(op, dt, acc, in, bytes / size);
}

void arb_elem_put(void *d, arb_dtype dt, double v)
{
    switch (dt) {
    case ARB_DTYPE_F16: {
        uint16_t h = arb_f32_to_f16((float)v);
        memcpy(d, &h, 2);
        break;
    }
    case ARB_DTYPE_BF16: {
        uint16_t h = arb_f32_to_bf16((float)v);
        memcpy(d, &h, 2);
        break;
    }
    case ARB_DTYPE_F32: {
        float f = (float)v;
        memcpy(d, &f, 4);
        break;
    }
    case ARB_DTYPE_F64:
        memcpy(d, &v, 8);
        break;
    case ARB_DTYPE_I32: {
        int32_t x = (int32_t)v;
        memcpy(d, &x, 4);
        break;
    }
    default: {
        int64_t x = (int64_t)v;
        memcpy(d, &x, 8);
        break;
    }
    }
}

double arb_elem_get(const void *d, arb_dtype dt)
{
    switch (dt) {
    case ARB_DTYPE_F16: {
        uint16_t h;
        memcpy(&h, d, 2);
        return arb_f16_to_f32(h);
    }
    case ARB_DTYPE_BF16: {
        uint16_t h;
        memcpy(&h, d, 2);
        return arb_bf16_to_f32(h);
    }
    case ARB_DTYPE_F32: {
        float f;
        memcpy(&f, d, 4);
        return f;
    }
    case ARB_DTYPE_F64: {
        double v;
        memcpy(&v, d, 8);
        return v;
    }
    case ARB_DTYPE_I32: {
        int32_t x;
        memcpy(&x, d, 4);
        return x;
    }
    default: {
        int64_t x;
        memcpy(&x, d, 8);
        return (double)x;
    }
    }
}
