/*
 * UDP for the runtime (rt_int.h): addresses, sockets with large buffers,
 * batched sends and receives (sendmmsg, recvmmsg), the clock.
 */
#define _GNU_SOURCE
#include "rt/rt_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <netinet/udp.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/alloc.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

int rt_addr_parse(const char *s, uint16_t def_port, struct sockaddr_in *out, char *err,
                  size_t errlen)
{
    if (!s || !*s) return arb_errf(err, errlen, ARB_EPARSE, "address: empty");
    char host[256];
    const char *colon = strrchr(s, ':');
    size_t hl = colon ? (size_t)(colon - s) : strlen(s);
    if (hl == 0 || hl >= sizeof host)
        return arb_errf(err, errlen, ARB_EPARSE, "address '%s': no host (want HOST:PORT)", s);
    memcpy(host, s, hl);
    host[hl] = 0;
    uint64_t port = def_port;
    if (colon && arb_parse_u64(colon + 1, strlen(colon + 1), 65535, &port) < 0)
        return arb_errf(err, errlen, ARB_EPARSE, "address '%s': port is not 0..65535", s);
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    out->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &out->sin_addr) == 1) return 0;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
        return arb_errf(err, errlen, ARB_EPARSE, "address '%s': host '%s' does not resolve", s,
                        host);
    out->sin_addr = ((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    return 0;
}

int arb_rt_addr_check(const char *addr, char *err, size_t errlen)
{
    struct sockaddr_in a;
    return rt_addr_parse(addr, ARB_RT_PORT_DEFAULT, &a, err, errlen);
}

const char *rt_addr_str(const struct sockaddr_in *a, char *buf, size_t len)
{
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
    snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
    return buf;
}

/* Socket buffers: as asked where the limits allow; as root past them. */
static void set_buf(int fd, int opt, int force, int bytes)
{
    if (setsockopt(fd, SOL_SOCKET, force, &bytes, sizeof bytes) < 0)
        (void)setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof bytes);
}

int rt_socket(const struct sockaddr_in *bind_to, int buf, char *err, size_t errlen)
{
    return rt_socket_reuse(bind_to, buf, 0, err, errlen);
}

int rt_socket_reuse(const struct sockaddr_in *bind_to, int buf, int reuseport, char *err,
                    size_t errlen)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return arb_errf(err, errlen, ARB_EIO, "socket: %s", strerror(errno));
    int one = 1;
    if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0) {
        int e = errno;
        close(fd);
        return arb_errf(err, errlen, ARB_EIO, "SO_REUSEPORT: %s", strerror(e));
    }
    if (buf > 0) {
        set_buf(fd, SO_RCVBUF, SO_RCVBUFFORCE, buf);
        set_buf(fd, SO_SNDBUF, SO_SNDBUFFORCE, buf);
    }
    struct sockaddr_in any;
    if (!bind_to) {
        memset(&any, 0, sizeof any);
        any.sin_family = AF_INET;
        bind_to = &any;
    }
    if (bind(fd, (const struct sockaddr *)bind_to, sizeof *bind_to) < 0) {
        char a[32];
        int e = errno;
        close(fd);
        return arb_errf(err, errlen, ARB_EIO, "bind %s: %s", rt_addr_str(bind_to, a, sizeof a),
                        strerror(e));
    }
    return fd;
}

int rt_txq_init(rt_txq *q, int fd, double drop, uint64_t seed, int gso)
{
    memset(q, 0, sizeof *q);
    q->fd = fd;
    q->drop = drop;
    q->gso = gso;
    arb_rng_seed(&q->rng, seed);
    q->head = arb_malloc(RT_BATCH * sizeof *q->head);
    q->data = arb_malloc(RT_BATCH * sizeof *q->data);
    if (!q->head || !q->data) {
        rt_txq_free(q);
        return ARB_ENOMEM;
    }
    return 0;
}

void rt_txq_free(rt_txq *q)
{
    arb_free(q->head);
    arb_free(q->data);
    q->head = NULL;
    q->data = NULL;
}

/* An IP_PKTINFO control message asking to send from src, at c. */
static void put_pktinfo(struct cmsghdr *c, uint32_t src)
{
    struct in_pktinfo pi;
    memset(&pi, 0, sizeof pi);
    pi.ipi_spec_dst.s_addr = src;
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof pi);
    memcpy(CMSG_DATA(c), &pi, sizeof pi);
}

void rt_tx(rt_txq *q, const struct sockaddr_in *to, const uint8_t *head, size_t hlen,
           const uint8_t *payload, size_t plen, int copy)
{
    rt_tx_src(q, to, 0, head, hlen, payload, plen, copy);
}

void rt_tx_src(rt_txq *q, const struct sockaddr_in *to, uint32_t src, const uint8_t *head,
               size_t hlen, const uint8_t *payload, size_t plen, int copy)
{
    if (q->drop > 0 && arb_rng_double(&q->rng) < q->drop) {
        q->drops++;
        return;
    }
    if (hlen > RT_HEAD_MAX) return; /* never: control messages and headers are smaller */
    if (q->n == RT_BATCH) rt_tx_flush(q);
    uint32_t i = q->n++;
    memcpy(q->head[i], head, hlen);
    q->keyed[i] = (uint8_t)q->by_channel;
    q->to[i] = *to;
    q->src[i] = src;
    q->iov[i][0].iov_base = q->head[i];
    q->iov[i][0].iov_len = hlen;
    if (plen && copy) {
        memcpy(q->data[i], payload, plen);
        payload = q->data[i];
    }
    q->iov[i][1].iov_base = (void *)(uintptr_t)payload;
    q->iov[i][1].iov_len = plen;
    struct msghdr *m = &q->msg[i].msg_hdr;
    memset(m, 0, sizeof m[0]);
    m->msg_name = &q->to[i];
    m->msg_namelen = sizeof q->to[i];
    m->msg_iov = q->iov[i];
    m->msg_iovlen = plen ? 2 : 1;
    if (src) {
        _Static_assert(CMSG_SPACE(sizeof(struct in_pktinfo)) <= sizeof q->ctl[0], "room");
        m->msg_control = q->ctl[i];
        m->msg_controllen = CMSG_SPACE(sizeof(struct in_pktinfo));
        put_pktinfo(CMSG_FIRSTHDR(m), src);
    }
}

/* sendmmsg of msg[0..n), every one tried once: a full socket buffer waits
 * a moment once, then the rest is dropped and counted (the protocol
 * recovers it). Returns the messages sent; *bad (GSO sends only): a send
 * the kernel refused (EINVAL, EIO: no UDP GSO here), its index. */
static uint32_t send_all(rt_txq *q, struct mmsghdr *msg, uint32_t n, int gso, int *bad)
{
    if (q->ring) return rt_uring_send(q, msg, n, gso, bad);
    uint32_t off = 0, sent = 0;
    *bad = -1;
    while (off < n) {
        int k = sendmmsg(q->fd, msg + off, n - off, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
            struct pollfd p = {.fd = q->fd, .events = POLLOUT};
            if (poll(&p, 1, 1) == 1) k = sendmmsg(q->fd, msg + off, n - off, 0);
        }
        if (k < 0) {
            if (gso && (errno == EINVAL || errno == EIO) && msg[off].msg_hdr.msg_controllen) {
                *bad = (int)off;
                return sent;
            }
            q->errors++;
            off++;
            continue;
        }
        for (int i = 0; i < k; i++)
            q->bytes += msg[off + i].msg_len;
        sent += (uint32_t)k;
        off += (uint32_t)k;
    }
    return sent;
}

static size_t dgram_len(const rt_txq *q, uint32_t i)
{
    return q->iov[i][0].iov_len + q->iov[i][1].iov_len;
}

/* 0 when datagrams i and j, queued for a switch, name another job or
 * channel (bytes 4-9 of the runtime header). A GSO send to a switch holds
 * one channel's datagrams only: a switch with several threads steers each
 * datagram by its channel, and the kernel steers a GSO send (which it may
 * deliver whole, as one GRO receive) by its first. */
static int same_channel(const rt_txq *q, uint32_t i, uint32_t j)
{
    if (!q->keyed[i] || q->iov[i][0].iov_len < RT_HDR_LEN || q->iov[j][0].iov_len < RT_HDR_LEN)
        return 1;
    return memcmp(q->head[i] + 4, q->head[j] + 4, 6) == 0;
}

/* Group the queue into GSO sends: runs of equal-sized datagrams of one
 * channel to one destination, in each destination's order; the last of a
 * run may be shorter. Fills gmsg; returns how many; seg[g]: datagrams in
 * send g. */
static uint32_t gso_groups(rt_txq *q, uint8_t *seg)
{
    uint8_t used[RT_BATCH] = {0};
    uint32_t g = 0, v = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        if (used[i]) continue;
        size_t size = dgram_len(q, i), total = size;
        struct msghdr *m = &q->gmsg[g].msg_hdr;
        memset(m, 0, sizeof *m);
        m->msg_name = &q->to[i];
        m->msg_namelen = sizeof q->to[i];
        m->msg_iov = &q->giov[v];
        uint32_t segs = 0;
        for (uint32_t j = i; j < q->n && segs < RT_GSO_SEGS; j++) {
            if (used[j] || !rt_addr_eq(&q->to[j], &q->to[i]) || q->src[j] != q->src[i]) continue;
            size_t len = dgram_len(q, j);
            if (j != i && (len > size || total + len > 65000 || !same_channel(q, i, j))) break;
            used[j] = 1;
            segs++;
            total += j != i ? len : 0;
            q->giov[v++] = q->iov[j][0];
            if (q->iov[j][1].iov_len) q->giov[v++] = q->iov[j][1];
            if (len < size) break; /* a shorter one ends the run */
        }
        m->msg_iovlen = (size_t)(&q->giov[v] - m->msg_iov);
        _Static_assert(CMSG_SPACE(sizeof(uint16_t)) + CMSG_SPACE(sizeof(struct in_pktinfo)) <=
                           sizeof q->gctl[0],
                       "room for both control messages");
        size_t cl = (segs > 1 ? CMSG_SPACE(sizeof(uint16_t)) : 0) +
                    (q->src[i] ? CMSG_SPACE(sizeof(struct in_pktinfo)) : 0);
        if (cl) {
            memset(q->gctl[g], 0, sizeof q->gctl[g]);
            m->msg_control = q->gctl[g];
            m->msg_controllen = cl;
            struct cmsghdr *c = CMSG_FIRSTHDR(m);
            if (segs > 1) {
                c->cmsg_level = SOL_UDP;
                c->cmsg_type = UDP_SEGMENT;
                c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
                uint16_t gs = (uint16_t)size;
                memcpy(CMSG_DATA(c), &gs, sizeof gs);
                q->gso_sends++;
                c = CMSG_NXTHDR(m, c);
            }
            if (q->src[i]) put_pktinfo(c, q->src[i]);
        }
        seg[g++] = (uint8_t)segs;
    }
    return g;
}

void rt_tx_flush(rt_txq *q)
{
    if (q->n == 0) return;
    int bad;
    if (q->gso) {
        uint8_t seg[RT_BATCH];
        uint32_t g = gso_groups(q, seg);
        uint32_t done = send_all(q, q->gmsg, g, 1, &bad);
        for (uint32_t i = 0; i < done; i++)
            q->pkts += seg[i];
        if (bad < 0) {
            q->n = 0;
            return;
        }
        /* the kernel has no UDP GSO: send everything one by one from now
         * (what went out is sent again: a duplicate the protocol drops) */
        q->gso = 0;
    }
    q->pkts += send_all(q, q->msg, q->n, 0, &bad);
    q->n = 0;
}

int rt_rxq_init(rt_rxq *q, int fd, int gro)
{
    memset(q, 0, sizeof *q);
    q->fd = fd;
    int one = 1;
    q->gro = gro && setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
    q->bufsz = q->gro ? RT_GRO_BUF : RT_DGRAM_MAX + 64;
    q->arena = arb_malloc(RT_BATCH * q->bufsz);
    if (!q->arena) return ARB_ENOMEM;
    for (int i = 0; i < RT_BATCH; i++) {
        q->iov[i].iov_base = q->arena + (size_t)i * q->bufsz;
        q->iov[i].iov_len = q->bufsz;
    }
    return 0;
}

int rt_rxq_pktinfo(rt_rxq *q)
{
    int one = 1;
    if (setsockopt(q->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one) < 0) return ARB_EIO;
    q->pktinfo = 1;
    return 0;
}

void rt_rxq_free(rt_rxq *q)
{
    rt_uring_detach(q);
    arb_free(q->arena);
    q->arena = NULL;
}

void rt_rx_prepare(rt_rxq *q, uint32_t i)
{
    struct msghdr *m = &q->msg[i].msg_hdr;
    memset(m, 0, sizeof *m);
    m->msg_name = &q->from[i];
    m->msg_namelen = sizeof q->from[i];
    m->msg_iov = &q->iov[i];
    m->msg_iovlen = 1;
    if (q->gro || q->pktinfo) {
        m->msg_control = q->ctl[i];
        m->msg_controllen = sizeof q->ctl[i];
    }
}

int rt_rx_take(rt_rxq *q, uint32_t i, size_t len, int n)
{
    struct msghdr *m = &q->msg[i].msg_hdr;
    size_t seg = len;
    q->local[i] = 0;
    if (q->gro || q->pktinfo) {
        for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
            if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
                int v;
                memcpy(&v, CMSG_DATA(c), sizeof v);
                if (v > 0) seg = (size_t)v;
            } else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
                struct in_pktinfo pi;
                memcpy(&pi, CMSG_DATA(c), sizeof pi);
                q->local[i] = pi.ipi_addr.s_addr;
            }
        }
    }
    uint8_t *b = q->iov[i].iov_base;
    for (size_t off = 0; off < len && n < (int)(sizeof q->dg / sizeof q->dg[0]); off += seg) {
        q->dg[n].buf = b + off;
        q->dg[n].len = len - off < seg ? len - off : seg;
        q->dg[n].from = &q->from[i];
        q->dg[n].local = q->local[i];
        n++;
    }
    return n;
}

int rt_rx(rt_rxq *q)
{
    if (q->ring) return rt_uring_rx(q);
    for (uint32_t i = 0; i < RT_BATCH; i++)
        rt_rx_prepare(q, i);
    int k;
    do
        k = recvmmsg(q->fd, q->msg, RT_BATCH, MSG_DONTWAIT, NULL);
    while (k < 0 && errno == EINTR);
    int n = 0;
    for (int i = 0; i < k; i++)
        n = rt_rx_take(q, (uint32_t)i, q->msg[i].msg_len, n);
    return n;
}

int64_t rt_rx_queued(const rt_rxq *q)
{
    uint32_t mem[SK_MEMINFO_VARS];
    socklen_t len = sizeof mem;
    if (getsockopt(q->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0 ||
        len < (SK_MEMINFO_RMEM_ALLOC + 1) * sizeof mem[0])
        return -1;
    return mem[SK_MEMINFO_RMEM_ALLOC];
}

int rt_rxq_wait(rt_rxq *q, int wake, arb_time wait, arb_time spin)
{
    if (q->ring) return rt_uring_wait(q, wake, wait, spin);
    return rt_wait_readable2(q->fd, wake, wait, spin);
}

int rt_wait_readable(int fd, arb_time wait, arb_time spin)
{
    return rt_wait_readable2(fd, -1, wait, spin);
}

int rt_wait_readable2(int fd, int wake, arb_time wait, arb_time spin)
{
    struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = wake, .events = POLLIN}};
    nfds_t np = wake >= 0 ? 2 : 1;
    if (spin > wait) spin = wait;
    if (spin) {
        /* a reply due within microseconds: look again, yielding the core
         * between looks, rather than sleep and pay a wake-up */
        arb_time t0 = rt_now(), t;
        do {
            if (poll(p, np, 0) > 0) return 0;
            sched_yield();
            t = rt_now();
        } while (t - t0 < spin);
        wait -= t - t0 < wait ? t - t0 : wait;
        if (wait == 0) return 0;
    }
    if (wait > 5 * ARB_PS_PER_S) wait = 5 * ARB_PS_PER_S;
    struct timespec ts = {.tv_sec = (time_t)(wait / ARB_PS_PER_S),
                          .tv_nsec = (long)((wait % ARB_PS_PER_S) / ARB_PS_PER_NS)};
    (void)ppoll(p, np, &ts, NULL);
    return 1;
}

arb_time rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (arb_time)ts.tv_sec * ARB_PS_PER_S + (arb_time)ts.tv_nsec * ARB_PS_PER_NS;
}
