/*
 * A partitioned run (--partition, docs/partition.md): what it does not
 * support, refused by the key that asks for it, and the fabric cut by subtree.
 */
#include "scn_run.h"

#include <stdio.h>
#include "base/alloc.h"

/* run.qp_order in a partitioned run: each host is reached through the
 * ports of one part (its links' far ends in one part), so that a QP's
 * packets are counted, in order, in one part. */
static int order_one_part(const arb_topo *t, const uint32_t *np, char *msg, size_t len)
{
    uint32_t H = arb_topo_n_hosts(t);
    const arb_node *nodes = arb_topo_nodes(t);
    const arb_port *ports = arb_topo_ports(t);
    for (uint32_t h = 0; h < H; h++) {
        const arb_node *n = &nodes[h];
        for (uint32_t p = n->first_port + 1; p < n->first_port + n->n_up; p++) {
            uint32_t a = ports[n->first_port].peer, b = ports[p].peer;
            if (np[a] == np[b]) continue;
            char ha[16] = "?", na[16] = "?", nb[16] = "?";
            arb_topo_node_name(t, h, ha, sizeof ha);
            arb_topo_node_name(t, a, na, sizeof na);
            arb_topo_node_name(t, b, nb, sizeof nb);
            return arb_errf(msg, len, ARB_EINVAL,
                            "not supported by this partitioned run (--partition): host %s is "
                            "reached from %s (part %u) and %s (part %u), and a QP's order is "
                            "counted in one part",
                            ha, na, np[a], nb, np[b]);
        }
    }
    return 0;
}

/* A partitioned run of a workload whose flows start on others'
 * completions: each part hears of a completion in another part at the end
 * of the window it falls in, so what it starts must start a lookahead or
 * more after it (workload.start_delay). */
static int chained_starts(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    if (!run->w) return 0;
    arb_workload_kind wk = arb_workload_get_kind(run->w);
    arb_workload_result wr;
    arb_workload_get_result(run->w, &wr);
    if (wk != ARB_WL_ALLREDUCE && wk != ARB_WL_HCOLL && wk != ARB_WL_ITERATION &&
        !(wk == ARB_WL_PATTERN && wr.phases > 1))
        return 0;
    arb_sim_part_info pi;
    if (arb_sim_part_figures(run->s, &pi) < 0 || pi.n_ranks == 1) return 0;
    if (pi.lookahead == ARB_TIME_NEVER) /* parts with no link between them */
        return scn_key_fail(sc, K_WL_KIND, run->err, run->errlen, ARB_EINVAL,
                            "not supported by a partitioned run (--partition) whose parts no link "
                            "joins: its flows start on others' completions");
    char msg[320];
    arb_time comp = arb_workload_min_compute(run->w);
    if (comp < pi.lookahead) {
        snprintf(msg, sizeof msg,
                 "not supported by this partitioned run (--partition): a compute node of %.6f "
                 "us, shorter than the lookahead, %.6f us, would end inside the window it "
                 "started in (docs/partition.md)",
                 (double)comp / (double)ARB_PS_PER_US,
                 (double)pi.lookahead / (double)ARB_PS_PER_US);
        return scn_key_fail(sc, K_WL_FILE, run->err, run->errlen, ARB_EINVAL, msg);
    }
    if (scn_u64(sc, K_WL_START_DELAY) >= pi.lookahead) return 0;
    snprintf(msg, sizeof msg,
             "a partitioned run (--partition) of %s needs at least the lookahead, %.6f us: a "
             "part hears of a completion in another part only at the end of the window it "
             "falls in (docs/partition.md)",
             wk == ARB_WL_PATTERN ? "a pattern of several phases" : scn_str(sc, K_WL_KIND),
             (double)pi.lookahead / (double)ARB_PS_PER_US);
    return scn_key_fail(sc, K_WL_START_DELAY, run->err, run->errlen, ARB_EINVAL, msg);
}

/* The host model and repeated calls (arbor.calls and the cost keys):
 * not in a partitioned run, whose parts would hear of a call's end only
 * at the end of a window, the key that asks named. */
static int host_model(const arb_scenario *sc, char *err, size_t errlen)
{
    static const enum scn_key keys[] = {K_AR_CALLS, K_AR_HCALL, K_AR_HPKT,  K_AR_HRATE, K_AR_HWAKE,
                                        K_AR_SPKT,  K_AR_SRATE, K_AR_SWAKE, K_AR_CORES};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (scn_u64(sc, keys[i]) > (keys[i] == K_AR_CALLS))
            return scn_key_fail(sc, keys[i], err, errlen, ARB_EINVAL,
                                "not supported by a partitioned run (--partition): the host model "
                                "and repeated calls run whole");
    return 0;
}

/* A partitioned run: what it does not support, by the key that asks for
 * it (docs/partition.md); then the fabric cut by subtree. */
int scn_run_partition(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    char msg[512];
    int hm = host_model(sc, run->err, run->errlen);
    if (hm < 0) return hm;
    if (!run->cfg.local_order)
        return scn_key_fail(sc, K_RUN_ORDER, run->err, run->errlen, ARB_EINVAL,
                            "a partitioned run (--partition) needs local: the global order has no "
                            "parts");
    uint32_t n = arb_topo_n_nodes(run->t);
    uint32_t *np = arb_malloc((n ? n : 1) * sizeof *np);
    if (!np) return arb_errf(run->err, run->errlen, ARB_ENOMEM, "out of memory");
    int rc = arb_sim_part_subtrees(run->t, run->part->n_ranks, np);
    if (rc < 0) {
        arb_free(np);
        return arb_errf(run->err, run->errlen, rc, "--partition %u: %s", run->part->n_ranks,
                        rc == ARB_EINVAL ? "more parts than the fabric has hosts"
                                         : "out of memory");
    }
    if (run->order && (rc = order_one_part(run->t, np, msg, sizeof msg)) < 0) {
        arb_free(np);
        return scn_key_fail(sc, K_RUN_QPORDER, run->err, run->errlen, rc, msg);
    }
    rc = arb_sim_partition(run->s, run->part, np, msg, sizeof msg);
    arb_free(np);
    if (rc == 0 && run->stop) rc = arb_sim_part_stop_after(run->s, run->stop_t, run->stop_event);
    if (rc < 0) return arb_errf(run->err, run->errlen, rc, "%s", msg);
    return chained_starts(run);
}
