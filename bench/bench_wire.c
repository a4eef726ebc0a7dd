/*
 * bench_wire: Arbor header decode + validate rate (headers per second),
 * printed beside a memcpy of the same header bytes in the same run, and the
 * frame parse rate (checksums verified) beside a memcpy of the same frames.
 *
 * usage: bench_wire [SECONDS_PER_CASE]   (default 1.0)
 */
#include "arbor/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NPKT 4096
#define PAYLOAD 64

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A varied mix of valid headers: requests, credits, aggregates, tails. */
static void make_header(arb_hdr *h, int i)
{
    memset(h, 0, sizeof *h);
    h->version = ARB_WIRE_VERSION;
    h->message_id = (uint8_t)i;
    h->dtype = ARB_DTYPE_F32;
    h->op = ARB_OP_SUM;
    h->offset_a = (uint32_t)(i * 7919) & ARB_OFFSET_MASK;
    switch (i % 4) {
    case 0: /* a requester's contribution, multi-tier */
        h->packet_type = ARB_PT_DATA_REQUEST;
        h->payload_valid = 1;
        h->ext = 1;
        h->agg_depth = 3;
        h->offset_b = 1;
        h->agg_loc[0] = (uint16_t)i, h->agg_loc[1] = 3, h->agg_loc[2] = 9;
        h->fanin[0] = 64, h->fanin[1] = 8, h->fanin[2] = 2;
        break;
    case 1: /* a credit carrying a result */
        h->packet_type = ARB_PT_RESPONSE;
        h->payload_valid = 1;
        h->credit_valid = 1;
        h->agg_depth = 1;
        h->offset_b = (uint32_t)i;
        break;
    case 2: /* an aggregate */
        h->packet_type = ARB_PT_DATA_REQUEST;
        h->payload_valid = 1;
        h->aggregated = 1;
        h->offset_b = 31;
        break;
    default: /* a tail result */
        h->packet_type = ARB_PT_RESPONSE;
        h->payload_valid = 1;
        break;
    }
}

struct pkt {
    uint8_t *buf;
    size_t len;
};

static double run_decode(const struct pkt *p, double secs, uint64_t *n_out, uint64_t *sink)
{
    uint64_t n = 0, acc = 0;
    double t0 = now_s(), t;
    do {
        for (int i = 0; i < NPKT; i++) {
            arb_hdr h;
            size_t off;
            if (arb_hdr_decode(&h, p[i].buf, p[i].len, &off) == 0) acc += h.offset_a + off;
        }
        n += NPKT;
        t = now_s();
    } while (t - t0 < secs);
    *n_out = n;
    *sink += acc;
    return t - t0;
}

static double run_memcpy_headers(const struct pkt *p, double secs, uint64_t *n_out, uint64_t *sink)
{
    uint64_t n = 0, acc = 0;
    uint8_t dst[ARB_HDR_LEN_LONG];
    double t0 = now_s(), t;
    do {
        for (int i = 0; i < NPKT; i++) {
            size_t hl = (p[i].buf[2] & 0x08) ? ARB_HDR_LEN_LONG : ARB_HDR_LEN_SHORT;
            memcpy(dst, p[i].buf, hl);
            acc += dst[(size_t)i % hl];
        }
        n += NPKT;
        t = now_s();
    } while (t - t0 < secs);
    *n_out = n;
    *sink += acc;
    return t - t0;
}

static double run_frames(const struct pkt *f, double secs, uint64_t *n_out, uint64_t *sink,
                         int parse)
{
    uint64_t n = 0, acc = 0;
    static uint8_t dst[ARB_FRAME_OVERHEAD + ARB_HDR_LEN_LONG + PAYLOAD];
    double t0 = now_s(), t;
    do {
        for (int i = 0; i < NPKT; i++) {
            if (parse) {
                const uint8_t *u;
                size_t ul;
                if (arb_frame_parse(f[i].buf, f[i].len, NULL, &u, &ul) == 0) acc += ul;
            } else {
                memcpy(dst, f[i].buf, f[i].len);
                acc += dst[i & 31];
            }
        }
        n += NPKT;
        t = now_s();
    } while (t - t0 < secs);
    *n_out = n;
    *sink += acc;
    return t - t0;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    if (secs <= 0) secs = 1.0;
    static struct pkt pk[NPKT], fr[NPKT];
    arb_frame_addr fa;
    memset(&fa, 0, sizeof fa);
    fa.ip_src = 0x0A000001, fa.ip_dst = 0x0A000002;
    fa.udp_src = 1, fa.udp_dst = ARB_UDP_PORT_DEFAULT;
    for (int i = 0; i < NPKT; i++) {
        arb_hdr h;
        make_header(&h, i);
        size_t cap = ARB_HDR_LEN_LONG + PAYLOAD, hl;
        pk[i].buf = calloc(1, cap);
        fr[i].buf = calloc(1, cap + ARB_FRAME_OVERHEAD);
        if (!pk[i].buf || !fr[i].buf || arb_hdr_encode(&h, PAYLOAD, pk[i].buf, cap, &hl) != 0) {
            fprintf(stderr, "bench_wire: setup failed\n");
            return 1;
        }
        pk[i].len = hl + PAYLOAD;
        if (arb_frame_build(&fa, pk[i].buf, pk[i].len, fr[i].buf, cap + ARB_FRAME_OVERHEAD,
                            &fr[i].len) != 0) {
            fprintf(stderr, "bench_wire: frame setup failed\n");
            return 1;
        }
    }

    uint64_t sink = 0, n1, n2, n3, n4;
    double t1 = run_decode(pk, secs, &n1, &sink);
    double t2 = run_memcpy_headers(pk, secs, &n2, &sink);
    double t3 = run_frames(fr, secs, &n3, &sink, 1);
    double t4 = run_frames(fr, secs, &n4, &sink, 0);
    double r1 = n1 / t1, r2 = n2 / t2, r3 = n3 / t3, r4 = n4 / t4;

    printf("bench_wire: %d distinct packets (16 B and 20 B headers, %d B payloads), "
           "%.1f s per case\n",
           NPKT, PAYLOAD, secs);
    printf("%-36s %14s %12s\n", "case", "per second", "ns each");
    printf("%-36s %14.0f %12.2f\n", "header decode + validate", r1, 1e9 / r1);
    printf("%-36s %14.0f %12.2f\n", "  baseline: memcpy of the header", r2, 1e9 / r2);
    printf("%-36s %14.0f %12.2f\n", "frame parse (IPv4 + UDP checksums)", r3, 1e9 / r3);
    printf("%-36s %14.0f %12.2f\n", "  baseline: memcpy of the frame", r4, 1e9 / r4);
    printf("decode / memcpy-header time ratio: %.2f; frame parse / memcpy-frame: %.2f\n", r2 / r1,
           r4 / r3);
    printf("(checksum %llu)\n", (unsigned long long)(sink & 0xFFFF));
    for (int i = 0; i < NPKT; i++) {
        free(pk[i].buf);
        free(fr[i].buf);
    }
    return 0;
}
