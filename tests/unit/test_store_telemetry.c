/*
 * test_store_telemetry.c: host telemetry through the results store (schema
 * v3) into the reports: the per-level aggregate (CPU time by mode, frequency
 * and its source, C-state residency by name), every sample in
 * telemetry_samples (level_id NULL for active idle), NULL for what was not
 * available, and the JSON, text and HTML views of the same ("n/a").
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "results/report.h"
#include "results/store.h"
#include "results/store_internal.h"

static char dbpath[64];

static tb_telem_sample sample(uint64_t end_us, double util, double freq, double c0, double c6) {
    tb_telem_sample x;
    memset(&x, 0, sizeof x);
    x.mono_us = end_us;
    x.wall_us = (int64_t)1780000000 * 1000000 + (int64_t)end_us;
    x.interval_us = 1000000;
    x.cpu_util_pct = util;
    for (int m = 0; m < TB_CPU_NMODES; m++)
        x.mode_pct[m] = 0;
    x.mode_pct[TB_CPU_USER] = util * 0.75;
    x.mode_pct[TB_CPU_SYSTEM] = util * 0.25;
    x.mode_pct[TB_CPU_IDLE] = 100 - util;
    x.freq_mhz = freq;
    x.freq_src = isfinite(freq) ? TB_FREQ_CPUFREQ : TB_FREQ_NONE;
    if (isfinite(c0)) {
        x.n_cstates = 2;
        strcpy(x.cstate_name[0], "C0");
        strcpy(x.cstate_name[1], "C6");
        x.cstate_pct[0] = c0;
        x.cstate_pct[1] = c6;
    }
    return x;
}

static int64_t level_with(tb_store *s, int64_t run, int tiles, const tb_telem_sample *ts, int n) {
    tb_level_result lr;
    char err[TB_ERR_LEN] = "";
    memset(&lr, 0, sizeof lr);
    lr.tiles = tiles;
    lr.phase = 1;
    lr.steady_us = 10000000;
    lr.score = tiles;
    lr.avg_watts = 100 + tiles;
    lr.ppkw = 1;
    lr.qos_pass = lr.valid = 1;
    tb_telem_aggregate(ts, n, &lr.telemetry);
    lr.n_telem_samples = n;
    lr.telem_samples = ts;
    assert_int_equal(tb_store_put_level(s, run, &lr, err), 0);
    return 0;
}

static char *render(tb_store *s, int64_t run, tb_report_format fmt) {
    char *buf = NULL, err[TB_ERR_LEN] = "";
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(tb_report_write(s, run, fmt, f, err), 0);
    fclose(f);
    return buf;
}

static void test_roundtrip(void **state) {
    tb_store *s = NULL;
    tb_run_info ri;
    int64_t run = 0;
    char err[TB_ERR_LEN] = "", *text;
    json_t *root, *lv, *t;
    json_error_t je;
    (void)state;
    snprintf(dbpath, sizeof dbpath, "/tmp/tb_test_st_telem_%d.db", (int)getpid());
    unlink(dbpath);
    assert_int_equal(tb_store_open(dbpath, &s, err), 0);
    memset(&ri, 0, sizeof ri);
    ri.tile_name = "standard";
    ri.tile_spec = "1,2";
    ri.host_json = "{\"hostname\":\"sut\",\"governor\":\"powersave\",\"turbo\":null,\"telemetry\":\"local\"}";
    assert_int_equal(tb_store_begin_run(s, &ri, &run, err), 0);
    {
        tb_telem_sample idle[2] = {sample(1000000, 2, 1200, 2, 98), sample(2000000, 4, 1400, 4, 96)};
        assert_int_equal(tb_store_put_idle_telemetry(s, run, idle, 2, err), 0);
    }
    {
        /* level 1: cpufreq and cpuidle available */
        tb_telem_sample a[2] = {sample(11000000, 40, 2000, 40, 60), sample(12000000, 60, 3000, 60, 40)};
        level_with(s, run, 1, a, 2);
    }
    {
        /* level 2: frequency and C-states not available (a VM without cpufreq or cpuidle) */
        tb_telem_sample b[3] = {sample(21000000, 80, NAN, NAN, NAN), sample(22000000, 90, NAN, NAN, NAN),
                                sample(23000000, 100, NAN, NAN, NAN)};
        level_with(s, run, 2, b, 3);
    }
    assert_int_equal(tb_store_finish_run(s, run, TB_RUN_COMPLETE, 2, err), 0);

    /* stored rows */
    {
        sqlite3_stmt *st;
        sqlite3 *db = tb_store_db(s);
        assert_int_equal(sqlite3_prepare_v2(db,
                                            "SELECT count(*), sum(level_id IS NULL), sum(freq_source IS NULL),"
                                            " sum(cstate_residency_json IS NULL) FROM telemetry_samples",
                                            -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st, 0), 7);
        assert_int_equal(sqlite3_column_int(st, 1), 2);
        assert_int_equal(sqlite3_column_int(st, 2), 3);
        assert_int_equal(sqlite3_column_int(st, 3), 3);
        sqlite3_finalize(st);
        assert_int_equal(sqlite3_prepare_v2(db,
                                            "SELECT cstate_residency_json, freq_source, telemetry_samples FROM levels"
                                            " ORDER BY tiles",
                                            -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), "{\"C0\":50.0,\"C6\":50.0}");
        assert_string_equal((const char *)sqlite3_column_text(st, 1), "cpufreq");
        assert_int_equal(sqlite3_column_int(st, 2), 2);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_type(st, 0), SQLITE_NULL);
        assert_int_equal(sqlite3_column_type(st, 1), SQLITE_NULL);
        sqlite3_finalize(st);
    }

    /* JSON */
    text = render(s, run, TB_REPORT_JSON);
    root = json_loads(text, 0, &je);
    assert_non_null(root);
    lv = json_array_get(json_object_get(json_object_get(root, "run"), "levels"), 0);
    t = json_object_get(lv, "telemetry");
    assert_true(fabs(json_number_value(json_object_get(t, "cpu_util_pct")) - 50.0) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(t, "avg_freq_mhz")) - 2500.0) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(t, "user_pct")) - 37.5) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(t, "sys_pct")) - 12.5) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(t, "idle_pct")) - 50.0) < 1e-9);
    assert_string_equal(json_string_value(json_object_get(t, "freq_source")), "cpufreq");
    assert_int_equal(json_integer_value(json_object_get(t, "samples")), 2);
    assert_true(fabs(json_number_value(json_object_get(json_object_get(t, "cstate_residency_pct"), "C6")) - 50.0) <
                1e-9);
    lv = json_array_get(json_object_get(json_object_get(root, "run"), "levels"), 1);
    t = json_object_get(lv, "telemetry");
    assert_true(fabs(json_number_value(json_object_get(t, "cpu_util_pct")) - 90.0) < 1e-9);
    assert_true(json_is_null(json_object_get(t, "avg_freq_mhz")));
    assert_true(json_is_null(json_object_get(t, "freq_source")));
    assert_int_equal(json_object_size(json_object_get(t, "cstate_residency_pct")), 0);
    t = json_object_get(json_object_get(root, "run"), "active_idle_telemetry");
    assert_true(fabs(json_number_value(json_object_get(t, "cpu_util_pct")) - 3.0) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(t, "samples")), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(json_object_get(root, "run"), "host"), "governor")),
        "powersave");
    json_decref(root);
    free(text);

    /* text: the telemetry table, n/a where not available, and the power configuration line */
    text = render(s, run, TB_REPORT_TEXT);
    assert_non_null(strstr(text, "Host telemetry over steady state"));
    assert_non_null(strstr(text, "C0 50.0 C6 50.0"));
    assert_non_null(strstr(text, "      2     1   90.0   67.5   22.5    0.0   10.0     n/a  n/a           n/a\n"));
    assert_non_null(strstr(text, "governor powersave"));
    assert_non_null(strstr(text, "turbo n/a"));
    free(text);

    /* HTML: configuration table and n/a cells */
    text = render(s, run, TB_REPORT_HTML);
    assert_non_null(strstr(text, "<tr><th>governor</th><td>powersave</td></tr>"));
    assert_non_null(strstr(text, "<tr><th>turbo / boost</th><td>n/a</td></tr>"));
    assert_non_null(strstr(text, "Mean CPU frequency against tiles"));
    assert_non_null(strstr(text, "C-state residency against tiles"));
    assert_non_null(strstr(text, "<td class=\"n\">n/a</td><td>n/a</td><td>n/a</td>"));
    free(text);

    tb_store_close(s);
    unlink(dbpath);
    {
        char p[96];
        snprintf(p, sizeof p, "%s-wal", dbpath);
        unlink(p);
        snprintf(p, sizeof p, "%s-shm", dbpath);
        unlink(p);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
