/*
 * arbor sweep: every point of a scenario's iteration variables, each over
 * its replications, run on this machine (one process per core) or over
 * MPI ranks, and gathered into one table: a row per point with the mean
 * and the 95% confidence interval of each figure (docs/sweeps.md). The
 * table is built from the runs' records in point order, so it is the same
 * byte for byte however the runs were spread.
 */
#include "sweep_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char sweep_usage[] =
    "usage: arbor sweep FILE [-s section.key=value ...] [-n|--procs N] [--csv PATH]\n"
    "                   [--json PATH] [--list] [--mpi] [--progress] [-q|--quiet]\n"
    "       mpirun -np K arbor sweep FILE [...]\n"
    "\n"
    "Run every point of a scenario's iteration variables (${x=1,2,4}, ${x=1..8 step 2},\n"
    "${\"a,b\",\"c\"}, references ${x}), each once per replication ([sweep] repeat = N:\n"
    "run.seed, run.seed + 1, ...; or seeds = A..B), and gather one row per point:\n"
    "the mean and the 95% confidence interval (Student's t) of each figure over the\n"
    "replications. A point that fails is a row with its error; the others go on.\n"
    "The table is the same byte for byte however the runs were spread\n"
    "(docs/sweeps.md).\n"
    "\n"
    "-s, --set KEY=VALUE  set a scenario key in every point (after the file)\n"
    "-n, --procs N  processes on this machine (default: one per core); not under\n"
    "               mpirun, where each rank is one process (start more ranks)\n"
    "--csv PATH     write the table as CSV to PATH ('-': stdout)\n"
    "--json PATH    write it as JSON to PATH ('-': stdout; schema arbor-sweep/1)\n"
    "--list         print the points and their values, run nothing\n"
    "--mpi          run over MPI ranks (implied under mpirun, mpiexec or srun)\n"
    "--progress     a progress line per point done even when stderr is not a terminal\n"
    "-q, --quiet    no progress (shown on a terminal: points done, time left)\n"
    "Without --csv or --json to stdout, prints the table as text.\n"
    "\n"
    "Exit status: 0 every point's runs finished, 1 a point failed or did not\n"
    "finish (its row says why), or a process died (the sweep stops), 2 a bad\n"
    "option, file, sweep syntax or value (one line on stderr: file, line, variable).\n";

/* What the collector keeps of one run. */
struct run_rec {
    int32_t rc, status;
    uint32_t have;
    uint64_t seed;
    double v[CLI_N_FIGURES];
    char *msg;
};

struct collector {
    const arb_sweep *sw;
    size_t n_points, n_tasks;
    unsigned reps;
    struct run_rec *runs;
    unsigned *point_done; /* runs done per point */
    size_t tasks_done, points_done;
    int oom;
    /* progress */
    int tty, lines;
    struct timespec t0;
};

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void fmt_dur(char *buf, size_t len, double s)
{
    unsigned long t = (unsigned long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
}

static void show_progress(struct collector *c, int point_finished)
{
    if (!c->tty && !(c->lines && point_finished)) return;
    double el = since(&c->t0);
    char e[32], left[48];
    fmt_dur(e, sizeof e, el);
    if (c->tasks_done == c->n_tasks) {
        snprintf(left, sizeof left, "done");
    } else {
        char l[32];
        fmt_dur(l, sizeof l, el / (double)c->tasks_done * (double)(c->n_tasks - c->tasks_done));
        snprintf(left, sizeof left, "about %s left", l);
    }
    fprintf(stderr, "%ssweep: %zu/%zu points (%zu/%zu runs), %s elapsed, %s%s", c->tty ? "\r" : "",
            c->points_done, c->n_points, c->tasks_done, c->n_tasks, e, left, c->tty ? "  " : "\n");
    fflush(stderr);
}

static void put(void *ctx, const struct sweep_rec *rec)
{
    struct collector *c = ctx;
    if (rec->task >= c->n_tasks) return;
    struct run_rec *r = &c->runs[rec->task];
    r->rc = rec->rc;
    r->status = rec->status;
    r->have = rec->have;
    r->seed = rec->seed;
    memcpy(r->v, rec->v, sizeof r->v);
    if (rec->msg[0]) {
        r->msg = strndup(rec->msg, sizeof rec->msg);
        if (!r->msg) c->oom = 1;
    }
    c->tasks_done++;
    size_t p = rec->task / c->reps;
    int finished = ++c->point_done[p] == c->reps;
    c->points_done += (size_t)finished;
    show_progress(c, finished);
}

/* ---- the table ----------------------------------------------------------- */

struct row {
    const char *status; /* done, incomplete, failed, error */
    const char *msg;    /* why, for a row that is not done */
    int have_seed;
    uint64_t seed;
    uint32_t have;
    double mean[CLI_N_FIGURES], ci[CLI_N_FIGURES], sd[CLI_N_FIGURES];
};

/* Point p's row from its runs, in replication order. */
static void make_row(const struct collector *c, size_t p, struct row *row)
{
    static const char *const names[] = {"done", "incomplete", "failed"};
    const struct run_rec *r = &c->runs[p * c->reps];
    unsigned n = c->reps;
    memset(row, 0, sizeof *row);
    row->status = "done";
    int worst = 0;
    row->have = ~0u;
    for (unsigned k = 0; k < n; k++) {
        if (r[k].rc < 0) {
            row->status = "error";
            row->msg = r[k].msg ? r[k].msg : arb_strerror(r[k].rc);
            row->have = 0;
            break;
        }
        if (r[k].status > worst && r[k].status <= 2) {
            worst = r[k].status;
            row->status = names[worst];
            row->msg = r[k].msg;
        }
        row->have &= r[k].have;
    }
    row->have_seed = r[0].rc == 0 || r[0].seed != 0;
    row->seed = r[0].seed;
    for (size_t m = 0; m < CLI_N_FIGURES; m++) {
        if (!(row->have & (1u << m))) continue;
        double mean = 0, var = 0;
        int alike = 1;
        for (unsigned k = 0; k < n; k++) {
            mean += r[k].v[m];
            alike &= r[k].v[m] == r[0].v[m];
        }
        mean /= (double)n;
        if (alike) /* exactly that value, no rounding's spread */
            mean = r[0].v[m];
        else
            for (unsigned k = 0; k < n; k++)
                var += (r[k].v[m] - mean) * (r[k].v[m] - mean);
        double sd = n > 1 ? sqrt(var / (double)(n - 1)) : NAN;
        row->mean[m] = mean;
        row->sd[m] = sd;
        row->ci[m] = n > 1 ? cli_t95(n - 1) * sd / sqrt((double)n) : NAN;
    }
}

/* The figures some point has: the table's columns. */
static uint32_t columns(const struct collector *c, struct row *rows)
{
    uint32_t cols = 0;
    for (size_t p = 0; p < c->n_points; p++)
        cols |= rows[p].have;
    return cols;
}

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

static void csv_real(FILE *f, double v)
{
    if (!isfinite(v)) return; /* an empty cell */
    char b[64];
    cli_fmt_real(b, sizeof b, v);
    fputs(b, f);
}

/* Whether name is one of the table's own columns: point, seed, n, status,
 * error, a figure or its _ci95. */
static int table_column(const char *name)
{
    static const char *const own[] = {"point", "seed", "n", "status", "error"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(name, own[i]) == 0) return 1;
    for (size_t m = 0; m < CLI_N_FIGURES; m++) {
        size_t len = strlen(cli_figures[m]);
        if (strncmp(name, cli_figures[m], len) == 0 &&
            (name[len] == '\0' || strcmp(name + len, "_ci95") == 0))
            return 1;
    }
    return 0;
}

/* Variable v's column in the CSV: its name, or ${NAME} when the name is
 * one of the table's own columns (one column per name). */
static void csv_var_column(FILE *f, const arb_sweep *sw, size_t v)
{
    const char *name = arb_sweep_var_name(sw, v);
    if (!table_column(name)) {
        csv_field(f, name);
        return;
    }
    fprintf(f, "${%s}", name); /* a name is letters, digits, '_', '.', '#' */
}

static void write_csv(FILE *f, const struct collector *c, const struct row *rows, uint32_t cols)
{
    fputs("point", f);
    for (size_t v = 0; v < arb_sweep_n_vars(c->sw); v++) {
        fputc(',', f);
        csv_var_column(f, c->sw, v);
    }
    fputs(",seed,n,status,error", f);
    for (size_t m = 0; m < CLI_N_FIGURES; m++)
        if (cols & (1u << m)) fprintf(f, ",%s,%s_ci95", cli_figures[m], cli_figures[m]);
    fputc('\n', f);
    for (size_t p = 0; p < c->n_points; p++) {
        const struct row *r = &rows[p];
        fprintf(f, "%zu", p);
        for (size_t v = 0; v < arb_sweep_n_vars(c->sw); v++) {
            fputc(',', f);
            csv_field(f, arb_sweep_value(c->sw, p, v));
        }
        fputc(',', f);
        if (r->have_seed) fprintf(f, "%llu", (unsigned long long)r->seed);
        fprintf(f, ",%u,%s,", c->reps, r->status);
        if (r->msg && strcmp(r->status, "done") != 0) csv_field(f, r->msg);
        for (size_t m = 0; m < CLI_N_FIGURES; m++) {
            if (!(cols & (1u << m))) continue;
            fputc(',', f);
            if (r->have & (1u << m)) csv_real(f, r->mean[m]);
            fputc(',', f);
            if (r->have & (1u << m)) csv_real(f, r->ci[m]);
        }
        fputc('\n', f);
    }
}

static char *json_text(const struct collector *c, const char *file, const struct row *rows,
                       uint32_t cols)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cli_json_head(o, CLI_SCHEMA_SWEEP);
    cJSON_AddStringToObject(o, "file", file);
    cJSON_AddNumberToObject(o, "points", (double)c->n_points);
    cJSON_AddNumberToObject(o, "replications", (double)c->reps);
    cJSON *vars = cJSON_AddArrayToObject(o, "variables");
    for (size_t v = 0; v < arb_sweep_n_vars(c->sw); v++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", arb_sweep_var_name(c->sw, v));
        cJSON *vals = cJSON_AddArrayToObject(e, "values");
        size_t stride = 1;
        for (size_t w = v + 1; w < arb_sweep_n_vars(c->sw); w++)
            stride *= arb_sweep_var_n_values(c->sw, w);
        for (size_t i = 0; i < arb_sweep_var_n_values(c->sw, v); i++)
            cJSON_AddItemToArray(vals, cJSON_CreateString(arb_sweep_value(c->sw, i * stride, v)));
        cJSON_AddItemToArray(vars, e);
    }
    cJSON *figs = cJSON_AddArrayToObject(o, "figures");
    for (size_t m = 0; m < CLI_N_FIGURES; m++)
        if (cols & (1u << m)) cJSON_AddItemToArray(figs, cJSON_CreateString(cli_figures[m]));
    cJSON *arr = cJSON_AddArrayToObject(o, "rows");
    for (size_t p = 0; p < c->n_points; p++) {
        const struct row *r = &rows[p];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "point", (double)p);
        cJSON *vals = cJSON_AddObjectToObject(e, "values");
        for (size_t v = 0; v < arb_sweep_n_vars(c->sw); v++)
            cJSON_AddStringToObject(vals, arb_sweep_var_name(c->sw, v),
                                    arb_sweep_value(c->sw, p, v));
        if (r->have_seed)
            cJSON_AddNumberToObject(e, "seed", (double)r->seed);
        else
            cJSON_AddNullToObject(e, "seed");
        cJSON_AddNumberToObject(e, "n", (double)c->reps);
        cJSON_AddStringToObject(e, "status", r->status);
        if (r->msg && strcmp(r->status, "done") != 0)
            cJSON_AddStringToObject(e, "error", r->msg);
        else
            cJSON_AddNullToObject(e, "error");
        cJSON *f = cJSON_AddObjectToObject(e, "figures");
        for (size_t m = 0; m < CLI_N_FIGURES; m++) {
            if (!(r->have & (1u << m))) continue;
            cJSON *x = cJSON_AddObjectToObject(f, cli_figures[m]);
            cli_json_real(x, "mean", r->mean[m]);
            cli_json_real(x, "ci95", r->ci[m]);
            cli_json_real(x, "sd", r->sd[m]);
        }
        cJSON_AddItemToArray(arr, e);
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static void write_text(FILE *f, const struct collector *c, const char *file, const struct row *rows,
                       const char *how, double wall)
{
    fprintf(f, "sweep %s: %zu point%s x %u replication%s, %s, %.3f s wall\n", file, c->n_points,
            c->n_points == 1 ? "" : "s", c->reps, c->reps == 1 ? "" : "s", how, wall);
    for (size_t p = 0; p < c->n_points; p++) {
        const struct row *r = &rows[p];
        fprintf(f, "point %zu", p);
        for (size_t v = 0; v < arb_sweep_n_vars(c->sw); v++)
            fprintf(f, " %s=%s", arb_sweep_var_name(c->sw, v), arb_sweep_value(c->sw, p, v));
        fprintf(f, ": %s", r->status);
        if (r->msg && strcmp(r->status, "done") != 0) fprintf(f, " (%s)", r->msg);
        fputc('\n', f);
        for (size_t m = 0; m < CLI_N_FIGURES; m++) {
            if (!(r->have & (1u << m))) continue;
            fprintf(f, "  %-24s %14.6f", cli_figures[m], r->mean[m]);
            if (isfinite(r->ci[m])) fprintf(f, " +- %.6f", r->ci[m]);
            fputc('\n', f);
        }
    }
}

/* The collector keeps every run's figures until the table is made: a
 * sweep whose records would take more than half this machine's memory is
 * refused before it starts, rather than fail (or swap) at the end. */
static int check_memory(const char *file, size_t n_tasks)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double need = (double)n_tasks * (double)sizeof(struct run_rec);
    double have = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    if (have == 0 || need <= have / 2) return 0;
    return cli_error("sweep",
                     "%s: %zu runs: their figures take %.1f GiB until the table is made, more "
                     "than half this machine's %.1f GiB (fewer points or replications)",
                     file, n_tasks, need / 1073741824.0, have / 1073741824.0);
}

/* Some point did not finish: one line saying how many and the first
 * (quiet or not: the exit status needs its reason). */
static int not_done(const struct collector *c, const struct row *rows)
{
    size_t n = 0, first = 0;
    for (size_t p = c->n_points; p-- > 0;)
        if (strcmp(rows[p].status, "done") != 0) {
            n++;
            first = p;
        }
    const struct row *r = &rows[first];
    fprintf(stderr, "arbor sweep: %zu of %zu point%s did not finish (point %zu: %s%s%s)\n", n,
            c->n_points, c->n_points == 1 ? "" : "s", first, r->status, r->msg ? ": " : "",
            r->msg ? r->msg : "");
    return CLI_EXIT_FAIL;
}

/* ---- the command --------------------------------------------------------- */

/* An output file: written to a temporary file beside it and renamed over
 * it once the table is complete, so that a sweep stopped (a signal, a
 * worker that died) leaves what was there before. */
struct out_file {
    const char *path;
    FILE *f;
    char *tmp; /* the temporary file's name, or NULL (stdout) */
};

/* The temporary files of this process, removed if a signal ends it. */
static char *volatile out_tmps[2];

static void out_track(char *tmp, int on)
{
    for (int i = 0; i < 2; i++)
        if (on ? out_tmps[i] == NULL : out_tmps[i] == tmp) {
            out_tmps[i] = on ? tmp : NULL;
            return;
        }
}

static void on_stop_signal(int sig)
{
    for (int i = 0; i < 2; i++)
        if (out_tmps[i]) unlink(out_tmps[i]);
    signal(sig, SIG_DFL);
    raise(sig); /* (forked workers die with this process: PR_SET_PDEATHSIG) */
}

static void out_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        signal(sigs[i], on_stop_signal);
}

static int out_open(struct out_file *o, const char *what)
{
    if (!o->path) return 0;
    if (strcmp(o->path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    size_t n = strlen(o->path) + 8;
    o->tmp = malloc(n);
    if (!o->tmp) return cli_error("sweep", "out of memory");
    snprintf(o->tmp, n, "%s.XXXXXX", o->path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        return cli_error("sweep", "%s: cannot write %s: %s", what, o->path, strerror(e));
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) < 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        return cli_error("sweep", "%s: cannot write %s: %s", what, o->path, strerror(e));
    }
    out_track(o->tmp, 1);
    return 0;
}

/* The table is not to be written: the temporary file goes, the old stays. */
static void out_discard(struct out_file *o)
{
    if (o->f && o->f != stdout) fclose(o->f);
    o->f = NULL;
    if (!o->tmp) return;
    out_track(o->tmp, 0);
    unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
}

/* The table written (ok): the file put in place. 0 when it could not be. */
static int out_close(struct out_file *o, const char *what, int ok)
{
    if (!o->f) return ok;
    if (!ok) {
        out_discard(o);
        return ok;
    }
    int bad = ferror(o->f) || (o->f == stdout ? fflush(o->f) != 0 : fclose(o->f) != 0);
    o->f = NULL;
    if (o->tmp) {
        out_track(o->tmp, 0);
        if (bad || rename(o->tmp, o->path) != 0) {
            bad = 1;
            unlink(o->tmp);
        }
        free(o->tmp);
        o->tmp = NULL;
    }
    if (bad) {
        fprintf(stderr, "arbor sweep: %s: cannot write %s\n", what, o->path);
        return 0;
    }
    return ok;
}

/* -s KEY=V on a key the sweep sets for every point (a ${...} in its
 * value, or run.seed under sweep.seeds) would run every point with V while
 * the table shows the swept values: refused. */
static int check_sets(const arb_sweep *sw, const char *file, char *const *sets, int n_sets, int say)
{
    for (int i = 0; i < n_sets; i++) {
        char name[128];
        const char *eq = strchr(sets[i], '=');
        size_t n = eq ? (size_t)(eq - sets[i]) : strlen(sets[i]);
        while (n && (sets[i][n - 1] == ' ' || sets[i][n - 1] == '\t'))
            n--;
        if (n >= sizeof name) continue; /* (the scenario's own check refuses it) */
        memcpy(name, sets[i], n);
        name[n] = '\0';
        char *dot = strchr(name, '.');
        if (dot) *dot = '\0';
        const char *sec = dot ? name : NULL, *key = dot ? dot + 1 : name;
        if (!dot && strcmp(key, "seed") == 0) sec = "run"; /* a bare seed is run.seed */
        unsigned at = arb_sweep_sets_key(sw, sec, key);
        if (!at) continue;
        if (say)
            cli_error("sweep",
                      "-s %.*s: %s:%u sets it for every point; a -s would run them all with one "
                      "value (change the values in the file)",
                      (int)n, sets[i], file, at);
        return CLI_EXIT_USAGE;
    }
    return 0;
}

/* Every point must load (its values checked) before any runs. Prints the
 * first error on rank 0. */
static int check_points(const arb_sweep *sw, char *const *sets, int n_sets, int say)
{
    char err[1024];
    for (size_t p = 0; p < arb_sweep_n_points(sw); p++) {
        arb_scenario *sc;
        if (arb_scenario_new(&sc) < 0) {
            if (say) fprintf(stderr, "arbor sweep: out of memory\n");
            return CLI_EXIT_FAIL;
        }
        int rc = arb_sweep_point_load(sw, p, sc, err, sizeof err);
        for (int i = 0; rc == 0 && i < n_sets; i++)
            rc = arb_scenario_set(sc, sets[i], err, sizeof err);
        arb_scenario_free(sc);
        if (rc < 0) {
            if (say) cli_error("sweep", "%s", err);
            return rc == ARB_ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
        }
    }
    return 0;
}

static int list_points(const arb_sweep *sw)
{
    printf("%zu point%s x %u replication%s\n", arb_sweep_n_points(sw),
           arb_sweep_n_points(sw) == 1 ? "" : "s", arb_sweep_n_reps(sw),
           arb_sweep_n_reps(sw) == 1 ? "" : "s");
    for (size_t p = 0; p < arb_sweep_n_points(sw); p++) {
        printf("%zu", p);
        for (size_t v = 0; v < arb_sweep_n_vars(sw); v++)
            printf(" %s=%s", arb_sweep_var_name(sw, v), arb_sweep_value(sw, p, v));
        printf("\n");
    }
    return CLI_EXIT_OK;
}

static unsigned cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

struct opts {
    const char *file;
    char **sets;
    int n_sets;
    unsigned procs; /* 0: one per core */
    struct out_file csv, json;
    int list, mpi, quiet, progress;
};

static int parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option lopts[] = {
        {"set", required_argument, NULL, 's'}, {"procs", required_argument, NULL, 'n'},
        {"csv", required_argument, NULL, 'c'}, {"json", required_argument, NULL, 'j'},
        {"list", no_argument, NULL, 'l'},      {"mpi", no_argument, NULL, 'M'},
        {"progress", no_argument, NULL, 'P'},  {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},      {0, 0, 0, 0}};
    cli_getopt_start(lopts);
    int c;
    while ((c = getopt_long(argc, argv, ":s:n:qh", lopts, NULL)) != -1) {
        uint64_t v;
        switch (c) {
        case 'h':
            fputs(sweep_usage, stdout);
            printf("\nThis arbor: %s\n", sweep_mpi_built()
                                             ? "built with MPI"
                                             : "built without MPI (on one machine only)");
            return -1;
        case 's':
            o->sets[o->n_sets++] = optarg;
            break;
        case 'n':
            if (cli_parse_u64(optarg, 4096, &v) < 0 || v == 0)
                return cli_error("sweep", "--procs: '%s' is not a count from 1 to 4096", optarg);
            o->procs = (unsigned)v;
            break;
        case 'c':
            o->csv.path = optarg;
            break;
        case 'j':
            o->json.path = optarg;
            break;
        case 'l':
            o->list = 1;
            break;
        case 'M':
            o->mpi = 1;
            break;
        case 'P':
            o->progress = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        default:
            return cli_bad_option("sweep", c, argv);
        }
    }
    for (int i = optind; i < argc; i++) {
        if (o->file)
            return cli_error("sweep", "one scenario file only ('%s' and '%s')", o->file, argv[i]);
        o->file = argv[i];
    }
    if (!o->file) return cli_error("sweep", "a scenario FILE is needed; run 'arbor sweep --help'");
    if (o->csv.path && o->json.path && strcmp(o->csv.path, "-") == 0 &&
        strcmp(o->json.path, "-") == 0)
        return cli_error("sweep", "--csv and --json cannot both write to stdout");
    if (o->list && (o->csv.path || o->json.path))
        return cli_error("sweep", "--list prints the points and runs nothing: not with %s",
                         o->csv.path ? "--csv" : "--json");
    for (int i = 0; i < o->n_sets; i++)
        if (strncmp(o->sets[i], "sweep.", 6) == 0)
            return cli_error("sweep", "-s %s: [sweep] (repeat, seeds) is the file's: set it there",
                             o->sets[i]);
    for (int i = 0; i < o->n_sets; i++)
        if (strstr(o->sets[i], "${"))
            return cli_error("sweep",
                             "-s %s: -s sets one value in every point; sweep variables go in "
                             "the file",
                             o->sets[i]);
    return 0;
}

/* The run itself, once the options are known and, under MPI, every rank
 * is up. rank 0 collects and writes. */
/* Rank 0, every run in: the table (CSV, JSON, text) from the records;
 * the exit status. */
static int report(struct opts *o, struct collector *c, const char *how, double wall)
{
    int st = 0;
    struct row *rows = calloc(c->n_points ? c->n_points : 1, sizeof *rows);
    if (!rows || c->oom) {
        fprintf(stderr, "arbor sweep: out of memory\n");
        st = CLI_EXIT_FAIL;
    } else {
        int all_done = 1;
        for (size_t p = 0; p < c->n_points; p++) {
            make_row(c, p, &rows[p]);
            all_done &= strcmp(rows[p].status, "done") == 0;
        }
        uint32_t cols = columns(c, rows);
        int ok = 1;
        if (o->csv.f) write_csv(o->csv.f, c, rows, cols);
        if (o->json.f) {
            char *s = json_text(c, o->file, rows, cols);
            if (s) {
                fputs(s, o->json.f);
                fputc('\n', o->json.f);
            } else {
                ok = 0;
            }
            free(s);
        }
        if (o->csv.f != stdout && o->json.f != stdout)
            write_text(stdout, c, o->file, rows, how, wall);
        ok = out_close(&o->csv, "--csv", ok);
        ok = out_close(&o->json, "--json", ok);
        if (!ok)
            st = CLI_EXIT_FAIL;
        else if (!all_done)
            st = not_done(c, rows);
    }
    free(rows);
    return st;
}

static int sweep_main(struct opts *o, int use_mpi, int rank, int size)
{
    char err[1024];
    arb_sweep *sw = NULL;
    int rc = arb_sweep_load(o->file, &sw, err, sizeof err);
    int st = rc < 0 ? (rc == ARB_ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE) : 0;
    if (rc < 0) {
        if (rank == 0 || !use_mpi)
            cli_error("sweep", "%s", err);
        else
            fprintf(stderr, "arbor sweep: rank %d: %s\n", rank, err);
    }
    if (st == 0) st = check_sets(sw, o->file, o->sets, o->n_sets, rank == 0);
    if (st == 0) st = check_points(sw, o->sets, o->n_sets, rank == 0);
    struct collector c;
    memset(&c, 0, sizeof c);
    if (st == 0) {
        c.sw = sw;
        c.n_points = arb_sweep_n_points(sw);
        c.reps = arb_sweep_n_reps(sw);
        c.n_tasks = c.n_points * c.reps;
        if (c.n_tasks > UINT32_MAX)
            st = rank == 0 ? cli_error("sweep", "%s: %zu runs (points x replications): at most %u",
                                       o->file, c.n_tasks, UINT32_MAX)
                           : CLI_EXIT_USAGE;
        else if (rank == 0 && !o->list)
            st = check_memory(o->file, c.n_tasks);
    }
    if (st == 0 && rank == 0 && !o->list) {
        /* rank 0 keeps every run's record until the table is made */
        c.runs = calloc(c.n_tasks, sizeof *c.runs);
        c.point_done = calloc(c.n_points, sizeof *c.point_done);
        if (!c.runs || !c.point_done) {
            fprintf(stderr, "arbor sweep: out of memory (%zu runs)\n", c.n_tasks);
            st = CLI_EXIT_FAIL;
        }
        if (st == 0) st = out_open(&o->csv, "--csv");
        if (st == 0) st = out_open(&o->json, "--json");
        if (st == 0) out_signals();
    }
    if (use_mpi && !sweep_mpi_all_ok(st == 0)) {
        if (st == 0) st = CLI_EXIT_USAGE; /* another rank said why */
    }
    if (st == 0 && o->list) {
        if (rank == 0) list_points(sw);
        arb_sweep_free(sw);
        return CLI_EXIT_OK;
    }
    if (st) {
        out_discard(&o->csv);
        out_discard(&o->json);
        free(c.runs);
        free(c.point_done);
        arb_sweep_free(sw);
        return st;
    }
    c.tty = rank == 0 && !o->quiet && isatty(STDERR_FILENO);
    c.lines = rank == 0 && !o->quiet && o->progress && !c.tty;
    clock_gettime(CLOCK_MONOTONIC, &c.t0);
    struct sweep_job job = {sw, o->sets, o->n_sets, c.n_tasks};
    unsigned procs = o->procs ? o->procs : cores();
    char how[64];
    if (use_mpi) {
        snprintf(how, sizeof how, "%d MPI rank%s", size, size == 1 ? "" : "s");
        sweep_mpi_run(&job, put, &c);
    } else {
        unsigned used = procs < c.n_tasks ? procs : (unsigned)c.n_tasks;
        snprintf(how, sizeof how, "%u process%s", used, used == 1 ? "" : "es");
        if (sweep_local(&job, procs, put, &c, err, sizeof err) < 0) {
            if (c.tty) fputc('\n', stderr);
            fprintf(stderr, "arbor sweep: %s\n", err);
            st = CLI_EXIT_FAIL;
        }
    }
    double wall = since(&c.t0);
    if (c.tty) fputc('\n', stderr);
    if (rank == 0 && st == 0) st = report(o, &c, how, wall);
    out_discard(&o->csv); /* (written and closed already, unless the sweep stopped) */
    out_discard(&o->json);
    if (c.runs)
        for (size_t t = 0; t < c.n_tasks; t++)
            free(c.runs[t].msg);
    free(c.runs);
    free(c.point_done);
    arb_sweep_free(sw);
    return st;
}

int cmd_sweep(int argc, char **argv)
{
    struct opts o;
    memset(&o, 0, sizeof o);
    o.sets = calloc((size_t)argc + 1, sizeof *o.sets);
    if (!o.sets) {
        fprintf(stderr, "arbor sweep: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    int st = parse_opts(argc, argv, &o);
    if (st) {
        free(o.sets);
        return st < 0 ? CLI_EXIT_OK : st;
    }
    int use_mpi = o.mpi || sweep_mpi_launched();
    if (use_mpi && !sweep_mpi_built()) {
        free(o.sets);
        return cli_error("sweep",
                         "%s, but this arbor was built without MPI: install Open MPI "
                         "(Debian: libopenmpi-dev openmpi-bin) and rebuild, or run "
                         "'arbor sweep FILE' alone (one process per core of this machine)",
                         o.mpi ? "--mpi asks for MPI" : "started by an MPI launcher");
    }
    if (use_mpi && o.procs) {
        free(o.sets);
        return cli_error("sweep", "--procs: under MPI each rank is one process; start more ranks");
    }
    int rank = 0, size = 1;
    if (use_mpi) {
        char err[256];
        if (sweep_mpi_init(&rank, &size, err, sizeof err) < 0) {
            free(o.sets);
            fprintf(stderr, "arbor sweep: %s\n", err);
            return CLI_EXIT_FAIL;
        }
    }
    st = sweep_main(&o, use_mpi, rank, size);
    if (use_mpi) sweep_mpi_finalize();
    free(o.sets);
    return st;
}
