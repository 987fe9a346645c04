/*
 * cmd_check.c: `tilebench check BUNDLE|RUN [--db DB] [--json]`, the
 * independent verifier of a result bundle (verify/verify.h, docs/verify.md).
 * A RUN (an id or `latest`) is first published to a temporary folder
 * (publish/publish.h), then checked like any bundle.
 */
#include <getopt.h>

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/tb_common.h"
#include "publish/publish.h"
#include "verify/verify.h"

#define DEFAULT_DB "tilebench-results.db"

static void usage(FILE *f) {
    fputs("usage: tilebench check BUNDLE|RUN [--db FILE] [--json]\n"
          "\n"
          "Checks a result bundle (`tilebench publish`) with code of its own, sharing none\n"
          "with the code that produced it (docs/verify.md):\n"
          "  1. the manifest: every file's SHA-256 and size, and the file set (nothing\n"
          "     unlisted, missing, listed twice or outside the bundle's folder);\n"
          "  2. every published figure of report.json recomputed from data/*.csv and\n"
          "     histograms.hlog: throughput, normalized throughput, tile and level scores,\n"
          "     mean power (trapezoid rule), PPKW, the summary, overall efficiency, and the\n"
          "     QoS verdicts from the latency histograms;\n"
          "  3. the run rules: one sample per second per meter, at most 1% bad or missing\n"
          "     samples, uncertainty at most 1%, no auto-ranging, the steady window's edges\n"
          "     within 500 ms of a sample, a load generator under 90% CPU, and a compliant\n"
          "     run's stages and QoS rules all judged.\n"
          "Each check prints one line: PASS|FAIL name: figure (limit).\n"
          "\n"
          "  BUNDLE              a tilebench-run-UUID.tar.gz file\n"
          "  RUN                 a run id or `latest` of the database: published to a\n"
          "                      temporary folder first, then checked\n"
          "  --db FILE           results database for RUN (default " DEFAULT_DB ")\n"
          "  --json              the lines as a JSON array of {check, pass, figure, limit}\n"
          "  -h, --help          show this help\n"
          "\n"
          "Exit status: 0 every check passed (compliant when the run claimed the\n"
          "compliant preset; otherwise its figures are consistent and the last line\n"
          "names the compliance rules not applied), 1 not compliant (a check\n"
          "failed), 2 unreadable (not a bundle, a bad manifest, a file that does not\n"
          "read, an unknown run) or a bad option.\n",
          f);
}

/* s with every control character shown as '?': a file name in a bundle is
 * the bundle's, and a newline or an escape code in it must not forge a line
 * of the verdict on a terminal (--json escapes them instead). */
static void put_plain(const char *s) {
    for (; *s; s++)
        putchar((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

static void print_text(const tb_vresult *r) {
    for (size_t i = 0; i < r->n; i++) {
        fputs(r->lines[i].pass ? "PASS " : "FAIL ", stdout);
        put_plain(r->lines[i].name);
        fputs(": ", stdout);
        put_plain(r->lines[i].figure);
        fputs(" (", stdout);
        put_plain(r->lines[i].limit);
        fputs(")\n", stdout);
    }
}

static void print_json(const tb_vresult *r) {
    json_t *a = json_array();
    for (size_t i = 0; i < r->n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "check", json_string(r->lines[i].name));
        json_object_set_new(o, "pass", json_boolean(r->lines[i].pass));
        json_object_set_new(o, "figure", json_string(r->lines[i].figure));
        json_object_set_new(o, "limit", json_string(r->lines[i].limit));
        json_array_append_new(a, o);
    }
    json_dumpf(a, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
    json_decref(a);
}

/* A run id or `latest`, rather than a file name. */
static int looks_like_run(const char *s) {
    if (strcmp(s, "latest") == 0) return 1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    return *s != '\0';
}

/* Publishes run which of db into a temporary folder; the bundle's path into
 * path, the folder into dir (both removed by the caller). */
static int publish_run(const char *db, const char *which, char *dir, size_t dir_len, char *path, size_t path_len,
                       char *err) {
    tb_publish_done done;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, dir_len, "%s/tilebench-check.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        tb_seterr(err, "%s: cannot make a temporary folder", dir);
        dir[0] = '\0';
        return -1;
    }
    snprintf(path, path_len, "%s/bundle.tar.gz", dir);
    return tb_publish_bundle(db, which, path, &done, err) != 0 ? -1 : 0;
}

/* The last line: what the checks established. Exit 0 without the compliant
 * preset claimed says the figures are consistent, not that the run is
 * compliant (docs/verify.md, "Exit status"). */
static void print_verdict(const char *what, const tb_vresult *r, int rc) {
    printf("%s: %zu checks, %zu failed: ", what, r->n, r->failed);
    if (rc != TB_VERIFY_COMPLIANT)
        printf("NOT compliant\n");
    else if (r->preset_claimed)
        printf("consistent and compliant\n");
    else
        printf("figures consistent; compliance not claimed (preset %s): %zu compliance rules not applied\n", r->preset,
               r->not_applied);
}

int tb_cmd_check(int argc, char **argv) {
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db = DEFAULT_DB, *what, *bundle;
    char err[TB_ERR_LEN], dir[4096] = "", path[4200] = "";
    tb_vresult r = {0};
    struct stat st;
    int c, json = 0, rc;

    tb_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'j': json = 1; break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        case ':': return tb_cli_usage_error("check", "option '%s' needs a value", argv[optind - 1]);
        default: return tb_cli_usage_error("check", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return tb_cli_usage_error("check", "which bundle or run?%s", "");
    what = argv[optind++];
    if (optind < argc)
        return tb_cli_usage_error("check", "one bundle or run at a time (extra argument '%s')", argv[optind]);
    bundle = what;
    if (stat(what, &st) != 0 && looks_like_run(what)) {
        if (publish_run(db, what, dir, sizeof dir, path, sizeof path, err) != 0) {
            fprintf(stderr, "tilebench check: %s\n", err);
            if (path[0]) unlink(path);
            if (dir[0]) rmdir(dir);
            return TB_VERIFY_UNREADABLE;
        }
        bundle = path;
    }
    rc = tb_verify_bundle_file(bundle, &r, err);
    if (rc == TB_VERIFY_UNREADABLE) /* no verdict: nothing on stdout, the reason on stderr */
        ;
    else if (json)
        print_json(&r);
    else
        print_text(&r);
    if (rc == TB_VERIFY_UNREADABLE) fprintf(stderr, "tilebench check: %s\n", err);
    if (!json && rc != TB_VERIFY_UNREADABLE) print_verdict(bundle == path ? what : bundle, &r, rc);
    tb_vresult_free(&r);
    if (path[0]) unlink(path);
    if (dir[0]) rmdir(dir);
    return rc;
}
