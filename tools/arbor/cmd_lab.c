/*
 * arbor lab FILE: a scenario's fabric run for real on this machine -- a
 * network namespace per host and switch, veth links shaped to the
 * scenario's rates (scaled), per-link loss by nftables, the real `arbor
 * switch` processes and one `arbor bench` rank per host running the
 * scenario's Arbor collective -- and torn down on every exit path
 * (docs/lab.md). Its JSON uses `arbor sim`'s names for the figures both
 * have.
 */
#define _GNU_SOURCE
#include "arbor/plan.h"
#include "arbor/rt.h"
#include "arbor/scenario.h"
#include "arbor/topo.h"
#include "cli.h"
#include "lab.h"
#include "lab_run.h"
#include "lab_sample.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char lab_usage[] =
    "usage: arbor lab FILE [-s KEY=VALUE]... [--json] [-c PREFIX] [-q] [-- COMMAND [ARGS...]]\n"
    "       arbor lab --clean\n"
    "\n"
    "Build the scenario's fabric from network namespaces on this machine (one per\n"
    "host and per switch, a veth pair per link shaped by tbf to the link's rate\n"
    "times lab.scale in both directions, MTU 9000, each link's loss dropped by\n"
    "nftables), start the real arbor switch processes and one arbor bench rank per\n"
    "host, run the scenario's Arbor collective (workload.kind = arbor: [arbor]\n"
    "collective, dtype; workload.size; workload.ranks), then remove everything.\n"
    "Needs root and the ip and tc commands (nft for loss).\n"
    "\n"
    "With -- COMMAND, the lab runs COMMAND in every host's namespace instead of\n"
    "arbor bench (a plain 'arbor' is this arbor), with the ARBOR_* variables a\n"
    "rank needs and ARBOR_LAB_RANK, ARBOR_LAB_SIZE, ARBOR_LAB_ADDRS (the hosts'\n"
    "addresses by rank), ARBOR_LAB_NS (their namespaces by rank); every host\n"
    "reaches the others through the switches' namespaces, which route IP over\n"
    "the same shaped links (Open MPI over TCP, PyTorch's gloo: bench/lab_vs_mpi).\n"
    "It prints rank 0's output and exits 0 when every rank exited 0.\n"
    "\n"
    "  -s KEY=VALUE  a scenario key (as arbor sim -s) or a key of [lab]:\n"
    "      lab.scale     factor on every link rate, or auto (default): the host\n"
    "                    links at 1 Gbit/s (a 100G scenario runs at 1G)\n"
    "      lab.iters     timed calls (default 5); lab.warmup untimed ones (1)\n"
    "      lab.check     on (default): every call's output checked, exact\n"
    "      lab.deadline  the whole run's bound (default 120s); a call's deadline\n"
    "                    is at most 30 s of it\n"
    "      lab.spin      ranks and switches look again for up to this long before\n"
    "                    blocking for their socket (0: at once; up to 10ms); auto\n"
    "                    (default): 50us while the lab's processes are at most 4\n"
    "                    a core of this machine, else 0\n"
    "  --json        print the results as JSON (arbor sim's names, schema\n"
    "                arbor-lab/1, docs/schema/arbor-lab.schema.json)\n"
    "  -c, --csv PREFIX  write arbor sim --csv's files, for arbor plot PREFIX:\n"
    "                PREFIX-util.csv and -queue.csv (each port class's tbf\n"
    "                sampled every run.sample / lab.scale, at least 1 ms),\n"
    "                -ranks.csv (each rank's mean done time), -flows.csv (none)\n"
    "  -q            no progress lines on stderr\n"
    "  --clean       remove the namespaces left by lab runs that were killed\n"
    "                (SIGKILL leaves no chance to clean up)\n"
    "\n"
    "SIGINT, SIGTERM and SIGHUP stop the run and remove the lab (exit 128 + the\n"
    "signal). Exit status: 0 done and exact, 1 the run failed (one line names\n"
    "what was lost), 2 bad usage or no root / ip here.\n";

#define LAB_RANKS_MAX 256

static const char *setting(const arb_scenario *sc, const char *sec, const char *key)
{
    const char *v = arb_scenario_get(sc, sec, key);
    return v ? v : "";
}

/* The [lab] keys as this command uses them (their syntax is the scenario
 * parser's: checked already); 0, or an exit status for a value out of
 * this command's range. */
static int lab_opts_of(const arb_scenario *sc, struct lab_opts *o)
{
    const char *v = setting(sc, "lab", "scale");
    char *end;
    o->scale = strcmp(v, "auto") == 0 ? 0 : strtod(v, &end);
    if (strcmp(v, "auto") != 0 && (end == v || *end || !(o->scale > 0) || o->scale > 1))
        return cli_error("lab", "lab.scale '%s': want auto or a factor in (0, 1]", v);
    o->iters = strtoull(setting(sc, "lab", "iters"), NULL, 10);
    o->warmup = strtoull(setting(sc, "lab", "warmup"), NULL, 10);
    v = setting(sc, "lab", "check");
    o->check = !strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "true");
    o->deadline_text = setting(sc, "lab", "deadline");
    o->spin = setting(sc, "lab", "spin");
    o->spin_auto = strcmp(o->spin, "auto") == 0;
    if (!o->spin_auto && cli_parse_spin(o->spin, &o->spin_ps) < 0)
        return cli_error("lab", "lab.spin '%s': want auto, 0 or a duration up to 10ms, e.g. 50us",
                         o->spin);
    if (arb_topo_parse_time(setting(sc, "run", "sample"), &o->sample) < 0) o->sample = 0;
    if (arb_topo_parse_time(o->deadline_text, &o->deadline) < 0 || o->deadline < ARB_PS_PER_S ||
        o->deadline > 86400 * ARB_PS_PER_S)
        return cli_error("lab", "lab.deadline '%s': want a time of 1s..1d, such as 60s",
                         o->deadline_text);
    return 0;
}

/* arbor.recredit_min, _max, _order: the lab's switches re-credit as the
 * runtime's do (rt.h: 2 ms .. 8 ms, by the timer only). A value set to
 * anything else is refused; unset, each is set to the runtime's, which the
 * report echoes. 0, or an exit status. */
static int lab_recredit(arb_scenario *sc)
{
    static const struct {
        const char *key;
        arb_time rt;
    } timers[] = {{"recredit_min", ARB_RT_SWITCH_RECREDIT_MIN},
                  {"recredit_max", ARB_RT_SWITCH_RECREDIT_MAX}};
    char set[64], err[256];
    for (size_t i = 0; i < sizeof timers / sizeof timers[0]; i++) {
        const char *v = setting(sc, "arbor", timers[i].key);
        unsigned long long ms = (unsigned long long)(timers[i].rt / ARB_PS_PER_MS);
        arb_time t;
        if (arb_scenario_origin(sc, "arbor", timers[i].key, NULL) &&
            (arb_topo_parse_time(v, &t) < 0 || t != timers[i].rt))
            return cli_error("lab",
                             "arbor.%s = %s: the lab's switches use the runtime's %llums "
                             "(set that or leave it unset)",
                             timers[i].key, v, ms);
        snprintf(set, sizeof set, "arbor.%s=%llums", timers[i].key, ms);
        if (arb_scenario_set(sc, set, err, sizeof err) < 0) return cli_error("lab", "%s", err);
    }
    const char *v = setting(sc, "arbor", "recredit_order");
    /* the parser took it as on/off, true/false, yes/no or 1/0, in any case */
    int on =
        strcasecmp(v, "off") && strcasecmp(v, "false") && strcasecmp(v, "no") && strcmp(v, "0");
    if (arb_scenario_origin(sc, "arbor", "recredit_order", NULL) && on)
        return cli_error("lab",
                         "arbor.recredit_order = %s: the lab's switches re-credit by the "
                         "timer only, as the runtime's (set off or leave it unset)",
                         v);
    if (arb_scenario_set(sc, "arbor.recredit_order=off", err, sizeof err) < 0)
        return cli_error("lab", "%s", err);
    return 0;
}

/* arbor.switch_results: the ranks' ARBOR_SWITCH_RESULTS; unset, the
 * runtime's default (on), which the report echoes. 0, or an exit status. */
static int lab_switch_results(arb_scenario *sc)
{
    char err[256];
    if (arb_scenario_origin(sc, "arbor", "switch_results", NULL)) return 0;
    if (arb_scenario_set(sc, "arbor.switch_results=on", err, sizeof err) < 0)
        return cli_error("lab", "%s", err);
    return 0;
}

/* ---- the run ------------------------------------------------------------ */

static volatile sig_atomic_t lab_signal;

static void on_signal(int sig)
{
    lab_signal = sig;
}

/* The workload as the lab runs it; 0 or an exit status (bad usage). */
static int job_of(const arb_scenario *sc, const arb_topo *t, const struct lab_opts *o,
                  struct lab_job *j)
{
    if (strcmp(setting(sc, "workload", "kind"), "arbor") != 0)
        return cli_error("lab",
                         "workload.kind = %s: the lab runs an Arbor collective only "
                         "(workload.kind = arbor)",
                         setting(sc, "workload", "kind"));
    if (strcmp(setting(sc, "arbor", "jobs"), "1") != 0)
        return cli_error("lab", "arbor.jobs = %s: the lab runs one job",
                         setting(sc, "arbor", "jobs"));
    if (*setting(sc, "workload", "hosts"))
        return cli_error("lab", "workload.hosts: the lab puts rank r on host r (leave it empty)");
    int c = arb_coll_parse(setting(sc, "arbor", "collective"));
    if (c < 0) return cli_error("lab", "arbor.collective: unknown");
    j->coll = (arb_coll)c;
    j->dtype = setting(sc, "arbor", "dtype");
    uint64_t ranks = strtoull(setting(sc, "workload", "ranks"), NULL, 10);
    if (ranks == 0) ranks = arb_topo_n_hosts(t);
    if (ranks < 2 || ranks > LAB_RANKS_MAX || ranks > arb_topo_n_hosts(t))
        return cli_error("lab", "%llu ranks: want 2..%d, at most the fabric's %u hosts",
                         (unsigned long long)ranks, LAB_RANKS_MAX, arb_topo_n_hosts(t));
    j->ranks = (uint32_t)ranks;
    j->root = (uint32_t)strtoul(setting(sc, "arbor", "root"), NULL, 10);
    if (j->root >= j->ranks) j->root = 0;
    uint64_t pl = strtoull(setting(sc, "arbor", "payload"), NULL, 10);
    if (pl % 8)
        return cli_error("lab", "arbor.payload = %llu: the runtime takes a multiple of 8 bytes",
                         (unsigned long long)pl);
    const char *sz = setting(sc, "workload", "size");
    if (arb_parse_size(sz, strlen(sz), 4ull << 30, &j->bytes) < 0)
        return cli_error("lab", "workload.size '%s': at most 4G in the lab", sz);
    const arb_node *h = arb_topo_node(t, 0);
    j->host_rate = arb_topo_port(t, h->first_up)->rate;
    j->scale = o->scale > 0 ? o->scale : 1e9 / (double)j->host_rate;
    if (j->scale > 1) j->scale = 1;
    j->loss = strtod(setting(sc, "fabric", "loss"), NULL);
    const char *q = setting(sc, "switch", "queue");
    if (arb_parse_size(q, strlen(q), UINT32_MAX, &j->queue) < 0) j->queue = 2u << 20;
    unsigned char rnd[16];
    FILE *f = fopen("/dev/urandom", "r");
    if (!f || fread(rnd, 1, sizeof rnd, f) != sizeof rnd) memset(rnd, 0x5a, sizeof rnd);
    if (f) fclose(f);
    for (int i = 0; i < 16; i++)
        snprintf(j->secret + 2 * i, 3, "%02x", rnd[i]);
    ssize_t n = readlink("/proc/self/exe", j->self, sizeof j->self - 1);
    if (n <= 0) return cli_error("lab", "cannot find this arbor (/proc/self/exe)");
    j->self[n] = 0;
    return 0;
}

static void progress(int quiet, const char *fmt, ...) ARB_PRINTF(2, 3);
static void progress(int quiet, const char *fmt, ...)
{
    if (quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "arbor lab: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Wait for every file to exist, at most ms: 0, or -1 (L->stop or timeout). */
static int wait_files(struct lab *L, char (*paths)[128], uint32_t n, unsigned ms)
{
    uint64_t end = lab_now_ms() + ms;
    for (uint32_t i = 0; i < n; i++)
        while (access(paths[i], F_OK) != 0) {
            if (*L->stop || lab_now_ms() >= end) return -1;
            usleep(5000);
        }
    return 0;
}

/* Every switch of the fabric as an `arbor switch` in its namespace,
 * peered with the switches it has links to; 0 or -1 with L->err. */
static int start_switches(struct lab *L, const struct lab_job *j, const struct lab_opts *o)
{
    const arb_topo *t = L->t;
    char jobf[96];
    snprintf(jobf, sizeof jobf, "%s/jobs", L->dir);
    FILE *f = fopen(jobf, "w");
    if (!f) {
        snprintf(L->err, sizeof L->err, "%s: %s", jobf, strerror(errno));
        return -1;
    }
    fprintf(f, "1 %s\n", j->secret);
    fclose(f);
    uint32_t first = arb_topo_n_hosts(t), n = L->n_nodes - first;
    char(*ports)[128] = calloc(n, sizeof *ports);
    if (!ports) return -1;
    char forv[32];
    snprintf(forv, sizeof forv, "%llu", (unsigned long long)(o->deadline / ARB_PS_PER_S + 10));
    int rc = 0;
    for (uint32_t s = 0; s < n && rc == 0; s++) {
        uint32_t i = first + s;
        const arb_node *nd = arb_topo_node(t, i);
        char node[24], errf[128], *argv[2 * ARB_RT_SWITCH_MAX_PEERS + 20];
        char peers[ARB_RT_SWITCH_MAX_PEERS][64];
        snprintf(node, sizeof node, "%u.%u", nd->level, nd->index);
        snprintf(ports[s], sizeof ports[s], "%s/port-%s", L->dir, node);
        snprintf(errf, sizeof errf, "%s/switch-%s.err", L->dir, node);
        int a = 0;
        argv[a++] = (char *)j->self;
        argv[a++] = "switch";
        argv[a++] = "--listen";
        argv[a++] = "0.0.0.0:17470";
        argv[a++] = "--topo";
        argv[a++] = (char *)arb_topo_spec(t);
        argv[a++] = "--node";
        argv[a++] = node;
        argv[a++] = "--job-file";
        argv[a++] = jobf;
        argv[a++] = "--port-file";
        argv[a++] = ports[s];
        argv[a++] = "--for";
        argv[a++] = forv;
        argv[a++] = "--spin";
        argv[a++] = (char *)o->spin;
        uint32_t np = 0;
        for (uint32_t q = 0; q < L->n_links; q++)
            for (int e = 0; e < 2; e++) {
                const struct lab_link *l = &L->links[q];
                if (l->node[e] != i) continue;
                const arb_node *pn = arb_topo_node(t, l->node[!e]);
                if (pn->kind != ARB_NODE_SWITCH || np == ARB_RT_SWITCH_MAX_PEERS) continue;
                int dup = 0;
                char pv[64];
                snprintf(pv, sizeof pv, "%u.%u=%s:%d", pn->level, pn->index, l->addr[!e], LAB_PORT);
                for (uint32_t x = 0; x < np; x++)
                    dup |= strncmp(peers[x], pv, strcspn(pv, "=")) == 0;
                if (dup) continue;
                memcpy(peers[np], pv, sizeof pv);
                argv[a++] = "--peer";
                argv[a++] = peers[np++];
            }
        argv[a] = NULL;
        if (lab_spawn(L, i, argv, NULL, NULL, errf) < 0) rc = -1;
    }
    if (rc == 0 && wait_files(L, ports, n, 10000) < 0) {
        if (!*L->stop) snprintf(L->err, sizeof L->err, "a switch did not start within 10 s");
        rc = -1;
    }
    free(ports);
    return rc;
}

/* The arbor bench command line of rank r's run of the job into argv
 * (at least 24 entries); strings in `bufs`, which must outlive it. */
struct bench_args {
    char size[32], iters[32], warm[32], root[16], rec[128];
};

static void bench_argv(const struct lab *L, const struct lab_job *j, const struct lab_opts *o,
                       uint32_t r, struct bench_args *b, char **argv)
{
    snprintf(b->size, sizeof b->size, "%llu", (unsigned long long)j->bytes);
    snprintf(b->iters, sizeof b->iters, "%llu", (unsigned long long)o->iters);
    snprintf(b->warm, sizeof b->warm, "%llu", (unsigned long long)o->warmup);
    snprintf(b->root, sizeof b->root, "%u", j->root);
    snprintf(b->rec, sizeof b->rec, "%s/rank-%u.rec", L->dir, r);
    int a = 0;
    argv[a++] = (char *)j->self;
    argv[a++] = "bench";
    argv[a++] = (char *)arb_coll_name(j->coll);
    argv[a++] = "-b";
    argv[a++] = b->size;
    argv[a++] = "-e";
    argv[a++] = b->size;
    argv[a++] = "-n";
    argv[a++] = b->iters;
    argv[a++] = "-w";
    argv[a++] = b->warm;
    if (j->coll != ARB_COLL_BARRIER) {
        argv[a++] = "-d";
        argv[a++] = (char *)j->dtype;
    }
    if (j->coll == ARB_COLL_REDUCE || j->coll == ARB_COLL_BROADCAST) {
        argv[a++] = "-r";
        argv[a++] = b->root;
    }
    if (o->check) argv[a++] = "-c";
    argv[a++] = "--record";
    argv[a++] = b->rec;
    argv[a] = NULL;
}

/* What every rank's environment shares (NAME=VALUE each). */
struct rank_env {
    char tmo[48], rate[48], secret[64], topo[160], size[32], cc[48], payload[48], window[48];
    char swres[32], spin[48];
    char lsize[32], *addrs, *names;
};

static int rank_env_make(const struct lab *L, const struct lab_job *j, const struct lab_opts *o,
                         const arb_scenario *sc, struct rank_env *e)
{
    arb_time call = o->deadline < 30 * ARB_PS_PER_S ? o->deadline : 30 * ARB_PS_PER_S;
    snprintf(e->tmo, sizeof e->tmo, "ARBOR_TIMEOUT=%llums",
             (unsigned long long)(call / ARB_PS_PER_MS));
    snprintf(e->rate, sizeof e->rate, "ARBOR_LINE_RATE=%.0f", (double)j->host_rate * j->scale);
    snprintf(e->secret, sizeof e->secret, "ARBOR_SECRET=%s", j->secret);
    snprintf(e->topo, sizeof e->topo, "ARBOR_TOPO=%s", arb_topo_spec(L->t));
    snprintf(e->size, sizeof e->size, "ARBOR_SIZE=%u", j->ranks);
    snprintf(e->lsize, sizeof e->lsize, "ARBOR_LAB_SIZE=%u", j->ranks);
    snprintf(e->cc, sizeof e->cc, "ARBOR_CC=%s", setting(sc, "arbor", "cc"));
    snprintf(e->payload, sizeof e->payload, "ARBOR_PAYLOAD=%s", setting(sc, "arbor", "payload"));
    const char *w = setting(sc, "arbor", "window");
    snprintf(e->window, sizeof e->window, "ARBOR_WINDOW=%s", strcmp(w, "0") ? w : "auto");
    const char *sr = setting(sc, "arbor", "switch_results"); /* as the parser took it */
    int sr_on =
        strcasecmp(sr, "off") && strcasecmp(sr, "false") && strcasecmp(sr, "no") && strcmp(sr, "0");
    snprintf(e->swres, sizeof e->swres, "ARBOR_SWITCH_RESULTS=%d", sr_on);
    snprintf(e->spin, sizeof e->spin, "ARBOR_SPIN=%s", o->spin);
    size_t na = 32 + 16 * (size_t)j->ranks, nn = 32 + 41 * (size_t)j->ranks;
    e->addrs = malloc(na);
    e->names = malloc(nn);
    if (!e->addrs || !e->names) return -1;
    size_t pa = (size_t)snprintf(e->addrs, na, "ARBOR_LAB_ADDRS=");
    size_t pn = (size_t)snprintf(e->names, nn, "ARBOR_LAB_NS=");
    for (uint32_t r = 0; r < j->ranks; r++) {
        const arb_node *h = arb_topo_node(L->t, r);
        const char *me = lab_addr_toward(L, r, arb_topo_port(L->t, h->first_up)->peer);
        pa += (size_t)snprintf(e->addrs + pa, na - pa, "%s%s", r ? " " : "", me ? me : "-");
        pn += (size_t)snprintf(e->names + pn, nn - pn, "%s%s", r ? " " : "", L->ns[r]);
    }
    return 0;
}

/* The ranks: arbor bench (or the -- COMMAND) in host r's namespace for
 * r < ranks; their pids into pids[]. 0 or -1 with L->err. */
static int start_ranks(struct lab *L, const struct lab_job *j, const struct lab_opts *o,
                       const arb_scenario *sc, char **cmd, pid_t *pids)
{
    const arb_topo *t = L->t;
    struct rank_env e;
    memset(&e, 0, sizeof e);
    int rc = rank_env_make(L, j, o, sc, &e);
    if (rc < 0) snprintf(L->err, sizeof L->err, "out of memory");
    for (uint32_t r = 0; r < j->ranks && rc == 0; r++) {
        const arb_node *h = arb_topo_node(t, r);
        const char *sw = lab_addr_toward(L, arb_topo_port(t, h->first_up)->peer, r);
        if (!sw) {
            snprintf(L->err, sizeof L->err, "host %u has no link to its leaf", r);
            rc = -1;
            break;
        }
        char rank[32], lrank[32], swv[48], out[128], errf[128];
        snprintf(rank, sizeof rank, "ARBOR_RANK=%u", r);
        snprintf(lrank, sizeof lrank, "ARBOR_LAB_RANK=%u", r);
        snprintf(swv, sizeof swv, "ARBOR_SWITCH=%s:%d", sw, LAB_PORT);
        snprintf(out, sizeof out, "%s/rank-%u.out", L->dir, r);
        snprintf(errf, sizeof errf, "%s/rank-%u.err", L->dir, r);
        char *env[] = {
            rank,    e.size,  swv,     "ARBOR_JOB=1", e.secret, e.topo, "ARBOR_HOST_BASE=0",
            e.tmo,   e.rate,  e.cc,    e.payload,     e.window, lrank,  e.lsize,
            e.addrs, e.names, e.swres, e.spin,        NULL};
        char *argv[24];
        struct bench_args b;
        char **run = argv;
        if (cmd)
            run = cmd;
        else
            bench_argv(L, j, o, r, &b, argv);
        char *first = run[0];
        if (cmd && strcmp(cmd[0], "arbor") == 0) run[0] = (char *)j->self;
        if ((pids[r] = lab_spawn(L, r, run, env, out, errf)) < 0) rc = -1;
        run[0] = first;
    }
    free(e.addrs);
    free(e.names);
    return rc;
}

/* Wait for the ranks: 0 every one exited 0; else the first rank that
 * failed (its index + 1), or -1 for the deadline or a signal. */
static int wait_ranks(struct lab *L, pid_t *pids, uint32_t n, uint64_t deadline_ms, int *status,
                      struct lab_sampler *S)
{
    uint32_t left = n;
    int failed = 0;
    uint64_t grace_end = 0;
    while (left) {
        if (*L->stop) return -1;
        uint64_t now = lab_now_ms();
        if (now >= deadline_ms || (grace_end && now >= grace_end)) return failed ? failed : -1;
        for (uint32_t r = 0; r < n; r++) {
            int st;
            if (pids[r] <= 0 || waitpid(pids[r], &st, WNOHANG) != pids[r]) continue;
            pids[r] = 0;
            left--;
            if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && !failed) {
                failed = (int)r + 1;
                *status = st;
                /* the others fail too, naming what they saw: give them a
                 * moment to say it */
                grace_end = now + 3000;
            }
        }
        lab_sample_poll(S);
        uint64_t wait = lab_sample_wait_ns(S) / 1000;
        usleep(wait < 10000 ? (useconds_t)wait : 10000);
    }
    return failed;
}

/* ---- --clean ---------------------------------------------------------------- */

/* Namespaces arblabPID-... whose process is gone: deleted. */
static int clean_stale(void)
{
    DIR *d = opendir("/run/netns");
    if (!d) {
        printf("arbor lab: no namespaces here\n");
        return CLI_EXIT_OK;
    }
    struct lab L;
    memset(&L, 0, sizeof L);
    snprintf(L.dir, sizeof L.dir, "/tmp/arbor-lab.XXXXXX");
    if (!mkdtemp(L.dir)) {
        closedir(d);
        return cli_error("lab", "cannot make a directory in /tmp");
    }
    struct dirent *e;
    unsigned n = 0, left = 0;
    while ((e = readdir(d))) {
        long pid;
        int end = 0;
        if (sscanf(e->d_name, "arblab%ld-%*4x-%n", &pid, &end) != 1 || !end) continue;
        if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) continue;
        const char *del[] = {"ip", "netns", "del", e->d_name, NULL};
        if (lab_cmd(&L, NULL, del) == 0)
            n++;
        else
            left++;
    }
    closedir(d);
    char path[128];
    snprintf(path, sizeof path, "%s/cmd.err", L.dir);
    unlink(path);
    rmdir(L.dir);
    printf("arbor lab: removed %u namespace(s) of lab runs no longer running\n", n);
    return left ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* ---- the command ------------------------------------------------------------- */

static int in_path(const char *prog)
{
    const char *path = getenv("PATH");
    char buf[4096];
    for (const char *p = path ? path : "/usr/sbin:/usr/bin:/sbin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
        if (access(buf, X_OK) == 0) return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

/* Root, ip and tc (and nft when a link loses): 0, or an exit status. */
static int need_tools(int lossy)
{
    if (geteuid() != 0)
        return cli_error("lab", "needs root: it makes network namespaces, veth links and qdiscs");
    static const char *const tools[] = {"ip", "tc", "nft"};
    static const char *const pkgs[] = {"iproute2", "iproute2", "nftables"};
    for (int i = 0; i < 3; i++)
        if ((i < 2 || lossy) && !in_path(tools[i]))
            return cli_error("lab", "needs the %s command (Debian: %s)%s", tools[i], pkgs[i],
                             i == 2 ? " for the links' loss" : "");
    return 0;
}

static int any_loss(const arb_topo *t, double loss)
{
    if (loss > 0) return 1;
    for (uint32_t p = 0; p < arb_topo_n_ports(t); p++)
        if (arb_topo_link_loss(t, p) > 0) return 1;
    return 0;
}

struct lab_run {
    struct lab L;
    struct lab_job j;
    struct lab_opts o;
    struct lab_figs F;
    struct rank_rec *rr;
    pid_t *pids;
    struct lab_sampler S;
    int quiet, json;
    const char *csv; /* --csv PREFIX */
    char **cmd;      /* -- COMMAND: run it on every host instead of arbor bench */
};

/* Rank r's standard output (a -- COMMAND's), onto ours. */
static void copy_out(const char *dir, uint32_t r)
{
    char path[128], buf[4096];
    snprintf(path, sizeof path, "%s/rank-%u.out", dir, r);
    FILE *f = fopen(path, "r");
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, stdout);
    if (f) fclose(f);
    fflush(stdout);
}

/* With --csv, the links' sampler: every run.sample / lab.scale (the
 * scenario's interval at the lab's pace), at least LAB_SAMPLE_MIN_NS.
 * 0, or -1 with L->err. */
static int sampler_open(struct lab_run *R)
{
    uint64_t ns = 0;
    if (R->csv && R->o.sample > 0) {
        double want = (double)R->o.sample / 1e3 / R->j.scale;
        ns = want < LAB_SAMPLE_MIN_NS ? LAB_SAMPLE_MIN_NS : (uint64_t)want;
    }
    if (lab_sample_open(&R->S, &R->L, ns) == 0) return 0;
    snprintf(R->L.err, sizeof R->L.err, "cannot sample the links: %s", R->S.err);
    return -1;
}

/*
 * lab.spin = auto. Every rank and switch of the lab is a process of this
 * machine; a wait that blocks costs a wake-up, which on few cores waits for
 * a core. While they share the cores lightly (cli_fits_cores, arbor run's
 * rule, with the switches counted), looking again for 50 us first is
 * cheaper (lab-star4, 1 Gbit/s, 1 KiB: median CCT 298-407 us at 0 against
 * 216-426 at 50us, 238-283 at 100us, 301-327 at 200us; docs/lab.md); with
 * more, the spinners would take the others' turns.
 */
#define LAB_SPIN_AUTO "50us"

static void lab_spin_auto(const struct lab *L, const struct lab_job *j, struct lab_opts *o)
{
    if (!o->spin_auto) return;
    uint64_t procs = j->ranks + (uint64_t)(L->n_nodes - arb_topo_n_hosts(L->t));
    o->spin = cli_fits_cores(procs) ? LAB_SPIN_AUTO : "0";
    if (cli_parse_spin(o->spin, &o->spin_ps) < 0) o->spin_ps = 0; /* (both parse) */
}

/* Make the lab, run the job, read the records. 0, or an exit status with
 * *failure set (the run's one line). */
static int run_lab(struct lab_run *R, const arb_scenario *sc, char *failure, size_t flen)
{
    struct lab *L = &R->L;
    uint64_t t0 = lab_now_ms();
    uint64_t deadline = t0 + R->o.deadline / ARB_PS_PER_MS;
    lab_spin_auto(L, &R->j, &R->o);
    progress(R->quiet, "%s: %u namespaces, %u ranks, links x %.6g (names %s-*)",
             arb_topo_spec(L->t), L->n_nodes, R->j.ranks, R->j.scale, L->prefix);
    if (lab_fabric_up(L, R->j.scale, R->j.loss, R->j.queue) < 0 ||
        start_switches(L, &R->j, &R->o) < 0 || sampler_open(R) < 0 ||
        start_ranks(L, &R->j, &R->o, sc, R->cmd, R->pids) < 0) {
        if (*L->stop) return -1;
        snprintf(failure, flen, "cannot build the lab: %s", L->err);
        return CLI_EXIT_FAIL;
    }
    progress(R->quiet, "fabric up in %.1f s; running", (double)(lab_now_ms() - t0) / 1e3);
    int st = 0;
    int w = wait_ranks(L, R->pids, R->j.ranks, deadline, &st, &R->S);
    if (*L->stop) return -1;
    if (R->cmd) copy_out(L->dir, 0);
    R->F.drops = lab_drops(L);
    for (uint32_t r = 0; r < R->j.ranks; r++) {
        char path[128];
        snprintf(path, sizeof path, "%s/rank-%u.rec", L->dir, r);
        lab_read_rec(path, &R->rr[r], R->o.iters);
    }
    R->F.wall_s = (double)(lab_now_ms() - t0) / 1e3;
    if (w < 0) {
        snprintf(failure, flen, "the run passed lab.deadline (%s) before every rank finished",
                 R->o.deadline_text);
        return CLI_EXIT_FAIL;
    }
    if (w > 0) {
        char line[300], path[128];
        snprintf(path, sizeof path, "%s/rank-%d.err", L->dir, w - 1);
        FILE *f = fopen(path, "r");
        line[0] = 0;
        /* the rank's own words: its last line */
        while (f && fgets(line, sizeof line, f)) {
        }
        if (f) fclose(f);
        line[strcspn(line, "\n")] = 0;
        snprintf(failure, flen, "rank %d failed (%s %d): %s", w - 1,
                 WIFSIGNALED(st) ? "signal" : "status",
                 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), *line ? line : "no message");
        return CLI_EXIT_FAIL;
    }
    if (R->cmd) return 0;
    lab_figures(R->rr, R->j.ranks, &R->j, &R->F);
    if (R->F.n_calls < R->o.iters) {
        snprintf(failure, flen, "a rank recorded %u of %llu calls", R->F.n_calls,
                 (unsigned long long)R->o.iters);
        return CLI_EXIT_FAIL;
    }
    if (R->o.check && R->F.wrong) {
        snprintf(failure, flen, "%llu wrong elements", (unsigned long long)R->F.wrong);
        return CLI_EXIT_FAIL;
    }
    return 0;
}

/* The options as read: -s settings in their order, --clean. */
struct lab_args {
    struct lab_run *R;
    const char *sets[256];
    int n_sets, clean;
};

/* One option of arbor lab (cli_options). */
static int lab_option(int c, const char *v, char **argv, void *ctx)
{
    struct lab_args *a = ctx;
    switch (c) {
    case 'h':
        fputs(lab_usage, stdout);
        return CLI_EXIT_OK;
    case 'j':
        a->R->json = 1;
        return CLI_GO_ON;
    case 'q':
        a->R->quiet = 1;
        return CLI_GO_ON;
    case 'c':
        a->R->csv = v;
        return CLI_GO_ON;
    case 'C':
        a->clean = 1;
        return CLI_EXIT_OK;
    case 's':
        if (a->n_sets == 256) return cli_error("lab", "at most 256 -s settings");
        a->sets[a->n_sets++] = v;
        return CLI_GO_ON;
    default:
        return cli_bad_option("lab", c, argv);
    }
}

/* The options, the scenario (FILE with the -s settings) and -- COMMAND:
 * 0, -1 after --help, -2 for --clean, or an exit status. */
static int parse_args(int argc, char **argv, arb_scenario *sc, struct lab_run *R, const char **file)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"set", required_argument, NULL, 's'},
                                         {"clean", no_argument, NULL, 'C'},
                                         {"csv", required_argument, NULL, 'c'},
                                         {0, 0, 0, 0}};
    struct lab_args a = {.R = R};
    int rc = cli_options(argc, argv, ":hjqs:c:", opts, lab_option, &a);
    if (a.clean) return -2;
    if (rc != CLI_GO_ON) return rc == CLI_EXIT_OK ? -1 : rc;
    if (optind >= argc) return cli_error("lab", "give a scenario file; see 'arbor lab --help'");
    *file = argv[optind];
    if (optind + 1 < argc) {
        /* getopt_long moves the "--" ahead of the file */
        if (strcmp(argv[optind - 1], "--") != 0)
            return cli_error("lab", "one scenario file only ('%s'); a command goes after --",
                             argv[optind + 1]);
        R->cmd = argv + optind + 1;
    }
    char err[512];
    if (arb_scenario_load(sc, *file, err, sizeof err) < 0) return cli_error("lab", "%s", err);
    for (int i = 0; i < a.n_sets; i++)
        if (arb_scenario_set(sc, a.sets[i], err, sizeof err) < 0)
            return cli_error("lab", "%s", err);
    rc = lab_recredit(sc);
    if (rc == 0) rc = lab_switch_results(sc);
    return rc ? rc : lab_opts_of(sc, &R->o);
}

/* --csv PREFIX: its directory must take files, before the lab is built
 * for a run whose figures would be lost. 0, or an exit status. */
static int csv_dir_ok(const char *prefix)
{
    size_t n = strlen(prefix);
    if (!n || prefix[n - 1] == '/')
        return cli_error("lab", "--csv '%s': the prefix names a directory, not files", prefix);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", prefix);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        slash[slash == dir] = 0; /* "/x": the root */
    if (access(dir, W_OK) != 0)
        return cli_error("lab", "--csv %s: cannot write in %s: %s", prefix, dir, strerror(errno));
    return 0;
}

int cmd_lab(int argc, char **argv)
{
    struct lab_run R;
    memset(&R, 0, sizeof R);
    arb_scenario *sc;
    if (arb_scenario_new(&sc) < 0) return cli_error("lab", "out of memory");
    const char *file = NULL;
    int rc = parse_args(argc, argv, sc, &R, &file);
    if (rc == -2) {
        arb_scenario_free(sc);
        if (geteuid() != 0) return cli_error("lab", "--clean needs root");
        return clean_stale();
    }
    arb_topo *t = NULL;
    char err[512];
    if (rc == 0 && arb_scenario_fabric(sc, &t, err, sizeof err) < 0)
        rc = cli_error("lab", "%s", err);
    if (rc == 0) rc = job_of(sc, t, &R.o, &R.j);
    if (rc == 0 && R.csv) rc = csv_dir_ok(R.csv);
    if (rc == 0) rc = need_tools(any_loss(t, R.j.loss));
    if (rc != 0) {
        arb_topo_free(t);
        arb_scenario_free(sc);
        return rc < 0 ? CLI_EXIT_OK : rc;
    }
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);
    signal(SIGPIPE, SIG_IGN);
    char failure[700] = "";
    R.rr = calloc(R.j.ranks, sizeof *R.rr);
    R.pids = calloc(R.j.ranks, sizeof *R.pids);
    if (!R.rr || !R.pids || lab_init(&R.L, t, &lab_signal) < 0) {
        snprintf(failure, sizeof failure, "cannot start: %s",
                 R.L.err[0] ? R.L.err : "out of memory");
        rc = CLI_EXIT_FAIL;
    } else {
        rc = run_lab(&R, sc, failure, sizeof failure);
    }
    /* every way out passes here: the lab goes first */
    if (lab_signal) {
        int sig = lab_signal;
        int left = lab_teardown(&R.L);
        fprintf(stderr, "arbor lab: stopped by %s: the lab is removed%s\n", strsignal(sig),
                left ? " (but some namespaces could not be deleted)" : "");
        rc = 128 + sig;
    } else {
        char *json = NULL;
        if (R.json && !R.cmd)
            json = lab_report_json(sc, file, &R.o, &R.L, &R.j, &R.F, R.rr, rc ? failure : NULL);
        int left = lab_teardown(&R.L);
        if (left) fprintf(stderr, "arbor lab: %d namespace(s) could not be deleted\n", left);
        char cerr[300];
        if (R.csv && lab_report_csv(R.csv, &R.j, &R.F, &R.S, !R.cmd, cerr, sizeof cerr) < 0) {
            if (rc == 0)
                snprintf(failure, sizeof failure, "%s", cerr);
            else
                fprintf(stderr, "arbor lab: %s\n", cerr);
            rc = rc ? rc : CLI_EXIT_FAIL;
        }
        if (json) {
            printf("%s\n", json);
            free(json);
        } else if (rc == 0 && !R.cmd) {
            lab_report_text(&R.L, &R.j, &R.o, &R.F);
        }
        if (rc) fprintf(stderr, "arbor lab: %s\n", failure);
        if (lab_signal) rc = 128 + lab_signal;
    }
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    for (uint32_t r = 0; R.rr && r < R.j.ranks; r++) {
        free(R.rr[r].start);
        free(R.rr[r].end);
    }
    free(R.rr);
    free(R.pids);
    free(R.F.calls);
    free(R.F.done);
    lab_sample_close(&R.S);
    arb_topo_free(t);
    arb_scenario_free(sc);
    return rc;
}
