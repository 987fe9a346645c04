/*
 * report_agents.h: internal to results/. The load-generator agents of a run
 * in the text and HTML reports (report_agents.c); nothing for a run without.
 */
#ifndef TB_RESULTS_REPORT_AGENTS_H
#define TB_RESULTS_REPORT_AGENTS_H

#include <stdio.h>

#include "results/model.h"

void tb_report_text_agents(FILE *f, const tb_model_run *r);
void tb_report_html_agents(FILE *f, const tb_model_run *r);

#endif
