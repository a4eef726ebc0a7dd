/* A program that uses the installed libarbor: an Arbor AllReduce of 1 MiB
 * over star:4, its status and its JSON (tests/install/test_install.sh). */
#include <arbor/arbor.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    arb_scenario *sc;
    arb_scenario_result *res;
    char err[512];
    if (arb_scenario_new(&sc) < 0) return 1;
    if (arb_scenario_load_string(sc, arb_scenario_default_text(), "(built-in)", NULL, err,
                                 sizeof err) < 0 ||
        arb_scenario_set(sc, "topology=star:4", err, sizeof err) < 0 ||
        arb_scenario_set(sc, "size=1MiB", err, sizeof err) < 0 ||
        arb_scenario_run(sc, NULL, NULL, &res, err, sizeof err) < 0) {
        fprintf(stderr, "consumer: %s\n", err);
        arb_scenario_free(sc);
        return 1;
    }
    arb_scenario_free(sc);
    char *json = arb_scenario_json(res, NULL);
    printf("arbor %s %s\n%s\n", arb_version(),
           arb_scenario_result_status(res, NULL) == ARB_SCN_DONE ? "done" : "not done",
           json ? json : "(no JSON)");
    free(json);
    arb_scenario_result_free(res);
    return 0;
}
