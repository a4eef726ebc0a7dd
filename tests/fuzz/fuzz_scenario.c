/*
 * Fuzz target: scenario files (arb_scenario_load_string, the INI reader
 * and every key's value parser). The input is the file's text.
 *
 * Invariants: the load returns 0, ARB_EPARSE or ARB_ENOMEM, and an error
 * message naming the file; every key still has a value afterwards (what
 * the load set before its first error, or the default); and every value a
 * file set is accepted again as an override (`-s section.key=value`), so
 * that the two ways of setting a key agree.
 */
#include "arbor/scenario.h"
#include "fuzz_text.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384) return 0;
    char *text = fuzz_cstr(data, size);
    arb_scenario *sc = NULL, *again = NULL;
    fuzz_require(arb_scenario_new(&sc) == 0 && arb_scenario_new(&again) == 0);
    char err[512] = "";
    int rc = arb_scenario_load_string(sc, text, "f.ini", NULL, err, sizeof err);
    if (rc < 0) {
        static const int allowed[] = {ARB_EPARSE, ARB_ENOMEM, 0};
        fuzz_error_ok(rc, allowed, err);
        fuzz_require(rc == ARB_ENOMEM || strncmp(err, "f.ini", 5) == 0);
    }
    size_t n = arb_scenario_n_keys();
    for (size_t i = 0; i < n; i++) {
        arb_scenario_key_info ki;
        fuzz_require(arb_scenario_key(i, &ki) == 0);
        const char *v = arb_scenario_get(sc, ki.section, ki.key);
        fuzz_require(v != NULL);
        size_t len = strlen(ki.section) + strlen(ki.key) + strlen(v) + 3;
        char *assign = malloc(len);
        fuzz_require(assign != NULL);
        snprintf(assign, len, "%s.%s=%s", ki.section, ki.key, v);
        char e2[512] = "";
        int set = arb_scenario_set(again, assign, e2, sizeof e2);
        fuzz_require(set == 0 || set == ARB_ENOMEM);
        if (set == 0) fuzz_require(strcmp(arb_scenario_get(again, ki.section, ki.key), v) == 0);
        free(assign);
    }
    arb_scenario_free(again);
    arb_scenario_free(sc);
    free(text);
    return 0;
}
