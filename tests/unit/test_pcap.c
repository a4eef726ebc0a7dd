/* Unit tests: pcap captures of simulated ports (frames read back with
 * libpcap and the wire codec, and decoded by tshark when it is installed). */
#define _DEFAULT_SOURCE 1 /* libpcap's headers use the BSD type names */

#include "arbor/sim.h"
#include "arbor/topo.h"
#include "arbor/wire.h"
#include "simkit.h"
#include "testkit.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the simulator sent on the captured ports, in order (a second tap,
 * chained behind the capture). */
#define MAX_REC 20000
struct rec {
    uint32_t port;
    arb_sim_pkt_info f;
    arb_time t;
};
static struct rec recs[MAX_REC];
static unsigned n_recs;
static uint32_t want_ports[2];
static unsigned n_want;

static void record(void *ctx, const arb_sim *s, uint32_t port, const arb_sim_pkt_info *f,
                   arb_time now)
{
    (void)ctx, (void)s;
    int want = n_want == 0;
    for (unsigned i = 0; i < n_want; i++)
        want |= want_ports[i] == port;
    if (want && n_recs < MAX_REC) recs[n_recs++] = (struct rec){port, *f, now};
}

/* The expected BTH opcode and PSN of a simulated packet (docs/transports.md). */
static unsigned want_opcode(const arb_sim_pkt_info *f, uint32_t n_pkts)
{
    if (f->kind == ARB_SIM_CNP) return 0x81;
    if (f->kind != ARB_SIM_DATA) return 0x11;
    if (n_pkts == 1) return 0x04;
    if (f->psn == 0) return 0x00;
    return f->psn + 1 == n_pkts ? 0x02 : 0x01;
}

static uint32_t want_psn(const arb_sim_pkt_info *f)
{
    return (f->kind == ARB_SIM_ACK ? f->psn - 1 : f->psn) & 0xFFFFFF;
}

static const uint32_t flow_pkts[2] = {40, 30};

/*
 * star:3: hosts 1 and 2 send 40 and 30 packets to host 0 through a
 * 20 KB queue (drops, so go-back-N NACKs), with ECN marking every queued
 * packet and DCQCN on (CNPs). The capture takes the switch port to host 0
 * (data) and host 0's NIC (acks, NACKs, CNPs). Source ports are in the
 * range NICs use (49152 and up): Wireshark picks the dissector of the
 * lower UDP port first, and 4791 must be the lower one.
 */
static void capture_config(arb_sim_config *cfg)
{
    arb_sim_config_default(cfg);
    cfg->route = simkit_dmodk;
    cfg->queue_bytes = 20000;
    cfg->ecn_kmin = 0;
    cfg->ecn_kmax = 1;
    cfg->dcqcn = 1;
    cfg->rto = 50 * ARB_PS_PER_US;
}

static void capture_flows(arb_sim *s, arb_time until)
{
    CHECK_EQ_I(arb_sim_add_flow(s, 1, 0, flow_pkts[0] * 4096, 0, 49153, 7, NULL), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 2, 0, 29 * 4096 + 918, 0, 49154, 9, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, until), 0);
}

static void run_capture(const char *path, uint32_t snaplen, arb_sim_pcap **capp, int all_ports)
{
    arb_topo *t = NULL;
    char err[100];
    REQUIRE_EQ_I(arb_topo_new(&t, "star:3", NULL, err, sizeof err), 0);
    want_ports[0] = arb_topo_node(t, 3)->first_port; /* switch -> host 0 */
    want_ports[1] = arb_topo_node(t, 0)->first_port; /* host 0's NIC */
    n_want = all_ports ? 0 : 2;
    n_recs = 0;
    arb_sim_pcap *cap = NULL;
    REQUIRE_EQ_I(arb_sim_pcap_open(&cap, path, want_ports, n_want, snaplen), 0);
    arb_sim_config cfg;
    capture_config(&cfg);
    cfg.tap = record;
    arb_sim_pcap_install(cap, &cfg);
    CHECK(cfg.tap == arb_sim_pcap_tap && cfg.tap_ctx == cap);
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    capture_flows(s, ARB_TIME_NEVER);
    arb_sim_stats st;
    arb_sim_get_stats(s, &st);
    CHECK_EQ_U(st.flows_done, 2);
    CHECK(st.drops > 0);
    CHECK(st.cnps_sent > 0);
    CHECK_EQ_U(arb_sim_pcap_count(cap), n_recs);
    *capp = cap;
    arb_sim_free(s);
    arb_topo_free(t);
}

static uint32_t get24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

TEST(frames_read_back)
{
    char path[] = "/tmp/arbor_pcap_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    arb_sim_pcap *cap;
    run_capture(path, 0, &cap, 0);
    CHECK_EQ_I(arb_sim_pcap_close(cap), 0);
    int kinds[4] = {0, 0, 0, 0};
    char eb[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, eb);
    REQUIRE(p != NULL);
    CHECK_EQ_I(pcap_datalink(p), DLT_EN10MB);
    CHECK_EQ_I(pcap_get_tstamp_precision(p), PCAP_TSTAMP_PRECISION_NANO);
    struct pcap_pkthdr *h;
    const u_char *d;
    unsigned i = 0;
    while (pcap_next_ex(p, &h, &d) == 1) {
        if (i >= n_recs) {
            i++;
            continue;
        }
        const arb_sim_pkt_info *f = &recs[i].f;
        kinds[f->kind & 3]++;
        uint64_t ns = recs[i].t / 1000;
        CHECK_EQ_U((uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec, ns);
        CHECK_EQ_U(h->caplen, h->len);
        arb_frame_addr a;
        const uint8_t *u;
        size_t ulen;
        REQUIRE_EQ_I(arb_frame_parse(d, h->caplen, &a, &u, &ulen), 0);
        CHECK_EQ_U(a.ip_src, 0x0A000000u | f->src);
        CHECK_EQ_U(a.ip_dst, 0x0A000000u | f->dst);
        CHECK_EQ_U(a.udp_dst, 4791);
        CHECK_EQ_U(a.udp_src, f->sport);
        CHECK_EQ_U(a.ip_tos & 3, (f->flags & ARB_SIM_CE) ? 3u : (f->flags & ARB_SIM_ECT) ? 2u : 0u);
        CHECK_EQ_U(u[0], want_opcode(f, flow_pkts[f->conn]));
        CHECK_EQ_U(get24(u + 5), f->qp);
        CHECK_EQ_U(get24(u + 9), want_psn(f));
        if (f->kind == ARB_SIM_DATA) {
            /* BTH, payload padded to 4, ICRC: the simulator's default
             * hdr_bytes (82) is this frame plus FCS, preamble and gap. */
            CHECK_EQ_U(ulen, 12 + f->payload + (4 - f->payload % 4) % 4 + 4);
            CHECK_EQ_U(u[1] >> 4 & 3, (4 - f->payload % 4) % 4);
        } else if (f->kind == ARB_SIM_CNP) {
            CHECK_EQ_U(ulen, 12 + 16 + 4);
        } else {
            CHECK_EQ_U(ulen, 12 + 4 + 4); /* BTH, AETH, ICRC: 86 B with the extras */
            CHECK_EQ_U(h->len + ARB_WIRE_EXTRA, 86);
            CHECK_EQ_U(u[12], f->kind == ARB_SIM_ACK ? 0x1F : 0x60);
        }
        i++;
    }
    CHECK_EQ_U(i, n_recs);
    CHECK(kinds[ARB_SIM_DATA] > 40 && kinds[ARB_SIM_ACK] > 0);
    CHECK(kinds[ARB_SIM_NACK] > 0 && kinds[ARB_SIM_CNP] > 0);
    pcap_close(p);
    unlink(path);
}

/* Every hop's copy of a frame is its own: on leafspine:2,1,1 one packet
 * from host 0 to host 1 crosses host 0 -> leaf 0 -> spine -> leaf 1 ->
 * host 1. Each copy carries the MACs of the link it was captured on (the
 * sender's, then its peer's: host 02:00 + IPv4 address, switch 02:01 +
 * node id), and the TTL drops by one at each switch: 64, 63, 62, 61. The
 * ACK goes back the same way with the same TTLs. */
TEST(every_hop_distinguishable)
{
    char path[] = "/tmp/arbor_pcap_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    arb_topo *t = NULL;
    char err[100];
    REQUIRE_EQ_I(arb_topo_new(&t, "leafspine:2,1,1", NULL, err, sizeof err), 0);
    arb_sim_pcap *cap = NULL;
    REQUIRE_EQ_I(arb_sim_pcap_open(&cap, path, NULL, 0, 0), 0);
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = simkit_dmodk;
    n_want = 0;
    n_recs = 0;
    cfg.tap = record;
    arb_sim_pcap_install(cap, &cfg);
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    CHECK_EQ_I(arb_sim_add_flow(s, 0, 1, 4096, 0, 49153, 7, NULL), 0);
    CHECK_EQ_I(arb_sim_run(s, ARB_TIME_NEVER), 0);
    CHECK_EQ_I(arb_sim_pcap_close(cap), 0);
    REQUIRE_EQ_U(n_recs, 8); /* data and ack, four links each */
    char eb[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, eb);
    REQUIRE(p != NULL);
    struct pcap_pkthdr *h;
    const u_char *d;
    unsigned i = 0, k[2] = {0, 0};
    uint8_t prev_dst[2][6];
    while (pcap_next_ex(p, &h, &d) == 1 && i < n_recs) {
        const arb_sim_pkt_info *f = &recs[i].f;
        arb_frame_addr a;
        const uint8_t *u;
        size_t ulen;
        REQUIRE_EQ_I(arb_frame_parse(d, h->caplen, &a, &u, &ulen), 0);
        int ack = f->kind != ARB_SIM_DATA;
        uint32_t owner = arb_topo_port_owner(t, recs[i].port);
        uint32_t peer = arb_topo_port(t, recs[i].port)->peer;
        const uint32_t ends[2] = {owner, peer};
        const uint8_t *mac[2] = {a.eth_src, a.eth_dst};
        for (int e = 0; e < 2; e++) {
            int host = arb_topo_node(t, ends[e])->kind == ARB_NODE_HOST;
            uint32_t v = host ? 0x0A000000u | ends[e] : ends[e];
            uint8_t want[6] = {
                2,         host ? 0 : 1, (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
                (uint8_t)v};
            CHECK(memcmp(mac[e], want, 6) == 0);
        }
        CHECK_EQ_U(a.ip_ttl, 64 - k[ack]);
        if (k[ack]) CHECK(memcmp(a.eth_src, prev_dst[ack], 6) == 0); /* where the last hop went */
        memcpy(prev_dst[ack], a.eth_dst, 6);
        k[ack]++;
        i++;
    }
    CHECK_EQ_U(k[0], 4);
    CHECK_EQ_U(k[1], 4);
    pcap_close(p);
    unlink(path);
    arb_sim_free(s);
    arb_topo_free(t);
}

/* tshark decodes the file as RoCEv2 and finds what the simulator sent. */
TEST(tshark_decodes)
{
    if (system("command -v tshark >/dev/null 2>&1") != 0)
        SKIP("tshark is not installed (scripts/deps.sh --install installs it)");
    char path[] = "/tmp/arbor_pcap_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    arb_sim_pcap *cap;
    run_capture(path, 0, &cap, 0);
    CHECK_EQ_I(arb_sim_pcap_close(cap), 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd,
             "tshark -r %s -T fields -E separator=, -e ip.src -e ip.dst -e udp.dstport "
             "-e infiniband.bth.opcode -e infiniband.bth.psn -e infiniband.bth.destqp "
             "2>/dev/null",
             path);
    FILE *pp = popen(cmd, "r");
    REQUIRE(pp != NULL);
    char line[300];
    unsigned i = 0;
    while (fgets(line, sizeof line, pp)) {
        if (i < n_recs) {
            const arb_sim_pkt_info *f = &recs[i].f;
            char want[300];
            snprintf(want, sizeof want, "10.0.0.%u,10.0.0.%u,4791,%u,%u,0x%06x\n", f->src, f->dst,
                     want_opcode(f, flow_pkts[f->conn]), want_psn(f), f->qp);
            if (strcmp(line, want) != 0 && !TEST_FAILING())
                TESTKIT_REPORT("packet %u: tshark %s  want %s", i, line, want);
        }
        i++;
    }
    CHECK_EQ_I(pclose(pp), 0);
    CHECK_EQ_U(i, n_recs);
    CHECK(n_recs > 50);
    unlink(path);
}

/* A snaplen cuts frames in the file and keeps their length. */
TEST(snaplen_truncates)
{
    char path[] = "/tmp/arbor_pcap_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    arb_sim_pcap *cap;
    run_capture(path, 96, &cap, 1);
    CHECK_EQ_I(arb_sim_pcap_close(cap), 0);
    char eb[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, eb);
    REQUIRE(p != NULL);
    CHECK_EQ_I(pcap_snapshot(p), 96);
    struct pcap_pkthdr *h;
    const u_char *d;
    unsigned i = 0, cut = 0;
    while (pcap_next_ex(p, &h, &d) == 1) {
        if (i < n_recs) {
            const arb_sim_pkt_info *f = &recs[i].f;
            uint32_t full = f->kind == ARB_SIM_DATA
                                ? 42 + 12 + f->payload + (4 - f->payload % 4) % 4 + 4
                            : f->kind == ARB_SIM_CNP ? 42 + 32
                                                     : 42 + 20;
            CHECK_EQ_U(h->len, full);
            CHECK_EQ_U(h->caplen, full < 96 ? full : 96);
            cut += h->caplen < h->len;
        }
        i++;
    }
    CHECK_EQ_U(i, n_recs); /* every port: both directions of every link */
    CHECK(cut > 40);
    pcap_close(p);
    unlink(path);
}

/* The flows of run_capture in the local order, every port captured to
 * `path`: whole (ops NULL) or as the one part of a partitioned simulator,
 * whose capture part 0 writes (arb_sim_pcap_new, arb_sim_pcap_partition). */
static void run_local(const char *path, const arb_sim_part_ops *ops)
{
    arb_topo *t = NULL;
    char err[100];
    REQUIRE_EQ_I(arb_topo_new(&t, "star:3", NULL, err, sizeof err), 0);
    arb_sim_pcap *cap = NULL;
    if (ops)
        REQUIRE_EQ_I(arb_sim_pcap_new(&cap, NULL, 0, 0), 0);
    else
        REQUIRE_EQ_I(arb_sim_pcap_open(&cap, path, NULL, 0, 0), 0);
    arb_sim_config cfg;
    capture_config(&cfg);
    cfg.local_order = 1;
    arb_sim_pcap_install(cap, &cfg);
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    if (ops) {
        uint32_t np[4] = {0, 0, 0, 0};
        CHECK_EQ_I(arb_sim_pcap_partition(cap, s, path), ARB_ESTATE); /* not partitioned yet */
        REQUIRE_EQ_I(arb_sim_partition(s, ops, np, err, sizeof err), 0);
        CHECK_EQ_I(arb_sim_pcap_partition(cap, s, "/nonexistent-dir/x.pcap"), ARB_EIO);
        CHECK_EQ_I(arb_sim_pcap_partition(cap, s, NULL), ARB_EINVAL);
        REQUIRE_EQ_I(arb_sim_pcap_partition(cap, s, path), 0);
        CHECK_EQ_I(arb_sim_pcap_partition(cap, s, path), ARB_ESTATE); /* given already */
    }
    capture_flows(s, ARB_PS_PER_S);         /* (a partitioned run is to end somewhere) */
    CHECK_EQ_I(arb_sim_pcap_close(cap), 0); /* (partitioned: before the simulator goes) */
    arb_sim_free(s);
    arb_topo_free(t);
}

static size_t read_all(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

TEST(a_partitioned_capture_is_the_whole_runs)
{
    char a[] = "/tmp/arbor_pcap_XXXXXX", b[] = "/tmp/arbor_pcap_XXXXXX";
    int fa = mkstemp(a), fb = mkstemp(b);
    REQUIRE(fa >= 0 && fb >= 0);
    close(fa);
    close(fb);
    arb_sim_part_ops ops = {NULL, 0, 1, simkit_one_alltoall, simkit_one_reduce, simkit_one_reduce};
    run_local(a, NULL);
    run_local(b, &ops);
    static uint8_t da[1 << 20], db[1 << 20];
    size_t na = read_all(a, da, sizeof da), nb = read_all(b, db, sizeof db);
    CHECK(na > 10000 && na < sizeof da);
    CHECK(na == nb && memcmp(da, db, na) == 0);
    /* a capture with its file is not a partitioned run's */
    arb_sim_pcap *cap = NULL;
    REQUIRE_EQ_I(arb_sim_pcap_open(&cap, a, NULL, 0, 0), 0);
    arb_topo *t = NULL;
    char err[100];
    REQUIRE_EQ_I(arb_topo_new(&t, "star:3", NULL, err, sizeof err), 0);
    arb_sim_config cfg;
    capture_config(&cfg);
    cfg.local_order = 1;
    arb_sim *s = NULL;
    REQUIRE_EQ_I(arb_sim_new(&s, t, &cfg), 0);
    uint32_t np[4] = {0, 0, 0, 0};
    REQUIRE_EQ_I(arb_sim_partition(s, &ops, np, err, sizeof err), 0);
    CHECK_EQ_I(arb_sim_pcap_partition(cap, s, b), ARB_ESTATE);
    CHECK_EQ_I(arb_sim_pcap_close(cap), 0);
    arb_sim_free(s);
    arb_topo_free(t);
    unlink(a);
    unlink(b);
}

TEST(open_errors)
{
    arb_sim_pcap *cap = NULL;
    uint32_t port = 0;
    CHECK_EQ_I(arb_sim_pcap_open(&cap, "/nonexistent-dir/x.pcap", NULL, 0, 0), ARB_EIO);
    CHECK(cap == NULL);
    CHECK_EQ_I(arb_sim_pcap_open(&cap, NULL, NULL, 0, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_sim_pcap_open(&cap, "/tmp/x.pcap", NULL, 1, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_sim_pcap_open(NULL, "/tmp/x.pcap", &port, 1, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_sim_pcap_new(&cap, NULL, 1, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_sim_pcap_new(NULL, &port, 1, 0), ARB_EINVAL);
    CHECK_EQ_I(arb_sim_pcap_close(NULL), 0);
}

int main(void)
{
    RUN(frames_read_back);
    RUN(every_hop_distinguishable);
    RUN(tshark_decodes);
    RUN(snaplen_truncates);
    RUN(a_partitioned_capture_is_the_whole_runs);
    RUN(open_errors);
    return testkit_done();
}
