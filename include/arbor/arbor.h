/* arbor/arbor.h - every public header of libarbor. */
#ifndef ARBOR_ARBOR_H
#define ARBOR_ARBOR_H

#include "arbor/agg.h"
#include "arbor/base.h"
#include "arbor/cc.h"
#include "arbor/endpoint.h"
#include "arbor/reduce.h"
#include "arbor/route.h"
#include "arbor/rt.h"
#include "arbor/scenario.h"
#include "arbor/sweep.h"
#include "arbor/sim.h"
#include "arbor/topo.h"
#include "arbor/traffic.h"
#include "arbor/wire.h"
#include "arbor/workload.h"

#endif
