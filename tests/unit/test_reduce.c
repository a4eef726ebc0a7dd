/*
 * Unit tests: reduce (element-wise reduction and the f16 / bf16 conversions).
 *
 * Every result is checked against a reference written here independently of
 * the library: 16-bit floats are decoded with ldexp, summed exactly in
 * double (with the rounding error recovered by TwoSum where double is not
 * wide enough) and rounded once, straight to the storage format, with
 * frexp / ldexp / floor arithmetic; the library instead widens to f32 and
 * narrows with bit manipulation. f32 sums are referenced through double.
 *
 * Setting ARB_REDUCE_EXHAUSTIVE=1 in the environment adds a check of every
 * pair of f16 and of bf16 operands (2^32 each) for SUM, MAX and MIN; it takes
 * minutes and is not part of the normal run.
 */
#include "arbor/reduce.h"
#include "testkit.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* Reference arithmetic                                                 */
/* ------------------------------------------------------------------ */

/* A 16-bit binary format: precision p (hidden bit included) and the
 * exponent of its smallest subnormal, 2^qmin. */
typedef struct fmt16 {
    int p;
    int qmin;
    uint16_t inf;   /* encoding of +infinity */
    uint16_t quiet; /* quiet-NaN bit */
} fmt16;

static const fmt16 F16 = {11, -24, 0x7c00, 0x0200};
static const fmt16 BF16 = {8, -133, 0x7f80, 0x0040};

static int nan16(const fmt16 *f, uint16_t h)
{
    return (h & 0x7fff) > f->inf;
}

static double ref_decode16(const fmt16 *f, uint16_t h)
{
    int mbits = f->p - 1;
    unsigned e = (h & 0x7fffu) >> mbits;
    unsigned m = h & ((1u << mbits) - 1);
    double v;
    if (e == (unsigned)(f->inf >> mbits))
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, f->qmin);
    else
        v = ldexp((double)(m + (1u << mbits)), f->qmin + (int)e - 1);
    return (h & 0x8000u) ? -v : v;
}

/*
 * Round x to the format, nearest even, once. `dir` is the sign of
 * (exact value - x) when x is itself a rounded approximation of the value
 * to round; it only matters when x lies exactly on a midpoint.
 */
static uint16_t ref_round16(const fmt16 *f, double x, int dir)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    if (x == 0) return sign;
    double ax = fabs(x);
    int d = sign ? -dir : dir; /* direction of the exact magnitude */
    int e;
    (void)frexp(ax, &e); /* ax in [2^(e-1), 2^e) */
    int qe = e - f->p;   /* exponent of the quantum at ax */
    if (qe < f->qmin) qe = f->qmin;
    double y = ldexp(ax, -qe); /* ax in quanta: below 2^p, exact */
    double fl = floor(y), frac = y - fl;
    if (frac > 0.5 || (frac == 0.5 && (d > 0 || (d == 0 && fmod(fl, 2.0) != 0)))) fl += 1;
    /* The encoding is (qe - qmin) binades of 2^(p-1) plus the quanta; a
     * carry into 2^p lands on the next binade, past the last one on inf. */
    double bits = (double)(qe - f->qmin) * ldexp(1.0, f->p - 1) + fl;
    if (bits >= f->inf) return sign | f->inf;
    return (uint16_t)(sign | (uint16_t)bits);
}

/* Sum a + b rounded once to the format; returns 1 for a NaN result. */
static int ref_sum16(const fmt16 *f, uint16_t a, uint16_t b, uint16_t *out)
{
    double x = ref_decode16(f, a), y = ref_decode16(f, b);
    if (isnan(x) || isnan(y) || (isinf(x) && isinf(y) && x != y)) return 1;
    if (isinf(x) || isinf(y)) {
        *out = (uint16_t)((signbit(isinf(x) ? x : y) ? 0x8000 : 0) | f->inf);
        return 0;
    }
    /* TwoSum: s + err == x + y exactly (no overflow at these magnitudes). */
    double s = x + y;
    double bv = s - x;
    double err = (x - (s - bv)) + (y - bv);
    *out = ref_round16(f, s, err > 0 ? 1 : err < 0 ? -1 : 0);
    return 0;
}

/* Which operand MAX / MIN returns: 0 = a, 1 = b, 2 = NaN. */
static int ref_pick(double x, double y, int is_max)
{
    if (isnan(x) || isnan(y)) return 2;
    if (x == y) {
        if (signbit(x) == signbit(y)) return 0;
        /* +0 and -0: max is the positive one, min the negative one. */
        return (signbit(x) != 0) == is_max;
    }
    return is_max ? (x > y ? 0 : 1) : (x < y ? 0 : 1);
}

static uint32_t u32_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t u64_of(double f)
{
    uint64_t u;
    memcpy(&u, &f, 8);
    return u;
}

static double f64_of(uint64_t u)
{
    double f;
    memcpy(&f, &u, 8);
    return f;
}

/*
 * Expected result of one element as an unsigned value of the element's
 * width; returns 1 when the result must be a (quiet) NaN instead.
 */
static int ref_elem(arb_op op, arb_dtype dt, uint64_t a, uint64_t b, uint64_t *out)
{
    if (op == ARB_OP_NOP) {
        *out = a;
        return 0;
    }
    int is_max = op == ARB_OP_MAX;
    switch (dt) {
    case ARB_DTYPE_F16:
    case ARB_DTYPE_BF16: {
        const fmt16 *f = dt == ARB_DTYPE_F16 ? &F16 : &BF16;
        if (op == ARB_OP_SUM) {
            uint16_t r = 0;
            int nan = ref_sum16(f, (uint16_t)a, (uint16_t)b, &r);
            *out = r;
            return nan;
        }
        int k = ref_pick(ref_decode16(f, (uint16_t)a), ref_decode16(f, (uint16_t)b), is_max);
        *out = k ? b : a;
        return k == 2;
    }
    case ARB_DTYPE_F32: {
        float x = f32_of((uint32_t)a), y = f32_of((uint32_t)b);
        if (op == ARB_OP_SUM) {
            /* Double has 53 >= 2 * 24 + 2 bits: rounding through it is exact. */
            float s = (float)((double)x + (double)y);
            *out = u32_of(s);
            return isnan(s);
        }
        int k = ref_pick(x, y, is_max);
        *out = k ? b : a;
        return k == 2;
    }
    case ARB_DTYPE_F64: {
        double x = f64_of(a), y = f64_of(b);
        if (op == ARB_OP_SUM) {
            double s = x + y;
            *out = u64_of(s);
            return isnan(s);
        }
        int k = ref_pick(x, y, is_max);
        *out = k ? b : a;
        return k == 2;
    }
    case ARB_DTYPE_I32: {
        /* Sign-extend to 64 bits, where the sum cannot overflow, and
         * truncate back. */
        int64_t x = (int64_t)(a ^ 0x80000000u) - 0x80000000,
                y = (int64_t)(b ^ 0x80000000u) - 0x80000000;
        int64_t r = op == ARB_OP_SUM ? x + y : is_max ? (x > y ? x : y) : (x < y ? x : y);
        *out = (uint64_t)r & 0xffffffffu;
        return 0;
    }
    case ARB_DTYPE_I64: {
        if (op == ARB_OP_SUM) {
            /* Split in halves so that the carry is explicit. */
            uint64_t lo = (a & 0xffffffffu) + (b & 0xffffffffu);
            uint64_t hi = (a >> 32) + (b >> 32) + (lo >> 32);
            *out = (hi << 32) | (lo & 0xffffffffu);
        } else {
            /* Signed order is unsigned order with the sign bit flipped. */
            int a_less = (a ^ 0x8000000000000000u) < (b ^ 0x8000000000000000u);
            *out = (is_max ? a_less : !a_less) ? b : a;
        }
        return 0;
    }
    }
    return 0;
}

/* Is v, an element of dt, a quiet NaN? */
static int quiet_nan(arb_dtype dt, uint64_t v)
{
    switch (dt) {
    case ARB_DTYPE_F16:
        return nan16(&F16, (uint16_t)v) && (v & F16.quiet);
    case ARB_DTYPE_BF16:
        return nan16(&BF16, (uint16_t)v) && (v & BF16.quiet);
    case ARB_DTYPE_F32:
        return isnan(f32_of((uint32_t)v)) && (v & 0x00400000u);
    case ARB_DTYPE_F64:
        return isnan(f64_of(v)) && (v & 0x0008000000000000u);
    default:
        return 0;
    }
}

static uint64_t load_elem(const unsigned char *p, size_t size)
{
    uint64_t v = 0;
    memcpy(&v, p, size); /* little-endian host */
    return v;
}

static void store_elem(unsigned char *p, size_t size, uint64_t v)
{
    memcpy(p, &v, size);
}

/* Compare one result with the reference; report once per call site loop. */
static int elem_ok(arb_dtype dt, int want_nan, uint64_t want, uint64_t got)
{
    return want_nan ? quiet_nan(dt, got) : got == want;
}

/* ------------------------------------------------------------------ */
/* Random operands                                                      */
/* ------------------------------------------------------------------ */

/*
 * Random bit patterns cover the whole encoding space but almost never
 * cancel or round at a tie; most draws are therefore values of similar
 * magnitude (exponent near the bias) with random signs, plus a few
 * special values.
 */
static uint64_t rand_elem(arb_rng *r, arb_dtype dt)
{
    uint64_t x = arb_rng_next(r);
    unsigned kind = (unsigned)arb_rng_below(r, 16);
    static const uint16_t sp16[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x83ff, 0x7bff};
    static const uint16_t spb16[] = {0x0000, 0x8000, 0x7f80, 0xff80,
                                     0x7fc0, 0x0001, 0x807f, 0x7f7f};
    static const uint32_t sp32[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000,
                                    0x7fc00000, 0x00000001, 0x807fffff, 0x7f7fffff};
    static const uint64_t sp64[] = {
        0, 0x8000000000000000u, 0x7ff0000000000000u, 0xfff0000000000000u, 0x7ff8000000000000u,
        1, 0x800fffffffffffffu, 0x7fefffffffffffffu};
    static const uint64_t spi[] = {
        0,          1,           0xffffffffffffffffu, 0x7fffffffffffffffu, 0x8000000000000000u,
        0x7fffffff, 0x80000000u, 0xffffffff};
    uint64_t sign = x >> 63;
    switch (dt) {
    case ARB_DTYPE_F16:
        if (kind == 0) return sp16[x & 7];
        if (kind < 5) return x & 0xffff;
        /* exponent 12..18: values 2^-3 .. 2^3 */
        return (sign << 15) | ((12 + (x >> 20) % 7) << 10) | (x & 0x3ff);
    case ARB_DTYPE_BF16:
        if (kind == 0) return spb16[x & 7];
        if (kind < 5) return x & 0xffff;
        return (sign << 15) | ((124 + (x >> 20) % 7) << 7) | (x & 0x7f);
    case ARB_DTYPE_F32:
        if (kind == 0) return sp32[x & 7];
        if (kind < 5) return x & 0xffffffffu;
        return (sign << 31) | ((120 + (x >> 40) % 15) << 23) | (x & 0x7fffff);
    case ARB_DTYPE_F64:
        if (kind == 0) return sp64[x & 7];
        if (kind < 5) return x;
        return (sign << 63) | ((1016 + (x >> 53) % 15) << 52) | (x & 0xfffffffffffffu);
    case ARB_DTYPE_I32:
        if (kind == 0) return spi[x & 7] & 0xffffffffu;
        if (kind < 3) return ((uint32_t)x % 201u - 100u) & 0xffffffffu; /* -100..100 */
        return x & 0xffffffffu;
    case ARB_DTYPE_I64:
        if (kind == 0) return spi[x & 7];
        if (kind < 3) return x % 201u - 100u;
        if (kind < 6) /* equal high halves: only the low half decides */
            return (spi[x & 7] & 0xffffffff00000000u) | (x >> 32);
        return x;
    }
    return x;
}

/* ------------------------------------------------------------------ */
/* Tests                                                                */
/* ------------------------------------------------------------------ */

static const arb_op all_ops[] = {ARB_OP_NOP, ARB_OP_SUM, ARB_OP_MAX, ARB_OP_MIN};
static const arb_dtype all_dtypes[] = {ARB_DTYPE_F16, ARB_DTYPE_BF16, ARB_DTYPE_F32,
                                       ARB_DTYPE_F64, ARB_DTYPE_I32,  ARB_DTYPE_I64};

#define MAX_N 67
#define GUARD 0xa5

/*
 * Every op x dtype over lengths 0..67 at several byte offsets (the library
 * promises no alignment; the offsets also shift where vector loops start
 * and stop). Bytes around the reduced range must stay untouched.
 */
TEST(random_all_ops_lengths_offsets)
{
    static const size_t offs[][2] = {{0, 0}, {1, 3}, {3, 1}, {2, 6}, {5, 5}, {7, 0}};
    unsigned char acc[MAX_N * 8 + 32], in[MAX_N * 8 + 32], orig[MAX_N * 8 + 32];
    arb_rng r;
    arb_rng_seed(&r, 20240601);
    for (size_t d = 0; d < 6; d++)
        for (size_t o = 0; o < 4; o++)
            for (size_t n = 0; n <= MAX_N; n++)
                for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
                    arb_dtype dt = all_dtypes[d];
                    arb_op op = all_ops[o];
                    size_t sz = arb_dtype_size(dt), oa = offs[k][0], ob = offs[k][1];
                    memset(acc, GUARD, sizeof acc);
                    memset(in, GUARD, sizeof in);
                    for (size_t i = 0; i < n; i++) {
                        store_elem(acc + oa + i * sz, sz, rand_elem(&r, dt));
                        store_elem(in + ob + i * sz, sz, rand_elem(&r, dt));
                    }
                    memcpy(orig, acc, sizeof acc);
                    CHECK_EQ_I(arb_reduce(op, dt, acc + oa, in + ob, n), 0);
                    for (size_t i = 0; i < n; i++) {
                        uint64_t a = load_elem(orig + oa + i * sz, sz);
                        uint64_t b = load_elem(in + ob + i * sz, sz);
                        uint64_t got = load_elem(acc + oa + i * sz, sz), want = 0;
                        int nan = ref_elem(op, dt, a, b, &want);
                        if (!elem_ok(dt, nan, want, got))
                            TESTKIT_REPORT("%s %s n=%zu i=%zu: %#" PRIx64 " op %#" PRIx64
                                           " = %#" PRIx64 ", want %s%#" PRIx64,
                                           arb_op_name(op), arb_dtype_name(dt), n, i, a, b, got,
                                           nan ? "NaN " : "", want);
                    }
                    for (size_t i = 0; i < oa; i++)
                        CHECK_EQ_U(acc[i], GUARD);
                    for (size_t i = oa + n * sz; i < sizeof acc; i++)
                        CHECK_EQ_U(acc[i], GUARD);
                    if (TEST_FAILING()) return;
                }
}

/* acc == in is allowed: x OP x for every op and dtype. */
TEST(acc_is_in)
{
    unsigned char buf[MAX_N * 8 + 8], orig[MAX_N * 8 + 8];
    arb_rng r;
    arb_rng_seed(&r, 7);
    for (size_t d = 0; d < 6; d++)
        for (size_t o = 0; o < 4; o++)
            for (size_t n = 0; n <= MAX_N; n += 11) {
                arb_dtype dt = all_dtypes[d];
                arb_op op = all_ops[o];
                size_t sz = arb_dtype_size(dt);
                for (size_t i = 0; i < n; i++)
                    store_elem(buf + 1 + i * sz, sz, rand_elem(&r, dt));
                memcpy(orig, buf, sizeof buf);
                CHECK_EQ_I(arb_reduce(op, dt, buf + 1, buf + 1, n), 0);
                for (size_t i = 0; i < n; i++) {
                    uint64_t a = load_elem(orig + 1 + i * sz, sz), want = 0;
                    uint64_t got = load_elem(buf + 1 + i * sz, sz);
                    int nan = ref_elem(op, dt, a, a, &want);
                    if (!elem_ok(dt, nan, want, got))
                        TESTKIT_REPORT("%s %s: %#" PRIx64 " op itself = %#" PRIx64, arb_op_name(op),
                                       arb_dtype_name(dt), a, got);
                }
            }
}

/* Hand-checked cases; NAN_RESULT marks a result that must be a quiet NaN. */
#define NAN_RESULT 0xdeadu
typedef struct special {
    arb_dtype dt;
    arb_op op;
    uint64_t a, b, r;
} special;

#define S ARB_OP_SUM
#define X ARB_OP_MAX
#define N ARB_OP_MIN
static const special specials[] = {
    /* f16: overflow, the largest finite value's rounding boundary */
    {ARB_DTYPE_F16, S, 0x3c00, 0x3c00, 0x4000},
    {ARB_DTYPE_F16, S, 0x7bff, 0x7bff, 0x7c00}, /* 65504 + 65504 = inf */
    {ARB_DTYPE_F16, S, 0xfbff, 0xfbff, 0xfc00},
    {ARB_DTYPE_F16, S, 0x7bff, 0x4c00, 0x7c00}, /* 65504 + 16 = 65520, tie, odd: inf */
    {ARB_DTYPE_F16, S, 0x7bff, 0x4b80, 0x7bff}, /* 65504 + 15 */
    {ARB_DTYPE_F16, S, 0x7bff, 0x4800, 0x7bff}, /* 65504 + 8 */
    {ARB_DTYPE_F16, S, 0x7bfe, 0x4c00, 0x7bfe}, /* 65472 + 16, tie, even: down */
    /* f16 ties to even */
    {ARB_DTYPE_F16, S, 0x3c00, 0x1000, 0x3c00}, /* 1 + 2^-11 */
    {ARB_DTYPE_F16, S, 0x3c01, 0x1000, 0x3c02},
    {ARB_DTYPE_F16, S, 0x3c00, 0x1001, 0x3c01}, /* just above the tie */
    {ARB_DTYPE_F16, S, 0x3c00, 0x9001, 0x3bff}, /* 1 - (2^-11 + 2^-21) */
    /* f16 subnormals */
    {ARB_DTYPE_F16, S, 0x0001, 0x0001, 0x0002}, /* 2^-24 + 2^-24 */
    {ARB_DTYPE_F16, S, 0x03ff, 0x0001, 0x0400}, /* into the normals */
    {ARB_DTYPE_F16, S, 0x0400, 0x8001, 0x03ff}, /* out of them */
    {ARB_DTYPE_F16, S, 0x0200, 0x0200, 0x0400},
    {ARB_DTYPE_F16, S, 0x0001, 0x8001, 0x0000},
    {ARB_DTYPE_F16, S, 0x8001, 0x8001, 0x8002},
    {ARB_DTYPE_F16, S, 0x3c00, 0x0001, 0x3c00},
    /* f16 zeros, infinities, NaN */
    {ARB_DTYPE_F16, S, 0x0000, 0x8000, 0x0000},
    {ARB_DTYPE_F16, S, 0x8000, 0x0000, 0x0000},
    {ARB_DTYPE_F16, S, 0x8000, 0x8000, 0x8000},
    {ARB_DTYPE_F16, S, 0x3c00, 0xbc00, 0x0000},
    {ARB_DTYPE_F16, S, 0x7c00, 0xfc00, NAN_RESULT},
    {ARB_DTYPE_F16, S, 0x7c00, 0x7c00, 0x7c00},
    {ARB_DTYPE_F16, S, 0xfc00, 0x7bff, 0xfc00},
    {ARB_DTYPE_F16, S, 0x7e00, 0x3c00, NAN_RESULT},
    {ARB_DTYPE_F16, S, 0x3c00, 0xfe00, NAN_RESULT},
    {ARB_DTYPE_F16, S, 0x7c01, 0x0000, NAN_RESULT}, /* signalling NaN */
    {ARB_DTYPE_F16, S, 0x7c00, 0x7d00, NAN_RESULT},
    {ARB_DTYPE_F16, X, 0x8000, 0x0000, 0x0000},
    {ARB_DTYPE_F16, X, 0x0000, 0x8000, 0x0000},
    {ARB_DTYPE_F16, X, 0x8000, 0x8000, 0x8000},
    {ARB_DTYPE_F16, X, 0x7e00, 0x3c00, NAN_RESULT},
    {ARB_DTYPE_F16, X, 0x3c00, 0x7e00, NAN_RESULT},
    {ARB_DTYPE_F16, X, 0x7c00, 0x7c01, NAN_RESULT},
    {ARB_DTYPE_F16, X, 0xfe00, 0xfc00, NAN_RESULT},
    {ARB_DTYPE_F16, X, 0x7c00, 0xfc00, 0x7c00},
    {ARB_DTYPE_F16, X, 0xbc00, 0xc000, 0xbc00}, /* max(-1, -2) */
    {ARB_DTYPE_F16, X, 0x0001, 0x0000, 0x0001},
    {ARB_DTYPE_F16, X, 0x8001, 0x8000, 0x8000},
    {ARB_DTYPE_F16, X, 0x3c00, 0x3c01, 0x3c01},
    {ARB_DTYPE_F16, N, 0x8000, 0x0000, 0x8000},
    {ARB_DTYPE_F16, N, 0x0000, 0x8000, 0x8000},
    {ARB_DTYPE_F16, N, 0x0000, 0x0000, 0x0000},
    {ARB_DTYPE_F16, N, 0x7e00, 0xfc00, NAN_RESULT},
    {ARB_DTYPE_F16, N, 0xfc00, 0xfe00, NAN_RESULT},
    {ARB_DTYPE_F16, N, 0x7c00, 0xfc00, 0xfc00},
    {ARB_DTYPE_F16, N, 0xbc00, 0xc000, 0xc000},
    {ARB_DTYPE_F16, N, 0x8001, 0x8000, 0x8001},
    /* bf16 */
    {ARB_DTYPE_BF16, S, 0x3f80, 0x3f80, 0x4000},
    {ARB_DTYPE_BF16, S, 0x7f7f, 0x7f7f, 0x7f80}, /* overflow */
    {ARB_DTYPE_BF16, S, 0x7f7f, 0x7b00, 0x7f80}, /* max + half ulp, tie, odd: inf */
    {ARB_DTYPE_BF16, S, 0x7f7f, 0x7a80, 0x7f7f}, /* max + quarter ulp */
    {ARB_DTYPE_BF16, S, 0x7f7e, 0x7b00, 0x7f7e}, /* tie, even: down */
    {ARB_DTYPE_BF16, S, 0xff7f, 0xfb00, 0xff80},
    {ARB_DTYPE_BF16, S, 0x3f80, 0x3b80, 0x3f80}, /* 1 + 2^-8, tie, even */
    {ARB_DTYPE_BF16, S, 0x3f81, 0x3b80, 0x3f82}, /* tie, odd */
    {ARB_DTYPE_BF16, S, 0x3f80, 0x3b81, 0x3f81}, /* above the tie */
    {ARB_DTYPE_BF16, S, 0x3f80, 0x2b80, 0x3f80}, /* 1 + 2^-40: beyond f32 too */
    {ARB_DTYPE_BF16, S, 0x0001, 0x0001, 0x0002}, /* 2^-133 + 2^-133 */
    {ARB_DTYPE_BF16, S, 0x007f, 0x0001, 0x0080},
    {ARB_DTYPE_BF16, S, 0x0080, 0x8001, 0x007f},
    {ARB_DTYPE_BF16, S, 0x0001, 0x8001, 0x0000},
    {ARB_DTYPE_BF16, S, 0x8001, 0x8001, 0x8002},
    {ARB_DTYPE_BF16, S, 0x0040, 0x0040, 0x0080},
    {ARB_DTYPE_BF16, S, 0x0000, 0x8000, 0x0000},
    {ARB_DTYPE_BF16, S, 0x8000, 0x8000, 0x8000},
    {ARB_DTYPE_BF16, S, 0x7f80, 0xff80, NAN_RESULT},
    {ARB_DTYPE_BF16, S, 0x7f80, 0x7f7f, 0x7f80},
    {ARB_DTYPE_BF16, S, 0x7fc0, 0x3f80, NAN_RESULT},
    {ARB_DTYPE_BF16, S, 0x7f81, 0x0000, NAN_RESULT}, /* signalling NaN */
    {ARB_DTYPE_BF16, S, 0x0000, 0xff81, NAN_RESULT},
    {ARB_DTYPE_BF16, X, 0x8000, 0x0000, 0x0000},
    {ARB_DTYPE_BF16, X, 0x0000, 0x8000, 0x0000},
    {ARB_DTYPE_BF16, X, 0x7fc0, 0x3f80, NAN_RESULT},
    {ARB_DTYPE_BF16, X, 0xff80, 0x7f81, NAN_RESULT},
    {ARB_DTYPE_BF16, X, 0x7f80, 0xff80, 0x7f80},
    {ARB_DTYPE_BF16, X, 0xbf80, 0xc000, 0xbf80},
    {ARB_DTYPE_BF16, N, 0x8000, 0x0000, 0x8000},
    {ARB_DTYPE_BF16, N, 0x0000, 0x8000, 0x8000},
    {ARB_DTYPE_BF16, N, 0x3f80, 0xffc0, NAN_RESULT},
    {ARB_DTYPE_BF16, N, 0x7f80, 0xff80, 0xff80},
    {ARB_DTYPE_BF16, N, 0x8001, 0x8000, 0x8001},
    /* f32 */
    {ARB_DTYPE_F32, S, 0x00000001, 0x00000001, 0x00000002}, /* subnormals kept */
    {ARB_DTYPE_F32, S, 0x00800000, 0x80000001, 0x007fffff},
    {ARB_DTYPE_F32, S, 0x007fffff, 0x00000001, 0x00800000},
    {ARB_DTYPE_F32, S, 0x7f7fffff, 0x7f7fffff, 0x7f800000},
    {ARB_DTYPE_F32, S, 0x3f800000, 0x33800000, 0x3f800000}, /* 1 + 2^-24, tie, even */
    {ARB_DTYPE_F32, S, 0x3f800001, 0x33800000, 0x3f800002},
    {ARB_DTYPE_F32, S, 0x7f800000, 0xff800000, NAN_RESULT},
    {ARB_DTYPE_F32, S, 0x7fc00000, 0x3f800000, NAN_RESULT},
    {ARB_DTYPE_F32, S, 0x7f800001, 0x3f800000, NAN_RESULT}, /* signalling NaN */
    {ARB_DTYPE_F32, S, 0x00000000, 0x80000000, 0x00000000},
    {ARB_DTYPE_F32, S, 0x80000000, 0x80000000, 0x80000000},
    {ARB_DTYPE_F32, X, 0x80000000, 0x00000000, 0x00000000},
    {ARB_DTYPE_F32, X, 0x00000000, 0x80000000, 0x00000000},
    {ARB_DTYPE_F32, X, 0x7fc00000, 0xff800000, NAN_RESULT},
    {ARB_DTYPE_F32, X, 0x3f800000, 0x7f800001, NAN_RESULT},
    {ARB_DTYPE_F32, X, 0x7f800000, 0xff800000, 0x7f800000},
    {ARB_DTYPE_F32, X, 0x00000001, 0x00000000, 0x00000001},
    {ARB_DTYPE_F32, X, 0xbf800000, 0xc0000000, 0xbf800000},
    {ARB_DTYPE_F32, N, 0x80000000, 0x00000000, 0x80000000},
    {ARB_DTYPE_F32, N, 0x00000000, 0x80000000, 0x80000000},
    {ARB_DTYPE_F32, N, 0xffc00000, 0x3f800000, NAN_RESULT},
    {ARB_DTYPE_F32, N, 0x7f800001, 0x3f800000, NAN_RESULT}, /* signalling NaN */
    {ARB_DTYPE_F32, N, 0x00000000, 0xff800001, NAN_RESULT},
    {ARB_DTYPE_F32, X, 0xff800001, 0x00000000, NAN_RESULT},
    {ARB_DTYPE_F32, N, 0x7f800000, 0xff800000, 0xff800000},
    {ARB_DTYPE_F32, N, 0x80000001, 0x80000000, 0x80000001},
    /* f64 */
    {ARB_DTYPE_F64, S, 1, 1, 2},
    {ARB_DTYPE_F64, S, 0x0010000000000000u, 0x8000000000000001u, 0x000fffffffffffffu},
    {ARB_DTYPE_F64, S, 0x7fefffffffffffffu, 0x7fefffffffffffffu, 0x7ff0000000000000u},
    {ARB_DTYPE_F64, S, 0x7ff0000000000000u, 0xfff0000000000000u, NAN_RESULT},
    {ARB_DTYPE_F64, S, 0x0000000000000000u, 0x8000000000000000u, 0},
    {ARB_DTYPE_F64, S, 0x8000000000000000u, 0x8000000000000000u, 0x8000000000000000u},
    {ARB_DTYPE_F64, X, 0x8000000000000000u, 0, 0},
    {ARB_DTYPE_F64, X, 0, 0x8000000000000000u, 0},
    {ARB_DTYPE_F64, X, 0x7ff8000000000000u, 0xfff0000000000000u, NAN_RESULT},
    {ARB_DTYPE_F64, X, 0x3ff0000000000000u, 0x7ff0000000000001u, NAN_RESULT},
    {ARB_DTYPE_F64, X, 0xfff0000000000001u, 0x7ff0000000000000u, NAN_RESULT},
    {ARB_DTYPE_F64, X, 0x7ff0000000000000u, 0xfff0000000000000u, 0x7ff0000000000000u},
    {ARB_DTYPE_F64, X, 0xbff0000000000000u, 0xc000000000000000u, 0xbff0000000000000u},
    {ARB_DTYPE_F64, X, 1, 0, 1},
    {ARB_DTYPE_F64, X, 0x8000000000000001u, 0x8000000000000000u, 0x8000000000000000u},
    {ARB_DTYPE_F64, N, 0x8000000000000000u, 0, 0x8000000000000000u},
    {ARB_DTYPE_F64, N, 0, 0x8000000000000000u, 0x8000000000000000u},
    {ARB_DTYPE_F64, N, 0xfff8000000000000u, 0x3ff0000000000000u, NAN_RESULT},
    {ARB_DTYPE_F64, N, 0x7ff0000000000001u, 0, NAN_RESULT}, /* signalling NaN */
    {ARB_DTYPE_F64, N, 0x8000000000000000u, 0xfff0000000000001u, NAN_RESULT},
    {ARB_DTYPE_F64, N, 0x7ff0000000000000u, 0xfff0000000000000u, 0xfff0000000000000u},
    {ARB_DTYPE_F64, N, 0x8000000000000001u, 0x8000000000000000u, 0x8000000000000001u},
    /* integers wrap */
    {ARB_DTYPE_I32, S, 0x7fffffff, 1, 0x80000000}, /* INT32_MAX + 1 = INT32_MIN */
    {ARB_DTYPE_I32, S, 0x80000000, 0xffffffff, 0x7fffffff},
    {ARB_DTYPE_I32, S, 0xffffffff, 1, 0},
    {ARB_DTYPE_I32, X, 0x80000000, 0x7fffffff, 0x7fffffff},
    {ARB_DTYPE_I32, X, 0xffffffff, 0, 0},
    {ARB_DTYPE_I32, N, 0x80000000, 0x7fffffff, 0x80000000},
    {ARB_DTYPE_I32, N, 0xffffffff, 0, 0xffffffff},
    {ARB_DTYPE_I64, S, 0x7fffffffffffffffu, 1, 0x8000000000000000u},
    {ARB_DTYPE_I64, S, 0x8000000000000000u, 0xffffffffffffffffu, 0x7fffffffffffffffu},
    {ARB_DTYPE_I64, S, 0xffffffffffffffffu, 1, 0},
    {ARB_DTYPE_I64, S, 0x00000000ffffffffu, 1, 0x0000000100000000u},
    {ARB_DTYPE_I64, X, 0x8000000000000000u, 0x7fffffffffffffffu, 0x7fffffffffffffffu},
    {ARB_DTYPE_I64, X, 0x7fffffffffffffffu, 0x8000000000000000u, 0x7fffffffffffffffu},
    {ARB_DTYPE_I64, X, 0xffffffffffffffffu, 0, 0},
    {ARB_DTYPE_I64, X, 0x00000000ffffffffu, 0x0000000100000000u, 0x0000000100000000u},
    {ARB_DTYPE_I64, X, 0xffffffff00000000u, 0xfffffffeffffffffu, 0xffffffff00000000u},
    {ARB_DTYPE_I64, N, 0x8000000000000000u, 0x7fffffffffffffffu, 0x8000000000000000u},
    {ARB_DTYPE_I64, N, 0x7fffffffffffffffu, 0xffffffffffffffffu, 0xffffffffffffffffu},
    {ARB_DTYPE_I64, N, 0x8000000000000001u, 0x8000000000000000u, 0x8000000000000000u},
};
#undef S
#undef X
#undef N

static void check_special(const special *s, uint64_t got, int pos)
{
    int want_nan = s->r == NAN_RESULT;
    if (!elem_ok(s->dt, want_nan, s->r, got))
        TESTKIT_REPORT("%s %s %#" PRIx64 ", %#" PRIx64 " (pos %d) = %#" PRIx64 ", want %#" PRIx64,
                       arb_op_name(s->op), arb_dtype_name(s->dt), s->a, s->b, pos, got, s->r);
}

/* The table one element at a time, and again inside long vectors. */
TEST(special_values)
{
    size_t count = sizeof specials / sizeof specials[0];
    for (size_t i = 0; i < count; i++) {
        const special *s = &specials[i];
        size_t sz = arb_dtype_size(s->dt);
        unsigned char acc[8], in[8];
        store_elem(acc, sz, s->a);
        store_elem(in, sz, s->b);
        CHECK_EQ_I(arb_reduce(s->op, s->dt, acc, in, 1), 0);
        check_special(s, load_elem(acc, sz), -1);
        /* the reference must agree with the table too */
        uint64_t want = 0;
        int nan = ref_elem(s->op, s->dt, s->a, s->b, &want);
        CHECK(nan == (s->r == NAN_RESULT));
        if (!nan && want != s->r)
            TESTKIT_REPORT("reference disagrees on %s %s %#" PRIx64 ", %#" PRIx64 ": %#" PRIx64,
                           arb_op_name(s->op), arb_dtype_name(s->dt), s->a, s->b, want);
    }
    /* Each entry at every position of a 53-element vector, so that it
     * passes through the vector body as well as the scalar tail. */
    unsigned char acc[53 * 8 + 1], in[53 * 8 + 1];
    for (size_t i = 0; i < count; i++) {
        const special *s = &specials[i];
        size_t sz = arb_dtype_size(s->dt);
        for (size_t j = 0; j < 53; j++) {
            store_elem(acc + 1 + j * sz, sz, s->a);
            store_elem(in + j * sz, sz, s->b);
        }
        CHECK_EQ_I(arb_reduce(s->op, s->dt, acc + 1, in, 53), 0);
        for (size_t j = 0; j < 53; j++)
            check_special(s, load_elem(acc + 1 + j * sz, sz), (int)j);
    }
}

TEST(f16_decode_exhaustive)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        double want = ref_decode16(&F16, (uint16_t)h);
        double got = arb_f16_to_f32((uint16_t)h);
        if (isnan(want) ? !isnan(got) : (got != want || signbit(got) != signbit(want)))
            TESTKIT_REPORT("f16 %#x -> %a, want %a", h, got, want);
    }
}

TEST(bf16_decode_exhaustive)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        double want = ref_decode16(&BF16, (uint16_t)h);
        double got = arb_bf16_to_f32((uint16_t)h);
        if (isnan(want) ? !isnan(got) : (got != want || signbit(got) != signbit(want)))
            TESTKIT_REPORT("bf16 %#x -> %a, want %a", h, got, want);
    }
}

/* Widening then narrowing is the identity, except that NaN becomes quiet. */
TEST(round_trip_exhaustive)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        uint16_t a = arb_f32_to_f16(arb_f16_to_f32((uint16_t)h));
        uint16_t b = arb_f32_to_bf16(arb_bf16_to_f32((uint16_t)h));
        if (nan16(&F16, (uint16_t)h) ? !quiet_nan(ARB_DTYPE_F16, a) : a != h)
            TESTKIT_REPORT("f16 %#x -> %#x", h, a);
        if (nan16(&BF16, (uint16_t)h) ? !quiet_nan(ARB_DTYPE_BF16, b) : b != h)
            TESTKIT_REPORT("bf16 %#x -> %#x", h, b);
    }
}

static void check_narrow(float x)
{
    uint16_t h = arb_f32_to_f16(x), b = arb_f32_to_bf16(x);
    if (isnan(x)) {
        CHECK(quiet_nan(ARB_DTYPE_F16, h));
        CHECK(quiet_nan(ARB_DTYPE_BF16, b));
        return;
    }
    uint16_t wh =
        isinf(x) ? (uint16_t)((signbit(x) ? 0x8000 : 0) | 0x7c00) : ref_round16(&F16, x, 0);
    uint16_t wb =
        isinf(x) ? (uint16_t)((signbit(x) ? 0x8000 : 0) | 0x7f80) : ref_round16(&BF16, x, 0);
    if (h != wh) TESTKIT_REPORT("f32 %a (%#x) -> f16 %#x, want %#x", (double)x, u32_of(x), h, wh);
    if (b != wb) TESTKIT_REPORT("f32 %a (%#x) -> bf16 %#x, want %#x", (double)x, u32_of(x), b, wb);
}

/*
 * f32 -> f16 / bf16 at every rounding boundary: for each finite value of
 * the narrow format, the value, its midpoint with the next one (the
 * successor of the largest finite value is the first value that overflows),
 * and the f32 neighbours of both, in both signs.
 */
TEST(narrow_boundaries)
{
    const fmt16 *fmts[] = {&F16, &BF16};
    for (int k = 0; k < 2; k++) {
        const fmt16 *f = fmts[k];
        for (uint32_t h = 0; h < f->inf; h++) {
            double v = ref_decode16(f, (uint16_t)h);
            double next = h + 1 == f->inf ? 2 * v - ref_decode16(f, (uint16_t)(h - 1))
                                          : ref_decode16(f, (uint16_t)(h + 1));
            float pts[2] = {(float)v, (float)((v + next) / 2)};
            for (int p = 0; p < 2; p++) {
                float x = pts[p];
                float around[3] = {nextafterf(x, -INFINITY), x, nextafterf(x, INFINITY)};
                for (int q = 0; q < 3; q++) {
                    check_narrow(around[q]);
                    check_narrow(-around[q]);
                }
            }
            if (TEST_FAILING()) return;
        }
    }
    static const float extra[] = {FLT_MAX,    FLT_MIN,    1e-45f,   1e30f,
                                  65519.996f, 65520.0f,   0x1p-25f, 0x1.000002p-25f,
                                  0x1p-26f,   0x1.8p-24f, 0x1p-134f};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        check_narrow(extra[i]);
        check_narrow(-extra[i]);
    }
    check_narrow(INFINITY);
    check_narrow(-INFINITY);
    check_narrow(NAN);
    check_narrow(f32_of(0x7f800001)); /* payload only in bits that are dropped */
    check_narrow(f32_of(0xff800001));
    check_narrow(f32_of(0x7fffffff));
}

/* f32 -> f16 / bf16 on random encodings and on random values in range. */
TEST(narrow_random)
{
    arb_rng r;
    arb_rng_seed(&r, 99);
    for (int i = 0; i < 400000; i++) {
        uint64_t x = arb_rng_next(&r);
        check_narrow(f32_of((uint32_t)x));
        /* biased exponents 97..145: f16 subnormal range to overflow */
        uint32_t e = 97 + (uint32_t)((x >> 32) % 49);
        check_narrow(f32_of((uint32_t)(x >> 63 << 31) | e << 23 | ((uint32_t)x & 0x7fffff)));
        if (TEST_FAILING()) return;
    }
}

/* A fixed operand against all 65536 encodings, all ops, through arb_reduce. */
static void check_against_all(arb_dtype dt, uint16_t a, uint16_t *acc, uint16_t *in)
{
    static const arb_op ops[] = {ARB_OP_SUM, ARB_OP_MAX, ARB_OP_MIN};
    for (int o = 0; o < 3; o++) {
        for (uint32_t b = 0; b < 0x10000; b++) {
            acc[b] = a;
            in[b] = (uint16_t)b;
        }
        CHECK_EQ_I(arb_reduce(ops[o], dt, acc, in, 0x10000), 0);
        for (uint32_t b = 0; b < 0x10000; b++) {
            uint64_t want = 0;
            int nan = ref_elem(ops[o], dt, a, b, &want);
            if (!elem_ok(dt, nan, want, acc[b]))
                TESTKIT_REPORT("%s %s %#x, %#x = %#x, want %s%#" PRIx64, arb_op_name(ops[o]),
                               arb_dtype_name(dt), a, b, acc[b], nan ? "NaN " : "", want);
        }
    }
}

/*
 * SUM / MAX / MIN of chosen operands with every f16 and every bf16: both
 * zeros, the extreme subnormals and normals, values near 1 (ties with small
 * operands), infinities and NaNs.
 */
TEST(half_against_all_encodings)
{
    static const uint16_t f16a[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00,
                                    0xbc01, 0x3bff, 0x4000, 0x5a5a, 0x7bff, 0xfbfe, 0x7c00,
                                    0xfc00, 0x7e00, 0x1000, 0x9001, 0x6400, 0x0155};
    static const uint16_t bf16a[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f80,
                                     0xbf81, 0x3f7f, 0x4000, 0x5a5a, 0x7f7f, 0xff7e, 0x7f80,
                                     0xff80, 0x7fc0, 0x3b80, 0xbb81, 0x4b00, 0x0055};
    uint16_t *acc = malloc(0x10000 * sizeof *acc), *in = malloc(0x10000 * sizeof *in);
    CHECK(acc && in);
    if (!acc || !in) goto out;
    for (size_t i = 0; i < sizeof f16a / sizeof f16a[0] && !TEST_FAILING(); i++)
        check_against_all(ARB_DTYPE_F16, f16a[i], acc, in);
    for (size_t i = 0; i < sizeof bf16a / sizeof bf16a[0] && !TEST_FAILING(); i++)
        check_against_all(ARB_DTYPE_BF16, bf16a[i], acc, in);
out:
    free(acc);
    free(in);
}

/* Every pair of operands; only with ARB_REDUCE_EXHAUSTIVE=1. */
TEST(half_exhaustive_pairs)
{
    const char *env = getenv("ARB_REDUCE_EXHAUSTIVE");
    if (!env || strcmp(env, "1") != 0) return;
    uint16_t *acc = malloc(0x10000 * sizeof *acc), *in = malloc(0x10000 * sizeof *in);
    CHECK(acc && in);
    if (!acc || !in) goto out;
    for (uint32_t a = 0; a < 0x10000 && !TEST_FAILING(); a++) {
        check_against_all(ARB_DTYPE_F16, (uint16_t)a, acc, in);
        check_against_all(ARB_DTYPE_BF16, (uint16_t)a, acc, in);
    }
out:
    free(acc);
    free(in);
}

TEST(nop_leaves_acc)
{
    uint64_t acc[4] = {1, 0x7ff8000000000001u, 3, 4}, in[4] = {9, 9, 9, 9};
    for (size_t d = 0; d < 6; d++) {
        CHECK_EQ_I(arb_reduce(ARB_OP_NOP, all_dtypes[d], acc, in, 4), 0);
        CHECK_EQ_I(arb_reduce_bytes(ARB_OP_NOP, all_dtypes[d], acc, in, 8), 0);
    }
    CHECK_EQ_U(acc[0], 1);
    CHECK_EQ_U(acc[1], 0x7ff8000000000001u);
    CHECK_EQ_U(acc[2], 3);
    CHECK_EQ_U(acc[3], 4);
}

TEST(errors)
{
    uint64_t acc[4] = {0}, in[4] = {0};
    CHECK_EQ_I(arb_reduce((arb_op)4, ARB_DTYPE_F32, acc, in, 1), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce((arb_op)-1, ARB_DTYPE_F32, acc, in, 1), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce(ARB_OP_SUM, (arb_dtype)6, acc, in, 1), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce(ARB_OP_SUM, (arb_dtype)-1, acc, in, 1), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce((arb_op)4, ARB_DTYPE_F32, acc, in, 0), ARB_EINVAL);
    /* more elements than the address space holds */
    CHECK_EQ_I(arb_reduce(ARB_OP_SUM, ARB_DTYPE_F16, acc, in, SIZE_MAX / 2 + 1), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce(ARB_OP_SUM, ARB_DTYPE_I64, acc, in, SIZE_MAX / 8 + 1), ARB_EINVAL);
    /* NULL buffers: fine when empty */
    CHECK_EQ_I(arb_reduce(ARB_OP_SUM, ARB_DTYPE_F32, NULL, NULL, 0), 0);
    CHECK_EQ_I(arb_reduce(ARB_OP_SUM, ARB_DTYPE_F32, NULL, in, 1), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce(ARB_OP_MAX, ARB_DTYPE_F32, acc, NULL, 1), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce(ARB_OP_NOP, ARB_DTYPE_F32, acc, NULL, 1), ARB_EINVAL);
    /* byte counts */
    CHECK_EQ_I(arb_reduce_bytes(ARB_OP_SUM, ARB_DTYPE_F16, acc, in, 3), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce_bytes(ARB_OP_SUM, ARB_DTYPE_BF16, acc, in, 1), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce_bytes(ARB_OP_SUM, ARB_DTYPE_F32, acc, in, 6), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce_bytes(ARB_OP_SUM, ARB_DTYPE_F64, acc, in, 12), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce_bytes(ARB_OP_SUM, ARB_DTYPE_I32, acc, in, 2), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce_bytes(ARB_OP_SUM, ARB_DTYPE_I64, acc, in, 28), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce_bytes(ARB_OP_SUM, ARB_DTYPE_I64, acc, in, 0), 0);
    CHECK_EQ_I(arb_reduce_bytes(ARB_OP_SUM, (arb_dtype)6, acc, in, 8), ARB_EINVAL);
    CHECK_EQ_I(arb_reduce_bytes((arb_op)9, ARB_DTYPE_I64, acc, in, 8), ARB_EINVAL);
    /* nothing was written by a rejected call */
    for (int i = 0; i < 4; i++)
        CHECK_EQ_U(acc[i], 0);
    /* the byte form reduces bytes / size elements */
    uint32_t a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    CHECK_EQ_I(arb_reduce_bytes(ARB_OP_SUM, ARB_DTYPE_I32, a, b, 8), 0);
    CHECK_EQ_U(a[0], 11);
    CHECK_EQ_U(a[1], 22);
    CHECK_EQ_U(a[2], 3);
}

/* arb_elem_put / arb_elem_get: small integers round-trip exactly in every
 * dtype, at an unaligned address, writing exactly the element's bytes;
 * 0.5 is exact in the float types and truncates to 0 in the integers. */
TEST(elem_put_get)
{
    for (int dt = 0; dt < ARB_DTYPE_COUNT; dt++) {
        size_t es = arb_dtype_size(dt);
        uint8_t buf[1 + 8 + 1];
        for (int v = -8; v <= 8; v++) {
            memset(buf, 0xAB, sizeof buf);
            arb_elem_put(buf + 1, (arb_dtype)dt, v);
            CHECK(arb_elem_get(buf + 1, (arb_dtype)dt) == v);
            CHECK_EQ_U(buf[0], 0xAB);
            CHECK_EQ_U(buf[1 + es], 0xAB);
        }
        arb_elem_put(buf + 1, (arb_dtype)dt, 0.5);
        int integer = dt == ARB_DTYPE_I32 || dt == ARB_DTYPE_I64;
        CHECK(arb_elem_get(buf + 1, (arb_dtype)dt) == (integer ? 0.0 : 0.5));
    }
}

int main(void)
{
    RUN(random_all_ops_lengths_offsets);
    RUN(acc_is_in);
    RUN(special_values);
    RUN(f16_decode_exhaustive);
    RUN(bf16_decode_exhaustive);
    RUN(round_trip_exhaustive);
    RUN(narrow_boundaries);
    RUN(narrow_random);
    RUN(half_against_all_encodings);
    RUN(half_exhaustive_pairs);
    RUN(nop_leaves_acc);
    RUN(errors);
    RUN(elem_put_get);
    return testkit_done();
}
