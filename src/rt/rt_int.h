/*
 * rt_int.h - the runtime's internals: the runtime header that frames every
 * datagram, the control messages (JOIN and its answers), their MACs, UDP
 * sockets with batched I/O, and the clock. docs/runtime.md describes the
 * formats.
 */
#ifndef ARBOR_RT_INT_H
#define ARBOR_RT_INT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "arbor/base.h"
#include "arbor/rt.h"
#include "arbor/switch.h"
#include "arbor/wire.h"

struct rt_ring; /* a socket's io_uring (uring.c) */

/* ---- the runtime header ----------------------------------------------- */

/*
 * Every datagram starts with 16 bytes. Byte 0 is 0x41: its top two bits are
 * version 1, so no runtime header is ever taken for an Arbor header
 * (version 2), and an Arbor packet (kind ARBOR) follows it unchanged.
 *
 *   0      magic 0x41
 *   1      kind (RT_K_*)
 *   2      flags: bit 0 CE (congestion experienced), bit 1 made by a switch
 *   3      destination kind (ARBOR): 0 responder, 1 group, 2 member
 *   4-7    job id
 *   8-9    channel: its responder's rank
 *   10-11  destination rank (member, or the rank a control message is for)
 *   12-13  source rank, 0xFFFF for a switch
 *   14-15  subchannel (the tree)
 *
 * Multi-byte fields are big-endian.
 */
#define RT_MAGIC 0x41
#define RT_HDR_LEN 16
#define RT_SWITCH_RANK 0xFFFFu
#define RT_DGRAM_MAX (RT_HDR_LEN + ARB_HDR_LEN_LONG + ARB_PAYLOAD_MAX)

enum rt_kind {
    RT_K_ARBOR = 1,   /* an Arbor packet follows */
    RT_K_JOIN = 2,    /* rank -> switch: admission request (MAC) */
    RT_K_WELCOME = 3, /* switch -> rank: admitted (MAC) */
    RT_K_REJECT = 4,  /* switch -> rank: refused (reason byte) */
    RT_K_NOTICE = 5,  /* switch -> address: unknown to me, join again */
    RT_K_JOBINFO = 6  /* switch -> switch: a job's size and host base */
};

enum { RT_F_CE = 1, RT_F_SWITCH = 2 };

typedef struct rt_hdr {
    uint8_t kind, flags, dst_kind;
    uint32_t job;
    uint16_t channel, dst, src, sub;
} rt_hdr;

void rt_hdr_put(uint8_t *b, const rt_hdr *h);
/* 0, or -1 when len < RT_HDR_LEN or the magic is wrong. */
int rt_hdr_get(rt_hdr *h, const uint8_t *b, size_t len);

/* ---- control messages ------------------------------------------------- */

#define RT_KEY_LEN 32
#define RT_MAC_LEN 32
#define RT_NONCE_LEN 16
/* JOIN: header, size(4), host_base(4), counter(8), nonce(16), fabric(4),
 * mac(32). */
#define RT_JOIN_BODY 36
#define RT_JOIN_LEN (RT_HDR_LEN + RT_JOIN_BODY + RT_MAC_LEN)
/* WELCOME: header, counter(8), nonce(16), mac(32). */
#define RT_WELCOME_LEN (RT_HDR_LEN + 24 + RT_MAC_LEN)
/* JOBINFO: header, size(4), host_base(4). */
#define RT_JOBINFO_LEN (RT_HDR_LEN + 8)

enum {
    RT_REJECT_JOB = 1,
    RT_REJECT_MAC = 2,
    RT_REJECT_FIELDS = 3,
    RT_REJECT_REPLAY = 4,
    RT_REJECT_FABRIC = 5, /* the rank's fabric is not the switch's */
    /* the rank's ARBOR_SIZE or host base is not the one the job's live
     * ranks joined with; the body adds the switch's size(4), base(4) */
    RT_REJECT_SIZE = 6,
    /* another process is this rank of the job, heard from within
     * RT_DUP_WINDOW; the body adds its IPv4 address(4) and port(2) */
    RT_REJECT_DUPLICATE = 7
};
/* REJECT: header, reason(1), then what reasons 6 and 7 add. */
#define RT_REJECT_LEN (RT_HDR_LEN + 1 + 8)
/* A rank heard from this recently is live: a rank inside a call sends
 * at least a JOIN every 50 ms (every 100 ms while joining), and one that
 * has left lingers quiet for 450 ms first (docs/runtime.md section 2).
 * A JOIN for a rank already joined from another address still live is a
 * duplicate (a restarted rank's predecessor falls silent: its successor
 * is taken once this has passed); a JOIN with another size or host base
 * than the job's is refused while some rank of the job is live (a job id
 * reused by a new job is learnt anew). */
#define RT_LIVE_WINDOW (250 * ARB_PS_PER_MS)

typedef struct rt_join {
    uint32_t job, rank, size, base;
    uint32_t fabric; /* rt_fabric_id of the rank's ARBOR_TOPO */
    uint64_t counter;
    uint8_t nonce[RT_NONCE_LEN];
} rt_join;

/* A fabric's fingerprint: 32 bits of a hash (FNV-1a) of its canonical spec
 * (arb_topo_spec), which a JOIN carries so that a switch refuses a rank
 * started on another fabric instead of misrouting its packets. */
uint32_t rt_fabric_id(const char *canonical_spec);

/* The job key: a keyed hash of the secret text. -1 when libsodium fails. */
int rt_key(uint8_t key[RT_KEY_LEN], const char *secret);
/* Write a JOIN (RT_JOIN_LEN bytes) with its MAC. */
void rt_join_put(uint8_t *b, const rt_join *j, const uint8_t key[RT_KEY_LEN]);
/* Parse a JOIN's fields (no MAC check): 0, or -1 when malformed. */
int rt_join_get(rt_join *j, const uint8_t *b, size_t len);
/* 0 when the JOIN's MAC verifies under key, else -1. */
int rt_join_verify(const uint8_t *b, size_t len, const uint8_t key[RT_KEY_LEN]);
/* WELCOME for j (RT_WELCOME_LEN bytes), and its check by the rank. */
void rt_welcome_put(uint8_t *b, const rt_join *j, const uint8_t key[RT_KEY_LEN]);
int rt_welcome_verify(const uint8_t *b, size_t len, const rt_join *j,
                      const uint8_t key[RT_KEY_LEN]);

/* ---- addresses, sockets, batches ----------------------------------------- */

/* "HOST[:PORT]" (HOST dotted IPv4 or a name): 0, or ARB_EPARSE. */
int rt_addr_parse(const char *s, uint16_t def_port, struct sockaddr_in *out, char *err,
                  size_t errlen);
/* "a.b.c.d:port" into buf (>= 24 bytes). */
const char *rt_addr_str(const struct sockaddr_in *a, char *buf, size_t len);
static inline int rt_addr_eq(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
    return a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

/* A non-blocking UDP socket bound to `bind` (NULL: any), with `buf` bytes
 * of socket buffers where the kernel allows. fd, or ARB_EIO. */
int rt_socket(const struct sockaddr_in *bind, int buf, char *err, size_t errlen);
/* The same, with SO_REUSEPORT set before binding when reuseport is 1 (the
 * sockets of a switch's threads share one address). */
int rt_socket_reuse(const struct sockaddr_in *bind, int buf, int reuseport, char *err,
                    size_t errlen);

#define RT_BATCH 64
#define RT_HEAD_MAX 128 /* the header part of an outgoing datagram */

/* Outgoing datagrams: each a header part (copied) and a payload part,
 * from a given local address (IP_PKTINFO) or the kernel's choice,
 * copied or referenced (then valid until rt_tx_flush). With GSO on, a flush
 * sends each run of equal-sized datagrams to one destination (the last may
 * be shorter) as one UDP_SEGMENT send of up to RT_GSO_SEGS; the order of
 * the datagrams to each destination is kept. */
#define RT_GSO_SEGS 7 /* 7 x 8228 B stays under the 64 KiB of one send */
typedef struct rt_txq {
    struct mmsghdr msg[RT_BATCH];
    struct iovec iov[RT_BATCH][2];
    struct sockaddr_in to[RT_BATCH];
    uint32_t src[RT_BATCH]; /* the local address to send from (network order), 0: any */
    _Alignas(struct cmsghdr) uint8_t ctl[RT_BATCH][32];
    uint8_t (*head)[RT_HEAD_MAX];
    uint8_t (*data)[ARB_PAYLOAD_MAX];
    uint32_t n;
    int fd;
    int gso; /* 1: coalesce with UDP_SEGMENT (turned off if the kernel refuses) */
    struct mmsghdr gmsg[RT_BATCH];
    struct iovec giov[RT_BATCH * 2];
    _Alignas(struct cmsghdr) uint8_t gctl[RT_BATCH][64];
    /* 1: datagrams queued from now on go to a switch, which may steer each
     * by its channel among its threads: a GSO send holds one channel's
     * (ranks: always; a switch: toward a peer switch) */
    int by_channel;
    uint8_t keyed[RT_BATCH]; /* by_channel when each was queued */
    struct rt_ring *ring;    /* sends through io_uring (the rt_rxq's ring), or NULL */
    uint64_t pkts, bytes, errors, drops, gso_sends;
    double drop; /* fraction dropped on purpose */
    arb_rng rng;
} rt_txq;

_Static_assert(RT_JOIN_LEN <= RT_HEAD_MAX && RT_WELCOME_LEN <= RT_HEAD_MAX &&
                   RT_HDR_LEN + ARB_HDR_LEN_LONG <= RT_HEAD_MAX,
               "every header part fits a batch slot");

/* gso: try UDP GSO (falls back to one datagram a message if refused). */
int rt_txq_init(rt_txq *q, int fd, double drop, uint64_t seed, int gso);
void rt_txq_free(rt_txq *q);
/* Queue one datagram: head[0..hlen) copied, payload copied (copy = 1) or
 * referenced. Flushes first when the batch is full. */
void rt_tx(rt_txq *q, const struct sockaddr_in *to, const uint8_t *head, size_t hlen,
           const uint8_t *payload, size_t plen, int copy);
/* The same from local address src (network order; 0: the kernel's choice):
 * a socket bound to 0.0.0.0 answers from the address it was sent to. */
void rt_tx_src(rt_txq *q, const struct sockaddr_in *to, uint32_t src, const uint8_t *head,
               size_t hlen, const uint8_t *payload, size_t plen, int copy);
/* Send what is queued (sendmmsg; a full socket buffer drops the rest,
 * counted as errors: the protocol recovers losses). */
void rt_tx_flush(rt_txq *q);

/* One datagram received: where it starts, its length, its sender, and the
 * local address it was sent to (network order; 0 unless asked for). */
typedef struct rt_dgram {
    uint8_t *buf;
    size_t len;
    const struct sockaddr_in *from;
    uint32_t local;
} rt_dgram;

#define RT_GRO_BUF 65536

/* Incoming datagrams. With GRO on (UDP_GRO accepted by the kernel), one
 * receive may hold several datagrams of one sender; rt_rx splits them. */
typedef struct rt_rxq {
    struct mmsghdr msg[RT_BATCH];
    struct iovec iov[RT_BATCH];
    struct sockaddr_in from[RT_BATCH];
    uint32_t local[RT_BATCH];
    _Alignas(struct cmsghdr) uint8_t ctl[RT_BATCH][64];
    uint8_t *arena; /* RT_BATCH buffers of bufsz bytes */
    size_t bufsz;
    rt_dgram dg[RT_BATCH * 64]; /* a GRO receive holds up to 64 segments */
    int fd;
    int gro;
    int pktinfo;          /* IP_PKTINFO: each datagram's local address */
    struct rt_ring *ring; /* receives through io_uring (rt_uring_attach), or NULL */
} rt_rxq;

/* gro: ask for UDP GRO (off where the kernel refuses). */
int rt_rxq_init(rt_rxq *q, int fd, int gro);
/* Ask for each datagram's local address (IP_PKTINFO): 0, or ARB_EIO. */
int rt_rxq_pktinfo(rt_rxq *q);
void rt_rxq_free(rt_rxq *q);
/* Receive without blocking: the datagrams in q->dg[0..n), n returned (0
 * when none). */
int rt_rx(rt_rxq *q);
/* Bytes waiting in the socket's receive queue now (the kernel's count of
 * the buffers' memory, SO_MEMINFO), or -1 where the kernel does not tell. */
int64_t rt_rx_queued(const rt_rxq *q);
/* RED's marking probability for q bytes queued under setting e (ecn.c):
 * 0 below kmin or when off, 1 from kmax, linear up to pmax between. */
double rt_ecn_p(const arb_rt_ecn *e, uint64_t q);
/* Wait until the socket is readable or `wait` ps passed: first look
 * without blocking for up to `spin` ps (yielding the core between looks),
 * then block in ppoll. 1 when it blocked, 0 when it did not. */
int rt_wait_readable(int fd, arb_time wait, arb_time spin);
/* The same, also returning when `wake` (an eventfd; -1: none) is
 * readable. */
int rt_wait_readable2(int fd, int wake, arb_time wait, arb_time spin);
/* The largest spin accepted (ARBOR_SPIN, --spin). */
#define RT_SPIN_MAX (10 * ARB_PS_PER_MS)
#define RT_LINE_RATE_MIN UINT64_C(1000000) /* 1 Mbit/s */
/* ARBOR_WINDOW=auto's bounds: the simulator's least default window
 * (ARB_SIM_ARBOR_WINDOW_MIN), and the fixed window the runtime held before
 * auto, which on one host the switch process, not a link, bounds. */
#define RT_WINDOW_AUTO_MIN 4
#define RT_WINDOW_AUTO_MAX 16

/* Wait as rt_wait_readable2 for q's socket, or for q's ring. */
int rt_rxq_wait(rt_rxq *q, int wake, arb_time wait, arb_time spin);
/* rt_rx's parts: reset slot i's msghdr; append the datagrams of slot i's
 * receive of len bytes (split when GRO coalesced them) to q->dg from
 * index n, returning the new count. */
void rt_rx_prepare(rt_rxq *q, uint32_t i);
int rt_rx_take(rt_rxq *q, uint32_t i, size_t len, int n);

/* ---- io_uring (uring.c; built with liburing only) ---------------------- */

/* 1 when this library was built with liburing. */
int rt_uring_built(void);
/* 1 when a ring can be made here; else 0 and why ("not built ...", or
 * the kernel's refusal with kernel.io_uring_disabled). */
int rt_uring_probe(char *why, size_t len);
/* Move the socket's I/O (rx's receives, tx's sends; one socket) onto a
 * ring: the socket becomes blocking (the ring waits), receives stay
 * posted. 0; ARB_EINVAL when not built; ARB_EIO when the kernel refuses
 * (err says why, with kernel.io_uring_disabled when set). Afterwards wait
 * with rt_rxq_wait, never on the socket. rt_rxq_free detaches. */
int rt_uring_attach(rt_rxq *rx, rt_txq *tx, char *err, size_t errlen);
/* Cancel the posted receives, wait for them, free the ring. */
void rt_uring_detach(rt_rxq *rx);
int rt_uring_rx(rt_rxq *q);
uint32_t rt_uring_send(rt_txq *q, struct mmsghdr *msg, uint32_t n, int gso, int *bad);
int rt_uring_wait(rt_rxq *q, int wake, arb_time wait, arb_time spin);

/* CLOCK_MONOTONIC in ps. */
arb_time rt_now(void);

/* ---- the switch without its socket (tests/fuzz/fuzz_switch.c) ---------- */

struct arb_agg;
/* Hand the switch one datagram from `from` at `now`, as its receive loop
 * does; what it sends is queued (and may reference b) until rt_switch_flush,
 * as after each receive batch (nothing leaves once muted). */
void rt_switch_feed(arb_rt_switch *s, const struct sockaddr_in *from, uint8_t *b, size_t len,
                    arb_time now);
void rt_switch_flush(arb_rt_switch *s);
/* The same for thread k's state (bench/bench_switch.c feeds each thread
 * from its own thread; k >= the switch's threads means 0). */
void rt_switch_feed_on(arb_rt_switch *s, uint32_t k, const struct sockaddr_in *from, uint8_t *b,
                       size_t len, arb_time now);
void rt_switch_flush_on(arb_rt_switch *s, uint32_t k);
/* Its threads, and 1 when the kernel steers datagrams among them. */
uint32_t rt_switch_threads(const arb_rt_switch *s);
int rt_switch_steered(const arb_rt_switch *s);
/* Close the switch's sockets: everything it sends from now on fails and is
 * counted as a send error. */
void rt_switch_mute(arb_rt_switch *s);
/* Every worker's switch engine calls tap(ctx, ev) after each decision (tests). */
void rt_switch_tap(arb_rt_switch *s, arb_switch_tap tap, void *ctx);
/* Its aggregator (for arb_agg_check). */
const struct arb_agg *rt_switch_agg(const arb_rt_switch *s);

#endif /* ARBOR_RT_INT_H */
