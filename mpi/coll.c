/*
 * coll.c - the six collectives and their non-blocking forms: over Arbor
 * when the communicator, datatype and op allow it, else the PMPI_ call
 * unchanged (docs/mpi.md, "What goes over Arbor").
 */
#include "ampi_int.h"

#include <stdlib.h>
#include <string.h>

/* One call's arguments, as MPI gave them. */
struct call {
    enum ampi_coll coll;
    const void *send;
    void *recv;
    int count; /* elements of the result (AllGather: of each block) */
    MPI_Datatype type;
    int scount; /* AllGather: the send block's count and type */
    MPI_Datatype stype;
    MPI_Op op;
    int root;
    MPI_Comm comm;
};

/* How it goes over Arbor. */
struct route {
    struct amc *m;
    arb_dtype dt;
    arb_op op;
    size_t n;     /* Arbor elements (of each block) */
    size_t bytes; /* the block's bytes */
};

/* The Arbor op of an MPI op, or ARB_OP_NOP. */
static arb_op op_of(MPI_Op op)
{
    if (op == MPI_SUM) return ARB_OP_SUM;
    if (op == MPI_MAX) return ARB_OP_MAX;
    if (op == MPI_MIN) return ARB_OP_MIN;
    return ARB_OP_NOP;
}

/* The Arbor dtype that reduces MPI type t under op bit for bit as MPI
 * does, or -1: unsigned integers only for SUM, which wraps alike. */
static int dtype_of(MPI_Datatype t, arb_op op)
{
    if (t == MPI_FLOAT) return ARB_DTYPE_F32;
    if (t == MPI_DOUBLE) return ARB_DTYPE_F64;
    if (t == MPI_INT32_T || (t == MPI_INT && sizeof(int) == 4)) return ARB_DTYPE_I32;
    if (t == MPI_INT64_T || t == MPI_LONG_LONG || t == MPI_LONG_LONG_INT ||
        (t == MPI_LONG && sizeof(long) == 8))
        return ARB_DTYPE_I64;
    if (op != ARB_OP_SUM) return -1;
    if (t == MPI_UINT32_T || (t == MPI_UNSIGNED && sizeof(unsigned) == 4)) return ARB_DTYPE_I32;
    if (t == MPI_UINT64_T || t == MPI_UNSIGNED_LONG_LONG ||
        (t == MPI_UNSIGNED_LONG && sizeof(unsigned long) == 8))
        return ARB_DTYPE_I64;
    return -1;
}

/* Bytes of count elements of t when they lie in one contiguous block,
 * else 0 with *contig = 0. */
static size_t block_bytes(MPI_Datatype t, int count, int *contig)
{
    int size = 0;
    MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
    PMPI_Type_size(t, &size);
    PMPI_Type_get_extent(t, &lb, &extent);
    PMPI_Type_get_true_extent(t, &tlb, &textent);
    *contig = count >= 0 && tlb == 0 && lb == 0 && textent == size && extent == size;
    return *contig ? (size_t)size * (size_t)count : 0;
}

/* The bytes a call moves, as the summary counts them (the whole buffer:
 * AllGather's output, ReduceScatter's input). */
static size_t call_bytes(const struct call *c)
{
    int size = 0;
    if (c->coll == AC_BARRIER) return 0;
    PMPI_Type_size(c->type, &size);
    size_t b = (size_t)size * (size_t)(c->count > 0 ? c->count : 0);
    if (c->coll == AC_ALLGATHER || c->coll == AC_REDUCE_SCATTER) b *= (size_t)ampi_g.size;
    return b;
}

/* Why the call cannot go over Arbor, or AW_COUNT when it can (r filled). */
static enum ampi_why route_of(const struct call *c, int nonblocking, struct route *r)
{
    enum ampi_why why = AW_COUNT;
    memset(r, 0, sizeof *r);
    r->m = ampi_comm(c->comm, &why);
    if (!r->m) return why;
    if (nonblocking && r->m->inflight >= AMPI_INFLIGHT_MAX) return AW_INFLIGHT;
    int contig = 1;
    switch (c->coll) {
    case AC_BARRIER:
        return AW_COUNT;
    case AC_ALLREDUCE:
    case AC_REDUCE:
    case AC_REDUCE_SCATTER: {
        r->op = op_of(c->op);
        if (r->op == ARB_OP_NOP) return AW_OP;
        int dt = dtype_of(c->type, r->op);
        if (dt < 0) return AW_TYPE;
        if (c->count < 0) return AW_ARGS;
        r->dt = (arb_dtype)dt;
        r->n = (size_t)c->count;
        r->bytes = r->n * arb_dtype_size(r->dt);
        return AW_COUNT;
    }
    case AC_BCAST:
    case AC_ALLGATHER:
        /* moved, not reduced: any contiguous layout, as 4-byte words */
        r->bytes = block_bytes(c->type, c->count, &contig);
        if (!contig || r->bytes % 4) return AW_LAYOUT;
        if (c->coll == AC_ALLGATHER && c->send != MPI_IN_PLACE) {
            size_t sb = block_bytes(c->stype, c->scount, &contig);
            if (!contig || sb % 4) return AW_LAYOUT;
            if (sb != r->bytes) return AW_ARGS;
        }
        r->dt = ARB_DTYPE_I32;
        r->n = r->bytes / 4;
        return AW_COUNT;
    default:
        return AW_ARGS;
    }
}

/* Start the call over Arbor: its request in *q, a buffer to free after it
 * in *tmp. */
static int start(const struct call *c, const struct route *x, arb_rt_request **q, void **tmp)
{
    arb_rt_comm *rt = x->m->rt;
    const void *s = c->send == MPI_IN_PLACE ? c->recv : c->send;
    size_t all = x->bytes * (size_t)ampi_g.size;
    *tmp = NULL;
    switch (c->coll) {
    case AC_ALLREDUCE:
        return arb_rt_iallreduce(rt, s, c->recv, x->n, x->dt, x->op, q);
    case AC_REDUCE:
        return arb_rt_ireduce(rt, s, c->recv, x->n, x->dt, x->op, (uint32_t)c->root, q);
    case AC_REDUCE_SCATTER:
        if (c->send == MPI_IN_PLACE) {
            /* the input is recv's whole buffer, the output its first block */
            if (all && !(*tmp = malloc(all))) return ARB_ENOMEM;
            if (all) memcpy(*tmp, c->recv, all);
            s = *tmp;
        }
        return arb_rt_ireducescatter(rt, s, c->recv, x->n, x->dt, x->op, q);
    case AC_BCAST:
        return arb_rt_ibroadcast(rt, c->recv, x->n, x->dt, (uint32_t)c->root, q);
    case AC_ALLGATHER:
        if (c->send == MPI_IN_PLACE) {
            /* this rank's block is in place in recv */
            if (x->bytes && !(*tmp = malloc(x->bytes))) return ARB_ENOMEM;
            if (x->bytes)
                memcpy(*tmp, (const char *)c->recv + x->bytes * (size_t)ampi_g.rank, x->bytes);
            s = *tmp;
        }
        return arb_rt_iallgather(rt, s, c->recv, x->n, x->dt, q);
    case AC_BARRIER:
        return arb_rt_ibarrier(rt, q);
    default:
        return ARB_EINVAL;
    }
}

/* Run c over Arbor (blocking when req is NULL); -1 when it goes to MPI
 * (counted), else the MPI status. */
static int over_arbor(const struct call *c, MPI_Request *req)
{
    struct route x;
    enum ampi_why why = route_of(c, req != NULL, &x);
    if (why != AW_COUNT) {
        ampi_count_mpi(c->coll, why, call_bytes(c));
        return -1;
    }
    ampi_count_arbor(c->coll, call_bytes(c));
    arb_rt_request *q = NULL;
    void *tmp = NULL;
    pthread_mutex_lock(&ampi_g.lock);
    int rc = start(c, &x, &q, &tmp);
    if (rc == 0 && req) {
        pthread_mutex_unlock(&ampi_g.lock);
        return ampi_req_new(c->comm, x.m, c->coll, q, tmp, req);
    }
    if (rc == 0) rc = ampi_wait(q);
    int code = rc < 0 ? ampi_error_code(x.m, c->coll, rc) : MPI_SUCCESS;
    pthread_mutex_unlock(&ampi_g.lock);
    free(tmp);
    if (code != MPI_SUCCESS) PMPI_Comm_call_errhandler(c->comm, code);
    return code;
}

#define OR_MPI(c, req, pmpi)                                                                       \
    do {                                                                                           \
        int rc_ = over_arbor(&(c), (req));                                                         \
        return rc_ >= 0 ? rc_ : (pmpi);                                                            \
    } while (0)

/* The call of a reduction's arguments (s, r, n, t, op, comm), and of an
 * AllGather's (s, sn, st, r, rn, rt, comm). */
#define REDUCTION(k, root_)                                                                        \
    {                                                                                              \
        .coll = (k), .send = s, .recv = r, .count = n, .type = t, .op = op, .root = (root_),       \
        .comm = comm                                                                               \
    }
#define ALLGATHER()                                                                                \
    {                                                                                              \
        .coll = AC_ALLGATHER, .send = s, .scount = sn, .stype = st, .recv = r, .count = rn,        \
        .type = rt, .comm = comm                                                                   \
    }

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    struct call c = REDUCTION(AC_ALLREDUCE, 0);
    OR_MPI(c, NULL, PMPI_Allreduce(s, r, n, t, op, comm));
}

int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                   MPI_Request *req)
{
    struct call c = REDUCTION(AC_ALLREDUCE, 0);
    OR_MPI(c, req, PMPI_Iallreduce(s, r, n, t, op, comm, req));
}

int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm)
{
    struct call c = REDUCTION(AC_REDUCE, root);
    OR_MPI(c, NULL, PMPI_Reduce(s, r, n, t, op, root, comm));
}

int MPI_Ireduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request *req)
{
    struct call c = REDUCTION(AC_REDUCE, root);
    OR_MPI(c, req, PMPI_Ireduce(s, r, n, t, op, root, comm, req));
}

int MPI_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                             MPI_Comm comm)
{
    struct call c = REDUCTION(AC_REDUCE_SCATTER, 0);
    OR_MPI(c, NULL, PMPI_Reduce_scatter_block(s, r, n, t, op, comm));
}

int MPI_Ireduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                              MPI_Comm comm, MPI_Request *req)
{
    struct call c = REDUCTION(AC_REDUCE_SCATTER, 0);
    OR_MPI(c, req, PMPI_Ireduce_scatter_block(s, r, n, t, op, comm, req));
}

int MPI_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    struct call c = {
        .coll = AC_BCAST, .recv = buf, .count = n, .type = t, .root = root, .comm = comm};
    OR_MPI(c, NULL, PMPI_Bcast(buf, n, t, root, comm));
}

int MPI_Ibcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *req)
{
    struct call c = {
        .coll = AC_BCAST, .recv = buf, .count = n, .type = t, .root = root, .comm = comm};
    OR_MPI(c, req, PMPI_Ibcast(buf, n, t, root, comm, req));
}

int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm comm)
{
    struct call c = ALLGATHER();
    OR_MPI(c, NULL, PMPI_Allgather(s, sn, st, r, rn, rt, comm));
}

int MPI_Iallgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                   MPI_Comm comm, MPI_Request *req)
{
    struct call c = ALLGATHER();
    OR_MPI(c, req, PMPI_Iallgather(s, sn, st, r, rn, rt, comm, req));
}

int MPI_Barrier(MPI_Comm comm)
{
    struct call c = {.coll = AC_BARRIER, .comm = comm};
    OR_MPI(c, NULL, PMPI_Barrier(comm));
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    struct call c = {.coll = AC_BARRIER, .comm = comm};
    OR_MPI(c, req, PMPI_Ibarrier(comm, req));
}
