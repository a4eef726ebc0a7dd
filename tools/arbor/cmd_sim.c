/*
 * arbor sim: run a scenario file (docs/scenarios.md) through the packet
 * simulator and report a summary, JSON or CSV time series
 * (docs/simulator.md). The wall clock and the peak memory are measured
 * here; everything else comes from the library and is deterministic.
 */
#include "arbor/scenario.h"
#include "cli.h"
#include "sim_part.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char sim_usage[] =
    "usage: arbor sim [FILE] [-s section.key=value ...] [--seed N] [-j|--json] [-c|--csv PREFIX]\n"
    "                 [-p|--pcap PORTS FILE] [-w|--wire-check] [-q|--quiet] [-k|--keys]\n"
    "\n"
    "Run a scenario through the packet simulator. Without FILE, the built-in\n"
    "default: an Arbor AllReduce of 64 MiB over star-32 (100 Gb/s, 1 us links,\n"
    "8192 B payloads, 16 B headers, header-only, f32); docs/scenarios.md and\n"
    "docs/arbor-sim.md. Examples: -s collective=broadcast -s mode=values\n"
    "-s size=1GiB -s topology=leafspine:4,8,4 -s loss=0.001 -s run.seed=7\n"
    "Sizes are bytes with an optional unit: K, M, G, T binary (1M = 1MiB =\n"
    "1048576), KB, MB, GB, TB decimal (docs/scenarios.md, Sizes).\n"
    "\n"
    "-s, --set KEY=VALUE  set a scenario key (section.key, or key when only one\n"
    "               section has it); repeatable, applied after FILE in order\n"
    "--seed N       run.seed (the run's seed)\n"
    "-w, --wire-check  arbor.wire_check=on: round-trip every Arbor header through the codec\n"
    "-j, --json     one JSON object on stdout (docs/simulator.md has the schema)\n"
    "-c, --csv PREFIX  write PREFIX-util.csv, -queue.csv, -flows.csv, and for Arbor\n"
    "               runs -ranks.csv (each rank's done time) and -slots.csv (slots live);\n"
    "               -ports.csv: the ports of -s run.sample_ports=LINKS, one by one\n"
    "-p, --pcap PORTS FILE  write the frames crossing PORTS to FILE (run.pcap_ports and\n"
    "               run.pcap): all, or links as for --fail (up:L1.0:0,down:L2.1:3,\n"
    "               link:A-B, switch:NAME) and host:hN; both directions of each\n"
    "--snaplen N    run.pcap_snaplen: keep N bytes of each captured frame (0: all)\n"
    "--partition K  one fabric split across K MPI ranks by subtree (mpirun -np K arbor sim\n"
    "               FILE --partition K): the same figures as one process; rank 0 prints,\n"
    "               and (without -q) each rank's time synchronising on stderr;\n"
    "               docs/partition.md\n"
    "-q, --quiet    no progress bar (shown on a terminal after one second)\n"
    "-k, --keys     list every key with its default and exit\n"
    "--seeds A..B   run once per seed A..B (run.seed) and summarise: mean, 95% CI\n"
    "               of the mean (Student's t), sd, min and max of each figure;\n"
    "               with --json one object (schema arbor-sim-seeds/1); over the\n"
    "               file's run.seed, not with -s run.seed or --seed\n"
    "Options take '--opt value' or '--opt=value' and may be abbreviated.\n"
    "\n"
    "Exit status: 0 the run finished (a channel that could not close after every\n"
    "rank was done is a warning on stderr), 1 it did not: run.stop came first, an\n"
    "engine gave up, or a flow's sender did (transport.retry_limit): one line on\n"
    "stderr naming what was lost and what failed in the fabric; 2 a bad option,\n"
    "file, key or value (one line on stderr: file, line and key).\n";

struct progress {
    int on;
    struct timespec t0;
    int drawn;
};

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void on_progress(void *ctx, arb_time now, arb_time stop, uint64_t done, uint64_t planned)
{
    struct progress *p = ctx;
    if (!p->on || since(&p->t0) < 1.0) return;
    double f = planned ? (double)done / (double)planned : 0;
    if (stop && (double)now / (double)stop > f) f = (double)now / (double)stop;
    if (f > 1) f = 1;
    char bar[31];
    int n = (int)(f * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < n ? '#' : ' ';
    bar[30] = '\0';
    fprintf(stderr, "\r[%s] %3.0f%%  %.1f us simulated, flows %llu/%llu ", bar, f * 100,
            (double)now / (double)ARB_PS_PER_US, (unsigned long long)done,
            (unsigned long long)planned);
    fflush(stderr);
    p->drawn = 1;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

/* The three CSV files of --csv PREFIX, opened before the run so that an
 * unwritable path is reported before any work. */
#define N_CSV 6
static const struct {
    arb_scenario_csv_kind kind;
    const char *suffix;
} csv_files[N_CSV] = {{ARB_SCN_CSV_UTIL, "util"},   {ARB_SCN_CSV_QUEUE, "queue"},
                      {ARB_SCN_CSV_FLOWS, "flows"}, {ARB_SCN_CSV_RANKS, "ranks"},
                      {ARB_SCN_CSV_SLOTS, "slots"}, {ARB_SCN_CSV_PORTS, "ports"}};

struct csv_out {
    FILE *f[N_CSV];
    char path[N_CSV][4096];
};

static void csv_close(struct csv_out *c)
{
    for (int i = 0; i < N_CSV; i++)
        if (c->f[i]) {
            fclose(c->f[i]);
            c->f[i] = NULL;
        }
}

static int csv_open(struct csv_out *c, const char *prefix)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < N_CSV; i++) {
        int n = snprintf(c->path[i], sizeof c->path[i], "%s-%s.csv", prefix, csv_files[i].suffix);
        if (n < 0 || (size_t)n >= sizeof c->path[i]) {
            csv_close(c);
            return cli_error("sim", "--csv: '%s': path too long", prefix);
        }
        c->f[i] = fopen(c->path[i], "w");
        if (!c->f[i]) {
            int e = errno;
            csv_close(c);
            return cli_error("sim", "--csv: cannot write %s: %s", c->path[i], strerror(e));
        }
    }
    return 0;
}

static int csv_write(struct csv_out *c, const arb_scenario_result *res)
{
    int status = CLI_EXIT_OK;
    for (int i = 0; i < N_CSV && status == CLI_EXIT_OK; i++) {
        char *text = arb_scenario_csv(res, csv_files[i].kind);
        if (!text) {
            fprintf(stderr, "arbor sim: out of memory\n");
            status = CLI_EXIT_FAIL;
        } else if (fputs(text, c->f[i]) == EOF || fclose(c->f[i]) != 0) {
            c->f[i] = NULL;
            fprintf(stderr, "arbor sim: --csv: cannot write %s\n", c->path[i]);
            status = CLI_EXIT_FAIL;
        } else {
            c->f[i] = NULL;
        }
        free(text);
    }
    csv_close(c);
    return status;
}

static int write_results(const arb_scenario_result *res, const arb_scenario_host *host, int json,
                         const char *csv, struct csv_out *csvo, int status)
{
    char *out = arb_scenario_json(res, host);
    if (!out) {
        fprintf(stderr, "arbor sim: out of memory\n");
        status = CLI_EXIT_FAIL;
    } else if (json) {
        puts(out);
    } else {
        cli_sim_summary(out);
    }
    free(out);
    if (status == CLI_EXIT_OK && csv) return csv_write(csvo, res);
    csv_close(csvo);
    return status;
}

static int list_keys(void)
{
    for (size_t i = 0; i < arb_scenario_n_keys(); i++) {
        arb_scenario_key_info ki;
        arb_scenario_key(i, &ki);
        printf("%s.%s = %s\n    %s\n", ki.section, ki.key, ki.def, ki.doc);
        if (ki.choices) printf("    one of: %s\n", ki.choices);
    }
    return CLI_EXIT_OK;
}

static int status_of(int rc)
{
    return rc == ARB_ENOMEM || rc == ARB_ERANGE ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
}

/* The scenario changes of the command line, applied in their order after
 * the file: -s, --seed, --pcap, --snaplen, --wire-check (and --partition's
 * run.order first). Each but -s is set as the option it is, so that a
 * message about its value names the option the user wrote. */
struct sim_action {
    int opt;
    const char *a, *b;
};

static int apply_action(arb_scenario *sc, const struct sim_action *x, char *err, size_t errlen)
{
    char as[64];
    switch (x->opt) {
    case 's':
        return arb_scenario_set(sc, x->a, err, errlen);
    case 'S': {
        uint64_t v;
        if (cli_parse_u64(x->a, UINT64_MAX, &v) < 0)
            return arb_errf(err, errlen, ARB_EPARSE, "--seed: '%s' is not a number", x->a);
        snprintf(as, sizeof as, "run.seed=%llu", (unsigned long long)v);
        return arb_scenario_set_from(sc, as, "--seed", err, errlen);
    }
    case 'w':
        return arb_scenario_set_from(sc, "arbor.wire_check=on", "--wire-check", err, errlen);
    case 'P':
        return arb_scenario_set_from(sc, "run.order=local", "--partition", err, errlen);
    case 'L': {
        size_t n = strlen(x->a) + 32;
        char *buf = malloc(n);
        if (!buf) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        snprintf(buf, n, "run.pcap_snaplen=%s", x->a);
        int rc = arb_scenario_set_from(sc, buf, "--snaplen", err, errlen);
        free(buf);
        return rc;
    }
    case 'p': {
        if (!*x->b) /* (run.pcap = "" is no capture: here the user asked for one) */
            return arb_errf(err, errlen, ARB_EPARSE,
                            "--pcap %s: an empty FILE (a capture needs one)", x->a);
        size_t n = strlen(x->a) + strlen(x->b) + 32;
        char *buf = malloc(n);
        if (!buf) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        snprintf(buf, n, "run.pcap_ports=%s", x->a);
        int rc = arb_scenario_set_from(sc, buf, "--pcap", err, errlen);
        snprintf(buf, n, "run.pcap=%s", x->b);
        if (rc == 0) rc = arb_scenario_set_from(sc, buf, "--pcap", err, errlen);
        free(buf);
        return rc;
    }
    default:
        return 0;
    }
}

/* The scenario of the command line: FILE (or the built-in one), then the
 * actions in order. Prints its error when `say` (one rank of several
 * does) and returns an exit status. */
static int build_scenario(const char *file, const struct sim_action *act, int n_act,
                          arb_scenario **out, int say)
{
    arb_scenario *sc;
    if (arb_scenario_new(&sc) < 0) {
        fprintf(stderr, "arbor sim: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    char err[1024];
    int rc = file ? arb_scenario_load(sc, file, err, sizeof err)
                  : arb_scenario_load_string(sc, arb_scenario_default_text(), "(built-in)", NULL,
                                             err, sizeof err);
    for (int i = 0; rc == 0 && i < n_act; i++)
        rc = apply_action(sc, &act[i], err, sizeof err);
    if (rc < 0) {
        arb_scenario_free(sc);
        char *text = file && rc == ARB_EPARSE ? cli_slurp(file) : NULL;
        int sweep = text && (strstr(text, "${") || strstr(text, "[sweep]"));
        free(text);
        if (say)
            cli_error("sim", "%s%s", err,
                      sweep ? " (a sweep: run it with 'arbor sweep FILE')" : "");
        return status_of(rc);
    }
    *out = sc;
    return CLI_EXIT_OK;
}

/* A run's warnings (arb_scenario_set_logger): a line each on stderr. */
static void sim_warning(void *user, arb_log_level level, const char *msg)
{
    (void)user;
    if (level <= ARB_LOG_WARN) fprintf(stderr, "arbor sim: warning: %s\n", msg);
}

static void warn_on_stderr(arb_scenario *sc)
{
    arb_logger lg = {sim_warning, NULL, ARB_LOG_WARN};
    arb_scenario_set_logger(sc, &lg);
}

struct seeds_ctx {
    const char *file;
    const struct sim_action *act;
    int n_act;
    uint64_t first; /* its run says the scenario's warnings, the others do not repeat them */
};

/* One run of --seeds: the scenario with run.seed = seed, its JSON. */
static int seeds_one(void *ctx, uint64_t seed, char **json)
{
    const struct seeds_ctx *x = ctx;
    arb_scenario *sc;
    int rc = build_scenario(x->file, x->act, x->n_act, &sc, 1);
    if (rc) return rc;
    if (seed == x->first) warn_on_stderr(sc);
    char as[64], err[1024];
    snprintf(as, sizeof as, "run.seed=%llu", (unsigned long long)seed);
    arb_scenario_result *res = NULL;
    rc = arb_scenario_set_from(sc, as, "--seeds", err, sizeof err);
    if (rc == 0) rc = arb_scenario_run(sc, NULL, NULL, &res, err, sizeof err);
    arb_scenario_free(sc);
    if (rc < 0) {
        cli_error("sim", "seed %llu: %s", (unsigned long long)seed, err);
        return status_of(rc);
    }
    *json = arb_scenario_json(res, NULL);
    arb_scenario_result_free(res);
    if (!*json) {
        fprintf(stderr, "arbor sim: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* The status lines of a run that did not finish (stderr), as status: a
 * run that failed or was cut short exits 1, after the results it did get.
 * Their time is the one the JSON reports, sim_time_us: the last event that
 * did something, not a host timer that fired after it and found nothing to
 * do (run.stop cuts a run with such timers armed, the RTO's among them). */
static int run_status(const arb_scenario_result *res, int status)
{
    const char *why = NULL;
    double at = (double)arb_scenario_result_time(res) / ARB_PS_PER_US;
    arb_scenario_status st = arb_scenario_result_status(res, &why);
    if (st == ARB_SCN_FAILED) {
        fprintf(stderr, "arbor sim: failed at %.3f us: %s\n", at, why);
        if (status == CLI_EXIT_OK) status = CLI_EXIT_FAIL;
    } else if (st == ARB_SCN_DONE && why) {
        fprintf(stderr, "arbor sim: warning at %.3f us: %s\n", at, why);
    } else if (st == ARB_SCN_INCOMPLETE) {
        const arb_workload_result *w = arb_scenario_result_workload(res);
        const arb_sim_arbor_result *a = arb_scenario_result_arbor(res);
        if (a) /* a rank cut off by a failure gives up later than the default run.stop */
            fprintf(stderr,
                    "arbor sim: incomplete: run.stop came first, %u of %u ranks done (last "
                    "activity at %.3f us; -s run.stop=0 runs until each is done or gives up, "
                    "naming what was lost)\n",
                    a->ranks_done, a->ranks, at);
        else
            fprintf(stderr,
                    "arbor sim: incomplete: run.stop came first, %llu of %llu flows done (last "
                    "activity at %.3f us)\n",
                    (unsigned long long)w->flows_done, (unsigned long long)w->flows_planned, at);
        if (status == CLI_EXIT_OK) status = CLI_EXIT_FAIL;
    }
    return status;
}

/* arbor sim --partition K: this process's part of the run; rank 0 reports. */
static int sim_partitioned(const char *file, const struct sim_action *act, int n_act,
                           const char *k_text, int json, int quiet, const char *csv, int seeds)
{
    uint64_t k;
    char err[1024];
    uint32_t me;
    sim_part_launched(&me); /* (before MPI is up: rank 0 alone says what is wrong) */
    if (cli_parse_u64(k_text, 65536, &k) < 0 || k == 0)
        return me ? CLI_EXIT_USAGE
                  : cli_error("sim", "--partition: '%s' is not a number of ranks (1 .. 65536)",
                              k_text);
    if (seeds)
        return me ? CLI_EXIT_USAGE
                  : cli_error("sim", "--seeds runs the scenario many times: not with --partition");
    struct sim_part_cli p;
    memset(&p, 0, sizeof p);
    if (sim_part_init(&p, (uint32_t)k, err, sizeof err) < 0) {
        int r0 = p.ops.rank == 0;
        sim_part_finalize(&p);
        return r0 ? cli_error("sim", "%s", err) : CLI_EXIT_USAGE;
    }
    int rank0 = p.ops.rank == 0;
    arb_scenario *sc;
    /* run.order = local first: what the file says, the -s that follow may change */
    struct sim_action *all = calloc((size_t)n_act + 1, sizeof *all);
    if (!all) {
        sim_part_finalize(&p);
        fprintf(stderr, "arbor sim: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    all[0] = (struct sim_action){'P', NULL, NULL};
    if (n_act) memcpy(all + 1, act, (size_t)n_act * sizeof *act);
    int rc = build_scenario(file, all, n_act + 1, &sc, rank0); /* the same in every rank */
    free(all);
    if (rc == 0 && rank0) warn_on_stderr(sc);
    struct csv_out csvo;
    memset(&csvo, 0, sizeof csvo);
    if (rc == 0 && rank0 && csv) rc = csv_open(&csvo, csv);
    if (!sim_part_all_ok(&p, rc == 0)) {
        if (rc == 0) arb_scenario_free(sc);
        csv_close(&csvo);
        sim_part_finalize(&p);
        return rc ? rc : CLI_EXIT_USAGE;
    }
    struct progress pg;
    memset(&pg, 0, sizeof pg);
    pg.on = rank0 && !quiet && isatty(STDERR_FILENO);
    clock_gettime(CLOCK_MONOTONIC, &pg.t0);
    arb_scenario_result *res = NULL;
    rc = arb_scenario_run_part(sc, &p.ops, on_progress, &pg, &res, err, sizeof err);
    double run_s = since(&pg.t0);
    if (pg.drawn) fprintf(stderr, "\r%*s\r", 78, "");
    arb_scenario_free(sc);
    int status = CLI_EXIT_OK;
    if (rc < 0) {
        csv_close(&csvo);
        status = rank0 ? cli_error("sim", "%s", err) : status_of(rc);
        sim_part_finalize(&p);
        return status;
    }
    arb_sim_part_info info;
    if (!quiet && arb_scenario_result_part(res, &info) == 0) sim_part_report(&p, &info, run_s);
    if (rank0) {
        arb_scenario_host host = {run_s, peak_rss_mb()};
        status = write_results(res, &host, json, csv, &csvo, status);
        status = run_status(res, status);
    }
    arb_scenario_result_free(res);
    fflush(stdout);
    sim_part_finalize(&p);
    return status;
}

/* What arbor sim was asked for: the options, and the actions on the
 * scenario (--set, --seed, --pcap, ...) in their order. */
struct sim_opts {
    const char *file, *csv, *seeds, *partition;
    int json, quiet, n_act, has_pcap;
    struct sim_action *act;
    int argc; /* of the command line */
};

/* One option of arbor sim (cli_options; --keys: the listing's status). */
static int sim_option(int c, const char *v, char **argv, void *ctx)
{
    struct sim_opts *o = ctx;
    switch (c) {
    case 'h':
        fputs(sim_usage, stdout);
        return CLI_EXIT_OK;
    case 'k':
        return list_keys();
    case 'j':
        o->json = 1;
        return CLI_GO_ON;
    case 'q':
        o->quiet = 1;
        return CLI_GO_ON;
    case 'c':
        o->csv = v;
        return CLI_GO_ON;
    case 'E':
        o->seeds = v;
        return CLI_GO_ON;
    case 'P':
        o->partition = v;
        return CLI_GO_ON;
    case 'p': /* two values: PORTS (the option's) and FILE (the next word) */
        if (optind >= o->argc) return cli_error("sim", "--pcap needs PORTS and FILE");
        o->act[o->n_act++] = (struct sim_action){'p', v, argv[optind++]};
        o->has_pcap = 1;
        return CLI_GO_ON;
    case 's':
    case 'S':
    case 'L':
    case 'w':
        o->act[o->n_act++] = (struct sim_action){c, v, NULL};
        return CLI_GO_ON;
    default:
        return cli_bad_option("sim", c, argv);
    }
}

/* The options and the scenario file into o: CLI_GO_ON, or an exit
 * status. */
static int parse_options(int argc, char **argv, struct sim_opts *o)
{
    static const struct option opts[] = {{"set", required_argument, NULL, 's'},
                                         {"seed", required_argument, NULL, 'S'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"csv", required_argument, NULL, 'c'},
                                         {"pcap", required_argument, NULL, 'p'},
                                         {"wire-check", no_argument, NULL, 'w'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"keys", no_argument, NULL, 'k'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"seeds", required_argument, NULL, 'E'},
                                         {"snaplen", required_argument, NULL, 'L'},
                                         {"partition", required_argument, NULL, 'P'},
                                         {0, 0, 0, 0}};
    int rc = cli_options(argc, argv, ":s:S:jc:p:wqkh", opts, sim_option, o);
    if (rc != CLI_GO_ON) return rc;
    for (int i = optind; i < argc; i++) {
        if (o->file)
            return cli_error("sim", "one scenario file only ('%s' and '%s')", o->file, argv[i]);
        o->file = argv[i];
    }
    uint32_t me, ranks = sim_part_launched(&me);
    if (!o->partition && ranks > 1) { /* every rank would run the whole of it, and print it */
        if (me != 0) return CLI_EXIT_USAGE;
        return cli_error("sim",
                         "started as one of %u MPI ranks without --partition: each would run "
                         "the whole scenario; add --partition %u to split it across them, or "
                         "run arbor sim without mpirun",
                         ranks, ranks);
    }
    return CLI_GO_ON;
}

/* --seeds sets run.seed for each run: a seed the command line gives too
 * (-s run.seed, --seed) is refused, one a file sets is a default it
 * overrides, as -s does. The scenario of the command line is built to see
 * where its run.seed came from (its errors are the run's). */
static int seeds_seed_clash(const struct sim_opts *o)
{
    arb_scenario *sc;
    int rc = build_scenario(o->file, o->act, o->n_act, &sc, 1);
    if (rc) return rc;
    unsigned line;
    const char *from = arb_scenario_origin(sc, "run", "seed", &line);
    if (from && line == 0) /* "-s run.seed=7", "--seed 7" */
        rc = cli_error("sim",
                       "--seeds %s (run.seed): %s%s%s sets it too; --seeds gives each run its "
                       "seed: give one or the other",
                       o->seeds, from, strcmp(from, "-s") == 0 ? " run.seed=" : " ",
                       arb_scenario_get(sc, "run", "seed"));
    arb_scenario_free(sc);
    return rc;
}

/* --seeds A..B: the scenario once per seed, summarised. */
static int sim_seeds(const struct sim_opts *o)
{
    uint64_t first, last;
    const char *clash = o->csv         ? "--csv"
                        : o->has_pcap  ? "--pcap"
                        : o->partition ? "--partition"
                                       : NULL;
    if (cli_parse_seeds(o->seeds, &first, &last) < 0)
        return cli_error("sim", "--seeds: '%s' is not A..B with A <= B, at most %d runs", o->seeds,
                         CLI_MAX_SEEDS);
    if (clash) return cli_error("sim", "--seeds runs the scenario many times: not with %s", clash);
    int rc = seeds_seed_clash(o);
    if (rc) return rc;
    struct seeds_ctx x = {o->file, o->act, o->n_act, first};
    struct cli_seeds_run run = {o->file, first, last, o->json, o->quiet, seeds_one, &x};
    return cli_sim_seeds(&run);
}

/* One run of the scenario in this process, with its progress line on a
 * terminal, and its results. */
static int sim_once(const struct sim_opts *o)
{
    arb_scenario *sc;
    int rc = build_scenario(o->file, o->act, o->n_act, &sc, 1);
    if (rc) return rc;
    warn_on_stderr(sc);
    char err[1024];
    struct csv_out csvo;
    memset(&csvo, 0, sizeof csvo);
    if (o->csv && (rc = csv_open(&csvo, o->csv)) != 0) {
        arb_scenario_free(sc);
        return rc;
    }
    struct progress pg;
    memset(&pg, 0, sizeof pg);
    pg.on = !o->quiet && isatty(STDERR_FILENO);
    clock_gettime(CLOCK_MONOTONIC, &pg.t0);
    arb_scenario_result *res;
    rc = arb_scenario_run(sc, on_progress, &pg, &res, err, sizeof err);
    if (pg.drawn) fprintf(stderr, "\r%*s\r", 78, "");
    arb_scenario_free(sc);
    if (rc < 0) {
        csv_close(&csvo);
        cli_error("sim", "%s", err);
        return status_of(rc);
    }
    arb_scenario_host host = {since(&pg.t0), peak_rss_mb()};
    int status = run_status(res, write_results(res, &host, o->json, o->csv, &csvo, CLI_EXIT_OK));
    arb_scenario_result_free(res);
    return status;
}

int cmd_sim(int argc, char **argv)
{
    struct sim_opts o;
    memset(&o, 0, sizeof o);
    o.argc = argc;
    o.act = calloc((size_t)argc + 1, sizeof *o.act);
    if (!o.act) {
        fprintf(stderr, "arbor sim: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    int st = parse_options(argc, argv, &o);
    if (st == CLI_GO_ON && o.seeds)
        st = sim_seeds(&o);
    else if (st == CLI_GO_ON && o.partition)
        st = sim_partitioned(o.file, o.act, o.n_act, o.partition, o.json, o.quiet, o.csv, 0);
    else if (st == CLI_GO_ON)
        st = sim_once(&o);
    free(o.act);
    return st;
}
