/*
 * One collective call of the runtime (comm_int.h): its plan and this rank's
 * engines (the rank driver, src/host) on the user's buffers, the packets
 * they send and receive, what the runtime answers for engines that do not
 * exist (yet, or any more), and the collectives of rt.h.
 */
#define _GNU_SOURCE
#include "rt/comm_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

/* ---- calls ---------------------------------------------------------- */

/* Keep a finished call's controller for the next call of the same share
 * (replacing the one kept for that share, if any): e->cc is the comm's then. */
static void cc_keep(arb_rt_comm *c, uint32_t share, arb_hep *e)
{
    struct rt_cc_keep *slot = NULL;
    for (int i = 0; i < RT_CC_KEEP && !slot; i++)
        if (c->cc_keep[i].share == share || !c->cc_keep[i].share) slot = &c->cc_keep[i];
    if (!slot) slot = &c->cc_keep[share % RT_CC_KEEP];
    arb_cc_free(slot->cc);
    slot->share = share;
    slot->cc = e->cc;
    e->cc = NULL;
}

/* The controller an earlier call left for this share, or NULL. */
static arb_cc *cc_take(arb_rt_comm *c, uint32_t share)
{
    for (int i = 0; i < RT_CC_KEEP; i++)
        if (c->cc_keep[i].share == share) {
            arb_cc *cc = c->cc_keep[i].cc;
            c->cc_keep[i].share = 0;
            c->cc_keep[i].cc = NULL;
            return cc;
        }
    return NULL;
}

void rt_cc_keep_free(arb_rt_comm *c)
{
    for (int i = 0; i < RT_CC_KEEP; i++) {
        arb_cc_free(c->cc_keep[i].cc);
        c->cc_keep[i].cc = NULL;
        c->cc_keep[i].share = 0;
    }
}

/* arb_rt_stats.window: the window of the last channel of more than one
 * offset (a barrier's or a small call's window moves nothing). */
static void note_window(arb_rt_comm *c, const arb_hep *e, uint32_t window)
{
    if (e->c->hi - e->c->lo > c->cfg.payload) c->st.window = window;
}

/* The kinds whose window or rate moves (and outlives a call). */
static int adaptive_cc(int kind)
{
    return kind != ARB_CC_FIXED && kind != ARB_CC_DISABLED;
}

void rt_call_free(struct arb_rt_request *k)
{
    if (!k) return;
    for (uint32_t x = 0; k->host && x < k->host->n_eps; x++) {
        arb_hep *e = arb_host_ep(k->host, x);
        if (!e->r) continue;
        arb_responder_stats st;
        arb_responder_get_stats(e->r, &st);
        arb_rt_stats *o = &k->c->st;
        o->credits += st.credits;
        o->retries += st.retries;
        o->spurious += st.spurious;
        o->tail_replays += st.tail_replays;
        o->repair_credits += st.repair_credits;
        if (e->cc) {
            /* what this call's controller did, less what it had done for
             * earlier calls */
            arb_cc_stats cs;
            arb_cc_get_stats(e->cc, &cs);
            int kept = e == k->cc_ep;
            o->cc_decreases += cs.decreases - (kept ? k->cc_base.decreases : 0);
            o->cc_increases += cs.increases - (kept ? k->cc_base.increases : 0);
            /* a failed call's controller may hold what a dead peer did to
             * it: the next call starts afresh */
            if (!k->err && adaptive_cc(k->c->cfg.cc)) cc_keep(k->c, k->host->n_eps, e);
        }
    }
    arb_host_free(k->host);
    arb_plan_free(k->plan);
    arb_free(k->cache);
    arb_free(k);
}

/* AllReduce: a committed offset of our shard into the user's buffer. */
static int on_commit(arb_hep *e, const arb_commit_info *ci)
{
    struct arb_rt_request *k = e->h->cfg.ctx;
    if (k->user_out && ci->result && ci->len)
        memcpy(k->user_out + (size_t)ci->index * e->h->cfg.ep.payload, ci->result, ci->len);
    return 0;
}

/* A credit's bytes on the wire: the payload, the Arbor and runtime
 * headers, Ethernet, IP and UDP. */
static uint32_t credit_bytes(const arb_rt_config *rc)
{
    return ARB_FRAME_OVERHEAD + RT_HDR_LEN + ARB_HDR_LEN_LONG + rc->payload;
}

/* The window a call's channels start with: ARBOR_WINDOW, or for auto the
 * loop's worth at a channel's share of the link (the simulator's default
 * window with the loop measured), within RT_WINDOW_AUTO_MIN..MAX. Before
 * any loop was sampled (and without ARBOR_BASE_RTT) the least: the JOIN's
 * round trip is no credit's loop (in the lab it holds the first ARP), and
 * a window above the loop's worth inflates the very samples it learns
 * from, with the queue it builds; from the least, one call's samples
 * give the loop. */
static uint32_t start_window(const arb_rt_comm *c, uint32_t share)
{
    const arb_rt_config *rc = &c->cfg;
    if (rc->window) return rc->window;
    if (!rc->base_rtt && !c->loop_sampled) return RT_WINDOW_AUTO_MIN;
    return arb_cc_loop_window(c->st.base_rtt, rc->line_rate, share, credit_bytes(rc),
                              RT_WINDOW_AUTO_MIN, RT_WINDOW_AUTO_MAX);
}

/* The host driver's make_cc: cfg.cc for each channel this rank answers,
 * with the rank's link shared by every channel it takes part in (each
 * moves a frame per credit across it, as in the simulator), a frame per
 * credit, and the communicator's base loop. FIXED with a window set and
 * DISABLED make none (the engines hold ARBOR_WINDOW, DISABLED's auto 16);
 * FIXED with auto a fixed controller of the window start_window chose,
 * whose samples teach the next calls the loop. Every adaptive kind keeps
 * at least a credit per base loop: a host's loop holds scheduling stalls of
 * milliseconds, which a delay controller reads as queueing, and at the
 * papers' floors (Swift: 0.001 credit) a channel would pace a credit per
 * thousand loops and a call would reach its deadline. */
static int make_cc(void *ctx, arb_hep *e, arb_cc **out)
{
    struct arb_rt_request *k = ctx;
    arb_rt_comm *c = k->c;
    const arb_rt_config *rc = &c->cfg;
    (void)out;                                      /* e->cc is written */
    uint32_t share = e->h->n_eps ? e->h->n_eps : 1; /* set before any engine */
    int adaptive = adaptive_cc(rc->cc);
    if (!adaptive && (rc->window || rc->cc == ARB_CC_DISABLED)) {
        note_window(c, e, rc->window ? rc->window : RT_WINDOW_AUTO_MAX);
        return 0;
    }
    if (adaptive && !k->cc_ep && (e->cc = cc_take(c, share)) != NULL) {
        k->cc_ep = e;
        arb_cc_get_stats(e->cc, &k->cc_base);
        c->st.cc_continued++;
        note_window(c, e, arb_cc_window(e->cc));
        return 0;
    }
    arb_cc_config cc;
    arb_cc_config_default(&cc);
    cc.line_rate = rc->line_rate / share ? rc->line_rate / share : 1;
    cc.host_rate = rc->line_rate;
    cc.credit_bytes = credit_bytes(rc);
    cc.base_rtt = c->st.base_rtt;
    cc.window = start_window(c, share);
    if (cc.window < cc.window_min) cc.window = cc.window_min;
    if (cc.window > cc.window_max) cc.window = cc.window_max;
    double floor = (double)cc.credit_bytes * 8 * ARB_PS_PER_S / (double)cc.base_rtt;
    uint64_t min_rate = floor < (double)cc.line_rate ? (uint64_t)floor : cc.line_rate;
    cc.swift.min_cwnd = 1;
    cc.oscar.min_cwnd = 1;
    cc.timely.min_rate = min_rate;
    cc.dcqcn.min_rate = min_rate;
    cc.logger = rc->logger;
    note_window(c, e, cc.window);
    return arb_cc_new(&e->cc, adaptive ? rc->cc : ARB_CC_FIXED, &cc);
}

/* The engines' send callback: the runtime header, the Arbor header, the
 * payload, to the switch. */
static void engine_send(void *ctx, const arb_ep_dst *dst, const arb_hdr *h, const uint8_t *payload,
                        size_t len)
{
    arb_hep *e = ctx;
    struct arb_rt_request *k = e->h->cfg.ctx;
    arb_rt_comm *c = k->c;
    rt_hdr rh = {.kind = RT_K_ARBOR,
                 .job = c->cfg.job,
                 .channel = (uint16_t)e->c->responder,
                 .src = (uint16_t)c->cfg.rank,
                 .sub = (uint16_t)dst->subchannel};
    if (c->echo_ce && h->packet_type == ARB_PT_DATA_REQUEST && !h->repair) rh.flags = RT_F_CE;
    if (dst->kind == ARB_EP_DST_GROUP) {
        rh.dst_kind = 1;
    } else if (dst->kind == ARB_EP_DST_MEMBER) {
        rh.dst_kind = 2;
        rh.dst = (uint16_t)arb_plan_member(k->plan, e->ch, dst->member);
    }
    size_t hl = 0;
    rt_hdr_put(c->head, &rh);
    if (arb_hdr_encode(h, len, c->head + RT_HDR_LEN, ARB_HDR_LEN_LONG, &hl) < 0) return;
    rt_tx(&c->tx, &c->sw, c->head, RT_HDR_LEN + hl, payload, len, 1);
    /* packets that ask one rank for an answer: a REGISTER or END to a
     * channel's responder, a repair credit to a member */
    uint32_t asked = UINT32_MAX;
    if (dst->kind == ARB_EP_DST_RESPONDER &&
        (h->packet_type == ARB_PT_REGISTER || h->packet_type == ARB_PT_END))
        asked = e->c->responder;
    else if (dst->kind == ARB_EP_DST_MEMBER && h->packet_type == ARB_PT_RESPONSE && h->repair)
        asked = rh.dst;
    if (asked < c->cfg.size && asked != c->cfg.rank && !c->awaiting[asked])
        c->awaiting[asked] = rt_now();
}

void rt_suspects(arb_rt_comm *c, const struct arb_rt_request *k, arb_time now, char *buf,
                 size_t len)
{
    if (now - c->last_rx >= RT_SILENT) {
        snprintf(buf, len, "no packet at all from the switch %s for %.1f s", c->cfg.sw,
                 (double)(now - c->last_rx) / ARB_PS_PER_S);
        return;
    }
    char quiet[96] = "", wait[96] = "", mute[96] = "";
    size_t w = 0;
    for (uint32_t r = 0; r < c->cfg.size && w + 8 < sizeof quiet; r++)
        if (r != c->cfg.rank && c->awaiting[r] && now - c->awaiting[r] >= RT_SILENT)
            w += (size_t)snprintf(quiet + w, sizeof quiet - w, "%s%u", w ? "," : "", r);
    /* with none unanswered: the responders of the channels waited for that
     * sent nothing at all for as long (a dead responder whose REGISTER this
     * rank had already seen answered; a live one waiting for a dead rank's
     * REGISTER is silent too, so this is the weaker sign) */
    size_t v = 0, m = 0;
    for (uint32_t x = 0; k && x < k->host->n_eps && v + 8 < sizeof wait; x++) {
        arb_hep *e = arb_host_ep(k->host, x);
        uint32_t r = e->c->responder;
        if (e->cond_done || r == c->cfg.rank) continue;
        v += (size_t)snprintf(wait + v, sizeof wait - v, "%s%u", v ? "," : "", r);
        if (!w && r < c->cfg.size && now - c->heard[r] >= RT_SILENT && m + 8 < sizeof mute)
            m += (size_t)snprintf(mute + m, sizeof mute - m, "%s%u", m ? "," : "", r);
    }
    if (m)
        snprintf(buf, len,
                 "unanswered for 1 s: none; silent for 1 s: %s; waiting for the channels of: %s",
                 mute, wait);
    else
        snprintf(buf, len, "unanswered for 1 s: %s; waiting for the channels of: %s",
                 w ? quiet : "none", v ? wait : "none");
}

/* The fewest doublings (endpoint.h: retry x (2^tries - 1)) that reach
 * `span`; at least the engines' default, at most their 32. */
static uint32_t give_up_tries(arb_time retry, arb_time span)
{
    uint32_t t = ARB_EP_RETRY_TRIES_DEFAULT;
    while (t < 32 && (double)retry * (double)((UINT64_C(1) << t) - 1) < (double)span)
        t++;
    return t;
}

/* The REGISTER / END retry cap: the timers' ceiling, times N / 32 past 32
 * ranks, so that the retries of a job's N (N - 1) REGISTERs stay near
 * 160 (N - 1) datagrams a second on their switch whatever N is (at the
 * ceiling alone, 256 ranks' retries were 330 k a second, more than a
 * software switch on a loaded machine handles, and never got through). */
static arb_time register_cap(const arb_rt_config *cfg)
{
    uint32_t k = (cfg->size + 31) / 32;
    return cfg->timeout_max * (k ? k : 1);
}

/* The ceilings a backed-off wait may reach so that repair_tries rounds
 * span the call's deadline: at least 1. */
static uint32_t backoff_for(const arb_rt_config *cfg)
{
    double rounds = (double)cfg->repair_tries * (double)cfg->timeout_max;
    double k = ceil((double)cfg->timeout / rounds);
    return k < 1 ? 1 : k > ARB_EP_BACKOFF_MAX_DEFAULT ? ARB_EP_BACKOFF_MAX_DEFAULT : (uint32_t)k;
}

static void on_failure(arb_hep *e)
{
    struct arb_rt_request *k = e->h->cfg.ctx;
    arb_rt_comm *c = k->c;
    if (k->done || k->err) return; /* a lingering engine: the output is complete */
    if (k->mismatch[0]) {
        k->err = ARB_EINVAL;
        rt_fail(c, ARB_EINVAL, "%s", k->mismatch);
        return;
    }
    k->err = ARB_ETIMEDOUT;
    arb_time now = rt_now();
    if (now - c->last_rx >= RT_SILENT) {
        char why[320];
        rt_suspects(c, k, now, why, sizeof why);
        rt_fail(c, ARB_ETIMEDOUT, "%s (message %u) failed: %s (the channel of rank %u gave up)",
                arb_coll_name(k->coll), k->msg, why, e->c->responder);
        return;
    }
    if (e->r) {
        arb_responder_failure f;
        arb_responder_get_failure(e->r, &f);
        char miss[128] = "";
        size_t w = 0;
        for (uint32_t m = 0; m < e->c->n_members && w + 8 < sizeof miss; m++)
            if ((f.missing[m >> 6] >> (m & 63)) & 1)
                w += (size_t)snprintf(miss + w, sizeof miss - w, "%s%u", w ? "," : "",
                                      arb_plan_member(k->plan, e->ch, m));
        rt_fail(c, ARB_ETIMEDOUT,
                "%s (message %u) failed: channel of rank %u %s; ranks that never answered: %s",
                arb_coll_name(k->coll), k->msg, e->c->responder,
                f.end_wait ? "waited for ENDs" : "could not commit an offset",
                miss[0] ? miss : "?");
    } else {
        arb_requester_progress pr;
        arb_requester_get_progress(e->q, &pr);
        rt_fail(c, ARB_ETIMEDOUT, "%s (message %u) failed: rank %u never answered our %s",
                arb_coll_name(k->coll), k->msg, e->c->responder,
                pr.phase == ARB_REQ_FAILED && pr.results < pr.offsets ? "REGISTER" : "END");
    }
}

/* Every rank must call with the same dtype and op (MPI's rule): the
 * header of each packet carries the sender's dtype, and credits and
 * requests its op. A packet of call k that disagrees is noted, and the call
 * fails with ARB_EINVAL when it ends (a mismatch would otherwise reduce
 * with two operators, or mix formats, and return wrong data silently); the
 * packet is still handled, so that the protocol runs on and the other
 * ranks see this one's packets and find the same. */
static void note_mismatch(struct arb_rt_request *k, const rt_hdr *rh, const arb_hdr *h)
{
    arb_rt_comm *c = k->c;
    int carries_op = h->packet_type == ARB_PT_DATA_REQUEST ||
                     (h->packet_type == ARB_PT_RESPONSE && h->credit_valid);
    int bad_dt = h->dtype != (uint8_t)k->dt;
    int bad_op = carries_op && h->op != (uint8_t)k->op;
    if ((!bad_dt && !bad_op) || k->mismatch[0]) return;
    char who[24];
    if (rh->src < c->cfg.size)
        snprintf(who, sizeof who, "rank %u", rh->src);
    else
        snprintf(who, sizeof who, "another rank");
    if (bad_dt)
        snprintf(k->mismatch, sizeof k->mismatch,
                 "%s (message %u): %s calls with dtype %s, this rank with %s (every rank must pass "
                 "the same dtype)",
                 arb_coll_name(k->coll), k->msg, who, arb_dtype_name((arb_dtype)h->dtype),
                 arb_dtype_name(k->dt));
    else
        snprintf(k->mismatch, sizeof k->mismatch,
                 "%s (message %u): %s reduces with %s, this rank with %s (every rank must pass the "
                 "same op, and call the same collective)",
                 arb_coll_name(k->coll), k->msg, who, arb_op_name((arb_op)h->op),
                 arb_op_name(k->op));
}

/* Replay the REGISTERs and first credits that came before the call was
 * started. */
static void replay_stash(arb_rt_comm *c, struct arb_rt_request *k, arb_time now)
{
    uint32_t w = 0;
    for (uint32_t i = 0; i < c->n_stash; i++) {
        struct stash *s = &c->stash[i];
        if (s->msg == k->msg) {
            rt_hdr rh = {.kind = RT_K_ARBOR, .src = s->src};
            note_mismatch(k, &rh, &s->h);
            int x = s->channel < c->cfg.size ? k->ep_of[s->channel] : -1;
            if (x >= 0) {
                arb_hep *e = arb_host_ep(k->host, (uint32_t)x);
                int from = s->src < c->cfg.rank ? s->src : s->src - 1;
                c->echo_ce = !e->r && s->ce;
                arb_host_deliver(e, &s->h, NULL, 0, e->r ? from : 0, s->sub, s->ce, 0, now);
                c->echo_ce = 0;
            }
            continue;
        }
        /* keep only what is still ahead of the newest call */
        if ((uint8_t)(s->msg - k->msg) <= MAX_CALLS) c->stash[w++] = *s;
    }
    c->n_stash = w;
}

/* Start call k: plan, engines, buffers. */
/* Room for one more call: released calls whose engines still owe answers
 * are progressed until one finishes (bounded by the deadline). */
static int wait_for_room(arb_rt_comm *c)
{
    arb_time give_up = rt_now() + c->cfg.timeout;
    while (c->n_calls >= MAX_CALLS) {
        uint32_t mine = 0;
        for (struct arb_rt_request *k = c->calls; k; k = k->next)
            mine += !k->released;
        if (mine >= MAX_CALLS)
            return rt_fail(c, ARB_ESTATE, "%d calls in flight: wait for some first", MAX_CALLS);
        rt_progress_once(c);
        if (c->n_calls < MAX_CALLS) break;
        arb_time now = rt_now();
        if (now >= give_up)
            return rt_fail(c, ARB_ETIMEDOUT, "earlier calls could not finish within %.3f s",
                           (double)c->cfg.timeout / ARB_PS_PER_S);
        rt_comm_wait(c, rt_next_wake(c, NULL, now));
    }
    return 0;
}

/* The call's plan: its collective over the job's ranks on the switches'
 * fabric. */
static int call_plan(arb_rt_comm *c, struct arb_rt_request *k, uint32_t root, uint64_t bytes)
{
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.coll = k->coll;
    pc.ranks = c->ranks;
    pc.n_ranks = c->cfg.size;
    pc.root = root;
    pc.bytes = bytes;
    pc.dtype = k->dt;
    pc.share_min = ARB_PLAN_SHARE_MIN; /* a small call: one channel, not N (plan.h) */
    /* a rooted collective's one channel takes the trees of its responder's
     * channel in the switches' plan (channel r rooted at offset r) */
    if (k->coll == ARB_COLL_REDUCE || k->coll == ARB_COLL_BROADCAST) pc.root_offset = root;
    char perr[160];
    int rc = arb_topo_plan(&k->plan, c->topo, &pc, perr, sizeof perr);
    return rc < 0 ? rt_fail(c, rc, "%s", perr) : 0;
}

/* The call's engines: this rank's requesters and responders of the plan,
 * through the rank driver. */
static int call_host(arb_rt_comm *c, struct arb_rt_request *k, arb_op op)
{
    uint8_t local[ARB_PLAN_MAX_RANKS] = {0};
    local[c->cfg.rank] = 1;
    arb_host_config hc;
    arb_host_config_default(&hc);
    hc.plan = k->plan;
    hc.local = local;
    hc.ep.payload = c->cfg.payload;
    hc.ep.window = c->cfg.window ? c->cfg.window : RT_WINDOW_AUTO_MAX;
    hc.ep.timeout_min = c->cfg.timeout_min;
    hc.ep.timeout = c->cfg.timeout_max;
    hc.ep.repair_tries = c->cfg.repair_tries;
    /* Backed-off waits pass the ceiling only as far as the deadline needs:
     * a responder gives up after repair_tries rounds, each at most
     * backoff_max ceilings after the last, and that span must cover the
     * deadline, or a job slow for want of cores (128 ranks on two) is
     * given up as lost while its ranks still answer. With the default
     * deadline that is 3 ceilings (the engines' own default, doubling to
     * 64, spaced the rounds of one offset seconds apart after a few unlucky
     * ones under heavy loss, and the call reached its deadline). */
    hc.ep.backoff_max = backoff_for(&c->cfg);
    /* The REGISTER / END retries start at the floor and double up to the
     * ceiling (register_cap), as every other wait here: at the engines' 10 ms cap, 64
     * ranks' REGISTERs to 64 channels made 400 k datagrams a second of
     * retries alone on a switch that answers fewer, and a rank whose
     * answers were lost in that flood was blamed as dead after the
     * engines' fixed 2.55 s. Nor does a requester give up by its own
     * clock: the call's deadline ends a call, naming the ranks measured
     * as unanswered (rt_suspects), so a slow job gets the time its user
     * gave it. */
    hc.ep.early = 1; /* ranks start calls at their own times: a first credit waits for them */
    hc.ep.seed = !c->cfg.responder_results; /* a small AllReduce's result from the switch */
    hc.ep.retry_min = c->cfg.timeout_min;
    hc.ep.retry = register_cap(&c->cfg);
    hc.ep.retry_tries = give_up_tries(hc.ep.retry, c->cfg.timeout + c->cfg.timeout_max);
    hc.op = op;
    hc.msg_id = k->msg;
    hc.send = engine_send;
    hc.on_failure = on_failure;
    hc.on_commit = k->coll == ARB_COLL_ALLREDUCE ? on_commit : NULL;
    hc.make_cc = make_cc;
    hc.ctx = k;
    hc.logger = c->cfg.logger;
    int rc = arb_host_new(&k->host, &hc);
    return rc < 0 ? rt_fail(c, rc, "cannot make the engines of %s: %s", arb_coll_name(k->coll),
                            arb_strerror(rc))
                  : 0;
}

/* Start engine e of call k on the user's buffers: what it reads and where
 * it writes, by collective. */
static int start_engine(struct arb_rt_request *k, arb_hep *e, const void *send, void *recv,
                        uint64_t bytes, arb_time now)
{
    const arb_plan_channel *ch = e->c;
    const uint8_t *in = NULL;
    uint8_t *outp = NULL;
    switch (k->coll) {
    case ARB_COLL_ALLREDUCE:
        in = (const uint8_t *)send + ch->lo;
        outp = (uint8_t *)recv + ch->lo;
        if (e->r && ch->hi > ch->lo) {
            /* the result cache outlives the call: tails lost on their way
             * are replayed from it after this rank returned */
            k->user_out = outp;
            outp = k->cache = arb_malloc(ch->hi - ch->lo);
            if (!outp) return ARB_ENOMEM;
        }
        break;
    case ARB_COLL_REDUCE:
        in = send;
        outp = e->r ? recv : NULL;
        if (e->r && send == recv && bytes) {
            /* in place: the root's engine writes partial results into
             * recv while it still reads its own input: reduce a copy */
            uint8_t *copy = k->cache = arb_malloc(bytes);
            if (!copy) return ARB_ENOMEM;
            in = memcpy(copy, send, bytes);
        }
        break;
    case ARB_COLL_REDUCESCATTER:
        in = (const uint8_t *)send + ch->lo;
        outp = e->r ? recv : NULL;
        break;
    case ARB_COLL_BROADCAST:
        in = e->r ? recv : NULL; /* the root pushes buf */
        outp = e->r ? NULL : recv;
        break;
    case ARB_COLL_ALLGATHER:
        in = e->r ? send : NULL;
        outp = e->r ? NULL : (uint8_t *)recv + ch->lo;
        break;
    default:
        break;
    }
    if (ch->hi == ch->lo) in = outp = NULL;
    int rc = arb_host_start(e, in, outp, now);
    if (rc == 0) arb_host_after(e, now);
    return rc;
}

int rt_call_start(arb_rt_comm *c, arb_coll coll, const void *send, void *recv, size_t count,
                  arb_dtype dt, arb_op op, uint32_t root, struct arb_rt_request **out)
{
    int rc = wait_for_room(c);
    if (rc < 0) return rc;
    uint64_t bytes = (uint64_t)count * arb_dtype_size(dt);
    if (coll == ARB_COLL_REDUCESCATTER || coll == ARB_COLL_ALLGATHER) bytes *= c->cfg.size;
    struct arb_rt_request *k = arb_calloc(1, sizeof *k);
    if (!k) return ARB_ENOMEM;
    k->c = c;
    k->coll = coll;
    k->dt = dt;
    k->op = coll == ARB_COLL_ALLREDUCE || coll == ARB_COLL_REDUCE || coll == ARB_COLL_REDUCESCATTER
                ? op
                : ARB_OP_NOP;
    k->msg = c->next_msg;
    for (uint32_t r = 0; r < ARB_PLAN_MAX_RANKS; r++)
        k->ep_of[r] = -1;
    rc = call_plan(c, k, root, bytes);
    if (rc == 0) rc = call_host(c, k, op);
    if (rc < 0) {
        rt_call_free(k);
        return rc;
    }
    arb_time now = rt_now();
    k->deadline = now + c->cfg.timeout;
    k->started = now;
    if (coll == ARB_COLL_ALLGATHER && count) {
        const arb_plan_channel *mine = arb_plan_get_channel(k->plan, c->cfg.rank);
        if ((const uint8_t *)recv + mine->lo != send)
            memmove((uint8_t *)recv + mine->lo, send, mine->hi - mine->lo);
    }
    for (uint32_t x = 0; x < k->host->n_eps && rc == 0; x++) {
        arb_hep *e = arb_host_ep(k->host, x);
        k->ep_of[e->c->responder] = (int16_t)x;
        rc = start_engine(k, e, send, recv, bytes, now);
    }
    if (rc < 0) {
        rt_call_free(k);
        return rt_fail(c, rc, "cannot start %s: %s", arb_coll_name(coll), arb_strerror(rc));
    }
    c->next_msg++;
    c->last_msg = k->msg;
    c->started_any = 1;
    k->next = c->calls;
    c->calls = k;
    c->n_calls++;
    replay_stash(c, k, now);
    rt_tx_flush(&c->tx);
    *out = k;
    return 0;
}

/* The call whose message is msg, or NULL. */
static struct arb_rt_request *call_of(arb_rt_comm *c, uint8_t msg)
{
    for (struct arb_rt_request *k = c->calls; k; k = k->next)
        if (k->msg == msg) return k;
    return NULL;
}

/* Keep a packet of a call not started yet: 0, or -1 when the stash is
 * full (the sender retries a REGISTER; a credit is retried by its timer). */
static int stash(arb_rt_comm *c, const rt_hdr *rh, const arb_hdr *h)
{
    if (c->n_stash == STASH_MAX) return -1;
    struct stash *s = &c->stash[c->n_stash++];
    s->msg = h->message_id;
    s->src = rh->src;
    s->channel = rh->channel;
    s->sub = rh->sub;
    s->ce = (rh->flags & RT_F_CE) != 0;
    s->h = *h;
    s->h.payload_valid = 0; /* a seed no switch kept (ep.seed): a bare credit */
    s->h.payload_kind = ARB_PK_DATA;
    if (s->ce) c->st.ce_marks++;
    return 0;
}

/* Answer for an engine that does not exist (yet, or any more): ack a
 * REGISTER that is early (and keep it for the call) or late, and an END
 * whose call is gone. */
static void orphan(arb_rt_comm *c, const rt_hdr *rh, const arb_hdr *h)
{
    if (h->packet_type == ARB_PT_RESPONSE && h->repair && h->credit_valid && h->op == ARB_OP_NOP &&
        rh->channel < c->cfg.size && rh->channel != c->cfg.rank) {
        /* A repair credit of a push or barrier call this rank finished and
         * freed: its answer carries no bytes, and another member's lost
         * acknowledgement may be what the repair waits for (the requester
         * engine answers it the same way when it still exists). Pull calls
         * never repair an offset whose results every member holds. */
        arb_hdr a;
        arb_hdr_init(&a, ARB_PT_DATA_REQUEST, h->message_id, h->dtype, h->ext);
        a.repair = 1;
        a.offset_a = h->offset_b;
        a.offset_b = 1;
        rt_hdr ah = {.kind = RT_K_ARBOR,
                     .job = c->cfg.job,
                     .channel = rh->channel,
                     .src = (uint16_t)c->cfg.rank,
                     .sub = rh->sub};
        size_t hl;
        rt_hdr_put(c->head, &ah);
        if (arb_hdr_encode(&a, 0, c->head + RT_HDR_LEN, ARB_HDR_LEN_LONG, &hl) == 0)
            rt_tx(&c->tx, &c->sw, c->head, RT_HDR_LEN + hl, NULL, 0, 0);
        c->st.rx_late++;
        return;
    }
    uint8_t ahead = (uint8_t)(h->message_id - c->last_msg);
    int early = !c->started_any || (ahead >= 1 && ahead <= MAX_CALLS);
    if (h->packet_type == ARB_PT_RESPONSE && h->credit_valid && !h->repair &&
        (!h->payload_valid || h->payload_kind == ARB_PK_SEED) && rh->channel < c->cfg.size &&
        rh->channel != c->cfg.rank && early) {
        if (stash(c, rh, h) == 0) c->st.early_credits++; /* the responder's call is ahead */
        return;
    }
    if (rh->channel != c->cfg.rank || rh->src >= c->cfg.size || rh->src == c->cfg.rank ||
        (h->packet_type != ARB_PT_REGISTER && h->packet_type != ARB_PT_END)) {
        c->st.rx_late++;
        return;
    }
    if (h->packet_type == ARB_PT_REGISTER && early && stash(c, rh, h) < 0) return;
    arb_hdr a;
    arb_hdr_init(&a, h->packet_type == ARB_PT_REGISTER ? ARB_PT_REGISTER_ACK : ARB_PT_END_ACK,
                 h->message_id, h->dtype, h->ext);
    a.repair = h->packet_type == ARB_PT_REGISTER;
    a.offset_a = h->offset_a;
    rt_hdr ah = {.kind = RT_K_ARBOR,
                 .dst_kind = 2,
                 .job = c->cfg.job,
                 .channel = (uint16_t)c->cfg.rank,
                 .dst = rh->src,
                 .src = (uint16_t)c->cfg.rank,
                 .sub = rh->sub};
    size_t hl;
    rt_hdr_put(c->head, &ah);
    if (arb_hdr_encode(&a, 0, c->head + RT_HDR_LEN, ARB_HDR_LEN_LONG, &hl) == 0)
        rt_tx(&c->tx, &c->sw, c->head, RT_HDR_LEN + hl, NULL, 0, 0);
}

void rt_on_arbor(arb_rt_comm *c, const rt_hdr *rh, const uint8_t *b, size_t len, arb_time now)
{
    arb_hdr h;
    size_t off;
    if (rh->job != c->cfg.job || arb_hdr_decode(&h, b + RT_HDR_LEN, len - RT_HDR_LEN, &off) < 0) {
        c->st.rx_undecodable++;
        return;
    }
    if (rh->src < c->cfg.size) {
        c->heard[rh->src] = now;
        c->awaiting[rh->src] = 0;
    }
    struct arb_rt_request *k = call_of(c, h.message_id);
    if (!k) {
        orphan(c, rh, &h);
        return;
    }
    if (rh->channel >= c->cfg.size || k->ep_of[rh->channel] < 0) {
        c->st.rx_unknown++;
        return;
    }
    note_mismatch(k, rh, &h);
    arb_hep *e = arb_host_ep(k->host, (uint32_t)k->ep_of[rh->channel]);
    int from = 0;
    if (e->r) {
        if (rh->flags & RT_F_SWITCH)
            from = ARB_EP_FROM_SWITCH;
        else if (rh->src < c->cfg.size && rh->src != rh->channel)
            from = rh->src < rh->channel ? rh->src : rh->src - 1;
        else
            from = ARB_EP_NOT_MEMBER;
    }
    if (rh->flags & RT_F_CE) c->st.ce_marks++;
    c->echo_ce = !e->r && (rh->flags & RT_F_CE);
    arb_host_deliver(e, &h, b + RT_HDR_LEN + off, len - RT_HDR_LEN - off, from, rh->sub,
                     rh->flags & RT_F_CE, 0, now);
    c->echo_ce = 0;
}

/* Update a call's state after its engines moved. */
/* The next calls' base loop, unless configured: the shortest loop this
 * call's controllers sampled, when shorter than the one they started from. */
static void learn_base_rtt(arb_rt_comm *c, const arb_host *h)
{
    if (c->cfg.base_rtt) return;
    for (uint32_t x = 0; x < h->n_eps; x++) {
        arb_hep *e = arb_host_ep(h, x);
        if (!e->cc) continue;
        arb_cc_stats cs;
        arb_cc_get_stats(e->cc, &cs);
        if (cs.samples) c->loop_sampled = 1;
        if (cs.min >= ARB_PS_PER_US && cs.min < c->st.base_rtt) c->st.base_rtt = cs.min;
    }
}

void rt_call_check(arb_rt_comm *c, struct arb_rt_request *k, arb_time now)
{
    arb_host *h = k->host;
    if (!k->done && !k->err && h->ranks_done == h->n_local) {
        k->done = 1;
        learn_base_rtt(c, h);
        if (k->mismatch[0])
            k->err = rt_fail(c, ARB_EINVAL, "%s", k->mismatch); /* engines linger on */
        else
            c->st.calls++;
    }
    if (!k->finished && (arb_host_done(h) || (k->done && arb_host_error(h) < 0))) k->finished = 1;
    if (!k->done && !k->err && now >= k->deadline && k->mismatch[0]) {
        k->err = rt_fail(c, ARB_EINVAL, "%s", k->mismatch);
    } else if (!k->done && !k->err && now >= k->deadline) {
        k->err = ARB_ETIMEDOUT;
        arb_responder_progress rp;
        char what[96] = "";
        for (uint32_t x = 0; x < h->n_eps; x++) {
            arb_hep *e = arb_host_ep(h, x);
            if (e->cond_done) continue;
            if (e->r) {
                arb_responder_get_progress(e->r, &rp);
                snprintf(what, sizeof what,
                         "our channel has %u of %u members registered, %u of %u offsets committed",
                         rp.registered, e->c->n_members, rp.committed, rp.offsets);
            } else if (!what[0]) {
                snprintf(what, sizeof what, "waiting for rank %u's channel", e->c->responder);
            }
        }
        char who[320];
        rt_suspects(c, k, now, who, sizeof who);
        rt_fail(c, ARB_ETIMEDOUT, "%s (message %u) timed out after %.3f s: %s; %s",
                arb_coll_name(k->coll), k->msg, (double)c->cfg.timeout / ARB_PS_PER_S, what, who);
    }
}

/* ---- the collectives --------------------------------------------------- */

static int check_args(arb_rt_comm *c, const void *a, const void *b, size_t count, arb_dtype dt,
                      int op, uint32_t root, int reduce)
{
    if (!c) return ARB_EINVAL;
    c->err[0] = 0; /* a new call: the last one's error is not this one's */
    if (arb_dtype_size(dt) == 0)
        return rt_fail(c, ARB_EINVAL, "dtype %d is not one of the six", dt);
    if (reduce && (op <= ARB_OP_NOP || op >= ARB_OP_COUNT))
        return rt_fail(c, ARB_EINVAL, "op %d is not SUM, MAX or MIN", op);
    if (root >= c->cfg.size)
        return rt_fail(c, ARB_EINVAL, "root %u is not a rank of %u", root, c->cfg.size);
    if (count && (!a || !b)) return rt_fail(c, ARB_EINVAL, "a NULL buffer with count %zu", count);
    if (count > ((uint64_t)1 << 47) / arb_dtype_size(dt) / c->cfg.size)
        return rt_fail(c, ARB_EINVAL, "count %zu is too large", count);
    return 0;
}

static int start(arb_rt_comm *c, arb_coll coll, const void *send, void *recv, size_t count,
                 arb_dtype dt, arb_op op, uint32_t root, arb_rt_request **req)
{
    *req = NULL;
    return rt_call_start(c, coll, send, recv, count, dt, op, root, req);
}

int arb_rt_iallreduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                      arb_op op, arb_rt_request **req)
{
    int rc = req ? check_args(c, send, recv, count, dt, op, 0, 1) : ARB_EINVAL;
    return rc < 0 ? rc : start(c, ARB_COLL_ALLREDUCE, send, recv, count, dt, op, 0, req);
}

int arb_rt_ireduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                   arb_op op, uint32_t root, arb_rt_request **req)
{
    int rc =
        req ? check_args(c, send, c && c->cfg.rank == root ? recv : send, count, dt, op, root, 1)
            : ARB_EINVAL;
    return rc < 0 ? rc : start(c, ARB_COLL_REDUCE, send, recv, count, dt, op, root, req);
}

int arb_rt_ireducescatter(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                          arb_op op, arb_rt_request **req)
{
    int rc = req ? check_args(c, send, recv, count, dt, op, 0, 1) : ARB_EINVAL;
    return rc < 0 ? rc : start(c, ARB_COLL_REDUCESCATTER, send, recv, count, dt, op, 0, req);
}

int arb_rt_ibroadcast(arb_rt_comm *c, void *buf, size_t count, arb_dtype dt, uint32_t root,
                      arb_rt_request **req)
{
    int rc = req ? check_args(c, buf, buf, count, dt, ARB_OP_NOP, root, 0) : ARB_EINVAL;
    return rc < 0 ? rc : start(c, ARB_COLL_BROADCAST, buf, buf, count, dt, ARB_OP_NOP, root, req);
}

int arb_rt_iallgather(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                      arb_rt_request **req)
{
    int rc = req ? check_args(c, send, recv, count, dt, ARB_OP_NOP, 0, 0) : ARB_EINVAL;
    return rc < 0 ? rc : start(c, ARB_COLL_ALLGATHER, send, recv, count, dt, ARB_OP_NOP, 0, req);
}

int arb_rt_ibarrier(arb_rt_comm *c, arb_rt_request **req)
{
    if (!c || !req) return ARB_EINVAL;
    c->err[0] = 0;
    return start(c, ARB_COLL_BARRIER, NULL, NULL, 0, ARB_DTYPE_F32, ARB_OP_NOP, 0, req);
}

/* A blocking call: start and wait; count 0 moves nothing. */
#define BLOCKING(call)                                                                             \
    do {                                                                                           \
        arb_rt_request *r_;                                                                        \
        int rc_ = (call);                                                                          \
        return rc_ < 0 ? rc_ : arb_rt_wait(r_);                                                    \
    } while (0)

int arb_rt_allreduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                     arb_op op)
{
    BLOCKING(arb_rt_iallreduce(c, send, recv, count, dt, op, &r_));
}
int arb_rt_reduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                  arb_op op, uint32_t root)
{
    BLOCKING(arb_rt_ireduce(c, send, recv, count, dt, op, root, &r_));
}
int arb_rt_reducescatter(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                         arb_op op)
{
    BLOCKING(arb_rt_ireducescatter(c, send, recv, count, dt, op, &r_));
}
int arb_rt_broadcast(arb_rt_comm *c, void *buf, size_t count, arb_dtype dt, uint32_t root)
{
    BLOCKING(arb_rt_ibroadcast(c, buf, count, dt, root, &r_));
}
int arb_rt_allgather(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt)
{
    BLOCKING(arb_rt_iallgather(c, send, recv, count, dt, &r_));
}
int arb_rt_barrier(arb_rt_comm *c)
{
    BLOCKING(arb_rt_ibarrier(c, &r_));
}
