/*
 * bench_loopback: the loopback ceiling the runtime works under. One thread
 * sends datagrams of the runtime's full size (16 B runtime header + 16 B
 * Arbor header + 8192 B payload = 8224 B) as fast as it can to another that
 * receives them, for `seconds`, in two ways:
 *
 *   mmsg     sendmmsg / recvmmsg, 64 datagrams a call
 *   gso      UDP GSO (UDP_SEGMENT: 7 datagrams of one send) into a socket
 *            with UDP_GRO, recvmmsg of the coalesced buffers
 *
 * and prints the payload the receiver got, in Gbit/s and datagrams per
 * second (what was sent but dropped for a full socket buffer does not
 * count). Usage: bench_loopback [--seconds S] [--mode mmsg|gso|both]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define DGRAM 8224
#define PAYLOAD 8192
#define BATCH 64
#define GSO_SEGS 7

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct run {
    int gso;
    double seconds;
    int rx_fd;
    struct sockaddr_in to;
    volatile int stop;
    unsigned long long rx_bytes, rx_dgrams;
    double t0, t1;
};

static void *receiver(void *arg)
{
    struct run *r = arg;
    size_t bufsz = r->gso ? 65536 : DGRAM + 64;
    char *buf = malloc((size_t)BATCH * bufsz);
    struct mmsghdr m[BATCH];
    struct iovec iov[BATCH];
    char ctl[BATCH][64];
    while (!r->stop) {
        for (int i = 0; i < BATCH; i++) {
            iov[i].iov_base = buf + (size_t)i * bufsz;
            iov[i].iov_len = bufsz;
            memset(&m[i].msg_hdr, 0, sizeof m[i].msg_hdr);
            m[i].msg_hdr.msg_iov = &iov[i];
            m[i].msg_hdr.msg_iovlen = 1;
            m[i].msg_hdr.msg_control = ctl[i];
            m[i].msg_hdr.msg_controllen = sizeof ctl[i];
        }
        struct pollfd p = {.fd = r->rx_fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0) continue;
        int k = recvmmsg(r->rx_fd, m, BATCH, MSG_DONTWAIT, NULL);
        if (k <= 0) continue;
        double t = now_s();
        if (r->rx_dgrams == 0) r->t0 = t;
        for (int i = 0; i < k; i++) {
            size_t seg = DGRAM;
            for (struct cmsghdr *c = CMSG_FIRSTHDR(&m[i].msg_hdr); c;
                 c = CMSG_NXTHDR(&m[i].msg_hdr, c))
                if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
                    seg = (size_t) * (int *)(void *)CMSG_DATA(c);
            size_t n = (m[i].msg_len + seg - 1) / seg;
            r->rx_dgrams += n;
            r->rx_bytes += (unsigned long long)n * PAYLOAD;
        }
        r->t1 = t;
    }
    free(buf);
    return NULL;
}

static void sender(struct run *r, int fd)
{
    char *buf = calloc(GSO_SEGS * BATCH, DGRAM);
    struct mmsghdr m[BATCH];
    struct iovec iov[BATCH];
    char ctl[BATCH][CMSG_SPACE(sizeof(uint16_t))];
    double end = now_s() + r->seconds;
    while (now_s() < end) {
        for (int i = 0; i < BATCH; i++) {
            iov[i].iov_base = buf + (size_t)i * (r->gso ? GSO_SEGS : 1) * DGRAM;
            iov[i].iov_len = (size_t)(r->gso ? GSO_SEGS : 1) * DGRAM;
            memset(&m[i].msg_hdr, 0, sizeof m[i].msg_hdr);
            m[i].msg_hdr.msg_name = &r->to;
            m[i].msg_hdr.msg_namelen = sizeof r->to;
            m[i].msg_hdr.msg_iov = &iov[i];
            m[i].msg_hdr.msg_iovlen = 1;
            if (r->gso) {
                m[i].msg_hdr.msg_control = ctl[i];
                m[i].msg_hdr.msg_controllen = sizeof ctl[i];
                struct cmsghdr *c = CMSG_FIRSTHDR(&m[i].msg_hdr);
                c->cmsg_level = SOL_UDP;
                c->cmsg_type = UDP_SEGMENT;
                c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
                uint16_t seg = DGRAM;
                memcpy(CMSG_DATA(c), &seg, sizeof seg);
            }
        }
        int k = sendmmsg(fd, m, BATCH, 0);
        if (k < 0 && (errno == EAGAIN || errno == ENOBUFS)) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            poll(&p, 1, 1);
        } else if (k < 0) {
            fprintf(stderr, "bench_loopback: sendmmsg: %s\n", strerror(errno));
            break;
        }
    }
    free(buf);
}

static int measure(int gso, double seconds, double *gbps, double *dps)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.gso = gso;
    r.seconds = seconds;
    int big = 64 << 20;
    r.rx_fd = socket(AF_INET, SOCK_DGRAM, 0);
    int tx = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    setsockopt(r.rx_fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
    setsockopt(tx, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
    if (gso) {
        int one = 1;
        if (setsockopt(r.rx_fd, SOL_UDP, UDP_GRO, &one, sizeof one) < 0) {
            fprintf(stderr, "bench_loopback: UDP_GRO not available: %s\n", strerror(errno));
            close(r.rx_fd);
            close(tx);
            return -1;
        }
    }
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(r.rx_fd, (struct sockaddr *)&a, sizeof a);
    socklen_t al = sizeof r.to;
    getsockname(r.rx_fd, (struct sockaddr *)&r.to, &al);
    pthread_t t;
    pthread_create(&t, NULL, receiver, &r);
    sender(&r, tx);
    usleep(100000);
    r.stop = 1;
    pthread_join(t, NULL);
    close(r.rx_fd);
    close(tx);
    double span = r.t1 - r.t0;
    if (span <= 0 || r.rx_dgrams == 0) return -1;
    *gbps = r.rx_bytes * 8.0 / span / 1e9;
    *dps = r.rx_dgrams / span;
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = 2;
    const char *mode = "both";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--mode") == 0)
            mode = argv[i + 1];
    }
    printf("# loopback ceiling: %d B datagrams (%d B payload), %.1f s each\n", DGRAM, PAYLOAD,
           seconds);
    printf("# %-6s %12s %14s\n", "mode", "Gbit/s", "datagrams/s");
    int rc = 0;
    for (int gso = 0; gso < 2; gso++) {
        if (strcmp(mode, "both") != 0 && strcmp(mode, gso ? "gso" : "mmsg") != 0) continue;
        double g, d;
        if (measure(gso, seconds, &g, &d) < 0) {
            printf("  %-6s %12s %14s\n", gso ? "gso" : "mmsg", "n/a", "n/a");
            rc = 1;
            continue;
        }
        printf("  %-6s %12.2f %14.0f\n", gso ? "gso" : "mmsg", g, d);
    }
    return rc;
}
