/* Sweeps: iteration variables, their order, ranges, quoting, references,
 * replications, and error messages that name the line and the variable. */
#include "arbor/sweep.h"
#include "testkit.h"

#include <stdlib.h>
#include <string.h>

static arb_sweep *parse(const char *text)
{
    arb_sweep *sw = NULL;
    char err[512];
    if (arb_sweep_parse(text, "t.ini", NULL, &sw, err, sizeof err) < 0)
        printf("  parse: %s\n", err);
    return sw;
}

/* The error text of a parse that must fail with ARB_EPARSE. */
static int parse_err(const char *text, char *err, size_t len)
{
    arb_sweep *sw = NULL;
    int rc = arb_sweep_parse(text, "t.ini", NULL, &sw, err, len);
    arb_sweep_free(sw);
    return rc;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

TEST(plain_file_is_one_point)
{
    const char *t = "[fabric]\ntopology = star:4\n[workload]\nsize = 1MiB\n";
    arb_sweep *sw = parse(t);
    REQUIRE(sw);
    CHECK_EQ_U(arb_sweep_n_points(sw), 1);
    CHECK_EQ_U(arb_sweep_n_reps(sw), 1);
    CHECK_EQ_U(arb_sweep_n_vars(sw), 0);
    char *p = arb_sweep_point_text(sw, 0);
    REQUIRE(p);
    CHECK_STR(p, t);
    free(p);
    CHECK(arb_sweep_point_text(sw, 1) == NULL);
    arb_sweep_free(sw);
}

TEST(points_are_the_product_first_variable_slowest)
{
    arb_sweep *sw = parse("[fabric]\ntopology = ${topo=\"star:4\",\"leafspine:2,2,2\"}\n"
                          "[workload]\nsize = ${1,4,16}MiB\n");
    REQUIRE(sw);
    REQUIRE_EQ_U(arb_sweep_n_vars(sw), 2);
    CHECK_STR(arb_sweep_var_name(sw, 0), "topo");
    CHECK_STR(arb_sweep_var_name(sw, 1), "workload.size"); /* unnamed: its key */
    CHECK_EQ_U(arb_sweep_var_n_values(sw, 0), 2);
    CHECK_EQ_U(arb_sweep_var_n_values(sw, 1), 3);
    REQUIRE_EQ_U(arb_sweep_n_points(sw), 6);
    /* point p = i_topo * 3 + i_size */
    const char *topo[] = {"star:4", "leafspine:2,2,2"}, *size[] = {"1", "4", "16"};
    for (size_t p = 0; p < 6; p++) {
        CHECK_STR(arb_sweep_value(sw, p, 0), topo[p / 3]);
        CHECK_STR(arb_sweep_value(sw, p, 1), size[p % 3]);
    }
    char *t = arb_sweep_point_text(sw, 4);
    REQUIRE(t);
    CHECK_STR(t, "[fabric]\ntopology = leafspine:2,2,2\n[workload]\nsize = 4MiB\n");
    free(t);
    CHECK(arb_sweep_value(sw, 6, 0) == NULL);
    arb_sweep_free(sw);
}

TEST(ranges_are_exact_decimals)
{
    arb_sweep *sw = parse("[fabric]\nloss = ${loss=0..0.002 step 0.001}\n"
                          "[workload]\nsize = ${n=1.5..3 step 0.5, 8}KiB\n"
                          "[run]\nseed = ${s=1..3}\n");
    REQUIRE(sw);
    REQUIRE_EQ_U(arb_sweep_var_n_values(sw, 0), 3);
    REQUIRE_EQ_U(arb_sweep_var_n_values(sw, 1), 5);
    REQUIRE_EQ_U(arb_sweep_var_n_values(sw, 2), 3);
    const char *loss[] = {"0", "0.001", "0.002"}, *n[] = {"1.5", "2", "2.5", "3", "8"};
    size_t stride0 = 5 * 3, stride1 = 3;
    for (size_t i = 0; i < 3; i++)
        CHECK_STR(arb_sweep_value(sw, i * stride0, 0), loss[i]);
    for (size_t i = 0; i < 5; i++)
        CHECK_STR(arb_sweep_value(sw, i * stride1, 1), n[i]);
    for (size_t i = 0; i < 3; i++) {
        char want[4] = {(char)('1' + i), 0};
        CHECK_STR(arb_sweep_value(sw, i, 2), want);
    }
    CHECK_EQ_U(arb_sweep_n_points(sw), 45);
    arb_sweep_free(sw);
    /* a step that does not land on the end stops below it */
    sw = parse("[workload]\nsize = ${1..10 step 4}\n");
    REQUIRE(sw);
    REQUIRE_EQ_U(arb_sweep_var_n_values(sw, 0), 3); /* 1, 5, 9 */
    CHECK_STR(arb_sweep_value(sw, 2, 0), "9");
    arb_sweep_free(sw);
}

TEST(references_take_the_declared_value)
{
    /* the reference comes before the declaration: it is the same variable */
    arb_sweep *sw = parse("[arbor]\npayload = ${x}KiB\n[workload]\nsize = ${x=1,2}MiB\n");
    REQUIRE(sw);
    CHECK_EQ_U(arb_sweep_n_vars(sw), 1);
    REQUIRE_EQ_U(arb_sweep_n_points(sw), 2);
    char *t = arb_sweep_point_text(sw, 1);
    REQUIRE(t);
    CHECK_STR(t, "[arbor]\npayload = 2KiB\n[workload]\nsize = 2MiB\n");
    free(t);
    arb_sweep_free(sw);
}

TEST(quoting_and_comments)
{
    arb_sweep *sw = parse("; ${not=1,2} in a comment\n[routing]\n"
                          "steer = ${\"S0 dst=h1 up=0\", \"a \\\"q\\\" b\", \"\"} ; ${no=3,4}\n");
    REQUIRE(sw);
    REQUIRE_EQ_U(arb_sweep_n_vars(sw), 1);
    REQUIRE_EQ_U(arb_sweep_n_points(sw), 3);
    CHECK_STR(arb_sweep_value(sw, 0, 0), "S0 dst=h1 up=0");
    CHECK_STR(arb_sweep_value(sw, 1, 0), "a \"q\" b");
    CHECK_STR(arb_sweep_value(sw, 2, 0), "");
    arb_sweep_free(sw);
}

TEST(sweep_section_is_blanked_line_for_line)
{
    const char *t = "[sweep]\nrepeat = 3\n[workload]\nsize = ${1,2}MiB\n";
    arb_sweep *sw = parse(t);
    REQUIRE(sw);
    CHECK_EQ_U(arb_sweep_n_reps(sw), 3);
    char *p = arb_sweep_point_text(sw, 0);
    REQUIRE(p);
    CHECK_EQ_U(count_lines(p), count_lines(t));
    CHECK_STR(p, "\n\n[workload]\nsize = 1MiB\n");
    free(p);
    arb_sweep_free(sw);
    sw = parse("[workload]\nsize = 1MiB\n[sweep]\nseeds = 7..10 ; four\n");
    REQUIRE(sw);
    CHECK_EQ_U(arb_sweep_n_reps(sw), 4);
    arb_sweep_free(sw);
}

static uint64_t seed_of(const arb_scenario *sc)
{
    return strtoull(arb_scenario_get(sc, "run", "seed"), NULL, 0);
}

TEST(replications_set_the_seed)
{
    char err[512];
    arb_sweep *sw = parse("[run]\nseed = ${5,100}\n[sweep]\nrepeat = 3\n");
    REQUIRE(sw);
    for (size_t p = 0; p < 2; p++)
        for (unsigned r = 0; r < 3; r++) {
            arb_scenario *sc;
            REQUIRE(arb_scenario_new(&sc) == 0);
            CHECK(arb_sweep_point_load(sw, p, sc, err, sizeof err) == 0);
            CHECK(arb_sweep_replicate(sw, r, sc, err, sizeof err) == 0);
            CHECK_EQ_U(seed_of(sc), (p ? 100u : 5u) + r);
            arb_scenario_free(sc);
        }
    arb_scenario *sc;
    REQUIRE(arb_scenario_new(&sc) == 0);
    CHECK(arb_sweep_replicate(sw, 3, sc, err, sizeof err) == ARB_EINVAL);
    arb_scenario_free(sc);
    arb_sweep_free(sw);
    /* seeds = A..B: the file's run.seed does not matter */
    sw = parse("[run]\nseed = 99\n[sweep]\nseeds = 10..11\n");
    REQUIRE(sw);
    REQUIRE(arb_scenario_new(&sc) == 0);
    CHECK(arb_sweep_point_load(sw, 0, sc, err, sizeof err) == 0);
    CHECK(arb_sweep_replicate(sw, 1, sc, err, sizeof err) == 0);
    CHECK_EQ_U(seed_of(sc), 11);
    arb_scenario_free(sc);
    arb_sweep_free(sw);
}

TEST(a_bad_value_names_line_point_and_variable)
{
    arb_sweep *sw = parse("[fabric]\ntopology = ${t=\"star:4\",\"star:8\"}\n"
                          "[workload]\n\nsize = ${size=1MiB,lots}\n");
    REQUIRE(sw);
    REQUIRE_EQ_U(arb_sweep_n_points(sw), 4);
    char err[512];
    arb_scenario *sc;
    REQUIRE(arb_scenario_new(&sc) == 0);
    CHECK(arb_sweep_point_load(sw, 2, sc, err, sizeof err) == 0);
    CHECK_EQ_I(arb_sweep_point_load(sw, 3, sc, err, sizeof err), ARB_EPARSE);
    CHECK(strncmp(err, "t.ini:5: workload.size: 'lots' is not a size", 44) == 0);
    /* only the variable of line 5 */
    CHECK(strstr(err, "(point 3: size=lots)") != NULL);
    printf("  %s\n", err);
    arb_scenario_free(sc);
    arb_sweep_free(sw);
}

TEST(syntax_errors_name_line_and_variable)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[workload]\nsize = ${x=1,2\n", "t.ini:2: workload.size: '${' without its '}'"},
        {"[workload]\nsize = ${x=1}\nqps = ${x=2}\n",
         "t.ini:3: ${x}: declared again (first on line 2)"},
        {"[workload]\nsize = ${y}\n", "t.ini:2: ${y}: no variable y is declared"},
        {"[workload]\nsize = ${x=1,,2}\n", "t.ini:2: ${x}: an empty value"},
        {"[workload]\nsize = ${x=5..1}\n", "t.ini:2: ${x}: '5..1': the range ends below its start"},
        {"[workload]\nsize = ${x=1..5 step 0}\n",
         "t.ini:2: ${x}: '1..5 step 0': the step must be above 0"},
        {"[workload]\nsize = ${x=1..5 step}\n", "t.ini:2: ${x}: '1..5 step': a range is A..B"},
        {"[workload]\nsize = ${x=\"1}\n", "t.ini:2: workload.size: '${' without its '}'"},
        {"[workload]\nsize = ${x=\"1\" 2}\n", "t.ini:2: ${x}: text after a quoted value"},
        {"[sweep]\nrepeat = 2\nseeds = 1..2\n", "t.ini:3: sweep.seeds: not with sweep.repeat"},
        {"[sweep]\nrepeat = 0\n", "t.ini:2: sweep.repeat: '0' is not a count from 1"},
        {"[sweep]\nseeds = 5..1\n", "t.ini:2: sweep.seeds: '5..1' is not A..B with A <= B"},
        {"[sweep]\nruns = 5\n", "t.ini:2: sweep.runs: unknown key in [sweep] (repeat, seeds)"},
        {"[sweep]\nrepeat = ${r=1,2}\n", "t.ini:2: sweep.repeat: a [sweep] key cannot be swept"},
        {"[sweep]\n[run]\n[sweep]\n", "t.ini:3: [sweep] again"},
        {"[sweep]\nrepeat = 2\nrepeat = 3\n", "t.ini:3: sweep.repeat: again (first on line 2)"},
        {"[sweep]\nseeds = 1..2\n\nseeds = 1..3\n",
         "t.ini:4: sweep.seeds: again (first on line 2)"},
        {"[fabric]\nloss = ${1x=1,2}\n",
         "t.ini:2: ${1x=1,2}: a variable's name is a letter or '_'"},
        {"[fabric]\nloss = ${a-b=1,2}\n", "t.ini:2: ${a-b=1,2}: a variable's name is"},
        {"[fabric]\nloss = ${a=${b=1,2}}\n", "t.ini:2: ${...}: a ${ inside another"},
        {"[fabric]\nloss = ${x=0,${x}}\n", "t.ini:2: ${...}: a ${ inside another"},
        {"[fabric]\ndelay = ${1us..3us}\n",
         "t.ini:2: ${fabric.delay}: '1us..3us': a range is A..B or A..B step S, each a plain "
         "decimal number of 0 or more"},
        {"[fabric]\nloss = ${l=1e-3..2e-3 step 1e-3}\n",
         "t.ini:2: ${l}: '1e-3..2e-3 step 1e-3': a range"},
        {"[fabric]\ndelay = ${-2..2}us\n", "t.ini:2: ${fabric.delay}: '-2..2': a range is"},
        {"[fabric]\ndelay = ${1..3 stp 1}us\n",
         "t.ini:2: ${fabric.delay}: '1..3 stp 1': a range is"},
        {"[run]\nseed = ${1,2}\n[sweep]\nseeds = 7..8\n",
         "t.ini:2: run.seed: swept here, and sweep.seeds (line 4) sets it for each replication"},
        {"[sweep]\nseeds = 7..8\n[run]\nseed = ${s=1,2}\n",
         "t.ini:4: run.seed: swept here, and sweep.seeds (line 2) sets it"},
        {"[workload]\nsize = ${a=1..1000}\nqps = ${b=1..1000}\nmtu = ${c=1..2}\n",
         "t.ini:2: ${a}: the sweep has more than 1000000 points"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512] = "";
        int rc = parse_err(cases[i].text, err, sizeof err);
        CHECK_EQ_I(rc, ARB_EPARSE);
        if (strncmp(err, cases[i].want, strlen(cases[i].want)) != 0) {
            printf("  case %zu: want '%s...', got '%s'\n", i, cases[i].want, err);
            CHECK(0);
        }
    }
}

/* Derived check: a point runs exactly as the same scenario written out. */
/* The keys the sweep sets for every point: a ${...} in the value (a
 * declaration or a reference), by section.key or by key alone; run.seed
 * under sweep.seeds; nothing else. */
TEST(the_keys_a_sweep_sets)
{
    arb_sweep *sw;
    char err[256];
    REQUIRE_EQ_I(arb_sweep_parse("[fabric]\nloss = ${l=0,0.1}\n[workload]\nsize = 1MiB\n"
                                 "[arbor]\npayload = ${l}KiB\n[sweep]\nseeds = 3..4\n",
                                 "t.ini", NULL, &sw, err, sizeof err),
                 0);
    CHECK_EQ_U(arb_sweep_sets_key(sw, "fabric", "loss"), 2);
    CHECK_EQ_U(arb_sweep_sets_key(sw, NULL, "loss"), 2);
    CHECK_EQ_U(arb_sweep_sets_key(sw, "arbor", "payload"), 6);
    CHECK_EQ_U(arb_sweep_sets_key(sw, "run", "seed"), 8);
    CHECK_EQ_U(arb_sweep_sets_key(sw, NULL, "seed"), 8);
    CHECK_EQ_U(arb_sweep_sets_key(sw, "workload", "size"), 0);
    CHECK_EQ_U(arb_sweep_sets_key(sw, "workload", "loss"), 0);
    CHECK_EQ_U(arb_sweep_sets_key(sw, "fab", "loss"), 0);
    arb_sweep_free(sw);
    REQUIRE_EQ_I(arb_sweep_parse("[run]\nseed = ${1,2}\n[sweep]\nrepeat = 2\n", "t.ini", NULL, &sw,
                                 err, sizeof err),
                 0); /* repeat counts up from each value: allowed */
    CHECK_EQ_U(arb_sweep_sets_key(sw, "run", "seed"), 2);
    arb_sweep_free(sw);
    /* a value with ".." that does not start as a number is a literal (a path) */
    REQUIRE_EQ_I(arb_sweep_parse("[workload]\nfile = ${../a.csv,../b.csv}\n", "t.ini", NULL, &sw,
                                 err, sizeof err),
                 0);
    CHECK_EQ_U(arb_sweep_n_points(sw), 2);
    CHECK_STR(arb_sweep_value(sw, 1, 0), "../b.csv");
    arb_sweep_free(sw);
}

TEST(a_point_runs_as_its_plain_scenario)
{
    arb_sweep *sw = parse("[fabric]\ntopology = star:4\n[workload]\nkind = ring_allreduce\n"
                          "size = ${64,128}KiB\n");
    REQUIRE(sw);
    const char *plain = "[fabric]\ntopology = star:4\n[workload]\nkind = ring_allreduce\n"
                        "size = 128KiB\n";
    char err[512];
    arb_scenario *a, *b;
    REQUIRE(arb_scenario_new(&a) == 0);
    REQUIRE(arb_scenario_new(&b) == 0);
    REQUIRE(arb_sweep_point_load(sw, 1, a, err, sizeof err) == 0);
    REQUIRE(arb_scenario_load_string(b, plain, "t.ini", NULL, err, sizeof err) == 0);
    arb_scenario_result *ra, *rb;
    REQUIRE(arb_scenario_run(a, NULL, NULL, &ra, err, sizeof err) == 0);
    REQUIRE(arb_scenario_run(b, NULL, NULL, &rb, err, sizeof err) == 0);
    char *ja = arb_scenario_json(ra, NULL), *jb = arb_scenario_json(rb, NULL);
    REQUIRE(ja && jb);
    CHECK_STR(ja, jb);
    free(ja);
    free(jb);
    arb_scenario_result_free(ra);
    arb_scenario_result_free(rb);
    arb_scenario_free(a);
    arb_scenario_free(b);
    arb_sweep_free(sw);
}

int main(void)
{
    RUN(plain_file_is_one_point);
    RUN(points_are_the_product_first_variable_slowest);
    RUN(ranges_are_exact_decimals);
    RUN(references_take_the_declared_value);
    RUN(quoting_and_comments);
    RUN(sweep_section_is_blanked_line_for_line);
    RUN(replications_set_the_seed);
    RUN(a_bad_value_names_line_point_and_variable);
    RUN(syntax_errors_name_line_and_variable);
    RUN(the_keys_a_sweep_sets);
    RUN(a_point_runs_as_its_plain_scenario);
    return testkit_done();
}
