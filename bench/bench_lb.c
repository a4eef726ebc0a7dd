/*
 * bench_lb: the load-balancing schemes of lb.h on two small experiments.
 *
 *   1. Asymmetry (CONGA's case): leafspine:2,4,2, the link spine 1 ->
 *      leaf 1 at 25 Gb/s instead of 100. Hosts 0-3 (leaf 0) each send 100
 *      messages of 64 KiB to hosts 4-7 (leaf 1), one every 20 us, staggered
 *      by 3 us: 105 Gb/s offered to paths of 100 and 25 Gb/s. IRN with a
 *      50 us reorder window. Prints the share of leaf 0's uplink bytes that
 *      took spine 1 (the capacity-proportional share is 20%), message
 *      completion times, the slow link's deepest queue, drops and resent
 *      bytes.
 *   2. Cost: a permutation (host h -> h + 13) of 1 MB flows on
 *      leafspine:8,8,8, per scheme: wall time per packet-hop and the
 *      chooser's decisions.
 *
 *   build/bench/bench_lb [SCHEME...]    (default: every scheme below)
 */
#include "arbor/lb.h"
#include "arbor/sim.h"
#include "arbor/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int asymmetry(const char *scheme)
{
    char err[256];
    arb_topo *t = NULL;
    if (arb_topo_new(&t, "leafspine:2,4,2", NULL, err, sizeof err) < 0) {
        fprintf(stderr, "bench_lb: %s\n", err);
        return 1;
    }
    uint32_t S1 = arb_topo_node_id(t, 2, 1);
    uint32_t slow = arb_topo_node(t, S1)->first_port + 1; /* spine 1 -> leaf 1 */
    arb_topo_set_link(t, slow, 25000000000ull, arb_topo_port(t, slow)->delay);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.transport = ARB_TRANSPORT_IRN;
    cfg.irn_reorder = 50 * ARB_PS_PER_US;
    arb_lb *lb = NULL;
    arb_sim *s = NULL;
    if (arb_lb_new(&lb, t, NULL, scheme, &cfg, err, sizeof err) < 0 ||
        arb_sim_new(&s, t, &cfg) < 0) {
        fprintf(stderr, "bench_lb: %s: %s\n", scheme, err);
        arb_lb_free(lb);
        arb_topo_free(t);
        return 1;
    }
    for (uint32_t h = 0; h < 4; h++)
        for (unsigned m = 0; m < 100; m++)
            arb_sim_add_flow(s, h, 4 + h, 65536, m * 20 * ARB_PS_PER_US + h * 3 * ARB_PS_PER_US,
                             (uint16_t)(1000 + h), h, NULL);
    arb_sim_run(s, ARB_TIME_NEVER);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    double sum = 0, worst = 0;
    for (uint32_t f = 0; f < arb_sim_n_flows(s); f++) {
        arb_sim_flow_result r;
        arb_sim_flow(s, f, &r);
        double d = (double)(r.finish - r.start) / 1e6;
        sum += d;
        if (d > worst) worst = d;
    }
    const arb_node *l0 = arb_topo_node(t, arb_topo_node_id(t, 1, 0));
    arb_sim_port_stats a, b, sp;
    arb_sim_port(s, l0->first_up, &a);
    arb_sim_port(s, l0->first_up + 1, &b);
    arb_sim_port(s, slow, &sp);
    printf("%-16s %8.1f%% %10.1f %10.1f %10u %7llu %10llu\n", scheme,
           100.0 * (double)b.tx_bytes / (double)(a.tx_bytes + b.tx_bytes), sum / arb_sim_n_flows(s),
           worst, sp.max_queue, (unsigned long long)st.drops, (unsigned long long)st.retx_bytes);
    arb_sim_free(s);
    arb_lb_free(lb);
    arb_topo_free(t);
    return 0;
}

static int cost(const char *scheme)
{
    char err[256];
    arb_topo *t = NULL;
    if (arb_topo_new(&t, "leafspine:8,8,8", NULL, err, sizeof err) < 0) return 1;
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.transport = ARB_TRANSPORT_IRN;
    cfg.irn_reorder = 10 * ARB_PS_PER_US;
    arb_lb *lb = NULL;
    arb_sim *s = NULL;
    if (arb_lb_new(&lb, t, NULL, scheme, &cfg, err, sizeof err) < 0 ||
        arb_sim_new(&s, t, &cfg) < 0) {
        fprintf(stderr, "bench_lb: %s: %s\n", scheme, err);
        arb_lb_free(lb);
        arb_topo_free(t);
        return 1;
    }
    uint32_t n = arb_topo_n_hosts(t);
    for (uint32_t h = 0; h < n; h++)
        arb_sim_add_flow(s, h, (h + 13) % n, 1000000, 0, (uint16_t)(1000 + h), h, NULL);
    double t0 = wall();
    arb_sim_run(s, ARB_TIME_NEVER);
    double el = wall() - t0;
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    arb_lb_stats ls;
    arb_lb_get_stats(lb, &ls);
    printf("%-16s %10llu %10llu %8.1f %12llu\n", scheme, (unsigned long long)st.packet_hops,
           (unsigned long long)ls.decisions, el * 1e9 / (double)st.packet_hops,
           (unsigned long long)st.retx_bytes);
    arb_sim_free(s);
    arb_lb_free(lb);
    arb_topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {
        "ecmp", "letflow:gap=5us", "flowlet:gap=5us", "conga:gap=5us", "ar", "spray", "dmodk"};
    const char *const *schemes = defaults;
    int n = (int)(sizeof defaults / sizeof defaults[0]);
    if (argc > 1) {
        schemes = (const char *const *)(argv + 1);
        n = argc - 1;
    }
    int rc = 0;
    printf("asymmetry: leafspine:2,4,2, spine 1 -> leaf 1 at 25 Gb/s, 4 x 100 x 64 KiB\n");
    printf("%-16s %9s %10s %10s %10s %7s %10s\n", "scheme", "spine 1", "mean us", "worst us",
           "max queue", "drops", "resent B");
    for (int i = 0; i < n; i++)
        rc |= asymmetry(schemes[i]);
    printf("\ncost: leafspine:8,8,8, permutation of 1 MB flows, IRN\n");
    printf("%-16s %10s %10s %8s %12s\n", "scheme", "hops", "decisions", "ns/hop", "resent B");
    for (int i = 0; i < n; i++)
        rc |= cost(schemes[i]);
    return rc;
}
