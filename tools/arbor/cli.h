/*
 * cli.h - shared pieces of the `arbor` command: the subcommand table and
 * the conventions every subcommand follows.
 *
 * Exit status: 0 success, 1 a run that failed, 2 bad usage or malformed
 * input (with one line on stderr naming what was wrong).
 */
#ifndef ARBOR_CLI_H
#define ARBOR_CLI_H

#include "arbor/base.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* Subcommands: argv[0] is the subcommand's name. */
int cmd_wire(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_route(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_switch(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_lab(int argc, char **argv);
int cmd_mpirun(int argc, char **argv);

/*
 * Print "arbor PREFIX: MESSAGE" on stderr as one line and return
 * CLI_EXIT_USAGE.
 */
int cli_error(const char *prefix, const char *fmt, ...) ARB_PRINTF(2, 3);

/* True when arg is "-h" or "--help". */
int cli_is_help(const char *arg);

/*
 * Options: every command parses its own with getopt_long (so --opt=value,
 * --opt value, abbreviations and short options all work), after
 * cli_getopt_start(opts) (cli_options below does both), which remembers the long options
 * for cli_bad_option. Its option string starts with ':' so that a missing value comes back as
 * ':'; cli_bad_option turns the '?' or ':' getopt_long returned into one line on stderr
 * ("unknown option", "ambiguous option '--se' (--seed, --seeds)", "needs a value") and
 * CLI_EXIT_USAGE.
 */
struct option;
void cli_getopt_start(const struct option *opts);
int cli_bad_option(const char *cmd, int c, char **argv);

/*
 * The option loop the commands share: cli_getopt_start, then getopt_long
 * over argv with shorts and opts, handing each option getopt_long returns
 * (and its value) to `one`, which returns CLI_GO_ON to go on or the exit
 * status to stop with (after --help's usage: CLI_EXIT_OK). Returns
 * CLI_GO_ON once every option is taken (optind is then the first
 * operand), or the status `one` stopped with.
 */
#define CLI_GO_ON (-1)
typedef int (*cli_option_fn)(int c, const char *v, char **argv, void *ctx);
int cli_options(int argc, char **argv, const char *shorts, const struct option *opts,
                cli_option_fn one, void *ctx);

/*
 * JSON outputs: every object starts with "schema" (its kind and the major
 * version of its layout, the file docs/schema/KIND.schema.json describes)
 * and "version" (arb_version()). A field is renamed or its meaning changed
 * only with a new major version. Reals print with six decimals, as
 * `arbor sim` prints them (or, below 0.001, six decimals of an exponent
 * form, so that small probabilities keep their digits); non-finite: null.
 */
#define CLI_SCHEMA_ROUTE "arbor-route/1"
#define CLI_SCHEMA_ROUTE_BINS "arbor-route-bins/1"
#define CLI_SCHEMA_TOPO "arbor-topo/1"
#define CLI_SCHEMA_WIRE "arbor-wire/1"
#define CLI_SCHEMA_SIM_SEEDS "arbor-sim-seeds/1"
#define CLI_SCHEMA_SWEEP "arbor-sweep/1"
struct cJSON;
void cli_json_head(struct cJSON *o, const char *schema);
void cli_json_real(struct cJSON *o, const char *name, double v);
/* The same as text, for JSON written with printf. */
void cli_fmt_real(char *buf, size_t len, double v);

/*
 * arbor sim --seeds A..B (sim_seeds.c): `one` runs the scenario with
 * run.seed = seed and hands back its JSON (malloc'd) or returns an exit
 * status, having printed why. At most CLI_MAX_SEEDS runs.
 */
#define CLI_MAX_SEEDS 100000
struct cli_seeds_run {
    const char *file;
    uint64_t first, last;
    int json, quiet;
    int (*one)(void *ctx, uint64_t seed, char **json_out);
    void *ctx;
};
/*
 * The figures `arbor sim --seeds` and `arbor sweep` summarise: paths into
 * a run's JSON (sim_seeds.c). cli_figures_of reads them from one run's
 * JSON object: v[m] for each, and bit m of the mask when it is a number
 * (the flows' figures only for runs with transport flows).
 */
#define CLI_N_FIGURES 20
extern const char *const cli_figures[CLI_N_FIGURES];
uint32_t cli_figures_of(const struct cJSON *run, double v[CLI_N_FIGURES]);
/* The two-sided 95% quantile of Student's t with df degrees of freedom. */
double cli_t95(unsigned df);

int cli_parse_seeds(const char *s, uint64_t *first, uint64_t *last);
int cli_sim_seeds(const struct cli_seeds_run *run);

/* arbor sim's one-screen text summary of a run's JSON, on stdout
 * (sim_summary.c). */
void cli_sim_summary(const char *json);

/* A whole file as a NUL-terminated malloc'd string; NULL with errno set. */
char *cli_slurp(const char *path);
/* gnuplot is on PATH (arbor plot). */
int cli_have_gnuplot(void);
/* arbor plot --sweep (plot_sweep.c). */
int cli_plot_sweep(const char *table, const char *xvar, const char *yfig, const char *dir,
                   const char *name, const char *script);

/* "arbor VERSION" and, when built from a git checkout, " (commit HASH)". */
const char *cli_version(void);

/*
 * Parse an unsigned decimal or 0x-hex integer no larger than max.
 * Returns 0, or -1 when the text is not such a number.
 */
int cli_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* --spin of arbor run and arbor switch: 0, or a duration of at most 10 ms.
 * 0 and *out set, or -1. */
int cli_parse_spin(const char *v, arb_time *out);

/* Whether n processes of this machine (arbor run's ranks; arbor lab's
 * ranks and switches) share its online cores lightly: at most
 * CLI_PROCS_PER_CORE a core. Past that, a process that spins before
 * blocking takes the others' turns (arbor run then neither spins nor keeps
 * its ranks' priority; arbor lab's lab.spin = auto does not spin). 1 or 0
 * (0 also when the cores cannot be counted). */
#define CLI_PROCS_PER_CORE 4
int cli_fits_cores(uint64_t n);

/* A fraction in [0, 1) (--drop): 0 and *out set, or -1. */
int cli_parse_fraction(const char *v, double *out);

/*
 * The options that configure a software switch: one table and one parser
 * for arbor switch (--threads, --ecn, --drop) and arbor run (the switches it
 * starts: --switch-threads, --switch-ecn, --switch-drop), besides --no-gso,
 * --spin, --io and --seed. CLI_SWITCH_OPTIONS(PREFIX) are the entries of a
 * getopt_long table; cli_switch_option applies the option getopt_long
 * returned as c, with value v, to cfg: CLI_GO_ON, or CLI_EXIT_USAGE having
 * said what was wrong ("arbor CMD: --PREFIXthreads '...': ...", or
 * cli_bad_option's line when c is no switch option).
 */
enum {
    CLI_OPT_NO_GSO = 256,
    CLI_OPT_SPIN,
    CLI_OPT_IO,
    CLI_OPT_THREADS,
    CLI_OPT_ECN,
    CLI_OPT_DROP,
    CLI_OPT_SEED
};
#define CLI_SWITCH_OPTION(NAME, HAS_ARG, VAL)                                                      \
    {                                                                                              \
        NAME, HAS_ARG, NULL, VAL                                                                   \
    }
#define CLI_SWITCH_OPTIONS(PREFIX)                                                                 \
    CLI_SWITCH_OPTION("no-gso", no_argument, CLI_OPT_NO_GSO),                                      \
        CLI_SWITCH_OPTION("spin", required_argument, CLI_OPT_SPIN),                                \
        CLI_SWITCH_OPTION("io", required_argument, CLI_OPT_IO),                                    \
        CLI_SWITCH_OPTION(PREFIX "threads", required_argument, CLI_OPT_THREADS),                   \
        CLI_SWITCH_OPTION(PREFIX "ecn", required_argument, CLI_OPT_ECN),                           \
        CLI_SWITCH_OPTION(PREFIX "drop", required_argument, CLI_OPT_DROP),                         \
        CLI_SWITCH_OPTION("seed", required_argument, CLI_OPT_SEED)
struct arb_rt_switch_config;
int cli_switch_option(const char *cmd, const char *prefix, int c, const char *v, char **argv,
                      struct arb_rt_switch_config *cfg);
/* "mmsg" or "uring" into *io (ARB_RT_IO_*): 0, or -1. */
int cli_parse_io(const char *v, int *io);

/* A software switch's counters, one line on stderr: "WHO: rx_pkts=... "
 * (arbor switch at exit, --stats and SIGUSR1; arbor run on SIGUSR1). */
struct arb_rt_switch;
void cli_switch_stats(const char *who, const struct arb_rt_switch *s);

/*
 * The switches of arbor run and arbor mpirun (cmd_run.c): start_fabric
 * starts the switches of fabric topo on loopback, threads of this process,
 * each configured as base but for its node, address and seed, admitting
 * base's jobs and `job` with `secret`; 0 or an exit status (having said
 * why). stop_fabric stops and frees them, first printing each one's
 * counters (cli_switch_stats) when stats names who prints them. random_secret writes a fresh
 * job secret, 64 hex digits, into buf (len >= 65): 0, or -1.
 */
struct arb_rt_switch_config;
struct arb_topo;
struct swt {
    struct arb_rt_switch *s;
    pthread_t t;
    char addr[40];
    uint32_t node;
};
int start_fabric(const char *topo, uint32_t job, const char *secret,
                 const struct arb_rt_switch_config *base, struct swt **out, uint32_t *n_out,
                 struct arb_topo **tp);
void stop_fabric(struct swt *w, uint32_t n_sw, const char *stats);
int random_secret(char *buf, size_t len);

/*
 * Read all of stdin into a NUL-terminated malloc'd string. Returns NULL on
 * a read error or when it exceeds limit bytes.
 */
char *cli_read_stdin(size_t limit);

#endif
