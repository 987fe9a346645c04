/*
 * report_data.h: internal to results/. The run model every report renderer
 * reads, so the SQL lives once (in report.c) and text, JSON, HTML and CSV can
 * never disagree: the JSON tree of the run, plus the stored latency
 * histograms of a level on demand. Renderers for new formats take a
 * tb_report_data and write to a FILE; report.c dispatches to them.
 */
#ifndef TB_RESULTS_REPORT_DATA_H
#define TB_RESULTS_REPORT_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "common/tb_common.h"
#include "qos/hist.h"
#include "results/store.h"

struct sqlite3;
struct sqlite3_stmt;

/*
 * One stored run, read inside one read transaction (a consistent snapshot).
 * Everything is owned by tb_report_write and valid only during the renderer
 * call that receives it.
 */
typedef struct tb_report_data {
    const json_t *run;           /* the "run" object of the JSON report (its documented shape) */
    const int64_t *level_ids;    /* levels row ids, in the order of run.levels */
    size_t n_levels;
    struct sqlite3 *db;          /* for tb_report_level_ops */
    struct sqlite3_stmt *ops_st; /* prepared lazily by tb_report_level_ops */
} tb_report_data;

/* One op of one workload of one level (one phase row), merged over its tiles. */
typedef struct tb_report_op_group {
    char *workload, *op;
    uint64_t count, errors; /* summed over tiles */
    uint64_t errors_by_class[TB_ERR_NCLASSES]; /* summed over tiles, TB_ERR_* order (store.h) */
    int classes_known;      /* 0: some row predates schema 5 (errors not split by class) */
    tb_hist *hist;          /* corrected latency (from intended start), µs; never NULL, may be empty */
} tb_report_op_group;

/*
 * The ops of level run.levels[level_index], merging the tiles' stored
 * histograms (a percentile of the union, not an average of percentiles), in
 * the order they were stored. *out is malloc'd (caller frees with
 * tb_report_op_groups_free); *n may be 0. An unreadable histogram BLOB is
 * logged and counted as empty rather than failing the report. 0 or -1 with
 * err on a database error.
 */
int tb_report_level_ops(tb_report_data *d, size_t level_index, tb_report_op_group **out, size_t *n,
                        char *err) TB_WUR;
void tb_report_op_groups_free(tb_report_op_group *g, size_t n); /* NULL is a no-op */

/* Writes the HTML page of d to f (report_html.c). 0 or -1 with err. */
int tb_report_write_html(tb_report_data *d, FILE *f, char *err) TB_WUR;

/* Writes the tidy CSV of d to f (report_csv.c). 0 or -1 with err. */
int tb_report_write_csv(tb_report_data *d, FILE *f, char *err) TB_WUR;

/* "timeout 2, content 25": the nonzero classes of g (TB_ERR_* order) into
 * buf, then "other N" for errors no class counts; "" when g has no errors,
 * "not split" when g->classes_known is 0 (a run stored before schema 5). */
void tb_report_error_classes(const tb_report_op_group *g, char *buf, size_t len);

#endif
