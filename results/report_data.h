/*
 * report_data.h: internal to results/. What the HTML renderer reads while it
 * moves to the typed model: the model (model.h) and the JSON tree of it.
 */
#ifndef TB_RESULTS_REPORT_DATA_H
#define TB_RESULTS_REPORT_DATA_H

#include <stdio.h>

#include <jansson.h>

#include "results/model.h"

typedef struct tb_report_data {
    const json_t *run;         /* the "run" object of the JSON report */
    const tb_model_run *model; /* the same run, typed */
} tb_report_data;

/* The "run" object of the JSON report of r (report_json.c); caller decrefs. */
json_t *tb_report_json_run(const tb_model_run *r);

int tb_report_write_html_tree(tb_report_data *d, FILE *f, char *err) TB_WUR;

#endif
