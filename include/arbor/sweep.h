/** @file
 * arbor/sweep.h - parameter sweeps over a scenario file: iteration
 * variables in the spirit of OMNeT++ (docs/sweeps.md) written inside the
 * scenario's values, and replications.
 *
 * @verbatim
   [workload]
   size = ${size=1,4,16}MiB            a named variable: three values
   [fabric]
   topology = ${"star:4","star:8"}     unnamed: named after its key
   loss = ${loss=0..0.002 step 0.001}  a range (decimal, step 1 by default)
   [arbor]
   payload = ${size}KiB                a reference: the value of size
   [sweep]
   repeat = 5                          replications: run.seed, run.seed + 1, ...
   ; or: seeds = 1..5                  replications: run.seed = 1, ..., 5
   @endverbatim
 *
 * The points are every combination of the variables' values, the first
 * variable in the file varying slowest; point p's value of each variable
 * follows from p alone, so a point is the same whichever process runs it.
 * Every point runs once per replication.
 *
 * Expansion is textual: a point's scenario is the file with each ${...}
 * replaced by its value and the [sweep] section blanked, line for line, so
 * an error in a point's value names the file's own line. Errors of the
 * syntax name the file, the line and the variable: "FILE:LINE: ${size}:
 * what" (ARB_EPARSE).
 *
 * An arb_sweep is immutable once parsed: any number of threads may read it
 * at once. No printing, no allocation after parsing but for the text of a
 * point.
 */
#ifndef ARBOR_SWEEP_H
#define ARBOR_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A parsed sweep (opaque): made by arb_sweep_parse or arb_sweep_load,
 * freed by arb_sweep_free. */
typedef struct arb_sweep arb_sweep;

/** At most this many points (the product of the variables' value counts). */
#define ARB_SWEEP_MAX_POINTS 1000000u
/** At most this many replications per point. */
#define ARB_SWEEP_MAX_REPS 100000u

/**
 * Parse scenario text with sweep syntax. `name` stands for the file in
 * messages and in each point's scenario; relative paths of the scenario
 * resolve against `dir` (NULL: the working directory). Only the sweep
 * syntax is checked here: arb_sweep_point_load checks a point's values.
 * Errors: ARB_EPARSE (err: "NAME:LINE: ..."), ARB_ENOMEM.
 */
int arb_sweep_parse(const char *text, const char *name, const char *dir, arb_sweep **out, char *err,
                    size_t errlen);

/** The same for a file (relative paths against its directory).
 * Errors: ARB_EIO when it cannot be read, else as arb_sweep_parse. */
int arb_sweep_load(const char *path, arb_sweep **out, char *err, size_t errlen);

/** Free a sweep (NULL is ignored). */
void arb_sweep_free(arb_sweep *sw);

/** The points: every combination of the variables' values. */
size_t arb_sweep_n_points(const arb_sweep *sw);
/** Replications of each point (1 without [sweep]). */
unsigned arb_sweep_n_reps(const arb_sweep *sw);

/** The variables, in the order they appear in the file. */
size_t arb_sweep_n_vars(const arb_sweep *sw);
/** Variable `var`'s name (borrowed from sw; NULL when out of range). */
const char *arb_sweep_var_name(const arb_sweep *sw, size_t var);
/** How many values variable `var` takes (0 when out of range). */
size_t arb_sweep_var_n_values(const arb_sweep *sw, size_t var);
/** The text point `point` gives variable `var` (borrowed from sw; NULL
 * when either is out of range). */
const char *arb_sweep_value(const arb_sweep *sw, size_t point, size_t var);

/**
 * The line of the file that sets section.key (any section's `key` when
 * section is NULL) for every point: its first ${...} in that key's value,
 * or for run.seed the line of `seeds = A..B`; 0 when none does. An
 * override of such a key (-s) would make every point's value the same.
 */
unsigned arb_sweep_sets_key(const arb_sweep *sw, const char *section, const char *key);

/**
 * The scenario text of a point, from the process allocator (the caller
 * frees it with arb_mem_free(NULL, text), or free() when no other was set
 * with arb_mem_set_default); NULL when out of memory or point is out of
 * range.
 */
char *arb_sweep_point_text(const arb_sweep *sw, size_t point);

/**
 * Load a point's scenario text into sc (on top of what it holds). Errors:
 * ARB_EINVAL for a point out of range, else as arb_scenario_load_string's
 * (ARB_EPARSE, ARB_ENOMEM), the message followed by the variables of
 * the line at fault and their values: "... (point 3: size=lots)".
 */
int arb_sweep_point_load(const arb_sweep *sw, size_t point, arb_scenario *sc, char *err,
                         size_t errlen);

/**
 * Set run.seed for replication rep (0 <= rep < arb_sweep_n_reps): with
 * `seeds = A..B`, A + rep; with `repeat = N`, sc's run.seed + rep (so call
 * it once, after the point and any overrides are loaded). Errors:
 * ARB_EINVAL for a rep out of range; ARB_ERANGE when the seed would pass
 * 2^64 - 1.
 */
int arb_sweep_replicate(const arb_sweep *sw, unsigned rep, arb_scenario *sc, char *err,
                        size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_SWEEP_H */
