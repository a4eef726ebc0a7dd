/*
 * lab.h - arbor lab's fabric on this machine (lab_net.c): a network
 * namespace per node of a topology, a veth pair per link with the link's
 * rate (scaled) shaped by tbf in both directions, per-link loss by an
 * nftables numgen rule, the processes started inside, and the teardown
 * that removes all of it (docs/lab.md).
 *
 * Nothing is made outside the namespaces the lab creates: each veth is
 * created with both ends already in their namespaces, addresses live only
 * there, so deleting the namespaces removes every veth, qdisc and nftables
 * table with them. Names carry this run's own prefix (the process id and
 * random bits), so that runs in parallel never collide.
 */
#ifndef ARBOR_LAB_H
#define ARBOR_LAB_H

#include "arbor/topo.h"

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* The switches' UDP port inside their namespaces. */
#define LAB_PORT 17470
/* One datagram of 8192 B of payload with the runtime's and the Arbor
 * headers, IPv4 and UDP fits unfragmented (docs/runtime.md section 7.3). */
#define LAB_MTU 9000

/* One link of the fabric: a veth pair between the namespaces of its two
 * ends, a /30 of 10.0.0.0/8 of its own. */
struct lab_link {
    uint32_t port[2]; /* the topology's port at each end (lower, upper) */
    uint32_t node[2]; /* its nodes */
    char ifname[2][16];
    char addr[2][16]; /* dotted IPv4 of each end */
    uint64_t rate;    /* bits/s as shaped (scaled) */
    double loss;      /* per direction, by nftables */
};

struct lab {
    char prefix[24]; /* every namespace of this run starts with it */
    const arb_topo *t;
    uint32_t n_nodes;
    char (*ns)[40]; /* namespace of node i; "" until made */
    struct lab_link *links;
    uint32_t n_links;
    pid_t *procs; /* processes started in the namespaces */
    uint32_t n_procs, cap_procs;
    char dir[64];                /* this run's files (secret, logs, records) */
    char err[512];               /* what failed, for the caller's one line */
    volatile sig_atomic_t *stop; /* set by a signal: give up at once */
};

/* Prefix, namespace names and a private directory. 0, or -1 with L->err. */
int lab_init(struct lab *L, const arb_topo *t, volatile sig_atomic_t *stop);

/*
 * Make the fabric: namespaces, links (scale times each link's rate, the
 * link's loss, else `loss`), tbf on both ends (queue bytes each), nftables
 * loss rules. 0, or -1 with L->err (then lab_teardown removes what was
 * made).
 */
int lab_fabric_up(struct lab *L, double scale, double loss, uint64_t queue);

/* The address of node's end of its first link to `peer` (NULL: none).
 * Every host's default route goes to its leaf and the switches route
 * between the hosts' links (IP forwarding on), so any program run in the
 * hosts' namespaces reaches the others over the shaped links. */
const char *lab_addr_toward(const struct lab *L, uint32_t node, uint32_t peer);

/*
 * Start argv (argv[0] a path, or a name looked up in PATH) in node's namespace with its stdout and
 * stderr to the files named (NULL: /dev/null) and the extra environment
 * `env` (NAME=VALUE entries, NULL-terminated; may be NULL). The child
 * gets SIGTERM when this process dies. The pid, or -1 with L->err.
 */
pid_t lab_spawn(struct lab *L, uint32_t node, char *const argv[], char *const env[],
                const char *out, const char *errf);

/* Packets the loss rules dropped, over every namespace. */
uint64_t lab_drops(struct lab *L);

/*
 * Stop every process started (SIGTERM, SIGKILL after a grace), and any
 * other left in the namespaces, delete the namespaces and the directory.
 * Safe to call twice and after a partial lab_fabric_up. Returns the
 * namespaces that could not be deleted (0: nothing left).
 */
int lab_teardown(struct lab *L);

/* Run a command (argv[0] looked up in PATH) in namespace ns (NULL: this
 * one), its stderr to L->err's tail on failure; its exit status. */
int lab_cmd(struct lab *L, const char *ns, const char *const argv[]);

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t lab_now_ms(void);

#endif
