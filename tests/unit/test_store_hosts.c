/*
 * test_store_hosts.c: a SUT of several hosts in the results store (schema
 * 9) and the read model: a run's hosts rows with their active idle, each
 * meter's host, a level's per-host power, tiles and telemetry, read back as
 * stored and shown by the JSON report; and a run without hosts stores no
 * such rows and its JSON has no "hosts" key.
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

#include "results/model.h"
#include "results/report.h"
#include "results/store.h"
#include "results/store_internal.h"

typedef struct fix {
    char dir[64], db[128];
} fix;

static int setup(void **state) {
    fix *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/tb-hosts-XXXXXX");
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

static int64_t count(tb_store *s, const char *sql) {
    sqlite3_stmt *st;
    int64_t n = -1;
    assert_int_equal(sqlite3_prepare_v2(tb_store_db(s), sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* A run of n_hosts hosts (0: none) with 3 meters, idle, and one level of 2
 * tiles whose avg_watts is the sum of its hosts'. */
static int64_t store_run(const char *db, int n_hosts) {
    tb_store *s;
    char err[TB_ERR_LEN] = "";
    tb_meter_info mi[3];
    const char *mh[3] = {"db", "db", "app"};
    tb_host_info hi[2] = {{"db", "database", "1", "http://10.0.0.2:9100/metrics", "{\"hostname\":\"db1\",\"cpus\":8}"},
                          {"app", "", "rest", "none", NULL}};
    tb_host_result hr[2];
    tb_level_result lr;
    tb_run_info ri;
    int64_t id;
    memset(mi, 0, sizeof mi);
    for (int i = 0; i < 3; i++)
        snprintf(mi[i].uri, sizeof mi[i].uri, "estimate:?i=%d", i);
    memset(&ri, 0, sizeof ri);
    ri.label = "hosts";
    ri.tile_name = "t";
    ri.tile_spec = "2";
    ri.config_text = "";
    ri.settings_json = "{}";
    ri.host_json = "{}";
    ri.n_meters = 3;
    ri.meters = mi;
    ri.n_hosts = n_hosts;
    ri.hosts = hi;
    ri.meter_hosts = mh;
    assert_int_equal(tb_store_open(db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    memset(hr, 0, sizeof hr);
    hr[0].name = "db";
    hr[0].avg_watts = 120.5;
    hr[0].samples = 10;
    hr[0].has_telemetry = 1;
    tb_telemetry_clear(&hr[0].telemetry);
    hr[0].telemetry.cpu_util_pct = 12.5;
    hr[0].telemetry.avg_freq_mhz = 2400;
    hr[0].telemetry.freq_src = TB_FREQ_NODE_EXPORTER;
    hr[0].telemetry.n_samples = 4;
    hr[1].name = "app";
    hr[1].avg_watts = 80.25;
    hr[1].samples = 5;
    tb_telemetry_clear(&hr[1].telemetry);
    assert_int_equal(tb_store_put_idle(s, id, 200.75, NULL, 0, err), 0);
    assert_int_equal(tb_store_put_idle_hosts(s, id, hr, n_hosts, err), 0);
    memset(&lr, 0, sizeof lr);
    lr.tiles = 2;
    lr.phase = 1;
    lr.steady_us = 10000000;
    lr.score = 2.0;
    lr.avg_watts = 300.0;
    lr.ppkw = 2.0 / 0.3;
    lr.qos_pass = lr.valid = 1;
    tb_telemetry_clear(&lr.telemetry);
    hr[0].tiles = 1;
    hr[0].avg_watts = 180.0;
    hr[1].tiles = 1;
    hr[1].avg_watts = 120.0;
    lr.n_hosts = n_hosts;
    lr.hosts = hr;
    assert_int_equal(tb_store_put_level(s, id, &lr, err), 0);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_COMPLETE, 2, err), 0);
    tb_store_close(s);
    return id;
}

static void hosts_round_trip(void **state) {
    fix *f = *state;
    tb_store *s;
    tb_model_run *r;
    char err[TB_ERR_LEN] = "";
    int64_t id = store_run(f->db, 2);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    assert_int_equal(tb_model_read_run(s, id, 0, &r, err), 0);
    assert_int_equal(r->n_hosts, 2);
    assert_string_equal(r->hosts[0].name, "db");
    assert_string_equal(r->hosts[0].label, "database");
    assert_string_equal(r->hosts[0].tiles, "1");
    assert_string_equal(r->hosts[0].telemetry, "http://10.0.0.2:9100/metrics");
    assert_string_equal(tb_model_obj_str(&r->hosts[0].config, "hostname"), "db1");
    assert_int_equal(r->hosts[1].config.n, 0);
    assert_true(r->hosts[0].active_idle_watts == 120.5);
    assert_true(r->hosts[0].idle_cpu_util_pct == 12.5);
    assert_true(r->hosts[0].idle_avg_freq_mhz == 2400);
    assert_null(r->hosts[1].label); /* "" is stored as none */
    assert_string_equal(r->hosts[1].tiles, "rest");
    assert_true(r->hosts[1].active_idle_watts == 80.25);
    assert_true(isnan(r->hosts[1].idle_cpu_util_pct));
    assert_false(r->hosts[1].idle_telemetry_samples.known);
    assert_string_equal(r->meters[0].host, "db");
    assert_string_equal(r->meters[1].host, "db");
    assert_string_equal(r->meters[2].host, "app");
    assert_int_equal(r->n_levels, 1);
    assert_int_equal(r->levels[0].n_hosts, 2);
    assert_string_equal(r->levels[0].hosts[0].name, "db");
    assert_true(r->levels[0].hosts[0].avg_watts == 180.0);
    assert_int_equal(r->levels[0].hosts[0].tiles, 1);
    assert_int_equal(r->levels[0].hosts[0].samples, 10);
    assert_true(r->levels[0].hosts[0].cpu_util_pct == 12.5);
    assert_string_equal(r->levels[0].hosts[0].freq_source, "node_exporter");
    assert_int_equal(r->levels[0].hosts[0].telemetry_samples.v, 4);
    assert_true(r->levels[0].hosts[1].avg_watts == 120.0);
    assert_null(r->levels[0].hosts[1].freq_source);
    assert_false(r->levels[0].hosts[1].telemetry_samples.known);
    /* the level's own power is the sum, as stored */
    assert_true(r->levels[0].avg_watts == r->levels[0].hosts[0].avg_watts + r->levels[0].hosts[1].avg_watts);
    tb_model_run_free(r);
    tb_store_close(s);
}

/* The JSON report of a run with hosts and of one without. */
static json_t *report(const char *db, int64_t id) {
    tb_store *s;
    char err[TB_ERR_LEN] = "", *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    json_t *j;
    assert_int_equal(tb_store_open_readonly(db, &s, err), 0);
    assert_int_equal(tb_report_write(s, id, TB_REPORT_JSON, m, err), 0);
    fclose(m);
    tb_store_close(s);
    j = json_loads(buf, 0, NULL);
    free(buf);
    assert_non_null(j);
    return j;
}

static void json_report(void **state) {
    fix *f = *state;
    int64_t with = store_run(f->db, 2), without = store_run(f->db, 0);
    json_t *a = report(f->db, with), *b = report(f->db, without), *run, *lv;
    tb_store *s;
    char err[TB_ERR_LEN] = "";
    run = json_object_get(a, "run");
    assert_int_equal(json_array_size(json_object_get(run, "hosts")), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(run, "meters"), 2), "host")),
                        "app");
    lv = json_array_get(json_object_get(run, "levels"), 0);
    assert_true(json_real_value(json_object_get(json_array_get(json_object_get(lv, "hosts"), 1), "avg_watts")) ==
                120.0);
    assert_true(
        json_real_value(json_object_get(json_object_get(json_array_get(json_object_get(lv, "hosts"), 0), "telemetry"),
                                        "cpu_util_pct")) == 12.5);
    /* without hosts: no key anywhere, no rows */
    run = json_object_get(b, "run");
    assert_null(json_object_get(run, "hosts"));
    assert_null(json_object_get(json_array_get(json_object_get(run, "meters"), 0), "host"));
    assert_null(json_object_get(json_array_get(json_object_get(run, "levels"), 0), "hosts"));
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    assert_int_equal(count(s, "SELECT count(*) FROM hosts WHERE run_id = 2"), 0);
    assert_int_equal(count(s, "SELECT count(*) FROM level_hosts h JOIN levels l ON l.id = h.level_id"
                              " WHERE l.run_id = 2"),
                     0);
    assert_int_equal(count(s, "SELECT count(*) FROM meters WHERE run_id = 2 AND host IS NOT NULL"), 0);
    assert_int_equal(count(s, "SELECT count(*) FROM level_hosts"), 2);
    tb_store_close(s);
    json_decref(a);
    json_decref(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(hosts_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(json_report, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
