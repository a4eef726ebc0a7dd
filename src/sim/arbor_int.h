/*
 * arbor_int.h - the Arbor transport in the simulator (docs/arbor-sim.md),
 * private to its files: hosts run the responder and requester engines of
 * the plan's channels, switches run the aggregator engine where the plan
 * says so and steer tree packets by their tree tables; everything else is
 * unicast through the routing.
 *
 * A packet is a struct pkt (pool.h) of kind PK_ARBOR:
 *   conn   the channel            sport  the subchannel (UDP source port)
 *   qp     the tree index         psn    ROUTE_TREE or ROUTE_UNICAST, and the
 *                                        job's port << 1 (the UDP port's offset)
 *   dst    unicast: the host      aux    the payload buffer, or NONE
 *   payload  the payload bytes it carries, or in header-only mode the
 *            bytes it stands for (what values mode would carry)
 * and its decoded header lives in hdr[index], a side table as long as the
 * pool: 64 + 32 = 96 bytes per packet alive.
 *
 * The files, one job each: arbor_sim.c (the public API and set-up: jobs,
 * their tables and engines), arbor_pool.c (packets, payload buffers, the
 * switches' slot pools), arbor_steer.c (switch steering: trees, the
 * aggregators, unicast), arbor_host.c (the hosts: the engines' sends,
 * received packets, timers, ranks done) and arbor_check.c (accounting and
 * invariants: values, exactly-once commits, wire checks, the results).
 */
#ifndef ARBOR_SIM_ARBOR_INT_H
#define ARBOR_SIM_ARBOR_INT_H

#include "arbor/agg.h"
#include "arbor/switch.h"
#include "arbor/endpoint.h"
#include "arbor/plan.h"
#include "arbor/reduce.h"
#include "arbor/wire.h"
#include "agg/agg_trusted.h"
#include "endpoint/ep_trusted.h"
#include "host/host.h"
#include "sim_int.h"

#include <stdlib.h>
#include "base/alloc.h"

#define NONE UINT32_MAX
enum { ROUTE_TREE = 0, ROUTE_UNICAST = 1 };

/* Payload buffers: one payload each, shared by copies (reference counts). */
struct bufpool {
    uint8_t **buf;
    uint32_t *ref;
    uint32_t *free_ids;
    uint32_t n, cap, n_free;
    uint32_t size;
};

/* The offsets a responder committed, for the exactly-once check: a bitmap
 * over a window of 64-offset words that slides past full words (every
 * offset below it committed), so it follows the offsets in flight, not the
 * message's length. */
struct cwin {
    uint64_t *w;
    uint32_t base;      /* the first word held */
    uint32_t used, cap; /* words in use, allocated */
};

/* One engine is an arb_hep (host/host.h): the rank driver shared with the
 * runtime makes, starts and serves the engines; its ctx is the job. */

/* Per node; the packets a node sends (`out`) are counted per port (pacct). */
struct nacct {
    uint64_t in, copies, consumed, drops, delivered;
};

/* Per port: the packets and bytes it sent (count_sent), and the bytes its
 * queue dropped. The wire bytes queued on it (the result's tier_*_bytes)
 * are these bytes, sent or dropped, and those still queued (port_sums). */
struct pacct {
    uint64_t tx_pkts, tx_bytes, drop_bytes;
};

/* One collective (arb_sim_arbor_add): its plan, engines, tables and figures. */
struct ajob {
    arb_sim *s;
    struct arbor_job *a;
    uint32_t index;   /* job index (arb_sim_arbor_add's return) */
    uint32_t ch_base; /* its channel c travels as ch_base + c (pkt->conn, the aggregators' id) */
    arb_sim_arbor_config cfg;
    const arb_plan *p;
    uint64_t rtt_sum, rtt_n; /* credit-to-commit times (rtt_mean) */
    uint32_t n_trees;
    uint32_t *agg_nodes; /* the switches where this job aggregates */
    uint32_t n_agg_nodes;
    arb_host *host; /* the ranks' engines and done conditions */
    arb_hep *eps;   /* host's engine records */
    uint32_t n_eps;
    uint32_t *host_first; /* CSR over hosts: eps of host h */
    uint32_t *host_eps;
    uint32_t *ep_at; /* rank x channel: the rank's engine of that channel, or NONE */
    uint32_t *ep_of; /* host x channel: the host's engine of that channel, or NONE */
    uint32_t n_channels;
    uint32_t *tree_ports; /* eps x subchannels: the port up the subchannel's tree */
    uint32_t *rank_of_host;
    struct pacct *pacct; /* per port: this job's packets */
    double tol;          /* values: tolerance of float results */
    arb_time floor;      /* the timers' floor: cfg.timeout_min, or twice the fabric's loop */
    int32_t sum17[17];   /* sum over ranks of ((7r + x) mod 17) */
    uint32_t port;       /* its channels' UDP port: SIM_ARBOR_DPORT + port (pkt psn >> 1) */
    uint32_t part;       /* its part of every switch's pool (index mod the pool's parts) */
    /* per rank: when its engines start (ARB_TIME_NEVER: a deferred rank not
     * entered yet), whether they have, whether its host is through with
     * them (every engine finished, no timer left), whether its done was
     * reported (cfg.on_rank_done); a deferred rank's entry (entered: set
     * by arb_sim_arbor_enter, start_at only once its start is due when the
     * entry was deferred, arbor_defer_enter) */
    arb_time *start_at;
    uint8_t *started, *idle, *reported, *entered;
    uint32_t *live_at; /* per node: slots this job holds live there */
    arb_sim_arbor_result res;
    /* a partitioned run (arbor_part.c), after the last run: its engines
     * finished and ranks done over every part (host->rank_done holds every
     * part's done times then) */
    uint32_t g_eps_finished, g_ranks_done;
};

/* The jobs with engines on one host, in the order they were added. */
struct hjobs {
    struct ajob **v;
    uint32_t n, cap;
};

/* A rank done, to report after the event (cfg.on_rank_done). */
struct rnote {
    uint32_t job, rank;
};

/* An entry made by a completion callback, for later (arbor_defer_enter). */
struct aenter {
    arb_time at;
    uint32_t job, rank;
};

/* Per host: its deferred entries, by (at, the order they were made). */
struct aenters {
    struct aenter *v;
    uint32_t head, n, cap;
};

/* In a slot owner table: the owner's job index, and whether the slot is live. */
#define SLOT_LIVE 0x80000000u

/* The simulator's Arbor state (s->arb): what the jobs share -- the packet
 * side table, the payload buffers, one aggregator (one slot pool) per
 * switch, per-node counts and the host timers -- and the jobs. */
struct arbor_job {
    arb_hdr *hdr; /* side table, by packet index */
    uint32_t cap_hdr;
    struct bufpool bp;
    /* n_nodes x n_parts: switch n's pool part k (k = a job's index mod
     * n_parts; one part, the whole pool, unless partitioned); NULL where no
     * job of that part aggregates; owner[]: per engine, each slot's owning
     * job and liveness (SLOT_LIVE), the jobs' live_at kept from them */
    arb_agg **agg;
    uint32_t **owner;
    arb_switch **sw;       /* per node: its switch engine (switches a job's tree crosses) */
    arb_time *sw_timer_at; /* per node: its pending re-credit timer, or ARB_TIME_NEVER */
    uint64_t *sw_timer_seq;
    uint32_t n_parts;
    struct nacct *acct; /* per node, every job's packets */
    uint64_t *left;     /* per node: conservation_errors' scratch, made at set-up */
    uint32_t spare;     /* a received packet its engine may reuse for a reply, or NONE */
    uint8_t echo_ce;    /* a requester is answering a credit that arrived with CE */
    arb_time *timer_at; /* per host (a host belongs to one job) */
    uint64_t *timer_seq;
    arb_time *lag;      /* per host: packets are handled this long after arrival (its job's) */
    struct plist *held; /* per node: arrived packets waiting for their lag or cost (ts = due) */
    arb_sim_arbor_cost cost; /* the first job's (arb_sim_arbor_cost) */
    arb_time *busy;          /* per node, with a cost: when it was last busy (NULL: no cost) */
    arb_time *core_free;     /* per core (cost.cores), with a cost: when it is free */
    uint64_t n_held;         /* packets in the held lists */
    struct hjobs *hj;        /* per host: the jobs with engines there */
    uint32_t *next_port;     /* per host: the port its next job's channels take */
    struct rnote *notes;     /* ranks done in this event, to report after it */
    uint32_t n_notes, cap_notes;
    struct aenters *enters; /* per host, deferred entries (arbor_defer_enter), or NULL */
    struct ajob **chan_job; /* per global channel (pkt->conn): its job */
    uint32_t n_chan, cap_chan;
    struct ajob **jobs;
    uint32_t n_jobs;
    /* the first job's, which every job must share: the pools are common */
    uint32_t slots, payload;
    int values;
    int local_repair;              /* the aggregators' (agg.h), every job's */
    arb_sim_arbor_failure failure; /* the first engine that gave up */
    /* the aggregators' re-credit timers, every job's */
    arb_time recredit_min, recredit_max;
    int recredit_order;
    /* arb_sim_arbor_counters_get: payload bytes committed and sent again,
     * retry and repair credits sent, and the watch for the first of those
     * at or after watch_from (arb_sim_arbor_watch) */
    uint64_t committed_bytes, resent_bytes, resends;
    arb_time watch_from, watch_hit;
    int watching;
    /* a partitioned run (arbor_part.c): when and in which event (its
     * target) this part's first engine gave up (the parts keep the earliest
     * in the local order), and the counters and slot figures of every part
     * after the last run */
    arb_time fail_at;
    uint32_t fail_event;
    uint64_t g_committed_bytes, g_resent_bytes, g_resends;
    arb_time g_watch_hit; /* the earliest part's */
    uint32_t g_live, g_most;
    arb_time *scratch; /* a rank_done's worth, for the merge */
    uint32_t cap_scratch;
};

/* arbor_pool.c: packets, their header side table and payload buffers, and
 * the switches' slot pools. */
uint32_t arbor_pkt_copy(arb_sim *s, uint32_t i);
uint32_t arbor_buf_get(arb_sim *s);
uint32_t arbor_put_payload(arb_sim *s, const uint8_t *payload, size_t len);
int arbor_pool_part(arb_sim *s, uint32_t node, uint32_t part);
/* The slots in use at this part's switches (every switch in one process):
 * their sum and the most at one switch. */
void arbor_slots_live(const arb_sim *s, uint32_t *sum, uint32_t *most);

/* arbor_host.c: the hosts' side (the engines' I/O, received packets, timers). */
void arbor_ep_send(void *ctx, const arb_ep_dst *dst, const arb_hdr *h, const uint8_t *payload,
                   size_t len);
void arbor_on_failure(arb_hep *e);
void arbor_arm(arb_sim *s, uint32_t h, arb_time t);
/* Rank r of deferred job j enters at `at`, later than now, from a
 * completion callback: its host does not see the entry (start_at) until an
 * event of its own at `at` (arbor_on_enter), so that what the host does
 * before then is the same whether the callback ran at once (one process)
 * or at the end of the window (a partitioned run). 0 or ARB_ENOMEM. */
int arbor_defer_enter(arb_sim *s, struct ajob *j, uint32_t r, arb_time at);

/* arbor_host.c: a node's cost (arb_sim_arbor_cost; a->busy set): when
 * a packet of `bytes` wire bytes reaching it now is handled, the node
 * busy until then. */
arb_time arbor_cost_due(struct arbor_job *a, uint32_t node, int host, uint32_t bytes, arb_time now);
/* arbor_sim.c: the held lists, one per node, made once (ARB_ENOMEM). */
int arbor_held_lists(arb_sim *s);

/* arbor_check.c: accounting and invariants (values, exactly-once, wire checks). */
void arbor_fill(void *ctx, uint8_t msg_id, uint32_t index, uint8_t *dst, size_t len);
int arbor_on_commit(arb_hep *e, const arb_commit_info *c);
void arbor_on_result(arb_hep *e, uint32_t index, const uint8_t *data, size_t len);
void arbor_cwin_free(struct cwin *c);
void arbor_wire_check(arb_sim *s, uint32_t conn, const arb_hdr *h, size_t len);

/* arbor_part.c: a partitioned run's Arbor state merged over the parts
 * after each run (arbor_part_sync, sim_int.h): every rank's done time, the
 * engines finished, the counters, the slot figures, the first failure; and
 * a job's figures summed over the parts, with n_extra more counters
 * (arb_sim_arbor_result_get: every part calls it, in the same order). */
int arbor_part_merge(const arb_sim *s, arb_sim_arbor_result *r, uint64_t *extra, uint32_t n_extra);
/* The nodes' packet balances summed over the parts: nodes where it fails. */
int arbor_part_conservation(const arb_sim *s, int64_t *bal, uint32_t n_nodes, uint64_t *bad);

/* Does node n's state (a host's engines, a switch's aggregators) live in
 * this part (always, in a whole run)? */
static inline int owns_node(const arb_sim *s, uint32_t n)
{
    return !s->part || part_owns_host(s, n);
}

/* Does port's packet lists (queue, wire, a NIC's arb_tx) count here: the
 * part that sends on it (a packet across the cut sits on both parts' copy
 * of its wire until it arrives; the receiving part's is not counted)? */
static inline int counts_port(const arb_sim *s, uint32_t port)
{
    return !s->pcut || s->pcut[port] == PCUT_LOCAL || s->pcut[port] == PCUT_OUT;
}

/* The job of engine e. */
static inline struct ajob *ej(const arb_hep *e)
{
    return e->h->cfg.ctx;
}

/* The job of global channel `conn`. */
static inline struct ajob *job_of(const arb_sim *s, uint32_t conn)
{
    return s->arb->chan_job[conn];
}

/* The run fails with rc (the first error met is kept). */
static inline void fatal(arb_sim *s, int rc)
{
    if (!s->error) s->error = rc;
}

/* Packet k of job j, sent on `port`, reached the far end of its wire. */
static inline void count_sent(struct ajob *j, uint32_t port, const struct pkt *k)
{
    struct pacct *a = &j->pacct[port];
    a->tx_pkts++;
    a->tx_bytes += k->bytes;
}

/* One reference to payload buffer id (NONE: none) fewer; the last frees it. */
static inline void buf_put(arb_sim *s, uint32_t id)
{
    struct bufpool *b = &s->arb->bp;
    if (id == NONE) return;
    if (--b->ref[id] == 0) b->free_ids[b->n_free++] = id;
}

/* Packet i and its payload reference back to their pools. */
static inline void pkt_free(arb_sim *s, uint32_t i)
{
    buf_put(s, pool_get(&s->pool, i)->aux);
    pool_release(&s->pool, i);
}

/* Payload bytes of packet `index` of channel ch. */
static inline uint32_t len_of(const struct ajob *j, const arb_plan_channel *c, uint32_t index)
{
    uint64_t len = c->hi - c->lo, lo = (uint64_t)index * j->cfg.ep.payload;
    if (lo >= len) return 0;
    return (uint32_t)(len - lo < j->cfg.ep.payload ? len - lo : j->cfg.ep.payload);
}

/* The wire bytes of a packet with header h and `payload` payload bytes. */
static inline uint32_t wire_of(const arb_hdr *h, uint32_t payload)
{
    uint32_t hl = h->ext ? ARB_HDR_LEN_LONG : ARB_HDR_LEN_SHORT; /* arb_hdr_len */
    return ARB_FRAME_OVERHEAD + hl + payload + ARB_WIRE_EXTRA;
}

/* Header-only mode: the payload a packet stands for (what values mode sends). */
static inline uint32_t arbor_virtual_len(const struct ajob *j, const arb_plan_channel *c,
                                         const arb_hdr *h)
{
    arb_ep_kind kind = c->kind;
    uint32_t mask = ARB_OFFSET_MASK;
    if (h->packet_type == ARB_PT_DATA_REQUEST)
        return kind == ARB_EP_PULL_RESULT || kind == ARB_EP_PULL_COMPLETION
                   ? len_of(j, c, h->offset_a & mask)
                   : 0;
    if (h->packet_type != ARB_PT_RESPONSE) return 0;
    if (kind == ARB_EP_PULL_RESULT) {
        if (h->payload_kind == ARB_PK_SEED) return len_of(j, c, h->offset_b & mask); /* its input */
        int rides = h->payload_kind == ARB_PK_COMPLETION ||
                    (h->repair && h->credit_valid && h->offset_a != h->offset_b);
        return rides ? len_of(j, c, h->offset_a & mask) : 0;
    }
    if (kind == ARB_EP_PUSH && h->credit_valid) return len_of(j, c, h->offset_b & mask);
    return 0;
}

/* The engine of job j's part of switch `node`'s pool. */
static inline size_t agg_index(const struct arbor_job *a, uint32_t node, const struct ajob *j)
{
    return (size_t)node * a->n_parts + j->part;
}

/* Job j's credit took `slot` of a pool at `node` (owner: its owner table):
 * the slot's previous owner loses it if it was live (the rotation came
 * back to it), j holds one more there. */
static inline void slot_taken(struct arbor_job *a, struct ajob *j, uint32_t node, uint32_t *owner,
                              uint32_t slot)
{
    uint32_t o = owner[slot];
    if (o & SLOT_LIVE) a->jobs[o & ~SLOT_LIVE]->live_at[node]--;
    owner[slot] = j->index | SLOT_LIVE;
    if (++j->live_at[node] > j->res.peak_job_slots) j->res.peak_job_slots = j->live_at[node];
}

/* `slot` completed: its owner holds one fewer at `node`. */
static inline void slot_freed(struct arbor_job *a, uint32_t node, uint32_t *owner, uint32_t slot)
{
    uint32_t o = owner[slot];
    if (!(o & SLOT_LIVE)) return;
    a->jobs[o & ~SLOT_LIVE]->live_at[node]--;
    owner[slot] = o & ~SLOT_LIVE;
}

/* The responder's record of committed offsets (arb_hep.committed is the
 * driver's). */
static inline struct cwin *e_committed(const arb_hep *e)
{
    return e->committed;
}

/* Every rank of job j is done. */
static inline int job_done(const struct ajob *j)
{
    if (j->s->part) /* every part's, after the last run (arbor_part.c) */
        return j->g_eps_finished == j->host->n_eps && j->g_ranks_done == j->host->n_local;
    return arb_host_done(j->host);
}

/* Ranks of job j done (a partitioned run: in every part, after the last run). */
static inline uint32_t job_ranks_done(const struct ajob *j)
{
    return j->s->part ? j->g_ranks_done : j->host->ranks_done;
}

/* Room in the header side table for packet index i; ARB_ENOMEM. */
static inline int hdr_room(arb_sim *s, uint32_t i)
{
    struct arbor_job *a = s->arb;
    if (i < a->cap_hdr) return 0;
    uint32_t ncap = a->cap_hdr ? a->cap_hdr : 4096;
    while (ncap <= i)
        ncap *= 2;
    arb_hdr *n = arb_realloc(a->hdr, (size_t)ncap * sizeof *n);
    if (!n) return ARB_ENOMEM;
    a->hdr = n;
    a->cap_hdr = ncap;
    return 0;
}

/* A new packet with room in the header table, or PKT_NONE (fatal). Not
 * zeroed: its callers (arbor_pkt_copy, arbor_ep_send) write all of it. */
static inline uint32_t pkt_new(arb_sim *s)
{
    uint32_t i = pool_alloc_raw(&s->pool);
    if (i == PKT_NONE || hdr_room(s, i) < 0) {
        if (i != PKT_NONE) pool_release(&s->pool, i);
        fatal(s, ARB_ENOMEM);
        return PKT_NONE;
    }
    return i;
}

/* A packet for an engine to send (arbor_ep_send writes all of it): the
 * received packet its host is handling (host_process), or a new one. */
static inline uint32_t pkt_take(arb_sim *s)
{
    struct arbor_job *a = s->arb;
    uint32_t i = a->spare;
    if (i == NONE) return pkt_new(s);
    a->spare = NONE;
    return i;
}

#endif
