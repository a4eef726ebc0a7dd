/*
 * arbor plot --sweep TABLE -x VAR -y FIGURE: a figure of an `arbor sweep`
 * CSV table against one swept variable, the mean with its 95% confidence
 * interval as error bars, one line per combination of the other
 * variables (docs/sweeps.md).
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define MAX_FIELDS 256

/* One CSV record (RFC 4180 quoting) from *p into fields (pointers into
 * buf, which the record is unquoted into); advances *p past it. Returns
 * the field count, -1 when too many or an unterminated quote. */
static int csv_record(const char **p, char *buf, char *fields[MAX_FIELDS])
{
    const char *s = *p;
    int n = 0;
    char *o = buf;
    for (;;) {
        if (n == MAX_FIELDS) return -1;
        fields[n++] = o;
        if (*s == '"') {
            for (s++;; s++) {
                if (!*s) return -1;
                if (*s == '"' && s[1] == '"') {
                    *o++ = '"';
                    s++;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    *o++ = *s;
                }
            }
        }
        while (*s && *s != ',' && *s != '\n' && *s != '\r')
            *o++ = *s++;
        *o++ = '\0';
        if (*s != ',') break;
        s++;
    }
    while (*s == '\r')
        s++;
    if (*s == '\n') s++;
    *p = s;
    return n;
}

static int find_col(char **cols, int from, int n, const char *name)
{
    for (int i = from; i < n; i++)
        if (strcmp(cols[i], name) == 0) return i;
    return -1;
}

/* The table's seed column: the one followed by n, status, error (a
 * variable before it may be called seed too). */
static int seed_col(char **cols, int n)
{
    for (int i = 1; i + 3 < n; i++)
        if (strcmp(cols[i], "seed") == 0 && strcmp(cols[i + 1], "n") == 0 &&
            strcmp(cols[i + 2], "status") == 0 && strcmp(cols[i + 3], "error") == 0)
            return i;
    return -1;
}

/* Variable name's column among the first n: NAME, or ${NAME} for one named
 * after a column of the table's own. */
static int var_col(char **cols, int n, const char *name)
{
    for (int i = 1; i < n; i++) {
        size_t len = strlen(name);
        const char *c = cols[i];
        if (strcmp(c, name) == 0 || (strncmp(c, "${", 2) == 0 && strncmp(c + 2, name, len) == 0 &&
                                     strcmp(c + 2 + len, "}") == 0))
            return i;
    }
    return -1;
}

static int is_number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *s && end != s && !*end && !errno;
}

struct pt {
    char *series; /* the other variables' values */
    char *xtext;
    double x, y, ci;
};

/* gnuplot reads our strings inside double quotes */
static void gp_string(FILE *g, const char *s)
{
    fputc('"', g);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', g);
        fputc(*s, g);
    }
    fputc('"', g);
}

/* The unit of a sweep figure, from its name (docs/sweeps.md's figures):
 * times end in _us, rates in _gbps, bytes in _bytes; the rest are counts. */
static const char *figure_unit(const char *fig)
{
    if (strstr(fig, "_us")) return "us";
    if (strstr(fig, "_gbps")) return "Gb/s";
    if (strstr(fig, "_bytes")) return "bytes";
    return "count";
}

static void script(FILE *g, const char *png, const char *xvar, const char *yfig, struct pt *pts,
                   size_t n, int numeric, char **cats, size_t n_cats)
{
    fprintf(g, "set terminal pngcairo size 1000,600\nset output '%s'\n", png);
    fprintf(g, "set title \"%s against %s (mean, 95%% CI)\" noenhanced\n", yfig, xvar);
    fprintf(g, "set key outside right top box noenhanced\nset grid\n");
    fprintf(g, "set offsets graph 0.05, graph 0.05, 0, 0\n"); /* bars at the ends in view */
    fprintf(g,
            "set xlabel \"%s (the value swept, in the file's unit)\" noenhanced\n"
            "set ylabel \"%s (%s; mean, 95%% CI bars)\" noenhanced\n",
            xvar, yfig, figure_unit(yfig));
    if (!numeric) {
        fprintf(g, "set xrange [-0.5:%zu.5]\nset xtics (", n_cats - 1);
        for (size_t i = 0; i < n_cats; i++) {
            fprintf(g, "%s", i ? ", " : "");
            gp_string(g, cats[i]);
            fprintf(g, " %zu", i);
        }
        fprintf(g, ") noenhanced\n");
    }
    /* one data block per series, in the table's order */
    size_t n_series = 0;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(pts[j].series, pts[i].series) == 0;
        if (seen) continue;
        fprintf(g, "$s%zu << EOD\n", n_series);
        for (size_t j = i; j < n; j++)
            if (strcmp(pts[j].series, pts[i].series) == 0)
                fprintf(g, "%.9g %.9g %.9g\n", pts[j].x, pts[j].y, pts[j].ci);
        fprintf(g, "EOD\n");
        n_series++;
    }
    fprintf(g, "plot ");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(pts[j].series, pts[i].series) == 0;
        if (seen) continue;
        fprintf(g, "%s$s%zu using 1:2:3 with yerrorlines lw 2 pt 7 title ", k ? ", " : "", k);
        gp_string(g, pts[i].series[0] ? pts[i].series : yfig);
        k++;
    }
    fprintf(g, "\nreset\n");
}

/* The table as read: its header's columns, and the points of the figure. */
struct sweep_table {
    const char *path;
    char *text, *hbuf, *rbuf; /* the file; the header's and a row's fields */
    char *cols[MAX_FIELDS];
    int nc, c_seed, c_x, c_y, c_ci;
    char ci_name[256];
    struct pt *pts;
    size_t n;
    char **cats; /* the x values, when one is not a number */
    size_t n_cats;
    int numeric;
};

/* The header, with the variable and the figure in it: 0 or an exit
 * status. *p is past it. */
static int read_header(struct sweep_table *T, const char **p, const char *xvar, const char *yfig)
{
    T->nc = T->hbuf && T->rbuf ? csv_record(p, T->hbuf, T->cols) : -1;
    int nc = T->nc;
    T->c_seed = nc > 0 ? seed_col(T->cols, nc) : -1;
    T->c_x = T->c_seed > 0 ? var_col(T->cols, T->c_seed, xvar) : -1;
    T->c_y = T->c_seed > 0 ? find_col(T->cols, T->c_seed + 4, nc, yfig) : -1;
    snprintf(T->ci_name, sizeof T->ci_name, "%s_ci95", yfig);
    T->c_ci = T->c_seed > 0 ? find_col(T->cols, T->c_seed + 4, nc, T->ci_name) : -1;
    if (!T->hbuf || !T->rbuf) return cli_error("plot", "out of memory");
    if (nc < 2 || strcmp(T->cols[0], "point") != 0 || T->c_seed < 0)
        return cli_error(
            "plot",
            "%s:1: not an 'arbor sweep --csv' table (point, ..., seed, n, status, error, ...)",
            T->path);
    if (T->c_x < 1 || T->c_x >= T->c_seed) {
        char list[512] = "";
        for (int i = 1; i < T->c_seed; i++) {
            size_t u = strlen(list);
            snprintf(list + u, sizeof list - u, "%s%s", i > 1 ? ", " : "", T->cols[i]);
        }
        return cli_error("plot", "-x %s: not a variable of %s (%s)", xvar, T->path,
                         T->c_seed > 1 ? list : "it has none");
    }
    if (T->c_y < T->c_seed + 4 || T->c_ci < 0)
        return cli_error("plot", "-y %s: not a figure of %s (its columns after 'error')", yfig,
                         T->path);
    return CLI_EXIT_OK;
}

/* A point of row f (its figure y, ci): 0 or an exit status. */
static int add_point(struct sweep_table *T, char **f, double y, double ci)
{
    struct pt *np = realloc(T->pts, (T->n + 1) * sizeof *np);
    if (!np) return cli_error("plot", "out of memory");
    T->pts = np;
    struct pt *q = &T->pts[T->n++];
    memset(q, 0, sizeof *q);
    q->y = y;
    q->ci = ci;
    q->xtext = strdup(f[T->c_x]);
    size_t sl = 1;
    for (int i = 1; i < T->c_seed; i++)
        if (i != T->c_x) sl += strlen(T->cols[i]) + strlen(f[i]) + 3;
    q->series = malloc(sl);
    if (!q->xtext || !q->series) return cli_error("plot", "out of memory");
    q->series[0] = '\0';
    for (int i = 1; i < T->c_seed; i++)
        if (i != T->c_x) {
            size_t u = strlen(q->series);
            snprintf(q->series + u, sl - u, "%s%s=%s", u ? ", " : "", T->cols[i], f[i]);
        }
    double x;
    if (!is_number(f[T->c_x], &x)) T->numeric = 0;
    q->x = x;
    return CLI_EXIT_OK;
}

/* The rows after the header, each with the figure a point: 0 or an exit
 * status. */
static int read_rows(struct sweep_table *T, const char *p, const char *yfig)
{
    char *f[MAX_FIELDS];
    unsigned line = 1;
    while (*p) {
        line++;
        int k = csv_record(&p, T->rbuf, f);
        if (k == 1 && !f[0][0]) continue; /* a blank line */
        if (k != T->nc)
            return cli_error("plot", "%s:%u: %d fields, the header has %d", T->path, line, k,
                             T->nc);
        double y, ci = 0;
        if (!is_number(f[T->c_y], &y)) continue; /* a point without the figure (an error row) */
        if (f[T->c_ci][0] && !is_number(f[T->c_ci], &ci))
            return cli_error("plot", "%s:%u: %s: not a number", T->path, line, T->ci_name);
        int rc = add_point(T, f, y, ci);
        if (rc != CLI_EXIT_OK) return rc;
    }
    if (T->n == 0) return cli_error("plot", "%s: no row has %s", T->path, yfig);
    return CLI_EXIT_OK;
}

/* x values that are not all numbers: categories, in order of appearance,
 * each point's x its category's index. 0 or an exit status. */
static int categorise(struct sweep_table *T)
{
    if (T->numeric) return CLI_EXIT_OK;
    T->cats = calloc(T->n, sizeof *T->cats);
    if (!T->cats) return cli_error("plot", "out of memory");
    for (size_t i = 0; i < T->n; i++) {
        size_t c = 0;
        while (c < T->n_cats && strcmp(T->cats[c], T->pts[i].xtext) != 0)
            c++;
        if (c == T->n_cats) T->cats[T->n_cats++] = T->pts[i].xtext;
        T->pts[i].x = (double)c;
    }
    return CLI_EXIT_OK;
}

/* DIR/NAME-FIGURE-vs-VARIABLE.png into png (DIR: the table's directory,
 * NAME: the table's name without .csv, unless given): 0 or an exit
 * status. */
static int png_path(char *png, size_t len, const char *table, const char *dir, const char *name,
                    const char *yfig, const char *xvar)
{
    char base[1024];
    if (name) {
        snprintf(base, sizeof base, "%s", name);
    } else {
        const char *slash = strrchr(table, '/');
        snprintf(base, sizeof base, "%s", slash ? slash + 1 : table);
        size_t bl = strlen(base);
        if (bl > 4 && strcmp(base + bl - 4, ".csv") == 0) base[bl - 4] = '\0';
    }
    char pdir[4096];
    if (!dir) {
        const char *slash = strrchr(table, '/');
        size_t dl = slash ? (size_t)(slash - table) : 0;
        if (slash && dl == 0) dl = 1;
        if (dl >= sizeof pdir) dl = sizeof pdir - 1;
        memcpy(pdir, slash ? table : ".", slash ? dl : 1);
        pdir[slash ? dl : 1] = '\0';
        dir = pdir;
    }
    int w = snprintf(png, len, "%s/%s-%s-vs-%s.png", dir, base, yfig, xvar);
    if (w < 0 || (size_t)w >= len || strpbrk(png, "'\n\r"))
        return cli_error("plot", "%s: a path too long or with a quote or newline", png);
    return CLI_EXIT_OK;
}

/* The gnuplot script into script_path (--script), then through gnuplot,
 * naming the PNG it made: 0 or an exit status. */
static int draw(const struct sweep_table *T, const char *png, const char *xvar, const char *yfig,
                const char *script_path)
{
    if (!cli_have_gnuplot()) {
        fprintf(stderr, "arbor plot: needs gnuplot (Debian package gnuplot-nox), not found on "
                        "PATH\n");
        return CLI_EXIT_FAIL;
    }
    if (script_path) {
        FILE *sf = fopen(script_path, "w");
        if (!sf)
            return cli_error("plot", "--script: cannot write %s: %s", script_path, strerror(errno));
        script(sf, png, xvar, yfig, T->pts, T->n, T->numeric, T->cats, T->n_cats);
        if (fclose(sf) != 0) return cli_error("plot", "--script: cannot write %s", script_path);
    }
    FILE *g = popen("gnuplot", "w");
    if (!g) {
        fprintf(stderr, "arbor plot: cannot start gnuplot\n");
        return CLI_EXIT_FAIL;
    }
    script(g, png, xvar, yfig, T->pts, T->n, T->numeric, T->cats, T->n_cats);
    int st = pclose(g);
    if (st != 0) {
        fprintf(stderr, "arbor plot: gnuplot failed (status %d)\n",
                WIFEXITED(st) ? WEXITSTATUS(st) : st);
        return CLI_EXIT_FAIL;
    }
    printf("%s\n", png);
    return CLI_EXIT_OK;
}

int cli_plot_sweep(const char *table, const char *xvar, const char *yfig, const char *dir,
                   const char *name, const char *script_path)
{
    if (!xvar || !yfig) return cli_error("plot", "--sweep needs -x VARIABLE and -y FIGURE");
    struct sweep_table T;
    memset(&T, 0, sizeof T);
    T.path = table;
    T.numeric = 1;
    T.text = cli_slurp(table);
    if (!T.text) return cli_error("plot", "%s: cannot open: %s", table, strerror(errno));
    size_t len = strlen(T.text);
    T.hbuf = malloc(len + 1);
    T.rbuf = malloc(len + 1);
    const char *p = T.text;
    char png[4096];
    int rc = read_header(&T, &p, xvar, yfig);
    if (rc == CLI_EXIT_OK) rc = read_rows(&T, p, yfig);
    if (rc == CLI_EXIT_OK) rc = categorise(&T);
    if (rc == CLI_EXIT_OK) rc = png_path(png, sizeof png, table, dir, name, yfig, xvar);
    if (rc == CLI_EXIT_OK) rc = draw(&T, png, xvar, yfig, script_path);
    for (size_t i = 0; i < T.n; i++) {
        free(T.pts[i].series);
        free(T.pts[i].xtext);
    }
    free(T.pts);
    free(T.cats);
    free(T.hbuf);
    free(T.rbuf);
    free(T.text);
    return rc;
}
