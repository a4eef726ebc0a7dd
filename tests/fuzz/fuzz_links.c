/*
 * Fuzz target: fabric.link, per-link settings (scn_links_apply): entries of
 * links (all, host:hN, switch:NAME, link:A-B[/K], up:NAME:Q, down:NAME:D,
 * port:NAME:P) followed by rate= and delay= settings. The first line of
 * the input names the topology (a small spec; else leafspine:2,4,2), the
 * rest is the value.
 *
 * Invariants: 0, ARB_EPARSE, ARB_ENOENT, ARB_EINVAL or ARB_ENOMEM with a
 * message; after it every link still has the same rate and delay in both
 * directions, every rate within 1..ARB_RATE_MAX.
 */
#include "fuzz_text.h"
#include "scenario/scn_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    char *s = fuzz_cstr(data, size);
    char *text;
    arb_topo *t = fuzz_topo_line(s, &text);
    char err[512] = "";
    int rc = scn_links_apply(t, text, err, sizeof err);
    if (rc < 0) {
        static const int allowed[] = {ARB_EPARSE, ARB_ENOENT, ARB_EINVAL,
                                      ARB_ERANGE, ARB_ENOMEM, 0};
        fuzz_error_ok(rc, allowed, err);
    } else {
        fuzz_require(rc == 0);
    }
    uint32_t np = arb_topo_n_ports(t);
    for (uint32_t p = 0; p < np; p++) {
        const arb_port *a = arb_topo_port(t, p), *b = arb_topo_port(t, a->peer_port);
        fuzz_require(a->rate == b->rate && a->delay == b->delay);
        fuzz_require(a->rate >= 1 && a->rate <= ARB_RATE_MAX);
    }
    arb_topo_free(t);
    free(s);
    return 0;
}
