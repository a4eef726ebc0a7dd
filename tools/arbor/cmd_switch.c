/*
 * arbor switch: the software aggregation switch of the runtime
 * (docs/runtime.md).
 */
#define _GNU_SOURCE
#include "arbor/rt.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <ini.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char switch_usage[] =
    "usage: arbor switch [--listen HOST:PORT] [--topo SPEC] [--node LEVEL.INDEX]\n"
    "                    [--peer LEVEL.INDEX=HOST:PORT]... [--job ID:SECRET]...\n"
    "                    [--job-file FILE] [--slots N] [--drop P] [--seed N]\n"
    "                    [--stats SECONDS] [--port-file FILE] [--for SECONDS] [--no-gso]\n"
    "                    [--spin DURATION] [--threads N] [--io mmsg|uring]\n"
    "                    [--ecn off|on|KMIN,KMAX,PMAX] [--config FILE]\n"
    "\n"
    "Serve Arbor jobs as one software aggregation switch: admit the ranks whose\n"
    "JOIN carries a valid MAC under their job's secret, aggregate requests in one\n"
    "slot pool shared by every job, replicate credits down the planner's trees,\n"
    "forward the rest. Everything else is dropped and counted.\n"
    "\n"
    "  --listen      address to bind (default 127.0.0.1:17470; port 0 picks one)\n"
    "  --topo        the fabric the jobs run on (default star:256, one switch)\n"
    "  --node        this switch in it: level (1 = leaves) and index (default 1.0)\n"
    "  --peer        another switch of the fabric and its address (repeatable)\n"
    "  --job         a job this switch admits, with its secret (repeatable)\n"
    "  --job-file    lines 'ID SECRET' ('#' starts a comment): keeps secrets\n"
    "                out of the process list\n"
    "  --config      an INI file: [switch] listen, topo, node, slots, peer (one\n"
    "                line each, LEVEL.INDEX=HOST:PORT), stats, for, drop, seed,\n"
    "                no-gso (0 or 1), spin, threads, io, ecn; [jobs] ID = SECRET.\n"
    "                Options after it override it\n"
    "  --slots       aggregation slots (default 4096)\n"
    "  --drop        drop this fraction of the packets it sends (tests)\n"
    "  --stats       print the counters every SECONDS (also on SIGUSR1, and at exit)\n"
    "  --port-file   write the port it listens on to FILE once it listens\n"
    "  --for         stop after SECONDS (default: until SIGINT or SIGTERM)\n"
    "  --no-gso      plain sendmmsg / recvmmsg, no UDP GSO / GRO (for captures on\n"
    "                loopback, which see a GSO send unsegmented)\n"
    "  --spin        before blocking for its socket, look again for up to this\n"
    "                long (e.g. 50us; at most 10ms), yielding the core between\n"
    "                looks (default 0: block at once)\n"
    "  --threads     serve with N threads (1..64, default 1), each with its own\n"
    "                socket on the same address (SO_REUSEPORT) and its own slot\n"
    "                pool of --slots slots; the kernel steers each job's channel\n"
    "                to one of them\n"
    "  --io          the sockets' I/O: mmsg (sendmmsg / recvmmsg, default) or\n"
    "                uring (io_uring; 'not built' without liburing; where the\n"
    "                kernel refuses a ring: a warning, and mmsg)\n"
    "  --ecn         ECN marking, RED on the bytes waiting in its socket's receive\n"
    "                queue: below KMIN none, from KMIN to KMAX a datagram is marked\n"
    "                CE with a probability rising to PMAX, from KMAX all (default on:\n"
    "                100KB,400KB,0.2; sizes a number with an optional unit, K, M,\n"
    "                KiB, MiB binary, KB, MB decimal, B: docs/scenarios.md, Sizes).\n"
    "                Only ARBOR_CC=dcqcn reacts to marks\n"
    "\n"
    "Prints 'arbor switch: listening on HOST:PORT' on stderr when ready, and a\n"
    "warning for each switch linked to this one in the fabric that is no --peer.\n"
    "Exit status: 0 stopped, 1 could not run (bind), 2 bad usage.\n";

static volatile int stop_flag;
static volatile sig_atomic_t want_stats;

static void on_stop(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void on_usr1(int sig)
{
    (void)sig;
    want_stats = 1;
}

static void log_line(void *user, arb_log_level level, const char *msg)
{
    (void)user;
    fprintf(stderr, "arbor switch: %s%s\n", level == ARB_LOG_WARN ? "warning: " : "", msg);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void print_stats(const arb_rt_switch *s)
{
    cli_switch_stats("arbor switch", s);
}

/* "L.I" into level, index. */
static int parse_node(const char *s, uint32_t *level, uint32_t *index)
{
    const char *dot = strchr(s, '.');
    uint64_t l, i;
    if (!dot || arb_parse_u64(s, (size_t)(dot - s), 64, &l) < 0 ||
        arb_parse_u64(dot + 1, strlen(dot + 1), UINT32_MAX, &i) < 0)
        return -1;
    *level = (uint32_t)l;
    *index = (uint32_t)i;
    return 0;
}

/* Secrets read from --job-file live until exit. */
static char *file_secrets[ARB_RT_SWITCH_MAX_JOBS];
static int n_file_secrets;
/* per job of cfg: 1 when --config gave it (an option after it overrides) */
static uint8_t job_from_config[ARB_RT_SWITCH_MAX_JOBS];

static int add_job(arb_rt_switch_config *cfg, uint64_t id, const char *secret, const char *where)
{
    if (!*secret || strlen(secret) > ARB_RT_SECRET_MAX)
        return cli_error("switch", "%s: job %llu needs a secret of 1..%d bytes", where,
                         (unsigned long long)id, ARB_RT_SECRET_MAX);
    for (uint32_t i = 0; i < cfg->n_jobs; i++)
        if (cfg->jobs[i].id == id && job_from_config[i]) { /* overrides --config's */
            cfg->jobs[i].secret = secret;
            job_from_config[i] = 0;
            return 0;
        }
    if (cfg->n_jobs == ARB_RT_SWITCH_MAX_JOBS)
        return cli_error("switch", "%s: more than %d jobs", where, ARB_RT_SWITCH_MAX_JOBS);
    cfg->jobs[cfg->n_jobs].id = (uint32_t)id;
    cfg->jobs[cfg->n_jobs].secret = secret;
    cfg->n_jobs++;
    return 0;
}

static int read_job_file(arb_rt_switch_config *cfg, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return cli_error("switch", "--job-file %s: %s", path, strerror(errno));
    char line[512];
    int n = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        n++;
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || !*p) continue;
        p[strcspn(p, "\r\n")] = 0;
        char *sp = p + strcspn(p, " \t");
        if (!*sp) {
            rc = cli_error("switch", "%s:%d: want 'ID SECRET'", path, n);
            break;
        }
        *sp++ = 0;
        sp += strspn(sp, " \t");
        uint64_t id;
        if (cli_parse_u64(p, UINT32_MAX, &id) < 0) {
            rc = cli_error("switch", "%s:%d: job id '%s' is not a number 0..%u", path, n, p,
                           UINT32_MAX);
            break;
        }
        char where[300];
        snprintf(where, sizeof where, "%s:%d", path, n);
        char *sec = strdup(sp);
        if (!sec) {
            rc = cli_error("switch", "out of memory");
            break;
        }
        if (n_file_secrets == ARB_RT_SWITCH_MAX_JOBS) {
            free(sec);
            rc = cli_error("switch", "%s: more than %d jobs", where, ARB_RT_SWITCH_MAX_JOBS);
            break;
        }
        file_secrets[n_file_secrets++] = sec;
        rc = add_job(cfg, id, sec, where);
    }
    fclose(f);
    return rc;
}

/* Strings read from --config live until exit. */
static char *config_strings[2 * ARB_RT_SWITCH_MAX_PEERS + ARB_RT_SWITCH_MAX_JOBS + 8];
static size_t n_config_strings;

static const char *keep(const char *v)
{
    if (n_config_strings == sizeof config_strings / sizeof config_strings[0]) return NULL;
    char *c = strdup(v);
    if (c) config_strings[n_config_strings++] = c;
    return c;
}

struct config_ctx {
    arb_rt_switch_config *cfg;
    double *stats_every, *run_for;
    char why[200];
};

static int config_line(void *user, const char *section, const char *name, const char *value)
{
    struct config_ctx *x = user;
    arb_rt_switch_config *cfg = x->cfg;
    uint64_t v;
    if (strcmp(section, "jobs") == 0) {
        if (cli_parse_u64(name, UINT32_MAX, &v) < 0) {
            snprintf(x->why, sizeof x->why, "job id '%s' is not a number 0..%u", name, UINT32_MAX);
            return 0;
        }
        if (cfg->n_jobs == ARB_RT_SWITCH_MAX_JOBS || !*value || strlen(value) > ARB_RT_SECRET_MAX) {
            snprintf(x->why, sizeof x->why, "job %s: more than %d jobs or a secret not 1..%d bytes",
                     name, ARB_RT_SWITCH_MAX_JOBS, ARB_RT_SECRET_MAX);
            return 0;
        }
        for (uint32_t i = 0; i < cfg->n_jobs; i++)
            if (cfg->jobs[i].id == v && !job_from_config[i]) { /* an earlier option's */
                snprintf(x->why, sizeof x->why,
                         "job %s was given before --config (options after it override it)", name);
                return 0;
            }
        job_from_config[cfg->n_jobs] = 1;
        cfg->jobs[cfg->n_jobs].id = (uint32_t)v;
        cfg->jobs[cfg->n_jobs++].secret = keep(value);
        return 1;
    }
    if (strcmp(section, "switch") != 0) {
        snprintf(x->why, sizeof x->why, "unknown section [%s] (want [switch] or [jobs])", section);
        return 0;
    }
    if (strcmp(name, "listen") == 0) {
        if (arb_rt_addr_check(value, x->why, sizeof x->why) < 0) return 0;
        cfg->listen = keep(value);
    } else if (strcmp(name, "topo") == 0) {
        cfg->topo = keep(value);
    } else if (strcmp(name, "node") == 0) {
        if (parse_node(value, &cfg->level, &cfg->index) < 0) {
            snprintf(x->why, sizeof x->why, "node '%s': want LEVEL.INDEX", value);
            return 0;
        }
    } else if (strcmp(name, "slots") == 0) {
        if (cli_parse_u64(value, 65536, &v) < 0 || v == 0) {
            snprintf(x->why, sizeof x->why, "slots '%s': want 1..65536", value);
            return 0;
        }
        cfg->slots = (uint32_t)v;
    } else if (strcmp(name, "peer") == 0) {
        const char *eq = strchr(value, '=');
        char node[32];
        if (!eq || (size_t)(eq - value) >= sizeof node || cfg->n_peers == ARB_RT_SWITCH_MAX_PEERS) {
            snprintf(x->why, sizeof x->why, "peer '%s': want LEVEL.INDEX=HOST:PORT", value);
            return 0;
        }
        memcpy(node, value, (size_t)(eq - value));
        node[eq - value] = 0;
        if (parse_node(node, &cfg->peers[cfg->n_peers].level, &cfg->peers[cfg->n_peers].index) <
            0) {
            snprintf(x->why, sizeof x->why, "peer '%s': want LEVEL.INDEX=HOST:PORT", value);
            return 0;
        }
        cfg->peers[cfg->n_peers++].addr = keep(eq + 1);
    } else if (strcmp(name, "stats") == 0 || strcmp(name, "for") == 0) {
        char *end;
        double d = strtod(value, &end);
        if (end == value || *end || !(d > 0)) {
            snprintf(x->why, sizeof x->why, "%s '%s': want seconds > 0", name, value);
            return 0;
        }
        *(strcmp(name, "stats") == 0 ? x->stats_every : x->run_for) = d;
    } else if (strcmp(name, "drop") == 0) {
        char *end;
        double d = strtod(value, &end);
        if (end == value || *end || !(d >= 0 && d < 1)) {
            snprintf(x->why, sizeof x->why, "drop '%s': want a fraction in [0, 1)", value);
            return 0;
        }
        cfg->drop = d;
    } else if (strcmp(name, "seed") == 0) {
        if (cli_parse_u64(value, UINT64_MAX, &cfg->seed) < 0) {
            snprintf(x->why, sizeof x->why, "seed '%s': not a whole number", value);
            return 0;
        }
    } else if (strcmp(name, "no-gso") == 0) {
        if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
            snprintf(x->why, sizeof x->why, "no-gso '%s': want 0 or 1", value);
            return 0;
        }
        cfg->no_gso = *value == '1';
    } else if (strcmp(name, "spin") == 0) {
        if (cli_parse_spin(value, &cfg->spin) < 0) {
            snprintf(x->why, sizeof x->why, "spin '%s': want 0 or a duration up to 10ms", value);
            return 0;
        }
    } else if (strcmp(name, "io") == 0) {
        if (cli_parse_io(value, &cfg->io) < 0) {
            snprintf(x->why, sizeof x->why, "io '%s': want mmsg or uring", value);
            return 0;
        }
    } else if (strcmp(name, "ecn") == 0) {
        if (arb_rt_ecn_parse(value, &cfg->ecn, x->why, sizeof x->why) < 0) return 0;
    } else if (strcmp(name, "threads") == 0) {
        if (cli_parse_u64(value, ARB_RT_SWITCH_MAX_THREADS, &v) < 0 || v == 0) {
            snprintf(x->why, sizeof x->why, "threads '%s': want 1..%d", value,
                     ARB_RT_SWITCH_MAX_THREADS);
            return 0;
        }
        cfg->threads = (uint32_t)v;
    } else {
        snprintf(x->why, sizeof x->why,
                 "unknown key '%s' (want listen, topo, node, slots, peer, stats, for, drop, seed, "
                 "no-gso, spin, threads, io or ecn)",
                 name);
        return 0;
    }
    return 1;
}

static int read_config(arb_rt_switch_config *cfg, const char *path, double *stats_every,
                       double *run_for)
{
    FILE *f = fopen(path, "r");
    if (!f) return cli_error("switch", "--config %s: %s", path, strerror(errno));
    struct config_ctx x = {.cfg = cfg, .stats_every = stats_every, .run_for = run_for};
    int line = ini_parse_file(f, config_line, &x);
    fclose(f);
    if (line > 0) return cli_error("switch", "%s:%d: %s", path, line, x.why[0] ? x.why : "not INI");
    if (line < 0) return cli_error("switch", "--config %s: cannot read it", path);
    return 0;
}

/* What arbor switch runs: the switch's configuration and the rest. */
struct switch_run {
    arb_rt_switch_config cfg;
    double stats_every, run_for;
    const char *port_file;
};

/* An option's helper's 0 as the option loop's "go on". */
static int go_on(int rc)
{
    return rc ? rc : CLI_GO_ON;
}

/* An address option's value checked as it is read (so that a bad one is
 * named before what is missing, as every other value is): 0 or an exit
 * status. */
static int addr_option(const char *opt, const char *v)
{
    char err[256];
    if (arb_rt_addr_check(v, err, sizeof err) < 0) return cli_error("switch", "%s: %s", opt, err);
    return 0;
}

/* --peer LEVEL.INDEX=HOST:PORT. */
static int peer_option(arb_rt_switch_config *cfg, const char *v)
{
    const char *eq = strchr(v, '=');
    char node[32];
    if (!eq || (size_t)(eq - v) >= sizeof node)
        return cli_error("switch", "--peer '%s': want LEVEL.INDEX=HOST:PORT", v);
    memcpy(node, v, (size_t)(eq - v));
    node[eq - v] = 0;
    if (cfg->n_peers == ARB_RT_SWITCH_MAX_PEERS)
        return cli_error("switch", "more than %d peers", ARB_RT_SWITCH_MAX_PEERS);
    if (parse_node(node, &cfg->peers[cfg->n_peers].level, &cfg->peers[cfg->n_peers].index) < 0)
        return cli_error("switch", "--peer '%s': want LEVEL.INDEX=HOST:PORT", v);
    if (addr_option("--peer", eq + 1) != 0) return CLI_EXIT_USAGE;
    cfg->peers[cfg->n_peers++].addr = eq + 1;
    return 0;
}

/* --job ID:SECRET. */
static int job_option(arb_rt_switch_config *cfg, const char *v)
{
    const char *colon = strchr(v, ':');
    char idt[16];
    uint64_t x;
    if (!colon || (size_t)(colon - v) >= sizeof idt)
        return cli_error("switch", "--job '%s': want ID:SECRET", v);
    memcpy(idt, v, (size_t)(colon - v));
    idt[colon - v] = 0;
    if (cli_parse_u64(idt, UINT32_MAX, &x) < 0)
        return cli_error("switch", "--job '%s': id is not a number 0..%u", v, UINT32_MAX);
    return add_job(cfg, x, colon + 1, "--job") != 0 ? CLI_EXIT_USAGE : 0;
}

/* --stats and --for: seconds > 0 into *out. */
static int seconds_option(const char *name, const char *v, double *out)
{
    char *end;
    *out = strtod(v, &end);
    if (end == v || *end || !(*out > 0))
        return cli_error("switch", "--%s '%s': want seconds > 0", name, v);
    return 0;
}

/* One option of arbor switch (cli_options). */
static int switch_option(int c, const char *v, char **argv, void *ctx)
{
    struct switch_run *run = ctx;
    arb_rt_switch_config *cfg = &run->cfg;
    uint64_t x;
    switch (c) {
    case 'h':
        fputs(switch_usage, stdout);
        return CLI_EXIT_OK;
    case 'l':
        cfg->listen = v;
        return go_on(addr_option("--listen", v));
    case 't':
        cfg->topo = v;
        return CLI_GO_ON;
    case 'N':
        if (parse_node(v, &cfg->level, &cfg->index) < 0)
            return cli_error("switch", "--node '%s': want LEVEL.INDEX, e.g. 1.0", v);
        return CLI_GO_ON;
    case 'P':
        return go_on(peer_option(cfg, v));
    case 'J':
        return go_on(job_option(cfg, v));
    case 'F':
        return read_job_file(cfg, v) != 0 ? CLI_EXIT_USAGE : CLI_GO_ON;
    case 'C':
        return read_config(cfg, v, &run->stats_every, &run->run_for) != 0 ? CLI_EXIT_USAGE
                                                                          : CLI_GO_ON;
    case 'S':
        if (cli_parse_u64(v, 65536, &x) < 0 || x == 0)
            return cli_error("switch", "--slots '%s': want 1..65536", v);
        cfg->slots = (uint32_t)x;
        return CLI_GO_ON;
    case 's':
        return go_on(seconds_option("stats", v, &run->stats_every));
    case 'T':
        return go_on(seconds_option("for", v, &run->run_for));
    case 'f':
        run->port_file = v;
        return CLI_GO_ON;
    default:
        return cli_switch_option("switch", "", c, v, argv, cfg);
    }
}

/* The options into run: CLI_GO_ON, or an exit status. */
static int parse_options(int argc, char **argv, struct switch_run *run)
{
    static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
                                         {"topo", required_argument, NULL, 't'},
                                         {"node", required_argument, NULL, 'N'},
                                         {"peer", required_argument, NULL, 'P'},
                                         {"job", required_argument, NULL, 'J'},
                                         {"job-file", required_argument, NULL, 'F'},
                                         {"config", required_argument, NULL, 'C'},
                                         {"slots", required_argument, NULL, 'S'},
                                         {"stats", required_argument, NULL, 's'},
                                         {"for", required_argument, NULL, 'T'},
                                         {"port-file", required_argument, NULL, 'f'},
                                         CLI_SWITCH_OPTIONS(""),
                                         {"help", no_argument, NULL, 'h'},
                                         {0, 0, 0, 0}};
    int rc = cli_options(argc, argv, ":h", opts, switch_option, run);
    if (rc != CLI_GO_ON) return rc;
    if (optind < argc)
        return cli_error("switch", "unexpected '%s'; see 'arbor switch --help'", argv[optind]);
    if (run->cfg.n_jobs == 0)
        return cli_error("switch", "no job admitted: give --job ID:SECRET or --job-file FILE");
    return CLI_GO_ON;
}

/* Write the port s listens on to path: 0, or -1 having said why. */
static int write_port_file(const arb_rt_switch *s, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%u\n", arb_rt_switch_port(s)) < 0 || fclose(f) != 0) {
        fprintf(stderr, "arbor switch: cannot write --port-file %s\n", path);
        return -1;
    }
    return 0;
}

/* Serve until SIGINT or SIGTERM or --for, printing the counters on the
 * --stats schedule and on SIGUSR1. */
static void serve(arb_rt_switch *s, const struct switch_run *run)
{
    /* --stats on a fixed schedule from the start (not "a period after the
     * last print", which drifts by what each slice overran) */
    const double slice = 0.1, start = now_s();
    const double stats_every = run->stats_every, run_for = run->run_for;
    double next_stats = start + stats_every;
    while (!stop_flag) {
        double now = now_s(), left = run_for > 0 ? start + run_for - now : slice;
        if (stats_every > 0 && next_stats - now < left) left = next_stats - now;
        if (left > slice) left = slice;
        if (left > 0) arb_rt_switch_run(s, (arb_time)(left * ARB_PS_PER_S), &stop_flag);
        now = now_s();
        if (want_stats || (stats_every > 0 && now >= next_stats)) {
            want_stats = 0;
            while (stats_every > 0 && next_stats <= now)
                next_stats += stats_every;
            print_stats(s);
        }
        if (run_for > 0 && now - start >= run_for) break;
    }
}

int cmd_switch(int argc, char **argv)
{
    struct switch_run run = {.stats_every = 0, .run_for = 0, .port_file = NULL};
    arb_rt_switch_config_default(&run.cfg);
    int rc = parse_options(argc, argv, &run);
    if (rc != CLI_GO_ON) return rc;
    arb_rt_switch_config cfg = run.cfg;
    char err[256];
    arb_rt_switch *s;
    cfg.logger.fn = log_line;
    cfg.logger.max_level = ARB_LOG_WARN;
    rc = arb_rt_switch_new(&s, &cfg, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "arbor switch: %s\n", err);
        return rc == ARB_EIO ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    if (run.port_file && write_port_file(s, run.port_file) < 0) {
        arb_rt_switch_free(s);
        return CLI_EXIT_FAIL;
    }
    const char *colon = strrchr(cfg.listen, ':');
    fprintf(stderr, "arbor switch: listening on %.*s:%u\n",
            (int)(colon ? colon - cfg.listen : (long)strlen(cfg.listen)), cfg.listen,
            arb_rt_switch_port(s));
    serve(s, &run);
    print_stats(s);
    arb_rt_switch_free(s);
    for (int i = 0; i < ARB_RT_SWITCH_MAX_JOBS; i++)
        free(file_secrets[i]);
    for (size_t i = 0; i < n_config_strings; i++)
        free(config_strings[i]);
    return CLI_EXIT_OK;
}
