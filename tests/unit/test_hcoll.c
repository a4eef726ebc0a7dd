/* Host collectives: message counts derived from n, completion-time lower
 * bounds from each algorithm's data volume and the link rate, every rank
 * done, the dependency order, the double binary tree's shape, and ring
 * AllReduce against the ring_allreduce workload. */
#include "arbor/route.h"
#include "arbor/sim.h"
#include "arbor/topo.h"
#include "arbor/workload.h"
#include "testkit.h"
#include "workload/hc_int.h"

#include <stdlib.h>
#include <string.h>

static uint32_t route_fn(void *ctx, const arb_sim *sim, uint32_t node, uint32_t in_port,
                         const arb_sim_pkt_info *f, arb_time now)
{
    (void)sim;
    (void)now;
    arb_route_key k = {f->src, f->dst, f->sport, f->dport, f->qp, f->proto};
    return arb_route_next(ctx, node, &k, in_port);
}

struct rig {
    arb_topo *t;
    arb_route *r;
    arb_sim *s;
};

static int rig_run(struct rig *g, const char *topo, arb_workload *w)
{
    memset(g, 0, sizeof *g);
    char err[256];
    if (arb_topo_new(&g->t, topo, NULL, err, sizeof err) < 0) return -1;
    if (arb_route_new(&g->r, g->t, "ecmp", NULL, err, sizeof err) < 0) return -1;
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = route_fn;
    cfg.route_ctx = g->r;
    cfg.on_flow_done = arb_workload_on_flow_done;
    cfg.done_ctx = w;
    cfg.on_flow_sent = arb_workload_on_flow_sent;
    cfg.sent_ctx = w;
    if (arb_sim_new(&g->s, g->t, &cfg) < 0) return -1;
    if (arb_workload_start(w, g->s) < 0) return -1;
    return arb_sim_run(g->s, ARB_TIME_NEVER - 1);
}

static void rig_free(struct rig *g)
{
    arb_sim_free(g->s);
    arb_route_free(g->r);
    arb_topo_free(g->t);
}

static arb_workload *hcoll(arb_coll c, arb_hc_algo a, uint32_t n, uint64_t S, uint64_t chunk,
                           uint32_t root)
{
    arb_hcoll_config hc = {c, a, NULL, n, S, chunk, root, 0};
    arb_workload *w = NULL;
    char err[256];
    if (arb_workload_new_hcoll(&w, &hc, n, NULL, err, sizeof err) < 0) {
        printf("  hcoll: %s\n", err);
        return NULL;
    }
    return w;
}

static uint32_t log2_floor(uint32_t n)
{
    uint32_t k = 0;
    while ((2u << k) <= n)
        k++;
    return k;
}

static uint32_t log2_ceil(uint32_t n)
{
    uint32_t k = 0;
    while ((1u << k) < n)
        k++;
    return k;
}

/* Messages each algorithm sends, from n and P slices. */
static uint64_t want_msgs(arb_coll c, arb_hc_algo a, uint64_t n, uint64_t P)
{
    uint64_t p2 = 1ull << log2_floor((uint32_t)n), rem = n - p2;
    switch (c) {
    case ARB_COLL_ALLREDUCE:
        if (a == ARB_HC_RING) return 2 * (n - 1) * n * P;
        if (a == ARB_HC_TREE) return 2 * 2 * (n - 1) * P; /* 2 trees, up and down */
        return (p2 * log2_floor((uint32_t)n) + 2 * rem) * P;
    case ARB_COLL_REDUCESCATTER:
    case ARB_COLL_ALLGATHER:
        return (n - 1) * n * P;
    case ARB_COLL_REDUCE:
    case ARB_COLL_BROADCAST:
        return (n - 1) * P;
    case ARB_COLL_BARRIER:
        return p2 * log2_floor((uint32_t)n) + 2 * rem;
    case ARB_COLL_ALLTOALL:
        return n * (n - 1) * P;
    }
    return 0;
}

/* A lower bound on the CCT (ps) at 100 Gb/s from the bytes a host link
 * must carry in sequence (payload only, so headers only add to it). */
static arb_time lower_bound(arb_coll c, arb_hc_algo a, uint32_t n, uint64_t S, uint64_t P)
{
    uint64_t bits = 0;
    switch (c) {
    case ARB_COLL_ALLREDUCE:
        if (a == ARB_HC_RING) bits = 2 * (n - 1) * (S / n) * 8; /* every rank sends 2(n-1) chunks */
        if (a == ARB_HC_TREE) bits = (n >= 4 ? S : S / 2) * 8; /* a root gets S/2 from each child */
        if (a == ARB_HC_RD) bits = log2_floor(n) * S * 8;      /* log2 p2 exchanges in turn */
        break;
    case ARB_COLL_REDUCESCATTER:
    case ARB_COLL_ALLGATHER:
    case ARB_COLL_ALLTOALL:
        bits = (n - 1) * (S / n) * 8;
        break;
    case ARB_COLL_REDUCE:
    case ARB_COLL_BROADCAST:
        /* chain without slices: every hop waits for the whole buffer;
         * binomial: the root's link carries ceil(log2 n) buffers */
        bits = a == ARB_HC_CHAIN ? (P == 1 ? (n - 1) : 1) * S * 8 : log2_ceil(n) * S * 8;
        break;
    case ARB_COLL_BARRIER:
        /* log2 p2 dependent exchanges, each over two links of 1 us */
        return (arb_time)log2_floor(n) * 2 * ARB_TOPO_DEFAULT_DELAY;
    }
    return (arb_time)(bits * ARB_PS_PER_S / ARB_TOPO_DEFAULT_RATE);
}

struct combo {
    arb_coll c;
    arb_hc_algo a;
};

static const struct combo combos[] = {
    {ARB_COLL_ALLREDUCE, ARB_HC_RING},  {ARB_COLL_ALLREDUCE, ARB_HC_TREE},
    {ARB_COLL_ALLREDUCE, ARB_HC_RD},    {ARB_COLL_REDUCE, ARB_HC_BINOMIAL},
    {ARB_COLL_REDUCE, ARB_HC_CHAIN},    {ARB_COLL_REDUCESCATTER, ARB_HC_RING},
    {ARB_COLL_BROADCAST, ARB_HC_CHAIN}, {ARB_COLL_BROADCAST, ARB_HC_BINOMIAL},
    {ARB_COLL_ALLGATHER, ARB_HC_RING},  {ARB_COLL_BARRIER, ARB_HC_RD},
    {ARB_COLL_ALLTOALL, ARB_HC_DIRECT},
};

/* Every collective and algorithm on star fabrics of 2..7 ranks, with and
 * without slices: counts, completion, bounds, the dependency order. */
TEST(all_algorithms)
{
    static const uint32_t ns[] = {2, 3, 4, 5, 6, 7};
    for (size_t ci = 0; ci < sizeof combos / sizeof combos[0]; ci++)
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
            for (int sliced = 0; sliced < 2; sliced++) {
                uint32_t n = ns[ni];
                const struct combo *cb = &combos[ci];
                uint64_t S = 420 * 1024; /* divisible by 2..7 */
                uint64_t chunk = sliced ? 16 * 1024 : 0;
                uint32_t root = n - 1;
                arb_workload *w = hcoll(cb->c, cb->a, n, S, chunk, root);
                CHECK(w != NULL);
                if (!w) continue;
                char topo[32];
                snprintf(topo, sizeof topo, "star:%u", n);
                struct rig g;
                CHECK_EQ_I(rig_run(&g, topo, w), 0);
                arb_workload_result r;
                arb_workload_get_result(w, &r);
                uint64_t unit = cb->c == ARB_COLL_BARRIER                            ? 1
                                : cb->a == ARB_HC_RING || cb->c == ARB_COLL_ALLTOALL ? S / n
                                : cb->a == ARB_HC_TREE                               ? S / 2
                                                                                     : S;
                uint64_t P = sliced && cb->c != ARB_COLL_BARRIER ? (unit + chunk - 1) / chunk : 1;
                if (!r.done || r.messages_total != want_msgs(cb->c, cb->a, n, P) || r.slices != P ||
                    r.cct < lower_bound(cb->c, cb->a, n, S, P))
                    printf("  %s/%s n=%u P=%llu: done %d msgs %llu want %llu cct %llu bound %llu\n",
                           arb_coll_name(cb->c), arb_hc_algo_name(cb->a), n, (unsigned long long)P,
                           r.done, (unsigned long long)r.messages_total,
                           (unsigned long long)want_msgs(cb->c, cb->a, n, P),
                           (unsigned long long)r.cct,
                           (unsigned long long)lower_bound(cb->c, cb->a, n, S, P));
                CHECK(r.done);
                CHECK_EQ_U(r.slices, P);
                CHECK_EQ_U(r.messages_total, want_msgs(cb->c, cb->a, n, P));
                CHECK(r.cct >= lower_bound(cb->c, cb->a, n, S, P));
                CHECK_EQ_U(r.flows_done, r.flows_planned);
                /* every rank done, no later than the CCT */
                for (uint32_t k = 0; k < n; k++) {
                    arb_time done;
                    CHECK_EQ_I(arb_workload_rank(w, k, NULL, &done, NULL, NULL), 0);
                    CHECK(done != ARB_TIME_NEVER && done <= r.cct);
                }
                /* a message starts only after what it waits for arrived */
                uint64_t nm = arb_workload_hc_messages(w), bad = 0, bytes = 0;
                CHECK_EQ_U(nm, r.messages_total);
                for (uint64_t m = 0; m < nm; m++) {
                    arb_hc_msg hm, dm;
                    CHECK_EQ_I(arb_workload_hc_msg(w, m, &hm), 0);
                    bytes += hm.bytes;
                    if (hm.delivered == ARB_TIME_NEVER || hm.posted > hm.delivered) bad++;
                    for (uint32_t d = 0; d < hm.n_deps; d++) {
                        arb_workload_hc_msg(w, hm.deps[d], &dm);
                        if (dm.delivered > hm.posted) bad++;
                        if (dm.dst != hm.src) bad++; /* the data is at the sender */
                    }
                }
                CHECK_EQ_U(bad, 0);
                CHECK_EQ_U(bytes, r.bytes_planned);
                rig_free(&g);
                arb_workload_free(w);
            }
}

/* The byte volume per rank of the ring algorithms, exact. */
TEST(ring_volumes)
{
    const uint32_t n = 6;
    const uint64_t S = 6 * 100000;
    struct {
        arb_coll c;
        uint64_t per_rank;
    } v[] = {{ARB_COLL_ALLREDUCE, 2 * (n - 1) * (S / n)},
             {ARB_COLL_REDUCESCATTER, (n - 1) * (S / n)},
             {ARB_COLL_ALLGATHER, (n - 1) * (S / n)},
             {ARB_COLL_ALLTOALL, (n - 1) * (S / n)}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        arb_workload *w = hcoll(v[i].c, ARB_HC_AUTO, n, S, 0, 0);
        CHECK(w != NULL);
        if (!w) continue;
        struct rig g;
        CHECK_EQ_I(rig_run(&g, "star:6", w), 0);
        for (uint32_t k = 0; k < n; k++) {
            uint64_t sent;
            arb_workload_rank(w, k, NULL, NULL, &sent, NULL);
            CHECK_EQ_U(sent, v[i].per_rank);
        }
        arb_workload_result r;
        arb_workload_get_result(w, &r);
        double f = arb_coll_busbw_factor(v[i].c, n);
        CHECK(r.busbw_gbps > r.algbw_gbps * f * 0.999999 &&
              r.busbw_gbps < r.algbw_gbps * f * 1.000001);
        rig_free(&g);
        arb_workload_free(w);
    }
}

/* Ring AllReduce as a host collective is the ring_allreduce workload. */
TEST(ring_matches_ring_allreduce)
{
    static const uint64_t chunks[] = {0, 64 * 1024};
    for (size_t i = 0; i < 2; i++) {
        arb_allreduce_config ar = {NULL, 8, 4 << 20, chunks[i], 0};
        arb_workload *a = NULL,
                     *b = hcoll(ARB_COLL_ALLREDUCE, ARB_HC_RING, 8, 4 << 20, chunks[i], 0);
        char err[256];
        CHECK_EQ_I(arb_workload_new_allreduce(&a, &ar, 16, NULL, err, sizeof err), 0);
        CHECK(b != NULL);
        if (!a || !b) return;
        struct rig ga, gb;
        CHECK_EQ_I(rig_run(&ga, "leafspine:4,4,4", a), 0);
        CHECK_EQ_I(rig_run(&gb, "leafspine:4,4,4", b), 0);
        arb_workload_result ra, rb;
        arb_workload_get_result(a, &ra);
        arb_workload_get_result(b, &rb);
        CHECK(ra.done && rb.done);
        CHECK_EQ_U(ra.cct, rb.cct);
        CHECK_EQ_U(ra.flows_done, rb.flows_done);
        CHECK_EQ_U(ra.bytes_planned, rb.bytes_planned);
        rig_free(&ga);
        rig_free(&gb);
        arb_workload_free(a);
        arb_workload_free(b);
    }
}

/* The double binary tree: per tree at most two children a rank; for even
 * n every rank is an inner node of at most one tree; each tree spans
 * every rank (n - 1 up messages per slice). */
TEST(double_binary_tree_shape)
{
    for (uint32_t n = 2; n <= 40; n++) {
        struct hc_plan *p;
        char err[128];
        CHECK_EQ_I(
            hc_plan_build(&p, ARB_COLL_ALLREDUCE, ARB_HC_TREE, n, 1000 * n, 0, 0, err, sizeof err),
            0);
        if (!p) continue;
        uint32_t *kids = calloc(2 * n, sizeof *kids), *ups = calloc(2, sizeof *ups);
        uint8_t *sends_up = calloc(2 * n, 1);
        for (uint32_t m = 0; m < p->n_msgs; m++) {
            uint32_t ch = p->conn_ch[p->conn[m]];
            if (ch % 2) continue; /* down */
            uint32_t t = ch / 2;
            kids[t * n + p->dst[m]]++;
            sends_up[t * n + p->src[m]]++;
            ups[t]++;
        }
        for (uint32_t t = 0; t < 2; t++) {
            CHECK_EQ_U(ups[t], n - 1);
            for (uint32_t r = 0; r < n; r++) {
                CHECK(kids[t * n + r] <= 2);
                CHECK(sends_up[t * n + r] <= 1); /* one parent */
            }
        }
        if (n % 2 == 0)
            for (uint32_t r = 0; r < n; r++)
                CHECK(!(kids[r] && kids[n + r]));
        free(kids);
        free(ups);
        free(sends_up);
        hc_plan_free(p);
    }
}

/* Two QPs per connection: every message split in two flows, every byte
 * delivered once, the same dependency order. */
TEST(two_qps)
{
    for (size_t ci = 0; ci < sizeof combos / sizeof combos[0]; ci++) {
        const struct combo *cb = &combos[ci];
        arb_workload_config wc;
        arb_workload_config_default(&wc);
        wc.qps = 2;
        arb_hcoll_config hc = {cb->c, cb->a, NULL, 5, 50000, 4096, 2, 0};
        arb_workload *w = NULL;
        char err[256];
        CHECK_EQ_I(arb_workload_new_hcoll(&w, &hc, 5, &wc, err, sizeof err), 0);
        if (!w) continue;
        struct rig g;
        CHECK_EQ_I(rig_run(&g, "star:5", w), 0);
        arb_workload_result r;
        arb_workload_get_result(w, &r);
        CHECK(r.done);
        /* a 1-byte barrier message cannot be split: one flow */
        CHECK_EQ_U(r.flows_planned,
                   cb->c == ARB_COLL_BARRIER ? r.messages_total : 2 * r.messages_total);
        CHECK_EQ_U(r.flows_done, r.flows_planned);
        arb_sim_stats st;
        arb_sim_get_stats(g.s, &st);
        CHECK_EQ_U(st.payload_delivered, r.bytes_planned);
        for (uint64_t m = 0; m < arb_workload_hc_messages(w); m++) {
            arb_hc_msg hm, dm;
            arb_workload_hc_msg(w, m, &hm);
            for (uint32_t d = 0; d < hm.n_deps; d++) {
                arb_workload_hc_msg(w, hm.deps[d], &dm);
                CHECK(dm.delivered <= hm.posted);
            }
        }
        rig_free(&g);
        arb_workload_free(w);
    }
}

TEST(bad_configs)
{
    char err[256];
    arb_workload *w = NULL;
    arb_hcoll_config hc = {ARB_COLL_ALLTOALL, ARB_HC_TREE, NULL, 4, 4096, 0, 0, 0};
    CHECK_EQ_I(arb_workload_new_hcoll(&w, &hc, 4, NULL, err, sizeof err), ARB_EINVAL);
    CHECK(strncmp(err, "algorithm:", 10) == 0);
    hc = (arb_hcoll_config){ARB_COLL_BROADCAST, ARB_HC_AUTO, NULL, 4, 4096, 0, 4, 0};
    CHECK_EQ_I(arb_workload_new_hcoll(&w, &hc, 4, NULL, err, sizeof err), ARB_EINVAL);
    CHECK(strncmp(err, "root:", 5) == 0);
    hc = (arb_hcoll_config){ARB_COLL_ALLREDUCE, ARB_HC_RING, NULL, 4, 3, 0, 0, 0};
    CHECK_EQ_I(arb_workload_new_hcoll(&w, &hc, 4, NULL, err, sizeof err), ARB_EINVAL);
    CHECK(strncmp(err, "size:", 5) == 0);
    hc = (arb_hcoll_config){ARB_COLL_ALLREDUCE, ARB_HC_RING, NULL, 1, 4096, 0, 0, 0};
    CHECK_EQ_I(arb_workload_new_hcoll(&w, &hc, 4, NULL, err, sizeof err), ARB_EINVAL);
    CHECK(strncmp(err, "ranks:", 6) == 0);
    uint32_t twice[] = {0, 1, 1};
    hc = (arb_hcoll_config){ARB_COLL_ALLREDUCE, ARB_HC_RING, twice, 3, 4096, 0, 0, 0};
    CHECK_EQ_I(arb_workload_new_hcoll(&w, &hc, 4, NULL, err, sizeof err), ARB_EINVAL);
    CHECK(strncmp(err, "hosts:", 6) == 0);
    CHECK(w == NULL);
}

TEST(names_and_factors)
{
    CHECK(strcmp(arb_coll_name(ARB_COLL_REDUCESCATTER), "reducescatter") == 0);
    CHECK_EQ_I(arb_hc_algo_parse("binomial"), ARB_HC_BINOMIAL);
    CHECK_EQ_I(arb_coll_parse("gather"), ARB_ENOENT);
    CHECK_EQ_I(arb_hc_algo_resolve(ARB_COLL_ALLREDUCE, ARB_HC_AUTO, 64 * 1024), ARB_HC_RD);
    CHECK_EQ_I(arb_hc_algo_resolve(ARB_COLL_ALLREDUCE, ARB_HC_AUTO, 64 * 1024 + 1), ARB_HC_RING);
    CHECK_EQ_I(arb_hc_algo_resolve(ARB_COLL_BROADCAST, ARB_HC_RING, 1), ARB_HC_CHAIN);
    /* the names and nccl-tests' factors of every collective: test_base */
    /* the host collectives' former names are aliases of base.h's */
    arb_hc_coll old = ARB_HC_ALLTOALL;
    CHECK_EQ_I(old, ARB_COLL_ALLTOALL);
    CHECK_EQ_I(ARB_HC_ALLREDUCE, ARB_COLL_ALLREDUCE);
    CHECK_EQ_I(ARB_HC_REDUCE, ARB_COLL_REDUCE);
    CHECK_EQ_I(ARB_HC_REDUCESCATTER, ARB_COLL_REDUCESCATTER);
    CHECK_EQ_I(ARB_HC_BROADCAST, ARB_COLL_BROADCAST);
    CHECK_EQ_I(ARB_HC_ALLGATHER, ARB_COLL_ALLGATHER);
    CHECK_EQ_I(ARB_HC_BARRIER, ARB_COLL_BARRIER);
    CHECK(strcmp(arb_hc_coll_name(ARB_HC_ALLTOALL), "alltoall") == 0);
    CHECK_EQ_I(arb_hc_coll_parse("barrier"), ARB_HC_BARRIER);
    CHECK(arb_hc_busbw_factor(ARB_HC_ALLREDUCE, 8) == 14.0 / 8);
}

int main(void)
{
    RUN(all_algorithms);
    RUN(ring_volumes);
    RUN(ring_matches_ring_allreduce);
    RUN(double_binary_tree_shape);
    RUN(two_qps);
    RUN(bad_configs);
    RUN(names_and_factors);
    return testkit_done();
}
