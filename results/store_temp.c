/*
 * store_temp.c: the inlet temperature rows (table inlet_temperatures,
 * schema 15): one per phase of a level and one for active idle (level_id
 * NULL), each the readings' count, minimum, mean and maximum in degrees C.
 * A run without a temperature source writes none.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>

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

int tb_store_insert_level_temperature(tb_store *s, int64_t run_id, int64_t level_id, const tb_level_result *lr) {
    if (!lr->has_temp) return SQLITE_OK;
    return insert_row(tb_store_db(s), run_id, level_id, lr->temp_n, lr->temp_min_c, lr->temp_mean_c, lr->temp_max_c);
}

int tb_store_put_idle_temperature(tb_store *s, int64_t run_id, int n, double min_c, double mean_c, double max_c,
                                  char *err) {
    int rc = insert_row(tb_store_db(s), run_id, 0, n, min_c, mean_c, max_c);
    if (rc != SQLITE_OK) {
        tb_seterr(err, "store active idle temperature: %s", sqlite3_errstr(rc));
        return -1;
    }
    return 0;
}
