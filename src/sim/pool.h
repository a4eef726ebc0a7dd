/*
 * pool.h - the simulator's packet pool. Packets are named by 32-bit
 * indices (lists are threaded through `next`), live in chunks that never
 * move, and are recycled through a stack of free indices: no allocation
 * per packet once the pool has grown to the run's peak.
 *
 * Built with ARB_NO_POOLS every packet is its own malloc and a freed one is
 * returned to the C library, so that the sanitizers see each buffer.
 */
#ifndef ARBOR_SIM_POOL_H
#define ARBOR_SIM_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arbor/base.h"
#include "arbor/sim.h"

#define PKT_NONE UINT32_MAX

#ifdef ARB_NO_POOLS
#define POOL_CHUNK_BITS 0
#else
#define POOL_CHUNK_BITS 12
#endif
#define POOL_CHUNK (1u << POOL_CHUNK_BITS)

/* Packet kinds. */
enum pkt_kind {
    PK_DATA = 0,  /* transport data */
    PK_ACK = 1,   /* cumulative ack */
    PK_NACK = 2,  /* go-back-N / IRN negative ack */
    PK_CNP = 3,   /* DCQCN congestion notification */
    PK_ARBOR = 4, /* an Arbor packet; the header is in the job's side table (arbor_pool.c) */
};

/* pkt_info (sim_int.h) hands the kind to routing and taps as it is: the
 * public enum names the same values. */
_Static_assert((int)PK_DATA == (int)ARB_SIM_DATA && (int)PK_ACK == (int)ARB_SIM_ACK &&
                   (int)PK_NACK == (int)ARB_SIM_NACK && (int)PK_CNP == (int)ARB_SIM_CNP &&
                   (int)PK_ARBOR == (int)ARB_SIM_ARBOR,
               "enum pkt_kind and arb_sim_pkt_kind must agree");

/* Packet flags. */
#define PF_ECT 0x01    /* ECN-capable */
#define PF_CE 0x02     /* congestion experienced */
#define PF_RETX 0x04   /* a retransmission */
#define PF_LAST 0x08   /* last packet of a message */
#define PF_LOST 0x10   /* lost on the link it is on (cfg.loss): dropped on arrival */
#define PF_SWITCH 0x20 /* Arbor: emitted or rewritten by an aggregator */
#define PF_DUP 0x40    /* delivered twice by the link it is on (cfg.dup) */
#define PF_LATE 0x80   /* held back where it arrives (cfg.reorder) */
_Static_assert(PF_ECT == ARB_SIM_ECT && PF_CE == ARB_SIM_CE && PF_RETX == ARB_SIM_RETX,
               "the flags taps see are the packet's own");

/*
 * One packet in the simulator: the decoded fields the fabric and the
 * transports need, never its bytes (a wire check re-encodes on demand).
 * 64 bytes; every in-flight packet costs this much.
 */
struct pkt {
    uint32_t next;    /* next in the list that holds it */
    uint32_t conn;    /* connection (QP) index at the sender */
    uint32_t src;     /* source host */
    uint32_t dst;     /* destination host */
    uint32_t psn;     /* sequence number (data), or acked / expected PSN */
    uint32_t aux;     /* kind-specific: received PSN of an IRN NACK, ... */
    uint32_t qp;      /* destination QP (E-ECMP hashes it) */
    uint32_t in_port; /* the port of the node it is at that it came in by (on a wire: of
                       * the node it left), for routing and PFC accounting; set on
                       * arrival (the reverse direction of the link, sfar.in) */
    arb_time t;       /* arrival time at the far end of the link it is on */
    arb_time ts;      /* sender timestamp (RTT samples) */
    uint16_t bytes;   /* bytes on the wire: payload + headers */
    uint16_t payload; /* payload bytes */
    uint16_t sport;   /* UDP source port */
    uint8_t kind;     /* enum pkt_kind */
    uint8_t flags;    /* PF_* */
    uint32_t lb;      /* load balancer's in-band word (CONGA), 0 unless cfg.inband */
    uint32_t gap;     /* on a wire, with a packet behind: that one's t minus this t
                       * (PKT_GAP_FAR: read it there), so an arrival need not touch it */
};

#define PKT_GAP_FAR UINT32_MAX

_Static_assert(sizeof(struct pkt) == 64, "a packet is one cache line");

struct pool {
    struct pkt **chunks;
    uint32_t n_chunks, cap_chunks;
    uint32_t live;      /* packets handed out and not yet freed */
    uint32_t peak;      /* most live at once */
    uint32_t made;      /* packets ever created (pool size) */
    uint32_t *free_ids; /* free packets' indices, a stack (ARB_NO_POOLS: released ones) */
    uint32_t n_free, cap_free;
};

int pool_init(struct pool *p);
void pool_free_all(struct pool *p);

static inline struct pkt *pool_get(const struct pool *p, uint32_t i)
{
    return &p->chunks[i >> POOL_CHUNK_BITS][i & (POOL_CHUNK - 1)];
}

#ifdef ARB_NO_POOLS
/* A zeroed packet's index, or PKT_NONE when memory ran out. */
uint32_t pool_alloc(struct pool *p);

/* The same without zeroing it, for a caller that writes the whole packet
 * at once (built with ARB_NO_POOLS it is zeroed all the same). */
uint32_t pool_alloc_raw(struct pool *p);
void pool_release(struct pool *p, uint32_t i);
#else
/* A new chunk's packets onto the free stack (pool.c): 0, ARB_ENOMEM or
 * ARB_ERANGE. */
int pool_grow_stack(struct pool *p);

/*
 * A packet's index, not zeroed, for a caller that writes the whole packet
 * at once; PKT_NONE when memory ran out. Inline, as are pool_alloc and
 * pool_release: the transports allocate and free a packet per packet sent.
 *
 * Free packets wait on a stack of indices, not a list through their
 * `next`: handing one out reads the stack (contiguous), never the cold line
 * of a packet freed long ago, so a run of allocations (a window's packets
 * from another part) is not a chain of cache misses; and the packets a few
 * places down are fetched ahead. The order is the list's: last freed,
 * first handed out; a new chunk lowest index first.
 */
static inline uint32_t pool_alloc_raw(struct pool *p)
{
    if (p->n_free == 0 && pool_grow_stack(p) < 0) return PKT_NONE;
    uint32_t i = p->free_ids[--p->n_free];
#if defined(__GNUC__)
    if (p->n_free >= 4) __builtin_prefetch(pool_get(p, p->free_ids[p->n_free - 4]), 1);
#endif
    if (++p->live > p->peak) p->peak = p->live;
    return i;
}

/* A zeroed packet's index, or PKT_NONE when memory ran out. */
static inline uint32_t pool_alloc(struct pool *p)
{
    uint32_t i = pool_alloc_raw(p);
    if (i == PKT_NONE) return PKT_NONE;
    struct pkt *k = pool_get(p, i);
    memset(k, 0, sizeof *k);
    k->next = PKT_NONE;
    return i;
}

static inline void pool_release(struct pool *p, uint32_t i)
{
    p->free_ids[p->n_free++] = i; /* room: the stack holds every packet made */
    p->live--;
}
#endif

#endif
