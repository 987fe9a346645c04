/*
 * test_store_infra.c: infrastructure operations in the results store
 * (schema 10) and the reports: a level's infra rows (counts, errors by
 * class, ops/hour, reference, MB/s, durations from the histogram) and kept
 * outputs read back as stored; the scores side by side and a failed op's
 * output, its control characters shown as '?' in text and escaped in HTML,
 * whole in JSON; a run without operations says its score is the
 * application score alone and stores no such rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/compare.h"
#include "results/model.h"
#include "results/report.h"
#include "results/store.h"
#include "results/store_internal.h"

typedef struct fix {
    char dir[64], db[128];
} fix;

static int setup(void **state) {
    fix *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/tb-infra-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->db, sizeof f->db, "%s/r.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fix *f = *state;
    const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[160];
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        snprintf(p, sizeof p, "%s%s", f->db, suffix[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

#define FAILED_TEXT "exit status 1\n\x1b[31mred\x1b[0m <b>&</b>"
/* outputs kept: the failed one above, a backup's success, a failed one of 61
 * lines (its status line last), 6 more failed: 8 failed ops of "fails" */
#define N_OUT 9

/* A run of one 2-tile level; with_infra: a backup and a failing command beside it. */
static int64_t store_run(const char *db, int with_infra) {
    tb_store *s;
    char err[TB_ERR_LEN] = "";
    tb_run_info ri;
    tb_level_result lr;
    tb_infra_result ir[2];
    tb_infra_output out[N_OUT];
    char longtext[1024];
    size_t ll = 0;
    tb_hist *h = tb_hist_new();
    int64_t id;
    memset(&ri, 0, sizeof ri);
    ri.label = "infra";
    ri.tile_name = "t";
    ri.tile_spec = "2";
    ri.config_text = "";
    ri.settings_json = "{}";
    ri.host_json = "{}";
    assert_int_equal(tb_store_open(db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    memset(&lr, 0, sizeof lr);
    lr.tiles = 2;
    lr.phase = 1;
    lr.steady_us = 20000000;
    lr.app_score = 2.0;
    lr.avg_watts = 100.0;
    lr.qos_pass = lr.valid = 1;
    tb_telemetry_clear(&lr.telemetry);
    memset(ir, 0, sizeof ir);
    memset(out, 0, sizeof out);
    tb_hist_record(h, 1000000);
    tb_hist_record(h, 3000000);
    snprintf(ir[0].name, sizeof ir[0].name, "backup");
    snprintf(ir[0].kind, sizeof ir[0].kind, "backup");
    ir[0].users = 1;
    ir[0].ops = 2;
    ir[0].count_all = 3;
    ir[0].bytes = 40000000;
    ir[0].mb_per_s = 10.0;
    ir[0].ops_per_hour = 360.0;
    ir[0].reference = 720.0;
    ir[0].normalized = 0.5;
    ir[0].hist = h;
    snprintf(ir[1].name, sizeof ir[1].name, "fails");
    snprintf(ir[1].kind, sizeof ir[1].kind, "command");
    ir[1].users = 1;
    ir[1].errors = 4;
    ir[1].errors_by_class[TB_ERR_SERVER] = 3;
    ir[1].errors_by_class[TB_ERR_TIMEOUT] = 1;
    ir[1].mb_per_s = NAN;
    ir[1].normalized = NAN;
    snprintf(out[0].name, sizeof out[0].name, "fails");
    out[0].tile = 2;
    out[0].start_wall_us = 1700000000000000;
    out[0].duration_us = 12500;
    out[0].status = 1 + TB_ERR_SERVER;
    out[0].exit_code = 1;
    out[0].text = FAILED_TEXT;
    snprintf(out[1].name, sizeof out[1].name, "backup");
    out[1].tile = 1;
    out[1].start_wall_us = 1700000001000000;
    out[1].duration_us = 1000000;
    out[1].exit_code = -1;
    out[1].text = "backup successfully verified";
    for (int k = 1; k <= 60; k++)
        ll += (size_t)snprintf(longtext + ll, sizeof longtext - ll, "line %d\n", k);
    snprintf(longtext + ll, sizeof longtext - ll, "[exit status 1]\n");
    for (int k = 2; k < N_OUT; k++) {
        snprintf(out[k].name, sizeof out[k].name, "fails");
        out[k].user = k == 2 ? 1 : 0;
        out[k].tile = 1;
        out[k].start_wall_us = 1700000002000000 + k;
        out[k].duration_us = 1000;
        out[k].status = 1 + TB_ERR_SERVER;
        out[k].exit_code = 1;
        out[k].text = k == 2 ? longtext : "short";
    }
    if (with_infra) {
        lr.has_infra = 1;
        lr.infra_score = 0.25;
        lr.score = 0.8 * 2.0 + 0.2 * 0.25;
        lr.n_infra = 2;
        lr.infra = ir;
        lr.n_infra_outputs = N_OUT;
        lr.infra_outputs = out;
    } else {
        lr.score = 2.0;
    }
    lr.ppkw = lr.score / 0.1;
    assert_int_equal(tb_store_put_level(s, id, &lr, err), 0);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_COMPLETE, 2, err), 0);
    tb_store_close(s);
    tb_hist_free(h);
    return id;
}

static void round_trip(void **state) {
    fix *f = *state;
    tb_store *s;
    tb_model_run *r;
    char err[TB_ERR_LEN] = "";
    int64_t id = store_run(f->db, 1);
    const tb_model_level *lv;
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    assert_int_equal(tb_model_read_run(s, id, 0, &r, err), 0);
    lv = &r->levels[0];
    assert_true(lv->has_infra);
    assert_true(lv->app_score == 2.0);
    assert_true(lv->infra_score == 0.25);
    assert_true(lv->score == 0.8 * 2.0 + 0.2 * 0.25);
    assert_int_equal(lv->n_infra, 2);
    assert_string_equal(lv->infra[0].name, "backup");
    assert_int_equal(lv->infra[0].ops, 2);
    assert_int_equal(lv->infra[0].count_all, 3);
    assert_int_equal(lv->infra[0].bytes, 40000000);
    assert_true(lv->infra[0].mb_per_s == 10.0);
    assert_true(lv->infra[0].ops_per_hour == 360.0);
    assert_true(lv->infra[0].reference == 720.0);
    assert_true(fabs(lv->infra[0].max_ms - 3000.0) < 3000.0 * 0.001); /* the histogram's 3 significant digits */
    assert_true(fabs(lv->infra[0].p50_ms - 1000.0) < 1000.0 * 0.001);
    assert_string_equal(lv->infra[1].kind, "command");
    assert_int_equal(lv->infra[1].errors, 4);
    assert_int_equal(lv->infra[1].errors_by_class[TB_ERR_SERVER], 3);
    assert_int_equal(lv->infra[1].errors_by_class[TB_ERR_TIMEOUT], 1);
    assert_true(isnan(lv->infra[1].reference) && isnan(lv->infra[1].normalized) && isnan(lv->infra[1].p50_ms));
    assert_int_equal(lv->n_infra_outputs, N_OUT);
    assert_string_equal(lv->infra_outputs[0].status, "server");
    assert_int_equal(lv->infra_outputs[0].exit_code.v, 1);
    assert_int_equal(lv->infra_outputs[0].tile, 2);
    assert_true(lv->infra_outputs[0].duration_ms == 12.5);
    assert_string_equal(lv->infra_outputs[0].output, FAILED_TEXT);
    assert_string_equal(lv->infra_outputs[1].status, "ok");
    assert_false(lv->infra_outputs[1].exit_code.known);
    assert_true(r->summary[0].has_infra);
    assert_true(r->summary[0].app_score.mean == 2.0);
    tb_model_run_free(r);
    tb_store_close(s);
}

static char *report(const char *db, int64_t id, tb_report_format fmt) {
    tb_store *s;
    char err[TB_ERR_LEN] = "", *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_int_equal(tb_store_open_readonly(db, &s, err), 0);
    assert_int_equal(tb_report_write(s, id, fmt, m, err), 0);
    fclose(m);
    tb_store_close(s);
    return buf;
}

/* tilebench compare of runs a and b, text or HTML. */
static char *compare(const char *db, int64_t a, int64_t b, tb_compare_format fmt) {
    tb_store *s;
    char err[TB_ERR_LEN] = "", *buf = NULL;
    size_t len = 0;
    int64_t ids[2] = {a, b};
    FILE *m = open_memstream(&buf, &len);
    assert_int_equal(tb_store_open_readonly(db, &s, err), 0);
    assert_int_equal(tb_compare_write(s, ids, 2, a, fmt, m, err), 0);
    fclose(m);
    tb_store_close(s);
    return buf;
}

/* compare's score table is the final score's when a run ran operations. */
static void compare_final(void **state) {
    fix *f = *state;
    int64_t with = store_run(f->db, 1), without = store_run(f->db, 0), without2 = store_run(f->db, 0);
    char *t = compare(f->db, without, with, TB_COMPARE_TEXT), *h = compare(f->db, without, with, TB_COMPARE_HTML);
    char *t0 = compare(f->db, without, without2, TB_COMPARE_TEXT);
    assert_non_null(strstr(t, "Final score (0.8 x application + 0.2 x infrastructure)"));
    assert_non_null(strstr(h, "Final score (0.8 x application + 0.2 x infrastructure)"));
    assert_null(strstr(t0, "Final score"));
    free(t), free(h), free(t0);
}

static void reports(void **state) {
    fix *f = *state;
    int64_t with = store_run(f->db, 1), without = store_run(f->db, 0);
    char *t = report(f->db, with, TB_REPORT_TEXT), *h = report(f->db, with, TB_REPORT_HTML);
    char *j = report(f->db, with, TB_REPORT_JSON), *c = report(f->db, with, TB_REPORT_CSV);
    char *t0 = report(f->db, without, TB_REPORT_TEXT), *c0 = report(f->db, without, TB_REPORT_CSV);
    json_t *root = json_loads(j, 0, NULL), *lv;
    /* text: the three scores side by side, the operation, the failed op's output made safe */
    assert_non_null(strstr(t, "application  infrastructure      final"));
    assert_non_null(strstr(t, "        2.000           0.250      1.650"));
    assert_non_null(strstr(t, "timeout 1, server 3"));
    assert_non_null(strstr(t, "| ?[31mred?[0m <b>&</b>"));
    assert_null(strstr(t, "\x1b"));
    assert_null(strstr(t, "backup successfully verified")); /* only failed ops' output */
    /* the peak score is the final score; users numbered as stored (0-based) */
    assert_non_null(strstr(t, "(final score: 0.8 x application + 0.2 x infrastructure)"));
    assert_null(strstr(t0, "final score:"));
    assert_non_null(strstr(t, "fails user 0 tile 2 at"));
    assert_non_null(strstr(t, "fails user 1 tile 1 at"));
    assert_non_null(strstr(h, "fails, user 0, tile 2, at"));
    /* a long output: its last 40 lines, the status line among them */
    assert_non_null(strstr(t, "| (21 earlier lines in the results store)\n"));
    assert_null(strstr(t, "| line 21\n"));
    assert_non_null(strstr(t, "| line 22\n"));
    assert_non_null(strstr(t, "| line 60\n      | [exit status 1]\n"));
    assert_non_null(strstr(h, "(21 earlier lines in the results store)\nline 22\n"));
    assert_non_null(strstr(h, "line 60\n[exit status 1]\n</pre>"));
    /* 8 failed ops, 5 shown: the 3 others said in text and HTML */
    assert_non_null(strstr(t, "fails: 3 more failed ops kept (the JSON report has them all)"));
    assert_non_null(strstr(h, "fails: 3 more failed ops kept (the JSON report has them all)"));
    assert_non_null(strstr(h, "final score: 0.8 &times; application + 0.2 &times; infrastructure"));
    assert_non_null(strstr(h, "<a href=\"#infra\">infrastructure</a>"));
    assert_non_null(strstr(t, "users     ok errors"));
    /* HTML: escaped */
    assert_non_null(strstr(h, "&lt;b&gt;&amp;&lt;/b&gt;"));
    assert_null(strstr(h, "<b>&</b>"));
    /* JSON: everything kept */
    assert_non_null(root);
    lv = json_array_get(json_object_get(json_object_get(root, "run"), "levels"), 0);
    assert_true(json_real_value(json_object_get(lv, "app_score")) == 2.0);
    assert_true(json_real_value(json_object_get(lv, "infra_score")) == 0.25);
    assert_int_equal(json_array_size(json_object_get(lv, "infra")), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(lv, "infra_outputs"), 0), "output")),
        FAILED_TEXT);
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(root, "run"), "score_basis")), "0.8 x"));
    /* CSV: two more columns, one row per operation (after the energy columns every run has) */
    assert_non_null(strstr(c, ",max_ms,energy_j,j_per_op,normalized_performance,efficiency_per_kw,"
                              "workload_energy_share,workload_j_per_op,app_score,infra_score,infra_bytes,"
                              "infra_mb_per_s\r\n"));
    assert_non_null(strstr(c, ",2,0.25,40000000,10\r\n")); /* the backup's bytes and MB/s */
    assert_non_null(strstr(c, ",infra.backup,,2,0,360,ops/h,720,0.5,backup,2,0,"));
    /* without operations: as before, and said so */
    assert_non_null(strstr(t0, "Score: application score only (no infrastructure operations)"));
    assert_null(strstr(c0, "app_score"));
    assert_null(strstr(c0, "infra."));
    json_decref(root);
    free(t), free(h), free(j), free(c), free(t0), free(c0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(reports, setup, teardown),
        cmocka_unit_test_setup_teardown(compare_final, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
