/*
 * fabric.fail_at: failures at given times during a run. The value is a
 * sequence of entries, each a time followed by failure items as
 * fabric.fail takes them; entries and items may be separated by spaces,
 * commas or semicolons (a continuation line joins with a comma), e.g.
 *
 *   fail_at = 200us up:L1.0:0, down:L2.1:3; 450us switch:L2.0
 *
 * A token that reads as a time starts an entry. Entries are applied in
 * time order (equal times in the order written).
 */
#include "scn_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_entry(struct scn_failat *fa, arb_time t)
{
    if (fa->n == fa->cap) {
        unsigned ncap = fa->cap ? fa->cap * 2 : 4;
        struct scn_failure *ne = realloc(fa->e, ncap * sizeof *ne);
        if (!ne) return ARB_ENOMEM;
        fa->e = ne;
        fa->cap = ncap;
    }
    fa->e[fa->n].t = t;
    fa->e[fa->n].items = NULL;
    fa->n++;
    return 0;
}

/* Append item to the last entry's comma-separated list. */
static int add_item(struct scn_failure *f, const char *item)
{
    size_t old = f->items ? strlen(f->items) : 0, n = old + strlen(item) + 2;
    char *ni = realloc(f->items, n);
    if (!ni) return ARB_ENOMEM;
    snprintf(ni + old, n - old, "%s%s", old ? "," : "", item);
    f->items = ni;
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const struct scn_failure *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int parse_tokens(struct scn_failat *fa, const arb_topo *t, char *copy, char *msg, size_t len)
{
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t,;", &save); w; w = strtok_r(NULL, " \t,;", &save)) {
        arb_time at;
        if (arb_topo_parse_time(w, &at) == 0) {
            if (fa->n && !fa->e[fa->n - 1].items)
                return arb_errf(msg, len, ARB_EPARSE, "no link or switch after %s",
                                fa->e[fa->n - 1].text);
            if (add_entry(fa, at) < 0) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
            snprintf(fa->e[fa->n - 1].text, sizeof fa->e[fa->n - 1].text, "%s", w);
            fa->e[fa->n - 1].order = fa->n - 1;
            continue;
        }
        if (fa->n == 0)
            return arb_errf(msg, len, ARB_EPARSE,
                            "'%s': expected a time (such as 200us) before the failures", w);
        int rc = arb_topo_fail_check(t, w, msg, len);
        if (rc < 0) return rc;
        if (add_item(&fa->e[fa->n - 1], w) < 0)
            return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    }
    if (fa->n && !fa->e[fa->n - 1].items)
        return arb_errf(msg, len, ARB_EPARSE, "no link or switch after %s", fa->e[fa->n - 1].text);
    return 0;
}

int scn_failat_parse(struct scn_failat *fa, const arb_topo *t, const char *text, char *msg,
                     size_t len)
{
    memset(fa, 0, sizeof *fa);
    char *copy = malloc(strlen(text) + 1);
    if (!copy) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    memcpy(copy, text, strlen(text) + 1);
    int rc = parse_tokens(fa, t, copy, msg, len);
    free(copy);
    if (rc < 0) {
        scn_failat_free(fa);
        return rc;
    }
    if (fa->n) qsort(fa->e, fa->n, sizeof *fa->e, by_time);
    return 0;
}

arb_time scn_failat_next(const struct scn_failat *fa)
{
    return fa->next < fa->n ? fa->e[fa->next].t : ARB_TIME_NEVER;
}

int scn_failat_apply(struct scn_failat *fa, arb_topo *t, arb_lb *lb, arb_sim *s, arb_time now,
                     char *msg, size_t len)
{
    int changed = 0;
    while (fa->next < fa->n && fa->e[fa->next].t <= now) {
        int rc = arb_topo_fail(t, fa->e[fa->next].items, msg, len);
        if (rc < 0) return rc; /* checked when parsed: cannot happen */
        fa->next++;
        changed = 1;
    }
    if (!changed) return 0;
    if (arb_lb_refresh(lb) < 0) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    arb_sim_fabric_changed(s);
    return 0;
}

void scn_failat_free(struct scn_failat *fa)
{
    for (unsigned i = 0; i < fa->n; i++)
        free(fa->e[i].items);
    free(fa->e);
    memset(fa, 0, sizeof *fa);
}
