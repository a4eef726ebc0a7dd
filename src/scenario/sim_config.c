/*
 * [transport], [switch] and the fabric's faults as the simulator's
 * configuration, checked; and the report's echo of the timers the
 * simulator derived where they were left at auto.
 */
#include "scn_run.h"

#include <stdio.h>
#include <string.h>
#include "base/alloc.h"

static int check_sim_config(const arb_scenario *sc, const arb_sim_config *c, char *err,
                            size_t errlen)
{
    char msg[160];
    if ((uint64_t)c->mtu + c->hdr_bytes > 65535) {
        snprintf(msg, sizeof msg, "mtu %u + header %u exceeds 65535 wire bytes", c->mtu,
                 c->hdr_bytes);
        return scn_key_fail(sc, K_TR_MTU, err, errlen, ARB_EINVAL, msg);
    }
    if (c->ecn && c->ecn_kmax <= c->ecn_kmin) {
        snprintf(msg, sizeof msg, "kmax %u must be above kmin %u", c->ecn_kmax, c->ecn_kmin);
        return scn_key_fail(sc, K_SW_KMAX, err, errlen, ARB_EINVAL, msg);
    }
    if (c->pfc && c->pfc_xon >= c->pfc_xoff) {
        snprintf(msg, sizeof msg, "xon %u must be below xoff %u", c->pfc_xon, c->pfc_xoff);
        return scn_key_fail(sc, K_SW_XON, err, errlen, ARB_EINVAL, msg);
    }
    return 0;
}

/* [transport]'s timers: go-back-N's rto; IRN's rto_low, rto_high and
 * rto_low_n, or one fixed timeout an explicit rto sets (rto_low_n and tlp
 * are set with the other keys). The simulator derives what is left at 0
 * from the fabric. */
static int transport_timers(const arb_scenario *sc, arb_sim_config *cfg, char *err, size_t errlen)
{
    static const enum scn_key irn_keys[] = {K_TR_RTOLOW, K_TR_RTOHIGH, K_TR_RTON};
    int irn = cfg->transport == ARB_TRANSPORT_IRN;
    arb_time rto = scn_u64(sc, K_TR_RTO); /* 0: auto */
    for (size_t i = 0; i < sizeof irn_keys / sizeof irn_keys[0]; i++) {
        if (scn_is_default(sc, irn_keys[i])) continue;
        if (!irn)
            return scn_key_fail(sc, irn_keys[i], err, errlen, ARB_EINVAL,
                                "IRN's timers; go-back-N has one, transport.rto");
        if (rto)
            return scn_key_fail(
                sc, irn_keys[i], err, errlen, ARB_EINVAL,
                "transport.rto is set, which makes IRN's timeout one fixed value; set "
                "rto_low and rto_high, or rto");
    }
    cfg->rto = rto ? rto : ARB_PS_PER_MS;
    if (irn) {
        cfg->rto_low = rto ? rto : scn_u64(sc, K_TR_RTOLOW);
        cfg->rto_high = rto ? rto : scn_u64(sc, K_TR_RTOHIGH);
    }
    if (cfg->rto_low && cfg->rto_high && cfg->rto_low > cfg->rto_high) {
        char msg[160];
        snprintf(msg, sizeof msg, "above transport.rto_high (%s)", scn_str(sc, K_TR_RTOHIGH));
        return scn_key_fail(sc, K_TR_RTOLOW, err, errlen, ARB_EINVAL, msg);
    }
    return 0;
}

/* [transport], [switch] and the fabric's faults: the simulator's configuration. */
int scn_run_sim_config(struct scn_run *run)
{
    const arb_scenario *sc = run->sc;
    arb_sim_config *cfg = &run->cfg;
    arb_sim_config_default(cfg);
    scn_engine_apply(sc, SCN_ENG_SIM, cfg); /* [transport], [switch], the faults, run.seed */
    run->r->mtu = cfg->mtu;
    run->r->hdr_bytes = cfg->hdr_bytes;
    int rc = transport_timers(sc, cfg, run->err, run->errlen);
    if (rc < 0) return rc;
    if (run->w) {
        cfg->on_flow_done = arb_workload_on_flow_done;
        cfg->done_ctx = run->w;
        cfg->on_flow_sent = arb_workload_on_flow_sent;
        cfg->sent_ctx = run->w;
    }
    enum scn_key bad = cfg->loss >= 1      ? K_FAB_LOSS
                       : cfg->dup >= 1     ? K_FAB_DUP
                       : cfg->reorder >= 1 ? K_FAB_REORDER
                                           : K_COUNT;
    if (bad != K_COUNT) { /* the key's range is 0..1; a probability of 1 would take every packet */
        char m[128];
        snprintf(m, sizeof m, "'%.40s' is not below 1 (a probability in 0..1, 1 excluded)",
                 scn_str(sc, bad));
        return scn_key_fail(sc, bad, run->err, run->errlen, ARB_EINVAL, m);
    }
    if (cfg->reorder > 0 && cfg->reorder_delay == 0)
        return scn_key_fail(sc, K_FAB_REORDER_DELAY, run->err, run->errlen, ARB_EINVAL,
                            "must be above 0 when fabric.reorder is");
    rc = check_sim_config(sc, cfg, run->err, run->errlen);
    return rc < 0 ? rc : 0;
}

/* t as a scenario time that reads back exactly: whole seconds,
 * milliseconds or microseconds, else microseconds with up to 6 decimals. */
static void fmt_time(char *buf, size_t len, arb_time t)
{
    static const struct {
        arb_time ps;
        const char *unit;
    } whole[] = {{ARB_PS_PER_S, "s"}, {ARB_PS_PER_MS, "ms"}, {ARB_PS_PER_US, "us"}};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
        if (t && t % whole[i].ps == 0) {
            snprintf(buf, len, "%llu%s", (unsigned long long)(t / whole[i].ps), whole[i].unit);
            return;
        }
    char frac[8];
    snprintf(frac, sizeof frac, "%06llu", (unsigned long long)(t % ARB_PS_PER_US));
    for (size_t n = strlen(frac); n > 1 && frac[n - 1] == '0'; n--)
        frac[n - 1] = '\0';
    snprintf(buf, len, "%llu.%sus", (unsigned long long)(t / ARB_PS_PER_US), frac);
}

/* Key k's echo, "auto" where it was left so, replaced by `used`. */
static int echo_used(arb_scenario_result *r, enum scn_key k, const char *used)
{
    if (strcmp(r->echo[k], "auto") != 0) return 0;
    char *d = arb_strdup(used);
    if (!d) return ARB_ENOMEM;
    arb_free(r->echo[k]);
    r->echo[k] = d;
    return 0;
}

/* The report's [transport] timers as the simulator runs them: what was
 * left at auto, derived from the fabric (arb_sim_timers). IRN's rto stays
 * auto (its two timers are in force). */
int scn_echo_timers(struct scn_run *run)
{
    arb_sim_timers tm;
    arb_sim_get_timers(run->s, &tm);
    char low[32], high[32], rto[32];
    fmt_time(low, sizeof low, tm.rto_low);
    fmt_time(high, sizeof high, tm.rto_high);
    fmt_time(rto, sizeof rto, run->cfg.rto);
    arb_scenario_result *r = run->r;
    int rc = run->cfg.transport == ARB_TRANSPORT_GBN ? echo_used(r, K_TR_RTO, rto) : 0;
    if (rc == 0) rc = echo_used(r, K_TR_RTOLOW, low);
    if (rc == 0) rc = echo_used(r, K_TR_RTOHIGH, high);
    if (rc == 0) rc = echo_used(r, K_TR_TLP, tm.tlp ? "on" : "off");
    return rc;
}
