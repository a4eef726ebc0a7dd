/*
 * arbor mpirun: an unmodified MPI program over Arbor -- a switch on
 * loopback (a thread of this process, as arbor run starts it), a fresh job
 * secret, and mpirun with the ARBOR_* variables passed by -x and
 * libarbor_mpi.so preloaded into the ranks (docs/mpi.md).
 */
#define _GNU_SOURCE
#include "arbor/rt.h"
#include "arbor/topo.h"
#include "cli.h"

#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ARB_INSTALL_LIBDIR
#define ARB_INSTALL_LIBDIR "lib"
#endif

/* Jobs admitted for one run: MPI_COMM_WORLD's and one per communicator
 * duplicated from it (the interposer's AMPI_DUPS_MAX + 1, mpi/ampi_int.h). */
#define MPIRUN_JOBS 16

static const char mpirun_usage[] =
    "usage: arbor mpirun [--job ID] [--timeout T] [--verbose] [--stats] [--no-preload]\n"
    "                    [MPIRUN OPTIONS...] -- PROGRAM [ARGS...]\n"
    "\n"
    "Run an MPI program with its collectives over Arbor: starts a switch on\n"
    "loopback, makes the job's secret, and runs\n"
    "  mpirun MPIRUN OPTIONS -x ARBOR_SWITCH -x ARBOR_JOB -x ARBOR_SECRET\n"
    "         -x LD_PRELOAD=libarbor_mpi.so [-x ARBOR_...] PROGRAM ARGS\n"
    "Every ARBOR_* variable of the environment passes to the ranks too\n"
    "(ARBOR_TIMEOUT, ARBOR_WINDOW, ARBOR_MPI_VERBOSE, ...). The ranks run on\n"
    "this machine (the switch listens on 127.0.0.1).\n"
    "\n"
    "  --job ID       the job id of MPI_COMM_WORLD (default 1); duplicates of it\n"
    "                 take ID+1 .. ID+15\n"
    "  --timeout T    a call's deadline, e.g. 10s (ARBOR_TIMEOUT)\n"
    "  --verbose      each rank prints at MPI_Finalize how many calls and bytes\n"
    "                 went over Arbor and over MPI, and why (ARBOR_MPI_VERBOSE=1)\n"
    "  --stats        print the switch's counters when the run ends\n"
    "  --no-preload   do not preload libarbor_mpi.so (PROGRAM links it itself)\n"
    "\n"
    "mpirun is the one on PATH (ARBOR_MPIRUN names another). Exit status: 0 when\n"
    "mpirun exited 0; 1 when it failed (one line with its status); 2 bad usage;\n"
    "128 + the signal when stopped by SIGINT, SIGTERM or SIGHUP, which is passed\n"
    "on to mpirun.\n";

/* libarbor_mpi.so beside this arbor (the build tree) or in the install's
 * library directory; ARBOR_MPI_LIB names it outright. 0, or -1 when none. */
static int find_interposer(char *path, size_t len)
{
    const char *env = getenv("ARBOR_MPI_LIB");
    if (env && *env) {
        snprintf(path, len, "%s", env);
        return access(path, R_OK) == 0 ? 0 : -1;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = '\0';
    const char *dir = dirname(self);
    snprintf(path, len, "%s/libarbor_mpi.so", dir);
    if (access(path, R_OK) == 0) return 0;
    snprintf(path, len, "%s/../%s/libarbor_mpi.so", dir, ARB_INSTALL_LIBDIR);
    return access(path, R_OK) == 0 ? 0 : -1;
}

/* The argument vector of mpirun: argv[0] the launcher, the user's mpirun
 * options, -x for each variable, then the program. */
struct argvec {
    char **v;
    int n, cap;
    char **own; /* the names export_arbor_vars made, freed with the vector */
    int n_own;
};

static int push(struct argvec *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? 2 * a->cap : 64;
        char **v = realloc(a->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = (char *)s;
    a->v[a->n] = NULL;
    return 0;
}

/* -x NAME for every ARBOR_* variable of the environment (ours set first). */
static int export_arbor_vars(struct argvec *a)
{
    extern char **environ;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "ARBOR_", 6) != 0) continue;
        size_t k = strcspn(*e, "=");
        char **own = realloc(a->own, (size_t)(a->n_own + 1) * sizeof *own);
        if (!own) return -1;
        a->own = own;
        char *name = strndup(*e, k);
        if (!name) return -1;
        own[a->n_own++] = name;
        if (push(a, "-x") < 0 || push(a, name) < 0) return -1;
    }
    return 0;
}

/* Our options among the mpirun ones: 1 taken (with *i moved past its
 * value), 0 not ours, or an exit status (as -status - 1). */
struct mpirun_opts {
    uint64_t job;
    const char *timeout;
    int verbose, stats, no_preload;
};

static int take_option(int argc, char **argv, int *i, struct mpirun_opts *o)
{
    const char *a = argv[*i];
    if (strcmp(a, "--verbose") == 0) return o->verbose = 1;
    if (strcmp(a, "--stats") == 0) return o->stats = 1;
    if (strcmp(a, "--no-preload") == 0) return o->no_preload = 1;
    int is_job = strcmp(a, "--job") == 0, is_t = strcmp(a, "--timeout") == 0;
    if (!is_job && !is_t) return 0;
    if (*i + 1 >= argc || strcmp(argv[*i + 1], "--") == 0) {
        cli_error("mpirun", "%s needs a value", a);
        return -CLI_EXIT_USAGE - 1;
    }
    const char *v = argv[++*i];
    if (is_job && (cli_parse_u64(v, UINT32_MAX - MPIRUN_JOBS, &o->job) < 0)) {
        cli_error("mpirun", "--job '%s': want 0..%u", v, UINT32_MAX - MPIRUN_JOBS);
        return -CLI_EXIT_USAGE - 1;
    }
    arb_time t;
    if (is_t && (arb_topo_parse_time(v, &t) < 0 || t == 0)) {
        cli_error("mpirun", "--timeout '%s': want a duration such as 30s", v);
        return -CLI_EXIT_USAGE - 1;
    }
    if (is_t) o->timeout = v;
    return 1;
}

/* Wait for mpirun, passing on the stop signals; its exit status turned
 * into ours. */
static int wait_mpirun(pid_t pid, const sigset_t *sigs)
{
    int stop_sig = 0;
    for (;;) {
        int st = 0;
        pid_t p = waitpid(pid, &st, WNOHANG);
        if (p == pid) {
            if (stop_sig) return 128 + stop_sig;
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return CLI_EXIT_OK;
            if (WIFEXITED(st))
                fprintf(stderr, "arbor mpirun: mpirun exited with status %d\n", WEXITSTATUS(st));
            else
                fprintf(stderr, "arbor mpirun: mpirun was killed by signal %d\n",
                        WIFSIGNALED(st) ? WTERMSIG(st) : 0);
            return CLI_EXIT_FAIL;
        }
        if (p < 0 && errno != EINTR) return CLI_EXIT_FAIL;
        struct timespec tick = {0, 100 * 1000 * 1000};
        int sig = sigtimedwait(sigs, NULL, &tick);
        if (sig > 0 && sig != SIGCHLD && !stop_sig) {
            stop_sig = sig;
            fprintf(stderr, "arbor mpirun: stopped by %s: passing it on to mpirun\n",
                    strsignal(sig));
            kill(pid, sig);
        }
    }
}

/* Start mpirun with the job's variables set; its pid, or -1. */
static pid_t start_mpirun(struct argvec *a, const sigset_t *old_mask, pid_t parent)
{
    pid_t p = fork();
    if (p != 0) return p;
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    /* mpirun (and so its ranks) goes with arbor mpirun, even on SIGKILL */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent) _exit(127);
    execvp(a->v[0], a->v);
    fprintf(stderr, "arbor mpirun: cannot run %s: %s\n", a->v[0], strerror(errno));
    _exit(127);
}

int cmd_mpirun(int argc, char **argv)
{
    struct mpirun_opts o = {.job = 1};
    struct argvec a = {0};
    const char *launcher = getenv("ARBOR_MPIRUN");
    push(&a, launcher && *launcher ? launcher : "mpirun");
    int i = 1, dashes = 0;
    for (; i < argc && !dashes; i++) {
        if (cli_is_help(argv[i]) && a.n == 1) {
            fputs(mpirun_usage, stdout);
            free(a.v);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--") == 0) {
            dashes = 1;
            continue;
        }
        int t = take_option(argc, argv, &i, &o);
        if (t < 0) return free(a.v), -t - 1;
        if (t == 0 && push(&a, argv[i]) < 0) return cli_error("mpirun", "out of memory");
    }
    if (!dashes || i >= argc) {
        free(a.v);
        return cli_error("mpirun", "give the program after --: arbor mpirun [MPIRUN OPTIONS] -- "
                                   "PROGRAM [ARGS...]");
    }
    char lib[4200], preload[8400], job_s[16], secret[2 * 32 + 1];
    if (!o.no_preload) {
        if (find_interposer(lib, sizeof lib) < 0) {
            free(a.v);
            return cli_error("mpirun",
                             "libarbor_mpi.so not found beside this arbor nor in ../%s (set "
                             "ARBOR_MPI_LIB, or build with MPI)",
                             ARB_INSTALL_LIBDIR);
        }
        const char *old = getenv("LD_PRELOAD");
        snprintf(preload, sizeof preload, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    }
    if (random_secret(secret, sizeof secret) < 0) {
        free(a.v);
        return cli_error("mpirun", "libsodium failed to initialise");
    }
    /* the switch admits MPI_COMM_WORLD's job and its duplicates' */
    arb_rt_switch_config base;
    arb_rt_switch_config_default(&base);
    for (uint32_t k = 1; k < MPIRUN_JOBS; k++) {
        base.jobs[base.n_jobs].id = (uint32_t)o.job + k;
        base.jobs[base.n_jobs++].secret = secret;
    }
    sigset_t sigs, old_mask;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &sigs, &old_mask);
    struct swt *w = NULL;
    uint32_t n_sw = 0;
    arb_topo *t = NULL;
    int rc = start_fabric(ARB_RT_TOPO_DEFAULT, (uint32_t)o.job, secret, &base, &w, &n_sw, &t);
    if (rc == 0) {
        snprintf(job_s, sizeof job_s, "%llu", (unsigned long long)o.job);
        setenv("ARBOR_SWITCH", w[0].addr, 1);
        setenv("ARBOR_JOB", job_s, 1);
        setenv("ARBOR_SECRET", secret, 1);
        if (o.timeout) setenv("ARBOR_TIMEOUT", o.timeout, 1);
        if (o.verbose) setenv("ARBOR_MPI_VERBOSE", "1", 1);
        if (export_arbor_vars(&a) < 0) rc = cli_error("mpirun", "out of memory");
        if (!o.no_preload) {
            /* -x NAME=VALUE: the ranks get it, mpirun itself does not */
            static char x_preload[8500];
            snprintf(x_preload, sizeof x_preload, "LD_PRELOAD=%s", preload);
            push(&a, "-x");
            push(&a, x_preload);
        }
        for (int k = i; rc == 0 && k < argc; k++)
            if (push(&a, argv[k]) < 0) rc = cli_error("mpirun", "out of memory");
    }
    if (rc == 0) {
        pid_t pid = start_mpirun(&a, &old_mask, getpid());
        if (pid < 0)
            rc = cli_error("mpirun", "fork: %s", strerror(errno));
        else
            rc = wait_mpirun(pid, &sigs);
    }
    stop_fabric(w, n_sw, o.stats ? "arbor mpirun: switch" : NULL);
    arb_topo_free(t);
    for (int k = 0; k < a.n_own; k++)
        free(a.own[k]);
    free(a.own);
    free(a.v);
    return rc;
}
