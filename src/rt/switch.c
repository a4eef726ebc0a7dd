/*
 * The software aggregation switch (rt.h, docs/runtime.md): one node of a
 * PGFT fabric. It admits ranks whose JOIN verifies under their job's
 * secret, holds one aggregator engine (one slot pool for every job) and,
 * per job, the planner's tree entries for its node; it replicates credits
 * down the trees, aggregates requests on their way up, and forwards
 * everything else toward its destination host. Packets from anyone who is
 * neither an admitted rank nor a peer switch, packets that do not decode,
 * and packets for unknown jobs or channels are dropped and counted.
 *
 * This file: its set-up, statistics and serving loop; the job table is
 * switch_job.c's, the data path switch_fwd.c's (src/rt/switch_int.h).
 */
#define _GNU_SOURCE
#include "rt/switch_int.h"

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

void arb_rt_switch_free(arb_rt_switch *s)
{
    if (!s) return;
    for (uint32_t i = 0; i < s->n_jobs; i++)
        rt_sw_job_reset(&s->jobs[i]);
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
uint32_t rt_sw_owner_of(const arb_rt_switch *s, uint32_t job, uint32_t channel)
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

void rt_switch_feed_on(arb_rt_switch *s, uint32_t k, const struct sockaddr_in *from, uint8_t *b,
                       size_t len, arb_time now)
{
    struct sw_worker *wk = &s->workers[k < s->n_workers ? k : 0];
    pthread_rwlock_rdlock(&s->jobs_lock);
    rt_sw_handle(wk, from, 0, b, len, now);
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
        if (s->jobs[i].size) rt_sw_announce(wk, &s->jobs[i]);
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
        if (n > 0) rt_sw_measure_queue(wk);
        pthread_rwlock_rdlock(&s->jobs_lock);
        for (int i = 0; i < n; i++)
            rt_sw_handle(wk, wk->rx.dg[i].from, wk->rx.dg[i].local, wk->rx.dg[i].buf,
                         wk->rx.dg[i].len, now);
        rt_sw_recredit(wk, now);
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
        arb_time due = rt_sw_recredit_due(wk);
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
