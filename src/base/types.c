/* Version, time arithmetic, the names of the wire's enums, numbers and sizes
 * from text. */
#include "arbor/base.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

const char *arb_version(void)
{
    return ARB_VERSION_STRING;
}

arb_time arb_time_tx(uint64_t bytes, uint64_t bits_per_s)
{
    if (bits_per_s == 0 || bits_per_s > ARB_RATE_MAX) return ARB_TIME_NEVER;
    /* ps = ceil(bytes * 8 * 1e12 / rate), computed without overflow for
     * every frame size and rate the simulator meets. */
    uint64_t bits = bytes * 8;
    if (bytes > UINT64_MAX / 8) return ARB_TIME_NEVER;
    /* Frames: bits x 1e12 fits in 64 bits, one division. */
    if (bits <= (UINT64_MAX - bits_per_s) / ARB_PS_PER_S)
        return (bits * ARB_PS_PER_S + bits_per_s - 1) / bits_per_s;
    uint64_t whole = bits / bits_per_s; /* whole seconds */
    uint64_t rest = bits % bits_per_s;  /* < bits_per_s */
    if (whole > (ARB_TIME_NEVER - 1) / ARB_PS_PER_S) return ARB_TIME_NEVER;
    /* rest * 1e12 may overflow 64 bits: split 1e12 = 1e6 * 1e6. */
    uint64_t hi = rest * 1000000; /* rest < rate <= 1e13: no overflow */
    uint64_t q1 = hi / bits_per_s, r1 = hi % bits_per_s;
    uint64_t lo = r1 * 1000000;
    uint64_t q2 = (lo + bits_per_s - 1) / bits_per_s;
    return whole * ARB_PS_PER_S + q1 * 1000000 + q2;
}

static const char *const dtype_names[ARB_DTYPE_COUNT] = {"f16", "bf16", "f32", "f64", "i32", "i64"};
static const size_t dtype_sizes[ARB_DTYPE_COUNT] = {2, 2, 4, 8, 4, 8};
static const char *const op_names[ARB_OP_COUNT] = {"NOP", "SUM", "MAX", "MIN"};
static const char *const level_names[] = {"error", "warn", "info", "debug"};

size_t arb_dtype_size(int dt)
{
    return dt >= 0 && dt < ARB_DTYPE_COUNT ? dtype_sizes[dt] : 0;
}

const char *arb_dtype_name(int dt)
{
    return dt >= 0 && dt < ARB_DTYPE_COUNT ? dtype_names[dt] : NULL;
}

const char *arb_op_name(int op)
{
    return op >= 0 && op < ARB_OP_COUNT ? op_names[op] : NULL;
}

const char *arb_log_level_name(int level)
{
    return level >= 0 && level <= ARB_LOG_DEBUG ? level_names[level] : NULL;
}

static int same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

int arb_name_index(const char *const *names, int n, const char *name)
{
    if (!name) return ARB_ENOENT;
    for (int i = 0; i < n; i++)
        if (same_name(names[i], name)) return i;
    return ARB_ENOENT;
}

int arb_dtype_parse(const char *name)
{
    return arb_name_index(dtype_names, ARB_DTYPE_COUNT, name);
}

int arb_op_parse(const char *name)
{
    return arb_name_index(op_names, ARB_OP_COUNT, name);
}

int arb_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    if (!s || len == 0 || len > 20) return ARB_EPARSE;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return ARB_EPARSE;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return ARB_EPARSE;
        v = v * 10 + d;
    }
    if (v > max) return ARB_EPARSE;
    *out = v;
    return 0;
}

/* The digits of s[0..len) with an optional fraction, times mult, exactly:
 * 0, ARB_EPARSE (not a number), ARB_EINVAL (not whole), ARB_ERANGE. */
static int parse_scaled(const char *s, size_t len, uint64_t mult, uint64_t *out)
{
    const char *dot = memchr(s, '.', len);
    size_t il = dot ? (size_t)(dot - s) : len;
    size_t fl = dot ? len - il - 1 : 0;
    if (il == 0 || (dot && (fl == 0 || fl > 19))) return ARB_EPARSE;
    uint64_t whole = 0, frac = 0, scale = 1;
    int big = 0;
    for (size_t i = 0; i < il; i++) {
        if (s[i] < '0' || s[i] > '9') return ARB_EPARSE;
        unsigned d = (unsigned)(s[i] - '0');
        if (whole > (UINT64_MAX - d) / 10) big = 1; /* every digit is still checked */
        whole = whole * 10 + d;
    }
    for (size_t i = 0; i < fl; i++) {
        char c = dot[1 + i];
        if (c < '0' || c > '9') return ARB_EPARSE;
        frac = frac * 10 + (unsigned)(c - '0');
        scale *= 10;
    }
    /* frac / scale x mult must be whole: divide out their common factors of
     * 2 and 5 (scale has no others); what is left of frac / scale is below
     * the factor removed, so the fraction's bytes stay below mult */
    uint64_t b = scale, m = mult;
    while (b % 2 == 0 && m % 2 == 0) {
        b /= 2;
        m /= 2;
    }
    while (b % 5 == 0 && m % 5 == 0) {
        b /= 5;
        m /= 5;
    }
    if (frac % b != 0) return ARB_EINVAL;
    uint64_t fpart = frac / b * m;
    if (big || whole > UINT64_MAX / mult || whole * mult > UINT64_MAX - fpart) return ARB_ERANGE;
    *out = whole * mult + fpart;
    return 0;
}

/* The multiplier of unit u[0..n) (case-insensitive), or 0. */
static uint64_t unit_mult(const char *u, size_t n)
{
    static const struct {
        const char *name;
        uint64_t mult;
    } units[] = {{"", 1},
                 {"B", 1},
                 {"K", 1ull << 10},
                 {"M", 1ull << 20},
                 {"G", 1ull << 30},
                 {"T", 1ull << 40},
                 {"KiB", 1ull << 10},
                 {"MiB", 1ull << 20},
                 {"GiB", 1ull << 30},
                 {"TiB", 1ull << 40},
                 {"KB", 1000ull},
                 {"MB", 1000000ull},
                 {"GB", 1000000000ull},
                 {"TB", 1000000000000ull}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == n && strncasecmp(units[i].name, u, n) == 0)
            return units[i].mult;
    return 0;
}

int arb_parse_size(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    if (!s || len == 0) return ARB_EPARSE;
    size_t nl = len; /* the number: up to the unit's letters */
    while (nl > 0 && isalpha((unsigned char)s[nl - 1]))
        nl--;
    if (nl == 0) return ARB_EPARSE;
    uint64_t v, mult = unit_mult(s + nl, len - nl);
    int rc = parse_scaled(s, nl, mult ? mult : 1, &v);
    if (rc == ARB_EPARSE) return rc;
    if (!mult) return ARB_ENOENT; /* a number, then letters that are no unit */
    if (rc < 0) return rc;
    if (v > max) return ARB_ERANGE;
    *out = v;
    return 0;
}

const char *arb_size_why(int rc)
{
    switch (rc) {
    case ARB_EPARSE:
        return "is not a size (a number with an optional unit: " ARB_SIZE_UNITS ")";
    case ARB_ENOENT:
        return "has an unknown unit (want " ARB_SIZE_UNITS ")";
    case ARB_EINVAL:
        return "is not a whole number of bytes";
    case ARB_ERANGE:
        return "is too large";
    default:
        return "is not a size";
    }
}
