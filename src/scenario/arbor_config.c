/*
 * [arbor] as the planner's and the simulator's configurations every job
 * shares, checked, the error naming the key.
 */
#include "scn_run.h"

#include "arbor/plan.h"

#include <stdlib.h>
#include <string.h>

/* The plan configuration of [arbor] (ranks and bytes apart). */
int scn_arbor_plan_config(const arb_scenario *sc, arb_plan_config *pc, char *err, size_t errlen)
{
    arb_plan_config_default(pc);
    scn_engine_apply(sc, SCN_ENG_PLAN, pc); /* collective, dtype, root, subchannels, profile */
    pc->bytes = scn_u64(sc, K_WL_SIZE);
    pc->share_min = (uint32_t)scn_u64(sc, K_AR_PAYLOAD); /* as the runtime: a packet a share */
    const char *lv = scn_str(sc, K_AR_LEVELS);
    for (const char *q = lv; *q;) {
        char *end;
        unsigned long l = strtoul(q, &end, 10);
        if (end == q || l == 0 || l > 31 || (*end && *end != ','))
            return scn_key_fail(sc, K_AR_LEVELS, err, errlen, ARB_EPARSE,
                                "expected switch levels 1..31 separated by commas");
        pc->agg_levels |= 1u << l;
        q = *end ? end + 1 : end;
    }
    return 0;
}

/* The simulator's Arbor configuration of [arbor] (the plan apart). */
static void arbor_sim_config(const arb_scenario *sc, arb_sim_arbor_config *ac)
{
    arb_sim_arbor_config_default(ac);
    scn_engine_apply(sc, SCN_ENG_ARBOR, ac); /* the engines' settings and the controllers' */
    ac->start = scn_u64(sc, K_WL_START);
    ac->seed = scn_u64(sc, K_RUN_SEED);
    scn_arbor_cc_config(sc, ac);
}

/* The settings of [arbor] every job shares, checked (the plans apart):
 * scn_arbor_config's result with the rules only the scenario can name. */
int scn_arbor_config(const arb_scenario *sc, arb_sim_arbor_config *ac, arb_plan_config *pc,
                     char *err, size_t errlen)
{
    int rc = scn_arbor_plan_config(sc, pc, err, errlen);
    if (rc < 0) return rc;
    arbor_sim_config(sc, ac);
    if (ac->ep.timeout < ARB_EP_TIMER_MIN)
        return scn_key_fail(sc, K_AR_TIMEOUT, err, errlen, ARB_EINVAL,
                            "below 1 us: no fabric loop is that short");
    if (ac->ep.timeout_min && ac->ep.timeout_min < ARB_EP_TIMER_MIN)
        return scn_key_fail(sc, K_AR_TOMIN, err, errlen, ARB_EINVAL,
                            "below 1 us: no fabric loop is that short (0: from the fabric)");
    if (ac->ep.timeout_min > ac->ep.timeout)
        return scn_key_fail(sc, K_AR_TOMIN, err, errlen, ARB_EINVAL,
                            "above arbor.timeout, the timers' ceiling");
    if (ac->recredit_min < ARB_EP_TIMER_MIN)
        return scn_key_fail(sc, K_AR_RCMIN, err, errlen, ARB_EINVAL,
                            "below 1 us: no fabric loop is that short");
    if (ac->recredit_min > ac->recredit_max)
        return scn_key_fail(sc, K_AR_RCMIN, err, errlen, ARB_EINVAL,
                            "above arbor.recredit_max, the timer's ceiling");
    if (ac->recredit_max > ARB_PS_PER_S)
        return scn_key_fail(sc, K_AR_RCMAX, err, errlen, ARB_EINVAL, "above 1 s");
    /* the controller's rules, on the fabric's figures (a channel's own
     * line rate and loop are filled in by the simulator) */
    arb_cc_config cc = ac->cc;
    if (ac->cc_kind == ARB_CC_DISABLED || ac->cc_kind == ARB_CC_FIXED || !cc.window)
        cc.window = ac->ep.window ? ac->ep.window : ARB_SIM_ARBOR_WINDOW_MIN; /* 0: at least that */
    cc.base_rtt = ac->cc_base_rtt ? ac->cc_base_rtt : ARB_CC_BASE_RTT_DEFAULT;
    const char *why = arb_cc_check(ac->cc_kind, &cc);
    if (why) {
        enum scn_key k = scn_cc_key(why);
        const char *rule = strchr(why, ':');
        if (k == K_AR_SW_TARGET && !scn_u64(sc, K_AR_SW_TARGET)) /* derived from base_rtt */
            return scn_key_fail(sc, K_AR_CC_BASERTT, err, errlen, ARB_EINVAL,
                                "Swift's base target, 1.5 x it, would be above 1 s");
        return scn_key_fail(sc, k, err, errlen, ARB_EINVAL, rule ? rule + 2 : why);
    }
    if (ac->ep.retry < ARB_EP_TIMER_MIN)
        return scn_key_fail(sc, K_AR_RETRY, err, errlen, ARB_EINVAL,
                            "below 1 us: no fabric loop is that short");
    if (ac->ep.retry_min &&
        (ac->ep.retry_min < ARB_EP_TIMER_MIN || ac->ep.retry_min > ac->ep.retry))
        return scn_key_fail(sc, K_AR_RETRYMIN, err, errlen, ARB_EINVAL,
                            "must be 1 us .. arbor.retry (0: the timers' floor)");
    ac->cost = (arb_sim_arbor_cost){.host_pkt = scn_u64(sc, K_AR_HPKT),
                                    .host_rate = scn_u64(sc, K_AR_HRATE),
                                    .host_wake = scn_u64(sc, K_AR_HWAKE),
                                    .switch_rate = scn_u64(sc, K_AR_SRATE),
                                    .switch_pkt = scn_u64(sc, K_AR_SPKT),
                                    .switch_wake = scn_u64(sc, K_AR_SWAKE),
                                    .spin = scn_u64(sc, K_AR_SPIN),
                                    .cores = (uint32_t)scn_u64(sc, K_AR_CORES)};
    if (ac->ep.payload % arb_dtype_size(pc->dtype))
        return scn_key_fail(sc, K_AR_PAYLOAD, err, errlen, ARB_EINVAL,
                            "not a whole number of elements of the dtype");
    return 0;
}
