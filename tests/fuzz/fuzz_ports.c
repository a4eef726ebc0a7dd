/*
 * Fuzz target: port lists (run.pcap_ports and the links of fabric.link,
 * scn_port_list): items all, host:hN, switch:NAME, link:A-B[/K],
 * up:NAME:Q, down:NAME:D, port:NAME:P separated by commas or blanks. The
 * first line of the input names the topology (a small spec; else
 * leafspine:2,4,2), the rest is the list.
 *
 * Invariants: 0, ARB_EPARSE, ARB_ENOENT or ARB_ENOMEM with a message and
 * no list; a list holds ports of the fabric in increasing order, each with
 * its peer (a link is both its directions).
 */
#include "fuzz_text.h"
#include "scenario/scn_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    char *s = fuzz_cstr(data, size);
    char *text;
    arb_topo *t = fuzz_topo_line(s, &text);
    uint32_t *ports = NULL;
    unsigned n = 0;
    char err[512] = "";
    int rc = scn_port_list(t, text, &ports, &n, err, sizeof err);
    if (rc < 0) {
        static const int allowed[] = {ARB_EPARSE, ARB_ENOENT, ARB_ENOMEM, 0};
        fuzz_error_ok(rc, allowed, err);
        fuzz_require(ports == NULL && n == 0);
    } else {
        fuzz_require(rc == 0 && ports != NULL && n >= 1);
        uint32_t np = arb_topo_n_ports(t);
        for (unsigned i = 0; i < n; i++) {
            fuzz_require(ports[i] < np && (i == 0 || ports[i] > ports[i - 1]));
            uint32_t peer = arb_topo_port(t, ports[i])->peer_port;
            int has_peer = 0;
            for (unsigned j = 0; j < n; j++)
                has_peer |= ports[j] == peer;
            fuzz_require(has_peer);
        }
        free(ports);
    }
    arb_topo_free(t);
    free(s);
    return 0;
}
