/*
 * host/host.h - the rank driver: the engines that ranks run for one
 * collective, and the collective's done conditions. The simulator (every
 * rank of a job, src/sim/arbor_host.c) and the runtime (its own rank,
 * src/rt/) both drive ranks through it; neither reimplements what a rank
 * does with its engines.
 *
 * A host collective (arb_host) is one collective of a plan, for the ranks
 * the driver runs (cfg.local; the simulator runs them all, the runtime
 * one). For each such rank it makes the responder of every channel the rank
 * owns and the requester of every channel it belongs to, configured from
 * the plan (kind, op, members, fan-in rows, header profile) and the
 * driver's settings (arb_ep_settings: payload, window, timers, attempts). It counts each
 * engine's results, decides when the rank's condition on each engine is met
 * and when the rank is done (docs/arbor-sim.md section 3, docs/protocol.md section 10), notices
 * when an engine finishes or gives up, and reports the time the driver must
 * call it back.
 *
 * Time and packet I/O are the driver's: every call takes `now`; engines
 * send through cfg.send with the engine record as context (the driver maps
 * arb_ep_dst to its network); the driver hands received packets to
 * arb_host_deliver and arms a timer at what the calls return. Results land
 * where the driver said at arb_host_start (the user's buffer in the
 * runtime) or go through cfg.fill / cfg.on_result (the simulator's values
 * mode, which holds no full buffers).
 *
 * Engine records: a driver that keeps per-engine fields of its own passes
 * cfg.ep_size; records are laid out that far apart, each starting with an
 * arb_hep (arb_host_ep). Allocation happens in arb_host_new only; nothing
 * per packet. Not thread-safe: one driver thread per arb_host.
 *
 * The hot calls (deliver, after) are inline: the simulator calls them for
 * every packet a host receives.
 */
#ifndef ARBOR_HOST_H
#define ARBOR_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/cc.h"
#include "arbor/endpoint.h"
#include "arbor/plan.h"
#include "endpoint/ep_trusted.h"

#define ARB_HOST_NONE UINT32_MAX

struct arb_host;

/* One engine of a rank. The first cache line holds what every packet for it
 * reads. */
typedef struct arb_hep {
    _Alignas(64) struct arb_host *h;
    arb_responder *r;
    arb_requester *q;
    arb_cc *cc;                /* responder: its channel's controller (owned) */
    const uint32_t *tree_port; /* driver's: per subchannel, the port up its tree */
    const arb_plan_channel *c; /* its channel */
    uint32_t ch, host;         /* host: the rank's host in the plan (arb_plan_host(plan, rank)) */
    uint32_t nic_port;         /* driver's: the host's NIC port */
    uint32_t offsets;          /* packets of the channel's message */
    uint32_t results;          /* requester: results delivered; responder: commits */
    uint8_t cond_done;         /* the rank's condition on this engine is met */
    uint8_t by_results;        /* that condition is `results >= offsets` (arb_host_cond) */
    uint8_t finished;          /* the engine is done (all ENDs, END_ACK) */
    uint32_t rank, member;     /* member: ARB_HOST_NONE for the responder */
    void *committed;           /* driver's: its record of the offsets the responder committed */
    uint8_t *result;           /* driver's: responder's result buffer, if it keeps one */
} arb_hep;

typedef struct arb_host_config {
    const arb_plan *plan;
    /* arb_plan_get_config(plan)->n_ranks flags: 1 for the ranks this driver runs; NULL: all. */
    const uint8_t *local;
    size_t ep_size; /* bytes per engine record, >= sizeof(arb_hep); 0: sizeof(arb_hep) */
    /* Both engines' settings, copied into each engine's configuration as
     * they are (ep.window: the responders' when make_cc gives none). */
    arb_ep_settings ep;
    arb_op op;          /* pull channels' operator; NOP: the plan's (SUM) */
    uint8_t msg_id;     /* the message every engine runs (first_msg_id) */
    uint32_t first_seq; /* its start_seq on every channel */
    /* The engines' send callback; its ctx is the engine record. */
    arb_ep_send_fn send;
    /* Contributions and push data by offset when arb_host_start gets no
     * buffer (ctx: the engine record); NULL: none. */
    arb_ep_fill_fn fill;
    /* Each committed offset (responder), before it is counted; a negative
     * return keeps it out of the count (a duplicate the driver caught). */
    int (*on_commit)(arb_hep *e, const arb_commit_info *c);
    /* Each result a requester delivers. NULL: the requester is not asked
     * for them and its own count of results held is the count. */
    void (*on_result)(arb_hep *e, uint32_t index, const uint8_t *data, size_t len);
    /* The responder's controller; NULL callback or *out NULL: `window`. */
    int (*make_cc)(void *ctx, arb_hep *e, arb_cc **out);
    /* An engine gave up (arb_responder_error / arb_requester_error). */
    void (*on_failure)(arb_hep *e);
    void *ctx; /* the driver's, for make_cc and arb_host_ctx */
    arb_logger logger;
} arb_host_config;

typedef struct arb_host {
    arb_host_config cfg;
    const arb_plan *p;
    unsigned char *eps; /* n_eps records of cfg.ep_size bytes */
    uint32_t n_eps;
    uint32_t *need;      /* per plan rank: conditions left (0 for ranks not run here) */
    arb_time *rank_done; /* per plan rank: when it was done, or ARB_TIME_NEVER */
    uint32_t n_local;    /* ranks run here */
    uint32_t ranks_done, eps_finished;
} arb_host;

/* Fill in the defaults: the engines' settings (arb_ep_settings_default),
 * msg 0, seq 0. */
void arb_host_config_default(arb_host_config *cfg);

/*
 * Make the engines of cfg.local's ranks, channel by channel (the responder
 * first, then the members in bitmap order). Errors: ARB_EINVAL (a NULL
 * argument, no plan or send callback, ep_size too small, a setting the
 * engines refuse), ARB_ENOMEM, or make_cc's error. *out is NULL on error.
 */
int arb_host_new(arb_host **out, const arb_host_config *cfg);
/* Free the engines, their controllers and the tables (not the driver's
 * buffers: committed, result); NULL is allowed. */
void arb_host_free(arb_host *h);

static inline arb_hep *arb_host_ep(const arb_host *h, uint32_t x)
{
    return (arb_hep *)(void *)(h->eps + (size_t)x * h->cfg.ep_size);
}

/* Start engine e's message: input is the rank's contribution (pull) or the
 * data to push (a responder of a push channel), output where results land
 * (the requester's results, the responder's committed results); NULL with
 * cfg.fill / on_result. Errors: those of arb_*_start_message. Call
 * arb_host_after next. */
int arb_host_start(arb_hep *e, const void *input, void *output, arb_time now);

/* Serve e's timers when they are due. Call arb_host_after next. */
void arb_host_expire(arb_hep *e, arb_time now);

/* 1 when every rank run here is done and every engine finished. */
int arb_host_done(const arb_host *h);

/* 0, or the first engine error (ARB_ETIMEDOUT) among the engines. */
int arb_host_error(const arb_host *h);

/* The earliest expiry of its engines. */
arb_time arb_host_next_expiry(const arb_host *h);

/* ---- per engine, inline ---------------------------------------------- */

static inline arb_time arb_host_expiry(const arb_hep *e)
{
    return e->r ? arb_responder_next_expiry(e->r) : arb_requester_next_expiry(e->q);
}

/* The rank's condition on e is met: one condition fewer for the rank. */
static inline void arb_host_cond_met(arb_hep *e, arb_time now)
{
    arb_host *h = e->h;
    if (e->cond_done) return;
    e->cond_done = 1;
    if (h->need[e->rank] && --h->need[e->rank] == 0) {
        h->rank_done[e->rank] = now;
        h->ranks_done++;
    }
}

/* Results engine e has delivered (responder: commits). A requester without
 * an on_result callback: its own count of results held, which moves exactly
 * where on_result would be called. */
static inline uint32_t arb_host_results(const arb_hep *e)
{
    if (e->r || e->h->cfg.on_result) return e->results;
    arb_requester_progress pr;
    arb_requester_get_progress(e->q, &pr);
    return pr.results;
}

/* The rank's condition on engine e (docs/arbor-sim.md section 3): a
 * responder's offsets all committed; a Reduce requester's END acknowledged;
 * a Barrier requester of one channel its credit answered (it comes once
 * everyone has arrived), of N channels at once (the rank's own channel
 * commits once everyone has); any other requester holding every result. A
 * requester counting without on_result moves its phase (END) with its last
 * result, so it is tested after the calls that move it. */
static inline void arb_host_cond(arb_hep *e, arb_time now)
{
    const arb_host *h = e->h;
    int met;
    if (e->r)
        met = e->results >= e->offsets;
    else if (arb_plan_get_config(h->p)->coll == ARB_COLL_REDUCE)
        met = arb_requester_done(e->q);
    else if (e->c->kind == ARB_EP_BARRIER)
        met = arb_plan_n_channels(h->p) > 1 || arb_requester_done(e->q);
    else
        met = arb_host_results(e) >= e->offsets;
    if (met) arb_host_cond_met(e, now);
}

/* After an engine call: the rank's condition, the engine's end, its
 * failure (cfg.on_failure). Returns the engine's next expiry, the time
 * the driver calls back. */
static inline arb_time arb_host_after(arb_hep *e, arb_time now)
{
    arb_host *h = e->h;
    if (!e->cond_done) arb_host_cond(e, now);
    if (!e->finished && (e->r ? arb_responder_done(e->r) : arb_requester_done(e->q))) {
        e->finished = 1;
        h->eps_finished++;
    }
    if (((e->q && arb_requester_error(e->q) < 0) || (e->r && arb_responder_error(e->r) < 0)) &&
        h->cfg.on_failure)
        h->cfg.on_failure(e);
    return arb_host_expiry(e);
}

/*
 * Hand engine e one packet: `from` (responder: member index, or
 * ARB_EP_NOT_MEMBER / ARB_EP_FROM_SWITCH), `subchannel` (requester: the
 * tree it came down), `ce` its CE mark. `trusted`: the header was built by
 * an engine and never left the process (the simulator), so the requester
 * skips validation; the runtime passes 0. Returns the time to arm the
 * engine's timer at, or ARB_TIME_NEVER when nothing moved that needs it.
 */
static inline arb_time arb_host_deliver(arb_hep *e, const arb_hdr *hd, const uint8_t *payload,
                                        size_t len, int from, uint32_t subchannel, int ce,
                                        int trusted, arb_time now)
{
    if (e->r) {
        arb_responder_recv_ce(e->r, hd, payload, len, from, ce, now);
        return arb_host_after(e, now);
    }
    int moved = trusted ? arb_requester_recv_trusted(e->q, hd, payload, len, subchannel, now)
                        : (arb_requester_recv(e->q, hd, payload, len, subchannel, now), 1);
    /* Unless its phase or timers moved, only the requester's results
     * changed: its end, error and timer need no polling. */
    if (moved == 0) {
        if (!e->cond_done && (!e->by_results || e->results >= e->offsets)) arb_host_cond(e, now);
        return ARB_TIME_NEVER;
    }
    return arb_host_after(e, now);
}

#endif /* ARBOR_HOST_H */
