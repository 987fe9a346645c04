/*
 * report_views.h: internal to results/. The report renderers, one per
 * format, each reading the typed model (model.h) alone and writing to a
 * FILE; report.c reads the model and picks one. No renderer calls another.
 */
#ifndef TB_RESULTS_REPORT_VIEWS_H
#define TB_RESULTS_REPORT_VIEWS_H

#include <stdio.h>

#include "results/model.h"

int tb_report_write_json(const tb_model_run *r, FILE *f, char *err) TB_WUR; /* report_json.c */
int tb_report_write_text(const tb_model_run *r, FILE *f, char *err) TB_WUR; /* report_text.c */
int tb_report_write_csv(const tb_model_run *r, FILE *f, char *err) TB_WUR;  /* report_csv.c */
int tb_report_write_html(const tb_model_run *r, FILE *f, char *err) TB_WUR; /* report_html.c */
/* needs TB_MODEL_OP_HISTS */
int tb_report_write_hlog(const tb_model_run *r, FILE *f, char *err) TB_WUR; /* report_hlog.c */
/* The consolidation-interference table of a run with alone levels
 * (--interference; report_interference.c): nothing (NULL) without one. */
struct json_t;
struct json_t *tb_report_interference_json(const tb_model_run *r);
void tb_report_interference_text(const tb_model_run *r, FILE *f);
void tb_report_interference_csv(const tb_model_run *r, FILE *f);
void tb_report_interference_html(const tb_model_run *r, FILE *f);
/* The run list and campaigns, as a terminal table (report_text.c). */
int tb_report_write_run_list(const tb_model_run_list *l, FILE *f, char *err) TB_WUR;

#endif
