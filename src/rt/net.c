/*
 * UDP for the runtime (rt_int.h): addresses, sockets with large buffers,
 * batched sends and receives (sendmmsg, recvmmsg), the clock.
 */
#define _GNU_SOURCE
#include "rt/rt_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return arb_errf(err, errlen, ARB_EIO, "socket: %s", strerror(errno));
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

int rt_txq_init(rt_txq *q, int fd, double drop, uint64_t seed)
{
    memset(q, 0, sizeof *q);
    q->fd = fd;
    q->drop = drop;
    arb_rng_seed(&q->rng, seed);
    q->head = malloc(RT_BATCH * sizeof *q->head);
    q->data = malloc(RT_BATCH * sizeof *q->data);
    if (!q->head || !q->data) {
        rt_txq_free(q);
        return ARB_ENOMEM;
    }
    return 0;
}

void rt_txq_free(rt_txq *q)
{
    free(q->head);
    free(q->data);
    q->head = NULL;
    q->data = NULL;
}

void rt_tx(rt_txq *q, const struct sockaddr_in *to, const uint8_t *head, size_t hlen,
           const uint8_t *payload, size_t plen, int copy)
{
    if (q->drop > 0 && arb_rng_double(&q->rng) < q->drop) {
        q->drops++;
        return;
    }
    if (hlen > RT_HEAD_MAX) return; /* never: control messages and headers are smaller */
    if (q->n == RT_BATCH) rt_tx_flush(q);
    uint32_t i = q->n++;
    memcpy(q->head[i], head, hlen);
    q->to[i] = *to;
    q->iov[i][0].iov_base = q->head[i];
    q->iov[i][0].iov_len = hlen;
    if (plen && copy) {
        memcpy(q->data[i], payload, plen);
        payload = q->data[i];
    }
    q->iov[i][1].iov_base = (void *)(uintptr_t)payload;
    q->iov[i][1].iov_len = plen;
    struct msghdr *m = &q->msg[i].msg_hdr;
    memset(m, 0, sizeof *m);
    m->msg_name = &q->to[i];
    m->msg_namelen = sizeof q->to[i];
    m->msg_iov = q->iov[i];
    m->msg_iovlen = plen ? 2 : 1;
}

void rt_tx_flush(rt_txq *q)
{
    uint32_t off = 0;
    while (off < q->n) {
        int k = sendmmsg(q->fd, q->msg + off, q->n - off, 0);
        if (k < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
                /* a full socket buffer: wait briefly once, then drop */
                struct pollfd p = {.fd = q->fd, .events = POLLOUT};
                if (poll(&p, 1, 1) == 1) {
                    k = sendmmsg(q->fd, q->msg + off, q->n - off, 0);
                    if (k > 0) goto sent;
                }
            }
            q->errors++; /* drop this one; the protocol recovers it */
            off++;
            continue;
        }
    sent:
        for (int i = 0; i < k; i++) {
            q->pkts++;
            q->bytes += q->msg[off + i].msg_len;
        }
        off += (uint32_t)k;
    }
    q->n = 0;
}

int rt_rxq_init(rt_rxq *q, int fd)
{
    memset(q, 0, sizeof *q);
    q->fd = fd;
    q->buf = malloc(RT_BATCH * sizeof *q->buf);
    if (!q->buf) return ARB_ENOMEM;
    for (int i = 0; i < RT_BATCH; i++) {
        q->iov[i].iov_base = q->buf[i];
        q->iov[i].iov_len = sizeof q->buf[i];
    }
    return 0;
}

void rt_rxq_free(rt_rxq *q)
{
    free(q->buf);
    q->buf = NULL;
}

int rt_rx(rt_rxq *q)
{
    for (int i = 0; i < RT_BATCH; i++) {
        struct msghdr *m = &q->msg[i].msg_hdr;
        memset(m, 0, sizeof *m);
        m->msg_name = &q->from[i];
        m->msg_namelen = sizeof q->from[i];
        m->msg_iov = &q->iov[i];
        m->msg_iovlen = 1;
    }
    int k;
    do
        k = recvmmsg(q->fd, q->msg, RT_BATCH, MSG_DONTWAIT, NULL);
    while (k < 0 && errno == EINTR);
    return k < 0 ? 0 : k;
}

void rt_wait_readable(int fd, arb_time wait)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (wait > 5 * ARB_PS_PER_S) wait = 5 * ARB_PS_PER_S;
    struct timespec ts = {.tv_sec = (time_t)(wait / ARB_PS_PER_S),
                          .tv_nsec = (long)((wait % ARB_PS_PER_S) / ARB_PS_PER_NS)};
    (void)ppoll(&p, 1, &ts, NULL);
}

arb_time rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (arb_time)ts.tv_sec * ARB_PS_PER_S + (arb_time)ts.tv_nsec * ARB_PS_PER_NS;
}
