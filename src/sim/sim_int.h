/*
 * sim_int.h - the simulator's internal state, shared by its files:
 * net.c (ports, links, queues, switches, PFC, ECN), rdma.c (hosts and the
 * RoCE-style transports), sim.c (the public API and the event loop) and
 * prefetch.c (the event loop's prefetch staging, prefetch.h).
 */
#ifndef ARBOR_SIM_INT_H
#define ARBOR_SIM_INT_H

#include "arbor/sim.h"
#include "cc/dcqcn_rate.h"

#include <stddef.h>
#include "evq.h"
#include "pool.h"

/* A function the compiler must inline (a per-hop path with two callers). */
#if defined(__GNUC__)
#define SIM_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define SIM_ALWAYS_INLINE inline
#endif
/* A hint to start fetching the line at address p, to be written (no effect
 * elsewhere). GCC drops a call to a function that does nothing else, taking
 * it for pure: use it in always-inline functions only. */
#if defined(__GNUC__)
#define SIM_PREFETCH(p) __builtin_prefetch((p), 1)
#else
#define SIM_PREFETCH(p) ((void)(p))
#endif
/* A function kept out of line, so that the common path around its call
 * stays small. */
#if defined(__GNUC__)
#define SIM_NOINLINE __attribute__((noinline))
#else
#define SIM_NOINLINE
#endif
/* A rare path, kept out of the per-hop code around its call. */
#if defined(__GNUC__)
#define SIM_COLD __attribute__((cold, noinline))
#else
#define SIM_COLD
#endif

/* Event targets: port events in the low two bits of port << 2, host
 * timers after every port. */
enum { EV_TXDONE = 0, EV_ARRIVE = 1, EV_PAUSE = 2, EV_RESUME = 3 };
#define EV_PORT(p, k) (((uint32_t)(p) << 2) | (k))

/* A packet list threaded through pkt.next. */
struct plist {
    uint32_t head, tail;
};

/* Simulator state of one directed link (port): what every packet through
 * it touches, in one 64-byte cache line (the array is line-aligned). */
/*
 * sport.kind. A switch port with PFC starts its next packet when the one
 * being sent is out (an end-of-transmission event: a pause may come
 * between). Without PFC nothing can hold a queued packet back, so a switch
 * port schedules each packet when it is queued -- it starts when the ones
 * ahead of it are out, and goes on the wire list at once with its arrival
 * time -- and its queue is counted lazily (sched_catch_up). A host's NIC;
 * a NIC whose host has had transport connections (rdma_host_add; only
 * these pull from them).
 */
enum { PORT_EVENTS, PORT_SCHED, NIC_HOST, NIC_RDMA };

struct sport {
    struct plist q;    /* output queue (not PORT_SCHED) */
    struct plist wire; /* on the wire, in arrival order; PORT_SCHED: those not yet started last */
    union {
        struct plist arb_tx; /* NICs: Arbor packets the host's engines emitted (arbor_host.c) */
        struct {
            uint32_t head, pkts; /* PORT_SCHED: the first packet of the wire not yet started
                                  * (PKT_NONE: none), and how many there are */
        } sched;
        struct {
            uint32_t held_bytes; /* bytes the switch holds that came in here */
            uint8_t pause_sent;  /* this port has paused its peer */
        } pfc;                   /* PORT_EVENTS (a switch port with PFC), as ingress */
    };
    uint32_t q_bytes;     /* bytes in q; PORT_SCHED: of those not yet started */
    uint32_t max_q;       /* deepest q_bytes */
    uint16_t link;        /* its rate and delay: s->lk[link] */
    uint8_t txdone_armed; /* an EV_TXDONE is pending */
    uint8_t paused;       /* PFC: the peer asked this port to stop */
    uint8_t kind;         /* PORT_*, NIC_* */
    uint8_t failed;       /* the link is down (the topology's flag, read by sim_links) */
    arb_time busy_until;  /* the serialiser is busy until then; at the receiving part of a
                           * wire across the cut (PCUT_IN), the last packet put on the wire
                           * arrives then (net_cut_put) */
    uint64_t tx_bytes, tx_pkts;
};

/* A rate, a delay and a loss probability some links share (s->lk, indexed
 * by sport.link). */
struct slink {
    uint64_t rate;        /* bits per second */
    arb_time delay;       /* propagation, picoseconds */
    uint64_t mbps;        /* the rate in Mb/s, rounded up (sched_bound_clears) */
    arb_time ps_per_byte; /* 8e12 / rate when that is whole (100 Gb/s: 80), so that a
                           * frame's serialisation is bytes times it; else 0 (net.c) */
    double loss;          /* cfg.loss, or the link's own (arb_topo_set_link_loss) */
    double dup;           /* cfg.dup, or the link's own */
    double reorder;       /* cfg.reorder, or the link's own */
    uint8_t odd;          /* LK_*: what the per-hop path must look at */
    uint32_t to;          /* LK_CUT: the part the link leads to */
};
/* slink.odd: the link loses, duplicates or reorders (link_fate); it leaves
 * this part of a partitioned run (PCUT_OUT: part_send_pkt); a tap or the
 * DRE sees every packet sent (cfg.tap, cfg.dre_period: every link). */
enum { LK_FATE = 1, LK_CUT = 2, LK_SEEN = 4 };
#define SIM_MAX_LINKS 65536 /* distinct (rate, delay) pairs a fabric may have */

/* The far end of a port: where an arrival off its wire happens. */
struct sfar {
    uint32_t node; /* the node there (ports[].peer) */
    uint32_t in;   /* the port of that node it comes in by (ports[].peer_port) */
};

/* The rest of a port's state, touched only by pauses and drops. */
struct sport_cold {
    struct plist late; /* held back by reordering, in arrival order (net.c) */
    arb_time paused_at;
    arb_time paused_ps;
    uint64_t drops;
    uint64_t ecn_draws; /* ECN marking draws made at this port (net.c, ecn_mark) */
};

/* DRE of one port (net.c): bytes sent, in 1/256 byte, decayed by
 * dre_keep / 65536 at every multiple of dre_period; `epoch` is the last
 * period applied. */
struct dre {
    uint64_t x;
    uint64_t epoch;
};

/* DCQCN state of one connection (dcqcn.c): the sender's reaction point
 * and the receiver's notification point. */
struct dcq {
    struct dcqcn_rate r; /* current and target rate (bits/s), stages: cc/dcqcn_rate.h */
    double alpha;        /* congestion estimate, 1 before the first CNP */
    double line;         /* the sending NIC port's rate, bits/s */
    double min_rc;       /* lowest rc so far */
    arb_time alpha_at;   /* last alpha update (a CNP); decays count from here */
    arb_time inc_at;     /* next rate-increase timer; ARB_TIME_NEVER when idle */
    arb_time next_send;  /* pacing: no data packet before this */
    arb_time last_tx;    /* when the last data packet was sent */
    uint64_t byte_cnt;   /* wire bytes since the last byte-counter event */
    uint32_t last_bytes; /* wire bytes of the last data packet */
    uint8_t active;      /* below line rate: timers and counter run */
    uint8_t cut_once;    /* a CNP has been received */
    arb_time cnp_last;   /* receiver: last CNP sent, ARB_TIME_NEVER if none */
    uint64_t cnps, cuts;
};

/* Per-connection transport state, by cache line: what the NIC's pull and
 * an ack read, then what the receiver reads (and the sender's rarer
 * fields), then the rest. The array is line-aligned (conn_array). */
struct conn {
    /* line 0: the sender */
    _Alignas(64) uint32_t src;
    uint32_t dst;
    uint32_t qp;
    uint32_t n_pkts;      /* packets in the message */
    uint32_t snd_una;     /* oldest PSN not acknowledged */
    uint32_t snd_nxt;     /* next PSN to send (go-back-N rewinds it) */
    uint32_t snd_max;     /* highest PSN sent + 1 */
    uint32_t retx_cursor; /* IRN: next hole to examine */
    uint32_t lost_high;   /* IRN: holes below this are taken as lost */
    uint16_t sport;
    uint8_t started, send_done; /* send_done: SEND_* */
    uint8_t *sacked;            /* IRN: bitmap of selectively acked PSNs */
    arb_time *sent_at;          /* IRN: last send time of every PSN */
    arb_time rto_at;            /* ARB_TIME_NEVER when nothing is outstanding */
    /* line 1: the receiver */
    uint32_t rcv_nxt;
    uint32_t since_ack;
    uint32_t held_bytes;   /* IRN: out-of-order payload held */
    uint32_t reorder_peak; /* the most held */
    uint32_t last_payload; /* payload of the last packet */
    uint32_t sack_high;    /* IRN (sender): highest selectively acked PSN + 1 */
    uint8_t nack_sent;     /* go-back-N: one NACK per gap */
    uint8_t *rcvd;         /* IRN: bitmap of out-of-order packets held */
    arb_time finish;
    uint64_t ooo_pkts;
    /* the rest: first what an ack and an idle sender's pull touch */
    uint64_t bytes;
    arb_time start;
    uint64_t retx_bytes, timeouts;
    uint32_t next_active; /* host's list of connections that may send */
    uint32_t streak;      /* timeouts in a row without the cumulative ack moving */
    arb_time srtt;        /* tail-loss probes: smoothed round trip of the acks (0: none yet) */
    arb_time pto_at;      /* the probe's time; ARB_TIME_NEVER when none is armed */
    uint8_t probe;        /* a probe is due: the NIC's next packet of this connection */
    uint8_t probed;       /* a probe went since the cumulative ack last moved */
    uint8_t again;        /* IRN: the hole at the cumulative ack goes once more */
    struct dcq cc;        /* DCQCN (when enabled) */
    arb_time gave_up;     /* when the sender gave up (cfg.retry_limit); ARB_TIME_NEVER: not */
    uint64_t tlp_probes;
};
_Static_assert(offsetof(struct conn, rcv_nxt) == 64, "the sender's fields fill line 0");
_Static_assert(offsetof(struct conn, bytes) <= 128, "the receiver's fields fit line 1");
_Static_assert(offsetof(struct conn, probed) < 192, "an ack's and a probe's fields fit line 2");
/* conn.send_done: still sending; every packet acknowledged; the sender gave
 * up (cfg.retry_limit, rdma.c). */
enum { SEND_ON = 0, SEND_ACKED = 1, SEND_GAVE_UP = 2 };

/* One host: its connections and the NIC's round robin, in one cache line
 * (the array is line-aligned). */
struct host {
    _Alignas(64) uint32_t *conns; /* started connections of this host, by index (the round robin) */
    uint32_t *pend;     /* connections not started: pend[pend_head..n_pend) by (start, index) */
    arb_time timer_at;  /* the pending host timer, ARB_TIME_NEVER if none */
    uint64_t timer_seq; /* its sequence number (earlier ones are stale) */
    uint32_t nic_port;  /* global port of NIC port 0 */
    uint32_t n_conns, cap_conns;
    uint32_t rr;         /* round-robin position */
    uint32_t n_finished; /* connections done sending, still in conns (rdma_pull drops them) */
    uint32_t pend_head, n_pend, cap_pend;
};
_Static_assert(sizeof(struct host) == 64, "a host is one cache line");

/* Serialisation times already computed (net.c): a frame size at a rate
 * repeats hop after hop, and arb_time_tx costs a 64-bit division. */
#define TX_MEMO 64
struct tx_memo {
    uint64_t rate; /* 0: empty */
    uint32_t bytes;
    arb_time ps;
};

#define PF_SLOTS 32             /* a power of two above the prefetch distances (prefetch.h) */
#define PF_MIN_BYTES (4u << 20) /* prefetching above this state size (prefetch.c) */

/* A partitioned run's event that changed the live packets (a part's notes
 * are in its order): by delta, at most up above where it started. */
struct lnote {
    arb_time t;
    uint32_t target;
    int32_t delta;
    uint32_t up;
};

/* A part's notes of the window, and its change of live packets so far (cur)
 * and highest point (up), above the window's start. */
struct live_log {
    struct lnote *v;
    size_t n, cap;
    int64_t cur, up;
};

struct arb_sim {
    arb_sim_config cfg;
    const arb_topo *topo;
    const arb_node *nodes;
    const arb_port *ports;
    uint32_t n_ports, n_hosts;
    struct sport *sp; /* per port, cache-line aligned */
    uint32_t *owner;  /* per port: the node it leaves (a NIC's host) */
    struct sfar *far; /* per port: its far end, a dense copy of ports[].peer, peer_port */
    struct slink *lk; /* the links' distinct rates and delays (sim_links) */
    uint32_t n_lk;
    struct sport_cold *spc; /* per port */
    struct host *hosts;
    struct conn *conns;
    uint32_t n_conns, cap_conns;
    struct evq q;
    struct pool pool;
    arb_rng rng; /* ECN marks, unless cfg.local_order (then per port: net.c, ecn_mark) */
    arb_time now;
    arb_time active; /* the last event that was not an idle host timer */
    int idle;        /* the event being run found nothing to do */
    arb_sim_stats st;
    arb_sim_timers tm; /* the connections' timers (rdma_timers) */
    uint32_t *done;    /* flows finished in this event, reported after it */
    uint32_t n_done, cap_done;
    int error;             /* first fatal error met inside an event */
    struct arbor_job *arb; /* the Arbor collective (arbor_int.h), NULL if none */
    struct dre *dre;       /* per port when cfg.dre_period > 0, else NULL */
    uint32_t dre_keep;     /* 1 - dre_alpha, in 1/65536 */
    struct tx_memo *txm;   /* TX_MEMO entries (a cache: written through a const arb_sim) */
    /* What the prefetching stages found about the events a few places
     * ahead, by position in the bucket (prefetch.h, prefetch_ahead): hints only. */
    struct {
        uint32_t node[PF_SLOTS + 1]; /* the switch that routes its packet */
        uint32_t port[PF_SLOTS + 1]; /* the output port route_peek guessed there */
        uint32_t host[PF_SLOTS + 1]; /* the host it happens at (an arrival, a NIC's) */
        uint32_t conn[PF_SLOTS + 1]; /* its connection (an arrival at a host, a NIC's pull) */
        uint32_t pkt[PF_SLOTS + 1];  /* the packet route_peek guessed for */
        uint64_t tok[PF_SLOTS + 1];  /* the token it set with the guess (0: none) */
        uint8_t count[PF_SLOTS + 1]; /* the output port's queue count will pass packets */
    } pf;
    /* The slot of the event being handled (PF_SLOTS, a slot always clear,
     * while prefetching is off), cleared when the next event's stages run:
     * forward takes its guess back (rule.h) or hands it to cfg.route. */
    uint32_t pf_cur;
    uint8_t *pf_pend;         /* per node: the slots naming it as the switch that routes */
    uint64_t pf_gen;          /* the topology's failure generation when the slots were
                               * last cleared: a guess made since holds only in it */
    const arb_pgft *pgft;     /* the topology's (cfg.route_fast's guesses), or NULL */
    const uint64_t *topo_gen; /* the topology's failure generation, read live */
    /* cfg.route_fast when the switches decide by it (rule.h), else NULL */
    const arb_sim_route_fast *rule;
    uint8_t pf_on;           /* prefetching (the state outgrew the caches) */
    uint32_t pf_made;        /* pool size when that was decided */
    size_t pf_min_bytes;     /* prefetching above this state size (PF_MIN_BYTES; tests move it) */
    uint64_t pf_events;      /* events whose PF_ROUTE stage ran (tests: it did) */
    uint8_t in_run;          /* arb_sim_run is handling events */
    uint8_t in_report;       /* the completion callbacks are running (report_done, replay_done) */
    struct sim_defer *defer; /* per host, starts a callback deferred (rdma_defer), or NULL */
    arb_time horizon;        /* the `until` of the last run: every event up to it is done */
    arb_time stop_at;        /* arb_sim_stop_at: the run under way ends after this time */
    /* A partitioned run (part.c): NULL when the simulator runs whole. */
    struct sim_part *part;
    uint8_t *pcut; /* per port, PCUT_*; NULL when whole */
    /* the live packets before the event under way, and those it landed from
     * another part (arrive_cut: what only moved between parts is no change) */
    uint32_t part_live0;
    struct live_log plog; /* the window's changes of live packets (part.c) */
    uint32_t part_target; /* the target of the event under way */
    uint8_t part_solo;    /* partitioned in one part: completions reported at once */
    /* Flows given up (cfg.retry_limit): how many are marked in conns
     * (gave_up), and in a partitioned run those this part's senders gave up
     * since the last run's end, when every part learns of every part's
     * (sim.c, gave_up_merge). */
    uint32_t n_gave_up;
    uint32_t *gup, n_gup, cap_gup;
    arb_time next_event; /* the earliest event left when the last run returned, over every
                          * part (arb_sim_next_event) */
    /* arb_sim_part_stop_after: no event past (stop_t, stop_target) in the
     * local order runs (ARB_TIME_NEVER: none) */
    arb_time part_stop_t;
    uint32_t part_stop_target;
    /* a partitioned run's capture of the whole fabric (arb_sim_pcap_partition),
     * or NULL: its frames go to part 0 with every exchange */
    arb_sim_pcap *pcap;
};

/* sport's place in a partitioned run (arb_sim.pcut): both ends here (or
 * run whole); this part sends on it, another receives; another part
 * sends, this one receives; neither end here. */
enum { PCUT_LOCAL = 0, PCUT_OUT = 1, PCUT_IN = 2, PCUT_FOREIGN = 3 };

/* The UDP destination ports packets carry: RoCE's, and Arbor's (as
 * ARB_UDP_PORT_DEFAULT). */
#define SIM_ROCE_DPORT 4791
#define SIM_ARBOR_DPORT 17470

/* The public view of a packet (routing, taps). */
static inline arb_sim_pkt_info pkt_info(const struct pkt *k)
{
    arb_sim_pkt_info f;
    f.src = k->src;
    f.dst = k->dst;
    f.sport = k->sport;
    /* an Arbor packet's job has its own port when it shares a host (psn >> 1) */
    f.dport = k->kind == PK_ARBOR ? (uint16_t)(SIM_ARBOR_DPORT + (k->psn >> 1)) : SIM_ROCE_DPORT;
    f.qp = k->qp;
    f.conn = k->conn;
    f.psn = k->psn;
    f.aux = k->aux;
    f.bytes = k->bytes;
    f.payload = k->payload;
    f.proto = 17;
    f.kind = k->kind;
    f.flags = k->flags;
    f.lb = k->lb;
    f.index = UINT32_MAX;
    f.guess = UINT32_MAX; /* ARB_TOPO_NONE */
    f.token = 0;
    return f;
}

/* sim.c: copy the topology's link rates, delays and failure flags into
 * the ports (sport.link, .failed); ARB_ERANGE past SIM_MAX_LINKS distinct
 * pairs, ARB_ENOMEM. */
int sim_links(arb_sim *s);

/* prefetch.c: drop every route guess (the fabric changed). */
void sim_forget_guesses(arb_sim *s);
/* A change between runs (arb_sim_fabric_changed, arb_sim_arbor_reboot)
 * happens at the end of the last run, every event up to it done, not at
 * its last event: the clock moves there (a part's and the whole run's
 * alike, the end being every part's). Inside a run, or after a run to
 * ARB_TIME_NEVER, it stays. */
void sim_to_run_end(arb_sim *s);

/* sim.c: the sender of flow f gave up now (rdma.c, give_up): marked and
 * counted, and noted for the other parts of a partitioned run. */
void sim_gave_up(arb_sim *s, uint32_t f);

/* sim.c: queue a completion for the callback, run after the event, so
 * that the callback may add flows (and move s->conns) safely. */
void sim_note_done(arb_sim *s, uint32_t flow);
/* A flow's "all data sent" notification, queued with the completions (the
 * flow index with SIM_SENT_BIT set). */
#define SIM_SENT_BIT 0x80000000u
/* Queued with the completions when Arbor ranks are done (arbor_report runs
 * the callbacks); no flow index takes it. */
#define SIM_ARBOR_NOTE UINT32_MAX

/* net.c */
void net_enqueue(arb_sim *s, uint32_t port, uint32_t pkt);
void net_on_txdone(arb_sim *s, uint32_t port);
void net_on_arrive(arb_sim *s, uint32_t port);
/* The first packet reordering held at port's far end is due (net.c). */
void net_on_late(arb_sim *s, uint32_t port);
void net_on_pause(arb_sim *s, uint32_t port, int pause);
void net_kick_nic(arb_sim *s, uint32_t port);
/* Host packet i to the NIC of `port`: behind what it has queued (arb_tx). */
void net_nic_send(arb_sim *s, uint32_t port, uint32_t i);
void net_push_event(arb_sim *s, arb_time t, uint32_t target);
int net_init(arb_sim *s);  /* after s->cfg, ports are set: the DRE; ARB_ENOMEM */
void net_free(arb_sim *s); /* what net_init made */
uint64_t net_dre(const arb_sim *s, uint32_t port); /* decayed to s->now, in bytes */
/* Bytes queued on `port` now (PORT_SCHED: counted up to the present
 * first, as an event sees it or as a reader between runs: sched_catch_up). */
uint32_t net_queue_bytes(const arb_sim *s, uint32_t port);
/* Bytes and packets `port` has started sending (a reader between runs). */
void net_sent(const arb_sim *s, uint32_t port, uint64_t *bytes, uint64_t *pkts);

/* The Arbor transport (arbor_int.h): arbor_steer.c (arbor_switch), arbor_host.c
 * (arbor_host_recv, arbor_on_timer, arbor_report), arbor_pool.c (arbor_pkt_drop,
 * arbor_pkt_dup), arbor_check.c (arbor_queue_drop, arbor_pkt_lost), arbor_sim.c
 * (arbor_free). */
/* Arrivals off the wire of `port`: a packet a node sent is counted as sent
 * (per job and port) when it reaches the far end; what is still on a wire is
 * counted when a result is read. */
void arbor_switch(arb_sim *s, uint32_t port, uint32_t node, uint32_t in_port, uint32_t pkt);
void arbor_host_recv(arb_sim *s, uint32_t port, uint32_t host, uint32_t pkt);
void arbor_on_timer(arb_sim *s, uint32_t host, uint64_t seq);
void arbor_pkt_drop(arb_sim *s, uint32_t node, uint32_t pkt);   /* counted, freed */
void arbor_queue_drop(arb_sim *s, uint32_t port, uint32_t pkt); /* by the queue of `port` */
/* arrived lost off the wire of `port`: sent, in, dropped */
void arbor_pkt_lost(arb_sim *s, uint32_t port, uint32_t node, uint32_t pkt);
/* A second delivery of packet pkt off port's wire (cfg.dup): a copy the
 * sending node counts as made; PKT_NONE when out of memory (fatal). */
uint32_t arbor_pkt_dup(arb_sim *s, uint32_t port, uint32_t pkt);
void arbor_free(arb_sim *s);
/* A partitioned run (arbor_pool.c): what an Arbor packet across the cut
 * carries beside its struct pkt (its header; values mode, its payload's
 * bytes), and that put in this part's tables for its copy i (the buffer
 * pool's ids are each part's own); ARB_ENOMEM. The sending part lets its
 * own go (arbor_pkt_release) when it arrives. */
void arbor_cut_parts(const arb_sim *s, uint32_t i, const void **hdr, size_t *hlen, const void **pl,
                     size_t *plen);
int arbor_cut_land(arb_sim *s, uint32_t i, const uint8_t *hdr, size_t hlen, const uint8_t *pl,
                   size_t plen);
void arbor_pkt_release(arb_sim *s, uint32_t i);
/* part.c, sync_end: the Arbor state merged over the parts (arbor_part.c). */
int arbor_part_sync(arb_sim *s);
/* After the event: the ranks done in it (arb_sim_arbor_config.on_rank_done). */
void arbor_report(arb_sim *s);
/* A partitioned run: the ranks done in this event, to report at the
 * window's end (part.c): how many, note x as (job << 32 | rank), and the
 * notes taken (none left). */
uint32_t arbor_n_notes(const arb_sim *s);
uint64_t arbor_note(const arb_sim *s, uint32_t x);
void arbor_notes_taken(arb_sim *s);
/* ... and reported there: the job's on_rank_done for one of them. */
void arbor_report_note(arb_sim *s, uint64_t note);
/* The event of host h's deferred entry due now (arbor_defer_enter). */
void arbor_on_enter(arb_sim *s, uint32_t host);
/* A switch's re-credit timer (arbor_steer.c): the credits its aggregators
 * send again to the children still missing. */
void arbor_on_switch_timer(arb_sim *s, uint32_t node, uint64_t seq);

/* part.c: the partitioned run (arb_sim_run's, when s->part is set). */
int part_run(arb_sim *s, arb_time until);
/* Packet i starts across the cut on `port` (PCUT_OUT): its copy goes to the
 * part that receives it. This part keeps it on its wire, for the port's
 * queue accounting, until it has arrived there, and lets it go at the end
 * of the window it arrives in (net_cut_drain). */
void part_send_pkt(arb_sim *s, uint32_t port, uint32_t i);
/* A packet on a wire across the cut, as part_send_pkt noted it. */
struct cut_sent {
    arb_time t;    /* its arrival at the far end */
    uint32_t port; /* the port, | CUT_ARBOR for an Arbor packet */
    uint32_t i;
    uint32_t bytes; /* its wire bytes (the queue counts them until it starts) */
};
#define CUT_ARBOR 0x80000000u
/* net.c, for a part's packets on its wires across the cut, which have no
 * arrival event there (part.c lets them go at the end of the window they
 * arrive in), taken in the order they started on each wire, touching
 * neither the packets nor the ports of others: net_cut_gone takes e, which
 * has arrived, off its wire and lets it go with the wire's bookkeeping,
 * marking its port (mark: one byte a port, zero, and left so; *marked
 * counts those marked) when the wire still holds a packet; net_cut_head
 * then makes e, the first packet kept of a marked port, its wire's head. */
void net_cut_gone(arb_sim *s, const struct cut_sent *e, uint8_t *mark, size_t *marked);
/* net.c: packet i, from another part, put on the wire of `port` (PCUT_IN)
 * until its arrival: its arrival event when the wire was empty, else the
 * one before it, when it arrives, schedules it. */
void net_cut_put(arb_sim *s, uint32_t port, uint32_t i);
void net_cut_head(arb_sim *s, const struct cut_sent *e, uint8_t *mark, size_t *marked);
/* An event for a port another part sends on (PCUT_IN: PFC's pause and
 * resume), to that part. */
void part_send_event(arb_sim *s, arb_time t, uint32_t target);
/* The part of the node at the far end of port p (0 when whole). */
uint32_t part_of_far(const arb_sim *s, uint32_t p);
/* Does this part run host h's events (h: any node, its state's part)? */
int part_owns_host(const arb_sim *s, uint32_t h);
/* A flow a completion callback adds to start at `start` would start inside
 * the window just run (its sender's part has run past it). */
int part_late_start(const arb_sim *s, arb_time start);
/* This part's number (0 when whole), and the collective operations over
 * every part (nothing to do when whole): every part must call them, in the
 * same order. */
uint32_t part_rank(const arb_sim *s);
int part_allsum(const arb_sim *s, uint64_t *v, size_t n);
int part_allmin(const arb_sim *s, uint64_t *v, size_t n);
/* Port counters as part 0 last received them, for a port another part
 * owns: 1 and *q, *ps set, or 0 (whole, or a port of this part). */
int part_port_mirror(const arb_sim *s, uint32_t port, uint32_t *q, arb_sim_port_stats *ps);
void part_free(arb_sim *s);
/* A partitioned run's capture (pcap.c, arb_sim_pcap_partition; part.c).
 * part_pcap_room: room for what each exchange brings part 0 (every part
 * makes it); part_count: the number of parts; part_send_hop: the switches
 * the packet that starts across the cut on `port` now had crossed there
 * (for its TTL), to the part that receives it, ahead of its record
 * (pcap_part_land gets them with the index of its copy there); part_flush:
 * an exchange (collective), so that what the parts hold reaches part 0.
 * pcap_part_frames: the frames this part took since the last exchange (a
 * part's records, in its order), emptied by pcap_part_clear; part 0 writes
 * d[r][0 .. n[r]) of every part r merged in the local order
 * (pcap_part_write). 0 or ARB_ENOMEM (part_send_hop, part_pcap_room). */
int part_pcap_room(arb_sim *s);
uint32_t part_count(const arb_sim *s);
int part_send_hop(const arb_sim *s, uint32_t port, uint32_t crossed);
int part_flush(arb_sim *s);
const uint8_t *pcap_part_frames(const arb_sim_pcap *c, size_t *n);
void pcap_part_clear(arb_sim_pcap *c);
void pcap_part_write(arb_sim_pcap *c, const uint8_t *const *d, const size_t *n, uint32_t parts);
void pcap_part_land(arb_sim *s, uint32_t i, uint32_t port, uint32_t crossed);
/* After an event of `target` that finished flows: they wait in part.c for
 * the window's end (s->done emptied). */
void part_take_done(arb_sim *s, uint32_t target);
/* Room for one more note in s->plog: 0, or ARB_ENOMEM. */
int part_live_grow(arb_sim *s);
/* The end of arb_sim_fabric_changed in a partitioned run (collective):
 * the whole fabric's live packets (this part had live_before before the
 * change), the lookahead of the links as they now are, and the records
 * the change made sent (the queues a failure flushed resume PFC pauses
 * across the cut). */
void part_changed(arb_sim *s, uint32_t live_before);
/* The whole fabric's counters after a partitioned run (NULL: whole, or
 * inside a run), its last event's time (active: the last that did
 * something). */
const arb_sim_stats *part_stats(const arb_sim *s);
arb_time part_now(const arb_sim *s, int active);
/* Between runs, every part's clock moved to `now` alike (sim_to_run_end). */
void part_moved_to(arb_sim *s, arb_time now);
/* sim.c: this process's own counters (arb_sim_get_stats of a whole run). */
void sim_local_stats(const arb_sim *s, arb_sim_stats *st);
/* sim.c: run this part's events up to `until` (one window); the
 * completions of the window are left in s->done for part.c. */
void sim_run_window(arb_sim *s, arb_time until);

/* rdma.c */
void rdma_on_packet(arb_sim *s, uint32_t host, uint32_t pkt);
uint32_t rdma_pull(arb_sim *s, uint32_t host);
void rdma_on_timer(arb_sim *s, uint32_t host);
void rdma_start(arb_sim *s, uint32_t conn);
void rdma_arm_host(arb_sim *s, uint32_t host);
void rdma_arm_at(arb_sim *s, uint32_t host, arb_time t);
int rdma_host_reserve(arb_sim *s, uint32_t host); /* room for one more connection; ARB_ENOMEM */
void rdma_host_add(arb_sim *s, uint32_t host, uint32_t conn); /* after rdma_host_reserve */
/*
 * A flow added from a completion callback to start later (its start past
 * the event that finished the other flow): it stays out of the host's lists,
 * where the host's timer would see it, until an event of its own at its
 * start (target SIM_START_TARGET) moves it into the round robin. What the
 * host does before then is the same whether the callback ran at once (one
 * process) or at the end of the window (a partitioned run's other parts
 * learn of the completion there). The per-host list is by (start, index).
 */
struct sim_defer {
    uint32_t *cid;
    uint32_t head, n, cap;
};
int rdma_defer(arb_sim *s, uint32_t host, uint32_t conn); /* 0, ARB_ENOMEM or ARB_ERANGE */
void rdma_on_start(arb_sim *s, uint32_t host);
void rdma_defer_free(arb_sim *s);
/* The event target of host h's deferred starts: after the ports' events,
 * the host timers, the Arbor timers and the ports' reorder releases. */
#define SIM_START_TARGET(s, h) (((s)->n_ports << 2) + 2 * (s)->n_hosts + (s)->n_ports + (h))
/* ... and of its Arbor ranks' deferred entries (arbor_defer_enter): after those. */
#define SIM_ENTER_TARGET(s, h) (SIM_START_TARGET(s, h) + (s)->n_hosts)
int rdma_conn_init(arb_sim *s, struct conn *c);
void rdma_conn_free(struct conn *c);
/* s->tm from the configuration and the fabric (arb_sim_timers), at arb_sim_new. */
void rdma_timers(arb_sim *s);

/* dcqcn.c */
void dcqcn_init(arb_sim *s, struct conn *c);
void dcqcn_on_cnp(arb_sim *s, struct conn *c);
void dcqcn_catch_up(arb_sim *s, struct conn *c);
void dcqcn_on_sent(arb_sim *s, struct conn *c, uint32_t wire_bytes);
int dcqcn_np_want_cnp(arb_sim *s, struct conn *c);

/* PORT_SCHED, busy until after `now`: whether a bound on its queue shows
 * that a packet of `bytes` queued at `now` is neither dropped, nor marked,
 * nor makes a new deepest queue (net.c, sched_clear: then the count of the
 * packets not yet started need not be brought up to date). The packets not
 * yet started all go out in [now, busy_until): their bytes are at most that
 * time at the port's rate (serialisation times are rounded up), a bound
 * that follows time where q_bytes does not. */
static inline int sched_bound_clears(const arb_sim *s, const struct sport *sp, arb_time now,
                                     uint32_t bytes)
{
    uint64_t u = ((sp->busy_until - now) * s->lk[sp->link].mbps + 7999999) / 8000000;
    if (u > sp->q_bytes) u = sp->q_bytes;
    return u + bytes <= s->cfg.queue_bytes && u + bytes <= sp->max_q &&
           !(s->cfg.ecn && u > s->cfg.ecn_kmin);
}

static inline void plist_push(const struct pool *p, struct plist *l, uint32_t i)
{
    pool_get(p, i)->next = PKT_NONE;
    if (l->tail == PKT_NONE)
        l->head = i;
    else
        pool_get(p, l->tail)->next = i;
    l->tail = i;
}

static inline uint32_t plist_pop(const struct pool *p, struct plist *l)
{
    uint32_t i = l->head;
    if (i != PKT_NONE) {
        l->head = pool_get(p, i)->next;
        if (l->head == PKT_NONE) l->tail = PKT_NONE;
    }
    return i;
}

#endif
