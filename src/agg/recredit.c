/*
 * Local repair's re-credit (agg.h: arb_agg_arm, arb_agg_next_expiry,
 * arb_agg_expire): a switch whose children are hosts keeps the credit it
 * sent down each partial slot and asks the children still missing again,
 * by order (a port that answered a later credit lost this one) or by its
 * timer, which follows the switch's own completion times.
 * docs/aggregator.md, "Local repair".
 */
#include "arbor/agg.h"
#include "agg/agg_int.h"

#include <string.h>

/* ---- re-credit: the switch's own timer on its partial slots ------------- */

/* A completion sample (credit down to aggregate up) of a slot that was not
 * re-credited: srtt and rttvar as RFC 6298 computes them. */
void agg_loop_sample(arb_agg *a, arb_time sample)
{
    if (!a->minrtt || sample < a->minrtt) a->minrtt = sample;
    if (++a->clean >= 64 && a->mult > 1) {
        a->mult /= 2;
        a->clean = 0;
    }
    /* the recent largest, decaying by 1/64 of the gap per sample: the
     * loops have a long tail (a window's credits complete together) */
    a->maxrtt = sample >= a->maxrtt ? sample : a->maxrtt - (a->maxrtt - sample) / 64;
    if (!a->srtt) {
        a->srtt = sample;
        a->rttvar = sample / 2;
        return;
    }
    arb_time d = sample > a->srtt ? sample - a->srtt : a->srtt - sample;
    a->rttvar = (3 * a->rttvar + d) / 4;
    a->srtt = (7 * a->srtt + sample) / 8;
}

/* How long a slot waits for its children before it asks again: the larger
 * of srtt + 4 rttvar and the recent largest + rttvar of this switch's own
 * completions (before the first: four floors), times the patience (the
 * timer is the backstop of the tail: order finds a loss on a busy port in
 * about a loop, and a spurious re-credit costs a copy on a link that is
 * busy), within the floor and the ceiling, doubled per re-credit. */
static arb_time recredit_timeout(const arb_agg *a, unsigned tries)
{
    arb_time t = 4 * a->cfg.recredit_min;
    if (a->srtt) {
        t = a->srtt + 4 * a->rttvar;
        if (a->maxrtt + a->rttvar > t) t = a->maxrtt + a->rttvar;
    }
    t *= ARB_AGG_RECREDIT_PATIENCE;
    if (a->mult > 1) t *= a->mult;
    if (t < a->cfg.recredit_min) t = a->cfg.recredit_min;
    for (unsigned k = 0; k < tries && t < a->cfg.recredit_max; k++)
        t *= 2;
    return t < a->cfg.recredit_max ? t : a->cfg.recredit_max;
}

static void queue_timer(arb_agg *a, uint32_t id)
{
    slot *s = &a->slots[id];
    if (a->qlen == a->qcap) { /* full: the oldest timer is lost (the responder's remains) */
        a->qhead = a->qhead + 1 == a->qcap ? 0 : a->qhead + 1;
        a->qlen--;
        a->st.recredit_lost++;
    }
    uint32_t at = a->qhead + a->qlen;
    if (at >= a->qcap) at -= a->qcap;
    a->q[at] = (struct timer){.slot = id, .seq = s->arm_seq, .due = s->due};
    a->qlen++;
}

int arb_agg_arm(arb_agg *a, int32_t slot_id, const arb_hdr *credit, const void *payload, size_t len,
                int ce, const uint32_t *ports, uint32_t n_ports, uint32_t first_port, arb_time now)
{
    if (!a || !credit || slot_id < 0 || (uint32_t)slot_id >= a->nslots || (n_ports && !ports))
        return ARB_EINVAL;
    if (!a->expect) return 0; /* no local repair */
    uint32_t id = (uint32_t)slot_id;
    slot *s = &a->slots[id];
    if (s->state != SLOT_LIVE) return 0;
    uint64_t *ex = a->expect + (size_t)id * a->words;
    memset(ex, 0, a->words * sizeof *ex);
    for (uint32_t i = 0; i < n_ports; i++) {
        uint32_t p = ports[i] - first_port;
        if (p >= a->cfg.ports) return ARB_EINVAL;
        ex[p / 64] |= (uint64_t)1 << (p % 64);
    }
    size_t keep = len <= a->cfg.max_payload ? len : a->cfg.max_payload;
    if (a->cpay && payload && keep)
        memcpy(a->cpay + (size_t)id * a->cfg.max_payload, payload, keep);
    s->cred = *credit;
    s->cred_len = (uint32_t)len;
    s->cred_ce = ce != 0;
    s->t_credit = now;
    s->due = now + recredit_timeout(a, s->tries);
    s->arm_seq++;
    s->arm_no = ++a->arms;
    queue_timer(a, id);
    agg_drop_stale(a); /* its earlier timer, when at the front */
    return 0;
}

/* The missing ports of slot id that answered a later credit: lost by order
 * (into miss, words wide); nonzero when any. */
static int order_lost(const arb_agg *a, uint32_t id, uint64_t *miss)
{
    if (!a->cfg.recredit_order) return 0;
    const slot *s = &a->slots[id];
    const uint64_t *ex = a->expect + (size_t)id * a->words, *have = slot_bits(a, id);
    int any = 0;
    for (uint32_t w = 0; w < a->words; w++) {
        uint64_t m = ex[w] & ~have[w], lost = 0;
        for (uint64_t x = m; x; x &= x - 1) {
            uint32_t p = 64 * w + (uint32_t)__builtin_ctzll(x);
            if (a->port_last[p] > s->arm_no) lost |= (uint64_t)1 << (p % 64);
        }
        if (miss) miss[w] = lost;
        any |= lost != 0;
    }
    return any;
}

/* The time the latest credit of slot id went down (its arming or its last
 * re-credit). */
static arb_time last_credit(const slot *s)
{
    return s->tries && s->t_recredit > s->t_credit ? s->t_recredit : s->t_credit;
}

/* The timer of slot id at now: into miss, the missing ports that have been
 * silent for a timeout; *any nonzero when there are. A missing port that
 * answered another credit after the slot's went down, within a timeout of
 * now, is still working through the credits it was sent, in order (it
 * answered none armed after this one, or order would have found the loss):
 * it is left out, and the time it would have been silent a timeout is
 * returned (the earliest of them; ARB_TIME_NEVER when none was left out),
 * as a TCP sender restarts its timer when data is acknowledged. A host
 * link that queues a window of many channels answers for longer than the
 * switch's loops (first completions on an idle fabric take 3-6 us): its
 * timer re-credited most of a first window that was only queued. The wait
 * is bounded: the timer asks at most recredit_max after the latest credit
 * went down. */
static arb_time timer_silent(const arb_agg *a, uint32_t id, arb_time now, uint64_t *miss, int *any)
{
    const slot *s = &a->slots[id];
    const uint64_t *ex = a->expect + (size_t)id * a->words, *have = slot_bits(a, id);
    arb_time last = last_credit(s), t = recredit_timeout(a, s->tries), wake = ARB_TIME_NEVER;
    /* only where ports answer in order (recredit_order): otherwise an
     * answer to another credit says nothing of this one's */
    int waiting = a->cfg.recredit_order && since(now, last) < a->cfg.recredit_max;
    *any = 0;
    for (uint32_t w = 0; w < a->words; w++) {
        miss[w] = ex[w] & ~have[w];
        for (uint64_t x = miss[w]; waiting && x; x &= x - 1) {
            uint32_t p = 64 * w + (uint32_t)__builtin_ctzll(x);
            arb_time heard = a->port_heard[p];
            if (heard <= last || since(now, heard) >= t) continue; /* silent */
            miss[w] &= ~((uint64_t)1 << (p % 64));
            if (sat_add(heard, t) < wake) wake = sat_add(heard, t);
        }
        *any |= miss[w] != 0;
    }
    arb_time bound = sat_add(last, a->cfg.recredit_max);
    return wake != ARB_TIME_NEVER && wake > bound ? bound : wake;
}

/* A timer is stale once its slot completed or was armed again. */
static int stale(const arb_agg *a, const struct timer *tm)
{
    const slot *s = &a->slots[tm->slot];
    return s->state != SLOT_LIVE || s->arm_seq != tm->seq || s->due == ARB_TIME_NEVER;
}

arb_time arb_agg_next_expiry(const arb_agg *a)
{
    if (!a || !a->qlen) return ARB_TIME_NEVER;
    /* the front only (agg_drop_stale keeps it one that counts); a stale
     * one left there wakes the driver at once, and arb_agg_expire clears
     * it: at its own due it would hold every timer behind it, and every
     * loss order found there, until then */
    const struct timer *tm = &a->q[a->qhead];
    return stale(a, tm) || order_lost(a, tm->slot, NULL) ? 0 : tm->due;
}

/* Pop the front entry. */
static struct timer pop_timer(arb_agg *a)
{
    struct timer tm = a->q[a->qhead];
    a->qhead = a->qhead + 1 == a->qcap ? 0 : a->qhead + 1;
    a->qlen--;
    return tm;
}

void agg_drop_stale(arb_agg *a)
{
    while (a->qlen && stale(a, &a->q[a->qhead]))
        pop_timer(a);
}

int arb_agg_expire(arb_agg *a, arb_time now, arb_agg_recredit *out)
{
    if (!a || !out) return ARB_EINVAL;
    while (a->qlen) {
        const struct timer *f = &a->q[a->qhead];
        slot *s = &a->slots[f->slot];
        if (stale(a, f)) {
            pop_timer(a);
            continue;
        }
        uint64_t *miss = out->missing;
        int by_order = order_lost(a, f->slot, miss);
        if (!by_order && f->due > now) return 0;
        struct timer tm = pop_timer(a);
        if (s->tries >= a->cfg.recredit_tries) { /* the responder's to repair now */
            s->due = ARB_TIME_NEVER;
            continue;
        }
        int any = by_order;
        if (!by_order) { /* the timer: every port still missing and silent */
            arb_time wake = timer_silent(a, tm.slot, now, miss, &any);
            if (!any && wake != ARB_TIME_NEVER) {
                s->due = wake; /* all of them still answering: wait */
                queue_timer(a, tm.slot);
                a->st.recredit_waits++;
                continue;
            }
        }
        if (!any) {
            s->due = ARB_TIME_NEVER;
            continue;
        }
        s->tries++;
        s->resent = 1;
        s->t_recredit = now;
        s->judged = 0;
        s->due = now + recredit_timeout(a, s->tries);
        s->arm_seq++;
        s->arm_no = ++a->arms; /* it goes down again: after every credit so far */
        queue_timer(a, tm.slot);
        a->st.recredits++;
        if (by_order) a->st.recredits_order++;
        out->slot = (int32_t)tm.slot;
        out->channel = s->channel;
        out->hdr = s->cred;
        out->payload =
            a->cpay && s->cred_len ? a->cpay + (size_t)tm.slot * a->cfg.max_payload : NULL;
        out->payload_len = s->cred_len;
        out->ce = s->cred_ce;
        out->words = a->words;
        return 1;
    }
    return 0;
}

int arb_agg_on_expiry(arb_agg *a, arb_time now)
{
    (void)now;
    return a ? 0 : ARB_EINVAL;
}

/* A partial slot that this switch asks again itself (armed, its re-credits
 * not spent), whose credit, or last re-credit, went down less than srtt +
 * 4 rttvar ago, each of whose missing children's latest answer came marked
 * CE: the copy is queued on its way to them, or their answers on the way
 * back, and a later attempt's credit sent after it would only queue
 * behind, on the path that is already the slowest. On a congested host
 * link (the slowest child, which every slot waits for) every attempt of
 * every offset did, and the link never drained: on kary:8,2 at 1% loss two
 * leaves' host links carried 1.4 times their share, full, and the fabric
 * ran at 70% of its links in half the seeds. If the copy was lost, the
 * switch's order or timer, or the responder's next attempt once the copy
 * is old, asks again. Where the path is not queued (a tail crossing an
 * idle fabric) the attempt goes down as before: holding it there only
 * waited for slower timers. */
int agg_answering(const arb_agg *a, uint32_t id, arb_time now)
{
    const slot *s = &a->slots[id];
    if (!a->expect || !a->srtt || s->due == ARB_TIME_NEVER || s->tries >= a->cfg.recredit_tries)
        return 0;
    arb_time last = last_credit(s);
    if (since(now, last) >= a->srtt + 4 * a->rttvar) return 0;
    const uint64_t *ex = a->expect + (size_t)id * a->words, *have = slot_bits(a, id);
    int any = 0;
    for (uint32_t w = 0; w < a->words; w++)
        for (uint64_t x = ex[w] & ~have[w]; x; x &= x - 1) {
            if (!a->port_ce[64 * w + (uint32_t)__builtin_ctzll(x)]) return 0;
            any = 1;
        }
    return any;
}
