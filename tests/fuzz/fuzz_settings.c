/*
 * Fuzz target: overrides as `arbor sim -s` gives them (arb_scenario_set).
 * Each line of the input (the first 32) is one assignment: section.key=value,
 * key=value when only one section has the key, or seed=N.
 *
 * Invariants: the result is 0, ARB_EPARSE or ARB_ENOMEM; an error says
 * "-s ..." and changes nothing; after a success exactly the key named has
 * the value, trimmed of blanks, and setting that value again succeeds.
 */
#include "arbor/scenario.h"
#include "fuzz_text.h"

#include <stdio.h>

#define MAX_KEYS 512

static void snapshot(const arb_scenario *sc, char **out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        arb_scenario_key_info ki;
        fuzz_require(arb_scenario_key(i, &ki) == 0);
        const char *v = arb_scenario_get(sc, ki.section, ki.key);
        fuzz_require(v != NULL);
        out[i] = strdup(v);
        fuzz_require(out[i] != NULL);
    }
}

static void release(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    char *text = fuzz_cstr(data, size);
    arb_scenario *sc = NULL;
    fuzz_require(arb_scenario_new(&sc) == 0);
    size_t n = arb_scenario_n_keys();
    fuzz_require(n <= MAX_KEYS);
    char *before[MAX_KEYS], *after[MAX_KEYS];
    char *rest = text;
    for (int lines = 0; *rest && lines < 32; lines++) {
        char *line = fuzz_first_line(rest, &rest);
        snapshot(sc, before, n);
        char err[512] = "";
        int rc = arb_scenario_set(sc, line, err, sizeof err);
        snapshot(sc, after, n);
        size_t changed = 0, which = 0;
        for (size_t i = 0; i < n; i++)
            if (strcmp(before[i], after[i]) != 0) changed++, which = i;
        if (rc < 0) {
            static const int allowed[] = {ARB_EPARSE, ARB_ENOMEM, 0};
            fuzz_error_ok(rc, allowed, err);
            fuzz_require(rc == ARB_ENOMEM || strncmp(err, "-s ", 3) == 0);
            fuzz_require(changed == 0);
        } else {
            fuzz_require(rc == 0 && changed <= 1);
            if (changed) {
                /* the value as given, blanks trimmed, is what the key holds */
                const char *v = strchr(line, '=') + 1;
                while (*v == ' ' || *v == '\t')
                    v++;
                fuzz_require(strncmp(after[which], v, strlen(after[which])) == 0);
                arb_scenario_key_info ki;
                fuzz_require(arb_scenario_key(which, &ki) == 0);
                size_t len = strlen(ki.section) + strlen(ki.key) + strlen(after[which]) + 3;
                char *assign = malloc(len);
                fuzz_require(assign != NULL);
                snprintf(assign, len, "%s.%s=%s", ki.section, ki.key, after[which]);
                fuzz_require(arb_scenario_set(sc, assign, err, sizeof err) == 0);
                free(assign);
            }
        }
        release(before, n);
        release(after, n);
    }
    arb_scenario_free(sc);
    free(text);
    return 0;
}
