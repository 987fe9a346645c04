/*
 * test_store_v2.c: what schema v2 added to the results store: calibrations,
 * repeats with the per-level summary (median phase per repeat, mean/min/max
 * across repeats), and per-tile QoS verdicts kept apart from the level's.
 */
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

#include "results/report.h"
#include "results/store.h"

static char dir[64], db[128];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tb_store_v2_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(db, sizeof db, "%s/r.db", dir);
    return 0;
}

static int teardown(void **state) {
    char p[160];
    (void)state;
    snprintf(p, sizeof p, "%s-wal", db);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", db);
    unlink(p);
    unlink(db);
    rmdir(dir);
    return 0;
}

static void calibrations(void **state) {
    tb_store *s;
    char err[TB_ERR_LEN], at[32];
    double ref = 0;
    int64_t run = 0;
    tb_run_info ri = {.label = "cal",
                      .tile_name = "standard",
                      .tile_spec = "1",
                      .config_text = "",
                      .settings_json = "{}",
                      .host_json = "{}",
                      .started_wall_us = 1};
    int64_t id;
    (void)state;
    assert_int_equal(tb_store_open(db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_int_equal(tb_store_get_calibration(s, "standard", "abc", "oltp", &ref, &run, at, err), 1);
    assert_int_equal(tb_store_put_calibration(s, id, "standard", "abc", "oltp", 600.5, "OPM", err), 0);
    assert_int_equal(tb_store_put_calibration(s, id, "standard", "abc", "oltp", 612.0, "OPM", err), 0);
    assert_int_equal(tb_store_put_calibration(s, id, "standard", "other", "oltp", 1.0, "OPM", err), 0);
    assert_int_equal(tb_store_get_calibration(s, "standard", "abc", "oltp", &ref, &run, at, err), 0);
    assert_true(ref == 612.0); /* the newest one */
    assert_int_equal(run, id);
    assert_int_equal(strlen(at), 20);
    assert_int_equal(tb_store_get_calibration(s, "standard", "abc", "kv", &ref, &run, at, err), 1);
    assert_int_equal(tb_store_put_calibration(s, id, "standard", "abc", "kv", -1, "ops/s", err), -1);
    assert_non_null(strstr(err, "not a positive throughput"));
    tb_store_close(s);
}

static void put(tb_store *s, int64_t id, int tiles, int phase, int repeat, double score, double watts, int tile_fail) {
    char err[TB_ERR_LEN];
    tb_qos_result q[2];
    tb_level_result lr;
    memset(&lr, 0, sizeof lr);
    memset(q, 0, sizeof q);
    lr.tiles = tiles;
    lr.phase = phase;
    lr.repeat = repeat;
    lr.steady_us = 10000000;
    lr.score = score;
    lr.avg_watts = watts;
    lr.ppkw = score / watts * 1000;
    lr.qos_pass = !tile_fail;
    lr.valid = 1;
    snprintf(q[0].rule, sizeof q[0].rule, "kv.GET p99 <= 10 ms");
    q[0].pass = 1;
    snprintf(q[1].rule, sizeof q[1].rule, "kv.GET p99 <= 10 ms");
    q[1].pass = !tile_fail;
    q[1].tile = 2;
    lr.n_qos = 2;
    lr.qos = q;
    assert_int_equal(tb_store_put_level(s, id, &lr, err), 0);
}

static void repeats_summary_and_tile_verdicts(void **state) {
    tb_store *s;
    char err[TB_ERR_LEN], *buf = NULL;
    size_t len = 0;
    FILE *f;
    json_t *root, *run, *sum;
    json_error_t je;
    tb_run_info ri = {.label = "rep",
                      .tile_name = "t",
                      .tile_spec = "2",
                      .config_text = "",
                      .settings_json = "{}",
                      .host_json = "{}",
                      .started_wall_us = 1};
    int64_t id;
    (void)state;
    assert_int_equal(tb_store_open(db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_int_equal(tb_store_put_idle(s, id, 100.0, NULL, 0, err), 0);
    /* repeat 1: phases 2.0, 1.0, 3.0 -> median phase 2.0 at 200 W */
    put(s, id, 2, 1, 1, 2.0, 200.0, 0);
    put(s, id, 2, 2, 1, 1.0, 190.0, 0);
    put(s, id, 2, 3, 1, 3.0, 210.0, 0);
    /* repeat 2: phases 4.0, 1.0 -> lower median 1.0 at 180 W, and tile 2 fails */
    put(s, id, 2, 1, 2, 4.0, 220.0, 1);
    put(s, id, 2, 2, 2, 1.0, 180.0, 0);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_COMPLETE, 2, err), 0);
    f = open_memstream(&buf, &len);
    assert_int_equal(tb_report_write(s, id, TB_REPORT_JSON, f, err), 0);
    fclose(f);
    tb_store_close(s);
    root = json_loads(buf, 0, &je);
    free(buf);
    assert_non_null(root);
    run = json_object_get(root, "run");
    assert_int_equal(json_array_size(json_object_get(run, "levels")), 5);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(run, "levels"), 3), "repeat")),
                     2);
    /* level qos rows and tile rows are apart */
    {
        json_t *lv = json_array_get(json_object_get(run, "levels"), 3);
        assert_int_equal(json_array_size(json_object_get(lv, "qos")), 1);
        assert_int_equal(json_array_size(json_object_get(lv, "tile_qos")), 1);
        assert_int_equal(
            json_integer_value(json_object_get(json_array_get(json_object_get(lv, "tile_qos"), 0), "tile")), 2);
        assert_true(json_is_false(json_object_get(json_array_get(json_object_get(lv, "tile_qos"), 0), "pass")));
    }
    sum = json_array_get(json_object_get(run, "summary"), 0);
    assert_non_null(sum);
    assert_int_equal(json_integer_value(json_object_get(sum, "tiles")), 2);
    assert_int_equal(json_integer_value(json_object_get(sum, "repeats")), 2);
    assert_int_equal(json_integer_value(json_object_get(sum, "phases")), 3);
    assert_true(json_is_false(json_object_get(sum, "qos_pass"))); /* repeat 2 phase 1 failed */
    assert_true(json_real_value(json_object_get(json_object_get(sum, "score"), "mean")) == 1.5);
    assert_true(json_real_value(json_object_get(json_object_get(sum, "score"), "min")) == 1.0);
    assert_true(json_real_value(json_object_get(json_object_get(sum, "score"), "max")) == 2.0);
    assert_true(json_real_value(json_object_get(json_object_get(sum, "avg_watts"), "mean")) == 190.0);
    assert_true(json_real_value(json_object_get(run, "peak_score")) == 1.5);
    /* SPECpower overall efficiency: 1.5 / ((190 + 100 idle) / 1000) */
    assert_true(json_real_value(json_object_get(run, "overall_efficiency")) > 5.1724 &&
                json_real_value(json_object_get(run, "overall_efficiency")) < 5.1725);
    json_decref(root);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(calibrations, setup, teardown),
        cmocka_unit_test_setup_teardown(repeats_summary_and_tile_verdicts, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
