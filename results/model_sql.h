/*
 * model_sql.h: internal to the model reader (model_read.c, model_levels.c):
 * its statement helpers and column readers, in the conventions of model.h.
 */
#ifndef TB_RESULTS_MODEL_SQL_H
#define TB_RESULTS_MODEL_SQL_H

#include <sqlite3.h>

#include "results/model.h"

typedef struct tb_model_ctx {
    sqlite3 *db;
    char *err;
    int raw_text; /* TB_MODEL_RAW_TEXT: strings as stored */
} tb_model_ctx;

int tb_model_prep(tb_model_ctx *c, const char *sql, sqlite3_stmt **st);
/* Steps st; 1 row, 0 done, -1 error (err set). */
int tb_model_next(tb_model_ctx *c, sqlite3_stmt *st);
/* Opens a read transaction if none is open, so every query sees the same
 * snapshot. Returns 1 when it opened one (tb_model_read_end ends it). */
int tb_model_read_begin(sqlite3 *db);
void tb_model_read_end(sqlite3 *db, int opened);

char *tb_model_col_str(const tb_model_ctx *c, sqlite3_stmt *st, int i); /* NULL for NULL; UTF-8 unless raw_text */
double tb_model_col_real(sqlite3_stmt *st, int i);                      /* NaN for NULL or not finite */
tb_model_int tb_model_col_int(sqlite3_stmt *st, int i);
/* A stored JSON object text (column `name`, for warnings) as an ordered
 * list ({} when NULL or not an object); tb_model_obj_free frees it. */
void tb_model_col_object(sqlite3_stmt *st, int i, const char *name, tb_model_obj *o);
void tb_model_obj_free(tb_model_obj *o);

/* The telemetry columns (14-15, 17-27) of the levels query. */
void tb_model_telemetry_from_levels_row(const tb_model_ctx *c, sqlite3_stmt *st, tb_model_telemetry *t);
/* r->levels of r->id (model_levels.c). */
int tb_model_read_levels(tb_model_ctx *c, tb_model_run *r, int flags);

/* model_infra.c: lv's application and infrastructure scores, operations
 * and kept outputs (level_id's rows); and freeing them. 0, or -1. */
int tb_model_read_level_infra(tb_model_ctx *c, int64_t level_id, tb_model_level *lv, int flags);
void tb_model_free_level_infra(tb_model_level *lv);

/* model_hosts.c: r->hosts, each meter's host and each level's hosts
 * (after the levels are read); and freeing them. */
int tb_model_read_hosts(tb_model_ctx *c, tb_model_run *r);
void tb_model_free_hosts(tb_model_run *r);

/* model_temp.c: the inlet temperature of r's levels and active idle
 * (after the levels are read). 0, or -1. */
int tb_model_read_temperature(tb_model_ctx *c, tb_model_run *r);

/* model_power.c: r->samples and r->stages (TB_MODEL_POWER_SERIES), after the
 * levels; and freeing them. 0, or -1. */
int tb_model_read_power(tb_model_ctx *c, tb_model_run *r);
void tb_model_free_power(tb_model_run *r);

#endif
