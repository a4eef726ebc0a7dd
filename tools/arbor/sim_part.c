/*
 * `mpirun -np K arbor sim FILE --partition K`: the collective operations of
 * a partitioned run (arb_sim_part_ops) over MPI, timed: the time a rank
 * spends inside them is the time it waits for the others (and moves what
 * crosses the cut), reported per rank at the end.
 *
 * A rank that dies mid-run is the launcher's to notice: Open MPI's mpirun
 * ends the whole job and names the rank. A rank that sees an MPI call fail
 * first (a peer's connection gone) says so in one line, naming the peer
 * where the call tells it, and ends the job (MPI_Abort, status 1); MPI
 * errors are returned, not fatal, and SIGPIPE is ignored, so that a write
 * to a dead peer is that error rather than a silent death. ARB_PART_TEST_EXIT=R:W (tests
 * only) makes rank R leave at once, status 3, when it reaches window W.
 *
 * Built only when CMake found MPI (ARB_HAVE_MPI); otherwise the stubs say
 * so and `--partition` is refused.
 */
#include "sim_part.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A launcher's count of processes and this one's rank, from the
 * environment it sets (Open MPI; PMI: MPICH's Hydra, Slurm). */
static const char *const size_vars[][2] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                           {"PMI_SIZE", "PMI_RANK"}};

uint32_t sim_part_launched(uint32_t *rank)
{
    *rank = 0;
    for (size_t i = 0; i < sizeof size_vars / sizeof size_vars[0]; i++) {
        const char *n = getenv(size_vars[i][0]), *r = getenv(size_vars[i][1]);
        if (!n) continue;
        unsigned long size = strtoul(n, NULL, 10), me = r ? strtoul(r, NULL, 10) : 0;
        if (size == 0 || size > UINT32_MAX || me >= size) return 0;
        *rank = (uint32_t)me;
        return (uint32_t)size;
    }
    return 0;
}

#ifndef ARB_HAVE_MPI

int sim_part_built(void)
{
    return 0;
}

int sim_part_init(struct sim_part_cli *p, uint32_t k, char *err, size_t errlen)
{
    (void)p, (void)k;
    return arb_errf(err, errlen, ARB_EINVAL,
                    "--partition asks for MPI, but this arbor was built without MPI");
}

int sim_part_all_ok(struct sim_part_cli *p, int ok)
{
    (void)p;
    return ok;
}

void sim_part_report(struct sim_part_cli *p, const arb_sim_part_info *info, double run_s)
{
    (void)p, (void)info, (void)run_s;
}

void sim_part_finalize(struct sim_part_cli *p)
{
    (void)p;
}

#else

#include <mpi.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int sim_part_built(void)
{
    return 1;
}

/* ARB_PART_TEST_EXIT=R:W: this rank leaves at window W when it is R. */
static void test_exit(struct sim_part_cli *p)
{
    if (p->exit_at && ++p->calls == p->exit_at) {
        fprintf(stderr, "arbor sim: rank %u: leaving at window %llu (ARB_PART_TEST_EXIT)\n",
                p->ops.rank, (unsigned long long)p->exit_at);
        fflush(stderr);
        _exit(3);
    }
}

/* An MPI call failed (rc): one line naming the peer (peer >= 0) or the
 * call, then the whole job ends. */
_Noreturn static void lost(const struct sim_part_cli *p, const char *call, int peer, int rc)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    if (peer >= 0)
        fprintf(stderr,
                "arbor sim: rank %u: lost rank %d of the partitioned run (%s: %s); the run "
                "cannot finish\n",
                p->ops.rank, peer, call, msg);
    else
        fprintf(stderr,
                "arbor sim: rank %u: %s failed (%s): a rank of the partitioned run is gone; the "
                "run cannot finish\n",
                p->ops.rank, call, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

/* The tag of the records' messages: each exchange's are all received
 * before the next begins, and MPI keeps one sender's messages in order. */
#define PART_TAG 0x4152

/* The counts in an all-to-all, then each part's records sent from its own
 * buffer and received in place (point to point: no copy into one send
 * buffer first), into one block kept from call to call (p->rbuf). */
static int op_alltoall(void *ctx, const uint8_t *const *send, const size_t *send_len,
                       uint8_t **recv, size_t *recv_len)
{
    struct sim_part_cli *p = ctx;
    test_exit(p);
    double t0 = now_s();
    int R = (int)p->ops.n_ranks, me = (int)p->ops.rank;
    int *sc = calloc((size_t)R, sizeof *sc), *rc = calloc((size_t)R, sizeof *rc);
    MPI_Request *req = calloc(2 * (size_t)R, sizeof *req);
    uint8_t *rb = NULL;
    int st = sc && rc && req ? 0 : ARB_ENOMEM;
    size_t total = 0;
    for (int r = 0; st == 0 && r < R; r++) {
        if (send_len[r] > (size_t)INT32_MAX) st = ARB_ERANGE;
        sc[r] = (int)send_len[r];
        total += send_len[r];
    }
    if (st != 0) MPI_Abort(MPI_COMM_WORLD, 1); /* cannot take part: the job ends */
    /* every rank goes into the collectives, whatever it found: a failure
     * is carried by the next allmin (part.c) */
    int e = MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS) lost(p, "MPI_Alltoall", -1, e);
    size_t rtotal = 0;
    for (int r = 0; r < R; r++) {
        recv_len[r] = (size_t)rc[r];
        rtotal += recv_len[r];
    }
    if (rtotal > p->rcap || !p->rbuf) { /* the block grows to the most received at once */
        size_t ncap = p->rcap ? p->rcap : 65536;
        while (ncap < rtotal)
            ncap *= 2;
        free(p->rbuf);
        if (!(p->rbuf = malloc(ncap))) MPI_Abort(MPI_COMM_WORLD, 1);
        p->rcap = ncap;
    }
    rb = p->rbuf;
    int n_req = 0;
    size_t o = 0;
    int *peer = calloc(2 * (size_t)R, sizeof *peer); /* request i's rank */
    MPI_Status *sts = calloc(2 * (size_t)R, sizeof *sts);
    if (!peer || !sts) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int r = 0; r < R; r++) {
        if (r == me && rc[r])
            memcpy(rb + o, send[r], recv_len[r]);
        else if (rc[r]) {
            peer[n_req] = r;
            e = MPI_Irecv(rb + o, rc[r], MPI_BYTE, r, PART_TAG, MPI_COMM_WORLD, &req[n_req++]);
            if (e != MPI_SUCCESS) lost(p, "MPI_Irecv", r, e);
        }
        o += recv_len[r];
    }
    for (int r = 0; r < R; r++)
        if (r != me && sc[r]) {
            peer[n_req] = r;
            e = MPI_Isend(send[r], sc[r], MPI_BYTE, r, PART_TAG, MPI_COMM_WORLD, &req[n_req++]);
            if (e != MPI_SUCCESS) lost(p, "MPI_Isend", r, e);
        }
    e = MPI_Waitall(n_req, req, sts);
    if (e == MPI_ERR_IN_STATUS) {
        for (int i = 0; i < n_req; i++)
            if (sts[i].MPI_ERROR != MPI_SUCCESS && sts[i].MPI_ERROR != MPI_ERR_PENDING)
                lost(p, "MPI_Waitall", peer[i], sts[i].MPI_ERROR);
    }
    if (e != MPI_SUCCESS) lost(p, "MPI_Waitall", -1, e);
    free(peer);
    free(sts);
    free(sc);
    free(rc);
    free(req);
    *recv = rb;
    p->bytes += total;
    p->wait_s += now_s() - t0;
    return 0;
}

static int op_allmin(void *ctx, uint64_t *v, size_t n)
{
    struct sim_part_cli *p = ctx;
    double t0 = now_s();
    int e = MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS) lost(p, "MPI_Allreduce", -1, e);
    p->wait_s += now_s() - t0;
    return 0;
}

static int op_allsum(void *ctx, uint64_t *v, size_t n)
{
    struct sim_part_cli *p = ctx;
    double t0 = now_s();
    int e = MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS) lost(p, "MPI_Allreduce", -1, e);
    p->wait_s += now_s() - t0;
    return 0;
}

int sim_part_init(struct sim_part_cli *p, uint32_t k, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return arb_errf(err, errlen, ARB_EINVAL, "--partition: MPI_Init failed");
    p->inited = 1;
    /* a failed call is this file's to report (lost), naming the peer */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    signal(SIGPIPE, SIG_IGN);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p->ops.ctx = p;
    p->ops.rank = (uint32_t)rank;
    p->ops.n_ranks = (uint32_t)size;
    p->ops.alltoall = op_alltoall;
    p->ops.allmin = op_allmin;
    p->ops.allsum = op_allsum;
    if ((uint32_t)size != k)
        return arb_errf(err, errlen, ARB_EINVAL,
                        "--partition %u needs %u MPI ranks (mpirun -np %u), found %d", k, k, k,
                        size);
    const char *e = getenv("ARB_PART_TEST_EXIT");
    unsigned r = 0;
    unsigned long long w = 0;
    if (e && sscanf(e, "%u:%llu", &r, &w) == 2 && r == (unsigned)rank) p->exit_at = w;
    return 0;
}

int sim_part_all_ok(struct sim_part_cli *p, int ok)
{
    int all = ok;
    if (p->inited) MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

void sim_part_report(struct sim_part_cli *p, const arb_sim_part_info *info, double run_s)
{
    double mine[9] = {run_s,
                      p->wait_s,
                      (double)info->nodes,
                      (double)info->cut_links,
                      (double)info->windows,
                      (double)info->events,
                      (double)info->sent,
                      (double)info->received,
                      (double)p->bytes};
    int R = (int)p->ops.n_ranks;
    double *all = p->ops.rank == 0 ? malloc((size_t)R * sizeof mine) : NULL;
    MPI_Gather(mine, 9, MPI_DOUBLE, all, 9, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (!all) return;
    if (info->lookahead == ARB_TIME_NEVER)
        fprintf(stderr, "partition: %d rank, no link cut\n", R);
    else
        fprintf(stderr, "partition: %d ranks, by subtree, lookahead %.3f us\n", R,
                (double)info->lookahead / 1e6);
    for (int r = 0; r < R; r++) {
        const double *x = all + 9 * r;
        fprintf(stderr,
                "partition: rank %d: %.0f nodes, %.0f cut links out, %.0f windows, %.0f events, "
                "%.0f packets out, %.0f in, %.0f bytes sent; %.3f s, %.3f s synchronising "
                "(%.1f%%)\n",
                r, x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[0], x[1],
                x[0] > 0 ? 100.0 * x[1] / x[0] : 0.0);
    }
    free(all);
}

void sim_part_finalize(struct sim_part_cli *p)
{
    if (p->inited) MPI_Finalize();
    p->inited = 0;
    free(p->rbuf);
    p->rbuf = NULL;
    p->rcap = 0;
}

#endif
