/*
 * Chakra execution traces (MLCommons; the format ASTRA-sim consumes): one
 * file per rank, a GlobalMetadata message and then Node messages, each
 * length-delimited (a varint length, then the message), decoded through
 * protobuf-c with our own schema (chakra.proto). What is read:
 *   Node.id, Node.type, Node.ctrl_deps and Node.data_deps (both are
 *   dependencies), Node.duration_micros (COMP_NODE), and the attributes
 *   comm_type, comm_size, pg_name (COMM_COLL_NODE), comm_dst / comm_src,
 *   comm_tag, comm_size (COMM_SEND_NODE / COMM_RECV_NODE). Integer
 *   attributes are accepted in any of int32_val, int64_val, uint32_val,
 *   uint64_val. METADATA, MEM_LOAD and MEM_STORE nodes are no-ops that
 *   keep their dependencies.
 * A collective's group is its pg_name: the ranks that call collectives of
 * that name, in rank order (every member must make the same calls).
 */
#include "tr_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

#ifdef ARB_HAVE_CHAKRA

#include "chakra.pb-c.h"

int arb_trace_chakra_available(void)
{
    return 1;
}

struct ck {
    arb_trace *t;
    const char *prefix;
    char *err;
    size_t errlen;
    /* pg_name interning: names and (name, rank) pairs */
    char **names;
    uint32_t n_names, cap_names;
};

static int rec_fail(struct ck *c, uint32_t r, uint32_t rec, size_t off, const char *rule)
{
    return arb_errf(c->err, c->errlen, ARB_EPARSE, "%s.%u.et: record %u (byte %zu): %s", c->prefix,
                    r, rec, off, rule);
}

static int node_fail(struct ck *c, uint32_t r, uint64_t id, uint32_t rec, const char *rule)
{
    return arb_errf(c->err, c->errlen, ARB_EPARSE, "%s.%u.et: node %llu (record %u): %s", c->prefix,
                    r, (unsigned long long)id, rec, rule);
}

/* A varint at buf[*pos..len); 0, or -1 when truncated or longer than 10 bytes. */
static int varint(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (*pos >= len) return -1;
        uint8_t b = buf[(*pos)++];
        if (shift == 63 && b > 1) return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* An integer attribute; 1 found, 0 absent, -1 negative. */
static int attr_uint(const ArborChakra__Node *n, const char *name, uint64_t *out)
{
    for (size_t i = 0; i < n->n_attr; i++) {
        const ArborChakra__AttributeProto *a = n->attr[i];
        if (!a->name || strcmp(a->name, name) != 0) continue;
        switch (a->value_case) {
        case ARBOR_CHAKRA__ATTRIBUTE_PROTO__VALUE_INT32_VAL:
            if (a->int32_val < 0) return -1;
            *out = (uint64_t)a->int32_val;
            return 1;
        case ARBOR_CHAKRA__ATTRIBUTE_PROTO__VALUE_INT64_VAL:
            if (a->int64_val < 0) return -1;
            *out = (uint64_t)a->int64_val;
            return 1;
        case ARBOR_CHAKRA__ATTRIBUTE_PROTO__VALUE_UINT32_VAL:
            *out = a->uint32_val;
            return 1;
        case ARBOR_CHAKRA__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
            *out = a->uint64_val;
            return 1;
        default:
            return -2;
        }
    }
    return 0;
}

static const char *attr_str(const ArborChakra__Node *n, const char *name)
{
    for (size_t i = 0; i < n->n_attr; i++) {
        const ArborChakra__AttributeProto *a = n->attr[i];
        if (a->name && strcmp(a->name, name) == 0 &&
            a->value_case == ARBOR_CHAKRA__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
            return a->string_val;
    }
    return NULL;
}

static long intern(struct ck *c, const char *name)
{
    for (uint32_t i = 0; i < c->n_names; i++)
        if (strcmp(c->names[i], name) == 0) return i;
    if (c->n_names == c->cap_names) {
        uint32_t nc = c->cap_names ? c->cap_names * 2 : 8;
        char **nn = arb_realloc(c->names, nc * sizeof *nn);
        if (!nn) return ARB_ENOMEM;
        c->names = nn;
        c->cap_names = nc;
    }
    size_t len = strlen(name) + 1;
    char *d = arb_malloc(len);
    if (!d) return ARB_ENOMEM;
    memcpy(d, name, len);
    c->names[c->n_names] = d;
    return c->n_names++;
}

/* The map from the published CollectiveCommType to ours; -1: not run. */
static int coll_of(uint64_t v)
{
    switch (v) {
    case ARBOR_CHAKRA__COLLECTIVE_COMM_TYPE__ALL_REDUCE:
        return ARB_COLL_ALLREDUCE;
    case ARBOR_CHAKRA__COLLECTIVE_COMM_TYPE__REDUCE:
        return ARB_COLL_REDUCE;
    case ARBOR_CHAKRA__COLLECTIVE_COMM_TYPE__ALL_GATHER:
        return ARB_COLL_ALLGATHER;
    case ARBOR_CHAKRA__COLLECTIVE_COMM_TYPE__BROADCAST:
        return ARB_COLL_BROADCAST;
    case ARBOR_CHAKRA__COLLECTIVE_COMM_TYPE__ALL_TO_ALL:
        return ARB_COLL_ALLTOALL;
    case ARBOR_CHAKRA__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER:
    case ARBOR_CHAKRA__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER_BLOCK:
        return ARB_COLL_REDUCESCATTER;
    case ARBOR_CHAKRA__COLLECTIVE_COMM_TYPE__BARRIER:
        return ARB_COLL_BARRIER;
    default:
        return -1;
    }
}

/* One Node message into a trace node of rank r. */
static int take_node(struct ck *c, uint32_t r, uint32_t rec, const ArborChakra__Node *m)
{
    arb_trace *t = c->t;
    char rule[160];
    int type = (int)m->type;
    struct tr_node *n = tr_add_node(t, r);
    if (!n) return arb_errf(c->err, c->errlen, ARB_ENOMEM, "too many nodes (out of memory)");
    n->id = m->id;
    n->where = rec;
    n->peer = TR_NONE;
    uint64_t v;
    int k;
    switch (type) {
    case ARBOR_CHAKRA__NODE_TYPE__METADATA_NODE:
    case ARBOR_CHAKRA__NODE_TYPE__MEM_LOAD_NODE:
    case ARBOR_CHAKRA__NODE_TYPE__MEM_STORE_NODE:
        n->op = TR_NOP;
        break;
    case ARBOR_CHAKRA__NODE_TYPE__COMP_NODE:
        n->op = TR_COMP;
        if (m->duration_micros > UINT64_MAX / ARB_PS_PER_US / 2)
            return node_fail(c, r, m->id, rec, "duration_micros is too large");
        n->dur = m->duration_micros * ARB_PS_PER_US;
        break;
    case ARBOR_CHAKRA__NODE_TYPE__COMM_COLL_NODE: {
        n->op = TR_COLL;
        k = attr_uint(m, "comm_type", &v);
        if (k <= 0)
            return node_fail(c, r, m->id, rec,
                             k == 0 ? "COMM_COLL_NODE without the attribute comm_type"
                                    : "comm_type is not a non-negative integer");
        int coll = coll_of(v);
        if (coll < 0) {
            snprintf(rule, sizeof rule,
                     "comm_type %llu is not a collective Arbor runs (GATHER and SCATTER are not)",
                     (unsigned long long)v);
            return node_fail(c, r, m->id, rec, rule);
        }
        n->coll = (uint8_t)coll;
        k = attr_uint(m, "comm_size", &n->bytes);
        if (k <= 0)
            return node_fail(c, r, m->id, rec,
                             k == 0 ? "COMM_COLL_NODE without the attribute comm_size"
                                    : "comm_size is not a non-negative integer");
        if (n->bytes == 0 && coll != ARB_COLL_BARRIER)
            return node_fail(c, r, m->id, rec, "comm_size 0 (only a barrier carries no data)");
        const char *pg = attr_str(m, "pg_name");
        long g = intern(c, pg ? pg : "");
        if (g < 0) return arb_errf(c->err, c->errlen, ARB_ENOMEM, "out of memory");
        n->group = (uint32_t)g; /* a name index until the groups are made */
        break;
    }
    case ARBOR_CHAKRA__NODE_TYPE__COMM_SEND_NODE:
    case ARBOR_CHAKRA__NODE_TYPE__COMM_RECV_NODE: {
        int send = type == ARBOR_CHAKRA__NODE_TYPE__COMM_SEND_NODE;
        const char *peer = send ? "comm_dst" : "comm_src";
        n->op = send ? TR_SEND : TR_RECV;
        k = attr_uint(m, peer, &v);
        if (k <= 0 || v >= t->n_ranks || v == r) {
            snprintf(rule, sizeof rule, "%s %s", peer,
                     k == 0   ? "is missing"
                     : k < 0  ? "is not a non-negative integer"
                     : v == r ? "is the node's own rank"
                              : "is not below the trace's ranks");
            return node_fail(c, r, m->id, rec, rule);
        }
        n->peer = (uint32_t)v;
        k = attr_uint(m, "comm_size", &n->bytes);
        if (k <= 0 || n->bytes == 0)
            return node_fail(c, r, m->id, rec, "comm_size is missing or not a positive integer");
        k = attr_uint(m, "comm_tag", &v);
        if (k < 0 || (k == 1 && v > UINT32_MAX))
            return node_fail(c, r, m->id, rec, "comm_tag is not a 32-bit unsigned integer");
        n->tag = k == 1 ? (uint32_t)v : 0;
        break;
    }
    default:
        snprintf(rule, sizeof rule, "node type %d is not one Arbor replays", type);
        return node_fail(c, r, m->id, rec, rule);
    }
    for (size_t i = 0; i < m->n_ctrl_deps; i++)
        if (tr_add_dep(t, r, m->ctrl_deps[i]) < 0)
            return arb_errf(c->err, c->errlen, ARB_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->n_data_deps; i++)
        if (tr_add_dep(t, r, m->data_deps[i]) < 0)
            return arb_errf(c->err, c->errlen, ARB_ENOMEM, "out of memory");
    return 0;
}

static int read_rank(struct ck *c, uint32_t r, const uint8_t *buf, size_t len)
{
    char rule[160];
    size_t pos = 0;
    uint32_t rec = 0;
    if (len == 0) return rec_fail(c, r, 0, 0, "empty file: no GlobalMetadata record");
    while (pos < len) {
        size_t at = pos;
        uint64_t n;
        if (varint(buf, len, &pos, &n) < 0)
            return rec_fail(c, r, rec, at, "truncated or malformed length prefix");
        if (n > len - pos) {
            snprintf(rule, sizeof rule,
                     "length %llu runs past the end of the file (%zu bytes left)",
                     (unsigned long long)n, len - pos);
            return rec_fail(c, r, rec, at, rule);
        }
        if (rec == 0) {
            ArborChakra__GlobalMetadata *gm =
                arbor_chakra__global_metadata__unpack(NULL, (size_t)n, buf + pos);
            if (!gm) return rec_fail(c, r, rec, at, "not a valid GlobalMetadata message");
            arbor_chakra__global_metadata__free_unpacked(gm, NULL);
        } else {
            ArborChakra__Node *m = arbor_chakra__node__unpack(NULL, (size_t)n, buf + pos);
            if (!m) return rec_fail(c, r, rec, at, "not a valid Node message");
            int rc = take_node(c, r, rec, m);
            arbor_chakra__node__free_unpacked(m, NULL);
            if (rc < 0) return rc;
        }
        pos += (size_t)n;
        rec++;
    }
    return 0;
}

struct member {
    uint32_t name, rank;
};

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* pg_name indices into groups: the ranks calling each name, in order. */
static int make_groups(struct ck *c)
{
    arb_trace *t = c->t;
    uint64_t total = 0;
    for (uint32_t r = 0; r < t->n_ranks; r++)
        for (uint32_t i = 0; i < t->rk[r].n; i++)
            total += t->rk[r].nodes[i].op == TR_COLL;
    struct member *mb = arb_malloc(((size_t)total + 1) * sizeof *mb);
    uint32_t *map = arb_malloc(((size_t)c->n_names + 1) * sizeof *map);
    uint32_t *rk = arb_malloc(((size_t)t->n_ranks + 1) * sizeof *rk);
    int rc = !mb || !map || !rk ? ARB_ENOMEM : 0;
    size_t k = 0;
    for (uint32_t r = 0; rc == 0 && r < t->n_ranks; r++)
        for (uint32_t i = 0; i < t->rk[r].n; i++)
            if (t->rk[r].nodes[i].op == TR_COLL)
                mb[k++] = (struct member){t->rk[r].nodes[i].group, r};
    if (rc == 0) qsort(mb, k, sizeof *mb, cmp_member);
    for (size_t a = 0; rc == 0 && a < k;) {
        size_t b = a;
        uint32_t n = 0;
        for (; b < k && mb[b].name == mb[a].name; b++)
            if (n == 0 || rk[n - 1] != mb[b].rank) rk[n++] = mb[b].rank;
        long g = tr_group(t, rk, n, c->names[mb[a].name]);
        if (g < 0)
            rc = ARB_ENOMEM;
        else
            map[mb[a].name] = (uint32_t)g;
        a = b;
    }
    for (uint32_t r = 0; rc == 0 && r < t->n_ranks; r++)
        for (uint32_t i = 0; i < t->rk[r].n; i++)
            if (t->rk[r].nodes[i].op == TR_COLL)
                t->rk[r].nodes[i].group = map[t->rk[r].nodes[i].group];
    arb_free(mb);
    arb_free(map);
    arb_free(rk);
    return rc < 0 ? arb_errf(c->err, c->errlen, rc, "out of memory") : 0;
}

int arb_trace_parse_chakra(arb_trace **out, const uint8_t *const *bufs, const size_t *lens,
                           uint32_t n_ranks, const char *name, char *err, size_t errlen)
{
    *out = NULL;
    if (n_ranks == 0 || n_ranks > TR_MAX_RANKS)
        return arb_errf(err, errlen, ARB_EPARSE, "%s: %u rank files (1..%u)",
                        name ? name : "(trace)", n_ranks, TR_MAX_RANKS);
    struct ck c;
    memset(&c, 0, sizeof c);
    c.err = err;
    c.errlen = errlen;
    int rc = tr_new(&c.t, name, n_ranks, 1);
    if (rc < 0) return arb_errf(err, errlen, rc, "out of memory");
    c.prefix = c.t->name;
    for (uint32_t r = 0; rc == 0 && r < n_ranks; r++)
        rc = read_rank(&c, r, bufs[r], lens[r]);
    if (rc == 0) rc = make_groups(&c);
    if (rc == 0) rc = tr_finish(c.t, err, errlen);
    for (uint32_t i = 0; i < c.n_names; i++)
        arb_free(c.names[i]);
    arb_free(c.names);
    if (rc < 0) {
        arb_trace_free(c.t);
        return rc;
    }
    *out = c.t;
    return 0;
}

#else /* no protobuf-c */

int arb_trace_chakra_available(void)
{
    return 0;
}

int arb_trace_parse_chakra(arb_trace **out, const uint8_t *const *bufs, const size_t *lens,
                           uint32_t n_ranks, const char *name, char *err, size_t errlen)
{
    (void)bufs;
    (void)lens;
    (void)n_ranks;
    *out = NULL;
    return arb_errf(err, errlen, ARB_EINVAL,
                    "%s: Chakra traces need protobuf-c: this arbor was built without it "
                    "(install libprotobuf-c-dev and protobuf-c-compiler, then rebuild)",
                    name ? name : "(trace)");
}

#endif
