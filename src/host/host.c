/*
 * The rank driver (host.h): engines of one collective for the ranks a
 * driver runs, their configuration from the plan, results counted, done
 * conditions.
 */
#include "host/host.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

void arb_host_config_default(arb_host_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    arb_ep_settings_default(&cfg->ep);
}

/* The engines' callbacks: count, then tell the driver. */
static void host_on_commit(void *ctx, const arb_commit_info *c)
{
    arb_hep *e = ctx;
    if (e->h->cfg.on_commit && e->h->cfg.on_commit(e, c) < 0) return;
    e->results++;
}

static void host_on_result(void *ctx, uint8_t msg_id, uint32_t offset, uint32_t index,
                           const uint8_t *data, size_t len)
{
    arb_hep *e = ctx;
    (void)msg_id;
    (void)offset;
    e->h->cfg.on_result(e, index, data, len);
    e->results++;
}

static int make_responder(arb_host *h, arb_hep *e)
{
    const arb_host_config *cfg = &h->cfg;
    const arb_plan *p = h->p;
    const arb_plan_channel *ch = e->c;
    if (cfg->make_cc) {
        int rc = cfg->make_cc(cfg->ctx, e, &e->cc);
        if (rc < 0) return rc;
    }
    arb_responder_config rc_;
    arb_responder_config_default(&rc_);
    rc_.channel = e->ch;
    rc_.members = ch->n_members;
    rc_.dtype = arb_plan_get_config(p)->dtype;
    rc_.op = cfg->op && ch->op != ARB_OP_NOP ? cfg->op : ch->op;
    rc_.kind = ch->kind;
    rc_.ep = cfg->ep;
    rc_.subchannels = arb_plan_get_config(p)->subchannels;
    rc_.ext = arb_plan_hdr_len(p) == 20;
    rc_.cc = e->cc;
    rc_.first_msg_id = cfg->msg_id;
    rc_.first_seq = cfg->first_seq;
    rc_.send = cfg->send;
    rc_.send_ctx = e;
    rc_.fill = cfg->fill;
    rc_.fill_ctx = e;
    rc_.on_commit = host_on_commit;
    rc_.commit_ctx = e;
    rc_.logger = cfg->logger;
    return arb_responder_new(&e->r, &rc_);
}

static int make_requester(arb_host *h, arb_hep *e)
{
    const arb_host_config *cfg = &h->cfg;
    const arb_plan *p = h->p;
    const arb_plan_channel *ch = e->c;
    arb_requester_config qc;
    arb_requester_config_default(&qc);
    qc.channel = e->ch;
    qc.member = e->member;
    qc.dtype = arb_plan_get_config(p)->dtype;
    qc.op = cfg->op && ch->op != ARB_OP_NOP ? cfg->op : ch->op;
    qc.kind = ch->kind;
    qc.ep = cfg->ep;
    qc.ext = arb_plan_hdr_len(p) == 20;
    qc.fanin = arb_plan_fanin(p, e->ch, e->member, 0);
    qc.subchannels = arb_plan_get_config(p)->subchannels;
    qc.first_msg_id = cfg->msg_id;
    qc.first_seq = cfg->first_seq;
    qc.send = cfg->send;
    qc.send_ctx = e;
    qc.fill = cfg->fill;
    qc.fill_ctx = e;
    qc.on_result = cfg->on_result ? host_on_result : NULL; /* arb_host_results */
    qc.result_ctx = e;
    qc.logger = cfg->logger;
    return arb_requester_new(&e->q, &qc);
}

/* Engines of channel c for the local ranks, from record *x on. */
static int make_channel(arb_host *h, uint32_t c, uint32_t *x)
{
    const arb_plan *p = h->p;
    const arb_plan_channel *ch = arb_plan_get_channel(p, c);
    uint64_t bytes = ch->hi - ch->lo;
    uint32_t pay = h->cfg.ep.payload;
    uint32_t offsets = bytes ? (uint32_t)((bytes + pay - 1) / pay) : 1;
    for (uint32_t m = 0; m <= ch->n_members; m++) {
        uint32_t rank = m == 0 ? ch->responder : arb_plan_member(p, c, m - 1);
        if (h->cfg.local && !h->cfg.local[rank]) continue;
        arb_hep *e = arb_host_ep(h, (*x)++);
        e->h = h;
        e->ch = c;
        e->c = ch;
        e->offsets = offsets;
        e->rank = rank;
        e->host = arb_plan_host(p, rank);
        e->member = m == 0 ? ARB_HOST_NONE : m - 1;
        e->by_results = m == 0 || (arb_plan_get_config(p)->coll != ARB_COLL_REDUCE &&
                                   ch->kind != ARB_EP_BARRIER);
        h->need[rank]++;
        int rc = m == 0 ? make_responder(h, e) : make_requester(h, e);
        if (rc < 0) return rc;
    }
    return 0;
}

int arb_host_new(arb_host **out, const arb_host_config *cfg)
{
    if (!out) return ARB_EINVAL;
    *out = NULL;
    if (!cfg || !cfg->plan || !cfg->send || (cfg->ep_size && cfg->ep_size < sizeof(arb_hep)) ||
        cfg->ep.payload == 0)
        return ARB_EINVAL;
    const arb_plan *p = cfg->plan;
    arb_host *h = arb_calloc(1, sizeof *h);
    if (!h) return ARB_ENOMEM;
    h->cfg = *cfg;
    if (!h->cfg.ep_size) h->cfg.ep_size = sizeof(arb_hep);
    /* records stay cache-line aligned */
    h->cfg.ep_size =
        (h->cfg.ep_size + _Alignof(arb_hep) - 1) / _Alignof(arb_hep) * _Alignof(arb_hep);
    h->p = p;
    uint32_t N = arb_plan_get_config(p)->n_ranks;
    for (uint32_t r = 0; r < N; r++)
        h->n_local += !cfg->local || cfg->local[r];
    for (uint32_t c = 0; c < arb_plan_n_channels(p); c++) {
        const arb_plan_channel *ch = arb_plan_get_channel(p, c);
        h->n_eps += !cfg->local || cfg->local[ch->responder];
        for (uint32_t m = 0; m < ch->n_members; m++)
            h->n_eps += !cfg->local || cfg->local[arb_plan_member(p, c, m)];
    }
    size_t bytes = (size_t)(h->n_eps ? h->n_eps : 1) * h->cfg.ep_size;
    h->eps = arb_aligned_alloc(_Alignof(arb_hep), bytes);
    h->need = arb_calloc(N, sizeof *h->need);
    h->rank_done = arb_malloc(N * sizeof *h->rank_done);
    if (h->eps) memset(h->eps, 0, bytes); /* arb_host_free reads the records */
    if (!h->eps || !h->need || !h->rank_done) {
        arb_host_free(h);
        return ARB_ENOMEM;
    }
    for (uint32_t r = 0; r < N; r++)
        h->rank_done[r] = ARB_TIME_NEVER;
    uint32_t x = 0;
    int rc = 0;
    for (uint32_t c = 0; c < arb_plan_n_channels(p) && rc == 0; c++)
        rc = make_channel(h, c, &x);
    if (rc < 0) {
        arb_host_free(h);
        return rc;
    }
    *out = h;
    return 0;
}

void arb_host_free(arb_host *h)
{
    if (!h) return;
    for (uint32_t i = 0; h->eps && i < h->n_eps; i++) {
        arb_hep *e = arb_host_ep(h, i);
        arb_responder_free(e->r);
        arb_cc_free(e->cc);
        arb_requester_free(e->q);
    }
    arb_free(h->eps);
    arb_free(h->need);
    arb_free(h->rank_done);
    arb_free(h);
}

int arb_host_start(arb_hep *e, const void *input, void *output, arb_time now)
{
    uint64_t len = e->c->hi - e->c->lo;
    uint8_t msg = e->h->cfg.msg_id;
    return e->r ? arb_responder_start_message(e->r, msg, len, input, output, now)
                : arb_requester_start_message(e->q, msg, len, input, output, now);
}

void arb_host_expire(arb_hep *e, arb_time now)
{
    if (arb_host_expiry(e) > now) return;
    if (e->r)
        arb_responder_on_expiry(e->r, now);
    else
        arb_requester_on_expiry(e->q, now);
}

int arb_host_done(const arb_host *h)
{
    return h->eps_finished == h->n_eps && h->ranks_done == h->n_local;
}

int arb_host_error(const arb_host *h)
{
    for (uint32_t i = 0; i < h->n_eps; i++) {
        const arb_hep *e = arb_host_ep(h, i);
        int rc = e->r ? arb_responder_error(e->r) : arb_requester_error(e->q);
        if (rc < 0) return rc;
    }
    return 0;
}

arb_time arb_host_next_expiry(const arb_host *h)
{
    arb_time t = ARB_TIME_NEVER;
    for (uint32_t i = 0; i < h->n_eps; i++) {
        arb_time x = arb_host_expiry(arb_host_ep(h, i));
        if (x < t) t = x;
    }
    return t;
}
