/*
 * sweep_int.h - the pieces of `arbor sweep` (cmd_sweep.c): one run of a
 * sweep (a task: a point and a replication) and the engines that spread
 * the tasks over processes, on this machine (sweep_exec.c: fork) or over
 * MPI ranks (sweep_mpi.c). Every engine hands each task's record to the
 * collector in one process; the table is built from the records in task
 * order, so it is the same however the tasks ran.
 */
#ifndef ARBOR_SWEEP_INT_H
#define ARBOR_SWEEP_INT_H

#include "arbor/sweep.h"
#include "cli.h"

#include <stddef.h>
#include <stdint.h>

#define SWEEP_MSG 1024

/* What one task gives back: fixed size, sent as bytes between processes
 * of one build (below PIPE_BUF, so a pipe write of one is atomic). */
struct sweep_rec {
    uint32_t task;
    int32_t rc;     /* 0: the run ended (status says how); < 0: an ARB_E* error */
    int32_t status; /* arb_scenario_status, when rc is 0 */
    uint32_t have;  /* bit m: cli_figures[m] is a number in v[m] */
    uint64_t seed;  /* run.seed of the run */
    double v[CLI_N_FIGURES];
    char msg[SWEEP_MSG]; /* the error, or why the run failed */
};

/* What every process of a sweep knows. */
struct sweep_job {
    const arb_sweep *sw;
    char *const *sets; /* -s overrides, applied to every point */
    int n_sets;
    size_t n_tasks; /* points x replications; task t is point t / reps, replication t % reps */
};

/* Run task t and fill rec (never fails: an error is in the record). */
void sweep_run_task(const struct sweep_job *job, uint32_t t, struct sweep_rec *rec);

/* The collector: called once per task, in the collecting process, one
 * call at a time. */
typedef void (*sweep_put_fn)(void *ctx, const struct sweep_rec *rec);

/*
 * Run every task in `procs` processes of this machine (forked workers;
 * procs <= 1: in this process). Returns 0, or -1 when a worker died or the
 * processes could not be made (err says which worker, which task and how;
 * the other workers are stopped).
 */
int sweep_local(const struct sweep_job *job, unsigned procs, sweep_put_fn put, void *ctx, char *err,
                size_t errlen);

/* MPI (sweep_mpi.c): whether this build has it, and whether this process
 * was started by an MPI launcher (mpirun, mpiexec, srun). */
int sweep_mpi_built(void);
int sweep_mpi_launched(void);
/* MPI_Init; *rank and *size. -1 (err set) when MPI cannot start. */
int sweep_mpi_init(int *rank, int *size, char *err, size_t errlen);
/* Every rank's ok, and-ed: all ranks call it at the same points. */
int sweep_mpi_all_ok(int ok);
/* Spread the tasks over the ranks; put is called on rank 0 only. */
int sweep_mpi_run(const struct sweep_job *job, sweep_put_fn put, void *ctx);
void sweep_mpi_finalize(void);

#endif
