/*
 * Fuzz target: fabric.fail_at, restore_at and reboot_at, fault events at
 * times during a run (scn_failat_add): entries of a time and items,
 * separated by blanks, commas or semicolons. The first line of the input
 * names the topology (a small spec; else leafspine:2,4,2), the rest is the
 * value, parsed as each of the three keys in turn.
 *
 * Invariants: the parse returns 0, ARB_EPARSE, ARB_ENOENT or ARB_ENOMEM
 * with a message and then leaves no entry; a parsed list is in time order
 * (ties as written), every entry has items, a reboot's are switches and
 * its down= gives the entry that brings them back at its time plus down,
 * every event is numbered in time order, and every entry's items then
 * apply to the fabric, failed and restored (the parse checked them).
 */
#include "fuzz_text.h"
#include "scenario/scn_int.h"

#include <string.h>

static void check_list(arb_topo *t, struct scn_failat *fa, int kind)
{
    char err[512] = "";
    arb_time last = 0;
    unsigned ev = 0;
    for (unsigned i = 0; i < fa->n; i++) {
        const struct scn_failure *f = &fa->e[i];
        fuzz_require(f->items && f->items[0]);
        fuzz_require(f->t >= last);
        if (i && f->t == fa->e[i - 1].t) fuzz_require(f->order > fa->e[i - 1].order);
        last = f->t;
        fuzz_require(scn_failat_next(fa) == fa->e[0].t);
        if (f->kind == SCN_EV_REBOOT_UP) {
            fuzz_require(kind == SCN_EV_REBOOT && f->event < ev);
            int found = 0;
            for (unsigned k = 0; k < fa->n; k++)
                found |= fa->e[k].kind == SCN_EV_REBOOT && fa->e[k].event == f->event &&
                         fa->e[k].t + fa->e[k].down == f->t &&
                         strcmp(fa->e[k].items, f->items) == 0;
            fuzz_require(found);
        } else {
            fuzz_require(f->kind == kind && f->event == ev++);
            if (kind != SCN_EV_REBOOT) fuzz_require(f->down == 0);
        }
        if (kind == SCN_EV_REBOOT) fuzz_require(strncmp(f->items, "switch:", 7) == 0);
        fuzz_require(arb_topo_fail(t, f->items, err, sizeof err) == 0);
        fuzz_check_failures(t);
        fuzz_require(arb_topo_restore(t, f->items, err, sizeof err) == 0);
    }
    fuzz_require(ev == fa->n_events);
    if (fa->n == 0) fuzz_require(scn_failat_next(fa) == ARB_TIME_NEVER);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    char *s = fuzz_cstr(data, size);
    char *text;
    arb_topo *t = fuzz_topo_line(s, &text);
    for (int kind = SCN_EV_FAIL; kind <= SCN_EV_REBOOT; kind++) {
        struct scn_failat fa;
        memset(&fa, 0, sizeof fa);
        char err[512] = "";
        int rc = scn_failat_add(&fa, t, text, kind, err, sizeof err);
        if (rc < 0) {
            static const int allowed[] = {ARB_EPARSE, ARB_ENOENT, ARB_ENOMEM, 0};
            fuzz_error_ok(rc, allowed, err);
            fuzz_require(fa.n == 0);
        } else {
            fuzz_require(rc == 0);
            check_list(t, &fa, kind);
        }
        scn_failat_free(&fa);
        arb_topo_clear_failures(t);
    }
    arb_topo_free(t);
    free(s);
    return 0;
}
