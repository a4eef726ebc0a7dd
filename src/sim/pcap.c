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
#include "base/alloc.h"

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

/* A packet's last start, as the next one checks it (crossed): where it
 * left, what it was, when it reaches the far end of that link, and the
 * switches it had crossed then. In a partitioned run the part that
 * receives a packet across the cut makes its entry from the packet and
 * the count the sending part sends ahead of it (part_send_hop,
 * pcap_part_land). */
struct hop {
    arb_time arr;
    uint32_t port, src, dst, psn;
    uint8_t kind, crossed, valid;
};

/* A frame a part of a partitioned run took, held for part 0 (pending):
 * this, then its first caplen bytes. (t, target): the event that took it,
 * the order part 0 merges the parts' frames in. */
struct frec {
    arb_time t;
    uint32_t target;
    uint32_t sec, nsec; /* its timestamp */
    uint32_t len, caplen;
    uint32_t pad;
};

struct arb_sim_pcap {
    pcap_t *dead;
    pcap_dumper_t *dump;
    uint8_t *want; /* bitmap of captured ports, NULL: every port */
    uint32_t n_want_bits;
    uint32_t snaplen;
    uint64_t count;
    int failed;          /* 0, or the first error (ARB_EIO, ARB_ENOMEM, ARB_EINVAL) */
    arb_sim_tap_fn next; /* a tap installed before the capture */
    void *next_ctx;
    /* Per packet index: the last port it was sent on, what it was, and
     * the switches it had crossed then (for its TTL). */
    struct hop *hop;
    uint32_t n_hop;
    /* made by arb_sim_pcap_new: the frames are held (pend), for part 0 of
     * the partitioned simulator `part` (arb_sim_pcap_partition) */
    int held;
    arb_sim *part;
    uint8_t *pend;
    size_t n_pend, cap_pend;
    /* part 0, merging: per part its next frame and where, and the parts
     * with frames left */
    struct frec *head;
    size_t *at;
    uint32_t *act;
    uint8_t udp[65536];
    uint8_t frame[65536 + ARB_FRAME_OVERHEAD];
};

int arb_sim_pcap_new(arb_sim_pcap **out, const uint32_t *ports, unsigned n_ports, uint32_t snaplen)
{
    if (!out) return ARB_EINVAL;
    *out = NULL;
    if (n_ports && !ports) return ARB_EINVAL;
    if (snaplen == 0 || snaplen > 65535) snaplen = 65535;
    arb_sim_pcap *c = arb_calloc(1, sizeof *c);
    if (!c) return ARB_ENOMEM;
    c->snaplen = snaplen;
    c->held = 1;
    if (n_ports) {
        uint32_t max = 0;
        for (unsigned i = 0; i < n_ports; i++)
            if (ports[i] > max) max = ports[i];
        c->n_want_bits = max + 1;
        c->want = arb_calloc((size_t)max / 8 + 1, 1);
        if (!c->want) {
            arb_free(c);
            return ARB_ENOMEM;
        }
        for (unsigned i = 0; i < n_ports; i++)
            c->want[ports[i] >> 3] |= (uint8_t)(1u << (ports[i] & 7));
    }
    c->dead =
        pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen, PCAP_TSTAMP_PRECISION_NANO);
    if (!c->dead) {
        arb_free(c->want);
        arb_free(c);
        return ARB_ENOMEM;
    }
    *out = c;
    return 0;
}

/* The capture's file, created: 0 or ARB_EIO. */
static int cap_file(arb_sim_pcap *c, const char *path)
{
    c->dump = pcap_dump_open(c->dead, path);
    return c->dump ? 0 : ARB_EIO;
}

int arb_sim_pcap_open(arb_sim_pcap **out, const char *path, const uint32_t *ports, unsigned n_ports,
                      uint32_t snaplen)
{
    if (!out) return ARB_EINVAL;
    *out = NULL;
    if (!path) return ARB_EINVAL;
    int rc = arb_sim_pcap_new(out, ports, n_ports, snaplen);
    if (rc < 0) return rc;
    (*out)->held = 0;
    rc = cap_file(*out, path);
    if (rc < 0) {
        arb_sim_pcap_close(*out);
        *out = NULL;
    }
    return rc;
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

static void cap_fail(arb_sim_pcap *c, int rc)
{
    if (rc < 0 && !c->failed) c->failed = rc;
}

/* Room in the table for packet index i; 0 or ARB_ENOMEM. */
static int hop_room(arb_sim_pcap *c, uint32_t i)
{
    if (i < c->n_hop) return 0;
    uint32_t n = c->n_hop ? c->n_hop : 1024;
    while (n <= i)
        n *= 2;
    struct hop *nh = arb_realloc(c->hop, (size_t)n * sizeof *nh);
    if (!nh) return ARB_ENOMEM;
    memset(nh + c->n_hop, 0, (size_t)(n - c->n_hop) * sizeof *nh);
    c->hop = nh;
    c->n_hop = n;
    return 0;
}

/*
 * The switches packet f has crossed when it starts on `port` at `start`:
 * 0 where it was made (a host, or a switch that aggregates, replicates or
 * answers), one more than at its last start when it is the same packet come
 * off that link: the same source, destination, PSN and kind, in by the
 * link's far end, and there at the time that start gave it (or held back
 * there, cfg.reorder_delay later). Packet indices are reused, so a packet
 * made where another was let go must not pass for it: the arrival time and
 * the port it came in by tell them apart, whatever index each got (which
 * differs between one process and the parts of a partitioned run).
 * Followed on every port, captured or not; across the cut, the entry goes
 * with the packet to the part that receives it.
 */
static uint8_t crossed(arb_sim_pcap *c, const arb_sim *s, uint32_t port, const arb_sim_pkt_info *f,
                       arb_time start)
{
    if (f->index == UINT32_MAX) return 0;
    int rc = hop_room(c, f->index);
    if (rc < 0) {
        cap_fail(c, rc);
        return 0;
    }
    struct hop *h = &c->hop[f->index];
    const struct pkt *k = pool_get(&s->pool, f->index);
    uint32_t owner = s->owner[port];
    uint8_t x = 0;
    if (h->valid && h->src == f->src && h->dst == f->dst && h->psn == f->psn &&
        h->kind == f->kind && s->far[h->port].in == k->in_port &&
        (k->t == h->arr || k->t == h->arr + s->cfg.reorder_delay) && owner >= s->n_hosts &&
        h->crossed < 63)
        x = (uint8_t)(h->crossed + 1);
    const struct slink *lk = &s->lk[s->sp[port].link];
    arb_time arr = start + arb_time_tx(f->bytes, lk->rate) + lk->delay;
    *h = (struct hop){arr, port, f->src, f->dst, f->psn, f->kind, x, 1};
    if (lk->odd & LK_CUT) cap_fail(c, part_send_hop(s, port, x));
    return x;
}

/* The packet that started across the cut, landed as i (on the wire of
 * `port`): its last start is that one, as the sending part saw it (its
 * record carries its fields and its arrival time). */
void pcap_part_land(arb_sim *s, uint32_t i, uint32_t port, uint32_t crossed)
{
    arb_sim_pcap *c = s->pcap;
    int rc = crossed < 64 ? hop_room(c, i) : ARB_EINVAL;
    if (rc < 0) {
        cap_fail(c, rc);
        return;
    }
    const struct pkt *k = pool_get(&s->pool, i);
    c->hop[i] = (struct hop){k->t, port, k->src, k->dst, k->psn, k->kind, (uint8_t)crossed, 1};
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

/* A frame held for part 0: its record, keyed by the event that took it
 * (between runs, when the fabric changed: the port, in the order of the
 * ports one process takes them in). */
static void hold_frame(arb_sim_pcap *c, const arb_sim *s, uint32_t port,
                       const struct pcap_pkthdr *h)
{
    struct frec r = {s->now,
                     s->in_run ? s->part_target : EV_PORT(port, EV_TXDONE),
                     (uint32_t)h->ts.tv_sec,
                     (uint32_t)h->ts.tv_usec,
                     h->len,
                     h->caplen,
                     0};
    size_t n = sizeof r + h->caplen;
    if (c->n_pend + n > c->cap_pend) {
        size_t ncap = c->cap_pend ? c->cap_pend * 2 : 65536;
        while (ncap < c->n_pend + n)
            ncap *= 2;
        uint8_t *np = arb_realloc(c->pend, ncap);
        if (!np) {
            cap_fail(c, ARB_ENOMEM);
            return;
        }
        c->pend = np;
        c->cap_pend = ncap;
    }
    memcpy(c->pend + c->n_pend, &r, sizeof r);
    memcpy(c->pend + c->n_pend + sizeof r, c->frame, h->caplen);
    c->n_pend += n;
}

static void write_frame(arb_sim_pcap *c, const arb_sim *s, uint32_t port, const arb_sim_pkt_info *f,
                        const uint8_t *udp, size_t ulen, uint32_t ip_dst, uint16_t udp_src,
                        uint16_t udp_dst, uint8_t tos, uint8_t hops, arb_time now)
{
    const arb_topo *t = arb_sim_topo(s);
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
        cap_fail(c, ARB_EIO);
        return;
    }
    struct pcap_pkthdr h;
    uint64_t ns = now / ARB_PS_PER_NS;
    h.ts.tv_sec = (time_t)(ns / 1000000000u);
    h.ts.tv_usec = (suseconds_t)(ns % 1000000000u); /* nanoseconds in a nano file */
    h.len = (bpf_u_int32)flen;
    h.caplen = (bpf_u_int32)(flen < c->snaplen ? flen : c->snaplen);
    if (c->held)
        hold_frame(c, s, port, &h);
    else
        pcap_dump((u_char *)c->dump, &h, c->frame);
    c->count++;
}

void arb_sim_pcap_tap(void *ctx, const arb_sim *sim, uint32_t port, const arb_sim_pkt_info *f,
                      arb_time now)
{
    arb_sim_pcap *c = ctx;
    uint8_t hops = crossed(c, sim, port, f, now);
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
            write_frame(c, sim, port, f, c->udp, ulen, ip_dst, udp_src, udp_dst, tos, hops, now);
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

/* ---- a partitioned run ---------------------------------------------- */

int arb_sim_pcap_partition(arb_sim_pcap *cap, arb_sim *sim, const char *path)
{
    if (!cap || !sim || !path) return ARB_EINVAL;
    if (!sim->part || sim->pcap || cap->part || !cap->held) return ARB_ESTATE;
    /* room to merge in every part (the same calls in every part), the file
     * in part 0; then every part learns whether both went well */
    int rc = part_pcap_room(sim);
    if (rc == 0 && part_rank(sim) == 0) {
        uint32_t R = part_count(sim);
        if (!cap->head) cap->head = arb_malloc(R * sizeof *cap->head);
        if (!cap->at) cap->at = arb_malloc(R * sizeof *cap->at);
        if (!cap->act) cap->act = arb_malloc(R * sizeof *cap->act);
        rc = cap->head && cap->at && cap->act ? cap_file(cap, path) : ARB_ENOMEM;
    }
    uint64_t e = rc < 0 ? (uint64_t)(-(int64_t)rc) : UINT64_MAX;
    int orc = part_allmin(sim, &e, 1);
    if (orc < 0) return orc;
    if (e != UINT64_MAX) return -(int)e;
    sim->pcap = cap;
    cap->part = sim;
    return 0;
}

const uint8_t *pcap_part_frames(const arb_sim_pcap *c, size_t *n)
{
    *n = c->n_pend;
    return c->pend;
}

void pcap_part_clear(arb_sim_pcap *c)
{
    c->n_pend = 0;
}

/* The record at d + o of a part's n bytes: 1 and *r set, 0 at the end, or
 * -1 when it is cut short. */
static int frec_at(const uint8_t *d, size_t n, size_t o, struct frec *r)
{
    if (o >= n) return 0;
    if (n - o < sizeof *r) return -1;
    memcpy(r, d + o, sizeof *r);
    return r->caplen <= n - o - sizeof *r ? 1 : -1;
}

/* Whose frame is first in the local order: (time, target); the parts'
 * targets are their own, so no two parts' frames tie. */
static int frec_before(const struct frec *x, const struct frec *y)
{
    return x->t < y->t || (x->t == y->t && x->target < y->target);
}

void pcap_part_write(arb_sim_pcap *c, const uint8_t *const *d, const size_t *n, uint32_t parts)
{
    /* each part's frames are in its own order; the whole simulator's is the
     * merge that takes, at each step, the part whose next frame is first
     * (it runs, at each step, the first event of any part) */
    size_t *o = c->at;
    struct frec *head = c->head;
    uint32_t n_act = 0;
    for (uint32_t r = 0; r < parts; r++) {
        o[r] = 0;
        int got = frec_at(d[r], n[r], 0, &head[r]);
        if (got < 0) cap_fail(c, ARB_EINVAL);
        if (got > 0) c->act[n_act++] = r;
    }
    while (n_act && !c->failed) {
        uint32_t best = 0;
        for (uint32_t k = 1; k < n_act; k++)
            if (frec_before(&head[c->act[k]], &head[c->act[best]])) best = k;
        uint32_t r = c->act[best];
        const struct frec *f = &head[r];
        struct pcap_pkthdr h;
        h.ts.tv_sec = (time_t)f->sec;
        h.ts.tv_usec = (suseconds_t)f->nsec;
        h.len = f->len;
        h.caplen = f->caplen;
        if (c->dump) pcap_dump((u_char *)c->dump, &h, d[r] + o[r] + sizeof *f);
        o[r] += sizeof *f + f->caplen;
        int got = frec_at(d[r], n[r], o[r], &head[r]);
        if (got < 0) cap_fail(c, ARB_EINVAL);
        if (got <= 0) c->act[best] = c->act[--n_act];
    }
}

int arb_sim_pcap_close(arb_sim_pcap *cap)
{
    if (!cap) return 0;
    arb_sim *s = cap->part;
    /* a partitioned run's: what the parts still hold to part 0 first */
    if (s) cap_fail(cap, part_flush(s));
    int rc = cap->failed;
    if (cap->dump) {
        if (pcap_dump_flush(cap->dump) != 0 && rc == 0) rc = ARB_EIO;
        FILE *fp = pcap_dump_file(cap->dump);
        if (fp && ferror(fp) && rc == 0) rc = ARB_EIO;
        pcap_dump_close(cap->dump);
    }
    if (s) { /* every part gives part 0's result, or another part's failure */
        uint64_t e = rc < 0 ? (uint64_t)(-(int64_t)rc) : UINT64_MAX;
        int orc = part_allmin(s, &e, 1);
        rc = orc < 0 ? orc : e != UINT64_MAX ? -(int)e : 0;
        s->pcap = NULL;
    }
    pcap_close(cap->dead);
    arb_free(cap->want);
    arb_free(cap->hop);
    arb_free(cap->pend);
    arb_free(cap->head);
    arb_free(cap->at);
    arb_free(cap->act);
    arb_free(cap);
    return rc;
}
