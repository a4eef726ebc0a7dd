/*
 * Congestion control of a channel (cc.h): the common object, its
 * statistics, and the per-kind behaviour behind a small table of
 * functions so that the delay- and ECN-based controllers can be added
 * without touching the interface.
 */
#include "arbor/cc.h"

#include <ctype.h>
#include <stdlib.h>

/* What a kind does; a NULL hook means "nothing". */
typedef struct cc_ops {
    void (*on_sample)(arb_cc *cc, arb_time sample, int ce_seen, arb_time now);
    void (*on_timeout)(arb_cc *cc, arb_time now);
} cc_ops;

struct arb_cc {
    arb_cc_kind kind;
    const cc_ops *ops;
    arb_cc_config cfg;
    uint32_t window;  /* the window gate now */
    arb_time spacing; /* the rate gate now */
    arb_cc_stats st;
};

/* DISABLED and FIXED hold their gates whatever they observe. */
static const cc_ops fixed_ops = {NULL, NULL};

static const char *const kind_names[ARB_CC_KIND_COUNT] = {"disabled", "fixed", "timely",
                                                          "swift",    "dcqcn", "oscar"};

void arb_cc_config_default(arb_cc_config *cfg)
{
    if (!cfg) return;
    cfg->window = ARB_CC_WINDOW_DEFAULT;
    cfg->spacing = 0;
    cfg->logger.fn = NULL;
    cfg->logger.user = NULL;
    cfg->logger.max_level = ARB_LOG_WARN;
}

int arb_cc_new(arb_cc **out, arb_cc_kind kind, const arb_cc_config *cfg)
{
    if (!out) return ARB_EINVAL;
    *out = NULL;
    arb_cc_config c;
    if (cfg)
        c = *cfg;
    else
        arb_cc_config_default(&c);
    if (c.window == 0 || c.window > ARB_CC_WINDOW_MAX) return ARB_EINVAL;

    const cc_ops *ops;
    switch (kind) {
    case ARB_CC_DISABLED:
    case ARB_CC_FIXED:
        ops = &fixed_ops;
        break;
    default: /* TIMELY, SWIFT, DCQCN, OSCAR: not yet; anything else: invalid */
        return ARB_EINVAL;
    }

    arb_cc *cc = calloc(1, sizeof *cc);
    if (!cc) return ARB_ENOMEM;
    cc->kind = kind;
    cc->ops = ops;
    cc->cfg = c;
    cc->window = c.window;
    cc->spacing = kind == ARB_CC_FIXED ? c.spacing : 0;
    cc->st.min = ARB_TIME_NEVER;
    arb_log(&cc->cfg.logger, ARB_LOG_DEBUG, "cc %s: window %u, spacing %llu ps", kind_names[kind],
            (unsigned)cc->window, (unsigned long long)cc->spacing);
    *out = cc;
    return 0;
}

void arb_cc_free(arb_cc *cc)
{
    free(cc);
}

void arb_cc_on_sample(arb_cc *cc, arb_time sample, int ce_seen, arb_time now)
{
    if (!cc) return;
    arb_cc_stats *st = &cc->st;
    st->samples++;
    if (ce_seen) st->ce_samples++;
    st->last = sample;
    if (sample < st->min) st->min = sample;
    if (sample > st->max) st->max = sample;
    st->sum = st->sum > ARB_TIME_NEVER - sample ? ARB_TIME_NEVER : st->sum + sample;
    if (cc->ops->on_sample) cc->ops->on_sample(cc, sample, ce_seen, now);
}

void arb_cc_on_timeout(arb_cc *cc, arb_time now)
{
    arb_cc_on_loss(cc, 1, now);
}

void arb_cc_on_loss(arb_cc *cc, int by_timer, arb_time now)
{
    if (!cc || !by_timer) return;
    cc->st.timeouts++;
    if (cc->ops->on_timeout) cc->ops->on_timeout(cc, now);
}

void arb_cc_on_send(arb_cc *cc, uint32_t bytes, arb_time now)
{
    (void)cc;
    (void)bytes;
    (void)now;
}

arb_time arb_cc_next_expiry(const arb_cc *cc)
{
    (void)cc;
    return ARB_TIME_NEVER;
}

void arb_cc_on_expiry(arb_cc *cc, arb_time now)
{
    (void)cc;
    (void)now;
}

uint32_t arb_cc_window(const arb_cc *cc)
{
    return cc ? cc->window : 1;
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
}

arb_time arb_cc_spacing_for_rate(uint64_t bits_per_s, uint64_t bytes_per_credit)
{
    return arb_time_tx(bytes_per_credit, bits_per_s);
}

const char *arb_cc_kind_name(int kind)
{
    return kind >= 0 && kind < ARB_CC_KIND_COUNT ? kind_names[kind] : NULL;
}

static int same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

int arb_cc_kind_parse(const char *name)
{
    if (!name) return ARB_ENOENT;
    for (int i = 0; i < ARB_CC_KIND_COUNT; i++)
        if (same_name(kind_names[i], name)) return i;
    return ARB_ENOENT;
}
