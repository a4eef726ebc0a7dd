/*
 * Load balancing in the simulated switches (lb.h): the route.h engines and
 * the adaptive choosers behind one route callback, and CONGA's in-band
 * hook.
 *
 * The choosers read the simulator's port state directly (queued bytes,
 * PFC pause, the DRE), so this file lives with the simulator. Per packet
 * and hop: the candidate set into a stack array, a few loads, at most two
 * hashes; no allocation.
 *
 * CONGA's overlay word (arb_sim_pkt_info.lb, 32 bits):
 *   bits 0-7   LBTag: the source leaf's up port number q
 *   bits 8-10  CE: the largest quantised DRE on the path after the source leaf
 *   bit  11    the LBTag and CE are valid
 *   bits 12-19 FB_LBTag: an up port number of the receiving leaf
 *   bits 20-22 FB_Metric: the congestion the sender of this packet saw on
 *              packets that left the receiving leaf on FB_LBTag
 *   bit  23    the feedback is valid
 */
#include "arbor/lb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_fast.h"
#include "sim_int.h"

#define NONE UINT32_MAX

#define CG_VALID 0x800u
#define CG_FB_VALID 0x800000u
#define CG_TAG(w) ((w)&0xFFu)
#define CG_CE(w) (((w) >> 8) & 7u)
#define CG_FB_TAG(w) (((w) >> 12) & 0xFFu)
#define CG_FB_METRIC(w) (((w) >> 20) & 7u)

/* Congestion-From-Leaf entries: the metric in the low 3 bits. */
#define CFL_PRESENT 0x80u
#define CFL_CHANGED 0x40u

static const char *const kind_names[ARB_LB_KIND_COUNT] = {"route",   "ar",    "ar_ftree", "flowlet",
                                                          "letflow", "conga", "spray"};

struct flowlet {
    arb_time last; /* arrival of the flow's latest packet at the switch */
    uint32_t port; /* the port it took; NONE: empty */
    uint32_t unused;
};

struct arb_lb {
    arb_lb_kind kind;
    const arb_topo *t;
    const arb_pgft *g;
    const arb_node *nodes;
    const arb_port *ports;
    uint32_t n_nodes, n_ports, n_hosts;
    const arb_route *r; /* candidates and hash: base or own */
    arb_route *own;
    int route_adaptive;  /* r decides by its own chooser (route_peek cannot tell) */
    struct lb_fast fast; /* what the event loop reads to guess inline (lb_fast.h) */
    uint64_t seed;
    char spec[192];

    /* options */
    arb_time gap;
    uint64_t bias_milli; /* bias x 1000 */
    uint64_t thresh;     /* bytes */
    int biased;          /* bias or thresh given: keep the current port while good enough */
    int random;          /* spray:random */
    int above_ar;        /* conga: ar above the leaves (else ecmp) */
    arb_time tdre, age;
    double alpha;

    /* flowlet table, shared by the switches, indexed by (switch, flow hash) */
    struct flowlet *fl;
    uint64_t fl_mask;

    arb_rng *rng; /* per node: letflow, spray:random, conga ties */
    uint32_t *rr; /* per node: spray */

    /* conga */
    uint32_t first_leaf, n_leaves, n_groups, m1, up;
    uint8_t *ctl;       /* [leaf][group][q] Congestion-To-Leaf metric */
    arb_time *ctl_at;   /* [leaf][group][q] when it was last fed back */
    uint8_t *cfl;       /* [leaf][group][q] Congestion-From-Leaf: CFL_* | metric */
    uint8_t *fb_rr;     /* [leaf][group] next entry to feed back */
    uint64_t *dre_full; /* per port: the DRE of a fully used link (C x Tdre / alpha), bytes */

    arb_lb_stats st;
};

const char *arb_lb_kind_name(int kind)
{
    return kind >= 0 && kind < ARB_LB_KIND_COUNT ? kind_names[kind] : NULL;
}

/* ------------------------------------------------------------------ */
/* Port state                                                           */
/* ------------------------------------------------------------------ */

/* Queued bytes; a port PFC has paused counts as full as well. */
static inline uint64_t port_cost(const arb_sim *s, uint32_t p)
{
    return net_queue_bytes(s, p) + (s->sp[p].paused ? s->cfg.queue_bytes : 0);
}

/* CONGA's 3-bit metric of a port: its DRE over that of a full link. */
static unsigned quant(const arb_lb *lb, const arb_sim *s, uint32_t p)
{
    if (!s->dre) return 0;
    uint64_t m = net_dre(s, p) * 8 / lb->dre_full[p];
    return m > 7 ? 7 : (unsigned)m;
}

static int in_set(uint32_t p, const uint32_t *cands, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (cands[i] == p) return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Choosers                                                             */
/* ------------------------------------------------------------------ */

/* The candidate with the fewest queued bytes; among ties the (h mod
 * ties)-th, h the switch's ECMP hash of the packet. */
static uint32_t argmin(const arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                       const uint32_t *cands, unsigned n)
{
    uint64_t best = UINT64_MAX;
    unsigned ties = 0, first = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t c = port_cost(s, cands[i]);
        if (c < best) {
            best = c;
            ties = 1;
            first = i;
        } else if (c == best) {
            ties++;
        }
    }
    if (ties == 1) return cands[first];
    unsigned want = (unsigned)(arb_route_hash(lb->r, node, k) % ties);
    for (unsigned i = first; i < n; i++)
        if (port_cost(s, cands[i]) == best && want-- == 0) return cands[i];
    return cands[first]; /* not reached */
}

/* AR with the UGAL-style bias: keep `cur` (a candidate, or NONE) while
 * q(cur) <= q(best) x bias + thresh. */
static uint32_t ar_choose(const arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                          const uint32_t *cands, unsigned n, uint32_t cur)
{
    uint32_t best = argmin(lb, s, node, k, cands, n);
    if (!lb->biased || cur == NONE || cur == best) return best;
    uint64_t qc = port_cost(s, cur), qb = port_cost(s, best);
    return qc * 1000 <= qb * lb->bias_milli + lb->thresh * 1000 ? cur : best;
}

/* CONGA at the source leaf: the up port minimising max(local DRE metric,
 * remote Congestion-To-Leaf metric); the flowlet's previous port if it is
 * among the best, else a random one of them. */
static uint32_t conga_choose(arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                             const uint32_t *cands, unsigned n, uint32_t prev, arb_time now)
{
    const arb_node *nd = &lb->nodes[node];
    size_t row = ((size_t)(node - lb->first_leaf) * lb->n_groups + k->dst / lb->m1) * lb->up;
    const uint8_t *remote = &lb->ctl[row];
    const arb_time *at = &lb->ctl_at[row];
    unsigned best = 8, ties = 0;
    uint8_t metric[ARB_ROUTE_MAX_CANDS];
    for (unsigned i = 0; i < n; i++) {
        unsigned q = cands[i] - nd->first_up;
        unsigned m = quant(lb, s, cands[i]);
        if (q < lb->up && now - at[q] <= lb->age && remote[q] > m) m = remote[q];
        metric[i] = (uint8_t)m;
        if (m < best) {
            best = m;
            ties = 0;
        }
        if (m == best) ties++;
    }
    for (unsigned i = 0; i < n; i++)
        if (cands[i] == prev && metric[i] == best) return prev;
    unsigned want = (unsigned)arb_rng_below(&lb->rng[node], ties);
    for (unsigned i = 0; i < n; i++)
        if (metric[i] == best && want-- == 0) return cands[i];
    return cands[0]; /* not reached */
}

/* The flowlet schemes: keep the flowlet's port inside the gap, decide anew
 * after it. */
static uint32_t flowlet_pick(arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                             const uint32_t *cands, unsigned n, arb_time now)
{
    uint64_t h = arb_route_hash(lb->r, node, k);
    struct flowlet *e = &lb->fl[arb_mix64(h ^ (0x9E3779B97F4A7C15ull * (node + 1))) & lb->fl_mask];
    uint32_t prev = e->port;
    if (prev != NONE && !in_set(prev, cands, n)) prev = NONE; /* failed, or another switch's */
    if (prev != NONE && now - e->last <= lb->gap) {
        e->last = now;
        return prev;
    }
    uint32_t p;
    if (lb->kind == ARB_LB_LETFLOW)
        p = cands[arb_rng_below(&lb->rng[node], n)];
    else if (lb->kind == ARB_LB_CONGA)
        p = conga_choose(lb, s, node, k, cands, n, prev, now);
    else
        p = ar_choose(lb, s, node, k, cands, n, prev);
    lb->st.flowlets++;
    if (prev != NONE && p != prev) lb->st.moves++;
    e->port = p;
    e->last = now;
    return p;
}

/* Packet spraying: the index of the next candidate of n at node. */
static unsigned spray_index(arb_lb *lb, uint32_t node, unsigned n)
{
    if (lb->random) return (unsigned)arb_rng_below(&lb->rng[node], n);
    return lb->rr[node]++ % n;
}

static uint32_t route_from_list(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                                const arb_route_key *k, arb_time now);

/* The routing key of a packet. Field by field, through a volatile view:
 * the caller has just written *f, and a compiler that merged two fields
 * into one wider load could span two of its stores, which the CPU cannot
 * forward: the load would wait for every older store to reach the cache,
 * cache misses included. */
static arb_route_key key_of(const arb_sim_pkt_info *f)
{
    const volatile arb_sim_pkt_info *v = f;
    arb_route_key k;
    k.src = v->src;
    k.dst = v->dst;
    k.sport = v->sport;
    k.dport = v->dport;
    k.qp = v->qp;
    k.proto = v->proto;
    return k;
}

uint32_t arb_lb_route_peek(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                           const arb_sim_pkt_info *f, uint32_t before, uint64_t *token)
{
    const arb_lb *lb = ctx;
    arb_route_key k = key_of(f);
    (void)s;
    if (lb->kind == ARB_LB_ROUTE) {
        if (lb->route_adaptive) return ARB_TOPO_NONE;
        uint32_t p = arb_route_next(lb->r, node, &k, in_port);
        if (p == ARB_ROUTE_NONE) return ARB_TOPO_NONE;
        *token = LB_TOKEN_PURE;
        return p;
    }
    uint32_t first, stride;
    int m;
    if (lb->kind != ARB_LB_SPRAY ||
        (m = arb_route_candidate_range(lb->r, node, &k, &first, &stride)) < 1)
        return ARB_TOPO_NONE;
    if (m == 1) {
        *token = LB_TOKEN_PURE;
        return first;
    }
    if (lb->random) {
        if (before) return ARB_TOPO_NONE;
        arb_rng r = lb->rng[node]; /* a copy: the draw the route will make */
        return first + stride * (uint32_t)arb_rng_below(&r, (unsigned)m);
    }
    return lb_spray_pick(lb->rr, node, first, stride, (unsigned)m, before, token);
}

/* The guess f came back with, if it is the decision arb_lb_route would make
 * now (then made: the counters move as they would have), else
 * ARB_TOPO_NONE. */
static uint32_t take_guess(arb_lb *lb, uint32_t node, const arb_sim_pkt_info *f)
{
    if (lb->kind == ARB_LB_ROUTE)
        return f->token == LB_TOKEN_PURE && !lb->route_adaptive ? f->guess : ARB_TOPO_NONE;
    if (lb->kind != ARB_LB_SPRAY) return ARB_TOPO_NONE;
    if (f->token == LB_TOKEN_PURE) return f->guess;
    if (lb->random || f->token != (LB_TOKEN_RR | lb->rr[node])) return ARB_TOPO_NONE;
    lb->st.choices++;
    lb->rr[node]++;
    return f->guess;
}

uint32_t arb_lb_route(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                      const arb_sim_pkt_info *f, arb_time now)
{
    arb_lb *lb = ctx;
    lb->st.decisions++;
    if (f->token) {
        uint32_t p = take_guess(lb, node, f);
        if (p != ARB_TOPO_NONE) {
            lb->st.guessed++;
            return p;
        }
    }
    arb_route_key k = key_of(f);
    if (lb->kind == ARB_LB_ROUTE) {
        uint32_t p = arb_route_next(lb->r, node, &k, in_port);
        if (p == ARB_ROUTE_NONE) lb->st.unroutable++;
        return p == ARB_ROUTE_NONE ? ARB_TOPO_NONE : p;
    }
    if (lb->kind == ARB_LB_SPRAY) {
        /* a plain range needs no list: pick its index */
        uint32_t first, stride;
        int m = arb_route_candidate_range(lb->r, node, &k, &first, &stride);
        if (m == 1) return first;
        if (m > 1) {
            lb->st.choices++;
            return first + stride * spray_index(lb, node, (unsigned)m);
        }
    }
    return route_from_list(lb, s, node, in_port, &k, now);
}

/* arb_lb_route where the candidates are listed (failures, or a scheme that
 * weighs each): kept out of the common path, whose frame it would make
 * four kilobytes deep. */
static SIM_COLD uint32_t route_from_list(arb_lb *lb, const arb_sim *s, uint32_t node,
                                         uint32_t in_port, const arb_route_key *kp, arb_time now)
{
    arb_route_key k = *kp;
    uint32_t cands[ARB_ROUTE_MAX_CANDS];
    int c = arb_route_candidates(lb->r, node, &k, cands, ARB_ROUTE_MAX_CANDS);
    if (c <= 0) {
        lb->st.unroutable++;
        return ARB_TOPO_NONE;
    }
    unsigned n = (unsigned)c;
    if (n == 1) return cands[0];
    lb->st.choices++;
    const arb_node *nd = &lb->nodes[node];
    switch (lb->kind) {
    case ARB_LB_AR: {
        uint32_t cur = NONE;
        if (lb->biased) cur = cands[arb_route_hash(lb->r, node, &k) % n];
        return ar_choose(lb, s, node, &k, cands, n, cur);
    }
    case ARB_LB_AR_FTREE:
        if (cands[0] < nd->first_up) { /* down: D-mod-k's parallel link while it lives */
            uint32_t p = arb_pgft_down_port(lb->g, nd, k.dst);
            if (in_set(p, cands, n)) return p;
        }
        return ar_choose(lb, s, node, &k, cands, n, NONE);
    case ARB_LB_CONGA:
        /* the source leaf decides; above it, and on the way down, ecmp or ar */
        if (nd->level != 1 || lb->ports[in_port].role == ARB_LINK_UP || cands[0] < nd->first_up) {
            if (lb->above_ar) return ar_choose(lb, s, node, &k, cands, n, NONE);
            return cands[arb_route_hash(lb->r, node, &k) % n];
        }
        return flowlet_pick(lb, s, node, &k, cands, n, now);
    case ARB_LB_FLOWLET:
    case ARB_LB_LETFLOW:
        return flowlet_pick(lb, s, node, &k, cands, n, now);
    case ARB_LB_SPRAY:
        return cands[spray_index(lb, node, n)];
    case ARB_LB_ROUTE:
        break;
    }
    return ARB_TOPO_NONE;
}

/* ------------------------------------------------------------------ */
/* CONGA in band                                                        */
/* ------------------------------------------------------------------ */

/* A metric of cfl[row..row+up) to feed back: round robin from fb_rr,
 * changed entries first; -1 when there is none. */
static int feedback_pick(arb_lb *lb, size_t row, size_t rr_at)
{
    uint8_t *e = &lb->cfl[row];
    unsigned up = lb->up, start = lb->fb_rr[rr_at] % up;
    int pick = -1;
    for (unsigned i = 0; i < up && pick < 0; i++)
        if (e[(start + i) % up] & CFL_CHANGED) pick = (int)((start + i) % up);
    for (unsigned i = 0; i < up && pick < 0; i++)
        if (e[(start + i) % up] & CFL_PRESENT) pick = (int)((start + i) % up);
    if (pick >= 0) {
        e[pick] &= (uint8_t)~CFL_CHANGED;
        lb->fb_rr[rr_at] = (uint8_t)((unsigned)(pick + 1) % up);
    }
    return pick;
}

uint32_t arb_lb_inband(void *ctx, const arb_sim *s, uint32_t node, uint32_t in_port,
                       uint32_t out_port, const arb_sim_pkt_info *f, arb_time now)
{
    arb_lb *lb = ctx;
    uint32_t w = f->lb;
    if (lb->kind != ARB_LB_CONGA || lb->up == 0) return w;
    const arb_node *nd = &lb->nodes[node];
    if (nd->level >= 2) { /* on the path: CE = max(CE, egress metric) */
        if (w & CG_VALID) {
            unsigned ce = quant(lb, s, out_port);
            if (ce > CG_CE(w)) w = (w & ~(7u << 8)) | (ce << 8);
        }
        return w;
    }
    if (nd->level != 1) return w;
    int from_up = lb->ports[in_port].role == ARB_LINK_UP;
    int to_up = lb->ports[out_port].role == ARB_LINK_UP;
    uint32_t leaf = node - lb->first_leaf;
    if (!from_up && to_up) { /* source leaf: tag the packet, piggyback one metric */
        uint32_t group = f->dst / lb->m1;
        size_t rr_at = (size_t)leaf * lb->n_groups + group;
        w = (out_port - nd->first_up) | CG_VALID;
        int q = feedback_pick(lb, rr_at * lb->up, rr_at);
        if (q >= 0) {
            w |= ((uint32_t)q << 12) |
                 ((uint32_t)(lb->cfl[rr_at * lb->up + (unsigned)q] & 7u) << 20) | CG_FB_VALID;
            lb->st.fb_sent++;
        }
        return w;
    }
    if (from_up && !to_up) { /* destination leaf: learn, then strip the overlay */
        size_t row = ((size_t)leaf * lb->n_groups + f->src / lb->m1) * lb->up;
        if ((w & CG_VALID) && CG_TAG(w) < lb->up)
            lb->cfl[row + CG_TAG(w)] = (uint8_t)(CFL_PRESENT | CFL_CHANGED | CG_CE(w));
        if ((w & CG_FB_VALID) && CG_FB_TAG(w) < lb->up) {
            lb->ctl[row + CG_FB_TAG(w)] = (uint8_t)CG_FB_METRIC(w);
            lb->ctl_at[row + CG_FB_TAG(w)] = now;
            lb->st.fb_received++;
        }
        return 0;
    }
    return w;
}

unsigned arb_lb_conga_metric(const arb_lb *lb, uint32_t leaf, uint32_t group, unsigned q,
                             arb_time now)
{
    if (!lb || lb->kind != ARB_LB_CONGA || leaf < lb->first_leaf ||
        leaf - lb->first_leaf >= lb->n_leaves || group >= lb->n_groups || q >= lb->up)
        return 0;
    size_t at = ((size_t)(leaf - lb->first_leaf) * lb->n_groups + group) * lb->up + q;
    return now - lb->ctl_at[at] <= lb->age ? lb->ctl[at] : 0;
}

/* ------------------------------------------------------------------ */
/* Creation                                                             */
/* ------------------------------------------------------------------ */

static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s) return ARB_EPARSE;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return ARB_EPARSE;
        if (v > (UINT64_MAX - 9) / 10) return ARB_ERANGE;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    if (!s || !*s) return ARB_EPARSE;
    char *end;
    double v = strtod(s, &end);
    if (*end || !isfinite(v)) return ARB_EPARSE;
    *out = v;
    return 0;
}

/* "256us": the largest unit that divides t. */
static void fmt_time(char *buf, size_t len, arb_time t)
{
    static const struct {
        arb_time ps;
        const char *unit;
    } units[] = {{ARB_PS_PER_S, "s"},
                 {ARB_PS_PER_MS, "ms"},
                 {ARB_PS_PER_US, "us"},
                 {ARB_PS_PER_NS, "ns"},
                 {1, "ps"}};
    if (t == 0) {
        snprintf(buf, len, "0");
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (t % units[i].ps == 0) {
            snprintf(buf, len, "%llu%s", (unsigned long long)(t / units[i].ps), units[i].unit);
            return;
        }
}

static int parse_options(arb_lb *lb, const char *name, const char *opt, uint64_t *table, char *err,
                         size_t errlen)
{
    char buf[256];
    if (strlen(opt) >= sizeof buf)
        return arb_errf(err, errlen, ARB_EPARSE, "load balancing: %s: options too long", name);
    memcpy(buf, opt, strlen(opt) + 1);
    int k = lb->kind;
    int flowlets = k == ARB_LB_FLOWLET || k == ARB_LB_LETFLOW || k == ARB_LB_CONGA;
    int biases = k == ARB_LB_AR || k == ARB_LB_AR_FTREE || k == ARB_LB_FLOWLET;
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        const char *val = eq ? eq + 1 : NULL;
        if (eq) *eq = '\0';
        int rc = 0;
        if (k == ARB_LB_SPRAY && !val && strcmp(item, "random") == 0) {
            lb->random = 1;
        } else if (k == ARB_LB_SPRAY && !val && strcmp(item, "rr") == 0) {
            lb->random = 0;
        } else if (!val) {
            return arb_errf(err, errlen, ARB_EPARSE,
                            "load balancing: %s: option '%s' needs a value", name, item);
        } else if (flowlets && strcmp(item, "gap") == 0) {
            rc = arb_topo_parse_time(val, &lb->gap);
        } else if (flowlets && strcmp(item, "table") == 0) {
            rc = parse_u64(val, table);
            if (rc == 0 && (*table == 0 || *table > (1u << 30))) rc = ARB_ERANGE;
        } else if (biases && strcmp(item, "bias") == 0) {
            double b;
            rc = parse_double(val, &b);
            if (rc == 0 && !(b > 0 && b <= 1e6)) rc = ARB_ERANGE;
            if (rc == 0) lb->bias_milli = (uint64_t)llround(b * 1000);
            if (rc == 0 && lb->bias_milli == 0) rc = ARB_ERANGE;
        } else if (biases && strcmp(item, "thresh") == 0) {
            rc = parse_u64(val, &lb->thresh);
            if (rc == 0 && lb->thresh > UINT32_MAX) rc = ARB_ERANGE;
        } else if (k == ARB_LB_CONGA && strcmp(item, "tdre") == 0) {
            rc = arb_topo_parse_time(val, &lb->tdre);
            if (rc == 0 && lb->tdre == 0) rc = ARB_ERANGE;
        } else if (k == ARB_LB_CONGA && strcmp(item, "alpha") == 0) {
            rc = parse_double(val, &lb->alpha);
            if (rc == 0 && !(lb->alpha > 0 && lb->alpha <= 1)) rc = ARB_ERANGE;
        } else if (k == ARB_LB_CONGA && strcmp(item, "age") == 0) {
            rc = arb_topo_parse_time(val, &lb->age);
        } else if (k == ARB_LB_CONGA && strcmp(item, "above") == 0) {
            if (strcmp(val, "ar") == 0)
                lb->above_ar = 1;
            else if (strcmp(val, "ecmp") == 0)
                lb->above_ar = 0;
            else
                rc = ARB_EPARSE;
        } else {
            return arb_errf(err, errlen, ARB_EPARSE, "load balancing: %s has no option '%s'", name,
                            item);
        }
        if (rc < 0)
            return arb_errf(err, errlen, ARB_EPARSE, "load balancing: %s: bad value '%s' for %s",
                            name, val, item);
    }
    return 0;
}

static void make_spec(arb_lb *lb)
{
    char a[32], b[32], c[32];
    const char *name = kind_names[lb->kind];
    unsigned long long bi = (unsigned long long)lb->bias_milli;
    char bias[64];
    if (bi % 1000 == 0)
        snprintf(bias, sizeof bias, "bias=%llu,thresh=%llu", bi / 1000,
                 (unsigned long long)lb->thresh);
    else
        snprintf(bias, sizeof bias, "bias=%llu.%03llu,thresh=%llu", bi / 1000, bi % 1000,
                 (unsigned long long)lb->thresh);
    fmt_time(a, sizeof a, lb->gap);
    switch (lb->kind) {
    case ARB_LB_AR:
    case ARB_LB_AR_FTREE:
        snprintf(lb->spec, sizeof lb->spec, "%s:%s", name, bias);
        break;
    case ARB_LB_FLOWLET:
        snprintf(lb->spec, sizeof lb->spec, "%s:gap=%s,table=%llu,%s", name, a,
                 (unsigned long long)(lb->fl_mask + 1), bias);
        break;
    case ARB_LB_LETFLOW:
        snprintf(lb->spec, sizeof lb->spec, "%s:gap=%s,table=%llu", name, a,
                 (unsigned long long)(lb->fl_mask + 1));
        break;
    case ARB_LB_CONGA:
        fmt_time(b, sizeof b, lb->tdre);
        fmt_time(c, sizeof c, lb->age);
        snprintf(lb->spec, sizeof lb->spec, "%s:gap=%s,table=%llu,tdre=%s,alpha=%g,age=%s,above=%s",
                 name, a, (unsigned long long)(lb->fl_mask + 1), b, lb->alpha, c,
                 lb->above_ar ? "ar" : "ecmp");
        break;
    case ARB_LB_SPRAY:
        snprintf(lb->spec, sizeof lb->spec, "%s:%s", name, lb->random ? "random" : "rr");
        break;
    case ARB_LB_ROUTE:
        snprintf(lb->spec, sizeof lb->spec, "%s", arb_route_spec(lb->r));
        break;
    }
}

void arb_lb_reset(arb_lb *lb)
{
    if (!lb) return;
    memset(&lb->st, 0, sizeof lb->st);
    if (lb->fl)
        for (uint64_t i = 0; i <= lb->fl_mask; i++) {
            lb->fl[i].last = 0;
            lb->fl[i].port = NONE;
            lb->fl[i].unused = 0;
        }
    if (lb->rr) memset(lb->rr, 0, sizeof *lb->rr * lb->n_nodes);
    if (lb->rng) {
        /* a stream of its own, apart from the simulator's generator */
        arb_rng root;
        arb_rng_seed(&root, arb_mix64(lb->seed ^ 0x6C6F61642D62616Cull));
        for (uint32_t n = 0; n < lb->n_nodes; n++)
            arb_rng_split(&root, n, &lb->rng[n]);
    }
    if (lb->ctl) {
        size_t cells = (size_t)lb->n_leaves * lb->n_groups * lb->up;
        memset(lb->ctl, 0, cells);
        memset(lb->cfl, 0, cells);
        memset(lb->fb_rr, 0, (size_t)lb->n_leaves * lb->n_groups);
        for (size_t i = 0; i < cells; i++)
            lb->ctl_at[i] = 0;
    }
}

static int conga_init(arb_lb *lb, char *err, size_t errlen)
{
    const arb_pgft *g = lb->g;
    lb->first_leaf = arb_topo_level_first(lb->t, 1);
    lb->n_leaves = arb_topo_level_size(lb->t, 1);
    lb->m1 = g->m[1];
    lb->n_groups = lb->n_hosts / lb->m1;
    lb->up = g->h >= 2 ? g->w[2] * g->p[2] : 0;
    if (lb->up > 255)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "load balancing: conga: leaves have %u uplinks, at most 255 are supported",
                        lb->up);
    size_t cells = (size_t)lb->n_leaves * lb->n_groups * (lb->up ? lb->up : 1);
    lb->ctl = malloc(cells);
    lb->ctl_at = malloc(cells * sizeof *lb->ctl_at);
    lb->cfl = malloc(cells);
    lb->fb_rr = malloc((size_t)lb->n_leaves * lb->n_groups);
    lb->dre_full = malloc(sizeof *lb->dre_full * lb->n_ports);
    if (!lb->ctl || !lb->ctl_at || !lb->cfl || !lb->fb_rr || !lb->dre_full)
        return arb_errf(err, errlen, ARB_ENOMEM, "load balancing: out of memory");
    /* a link at rate C sending all the time settles at C x Tdre / alpha bytes */
    for (uint32_t p = 0; p < lb->n_ports; p++) {
        double full = (double)lb->ports[p].rate / 8.0 * (double)lb->tdre / 1e12 / lb->alpha;
        lb->dre_full[p] = full < 1 ? 1 : (uint64_t)full;
    }
    return 0;
}

/* fast.plain_gen: the present failure generation if no port has failed
 * and the router's candidate sets are plain ranges (no cost tables, its
 * view of the failures current: a probe at the first switch tells). */
static void fast_update(arb_lb *lb)
{
    lb->fast.plain_gen = UINT64_MAX;
    for (uint32_t p = 0; p < lb->n_ports; p++)
        if (lb->ports[p].failed) return;
    arb_route_key k;
    memset(&k, 0, sizeof k);
    uint32_t first, stride;
    if (lb->n_nodes > lb->n_hosts &&
        arb_route_candidate_range(lb->r, lb->n_hosts, &k, &first, &stride) > 0)
        lb->fast.plain_gen = arb_topo_failure_gen(lb->t);
}

const struct lb_fast *lb_fast_of(const arb_lb *lb)
{
    return &lb->fast;
}

int arb_lb_refresh(arb_lb *lb)
{
    if (!lb) return 0;
    int rc = lb->own ? arb_route_refresh(lb->own) : 0;
    fast_update(lb);
    return rc;
}

void arb_lb_free(arb_lb *lb)
{
    if (!lb) return;
    arb_route_free(lb->own);
    free(lb->fl);
    free(lb->rng);
    free(lb->rr);
    free(lb->ctl);
    free(lb->ctl_at);
    free(lb->cfl);
    free(lb->fb_rr);
    free(lb->dre_full);
    free(lb);
}

int arb_lb_new(arb_lb **out, const arb_topo *t, const arb_route *base, const char *scheme,
               arb_sim_config *cfg, char *err, size_t errlen)
{
    if (out) *out = NULL;
    if (!out || !t || !scheme || !cfg)
        return arb_errf(err, errlen, ARB_EINVAL, "load balancing: NULL argument");
    const arb_pgft *g = arb_topo_pgft(t);
    if (!g) return arb_errf(err, errlen, ARB_EINVAL, "load balancing: the topology is not a PGFT");

    char name[32];
    const char *colon = strchr(scheme, ':');
    size_t nlen = colon ? (size_t)(colon - scheme) : strlen(scheme);
    if (nlen == 0 || nlen >= sizeof name)
        return arb_errf(err, errlen, ARB_EPARSE, "load balancing: '%s' is not a scheme", scheme);
    memcpy(name, scheme, nlen);
    name[nlen] = '\0';
    int kind = -1;
    for (int i = 0; i < ARB_LB_KIND_COUNT; i++)
        if (strcmp(name, kind_names[i]) == 0) kind = i;
    int engine = -1;
    for (int i = 0; i < ARB_ROUTE_KIND_COUNT; i++)
        if (strcmp(name, arb_route_kind_name(i)) == 0) engine = i;
    if (engine == ARB_ROUTE_ADAPTIVE)
        return arb_errf(err, errlen, ARB_EPARSE,
                        "load balancing: 'adaptive' is the router's hook; name a chooser (ar, "
                        "ar_ftree, flowlet, letflow, conga, spray)");
    if (kind < 0 && engine < 0)
        return arb_errf(
            err, errlen, ARB_EPARSE,
            "load balancing: unknown scheme '%s' (engines dmodk, smodk, rnca, pinning, "
            "table, updown, dmodc, ecmp, eecmp; choosers ar, ar_ftree, flowlet, letflow, "
            "conga, spray; route)",
            name);
    if (kind == ARB_LB_ROUTE && !base)
        return arb_errf(err, errlen, ARB_EINVAL, "load balancing: 'route' needs a router");
    if (kind == ARB_LB_ROUTE && colon)
        return arb_errf(err, errlen, ARB_EPARSE, "load balancing: route takes no option");
    if (engine >= 0 && base)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "load balancing: '%s' is a routing engine; give it or a router, not both",
                        name);

    arb_lb *lb = calloc(1, sizeof *lb);
    if (!lb) return arb_errf(err, errlen, ARB_ENOMEM, "load balancing: out of memory");
    lb->kind = engine >= 0 ? ARB_LB_ROUTE : (arb_lb_kind)kind;
    lb->t = t;
    lb->g = g;
    lb->nodes = arb_topo_nodes(t);
    lb->ports = arb_topo_ports(t);
    lb->n_nodes = arb_topo_n_nodes(t);
    lb->n_ports = arb_topo_n_ports(t);
    lb->n_hosts = arb_topo_n_hosts(t);
    lb->seed = cfg->seed;
    lb->bias_milli = 1000;
    lb->gap = lb->kind == ARB_LB_FLOWLET ? 256 * ARB_PS_PER_US : 500 * ARB_PS_PER_US;
    lb->tdre = 20 * ARB_PS_PER_US;
    lb->alpha = 0.1;
    lb->age = 10 * ARB_PS_PER_MS;
    uint64_t table = (uint64_t)lb->n_hosts * 64;
    if (table < 65536) table = 65536;
    int rc = 0;
    if (engine < 0 && colon) rc = parse_options(lb, name, colon + 1, &table, err, errlen);
    lb->biased = lb->bias_milli != 1000 || lb->thresh != 0;

    if (rc == 0 && (engine >= 0 || !base)) {
        arb_route_config rc_cfg = arb_route_config_default();
        rc_cfg.seed = cfg->seed;
        rc = arb_route_new(&lb->own, t, engine >= 0 ? scheme : "ecmp", &rc_cfg, err, errlen);
        lb->r = lb->own;
    } else {
        lb->r = base;
    }
    lb->route_adaptive = lb->r && arb_route_get_kind(lb->r) == ARB_ROUTE_ADAPTIVE;
    int flowlets =
        lb->kind == ARB_LB_FLOWLET || lb->kind == ARB_LB_LETFLOW || lb->kind == ARB_LB_CONGA;
    if (rc == 0 && flowlets) {
        uint64_t size = 1;
        while (size < table)
            size <<= 1;
        lb->fl_mask = size - 1;
        lb->fl = malloc(sizeof *lb->fl * size);
        if (!lb->fl) rc = arb_errf(err, errlen, ARB_ENOMEM, "load balancing: out of memory");
    }
    if (rc == 0 && (lb->kind == ARB_LB_LETFLOW || lb->kind == ARB_LB_CONGA ||
                    (lb->kind == ARB_LB_SPRAY && lb->random))) {
        lb->rng = malloc(sizeof *lb->rng * lb->n_nodes);
        if (!lb->rng) rc = arb_errf(err, errlen, ARB_ENOMEM, "load balancing: out of memory");
    }
    if (rc == 0 && lb->kind == ARB_LB_SPRAY && !lb->random) {
        lb->rr = calloc(lb->n_nodes, sizeof *lb->rr);
        if (!lb->rr) rc = arb_errf(err, errlen, ARB_ENOMEM, "load balancing: out of memory");
    }
    if (rc == 0 && lb->kind == ARB_LB_CONGA) rc = conga_init(lb, err, errlen);
    if (rc < 0) {
        arb_lb_free(lb);
        return rc;
    }
    arb_lb_reset(lb);
    make_spec(lb);
    lb->fast.g = lb->g;
    lb->fast.rr = lb->kind == ARB_LB_SPRAY && !lb->random ? lb->rr : NULL;
    arb_route_kind rk = arb_route_get_kind(lb->r);
    lb->fast.ecmp =
        lb->kind == ARB_LB_ROUTE && (rk == ARB_ROUTE_ECMP || rk == ARB_ROUTE_EECMP) ? lb->r : NULL;
    fast_update(lb);

    cfg->route = arb_lb_route;
    cfg->route_ctx = lb;
    cfg->route_peek = arb_lb_route_peek;
    cfg->peek_ctx = lb;
    if (lb->kind == ARB_LB_CONGA) {
        cfg->inband = arb_lb_inband;
        cfg->inband_ctx = lb;
        cfg->dre_period = lb->tdre;
        cfg->dre_alpha = lb->alpha;
    } else if (cfg->inband == arb_lb_inband) {
        cfg->inband = NULL;
        cfg->inband_ctx = NULL;
    }
    *out = lb;
    return 0;
}

arb_lb_kind arb_lb_get_kind(const arb_lb *lb)
{
    return lb->kind;
}

const char *arb_lb_spec(const arb_lb *lb)
{
    return lb->spec;
}

const arb_route *arb_lb_router(const arb_lb *lb)
{
    return lb->r;
}

void arb_lb_get_stats(const arb_lb *lb, arb_lb_stats *st)
{
    *st = lb->st;
}
