/*
 * cmd_campaign.c: `tilebench campaign --config FILE [--db FILE] [--report
 * FILE] [--quiet]`: runs the same sweep under several named SUT
 * configurations and compares them against the baseline one
 * (coordinator/campaign.h). Installs the SIGINT/SIGTERM/SIGHUP handler that ends
 * the run in progress cleanly; its configuration is still reverted.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/run_console.h"
#include "common/tb_common.h"
#include "coordinator/campaign.h"

static void usage(FILE *f) {
    fputs("usage: tilebench campaign --config FILE [--db FILE] [--report FILE] [--quiet]\n"
          "\n"
          "Runs the same sweep under several SUT configurations (power policies such as\n"
          "governors or tuned profiles) and compares them against the baseline one.\n"
          "For each [config.NAME] of the campaign file, baseline first: its apply command\n"
          "(/bin/sh -c), the sweep (as `tilebench run`, labelled NAME), then its revert\n"
          "command, always (also after a failure or SIGINT). The runs are stored as one\n"
          "campaign; at the end the comparison against the baseline run is printed and\n"
          "written as HTML.\n"
          "\n"
          "  --config FILE   the campaign file (docs/campaigns.md, tiles/examples/campaign-*.ini)\n"
          "  --db FILE       results database (default tilebench-results.db)\n"
          "  --report FILE   the HTML comparison (default tilebench-campaign.html)\n"
          "  --quiet         no per-run progress (commands' output and the comparison still print)\n"
          "  --help          this text\n"
          "\n"
          "A [config.NAME] may set its own tile_file, tiles, meter (repeatable), threads\n"
          "and label; a key it leaves out is [sweep]'s. Every tile file and meter is\n"
          "checked before the first apply; a configuration's tile file is read again\n"
          "after its apply, and its run stores the text it ran. An apply (or revert) that\n"
          "changes a file read before it (the campaign file, a tile file; by SHA-256) is\n"
          "warned, and the warning is stored with the run and shown in the comparison.\n"
          "\n"
          "A non-zero exit of an apply command stops the campaign with an error naming\n"
          "the configuration, the command and its exit status; runs already finished stay.\n"
          "exit: 0 complete, 2 usage/configuration error, 3 stopped (an apply or revert\n"
          "failed, a run was aborted, or interrupted)\n",
          f);
}

/* Shown with --quiet too: the run's stored warning says the same. */
static void on_file_changed(void *arg, const char *config, const char *file, const char *msg) {
    (void)arg;
    (void)config;
    (void)file;
    printf("warning: %s\n", msg);
    fflush(stdout);
}

int tb_cmd_campaign(int argc, char **argv) {
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'}, {"db", required_argument, NULL, 'd'},
        {"report", required_argument, NULL, 'r'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *config = NULL;
    tb_campaign_opts o;
    tb_campaign *c;
    char err[TB_ERR_LEN];
    int64_t campaign_id = -1;
    tb_run_console con;
    tb_run_observer run_obs;
    tb_campaign_observer obs;
    int opt, rc, quiet = 0;

    memset(&o, 0, sizeof o);
    o.db_path = "tilebench-results.db";
    o.report_path = "tilebench-campaign.html";
    tb_cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c': config = optarg; break;
        case 'd': o.db_path = optarg; break;
        case 'r': o.report_path = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        case ':': return tb_cli_usage_error("campaign", "option '%s' needs a value", argv[optind - 1]);
        default: return tb_cli_usage_error("campaign", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return tb_cli_usage_error("campaign", "unexpected argument '%s'", argv[optind]);
    if (!config) return tb_cli_usage_error("campaign", "--config FILE is required%s", "");
    if (!*config) return tb_cli_usage_error("campaign", "--config needs a file name%s", "");
    if (!*o.db_path) return tb_cli_usage_error("campaign", "--db needs a file name%s", "");
    if (!*o.report_path) return tb_cli_usage_error("campaign", "--report needs a file name%s", "");

    c = xcalloc(1, sizeof *c);
    if (tb_campaign_load(config, c, err) != 0) {
        fprintf(stderr, "tilebench campaign: %s\n", err);
        free(c);
        return TB_EXIT_USAGE;
    }
    tb_cli_catch_signals();
    o.stop = tb_cli_stop_flag();
    tb_run_console_init(&con, quiet, &run_obs);
    tb_campaign_console_init(&con, &obs);
    obs.file_changed = on_file_changed;
    obs.run = &run_obs;
    o.observer = &obs;

    rc = tb_campaign_run(c, &o, &campaign_id, err);
    if (rc != TB_EXIT_OK) fprintf(stderr, "tilebench campaign: %s\n", err);
    tb_campaign_free(c);
    free(c);
    return rc;
}
