/* Private parts of the topology module, shared by its source files. */
#ifndef ARBOR_TOPO_INTERNAL_H
#define ARBOR_TOPO_INTERNAL_H

#include "arbor/topo.h"

#include <stdarg.h>

/* Long enough for the longest canonical pgft spec (16 levels of 10-digit values). */
#define TOPO_SPEC_MAX 640

struct arb_topo {
    arb_topo_kind kind;
    char spec[TOPO_SPEC_MAX];
    arb_pgft g;
    uint32_t n_hosts, n_nodes, n_ports;
    uint32_t level_first[ARB_TOPO_MAX_HEIGHT + 2];
    arb_node *nodes;
    arb_port *ports;
    uint64_t failure_gen; /* bumped by every change of a failed flag */
    double *loss;         /* per port: its own loss probability, or -1; NULL: none set */
    double *dup;          /* the same for duplication */
    double *reorder;      /* and for reordering */
    uint8_t *cut;         /* per port: failed as a link (not only with a switch of it);
                           * NULL until a link first fails */
};

/* Room for the per-port cut flags (made on first use). ARB_ENOMEM. */
int topo_cut_room(arb_topo *t);

/* Rates and delay the builder gives each tier. */
struct topo_rates {
    uint64_t host_rate; /* tier 0 */
    uint64_t up_rate;   /* tiers 1.. */
    arb_time delay;
};

/*
 * Check g (h, m, w, p), fill W, M and size, and build the arrays. `gen`
 * prefixes messages, `code` is the error returned for a bad parameter set.
 * On success *out owns the arrays; its kind and spec are the caller's to set.
 */
int topo_build(arb_topo **out, arb_pgft *g, const struct topo_rates *r, const char *gen, int code,
               char *err, size_t errlen);

/* Write a message into err (if any) and return code. */
int arb_errf(char *err, size_t errlen, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
