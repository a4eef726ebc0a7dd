/*
 * The responder's trees (docs/protocol.md section 9; docs/endpoint.md):
 * each subchannel's health and the choice of a credit's tree.
 *
 *   health     suspect after a loss, dead after `dead_after` timer losses
 *              with no commit in between (more where the other trees
 *              lose credits too), probed while dead, revived by any
 *              commit; silent (a later attempt may leave it) after two,
 *              or more where the other trees lose credits too;
 *   choice     static (offset mod subchannels) or dynamic (the least
 *              completion estimate); a later attempt stays on its
 *              earlier attempt's tree while it may.
 */
#include "arbor/endpoint.h"
#include "endpoint/rsp_int.h"

void rsp_reset_trees(arb_responder *r)
{
    for (uint32_t s = 0; r->sub && s < r->cfg.subchannels; s++)
        r->sub[s].out = 0;
}

/* A commit on tree s: it is alive. */
void rsp_tree_commit(arb_responder *r, uint32_t s, arb_time now)
{
    struct rsub *u = &r->sub[s];
    u->progress = now;
    u->silences = 0;
    u->rounds = 0;
    if (u->health == T_DEAD) {
        r->live_subs++;
        r->st.revivals++;
        arb_log(&r->cfg.logger, ARB_LOG_INFO, "responder %llu: tree %u revived",
                (unsigned long long)r->cfg.channel, (unsigned)s);
    }
    u->health = T_LIVE;
    u->probe_gap = 0;
}

/* A credit on tree s was resolved: committed in time, or presumed lost.
 * The counts are of its recent credits (halved past OUTCOMES). */
#define OUTCOMES 256u
void rsp_tree_outcome(struct rsub *u, int lost)
{
    if (u->done >= OUTCOMES) {
        u->done /= 2;
        u->lost /= 2;
    }
    u->done++;
    u->lost += lost != 0;
}

/* The odds that random loss at tree t's recent rate gives a run of n
 * timer losses are a product of n factors (run_odds); this is the i-th,
 * from 0. The rate is not known, only t's credits. `averaged`: the
 * run's probability averaged over the rates those credits allow, a
 * uniform prior updated by lost of done, E[p^n] under Beta(lost + 1,
 * done - lost + 1), the factors (a + i) / (ab + i). With many credits this is about
 * the share (lost + 1) / (done + 2) to the power n; with few it is far
 * larger, as it should be for a verdict: a sibling that had lost none of
 * 4 credits (besides a run of its own) allows a run of 8 once in 1,300,
 * where the share 1/6 to the 8th said once in 1.7 million and killed a
 * healthy tree (kary:8,2, two trees, dynamic, 16 MiB at 1%, seed 5). A
 * sibling with no loss in 100 credits allows 4 silences where the share
 * allowed 3. Else the share to the power n (the silent rule, below). The
 * run t is in now is not counted: t may be failing itself. */
static double run_factor(const struct rsub *v, uint32_t i, int averaged)
{
    uint32_t run = v->silences < v->lost ? v->silences : v->lost;
    double a = v->lost - run + 1.0, ab = v->done - run + 2.0;
    return averaged ? (a + i) / (ab + i) : a / ab;
}

/* The odds of a run of n: the factors of its losses 0..n-1. */
static double run_odds(const struct rsub *v, uint32_t n, int averaged)
{
    double odds = 1;
    for (uint32_t i = 0; i < n; i++)
        odds *= run_factor(v, i, averaged);
    return odds;
}

/* Timer losses with no commit between that make tree s dead: dead_after,
 * or more where the other trees lose credits too, so many that random loss
 * at their rate would give such a run less than once in 1/DEATH_ODDS
 * runs. A failed tree loses every credit, a lossy one a fraction. The odds
 * are per run of credits, and a channel's tree has hundreds of runs to
 * start in a message, a fabric thousands of channel-trees: at 1/16384 a
 * 16 MiB AllReduce at 1% loss on kary:4,3 (where 40% of the credits the
 * responder sees are lost) killed a healthy tree in 2 runs of 8 with 11
 * silences. */
#define DEATH_ODDS 1e-6
#define SILENCES_MAX 64u
#define DEATH_ROUNDS 2u
/* The least run of at least n timer losses on tree s that random loss at
 * any live sibling's rate (run_odds) gives at most `odds` of the time; n
 * where there is no live sibling. */
static uint32_t run_needed(const arb_responder *r, uint32_t s, uint32_t n, double odds,
                           int averaged)
{
    uint32_t need = n;
    for (uint32_t t = 0; t < r->cfg.subchannels; t++) {
        const struct rsub *v = &r->sub[t];
        if (t == s || v->health == T_DEAD) continue;
        double o = run_odds(v, need, averaged);
        for (; need < SILENCES_MAX && o > odds; need++)
            o *= run_factor(v, need, averaged); /* the run one longer */
    }
    return need;
}

static uint32_t silences_needed(const arb_responder *r, uint32_t s)
{
    return run_needed(r, s, r->cfg.ep.dead_after, DEATH_ODDS, 1);
}

/* A credit on tree s was lost: suspect after any loss; dead after
 * silences_needed timer losses with no commit in between. The last live
 * tree may die too: its channel then runs through the bypass repair,
 * probing the trees, until one answers (rsp_no_tree). */
void rsp_tree_loss(arb_responder *r, uint32_t s, int by_timer, arb_time now)
{
    struct rsub *u = &r->sub[s];
    rsp_tree_outcome(u, 1);
    if (u->health == T_DEAD) return;
    u->health = T_SUSPECT;
    if (!by_timer) return;
    if (u->silences < UINT8_MAX) u->silences++;
    /* Rounds: timer losses at least a timer apart. A window lost at once
     * (a burst of loss, or congestion) is one round; a dead tree loses
     * every retry too, round after round. */
    if (!u->rounds || now - u->round_at >= rsp_rto(r)) {
        if (u->rounds < UINT8_MAX) u->rounds++;
        u->round_at = now;
    }
    if (u->silences < silences_needed(r, s)) return;
    /* Timer losses of one round share their cause (a window that queued
     * or lost together: 4 silences in one round killed a tree whose
     * sibling lost 1 in 13, on kary:4,3 at 1% loss): a tree dies only when
     * it stays silent a timer later too. The last live tree dies only after
     * 2 dead_after rounds: its channel then goes to the bypass, which
     * random loss must not cause. */
    if (u->rounds < (r->live_subs == 1 ? 2 * r->cfg.ep.dead_after : DEATH_ROUNDS)) return;
    u->health = T_DEAD;
    r->live_subs--;
    r->st.deaths++;
    u->probe_gap = rsp_rto(r);
    u->probe_at = now + u->probe_gap;
    arb_log(&r->cfg.logger, ARB_LOG_INFO, "responder %llu: tree %u dead after %u silences",
            (unsigned long long)r->cfg.channel, (unsigned)s, (unsigned)u->silences);
}

/* A later attempt stays on its earlier attempt's tree while that tree
 * has had fewer timer losses than this with no commit between, or more
 * where the siblings lose credits too (QUIET_ODDS, as silences_needed
 * with a looser bar): after that it may be failing, and the attempt goes
 * where selection says. With two silences alone, random loss on fabrics
 * whose credits cross many links moved retries off healthy trees, whose
 * switches held the offsets' partial slots, to a tree that gathered them
 * anew from every member (two trees a channel, 16 MiB at 1%, static,
 * seeds 1..6: rail:2,8,4,4 50.7 Gb/s against 58.2 with the odds;
 * kary:4,3 45.6 against 50.1). Where the siblings lose nothing (a failure
 * on a clean fabric) two silences still suffice once a sibling has
 * resolved 98 credits. The odds are the share's (run_odds), not averaged
 * over the rates few credits allow: this rule only steers later attempts,
 * and a tail probe, which is no silence, stayed on a failed tree under
 * the averaged odds until its attempts were spent (leafspine:4,8,8, two
 * trees, dynamic, link L1.0-L2.0 failed at 300 us, 8 MiB: 3 offsets to the
 * bypass, which the failed link's routing could not serve). */
#define RETRY_SILENCES 2u
#define QUIET_ODDS 1e-4

/* Tree u has had dead_after timer losses with no commit between, over
 * FAILING_ROUNDS rounds (timer losses a timer apart): what makes a tree
 * dead on a clean fabric, and a round more. Where the siblings lose
 * credits too the verdict waits for more (silences_needed), and the tree
 * is failing meanwhile. With two rounds (after 2, 3 or 4 silences) the
 * rule changed random-loss runs (on leafspine:4,8,8 at 1%, 16 MiB, seeds
 * 1..6, the lowest seed fell from 65.1 to 58.0, 58.0 and 56.6 Gb/s); with
 * three rounds of dead_after it changed nothing there and the means on
 * kary:4,3, rail:2,8,4,4 and kary:8,2 by less than 1 Gb/s. */
#define FAILING_ROUNDS 3u
static int tree_failing(const arb_responder *r, const struct rsub *u)
{
    return u->silences >= r->cfg.ep.dead_after && u->rounds >= FAILING_ROUNDS;
}

/* The live tree with the least completion estimate, ties from `home` on,
 * other than `skip` (UINT32_MAX: none); with `quiet`, of those not failing
 * (tree_failing); UINT32_MAX if none.
 * A tree without a sample yet is taken to be as fast as the fastest one
 * with a sample: it is explored, never preferred for being unknown. */
static uint32_t best_of(const arb_responder *r, uint32_t home, int quiet, uint32_t skip)
{
    uint32_t n = r->cfg.subchannels, best = home;
    arb_time known = 0;
    for (uint32_t s = 0; s < n; s++)
        if (r->sub[s].health != T_DEAD && r->sub[s].ct && (!known || r->sub[s].ct < known))
            known = r->sub[s].ct;
    double best_est = -1;
    for (uint32_t x = 0; x < n; x++) {
        uint32_t s = (home + x) % n;
        const struct rsub *u = &r->sub[s];
        if (s == skip || u->health == T_DEAD || (quiet && tree_failing(r, u))) continue;
        arb_time ct = u->ct ? u->ct : known;
        double est = (double)ct * (u->out + 1) * (u->health == T_SUSPECT ? 2 : 1);
        if (best_est < 0 || est < best_est) {
            best = s;
            best_est = est;
        }
    }
    return best_est < 0 ? UINT32_MAX : best;
}

static uint32_t best_live(const arb_responder *r, uint32_t home)
{
    uint32_t s = best_of(r, home, 0, UINT32_MAX);
    return s == UINT32_MAX ? home : s;
}

/* Tree s if it is not dead; else a live one (dynamic: the best; static:
 * the next after s). */
uint32_t rsp_live_sub(const arb_responder *r, uint32_t s, uint32_t k)
{
    if (r->sub[s].health != T_DEAD) return s;
    uint32_t n = r->cfg.subchannels;
    if (r->cfg.ep.dynamic_subchannels) return best_live(r, k % n);
    for (uint32_t x = 1; x < n; x++)
        if (r->sub[(s + x) % n].health != T_DEAD) return (s + x) % n;
    return s;
}

/* Tree s lives and has not gone silent long enough to be failing
 * (RETRY_SILENCES, QUIET_ODDS). The siblings' odds hold only for a tree
 * that has committed a credit: one that never has (a failure from the
 * start, or a channel whose first window was lost on it) may have lost
 * its way, and a retry that stayed there waited for the initial timer
 * again (leafspine:4,8,8, two trees, dynamic, 16 MiB at 1%, values, local order,
 * seed 4: 49.0 Gb/s; 64.4 with the rule). */
static int tree_quiet_ok(const arb_responder *r, uint32_t s)
{
    const struct rsub *u = &r->sub[s];
    if (u->health == T_DEAD) return 0;
    return u->silences < RETRY_SILENCES ||
           (u->ct && u->silences < run_needed(r, s, RETRY_SILENCES, QUIET_ODDS, 0));
}

/* A later attempt of an offset whose attempts were lost by timer
 * `expiries` times stays on tree s: s is quiet (tree_quiet_ok), and the
 * offset has lost fewer than OFFSET_SILENCES attempts by timer or s has
 * gone silent fewer than RETRY_SILENCES times running. The siblings' odds
 * keep retries on a tree that random loss silences; the offset's own
 * silences take them off a failed one before its attempts are spent (a
 * spine dead and 1% loss on leafspine:4,8,8, dynamic, seed 1: with the
 * odds alone an offset went to the bypass). */
#define OFFSET_SILENCES 2u
static int retry_stays(const arb_responder *r, uint32_t s, uint8_t expiries)
{
    return tree_quiet_ok(r, s) &&
           (expiries < OFFSET_SILENCES || r->sub[s].silences < RETRY_SILENCES);
}

/* Tree s if it is live and has not gone silent (tree_quiet_ok), else the
 * next such tree, else a live one (rsp_live_sub): the tree of a static
 * later attempt, and of a tail. */
uint32_t rsp_quiet_sub(const arb_responder *r, uint32_t s, uint32_t k)
{
    uint32_t n = r->cfg.subchannels;
    for (uint32_t x = 0; x < n; x++)
        if (tree_quiet_ok(r, (s + x) % n)) return (s + x) % n;
    return rsp_live_sub(r, s, k);
}

/* A dead tree due for a probe, or UINT32_MAX. */
uint32_t rsp_probe_due(arb_responder *r, uint32_t home, arb_time now)
{
    uint32_t n = r->cfg.subchannels;
    for (uint32_t x = 0; r->live_subs < n && x < n; x++) {
        uint32_t s = (home + x) % n;
        struct rsub *u = &r->sub[s];
        if (u->health != T_DEAD || now < u->probe_at) continue;
        u->probe_gap = rsp_doubled(u->probe_gap ? u->probe_gap : rsp_rto(r), 1, rsp_backoff_cap(r));
        u->probe_at = now + u->probe_gap;
        r->st.probes++;
        return s;
    }
    return UINT32_MAX;
}

/* The tree of a normal credit for offset k; prev is the tree of its
 * attempt before (a later attempt). A later attempt goes down its earlier
 * attempt's tree while the offset stays there (retry_stays): the
 * switches there hold what the earlier one gathered
 * (a partial slot to take over, a complete one to send again), which
 * another tree's switches would gather anew from every member. Static:
 * the offset's own tree while it lives (a later attempt: while the
 * offset stays there, else the next live tree that has not gone silent); a
 * dead one's first credits go to a dead tree due for a probe, else to the
 * next live tree. Dynamic: a dead tree due for a probe (first credits
 * only), else the best live tree; for a later attempt the best live tree
 * that is not failing (tree_failing), other than the one it leaves, if
 * any. A failing tree, not yet
 * dead, looks best to the estimate (its credits given up, none out): on
 * leafspine:4,8,8 with a spine dead and 1% loss, where a verdict waits for
 * 11 silences, an offset's retries went down its dead tree until the
 * offset had spent its attempts and went to the bypass (seed 1: 43.0
 * Gb/s against 74.7 with the shorter verdict; 78.3 with this rule, 70.6
 * with retry_stays; 45.9 in the local order, nothing bypassed). */
uint32_t rsp_pick_sub(arb_responder *r, uint32_t k, int first_attempt, uint32_t prev,
                      uint8_t expiries, arb_time now)
{
    uint32_t n = r->cfg.subchannels, home = k % n;
    if (r->live_subs == 0) return r->probe_sub; /* every tree dead: a probe */
    if (n == 1) return 0;
    if (!first_attempt && prev < n && retry_stays(r, prev, expiries)) return prev;
    if (!r->cfg.ep.dynamic_subchannels &&
        (first_attempt ? r->sub[home].health != T_DEAD : retry_stays(r, home, expiries)))
        return home;
    if (first_attempt) {
        uint32_t p = rsp_probe_due(r, home, now);
        if (p != UINT32_MAX) return p;
    }
    if (!r->cfg.ep.dynamic_subchannels) return rsp_quiet_sub(r, (home + 1) % n, k);
    if (!first_attempt) {
        uint32_t s = best_of(r, home, 1, prev);
        if (s != UINT32_MAX) return s;
    }
    return best_live(r, home);
}
