/*
 * cmd_report.c: `tilebench report [RUN|latest] [--db FILE]
 * [--format text|html|json|csv|hlog] [-o FILE]`, the report of one stored run.
 * Opens the database read-only, so it works while a run is writing and never
 * creates an empty database.
 */
#include <getopt.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/tb_common.h"
#include "results/report.h"
#include "results/store.h"

#define DEFAULT_DB "tilebench-results.db"

static void usage(FILE *f) {
    fputs("usage: tilebench report [RUN|latest] [--db FILE] [--format text|html|json|csv|hlog] [-o FILE]\n"
          "\n"
          "Writes the report of one stored run: its settings, meters, active idle power,\n"
          "and per load level the score, mean watts, PPKW, QoS verdict and op latencies.\n"
          "\n"
          "  RUN                 run id as listed by `tilebench runs`, or `latest` (default)\n"
          "  --db FILE           results database to read (default " DEFAULT_DB ");\n"
          "                      opened read-only, so it is safe while a run is writing\n"
          "  -f, --format FMT    text    a terminal summary (default)\n"
          "                      html    one self-contained page: SVG charts, tables, no JavaScript\n"
          "                      json    every figure, machine-readable (docs/results.md, \"The\n"
          "                              JSON report\"); an op's mean_ms..max_ms are corrected\n"
          "                              (from its intended start), \"uncorrected\" from its send\n"
          "                      csv     tidy rows (level x phase x workload x tile x op) for\n"
          "                              pandas or R; units in the column names\n"
          "                      hlog    every latency histogram as an HdrHistogram interval log\n"
          "                              (values in µs), for HdrHistogram's own tools\n"
          "                      without --format, -o picks it by extension: .html/.htm, .json,\n"
          "                      .csv, .hlog; anything else is text\n"
          "  -o, --output FILE   write to FILE instead of stdout (a regular file is replaced\n"
          "                      atomically, a device or FIFO written in place; `-` is stdout)\n"
          "  -h, --help          show this help\n"
          "\n"
          "A run whose writer died without finishing (kill -9, power loss) shows as\n"
          "\"interrupted\". Exit status: 0 on success, 2 on a bad option, a missing or\n"
          "unreadable database, an unknown run, or an output that cannot be written\n"
          "(a full disk).\n",
          f);
}

typedef struct report_job {
    tb_store *s;
    int64_t run_id;
    tb_report_format fmt;
} report_job;

static int write_report(void *ctx, FILE *f, char *err) {
    report_job *j = ctx;
    return tb_report_write(j->s, j->run_id, j->fmt, f, err);
}

/* The report to path, whole or not at all (tb_cli_write_file). */
static int write_to_file(tb_store *s, int64_t run_id, tb_report_format fmt, const char *path, char *err) {
    report_job j = {s, run_id, fmt};
    return tb_cli_write_file(path, write_report, &j, err);
}

int tb_cmd_report(int argc, char **argv) {
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db = DEFAULT_DB, *which = "latest", *out = NULL, *format = NULL;
    tb_report_format fmt = TB_REPORT_TEXT;
    char err[TB_ERR_LEN];
    tb_store *s = NULL;
    int64_t run_id = 0;
    int c, rc;

    tb_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'f': format = optarg; break;
        case 'o': out = optarg; break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        case ':': return tb_cli_usage_error("report", "option '%s' needs a value", argv[optind - 1]);
        default: return tb_cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) which = argv[optind++];
    if (optind < argc) return tb_cli_usage_error("report", "one run at a time (extra argument '%s')", argv[optind]);
    if (!*db) return tb_cli_usage_error("report", "--db needs a file name%s", "");
    if (out && !*out) return tb_cli_usage_error("report", "-o needs a file name%s", "");
    if (format) {
        if (tb_report_parse_format(format, &fmt, err) != 0) return tb_cli_usage_error("report", "--format: %s", err);
    } else if (out) {
        fmt = tb_report_format_for_path(out);
    }

    if (tb_store_open_readonly(db, &s, err) != 0) {
        fprintf(stderr, "tilebench report: %s\n", err);
        if (access(db, F_OK) != 0) fputs("  (no results yet? `tilebench run` creates it; or pass --db FILE)\n", stderr);
        return TB_EXIT_USAGE;
    }
    if (tb_store_resolve_run(s, which, &run_id, err) != 0) {
        fprintf(stderr, "tilebench report: %s\n", err);
        tb_store_close(s);
        return TB_EXIT_USAGE;
    }
    if (!out || strcmp(out, "-") == 0)
        rc = tb_report_write(s, run_id, fmt, stdout, err);
    else
        rc = write_to_file(s, run_id, fmt, out, err);
    tb_store_close(s);
    if (rc != 0) {
        fprintf(stderr, "tilebench report: %s\n", err);
        return TB_EXIT_USAGE;
    }
    return TB_EXIT_OK;
}
