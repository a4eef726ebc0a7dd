/*
 * A parsed sweep's points (sweep.h): each variable's value at a point, the
 * point's scenario text (the pieces joined), the point loaded into a
 * scenario (an error naming the variables on its line), and replications.
 */
#include "sweep_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

size_t arb_sweep_n_points(const arb_sweep *sw)
{
    return sw->n_points;
}

unsigned arb_sweep_n_reps(const arb_sweep *sw)
{
    return sw->reps;
}

size_t arb_sweep_n_vars(const arb_sweep *sw)
{
    return sw->n_vars;
}

const char *arb_sweep_var_name(const arb_sweep *sw, size_t var)
{
    return var < sw->n_vars ? sw->vars[var].name : NULL;
}

size_t arb_sweep_var_n_values(const arb_sweep *sw, size_t var)
{
    return var < sw->n_vars ? sw->vars[var].n : 0;
}

const char *arb_sweep_value(const arb_sweep *sw, size_t point, size_t var)
{
    if (point >= sw->n_points || var >= sw->n_vars) return NULL;
    const struct sweep_var *v = &sw->vars[var];
    return v->values[(point / v->stride) % v->n];
}

char *arb_sweep_point_text(const arb_sweep *sw, size_t point)
{
    if (point >= sw->n_points) return NULL;
    size_t len = 1;
    for (size_t i = 0; i < sw->n_pieces; i++) {
        const struct piece *pc = &sw->pieces[i];
        len += strlen(pc->lit ? pc->lit : arb_sweep_value(sw, point, pc->var));
    }
    char *t = arb_malloc(len), *o = t;
    if (!t) return NULL;
    for (size_t i = 0; i < sw->n_pieces; i++) {
        const struct piece *pc = &sw->pieces[i];
        const char *s = pc->lit ? pc->lit : arb_sweep_value(sw, point, pc->var);
        size_t n = strlen(s);
        memcpy(o, s, n);
        o += n;
    }
    *o = '\0';
    return t;
}

/* " (point P: a=1, b=2)": the variables with a slot on `line` (every
 * variable when line is 0 or has none), appended to err. */
static void append_point(const arb_sweep *sw, size_t point, unsigned line, char *err, size_t errlen)
{
    size_t used = strlen(err);
    int any = 0;
    for (size_t i = 0; i < sw->n_pieces && line; i++)
        if (!sw->pieces[i].lit && sw->pieces[i].line == line) any = 1;
    used += (size_t)snprintf(err + used, used < errlen ? errlen - used : 0, " (point %zu", point);
    int first = 1;
    for (size_t v = 0; v < sw->n_vars && used < errlen; v++) {
        int on_line = !any;
        for (size_t i = 0; i < sw->n_pieces && !on_line; i++)
            on_line = !sw->pieces[i].lit && sw->pieces[i].var == v && sw->pieces[i].line == line;
        if (!on_line) continue;
        used += (size_t)snprintf(err + used, errlen - used, "%s%s=%s", first ? ": " : ", ",
                                 sw->vars[v].name, arb_sweep_value(sw, point, v));
        first = 0;
    }
    if (used < errlen) snprintf(err + used, errlen - used, ")");
}

int arb_sweep_point_load(const arb_sweep *sw, size_t point, arb_scenario *sc, char *err,
                         size_t errlen)
{
    if (point >= sw->n_points)
        return arb_errf(err, errlen, ARB_EINVAL, "point %zu of %zu", point, sw->n_points);
    char *text = arb_sweep_point_text(sw, point);
    if (!text) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    int rc = arb_scenario_load_string(sc, text, sw->name, sw->dir, err, errlen);
    arb_free(text);
    if (rc < 0 && rc != ARB_ENOMEM && err && errlen) {
        size_t nl = strlen(sw->name);
        unsigned line = 0;
        if (strncmp(err, sw->name, nl) == 0 && err[nl] == ':')
            line = (unsigned)strtoul(err + nl + 1, NULL, 10);
        append_point(sw, point, line, err, errlen);
    }
    return rc;
}

int arb_sweep_replicate(const arb_sweep *sw, unsigned rep, arb_scenario *sc, char *err,
                        size_t errlen)
{
    if (rep >= sw->reps)
        return arb_errf(err, errlen, ARB_EINVAL, "replication %u of %u", rep, sw->reps);
    uint64_t seed;
    if (sw->have_seeds) {
        seed = sw->seed_first + rep;
    } else {
        if (rep == 0) return 0;
        const char *t = arb_scenario_get(sc, "run", "seed");
        uint64_t base = t ? strtoull(t, NULL, 0) : 0;
        if (base > UINT64_MAX - rep)
            return arb_errf(err, errlen, ARB_ERANGE,
                            "sweep.repeat: run.seed %s + %u passes 2^64 - 1", t, rep);
        seed = base + rep;
    }
    char as[64];
    snprintf(as, sizeof as, "run.seed=%llu", (unsigned long long)seed);
    return arb_scenario_set(sc, as, err, errlen);
}
