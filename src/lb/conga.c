/*
 * The scheme `conga` (CONGA, Alizadeh et al., SIGCOMM 2014; lb.h and
 * docs/load-balancing.md): at the source leaf a new flowlet takes the up
 * port minimising max(local DRE metric, remote Congestion-To-Leaf
 * metric); above the leaves, and on the way down, ECMP or ar. The leaves
 * exchange the metrics in band, in the packet's load-balancing word.
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
#include "lb_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

extern const struct lb_scheme lb_scheme_conga;

#define CG_VALID 0x800u
#define CG_FB_VALID 0x800000u
#define CG_TAG(w) ((w)&0xFFu)
#define CG_CE(w) (((w) >> 8) & 7u)
#define CG_FB_TAG(w) (((w) >> 12) & 0xFFu)
#define CG_FB_METRIC(w) (((w) >> 20) & 7u)

/* Congestion-From-Leaf entries: the metric in the low 3 bits. */
#define CFL_PRESENT 0x80u
#define CFL_CHANGED 0x40u

struct conga {
    /* options */
    arb_time tdre, age;
    double alpha;
    int above_ar; /* ar above the leaves (else ecmp) */
    /* tables */
    uint32_t first_leaf, n_leaves, n_groups, m1, up;
    uint8_t *ctl;       /* [leaf][group][q] Congestion-To-Leaf metric */
    arb_time *ctl_at;   /* [leaf][group][q] when it was last fed back */
    uint8_t *cfl;       /* [leaf][group][q] Congestion-From-Leaf: CFL_* | metric */
    uint8_t *fb_rr;     /* [leaf][group] next entry to feed back */
    uint64_t *dre_full; /* per port: the DRE of a fully used link (C x Tdre / alpha), bytes */
};

/* CONGA's 3-bit metric of a port: its DRE over that of a full link. */
static unsigned quant(const struct conga *c, const arb_sim *s, uint32_t p)
{
    uint64_t m = arb_sim_port_dre(s, p) * 8 / c->dre_full[p];
    return m > 7 ? 7 : (unsigned)m;
}

/* At the source leaf: the up port minimising max(local DRE metric, remote
 * Congestion-To-Leaf metric); the flowlet's previous port if it is among
 * the best, else a random one of them. */
static uint32_t conga_fresh(arb_lb *lb, const arb_sim *s, uint32_t node, const arb_route_key *k,
                            const uint32_t *cands, unsigned n, uint32_t prev, arb_time now)
{
    const struct conga *c = lb->priv;
    const arb_node *nd = &lb->nodes[node];
    size_t row = ((size_t)(node - c->first_leaf) * c->n_groups + k->dst / c->m1) * c->up;
    const uint8_t *remote = &c->ctl[row];
    const arb_time *at = &c->ctl_at[row];
    unsigned best = 8, ties = 0;
    uint8_t metric[ARB_ROUTE_MAX_CANDS];
    for (unsigned i = 0; i < n; i++) {
        unsigned q = cands[i] - nd->first_up;
        unsigned m = quant(c, s, cands[i]);
        if (q < c->up && now - at[q] <= c->age && remote[q] > m) m = remote[q];
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

static uint32_t conga_choose(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                             const arb_route_key *k, const uint32_t *cands, unsigned n,
                             arb_time now)
{
    const struct conga *c = lb->priv;
    const arb_node *nd = &lb->nodes[node];
    /* the source leaf decides; above it, and on the way down, ecmp or ar */
    if (nd->level != 1 || lb->ports[in_port].role == ARB_LINK_UP || cands[0] < nd->first_up) {
        if (c->above_ar) return lb_ar_choose(lb, s, node, k, cands, n, LB_NONE);
        return cands[arb_route_hash(lb->r, node, k) % n];
    }
    return lb_flowlet_pick(lb, s, node, k, cands, n, now, conga_fresh);
}

/* ---- in band ------------------------------------------------------------ */

/* A metric of cfl[row..row+up) to feed back: round robin from fb_rr,
 * changed entries first; -1 when there is none. */
static int feedback_pick(struct conga *c, size_t row, size_t rr_at)
{
    uint8_t *e = &c->cfl[row];
    unsigned up = c->up, start = c->fb_rr[rr_at] % up;
    int pick = -1;
    for (unsigned i = 0; i < up && pick < 0; i++)
        if (e[(start + i) % up] & CFL_CHANGED) pick = (int)((start + i) % up);
    for (unsigned i = 0; i < up && pick < 0; i++)
        if (e[(start + i) % up] & CFL_PRESENT) pick = (int)((start + i) % up);
    if (pick >= 0) {
        e[pick] &= (uint8_t)~CFL_CHANGED;
        c->fb_rr[rr_at] = (uint8_t)((unsigned)(pick + 1) % up);
    }
    return pick;
}

static uint32_t conga_inband(arb_lb *lb, const arb_sim *s, uint32_t node, uint32_t in_port,
                             uint32_t out_port, const arb_sim_pkt_info *f, arb_time now)
{
    struct conga *c = lb->priv;
    uint32_t w = f->lb;
    if (c->up == 0) return w;
    const arb_node *nd = &lb->nodes[node];
    if (nd->level >= 2) { /* on the path: CE = max(CE, egress metric) */
        if (w & CG_VALID) {
            unsigned ce = quant(c, s, out_port);
            if (ce > CG_CE(w)) w = (w & ~(7u << 8)) | (ce << 8);
        }
        return w;
    }
    if (nd->level != 1) return w;
    int from_up = lb->ports[in_port].role == ARB_LINK_UP;
    int to_up = lb->ports[out_port].role == ARB_LINK_UP;
    uint32_t leaf = node - c->first_leaf;
    if (!from_up && to_up) { /* source leaf: tag the packet, piggyback one metric */
        uint32_t group = f->dst / c->m1;
        size_t rr_at = (size_t)leaf * c->n_groups + group;
        w = (out_port - nd->first_up) | CG_VALID;
        int q = feedback_pick(c, rr_at * c->up, rr_at);
        if (q >= 0) {
            w |= ((uint32_t)q << 12) |
                 ((uint32_t)(c->cfl[rr_at * c->up + (unsigned)q] & 7u) << 20) | CG_FB_VALID;
            lb->st.fb_sent++;
        }
        return w;
    }
    if (from_up && !to_up) { /* destination leaf: learn, then strip the overlay */
        size_t row = ((size_t)leaf * c->n_groups + f->src / c->m1) * c->up;
        if ((w & CG_VALID) && CG_TAG(w) < c->up)
            c->cfl[row + CG_TAG(w)] = (uint8_t)(CFL_PRESENT | CFL_CHANGED | CG_CE(w));
        if ((w & CG_FB_VALID) && CG_FB_TAG(w) < c->up) {
            c->ctl[row + CG_FB_TAG(w)] = (uint8_t)CG_FB_METRIC(w);
            c->ctl_at[row + CG_FB_TAG(w)] = now;
            lb->st.fb_received++;
        }
        return 0;
    }
    return w;
}

unsigned arb_lb_conga_metric(const arb_lb *lb, uint32_t leaf, uint32_t group, unsigned q,
                             arb_time now)
{
    if (!lb || lb->sc != &lb_scheme_conga) return 0;
    const struct conga *c = lb->priv;
    if (leaf < c->first_leaf || leaf - c->first_leaf >= c->n_leaves || group >= c->n_groups ||
        q >= c->up)
        return 0;
    size_t at = ((size_t)(leaf - c->first_leaf) * c->n_groups + group) * c->up + q;
    return now - c->ctl_at[at] <= c->age ? c->ctl[at] : 0;
}

/* ---- making ------------------------------------------------------------- */

static int conga_create(arb_lb *lb)
{
    struct conga *c = arb_calloc(1, sizeof *c);
    if (!c) return ARB_ENOMEM;
    c->tdre = 20 * ARB_PS_PER_US;
    c->alpha = 0.1;
    c->age = 10 * ARB_PS_PER_MS;
    lb->priv = c;
    return 0;
}

static int conga_option(arb_lb *lb, const char *key, const char *val)
{
    struct conga *c = lb->priv;
    int rc = lb_option_flowlet(lb, key, val);
    if (rc != ARB_ENOENT || !val) return rc;
    if (strcmp(key, "tdre") == 0) {
        rc = arb_topo_parse_time(val, &c->tdre);
        return rc == 0 && c->tdre == 0 ? ARB_ERANGE : rc;
    }
    if (strcmp(key, "alpha") == 0) {
        rc = lb_parse_double(val, &c->alpha);
        return rc == 0 && !(c->alpha > 0 && c->alpha <= 1) ? ARB_ERANGE : rc;
    }
    if (strcmp(key, "age") == 0) return arb_topo_parse_time(val, &c->age);
    if (strcmp(key, "above") == 0) {
        if (strcmp(val, "ar") == 0)
            c->above_ar = 1;
        else if (strcmp(val, "ecmp") == 0)
            c->above_ar = 0;
        else
            return ARB_EPARSE;
        return 0;
    }
    return ARB_ENOENT;
}

static int conga_init(arb_lb *lb, char *err, size_t errlen)
{
    struct conga *c = lb->priv;
    const arb_pgft *g = lb->g;
    if (lb_alloc_flowlets(lb) < 0 || lb_alloc_rng(lb) < 0)
        return arb_errf(err, errlen, ARB_ENOMEM, "load balancing: out of memory");
    c->first_leaf = arb_topo_level_first(lb->t, 1);
    c->n_leaves = arb_topo_level_size(lb->t, 1);
    c->m1 = g->m[1];
    c->n_groups = lb->n_hosts / c->m1;
    c->up = g->h >= 2 ? g->w[2] * g->p[2] : 0;
    if (c->up > 255)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "load balancing: conga: leaves have %u uplinks, at most 255 are supported",
                        c->up);
    size_t cells = (size_t)c->n_leaves * c->n_groups * (c->up ? c->up : 1);
    c->ctl = arb_malloc(cells);
    c->ctl_at = arb_malloc(cells * sizeof *c->ctl_at);
    c->cfl = arb_malloc(cells);
    c->fb_rr = arb_malloc((size_t)c->n_leaves * c->n_groups);
    c->dre_full = arb_malloc(sizeof *c->dre_full * lb->n_ports);
    if (!c->ctl || !c->ctl_at || !c->cfl || !c->fb_rr || !c->dre_full)
        return arb_errf(err, errlen, ARB_ENOMEM, "load balancing: out of memory");
    /* a link at rate C sending all the time settles at C x Tdre / alpha bytes */
    for (uint32_t p = 0; p < lb->n_ports; p++) {
        double full = (double)lb->ports[p].rate / 8.0 * (double)c->tdre / 1e12 / c->alpha;
        c->dre_full[p] = full < 1 ? 1 : (uint64_t)full;
    }
    return 0;
}

static void conga_reset(arb_lb *lb)
{
    struct conga *c = lb->priv;
    size_t cells = (size_t)c->n_leaves * c->n_groups * c->up;
    memset(c->ctl, 0, cells);
    memset(c->cfl, 0, cells);
    memset(c->fb_rr, 0, (size_t)c->n_leaves * c->n_groups);
    for (size_t i = 0; i < cells; i++)
        c->ctl_at[i] = 0;
}

static void conga_free(arb_lb *lb)
{
    struct conga *c = lb->priv;
    if (!c) return;
    arb_free(c->ctl);
    arb_free(c->ctl_at);
    arb_free(c->cfl);
    arb_free(c->fb_rr);
    arb_free(c->dre_full);
    arb_free(c);
    lb->priv = NULL;
}

static void conga_spec(const arb_lb *lb, char *buf, size_t len)
{
    const struct conga *c = lb->priv;
    char a[32], b[32], d[32];
    lb_fmt_time(a, sizeof a, lb->gap);
    lb_fmt_time(b, sizeof b, c->tdre);
    lb_fmt_time(d, sizeof d, c->age);
    snprintf(buf, len, "conga:gap=%s,table=%llu,tdre=%s,alpha=%g,age=%s,above=%s", a,
             (unsigned long long)(lb->fl_mask + 1), b, c->alpha, d, c->above_ar ? "ar" : "ecmp");
}

/* The DRE the metrics are made of. */
static void conga_install(const arb_lb *lb, arb_sim_config *cfg)
{
    const struct conga *c = lb->priv;
    cfg->dre_period = c->tdre;
    cfg->dre_alpha = c->alpha;
}

const struct lb_scheme lb_scheme_conga = {
    .name = "conga",
    .gap = 500 * ARB_PS_PER_US,
    .create = conga_create,
    .option = conga_option,
    .init = conga_init,
    .reset = conga_reset,
    .free = conga_free,
    .spec = conga_spec,
    .choose = conga_choose,
    .inband = conga_inband,
    .install = conga_install,
};
