/* run.sample_ports: the ports sampled on their own, and their names. */
#include "scn_run.h"

#include <stdio.h>
#include "base/alloc.h"

/* run.sample_ports: the ports with their own series and their names
 * ("NODE:pK->PEER", K the port's number at its node). */
int scn_setup_port_series(const arb_scenario *sc, arb_scenario_result *r, const arb_topo *t,
                          struct sampler *sp, char *err, size_t errlen)
{
    const char *list = scn_str(sc, K_RUN_SAMPLEPORTS);
    if (!*list) return 0;
    char msg[512];
    unsigned n = 0;
    int rc = scn_port_list(t, list, &r->sp_ports, &n, msg, sizeof msg);
    if (rc < 0) return scn_key_fail(sc, K_RUN_SAMPLEPORTS, err, errlen, rc, msg);
    if (n == 0) { /* all */
        n = arb_topo_n_ports(t);
        arb_free(r->sp_ports);
        r->sp_ports = arb_malloc((n ? n : 1) * sizeof *r->sp_ports);
        if (!r->sp_ports) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        for (unsigned i = 0; i < n; i++)
            r->sp_ports[i] = i;
    }
    r->n_sp = n;
    r->sp_name = arb_malloc((n ? n : 1) * sizeof *r->sp_name);
    sp->port_of = arb_malloc(arb_topo_n_ports(t) * sizeof *sp->port_of);
    sp->cur_port_util = arb_calloc(n ? n : 1, sizeof *sp->cur_port_util);
    sp->cur_port_q = arb_calloc(n ? n : 1, sizeof *sp->cur_port_q);
    r->pend_port_util = arb_calloc(n ? n : 1, sizeof *r->pend_port_util);
    r->last_port_util = arb_calloc(n ? n : 1, sizeof *r->last_port_util);
    r->pend_port_q = arb_calloc(n ? n : 1, sizeof *r->pend_port_q);
    if (!r->sp_name || !sp->port_of || !sp->cur_port_util || !sp->cur_port_q ||
        !r->pend_port_util || !r->last_port_util || !r->pend_port_q)
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    for (uint32_t p = 0; p < arb_topo_n_ports(t); p++)
        sp->port_of[p] = -1;
    for (unsigned i = 0; i < n; i++) {
        uint32_t p = r->sp_ports[i], owner = arb_topo_port_owner(t, p);
        char a[16], b[16];
        arb_topo_node_name(t, owner, a, sizeof a);
        arb_topo_node_name(t, arb_topo_port(t, p)->peer, b, sizeof b);
        snprintf(r->sp_name[i], sizeof r->sp_name[i], "%s:p%u->%s", a,
                 p - arb_topo_node(t, owner)->first_port, b);
        sp->port_of[p] = (int32_t)i;
    }
    return 0;
}
