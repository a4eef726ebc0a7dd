/** @file
 * arbor/traffic.h - traffic patterns: which hosts send to which, in
 * phases, as flows with the header fields a hashing switch sees.
 *
 * A pattern is parsed once from a spec string and then generates the flows
 * of each phase on demand, so that `shift:all` on 65,536 hosts needs memory
 * for one phase, not for all of them. A phase is a set of flows that run
 * at the same time; link loads are computed per phase and the worst phase
 * is reported.
 *
 * Specs (N = number of hosts):
 *   shift:S        i -> (i + S) mod N, 1 <= S < N                 1 phase
 *   shift:all      shift:S for S = 1..N-1                          N-1 phases
 *   perm:SEED      a uniformly random derangement (no i -> i)      1 phase
 *   all2all        every ordered pair i != j                      1 phase
 *   ring           the send pairs of ring AllReduce over hosts in
 *                  index order: i -> (i + 1) mod N                 1 phase
 *   bisect:SEED    hosts split at random into two halves and paired
 *                  at random across them; each pair sends both ways 1 phase
 *   file:PATH      CSV with the header `src,dst[,demand]`, one flow
 *                  per line, demand in links (default 1.0)        1 phase
 *
 * Pure: no clock, no I/O except reading the file of `file:` at parse time.
 */
#ifndef ARBOR_TRAFFIC_H
#define ARBOR_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The RoCEv2 UDP destination port; flows use it unless told otherwise. */
#define ARB_ROCE_UDP_PORT 4791
#define ARB_IPPROTO_UDP 17 /**< the IP protocol number of UDP */

/**
 * One flow: the fields a switch hashes, and the share of a link it wants.
 * Hosts are indices 0..N-1; their IPv4 addresses are derived by the
 * router (see route.h), so a flow carries only indices.
 */
typedef struct arb_flow {
    uint32_t src;     /**< source host index */
    uint32_t dst;     /**< destination host index */
    uint16_t sport;   /**< UDP source port: the entropy of RoCEv2 ECMP */
    uint16_t dport;   /**< UDP destination port */
    uint32_t qp;      /**< destination QP, 24 bits (E-ECMP hashes it) */
    uint8_t proto;    /**< IP protocol */
    uint8_t qp_index; /**< which of the pair's --qps flows this is */
    double demand;    /**< in links: 1.0 fills one link of the host's rate */
} arb_flow;

/** How flows are made from the pattern's pairs (arb_traffic_config_default). */
typedef struct arb_traffic_config {
    uint32_t qps;      /**< flows per pair, each 1/qps of the demand (default 1) */
    uint16_t dport;    /**< destination port (default ARB_ROCE_UDP_PORT) */
    uint16_t sport_lo; /**< source ports are drawn from [sport_lo, sport_hi] */
    uint16_t sport_hi; /**< (default 49152..65535, the dynamic range) */
} arb_traffic_config;

/** Fill *cfg with the defaults its fields name. */
void arb_traffic_config_default(arb_traffic_config *cfg);

/** A parsed traffic pattern: its phases and pairs (opaque). */
typedef struct arb_traffic arb_traffic;

/**
 * Parse `spec` for a fabric of n_hosts hosts (cfg NULL: the defaults).
 * Errors: ARB_EPARSE (bad syntax or a value out of range, e.g. shift:0 or
 * a host index >= N), ARB_EIO (file: cannot be read), ARB_EINVAL (n_hosts
 * < 2, qps 0), ARB_ENOMEM; err names the field (and, for files, the line).
 */
int arb_traffic_new(arb_traffic **out, const char *spec, uint32_t n_hosts,
                    const arb_traffic_config *cfg, char *err, size_t errlen);
/** Free the pattern (NULL is ignored). */
void arb_traffic_free(arb_traffic *t);

/** Number of phases (>= 1). */
uint32_t arb_traffic_phases(const arb_traffic *t);

/** The largest number of flows any phase has (pairs x qps). */
size_t arb_traffic_max_flows(const arb_traffic *t);

/** The canonical spec, e.g. "shift:3" (for reports). */
const char *arb_traffic_spec(const arb_traffic *t);

/**
 * Write the flows of `phase` into out[0..cap) and return their number, or
 * ARB_EINVAL for a phase out of range and ARB_ENOSPC when cap is smaller
 * than arb_traffic_max_flows. Source ports and QP numbers are drawn from
 * `rng` (a source port, then a QP, per flow in flow order), so a trial is a pure function
 * of its generator; with rng NULL they are deterministic: sport = sport_lo +
 * (flow index within the pair's QPs), qp = the flow's index in the phase.
 * The pair order is fixed by the pattern (by source, then destination).
 */
long arb_traffic_phase(const arb_traffic *t, uint32_t phase, arb_rng *rng, arb_flow *out,
                       size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_TRAFFIC_H */
