/*
 * bench_switch: the software switch's forwarding and aggregation rate
 * alone. The switch (star, one job of N ranks) is fed from memory the
 * datagrams of an AllReduce channel, offset after offset: a credit from
 * the responder carrying a full result (replicated to the N-1 members), then
 * the N-1 members' requests (8192 B each, --payload) that complete the slot and leave
 * as one aggregate to the responder. What it sends goes to real sockets that
 * nobody reads, so the sending system calls are paid and the receiving ones
 * are not. Prints requests per second, the request payload aggregated in
 * Gbit/s, all datagrams (in and out) per second, the cores it used (CPU
 * time of every thread over the wall time: below 1 on a machine busy with
 * other work) and requests per CPU second (the rate a core would give).
 *
 * With --threads T (2..N) the switch has T threads and T feeders, each
 * in its own thread feeding one channel its switch thread owns, as the
 * kernel's steering would: the rate of the threads together, each paying
 * its sends.
 *
 * --io uring sends through io_uring (where built and allowed).
 *
 * --payload B (a multiple of 8 up to 8192) sends smaller packets: how the
 * rate in packets and in bytes follows their size shows what a datagram
 * costs beside its bytes.
 *
 * Usage: bench_switch [--seconds S] [--ranks N] [--threads T] [--no-gso] [--io mmsg|uring]
 *                     [--payload B]
 */
#define _GNU_SOURCE
#include "arbor/rt.h"
#include "arbor/wire.h"
#include "rt/rt_int.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t arbor_packet(uint8_t *b, const rt_hdr *rh, const arb_hdr *h, size_t plen)
{
    size_t hl = 0;
    rt_hdr_put(b, rh);
    if (arb_hdr_encode(h, plen, b + RT_HDR_LEN, ARB_HDR_LEN_LONG, &hl) < 0) abort();
    memset(b + RT_HDR_LEN + hl, 1, plen);
    return RT_HDR_LEN + hl + plen;
}

/* CPU time of the whole process (every thread), user and system. */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

struct feeder {
    arb_rt_switch *s;
    uint32_t k, n, threads, slots;
    size_t payload;
    const struct sockaddr_in *addr;
    arb_time end;
    uint64_t requests, offsets;
};

/* Feed switch thread k the offsets of channel c, one it owns ((job 1 + c)
 * mod threads = k), from rank c (the credit) and the others (requests). */
static void *feed_main(void *arg)
{
    struct feeder *fd = arg;
    const uint32_t n = fd->n, c = (fd->k + fd->threads - 1) % fd->threads;
    /* a batch of 16 offsets in flight, as a receive batch brings them: the
     * switch's sends reference these buffers until the flush */
    enum { BATCH_OFFSETS = 16 };
    uint8_t(*credit)[RT_DGRAM_MAX] = malloc(BATCH_OFFSETS * sizeof *credit);
    uint8_t(*req)[64][RT_DGRAM_MAX] = malloc(BATCH_OFFSETS * sizeof *req);
    if (!credit || !req) abort();
    arb_time now = rt_now();
    while (now < fd->end) {
        for (int burst = 0; burst < BATCH_OFFSETS; burst++, fd->offsets++) {
            uint32_t off = (uint32_t)(fd->offsets & ARB_OFFSET_MASK);
            uint32_t slot = (uint32_t)(fd->offsets % fd->slots); /* the pool's rotation */
            rt_hdr rc = {.kind = RT_K_ARBOR,
                         .dst_kind = 1,
                         .job = 1,
                         .channel = (uint16_t)c,
                         .src = (uint16_t)c};
            arb_hdr h;
            arb_hdr_init(&h, ARB_PT_RESPONSE, 0, ARB_DTYPE_F32, 0);
            h.op = ARB_OP_SUM;
            h.credit_valid = 1;
            h.offset_b = off;
            h.offset_a = off ? off - 1 : 0;
            h.payload_valid = 1;
            size_t cl = arbor_packet(credit[burst], &rc, &h, fd->payload);
            rt_switch_feed_on(fd->s, fd->k, &fd->addr[c], credit[burst], cl, now);
            for (uint32_t r = 0; r < n; r++) {
                if (r == c) continue;
                rt_hdr rq = {
                    .kind = RT_K_ARBOR, .job = 1, .channel = (uint16_t)c, .src = (uint16_t)r};
                arb_hdr q;
                arb_hdr_init(&q, ARB_PT_DATA_REQUEST, 0, ARB_DTYPE_F32, 0);
                q.op = ARB_OP_SUM;
                q.payload_valid = 1;
                q.agg_depth = 1;
                q.agg_loc[0] = (uint16_t)slot;
                q.fanin[0] = (uint8_t)(n - 1);
                q.offset_a = off;
                q.offset_b = 1;
                size_t ql = arbor_packet(req[burst][r], &rq, &q, fd->payload);
                rt_switch_feed_on(fd->s, fd->k, &fd->addr[r], req[burst][r], ql, now);
                fd->requests++;
            }
        }
        rt_switch_flush_on(fd->s, fd->k);
        now = rt_now();
    }
    free(credit);
    free(req);
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = 2;
    uint32_t n = 4;
    int no_gso = 0;
    uint32_t threads = 1;
    size_t payload = ARB_PAYLOAD_MAX;
    int uring = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--ranks") == 0 && i + 1 < argc)
            n = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--payload") == 0 && i + 1 < argc)
            payload = (size_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-gso") == 0)
            no_gso = 1;
        else if (strcmp(argv[i], "--io") == 0 && i + 1 < argc)
            uring = strcmp(argv[++i], "uring") == 0;
    }
    if (n < 2 || n > 64) n = 4;
    if (payload < 8 || payload > ARB_PAYLOAD_MAX || payload % 8) payload = ARB_PAYLOAD_MAX;
    if (threads < 1 || threads > n) threads = 1; /* a channel per thread at least */
    arb_rt_switch_config cfg;
    arb_rt_switch_config_default(&cfg);
    cfg.listen = "127.0.0.1:0";
    cfg.jobs[0].id = 1;
    cfg.jobs[0].secret = "bench";
    cfg.n_jobs = 1;
    cfg.no_gso = no_gso;
    cfg.threads = threads;
    cfg.io = uring ? ARB_RT_IO_URING : ARB_RT_IO_MMSG;
    arb_rt_switch *s;
    char err[256];
    if (arb_rt_switch_new(&s, &cfg, err, sizeof err) < 0) {
        fprintf(stderr, "bench_switch: %s\n", err);
        return 1;
    }
    uint8_t key[RT_KEY_LEN];
    rt_key(key, "bench");
    struct sockaddr_in addr[64];
    int sink[64];
    for (uint32_t r = 0; r < n; r++) {
        /* a sink nobody reads: the switch's sends are paid, then dropped */
        sink[r] = socket(AF_INET, SOCK_DGRAM, 0);
        int small = 4096;
        setsockopt(sink[r], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        memset(&addr[r], 0, sizeof addr[r]);
        addr[r].sin_family = AF_INET;
        addr[r].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(sink[r], (struct sockaddr *)&addr[r], sizeof addr[r]);
        socklen_t al = sizeof addr[r];
        getsockname(sink[r], (struct sockaddr *)&addr[r], &al);
        rt_join j = {.job = 1, .rank = r, .size = n, .counter = 1};
        uint8_t b[RT_JOIN_LEN];
        rt_join_put(b, &j, key);
        rt_switch_feed(s, &addr[r], b, sizeof b, 1);
        rt_switch_flush(s);
    }
    /* one feeder per switch thread, each in its own thread, feeding a
     * channel that thread owns */
    struct feeder fd[ARB_RT_SWITCH_MAX_THREADS];
    pthread_t th[ARB_RT_SWITCH_MAX_THREADS];
    double cpu0 = cpu_seconds();
    arb_time t0 = rt_now();
    for (uint32_t k = 0; k < threads; k++) {
        fd[k] = (struct feeder){.s = s,
                                .k = k,
                                .n = n,
                                .threads = threads,
                                .addr = addr,
                                .slots = cfg.slots,
                                .payload = payload,
                                .end = t0 + (arb_time)(seconds * 1e12)};
        if (k > 0) pthread_create(&th[k], NULL, feed_main, &fd[k]);
    }
    feed_main(&fd[0]);
    uint64_t requests = fd[0].requests, offsets = fd[0].offsets;
    for (uint32_t k = 1; k < threads; k++) {
        pthread_join(th[k], NULL);
        requests += fd[k].requests;
        offsets += fd[k].offsets;
    }
    arb_time now = rt_now();
    double span = (double)(now - t0) / 1e12, cpu = cpu_seconds() - cpu0;
    arb_rt_switch_stats st;
    arb_rt_switch_get_stats(s, &st);
    printf("# bench_switch: one switch, %u thread(s)%s, %u ranks, AllReduce offsets of %zu B, "
           "%.1f s, %s\n",
           threads, threads > 1 ? " (a feeder and a channel each)" : "", n, payload, span,
           no_gso ? "no GSO" : "GSO where the kernel has it");
    arb_rt_switch_stats st0;
    arb_rt_switch_get_stats(s, &st0);
    printf("# sends by %s\n", st0.io_uring ? "io_uring" : "sendmmsg");
    printf("# %14s %12s %14s %12s %10s %6s %14s\n", "requests/s", "Gbit/s", "datagrams/s",
           "aggregates", "agg_drops", "cores", "requests/cpu-s");
    printf("  %14.0f %12.2f %14.0f %12llu %10llu %6.2f %14.0f\n", requests / span,
           requests * (double)payload * 8 / span / 1e9, (st.rx_pkts + st.tx_pkts) / span,
           (unsigned long long)st.aggregates, (unsigned long long)st.agg_drops, cpu / span,
           cpu > 0 ? requests / cpu : 0);
    arb_rt_switch_free(s);
    for (uint32_t r = 0; r < n; r++)
        close(sink[r]);
    return st.aggregates + 1 >= offsets ? 0 : 1;
}
