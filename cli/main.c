/*
 * main.c: tilebench's entry point: dispatches to one subcommand per file
 * (cli/cmd_*.c). Only subcommands that are built are listed.
 */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/tb_common.h"

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary; /* NULL: hidden from the main help (it has its own --help) */
} command;

static const command commands[] = {
    {"run", tb_cmd_run, "sweep load levels against the SUT, measure power, score, store"},
    {"doctor", tb_cmd_doctor, "check the host, meters, tile file and SUT before a run, in seconds"},
    {"sut", tb_cmd_sut, "start, stop or check the embedded SUT on loopback"},
    {"runs", tb_cmd_runs, "list stored runs"},
    {"report", tb_cmd_report, "print a run's report (text, json, csv, html, hlog)"},
    {"compare", tb_cmd_compare, "compare runs against a baseline run at each load level (% change)"},
    {"campaign", tb_cmd_campaign, "run one sweep under several SUT configurations and compare them"},
    {"serve", tb_cmd_serve, "publish the results database over HTTP, read-only"},
    {"publish", tb_cmd_publish, "write a run's result bundle (tar.gz), or a static site of every run"},
    {"check", tb_cmd_check, "verify a result bundle: hashes, figures recomputed, run rules"},
    {"validate", tb_cmd_validate, "exit 0 iff QoS and validity pass (at every or one load level)"},
    {"meter", tb_cmd_meter, "probe a power meter, run the meter emulator, or export meters to Prometheus"},
    {"agent", tb_cmd_agent, "serve as a load-generator agent for coordinators on other hosts"},
    {"webapp", tb_cmd_webapp, NULL}, /* started by `sut up`, one per tile */
};

static void usage(FILE *f) {
    fprintf(f,
            "tilebench %s: a VMmark-style energy-efficiency benchmark\n"
            "(tiles of OLTP, key-value, mail and web load; score and performance per kW)\n\n"
            "usage: tilebench COMMAND [options]   (tilebench COMMAND --help for its options)\n\n"
            "commands:\n",
            TB_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].summary) fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nexit codes: 0 ok, 1 validation failed (doctor: a warning), 2 usage or configuration\n"
               "            error (doctor: a failure), 3 run aborted or interrupted (measured data is kept)\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return TB_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return TB_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("tilebench %s (source revision %s)\n", TB_VERSION, TB_SOURCE_REVISION);
        return TB_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "tilebench: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return TB_EXIT_USAGE;
}
