/*
 * report_fmt.h: internal to results/. Small formatting pieces the report
 * renderers share (report_fmt.c).
 */
#ifndef TB_RESULTS_REPORT_FMT_H
#define TB_RESULTS_REPORT_FMT_H

#include <stddef.h>
#include <stdio.h>

#include "results/model.h"

/* Prints s with control characters (ESC, CR, ...) shown as '?', padded with
 * spaces to `width` display columns (UTF-8 code points) when width > 0, and
 * cut with "..." at `maxw` columns when maxw > 0. NULL prints as "". */
void tb_fmt_put_safe(FILE *f, const char *s, int width, int maxw);

/* "timeout 2, content 25": the nonzero classes of g (TB_ERR_* order) into
 * buf, then "other N" for errors no class counts; "" when g has no errors,
 * "not split" when its classes are not known (a run stored before schema 5). */
void tb_fmt_error_classes(const tb_model_op_group *g, char *buf, size_t len);

/* " (oltp alone)" for a level that ran a workload alone (--interference),
 * made safe as tb_fmt_put_safe does; nothing for the whole tile's. */
void tb_fmt_put_alone(FILE *f, const tb_model_level *lv);

/* s, or "" when NULL. */
static inline const char *tb_fmt_str(const char *s) { return s ? s : ""; }

#endif
