/* arbor lab's samples of its links over time (lab_sample.h). */
#define _GNU_SOURCE
#include "lab_sample.h"

#include "arbor/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The ports: both ends of every link, each in its class (2 x tier, + 1
 * for the upper end, whose role is DOWN), and the classes' capacities. */
static int list_ports(struct lab_sampler *S, const struct lab *L)
{
    unsigned h = arb_topo_height(L->t);
    S->n_cls = 2 * h > LAB_CLASSES ? LAB_CLASSES : 2 * h;
    for (unsigned c = 0; c < S->n_cls; c++)
        snprintf(S->name[c], sizeof S->name[c], "tier%u_%s", c / 2, c % 2 ? "down" : "up");
    S->ports = calloc(2 * (size_t)L->n_links + 1, sizeof *S->ports);
    if (!S->ports) return -1;
    for (uint32_t k = 0; k < L->n_links; k++)
        for (int e = 0; e < 2; e++) {
            const arb_port *p = arb_topo_port(L->t, L->links[k].port[e]);
            unsigned c = 2u * p->tier + (p->role == ARB_LINK_UP ? 0 : 1);
            if (c >= S->n_cls) continue;
            struct lab_port *lp = &S->ports[S->n_ports++];
            lp->node = L->links[k].node[e];
            lp->cls = (uint8_t)c;
            S->cls_ports[c]++;
            S->rate_bits[c] += (double)L->links[k].rate;
        }
    return 0;
}

/* In namespace ns: a netlink socket, and the interface index of each of
 * node's ports (by its link end's name). Back in this process's own
 * namespace (self) before returning. The socket, or -1. */
static int socket_in(struct lab_sampler *S, const struct lab *L, uint32_t node, int self)
{
    char path[128];
    snprintf(path, sizeof path, "/run/netns/%s", L->ns[node]);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) < 0) {
        snprintf(S->err, sizeof S->err, "cannot enter %s: %s", L->ns[node], strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    uint32_t i = 0;
    for (uint32_t k = 0; k < L->n_links; k++)
        for (int e = 0; e < 2; e++) {
            const arb_port *p = arb_topo_port(L->t, L->links[k].port[e]);
            if (2u * p->tier + (p->role == ARB_LINK_UP ? 0 : 1) >= S->n_cls) continue;
            if (L->links[k].node[e] == node)
                S->ports[i].ifindex = (int)if_nametoindex(L->links[k].ifname[e]);
            i++;
        }
    if (setns(self, CLONE_NEWNET) < 0) {
        snprintf(S->err, sizeof S->err, "cannot return to this namespace: %s", strerror(errno));
        if (s >= 0) close(s);
        return -1;
    }
    if (s < 0) {
        snprintf(S->err, sizeof S->err, "netlink socket in %s: %s", L->ns[node], strerror(errno));
        return -1;
    }
    struct timeval tv = {0, 200000}; /* a dump that does not answer is a missed sample */
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return s;
}

/* The root qdisc's counters of one RTM_NEWQDISC message into its port. */
static void take_qdisc(struct lab_sampler *S, uint32_t node, struct nlmsghdr *nh)
{
    struct tcmsg *tm = NLMSG_DATA(nh);
    if (tm->tcm_parent != TC_H_ROOT) return;
    struct lab_port *lp = NULL;
    for (uint32_t i = 0; i < S->n_ports && !lp; i++)
        if (S->ports[i].node == node && S->ports[i].ifindex == tm->tcm_ifindex) lp = &S->ports[i];
    if (!lp) return;
    int alen = (int)TCA_PAYLOAD(nh);
    for (struct rtattr *a = TCA_RTA(tm); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
        if (a->rta_type != TCA_STATS2) continue;
        int blen = (int)RTA_PAYLOAD(a);
        for (struct rtattr *b = RTA_DATA(a); RTA_OK(b, blen); b = RTA_NEXT(b, blen)) {
            if (b->rta_type == TCA_STATS_BASIC && RTA_PAYLOAD(b) >= sizeof(uint64_t)) {
                memcpy(&lp->sent, RTA_DATA(b), sizeof lp->sent);
                lp->seen = 1;
            } else if (b->rta_type == TCA_STATS_QUEUE &&
                       RTA_PAYLOAD(b) >= sizeof(struct gnet_stats_queue)) {
                struct gnet_stats_queue q;
                memcpy(&q, RTA_DATA(b), sizeof q);
                lp->backlog = q.backlog;
            }
        }
    }
}

/* Every qdisc of node's namespace, its ports' counters updated. */
static void dump_node(struct lab_sampler *S, uint32_t node)
{
    static uint32_t seq;
    struct {
        struct nlmsghdr n;
        struct tcmsg t;
    } req;
    memset(&req, 0, sizeof req);
    req.n.nlmsg_len = NLMSG_LENGTH(sizeof req.t);
    req.n.nlmsg_type = RTM_GETQDISC;
    req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.n.nlmsg_seq = ++seq;
    req.t.tcm_family = AF_UNSPEC;
    if (send(S->sock[node], &req, req.n.nlmsg_len, 0) < 0) return;
    static char buf[32768] __attribute__((aligned(8)));
    for (;;) {
        ssize_t len = recv(S->sock[node], buf, sizeof buf, 0);
        if (len <= 0) return;
        int left = (int)len;
        for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, left);
             nh = NLMSG_NEXT(nh, left)) {
            if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR) return;
            if (nh->nlmsg_type == RTM_NEWQDISC && nh->nlmsg_seq == seq) take_qdisc(S, node, nh);
        }
    }
}

static void read_all(struct lab_sampler *S)
{
    for (uint32_t i = 0; i < S->n_ports; i++)
        S->ports[i].seen = 0;
    for (uint32_t n = 0; n < S->n_nodes; n++)
        if (S->sock[n] >= 0) dump_node(S, n);
}

int lab_sample_open(struct lab_sampler *S, const struct lab *L, uint64_t interval_ns)
{
    memset(S, 0, sizeof *S);
    S->interval_ns = interval_ns;
    S->n_nodes = L->n_nodes;
    S->sock = malloc(((size_t)L->n_nodes + 1) * sizeof *S->sock);
    if (!S->sock || list_ports(S, L) < 0) {
        snprintf(S->err, sizeof S->err, "out of memory");
        return -1;
    }
    for (uint32_t n = 0; n < L->n_nodes; n++)
        S->sock[n] = -1;
    if (!interval_ns) return 0;
    int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self < 0) {
        snprintf(S->err, sizeof S->err, "cannot open /proc/self/ns/net: %s", strerror(errno));
        return -1;
    }
    int rc = 0;
    for (uint32_t i = 0; i < S->n_ports && rc == 0; i++) {
        uint32_t n = S->ports[i].node;
        if (S->sock[n] < 0 && (S->sock[n] = socket_in(S, L, n, self)) < 0) rc = -1;
    }
    close(self);
    if (rc < 0) return -1;
    read_all(S);
    S->t0_ns = S->prev_ns = now_ns();
    S->next_ns = S->t0_ns + interval_ns;
    return 0;
}

/* Room for one more row. */
static int grow(struct lab_sampler *S)
{
    if (S->n_rows < S->cap_rows) return 0;
    uint32_t cap = S->cap_rows ? 2 * S->cap_rows : 256;
    size_t cells = (size_t)cap * S->n_cls;
    double *u = realloc(S->util, cells * sizeof *u);
    if (u) S->util = u;
    double *q = realloc(S->qmean, cells * sizeof *q);
    if (q) S->qmean = q;
    uint32_t *m = realloc(S->qmax, cells * sizeof *m);
    if (m) S->qmax = m;
    double *t = realloc(S->t_us, cap * sizeof *t);
    if (t) S->t_us = t;
    if (!u || !q || !m || !t) return -1;
    S->cap_rows = cap;
    return 0;
}

void lab_sample_poll(struct lab_sampler *S)
{
    if (!S->interval_ns || now_ns() < S->next_ns || grow(S) < 0) return;
    for (uint32_t i = 0; i < S->n_ports; i++)
        S->ports[i].prev = S->ports[i].sent;
    read_all(S);
    uint64_t t = now_ns();
    double secs = (double)(t - S->prev_ns) / 1e9, tx[LAB_CLASSES] = {0}, qs[LAB_CLASSES] = {0};
    uint32_t *qm = S->qmax + (size_t)S->n_rows * S->n_cls;
    memset(qm, 0, S->n_cls * sizeof *qm);
    for (uint32_t i = 0; i < S->n_ports; i++) {
        const struct lab_port *p = &S->ports[i];
        if (p->seen && p->sent >= p->prev) tx[p->cls] += (double)(p->sent - p->prev);
        qs[p->cls] += p->backlog;
        if (p->backlog > qm[p->cls]) qm[p->cls] = p->backlog;
    }
    for (unsigned c = 0; c < S->n_cls; c++) {
        double *u = &S->util[(size_t)S->n_rows * S->n_cls + c];
        *u = S->rate_bits[c] > 0 && secs > 0 ? tx[c] * 8 / (S->rate_bits[c] * secs) : 0;
        S->qmean[(size_t)S->n_rows * S->n_cls + c] = S->cls_ports[c] ? qs[c] / S->cls_ports[c] : 0;
    }
    S->t_us[S->n_rows++] = (double)(t - S->t0_ns) / 1e3;
    S->prev_ns = t;
    S->next_ns += S->interval_ns;
    if (S->next_ns <= t) S->next_ns = t + S->interval_ns;
}

uint64_t lab_sample_wait_ns(const struct lab_sampler *S)
{
    if (!S->interval_ns) return UINT64_MAX;
    uint64_t t = now_ns();
    return S->next_ns > t ? S->next_ns - t : 0;
}

int lab_sample_csv(const struct lab_sampler *S, int util, FILE *f)
{
    fprintf(f, "time_us");
    for (unsigned c = 0; c < S->n_cls; c++)
        if (util)
            fprintf(f, ",%s", S->name[c]);
        else
            fprintf(f, ",%s_mean,%s_max", S->name[c], S->name[c]);
    fprintf(f, "\n");
    for (uint32_t i = 0; i < S->n_rows; i++) {
        fprintf(f, "%.6f", S->t_us[i]);
        for (unsigned c = 0; c < S->n_cls; c++) {
            size_t k = (size_t)i * S->n_cls + c;
            if (util)
                fprintf(f, ",%.6f", S->util[k]);
            else
                fprintf(f, ",%.1f,%u", S->qmean[k], S->qmax[k]);
        }
        fprintf(f, "\n");
    }
    return ferror(f) ? -1 : 0;
}

void lab_sample_close(struct lab_sampler *S)
{
    for (uint32_t n = 0; S->sock && n < S->n_nodes; n++)
        if (S->sock[n] >= 0) close(S->sock[n]);
    free(S->sock);
    free(S->ports);
    free(S->util);
    free(S->qmean);
    free(S->qmax);
    free(S->t_us);
    memset(S, 0, sizeof *S);
}
