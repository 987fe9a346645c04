/*
 * preflight.h: `tilebench doctor` (and `run --dry-run`): what the host and
 * the tile file will and will not measure, found in a few seconds without
 * starting load or servers. Each check is one {name, status, detail}; the
 * caller prints them (the coordinator prints nothing). Checks, in order:
 *
 *   tile-file      the file parsed and its workloads' keys (as run checks them)
 *   meter.N        each meter opens, identifies itself and gives one good
 *                  sample; estimate: is a warning, a bad sample a failure,
 *                  an uncertainty over 1% or a stale calibration a warning
 *                  (a failure with --preset compliant, as the run judges it)
 *   temperature.N  each inlet temperature source gives a reading
 *   clock          synchronised, from timedatectl, chronyc or systemd's flag
 *                  file; none of them present: warn "unknown"
 *   governor, epp, turbo, tuned   the power policy as the run records it
 *   rapl           the powercap energy counters are readable
 *   telemetry      the telemetry source gives CPU time (frequency, C-states)
 *   open-files     the limit against what the largest load level needs
 *   sut, sut.NAME  the embedded SUT's programs, or each workload's servers
 *                  of [sut]: they answer and are sized for the largest level
 *   not-available  what the report will show as "not available"
 *
 * Every connection is bounded (2 s for the preflight's own, 5 s for the
 * run's SUT-ready checks it repeats).
 */
#ifndef TB_COORDINATOR_PREFLIGHT_H
#define TB_COORDINATOR_PREFLIGHT_H

#include "coordinator/coordinator.h"

typedef enum tb_pf_status { TB_PF_OK = 0, TB_PF_WARN = 1, TB_PF_FAIL = 2 } tb_pf_status;

#define TB_PF_NAME_LEN   64
#define TB_PF_DETAIL_LEN 640
#define TB_PF_NA_LEN     640

typedef struct tb_pf_check {
    char name[TB_PF_NAME_LEN]; /* "meter.1", "sut.oltp" */
    tb_pf_status status;
    char detail[TB_PF_DETAIL_LEN]; /* one line, no secret */
} tb_pf_check;

typedef struct tb_pf_report {
    int n, cap;
    tb_pf_check *checks;
    char na[TB_PF_NA_LEN]; /* "governor, RAPL, ..." gathered for the not-available line */
} tb_pf_report;

/* "ok", "warn", "fail". */
const char *tb_pf_status_name(tb_pf_status s);

/*
 * Runs every check for the sweep o describes (o->def, o->levels, the
 * meters, temperature sources, telemetry and o->compliant; the rest of o is
 * not used) into *out (zero it first; free it with tb_pf_report_free).
 * Returns the worst status: the exit code of `doctor` (0, 1 or 2).
 */
tb_pf_status tb_preflight_run(const tb_run_opts *o, tb_pf_report *out);
void tb_pf_report_free(tb_pf_report *r);

/* For the preflight's own files: */
/* Appends a check (detail printf-style, cut to one line). */
void tb_pf_add(tb_pf_report *r, const char *name, tb_pf_status st, const char *fmt, ...) TB_PRINTF(4, 5);
/* Adds what to the not-available list. */
void tb_pf_na(tb_pf_report *r, const char *what);
/* preflight_sut.c: the SUT's checks for tiles 1..tiles. */
void tb_pf_sut(tb_pf_report *r, const tb_tiledef *def, int tiles);

#endif
