/*
 * store_hosts.c: the rows of a SUT of several hosts ([host.NAME] in the
 * tile file, schema 9): hosts (one per host of a run, with its active idle)
 * and level_hosts (one per host and phase). A run without hosts writes none.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>

#include "results/store_internal.h"

static void bind_num(sqlite3_stmt *st, int i, double v) {
    if (isfinite(v))
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void bind_str(sqlite3_stmt *st, int i, const char *v) {
    if (v && *v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

/* Steps st once (it is a write) and finalizes it. */
static int step_final(sqlite3_stmt *st) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* A host's telemetry columns from `first` on: cpu_util_pct, avg_freq_mhz,
 * freq_source, telemetry_samples (all NULL without a source). */
static void bind_telemetry(sqlite3_stmt *st, int first, const tb_host_result *h) {
    const tb_telemetry *t = &h->telemetry;
    if (!h->has_telemetry) {
        for (int k = 0; k < 4; k++)
            sqlite3_bind_null(st, first + k);
        return;
    }
    bind_num(st, first, t->cpu_util_pct);
    bind_num(st, first + 1, t->avg_freq_mhz);
    bind_str(st, first + 2,
             t->freq_src != TB_FREQ_NONE && isfinite(t->avg_freq_mhz) ? tb_telem_freq_source_name(t->freq_src) : NULL);
    sqlite3_bind_int(st, first + 3, t->n_samples);
}

int tb_store_insert_hosts(tb_store *s, int64_t run_id, const tb_run_info *info) {
    sqlite3_stmt *st = NULL;
    int rc = SQLITE_OK;
    if (info->n_hosts <= 0) return SQLITE_OK;
    rc = sqlite3_prepare_v2(tb_store_db(s),
                            "INSERT INTO hosts (run_id, idx, name, label, tiles, telemetry, host_json)"
                            " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                            -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < info->n_hosts; i++) {
        const tb_host_info *h = &info->hosts[i];
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_int(st, 2, i);
        sqlite3_bind_text(st, 3, h->name, -1, SQLITE_STATIC);
        bind_str(st, 4, h->label);
        sqlite3_bind_text(st, 5, h->tiles ? h->tiles : "", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, h->telemetry ? h->telemetry : "none", -1, SQLITE_STATIC);
        bind_str(st, 7, h->host_json);
        rc = step_final(st);
    }
    sqlite3_finalize(st);
    return rc;
}

int tb_store_insert_level_hosts(tb_store *s, int64_t level_id, const tb_host_result *h, int n) {
    sqlite3_stmt *st = NULL;
    int rc;
    if (n <= 0) return SQLITE_OK;
    rc =
        sqlite3_prepare_v2(tb_store_db(s),
                           "INSERT INTO level_hosts (level_id, name, tiles, avg_watts, samples, cpu_util_pct,"
                           " avg_freq_mhz, freq_source, telemetry_samples) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                           -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < n; i++) {
        sqlite3_bind_int64(st, 1, level_id);
        sqlite3_bind_text(st, 2, h[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, h[i].tiles);
        if (isfinite(h[i].avg_watts) && h[i].avg_watts >= 0)
            sqlite3_bind_double(st, 4, h[i].avg_watts);
        else
            sqlite3_bind_null(st, 4);
        sqlite3_bind_int64(st, 5, (int64_t)h[i].samples);
        bind_telemetry(st, 6, &h[i]);
        rc = step_final(st);
    }
    sqlite3_finalize(st);
    return rc;
}

int tb_store_put_idle_hosts(tb_store *s, int64_t run_id, const tb_host_result *h, int n, char *err) {
    sqlite3 *db = tb_store_db(s);
    sqlite3_stmt *st = NULL;
    int rc;
    if (n <= 0) return 0;
    rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(
            db,
            "UPDATE hosts SET active_idle_watts = ?3, idle_cpu_util_pct = ?4, idle_avg_freq_mhz = ?5,"
            " idle_telemetry_samples = ?7 WHERE run_id = ?1 AND name = ?2",
            -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < n; i++) {
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_text(st, 2, h[i].name, -1, SQLITE_STATIC);
        if (isfinite(h[i].avg_watts) && h[i].avg_watts >= 0)
            sqlite3_bind_double(st, 3, h[i].avg_watts);
        else
            sqlite3_bind_null(st, 3);
        bind_telemetry(st, 4, &h[i]); /* ?6 (freq_source) is bound and not used */
        rc = step_final(st);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        tb_seterr(err, "store put idle hosts: %s", sqlite3_errmsg(db));
        if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}
