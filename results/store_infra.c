/*
 * store_infra.c: the rows of a level's infrastructure operations
 * ([infra.NAME], schema 10): infra (one per operation and phase, its
 * durations as percentiles and a histogram BLOB) and infra_outputs (one per
 * op kept: what it printed or did). A level without operations writes none.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/tb_common.h"
#include "results/store_internal.h"

static void bind_num(sqlite3_stmt *st, int i, double v) {
    if (isfinite(v))
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void bind_count(sqlite3_stmt *st, int i, uint64_t v) {
    sqlite3_bind_int64(st, i, v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v);
}

static int step_final(sqlite3_stmt *st) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Durations from `first` on: mean, p50, p95, p99, max (ms) and the histogram BLOB. */
static void bind_durations(sqlite3_stmt *st, int first, const tb_hist *h) {
    static const double pcts[] = {50, 95, 99};
    uint8_t *buf = NULL;
    size_t len = 0;
    if (!h || tb_hist_count(h) == 0) {
        for (int k = 0; k < 6; k++)
            sqlite3_bind_null(st, first + k);
        return;
    }
    sqlite3_bind_double(st, first, tb_hist_mean(h) / 1000.0);
    for (int k = 0; k < 3; k++)
        sqlite3_bind_double(st, first + 1 + k, (double)tb_hist_percentile(h, pcts[k]) / 1000.0);
    sqlite3_bind_double(st, first + 4, (double)tb_hist_max(h) / 1000.0);
    if (tb_hist_encode(h, &buf, &len) != 0 || !buf) {
        free(buf);
        sqlite3_bind_null(st, first + 5);
    } else {
        sqlite3_bind_blob64(st, first + 5, buf, len, free);
    }
}

static int insert_infra(sqlite3 *db, int64_t level_id, const tb_infra_result *r, int n) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO infra (level_id, idx, name, kind, users, ops, errors, err_connect, err_io,"
                                " err_timeout, err_server, err_content, count_all, bytes, mb_per_s, ops_per_hour,"
                                " reference, normalized, mean_ms, p50_ms, p95_ms, p99_ms, max_ms, hist) VALUES (?1, ?2,"
                                " ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,"
                                " ?21, ?22, ?23, ?24)",
                                -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < n; i++) {
        sqlite3_bind_int64(st, 1, level_id);
        sqlite3_bind_int(st, 2, i);
        sqlite3_bind_text(st, 3, r[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, r[i].kind, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 5, r[i].users);
        bind_count(st, 6, r[i].ops);
        bind_count(st, 7, r[i].errors);
        for (int k = 0; k < TB_ERR_NCLASSES; k++)
            bind_count(st, 8 + k, r[i].errors_by_class[k]);
        bind_count(st, 13, r[i].count_all);
        bind_count(st, 14, r[i].bytes);
        bind_num(st, 15, r[i].mb_per_s);
        bind_num(st, 16, r[i].ops_per_hour);
        bind_num(st, 17, r[i].reference > 0 ? r[i].reference : NAN);
        bind_num(st, 18, r[i].normalized);
        bind_durations(st, 19, r[i].hist);
        rc = step_final(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static int insert_outputs(sqlite3 *db, int64_t level_id, const tb_infra_output *o, int n) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO infra_outputs (level_id, name, user, tile, started_at, duration_ms,"
                                " status, exit_code, output) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                                -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < n; i++) {
        char at[32];
        const char *cls = o[i].status == 0 ? "ok" : tb_store_err_class_name(o[i].status - 1);
        tb_format_wall(o[i].start_wall_us, at, sizeof at);
        sqlite3_bind_int64(st, 1, level_id);
        sqlite3_bind_text(st, 2, o[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, o[i].user);
        sqlite3_bind_int(st, 4, o[i].tile);
        sqlite3_bind_text(st, 5, at, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(st, 6, (double)o[i].duration_us / 1000.0);
        sqlite3_bind_text(st, 7, cls ? cls : "error", -1, SQLITE_STATIC);
        if (o[i].exit_code >= 0)
            sqlite3_bind_int(st, 8, o[i].exit_code);
        else
            sqlite3_bind_null(st, 8);
        sqlite3_bind_text(st, 9, o[i].text ? o[i].text : "", -1, SQLITE_STATIC);
        rc = step_final(st);
    }
    sqlite3_finalize(st);
    return rc;
}

int tb_store_insert_level_infra(tb_store *s, int64_t level_id, const tb_level_result *lr) {
    int rc;
    if (!lr->has_infra) return SQLITE_OK;
    rc = insert_infra(tb_store_db(s), level_id, lr->infra, lr->n_infra);
    if (rc == SQLITE_OK) rc = insert_outputs(tb_store_db(s), level_id, lr->infra_outputs, lr->n_infra_outputs);
    return rc;
}
