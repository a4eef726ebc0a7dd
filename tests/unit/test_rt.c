/*
 * The runtime on loopback: a software switch and N ranks, each in its own
 * thread of this process with its own socket (a communicator is used by
 * one thread; distinct ones are independent). Every collective and dtype
 * at 2, 3, 4 and 8 ranks is compared with a reference computed here; loss
 * is injected on the ranks' and the switch's sends; admission is checked
 * with wrong secrets and strangers.
 *
 * Inputs: rank r's element i of dtype d is a small integer v(r, i) in
 * [-8, 8] (exact in every dtype, so every order of summation gives the
 * same result for up to 8 ranks: 8 x 8 = 64 < 2^8, bf16's significand),
 * and, for the float tolerance test, fractions in (-1, 1).
 */
#include "arbor/reduce.h"
#include "arbor/rt.h"
#include "arbor/topo.h"
#include "testkit.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECRET "test secret"

/* ---- the switch in a thread ------------------------------------------ */

struct sw {
    arb_rt_switch *s;
    volatile int stop;
    pthread_t t;
    char addr[32];
};

static void *sw_main(void *arg)
{
    struct sw *w = arg;
    arb_rt_switch_run(w->s, ARB_TIME_NEVER, &w->stop);
    return NULL;
}

static int g_no_gso;         /* plain sendmmsg / recvmmsg in the next switches and ranks */
static uint32_t g_threads;   /* threads of the next switches (0: one) */
static int g_io;             /* the next switches' and ranks' socket I/O (arb_rt_io) */
static uint64_t g_uring;     /* ranks of the last runs whose I/O went through io_uring */
static int g_unsteered;      /* warnings that the kernel refused the steering program */
static arb_time g_spin;      /* the next switches' and ranks' spin before blocking */
static uint64_t g_waits;     /* blocking waits and spin hits of the ranks of the last run */
static const char *g_ecn;    /* the next switches' ECN setting (NULL: the default) */
static int g_cc;             /* the next ranks' congestion controller (arb_cc_kind; 0: fixed) */
static arb_time g_timer_min; /* the next ranks' timer floor (0: the default) */
static uint64_t g_ce;        /* datagrams marked CE the ranks of the last runs received */
static uint64_t g_cuts;      /* and the decreases of their controllers */
static uint32_t g_unmarked;  /* ranks of the last runs that received no mark */
/* the fewest and most calls of a rank of the last run whose controller
 * continued an earlier call's */
static uint64_t g_cont_min, g_cont_max;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static void sw_log(void *user, arb_log_level level, const char *msg)
{
    (void)user;
    (void)level;
    if (strstr(msg, "steering")) {
        pthread_mutex_lock(&g_mu);
        g_unsteered++;
        pthread_mutex_unlock(&g_mu);
    }
}

static int sw_make(struct sw *w, double drop, uint32_t jobs, const char *topo, uint32_t level,
                   uint32_t index)
{
    arb_rt_switch_config cfg;
    arb_rt_switch_config_default(&cfg);
    cfg.listen = "127.0.0.1:0";
    if (topo) cfg.topo = topo;
    cfg.level = level;
    cfg.index = index;
    cfg.no_gso = g_no_gso;
    cfg.spin = g_spin;
    cfg.threads = g_threads;
    cfg.io = g_io;
    cfg.logger.fn = sw_log;
    cfg.logger.max_level = ARB_LOG_WARN;
    cfg.drop = drop;
    cfg.seed = 7;
    if (g_ecn && arb_rt_ecn_parse(g_ecn, &cfg.ecn, NULL, 0) < 0) return -1;
    for (uint32_t j = 0; j < jobs; j++) {
        cfg.jobs[j].id = 1 + j;
        cfg.jobs[j].secret = SECRET;
    }
    cfg.n_jobs = jobs;
    char err[200];
    memset(w, 0, sizeof *w);
    if (arb_rt_switch_new(&w->s, &cfg, err, sizeof err) < 0) {
        fprintf(stderr, "switch: %s\n", err);
        return -1;
    }
    snprintf(w->addr, sizeof w->addr, "127.0.0.1:%u", arb_rt_switch_port(w->s));
    return 0;
}

static int sw_start(struct sw *w, double drop, uint32_t jobs)
{
    if (sw_make(w, drop, jobs, NULL, 1, 0) < 0) return -1;
    return pthread_create(&w->t, NULL, sw_main, w) == 0 ? 0 : -1;
}

static void sw_stop(struct sw *w)
{
    __atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
    pthread_join(w->t, NULL);
    arb_rt_switch_free(w->s);
}

/* ---- ranks in threads -------------------------------------------------- */

struct rank;
typedef int (*body_fn)(struct rank *k, arb_rt_comm *c);

struct rank {
    uint32_t rank, size, job;
    const char *sw;
    const char *topo;
    const char *secret;
    double drop;
    arb_time timeout;
    body_fn body;
    int rc;      /* comm_new's */
    int body_rc; /* the body's: 0 or the number of wrong elements, or an error */
    char err[256];
    pthread_t t;
};

static void *rank_main(void *arg)
{
    struct rank *k = arg;
    arb_rt_config cfg;
    arb_rt_config_default(&cfg);
    cfg.rank = k->rank;
    cfg.size = k->size;
    cfg.sw = k->sw;
    if (k->topo) cfg.topo = k->topo;
    cfg.job = k->job ? k->job : 1;
    cfg.secret = k->secret ? k->secret : SECRET;
    cfg.bind = "127.0.0.1:0";
    cfg.drop = k->drop;
    cfg.seed = 11;
    cfg.timeout = k->timeout ? k->timeout : 20 * ARB_PS_PER_S;
    cfg.no_gso = g_no_gso;
    cfg.spin = g_spin;
    cfg.io = g_io;
    if (g_cc) cfg.cc = g_cc;
    if (g_timer_min) cfg.timeout_min = g_timer_min;
    arb_rt_comm *c;
    k->rc = arb_rt_comm_new(&c, &cfg, k->err, sizeof k->err);
    if (k->rc < 0) return NULL;
    k->body_rc = k->body(k, c);
    if (k->body_rc < 0) snprintf(k->err, sizeof k->err, "%s", arb_rt_errmsg(c));
    arb_rt_stats st;
    arb_rt_get_stats(c, &st);
    pthread_mutex_lock(&g_mu);
    g_waits += st.waits + st.spin_hits;
    g_uring += st.io_uring;
    g_ce += st.ce_marks;
    g_cuts += st.cc_decreases;
    g_unmarked += st.ce_marks == 0;
    if (st.cc_continued < g_cont_min) g_cont_min = st.cc_continued;
    if (st.cc_continued > g_cont_max) g_cont_max = st.cc_continued;
    pthread_mutex_unlock(&g_mu);
    arb_rt_comm_free(c);
    return NULL;
}

/* Run body on n ranks of job `job`, rank r through switch address swv[r]
 * on fabric topo (NULL: star); 0 when every rank joined and its body
 * returned 0. */
static int run_ranks_on(const char *const *swv, const char *topo, uint32_t n, uint32_t job,
                        double drop, body_fn body)
{
    struct rank k[16];
    memset(k, 0, sizeof k);
    for (uint32_t r = 0; r < n; r++) {
        k[r].rank = r;
        k[r].size = n;
        k[r].job = job;
        k[r].sw = swv[r];
        k[r].topo = topo;
        k[r].drop = drop;
        k[r].body = body;
        pthread_create(&k[r].t, NULL, rank_main, &k[r]);
    }
    int bad = 0;
    for (uint32_t r = 0; r < n; r++) {
        pthread_join(k[r].t, NULL);
        if (k[r].rc < 0 || k[r].body_rc != 0) {
            fprintf(stderr, "  rank %u of %u: join %d, body %d: %s\n", r, n, k[r].rc, k[r].body_rc,
                    k[r].err);
            bad++;
        }
    }
    return bad;
}

static int run_ranks(const char *sw, uint32_t n, uint32_t job, double drop, body_fn body)
{
    const char *swv[16];
    for (uint32_t r = 0; r < n; r++)
        swv[r] = sw;
    return run_ranks_on(swv, NULL, n, job, drop, body);
}

/* ---- a fabric of switches ---------------------------------------------- */

struct fabric {
    arb_topo *t;
    struct sw sw[16];
    uint32_t node[16];
    uint32_t n;
};

/* One switch thread per switch of topo, each knowing every other. */
static int fabric_start(struct fabric *f, const char *topo, double drop)
{
    memset(f, 0, sizeof *f);
    char err[200];
    if (arb_topo_new(&f->t, topo, NULL, err, sizeof err) < 0) return -1;
    unsigned h = arb_topo_height(f->t);
    uint32_t lv[16], ix[16];
    for (unsigned l = 1; l <= h; l++)
        for (uint32_t i = 0; i < arb_topo_level_size(f->t, l) && f->n < 16; i++) {
            lv[f->n] = l;
            ix[f->n] = i;
            f->node[f->n] = arb_topo_node_id(f->t, l, i);
            if (sw_make(&f->sw[f->n], drop, 1, topo, l, i) < 0) return -1;
            f->n++;
        }
    for (uint32_t a = 0; a < f->n; a++)
        for (uint32_t b = 0; b < f->n; b++)
            if (a != b && arb_rt_switch_add_peer(f->sw[a].s, lv[b], ix[b], f->sw[b].addr, err,
                                                 sizeof err) < 0)
                return -1;
    for (uint32_t a = 0; a < f->n; a++)
        pthread_create(&f->sw[a].t, NULL, sw_main, &f->sw[a]);
    return 0;
}

/* The address of the leaf switch of host j. */
static const char *fabric_leaf(const struct fabric *f, uint32_t j)
{
    const arb_node *h = arb_topo_node(f->t, j);
    uint32_t leaf = arb_topo_port(f->t, h->first_up)->peer;
    for (uint32_t a = 0; a < f->n; a++)
        if (f->node[a] == leaf) return f->sw[a].addr;
    return "?";
}

static void fabric_stop(struct fabric *f)
{
    for (uint32_t a = 0; a < f->n; a++)
        sw_stop(&f->sw[a]);
    arb_topo_free(f->t);
}

/* ---- values and references ------------------------------------------- */

static int32_t v(uint32_t r, uint64_t i)
{
    return (int32_t)((7u * r + 13u * (uint32_t)(i % 17u)) % 17u) - 8;
}

/* op over ranks 0..n-1 of v(r, i). */
static double ref(arb_op op, uint32_t n, uint64_t i)
{
    double acc = v(0, i);
    for (uint32_t r = 1; r < n; r++) {
        double x = v(r, i);
        acc = op == ARB_OP_SUM   ? acc + x
              : op == ARB_OP_MAX ? (x > acc ? x : acc)
                                 : (x < acc ? x : acc);
    }
    return acc;
}

static void fill(uint8_t *b, arb_dtype dt, uint32_t r, uint64_t first, size_t count)
{
    size_t es = arb_dtype_size(dt);
    for (size_t i = 0; i < count; i++)
        arb_elem_put(b + i * es, dt, v(r, first + i));
}

/* ---- one rank's work: every collective, every dtype ------------------- */

static size_t g_count = 3000; /* elements: several packets for the wide types */
static arb_op g_op = ARB_OP_SUM;

static int all_collectives(struct rank *k, arb_rt_comm *c)
{
    uint32_t n = k->size, me = k->rank;
    size_t count = g_count;
    int wrong = 0;
    for (int dt = 0; dt < ARB_DTYPE_COUNT; dt++) {
        size_t es = arb_dtype_size(dt);
        uint8_t *send = malloc(count * n * es), *recv = malloc(count * n * es);
        if (!send || !recv) return ARB_ENOMEM;
        /* allreduce */
        fill(send, dt, me, 0, count);
        memset(recv, 0x55, count * es);
        int rc = arb_rt_allreduce(c, send, recv, count, dt, g_op);
        if (rc < 0) return rc;
        for (size_t i = 0; i < count; i++)
            wrong += arb_elem_get(recv + i * es, dt) != ref(g_op, n, i);
        /* reduce to the last rank */
        memset(recv, 0x55, count * es);
        rc = arb_rt_reduce(c, send, recv, count, dt, g_op, n - 1);
        if (rc < 0) return rc;
        if (me == n - 1)
            for (size_t i = 0; i < count; i++)
                wrong += arb_elem_get(recv + i * es, dt) != ref(g_op, n, i);
        /* reducescatter: block b of rank r's input is v(r, b count + i) */
        fill(send, dt, me, 0, count * n);
        memset(recv, 0x55, count * es);
        rc = arb_rt_reducescatter(c, send, recv, count, dt, g_op);
        if (rc < 0) return rc;
        for (size_t i = 0; i < count; i++)
            wrong += arb_elem_get(recv + i * es, dt) != ref(g_op, n, (uint64_t)me * count + i);
        /* broadcast from rank 1 */
        if (me == 1)
            fill(recv, dt, 1, 0, count);
        else
            memset(recv, 0x55, count * es);
        rc = arb_rt_broadcast(c, recv, count, dt, 1);
        if (rc < 0) return rc;
        for (size_t i = 0; i < count; i++)
            wrong += arb_elem_get(recv + i * es, dt) != v(1, i);
        /* allgather: block r = rank r's input */
        fill(send, dt, me, 0, count);
        memset(recv, 0x55, count * n * es);
        rc = arb_rt_allgather(c, send, recv, count, dt);
        if (rc < 0) return rc;
        for (uint32_t r = 0; r < n; r++)
            for (size_t i = 0; i < count; i++)
                wrong += arb_elem_get(recv + (r * count + i) * es, dt) != v(r, i);
        rc = arb_rt_barrier(c);
        if (rc < 0) return rc;
        free(send);
        free(recv);
    }
    return wrong;
}

/* Every collective and dtype, SUM, at 2, 3, 4 and 8 ranks on one switch. */
TEST(collectives_2_3_4_8)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    g_count = 3000;
    g_op = ARB_OP_SUM;
    static const uint32_t sizes[] = {2, 3, 4, 8};
    for (int i = 0; i < 4; i++) {
        int bad = run_ranks(w.addr, sizes[i], 1, 0, all_collectives);
        if (bad) fprintf(stderr, "  %u ranks: %d ranks wrong\n", sizes[i], bad);
        CHECK(bad == 0);
    }
    sw_stop(&w);
}

/* Reduce in place (send == recv, which rt.h allows): every rank roots a
 * call in turn, each dtype, SUM and MAX; the root's buffer ends as the
 * reduction of every rank's input, its own included once. */
static int reduce_in_place_body(struct rank *k, arb_rt_comm *c)
{
    uint32_t n = k->size, me = k->rank;
    size_t count = 3000;
    int wrong = 0;
    static const arb_op ops[] = {ARB_OP_SUM, ARB_OP_MAX};
    for (int dt = 0; dt < ARB_DTYPE_COUNT; dt++) {
        size_t es = arb_dtype_size(dt);
        uint8_t *buf = malloc(count * es);
        if (!buf) return ARB_ENOMEM;
        for (int o = 0; o < 2; o++)
            for (uint32_t root = 0; root < n; root++) {
                fill(buf, dt, me, 0, count);
                int rc = arb_rt_reduce(c, buf, buf, count, dt, ops[o], root);
                if (rc < 0) {
                    free(buf);
                    return rc;
                }
                if (me == root)
                    for (size_t i = 0; i < count; i++)
                        wrong += arb_elem_get(buf + i * es, dt) != ref(ops[o], n, i);
            }
        free(buf);
    }
    if (wrong) fprintf(stderr, "  rank %u: %d elements wrong\n", me, wrong);
    return wrong;
}

TEST(reduce_in_place)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    CHECK(run_ranks(w.addr, 4, 1, 0, reduce_in_place_body) == 0);
    sw_stop(&w);
}

/* MAX and MIN at 3 ranks; a count that is not a multiple of the ranks. */
TEST(max_min)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    g_count = 2049;
    g_op = ARB_OP_MAX;
    CHECK(run_ranks(w.addr, 3, 1, 0, all_collectives) == 0);
    g_op = ARB_OP_MIN;
    CHECK(run_ranks(w.addr, 3, 1, 0, all_collectives) == 0);
    g_op = ARB_OP_SUM;
    sw_stop(&w);
}

/* Without UDP GSO and GRO (plain sendmmsg / recvmmsg), every collective at
 * 3 ranks; with them, the switch coalesced some sends (where the kernel has
 * UDP GSO: it is counted, not required). */
TEST(without_gso)
{
    struct sw w;
    g_no_gso = 1;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    g_count = 3000;
    CHECK(run_ranks(w.addr, 3, 1, 0, all_collectives) == 0);
    __atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
    pthread_join(w.t, NULL);
    arb_rt_switch_stats st;
    arb_rt_switch_get_stats(w.s, &st);
    CHECK_EQ_U(st.gso_sends, 0);
    arb_rt_switch_free(w.s);
    g_no_gso = 0;
}

/* With a spin before every blocking wait (ranks and switch, 50 us), every
 * collective at 4 ranks is exact, and the waits were counted: a call that
 * waited either found data while spinning or blocked. */
TEST(spin)
{
    struct sw w;
    g_spin = 50 * ARB_PS_PER_US;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    g_count = 3000;
    g_waits = 0;
    CHECK(run_ranks(w.addr, 4, 1, 0, all_collectives) == 0);
    CHECK(g_waits > 0);
    sw_stop(&w);
    g_spin = 0;
}

/* ARBOR_SPIN: 0 or a duration up to 10 ms; anything else is ARB_EPARSE
 * naming the variable. A config with a longer spin is refused. */
TEST(spin_setting)
{
    arb_rt_config cfg;
    char err[200];
    static const struct {
        const char *v;
        int ok;
        arb_time want;
    } cases[] = {{"50us", 1, 50 * ARB_PS_PER_US},
                 {"0", 1, 0},
                 {"10ms", 1, 10 * ARB_PS_PER_MS},
                 {"11ms", 0, 0},
                 {"fast", 0, 0},
                 {"-5us", 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        arb_rt_config_default(&cfg);
        cfg.spin = 7;
        setenv("ARBOR_SPIN", cases[i].v, 1);
        err[0] = 0;
        int rc = arb_rt_config_env(&cfg, err, sizeof err);
        if (cases[i].ok) {
            CHECK_EQ_I(rc, 0);
            CHECK_EQ_U(cfg.spin, cases[i].want);
        } else {
            CHECK_EQ_I(rc, ARB_EPARSE);
            CHECK(strstr(err, "ARBOR_SPIN") != NULL);
        }
    }
    unsetenv("ARBOR_SPIN");
    arb_rt_config_default(&cfg);
    cfg.secret = SECRET;
    cfg.spin = 11 * ARB_PS_PER_MS;
    arb_rt_comm *c = NULL;
    CHECK_EQ_I(arb_rt_comm_new(&c, &cfg, err, sizeof err), ARB_EINVAL);
    CHECK(c == NULL);
    arb_rt_switch_config sc;
    arb_rt_switch_config_default(&sc);
    sc.listen = "127.0.0.1:0";
    sc.spin = 11 * ARB_PS_PER_MS;
    arb_rt_switch *s = NULL;
    CHECK_EQ_I(arb_rt_switch_new(&s, &sc, err, sizeof err), ARB_EINVAL);
    CHECK(s == NULL);
    sc.spin = 0;
    sc.threads = ARB_RT_SWITCH_MAX_THREADS + 1;
    CHECK_EQ_I(arb_rt_switch_new(&s, &sc, err, sizeof err), ARB_EINVAL);
    CHECK(s == NULL);
}

/* Loss on every send of the ranks (2%) and of the switch (2%): every
 * collective still completes with exact results. */
TEST(loss)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0.02, 1) == 0);
    g_count = 5000;
    CHECK(run_ranks(w.addr, 4, 1, 0.02, all_collectives) == 0);
    sw_stop(&w);
}

/* ---- ECN marking ----------------------------------------------------- */

/* A switch that marks every datagram (kmin = kmax = 0): every rank hears
 * marks, DCQCN's controllers cut on them, results stay exact; the switch
 * read its queue after each batch. */
static int sw_start_ecn(struct sw *w, const char *ecn)
{
    g_ecn = ecn;
    int rc = sw_start(w, 0, 1);
    g_ecn = NULL;
    return rc;
}

/* n ranks with DCQCN through switch w doing every collective: 0 when all
 * are exact. */
static int run_dcqcn(const struct sw *w, uint32_t n)
{
    g_cc = ARB_CC_DCQCN;
    g_ce = g_cuts = 0;
    g_unmarked = 0;
    int rc = run_ranks(w->addr, n, 1, 0, all_collectives);
    g_cc = 0;
    return rc;
}

TEST(ecn_marks_reach_dcqcn)
{
    struct sw w;
    REQUIRE(sw_start_ecn(&w, "0,0,1") == 0);
    g_count = 5000;
    CHECK(run_dcqcn(&w, 4) == 0);
    arb_rt_switch_stats st;
    arb_rt_switch_get_stats(w.s, &st);
    sw_stop(&w);
    CHECK(st.ecn_marks > 0);
    CHECK(st.queue_reads > 0);
    CHECK(g_ce > 0);
    CHECK_EQ_U(g_unmarked, 0);
    CHECK(g_cuts > 0);
    /* Every credit is marked, so every normal request echoes the mark and
     * arrives marked, and is not counted again: the marks are at most the
     * datagrams received less the requests. (Without the echo the switch
     * would mark the requests too: marks + requests > datagrams.) */
    CHECK(st.requests > 0);
    CHECK(st.ecn_marks + st.requests <= st.rx_pkts);
}

/* Marking off, or thresholds no queue here reaches: no datagram marked,
 * none received marked; the queue is still read (queue_reads). */
TEST(ecn_off_marks_nothing)
{
    static const char *const settings[] = {"off", "1000MB,1000MB,1"};
    for (int i = 0; i < 2; i++) {
        struct sw w;
        REQUIRE(sw_start_ecn(&w, settings[i]) == 0);
        g_count = 3000;
        CHECK(run_dcqcn(&w, 3) == 0);
        arb_rt_switch_stats st;
        arb_rt_switch_get_stats(w.s, &st);
        sw_stop(&w);
        CHECK_EQ_U(st.ecn_marks, 0);
        CHECK_EQ_U(g_ce, 0);
        CHECK(st.queue_reads > 0);
        CHECK(st.queue_peak < 1000000000u);
    }
}

/* Six AllReduces of one size, one after the other. */
#define SAME_CALLS 6
static int same_allreduces(struct rank *k, arb_rt_comm *c)
{
    size_t count = 20000;
    float *in = malloc(count * 4), *out = malloc(count * 4);
    if (!in || !out) return ARB_ENOMEM;
    fill((uint8_t *)in, ARB_DTYPE_F32, k->rank, 0, count);
    int wrong = 0;
    for (int call = 0; call < SAME_CALLS; call++) {
        int rc = arb_rt_allreduce(c, in, out, count, ARB_DTYPE_F32, ARB_OP_SUM);
        if (rc < 0) return rc;
        for (size_t i = 0; i < count; i++)
            wrong += out[i] != ref(ARB_OP_SUM, k->size, i);
    }
    free(in);
    free(out);
    return wrong;
}

/* Every timer floor the settings check lets through makes engines that
 * run: ARBOR_TIMER_MIN from 1 us to the 200 ms ceiling, those just above
 * the 10 ms default among them (which once passed the check and then
 * failed every call: the engines' REGISTER retry cap stayed at 10 ms,
 * below the floor), each parsed and then used by every collective. */
TEST(timer_floor_range)
{
    static const char *const floors[] = {"1us", "10ms", "10001us", "40ms", "100ms", "200ms"};
    for (size_t i = 0; i < sizeof floors / sizeof floors[0]; i++) {
        arb_rt_config cfg;
        char err[200];
        arb_rt_config_default(&cfg);
        setenv("ARBOR_TIMER_MIN", floors[i], 1);
        CHECK_EQ_I(arb_rt_config_env(&cfg, err, sizeof err), 0);
        unsetenv("ARBOR_TIMER_MIN");
        struct sw w;
        REQUIRE(sw_start(&w, 0, 1) == 0);
        g_timer_min = cfg.timeout_min;
        g_count = 3000;
        int bad = run_ranks(w.addr, 3, 1, 0, all_collectives);
        if (bad) fprintf(stderr, "  ARBOR_TIMER_MIN=%s\n", floors[i]);
        CHECK_EQ_I(bad, 0);
        g_timer_min = 0;
        sw_stop(&w);
    }
    /* beyond the ceiling: refused up front, by the settings check */
    arb_rt_config cfg;
    char err[200];
    arb_rt_config_default(&cfg);
    setenv("ARBOR_TIMER_MIN", "201ms", 1);
    int rc = arb_rt_config_env(&cfg, err, sizeof err);
    unsetenv("ARBOR_TIMER_MIN");
    if (rc == 0) {
        cfg.secret = SECRET;
        arb_rt_comm *c = NULL;
        rc = arb_rt_comm_new(&c, &cfg, err, sizeof err);
        CHECK(c == NULL);
    }
    CHECK(rc == ARB_EPARSE || rc == ARB_EINVAL);
}

/* A controller outlives its call: each rank's responder takes up the
 * controller an earlier call of the same kind left (at least once in
 * SAME_CALLS calls, at most in every call but the first: a call that
 * starts while the last one's engines still linger makes its own), and
 * never with Fixed, which has none. */
TEST(cc_outlives_call)
{
    static const int kinds[] = {ARB_CC_SWIFT, ARB_CC_DCQCN, ARB_CC_FIXED};
    for (int i = 0; i < 3; i++) {
        struct sw w;
        REQUIRE(sw_start(&w, 0, 1) == 0);
        g_cc = kinds[i];
        g_cont_min = UINT64_MAX;
        g_cont_max = 0;
        CHECK(run_ranks(w.addr, 3, 1, 0, same_allreduces) == 0);
        g_cc = 0;
        sw_stop(&w);
        if (kinds[i] == ARB_CC_FIXED) {
            CHECK_EQ_U(g_cont_max, 0);
        } else {
            CHECK(g_cont_min >= 1);
            CHECK(g_cont_max <= SAME_CALLS - 1);
        }
    }
}

/* A call refused for its arguments leaves its message; the next call that
 * succeeds clears it (arb_rt_errmsg: "" once a new collective starts). */
static int errmsg_body(struct rank *k, arb_rt_comm *c)
{
    int32_t x = (int32_t)k->rank, y = 0;
    if (arb_rt_broadcast(c, &x, 1, ARB_DTYPE_I32, 7) != ARB_EINVAL) return 1;
    if (!strstr(arb_rt_errmsg(c), "root 7 is not a rank of 2")) return 2;
    int rc = arb_rt_allreduce(c, &x, &y, 1, ARB_DTYPE_I32, ARB_OP_SUM);
    if (rc < 0) return rc;
    if (y != 1) return 3;
    return arb_rt_errmsg(c)[0] ? 4 : 0;
}

TEST(errmsg_cleared)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    CHECK(run_ranks(w.addr, 2, 1, 0, errmsg_body) == 0);
    sw_stop(&w);
}

/* ---- non-blocking ---------------------------------------------------- */

/* Three calls in flight at once (AllReduce i64, Broadcast f16 from rank 2,
 * AllGather i32), completed by arb_rt_test polling and by arb_rt_wait in
 * another order than they were started; an AllReduce in place; then 8
 * barriers posted at once. */
static int nonblocking(struct rank *k, arb_rt_comm *c)
{
    uint32_t n = k->size, me = k->rank;
    size_t count = 4000;
    int64_t *ar_in = malloc(count * 8), *ar_out = malloc(count * 8);
    uint16_t *bc = malloc(count * 2);
    int32_t *ag_in = malloc(count * 4), *ag_out = malloc(count * n * 4);
    if (!ar_in || !ar_out || !bc || !ag_in || !ag_out) return ARB_ENOMEM;
    fill((uint8_t *)ar_in, ARB_DTYPE_I64, me, 0, count);
    if (me == 2)
        fill((uint8_t *)bc, ARB_DTYPE_F16, 2, 0, count);
    else
        memset(bc, 0, count * 2);
    fill((uint8_t *)ag_in, ARB_DTYPE_I32, me, 0, count);
    arb_rt_request *r[3], *b[8];
    int rc = arb_rt_iallreduce(c, ar_in, ar_out, count, ARB_DTYPE_I64, ARB_OP_SUM, &r[0]);
    if (rc == 0) rc = arb_rt_ibroadcast(c, bc, count, ARB_DTYPE_F16, 2, &r[1]);
    if (rc == 0) rc = arb_rt_iallgather(c, ag_in, ag_out, count, ARB_DTYPE_I32, &r[2]);
    if (rc < 0) return rc;
    /* poll for up to 15 s, below the calls' 20 s deadline: a count of
     * polls would be a time that shrinks as the machine gets busier */
    int done = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        if ((rc = arb_rt_test(r[2], &done)) < 0) return rc;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (!done && t.tv_sec - t0.tv_sec < 15);
    if (!done) return -100; /* never completed by polling */
    if ((rc = arb_rt_wait(r[2])) < 0 || (rc = arb_rt_wait(r[1])) < 0 ||
        (rc = arb_rt_wait(r[0])) < 0)
        return rc;
    int wrong = 0;
    for (size_t i = 0; i < count; i++) {
        wrong += arb_elem_get((uint8_t *)&ar_out[i], ARB_DTYPE_I64) != ref(ARB_OP_SUM, n, i);
        wrong += arb_elem_get((uint8_t *)&bc[i], ARB_DTYPE_F16) != v(2, i);
        for (uint32_t q = 0; q < n; q++)
            wrong += arb_elem_get((uint8_t *)&ag_out[q * count + i], ARB_DTYPE_I32) != v(q, i);
    }
    /* in place: send == recv */
    fill((uint8_t *)ag_in, ARB_DTYPE_I32, me, 0, count);
    if (rc == 0) rc = arb_rt_allreduce(c, ag_in, ag_in, count, ARB_DTYPE_I32, ARB_OP_MAX);
    for (size_t i = 0; rc == 0 && i < count; i++)
        wrong += arb_elem_get((uint8_t *)&ag_in[i], ARB_DTYPE_I32) != ref(ARB_OP_MAX, n, i);
    for (int i = 0; i < 8 && rc == 0; i++)
        rc = arb_rt_ibarrier(c, &b[i]);
    for (int i = 7; i >= 0 && rc == 0; i--)
        rc = arb_rt_wait(b[i]);
    free(ar_in);
    free(ar_out);
    free(bc);
    free(ag_in);
    free(ag_out);
    return rc < 0 ? rc : wrong;
}

TEST(nonblocking_calls)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    CHECK(run_ranks(w.addr, 4, 1, 0, nonblocking) == 0);
    CHECK(run_ranks(w.addr, 3, 1, 0.02, nonblocking) == 0);
    sw_stop(&w);
}

/* ---- fractions: the documented float tolerance -------------------------- */

/* Rank r's fraction i in (-1, 1), the same on every rank (a hash). */
static double frac(uint32_t r, uint64_t i)
{
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(r + 1) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    return (double)(x >> 11) / (double)(1ull << 53) * 2 - 1;
}

/* Every rank's fractions rounded to dt, as they go on the wire. */
static double rounded(arb_dtype dt, uint32_t r, uint64_t i)
{
    uint8_t b[8];
    arb_elem_put(b, dt, frac(r, i));
    return arb_elem_get(b, dt);
}

static int float_sums(struct rank *k, arb_rt_comm *c)
{
    static const int bits[4] = {11, 8, 24, 53}; /* significand bits: f16 bf16 f32 f64 */
    uint32_t n = k->size;
    size_t count = 5000;
    int wrong = 0;
    for (int dt = ARB_DTYPE_F16; dt <= ARB_DTYPE_F64; dt++) {
        size_t es = arb_dtype_size(dt);
        uint8_t *send = malloc(count * es), *recv = malloc(count * es);
        if (!send || !recv) return ARB_ENOMEM;
        for (size_t i = 0; i < count; i++)
            arb_elem_put(send + i * es, dt, frac(k->rank, i));
        int rc = arb_rt_allreduce(c, send, recv, count, dt, ARB_OP_SUM);
        if (rc < 0) return rc;
        double u = ldexp(1.0, -bits[dt]);
        for (size_t i = 0; i < count; i++) {
            double sum = 0, mag = 0;
            for (uint32_t r = 0; r < n; r++) {
                double x = rounded(dt, r, i);
                sum += x;
                mag += fabs(x);
            }
            /* n - 1 additions in some order, each rounded to the format
             * (docs/reduce.md): |error| <= (n - 1) u sum|x|; one u more for
             * the reference's own double sum */
            double tol = ((double)(n - 1) * u + ldexp(1.0, -52)) * mag;
            wrong += !(fabs(arb_elem_get(recv + i * es, dt) - sum) <= tol);
        }
        free(send);
        free(recv);
    }
    return wrong;
}

/* Fractions in (-1, 1): sums within (n - 1) u sum|x| of the exact one, for
 * each float format (u = 2^-p, p its significand bits), at 3 and 8 ranks. */
TEST(float_tolerance)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    CHECK(run_ranks(w.addr, 3, 1, 0, float_sums) == 0);
    CHECK(run_ranks(w.addr, 8, 1, 0, float_sums) == 0);
    sw_stop(&w);
}

/* ---- ranks that disagree on the op or the dtype -------------------------- */

/* Rank 0 reduces with MAX, the others with SUM: every rank's call fails
 * with ARB_EINVAL naming the disagreement, rather than returning wrong
 * data. Then the same with dtypes (i32 against f32, the same bytes). */
static int mixed_ops(struct rank *k, arb_rt_comm *c)
{
    int32_t in[512], out[512];
    fill((uint8_t *)in, ARB_DTYPE_I32, k->rank, 0, 512);
    int rc =
        arb_rt_allreduce(c, in, out, 512, ARB_DTYPE_I32, k->rank == 0 ? ARB_OP_MAX : ARB_OP_SUM);
    if (rc != ARB_EINVAL || !strstr(arb_rt_errmsg(c), "every rank must pass the same op"))
        return rc < 0 ? rc : 1;
    return 0;
}

static int mixed_dtypes(struct rank *k, arb_rt_comm *c)
{
    int32_t in[512], out[512];
    arb_dtype dt = k->rank == 0 ? ARB_DTYPE_I32 : ARB_DTYPE_F32;
    fill((uint8_t *)in, dt, k->rank, 0, 512);
    int rc = arb_rt_allreduce(c, in, out, 512, dt, ARB_OP_SUM);
    if (rc != ARB_EINVAL || !strstr(arb_rt_errmsg(c), "every rank must pass the same dtype"))
        return rc < 0 ? rc : 1;
    return 0;
}

TEST(mismatched_calls)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    CHECK(run_ranks(w.addr, 2, 1, 0, mixed_ops) == 0);
    CHECK(run_ranks(w.addr, 3, 1, 0, mixed_dtypes) == 0);
    sw_stop(&w);
}

/* ---- joining again: a restart or a quiet wait ---------------------------- */

/* Rank 1 calls 300 ms after rank 0: rank 0 waits with nothing from its
 * switch for more than 50 ms and joins again, which is a keepalive, not a
 * rejoin (the switch never lost it): its rejoins stay 0, and so do the
 * switch's. */
static int late_barrier(struct rank *k, arb_rt_comm *c)
{
    if (k->rank == 1) nanosleep(&(struct timespec){.tv_nsec = 300000000}, NULL);
    int rc = arb_rt_barrier(c);
    if (rc < 0) return rc;
    arb_rt_stats st;
    arb_rt_get_stats(c, &st);
    if (k->rank == 0 && (st.rejoins != 0 || st.keepalive_joins == 0)) {
        fprintf(stderr, "  rank 0: rejoins %llu, keepalive joins %llu\n",
                (unsigned long long)st.rejoins, (unsigned long long)st.keepalive_joins);
        return 1;
    }
    return 0;
}

TEST(keepalive_joins)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    CHECK(run_ranks(w.addr, 2, 1, 0, late_barrier) == 0);
    __atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
    pthread_join(w.t, NULL);
    arb_rt_switch_stats st;
    arb_rt_switch_get_stats(w.s, &st);
    CHECK_EQ_U(st.rejoins, 0);
    CHECK(st.keepalive_joins >= 1);
    arb_rt_switch_free(w.s);
}

/* ---- admission: strangers, bad secrets --------------------------------- */

static int one_barrier(struct rank *k, arb_rt_comm *c)
{
    (void)k;
    return arb_rt_barrier(c);
}

/* Sends fd's switch a JOIN of job 99, which it does not admit, and waits
 * (at most 20 s) for the REJECT, passing over what came before it (the
 * NOTICEs a stranger's packets earn): 1 when it came. */
static int answered_join(int fd, const struct sockaddr_in *to)
{
    uint8_t join[84] = {0x41, 2, 0, 0, 0, 0, 0, 99}; /* JOIN (84 B) of job 99, rank 0 */
    join[19] = 2;                                    /* size 2 */
    struct timeval tv = {.tv_sec = 20};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (sendto(fd, join, sizeof join, 0, (const struct sockaddr *)to, sizeof *to) !=
        (ssize_t)sizeof join)
        return 0;
    uint8_t b[128];
    ssize_t n;
    while ((n = recv(fd, b, sizeof b, 0)) >= 0)
        if (n >= 2 && b[1] == 4) return 1; /* REJECT */
    return 0;
}

/* comm_new for rank `rank` of `size` through switch w (deadline 3 s):
 * its result, the communicator (NULL on failure) and the error text. */
static int join_as(const struct sw *w, uint32_t rank, uint32_t size, arb_rt_comm **c, char *err,
                   size_t len)
{
    arb_rt_config cfg;
    arb_rt_config_default(&cfg);
    cfg.rank = rank;
    cfg.size = size;
    cfg.sw = w->addr;
    cfg.secret = SECRET;
    cfg.bind = "127.0.0.1:0";
    cfg.timeout = 3 * ARB_PS_PER_S;
    err[0] = 0;
    return arb_rt_comm_new(c, &cfg, err, len);
}

struct busy {
    arb_rt_comm *c;
    int rc;
    pthread_t t;
};

/* A rank waiting in a barrier for peers that never come: it keeps
 * joining (keepalive), so the switch hears from it. */
static void *busy_main(void *arg)
{
    struct busy *k = arg;
    k->rc = arb_rt_barrier(k->c);
    return NULL;
}

/* A rank whose ARBOR_SIZE is not the job's live ranks' is refused at its
 * JOIN, and told both sizes; the job's table is left as it was (a rank
 * of the right size still joins). */
TEST(join_size_mismatch)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    struct busy first;
    arb_rt_comm *b = NULL, *c = NULL;
    char err[300];
    REQUIRE_EQ_I(join_as(&w, 0, 3, &first.c, err, sizeof err), 0);
    pthread_create(&first.t, NULL, busy_main, &first);
    CHECK_EQ_I(join_as(&w, 1, 4, &b, err, sizeof err), ARB_ESTATE);
    CHECK(b == NULL);
    CHECK(strstr(err, "ARBOR_SIZE=4") != NULL && strstr(err, "ARBOR_SIZE=3") != NULL);
    if (!strstr(err, "ARBOR_SIZE=3")) fprintf(stderr, "  %s\n", err);
    CHECK_EQ_I(join_as(&w, 1, 3, &c, err, sizeof err), 0);
    arb_rt_comm_free(c);
    pthread_join(first.t, NULL);
    CHECK_EQ_I(first.rc, ARB_ETIMEDOUT); /* rank 2 never came */
    arb_rt_comm_free(first.c);
    sw_stop(&w);
}

/* Two processes as one rank: the second is refused at its JOIN, naming
 * the address of the first (still heard from), within a second; a rank
 * whose predecessor has fallen silent takes its place (a restart). */
TEST(join_duplicate_rank)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    struct busy first;
    char err[300];
    REQUIRE_EQ_I(join_as(&w, 0, 2, &first.c, err, sizeof err), 0);
    pthread_create(&first.t, NULL, busy_main, &first);
    struct timespec settle = {0, 200000000};
    nanosleep(&settle, NULL);
    arb_rt_comm *second = NULL;
    CHECK_EQ_I(join_as(&w, 0, 2, &second, err, sizeof err), ARB_ESTATE);
    CHECK(second == NULL);
    CHECK(strstr(err, "another process is rank 0") != NULL && strstr(err, "127.0.0.1:") != NULL);
    if (!strstr(err, "another process")) fprintf(stderr, "  %s\n", err);
    pthread_join(first.t, NULL);
    CHECK_EQ_I(first.rc, ARB_ETIMEDOUT); /* its peer never came */
    arb_rt_comm_free(first.c);
    struct timespec quiet = {0, 300000000}; /* past the switch's 250 ms window */
    nanosleep(&quiet, NULL);
    arb_rt_comm *next = NULL;
    CHECK_EQ_I(join_as(&w, 0, 2, &next, err, sizeof err), 0);
    arb_rt_comm_free(next);
    sw_stop(&w);
}

/* A rank with the wrong secret is refused; a job of two ranks runs; then a
 * socket that never joined sends the switch junk and Arbor packets that
 * would be valid from a member: the switch drops and counts each. */
TEST(strangers)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    struct rank bad;
    memset(&bad, 0, sizeof bad);
    bad.rank = 0;
    bad.size = 2;
    bad.sw = w.addr;
    bad.secret = "not the secret";
    bad.timeout = 2 * ARB_PS_PER_S;
    bad.body = one_barrier;
    rank_main(&bad);
    CHECK(bad.rc == ARB_ESTATE);
    CHECK(strstr(bad.err, "wrong secret") != NULL);
    CHECK(run_ranks(w.addr, 2, 1, 0, one_barrier) == 0);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    struct sockaddr_in to;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(0x7F000001);
    to.sin_port = htons(arb_rt_switch_port(w.s));
    /* a REGISTER from "rank 1" of job 1, but from an address that never joined */
    static const uint8_t reg[] = {0x41, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0,
                                  0x84, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    static const uint8_t junk[] = {0x41, 1, 2};
    static const uint8_t notrt[] = {0x84, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    for (int i = 0; i < 5; i++) {
        sendto(fd, reg, sizeof reg, 0, (struct sockaddr *)&to, sizeof to);
        sendto(fd, junk, sizeof junk, 0, (struct sockaddr *)&to, sizeof to);
        sendto(fd, notrt, sizeof notrt, 0, (struct sockaddr *)&to, sizeof to);
    }
    /* then a JOIN of a job the switch does not admit, whose REJECT says the
     * switch has read everything sent before it (one socket, in order) */
    REQUIRE(answered_join(fd, &to));
    close(fd);
    __atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE); /* stop serving, then read its counters */
    pthread_join(w.t, NULL);
    arb_rt_switch_stats st;
    arb_rt_switch_get_stats(w.s, &st);
    CHECK_EQ_U(st.strangers, 5);
    CHECK_EQ_U(st.undecodable, 10);
    CHECK(st.join_rejected >= 1);
    CHECK_EQ_U(st.joins, 2);
    arb_rt_switch_free(w.s);
}

/* A "switch" that answers JOINs from another address than the one the rank
 * dialled (a REJECT from a second socket): the rank drops the answers, and
 * its error says it heard them from elsewhere rather than "did not
 * answer". */
struct misanswer {
    int in, out;
    volatile int stop;
};

static void *misanswer_main(void *arg)
{
    struct misanswer *m = arg;
    while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
        uint8_t b[256];
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(m->in, b, sizeof b, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 16) {
            nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
            continue;
        }
        /* the JOIN's header as a REJECT (kind 4) from a switch (0xFFFF),
         * reason 1 */
        b[1] = 4;
        b[12] = b[13] = 0xFF;
        b[16] = 1;
        sendto(m->out, b, 17, 0, (struct sockaddr *)&from, sizeof from);
    }
    return NULL;
}

static int udp_on(uint32_t ip)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(ip);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

TEST(answers_from_elsewhere)
{
    struct misanswer m = {.in = udp_on(0x7F000001), .out = udp_on(0x7F000001)};
    REQUIRE(m.in >= 0 && m.out >= 0);
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    getsockname(m.in, (struct sockaddr *)&a, &al);
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", ntohs(a.sin_port));
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, misanswer_main, &m) == 0);
    struct rank k;
    memset(&k, 0, sizeof k);
    k.size = 2;
    k.sw = addr;
    k.timeout = 300 * ARB_PS_PER_MS;
    k.body = one_barrier;
    rank_main(&k);
    __atomic_store_n(&m.stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    close(m.in);
    close(m.out);
    CHECK(k.rc == ARB_ETIMEDOUT);
    CHECK(strstr(k.err, "no answer to the JOIN") != NULL);
    CHECK(strstr(k.err, "but ") != NULL && strstr(k.err, " from 127.0.0.1:") != NULL);
}

/* A stranger floods the switch with JOINs of a job it does not admit, as
 * one spoofing a victim's address would: the REJECTs share the NOTICEs'
 * budget (200 a second), so the victim gets at most that many. */
TEST(reject_rate_capped)
{
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    struct sockaddr_in to;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(0x7F000001);
    to.sin_port = htons(arb_rt_switch_port(w.s));
    uint8_t join[84] = {0x41, 2, 0, 0, 0, 0, 0, 99}; /* JOIN (84 B) of job 99, rank 0 */
    join[19] = 2;                                    /* size 2 */
    int sent = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 500; i++)
        sent += sendto(fd, join, sizeof join, 0, (struct sockaddr *)&to, sizeof to) ==
                (ssize_t)sizeof join;
    nanosleep(&(struct timespec){.tv_nsec = 300000000}, NULL);
    __atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
    pthread_join(w.t, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int got = 0;
    uint8_t b[64];
    while (recv(fd, b, sizeof b, MSG_DONTWAIT) > 0)
        got++;
    close(fd);
    arb_rt_switch_stats st;
    arb_rt_switch_get_stats(w.s, &st);
    arb_rt_switch_free(w.s);
    /* the budget's window starts at the first REJECT and lasts a second:
     * while the switch served (at most t1 - t0), at most 200 a window began */
    double served = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    int cap = 200 * (1 + (int)served);
    CHECK_EQ_I(sent, 500);
    CHECK(st.join_rejected > 200); /* counted, every one read */
    CHECK(got >= 1 && got <= cap && (uint64_t)got <= st.join_rejected);
    if (got > cap) fprintf(stderr, "  %d REJECTs for %d JOINs in %.3f s\n", got, sent, served);
}

/* Several switches: a leaf-spine (two leaves of two hosts, one spine) and
 * a three-level tree whose paths aggregate at up to three tiers (20 B
 * headers). */
TEST(multi_tier)
{
    static const char *const topos[] = {"leafspine:2,2,1", "pgft:3;2,2,2;1,1,1;1,1,1"};
    static const uint32_t ranks[] = {4, 8};
    for (int t = 0; t < 2; t++) {
        struct fabric f;
        REQUIRE(fabric_start(&f, topos[t], 0) == 0);
        const char *swv[16];
        for (uint32_t r = 0; r < ranks[t]; r++)
            swv[r] = fabric_leaf(&f, r);
        g_count = 2500;
        int bad = run_ranks_on(swv, topos[t], ranks[t], 1, 0, all_collectives);
        if (bad) fprintf(stderr, "  %s: %d ranks wrong\n", topos[t], bad);
        CHECK(bad == 0);
        fabric_stop(&f);
    }
}

/* ---- a switch of several threads ------------------------------------- */

/* Stop switch w's thread and read its counters (summed over its threads). */
static void sw_stop_stats(struct sw *w, arb_rt_switch_stats *st)
{
    __atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
    pthread_join(w->t, NULL);
    arb_rt_switch_get_stats(w->s, st);
    arb_rt_switch_free(w->s);
}

/* A switch of 2 and of 3 threads (one socket each, SO_REUSEPORT): every
 * collective and dtype at 2, 3 and 4 ranks is exact. The kernel steers
 * each datagram to its channel's thread, and every sender keeps a GSO
 * send to one channel, so no thread handles another's channel (foreign 0)
 * unless the kernel refused the steering program (warned). The counters
 * are the threads' sums: everything the ranks sent was received. */
TEST(switch_threads)
{
    static const uint32_t threads[] = {2, 3};
    static const uint32_t sizes[] = {2, 3, 4};
    for (int t = 0; t < 2; t++) {
        struct sw w;
        g_threads = threads[t];
        g_unsteered = 0;
        REQUIRE(sw_start(&w, 0, 1) == 0);
        g_count = 3000;
        g_op = ARB_OP_SUM;
        for (int i = 0; i < 3; i++) {
            int bad = run_ranks(w.addr, sizes[i], 1, 0, all_collectives);
            if (bad)
                fprintf(stderr, "  %u threads, %u ranks: %d wrong\n", threads[t], sizes[i], bad);
            CHECK(bad == 0);
        }
        arb_rt_switch_stats st;
        sw_stop_stats(&w, &st);
        CHECK(st.aggregates > 0);
        CHECK(st.rx_pkts > st.aggregates);
        if (g_unsteered == 0) CHECK_EQ_U(st.foreign, 0);
    }
    g_threads = 0;
}

/* 2% loss on every rank's and switch thread's sends, 3 threads: exact. */
TEST(switch_threads_loss)
{
    struct sw w;
    g_threads = 3;
    REQUIRE(sw_start(&w, 0.02, 1) == 0);
    g_count = 5000;
    CHECK(run_ranks(w.addr, 4, 1, 0.02, all_collectives) == 0);
    sw_stop(&w);
    g_threads = 0;
}

/* A leaf-spine fabric whose three switches have 2 threads each. */
TEST(switch_threads_multi_tier)
{
    struct fabric f;
    g_threads = 2;
    g_unsteered = 0;
    REQUIRE(fabric_start(&f, "leafspine:2,2,1", 0) == 0);
    const char *swv[16];
    for (uint32_t r = 0; r < 4; r++)
        swv[r] = fabric_leaf(&f, r);
    g_count = 2500;
    CHECK(run_ranks_on(swv, "leafspine:2,2,1", 4, 1, 0, all_collectives) == 0);
    uint64_t foreign = 0;
    for (uint32_t a = 0; a < f.n; a++) {
        arb_rt_switch_stats st;
        sw_stop_stats(&f.sw[a], &st);
        foreign += st.foreign;
    }
    arb_topo_free(f.t);
    if (g_unsteered == 0) CHECK_EQ_U(foreign, 0);
    g_threads = 0;
}

/* ---- io_uring ------------------------------------------------------------ */

/* Ranks and switches on io_uring (ARBOR_IO=uring): every collective and
 * dtype at 2, 3 and 4 ranks exact, every rank and the switch on a ring;
 * then a switch of 2 threads on rings with 2% loss. Skipped where the
 * library was built without liburing (after checking that asking for it
 * then fails, saying "not built") or the kernel refuses rings. */
TEST(io_uring)
{
    char why[200];
    if (!arb_rt_io_uring_available(why, sizeof why)) {
        if (strstr(why, "not built")) {
            arb_rt_config cfg;
            arb_rt_config_default(&cfg);
            cfg.secret = SECRET;
            cfg.io = ARB_RT_IO_URING;
            char err[256] = "";
            arb_rt_comm *c = NULL;
            CHECK_EQ_I(arb_rt_comm_new(&c, &cfg, err, sizeof err), ARB_EINVAL);
            CHECK(strstr(err, "not built") != NULL);
        }
        SKIP("io_uring: %s", why);
    }
    g_io = ARB_RT_IO_URING;
    struct sw w;
    REQUIRE(sw_start(&w, 0, 1) == 0);
    g_count = 3000;
    g_op = ARB_OP_SUM;
    g_uring = 0;
    static const uint32_t sizes[] = {2, 3, 4};
    for (int i = 0; i < 3; i++)
        CHECK(run_ranks(w.addr, sizes[i], 1, 0, all_collectives) == 0);
    CHECK_EQ_U(g_uring, 2 + 3 + 4);
    arb_rt_switch_stats st;
    sw_stop_stats(&w, &st);
    CHECK_EQ_U(st.io_uring, 1);
    CHECK(st.aggregates > 0);
    g_threads = 2;
    REQUIRE(sw_start(&w, 0.02, 1) == 0);
    g_count = 5000;
    CHECK(run_ranks(w.addr, 4, 1, 0.02, all_collectives) == 0);
    sw_stop_stats(&w, &st);
    CHECK_EQ_U(st.io_uring, 2);
    g_threads = 0;
    g_io = 0;
}

/* ARBOR_IO: mmsg or uring; anything else is ARB_EPARSE naming it. */
TEST(io_setting)
{
    arb_rt_config cfg;
    char err[200];
    arb_rt_config_default(&cfg);
    setenv("ARBOR_IO", "uring", 1);
    CHECK_EQ_I(arb_rt_config_env(&cfg, err, sizeof err), 0);
    CHECK_EQ_I(cfg.io, ARB_RT_IO_URING);
    setenv("ARBOR_IO", "mmsg", 1);
    CHECK_EQ_I(arb_rt_config_env(&cfg, err, sizeof err), 0);
    CHECK_EQ_I(cfg.io, ARB_RT_IO_MMSG);
    setenv("ARBOR_IO", "epoll", 1);
    CHECK_EQ_I(arb_rt_config_env(&cfg, err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "ARBOR_IO='epoll'") != NULL);
    unsetenv("ARBOR_IO");
}

int main(void)
{
    RUN(collectives_2_3_4_8);
    RUN(reduce_in_place);
    RUN(max_min);
    RUN(without_gso);
    RUN(loss);
    RUN(ecn_marks_reach_dcqcn);
    RUN(ecn_off_marks_nothing);
    RUN(cc_outlives_call);
    RUN(errmsg_cleared);
    RUN(spin);
    RUN(spin_setting);
    RUN(timer_floor_range);
    RUN(join_size_mismatch);
    RUN(join_duplicate_rank);
    RUN(multi_tier);
    RUN(switch_threads);
    RUN(switch_threads_loss);
    RUN(switch_threads_multi_tier);
    RUN(io_uring);
    RUN(io_setting);
    RUN(float_tolerance);
    RUN(nonblocking_calls);
    RUN(strangers);
    RUN(answers_from_elsewhere);
    RUN(mismatched_calls);
    RUN(keepalive_joins);
    RUN(reject_rate_capped);
    return testkit_done();
}
