/*
 * The Arbor transport in the simulator (docs/arbor-sim.md; arbor_int.h):
 * the public API and set-up: the state the jobs share, each job's tables,
 * aggregators and engines, its start, and the queries on jobs and ranks.
 */
#include "arbor_int.h"

#include <math.h>
#include <string.h>
#include "base/alloc.h"

/* splitmix64: the start skew's generator (deterministic, seeded). */
static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void arb_sim_arbor_config_default(arb_sim_arbor_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    arb_ep_settings_default(&cfg->ep);
    /* 0: derived from the fabric (arb_sim_arbor_window, arb_sim_arbor_loop) */
    cfg->ep.window = 0;
    cfg->ep.timeout_min = 0;
    cfg->ep.retry_min = 0;
    cfg->slots = ARB_AGG_SLOTS_DEFAULT;
    cfg->local_repair = 1;
    cfg->recredit_min = ARB_AGG_RECREDIT_MIN_DEFAULT;
    cfg->recredit_max = ARB_AGG_RECREDIT_MAX_DEFAULT;
    cfg->recredit_order = 1;
    cfg->cc_kind = ARB_CC_FIXED;
    arb_cc_config_default(&cfg->cc);
    cfg->cc.spacing = 0;
}

arb_time arb_sim_arbor_loop(const arb_sim *s, const arb_plan *plan, uint32_t payload)
{
    if (!s || !plan) return 0;
    arb_time hop = 0;
    uint32_t frame = ARB_FRAME_OVERHEAD + arb_plan_hdr_len(plan) + payload + ARB_WIRE_EXTRA;
    for (uint32_t p = 0; p < s->n_ports; p++) {
        arb_time t = s->ports[p].delay + arb_time_tx(frame, s->ports[p].rate);
        if (s->ports[p].rate && t > hop) hop = t;
    }
    uint32_t levels = arb_plan_root_level(plan) ? arb_plan_root_level(plan) : 1;
    return 4 * (arb_time)levels * hop;
}

/* The slowest host link of the plan's ranks (UINT64_MAX: none has a rate). */
static uint64_t slowest_nic(const arb_sim *s, const arb_plan *plan)
{
    uint64_t rate = UINT64_MAX;
    for (uint32_t h = 0; h < arb_plan_get_config(plan)->n_ranks; h++) {
        uint64_t r = s->ports[s->hosts[arb_plan_host(plan, h)].nic_port].rate;
        if (r && r < rate) rate = r;
    }
    return rate;
}

arb_time arb_sim_arbor_cc_loop(const arb_sim *s, const arb_plan *plan, uint32_t payload)
{
    if (!s || !plan) return 0;
    uint32_t frame = ARB_FRAME_OVERHEAD + arb_plan_hdr_len(plan) + payload + ARB_WIRE_EXTRA;
    uint64_t rate = slowest_nic(s, plan);
    if (rate == UINT64_MAX) return arb_sim_arbor_loop(s, plan, payload);
    /* a host takes part in every channel (a sharded collective) or one: a
     * credit of each can meet at its downlink; the requests they trigger
     * leave at the pace the credits arrived, so they do not queue again */
    uint32_t per_host = arb_plan_n_channels(plan) > 1 ? arb_plan_n_channels(plan) : 1;
    return arb_sim_arbor_loop(s, plan, payload) + (arb_time)per_host * arb_time_tx(frame, rate);
}

uint32_t arb_sim_arbor_window(const arb_sim *s, const arb_plan *plan, uint32_t payload)
{
    if (!s || !plan) return 0;
    uint32_t frame = ARB_FRAME_OVERHEAD + arb_plan_hdr_len(plan) + payload + ARB_WIRE_EXTRA;
    uint64_t rate = slowest_nic(s, plan);
    if (rate == UINT64_MAX) return ARB_SIM_ARBOR_WINDOW_MIN;
    uint32_t per_host = arb_plan_n_channels(plan) > 1 ? arb_plan_n_channels(plan) : 1;
    return arb_cc_loop_window(arb_sim_arbor_cc_loop(s, plan, payload), rate, per_host, frame,
                              ARB_SIM_ARBOR_WINDOW_MIN, 65535);
}

static void job_free(struct ajob *j)
{
    if (!j) return;
    for (uint32_t i = 0; j->eps && i < j->n_eps; i++) {
        arbor_cwin_free(e_committed(&j->eps[i]));
        arb_free(j->eps[i].result);
    }
    arb_host_free(j->host);
    arb_free(j->agg_nodes);
    arb_free(j->host_first);
    arb_free(j->host_eps);
    arb_free(j->ep_at);
    arb_free(j->ep_of);
    arb_free(j->tree_ports);
    arb_free(j->pacct);
    arb_free(j->rank_of_host);
    arb_free(j->start_at);
    arb_free(j->started);
    arb_free(j->idle);
    arb_free(j->reported);
    arb_free(j->entered);
    arb_free(j->live_at);
    arb_free(j);
}

void arbor_free(arb_sim *s)
{
    struct arbor_job *a = s->arb;
    if (!a) return;
    for (uint32_t x = 0; x < a->n_jobs; x++)
        job_free(a->jobs[x]);
    size_t n_agg = (size_t)arb_topo_n_nodes(s->topo) * a->n_parts;
    for (size_t g = 0; a->agg && g < n_agg; g++)
        arb_agg_free(a->agg[g]);
    for (size_t g = 0; a->owner && g < n_agg; g++)
        arb_free(a->owner[g]);
    for (uint32_t n = 0; a->sw && n < arb_topo_n_nodes(s->topo); n++)
        arb_switch_free(a->sw[n]);
    arb_free(a->sw);
    arb_free(a->sw_timer_at);
    arb_free(a->sw_timer_seq);
    if (a->hj)
        for (uint32_t h = 0; h < s->n_hosts; h++)
            arb_free(a->hj[h].v);
    for (uint32_t b = 0; b < a->bp.n; b++)
        arb_free(a->bp.buf[b]);
    arb_free(a->bp.buf);
    arb_free(a->bp.ref);
    arb_free(a->bp.free_ids);
    arb_free(a->agg);
    arb_free(a->owner);
    arb_free(a->acct);
    arb_free(a->left);
    arb_free(a->timer_at);
    arb_free(a->timer_seq);
    arb_free(a->lag);
    arb_free(a->held);
    arb_free(a->busy);
    arb_free(a->core_free);
    arb_free(a->hj);
    arb_free(a->next_port);
    arb_free(a->notes);
    if (a->enters)
        for (uint32_t h = 0; h < s->n_hosts; h++)
            arb_free(a->enters[h].v);
    arb_free(a->enters);
    arb_free(a->chan_job);
    arb_free(a->jobs);
    arb_free(a->hdr);
    arb_free(a->scratch);
    arb_free(a);
    s->arb = NULL;
}

/* Per engine: its NIC port and the port up each subchannel's tree; per
 * host and channel: the engine a packet is for. */
static int route_engines(arb_sim *s, struct ajob *j)
{
    const arb_plan *p = j->p;
    uint32_t subs = arb_plan_get_config(p)->subchannels;
    j->n_channels = arb_plan_n_channels(p);
    j->ep_of = arb_malloc((size_t)s->n_hosts * arb_plan_n_channels(p) * sizeof *j->ep_of);
    j->tree_ports = arb_malloc((size_t)j->n_eps * subs * sizeof *j->tree_ports);
    if (!j->ep_of || !j->tree_ports) return ARB_ENOMEM;
    for (size_t i = 0; i < (size_t)s->n_hosts * arb_plan_n_channels(p); i++)
        j->ep_of[i] = NONE;
    for (uint32_t x = 0; x < j->n_eps; x++) {
        arb_hep *e = &j->eps[x];
        uint32_t *tp = &j->tree_ports[(size_t)x * subs];
        e->nic_port = s->hosts[e->host].nic_port;
        e->tree_port = tp;
        for (uint32_t u = 0; u < subs; u++) {
            const arb_plan_entry *he = arb_plan_find_sub(p, e->ch, u, e->host);
            tp[u] = he ? he->up_port : e->nic_port;
        }
        j->ep_of[(size_t)e->host * arb_plan_n_channels(p) + e->ch] = x;
    }
    return 0;
}

/* Engine e's controller: the job's kind and parameters, with the fabric's
 * line rate (its host's link), a full frame per credit, and its loop. */
static int channel_cc(arb_sim *s, const struct ajob *j, arb_hep *e)
{
    const arb_sim_arbor_config *cfg = &j->cfg;
    arb_cc_config c = cfg->cc;
    const arb_port *nic = &s->ports[s->hosts[e->host].nic_port];
    /* a channel's share of its host's link: every channel a host takes
     * part in moves a frame per credit across it */
    uint32_t per_host = arb_plan_n_channels(j->p) > 1 ? arb_plan_n_channels(j->p) : 1;
    c.line_rate = nic->rate / per_host ? nic->rate / per_host : 1;
    c.host_rate = nic->rate > c.line_rate ? nic->rate : c.line_rate;
    /* and its share of the link's headroom: Oscar's costs a link the sum
     * over the channels on it (docs/cc.md) */
    c.oscar.headroom /= per_host;
    c.credit_bytes = ARB_FRAME_OVERHEAD + arb_plan_hdr_len(j->p) + cfg->ep.payload + ARB_WIRE_EXTRA;
    c.base_rtt =
        cfg->cc_base_rtt ? cfg->cc_base_rtt : arb_sim_arbor_cc_loop(s, j->p, cfg->ep.payload);
    if (cfg->cc_kind == ARB_CC_DISABLED || cfg->cc_kind == ARB_CC_FIXED || !c.window)
        c.window = cfg->ep.window;
    if (c.window > c.window_max && cfg->cc_kind != ARB_CC_DISABLED && cfg->cc_kind != ARB_CC_FIXED)
        c.window = c.window_max;
    c.logger = s->cfg.log;
    return arb_cc_new(&e->cc, cfg->cc_kind, &c);
}

/* The rank driver's make_cc: channel_cc for the job's responders. */
static int job_cc(void *ctx, arb_hep *e, arb_cc **out)
{
    struct ajob *j = ctx;
    (void)out; /* channel_cc writes e->cc */
    return channel_cc(j->s, j, e);
}

static int make_engines(arb_sim *s, struct ajob *j)
{
    const arb_plan *p = j->p;
    const arb_sim_arbor_config *cfg = &j->cfg;
    arb_host_config hc;
    arb_host_config_default(&hc);
    hc.plan = p;
    hc.ep = cfg->ep;
    hc.ep.timeout_min = j->floor;
    hc.ep.retry_min = cfg->ep.retry_min ? cfg->ep.retry_min : j->floor;
    if (hc.ep.retry_min > hc.ep.retry) hc.ep.retry_min = hc.ep.retry;
    hc.ep.tail_probe = cfg->local_repair; /* the switches answer a probe from what they hold */
    hc.ep.header_only = !cfg->values;
    hc.send = arbor_ep_send;
    hc.fill = cfg->values ? arbor_fill : NULL;
    hc.on_commit = arbor_on_commit;
    hc.on_result = cfg->values ? arbor_on_result : NULL; /* arb_host_results */
    hc.make_cc = job_cc;
    hc.on_failure = arbor_on_failure;
    hc.ctx = j;
    hc.logger = s->cfg.log;
    int rc = arb_host_new(&j->host, &hc);
    if (rc < 0) return rc;
    j->eps = (arb_hep *)(void *)j->host->eps;
    j->n_eps = j->host->n_eps;
    j->host_first = arb_calloc(s->n_hosts + 1, sizeof *j->host_first);
    j->host_eps = arb_calloc(j->n_eps, sizeof *j->host_eps);
    j->ep_at = arb_malloc((size_t)arb_plan_get_config(p)->n_ranks * arb_plan_n_channels(p) *
                          sizeof *j->ep_at);
    if (!j->host_first || !j->host_eps || !j->ep_at) return ARB_ENOMEM;
    for (size_t i = 0; i < (size_t)arb_plan_get_config(p)->n_ranks * arb_plan_n_channels(p); i++)
        j->ep_at[i] = NONE;
    for (uint32_t x = 0; x < j->n_eps; x++) {
        arb_hep *e = &j->eps[x];
        j->ep_at[(size_t)e->rank * arb_plan_n_channels(p) + e->ch] = x;
        j->host_first[e->host + 1]++;
        if (e->r) {
            e->committed = arb_calloc(1, sizeof(struct cwin));
            if (!e->committed) return ARB_ENOMEM;
        }
    }
    for (uint32_t h = 0; h < s->n_hosts; h++)
        j->host_first[h + 1] += j->host_first[h];
    uint32_t *fill = arb_calloc(s->n_hosts, sizeof *fill);
    if (!fill) return ARB_ENOMEM;
    for (uint32_t i = 0; i < j->n_eps; i++) {
        uint32_t h = j->eps[i].host;
        j->host_eps[j->host_first[h] + fill[h]++] = i;
    }
    arb_free(fill);
    return route_engines(s, j);
}

/* The nodes' cost (arb_sim_arbor_cost): with any, every node's time
 * last busy (0: idle from the start) and its held list. */
static int cost_state(arb_sim *s, const arb_sim_arbor_cost *c)
{
    struct arbor_job *a = s->arb;
    a->cost = *c;
    if (!c->host_pkt && !c->host_rate && !c->host_wake && !c->switch_pkt && !c->switch_rate &&
        !c->switch_wake)
        return 0;
    a->busy = arb_calloc(arb_topo_n_nodes(s->topo), sizeof *a->busy);
    a->core_free = c->cores ? arb_calloc(c->cores, sizeof *a->core_free) : NULL;
    int rc = a->busy && (a->core_free || !c->cores) ? arbor_held_lists(s) : ARB_ENOMEM;
    if (rc < 0) arbor_free(s);
    return rc;
}

/* What the jobs share, made with the first job: its payload, slots and mode
 * become every job's (one slot pool per switch, one buffer pool). */
static int arbor_state(arb_sim *s, const arb_sim_arbor_config *cfg)
{
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    struct arbor_job *a = arb_calloc(1, sizeof *a);
    if (!a) return ARB_ENOMEM;
    s->arb = a;
    a->bp.size = cfg->ep.payload;
    a->payload = cfg->ep.payload;
    a->slots = cfg->slots;
    a->local_repair = cfg->local_repair;
    a->recredit_min = cfg->recredit_min;
    a->recredit_max = cfg->recredit_max;
    a->recredit_order = cfg->recredit_order != 0;
    a->values = cfg->values;
    a->spare = NONE;
    a->watch_hit = a->g_watch_hit = ARB_TIME_NEVER;
    a->fail_at = ARB_TIME_NEVER;
    a->n_parts = cfg->partitions > 1 ? cfg->partitions : 1;
    a->agg = arb_calloc((size_t)n_nodes * a->n_parts, sizeof *a->agg);
    a->owner = arb_calloc((size_t)n_nodes * a->n_parts, sizeof *a->owner);
    a->sw = arb_calloc(n_nodes, sizeof *a->sw);
    a->sw_timer_at = arb_malloc(n_nodes * sizeof *a->sw_timer_at);
    a->sw_timer_seq = arb_calloc(n_nodes, sizeof *a->sw_timer_seq);
    a->acct = arb_calloc(n_nodes, sizeof *a->acct);
    a->left = arb_calloc(n_nodes, sizeof *a->left);
    a->timer_at = arb_malloc(s->n_hosts * sizeof *a->timer_at);
    a->timer_seq = arb_calloc(s->n_hosts, sizeof *a->timer_seq);
    a->hj = arb_calloc(s->n_hosts, sizeof *a->hj);
    a->next_port = arb_calloc(s->n_hosts, sizeof *a->next_port);
    if (!a->agg || !a->owner || !a->sw || !a->sw_timer_at || !a->sw_timer_seq || !a->acct ||
        !a->left || !a->timer_at || !a->timer_seq || !a->hj || !a->next_port) {
        arbor_free(s);
        return ARB_ENOMEM;
    }
    for (uint32_t h = 0; h < s->n_hosts; h++)
        a->timer_at[h] = ARB_TIME_NEVER;
    for (uint32_t n = 0; n < n_nodes; n++)
        a->sw_timer_at[n] = ARB_TIME_NEVER;
    return cost_state(s, &cfg->cost);
}

int arbor_held_lists(arb_sim *s)
{
    struct arbor_job *a = s->arb;
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    if (a->held) return 0;
    if (!(a->held = arb_malloc(n_nodes * sizeof *a->held))) return ARB_ENOMEM;
    for (uint32_t n = 0; n < n_nodes; n++)
        a->held[n].head = a->held[n].tail = PKT_NONE;
    return 0;
}

/* Switch `node`'s engine, made if it has none yet: it decides for every
 * job's packets there; the headers it reads were built by the engines. */
static int switch_engine(arb_sim *s, uint32_t node)
{
    struct arbor_job *a = s->arb;
    if (a->sw[node]) return 0;
    arb_switch_config c;
    arb_switch_config_default(&c);
    c.first_port = s->nodes[node].first_port;
    c.trusted = 1;
    c.node = node;
    int rc = arb_switch_new(&a->sw[node], &c);
    if (rc == 0 && s->cfg.switch_tap)
        arb_switch_set_tap(a->sw[node], s->cfg.switch_tap, s->cfg.switch_tap_ctx);
    return rc;
}

/* The job's tree tables, and an aggregator on every switch where it
 * aggregates that has none yet for its part of the pool (one pool per
 * switch shared by jobs, unless partitioned). */
static int job_trees(arb_sim *s, struct ajob *j)
{
    const arb_plan *p = j->p;
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    uint8_t *mark = arb_calloc(n_nodes, 1);
    if (!mark) return ARB_ENOMEM;
    int rc = 0;
    for (uint32_t t = 0; t < arb_plan_n_trees(p) && rc == 0; t++) {
        const arb_plan_tree *tr = arb_plan_get_tree(p, t);
        for (uint32_t x = 0; x < tr->n_entries && rc == 0; x++) {
            const arb_plan_entry *e = arb_plan_get_entry(p, tr->first_entry + x);
            if (e->level > 0) rc = switch_engine(s, e->node);
            if (!e->aggregate || rc < 0) continue;
            if (!mark[e->node]) j->n_agg_nodes++;
            mark[e->node] = 1;
            rc = arbor_pool_part(s, e->node, j->part);
        }
    }
    j->agg_nodes = arb_malloc((j->n_agg_nodes ? j->n_agg_nodes : 1) * sizeof *j->agg_nodes);
    if (rc == 0 && !j->agg_nodes) rc = ARB_ENOMEM;
    for (uint32_t n = 0, k = 0; rc == 0 && n < n_nodes; n++)
        if (mark[n]) j->agg_nodes[k++] = n;
    arb_free(mark);
    return rc;
}

/* Values mode: the expected sums and the tolerance of float results. */
static void job_values(struct ajob *j)
{
    const arb_plan *p = j->p;
    uint32_t N = arb_plan_get_config(p)->n_ranks;
    for (uint32_t x = 0; x < 17; x++) {
        j->sum17[x] = 0;
        for (uint32_t r = 0; r < N; r++)
            j->sum17[x] += (int32_t)((7u * r + x) % 17u);
    }
    static const int mant[ARB_DTYPE_COUNT] = {11, 8, 24, 53, 63, 63};
    double bound = 8.0 * N;
    j->tol = bound <= ldexp(1.0, mant[arb_plan_get_config(p)->dtype])
                 ? 0
                 : N * bound * ldexp(1.0, -mant[arb_plan_get_config(p)->dtype]);
}

/* A job with its tables, aggregators and engines, not yet registered. */
static int job_new(arb_sim *s, const arb_sim_arbor_config *cfg, struct ajob **out)
{
    struct arbor_job *a = s->arb;
    const arb_plan *p = cfg->plan;
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    struct ajob *j = arb_calloc(1, sizeof *j);
    *out = j;
    if (!j) return ARB_ENOMEM;
    j->s = s;
    j->a = a;
    j->index = a->n_jobs;
    j->ch_base = a->n_chan;
    j->cfg = *cfg;
    if (!j->cfg.ep.window) j->cfg.ep.window = arb_sim_arbor_window(s, p, cfg->ep.payload);
    j->p = p;
    j->n_trees = arb_plan_n_trees(p);
    j->part = j->index % a->n_parts;
    j->res.correct = cfg->values ? 1 : -1;
    j->rank_of_host = arb_malloc(s->n_hosts * sizeof *j->rank_of_host);
    j->pacct = arb_calloc(s->n_ports, sizeof *j->pacct);
    uint32_t R = arb_plan_get_config(p)->n_ranks;
    j->start_at = arb_malloc(R * sizeof *j->start_at);
    j->started = arb_calloc(R, 1);
    j->idle = arb_calloc(R, 1);
    j->reported = arb_calloc(R, 1);
    j->entered = arb_calloc(R, 1);
    j->live_at = arb_calloc(n_nodes, sizeof *j->live_at);
    if (!j->rank_of_host || !j->pacct || !j->start_at || !j->started || !j->idle || !j->reported ||
        !j->entered || !j->live_at)
        return ARB_ENOMEM;
    for (uint32_t r = 0; r < R; r++)
        j->start_at[r] = ARB_TIME_NEVER;
    for (uint32_t h = 0; h < s->n_hosts; h++)
        j->rank_of_host[h] = NONE;
    for (uint32_t r = 0; r < arb_plan_get_config(p)->n_ranks; r++)
        j->rank_of_host[arb_plan_host(p, r)] = r;
    j->floor =
        cfg->ep.timeout_min ? cfg->ep.timeout_min : 2 * arb_sim_arbor_loop(s, p, cfg->ep.payload);
    if (j->floor < ARB_EP_TIMER_MIN) j->floor = ARB_EP_TIMER_MIN;
    if (j->floor > cfg->ep.timeout) j->floor = cfg->ep.timeout;
    int rc = job_trees(s, j);
    if (rc == 0) rc = make_engines(s, j);
    if (rc == 0) job_values(j);
    return rc;
}

/* Room for one more job in host h's list. */
static int hjobs_room(struct hjobs *l)
{
    if (l->n < l->cap) return 0;
    uint32_t cap = l->cap ? l->cap * 2 : 2;
    struct ajob **v = arb_realloc(l->v, cap * sizeof *v);
    if (!v) return ARB_ENOMEM;
    l->v = v;
    l->cap = cap;
    return 0;
}

/* The job joins the simulator: its channels, its hosts. Its channels'
 * UDP port is the first one none of its hosts has given an earlier job:
 * jobs on disjoint hosts all keep SIM_ARBOR_DPORT, and a host's jobs have
 * channels of different names. ARB_ERANGE past the last UDP port. */
static int job_register(arb_sim *s, struct ajob *j)
{
    struct arbor_job *a = s->arb;
    const arb_plan *p = j->p;
    uint32_t port = 0;
    for (uint32_t r = 0; r < arb_plan_get_config(p)->n_ranks; r++) {
        uint32_t h = arb_plan_host(p, r);
        if (a->next_port[h] > port) port = a->next_port[h];
        if (hjobs_room(&a->hj[h]) < 0) return ARB_ENOMEM;
    }
    if (port > 65535u - SIM_ARBOR_DPORT) return ARB_ERANGE;
    uint32_t n_chan = a->n_chan + arb_plan_n_channels(p);
    if (n_chan > a->cap_chan) {
        uint32_t cap = a->cap_chan ? a->cap_chan : 64;
        while (cap < n_chan)
            cap *= 2;
        struct ajob **nc = arb_realloc(a->chan_job, cap * sizeof *nc);
        if (!nc) return ARB_ENOMEM;
        a->chan_job = nc;
        a->cap_chan = cap;
    }
    struct ajob **nj = arb_realloc(a->jobs, (a->n_jobs + 1) * sizeof *nj);
    if (!nj) return ARB_ENOMEM;
    a->jobs = nj;
    a->jobs[a->n_jobs++] = j;
    for (uint32_t c = a->n_chan; c < n_chan; c++)
        a->chan_job[c] = j;
    a->n_chan = n_chan;
    j->port = port;
    for (uint32_t r = 0; r < arb_plan_get_config(p)->n_ranks; r++) {
        uint32_t h = arb_plan_host(p, r);
        a->next_port[h] = port + 1;
        a->hj[h].v[a->hj[h].n++] = j;
    }
    return 0;
}

/* Lag mode: rank r's host handles its packets r x skew late. */
static int job_lag(arb_sim *s, const struct ajob *j)
{
    struct arbor_job *a = s->arb;
    if (!a->lag) {
        a->lag = arb_calloc(s->n_hosts, sizeof *a->lag);
        if (!a->lag || arbor_held_lists(s) < 0) return ARB_ENOMEM;
    }
    for (uint32_t r = 0; r < arb_plan_get_config(j->p)->n_ranks; r++)
        a->lag[arb_plan_host(j->p, r)] = (arb_time)r * j->cfg.skew;
    return 0;
}

/* Every rank's host timer at its start time (skew). */
static int job_start(arb_sim *s, struct ajob *j)
{
    const arb_sim_arbor_config *cfg = &j->cfg;
    const arb_plan *p = j->p;
    if (cfg->deferred) { /* each rank at arb_sim_arbor_enter */
        j->res.start = ARB_TIME_NEVER;
        return s->error;
    }
    j->res.start = cfg->start < s->now ? s->now : cfg->start;
    uint64_t g = cfg->seed;
    if (cfg->skew && cfg->skew_random == 2 && job_lag(s, j) < 0) return ARB_ENOMEM;
    for (uint32_t r = 0; r < arb_plan_get_config(p)->n_ranks; r++) {
        uint32_t h = arb_plan_host(p, r);
        arb_time at = j->res.start;
        if (cfg->skew && cfg->skew_random == 1)
            at += splitmix(&g) % (cfg->skew + 1);
        else if (!cfg->skew_random)
            at += (arb_time)r * cfg->skew;
        j->start_at[r] = at;
        /* a partitioned run: the host's part alone runs its engines */
        if (j->host_first[h + 1] > j->host_first[h] && owns_node(s, h)) arbor_arm(s, h, at);
    }
    return s->error;
}

/* ARB_EINVAL when cfg cannot run beside the jobs already added: the slot
 * pools and payload buffers are common (slots, their partition, payload,
 * mode), and a host that delays its packets (skew mode lag) does so for
 * one job only. */
static int job_fits(const arb_sim *s, const arb_sim_arbor_config *cfg)
{
    const struct arbor_job *a = s->arb;
    uint32_t parts = cfg->partitions > 1 ? cfg->partitions : 1;
    if (parts > ARB_AGG_SLOTS_MAX || cfg->slots / parts == 0) return ARB_EINVAL;
    if (cfg->deferred && cfg->skew && cfg->skew_random == 2) return ARB_EINVAL;
    if (!a) return 0;
    if (cfg->values != a->values || cfg->ep.payload != a->payload || cfg->slots != a->slots ||
        parts != a->n_parts || (cfg->local_repair != 0) != (a->local_repair != 0) ||
        cfg->recredit_min != a->recredit_min || cfg->recredit_max != a->recredit_max ||
        (cfg->recredit_order != 0) != a->recredit_order)
        return ARB_EINVAL;
    int lag = cfg->skew && cfg->skew_random == 2;
    for (uint32_t r = 0; r < arb_plan_get_config(cfg->plan)->n_ranks; r++) {
        uint32_t h = arb_plan_host(cfg->plan, r);
        if ((lag && a->hj[h].n) || (a->lag && a->lag[h])) return ARB_EINVAL;
    }
    return 0;
}

int arb_sim_arbor_add(arb_sim *s, const arb_sim_arbor_config *cfg)
{
    if (!s || !cfg || !cfg->plan) return ARB_EINVAL;
    const arb_plan *p = cfg->plan;
    size_t es = arb_dtype_size(arb_plan_get_config(p)->dtype);
    if (cfg->ep.payload == 0 || cfg->ep.payload > ARB_PAYLOAD_MAX || cfg->ep.payload % es ||
        cfg->slots == 0 || cfg->slots > ARB_AGG_SLOTS_MAX || cfg->ep.timeout < ARB_EP_TIMER_MIN ||
        cfg->ep.retry < ARB_EP_TIMER_MIN ||
        (cfg->ep.timeout_min &&
         (cfg->ep.timeout_min < ARB_EP_TIMER_MIN || cfg->ep.timeout_min > cfg->ep.timeout)) ||
        (cfg->ep.retry_min &&
         (cfg->ep.retry_min < ARB_EP_TIMER_MIN || cfg->ep.retry_min > cfg->ep.retry)) ||
        cfg->recredit_min < ARB_EP_TIMER_MIN || cfg->recredit_max < cfg->recredit_min ||
        cfg->recredit_max > ARB_PS_PER_S)
        return ARB_EINVAL;
    uint32_t n_nodes = arb_topo_n_nodes(s->topo);
    for (uint32_t r = 0; r < arb_plan_get_config(p)->n_ranks; r++)
        if (arb_plan_host(p, r) >= s->n_hosts) return ARB_EINVAL;
    for (uint32_t i = 0; i < arb_plan_n_entries(p); i++)
        if (arb_plan_get_entry(p, i)->node >= n_nodes) return ARB_EINVAL;
    if (job_fits(s, cfg) < 0) return ARB_EINVAL;
    int first = s->arb == NULL;
    int rc = first ? arbor_state(s, cfg) : 0;
    if (rc < 0) return rc;
    struct ajob *j = NULL;
    rc = job_new(s, cfg, &j);
    if (rc == 0) rc = job_register(s, j);
    if (rc < 0) {
        if (first) {
            job_free(j);
            arbor_free(s);
        } else if (!s->arb->n_jobs || s->arb->jobs[s->arb->n_jobs - 1] != j) {
            job_free(j);
        }
        return rc;
    }
    rc = job_start(s, j);
    return rc < 0 ? rc : (int)j->index;
}

int arb_sim_arbor_enter(arb_sim *s, int job, uint32_t rank, arb_time at)
{
    struct arbor_job *a = s ? s->arb : NULL;
    if (!a || job < 0 || (uint32_t)job >= a->n_jobs) return ARB_EINVAL;
    struct ajob *j = a->jobs[job];
    if (!j->cfg.deferred || rank >= arb_plan_get_config(j->p)->n_ranks || j->entered[rank])
        return ARB_EINVAL;
    if (at < s->now) at = s->now;
    /* a partitioned run's callbacks run at the window's end: what they
     * enter must start after it (docs/partition.md, workload.start_delay) */
    if (s->part && part_late_start(s, at)) {
        fatal(s, ARB_ESTATE);
        return ARB_ESTATE;
    }
    j->entered[rank] = 1;
    if (at < j->res.start) j->res.start = at;
    if (s->in_report && at > s->now) { /* a completion's entry, for later */
        int rc = arbor_defer_enter(s, j, rank, at);
        if (rc < 0) fatal(s, rc);
        return s->error;
    }
    j->start_at[rank] = at;
    uint32_t h = arb_plan_host(j->p, rank);
    if (owns_node(s, h)) arbor_arm(s, h, at);
    return s->error;
}

int arb_sim_arbor_done(const arb_sim *s)
{
    const struct arbor_job *a = s->arb;
    if (!a || !a->n_jobs) return 0;
    for (uint32_t x = 0; x < a->n_jobs; x++)
        if (!job_done(a->jobs[x])) return 0;
    return 1;
}

int arb_sim_arbor_jobs(const arb_sim *s)
{
    return s && s->arb ? (int)s->arb->n_jobs : 0;
}

int arb_sim_arbor_rank(const arb_sim *s, int job, uint32_t rank, uint32_t *host, arb_time *done)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a || job < 0 || (uint32_t)job >= a->n_jobs) return ARB_EINVAL;
    const struct ajob *j = a->jobs[job];
    if (rank >= arb_plan_get_config(j->p)->n_ranks) return ARB_EINVAL;
    if (host) *host = arb_plan_host(j->p, rank);
    if (done) *done = j->host->rank_done[rank];
    return 0;
}

uint32_t arb_sim_arbor_job_ranks(const arb_sim *s, int job)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a || job < 0 || (uint32_t)job >= a->n_jobs) return 0;
    return arb_plan_get_config(a->jobs[job]->p)->n_ranks;
}

int arb_sim_arbor_failure_get(const arb_sim *s, arb_sim_arbor_failure *out)
{
    if (!s || !s->arb || !out) return ARB_EINVAL;
    *out = s->arb->failure;
    return 0;
}

int arb_sim_arbor_watch(arb_sim *s, arb_time from)
{
    struct arbor_job *a = s ? s->arb : NULL;
    if (!a) return ARB_EINVAL;
    a->watch_from = from;
    a->watch_hit = a->g_watch_hit = ARB_TIME_NEVER;
    a->watching = 1;
    return 0;
}

int arb_sim_arbor_counters_get(const arb_sim *s, arb_sim_arbor_counters *out)
{
    const struct arbor_job *a = s ? s->arb : NULL;
    if (!a || !out) return ARB_EINVAL;
    int whole = s->part && !s->in_run; /* every part's, after the last run */
    out->committed_bytes = whole ? a->g_committed_bytes : a->committed_bytes;
    out->resent_bytes = whole ? a->g_resent_bytes : a->resent_bytes;
    out->resends = whole ? a->g_resends : a->resends;
    out->resend_at = whole ? a->g_watch_hit : a->watch_hit;
    return 0;
}

int arb_sim_arbor_progress(const arb_sim *s, uint32_t *ranks_done, uint32_t *ranks)
{
    const struct arbor_job *a = s->arb;
    if (!a || !a->n_jobs) return ARB_EINVAL;
    *ranks_done = 0;
    *ranks = 0;
    for (uint32_t x = 0; x < a->n_jobs; x++) {
        *ranks_done += job_ranks_done(a->jobs[x]);
        *ranks += arb_plan_get_config(a->jobs[x]->p)->n_ranks;
    }
    return 0;
}
