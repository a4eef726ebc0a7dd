/*
 * Fuzz target: traffic specs (arb_traffic_new): shift:S, shift:all,
 * perm:SEED, all2all, ring, bisect:SEED, file:PATH. The first line of the
 * input is "HOSTS [QPS]" (hosts 1..64, default 8; QPs 0..8, default 1);
 * the second line is the spec. A spec "file:" with nothing after it
 * stands for a CSV file whose text is the rest of the input (written to a
 * temporary file); any other file: spec is not read (the fuzzer names no
 * files of the machine).
 *
 * Invariants: the parse returns 0, ARB_EPARSE, ARB_EIO, ARB_EINVAL or
 * ARB_ENOMEM with a message; a pattern has at least one phase; every phase
 * fits in arb_traffic_max_flows, with flows between distinct hosts below
 * the count, demand above 0, QP index below the QPs, the same flows for
 * the same generator state; a phase out of range is ARB_EINVAL.
 */
#include "arbor/traffic.h"
#include "fuzz_text.h"

#include <stdio.h>
#include <unistd.h>

static void check_phase(const arb_traffic *t, uint32_t ph, uint32_t hosts, uint32_t qps)
{
    size_t cap = arb_traffic_max_flows(t);
    arb_flow *a = malloc((cap ? cap : 1) * sizeof *a), *b = malloc((cap ? cap : 1) * sizeof *b);
    fuzz_require(a && b);
    arb_rng r1, r2;
    arb_rng_seed(&r1, ph);
    arb_rng_seed(&r2, ph);
    long na = arb_traffic_phase(t, ph, &r1, a, cap);
    long nb = arb_traffic_phase(t, ph, &r2, b, cap);
    fuzz_require(na >= 0 && na == nb && (size_t)na <= cap);
    for (long i = 0; i < na; i++) {
        fuzz_require(a[i].src < hosts && a[i].dst < hosts && a[i].src != a[i].dst);
        fuzz_require(a[i].demand > 0 && a[i].qp_index < qps);
        fuzz_require(a[i].src == b[i].src && a[i].dst == b[i].dst && a[i].sport == b[i].sport &&
                     a[i].qp == b[i].qp);
    }
    long nn = arb_traffic_phase(t, ph, NULL, a, cap);
    fuzz_require(nn == na);
    if (cap > 0) fuzz_require(arb_traffic_phase(t, ph, NULL, a, cap - 1) == ARB_ENOSPC);
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384) return 0;
    char *s = fuzz_cstr(data, size);
    char *rest;
    const char *first = fuzz_first_line(s, &rest);
    unsigned long hosts = 8, qps = 1;
    char *end;
    unsigned long h = strtoul(first, &end, 10);
    if (end != first && h >= 1 && h <= 64) hosts = h;
    if (end != first) {
        unsigned long q = strtoul(end, &end, 10);
        if (q <= 8) qps = q;
    }
    char *spec = fuzz_first_line(rest, &rest);
    char path[64] = "";
    char specbuf[96];
    if (strncmp(spec, "file:", 5) == 0) {
        if (spec[5] != '\0') goto out; /* a path of this machine: not read */
        snprintf(path, sizeof path, "/tmp/arbor-fuzz-traffic-%ld.csv", (long)getpid());
        FILE *f = fopen(path, "wb");
        fuzz_require(f != NULL);
        fputs(rest, f);
        fclose(f);
        snprintf(specbuf, sizeof specbuf, "file:%s", path);
        spec = specbuf;
    }
    arb_traffic_config cfg;
    arb_traffic_config_default(&cfg);
    cfg.qps = (uint32_t)qps;
    arb_traffic *t = (arb_traffic *)1;
    char err[512] = "";
    int rc = arb_traffic_new(&t, spec, (uint32_t)hosts, &cfg, err, sizeof err);
    if (rc < 0) {
        static const int allowed[] = {ARB_EPARSE, ARB_EIO, ARB_EINVAL, ARB_ENOMEM, 0};
        fuzz_error_ok(rc, allowed, err);
        fuzz_require(t == NULL);
    } else {
        fuzz_require(rc == 0 && t != NULL && qps >= 1 && hosts >= 2);
        uint32_t phases = arb_traffic_phases(t);
        fuzz_require(phases >= 1 && arb_traffic_spec(t) != NULL);
        for (uint32_t ph = 0; ph < phases && ph < 64; ph++)
            check_phase(t, ph, (uint32_t)hosts, (uint32_t)qps);
        arb_flow one;
        fuzz_require(arb_traffic_phase(t, phases, NULL, &one, 1) == ARB_EINVAL);
        arb_traffic_free(t);
    }
    if (path[0]) unlink(path);
out:
    free(s);
    return 0;
}
