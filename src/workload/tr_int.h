/*
 * tr_int.h - iteration traces inside the workload module: the model both
 * readers fill (itrace.c: text; chakra.c: Chakra protobuf), the checks
 * they share (tr_finish) and what the replay (iter.c) reads.
 */
#ifndef ARBOR_TR_INT_H
#define ARBOR_TR_INT_H

#include "arbor/workload.h"

#define TR_MAX_RANKS 65536u
#define TR_MAX_NODES (1u << 22)
#define TR_NONE UINT32_MAX

enum tr_op { TR_COMP = 0, TR_COLL = 1, TR_SEND = 2, TR_RECV = 3, TR_NOP = 4 };

struct tr_node {
    uint64_t id;
    uint8_t op;
    uint8_t coll; /* arb_coll */
    uint64_t bytes;
    arb_time dur;
    uint32_t peer, tag, root;
    uint32_t group;   /* collective: group index */
    uint32_t where;   /* text: line; Chakra: record number */
    uint32_t dep_off; /* raw ids in rank's raw[], then indices in rank's dep[] */
    uint32_t n_deps;
    uint32_t match; /* collective: instance; send / receive: p2p index */
};

struct tr_rank {
    struct tr_node *nodes;
    uint32_t n, cap;
    uint64_t *raw; /* dependency ids as written */
    uint32_t n_raw, cap_raw;
    uint32_t *dep;             /* the same as node indices (tr_finish) */
    uint32_t *rdep_off, *rdep; /* dependents (tr_finish) */
};

struct tr_group {
    uint32_t *ranks; /* in the collective's rank order */
    uint32_t n;
    char *name; /* Chakra pg_name or text group name; may be NULL */
};

struct tr_coll { /* a matched collective call */
    uint32_t group;
    uint8_t coll;
    uint64_t bytes;
    uint32_t root;
    uint32_t node_off; /* nodes[node_off + i]: member i's node (global index) */
};

struct tr_p2p {
    uint32_t src, dst;
    uint64_t bytes;
    uint32_t send_node, recv_node; /* global node indices */
};

struct arb_trace {
    int chakra; /* messages: 1 "F.R.et: node ID (record K)", 0 "F:LINE" */
    char *name; /* file name (Chakra: the prefix) */
    uint32_t n_ranks;
    uint32_t total; /* nodes added */
    struct tr_rank *rk;
    struct tr_group *g;
    uint32_t n_groups, cap_groups;
    /* filled by tr_finish */
    uint32_t *rank_off; /* global index of a rank's first node */
    uint64_t n_nodes;
    struct tr_coll *colls;
    uint32_t n_colls;
    uint32_t *coll_nodes;
    struct tr_p2p *p2p;
    uint32_t n_p2p;
};

int tr_new(arb_trace **out, const char *name, uint32_t n_ranks, int chakra);
/* Append a node to rank r (its raw deps follow with tr_add_dep). */
struct tr_node *tr_add_node(arb_trace *t, uint32_t r);
int tr_add_dep(arb_trace *t, uint32_t r, uint64_t id);
/* The group of ranks[0..n) (interned by content); index or negative. */
long tr_group(arb_trace *t, const uint32_t *ranks, uint32_t n, const char *name);
/* "F:LINE" or "F.R.et: node ID (record K)" for node i of rank r. */
void tr_where(const arb_trace *t, uint32_t r, uint32_t i, char *buf, size_t len);
/* Resolve dependencies, check the rules, match collectives and p2p.
 * ARB_EPARSE with the record and rule, ARB_ENOMEM. */
int tr_finish(arb_trace *t, char *err, size_t errlen);

#endif
