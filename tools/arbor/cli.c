/* Helpers shared by the subcommands. */
#include "cli.h"

#include "arb_cli_version.h"
#include "arbor/rt.h"
#include "arbor/topo.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_error(const char *prefix, const char *fmt, ...)
{
    /* one write of the whole line: stderr is unbuffered, and a launcher
     * (mpirun) that forwards it would otherwise interleave the pieces
     * with its own lines */
    char line[2048];
    int n = snprintf(line, sizeof line, "arbor %s: ", prefix);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof line) vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    if (len + 1 >= sizeof line) len = sizeof line - 2; /* (cut to the buffer: still one line) */
    line[len] = '\n';
    line[len + 1] = '\0';
    fputs(line, stderr);
    return CLI_EXIT_USAGE;
}

int cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* The long options of the loop under way, for cli_bad_option's matches. */
static const struct option *cur_opts;

void cli_getopt_start(const struct option *opts)
{
    optind = 0; /* glibc and musl: start over, options may follow operands */
    opterr = 0; /* the messages are ours (cli_bad_option) */
    cur_opts = opts;
}

/* The long options "--NAME" (up to an '=') abbreviates, as "--a, --b" in
 * list: how many. */
static int long_matches(const char *word, char *list, size_t len)
{
    const char *name = word + 2;
    size_t n = strcspn(name, "="), used = 0;
    int hits = 0;
    list[0] = '\0';
    for (const struct option *o = cur_opts; o && o->name; o++) {
        if (strncmp(o->name, name, n) != 0) continue;
        int w = snprintf(list + used, len - used, "%s--%s", hits ? ", " : "", o->name);
        if (w > 0 && (size_t)w < len - used) used += (size_t)w;
        hits++;
    }
    return hits;
}

int cli_bad_option(const char *cmd, int c, char **argv)
{
    /* a missing value: the option as written ends the words read so far;
     * an unknown short option may sit in a cluster (-jx): name it alone */
    if (c == ':')
        return cli_error(cmd, "%s needs a value; see 'arbor %s --help'", argv[optind - 1], cmd);
    const char *word = argv[optind - 1];
    if (optopt && strncmp(word, "--", 2) == 0 && strchr(word, '='))
        return cli_error(cmd, "%.*s takes no value; see 'arbor %s --help'",
                         (int)(strchr(word, '=') - word), word, cmd);
    char list[512];
    if (!optopt && strncmp(word, "--", 2) == 0 && word[2] &&
        long_matches(word, list, sizeof list) > 1)
        return cli_error(cmd, "ambiguous option '%.*s' (%s); see 'arbor %s --help'",
                         (int)strcspn(word, "="), word, list, cmd);
    char shortopt[3] = {'-', (char)optopt, '\0'};
    const char *a = optopt ? shortopt : word;
    return cli_error(cmd, "unknown option '%s'; see 'arbor %s --help'", a, cmd);
}

int cli_options(int argc, char **argv, const char *shorts, const struct option *opts,
                cli_option_fn one, void *ctx)
{
    int c;
    cli_getopt_start(opts);
    while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
        int rc = one(c, optarg, argv, ctx);
        if (rc != CLI_GO_ON) return rc;
    }
    return CLI_GO_ON;
}

void cli_json_head(cJSON *o, const char *schema)
{
    cJSON_AddStringToObject(o, "schema", schema);
    cJSON_AddStringToObject(o, "version", arb_version());
}

void cli_fmt_real(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "null");
    else if (v != 0 && fabs(v) < 1e-3)
        snprintf(buf, len, "%.6e", v);
    else
        snprintf(buf, len, "%.6f", v);
}

void cli_json_real(cJSON *o, const char *name, double v)
{
    char b[64];
    cli_fmt_real(b, sizeof b, v);
    cJSON_AddRawToObject(o, name, b);
}

const char *cli_version(void)
{
    static char buf[128];
    if (ARB_CLI_COMMIT[0])
        snprintf(buf, sizeof buf, "arbor %s (commit %s)", arb_version(), ARB_CLI_COMMIT);
    else
        snprintf(buf, sizeof buf, "arbor %s", arb_version());
    return buf;
}

int cli_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || v > max) return -1;
    *out = v;
    return 0;
}

char *cli_read_stdin(size_t limit)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    for (;;) {
        if (len + 1 >= cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, cap - len - 1, stdin);
        len += n;
        if (len > limit) {
            free(buf);
            return NULL;
        }
        if (n == 0) break;
    }
    if (ferror(stdin)) {
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

int cli_fits_cores(uint64_t n)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 && n <= CLI_PROCS_PER_CORE * (uint64_t)cores;
}

int cli_parse_spin(const char *v, arb_time *out)
{
    arb_time t = 0;
    if (strcmp(v, "0") != 0 && (arb_topo_parse_time(v, &t) < 0 || t > 10 * ARB_PS_PER_MS))
        return -1;
    *out = t;
    return 0;
}

int cli_parse_fraction(const char *v, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= 0 && d < 1)) return -1;
    *out = d;
    return 0;
}

int cli_parse_io(const char *v, int *io)
{
    if (strcmp(v, "mmsg") == 0)
        *io = ARB_RT_IO_MMSG;
    else if (strcmp(v, "uring") == 0)
        *io = ARB_RT_IO_URING;
    else
        return -1;
    return 0;
}

int cli_switch_option(const char *cmd, const char *prefix, int c, const char *v, char **argv,
                      arb_rt_switch_config *cfg)
{
    uint64_t x;
    char why[256];
    switch (c) {
    case CLI_OPT_NO_GSO:
        cfg->no_gso = 1;
        return CLI_GO_ON;
    case CLI_OPT_SPIN:
        if (cli_parse_spin(v, &cfg->spin) < 0)
            return cli_error(cmd, "--spin '%s': want 0 or a duration up to 10ms, e.g. 50us", v);
        return CLI_GO_ON;
    case CLI_OPT_IO:
        if (cli_parse_io(v, &cfg->io) < 0)
            return cli_error(cmd, "--io '%s': want mmsg or uring", v);
        return CLI_GO_ON;
    case CLI_OPT_THREADS:
        if (cli_parse_u64(v, ARB_RT_SWITCH_MAX_THREADS, &x) < 0 || x == 0)
            return cli_error(cmd, "--%sthreads '%s': want 1..%d", prefix, v,
                             ARB_RT_SWITCH_MAX_THREADS);
        cfg->threads = (uint32_t)x;
        return CLI_GO_ON;
    case CLI_OPT_ECN:
        if (arb_rt_ecn_parse(v, &cfg->ecn, why, sizeof why) < 0)
            return cli_error(cmd, "--%s%s", prefix, why);
        return CLI_GO_ON;
    case CLI_OPT_DROP:
        if (cli_parse_fraction(v, &cfg->drop) < 0)
            return cli_error(cmd, "--%sdrop '%s': want a fraction in [0, 1)", prefix, v);
        return CLI_GO_ON;
    case CLI_OPT_SEED:
        if (cli_parse_u64(v, UINT64_MAX, &cfg->seed) < 0)
            return cli_error(cmd, "--seed '%s': not a whole number", v);
        return CLI_GO_ON;
    default:
        return cli_bad_option(cmd, c, argv);
    }
}

/* One line of a software switch's counters on stderr: "WHO: rx_pkts=...". */
void cli_switch_stats(const char *who, const arb_rt_switch *s)
{
    arb_rt_switch_stats st;
    arb_rt_switch_get_stats(s, &st);
    fprintf(stderr,
            "%s: rx_pkts=%llu tx_pkts=%llu rx_bytes=%llu tx_bytes=%llu jobs=%llu "
            "joins=%llu rejoins=%llu join_rejected=%llu undecodable=%llu strangers=%llu "
            "unknown_job=%llu unknown_channel=%llu unroutable=%llu credits=%llu requests=%llu "
            "aggregates=%llu agg_miss=%llu agg_drops=%llu copies=%llu recredits=%llu "
            "adoptions=%llu replays=%llu results_down=%llu "
            "dropped_tx=%llu "
            "send_errors=%llu gso_sends=%llu waits=%llu keepalive_joins=%llu foreign=%llu "
            "io_uring=%llu ecn_marks=%llu queue_peak=%llu queue_mean=%llu\n",
            who, (unsigned long long)st.rx_pkts, (unsigned long long)st.tx_pkts,
            (unsigned long long)st.rx_bytes, (unsigned long long)st.tx_bytes,
            (unsigned long long)st.jobs, (unsigned long long)st.joins,
            (unsigned long long)st.rejoins, (unsigned long long)st.join_rejected,
            (unsigned long long)st.undecodable, (unsigned long long)st.strangers,
            (unsigned long long)st.unknown_job, (unsigned long long)st.unknown_channel,
            (unsigned long long)st.unroutable, (unsigned long long)st.credits,
            (unsigned long long)st.requests, (unsigned long long)st.aggregates,
            (unsigned long long)st.agg_miss, (unsigned long long)st.agg_drops,
            (unsigned long long)st.copies, (unsigned long long)st.recredits,
            (unsigned long long)st.adoptions, (unsigned long long)st.replays,
            (unsigned long long)st.results_down, (unsigned long long)st.dropped_tx,
            (unsigned long long)st.send_errors, (unsigned long long)st.gso_sends,
            (unsigned long long)st.waits, (unsigned long long)st.keepalive_joins,
            (unsigned long long)st.foreign, (unsigned long long)st.io_uring,
            (unsigned long long)st.ecn_marks, (unsigned long long)st.queue_peak,
            (unsigned long long)(st.queue_reads ? st.queue_sum / st.queue_reads : 0));
}
