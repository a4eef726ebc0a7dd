/*
 * bench_route: exact D-mod-k link loads for every shift of a 16-ary 3-tree
 * (4096 hosts, 4095 phases of 4096 flows), through the same engine and
 * load counters `arbor route` uses. Prints the time and the per-hop cost.
 *
 *   build/bench/bench_route [SPEC [ENGINE]]     (default kary:16,3 dmodk)
 */
#include "arbor/route.h"
#include "arbor/topo.h"
#include "arbor/traffic.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "kary:16,3";
    const char *engine = argc > 2 ? argv[2] : "dmodk";
    char err[256];
    arb_topo *t = NULL;
    arb_route *r = NULL;
    arb_traffic *tr = NULL;
    arb_route_load *l = NULL;
    if (arb_topo_new(&t, spec, NULL, err, sizeof err) < 0 ||
        arb_route_new(&r, t, engine, NULL, err, sizeof err) < 0 ||
        arb_traffic_new(&tr, "shift:all", arb_topo_n_hosts(t), NULL, err, sizeof err) < 0) {
        fprintf(stderr, "bench_route: %s\n", err);
        return 1;
    }
    if (arb_route_load_new(&l, t) < 0) return 1;
    size_t cap = arb_traffic_max_flows(tr);
    arb_flow *f = malloc(cap * sizeof *f);
    if (!f) return 1;
    uint32_t phases = arb_traffic_phases(tr);
    double t0 = now();
    for (uint32_t ph = 0; ph < phases; ph++) {
        long n = arb_traffic_phase(tr, ph, NULL, f, cap);
        if (n < 0 || arb_route_load_phase(l, r, f, (size_t)n) < 0) return 1;
    }
    double dt = now() - t0;
    arb_route_stats st;
    arb_route_load_stats(l, &st);
    printf("bench_route: %s %s shift:all: %u phases, %llu flows, %llu hops\n", spec, engine, phases,
           (unsigned long long)st.flows, (unsigned long long)st.hops);
    printf("  max_link_load %u (fabric %u, host %u), unroutable %llu\n", st.max_load,
           st.fabric_max_load, st.host_max_load, (unsigned long long)st.unroutable);
    printf("  time %.2f s, %.1f ns per hop, %.2f M flows/s\n", dt, dt * 1e9 / (double)st.hops,
           (double)st.flows / dt / 1e6);
    free(f);
    arb_route_load_free(l);
    arb_traffic_free(tr);
    arb_route_free(r);
    arb_topo_free(t);
    return 0;
}
