/*
 * Fuzz target: htsim connection matrices (Nodes N, Connections C, then SRC->DST id I start T size
 * B), parsed from memory by arb_workload_parse. The first line of the input is the fabric's host
 * count (2..1024; anything else means 16); the rest is the file.
 *
 * Invariants: the parse returns 0 and a workload, or ARB_EPARSE, ARB_EINVAL
 * or ARB_ENOMEM with no workload and a message that names the file; a
 * parsed trace plans at least one flow, each of at least one byte.
 */
#include "arbor/workload.h"
#include "fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    char *s = fuzz_cstr(data, size);
    char *text;
    const char *first = fuzz_first_line(s, &text);
    char *end;
    unsigned long hosts = strtoul(first, &end, 10);
    if (end == first || *end || hosts < 2 || hosts > 1024) hosts = 16;
    arb_workload *w = (arb_workload *)1;
    char err[512] = "";
    int rc =
        arb_workload_parse(&w, ARB_WL_HTSIM, text, "m.cm", (uint32_t)hosts, NULL, err, sizeof err);
    if (rc < 0) {
        static const int allowed[] = {ARB_EPARSE, ARB_EINVAL, ARB_ENOMEM, 0};
        fuzz_error_ok(rc, allowed, err);
        fuzz_require(w == NULL);
        fuzz_require(rc == ARB_ENOMEM || strncmp(err, "m.cm", strlen("m.cm")) == 0);
    } else {
        fuzz_require(rc == 0 && w != NULL);
        fuzz_require(arb_workload_get_kind(w) == ARB_WL_HTSIM);
        arb_workload_result r;
        arb_workload_get_result(w, &r);
        fuzz_require(r.flows_planned >= 1 && r.bytes_planned >= r.flows_planned);
        arb_workload_free(w);
    }
    free(s);
    return 0;
}
