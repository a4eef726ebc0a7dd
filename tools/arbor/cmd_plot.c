/*
 * arbor plot: turn the CSV files of `arbor sim --csv PREFIX` into PNG
 * figures with gnuplot: link utilisation per tier over time, queue depth
 * over time, the CDF of flow completion times, and for Arbor runs each
 * rank's completion and the slots live over time. Several runs are drawn
 * over each other, one legend entry per run (docs/simulator.md).
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char plot_usage[] =
    "usage: arbor plot PREFIX [PREFIX...] [-o DIR] [-n NAME] [--script FILE]\n"
    "       arbor plot --sweep TABLE -x VARIABLE -y FIGURE [-o DIR] [-n NAME] [--script FILE]\n"
    "\n"
    "Read the CSV files of 'arbor sim --csv PREFIX' and draw with gnuplot, one\n"
    "PNG per figure, every run given drawn over the others with its name\n"
    "(the last part of its PREFIX) in the legend:\n"
    "  DIR/NAME-util.png    utilisation of every port class (tier, up or down) over time\n"
    "  DIR/NAME-queue.png   mean and deepest queue of every port class over time\n"
    "  DIR/NAME-fct.png     CDF of flow completion times (runs with completed flows)\n"
    "  DIR/NAME-ranks.png   each rank's completion time (Arbor runs: PREFIX-ranks.csv)\n"
    "  DIR/NAME-slots.png   aggregation slots live over time (Arbor runs: PREFIX-slots.csv)\n"
    "NAME is the run's name, or NAME1-vs-NAME2... for several; DIR defaults to\n"
    "the directory of the first PREFIX. Prints the files written, one a line.\n"
    "The figures over time need samples: a run with run.sample = 0 gets the\n"
    "others, and one note on stderr says to run with -s run.sample=10us.\n"
    "Where two series can be equal (deepest and mean queue; all slots and the\n"
    "most in one switch) the larger is a wide translucent band, the other a\n"
    "dashed line over it. A utilisation sample may read above 1: a packet\n"
    "counts in the sample it starts in.\n"
    "\n"
    "With --sweep, read the table of 'arbor sweep --csv TABLE' and draw FIGURE (a\n"
    "column, as cct_us) against the swept VARIABLE, the mean with its 95% confidence\n"
    "interval as error bars, one line per combination of the other variables:\n"
    "DIR/NAME-FIGURE-vs-VARIABLE.png (NAME: the table's name without .csv).\n"
    "\n"
    "-o, --output DIR  write the figures into DIR (it must exist)\n"
    "-n, --name NAME   name the figures NAME-*.png\n"
    "--script FILE     also write the gnuplot script to FILE\n"
    "--sweep TABLE     a sweep's table; -x, --x VARIABLE and -y, --y FIGURE say what to draw\n"
    "\n"
    "Exit status: 0 a figure or more drawn, 1 gnuplot missing or failed, 2 bad\n"
    "usage, a missing or malformed CSV file, or nothing to draw (one line on\n"
    "stderr naming it).\n";

#define MAX_COLS 64

/* Read a whole file; NULL with errno set on failure. */
char *cli_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            errno = ENOMEM;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) return NULL;
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* Split the first line of text at commas into cols (pointers into a copy
 * the caller frees); returns the count, or -1 when it is empty or too wide. */
static int header(const char *text, char **copy, char *cols[MAX_COLS])
{
    size_t len = strcspn(text, "\r\n");
    *copy = malloc(len + 1);
    if (!*copy) return -1;
    memcpy(*copy, text, len);
    (*copy)[len] = '\0';
    int n = 0;
    char *p = *copy;
    while (*p) {
        if (n == MAX_COLS) return -1;
        cols[n++] = p;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

struct csv {
    char path[4096];
    char *text;
    char *hcopy;
    char *cols[MAX_COLS];
    int ncols;
};

static void csv_free(struct csv *c)
{
    free(c->text);
    free(c->hcopy);
}

/* Load PREFIX-SUFFIX.csv and check that its first column is `first`. An
 * optional file that does not exist leaves c->text NULL. */
static int csv_load_opt(struct csv *c, const char *prefix, const char *suffix, const char *first,
                        int optional)
{
    memset(c, 0, sizeof *c);
    int w = snprintf(c->path, sizeof c->path, "%s-%s.csv", prefix, suffix);
    if (w < 0 || (size_t)w >= sizeof c->path) return cli_error("plot", "%s: path too long", prefix);
    c->text = cli_slurp(c->path);
    if (!c->text && optional && errno == ENOENT) return CLI_EXIT_OK;
    if (!c->text) return cli_error("plot", "%s: cannot open: %s", c->path, strerror(errno));
    c->ncols = header(c->text, &c->hcopy, c->cols);
    if (c->ncols < 2 || strcmp(c->cols[0], first) != 0)
        return cli_error("plot", "%s:1: expected a header starting with %s", c->path, first);
    return CLI_EXIT_OK;
}

static int csv_load(struct csv *c, const char *prefix, const char *suffix, const char *first)
{
    return csv_load_opt(c, prefix, suffix, first, 0);
}

/* Rows after the header line. */
static size_t csv_rows(const struct csv *c)
{
    size_t n = 0;
    const char *p = c->text ? strchr(c->text, '\n') : NULL;
    while (p && p[1]) {
        n++;
        p = strchr(p + 1, '\n');
    }
    return n;
}

/* gnuplot reads the CSV files itself, inside single quotes. */
static int quotable(const char *s)
{
    return strpbrk(s, "'\n\r") == NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The fct_us column of every completed flow, sorted. */
static int fct_values(const struct csv *c, double **out, size_t *n_out)
{
    int col = -1;
    for (int i = 0; i < c->ncols; i++)
        if (strcmp(c->cols[i], "fct_us") == 0) col = i;
    if (col < 0) return cli_error("plot", "%s:1: no fct_us column", c->path);
    size_t cap = 1024, n = 0;
    double *v = malloc(cap * sizeof *v);
    if (!v) return cli_error("plot", "out of memory");
    const char *line = strchr(c->text, '\n');
    unsigned lineno = 1;
    while (line && line[1]) {
        line++;
        lineno++;
        const char *p = line;
        for (int i = 0; i < col && p; i++) {
            p = strpbrk(p, ",\n");
            if (p && *p == ',')
                p++;
            else
                p = NULL;
        }
        if (!p) {
            free(v);
            return cli_error("plot", "%s:%u: fewer than %d fields", c->path, lineno, col + 1);
        }
        if (*p != ',' && *p != '\n' && *p != '\r' && *p != '\0') {
            char *end;
            errno = 0;
            double x = strtod(p, &end);
            if (end == p || errno || (*end != '\n' && *end != '\r' && *end != ',' && *end)) {
                free(v);
                return cli_error("plot", "%s:%u: fct_us: not a number", c->path, lineno);
            }
            if (n == cap) {
                double *nv = realloc(v, 2 * cap * sizeof *v);
                if (!nv) {
                    free(v);
                    return cli_error("plot", "out of memory");
                }
                v = nv;
                cap *= 2;
            }
            v[n++] = x;
        }
        line = strchr(line, '\n');
    }
    qsort(v, n, sizeof *v, cmp_double);
    *out = v;
    *n_out = n;
    return CLI_EXIT_OK;
}

/* gnuplot on PATH, found the way execvp would. */
int cli_have_gnuplot(void)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char buf[4096];
    while (*path) {
        size_t n = strcspn(path, ":");
        if (n > 0 && n + sizeof "/gnuplot" <= sizeof buf) {
            memcpy(buf, path, n);
            memcpy(buf + n, "/gnuplot", sizeof "/gnuplot");
            if (access(buf, X_OK) == 0) return 1;
        }
        path += n;
        if (*path == ':') path++;
    }
    return 0;
}

/* One run: its name and files. */
struct run {
    const char *prefix;
    char name[256];
    struct csv util, queue, flows, ranks, slots;
    double *fct;
    size_t n_fct;
    int sampled; /* util and queue have rows: run.sample was above 0 */
    int jobs;    /* jobs in ranks.csv (its largest job + 1), 0 without it */
};

static void run_free(struct run *r)
{
    free(r->fct);
    csv_free(&r->util);
    csv_free(&r->queue);
    csv_free(&r->flows);
    csv_free(&r->ranks);
    csv_free(&r->slots);
}

/* The jobs of a ranks.csv: its largest job (first column) + 1. */
static int jobs_of(const struct csv *c)
{
    int jobs = 0;
    for (const char *p = c->text ? strchr(c->text, '\n') : NULL; p && p[1];
         p = strchr(p + 1, '\n')) {
        long j = strtol(p + 1, NULL, 10);
        if (j >= jobs && j < 1 << 20) jobs = (int)j + 1;
    }
    return jobs;
}

static int run_load(struct run *r, const char *prefix)
{
    memset(r, 0, sizeof *r);
    r->prefix = prefix;
    if (!quotable(prefix)) return cli_error("plot", "%s: a quote or newline in the path", prefix);
    const char *slash = strrchr(prefix, '/');
    const char *name = slash ? slash + 1 : prefix;
    if (!*name) return cli_error("plot", "%s: the prefix names a directory", prefix);
    snprintf(r->name, sizeof r->name, "%s", name);
    int rc = csv_load(&r->util, prefix, "util", "time_us");
    if (rc == CLI_EXIT_OK) rc = csv_load(&r->queue, prefix, "queue", "time_us");
    if (rc == CLI_EXIT_OK) rc = csv_load(&r->flows, prefix, "flows", "id");
    if (rc == CLI_EXIT_OK) rc = fct_values(&r->flows, &r->fct, &r->n_fct);
    if (rc == CLI_EXIT_OK) rc = csv_load_opt(&r->ranks, prefix, "ranks", "job", 1);
    if (rc == CLI_EXIT_OK) rc = csv_load_opt(&r->slots, prefix, "slots", "time_us", 1);
    r->sampled = rc == CLI_EXIT_OK && csv_rows(&r->util) > 0 && csv_rows(&r->queue) > 0;
    r->jobs = r->ranks.text ? jobs_of(&r->ranks) : 0;
    return rc;
}

/* Title, key and grid of every figure: the key outside on the right, in
 * a box, where it hides no line. */
static void set_common(FILE *g, const char *png)
{
    fprintf(g, "set terminal pngcairo size 1000,600\nset output '%s'\n", png);
    fprintf(g, "set key outside right top box noenhanced\nset grid\n");
    fprintf(g, "set datafile separator ','\n");
}

/* A series' title: the column's, prefixed by the run's name when several. */
static void series_title(FILE *g, const struct run *r, int several, const char *what)
{
    if (several)
        fprintf(g, "title \"%s: %s\"", r->name, what);
    else
        fprintf(g, "title \"%s\"", what);
}

/* Series colours (gnuplot's default set), one per series of a figure. */
static const char *colour(int i)
{
    static const char *const c[] = {"9400d3", "009e73", "56b4e9", "e69f00",
                                    "0072b2", "e51e10", "000000", "f0e442"};
    return c[i % (int)(sizeof c / sizeof c[0])];
}

/* A pair drawn as a band and a line, so that neither hides the other when
 * they are equal: the larger (`wide`, column wc) first, wide and
 * translucent, then the smaller (`thin`, column tc) dashed over it in the
 * same colour; `scale` divides both. */
static void band_and_line(FILE *g, int *first, int series, const struct run *r, int several,
                          const char *path, int wc, const char *wide, int tc, const char *thin,
                          const char *scale)
{
    const char *col = colour(series);
    fprintf(g, "%s'%s' skip 1 using 1:(column(%d)%s) with lines lw 6 lc rgb '#a0%s' ",
            *first ? "" : ", ", path, wc, scale, col);
    series_title(g, r, several, wide);
    fprintf(g, ", '%s' skip 1 using 1:(column(%d)%s) with lines lw 1.5 dt 2 lc rgb '#%s' ", path,
            tc, scale, col);
    series_title(g, r, several, thin);
    *first = 0;
}

enum fig { FIG_UTIL, FIG_QUEUE, FIG_FCT, FIG_RANKS, FIG_SLOTS, N_FIG };
static const char *const fig_suffix[N_FIG] = {"util", "queue", "fct", "ranks", "slots"};

static int has_fig(const struct run *r, enum fig f)
{
    switch (f) {
    case FIG_UTIL:
    case FIG_QUEUE:
        return r->sampled;
    case FIG_FCT:
        return r->n_fct > 0;
    case FIG_RANKS:
        return r->ranks.text && csv_rows(&r->ranks) > 0;
    case FIG_SLOTS:
        return r->slots.text && csv_rows(&r->slots) > 0;
    default:
        return 0;
    }
}

/* An Arbor run: it has ranks (and would have slots, sampled). */
static int arbor_run(const struct run *r)
{
    return has_fig(r, FIG_RANKS);
}

/* The most jobs of any run with ranks: 1 labels the x axis "rank". */
static int most_jobs(const struct run *runs, int n)
{
    int j = 0;
    for (int i = 0; i < n; i++)
        if (runs[i].jobs > j) j = runs[i].jobs;
    return j;
}

/* Title and axis labels (with units) of figure f for the runs at hand. */
static void fig_labels(FILE *g, enum fig f, const struct run *runs, int n)
{
    static const char *const titles[N_FIG] = {
        "link utilisation per port class\\n(a packet counts in the sample it starts in: a "
        "sample may read up to a packet above 1)",
        "queue depth per port class (wide: deepest port, dashed: mean over its ports)",
        "flow completion time CDF", "completion time of every rank",
        "aggregation slots live (wide: all switches, dashed: the most in one switch)"};
    static const char *const xl[N_FIG] = {"time (us)", "time (us)", "flow completion time (us)",
                                          "rank", "time (us)"};
    static const char *const yl[N_FIG] = {"utilisation (bits sent / capacity, fraction)",
                                          "queue (KB)", "fraction of flows completed (CDF)",
                                          "rank done at (us)", "slots live (count)"};
    int jobs = f == FIG_RANKS ? most_jobs(runs, n) : 0;
    fprintf(g, "set title \"%s\" noenhanced\n", titles[f]);
    if (jobs > 1)
        fprintf(g, "set xlabel \"rank: job 0's ranks, then job 1's, ... (%d jobs)\" noenhanced\n",
                jobs);
    else
        fprintf(g, "set xlabel '%s'\n", xl[f]);
    fprintf(g, "set ylabel '%s'\nset yrange [0:*]\n", yl[f]);
    if (f == FIG_FCT) fprintf(g, "set yrange [0:1.02]\nset datafile separator whitespace\n");
    if (f == FIG_RANKS) fprintf(g, "set offsets 0.5, 0.5, 0, 0\n"); /* the end ranks in view */
}

/* The plot clauses of figure f for run r (its series from *series on). */
static void fig_series(FILE *g, enum fig f, struct run *r, int i, int several, int jobs, int *first,
                       int *series)
{
    char what[96];
    switch (f) {
    case FIG_UTIL:
        for (int c = 1; c < r->util.ncols; c++) {
            fprintf(g, "%s'%s' skip 1 using 1:%d with lines lw 2 lc rgb '#%s' ", *first ? "" : ", ",
                    r->util.path, c + 1, colour((*series)++));
            series_title(g, r, several, r->util.cols[c]);
            *first = 0;
        }
        break;
    case FIG_QUEUE:
        for (int c = 1; c + 1 < r->queue.ncols; c += 2) {
            /* columns CLASS_mean, CLASS_max: the class's name once */
            char wide[96], thin[96];
            int cl = (int)strlen(r->queue.cols[c]) - (int)strlen("_mean");
            snprintf(wide, sizeof wide, "%.*s deepest", cl > 0 ? cl : 0, r->queue.cols[c]);
            snprintf(thin, sizeof thin, "%.*s mean", cl > 0 ? cl : 0, r->queue.cols[c]);
            band_and_line(g, first, (*series)++, r, several, r->queue.path, c + 2, wide, c + 1,
                          thin, "/1000");
        }
        break;
    case FIG_FCT:
        fprintf(g, "%s$cdf%d using 1:2 with steps lw 2 lc rgb '#%s' ", *first ? "" : ", ", i,
                colour((*series)++));
        snprintf(what, sizeof what, "%zu completed flows", r->n_fct);
        series_title(g, r, several, what);
        *first = 0;
        break;
    case FIG_RANKS:
        /* one job: x is the rank; several: the rows, job after job */
        fprintf(g, "%s'%s' skip 1 using %s:4 with linespoints pt 7 lc rgb '#%s' ",
                *first ? "" : ", ", r->ranks.path, jobs > 1 ? "0" : "2", colour((*series)++));
        series_title(g, r, several, "done (us)");
        *first = 0;
        break;
    case FIG_SLOTS:
        band_and_line(g, first, (*series)++, r, several, r->slots.path, 2, "all switches", 3,
                      "most in one switch", "");
        break;
    default:
        break;
    }
}

/* The gnuplot script of figure f over the runs that have it. */
static void script_fig(FILE *g, enum fig f, const char *png, struct run *runs, int n)
{
    int several = n > 1, first = 1, series = 0, jobs = most_jobs(runs, n);
    if (f == FIG_FCT)
        for (int i = 0; i < n; i++) {
            if (!has_fig(&runs[i], f)) continue;
            fprintf(g, "$cdf%d << EOD\n", i);
            for (size_t k = 0; k < runs[i].n_fct; k++)
                fprintf(g, "%.6f %.9f\n", runs[i].fct[k], (double)(k + 1) / runs[i].n_fct);
            fprintf(g, "EOD\n");
        }
    set_common(g, png);
    fig_labels(g, f, runs, n);
    fprintf(g, "plot ");
    for (int i = 0; i < n; i++)
        if (has_fig(&runs[i], f)) fig_series(g, f, &runs[i], i, several, jobs, &first, &series);
    fprintf(g, "\nreset\n");
}

/* One note on stderr when a run without samples misses figures another
 * setting would have drawn: which runs, and the key that samples. */
static void note_unsampled(const struct run *runs, int n)
{
    char who[1024] = "";
    int missing = 0;
    for (int i = 0; i < n; i++) {
        if (runs[i].sampled) continue;
        size_t u = strlen(who);
        snprintf(who + u, sizeof who - u, "%s%s", u ? ", " : "", runs[i].prefix);
        missing = 1;
    }
    if (!missing) return;
    int arbor = 0;
    for (int i = 0; i < n; i++)
        arbor |= !runs[i].sampled && arbor_run(&runs[i]);
    fprintf(stderr,
            "arbor plot: note: %s: no samples (run.sample was 0), so no %s over time; "
            "'arbor sim -s run.sample=10us --csv ...' samples\n",
            who, arbor ? "utilisation, queue and slots figures" : "utilisation and queue figures");
}

/* Where the figures go and under which name: DIR/NAME-FIGURE.png for
 * each figure into png (DIR: the first run's directory, NAME: the runs'
 * names joined by -vs-, unless given). 0 or an exit status. */
static int png_paths(const struct run *runs, int n, const char *dir, const char *name,
                     char png[N_FIG][4096])
{
    char pdir[4096], fname[1024];
    if (!dir) {
        const char *prefix = runs[0].prefix, *slash = strrchr(prefix, '/');
        size_t len = slash ? (size_t)(slash - prefix) : 1;
        if (len + 2 >= sizeof pdir) return cli_error("plot", "%s: path too long", prefix);
        if (slash)
            memcpy(pdir, prefix, len);
        else
            pdir[0] = '.';
        if (slash && len == 0) pdir[len++] = '/';
        pdir[len] = '\0';
        dir = pdir;
    }
    if (name) {
        snprintf(fname, sizeof fname, "%s", name);
    } else {
        fname[0] = '\0';
        for (int i = 0; i < n; i++) {
            size_t used = strlen(fname);
            snprintf(fname + used, sizeof fname - used, "%s%s", i ? "-vs-" : "", runs[i].name);
        }
    }
    for (int f = 0; f < N_FIG; f++) {
        int w = snprintf(png[f], sizeof png[f], "%s/%s-%s.png", dir, fname, fig_suffix[f]);
        if (w < 0 || (size_t)w >= sizeof png[f]) return cli_error("plot", "%s: path too long", dir);
        if (!quotable(png[f])) return cli_error("plot", "%s: a quote or newline in the path", dir);
    }
    return CLI_EXIT_OK;
}

/* The wanted figures through gnuplot (and into the --script file),
 * naming each PNG made: 0 or an exit status. */
static int draw_figures(struct run *runs, int n, const int want[N_FIG], char png[N_FIG][4096],
                        const char *script)
{
    if (!cli_have_gnuplot()) {
        fprintf(stderr, "arbor plot: needs gnuplot (Debian package gnuplot-nox), not found on "
                        "PATH\n");
        return CLI_EXIT_FAIL;
    }
    FILE *sf = NULL;
    if (script && !(sf = fopen(script, "w")))
        return cli_error("plot", "--script: cannot write %s: %s", script, strerror(errno));
    int rc = CLI_EXIT_OK;
    FILE *g = popen("gnuplot", "w");
    if (!g) {
        fprintf(stderr, "arbor plot: cannot start gnuplot\n");
        rc = CLI_EXIT_FAIL;
    } else {
        for (int f = 0; f < N_FIG; f++)
            if (want[f]) {
                script_fig(g, (enum fig)f, png[f], runs, n);
                if (sf) script_fig(sf, (enum fig)f, png[f], runs, n);
            }
        int st = pclose(g);
        if (st != 0) {
            fprintf(stderr, "arbor plot: gnuplot failed (status %d)\n",
                    WIFEXITED(st) ? WEXITSTATUS(st) : st);
            rc = CLI_EXIT_FAIL;
        } else {
            for (int f = 0; f < N_FIG; f++)
                if (want[f]) printf("%s\n", png[f]);
            note_unsampled(runs, n);
        }
    }
    if (sf && fclose(sf) != 0 && rc == CLI_EXIT_OK)
        rc = cli_error("plot", "--script: cannot write %s", script);
    return rc;
}

/* What arbor plot was asked for. */
struct plot_opts {
    const char *dir, *name, *script, *sweep, *xv, *yf;
};

/* One option of arbor plot (cli_options). */
static int plot_option(int c, const char *v, char **argv, void *ctx)
{
    struct plot_opts *o = ctx;
    switch (c) {
    case 'h':
        fputs(plot_usage, stdout);
        return CLI_EXIT_OK;
    case 'o':
        o->dir = v;
        return CLI_GO_ON;
    case 'n':
        o->name = v;
        return CLI_GO_ON;
    case 's':
        o->script = v;
        return CLI_GO_ON;
    case 'S':
        o->sweep = v;
        return CLI_GO_ON;
    case 'x':
        o->xv = v;
        return CLI_GO_ON;
    case 'y':
        o->yf = v;
        return CLI_GO_ON;
    default:
        return cli_bad_option("plot", c, argv);
    }
}

int cmd_plot(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"output", required_argument, NULL, 'o'}, {"name", required_argument, NULL, 'n'},
        {"script", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
        {"sweep", required_argument, NULL, 'S'},  {"x", required_argument, NULL, 'x'},
        {"y", required_argument, NULL, 'y'},      {0, 0, 0, 0}};
    struct plot_opts o = {0};
    int st = cli_options(argc, argv, ":o:n:x:y:h", lopts, plot_option, &o);
    if (st != CLI_GO_ON) return st;
    const char *dir = o.dir, *name = o.name, *script = o.script, *sweep = o.sweep, *xv = o.xv,
               *yf = o.yf;
    int n = argc - optind;
    struct stat ds;
    if (dir && (stat(dir, &ds) != 0 || !S_ISDIR(ds.st_mode)))
        return cli_error("plot", "-o: %s: %s", dir,
                         stat(dir, &ds) != 0 ? "no such directory" : "not a directory");
    if (name && (!*name || strpbrk(name, "/'\"\n\r")))
        return cli_error("plot", "--name: '%s': a name without '/', quotes or newlines", name);
    if (sweep && n > 0)
        return cli_error("plot", "--sweep draws one table: not with a PREFIX ('%s')", argv[optind]);
    if (sweep) return cli_plot_sweep(sweep, xv, yf, dir, name, script);
    if (xv || yf) return cli_error("plot", "-x and -y go with --sweep TABLE");
    if (n < 1) return cli_error("plot", "expected a results prefix (arbor sim --csv PREFIX)");
    struct run *runs = calloc((size_t)n, sizeof *runs);
    if (!runs) return cli_error("plot", "out of memory");
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < n && rc == CLI_EXIT_OK; i++)
        rc = run_load(&runs[i], argv[optind + i]);

    char png[N_FIG][4096];
    if (rc == CLI_EXIT_OK) rc = png_paths(runs, n, dir, name, png);
    int want[N_FIG] = {0}, any = 0;
    for (int f = 0; f < N_FIG; f++) {
        for (int i = 0; i < n; i++)
            want[f] |= has_fig(&runs[i], f);
        any |= want[f];
    }
    if (rc == CLI_EXIT_OK && !any)
        rc = cli_error("plot",
                       "%s: nothing to draw: no samples (run.sample was 0: -s run.sample=10us), "
                       "no completed flows, no ranks",
                       runs[0].prefix);
    if (rc == CLI_EXIT_OK && !cli_have_gnuplot()) {
        fprintf(stderr, "arbor plot: needs gnuplot (Debian package gnuplot-nox), not found on "
                        "PATH\n");
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK) rc = draw_figures(runs, n, want, png, script);
    for (int i = 0; i < n; i++)
        run_free(&runs[i]);
    free(runs);
    return rc;
}
