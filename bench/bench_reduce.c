/*
 * bench_reduce: throughput of arb_reduce for every dtype x {SUM, MAX, MIN},
 * beside memcpy of a buffer of the same size measured in the same run.
 *
 *   bench_reduce [big [small [samples]]]
 *
 * big and small are buffer sizes in bytes (at least 8), with an optional K,
 * M or G suffix (powers of two): by default 64M (far beyond the caches, so memory bound)
 * and 256K (cache resident, so compute bound). samples (default 7) is how
 * many timed batches of each measurement are taken; the best one is
 * reported, which on a shared machine is the least disturbed one.
 *
 * Convention: reduce GB/s is bytes of `in` consumed per second (one payload
 * of `size` bytes per call; the kernel also reads and writes `acc`, so it
 * moves 3 x size bytes). memcpy GB/s is bytes copied per second. 1 GB =
 * 1e9 bytes. ratio = reduce GB/s / memcpy GB/s.
 *
 * Reduction and memcpy batches alternate, so both see the same machine.
 */
#include "arbor/reduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Through a volatile pointer, so that the compiler can neither inline nor
 * drop copies whose destination is never read. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

static volatile unsigned sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (end == s) return -1;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift) end++;
    /* at least one element of every dtype */
    if (*end != '\0' || v > (SIZE_MAX >> shift) >> 1 || (v << shift) < 8) return -1;
    *out = (size_t)v << shift;
    return 0;
}

/*
 * Values in [-1, 1] (integers in [-1000, 1000]): no NaN, infinity or
 * subnormal, which some hardware handles slowly, so every kernel runs on
 * ordinary data. Repeated SUM drifts acc but stays clear of subnormals.
 */
static void fill(arb_dtype dt, unsigned char *p, size_t n, arb_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        double x = arb_rng_double(r) * 2 - 1;
        float f = (float)x;
        switch (dt) {
        case ARB_DTYPE_F16: {
            uint16_t h = arb_f32_to_f16(f);
            memcpy(p + 2 * i, &h, 2);
            break;
        }
        case ARB_DTYPE_BF16: {
            uint16_t h = arb_f32_to_bf16(f);
            memcpy(p + 2 * i, &h, 2);
            break;
        }
        case ARB_DTYPE_F32:
            memcpy(p + 4 * i, &f, 4);
            break;
        case ARB_DTYPE_F64:
            memcpy(p + 8 * i, &x, 8);
            break;
        case ARB_DTYPE_I32: {
            int32_t v = (int32_t)(x * 1000);
            memcpy(p + 4 * i, &v, 4);
            break;
        }
        case ARB_DTYPE_I64: {
            int64_t v = (int64_t)(x * 1000);
            memcpy(p + 8 * i, &v, 8);
            break;
        }
        }
    }
}

/* Seconds for `reps` reductions (or copies when op < 0). */
static double time_batch(int op, arb_dtype dt, unsigned char *acc, unsigned char *dst,
                         const unsigned char *in, size_t size, long reps)
{
    double t0 = now();
    for (long i = 0; i < reps; i++) {
        if (op < 0)
            copy_fn(dst, in, size);
        else if (arb_reduce_bytes((arb_op)op, dt, acc, in, size) != 0)
            return -1;
    }
    return now() - t0;
}

static int bench_size(size_t size, int samples)
{
    static const arb_op ops[] = {ARB_OP_SUM, ARB_OP_MAX, ARB_OP_MIN};
    unsigned char *acc = malloc(size), *in = malloc(size), *dst = malloc(size);
    if (!acc || !in || !dst) {
        fprintf(stderr, "bench_reduce: cannot allocate 3 x %zu bytes\n", size);
        free(acc);
        free(in);
        free(dst);
        return -1;
    }
    memset(dst, 0, size); /* fault the pages in before timing */
    char label[32];
    if (size % (1u << 20) == 0)
        snprintf(label, sizeof label, "%zu MiB", size >> 20);
    else if (size % 1024 == 0)
        snprintf(label, sizeof label, "%zu KiB", size >> 10);
    else
        snprintf(label, sizeof label, "%zu B", size);

    arb_rng r;
    arb_rng_seed(&r, 1);
    for (int d = 0; d < ARB_DTYPE_COUNT; d++) {
        arb_dtype dt = (arb_dtype)d;
        size_t n = size / arb_dtype_size(dt);
        size_t bytes = n * arb_dtype_size(dt);
        fill(dt, acc, n, &r);
        fill(dt, in, n, &r);
        for (int o = 0; o < 3; o++) {
            /* One pass to warm up and size the batches to about 20 ms. */
            double t1 = time_batch(ops[o], dt, acc, dst, in, bytes, 1);
            double m1 = time_batch(-1, dt, acc, dst, in, bytes, 1);
            if (t1 < 0) {
                fprintf(stderr, "bench_reduce: arb_reduce failed\n");
                return -1;
            }
            long reps = t1 > 0.02 ? 1 : (long)(0.02 / (t1 > 1e-9 ? t1 : 1e-9)) + 1;
            long mreps = m1 > 0.02 ? 1 : (long)(0.02 / (m1 > 1e-9 ? m1 : 1e-9)) + 1;
            double best = 1e30, mbest = 1e30;
            for (int s = 0; s < samples; s++) {
                double t = time_batch(ops[o], dt, acc, dst, in, bytes, reps) / (double)reps;
                double m = time_batch(-1, dt, acc, dst, in, bytes, mreps) / (double)mreps;
                if (t < best) best = t;
                if (m < mbest) mbest = m;
            }
            double gbs = (double)bytes / best / 1e9, mgbs = (double)bytes / mbest / 1e9;
            printf("%-10s %-5s  %-4s %12.2f %12.2f %7.2f\n", label, arb_dtype_name(dt),
                   arb_op_name(ops[o]), gbs, mgbs, gbs / mgbs);
            fflush(stdout);
        }
    }
    /* Read the outputs once so that no work can be considered dead. */
    unsigned sum = 0;
    for (size_t i = 0; i < size; i += 4096)
        sum += acc[i] + dst[i];
    sink = sum;
    free(acc);
    free(in);
    free(dst);
    return 0;
}

int main(int argc, char **argv)
{
    size_t big = (size_t)64 << 20, small = (size_t)256 << 10;
    int samples = 7;
    if (argc > 4 || (argc > 1 && parse_size(argv[1], &big) != 0) ||
        (argc > 2 && parse_size(argv[2], &small) != 0) ||
        (argc > 3 && ((samples = atoi(argv[3])) < 1 || samples > 1000))) {
        fprintf(stderr,
                "usage: %s [big [small [samples]]]   sizes in bytes, K/M/G suffixes "
                "allowed; defaults 64M 256K 7\n",
                argv[0]);
        return 2;
    }
    printf("arb_reduce throughput, best of %d samples of ~20 ms each\n", samples);
    printf("reduce GB/s = bytes of `in` consumed per second (acc is also read and written);\n"
           "memcpy GB/s = bytes copied per second, same buffer size, batches interleaved;\n"
           "1 GB = 1e9 B; ratio = reduce / memcpy\n\n");
    printf("%-10s %-5s  %-4s %12s %12s %7s\n", "buffer", "dtype", "op", "reduce GB/s",
           "memcpy GB/s", "ratio");
    if (bench_size(big, samples) != 0 || bench_size(small, samples) != 0) return 1;
    return 0;
}
