/*
 * cmd_publish.c: `tilebench publish [RUN|latest] [-o FILE.tar.gz] [--db FILE]`,
 * a run's result bundle (docs/bundle.md), and `tilebench publish --site DIR
 * [--db FILE]`, a static site of every run. Opens the database read-only.
 */
#include <getopt.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/tb_common.h"
#include "publish/publish.h"

#define DEFAULT_DB "tilebench-results.db"

static void usage(FILE *f) {
    fputs("usage: tilebench publish [RUN|latest] [-o FILE.tar.gz] [--db FILE]\n"
          "       tilebench publish --site DIR [--db FILE]\n"
          "\n"
          "Writes a run's result bundle: one tar.gz holding the folder\n"
          "tilebench-run-UUID/ with manifest.json (every other file's SHA-256 and size),\n"
          "tiles.ini (the tile file the run ran, passwords removed), report.json,\n"
          "report.csv, report.html and histograms.hlog (what `tilebench report` writes for\n"
          "--format json, csv, html, hlog), and data/TABLE.csv,\n"
          "the run's stored rows of each table the figures rest on (docs/bundle.md).\n"
          "`tilebench check` verifies one.\n"
          "\n"
          "  RUN                 run id as listed by `tilebench runs`, or `latest` (default);\n"
          "                      a run still running is refused\n"
          "  --db FILE           results database to read (default " DEFAULT_DB ")\n"
          "  -o, --output FILE   the bundle's file (default tilebench-run-UUID.tar.gz in the\n"
          "                      current folder); written to a temporary file beside it and\n"
          "                      renamed at the end, so a failure leaves no half bundle\n"
          "  --site DIR          instead: a static site of every run in DIR (made when\n"
          "                      missing): index.html, runs/UUID/report.html and the run's\n"
          "                      bundle, compare/A-B.html (run B against A, the run of the same\n"
          "                      tile before it with power measured, or estimated, as B's;\n"
          "                      never a meter's against an estimate); every link relative,\n"
          "                      for any web server; every page links back to the index\n"
          "  -h, --help          show this help\n"
          "\n"
          "A run whose stored meter URIs or tile file text still hold a password is not\n"
          "published. Exit status: 0 on success, 2 on a bad option, a missing database,\n"
          "an unknown or unfinished run, or a file that cannot be written.\n",
          f);
}

/* The error of a failed publish, with a hint when the database is missing. */
static int failed(const char *db, const char *err) {
    fprintf(stderr, "tilebench publish: %s\n", err);
    if (access(db, F_OK) != 0) fputs("  (no results yet? `tilebench run` creates it; or pass --db FILE)\n", stderr);
    return TB_EXIT_USAGE;
}

int tb_cmd_publish(int argc, char **argv) {
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},
        {"output", required_argument, NULL, 'o'},
        {"site", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db = DEFAULT_DB, *which = "latest", *out = NULL, *site = NULL;
    char err[TB_ERR_LEN];
    int c, have_run = 0;

    tb_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'o': out = optarg; break;
        case 's': site = optarg; break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        case ':': return tb_cli_usage_error("publish", "option '%s' needs a value", argv[optind - 1]);
        default: return tb_cli_usage_error("publish", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) {
        which = argv[optind++];
        have_run = 1;
    }
    if (optind < argc) return tb_cli_usage_error("publish", "one run at a time (extra argument '%s')", argv[optind]);
    if (!*db) return tb_cli_usage_error("publish", "--db needs a file name%s", "");
    if (out && !*out) return tb_cli_usage_error("publish", "-o needs a file name%s", "");
    if (site && !*site) return tb_cli_usage_error("publish", "--site needs a folder name%s", "");
    if (site && (have_run || out))
        return tb_cli_usage_error("publish", "--site publishes every run: give no RUN and no -o%s", "");

    if (site) {
        tb_publish_site_done sd;
        if (tb_publish_site(db, site, &sd, err) != 0) return failed(db, err);
        printf("wrote the site %s/index.html: %d run%s, %d published with a report and a bundle, %d comparison%s\n",
               site, sd.runs, sd.runs == 1 ? "" : "s", sd.published, sd.compares, sd.compares == 1 ? "" : "s");
        return TB_EXIT_OK;
    }
    {
        tb_publish_done d;
        if (tb_publish_bundle(db, which, out, &d, err) != 0) return failed(db, err);
        printf("wrote %s: run %lld (%s), %zu files, %llu bytes before compression\n", d.path, (long long)d.run_id,
               d.uuid, d.files, (unsigned long long)d.bytes);
    }
    return TB_EXIT_OK;
}
