/*
 * Fuzz target: fabric.fail_at, failures at times during a run
 * (scn_failat_parse): entries of a time and failure items, separated by
 * blanks, commas or semicolons. The first line of the input names the
 * topology (a small spec; else leafspine:2,4,2), the rest is the value.
 *
 * Invariants: the parse returns 0, ARB_EPARSE, ARB_ENOENT or ARB_ENOMEM
 * with a message; a parsed list is in time order (ties as written), every
 * entry has items, and every entry's items then apply to the fabric (the
 * parse checked them against it).
 */
#include "fuzz_text.h"
#include "scenario/scn_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    char *s = fuzz_cstr(data, size);
    char *text;
    arb_topo *t = fuzz_topo_line(s, &text);
    struct scn_failat fa;
    char err[512] = "";
    int rc = scn_failat_parse(&fa, t, text, err, sizeof err);
    if (rc < 0) {
        static const int allowed[] = {ARB_EPARSE, ARB_ENOENT, ARB_ENOMEM, 0};
        fuzz_error_ok(rc, allowed, err);
        fuzz_require(fa.n == 0 && fa.e == NULL);
    } else {
        fuzz_require(rc == 0);
        arb_time last = 0;
        for (unsigned i = 0; i < fa.n; i++) {
            fuzz_require(fa.e[i].items && fa.e[i].items[0]);
            fuzz_require(fa.e[i].t >= last);
            if (i && fa.e[i].t == fa.e[i - 1].t) fuzz_require(fa.e[i].order > fa.e[i - 1].order);
            last = fa.e[i].t;
            fuzz_require(scn_failat_next(&fa) == fa.e[0].t);
            fuzz_require(arb_topo_fail(t, fa.e[i].items, err, sizeof err) == 0);
            fuzz_check_failures(t);
        }
        if (fa.n == 0) fuzz_require(scn_failat_next(&fa) == ARB_TIME_NEVER);
        scn_failat_free(&fa);
    }
    arb_topo_free(t);
    free(s);
    return 0;
}
