/*
 * A partitioned run's internals (src/sim/part.c): the records that cross
 * the cut and the state of a part, shared by part.c (set-up, the run,
 * reading, cutting the fabric) and part_cross.c (what crosses the cut:
 * sending, receiving and merging records between windows).
 */
#ifndef ARB_SIM_PART_INT_H
#define ARB_SIM_PART_INT_H

#include "sim_int.h"

enum {
    REC_PKT = 1,
    REC_EVENT = 2,
    REC_DONE = 3,
    REC_PORT = 5, /* from here on, records with bytes after them (take) */
    REC_FLOW = 6,
    REC_CAP = 7,
    REC_HOP = 8,
    REC_LIVE = 9
};

/* Every record but a packet's and a HOP (struct rec_hop) starts so; a
 * port's is followed by an arb_sim_port_stats, a flow's by a struct
 * flow_half, a capture's frames (CAP) and a part's changes of live packets
 * (LIVE: struct lnote, in its order) by d bytes. */
struct rec {
    uint32_t type;
    uint32_t a; /* PKT, PORT: the port; EVENT: the target; DONE: the flow; FLOW: the flow */
    arb_time t; /* PKT: arrival; EVENT, DONE: its time */
    uint32_t b; /* DONE: the target of the event it finished in; PORT: queue */
    uint32_t c; /* DONE: order within the part */
    uint64_t d; /* DONE: its arg; CAP, LIVE: the bytes that follow */
};

/* The switches a packet that starts across the cut had crossed there (a
 * capture's, for its TTL), ahead of the packet's record: the first two
 * fields of a struct rec. */
struct rec_hop {
    uint32_t type; /* REC_HOP */
    uint32_t crossed;
};
_Static_assert(offsetof(struct rec, a) == offsetof(struct rec_hop, crossed),
               "a HOP record reads as the head of a struct rec");

/* A packet's record: this, its struct pkt (its arrival time in it), and
 * `extra` bytes: an Arbor packet's header (hlen) and payload. */
struct rec_pkt {
    uint32_t type; /* REC_PKT */
    uint32_t port; /* the wire it is on */
    uint32_t extra, hlen;
};

/* What one side of a flow knows (arb_sim_part_collect). */
struct flow_half {
    arb_time finish;
    uint64_t retx_bytes, ooo_pkts, timeouts, cnps, cuts, tlp_probes;
    uint32_t reorder_peak, side; /* side: 1 sender, 2 receiver */
    double min_rc;
};

struct buf {
    uint8_t *d;
    size_t n, cap;
};

/* The packets on a part's wires across the cut, until they arrive at the
 * other part, in buckets by arrival time (2^shift ps each, about the
 * lookahead): a ring of `cap` buckets, bucket b (absolute: arrival >>
 * shift) at b & (cap - 1). Each bucket holds its packets in the order they started, so each
 * wire's are in the wire's order across the buckets. A window's end lets
 * go the buckets before its own whole and tests its own: a packet is
 * looked at when it starts and when it arrives, not at every window
 * between. */
struct cut_bucket {
    struct cut_sent *e;
    size_t n, cap;
};

struct cut_wires {
    struct cut_bucket *b;
    size_t cap;        /* a power of two, or 0 */
    uint64_t base, hi; /* every packet is in buckets base .. hi, hi - base < cap */
    unsigned shift;
    size_t n; /* packets in all */
};

/* A completion of the window, with the order it sorts in; an Arbor
 * rank's done (flow SIM_ARBOR_NOTE) names it in arg (arbor_note). */
struct note {
    arb_time t;
    uint32_t target, rank, idx, flow;
    uint64_t arg;
};

struct sim_part {
    arb_sim_part_ops ops;
    uint32_t *node_part; /* per node */
    arb_time lookahead;
    arb_time win_end;      /* the last window's end: a callback's flow starts after it */
    struct buf *out;       /* per part */
    struct cut_wires sent; /* the packets on this part's wires across the cut */
    uint8_t *mark;         /* per port, for net_cut_gone */
    struct note *done;
    size_t n_done, cap_done;
    struct lnote *tmp; /* merging live notes (s->plog): room for its cap */
    size_t cap_tmp;
    size_t *seg; /* where each part's notes start in live (each part's are in order) */
    size_t n_seg, cap_seg;
    uint32_t seq;   /* order of this part's notes */
    int64_t glive;  /* live packets, whole fabric, after the last window (every part) */
    uint64_t gpeak; /* the most at once so far (every part) */
    /* this part's ports as last sent to part 0 (sync_end sends what changed) */
    arb_sim_port_stats *sps;
    uint32_t *sq;
    uint64_t *stx; /* and its packets started, as counted then (port_same) */
    /* part 0: the other parts' ports as last received */
    uint32_t *mq;
    arb_sim_port_stats *mps;
    uint8_t *mhave;
    /* the whole fabric's figures after the last run */
    arb_sim_stats gst;
    arb_time gnow, gactive;
    arb_sim_part_info info;
    /* part 0 with a capture (part_pcap_room): each part's frames of the
     * exchange (capd[r], capn[r] bytes; part 0's own are the capture's) */
    const uint8_t **capd;
    size_t *capn;
};

/* part_cross.c: buffers and what crosses the cut */
/** A failure of the run: the first error (rc < 0) stays in s->error. */
void part_fail(arb_sim *s, int rc);
/** v (n used of *cap, `size` bytes each) with room for one more: itself,
 * or grown to twice (from `first`), or NULL (out of memory: v stays). */
void *part_room(void *v, size_t n, size_t *cap, size_t size, size_t first);
/** Append n bytes to b: 0 or ARB_ENOMEM. */
int part_buf_put(struct buf *b, const void *p, size_t n);
/** Free the packets on the wires across the cut. */
void part_cut_wires_free(struct cut_wires *w);
/** Buckets of the largest power of two of picoseconds up to the lookahead
 * (1.024 ns at least, 1.1 s at most): the shift. */
unsigned part_cut_wires_shift(arb_time lookahead);
/** What has arrived by the event (t, target) let go, in the order each
 * wire holds it; then each wire that still holds packets gets its first as
 * its head. */
void part_cut_wires_drain(arb_sim *s, struct cut_wires *w, arb_time t, uint32_t target,
                          uint8_t *mark);
/** Send every part what this one has for it; take what they have for it. */
int part_exchange(arb_sim *s);
/** This part's completions of the window: to every part. */
void part_post_notes(arb_sim *s);
/** Every part's completions of the window, in the sequential run's order
 * (time, then the target of the event, then their order in it). */
void part_replay_done(arb_sim *s);
/** The pool's peak over the parts (the whole fabric's live packets),
 * exchanged only while it may be climbing. */
int part_live_window(arb_sim *s);

#endif /* ARB_SIM_PART_INT_H */
