/* The `arbor` command: dispatch to subcommands. */
#include "arbor/base.h"
#include "cli.h"

#include <getopt.h>
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
    {"sweep", "run every point of a scenario's parameter ranges, on all cores or MPI ranks",
     cmd_sweep},
    {"plot", "draw a simulation's CSV results with gnuplot: utilisation, queues, FCT CDF",
     cmd_plot},
    {"switch", "run a software aggregation switch of the UDP runtime", cmd_switch},
    {"run", "run a command as N ranks of a job on this machine, with its switches", cmd_run},
    {"bench", "time a collective over the runtime: the nccl-tests table", cmd_bench},
    {"lab", "run a scenario's fabric for real: namespaces, shaped links, switches, ranks", cmd_lab},
    {"mpirun", "run an unmodified MPI program with its collectives over Arbor", cmd_mpirun},
};

#define N_SUB (sizeof subcommands / sizeof subcommands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: arbor [-h|--help] [-V|--version] COMMAND [ARGS...]\n\n"
               "Arbor: in-network aggregation for collective communication; fabric\n"
               "model, simulator and runtime.\n\n"
               "Commands:\n");
    for (size_t i = 0; i < N_SUB; i++)
        fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(f, "\nRun 'arbor COMMAND --help' for a command's options. Options take their\n"
               "value as '--opt value' or '--opt=value', and may be abbreviated.\n"
               "Exit status: 0 success, 1 a failed run, 2 bad usage or malformed input.\n");
}

static int run_help(int argc, char **argv)
{
    if (argc > 1) {
        for (size_t i = 0; i < N_SUB; i++)
            if (strcmp(argv[1], subcommands[i].name) == 0) {
                char help[] = "--help";
                char *args[] = {argv[1], help, NULL};
                return subcommands[i].run(2, args);
            }
        return cli_error("help", "unknown command '%s'", argv[1]);
    }
    usage(stdout);
    return CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, {0, 0, 0, 0}};
    cli_getopt_start(opts);
    int c;
    /* '+': stop at the command; its own options are its own */
    while ((c = getopt_long(argc, argv, "+:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return CLI_EXIT_OK;
        case 'V':
            printf("%s\n", cli_version());
            return CLI_EXIT_OK;
        default:
            fprintf(stderr, "arbor: unknown option '%s'; run 'arbor --help'\n", argv[optind - 1]);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[optind];
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind;
    if (strcmp(cmd, "help") == 0) return run_help(sub_argc, sub_argv);
    if (strcmp(cmd, "version") == 0) {
        printf("%s\n", cli_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < N_SUB; i++)
        if (strcmp(cmd, subcommands[i].name) == 0) return subcommands[i].run(sub_argc, sub_argv);
    fprintf(stderr, "arbor: unknown command '%s'; run 'arbor --help' for the list\n", cmd);
    return CLI_EXIT_USAGE;
}
