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

/*
 * Print "arbor PREFIX: MESSAGE" on stderr as one line and return
 * CLI_EXIT_USAGE.
 */
int cli_error(const char *prefix, const char *fmt, ...) ARB_PRINTF(2, 3);

/* True when arg is "-h" or "--help". */
int cli_is_help(const char *arg);

/*
 * Parse an unsigned decimal or 0x-hex integer no larger than max.
 * Returns 0, or -1 when the text is not such a number.
 */
int cli_parse_u64(const char *s, uint64_t max, uint64_t *out);

/*
 * Read all of stdin into a NUL-terminated malloc'd string. Returns NULL on
 * a read error or when it exceeds limit bytes.
 */
char *cli_read_stdin(size_t limit);

#endif
