/*
 * Fuzz target: routing.steer, timed route overrides (scn_steer_make):
 * rules of a switch name and settings src=, dst=, kind=, from=, until=,
 * up=, down=, port=. The first line of the input names the topology (a
 * small spec; else leafspine:2,4,2), the rest is the value.
 *
 * Invariants: the parse returns 0, ARB_EPARSE, ARB_ENOENT or ARB_ENOMEM
 * with a message, and leaves the simulator's route alone on error; a
 * parsed set installs its route in front of the one it found, and routing
 * through it at any switch, at any time, for any host pair, gives a port
 * of that switch (a rule's port, or the base route's).
 */
#include "fuzz_text.h"
#include "scenario/scn_int.h"

/* The base route: the switch's first port, recognisable. */
static uint32_t base_route(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                           const arb_sim_pkt_info *f, arb_time now)
{
    (void)s, (void)in_port, (void)f, (void)now;
    return arb_topo_node(ctx, node)->first_port;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    char *s = fuzz_cstr(data, size);
    char *text;
    arb_topo *t = fuzz_topo_line(s, &text);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = base_route;
    cfg.route_ctx = t;
    struct scn_steer *st = (struct scn_steer *)1;
    char err[512] = "";
    int rc = scn_steer_make(&st, t, text, &cfg, err, sizeof err);
    if (rc < 0) {
        static const int allowed[] = {ARB_EPARSE, ARB_ENOENT, ARB_ENOMEM, 0};
        fuzz_error_ok(rc, allowed, err);
        fuzz_require(st == NULL && cfg.route == base_route && cfg.route_ctx == t);
    } else {
        fuzz_require(rc == 0 && st != NULL && cfg.route != base_route);
        uint32_t hosts = arb_topo_n_hosts(t), nodes = arb_topo_n_nodes(t);
        static const arb_time at[] = {0, 1000000, 1000000000, ARB_TIME_NEVER - 1};
        for (uint32_t n = hosts; n < nodes; n++) {
            const arb_node *nd = arb_topo_node(t, n);
            for (uint32_t k = 0; k < 4; k++) {
                arb_sim_pkt_info f;
                memset(&f, 0, sizeof f);
                f.src = k % hosts;
                f.dst = (k + 1) % hosts;
                f.kind = k & 1 ? ARB_SIM_DATA : ARB_SIM_ACK;
                uint32_t p = cfg.route(cfg.route_ctx, NULL, n, ARB_TOPO_NONE, &f, at[k]);
                fuzz_require(p >= nd->first_port && p < nd->first_port + nd->n_down + nd->n_up);
            }
        }
        scn_steer_free(st);
    }
    arb_topo_free(t);
    free(s);
    return 0;
}
