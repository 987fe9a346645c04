/*
 * report_infra.h: internal to results/. Infrastructure operations
 * ([infra.NAME]) in every report (report_infra.c): each level's
 * application, infrastructure and final score side by side, the
 * per-operation table, and the kept output of failed ops. A run without
 * operations says its score is the application score alone.
 */
#ifndef TB_RESULTS_REPORT_INFRA_H
#define TB_RESULTS_REPORT_INFRA_H

#include <jansson.h>
#include <stdio.h>

#include "results/model.h"

/* Some stored phase of r ran infrastructure operations. */
int tb_report_run_has_infra(const tb_model_run *r);
/* How the level scores are made: "application score only (no
 * infrastructure operations)" or the 80/20 weighting. */
const char *tb_report_score_basis(const tb_model_run *r);

/* Text: the scores per level, the operations, the failed ops' output. */
void tb_report_text_infra(FILE *f, const tb_model_run *r);
/* JSON: a level's app_score, infra_score, infra and infra_outputs; a
 * summary entry's app_score and infra_score; the run's score_basis. */
void tb_report_json_infra_level(json_t *o, const tb_model_level *lv);
void tb_report_json_infra_summary(json_t *o, const tb_model_summary *s);
void tb_report_json_infra_run(json_t *run, const tb_model_run *r);
/* CSV: with operations, four more columns at the end (app_score,
 * infra_score, infra_bytes, infra_mb_per_s: the last two filled on an
 * operation's rows only) and one row per level x phase x operation (workload
 * "infra.NAME", op its kind, throughput its ops/hour). */
void tb_report_csv_infra_header(FILE *f, const tb_model_run *r);
void tb_report_csv_infra_scores(FILE *f, const tb_model_run *r, const tb_model_level *lv, const tb_model_infra *x);
/* The workload and op cells (WORKLOAD_COLS + OP_COLS of report_csv.c) of operation x, each after a comma. */
void tb_report_csv_infra_cells(FILE *f, const tb_model_infra *x);
/* HTML: the scores, the operations and the failed ops' output. */
void tb_report_html_infra(FILE *f, const tb_model_run *r);

#endif
