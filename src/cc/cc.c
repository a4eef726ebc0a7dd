/*
 * Congestion control of a channel (cc.h): the common object, its
 * statistics and shared measurements (smoothed loop time, stall
 * detection), the helpers that turn a rate or a window into the two gates,
 * and the dispatch to each kind's functions (cc_int.h). The adaptive
 * controllers live in timely.c, swift.c, dcqcn.c and oscar.c.
 */
#include <math.h>
#include <stdlib.h>

#include "cc/cc_int.h"

/* DISABLED and FIXED hold their gates whatever they observe. */
static const cc_ops fixed_ops = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

static const char *const kind_names[ARB_CC_KIND_COUNT] = {"disabled", "fixed", "timely",
                                                          "swift",    "dcqcn", "oscar"};

static const cc_ops *ops_of(int kind)
{
    switch (kind) {
    case ARB_CC_DISABLED:
    case ARB_CC_FIXED:
        return &fixed_ops;
    case ARB_CC_TIMELY:
        return &cc_timely_ops;
    case ARB_CC_SWIFT:
        return &cc_swift_ops;
    case ARB_CC_DCQCN:
        return &cc_dcqcn_ops;
    case ARB_CC_OSCAR:
        return &cc_oscar_ops;
    default:
        return NULL;
    }
}

static int adaptive(int kind)
{
    return kind != ARB_CC_DISABLED && kind != ARB_CC_FIXED;
}

void arb_cc_config_default(arb_cc_config *cfg)
{
    if (!cfg) return;
    cfg->window = ARB_CC_WINDOW_DEFAULT;
    cfg->spacing = 0;
    cfg->logger.fn = NULL;
    cfg->logger.user = NULL;
    cfg->logger.max_level = ARB_LOG_WARN;
    cfg->mem = NULL;
    cfg->line_rate = ARB_CC_LINE_RATE_DEFAULT;
    cfg->host_rate = 0;
    cfg->credit_bytes = ARB_CC_CREDIT_BYTES_DEFAULT;
    cfg->base_rtt = ARB_CC_BASE_RTT_DEFAULT;
    cfg->window_min = 1;
    cfg->window_max = ARB_CC_WINDOW_MAX_DEFAULT;
    arb_cc_timely_default(&cfg->timely);
    arb_cc_swift_default(&cfg->swift);
    arb_cc_dcqcn_default(&cfg->dcqcn);
    arb_cc_oscar_default(&cfg->oscar);
}

int cc_in(double x, double lo, double hi)
{
    return x >= lo && x <= hi; /* false for NaN */
}

/* The common fields of the adaptive kinds, against the rules of cc.h
 * (window only for the kinds that start from it): NULL or the rule. */
static const char *check_common(const arb_cc_config *c, int kind)
{
    if (c->line_rate == 0 || c->line_rate > ARB_RATE_MAX)
        return "line_rate: must be 1 bit/s .. ARB_RATE_MAX";
    if (c->host_rate && (c->host_rate < c->line_rate || c->host_rate > ARB_RATE_MAX))
        return "host_rate: must be 0 or line_rate .. ARB_RATE_MAX";
    if (c->credit_bytes == 0) return "credit_bytes: must be at least 1";
    if (c->base_rtt == 0 || c->base_rtt > ARB_PS_PER_S) return "base_rtt: must be 1 ps .. 1 s";
    if (c->window_min == 0) return "window_min: must be at least 1";
    if (c->window_min > c->window_max) return "window_min: above window_max";
    if (c->window_max > ARB_CC_WINDOW_MAX) return "window_max: above 2^24 - 1";
    int reads_window = kind == ARB_CC_SWIFT || kind == ARB_CC_OSCAR;
    if (reads_window && (c->window < c->window_min || c->window > c->window_max))
        return "window: must be within window_min .. window_max";
    return NULL;
}

const char *arb_cc_check(arb_cc_kind kind, const arb_cc_config *cfg)
{
    const cc_ops *ops = ops_of((int)kind);
    if (!ops) return "kind: not a controller";
    arb_cc_config c;
    if (cfg)
        c = *cfg;
    else
        arb_cc_config_default(&c);
    if (c.window == 0 || c.window > ARB_CC_WINDOW_MAX) return "window: must be 1 .. 2^24 - 1";
    if (!adaptive((int)kind)) return NULL;
    const char *why = check_common(&c, (int)kind);
    if (why) return why;
    ops->derive(&c);
    return ops->check(&c);
}

static void init_fixed(arb_cc *cc)
{
    cc->window = cc->cfg.window;
    cc->spacing = cc->kind == ARB_CC_FIXED ? cc->cfg.spacing : 0;
    cc->st.cwnd = cc->st.cwnd_lowest = cc->window;
}

int arb_cc_new(arb_cc **out, arb_cc_kind kind, const arb_cc_config *cfg)
{
    if (!out) return ARB_EINVAL;
    *out = NULL;
    const cc_ops *ops = ops_of((int)kind);
    if (!ops) return ARB_EINVAL;
    arb_cc_config c;
    if (cfg)
        c = *cfg;
    else
        arb_cc_config_default(&c);
    if (arb_cc_check(kind, &c)) return ARB_EINVAL;
    if (adaptive((int)kind)) ops->derive(&c);

    arb_cc *cc = arb_mem_calloc(c.mem, 1, sizeof *cc);
    if (!cc) return ARB_ENOMEM;
    cc->kind = kind;
    cc->ops = ops;
    cc->cfg = c;
    cc->st.min = ARB_TIME_NEVER;
    cc->srtt = c.base_rtt ? c.base_rtt : ARB_CC_BASE_RTT_DEFAULT;
    cc->last_ack = ARB_TIME_NEVER;
    cc->last_stall = ARB_TIME_NEVER;
    if (ops->init)
        ops->init(cc);
    else
        init_fixed(cc);
    cc->st.increases = cc->st.decreases = 0; /* setting the initial gates is neither */
    arb_log(&cc->cfg.logger, ARB_LOG_DEBUG, "cc %s: window %u, spacing %llu ps", kind_names[kind],
            (unsigned)cc->window, (unsigned long long)cc->spacing);
    *out = cc;
    return 0;
}

void arb_cc_free(arb_cc *cc)
{
    if (cc) arb_mem_free(cc->cfg.mem, cc);
}

/* Run the timer events due at now, so every entry point sees them. */
static void run_timers(arb_cc *cc, arb_time now)
{
    if (cc->ops->next_expiry && cc->ops->on_expiry && cc->ops->next_expiry(cc) <= now)
        cc->ops->on_expiry(cc, now);
}

static void record_sample(arb_cc *cc, arb_time rtt, int ce)
{
    arb_cc_stats *st = &cc->st;
    st->samples++;
    if (ce) st->ce_samples++;
    st->last = rtt;
    if (rtt < st->min) st->min = rtt;
    if (rtt > st->max) st->max = rtt;
    st->sum = st->sum > ARB_TIME_NEVER - rtt ? ARB_TIME_NEVER : st->sum + rtt;
    if (cc->last_ack == ARB_TIME_NEVER)
        cc->srtt = rtt;
    else
        cc->srtt = cc->srtt - cc->srtt / 8 + rtt / 8;
    if (cc->srtt == 0) cc->srtt = 1;
}

void arb_cc_on_ack(arb_cc *cc, const arb_cc_sample *s, arb_time now)
{
    if (!cc || !s) return;
    run_timers(cc, now);
    record_sample(cc, s->rtt, s->ce);
    cc->last_ack = now;
    if (cc->ops->on_ack) cc->ops->on_ack(cc, s, now);
}

void arb_cc_on_sample(arb_cc *cc, arb_time sample, int ce_seen, arb_time now)
{
    arb_cc_sample s = {sample, ce_seen, 0, 0};
    arb_cc_on_ack(cc, &s, now);
}

void arb_cc_on_send(arb_cc *cc, uint32_t bytes, arb_time now)
{
    if (!cc) return;
    run_timers(cc, now);
    cc->st.sends++;
    if (cc->ops->on_send) cc->ops->on_send(cc, bytes ? bytes : cc->cfg.credit_bytes, now);
}

static arb_time later_of(arb_time a, arb_time b)
{
    return a > b ? a : b;
}

/*
 * The loop stalled: nothing completed for twice the larger of the smoothed
 * loop time and the spacing (the time between two completions when the
 * rate gate holds). A single lost credit among flowing ones is not a stall.
 */
static int stalled(const arb_cc *cc, arb_time now)
{
    if (cc->last_ack == ARB_TIME_NEVER) return 1;
    arb_time gap = later_of(cc->srtt, cc->spacing);
    gap = gap > ARB_TIME_NEVER / 2 ? ARB_TIME_NEVER : 2 * gap;
    return now > cc->last_ack && now - cc->last_ack >= gap;
}

/* At most one stall reaction per smoothed loop time. */
static int stall_due(const arb_cc *cc, arb_time now)
{
    return cc->last_stall == ARB_TIME_NEVER ||
           (now > cc->last_stall && now - cc->last_stall >= cc->srtt);
}

void arb_cc_on_loss(arb_cc *cc, int by_timer, arb_time now)
{
    if (!cc) return;
    run_timers(cc, now);
    if (!by_timer) {
        cc->st.losses++;
        return;
    }
    cc->st.timeouts++;
    if (!cc->ops->on_stall || !stalled(cc, now) || !stall_due(cc, now)) return;
    cc->st.stalls++;
    cc->last_stall = now;
    cc->ops->on_stall(cc, now);
}

void arb_cc_on_timeout(arb_cc *cc, arb_time now)
{
    arb_cc_on_loss(cc, 1, now);
}

arb_time arb_cc_next_expiry(const arb_cc *cc)
{
    return cc && cc->ops->next_expiry ? cc->ops->next_expiry(cc) : ARB_TIME_NEVER;
}

void arb_cc_on_expiry(arb_cc *cc, arb_time now)
{
    if (!cc) return;
    run_timers(cc, now);
}

/* ---- the gates ------------------------------------------------------------ */

uint64_t cc_rate_u64(double rate)
{
    if (!(rate >= 1)) return 1;
    if (rate >= (double)ARB_RATE_MAX) return ARB_RATE_MAX;
    return (uint64_t)rate;
}

static void count_change(arb_cc *cc, double before, double after)
{
    if (after > before)
        cc->st.increases++;
    else if (after < before)
        cc->st.decreases++;
}

uint32_t cc_rate_window(const arb_cc_config *cfg)
{
    double bdp = (double)cfg->line_rate * (double)cfg->base_rtt /
                 (8.0 * (double)cfg->credit_bytes * (double)ARB_PS_PER_S);
    double w = ceil(bdp);
    if (!(w >= cfg->window_min)) return cfg->window_min;
    if (w > cfg->window_max) return cfg->window_max;
    return (uint32_t)w;
}

double cc_set_rate(arb_cc *cc, double rate, double min_rate)
{
    double line = (double)cc->cfg.line_rate;
    if (!(rate >= min_rate)) rate = min_rate; /* also a NaN */
    if (rate > line) rate = line;
    count_change(cc, cc->st.rate, rate);
    cc->window = cc_rate_window(&cc->cfg);
    cc->spacing = arb_cc_spacing_for_rate(cc_rate_u64(rate), cc->cfg.credit_bytes);
    cc->st.rate = rate;
    cc->st.cwnd = cc->window;
    if (cc->st.rate_lowest == 0 || rate < cc->st.rate_lowest) cc->st.rate_lowest = rate;
    cc->st.cwnd_lowest = cc->window;
    return rate;
}

static arb_time ps_of(double x)
{
    x = ceil(x);
    return x >= (double)ARB_TIME_NEVER ? ARB_TIME_NEVER : (arb_time)x;
}

double cc_set_cwnd(arb_cc *cc, double cwnd, double min_cwnd, arb_time pace_loop)
{
    double hi = (double)cc->cfg.window_max;
    if (!(cwnd >= min_cwnd)) cwnd = min_cwnd; /* also a NaN */
    if (cwnd > hi) cwnd = hi;
    count_change(cc, cc->st.cwnd, cwnd);
    uint32_t w = (uint32_t)(pace_loop ? ceil(cwnd) : floor(cwnd));
    cc->window = w < cc->cfg.window_min ? cc->cfg.window_min : w;
    if (pace_loop)
        cc->spacing = ps_of((double)pace_loop / cwnd);
    else
        cc->spacing = cwnd < 1 ? ps_of((double)cc->srtt / cwnd) : 0;
    cc->st.cwnd = cwnd;
    if (cc->st.cwnd_lowest == 0 || cwnd < cc->st.cwnd_lowest) cc->st.cwnd_lowest = cwnd;
    cc->st.rate = cc->last_ack == ARB_TIME_NEVER ? 0
                                                 : cwnd * (double)cc->cfg.credit_bytes * 8.0 *
                                                       (double)ARB_PS_PER_S / (double)cc->srtt;
    return cwnd;
}

/* ---- reading ---------------------------------------------------------------- */

uint32_t arb_cc_window(const arb_cc *cc)
{
    return cc ? cc->window : 1;
}

uint32_t arb_cc_max_window(const arb_cc *cc)
{
    if (!cc) return 1;
    return adaptive(cc->kind) ? cc->cfg.window_max : cc->cfg.window;
}

arb_time arb_cc_min_spacing(const arb_cc *cc)
{
    return cc ? cc->spacing : 0;
}

arb_cc_kind arb_cc_get_kind(const arb_cc *cc)
{
    return cc ? cc->kind : ARB_CC_DISABLED;
}

void arb_cc_get_stats(const arb_cc *cc, arb_cc_stats *out)
{
    if (!cc || !out) return;
    *out = cc->st;
    out->window = cc->window;
    out->spacing = cc->spacing;
}

void arb_cc_get_config(const arb_cc *cc, arb_cc_config *out)
{
    if (!cc || !out) return;
    *out = cc->cfg;
}

arb_time arb_cc_spacing_for_rate(uint64_t bits_per_s, uint64_t bytes_per_credit)
{
    return arb_time_tx(bytes_per_credit, bits_per_s);
}

uint32_t arb_cc_loop_window(arb_time loop, uint64_t bits_per_s, uint32_t share,
                            uint32_t frame_bytes, uint32_t least, uint32_t most)
{
    if (!loop || !bits_per_s || !frame_bytes) return least;
    double bits = (double)loop / (double)ARB_PS_PER_S * (double)bits_per_s / (share ? share : 1);
    double w = ceil(bits / (8.0 * frame_bytes));
    if (w > (double)most) return most;
    return w > (double)least ? (uint32_t)w : least;
}

const char *arb_cc_kind_name(int kind)
{
    return kind >= 0 && kind < ARB_CC_KIND_COUNT ? kind_names[kind] : NULL;
}

int arb_cc_kind_parse(const char *name)
{
    return arb_name_index(kind_names, ARB_CC_KIND_COUNT, name);
}
