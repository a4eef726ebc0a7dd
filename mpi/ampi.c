/*
 * ampi.c - the PMPI interposer's process state: MPI_Init joins the Arbor
 * job of MPI_COMM_WORLD, MPI_Comm_dup and MPI_Comm_split give communicators
 * congruent to it jobs of their own, MPI_Finalize leaves and prints the
 * summary (docs/mpi.md).
 */
#define _GNU_SOURCE
#include "ampi_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ampi ampi_g = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The ticker's sleeps: 1 ms after a quiet one, doubling up to 8 ms while
 * the program's own waits progress the engines. 8 ms is below the floor
 * of the engines' own timers (10 ms, docs/runtime.md section 5), so a rank
 * that stops calling answers its peers before they would ask again. */
#define TICK_MIN_NS (1000L * 1000)
#define TICK_MAX_NS (8L * 1000 * 1000)

/* One tick: answer the communicators' peers, unless a call holds them. */
static void tick_once(struct ampi *g)
{
    if (pthread_mutex_trylock(&g->lock) != 0) return; /* a call progresses them */
    if (g->world.rt) arb_rt_progress(g->world.rt);
    for (int i = 0; i < AMPI_DUPS_MAX; i++)
        if (g->dups[i] && g->dups[i]->rt) arb_rt_progress(g->dups[i]->rt);
    pthread_mutex_unlock(&g->lock);
}

/* Between calls, the communicators' engines answer their peers from here:
 * a tick each quiet sleep (no blocking wait ran in it). Through a long call
 * or a loop of short ones it wakes every 8 ms, not every millisecond: each
 * wake took a core from a rank or the switch (a run of 64 MiB AllReduces
 * made 77-90 k voluntary context switches where arbor bench's, without the
 * thread, made 58-72 k: docs/mpi.md, "Overhead"). */
static void *tick_main(void *arg)
{
    struct ampi *g = arg;
    unsigned long seen = __atomic_load_n(&g->waits, __ATOMIC_RELAXED);
    long ns = TICK_MIN_NS;
    while (!__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE)) {
        struct timespec sleep = {0, ns};
        nanosleep(&sleep, NULL);
        g->wakes++;
        unsigned long now = __atomic_load_n(&g->waits, __ATOMIC_RELAXED);
        if (now != seen || __atomic_load_n(&g->waiting, __ATOMIC_RELAXED)) {
            seen = now;
            g->busy_wakes++;
            ns = ns * 2 < TICK_MAX_NS ? ns * 2 : TICK_MAX_NS;
            continue;
        }
        g->ticks++;
        tick_once(g);
        ns = TICK_MIN_NS;
    }
    return NULL;
}

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* A communicator's struct amc goes when the communicator does. */
static int amc_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)extra;
    struct amc *m = val;
    pthread_mutex_lock(&ampi_g.lock);
    if (m->slot >= 0) ampi_g.dups[m->slot] = NULL;
    arb_rt_comm_free(m->rt);
    pthread_mutex_unlock(&ampi_g.lock);
    free(m);
    return MPI_SUCCESS;
}

/* Join job `job` as this rank of comm (of MPI_COMM_WORLD's ranks); every
 * rank of comm learns whether all did, so either all its calls go over
 * Arbor or none. 1 when all joined. */
static int join_all(MPI_Comm comm, uint32_t job, arb_rt_comm **out, char *why, size_t len)
{
    arb_rt_config cfg = ampi_g.cfg;
    cfg.job = job;
    char err[256] = "";
    int rc = arb_rt_comm_new(out, &cfg, err, sizeof err);
    if (rc < 0) {
        *out = NULL;
        fprintf(stderr, "arbor-mpi: rank %d: cannot join job %u: %s\n", ampi_g.rank, job, err);
    }
    /* the first rank that failed, or size when none */
    int mine = rc < 0 ? ampi_g.rank : ampi_g.size, first = ampi_g.size;
    PMPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == ampi_g.size) return 1;
    snprintf(why, len, "rank %d could not join job %u%s%s", first, job, rc < 0 ? ": " : "",
             rc < 0 ? err : "");
    arb_rt_comm_free(*out);
    *out = NULL;
    return 0;
}

/* After PMPI_Init: join MPI_COMM_WORLD's job when the ARBOR_* variables
 * name one. */
static void ampi_start(void)
{
    struct ampi *g = &ampi_g;
    PMPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &g->size);
    g->verbose = env_flag("ARBOR_MPI_VERBOSE");
    g->progress = env_flag("ARBOR_MPI_PROGRESS");
    g->world.slot = -1;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, amc_delete, &g->keyval, NULL);
    const char *off = getenv("ARBOR_MPI");
    if (off && strcmp(off, "0") == 0) {
        snprintf(g->off, sizeof g->off, "ARBOR_MPI=0");
        return;
    }
    if (!getenv("ARBOR_SWITCH")) {
        snprintf(g->off, sizeof g->off, "ARBOR_SWITCH is not set (start with arbor mpirun)");
        return;
    }
    if (g->size < 2 || g->size > ARB_PLAN_MAX_RANKS) {
        snprintf(g->off, sizeof g->off, "%d ranks (Arbor takes 2..%d)", g->size,
                 ARB_PLAN_MAX_RANKS);
        return;
    }
    char err[256];
    arb_rt_config_default(&g->cfg);
    int bad = arb_rt_config_env(&g->cfg, err, sizeof err) < 0;
    if (bad) fprintf(stderr, "arbor-mpi: rank %d: %s\n", g->rank, err);
    int any_bad = 0;
    PMPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_bad) {
        snprintf(g->off, sizeof g->off, "an ARBOR_* variable does not parse");
        return;
    }
    g->cfg.rank = (uint32_t)g->rank;
    g->cfg.size = (uint32_t)g->size;
    g->world.job = g->cfg.job;
    g->on = join_all(MPI_COMM_WORLD, g->cfg.job, &g->world.rt, g->off, sizeof g->off);
    if (!g->on && g->rank == 0) fprintf(stderr, "arbor-mpi: Arbor off: %s\n", g->off);
    if (g->on) g->ticking = pthread_create(&g->ticker, NULL, tick_main, g) == 0;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) ampi_start();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    /* a communicator is one thread's at a time (rt.h): the interposer
     * offers what it can serialise */
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) ampi_start();
    return rc;
}

int MPI_Finalize(void)
{
    struct ampi *g = &ampi_g;
    if (g->ticking) {
        __atomic_store_n(&g->stop, 1, __ATOMIC_RELEASE);
        pthread_join(g->ticker, NULL);
        g->ticking = 0;
    }
    for (int i = 0; i < AMPI_DUPS_MAX; i++)
        if (g->dups[i]) {
            arb_rt_comm_free(g->dups[i]->rt);
            g->dups[i]->rt = NULL;
        }
    arb_rt_comm_free(g->world.rt);
    g->world.rt = NULL;
    if (g->verbose) ampi_summary();
    return PMPI_Finalize();
}

/* A communicator just made from parent: when it is congruent to
 * MPI_COMM_WORLD (every rank, in order) it gets the next job; otherwise
 * it is marked as MPI's. Collective over the new communicator. */
static void adopt(MPI_Comm parent, MPI_Comm comm)
{
    struct ampi *g = &ampi_g;
    if (!g->on || comm == MPI_COMM_NULL) return;
    enum ampi_why why;
    if (!ampi_comm(parent, &why)) return; /* only a world-like parent can give one */
    int inter = 0, same = MPI_UNEQUAL;
    PMPI_Comm_test_inter(comm, &inter);
    if (!inter) PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same);
    if (inter || same != MPI_CONGRUENT) return;
    struct amc *m = calloc(1, sizeof *m);
    if (!m) return;
    m->slot = -1;
    if (g->n_dups_made < AMPI_DUPS_MAX) {
        m->job = g->cfg.job + 1 + g->n_dups_made++;
        char off[256];
        if (join_all(comm, m->job, &m->rt, off, sizeof off)) {
            pthread_mutex_lock(&g->lock);
            for (int i = 0; i < AMPI_DUPS_MAX; i++)
                if (!g->dups[i]) {
                    g->dups[i] = m;
                    m->slot = i;
                    break;
                }
            pthread_mutex_unlock(&g->lock);
        } else if (g->rank == 0 && g->verbose) {
            fprintf(stderr, "arbor-mpi: a duplicate of MPI_COMM_WORLD stays on MPI: %s\n", off);
        }
    }
    PMPI_Comm_set_attr(comm, g->keyval, m);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc == MPI_SUCCESS) adopt(comm, *newcomm);
    return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
    if (rc == MPI_SUCCESS) adopt(comm, *newcomm);
    return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    if (rc == MPI_SUCCESS) adopt(comm, *newcomm);
    return rc;
}

struct amc *ampi_comm(MPI_Comm comm, enum ampi_why *why)
{
    struct ampi *g = &ampi_g;
    if (!g->on) {
        *why = AW_OFF;
        return NULL;
    }
    if (comm == MPI_COMM_WORLD) return &g->world;
    struct amc *m = NULL;
    int flag = 0;
    if (comm != MPI_COMM_NULL) PMPI_Comm_get_attr(comm, g->keyval, &m, &flag);
    if (!flag || !m) {
        *why = AW_COMM;
        return NULL;
    }
    if (!m->rt) {
        *why = AW_COMM_OFF;
        return NULL;
    }
    return m;
}

void ampi_count_mpi(enum ampi_coll coll, enum ampi_why why, size_t bytes)
{
    ampi_g.st.calls[coll][1]++;
    ampi_g.st.bytes[coll][1] += bytes;
    ampi_g.st.why[coll][why]++;
}

void ampi_count_arbor(enum ampi_coll coll, size_t bytes)
{
    ampi_g.st.calls[coll][0]++;
    ampi_g.st.bytes[coll][0] += bytes;
}

static const char *const coll_names[AC_COUNT] = {
    "MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Allgather", "MPI_Reduce_scatter_block",
    "MPI_Barrier"};

int ampi_error_code(struct amc *m, enum ampi_coll coll, int rc)
{
    struct ampi *g = &ampi_g;
    ampi_g.st.failed[coll]++;
    if (!g->err_class) {
        if (PMPI_Add_error_class(&g->err_class) != MPI_SUCCESS ||
            PMPI_Add_error_code(g->err_class, &g->err_code) != MPI_SUCCESS)
            return MPI_ERR_OTHER;
    }
    const char *msg = m && m->rt ? arb_rt_errmsg(m->rt) : "";
    char text[MPI_MAX_ERROR_STRING];
    snprintf(text, sizeof text, "arbor: %s over Arbor (job %u) failed on rank %d: %s",
             coll_names[coll], m ? m->job : 0, g->rank, *msg ? msg : arb_strerror(rc));
    PMPI_Add_error_string(g->err_code, text);
    return g->err_code;
}

int ampi_fail(MPI_Comm comm, struct amc *m, enum ampi_coll coll, int rc)
{
    int code = ampi_error_code(m, coll, rc);
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

/* Wait for r, MPI progressing too under ARBOR_MPI_PROGRESS. */
static int wait_call(arb_rt_request *r)
{
    if (!ampi_g.progress) return arb_rt_wait(r);
    /* MPI's own transfers of this rank (an Isend a peer waits for before
     * it reaches this call) progress only inside MPI calls */
    int done = 0, rc;
    while ((rc = arb_rt_test(r, &done)) == 0 && !done) {
        int flag;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    int rw = arb_rt_wait(r);
    return rc < 0 ? rc : rw;
}

int ampi_wait(arb_rt_request *r)
{
    __atomic_add_fetch(&ampi_g.waits, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ampi_g.waiting, 1, __ATOMIC_RELAXED);
    struct timespec t0 = {0, 0}, t1;
    if (ampi_g.verbose) clock_gettime(CLOCK_MONOTONIC, &t0); /* for the summary only */
    int rc = wait_call(r);
    __atomic_sub_fetch(&ampi_g.waiting, 1, __ATOMIC_RELAXED);
    if (ampi_g.verbose) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ampi_g.wait_ns +=
            (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
    }
    return rc;
}

/* Lines are written whole (one write each), so that ranks sharing a
 * terminal do not interleave within a line. */
struct line {
    char buf[1024];
    size_t n;
};

static void add(struct line *l, const char *fmt, ...) ARB_PRINTF(2, 3);
static void add(struct line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->buf + l->n, sizeof l->buf - l->n, fmt, ap);
    va_end(ap);
    if (k > 0) l->n = l->n + (size_t)k < sizeof l->buf ? l->n + (size_t)k : sizeof l->buf - 1;
}

static void put(struct line *l)
{
    add(l, "\n");
    fputs(l->buf, stderr);
    fflush(stderr);
    l->n = 0;
    l->buf[0] = 0;
}

static void add_path(struct line *l, const char *what, uint64_t calls, uint64_t bytes)
{
    add(l, " %s %llu calls %llu B;", what, (unsigned long long)calls, (unsigned long long)bytes);
}

void ampi_summary(void)
{
    static const char *const whys[AW_COUNT] = {"Arbor off",
                                               "communicator not MPI_COMM_WORLD or a duplicate",
                                               "duplicate not joined",
                                               "datatype without an Arbor dtype",
                                               "op not SUM, MAX or MIN",
                                               "layout not contiguous 4-byte words",
                                               "send and receive differ",
                                               "16 non-blocking calls in flight"};
    struct ampi *g = &ampi_g;
    const struct ampi_stats *s = &g->st;
    struct line l = {.n = 0};
    if (g->on)
        add(&l, "arbor-mpi: rank %d of %d: Arbor on, job %u via %s", g->rank, g->size, g->cfg.job,
            g->cfg.sw);
    else
        add(&l, "arbor-mpi: rank %d of %d: Arbor off: %s", g->rank, g->size, g->off);
    put(&l);
    uint64_t tot[2][2] = {{0, 0}, {0, 0}};
    for (int c = 0; c < AC_COUNT; c++) {
        if (!s->calls[c][0] && !s->calls[c][1]) continue;
        add(&l, "arbor-mpi: rank %d: %s:", g->rank, coll_names[c]);
        add_path(&l, "arbor", s->calls[c][0], s->bytes[c][0]);
        add_path(&l, "mpi", s->calls[c][1], s->bytes[c][1]);
        if (s->failed[c]) add(&l, " %llu failed;", (unsigned long long)s->failed[c]);
        for (int w = 0; w < AW_COUNT; w++)
            if (s->why[c][w])
                add(&l, " %s: %llu;", w == AW_OFF ? g->off : whys[w],
                    (unsigned long long)s->why[c][w]);
        put(&l);
        for (int p = 0; p < 2; p++) {
            tot[p][0] += s->calls[c][p];
            tot[p][1] += s->bytes[c][p];
        }
    }
    add(&l, "arbor-mpi: rank %d: total:", g->rank);
    add_path(&l, "arbor", tot[0][0], tot[0][1]);
    add_path(&l, "mpi", tot[1][0], tot[1][1]);
    put(&l);
    if (!g->on) return;
    add(&l, "arbor-mpi: rank %d: ticker: %lu wakes, %lu in calls (%.3f s in blocking waits), ",
        g->rank, g->wakes, g->busy_wakes, (double)g->wait_ns / 1e9);
    add(&l, "%lu ticks", g->ticks);
    put(&l);
}
