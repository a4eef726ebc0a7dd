/*
 * lab_sample.h - arbor lab's samples of its links over time (lab_sample.c):
 * every interval, the bytes each link end's tbf has sent and the bytes it
 * holds queued, read from the kernel over a netlink socket opened inside
 * each namespace, summed by `arbor sim`'s port classes (tier0_up: the
 * hosts' ends, tier0_down: the leaves' ends toward them, ...). Written as
 * `arbor sim --csv`'s PREFIX-util.csv and PREFIX-queue.csv, the same
 * columns, so that `arbor plot` draws a lab run as it draws a simulation
 * (docs/lab.md).
 */
#ifndef ARBOR_LAB_SAMPLE_H
#define ARBOR_LAB_SAMPLE_H

#include "lab.h"

#include <stdint.h>
#include <stdio.h>

/* The shortest interval sampled: each sample is a netlink dump per
 * namespace, made by this process on the same cores as the run. */
#define LAB_SAMPLE_MIN_NS 1000000u

/* Port classes: two per tier, as arbor sim's sampler makes them. */
#define LAB_CLASSES 16

/* One shaped link end: where its counters are read. */
struct lab_port {
    uint32_t node;    /* its namespace's node */
    int ifindex;      /* its interface there */
    uint8_t cls;      /* its class */
    uint64_t sent;    /* the tbf's bytes sent, as last read */
    uint64_t prev;    /* as read the time before */
    uint32_t backlog; /* bytes queued, as last read */
    int seen;         /* read in the last dump */
};

struct lab_sampler {
    uint64_t interval_ns; /* 0: no samples */
    uint64_t t0_ns, prev_ns, next_ns;
    int *sock; /* per node: netlink socket in its namespace, -1 none */
    uint32_t n_nodes;
    struct lab_port *ports;
    uint32_t n_ports;
    unsigned n_cls;
    char name[LAB_CLASSES][24];    /* tier0_up, tier0_down, ... */
    double rate_bits[LAB_CLASSES]; /* the class's shaped capacity, bits/s */
    uint32_t cls_ports[LAB_CLASSES];
    double *util, *qmean; /* n_rows x n_cls */
    uint32_t *qmax;
    double *t_us;
    uint32_t n_rows, cap_rows;
    char err[256];
};

/*
 * Make the sampler of L's links (up, shaped): every interval_ns (0: none),
 * from now on. Opens a netlink socket in each namespace with links (this
 * process enters the namespace for the socket() call only). 0, or -1 with
 * S->err.
 */
int lab_sample_open(struct lab_sampler *S, const struct lab *L, uint64_t interval_ns);

/* Take a sample when one is due (a no-op otherwise, or without samples). */
void lab_sample_poll(struct lab_sampler *S);

/* Nanoseconds until the next sample is due (UINT64_MAX: none). */
uint64_t lab_sample_wait_ns(const struct lab_sampler *S);

/* The samples as arbor sim's CSV to f: ARB_SCN_CSV_UTIL's columns when
 * util, else ARB_SCN_CSV_QUEUE's (header only without samples). 0, or -1
 * when f could not be written. */
int lab_sample_csv(const struct lab_sampler *S, int util, FILE *f);

/* Close the sockets, free the samples. Safe on a zeroed sampler. */
void lab_sample_close(struct lab_sampler *S);

#endif
