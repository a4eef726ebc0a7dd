/*
 * Recovery from fault events (fabric.fail_at, restore_at, reboot_at): for
 * each event, when the fabric's hosts first reacted to it, how many bytes
 * they sent again after it, and the goodput before, during and after the
 * disturbance (docs/scenarios.md, "Faults and recovery", defines each).
 *
 * The goodput counter is read at every event and at the end of every slice
 * of the run (run.sample, or 10 us): an Arbor collective's committed
 * payload bytes, or for transport workloads the payload bytes delivered.
 * Readings only: nothing here changes the run.
 */
#include "scn_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/json_out.h"

#define RECOVER_SHARE 0.9 /* recovered: a slice back at this share of the rate before */

struct reading {
    arb_time t;
    uint64_t good, resent;
};

struct fevent {
    uint8_t kind, applied, pending;
    arb_time t, down;
    char *items;
    int slots_lost;
    uint64_t good0, resent0, resent_end;
    arb_time detect; /* first retry or repair credit at or after t (ARB_TIME_NEVER: none) */
};

struct scn_recovery {
    int arbor, oom;
    arb_time window;
    struct reading *rd;
    size_t n_rd, cap_rd;
    struct fevent *ev;
    unsigned n_ev;
    int last; /* the event applied last, or -1 */
    arb_time start, end;
};

int scn_recovery_new(struct scn_recovery **out, const struct scn_failat *fa, arb_time window,
                     int arbor)
{
    struct scn_recovery *rc = arb_calloc(1, sizeof *rc);
    *out = NULL;
    if (!rc) return ARB_ENOMEM;
    rc->arbor = arbor;
    rc->window = window;
    rc->last = -1;
    rc->n_ev = fa->n_events;
    rc->ev = arb_calloc(rc->n_ev ? rc->n_ev : 1, sizeof *rc->ev);
    if (!rc->ev) {
        arb_free(rc);
        return ARB_ENOMEM;
    }
    for (unsigned i = 0; i < fa->n; i++) {
        const struct scn_failure *f = &fa->e[i];
        if (f->kind == SCN_EV_REBOOT_UP) continue;
        struct fevent *e = &rc->ev[f->event];
        e->kind = f->kind;
        e->t = f->t;
        e->down = f->down;
        e->detect = ARB_TIME_NEVER;
        size_t n = strlen(f->items) + 1;
        if (!(e->items = arb_malloc(n))) {
            scn_recovery_free(rc);
            return ARB_ENOMEM;
        }
        memcpy(e->items, f->items, n);
    }
    *out = rc;
    return 0;
}

void scn_recovery_free(struct scn_recovery *rc)
{
    if (!rc) return;
    for (unsigned i = 0; i < rc->n_ev; i++)
        arb_free(rc->ev[i].items);
    arb_free(rc->ev);
    arb_free(rc->rd);
    arb_free(rc);
}

int scn_recovery_failed(const struct scn_recovery *rc)
{
    return rc && rc->oom;
}

void scn_recovery_read(struct scn_recovery *rc, arb_sim *s, arb_time now)
{
    struct reading r = {now, 0, 0};
    if (rc->arbor) {
        arb_sim_arbor_counters c;
        if (arb_sim_arbor_counters_get(s, &c) < 0) return;
        r.good = c.committed_bytes;
        r.resent = c.resent_bytes;
        if (c.resend_at != ARB_TIME_NEVER) /* the watch saw the hosts react */
            for (unsigned i = 0; i < rc->n_ev; i++)
                if (rc->ev[i].pending) {
                    rc->ev[i].detect = c.resend_at;
                    rc->ev[i].pending = 0;
                }
    } else {
        arb_sim_stats st;
        arb_sim_get_stats(s, &st);
        r.good = st.payload_delivered;
        r.resent = st.retx_bytes;
    }
    if (rc->n_rd && rc->rd[rc->n_rd - 1].t >= now) { /* the same instant: the later figures */
        rc->rd[rc->n_rd - 1] = r;
        return;
    }
    if (rc->n_rd == rc->cap_rd) {
        size_t ncap = rc->cap_rd ? rc->cap_rd * 2 : 256;
        struct reading *nr = arb_realloc(rc->rd, ncap * sizeof *nr);
        if (!nr) {
            rc->oom = 1;
            return;
        }
        rc->rd = nr;
        rc->cap_rd = ncap;
    }
    rc->rd[rc->n_rd++] = r;
}

void scn_recovery_event(struct scn_recovery *rc, const struct scn_failure *f, arb_sim *s,
                        int slots_lost)
{
    scn_recovery_read(rc, s, f->t); /* (the simulator may have been idle since its last event) */
    if (rc->oom || !rc->n_rd || f->event >= rc->n_ev) return;
    const struct reading *r = &rc->rd[rc->n_rd - 1];
    struct fevent *e = &rc->ev[f->event];
    if (rc->last >= 0) rc->ev[rc->last].resent_end = r->resent;
    rc->last = (int)f->event;
    e->applied = 1;
    e->slots_lost = slots_lost;
    e->good0 = r->good;
    e->resent0 = r->resent;
    e->resent_end = r->resent;
    /* from te: what the hosts sent before it is no answer */
    if (rc->arbor && arb_sim_arbor_watch(s, f->t) == 0) e->pending = 1;
}

void scn_recovery_finish(struct scn_recovery *rc, arb_sim *s, arb_time start, arb_time finish)
{
    scn_recovery_read(rc, s, arb_sim_now(s));
    if (rc->last >= 0 && rc->n_rd) rc->ev[rc->last].resent_end = rc->rd[rc->n_rd - 1].resent;
    rc->start = start;
    rc->end = finish != ARB_TIME_NEVER ? finish : rc->n_rd ? rc->rd[rc->n_rd - 1].t : 0;
}

/* ---- the figures ------------------------------------------------------- */

/* The goodput counter at time t: the latest reading at or before t (0 before
 * the first); *at: that reading's time (t itself before the first). */
static uint64_t good_at(const struct scn_recovery *rc, arb_time t, arb_time *at)
{
    size_t lo = 0, hi = rc->n_rd; /* first reading after t */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (rc->rd[mid].t <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) {
        *at = t;
        return 0;
    }
    *at = rc->rd[lo - 1].t;
    return rc->rd[lo - 1].good;
}

/* Gb/s from a to b (b > a), over the readings at or before each (the
 * counter is 0 before the start, the total by the end); -1 when empty. */
static double rate(const struct scn_recovery *rc, arb_time a, arb_time b)
{
    arb_time ta, tb;
    uint64_t ga = good_at(rc, a, &ta), gb = good_at(rc, b, &tb);
    if (ta < rc->start) ta = rc->start; /* nothing is counted before it */
    if (b >= rc->end) {                 /* the last byte is in by the end */
        gb = good_at(rc, ARB_TIME_NEVER, &tb);
        tb = rc->end;
    }
    if (tb <= ta) return -1;
    return (double)(gb - ga) * 8.0 / ((double)(tb - ta) / ARB_PS_PER_S) / 1e9;
}

struct figures {
    double before, during, after; /* -1: none */
    arb_time recover;             /* ARB_TIME_NEVER: not recovered by the end */
    int known;                    /* the event fell within the collective, which moved before it */
};

/* The window [t, t + w) cut at the end. */
static double ahead(const struct scn_recovery *rc, arb_time t)
{
    return rate(rc, t, rc->end - t > rc->window ? t + rc->window : rc->end);
}

/*
 * before: the goodput over the window up to the event; recovered at the
 * first slice boundary from the event on (the event, then every reading)
 * whose window ahead carries at least RECOVER_SHARE of it; during: the
 * goodput from the event to there (none when that is the event itself);
 * after: the window ahead of there.
 */
static void event_figures(const struct scn_recovery *rc, const struct fevent *e, struct figures *fg)
{
    memset(fg, 0, sizeof *fg);
    fg->before = fg->during = fg->after = -1;
    fg->recover = ARB_TIME_NEVER;
    arb_time te = e->t, w = rc->window;
    if (!e->applied || te <= rc->start || te >= rc->end) return; /* outside the collective */
    fg->before = rate(rc, te - rc->start > w ? te - w : rc->start, te);
    if (fg->before <= 0) return;
    fg->known = 1;
    double thr = RECOVER_SHARE * fg->before;
    arb_time rec = ARB_TIME_NEVER;
    if (ahead(rc, te) >= thr) {
        rec = te;
    } else {
        for (size_t i = 0; i < rc->n_rd && rc->rd[i].t < rc->end; i++)
            if (rc->rd[i].t > te && ahead(rc, rc->rd[i].t) >= thr) {
                rec = rc->rd[i].t;
                break;
            }
    }
    fg->recover = rec;
    if (rec != te) fg->during = rate(rc, te, rec == ARB_TIME_NEVER ? rc->end : rec);
    if (rec != ARB_TIME_NEVER) fg->after = ahead(rc, rec);
}

/* The recovery figures are plain JSON numbers (json_out.h's arb_json_num),
 * unlike the run's fixed decimals: times in microseconds, rates in Gb/s
 * rounded to six decimals; null when there is none. */
static void j_us(cJSON *o, const char *name, arb_time t)
{
    arb_json_num(o, name, t == ARB_TIME_NEVER ? NAN : (double)t / ARB_PS_PER_US);
}

static void j_gbps(cJSON *o, const char *name, double g)
{
    arb_json_num(o, name, g < 0 ? NAN : (double)(int64_t)(g * 1e6 + 0.5) / 1e6);
}

void scn_recovery_json(const struct scn_recovery *rc, cJSON *j)
{
    static const char *const kinds[] = {"fail", "restore", "reboot"};
    cJSON *f = cJSON_AddObjectToObject(j, "faults");
    j_us(f, "window_us", rc->window);
    cJSON_AddNumberToObject(f, "recover_share", RECOVER_SHARE);
    cJSON_AddStringToObject(f, "goodput_of", rc->arbor ? "committed" : "delivered");
    cJSON *arr = cJSON_AddArrayToObject(f, "events");
    for (unsigned i = 0; i < rc->n_ev; i++) {
        const struct fevent *e = &rc->ev[i];
        struct figures fg;
        event_figures(rc, e, &fg);
        cJSON *o = cJSON_CreateObject();
        if (!o) return;
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "kind", kinds[e->kind]);
        cJSON_AddStringToObject(o, "items", e->items);
        j_us(o, "at_us", e->t);
        if (e->kind == SCN_EV_REBOOT) {
            j_us(o, "down_us", e->down);
            cJSON_AddNumberToObject(o, "slots_lost", e->slots_lost);
        }
        cJSON_AddBoolToObject(o, "applied", e->applied);
        j_us(o, "detect_us",
             e->detect == ARB_TIME_NEVER || !e->applied ? ARB_TIME_NEVER : e->detect - e->t);
        cJSON_AddNumberToObject(o, "bytes_repaired",
                                (double)(e->applied ? e->resent_end - e->resent0 : 0));
        j_gbps(o, "goodput_before_gbps", fg.before);
        j_gbps(o, "goodput_during_gbps", fg.during);
        j_gbps(o, "goodput_after_gbps", fg.after);
        j_us(o, "recover_us", fg.recover == ARB_TIME_NEVER ? fg.recover : fg.recover - e->t);
        if (fg.known)
            cJSON_AddBoolToObject(o, "recovered", fg.recover != ARB_TIME_NEVER);
        else
            cJSON_AddNullToObject(o, "recovered");
    }
}
