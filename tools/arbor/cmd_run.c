/*
 * arbor run: a job on this machine -- the switches of its fabric (threads
 * of this process, unless --switch names one that runs elsewhere) and N
 * ranks, each COMMAND with the ARBOR_* environment set (docs/runtime.md).
 */
#define _GNU_SOURCE
#include "arbor/rt.h"
#include "arbor/topo.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char run_usage[] =
    "usage: arbor run -n N [--switch HOST:PORT] [--topo SPEC] [--job ID]\n"
    "                 [--secret S | --secret-file FILE] [--timeout T] [--drop P]\n"
    "                 [--switch-drop P] [--seed N] [--no-gso] [--spin DURATION]\n"
    "                 [--switch-threads K] [--switch-ecn SPEC] [--io mmsg|uring]\n"
    "                 -- COMMAND [ARGS...]\n"
    "\n"
    "Run COMMAND as N ranks of one job on this machine. Without --switch it first\n"
    "starts the fabric's switches (one for the default star:256, one per switch of\n"
    "--topo, e.g. leafspine:2,2,1) on loopback, in this process. Each rank gets:\n"
    "  ARBOR_RANK, ARBOR_SIZE, ARBOR_SWITCH (its leaf switch), ARBOR_JOB,\n"
    "  ARBOR_SECRET (random for its own switches unless given), ARBOR_TOPO,\n"
    "  ARBOR_HOST_BASE=0,\n"
    "  and ARBOR_TIMEOUT, ARBOR_DROP, ARBOR_SEED when given. The rest of the\n"
    "  environment passes unchanged (ARBOR_WINDOW, ARBOR_CC, ARBOR_LINE_RATE, ...).\n"
    "A COMMAND of plain 'arbor' is this arbor (build/arbor run -n 4 -- arbor bench\n"
    "runs build/arbor's bench), wherever PATH leads.\n"
    "\n"
    "  -n N           ranks, 2..256\n"
    "  --switch       an arbor switch already running (star fabric only); it\n"
    "                admits the job only with its secret, so one is required:\n"
    "                --secret, --secret-file or ARBOR_SECRET (and the job id:\n"
    "                --job, else ARBOR_JOB, else 1)\n"
    "  --topo         the fabric (default star:256)\n"
    "  --job          the job id (default 1)\n"
    "  --secret       the job's secret (default: 32 random bytes, hex, for the\n"
    "                switches arbor run starts)\n"
    "  --secret-file  read the secret from the first line of FILE (keeps it out\n"
    "                of the process list)\n"
    "  --timeout      a call's deadline, e.g. 30s (ARBOR_TIMEOUT)\n"
    "  --drop         fraction of each rank's sends dropped (ARBOR_DROP, tests)\n"
    "  --switch-drop  fraction of the switches' sends dropped (tests)\n"
    "  --no-gso       no UDP GSO / GRO in the ranks and switches (ARBOR_GSO=0)\n"
    "  --spin         ranks and switches look again for up to DURATION (e.g. 50us)\n"
    "                 before blocking for their socket (ARBOR_SPIN, switch --spin);\n"
    "                 default 200us with at most 4 ranks a core, else 0\n"
    "  --switch-threads  threads of each switch it starts (1..64, default 1;\n"
    "                 switch --threads)\n"
    "  --switch-ecn   the ECN marking of the switches it starts: off, on (the\n"
    "                 default: 100KB,400KB,0.2) or KMIN,KMAX,PMAX (switch --ecn)\n"
    "  --io           the ranks' and switches' socket I/O: mmsg (default) or\n"
    "                 uring (io_uring; ARBOR_IO, switch --io)\n"
    "\n"
    "More ranks than 4 a core run at nice +19 (without --switch), so that the\n"
    "switches serving them here keep up; up to 4 a core, ranks and switches spin\n"
    "200us before blocking unless --spin or ARBOR_SPIN says otherwise.\n"
    "\n"
    "SIGINT, SIGTERM or SIGHUP to arbor run is passed on to every rank, and the\n"
    "switches stop; ranks still running 5 s later are killed (SIGKILL). A rank\n"
    "gets SIGTERM if arbor run dies (even by SIGKILL).\n"
    "\n"
    "Exit status: 0 every rank exited 0; 1 a rank failed (one line names it, and\n"
    "the other ranks are stopped with SIGTERM, 1 s later if it exited with 2,\n"
    "bad usage); 2 bad usage; 128 + the signal when stopped by one.\n";

/* The program a rank runs: COMMAND as given, but a plain "arbor" is this
 * very arbor (the same build as the switches it started), found through
 * /proc/self/exe into self[len]; COMMAND itself when that fails. */
static const char *rank_program(const char *command, char *self, size_t len)
{
    if (strcmp(command, "arbor") != 0) return command;
    ssize_t n = readlink("/proc/self/exe", self, len - 1);
    if (n <= 0) return command;
    self[n] = '\0';
    return self;
}

/* Whether path is a regular file this process may execute. */
static int runnable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The rank program checked before any rank starts, as execvp would find
 * it (a name with a '/' as it is, else along PATH): CLI_GO_ON, or one
 * line and CLI_EXIT_USAGE (every rank would fail alike). */
static int check_program(const char *program)
{
    if (strchr(program, '/')) {
        if (runnable(program)) return CLI_GO_ON;
        if (access(program, F_OK) != 0) return cli_error("run", "%s: %s", program, strerror(errno));
        return cli_error("run", "%s: not an executable file", program);
    }
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/bin:/usr/bin"; /* execvp's default */
    for (const char *p = path;; p++) {                /* an empty entry is the current directory */
        size_t n = strcspn(p, ":");
        char full[4096];
        int w = snprintf(full, sizeof full, "%.*s%s%s", (int)n, p, n ? "/" : "", program);
        if (w > 0 && (size_t)w < sizeof full && runnable(full)) return CLI_GO_ON;
        p += n;
        if (!*p) break;
    }
    return cli_error("run", "%s: no such program on PATH", program);
}

/* The signals arbor run passes on to its ranks. */
static const int fwd_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_FWD (sizeof fwd_signals / sizeof fwd_signals[0])
/* After a stop (a signal, or a rank that failed), how long the others get
 * to exit before SIGKILL. */
#define STOP_GRACE_MS 5000
/* A rank that exits with status 2 (bad usage): the others get this long to
 * exit by themselves (they most likely had the same usage) before SIGTERM. */
#define USAGE_GRACE_MS 1000

/* The secret: the first line of path, 1..ARB_RT_SECRET_MAX bytes. */
static int read_secret_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return cli_error("run", "--secret-file %s: %s", path, strerror(errno));
    if (!fgets(buf, (int)len, f)) buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\r\n")] = 0;
    if (!*buf || strlen(buf) > ARB_RT_SECRET_MAX)
        return cli_error("run", "--secret-file %s: want a first line of 1..%d bytes", path,
                         ARB_RT_SECRET_MAX);
    return 0;
}

static volatile int sw_stop;

static void *sw_main(void *arg)
{
    struct swt *w = arg;
    arb_rt_switch_run(w->s, ARB_TIME_NEVER, &sw_stop);
    return NULL;
}

/* A switch's warnings (--io uring refused by the kernel), one line each. */
static void switch_warning(void *user, arb_log_level level, const char *msg)
{
    (void)user;
    if (level == ARB_LOG_WARN) fprintf(stderr, "arbor run: switch: warning: %s\n", msg);
}

/* A job secret: 32 random bytes in hex into buf (at least 65 bytes); 0,
 * or -1 when libsodium cannot start (cli.h). */
int random_secret(char *buf, size_t len)
{
    uint8_t raw[32];
    if (len < 2 * sizeof raw + 1 || sodium_init() < 0) return -1;
    randombytes_buf(raw, sizeof raw);
    sodium_bin2hex(buf, len, raw, sizeof raw);
    return 0;
}

/* Stop the switches start_fabric started, print their counters when
 * stats names who prints them, free them and w (cli.h). */
void stop_fabric(struct swt *w, uint32_t n_sw, const char *stats)
{
    __atomic_store_n(&sw_stop, 1, __ATOMIC_RELEASE);
    for (uint32_t a = 0; a < n_sw; a++) {
        if (w[a].t) pthread_join(w[a].t, NULL);
        if (stats) cli_switch_stats(stats, w[a].s);
        arb_rt_switch_free(w[a].s);
    }
    free(w);
}

/* The fabric's switches on loopback, each configured as `base` (the
 * options every switch shares, and the jobs it admits besides `job`) but
 * for its node, address, job and seed; 0 or an exit status (cli.h). */
int start_fabric(const char *topo, uint32_t job, const char *secret,
                 const arb_rt_switch_config *base, struct swt **out, uint32_t *n_out, arb_topo **tp)
{
    char err[256];
    arb_topo *t;
    if (arb_topo_new(&t, topo, NULL, err, sizeof err) < 0)
        return cli_error("run", "--topo: %s", err);
    *tp = t;
    uint32_t n = arb_topo_n_nodes(t) - arb_topo_n_hosts(t);
    if (n > 64) return cli_error("run", "--topo %s has %u switches; at most 64 here", topo, n);
    struct swt *w = calloc(n, sizeof *w);
    if (!w) return cli_error("run", "out of memory");
    *out = w;
    uint32_t k = 0;
    for (unsigned l = 1; l <= arb_topo_height(t); l++)
        for (uint32_t i = 0; i < arb_topo_level_size(t, l); i++, k++) {
            arb_rt_switch_config cfg = *base;
            cfg.listen = "127.0.0.1:0";
            cfg.topo = topo;
            cfg.level = l;
            cfg.index = i;
            cfg.jobs[cfg.n_jobs].id = job;
            cfg.jobs[cfg.n_jobs++].secret = secret;
            cfg.seed = base->seed + k;
            cfg.logger.fn = switch_warning;
            cfg.logger.max_level = ARB_LOG_WARN;
            w[k].node = arb_topo_node_id(t, l, i);
            if (arb_rt_switch_new(&w[k].s, &cfg, err, sizeof err) < 0) {
                fprintf(stderr, "arbor run: switch %u.%u: %s\n", l, i, err);
                *n_out = k;
                return CLI_EXIT_FAIL;
            }
            snprintf(w[k].addr, sizeof w[k].addr, "127.0.0.1:%u", arb_rt_switch_port(w[k].s));
        }
    *n_out = n;
    for (uint32_t a = 0; a < n; a++) {
        const arb_node *na = arb_topo_node(t, w[a].node);
        for (uint32_t b = 0; b < n; b++) {
            if (a == b) continue;
            const arb_node *nb = arb_topo_node(t, w[b].node);
            if (arb_rt_switch_add_peer(w[a].s, nb->level, nb->index, w[b].addr, err, sizeof err) <
                0) {
                fprintf(stderr, "arbor run: switch %u.%u: %s\n", na->level, na->index, err);
                return CLI_EXIT_FAIL;
            }
        }
    }
    for (uint32_t a = 0; a < n; a++)
        pthread_create(&w[a].t, NULL, sw_main, &w[a]);
    return 0;
}

/* The address of host j's leaf switch. */
static const char *leaf_of(const arb_topo *t, const struct swt *w, uint32_t n, uint32_t j)
{
    const arb_node *h = arb_topo_node(t, j);
    uint32_t leaf = arb_topo_port(t, h->first_up)->peer;
    for (uint32_t a = 0; a < n; a++)
        if (w[a].node == leaf) return w[a].addr;
    return NULL;
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Send sig to every rank still running. */
static void signal_ranks(const pid_t *pids, const uint8_t *alive, uint32_t n, int sig)
{
    for (uint32_t q = 0; q < n; q++)
        if (alive[q]) kill(pids[q], sig);
}

/* SIGUSR1: each switch's counters, as arbor switch prints them. */
static void print_switches(const struct swt *w, uint32_t n_sw, const arb_topo *t)
{
    for (uint32_t a = 0; a < n_sw; a++) {
        const arb_node *nd = arb_topo_node(t, w[a].node);
        char who[48];
        snprintf(who, sizeof who, "arbor run: switch %u.%u", nd->level, nd->index);
        cli_switch_stats(who, w[a].s);
    }
    if (n_sw == 0) fprintf(stderr, "arbor run: no switch of its own (--switch): no counters\n");
}

/* Wait for every rank. The first that fails is named and the others get
 * SIGTERM (*failed: CLI_EXIT_USAGE when it exited with that status, else
 * CLI_EXIT_FAIL); a stop signal to arbor run goes to every rank
 * (*stop_sig); SIGUSR1 prints the switches' counters. After a failure or
 * a stop, ranks still running STOP_GRACE_MS later get SIGKILL. */
static void reap(const pid_t *pids, uint32_t n, int *failed, int *stop_sig, const sigset_t *sigs,
                 const struct swt *w, uint32_t n_sw, const arb_topo *t)
{
    uint8_t alive[256];
    uint32_t left = n;
    memset(alive, 1, n);
    struct timespec stopping = {0, 0}, failed_at = {0, 0};
    int killed = 0, term_pending = 0;
    while (left > 0) {
        int st = 0;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            uint32_t r = 0;
            while (r < n && pids[r] != p)
                r++;
            if (r == n) continue;
            alive[r] = 0;
            left--;
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
            if (!*failed && !*stop_sig) {
                if (WIFEXITED(st))
                    fprintf(stderr, "arbor run: rank %u exited with status %d\n", r,
                            WEXITSTATUS(st));
                else
                    fprintf(stderr, "arbor run: rank %u was killed by signal %d\n", r,
                            WIFSIGNALED(st) ? WTERMSIG(st) : 0);
                /* the job cannot finish: the other ranks need not wait for
                 * their deadlines. Bad usage (status 2) is most often every
                 * rank's: give them a moment to say so themselves */
                clock_gettime(CLOCK_MONOTONIC, &failed_at);
                term_pending = 1;
                int usage = WIFEXITED(st) && WEXITSTATUS(st) == CLI_EXIT_USAGE;
                if (!usage) {
                    signal_ranks(pids, alive, n, SIGTERM);
                    term_pending = 0;
                }
                stopping = failed_at;
                *failed = usage ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
            }
            if (!*failed) *failed = CLI_EXIT_FAIL;
            continue;
        }
        if (p < 0 && errno != EINTR) break; /* no children left */
        if (term_pending && ms_since(&failed_at) >= USAGE_GRACE_MS) {
            signal_ranks(pids, alive, n, SIGTERM);
            term_pending = 0;
            clock_gettime(CLOCK_MONOTONIC, &stopping);
        }
        if ((*failed || *stop_sig) && !killed && ms_since(&stopping) >= STOP_GRACE_MS) {
            fprintf(stderr, "arbor run: %u rank(s) still running %d s after the stop: killed\n",
                    left, STOP_GRACE_MS / 1000);
            signal_ranks(pids, alive, n, SIGKILL);
            killed = 1;
        }
        struct timespec tick = {0, 100 * 1000 * 1000};
        int sig = sigtimedwait(sigs, NULL, &tick);
        if (sig == SIGUSR1) {
            print_switches(w, n_sw, t);
            continue;
        }
        if (sig > 0 && sig != SIGCHLD && !*stop_sig) {
            *stop_sig = sig;
            fprintf(stderr, "arbor run: stopped by %s: passing it on to %u rank(s)\n",
                    strsignal(sig), left);
            signal_ranks(pids, alive, n, sig);
            clock_gettime(CLOCK_MONOTONIC, &stopping);
        }
    }
}

/* What arbor run was asked for. */
struct run_opts {
    uint64_t n, job;
    int job_given;
    const char *sw, *topo, *secret, *timeout, *drop, *spin, *io;
    arb_rt_switch_config base; /* the switches it starts */
    char file_secret[ARB_RT_SECRET_MAX + 2];
    char random[2 * 32 + 1];
};

/* One option of arbor run (cli_options). */
static int run_option(int c, const char *v, char **argv, void *ctx)
{
    struct run_opts *o = ctx;
    switch (c) {
    case 'h':
        fputs(run_usage, stdout);
        return CLI_EXIT_OK;
    case 'n':
        if (cli_parse_u64(v, 256, &o->n) < 0 || o->n < 2)
            return cli_error("run", "-n '%s': want 2..256 ranks", v);
        return CLI_GO_ON;
    case 'W':
        o->sw = v;
        return CLI_GO_ON;
    case 't':
        o->topo = v;
        return CLI_GO_ON;
    case 'J':
        if (cli_parse_u64(v, UINT32_MAX, &o->job) < 0)
            return cli_error("run", "--job '%s': want 0..%u", v, UINT32_MAX);
        o->job_given = 1;
        return CLI_GO_ON;
    case 'K':
        if (!*v || strlen(v) > ARB_RT_SECRET_MAX)
            return cli_error("run", "--secret: want 1..%d bytes", ARB_RT_SECRET_MAX);
        o->secret = v;
        return CLI_GO_ON;
    case 'k':
        if (read_secret_file(v, o->file_secret, sizeof o->file_secret) != 0) return CLI_EXIT_USAGE;
        o->secret = o->file_secret;
        return CLI_GO_ON;
    case 'T': {
        arb_time t;
        if (arb_topo_parse_time(v, &t) < 0 || t == 0)
            return cli_error("run", "--timeout '%s': want a duration such as 30s", v);
        o->timeout = v;
        return CLI_GO_ON;
    }
    case 'D': {
        double d;
        if (cli_parse_fraction(v, &d) < 0)
            return cli_error("run", "--drop '%s': want a fraction in [0, 1)", v);
        o->drop = v;
        return CLI_GO_ON;
    }
    default: {
        int rc = cli_switch_option("run", "switch-", c, v, argv, &o->base);
        if (rc == CLI_GO_ON && c == CLI_OPT_SPIN) o->spin = v; /* for the ranks too */
        if (rc == CLI_GO_ON && c == CLI_OPT_IO) o->io = v;
        return rc;
    }
    }
}

/* The options into o, COMMAND at argv[*cmd]: CLI_GO_ON, or an exit
 * status. */
static int parse_options(int argc, char **argv, struct run_opts *o, int *cmd)
{
    static const struct option opts[] = {{"switch", required_argument, NULL, 'W'},
                                         {"topo", required_argument, NULL, 't'},
                                         {"job", required_argument, NULL, 'J'},
                                         {"secret", required_argument, NULL, 'K'},
                                         {"secret-file", required_argument, NULL, 'k'},
                                         {"timeout", required_argument, NULL, 'T'},
                                         {"drop", required_argument, NULL, 'D'},
                                         CLI_SWITCH_OPTIONS("switch-"),
                                         {"help", no_argument, NULL, 'h'},
                                         {0, 0, 0, 0}};
    /* '+': options end at COMMAND (its own options are its own), or at -- */
    int rc = cli_options(argc, argv, "+:n:h", opts, run_option, o);
    if (rc != CLI_GO_ON) return rc;
    *cmd = optind;
    if (o->n == 0) return cli_error("run", "give the number of ranks with -n N");
    if (optind >= argc) return cli_error("run", "no COMMAND to run; see 'arbor run --help'");
    return CLI_GO_ON;
}

/* The job's secret and id: with --switch, the running switch's (a random
 * secret could never match), else a random secret unless given.
 * CLI_GO_ON, or an exit status. */
static int job_credentials(struct run_opts *o)
{
    if (o->sw) {
        char err[256];
        if (arb_rt_addr_check(o->sw, err, sizeof err) < 0)
            return cli_error("run", "--switch: %s", err);
    }
    if (o->sw && !o->secret) {
        /* a switch that runs already admits the job only with its secret:
         * a random one could never match */
        const char *e = getenv("ARBOR_SECRET");
        if (!e || !*e || strlen(e) > ARB_RT_SECRET_MAX)
            return cli_error("run",
                             "--switch needs the job's secret: give --secret-file FILE, --secret S "
                             "or ARBOR_SECRET");
        o->secret = e;
    }
    if (o->sw && !o->job_given && getenv("ARBOR_JOB")) {
        const char *e = getenv("ARBOR_JOB");
        if (cli_parse_u64(e, UINT32_MAX, &o->job) < 0)
            return cli_error("run", "ARBOR_JOB='%s': want 0..%u", e, UINT32_MAX);
    }
    if (!o->secret) {
        if (random_secret(o->random, sizeof o->random) < 0)
            return cli_error("run", "libsodium failed to initialise");
        o->secret = o->random;
    }
    return CLI_GO_ON;
}

/* The fabric the ranks join: its switches started here, or (--switch) the
 * star of one that runs already. 0 or an exit status. */
static int open_fabric(const struct run_opts *o, struct swt **w, uint32_t *n_sw, arb_topo **t)
{
    int rc = 0;
    if (!o->sw) {
        rc = start_fabric(o->topo, (uint32_t)o->job, o->secret, &o->base, w, n_sw, t);
    } else {
        char err[256];
        if (arb_topo_new(t, o->topo, NULL, err, sizeof err) < 0)
            rc = cli_error("run", "--topo: %s", err);
        else if (arb_topo_height(*t) != 1)
            rc =
                cli_error("run", "--switch needs a one-switch fabric (star); %s has more", o->topo);
    }
    if (rc == 0 && o->n > arb_topo_n_hosts(*t))
        rc = cli_error("run", "%llu ranks do not fit %s (%u hosts)", (unsigned long long)o->n,
                       o->topo, arb_topo_n_hosts(*t));
    return rc;
}

/*
 * Ranks that outnumber the cores many times contend with the switches this
 * process runs for them. With equal shares a switch serving N ranks gets about
 * 1/(N + 1) of the CPU for N times a rank's work: it drops what its socket
 * cannot hold, and the ranks' retries of what it dropped take the CPU it
 * lacks (64 ranks on two cores: a Barrier of 3.4 s and 13.5 k datagrams a
 * rank; 128 ranks missed the default 30 s deadline, and 256 did not join in
 * it). So past CLI_PROCS_PER_CORE ranks a core (cli.h) they run at nice +RANK_NICE, and
 * a switch with work runs first (a few ranks a core keep their priority: on
 * a machine busy with other work, niced ranks would wait for it). Not with
 * --switch: its switch is another process's business.
 */
#define RANK_NICE 19

/*
 * A wait that blocks costs a wake-up, and on few cores a wake-up waits for
 * a core: looking again for a while, yielding the core between looks, is
 * cheaper (docs/runtime.md section 7: 4 ranks on 2 cores, a 1 KiB
 * AllReduce's median from 317-535 us to 183-263 us with 200 us). With more
 * ranks a core the spinners would take the switches' turns: no spin there,
 * and none where the user chose (--spin, ARBOR_SPIN) or the switch is
 * another process's.
 */
#define SPIN_DEFAULT "200us"

static void default_spin(struct run_opts *o)
{
    if (o->spin || getenv("ARBOR_SPIN") || o->sw || !cli_fits_cores(o->n)) return;
    if (cli_parse_spin(SPIN_DEFAULT, &o->base.spin) == 0) o->spin = SPIN_DEFAULT;
}

static void rank_priority(const struct run_opts *o)
{
    if (o->sw || sysconf(_SC_NPROCESSORS_ONLN) < 1 || cli_fits_cores(o->n)) return;
    errno = 0;
    int now = getpriority(PRIO_PROCESS, 0);
    if (errno == 0) setpriority(PRIO_PROCESS, 0, now + RANK_NICE);
}

/* Rank r, in the child: the ARBOR_* environment, then COMMAND. */
static void exec_rank(const struct run_opts *o, uint32_t r, const char *swa, const char *program,
                      char **cmd, const sigset_t *old_mask, pid_t parent)
{
    char rank_s[16], size_s[16], job_s[16];
    snprintf(rank_s, sizeof rank_s, "%u", r);
    snprintf(size_s, sizeof size_s, "%llu", (unsigned long long)o->n);
    snprintf(job_s, sizeof job_s, "%llu", (unsigned long long)o->job);
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    /* the signals arbor run passes on must reach the ranks, even
     * where arbor run was started with them ignored (nohup, a
     * script's background job): an ignored disposition would
     * survive exec */
    for (size_t q = 0; q < N_FWD; q++)
        signal(fwd_signals[q], SIG_DFL);
    /* die with arbor run, even when it is killed by SIGKILL */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent) _exit(127);
    setenv("ARBOR_RANK", rank_s, 1);
    setenv("ARBOR_SIZE", size_s, 1);
    setenv("ARBOR_SWITCH", swa ? swa : "", 1);
    setenv("ARBOR_JOB", job_s, 1);
    setenv("ARBOR_SECRET", o->secret, 1);
    setenv("ARBOR_TOPO", o->topo, 1);
    setenv("ARBOR_HOST_BASE", "0", 1);
    if (o->timeout) setenv("ARBOR_TIMEOUT", o->timeout, 1);
    if (o->drop) setenv("ARBOR_DROP", o->drop, 1);
    if (o->base.no_gso) setenv("ARBOR_GSO", "0", 1);
    if (o->spin) setenv("ARBOR_SPIN", o->spin, 1);
    if (o->io) setenv("ARBOR_IO", o->io, 1);
    if (o->base.seed) {
        char seed_s[24];
        snprintf(seed_s, sizeof seed_s, "%llu", (unsigned long long)o->base.seed);
        setenv("ARBOR_SEED", seed_s, 1);
    }
    rank_priority(o);
    execvp(program, cmd);
    fprintf(stderr, "arbor run: rank %u: cannot run %s: %s\n", r, cmd[0], strerror(errno));
    _exit(127);
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o = {.job = 1, .topo = ARB_RT_TOPO_DEFAULT};
    arb_rt_switch_config_default(&o.base);
    o.base.threads = 1;
    int i = 0;
    int rc = parse_options(argc, argv, &o, &i);
    if (rc != CLI_GO_ON) return rc;
    default_spin(&o);
    char self[4096];
    const char *program = rank_program(argv[i], self, sizeof self);
    if ((rc = check_program(program)) != CLI_GO_ON) return rc;
    if ((rc = job_credentials(&o)) != CLI_GO_ON) return rc;
    /* the stop signals and SIGCHLD are taken by sigtimedwait in reap(), so
     * none is lost between a look and a wait; blocked before the switch
     * threads start, which inherit the mask (the ranks get the old one) */
    sigset_t sigs, old_mask;
    sigemptyset(&sigs);
    for (size_t q = 0; q < N_FWD; q++)
        sigaddset(&sigs, fwd_signals[q]);
    sigaddset(&sigs, SIGCHLD);
    sigaddset(&sigs, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &sigs, &old_mask);
    pid_t parent = getpid();
    struct swt *w = NULL;
    uint32_t n_sw = 0;
    arb_topo *t = NULL;
    rc = open_fabric(&o, &w, &n_sw, &t);
    pid_t pids[256];
    uint32_t started = 0;
    for (uint32_t r = 0; rc == 0 && r < o.n; r++) {
        const char *swa = o.sw ? o.sw : leaf_of(t, w, n_sw, r);
        pid_t p = fork();
        if (p < 0) {
            rc = cli_error("run", "fork: %s", strerror(errno));
            break;
        }
        if (p == 0) exec_rank(&o, r, swa, program, argv + i, &old_mask, parent);
        pids[started++] = p;
    }
    int failed = 0, stop_sig = 0;
    reap(pids, started, &failed, &stop_sig, &sigs, w, n_sw, t);
    stop_fabric(w, n_sw, NULL);
    arb_topo_free(t);
    if (rc) return rc;
    if (stop_sig) return 128 + stop_sig;
    return failed ? failed : CLI_EXIT_OK;
}
