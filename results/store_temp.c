/*
 * store_temp.c: the inlet temperature rows: table inlet_temperatures
 * (schema 17), one per phase of a level and one for active idle (level_id
 * NULL), each the readings' count, minimum, mean and maximum in degrees C;
 * and table temperature_samples (schema 19), every reading behind them and
 * those of the ramps, with its stage. A run without a temperature source
 * writes none.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "common/tb_common.h"
#include "results/store_internal.h"

static int insert_row(sqlite3 *db, int64_t run_id, int64_t level_id, int n, double min_c, double mean_c, double max_c) {
    const double v[3] = {min_c, mean_c, max_c};
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO inlet_temperatures (run_id, level_id, samples, min_c, mean_c, max_c)"
                                " VALUES (?, ?, ?, ?, ?, ?)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    if (level_id > 0)
        sqlite3_bind_int64(st, 2, level_id);
    else
        sqlite3_bind_null(st, 2);
    sqlite3_bind_int(st, 3, n > 0 ? n : 0);
    for (int i = 0; i < 3; i++) {
        if (n > 0 && isfinite(v[i]))
            sqlite3_bind_double(st, 4 + i, v[i]);
        else
            sqlite3_bind_null(st, 4 + i);
    }
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The readings r[0..n) of stage, level_id <= 0 stored as NULL. A reading
 * that is not finite is none (the sampler keeps only numbers). */
static int insert_readings(sqlite3 *db, int64_t run_id, int64_t level_id, const char *stage, const tb_temp_reading *r,
                           int n) {
    sqlite3_stmt *st = NULL;
    int rc;
    if (n <= 0) return SQLITE_OK;
    rc = sqlite3_prepare_v2(
        db,
        "INSERT INTO temperature_samples (run_id, level_id, source, mono_us, wall_us, celsius, stage)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    for (int i = 0; i < n && rc == SQLITE_OK; i++) {
        if (!isfinite(r[i].celsius)) continue;
        sqlite3_bind_int64(st, 1, run_id);
        if (level_id > 0)
            sqlite3_bind_int64(st, 2, level_id);
        else
            sqlite3_bind_null(st, 2);
        sqlite3_bind_int(st, 3, r[i].source);
        sqlite3_bind_int64(st, 4, (int64_t)r[i].mono_us);
        sqlite3_bind_int64(st, 5, r[i].wall_us);
        sqlite3_bind_double(st, 6, r[i].celsius);
        sqlite3_bind_text(st, 7, stage, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    sqlite3_finalize(st);
    return rc;
}

int tb_store_insert_level_temperature(tb_store *s, int64_t run_id, int64_t level_id, const tb_level_result *lr) {
    sqlite3 *db = tb_store_db(s);
    int rc;
    if (!lr->has_temp) return SQLITE_OK;
    rc = insert_row(db, run_id, level_id, lr->temp_n, lr->temp_min_c, lr->temp_mean_c, lr->temp_max_c);
    for (int i = 0; i < lr->n_temp_stages && rc == SQLITE_OK; i++) {
        const tb_temp_stage *ts = &lr->temp_stages[i];
        int steady = strcmp(ts->stage, "steady") == 0;
        rc = insert_readings(db, run_id, steady ? level_id : 0, ts->stage, ts->readings, ts->n);
    }
    return rc;
}

int tb_store_put_idle_temperature(tb_store *s, int64_t run_id, int n, double min_c, double mean_c, double max_c,
                                  const tb_temp_reading *r, int nr, char *err) {
    sqlite3 *db = tb_store_db(s);
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = insert_row(db, run_id, 0, n, min_c, mean_c, max_c);
    if (rc == SQLITE_OK) rc = insert_readings(db, run_id, 0, "idle", r, nr);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        tb_seterr(err, "store active idle temperature: %s", sqlite3_errmsg(db));
        if (!sqlite3_get_autocommit(db)) (void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}
