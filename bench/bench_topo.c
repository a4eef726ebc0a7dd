/*
 * bench_topo: build time and memory of 65,536-host fabrics, and the cost
 * of the per-hop lookups a router makes (up port by D-mod-k arithmetic,
 * down port toward a host) over every flow of one shift permutation.
 *
 * usage: bench_topo [SPEC ...]
 *   default: pgft:3;16,64,64;1,16,64;1,1,1 (full-bisection 3-level PGFT)
 *            and kary:16,4 (16-ary 4-tree), both 65,536 hosts.
 *
 * Peak RSS is the process's high-water mark (getrusage): each fabric is
 * freed before the next is built, and the figure printed after a build is
 * the peak so far, so the first one is that fabric's own.
 */
#include "arbor/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

/* Route every flow i -> i + s with D-mod-k; returns the hops taken. */
static uint64_t route_shift(const arb_topo *t, uint32_t s, uint64_t *check)
{
    const arb_pgft *g = arb_topo_pgft(t);
    const arb_node *nodes = arb_topo_nodes(t);
    const arb_port *ports = arb_topo_ports(t);
    uint32_t n = arb_topo_n_hosts(t);
    uint64_t hops = 0, sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = (i + s) % n, cur = i;
        while (!arb_pgft_below(g, &nodes[cur], j)) {
            unsigned l = nodes[cur].level;
            uint32_t q = (j / g->W[l]) % (g->w[l + 1] * g->p[l + 1]);
            uint32_t p = nodes[cur].first_up + q;
            sum += p;
            cur = ports[p].peer;
            hops++;
        }
        while (cur != j) {
            uint32_t p = arb_pgft_down_port(g, &nodes[cur], j);
            sum += p;
            cur = ports[p].peer;
            hops++;
        }
    }
    *check += sum;
    return hops;
}

static int bench(const char *spec)
{
    char err[256];
    arb_topo *t;
    double t0 = now_s();
    int rc = arb_topo_new(&t, spec, NULL, err, sizeof err);
    double built = now_s() - t0;
    if (rc < 0) {
        fprintf(stderr, "bench_topo: %s\n", err);
        return 1;
    }
    double rss = peak_rss_mib();
    uint32_t hosts = arb_topo_n_hosts(t), nodes = arb_topo_n_nodes(t);
    uint32_t ports = arb_topo_n_ports(t);
    double arrays =
        ((double)nodes * sizeof(arb_node) + (double)ports * sizeof(arb_port)) / (1024.0 * 1024.0);
    printf("%s\n", spec);
    printf("  hosts %u, switches %u, directed links %u\n", hosts, nodes - hosts, ports);
    printf("  build            %8.3f ms\n", built * 1e3);
    printf("  arrays           %8.1f MiB (%zu B per node, %zu B per port)\n", arrays,
           sizeof(arb_node), sizeof(arb_port));
    printf("  peak RSS         %8.1f MiB (process high-water mark, goal < 1024)\n", rss);

    uint64_t check = 0, hops = 0;
    uint32_t shifts = 0;
    t0 = now_s();
    for (uint32_t s = 1; s < hosts && now_s() - t0 < 1.0; s = s * 3 + 1, shifts++)
        hops += route_shift(t, s, &check);
    double el = now_s() - t0;
    printf("  D-mod-k walk     %8.1f ns per hop (%u shifts, %llu hops, check %llu)\n",
           el * 1e9 / (double)hops, shifts, (unsigned long long)hops,
           (unsigned long long)(check % 1000));
    arb_topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {"pgft:3;16,64,64;1,16,64;1,1,1", "kary:16,4"};
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            rc |= bench(argv[i]);
    } else {
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
            rc |= bench(defaults[i]);
    }
    return rc;
}
