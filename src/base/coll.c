/* The collectives' names and bus bandwidth factors (base.h): the one table
 * the planner, the runtime and the host collectives read. */
#include "arbor/base.h"

static const char *const coll_names[ARB_COLL_COUNT] = {
    "allreduce", "reduce", "reducescatter", "broadcast", "allgather", "barrier", "alltoall"};

const char *arb_coll_name(int coll)
{
    return coll >= 0 && coll < ARB_COLL_COUNT ? coll_names[coll] : NULL;
}

int arb_coll_parse(const char *name)
{
    return arb_name_index(coll_names, ARB_COLL_COUNT, name);
}

double arb_coll_busbw_factor(arb_coll coll, uint32_t n)
{
    if (n == 0) return 0;
    double r = (double)n;
    switch (coll) {
    case ARB_COLL_ALLREDUCE:
        return 2.0 * (r - 1) / r;
    case ARB_COLL_REDUCESCATTER:
    case ARB_COLL_ALLGATHER:
    case ARB_COLL_ALLTOALL:
        return (r - 1) / r;
    case ARB_COLL_BROADCAST:
    case ARB_COLL_REDUCE:
        return 1;
    case ARB_COLL_BARRIER:
        return 0;
    }
    return 0;
}
