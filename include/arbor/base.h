/** @file
 * arbor/base.h - what every Arbor module stands on: time, error codes, the
 * element types and reduction operators of the wire, the seeded random
 * generator, and the logging callback.
 *
 * Nothing here allocates, prints or reads a clock.
 */
#ifndef ARBOR_BASE_H
#define ARBOR_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Lets the compiler check printf-style arguments where it can. */
#if defined(__GNUC__)
#define ARB_PRINTF(fmt_arg, first_arg) __attribute__((format(printf, fmt_arg, first_arg)))
#else
#define ARB_PRINTF(fmt_arg, first_arg)
#endif

/* ------------------------------------------------------------------ */
/* Version                                                              */
/* ------------------------------------------------------------------ */

#define ARB_VERSION_MAJOR 0        /**< the headers' version: major */
#define ARB_VERSION_MINOR 1        /**< minor */
#define ARB_VERSION_PATCH 0        /**< patch */
#define ARB_VERSION_STRING "0.1.0" /**< the three, as arb_version prints them */

/** The library's version string, e.g. "0.1.0". */
const char *arb_version(void);

/* ------------------------------------------------------------------ */
/* Time                                                                 */
/* ------------------------------------------------------------------ */

/**
 * Time and durations in picoseconds. Serialising one byte at 800 Gb/s
 * takes 10 ps, so nanoseconds are too coarse; 2^64 ps is 213 days.
 */
typedef uint64_t arb_time;

#define ARB_TIME_NEVER UINT64_MAX              /**< no time: a deadline never reached */
#define ARB_PS_PER_NS ((arb_time)1000)         /**< picoseconds per nanosecond */
#define ARB_PS_PER_US ((arb_time)1000000)      /**< picoseconds per microsecond */
#define ARB_PS_PER_MS ((arb_time)1000000000)   /**< picoseconds per millisecond */
#define ARB_PS_PER_S ((arb_time)1000000000000) /**< picoseconds per second */

/** The fastest link rate the time arithmetic handles: 10 Tb/s. */
#define ARB_RATE_MAX ((uint64_t)10000000000000)

/**
 * Serialisation time of `bytes` at `bits_per_s`, rounded up to the next
 * picosecond (so a link is never faster than its rate). Returns
 * ARB_TIME_NEVER when bits_per_s is 0 or above ARB_RATE_MAX, or when the
 * result does not fit.
 */
arb_time arb_time_tx(uint64_t bytes, uint64_t bits_per_s);

/* ------------------------------------------------------------------ */
/* Errors                                                               */
/* ------------------------------------------------------------------ */

/**
 * Every fallible function returns 0 on success or one of these negative
 * codes. Each rejection rule of the wire format has its own code so that a
 * counter or a message can name the exact rule a packet broke.
 */
enum arb_error {
    ARB_OK = 0,
    ARB_EINVAL = -1,    /**< an argument is out of its documented range */
    ARB_ENOMEM = -2,    /**< an allocation failed */
    ARB_ENOSPC = -3,    /**< an output buffer is too small */
    ARB_ERANGE = -4,    /**< a value does not fit its field */
    ARB_EPARSE = -5,    /**< text input is not in the documented syntax */
    ARB_ENOENT = -6,    /**< a named thing does not exist */
    ARB_EIO = -7,       /**< a read or write failed */
    ARB_ESTATE = -8,    /**< the call is not valid in the object's state */
    ARB_ETIMEDOUT = -9, /**< a peer did not answer within every retry */

    /* Arbor header (docs/protocol.md section 4) */
    ARB_EWIRE_SHORT = -100,              /**< buffer shorter than its header */
    ARB_EWIRE_VERSION = -101,            /**< version is not 2 */
    ARB_EWIRE_TYPE = -102,               /**< packet_type 7 */
    ARB_EWIRE_KIND = -103,               /**< payload_kind 3 */
    ARB_EWIRE_DEPTH_EXT = -104,          /**< agg_depth > 1 in a 16 B header */
    ARB_EWIRE_DTYPE = -105,              /**< dtype not 0..5 */
    ARB_EWIRE_OP = -106,                 /**< op other than NOP where the table forbids it */
    ARB_EWIRE_REPAIR = -107,             /**< repair bit not allowed for this packet type */
    ARB_EWIRE_CREDIT = -108,             /**< credit_valid not allowed for this packet type */
    ARB_EWIRE_PAYLOAD_FLAG = -109,       /**< payload_valid / payload_kind pair not allowed */
    ARB_EWIRE_DEPTH = -110,              /**< agg_depth not allowed for this packet type */
    ARB_EWIRE_AGGREGATED = -111,         /**< aggregated bit not allowed for this packet type */
    ARB_EWIRE_OFFSET_B = -112,           /**< offset_b not the value the type requires */
    ARB_EWIRE_FANIN = -113,              /**< a fanin byte below agg_depth is 0 */
    ARB_EWIRE_PAYLOAD_MISSING = -114,    /**< payload_valid = 1 but no payload bytes */
    ARB_EWIRE_PAYLOAD_ALIGN = -115,      /**< payload not a whole number of elements */
    ARB_EWIRE_PAYLOAD_UNEXPECTED = -116, /**< payload_valid = 0 but bytes follow */
    ARB_EWIRE_PAYLOAD_TOO_LONG = -117,   /**< payload longer than ARB_PAYLOAD_MAX */
    ARB_EWIRE_ATTEMPT = -118,            /**< attempt nonzero where the type has none */

    /* Ethernet / IPv4 / UDP framing */
    ARB_EFRAME_SHORT = -200,     /**< frame shorter than its headers or lengths */
    ARB_EFRAME_ETHERTYPE = -201, /**< not IPv4 */
    ARB_EFRAME_IP_VERSION = -202,
    ARB_EFRAME_IP_IHL = -203,      /**< IPv4 header length other than 20 B */
    ARB_EFRAME_IP_LENGTH = -204,   /**< IPv4 total length inconsistent with the frame */
    ARB_EFRAME_IP_FRAGMENT = -205, /**< fragmented datagram */
    ARB_EFRAME_IP_CHECKSUM = -206,
    ARB_EFRAME_IP_PROTO = -207, /**< not UDP */
    ARB_EFRAME_UDP_LENGTH = -208,
    ARB_EFRAME_UDP_CHECKSUM = -209
};

/**
 * A short English description of `err` ("ok" for 0). Never NULL; unknown
 * codes give "unknown error".
 */
const char *arb_strerror(int err);

/** The enum constant's name without the prefix, e.g. "EWIRE_SHORT". */
const char *arb_errname(int err);

/**
 * Write one printf-formatted line into err[0..errlen) (nothing when err is
 * NULL or errlen is 0) and return `code`: every function that returns an
 * error code with a message uses it, as `return arb_errf(err, len,
 * ARB_EPARSE, "...", ...);`.
 */
int arb_errf(char *err, size_t errlen, int code, const char *fmt, ...) ARB_PRINTF(4, 5);

/* ------------------------------------------------------------------ */
/* Element types and operators (wire values, docs/protocol.md section 4)             */
/* ------------------------------------------------------------------ */

/** The element types of a payload (wire values). */
typedef enum arb_dtype {
    ARB_DTYPE_F16 = 0,
    ARB_DTYPE_BF16 = 1,
    ARB_DTYPE_F32 = 2,
    ARB_DTYPE_F64 = 3,
    ARB_DTYPE_I32 = 4,
    ARB_DTYPE_I64 = 5
} arb_dtype;

#define ARB_DTYPE_COUNT 6 /**< the number of arb_dtype values */

/** The reduction operators (wire values). */
typedef enum arb_op { ARB_OP_NOP = 0, ARB_OP_SUM = 1, ARB_OP_MAX = 2, ARB_OP_MIN = 3 } arb_op;

#define ARB_OP_COUNT 4 /**< the number of arb_op values */

/** Bytes per element of `dt`; 0 for a value outside the enum. */
size_t arb_dtype_size(int dt);

/** "f16", "bf16", "f32", "f64", "i32", "i64"; NULL outside the enum. */
const char *arb_dtype_name(int dt);

/** "NOP", "SUM", "MAX", "MIN"; NULL outside the enum. */
const char *arb_op_name(int op);

/**
 * Parse a name as printed by arb_dtype_name (case-insensitive).
 * Returns the value. Errors: ARB_ENOENT for an unknown name.
 */
int arb_dtype_parse(const char *name);
/** Parse a name as printed by arb_op_name (case-insensitive). Errors: ARB_ENOENT. */
int arb_op_parse(const char *name);

/* ------------------------------------------------------------------ */
/* Collectives                                                          */
/* ------------------------------------------------------------------ */

/**
 * The collectives, one enum for all that run them: the planner (plan.h)
 * and the runtime (rt.h) every one but AllToAll, the simulator's host
 * collectives and training iterations (workload.h) all seven.
 */
typedef enum arb_coll {
    ARB_COLL_ALLREDUCE = 0,
    ARB_COLL_REDUCE = 1,
    ARB_COLL_REDUCESCATTER = 2,
    ARB_COLL_BROADCAST = 3,
    ARB_COLL_ALLGATHER = 4,
    ARB_COLL_BARRIER = 5,
    ARB_COLL_ALLTOALL = 6
} arb_coll;

#define ARB_COLL_COUNT 7 /**< the number of arb_coll values */

/** "allreduce", "reduce", "reducescatter", "broadcast", "allgather",
 * "barrier", "alltoall"; NULL outside the enum. */
const char *arb_coll_name(int coll);
/** Parse a name as printed by arb_coll_name (case-insensitive). Errors: ARB_ENOENT. */
int arb_coll_parse(const char *name);

/**
 * nccl-tests' bus bandwidth factor of `coll` over n ranks (busbw = algbw x
 * factor): allreduce 2(n-1)/n; reducescatter, allgather and alltoall
 * (n-1)/n; broadcast and reduce 1; barrier 0 (it moves no data). 0 when n
 * is 0 or `coll` is outside the enum.
 */
double arb_coll_busbw_factor(arb_coll coll, uint32_t n);

/**
 * Parse s[0..len) as a whole unsigned decimal (digits only) no larger than
 * max into *out. Returns 0, or ARB_EPARSE for anything else (empty, a sign,
 * a non-digit, overflow, above max).
 */
int arb_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out);

/** The units arb_parse_size accepts, as a message lists them. */
#define ARB_SIZE_UNITS "B, K, M, G, T, KiB, MiB, GiB, TiB, KB, MB, GB or TB"

/**
 * Parse s[0..len) as a size in bytes no larger than max into *out: the one
 * size syntax of every command, scenario key, trace and variable.
 *
 * A size is a non-negative decimal number (digits, with an optional fraction
 * of 1 to 19 digits after a '.'; no sign, exponent or blanks), then an
 * optional unit, case-insensitive: none or B, bytes; K, M, G, T, binary
 * (2^10 .. 2^40, as nccl-tests' -b 8 -e 128M mean them), the same as KiB,
 * MiB, GiB, TiB; KB, MB, GB, TB, decimal (10^3 .. 10^12). A fraction is
 * allowed when the result is a whole number of bytes: "1.5K" and "1.5KiB"
 * are 1536, "1.5KB" 1500, "0.5" is refused.
 *
 * Returns 0. Errors, *out left alone: ARB_EPARSE, not a number (empty, a
 * sign, a non-digit, a bare '.'); ARB_ENOENT, an unknown unit; ARB_EINVAL, a
 * fraction that is not a whole number of bytes; ARB_ERANGE, above max
 * (overflow included). arb_size_why names each for a message.
 */
int arb_parse_size(const char *s, size_t len, uint64_t max, uint64_t *out);

/**
 * What is wrong with a size arb_parse_size refused with rc, as a phrase to
 * follow the quoted text in a message: ARB_EPARSE "is not a size (a number
 * with an optional unit: ...)", ARB_ENOENT "has an unknown unit (want ...)",
 * both listing ARB_SIZE_UNITS; ARB_EINVAL "is not a whole number of bytes";
 * ARB_ERANGE "is too large" (a caller names its own limit where it can);
 * "is not a size" for any other code. Never NULL.
 */
const char *arb_size_why(int rc);

/** The index of `name` in names[0..n), compared case-insensitively, or
 * ARB_ENOENT (also for a NULL name). */
int arb_name_index(const char *const *names, int n, const char *name);

/* ------------------------------------------------------------------ */
/* Random numbers                                                       */
/* ------------------------------------------------------------------ */

/**
 * xoshiro256** (Blackman and Vigna, 2018) seeded through SplitMix64.
 *
 * - arb_rng_seed(r, s): the four state words are the first four outputs of
 *   SplitMix64 started at s. Every seed, 0 included, gives a valid state.
 * - arb_rng_split(parent, stream, child): child is seeded with
 *   SplitMix64(next(parent) ^ (stream * 0x9E3779B97F4A7C15)). It advances
 *   the parent by one draw, so a run that splits its generators in a fixed
 *   order stays a pure function of its seed; independent components (one per
 *   switch, per host) get their own child and draw without disturbing each
 *   other.
 *
 * The algorithm is fixed: the same seed gives the same numbers on every
 * machine and compiler. A run owns its generators; nothing is global.
 */
typedef struct arb_rng {
    uint64_t s[4]; /**< the state; set it with arb_rng_seed or arb_rng_split */
} arb_rng;

/** Seed `r` from `seed` (any value) as described at arb_rng. */
void arb_rng_seed(arb_rng *r, uint64_t seed);
/** Seed `child` from one draw of `parent` and `stream`, as described at arb_rng. */
void arb_rng_split(arb_rng *parent, uint64_t stream, arb_rng *child);

/** The next 64 uniformly distributed bits. */
uint64_t arb_rng_next(arb_rng *r);

/**
 * A uniform integer in [0, bound), without modulo bias (Lemire's
 * multiply-and-reject). Returns 0 when bound is 0.
 */
uint64_t arb_rng_below(arb_rng *r, uint64_t bound);

/** A uniform double in [0, 1) with 53 random bits. */
double arb_rng_double(arb_rng *r);

/** The SplitMix64 output function: a good 64-bit mixer on its own. */
uint64_t arb_mix64(uint64_t x);

/* ------------------------------------------------------------------ */
/* Logging                                                              */
/* ------------------------------------------------------------------ */

/** How much a message matters; a logger takes those up to its max_level. */
typedef enum arb_log_level {
    ARB_LOG_ERROR = 0,
    ARB_LOG_WARN = 1,
    ARB_LOG_INFO = 2,
    ARB_LOG_DEBUG = 3
} arb_log_level;

/**
 * The library never prints. Objects whose config holds a logging callback
 * report through it; `msg` is one line without a trailing newline and is
 * valid only during the call. A NULL callback discards messages.
 */
typedef void (*arb_log_fn)(void *user, arb_log_level level, const char *msg);

/** A logging callback and what it wants; zeroed: discard every message. */
typedef struct arb_logger {
    arb_log_fn fn;           /**< NULL: discard */
    void *user;              /**< passed to fn; borrowed */
    arb_log_level max_level; /**< messages above this level are not formatted */
} arb_logger;

/** Format and deliver one message if `lg` wants messages of `level`. */
void arb_log(const arb_logger *lg, arb_log_level level, const char *fmt, ...) ARB_PRINTF(3, 4);

/** "error", "warn", "info", "debug"; NULL outside the enum. */
const char *arb_log_level_name(int level);

/* ------------------------------------------------------------------ */
/* Memory                                                               */
/* ------------------------------------------------------------------ */

/**
 * An allocator. The objects whose config holds `const arb_mem *mem` make
 * every allocation of theirs through it; with NULL, and for everything
 * else the library allocates (topologies, the simulator, scenarios,
 * workloads, results), the process allocator (arb_mem_set_default; at
 * first the C library's malloc, calloc, realloc and free). The allocator
 * is borrowed and must outlive what it allocated. The functions have the
 * C library's contracts: NULL is a failed allocation (the call that asked
 * then fails with ARB_ENOMEM, or ends its run with that error, leaving
 * nothing allocated behind), free(NULL) does nothing. An object calls its
 * allocator from the thread that calls the object.
 */
typedef struct arb_mem {
    void *user;                                           /**< passed to every function */
    void *(*malloc)(size_t size, void *user);             /**< as malloc */
    void *(*calloc)(size_t n, size_t size, void *user);   /**< as calloc */
    void *(*realloc)(void *ptr, size_t size, void *user); /**< as realloc */
    void (*free)(void *ptr, void *user);                  /**< as free */
    /** as C11 aligned_alloc, the block freed by `free`; may be NULL for an
     * object's allocator (the engines ask for no alignment), required of
     * the process allocator (the simulator's per-port and per-packet
     * arrays are cache-line aligned) */
    void *(*aligned)(size_t align, size_t size, void *user);
} arb_mem;

/** The process allocator (arb_mem_set_default): the C library's unless
 * one was set. Never NULL. */
const arb_mem *arb_mem_default(void);

/**
 * Make `mem` the process allocator: every allocation of the library that
 * names no object allocator goes through it from now on (NULL: the C
 * library's again). Allocations made inside the libraries Arbor uses
 * (cJSON, inih, libpcap, libsodium, protobuf-c) and inside the C library
 * do not (docs/design.md, "Allocation"). A block is freed through the
 * process allocator current at the time, so set it while the library
 * holds nothing allocated (no topology, simulator, scenario, plan or
 * result live), from one thread, with no other thread in the library.
 * Errors: ARB_EINVAL (a function of `mem` missing, `aligned` included).
 */
int arb_mem_set_default(const arb_mem *mem);

/** malloc through `mem` (NULL: the process allocator); NULL when it fails. */
void *arb_mem_malloc(const arb_mem *mem, size_t size);
/** calloc through `mem` (NULL: the process allocator); NULL when it fails. */
void *arb_mem_calloc(const arb_mem *mem, size_t n, size_t size);
/** realloc through `mem` (NULL: the process allocator); NULL when it fails, ptr kept. */
void *arb_mem_realloc(const arb_mem *mem, void *ptr, size_t size);
/** free through `mem` (NULL: the process allocator); ptr may be NULL. */
void arb_mem_free(const arb_mem *mem, void *ptr);
/** aligned_alloc through `mem` (NULL: the process allocator): `size`
 * rounded up to a multiple of `align` (a power of two); NULL when it fails
 * or `mem` has no `aligned`. Freed by arb_mem_free. */
void *arb_mem_aligned_alloc(const arb_mem *mem, size_t align, size_t size);
/** strdup through `mem` (NULL: the process allocator); NULL when it fails. */
char *arb_mem_strdup(const arb_mem *mem, const char *s);
/** strndup through `mem` (NULL: the process allocator); NULL when it fails. */
char *arb_mem_strndup(const arb_mem *mem, const char *s, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_BASE_H */
