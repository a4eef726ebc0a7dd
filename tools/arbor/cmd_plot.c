/*
 * arbor plot: turn the CSV files of `arbor sim --csv PREFIX` into PNG
 * figures with gnuplot: link utilisation over time, queue depth over time
 * and the CDF of flow completion times (docs/results.md).
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char plot_usage[] =
    "usage: arbor plot PREFIX [-o DIR]\n"
    "\n"
    "Read PREFIX-util.csv, PREFIX-queue.csv and PREFIX-flows.csv (written by\n"
    "'arbor sim --csv PREFIX') and draw with gnuplot:\n"
    "  DIR/NAME-util.png    utilisation of every port class over time\n"
    "  DIR/NAME-queue.png   mean and deepest queue of every port class over time\n"
    "  DIR/NAME-fct.png     CDF of the completion times of the completed flows\n"
    "NAME is the last part of PREFIX; DIR defaults to the directory of PREFIX.\n"
    "Prints the files written, one a line.\n"
    "\n"
    "-o, --output DIR  write the figures into DIR (it must exist)\n"
    "\n"
    "Exit status: 0 done, 1 gnuplot missing or failed, 2 bad usage or a\n"
    "missing or malformed CSV file (one line on stderr naming it).\n";

#define MAX_COLS 64

/* Read a whole file; NULL with errno set on failure. */
static char *slurp(const char *path)
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

/* Load PREFIX-SUFFIX.csv and check that its first column is `first`. */
static int csv_load(struct csv *c, const char *prefix, const char *suffix, const char *first)
{
    memset(c, 0, sizeof *c);
    int w = snprintf(c->path, sizeof c->path, "%s-%s.csv", prefix, suffix);
    if (w < 0 || (size_t)w >= sizeof c->path) return cli_error("plot", "%s: path too long", prefix);
    c->text = slurp(c->path);
    if (!c->text) return cli_error("plot", "%s: cannot open: %s", c->path, strerror(errno));
    c->ncols = header(c->text, &c->hcopy, c->cols);
    if (c->ncols < 2 || strcmp(c->cols[0], first) != 0)
        return cli_error("plot", "%s:1: expected a header starting with %s", c->path, first);
    return CLI_EXIT_OK;
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
static int have_gnuplot(void)
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

static void set_common(FILE *g, const char *png, const char *title)
{
    fprintf(g, "set terminal pngcairo size 1000,600\nset output '%s'\n", png);
    fprintf(g, "set title \"%s\" noenhanced\nset key outside right noenhanced\nset grid\n", title);
    fprintf(g, "set datafile separator ','\n");
}

static int run_gnuplot(const struct csv *util, const struct csv *queue, const double *fct,
                       size_t n_fct, const char *dir, const char *name)
{
    char png[3][4096];
    const char *suffix[3] = {"util", "queue", "fct"};
    for (int i = 0; i < 3; i++) {
        int w = snprintf(png[i], sizeof png[i], "%s/%s-%s.png", dir, name, suffix[i]);
        if (w < 0 || (size_t)w >= sizeof png[i]) return cli_error("plot", "%s: path too long", dir);
        if (!quotable(png[i])) return cli_error("plot", "%s: a quote or newline in the path", dir);
    }
    FILE *g = popen("gnuplot", "w");
    if (!g) {
        fprintf(stderr, "arbor plot: cannot start gnuplot\n");
        return CLI_EXIT_FAIL;
    }
    set_common(g, png[0], "link utilisation per port class");
    fprintf(g, "set xlabel 'time (us)'\nset ylabel 'utilisation (bytes sent x 8 / capacity)'\n");
    fprintf(g, "set yrange [0:*]\n");
    fprintf(g, "plot for [i=2:%d] '%s' using 1:i with lines lw 2 title columnheader(i)\n",
            util->ncols, util->path);
    fprintf(g, "reset\n");
    set_common(g, png[1], "queue depth per port class (solid: deepest port, dashed: mean)");
    fprintf(g, "set xlabel 'time (us)'\nset ylabel 'queue (KB)'\nset yrange [0:*]\n");
    fprintf(g,
            "plot for [i=3:%d:2] '%s' using 1:(column(i)/1000) with lines lw 2 lc (i-1)/2 "
            "title columnheader(i), for [i=2:%d:2] '%s' using 1:(column(i)/1000) with lines dt 2 "
            "lc i/2 title columnheader(i)\n",
            queue->ncols, queue->path, queue->ncols, queue->path);
    fprintf(g, "reset\n");
    fprintf(g, "$cdf << EOD\n");
    for (size_t i = 0; i < n_fct; i++)
        fprintf(g, "%.6f %.9f\n", fct[i], (double)(i + 1) / n_fct);
    fprintf(g, "EOD\n");
    char title[256];
    snprintf(title, sizeof title, "flow completion time CDF (%zu completed flows)", n_fct);
    set_common(g, png[2], title);
    fprintf(g, "set datafile separator whitespace\n");
    fprintf(g, "set xlabel 'completion time (us)'\nset ylabel 'fraction of flows'\n");
    fprintf(g, "set yrange [0:1.02]\nset key off\n");
    fprintf(g, "plot $cdf using 1:2 with steps lw 2\n");
    int st = pclose(g);
    if (st != 0) {
        fprintf(stderr, "arbor plot: gnuplot failed (status %d)\n",
                WIFEXITED(st) ? WEXITSTATUS(st) : st);
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < 3; i++)
        printf("%s\n", png[i]);
    return CLI_EXIT_OK;
}

int cmd_plot(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    const char *prefix = NULL, *dir = NULL;
    int c;
    cli_getopt_start();
    while ((c = getopt_long(argc, argv, ":o:h", lopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(plot_usage, stdout);
            return CLI_EXIT_OK;
        }
        if (c != 'o') return cli_bad_option("plot", c, argv);
        dir = optarg;
    }
    for (int i = optind; i < argc; i++) {
        if (prefix) return cli_error("plot", "one results prefix only");
        prefix = argv[i];
    }
    if (!prefix) return cli_error("plot", "expected a results prefix (arbor sim --csv PREFIX)");
    if (!quotable(prefix)) return cli_error("plot", "%s: a quote or newline in the path", prefix);

    const char *slash = strrchr(prefix, '/');
    const char *name = slash ? slash + 1 : prefix;
    if (!*name) return cli_error("plot", "%s: the prefix names a directory", prefix);
    char pdir[4096];
    if (!dir) {
        size_t n = slash ? (size_t)(slash - prefix) : 1;
        if (n >= sizeof pdir) return cli_error("plot", "%s: path too long", prefix);
        if (slash)
            memcpy(pdir, prefix, n);
        else
            pdir[0] = '.';
        if (slash && n == 0) pdir[n++] = '/';
        pdir[n] = '\0';
        dir = pdir;
    }

    struct csv util, queue, flows;
    memset(&queue, 0, sizeof queue);
    memset(&flows, 0, sizeof flows);
    double *fct = NULL;
    size_t n_fct = 0;
    int rc = csv_load(&util, prefix, "util", "time_us");
    if (rc == CLI_EXIT_OK) rc = csv_load(&queue, prefix, "queue", "time_us");
    if (rc == CLI_EXIT_OK) rc = csv_load(&flows, prefix, "flows", "id");
    if (rc == CLI_EXIT_OK) rc = fct_values(&flows, &fct, &n_fct);
    if (rc == CLI_EXIT_OK &&
        (util.ncols < 2 || !strchr(util.text, '\n') || !strchr(strchr(util.text, '\n') + 1, ',')))
        rc = cli_error("plot", "%s: no samples (run with run.sample > 0)", util.path);
    if (rc == CLI_EXIT_OK && n_fct == 0)
        rc = cli_error("plot", "%s: no completed flow", flows.path);
    if (rc == CLI_EXIT_OK && !have_gnuplot()) {
        fprintf(stderr, "arbor plot: needs gnuplot (Debian package gnuplot-nox), not found on "
                        "PATH\n");
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK) rc = run_gnuplot(&util, &queue, fct, n_fct, dir, name);
    free(fct);
    csv_free(&util);
    csv_free(&queue);
    csv_free(&flows);
    return rc;
}
