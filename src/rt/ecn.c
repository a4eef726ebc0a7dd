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

/* A size in bytes, "400000", "400KB", "1.5MiB": 0 and *out, or -1. */
static int parse_bytes(const char *s, size_t len, uint64_t *out)
{
    static const struct {
        const char *unit;
        double mult;
    } units[] = {{"", 1}, {"B", 1}, {"KB", 1e3}, {"KiB", 1024}, {"MB", 1e6}, {"MiB", 1048576}};
    char text[32];
    if (len == 0 || len >= sizeof text) return -1;
    memcpy(text, s, len);
    text[len] = 0;
    char *end;
    double v = strtod(text, &end);
    if (end == text || !(v >= 0) || (text[0] < '0' || text[0] > '9')) return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].unit) != 0) continue;
        double b = v * units[i].mult;
        if (b > 1e9 || b != (double)(uint64_t)b) return -1;
        *out = (uint64_t)b;
        return 0;
    }
    return -1;
}

int arb_rt_ecn_parse(const char *spec, arb_rt_ecn *out, char *err, size_t errlen)
{
    static const char rule[] = "want off, on, or KMIN,KMAX,PMAX (sizes in bytes, B, KB, KiB, MB "
                               "or MiB, KMIN <= KMAX <= 1GB; 0 <= PMAX <= 1), e.g. 100KB,400KB,0.2";
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
