/*
 * Packet capture of simulated ports as RoCEv2 frames, through libpcap's
 * dump API (a "dead" handle: no interface, nanosecond timestamps).
 *
 * Each frame is built into a buffer the capture owns, so a capture costs
 * no allocation per packet. Layout of the UDP payload (IBTA RoCEv2):
 *   BTH  12 B: opcode, SE|M|PadCnt|TVer, P_Key 0xFFFF, reserved, DestQP
 *              (24 bits), AckReq|reserved, PSN (24 bits)
 *   data: payload zero bytes + PadCnt pad bytes (to a multiple of 4)
 *   ack / NACK: AETH 4 B (syndrome, MSN 0)
 *   CNP: 16 reserved bytes
 *   ICRC 4 B (zero)
 */
/* libpcap's headers use the BSD type names (u_char, u_int). */
#define _DEFAULT_SOURCE 1

#include "sim_int.h"

#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "arbor/route.h"
#include "arbor/wire.h"

#define ROCE_PORT 4791
#define BTH_LEN 12
#define AETH_LEN 4
#define ICRC_LEN 4
#define CNP_RESERVED 16

/* IBTA opcodes: RC SEND first/middle/last/only, RC Acknowledge, CNP. */
enum {
    OP_SEND_FIRST = 0x00,
    OP_SEND_MIDDLE = 0x01,
    OP_SEND_LAST = 0x02,
    OP_SEND_ONLY = 0x04,
    OP_ACK = 0x11,
    OP_CNP = 0x81
};
#define AETH_ACK 0x1F     /* ACK, credit count "invalid" (no credit limit) */
#define AETH_NAK_SEQ 0x60 /* NAK, PSN sequence error */

struct hop {
    uint32_t port, src, dst, psn;
    uint8_t kind, crossed, valid;
};

struct arb_sim_pcap {
    pcap_t *dead;
    pcap_dumper_t *dump;
    uint8_t *want; /* bitmap of captured ports, NULL: every port */
    uint32_t n_want_bits;
    uint32_t snaplen;
    uint64_t count;
    int failed;
    arb_sim_tap_fn next; /* a tap installed before the capture */
    void *next_ctx;
    /* Per packet index: the last port it was sent on, what it was, and
     * the switches it had crossed then (for its TTL). */
    struct hop *hop;
    uint32_t n_hop;
    uint8_t udp[65536];
    uint8_t frame[65536 + ARB_FRAME_OVERHEAD];
};

int arb_sim_pcap_open(arb_sim_pcap **out, const char *path, const uint32_t *ports, unsigned n_ports,
                      uint32_t snaplen)
{
    if (!out) return ARB_EINVAL;
    *out = NULL;
    if (!path || (n_ports && !ports)) return ARB_EINVAL;
    if (snaplen == 0 || snaplen > 65535) snaplen = 65535;
    arb_sim_pcap *c = calloc(1, sizeof *c);
    if (!c) return ARB_ENOMEM;
    c->snaplen = snaplen;
    if (n_ports) {
        uint32_t max = 0;
        for (unsigned i = 0; i < n_ports; i++)
            if (ports[i] > max) max = ports[i];
        c->n_want_bits = max + 1;
        c->want = calloc((size_t)max / 8 + 1, 1);
        if (!c->want) {
            free(c);
            return ARB_ENOMEM;
        }
        for (unsigned i = 0; i < n_ports; i++)
            c->want[ports[i] >> 3] |= (uint8_t)(1u << (ports[i] & 7));
    }
    c->dead =
        pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen, PCAP_TSTAMP_PRECISION_NANO);
    if (!c->dead) {
        free(c->want);
        free(c);
        return ARB_ENOMEM;
    }
    c->dump = pcap_dump_open(c->dead, path);
    if (!c->dump) {
        pcap_close(c->dead);
        free(c->want);
        free(c);
        return ARB_EIO;
    }
    *out = c;
    return 0;
}

static void put24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 16);
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)v;
}

/* A node's MAC, locally administered: a host's is 02:00 and its IPv4
 * address, a switch's 02:01 and its node id, so every link's two ends
 * differ and a frame's MACs name the link it was captured on. */
static void mac_of(uint8_t *mac, const arb_topo *t, uint32_t node)
{
    const arb_node *n = arb_topo_node(t, node);
    int host = n && n->kind == ARB_NODE_HOST;
    uint32_t v = host ? ARB_ROUTE_HOST_IP_BASE | node : node;
    mac[0] = 0x02;
    mac[1] = host ? 0x00 : 0x01;
    mac[2] = (uint8_t)(v >> 24);
    mac[3] = (uint8_t)(v >> 16);
    mac[4] = (uint8_t)(v >> 8);
    mac[5] = (uint8_t)v;
}

/*
 * The switches packet f has crossed when it leaves on `port`: 0 where it
 * was made (a host, or a switch that aggregates, replicates or answers),
 * one more than at its last port when that port led to this one's node and
 * the packet is the same (source, destination, PSN, kind). Packet indices
 * are reused, hence the comparison. Followed on every port, captured or not.
 */
static uint8_t crossed(arb_sim_pcap *c, const arb_topo *t, uint32_t port, const arb_sim_pkt_info *f)
{
    if (f->index == UINT32_MAX) return 0;
    if (f->index >= c->n_hop) {
        uint32_t n = c->n_hop ? c->n_hop : 1024;
        while (n <= f->index)
            n *= 2;
        struct hop *nh = realloc(c->hop, (size_t)n * sizeof *nh);
        if (!nh) return 0;
        memset(nh + c->n_hop, 0, (size_t)(n - c->n_hop) * sizeof *nh);
        c->hop = nh;
        c->n_hop = n;
    }
    struct hop *h = &c->hop[f->index];
    uint32_t owner = arb_topo_port_owner(t, port);
    uint8_t x = 0;
    if (h->valid && h->src == f->src && h->dst == f->dst && h->psn == f->psn &&
        h->kind == f->kind && arb_topo_port(t, h->port)->peer == owner &&
        arb_topo_node(t, owner)->kind == ARB_NODE_SWITCH && h->crossed < 63)
        x = (uint8_t)(h->crossed + 1);
    *h = (struct hop){port, f->src, f->dst, f->psn, f->kind, x, 1};
    return x;
}

/* The UDP payload of packet f into c->udp; returns its length. */
static size_t roce_payload(const arb_sim *sim, const arb_sim_pkt_info *f, uint8_t *u)
{
    uint8_t opcode = OP_CNP, pad = 0;
    uint32_t psn = f->psn;
    size_t body = CNP_RESERVED;
    int ack_req = 0;
    if (f->kind == ARB_SIM_DATA) {
        uint32_t n_pkts = f->conn < sim->n_conns ? sim->conns[f->conn].n_pkts : 1;
        if (n_pkts <= 1)
            opcode = OP_SEND_ONLY;
        else if (f->psn == 0)
            opcode = OP_SEND_FIRST;
        else if (f->psn + 1 >= n_pkts)
            opcode = OP_SEND_LAST;
        else
            opcode = OP_SEND_MIDDLE;
        pad = (uint8_t)((4 - f->payload % 4) % 4);
        body = (size_t)f->payload + pad;
        ack_req = 1;
    } else if (f->kind == ARB_SIM_ACK || f->kind == ARB_SIM_NACK) {
        opcode = OP_ACK;
        body = AETH_LEN;
        /* The simulator's ack names the next expected PSN; an IB ACK names
         * the last PSN it covers. A NAK names the expected PSN. */
        if (f->kind == ARB_SIM_ACK) psn = f->psn - 1;
    }
    size_t len = BTH_LEN + body + ICRC_LEN;
    memset(u, 0, len);
    u[0] = opcode;
    u[1] = (uint8_t)(pad << 4); /* SE 0, M 0, PadCnt, TVer 0 */
    u[2] = 0xFF;                /* default P_Key */
    u[3] = 0xFF;
    put24(u + 5, f->qp & 0xFFFFFF);
    u[8] = ack_req ? 0x80 : 0;
    put24(u + 9, psn & 0xFFFFFF);
    if (f->kind == ARB_SIM_ACK || f->kind == ARB_SIM_NACK)
        u[BTH_LEN] = f->kind == ARB_SIM_ACK ? AETH_ACK : AETH_NAK_SEQ;
    return len;
}

/*
 * An Arbor packet's UDP payload: its header as arb_hdr_encode writes it,
 * then zero payload bytes of the length the simulator carries (header-only
 * runs carry a length, not bytes), so a dissector sees every field and the
 * element count. -1 when the header is not available.
 */
static int arbor_payload(const arb_sim *sim, const arb_sim_pkt_info *f, uint8_t *buf, size_t cap,
                         size_t *len)
{
    arb_hdr h;
    size_t hl = 0;
    if (arb_sim_arbor_header(sim, f->index, &h) < 0) return -1;
    if (arb_hdr_encode(&h, f->payload, buf, cap, &hl) < 0 || hl + f->payload > cap) return -1;
    memset(buf + hl, 0, f->payload);
    *len = hl + f->payload;
    return 0;
}

static void write_frame(arb_sim_pcap *c, const arb_topo *t, uint32_t port,
                        const arb_sim_pkt_info *f, const uint8_t *udp, size_t ulen, uint32_t ip_dst,
                        uint16_t udp_src, uint16_t udp_dst, uint8_t tos, uint8_t hops, arb_time now)
{
    arb_frame_addr a;
    memset(&a, 0, sizeof a);
    /* the link's two ends: the node that sends on `port`, and its peer */
    mac_of(a.eth_src, t, arb_topo_port_owner(t, port));
    mac_of(a.eth_dst, t, arb_topo_port(t, port)->peer);
    a.ip_src = ARB_ROUTE_HOST_IP_BASE | f->src;
    a.ip_dst = ip_dst;
    a.udp_src = udp_src;
    a.udp_dst = udp_dst;
    a.ip_ttl = (uint8_t)(64 - hops);
    a.ip_tos = tos; /* ECN: CE, ECT(0) for RoCE data, not-ECT otherwise */
    a.ip_id = (uint16_t)f->psn;
    size_t flen = 0;
    if (arb_frame_build(&a, udp, ulen, c->frame, sizeof c->frame, &flen) < 0) {
        c->failed = 1;
        return;
    }
    struct pcap_pkthdr h;
    uint64_t ns = now / ARB_PS_PER_NS;
    h.ts.tv_sec = (time_t)(ns / 1000000000u);
    h.ts.tv_usec = (suseconds_t)(ns % 1000000000u); /* nanoseconds in a nano file */
    h.len = (bpf_u_int32)flen;
    h.caplen = (bpf_u_int32)(flen < c->snaplen ? flen : c->snaplen);
    pcap_dump((u_char *)c->dump, &h, c->frame);
    c->count++;
}

void arb_sim_pcap_tap(void *ctx, const arb_sim *sim, uint32_t port, const arb_sim_pkt_info *f,
                      arb_time now)
{
    arb_sim_pcap *c = ctx;
    const arb_topo *t = arb_sim_topo(sim);
    uint8_t hops = crossed(c, t, port, f);
    int want = !c->want || (port < c->n_want_bits && (c->want[port >> 3] >> (port & 7)) & 1);
    if (want && !c->failed) {
        size_t ulen = 0;
        uint16_t udp_src = f->sport, udp_dst = ROCE_PORT;
        uint32_t ip_dst = ARB_ROUTE_HOST_IP_BASE | f->dst;
        uint8_t tos = (f->flags & ARB_SIM_CE) ? 3 : (f->flags & ARB_SIM_ECT) ? 2 : 0;
        if (f->kind != ARB_SIM_ARBOR) {
            ulen = roce_payload(sim, f, c->udp);
        } else if (arbor_payload(sim, f, c->udp, sizeof c->udp, &ulen) == 0) {
            udp_dst = f->dport;
            udp_src = arb_subchannel_sport(f->sport); /* the simulator's sport: the subchannel */
            tos = (f->flags & ARB_SIM_CE) ? 3 : 0;
            /* A packet to a whole tree (no single host): the group address
             * 239.0.C.S of channel C's subchannel S stands for G(C, S). */
            if (f->dst >= arb_topo_n_hosts(arb_sim_topo(sim)))
                ip_dst = 0xEF000000u | (f->conn & 0xFFu) << 8 | (f->sport & 0xFFu);
        } else {
            want = 0; /* an Arbor packet whose header is gone: nothing to write */
        }
        if (want)
            write_frame(c, t, port, f, c->udp, ulen, ip_dst, udp_src, udp_dst, tos, hops, now);
    }
    if (c->next) c->next(c->next_ctx, sim, port, f, now);
}

void arb_sim_pcap_install(arb_sim_pcap *cap, arb_sim_config *cfg)
{
    if (cfg->tap != arb_sim_pcap_tap || cfg->tap_ctx != cap) {
        cap->next = cfg->tap;
        cap->next_ctx = cfg->tap_ctx;
    }
    cfg->tap = arb_sim_pcap_tap;
    cfg->tap_ctx = cap;
}

uint64_t arb_sim_pcap_count(const arb_sim_pcap *cap)
{
    return cap->count;
}

int arb_sim_pcap_close(arb_sim_pcap *cap)
{
    if (!cap) return 0;
    int rc = cap->failed ? ARB_EIO : 0;
    if (pcap_dump_flush(cap->dump) != 0) rc = ARB_EIO;
    FILE *fp = pcap_dump_file(cap->dump);
    if (fp && ferror(fp)) rc = ARB_EIO;
    pcap_dump_close(cap->dump);
    pcap_close(cap->dead);
    free(cap->want);
    free(cap->hop);
    free(cap);
    return rc;
}
