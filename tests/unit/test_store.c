/*
 * test_store.c: unit tests of the SQLite results store and the report
 * renderers. Each test writes a database in a fresh temporary folder through
 * the store API, reads it back through the reports (JSON parsed again with
 * jansson, text searched for what a reader must see) and checks the values,
 * including schema versioning, interrupted runs, run resolution and a full
 * disk in the middle of a run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "qos/hist.h"
#include "results/report.h"
#include "results/store.h"
#include "results/store_internal.h"

#define LABEL "<script>\"x\""

/* ---- fixture: a temporary folder per test --------------------------------- */

typedef struct fix {
    char dir[64];
    char db[128];
} fix;

static int setup(void **state) {
    fix *f = calloc(1, sizeof *f);
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/tb-store-XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->db, sizeof f->db, "%s/results.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fix *f = *state;
    DIR *d = opendir(f->dir);
    struct dirent *e;
    char path[400];
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", f->dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* ---- building results ---------------------------------------------------------- */

/* Histograms kept by the test so it can compare stored percentiles with
 * what tb_hist_percentile says. */
typedef struct hists {
    tb_hist *home, *order, *home_unc;
} hists;

static tb_hist *hist_linear(uint64_t first_us, uint64_t step_us, int n) {
    tb_hist *h = tb_hist_new();
    int i;
    for (i = 0; i < n; i++)
        tb_hist_record(h, first_us + step_us * (uint64_t)i);
    return h;
}

static void hists_make(hists *h) {
    h->home = hist_linear(1000, 37, 100);
    h->home_unc = hist_linear(900, 30, 100);
    h->order = hist_linear(20000, 1013, 50);
}

static void hists_free(hists *h) {
    tb_hist_free(h->home);
    tb_hist_free(h->home_unc);
    tb_hist_free(h->order);
}

static tb_poll_sample sample_at(int meter, uint64_t t_s, double watts) {
    tb_poll_sample p;
    memset(&p, 0, sizeof p);
    p.meter = meter;
    p.s.mono_us = t_s * 1000000u;
    p.s.wall_us = (int64_t)1780000000 * 1000000 + (int64_t)t_s * 1000000;
    p.s.watts = watts;
    p.s.volts = 230.0;
    p.s.amps = NAN; /* not reported by this meter: stored as NULL */
    p.s.pf = 0.98;
    return p;
}

static void run_info(tb_run_info *ri, tb_meter_info meters[2]) {
    memset(ri, 0, sizeof *ri);
    memset(meters, 0, 2 * sizeof *meters);
    snprintf(meters[0].uri, sizeof meters[0].uri, "wt310://10.0.0.5:10001");
    snprintf(meters[0].model, sizeof meters[0].model, "WT310");
    snprintf(meters[0].idn, sizeof meters[0].idn, "YOKOGAWA,WT310,C2QD12345,F1.03");
    snprintf(meters[1].uri, sizeof meters[1].uri, "estimate:?idle=80&max=300");
    snprintf(meters[1].model, sizeof meters[1].model, "estimate");
    meters[1].estimated = 1;
    ri->label = LABEL;
    ri->tile_name = "standard";
    ri->tile_spec = "1..2";
    ri->config_text = "[web]\nusers = 10\n";
    ri->settings_json = "{\"steady_s\": 60, \"phases\": 1}";
    ri->host_json = "{\"hostname\": \"h1\", \"kernel\": \"6.1.0\", \"cpus\": 8}";
    ri->started_wall_us = (int64_t)1780000000 * 1000000;
    ri->n_meters = 2;
    ri->meters = meters;
}

/* Stores level `tiles` (1 or 2) with `tiles` instances of web and oltp. Level
 * 1 passes QoS and is valid; level 2 fails one rule and is invalid. */
static int put_level(tb_store *s, int64_t run_id, int tiles, const hists *h, char *err) {
    tb_op_result web_ops[2], oltp_ops[1];
    tb_workload_result w[4];
    tb_qos_result q[2];
    tb_poll_sample smp[3];
    tb_level_result lr;
    int t, nw = 0;
    memset(web_ops, 0, sizeof web_ops);
    memset(oltp_ops, 0, sizeof oltp_ops);
    memset(w, 0, sizeof w);
    memset(q, 0, sizeof q);
    memset(&lr, 0, sizeof lr);
    snprintf(web_ops[0].name, sizeof web_ops[0].name, "HomePage");
    web_ops[0].count = 100;
    web_ops[0].errors = 1;
    web_ops[0].count_all = 180;
    web_ops[0].hist = h->home;
    web_ops[0].hist_uncorrected = h->home_unc;
    snprintf(web_ops[1].name, sizeof web_ops[1].name, "Login"); /* nothing measured */
    web_ops[1].count_all = 2;
    snprintf(oltp_ops[0].name, sizeof oltp_ops[0].name, "Order");
    oltp_ops[0].count = 50;
    oltp_ops[0].count_all = 70;
    oltp_ops[0].hist = h->order;
    for (t = 1; t <= tiles; t++) {
        snprintf(w[nw].name, sizeof w[nw].name, "web");
        w[nw].tile = t;
        w[nw].ops = 100;
        w[nw].errors = 1;
        w[nw].throughput = 1.5;
        snprintf(w[nw].unit, sizeof w[nw].unit, "ops/s");
        w[nw].reference = 1.6;
        w[nw].normalized = 1.5 / 1.6;
        w[nw].n_ops = 2;
        w[nw].op_results = web_ops;
        nw++;
        snprintf(w[nw].name, sizeof w[nw].name, "oltp");
        w[nw].tile = t;
        w[nw].ops = 50;
        w[nw].throughput = 50.0;
        snprintf(w[nw].unit, sizeof w[nw].unit, "OPM");
        w[nw].reference = 50.0;
        w[nw].normalized = 1.0;
        w[nw].n_ops = 1;
        w[nw].op_results = oltp_ops;
        nw++;
    }
    snprintf(q[0].rule, sizeof q[0].rule, "web.HomePage p90 <= 1000 ms");
    q[0].observed = 4.3;
    q[0].limit = 1000;
    q[0].pass = 1;
    snprintf(q[1].rule, sizeof q[1].rule, "oltp.Order p90 <= 3000 ms");
    q[1].limit = 3000;
    q[1].pass = tiles == 1;
    q[1].observed = tiles == 1 ? 65.0 : 4213.0;
    if (tiles != 1) snprintf(q[1].reason, sizeof q[1].reason, "p90 4213.0 ms > 3000 ms");
    smp[0] = sample_at(0, 100 * (uint64_t)tiles, 100.0 + tiles);
    smp[1] = sample_at(0, 100 * (uint64_t)tiles + 1, NAN);
    smp[1].s.flags = TB_SAMPLE_MISSING;
    smp[1].s.reason = TB_REASON_MISSING;
    smp[2] = sample_at(1, 100 * (uint64_t)tiles + 1, 20.0);
    lr.tiles = tiles;
    lr.phase = 1;
    lr.steady_start_wall_us = (int64_t)1780000100 * 1000000;
    lr.steady_end_wall_us = (int64_t)1780000160 * 1000000;
    lr.steady_us = 60000000;
    lr.steady_start_mono_us = 100 * (uint64_t)tiles * 1000000u; /* its samples are at 100·tiles s and 1 s later */
    lr.steady_end_mono_us = lr.steady_start_mono_us + lr.steady_us;
    lr.score = tiles == 1 ? 1.0 : 1.9;
    lr.avg_watts = tiles == 1 ? 120.5 : 150.25;
    lr.ppkw = lr.score / (lr.avg_watts / 1000.0);
    lr.qos_pass = tiles == 1;
    lr.valid = tiles == 1;
    if (tiles != 1) snprintf(lr.invalid_reason, sizeof lr.invalid_reason, "2.0%% of samples invalid");
    lr.samples_total = 100;
    lr.samples_bad = tiles == 1 ? 0 : 2;
    lr.telemetry.cpu_util_pct = 35.5 * tiles;
    lr.telemetry.avg_freq_mhz = NAN;
    lr.n_workloads = nw;
    lr.workloads = w;
    lr.n_qos = 2;
    lr.qos = q;
    lr.n_samples = 3;
    lr.samples = smp;
    return tb_store_put_level(s, run_id, &lr, err);
}

/* A whole run: begin, idle, two levels, an event, finish (complete,
 * saturation 1). Returns its id. */
static int64_t store_full_run(const char *db, const hists *h) {
    tb_store *s = NULL;
    tb_run_info ri;
    tb_meter_info meters[2];
    tb_poll_sample idle[3];
    char err[TB_ERR_LEN] = "";
    int64_t id = 0;
    run_info(&ri, meters);
    idle[0] = sample_at(0, 1, 85.0);
    idle[1] = sample_at(0, 2, 86.0);
    idle[2] = sample_at(1, 2, 0.0);
    assert_int_equal(tb_store_open(db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_true(id > 0);
    assert_int_equal(tb_store_put_idle(s, id, 85.5, idle, 3, err), 0);
    assert_int_equal(put_level(s, id, 1, h, err), 0);
    assert_int_equal(put_level(s, id, 2, h, err), 0);
    assert_int_equal(tb_store_event(s, id, "warning", "meter 0: range changed during warm-up", err), 0);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_COMPLETE, 1, err), 0);
    tb_store_close(s);
    return id;
}

/* Renders a report into a malloc'd string (caller frees). */
static char *render(tb_store *s, int64_t id, tb_report_format fmt) {
    char *buf = NULL, err[TB_ERR_LEN] = "";
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc;
    assert_non_null(f);
    rc = tb_report_write(s, id, fmt, f, err);
    fclose(f);
    if (rc != 0) fprintf(stderr, "report: %s\n", err);
    assert_int_equal(rc, 0);
    return buf;
}

static json_t *render_json(const char *db, int64_t id) {
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "", *text;
    json_error_t jerr;
    json_t *root;
    assert_int_equal(tb_store_open_readonly(db, &s, err), 0);
    text = render(s, id, TB_REPORT_JSON);
    tb_store_close(s);
    root = json_loads(text, 0, &jerr);
    if (!root) fprintf(stderr, "json: %s at line %d\n%s\n", jerr.text, jerr.line, text);
    assert_non_null(root);
    free(text);
    return root;
}

static char *list_runs(const char *db) {
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "", *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(tb_store_open_readonly(db, &s, err), 0);
    assert_int_equal(tb_report_list_runs(s, f, err), 0);
    fclose(f);
    tb_store_close(s);
    return buf;
}

static const json_t *path(const json_t *j, const char *fmt, ...) {
    /* Walks "key", "#index" steps separated by '.', e.g. "levels.#0.score". */
    char buf[256], *tok, *save = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (tok = strtok_r(buf, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save))
        j = tok[0] == '#' ? json_array_get(j, (size_t)atoi(tok + 1)) : json_object_get(j, tok);
    if (!j) fprintf(stderr, "missing JSON member at %s\n", fmt);
    assert_non_null(j);
    return j;
}

static double num(const json_t *j, const char *p) {
    const json_t *v = path(j, "%s", p);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

/* ---- tests ------------------------------------------------------------------------ */

static void test_json_round_trip(void **state) {
    fix *f = *state;
    hists h;
    json_t *root;
    const json_t *run;
    int64_t id;
    double expect_overall;
    hists_make(&h);
    id = store_full_run(f->db, &h);
    root = render_json(f->db, id);
    run = path(root, "run");

    assert_int_equal(json_integer_value(path(run, "id")), id);
    assert_string_equal(json_string_value(path(run, "label")), LABEL);
    assert_string_equal(json_string_value(path(run, "status")), "complete");
    assert_string_equal(json_string_value(path(run, "tilebench_version")), TB_VERSION);
    assert_string_equal(json_string_value(path(run, "started_at")), "2026-05-28T20:26:40Z");
    assert_true(json_is_string(path(run, "finished_at")));
    assert_string_equal(json_string_value(path(run, "host.hostname")), "h1");
    assert_int_equal(json_integer_value(path(run, "host.cpus")), 8);
    assert_int_equal(json_integer_value(path(run, "settings.steady_s")), 60);
    assert_int_equal(json_array_size(path(run, "meters")), 2);
    assert_string_equal(json_string_value(path(run, "meters.#0.model")), "WT310");
    assert_true(json_is_false(path(run, "meters.#0.estimated")));
    assert_true(json_is_true(path(run, "meters.#1.estimated")));
    assert_true(json_is_true(path(run, "estimated_power")));
    assert_true(num(run, "active_idle_watts") == 85.5);
    assert_int_equal(json_integer_value(path(run, "saturation_tiles")), 1);
    assert_true(num(run, "peak_score") == 1.9);
    assert_true(fabs(num(run, "peak_ppkw") - 1.9 / 0.15025) < 1e-9);
    /* SPECpower: sum of scores / sum of kW, with active idle in the power sum */
    expect_overall = (1.0 + 1.9) / (120.5 + 150.25 + 85.5) * 1000.0;
    assert_true(fabs(num(run, "overall_efficiency") - expect_overall) < 1e-9);

    /* levels: ordered by tiles, with their QoS verdicts as booleans */
    assert_int_equal(json_array_size(path(run, "levels")), 2);
    assert_int_equal(json_integer_value(path(run, "levels.#0.tiles")), 1);
    assert_int_equal(json_integer_value(path(run, "levels.#1.tiles")), 2);
    assert_true(num(run, "levels.#0.avg_watts") == 120.5);
    assert_true(num(run, "levels.#1.avg_watts") == 150.25);
    assert_true(json_is_true(path(run, "levels.#0.qos_pass")));
    assert_true(json_is_false(path(run, "levels.#1.qos_pass")));
    assert_true(json_is_true(path(run, "levels.#0.valid")));
    assert_true(json_is_null(path(run, "levels.#0.invalid_reason")));
    assert_true(json_is_false(path(run, "levels.#1.valid")));
    assert_string_equal(json_string_value(path(run, "levels.#1.invalid_reason")), "2.0% of samples invalid");
    assert_int_equal(json_array_size(path(run, "levels.#1.qos")), 2);
    assert_true(json_is_true(path(run, "levels.#1.qos.#0.pass")));
    assert_true(json_is_false(path(run, "levels.#1.qos.#1.pass")));
    assert_string_equal(json_string_value(path(run, "levels.#1.qos.#1.reason")), "p90 4213.0 ms > 3000 ms");
    assert_true(num(run, "levels.#1.qos.#1.observed") == 4213.0);
    assert_true(num(run, "levels.#1.qos.#1.limit") == 3000.0);
    assert_true(num(run, "levels.#1.telemetry.cpu_util_pct") == 71.0);
    assert_true(json_is_null(path(run, "levels.#1.telemetry.avg_freq_mhz"))); /* NaN -> null */
    assert_true(json_is_object(path(run, "levels.#1.telemetry.cstate_residency_pct")));

    /* workloads and ops */
    assert_int_equal(json_array_size(path(run, "levels.#0.workloads")), 2);
    assert_int_equal(json_array_size(path(run, "levels.#1.workloads")), 4);
    assert_string_equal(json_string_value(path(run, "levels.#1.workloads.#2.name")), "web");
    assert_int_equal(json_integer_value(path(run, "levels.#1.workloads.#2.tile")), 2);
    assert_string_equal(json_string_value(path(run, "levels.#0.workloads.#1.unit")), "OPM");
    assert_true(num(run, "levels.#0.workloads.#0.normalized") == 1.5 / 1.6);
    assert_string_equal(json_string_value(path(run, "levels.#0.workloads.#0.operations.#0.name")), "HomePage");
    assert_int_equal(json_integer_value(path(run, "levels.#0.workloads.#0.operations.#0.count")), 100);
    assert_int_equal(json_integer_value(path(run, "levels.#0.workloads.#0.operations.#0.errors")), 1);
    assert_int_equal(json_integer_value(path(run, "levels.#0.workloads.#0.operations.#0.count_all")), 180);
    assert_int_equal(json_integer_value(path(run, "levels.#0.workloads.#1.operations.#0.count")), 50);
    assert_true(num(run, "levels.#0.workloads.#0.operations.#0.p95_ms") ==
                (double)tb_hist_percentile(h.home, 95) / 1000.0);
    assert_true(num(run, "levels.#0.workloads.#0.operations.#0.p50_ms") ==
                (double)tb_hist_percentile(h.home, 50) / 1000.0);
    assert_true(num(run, "levels.#0.workloads.#0.operations.#0.p999_ms") ==
                (double)tb_hist_percentile(h.home, 99.9) / 1000.0);
    assert_true(num(run, "levels.#0.workloads.#0.operations.#0.max_ms") == 4.663); /* exact max: 1000 + 37 * 99 us */
    assert_true(num(run, "levels.#0.workloads.#1.operations.#0.p99_ms") ==
                (double)tb_hist_percentile(h.order, 99) / 1000.0);
    /* an op that never completed in steady state has no latency figures */
    assert_int_equal(json_integer_value(path(run, "levels.#0.workloads.#0.operations.#1.count")), 0);
    assert_true(json_is_null(path(run, "levels.#0.workloads.#0.operations.#1.p95_ms")));
    assert_true(json_is_null(path(run, "levels.#0.workloads.#0.operations.#1.mean_ms")));

    assert_int_equal(json_array_size(path(run, "events")), 1);
    assert_string_equal(json_string_value(path(run, "events.#0.kind")), "warning");
    json_decref(root);
    hists_free(&h);
}

/* The stored rows themselves: samples with NaN as NULL, the idle samples
 * without a level, and histogram BLOBs that decode to the same counts. */
static int64_t pragma_int(sqlite3 *db, const char *sql); /* below */

static void test_stored_rows(void **state) {
    fix *f = *state;
    hists h;
    tb_store *s = NULL;
    sqlite3 *db;
    sqlite3_stmt *st = NULL;
    char err[TB_ERR_LEN] = "";
    tb_hist *back = NULL;
    hists_make(&h);
    (void)store_full_run(f->db, &h);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    db = tb_store_db(s);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT count(*), sum(level_id IS NULL), sum(watts IS NULL),"
                                        " sum(amps IS NULL), sum(flags = 2) FROM power_samples",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 9);
    assert_int_equal(sqlite3_column_int(st, 1), 3); /* active idle */
    assert_int_equal(sqlite3_column_int(st, 2), 2); /* one NaN per level */
    assert_int_equal(sqlite3_column_int(st, 3), 9);
    assert_int_equal(sqlite3_column_int(st, 4), 2);
    sqlite3_finalize(st);
    /* the steady window on the samples' clock: each level's samples lie in it */
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM levels WHERE steady_start_mono_us = 100000000 * tiles"
                                    " AND steady_end_mono_us - steady_start_mono_us = 60000000"),
                     2);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM power_samples p JOIN levels l ON l.id = p.level_id"
                                    " WHERE p.mono_us < l.steady_start_mono_us OR p.mono_us >= l.steady_end_mono_us"),
                     0);
    /* a bad sample's reason is stored as its text; a good one has none */
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM power_samples WHERE flags = 2 AND reason = "
                                    "'missing: no reply from the meter'"),
                     2);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM power_samples WHERE reason IS NULL"), 7);
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT hist, hist_uncorrected FROM ops WHERE name = 'HomePage' LIMIT 1", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(tb_hist_decode(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), &back, err), 0);
    assert_int_equal(tb_hist_count(back), 100);
    assert_int_equal(tb_hist_percentile(back, 95), tb_hist_percentile(h.home, 95));
    tb_hist_free(back);
    assert_int_equal(tb_hist_decode(sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1), &back, err), 0);
    assert_int_equal(tb_hist_min(back), 900);
    tb_hist_free(back);
    sqlite3_finalize(st);
    tb_store_close(s);
    hists_free(&h);
}

static void test_label_escaping(void **state) {
    fix *f = *state;
    hists h;
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "", *json, *text;
    int64_t id;
    hists_make(&h);
    id = store_full_run(f->db, &h);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    json = render(s, id, TB_REPORT_JSON);
    /* jansson escaped the quote; the raw label never appears unescaped */
    assert_non_null(strstr(json, "\"label\": \"<script>\\\"x\\\"\""));
    assert_null(strstr(json, "\"x\"\""));
    text = render(s, id, TB_REPORT_TEXT);
    assert_non_null(strstr(text, LABEL));
    free(json);
    free(text);
    tb_store_close(s);

    /* a label with a terminal escape and invalid UTF-8 */
    {
        tb_run_info ri;
        tb_meter_info meters[2];
        json_t *root;
        run_info(&ri, meters);
        ri.label = "evil\x1b[2Jlabel \xff!";
        assert_int_equal(tb_store_open(f->db, &s, err), 0);
        assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
        text = render(s, id, TB_REPORT_TEXT);
        assert_null(strchr(text, '\x1b'));
        assert_non_null(strstr(text, "evil?[2Jlabel"));
        free(text);
        tb_store_close(s);
        root = render_json(f->db, id);
        assert_string_equal(json_string_value(path(root, "run.label")), "evil\x1b[2Jlabel \xef\xbf\xbd!");
        json_decref(root);
    }
    hists_free(&h);
}

static void test_text_report(void **state) {
    fix *f = *state;
    hists h;
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "", *text, line[128];
    int64_t id;
    hists_make(&h);
    id = store_full_run(f->db, &h);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    text = render(s, id, TB_REPORT_TEXT);
    assert_non_null(strstr(text, "ESTIMATED POWER"));
    assert_non_null(strstr(text, "status       complete"));
    assert_non_null(strstr(text, "active idle  85.5 W"));
    assert_non_null(strstr(text, "saturation   1 tile (largest"));
    assert_non_null(strstr(text, "label        " LABEL "\n"));
    assert_non_null(strstr(text, "YOKOGAWA,WT310,C2QD12345,F1.03"));
    /* level table rows */
    assert_non_null(strstr(text, "      1     1      1.000     120.5       8.30  pass                  yes"));
    assert_non_null(strstr(
        text, "      2     1      1.900     150.2      12.65  fail                  NO: 2.0% of samples invalid"));
    /* failing rule with its reason */
    assert_non_null(strstr(text, "2 tiles phase 1: oltp.Order p90 <= 3000 ms: p90 4213.0 ms > 3000 ms"));
    /* merged latency of level 2: two tiles of 100 HomePage ops each */
    snprintf(line, sizeof line, "    web        HomePage                200        2 %10.1f %10.1f %10.1f",
             (double)tb_hist_percentile(h.home, 50) / 1000.0, (double)tb_hist_percentile(h.home, 95) / 1000.0,
             (double)tb_hist_percentile(h.home, 99) / 1000.0);
    assert_non_null(strstr(text, line));
    assert_non_null(strstr(text, "meter 0: range changed during warm-up"));
    free(text);
    tb_store_close(s);
    hists_free(&h);
}

static void test_list_runs(void **state) {
    fix *f = *state;
    hists h;
    char *out;
    hists_make(&h);
    (void)store_full_run(f->db, &h);
    (void)store_full_run(f->db, &h);
    out = list_runs(f->db);
    assert_non_null(strstr(out, "peak PPKW"));
    assert_non_null(strstr(out, "     1  2026-05-28T20:26:40Z  complete     <script>\"x\""));
    assert_non_null(strstr(out, "     2  2026-05-28T20:26:40Z  complete"));
    /* meter #1 is an estimate: "*" beside the peak PPKW, explained below the table */
    assert_non_null(strstr(out, "       2  fail             1.900      12.65*\n"));
    assert_non_null(strstr(out, "\n* ESTIMATED POWER: watts (and so PPKW) come from a model (estimate: meter), not a "
                                "power meter\n"));
    free(out);
    hists_free(&h);
}

static int64_t pragma_int(sqlite3 *db, const char *sql) {
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void test_schema_version(void **state) {
    fix *f = *state;
    tb_store *s = NULL;
    sqlite3 *raw = NULL;
    char err[TB_ERR_LEN] = "";
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "PRAGMA user_version"), TB_STORE_SCHEMA_VERSION);
    assert_int_equal(pragma_int(tb_store_db(s), "PRAGMA foreign_keys"), 1);
    assert_int_equal(pragma_int(tb_store_db(s), "PRAGMA synchronous"), 1); /* NORMAL */
    tb_store_close(s);
    /* reopening migrates nothing and keeps the version */
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "PRAGMA user_version"), TB_STORE_SCHEMA_VERSION);
    tb_store_close(s);

    /* a database from a newer tilebench is refused, naming both versions */
    assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(tb_store_open(f->db, &s, err), -1);
    assert_null(s);
    assert_non_null(strstr(err, "schema version 99 is newer"));
    {
        char known[16];
        snprintf(known, sizeof known, "(%d)", TB_STORE_SCHEMA_VERSION);
        assert_non_null(strstr(err, known));
    }
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), -1);
    assert_non_null(strstr(err, "schema version 99"));
}

/* The schema of a database as SQLite parsed it, one line per object and per
 * column, index column and foreign key (PRAGMA table_xinfo, index_xinfo,
 * foreign_key_list), and the header's user_version, application_id and
 * auto_vacuum, into out. */
static void schema_of(sqlite3 *db, char *out, size_t cap) {
    static const char *const q[] = {
        "SELECT 'v ' || user_version || ' a ' || (SELECT application_id FROM pragma_application_id) || ' av ' ||"
        " (SELECT auto_vacuum FROM pragma_auto_vacuum) FROM pragma_user_version",
        "SELECT type || ' ' || name || ' ' || tbl_name || ' ' || ifnull(sql, '') FROM sqlite_master ORDER BY type, "
        "name",
        "SELECT m.name || ' c ' || c.cid || ' ' || c.name || ' ' || c.type || ' ' || c.\"notnull\" || ' ' ||"
        " ifnull(c.dflt_value, 'null') || ' ' || c.pk || ' ' || c.hidden FROM sqlite_master m,"
        " pragma_table_xinfo(m.name) c WHERE m.type = 'table' ORDER BY m.name, c.cid",
        "SELECT m.name || ' i ' || c.seqno || ' ' || ifnull(c.name, '') || ' ' || c.desc || ' ' || c.coll || ' ' ||"
        " c.key FROM sqlite_master m, pragma_index_xinfo(m.name) c WHERE m.type = 'index' ORDER BY m.name, c.seqno",
        "SELECT m.name || ' f ' || k.id || ' ' || k.seq || ' ' || k.\"table\" || ' ' || k.\"from\" || ' ' ||"
        " ifnull(k.\"to\", '') || ' ' || k.on_update || ' ' || k.on_delete FROM sqlite_master m,"
        " pragma_foreign_key_list(m.name) k WHERE m.type = 'table' ORDER BY m.name, k.id, k.seq",
    };
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        sqlite3_stmt *st = NULL;
        assert_int_equal(sqlite3_prepare_v2(db, q[i], -1, &st, NULL), SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            int k = snprintf(out + n, cap - n, "%s\n", (const char *)sqlite3_column_text(st, 0));
            assert_true(k > 0 && (size_t)k < cap - n);
            n += (size_t)k;
        }
        sqlite3_finalize(st);
    }
}

/* A new database gets the schema at once (create_fresh, from the schema the
 * build made of the migrations); it must be the very schema that the
 * migrations give a database one step at a time: here one at version 1,
 * migrated by the same open. */
static void test_new_schema_is_migrated_schema(void **state) {
    fix *f = *state;
    tb_store *s = NULL;
    sqlite3 *raw = NULL;
    char err[TB_ERR_LEN] = "", old[300];
    static char fresh[256 * 1024], migrated[256 * 1024];
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    schema_of(tb_store_db(s), fresh, sizeof fresh);
    tb_store_close(s);
    snprintf(old, sizeof old, "%s/v1.db", f->dir);
    assert_int_equal(sqlite3_open(old, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, tb_store_migrations[0], NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(tb_store_open(old, &s, err), 0);
    schema_of(tb_store_db(s), migrated, sizeof migrated);
    tb_store_close(s);
    assert_non_null(strstr(fresh, "CREATE TABLE runs"));
    assert_string_equal(fresh, migrated);
}

/* Schema 4 -> 5 (and on to 6): a database written before errors were split by class and
 * before rules could go unjudged is migrated on the first open for writing;
 * its rows read as "not split" (errors_by_class null) and as judged. The v4
 * database is made from a v5 one by dropping what migration 5 adds. */
static void test_migrate_v4_to_v5(void **state) {
    fix *f = *state;
    hists h;
    tb_store *s = NULL;
    sqlite3 *raw = NULL;
    char err[TB_ERR_LEN] = "", *text;
    json_t *root;
    int64_t id;
    hists_make(&h);
    id = store_full_run(f->db, &h);
    assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(raw,
                     "ALTER TABLE ops DROP COLUMN err_connect; ALTER TABLE ops DROP COLUMN err_io;"
                     "ALTER TABLE ops DROP COLUMN err_timeout; ALTER TABLE ops DROP COLUMN err_server;"
                     "ALTER TABLE ops DROP COLUMN err_content; ALTER TABLE qos DROP COLUMN judged;"
                     "ALTER TABLE qos DROP COLUMN ops; ALTER TABLE qos DROP COLUMN min_ops;"
                     "ALTER TABLE levels DROP COLUMN qos_not_judged;"
                     "ALTER TABLE levels DROP COLUMN steady_start_mono_us;"
                     "ALTER TABLE levels DROP COLUMN steady_end_mono_us;"
                     "ALTER TABLE power_samples DROP COLUMN reason; ALTER TABLE power_samples DROP COLUMN stage;"
                     "DROP TABLE level_agents;"
                     "DROP TABLE level_hosts; DROP TABLE hosts; ALTER TABLE meters DROP COLUMN host;"
                     "DROP TABLE infra_outputs; DROP TABLE infra; ALTER TABLE levels DROP COLUMN alone;"
                     "ALTER TABLE levels DROP COLUMN infra_score; ALTER TABLE levels DROP COLUMN app_score;"
                     "DROP TABLE stages;"
                     "DROP INDEX runs_uuid; ALTER TABLE runs DROP COLUMN uuid;"
                     "ALTER TABLE runs DROP COLUMN source_revision;"
                     "ALTER TABLE meters DROP COLUMN calibrated; ALTER TABLE meters DROP COLUMN accuracy;"
                     "DROP TABLE level_ranges;"
                     "DROP TABLE channel_samples; ALTER TABLE meters DROP COLUMN channels;"
                     "DROP TABLE inlet_temperatures; DROP TABLE temperature_samples;"
                     "ALTER TABLE levels DROP COLUMN other_cpu_pct; ALTER TABLE levels DROP COLUMN sut_processes;"
                     "PRAGMA user_version = 4;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(raw);
    /* readers refuse the old schema, naming it */
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), -1);
    assert_non_null(strstr(err, "4"));
    /* a writer migrates */
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "PRAGMA user_version"), TB_STORE_SCHEMA_VERSION);
    /* 5 -> 6: the old samples have no reason */
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM power_samples WHERE reason IS NOT NULL"), 0);
    /* 6 -> 7: the old levels have no monotonic window */
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM levels WHERE steady_start_mono_us IS NOT NULL"),
                     0);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM ops WHERE err_content IS NULL"),
                     pragma_int(tb_store_db(s), "SELECT count(*) FROM ops"));
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM qos WHERE judged = 1"),
                     pragma_int(tb_store_db(s), "SELECT count(*) FROM qos"));
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT sum(qos_not_judged) FROM levels"), 0);
    /* 7 -> 8: no agents ran the old levels */
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM level_agents"), 0);
    /* 13 -> 14: the old meters state no calibration and no accuracy */
    assert_int_equal(
        pragma_int(tb_store_db(s), "SELECT count(*) FROM meters WHERE calibrated IS NOT NULL OR accuracy IS NOT NULL"),
        0);
    tb_store_close(s);
    root = render_json(f->db, id);
    assert_true(json_is_null(path(root, "run.levels.#0.workloads.#0.operations.#0.errors_by_class")));
    assert_true(json_is_null(path(root, "run.levels.#0.workloads.#0.errors_by_class")));
    assert_true(json_is_true(path(root, "run.levels.#0.qos.#0.pass")));
    assert_string_equal(json_string_value(path(root, "run.levels.#0.qos.#0.verdict")), "pass");
    assert_string_equal(json_string_value(path(root, "run.levels.#0.qos_verdict")), "pass");
    assert_string_equal(json_string_value(path(root, "run.levels.#1.qos_verdict")), "fail");
    json_decref(root);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    text = render(s, id, TB_REPORT_TEXT);
    assert_non_null(strstr(text, "  errors by class\n"));
    assert_non_null(strstr(text, "  not split\n")); /* HomePage's error, stored unsplit */
    free(text);
    tb_store_close(s);
    /* a new run in the migrated database splits its errors: store_full_run's
     * HomePage error has no class, which the report calls "other" */
    id = store_full_run(f->db, &h);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    text = render(s, id, TB_REPORT_TEXT);
    assert_non_null(strstr(text, "  other 1\n"));
    free(text);
    tb_store_close(s);
    hists_free(&h);
}

/* A phase of 3 tiles with no workloads, its steady sample at 300 s, and
 * one sample of each other stage of its level (the coordinator stores
 * ramp-up and warm-up with the first phase, ramp-down with the last). */
static int put_staged_level(tb_store *s, int64_t run_id, char *err) {
    tb_poll_sample steady = sample_at(0, 300, 190.0), up = sample_at(0, 290, 150.0), warm = sample_at(0, 295, 180.0),
                   down = sample_at(0, 360, 160.0);
    tb_stage_samples ss[3] = {{"ramp-up", &up, 1}, {"warm-up", &warm, 1}, {"ramp-down", &down, 1}};
    tb_level_result lr;
    memset(&lr, 0, sizeof lr);
    lr.tiles = 3;
    lr.phase = 1;
    lr.steady_us = 60000000;
    lr.steady_start_mono_us = 300000000;
    lr.steady_end_mono_us = 360000000;
    lr.avg_watts = 190.0;
    lr.n_samples = 1;
    lr.samples = &steady;
    lr.n_stage_samples = 3;
    lr.stage_samples = ss;
    return tb_store_put_level(s, run_id, &lr, err);
}

/* The stage of each sample (schema 13): idle and the ramps without a
 * level, steady with its level; the CHECK keeps them so. */
static void test_sample_stages(void **state) {
    fix *f = *state;
    hists h;
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "";
    int64_t id;
    hists_make(&h);
    id = store_full_run(f->db, &h);
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(put_staged_level(s, id, err), 0);
    sqlite3 *db = tb_store_db(s);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM power_samples WHERE stage = 'idle' AND level_id IS NULL"), 3);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM power_samples WHERE stage = 'steady' AND level_id > 0"), 7);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM power_samples WHERE stage = 'ramp-up' AND level_id IS NULL"
                                    " AND mono_us = 290000000"),
                     1);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM power_samples WHERE stage = 'warm-up' AND level_id IS NULL"
                                    " AND mono_us = 295000000"),
                     1);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM power_samples WHERE stage = 'ramp-down' AND level_id IS NULL"
                                    " AND mono_us = 360000000"),
                     1);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM power_samples WHERE stage IS NULL"), 0);
    /* a steady sample without its level, an idle one with a level, a stage of no name: refused */
    assert_int_not_equal(sqlite3_exec(db,
                                      "INSERT INTO power_samples (run_id, meter_idx, mono_us, wall_us, stage)"
                                      " VALUES (1, 0, 1, 1, 'steady')",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db,
                                      "INSERT INTO power_samples (run_id, level_id, meter_idx, mono_us, wall_us, stage)"
                                      " VALUES (1, 1, 0, 1, 1, 'idle')",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db,
                                      "INSERT INTO power_samples (run_id, meter_idx, mono_us, wall_us, stage)"
                                      " VALUES (1, 0, 1, 1, 'between')",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    tb_store_close(s);
    hists_free(&h);
}

/* Inlet temperature readings (temperature_samples): a phase stores its
 * steady readings with its level_id and its ramps' with none; active idle
 * its own with the aggregate row, in one transaction; the CHECK keeps
 * stage and level_id together. Then the migration that adds the table (the
 * last one: the test does not name its number) on a database without it. */
static void test_temperature_samples(void **state) {
    fix *f = *state;
    hists h;
    tb_store *s = NULL;
    sqlite3 *raw = NULL;
    char err[TB_ERR_LEN] = "";
    const tb_temp_reading steady[3] = {{0, 301000000, 1, 22.5}, {1, 301000100, 2, 23.0}, {0, 302000000, 3, 21.5}};
    const tb_temp_reading up[1] = {{0, 290000000, 4, 24.0}}, idle[2] = {{0, 10, 5, 20.5}, {1, 11, 6, 20.25}};
    const tb_temp_stage ts[2] = {{"steady", steady, 3}, {"ramp-up", up, 1}};
    tb_level_result lr;
    int64_t id;
    hists_make(&h);
    id = store_full_run(f->db, &h);
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    memset(&lr, 0, sizeof lr);
    lr.tiles = 4;
    lr.phase = 1;
    lr.steady_start_mono_us = 300000000;
    lr.steady_end_mono_us = 303000000;
    lr.has_temp = 1;
    lr.temp_n = 3;
    lr.temp_min_c = 21.5;
    lr.temp_mean_c = 67.0 / 3;
    lr.temp_max_c = 23.0;
    lr.n_temp_stages = 2;
    lr.temp_stages = ts;
    assert_int_equal(tb_store_put_level(s, id, &lr, err), 0);
    assert_int_equal(tb_store_put_idle_temperature(s, id, 2, 20.25, 20.375, 20.5, idle, 2, err), 0);
    sqlite3 *db = tb_store_db(s);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM temperature_samples t JOIN levels l ON l.id = t.level_id"
                                    " WHERE l.tiles = 4 AND t.stage = 'steady'"),
                     3);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM temperature_samples WHERE stage = 'steady' AND source = 1"
                                    " AND mono_us = 301000100 AND wall_us = 2 AND celsius = 23.0"),
                     1);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM temperature_samples WHERE stage = 'ramp-up'"
                                    " AND level_id IS NULL AND mono_us = 290000000"),
                     1);
    assert_int_equal(
        pragma_int(db, "SELECT count(*) FROM temperature_samples WHERE stage = 'idle' AND level_id IS NULL"), 2);
    assert_int_equal(pragma_int(db, "SELECT count(*) FROM inlet_temperatures WHERE level_id IS NULL AND samples = 2"),
                     1);
    /* a steady reading without its level, an idle one with a level: refused */
    assert_int_not_equal(
        sqlite3_exec(db,
                     "INSERT INTO temperature_samples (run_id, source, mono_us, wall_us, celsius, stage)"
                     " VALUES (1, 0, 1, 1, 20, 'steady')",
                     NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db,
                                      "INSERT INTO temperature_samples (run_id, level_id, source, mono_us, wall_us,"
                                      " celsius, stage) VALUES (1, 1, 0, 1, 1, 20, 'idle')",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    tb_store_close(s);
    /* the migration: a database one version older, without the table */
    assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
    {
        char sql[128];
        snprintf(sql, sizeof sql, "DROP TABLE temperature_samples; PRAGMA user_version = %d;",
                 TB_STORE_SCHEMA_VERSION - 1);
        assert_int_equal(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
    }
    sqlite3_close(raw);
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "PRAGMA user_version"), TB_STORE_SCHEMA_VERSION);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM temperature_samples"), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM inlet_temperatures"), 2);
    assert_int_equal(tb_store_put_level(s, id, &lr, err), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM temperature_samples"), 4);
    tb_store_close(s);
    hists_free(&h);
}

/* 12 -> 13: the old rows get no stage and read as before (level_id NULL:
 * active idle); a run stored after the migration tags its samples. */
static void test_migrate_v12_to_v13(void **state) {
    fix *f = *state;
    hists h;
    tb_store *s = NULL;
    sqlite3 *raw = NULL;
    char err[TB_ERR_LEN] = "";
    json_t *root;
    int64_t id;
    hists_make(&h);
    id = store_full_run(f->db, &h);
    assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(raw,
                     "ALTER TABLE power_samples DROP COLUMN stage; ALTER TABLE meters DROP COLUMN calibrated;"
                     " ALTER TABLE meters DROP COLUMN accuracy; DROP TABLE level_ranges; DROP TABLE channel_samples;"
                     " ALTER TABLE meters DROP COLUMN channels; DROP TABLE inlet_temperatures;"
                     " ALTER TABLE levels DROP COLUMN other_cpu_pct; ALTER TABLE levels DROP COLUMN sut_processes;"
                     " DROP TABLE temperature_samples; PRAGMA user_version = 12;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "PRAGMA user_version"), TB_STORE_SCHEMA_VERSION);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM power_samples WHERE stage IS NULL"), 9);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM power_samples WHERE level_id IS NULL"), 3);
    /* 14 -> 15: older meters read as one input, with no channel rows */
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM meters WHERE channels IS NOT NULL"), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM channel_samples"), 0);
    tb_store_close(s);
    root = render_json(f->db, id);
    assert_true(num(root, "run.levels.#0.avg_watts") == 120.5);
    assert_true(num(root, "run.active_idle_watts") == 85.5);
    json_decref(root);
    id = store_full_run(f->db, &h);
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(put_staged_level(s, id, err), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM power_samples WHERE stage IS NULL"), 9);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(DISTINCT stage) FROM power_samples"), 5);
    tb_store_close(s);
    hists_free(&h);
}

/* The bytes of file path (at most cap), their count into *n. */
static void slurp(const char *path, char *buf, size_t cap, size_t *n) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    *n = fread(buf, 1, cap, fp);
    fclose(fp);
}

/* Opening for writing refuses what is not a tilebench results database or
 * a new file, and leaves it byte for byte as it was (no tables added, not
 * switched to WAL): another program's tables at version 0, a schema version
 * set but no runs table, a negative version, and a device. */
static void test_writer_refuses_others(void **state) {
    fix *f = *state;
    static const struct {
        const char *sql, *says;
    } cases[] = {
        {"CREATE TABLE contacts (name TEXT)", "another program's tables"},
        {"CREATE TABLE contacts (name TEXT); PRAGMA user_version = 5", "no runs table"},
        {"PRAGMA user_version = 18", "no runs table"},
        {"PRAGMA user_version = -1", "schema version is -1"},
        {"CREATE TABLE contacts (name TEXT); PRAGMA user_version = -2147483648", "schema version is -2147483648"},
    };
    static char before[65536], after[65536];
    char err[TB_ERR_LEN], p[200];
    tb_store *s = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sqlite3 *raw = NULL;
        size_t nb, na;
        snprintf(p, sizeof p, "%s/other%zu.db", f->dir, i);
        assert_int_equal(sqlite3_open(p, &raw), SQLITE_OK);
        assert_int_equal(sqlite3_exec(raw, cases[i].sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(raw);
        slurp(p, before, sizeof before, &nb);
        err[0] = '\0';
        assert_int_equal(tb_store_open(p, &s, err), -1);
        assert_null(s);
        assert_non_null(strstr(err, cases[i].says));
        slurp(p, after, sizeof after, &na);
        assert_int_equal(na, nb);
        assert_memory_equal(after, before, nb);
        snprintf(p, sizeof p, "%s/other%zu.db-wal", f->dir, i);
        assert_int_equal(access(p, F_OK), -1);
    }
    /* a name ending in '/' names a folder: no file "nosuch" is made beside it */
    snprintf(p, sizeof p, "%s/nosuch/", f->dir);
    assert_int_equal(tb_store_open(p, &s, err), -1);
    assert_non_null(strstr(err, "No such file or directory"));
    snprintf(p, sizeof p, "%s/nosuch", f->dir);
    assert_int_equal(access(p, F_OK), -1);
    assert_int_equal(tb_store_open("/dev/null", &s, err), -1);
    assert_non_null(strstr(err, "not a regular file"));
    assert_int_equal(access("/dev/null-journal", F_OK), -1);
}

static void test_readonly_open_errors(void **state) {
    fix *f = *state;
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "", p[200];
    FILE *fp;
    /* missing: an error, and no empty database left behind */
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), -1);
    assert_non_null(strstr(err, "not found"));
    assert_non_null(strstr(err, f->db));
    assert_int_equal(access(f->db, F_OK), -1);
    /* an empty file is an SQLite database of version 0: not ours */
    snprintf(p, sizeof p, "%s/empty.db", f->dir);
    fp = fopen(p, "w");
    fclose(fp);
    assert_int_equal(tb_store_open_readonly(p, &s, err), -1);
    assert_non_null(strstr(err, "not a tilebench results database"));
    /* a text file */
    snprintf(p, sizeof p, "%s/notes.txt", f->dir);
    fp = fopen(p, "w");
    fputs("these are not the results you are looking for, padded to more than one page of text\n", fp);
    for (int i = 0; i < 100; i++)
        fputs("................................................\n", fp);
    fclose(fp);
    assert_int_equal(tb_store_open_readonly(p, &s, err), -1);
    assert_non_null(strstr(err, "not a database"));
    /* a read-only store refuses writes */
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    tb_store_close(s);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    assert_int_equal(tb_store_event(s, 1, "info", "x", err), -1);
    assert_non_null(strstr(err, "read-only"));
    tb_store_close(s);
}

static void test_resolve_run(void **state) {
    fix *f = *state;
    hists h;
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "", expect[300];
    int64_t id = 0, a, b;
    hists_make(&h);
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(tb_store_resolve_run(s, "latest", &id, err), -1);
    snprintf(expect, sizeof expect, "no runs in %s", f->db);
    assert_string_equal(err, expect);
    tb_store_close(s);
    a = store_full_run(f->db, &h);
    b = store_full_run(f->db, &h);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    assert_int_equal(tb_store_resolve_run(s, "latest", &id, err), 0);
    assert_int_equal(id, b);
    assert_int_equal(tb_store_resolve_run(s, "1", &id, err), 0);
    assert_int_equal(id, a);
    assert_int_equal(tb_store_resolve_run(s, "42", &id, err), -1);
    snprintf(expect, sizeof expect, "run 42 not found in %s", f->db);
    assert_string_equal(err, expect);
    assert_int_equal(tb_store_resolve_run(s, "abc", &id, err), -1);
    assert_non_null(strstr(err, "'abc'"));
    assert_int_equal(tb_store_resolve_run(s, "0", &id, err), -1);
    assert_int_equal(tb_store_resolve_run(s, "-1", &id, err), -1);
    assert_int_equal(tb_store_resolve_run(s, "2x", &id, err), -1);
    tb_store_close(s);
    hists_free(&h);
}

/* A run whose writer was killed (kill -9) still says "running" in the
 * database; readers must show it as interrupted, and the next writer to open
 * the file stores that. A run whose writer is alive stays "running". */
static void test_interrupted_writer_dead(void **state) {
    fix *f = *state;
    tb_store *s = NULL;
    tb_run_info ri;
    tb_meter_info meters[2];
    char err[TB_ERR_LEN] = "", *out;
    int64_t dead_id = 0, live_id = 0;
    int status = 0;
    json_t *root;
    pid_t pid;
    run_info(&ri, meters);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int64_t id;
        if (tb_store_open(f->db, &s, err) != 0 || tb_store_begin_run(s, &ri, &id, err) != 0) _exit(1);
        raise(SIGKILL);
        _exit(2);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    /* readers (which never write) show the stored 'running' as interrupted */
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    assert_int_equal(tb_store_resolve_run(s, "latest", &dead_id, err), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM runs WHERE status = 'running'"), 1);
    tb_store_close(s);
    root = render_json(f->db, dead_id);
    assert_string_equal(json_string_value(path(root, "run.status")), "interrupted");
    json_decref(root);

    /* the next writer to open the file stores it (finished_at unknown: NULL) */
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM runs WHERE status = 'running'"), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM runs WHERE status = 'interrupted' "
                                                "AND finished_at IS NULL"),
                     1);
    assert_int_equal(tb_store_begin_run(s, &ri, &live_id, err), 0);
    tb_store_close(s);
    /* ... and leaves a run whose writer is alive alone */
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM runs WHERE status = 'running'"), 1);
    tb_store_close(s);

    root = render_json(f->db, dead_id);
    assert_string_equal(json_string_value(path(root, "run.status")), "interrupted");
    json_decref(root);
    root = render_json(f->db, live_id);
    assert_string_equal(json_string_value(path(root, "run.status")), "running");
    json_decref(root);
    out = list_runs(f->db);
    assert_non_null(strstr(out, "interrupted"));
    assert_non_null(strstr(out, "running"));
    free(out);

    /* a pid reused by another process: same pid, different start time */
    {
        sqlite3 *raw = NULL;
        char sql[128];
        assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
        snprintf(sql, sizeof sql, "UPDATE runs SET writer_start = writer_start + 12345 WHERE id = %lld",
                 (long long)live_id);
        assert_int_equal(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(raw);
        root = render_json(f->db, live_id);
        assert_string_equal(json_string_value(path(root, "run.status")), "interrupted");
        json_decref(root);
    }
    /* finished statuses are never second-guessed */
    assert_string_equal(tb_store_effective_status("complete", 999999999, 1), "complete");
    assert_string_equal(tb_store_effective_status("running", (int64_t)getpid(), 0), "running");
}

/* SQLITE_FULL while storing a level: a clear error, nothing of that level
 * stored, earlier levels intact, and the store usable once space returns. */
static void test_disk_full_keeps_earlier_levels(void **state) {
    fix *f = *state;
    hists h;
    tb_store *s = NULL;
    tb_run_info ri;
    tb_meter_info meters[2];
    tb_level_result lr;
    tb_poll_sample *many;
    char err[TB_ERR_LEN] = "", sql[64];
    int64_t id = 0;
    int i, n = 20000;
    hists_make(&h);
    run_info(&ri, meters);
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_int_equal(put_level(s, id, 1, &h, err), 0);

    snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld",
             (long long)pragma_int(tb_store_db(s), "PRAGMA page_count"));
    assert_int_equal(sqlite3_exec(tb_store_db(s), sql, NULL, NULL, NULL), SQLITE_OK);
    many = calloc((size_t)n, sizeof *many);
    for (i = 0; i < n; i++)
        many[i] = sample_at(0, (uint64_t)i, 100.0);
    memset(&lr, 0, sizeof lr);
    lr.tiles = 3;
    lr.phase = 1;
    lr.avg_watts = 130.0;
    lr.n_samples = n;
    lr.samples = many;
    assert_int_equal(tb_store_put_level(s, id, &lr, err), -1);
    assert_non_null(strstr(err, "store put level 3 phase 1: database or disk is full"));
    assert_non_null(strstr(err, "earlier ones are intact"));
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM levels"), 1);
    assert_int_equal(pragma_int(tb_store_db(s), "SELECT count(*) FROM power_samples"), 3);

    assert_int_equal(sqlite3_exec(tb_store_db(s), "PRAGMA max_page_count = 1000000000", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(tb_store_put_level(s, id, &lr, err), 0);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_INTERRUPTED, -1, err), 0);
    tb_store_close(s);
    {
        json_t *root = render_json(f->db, id);
        assert_int_equal(json_array_size(path(root, "run.levels")), 2);
        assert_string_equal(json_string_value(path(root, "run.status")), "interrupted");
        assert_true(json_is_null(path(root, "run.saturation_tiles")));
        json_decref(root);
    }
    free(many);
    hists_free(&h);
}

/* Unknown power: avg_watts -1 and NaN idle are stored as NULL, PPKW is not
 * invented, and the summaries say null instead of dividing by zero. */
static void test_unknown_power_is_null(void **state) {
    fix *f = *state;
    tb_store *s = NULL;
    tb_run_info ri;
    tb_meter_info meters[2];
    tb_level_result lr;
    char err[TB_ERR_LEN] = "";
    int64_t id = 0;
    json_t *root;
    run_info(&ri, meters);
    ri.n_meters = 1; /* only the real meter */
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_int_equal(tb_store_put_idle(s, id, -1, NULL, 0, err), 0);
    memset(&lr, 0, sizeof lr);
    lr.tiles = 1;
    lr.phase = 1;
    lr.score = 0.5;
    lr.avg_watts = -1;
    lr.ppkw = 0;
    lr.telemetry.cpu_util_pct = NAN;
    lr.telemetry.avg_freq_mhz = NAN;
    assert_int_equal(tb_store_put_level(s, id, &lr, err), 0);
    assert_int_equal(tb_store_put_idle(s, id + 100, 80, NULL, 0, err), -1);
    assert_non_null(strstr(err, "not found"));
    assert_int_equal(tb_store_event(s, id, "debug", "x", err), -1);
    assert_non_null(strstr(err, "'debug'"));
    assert_int_equal(tb_store_finish_run(s, id, "done", 1, err), -1);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_ABORTED, -1, err), 0);
    tb_store_close(s);
    root = render_json(f->db, id);
    assert_true(json_is_null(path(root, "run.active_idle_watts")));
    assert_true(json_is_null(path(root, "run.levels.#0.avg_watts")));
    assert_true(json_is_null(path(root, "run.levels.#0.ppkw")));
    assert_true(json_is_null(path(root, "run.peak_ppkw")));
    assert_true(json_is_null(path(root, "run.overall_efficiency")));
    assert_true(num(root, "run.peak_score") == 0.5);
    assert_true(json_is_false(path(root, "run.estimated_power")));
    assert_string_equal(json_string_value(path(root, "run.status")), "aborted");
    json_decref(root);
}

static void test_parse_format(void **state) {
    tb_report_format fmt = TB_REPORT_TEXT;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_report_parse_format("json", &fmt, err), 0);
    assert_int_equal(fmt, TB_REPORT_JSON);
    assert_int_equal(tb_report_parse_format("text", &fmt, err), 0);
    assert_int_equal(fmt, TB_REPORT_TEXT);
    assert_int_equal(tb_report_parse_format("xml", &fmt, err), -1);
    assert_non_null(strstr(err, "'xml'"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_json_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stored_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_label_escaping, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schema_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_schema_is_migrated_schema, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v4_to_v5, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sample_stages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v12_to_v13, setup, teardown),
        cmocka_unit_test_setup_teardown(test_temperature_samples, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writer_refuses_others, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_open_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_writer_dead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_full_keeps_earlier_levels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_power_is_null, setup, teardown),
        cmocka_unit_test(test_parse_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
