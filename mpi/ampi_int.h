/*
 * ampi_int.h - the PMPI interposer's private API (libarbor_mpi.so,
 * docs/mpi.md): the state of the process (ampi.c), the collectives that may
 * go over Arbor (coll.c) and the requests of their non-blocking forms
 * (req.c).
 */
#ifndef ARBOR_AMPI_INT_H
#define ARBOR_AMPI_INT_H

#include "arbor/rt.h"

#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The collectives the interposer may take over, as the summary names them. */
enum ampi_coll {
    AC_ALLREDUCE,
    AC_REDUCE,
    AC_BCAST,
    AC_ALLGATHER,
    AC_REDUCE_SCATTER,
    AC_BARRIER,
    AC_COUNT
};

/* Why a call went to MPI (the summary's reasons). */
enum ampi_why {
    AW_OFF,      /* Arbor is off in this process (g.off says why) */
    AW_COMM,     /* not MPI_COMM_WORLD nor one made from it by dup or split */
    AW_COMM_OFF, /* a duplicate whose job could not be joined */
    AW_TYPE,     /* a datatype without an Arbor dtype */
    AW_OP,       /* an op other than SUM, MAX, MIN */
    AW_LAYOUT,   /* not contiguous, or not a whole number of 4-byte words */
    AW_ARGS,     /* send and receive counts or types differ */
    AW_INFLIGHT, /* 16 non-blocking calls in flight on the communicator */
    AW_COUNT
};

/* Calls each collective made over each path, their bytes, and why. */
struct ampi_stats {
    uint64_t calls[AC_COUNT][2]; /* [coll][0: Arbor, 1: MPI] */
    uint64_t bytes[AC_COUNT][2];
    uint64_t why[AC_COUNT][AW_COUNT];
    uint64_t failed[AC_COUNT]; /* Arbor calls that ended in an error */
};

/* Non-blocking calls in flight on one communicator at most (rt.h). */
#define AMPI_INFLIGHT_MAX 16
/* Communicators over Arbor: MPI_COMM_WORLD and up to this many more, each
 * a job of its own (job, job + 1, ...: arbor mpirun admits them all). */
#define AMPI_DUPS_MAX 15

/* An MPI communicator over Arbor: its own job on the switch. */
struct amc {
    arb_rt_comm *rt; /* NULL: its calls go to MPI (why: AW_COMM_OFF) */
    uint32_t job;
    int inflight; /* non-blocking calls not yet waited for */
    int slot;     /* index in g.dups, -1 for MPI_COMM_WORLD */
};

/* The process's state. */
struct ampi {
    int on;         /* MPI_COMM_WORLD runs over Arbor */
    char off[256];  /* why not, when !on */
    int rank, size; /* in MPI_COMM_WORLD */
    int progress;   /* ARBOR_MPI_PROGRESS: blocking calls keep MPI progressing */
    int verbose;    /* ARBOR_MPI_VERBOSE */
    int keyval;     /* the attribute holding a communicator's struct amc */
    arb_rt_config cfg;
    struct amc world;
    struct amc *dups[AMPI_DUPS_MAX];
    uint32_t n_dups_made; /* jobs handed out to duplicates so far */
    int err_class, err_code;
    struct ampi_stats st;
    /* Every use of an Arbor communicator holds the lock. A thread keeps
     * them progressing between calls (ampi.c, tick_main): a call done here
     * may still owe its peers answers, and the program may next wait in
     * MPI, not in Arbor. It skips its tick, and sleeps longer, while
     * blocking waits run or have run since its last look (they progress
     * the engines themselves): `waits` counts those begun, `waiting`
     * those running (atomics, no lock on a call's path). */
    pthread_mutex_t lock;
    pthread_t ticker;
    int ticking;
    volatile int stop;
    unsigned long waits;
    int waiting;
    /* the ticker's figures (ARBOR_MPI_VERBOSE's summary): its wakes, those
     * that found a wait running or run since, its ticks; ns in waits */
    unsigned long wakes, busy_wakes, ticks;
    uint64_t wait_ns;
};
extern struct ampi ampi_g;

/* The communicator's Arbor state, or NULL with the reason in *why. */
struct amc *ampi_comm(MPI_Comm comm, enum ampi_why *why);
/* Count a call that went to MPI and return NULL (for route helpers). */
void ampi_count_mpi(enum ampi_coll coll, enum ampi_why why, size_t bytes);
void ampi_count_arbor(enum ampi_coll coll, size_t bytes);
/* An Arbor call failed with rc: an MPI error code whose string names what
 * the runtime said, passed to comm's error handler; returns the code. */
int ampi_fail(MPI_Comm comm, struct amc *m, enum ampi_coll coll, int rc);
/* The code for rc without calling the handler (requests report later). */
int ampi_error_code(struct amc *m, enum ampi_coll coll, int rc);
/* Wait for an Arbor request, keeping MPI's progress going when asked. */
int ampi_wait(arb_rt_request *r);

/* A non-blocking Arbor call's MPI request (req.c): a generalized request
 * completed when the Arbor call is. tmp is freed with it. */
int ampi_req_new(MPI_Comm comm, struct amc *m, enum ampi_coll coll, arb_rt_request *ar, void *tmp,
                 MPI_Request *out);

/* The summary (ARBOR_MPI_VERBOSE) on stderr. */
void ampi_summary(void);

#endif
