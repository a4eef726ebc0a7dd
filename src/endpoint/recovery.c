/*
 * The responder's recovery (docs/protocol.md, "Loss and recovery";
 * docs/endpoint.md, "Loss detection"): which credits are lost, what a loss
 * costs.
 *
 *   detection  by order (a credit sent after this one on the same tree has
 *              committed and a reordering window has passed: RACK, RFC
 *              8985, for groups) and by timer (the tree has been silent for
 *              the timeout: the tail, or a dead tree);
 *   recovery   a fresh credit for the offset with the next attempt number,
 *              in the network; the original design's bypass repair after
 *              `attempts` credits or `miss_limit` AGG_MISS; the channel
 *              fails after `repair_tries` unanswered repair credits;
 *   trees      their health and the choice among them: trees.c.
 */
#include <assert.h>
#include <string.h>

#include "arbor/endpoint.h"
#include "arbor/reduce.h"
#include "endpoint/rsp_int.h"

/* Spurious losses raise a multiplier up to this; every MULT_DECAY samples
 * with no spurious loss halve it (RACK-TLP's reo_wnd_mult, with a decay by
 * samples rather than by recoveries: a loss-free run has no recoveries). */
#define MULT_MAX 4u
#define MULT_DECAY 64u
/* The timer's multiplier goes further while the ceiling cuts the
 * estimate: it is what rescues a ceiling set below the loaded loop (each
 * spurious timer loss doubles it). */
#define RTO_MULT_MAX 64u
/* The recent maximum is over the last one to two windows of this many
 * samples. */
#define MAX_WINDOW 64u
/* Before the first warm sample the timer is RTO_INITIAL (or 3 floors when
 * that is more). A sample is cold when its credit left before the
 * responder's first commit: the first window goes into an idle network,
 * and every channel's first windows then queue together, so the second
 * window's loop is many times the first's (on star-32: 5-13 us, then
 * 158-164 us, then 85 us in steady state). Cold samples feed the order
 * (RACK) state and the smallest loop, never the timer. RFC 6298 starts at
 * 1 s for want of any knowledge; a fabric's loop is microseconds. Losses
 * before the first warm sample are found by order, or, in a message that
 * lives in its first window, by the cold loop (cold_message). */
#define RTO_INITIAL (1 * ARB_PS_PER_MS)
/* The first END wait of a message that lived in its first window, before
 * any END came: at least this many of its slowest cold loops. */
#define END_COLD_LOOPS 3u

static arb_time tmin(arb_time a, arb_time b)
{
    return a < b ? a : b;
}

static arb_time tmax(arb_time a, arb_time b)
{
    return a > b ? a : b;
}

/* ------------------------------------------------------------------ */
/* Estimates                                                            */
/* ------------------------------------------------------------------ */

/* A message that lives in its first window: every offset had its first
 * credit before any committed (a small message: 1 MiB over 32 or 64
 * ranks is 2 to 4 offsets a channel), and no warm sample came yet. No
 * later window of its own will queue behind the first, and it never gets
 * a warm sample (a retry's is the first): its timer and its tail probe go
 * by the cold loop, the loop it lives in, rather than RTO_INITIAL, which a
 * loss would wait for whole, then its backoffs. */
static int cold_message(const arb_responder *r)
{
    return r->one_window && r->n_samples == 0;
}

/* The timer in force: the ceiling (fixed), or the larger of srtt + 4
 * rttvar and the recent maximum sample plus rttvar, within the floor and
 * the ceiling, 3 floors before the first sample, times the spurious-timer
 * multiplier. The recent maximum matters: completion times have a long
 * tail (credits issued in a burst complete a loop later, together), which
 * srtt + 4 rttvar does not cover. */
/* The estimate, within the floor, before the ceiling and the multiplier. */
static arb_time rto_estimate(const arb_responder *r)
{
    arb_time t;
    if (cold_message(r) && r->cold_srtt)
        t = tmax(r->cold_srtt + 4 * r->cold_rttvar, r->cold_max + r->cold_rttvar);
    else if (r->n_samples == 0 && r->msg[0].n == 1)
        t = 3 * r->cfg.ep.timeout_min; /* one offset: no window of its own to queue behind */
    else if (r->n_samples == 0)
        t = tmax(3 * r->cfg.ep.timeout_min, RTO_INITIAL);
    else
        t = tmax(r->srtt + 4 * r->rttvar, tmax(r->max_cur, r->max_prev) + r->rttvar);
    return t < r->cfg.ep.timeout_min ? r->cfg.ep.timeout_min : t;
}

arb_time rsp_rto(const arb_responder *r)
{
    arb_time max = r->cfg.ep.timeout;
    if (!r->cfg.ep.adaptive_timeout) return max;
    arb_time t = rto_estimate(r);
    if (t > max) t = max;
    return t * r->rto_mult; /* spurious timers back off past the ceiling */
}

/* How far spurious timer losses raise the multiplier: MULT_MAX, or
 * RTO_MULT_MAX while the ceiling cuts the estimate (a ceiling set below
 * the loaded loop). */
static uint32_t rto_mult_max(const arb_responder *r)
{
    return rto_estimate(r) > r->cfg.ep.timeout ? RTO_MULT_MAX : MULT_MAX;
}

/* The bound of every backed-off wait. */
/* Backed-off waits (an offset lost again, repair tries, END rounds, probes
 * of a dead tree) double from the timer up to cfg.ep.backoff_max ceilings (64
 * by default: a ceiling below the loaded loop then slows a run instead of
 * failing it). */
arb_time rsp_backoff_cap(const arb_responder *r)
{
    arb_time c = r->cfg.ep.timeout, m = r->cfg.ep.backoff_max;
    return c > ARB_TIME_NEVER / m ? ARB_TIME_NEVER : c * m;
}

/* The reordering window: the larger of a quarter of the smallest
 * completion time and the largest reordering measured, times the spurious
 * multiplier, at most srtt. */
static arb_time reo_wnd(const arb_responder *r)
{
    if (r->min_rtt == ARB_TIME_NEVER) return 0;
    arb_time w = tmax(r->min_rtt / 4, r->reo_seen) * r->reo_mult;
    return r->srtt ? tmin(w, r->srtt) : w;
}

/* RFC 6298's smoothed loop and its variation, one sample on (srtt 0: the
 * first sample; srtt is never 0 after it). */
static void smooth(arb_time *srtt, arb_time *rttvar, arb_time sample)
{
    if (*srtt == 0) {
        *srtt = sample ? sample : 1;
        *rttvar = sample / 2;
        return;
    }
    arb_time d = *srtt > sample ? *srtt - sample : sample - *srtt;
    *rttvar = (3 * *rttvar + d) / 4;
    *srtt = (7 * *srtt + sample) / 8;
    if (*srtt == 0) *srtt = 1;
}

/* The cold samples' own estimate (cold_message). */
static void cold_sample(arb_responder *r, arb_time sample)
{
    if (sample > r->cold_max) r->cold_max = sample;
    smooth(&r->cold_srtt, &r->cold_rttvar, sample);
}

/* RFC 6298's estimator over completion samples, and the recent maximum;
 * a cold sample (its credit left before the first commit) counts as the
 * smallest loop and in the cold estimate only. */
static void rto_sample(arb_responder *r, arb_time sample, arb_time sent)
{
    if (sample < r->min_rtt) r->min_rtt = sample;
    if (!r->first_commit || sent < r->first_commit) {
        cold_sample(r, sample);
        return;
    }
    r->n_samples++;
    if (++r->max_n > MAX_WINDOW) {
        r->max_prev = r->max_cur;
        r->max_cur = 0;
        r->max_n = 1;
    }
    if (sample > r->max_cur) r->max_cur = sample;
    if (++r->clean >= MULT_DECAY) {
        r->clean = 0;
        if (r->reo_mult > 1) r->reo_mult /= 2;
        if (r->rto_mult > 1) r->rto_mult /= 2;
    }
    smooth(&r->srtt, &r->rttvar, sample);
}

/* ------------------------------------------------------------------ */
/* Samples                                                              */
/* ------------------------------------------------------------------ */

/* The attempt in flight committed: a completion sample for the estimates,
 * the tree's order, its health and dynamic selection. */
void rsp_on_commit_sample(arb_responder *r, struct rentry *e, arb_time sample, arb_time now)
{
    struct rsub *u = &r->sub[e->sub];
    rto_sample(r, sample, e->sent);
    u->ct = u->ct ? (7 * u->ct + sample) / 8 : sample;
    if (e->seq < u->rack_seq) {
        /* Committed after a credit sent later on its tree: the reordering
         * it took to arrive this late without being presumed lost. */
        arb_time ontime = e->sent + u->rack_rtt;
        if (now > ontime && now - ontime > r->reo_seen) r->reo_seen = now - ontime;
    } else {
        u->rack_seq = e->seq;
        u->rack_rtt = sample;
    }
    if (e->seq > r->rack_seq) {
        r->rack_seq = e->seq;
        r->rack_rtt = sample;
    }
    rsp_tree_outcome(u, 0);
    rsp_tree_commit(r, e->sub, now);
}

/* An attempt that had been given up committed after all: that loss was
 * spurious, and the detection that declared it grows more patient. The
 * aggregate is still a completion sample of its own attempt, when that
 * attempt is among the last ATT_KEEP, and its tree is alive. */
void rsp_on_late_commit(arb_responder *r, struct rentry *e, uint8_t attempt, arb_time now)
{
    int known = !e->early && (unsigned)(e->attempt - attempt) < ATT_KEEP;
    if (known) {
        arb_time sent = e->att_sent[attempt % ATT_KEEP];
        uint32_t s = e->att_sub[attempt % ATT_KEEP];
        arb_time sample = now - sent;
        struct rsub *u = &r->sub[s];
        rto_sample(r, sample, sent);
        u->ct = u->ct ? (7 * u->ct + sample) / 8 : sample;
        rsp_tree_commit(r, s, now);
    }
    /* REPAIR by misses, not given up, or a tail probe (sent before any
     * loss was presumed: its original completing says nothing) */
    if (e->why == WHY_NONE || e->why == WHY_MISS || e->why == WHY_PROBE) return;
    r->st.spurious++;
    r->clean = 0;
    if (e->why == WHY_ORDER && r->reo_mult < MULT_MAX) r->reo_mult++;
    if (e->why == WHY_TIMER && r->rto_mult < rto_mult_max(r)) r->rto_mult *= 2;
    r->st.reo_wnd = reo_wnd(r);
}

/* ------------------------------------------------------------------ */
/* Losses                                                               */
/* ------------------------------------------------------------------ */

/* Recovery by the bypass repair from now on. */
void rsp_enter_bypass(arb_responder *r, struct rentry *e)
{
    e->state = E_REPAIR;
    e->rslot = 0;
    r->in_repair++;
    r->waiting_repair++;
    r->st.bypass++;
}

/*
 * The attempt in flight at index i is given up: it leaves the window; the
 * offset waits for its next attempt, or for the bypass repair once it has
 * had `attempts` credits or `miss_limit` AGG_MISS.
 */
void rsp_give_up(arb_responder *r, uint32_t i, int why, arb_time now)
{
    struct rentry *e = rsp_entry(r, i);
    assert(e->state == E_ISSUED);
    r->outstanding--;
    r->sub[e->sub].out--;
    e->why = (uint8_t)why;
    if (why == WHY_ORDER) {
        r->st.losses_order++;
        rsp_tree_loss(r, e->sub, 0, now);
        if (r->cfg.cc) arb_cc_on_loss(r->cfg.cc, 0, now);
    } else if (why == WHY_PROBE) {
        r->st.tail_probes++;
        if (e->probes < UINT8_MAX) e->probes++;
    } else if (why == WHY_MISS) {
        if (r->cfg.cc) arb_cc_on_loss(r->cfg.cc, 0, now); /* a slot pool too small */
    } else if (why == WHY_TIMER) {
        r->st.losses_timer++;
        if (e->expiries < UINT8_MAX) e->expiries++;
        rsp_tree_loss(r, e->sub, 1, now);
        if (r->cfg.cc) arb_cc_on_loss(r->cfg.cc, 1, now);
    }
    if (e->misses >= r->cfg.ep.miss_limit || (uint32_t)e->attempt + 1 >= r->cfg.ep.attempts) {
        rsp_enter_bypass(r, e);
        return;
    }
    e->state = E_LOST;
    r->lost++;
}

/* When the attempt in flight at e is presumed lost by its timer: the tree
 * has been silent (no commit) for the timer since the credit left (a dead
 * tree: the floor, twice the fabric's loop); half as long again for each
 * earlier timer loss of the offset (a gentle backoff: a tail credit lost
 * twice is the common case at 0.1% loss, and congestion is the
 * controller's business). Fixed timeouts: the ceiling from the send. */
static arb_time timer_due(const arb_responder *r, const struct rentry *e, arb_time rto)
{
    if (!r->cfg.ep.adaptive_timeout) return e->sent + r->cfg.ep.timeout;
    const struct rsub *u = &r->sub[e->sub];
    if (u->health == T_DEAD) return e->sent + r->cfg.ep.timeout_min;
    arb_time from = r->cfg.ep.order_detection ? tmax(e->sent, u->progress) : e->sent;
    arb_time t = rto + rto / 2 * e->expiries, cap = rsp_backoff_cap(r);
    return from + (t < cap ? t : cap);
}

/* The tail probe's timeout (local repair, RACK-TLP's PTO): twice the
 * smoothed loop, at least the floor; for each earlier probe of the offset
 * doubled, in a message's tail once at most (probe_due), TAIL_PROBES of
 * them in all. A probe's credit is the offset's next attempt; when that is
 * lost too, the loss timer alone would find it, and in a message's tail
 * that timer still holds the loaded loop's maxima and multipliers (4-8 ms
 * against a 124 us srtt seen on kary:8,2 at 1% loss) while the fabric is
 * idle. With three probes, each twice as late as the last, a last offset
 * that lost four attempts running (about 1 in 100 on rail:2,8,4,4 at 1%,
 * where 31% of the credits are presumed lost: 0.31^4)
 * waited 1.7 ms for that timer: 16 MiB over two trees, seed 8, 25.8 Gb/s
 * against 56.0 with eight probes, each at most twice the first's wait. */
#define TAIL_PROBES 8u
#define TAIL_BACKOFF 1u
static arb_time probe_timeout(const arb_responder *r)
{
    arb_time t = 2 * r->srtt, floor = r->cfg.ep.timeout_min;
    /* A message in its first window (cold_message): twice the cold srtt,
     * at most twice the floor (in the simulator four unloaded loops), also
     * before its first sample. Its cold samples hold the switches' own
     * repairs, whose timers start at many floors (on kary:4,3 at 1% loss
     * the first commits took 300-900 us against a 16 us loop), and a probe
     * that waits longer than the switches' hold (1 ms) finds no slot to
     * take over: every member is asked again, at 1% loss on 63 members
     * rarely with success. */
    if (cold_message(r)) t = 2 * (r->cold_srtt ? tmin(r->cold_srtt, floor) : floor);
    return t < floor ? floor : t;
}

/* The newest ISSUED credit (the one a probe credits again), or
 * UINT32_MAX. */
static uint32_t tail_credit(const arb_responder *r)
{
    if (!r->cfg.ep.tail_probe || (!r->n_samples && !cold_message(r))) return UINT32_MAX;
    uint32_t best = UINT32_MAX;
    uint64_t seq = 0;
    for (uint32_t i = r->base; i < r->next; i++) {
        const struct rentry *e = rsp_entry_c(r, i);
        if (e->state == E_ISSUED && e->seq > seq) {
            seq = e->seq;
            best = i;
        }
    }
    return best;
}

/* When the newest credit still out is probed. In a message's tail (every
 * offset has had its first credit: no later credit will show the newest
 * lost by order), the probe timeout after it left, doubled once at most
 * for the probes before (TAIL_BACKOFF: as the tail goes on the fabric
 * drains, and its loop does not grow). Before the tail, a
 * window lost whole (every credit in flight lost at once: on kary:4,3 at
 * 1% loss a third of the offsets lose a packet above the switches that
 * re-credit by themselves) shows nothing by order either, and the loss
 * timer, which holds the loaded loop's maxima and multipliers (3 ms
 * against a 124 us srtt there), would stall the channel: the probe goes out
 * the larger of the probe timeout and twice the channel's latest loop
 * (RACK's: the loop of its newest credit that committed, on any of its
 * trees; srtt lags a loop that grows as the windows of every channel queue
 * up: 2 srtt alone probed credits that were only slow, and cost kary:4,3 a
 * sixth of its goodput at 16 MiB) after the credit left or its tree last
 * committed, whichever is later; a tree that commits is not stalled.
 * Doubled for each earlier probe of the offset. The channel's loop, not
 * the tree's own: a tree that gets few credits (a suspect one, under
 * dynamic selection) keeps the loop of its last commit for long, and that
 * commit may have been a slow one the switches repaired (580 us against a
 * 15-50 us loop on leafspine:4,8,8 at 1% loss, which held a channel's
 * window for 1.7 ms and then 2.3 ms). */
static arb_time probe_due(const arb_responder *r, const struct rentry *e)
{
    if (r->next >= r->msg[0].n)
        return e->sent +
               (probe_timeout(r) << (e->probes < TAIL_BACKOFF ? e->probes : TAIL_BACKOFF));
    const struct rsub *u = &r->sub[e->sub];
    arb_time t = tmax(probe_timeout(r), 2 * r->rack_rtt);
    return tmax(e->sent, u->progress) + (t << e->probes);
}

/*
 * Every ISSUED credit whose order or timer says it is lost is given up;
 * r->next_due is the earliest deadline of those left. With tail probes
 * (local repair), the newest credit still out is credited again a probe
 * timeout after it left (before the message's tail: a window lost whole,
 * probe_due), as RACK-TLP probes a tail: the switches answer the probe
 * from what they hold, so it costs what was lost.
 */
void rsp_detect_losses(arb_responder *r, arb_time now)
{
    arb_time reo = reo_wnd(r), rto = rsp_rto(r), due = ARB_TIME_NEVER;
    uint32_t tail = tail_credit(r);
    for (uint32_t i = r->base; i < r->next; i++) {
        struct rentry *e = rsp_entry(r, i);
        if (e->state != E_ISSUED) continue;
        if (i == tail && e->probes < TAIL_PROBES && r->sub[e->sub].health != T_DEAD) {
            arb_time d = probe_due(r, e);
            if (d <= now) {
                rsp_give_up(r, i, WHY_PROBE, now);
                continue;
            }
            due = tmin(due, d);
        }
        const struct rsub *u = &r->sub[e->sub];
        if (r->cfg.ep.order_detection && u->rack_seq > e->seq) {
            arb_time d = e->sent + u->rack_rtt + reo;
            if (d <= now) {
                rsp_give_up(r, i, WHY_ORDER, now);
                continue;
            }
            due = tmin(due, d);
        } else if (r->cfg.ep.order_detection && u->rack_seq == 0 && r->rack_seq > e->seq &&
                   r->n_samples) {
            /* A tree that never committed, while a credit sent after this
             * one committed on a sibling: give it twice the sibling's loop
             * (trees of one channel have the same hop count), then it
             * counts as silent. */
            arb_time d = e->sent + 2 * r->rack_rtt + reo;
            if (d <= now) {
                rsp_give_up(r, i, WHY_TIMER, now);
                continue;
            }
            due = tmin(due, d);
        }
        arb_time d = timer_due(r, e, rto);
        if (d <= now) {
            rsp_give_up(r, i, WHY_TIMER, now);
            continue;
        }
        due = tmin(due, d);
    }
    r->next_due = due;
    r->st.reo_wnd = reo;
}

/* ------------------------------------------------------------------ */
/* The bypass repair                                                    */
/* ------------------------------------------------------------------ */

/* A repair credit's timer: the timer in force, doubled per earlier try. */
static arb_time repair_rto(const arb_responder *r, const struct rrep *rp)
{
    arb_time t = rsp_rto(r);
    if (!r->cfg.ep.adaptive_timeout) return t;
    return rsp_doubled(t, rp->tries - 1, rsp_backoff_cap(r));
}

static void start_repair(arb_responder *r, uint32_t i, arb_time now)
{
    struct rentry *e = rsp_entry(r, i);
    uint32_t s;
    for (s = 0; s < r->cfg.repair_budget; s++)
        if (!r->rep[s].used) break;
    assert(s < r->cfg.repair_budget);
    struct rrep *rp = &r->rep[s];
    rp->used = 1;
    rp->index = i;
    rp->count = 0;
    memset(rp->bits, 0, sizeof rp->bits);
    rp->tries = 1;
    rp->deadline = now + repair_rto(r, rp);
    e->rslot = s + 1;
    r->waiting_repair--;
    r->reps_used++;
    if (r->reps_used > r->st.peak_repairs) r->st.peak_repairs = r->reps_used;
    rsp_send_repair_credit(r, i);
}

/* Offsets waiting for the bypass repair take repair slots, oldest first. */
void rsp_start_repairs(arb_responder *r, arb_time now)
{
    for (uint32_t i = r->base;
         r->waiting_repair && r->reps_used < r->cfg.repair_budget && i < r->next; i++) {
        struct rentry *e = rsp_entry(r, i);
        if (e->state == E_REPAIR && e->rslot == 0) start_repair(r, i, now);
    }
}

/* Repair credits whose timer passed are sent again; after repair_tries the
 * channel fails. */
void rsp_repair_expiries(arb_responder *r, arb_time now)
{
    for (uint32_t s = 0; r->reps_used && s < r->cfg.repair_budget; s++) {
        struct rrep *rp = &r->rep[s];
        if (!rp->used || rp->deadline > now) continue;
        if (rp->tries >= r->cfg.ep.repair_tries) {
            r->failure.waited = repair_rto(r, rp);
            rsp_fail(r, rp->index, 0, rp->bits);
            return;
        }
        rp->tries++;
        rp->deadline = now + repair_rto(r, rp);
        r->st.repair_repeats++;
        rsp_send_repair_credit(r, rp->index);
    }
}

/* A member's repair answer for index i (in REPAIR with a slot): counted
 * once per member, reduced into the slot; the last one commits. Returns 1
 * when it committed. */
int rsp_repair_answer(arb_responder *r, uint32_t i, const uint8_t *payload, size_t len, int from,
                      arb_time now)
{
    struct rentry *e = rsp_entry(r, i);
    struct rrep *rp = &r->rep[e->rslot - 1];
    if (bm_test(rp->bits, (uint32_t)from)) {
        r->st.dup_repairs++;
        return 0;
    }
    bm_set(rp->bits, (uint32_t)from);
    r->st.repair_requests++;
    if (ep_kind_pull(r->cfg.kind) && !r->cfg.ep.header_only && len) {
        if (rp->count == 0) {
            memcpy(rp->acc, payload, len);
        } else {
            int rc = arb_reduce_bytes(r->cfg.op, r->cfg.dtype, rp->acc, payload, len);
            assert(rc == 0);
            (void)rc;
        }
    }
    rp->count++;
    if (rp->count < r->cfg.members) return 0;
    rp->used = 0;
    r->reps_used--;
    r->in_repair--;
    e->rslot = 0;
    rsp_commit(r, i, r->cfg.ep.header_only ? NULL : rp->acc, rp->count, 1, 0, now);
    return 1;
}

/*
 * The END wait by order: every requester sends END as soon as it holds the
 * last result (and again when a replayed tail reaches it after its END), so
 * once some ENDs have come in after the last tail, or after the last replay
 * round, a member still silent a reordering window after the slowest of
 * them has most likely lost a tail (or its END). ARB_TIME_NEVER until such
 * an END has come (the timer alone then decides).
 */
arb_time rsp_end_due(const arb_responder *r)
{
    if (!r->cfg.ep.order_detection) return ARB_TIME_NEVER;
    arb_time from = r->end_rounds ? r->replay_at : r->last_tail;
    arb_time delay = r->end_rounds ? r->round_delay : r->end_delay;
    /* The first replay round, while it has brought no END: a loop (the
     * larger of srtt and the slowest END after the last tail) and a
     * reordering window after the replay, not the round's timer, four
     * times that: a replay lost as well goes again after about a loop.
     * Not the END delay alone: where the fabric is congested a replay's
     * END is as slow as the data's loop, and would be replayed again for
     * nothing. Later rounds: the timer, or the order of their ENDs. */
    if (r->end_rounds == 1 && !delay) delay = tmax(r->end_delay, r->srtt);
    if (!delay) return ARB_TIME_NEVER;
    if (r->end_rounds && r->min_rtt != ARB_TIME_NEVER) delay = tmax(delay, r->min_rtt);
    return from + delay + tmax(reo_wnd(r), delay / 4);
}

/* The END wait's deadline: its timer, or the order's due when that is
 * sooner (recomputed as ENDs come: a later END moves it on). */
void rsp_end_arm(arb_responder *r)
{
    r->end_deadline = tmin(r->end_timer, rsp_end_due(r));
}

/* A member's first END of the message came in: how long after the last
 * tail (or the last replay round) it came. */
void rsp_end_seen(arb_responder *r, arb_time now)
{
    if (!r->end_rounds) {
        if (r->last_tail && now > r->last_tail && now - r->last_tail > r->end_delay)
            r->end_delay = now - r->last_tail;
        return;
    }
    arb_time d = now > r->replay_at ? now - r->replay_at : 1;
    if (d > r->round_delay) r->round_delay = d;
}

/* How long an END-wait round waits: a tail and the END it brings take
 * about a loop, or as long as the slowest END took after the last tail;
 * twice that, at least the floor, doubled once for a replay and again per
 * round before it that brought no END (not the loss timer: its multipliers grow
 * with the data phase's spurious losses, which say nothing of an idle
 * fabric's END). */
arb_time rsp_end_wait(const arb_responder *r, unsigned rounds)
{
    if (!r->cfg.ep.adaptive_timeout) return r->cfg.ep.timeout;
    arb_time t = 2 * tmax(r->end_delay, r->srtt);
    /* A message that lived in its first window, before any END: its tails
     * queue behind every other channel's on the members' links as its
     * requests did on the way up (on star:32 at 1 MiB the ENDs came 83-156
     * us after the last tail, against a floor of 13 us: the floor replayed
     * every tail, round after round, and the replays held the links) */
    if (cold_message(r) && !r->nends) t = tmax(t, END_COLD_LOOPS * r->cold_max);
    if (t < r->cfg.ep.timeout_min) t = r->cfg.ep.timeout_min;
    return rsp_doubled(t, rounds, rsp_backoff_cap(r));
}

/* Every tail result again, to each member missing from the END bitmap:
 * down the tree once when several are missing (a tail lost above them:
 * one packet a tail, not one a member, on the responder's link, which
 * would otherwise carry members x tails), else to the one. After a round
 * that brought no END, to each member by itself, routed like any unicast
 * packet: the tree may be the one that failed (a repeat of a repair
 * credit goes the same way). */
static void replay_tails(arb_responder *r)
{
    uint32_t missing = r->cfg.members - r->nends;
    if (missing > 1 && missing >= r->cfg.members / 8 && r->live_subs > 0 && !r->end_silent) {
        for (uint32_t t = 0; t < r->ntails; t++) {
            rsp_send_tail(r, r->tails[t], 1, -1);
            r->st.tail_replays++;
        }
        return;
    }
    for (uint32_t j = 0; j < r->cfg.members; j++) {
        if (bm_test(r->ends, j)) continue;
        for (uint32_t t = 0; t < r->ntails; t++) {
            rsp_send_tail(r, r->tails[t], 1, (int)j);
            r->st.tail_replays++;
        }
    }
}

/* The END wait passed with ENDs missing: a lost tail shows up as a missing
 * END (docs/protocol.md), so every tail result is replayed to each member
 * missing from the END bitmap. A round that brought some END made
 * progress: the next waits as the first did; after repair_tries rounds in
 * a row that brought none, the channel fails. */
void rsp_end_expiry(arb_responder *r, arb_time now)
{
    if (r->end_rounds) r->end_silent = r->round_delay ? 0 : r->end_silent + 1;
    if (r->end_silent >= r->cfg.ep.repair_tries) {
        r->failure.waited = rsp_end_wait(r, r->end_silent - 1);
        rsp_fail(r, UINT32_MAX, 1, r->ends);
        return;
    }
    replay_tails(r);
    r->end_rounds++;
    r->replay_at = now;
    r->round_delay = 0;
    r->end_timer = now + rsp_end_wait(r, r->end_silent + 1);
    rsp_end_arm(r);
}

/* The earliest timer of the message in progress: loss deadlines (as of the
 * last detection pass) and repair credits. */
arb_time rsp_timers(const arb_responder *r)
{
    arb_time t = r->next_due;
    for (uint32_t s = 0; r->reps_used && s < r->cfg.repair_budget; s++)
        if (r->rep[s].used) t = tmin(t, r->rep[s].deadline);
    return t;
}

/* ------------------------------------------------------------------ */
/* Failure                                                              */
/* ------------------------------------------------------------------ */

/* The channel cannot finish: index i (UINT32_MAX with end_wait) is lost,
 * and the members whose bit is clear in `answered` never answered. */
void rsp_fail(arb_responder *r, uint32_t i, int end_wait, const uint64_t *answered)
{
    arb_responder_failure *f = &r->failure;
    const struct rmsg *m = &r->msg[0];
    arb_time waited = f->waited;
    memset(f, 0, sizeof *f);
    f->waited = waited;
    f->tries = r->cfg.ep.repair_tries;
    f->error = ARB_ETIMEDOUT;
    f->msg_id = m->id;
    f->start_seq = m->start;
    f->end_wait = end_wait;
    if (!end_wait) {
        const struct rentry *e = rsp_entry_c(r, i);
        f->index = i;
        f->offset = ep_seq(m->start, i);
        f->subchannel = e->sub;
        f->attempts = (uint32_t)e->attempt + 1;
    }
    for (uint32_t j = 0; j < r->cfg.members; j++) {
        if (bm_test(answered, j)) continue;
        f->missing[j >> 6] |= (uint64_t)1 << (j & 63);
        f->n_missing++;
    }
    r->error = ARB_ETIMEDOUT;
    if (end_wait)
        arb_log(&r->cfg.logger, ARB_LOG_ERROR,
                "responder %llu: message %u: %u ENDs missing after %u tail replays",
                (unsigned long long)r->cfg.channel, (unsigned)m->id, (unsigned)f->n_missing,
                (unsigned)r->end_rounds);
    else
        arb_log(&r->cfg.logger, ARB_LOG_ERROR,
                "responder %llu: offset %u lost on tree %u after %u credits and %u repair "
                "credits; %u members never answered",
                (unsigned long long)r->cfg.channel, (unsigned)f->offset, (unsigned)f->subchannel,
                (unsigned)f->attempts, (unsigned)r->cfg.ep.repair_tries, (unsigned)f->n_missing);
}
