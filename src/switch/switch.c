/*
 * The switch engine (switch.h): the one place that decides what an Arbor
 * switch does with a packet of a tree, for the simulator and the runtime.
 */
#include "switch/switch_int.h"

#include <string.h>

void arb_switch_config_default(arb_switch_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
}

int arb_switch_new(arb_switch **out, const arb_switch_config *cfg)
{
    if (!out) return ARB_EINVAL;
    *out = NULL;
    arb_switch_config c;
    if (cfg)
        c = *cfg;
    else
        arb_switch_config_default(&c);
    arb_switch *sw = arb_mem_calloc(c.mem, 1, sizeof *sw);
    if (!sw) return ARB_ENOMEM;
    sw->cfg = c;
    *out = sw;
    return 0;
}

void arb_switch_free(arb_switch *sw)
{
    if (sw) arb_mem_free(sw->cfg.mem, sw);
}

int arb_switch_set_tap(arb_switch *sw, arb_switch_tap tap, void *ctx)
{
    if (!sw) return ARB_EINVAL;
    sw->tap = tap;
    sw->tap_ctx = ctx;
    return 0;
}

void arb_switch_get_stats(const arb_switch *sw, arb_switch_stats *out)
{
    *out = sw->st;
}

const char *arb_switch_verb_name(int verb)
{
    static const char *const names[ARB_SWITCH_VERB_COUNT] = {"DROP", "CONSUMED", "UP", "CHILDREN",
                                                             "UNICAST"};
    return verb >= 0 && verb < ARB_SWITCH_VERB_COUNT ? names[verb] : NULL;
}

/* The tap's view of the call, once the decision is made. */
void switch_tap_call(const arb_switch *sw, const arb_hdr *in, const void *in_payload, size_t in_len,
                     int in_ce, const arb_switch_packet *pkt, arb_time now,
                     const arb_switch_action *out)
{
    arb_switch_event ev = {.node = sw->cfg.node,
                           .now = now,
                           .in = in,
                           .in_payload = in_payload,
                           .in_len = in_len,
                           .in_ce = in_ce,
                           .out = pkt,
                           .act = out};
    sw->tap(sw->tap_ctx, &ev);
}

arb_time arb_switch_next_expiry(const arb_switch *sw, const arb_agg *agg)
{
    (void)sw;
    return agg ? arb_agg_next_expiry(agg) : ARB_TIME_NEVER;
}

int arb_switch_expire(arb_switch *sw, arb_agg *agg, arb_time now, arb_switch_recredit *out)
{
    if (!sw || !agg || !out) return ARB_EINVAL;
    arb_agg_recredit rc;
    int got;
    while ((got = arb_agg_expire(agg, now, &rc)) == 1) {
        uint32_t n = 0;
        for (uint32_t w = 0; w < rc.words; w++)
            for (uint64_t m = rc.missing[w]; m; m &= m - 1)
                sw->left[n++] = sw->cfg.first_port + 64 * w + (uint32_t)__builtin_ctzll(m);
        if (!n) continue;
        out->channel = rc.channel;
        out->hdr = rc.hdr;
        out->payload = rc.payload;
        out->payload_len = rc.payload_len;
        out->ce = rc.ce;
        out->ports = sw->left;
        out->n_ports = n;
        sw->st.recredits++;
        sw->st.recredit_copies += n;
        return 1;
    }
    return got;
}

int arb_switch_recv(arb_switch *sw, arb_agg *agg, const arb_plan *plan, const arb_plan_entry *e,
                    arb_switch_packet *pkt, arb_time now, arb_switch_action *out)
{
    if (!sw || !plan || !e || !pkt || !pkt->hdr || !out || (e->aggregate && !agg))
        return ARB_EINVAL;
    return switch_decide(sw, agg, plan, e, pkt, now, out);
}
