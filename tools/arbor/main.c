/* The `arbor` command: dispatch to subcommands. */
#include "arbor/base.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>

struct subcommand {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

static const struct subcommand subcommands[] = {
    {"wire", "encode and decode Arbor packets (header, payload, Ethernet/IPv4/UDP frame)",
     cmd_wire},
    {"topo", "build a fabric from its spec: counts per level and tier, Graphviz, ports", cmd_topo},
    {"route", "link loads of a routing engine on a fabric under a traffic pattern", cmd_route},
    {"sim", "run a scenario through the packet simulator: completion times, queues, losses",
     cmd_sim},
    {"plot", "draw a simulation's CSV results with gnuplot: utilisation, queues, FCT CDF",
     cmd_plot},
    {"switch", "run a software aggregation switch of the UDP runtime", cmd_switch},
    {"run", "run a command as N ranks of a job on this machine, with its switches", cmd_run},
    {"bench", "time a collective over the runtime: the nccl-tests table", cmd_bench},
};

#define N_SUB (sizeof subcommands / sizeof subcommands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: arbor [--help] [--version] COMMAND [ARGS...]\n\n"
               "Arbor: in-network aggregation for collective communication; fabric\n"
               "model, simulator and runtime.\n\n"
               "Commands:\n");
    for (size_t i = 0; i < N_SUB; i++)
        fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(f, "\nRun 'arbor COMMAND --help' for a command's options.\n"
               "Exit status: 0 success, 1 a failed run, 2 bad usage or malformed input.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            for (size_t i = 0; i < N_SUB; i++)
                if (strcmp(argv[2], subcommands[i].name) == 0) {
                    char help[] = "--help";
                    char *args[] = {argv[2], help, NULL};
                    return subcommands[i].run(2, args);
                }
            return cli_error("help", "unknown command '%s'", argv[2]);
        }
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("arbor %s\n", arb_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < N_SUB; i++)
        if (strcmp(cmd, subcommands[i].name) == 0) return subcommands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "arbor: unknown command '%s'; run 'arbor --help' for the list\n", cmd);
    return CLI_EXIT_USAGE;
}
