/*
 * fuzz_text.h - what the text-parser fuzz targets share: the input as a C
 * string, a topology small enough to build for every input, and the checks
 * every parser owes its caller (an error code from its documented set and
 * a message naming the problem; never a crash).
 *
 * A target aborts only where the code broke an invariant; an error return
 * for bad input is the expected outcome of most inputs.
 */
#ifndef ARBOR_FUZZ_TEXT_H
#define ARBOR_FUZZ_TEXT_H

#include "arbor/base.h"
#include "arbor/topo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Fuzzing is for the asserts too: a build that compiled them out would
 * miss the invariants they state. */
#if defined(ARB_FUZZING) && defined(NDEBUG)
#error "fuzz builds keep their asserts: build them without NDEBUG"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: the fuzzer reports a crash. */
static inline void fuzz_require(int cond)
{
    if (!cond) abort();
}

/* The input as a NUL-terminated string (malloc'd; an embedded NUL ends it). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    fuzz_require(s != NULL);
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* The first line of s (cut in place at the newline); *rest: what follows. */
static inline char *fuzz_first_line(char *s, char **rest)
{
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *rest = nl + 1;
    } else {
        *rest = s + strlen(s);
    }
    return s;
}

/* An error return: a negative code from `allowed` (0-terminated) and a
 * message in err. */
static inline void fuzz_error_ok(int rc, const int *allowed, const char *err)
{
    int known = 0;
    for (const int *a = allowed; *a; a++)
        known |= rc == *a;
    fuzz_require(rc < 0 && known);
    fuzz_require(err[0] != '\0');
}

/*
 * Whether a topology spec is small enough to build for every input: the
 * product of its plain numbers (those followed by ',', ';', ':' or the end;
 * a rate such as 400G is not one) at most `cap`, and for kary:K,N also
 * K^N. Every generator's nodes and ports are bounded by a small multiple
 * of that product (a PGFT's by (H + 1) times its square), so a cap of a
 * few hundred keeps every build in the milliseconds.
 */
static inline int fuzz_topo_small(const char *spec, uint64_t cap)
{
    uint64_t prod = 1;
    uint64_t nums[2] = {0, 0};
    int n_nums = 0;
    const char *p = spec;
    while (*p) {
        if (*p < '0' || *p > '9') {
            p++;
            continue;
        }
        uint64_t v = 0;
        const char *q = p;
        while (*q >= '0' && *q <= '9') {
            if (v > cap) return 0; /* already too large */
            v = v * 10 + (uint64_t)(*q - '0');
            q++;
        }
        int plain = *q == '\0' || *q == ',' || *q == ';' || *q == ':';
        if (plain) {
            if (v > cap || (v && prod > cap / v)) return 0;
            if (v) prod *= v;
            if (n_nums < 2) nums[n_nums] = v;
            n_nums++;
        }
        p = q;
    }
    if (strncmp(spec, "kary:", 5) == 0 && n_nums >= 2) {
        uint64_t hosts = 1;
        for (uint64_t i = 0; i < nums[1]; i++) {
            if (nums[0] > 1 && hosts > cap / nums[0]) return 0;
            hosts *= nums[0];
        }
    }
    return prod <= cap;
}

/* Build `spec` if it is small (fuzz_topo_small with `cap`), else NULL. A
 * failed build must say why (ARB_EPARSE, ARB_EINVAL or ARB_ENOMEM). */
static inline arb_topo *fuzz_topo(const char *spec, uint64_t cap)
{
    if (!fuzz_topo_small(spec, cap)) return NULL;
    arb_topo *t = NULL;
    char err[256] = "";
    int rc = arb_topo_new(&t, spec, NULL, err, sizeof err);
    if (rc < 0) {
        static const int allowed[] = {ARB_EPARSE, ARB_EINVAL, ARB_ENOMEM, 0};
        fuzz_error_ok(rc, allowed, err);
        fuzz_require(t == NULL);
        return NULL;
    }
    fuzz_require(t != NULL);
    return t;
}

/* The topology named on the first line of an input (small, else the
 * fallback leafspine:2,4,2); the rest of the input is the text to parse. */
static inline arb_topo *fuzz_topo_line(char *s, char **rest)
{
    const char *spec = fuzz_first_line(s, rest);
    arb_topo *t = *spec ? fuzz_topo(spec, 256) : NULL;
    if (!t) t = fuzz_topo("leafspine:2,4,2", 256);
    fuzz_require(t != NULL);
    return t;
}

/* Every link is failed in both directions or in neither. */
static inline void fuzz_check_failures(const arb_topo *t)
{
    uint32_t np = arb_topo_n_ports(t);
    for (uint32_t p = 0; p < np; p++) {
        const arb_port *a = arb_topo_port(t, p);
        fuzz_require(a && a->peer_port < np);
        fuzz_require(a->failed == arb_topo_port(t, a->peer_port)->failed);
    }
}

#endif
