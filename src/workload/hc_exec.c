/*
 * The host-collective executor: instances of plans on hosts, their
 * messages turned into simulator flows as their dependencies arrive.
 *
 * A message is ready when every message it waits for is delivered and
 * its ranks have entered (the sender only, for an eager instance). A
 * connection launches its messages in order: the next one when it is
 * ready and every part (QP) of the previous one has sent its last packet.
 * Each simulator flow the executor adds gets a tag (instance, message) at
 * index flow - first flow, so the completion callbacks find it in O(1).
 */
#include "hc_int.h"
#include "wl_int.h"

#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

enum { M_WAIT = 0, M_LAUNCHED = 1, M_DONE = 2 };

struct hc_inst {
    struct hc_plan *p;
    uint32_t *host;
    int rendezvous;
    uint8_t *entered;
    uint32_t *deps_left; /* per message */
    uint8_t *st;
    uint32_t *parts_left; /* per message: parts not delivered */
    arb_time *posted, *deliv;
    uint32_t *ccur;  /* per connection: position of the next message to launch */
    uint32_t *cbusy; /* per connection: parts of the last launched still sending */
    uint16_t *sport; /* per connection x QP */
    uint32_t *qpn;
    uint32_t *left; /* per rank: messages to or from it not delivered */
    arb_time *done_at;
    uint64_t *sent, *recvd;
    uint32_t ranks_done;
};

struct hc_tag {
    uint32_t inst, msg;
    uint8_t sent, done;
};

struct hc_exec {
    arb_workload *w;
    hc_done_fn done;
    void *ctx;
    struct hc_inst *inst;
    uint32_t n_inst, cap_inst;
    struct hc_tag *tags;
    size_t n_tags, cap_tags;
    uint32_t first_id;
    int have_first;
    arb_time enter_delay; /* hc_exec_set_enter_delay */
};

int hc_exec_new(struct hc_exec **out, arb_workload *w, hc_done_fn done, void *ctx)
{
    *out = arb_calloc(1, sizeof **out);
    if (!*out) return ARB_ENOMEM;
    (*out)->w = w;
    (*out)->done = done;
    (*out)->ctx = ctx;
    return 0;
}

static void inst_free(struct hc_inst *I)
{
    hc_plan_free(I->p);
    arb_free(I->host);
    arb_free(I->entered);
    arb_free(I->deps_left);
    arb_free(I->st);
    arb_free(I->parts_left);
    arb_free(I->posted);
    arb_free(I->deliv);
    arb_free(I->ccur);
    arb_free(I->cbusy);
    arb_free(I->sport);
    arb_free(I->qpn);
    arb_free(I->left);
    arb_free(I->done_at);
    arb_free(I->sent);
    arb_free(I->recvd);
}

void hc_exec_free(struct hc_exec *x)
{
    if (!x) return;
    for (uint32_t i = 0; i < x->n_inst; i++)
        inst_free(&x->inst[i]);
    arb_free(x->inst);
    arb_free(x->tags);
    arb_free(x);
}

long hc_exec_add(struct hc_exec *x, struct hc_plan *p, const uint32_t *hosts, int rendezvous)
{
    if (x->n_inst == x->cap_inst) {
        uint32_t nc = x->cap_inst ? x->cap_inst * 2 : 8;
        struct hc_inst *ni = arb_realloc(x->inst, nc * sizeof *ni);
        if (!ni) {
            hc_plan_free(p);
            return ARB_ENOMEM;
        }
        x->inst = ni;
        x->cap_inst = nc;
    }
    struct hc_inst *I = &x->inst[x->n_inst];
    memset(I, 0, sizeof *I);
    I->p = p;
    I->rendezvous = rendezvous;
    uint32_t n = p->n, nm = p->n_msgs, nc = p->n_conns, q = x->w->cfg.qps;
    I->host = arb_malloc((size_t)n * sizeof *I->host);
    I->entered = arb_calloc(n, 1);
    I->deps_left = arb_malloc(((size_t)nm + 1) * sizeof *I->deps_left);
    I->st = arb_calloc((size_t)nm + 1, 1);
    I->parts_left = arb_malloc(((size_t)nm + 1) * sizeof *I->parts_left);
    I->posted = arb_malloc(((size_t)nm + 1) * sizeof *I->posted);
    I->deliv = arb_malloc(((size_t)nm + 1) * sizeof *I->deliv);
    I->ccur = arb_calloc((size_t)nc + 1, sizeof *I->ccur);
    I->cbusy = arb_calloc((size_t)nc + 1, sizeof *I->cbusy);
    I->sport = arb_malloc(((size_t)nc * q + 1) * sizeof *I->sport);
    I->qpn = arb_malloc(((size_t)nc * q + 1) * sizeof *I->qpn);
    I->left = arb_calloc(n, sizeof *I->left);
    I->done_at = arb_malloc((size_t)n * sizeof *I->done_at);
    I->sent = arb_calloc(n, sizeof *I->sent);
    I->recvd = arb_calloc(n, sizeof *I->recvd);
    if (!I->host || !I->entered || !I->deps_left || !I->st || !I->parts_left || !I->posted ||
        !I->deliv || !I->ccur || !I->cbusy || !I->sport || !I->qpn || !I->left || !I->done_at ||
        !I->sent || !I->recvd) {
        inst_free(I);
        return ARB_ENOMEM;
    }
    memcpy(I->host, hosts, (size_t)n * sizeof *I->host);
    for (uint32_t m = 0; m < nm; m++) {
        I->deps_left[m] = p->dep_off[m + 1] - p->dep_off[m];
        I->posted[m] = I->deliv[m] = ARB_TIME_NEVER;
        I->left[p->src[m]]++;
        I->left[p->dst[m]]++;
    }
    for (uint32_t r = 0; r < n; r++)
        I->done_at[r] = ARB_TIME_NEVER;
    for (size_t k = 0; k < (size_t)nc * q; k++) {
        uint64_t span = (uint64_t)x->w->cfg.sport_hi - x->w->cfg.sport_lo + 1;
        I->sport[k] = (uint16_t)(x->w->cfg.sport_lo + arb_rng_below(&x->w->rng, span));
        I->qpn[k] = (uint32_t)(arb_rng_next(&x->w->rng) >> 40);
        if (x->w->cfg.shared_sport && k % q) I->sport[k] = I->sport[k - k % q];
    }
    return x->n_inst++;
}

static int grow_tags(struct hc_exec *x)
{
    if (x->n_tags < x->cap_tags) return 0;
    size_t nc = x->cap_tags ? x->cap_tags * 2 : 1024;
    struct hc_tag *nt = arb_realloc(x->tags, nc * sizeof *nt);
    if (!nt) return ARB_ENOMEM;
    x->tags = nt;
    x->cap_tags = nc;
    return 0;
}

static int ready(const struct hc_inst *I, uint32_t m)
{
    const struct hc_plan *p = I->p;
    return I->deps_left[m] == 0 && I->entered[p->src[m]] &&
           (!I->rendezvous || I->entered[p->dst[m]]);
}

static void fail(struct hc_exec *x, int rc)
{
    if (!x->w->error) x->w->error = rc;
}

/* Launch connection c's next message if it is ready and c is idle. */
static void try_conn(struct hc_exec *x, arb_sim *s, uint32_t i, uint32_t c, arb_time now)
{
    struct hc_inst *I = &x->inst[i];
    const struct hc_plan *p = I->p;
    if (I->cbusy[c] || I->ccur[c] >= p->conn_off[c + 1] - p->conn_off[c]) return;
    uint32_t m = p->conn_msgs[p->conn_off[c] + I->ccur[c]];
    if (!ready(I, m)) return;
    uint32_t q = x->w->cfg.qps;
    uint64_t b = p->bytes[m];
    uint32_t parts = b < q ? (uint32_t)b : q; /* a part per QP, none empty */
    for (uint32_t j = 0; j < parts; j++) {
        if (grow_tags(x) < 0) {
            fail(x, ARB_ENOMEM);
            return;
        }
        uint32_t id;
        int rc =
            arb_sim_add_flow(s, I->host[p->src[m]], I->host[p->dst[m]], b / parts + (j < b % parts),
                             now, I->sport[(size_t)c * q + j], I->qpn[(size_t)c * q + j], &id);
        if (rc < 0) {
            fail(x, rc);
            return;
        }
        x->w->added++;
        if (!x->have_first) {
            x->first_id = id;
            x->have_first = 1;
        }
        if (id != x->first_id + x->n_tags) {
            fail(x, ARB_ESTATE); /* someone else adds flows to this simulator */
            return;
        }
        struct hc_tag *t = &x->tags[x->n_tags++];
        t->inst = i;
        t->msg = m;
        t->sent = t->done = 0;
    }
    I->st[m] = M_LAUNCHED;
    I->posted[m] = now;
    I->parts_left[m] = parts;
    I->cbusy[c] = parts;
    I->ccur[c]++;
    I->sent[p->src[m]] += b;
}

static void rank_check(struct hc_exec *x, arb_sim *s, uint32_t i, uint32_t r, arb_time now)
{
    struct hc_inst *I = &x->inst[i];
    if (I->done_at[r] != ARB_TIME_NEVER || !I->entered[r] || I->left[r]) return;
    I->done_at[r] = now;
    I->ranks_done++;
    if (x->done) x->done(x->ctx, s, i, r, now);
}

void hc_exec_enter(struct hc_exec *x, arb_sim *s, uint32_t i, uint32_t rank, arb_time now)
{
    struct hc_inst *I = &x->inst[i];
    const struct hc_plan *p = I->p;
    if (I->entered[rank]) return;
    I->entered[rank] = 1;
    /* the connections to and from the rank may have a message ready now */
    for (uint32_t k = p->rconn_off[rank]; k < p->rconn_off[rank + 1] && !x->w->error; k++) {
        uint32_t c = p->rconns[k];
        if (p->conn_src[c] == rank || I->rendezvous) try_conn(x, s, i, c, now + x->enter_delay);
    }
    rank_check(x, s, i, rank, now);
}

void hc_exec_set_enter_delay(struct hc_exec *x, arb_time d)
{
    x->enter_delay = d;
}

static struct hc_tag *tag_of(struct hc_exec *x, uint32_t flow)
{
    if (!x->have_first || flow < x->first_id || flow - x->first_id >= x->n_tags) return NULL;
    return &x->tags[flow - x->first_id];
}

void hc_exec_flow_sent(struct hc_exec *x, arb_sim *s, uint32_t flow, arb_time now)
{
    struct hc_tag *t = tag_of(x, flow);
    if (!t || t->sent) return;
    t->sent = 1;
    struct hc_inst *I = &x->inst[t->inst];
    uint32_t c = I->p->conn[t->msg];
    if (--I->cbusy[c] == 0) try_conn(x, s, t->inst, c, now + x->w->cfg.start_delay);
}

void hc_exec_flow_done(struct hc_exec *x, arb_sim *s, uint32_t flow, arb_time now)
{
    struct hc_tag *t = tag_of(x, flow);
    if (!t || t->done) return;
    if (!t->sent) hc_exec_flow_sent(x, s, flow, now); /* delivery implies it */
    t->done = 1;
    uint32_t i = t->inst, m = t->msg;
    struct hc_inst *I = &x->inst[i];
    const struct hc_plan *p = I->p;
    if (--I->parts_left[m]) return;
    I->st[m] = M_DONE;
    I->deliv[m] = now;
    I->recvd[p->dst[m]]++;
    I->left[p->src[m]]--;
    I->left[p->dst[m]]--;
    for (uint32_t k = p->rdep_off[m]; k < p->rdep_off[m + 1] && !x->w->error; k++) {
        uint32_t d = p->rdeps[k];
        if (--I->deps_left[d] == 0) try_conn(x, s, i, p->conn[d], now + x->w->cfg.start_delay);
    }
    rank_check(x, s, i, p->src[m], now);
    rank_check(x, s, i, p->dst[m], now);
}

const struct hc_plan *hc_exec_plan(const struct hc_exec *x, uint32_t i)
{
    return x->inst[i].p;
}

uint32_t hc_exec_ranks_done(const struct hc_exec *x, uint32_t i)
{
    return x->inst[i].ranks_done;
}

arb_time hc_exec_rank_done(const struct hc_exec *x, uint32_t i, uint32_t rank)
{
    return x->inst[i].done_at[rank];
}

int hc_exec_rank(const struct hc_exec *x, uint32_t i, uint32_t rank, uint32_t *host, arb_time *done,
                 uint64_t *bytes_sent, uint64_t *msgs_received)
{
    if (i >= x->n_inst || rank >= x->inst[i].p->n) return ARB_EINVAL;
    const struct hc_inst *I = &x->inst[i];
    if (host) *host = I->host[rank];
    if (done) *done = I->done_at[rank];
    if (bytes_sent) *bytes_sent = I->sent[rank];
    if (msgs_received) *msgs_received = I->recvd[rank];
    return 0;
}

int hc_exec_msg(const struct hc_exec *x, uint32_t i, uint64_t m, arb_hc_msg *out)
{
    if (i >= x->n_inst || m >= x->inst[i].p->n_msgs) return ARB_EINVAL;
    const struct hc_inst *I = &x->inst[i];
    const struct hc_plan *p = I->p;
    out->src = p->src[m];
    out->dst = p->dst[m];
    out->bytes = p->bytes[m];
    out->n_deps = p->dep_off[m + 1] - p->dep_off[m];
    out->deps = p->deps + p->dep_off[m];
    out->posted = I->posted[m];
    out->delivered = I->deliv[m];
    return 0;
}

uint64_t hc_exec_flows(const struct hc_exec *x)
{
    return x->n_tags;
}
