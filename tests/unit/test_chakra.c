/* Chakra execution traces: records encoded here by hand (a varint writer
 * and the published field numbers of Chakra's et_def.proto), so the reader
 * is checked against the format, not against protobuf-c's encoder. A trace
 * replays exactly as the same DAG in the text format; every framing error
 * and rule gives one line naming the file, record and rule. Skipped (exit
 * 77) when arbor is built without protobuf-c. */
#include "arbor/route.h"
#include "arbor/sim.h"
#include "arbor/topo.h"
#include "arbor/workload.h"
#include "testkit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a protobuf writer ------------------------------------------------------ */

struct buf {
    uint8_t b[4096];
    size_t n;
};

static void put_raw(struct buf *x, const void *p, size_t n)
{
    memcpy(x->b + x->n, p, n);
    x->n += n;
}

static void put_varint(struct buf *x, uint64_t v)
{
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        x->b[x->n++] = c | (v ? 0x80 : 0);
    } while (v);
}

static void put_u(struct buf *x, unsigned field, uint64_t v)
{
    put_varint(x, (uint64_t)field << 3);
    put_varint(x, v);
}

static void put_len(struct buf *x, unsigned field, const void *p, size_t n)
{
    put_varint(x, (uint64_t)field << 3 | 2);
    put_varint(x, n);
    put_raw(x, p, n);
}

static void put_str(struct buf *x, unsigned field, const char *s)
{
    put_len(x, field, s, strlen(s));
}

/* AttributeProto: name = 1; int64_val = 9, uint64_val = 13, string_val = 29. */
static void attr_int(struct buf *node, const char *name, unsigned field, uint64_t v)
{
    struct buf a = {.n = 0};
    put_str(&a, 1, name);
    put_u(&a, field, v);
    put_len(node, 10, a.b, a.n);
}

static void attr_str(struct buf *node, const char *name, const char *v)
{
    struct buf a = {.n = 0};
    put_str(&a, 1, name);
    put_str(&a, 29, v);
    put_len(node, 10, a.b, a.n);
}

enum { META = 1, COMP = 4, SEND = 5, RECV = 6, COLL = 7 };

/* Node: id = 1, name = 2, type = 3, ctrl_deps = 4 (unpacked here), data_deps = 5
 * (packed), duration_micros = 7. */
static void node(struct buf *n, uint64_t id, int type, uint64_t data_dep, uint64_t ctrl_dep,
                 uint64_t dur)
{
    n->n = 0;
    put_u(n, 1, id);
    put_str(n, 2, "n");
    put_u(n, 3, (uint64_t)type);
    if (ctrl_dep) put_u(n, 4, ctrl_dep);
    if (data_dep) {
        struct buf d = {.n = 0};
        put_varint(&d, data_dep);
        put_len(n, 5, d.b, d.n);
    }
    if (dur) put_u(n, 7, dur);
}

static void record(struct buf *file, const struct buf *msg)
{
    put_varint(file, msg->n);
    put_raw(file, msg->b, msg->n);
}

static void meta(struct buf *file)
{
    struct buf m = {.n = 0};
    put_str(&m, 1, "0.0.4");
    file->n = 0;
    record(file, &m);
}

static int parse2(arb_trace **t, const struct buf *f0, const struct buf *f1, char *err,
                  size_t errlen)
{
    const uint8_t *bufs[2] = {f0->b, f1 ? f1->b : NULL};
    size_t lens[2] = {f0->n, f1 ? f1->n : 0};
    return arb_trace_parse_chakra(t, bufs, lens, f1 ? 2 : 1, "x", err, errlen);
}

/* ---- replay (as test_trace.c) ---------------------------------------------------- */

static uint32_t route_fn(void *ctx, const arb_sim *sim, uint32_t node_, uint32_t in_port,
                         const arb_sim_pkt_info *f, arb_time now)
{
    (void)sim;
    (void)now;
    arb_route_key k = {f->src, f->dst, f->sport, f->dport, f->qp, f->proto};
    return arb_route_next(ctx, node_, &k, in_port);
}

struct run {
    arb_topo *t;
    arb_route *r;
    arb_sim *s;
    arb_workload *w;
    arb_workload_result res;
};

static int replay(struct run *x, arb_trace *tr)
{
    memset(x, 0, sizeof *x);
    char err[256];
    if (arb_topo_new(&x->t, "star:2", NULL, err, sizeof err) < 0 ||
        arb_route_new(&x->r, x->t, "ecmp", NULL, err, sizeof err) < 0 ||
        arb_workload_new_iteration(&x->w, tr, NULL, 2, NULL, err, sizeof err) < 0)
        return -1;
    arb_sim_config cfg;
    arb_sim_config_default(&cfg);
    cfg.route = route_fn;
    cfg.route_ctx = x->r;
    cfg.on_flow_done = arb_workload_on_flow_done;
    cfg.done_ctx = x->w;
    cfg.on_flow_sent = arb_workload_on_flow_sent;
    cfg.sent_ctx = x->w;
    if (arb_sim_new(&x->s, x->t, &cfg) < 0 || arb_workload_start(x->w, x->s) < 0) return -1;
    for (;;) {
        arb_time at = arb_workload_next_timer(x->w);
        if (arb_sim_run(x->s, at == ARB_TIME_NEVER ? ARB_TIME_NEVER - 1 : at) < 0) return -1;
        if (arb_workload_next_timer(x->w) < at) continue;
        if (at != ARB_TIME_NEVER)
            arb_workload_timer(x->w, x->s, at);
        else if (arb_workload_next_timer(x->w) == ARB_TIME_NEVER)
            break;
    }
    arb_workload_get_result(x->w, &x->res);
    return 0;
}

static void run_free(struct run *x)
{
    arb_workload_free(x->w);
    arb_sim_free(x->s);
    arb_route_free(x->r);
    arb_topo_free(x->t);
}

/* Rank 0: compute 50 us, send 1 MiB to rank 1 (tag 3), then an AllReduce of
 * 64 KiB; rank 1: receive, compute 10 us, a metadata no-op, the AllReduce. */
static void good_trace(struct buf *f0, struct buf *f1)
{
    struct buf n;
    meta(f0);
    node(&n, 1, COMP, 0, 0, 50);
    record(f0, &n);
    node(&n, 2, SEND, 1, 0, 0);
    attr_int(&n, "comm_dst", 9, 1);
    attr_int(&n, "comm_tag", 9, 3);
    attr_int(&n, "comm_size", 13, 1 << 20); /* uint64_val */
    record(f0, &n);
    node(&n, 3, COLL, 0, 2, 0);
    attr_int(&n, "comm_type", 9, 0); /* ALL_REDUCE */
    attr_int(&n, "comm_size", 9, 65536);
    attr_str(&n, "pg_name", "world");
    record(f0, &n);
    meta(f1);
    node(&n, 5, RECV, 0, 0, 0);
    attr_int(&n, "comm_src", 9, 0);
    attr_int(&n, "comm_tag", 9, 3);
    attr_int(&n, "comm_size", 9, 1 << 20);
    record(f1, &n);
    node(&n, 6, COMP, 5, 0, 10);
    record(f1, &n);
    node(&n, 7, META, 6, 0, 0);
    record(f1, &n);
    node(&n, 8, COLL, 7, 0, 0);
    attr_int(&n, "comm_type", 9, 0);
    attr_int(&n, "comm_size", 9, 65536);
    attr_str(&n, "pg_name", "world");
    record(f1, &n);
}

static const char *good_text = "arbor-trace 1\nranks 2\n"
                               "0 1 comp 50us\n0 2 send 1MiB to=1 tag=3 deps=1\n"
                               "0 3 coll allreduce 64KiB deps=2\n"
                               "1 5 recv 1MiB from=0 tag=3\n1 6 comp 10us deps=5\n"
                               "1 8 coll allreduce 64KiB deps=6\n";

TEST(same_as_text)
{
    struct buf f0, f1;
    good_trace(&f0, &f1);
    char err[512];
    arb_trace *tc = NULL, *tt = NULL;
    CHECK_EQ_I(parse2(&tc, &f0, &f1, err, sizeof err), 0);
    if (!tc) {
        printf("  %s\n", err);
        return;
    }
    CHECK_EQ_U(arb_trace_ranks(tc), 2);
    CHECK_EQ_U(arb_trace_nodes(tc), 7);
    CHECK_EQ_I(arb_trace_parse_text(&tt, good_text, strlen(good_text), "t", err, sizeof err), 0);
    struct run a, b;
    CHECK_EQ_I(replay(&a, tc), 0);
    CHECK_EQ_I(replay(&b, tt), 0);
    CHECK(a.res.done && b.res.done);
    CHECK_EQ_U(a.res.collectives, 1);
    CHECK_EQ_U(a.res.p2p, 1);
    CHECK_EQ_U(a.res.iter_time, b.res.iter_time);
    CHECK(a.res.iter_time > 50 * ARB_PS_PER_US + 10 * ARB_PS_PER_US);
    for (uint32_t r = 0; r < 2; r++) {
        arb_iter_rank x, y;
        arb_workload_iter_rank(a.w, r, &x);
        arb_workload_iter_rank(b.w, r, &y);
        CHECK_EQ_U(x.finish, y.finish);
        CHECK_EQ_U(x.exposed, y.exposed);
        CHECK_EQ_U(x.compute, y.compute);
    }
    run_free(&a);
    run_free(&b);
}

TEST(framing_errors)
{
    static const struct {
        uint8_t bytes[8];
        size_t n;
        const char *want;
    } bad[] = {
        {{0}, 0, "x.0.et: record 0 (byte 0): empty file: no GlobalMetadata record"},
        {{0x80}, 1, "x.0.et: record 0 (byte 0): truncated or malformed length prefix"},
        {{0x05, 0x0a},
         2,
         "x.0.et: record 0 (byte 0): length 5 runs past the end of the file (1 "
         "bytes left)"},
        {{0x02, 0x0a, 0x05}, 3, "x.0.et: record 0 (byte 0): not a valid GlobalMetadata message"},
        {{0x00, 0x01, 0x08}, 3, "x.0.et: record 1 (byte 1): not a valid Node message"},
        {{0x00, 0x02, 0x18, 0x80}, 4, "x.0.et: record 1 (byte 1): not a valid Node message"},
    };
    char err[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct buf f = {.n = 0};
        put_raw(&f, bad[i].bytes, bad[i].n);
        arb_trace *t = NULL;
        int rc = parse2(&t, &f, NULL, err, sizeof err);
        if (rc != ARB_EPARSE || strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
            TESTKIT_REPORT("case %zu: rc %d, got '%s', want '%s'", i, rc, err, bad[i].want);
        CHECK(t == NULL);
    }
    /* every truncation of a good file is refused or parses, never crashes */
    struct buf f0, f1;
    good_trace(&f0, &f1);
    for (size_t cut = 0; cut < f0.n; cut++) {
        struct buf g = f0;
        g.n = cut;
        arb_trace *t = NULL;
        int rc = parse2(&t, &g, &f1, err, sizeof err);
        CHECK(rc == ARB_EPARSE || rc == 0);
        CHECK(rc < 0 || t != NULL);
        if (rc < 0) CHECK(strchr(err, '\n') == NULL && strncmp(err, "x.", 2) == 0);
        arb_trace_free(t);
    }
}

/* One node record after the metadata: the rule it breaks. */
TEST(rule_errors)
{
    char err[512];
    struct buf f, f1, n;
    struct {
        const char *want;
    } want[] = {
        {"x.0.et: node 3 (record 1): COMM_COLL_NODE without the attribute comm_type"},
        {"x.0.et: node 3 (record 1): comm_type 3 is not a collective Arbor runs"},
        {"x.0.et: node 3 (record 1): COMM_COLL_NODE without the attribute comm_size"},
        {"x.0.et: node 3 (record 1): comm_dst is not below the trace's ranks"},
        {"x.0.et: node 3 (record 1): comm_dst is the node's own rank"},
        {"x.0.et: node 3 (record 1): node type 9 is not one Arbor replays"},
        {"x.0.et: node 3 (record 1): node type 0 is not one Arbor replays"},
        {"x.0.et: node 3 (record 1): dependency 9 is not a node of rank 0"},
        {"x.0.et: node 3 (record 1): comm_size is missing or not a positive integer"},
        {"x.0.et: node 3 (record 1): comm_size is not a non-negative integer"},
        {"x.0.et: node 3 (record 1): comm_tag is not a 32-bit unsigned integer"},
        {"x.0.et: node 3 (record 1): duration_micros is too large"},
        {"x.0.et: node 3 (record 1): comm_src is missing"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        meta(&f);
        switch (i) {
        case 0:
            node(&n, 3, COLL, 0, 0, 0);
            attr_int(&n, "comm_size", 9, 8);
            break;
        case 1:
            node(&n, 3, COLL, 0, 0, 0);
            attr_int(&n, "comm_type", 9, 3); /* GATHER */
            attr_int(&n, "comm_size", 9, 8);
            break;
        case 2:
            node(&n, 3, COLL, 0, 0, 0);
            attr_int(&n, "comm_type", 9, 0);
            break;
        case 3:
            node(&n, 3, SEND, 0, 0, 0);
            attr_int(&n, "comm_dst", 9, 5);
            attr_int(&n, "comm_size", 9, 8);
            break;
        case 4:
            node(&n, 3, SEND, 0, 0, 0);
            attr_int(&n, "comm_dst", 9, 0);
            attr_int(&n, "comm_size", 9, 8);
            break;
        case 5:
            node(&n, 3, 9, 0, 0, 0);
            break;
        case 6:
            node(&n, 3, 0, 0, 0, 0);
            break;
        case 7:
            node(&n, 3, COMP, 9, 0, 5);
            break;
        case 8:
            node(&n, 3, RECV, 0, 0, 0);
            attr_int(&n, "comm_src", 9, 1);
            break;
        case 9: /* int64_val -1: ten bytes of varint */
            node(&n, 3, COLL, 0, 0, 0);
            attr_int(&n, "comm_type", 9, 0);
            attr_int(&n, "comm_size", 9, UINT64_MAX);
            break;
        case 10:
            node(&n, 3, SEND, 0, 0, 0);
            attr_int(&n, "comm_dst", 9, 1);
            attr_int(&n, "comm_size", 9, 8);
            attr_int(&n, "comm_tag", 13, 1ull << 33);
            break;
        case 11:
            node(&n, 3, COMP, 0, 0, UINT64_MAX / 2);
            break;
        case 12:
            node(&n, 3, RECV, 0, 0, 0);
            attr_int(&n, "comm_size", 9, 8);
            break;
        }
        record(&f, &n);
        meta(&f1);
        arb_trace *t = NULL;
        int rc = parse2(&t, &f, &f1, err, sizeof err);
        if (rc != ARB_EPARSE || strncmp(err, want[i].want, strlen(want[i].want)) != 0)
            TESTKIT_REPORT("case %zu: rc %d, got '%s', want '%s'", i, rc, err, want[i].want);
        CHECK(t == NULL);
    }
    /* a cycle, a duplicate id, a mismatched collective, an unmatched send */
    meta(&f);
    node(&n, 1, COMP, 2, 0, 1);
    record(&f, &n);
    node(&n, 2, COMP, 0, 1, 1);
    record(&f, &n);
    meta(&f1);
    arb_trace *t = NULL;
    CHECK_EQ_I(parse2(&t, &f, &f1, err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "x.0.et: node 1 (record 1): the dependencies form a cycle") != NULL);
    meta(&f);
    node(&n, 1, COMP, 0, 0, 1);
    record(&f, &n);
    record(&f, &n);
    CHECK_EQ_I(parse2(&t, &f, &f1, err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "x.0.et: node 1 (record 2): node id 1 is used twice on rank 0") != NULL);
    /* rank 1 calls the group's collective twice, rank 0 once */
    meta(&f);
    meta(&f1);
    for (uint64_t id = 1; id <= 2; id++) {
        node(&n, id, COLL, id - 1, 0, 0);
        attr_int(&n, "comm_type", 9, 9); /* BARRIER */
        attr_int(&n, "comm_size", 9, 0);
        attr_str(&n, "pg_name", "world");
        if (id == 1) record(&f, &n);
        record(&f1, &n);
    }
    CHECK_EQ_I(parse2(&t, &f, &f1, err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "x.1.et: node 2 (record 2): collective call 1 of its group has no match "
                      "on rank 0") != NULL);
    meta(&f1);
    meta(&f);
    node(&n, 1, SEND, 0, 0, 0);
    attr_int(&n, "comm_dst", 9, 1);
    attr_int(&n, "comm_size", 9, 8);
    record(&f, &n);
    CHECK_EQ_I(parse2(&t, &f, &f1, err, sizeof err), ARB_EPARSE);
    CHECK(strstr(err, "x.0.et: node 1 (record 1): no matching recv (0 -> 1, tag 0)") != NULL);
}

/* Files PREFIX.R.et: the ranks are the files that exist. */
TEST(load_files)
{
    char dir[] = "/tmp/arb_chakra_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    struct buf f0, f1;
    good_trace(&f0, &f1);
    char path[256];
    const struct buf *fs[2] = {&f0, &f1};
    for (int r = 0; r < 2; r++) {
        snprintf(path, sizeof path, "%s/step.%d.et", dir, r);
        FILE *fp = fopen(path, "wb");
        CHECK(fp != NULL);
        if (!fp) return;
        fwrite(fs[r]->b, 1, fs[r]->n, fp);
        fclose(fp);
    }
    char err[512];
    arb_trace *t = NULL;
    snprintf(path, sizeof path, "%s/step.0.et", dir);
    CHECK_EQ_I(arb_trace_load(&t, path, ARB_TRACE_AUTO, err, sizeof err), 0);
    CHECK(t && arb_trace_ranks(t) == 2);
    arb_trace_free(t);
    snprintf(path, sizeof path, "%s/step.1.et", dir);
    CHECK_EQ_I(arb_trace_load(&t, path, ARB_TRACE_AUTO, err, sizeof err), ARB_EINVAL);
    CHECK(strstr(err, "PREFIX.0.et") != NULL);
    for (int r = 0; r < 2; r++) {
        snprintf(path, sizeof path, "%s/step.%d.et", dir, r);
        unlink(path);
    }
    rmdir(dir);
}

int main(void)
{
    if (!arb_trace_chakra_available()) {
        char err[256];
        arb_trace *t = NULL;
        uint8_t b = 0;
        const uint8_t *bufs[1] = {&b};
        size_t lens[1] = {1};
        int rc = arb_trace_parse_chakra(&t, bufs, lens, 1, "x", err, sizeof err);
        printf("skipped: built without protobuf-c (rc %d: %s)\n", rc, err);
        return 77;
    }
    RUN(same_as_text);
    RUN(framing_errors);
    RUN(rule_errors);
    RUN(load_files);
    return testkit_done();
}
