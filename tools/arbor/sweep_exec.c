/*
 * arbor sweep: one task (a point's replication) run through the library,
 * and the engine of one machine: forked workers, each fed one task at a
 * time over its own pipe, so that a slow point does not hold the others
 * back. A worker that dies ends the sweep with an error naming it and its
 * task; the other workers are stopped.
 */
#include "sweep_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* A point's warnings (arb_scenario_set_logger), from its first
 * replication only: a line each on stderr, naming the point. */
static void point_warning(void *user, arb_log_level level, const char *msg)
{
    if (level <= ARB_LOG_WARN)
        fprintf(stderr, "arbor sweep: warning: point %zu: %s\n", *(const size_t *)user, msg);
}

void sweep_run_task(const struct sweep_job *job, uint32_t t, struct sweep_rec *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->task = t;
    unsigned reps = arb_sweep_n_reps(job->sw);
    size_t point = t / reps;
    unsigned rep = t % reps;
    arb_scenario *sc = NULL;
    arb_scenario_result *res = NULL;
    int rc = arb_scenario_new(&sc);
    if (rc < 0) snprintf(rec->msg, sizeof rec->msg, "out of memory");
    if (rc == 0 && rep == 0) {
        arb_logger lg = {point_warning, &point, ARB_LOG_WARN};
        arb_scenario_set_logger(sc, &lg);
    }
    if (rc == 0) rc = arb_sweep_point_load(job->sw, point, sc, rec->msg, sizeof rec->msg);
    for (int i = 0; rc == 0 && i < job->n_sets; i++)
        rc = arb_scenario_set(sc, job->sets[i], rec->msg, sizeof rec->msg);
    if (rc == 0) rc = arb_sweep_replicate(job->sw, rep, sc, rec->msg, sizeof rec->msg);
    if (rc == 0) {
        const char *seed = arb_scenario_get(sc, "run", "seed");
        rec->seed = seed ? strtoull(seed, NULL, 0) : 0;
        rc = arb_scenario_run(sc, NULL, NULL, &res, rec->msg, sizeof rec->msg);
    }
    arb_scenario_free(sc);
    if (rc == 0) {
        const char *why = NULL;
        rec->status = (int32_t)arb_scenario_result_status(res, &why);
        if (rec->status != ARB_SCN_DONE && why) snprintf(rec->msg, sizeof rec->msg, "%s", why);
        if (rec->status == ARB_SCN_INCOMPLETE && !why)
            snprintf(rec->msg, sizeof rec->msg, "run.stop came first");
        char *json = arb_scenario_json(res, NULL);
        cJSON *j = json ? cJSON_Parse(json) : NULL;
        free(json);
        if (j)
            rec->have = cli_figures_of(j, rec->v);
        else
            rc = ARB_ENOMEM;
        cJSON_Delete(j);
        arb_scenario_result_free(res);
        if (rc < 0) snprintf(rec->msg, sizeof rec->msg, "out of memory");
    }
    rec->rc = rc;
}

/* ---- forked workers ------------------------------------------------------ */

struct worker {
    pid_t pid;
    int task_fd; /* we write task numbers */
    int res_fd;  /* we read records */
    long task;   /* the task it runs, or -1 */
};

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 1: n bytes read; 0: end of file before any; -1: an error or a short read. */
static int read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) return got == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return 1;
}

static void worker_main(const struct sweep_job *job, int task_fd, int res_fd)
{
    uint32_t t;
    struct sweep_rec *rec = malloc(sizeof *rec);
    if (!rec) _exit(3);
    for (;;) {
        int r = read_all(task_fd, &t, sizeof t);
        if (r == 0) break; /* no more tasks */
        if (r < 0) _exit(4);
        sweep_run_task(job, t, rec);
        if (write_all(res_fd, rec, sizeof *rec) < 0) _exit(5);
    }
    free(rec);
    _exit(0);
}

/* How a child ended, for messages. */
static void describe_exit(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(buf, len, "ended");
}

static void stop_workers(struct worker *w, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (w[i].task_fd >= 0) close(w[i].task_fd);
        if (w[i].res_fd >= 0) close(w[i].res_fd);
        w[i].task_fd = w[i].res_fd = -1;
        if (w[i].pid > 0) kill(w[i].pid, SIGKILL);
    }
    for (unsigned i = 0; i < n; i++)
        if (w[i].pid > 0) {
            while (waitpid(w[i].pid, NULL, 0) < 0 && errno == EINTR)
                ;
            w[i].pid = 0;
        }
}

static int run_here(const struct sweep_job *job, sweep_put_fn put, void *ctx, char *err,
                    size_t errlen)
{
    struct sweep_rec *rec = malloc(sizeof *rec);
    if (!rec) return arb_errf(err, errlen, -1, "out of memory");
    for (size_t t = 0; t < job->n_tasks; t++) {
        sweep_run_task(job, (uint32_t)t, rec);
        put(ctx, rec);
    }
    free(rec);
    return 0;
}

/* Worker i died (or its pipe broke) while running its task. */
static int worker_died(const struct sweep_job *job, struct worker *w, unsigned n, unsigned i,
                       char *err, size_t errlen)
{
    int status = 0;
    pid_t pid = w[i].pid;
    close(w[i].task_fd);
    close(w[i].res_fd);
    w[i].task_fd = w[i].res_fd = -1;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    w[i].pid = 0;
    char how[96];
    describe_exit(status, how, sizeof how);
    unsigned reps = arb_sweep_n_reps(job->sw);
    if (w[i].task >= 0)
        arb_errf(err, errlen, -1,
                 "worker %u (pid %ld) %s while running point %lu, replication %lu; the sweep is "
                 "stopped",
                 i, (long)pid, how, (unsigned long)(w[i].task / reps),
                 (unsigned long)(w[i].task % reps));
    else
        arb_errf(err, errlen, -1, "worker %u (pid %ld) %s; the sweep is stopped", i, (long)pid,
                 how);
    stop_workers(w, n);
    return -1;
}

/* Give worker i its next task, or close its task pipe when none is left. */
static int feed(struct worker *w, size_t *next, size_t n_tasks)
{
    if (*next >= n_tasks) {
        close(w->task_fd);
        w->task_fd = -1;
        w->task = -1;
        return 0;
    }
    uint32_t t = (uint32_t)*next;
    w->task = (long)t;
    (*next)++;
    return write_all(w->task_fd, &t, sizeof t);
}

static int spawn(const struct sweep_job *job, struct worker *w, unsigned i, char *err,
                 size_t errlen)
{
    int tp[2], rp[2];
    if (pipe(tp) < 0) return arb_errf(err, errlen, -1, "pipe: %s", strerror(errno));
    if (pipe(rp) < 0) {
        close(tp[0]);
        close(tp[1]);
        return arb_errf(err, errlen, -1, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(tp[0]), close(tp[1]), close(rp[0]), close(rp[1]);
        return arb_errf(err, errlen, -1, "fork: %s", strerror(e));
    }
    if (pid == 0) {
#ifdef __linux__
        /* a worker ends with the sweep: a signal that stops the command
         * (SIGTERM, SIGINT from kill) reaches it too */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent) _exit(1);
#else
        (void)parent;
#endif
        /* the other workers' pipes are not this one's: holding them would
         * hide their end from the parent */
        for (unsigned j = 0; j < i; j++) {
            if (w[j].task_fd >= 0) close(w[j].task_fd);
            if (w[j].res_fd >= 0) close(w[j].res_fd);
        }
        close(tp[1]);
        close(rp[0]);
        signal(SIGPIPE, SIG_DFL);
        worker_main(job, tp[0], rp[1]);
    }
    close(tp[0]);
    close(rp[1]);
    w[i].pid = pid;
    w[i].task_fd = tp[1];
    w[i].res_fd = rp[0];
    w[i].task = -1;
    return 0;
}

int sweep_local(const struct sweep_job *job, unsigned procs, sweep_put_fn put, void *ctx, char *err,
                size_t errlen)
{
    if (procs > job->n_tasks) procs = (unsigned)job->n_tasks;
    if (procs <= 1) return run_here(job, put, ctx, err, errlen);
    struct worker *w = calloc(procs, sizeof *w);
    struct pollfd *pf = calloc(procs, sizeof *pf);
    unsigned *who = calloc(procs, sizeof *who);
    struct sweep_rec *rec = malloc(sizeof *rec);
    if (!w || !pf || !who || !rec) {
        free(w), free(pf), free(who), free(rec);
        return arb_errf(err, errlen, -1, "out of memory");
    }
    /* a worker that dies makes our write to it fail, not kill us */
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    int rc = 0;
    unsigned made = 0;
    for (; made < procs && rc == 0; made++) {
        w[made].task_fd = w[made].res_fd = -1;
        rc = spawn(job, w, made, err, errlen);
    }
    if (rc < 0) {
        made--; /* the failed one is not there */
        stop_workers(w, made);
    }
    size_t next = 0, done = 0;
    for (unsigned i = 0; i < made && rc == 0; i++)
        if (feed(&w[i], &next, job->n_tasks) < 0) rc = worker_died(job, w, made, i, err, errlen);
    while (rc == 0 && done < job->n_tasks) {
        nfds_t n = 0;
        for (unsigned i = 0; i < made; i++)
            if (w[i].task >= 0) {
                pf[n].fd = w[i].res_fd;
                pf[n].events = POLLIN;
                pf[n].revents = 0;
                who[n++] = i;
            }
        if (poll(pf, n, -1) < 0) {
            if (errno == EINTR) continue;
            rc = arb_errf(err, errlen, -1, "poll: %s", strerror(errno));
            stop_workers(w, made);
            break;
        }
        for (nfds_t k = 0; k < n && rc == 0; k++) {
            if (!pf[k].revents) continue;
            unsigned i = who[k];
            if (read_all(w[i].res_fd, rec, sizeof *rec) != 1 || rec->task != (uint32_t)w[i].task) {
                rc = worker_died(job, w, made, i, err, errlen);
                break;
            }
            put(ctx, rec);
            done++;
            if (feed(&w[i], &next, job->n_tasks) < 0)
                rc = worker_died(job, w, made, i, err, errlen);
        }
    }
    /* every task done: the workers were told there is no more and exit */
    for (unsigned i = 0; i < made && w[i].pid > 0; i++) {
        int status = 0;
        if (w[i].task_fd >= 0) close(w[i].task_fd);
        while (waitpid(w[i].pid, &status, 0) < 0 && errno == EINTR)
            ;
        close(w[i].res_fd);
        w[i].pid = 0;
        if (rc == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
            char how[96];
            describe_exit(status, how, sizeof how);
            rc = arb_errf(err, errlen, -1, "worker %u %s after its last task", i, how);
        }
    }
    signal(SIGPIPE, old_pipe);
    free(w), free(pf), free(who), free(rec);
    return rc;
}
