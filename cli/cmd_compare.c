/*
 * cmd_compare.c: `tilebench compare RUN RUN... [--baseline RUN] [--db FILE]
 * [--format text|html|json] [-o FILE]`: stored runs normalized to a baseline
 * run at each load level (results/compare.h). Opens the database read-only.
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
#include "results/compare.h"
#include "results/store.h"

#define DEFAULT_DB "tilebench-results.db"
#define MAX_RUNS   64

static void usage(FILE *f) {
    fputs("usage: tilebench compare RUN RUN... [--baseline RUN] [--db FILE] [--format text|html|json] [-o FILE]\n"
          "\n"
          "Compares stored runs against a baseline run at each load level (matched by\n"
          "tiles): % change in score, PPKW, mean power, p95 latency per workload, and\n"
          "CPU utilization and frequency when stored. Per level, each run's figures are\n"
          "its median phase's (by score) in each repeat, averaged over repeats. A level\n"
          "a run did not measure shows as missing; a baseline figure of 0 or unknown\n"
          "gives no %.\n"
          "\n"
          "  RUN                 run id as listed by `tilebench runs`, or `latest`; 2 to 64 runs\n"
          "  --baseline RUN      the run the others are compared against (default: the first RUN);\n"
          "                      it must be one of the RUNs\n"
          "  --db FILE           results database to read (default " DEFAULT_DB ")\n"
          "  -f, --format FMT    text (default), json, or html (one self-contained page with\n"
          "                      grouped bar charts, no JavaScript); without --format, -o picks\n"
          "                      it by extension (.html/.htm, .json; else text)\n"
          "  -o, --output FILE   write to FILE instead of stdout (a regular file is replaced\n"
          "                      atomically, a device or FIFO written in place; `-` is stdout)\n"
          "  -h, --help          show this help\n"
          "\n"
          "Exit status: 0 on success; 2 on a bad option, fewer than 2 runs, a run given\n"
          "twice, an unknown run, a baseline not among the runs, a missing database or an\n"
          "unwritable output file.\n",
          f);
}

typedef struct compare_job {
    tb_store *s;
    const int64_t *ids;
    int n;
    int64_t base;
    tb_compare_format fmt;
} compare_job;

static int write_compare(void *ctx, FILE *f, char *err) {
    compare_job *j = ctx;
    return tb_compare_write(j->s, j->ids, j->n, j->base, j->fmt, f, err);
}

/* The comparison to path, whole or not at all (tb_cli_write_file). */
static int write_to_file(tb_store *s, const int64_t *ids, int n, int64_t base, tb_compare_format fmt, const char *path,
                         char *err) {
    compare_job j = {s, ids, n, base, fmt};
    return tb_cli_write_file(path, write_compare, &j, err);
}

int tb_cmd_compare(int argc, char **argv) {
    static const struct option longopts[] = {
        {"baseline", required_argument, NULL, 'b'}, {"db", required_argument, NULL, 'd'},
        {"format", required_argument, NULL, 'f'},   {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    const char *db = DEFAULT_DB, *out = NULL, *format = NULL, *baseline = NULL;
    const char *which[MAX_RUNS];
    int64_t ids[MAX_RUNS], base_id = 0;
    tb_compare_format fmt = TB_COMPARE_TEXT;
    char err[TB_ERR_LEN];
    tb_store *s = NULL;
    int c, rc, n = 0;

    tb_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': baseline = optarg; break;
        case 'd': db = optarg; break;
        case 'f': format = optarg; break;
        case 'o': out = optarg; break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        case ':': return tb_cli_usage_error("compare", "option '%s' needs a value", argv[optind - 1]);
        default: return tb_cli_usage_error("compare", "unknown option '%s'", argv[optind - 1]);
        }
    }
    for (; optind < argc; optind++) {
        if (n == MAX_RUNS)
            return tb_cli_usage_error("compare", "too many runs (at most 64; '%s' is one more)", argv[optind]);
        which[n++] = argv[optind];
    }
    if (n < 2)
        return tb_cli_usage_error("compare", "give at least 2 runs to compare%s", n == 1 ? " (only 1 given)" : "");
    if (!*db) return tb_cli_usage_error("compare", "--db needs a file name%s", "");
    if (baseline && !*baseline) return tb_cli_usage_error("compare", "--baseline needs a run id or 'latest'%s", "");
    if (out && !*out) return tb_cli_usage_error("compare", "-o needs a file name%s", "");
    if (format) {
        if (tb_compare_parse_format(format, &fmt, err) != 0) return tb_cli_usage_error("compare", "--format: %s", err);
    } else if (out) {
        if (tb_cli_ends_with(out, ".json"))
            fmt = TB_COMPARE_JSON;
        else if (tb_cli_ends_with(out, ".html") || tb_cli_ends_with(out, ".htm"))
            fmt = TB_COMPARE_HTML;
    }

    if (tb_store_open_readonly(db, &s, err) != 0) {
        fprintf(stderr, "tilebench compare: %s\n", err);
        if (access(db, F_OK) != 0) fputs("  (no results yet? `tilebench run` creates it; or pass --db FILE)\n", stderr);
        return TB_EXIT_USAGE;
    }
    for (int i = 0; i < n; i++) {
        if (tb_store_resolve_run(s, which[i], &ids[i], err) != 0) {
            fprintf(stderr, "tilebench compare: %s\n", err);
            tb_store_close(s);
            return TB_EXIT_USAGE;
        }
    }
    if (!baseline)
        base_id = ids[0];
    else if (tb_store_resolve_run(s, baseline, &base_id, err) != 0) {
        fprintf(stderr, "tilebench compare: --baseline: %s\n", err);
        tb_store_close(s);
        return TB_EXIT_USAGE;
    }
    if (!out || strcmp(out, "-") == 0)
        rc = tb_compare_write(s, ids, n, base_id, fmt, stdout, err);
    else
        rc = write_to_file(s, ids, n, base_id, fmt, out, err);
    tb_store_close(s);
    if (rc != 0) {
        fprintf(stderr, "tilebench compare: %s\n", err);
        return TB_EXIT_USAGE;
    }
    return TB_EXIT_OK;
}
