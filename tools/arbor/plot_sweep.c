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

static int find_col(char **cols, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(cols[i], name) == 0) return i;
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

int cli_plot_sweep(const char *table, const char *xvar, const char *yfig, const char *dir,
                   const char *name, const char *script_path)
{
    if (!xvar || !yfig) return cli_error("plot", "--sweep needs -x VARIABLE and -y FIGURE");
    char *text = cli_slurp(table);
    if (!text) return cli_error("plot", "%s: cannot open: %s", table, strerror(errno));
    size_t len = strlen(text);
    char *hbuf = malloc(len + 1), *rbuf = malloc(len + 1);
    char *cols[MAX_FIELDS], *f[MAX_FIELDS];
    struct pt *pts = NULL;
    char **cats = NULL;
    size_t n = 0, n_cats = 0;
    int rc = CLI_EXIT_OK, numeric = 1;
    const char *p = text;
    int nc = hbuf && rbuf ? csv_record(&p, hbuf, cols) : -1;
    int c_seed = nc > 0 ? find_col(cols, nc, "seed") : -1;
    int c_x = nc > 0 ? find_col(cols, nc, xvar) : -1;
    int c_y = nc > 0 ? find_col(cols, nc, yfig) : -1;
    char ci_name[256];
    snprintf(ci_name, sizeof ci_name, "%s_ci95", yfig);
    int c_ci = nc > 0 ? find_col(cols, nc, ci_name) : -1;
    if (!hbuf || !rbuf) {
        rc = cli_error("plot", "out of memory");
    } else if (nc < 2 || strcmp(cols[0], "point") != 0 || c_seed < 0) {
        rc = cli_error("plot", "%s:1: not an 'arbor sweep --csv' table (point, ..., seed, ...)",
                       table);
    } else if (c_x < 1 || c_x >= c_seed) {
        char list[512] = "";
        for (int i = 1; i < c_seed; i++) {
            size_t u = strlen(list);
            snprintf(list + u, sizeof list - u, "%s%s", i > 1 ? ", " : "", cols[i]);
        }
        rc = cli_error("plot", "-x %s: not a variable of %s (%s)", xvar, table,
                       c_seed > 1 ? list : "it has none");
    } else if (c_y < c_seed + 4 || c_ci < 0) {
        rc =
            cli_error("plot", "-y %s: not a figure of %s (its columns after 'error')", yfig, table);
    }
    unsigned line = 1;
    while (rc == CLI_EXIT_OK && *p) {
        line++;
        int k = csv_record(&p, rbuf, f);
        if (k == 1 && !f[0][0]) continue; /* a blank line */
        if (k != nc) {
            rc = cli_error("plot", "%s:%u: %d fields, the header has %d", table, line, k, nc);
            break;
        }
        double y, ci = 0, x;
        if (!is_number(f[c_y], &y)) continue; /* a point without the figure (an error row) */
        if (f[c_ci][0] && !is_number(f[c_ci], &ci)) {
            rc = cli_error("plot", "%s:%u: %s: not a number", table, line, ci_name);
            break;
        }
        struct pt *np = realloc(pts, (n + 1) * sizeof *np);
        if (!np) {
            rc = cli_error("plot", "out of memory");
            break;
        }
        pts = np;
        struct pt *q = &pts[n++];
        memset(q, 0, sizeof *q);
        q->y = y;
        q->ci = ci;
        q->xtext = strdup(f[c_x]);
        size_t sl = 1;
        for (int i = 1; i < c_seed; i++)
            if (i != c_x) sl += strlen(cols[i]) + strlen(f[i]) + 3;
        q->series = malloc(sl);
        if (!q->xtext || !q->series) {
            rc = cli_error("plot", "out of memory");
            break;
        }
        q->series[0] = '\0';
        for (int i = 1; i < c_seed; i++)
            if (i != c_x) {
                size_t u = strlen(q->series);
                snprintf(q->series + u, sl - u, "%s%s=%s", u ? ", " : "", cols[i], f[i]);
            }
        if (!is_number(f[c_x], &x)) numeric = 0;
        q->x = x;
    }
    if (rc == CLI_EXIT_OK && n == 0) rc = cli_error("plot", "%s: no row has %s", table, yfig);
    if (rc == CLI_EXIT_OK && !numeric) { /* categories, in order of appearance */
        cats = calloc(n, sizeof *cats);
        if (!cats) rc = cli_error("plot", "out of memory");
        for (size_t i = 0; i < n && cats; i++) {
            size_t c = 0;
            while (c < n_cats && strcmp(cats[c], pts[i].xtext) != 0)
                c++;
            if (c == n_cats) cats[n_cats++] = pts[i].xtext;
            pts[i].x = (double)c;
        }
    }
    char png[4096];
    if (rc == CLI_EXIT_OK) {
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
        int w = snprintf(png, sizeof png, "%s/%s-%s-vs-%s.png", dir, base, yfig, xvar);
        if (w < 0 || (size_t)w >= sizeof png || strpbrk(png, "'\n\r"))
            rc = cli_error("plot", "%s: a path too long or with a quote or newline", png);
    }
    if (rc == CLI_EXIT_OK && !cli_have_gnuplot()) {
        fprintf(stderr, "arbor plot: needs gnuplot (Debian package gnuplot-nox), not found on "
                        "PATH\n");
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK && script_path) {
        FILE *sf = fopen(script_path, "w");
        if (!sf) {
            rc = cli_error("plot", "--script: cannot write %s: %s", script_path, strerror(errno));
        } else {
            script(sf, png, xvar, yfig, pts, n, numeric, cats, n_cats);
            if (fclose(sf) != 0) rc = cli_error("plot", "--script: cannot write %s", script_path);
        }
    }
    if (rc == CLI_EXIT_OK) {
        FILE *g = popen("gnuplot", "w");
        if (!g) {
            fprintf(stderr, "arbor plot: cannot start gnuplot\n");
            rc = CLI_EXIT_FAIL;
        } else {
            script(g, png, xvar, yfig, pts, n, numeric, cats, n_cats);
            int st = pclose(g);
            if (st != 0) {
                fprintf(stderr, "arbor plot: gnuplot failed (status %d)\n",
                        WIFEXITED(st) ? WEXITSTATUS(st) : st);
                rc = CLI_EXIT_FAIL;
            } else {
                printf("%s\n", png);
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        free(pts[i].series);
        free(pts[i].xtext);
    }
    free(pts);
    free(cats);
    free(hbuf);
    free(rbuf);
    free(text);
    return rc;
}
