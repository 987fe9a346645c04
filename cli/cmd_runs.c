/*
 * cmd_runs.c: `tilebench runs [--db FILE]`, the list of stored runs with
 * their status, label, number of load levels and peak score and PPKW.
 * Opens the database read-only.
 */
#include <getopt.h>

#include <stdio.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/tb_common.h"
#include "results/report.h"
#include "results/store.h"

#define DEFAULT_DB "tilebench-results.db"

static void usage(FILE *f) {
    fputs("usage: tilebench runs [--db FILE]\n"
          "\n"
          "Lists the runs stored in a results database, oldest first: id, start time\n"
          "(UTC), status, label, number of load levels measured, QoS, peak score and peak\n"
          "PPKW. QoS is the run's worst level's verdict, the word every report uses: fail\n"
          "(a judged rule failed), else incomplete (some rules not judged: too few ops),\n"
          "else pass; - when no level was measured.\n"
          "\n"
          "  --db FILE    results database to read (default " DEFAULT_DB ");\n"
          "               opened read-only, so it is safe while a run is writing\n"
          "  -h, --help   show this help\n"
          "\n"
          "Status is running, complete, aborted or interrupted; a run whose writer died\n"
          "without finishing (kill -9, power loss) shows as interrupted.\n"
          "Exit status: 0 on success, 2 on a bad option or a missing or unreadable database.\n",
          f);
}

int tb_cmd_runs(int argc, char **argv) {
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db = DEFAULT_DB;
    char err[TB_ERR_LEN];
    tb_store *s = NULL;
    int c, rc;

    tb_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        case ':': return tb_cli_usage_error("runs", "option '%s' needs a value", argv[optind - 1]);
        default: return tb_cli_usage_error("runs", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return tb_cli_usage_error("runs", "unexpected argument '%s'", argv[optind]);
    if (!*db) return tb_cli_usage_error("runs", "--db needs a file name%s", "");

    if (tb_store_open_readonly(db, &s, err) != 0) {
        fprintf(stderr, "tilebench runs: %s\n", err);
        if (access(db, F_OK) != 0) fputs("  (no results yet? `tilebench run` creates it; or pass --db FILE)\n", stderr);
        return TB_EXIT_USAGE;
    }
    rc = tb_report_list_runs(s, stdout, err);
    tb_store_close(s);
    if (rc != 0) {
        fprintf(stderr, "tilebench runs: %s\n", err);
        return TB_EXIT_USAGE;
    }
    return TB_EXIT_OK;
}
