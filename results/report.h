/*
 * report.h: report renderers over the results store. Reads only. The JSON
 * shape is the contract of design.md; text is a terminal summary.
 */
#ifndef TB_RESULTS_REPORT_H
#define TB_RESULTS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "results/store.h"

typedef enum { TB_REPORT_TEXT = 0, TB_REPORT_JSON } tb_report_format;

/* Parses "text" / "json". 0 or -1 with err naming the value. */
int tb_report_parse_format(const char *s, tb_report_format *out, char *err) TB_WUR;

/* Writes the report of run_id to f. 0 or -1 with err. */
int tb_report_write(tb_store *s, int64_t run_id, tb_report_format fmt, FILE *f, char *err) TB_WUR;

/* Lists runs (id, label, status, started, levels, peak score, peak PPKW) to f. */
int tb_report_list_runs(tb_store *s, FILE *f, char *err) TB_WUR;

#endif
