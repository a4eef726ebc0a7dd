/* Scenarios: defaults, files, overrides, error text (file:line: key),
 * relative paths, and byte-identical JSON from identical runs. */
#include "arbor/scenario.h"
#include "testkit.h"

#include <stdio.h>
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
    arb_scenario_free(sc);
}

TEST(file_errors)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[fabric]\ntopology = star:4\nbogus = 1\n",
         "t.ini:3: fabric.bogus: unknown key in [fabric]"},
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
        "sport,dport,qp,retx_bytes,ideal_us,slowdown\n0,0,1,";
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

int main(void)
{
    RUN(defaults);
    RUN(overrides);
    RUN(file_errors);
    RUN(run_errors);
    RUN(run_and_determinism);
    RUN(workload_kinds);
    RUN(stop);
    return testkit_done();
}
