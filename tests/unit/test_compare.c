/*
 * test_compare.c: unit tests of `tilebench compare` (results/compare.c).
 * Each test stores three runs through the store API in a fresh temporary
 * database, with known figures, and checks the exact % changes in JSON and in
 * the text table: a level a run did not measure (missing, never 0), a
 * baseline figure of 0 (no %), the median phase of several phases, the mean
 * of repeats, p95 of a workload's metric op only, and a label
 * `<script>alert(1)</script>` that comes out inert in the HTML. Also the
 * argument errors: fewer than 2 runs, a run given twice, an unknown run, a
 * baseline not among the runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "qos/hist.h"
#include "results/compare.h"
#include "results/store.h"
#include "scoring/compare.h"

#define EVIL "<script>alert(1)</script>"

typedef struct fix {
    char dir[64], db[128];
    int64_t a, b, c; /* baseline, evil label, repeats */
} fix;

/* One stored phase row: tiles, phase, repeat, score, watts, cpu %, Order
 * latency (µs, every sample), GET latency (µs). */
typedef struct lvl {
    int tiles, phase, repeat;
    double score, watts, cpu;
    uint64_t order_us, get_us;
} lvl;

static tb_hist *hist_const(uint64_t us, int n) {
    tb_hist *h = tb_hist_new();
    for (int i = 0; i < n; i++)
        tb_hist_record(h, us);
    return h;
}

/* Stores one phase: per tile an oltp workload (Order is its metric op; Login
 * is not, and is 500 ms so a p95 that included it would show) and a kv
 * workload (GET, metric). */
static void put_level(tb_store *s, int64_t run, const lvl *l) {
    tb_op_result oltp_ops[4][2], kv_ops[4][1];
    tb_workload_result w[8];
    tb_level_result lr;
    tb_hist *order = hist_const(l->order_us, 100), *login = hist_const(500000, 100), *get = hist_const(l->get_us, 50);
    char err[TB_ERR_LEN] = "";
    int t, nw = 0;
    memset(oltp_ops, 0, sizeof oltp_ops);
    memset(kv_ops, 0, sizeof kv_ops);
    memset(w, 0, sizeof w);
    memset(&lr, 0, sizeof lr);
    for (t = 0; t < l->tiles; t++) {
        tb_workload_result *o = &w[nw++], *k = &w[nw++];
        snprintf(oltp_ops[t][0].name, sizeof oltp_ops[t][0].name, "Order");
        oltp_ops[t][0].count = 100;
        oltp_ops[t][0].hist = order;
        oltp_ops[t][0].metric = 1;
        snprintf(oltp_ops[t][1].name, sizeof oltp_ops[t][1].name, "Login");
        oltp_ops[t][1].count = 100;
        oltp_ops[t][1].hist = login;
        snprintf(o->name, sizeof o->name, "oltp");
        o->tile = t + 1;
        o->ops = 100;
        o->throughput = 600;
        snprintf(o->unit, sizeof o->unit, "OPM");
        o->reference = 600;
        o->normalized = 1;
        o->n_ops = 2;
        o->op_results = oltp_ops[t];
        snprintf(kv_ops[t][0].name, sizeof kv_ops[t][0].name, "GET");
        kv_ops[t][0].count = 50;
        kv_ops[t][0].hist = get;
        kv_ops[t][0].metric = 1;
        snprintf(k->name, sizeof k->name, "kv");
        k->tile = t + 1;
        k->ops = 50;
        k->throughput = 50;
        snprintf(k->unit, sizeof k->unit, "ops/s");
        k->reference = 50;
        k->normalized = 1;
        k->n_ops = 1;
        k->op_results = kv_ops[t];
    }
    lr.tiles = l->tiles;
    lr.phase = l->phase;
    lr.repeat = l->repeat;
    lr.steady_us = 20000000;
    lr.score = l->score;
    lr.avg_watts = l->watts;
    lr.ppkw = l->score / (l->watts / 1000.0);
    lr.qos_pass = 1;
    lr.qos_not_judged = l->repeat == 2 ? 3 : 0; /* run C's second repeat: 3 rules had too few ops */
    lr.valid = 1;
    lr.telemetry.cpu_util_pct = l->cpu;
    lr.telemetry.avg_freq_mhz = NAN; /* not stored: the frequency figure must be absent */
    lr.n_workloads = nw;
    lr.workloads = w;
    assert_int_equal(tb_store_put_level(s, run, &lr, err), 0);
    tb_hist_free(order);
    tb_hist_free(login);
    tb_hist_free(get);
}

static int64_t store_run(const char *db, const char *label, const lvl *l, size_t n) {
    tb_store *s = NULL;
    tb_run_info ri;
    char err[TB_ERR_LEN] = "";
    int64_t id = 0;
    memset(&ri, 0, sizeof ri);
    ri.label = label;
    ri.tile_name = "standard";
    ri.tile_spec = "1..3";
    ri.config_text = "";
    assert_int_equal(tb_store_open(db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    for (size_t i = 0; i < n; i++)
        put_level(s, id, &l[i]);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_COMPLETE, 2, err), 0);
    tb_store_close(s);
    return id;
}

/* Run A, the baseline: 1, 2 and 3 tiles; 3 tiles scored 0 (a zero baseline). */
static const lvl run_a[] = {
    {1, 1, 1, 1.0, 100.0, 50.0, 8000, 1000},
    {2, 1, 1, 2.0, 160.0, 60.0, 8000, 1000},
    {3, 1, 1, 0.0, 200.0, 70.0, 8000, 1000},
};
/* Run B: 1 tile; 2 tiles in three phases (median by score: 2.2 at 176 W);
 * 3 tiles missing. */
static const lvl run_b[] = {
    {1, 1, 1, 1.1, 90.0, 55.0, 12000, 1000},
    {2, 1, 1, 2.2, 176.0, 66.0, 12000, 1000},
    {2, 2, 1, 1.9, 150.0, 99.0, 99000, 1000},
    {2, 3, 1, 2.4, 190.0, 99.0, 99000, 1000},
};
/* Run C: 1 tile in two repeats (mean score 1.3); 2 tiles missing; 3 tiles. */
static const lvl run_c[] = {
    {1, 1, 1, 1.2, 100.0, 50.0, 6000, 1000},
    {1, 1, 2, 1.4, 100.0, 50.0, 10000, 1000},
    {3, 1, 1, 0.5, 210.0, 70.0, 8000, 1000},
};

static int setup(void **state) {
    fix *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/tb-compare-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->db, sizeof f->db, "%s/r.db", f->dir);
    f->a = store_run(f->db, "base", run_a, sizeof run_a / sizeof run_a[0]);
    f->b = store_run(f->db, EVIL, run_b, sizeof run_b / sizeof run_b[0]);
    f->c = store_run(f->db, "repeats", run_c, sizeof run_c / sizeof run_c[0]);
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

/* Renders the comparison of ids against base into a malloc'd string; asserts success. */
static char *render(const fix *f, const int64_t *ids, int n, int64_t base, tb_compare_format fmt) {
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "", *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    if (tb_compare_write(s, ids, n, base, fmt, out, err) != 0) fail_msg("tb_compare_write: %s", err);
    fclose(out);
    tb_store_close(s);
    return buf;
}

/* levels[li].runs[ri].<key>.<field> (key may be "p95_ms.oltp"). */
static const json_t *cell(const json_t *root, size_t li, size_t ri, const char *key) {
    const json_t *levels = json_object_get(json_object_get(root, "comparison"), "levels"), *run;
    char k[64];
    const char *dot;
    run = json_array_get(json_object_get(json_array_get(levels, li), "runs"), ri);
    assert_non_null(run);
    dot = strchr(key, '.');
    if (!dot) return json_object_get(run, key);
    snprintf(k, sizeof k, "%.*s", (int)(dot - key), key);
    return json_object_get(json_object_get(run, k), dot + 1);
}

static void assert_pct(const json_t *root, size_t li, size_t ri, const char *key, double want) {
    const json_t *p = json_object_get(cell(root, li, ri, key), "pct");
    if (!json_is_number(p)) fail_msg("level %zu run %zu %s: pct is not a number", li, ri, key);
    /* the JSON carries % rounded to 0.01: the golden values are exact */
    if (json_number_value(p) != want)
        fail_msg("level %zu run %zu %s: pct %.17g, want %.17g", li, ri, key, json_number_value(p), want);
}

static void assert_value(const json_t *root, size_t li, size_t ri, const char *key, double want) {
    const json_t *v = json_object_get(cell(root, li, ri, key), "value");
    if (!json_is_number(v) || fabs(json_number_value(v) - want) > 1e-9)
        fail_msg("level %zu run %zu %s: value %g, want %g", li, ri, key, json_is_number(v) ? json_number_value(v) : NAN,
                 want);
}

static void assert_field_null(const json_t *root, size_t li, size_t ri, const char *key, const char *field) {
    if (!json_is_null(json_object_get(cell(root, li, ri, key), field)))
        fail_msg("level %zu run %zu %s.%s: not null", li, ri, key, field);
}

static void test_json_golden(void **state) {
    fix *f = *state;
    int64_t ids[3] = {f->a, f->b, f->c};
    char *out = render(f, ids, 3, f->a, TB_COMPARE_JSON);
    json_error_t jerr;
    json_t *root = json_loads(out, 0, &jerr), *cmp;
    if (!root) fail_msg("JSON does not parse: %s", jerr.text);
    cmp = json_object_get(root, "comparison");
    assert_int_equal(json_integer_value(json_object_get(cmp, "baseline")), f->a);
    assert_int_equal(json_array_size(json_object_get(cmp, "runs")), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(cmp, "runs"), 1), "label")),
                        EVIL);
    /* rules not judged: the most in one phase of the level, 0 when all were judged */
    assert_int_equal(json_integer_value(cell(root, 0, 2, "qos_not_judged")), 3);
    assert_int_equal(json_integer_value(cell(root, 0, 0, "qos_not_judged")), 0);
    assert_true(json_is_true(cell(root, 0, 2, "qos_pass")));
    assert_int_equal(json_array_size(json_object_get(cmp, "levels")), 3);
    assert_string_equal(json_string_value(json_array_get(json_object_get(cmp, "workloads"), 0)), "oltp");
    assert_string_equal(json_string_value(json_array_get(json_object_get(cmp, "workloads"), 1)), "kv");

    /* 1 tile: B against A */
    assert_pct(root, 0, 0, "score", 0.0);
    assert_pct(root, 0, 1, "score", 10.0);
    assert_pct(root, 0, 1, "avg_watts", -10.0);
    assert_pct(root, 0, 1, "ppkw", 22.22); /* 1.1/0.09 = 12.222 vs 10 */
    assert_pct(root, 0, 1, "cpu_util_pct", 10.0);
    assert_value(root, 0, 1, "p95_ms.oltp", 12.0); /* Order only: Login's 500 ms is not a metric op */
    assert_pct(root, 0, 1, "p95_ms.oltp", 50.0);
    assert_pct(root, 0, 1, "p95_ms.kv", 0.0);
    assert_field_null(root, 0, 1, "avg_freq_mhz", "value"); /* not stored */
    assert_field_null(root, 0, 1, "avg_freq_mhz", "pct");
    /* 1 tile: C, two repeats: means of 1.2 and 1.4, and of 6 and 10 ms */
    assert_value(root, 0, 2, "score", 1.3);
    assert_pct(root, 0, 2, "score", 30.0);
    assert_pct(root, 0, 2, "avg_watts", 0.0);
    assert_pct(root, 0, 2, "p95_ms.oltp", 0.0);
    assert_int_equal(json_integer_value(cell(root, 0, 2, "repeats")), 2);

    /* 2 tiles: B's median phase (score 2.2 at 176 W, p95 12 ms) */
    assert_value(root, 1, 1, "score", 2.2);
    assert_pct(root, 1, 1, "score", 10.0);
    assert_pct(root, 1, 1, "avg_watts", 10.0);
    assert_pct(root, 1, 1, "ppkw", 0.0);
    assert_pct(root, 1, 1, "cpu_util_pct", 10.0);
    assert_pct(root, 1, 1, "p95_ms.oltp", 50.0);
    assert_int_equal(json_integer_value(cell(root, 1, 1, "phases")), 3);
    /* 2 tiles: C missing: never 0 */
    assert_true(json_is_false(cell(root, 1, 2, "present")));
    assert_field_null(root, 1, 2, "score", "value");
    assert_field_null(root, 1, 2, "score", "pct");
    assert_field_null(root, 1, 2, "p95_ms.oltp", "value");

    /* 3 tiles: A scored 0: no % for the score (and PPKW), but for watts */
    assert_value(root, 2, 0, "score", 0.0);
    assert_value(root, 2, 2, "score", 0.5);
    assert_field_null(root, 2, 2, "score", "pct");
    assert_field_null(root, 2, 2, "ppkw", "pct");
    assert_pct(root, 2, 2, "avg_watts", 5.0);
    assert_true(json_is_false(cell(root, 2, 1, "present")));
    assert_field_null(root, 2, 1, "avg_watts", "value");

    /* the figures block says the frequency was not stored */
    {
        const json_t *figs = json_object_get(cmp, "figures"), *fg;
        size_t i;
        int seen = 0;
        json_array_foreach(figs, i, fg) {
            if (strcmp(json_string_value(json_object_get(fg, "key")), "avg_freq_mhz") == 0) {
                assert_true(json_is_false(json_object_get(fg, "stored")));
                seen = 1;
            }
        }
        assert_true(seen);
    }
    json_decref(root);
    free(out);
}

/* Line of text that starts (after spaces) with `start`; NULL when none. */
static char *line_starting(char *text, const char *start) {
    for (char *p = text; p && *p;) {
        char *q = p;
        while (*q == ' ')
            q++;
        if (strncmp(q, start, strlen(start)) == 0) return p;
        p = strchr(p, '\n');
        if (p) p++;
    }
    return NULL;
}

/* The n-th (0-based) line after the line holding `title` exactly. */
static void table_row(char *text, const char *title, int n, char *row, size_t len) {
    char want[96], *p;
    snprintf(want, sizeof want, "\n%s\n", title);
    p = strstr(text, want);
    if (!p) fail_msg("no table '%s' in:\n%s", title, text);
    p += strlen(want);
    for (int i = 0; i < n && p; i++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    assert_non_null(p);
    snprintf(row, len, "%.*s", (int)(strchr(p, '\n') - p), p);
}

static void test_text_golden(void **state) {
    fix *f = *state;
    int64_t ids[3] = {f->a, f->b, f->c};
    char *out = render(f, ids, 3, f->a, TB_COMPARE_TEXT), row[256], want[256];
    if (getenv("TB_SHOW_OUTPUT")) fputs(out, stderr); /* TB_SHOW_OUTPUT=FILE: see the output */
    assert_non_null(line_starting(out, "tilebench compare: 3 runs against baseline run"));
    /* the header names the columns; then one row per load level */
    table_row(out, "Score", 0, row, sizeof row);
    snprintf(want, sizeof want, "  tiles   run %lld (base)           run %lld           run %lld", (long long)f->a,
             (long long)f->b, (long long)f->c);
    assert_string_equal(row, want);
    table_row(out, "Score", 1, row, sizeof row);
    assert_string_equal(row, "      1          1.000   1.100  +10.0%   1.300  +30.0%");
    table_row(out, "Score", 2, row, sizeof row);
    assert_string_equal(row, "      2          2.000   2.200  +10.0%         missing");
    table_row(out, "Score", 3, row, sizeof row);
    assert_string_equal(row, "      3          0.000         missing    0.500      -");
    table_row(out, "Mean power (W)", 1, row, sizeof row);
    assert_string_equal(row, "      1          100.0    90.0  -10.0%   100.0   +0.0%");
    table_row(out, "PPKW (score/kW)", 1, row, sizeof row);
    assert_string_equal(row, "      1          10.00   12.22  +22.2%   13.00  +30.0%");
    table_row(out, "p95 oltp (ms)", 1, row, sizeof row);
    assert_string_equal(row, "      1           8.00   12.00  +50.0%   8.00   +0.0%");
    /* CPU utilization is stored, frequency is not: no table for it */
    assert_non_null(strstr(out, "\nCPU utilization (%)\n"));
    assert_null(strstr(out, "CPU frequency"));
    /* the method is stated, and the repeats and phases are named */
    assert_non_null(strstr(out, "median phase by score"));
    assert_non_null(strstr(out, "averaged over repeats"));
    snprintf(want, sizeof want, "note: run %lld: 3 phases per level (median phase), 1 repeat (mean)", (long long)f->b);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want, "note: run %lld: 1 phase per level (median phase), 2 repeats (mean)", (long long)f->c);
    assert_non_null(strstr(out, want));
    /* QoS: run C's 1-tile level passed with rules not judged in one repeat: incomplete, never pass */
    table_row(out, "QoS / validity per level (pass, fail, incomplete: rules not judged, too few ops; INVALID)", 1, row,
              sizeof row);
    assert_string_equal(row, "      1   pass           pass           incomplete");
    free(out);
}

static void test_html_inert(void **state) {
    fix *f = *state;
    int64_t ids[3] = {f->a, f->b, f->c};
    char *out = render(f, ids, 3, f->a, TB_COMPARE_HTML);
    if (getenv("TB_SHOW_OUTPUT")) {
        FILE *h = fopen(getenv("TB_SHOW_OUTPUT"), "w"); /* a file name: look at the page */
        if (h) fputs(out, h), fclose(h);
    }
    assert_non_null(strstr(out, "<!DOCTYPE html>"));
    assert_non_null(strstr(out, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_null(strstr(out, "<script"));
    assert_null(strstr(out, "alert(1)</script>"));
    assert_non_null(strstr(out, "Content-Security-Policy"));
    /* grouped bar charts with bars, the missing level marked, the exact % in the tables */
    assert_non_null(strstr(out, "<svg"));
    assert_non_null(strstr(out, "<rect"));
    assert_non_null(strstr(out, ">missing<"));
    assert_non_null(strstr(out, ">+10.0%</td>"));
    assert_non_null(strstr(out, ">+50.0%</td>"));
    assert_non_null(strstr(out, "</html>"));
    free(out);
}

/* The baseline need not come first; columns keep the order given. */
static void test_baseline_not_first(void **state) {
    fix *f = *state;
    int64_t ids[2] = {f->b, f->a};
    char *out = render(f, ids, 2, f->a, TB_COMPARE_JSON);
    json_t *root = json_loads(out, 0, NULL);
    assert_non_null(root);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "comparison"), "baseline")), f->a);
    assert_pct(root, 0, 0, "score", 10.0);
    assert_pct(root, 0, 1, "score", 0.0);
    json_decref(root);
    free(out);
}

static void expect_error(const fix *f, const int64_t *ids, int n, int64_t base, const char *needle) {
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "", *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    assert_int_equal(tb_compare_write(s, ids, n, base, TB_COMPARE_TEXT, out, err), -1);
    fclose(out);
    tb_store_close(s);
    if (!strstr(err, needle)) fail_msg("error '%s' does not say '%s'", err, needle);
    assert_int_equal(len, 0); /* nothing written */
    free(buf);
}

static void test_errors(void **state) {
    fix *f = *state;
    int64_t one[1] = {f->a}, twice[2] = {f->a, f->a}, unknown[2] = {f->a, 999}, ab[2] = {f->a, f->b};
    tb_compare_format fmt;
    char err[TB_ERR_LEN];
    expect_error(f, one, 1, f->a, "compare needs at least 2");
    expect_error(f, twice, 2, f->a, "is given twice");
    expect_error(f, unknown, 2, f->a, "run 999 not found");
    {
        char want[64];
        snprintf(want, sizeof want, "baseline run %lld is not among the runs compared", (long long)f->c);
        expect_error(f, ab, 2, f->c, want);
    }
    assert_int_equal(tb_compare_parse_format("html", &fmt, err), 0);
    assert_int_equal(fmt, TB_COMPARE_HTML);
    assert_int_equal(tb_compare_parse_format("csv", &fmt, err), -1);
    assert_non_null(strstr(err, "'csv'"));
}

static void test_pct_change(void **state) {
    (void)state;
    assert_true(tb_score_pct_change(110, 100) == 10.0);
    assert_true(tb_score_pct_change(90, 100) == -10.0);
    assert_true(isnan(tb_score_pct_change(1, 0)));
    assert_true(isnan(tb_score_pct_change(NAN, 1)));
    assert_true(isnan(tb_score_pct_change(1, NAN)));
    assert_true(tb_score_pct_change(-0.5, -1) == 50.0); /* against |baseline| */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_json_golden, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_golden, setup, teardown),
        cmocka_unit_test_setup_teardown(test_html_inert, setup, teardown),
        cmocka_unit_test_setup_teardown(test_baseline_not_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test(test_pct_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
