/*
 * arbor lab's fabric (lab.h): namespaces, veth links, tbf shaping,
 * nftables loss, processes inside, teardown. Every change to the network
 * is an `ip`, `tc` or `nft` command run in the namespace concerned (entered
 * with setns before exec), so the machine's own namespace is never touched.
 */
#define _GNU_SOURCE
#include "lab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A command of ip, tc or nft that has not returned after this long is
 * killed and counts as failed. */
#define LAB_CMD_MS 20000
/* After SIGTERM, processes get this long before SIGKILL. */
#define LAB_GRACE_MS 2000
/* The nftables table of each namespace with a lossy link. */
#define LAB_NFT_TABLE "arblab"

uint64_t lab_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Enter network namespace ns (in a child, before exec): 0 or -1. */
static int enter_ns(const char *ns)
{
    char path[128];
    snprintf(path, sizeof path, "/run/netns/%s", ns);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = setns(fd, CLONE_NEWNET);
    close(fd);
    return rc;
}

/* In a child: stdout and stderr to these files (NULL: /dev/null). */
static void redirect(const char *out, const char *err)
{
    int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (o >= 0) dup2(o, 1);
    if (e >= 0) dup2(e, 2);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in >= 0) dup2(in, 0);
}

/* Wait for pid at most ms, then kill it: its wait status, or -1. */
static int wait_ms(pid_t pid, unsigned ms)
{
    uint64_t end = lab_now_ms() + ms;
    int st;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) return st;
        if (w < 0 && errno != EINTR) return -1;
        if (lab_now_ms() >= end) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
            return -1;
        }
        sleep_ms(2);
    }
}

/* The first line of a file into buf ("" when none). */
static void first_line(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (!fgets(buf, (int)len, f)) buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\r\n")] = 0;
}

/* Run argv in ns (NULL: here), stdout to `out` (NULL: /dev/null): its exit
 * status (-1: did not run or was killed); on failure L->err names the
 * command and its first line of stderr. */
static int run_in(struct lab *L, const char *ns, const char *const argv[], const char *out)
{
    char errf[96];
    snprintf(errf, sizeof errf, "%s/cmd.err", L->dir);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(L->err, sizeof L->err, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        redirect(out, errf);
        if (ns && enter_ns(ns) < 0) {
            fprintf(stderr, "cannot enter namespace %s: %s\n", ns, strerror(errno));
            _exit(126);
        }
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st = wait_ms(pid, LAB_CMD_MS);
    int rc = st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (rc != 0) {
        char line[256], cmd[200] = "";
        first_line(errf, line, sizeof line);
        for (int i = 0; argv[i] && strlen(cmd) < 150; i++)
            snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), "%s%s", i ? " " : "", argv[i]);
        snprintf(L->err, sizeof L->err, "'%s'%s%s: %s", cmd, ns ? " in " : "", ns ? ns : "",
                 *line    ? line
                 : st < 0 ? "did not finish"
                          : "failed");
    }
    return rc;
}

int lab_cmd(struct lab *L, const char *ns, const char *const argv[])
{
    return run_in(L, ns, argv, NULL);
}

int lab_init(struct lab *L, const arb_topo *t, volatile sig_atomic_t *stop)
{
    memset(L, 0, sizeof *L);
    L->t = t;
    L->stop = stop;
    L->n_nodes = arb_topo_n_nodes(t);
    uint16_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) rnd = (uint16_t)time(NULL);
    /* the process id says whose it is (a run killed with SIGKILL leaves
     * its namespaces: arbor lab --clean removes those of dead processes) */
    snprintf(L->prefix, sizeof L->prefix, "arblab%ld-%04x", (long)getpid(), rnd);
    L->ns = calloc(L->n_nodes, sizeof *L->ns);
    L->links = calloc(arb_topo_n_ports(t) / 2 + 1, sizeof *L->links);
    if (!L->ns || !L->links) {
        snprintf(L->err, sizeof L->err, "out of memory");
        return -1;
    }
    snprintf(L->dir, sizeof L->dir, "/tmp/arbor-lab.XXXXXX");
    if (!mkdtemp(L->dir)) {
        snprintf(L->err, sizeof L->err, "cannot make a directory in /tmp: %s", strerror(errno));
        L->dir[0] = 0;
        return -1;
    }
    return 0;
}

/* Node i's namespace name: PREFIX-hJ for host j, PREFIX-sL.I for a switch. */
static void ns_name(const struct lab *L, uint32_t i, char *buf, size_t len)
{
    const arb_node *n = arb_topo_node(L->t, i);
    if (n->kind == ARB_NODE_HOST)
        snprintf(buf, len, "%s-h%u", L->prefix, n->index);
    else
        snprintf(buf, len, "%s-s%u.%u", L->prefix, n->level, n->index);
}

static int make_namespaces(struct lab *L)
{
    for (uint32_t i = 0; i < L->n_nodes && !*L->stop; i++) {
        char name[40];
        ns_name(L, i, name, sizeof name);
        const char *add[] = {"ip", "netns", "add", name, NULL};
        if (lab_cmd(L, NULL, add) != 0) return -1;
        memcpy(L->ns[i], name, sizeof name);
        /* the namespace's own loopback (programs such as mpirun talk to
         * their local helpers over it); the machine's is not touched */
        const char *lo[] = {"ip", "link", "set", "lo", "up", NULL};
        if (lab_cmd(L, name, lo) != 0) return -1;
    }
    return *L->stop ? -1 : 0;
}

/* The links, once each (from their lower end), failed ones left out. */
static void list_links(struct lab *L, double scale, double loss)
{
    const arb_topo *t = L->t;
    uint32_t k = 0;
    for (uint32_t i = 0; i < L->n_nodes; i++) {
        const arb_node *n = arb_topo_node(t, i);
        for (uint32_t q = 0; q < n->n_up; q++) {
            uint32_t p = n->first_up + q;
            const arb_port *pp = arb_topo_port(t, p);
            if (pp->failed) continue;
            struct lab_link *l = &L->links[k];
            l->port[0] = p;
            l->port[1] = pp->peer_port;
            l->node[0] = i;
            l->node[1] = pp->peer;
            for (int e = 0; e < 2; e++) {
                const arb_node *o = arb_topo_node(t, l->node[e]);
                snprintf(l->ifname[e], sizeof l->ifname[e], "e%u", l->port[e] - o->first_port);
            }
            /* a /30 each: .1 the lower end, .2 the upper */
            uint32_t base = k * 4;
            for (int e = 0; e < 2; e++)
                snprintf(l->addr[e], sizeof l->addr[e], "10.%u.%u.%u", (base >> 16) & 255,
                         (base >> 8) & 255, (base & 255) + 1 + e);
            double r = (double)pp->rate * scale;
            l->rate = r < 1e6 ? 1000000 : (uint64_t)r;
            double own = arb_topo_link_loss(t, p);
            l->loss = own >= 0 ? own : loss;
            k++;
        }
    }
    L->n_links = k;
}

/* tbf: the link's rate, a burst of 1 ms at that rate (at least 32 KiB:
 * several full datagrams), a queue of `queue` bytes. */
static int shape(struct lab *L, const char *ns, const char *dev, uint64_t rate, uint64_t queue)
{
    char r[32], b[32], lim[32];
    uint64_t burst = rate / 8 / 1000;
    if (burst < 32768) burst = 32768;
    if (queue < burst) queue = burst;
    snprintf(r, sizeof r, "%llubit", (unsigned long long)rate);
    snprintf(b, sizeof b, "%llu", (unsigned long long)burst);
    snprintf(lim, sizeof lim, "%llu", (unsigned long long)queue);
    const char *tc[] = {"tc",   "qdisc", "add",   "dev", dev,     "root", "tbf",
                        "rate", r,       "burst", b,     "limit", lim,    NULL};
    return lab_cmd(L, ns, tc);
}

/* A lossy link's ends hand the veth one datagram a frame: a UDP GSO send
 * (several datagrams in one buffer, which a NIC would cut into frames)
 * crosses a veth whole, and the far end's loss rule would drop all its
 * datagrams at once; cut in the kernel first, each is lost on its own,
 * as on a wire. */
static int one_datagram_a_frame(struct lab *L, const char *ns, const char *dev)
{
    const char *gso[] = {"ip", "link", "set", "dev", dev, "gso_max_segs", "1", NULL};
    return lab_cmd(L, ns, gso);
}

static int make_link(struct lab *L, const struct lab_link *l, uint64_t queue)
{
    char mtu[16];
    snprintf(mtu, sizeof mtu, "%d", LAB_MTU);
    const char *add[] = {
        "ip",   "link", "add",  l->ifname[0], "netns", L->ns[l->node[0]], "mtu", mtu, "type",
        "veth", "peer", "name", l->ifname[1], "netns", L->ns[l->node[1]], "mtu", mtu, NULL};
    if (lab_cmd(L, NULL, add) != 0) return -1;
    for (int e = 0; e < 2; e++) {
        const char *ns = L->ns[l->node[e]];
        char cidr[24];
        snprintf(cidr, sizeof cidr, "%s/30", l->addr[e]);
        const char *addr[] = {"ip", "addr", "add", cidr, "dev", l->ifname[e], NULL};
        const char *up[] = {"ip", "link", "set", l->ifname[e], "up", NULL};
        if (lab_cmd(L, ns, addr) != 0 || lab_cmd(L, ns, up) != 0) return -1;
        if (shape(L, ns, l->ifname[e], l->rate, queue) != 0) return -1;
        if (l->loss > 0 && one_datagram_a_frame(L, ns, l->ifname[e]) != 0) return -1;
    }
    return 0;
}

/* Node i's loss rules: every lossy link's interface there drops what
 * arrives with the link's probability (numgen random, counted). */
static int node_loss(struct lab *L, uint32_t i)
{
    char path[96];
    snprintf(path, sizeof path, "%s/loss.nft", L->dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(L->err, sizeof L->err, "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "table inet %s {\n chain in {\n  type filter hook prerouting priority -300;\n",
            LAB_NFT_TABLE);
    int rules = 0;
    for (uint32_t k = 0; k < L->n_links; k++)
        for (int e = 0; e < 2; e++) {
            const struct lab_link *l = &L->links[k];
            if (l->node[e] != i || !(l->loss > 0)) continue;
            fprintf(f, "  iifname \"%s\" numgen random mod 1000000 < %u counter drop\n",
                    l->ifname[e], (unsigned)(l->loss * 1e6 + 0.5));
            rules++;
        }
    fprintf(f, " }\n}\n");
    fclose(f);
    if (!rules) return 0;
    const char *nft[] = {"nft", "-f", path, NULL};
    return lab_cmd(L, L->ns[i], nft);
}

/* IP forwarding on in namespace ns (a switch's: programs other than the
 * Arbor runtime, Open MPI's TCP say, cross the fabric through the kernel's
 * router there, on the same shaped links). 0 or -1. */
static int forward_on(struct lab *L, const char *ns)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int ok = enter_ns(ns) == 0;
        FILE *f = ok ? fopen("/proc/sys/net/ipv4/ip_forward", "w") : NULL;
        ok = f && fputs("1\n", f) >= 0;
        if (f && fclose(f) != 0) ok = 0;
        _exit(ok ? 0 : 1);
    }
    int st = wait_ms(pid, LAB_CMD_MS);
    if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    snprintf(L->err, sizeof L->err, "cannot turn IP forwarding on in %s", ns);
    return -1;
}

/* The /30 of host h's link, "10.a.b.c/30", into buf; 0 or -1. */
static int host_net(const struct lab *L, uint32_t h, char *buf, size_t len)
{
    for (uint32_t k = 0; k < L->n_links; k++)
        if (L->links[k].node[0] == h) {
            unsigned a, b, c, d;
            if (sscanf(L->links[k].addr[0], "%u.%u.%u.%u", &a, &b, &c, &d) != 4) return -1;
            snprintf(buf, len, "%u.%u.%u.%u/30", a, b, c, d - 1);
            return 0;
        }
    return -1;
}

/* Routes: every host's default through its leaf; every switch reaches a
 * host's link down the tree when the host is below it, else up its first
 * live up link. 0 or -1. */
static int make_routes(struct lab *L)
{
    const arb_topo *t = L->t;
    uint32_t hosts = arb_topo_n_hosts(t);
    for (uint32_t h = 0; h < hosts; h++) {
        const arb_node *n = arb_topo_node(t, h);
        const char *gw =
            n->n_up ? lab_addr_toward(L, arb_topo_port(t, n->first_up)->peer, h) : NULL;
        const char *rt[] = {"ip", "route", "add", "default", "via", gw, NULL};
        if (gw && lab_cmd(L, L->ns[h], rt) != 0) return -1;
    }
    for (uint32_t i = hosts; i < L->n_nodes; i++) {
        if (*L->stop || forward_on(L, L->ns[i]) < 0) return -1;
        const arb_node *n = arb_topo_node(t, i);
        uint32_t up = ARB_TOPO_NONE;
        for (uint32_t q = 0; q < n->n_up && up == ARB_TOPO_NONE; q++)
            if (!arb_topo_port(t, n->first_up + q)->failed)
                up = arb_topo_port(t, n->first_up + q)->peer;
        for (uint32_t h = 0; h < hosts; h++) {
            uint32_t port, next = up;
            if (lab_addr_toward(L, h, i)) continue; /* its own link: connected */
            if (arb_topo_below(t, i, h) == 1 && arb_topo_down_port(t, i, h, &port) == 0)
                next = arb_topo_port(t, port)->peer;
            const char *gw = next == ARB_TOPO_NONE ? NULL : lab_addr_toward(L, next, i);
            char net[24];
            if (!gw || host_net(L, h, net, sizeof net) < 0) continue;
            const char *rt[] = {"ip", "route", "add", net, "via", gw, NULL};
            if (lab_cmd(L, L->ns[i], rt) != 0) return -1;
        }
    }
    return 0;
}

int lab_fabric_up(struct lab *L, double scale, double loss, uint64_t queue)
{
    if (make_namespaces(L) < 0) return -1;
    list_links(L, scale, loss);
    for (uint32_t k = 0; k < L->n_links; k++)
        if (*L->stop || make_link(L, &L->links[k], queue) < 0) return -1;
    if (make_routes(L) < 0) return -1;
    for (uint32_t i = 0; i < L->n_nodes; i++)
        if (*L->stop || node_loss(L, i) < 0) return -1;
    return *L->stop ? -1 : 0;
}

const char *lab_addr_toward(const struct lab *L, uint32_t node, uint32_t peer)
{
    for (uint32_t k = 0; k < L->n_links; k++) {
        const struct lab_link *l = &L->links[k];
        if (l->node[0] == node && l->node[1] == peer) return l->addr[0];
        if (l->node[1] == node && l->node[0] == peer) return l->addr[1];
    }
    return NULL;
}

/* Room for one more process in L->procs: 0 or -1. */
static int proc_room(struct lab *L)
{
    if (L->n_procs < L->cap_procs) return 0;
    uint32_t cap = L->cap_procs ? 2 * L->cap_procs : 16;
    pid_t *p = realloc(L->procs, cap * sizeof *p);
    if (!p) return -1;
    L->procs = p;
    L->cap_procs = cap;
    return 0;
}

pid_t lab_spawn(struct lab *L, uint32_t node, char *const argv[], char *const env[],
                const char *out, const char *errf)
{
    pid_t parent = getpid();
    if (proc_room(L) < 0) {
        snprintf(L->err, sizeof L->err, "out of memory");
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(L->err, sizeof L->err, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
        for (size_t s = 0; s < sizeof sigs / sizeof sigs[0]; s++)
            signal(sigs[s], SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(1);
        redirect(out, errf);
        if (enter_ns(L->ns[node]) < 0) {
            fprintf(stderr, "arbor lab: cannot enter namespace %s: %s\n", L->ns[node],
                    strerror(errno));
            _exit(1);
        }
        for (int i = 0; env && env[i]; i++)
            putenv(env[i]);
        execvp(argv[0], argv);
        fprintf(stderr, "arbor lab: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    L->procs[L->n_procs++] = pid;
    return pid;
}

uint64_t lab_drops(struct lab *L)
{
    uint64_t total = 0;
    char path[96];
    snprintf(path, sizeof path, "%s/nft.out", L->dir);
    for (uint32_t i = 0; i < L->n_nodes; i++) {
        int lossy = 0;
        for (uint32_t k = 0; k < L->n_links && !lossy; k++)
            lossy = L->links[k].loss > 0 && (L->links[k].node[0] == i || L->links[k].node[1] == i);
        if (!lossy || !*L->ns[i]) continue;
        const char *nft[] = {"nft", "list", "table", "inet", LAB_NFT_TABLE, NULL};
        if (run_in(L, L->ns[i], nft, path) != 0) continue;
        FILE *f = fopen(path, "r");
        if (!f) continue;
        char line[512];
        while (fgets(line, sizeof line, f)) {
            const char *p = strstr(line, "packets ");
            if (p) total += strtoull(p + 8, NULL, 10);
        }
        fclose(f);
    }
    return total;
}

/* Reap the processes started: SIGTERM, then SIGKILL after the grace. */
static void stop_procs(struct lab *L)
{
    for (uint32_t i = 0; i < L->n_procs; i++)
        if (L->procs[i] > 0) kill(L->procs[i], SIGTERM);
    uint64_t end = lab_now_ms() + LAB_GRACE_MS;
    for (uint32_t i = 0; i < L->n_procs; i++) {
        if (L->procs[i] <= 0) continue;
        uint64_t now = lab_now_ms();
        wait_ms(L->procs[i], now < end ? (unsigned)(end - now) : 0);
        L->procs[i] = 0;
    }
    L->n_procs = 0;
}

/* Any process still in namespace ns (one a child started, say): killed. */
static void kill_ns_pids(struct lab *L, const char *ns)
{
    char path[96];
    snprintf(path, sizeof path, "%s/pids.out", L->dir);
    const char *pids[] = {"ip", "netns", "pids", ns, NULL};
    if (run_in(L, NULL, pids, path) != 0) return;
    FILE *f = fopen(path, "r");
    if (!f) return;
    long p;
    while (fscanf(f, "%ld", &p) == 1)
        if (p > 1 && p != (long)getpid()) kill((pid_t)p, SIGKILL);
    fclose(f);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

int lab_teardown(struct lab *L)
{
    int left = 0;
    stop_procs(L);
    for (uint32_t i = 0; L->ns && L->dir[0] && i < L->n_nodes; i++) {
        if (!*L->ns[i]) continue;
        kill_ns_pids(L, L->ns[i]);
        const char *del[] = {"ip", "netns", "del", L->ns[i], NULL};
        char path[128];
        snprintf(path, sizeof path, "/run/netns/%s", L->ns[i]);
        if (lab_cmd(L, NULL, del) != 0 && access(path, F_OK) == 0)
            left++;
        else
            L->ns[i][0] = 0;
    }
    if (L->dir[0]) remove_dir(L->dir);
    L->dir[0] = 0;
    free(L->ns);
    free(L->links);
    free(L->procs);
    L->ns = NULL;
    L->links = NULL;
    L->procs = NULL;
    return left;
}
