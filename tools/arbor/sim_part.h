/*
 * sim_part.h - `arbor sim --partition K` over MPI (sim_part.c): the
 * collective operations a partitioned simulator runs on, timed per rank.
 */
#ifndef ARBOR_CLI_SIM_PART_H
#define ARBOR_CLI_SIM_PART_H

#include <stdint.h>

#include "arbor/arbor.h"

struct sim_part_cli {
    arb_sim_part_ops ops; /* ctx: this struct */
    int inited;           /* MPI is up (finalize) */
    double wait_s;        /* time spent in the collective operations */
    uint64_t bytes;       /* bytes this rank sent */
    uint64_t calls;       /* all-to-alls so far (ARB_PART_TEST_EXIT) */
    uint64_t exit_at;     /* leave at this all-to-all (tests), 0: never */
    uint8_t *rbuf;        /* what the all-to-all received, reused call after call */
    size_t rcap;
};

/* The number of processes an MPI launcher started this one among (from the
 * environment it sets), and this one's rank in *rank; 0 when none did, or
 * it does not say. */
uint32_t sim_part_launched(uint32_t *rank);
/* Whether this build has MPI. */
int sim_part_built(void);
/* MPI up, and K ranks: 0, or an error (written to err; 2 as exit status). */
int sim_part_init(struct sim_part_cli *p, uint32_t k, char *err, size_t errlen);
/* ok over every rank (the minimum). */
int sim_part_all_ok(struct sim_part_cli *p, int ok);
/* Collective: every rank's figures, printed by rank 0 on stderr. */
void sim_part_report(struct sim_part_cli *p, const arb_sim_part_info *info, double run_s);
void sim_part_finalize(struct sim_part_cli *p);

#endif
