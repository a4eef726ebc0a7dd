/*
 * Fuzz target: the Chakra execution-trace reader. The first byte chooses
 * how many rank files (1..3) the rest is cut into, in equal parts; any
 * input must parse or be refused with one line naming the file (ARB_EINVAL
 * only in a build without protobuf-c), never crash.
 *   ./build-fuzz/fuzz_chakra -max_total_time=600 tests/fuzz/corpus/chakra
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
    if (size == 0) return 0;
    uint32_t n = 1 + data[0] % 3;
    data++;
    size--;
    const uint8_t *bufs[3];
    size_t lens[3], part = size / n;
    for (uint32_t r = 0; r < n; r++) {
        bufs[r] = data + r * part;
        lens[r] = r + 1 == n ? size - r * part : part;
    }
    char err[512];
    err[0] = '\0';
    arb_trace *t = NULL;
    int rc = arb_trace_parse_chakra(&t, bufs, lens, n, "f", err, sizeof err);
    if (rc < 0) {
        require(t == NULL);
        require(rc == ARB_EPARSE || rc == ARB_ENOMEM ||
                (rc == ARB_EINVAL && !arb_trace_chakra_available()));
        require(strncmp(err, "f", 1) == 0 || rc == ARB_ENOMEM);
        require(strchr(err, '\n') == NULL);
        return 0;
    }
    require(t != NULL && arb_trace_ranks(t) == n);
    arb_workload *w = NULL;
    rc = arb_workload_new_iteration(&w, t, NULL, 8, NULL, err, sizeof err);
    arb_workload_free(w);
    return 0;
}
