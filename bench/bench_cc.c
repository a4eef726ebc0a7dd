/*
 * bench_cc: the congestion-control experiments of docs/results.md
 * ("Congestion control"), every controller in one run, one table per
 * experiment with Fixed as the baseline.
 *
 *   irn   scenarios/arbor-cc-irn.ini: an Arbor AllReduce of 31 ranks on
 *         star-32 shares host 0's downlink (L1.0->h0) with an IRN bulk flow
 *   jobs  scenarios/arbor-cc-jobs.ini: two AllReduce jobs on leafspine:3,8,1
 *         share leaf 1's link to the spine (L2.0->L1.1 down, L1.1->L2.0 up)
 *
 * Per controller: each party's goodput (an Arbor job: S x 8 / its CCT; the
 * flow: its bytes x 8 / its FCT); the pair's goodput, both parties' bytes
 * x 8 over the time the later one finished (both start at 0); each party's
 * rate on the shared port while both ran and Jain's index of the two; the
 * p99 queue of the shared port over that window (jobs: the larger of the
 * link's two directions, both of which the jobs share); the pair's goodput
 * and the p99 against Fixed's. "meets" is the project's target: p99 at most
 * half of Fixed's at 90% or more of Fixed's goodput.
 *
 * The figures are the simulator's, deterministic: only the wall time varies.
 * `--only irn|jobs` runs one experiment; `--size S` sets workload.size.
 * Run from the repository root.
 */
#include "arbor/scenario.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct exp {
    const char *name, *file;
    const char *down, *up; /* the shared ports (up: NULL for one) */
};

static const struct exp exps[] = {
    {"irn", "scenarios/arbor-cc-irn.ini", "L1.0->h0", NULL},
    {"jobs", "scenarios/arbor-cc-jobs.ini", "L2.0->L1.1", "L1.1->L2.0"},
};

static const char *const kinds[] = {"fixed", "timely", "swift", "dcqcn", "oscar"};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

struct fig {
    int ok;
    double good[2];  /* each party's goodput */
    double pair;     /* both parties' bytes x 8 over the later finish */
    double share[2]; /* rates on the shared port while both ran */
    double jain;
    double p99, p99_down, p99_up; /* bytes; p99 = the larger */
    double invariants, timeouts;
    double wall;
};

static double num(const cJSON *o, const char *name)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static const cJSON *obj(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

static const cJSON *port(const cJSON *j, const char *name)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, obj(j, "watch"))
    {
        const cJSON *p = obj(w, "port");
        if (cJSON_IsString(p) && strcmp(p->valuestring, name) == 0) return w;
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The figures of one run out of its JSON. */
static void read_fig(const struct exp *e, const cJSON *j, struct fig *f)
{
    const cJSON *ar = obj(j, "arbor");
    const cJSON *jobs = obj(ar, "jobs");
    double bytes, finish[2];
    if (jobs) { /* two Arbor jobs */
        for (int k = 0; k < 2; k++) {
            const cJSON *jb = cJSON_GetArrayItem(jobs, k);
            f->good[k] = num(jb, "goodput_gbps");
            finish[k] = num(jb, "finish_us");
        }
        bytes = num(ar, "bytes"); /* the whole's: both jobs' */
    } else {                      /* the collective and the background flows */
        const cJSON *bg = obj(j, "background");
        f->good[0] = num(j, "goodput_gbps");
        f->good[1] = num(bg, "goodput_gbps");
        finish[0] = num(ar, "finish_us");
        finish[1] = num(bg, "finish_us");
        bytes = num(ar, "bytes") + num(bg, "bytes");
    }
    double last = finish[0] > finish[1] ? finish[0] : finish[1];
    f->pair = last > 0 ? bytes * 8 / last / 1e3 : 0;
    const cJSON *d = port(j, e->down), *u = e->up ? port(j, e->up) : NULL;
    const cJSON *ov = obj(d, "overlap"), *p;
    int k = 0;
    cJSON_ArrayForEach(p, obj(d, "parties"))
    {
        if (k < 2) f->share[k++] = num(p, "overlap_gbps");
    }
    f->jain = num(ov, "jain");
    f->p99_down = num(ov, "p99_bytes");
    f->p99_up = u ? num(obj(u, "overlap"), "p99_bytes") : 0;
    f->p99 = f->p99_down > f->p99_up ? f->p99_down : f->p99_up;
    f->invariants = num(obj(ar, "invariants"), "errors");
    f->timeouts = num(ar, "timeouts");
    f->ok = cJSON_IsTrue(obj(j, "completed")) && d && cJSON_IsObject(ov);
}

static int run_one(const struct exp *e, const char *kind, const char *size, struct fig *f)
{
    arb_scenario *sc;
    char err[1024], set[64];
    memset(f, 0, sizeof *f);
    if (arb_scenario_new(&sc) < 0) return -1;
    int rc = arb_scenario_load(sc, e->file, err, sizeof err);
    snprintf(set, sizeof set, "arbor.cc=%s", kind);
    if (rc == 0) rc = arb_scenario_set(sc, set, err, sizeof err);
    if (rc == 0 && size) {
        snprintf(set, sizeof set, "workload.size=%s", size);
        rc = arb_scenario_set(sc, set, err, sizeof err);
    }
    arb_scenario_result *r = NULL;
    double t0 = now_s();
    if (rc == 0) rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
    f->wall = now_s() - t0;
    arb_scenario_free(sc);
    if (rc < 0) {
        fprintf(stderr, "bench_cc: %s %s: %s (run from the repository root)\n", e->name, kind, err);
        return -1;
    }
    char *js = arb_scenario_json(r, NULL);
    arb_scenario_result_free(r);
    cJSON *j = js ? cJSON_Parse(js) : NULL;
    free(js);
    if (!j) return -1;
    read_fig(e, j, f);
    cJSON_Delete(j);
    return f->ok ? 0 : -1;
}

static void print_table(const struct exp *e, const struct fig *f, const char *size)
{
    int jobs = e->up != NULL;
    printf("== %s: %s%s%s; shared port %s%s%s\n", e->name, e->file, size ? " -s size=" : "",
           size ? size : "", e->down, jobs ? " (down) and " : "", jobs ? e->up : "");
    printf("   build/arbor sim %s -s arbor.cc=K\n", e->file);
    printf("%-7s %9s %9s %9s %7s %15s %7s %8s %7s", "kind", jobs ? "job0 Gb/s" : "Arbor Gb/s",
           jobs ? "job1 Gb/s" : "flow Gb/s", "pair Gb/s", "x fixed", "shares Gb/s", "Jain",
           "p99 KB", "x fixed");
    if (jobs) printf(" %8s %8s", "down KB", "up KB");
    printf(" %4s %5s\n", "inv", "meets");
    for (size_t k = 0; k < N_KINDS; k++) {
        const struct fig *x = &f[k];
        if (!x->ok) {
            printf("%-7s (failed)\n", kinds[k]);
            continue;
        }
        double gr = f[0].pair > 0 ? x->pair / f[0].pair : 0;
        double qr = f[0].p99 > 0 ? x->p99 / f[0].p99 : 0;
        const char *meets = k == 0 ? "base" : gr >= 0.9 && qr <= 0.5 ? "yes" : "no";
        char shares[32];
        snprintf(shares, sizeof shares, "%.2f / %.2f", x->share[0], x->share[1]);
        printf("%-7s %9.3f %9.3f %9.3f %7.3f %15s %7.4f %8.1f %7.3f", kinds[k], x->good[0],
               x->good[1], x->pair, gr, shares, x->jain, x->p99 / 1e3, qr);
        if (jobs) printf(" %8.1f %8.1f", x->p99_down / 1e3, x->p99_up / 1e3);
        printf(" %4.0f %5s\n", x->invariants, meets);
    }
    double wall = 0;
    for (size_t k = 0; k < N_KINDS; k++)
        wall += f[k].wall;
    printf("   (%zu runs, %.2f s wall)\n\n", N_KINDS, wall);
}

int main(int argc, char **argv)
{
    const char *only = NULL, *size = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = argv[++i];
        else {
            fprintf(stderr, "usage: bench_cc [--only irn|jobs] [--size S]\n");
            return 2;
        }
    }
    int failed = 0, ran = 0;
    for (size_t x = 0; x < sizeof exps / sizeof exps[0]; x++) {
        const struct exp *e = &exps[x];
        if (only && strcmp(only, e->name) != 0) continue;
        struct fig f[N_KINDS];
        for (size_t k = 0; k < N_KINDS; k++)
            if (run_one(e, kinds[k], size, &f[k]) < 0) failed = 1;
        print_table(e, f, size);
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "bench_cc: no experiment named '%s' (irn, jobs)\n", only);
        return 2;
    }
    return failed;
}
