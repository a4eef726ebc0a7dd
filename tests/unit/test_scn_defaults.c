/* The scenario keys' defaults, as `arbor sim --keys` prints them
 * (arb_scenario_key), against the engines' defaults read through their
 * *_config_default(); and the keys that take a name (choices.c) against
 * the choices the key table lists. */
#include "arbor/plan.h"
#include "arbor/scenario.h"
#include "arbor/sim.h"
#include "arbor/topo.h"
#include "arbor/workload.h"
#include "scenario/scn_int.h"
#include "testkit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The default `arbor sim --keys` prints for SECTION.KEY (NULL: no such key). */
static const char *printed(const char *name)
{
    for (size_t i = 0; i < arb_scenario_n_keys(); i++) {
        arb_scenario_key_info ki;
        char full[96];
        if (arb_scenario_key(i, &ki) < 0) return NULL;
        snprintf(full, sizeof full, "%s.%s", ki.section, ki.key);
        if (strcmp(full, name) == 0) return ki.def;
    }
    return NULL;
}

enum kind { WHOLE, SIZE, TIME, TIME_AUTO, RATE, REAL, SWITCH };

/* Key `name`'s printed default read as `kind`, against the engine's v (x for REAL). */
static void want(const char *name, enum kind kind, uint64_t v, double x)
{
    const char *t = printed(name);
    if (!t) {
        TESTKIT_REPORT("%s: no such key", name);
        return;
    }
    uint64_t got = 0;
    int rc = 0;
    switch (kind) {
    case WHOLE:
        got = strtoull(t, NULL, 10);
        break;
    case SIZE:
        rc = arb_parse_size(t, strlen(t), UINT64_MAX, &got);
        break;
    case TIME_AUTO:
        if (strcmp(t, "auto") == 0) break;
        /* fall through */
    case TIME:
        rc = arb_topo_parse_time(t, &got);
        break;
    case RATE:
        rc = strcmp(t, "0") == 0 ? 0 : arb_topo_parse_rate(t, &got);
        break;
    case SWITCH:
        got = strcmp(t, "on") == 0;
        break;
    case REAL:
        if (strtod(t, NULL) != x) TESTKIT_REPORT("%s = %s, the engine's %.17g", name, t, x);
        return;
    }
    if (rc < 0) TESTKIT_REPORT("%s = %s: not a value of its kind", name, t);
    if (got != v)
        TESTKIT_REPORT("%s = %s (%llu), the engine's %llu", name, t, (unsigned long long)got,
                       (unsigned long long)v);
}

static void want_name(const char *name, const char *engine)
{
    const char *t = printed(name);
    if (!t || !engine || strcmp(t, engine) != 0)
        TESTKIT_REPORT("%s = %s, the engine's %s", name, t ? t : "(none)",
                       engine ? engine : "(none)");
}

TEST(fabric_transport_switch)
{
    arb_topo_config tc = arb_topo_config_default();
    want("fabric.link_rate", RATE, tc.rate, 0);
    want("fabric.up_rate", RATE, tc.up_rate, 0);
    want("fabric.delay", TIME, tc.delay, 0);
    arb_sim_config c;
    arb_sim_config_default(&c);
    want("fabric.loss", REAL, 0, c.loss);
    want("fabric.dup", REAL, 0, c.dup);
    want("fabric.reorder", REAL, 0, c.reorder);
    want("fabric.reorder_delay", TIME, c.reorder_delay, 0);
    want_name("transport.kind", arb_transport_name(c.transport));
    want("transport.mtu", SIZE, c.mtu, 0);
    want("transport.header", SIZE, c.hdr_bytes, 0);
    want("transport.ctrl", SIZE, c.ctrl_bytes, 0);
    want("transport.rto_low", TIME_AUTO, c.rto_low, 0);
    want("transport.rto_high", TIME_AUTO, c.rto_high, 0);
    want("transport.rto_low_n", WHOLE, c.rto_low_n, 0);
    want_name("transport.tlp", c.tlp == ARB_SIM_TLP_AUTO ? "auto" : c.tlp ? "on" : "off");
    want("transport.retry_limit", WHOLE, c.retry_limit, 0);
    want("transport.window", WHOLE, c.window, 0);
    want("transport.ack_every", WHOLE, c.ack_every, 0);
    want("transport.irn_reorder", TIME, c.irn_reorder, 0);
    want("transport.dcqcn", SWITCH, (uint64_t)c.dcqcn, 0);
    want("switch.queue", SIZE, c.queue_bytes, 0);
    want("switch.ecn", SWITCH, (uint64_t)c.ecn, 0);
    want("switch.kmin", SIZE, c.ecn_kmin, 0);
    want("switch.kmax", SIZE, c.ecn_kmax, 0);
    want("switch.pmax", REAL, 0, c.ecn_pmax);
    want("switch.pfc", SWITCH, (uint64_t)c.pfc, 0);
    want("switch.xoff", SIZE, c.pfc_xoff, 0);
    want("switch.xon", SIZE, c.pfc_xon, 0);
    want("run.seed", WHOLE, c.seed, 0);
    want_name("run.order", c.local_order ? "local" : "global");
}

TEST(workload_and_plan)
{
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    want("workload.qps", WHOLE, wc.qps, 0);
    want_name("workload.qp_mode", arb_qp_mode_name(wc.qp_mode));
    want("workload.shared_sport", SWITCH, (uint64_t)wc.shared_sport, 0);
    want("workload.start_delay", TIME, wc.start_delay, 0);
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    want_name("arbor.collective", arb_coll_name(pc.coll));
    want_name("arbor.dtype", arb_dtype_name(pc.dtype));
    want("arbor.subchannels", WHOLE, pc.subchannels, 0);
    want("arbor.root", WHOLE, pc.root, 0);
    want_name("arbor.profile", pc.header == 0 ? "auto" : pc.header == 16 ? "16" : "20");
    arb_hcoll_config hc;
    arb_hcoll_config_default(&hc);
    want_name("host.coll", arb_coll_name(hc.coll));
    want_name("host.algorithm", arb_hc_algo_name(hc.algo));
    want("host.root_rank", WHOLE, hc.root, 0);
    arb_iteration_config ic;
    arb_iteration_config_default(&ic);
    want_name("host.algorithm", arb_hc_algo_name(ic.algo)); /* one key, both engines */
    want("arbor.inner_ranks", WHOLE, ic.inner_ranks, 0);
    want("arbor.inner_pieces", WHOLE, ic.inner_pieces, 0);
}

TEST(arbor_engines)
{
    arb_sim_arbor_config a;
    arb_sim_arbor_config_default(&a);
    want_name("arbor.mode", a.values ? "values" : "headers");
    want("arbor.payload", SIZE, a.ep.payload, 0);
    want("arbor.window", WHOLE, a.ep.window, 0);
    want("arbor.slots", WHOLE, a.slots, 0);
    want_name("arbor.repair", a.local_repair ? "local" : "end-to-end");
    want("arbor.timeout", TIME, a.ep.timeout, 0);
    want_name("arbor.timeout_mode", a.ep.adaptive_timeout ? "adaptive" : "fixed");
    want("arbor.timeout_min", TIME, a.ep.timeout_min, 0);
    want_name("arbor.detection", a.ep.order_detection ? "order" : "timer");
    want("arbor.attempts", WHOLE, a.ep.attempts, 0);
    want("arbor.miss_limit", WHOLE, a.ep.miss_limit, 0);
    want("arbor.dead_after", WHOLE, a.ep.dead_after, 0);
    want("arbor.repair_tries", WHOLE, a.ep.repair_tries, 0);
    want("arbor.retry", TIME, a.ep.retry, 0);
    want("arbor.retry_min", TIME, a.ep.retry_min, 0);
    want_name("arbor.cc", arb_cc_kind_name(a.cc_kind));
    want("arbor.cc.base_rtt", TIME, a.cc_base_rtt, 0);
    want("arbor.wire_check", SWITCH, (uint64_t)a.wire_check, 0);
    want("arbor.skew", TIME, a.skew, 0);
    static const char *const skew[] = {"linear", "random", "lag"};
    want_name("arbor.skew_mode",
              a.skew_random >= 0 && a.skew_random < 3 ? skew[a.skew_random] : NULL);
    want_name("arbor.subchannel_mode", a.ep.dynamic_subchannels ? "dynamic" : "static");
}

TEST(controllers)
{
    arb_sim_arbor_config a;
    arb_sim_arbor_config_default(&a);
    const arb_cc_config *c = &a.cc;
    want("arbor.cc.window_min", WHOLE, c->window_min, 0);
    want("arbor.cc.window_max", WHOLE, c->window_max, 0);
    want("arbor.cc.timely.alpha", REAL, 0, c->timely.alpha);
    want("arbor.cc.timely.beta", REAL, 0, c->timely.beta);
    want("arbor.cc.timely.delta", RATE, c->timely.delta, 0);
    want("arbor.cc.timely.t_low", TIME, c->timely.t_low, 0);
    want("arbor.cc.timely.t_high", TIME, c->timely.t_high, 0);
    want("arbor.cc.timely.interval", TIME, c->timely.interval, 0);
    want("arbor.cc.timely.hai_after", WHOLE, c->timely.hai_after, 0);
    want("arbor.cc.timely.hai_factor", WHOLE, c->timely.hai_factor, 0);
    want("arbor.cc.timely.min_rate", RATE, c->timely.min_rate, 0);
    want("arbor.cc.swift.base_target", TIME, c->swift.base_target, 0);
    want("arbor.cc.swift.per_hop", TIME, c->swift.per_hop, 0);
    want("arbor.cc.swift.hops", WHOLE, c->swift.hops, 0);
    want("arbor.cc.swift.fs_range", TIME, c->swift.fs_range, 0);
    want("arbor.cc.swift.ai", REAL, 0, c->swift.ai);
    want("arbor.cc.swift.beta", REAL, 0, c->swift.beta);
    want("arbor.cc.swift.max_mdf", REAL, 0, c->swift.max_mdf);
    want("arbor.cc.swift.min_cwnd", REAL, 0, c->swift.min_cwnd);
    want("arbor.cc.swift.fs_min_cwnd", REAL, 0, c->swift.fs_min_cwnd);
    want("arbor.cc.swift.fs_max_cwnd", REAL, 0, c->swift.fs_max_cwnd);
    want("arbor.cc.swift.stall_reset", WHOLE, c->swift.stall_reset, 0);
    want("arbor.cc.dcqcn.cnp_interval", TIME, c->dcqcn.cnp_interval, 0);
    want("arbor.cc.dcqcn.g", REAL, 0, c->dcqcn.g);
    want("arbor.cc.dcqcn.alpha_init", REAL, 0, c->dcqcn.alpha_init);
    want("arbor.cc.dcqcn.alpha_timer", TIME, c->dcqcn.alpha_timer, 0);
    want("arbor.cc.dcqcn.rate_timer", TIME, c->dcqcn.rate_timer, 0);
    want("arbor.cc.dcqcn.byte_counter", SIZE, c->dcqcn.byte_counter, 0);
    want("arbor.cc.dcqcn.f", WHOLE, c->dcqcn.f, 0);
    want("arbor.cc.dcqcn.rai", RATE, c->dcqcn.rai, 0);
    want("arbor.cc.dcqcn.rhai", RATE, c->dcqcn.rhai, 0);
    want("arbor.cc.dcqcn.min_rate", RATE, c->dcqcn.min_rate, 0);
    want("arbor.cc.oscar.target", TIME, c->oscar.target, 0);
    want("arbor.cc.oscar.gain", REAL, 0, c->oscar.gain);
    want("arbor.cc.oscar.kappa", REAL, 0, c->oscar.kappa);
    want("arbor.cc.oscar.headroom", REAL, 0, c->oscar.headroom);
    want("arbor.cc.oscar.max_growth", REAL, 0, c->oscar.max_growth);
    want("arbor.cc.oscar.min_cwnd", REAL, 0, c->oscar.min_cwnd);
}

/* Every key has a default, and a new scenario holds it. */
TEST(every_key_has_its_default)
{
    arb_scenario *sc;
    REQUIRE(arb_scenario_new(&sc) == 0);
    for (size_t i = 0; i < arb_scenario_n_keys(); i++) {
        arb_scenario_key_info ki;
        REQUIRE(arb_scenario_key(i, &ki) == 0);
        CHECK(ki.def != NULL);
        if (ki.def) CHECK_STR(arb_scenario_get(sc, ki.section, ki.key), ki.def);
    }
    arb_scenario_free(sc);
}

/* A key's choices (the table's "a|b|c") and its names (choices.c) agree:
 * every choice has a value, and every name is a choice. */
TEST(choices_by_name)
{
    for (int k = 0; k < K_COUNT; k++) {
        arb_scenario_key_info ki;
        REQUIRE(arb_scenario_key((size_t)k, &ki) == 0);
        if (!ki.choices || k == K_WL_KIND) continue; /* the kind is read as text */
        char list[256];
        int v;
        snprintf(list, sizeof list, "%s", ki.choices);
        for (char *save = NULL, *c = strtok_r(list, "|", &save); c; c = strtok_r(NULL, "|", &save))
            if (scn_choice_parse((enum scn_key)k, c, &v) < 0)
                TESTKIT_REPORT("%s.%s: choice %s has no value", ki.section, ki.key, c);
        const struct scn_choice *t = scn_choices((enum scn_key)k);
        for (; t && t->name; t++) {
            size_t n = strlen(t->name);
            const char *p = strstr(ki.choices, t->name);
            int listed = 0;
            for (; p && !listed; p = strstr(p + 1, t->name))
                listed = (p == ki.choices || p[-1] == '|') && (p[n] == '|' || p[n] == '\0');
            if (!listed) TESTKIT_REPORT("%s.%s: %s is not a choice", ki.section, ki.key, t->name);
        }
    }
}

int main(void)
{
    RUN(fabric_transport_switch);
    RUN(workload_and_plan);
    RUN(arbor_engines);
    RUN(controllers);
    RUN(every_key_has_its_default);
    RUN(choices_by_name);
    return testkit_done();
}
