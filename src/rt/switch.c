/*
 * The software aggregation switch (rt.h, docs/runtime.md): one node of a
 * PGFT fabric. It admits ranks whose JOIN verifies under their job's
 * secret, holds one aggregator engine (one slot pool for every job) and,
 * per job, the planner's tree entries for its node; it replicates credits
 * down the trees, aggregates requests on their way up, and forwards
 * everything else toward its destination host. Packets from anyone who is
 * neither an admitted rank nor a peer switch, packets that do not decode,
 * and packets for unknown jobs or channels are dropped and counted.
 */
#define _GNU_SOURCE
#include "arbor/agg.h"
#include "arbor/switch.h"
#include "arbor/plan.h"
#include "arbor/topo.h"
#include "rt/rt_int.h"

#include <errno.h>
#include <linux/filter.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "base/alloc.h"

#define NONE UINT32_MAX
#define ANNOUNCE_EVERY (50 * ARB_PS_PER_MS)
#define NOTICES_PER_S 200
/* The switch's own re-credit timer (local repair, docs/runtime.md section 5):
 * a rank descheduled for a time slice is not lost. */
#define RT_RECREDIT_MIN (2 * ARB_PS_PER_MS)
#define RT_RECREDIT_MAX (8 * ARB_PS_PER_MS)

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

void arb_rt_switch_config_default(arb_rt_switch_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->listen = "127.0.0.1:17470";
    cfg->topo = ARB_RT_TOPO_DEFAULT;
    cfg->level = 1;
    cfg->index = 0;
    cfg->slots = 4096;
    cfg->ecn.on = 1;
    cfg->ecn.kmin = ARB_RT_ECN_KMIN_DEFAULT;
    cfg->ecn.kmax = ARB_RT_ECN_KMAX_DEFAULT;
    cfg->ecn.pmax = ARB_RT_ECN_PMAX_DEFAULT;
}

static void job_reset(struct sjob *j)
{
    arb_plan_free(j->plan);
    arb_free(j->addr);
    arb_free(j->local);
    arb_free(j->joined);
    arb_free(j->counter);
    arb_free(j->seen);
    j->seen = NULL;
    j->plan = NULL;
    j->addr = NULL;
    j->local = NULL;
    j->joined = NULL;
    j->counter = NULL;
    j->size = j->base = 0;
}

void arb_rt_switch_free(arb_rt_switch *s)
{
    if (!s) return;
    for (uint32_t i = 0; i < s->n_jobs; i++)
        job_reset(&s->jobs[i]);
    for (uint32_t k = 0; s->workers && k < s->n_workers; k++) {
        struct sw_worker *wk = &s->workers[k];
        if (wk->fd >= 0) close(wk->fd);
        arb_switch_free(wk->eng);
        rt_txq_free(&wk->tx);
        rt_rxq_free(&wk->rx);
    }
    for (uint32_t k = 0; s->aggs && k < s->n_workers; k++)
        arb_agg_free(s->aggs[k]);
    if (s->locks_made) {
        for (uint32_t k = 0; k < s->n_workers; k++)
            pthread_mutex_destroy(&s->agg_lock[k]);
        pthread_rwlock_destroy(&s->jobs_lock);
        pthread_mutex_destroy(&s->answer_lock);
    }
    if (s->wake_fd >= 0) close(s->wake_fd);
    arb_free(s->workers);
    arb_free(s->aggs);
    arb_free(s->agg_lock);
    arb_topo_free(s->t);
    arb_free(s->port_peer);
    arb_free(s);
}

static int add_peer(arb_rt_switch *s, uint32_t level, uint32_t index, const char *addr, char *err,
                    size_t errlen)
{
    const arb_rt_switch_config *cfg = &s->cfg;
    uint32_t n = arb_topo_node_id(s->t, level, index);
    if (n == ARB_TOPO_NONE || level == 0 || n == s->node)
        return arb_errf(err, errlen, ARB_EPARSE, "peer %u.%u is not another switch of %s", level,
                        index, cfg->topo);
    if (s->n_peers == ARB_RT_SWITCH_MAX_PEERS)
        return arb_errf(err, errlen, ARB_EINVAL, "more than %d peers", ARB_RT_SWITCH_MAX_PEERS);
    uint32_t i = s->n_peers;
    int rc = rt_addr_parse(addr, ARB_RT_PORT_DEFAULT, &s->peer_addr[i], err, errlen);
    if (rc < 0) return rc;
    s->peer_node[i] = n;
    s->peer_port[i] = NONE;
    for (uint32_t p = 0; p < s->radix; p++)
        if (s->ports[s->nd->first_port + p].peer == n) {
            if (s->peer_port[i] == NONE) s->peer_port[i] = p;
            s->port_peer[p] = (int32_t)i;
        }
    s->n_peers++;
    return 0;
}

int arb_rt_switch_add_peer(arb_rt_switch *s, uint32_t level, uint32_t index, const char *addr,
                           char *err, size_t errlen)
{
    if (!s || !addr) return ARB_EINVAL;
    return add_peer(s, level, index, addr, err, errlen);
}

static int setup_fabric(arb_rt_switch *s, char *err, size_t errlen)
{
    const arb_rt_switch_config *cfg = &s->cfg;
    int rc = arb_topo_new(&s->t, cfg->topo, NULL, err, errlen);
    if (rc < 0) return rc;
    s->fabric = rt_fabric_id(arb_topo_spec(s->t));
    s->g = arb_topo_pgft(s->t);
    s->nodes = arb_topo_nodes(s->t);
    s->ports = arb_topo_ports(s->t);
    s->node = arb_topo_node_id(s->t, cfg->level, cfg->index);
    if (!s->g || cfg->level == 0 || s->node == ARB_TOPO_NONE)
        return arb_errf(err, errlen, ARB_EPARSE, "node %u.%u is not a switch of %s", cfg->level,
                        cfg->index, cfg->topo);
    s->nd = &s->nodes[s->node];
    s->radix = (uint32_t)s->nd->n_down + s->nd->n_up;
    if (s->radix > ARB_AGG_PORTS_MAX)
        return arb_errf(err, errlen, ARB_EINVAL, "%u ports, above the aggregator's %u", s->radix,
                        ARB_AGG_PORTS_MAX);
    s->port_peer = arb_malloc(s->radix * sizeof *s->port_peer);
    if (!s->port_peer) return ARB_ENOMEM;
    for (uint32_t p = 0; p < s->radix; p++)
        s->port_peer[p] = -1;
    for (uint32_t i = 0; i < cfg->n_peers; i++) {
        rc = add_peer(s, cfg->peers[i].level, cfg->peers[i].index, cfg->peers[i].addr, err, errlen);
        if (rc < 0) return rc;
    }
    return 0;
}

/* The workers, their aggregators' places and the locks. */
static int make_threads(arb_rt_switch *s, char *err, size_t errlen)
{
    uint32_t n = s->cfg.threads ? s->cfg.threads : 1;
    s->workers = arb_calloc(n, sizeof *s->workers);
    s->aggs = arb_calloc(n, sizeof *s->aggs);
    s->agg_lock = arb_calloc(n, sizeof *s->agg_lock);
    if (!s->workers || !s->aggs || !s->agg_lock) return ARB_ENOMEM;
    s->n_workers = n;
    for (uint32_t k = 0; k < n; k++) {
        s->workers[k].s = s;
        s->workers[k].id = k;
        s->workers[k].fd = -1;
        arb_rng_seed(&s->workers[k].ecn_rng, s->cfg.seed ^ (0x9e3779b97f4a7c15ull * (k + 1)));
    }
    /* a JOIN waiting for the job table must not wait behind a stream of
     * readers */
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    int bad = pthread_rwlock_init(&s->jobs_lock, &ra);
    pthread_rwlockattr_destroy(&ra);
    if (bad) return arb_errf(err, errlen, ARB_ENOMEM, "pthread_rwlock_init: %s", strerror(bad));
    pthread_mutex_init(&s->answer_lock, NULL);
    for (uint32_t k = 0; k < n; k++)
        pthread_mutex_init(&s->agg_lock[k], NULL);
    s->locks_made = 1;
    if (n > 1) {
        s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (s->wake_fd < 0) return arb_errf(err, errlen, ARB_EIO, "eventfd: %s", strerror(errno));
    }
    return 0;
}

/* The worker that owns a job's channel (the steering program computes the
 * same). */
static uint32_t owner_of(const arb_rt_switch *s, uint32_t job, uint32_t channel)
{
    return (uint32_t)(job + channel) % s->n_workers;
}

/* Ask the kernel to hand each datagram to the socket of its channel's
 * owner: a classic BPF program on the SO_REUSEPORT group returns the
 * index of the socket (their order of binding), (job + channel) mod n,
 * read from bytes 4-7 and 8-9 of the runtime header (offset 0 is the UDP
 * payload). A datagram too short to hold them makes the program fail,
 * and the kernel picks a socket by its hash. 0, or -1 (errno). */
static int steer(arb_rt_switch *s)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4), /* A = job */
        BPF_STMT(BPF_MISC | BPF_TAX, 0),       /* X = A */
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 8), /* A = channel */
        BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0), BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, s->n_workers),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
    return setsockopt(s->workers[0].fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog);
}

/* A socket per worker, all bound to the listening address (SO_REUSEPORT
 * when there are several: the port the first got, for port 0), their
 * batches, and the steering program. */
static int open_sockets(arb_rt_switch *s, struct sockaddr_in *la, char *err, size_t errlen)
{
    const arb_rt_switch_config *cfg = &s->cfg;
    int many = s->n_workers > 1;
    if (many && la->sin_port != 0) {
        /* sockets with SO_REUSEPORT would join another process's group on
         * this address (of the same user) and share its datagrams: bind
         * once without it first, so that a switch already there is refused
         * as with one thread */
        int probe = rt_socket(la, 0, err, errlen);
        if (probe < 0) return probe;
        close(probe);
    }
    for (uint32_t k = 0; k < s->n_workers; k++) {
        struct sw_worker *wk = &s->workers[k];
        wk->fd = rt_socket_reuse(la, 64 << 20, many, err, errlen);
        if (wk->fd < 0) return wk->fd;
        if (k == 0) {
            struct sockaddr_in got;
            socklen_t gl = sizeof got;
            getsockname(wk->fd, (struct sockaddr *)&got, &gl);
            s->port = ntohs(got.sin_port);
            la->sin_port = got.sin_port;
        }
        int rc = rt_txq_init(&wk->tx, wk->fd, cfg->drop, cfg->seed + k, !cfg->no_gso);
        if (rc == 0) rc = rt_rxq_init(&wk->rx, wk->fd, !cfg->no_gso);
        if (rc < 0) return rc;
        /* answers leave from the address they were sent to (a switch bound
         * to 0.0.0.0 has several) */
        if (rt_rxq_pktinfo(&wk->rx) < 0)
            return arb_errf(err, errlen, ARB_EIO, "IP_PKTINFO: %s", strerror(errno));
        if (cfg->io == ARB_RT_IO_URING) {
            char why[200];
            rc = rt_uring_attach(&wk->rx, &wk->tx, why, sizeof why);
            if (rc == 0)
                wk->st.io_uring = 1;
            else if (rc == ARB_EIO && k == 0) /* the kernel refuses: the plain path */
                arb_log(&s->cfg.logger, ARB_LOG_WARN, "--io uring: %s; using sendmmsg", why);
            else if (rc != ARB_EIO)
                return arb_errf(err, errlen, rc, "--io uring: %s", why);
        }
    }
    if (many) {
        s->steered = steer(s) == 0;
        if (!s->steered)
            arb_log(&s->cfg.logger, ARB_LOG_WARN,
                    "the kernel refused the steering program (SO_ATTACH_REUSEPORT_CBPF: %s): "
                    "datagrams reach the %u threads by the kernel's hash, and a thread handles "
                    "another's channels under its lock (counted as foreign)",
                    strerror(errno), s->n_workers);
    }
    return 0;
}

int arb_rt_switch_new(arb_rt_switch **out, const arb_rt_switch_config *cfg, char *err,
                      size_t errlen)
{
    if (!out) return ARB_EINVAL;
    *out = NULL;
    if (!cfg || cfg->n_jobs > ARB_RT_SWITCH_MAX_JOBS || cfg->n_peers > ARB_RT_SWITCH_MAX_PEERS ||
        cfg->slots == 0 || cfg->slots > ARB_AGG_SLOTS_MAX || !(cfg->drop >= 0 && cfg->drop < 1) ||
        cfg->spin > RT_SPIN_MAX || cfg->threads > ARB_RT_SWITCH_MAX_THREADS ||
        (cfg->io != ARB_RT_IO_MMSG && cfg->io != ARB_RT_IO_URING) ||
        (cfg->ecn.on &&
         (cfg->ecn.kmin > cfg->ecn.kmax || !(cfg->ecn.pmax >= 0 && cfg->ecn.pmax <= 1))))
        return arb_errf(err, errlen, ARB_EINVAL, "a setting is out of range");
    arb_rt_switch *s = arb_calloc(1, sizeof *s);
    if (!s) return ARB_ENOMEM;
    s->wake_fd = -1;
    s->cfg = *cfg;
    int rc = setup_fabric(s, err, errlen);
    for (uint32_t i = 0; rc == 0 && i < cfg->n_jobs; i++) {
        if (!cfg->jobs[i].secret || !*cfg->jobs[i].secret ||
            strlen(cfg->jobs[i].secret) > ARB_RT_SECRET_MAX) {
            rc = arb_errf(err, errlen, ARB_EINVAL, "job %u has no secret (1..%d bytes)",
                          cfg->jobs[i].id, ARB_RT_SECRET_MAX);
            break;
        }
        for (uint32_t k = 0; k < i; k++)
            if (cfg->jobs[k].id == cfg->jobs[i].id)
                rc = arb_errf(err, errlen, ARB_EINVAL, "job %u given twice", cfg->jobs[i].id);
        s->jobs[i].id = cfg->jobs[i].id;
        if (rc == 0 && rt_key(s->jobs[i].key, cfg->jobs[i].secret) < 0)
            rc = arb_errf(err, errlen, ARB_EIO, "libsodium failed to initialise");
        s->n_jobs = i + 1;
    }
    struct sockaddr_in la;
    if (rc == 0) rc = rt_addr_parse(cfg->listen, ARB_RT_PORT_DEFAULT, &la, err, errlen);
    if (rc == 0) rc = make_threads(s, err, errlen);
    if (rc == 0) rc = open_sockets(s, &la, err, errlen);
    for (uint32_t k = 0; rc == 0 && k < s->n_workers; k++) {
        arb_agg_config ac;
        arb_agg_config_default(&ac);
        ac.slots = cfg->slots;
        ac.ports = s->radix;
        /* the re-credit timer above a process's scheduling delays and
         * below the ranks' own timer floor (ARBOR_TIMER_MIN, 10 ms) */
        ac.recredit_min = RT_RECREDIT_MIN;
        ac.recredit_max = RT_RECREDIT_MAX;
        ac.recredit_order = 0; /* datagrams of several sockets: no port order */
        ac.logger = cfg->logger;
        rc = arb_agg_new(&s->aggs[k], &ac);
        arb_switch_config ec;
        arb_switch_config_default(&ec);
        ec.first_port = s->nd->first_port;
        ec.node = s->node;
        if (rc == 0) rc = arb_switch_new(&s->workers[k].eng, &ec);
    }
    if (rc < 0) {
        arb_rt_switch_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

uint16_t arb_rt_switch_port(const arb_rt_switch *s)
{
    return s ? s->port : 0;
}

_Static_assert(sizeof(arb_rt_switch_stats) % sizeof(uint64_t) == 0,
               "every counter is a uint64_t: the threads' counters are summed as an array");

void arb_rt_switch_get_stats(const arb_rt_switch *s, arb_rt_switch_stats *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t k = 0; k < s->n_workers; k++) {
        const struct sw_worker *wk = &s->workers[k];
        const uint64_t *in = (const uint64_t *)(const void *)&wk->st;
        uint64_t *sum = (uint64_t *)(void *)out;
        for (size_t i = 0; i < sizeof *out / sizeof(uint64_t); i++)
            sum[i] += in[i];
        out->tx_pkts += wk->tx.pkts;
        out->tx_bytes += wk->tx.bytes;
        out->send_errors += wk->tx.errors;
        out->gso_sends += wk->tx.gso_sends;
        out->dropped_tx += wk->tx.drops;
    }
    out->queue_peak = 0; /* the largest, not the sum */
    for (uint32_t k = 0; k < s->n_workers; k++)
        if (s->workers[k].st.queue_peak > out->queue_peak)
            out->queue_peak = s->workers[k].st.queue_peak;
    out->jobs = 0;
    for (uint32_t i = 0; i < s->n_jobs; i++)
        out->jobs += s->jobs[i].size != 0;
}

static struct sjob *find_job(arb_rt_switch *s, uint32_t id)
{
    for (uint32_t i = 0; i < s->n_jobs; i++)
        if (s->jobs[i].id == id) return &s->jobs[i];
    return NULL;
}

/* The job's hosts and plan (size ranks on hosts base ..). 0 or -1. */
static int job_learn(arb_rt_switch *s, struct sjob *j, uint32_t size, uint32_t base)
{
    if (j->size == size && j->base == base) return 0;
    if (size < 2 || size > ARB_PLAN_MAX_RANKS || base > arb_topo_n_hosts(s->t) ||
        size > arb_topo_n_hosts(s->t) - base)
        return -1;
    job_reset(j);
    uint32_t ranks[ARB_PLAN_MAX_RANKS];
    for (uint32_t r = 0; r < size; r++)
        ranks[r] = base + r;
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.coll = ARB_COLL_ALLREDUCE;
    pc.ranks = ranks;
    pc.n_ranks = size;
    pc.bytes = (uint64_t)size * 4;
    if (arb_topo_plan(&j->plan, s->t, &pc, NULL, 0) < 0) return -1;
    j->addr = arb_calloc(size, sizeof *j->addr);
    j->local = arb_calloc(size, sizeof *j->local);
    j->joined = arb_calloc(size, 1);
    j->counter = arb_calloc(size, sizeof *j->counter);
    j->seen = arb_calloc(size, sizeof *j->seen);
    if (!j->addr || !j->local || !j->joined || !j->counter || !j->seen) {
        job_reset(j);
        return -1;
    }
    j->size = size;
    j->base = base;
    return 0;
}

/* The address of ours peer i sends to (0: unknown); any thread may learn
 * it. */
static uint32_t peer_local(const arb_rt_switch *s, uint32_t i)
{
    return __atomic_load_n(&s->peer_local[i], __ATOMIC_RELAXED);
}

/* JOBINFO for job j to every peer. */
static void announce(struct sw_worker *wk, const struct sjob *j)
{
    arb_rt_switch *s = wk->s;
    uint8_t b[RT_JOBINFO_LEN];
    rt_hdr h = {.kind = RT_K_JOBINFO, .job = j->id, .src = RT_SWITCH_RANK};
    rt_hdr_put(b, &h);
    for (int k = 0; k < 4; k++) {
        b[16 + k] = (uint8_t)(j->size >> (24 - 8 * k));
        b[20 + k] = (uint8_t)(j->base >> (24 - 8 * k));
    }
    for (uint32_t i = 0; i < s->n_peers; i++)
        rt_tx_src(&wk->tx, &s->peer_addr[i], peer_local(s, i), b, sizeof b, NULL, 0, 0);
}

/* Answers to anyone (NOTICE, REJECT) share a budget of NOTICES_PER_S a
 * second: a stranger spoofing a victim's address cannot make the switch
 * send the victim more than that. 1 when one may go now. */
static int answer_allowed(arb_rt_switch *s, arb_time now)
{
    pthread_mutex_lock(&s->answer_lock);
    if (now - s->notice_window > ARB_PS_PER_S) {
        s->notice_window = now;
        s->notices = 0;
    }
    int ok = s->notices++ < NOTICES_PER_S;
    pthread_mutex_unlock(&s->answer_lock);
    return ok;
}

/* A REJECT for reason `why`; `more` (NULL: none) the 8 bytes reasons
 * RT_REJECT_SIZE and RT_REJECT_DUPLICATE add. */
static void reject_more(struct sw_worker *wk, const struct sockaddr_in *to, const rt_join *jn,
                        uint8_t why, const uint8_t *more, arb_time now)
{
    arb_rt_switch *s = wk->s;
    wk->st.join_rejected++;
    if (!answer_allowed(s, now)) return;
    uint8_t b[RT_REJECT_LEN];
    rt_hdr h = {
        .kind = RT_K_REJECT, .job = jn->job, .dst = (uint16_t)jn->rank, .src = RT_SWITCH_RANK};
    rt_hdr_put(b, &h);
    b[RT_HDR_LEN] = why;
    if (more) memcpy(b + RT_HDR_LEN + 1, more, 8);
    rt_tx_src(&wk->tx, to, wk->cur_local, b, more ? RT_REJECT_LEN : RT_HDR_LEN + 1, NULL, 0, 0);
}

static void reject(struct sw_worker *wk, const struct sockaddr_in *to, const rt_join *jn,
                   uint8_t why, arb_time now)
{
    reject_more(wk, to, jn, why, NULL, now);
}

/* Some rank of job j is live (heard from within RT_LIVE_WINDOW): its
 * size and host base hold. */
static int job_live(const struct sjob *j, arb_time now)
{
    for (uint32_t r = 0; r < j->size; r++)
        if (j->joined[r] && now - __atomic_load_n(&j->seen[r], __ATOMIC_RELAXED) < RT_LIVE_WINDOW)
            return 1;
    return 0;
}

/* A JOIN that disagrees with the job's live ranks: its size or host base
 * (REJECT_SIZE, with the job's), or its rank joined from another address
 * that is live (REJECT_DUPLICATE, with that address).
 * 1 when refused. Before, the first reset the job's table at every JOIN
 * (each side's ranks blamed the other's as dead) and the second made
 * two processes take the rank's place in turn, timing out naming no one. */
static int join_conflict(struct sw_worker *wk, const struct sockaddr_in *from, struct sjob *j,
                         const rt_join *jn, arb_time now)
{
    uint8_t more[8] = {0};
    if (j->size && (jn->size != j->size || jn->base != j->base) && job_live(j, now)) {
        for (int k = 0; k < 4; k++) {
            more[k] = (uint8_t)(j->size >> (24 - 8 * k));
            more[4 + k] = (uint8_t)(j->base >> (24 - 8 * k));
        }
        reject_more(wk, from, jn, RT_REJECT_SIZE, more, now);
        return 1;
    }
    if (j->size == jn->size && jn->rank < j->size && j->joined[jn->rank] &&
        !rt_addr_eq(from, &j->addr[jn->rank]) &&
        now - __atomic_load_n(&j->seen[jn->rank], __ATOMIC_RELAXED) < RT_LIVE_WINDOW) {
        const struct sockaddr_in *o = &j->addr[jn->rank];
        memcpy(more, &o->sin_addr.s_addr, 4); /* network order already */
        memcpy(more + 4, &o->sin_port, 2);
        reject_more(wk, from, jn, RT_REJECT_DUPLICATE, more, now);
        return 1;
    }
    return 0;
}

static void on_join(struct sw_worker *wk, const struct sockaddr_in *from, const uint8_t *b,
                    size_t len, arb_time now)
{
    arb_rt_switch *s = wk->s;
    rt_join jn;
    if (rt_join_get(&jn, b, len) < 0) {
        wk->st.undecodable++;
        return;
    }
    struct sjob *j = find_job(s, jn.job);
    if (!j) {
        reject(wk, from, &jn, RT_REJECT_JOB, now);
        return;
    }
    if (rt_join_verify(b, len, j->key) < 0) {
        reject(wk, from, &jn, RT_REJECT_MAC, now);
        return;
    }
    if (jn.fabric != s->fabric) {
        reject(wk, from, &jn, RT_REJECT_FABRIC, now);
        return;
    }
    if (join_conflict(wk, from, j, &jn, now)) return;
    uint32_t host = jn.base + jn.rank;
    if (jn.rank >= jn.size || s->nd->level != 1 || host < jn.base ||
        host >= arb_topo_n_hosts(s->t) || !arb_pgft_below(s->g, s->nd, host) ||
        job_learn(s, j, jn.size, jn.base) < 0) {
        reject(wk, from, &jn, RT_REJECT_FIELDS, now);
        return;
    }
    /* a counter below the last one accepted is a replay; the same counter
     * from the same address is a retransmission */
    if (j->joined[jn.rank] &&
        (jn.counter < j->counter[jn.rank] ||
         (jn.counter == j->counter[jn.rank] && !rt_addr_eq(from, &j->addr[jn.rank])))) {
        reject(wk, from, &jn, RT_REJECT_REPLAY, now);
        return;
    }
    if (j->joined[jn.rank] && jn.counter != j->counter[jn.rank]) {
        if (rt_addr_eq(from, &j->addr[jn.rank]))
            wk->st.keepalive_joins++;
        else
            wk->st.rejoins++;
    }
    if (!j->joined[jn.rank] || jn.counter != j->counter[jn.rank]) wk->st.joins++;
    j->joined[jn.rank] = 1;
    __atomic_store_n(&j->seen[jn.rank], now, __ATOMIC_RELAXED);
    j->counter[jn.rank] = jn.counter;
    j->addr[jn.rank] = *from;
    j->local[jn.rank] = wk->cur_local;
    uint8_t w[RT_WELCOME_LEN];
    rt_welcome_put(w, &jn, j->key);
    rt_tx_src(&wk->tx, from, wk->cur_local, w, sizeof w, NULL, 0, 0);
    announce(wk, j);
}

/* The peer index of address a, or -1. */
static int peer_of(const arb_rt_switch *s, const struct sockaddr_in *a)
{
    for (uint32_t i = 0; i < s->n_peers; i++)
        if (rt_addr_eq(&s->peer_addr[i], a)) return (int)i;
    return -1;
}

static void on_jobinfo(struct sw_worker *wk, const struct sockaddr_in *from, const rt_hdr *h,
                       const uint8_t *b, size_t len)
{
    arb_rt_switch *s = wk->s;
    if (peer_of(s, from) < 0) {
        wk->st.strangers++;
        return;
    }
    struct sjob *j = find_job(s, h->job);
    if (len != RT_JOBINFO_LEN || !j) {
        if (!j)
            wk->st.unknown_job++;
        else
            wk->st.undecodable++;
        return;
    }
    uint32_t size = (uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | (uint32_t)b[18] << 8 | b[19];
    uint32_t base = (uint32_t)b[20] << 24 | (uint32_t)b[21] << 16 | (uint32_t)b[22] << 8 | b[23];
    if (job_learn(s, j, size, base) < 0) wk->st.undecodable++;
}

/* A NOTICE to an address the switch does not know (it restarted, or the
 * rank never joined): join again. Rate-limited. */
static void notice(struct sw_worker *wk, const struct sockaddr_in *to, const rt_hdr *h,
                   arb_time now)
{
    arb_rt_switch *s = wk->s;
    if (!answer_allowed(s, now)) return;
    uint8_t b[RT_HDR_LEN];
    rt_hdr n = {.kind = RT_K_NOTICE, .job = h->job, .dst = h->src, .src = RT_SWITCH_RANK};
    rt_hdr_put(b, &n);
    rt_tx_src(&wk->tx, to, wk->cur_local, b, sizeof b, NULL, 0, 0);
}

/* One Arbor packet in flight through the switch. */
struct fwd {
    struct sjob *j;
    rt_hdr rh;
    arb_hdr h;
    const uint8_t *payload;
    size_t plen;
    int copy;     /* payload must be copied (an aggregate) */
    uint32_t agg; /* the aggregator of its channel (its owner's) */
};

/* Send f out of local port p: to the rank or switch at its far end. */
static void send_port(struct sw_worker *wk, const struct fwd *f, uint32_t p)
{
    arb_rt_switch *s = wk->s;
    const struct sockaddr_in *to = NULL;
    uint32_t src = 0;
    int to_switch = 0;
    if (p < s->radix) {
        uint32_t peer = s->ports[s->nd->first_port + p].peer;
        if (peer < arb_topo_n_hosts(s->t)) {
            uint32_t r = peer - f->j->base;
            if (peer >= f->j->base && r < f->j->size && f->j->joined[r]) {
                to = &f->j->addr[r];
                src = f->j->local[r];
            }
        } else if (s->port_peer[p] >= 0) {
            to = &s->peer_addr[s->port_peer[p]];
            to_switch = 1;
            src = peer_local(s, (uint32_t)s->port_peer[p]);
        }
    }
    if (!to) {
        wk->st.unroutable++;
        return;
    }
    size_t hl = 0;
    rt_hdr_put(wk->head, &f->rh);
    if (arb_hdr_encode(&f->h, f->plen, wk->head + RT_HDR_LEN, ARB_HDR_LEN_LONG, &hl) < 0) {
        wk->st.undecodable++;
        return;
    }
    wk->tx.by_channel = to_switch; /* a peer switch may steer by channel */
    rt_tx_src(&wk->tx, to, src, wk->head, RT_HDR_LEN + hl, f->payload, f->plen, f->copy);
}

/* Unicast toward host `host`: down toward it when it is below, else up. */
static void unicast(struct sw_worker *wk, const struct fwd *f, uint32_t host)
{
    arb_rt_switch *s = wk->s;
    if (arb_pgft_below(s->g, s->nd, host)) {
        send_port(wk, f, arb_pgft_down_port(s->g, s->nd, host) - s->nd->first_port);
        return;
    }
    if (s->nd->n_up == 0) {
        wk->st.unroutable++;
        return;
    }
    send_port(wk, f, s->nd->n_down); /* up port 0 */
}

/* The aggregator's channel identity: job, tree (subchannel), channel and
 * message, each in its own bits (a job's channels and subchannels are
 * fewer than 2^16 and 2^8). */
static uint64_t chan_id(const struct fwd *f)
{
    return (uint64_t)f->j->id << 32 | (uint64_t)(f->rh.sub & 0xFF) << 24 |
           (uint64_t)f->rh.channel << 8 | f->h.message_id;
}

static uint32_t local(const arb_rt_switch *s, uint32_t global_port)
{
    return global_port == ARB_PLAN_NONE ? NONE : global_port - s->nd->first_port;
}

/* A packet of a tree (a credit, or a normal request climbing), through the
 * switch engine: what it decided, sent. */
static void on_tree(struct sw_worker *wk, struct fwd *f, const arb_plan_entry *e, uint32_t in,
                    uint32_t resp_host, arb_time now)
{
    arb_rt_switch *s = wk->s;
    arb_switch_packet pk = {.hdr = &f->h,
                            .payload = f->payload,
                            .payload_len = f->plen,
                            .channel = chan_id(f),
                            .port = in + s->nd->first_port,
                            .ce = (f->rh.flags & RT_F_CE) != 0};
    int credit = f->h.packet_type == ARB_PT_RESPONSE;
    if (!credit) wk->st.requests++;
    arb_switch_action act;
    if (arb_switch_recv(wk->eng, s->aggs[f->agg], f->j->plan, e, &pk, now, &act) < 0) {
        wk->st.agg_drops++;
        return;
    }
    if (credit && (act.agg_called || act.error)) wk->st.credits++;
    if (act.agg_called && act.agg.reason == ARB_AGG_R_ADOPT) wk->st.adoptions++;
    if (act.agg_called && act.agg.reason == ARB_AGG_R_REPLAY) wk->st.replays++;
    if (act.error || (act.agg_called &&
                      ((credit && act.verb == ARB_SWITCH_DROP) || act.agg.action == ARB_AGG_DROP)))
        wk->st.agg_drops++;
    if (act.made) {
        if (credit) f->rh.dst_kind = 0; /* an earlier attempt's aggregate in its place */
        f->payload = pk.payload;
        f->plen = pk.payload_len;
        f->copy = pk.payload != NULL; /* an aggregate: in the aggregator's slot */
        f->rh.flags = (uint8_t)(RT_F_SWITCH | (pk.ce ? RT_F_CE : 0));
        f->rh.src = RT_SWITCH_RANK;
        if (act.agg.action == ARB_AGG_EMIT_MISS)
            wk->st.agg_miss++;
        else
            wk->st.aggregates++;
    } else if (act.aggregated) {
        f->rh.flags |= RT_F_SWITCH;
    }
    switch (act.verb) {
    case ARB_SWITCH_UP:
        send_port(wk, f, local(s, act.port));
        return;
    case ARB_SWITCH_CHILDREN:
        for (uint32_t c = 0; c < act.n_ports; c++)
            send_port(wk, f, local(s, act.ports[c]));
        if (act.n_ports > 1) wk->st.copies += act.n_ports - 1;
        return;
    case ARB_SWITCH_UNICAST:
        unicast(wk, f, resp_host);
        return;
    default: /* DROP, CONSUMED */
        return;
    }
}

/* Local repair: the credits this worker's aggregator wants sent again to
 * the ranks still missing (arb_switch_expire), each as its tree's group
 * packet from the switch. Under the jobs lock (read). */
static void recredit(struct sw_worker *wk, arb_time now)
{
    arb_rt_switch *s = wk->s;
    arb_agg *agg = s->aggs[wk->id];
    if (arb_switch_next_expiry(wk->eng, agg) > now) return;
    if (s->n_workers > 1) pthread_mutex_lock(&s->agg_lock[wk->id]);
    arb_switch_recredit rc;
    while (arb_switch_expire(wk->eng, agg, now, &rc) == 1) {
        struct fwd f;
        memset(&f, 0, sizeof f);
        f.j = find_job(s, (uint32_t)(rc.channel >> 32)); /* chan_id's fields */
        if (!f.j || !f.j->size) continue;
        f.rh = (rt_hdr){.kind = RT_K_ARBOR,
                        .flags = (uint8_t)(RT_F_SWITCH | (rc.ce ? RT_F_CE : 0)),
                        .dst_kind = 1,
                        .job = f.j->id,
                        .channel = (uint16_t)(rc.channel >> 8),
                        .sub = (uint16_t)(rc.channel >> 24 & 0xFF),
                        .src = RT_SWITCH_RANK};
        f.h = rc.hdr;
        f.payload = rc.payload;
        f.plen = rc.payload_len;
        f.copy = rc.payload != NULL; /* it lives in the aggregator */
        for (uint32_t c = 0; c < rc.n_ports; c++)
            send_port(wk, &f, local(s, rc.ports[c]));
        wk->st.recredits++;
    }
    if (s->n_workers > 1) pthread_mutex_unlock(&s->agg_lock[wk->id]);
}

/* When this worker's next re-credit is due, or ARB_TIME_NEVER. */
static arb_time recredit_due(const struct sw_worker *wk)
{
    return arb_switch_next_expiry(wk->eng, wk->s->aggs[wk->id]);
}

/* With several threads, the aggregator of f's channel is locked while an
 * entry that aggregates handles f (uncontended unless f reached another
 * thread than its channel's owner). */
static void agg_lock(arb_rt_switch *s, const struct fwd *f, const arb_plan_entry *e)
{
    if (s->n_workers > 1 && e->aggregate) pthread_mutex_lock(&s->agg_lock[f->agg]);
}

static void agg_unlock(arb_rt_switch *s, const struct fwd *f, const arb_plan_entry *e)
{
    if (s->n_workers > 1 && e->aggregate) pthread_mutex_unlock(&s->agg_lock[f->agg]);
}

/* ECN: mark a datagram of the batch CE with the batch's probability
 * (requests carry it into their aggregate, credits into the requests that
 * answer them). */
static void mark(struct sw_worker *wk, rt_hdr *rh)
{
    if (wk->mark_p <= 0 || (rh->flags & RT_F_CE)) return;
    if (wk->mark_p < 1 && arb_rng_double(&wk->ecn_rng) >= wk->mark_p) return;
    rh->flags |= RT_F_CE;
    wk->st.ecn_marks++;
}

/* After a batch is read: the bytes still queued behind it (the queue's
 * peak) set the marking probability of its datagrams. */
static void measure_queue(struct sw_worker *wk)
{
    int64_t q = rt_rx_queued(&wk->rx);
    if (q < 0) {
        wk->mark_p = 0;
        return;
    }
    if ((uint64_t)q > wk->st.queue_peak) wk->st.queue_peak = (uint64_t)q;
    wk->st.queue_reads++;
    wk->st.queue_sum += (uint64_t)q;
    wk->mark_p = rt_ecn_p(&wk->s->cfg.ecn, (uint64_t)q);
}

static void on_arbor(struct sw_worker *wk, const struct sockaddr_in *from, const rt_hdr *rh,
                     uint8_t *b, size_t len, arb_time now)
{
    arb_rt_switch *s = wk->s;
    struct fwd f;
    memset(&f, 0, sizeof f);
    f.rh = *rh;
    f.j = find_job(s, rh->job);
    if (!f.j || !f.j->size) {
        wk->st.unknown_job++;
        if (f.j && peer_of(s, from) < 0) notice(wk, from, rh, now);
        return;
    }
    /* the arrival port: a peer switch's, or the port of an admitted rank */
    uint32_t in;
    int peer = peer_of(s, from);
    if (peer >= 0) {
        in = s->peer_port[peer];
    } else {
        uint32_t r = rh->src;
        if (r >= f.j->size || !f.j->joined[r] || !rt_addr_eq(from, &f.j->addr[r])) {
            wk->st.strangers++;
            notice(wk, from, rh, now);
            return;
        }
        in = arb_pgft_down_port(s->g, s->nd, f.j->base + r) - s->nd->first_port;
        /* several threads: any of them may write it, none reads it but a JOIN */
        __atomic_store_n(&f.j->seen[r], now, __ATOMIC_RELAXED);
    }
    size_t off;
    if (in == NONE || arb_hdr_decode(&f.h, b + RT_HDR_LEN, len - RT_HDR_LEN, &off) < 0) {
        wk->st.undecodable++;
        return;
    }
    f.payload = b + RT_HDR_LEN + off;
    f.plen = len - RT_HDR_LEN - off;
    if (rh->channel >= f.j->size) {
        wk->st.unknown_channel++;
        return;
    }
    uint32_t resp_host = f.j->base + rh->channel;
    mark(wk, &f.rh);
    f.agg = owner_of(s, f.j->id, rh->channel);
    if (f.agg != wk->id) wk->st.foreign++;
    if (rh->dst_kind == 1) { /* group */
        const arb_plan_entry *e = arb_plan_find_sub(f.j->plan, rh->channel, rh->sub, s->node);
        if (!e || f.h.packet_type != ARB_PT_RESPONSE) {
            wk->st.unknown_channel++;
            return;
        }
        agg_lock(s, &f, e);
        on_tree(wk, &f, e, in, resp_host, now);
        agg_unlock(s, &f, e);
    } else if (rh->dst_kind == 0) { /* responder */
        if (f.h.packet_type == ARB_PT_DATA_REQUEST && !f.h.repair && f.h.agg_depth > 0) {
            const arb_plan_entry *e = arb_plan_find_sub(f.j->plan, rh->channel, rh->sub, s->node);
            if (!e) {
                wk->st.unknown_channel++;
                return;
            }
            /* held until what it emits is queued: an aggregate's payload
             * is in the aggregator's slot until then */
            agg_lock(s, &f, e);
            on_tree(wk, &f, e, in, resp_host, now);
            agg_unlock(s, &f, e);
        } else {
            unicast(wk, &f, resp_host);
        }
    } else if (rh->dst_kind == 2 && rh->dst < f.j->size) { /* member */
        unicast(wk, &f, f.j->base + rh->dst);
    } else {
        wk->st.unknown_channel++;
    }
}

static void on_datagram(struct sw_worker *wk, const struct sockaddr_in *from, uint32_t local,
                        uint8_t *b, size_t len, arb_time now)
{
    arb_rt_switch *s = wk->s;
    rt_hdr h;
    wk->st.rx_pkts++;
    wk->st.rx_bytes += len;
    wk->cur_local = local;
    if (local) {
        int peer = peer_of(s, from);
        if (peer >= 0 && peer_local(s, (uint32_t)peer) != local)
            __atomic_store_n(&s->peer_local[peer], local, __ATOMIC_RELAXED);
    }
    if (rt_hdr_get(&h, b, len) < 0) {
        wk->st.undecodable++;
        return;
    }
    switch (h.kind) {
    case RT_K_ARBOR:
        on_arbor(wk, from, &h, b, len, now);
        break;
    case RT_K_JOIN:
        on_join(wk, from, b, len, now);
        break;
    case RT_K_JOBINFO:
        on_jobinfo(wk, from, &h, b, len);
        break;
    default:
        wk->st.undecodable++;
        break;
    }
}

/* JOIN and JOBINFO may change the job table: they take its write side. */
static int writes_jobs(const uint8_t *b, size_t len)
{
    return len >= RT_HDR_LEN && b[0] == RT_MAGIC && (b[1] == RT_K_JOIN || b[1] == RT_K_JOBINFO);
}

/* Handle one datagram; the caller holds the job table's read side, which
 * a JOIN or JOBINFO trades for the write side while it is handled. */
static void handle(struct sw_worker *wk, const struct sockaddr_in *from, uint32_t local, uint8_t *b,
                   size_t len, arb_time now)
{
    if (!writes_jobs(b, len)) {
        on_datagram(wk, from, local, b, len, now);
        return;
    }
    pthread_rwlock_unlock(&wk->s->jobs_lock);
    pthread_rwlock_wrlock(&wk->s->jobs_lock);
    on_datagram(wk, from, local, b, len, now);
    pthread_rwlock_unlock(&wk->s->jobs_lock);
    pthread_rwlock_rdlock(&wk->s->jobs_lock);
}

void rt_switch_feed_on(arb_rt_switch *s, uint32_t k, const struct sockaddr_in *from, uint8_t *b,
                       size_t len, arb_time now)
{
    struct sw_worker *wk = &s->workers[k < s->n_workers ? k : 0];
    pthread_rwlock_rdlock(&s->jobs_lock);
    handle(wk, from, 0, b, len, now);
    pthread_rwlock_unlock(&s->jobs_lock);
}

void rt_switch_flush_on(arb_rt_switch *s, uint32_t k)
{
    rt_tx_flush(&s->workers[k < s->n_workers ? k : 0].tx);
}

void rt_switch_feed(arb_rt_switch *s, const struct sockaddr_in *from, uint8_t *b, size_t len,
                    arb_time now)
{
    rt_switch_feed_on(s, 0, from, b, len, now);
}

void rt_switch_flush(arb_rt_switch *s)
{
    rt_switch_flush_on(s, 0);
}

uint32_t rt_switch_threads(const arb_rt_switch *s)
{
    return s->n_workers;
}

int rt_switch_steered(const arb_rt_switch *s)
{
    return s->steered;
}

void rt_switch_tap(arb_rt_switch *s, arb_switch_tap tap, void *ctx)
{
    for (uint32_t k = 0; k < s->n_workers; k++)
        arb_switch_set_tap(s->workers[k].eng, tap, ctx);
}

void rt_switch_mute(arb_rt_switch *s)
{
    for (uint32_t k = 0; k < s->n_workers; k++) {
        struct sw_worker *wk = &s->workers[k];
        if (wk->fd >= 0) close(wk->fd);
        wk->fd = -1;
        wk->tx.fd = -1;
        wk->rx.fd = -1;
    }
}

const struct arb_agg *rt_switch_agg(const arb_rt_switch *s)
{
    return s->aggs[0];
}

/* Worker 0 repeats every job it knows to its peers (JOBINFO). */
static void periodic(struct sw_worker *wk, arb_time now)
{
    arb_rt_switch *s = wk->s;
    if (now - s->last_announce < ANNOUNCE_EVERY) return;
    s->last_announce = now;
    pthread_rwlock_rdlock(&s->jobs_lock);
    for (uint32_t i = 0; i < s->n_jobs; i++)
        if (s->jobs[i].size) announce(wk, &s->jobs[i]);
    pthread_rwlock_unlock(&s->jobs_lock);
    rt_tx_flush(&wk->tx);
}

/* Once, when it starts serving: every switch linked to this one must be a
 * peer, or what must cross that link is dropped (unroutable). Warned
 * through the logger, naming each. */
static void check_peers(arb_rt_switch *s)
{
    s->peers_checked = 1;
    for (uint32_t p = 0; p < s->radix; p++) {
        uint32_t other = s->ports[s->nd->first_port + p].peer;
        if (other < arb_topo_n_hosts(s->t) || s->port_peer[p] >= 0) continue;
        int seen = 0; /* name each switch once (parallel links) */
        for (uint32_t q = 0; q < p && !seen; q++)
            seen = s->ports[s->nd->first_port + q].peer == other;
        if (seen) continue;
        const arb_node *o = &s->nodes[other];
        arb_log(&s->cfg.logger, ARB_LOG_WARN,
                "node %u.%u of %s is linked to switch %u.%u (%s), which is no peer: what must "
                "cross that link is dropped as unroutable (give its address as a peer, "
                "%u.%u=HOST:PORT)",
                s->nd->level, s->nd->index, s->cfg.topo, o->level, o->index,
                o->level > s->nd->level ? "above" : "below", o->level, o->index);
    }
}

/* One worker's loop: receive a batch, handle it, send what it made; until
 * `wait` passed, *stop (worker 0, the caller's thread) or the switch's
 * quit (the others, woken through wake_fd). */
static void serve(struct sw_worker *wk, arb_time wait, volatile int *stop)
{
    arb_rt_switch *s = wk->s;
    arb_time start = rt_now();
    for (;;) {
        int n = rt_rx(&wk->rx);
        arb_time now = rt_now();
        if (n > 0) measure_queue(wk);
        pthread_rwlock_rdlock(&s->jobs_lock);
        for (int i = 0; i < n; i++)
            handle(wk, wk->rx.dg[i].from, wk->rx.dg[i].local, wk->rx.dg[i].buf, wk->rx.dg[i].len,
                   now);
        recredit(wk, now);
        pthread_rwlock_unlock(&s->jobs_lock);
        rt_tx_flush(&wk->tx);
        if (wk->id == 0) {
            periodic(wk, now);
            if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE)) return;
        } else if (__atomic_load_n(&s->quit, __ATOMIC_ACQUIRE)) {
            return;
        }
        if (wait != ARB_TIME_NEVER && now - start >= wait) return;
        if (n > 0) continue;
        arb_time left = wait == ARB_TIME_NEVER ? 100 * ARB_PS_PER_MS : wait - (now - start);
        if (left > 100 * ARB_PS_PER_MS) left = 100 * ARB_PS_PER_MS;
        arb_time due = recredit_due(wk);
        if (due != ARB_TIME_NEVER && due - now < left) left = due > now ? due - now : 0;
        if (rt_rxq_wait(&wk->rx, wk->id ? s->wake_fd : -1, left, s->cfg.spin)) wk->st.waits++;
    }
}

static void *worker_main(void *arg)
{
    struct sw_worker *wk = arg;
    serve(wk, wk->wait, NULL);
    return NULL;
}

int arb_rt_switch_run(arb_rt_switch *s, arb_time wait, volatile int *stop)
{
    if (!s) return ARB_EINVAL;
    if (!s->peers_checked) check_peers(s);
    if (s->n_workers == 1 || wait == 0) {
        /* what is queued now: every socket in turn, in this thread */
        for (uint32_t k = 0; k < s->n_workers; k++)
            serve(&s->workers[k], wait, stop);
        return 0;
    }
    __atomic_store_n(&s->quit, 0, __ATOMIC_RELEASE);
    /* the helpers block every signal: a SIGINT or SIGTERM reaches the
     * caller's thread, which reads *stop */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    uint32_t started = 1;
    int rc = 0;
    for (; started < s->n_workers; started++) {
        struct sw_worker *wk = &s->workers[started];
        wk->wait = wait;
        if (pthread_create(&wk->thread, NULL, worker_main, wk) != 0) {
            rc = ARB_ENOMEM;
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) serve(&s->workers[0], wait, stop);
    __atomic_store_n(&s->quit, 1, __ATOMIC_RELEASE);
    uint64_t one = 1;
    if (write(s->wake_fd, &one, sizeof one) < 0) { /* a full counter wakes them too */
    }
    for (uint32_t k = 1; k < started; k++)
        pthread_join(s->workers[k].thread, NULL);
    uint64_t drain;
    if (read(s->wake_fd, &drain, sizeof drain) < 0) { /* nothing was written */
    }
    return rc;
}
