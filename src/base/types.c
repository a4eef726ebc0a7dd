/* Version, time arithmetic and the names of the wire's enums. */
#include "arbor/base.h"

#include <ctype.h>
#include <string.h>

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
