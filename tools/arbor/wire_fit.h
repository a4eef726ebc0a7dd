/*
 * arbor wire encode's header search (wire_fit.c): the valid header nearest
 * to what the keys (over an example, or zeros) describe, or a message
 * naming the field the user gave that is wrong or the one to add.
 */
#ifndef ARBOR_WIRE_FIT_H
#define ARBOR_WIRE_FIT_H

#include "arbor/wire.h"

#include <stddef.h>

/* The fields the search may choose, outermost (changed last) first. */
enum wire_dim {
    WD_PAYLOAD,    /* the payload given, or none */
    WD_KIND,       /* payload_kind */
    WD_DEPTH,      /* agg_depth */
    WD_AGGREGATED, /* aggregated */
    WD_OP,         /* op */
    WD_ATTEMPT,    /* attempt */
    WD_REPAIR,     /* repair */
    WD_CREDIT,     /* credit_valid */
    WD_OFFB,       /* offset_b */
    WD_FANIN,      /* fanin: as given, or 1 on every tier below agg_depth */
    WD_COUNT
};

struct wire_fit {
    arb_hdr h;                /* the start: an example's header or zeros, then the keys */
    size_t payload_len;       /* the payload's bytes (0: none) */
    int payload_valid_given;  /* payload_valid set by a key: kept as given */
    unsigned given;           /* 1 << WD_*: set by a key, kept unless it is what is wrong */
    int example;              /* h started as an example's (its fields the user's choice too) */
    const char *payload_name; /* how the user gave the payload: "payload" or "payload_len" */
};

/* The valid header nearest to f: the keys' fields as given, every other
 * field of WD_* its start value unless the packet type needs another (the
 * first valid one in the dimensions' order). 0 with *out and *payload_len
 * (the payload kept, or 0); else CLI_EXIT_USAGE with one line in msg naming
 * the given fields that are wrong and what the type needs instead, or the
 * field to add. */
int wire_fit(const struct wire_fit *f, arb_hdr *out, size_t *payload_len, char *msg, size_t len);

#endif
