/*
 * bench_arbor: the Arbor simulation's speed (issue 5, docs/results.md
 * "Arbor transport").
 *
 *   arbor-1GiB  the header-only star-32 AllReduce of 1 GiB (`arbor sim -s size=1GiB`)
 *   irn-1GiB    plain IRN traffic of the same size on the same fabric: a ring
 *               AllReduce of 1 GiB over IRN on star-32
 *               (`arbor sim scenarios/arbor-star32-ring.ini -s size=1GiB`)
 *
 * Each case runs in its own process. Printed per case: simulated time,
 * packet-hops, events, wall seconds of the run, packet-hops and events per
 * wall second, peak RSS; then the Arbor rate over the IRN rate (the target
 * asks for at least 0.8). `--size S` runs another size (e.g. 64MiB);
 * `--only arbor|irn-ring` runs one case (for a profiler) and prints no ratio;
 * `--repeat N` runs the cases in turn N times and takes each case's best
 * rate (on shared cores a run is only ever slowed down).
 * Run from the repository root.
 */
#include "arbor/scenario.h"
#include "arbor/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct bcase {
    const char *name;
    int arbor; /* 1: the built-in Arbor scenario; 0: the ring file */
};

static const struct bcase cases[] = {{"arbor", 1}, {"irn-ring", 0}};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Writes "hops wall" to fd so that the parent can take the ratio. */
static int run_case(const struct bcase *c, const char *size, int fd)
{
    arb_scenario *sc;
    char err[1024], set[64];
    if (arb_scenario_new(&sc) < 0) return 1;
    int rc = c->arbor ? arb_scenario_load_string(sc, arb_scenario_default_text(), "(built-in)", ".",
                                                 err, sizeof err)
                      : arb_scenario_load(sc, "scenarios/arbor-star32-ring.ini", err, sizeof err);
    snprintf(set, sizeof set, "workload.size=%s", size);
    if (rc == 0) rc = arb_scenario_set(sc, set, err, sizeof err);
    if (rc == 0) rc = arb_scenario_set(sc, "run.sample=0", err, sizeof err);
    if (rc == 0) rc = arb_scenario_set(sc, "run.stop=0", err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "bench_arbor: %s: %s (run from the repository root)\n", c->name, err);
        arb_scenario_free(sc);
        return 1;
    }
    arb_scenario_result *r;
    double t0 = now_s();
    rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
    double wall = now_s() - t0;
    arb_scenario_free(sc);
    if (rc < 0) {
        fprintf(stderr, "bench_arbor: %s: %s\n", c->name, err);
        return 1;
    }
    const arb_sim_stats *st = arb_scenario_result_stats(r);
    const arb_workload_result *wr = arb_scenario_result_workload(r);
    const arb_sim_arbor_result *ar = arb_scenario_result_arbor(r);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%-9s %13.3f %11.0f %11.0f %8.2f %8.3f %8.3f %8.1f %s\n", c->name,
           (double)arb_scenario_result_time(r) / 1e6, (double)st->packet_hops, (double)st->events,
           wall, (double)st->packet_hops / wall / 1e6, (double)st->events / wall / 1e6,
           (double)ru.ru_maxrss / 1024.0, (ar ? ar->done : wr->done) ? "" : "(not finished)");
    fflush(stdout);
    char line[96];
    int n = snprintf(line, sizeof line, "%.17g %.17g\n", (double)st->packet_hops, wall);
    int ok = write(fd, line, (size_t)n) == n;
    arb_scenario_result_free(r);
    return ok ? 0 : 1;
}

/* Case i in its own process; its packet-hop rate, or -1. */
static double run_child(size_t i, const char *size)
{
    int p[2];
    if (pipe(p) < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        _exit(run_case(&cases[i], size, p[1]));
    }
    close(p[1]);
    char buf[128] = {0};
    ssize_t got = pid < 0 ? -1 : read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    int status = 1;
    double hops = 0, wall = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        got <= 0 || sscanf(buf, "%lf %lf", &hops, &wall) != 2 || wall <= 0) {
        printf("%-9s failed (wait status %d)\n", cases[i].name, status);
        return -1;
    }
    return hops / wall;
}

int main(int argc, char **argv)
{
    const char *size = "1GiB", *only = NULL;
    long repeat = 1;
    int bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = strtol(argv[++i], NULL, 10);
        else
            bad = 1;
        if (bad || repeat < 1 || repeat > 100) {
            fprintf(stderr,
                    "usage: bench_arbor [--size S] [--only arbor|irn-ring] [--repeat 1..100]\n");
            return 2;
        }
    }
    printf("star-32, %s per rank, header-only Arbor vs ring over IRN; sampling off\n", size);
    printf("%-9s %13s %11s %11s %8s %8s %8s %8s\n", "case", "sim_us", "pkt_hops", "events",
           "wall_s", "Mhops/s", "Mev/s", "rss_MB");
    fflush(stdout);
    double best[2] = {0, 0};
    int fails = 0, ran = 0;
    for (long r = 0; r < repeat; r++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            if (only && strcmp(only, cases[i].name) != 0) continue;
            ran++;
            double rate = run_child(i, size);
            if (rate < 0)
                fails++;
            else if (rate > best[i])
                best[i] = rate;
        }
    }
    if (only && !ran) {
        fprintf(stderr, "bench_arbor: no case named %s (arbor, irn-ring)\n", only);
        return 2;
    }
    if (!fails && !only)
        printf("Arbor packet-hop rate / IRN packet-hop rate = %.3f (issue: >= 0.8)%s\n",
               best[0] / best[1], repeat > 1 ? ", best run of each" : "");
    return fails ? 1 : 0;
}
