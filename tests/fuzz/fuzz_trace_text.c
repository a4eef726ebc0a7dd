/*
 * Fuzz target: the text iteration-trace reader. Any input must parse or be
 * refused with ARB_EPARSE (or ARB_ENOMEM) and one line of error text naming
 * the file; an accepted trace must replay its bookkeeping without a crash
 * (the workload is made and freed; the figures are read).
 *   ./build-fuzz/fuzz_trace_text -max_total_time=600 tests/fuzz/corpus/trace_text
 */
#include "arbor/workload.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    err[0] = '\0';
    arb_trace *t = NULL;
    int rc = arb_trace_parse_text(&t, (const char *)data, size, "f.txt", err, sizeof err);
    if (rc < 0) {
        require(t == NULL);
        require(rc == ARB_EPARSE || rc == ARB_ENOMEM);
        require(strncmp(err, "f.txt", 5) == 0 || rc == ARB_ENOMEM);
        require(strchr(err, '\n') == NULL);
        return 0;
    }
    require(t != NULL && arb_trace_ranks(t) >= 1);
    if (arb_trace_ranks(t) > 64) { /* keep the plans small */
        arb_trace_free(t);
        return 0;
    }
    arb_workload *w = NULL;
    arb_iteration_config ic;
    memset(&ic, 0, sizeof ic);
    ic.chunk = 0; /* one slice: plans stay as small as the trace */
    rc = arb_workload_new_iteration(&w, t, &ic, 64, NULL, err, sizeof err);
    if (rc == 0) {
        arb_workload_result r;
        arb_workload_get_result(w, &r);
        require(r.ranks >= 1);
    }
    arb_workload_free(w);
    return 0;
}
