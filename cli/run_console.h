/*
 * run_console.h: the console of `tilebench run` and `tilebench campaign`:
 * the run observer (coordinator/observer.h) that prints what a run does,
 * with live progress on a terminal, nothing with --quiet, and the campaign
 * observer that prints its configurations' steps.
 */
#ifndef TB_CLI_RUN_CONSOLE_H
#define TB_CLI_RUN_CONSOLE_H

#include "coordinator/campaign.h"
#include "coordinator/observer.h"

typedef struct tb_run_console {
    int is_tty;  /* stdout is a terminal: live progress lines instead of stage lines */
    int quiet;   /* --quiet: nothing of the run is shown */
    int verbose; /* --verbose: each QoS rule that did not pass, one line each, under its level's line */
} tb_run_console;

/* Fills *obs with the console's callbacks; con must outlive the run. */
void tb_run_console_init(tb_run_console *con, int quiet, tb_run_observer *obs);

/* Fills *obs with the campaign console's callbacks (they always print; con's
 * quiet applies to the runs and the settle line only). */
void tb_campaign_console_init(tb_run_console *con, tb_campaign_observer *obs);

#endif
