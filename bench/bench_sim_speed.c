/*
 * bench_sim_speed: the simulator's fixed speed benchmark (docs/simulator.md).
 *
 *   perm1024-irn   scenarios/bench-perm1024-irn.ini   a 1024-host permutation (bench/data),
 *   perm1024-roce  scenarios/bench-perm1024-roce.ini  IRN + spraying / RoCE + PFC + ECMP
 *   perm128-*      the same work at 128 hosts   (pgft:3;4,4,8;1,4,4;1,1,1, perm:13)
 *   perm16k-*      the same at 16,384 hosts     (pgft:3;16,16,64;1,16,16;1,1,1, perm:13),
 *                  only with --large (minutes on two cores)
 *
 * Every case runs in its own process so that its peak memory is its own.
 * Printed per case: simulated packet-hops and events per wall second, wall
 * nanoseconds per event, peak RSS, and bytes per in-flight packet (the
 * pool's packets x the packet's size / the most packets alive at once).
 * Then the per-event cost of each fabric against the 128-host one of the
 * same transport (the target: within 2x at 16,384 hosts). --repeat N runs
 * the cases round-robin N times and takes each case's best, since a shared
 * machine's wall time swings from run to run.
 * Run from the repository root (bench/sim_speed does).
 */
#include "arbor/scenario.h"
#include "sim/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct bcase {
    const char *name;
    const char *file; /* a scenario file, or NULL: the sets below on the defaults */
    const char *sets[12];
    int large;
};

#define PERM(topo, flavour)                                                                        \
    "fabric.topology=" topo, "fabric.link_rate=100G", "fabric.delay=1us", "transport.mtu=4000",    \
        "workload.kind=pattern", "workload.traffic=perm:13", "workload.size=2000000", flavour
#define IRN "transport.kind=irn", "routing.scheme=spray"
#define ROCE "transport.kind=gbn", "routing.scheme=ecmp", "switch.pfc=on", "switch.queue=16MiB"

static const struct bcase cases[] = {
    {"perm128-irn", NULL, {PERM("pgft:3;4,4,8;1,4,4;1,1,1", IRN)}, 0},
    {"perm128-roce", NULL, {PERM("pgft:3;4,4,8;1,4,4;1,1,1", ROCE)}, 0},
    {"perm1024-irn", "scenarios/bench-perm1024-irn.ini", {NULL}, 0},
    {"perm1024-roce", "scenarios/bench-perm1024-roce.ini", {NULL}, 0},
    {"perm16k-irn", NULL, {PERM("pgft:3;16,16,64;1,16,16;1,1,1", IRN)}, 1},
    {"perm16k-roce", NULL, {PERM("pgft:3;16,16,64;1,16,16;1,1,1", ROCE)}, 1},
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs case c and writes its wall nanoseconds per event to fd. */
static int run_case(const struct bcase *c, int fd)
{
    arb_scenario *sc;
    char err[1024];
    if (arb_scenario_new(&sc) < 0) return 1;
    int rc = c->file ? arb_scenario_load(sc, c->file, err, sizeof err) : 0;
    for (int i = 0; rc == 0 && i < 12 && c->sets[i]; i++)
        rc = arb_scenario_set(sc, c->sets[i], err, sizeof err);
    if (rc == 0) rc = arb_scenario_set(sc, "run.sample=0", err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "bench_sim_speed: %s: %s (run from the repository root)\n", c->name, err);
        arb_scenario_free(sc);
        return 1;
    }
    arb_scenario_result *r;
    double t0 = now_s();
    rc = arb_scenario_run(sc, NULL, NULL, &r, err, sizeof err);
    double wall = now_s() - t0;
    arb_scenario_free(sc);
    if (rc < 0) {
        fprintf(stderr, "bench_sim_speed: %s: %s\n", c->name, err);
        return 1;
    }
    const arb_sim_stats *st = arb_scenario_result_stats(r);
    const arb_workload_result *wr = arb_scenario_result_workload(r);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double bpp = st->pool_peak ? (double)st->pool_size * sizeof(struct pkt) / st->pool_peak : 0;
    printf("%-14s %8.3f %10.0f %10.0f %7.2f %8.3f %8.3f %7.1f %9.1f %8u %6.1f %s\n", c->name,
           (double)arb_scenario_result_time(r) / 1e6, (double)st->packet_hops, (double)st->events,
           wall, (double)st->packet_hops / wall / 1e6, (double)st->events / wall / 1e6,
           wall * 1e9 / (double)st->events, (double)ru.ru_maxrss / 1024.0, st->pool_peak, bpp,
           wr->done ? "" : "(not finished)");
    fflush(stdout);
    double ns = wall * 1e9 / (double)st->events;
    arb_scenario_result_free(r);
    return write(fd, &ns, sizeof ns) == (ssize_t)sizeof ns ? 0 : 1;
}

/* Runs case c in a child process: its nanoseconds per event, or -1. */
static double run_child(const struct bcase *c)
{
    int fds[2];
    if (pipe(fds) < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        _exit(run_case(c, fds[1]));
    }
    close(fds[1]);
    double ns = -1;
    int status = 1;
    if (pid < 0 || read(fds[0], &ns, sizeof ns) != (ssize_t)sizeof ns) ns = -1;
    close(fds[0]);
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        ns = -1;
    return ns;
}

/* The per-event cost of every case that ran against the 128-host case of
 * its transport (the name's suffix). */
static void print_ratios(const double *best)
{
    size_t n = sizeof cases / sizeof cases[0];
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        const char *flav = strchr(cases[i].name, '-');
        if (best[i] <= 0 || strncmp(cases[i].name, "perm128-", 8) == 0) continue;
        for (size_t b = 0; b < n; b++) {
            if (strncmp(cases[b].name, "perm128-", 8) != 0 ||
                strcmp(strchr(cases[b].name, '-'), flav) != 0 || best[b] <= 0)
                continue;
            if (!any) printf("per-event wall cost against 128 hosts (best of the runs):\n");
            any = 1;
            printf("  %-14s %7.1f ns / %-12s %6.1f ns = %5.2fx\n", cases[i].name, best[i],
                   cases[b].name, best[b], best[i] / best[b]);
        }
    }
}

int main(int argc, char **argv)
{
    int large = 0, repeat = 1;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--large") == 0)
            large = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            repeat = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_sim_speed [--large] [--only NAME] [--repeat N]\n");
            return 2;
        }
    }
    printf("packet size %zu B; sampling off; wall clock of the run (build included)\n",
           sizeof(struct pkt));
    printf("%-14s %8s %10s %10s %7s %8s %8s %7s %9s %8s %6s\n", "case", "sim_us", "pkt_hops",
           "events", "wall_s", "Mhops/s", "Mev/s", "ns/ev", "rss_MB", "pkt_peak", "B/pkt");
    fflush(stdout);
    int fails = 0;
    double best[sizeof cases / sizeof cases[0]] = {0};
    for (int r = 0; r < repeat; r++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const struct bcase *c = &cases[i];
            if (only ? strcmp(only, c->name) != 0 : (c->large && !large)) continue;
            double ns = run_child(c);
            if (ns < 0) {
                printf("%-14s failed\n", c->name);
                fflush(stdout);
                fails++;
            } else if (best[i] == 0 || ns < best[i]) {
                best[i] = ns;
            }
        }
    }
    print_ratios(best);
    if (!large && !only) printf("(16,384 hosts: bench_sim_speed --large)\n");
    return fails ? 1 : 0;
}
