/*
 * report.h: report renderers over the results store. Reads only. The JSON
 * shape is the documented contract (docs/results.md); text is a terminal summary; HTML is one
 * self-contained page with inline SVG charts; CSV is one tidy row per level x
 * phase x workload x tile x op, for pandas or R.
 */
#ifndef TB_RESULTS_REPORT_H
#define TB_RESULTS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "results/store.h"

/* HLOG: the run's latency histograms as an HdrHistogram interval log (report_hlog.c). */
typedef enum { TB_REPORT_TEXT = 0, TB_REPORT_JSON, TB_REPORT_HTML, TB_REPORT_CSV, TB_REPORT_HLOG } tb_report_format;

/* Parses "text" / "json" / "html" / "csv" / "hlog". 0 or -1 with err naming the value. */
int tb_report_parse_format(const char *s, tb_report_format *out, char *err) TB_WUR;
/* The format a file name asks for: .json, .html or .htm, .csv, .hlog (any case);
 * anything else is text. `run --report` and `report -o` both use it. */
tb_report_format tb_report_format_for_path(const char *path);

/* Writes the report of run_id to f. 0 or -1 with err. */
int tb_report_write(tb_store *s, int64_t run_id, tb_report_format fmt, FILE *f, char *err) TB_WUR;
/* Writes the report of run_id in n formats, fmts[i] to files[i], from one
 * read of the run (what every format needs): each file holds what
 * tb_report_write writes for its format. 0 or -1 with err. */
int tb_report_write_set(tb_store *s, int64_t run_id, const tb_report_format *fmts, FILE *const *files, size_t n,
                        char *err) TB_WUR;

/* Lists runs (id, label, status, started, levels, peak score, peak PPKW) to f.
 * A run whose power is estimated (a meter stored with estimated = 1) gets "*"
 * after its peak PPKW and the table a footnote line "* ESTIMATED POWER: ...". */
int tb_report_list_runs(tb_store *s, FILE *f, char *err) TB_WUR;

#endif
