/* Unit tests: base (time, errors, names, numbers and sizes from text, random
 * generator, logging, the JSON number formats). */
#include "arbor/base.h"
#include "base/json_out.h"
#include "testkit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(time_tx_exact)
{
    /* 8274 B at 100 Gb/s = 661.92 ns = 661920 ps exactly. */
    CHECK_EQ_U(arb_time_tx(8274, 100000000000u), 661920);
    /* 1 B at 400 Gb/s = 20 ps; at 800 Gb/s = 10 ps. */
    CHECK_EQ_U(arb_time_tx(1, 400000000000u), 20);
    CHECK_EQ_U(arb_time_tx(1, 800000000000u), 10);
    /* 1 B at 3 Gb/s = 2666.67 ps, rounded up. */
    CHECK_EQ_U(arb_time_tx(1, 3000000000u), 2667);
    /* 1500 B at 1 b/s: 12000 s. */
    CHECK_EQ_U(arb_time_tx(1500, 1), 12000 * ARB_PS_PER_S);
    CHECK_EQ_U(arb_time_tx(0, 100), 0);
    CHECK_EQ_U(arb_time_tx(10, 0), ARB_TIME_NEVER);
    CHECK_EQ_U(arb_time_tx(10, ARB_RATE_MAX + 1), ARB_TIME_NEVER);
    CHECK_EQ_U(arb_time_tx(UINT64_MAX / 4, 1), ARB_TIME_NEVER);
    /* 10 Tb/s, the largest rate: 1 B = 0.8 ps -> 1 ps. */
    CHECK_EQ_U(arb_time_tx(1, ARB_RATE_MAX), 1);
}

TEST(time_tx_matches_double)
{
    static const uint64_t rates[] = {1000000000u, 25000000000u, 100000000000u, 400000000000u,
                                     7000000001u};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++)
        for (uint64_t b = 1; b < 10000; b += 37) {
            double ps = (double)b * 8e12 / (double)rates[r];
            uint64_t got = arb_time_tx(b, rates[r]);
            CHECK(got >= ps - 1e-6 && got < ps + 1.0);
        }
}

/* The exact ceiling, in 128-bit arithmetic, on both sides of the point
 * where bytes x 8 x 1e12 stops fitting in 64 bits (about 2.3 MB). */
TEST(time_tx_matches_wide)
{
    arb_rng r;
    arb_rng_seed(&r, 3);
    for (int i = 0; i < 20000; i++) {
        uint64_t rate = 1 + arb_rng_below(&r, ARB_RATE_MAX);
        uint64_t bytes = arb_rng_below(&r, 2) ? arb_rng_below(&r, 10000)
                                              : 2000000 + arb_rng_below(&r, 1000000000);
        unsigned __int128 num = (unsigned __int128)bytes * 8 * ARB_PS_PER_S;
        unsigned __int128 want = (num + rate - 1) / rate;
        uint64_t got = arb_time_tx(bytes, rate);
        if (want >= ARB_TIME_NEVER)
            CHECK_EQ_U(got, ARB_TIME_NEVER);
        else
            CHECK_EQ_U(got, (uint64_t)want);
        if (TEST_FAILING()) break;
    }
}

TEST(errors_named)
{
    CHECK_STR(arb_strerror(0), "ok");
    CHECK_STR(arb_strerror(12345), "unknown error");
    CHECK_STR(arb_errname(ARB_EWIRE_SHORT), "EWIRE_SHORT");
    CHECK_STR(arb_errname(ARB_EFRAME_UDP_CHECKSUM), "EFRAME_UDP_CHECKSUM");
    /* Every code in the ranges has a distinct description. */
    const char *seen[128];
    int n = 0;
    for (int c = 0; c > -300; c--) {
        const char *s = arb_strerror(c);
        if (strcmp(s, "unknown error") == 0) continue;
        for (int i = 0; i < n; i++)
            CHECK(strcmp(seen[i], s) != 0);
        if (n < 128) seen[n++] = s;
    }
    CHECK(n >= 35);
}

TEST(dtype_and_op_names)
{
    CHECK_EQ_U(arb_dtype_size(ARB_DTYPE_F16), 2);
    CHECK_EQ_U(arb_dtype_size(ARB_DTYPE_BF16), 2);
    CHECK_EQ_U(arb_dtype_size(ARB_DTYPE_F32), 4);
    CHECK_EQ_U(arb_dtype_size(ARB_DTYPE_F64), 8);
    CHECK_EQ_U(arb_dtype_size(ARB_DTYPE_I32), 4);
    CHECK_EQ_U(arb_dtype_size(ARB_DTYPE_I64), 8);
    CHECK_EQ_U(arb_dtype_size(6), 0);
    CHECK_EQ_U(arb_dtype_size(-1), 0);
    for (int d = 0; d < ARB_DTYPE_COUNT; d++)
        CHECK_EQ_I(arb_dtype_parse(arb_dtype_name(d)), d);
    for (int o = 0; o < ARB_OP_COUNT; o++)
        CHECK_EQ_I(arb_op_parse(arb_op_name(o)), o);
    CHECK_EQ_I(arb_dtype_parse("BF16"), ARB_DTYPE_BF16);
    CHECK_EQ_I(arb_op_parse("sum"), ARB_OP_SUM);
    CHECK_EQ_I(arb_dtype_parse("f8"), ARB_ENOENT);
    CHECK_EQ_I(arb_dtype_parse("f3"), ARB_ENOENT);
    CHECK_EQ_I(arb_dtype_parse(""), ARB_ENOENT);
    CHECK_EQ_I(arb_op_parse(NULL), ARB_ENOENT);
    CHECK(arb_dtype_name(6) == NULL);
    CHECK(arb_op_name(4) == NULL);
}

/* One table for every collective: each name round-trips, in any case, and
 * the bus bandwidth factors are nccl-tests' (barrier: no data, 0). */
TEST(coll_names_and_busbw)
{
    static const char *const want[ARB_COLL_COUNT] = {
        "allreduce", "reduce", "reducescatter", "broadcast", "allgather", "barrier", "alltoall"};
    for (int c = 0; c < ARB_COLL_COUNT; c++) {
        CHECK_STR(arb_coll_name(c), want[c]);
        CHECK_EQ_I(arb_coll_parse(arb_coll_name(c)), c);
        char upper[32];
        size_t i = 0;
        for (; want[c][i] && i + 1 < sizeof upper; i++)
            upper[i] = (char)(want[c][i] - 'a' + 'A');
        upper[i] = '\0';
        CHECK_EQ_I(arb_coll_parse(upper), c);
    }
    CHECK(arb_coll_name(ARB_COLL_COUNT) == NULL);
    CHECK(arb_coll_name(-1) == NULL);
    CHECK_EQ_I(arb_coll_parse("gather"), ARB_ENOENT);
    CHECK_EQ_I(arb_coll_parse(""), ARB_ENOENT);
    CHECK_EQ_I(arb_coll_parse(NULL), ARB_ENOENT);
    CHECK(arb_coll_busbw_factor(ARB_COLL_ALLREDUCE, 8) == 14.0 / 8);
    CHECK(arb_coll_busbw_factor(ARB_COLL_REDUCESCATTER, 4) == 3.0 / 4);
    CHECK(arb_coll_busbw_factor(ARB_COLL_ALLGATHER, 8) == 7.0 / 8);
    CHECK(arb_coll_busbw_factor(ARB_COLL_ALLTOALL, 4) == 3.0 / 4);
    CHECK(arb_coll_busbw_factor(ARB_COLL_BROADCAST, 8) == 1);
    CHECK(arb_coll_busbw_factor(ARB_COLL_REDUCE, 8) == 1);
    CHECK(arb_coll_busbw_factor(ARB_COLL_BARRIER, 8) == 0);
    CHECK(arb_coll_busbw_factor(ARB_COLL_ALLREDUCE, 0) == 0);
    CHECK(arb_coll_busbw_factor((arb_coll)ARB_COLL_COUNT, 8) == 0);
}

/* The JSON number formats (base/json_out.h), as the text they print. */
static void check_json(cJSON *o, const char *want)
{
    char *text = cJSON_PrintUnformatted(o);
    CHECK_STR(text, want);
    free(text);
    cJSON_Delete(o);
}

TEST(json_number_formats)
{
    cJSON *o = cJSON_CreateObject();
    arb_json_u64(o, "a", 0);
    arb_json_u64(o, "b", UINT64_MAX);
    check_json(o, "{\"a\":0,\"b\":18446744073709551615}");
    o = cJSON_CreateObject();
    arb_json_fixed(o, "a", 1.0 / 3, 6);
    arb_json_fixed(o, "b", -2.5, 1);
    arb_json_fixed(o, "c", 7, 0);
    arb_json_fixed(o, "d", NAN, 6);
    arb_json_fixed(o, "e", INFINITY, 6);
    arb_json_fixed(o, "f", -1e301, 6);
    check_json(o, "{\"a\":0.333333,\"b\":-2.5,\"c\":7,\"d\":null,\"e\":null,\"f\":null}");
    o = cJSON_CreateObject();
    arb_json_us(o, "a", 1234567);
    arb_json_us(o, "b", 0);
    arb_json_us(o, "c", 5 * ARB_PS_PER_US);
    arb_json_us(o, "d", ARB_TIME_NEVER);
    arb_json_us(o, "e", ARB_TIME_NEVER - 1);
    check_json(o, "{\"a\":1.234567,\"b\":0.000000,\"c\":5.000000,\"d\":null,"
                  "\"e\":18446744073709.551614}");
    o = cJSON_CreateObject();
    arb_json_num(o, "a", 12.5);
    arb_json_num(o, "b", 0.1);
    arb_json_num(o, "c", 1000);
    arb_json_num(o, "d", NAN);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "d")));
    check_json(o, "{\"a\":12.5,\"b\":0.1,\"c\":1000,\"d\":null}");
}

TEST(rng_reference_values)
{
    /* SplitMix64 from 1234567: published reference outputs. */
    CHECK_EQ_U(arb_mix64(1234567), 6457827717110365317u);
    arb_rng r;
    arb_rng_seed(&r, 1234567);
    CHECK_EQ_U(r.s[0], 6457827717110365317u);
    CHECK_EQ_U(r.s[1], 3203168211198807973u);
    CHECK_EQ_U(r.s[2], 9817491932198370423u);
    CHECK_EQ_U(r.s[3], 4593380528125082431u);
    /* xoshiro256** from state {1, 2, 3, 4}: reference outputs. */
    arb_rng x = {{1, 2, 3, 4}};
    CHECK_EQ_U(arb_rng_next(&x), 11520);
    CHECK_EQ_U(arb_rng_next(&x), 0);
    CHECK_EQ_U(arb_rng_next(&x), 1509978240);
    CHECK_EQ_U(arb_rng_next(&x), 1215971899390074240u);
}

TEST(rng_deterministic_and_split)
{
    arb_rng a, b, ca, cb, cc;
    arb_rng_seed(&a, 42);
    arb_rng_seed(&b, 42);
    for (int i = 0; i < 100; i++)
        CHECK_EQ_U(arb_rng_next(&a), arb_rng_next(&b));
    arb_rng_split(&a, 7, &ca);
    arb_rng_split(&b, 7, &cb);
    for (int i = 0; i < 100; i++)
        CHECK_EQ_U(arb_rng_next(&ca), arb_rng_next(&cb));
    /* A different stream gives a different sequence. */
    arb_rng_split(&a, 8, &ca);
    arb_rng_split(&b, 9, &cc);
    int same = 0;
    for (int i = 0; i < 100; i++)
        same += arb_rng_next(&ca) == arb_rng_next(&cc);
    CHECK(same == 0);
    /* Seed 0 is a valid state (not all zeros). */
    arb_rng z;
    arb_rng_seed(&z, 0);
    CHECK(z.s[0] | z.s[1] | z.s[2] | z.s[3]);
}

TEST(rng_below_uniform)
{
    arb_rng r;
    arb_rng_seed(&r, 99);
    enum { BINS = 10, DRAWS = 200000 };
    int count[BINS] = {0};
    for (int i = 0; i < DRAWS; i++) {
        uint64_t v = arb_rng_below(&r, BINS);
        CHECK(v < BINS);
        if (v < BINS) count[v]++;
    }
    /* Chi-square with 9 degrees of freedom: 27.9 is the 0.999 quantile. */
    double chi = 0, e = DRAWS / (double)BINS;
    for (int i = 0; i < BINS; i++)
        chi += (count[i] - e) * (count[i] - e) / e;
    CHECK(chi < 27.9);
    CHECK_EQ_U(arb_rng_below(&r, 0), 0);
    CHECK_EQ_U(arb_rng_below(&r, 1), 0);
    /* A bound above 2^63 still stays below the bound. */
    for (int i = 0; i < 1000; i++)
        CHECK(arb_rng_below(&r, UINT64_MAX - 5) < UINT64_MAX - 5);
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        double d = arb_rng_double(&r);
        CHECK(d >= 0.0 && d < 1.0);
        sum += d;
    }
    CHECK(fabs(sum / 100000 - 0.5) < 0.01);
}

static char last_msg[600];
static int log_calls;
static void capture(void *user, arb_log_level level, const char *msg)
{
    (void)level;
    *(int *)user += 1;
    log_calls++;
    snprintf(last_msg, sizeof last_msg, "%s", msg);
}

TEST(logging)
{
    int n = 0;
    arb_logger lg = {capture, &n, ARB_LOG_INFO};
    arb_log(&lg, ARB_LOG_WARN, "slot %d of %s", 3, "pool");
    CHECK_EQ_I(n, 1);
    CHECK_STR(last_msg, "slot 3 of pool");
    arb_log(&lg, ARB_LOG_DEBUG, "hidden");
    CHECK_EQ_I(n, 1);
    arb_log(NULL, ARB_LOG_ERROR, "no logger");
    arb_logger none = {NULL, NULL, ARB_LOG_DEBUG};
    arb_log(&none, ARB_LOG_ERROR, "no callback");
    CHECK_EQ_I(log_calls, 1);
    CHECK_STR(arb_log_level_name(ARB_LOG_WARN), "warn");
    CHECK(arb_log_level_name(7) == NULL);
}

TEST(parse_u64_and_helpers)
{
    uint64_t v = 7;
    CHECK_EQ_I(arb_parse_u64("12345", 5, 99999, &v), 0);
    CHECK_EQ_U(v, 12345);
    CHECK_EQ_I(arb_parse_u64("123456", 3, 999, &v), 0); /* only the first len bytes */
    CHECK_EQ_U(v, 123);
    CHECK_EQ_I(arb_parse_u64("18446744073709551615", 20, UINT64_MAX, &v), 0);
    CHECK_EQ_U(v, UINT64_MAX);
    CHECK_EQ_I(arb_parse_u64("18446744073709551616", 20, UINT64_MAX, &v), ARB_EPARSE);
    CHECK_EQ_I(arb_parse_u64("100", 3, 99, &v), ARB_EPARSE);
    CHECK_EQ_I(arb_parse_u64("", 0, 99, &v), ARB_EPARSE);
    CHECK_EQ_I(arb_parse_u64("-1", 2, 99, &v), ARB_EPARSE);
    CHECK_EQ_I(arb_parse_u64("1a", 2, 99, &v), ARB_EPARSE);
    CHECK_EQ_I(arb_parse_u64(NULL, 1, 99, &v), ARB_EPARSE);
    CHECK_EQ_U(v, UINT64_MAX); /* failures leave *out alone */

    char err[16];
    CHECK_EQ_I(arb_errf(err, sizeof err, ARB_EPARSE, "field %s bad", "x"), ARB_EPARSE);
    CHECK_STR(err, "field x bad");
    CHECK_EQ_I(arb_errf(err, 6, ARB_EINVAL, "%s", "truncated here"), ARB_EINVAL);
    CHECK_STR(err, "trunc");
    CHECK_EQ_I(arb_errf(NULL, 0, ARB_ENOMEM, "ignored"), ARB_ENOMEM);

    static const char *const names[] = {"alpha", "Beta"};
    CHECK_EQ_I(arb_name_index(names, 2, "BETA"), 1);
    CHECK_EQ_I(arb_name_index(names, 2, "alph"), ARB_ENOENT);
    CHECK_EQ_I(arb_name_index(names, 2, NULL), ARB_ENOENT);
}

/* arb_parse_size(s, strlen(s), max, &v) */
static int size_of(const char *s, uint64_t max, uint64_t *v)
{
    return arb_parse_size(s, strlen(s), max, v);
}

TEST(parse_size_units)
{
    static const struct {
        const char *s;
        uint64_t want;
    } ok[] = {
        {"0", 0},
        {"4096", 4096},
        {"7B", 7},
        {"1K", 1024},
        {"1k", 1024},
        {"1M", 1024 * 1024},
        {"1G", 1024ull * 1024 * 1024},
        {"1T", 1024ull * 1024 * 1024 * 1024},
        {"1KiB", 1024},
        {"1MiB", 1024 * 1024},
        {"1GiB", 1024ull * 1024 * 1024},
        {"1TiB", 1024ull * 1024 * 1024 * 1024},
        {"1KB", 1000},
        {"1MB", 1000 * 1000},
        {"1GB", 1000ull * 1000 * 1000},
        {"1TB", 1000ull * 1000 * 1000 * 1000},
        {"3kib", 3 * 1024}, /* any case */
        {"3KIB", 3 * 1024},
        {"3mb", 3 * 1000 * 1000},
        {"3b", 3},
        {"64m", 64 * 1024 * 1024},
        /* fractions that give whole bytes */
        {"1.5K", 1024 + 512},
        {"1.5KiB", 1024 + 512},
        {"1.5KB", 1500},
        {"0.25M", 1024 * 1024 / 4},
        {"2.000", 2},
        {"0.001KB", 1},
        {"0.000000001TB", 1000},
        {"0.0009765625T", 1024 * 1024 * 1024},  /* 2^-10 TiB */
        {"1.5000000000000000000K", 1024 + 512}, /* nineteen fraction digits */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 7;
        int rc = size_of(ok[i].s, UINT64_MAX, &v);
        CHECK_EQ_I(rc, 0);
        CHECK_EQ_U(v, ok[i].want);
        if (rc != 0 || v != ok[i].want) fprintf(stderr, "  at '%s'\n", ok[i].s);
    }
    uint64_t v = 0;
    CHECK_EQ_I(arb_parse_size("1MiB and more", 4, UINT64_MAX, &v), 0); /* only len bytes */
    CHECK_EQ_U(v, 1024 * 1024);
}

TEST(parse_size_errors)
{
    static const struct {
        const char *s;
        int rc;
    } bad[] = {
        {"", ARB_EPARSE},
        {"K", ARB_EPARSE},
        {"-1", ARB_EPARSE},
        {"+1", ARB_EPARSE},
        {" 1", ARB_EPARSE},
        {"1 ", ARB_EPARSE},
        {"1 K", ARB_EPARSE},
        {"1.", ARB_EPARSE},
        {".5K", ARB_EPARSE},
        {"1..5", ARB_EPARSE},
        {"1.5.0K", ARB_EPARSE},
        {"1e3", ARB_EPARSE},
        {"0x10", ARB_EPARSE},
        {"1K5", ARB_EPARSE},
        {"1,5K", ARB_EPARSE},
        {"1X", ARB_ENOENT},
        {"1KiBB", ARB_ENOENT},
        {"1.5XB", ARB_ENOENT},
        {"2Kb/s", ARB_EPARSE},
        {"1Ki", ARB_ENOENT},
        {"1bytes", ARB_ENOENT},
        {"0.5", ARB_EINVAL},
        {"1.5B", ARB_EINVAL},
        {"0.001K", ARB_EINVAL},
        {"1.0001KB", ARB_EINVAL},
        {"0.0000000000000000001TB", ARB_EINVAL}, /* 10^-19 x 10^12 */
        {"1.50000000000000000000K", ARB_EPARSE}, /* twenty fraction digits */
        /* past 64 bits */
        {"18446744073709551616", ARB_ERANGE},
        {"99999999999999999999999", ARB_ERANGE},
        {"16777216T", ARB_ERANGE}, /* 2^24 x 2^40 = 2^64 */
        {"18446744073709552KB", ARB_ERANGE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        int rc = size_of(bad[i].s, UINT64_MAX, &v);
        CHECK_EQ_I(rc, bad[i].rc);
        CHECK_EQ_U(v, 7); /* failures leave *out alone */
        if (rc != bad[i].rc) fprintf(stderr, "  at '%s'\n", bad[i].s);
    }
    uint64_t v = 7;
    CHECK_EQ_I(arb_parse_size(NULL, 1, 99, &v), ARB_EPARSE);
    /* the largest values, and one past them */
    CHECK_EQ_I(size_of("18446744073709551615", UINT64_MAX, &v), 0);
    CHECK_EQ_U(v, UINT64_MAX);
    CHECK_EQ_I(size_of("16777215T", UINT64_MAX, &v), 0);
    CHECK_EQ_U(v, UINT64_MAX - ((1ull << 40) - 1));
    CHECK_EQ_I(size_of("1K", 1024, &v), 0); /* max itself */
    CHECK_EQ_U(v, 1024);
    v = 7;
    CHECK_EQ_I(size_of("1025", 1024, &v), ARB_ERANGE);
    CHECK_EQ_I(size_of("1.5K", 1024, &v), ARB_ERANGE);
    CHECK_EQ_I(size_of("1KB", 999, &v), ARB_ERANGE);
    CHECK_EQ_I(size_of("4G", 4ull << 30, &v), 0);
    CHECK_EQ_I(size_of("4.000000001GB", 4ull << 30, &v), 0); /* 4e9 + 1 < 2^32 */
    CHECK_EQ_I(size_of("4294967297", 4ull << 30, &v), ARB_ERANGE);
    /* what a message says about each */
    CHECK(strstr(arb_size_why(ARB_EPARSE), "is not a size") != NULL);
    CHECK(strstr(arb_size_why(ARB_EPARSE), ARB_SIZE_UNITS) != NULL);
    CHECK(strstr(arb_size_why(ARB_ENOENT), "unknown unit") != NULL);
    CHECK(strstr(arb_size_why(ARB_ENOENT), ARB_SIZE_UNITS) != NULL);
    CHECK_STR(arb_size_why(ARB_EINVAL), "is not a whole number of bytes");
    CHECK_STR(arb_size_why(ARB_ERANGE), "is too large");
    CHECK_STR(arb_size_why(ARB_EIO), "is not a size");
}

TEST(version)
{
    CHECK_STR(arb_version(), ARB_VERSION_STRING);
}

int main(void)
{
    RUN(time_tx_exact);
    RUN(time_tx_matches_double);
    RUN(time_tx_matches_wide);
    RUN(errors_named);
    RUN(dtype_and_op_names);
    RUN(coll_names_and_busbw);
    RUN(json_number_formats);
    RUN(rng_reference_values);
    RUN(rng_deterministic_and_split);
    RUN(rng_below_uniform);
    RUN(logging);
    RUN(parse_u64_and_helpers);
    RUN(parse_size_units);
    RUN(parse_size_errors);
    RUN(version);
    return testkit_done();
}
