/*
 * model_temp.c: the model reader's part for the inlet temperature (schema
 * 15, table inlet_temperatures): each level's row by level_id, active idle's
 * with level_id NULL. A run without rows was not measured.
 */
#include <math.h>

#include "results/model_sql.h"

static void temp_from_row(sqlite3_stmt *st, tb_model_temp *t) {
    t->measured = 1;
    t->samples = sqlite3_column_int64(st, 1);
    t->min_c = tb_model_col_real(st, 2);
    t->mean_c = tb_model_col_real(st, 3);
    t->max_c = tb_model_col_real(st, 4);
}

int tb_model_read_temperature(tb_model_ctx *c, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    int rc;
    const tb_model_temp none = {0, 0, NAN, NAN, NAN};
    r->idle_inlet = none;
    for (size_t i = 0; i < r->n_levels; i++)
        r->levels[i].inlet = none;
    if (tb_model_prep(c, "SELECT level_id, samples, min_c, mean_c, max_c FROM inlet_temperatures WHERE run_id = ?1",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = tb_model_next(c, st)) == 1) {
        r->temp_measured = 1;
        if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
            temp_from_row(st, &r->idle_inlet);
            continue;
        }
        for (size_t i = 0; i < r->n_levels; i++)
            if (r->levels[i].id == sqlite3_column_int64(st, 0)) temp_from_row(st, &r->levels[i].inlet);
    }
    sqlite3_finalize(st);
    return rc < 0 ? -1 : 0;
}
