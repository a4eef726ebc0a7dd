/* The simulator's public API and event loop. */
#include "prefetch.h"
#include "sim_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/alloc.h"

static const char *const transport_names[] = {"gbn", "irn"};

const char *arb_transport_name(int t)
{
    return t >= 0 && t <= ARB_TRANSPORT_IRN ? transport_names[t] : NULL;
}

int arb_transport_parse(const char *name)
{
    if (!name) return ARB_ENOENT;
    if (strcasecmp(name, "gbn") == 0 || strcasecmp(name, "roce") == 0 ||
        strcasecmp(name, "go-back-n") == 0)
        return ARB_TRANSPORT_GBN;
    if (strcasecmp(name, "irn") == 0) return ARB_TRANSPORT_IRN;
    return ARB_ENOENT;
}

void arb_sim_config_default(arb_sim_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->seed = 1;
    cfg->mtu = 4096;
    cfg->hdr_bytes = 82;
    cfg->ctrl_bytes = 86;
    cfg->queue_bytes = 2u << 20;
    cfg->ecn = 1;
    cfg->ecn_kmin = 100000;
    cfg->ecn_kmax = 400000;
    cfg->ecn_pmax = 0.2;
    cfg->pfc = 0;
    cfg->pfc_xoff = 512000;
    cfg->pfc_xon = 256000;
    cfg->transport = ARB_TRANSPORT_GBN;
    cfg->rto = ARB_PS_PER_MS;
    cfg->rto_low = 0; /* derived from the fabric (rdma_timers) */
    cfg->rto_high = 0;
    cfg->rto_low_n = ARB_SIM_RTO_LOW_N;
    cfg->tlp = ARB_SIM_TLP_AUTO;
    cfg->retry_limit = ARB_SIM_RETRY_LIMIT;
    cfg->window = 0;
    cfg->ack_every = 1;
    cfg->irn_reorder = 0;
    cfg->dcqcn = 0;
    cfg->dcqcn_cnp_interval = 50 * ARB_PS_PER_US;
    cfg->dcqcn_g = 1.0 / 256;
    cfg->dcqcn_alpha_timer = 55 * ARB_PS_PER_US;
    cfg->dcqcn_rate_timer = 55 * ARB_PS_PER_US;
    cfg->dcqcn_byte_counter = 10000000;
    cfg->dcqcn_f = 5;
    cfg->dcqcn_rai = 40000000;
    cfg->dcqcn_rhai = 400000000;
    cfg->dcqcn_min_rate = 100000000;
    cfg->dre_alpha = 0.1;
    cfg->reorder_delay = 10 * ARB_PS_PER_US;
    cfg->local_order = 1;
    cfg->log.max_level = ARB_LOG_WARN;
}

static int check_config(const arb_sim_config *c)
{
    if (!c->route || c->mtu == 0 || (uint64_t)c->mtu + c->hdr_bytes > 65535 || c->ctrl_bytes == 0 ||
        c->ctrl_bytes > 65535 || c->ack_every == 0 || c->queue_bytes == 0 || c->rto == 0 ||
        c->transport > ARB_TRANSPORT_IRN)
        return ARB_EINVAL;
    if ((c->rto_low && c->rto_high && c->rto_low > c->rto_high) ||
        (c->tlp != ARB_SIM_TLP_AUTO && c->tlp != 0 && c->tlp != 1))
        return ARB_EINVAL;
    if (c->ecn && (c->ecn_kmax <= c->ecn_kmin || c->ecn_pmax < 0 || c->ecn_pmax > 1))
        return ARB_EINVAL;
    if (c->pfc && c->pfc_xon >= c->pfc_xoff) return ARB_EINVAL;
    if (c->dcqcn && (!(c->dcqcn_g > 0 && c->dcqcn_g <= 1) || c->dcqcn_alpha_timer == 0 ||
                     c->dcqcn_rate_timer == 0 || c->dcqcn_byte_counter == 0 ||
                     c->dcqcn_min_rate == 0 || c->dcqcn_min_rate > ARB_RATE_MAX))
        return ARB_EINVAL;
    if (c->dre_period && !(c->dre_alpha > 0 && c->dre_alpha <= 1)) return ARB_EINVAL;
    if (!(c->loss >= 0 && c->loss < 1) || !(c->dup >= 0 && c->dup < 1) ||
        !(c->reorder >= 0 && c->reorder < 1) || (c->reorder > 0 && c->reorder_delay == 0))
        return ARB_EINVAL;
    return 0;
}

_Static_assert(sizeof(struct sport) == 64, "a port's hot state is one cache line");

/* What a link does to the packets on it, beside its rate and delay. */
struct link_faults {
    double loss, dup, reorder;
    int cut;     /* from this part across the cut (PCUT_OUT) */
    uint32_t to; /* then, the part it leads to (else 0) */
};

static uint64_t prob_bits(double p)
{
    return (uint64_t)(p * 0x1.0p53);
}

static uint32_t link_hash(uint64_t rate, arb_time delay, const struct link_faults *f)
{
    uint64_t z = rate * UINT64_C(0x9E3779B97F4A7C15) ^ delay * UINT64_C(0xC2B2AE3D27D4EB4F) ^
                 prob_bits(f->loss) * UINT64_C(0x165667B19E3779F9) ^
                 prob_bits(f->dup) * UINT64_C(0x27D4EB2F165667C5) ^
                 prob_bits(f->reorder) * UINT64_C(0x94D049BB133111EB) ^ (uint64_t)f->cut ^
                 (uint64_t)f->to << 1;
    return (uint32_t)(z >> 32);
}

/* 8 * 10^12 / rate when it is whole and the rate valid (arb_time_tx's
 * ceiling of bytes * 8 * 10^12 / rate is then bytes times it), else 0. */
static arb_time ps_per_byte(uint64_t rate)
{
    const uint64_t bit_ps = 8 * (uint64_t)ARB_PS_PER_S;
    return rate && rate <= ARB_RATE_MAX && bit_ps % rate == 0 ? bit_ps / rate : 0;
}

/* The class of (rate, delay, faults) among lk[0..*n), added as class *n if
 * new (ARB_ERANGE when that would be one too many). map has mask + 1 slots,
 * more than twice SIM_MAX_LINKS or the ports, each 0 or a class + 1. */
static int64_t link_class(struct slink *lk, uint32_t *n, uint32_t *map, uint32_t mask,
                          uint64_t rate, arb_time delay, const struct link_faults *f)
{
    for (uint32_t h = link_hash(rate, delay, f) & mask;; h = (h + 1) & mask) {
        if (map[h] == 0) {
            if (*n == SIM_MAX_LINKS) return ARB_ERANGE;
            lk[*n].rate = rate;
            lk[*n].delay = delay;
            lk[*n].mbps = (rate + 999999) / 1000000;
            lk[*n].ps_per_byte = ps_per_byte(rate);
            lk[*n].loss = f->loss;
            lk[*n].dup = f->dup;
            lk[*n].reorder = f->reorder;
            lk[*n].odd = (uint8_t)((f->loss > 0 || f->dup > 0 || f->reorder > 0 ? LK_FATE : 0) |
                                   (f->cut ? LK_CUT : 0));
            lk[*n].to = f->to;
            map[h] = ++*n;
            return *n - 1;
        }
        const struct slink *c = &lk[map[h] - 1];
        if (c->rate == rate && c->delay == delay && c->loss == f->loss && c->dup == f->dup &&
            c->reorder == f->reorder && !!(c->odd & LK_CUT) == !!f->cut && c->to == f->to)
            return map[h] - 1;
    }
}

/* Port p's link faults: its own where set, else the configuration's. */
static struct link_faults faults_of(const arb_sim *s, uint32_t p)
{
    double loss = arb_topo_link_loss(s->topo, p), dup = arb_topo_link_dup(s->topo, p),
           reorder = arb_topo_link_reorder(s->topo, p);
    int cut = s->pcut && s->pcut[p] == PCUT_OUT;
    return (struct link_faults){loss >= 0 ? loss : s->cfg.loss, dup >= 0 ? dup : s->cfg.dup,
                                reorder >= 0 ? reorder : s->cfg.reorder, cut,
                                cut ? part_of_far(s, p) : 0};
}

int sim_links(arb_sim *s)
{
    uint32_t n_ports = s->n_ports, n = 0;
    uint32_t want = n_ports < SIM_MAX_LINKS ? n_ports : SIM_MAX_LINKS, mask = 63;
    while (mask < 2 * want + 1)
        mask = mask * 2 + 1;
    struct slink *lk = arb_malloc((want ? want : 1) * sizeof *lk);
    uint32_t *map = arb_calloc((size_t)mask + 1, sizeof *map);
    uint16_t *cls = arb_malloc((n_ports ? n_ports : 1) * sizeof *cls);
    int rc = lk && map && cls ? 0 : ARB_ENOMEM;
    for (uint32_t p = 0; rc == 0 && p < n_ports; p++) {
        struct link_faults f = faults_of(s, p);
        int64_t c = link_class(lk, &n, map, mask, s->ports[p].rate, s->ports[p].delay, &f);
        if (c < 0)
            rc = (int)c;
        else
            cls[p] = (uint16_t)c;
    }
    if (rc == 0) {
        if (s->cfg.tap || s->cfg.dre_period)
            for (uint32_t c = 0; c < n; c++)
                lk[c].odd |= LK_SEEN;
        for (uint32_t p = 0; p < n_ports; p++) {
            s->sp[p].link = cls[p];
            s->sp[p].failed = s->ports[p].failed;
        }
        arb_free(s->lk);
        s->lk = lk;
        s->n_lk = n;
        lk = NULL;
    }
    arb_free(lk);
    arb_free(map);
    arb_free(cls);
    return rc;
}

/* n zeroed ports on cache-line boundaries. */
static struct sport *sport_array(uint32_t n)
{
    size_t bytes = ((size_t)n ? n : 1) * sizeof(struct sport);
    struct sport *sp = arb_aligned_alloc(64, bytes);
    if (sp) memset(sp, 0, bytes);
    return sp;
}

int arb_sim_new(arb_sim **out, const arb_topo *topo, const arb_sim_config *cfg)
{
    *out = NULL;
    if (!topo || !cfg) return ARB_EINVAL;
    int rc = check_config(cfg);
    if (rc < 0) return rc;
    uint32_t n_ports = arb_topo_n_ports(topo);
    uint32_t n_hosts = arb_topo_n_hosts(topo);
    /* the targets: 4 a port, 2 a host, a port's reorder releases, a host's
     * deferred starts and Arbor entries, a switch's Arbor timer */
    if ((uint64_t)n_ports * 5 + 4 * (uint64_t)n_hosts + arb_topo_n_nodes(topo) > EVQ_TARGET_MAX)
        return ARB_ERANGE;
    arb_sim *s = arb_calloc(1, sizeof *s);
    if (!s) return ARB_ENOMEM;
    s->cfg = *cfg;
    s->topo = topo;
    s->nodes = arb_topo_nodes(topo);
    s->ports = arb_topo_ports(topo);
    s->n_ports = n_ports;
    s->n_hosts = n_hosts;
    s->pf_min_bytes = PF_MIN_BYTES;
    s->pf_cur = PF_SLOTS;
    for (uint32_t i = 0; i <= PF_SLOTS; i++) { /* clear: no node counted */
        s->pf.node[i] = s->pf.port[i] = s->pf.host[i] = s->pf.conn[i] = PKT_NONE;
        s->pf.tok[i] = 0;
        s->pf.count[i] = 0;
    }
    s->pf_pend = arb_calloc(arb_topo_n_nodes(topo) ? arb_topo_n_nodes(topo) : 1, 1);
    s->pgft = arb_topo_pgft(topo);
    s->topo_gen = arb_topo_failure_gen_ref(topo);
    s->sp = sport_array(n_ports);
    s->spc = arb_calloc(n_ports, sizeof *s->spc);
    s->hosts = arb_aligned_alloc(64, (n_hosts ? n_hosts : 1) * sizeof *s->hosts);
    if (s->hosts) memset(s->hosts, 0, (n_hosts ? n_hosts : 1) * sizeof *s->hosts);
    s->txm = arb_calloc(TX_MEMO, sizeof *s->txm);
    s->owner = arb_malloc((n_ports ? n_ports : 1) * sizeof *s->owner);
    s->far = arb_malloc((n_ports ? n_ports : 1) * sizeof *s->far);
    if (!s->sp || !s->spc || !s->hosts || !s->txm || !s->owner || !s->far || !s->pf_pend ||
        evq_init(&s->q, 1024) < 0 || net_init(s) < 0) {
        arb_sim_free(s);
        return ARB_ENOMEM;
    }
    int lrc = sim_links(s);
    if (lrc < 0) {
        arb_sim_free(s);
        return lrc;
    }
    rdma_timers(s);
    pool_init(&s->pool);
    arb_rng_seed(&s->rng, cfg->seed);
    if (cfg->local_order) evq_set_local(&s->q);
    for (uint32_t p = 0; p < n_ports; p++) {
        struct sport *sp = &s->sp[p];
        sp->q.head = sp->q.tail = PKT_NONE;
        sp->wire.head = sp->wire.tail = PKT_NONE;
        s->spc[p].late.head = s->spc[p].late.tail = PKT_NONE;
        /* a port whose start may wait (PFC), or whose DRE counts a packet as
         * it starts (CONGA), has its events; the others schedule at once */
        sp->kind = cfg->pfc || cfg->dre_period ? PORT_EVENTS : PORT_SCHED;
        if (sp->kind == PORT_SCHED) sp->sched.head = PKT_NONE; /* PORT_EVENTS: pfc, zeroed */
    }
    for (uint32_t v = 0; v < arb_topo_n_nodes(topo); v++) {
        const arb_node *n = &s->nodes[v];
        for (uint32_t p = n->first_port; p < n->first_up + n->n_up; p++)
            s->owner[p] = v;
    }
    for (uint32_t p = 0; p < n_ports; p++) {
        s->far[p].node = s->ports[p].peer;
        s->far[p].in = s->ports[p].peer_port;
    }
    for (uint32_t h = 0; h < n_hosts; h++) {
        const arb_node *n = &s->nodes[h];
        s->hosts[h].nic_port = n->first_up;
        s->hosts[h].timer_at = ARB_TIME_NEVER;
        for (uint32_t q = 0; q < n->n_up; q++) {
            struct sport *sp = &s->sp[n->first_up + q];
            sp->kind = NIC_HOST;
            sp->arb_tx.head = sp->arb_tx.tail = PKT_NONE;
        }
    }
    *out = s;
    return 0;
}

void arb_sim_free(arb_sim *s)
{
    if (!s) return;
    part_free(s);
    arbor_free(s);
    for (uint32_t c = 0; c < s->n_conns; c++)
        rdma_conn_free(&s->conns[c]);
    arb_free(s->conns);
    arb_free(s->gup);
    arb_free(s->done);
    rdma_defer_free(s);
    if (s->hosts)
        for (uint32_t h = 0; h < s->n_hosts; h++) {
            arb_free(s->hosts[h].conns);
            arb_free(s->hosts[h].pend);
        }
    arb_free(s->hosts);
    arb_free(s->sp);
    arb_free(s->spc);
    arb_free(s->txm);
    arb_free(s->owner);
    arb_free(s->far);
    arb_free(s->lk);
    arb_free(s->pf_pend);
    net_free(s);
    evq_free(&s->q);
    pool_free_all(&s->pool);
    arb_free(s);
}

const arb_topo *arb_sim_topo(const arb_sim *s)
{
    return s->topo;
}

void arb_sim_get_timers(const arb_sim *s, arb_sim_timers *t)
{
    *t = s->tm;
}

uint32_t arb_sim_port_queue(const arb_sim *s, uint32_t port)
{
    uint32_t q;
    if (port >= s->n_ports) return 0;
    if (s->part && part_port_mirror(s, port, &q, NULL)) return q;
    return net_queue_bytes(s, port);
}

arb_time arb_sim_now(const arb_sim *s)
{
    return s->part && !s->in_run ? part_now(s, 0) : s->now;
}

arb_time arb_sim_last_activity(const arb_sim *s)
{
    return s->part && !s->in_run ? part_now(s, 1) : s->active;
}

int arb_sim_add_flow(arb_sim *s, uint32_t src, uint32_t dst, uint64_t bytes, arb_time start,
                     uint16_t sport, uint32_t qp, uint32_t *id)
{
    if (src >= s->n_hosts || dst >= s->n_hosts || src == dst || bytes == 0) return ARB_EINVAL;
    if (s->n_conns >= SIM_SENT_BIT) return ARB_ENOMEM; /* flow indices fit in 31 bits */
    uint64_t n_pkts = (bytes + s->cfg.mtu - 1) / s->cfg.mtu;
    if (n_pkts > ARB_SIM_FLOW_MAX_PKTS) return ARB_ERANGE;
    if (s->n_conns == s->cap_conns) {
        uint32_t ncap = s->cap_conns ? s->cap_conns * 2 : 64;
        struct conn *nc = arb_aligned_alloc(64, ncap * sizeof *nc); /* line-aligned: conn */
        if (!nc) return ARB_ENOMEM;
        if (s->n_conns) memcpy(nc, s->conns, s->n_conns * sizeof *nc);
        arb_free(s->conns);
        s->conns = nc;
        s->cap_conns = ncap;
    }
    if (rdma_host_reserve(s, src) < 0) return ARB_ENOMEM;
    /* a partitioned run's callbacks run at the window's end: what they start
     * must start after it (docs/partition.md, workload.start_delay) */
    if (s->part && part_late_start(s, start)) {
        if (!s->error) s->error = ARB_ESTATE;
        return ARB_ESTATE;
    }
    uint32_t cid = s->n_conns;
    struct conn *c = &s->conns[cid];
    memset(c, 0, sizeof *c);
    c->src = src;
    c->dst = dst;
    c->sport = sport;
    c->qp = qp & 0xFFFFFF;
    c->bytes = bytes;
    c->n_pkts = (uint32_t)n_pkts;
    c->last_payload = (uint32_t)(bytes - (n_pkts - 1) * s->cfg.mtu);
    c->start = start < s->now ? s->now : start;
    c->rto_at = ARB_TIME_NEVER;
    c->pto_at = ARB_TIME_NEVER;
    c->finish = ARB_TIME_NEVER;
    c->gave_up = ARB_TIME_NEVER;
    int rc = rdma_conn_init(s, c);
    if (rc < 0) {
        rdma_conn_free(c);
        return rc;
    }
    s->n_conns++;
    if (s->in_report && c->start > s->now) { /* a completion's next flow, to start later */
        rc = rdma_defer(s, src, cid);
        if (rc < 0 && !s->error) s->error = rc;
    } else {
        rdma_host_add(s, src, cid);
    }
    if (id) *id = cid;
    return s->error;
}

/* x after v[0 .. *n), of room *cap, which doubles when full; out of
 * memory, the run ends with ARB_ENOMEM. */
static void list_push(arb_sim *s, uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t x)
{
    if (*n == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 16;
        uint32_t *nv = arb_realloc(*v, ncap * sizeof *nv);
        if (!nv) {
            if (!s->error) s->error = ARB_ENOMEM;
            return;
        }
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = x;
}

void sim_note_done(arb_sim *s, uint32_t flow)
{
    list_push(s, &s->done, &s->n_done, &s->cap_done, flow);
}

void sim_gave_up(arb_sim *s, uint32_t f)
{
    s->conns[f].gave_up = s->now;
    s->n_gave_up++;
    if (s->part) list_push(s, &s->gup, &s->n_gup, &s->cap_gup, f);
}

/* The sums gave_up_merge makes, in blocks of this many numbers. */
#define GAVE_UP_BLOCK 256

/*
 * The flows given up in a partitioned run just ended, when some part's
 * senders gave up some (s->n_gup of this part's): every part learns of all
 * of them, so that every part's figures (arb_sim_flow, arb_sim_get_stats)
 * are the whole run's. Where each part's list goes (after the lists of the
 * parts below it), then the lists, as (flow, time) pairs, summed over the
 * parts in blocks of fixed size: nothing is allocated, so every part makes
 * the same calls whatever happens. Collective; 0 or an ARB_E* code of the
 * operations.
 */
static int gave_up_merge(arb_sim *s)
{
    uint64_t v[GAVE_UP_BLOCK];
    uint32_t parts = part_count(s), me = part_rank(s);
    uint64_t total = 0, below = 0;
    for (uint32_t r0 = 0; r0 < parts; r0 += GAVE_UP_BLOCK) {
        uint32_t n = parts - r0 < GAVE_UP_BLOCK ? parts - r0 : GAVE_UP_BLOCK;
        memset(v, 0, n * sizeof *v);
        if (me >= r0 && me - r0 < n) v[me - r0] = s->n_gup;
        int rc = part_allsum(s, v, n);
        if (rc < 0) return rc;
        for (uint32_t k = 0; k < n; k++) {
            total += v[k];
            if (r0 + k < me) below += v[k];
        }
    }
    for (uint64_t e0 = 0; e0 < total; e0 += GAVE_UP_BLOCK / 2) {
        uint32_t n = total - e0 < GAVE_UP_BLOCK / 2 ? (uint32_t)(total - e0) : GAVE_UP_BLOCK / 2;
        memset(v, 0, 2 * n * sizeof *v);
        for (uint32_t k = 0; k < n; k++)
            if (e0 + k >= below && e0 + k - below < s->n_gup) {
                uint32_t f = s->gup[e0 + k - below];
                v[2 * k] = f;
                v[2 * k + 1] = s->conns[f].gave_up;
            }
        int rc = part_allsum(s, v, 2 * n);
        if (rc < 0) return rc;
        for (uint32_t k = 0; k < n; k++) {
            struct conn *c = v[2 * k] < s->n_conns ? &s->conns[v[2 * k]] : NULL;
            if (c && c->gave_up == ARB_TIME_NEVER) { /* another part's sender's */
                c->gave_up = v[2 * k + 1];
                s->n_gave_up++;
            }
        }
    }
    s->n_gup = 0;
    return 0;
}

/* After a partitioned run (collective): the earliest event left over the
 * parts (arb_sim_next_event), and whether any part's senders gave up flows
 * in it, in one reduction; then those flows (gave_up_merge). */
static int part_after_run(arb_sim *s)
{
    uint64_t v[2] = {evq_peek_time(&s->q), s->n_gup ? 0 : 1};
    int rc = part_allmin(s, v, 2);
    if (rc < 0) return rc;
    s->next_event = v[0];
    return v[1] ? 0 : gave_up_merge(s);
}

static void report_done(arb_sim *s)
{
    /* Callbacks may finish nothing new (they only add flows), but walk by
     * index in case one does. */
    s->in_report = 1;
    for (uint32_t i = 0; i < s->n_done; i++) {
        uint32_t f = s->done[i];
        if (f == SIM_ARBOR_NOTE)
            arbor_report(s);
        else if (f & SIM_SENT_BIT)
            s->cfg.on_flow_sent(s->cfg.sent_ctx, s, f & ~SIM_SENT_BIT, s->now);
        else
            s->cfg.on_flow_done(s->cfg.done_ctx, s, f, s->now);
    }
    s->in_report = 0;
    s->n_done = 0;
}

/* A port's event (target < port_events), the common case: first. */
static SIM_ALWAYS_INLINE void dispatch(arb_sim *s, uint32_t target, uint64_t seq,
                                       uint32_t port_events)
{
    if (target < port_events) {
        uint32_t port = target >> 2;
        switch (target & 3) {
        case EV_TXDONE:
            net_on_txdone(s, port);
            break;
        case EV_ARRIVE:
            net_on_arrive(s, port);
            break;
        case EV_PAUSE:
            net_on_pause(s, port, 1);
            break;
        default:
            net_on_pause(s, port, 0);
            break;
        }
        return;
    }
    if (target >= port_events + 2 * s->n_hosts) {
        uint32_t x = target - port_events - 2 * s->n_hosts;
        if (x >= s->n_ports + 2 * s->n_hosts)
            arbor_on_switch_timer(s, x - s->n_ports - 2 * s->n_hosts, seq);
        else if (x >= s->n_ports + s->n_hosts)
            arbor_on_enter(s, x - s->n_ports - s->n_hosts);
        else if (x >= s->n_ports)
            rdma_on_start(s, x - s->n_ports);
        else
            net_on_late(s, x);
        return;
    }
    if (target >= port_events + s->n_hosts) {
        arbor_on_timer(s, target - port_events - s->n_hosts, seq);
        return;
    }
    uint32_t h = target - port_events;
    if (seq == s->hosts[h].timer_seq && s->hosts[h].timer_at == s->now)
        rdma_on_timer(s, h);
    else
        s->idle = 1; /* superseded by a timer armed earlier since: nothing happens */
}

/* A partitioned run's event changed the live packets (part_live0 to
 * pool.live, at most pool.peak): noted for the pool's peak over the parts
 * (part.c, live_window). */
static SIM_ALWAYS_INLINE void note_live(arb_sim *s, uint32_t target)
{
    struct live_log *L = &s->plog;
    int64_t delta = (int64_t)s->pool.live - s->part_live0;
    int64_t up = (int64_t)s->pool.peak - s->part_live0;
    if (L->cur + up > L->up) L->up = L->cur + up;
    L->cur += delta;
    if (L->n == L->cap && part_live_grow(s) < 0) {
        if (!s->error) s->error = ARB_ENOMEM;
        return;
    }
    L->v[L->n++] = (struct lnote){s->now, target, (int32_t)delta, (uint32_t)up};
}

/* The event loop: every event due by `until`. `part`: this is one part of
 * a partitioned run's window, whose completions wait for the window's end
 * (part.c) and whose changes of live packets are noted (the pool's peak);
 * it stops after the event (part_stop_t, part_stop_target) when one is
 * set (arb_sim_part_stop_after). */
static SIM_ALWAYS_INLINE void event_loop(arb_sim *s, arb_time until, int part)
{
    arb_time t;
    uint32_t target;
    uint64_t seq;
    uint32_t port_events = s->n_ports << 2;
    int popped = 0;
    if (part && s->part_stop_t < until) until = s->part_stop_t;
    while (!s->error && (popped = evq_pop_until(&s->q, until, &t, &target, &seq)) > 0) {
        /* past the event a re-run stops after: the run ends there */
        if (part && t == s->part_stop_t && target > s->part_stop_target) break;
        if (s->pool.made != s->pf_made) sim_pf_decide(s);
        if (s->pf_on) prefetch_ahead(s, port_events);
        s->now = t;
        s->st.events++;
        if (part) { /* the event's change of live packets, for the pool's peak (part.c) */
            s->part_target = target;
            s->part_live0 = s->pool.live;
            s->pool.peak = s->pool.live; /* a part's own peak means nothing: the event's, here */
        }
        dispatch(s, target, seq, port_events);
        /* (peak >= live0, since it was live0 and only climbs; it is live0 and
         * live is too unless the event changed the live packets) */
        if (part && (s->pool.peak != s->part_live0 || s->pool.live != s->part_live0))
            note_live(s, target);
        if (s->idle)
            s->idle = 0;
        else
            s->active = t;
        if (s->n_done) {
            if (part && !s->part_solo) {
                part_take_done(s, target);
            } else { /* whole, or the only part: no other part to tell first */
                report_done(s);
                until = s->stop_at; /* a callback may have asked to stop sooner */
                if (part && s->part_stop_t < until) until = s->part_stop_t;
            }
        }
    }
    if (!s->error && popped < 0) s->error = popped; /* the event queue could not grow */
}

void sim_run_window(arb_sim *s, arb_time until)
{
    s->in_run = 1;
    sim_pf_decide(s);
    s->stop_at = until;
    event_loop(s, until, 1);
    s->in_run = 0;
}

int arb_sim_run(arb_sim *s, arb_time until)
{
    sim_forget_guesses(s); /* the fabric may have changed between runs */
    if (s->part) {
        int rc = part_run(s, until);
        int arc = part_after_run(s); /* (every part alike) */
        if (arc < 0 && !s->error) s->error = arc;
        return rc < 0 ? rc : s->error;
    }
    s->in_run = 1;
    sim_pf_decide(s);
    s->stop_at = until;
    event_loop(s, until, 0);
    s->in_run = 0;
    /* every event up to here is done: `until`, or where a callback's timer
     * stopped the run (arb_sim_stop_at) */
    if (!s->error && s->stop_at > s->horizon) s->horizon = s->stop_at;
    s->next_event = evq_peek_time(&s->q);
    return s->error;
}

void sim_to_run_end(arb_sim *s)
{
    if (s->in_run || s->horizon == ARB_TIME_NEVER || s->horizon <= s->now) return;
    s->now = s->horizon;
    if (s->part) part_moved_to(s, s->now);
}

arb_time arb_sim_next_event(const arb_sim *s)
{
    return s->next_event;
}

void arb_sim_stop_at(arb_sim *s, arb_time t)
{
    if (t < s->now) t = s->now;
    if (t < s->stop_at) s->stop_at = t;
}

uint32_t arb_sim_n_flows(const arb_sim *s)
{
    return s->n_conns;
}

int arb_sim_flow(const arb_sim *s, uint32_t id, arb_sim_flow_result *r)
{
    if (id >= s->n_conns) return ARB_EINVAL;
    const struct conn *c = &s->conns[id];
    r->src = c->src;
    r->dst = c->dst;
    r->bytes = c->bytes;
    r->start = c->start;
    r->finish = c->finish;
    r->retx_bytes = c->retx_bytes;
    r->ooo_pkts = c->ooo_pkts;
    r->timeouts = c->timeouts;
    r->tlp_probes = c->tlp_probes;
    r->reorder_peak_bytes = c->reorder_peak;
    r->cnps = c->cc.cnps;
    r->rate_cuts = c->cc.cuts;
    r->min_rate = (uint64_t)c->cc.min_rc;
    r->sport = c->sport;
    r->qp = c->qp;
    r->gave_up = c->gave_up;
    return 0;
}

void arb_sim_get_stats(const arb_sim *s, arb_sim_stats *st)
{
    const arb_sim_stats *g = part_stats(s);
    if (g) {
        *st = *g;
        st->flows_gave_up = s->n_gave_up; /* every part's, once merged (gave_up_merge) */
    } else {
        sim_local_stats(s, st);
    }
}

void sim_local_stats(const arb_sim *s, arb_sim_stats *st)
{
    *st = s->st;
    st->flows_gave_up = s->n_gave_up;
    st->in_flight = s->pool.live;
    st->pool_peak = s->pool.peak;
    st->pool_size = s->pool.made;
    arb_time paused = 0;
    uint32_t maxq = 0;
    for (uint32_t p = 0; p < s->n_ports; p++) {
        if (s->pcut && s->pcut[p] > PCUT_OUT) continue; /* another part's port: it counts it */
        const struct sport *sp = &s->sp[p];
        const struct sport_cold *c = &s->spc[p];
        paused += c->paused_ps + (sp->paused ? s->now - c->paused_at : 0);
        if (sp->max_q > maxq) maxq = sp->max_q;
    }
    st->pfc_paused_ps = paused;
    st->max_queue_bytes = maxq;
}

int arb_sim_port(const arb_sim *s, uint32_t port, arb_sim_port_stats *ps)
{
    if (port >= s->n_ports) return ARB_EINVAL;
    if (s->part && part_port_mirror(s, port, NULL, ps)) return 0;
    const struct sport *sp = &s->sp[port];
    net_sent(s, port, &ps->tx_bytes, &ps->tx_pkts);
    const struct sport_cold *c = &s->spc[port];
    ps->drops = c->drops;
    ps->max_queue = sp->max_q;
    ps->paused_ps = c->paused_ps + (sp->paused ? s->now - c->paused_at : 0);
    return 0;
}
