/*
 * Fault events at given times during a run: fabric.fail_at (failures),
 * fabric.restore_at (recoveries) and fabric.reboot_at (switch reboots).
 * Each value is a sequence of entries, each a time followed by items as
 * fabric.fail takes them; entries and items may be separated by spaces,
 * commas or semicolons (a continuation line joins with a comma), e.g.
 *
 *   fail_at    = 200us up:L1.0:0, down:L2.1:3; 450us switch:L2.0
 *   restore_at = 300us up:L1.0:0
 *   reboot_at  = 1ms switch:L2.1 down=50us
 *
 * A token that reads as a time starts an entry. A reboot's items are
 * switches only, and `down=T` takes the entry's switches off the fabric
 * for T (a failure of each, then its restore, an entry of its own).
 * Entries are applied in time order (equal times in the order written,
 * fail_at's before restore_at's before reboot_at's).
 */
#include "scn_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

static int add_entry(struct scn_failat *fa, arb_time t, int kind)
{
    if (fa->n == fa->cap) {
        unsigned ncap = fa->cap ? fa->cap * 2 : 4;
        struct scn_failure *ne = arb_realloc(fa->e, ncap * sizeof *ne);
        if (!ne) return ARB_ENOMEM;
        fa->e = ne;
        fa->cap = ncap;
    }
    struct scn_failure *f = &fa->e[fa->n];
    memset(f, 0, sizeof *f);
    f->t = t;
    f->kind = (uint8_t)kind;
    f->order = fa->n;
    fa->n++;
    return 0;
}

/* Append item to the entry's comma-separated list. */
static int add_item(struct scn_failure *f, const char *item)
{
    size_t old = f->items ? strlen(f->items) : 0, n = old + strlen(item) + 2;
    char *ni = arb_realloc(f->items, n);
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

/* reboot_at's down=T for the entry `f` (text: after "down="). */
static int parse_down(struct scn_failure *f, const char *text, char *msg, size_t len)
{
    arb_time d;
    if (f->down)
        return arb_errf(msg, len, ARB_EPARSE, "down= given twice for the entry at %s", f->text);
    if (arb_topo_parse_time(text, &d) < 0 || d == 0)
        return arb_errf(msg, len, ARB_EPARSE, "down=%s: expected a time above 0 (such as 50us)",
                        text);
    if (f->t + d < f->t) return arb_errf(msg, len, ARB_EPARSE, "down=%s: too long", text);
    f->down = d;
    return 0;
}

/* One item of an entry of `kind`, checked against the topology. */
static int parse_item(struct scn_failure *f, const arb_topo *t, const char *w, char *msg,
                      size_t len)
{
    if (f->kind == SCN_EV_REBOOT && strncmp(w, "down=", 5) == 0)
        return parse_down(f, w + 5, msg, len);
    if (f->kind == SCN_EV_REBOOT && strncmp(w, "switch:", 7) != 0)
        return arb_errf(msg, len, ARB_EPARSE, "'%s': only switches reboot (switch:NAME)", w);
    int rc = arb_topo_fail_check(t, w, msg, len);
    if (rc < 0) return rc;
    if (add_item(f, w) < 0) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    return 0;
}

static int parse_tokens(struct scn_failat *fa, const arb_topo *t, char *copy, int kind,
                        unsigned first, char *msg, size_t len)
{
    static const char *const what[] = {"failures", "recoveries", "switches"};
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t,;", &save); w; w = strtok_r(NULL, " \t,;", &save)) {
        arb_time at;
        if (arb_topo_parse_time(w, &at) == 0) {
            if (fa->n > first && !fa->e[fa->n - 1].items)
                return arb_errf(msg, len, ARB_EPARSE, "no link or switch after %s",
                                fa->e[fa->n - 1].text);
            if (add_entry(fa, at, kind) < 0) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
            snprintf(fa->e[fa->n - 1].text, sizeof fa->e[fa->n - 1].text, "%s", w);
            continue;
        }
        if (fa->n == first)
            return arb_errf(msg, len, ARB_EPARSE,
                            "'%s': expected a time (such as 200us) before the %s", w, what[kind]);
        int rc = parse_item(&fa->e[fa->n - 1], t, w, msg, len);
        if (rc < 0) return rc;
    }
    if (fa->n > first && !fa->e[fa->n - 1].items)
        return arb_errf(msg, len, ARB_EPARSE, "no %s after %s",
                        kind == SCN_EV_REBOOT ? "switch" : "link or switch", fa->e[fa->n - 1].text);
    return 0;
}

/* Each reboot with down= gets the entry that brings its switches back. */
static int add_ups(struct scn_failat *fa, unsigned first, char *msg, size_t len)
{
    unsigned end = fa->n;
    for (unsigned i = first; i < end; i++) {
        if (fa->e[i].kind != SCN_EV_REBOOT || !fa->e[i].down) continue;
        if (add_entry(fa, fa->e[i].t + fa->e[i].down, SCN_EV_REBOOT_UP) < 0 ||
            add_item(&fa->e[fa->n - 1], fa->e[i].items) < 0)
            return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
        memcpy(fa->e[fa->n - 1].text, fa->e[i].text, sizeof fa->e[i].text);
        fa->e[fa->n - 1].up_of = fa->e[i].order;
    }
    return 0;
}

int scn_failat_add(struct scn_failat *fa, const arb_topo *t, const char *text, int kind, char *msg,
                   size_t len)
{
    char *copy = arb_malloc(strlen(text) + 1);
    if (!copy) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    memcpy(copy, text, strlen(text) + 1);
    unsigned first = fa->n;
    int rc = parse_tokens(fa, t, copy, kind, first, msg, len);
    arb_free(copy);
    if (rc == 0) rc = add_ups(fa, first, msg, len);
    if (rc < 0) { /* as it was */
        while (fa->n > first)
            arb_free(fa->e[--fa->n].items);
        return rc;
    }
    if (fa->n == 0) return 0;
    qsort(fa->e, fa->n, sizeof *fa->e, by_time);
    /* events numbered in time order; a reboot's end names its reboot */
    unsigned *ev_of = arb_malloc(fa->n * sizeof *ev_of);
    if (!ev_of) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    fa->n_events = 0;
    for (unsigned i = 0; i < fa->n; i++)
        if (fa->e[i].kind != SCN_EV_REBOOT_UP) {
            ev_of[fa->e[i].order] = fa->n_events;
            fa->e[i].event = fa->n_events++;
        }
    for (unsigned i = 0; i < fa->n; i++)
        if (fa->e[i].kind == SCN_EV_REBOOT_UP) fa->e[i].event = ev_of[fa->e[i].up_of];
    arb_free(ev_of);
    return 0;
}

arb_time scn_failat_next(const struct scn_failat *fa)
{
    return fa->next < fa->n ? fa->e[fa->next].t : ARB_TIME_NEVER;
}

/* One entry, in the topology (and for a reboot, the switches' pools). */
static int apply_entry(const struct scn_failure *f, arb_topo *t, arb_sim *s, int *slots_lost,
                       char *msg, size_t len)
{
    *slots_lost = 0;
    switch (f->kind) {
    case SCN_EV_FAIL:
        return arb_topo_fail(t, f->items, msg, len);
    case SCN_EV_RESTORE:
    case SCN_EV_REBOOT_UP:
        return arb_topo_restore(t, f->items, msg, len);
    default:
        break;
    }
    /* a reboot: every switch of the entry loses its slot pools */
    char *copy = arb_malloc(strlen(f->items) + 1), *save = NULL;
    if (!copy) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    memcpy(copy, f->items, strlen(f->items) + 1);
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        uint32_t node;
        if (arb_topo_find(t, w + 7, &node) < 0) continue; /* checked when parsed */
        int n = arb_sim_arbor_reboot(s, node);
        if (n > 0) *slots_lost += n; /* ARB_EINVAL: no Arbor collective, nothing to lose */
    }
    arb_free(copy);
    return f->down ? arb_topo_fail(t, f->items, msg, len) : 0;
}

int scn_failat_apply(struct scn_failat *fa, arb_topo *t, arb_lb *lb, arb_sim *s, arb_time now,
                     char *msg, size_t len)
{
    int changed = 0;
    while (fa->next < fa->n && fa->e[fa->next].t <= now) {
        const struct scn_failure *f = &fa->e[fa->next];
        int lost;
        int rc = apply_entry(f, t, s, &lost, msg, len);
        if (rc < 0) return rc; /* checked when parsed: cannot happen */
        if (fa->rec && f->kind != SCN_EV_REBOOT_UP) scn_recovery_event(fa->rec, f, s, lost);
        fa->next++;
        changed |= f->kind != SCN_EV_REBOOT || f->down;
    }
    if (!changed) return 0;
    if (arb_lb_refresh(lb) < 0) return arb_errf(msg, len, ARB_ENOMEM, "out of memory");
    arb_sim_fabric_changed(s);
    return 0;
}

void scn_failat_free(struct scn_failat *fa)
{
    for (unsigned i = 0; i < fa->n; i++)
        arb_free(fa->e[i].items);
    arb_free(fa->e);
    memset(fa, 0, sizeof *fa);
}
