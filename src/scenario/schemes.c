/*
 * Routing schemes a scenario may name: every route.h engine and every
 * adaptive chooser of lb.h, through arb_lb_new, which installs the route
 * callback (and CONGA's in-band hook) in the simulator configuration.
 * routing.seed seeds the switches' hashes and choosers; the simulator
 * itself keeps the run's seed.
 */
#include "scn_int.h"

#include <stdio.h>
#include <string.h>

static void lb_destroy(void *ctx)
{
    arb_lb_free(ctx);
}

int scn_route_make(struct scn_route *r, arb_topo *t, const char *spec, uint64_t seed,
                   arb_sim_config *cfg, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    uint64_t run_seed = cfg->seed;
    cfg->seed = seed;
    arb_lb *lb;
    int rc = arb_lb_new(&lb, t, NULL, spec, cfg, err, errlen);
    cfg->seed = run_seed;
    if (rc < 0) return rc;
    r->ctx = lb;
    r->destroy = lb_destroy;
    snprintf(r->spec, sizeof r->spec, "%s", arb_lb_spec(lb));
    return 0;
}
