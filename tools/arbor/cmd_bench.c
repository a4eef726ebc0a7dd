/*
 * arbor bench COLLECTIVE: the nccl-tests table over the runtime, run as
 * every rank of a job (arbor run -n N -- arbor bench allreduce). Rank 0
 * prints.
 */
#define _GNU_SOURCE
#include "arbor/plan.h"
#include "arbor/reduce.h"
#include "arbor/rt.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char bench_usage[] =
    "usage: arbor bench COLLECTIVE [-b BYTES] [-e BYTES] [-f FACTOR] [-n ITERS]\n"
    "                   [-w WARMUP] [-d DTYPE] [-o OP] [-r ROOT] [-c] [-s] [-B]\n"
    "                   [--record FILE]\n"
    "\n"
    "Run as every rank of a job (arbor run -n 4 -- arbor bench allreduce): time\n"
    "COLLECTIVE (allreduce, reduce, reducescatter, broadcast, allgather, barrier)\n"
    "over sizes from -b to -e bytes (default 1K to 64M, x2), and print on rank 0\n"
    "the nccl-tests table: size, count, type, redop, root, time (us, the slowest\n"
    "rank's mean), algbw = size / time, busbw = algbw x nccl-tests' factor\n"
    "(allreduce 2(n-1)/n; reducescatter, allgather (n-1)/n; others 1), #wrong.\n"
    "size is the whole buffer, as in nccl-tests (allgather: the output), rounded\n"
    "down to whole elements (allgather, reducescatter: whole elements per rank),\n"
    "which the heading then says; a size below one element (per rank) is refused.\n"
    "\n"
    "  -b BYTES   the first size (default 1K); -e BYTES the last (default 64M),\n"
    "             at most 4G: a number with an optional unit, K, M, G binary as\n"
    "             in nccl-tests (also KiB, MiB, GiB), KB, MB, GB decimal, B\n"
    "             (1.5M = 1572864; docs/scenarios.md, Sizes)\n"
    "  -f FACTOR  each size is the one before times FACTOR (default 2)\n"
    "  -n ITERS   timed iterations per size (default 20); -w WARMUP untimed (5)\n"
    "  -d DTYPE   f16, bf16, f32 (default), f64, i32, i64, or as the table\n"
    "             names them (nccl-tests' -d): half, bfloat16, float, double,\n"
    "             int32, int64\n"
    "  -o OP      sum (default), max, min: allreduce, reduce, reducescatter only\n"
    "  -r ROOT    root of reduce and broadcast (default 0)\n"
    "  -c         check every call's result, warm-up and timed, against a\n"
    "             reference (#wrong: wrong elements over calls and ranks; else N/A)\n"
    "  -s         print each rank's packet counters on stderr at the end\n"
    "  -B         a barrier before every call, not timed (as bench/mpi_allreduce.c\n"
    "             times MPI_Allreduce); without it the calls run back to back\n"
    "  --record FILE  write this rank's timed calls to FILE, one line each\n"
    "             (call SIZE START_NS END_NS, CLOCK_MONOTONIC), then its wrong\n"
    "             elements and counters (arbor lab reads it)\n"
    "\n"
    "The communicator comes from the ARBOR_* variables arbor run sets (or set\n"
    "them as docs/runtime.md describes); without any of ARBOR_RANK, ARBOR_SIZE,\n"
    "ARBOR_SWITCH, ARBOR_SECRET it says how to run it and exits 2.\n"
    "Exit status: 0 done, 1 a collective failed or a result was wrong, 2 bad usage.\n";

#define BENCH_MAX_BYTES (4ull << 30) /* -b, -e: at most 4G */

static const char *const nccl_type[ARB_DTYPE_COUNT] = {"half",   "bfloat16", "float",
                                                       "double", "int32",    "int64"};

/* -d: a dtype's name, or the name the table gives it (nccl-tests'), in
 * any case; -1 for neither. */
static int parse_dtype(const char *v)
{
    int dt = arb_dtype_parse(v);
    for (int i = 0; dt < 0 && i < ARB_DTYPE_COUNT; i++)
        if (strcasecmp(v, nccl_type[i]) == 0) dt = i;
    return dt;
}

/* A usage error (the same on every rank): printed by rank 0 only, so that
 * `arbor run -n 8 -- arbor bench ...` shows it once; every rank exits 2. */
static int usage_error(const char *fmt, ...) ARB_PRINTF(1, 2);
static int usage_error(const char *fmt, ...)
{
    const char *r = getenv("ARBOR_RANK");
    if (r && strcmp(r, "0") != 0) return CLI_EXIT_USAGE;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cli_error("bench", "%s", msg);
}

/* -b, -e: a size (arb_parse_size) of at most 4G: 0, or an ARB_E* code. */
static int parse_size(const char *s, uint64_t *out)
{
    return arb_parse_size(s, strlen(s), BENCH_MAX_BYTES, out);
}

/* Started outside a job: none of the variables arbor run gives its ranks. */
static int outside_job(void)
{
    static const char *const vars[] = {"ARBOR_RANK", "ARBOR_SIZE", "ARBOR_SWITCH", "ARBOR_SECRET"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 0;
    return 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --record: the rank's last lines, after its calls: wrong elements, the
 * counters a lab run reports, and how it ended. */
static void record_end(FILE *f, const arb_rt_comm *c, uint64_t wrong, int rc)
{
    if (!f) return;
    arb_rt_stats st;
    arb_rt_get_stats(c, &st);
    fprintf(f, "wrong %llu\n", (unsigned long long)wrong);
    fprintf(f,
            "stats tx_pkts=%llu rx_pkts=%llu tx_bytes=%llu rx_bytes=%llu credits=%llu "
            "retries=%llu spurious=%llu repair_credits=%llu tail_replays=%llu rejoins=%llu "
            "keepalive_joins=%llu send_errors=%llu window=%u\n",
            (unsigned long long)st.tx_pkts, (unsigned long long)st.rx_pkts,
            (unsigned long long)st.tx_bytes, (unsigned long long)st.rx_bytes,
            (unsigned long long)st.credits, (unsigned long long)st.retries,
            (unsigned long long)st.spurious, (unsigned long long)st.repair_credits,
            (unsigned long long)st.tail_replays, (unsigned long long)st.rejoins,
            (unsigned long long)st.keepalive_joins, (unsigned long long)st.send_errors,
            (unsigned)st.window);
    fprintf(f, "status %s\n", rc < 0 ? arb_rt_errmsg(c) : "ok");
}

/* Rank r's element i: a small integer, exact in every dtype. */
static double val(uint32_t r, uint64_t i)
{
    return (double)((7u * r + 13u * (uint32_t)(i % 17u)) % 17u) - 8;
}

static double ref(arb_op op, uint32_t n, uint64_t i)
{
    double acc = val(0, i);
    for (uint32_t r = 1; r < n; r++) {
        double x = val(r, i);
        acc = op == ARB_OP_SUM   ? acc + x
              : op == ARB_OP_MAX ? (x > acc ? x : acc)
                                 : (x < acc ? x : acc);
    }
    return acc;
}

struct bench {
    arb_rt_comm *c;
    arb_coll coll;
    arb_dtype dt;
    arb_op op;
    uint32_t root, n, me;
    uint8_t *send, *recv;
};

/* One call of `count` total elements (allgather, reducescatter: the whole
 * buffer; the per-rank block is count / n). */
static int one(struct bench *b, size_t count)
{
    size_t blk = count / b->n;
    switch (b->coll) {
    case ARB_COLL_ALLREDUCE:
        return arb_rt_allreduce(b->c, b->send, b->recv, count, b->dt, b->op);
    case ARB_COLL_REDUCE:
        return arb_rt_reduce(b->c, b->send, b->recv, count, b->dt, b->op, b->root);
    case ARB_COLL_REDUCESCATTER:
        return arb_rt_reducescatter(b->c, b->send, b->recv, blk, b->dt, b->op);
    case ARB_COLL_BROADCAST:
        return arb_rt_broadcast(b->c, b->me == b->root ? b->send : b->recv, count, b->dt, b->root);
    case ARB_COLL_ALLGATHER:
        return arb_rt_allgather(b->c, b->send, b->recv, blk, b->dt);
    default:
        return arb_rt_barrier(b->c);
    }
}

/* The communicator's warnings (ARBOR_IO=uring refused by the kernel),
 * one line each on stderr. */
static void warn_line(void *user, arb_log_level level, const char *msg)
{
    (void)user;
    if (level == ARB_LOG_WARN) fprintf(stderr, "arbor bench: warning: %s\n", msg);
}

static void fill_inputs(struct bench *b, size_t count)
{
    size_t es = arb_dtype_size(b->dt);
    size_t blk = count / b->n;
    size_t n_in = b->coll == ARB_COLL_ALLGATHER ? blk : count;
    for (size_t i = 0; i < n_in; i++)
        arb_elem_put(b->send + i * es, b->dt, val(b->me, i));
    memset(b->recv, 0x55, count * es);
}

/* Wrong elements of this rank's output after one call. */
static uint64_t check(const struct bench *b, size_t count)
{
    size_t es = arb_dtype_size(b->dt);
    size_t blk = count / b->n;
    uint64_t wrong = 0;
    switch (b->coll) {
    case ARB_COLL_ALLREDUCE:
        for (size_t i = 0; i < count; i++)
            wrong += arb_elem_get(b->recv + i * es, b->dt) != ref(b->op, b->n, i);
        break;
    case ARB_COLL_REDUCE:
        if (b->me == b->root)
            for (size_t i = 0; i < count; i++)
                wrong += arb_elem_get(b->recv + i * es, b->dt) != ref(b->op, b->n, i);
        break;
    case ARB_COLL_REDUCESCATTER:
        for (size_t i = 0; i < blk; i++)
            wrong += arb_elem_get(b->recv + i * es, b->dt) != ref(b->op, b->n, b->me * blk + i);
        break;
    case ARB_COLL_BROADCAST: {
        const uint8_t *out = b->me == b->root ? b->send : b->recv;
        for (size_t i = 0; i < count; i++)
            wrong += arb_elem_get(out + i * es, b->dt) != val(b->root, i);
        break;
    }
    case ARB_COLL_ALLGATHER:
        for (uint32_t r = 0; r < b->n; r++)
            for (size_t i = 0; i < blk; i++)
                wrong += arb_elem_get(b->recv + (r * blk + i) * es, b->dt) != val(r, i);
        break;
    default:
        break;
    }
    return wrong;
}

/* What arbor bench was asked for. */
struct bench_opts {
    uint64_t minb, maxb, iters, warm, root;
    double factor;
    int dt, op, checkr, stats, op_given, coll, reduces, rooted, barrier;
    const char *record;
};

/* One option of arbor bench (cli_options). */
static int bench_option(int c, const char *v, char **argv, void *ctx)
{
    struct bench_opts *o = ctx;
    static const char *const rule[128] = {['f'] = "want a factor above 1, such as 2",
                                          ['n'] = "want 1..1000000 iterations",
                                          ['w'] = "want 0..1000000 iterations",
                                          ['d'] = "want f16, bf16, f32, f64, i32 or i64 (or "
                                                  "half, bfloat16, float, double, int32, int64)",
                                          ['o'] = "want sum, max or min",
                                          ['r'] = "want a rank 0..255"};
    int bad = 0;
    char *end;
    switch (c) {
    case 'h':
        fputs(bench_usage, stdout);
        return CLI_EXIT_OK;
    case 'c':
        o->checkr = 1;
        break;
    case 's':
        o->stats = 1;
        break;
    case 'B':
        o->barrier = 1;
        break;
    case 'R':
        o->record = v;
        break;
    case 'b':
    case 'e': {
        int rc = parse_size(v, c == 'b' ? &o->minb : &o->maxb);
        if (rc == ARB_ERANGE) return usage_error("-%c '%s': at most 4G (4GiB)", c, v);
        if (rc < 0) return usage_error("-%c '%s' %s", c, v, arb_size_why(rc));
        break;
    }
    case 'f':
        o->factor = strtod(v, &end);
        bad = end == v || *end || !(o->factor > 1);
        break;
    case 'n':
        bad = cli_parse_u64(v, 1000000, &o->iters) < 0 || o->iters == 0;
        break;
    case 'w':
        bad = cli_parse_u64(v, 1000000, &o->warm) < 0;
        break;
    case 'd':
        bad = (o->dt = parse_dtype(v)) < 0;
        break;
    case 'o':
        o->op = arb_op_parse(v);
        bad = o->op <= ARB_OP_NOP;
        o->op_given = 1;
        break;
    case 'r':
        bad = cli_parse_u64(v, 255, &o->root) < 0;
        break;
    default: {
        const char *r = getenv("ARBOR_RANK");
        if (r && strcmp(r, "0") != 0) return CLI_EXIT_USAGE; /* rank 0 says it */
        return cli_bad_option("bench", c, argv);
    }
    }
    if (bad) return usage_error("-%c '%s': %s", c, v, c > 0 && c < 128 && rule[c] ? rule[c] : "");
    return CLI_GO_ON;
}

/* The collective and what it takes: CLI_GO_ON, or an exit status. */
static int parse_collective(int argc, char **argv, struct bench_opts *o)
{
    if (optind >= argc) return usage_error("give a collective; see 'arbor bench --help'");
    if (optind + 1 < argc)
        return usage_error("one collective only ('%s' and '%s')", argv[optind], argv[optind + 1]);
    int coll = arb_coll_parse(argv[optind]);
    if (coll < 0 || coll >= ARB_PLAN_COLL_COUNT)
        return usage_error("'%s' is not allreduce, reduce, reducescatter, broadcast, "
                           "allgather or barrier",
                           argv[optind]);
    o->coll = coll;
    o->reduces =
        coll == ARB_COLL_ALLREDUCE || coll == ARB_COLL_REDUCE || coll == ARB_COLL_REDUCESCATTER;
    o->rooted = coll == ARB_COLL_REDUCE || coll == ARB_COLL_BROADCAST;
    if (o->op_given && !o->reduces)
        return usage_error("-o: %s has no operator (-o is for allreduce, reduce, reducescatter)",
                           arb_coll_name(coll));
    if (o->minb > o->maxb)
        return usage_error("-b %llu is above -e %llu", (unsigned long long)o->minb,
                           (unsigned long long)o->maxb);
    return CLI_GO_ON;
}

/* The options and the collective into o: CLI_GO_ON, or an exit status. */
static int parse_options(int argc, char **argv, struct bench_opts *o)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'}, {"record", required_argument, NULL, 'R'}, {0, 0, 0, 0}};
    int rc = cli_options(argc, argv, ":b:e:f:n:w:d:o:r:csBh", opts, bench_option, o);
    return rc != CLI_GO_ON ? rc : parse_collective(argc, argv, o);
}

/* The communicator's configuration from the environment: CLI_GO_ON, or an
 * exit status. */
static int job_config(const struct bench_opts *o, arb_rt_config *cfg)
{
    if (outside_job())
        return cli_error("bench",
                         "not in a job: run it as every rank, arbor run -n N -- arbor bench %s "
                         "... (or with ARBOR_RANK, ARBOR_SIZE, ARBOR_SWITCH and ARBOR_SECRET set, "
                         "docs/runtime.md)",
                         arb_coll_name(o->coll));
    arb_rt_config_default(cfg);
    char err[256];
    if (arb_rt_config_env(cfg, err, sizeof err) < 0) {
        /* the same environment is every rank's: rank 0 says what is wrong
         * (any rank when ARBOR_RANK itself is what is wrong) */
        const char *r = getenv("ARBOR_RANK");
        if (r && strcmp(r, "0") != 0 && strspn(r, "0123456789") == strlen(r) &&
            !strstr(err, "ARBOR_RANK"))
            return CLI_EXIT_USAGE;
        return cli_error("bench", "%s", err);
    }
    cfg->logger.fn = warn_line; /* warnings only: errors are this command's to print */
    cfg->logger.max_level = ARB_LOG_WARN;
    if (o->root >= cfg->size)
        return usage_error("-r %llu is not a rank of %u", (unsigned long long)o->root, cfg->size);
    return CLI_GO_ON;
}

/* The size after size: times the factor, at least one more. */
static uint64_t next_size(uint64_t size, double factor)
{
    uint64_t n = (uint64_t)(size * factor);
    return n > size ? n : size + 1;
}

/* Whether a size from -b to -e is not a whole number of units (one
 * element, or one per rank): those run rounded down. */
static int any_rounded(const struct bench_opts *o, size_t unit)
{
    if (o->coll == ARB_COLL_BARRIER) return 0;
    for (uint64_t size = o->minb; size <= o->maxb; size = next_size(size, o->factor))
        if (size % unit) return 1;
    return 0;
}

/* Rank 0's heading of the table (unit: bench_sizes'). */
static void print_heading(const struct bench_opts *o, const struct bench *b,
                          const arb_rt_config *cfg, size_t unit)
{
    char what[48] = "";
    if (o->reduces)
        snprintf(what, sizeof what, "%s %s, ", arb_dtype_name(o->dt), arb_op_name(o->op));
    else if (o->coll != ARB_COLL_BARRIER)
        snprintf(what, sizeof what, "%s, ", arb_dtype_name(o->dt));
    printf("# arbor bench %s: %u ranks, %s%llu iteration%s (%llu warm-up), switch %s, "
           "fabric %s\n#\n",
           arb_coll_name(o->coll), b->n, what, (unsigned long long)o->iters,
           o->iters == 1 ? "" : "s", (unsigned long long)o->warm, cfg->sw, cfg->topo);
    if (any_rounded(o, unit))
        printf("# sizes rounded down to whole %s elements%s (multiples of %zu B): the size "
               "column is what ran\n#\n",
               arb_dtype_name(o->dt), unit > arb_dtype_size(o->dt) ? " per rank" : "", unit);
    printf("# %12s %12s %8s %6s %5s %10s %8s %8s %7s\n", "size", "count", "type", "redop", "root",
           "time", "algbw", "busbw", "#wrong");
    printf("# %12s %12s %8s %6s %5s %10s %8s %8s %7s\n", "(B)", "(elements)", "", "", "", "(us)",
           "(GB/s)", "(GB/s)", "");
    fflush(stdout);
}

/* One size: the warm-up and timed calls of `count` elements, then (over
 * every rank) the slowest rank's mean and the wrong elements of all, a row
 * of the table on rank 0. 0 with *wrong_all added to, or the failed call's
 * code. */
static int bench_size(struct bench *b, const struct bench_opts *o, size_t count, FILE *rec,
                      double *wrong_all)
{
    size_t es = arb_dtype_size(b->dt);
    uint64_t t = 0, wrong = 0;
    int rc = 0;
    for (uint64_t it = 0; it < o->warm + o->iters && rc == 0; it++) {
        /* checked: every call's output starts as garbage, so a call
         * that wrote nothing cannot pass on the last one's result */
        if (o->checkr) memset(b->recv, 0x55, count * es);
        if (o->barrier && (rc = arb_rt_barrier(b->c)) < 0) break;
        uint64_t t0 = now_ns();
        rc = one(b, count);
        uint64_t t1 = now_ns();
        if (it >= o->warm) t += t1 - t0;
        if (it >= o->warm && rec && rc == 0)
            fprintf(rec, "call %zu %llu %llu\n", count * es, (unsigned long long)t0,
                    (unsigned long long)t1);
        if (rc == 0 && o->checkr) wrong += check(b, count);
    }
    if (rc < 0) return rc;
    /* the slowest rank's mean, and the wrong elements of all */
    double mine[2] = {t * 1e-9 / o->iters, (double)wrong}, all[2];
    rc = arb_rt_allreduce(b->c, mine, all, 1, ARB_DTYPE_F64, ARB_OP_MAX);
    if (rc == 0) rc = arb_rt_allreduce(b->c, mine + 1, all + 1, 1, ARB_DTYPE_F64, ARB_OP_SUM);
    if (rc < 0) return rc;
    *wrong_all += all[1];
    double bytes = (double)count * es;
    double algbw = all[0] > 0 ? bytes / all[0] / 1e9 : 0;
    if (b->me == 0) {
        char wr[24];
        if (o->checkr)
            snprintf(wr, sizeof wr, "%.0f", all[1]);
        else
            snprintf(wr, sizeof wr, "N/A");
        static const char *const ops[] = {"none", "sum", "max", "min"};
        printf("  %12.0f %12zu %8s %6s %5d %10.1f %8.3f %8.3f %7s\n", bytes, count,
               nccl_type[o->dt], ops[o->reduces ? o->op : 0], o->rooted ? (int)o->root : -1,
               all[0] * 1e6, algbw, algbw * arb_rt_busbw_factor((arb_coll)o->coll, b->n), wr);
        fflush(stdout);
    }
    return 0;
}

/* -s: this rank's packet counters, one line on stderr. */
static void print_rank_stats(const struct bench *b, const arb_rt_config *cfg)
{
    arb_rt_stats st;
    arb_rt_get_stats(b->c, &st);
    fprintf(stderr,
            "arbor bench: rank %u: calls=%llu tx_pkts=%llu rx_pkts=%llu tx_bytes=%llu "
            "rx_bytes=%llu dropped_tx=%llu send_errors=%llu undecodable=%llu strangers=%llu "
            "unknown=%llu late=%llu rejoins=%llu gso_sends=%llu credits=%llu retries=%llu "
            "spurious=%llu tail_replays=%llu repair_credits=%llu waits=%llu spin_hits=%llu "
            "keepalive_joins=%llu cc=%s cc_decreases=%llu cc_increases=%llu base_rtt_us=%.1f "
            "io_uring=%llu ce_marks=%llu cc_continued=%llu early_credits=%llu window=%u\n",
            b->me, (unsigned long long)st.calls, (unsigned long long)st.tx_pkts,
            (unsigned long long)st.rx_pkts, (unsigned long long)st.tx_bytes,
            (unsigned long long)st.rx_bytes, (unsigned long long)st.dropped_tx,
            (unsigned long long)st.send_errors, (unsigned long long)st.rx_undecodable,
            (unsigned long long)st.rx_strangers, (unsigned long long)st.rx_unknown,
            (unsigned long long)st.rx_late, (unsigned long long)st.rejoins,
            (unsigned long long)st.gso_sends, (unsigned long long)st.credits,
            (unsigned long long)st.retries, (unsigned long long)st.spurious,
            (unsigned long long)st.tail_replays, (unsigned long long)st.repair_credits,
            (unsigned long long)st.waits, (unsigned long long)st.spin_hits,
            (unsigned long long)st.keepalive_joins, arb_cc_kind_name(cfg->cc),
            (unsigned long long)st.cc_decreases, (unsigned long long)st.cc_increases,
            (double)st.base_rtt / ARB_PS_PER_US, (unsigned long long)st.io_uring,
            (unsigned long long)st.ce_marks, (unsigned long long)st.cc_continued,
            (unsigned long long)st.early_credits, (unsigned)st.window);
}

/* Every size from -b to -e, each FACTOR times the one before: 0, or the
 * failed call's code; *wrong the wrong elements of all. */
static int bench_sizes(struct bench *b, const struct bench_opts *o, size_t unit, FILE *rec,
                       double *wrong)
{
    size_t es = arb_dtype_size(b->dt);
    for (uint64_t size = o->minb;; size = next_size(size, o->factor)) {
        if (size > o->maxb) break;
        size_t count = o->coll == ARB_COLL_BARRIER ? 0 : (size / unit) * (unit / es);
        fill_inputs(b, count);
        int rc = bench_size(b, o, count, rec, wrong);
        if (rc < 0) return rc;
        if (o->coll == ARB_COLL_BARRIER) break;
    }
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    struct bench_opts o = {.minb = 1024,
                           .maxb = 64 << 20,
                           .iters = 20,
                           .warm = 5,
                           .factor = 2,
                           .dt = ARB_DTYPE_F32,
                           .op = ARB_OP_SUM};
    /* each line in one write: ranks of one job share the terminal */
    setvbuf(stderr, NULL, _IOLBF, 0);
    int rc = parse_options(argc, argv, &o);
    if (rc != CLI_GO_ON) return rc;
    arb_rt_config cfg;
    if ((rc = job_config(&o, &cfg)) != CLI_GO_ON) return rc;
    size_t es = arb_dtype_size(o.dt);
    size_t unit =
        es * (o.coll == ARB_COLL_ALLGATHER || o.coll == ARB_COLL_REDUCESCATTER ? cfg.size : 1);
    if (o.coll != ARB_COLL_BARRIER && o.minb < unit)
        return usage_error("-b %llu: below one %s element%s (%zu B); want -b %zu or more",
                           (unsigned long long)o.minb, arb_dtype_name(o.dt),
                           unit > es ? " per rank" : "", unit, unit);
    struct bench b = {.coll = (arb_coll)o.coll,
                      .dt = (arb_dtype)o.dt,
                      .op = (arb_op)o.op,
                      .root = (uint32_t)o.root,
                      .n = cfg.size,
                      .me = cfg.rank};
    char err[256];
    rc = arb_rt_comm_new(&b.c, &cfg, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "arbor bench: rank %u: %s\n", cfg.rank, err);
        return rc == ARB_EINVAL || rc == ARB_EPARSE ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
    }
    b.send = malloc(o.maxb + unit);
    b.recv = malloc(o.maxb + unit);
    if (!b.send || !b.recv) {
        fprintf(stderr, "arbor bench: out of memory for %llu bytes\n", (unsigned long long)o.maxb);
        return CLI_EXIT_FAIL;
    }
    FILE *rec = NULL;
    if (o.record && !(rec = fopen(o.record, "w"))) {
        fprintf(stderr, "arbor bench: rank %u: --record %s: %s\n", b.me, o.record, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (b.me == 0) print_heading(&o, &b, &cfg, unit);
    int status = CLI_EXIT_OK;
    double total_wrong = 0;
    rc = bench_sizes(&b, &o, unit, rec, &total_wrong);
    record_end(rec, b.c, (uint64_t)total_wrong, rc);
    if (rec) fclose(rec);
    if (rc < 0) {
        fprintf(stderr, "arbor bench: rank %u: %s\n", b.me, arb_rt_errmsg(b.c));
        status = CLI_EXIT_FAIL;
    } else if (total_wrong > 0) {
        if (b.me == 0) fprintf(stderr, "arbor bench: %.0f wrong elements\n", total_wrong);
        status = CLI_EXIT_FAIL;
    }
    if (o.stats) print_rank_stats(&b, &cfg);
    arb_rt_comm_free(b.c);
    free(b.send);
    free(b.recv);
    return status;
}
