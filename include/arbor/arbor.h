/* arbor/arbor.h - every public header of libarbor. */
#ifndef ARBOR_ARBOR_H
#define ARBOR_ARBOR_H

#include "arbor/base.h"
#include "arbor/reduce.h"
#include "arbor/route.h"
#include "arbor/topo.h"
#include "arbor/wire.h"

#endif
