/* Host lists of the scenario keys (workload.hosts): "0-7,16,20-23". */
#include "scn_int.h"

#include <stdlib.h>
#include "base/alloc.h"

/* "0-7,16,20-23" into hosts (malloc'd); ARB_EPARSE with msg. */
int scn_parse_hosts(const char *s, uint32_t n_hosts, uint32_t **out, uint32_t *n, char *msg,
                    size_t len)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    uint32_t *v = NULL;
    const char *p = s;
    while (*p) {
        char *end;
        unsigned long a = strtoul(p, &end, 10), b;
        if (end == p) {
            arb_free(v);
            return arb_errf(msg, len, ARB_EPARSE, "'%s' is not a list of hosts like 0-7,16", s);
        }
        b = a;
        p = end;
        if (*p == '-') {
            const char *q = p + 1;
            b = strtoul(q, &end, 10);
            if (end == q || b < a) {
                arb_free(v);
                return arb_errf(msg, len, ARB_EPARSE, "'%s': a bad range", s);
            }
            p = end;
        }
        if (b >= n_hosts) {
            arb_free(v);
            return arb_errf(msg, len, ARB_EINVAL, "host %lu is not below the fabric's %u hosts", b,
                            n_hosts);
        }
        for (unsigned long h = a; h <= b; h++) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 64;
                uint32_t *nv = arb_realloc(v, cap * sizeof *nv);
                if (!nv) {
                    arb_free(v);
                    return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
                }
                v = nv;
            }
            v[(*n)++] = (uint32_t)h;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ',')
            p++;
        else if (*p) {
            arb_free(v);
            return arb_errf(msg, len, ARB_EPARSE, "'%s' is not a list of hosts like 0-7,16", s);
        }
        while (*p == ' ' || *p == '\t')
            p++;
    }
    *out = v;
    return 0;
}
