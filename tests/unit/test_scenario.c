/* Scenarios: defaults, files, overrides, error text (file:line: key),
 * relative paths, and byte-identical JSON from identical runs. */
#include "arbor/scenario.h"
#include "testkit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A small, quick scenario: ring AllReduce of 64 KiB over star:4. */
static const char *small = "[fabric]\n"
                           "topology = star:4\n"
                           "[workload]\n"
                           "kind = ring_allreduce\n"
                           "size = 64KiB\n"
                           "[run]\n"
                           "sample = 5us\n";

static arb_scenario *load(const char *text)
{
    arb_scenario *sc;
    char err[512];
    if (arb_scenario_new(&sc) < 0) return NULL;
    if (arb_scenario_load_string(sc, text, "t.ini", NULL, err, sizeof err) < 0) {
        printf("  load: %s\n", err);
        arb_scenario_free(sc);
        return NULL;
    }
    return sc;
}

/* Run and return the JSON without the host object (malloc'd). */
static char *run_json(const arb_scenario *sc)
{
    arb_scenario_result *r;
    char err[512];
    if (arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err) < 0) {
        printf("  run: %s\n", err);
        return NULL;
    }
    char *j = arb_scenario_json(r, NULL);
    arb_scenario_result_free(r);
    return j;
}

TEST(defaults)
{
    arb_scenario *sc;
    REQUIRE_EQ_I(arb_scenario_new(&sc), 0);
    CHECK_STR(arb_scenario_get(sc, "fabric", "topology"), "leafspine:4,4,4");
    CHECK_STR(arb_scenario_get(sc, "workload", "kind"), "ring_allreduce");
    CHECK_STR(arb_scenario_get(sc, "run", "seed"), "1");
    CHECK(arb_scenario_get(sc, "fabric", "nope") == NULL);
    CHECK(arb_scenario_file(sc) == NULL);
    size_t n = arb_scenario_n_keys();
    CHECK(n >= 30);
    for (size_t i = 0; i < n; i++) {
        arb_scenario_key_info ki;
        CHECK_EQ_I(arb_scenario_key(i, &ki), 0);
        CHECK(ki.doc && *ki.doc);
        CHECK_STR(arb_scenario_get(sc, ki.section, ki.key), ki.def);
    }
    CHECK_EQ_I(arb_scenario_key(n, NULL), ARB_EINVAL);
    /* the key's default is the simulator's */
    const char *limit = arb_scenario_get(sc, "transport", "retry_limit");
    CHECK(limit && strtoull(limit, NULL, 10) == ARB_SIM_RETRY_LIMIT);
    arb_scenario_free(sc);
}

TEST(overrides)
{
    arb_scenario *sc = load(small);
    REQUIRE(sc != NULL);
    char err[512];
    CHECK_STR(arb_scenario_get(sc, "fabric", "topology"), "star:4");
    CHECK_EQ_I(arb_scenario_set(sc, "transport.mtu = 2KiB", err, sizeof err), 0);
    CHECK_STR(arb_scenario_get(sc, "transport", "mtu"), "2KiB");
    CHECK_EQ_I(arb_scenario_set(sc, "qp_mode=rr", err, sizeof err), 0);
    CHECK_STR(arb_scenario_get(sc, "workload", "qp_mode"), "rr");
    CHECK_EQ_I(arb_scenario_set(sc, "seed=5", err, sizeof err), 0); /* bare seed: the run's */
    CHECK_STR(arb_scenario_get(sc, "run", "seed"), "5");
    CHECK_EQ_I(arb_scenario_set(sc, "window=5", err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "ambiguous") && strstr(err, "transport.window") &&
          strstr(err, "arbor.window"));
    CHECK_EQ_I(arb_scenario_set(sc, "transport.mtu=abc", err, sizeof err), ARB_EPARSE);
    CHECK(strncmp(err, "-s transport.mtu: 'abc' is not a size", 37) == 0);
    CHECK_EQ_I(arb_scenario_set(sc, "transport.bogus=1", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s transport.bogus: unknown key in [transport]");
    /* a typo: the nearest key of the section named (an edit, a swap) */
    CHECK_EQ_I(arb_scenario_set(sc, "transport.retry_limt=3", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s transport.retry_limt: unknown key in [transport] (did you mean "
                   "transport.retry_limit?)");
    CHECK_EQ_I(arb_scenario_set(sc, "run.stpo=1ms", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s run.stpo: unknown key in [run] (did you mean run.stop?)");
    /* a key of another section: that one named */
    CHECK_EQ_I(arb_scenario_set(sc, "workload.colective=reduce", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s workload.colective: unknown key in [workload] (did you mean "
                   "arbor.collective?)");
    /* a bare key: the nearest of every section, with its section; every one
     * as near */
    CHECK_EQ_I(arb_scenario_set(sc, "colective=reduce", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s colective: unknown key (did you mean arbor.collective?)");
    CHECK_EQ_I(arb_scenario_set(sc, "windw=5", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s windw: unknown key (did you mean transport.window or arbor.window?)");
    CHECK_EQ_I(arb_scenario_set(sc, "seeed=5", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s seeed: unknown key (did you mean routing.seed, workload.seed or run.seed?)");
    CHECK_EQ_I(arb_scenario_set(sc, "zzzzzz=1", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s zzzzzz: unknown key"); /* nothing near */
    CHECK_EQ_I(arb_scenario_set(sc, "xx=1", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s xx: unknown key"); /* two edits from xon: too far for two letters */
    /* a bare key with a dot of its own, and one misspelt */
    CHECK_EQ_I(arb_scenario_set(sc, "cc.rate=10G", err, sizeof err), 0);
    CHECK_STR(arb_scenario_get(sc, "arbor", "cc.rate"), "10G");
    CHECK_EQ_I(arb_scenario_set(sc, "cc.rat=10G", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s cc.rat: unknown key (did you mean arbor.cc.rate?)");
    CHECK_EQ_I(arb_scenario_set(sc, "fabrik.topology=star:4", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s fabrik.topology: unknown section [fabrik]");
    CHECK_EQ_I(arb_scenario_set(sc, "nosuch.key=1", err, sizeof err), ARB_EPARSE);
    CHECK_EQ_I(arb_scenario_set(sc, "novalue", err, sizeof err), ARB_EPARSE);
    /* values of every type */
    static const char *const good[] = {
        "size=1.5KiB", "size=3MB", "delay=0.5us", "link_rate=400Gbps",  "ecn=off",
        "pfc=yes",     "pmax=0.5", "stop=0",      "transport.kind=irn", "transport.kind=roce",
        "hosts=0-1,3", "rto=2ms"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (arb_scenario_set(sc, good[i], err, sizeof err) != 0)
            TESTKIT_REPORT("%s: %s", good[i], err);
    static const char *const bad[] = {"size=1.0001KiB", "size=12XB", "delay=5",  "link_rate=fast",
                                      "ecn=maybe",      "pmax=2",    "qps=0",    "workload.kind=x",
                                      "rto=0",          "mtu=70000", "window=-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (arb_scenario_set(sc, bad[i], err, sizeof err) != ARB_EPARSE)
            TESTKIT_REPORT("%s accepted", bad[i]);
    /* a time or "off" */
    CHECK_EQ_I(arb_scenario_set(sc, "arbor.cc.swift.fs_range=off", err, sizeof err), 0);
    CHECK_EQ_I(arb_scenario_set(sc, "arbor.cc.swift.fs_range=3us", err, sizeof err), 0);
    CHECK_EQ_I(arb_scenario_set(sc, "arbor.cc.swift.fs_range=of", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "-s arbor.cc.swift.fs_range: 'of' is not a time (a number with ps, ns, us, ms "
                   "or s, or off)");
    arb_scenario_free(sc);
}

/* A value an option set (arb_scenario_set_from) is named by that option
 * and its key, when set and when the run finds it wrong; "-s" and NULL are
 * arb_scenario_set's. */
TEST(option_origin)
{
    arb_scenario *sc = load(small);
    REQUIRE(sc != NULL);
    char err[512];
    CHECK_EQ_I(arb_scenario_set_from(sc, "run.pcap_snaplen=x", "--snaplen", err, sizeof err),
               ARB_EPARSE);
    CHECK_STR(err, "--snaplen (run.pcap_snaplen): 'x' is not a whole number");
    CHECK_EQ_I(arb_scenario_set_from(sc, "run.bogus=1", "--pcap", err, sizeof err), ARB_EPARSE);
    CHECK_STR(err, "--pcap run.bogus: unknown key in [run]");
    CHECK_EQ_I(arb_scenario_set_from(sc, "transport.mtu=abc", NULL, err, sizeof err), ARB_EPARSE);
    CHECK(strncmp(err, "-s transport.mtu: 'abc'", 23) == 0);
    CHECK_EQ_I(arb_scenario_set_from(sc, "run.pcap_ports=up:L1.0:0", "--pcap", err, sizeof err), 0);
    CHECK_EQ_I(arb_scenario_set_from(sc, "run.pcap=/nonexistent/x.pcap", "--pcap", err, sizeof err),
               0);
    CHECK_STR(arb_scenario_get(sc, "run", "pcap"), "/nonexistent/x.pcap");
    arb_scenario_result *r = NULL;
    CHECK(arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err) < 0);
    CHECK_STR(err, "--pcap (run.pcap_ports): 'up:L1.0:0': the node has 0 such ports");
    CHECK_EQ_I(arb_scenario_set_from(sc, "run.pcap_ports=all", "--pcap", err, sizeof err), 0);
    CHECK(arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err) < 0);
    CHECK_STR(err, "--pcap (run.pcap): /nonexistent/x.pcap: cannot create the file");
    CHECK_EQ_I(arb_scenario_set_from(sc, "run.pcap=/nonexistent/y.pcap", "-s", err, sizeof err), 0);
    CHECK(arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err) < 0);
    CHECK_STR(err, "-s run.pcap: /nonexistent/y.pcap: cannot create the file");
    /* where each value came from: a default, a file's line, an option */
    unsigned line = 99;
    CHECK(arb_scenario_origin(sc, "run", "seed", &line) == NULL);
    CHECK_EQ_I((int)line, 0);
    CHECK_STR(arb_scenario_origin(sc, "workload", "size", &line), "t.ini");
    CHECK_EQ_I((int)line, 5);
    CHECK_STR(arb_scenario_origin(sc, "run", "pcap_ports", &line), "--pcap");
    CHECK_EQ_I((int)line, 0);
    CHECK_STR(arb_scenario_origin(sc, "run", "pcap", NULL), "-s");
    CHECK_EQ_I(arb_scenario_set_from(sc, "seed=3", "--seed", err, sizeof err), 0);
    CHECK_STR(arb_scenario_origin(sc, "run", "seed", &line), "--seed");
    CHECK(arb_scenario_origin(sc, "run", "nope", &line) == NULL);
    arb_scenario_free(sc);
}

TEST(file_errors)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[fabric]\ntopology = star:4\nbogus = 1\n",
         "t.ini:3: fabric.bogus: unknown key in [fabric]"},
        {"[fabric]\ntopolgy = star:4\n",
         "t.ini:2: fabric.topolgy: unknown key in [fabric] (did you mean fabric.topology?)"},
        {"[fabrik]\ntopology = star:4\n", "t.ini:1: unknown section [fabrik]"},
        {"; comment\n[fabric]\ndelay = 5\n", "t.ini:3: fabric.delay: '5' is not a time"},
        {"topology = star:4\n", "t.ini:1: topology: a key before any [section]"},
        {"[fabric]\nthis line has no equals\n", "t.ini:2: malformed line"},
        {"[switch]\necn = on\nkmin = 1\n  2\n", "t.ini:4: switch.kmin: a continuation line"},
        {"[empty]\n", "t.ini:1: unknown section [empty]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        arb_scenario *sc;
        char err[512] = "";
        REQUIRE_EQ_I(arb_scenario_new(&sc), 0);
        int rc = arb_scenario_load_string(sc, cases[i].text, "t.ini", NULL, err, sizeof err);
        CHECK_EQ_I(rc, ARB_EPARSE);
        if (strncmp(err, cases[i].want, strlen(cases[i].want)) != 0)
            TESTKIT_REPORT("case %zu: got '%s', want '%s...'", i, err, cases[i].want);
        arb_scenario_free(sc);
    }
    arb_scenario *sc;
    char err[512];
    REQUIRE_EQ_I(arb_scenario_new(&sc), 0);
    CHECK_EQ_I(arb_scenario_load(sc, "/nonexistent/s.ini", err, sizeof err), ARB_EIO);
    CHECK(strncmp(err, "/nonexistent/s.ini: cannot open", 31) == 0);
    /* a list may continue on indented lines */
    REQUIRE_EQ_I(arb_scenario_load_string(sc, "[workload]\nhosts = 0-1\n  3\n", "t.ini", NULL, err,
                                          sizeof err),
                 0);
    CHECK_STR(arb_scenario_get(sc, "workload", "hosts"), "0-1,3");
    /* ... and a line may end with the ',' before the next one's items */
    REQUIRE_EQ_I(arb_scenario_load_string(sc, "[arbor]\njob_start = 0us, \n  5us,\n  9us\n",
                                          "t.ini", NULL, err, sizeof err),
                 0);
    CHECK_STR(arb_scenario_get(sc, "arbor", "job_start"), "0us,5us,9us");
    /* but not the last: a ',' with nothing after it, named at its line */
    static const char *const dangling[] = {"[arbor]\njob_start = 0us,\n",
                                           "[arbor]\njob_start = 0us,\n[run]\nstop = 1ms\n",
                                           "[arbor]\njob_start = 0us,\njob_size = 1MiB\n"};
    for (size_t i = 0; i < sizeof dangling / sizeof *dangling; i++) {
        CHECK_EQ_I(arb_scenario_load_string(sc, dangling[i], "t.ini", NULL, err, sizeof err),
                   ARB_EPARSE);
        CHECK_STR(err, "t.ini:2: arbor.job_start: the list ends with ',' and no continuation line "
                       "(indented) follows");
    }
    arb_scenario_free(sc);
}

/* What only the run can check still names file, line and key. */
TEST(run_errors)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[fabric]\ntopology = pgft:2;4\n", "t.ini:2: fabric.topology: "},
        {"[fabric]\ntopology = star:4\n[routing]\nscheme = nope\n", "t.ini:4: routing.scheme: "},
        {"[fabric]\ntopology = star:4\n[workload]\nhosts = 0-9\n", "t.ini:4: workload.hosts: "},
        {"[fabric]\ntopology = star:4\n[workload]\nkind = htsim\nfile = /nonexistent.cm\n",
         "t.ini:5: workload.file: /nonexistent.cm: cannot open"},
        {"[fabric]\ntopology = star:4\n[workload]\nkind = trace\n", "workload.file: "},
        {"[fabric]\ntopology = star:4\n[switch]\nkmin = 500KB\n", "switch.kmax: kmax 400000"},
        {"[fabric]\ntopology = star:4\n[workload]\nkind = incast\nsenders = 4\n",
         "t.ini:5: workload.senders: "},
        /* star:4's loop: 4 hops of 1 us and a frame each, about 6.6 us */
        {"[fabric]\ntopology = star:4\n[workload]\nkind = arbor\n[arbor]\ntimeout = 5us\n",
         "t.ini:6: arbor.timeout: below the fabric's loop ("},
        {"[fabric]\ntopology = star:4\n[workload]\nkind = arbor\n[arbor]\nretry = 5us\n",
         "t.ini:6: arbor.retry: below the fabric's loop ("},
        {"[fabric]\ntopology = star:4\n[workload]\nkind = arbor\n[arbor]\ncc = swift\n"
         "cc.base_rtt = 1us\n",
         "t.ini:7: arbor.cc.base_rtt: below the fabric's loop"},
        {"[fabric]\ntopology = star:4\n[workload]\nkind = arbor\n[arbor]\ncc = swift\n"
         "cc.base_rtt = 1s\n",
         "t.ini:7: arbor.cc.base_rtt: Swift's base target, 1.5 x it, would be above 1 s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        arb_scenario *sc = load(cases[i].text);
        CHECK(sc != NULL);
        if (!sc) continue;
        arb_scenario_result *r = NULL;
        char err[512] = "";
        int rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
        CHECK(rc < 0);
        CHECK(r == NULL);
        if (strncmp(err, cases[i].want, strlen(cases[i].want)) != 0)
            TESTKIT_REPORT("case %zu: got '%s', want '%s...'", i, err, cases[i].want);
        arb_scenario_free(sc);
    }
}

/* The util series of a run sampled every `every`: its rows (time, first
 * class) into t/u, up to max; the row count. */
static size_t util_rows(const char *every, double *t, double *u, size_t max, uint64_t *samples)
{
    arb_scenario *sc = load(small);
    char err[512], kv[64];
    snprintf(kv, sizeof kv, "run.sample=%s", every);
    size_t n = 0;
    if (!sc || arb_scenario_set(sc, kv, err, sizeof err) != 0 ||
        arb_scenario_set(sc, "workload.size=64MiB", err, sizeof err) != 0)
        goto out;
    arb_scenario_result *r = NULL;
    if (arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err) != 0) goto out;
    char *csv = arb_scenario_csv(r, ARB_SCN_CSV_UTIL);
    char *j = arb_scenario_json(r, NULL);
    const char *sp = j ? strstr(j, "\"samples\":") : NULL;
    const char *last = sp;
    while (last && (sp = strstr(last + 1, "\"samples\":")))
        last = sp; /* the run's count is the last "samples" */
    *samples = last ? strtoull(last + 10, NULL, 10) : 0;
    const char *line = csv ? strchr(csv, '\n') : NULL;
    while (line && line[1] && n < max) {
        char *end;
        t[n] = strtod(line + 1, &end);
        u[n] = strtod(end + 1, NULL);
        n++;
        line = strchr(line + 1, '\n');
    }
    free(csv);
    free(j);
    arb_scenario_result_free(r);
out:
    arb_scenario_free(sc);
    return n;
}

/* A series longer than its row limit merges adjacent rows: memory stays
 * bounded, and merged rows keep the utilisation weighted by their
 * intervals, so the bytes the series accounts for (the sum of utilisation
 * x interval) are those of a run sampled 50 times less often, which
 * merges nothing. */
TEST(long_series_merge_rows)
{
    enum { MAXR = 40000 };
    static double t1[MAXR], u1[MAXR], t2[MAXR], u2[MAXR];
    uint64_t s1 = 0, s2 = 0;
    size_t n1 = util_rows("100ns", t1, u1, MAXR, &s1);
    size_t n2 = util_rows("5us", t2, u2, MAXR, &s2);
    REQUIRE(s1 > 2 * 16384); /* the run is long enough to merge rows */
    CHECK(n1 <= 16384 + 1 && n1 >= 16384 / 2);
    CHECK_EQ_U(n2, s2); /* no merging: a row a sample */
    double a1 = 0, a2 = 0;
    size_t bad = 0;
    for (size_t i = 0; i < n1; i++) {
        a1 += u1[i] * (t1[i] - (i ? t1[i - 1] : 0));
        if (i && !(t1[i] > t1[i - 1])) bad++;
    }
    for (size_t i = 0; i < n2; i++)
        a2 += u2[i] * (t2[i] - (i ? t2[i - 1] : 0));
    CHECK_EQ_U(bad, 0);
    CHECK(a2 > 0);
    if (fabs(a1 - a2) > 1e-5 * a2) TESTKIT_REPORT("busy time %.6f us against %.6f us", a1, a2);
}

TEST(run_and_determinism)
{
    arb_scenario *sc = load(small);
    REQUIRE(sc != NULL);
    char *a = run_json(sc);
    char *b = run_json(sc);
    CHECK(a && b);
    if (a && b) CHECK_STR(a, b);
    if (a) {
        /* ring AllReduce over 4 ranks: 2 (N - 1) = 6 steps, a message per
         * rank each: 24 flows */
        static const char *const keys[] = {"\"sim_time_us\":",
                                           "\"events\":",
                                           "\"packet_hops\":",
                                           "\"flows\":{\"count\":24",
                                           "\"cct_us\":",
                                           "\"algbw_gbps\":",
                                           "\"busbw_gbps\":",
                                           "\"drops\":0",
                                           "\"ecn_marks\":",
                                           "\"pfc\":{",
                                           "\"ooo_pkts\":",
                                           "\"retx_bytes\":",
                                           "\"reorder_peak_bytes\":",
                                           "\"queues\":{\"tier0_up\":",
                                           "\"utilisation\":{",
                                           "\"completed\":true"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (!strstr(a, keys[i])) TESTKIT_REPORT("no %s in the JSON", keys[i]);
        CHECK(strstr(a, "\"host\"") == NULL);
    }
    /* an override changes the result */
    char err[512];
    CHECK_EQ_I(arb_scenario_set(sc, "workload.size=128KiB", err, sizeof err), 0);
    char *c = run_json(sc);
    CHECK(c && a && strcmp(a, c) != 0);
    /* the CSV series */
    arb_scenario_result *r = NULL;
    REQUIRE_EQ_I(arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err), 0);
    char *u = arb_scenario_csv(r, ARB_SCN_CSV_UTIL);
    char *q = arb_scenario_csv(r, ARB_SCN_CSV_QUEUE);
    char *f = arb_scenario_csv(r, ARB_SCN_CSV_FLOWS);
    CHECK(u && strncmp(u, "time_us,tier0_up,tier0_down\n5.000000,", 37) == 0);
    CHECK(q && strncmp(q, "time_us,tier0_up_mean,tier0_up_max,", 35) == 0);
    static const char flows_head[] =
        "id,src,dst,bytes,start_us,finish_us,fct_us,src_ip,dst_ip,proto,"
        "sport,dport,qp,retx_bytes,ideal_us,slowdown,gave_up_us\n0,0,1,";
    CHECK(f && strncmp(f, flows_head, sizeof flows_head - 1) == 0);
    CHECK(arb_scenario_csv(r, (arb_scenario_csv_kind)7) == NULL);
    arb_scenario_host h = {1.5, 20.25};
    char *hj = arb_scenario_json(r, &h);
    CHECK(hj && strstr(hj, "\"host\":{\"wall_s\":1.500,\"peak_rss_mb\":20.2"));
    const arb_workload_result *wr = arb_scenario_result_workload(r);
    CHECK(wr->done && wr->ranks == 4);
    CHECK(arb_scenario_result_stats(r)->flows_done == 24);
    free(hj);
    free(u);
    free(q);
    free(f);
    arb_scenario_result_free(r);
    free(a);
    free(b);
    free(c);
    arb_scenario_free(sc);
}

/* Every workload kind runs on a small fabric; trace files resolve against
 * the scenario file's directory. */
TEST(workload_kinds)
{
    char dir[] = "/tmp/arbor-scn-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/flows.csv", dir);
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs("src,dst,bytes,start_us\n0,5,20000,0\n3,1,20000,2\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/m.cm", dir);
    f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs("Nodes 8\nConnections 2\n0->7 id 1 start 0 size 9000\n7->0 id 2 start 1 size 9000\n", f);
    fclose(f);
    static const char *const kinds[] = {
        "kind = perm\nsize = 20KB",
        "kind = shift\nshift = 3\nsize = 20KB\nqps = 3",
        "kind = all2all\nsize = 8KB",
        "kind = pattern\ntraffic = bisect:4\nsize = 8KB",
        "kind = incast\nsenders = 6\nreceiver = 7\nsize = 20KB",
        "kind = ring_allreduce\nhosts = 7,0-2\nsize = 64KiB\nqps = 2\nqp_mode = rr\nchunk = 4KiB",
        "kind = trace\nfile = flows.csv",
        "kind = htsim\nfile = m.cm",
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "[fabric]\ntopology = leafspine:2,4,2\n[workload]\n%s\n",
                 kinds[i]);
        snprintf(path, sizeof path, "%s/s.ini", dir);
        f = fopen(path, "w");
        REQUIRE(f != NULL);
        fputs(text, f);
        fclose(f);
        arb_scenario *sc;
        char err[512];
        REQUIRE_EQ_I(arb_scenario_new(&sc), 0);
        REQUIRE_EQ_I(arb_scenario_load(sc, path, err, sizeof err), 0);
        arb_scenario_result *r = NULL;
        int rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
        if (rc < 0) TESTKIT_REPORT("%s: %s", kinds[i], err);
        if (r) {
            const arb_workload_result *wr = arb_scenario_result_workload(r);
            if (!wr->done) TESTKIT_REPORT("%s: not done", kinds[i]);
            const arb_sim_stats *st = arb_scenario_result_stats(r);
            /* conservation: every payload byte sent was delivered, resent or dropped */
            CHECK_EQ_U(st->payload_delivered, wr->bytes_planned);
            CHECK_EQ_U(st->flows_done, wr->flows_planned);
        }
        arb_scenario_result_free(r);
        arb_scenario_free(sc);
    }
    snprintf(path, sizeof path, "%s/flows.csv", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/m.cm", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/s.ini", dir);
    unlink(path);
    rmdir(dir);
}

/* run.stop cuts a run short and says so. */
TEST(stop)
{
    arb_scenario *sc = load(small);
    REQUIRE(sc != NULL);
    char err[512];
    CHECK_EQ_I(arb_scenario_set(sc, "run.stop=3us", err, sizeof err), 0);
    char *j = run_json(sc);
    CHECK(j && strstr(j, "\"completed\":false,\"stopped\":true"));
    CHECK(j && strstr(j, "\"cct_us\":null"));
    free(j);
    arb_scenario_free(sc);
}

/*
 * A flow whose receiver's only link failed before the run (h1 to h0 over
 * star:2, two packets) never hears back: with rto 100 us and retry_limit
 * 2 its sender gives up at the third timeout, 300 us after it started at
 * 0, and the run, with no stop time, ends there, failed, naming the flow,
 * its hosts and QP, the limit and the failure in force; the flows CSV has
 * the time, the JSON the count.
 */
TEST(a_flow_that_gives_up_fails_the_run)
{
    arb_scenario *sc = load("[fabric]\ntopology = star:2\nfail = up:h0:0\n"
                            "[transport]\nrto = 100us\nretry_limit = 2\n"
                            "[workload]\nkind = incast\nsenders = 1\nreceiver = 0\nsize = 8KiB\n"
                            "[run]\nstop = 0\n");
    REQUIRE(sc != NULL);
    arb_scenario_result *r = NULL;
    char err[512];
    REQUIRE_EQ_I(arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err), 0);
    const char *why = NULL;
    CHECK_EQ_I(arb_scenario_result_status(r, &why), ARB_SCN_FAILED);
    CHECK_EQ_U(arb_scenario_result_stats(r)->flows_gave_up, 1);
    CHECK_EQ_U(arb_scenario_result_time(r), 300 * ARB_PS_PER_US);
    char *f = arb_scenario_csv(r, ARB_SCN_CSV_FLOWS);
    REQUIRE(f != NULL);
    const char *row = strchr(f, '\n') + 1;
    unsigned qp = 0;
    const char *p = row;
    for (int col = 0; col < 12; col++) /* to the 13th column, qp */
        p = strchr(p, ',') + 1;
    CHECK(sscanf(p, "%u", &qp) == 1);
    size_t len = strlen(row);
    CHECK(len > 12 && strcmp(row + len - 12, ",300.000000\n") == 0);
    char want[256];
    snprintf(want, sizeof want,
             "flow 0 (h1 -> h0, QP %u) gave up at 300.000 us: 3 retransmission timeouts in a "
             "row without progress, past transport.retry_limit = 2; the fabric: fabric.fail "
             "up:h0:0",
             qp);
    CHECK(why && strncmp(why, want, strlen(want)) == 0);
    if (why && strncmp(why, want, strlen(want)) != 0) printf("  got: %s\n  want: %s\n", why, want);
    char *j = arb_scenario_json(r, NULL);
    CHECK(j && strstr(j, "\"completed\":false,\"stopped\":false,\"status\":\"failed\","
                         "\"failure\":\"flow 0 (h1 -> h0, QP "));
    CHECK(j && strstr(j, "\"flows\":{\"count\":1,\"done\":0,\"gave_up\":1,"));
    free(j);
    free(f);
    arb_scenario_result_free(r);
    arb_scenario_free(sc);
}

static double jnum(const cJSON *o, const char *name)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

/* arbor.background runs transport flows beside the collective; run.watch
 * reports a port's parties. Checked against what a port cannot break: the
 * tap counts exactly the bytes the port sent, the parties' rates while
 * together fit in the link, Jain's index of n rates is in [1/n, 1]. */
TEST(background_and_watch)
{
    char dir[] = "/tmp/arbor-bg-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char csv[256], ini[256];
    snprintf(csv, sizeof csv, "%s/bulk.csv", dir);
    snprintf(ini, sizeof ini, "%s/mix.ini", dir);
    FILE *f = fopen(csv, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("src,dst,bytes,start_us\n3,0,1048576,0\n", f);
    fclose(f);
    f = fopen(ini, "w");
    fputs("[fabric]\ntopology = star:4\n[transport]\nkind = irn\nwindow = 15\n"
          "[workload]\nkind = arbor\nsize = 1MiB\nranks = 3\n"
          "[arbor]\nbackground = bulk.csv\n[run]\nsample = 2us\nwatch = host:h0\n",
          f);
    fclose(f);
    arb_scenario *sc;
    char err[512];
    arb_scenario_new(&sc);
    CHECK_EQ_I(arb_scenario_load(sc, ini, err, sizeof err), 0);
    char *js = run_json(sc);
    cJSON *j = js ? cJSON_Parse(js) : NULL;
    CHECK(j != NULL);
    if (j) {
        CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "completed")));
        const cJSON *bg = cJSON_GetObjectItemCaseSensitive(j, "background");
        CHECK(jnum(bg, "flows") == 1 && jnum(bg, "done") == 1 && jnum(bg, "bytes") == 1048576);
        /* every byte of the flow was delivered once */
        CHECK(jnum(cJSON_GetObjectItemCaseSensitive(j, "bytes"), "payload_delivered") == 1048576);
        const cJSON *ar = cJSON_GetObjectItemCaseSensitive(j, "arbor");
        CHECK(jnum(cJSON_GetObjectItemCaseSensitive(ar, "invariants"), "errors") == 0);
        CHECK(jnum(ar, "ranks_done") == 3);
        const cJSON *watch = cJSON_GetObjectItemCaseSensitive(j, "watch");
        CHECK(cJSON_GetArraySize(watch) == 2);
        const cJSON *w;
        int n = 0;
        cJSON_ArrayForEach(w, watch)
        {
            const cJSON *parties = cJSON_GetObjectItemCaseSensitive(w, "parties");
            const cJSON *ov = cJSON_GetObjectItemCaseSensitive(w, "overlap");
            const cJSON *p;
            double sum = 0;
            int np = 0;
            cJSON_ArrayForEach(p, parties)
            {
                sum += jnum(p, "bytes");
                np++;
            }
            CHECK(sum == jnum(w, "bytes"));
            CHECK(jnum(w, "utilisation") >= 0 && jnum(w, "utilisation") <= 1);
            CHECK(jnum(ov, "gbps") <= jnum(w, "rate_gbps") * (1 + 1e-9));
            CHECK(jnum(ov, "jain") >= 1.0 / np - 1e-9 && jnum(ov, "jain") <= 1 + 1e-9);
            CHECK(jnum(cJSON_GetObjectItemCaseSensitive(w, "queue"), "p99_bytes") <=
                  jnum(cJSON_GetObjectItemCaseSensitive(w, "queue"), "max_bytes"));
            /* the window ends when the first party is done */
            double first = jnum(ar, "finish_us") < jnum(bg, "finish_us") ? jnum(ar, "finish_us")
                                                                         : jnum(bg, "finish_us");
            CHECK(jnum(ov, "to_us") == first && jnum(ov, "from_us") == 0);
            if (n++ == 1) { /* the switch's port down to h0 carries both */
                CHECK_EQ_I(np, 2);
                CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(w, "port")->valuestring,
                             "L1.0->h0") == 0);
            }
        }
        cJSON_Delete(j);
    }
    free(js);
    /* the same without the two keys: no background, no watch */
    CHECK_EQ_I(arb_scenario_set(sc, "arbor.background=", err, sizeof err), 0);
    CHECK_EQ_I(arb_scenario_set(sc, "run.watch=", err, sizeof err), 0);
    js = run_json(sc);
    CHECK(js && !strstr(js, "\"background\"") && !strstr(js, "\"watch\""));
    free(js);
    arb_scenario_free(sc);
    unlink(csv);
    unlink(ini);
    rmdir(dir);
}

/* Several jobs: each job's JCT (cct_us) is at least its bytes over its
 * bottleneck -- (n-1)/n of its buffer up each host link at 100 Gb/s, 80 ps a
 * byte -- and starts when arbor.job_start says; Jain's index of the
 * goodputs is in [1/n, 1], and 1 for identical jobs in symmetric places
 * (one per leaf of a leaf-spine, starting together); the makespan spans
 * the first start to the last finish and carries every job's bytes. */
/* The lines a run's logger got, one after the other. */
struct log_lines {
    char text[1024];
    int n;
};

static void log_line(void *user, arb_log_level level, const char *msg)
{
    struct log_lines *l = user;
    size_t used = strlen(l->text);
    snprintf(l->text + used, sizeof l->text - used, "%s%d %s", l->n ? "\n" : "", (int)level, msg);
    l->n++;
}

/* More subchannels than the fabric has distinct trees for the group (a
 * star's one switch): a warning through the scenario's logger, naming the
 * key where it was set; up to them, or without a logger, nothing. */
TEST(subchannels_warning)
{
    static const char *text = "[fabric]\ntopology = star:4\n[workload]\nkind = arbor\n"
                              "size = 64KiB\n[arbor]\nsubchannels = 3\n";
    arb_scenario *sc = load(text);
    REQUIRE(sc != NULL);
    struct log_lines l = {"", 0};
    arb_logger lg = {log_line, &l, ARB_LOG_DEBUG};
    arb_scenario_set_logger(sc, &lg);
    char err[512];
    arb_scenario_result *r = NULL;
    REQUIRE_EQ_I(arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err), 0);
    arb_scenario_result_free(r);
    CHECK_EQ_I(l.n, 1);
    CHECK_STR(l.text, "1 t.ini:7: arbor.subchannels: 3 subchannels, but the fabric offers the "
                      "group 1 distinct tree a channel (1 candidate root): subchannel s takes "
                      "the links of subchannel s - 1");
    l.text[0] = '\0';
    l.n = 0;
    CHECK_EQ_I(arb_scenario_set(sc, "arbor.subchannels=1", err, sizeof err), 0);
    REQUIRE_EQ_I(arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err), 0);
    arb_scenario_result_free(r);
    CHECK_EQ_I(l.n, 0);
    arb_scenario_set_logger(sc, NULL); /* none: the run says nothing, and runs */
    CHECK_EQ_I(arb_scenario_set(sc, "arbor.subchannels=3", err, sizeof err), 0);
    REQUIRE_EQ_I(arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err), 0);
    arb_scenario_result_free(r);
    CHECK_EQ_I(l.n, 0);
    arb_scenario_free(sc);
}

TEST(jobs_fairness)
{
    static const char *stagger = "[fabric]\ntopology = leafspine:4,4,2\n"
                                 "[workload]\nkind = arbor\nsize = 256KiB\n"
                                 "hosts = 0,4,8,12,1,5,9,13,2,6,10,14\n"
                                 "[arbor]\njobs = 3\njob_ranks = 4,6,2\n"
                                 "job_start = 0,15us,40us\njob_size = 512KiB,256KiB,1MiB\n"
                                 "[run]\nsample = 0\n";
    static const double bytes[] = {512 * 1024, 256 * 1024, 1024 * 1024};
    static const double ranks[] = {4, 6, 2}, start_us[] = {0, 15, 40};
    for (int pass = 0; pass < 2; pass++) {
        arb_scenario *sc = load(pass == 0 ? stagger
                                          : "[fabric]\ntopology = leafspine:4,4,2\n"
                                            "[workload]\nkind = arbor\nsize = 256KiB\n"
                                            "[arbor]\njobs = 4\n[run]\nsample = 0\n");
        REQUIRE(sc != NULL);
        char *js = run_json(sc);
        cJSON *j = js ? cJSON_Parse(js) : NULL;
        REQUIRE(j != NULL);
        const cJSON *ar = cJSON_GetObjectItemCaseSensitive(j, "arbor");
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(ar, "jobs");
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(ar, "fairness");
        int n = cJSON_GetArraySize(jobs);
        CHECK_EQ_I(n, pass == 0 ? 3 : 4);
        double first = INFINITY, last = 0, total = 0;
        const cJSON *e;
        int k = 0;
        cJSON_ArrayForEach(e, jobs)
        {
            CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "done")));
            CHECK(jnum(e, "invariant_errors") == 0);
            double b = jnum(e, "bytes"), r = jnum(e, "ranks");
            if (pass == 0) {
                CHECK(b == bytes[k] && r == ranks[k]);
                CHECK(jnum(e, "start_us") == start_us[k]);
            }
            CHECK(jnum(e, "cct_us") * 1e6 >= b * (r - 1) / r * 80);
            CHECK(fabs(jnum(e, "cct_us") - (jnum(e, "finish_us") - jnum(e, "start_us"))) < 1e-6);
            if (jnum(e, "start_us") < first) first = jnum(e, "start_us");
            if (jnum(e, "finish_us") > last) last = jnum(e, "finish_us");
            total += b;
            k++;
        }
        double jain = jnum(f, "jain");
        CHECK(jain >= 1.0 / n - 1e-9 && jain <= 1 + 1e-9);
        if (pass == 1) CHECK(jain == 1);
        if (pass == 0) CHECK(jain < 1); /* a 2-rank job and a 6-rank job do not run alike */
        CHECK(fabs(jnum(f, "makespan_us") - (last - first)) < 1e-6);
        CHECK(fabs(jnum(f, "makespan_gbps") - total * 8e-3 / (last - first)) < 1e-3);
        CHECK(jnum(f, "goodput_min_gbps") <= jnum(f, "goodput_max_gbps"));
        cJSON_Delete(j);
        free(js);
        arb_scenario_free(sc);
    }
}

int main(void)
{
    RUN(defaults);
    RUN(overrides);
    RUN(option_origin);
    RUN(file_errors);
    RUN(run_errors);
    RUN(run_and_determinism);
    RUN(long_series_merge_rows);
    RUN(workload_kinds);
    RUN(stop);
    RUN(a_flow_that_gives_up_fails_the_run);
    RUN(background_and_watch);
    RUN(jobs_fairness);
    RUN(subchannels_warning);
    return testkit_done();
}
