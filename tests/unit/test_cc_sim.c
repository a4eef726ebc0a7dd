/*
 * Congestion control on the simulated fabric: what the controllers are
 * given (the ECN echo), and small versions of the two experiments of
 * docs/results.md ("Congestion control") with each adaptive controller,
 * against bounds derived from the fabric. Runs from the repository root
 * (ctest's working directory), where scenarios/ is.
 */
#include "arbor/scenario.h"
#include "testkit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double jnum(const cJSON *o, const char *name)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

static const cJSON *jobj(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

/* Run `file` (NULL: the built-in) with the overrides sets[0..n), parsed. */
static cJSON *run(const char *file, const char *const *sets, size_t n)
{
    arb_scenario *sc;
    char err[512];
    if (arb_scenario_new(&sc) < 0) return NULL;
    int rc = file ? arb_scenario_load(sc, file, err, sizeof err)
                  : arb_scenario_load_string(sc, arb_scenario_default_text(), "(built-in)", NULL,
                                             err, sizeof err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = arb_scenario_set(sc, sets[i], err, sizeof err);
    arb_scenario_result *r = NULL;
    if (rc == 0) rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
    arb_scenario_free(sc);
    if (rc < 0) {
        printf("  run: %s\n", err);
        return NULL;
    }
    char *js = arb_scenario_json(r, NULL);
    arb_scenario_result_free(r);
    cJSON *j = js ? cJSON_Parse(js) : NULL;
    free(js);
    return j;
}

/*
 * ECN echo: a requester answers a CE-marked credit with a CE request, so a
 * mark on a credit's way down reaches its responder. Three channels on
 * hosts 0-2 of star:4, window 1: a downlink holds at most three frames
 * (24.8 KB), below kmin = 40 KB, so the collective alone is never marked.
 * Host 3's IRN flow to host 0, with a window of twice its path's
 * bandwidth-delay product (30 packets of 4178 B against 58.5 KB), keeps
 * about 66.8 KB queued at h0's downlink and nowhere else: marks (pmax 1
 * above 41 KB) happen there only.
 * Without the echo only channel 0, whose aggregates cross that port, could
 * see CE: at most its 43 offsets (1 MiB / 3 in 8192 B). With it, channels 1
 * and 2, whose credits cross it, see CE too.
 */
TEST(ecn_echo)
{
    char dir[] = "/tmp/arbor-ccsim-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char csv[256], set_bg[300];
    snprintf(csv, sizeof csv, "%s/bulk.csv", dir);
    FILE *f = fopen(csv, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("src,dst,bytes,start_us\n3,0,4194304,0\n", f);
    fclose(f);
    snprintf(set_bg, sizeof set_bg, "arbor.background=%s", csv);
    const char *sets[] = {"fabric.topology=star:4", "workload.size=1MiB",
                          "workload.ranks=3",       "arbor.window=1",
                          "switch.kmin=40KB",       "switch.kmax=41KB",
                          "switch.pmax=1",          "transport.kind=irn",
                          "transport.window=30",    set_bg};
    cJSON *alone = run(NULL, sets, 9);
    cJSON *both = run(NULL, sets, 10);
    CHECK(alone && both);
    if (alone && both) {
        const cJSON *ca = jobj(jobj(alone, "arbor"), "cc"), *cb = jobj(jobj(both, "arbor"), "cc");
        CHECK(jnum(alone, "ecn_marks") == 0 && jnum(ca, "ce_samples") == 0);
        CHECK(jnum(both, "ecn_marks") > 0);
        CHECK(jnum(cb, "ce_samples") > 43);
        CHECK(jnum(jobj(jobj(both, "arbor"), "invariants"), "errors") == 0);
    }
    cJSON_Delete(alone);
    cJSON_Delete(both);
    unlink(csv);
    rmdir(dir);
}

/*
 * Several jobs: the whole's mean window is over every channel of every job
 * (it was left at 0). Fixed keeps every channel's window at arbor.window, 4,
 * so the mean over any set of channels is 4.
 */
TEST(jobs_window_mean)
{
    const char *sets[] = {"fabric.topology=star:8", "workload.size=256KiB", "arbor.jobs=2"};
    cJSON *j = run(NULL, sets, 3);
    CHECK(j != NULL);
    if (j) {
        const cJSON *ar = jobj(j, "arbor");
        CHECK(jnum(jobj(ar, "cc"), "window_mean") == 4);
        CHECK(cJSON_GetArraySize(jobj(ar, "jobs")) == 2);
    }
    cJSON_Delete(j);
}

int main(void)
{
    RUN(ecn_echo);
    RUN(jobs_window_mean);
    return testkit_done();
}
