/** @file
 * arbor/sim.h - the packet-level fabric simulator.
 *
 * A simulation is a topology (topo.h), a routing choice made per packet per
 * hop, and hosts whose NICs run a RoCE-style transport. Time advances
 * through one event queue keyed by (time in picoseconds, insertion
 * sequence), so a run is a pure function of its inputs and seed.
 *
 * The model, per directed link (port):
 *   - an output queue with a byte capacity: drop-tail, RED-style ECN
 *     marking on enqueue (kmin, kmax, pmax) and PFC;
 *   - a serialiser: a packet of B wire bytes occupies the port for
 *     arb_time_tx(B, rate), then propagates for the link's delay; the next
 *     packet starts serialising when the previous one has left;
 *   - switches are store-and-forward: a packet is routed when its last bit
 *     has arrived, and routing takes no time.
 *   - ties: a packet whose start falls on the very instant a queue is
 *     looked at still counts as queued for what happens at that instant
 *     (arrivals, routing), and as sent for a reader between runs.
 *   How it runs: one pending arrival event per link (its first packet on
 *   the wire). A switch port without PFC knows a packet's start when the
 *   packet is queued (nothing can hold it back), so it schedules it then and
 *   has no other event; NICs, ports with PFC, and every port when the DRE
 *   is on (cfg.dre_period: it counts a packet as it starts) start their
 *   next packet at an end-of-transmission event.
 *   - PFC (lossless mode): a switch counts the bytes it holds per ingress
 *     port; above xoff it pauses the upstream port, below xon it resumes
 *     it; each PAUSE and RESUME takes the link's propagation delay to act.
 *     A paused port finishes the packet it is sending.
 *
 * Hosts: a host's NIC pulls the next packet from its connections when its
 * port is idle (round robin over connections that may send), so hosts
 * never queue data ahead of the wire. Acks and NACKs go ahead of data.
 *
 * Transports (per connection, one message of a given size):
 *   - go-back-N: the receiver accepts only the expected PSN; above it, it
 *     discards and sends one NACK naming the expected PSN per gap; the
 *     sender resends from there.
 *   - IRN: the receiver keeps out-of-order packets and answers each with a
 *     NACK carrying the cumulative ack and the received PSN; the sender
 *     keeps a bitmap of selectively acknowledged PSNs and resends only the
 *     holes below the highest one, then new data.
 *   A hole counts as lost once a packet sent irn_reorder after it has
 *   arrived, so packets merely overtaken on a faster path are not resent.
 *   Both have a retransmission timeout (after which go-back-N resends from
 *   the oldest unacknowledged PSN and IRN resends every hole), a retry
 *   limit (timeouts in a row without progress after which the sender gives
 *   up, as an InfiniBand QP does) and a window of packets in flight. IRN
 *   has two timeouts, rto_low while few packets are outstanding and
 *   rto_high otherwise, derived from the fabric unless set, and a tail-loss
 *   probe (RFC 8985's TLP): a sender that has nothing left to send and
 *   hears nothing for twice its smoothed round trip resends its highest
 *   PSN, whose answer exposes the holes below it (arb_sim_timers); a
 *   resend is found lost, as RACK finds it, once a packet sent after it
 *   has arrived.
 *   DCQCN (optional, either transport): a receiver answers CE-marked data
 *   with a CNP, at most one per flow per dcqcn_cnp_interval; the sender
 *   paces each connection at its current rate, cuts the rate on a CNP and
 *   raises it again by timer and byte counter (docs/transports.md).
 */
#ifndef ARBOR_SIM_H
#define ARBOR_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"
#include "arbor/cc.h"
#include "arbor/endpoint.h"
#include "arbor/switch.h"
#include "arbor/topo.h"
#include "arbor/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The RoCE transports the hosts run. */
typedef enum arb_transport { ARB_TRANSPORT_GBN = 0, ARB_TRANSPORT_IRN = 1 } arb_transport;

/** "gbn", "irn"; NULL outside the enum. */
const char *arb_transport_name(int t);
/** Parse "gbn" (also "roce", "go-back-n") or "irn"; ARB_ENOENT otherwise. */
int arb_transport_parse(const char *name);

/** The kinds of packet the simulator carries. */
typedef enum arb_sim_pkt_kind {
    ARB_SIM_DATA = 0, /**< transport data */
    ARB_SIM_ACK = 1,  /**< cumulative ack (psn = next expected) */
    ARB_SIM_NACK = 2, /**< psn = next expected; aux = PSN received (IRN) */
    ARB_SIM_CNP = 3,  /**< congestion notification */
    ARB_SIM_ARBOR = 4 /**< an Arbor packet (header: arb_sim_arbor_header); the rest are RoCE's */
} arb_sim_pkt_kind;

/** Packet flags. */
#define ARB_SIM_ECT 0x01  /**< ECN-capable transport */
#define ARB_SIM_CE 0x02   /**< congestion experienced */
#define ARB_SIM_RETX 0x04 /**< a retransmission */

/** What routing and taps see of a packet. */
typedef struct arb_sim_pkt_info {
    uint32_t src;     /**< source host index */
    uint32_t dst;     /**< destination host index */
    uint16_t sport;   /**< UDP source port */
    uint16_t dport;   /**< UDP destination port */
    uint32_t qp;      /**< destination QP */
    uint32_t conn;    /**< sender connection (flow) index */
    uint32_t psn;     /**< packet sequence number (data) or acked / expected PSN */
    uint32_t aux;     /**< NACK: the PSN received */
    uint16_t bytes;   /**< bytes on the wire */
    uint16_t payload; /**< payload bytes */
    uint8_t proto;    /**< IP protocol */
    uint8_t kind;     /**< arb_sim_pkt_kind */
    uint8_t flags;    /**< ARB_SIM_* */
    uint32_t lb; /**< the load balancer's in-band word (CONGA's overlay fields); 0 at the source */
    uint32_t index; /**< taps: the packet's index (arb_sim_arbor_header); routing: UINT32_MAX */
    /** Routing: a guess cfg.route_peek made for this very packet at this
     * very node a few events earlier, in the same failure generation of
     * the topology (arb_topo_failure_gen), and the token it set with it;
     * token 0: no guess (always so for taps and for a view built by hand). */
    uint32_t guess;
    uint64_t token; /**< see guess */
} arb_sim_pkt_info;

/** A packet-level simulator over one topology (opaque). */
typedef struct arb_sim arb_sim;

/** What a route callback returns when it could not allocate the state it
 * decides with (a switch's flowlet table, made at its first decision): the
 * packet is dropped and the run ends with ARB_ENOMEM. */
#define ARB_SIM_ROUTE_ENOMEM (UINT32_MAX - 1)

/**
 * The routing decision the simulator asks for at every switch hop: the
 * output port (a global port index of `node`) for packet fields `f`
 * arriving on `in_port`. Return ARB_TOPO_NONE when no port can reach the
 * destination (the packet is dropped and counted as unroutable), or
 * ARB_SIM_ROUTE_ENOMEM (the run ends with ARB_ENOMEM).
 * arb_sim_port_load gives a port's weight for adaptive choosers.
 */
typedef uint32_t (*arb_sim_route_fn)(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                                     const arb_sim_pkt_info *f, arb_time now);

/** The port `route` would pick for this packet, computed without changing
 * any state, if `before` other packets are routed at this node first (their
 * decisions may move a counter); ARB_TOPO_NONE when it cannot tell. It may
 * set *token (left 0 otherwise) to what `route` needs to check the guess
 * against its state when the packet comes back with it (f->guess, f->token):
 * a router that finds its state as the guess assumed may return the guess
 * instead of deciding again, and must return exactly what it would have
 * decided. */
typedef uint32_t (*arb_sim_peek_fn)(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                                    const arb_sim_pkt_info *f, uint32_t before, uint64_t *token);

/** The tokens of a guess whose check every router shares (others are the
 * router's own): ARB_SIM_TOKEN_PURE, a decision that reads no state of the
 * router (a routing engine that does not adapt, a lone candidate);
 * ARB_SIM_TOKEN_RR | c, round robin when the node's counter reads c. */
#define ARB_SIM_TOKEN_PURE UINT64_C(1)
#define ARB_SIM_TOKEN_RR (UINT64_C(1) << 32) /**< see ARB_SIM_TOKEN_PURE */

struct arb_route; /**< route.h */

/** The decisions the simulator made by a router's rule (arb_sim_route_fast.made). */
typedef struct arb_sim_rule_counts {
    uint64_t decisions; /**< every one */
    uint64_t choices;   /**< among m > 1 ports (round robin: rr[node] advanced) */
    uint64_t guessed;   /**< a guess made ahead (as route_peek's) taken back */
} arb_sim_rule_counts;

/**
 * Optional (cfg.route_fast): decisions the event loop may guess inline,
 * without calling route_peek, because the router makes them by a rule the
 * simulator knows. On a fabric whose failure generation
 * (arb_topo_failure_gen) is plain_gen, with m minimal next hops
 * first, first + stride, ... at a switch (arb_pgft_next_range):
 *   rr:   the router sprays round robin: port first + stride x (rr[node] % m),
 *         then rr[node] advances (m > 1); token ARB_SIM_TOKEN_RR | counter;
 *   ecmp: the router picks first + stride x (arb_route_hash(ecmp, node, key) % m);
 *         token ARB_SIM_TOKEN_PURE.
 * At most one of rr and ecmp is set. The router owns the structure and
 * keeps it current (plain_gen UINT64_MAX: the rule does not hold now); it
 * must take back the guesses it describes as route_peek's. A wrapper around
 * `route` that does not pass f on unchanged must clear it with route_peek.
 *
 * With `made` set, the simulator also decides by the rule itself: while
 * cfg.route and cfg.route_ctx are `route` and `ctx` (no wrapper around
 * them), cfg.inband is unset, the rule holds and gives a port, a switch
 * hop makes no packet view and no call of `route`; the simulator counts
 * the decision in *made and moves the router's state as route would have
 * (rr[node] advances when m > 1).
 */
typedef struct arb_sim_route_fast {
    uint32_t *rr;                 /**< round robin: the counter of every node; else NULL */
    const struct arb_route *ecmp; /**< ECMP: the router whose hash decides; else NULL */
    uint64_t plain_gen;           /**< where the rule holds; UINT64_MAX: nowhere */
    /** Optional: the simulator decides by the rule itself and counts here
     * (see above); NULL: it only guesses. */
    arb_sim_rule_counts *made;
    arb_sim_route_fn route; /**< the route callback whose decisions the rule makes */
    void *ctx;              /**< that callback's route_ctx */
} arb_sim_route_fast;

/** Round robin over m > 1 ports first, first + stride, ... at `node`,
 * `before` decisions on: the port, and its token (the rule of
 * arb_sim_route_fast.rr, for routers that implement it). */
static inline uint32_t arb_sim_rr_pick(const uint32_t *rr, uint32_t node, uint32_t first,
                                       uint32_t stride, unsigned m, uint32_t before,
                                       uint64_t *token)
{
    uint32_t c = rr[node] + before;
    *token = ARB_SIM_TOKEN_RR | c;
    return first + stride * (c % m);
}

/** Called when flow `flow` has received its last byte (in order), after
 * the event that finished it. New flows may be added from inside the call
 * (a workload's next step). */
typedef void (*arb_sim_done_fn)(void *ctx, arb_sim *sim, uint32_t flow, arb_time now);

/* The same signature for on_flow_sent: flow `flow` has put the last of its
 * packets on the wire for the first time (every PSN has left the sender
 * once; retransmissions may follow). Called after the event, before the
 * completions of that event, so a sender that keeps a queue pair's
 * messages in order can post the next one back to back. */

/** Called for every packet that starts serialising on `port` (taps,
 * captures), with `now` the time its first bit leaves. A switch port
 * without PFC reports a packet when it accepts it (its start is then
 * known), so calls come in time order per port but not across ports. */
typedef void (*arb_sim_tap_fn)(void *ctx, const arb_sim *sim, uint32_t port,
                               const arb_sim_pkt_info *f, arb_time now);

/** Called at every switch hop after the routing decision (out_port is the
 * chosen port) when set: returns the packet's new in-band word `lb`, as an
 * overlay header a load balancer rewrites hop by hop (CONGA, lb.h). */
typedef uint32_t (*arb_sim_inband_fn)(void *ctx, const arb_sim *sim, uint32_t node,
                                      uint32_t in_port, uint32_t out_port,
                                      const arb_sim_pkt_info *f, arb_time now);

/** A simulator's configuration (arb_sim_config_default). */
typedef struct arb_sim_config {
    uint64_t seed;           /**< the run's seed (default 1) */
    uint32_t mtu;            /**< payload bytes per data packet (default 4096) */
    uint32_t hdr_bytes;      /**< wire bytes a data packet adds to its payload:
                                Ethernet, IPv4, UDP, BTH, ICRC, FCS, preamble and
                                inter-frame gap (default 82) */
    uint32_t ctrl_bytes;     /**< wire bytes of an ack / NACK / CNP (default 86) */
    uint64_t queue_bytes;    /**< output queue capacity per port (default 2 MiB) */
    int ecn;                 /**< mark ECN (default 1) */
    uint32_t ecn_kmin;       /**< bytes (default 100 KB) */
    uint32_t ecn_kmax;       /**< bytes (default 400 KB) */
    double ecn_pmax;         /**< mark probability at kmax (default 0.2) */
    int pfc;                 /**< lossless mode (default 0) */
    uint32_t pfc_xoff;       /**< bytes held per ingress port that trigger PAUSE (default 512 KB) */
    uint32_t pfc_xon;        /**< bytes below which RESUME is sent (default 256 KB) */
    arb_transport transport; /**< default go-back-N */
    arb_time rto;            /**< go-back-N's retransmission timeout (default 1 ms);
                                IRN's are rto_low and rto_high */
    /** IRN's two retransmission timeouts ("Revisiting Network Support for
     * RDMA", SIGCOMM 2018): rto_low while at most rto_low_n packets are
     * outstanding (highest PSN sent + 1 - oldest unacknowledged), rto_high
     * while more are. 0 (the default) derives each from the fabric when
     * the simulator is made (arb_sim_timers says how; docs/transports.md,
     * "Timeouts and the tail-loss probe"); equal values are one fixed
     * timeout. rto_low may not exceed rto_high. */
    arb_time rto_low;
    arb_time rto_high;  /**< see rto_low */
    uint32_t rto_low_n; /**< see rto_low (default ARB_SIM_RTO_LOW_N; 0: rto_high always) */
    /** RACK-TLP (RFC 8985): tail-loss probes and, for IRN, lost resends
     * found by the send time of a later packet that arrived. 1 on, 0 off,
     * ARB_SIM_TLP_AUTO (the default) on for IRN and off for go-back-N
     * (docs/transports.md says why). */
    int tlp;
    /** Retransmission timeouts in a row without the cumulative ack moving
     * after which a connection's sender gives up, as InfiniBand's retry
     * count (retry_cnt) ends a QP with a "retry exceeded" error: timeouts
     * 1 .. retry_limit resend, timeout retry_limit + 1 stops the sender
     * (arb_sim_flow_result.gave_up). 0 = never give up. Default
     * ARB_SIM_RETRY_LIMIT (docs/transports.md says why it is above IB's 7). */
    uint32_t retry_limit;
    uint32_t window;      /**< packets in flight per connection; 0 = no limit (default 0) */
    uint32_t ack_every;   /**< the receiver acks every N-th in-order packet (default 1) */
    arb_time irn_reorder; /**< IRN: a hole is lost once a packet sent this much
                             later has arrived (default 0: any later packet,
                             as the IRN paper's NACK-driven recovery) */
    /** DCQCN (docs/transports.md has the algorithm and the sources of the
     * defaults): receivers send a CNP for CE-marked data, senders pace
     * each connection at a rate they cut on CNPs and raise by timer and
     * byte counter. Off by default. */
    int dcqcn;
    arb_time dcqcn_cnp_interval; /**< NP: at most one CNP per flow per interval (50 us) */
    double dcqcn_g;              /**< alpha gain g (1/256) */
    arb_time dcqcn_alpha_timer;  /**< K: alpha decays once per K without a CNP (55 us) */
    arb_time dcqcn_rate_timer;   /**< T: rate-increase timer (55 us) */
    uint64_t dcqcn_byte_counter; /**< B: rate-increase byte counter, wire bytes (10 MB) */
    uint32_t dcqcn_f;            /**< F: fast-recovery steps before additive increase (5) */
    uint64_t dcqcn_rai;          /**< R_AI: additive increase, bits/s (40 Mb/s) */
    uint64_t dcqcn_rhai;         /**< R_HAI: hyper increase, bits/s (400 Mb/s) */
    uint64_t dcqcn_min_rate;     /**< the lowest rate a cut reaches, bits/s (100 Mb/s) */
    arb_sim_route_fn route;      /**< required */
    void *route_ctx;             /**< passed to route; borrowed */
    /** Optional: a guess at the port `route` will pick (arb_sim_peek_fn).
     * Only a hint, never a decision: the event loop fetches that port's
     * state into the cache a few events before the packet is routed, so a
     * wrong answer costs time, not correctness, and hands the guess back
     * to `route` with the packet when it set a token (a wrapper around
     * `route` that does not pass f on unchanged must clear route_peek). */
    arb_sim_peek_fn route_peek;
    void *peek_ctx; /**< passed to route_peek; borrowed */
    /** Optional: the rule the event loop may apply in route_peek's place
     * (arb_sim_route_fast; borrowed, read live). lb.h sets it. */
    const arb_sim_route_fast *route_fast;
    arb_sim_done_fn on_flow_done; /**< optional */
    void *done_ctx;               /**< passed to on_flow_done; borrowed */
    arb_sim_done_fn on_flow_sent; /**< optional: all data sent once (ctx: sent_ctx) */
    void *sent_ctx;               /**< passed to on_flow_sent; borrowed */
    arb_sim_tap_fn tap;           /**< optional */
    void *tap_ctx;                /**< passed to tap; borrowed */
    /** Optional: sees every decision of the Arbor switches' engines
     * (switch.h; its event's node is the switch's node id). */
    arb_switch_tap switch_tap;
    void *switch_tap_ctx;     /**< passed to switch_tap; borrowed */
    arb_sim_inband_fn inband; /**< optional (lb.h sets it for CONGA) */
    void *inband_ctx;         /**< passed to inband; borrowed */
    arb_time dre_period;      /**< DRE (CONGA's link-utilisation estimator): every port
                                 counts the bytes it transmits (a switch port without
                                 PFC when it accepts them) and multiplies the count
                                 by (1 - dre_alpha) every dre_period; 0 = off (default) */
    double dre_alpha;         /**< in (0, 1] (default 0.1) */
    arb_logger log;           /**< where the simulator reports (none by default) */
    /** Random loss: every packet is lost on each link it crosses with this
     * probability (0 = none, the default). Whether the n-th packet a port
     * sends is lost is a hash of (seed, port, n), so the other draws of a
     * run do not move and the losses do not depend on the order in which
     * ports are handled. A lost packet occupies the link and is dropped
     * where it arrives (counted in drops and lost). */
    double loss;
    /** Duplication and reordering, drawn like loss (a hash of seed, port and
     * packet number, each with its own salt): a packet is delivered twice
     * (the copy right after it) with probability `dup`, and held
     * `reorder_delay` where it arrives, so that the packets behind it
     * overtake it, with probability `reorder`; both in [0, 1), 0 = none
     * (the default). arb_topo_set_link_dup / _reorder give a link its own. */
    double dup;
    double reorder;         /**< see dup */
    arb_time reorder_delay; /**< default 10 us */
    /**
     * 1 (default), the local order: events of one time run in the order of
     * what they happen to (a port, a host's timer), and each port draws its
     * ECN marks from its own stream; every part of a partitioned run can
     * compute that order alone (arb_sim_partition needs it), so a run's
     * figures do not depend on how many parts computed it. 0, the global
     * order: events of one time run in the order they were scheduled, and
     * ECN marks draw from one stream for the run; its figures differ from
     * the local order's as another seed's would (docs/partition.md).
     */
    int local_order;
} arb_sim_config;

/** The default of arb_sim_config.retry_limit. */
#define ARB_SIM_RETRY_LIMIT 255
/** The default of arb_sim_config.rto_low_n: the IRN paper's N. */
#define ARB_SIM_RTO_LOW_N 3
/** arb_sim_config.tlp: probes on for IRN, off for go-back-N (the default). */
#define ARB_SIM_TLP_AUTO (-1)

/** Fill *cfg with the defaults its fields name (no route function). */
void arb_sim_config_default(arb_sim_config *cfg);

/**
 * Make a simulator over `topo` (borrowed; it must outlive the simulator;
 * failures marked in it are honoured: a failed port carries nothing). The
 * links' rates, delays and failures are read now and by
 * arb_sim_fabric_changed, not as the run goes. Errors: ARB_EINVAL (no route
 * function, mtu 0 or above 65535 - hdr_bytes, rto 0, rto_low above
 * rto_high, tlp not 0, 1 or ARB_SIM_TLP_AUTO, xon >= xoff; with dcqcn: g
 * outside (0, 1], a zero timer, byte counter or minimum rate), ARB_ERANGE
 * (more than 65,536 different pairs of link rate and delay, or too many
 * ports), ARB_ENOMEM.
 */
int arb_sim_new(arb_sim **out, const arb_topo *topo, const arb_sim_config *cfg);
/** Free the simulator, its flows and Arbor jobs (NULL is ignored). */
void arb_sim_free(arb_sim *s);

/** The topology the simulator was made over. */
const arb_topo *arb_sim_topo(const arb_sim *s);

/**
 * The timers a simulator's connections run with (arb_sim_get_timers): the
 * configuration's, with what it left at 0 derived from the fabric when the
 * simulator was made (docs/transports.md, "Timeouts and the tail-loss
 * probe", has the reasons):
 *   - loop: the unloaded round trip of the fabric's longest path, 2h hops
 *     out (h switch levels) with a full data packet and 2h back with an
 *     ack, each hop the largest delay + serialisation of any link;
 *   - rto_low = 4 x loop: a probe comes by 2 x loop and is answered a loop
 *     later, and one loop more is left for queueing;
 *   - rto_high = rto_low + a full switch queue (cfg.queue_bytes), drained
 *     at the slowest link, at each of the longest path's 2h - 1 switch
 *     ports: the longest a packet that is not dropped can be held;
 *   - the probe timeout, 2 x the connection's smoothed round trip, is kept
 *     within [pto_min, pto_max] = [loop, rto_high] (and a probe is armed
 *     only when it comes before the timeout).
 * Go-back-N runs with rto_low = rto_high = cfg.rto. The links' later
 * changes (arb_sim_fabric_changed) do not move them.
 */
typedef struct arb_sim_timers {
    arb_time loop;      /**< the longest path's unloaded round trip */
    arb_time rto_low;   /**< the timeout while at most rto_low_n packets are outstanding */
    arb_time rto_high;  /**< the timeout while more are */
    uint32_t rto_low_n; /**< as configured */
    int tlp;            /**< 1: tail-loss probes on */
    arb_time pto_min;   /**< the probe timeout's floor */
    arb_time pto_max;   /**< and its ceiling */
} arb_sim_timers;

/** The timers of s into *t. */
void arb_sim_get_timers(const arb_sim *s, arb_sim_timers *t);

/** Bytes queued at a port (for adaptive routing). */
uint32_t arb_sim_port_queue(const arb_sim *s, uint32_t port);

/** What an adaptive chooser weighs a port by: its queued bytes, plus the
 * queue capacity (cfg.queue_bytes) while PFC has paused it (a paused port
 * looks empty but carries nothing). `port` must be a port of the fabric. */
uint64_t arb_sim_port_load(const arb_sim *s, uint32_t port);

/** The DRE estimate of a port at the current time, in bytes (0 when the DRE
 * is off or the port is out of range). At a steady rate R it approaches
 * R x dre_period / dre_alpha. */
uint64_t arb_sim_port_dre(const arb_sim *s, uint32_t port);

/** The most packets a flow may have (arb_sim_add_flow): 2^31 - 1. */
#define ARB_SIM_FLOW_MAX_PKTS UINT32_C(2147483647)

/**
 * Add a flow: `bytes` (> 0) from host src to host dst, starting at `start`,
 * on UDP source port sport with destination QP qp. *id (may be NULL)
 * receives its index (flows are numbered from 0 in the order added).
 * Added from an on_flow_done or on_flow_sent callback to start later than
 * the event that called it, the flow starts by an event of its own at
 * `start` and its host sees it only then (what the host does meanwhile
 * does not depend on when the callback ran: a partitioned run's parts run
 * it at the end of a window). Errors: ARB_EINVAL (a host out of range,
 * src == dst, bytes 0), ARB_ERANGE (more than ARB_SIM_FLOW_MAX_PKTS packets
 * of the configuration's mtu), ARB_ENOMEM, ARB_ESTATE (a partitioned run's
 * callback starting a flow inside the window just run).
 */
int arb_sim_add_flow(arb_sim *s, uint32_t src, uint32_t dst, uint64_t bytes, arb_time start,
                     uint16_t sport, uint32_t qp, uint32_t *id);

/**
 * Run until no event is left or the next one is later than `until`.
 * Returns 0, or ARB_ENOMEM / ARB_ERANGE when the run cannot go on.
 */
int arb_sim_run(arb_sim *s, arb_time until);

/** The simulated time of the last event run, or of the last change made
 * between runs (arb_sim_fabric_changed, arb_sim_arbor_reboot: the end of
 * the run before it) if that is later. */
arb_time arb_sim_now(const arb_sim *s);

/**
 * The simulated time of the last event that did something: arb_sim_now
 * less any host timer that fired after it and found nothing to do (the
 * timeout of a flow acknowledged since it was armed). What a run's length
 * is reported as.
 */
arb_time arb_sim_last_activity(const arb_sim *s);

/**
 * The time of the earliest event the simulator had left when the last
 * arb_sim_run returned: ARB_TIME_NEVER when it had none, nothing being
 * left to happen unless flows are added or the fabric changes (what was
 * added since that run is not counted); 0 before the first run. A
 * partitioned run's is the earliest over every part, in every part.
 */
arb_time arb_sim_next_event(const arb_sim *s);

/**
 * From inside an on_flow_done or on_flow_sent callback: make the
 * arb_sim_run under way return once every event due by t has run (t below
 * the current time counts as the current time), so that its caller can act
 * at t -- a workload's timer. Only ever brings the run's end closer; the
 * next arb_sim_run starts afresh. Outside a run it does nothing.
 */
void arb_sim_stop_at(arb_sim *s, arb_time t);

/** One flow's outcome (arb_sim_flow). */
typedef struct arb_sim_flow_result {
    uint32_t src;                /**< source host */
    uint32_t dst;                /**< destination host */
    uint64_t bytes;              /**< payload bytes */
    arb_time start;              /**< when it started */
    arb_time finish;             /**< last byte received in order; ARB_TIME_NEVER if not yet */
    uint64_t retx_bytes;         /**< payload bytes sent more than once */
    uint64_t ooo_pkts;           /**< packets that arrived above the expected PSN */
    uint64_t timeouts;           /**< retransmission timeouts */
    uint64_t tlp_probes;         /**< tail-loss probes sent */
    uint32_t reorder_peak_bytes; /**< IRN: most out-of-order payload held */
    uint64_t cnps;               /**< DCQCN: CNPs the sender received */
    uint64_t rate_cuts;          /**< DCQCN: rate cuts */
    uint64_t min_rate;           /**< DCQCN: lowest sending rate, bits/s (line rate if never cut) */
    uint16_t sport;              /**< its UDP source port (arb_sim_add_flow) */
    uint32_t qp;                 /**< its destination QP */
    /** When its sender gave up, its retry limit exceeded (cfg.retry_limit);
     * ARB_TIME_NEVER if it did not. It sends nothing more and heeds no
     * answer; what it had sent still arrives, and the receiver, which is
     * not told, may yet finish it (finish set too). */
    arb_time gave_up;
} arb_sim_flow_result;

/** Flow `id`'s outcome into *r. Errors: ARB_EINVAL for an id out of range. */
int arb_sim_flow(const arb_sim *s, uint32_t id, arb_sim_flow_result *r);
/** The flows added so far. */
uint32_t arb_sim_n_flows(const arb_sim *s);

/** A run's counters (arb_sim_get_stats). */
typedef struct arb_sim_stats {
    uint64_t events;            /**< events run */
    uint64_t packet_hops;       /**< packets that crossed one link */
    uint64_t pkts_sent;         /**< packets hosts put on the wire (data + control) */
    uint64_t pkts_delivered;    /**< packets that reached their destination host */
    uint64_t data_pkts_sent;    /**< data packets hosts sent */
    uint64_t bytes_sent;        /**< wire bytes hosts sent */
    uint64_t payload_sent;      /**< data payload bytes sent, retransmissions included */
    uint64_t payload_delivered; /**< data payload bytes accepted in order by receivers */
    uint64_t retx_bytes;        /**< payload bytes sent more than once */
    uint64_t drops;             /**< queue overflows and random losses */
    uint64_t lost;          /**< of which lost on links (cfg.loss; a link that failed under them) */
    uint64_t drop_bytes;    /**< wire bytes of the drops */
    uint64_t duplicated;    /**< packets a link delivered twice (cfg.dup) */
    uint64_t reordered;     /**< packets a link held back (cfg.reorder) */
    uint64_t unroutable;    /**< packets no port could carry */
    uint64_t ecn_marks;     /**< packets marked CE */
    uint64_t pfc_pauses;    /**< PAUSE frames sent */
    arb_time pfc_paused_ps; /**< summed over ports: time spent paused */
    uint64_t ooo_pkts;      /**< packets that arrived above the expected PSN */
    uint64_t timeouts;      /**< retransmission timeouts */
    uint64_t tlp_probes;    /**< tail-loss probes sent (arb_sim_config.tlp) */
    uint64_t cnps_sent;     /**< DCQCN: CNPs receivers sent */
    uint64_t cnps_received; /**< DCQCN: CNPs that reached their sender */
    uint64_t rate_cuts;     /**< DCQCN: rate cuts (one per CNP received) */
    uint32_t flows_done;    /**< flows finished */
    uint32_t flows_gave_up; /**< flows whose sender gave up (cfg.retry_limit) */
    uint32_t in_flight;     /**< packets alive at the end (queued or on a wire) */
    uint32_t pool_peak;     /**< most packets alive at once */
    uint32_t pool_size;     /**< packets the pool holds */
    uint32_t max_queue_bytes; /**< deepest output queue seen */
} arb_sim_stats;

/** Copy the run's counters into *st. */
void arb_sim_get_stats(const arb_sim *s, arb_sim_stats *st);

/** Per-port counters for reports (arb_sim_port). */
typedef struct arb_sim_port_stats {
    uint64_t tx_bytes;  /**< wire bytes transmitted */
    uint64_t tx_pkts;   /**< packets transmitted */
    uint64_t drops;     /**< packets dropped at the port */
    uint32_t max_queue; /**< deepest queue, bytes */
    arb_time paused_ps; /**< time spent paused by PFC */
} arb_sim_port_stats;

/** Port `port`'s counters into *ps. Errors: ARB_EINVAL for a bad port. */
int arb_sim_port(const arb_sim *s, uint32_t port, arb_sim_port_stats *ps);

/* ------------------------------------------------------------------ */
/* Partitioned runs                                                     */
/* ------------------------------------------------------------------ */

/**
 * How the parts of a partitioned run talk to each other: every process
 * builds the same simulator (same topology, configuration and flows) and
 * runs the events of its own part; these collective operations, which the
 * caller implements (the `arbor` command over MPI), carry what crosses the
 * cut. Every process calls them in the same order. The library neither
 * prints nor reads a clock through them; the caller may time them (the
 * time spent waiting for the other parts).
 */
typedef struct arb_sim_part_ops {
    void *ctx;        /**< handed to each operation */
    uint32_t rank;    /**< this process's part, 0 .. n_ranks - 1 */
    uint32_t n_ranks; /**< parts in all, >= 1 */
    /**
     * All-to-all: send[r][0 .. send_len[r]) goes to part r (send[rank]
     * included, ignored); on return *recv holds, one after the other in
     * part order, what every part sent to this one, recv_len[r] bytes from
     * part r, in a block the operation owns, which must stay valid until
     * its next call (the simulator neither frees it nor keeps it past
     * that: one block reused, a window after another, costs no allocation
     * per window). Returns 0 or a negative ARB_E* code (the run stops with
     * it).
     */
    int (*alltoall)(void *ctx, const uint8_t *const *send, const size_t *send_len, uint8_t **recv,
                    size_t *recv_len);
    /** v[0 .. n) replaced by its element-wise minimum over every part. 0 or ARB_E*. */
    int (*allmin)(void *ctx, uint64_t *v, size_t n);
    /** v[0 .. n) replaced by its element-wise sum over every part. 0 or ARB_E*. */
    int (*allsum)(void *ctx, uint64_t *v, size_t n);
} arb_sim_part_ops;

/**
 * Split the fabric: node v (host or switch) belongs to part node_part[v]
 * (copied). Call right after arb_sim_new, before flows are added, with the
 * same arguments in every process. From then on arb_sim_run is collective:
 * it runs in windows of the smallest propagation delay of a link whose
 * ends are in different parts (the lookahead: nothing one part does can
 * reach another sooner), exchanging the packets that cross the cut between
 * windows, and returns, in every part, the whole fabric's counters
 * (arb_sim_get_stats, arb_sim_now, arb_sim_last_activity); each part
 * reads its own ports (arb_sim_port, arb_sim_port_queue), and part 0 every
 * port after arb_sim_part_ports or arb_sim_part_collect. Completions
 * (on_flow_done, on_flow_sent) are reported in every part, at the end of
 * the window they fall in, with their own times, in the order the
 * sequential run reports them (at once when there is one part); the
 * callbacks may add flows that start after the window, and set timers
 * (arb_sim_stop_at) after it: the run ends at the earliest (a
 * completion's time plus the lookahead or more: otherwise ARB_ESTATE, the
 * run failing). arb_sim_part_collect gives part 0 every flow's figures.
 * The figures equal those of the same simulator run whole. Not supported
 * (ARB_EINVAL, err naming it): the global order (cfg.local_order must be
 * 1, the default: the figures are those of the whole simulator in that
 * order). A tap
 * (cfg.tap) sees the packets that start on its own part's ports only, in
 * the local order; what it counts the caller merges over the parts (a
 * capture: arb_sim_pcap_partition). The
 * fabric may change between runs (arb_sim_fabric_changed,
 * arb_sim_arbor_reboot: collective then, every part changing its topology
 * alike and calling them in the same order). Arbor jobs added after it run
 * each host's engines in the host's part and each switch's aggregators in
 * the switch's; what the
 * jobs count is merged over the parts at the end of each run (the ranks'
 * done times, engines finished, failure, counters, live slots) or when
 * read (arb_sim_arbor_result_get, arb_sim_arbor_job_result: collective
 * then). Deferred jobs and on_rank_done work as in one process when every
 * part adds and enters the same jobs in the same order: a rank's done is
 * reported in every part at the end of the window it falls in, with the
 * flows' completions, and an entry a callback makes must start after that
 * window (arb_sim_arbor_enter). Errors: ARB_EINVAL (bad ops or part numbers, a part of a cut link
 * with zero delay), ARB_ESTATE (flows added already, or partitioned
 * already), ARB_ENOMEM; err gets a line naming the problem.
 */
int arb_sim_partition(arb_sim *s, const arb_sim_part_ops *ops, const uint32_t *node_part, char *err,
                      size_t errlen);

/**
 * Cut a fabric into n_parts by subtree: host h goes to part
 * h * n_parts / hosts (contiguous blocks, so pods and leaves stay whole
 * where the blocks allow), a switch to the part of every host below it
 * when they share one, and the switches whose hosts span parts (spines,
 * cores) round robin per level. node_part holds one entry per node.
 * Errors: ARB_EINVAL (no parts, more parts than hosts).
 */
int arb_sim_part_subtrees(const arb_topo *topo, uint32_t n_parts, uint32_t *node_part);

/**
 * Collective, for a partitioned simulator: part 0 gets every flow's figures
 * (arb_sim_flow) from the parts holding its sender and its receiver, and
 * every port's counters (as arb_sim_part_ports). Call after the last
 * arb_sim_run. 0 (also unpartitioned) or an ARB_E* code from the
 * operations, or ARB_ENOMEM.
 */
int arb_sim_part_collect(arb_sim *s);

/**
 * Collective, for a partitioned simulator, between runs: part 0 gets the
 * counters of every port the other parts send on, as they stand (what
 * arb_sim_port and arb_sim_port_queue then give it for those ports; a
 * port's own part reads it at any time). Only the ports that changed since
 * the last call travel. Every part must call it, at the same points (the
 * scenario runner does before each sample). 0 (also unpartitioned),
 * ARB_ESTATE during a run, an ARB_E* code from the operations, or
 * ARB_ENOMEM.
 */
int arb_sim_part_ports(arb_sim *s);

/** What a partitioned run did (arb_sim_part_figures). */
typedef struct arb_sim_part_info {
    uint32_t rank;      /**< this part */
    uint32_t n_ranks;   /**< parts in all */
    arb_time lookahead; /**< the window: smallest delay of a cut link (ARB_TIME_NEVER: no cut) */
    uint64_t windows;   /**< windows run */
    uint64_t cut_links; /**< directed links from this part to another */
    uint64_t sent;      /**< packets this part sent across the cut */
    uint64_t received;  /**< packets it received across the cut */
    uint64_t events;    /**< events this part ran */
    uint64_t nodes;     /**< nodes it holds */
} arb_sim_part_info;

/**
 * A partitioned simulator stops every part's runs after the event of time
 * t and target `target` in the local order (events of one time run by
 * target): no part runs a later one (the run is to end there: the event
 * is one that fails it, whose error reaches every part). For a run
 * again of one that failed in one part, whose other parts ran on to the
 * end of that window before they learnt of it (arb_sim_arbor_failure_point
 * names the event): the same run stopped there gives the figures of the
 * one process, which stops at the failure. Call before the runs.
 * ARB_EINVAL: not partitioned, or inside a run.
 */
int arb_sim_part_stop_after(arb_sim *s, arb_time t, uint32_t target);

/** This part's figures; ARB_EINVAL when the simulator is not partitioned. */
int arb_sim_part_figures(const arb_sim *s, arb_sim_part_info *out);

/* ------------------------------------------------------------------ */
/* Packet capture                                                       */
/* ------------------------------------------------------------------ */

/**
 * A pcap file (nanosecond timestamps, LINKTYPE_ETHERNET) of every packet
 * that starts serialising on chosen ports, written as the RoCEv2 frame it
 * stands for: Ethernet (the captured link's ends: the sending node's MAC,
 * then its peer's), IPv4 (10.0.0.0 + host index, ECN bits from the
 * packet's flags, TTL 64 where the frame was made and one less per switch
 * crossed), UDP to port 4791 from the flow's source port, a BTH
 * (data: RC SEND first/middle/last/only by PSN; ack and NACK: RC
 * Acknowledge with an AETH, syndrome ACK or NAK "PSN sequence error"; CNP:
 * opcode 0x81 with its 16 reserved bytes), the payload as zero bytes, and
 * a 4-byte ICRC field (written as zero, not computed). The timestamp is
 * the simulated time the first bit leaves, truncated to the nanosecond.
 * Arbor packets (arb_sim_arbor_add) are written as Ethernet/IPv4/UDP
 * frames to the channel's UDP port from arb_subchannel_sport(subchannel)
 * (wire.h) with their header encoded by
 * arb_hdr_encode and the payload as zero bytes of its length; a packet for
 * a whole tree goes to the group address 239.0.C.S (channel C, subchannel
 * S). docs/transports.md lists every field.
 */
typedef struct arb_sim_pcap arb_sim_pcap;

/**
 * Create `path` for the ports ports[0..n_ports) (global port indices;
 * n_ports 0: every port). Frames longer than `snaplen` bytes (0: 65535)
 * are cut to it in the file and keep their full length in the record.
 * Errors: ARB_EINVAL (NULL path or out, ports NULL with n_ports > 0),
 * ARB_EIO (the file cannot be created), ARB_ENOMEM.
 */
int arb_sim_pcap_open(arb_sim_pcap **out, const char *path, const uint32_t *ports, unsigned n_ports,
                      uint32_t snaplen);

/**
 * A capture as arb_sim_pcap_open makes it, but without a file: for a
 * partitioned simulator, whose part 0 writes the file
 * (arb_sim_pcap_partition). It holds the frames it takes until then.
 * Errors: ARB_EINVAL (out NULL, ports NULL with n_ports > 0), ARB_ENOMEM.
 */
int arb_sim_pcap_new(arb_sim_pcap **out, const uint32_t *ports, unsigned n_ports, uint32_t snaplen);

/**
 * Collective, for a partitioned simulator (arb_sim_partition), before its
 * first run: `cap`, made by arb_sim_pcap_new alike in every part (the same
 * ports and snaplen) and installed in the configuration the simulator was
 * made with (arb_sim_pcap_install), becomes the capture of the whole
 * fabric, written to `path`, which part 0 alone creates. Each part builds
 * the frames of the ports it sends on (a packet that starts across the cut
 * takes what its TTL needs to the part that receives it) and hands them to
 * part 0 with every exchange between the parts (the end of every window),
 * where they are merged in the order the whole simulator takes them in the
 * local order (cfg.local_order: events of one time by target, one target's
 * in insertion order) and written: the same file, byte for byte, as
 * arb_sim_pcap_open's in the same simulator run whole. Part 0 holds one
 * window's frames of every part at most. arb_sim_pcap_close is then
 * collective too, and must come before arb_sim_free. Errors, alike in every
 * part: ARB_EIO (part 0 could not create the file), ARB_ENOMEM, ARB_EINVAL
 * (a NULL argument), ARB_ESTATE (the simulator is not partitioned or has a
 * capture already, or `cap` has a file or is another simulator's), or an
 * error of the operations.
 */
int arb_sim_pcap_partition(arb_sim_pcap *cap, arb_sim *sim, const char *path);

/** The tap (arb_sim_tap_fn) with ctx = the capture. */
void arb_sim_pcap_tap(void *ctx, const arb_sim *sim, uint32_t port, const arb_sim_pkt_info *f,
                      arb_time now);

/** Set cfg->tap to the capture; a tap already in cfg keeps being called
 * (after the capture writes its frame). Call before arb_sim_new. */
void arb_sim_pcap_install(arb_sim_pcap *cap, arb_sim_config *cfg);

/** Frames written so far. */
uint64_t arb_sim_pcap_count(const arb_sim_pcap *cap);

/** Flush and close the file and free the capture; NULL is ignored.
 * Returns 0, or ARB_EIO when a write failed at any point (ARB_ENOMEM when
 * the capture ran out of memory). For a partitioned simulator's capture
 * (arb_sim_pcap_partition): collective, before arb_sim_free; what the parts
 * still hold goes to part 0 first, and every part returns part 0's result
 * (or another part's failure). */
int arb_sim_pcap_close(arb_sim_pcap *cap);

/**
 * Tell the simulator that links or switches failed or came back during the
 * run (the caller changed them in the topology with arb_topo_fail or
 * arb_topo_restore and refreshed its
 * routing, e.g. arb_lb_refresh). Packets queued at a port that is now
 * failed are dropped and counted (drops); packets on its wire are lost and
 * counted when they would have arrived (lost), and so are those a switch
 * port without PFC had queued (already scheduled). From now on a failed port
 * sends nothing: switches route around it (or count the packet unroutable),
 * a host whose NIC link failed keeps its packets until its transport gives
 * up or the run ends, and packets handed to a failed port are dropped.
 * Links brought back (arb_topo_restore) carry packets again from now on,
 * a host NIC starting on what it kept; what was lost stays lost.
 * Links whose rate or delay changed (arb_topo_set_link) serialise and
 * propagate at the new values from now on. "Now" is the end of the last
 * arb_sim_run (its `until`, or where a callback's timer stopped it), every
 * event up to it done, even when the fabric was idle since an earlier
 * event: the simulator's clock (arb_sim_now) moves there first, so that a
 * change made between runs to `until` takes effect at `until`. A fabric of more than 65,536
 * different (rate, delay) pairs makes the next arb_sim_run fail with
 * ARB_ERANGE. In a partitioned simulator it is collective (every part
 * calls it, its topology changed alike, between runs): each part applies
 * the change to its own ports at the end of the last run, as one process
 * does, and the lookahead becomes the smallest delay of a
 * cut link as the links now are (one of zero delay makes the next
 * arb_sim_run fail with ARB_EINVAL).
 */
void arb_sim_fabric_changed(arb_sim *s);

#ifdef __cplusplus
}
#endif

/* Arbor collectives in the simulator: arb_sim_arbor_* */
#include "arbor/sim_arbor.h"

#endif /* ARBOR_SIM_H */
