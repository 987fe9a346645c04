/*
 * report_temp.h: internal to results/. The inlet temperature in every report
 * (report_temp.c): per level and over active idle, minimum, mean and maximum
 * in degrees C, or "not measured" for a run without a temperature source.
 */
#ifndef TB_RESULTS_REPORT_TEMP_H
#define TB_RESULTS_REPORT_TEMP_H

#include <jansson.h>
#include <stdio.h>

#include "results/model.h"

/* SPECpower's least inlet temperature, degrees C (as qos/validity.h judges it). */
#define TB_REPORT_MIN_INLET_C 20.0

/* JSON: {"measured": false} or {"measured": true, "samples", "min_c", "mean_c", "max_c"}. */
json_t *tb_report_json_temp(const tb_model_temp *t);
/* Text: a section with one line per level and one for active idle. */
void tb_report_text_temp(FILE *f, const tb_model_run *r);
/* HTML: the same as a table (f is the page's). */
void tb_report_html_temp(FILE *f, const tb_model_run *r);

#endif
