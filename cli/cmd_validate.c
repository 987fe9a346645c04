/*
 * cmd_validate.c: `tilebench validate [RUN|latest] [--db FILE] [--tiles N]`:
 * exit 0 only when the QoS word (tb_model_qos_verdict) is pass and validity
 * holds at the named (or every) load level; exit 1 otherwise (fail or
 * incomplete), printing each failing rule with its observed value and limit
 * and each rule not judged (too few ops).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli/commands.h"
#include "common/tb_common.h"
#include "results/store.h"
#include "results/validate.h"

#define DEFAULT_DB "tilebench-results.db"

static void usage(FILE *f) {
    fputs("usage: tilebench validate [RUN|latest] [--db FILE] [--tiles N]\n"
          "\n"
          "Checks a stored run (default: latest). It passes only when every load level\n"
          "(or only the levels with N tiles) has QoS pass and is valid; checking every\n"
          "level also requires that the run completed. A level's QoS is one word, the\n"
          "same as in every report: pass, fail (a judged rule failed) or incomplete\n"
          "(some rules not judged: too few ops to mean anything). incomplete is not a\n"
          "pass, so it fails validate too. Prints one line per level phase with its\n"
          "word and counts, each failing QoS rule with its observed value and limit,\n"
          "each rule not judged with its ops and the least it needs, and for an\n"
          "incomplete level how long a steady state would judge every rule. The last\n"
          "line is PASS, or FAIL with what stopped it (\"QoS incomplete at 3 level\n"
          "phases\").\n"
          "\n"
          "  --db FILE    results database (default " DEFAULT_DB "), opened read-only\n"
          "  --tiles N    check only the load level with N tiles\n"
          "  -h, --help   this text\n"
          "\n"
          "exit: 0 pass, 1 fail, 2 usage error, missing database, run or level\n",
          f);
}

static int usage_error(const char *msg, const char *arg) {
    fprintf(stderr, "tilebench validate: %s%s (see tilebench validate --help)\n", msg, arg);
    return TB_EXIT_USAGE;
}

int tb_cmd_validate(int argc, char **argv) {
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},
        {"tiles", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db = DEFAULT_DB, *which = "latest";
    uint64_t tiles = 0;
    char err[TB_ERR_LEN];
    tb_store *s = NULL;
    int64_t run_id;
    int c, rc;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 't':
            if (tb_parse_u64(optarg, &tiles, err) != 0 || tiles < 1 || tiles > 100000)
                return usage_error("--tiles: must be an integer >= 1, not ", optarg);
            break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        case ':': return usage_error("option needs a value: ", argv[optind - 1]);
        default: return usage_error("unknown option ", argv[optind - 1]);
        }
    }
    if (optind < argc) which = argv[optind++];
    if (optind < argc) return usage_error("unexpected argument ", argv[optind]);
    if (tb_store_open_readonly(db, &s, err) != 0) {
        fprintf(stderr, "tilebench validate: %s\n", err);
        return TB_EXIT_USAGE;
    }
    if (tb_store_resolve_run(s, which, &run_id, err) != 0) {
        fprintf(stderr, "tilebench validate: %s\n", err);
        tb_store_close(s);
        return TB_EXIT_USAGE;
    }
    rc = tb_validate_run(s, run_id, (int)tiles, stdout, err);
    tb_store_close(s);
    if (rc < 0) {
        fprintf(stderr, "tilebench validate: %s\n", err);
        return TB_EXIT_USAGE;
    }
    return rc == 1 ? TB_EXIT_OK : TB_EXIT_VALIDATE;
}
