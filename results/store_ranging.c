/*
 * store_ranging.c: the level_ranges rows of the ranging pass (store.h).
 */
#include <sqlite3.h>
#include <stdio.h>

#include "results/store_internal.h"

int tb_store_put_ranging(tb_store *s, int64_t run_id, const tb_ranging_row *row, char *err) {
    static const char sql[] =
        "INSERT INTO level_ranges (run_id, tiles, repeat, alone, meter, peak_v, peak_a, volt_range_v, amp_range_a,"
        " samples, start_mono_us, end_mono_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
    sqlite3 *db = tb_store_db(s);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_int(st, 2, row->tiles);
        sqlite3_bind_int(st, 3, row->repeat);
        if (row->alone)
            sqlite3_bind_text(st, 4, row->alone, -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(st, 4);
        sqlite3_bind_int(st, 5, row->meter);
        sqlite3_bind_double(st, 6, row->peak_v);
        sqlite3_bind_double(st, 7, row->peak_a);
        sqlite3_bind_double(st, 8, row->volt_range_v);
        sqlite3_bind_double(st, 9, row->amp_range_a);
        sqlite3_bind_int(st, 10, row->samples);
        sqlite3_bind_int64(st, 11, (sqlite3_int64)row->start_us);
        sqlite3_bind_int64(st, 12, (sqlite3_int64)row->end_us);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        tb_seterr(err, "store the ranges of %d tiles, meter %d: %s", row->tiles, row->meter + 1, sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}
