/*
 * The runtime's communicator (rt.h, docs/runtime.md): one rank of a job on
 * one UDP socket to its switch: configuration, joining (JOIN, WELCOME),
 * progress (timers, receiving, the calls' states), waiting and leaving.
 * The calls themselves are call.c's. Packets travel in the runtime header
 * (rt_int.h) through the switch, the only address a rank accepts
 * datagrams from.
 */
#define _GNU_SOURCE
#include "rt/comm_int.h"

#include <arpa/inet.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "base/alloc.h"

int rt_fail(arb_rt_comm *c, int rc, const char *fmt, ...)
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
    cfg->window = 0; /* auto */
    cfg->payload = ARB_PAYLOAD_MAX;
    cfg->timeout_min = 10 * ARB_PS_PER_MS;
    cfg->timeout_max = 200 * ARB_PS_PER_MS;
    cfg->repair_tries = 64;
    cfg->cc = ARB_CC_FIXED;
    cfg->line_rate = UINT64_C(100000000000);
}

/* A whole number min..max; `rule` says more when the range is not all
 * (NULL: "a whole number min..max"). */
static int env_u32(const char *name, uint32_t *out, uint64_t min, uint64_t max, const char *rule,
                   char *err, size_t errlen)
{
    const char *v = getenv(name);
    uint64_t x;
    if (!v) return 0;
    if (arb_parse_u64(v, strlen(v), max, &x) < 0 || x < min) {
        if (rule) return arb_errf(err, errlen, ARB_EPARSE, "%s='%s': want %s", name, v, rule);
        return arb_errf(err, errlen, ARB_EPARSE, "%s='%s': not a whole number %llu..%llu", name, v,
                        (unsigned long long)min, (unsigned long long)max);
    }
    *out = (uint32_t)x;
    return 0;
}

/* ARBOR_WINDOW: auto (0, arb_rt_config.window), or credits per channel
 * 1..4096. */
static int env_window(arb_rt_config *cfg, char *err, size_t errlen)
{
    const char *v = getenv("ARBOR_WINDOW");
    if (v && strcasecmp(v, "auto") == 0) {
        cfg->window = 0;
        return 0;
    }
    return env_u32("ARBOR_WINDOW", &cfg->window, 1, 4096, "auto or a whole number 1..4096", err,
                   errlen);
}

/* A duration min..max (or "0" when zero_ok); `rule` is the error's wording
 * after "not". */
static int env_time(const char *name, arb_time *out, arb_time min, arb_time max, int zero_ok,
                    const char *rule, char *err, size_t errlen)
{
    const char *v = getenv(name);
    arb_time t;
    if (!v) return 0;
    if (zero_ok && strcmp(v, "0") == 0)
        t = 0;
    else if (arb_topo_parse_time(v, &t) < 0 || t < min || t > max)
        return arb_errf(err, errlen, ARB_EPARSE, "%s='%s': not %s", name, v, rule);
    *out = t;
    return 0;
}

/* ARBOR_CC, ARBOR_LINE_RATE, ARBOR_BASE_RTT. */
static int env_cc(arb_rt_config *cfg, char *err, size_t errlen)
{
    const char *v;
    if ((v = getenv("ARBOR_CC"))) {
        int k = arb_cc_kind_parse(v);
        if (k < 0)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "ARBOR_CC='%s': want fixed, disabled, timely, swift, dcqcn or oscar",
                            v);
        cfg->cc = (arb_cc_kind)k;
    }
    if ((v = getenv("ARBOR_LINE_RATE"))) {
        uint64_t r;
        if (arb_topo_parse_rate(v, &r) < 0 || r < RT_LINE_RATE_MIN || r > ARB_RATE_MAX)
            return arb_errf(err, errlen, ARB_EPARSE,
                            "ARBOR_LINE_RATE='%s': not a rate of 1M to 10T bit/s, such as 25G", v);
        cfg->line_rate = r;
    }
    return env_time("ARBOR_BASE_RTT", &cfg->base_rtt, ARB_PS_PER_US, ARB_PS_PER_S, 1,
                    "0 or a duration of 1us to 1s, such as 50us", err, errlen);
}

int arb_rt_io_uring_available(char *why, size_t len)
{
    char buf[200];
    int ok = rt_uring_probe(buf, sizeof buf);
    if (why && len) snprintf(why, len, "%s", ok ? "" : buf);
    return ok;
}

int arb_rt_config_env(arb_rt_config *cfg, char *err, size_t errlen)
{
    int rc = 0;
    if (!cfg) return ARB_EINVAL;
    if (rc == 0) rc = env_u32("ARBOR_RANK", &cfg->rank, 0, 255, NULL, err, errlen);
    if (rc == 0) rc = env_u32("ARBOR_SIZE", &cfg->size, 2, 256, NULL, err, errlen);
    if (rc == 0) rc = env_u32("ARBOR_JOB", &cfg->job, 0, UINT32_MAX, NULL, err, errlen);
    if (rc == 0)
        rc = env_u32("ARBOR_HOST_BASE", &cfg->host_base, 0, ARB_TOPO_MAX_HOSTS, NULL, err, errlen);
    if (rc == 0) rc = env_window(cfg, err, errlen);
    if (rc == 0)
        rc = env_u32("ARBOR_PAYLOAD", &cfg->payload, 8, ARB_PAYLOAD_MAX,
                     "a multiple of 8 in 8..8192 (bytes per packet)", err, errlen);
    if (rc < 0) return rc;
    const char *pv = getenv("ARBOR_PAYLOAD");
    if (pv && cfg->payload % 8)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "ARBOR_PAYLOAD='%s': want a multiple of 8 in 8..8192 (bytes per packet)",
                        pv);
    if ((getenv("ARBOR_RANK") || getenv("ARBOR_SIZE")) && cfg->rank >= cfg->size)
        return arb_errf(err, errlen, ARB_EPARSE, "ARBOR_RANK=%u: want a rank below ARBOR_SIZE=%u",
                        cfg->rank, cfg->size);
    const char *v;
    if ((v = getenv("ARBOR_SWITCH"))) cfg->sw = v;
    if ((v = getenv("ARBOR_SECRET"))) {
        if (!*v || strlen(v) > ARB_RT_SECRET_MAX)
            return arb_errf(err, errlen, ARB_EPARSE, "ARBOR_SECRET: want 1..%d bytes of text",
                            ARB_RT_SECRET_MAX);
        cfg->secret = v;
    }
    if ((v = getenv("ARBOR_TOPO"))) cfg->topo = v;
    if ((v = getenv("ARBOR_BIND"))) cfg->bind = v;
    rc = env_time("ARBOR_TIMEOUT", &cfg->timeout, ARB_PS_PER_MS, ARB_TIME_NEVER, 0,
                  "a duration of 1ms or more, such as 30s", err, errlen);
    if (rc < 0) return rc;
    if ((v = getenv("ARBOR_DROP"))) {
        char *end;
        double d = strtod(v, &end);
        if (end == v || *end || !(d >= 0 && d < 1))
            return arb_errf(err, errlen, ARB_EPARSE, "ARBOR_DROP='%s': not a fraction in [0, 1)",
                            v);
        cfg->drop = d;
    }
    rc = env_time("ARBOR_TIMER_MIN", &cfg->timeout_min, ARB_EP_TIMER_MIN, ARB_TIME_NEVER, 0,
                  "a duration of 1us or more", err, errlen);
    if (rc < 0) return rc;
    rc = env_time("ARBOR_SPIN", &cfg->spin, 0, RT_SPIN_MAX, 1,
                  "0 or a duration up to 10ms such as 50us", err, errlen);
    if (rc < 0) return rc;
    if ((v = getenv("ARBOR_IO"))) {
        if (strcmp(v, "uring") == 0)
            cfg->io = ARB_RT_IO_URING;
        else if (strcmp(v, "mmsg") == 0)
            cfg->io = ARB_RT_IO_MMSG;
        else
            return arb_errf(err, errlen, ARB_EPARSE,
                            "ARBOR_IO='%s': want mmsg (sendmmsg / recvmmsg) or uring (io_uring)",
                            v);
    }
    if ((v = getenv("ARBOR_GSO"))) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return arb_errf(err, errlen, ARB_EPARSE, "ARBOR_GSO='%s': want 0 or 1", v);
        cfg->no_gso = *v == '0';
    }
    if ((v = getenv("ARBOR_SWITCH_RESULTS"))) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return arb_errf(
                err, errlen, ARB_EPARSE,
                "ARBOR_SWITCH_RESULTS='%s': want 1 (a small AllReduce's result from the "
                "switch, the default) or 0 (from its responder)",
                v);
        cfg->responder_results = *v == '0';
    }
    if ((v = getenv("ARBOR_SEED"))) {
        uint64_t s;
        if (arb_parse_u64(v, strlen(v), UINT64_MAX, &s) < 0)
            return arb_errf(err, errlen, ARB_EPARSE, "ARBOR_SEED='%s': not a whole number", v);
        cfg->seed = s;
    }
    return env_cc(cfg, err, errlen);
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
    case RT_REJECT_FABRIC:
        return "this rank's fabric (ARBOR_TOPO) is not the switch's: start every rank and "
               "switch of a job with the same one";
    case RT_REJECT_SIZE:
        return "this rank's ARBOR_SIZE or ARBOR_HOST_BASE is not the job's";
    case RT_REJECT_DUPLICATE:
        return "another process is this rank";
    default:
        return "refused";
    }
}

/* A REJECT that says what the switch holds (RT_REJECT_SIZE: the job's
 * size and host base; RT_REJECT_DUPLICATE: the address of the process
 * that is this rank), as the call's error: ARB_ESTATE. */
static int reject_fail(arb_rt_comm *c, const uint8_t *b, size_t len)
{
    const uint8_t *m = b + RT_HDR_LEN + 1;
    if (len < RT_REJECT_LEN)
        return rt_fail(c, ARB_ESTATE, "switch %s refused job %u rank %u: %s", c->cfg.sw, c->cfg.job,
                       c->cfg.rank, reject_reason(b[RT_HDR_LEN]));
    if (b[RT_HDR_LEN] == RT_REJECT_SIZE) {
        uint32_t size = (uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3];
        uint32_t base = (uint32_t)m[4] << 24 | (uint32_t)m[5] << 16 | (uint32_t)m[6] << 8 | m[7];
        return rt_fail(c, ARB_ESTATE,
                       "switch %s refused job %u rank %u: this rank has ARBOR_SIZE=%u "
                       "ARBOR_HOST_BASE=%u, but the job's ranks joined with ARBOR_SIZE=%u "
                       "ARBOR_HOST_BASE=%u: give every rank of a job the same",
                       c->cfg.sw, c->cfg.job, c->cfg.rank, c->cfg.size, c->cfg.host_base, size,
                       base);
    }
    char a[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, m, a, sizeof a);
    unsigned port = (unsigned)m[4] << 8 | m[5];
    return rt_fail(c, ARB_ESTATE,
                   "switch %s refused job %u rank %u: another process is rank %u of this job "
                   "(joined from %s:%u, still heard from): give every process its own ARBOR_RANK",
                   c->cfg.sw, c->cfg.job, c->cfg.rank, c->cfg.rank, a, port);
}

/* The adaptive controllers' base loop: the configured one, or twice the
 * round trip of the JOIN the WELCOME answered (a credit's loop passes the
 * switch twice: the credit down, the requests up), at least 1 us. */
static void set_base_rtt(arb_rt_comm *c, arb_time join_rtt)
{
    arb_time t = c->cfg.base_rtt ? c->cfg.base_rtt : 2 * join_rtt;
    if (t < ARB_PS_PER_US) t = ARB_PS_PER_US;
    if (t > ARB_PS_PER_S) t = ARB_PS_PER_S;
    c->st.base_rtt = t;
}

/* Join and wait for the WELCOME (at most cfg.timeout). */
static int join_switch(arb_rt_comm *c)
{
    arb_time start = rt_now(), now = start;
    c->last_join = 0;
    /* answers to this rank's JOIN from another address than the one it
     * dialled (dropped: a rank hears only its switch's address) */
    uint32_t elsewhere = 0;
    struct sockaddr_in other;
    arb_time dup_since = 0; /* the first REJECT_DUPLICATE or _SIZE */
    while (now - start < c->cfg.timeout) {
        if (c->last_join == 0 || now - c->last_join >= JOIN_RETRY) send_join(c, now);
        rt_rxq_wait(&c->rx, -1, JOIN_RETRY - (now - c->last_join), 0);
        int n = rt_rx(&c->rx);
        for (int i = 0; i < n; i++) {
            const uint8_t *b = c->rx.dg[i].buf;
            size_t len = c->rx.dg[i].len;
            rt_hdr h;
            if (rt_hdr_get(&h, b, len) < 0) continue;
            if (!rt_addr_eq(c->rx.dg[i].from, &c->sw)) {
                if ((h.kind == RT_K_WELCOME || h.kind == RT_K_REJECT) && h.job == c->cfg.job &&
                    h.dst == c->cfg.rank && elsewhere++ == 0)
                    other = *c->rx.dg[i].from;
                continue;
            }
            if (h.kind == RT_K_WELCOME && rt_welcome_verify(b, len, &c->join, c->key) == 0) {
                set_base_rtt(c, rt_now() - c->last_join);
                return 0;
            }
            if (h.kind == RT_K_REJECT && len > RT_HDR_LEN && h.job == c->cfg.job &&
                h.dst == c->cfg.rank &&
                (b[RT_HDR_LEN] == RT_REJECT_DUPLICATE || b[RT_HDR_LEN] == RT_REJECT_SIZE)) {
                /* what the switch holds may be a departed predecessor's
                 * (this rank's, restarted; a job that used this id before):
                 * it takes us once that has been silent RT_LIVE_WINDOW */
                if (!dup_since) dup_since = now;
                if (now - dup_since < 2 * RT_LIVE_WINDOW + JOIN_RETRY) continue;
                return reject_fail(c, b, len);
            }
            if (h.kind == RT_K_REJECT && len > RT_HDR_LEN && h.job == c->cfg.job &&
                h.dst == c->cfg.rank)
                return rt_fail(c, ARB_ESTATE, "switch %s refused job %u rank %u: %s%s%s%s",
                               c->cfg.sw, c->cfg.job, c->cfg.rank, reject_reason(b[RT_HDR_LEN]),
                               b[RT_HDR_LEN] == RT_REJECT_FABRIC ? " (this rank's is " : "",
                               b[RT_HDR_LEN] == RT_REJECT_FABRIC ? arb_topo_spec(c->topo) : "",
                               b[RT_HDR_LEN] == RT_REJECT_FABRIC ? ")" : "");
        }
        now = rt_now();
    }
    if (elsewhere) {
        char a[32];
        return rt_fail(c, ARB_ETIMEDOUT,
                       "switch %s: no answer to the JOIN of job %u rank %u from that address "
                       "within %.3f s, but %u from %s (dropped: a rank accepts only the address "
                       "it dialled; a switch that does not answer from the address it was sent "
                       "to, or NAT?)",
                       c->cfg.sw, c->cfg.job, c->cfg.rank, (double)c->cfg.timeout / ARB_PS_PER_S,
                       elsewhere, rt_addr_str(&other, a, sizeof a));
    }
    return rt_fail(c, ARB_ETIMEDOUT,
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
    const char *bad = cfg->timeout < ARB_PS_PER_MS ? "timeout below 1 ms"
                      : cfg->payload == 0 || cfg->payload > ARB_PAYLOAD_MAX || cfg->payload % 8
                          ? "payload not a multiple of 8 in 8..8192"
                      : !(cfg->drop >= 0 && cfg->drop < 1)  ? "drop outside [0, 1)"
                      : cfg->timeout_min < ARB_EP_TIMER_MIN ? "timer floor below 1 us"
                      : cfg->timeout_max < cfg->timeout_min ? "timer floor above the ceiling"
                      : cfg->repair_tries == 0 || cfg->repair_tries > 64 ? "repair tries not 1..64"
                      : cfg->spin > RT_SPIN_MAX                          ? "spin above 10 ms"
                      : !arb_cc_kind_name(cfg->cc)                       ? "unknown controller"
                      : cfg->line_rate < RT_LINE_RATE_MIN || cfg->line_rate > ARB_RATE_MAX
                          ? "line rate not 1 Mbit/s .. 10 Tbit/s"
                      : cfg->base_rtt > ARB_PS_PER_S ? "base loop above 1 s"
                      : cfg->io != ARB_RT_IO_MMSG && cfg->io != ARB_RT_IO_URING
                          ? "io not mmsg or uring"
                          : NULL;
    if (bad) return arb_errf(err, errlen, ARB_EINVAL, "configuration: %s", bad);
    arb_rt_comm *c = arb_calloc(1, sizeof *c);
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
    if (rc == 0) c->tx.by_channel = 1; /* everything goes to the switch */
    if (rc == 0) rc = rt_rxq_init(&c->rx, c->fd, !cfg->no_gso);
    if (rc == 0 && cfg->io == ARB_RT_IO_URING) {
        char why[200];
        int u = rt_uring_attach(&c->rx, &c->tx, why, sizeof why);
        if (u == 0)
            c->st.io_uring = 1;
        else if (u == ARB_EIO) /* the kernel refuses: the plain path */
            arb_log(&c->cfg.logger, ARB_LOG_WARN, "rank %u: ARBOR_IO=uring: %s; using sendmmsg",
                    cfg->rank, why);
        else
            rc = arb_errf(err, errlen, u, "ARBOR_IO=uring: %s", why);
    }
    if (rc == 0 && rt_key(c->key, cfg->secret) < 0)
        rc = arb_errf(err, errlen, ARB_EIO, "libsodium failed to initialise");
    if (rc == 0) {
        for (uint32_t r = 0; r < cfg->size; r++)
            c->ranks[r] = cfg->host_base + r;
        c->join.job = cfg->job;
        c->join.rank = cfg->rank;
        c->join.size = cfg->size;
        c->join.base = cfg->host_base;
        c->join.fabric = rt_fabric_id(arb_topo_spec(c->topo));
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
        rt_on_arbor(c, &rh, b, len, now);
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

/* Serve timers, read what arrived, update the calls. */
void rt_progress_once(arb_rt_comm *c)
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
        rt_call_check(c, k, now);
    /* free what the user released and the engines finished */
    for (struct arb_rt_request **pp = &c->calls; *pp;) {
        struct arb_rt_request *k = *pp;
        if (k->released && k->finished) {
            *pp = k->next;
            rt_call_free(k);
            c->n_calls--;
        } else {
            pp = &k->next;
        }
    }
}

/* How long to sleep: the earliest engine timer, the deadline, the silence
 * that makes us join again. */
arb_time rt_next_wake(arb_rt_comm *c, const struct arb_rt_request *want, arb_time now)
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

void rt_comm_wait(arb_rt_comm *c, arb_time wait)
{
    if (rt_rxq_wait(&c->rx, -1, wait, c->cfg.spin))
        c->st.waits++;
    else if (c->cfg.spin && wait)
        c->st.spin_hits++;
}

int arb_rt_progress(arb_rt_comm *c)
{
    if (!c) return ARB_EINVAL;
    rt_progress_once(c);
    return 0;
}

int arb_rt_test(arb_rt_request *k, int *done)
{
    if (!k || !done) return ARB_EINVAL;
    rt_progress_once(k->c);
    *done = k->done || k->err;
    return k->err;
}

int arb_rt_wait(arb_rt_request *k)
{
    if (!k) return ARB_EINVAL;
    arb_rt_comm *c = k->c;
    for (;;) {
        rt_progress_once(c);
        if (k->done || k->err) break;
        arb_time now = rt_now();
        /* silence while waiting: the switch may have restarted */
        if (now - c->last_rx > REJOIN_SILENCE && now - c->last_join > REJOIN_SILENCE) {
            c->st.keepalive_joins++;
            send_join(c, now);
        }
        rt_comm_wait(c, rt_next_wake(c, k, now));
    }
    int rc = k->err;
    k->released = 1;
    if (rc < 0) {
        if (!k->done) k->finished = 1; /* a failed call's engines stop here */
        c->any_failed = 1;
    }
    rt_progress_once(c); /* frees it when its engines are done */
    return rc;
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
            rt_progress_once(c);
            if (!busy || !c->calls) break;
            arb_time now = rt_now();
            if (now >= until) {
                rc = ARB_ETIMEDOUT;
                break;
            }
            rt_comm_wait(c, rt_next_wake(c, NULL, now));
        }
    }
    if (c->fd >= 0 && c->started_any && !c->any_failed) {
        arb_time until = rt_now() + c->cfg.timeout, quiet = 2 * c->cfg.timeout_max + LINGER_SLACK;
        for (;;) {
            rt_progress_once(c);
            arb_time now = rt_now();
            if (now - c->last_rx >= quiet || now >= until) break;
            rt_rxq_wait(&c->rx, -1, quiet - (now - c->last_rx), 0);
        }
    }
    while (c->calls) {
        struct arb_rt_request *k = c->calls;
        c->calls = k->next;
        rt_call_free(k);
    }
    rt_cc_keep_free(c);
    if (c->fd >= 0) close(c->fd);
    rt_txq_free(&c->tx);
    rt_rxq_free(&c->rx);
    arb_topo_free(c->topo);
    arb_free(c);
    return rc;
}
