/* sweep_int.h - a parsed sweep (struct arb_sweep), private to the scenario
 * module: sweep.c parses the file into it, sweep_points.c makes each point's
 * scenario from it. */
#ifndef ARBOR_SWEEP_INT_H
#define ARBOR_SWEEP_INT_H

#include "arbor/sweep.h"

#include <stddef.h>
#include <stdint.h>

struct sweep_var {
    char *name;
    unsigned line; /* where it is declared */
    char **values;
    size_t n, cap;
    size_t stride; /* points between two of its values */
};

struct piece {
    char *lit;     /* literal text, or NULL for a slot */
    size_t var;    /* a slot's variable */
    unsigned line; /* a slot's line */
    char *ref;     /* a reference not resolved yet */
    char *key;     /* a slot's key, "section.key" */
};

struct arb_sweep {
    char *name, *dir;
    struct piece *pieces;
    size_t n_pieces, cap_pieces;
    struct sweep_var *vars;
    size_t n_vars, cap_vars;
    size_t n_points;
    unsigned reps;
    int have_seeds, have_repeat;
    unsigned seeds_line, repeat_line; /* of sweep.seeds, sweep.repeat */
    uint64_t seed_first;
};

#endif
