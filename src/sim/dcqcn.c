/*
 * DCQCN (Zhu et al., SIGCOMM 2015), per connection.
 *
 * Notification point (receiver): a CE-marked data packet makes the
 * receiver send a CNP to the sender unless it sent one for this flow less
 * than dcqcn_cnp_interval ago.
 *
 * Reaction point (sender), rates in bits/s, starting at the NIC's line rate:
 *   on a CNP:     Rt = Rc;  Rc = max(min_rate, Rc (1 - alpha/2));
 *                 alpha = (1 - g) alpha + g;
 *                 the timer restarts, both stage counters and the byte
 *                 counter go to 0.
 *   alpha decay:  alpha = (1 - g) alpha once per K that passes without
 *                 a CNP (computed when the next CNP arrives: no event).
 *   increase:     an event each time the timer T expires and each time B
 *                 bytes have been sent since the last event or cut: the
 *                 step of cc/dcqcn_rate.h, the responder's controller's
 *                 too. Once Rc is back at line rate the timer stops until
 *                 the next CNP.
 *   pacing:       a data packet of W wire bytes sent at time t holds the
 *                 connection until t + W * 8 / Rc (re-derived from t when
 *                 Rc changes in between, so a cut or an increase acts on
 *                 the gap in progress). At line rate this is exactly the
 *                 serialisation time, so an uncongested run keeps the
 *                 timing it has without DCQCN.
 * Timer events are applied lazily, in order, whenever the connection is
 * looked at (a send, a CNP, the host timer, which includes the next one).
 */
#include "sim_int.h"

static arb_time gap(const struct dcq *d, uint32_t bytes)
{
    double r = d->r.rc >= d->line ? d->line : d->r.rc;
    uint64_t bps = (uint64_t)r;
    return arb_time_tx(bytes, bps ? bps : 1);
}

static void repace(struct dcq *d)
{
    if (d->last_bytes) d->next_send = d->last_tx + gap(d, d->last_bytes);
}

static void increase(const arb_sim *s, struct dcq *d, int by_timer)
{
    const arb_sim_config *cfg = &s->cfg;
    if (dcqcn_increase(&d->r, by_timer, d->line, cfg->dcqcn_f, (double)cfg->dcqcn_rai,
                       (double)cfg->dcqcn_rhai)) {
        d->active = 0;
        d->inc_at = ARB_TIME_NEVER;
    }
    repace(d);
}

void dcqcn_init(arb_sim *s, struct conn *c)
{
    struct dcq *d = &c->cc;
    d->line = (double)s->ports[s->hosts[c->src].nic_port].rate;
    d->r.rc = d->r.rt = d->min_rc = d->line;
    d->alpha = 1;
    d->inc_at = ARB_TIME_NEVER;
    d->cnp_last = ARB_TIME_NEVER;
}

void dcqcn_catch_up(arb_sim *s, struct conn *c)
{
    struct dcq *d = &c->cc;
    if (c->send_done) d->inc_at = ARB_TIME_NEVER;
    while (d->active && d->inc_at <= s->now) {
        d->inc_at += s->cfg.dcqcn_rate_timer;
        increase(s, d, 1);
    }
}

void dcqcn_on_cnp(arb_sim *s, struct conn *c)
{
    struct dcq *d = &c->cc;
    const arb_sim_config *cfg = &s->cfg;
    dcqcn_catch_up(s, c);
    if (d->cut_once) {
        uint64_t k = (s->now - d->alpha_at) / cfg->dcqcn_alpha_timer;
        for (; k > 0 && d->alpha > 1e-30; k--)
            d->alpha *= 1 - cfg->dcqcn_g;
        if (k > 0) d->alpha = 0;
    }
    d->r.rt = d->r.rc;
    d->r.rc *= 1 - d->alpha / 2;
    if (d->r.rc < (double)cfg->dcqcn_min_rate) d->r.rc = (double)cfg->dcqcn_min_rate;
    if (d->r.rc < d->min_rc) d->min_rc = d->r.rc;
    d->alpha = (1 - cfg->dcqcn_g) * d->alpha + cfg->dcqcn_g;
    d->alpha_at = s->now;
    d->cut_once = 1;
    d->cuts++;
    s->st.rate_cuts++;
    d->r.t_stage = d->r.b_stage = 0;
    d->byte_cnt = 0;
    d->active = 1;
    if (!c->send_done) {
        d->inc_at = s->now + cfg->dcqcn_rate_timer;
        rdma_arm_at(s, c->src, d->inc_at);
    }
    repace(d);
}

void dcqcn_on_sent(arb_sim *s, struct conn *c, uint32_t wire_bytes)
{
    struct dcq *d = &c->cc;
    d->last_tx = s->now;
    d->last_bytes = wire_bytes;
    if (d->active) {
        d->byte_cnt += wire_bytes;
        while (d->active && d->byte_cnt >= s->cfg.dcqcn_byte_counter) {
            d->byte_cnt -= s->cfg.dcqcn_byte_counter;
            increase(s, d, 0);
        }
    }
    repace(d);
}

int dcqcn_np_want_cnp(arb_sim *s, struct conn *c)
{
    struct dcq *d = &c->cc;
    if (d->cnp_last != ARB_TIME_NEVER && s->now - d->cnp_last < s->cfg.dcqcn_cnp_interval) return 0;
    d->cnp_last = s->now;
    return 1;
}
