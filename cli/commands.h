/*
 * commands.h: one function per subcommand, each in its own cli/cmd_*.c.
 * Each parses its own options with getopt_long and returns a process exit
 * code (TB_EXIT_*).
 */
#ifndef TB_CLI_COMMANDS_H
#define TB_CLI_COMMANDS_H

#include <signal.h>
#include <stdio.h>

int tb_cmd_run(int argc, char **argv);
int tb_cmd_sut(int argc, char **argv);
int tb_cmd_runs(int argc, char **argv);
int tb_cmd_report(int argc, char **argv);
int tb_cmd_meter(int argc, char **argv); /* cmd_meter.c: meter probe|sim|export */
int tb_cmd_validate(int argc, char **argv);
int tb_cmd_compare(int argc, char **argv);  /* cmd_compare.c */
int tb_cmd_campaign(int argc, char **argv); /* cmd_campaign.c */
int tb_cmd_serve(int argc, char **argv);    /* cmd_serve.c: results over HTTP, read-only */
int tb_cmd_webapp(int argc, char **argv);   /* hidden: the reference web app of one tile */
int tb_cmd_agent(int argc, char **argv);    /* cmd_agent.c: a load-generator agent */
int tb_cmd_publish(int argc, char **argv);  /* cmd_publish.c: a run's result bundle, or a static site */
int tb_cmd_check(int argc, char **argv);    /* cmd_check.c: verify a result bundle */
int tb_cmd_doctor(int argc, char **argv);   /* cmd_doctor.c: the host's and tile file's checks before a run */

struct tb_run_opts; /* coordinator/coordinator.h */
/* cmd_run.c: `run` (doctor 0), or `doctor` = `run --dry-run` (doctor 1):
 * the same options, parsed and checked the same way. */
int tb_cli_run_main(int argc, char **argv, int doctor);
/* cmd_doctor.c: runs the checks for o (coordinator/preflight.h) and prints
 * one line each, or JSON; returns the exit code (0 ok, 1 warn, 2 fail). */
int tb_cli_doctor_report(const struct tb_run_opts *o, int json);
void tb_cli_doctor_usage(FILE *f);

/* signals.c: the flag SIGINT, SIGTERM and SIGHUP set once tb_cli_catch_signals
 * ran (it also ignores SIGPIPE), for `run`, `campaign` and `agent`. */
volatile sig_atomic_t *tb_cli_stop_flag(void);
void tb_cli_catch_signals(void);

/* output.c, shared by the commands: */
/* Resets getopt for a subcommand's own options (main may have used it;
 * glibc needs optind 0 for a full re-initialisation), errors not printed. */
void tb_cli_getopt_reset(void);
/* "tilebench CMD: " fmt (with arg) " (see tilebench CMD --help)" on stderr;
 * returns TB_EXIT_USAGE. */
int tb_cli_usage_error(const char *cmd, const char *fmt, const char *arg);
/* For the commands that write a file: */
/* 1 when s ends with suffix, case-insensitively ("REPORT.HTML" is .html). */
int tb_cli_ends_with(const char *s, const char *suffix);
/* Closes f, written to path with result rc: -1 with err naming path when
 * the writing or the closing failed (a full disk), else rc. */
int tb_cli_close_checked(FILE *f, const char *path, int rc, char *err);
/* Writes path with write(ctx, f, err) (0 or -1 with err) through a
 * temporary file renamed into place, so a reader never sees half a file
 * and a failure leaves the old one; a device or a FIFO is written in place.
 * Returns 0, or -1 with err naming path. */
typedef int (*tb_cli_writer)(void *ctx, FILE *f, char *err);
int tb_cli_write_file(const char *path, tb_cli_writer write, void *ctx, char *err);

#endif
