/*
 * The run's samples (run.sample): between slices, every port's queue and
 * transmitted bytes by port class (tier, up or down), the Arbor slots in use
 * and run.sample_ports' own series, folded into rows whose memory does not
 * grow with the run (ROWS_MAX), and each class's queue histogram.
 */
#include "scn_run.h"

#include <stdio.h>
#include "base/alloc.h"

#define ROWS_MAX 16384u

/* One sample's figures: per port class, the Arbor slots, and the ports of
 * run.sample_ports (NULL without). */
struct sample_figs {
    const double *util, *qmean;
    const uint32_t *qmax;
    uint32_t live, most;
    const double *port_util;
    const uint32_t *port_q;
};

/* Room for one more row. */
static int grow_rows(arb_scenario_result *r)
{
    if (r->n_rows < r->cap_rows) return 0;
    unsigned nc = r->n_cls;
    size_t nsp = r->n_sp ? r->n_sp : 1;
    uint32_t ncap = r->cap_rows ? r->cap_rows * 2 : 256;
    arb_time *nt = arb_realloc(r->samp_t, ncap * sizeof *nt);
    if (nt) r->samp_t = nt;
    double *nu = arb_realloc(r->samp_util, (size_t)ncap * nc * sizeof *nu);
    if (nu) r->samp_util = nu;
    double *nq = arb_realloc(r->samp_qmean, (size_t)ncap * nc * sizeof *nq);
    if (nq) r->samp_qmean = nq;
    uint32_t *nm = arb_realloc(r->samp_qmax, (size_t)ncap * nc * sizeof *nm);
    if (nm) r->samp_qmax = nm;
    uint32_t *ns = arb_realloc(r->samp_slots, (size_t)ncap * 2 * sizeof *ns);
    if (ns) r->samp_slots = ns;
    double *npu = arb_realloc(r->samp_port_util, (size_t)ncap * nsp * sizeof *npu);
    if (npu) r->samp_port_util = npu;
    uint32_t *npq = arb_realloc(r->samp_port_q, (size_t)ncap * nsp * sizeof *npq);
    if (npq) r->samp_port_q = npq;
    if (!nt || !nu || !nq || !nm || !ns || !npu || !npq) return ARB_ENOMEM;
    r->cap_rows = ncap;
    return 0;
}

static double wmean(double x, double wx, double y, double wy)
{
    return (x * wx + y * wy) / (wx + wy);
}

static uint32_t umax(uint32_t x, uint32_t y)
{
    return x > y ? x : y;
}

/* Merge adjacent rows: the later time, the larger maxima, and the means
 * weighted by the rows' intervals (a row ends at its time and starts at
 * the previous row's, the first at 0; slices grow while the fabric idles,
 * so intervals differ). */
static void halve_rows(arb_scenario_result *r)
{
    unsigned nc = r->n_cls;
    size_t np = r->n_sp;
    for (uint32_t i = 0; i < r->n_rows / 2; i++) {
        size_t a = (size_t)2 * i * nc, b = a + nc, o = (size_t)i * nc;
        arb_time t0 = i ? r->samp_t[2 * i - 1] : 0, t1 = r->samp_t[2 * i],
                 t2 = r->samp_t[2 * i + 1];
        double wa = (double)(t1 - t0), wb = (double)(t2 - t1);
        if (wa + wb <= 0) wa = wb = 1;
        for (unsigned c = 0; c < nc; c++) {
            r->samp_util[o + c] = wmean(r->samp_util[a + c], wa, r->samp_util[b + c], wb);
            r->samp_qmean[o + c] = wmean(r->samp_qmean[a + c], wa, r->samp_qmean[b + c], wb);
            r->samp_qmax[o + c] = umax(r->samp_qmax[a + c], r->samp_qmax[b + c]);
        }
        uint32_t *sa = r->samp_slots + 4 * (size_t)i, *so = r->samp_slots + 2 * (size_t)i;
        uint32_t live = (uint32_t)(wmean(sa[0], wa, sa[2], wb) + 0.5), most = umax(sa[1], sa[3]);
        so[0] = live;
        so[1] = most;
        for (size_t k = 0; k < np; k++) {
            size_t pa = 2 * i * np + k, pb = pa + np, po = i * np + k;
            r->samp_port_util[po] = wmean(r->samp_port_util[pa], wa, r->samp_port_util[pb], wb);
            r->samp_port_q[po] = umax(r->samp_port_q[pa], r->samp_port_q[pb]);
        }
        r->samp_t[i] = t2;
    }
    r->n_rows /= 2;
    r->row_every *= 2;
}

/* The row in progress, as written: a row of one sample keeps its figures
 * as they are; more, their means weighted by the samples' intervals. */
void scn_pending_row(const arb_scenario_result *r, double *util, double *qmean, uint32_t *live,
                     double *port_util)
{
    int one = r->pend_n == 1 || r->pend_secs <= 0;
    for (unsigned c = 0; c < r->n_cls; c++) {
        util[c] = one ? r->last_util[c] : r->pend_util[c] / r->pend_secs;
        qmean[c] = one ? r->last_qmean[c] : r->pend_qmean[c] / r->pend_secs;
    }
    *live = (uint32_t)(one ? r->last_live : r->pend_live / r->pend_secs + 0.5);
    for (uint32_t k = 0; port_util && k < r->n_sp; k++)
        port_util[k] = one ? r->last_port_util[k] : r->pend_port_util[k] / r->pend_secs;
}

static void clear_pending(arb_scenario_result *r)
{
    for (unsigned c = 0; c < r->n_cls; c++) {
        r->pend_util[c] = r->pend_qmean[c] = 0;
        r->pend_qmax[c] = 0;
    }
    for (uint32_t k = 0; k < r->n_sp; k++) {
        r->pend_port_util[k] = 0;
        r->pend_port_q[k] = 0;
    }
    r->pend_live = 0;
    r->pend_most = 0;
    r->pend_n = 0;
    r->pend_secs = 0;
}

/* Add one sample's figures (over `secs`) to the row in progress; write the
 * row when it holds row_every samples. */
static int add_to_row(arb_scenario_result *r, arb_time t, double secs, const struct sample_figs *f)
{
    unsigned nc = r->n_cls;
    if (!r->row_every) r->row_every = 1;
    for (unsigned c = 0; c < nc; c++) {
        r->pend_util[c] += f->util[c] * secs;
        r->pend_qmean[c] += f->qmean[c] * secs;
        r->last_util[c] = f->util[c];
        r->last_qmean[c] = f->qmean[c];
        r->pend_qmax[c] = umax(r->pend_qmax[c], f->qmax[c]);
    }
    r->pend_live += f->live * secs;
    r->last_live = f->live;
    r->pend_most = umax(r->pend_most, f->most);
    for (uint32_t k = 0; k < r->n_sp; k++) {
        r->pend_port_util[k] += f->port_util[k] * secs;
        r->last_port_util[k] = f->port_util[k];
        r->pend_port_q[k] = umax(r->pend_port_q[k], f->port_q[k]);
    }
    r->pend_secs += secs;
    r->pend_t = t;
    if (++r->pend_n < r->row_every) return 0;
    if (r->n_rows == ROWS_MAX) {
        halve_rows(r);
        return 0;
    }
    if (grow_rows(r) != 0) return ARB_ENOMEM;
    size_t row = (size_t)r->n_rows * nc, prow = (size_t)r->n_rows * r->n_sp;
    scn_pending_row(r, r->samp_util + row, r->samp_qmean + row,
                    &r->samp_slots[2 * (size_t)r->n_rows], r->samp_port_util + prow);
    r->samp_slots[2 * (size_t)r->n_rows + 1] = r->pend_most;
    for (unsigned c = 0; c < nc; c++)
        r->samp_qmax[row + c] = r->pend_qmax[c];
    for (uint32_t k = 0; k < r->n_sp; k++)
        r->samp_port_q[prow + k] = r->pend_port_q[k];
    r->samp_t[r->n_rows++] = t;
    clear_pending(r);
    return 0;
}

int scn_sample(struct sampler *sp, arb_time t)
{
    arb_scenario_result *r = sp->r;
    unsigned nc = r->n_cls;
    double secs_p = (double)(t - sp->prev_t) / (double)ARB_PS_PER_S;
    double *port_util = r->n_sp ? sp->cur_port_util : NULL;
    uint32_t *port_q = r->n_sp ? sp->cur_port_q : NULL;
    for (uint32_t i = 0; i < r->n_sp; i++) { /* failed ports read 0 */
        port_util[i] = 0;
        port_q[i] = 0;
    }
    double tx[MAX_CLASSES] = {0}, qs[MAX_CLASSES] = {0};
    uint32_t qm[MAX_CLASSES] = {0};
    for (uint32_t p = 0; p < sp->n_ports; p++) {
        unsigned c = sp->cls_of[p];
        if (c == 255) continue;
        uint32_t q = arb_sim_port_queue(sp->s, p);
        arb_sim_port_stats ps;
        arb_sim_port(sp->s, p, &ps);
        tx[c] += (double)(ps.tx_bytes - sp->prev_tx[p]);
        if (sp->port_of && sp->port_of[p] >= 0) {
            const arb_port *pt = arb_topo_port(arb_sim_topo(sp->s), p);
            double bits = (double)pt->rate * secs_p;
            port_util[sp->port_of[p]] =
                bits > 0 ? (double)(ps.tx_bytes - sp->prev_tx[p]) * 8.0 / bits : 0;
            port_q[sp->port_of[p]] = q;
        }
        sp->prev_tx[p] = ps.tx_bytes;
        qs[c] += q;
        if (q > qm[c]) qm[c] = q;
        struct pclass *pc = &r->cls[c];
        pc->sum_q += q;
        pc->n_q++;
        uint32_t b = q == 0 ? 0 : 1 + (q - 1) / r->bucket;
        if (b >= pc->n_hist) b = pc->n_hist - 1;
        pc->hist[b]++;
    }
    double secs = (double)(t - sp->prev_t) / (double)ARB_PS_PER_S;
    double util[MAX_CLASSES], qmean[MAX_CLASSES];
    for (unsigned c = 0; c < nc; c++) {
        const struct pclass *pc = &r->cls[c];
        util[c] = pc->rate_bits > 0 && secs > 0 ? tx[c] * 8.0 / (pc->rate_bits * secs) : 0;
        qmean[c] = pc->ports ? qs[c] / pc->ports : 0;
    }
    uint32_t live = 0, most = 0;
    arb_sim_arbor_slots(sp->s, &live, &most); /* stays 0 without Arbor */
    r->n_samp++;
    sp->prev_t = t;
    struct sample_figs f = {util, qmean, qm, live, most, port_util, port_q};
    int rc = add_to_row(r, t, secs, &f);
    if (rc == 0 && r->watch) rc = scn_watch_sample(r->watch, sp->s, t);
    return rc;
}

int scn_setup_classes(arb_scenario_result *r, const arb_topo *t, uint64_t queue, struct sampler *sp)
{
    unsigned h = arb_topo_height(t);
    r->height = h;
    r->n_cls = 2 * h;
    if (r->n_cls > MAX_CLASSES) r->n_cls = MAX_CLASSES;
    r->bucket = 1024;
    if (queue / 4096 > r->bucket) r->bucket = (uint32_t)(queue / 4096);
    uint32_t n_hist = (uint32_t)(queue / r->bucket + 3);
    for (unsigned c = 0; c < r->n_cls; c++) {
        struct pclass *pc = &r->cls[c];
        unsigned tier = c / 2;
        int up = c % 2 == 0;
        snprintf(pc->name, sizeof pc->name, "tier%u_%s", tier, up ? "up" : "down");
        const char *lo = arb_topo_level_name(t, tier), *hi = arb_topo_level_name(t, tier + 1);
        snprintf(pc->label, sizeof pc->label, "%s->%s", up ? lo : hi, up ? hi : lo);
        pc->hist = arb_calloc(n_hist, sizeof *pc->hist);
        if (!pc->hist) return ARB_ENOMEM;
        pc->n_hist = n_hist;
    }
    uint32_t np = arb_topo_n_ports(t);
    sp->n_ports = np;
    sp->cls_of = arb_malloc(np ? np : 1);
    sp->prev_tx = arb_calloc(np ? np : 1, sizeof *sp->prev_tx);
    if (!sp->cls_of || !sp->prev_tx) return ARB_ENOMEM;
    const arb_port *ports = arb_topo_ports(t);
    for (uint32_t p = 0; p < np; p++) {
        unsigned c = 2u * ports[p].tier + (ports[p].role == ARB_LINK_UP ? 0 : 1);
        if (ports[p].failed || c >= r->n_cls) {
            sp->cls_of[p] = 255;
            continue;
        }
        sp->cls_of[p] = (uint8_t)c;
        r->cls[c].ports++;
        r->cls[c].rate_bits += (double)ports[p].rate;
    }
    return 0;
}
