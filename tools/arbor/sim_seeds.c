/*
 * arbor sim --seeds A..B: one scenario run once per seed (run.seed = A, A+1,
 * ..., B), and the figures of the runs summarised: mean, sample standard
 * deviation, the half-width of the 95% confidence interval of the mean
 * (Student's t with n - 1 degrees of freedom), min and max
 * (docs/simulator.md, "Several seeds").
 */
#include "arbor/scenario.h"
#include "cli.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The figures summarised, as paths into a run's JSON; those that are a
 * number in every run. */
const char *const cli_figures[CLI_N_FIGURES] = {"sim_time_us",
                                                "cct_us",
                                                "goodput_gbps",
                                                "flows.done",
                                                "flows.fct_us.mean",
                                                "flows.fct_us.p99",
                                                "flows.fct_us.max",
                                                "collective.cct_us",
                                                "collective.busbw_gbps",
                                                "iteration.iter_time_us",
                                                "retx_bytes",
                                                "drops",
                                                "timeouts",
                                                "ecn_marks",
                                                "pfc.pauses",
                                                "arbor.recovery.retries",
                                                "arbor.recovery.tree_deaths",
                                                "arbor.recovery.bypass",
                                                "arbor.checked",
                                                "arbor.wrong"};

int cli_parse_seeds(const char *s, uint64_t *a, uint64_t *b)
{
    const char *dots = strstr(s, "..");
    if (!dots) return -1;
    char first[32];
    size_t n = (size_t)(dots - s);
    if (n == 0 || n >= sizeof first) return -1;
    memcpy(first, s, n);
    first[n] = '\0';
    if (cli_parse_u64(first, UINT64_MAX, a) < 0 || cli_parse_u64(dots + 2, UINT64_MAX, b) < 0)
        return -1;
    return *a <= *b && *b - *a < CLI_MAX_SEEDS ? 0 : -1;
}

static const cJSON *at(const cJSON *j, const char *path)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *x = j;
    char *save = NULL;
    for (char *p = strtok_r(buf, ".", &save); p && x; p = strtok_r(NULL, ".", &save))
        x = cJSON_GetObjectItemCaseSensitive(x, p);
    return x;
}

uint32_t cli_figures_of(const cJSON *run, double v[CLI_N_FIGURES])
{
    uint32_t have = 0;
    const cJSON *nf = at(run, "flows.count");
    int no_flows = !cJSON_IsNumber(nf) || nf->valuedouble == 0; /* an Arbor run */
    for (size_t m = 0; m < CLI_N_FIGURES; m++) {
        const cJSON *x = at(run, cli_figures[m]);
        v[m] = 0;
        if (no_flows && strncmp(cli_figures[m], "flows.", 6) == 0) continue;
        if (!cJSON_IsNumber(x)) continue;
        v[m] = x->valuedouble;
        have |= 1u << m;
    }
    return have;
}

/* A figure's statistic in the text summary: a count (every run's value
 * whole) as an integer when it is one, else to two decimals; any other
 * figure (times, rates) to three. */
static void fmt_stat(char *buf, size_t len, double v, int whole)
{
    if (whole && v == floor(v))
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.*f", whole ? 2 : 3, v);
}

/* The text summary's row of figure name: its n values x, and st = mean,
 * ci95, sd, min, max. */
static void text_row(const char *name, const double *x, uint64_t n, const double st[5])
{
    int whole = 1;
    for (uint64_t k = 0; k < n; k++)
        whole &= x[k] == floor(x[k]);
    printf("%-24s", name);
    for (int i = 0; i < 5; i++) {
        char b[64];
        fmt_stat(b, sizeof b, st[i], whole);
        printf(" %14s", b);
    }
    putchar('\n');
}

/* Two-sided 95% quantile of Student's t with df degrees of freedom: the
 * table to 30, then z + (z^3 + z) / (4 df), within 0.01% of it beyond. */
double cli_t95(unsigned df)
{
    static const double t[31] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                 2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                 2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                 2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df <= 30) return t[df];
    const double z = 1.959964;
    return z + (z * z * z + z) / (4.0 * df);
}

/* runs[k] of the JSON: its seed, status, verdict (correct < 0: null) and
 * figures (figure m at v[m * stride], those every run has). */
static cJSON *run_json(uint64_t seed, const char *status, int correct, const double *v,
                       uint64_t stride, const int *have)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "seed", (double)seed);
    cJSON_AddStringToObject(r, "status", status ? status : "?");
    if (correct < 0)
        cJSON_AddNullToObject(r, "correct");
    else
        cJSON_AddBoolToObject(r, "correct", correct);
    for (size_t m = 0; m < CLI_N_FIGURES; m++)
        if (have[m]) cli_json_real(r, cli_figures[m], v[m * stride]);
    return r;
}

int cli_sim_seeds(const struct cli_seeds_run *run)
{
    uint64_t n = run->last - run->first + 1;
    double *v = calloc(CLI_N_FIGURES * n, sizeof *v);
    int *have = calloc(CLI_N_FIGURES, sizeof *have);
    uint64_t *seeds = calloc(n, sizeof *seeds);
    char **status = calloc(n, sizeof *status);
    int *correct = calloc(n, sizeof *correct); /* 1, 0, or -1: no verdict (null) */
    if (!v || !have || !seeds || !status || !correct) {
        free(v), free(have), free(seeds), free(status), free(correct);
        fprintf(stderr, "arbor sim: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    for (size_t m = 0; m < CLI_N_FIGURES; m++)
        have[m] = 1;
    int rc = CLI_EXIT_OK, tty = !run->quiet && isatty(STDERR_FILENO);
    for (uint64_t k = 0; k < n && rc == CLI_EXIT_OK; k++) {
        seeds[k] = run->first + k;
        if (tty)
            fprintf(stderr, "\rseed %llu (%llu of %llu) ", (unsigned long long)seeds[k],
                    (unsigned long long)(k + 1), (unsigned long long)n);
        char *out = NULL;
        rc = run->one(run->ctx, seeds[k], &out);
        if (rc != CLI_EXIT_OK) break;
        cJSON *j = cJSON_Parse(out);
        free(out);
        if (!j) {
            fprintf(stderr, "arbor sim: out of memory\n");
            rc = CLI_EXIT_FAIL;
            break;
        }
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
        status[k] = strdup(cJSON_IsString(st) ? st->valuestring : "?");
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(j, "correct");
        correct[k] = cJSON_IsBool(ok) ? cJSON_IsTrue(ok) : -1;
        double fig[CLI_N_FIGURES];
        uint32_t got = cli_figures_of(j, fig);
        for (size_t m = 0; m < CLI_N_FIGURES; m++) {
            if (got & (1u << m))
                v[m * n + k] = fig[m];
            else
                have[m] = 0;
        }
        cJSON_Delete(j);
    }
    if (tty) fprintf(stderr, "\r%*s\r", 40, "");
    if (rc == CLI_EXIT_OK) {
        cJSON *o = cJSON_CreateObject();
        cli_json_head(o, CLI_SCHEMA_SIM_SEEDS);
        cJSON_AddStringToObject(o, "file", run->file ? run->file : "(built-in)");
        cJSON *sd = cJSON_AddObjectToObject(o, "seeds");
        cJSON_AddNumberToObject(sd, "first", (double)run->first);
        cJSON_AddNumberToObject(sd, "last", (double)run->last);
        cJSON_AddNumberToObject(sd, "n", (double)n);
        cJSON *runs = cJSON_AddArrayToObject(o, "runs");
        for (uint64_t k = 0; k < n; k++)
            cJSON_AddItemToArray(runs, run_json(seeds[k], status[k], correct[k], v + k, n, have));
        cJSON *sum = cJSON_AddObjectToObject(o, "summary");
        if (!run->json)
            printf("%llu runs of %s, seeds %llu..%llu; 95%% CI of the mean (Student's t)\n"
                   "%-24s %14s %14s %14s %14s %14s\n",
                   (unsigned long long)n, run->file ? run->file : "(built-in)",
                   (unsigned long long)run->first, (unsigned long long)run->last, "figure", "mean",
                   "+- ci95", "sd", "min", "max");
        for (size_t m = 0; m < CLI_N_FIGURES; m++) {
            if (!have[m]) continue;
            const double *x = v + m * n;
            double mean = 0, var = 0, lo = x[0], hi = x[0];
            for (uint64_t k = 0; k < n; k++) {
                mean += x[k];
                if (x[k] < lo) lo = x[k];
                if (x[k] > hi) hi = x[k];
            }
            mean /= (double)n;
            if (lo == hi) /* all alike: exactly that, no rounding's spread */
                mean = lo;
            else
                for (uint64_t k = 0; k < n; k++)
                    var += (x[k] - mean) * (x[k] - mean);
            double sdv = n > 1 ? sqrt(var / (double)(n - 1)) : 0;
            double ci = n > 1 ? cli_t95((unsigned)(n - 1)) * sdv / sqrt((double)n) : 0;
            cJSON *e = cJSON_AddObjectToObject(sum, cli_figures[m]);
            cli_json_real(e, "mean", mean);
            cli_json_real(e, "sd", sdv);
            cli_json_real(e, "ci95", ci);
            cli_json_real(e, "min", lo);
            cli_json_real(e, "max", hi);
            if (!run->json) text_row(cli_figures[m], x, n, (double[]){mean, ci, sdv, lo, hi});
        }
        if (run->json) {
            char *s = cJSON_PrintUnformatted(o);
            if (s) puts(s);
            free(s);
        }
        cJSON_Delete(o);
        for (uint64_t k = 0; k < n; k++)
            if (status[k] && strcmp(status[k], "done") != 0) {
                fprintf(stderr, "arbor sim: seed %llu: %s\n", (unsigned long long)seeds[k],
                        status[k]);
                rc = CLI_EXIT_FAIL;
                break;
            }
    }
    for (uint64_t k = 0; k < n; k++)
        free(status[k]);
    free(status);
    free(correct);
    free(seeds);
    free(have);
    free(v);
    return rc;
}
