/*
 * comm_int.h - the communicator's internals, shared by comm.c (joining,
 * progress, waiting, leaving) and call.c (one collective call: its plan,
 * engines, packets in and out, and the collectives of rt.h).
 */
#ifndef ARBOR_RT_COMM_INT_H
#define ARBOR_RT_COMM_INT_H

#include "arbor/plan.h"
#include "arbor/rt.h"
#include "arbor/topo.h"
#include "host/host.h"
#include "rt/rt_int.h"

#define MAX_CALLS 16  /* calls in flight or lingering */
#define STASH_MAX 512 /* REGISTERs and first credits that came before their call */
#define REJOIN_SILENCE (50 * ARB_PS_PER_MS)
#define JOIN_RETRY (100 * ARB_PS_PER_MS)
/* After the last call a rank keeps answering until its switch has been
 * quiet for two timer ceilings (cfg.timeout_max) and this much: a peer
 * whose request or acknowledgement was lost in the last collective repairs
 * it through this rank, and its repair rounds repeat at most a ceiling
 * apart (no backed-off wait passes the ceiling in the runtime), so a rank
 * leaves only after two rounds it would have had to answer did not come. */
#define LINGER_SLACK (50 * ARB_PS_PER_MS)
/* A failure names a rank as unanswering when a packet that asks it for an
 * answer (a REGISTER or END to its channel, a repair credit to it) has had
 * none, nor anything else from it, for this long; and the switch as silent
 * when nothing at all came from it for this long. */
#define RT_SILENT ARB_PS_PER_S

/* One collective call: its plan and this rank's engines. */
struct arb_rt_request {
    arb_rt_comm *c;
    struct arb_rt_request *next;
    uint8_t msg;
    arb_coll coll;
    arb_dtype dt; /* the call's dtype and op (NOP: no reduction), which */
    arb_op op;    /* every packet of the call from another rank must carry */
    /* Another rank's packets carried another dtype or op: why, in words.
     * The call runs on (so that the others see this rank's packets and
     * find the same), and fails with ARB_EINVAL when it ends. */
    char mismatch[200];
    arb_plan *plan;
    arb_host *host;
    int16_t ep_of[ARB_PLAN_MAX_RANKS]; /* per responder rank: our engine, or -1 */
    arb_time deadline;
    arb_time started;
    int done;     /* this rank's output is complete */
    int err;      /* the call failed (before done) */
    int released; /* the user waited: free once the engines finished */
    int finished; /* every engine finished */
    /* AllReduce: this rank's responder commits into `cache` (the result
     * cache its tails are replayed from, which must outlive the call) and
     * each commit is copied to the user's buffer at `user_out`. Reduce in
     * place: the root's input, copied into `cache` before the call. */
    uint8_t *cache;
    uint8_t *user_out;
    /* the responder engine whose controller an earlier call left (NULL:
     * none), and that controller's counters when this call took it up */
    const arb_hep *cc_ep;
    arb_cc_stats cc_base;
};

/* Controllers outlive their call (docs/runtime.md 5.1): when a call ends,
 * its responder's controller is kept here with the share of the link it
 * was made for (the channels the rank took part in); the next call whose
 * responder has that share continues from it. */
#define RT_CC_KEEP 4
struct rt_cc_keep {
    uint32_t share; /* 0: empty */
    arb_cc *cc;
};

/* A packet that came before its call: a REGISTER for this rank's channel,
 * or a first credit (arb_ep_settings.early) of another rank's. */
struct stash {
    uint8_t msg;
    uint16_t src;
    uint16_t channel; /* the responder's rank */
    uint16_t sub;     /* the subchannel it came down */
    uint8_t ce;       /* it came marked CE (a credit's answer echoes it) */
    arb_hdr h;
};

struct arb_rt_comm {
    arb_rt_config cfg;
    int fd;
    struct rt_cc_keep cc_keep[RT_CC_KEEP];
    /* 1 once a call's controllers sampled a credit's loop (st.base_rtt is
     * then a loop measured, not the JOIN's estimate) */
    int loop_sampled;
    /* 1 while a requester handles a credit marked CE: the requests it
     * sends in answer carry the mark (ECN echo, docs/runtime.md 5.1) */
    int echo_ce;
    struct sockaddr_in sw;
    rt_txq tx;
    rt_rxq rx;
    arb_topo *topo;
    uint8_t key[RT_KEY_LEN];
    rt_join join;
    uint32_t ranks[ARB_PLAN_MAX_RANKS];
    struct arb_rt_request *calls; /* newest first */
    uint32_t n_calls;
    uint8_t next_msg;
    int started_any;
    uint8_t last_msg; /* the newest call's message id */
    struct stash stash[STASH_MAX];
    uint32_t n_stash;
    arb_time last_rx, last_join;
    arb_time heard[ARB_PLAN_MAX_RANKS]; /* the last packet from each rank (via the switch) */
    /* per rank: when the oldest packet asking it for an answer left, since
     * the last packet from it (0: none waiting) */
    arb_time awaiting[ARB_PLAN_MAX_RANKS];
    int any_failed; /* a call failed: the job cannot finish, no lingering at the end */
    arb_rt_stats st;
    uint8_t head[RT_HDR_LEN + ARB_HDR_LEN_LONG];
    char err[256];
};

/* Record the communicator's error message (arb_rt_errmsg), log it, return rc. */
int rt_fail(arb_rt_comm *c, int rc, const char *fmt, ...) ARB_PRINTF(3, 4);

/* The failure's suspects in words, into buf: the switch when it has been
 * silent for RT_SILENT, else the ranks asked for an answer and silent that
 * long ("unanswered for 1 s: 2"), or, with none, the responders waited for
 * that sent nothing that long ("silent for 1 s: 2"), then the channels
 * still waited for. */
void rt_suspects(arb_rt_comm *c, const struct arb_rt_request *k, arb_time now, char *buf,
                 size_t len);

/* comm.c */
void rt_progress_once(arb_rt_comm *c);
arb_time rt_next_wake(arb_rt_comm *c, const struct arb_rt_request *want, arb_time now);
/* Wait for the socket up to `wait` (spinning first for cfg.spin), counted. */
void rt_comm_wait(arb_rt_comm *c, arb_time wait);

/* call.c */
int rt_call_start(arb_rt_comm *c, arb_coll coll, const void *send, void *recv, size_t count,
                  arb_dtype dt, arb_op op, uint32_t root, struct arb_rt_request **out);
void rt_call_free(struct arb_rt_request *k);
/* Free the controllers kept for later calls (arb_rt_comm_free). */
void rt_cc_keep_free(arb_rt_comm *c);
void rt_call_check(arb_rt_comm *c, struct arb_rt_request *k, arb_time now);
void rt_on_arbor(arb_rt_comm *c, const rt_hdr *rh, const uint8_t *b, size_t len, arb_time now);

#endif /* ARBOR_RT_COMM_INT_H */
