/*
 * arbor sweep over MPI ranks (`mpirun -np K arbor sweep FILE`): rank 0
 * hands out tasks one at a time to whichever rank asks, and collects the
 * records; it runs tasks itself too, while a second thread of it answers
 * the other ranks (MPI_THREAD_SERIALIZED: only that thread calls MPI
 * while tasks run). A rank that dies is the launcher's to notice: Open
 * MPI's mpirun ends the whole job and names the rank.
 *
 * Built only when CMake found MPI (ARB_HAVE_MPI); otherwise the stubs say
 * so and `arbor sweep` refuses to run under a launcher.
 */
#include "sweep_int.h"

#include <stdlib.h>
#include <string.h>

/* Environment variables an MPI launcher sets in the processes it starts:
 * Open MPI, PMIx (Open MPI 5, Slurm), PMI (MPICH's Hydra, Slurm). */
static const char *const launcher_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"};

int sweep_mpi_launched(void)
{
    for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
        if (getenv(launcher_vars[i])) return 1;
    return 0;
}

#ifndef ARB_HAVE_MPI

int sweep_mpi_built(void)
{
    return 0;
}

int sweep_mpi_init(int *rank, int *size, char *err, size_t errlen)
{
    *rank = 0;
    *size = 1;
    return arb_errf(err, errlen, -1, "this arbor was built without MPI");
}

int sweep_mpi_all_ok(int ok)
{
    return ok;
}

int sweep_mpi_run(const struct sweep_job *job, sweep_put_fn put, void *ctx)
{
    (void)job, (void)put, (void)ctx;
    return -1;
}

void sweep_mpi_finalize(void) {}

#else

#include <mpi.h>
#include <pthread.h>
#include <time.h>

enum { TAG_READY = 1, TAG_RESULT = 2, TAG_TASK = 3 };

static int mpi_threads_ok; /* rank 0 may run tasks beside its answering thread */

int sweep_mpi_built(void)
{
    return 1;
}

int sweep_mpi_init(int *rank, int *size, char *err, size_t errlen)
{
    int provided = MPI_THREAD_SINGLE;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
        return arb_errf(err, errlen, -1, "MPI_Init_thread failed");
    mpi_threads_ok = provided >= MPI_THREAD_SERIALIZED;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

int sweep_mpi_all_ok(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

void sweep_mpi_finalize(void)
{
    MPI_Finalize();
}

/* Rank 0's shared state: the next task, and the collector (one call at a
 * time). */
struct coord {
    const struct sweep_job *job;
    sweep_put_fn put;
    void *ctx;
    pthread_mutex_t mu;
    size_t next;
    int size;
};

static long take(struct coord *c)
{
    pthread_mutex_lock(&c->mu);
    long t = c->next < c->job->n_tasks ? (long)c->next++ : -1;
    pthread_mutex_unlock(&c->mu);
    return t;
}

static void collect(struct coord *c, const struct sweep_rec *rec)
{
    pthread_mutex_lock(&c->mu);
    c->put(c->ctx, rec);
    pthread_mutex_unlock(&c->mu);
}

/* Answer the other ranks until each was told there is no more. Polls with
 * a millisecond's sleep rather than blocking in MPI_Recv, which in Open
 * MPI spins and would take a core from the tasks. */
static void *answer(void *arg)
{
    struct coord *c = arg;
    struct sweep_rec *rec = malloc(sizeof *rec);
    int active = c->size - 1;
    while (active > 0 && rec) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            continue;
        }
        if (st.MPI_TAG == TAG_RESULT) {
            MPI_Recv(rec, (int)sizeof *rec, MPI_BYTE, st.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            collect(c, rec);
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        }
        long t = take(c);
        MPI_Send(&t, 1, MPI_LONG, st.MPI_SOURCE, TAG_TASK, MPI_COMM_WORLD);
        if (t < 0) active--;
    }
    if (!rec) MPI_Abort(MPI_COMM_WORLD, 1);
    free(rec);
    return NULL;
}

static int run_rank0(const struct sweep_job *job, sweep_put_fn put, void *ctx, int size)
{
    struct coord c = {job, put, ctx, PTHREAD_MUTEX_INITIALIZER, 0, size};
    pthread_t th;
    int threaded = size > 1 && mpi_threads_ok && pthread_create(&th, NULL, answer, &c) == 0;
    if (size > 1 && !threaded) { /* answer only; the others run the tasks */
        answer(&c);
        return 0;
    }
    struct sweep_rec *rec = malloc(sizeof *rec);
    if (!rec) MPI_Abort(MPI_COMM_WORLD, 1);
    for (long t; (t = take(&c)) >= 0;) {
        sweep_run_task(job, (uint32_t)t, rec);
        collect(&c, rec);
    }
    free(rec);
    if (threaded) pthread_join(th, NULL);
    return 0;
}

static int run_worker(const struct sweep_job *job)
{
    struct sweep_rec *rec = malloc(sizeof *rec);
    if (!rec) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_READY, MPI_COMM_WORLD);
    for (;;) {
        long t;
        MPI_Recv(&t, 1, MPI_LONG, 0, TAG_TASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (t < 0) break;
        sweep_run_task(job, (uint32_t)t, rec);
        MPI_Send(rec, (int)sizeof *rec, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
    }
    free(rec);
    return 0;
}

int sweep_mpi_run(const struct sweep_job *job, sweep_put_fn put, void *ctx)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return rank == 0 ? run_rank0(job, put, ctx, size) : run_worker(job);
}

#endif
