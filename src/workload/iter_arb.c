/*
 * The collectives of a training iteration over Arbor (iter.c, backend
 * arbor): each matched collective of 2..256 ranks is one Arbor job of its
 * kind over its group's hosts, planned when the workload is made and added
 * to the simulator as a deferred job when its first member calls it; every
 * member enters when its own DAG reaches the node, and its node is done
 * when the simulator reports its rank done (arb_sim_arbor_config
 * .on_rank_done).
 *
 * An AllReduce over more than 256 ranks (an Arbor group's limit: fan-ins
 * are bytes) runs in three phases over groups that fit: the n members are
 * cut into Q = n / g inner groups of g consecutive members; member
 * m = q g + i
 *   1. ReduceScatters the buffer in inner group q (it ends with shard i of
 *      the group's sum: the bytes of the plan's channel i),
 *   2. AllReduces shard i across the Q members q' g + i (one per group),
 *   3. AllGathers the buffer in inner group q (pushing its shard i);
 * each phase is a job of its own, entered by the member when it is done
 * with the previous one. The buffer is cut into P pieces (inner_pieces)
 * that go through the phases one after another: a member enters piece
 * p + 1's ReduceScatter when it is done with piece p's, so that piece p's
 * AllGather (down its link) runs beside piece p + 1's ReduceScatter (up
 * it); the member is done when every piece's AllGather is.
 */
#include "hc_int.h"
#include "tr_int.h"
#include "wl_int.h"

#include "arbor/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

/* One collective of the trace over Arbor. Its plans: one (single), or per
 * piece p, from p x (2Q + g): RS[0..Q), X[0..g), AG[0..Q) (hierarchical:
 * Q = n / g). */
struct acoll {
    uint32_t ref; /* the trace's collective (tr_coll index) */
    uint32_t n, g, Q, P;
    uint8_t hier;
    uint32_t n_plans;
    arb_plan **plans;
    int32_t *job;   /* per plan: the simulator's job, or -1 before its first entry */
    uint32_t *left; /* hierarchical, per member: pieces whose AllGather it has not done */
};

/* What a simulator job is: collective and plan. */
struct jref {
    uint32_t a, plan;
};

struct iter_arb {
    arb_sim_arbor_config ac;
    arb_plan_config pc;
    const arb_topo *topo;
    uint32_t inner;  /* arb_iteration_config.inner_ranks */
    uint32_t pieces; /* arb_iteration_config.inner_pieces (0: 1) */
    struct acoll *c;
    uint32_t n, cap;
    struct jref *jobs; /* by simulator job index */
    uint32_t n_jobs, cap_jobs;
    arb_time delay; /* iter_arb_set_enter_delay */
};

void iter_arb_free(struct iter_arb *x)
{
    if (!x) return;
    for (uint32_t a = 0; a < x->n; a++) {
        for (uint32_t p = 0; p < x->c[a].n_plans; p++)
            arb_plan_free(x->c[a].plans[p]);
        arb_free(x->c[a].plans);
        arb_free(x->c[a].job);
        arb_free(x->c[a].left);
    }
    arb_free(x->c);
    arb_free(x->jobs);
    arb_free(x);
}

int iter_arb_new(struct iter_arb **out, const arb_iteration_config *ic, char *err, size_t errlen)
{
    *out = NULL;
    if (!ic->topo || !ic->arbor_cfg || !ic->plan_cfg)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "backend: arbor needs the fabric and the Arbor settings");
    struct iter_arb *x = arb_calloc(1, sizeof *x);
    if (!x) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    x->ac = *ic->arbor_cfg;
    x->pc = *ic->plan_cfg;
    x->topo = ic->topo;
    x->inner = ic->inner_ranks;
    x->pieces = ic->inner_pieces ? ic->inner_pieces : 1;
    *out = x;
    return 0;
}

/* The inner group size of a hierarchical AllReduce of n members: `want`
 * when set, else the divisor of n nearest sqrt(n) (the larger on a tie)
 * with g and n / g both 2..256; 0 when there is none. */
static uint32_t inner_size(uint32_t n, uint32_t want)
{
    if (want) return want;
    uint32_t best = 0;
    double root = sqrt((double)n), dist = INFINITY;
    for (uint32_t g = 2; g <= ARB_PLAN_MAX_RANKS; g++) {
        if (n % g || n / g < 2 || n / g > ARB_PLAN_MAX_RANKS) continue;
        double d = fabs((double)g - root);
        if (d <= dist) {
            dist = d;
            best = g;
        }
    }
    return best;
}

static int plan_one(struct iter_arb *x, arb_plan **out, arb_coll coll, const uint32_t *hosts,
                    uint32_t n, uint64_t bytes, uint32_t root, uint32_t offset, char *err,
                    size_t errlen)
{
    arb_plan_config pc = x->pc;
    pc.coll = coll;
    pc.ranks = hosts;
    pc.n_ranks = n;
    pc.bytes = bytes;
    pc.root = root;
    pc.root_offset = offset;
    char msg[400];
    int rc = arb_topo_plan(out, x->topo, &pc, msg, sizeof msg);
    return rc < 0 ? arb_errf(err, errlen, rc, "%s", msg) : 0; /* "plan: ..." */
}

/* The plans of piece p (`bytes` of the buffer) of a hierarchical
 * AllReduce over hosts[0..n) (see the top): from plans[p x (2Q + g)]. */
static int plan_piece(struct iter_arb *x, struct acoll *c, const uint32_t *hosts, uint64_t bytes,
                      uint32_t p, char *err, size_t errlen)
{
    uint32_t g = c->g, Q = c->Q;
    arb_plan **pl = c->plans + (size_t)p * (2 * Q + g);
    uint32_t *h = arb_malloc((g > Q ? g : Q) * sizeof *h);
    if (!h) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    int rc = 0;
    for (uint32_t q = 0; rc == 0 && q < Q; q++) {
        rc = plan_one(x, &pl[q], ARB_COLL_REDUCESCATTER, hosts + (size_t)q * g, g, bytes, 0, q * g,
                      err, errlen);
        if (rc == 0)
            rc = plan_one(x, &pl[Q + g + q], ARB_COLL_ALLGATHER, hosts + (size_t)q * g, g, bytes, 0,
                          q * g, err, errlen);
    }
    for (uint32_t i = 0; rc == 0 && i < g; i++) {
        /* shard i: the bytes of the inner plans' channel i (the same in each) */
        const arb_plan_channel *ch = arb_plan_get_channel(pl[0], i);
        if (ch->hi == ch->lo) {
            rc = arb_errf(err, errlen, ARB_EINVAL,
                          "bytes: a piece of %llu bytes does not cut into %u shards of whole "
                          "elements (inner_ranks, inner_pieces)",
                          (unsigned long long)bytes, g);
            break;
        }
        for (uint32_t q = 0; q < Q; q++)
            h[q] = hosts[(size_t)q * g + i];
        rc = plan_one(x, &pl[Q + i], ARB_COLL_ALLREDUCE, h, Q, ch->hi - ch->lo, 0, i, err, errlen);
    }
    arb_free(h);
    return rc;
}

/* Every piece's plans: piece p is elements [floor(p E / P), floor((p+1) E / P))
 * of the buffer's E. */
static int plan_hier(struct iter_arb *x, struct acoll *c, const uint32_t *hosts, uint64_t bytes,
                     char *err, size_t errlen)
{
    uint64_t es = arb_dtype_size(x->pc.dtype), E = bytes / es;
    int rc = 0;
    for (uint32_t p = 0; rc == 0 && p < c->P; p++) {
        uint64_t lo = p * E / c->P, hi = (p + 1) * E / c->P;
        if (bytes % es == 0 && hi == lo) {
            rc = arb_errf(err, errlen, ARB_EINVAL,
                          "inner_pieces: %llu bytes do not cut into %u pieces of whole elements",
                          (unsigned long long)bytes, c->P);
            break;
        }
        /* bytes not whole elements: the planner says so */
        rc = plan_piece(x, c, hosts, bytes % es ? bytes : (hi - lo) * es, p, err, errlen);
    }
    return rc;
}

int iter_arb_add(struct iter_arb *x, uint32_t ref, arb_coll coll, const uint32_t *hosts, uint32_t n,
                 uint64_t bytes, uint32_t root, uint32_t *index, char *err, size_t errlen)
{
    *index = TR_NONE;
    if (coll == ARB_COLL_ALLTOALL) return 0; /* no Arbor AllToAll: the host algorithm */
    uint32_t g = n, Q = 1;
    if (n > ARB_PLAN_MAX_RANKS) {
        if (coll != ARB_COLL_ALLREDUCE)
            return arb_errf(err, errlen, ARB_EINVAL,
                            "collective: an Arbor group has at most %d ranks, and only an "
                            "AllReduce runs over more (in groups); this %s has %u",
                            ARB_PLAN_MAX_RANKS, arb_coll_name(coll), n);
        g = inner_size(n, x->inner);
        if (g < 2 || g > ARB_PLAN_MAX_RANKS || n % g || n / g < 2 || n / g > ARB_PLAN_MAX_RANKS)
            return arb_errf(err, errlen, ARB_EINVAL,
                            "inner_ranks: %u members do not cut into groups of %u, 2..%d of them "
                            "each of 2..%d ranks",
                            n, g, ARB_PLAN_MAX_RANKS, ARB_PLAN_MAX_RANKS);
        Q = n / g;
    }
    if (x->n == x->cap) {
        uint32_t cap = x->cap ? x->cap * 2 : 16;
        struct acoll *nc = arb_realloc(x->c, cap * sizeof *nc);
        if (!nc) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        x->c = nc;
        x->cap = cap;
    }
    struct acoll *c = &x->c[x->n];
    memset(c, 0, sizeof *c);
    c->ref = ref;
    c->n = n;
    c->g = g;
    c->Q = Q;
    c->hier = Q > 1;
    c->P = c->hier ? x->pieces : 1;
    c->n_plans = c->hier ? c->P * (2 * Q + g) : 1;
    c->plans = arb_calloc(c->n_plans, sizeof *c->plans);
    c->job = arb_malloc(c->n_plans * sizeof *c->job);
    c->left = c->hier ? arb_malloc((size_t)n * sizeof *c->left) : NULL;
    x->n++; /* freed with the rest on error */
    if (!c->plans || !c->job || (c->hier && !c->left))
        return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    for (uint32_t p = 0; p < c->n_plans; p++)
        c->job[p] = -1;
    for (uint32_t m = 0; c->hier && m < n; m++)
        c->left[m] = c->P;
    int rc = c->hier ? plan_hier(x, c, hosts, bytes, err, errlen)
                     : plan_one(x, &c->plans[0], coll, hosts, n, bytes, root, 0, err, errlen);
    if (rc < 0) return rc;
    *index = x->n - 1;
    return 0;
}

static void rank_done(void *ctx, arb_sim *s, int job, uint32_t rank, arb_time now);

/* Rank `rank` of plan `p` of collective a calls it now: its job is added at
 * the first entry. */
static void enter(arb_workload *w, arb_sim *s, uint32_t a, uint32_t p, uint32_t rank, arb_time now)
{
    struct iter_arb *x = w->ia;
    struct acoll *c = &x->c[a];
    if (c->job[p] < 0) {
        if (x->n_jobs == x->cap_jobs) {
            uint32_t cap = x->cap_jobs ? x->cap_jobs * 2 : 64;
            struct jref *nj = arb_realloc(x->jobs, cap * sizeof *nj);
            if (!nj) {
                w->error = ARB_ENOMEM;
                return;
            }
            x->jobs = nj;
            x->cap_jobs = cap;
        }
        arb_sim_arbor_config ac = x->ac;
        ac.plan = c->plans[p];
        ac.start = now;
        ac.deferred = 1;
        ac.on_rank_done = rank_done;
        ac.rank_ctx = w;
        int job = arb_sim_arbor_add(s, &ac);
        if (job < 0 || (uint32_t)job != x->n_jobs) { /* the iteration adds every job */
            w->error = job < 0 ? job : ARB_ESTATE;
            return;
        }
        c->job[p] = job;
        x->jobs[x->n_jobs++] = (struct jref){a, p};
    }
    int rc = arb_sim_arbor_enter(s, c->job[p], rank, now + x->delay);
    if (rc < 0) w->error = rc;
}

void iter_arb_enter(arb_workload *w, arb_sim *s, uint32_t a, uint32_t m, arb_time now)
{
    const struct acoll *c = &w->ia->c[a];
    if (c->hier)
        enter(w, s, a, m / c->g, m % c->g, now); /* phase 1: ReduceScatter in its group */
    else
        enter(w, s, a, 0, m, now);
}

/* The simulator: rank `rank` of job `job` is done. */
static void rank_done(void *ctx, arb_sim *s, int job, uint32_t rank, arb_time now)
{
    arb_workload *w = ctx;
    struct iter_arb *x = w->ia;
    if (job < 0 || (uint32_t)job >= x->n_jobs) {
        w->error = ARB_ESTATE;
        return;
    }
    struct jref j = x->jobs[job];
    const struct acoll *c = &x->c[j.a];
    if (!c->hier) {
        wl_iter_member_done(w, s, c->ref, rank, now);
        return;
    }
    uint32_t g = c->g, Q = c->Q, span = 2 * Q + g;
    uint32_t p = j.plan / span, k = j.plan % span, base = p * span;
    if (k < Q) { /* piece p's ReduceScatter in group k done: its shard `rank` across groups, */
        enter(w, s, j.a, base + Q + rank, k, now);
        if (p + 1 < c->P) /* and the next piece's ReduceScatter */
            enter(w, s, j.a, base + span + k, rank, now);
    } else if (k < Q + g) { /* shard i's AllReduce done: AllGather in group `rank` */
        enter(w, s, j.a, base + Q + g + rank, k - Q, now);
    } else { /* AllGather of piece p in group q done */
        uint32_t m = (k - Q - g) * g + rank;
        if (--c->left[m] == 0) wl_iter_member_done(w, s, c->ref, m, now);
    }
}

void iter_arb_set_enter_delay(struct iter_arb *x, arb_time d)
{
    x->delay = d;
}

uint32_t iter_arb_jobs(const struct iter_arb *x)
{
    return x ? x->n_jobs : 0;
}
