/**
 * @file
 * Every public header of libarbor, and the conventions they all follow.
 *
 * `#include "arbor/arbor.h"` gives the whole API; each module's header may
 * also be included alone. The reference is generated from these headers by
 * Doxygen (`make docs`: build/docs/html/index.html; docs/design.md).
 *
 * @par Conventions
 * A function's comment says what it does; it states ownership, errors and
 * thread safety only where they differ from these defaults.
 *
 * - **Errors.** A function returning `int` returns 0 on success (or the
 *   non-negative value its comment names) and a negative `ARB_E*` code of
 *   base.h on failure (arb_strerror, arb_errname); its comment names the
 *   codes, after "Errors:" or where it says what it returns, or says
 *   "Never fails". ARB_EINVAL is an argument outside its documented range,
 *   a NULL where an object or output is needed included; ARB_ENOMEM a
 *   failed allocation (an object that allocates through an arb_mem then
 *   leaves nothing allocated behind). A function that takes `char *err,
 *   size_t errlen` also writes one line naming the problem there (nothing
 *   when err is NULL or errlen 0). Malformed input is an error code, never
 *   an assert or a crash.
 *   Functions that cannot fail say what they return for out-of-range input.
 * - **Ownership.** Pointer arguments are borrowed: the function reads (or,
 *   when not const, writes) them during the call and keeps nothing, unless
 *   its comment says the object keeps one (the topology a router or a
 *   simulator is bound to), which must then outlive the object. A
 *   configuration struct is copied by the constructor that takes it; the
 *   memory its pointer fields point to (arrays, the allocator, a logger's
 *   user data, callbacks' user data) is borrowed and must outlive the
 *   object unless the field says it is copied. An object made by
 *   `arb_X_new(&out, ...)` belongs to the caller, who releases it with
 *   `arb_X_free` (which accepts NULL); on failure `*out` is NULL. A pointer
 *   a function returns points into the object that returned it: the caller
 *   never frees it, and it is valid until that object is freed (or, where
 *   said, changed). Names (`arb_*_name`, arb_strerror) are static strings.
 * - **Memory.** Objects whose configuration holds `const arb_mem *mem`
 *   allocate only through it (NULL: the C library's); see arb_mem.
 * - **Thread safety.** The library keeps no global mutable state: a
 *   function that takes no object (codecs, parsers, names, reductions) may
 *   run in any number of threads at once. An object, and what it returned,
 *   is used by one thread at a time; distinct objects are independent. The
 *   library starts no thread.
 * - **I/O.** The library never prints: messages go to an arb_logger when a
 *   configuration names one. Only the functions that say so touch files,
 *   sockets, the clock or the environment (the simulator's captures,
 *   scenario and trace files, the runtime).
 * - **Time** is arb_time, picoseconds; ARB_TIME_NEVER is "never".
 */
/**
 * @mainpage Arbor API reference
 *
 * libarbor's public headers, one per module (docs/design.md has the
 * modules); arbor.h includes them all and states the conventions every
 * function follows: errors, ownership, memory, thread safety, I/O. Start
 * there, then the module you use: base.h, wire.h, reduce.h, topo.h,
 * route.h, traffic.h, sim.h, lb.h, workload.h, scenario.h, plan.h, agg.h,
 * endpoint.h, cc.h, rt.h.
 */
#ifndef ARBOR_ARBOR_H
#define ARBOR_ARBOR_H

#include "arbor/agg.h"
#include "arbor/base.h"
#include "arbor/cc.h"
#include "arbor/endpoint.h"
#include "arbor/lb.h"
#include "arbor/plan.h"
#include "arbor/reduce.h"
#include "arbor/route.h"
#include "arbor/rt.h"
#include "arbor/scenario.h"
#include "arbor/sweep.h"
#include "arbor/sim.h"
#include "arbor/sim_arbor.h"
#include "arbor/switch.h"
#include "arbor/topo.h"
#include "arbor/traffic.h"
#include "arbor/wire.h"
#include "arbor/workload.h"

#endif
