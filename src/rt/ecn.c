/*
 * The software switch's ECN marking (rt.h, arb_rt_ecn): its setting's
 * syntax, and RED's marking probability for a queue of q bytes.
 */
#define _GNU_SOURCE
#include "rt/rt_int.h"

#include <stdlib.h>
#include <string.h>

double rt_ecn_p(const arb_rt_ecn *e, uint64_t q)
{
    if (!e->on || q < e->kmin) return 0;
    if (q >= e->kmax) return 1;
    return e->pmax * (double)(q - e->kmin) / (double)(e->kmax - e->kmin);
}

/* A threshold: a size (arb_parse_size) of at most 1 GB: 0 and *out, or an
 * ARB_E* code. */
static int parse_bytes(const char *s, size_t len, uint64_t *out)
{
    return arb_parse_size(s, len, 1000000000ull, out);
}

int arb_rt_ecn_parse(const char *spec, arb_rt_ecn *out, char *err, size_t errlen)
{
    static const char rule[] = "want off, on, or KMIN,KMAX,PMAX (sizes: a number with an optional "
                               "unit " ARB_SIZE_UNITS ", KMIN <= KMAX <= 1GB; 0 <= PMAX <= 1), "
                               "e.g. 100KB,400KB,0.2";
    if (!spec || !out) return arb_errf(err, errlen, ARB_EPARSE, "ecn: %s", rule);
    if (strcmp(spec, "off") == 0 || strcmp(spec, "on") == 0) {
        out->on = spec[1] == 'n';
        out->kmin = ARB_RT_ECN_KMIN_DEFAULT;
        out->kmax = ARB_RT_ECN_KMAX_DEFAULT;
        out->pmax = ARB_RT_ECN_PMAX_DEFAULT;
        return 0;
    }
    const char *c1 = strchr(spec, ',');
    const char *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    uint64_t kmin, kmax;
    char *end;
    double pmax = c2 ? strtod(c2 + 1, &end) : -1;
    if (!c2 || parse_bytes(spec, (size_t)(c1 - spec), &kmin) < 0 ||
        parse_bytes(c1 + 1, (size_t)(c2 - c1 - 1), &kmax) < 0 || end == c2 + 1 || *end ||
        !(pmax >= 0 && pmax <= 1) || kmin > kmax)
        return arb_errf(err, errlen, ARB_EPARSE, "ecn '%s': %s", spec, rule);
    out->on = 1;
    out->kmin = (uint32_t)kmin;
    out->kmax = (uint32_t)kmax;
    out->pmax = pmax;
    return 0;
}
