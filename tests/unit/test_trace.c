/* Iteration traces: the text reader's rules (one malformed trace per rule,
 * each naming its line and field), and the replay's semantics against
 * figures derived by hand: compute on one stream, dependencies,
 * point-to-point transfers, collectives waiting for their group, exposed
 * communication. */
#include "arbor/plan.h"
#include "arbor/route.h"
#include "arbor/sim.h"
#include "arbor/topo.h"
#include "arbor/workload.h"
#include "testkit.h"

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

static arb_trace *parse(const char *text, char *err, size_t errlen, int *rc)
{
    arb_trace *t = NULL;
    *rc = arb_trace_parse_text(&t, text, strlen(text), "t.txt", err, errlen);
    return t;
}

#define HDR "arbor-trace 1\nranks 2\n"

TEST(text_rules)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"", "t.txt:1: header: empty trace"},
        {"ranks 2\n", "t.txt:1: header: the first line must be"},
        {"arbor-trace 1\n0 1 comp 1us\n", "t.txt:2: ranks: `ranks N` must come before"},
        {"arbor-trace 1\n", "t.txt:1: ranks: no `ranks N` line"},
        {"arbor-trace 1\nranks 0\n", "t.txt:2: ranks: expected `ranks N`"},
        {HDR "ranks 3\n", "t.txt:3: ranks: given twice"},
        {HDR "2 1 comp 1us\n", "t.txt:3: rank: '2' is not a rank"},
        {HDR "0 x comp 1us\n", "t.txt:3: id: 'x' is not a node id"},
        {HDR "0 1 wait 1us\n", "t.txt:3: op: 'wait' is not comp"},
        {HDR "0 1 comp 1 hour\n", "t.txt:3: duration: '1' is not a time"},
        {HDR "0 1 coll allreduce\n", "t.txt:3: coll: missing arguments"},
        {HDR "0 1 coll gather 1KiB\n", "t.txt:3: kind: 'gather' is not allreduce"},
        {HDR "0 1 coll allreduce 1XB\n", "t.txt:3: bytes: '1XB' has an unknown unit (want B, K,"},
        {HDR "0 1 coll allreduce lots\n", "t.txt:3: bytes: 'lots' is not a size"},
        {HDR "0 1 coll allreduce 1.5B\n", "t.txt:3: bytes: '1.5B' is not a whole number of bytes"},
        /* M is binary, MB decimal: 10^6 received of 2^20 sent */
        {HDR "0 1 send 1M to=1\n1 1 recv 1MB from=0\n",
         "t.txt:4: bytes: 1000000 bytes, but the matching send"},
        {HDR "0 1 coll allreduce 0\n", "t.txt:3: bytes: must be at least 1"},
        {HDR "0 1 send 0 to=1\n", "t.txt:3: bytes: must be at least 1"},
        {HDR "0 1 comp 1us speed=3\n", "t.txt:3: speed: not a key of comp"},
        {HDR "0 1 comp 1us deps\n", "t.txt:3: key: 'deps' is not key=value"},
        {HDR "0 1 send 1KiB\n", "t.txt:3: to: missing"},
        {HDR "0 1 send 1KiB to=0\n", "t.txt:3: to: a rank's own rank"},
        {HDR "0 1 recv 1KiB from=5\n", "t.txt:3: from: '5' is not a rank"},
        {HDR "0 1 coll allreduce 1KiB group=tp\n", "t.txt:3: group: 'tp' is not a defined group"},
        {HDR "0 1 coll allreduce 1KiB group=0-0,0\n", "t.txt:3: group: '0-0,0' is not a list"},
        {HDR "0 1 coll allreduce 1KiB group=1\n", "t.txt:3: group: the node's rank is not in"},
        {HDR "group g 0-1\ngroup g 0\n", "t.txt:4: group: 'g' is defined twice"},
        {HDR "0 1 coll broadcast 1KiB root=2\n", "t.txt:3: root: not below the group's size"},
        {HDR "0 1 comp 1us deps=1,\n", "t.txt:3: deps: '1,' is not a list"},
        {HDR "0 1 comp 1us\n0 1 comp 2us\n", "t.txt:4: id: node id 1 is used twice on rank 0"},
        {HDR "0 1 comp 1us deps=7\n", "t.txt:3: deps: dependency 7 is not a node of rank 0"},
        {HDR "0 1 comp 1us deps=1\n", "t.txt:3: deps: a node cannot depend on itself"},
        {HDR "0 1 comp 1us deps=2\n0 2 comp 1us deps=1\n",
         "t.txt:3: deps: the dependencies form a cycle"},
        {HDR "* 1 coll allreduce 1KiB\n0 2 coll allreduce 1KiB\n",
         "t.txt:4: group: collective call 1"},
        {HDR "0 1 coll allreduce 1KiB\n1 1 coll allgather 1KiB\n",
         "t.txt:4: kind: collective differs"},
        {HDR "0 1 coll allreduce 1KiB\n1 1 coll allreduce 2KiB\n",
         "t.txt:4: kind: collective differs"},
        {HDR "0 1 send 1KiB to=1\n", "t.txt:3: to: no matching recv (0 -> 1, tag 0)"},
        {HDR "1 1 recv 1KiB from=0 tag=4\n", "t.txt:3: from: no matching send (0 -> 1, tag 4)"},
        {HDR "0 1 send 1KiB to=1 tag=1\n1 1 recv 1KiB from=0 tag=2\n",
         "t.txt:3: to: no matching recv"},
        {HDR "0 1 send 1KiB to=1\n1 1 recv 2KiB from=0\n",
         "t.txt:4: bytes: 2048 bytes, but the matching send"},
        {HDR "0 1 comp 1us\n\0 2 comp 1us\n", "t.txt:4: line: a NUL byte"},
        {HDR "group 1g 0\n", "t.txt:3: group: name '1g' must not start with a digit"},
        {HDR "group g\n", "t.txt:3: group: expected `group NAME RANKS`"},
        {"arbor-trace 1\ngroup g 0\n", "t.txt:2: group: before `ranks N`"},
        {HDR "0 1 comp 1us "
             "a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a\n",
         "t.txt:3: line: too many fields"},
        {HDR "0 1 send 1KiB to=1 tag=x\n", "t.txt:3: tag: 'x' is not a tag"},
        {HDR "0 1 coll reduce 1KiB root=r\n", "t.txt:3: root: 'r' is not a rank index"},
        {"arbor-trace 2\n", "t.txt:1: header: the first line must be `arbor-trace 1`"},
    };
    char err[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc;
        size_t len = strlen(bad[i].text);
        if (strstr(bad[i].want, "NUL")) len += 1 + strlen(bad[i].text + len + 1); /* past the NUL */
        arb_trace *t = NULL;
        rc = arb_trace_parse_text(&t, bad[i].text, len, "t.txt", err, sizeof err);
        if (rc != ARB_EPARSE || strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
            TESTKIT_REPORT("case %zu: rc %d, got '%s', want '%s...'", i, rc, err, bad[i].want);
        CHECK(t == NULL);
        CHECK(strchr(err, '\n') == NULL); /* one line */
    }
}

TEST(text_good)
{
    char err[256];
    int rc;
    arb_trace *t = parse("# a comment\n\narbor-trace 1\nranks 4\ngroup pair 2,0\n"
                         "* 1 comp 10us   # every rank\n"
                         "* 2 coll allreduce 1MiB deps=1\n"
                         "0 3 coll broadcast 4KiB group=pair root=1\n"
                         "2 3 coll broadcast 4KiB group=pair root=1 deps=2\n"
                         "1 4 send 1KB to=3 tag=7\n3 4 recv 1000 from=1 tag=7 deps=1,2\n",
                         err, sizeof err, &rc);
    CHECK_EQ_I(rc, 0);
    if (!t) {
        printf("  %s\n", err);
        return;
    }
    CHECK_EQ_U(arb_trace_ranks(t), 4);
    CHECK_EQ_U(arb_trace_nodes(t), 4 + 4 + 2 + 2);
    arb_trace_free(t);
    /* the one size syntax: a send and its recv match in bytes whatever the
     * spelling (1M = 1MiB = 1048576, 1.5k = 1536) */
    t = parse(HDR "0 1 send 1M to=1\n1 1 recv 1MiB from=0\n"
                  "0 2 send 1.5k to=1\n1 2 recv 1536 from=0\n",
              err, sizeof err, &rc);
    CHECK_EQ_I(rc, 0);
    if (!t) printf("  %s\n", err);
    arb_trace_free(t);
}

/* ---- replay ------------------------------------------------------------------ */

struct run {
    arb_topo *t;
    arb_route *r;
    arb_sim *s;
    arb_workload *w;
    arb_workload_result res;
};

/* The collectives' backend of the next replays: 1 Arbor (the simulator's
 * and the planner's defaults, header-only, or values), 0 the host. */
static int g_arbor, g_values;
static arb_time g_delay; /* the workload's start_delay */

/* Replay `text` over `topo` with the default 100 Gb/s, 1 us links. */
static int replay(struct run *x, const char *topo, const char *text, arb_hc_algo algo)
{
    memset(x, 0, sizeof *x);
    char err[512];
    arb_trace *tr = NULL;
    if (arb_trace_parse_text(&tr, text, strlen(text), "t.txt", err, sizeof err) < 0 ||
        arb_topo_new(&x->t, topo, NULL, err, sizeof err) < 0 ||
        arb_route_new(&x->r, x->t, "ecmp", NULL, err, sizeof err) < 0) {
        printf("  replay: %s\n", err);
        arb_trace_free(tr);
        return -1;
    }
    arb_iteration_config ic;
    memset(&ic, 0, sizeof ic);
    ic.algo = algo;
    arb_sim_arbor_config ac;
    arb_sim_arbor_config_default(&ac);
    ac.values = g_values;
    arb_plan_config pc;
    arb_plan_config_default(&pc);
    pc.dtype = ARB_DTYPE_I32;
    ic.arbor = g_arbor;
    ic.topo = x->t;
    ic.arbor_cfg = &ac;
    ic.plan_cfg = &pc;
    arb_workload_config wc;
    arb_workload_config_default(&wc);
    wc.start_delay = g_delay;
    if (arb_workload_new_iteration(&x->w, tr, &ic, arb_topo_n_hosts(x->t), &wc, err, sizeof err) <
        0) {
        printf("  replay: %s\n", err);
        return -1;
    }
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = route_fn;
    cfg.route_ctx = x->r;
    cfg.on_flow_done = arb_workload_on_flow_done;
    cfg.done_ctx = x->w;
    cfg.on_flow_sent = arb_workload_on_flow_sent;
    cfg.sent_ctx = x->w;
    if (arb_sim_new(&x->s, x->t, &cfg) < 0 || arb_workload_start(x->w, x->s) < 0) return -1;
    /* the simulator stops at every timer the workload sets during a run */
    for (arb_time at; (at = arb_workload_next_timer(x->w)) != ARB_TIME_NEVER ||
                      arb_sim_now(x->s) < ARB_TIME_NEVER - 1;) {
        if (arb_sim_run(x->s, at == ARB_TIME_NEVER ? ARB_TIME_NEVER - 1 : at) < 0) return -1;
        if (arb_workload_next_timer(x->w) < at) continue; /* set meanwhile */
        if (at != ARB_TIME_NEVER) {
            arb_workload_timer(x->w, x->s, at);
        } else if (arb_workload_next_timer(x->w) == ARB_TIME_NEVER) {
            break; /* ran out of events with no timer left */
        }
    }
    arb_workload_get_result(x->w, &x->res);
    return arb_workload_error(x->w);
}

static void run_free(struct run *x)
{
    arb_workload_free(x->w);
    arb_sim_free(x->s);
    arb_route_free(x->r);
    arb_topo_free(x->t);
}

static arb_iter_rank rank_fig(const struct run *x, uint32_t r)
{
    arb_iter_rank ir;
    memset(&ir, 0, sizeof ir);
    arb_workload_iter_rank(x->w, r, &ir);
    return ir;
}

#define US ARB_PS_PER_US

/* Compute only: a chain adds up; independent nodes share one stream. */
TEST(compute_stream)
{
    struct run x;
    CHECK_EQ_I(replay(&x, "star:2",
                      HDR "0 1 comp 10us\n0 2 comp 20us deps=1\n"
                          "1 1 comp 7us\n1 2 comp 5us\n1 3 comp 0 deps=1,2\n",
                      ARB_HC_AUTO),
               0);
    CHECK(x.res.done);
    CHECK_EQ_U(x.res.iter_time, 30 * US);
    CHECK_EQ_U(rank_fig(&x, 0).finish, 30 * US);
    CHECK_EQ_U(rank_fig(&x, 1).finish, 12 * US); /* 7 + 5 on one stream, not max(7, 5) */
    CHECK_EQ_U(rank_fig(&x, 1).compute, 12 * US);
    CHECK_EQ_U(x.res.exposed_max, 0);
    CHECK_EQ_U(x.res.compute_max, 30 * US);
    run_free(&x);
}

/* A send after 50 us of compute; the receiver waits from 0 on. */
TEST(p2p_transfer)
{
    const uint64_t B = 1 << 20;
    struct run x;
    CHECK_EQ_I(replay(&x, "star:2",
                      HDR "0 1 comp 50us\n0 2 send 1MiB to=1 deps=1\n"
                          "1 1 recv 1MiB from=0\n1 2 comp 10us deps=1\n",
                      ARB_HC_AUTO),
               0);
    CHECK(x.res.done);
    CHECK_EQ_U(x.res.p2p, 1);
    arb_time wire = (arb_time)(B * 8 * ARB_PS_PER_S / ARB_TOPO_DEFAULT_RATE); /* payload only */
    arb_iter_rank r0 = rank_fig(&x, 0), r1 = rank_fig(&x, 1);
    CHECK(r1.finish >= 50 * US + wire + 10 * US);
    /* rank 1 waits on its receive with nothing to compute: all exposed */
    CHECK_EQ_U(r1.exposed, r1.finish - 10 * US);
    CHECK_EQ_U(r1.comm, r1.exposed);
    CHECK(r0.comm >= wire);
    CHECK_EQ_U(r0.exposed, r0.comm); /* the send is its last node */
    CHECK_EQ_U(r0.finish, 50 * US + r0.comm);
    run_free(&x);
}

/* An AllReduce overlapped by a longer independent compute: nothing exposed
 * and the iteration is the compute; then the same dependent on it. */
TEST(overlap_and_exposed)
{
    struct run x;
    CHECK_EQ_I(replay(&x, "star:4",
                      "arbor-trace 1\nranks 4\n* 1 comp 300us\n"
                      "* 2 coll allreduce 64KiB\n",
                      ARB_HC_RING),
               0);
    CHECK(x.res.done);
    /* 64 KiB over 4 ranks: 6 steps of 16 KiB, far below 300 us */
    CHECK_EQ_U(x.res.iter_time, 300 * US);
    CHECK_EQ_U(x.res.exposed_max, 0);
    for (uint32_t r = 0; r < 4; r++)
        CHECK(rank_fig(&x, r).comm > 0 && rank_fig(&x, r).comm < 300 * US);
    run_free(&x);
    CHECK_EQ_I(replay(&x, "star:4",
                      "arbor-trace 1\nranks 4\n* 1 comp 300us\n"
                      "* 2 coll allreduce 64KiB deps=1\n",
                      ARB_HC_RING),
               0);
    arb_time ar = x.res.iter_time - 300 * US;
    /* ring: every rank sends 6 x 16 KiB = 96 KiB in sequence */
    CHECK(ar >= (arb_time)(6 * 16384 * 8 * ARB_PS_PER_S / ARB_TOPO_DEFAULT_RATE));
    CHECK_EQ_U(x.res.exposed_max, ar);
    CHECK_EQ_U(x.res.exposed_mean, ar);
    run_free(&x);
}

/* A collective waits for every member: rank 1 calls it 100 us late, so
 * rank 0 cannot finish before 100 us and waits exposed meanwhile. */
TEST(collective_waits_for_group)
{
    struct run x;
    CHECK_EQ_I(replay(&x, "star:2",
                      HDR "0 1 coll allreduce 8KiB\n1 0 comp 100us\n"
                          "1 1 coll allreduce 8KiB deps=0\n",
                      ARB_HC_RING),
               0);
    CHECK(x.res.done);
    arb_iter_rank r0 = rank_fig(&x, 0), r1 = rank_fig(&x, 1);
    CHECK(r0.finish > 100 * US);
    CHECK_EQ_U(r0.exposed, r0.finish);
    CHECK_EQ_U(r1.exposed, r1.finish - 100 * US);
    CHECK_EQ_U(x.res.collectives, 1);
    run_free(&x);
}

/* A group of one finishes at once; tags keep transfers apart. */
TEST(trivial_group_and_tags)
{
    struct run x;
    CHECK_EQ_I(replay(&x, "star:2",
                      HDR "0 1 coll allreduce 1MiB group=0\n0 2 comp 5us deps=1\n"
                          "0 3 send 4KiB to=1 tag=2\n0 4 send 8KiB to=1 tag=1\n"
                          "1 1 recv 8KiB from=0 tag=1\n1 2 recv 4KiB from=0 tag=2\n",
                      ARB_HC_AUTO),
               0);
    CHECK(x.res.done);
    CHECK_EQ_U(rank_fig(&x, 0).compute, 5 * US);
    CHECK_EQ_U(x.res.p2p, 2);
    CHECK_EQ_U(x.res.flows_done, 2);
    run_free(&x);
}

/* Over Arbor: an AllReduce beside a longer compute exposes nothing; made
 * dependent on it, it is all exposed, and it moves at least its buffer up
 * and down each host link (64 KiB in 8274 B frames of 8192 B: 80 ps a wire
 * byte); a collective waits for its late member; every job's values are
 * exact. */
TEST(arbor_backend)
{
    struct run x;
    g_arbor = 1;
    g_values = 1;
    CHECK_EQ_I(replay(&x, "star:4",
                      "arbor-trace 1\nranks 4\n* 1 comp 300us\n"
                      "* 2 coll allreduce 64KiB\n",
                      ARB_HC_AUTO),
               0);
    CHECK(x.res.done);
    CHECK_EQ_U(x.res.iter_time, 300 * US);
    CHECK_EQ_U(x.res.exposed_max, 0);
    CHECK_EQ_U(x.res.flows_done, 0); /* nothing on the host transport */
    arb_sim_arbor_result a;
    CHECK_EQ_I(arb_sim_arbor_result_get(x.s, &a), 0);
    CHECK(a.done && a.correct == 1 && a.invariant_errors == 0);
    CHECK_EQ_I(arb_sim_arbor_jobs(x.s), 1);
    run_free(&x);
    CHECK_EQ_I(replay(&x, "star:4",
                      "arbor-trace 1\nranks 4\n* 1 comp 300us\n"
                      "* 2 coll allreduce 64KiB deps=1\n* 3 coll allgather 64KiB deps=2\n",
                      ARB_HC_AUTO),
               0);
    arb_time comm = x.res.iter_time - 300 * US;
    CHECK(comm >= (arb_time)65536 * 8274 / 8192 * 80);
    CHECK_EQ_U(x.res.exposed_max, comm);
    CHECK_EQ_I(arb_sim_arbor_jobs(x.s), 2);
    CHECK_EQ_I(arb_sim_arbor_result_get(x.s, &a), 0);
    CHECK(a.done && a.correct == 1 && a.invariant_errors == 0);
    /* the second collective's channels have the next UDP port on each host */
    arb_sim_arbor_result j1;
    CHECK_EQ_I(arb_sim_arbor_job_result(x.s, 1, &j1), 0);
    CHECK_EQ_U(j1.port, 17471);
    CHECK(j1.start >= 300 * US);
    run_free(&x);
    CHECK_EQ_I(replay(&x, "star:2",
                      HDR "0 1 coll allreduce 8KiB\n1 0 comp 100us\n"
                          "1 1 coll allreduce 8KiB deps=0\n",
                      ARB_HC_AUTO),
               0);
    CHECK(x.res.done);
    arb_iter_rank r0 = rank_fig(&x, 0), r1 = rank_fig(&x, 1);
    CHECK(r0.finish > 100 * US);
    CHECK_EQ_U(r0.exposed, r0.finish);
    CHECK_EQ_U(r1.exposed, r1.finish - 100 * US);
    run_free(&x);
    g_arbor = g_values = 0;
}

/* The first done of job `job`'s ranks. */
static arb_time first_done(const arb_sim *s, int job)
{
    arb_time m = ARB_TIME_NEVER, d;
    uint32_t h;
    for (uint32_t r = 0; r < arb_sim_arbor_job_ranks(s, job); r++)
        if (arb_sim_arbor_rank(s, job, r, &h, &d) == 0 && d < m) m = d;
    return m;
}

/* start_delay over Arbor: an entry made after the iteration's start waits
 * D. A compute node's end enters the AllReduce D late; each rank's done in
 * it (the simulator's callback) enters the AllGather D later, through an
 * event of its own at that time. Nothing but compute runs before the
 * AllReduce, so it runs as without the delay, D later; the AllGather
 * starts D after the AllReduce's first rank is done (its entries, each D
 * after its rank's done, overlap the AllReduce's tail otherwise than
 * without the delay: no exact shift follows for it), and the iteration
 * ends its 10 us after the AllGather's last rank. */
TEST(arbor_backend_start_delay)
{
    const char *text = "arbor-trace 1\nranks 4\n* 1 comp 300us\n"
                       "* 2 coll allreduce 64KiB deps=1\n* 3 coll allgather 64KiB deps=2\n"
                       "* 4 comp 10us deps=3\n";
    const arb_time D = 3 * US;
    struct run x;
    arb_sim_arbor_result a0, a[2];
    g_arbor = g_values = 1;
    CHECK_EQ_I(replay(&x, "star:4", text, ARB_HC_AUTO), 0);
    CHECK(x.res.done);
    CHECK_EQ_I(arb_sim_arbor_job_result(x.s, 0, &a0), 0);
    CHECK_EQ_U(a0.start, 300 * US);
    run_free(&x);
    for (int k = 0; k < 2; k++) {
        arb_time d = k ? D : 0;
        g_delay = d;
        CHECK_EQ_I(replay(&x, "star:4", text, ARB_HC_AUTO), 0);
        CHECK(x.res.done);
        CHECK_EQ_I(arb_sim_arbor_job_result(x.s, 0, &a[0]), 0);
        CHECK_EQ_I(arb_sim_arbor_job_result(x.s, 1, &a[1]), 0);
        CHECK_EQ_U(a[0].start, a0.start + d);
        CHECK_EQ_U(a[0].finish, a0.finish + d);
        CHECK_EQ_U(a[1].start, first_done(x.s, 0) + d);
        CHECK_EQ_U(x.res.iter_time, a[1].finish + 10 * US);
        CHECK(a[0].correct == 1 && a[1].correct == 1);
        run_free(&x);
    }
    g_delay = 0;
    g_arbor = g_values = 0;
}

TEST(iteration_bad_config)
{
    char err[256];
    arb_trace *t = NULL;
    const char *txt = "arbor-trace 1\nranks 4\n* 1 comp 1us\n";
    CHECK_EQ_I(arb_trace_parse_text(&t, txt, strlen(txt), "t", err, sizeof err), 0);
    arb_workload *w = NULL;
    CHECK_EQ_I(arb_workload_new_iteration(&w, t, NULL, 2, NULL, err, sizeof err), ARB_EINVAL);
    CHECK(strncmp(err, "hosts:", 6) == 0);
    CHECK(w == NULL);
    /* Arbor without the fabric and its settings */
    CHECK_EQ_I(arb_trace_parse_text(&t, txt, strlen(txt), "t", err, sizeof err), 0);
    arb_iteration_config ic;
    memset(&ic, 0, sizeof ic);
    ic.arbor = 1;
    CHECK_EQ_I(arb_workload_new_iteration(&w, t, &ic, 4, NULL, err, sizeof err), ARB_EINVAL);
    CHECK(strncmp(err, "backend: arbor needs", 20) == 0);
    CHECK(w == NULL);
    CHECK_EQ_I(arb_trace_load(&t, "/nonexistent/x.txt", ARB_TRACE_AUTO, err, sizeof err), ARB_EIO);
    CHECK(strstr(err, "/nonexistent/x.txt: cannot read") != NULL);
}

int main(void)
{
    RUN(text_rules);
    RUN(text_good);
    RUN(compute_stream);
    RUN(p2p_transfer);
    RUN(overlap_and_exposed);
    RUN(collective_waits_for_group);
    RUN(trivial_group_and_tags);
    RUN(arbor_backend);
    RUN(arbor_backend_start_delay);
    RUN(iteration_bad_config);
    return testkit_done();
}
