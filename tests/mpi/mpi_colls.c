/*
 * mpi_colls: the six collectives of an MPI program, checked against Open
 * MPI's own (PMPI_) for every datatype and op the interposer maps, in place
 * and not, blocking and non-blocking, on MPI_COMM_WORLD and a duplicate.
 * Run under arbor mpirun (tests/cli/test_mpi.sh). Integers must agree bit
 * for bit; floating-point sums within the reduction-order bound: a sum of
 * n terms in any order is within (n-1) u sum|x| of the exact sum (u the
 * unit roundoff, 2^-24 for float, 2^-53 for double; Higham, "Accuracy
 * and Stability of Numerical Algorithms", section 4.2, to first order), so
 * two orders differ by at most 2 (n-1) u sum|x| (here 2 n u, covering the
 * second-order term); MAX and MIN are exact.
 *
 * Each rank prints "rank R: N checks, W wrong" and, on rank 0, the calls it
 * expects over Arbor and over MPI per collective ("expect COLL arbor A mpi
 * M"), which the test compares with the interposer's summary.
 *
 *   mpi_colls            the checks
 *   mpi_colls kill R     rank R dies (SIGKILL) inside a large AllReduce;
 *                        the others print "rank Q: error after T s: MSG"
 */
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int me, n;
static long checks, wrong;
enum { ALLREDUCE, REDUCE, BCAST, ALLGATHER, REDSCAT, BARRIER, NCOLL };
static const char *const coll_names[NCOLL] = {
    "MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Allgather", "MPI_Reduce_scatter_block",
    "MPI_Barrier"};
static long expect[NCOLL][2]; /* calls over [0] Arbor, [1] MPI */

struct type {
    MPI_Datatype t;
    const char *name;
    size_t size;
    int kind; /* 0 signed, 1 unsigned (SUM only over Arbor), 2 float */
};

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* Element i of a rank's input: integers of moderate size (signed), near
 * the top for unsigned (their sums wrap), floats in (-1, 1) of assorted
 * magnitudes (no zeros, so MAX and MIN have one answer). */
static void fill(const struct type *ty, void *buf, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t r = next();
        char *p = (char *)buf + i * ty->size;
        if (ty->kind == 2) {
            double v = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * ldexp(1, (int)(r % 9));
            if (v == 0) v = 0.25;
            if (ty->size == 4) {
                float f = (float)v;
                memcpy(p, &f, 4);
            } else {
                memcpy(p, &v, 8);
            }
        } else if (ty->kind == 1) {
            uint64_t u = UINT64_MAX - (r % 1000);
            memcpy(p, &u, ty->size); /* little-endian: the low bytes */
        } else {
            int64_t s = (int64_t)(r % 2000001) - 1000000;
            if (ty->size == 4) {
                int32_t s4 = (int32_t)s;
                memcpy(p, &s4, 4);
            } else {
                memcpy(p, &s, 8);
            }
        }
    }
}

static double elem(const struct type *ty, const void *buf, size_t i)
{
    const char *p = (const char *)buf + i * ty->size;
    if (ty->size == 4) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}

/* got against want (count elements): bit for bit, or for float sums
 * within 2 n u sum|x| (mag holds sum|x| per element). */
static void compare(const char *what, const struct type *ty, MPI_Op op, const void *got,
                    const void *want, const void *mag, size_t count)
{
    long bad = 0;
    if (ty->kind == 2 && op == MPI_SUM) {
        double u = ty->size == 4 ? ldexp(1, -24) : ldexp(1, -53);
        for (size_t i = 0; i < count; i++) {
            double d = fabs(elem(ty, got, i) - elem(ty, want, i));
            if (!(d <= 2.0 * n * u * elem(ty, mag, i))) bad++;
        }
    } else if (memcmp(got, want, count * ty->size) != 0) {
        for (size_t i = 0; i < count; i++)
            bad += memcmp((const char *)got + i * ty->size, (const char *)want + i * ty->size,
                          ty->size) != 0;
    }
    checks++;
    if (bad) {
        wrong++;
        fprintf(stderr, "rank %d: WRONG %s %s: %ld of %zu elements\n", me, what, ty->name, bad,
                count);
    }
}

static const char *op_name(MPI_Op op)
{
    return op == MPI_SUM ? "SUM" : op == MPI_MAX ? "MAX" : op == MPI_MIN ? "MIN" : "BAND";
}

/* sum|x| of each element over the ranks, for the float bound */
static void magnitudes(const struct type *ty, const void *in, void *mag, size_t count)
{
    void *a = malloc(count * ty->size);
    for (size_t i = 0; i < count; i++) {
        double v = fabs(elem(ty, in, i));
        if (ty->size == 4) {
            float f = (float)v;
            memcpy((char *)a + 4 * i, &f, 4);
        } else {
            memcpy((char *)a + 8 * i, &v, 8);
        }
    }
    PMPI_Allreduce(a, mag, (int)count, ty->t, MPI_SUM, MPI_COMM_WORLD);
    free(a);
}

/* The reductions of one type and op, on comm. over: 1 when the
 * interposer takes them (the expected counts). */
static void reductions(const struct type *ty, MPI_Op op, size_t count, MPI_Comm comm, int over)
{
    size_t es = ty->size, all = count * (size_t)n;
    char *in = malloc(all * es), *out = malloc(all * es), *ref = malloc(all * es),
         *mag = malloc(all * es);
    char what[96];
    fill(ty, in, all);
    if (ty->kind == 2) magnitudes(ty, in, mag, all);
    int c = (int)count, k = over ? 0 : 1;

    /* AllReduce, apart and in place, blocking and not */
    PMPI_Allreduce(in, ref, c, ty->t, op, MPI_COMM_WORLD);
    snprintf(what, sizeof what, "MPI_Allreduce %s count %d", op_name(op), c);
    memset(out, 0x5a, count * es);
    MPI_Allreduce(in, out, c, ty->t, op, comm);
    compare(what, ty, op, out, ref, mag, count);
    memcpy(out, in, count * es);
    MPI_Allreduce(MPI_IN_PLACE, out, c, ty->t, op, comm);
    compare(what, ty, op, out, ref, mag, count);
    MPI_Request rq[2];
    memset(out, 0x5a, count * es);
    memcpy(out + count * es, in, count * es);
    MPI_Iallreduce(in, out, c, ty->t, op, comm, &rq[0]);
    MPI_Iallreduce(MPI_IN_PLACE, out + count * es, c, ty->t, op, comm, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    compare(what, ty, op, out, ref, mag, count);
    compare(what, ty, op, out + count * es, ref, mag, count);
    expect[ALLREDUCE][k] += 4;

    /* Reduce to the last rank, apart and in place */
    int root = n - 1;
    snprintf(what, sizeof what, "MPI_Reduce %s count %d", op_name(op), c);
    memset(out, 0x5a, count * es);
    MPI_Reduce(in, out, c, ty->t, op, root, comm);
    if (me == root) compare(what, ty, op, out, ref, mag, count);
    memcpy(out, in, count * es);
    MPI_Reduce(me == root ? MPI_IN_PLACE : in, me == root ? out : NULL, c, ty->t, op, root, comm);
    if (me == root) compare(what, ty, op, out, ref, mag, count);
    MPI_Ireduce(in, out, c, ty->t, op, 0, comm, &rq[0]);
    int done = 0;
    while (!done)
        MPI_Test(&rq[0], &done, MPI_STATUS_IGNORE);
    if (me == 0) compare(what, ty, op, out, ref, mag, count);
    expect[REDUCE][k] += 3;

    /* ReduceScatter: the whole input reduced, this rank's block kept */
    PMPI_Allreduce(in, ref, (int)all, ty->t, op, MPI_COMM_WORLD);
    snprintf(what, sizeof what, "MPI_Reduce_scatter_block %s count %d", op_name(op), c);
    memset(out, 0x5a, count * es);
    MPI_Reduce_scatter_block(in, out, c, ty->t, op, comm);
    compare(what, ty, op, out, ref + (size_t)me * count * es, mag + (size_t)me * count * es, count);
    memcpy(out, in, all * es);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, out, c, ty->t, op, comm);
    compare(what, ty, op, out, ref + (size_t)me * count * es, mag + (size_t)me * count * es, count);
    MPI_Ireduce_scatter_block(in, out, c, ty->t, op, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    compare(what, ty, op, out, ref + (size_t)me * count * es, mag + (size_t)me * count * es, count);
    expect[REDSCAT][k] += 3;
    free(in), free(out), free(ref), free(mag);
}

/* Broadcast and AllGather move bytes: any contiguous type of whole 4-byte
 * words goes over Arbor. */
static void movers(MPI_Datatype t, int tsize, int count, MPI_Comm comm, int over)
{
    size_t bytes = (size_t)tsize * (size_t)count, all = bytes * (size_t)n;
    unsigned char *in = malloc(all), *out = malloc(all), *ref = malloc(all);
    for (size_t i = 0; i < all; i++)
        in[i] = (unsigned char)next();
    int k = over ? 0 : 1;
    struct type bt = {MPI_BYTE, "bytes", 1, 0};
    for (int root = 0; root < n; root += n - 1) {
        memcpy(ref, in, bytes);
        PMPI_Bcast(ref, count, t, root, MPI_COMM_WORLD);
        memcpy(out, in, bytes);
        if (me != root) memset(out, 0x5a, bytes);
        MPI_Bcast(out, count, t, root, comm);
        compare("MPI_Bcast", &bt, MPI_MAX, out, ref, NULL, bytes);
        if (me != root) memset(out, 0x5a, bytes);
        MPI_Request rq;
        MPI_Ibcast(out, count, t, root, comm, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        compare("MPI_Ibcast", &bt, MPI_MAX, out, ref, NULL, bytes);
        expect[BCAST][k] += 2;
    }
    PMPI_Allgather(in, count, t, ref, count, t, MPI_COMM_WORLD);
    memset(out, 0x5a, all);
    MPI_Allgather(in, count, t, out, count, t, comm);
    compare("MPI_Allgather", &bt, MPI_MAX, out, ref, NULL, all);
    memset(out, 0x5a, all);
    memcpy(out + (size_t)me * bytes, in, bytes);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, count, t, comm);
    compare("MPI_Allgather in place", &bt, MPI_MAX, out, ref, NULL, all);
    MPI_Request rq;
    memset(out, 0x5a, all);
    MPI_Iallgather(in, count, t, out, count, t, comm, &rq);
    MPI_Waitall(1, &rq, MPI_STATUSES_IGNORE);
    compare("MPI_Iallgather", &bt, MPI_MAX, out, ref, NULL, all);
    expect[ALLGATHER][k] += 3;
    free(in), free(out), free(ref);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A barrier returns on no rank before every rank entered it: ranks enter
 * 20 ms apart; each one's exit is after the last entry (one clock: the
 * ranks share this machine). */
static void barrier(MPI_Comm comm)
{
    struct timespec d = {0, 20 * 1000 * 1000 * (long)me};
    nanosleep(&d, NULL);
    double in = now_s();
    MPI_Barrier(comm);
    double out = now_s(), last = 0;
    PMPI_Allreduce(&in, &last, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    checks++;
    if (out < last) {
        wrong++;
        fprintf(stderr, "rank %d: WRONG MPI_Barrier returned %.6f s before the last entry\n", me,
                last - out);
    }
    MPI_Request rq;
    MPI_Ibarrier(comm, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    expect[BARRIER][0] += 2;
}

/* rank `victim` dies inside a large AllReduce; the others' call ends with
 * an error naming it (MPI_ERRORS_RETURN), which they print. */
static int kill_mode(int victim)
{
    size_t count = 4u << 20;
    float *a = calloc(count, 4), *b = calloc(count, 4);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Allreduce(a, b, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); /* all are in */
    if (me == victim) {
        MPI_Request rq;
        MPI_Iallreduce(a, b, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &rq);
        int done = 0;
        for (int i = 0; i < 20 && !done; i++)
            MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        raise(SIGKILL);
    }
    double t0 = now_s();
    int rc = MPI_Allreduce(a, b, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    char msg[MPI_MAX_ERROR_STRING] = "no error";
    int len = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    printf("rank %d: %s after %.1f s: %s\n", me, rc != MPI_SUCCESS ? "error" : "success",
           now_s() - t0, msg);
    fflush(stdout);
    /* the job cannot finish (MPI_Finalize would wait for the dead rank) */
    _exit(rc != MPI_SUCCESS ? 0 : 1);
    return 1;
}

/* The interposer's ticker (ARBOR_MPI_VERBOSE prints its figures): five
 * quiet gaps of 100 ms between calls, each of which it must tick in, then
 * 20 AllReduces of 16 MiB back to back, through which it must not wake
 * every millisecond. */
static int ticker_mode(void)
{
    size_t count = 4u << 20;
    float *a = calloc(count, 4), *b = calloc(count, 4);
    struct timespec gap = {0, 100 * 1000 * 1000};
    for (int i = 0; i < 5; i++) {
        nanosleep(&gap, NULL);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int i = 0; i < 20; i++)
        MPI_Allreduce(a, b, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    free(a), free(b);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc > 2 && strcmp(argv[1], "kill") == 0) return kill_mode(atoi(argv[2]));
    if (argc > 1 && strcmp(argv[1], "ticker") == 0) return ticker_mode();
    rng += (uint64_t)me * 0x9e3779b97f4a7c15ull;
    static const struct type types[] = {{MPI_FLOAT, "MPI_FLOAT", 4, 2},
                                        {MPI_DOUBLE, "MPI_DOUBLE", 8, 2},
                                        {MPI_INT, "MPI_INT", 4, 0},
                                        {MPI_INT32_T, "MPI_INT32_T", 4, 0},
                                        {MPI_LONG, "MPI_LONG", 8, 0},
                                        {MPI_LONG_LONG, "MPI_LONG_LONG", 8, 0},
                                        {MPI_INT64_T, "MPI_INT64_T", 8, 0},
                                        {MPI_UNSIGNED, "MPI_UNSIGNED", 4, 1},
                                        {MPI_UINT32_T, "MPI_UINT32_T", 4, 1},
                                        {MPI_UINT64_T, "MPI_UINT64_T", 8, 1},
                                        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 8, 1}};
    static const size_t counts[] = {1, 1000, 70001};
    MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int o = 0; o < 3; o++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                /* unsigned MAX and MIN go to MPI (two's complement order differs) */
                int over = types[t].kind != 1 || ops[o] == MPI_SUM;
                reductions(&types[t], ops[o], counts[c], MPI_COMM_WORLD, over);
            }
    /* what the interposer leaves to MPI still works: a bitwise AND */
    reductions(&types[2], MPI_BAND, 1000, MPI_COMM_WORLD, 0);
    movers(MPI_INT, 4, 1, MPI_COMM_WORLD, 1);
    movers(MPI_DOUBLE, 8, 20000, MPI_COMM_WORLD, 1);
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_FLOAT, &three);
    MPI_Type_commit(&three);
    movers(three, 12, 501, MPI_COMM_WORLD, 1);
    movers(MPI_CHAR, 1, 4099, MPI_COMM_WORLD, 0); /* not whole words: MPI */
    MPI_Type_free(&three);
    barrier(MPI_COMM_WORLD);
    /* a duplicate of MPI_COMM_WORLD is a job of its own; half of it is MPI's */
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    reductions(&types[0], MPI_SUM, 5000, dup, 1);
    barrier(dup);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    MPI_Barrier(half);
    expect[BARRIER][1]++;
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    printf("rank %d: %ld checks, %ld wrong\n", me, checks, wrong);
    if (me == 0)
        for (int c = 0; c < NCOLL; c++)
            printf("expect %s arbor %ld mpi %ld\n", coll_names[c], expect[c][0], expect[c][1]);
    fflush(stdout);
    MPI_Finalize();
    return wrong ? 1 : 0;
}
