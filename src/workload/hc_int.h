/*
 * hc_int.h - host collectives inside the workload module: a collective is
 * a plan (a static DAG of messages between ranks, hc_plan.c) run by an
 * executor (hc_exec.c) that turns ready messages into simulator flows.
 *
 * A plan's message m goes from rank src[m] to rank dst[m] on connection
 * conn[m] (one connection per (src, dst, channel); the connection carries
 * its messages in index order) and may be posted once every message in
 * deps[dep_off[m] .. dep_off[m+1]) has been delivered: the data it
 * forwards has arrived at src[m].
 */
#ifndef ARBOR_HC_INT_H
#define ARBOR_HC_INT_H

#include "arbor/workload.h"

struct hc_plan {
    uint32_t n;      /* ranks */
    uint32_t n_msgs; /* messages */
    uint32_t *src, *dst, *conn;
    uint64_t *bytes;
    uint32_t *dep_off; /* n_msgs + 1 */
    uint32_t *deps;
    uint32_t n_conns;
    uint32_t *conn_src, *conn_dst;  /* per connection: its ranks */
    uint32_t *conn_off, *conn_msgs; /* per connection: its messages in order (CSR) */
    uint32_t *rdep_off, *rdeps;     /* per message: the messages that depend on it */
    uint32_t *rconn_off, *rconns;   /* per rank: its connections (either end), ascending */
    uint32_t slices;                /* pipeline slices per unit */
    uint32_t steps;                 /* algorithm steps (per slice) */
    /* builder state */
    uint32_t cap_msgs, cap_deps, n_deps;
    uint32_t cap_conns;
    uint32_t *hkey; /* open addressing: connection index + 1, 0 empty */
    uint32_t *conn_ch;
    uint32_t hcap;
};

/*
 * Build the plan of `coll` with algorithm `algo` (resolved: not AUTO) over
 * n ranks for S bytes, slices of at most `chunk` bytes (0: one slice),
 * root `root`. Errors (one line in err, naming the field first: "size:",
 * "chunk:", "root:", "ranks:", "algorithm:"): ARB_EINVAL, ARB_ENOMEM.
 */
int hc_plan_build(struct hc_plan **out, arb_coll coll, arb_hc_algo algo, uint32_t n, uint64_t bytes,
                  uint64_t chunk, uint32_t root, char *err, size_t errlen);
/* One message src -> dst of `bytes` with no dependency (p2p). */
int hc_plan_p2p(struct hc_plan **out, uint64_t bytes);
void hc_plan_free(struct hc_plan *p);

/* ---- the executor -------------------------------------------------------- */

struct hc_exec;

/* Rank `rank` of instance `inst` is done (entered, and every message to or
 * from it delivered) at `now`. */
typedef void (*hc_done_fn)(void *ctx, arb_sim *s, uint32_t inst, uint32_t rank, arb_time now);

int hc_exec_new(struct hc_exec **out, arb_workload *w, hc_done_fn done, void *ctx);
void hc_exec_free(struct hc_exec *x);

/*
 * Add an instance of plan p (the executor takes it) over hosts[0..p->n)
 * (copied). rendezvous 1: a message waits for both its ranks to have
 * entered; 0: for its sender only (an eager send). Returns the instance
 * index or a negative error (ARB_ENOMEM).
 */
long hc_exec_add(struct hc_exec *x, struct hc_plan *p, const uint32_t *hosts, int rendezvous);

/* Rank `rank` of instance i enters (calls the collective) at `now`: its
 * ready messages are launched. */
void hc_exec_enter(struct hc_exec *x, arb_sim *s, uint32_t i, uint32_t rank, arb_time now);
/* From now on a rank entering posts its ready messages `d` after it
 * (workload.start_delay: an iteration's entries after its start). */
void hc_exec_set_enter_delay(struct hc_exec *x, arb_time d);

void hc_exec_flow_done(struct hc_exec *x, arb_sim *s, uint32_t flow, arb_time now);
void hc_exec_flow_sent(struct hc_exec *x, arb_sim *s, uint32_t flow, arb_time now);

/* Figures of instance i. */
const struct hc_plan *hc_exec_plan(const struct hc_exec *x, uint32_t i);
uint32_t hc_exec_ranks_done(const struct hc_exec *x, uint32_t i);
arb_time hc_exec_rank_done(const struct hc_exec *x, uint32_t i, uint32_t rank);
int hc_exec_rank(const struct hc_exec *x, uint32_t i, uint32_t rank, uint32_t *host, arb_time *done,
                 uint64_t *bytes_sent, uint64_t *msgs_received);
int hc_exec_msg(const struct hc_exec *x, uint32_t i, uint64_t m, arb_hc_msg *out);
uint64_t hc_exec_flows(const struct hc_exec *x); /* simulator flows added */

#endif
