/*
 * The scenario keys' defaults that are an engine's: read from the engines'
 * *_config_default() (the topology's, the simulator's, its Arbor
 * collective's with the controllers', the planner's, the workload's, the
 * host collective's and the iteration's) and
 * written as the key table writes values, so that `arbor sim --keys`, a
 * new scenario and a report's "is it the default" all come from the
 * engines; and a scenario's values of those keys set into the engines'
 * configurations by the same table (scn_engine_apply), so that a key and
 * its field are tied in one place. The key table (scn_int.h) marks such a
 * key ENGINE; a key whose 0 means something the scenario derives
 * (workload.seed: run.seed, transport.rto: auto, arbor.cc.window:
 * arbor.window, arbor.cc.rate: no rate gate) keeps its own default there.
 */
#include "scn_int.h"

#include "arbor/plan.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct engine_defaults {
    arb_topo_config topo;
    arb_sim_config sim;
    arb_sim_arbor_config ar;
    arb_plan_config plan;
    arb_workload_config wl;
    arb_hcoll_config hc;
    arb_iteration_config it;
};

/* How a value is written: as the key table writes its defaults. */
enum dfmt {
    DF_NUM,       /* 4096 */
    DF_KB,        /* 100KB */
    DF_MIB,       /* 2MiB */
    DF_TIME,      /* 50ms, 1us, 0 */
    DF_TIME_AUTO, /* a time, 0: auto */
    DF_RATE,      /* 100G, 0 */
    DF_REAL,      /* 0.875: the shortest text that reads back exactly */
    DF_BOOL,      /* on, off */
    DF_CHOICE     /* the value's name (choices.c) */
};

struct engine_key {
    enum scn_key k;
    size_t off, size; /* the field in struct engine_defaults */
    int real;         /* a double */
    enum dfmt fmt;
};

#define FIELD(f)                                                                                   \
    offsetof(struct engine_defaults, f), sizeof(((struct engine_defaults *)0)->f),                 \
        _Generic(((struct engine_defaults *)0)->f, double : 1, default : 0)

static const struct engine_key engine_keys[] = {
    {K_FAB_RATE, FIELD(topo.rate), DF_RATE},
    {K_FAB_UPRATE, FIELD(topo.up_rate), DF_RATE},
    {K_FAB_DELAY, FIELD(topo.delay), DF_TIME},
    {K_FAB_LOSS, FIELD(sim.loss), DF_REAL},
    {K_FAB_DUP, FIELD(sim.dup), DF_REAL},
    {K_FAB_REORDER, FIELD(sim.reorder), DF_REAL},
    {K_FAB_REORDER_DELAY, FIELD(sim.reorder_delay), DF_TIME},
    {K_TR_KIND, FIELD(sim.transport), DF_CHOICE},
    {K_TR_MTU, FIELD(sim.mtu), DF_NUM},
    {K_TR_HDR, FIELD(sim.hdr_bytes), DF_NUM},
    {K_TR_CTRL, FIELD(sim.ctrl_bytes), DF_NUM},
    {K_TR_RTOLOW, FIELD(sim.rto_low), DF_TIME_AUTO},
    {K_TR_RTOHIGH, FIELD(sim.rto_high), DF_TIME_AUTO},
    {K_TR_RTON, FIELD(sim.rto_low_n), DF_NUM},
    {K_TR_TLP, FIELD(sim.tlp), DF_CHOICE},
    {K_TR_RETRY, FIELD(sim.retry_limit), DF_NUM},
    {K_TR_WINDOW, FIELD(sim.window), DF_NUM},
    {K_TR_ACKEVERY, FIELD(sim.ack_every), DF_NUM},
    {K_TR_REORDER, FIELD(sim.irn_reorder), DF_TIME},
    {K_TR_DCQCN, FIELD(sim.dcqcn), DF_BOOL},
    {K_SW_QUEUE, FIELD(sim.queue_bytes), DF_MIB},
    {K_SW_ECN, FIELD(sim.ecn), DF_BOOL},
    {K_SW_KMIN, FIELD(sim.ecn_kmin), DF_KB},
    {K_SW_KMAX, FIELD(sim.ecn_kmax), DF_KB},
    {K_SW_PMAX, FIELD(sim.ecn_pmax), DF_REAL},
    {K_SW_PFC, FIELD(sim.pfc), DF_BOOL},
    {K_SW_XOFF, FIELD(sim.pfc_xoff), DF_KB},
    {K_SW_XON, FIELD(sim.pfc_xon), DF_KB},
    {K_WL_QPS, FIELD(wl.qps), DF_NUM},
    {K_WL_QPMODE, FIELD(wl.qp_mode), DF_CHOICE},
    {K_WL_SHAREDSPORT, FIELD(wl.shared_sport), DF_BOOL},
    {K_WL_START_DELAY, FIELD(wl.start_delay), DF_TIME},
    {K_HC_COLL, FIELD(hc.coll), DF_CHOICE},
    {K_HC_ALGO, FIELD(hc.algo), DF_CHOICE},
    {K_HC_ROOT, FIELD(hc.root), DF_NUM},
    {K_HC_ALGO, FIELD(it.algo), DF_CHOICE}, /* one key, both engines' field */
    {K_AR_INNER, FIELD(it.inner_ranks), DF_NUM},
    {K_AR_PIECES, FIELD(it.inner_pieces), DF_NUM},
    {K_AR_COLL, FIELD(plan.coll), DF_CHOICE},
    {K_AR_DTYPE, FIELD(plan.dtype), DF_CHOICE},
    {K_AR_MODE, FIELD(ar.values), DF_CHOICE},
    {K_AR_PAYLOAD, FIELD(ar.ep.payload), DF_NUM},
    {K_AR_WINDOW, FIELD(ar.ep.window), DF_NUM},
    {K_AR_SLOTS, FIELD(ar.slots), DF_NUM},
    {K_AR_REPAIR, FIELD(ar.local_repair), DF_CHOICE},
    {K_AR_RCMIN, FIELD(ar.recredit_min), DF_TIME},
    {K_AR_RCMAX, FIELD(ar.recredit_max), DF_TIME},
    {K_AR_RCORDER, FIELD(ar.recredit_order), DF_BOOL},
    {K_AR_TIMEOUT, FIELD(ar.ep.timeout), DF_TIME},
    {K_AR_TOMODE, FIELD(ar.ep.adaptive_timeout), DF_CHOICE},
    {K_AR_TOMIN, FIELD(ar.ep.timeout_min), DF_TIME},
    {K_AR_DETECT, FIELD(ar.ep.order_detection), DF_CHOICE},
    {K_AR_ATTEMPTS, FIELD(ar.ep.attempts), DF_NUM},
    {K_AR_MISSLIMIT, FIELD(ar.ep.miss_limit), DF_NUM},
    {K_AR_DEADAFTER, FIELD(ar.ep.dead_after), DF_NUM},
    {K_AR_REPTRIES, FIELD(ar.ep.repair_tries), DF_NUM},
    {K_AR_RETRY, FIELD(ar.ep.retry), DF_TIME},
    {K_AR_RETRYMIN, FIELD(ar.ep.retry_min), DF_TIME},
    {K_AR_CC, FIELD(ar.cc_kind), DF_CHOICE},
    {K_AR_CC_WMIN, FIELD(ar.cc.window_min), DF_NUM},
    {K_AR_CC_WMAX, FIELD(ar.cc.window_max), DF_NUM},
    {K_AR_CC_BASERTT, FIELD(ar.cc_base_rtt), DF_TIME},
    {K_AR_TI_ALPHA, FIELD(ar.cc.timely.alpha), DF_REAL},
    {K_AR_TI_BETA, FIELD(ar.cc.timely.beta), DF_REAL},
    {K_AR_TI_DELTA, FIELD(ar.cc.timely.delta), DF_RATE},
    {K_AR_TI_TLOW, FIELD(ar.cc.timely.t_low), DF_TIME},
    {K_AR_TI_THIGH, FIELD(ar.cc.timely.t_high), DF_TIME},
    {K_AR_TI_INTERVAL, FIELD(ar.cc.timely.interval), DF_TIME},
    {K_AR_TI_HAI, FIELD(ar.cc.timely.hai_after), DF_NUM},
    {K_AR_TI_HAIF, FIELD(ar.cc.timely.hai_factor), DF_NUM},
    {K_AR_TI_MINRATE, FIELD(ar.cc.timely.min_rate), DF_RATE},
    {K_AR_SW_TARGET, FIELD(ar.cc.swift.base_target), DF_TIME},
    {K_AR_SW_PERHOP, FIELD(ar.cc.swift.per_hop), DF_TIME},
    {K_AR_SW_HOPS, FIELD(ar.cc.swift.hops), DF_NUM},
    {K_AR_SW_FSRANGE, FIELD(ar.cc.swift.fs_range), DF_TIME},
    {K_AR_SW_AI, FIELD(ar.cc.swift.ai), DF_REAL},
    {K_AR_SW_BETA, FIELD(ar.cc.swift.beta), DF_REAL},
    {K_AR_SW_MAXMDF, FIELD(ar.cc.swift.max_mdf), DF_REAL},
    {K_AR_SW_MINCWND, FIELD(ar.cc.swift.min_cwnd), DF_REAL},
    {K_AR_SW_FSMIN, FIELD(ar.cc.swift.fs_min_cwnd), DF_REAL},
    {K_AR_SW_FSMAX, FIELD(ar.cc.swift.fs_max_cwnd), DF_REAL},
    {K_AR_SW_STALL, FIELD(ar.cc.swift.stall_reset), DF_NUM},
    {K_AR_DC_CNP, FIELD(ar.cc.dcqcn.cnp_interval), DF_TIME},
    {K_AR_DC_G, FIELD(ar.cc.dcqcn.g), DF_REAL},
    {K_AR_DC_ALPHA0, FIELD(ar.cc.dcqcn.alpha_init), DF_REAL},
    {K_AR_DC_ALPHAT, FIELD(ar.cc.dcqcn.alpha_timer), DF_TIME},
    {K_AR_DC_RATET, FIELD(ar.cc.dcqcn.rate_timer), DF_TIME},
    {K_AR_DC_BYTES, FIELD(ar.cc.dcqcn.byte_counter), DF_NUM},
    {K_AR_DC_F, FIELD(ar.cc.dcqcn.f), DF_NUM},
    {K_AR_DC_RAI, FIELD(ar.cc.dcqcn.rai), DF_RATE},
    {K_AR_DC_RHAI, FIELD(ar.cc.dcqcn.rhai), DF_RATE},
    {K_AR_DC_MINRATE, FIELD(ar.cc.dcqcn.min_rate), DF_RATE},
    {K_AR_OS_TARGET, FIELD(ar.cc.oscar.target), DF_TIME},
    {K_AR_OS_GAIN, FIELD(ar.cc.oscar.gain), DF_REAL},
    {K_AR_OS_KAPPA, FIELD(ar.cc.oscar.kappa), DF_REAL},
    {K_AR_OS_HEADROOM, FIELD(ar.cc.oscar.headroom), DF_REAL},
    {K_AR_OS_GROWTH, FIELD(ar.cc.oscar.max_growth), DF_REAL},
    {K_AR_OS_MINCWND, FIELD(ar.cc.oscar.min_cwnd), DF_REAL},
    {K_AR_SUBCH, FIELD(plan.subchannels), DF_NUM},
    {K_AR_PROFILE, FIELD(plan.header), DF_CHOICE},
    {K_AR_ROOT, FIELD(plan.root), DF_NUM},
    {K_AR_EARLY, FIELD(ar.ep.early), DF_BOOL},
    {K_AR_SWRES, FIELD(ar.ep.seed), DF_BOOL},
    {K_AR_WIRECHECK, FIELD(ar.wire_check), DF_BOOL},
    {K_AR_SKEW, FIELD(ar.skew), DF_TIME},
    {K_AR_SKEWMODE, FIELD(ar.skew_random), DF_CHOICE},
    {K_AR_SUBMODE, FIELD(ar.ep.dynamic_subchannels), DF_CHOICE},
    {K_RUN_SEED, FIELD(sim.seed), DF_NUM},
    {K_RUN_ORDER, FIELD(sim.local_order), DF_CHOICE},
};

static void engine_defaults(struct engine_defaults *d)
{
    memset(d, 0, sizeof *d);
    d->topo = arb_topo_config_default();
    arb_sim_config_default(&d->sim);
    arb_sim_arbor_config_default(&d->ar);
    arb_plan_config_default(&d->plan);
    arb_workload_config_default(&d->wl);
    arb_hcoll_config_default(&d->hc);
    arb_iteration_config_default(&d->it);
}

/* The field of e in d, a whole number: a choice or a switch as the signed
 * value it is, any other as unsigned. */
static int64_t whole(const struct engine_defaults *d, const struct engine_key *e)
{
    const char *p = (const char *)d + e->off;
    int sign = e->fmt == DF_CHOICE || e->fmt == DF_BOOL;
    if (e->size == 1) return sign ? (int64_t) * (const int8_t *)p : (int64_t) * (const uint8_t *)p;
    if (e->size == 2)
        return sign ? (int64_t) * (const int16_t *)p : (int64_t) * (const uint16_t *)p;
    if (e->size == 4)
        return sign ? (int64_t) * (const int32_t *)p : (int64_t) * (const uint32_t *)p;
    return *(const int64_t *)p;
}

static void fmt_time(char *buf, size_t len, uint64_t t)
{
    static const struct {
        uint64_t ps;
        const char *unit;
    } units[] = {{ARB_PS_PER_S, "s"}, {ARB_PS_PER_MS, "ms"}, {ARB_PS_PER_US, "us"}, {1000, "ns"}};
    for (size_t i = 0; t && i < sizeof units / sizeof units[0]; i++)
        if (t % units[i].ps == 0) {
            snprintf(buf, len, "%llu%s", (unsigned long long)(t / units[i].ps), units[i].unit);
            return;
        }
    snprintf(buf, len, "%llu%s", (unsigned long long)t, t ? "ps" : "");
}

static void fmt_rate(char *buf, size_t len, uint64_t r)
{
    static const struct {
        uint64_t bps;
        const char *unit;
    } units[] = {{1000000000000ull, "T"}, {1000000000ull, "G"}, {1000000ull, "M"}, {1000ull, "K"}};
    for (size_t i = 0; r && i < sizeof units / sizeof units[0]; i++)
        if (r % units[i].bps == 0) {
            snprintf(buf, len, "%llu%s", (unsigned long long)(r / units[i].bps), units[i].unit);
            return;
        }
    snprintf(buf, len, "%llu", (unsigned long long)r);
}

/* The shortest %g text (no exponent) that reads back as x. */
static void fmt_real(char *buf, size_t len, double x)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, x);
        if (!strchr(buf, 'e') && strtod(buf, NULL) == x) return;
    }
    snprintf(buf, len, "%.17g", x);
}

static void fmt_value(char *buf, size_t len, const struct engine_defaults *d,
                      const struct engine_key *e)
{
    int64_t v = e->real ? 0 : whole(d, e);
    uint64_t u = (uint64_t)v;
    const char *name;
    switch (e->fmt) {
    case DF_KB:
        snprintf(buf, len, "%lluKB", (unsigned long long)(u / 1000));
        break;
    case DF_MIB:
        snprintf(buf, len, "%lluMiB", (unsigned long long)(u >> 20));
        break;
    case DF_TIME:
        fmt_time(buf, len, u);
        break;
    case DF_TIME_AUTO:
        if (u)
            fmt_time(buf, len, u);
        else
            snprintf(buf, len, "auto");
        break;
    case DF_RATE:
        fmt_rate(buf, len, u);
        break;
    case DF_REAL:
        fmt_real(buf, len, *(const double *)((const char *)d + e->off));
        break;
    case DF_BOOL:
        snprintf(buf, len, "%s", v ? "on" : "off");
        break;
    case DF_CHOICE:
        name = scn_choice_name(e->k, (int)v);
        snprintf(buf, len, "%s", name ? name : "?");
        break;
    default:
        snprintf(buf, len, "%llu", (unsigned long long)u);
        break;
    }
}

static char texts[K_COUNT][24];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void make_texts(void)
{
    struct engine_defaults d;
    engine_defaults(&d);
    for (size_t i = 0; i < sizeof engine_keys / sizeof engine_keys[0]; i++)
        fmt_value(texts[engine_keys[i].k], sizeof texts[0], &d, &engine_keys[i]);
}

/* Each engine's configuration in struct engine_defaults (enum scn_engine). */
static const struct {
    size_t off, size;
} engines[] = {
    {offsetof(struct engine_defaults, topo), sizeof(arb_topo_config)},
    {offsetof(struct engine_defaults, sim), sizeof(arb_sim_config)},
    {offsetof(struct engine_defaults, ar), sizeof(arb_sim_arbor_config)},
    {offsetof(struct engine_defaults, plan), sizeof(arb_plan_config)},
    {offsetof(struct engine_defaults, wl), sizeof(arb_workload_config)},
    {offsetof(struct engine_defaults, hc), sizeof(arb_hcoll_config)},
    {offsetof(struct engine_defaults, it), sizeof(arb_iteration_config)},
};

/* A whole number into a field of `size` bytes. */
static void put_whole(void *p, size_t size, int64_t v)
{
    if (size == 1)
        *(uint8_t *)p = (uint8_t)v;
    else if (size == 2)
        *(uint16_t *)p = (uint16_t)v;
    else if (size == 4)
        *(uint32_t *)p = (uint32_t)v;
    else
        *(uint64_t *)p = (uint64_t)v;
}

void scn_engine_apply(const arb_scenario *sc, enum scn_engine eng, void *cfg)
{
    size_t lo = engines[eng].off, hi = lo + engines[eng].size;
    for (size_t i = 0; i < sizeof engine_keys / sizeof engine_keys[0]; i++) {
        const struct engine_key *e = &engine_keys[i];
        if (e->off < lo || e->off >= hi || e->fmt == DF_TIME_AUTO) continue;
        void *p = (char *)cfg + (e->off - lo);
        if (e->real)
            *(double *)p = scn_real(sc, e->k);
        else if (e->fmt == DF_CHOICE)
            put_whole(p, e->size, scn_choice(sc, e->k));
        else
            put_whole(p, e->size, (int64_t)scn_u64(sc, e->k));
    }
}

const char *scn_engine_default(enum scn_key k)
{
    pthread_once(&once, make_texts);
    return texts[k][0] ? texts[k] : NULL;
}
