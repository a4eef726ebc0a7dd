/* wl_int.h - the workload module's private state, shared by its files. */
#ifndef ARBOR_WL_INT_H
#define ARBOR_WL_INT_H

#include "arbor/traffic.h"
#include "arbor/workload.h"

/* What a simulator flow of a ring AllReduce carries. */
struct wl_tag {
    uint32_t rq;     /* rank x qps + QP */
    uint32_t msg;    /* message index within the rank's sequence */
    uint32_t next_q; /* the next message launched on the same QP (tag index), or WL_NONE */
    uint8_t sent;    /* all its data has left the sender */
    uint8_t done;    /* delivered */
};
#define WL_NONE UINT32_MAX

struct arb_workload {
    arb_workload_kind kind;
    arb_workload_config cfg;
    arb_rng rng;
    uint32_t n_hosts;
    int started, error;
    uint64_t planned, added, flows_done, bytes_planned;
    arb_time start, finish;
    /* static flow sets */
    arb_wl_flow *flows;
    size_t n_flows;
    uint64_t outstanding; /* flows of the current phase not yet done */
    /* patterns */
    arb_traffic *tr;
    arb_flow *tbuf;
    uint32_t phase, phases;
    uint64_t pat_bytes;
    /* ring AllReduce */
    uint32_t N, Q, P; /* ranks, QPs, slices per chunk */
    uint64_t M;       /* messages per rank */
    uint64_t S;       /* buffer bytes */
    uint32_t *hosts;
    uint64_t *next_post; /* per rank: messages posted */
    uint64_t *qp_next;   /* per rank x QP: every message before it is delivered */
    uint64_t *qp_send;   /* per rank x QP: the next message to launch */
    uint32_t *qp_head;   /* per rank x QP: oldest launched, undelivered message (tag), or WL_NONE */
    uint32_t *qp_tail;   /* per rank x QP: newest launched message (tag), or WL_NONE */
    uint8_t *qp_busy;    /* per rank x QP: a message is still sending its data */
    /* hpn: messages are given to a QP when posted; per rank x M */
    uint32_t *msg_nxt;  /* the next message given to the same QP, or WL_NONE */
    uint8_t *msg_done;  /* delivered (with every earlier message of its QP) */
    uint64_t *recv_cnt; /* per rank: messages received */
    uint64_t *qp_out;   /* per rank x QP: bytes posted to it and not yet delivered */
    uint32_t *qp_qtail; /* per rank x QP: the last message given to it, or WL_NONE */
    uint32_t *hpn_last; /* per rank: the QP chosen last (ties go to the next ones) */
    uint16_t *qp_sport;
    uint32_t *qp_num;
    uint64_t *sent;    /* per rank: payload bytes sent */
    arb_time *done_at; /* per rank */
    uint32_t ranks_done;
    uint32_t first_id; /* simulator id of the first flow added */
    struct wl_tag *tags;
    size_t n_tags, cap_tags;
    /* host collective (hcoll.c) and iteration (iter.c); S above is the buffer */
    struct hc_exec *hx;
    int hc_coll, hc_algo;
    struct wl_iter *it;
    struct iter_arb *ia; /* iteration, backend arbor (iter_arb.c) */
};

int wl_alloc(arb_workload **out, arb_workload_kind kind, uint32_t n_hosts,
             const arb_workload_config *cfg, char *err, size_t errlen);
/* Take ownership of flows[0..n) after checking them (on error the caller keeps them). */
int wl_set_flows(arb_workload *w, arb_wl_flow *flows, size_t n, char *err, size_t errlen);

/* hcoll.c: the host collective's driving and figures */
int wl_hcoll_start(arb_workload *w, arb_sim *s);
void wl_hcoll_result(const arb_workload *w, arb_workload_result *r);
int hc_exec_rank_pub(const arb_workload *w, uint32_t rank, uint32_t *host, arb_time *done,
                     uint64_t *bytes_sent, uint64_t *msgs_received);
/* iter.c */
void wl_iter_free(struct wl_iter *it);
int wl_iter_start(arb_workload *w, arb_sim *s);
void wl_iter_result(const arb_workload *w, arb_workload_result *r);
arb_time wl_iter_min_compute(const arb_workload *w);
/* iter.c: member m of the trace's collective `ref` is done (its node completes) */
void wl_iter_member_done(arb_workload *w, arb_sim *s, uint32_t ref, uint32_t m, arb_time now);
/* iter_arb.c: the iteration's collectives over Arbor. add: plan collective
 * `ref` of `coll` over hosts[0..n) (its group's hosts in its rank order)
 * into *index (TR_NONE for a kind Arbor has not, AllToAll: the host
 * algorithm), or an error with err "FIELD: rule". enter: member m calls it. */
struct iter_arb;
int iter_arb_new(struct iter_arb **out, const arb_iteration_config *ic, char *err, size_t errlen);
int iter_arb_add(struct iter_arb *x, uint32_t ref, arb_coll coll, const uint32_t *hosts, uint32_t n,
                 uint64_t bytes, uint32_t root, uint32_t *index, char *err, size_t errlen);
void iter_arb_enter(arb_workload *w, arb_sim *s, uint32_t a, uint32_t m, arb_time now);
uint32_t iter_arb_jobs(const struct iter_arb *x); /* simulator jobs added so far */
/* Entries from then on start d after they are made (workload.start_delay). */
void iter_arb_set_enter_delay(struct iter_arb *x, arb_time d);
void iter_arb_free(struct iter_arb *x);
/* the executor's callbacks (hc_exec.c) */
struct hc_exec;
void hc_exec_free(struct hc_exec *x);
void hc_exec_flow_done(struct hc_exec *x, arb_sim *s, uint32_t flow, arb_time now);
void hc_exec_flow_sent(struct hc_exec *x, arb_sim *s, uint32_t flow, arb_time now);

#endif
