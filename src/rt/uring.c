/*
 * io_uring for the runtime's sockets (rt_int.h; optional: built when CMake
 * finds liburing, ARB_HAVE_URING). A socket on a ring keeps RT_BATCH
 * receives posted (IORING_OP_RECVMSG, one per slot of its rt_rxq, with the
 * slot's own msghdr, buffer and control space, so what arrives is parsed as
 * recvmmsg's is); a flush posts each send of the batch (IORING_OP_SENDMSG,
 * MSG_DONTWAIT: a full socket buffer drops, as sendmmsg's would after its
 * short wait) and reaps them before it returns, since the datagrams
 * reference the caller's buffers. Receives consumed by one rt_rx are posted
 * again at the next, and submitted with the next system call the ring
 * makes anyway (a flush, a wait, or a receive that found nothing), so a
 * busy loop makes one io_uring_enter per round where the plain path makes
 * a recvmmsg, a sendmmsg and a ppoll.
 */
#define _GNU_SOURCE
#include "rt/rt_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef ARB_HAVE_URING

int rt_uring_built(void)
{
    return 0;
}

int rt_uring_attach(rt_rxq *rx, rt_txq *tx, char *err, size_t errlen)
{
    (void)rx;
    (void)tx;
    return arb_errf(err, errlen, ARB_EINVAL,
                    "io_uring: not built (liburing was not found when this library was built)");
}

void rt_uring_detach(rt_rxq *rx)
{
    (void)rx;
}

int rt_uring_rx(rt_rxq *q)
{
    (void)q;
    return 0;
}

uint32_t rt_uring_send(rt_txq *q, struct mmsghdr *msg, uint32_t n, int gso, int *bad)
{
    (void)q;
    (void)msg;
    (void)n;
    (void)gso;
    *bad = -1;
    return 0;
}

int rt_uring_wait(rt_rxq *q, int wake, arb_time wait, arb_time spin)
{
    (void)q;
    (void)wake;
    (void)wait;
    (void)spin;
    return 0;
}

int rt_uring_probe(char *why, size_t len)
{
    snprintf(why, len, "not built (liburing was not found when this library was built)");
    return 0;
}

#else

#include <liburing.h>
#include "base/alloc.h"

/* Why io_uring cannot be used here, for an error message: the sysctl
 * that disables it, when set. */
static void disabled_note(char *buf, size_t len)
{
    buf[0] = 0;
    FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
    if (!f) return;
    int v = 0;
    if (fscanf(f, "%d", &v) == 1 && v != 0)
        snprintf(buf, len, "; kernel.io_uring_disabled is %d (%s)", v,
                 v == 1 ? "only for the io_uring_group" : "disabled for everyone");
    fclose(f);
}

#define RING_ENTRIES 256
#ifndef RING_FLAGS
#define RING_FLAGS IORING_SETUP_COOP_TASKRUN
#endif
#define TAG_RX 1ull
#define TAG_TX 2ull
#define TAG_WAKE 3ull
#define TAG_CANCEL 4ull
#define TAG(t, i) ((t) << 32 | (uint64_t)(i))

struct rt_ring {
    struct io_uring ring;
    int fd;
    rt_rxq *rx;
    uint8_t armed[RT_BATCH];  /* a receive is posted in this slot */
    int32_t res[RT_BATCH];    /* a completed receive's result */
    uint32_t ready[RT_BATCH]; /* completed slots, in completion order */
    uint32_t n_ready;
    uint32_t rearm[RT_BATCH]; /* slots rt_uring_rx handed out: post again */
    uint32_t n_rearm;
    int32_t tx_res[RT_BATCH]; /* the current flush's results */
    uint32_t tx_left;
    int wake_armed, woke;
};

int rt_uring_built(void)
{
    return 1;
}

static struct io_uring_sqe *sqe_of(struct rt_ring *r)
{
    struct io_uring_sqe *s = io_uring_get_sqe(&r->ring);
    if (!s) { /* the queue is full: hand it to the kernel */
        io_uring_submit(&r->ring);
        s = io_uring_get_sqe(&r->ring);
    }
    return s;
}

/* Post slot i's receive (its msghdr reset, as rt_rx resets it). */
static void post_rx(struct rt_ring *r, uint32_t i)
{
    rt_rxq *q = r->rx;
    struct io_uring_sqe *s = sqe_of(r);
    if (!s) return; /* posted by a later round */
    rt_rx_prepare(q, i);
    io_uring_prep_recvmsg(s, r->fd, &q->msg[i].msg_hdr, 0);
    io_uring_sqe_set_data64(s, TAG(TAG_RX, i));
    r->armed[i] = 1;
}

static void on_cqe(struct rt_ring *r, const struct io_uring_cqe *c)
{
    uint64_t d = io_uring_cqe_get_data64(c);
    uint32_t tag = (uint32_t)(d >> 32), i = (uint32_t)d;
    if (tag == TAG_RX && i < RT_BATCH) {
        r->armed[i] = 0;
        if (c->res == -ECANCELED) return;
        r->res[i] = c->res;
        r->ready[r->n_ready++] = i;
    } else if (tag == TAG_TX && i < RT_BATCH) {
        r->tx_res[i] = c->res;
        if (r->tx_left) r->tx_left--;
    } else if (tag == TAG_WAKE) {
        r->wake_armed = 0;
        r->woke = 1;
    }
}

/* Every completion waiting in the queue. */
static void reap(struct rt_ring *r)
{
    struct io_uring_cqe *c;
    unsigned head, n = 0;
    io_uring_for_each_cqe(&r->ring, head, c)
    {
        on_cqe(r, c);
        n++;
    }
    io_uring_cq_advance(&r->ring, n);
}

static int ring_open(struct rt_ring **out, int fd, char *err, size_t errlen)
{
    struct rt_ring *r = arb_calloc(1, sizeof *r);
    if (!r) return ARB_ENOMEM;
    /* completions wait for this thread's next system call rather than
     * interrupt it (a thread of a switch may use another's ring after a
     * restart of its run, so not DEFER_TASKRUN, which binds one task);
     * kernels before 5.19 refuse the flag: none then */
    int rc = io_uring_queue_init(RING_ENTRIES, &r->ring, RING_FLAGS);
    if (rc == -EINVAL) rc = io_uring_queue_init(RING_ENTRIES, &r->ring, 0);
    if (rc < 0) {
        char note[96];
        disabled_note(note, sizeof note);
        arb_free(r);
        return arb_errf(err, errlen, ARB_EIO, "io_uring: the kernel refused a ring (%s%s)",
                        strerror(-rc), note);
    }
    r->fd = fd;
    *out = r;
    return 0;
}

int rt_uring_probe(char *why, size_t len)
{
    struct rt_ring *r = NULL;
    if (ring_open(&r, -1, why, len) < 0) return 0;
    io_uring_queue_exit(&r->ring);
    arb_free(r);
    return 1;
}

int rt_uring_attach(rt_rxq *rx, rt_txq *tx, char *err, size_t errlen)
{
    struct rt_ring *r = NULL;
    int rc = ring_open(&r, rx->fd, err, errlen);
    if (rc < 0) return rc;
    /* receives wait in the ring (a non-blocking socket would make each
     * fail at once); sends say MSG_DONTWAIT themselves */
    int fl = fcntl(rx->fd, F_GETFL);
    if (fl < 0 || fcntl(rx->fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        io_uring_queue_exit(&r->ring);
        arb_free(r);
        return arb_errf(err, errlen, ARB_EIO, "io_uring: fcntl: %s", strerror(errno));
    }
    r->rx = rx;
    rx->ring = r;
    tx->ring = r;
    for (uint32_t i = 0; i < RT_BATCH; i++)
        post_rx(r, i);
    io_uring_submit(&r->ring);
    return 0;
}

void rt_uring_detach(rt_rxq *rx)
{
    struct rt_ring *r = rx->ring;
    if (!r) return;
    /* cancel the posted receives and wait until none is left: they
     * reference the queue's buffers */
    struct io_uring_sqe *s = sqe_of(r);
    if (s) {
        io_uring_prep_cancel64(s, 0, IORING_ASYNC_CANCEL_ANY);
        io_uring_sqe_set_data64(s, TAG(TAG_CANCEL, 0));
    }
    io_uring_submit(&r->ring);
    arb_time t0 = rt_now();
    for (;;) {
        reap(r);
        int left = 0;
        for (uint32_t i = 0; i < RT_BATCH; i++)
            left += r->armed[i];
        if (!left || rt_now() - t0 > ARB_PS_PER_S) break;
        struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 10000000};
        struct io_uring_cqe *c;
        io_uring_wait_cqe_timeout(&r->ring, &c, &ts);
    }
    io_uring_queue_exit(&r->ring);
    arb_free(r);
    rx->ring = NULL;
}

int rt_uring_rx(rt_rxq *q)
{
    struct rt_ring *r = q->ring;
    for (uint32_t k = 0; k < r->n_rearm; k++)
        post_rx(r, r->rearm[k]);
    r->n_rearm = 0;
    reap(r);
    if (r->n_ready == 0) {
        io_uring_submit(&r->ring);
        reap(r);
    }
    int n = 0;
    for (uint32_t k = 0; k < r->n_ready; k++) {
        uint32_t i = r->ready[k];
        r->rearm[r->n_rearm++] = i;
        if (r->res[i] > 0) n = rt_rx_take(q, i, (size_t)r->res[i], n);
    }
    r->n_ready = 0;
    return n;
}

uint32_t rt_uring_send(rt_txq *q, struct mmsghdr *msg, uint32_t n, int gso, int *bad)
{
    struct rt_ring *r = q->ring;
    *bad = -1;
    if (n == 0) return 0;
    r->tx_left = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct io_uring_sqe *s = sqe_of(r);
        if (!s) {
            r->tx_res[i] = -EBUSY;
            continue;
        }
        io_uring_prep_sendmsg(s, r->fd, &msg[i].msg_hdr, MSG_DONTWAIT);
        io_uring_sqe_set_data64(s, TAG(TAG_TX, i));
        r->tx_left++;
    }
    /* every send completes at once (MSG_DONTWAIT) */
    while (r->tx_left) {
        int rc = io_uring_submit_and_wait(&r->ring, 1);
        if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) break;
        reap(r);
    }
    uint32_t sent = 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t res = r->tx_res[i];
        if (res >= 0) {
            msg[i].msg_len = (unsigned)res;
            q->bytes += (uint64_t)res;
            sent++;
        } else if (gso && (res == -EINVAL || res == -EIO) && msg[i].msg_hdr.msg_controllen) {
            if (*bad < 0) *bad = (int)i;
        } else {
            q->errors++;
        }
    }
    return sent;
}

int rt_uring_wait(rt_rxq *q, int wake, arb_time wait, arb_time spin)
{
    struct rt_ring *r = q->ring;
    reap(r);
    if (wake >= 0 && !r->wake_armed) {
        struct io_uring_sqe *s = sqe_of(r);
        if (s) {
            io_uring_prep_poll_add(s, wake, POLLIN);
            io_uring_sqe_set_data64(s, TAG(TAG_WAKE, 0));
            r->wake_armed = 1;
        }
    }
    if (r->n_ready || r->woke) {
        r->woke = 0;
        io_uring_submit(&r->ring);
        return 0;
    }
    if (spin > wait) spin = wait;
    if (spin) {
        arb_time t0 = rt_now(), t;
        io_uring_submit(&r->ring);
        do {
            reap(r);
            if (r->n_ready || r->woke) {
                r->woke = 0;
                return 0;
            }
            sched_yield();
            t = rt_now();
        } while (t - t0 < spin);
        wait -= t - t0 < wait ? t - t0 : wait;
        if (wait == 0) return 0;
    }
    if (wait > 5 * ARB_PS_PER_S) wait = 5 * ARB_PS_PER_S;
    struct __kernel_timespec ts = {.tv_sec = (long long)(wait / ARB_PS_PER_S),
                                   .tv_nsec = (long long)((wait % ARB_PS_PER_S) / ARB_PS_PER_NS)};
    struct io_uring_cqe *c;
    (void)io_uring_submit_and_wait_timeout(&r->ring, &c, 1, &ts, NULL);
    reap(r);
    r->woke = 0;
    return 1;
}

#endif /* ARB_HAVE_URING */
