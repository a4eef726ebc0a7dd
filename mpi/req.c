/*
 * req.c - the MPI requests of non-blocking calls over Arbor: each is a
 * generalized request (MPI_Grequest_start) that the interposer completes
 * when its Arbor call is done. The wait and test family drive the Arbor
 * calls among their requests, then hand the whole array to PMPI_, which
 * finds them complete (docs/mpi.md, "Non-blocking calls").
 */
#include "ampi_int.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define AMPI_REQS_MAX (AMPI_INFLIGHT_MAX * (AMPI_DUPS_MAX + 1))

struct areq {
    int used;
    MPI_Request h; /* the generalized request the user holds */
    arb_rt_request *ar;
    MPI_Comm comm;
    struct amc *m;
    enum ampi_coll coll;
    void *tmp;
    int code; /* after completion: MPI_SUCCESS or the error code */
};

static struct areq reqs[AMPI_REQS_MAX];
static int n_live; /* slots in use: 0 lets every wait skip the lookup */

static int q_query(void *extra, MPI_Status *st)
{
    (void)extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    st->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}

static int q_free(void *extra)
{
    struct areq *a = extra;
    free(a->tmp);
    memset(a, 0, sizeof *a);
    n_live--;
    return MPI_SUCCESS;
}

static int q_cancel(void *extra, int complete)
{
    (void)extra, (void)complete; /* a collective cannot be cancelled */
    return MPI_SUCCESS;
}

int ampi_req_new(MPI_Comm comm, struct amc *m, enum ampi_coll coll, arb_rt_request *ar, void *tmp,
                 MPI_Request *out)
{
    struct areq *a = NULL;
    for (int i = 0; i < AMPI_REQS_MAX && !a; i++)
        if (!reqs[i].used) a = &reqs[i];
    /* at most AMPI_INFLIGHT_MAX per communicator (route_of): never full */
    int rc = a ? PMPI_Grequest_start(q_query, q_free, q_cancel, a, &a->h) : MPI_ERR_OTHER;
    if (rc != MPI_SUCCESS) {
        pthread_mutex_lock(&ampi_g.lock);
        ampi_wait(ar);
        pthread_mutex_unlock(&ampi_g.lock);
        free(tmp);
        return a ? rc : ampi_fail(comm, m, coll, ARB_ESTATE);
    }
    a->used = 1;
    a->ar = ar;
    a->comm = comm;
    a->m = m;
    a->coll = coll;
    a->tmp = tmp;
    a->code = MPI_SUCCESS;
    m->inflight++;
    n_live++;
    *out = a->h;
    return MPI_SUCCESS;
}

static struct areq *find(MPI_Request h)
{
    if (!n_live || h == MPI_REQUEST_NULL) return NULL;
    for (int i = 0; i < AMPI_REQS_MAX; i++)
        if (reqs[i].used && reqs[i].h == h) return &reqs[i];
    return NULL;
}

/* The Arbor call ended with rc: free it (unless waited for already) and
 * complete the MPI request. */
static void complete(struct areq *a, int rc, int waited)
{
    int rw = waited ? rc : arb_rt_wait(a->ar); /* at once: it is done */
    if (rc >= 0) rc = rw;
    a->ar = NULL;
    a->m->inflight--;
    if (rc < 0) a->code = ampi_error_code(a->m, a->coll, rc);
    PMPI_Grequest_complete(a->h);
}

/* Progress a's Arbor call once (block: until it ends); 1 when it ended. */
static int drive(struct areq *a, int block)
{
    if (!a->ar) return 1;
    pthread_mutex_lock(&ampi_g.lock);
    int done = 1, rc = block ? ampi_wait(a->ar) : arb_rt_test(a->ar, &done);
    if (done || rc < 0) complete(a, rc, block);
    pthread_mutex_unlock(&ampi_g.lock);
    if (!done && rc == 0) sched_yield(); /* a caller that polls leaves the core to the others */
    return done || rc < 0;
}

/* Drive every Arbor request of the array once; 1 when none is left running. */
static int drive_all(int n, MPI_Request *rs)
{
    int left = 0;
    for (int i = 0; n_live && i < n; i++) {
        struct areq *a = find(rs[i]);
        if (a && !drive(a, 0)) left = 1;
    }
    return !left;
}

/* Keep MPI's own transfers moving while Arbor calls run. */
static void nudge_mpi(void)
{
    int flag;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

/* Before PMPI_ frees the requests: the Arbor errors among them, each
 * passed to its communicator's handler; the first such code, or 0. */
static int arbor_errors(int n, MPI_Request *rs, MPI_Status *sts)
{
    int first = 0;
    for (int i = 0; n_live && i < n; i++) {
        struct areq *a = find(rs[i]);
        if (!a || a->ar || a->code == MPI_SUCCESS) continue;
        if (sts != MPI_STATUSES_IGNORE) sts[i].MPI_ERROR = a->code;
        PMPI_Comm_call_errhandler(a->comm, a->code);
        if (!first) first = a->code;
    }
    return first;
}

int MPI_Wait(MPI_Request *r, MPI_Status *st)
{
    struct areq *a = find(*r);
    if (!a) return PMPI_Wait(r, st);
    drive(a, 1);
    int code = a->code;
    if (code != MPI_SUCCESS) PMPI_Comm_call_errhandler(a->comm, code);
    int rc = PMPI_Wait(r, st);
    if (code != MPI_SUCCESS && st != MPI_STATUS_IGNORE) st->MPI_ERROR = code;
    return code != MPI_SUCCESS ? code : rc;
}

int MPI_Test(MPI_Request *r, int *flag, MPI_Status *st)
{
    struct areq *a = find(*r);
    if (!a) return PMPI_Test(r, flag, st);
    if (!drive(a, 0)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    return MPI_Wait(r, st) == MPI_SUCCESS ? (*flag = 1, MPI_SUCCESS) : (*flag = 1, a->code);
}

int MPI_Waitall(int n, MPI_Request rs[], MPI_Status sts[])
{
    while (!drive_all(n, rs))
        nudge_mpi();
    int err = arbor_errors(n, rs, sts);
    int rc = PMPI_Waitall(n, rs, sts);
    return err ? MPI_ERR_IN_STATUS : rc;
}

int MPI_Testall(int n, MPI_Request rs[], int *flag, MPI_Status sts[])
{
    if (!drive_all(n, rs)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    return MPI_Waitall(n, rs, sts) == MPI_SUCCESS ? (*flag = 1, MPI_SUCCESS)
                                                  : (*flag = 1, MPI_ERR_IN_STATUS);
}

/* Waitany, Testany, Waitsome, Testsome: drive the Arbor calls, then ask
 * PMPI_ which requests are complete; a completed Arbor request's error goes
 * through its handler and its status. */
static int any_or_some(int n, MPI_Request rs[], int *index, int *outcount, int indices[],
                       MPI_Status *sts, int wait)
{
    for (;;) {
        drive_all(n, rs);
        /* which Arbor requests PMPI_ is about to free, with their codes */
        int code[AMPI_REQS_MAX], at[AMPI_REQS_MAX], k = 0;
        for (int i = 0; n_live && i < n && k < AMPI_REQS_MAX; i++) {
            struct areq *a = find(rs[i]);
            if (a && !a->ar) {
                at[k] = i;
                code[k++] = a->code;
            }
        }
        int flag = 0, rc;
        if (indices) {
            rc = PMPI_Testsome(n, rs, outcount, indices, sts);
            flag = *outcount != 0;
        } else {
            rc = PMPI_Testany(n, rs, index, &flag, sts);
        }
        if (rc != MPI_SUCCESS) return rc;
        if (flag) {
            int err = 0;
            for (int j = 0; j < k; j++) {
                int hit = 0;
                if (indices) {
                    for (int o = 0; o < *outcount && !hit; o++)
                        hit = indices[o] == at[j];
                    if (hit && code[j] && sts != MPI_STATUSES_IGNORE) {
                        for (int o = 0; o < *outcount; o++)
                            if (indices[o] == at[j]) sts[o].MPI_ERROR = code[j];
                    }
                } else {
                    hit = *index == at[j];
                    if (hit && code[j] && sts != MPI_STATUS_IGNORE) sts->MPI_ERROR = code[j];
                }
                if (hit && code[j]) {
                    PMPI_Comm_call_errhandler(MPI_COMM_WORLD, code[j]);
                    err = indices ? MPI_ERR_IN_STATUS : code[j];
                }
            }
            return err ? err : MPI_SUCCESS;
        }
        if (!wait) return MPI_SUCCESS;
    }
}

int MPI_Waitany(int n, MPI_Request rs[], int *index, MPI_Status *st)
{
    if (!n_live) return PMPI_Waitany(n, rs, index, st);
    return any_or_some(n, rs, index, NULL, NULL, st, 1);
}

int MPI_Testany(int n, MPI_Request rs[], int *index, int *flag, MPI_Status *st)
{
    if (!n_live) return PMPI_Testany(n, rs, index, flag, st);
    *index = MPI_UNDEFINED;
    int rc = any_or_some(n, rs, index, NULL, NULL, st, 0);
    *flag = *index != MPI_UNDEFINED;
    if (!*flag) {
        /* PMPI_Testany says flag = 1 with index MPI_UNDEFINED when no
         * request is active: ask it alone to keep that answer */
        int active = 0;
        for (int i = 0; i < n && !active; i++)
            active = rs[i] != MPI_REQUEST_NULL;
        *flag = !active;
    }
    return rc;
}

int MPI_Waitsome(int n, MPI_Request rs[], int *outcount, int indices[], MPI_Status sts[])
{
    if (!n_live) return PMPI_Waitsome(n, rs, outcount, indices, sts);
    return any_or_some(n, rs, NULL, outcount, indices, sts, 1);
}

int MPI_Testsome(int n, MPI_Request rs[], int *outcount, int indices[], MPI_Status sts[])
{
    if (!n_live) return PMPI_Testsome(n, rs, outcount, indices, sts);
    return any_or_some(n, rs, NULL, outcount, indices, sts, 0);
}

int MPI_Request_free(MPI_Request *r)
{
    struct areq *a = find(*r);
    /* the call's buffers stay in use until it ends: finish it first */
    if (a) drive(a, 1);
    return PMPI_Request_free(r);
}
