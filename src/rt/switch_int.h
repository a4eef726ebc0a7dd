/*
 * The software switch's internals (src/rt/switch.c): its state, shared by
 * the files that make it up: switch.c (set-up, statistics and the serving
 * loop), switch_job.c (the job table: JOIN, JOBINFO, REJECT and NOTICE)
 * and switch_fwd.c (the data path: a datagram in, through the switch
 * engine, out).
 */
#ifndef ARB_RT_SWITCH_INT_H
#define ARB_RT_SWITCH_INT_H

#include "arbor/agg.h"
#include "arbor/plan.h"
#include "arbor/switch.h"
#include "arbor/topo.h"
#include "rt/rt_int.h"

#include <pthread.h>

#define NONE UINT32_MAX
#define ANNOUNCE_EVERY (50 * ARB_PS_PER_MS)
#define NOTICES_PER_S 200
/* The switch's own re-credit timer (rt.h) */
#define RT_RECREDIT_MIN ARB_RT_SWITCH_RECREDIT_MIN
#define RT_RECREDIT_MAX ARB_RT_SWITCH_RECREDIT_MAX

struct sjob {
    uint32_t id;
    uint8_t key[RT_KEY_LEN];
    uint32_t size, base;      /* 0: not known yet (no JOIN, no JOBINFO) */
    arb_plan *plan;           /* AllReduce over the job's hosts: channel r's trees */
    struct sockaddr_in *addr; /* per rank: its address (joined ranks below this node) */
    uint32_t *local;          /* per rank: the address of ours it dialled (0: unknown) */
    uint8_t *joined;
    uint64_t *counter; /* per rank: the last JOIN counter accepted */
    arb_time *seen;    /* per rank: its last datagram from its address */
};

/* One thread of the switch: its socket (one of a SO_REUSEPORT group when
 * there are several), its batches, its counters and the datagram it is
 * handling. */
struct sw_worker {
    arb_rt_switch *s;
    uint32_t id;
    int fd;
    rt_txq tx;
    rt_rxq rx;
    arb_rt_switch_stats st;
    arb_switch *eng; /* the switch engine: what to do with a packet of a tree */
    /* the local address the datagram being handled was sent to (0:
     * unknown): answers leave from it, so a switch listening on 0.0.0.0
     * answers from the address its rank or peer dialled */
    uint32_t cur_local;
    uint8_t head[RT_HDR_LEN + ARB_HDR_LEN_LONG];
    pthread_t thread;
    arb_time wait; /* serve for this long (worker 0: the caller's) */
    /* ECN: the marking probability of the batch being handled (RED on the
     * bytes still queued behind it) and the draws */
    double mark_p;
    arb_rng ecn_rng;
};

/*
 * Threads. Worker k owns the channels whose (job + channel) mod n_workers
 * is k: their aggregator slots are in aggs[k]. The kernel steers each
 * datagram to the socket of its channel's owner (a classic BPF program on
 * the SO_REUSEPORT group reads the runtime header), so each aggregator is
 * used by one thread; a datagram that reaches another thread all the same
 * (one GSO or GRO train of several channels, or no steering program) is
 * handled there under the owner's agg_lock, and counted as `foreign`.
 * The job table (addresses, plans) is read under jobs_lock by every
 * thread and written only by JOIN and JOBINFO, under its write side.
 */
struct arb_rt_switch {
    arb_rt_switch_config cfg;
    uint16_t port;
    arb_topo *t;
    const arb_pgft *g;
    const arb_node *nodes;
    const arb_port *ports;
    uint32_t node;
    const arb_node *nd;
    uint32_t radix;
    uint32_t n_peers;
    uint32_t peer_node[ARB_RT_SWITCH_MAX_PEERS];
    struct sockaddr_in peer_addr[ARB_RT_SWITCH_MAX_PEERS];
    uint32_t peer_port[ARB_RT_SWITCH_MAX_PEERS];  /* my port toward it, or NONE */
    uint32_t peer_local[ARB_RT_SWITCH_MAX_PEERS]; /* our address it sends to (0: unknown; atomic) */
    int32_t *port_peer; /* per local port: peer index of a switch there, or -1 */
    uint32_t n_workers;
    struct sw_worker *workers;
    arb_agg **aggs;            /* per worker: the slot pool of the channels it owns */
    pthread_mutex_t *agg_lock; /* per aggregator (n_workers > 1 only) */
    pthread_rwlock_t jobs_lock;
    pthread_mutex_t answer_lock; /* the NOTICE / REJECT budget */
    int locks_made;
    int steered; /* 1: the kernel steers datagrams by channel (BPF) */
    int wake_fd; /* an eventfd: stop serving (n_workers > 1) */
    int quit;    /* atomic: the helper workers return */
    struct sjob jobs[ARB_RT_SWITCH_MAX_JOBS];
    uint32_t n_jobs;
    uint32_t fabric; /* rt_fabric_id of cfg.topo: a JOIN must carry the same */
    arb_time last_announce, notice_window;
    uint32_t notices;
    int peers_checked;
};

/* switch.c */
/** The worker that owns (job, channel): (job + channel) mod n_workers. */
uint32_t rt_sw_owner_of(const arb_rt_switch *s, uint32_t job, uint32_t channel);

/* switch_job.c: the job table (under jobs_lock) */
/** Free a job's tables and forget its size (the slot stays). */
void rt_sw_job_reset(struct sjob *j);
/** The job with this id, or NULL. */
struct sjob *rt_sw_find_job(arb_rt_switch *s, uint32_t id);
/** The local address peer i sends to (0: unknown). */
uint32_t rt_sw_peer_local(const arb_rt_switch *s, uint32_t i);
/** The index of the peer switch at address a, or -1. */
int rt_sw_peer_of(const arb_rt_switch *s, const struct sockaddr_in *a);
/** Tell every peer what this switch knows of job j (JOBINFO). */
void rt_sw_announce(struct sw_worker *wk, const struct sjob *j);
/** A NOTICE to `to` about the packet h it sent (within the answer budget). */
void rt_sw_notice(struct sw_worker *wk, const struct sockaddr_in *to, const rt_hdr *h,
                  arb_time now);
/** A JOIN from a rank: checked, admitted or refused (REJECT). */
void rt_sw_on_join(struct sw_worker *wk, const struct sockaddr_in *from, const uint8_t *b,
                   size_t len, arb_time now);
/** A JOBINFO from a peer switch: learn the job's size and base. */
void rt_sw_on_jobinfo(struct sw_worker *wk, const struct sockaddr_in *from, const rt_hdr *h,
                      const uint8_t *b, size_t len);

/* switch_fwd.c: the data path */
/** One datagram that arrived on worker wk (to our address `local`). */
void rt_sw_handle(struct sw_worker *wk, const struct sockaddr_in *from, uint32_t local, uint8_t *b,
                  size_t len, arb_time now);
/** ECN: the marking probability for the batch just received. */
void rt_sw_measure_queue(struct sw_worker *wk);
/** Send again every credit whose re-credit timer is due (local repair). */
void rt_sw_recredit(struct sw_worker *wk, arb_time now);
/** When wk's aggregator next has a re-credit due, or ARB_TIME_NEVER. */
arb_time rt_sw_recredit_due(const struct sw_worker *wk);

#endif /* ARB_RT_SWITCH_INT_H */
