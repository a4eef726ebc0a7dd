/*
 * The runtime's communicator (rt.h, docs/runtime.md): one rank of a job on
 * one UDP socket to its switch. Every collective call plans the
 * collective, makes this rank's engines through the rank driver
 * (src/host) on the user's buffers, and is progressed by the library's
 * calls; packets travel in the runtime header (rt_int.h) through the
 * switch, which is the only address a rank accepts datagrams from.
 */
#define _GNU_SOURCE
#include "arbor/plan.h"
#include "arbor/rt.h"
#include "arbor/topo.h"
#include "host/host.h"
#include "rt/rt_int.h"

#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CALLS 8   /* calls in flight or lingering */
#define STASH_MAX 512 /* REGISTERs that came before their call */
#define REJOIN_SILENCE (50 * ARB_PS_PER_MS)
#define JOIN_RETRY (100 * ARB_PS_PER_MS)
/* After the last call a rank keeps answering until its switch has been
 * quiet this long: a peer whose request or acknowledgement was lost in the
 * last collective repairs it through this rank (repair credits repeat at
 * most every timer ceiling, 50 ms). */
#define LINGER_QUIET (150 * ARB_PS_PER_MS)

/* One collective call: its plan and this rank's engines. */
struct arb_rt_request {
    arb_rt_comm *c;
    struct arb_rt_request *next;
    uint8_t msg;
    arb_coll coll;
    arb_plan *plan;
    arb_host *host;
    int16_t ep_of[ARB_PLAN_MAX_RANKS]; /* per responder rank: our engine, or -1 */
    arb_time deadline;
    int done;     /* this rank's output is complete */
    int err;      /* the call failed (before done) */
    int released; /* the user waited: free once the engines finished */
    int finished; /* every engine finished */
    /* AllReduce: this rank's responder commits into `cache` (the result
     * cache its tails are replayed from, which must outlive the call) and
     * each commit is copied to the user's buffer at `user_out`. */
    uint8_t *cache;
    uint8_t *user_out;
};

struct stash {
    uint8_t msg;
    uint16_t src;
    arb_hdr h;
};

struct arb_rt_comm {
    arb_rt_config cfg;
    int fd;
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
    int failed;
    int any_failed; /* a call failed: the job cannot finish, no lingering at the end */
    arb_rt_stats st;
    uint8_t head[RT_HDR_LEN + ARB_HDR_LEN_LONG];
    char err[256];
};

static int fail(arb_rt_comm *c, int rc, const char *fmt, ...) ARB_PRINTF(3, 4);
static int fail(arb_rt_comm *c, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    arb_log(&c->cfg.logger, ARB_LOG_ERROR, "rank %u: %s", c->cfg.rank, c->err);
    return rc;
}

void arb_rt_config_default(arb_rt_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->rank = 0;
    cfg->size = 2;
    cfg->sw = "127.0.0.1:17470";
    cfg->job = 1;
    cfg->topo = ARB_RT_TOPO_DEFAULT;
    cfg->timeout = ARB_RT_TIMEOUT_DEFAULT;
    cfg->window = 16;
    cfg->payload = ARB_PAYLOAD_MAX;
    cfg->timeout_min = 10 * ARB_PS_PER_MS;
    cfg->timeout_max = 200 * ARB_PS_PER_MS;
    cfg->repair_tries = 16;
}

static int env_u32(const char *name, uint32_t *out, uint64_t max, char *err, size_t errlen)
{
    const char *v = getenv(name);
    uint64_t x;
    if (!v) return 0;
    if (arb_parse_u64(v, strlen(v), max, &x) < 0)
        return arb_errf(err, errlen, ARB_EPARSE, "%s='%s': not a whole number 0..%llu", name, v,
                        (unsigned long long)max);
    *out = (uint32_t)x;
    return 0;
}

int arb_rt_config_env(arb_rt_config *cfg, char *err, size_t errlen)
{
    int rc = 0;
    if (!cfg) return ARB_EINVAL;
    if (rc == 0) rc = env_u32("ARBOR_RANK", &cfg->rank, 255, err, errlen);
    if (rc == 0) rc = env_u32("ARBOR_SIZE", &cfg->size, 256, err, errlen);
    if (rc == 0) rc = env_u32("ARBOR_JOB", &cfg->job, UINT32_MAX, err, errlen);
    if (rc == 0) rc = env_u32("ARBOR_HOST_BASE", &cfg->host_base, ARB_TOPO_MAX_HOSTS, err, errlen);
    if (rc == 0) rc = env_u32("ARBOR_WINDOW", &cfg->window, 4096, err, errlen);
    if (rc == 0) rc = env_u32("ARBOR_PAYLOAD", &cfg->payload, ARB_PAYLOAD_MAX, err, errlen);
    if (rc < 0) return rc;
    const char *v;
    if ((v = getenv("ARBOR_SWITCH"))) cfg->sw = v;
    if ((v = getenv("ARBOR_SECRET"))) cfg->secret = v;
    if ((v = getenv("ARBOR_TOPO"))) cfg->topo = v;
    if ((v = getenv("ARBOR_BIND"))) cfg->bind = v;
    if ((v = getenv("ARBOR_TIMEOUT"))) {
        arb_time t;
        if (arb_topo_parse_time(v, &t) < 0 || t == 0)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "ARBOR_TIMEOUT='%s': not a duration such as 30s or 500ms", v);
        cfg->timeout = t;
    }
    if ((v = getenv("ARBOR_DROP"))) {
        char *end;
        double d = strtod(v, &end);
        if (end == v || *end || !(d >= 0 && d < 1))
            return arb_errf(err, errlen, ARB_EPARSE, "ARBOR_DROP='%s': not a fraction in [0, 1)",
                            v);
        cfg->drop = d;
    }
    if ((v = getenv("ARBOR_TIMER_MIN"))) {
        arb_time t;
        if (arb_topo_parse_time(v, &t) < 0 || t < ARB_EP_TIMER_MIN)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "ARBOR_TIMER_MIN='%s': not a duration of 1us or more", v);
        cfg->timeout_min = t;
    }
    if ((v = getenv("ARBOR_GSO"))) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return arb_errf(err, errlen, ARB_EPARSE, "ARBOR_GSO='%s': want 0 or 1", v);
        cfg->no_gso = *v == '0';
    }
    if ((v = getenv("ARBOR_SEED"))) {
        uint64_t s;
        if (arb_parse_u64(v, strlen(v), UINT64_MAX, &s) < 0)
            return arb_errf(err, errlen, ARB_EPARSE, "ARBOR_SEED='%s': not a whole number", v);
        cfg->seed = s;
    }
    return 0;
}

uint32_t arb_rt_rank(const arb_rt_comm *c)
{
    return c->cfg.rank;
}
uint32_t arb_rt_size(const arb_rt_comm *c)
{
    return c->cfg.size;
}
const char *arb_rt_errmsg(const arb_rt_comm *c)
{
    return c ? c->err : "";
}

void arb_rt_get_stats(const arb_rt_comm *c, arb_rt_stats *out)
{
    *out = c->st;
    out->tx_pkts = c->tx.pkts;
    out->tx_bytes = c->tx.bytes;
    out->dropped_tx = c->tx.drops;
    out->send_errors = c->tx.errors;
    out->gso_sends = c->tx.gso_sends;
}

double arb_rt_busbw_factor(arb_coll coll, uint32_t n)
{
    if (n == 0) return 0;
    switch (coll) {
    case ARB_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case ARB_COLL_REDUCESCATTER:
    case ARB_COLL_ALLGATHER:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

/* ---- joining ---------------------------------------------------------- */

static void send_join(arb_rt_comm *c, arb_time now)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ctr = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    c->join.counter = ctr > c->join.counter ? ctr : c->join.counter + 1;
    randombytes_buf(c->join.nonce, RT_NONCE_LEN);
    uint8_t b[RT_JOIN_LEN];
    rt_join_put(b, &c->join, c->key);
    rt_tx(&c->tx, &c->sw, b, sizeof b, NULL, 0, 1);
    rt_tx_flush(&c->tx);
    c->last_join = now;
}

static const char *reject_reason(uint8_t why)
{
    switch (why) {
    case RT_REJECT_JOB:
        return "the switch admits no such job";
    case RT_REJECT_MAC:
        return "the JOIN's MAC did not verify (wrong secret)";
    case RT_REJECT_FIELDS:
        return "rank, size or host base do not fit the switch's fabric";
    case RT_REJECT_REPLAY:
        return "the JOIN looked like a replay";
    default:
        return "refused";
    }
}

/* Join and wait for the WELCOME (at most cfg.timeout). */
static int join_switch(arb_rt_comm *c)
{
    arb_time start = rt_now(), now = start;
    c->last_join = 0;
    while (now - start < c->cfg.timeout) {
        if (c->last_join == 0 || now - c->last_join >= JOIN_RETRY) send_join(c, now);
        rt_wait_readable(c->fd, JOIN_RETRY - (now - c->last_join));
        int n = rt_rx(&c->rx);
        for (int i = 0; i < n; i++) {
            const uint8_t *b = c->rx.dg[i].buf;
            size_t len = c->rx.dg[i].len;
            rt_hdr h;
            if (!rt_addr_eq(c->rx.dg[i].from, &c->sw) || rt_hdr_get(&h, b, len) < 0) continue;
            if (h.kind == RT_K_WELCOME && rt_welcome_verify(b, len, &c->join, c->key) == 0)
                return 0;
            if (h.kind == RT_K_REJECT && len > RT_HDR_LEN && h.job == c->cfg.job &&
                h.dst == c->cfg.rank)
                return fail(c, ARB_ESTATE, "switch %s refused job %u rank %u: %s", c->cfg.sw,
                            c->cfg.job, c->cfg.rank, reject_reason(b[RT_HDR_LEN]));
        }
        now = rt_now();
    }
    return fail(c, ARB_ETIMEDOUT,
                "switch %s did not answer the JOIN of job %u rank %u within %.3f s", c->cfg.sw,
                c->cfg.job, c->cfg.rank, (double)c->cfg.timeout / ARB_PS_PER_S);
}

int arb_rt_comm_new(arb_rt_comm **out, const arb_rt_config *cfg, char *err, size_t errlen)
{
    if (!out) return ARB_EINVAL;
    *out = NULL;
    if (!cfg) return ARB_EINVAL;
    if (cfg->size < 2 || cfg->size > ARB_PLAN_MAX_RANKS || cfg->rank >= cfg->size)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "rank %u of size %u: want 0 <= rank < size, size 2..%d", cfg->rank,
                        cfg->size, ARB_PLAN_MAX_RANKS);
    if (!cfg->secret || !*cfg->secret || strlen(cfg->secret) > ARB_RT_SECRET_MAX)
        return arb_errf(err, errlen, ARB_EINVAL, "no job secret (ARBOR_SECRET, 1..%d bytes)",
                        ARB_RT_SECRET_MAX);
    if (cfg->timeout < ARB_PS_PER_MS || cfg->window == 0 || cfg->payload == 0 ||
        cfg->payload > ARB_PAYLOAD_MAX || cfg->payload % 8 || !(cfg->drop >= 0 && cfg->drop < 1) ||
        cfg->timeout_min < ARB_EP_TIMER_MIN || cfg->timeout_max < cfg->timeout_min ||
        cfg->repair_tries == 0 || cfg->repair_tries > 64)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "timeout below 1 ms, window 0, payload not a multiple of 8 in 8..8192, "
                        "drop outside [0, 1), timer floor above ceiling, repair tries not 1..64");
    arb_rt_comm *c = calloc(1, sizeof *c);
    if (!c) return ARB_ENOMEM;
    c->cfg = *cfg;
    c->fd = -1;
    if (!c->cfg.topo) c->cfg.topo = ARB_RT_TOPO_DEFAULT;
    int rc = rt_addr_parse(cfg->sw, ARB_RT_PORT_DEFAULT, &c->sw, err, errlen);
    if (rc == 0) rc = arb_topo_new(&c->topo, c->cfg.topo, NULL, err, errlen);
    if (rc == 0 && (cfg->host_base > arb_topo_n_hosts(c->topo) ||
                    cfg->size > arb_topo_n_hosts(c->topo) - cfg->host_base))
        rc = arb_errf(err, errlen, ARB_EINVAL, "%u ranks from host %u do not fit %s (%u hosts)",
                      cfg->size, cfg->host_base, c->cfg.topo, arb_topo_n_hosts(c->topo));
    struct sockaddr_in bind_to, *bp = NULL;
    if (rc == 0 && cfg->bind) {
        rc = rt_addr_parse(cfg->bind, 0, &bind_to, err, errlen);
        bp = &bind_to;
    }
    if (rc == 0) {
        c->fd = rt_socket(bp, 32 << 20, err, errlen);
        if (c->fd < 0) rc = c->fd;
    }
    if (rc == 0)
        rc = rt_txq_init(&c->tx, c->fd, cfg->drop, cfg->seed * 257 + cfg->rank, !cfg->no_gso);
    if (rc == 0) rc = rt_rxq_init(&c->rx, c->fd, !cfg->no_gso);
    if (rc == 0 && rt_key(c->key, cfg->secret) < 0)
        rc = arb_errf(err, errlen, ARB_EIO, "libsodium failed to initialise");
    if (rc == 0) {
        for (uint32_t r = 0; r < cfg->size; r++)
            c->ranks[r] = cfg->host_base + r;
        c->join.job = cfg->job;
        c->join.rank = cfg->rank;
        c->join.size = cfg->size;
        c->join.base = cfg->host_base;
        rc = join_switch(c);
        if (rc < 0) snprintf(err, errlen, "%s", c->err);
    }
    if (rc < 0) {
        arb_rt_comm_free(c);
        return rc;
    }
    c->last_rx = rt_now();
    for (uint32_t r = 0; r < cfg->size; r++)
        c->heard[r] = c->last_rx;
    *out = c;
    return 0;
}

/* ---- calls ---------------------------------------------------------- */

static void call_free(struct arb_rt_request *k)
{
    if (!k) return;
    for (uint32_t x = 0; k->host && x < k->host->n_eps; x++) {
        arb_hep *e = arb_host_ep(k->host, x);
        if (!e->r) continue;
        arb_responder_stats st;
        arb_responder_get_stats(e->r, &st);
        arb_rt_stats *o = &k->c->st;
        o->credits += st.credits;
        o->retries += st.retries;
        o->spurious += st.spurious;
        o->tail_replays += st.tail_replays;
        o->repair_credits += st.repair_credits;
    }
    arb_host_free(k->host);
    arb_plan_free(k->plan);
    free(k->cache);
    free(k);
}

/* AllReduce: a committed offset of our shard into the user's buffer. */
static int on_commit(arb_hep *e, const arb_commit_info *ci)
{
    struct arb_rt_request *k = e->h->cfg.ctx;
    if (k->user_out && ci->result && ci->len)
        memcpy(k->user_out + (size_t)ci->index * e->h->cfg.payload, ci->result, ci->len);
    return 0;
}

/* The engines' send callback: the runtime header, the Arbor header, the
 * payload, to the switch. */
static void rt_send(void *ctx, const arb_ep_dst *dst, const arb_hdr *h, const uint8_t *payload,
                    size_t len)
{
    arb_hep *e = ctx;
    struct arb_rt_request *k = e->h->cfg.ctx;
    arb_rt_comm *c = k->c;
    rt_hdr rh = {.kind = RT_K_ARBOR,
                 .job = c->cfg.job,
                 .channel = (uint16_t)e->c->responder,
                 .src = (uint16_t)c->cfg.rank,
                 .sub = (uint16_t)dst->subchannel};
    if (dst->kind == ARB_EP_DST_GROUP) {
        rh.dst_kind = 1;
    } else if (dst->kind == ARB_EP_DST_MEMBER) {
        rh.dst_kind = 2;
        rh.dst = (uint16_t)k->plan->members[e->c->first_member + dst->member];
    }
    size_t hl = 0;
    rt_hdr_put(c->head, &rh);
    if (arb_hdr_encode(h, len, c->head + RT_HDR_LEN, ARB_HDR_LEN_LONG, &hl) < 0) return;
    rt_tx(&c->tx, &c->sw, c->head, RT_HDR_LEN + hl, payload, len, 1);
}

static void on_failure(arb_hep *e)
{
    struct arb_rt_request *k = e->h->cfg.ctx;
    arb_rt_comm *c = k->c;
    if (k->done || k->err) return; /* a lingering engine: the output is complete */
    k->err = ARB_ETIMEDOUT;
    if (e->r) {
        arb_responder_failure f;
        arb_responder_get_failure(e->r, &f);
        char miss[128] = "";
        size_t w = 0;
        for (uint32_t m = 0; m < e->c->n_members && w + 8 < sizeof miss; m++)
            if ((f.missing[m >> 6] >> (m & 63)) & 1)
                w += (size_t)snprintf(miss + w, sizeof miss - w, "%s%u", w ? "," : "",
                                      k->plan->members[e->c->first_member + m]);
        fail(c, ARB_ETIMEDOUT,
             "%s (message %u) failed: channel of rank %u %s; ranks that never answered: %s",
             arb_coll_name(k->coll), k->msg, e->c->responder,
             f.end_wait ? "waited for ENDs" : "could not commit an offset", miss[0] ? miss : "?");
    } else {
        arb_requester_progress pr;
        arb_requester_get_progress(e->q, &pr);
        fail(c, ARB_ETIMEDOUT, "%s (message %u) failed: rank %u never answered our %s",
             arb_coll_name(k->coll), k->msg, e->c->responder,
             pr.phase == ARB_REQ_FAILED && pr.results < pr.offsets ? "REGISTER" : "END");
    }
}

/* Replay REGISTERs that came before the call was started. */
static void replay_stash(arb_rt_comm *c, struct arb_rt_request *k, arb_time now)
{
    uint32_t w = 0;
    for (uint32_t i = 0; i < c->n_stash; i++) {
        struct stash *s = &c->stash[i];
        if (s->msg == k->msg) {
            int x = k->ep_of[c->cfg.rank];
            if (x >= 0) {
                arb_hep *e = arb_host_ep(k->host, (uint32_t)x);
                int from = s->src < c->cfg.rank ? s->src : s->src - 1;
                arb_host_deliver(e, &s->h, NULL, 0, from, 0, 0, 0, now);
            }
            continue;
        }
        /* keep only what is still ahead of the newest call */
        if ((uint8_t)(s->msg - k->msg) <= MAX_CALLS) c->stash[w++] = *s;
    }
    c->n_stash = w;
}

static void progress_once(arb_rt_comm *c);
static arb_time next_wake(arb_rt_comm *c, const struct arb_rt_request *want, arb_time now);

/* Start call k: plan, engines, buffers. */
static int call_start(arb_rt_comm *c, arb_coll coll, const void *send, void *recv, size_t count,
                      arb_dtype dt, arb_op op, uint32_t root, struct arb_rt_request **out)
{
    if (c->failed) return fail(c, ARB_ESTATE, "the communicator failed earlier: %s", c->err);
    /* room for one more: released calls whose engines still owe answers are
     * progressed until one finishes (bounded by the deadline) */
    arb_time give_up = rt_now() + c->cfg.timeout;
    while (c->n_calls >= MAX_CALLS) {
        uint32_t mine = 0;
        for (struct arb_rt_request *k = c->calls; k; k = k->next)
            mine += !k->released;
        if (mine >= MAX_CALLS)
            return fail(c, ARB_ESTATE, "%d calls in flight: wait for some first", MAX_CALLS);
        progress_once(c);
        if (c->n_calls < MAX_CALLS) break;
        arb_time now = rt_now();
        if (now >= give_up)
            return fail(c, ARB_ETIMEDOUT, "earlier calls could not finish within %.3f s",
                        (double)c->cfg.timeout / ARB_PS_PER_S);
        rt_wait_readable(c->fd, next_wake(c, NULL, now));
    }
    size_t es = arb_dtype_size(dt);
    uint32_t N = c->cfg.size;
    uint64_t bytes = (uint64_t)count * es;
    if (coll == ARB_COLL_REDUCESCATTER || coll == ARB_COLL_ALLGATHER) bytes *= N;
    struct arb_rt_request *k = calloc(1, sizeof *k);
    if (!k) return ARB_ENOMEM;
    k->c = c;
    k->coll = coll;
    k->msg = c->next_msg;
    for (uint32_t r = 0; r < ARB_PLAN_MAX_RANKS; r++)
        k->ep_of[r] = -1;
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.coll = coll;
    pc.ranks = c->ranks;
    pc.n_ranks = N;
    pc.root = root;
    pc.bytes = bytes;
    pc.dtype = dt;
    /* a rooted collective's one channel takes the trees of its responder's
     * channel in the switches' plan (channel r rooted at offset r) */
    if (coll == ARB_COLL_REDUCE || coll == ARB_COLL_BROADCAST) pc.root_offset = root;
    char perr[160];
    int rc = arb_plan_new(&k->plan, c->topo, &pc, perr, sizeof perr);
    if (rc < 0) {
        call_free(k);
        return fail(c, rc, "%s", perr);
    }
    uint8_t local[ARB_PLAN_MAX_RANKS] = {0};
    local[c->cfg.rank] = 1;
    arb_host_config hc;
    arb_host_config_default(&hc);
    hc.plan = k->plan;
    hc.local = local;
    hc.payload = c->cfg.payload;
    hc.window = c->cfg.window;
    hc.timeout_min = c->cfg.timeout_min;
    hc.timeout = c->cfg.timeout_max;
    hc.repair_tries = c->cfg.repair_tries;
    hc.retry_min = c->cfg.timeout_min;
    hc.op = op;
    hc.msg_id = k->msg;
    hc.send = rt_send;
    hc.on_failure = on_failure;
    hc.on_commit = coll == ARB_COLL_ALLREDUCE ? on_commit : NULL;
    hc.ctx = k;
    hc.logger = c->cfg.logger;
    rc = arb_host_new(&k->host, &hc);
    if (rc < 0) {
        call_free(k);
        return fail(c, rc, "cannot make the engines of %s: %s", arb_coll_name(coll),
                    arb_strerror(rc));
    }
    arb_time now = rt_now();
    k->deadline = now + c->cfg.timeout;
    if (coll == ARB_COLL_ALLGATHER && count) {
        const arb_plan_channel *mine = &k->plan->channels[c->cfg.rank];
        if ((const uint8_t *)recv + mine->lo != send)
            memmove((uint8_t *)recv + mine->lo, send, mine->hi - mine->lo);
    }
    for (uint32_t x = 0; x < k->host->n_eps && rc == 0; x++) {
        arb_hep *e = arb_host_ep(k->host, x);
        const arb_plan_channel *ch = e->c;
        k->ep_of[ch->responder] = (int16_t)x;
        const uint8_t *in = NULL;
        uint8_t *outp = NULL;
        switch (coll) {
        case ARB_COLL_ALLREDUCE:
            in = (const uint8_t *)send + ch->lo;
            outp = (uint8_t *)recv + ch->lo;
            if (e->r && ch->hi > ch->lo) {
                /* the result cache outlives the call: tails lost on their way
                 * are replayed from it after this rank returned */
                k->user_out = outp;
                outp = k->cache = malloc(ch->hi - ch->lo);
                if (!outp) rc = ARB_ENOMEM;
            }
            break;
        case ARB_COLL_REDUCE:
            in = send;
            outp = e->r ? recv : NULL;
            break;
        case ARB_COLL_REDUCESCATTER:
            in = (const uint8_t *)send + ch->lo;
            outp = e->r ? recv : NULL;
            break;
        case ARB_COLL_BROADCAST:
            in = e->r ? recv : NULL; /* the root pushes buf */
            outp = e->r ? NULL : recv;
            break;
        case ARB_COLL_ALLGATHER:
            in = e->r ? send : NULL;
            outp = e->r ? NULL : (uint8_t *)recv + ch->lo;
            break;
        default:
            break;
        }
        if (ch->hi == ch->lo) in = outp = NULL;
        if (rc == 0) rc = arb_host_start(e, in, outp, now);
        if (rc == 0) arb_host_after(e, now);
    }
    if (rc < 0) {
        call_free(k);
        return fail(c, rc, "cannot start %s: %s", arb_coll_name(coll), arb_strerror(rc));
    }
    c->next_msg++;
    c->last_msg = k->msg;
    c->started_any = 1;
    k->next = c->calls;
    c->calls = k;
    c->n_calls++;
    replay_stash(c, k, now);
    rt_tx_flush(&c->tx);
    *out = k;
    return 0;
}

/* The call whose message is msg, or NULL. */
static struct arb_rt_request *call_of(arb_rt_comm *c, uint8_t msg)
{
    for (struct arb_rt_request *k = c->calls; k; k = k->next)
        if (k->msg == msg) return k;
    return NULL;
}

/* Answer for an engine that does not exist (yet, or any more): ack a
 * REGISTER that is early (and keep it for the call) or late, and an END
 * whose call is gone. */
static void orphan(arb_rt_comm *c, const rt_hdr *rh, const arb_hdr *h)
{
    if (h->packet_type == ARB_PT_RESPONSE && h->repair && h->credit_valid && h->op == ARB_OP_NOP &&
        rh->channel < c->cfg.size && rh->channel != c->cfg.rank) {
        /* A repair credit of a push or barrier call this rank finished and
         * freed: its answer carries no bytes, and another member's lost
         * acknowledgement may be what the repair waits for (the requester
         * engine answers it the same way when it still exists). Pull calls
         * never repair an offset whose results every member holds. */
        arb_hdr a;
        arb_hdr_init(&a, ARB_PT_DATA_REQUEST, h->message_id, h->dtype, h->ext);
        a.repair = 1;
        a.offset_a = h->offset_b;
        a.offset_b = 1;
        rt_hdr ah = {.kind = RT_K_ARBOR,
                     .job = c->cfg.job,
                     .channel = rh->channel,
                     .src = (uint16_t)c->cfg.rank,
                     .sub = rh->sub};
        size_t hl;
        rt_hdr_put(c->head, &ah);
        if (arb_hdr_encode(&a, 0, c->head + RT_HDR_LEN, ARB_HDR_LEN_LONG, &hl) == 0)
            rt_tx(&c->tx, &c->sw, c->head, RT_HDR_LEN + hl, NULL, 0, 0);
        c->st.rx_late++;
        return;
    }
    if (rh->channel != c->cfg.rank || rh->src >= c->cfg.size || rh->src == c->cfg.rank ||
        (h->packet_type != ARB_PT_REGISTER && h->packet_type != ARB_PT_END)) {
        c->st.rx_late++;
        return;
    }
    uint8_t ahead = (uint8_t)(h->message_id - c->last_msg);
    if (h->packet_type == ARB_PT_REGISTER &&
        (!c->started_any || (ahead >= 1 && ahead <= MAX_CALLS))) {
        if (c->n_stash == STASH_MAX) return;
        struct stash *s = &c->stash[c->n_stash++];
        s->msg = h->message_id;
        s->src = rh->src;
        s->h = *h;
    }
    arb_hdr a;
    arb_hdr_init(&a, h->packet_type == ARB_PT_REGISTER ? ARB_PT_REGISTER_ACK : ARB_PT_END_ACK,
                 h->message_id, h->dtype, h->ext);
    a.repair = h->packet_type == ARB_PT_REGISTER;
    a.offset_a = h->offset_a;
    rt_hdr ah = {.kind = RT_K_ARBOR,
                 .dst_kind = 2,
                 .job = c->cfg.job,
                 .channel = (uint16_t)c->cfg.rank,
                 .dst = rh->src,
                 .src = (uint16_t)c->cfg.rank,
                 .sub = rh->sub};
    size_t hl;
    rt_hdr_put(c->head, &ah);
    if (arb_hdr_encode(&a, 0, c->head + RT_HDR_LEN, ARB_HDR_LEN_LONG, &hl) == 0)
        rt_tx(&c->tx, &c->sw, c->head, RT_HDR_LEN + hl, NULL, 0, 0);
}

static void on_arbor(arb_rt_comm *c, const rt_hdr *rh, const uint8_t *b, size_t len, arb_time now)
{
    arb_hdr h;
    size_t off;
    if (rh->job != c->cfg.job || arb_hdr_decode(&h, b + RT_HDR_LEN, len - RT_HDR_LEN, &off) < 0) {
        c->st.rx_undecodable++;
        return;
    }
    if (rh->src < c->cfg.size) c->heard[rh->src] = now;
    struct arb_rt_request *k = call_of(c, h.message_id);
    if (!k) {
        orphan(c, rh, &h);
        return;
    }
    if (rh->channel >= c->cfg.size || k->ep_of[rh->channel] < 0) {
        c->st.rx_unknown++;
        return;
    }
    arb_hep *e = arb_host_ep(k->host, (uint32_t)k->ep_of[rh->channel]);
    int from = 0;
    if (e->r) {
        if (rh->flags & RT_F_SWITCH)
            from = ARB_EP_FROM_SWITCH;
        else if (rh->src < c->cfg.size && rh->src != rh->channel)
            from = rh->src < rh->channel ? rh->src : rh->src - 1;
        else
            from = ARB_EP_NOT_MEMBER;
    }
    arb_host_deliver(e, &h, b + RT_HDR_LEN + off, len - RT_HDR_LEN - off, from, rh->sub,
                     rh->flags & RT_F_CE, 0, now);
}

static void on_datagram(arb_rt_comm *c, uint32_t i, arb_time now)
{
    const uint8_t *b = c->rx.dg[i].buf;
    size_t len = c->rx.dg[i].len;
    rt_hdr rh;
    c->st.rx_pkts++;
    c->st.rx_bytes += len;
    if (!rt_addr_eq(c->rx.dg[i].from, &c->sw)) {
        c->st.rx_strangers++;
        return;
    }
    if (rt_hdr_get(&rh, b, len) < 0) {
        c->st.rx_undecodable++;
        return;
    }
    c->last_rx = now;
    switch (rh.kind) {
    case RT_K_ARBOR:
        on_arbor(c, &rh, b, len, now);
        break;
    case RT_K_NOTICE: /* the switch forgot us (it restarted): join again */
        if (rh.job == c->cfg.job && rh.dst == c->cfg.rank && now - c->last_join > ARB_PS_PER_MS) {
            c->st.rejoins++;
            send_join(c, now);
        }
        break;
    case RT_K_WELCOME:
        break;
    default:
        c->st.rx_undecodable++;
        break;
    }
}

/* Update a call's state after its engines moved. */
static void call_check(arb_rt_comm *c, struct arb_rt_request *k, arb_time now)
{
    arb_host *h = k->host;
    if (!k->done && !k->err && h->ranks_done == h->n_local) {
        k->done = 1;
        c->st.calls++;
    }
    if (!k->finished && (arb_host_done(h) || (k->done && arb_host_error(h) < 0))) k->finished = 1;
    if (!k->done && !k->err && now >= k->deadline) {
        k->err = ARB_ETIMEDOUT;
        arb_responder_progress rp;
        char what[96] = "";
        for (uint32_t x = 0; x < h->n_eps; x++) {
            arb_hep *e = arb_host_ep(h, x);
            if (e->cond_done) continue;
            if (e->r) {
                arb_responder_get_progress(e->r, &rp);
                snprintf(what, sizeof what,
                         "our channel has %u of %u members registered, %u of %u offsets committed",
                         rp.registered, e->c->n_members, rp.committed, rp.offsets);
            } else if (!what[0]) {
                snprintf(what, sizeof what, "waiting for rank %u's channel", e->c->responder);
            }
        }
        /* the ranks we have not heard from for a while are the suspects */
        char quiet[96] = "";
        size_t w = 0;
        for (uint32_t r = 0; r < c->cfg.size && w + 24 < sizeof quiet; r++)
            if (r != c->cfg.rank && now - c->heard[r] > ARB_PS_PER_S)
                w += (size_t)snprintf(quiet + w, sizeof quiet - w, "%s%u", w ? "," : "", r);
        fail(c, ARB_ETIMEDOUT, "%s (message %u) timed out after %.3f s: %s; silent for 1 s: %s",
             arb_coll_name(k->coll), k->msg, (double)c->cfg.timeout / ARB_PS_PER_S, what,
             quiet[0] ? (w ? quiet : "none") : "no rank");
    }
}

/* Serve timers, read what arrived, update the calls. */
static void progress_once(arb_rt_comm *c)
{
    arb_time now = rt_now();
    for (struct arb_rt_request *k = c->calls; k; k = k->next) {
        if (k->finished) continue;
        for (uint32_t x = 0; x < k->host->n_eps; x++) {
            arb_hep *e = arb_host_ep(k->host, x);
            if (arb_host_expiry(e) <= now) {
                arb_host_expire(e, now);
                arb_host_after(e, now);
            }
        }
    }
    rt_tx_flush(&c->tx);
    for (int round = 0; round < 16; round++) {
        int n = rt_rx(&c->rx);
        if (n == 0) break;
        now = rt_now();
        for (int i = 0; i < n; i++)
            on_datagram(c, (uint32_t)i, now);
        rt_tx_flush(&c->tx);
    }
    now = rt_now();
    for (struct arb_rt_request *k = c->calls; k; k = k->next)
        call_check(c, k, now);
    /* free what the user released and the engines finished */
    for (struct arb_rt_request **pp = &c->calls; *pp;) {
        struct arb_rt_request *k = *pp;
        if (k->released && k->finished) {
            *pp = k->next;
            call_free(k);
            c->n_calls--;
        } else {
            pp = &k->next;
        }
    }
}

/* How long to sleep: the earliest engine timer, the deadline, the silence
 * that makes us join again. */
static arb_time next_wake(arb_rt_comm *c, const struct arb_rt_request *want, arb_time now)
{
    arb_time t = now + 10 * ARB_PS_PER_MS;
    if (want && want->deadline < t) t = want->deadline;
    for (struct arb_rt_request *k = c->calls; k; k = k->next)
        if (!k->finished) {
            arb_time x = arb_host_next_expiry(k->host);
            if (x < t) t = x;
        }
    return t > now ? t - now : 0;
}

int arb_rt_progress(arb_rt_comm *c)
{
    if (!c) return ARB_EINVAL;
    progress_once(c);
    return 0;
}

int arb_rt_test(arb_rt_request *k, int *done)
{
    if (!k || !done) return ARB_EINVAL;
    progress_once(k->c);
    *done = k->done || k->err;
    return k->err;
}

int arb_rt_wait(arb_rt_request *k)
{
    if (!k) return ARB_EINVAL;
    arb_rt_comm *c = k->c;
    for (;;) {
        progress_once(c);
        if (k->done || k->err) break;
        arb_time now = rt_now();
        /* silence while waiting: the switch may have restarted */
        if (now - c->last_rx > REJOIN_SILENCE && now - c->last_join > REJOIN_SILENCE) {
            c->st.rejoins++;
            send_join(c, now);
        }
        rt_wait_readable(c->fd, next_wake(c, k, now));
    }
    int rc = k->err;
    k->released = 1;
    if (rc < 0) {
        k->finished = 1; /* a failed call's engines stop here */
        c->any_failed = 1;
    }
    progress_once(c); /* frees it when its engines are done */
    return rc;
}

/* ---- the collectives --------------------------------------------------- */

static int check_args(arb_rt_comm *c, const void *a, const void *b, size_t count, arb_dtype dt,
                      int op, uint32_t root, int reduce)
{
    if (!c) return ARB_EINVAL;
    if (arb_dtype_size(dt) == 0) return fail(c, ARB_EINVAL, "dtype %d is not one of the six", dt);
    if (reduce && (op <= ARB_OP_NOP || op >= ARB_OP_COUNT))
        return fail(c, ARB_EINVAL, "op %d is not SUM, MAX or MIN", op);
    if (root >= c->cfg.size)
        return fail(c, ARB_EINVAL, "root %u is not a rank of %u", root, c->cfg.size);
    if (count && (!a || !b)) return fail(c, ARB_EINVAL, "a NULL buffer with count %zu", count);
    if (count > ((uint64_t)1 << 47) / arb_dtype_size(dt) / c->cfg.size)
        return fail(c, ARB_EINVAL, "count %zu is too large", count);
    return 0;
}

static int start(arb_rt_comm *c, arb_coll coll, const void *send, void *recv, size_t count,
                 arb_dtype dt, arb_op op, uint32_t root, arb_rt_request **req)
{
    *req = NULL;
    return call_start(c, coll, send, recv, count, dt, op, root, req);
}

int arb_rt_iallreduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                      arb_op op, arb_rt_request **req)
{
    int rc = req ? check_args(c, send, recv, count, dt, op, 0, 1) : ARB_EINVAL;
    return rc < 0 ? rc : start(c, ARB_COLL_ALLREDUCE, send, recv, count, dt, op, 0, req);
}

int arb_rt_ireduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                   arb_op op, uint32_t root, arb_rt_request **req)
{
    int rc =
        req ? check_args(c, send, c && c->cfg.rank == root ? recv : send, count, dt, op, root, 1)
            : ARB_EINVAL;
    return rc < 0 ? rc : start(c, ARB_COLL_REDUCE, send, recv, count, dt, op, root, req);
}

int arb_rt_ireducescatter(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                          arb_op op, arb_rt_request **req)
{
    int rc = req ? check_args(c, send, recv, count, dt, op, 0, 1) : ARB_EINVAL;
    return rc < 0 ? rc : start(c, ARB_COLL_REDUCESCATTER, send, recv, count, dt, op, 0, req);
}

int arb_rt_ibroadcast(arb_rt_comm *c, void *buf, size_t count, arb_dtype dt, uint32_t root,
                      arb_rt_request **req)
{
    int rc = req ? check_args(c, buf, buf, count, dt, ARB_OP_NOP, root, 0) : ARB_EINVAL;
    return rc < 0 ? rc : start(c, ARB_COLL_BROADCAST, buf, buf, count, dt, ARB_OP_NOP, root, req);
}

int arb_rt_iallgather(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                      arb_rt_request **req)
{
    int rc = req ? check_args(c, send, recv, count, dt, ARB_OP_NOP, 0, 0) : ARB_EINVAL;
    return rc < 0 ? rc : start(c, ARB_COLL_ALLGATHER, send, recv, count, dt, ARB_OP_NOP, 0, req);
}

int arb_rt_ibarrier(arb_rt_comm *c, arb_rt_request **req)
{
    if (!c || !req) return ARB_EINVAL;
    return start(c, ARB_COLL_BARRIER, NULL, NULL, 0, ARB_DTYPE_F32, ARB_OP_NOP, 0, req);
}

/* A blocking call: start and wait; count 0 moves nothing. */
#define BLOCKING(call)                                                                             \
    do {                                                                                           \
        arb_rt_request *r_;                                                                        \
        int rc_ = (call);                                                                          \
        return rc_ < 0 ? rc_ : arb_rt_wait(r_);                                                    \
    } while (0)

int arb_rt_allreduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                     arb_op op)
{
    BLOCKING(arb_rt_iallreduce(c, send, recv, count, dt, op, &r_));
}
int arb_rt_reduce(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                  arb_op op, uint32_t root)
{
    BLOCKING(arb_rt_ireduce(c, send, recv, count, dt, op, root, &r_));
}
int arb_rt_reducescatter(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt,
                         arb_op op)
{
    BLOCKING(arb_rt_ireducescatter(c, send, recv, count, dt, op, &r_));
}
int arb_rt_broadcast(arb_rt_comm *c, void *buf, size_t count, arb_dtype dt, uint32_t root)
{
    BLOCKING(arb_rt_ibroadcast(c, buf, count, dt, root, &r_));
}
int arb_rt_allgather(arb_rt_comm *c, const void *send, void *recv, size_t count, arb_dtype dt)
{
    BLOCKING(arb_rt_iallgather(c, send, recv, count, dt, &r_));
}
int arb_rt_barrier(arb_rt_comm *c)
{
    BLOCKING(arb_rt_ibarrier(c, &r_));
}

int arb_rt_comm_free(arb_rt_comm *c)
{
    if (!c) return 0;
    int rc = 0;
    if (c->fd >= 0 && c->calls) {
        /* drain: let lingering engines finish (their ENDs), bounded */
        arb_time until = rt_now() + c->cfg.timeout;
        for (;;) {
            int busy = 0;
            for (struct arb_rt_request *k = c->calls; k; k = k->next) {
                if (!k->released) k->released = 1;
                busy |= !k->finished;
            }
            progress_once(c);
            if (!busy || !c->calls) break;
            arb_time now = rt_now();
            if (now >= until) {
                rc = ARB_ETIMEDOUT;
                break;
            }
            rt_wait_readable(c->fd, next_wake(c, NULL, now));
        }
    }
    if (c->fd >= 0 && c->started_any && !c->any_failed) {
        arb_time until = rt_now() + c->cfg.timeout;
        for (;;) {
            progress_once(c);
            arb_time now = rt_now();
            if (now - c->last_rx >= LINGER_QUIET || now >= until) break;
            rt_wait_readable(c->fd, LINGER_QUIET - (now - c->last_rx));
        }
    }
    while (c->calls) {
        struct arb_rt_request *k = c->calls;
        c->calls = k->next;
        call_free(k);
    }
    if (c->fd >= 0) close(c->fd);
    rt_txq_free(&c->tx);
    rt_rxq_free(&c->rx);
    arb_topo_free(c->topo);
    free(c);
    return rc;
}
