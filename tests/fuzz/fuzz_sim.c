/*
 * Fuzz target: the simulator run on an arbitrary short scenario. The input
 * is a scenario file's text; it is loaded, checked against caps that keep
 * one run to milliseconds (and the run away from the machine's files),
 * and run with arb_scenario_run.
 *
 * Inputs beyond the caps are skipped before anything is built: a topology
 * whose numbers multiply past 32 (fuzz_text.h), more than 64 KiB per flow
 * or collective, more than 256 packets or offsets per flow, more than 8
 * QPs or 64 pipeline slices, more than 16 subchannels, slot pools above
 * 4096 slots or 8 MiB, flowlet tables above 65536 entries, timers below
 * 10 us (retransmission, Arbor timeouts and retries), samples closer than
 * 1 us. Any key that names a file (workload.file, run.pcap, a table: or
 * file: spec) is skipped too. run.stop is set to at most 2 ms.
 *
 * Invariants: the run returns 0, or an error the header documents with a
 * message; a successful run gives JSON and CSV text, and the same JSON when
 * run again (a run is a function of its scenario); an Arbor workload's
 * run breaks no invariant (every error count 0), and one in values mode
 * that finished is correct.
 */
#include "arbor/scenario.h"
#include "fuzz_text.h"
#include "scenario/scn_int.h"

#include <stdio.h>

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* The number after "table=" in a routing scheme's options, or 0. */
static uint64_t flowlet_table(const char *scheme)
{
    const char *t = strstr(scheme, "table=");
    return t ? strtoull(t + 6, NULL, 10) : 0;
}

/* NULL when the loaded scenario is within the caps (run.stop then set),
 * else the cap it exceeds. */
static const char *beyond_caps(arb_scenario *sc)
{
    if (!fuzz_topo_small(scn_str(sc, K_FAB_TOPO), 32)) return "topology";
    if (*scn_str(sc, K_WL_FILE) || *scn_str(sc, K_RUN_PCAP)) return "a file";
    if (has_prefix(scn_str(sc, K_WL_TRAFFIC), "file:")) return "a traffic file";
    const char *scheme = scn_str(sc, K_RT_SCHEME);
    if (strstr(scheme, "table:")) return "a routing table";
    if (flowlet_table(scheme) > 65536) return "flowlet table";
    uint64_t size = scn_u64(sc, K_WL_SIZE);
    if (size > 65536) return "size";
    if (size / scn_u64(sc, K_TR_MTU) > 256) return "packets per flow";
    if (size / scn_u64(sc, K_AR_PAYLOAD) > 256) return "offsets per flow";
    if (scn_u64(sc, K_WL_QPS) > 8) return "qps";
    uint64_t chunk = scn_u64(sc, K_WL_CHUNK);
    if (chunk && size / chunk > 64) return "slices";
    if (scn_u64(sc, K_AR_SUBCH) > 16) return "subchannels";
    uint64_t slots = scn_u64(sc, K_AR_SLOTS);
    if (slots > 4096 || slots * scn_u64(sc, K_AR_PAYLOAD) > (8u << 20)) return "slots";
    const arb_time us = ARB_PS_PER_US;
    /* 0 (auto, or timeout_min's default) is a timer derived from the fabric */
    static const enum scn_key set_or_derived[] = {K_TR_RTO, K_TR_RTOLOW, K_TR_RTOHIGH, K_AR_TOMIN};
    for (size_t i = 0; i < sizeof set_or_derived / sizeof set_or_derived[0]; i++) {
        arb_time t = scn_u64(sc, set_or_derived[i]);
        if (t && t < 10 * us) return "timers";
    }
    if (scn_u64(sc, K_AR_TIMEOUT) < 10 * us || scn_u64(sc, K_AR_RETRY) < 10 * us) return "timers";
    arb_time sample = scn_u64(sc, K_RUN_SAMPLE);
    if (sample && sample < us) return "sample";
    arb_time stop = scn_u64(sc, K_RUN_STOP);
    if (stop == 0 || stop > 2 * ARB_PS_PER_MS) {
        char err[256];
        fuzz_require(arb_scenario_set(sc, "run.stop=2ms", err, sizeof err) == 0);
    }
    return NULL;
}

static void check_arbor(const arb_sim_arbor_result *a, int values)
{
    fuzz_require(a->invariant_errors == 0);
    fuzz_require(a->inv_dup_commit == 0 && a->inv_count == 0 && a->inv_agg_check == 0);
    fuzz_require(a->inv_missing == 0 && a->inv_early == 0 && a->inv_conservation == 0);
    fuzz_require(a->wire_errors == 0);
    fuzz_require(a->ranks_done <= a->ranks);
    if (!values)
        fuzz_require(a->correct == -1);
    else if (a->done)
        fuzz_require(a->correct == 1 && a->wrong == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *text = fuzz_cstr(data, size);
    arb_scenario *sc = NULL;
    fuzz_require(arb_scenario_new(&sc) == 0);
    char err[512] = "";
    int rc = arb_scenario_load_string(sc, text, "f.ini", "/nonexistent-fuzz-dir", err, sizeof err);
    const char *beyond = rc == 0 ? beyond_caps(sc) : "not loaded";
    if (getenv("ARB_FUZZ_VERBOSE")) fprintf(stderr, "fuzz_sim: %s\n", beyond ? beyond : "run");
    if (!beyond) {
        arb_scenario_result *r = (arb_scenario_result *)1;
        rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
        if (rc < 0) {
            static const int allowed[] = {ARB_EPARSE, ARB_EINVAL,    ARB_EIO,    ARB_ENOENT,
                                          ARB_ENOMEM, ARB_ETIMEDOUT, ARB_ERANGE, 0};
            fuzz_error_ok(rc, allowed, err);
            if (getenv("ARB_FUZZ_VERBOSE")) fprintf(stderr, "fuzz_sim: run: %s\n", err);
        } else {
            fuzz_require(rc == 0 && r != NULL);
            char *json = arb_scenario_json(r, NULL);
            fuzz_require(json && json[0] == '{' && json[strlen(json) - 1] == '}');
            /* the run is a function of the scenario: once more, the same JSON */
            arb_scenario_result *r2 = NULL;
            fuzz_require(arb_scenario_run(sc, NULL, NULL, &r2, err, sizeof err) == 0);
            char *json2 = arb_scenario_json(r2, NULL);
            fuzz_require(json2 && strcmp(json, json2) == 0);
            free(json2);
            arb_scenario_result_free(r2);
            free(json);
            for (int k = ARB_SCN_CSV_UTIL; k <= ARB_SCN_CSV_FLOWS; k++) {
                char *csv = arb_scenario_csv(r, (arb_scenario_csv_kind)k);
                fuzz_require(csv != NULL);
                free(csv);
            }
            const arb_sim_arbor_result *a = arb_scenario_result_arbor(r);
            if (strcmp(scn_str(sc, K_WL_KIND), "arbor") == 0) {
                fuzz_require(a != NULL);
                check_arbor(a, strcmp(scn_str(sc, K_AR_MODE), "values") == 0);
            } else {
                fuzz_require(a == NULL);
            }
            arb_scenario_result_free(r);
        }
    }
    arb_scenario_free(sc);
    free(text);
    return 0;
}
