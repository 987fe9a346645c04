/*
 * test_store_model.c: unit tests of the typed read model (results/model.h).
 * Each test stores a run through the store API in a fresh temporary folder
 * and reads it back: unknown figures come back as NaN or an unknown integer
 * (never 0), QoS verdicts split into the level's and the tiles', the
 * summary takes the median phase, merged latency sums the tiles, and the run
 * list and the existence check see what was stored.
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

#include "qos/hist.h"
#include "results/model.h"
#include "results/store.h"

typedef struct fix {
    char dir[64], db[128];
    tb_hist *h;
} fix;

static int setup(void **state) {
    fix *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/tb-model-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->db, sizeof f->db, "%s/r.db", f->dir);
    f->h = tb_hist_new();
    for (int i = 0; i < 100; i++)
        tb_hist_record(f->h, 1000 + 10 * (uint64_t)i);
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
    tb_hist_free(f->h);
    free(f);
    return 0;
}

/* When finite: put_level stores an inlet temperature of 5 readings, this
 * minimum, mean + 1 and maximum + 2 degrees C; NaN: none (not measured). */
static double inlet_min_c = NAN;

/* One level phase of 2 tiles, each with a web workload whose HomePage op has
 * f->h; a level rule that passed and a tile rule not judged. watts < 0: no
 * power figure. */
static void put_level(const fix *f, tb_store *s, int64_t run_id, int phase, double score, double watts) {
    tb_op_result ops[2];
    tb_workload_result w[2];
    tb_qos_result q[2];
    tb_level_result lr;
    char err[TB_ERR_LEN] = "";
    memset(ops, 0, sizeof ops);
    memset(w, 0, sizeof w);
    memset(q, 0, sizeof q);
    memset(&lr, 0, sizeof lr);
    for (int t = 0; t < 2; t++) {
        snprintf(ops[t].name, sizeof ops[t].name, "HomePage");
        ops[t].count = 100;
        ops[t].errors = 1;
        ops[t].errors_by_class[TB_ERR_TIMEOUT] = 1;
        ops[t].hist = f->h;
        ops[t].metric = 1;
        snprintf(w[t].name, sizeof w[t].name, "web");
        w[t].tile = t + 1;
        w[t].ops = 100;
        w[t].throughput = 2.0;
        snprintf(w[t].unit, sizeof w[t].unit, "ops/s");
        w[t].reference = 2.0;
        w[t].normalized = 1.0;
        w[t].n_ops = 1;
        w[t].op_results = &ops[t];
    }
    snprintf(q[0].rule, sizeof q[0].rule, "web.HomePage p95 <= 1000 ms");
    q[0].observed = 1.9;
    q[0].limit = 1000;
    q[0].pass = 1;
    snprintf(q[1].rule, sizeof q[1].rule, "web.Login p95 <= 1000 ms");
    q[1].observed = NAN;
    q[1].limit = 1000;
    q[1].not_judged = 1;
    q[1].min_ops = 20;
    q[1].tile = 2;
    snprintf(q[1].reason, sizeof q[1].reason, "no ops");
    lr.tiles = 2;
    lr.phase = phase;
    lr.steady_us = 3000000;
    lr.score = score;
    lr.avg_watts = watts;
    lr.ppkw = watts > 0 ? score / (watts / 1000.0) : -1;
    lr.qos_pass = 1;
    lr.qos_not_judged = 1;
    lr.valid = 1;
    lr.telemetry.cpu_util_pct = 40.0;
    lr.telemetry.avg_freq_mhz = NAN;
    lr.n_workloads = 2;
    lr.workloads = w;
    lr.n_qos = 2;
    lr.qos = q;
    if (isfinite(inlet_min_c)) {
        lr.has_temp = 1;
        lr.temp_n = 5;
        lr.temp_min_c = inlet_min_c;
        lr.temp_mean_c = inlet_min_c + 1;
        lr.temp_max_c = inlet_min_c + 2;
    }
    assert_int_equal(tb_store_put_level(s, run_id, &lr, err), 0);
}

/* A run of three phases at 2 tiles (scores 1.0, 4.0, 2.0: median 2.0, mean 2.33), the
 * second without a power figure; an estimate: meter. */
static int64_t store_run(const fix *f) {
    tb_store *s = NULL;
    tb_run_info ri;
    tb_meter_info m;
    char err[TB_ERR_LEN] = "";
    int64_t id = 0;
    memset(&ri, 0, sizeof ri);
    memset(&m, 0, sizeof m);
    snprintf(m.uri, sizeof m.uri, "estimate:?idle=80&max=300");
    m.estimated = 1;
    ri.label = "model";
    ri.tile_name = "standard";
    ri.tile_spec = "2";
    ri.host_json = "{\"hostname\": \"h\", \"cpus\": 8, \"ref\": {\"a\": 1}}";
    ri.settings_json = "not json";
    ri.n_meters = 1;
    ri.meters = &m;
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_int_equal(tb_store_put_idle(s, id, -1, NULL, 0, err), 0);
    put_level(f, s, id, 1, 1.0, 100.0);
    put_level(f, s, id, 2, 4.0, -1);
    put_level(f, s, id, 3, 2.0, 120.0);
    assert_int_equal(tb_store_event(s, id, "warning", "w1", err), 0);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_COMPLETE, -1, err), 0);
    tb_store_close(s);
    return id;
}

static tb_model_run *read_model(const fix *f, int64_t id, int flags) {
    tb_store *s = NULL;
    tb_model_run *r = NULL;
    char err[TB_ERR_LEN] = "";
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    if (tb_model_read_run(s, id, flags, &r, err) != 0) fprintf(stderr, "model: %s\n", err);
    tb_store_close(s);
    assert_non_null(r);
    return r;
}

static void test_unknown_stays_unknown(void **state) {
    fix *f = *state;
    tb_model_run *r = read_model(f, store_run(f), 0);
    assert_string_equal(r->label, "model");
    assert_string_equal(r->status, TB_RUN_COMPLETE);
    assert_true(isnan(r->active_idle_watts)); /* -1 is stored as NULL */
    assert_false(r->saturation_tiles.known);  /* none passed: not 0 */
    assert_true(r->estimated_power);
    assert_int_equal((int)r->n_levels, 3);
    assert_true(isnan(r->levels[1].avg_watts));
    assert_true(isnan(r->levels[1].ppkw));
    assert_true(isnan(r->levels[0].telemetry.avg_freq_mhz));
    assert_true(r->levels[0].telemetry.cpu_util_pct == 40.0);
    /* the host object keeps its members and their kinds; bad settings read as {} */
    assert_string_equal(tb_model_obj_str(&r->host, "hostname"), "h");
    assert_int_equal(tb_model_obj_get(&r->host, "cpus")->kind, TB_KV_INT);
    assert_int_equal(tb_model_obj_get(&r->host, "ref")->kind, TB_KV_OTHER);
    assert_int_equal((int)r->settings.n, 0);
    assert_int_equal((int)r->n_events, 1);
    assert_string_equal(r->events[0].message, "w1");
    tb_model_run_free(r);
}

static void test_qos_and_ops(void **state) {
    fix *f = *state;
    tb_model_run *r = read_model(f, store_run(f), 0);
    const tb_model_level *lv = &r->levels[0];
    assert_int_equal((int)lv->n_qos, 1);
    assert_int_equal((int)lv->n_tile_qos, 1);
    assert_true(lv->qos[0].judged && lv->qos[0].pass);
    assert_int_equal(lv->tile_qos[0].tile, 2);
    assert_false(lv->tile_qos[0].judged);
    assert_false(lv->tile_qos[0].pass); /* not judged is no pass */
    assert_true(isnan(lv->tile_qos[0].observed));
    assert_int_equal((int)lv->n_workloads, 2);
    assert_int_equal((int)lv->workloads[1].tile, 2);
    assert_int_equal((int)lv->workloads[0].n_ops, 1);
    assert_true(lv->workloads[0].ops_list[0].classes_known);
    assert_int_equal((int)lv->workloads[0].ops_list[0].errors_by_class[TB_ERR_TIMEOUT], 1);
    assert_int_equal((int)lv->workloads[0].ops_list[0].count.v, 100);
    assert_int_equal((int)lv->n_groups, 0); /* not asked for */
    assert_null(lv->workloads[0].ops_list[0].hist);
    tb_model_run_free(r);
}

static void test_summary_median_phase(void **state) {
    fix *f = *state;
    tb_model_run *r = read_model(f, store_run(f), 0);
    assert_int_equal((int)r->n_summary, 1);
    assert_int_equal(r->summary[0].phases, 3);
    assert_int_equal(r->summary[0].repeats, 1);
    assert_true(r->summary[0].score.mean == 2.0);       /* the median phase, not the mean of the phases */
    assert_true(r->summary[0].avg_watts.mean == 120.0); /* its watts are that phase's */
    assert_true(r->peak_score == 2.0);
    tb_model_run_free(r);
}

static void test_merged_latency(void **state) {
    fix *f = *state;
    tb_model_run *r = read_model(f, store_run(f), TB_MODEL_MERGED_LATENCY | TB_MODEL_OP_HISTS);
    const tb_model_level *lv = &r->levels[0];
    assert_int_equal((int)lv->n_groups, 1);
    assert_string_equal(lv->groups[0].workload, "web");
    assert_int_equal((int)lv->groups[0].count, 200); /* both tiles */
    assert_int_equal((int)lv->groups[0].errors_by_class[TB_ERR_TIMEOUT], 2);
    assert_int_equal((int)tb_hist_count(lv->groups[0].hist), 200);
    assert_non_null(lv->workloads[0].ops_list[0].hist);
    assert_true(lv->workloads[0].ops_list[0].metric);
    tb_model_run_free(r);
}

static void test_list_exists_and_missing(void **state) {
    fix *f = *state;
    int64_t id = store_run(f);
    tb_store *s = NULL;
    tb_model_run_list *l = NULL;
    tb_model_run *r = NULL;
    char err[TB_ERR_LEN] = "";
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    assert_int_equal(tb_model_read_run_list(s, &l, err), 0);
    assert_int_equal((int)l->n_runs, 1);
    assert_int_equal(l->runs[0].levels, 1);
    assert_true(l->runs[0].peak_score == 4.0); /* the best stored phase */
    assert_true(l->runs[0].estimated);
    assert_false(l->runs[0].saturation_tiles.known);
    tb_model_run_list_free(l);
    assert_int_equal(tb_model_run_exists(s, id, err), 1);
    assert_int_equal(tb_model_run_exists(s, id + 1, err), 0);
    assert_int_equal(tb_model_read_run(s, id + 1, 0, &r, err), -1);
    assert_null(r);
    assert_non_null(strstr(err, "not found"));
    tb_store_close(s);
}

/* Inlet temperature: a run without a source reads as not measured; with
 * one, each level's row and active idle's (no readings: NaN) read back. */
static void test_inlet_temperature(void **state) {
    fix *f = *state;
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "";
    int64_t id;
    tb_model_run *r = read_model(f, store_run(f), 0);
    assert_false(r->temp_measured);
    assert_false(r->idle_inlet.measured);
    for (size_t i = 0; i < r->n_levels; i++)
        assert_false(r->levels[i].inlet.measured);
    tb_model_run_free(r);
    inlet_min_c = 18.5;
    id = store_run(f);
    inlet_min_c = NAN;
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(tb_store_put_idle_temperature(s, id, 0, NAN, NAN, NAN, NULL, 0, err), 0);
    tb_store_close(s);
    r = read_model(f, id, 0);
    assert_true(r->temp_measured);
    assert_true(r->idle_inlet.measured);
    assert_int_equal((int)r->idle_inlet.samples, 0);
    assert_true(isnan(r->idle_inlet.min_c) && isnan(r->idle_inlet.mean_c) && isnan(r->idle_inlet.max_c));
    assert_int_equal((int)r->n_levels, 3);
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_temp *t = &r->levels[i].inlet;
        assert_true(t->measured);
        assert_int_equal((int)t->samples, 5);
        assert_true(t->min_c == 18.5 && t->mean_c == 19.5 && t->max_c == 20.5);
    }
    tb_model_run_free(r);
}

/* ---- a level's QoS word, counts and hint (results/model.c) ----------------------------- */

static tb_model_qos row(int tile, const char *rule, int judged, int pass, int64_t ops, int64_t min_ops) {
    tb_model_qos q = {0};
    q.tile = tile;
    q.rule = (char *)rule;
    q.judged = judged;
    q.pass = pass;
    q.ops = (tb_model_int){ops, 1};
    q.min_ops = (tb_model_int){min_ops, 1};
    return q;
}

/* The one word: a failure beats rules not judged, which beat a pass. */
static void test_qos_word(void **state) {
    (void)state;
    assert_string_equal(tb_model_qos_verdict(1, 0), "pass");
    assert_string_equal(tb_model_qos_verdict(1, 3), "incomplete");
    assert_string_equal(tb_model_qos_verdict(0, 3), "fail");
    assert_string_equal(tb_model_qos_verdict(0, 0), "fail");
}

/* Rounding up, by hand: 10 s steps to 10 min, 1 min steps to 1 h, 5 min above. */
static void test_steady_round_up(void **state) {
    (void)state;
    assert_true(tb_model_steady_round_up(0.4) == 10);
    assert_true(tb_model_steady_round_up(10) == 10);
    assert_true(tb_model_steady_round_up(10.2) == 20);
    assert_true(tb_model_steady_round_up(179.3) == 180);
    assert_true(tb_model_steady_round_up(600) == 600);
    assert_true(tb_model_steady_round_up(600.5) == 660);
    assert_true(tb_model_steady_round_up(3601) == 3900);
}

/* Counts each rule once over the level's verdict and the tiles', and the
 * hint, against figures worked by hand for a 20 s steady state: rule b not
 * judged at the level (37 of 3693 ops: 20 x 3693 / 37 = 1996.2 s) and in
 * tile 1 (30 of 3693: 2462.0 s), d judged at the level but not in tile 1
 * (5 of 10: 40 s), c with no op at all (no length follows). The most is
 * 2462.0 s, rounded up to whole minutes: 42 min = 2520 s. */
static void test_qos_counts_and_hint(void **state) {
    tb_model_qos level[4], tiles[4];
    tb_model_qos_counts c;
    char buf[512];
    (void)state;
    level[0] = row(0, "a", 1, 1, 50, 10);
    level[1] = row(0, "b", 0, 0, 37, 3693);
    level[2] = row(0, "c", 0, 0, 0, 10);
    level[3] = row(0, "d", 1, 1, 12, 10);
    tiles[0] = row(1, "a", 1, 1, 25, 10);
    tiles[1] = row(1, "b", 0, 0, 30, 3693);
    tiles[2] = row(1, "d", 0, 0, 5, 10);
    tiles[3] = row(2, "a", 1, 1, 25, 10);
    tb_model_qos_count(level, 4, tiles, 4, 20, &c);
    assert_int_equal(c.passed, 1);
    assert_int_equal(c.failed, 0);
    assert_int_equal(c.judged, 1);
    assert_int_equal(c.not_judged, 3);
    assert_int_equal(c.no_ops, 1);
    assert_true(fabs(c.steady_raw_s - 2462.0) < 1e-9);
    assert_true(c.steady_s == 2520);
    assert_string_equal(c.worst, "b");
    assert_int_equal(c.worst_tile, 1);
    assert_int_equal((int)c.worst_ops, 30);
    assert_int_equal((int)c.worst_min_ops, 3693);
    tb_model_qos_counts_text(&c, buf, sizeof buf);
    assert_string_equal(buf, "1 judged: 1 passed, 0 failed; 3 not judged");
    assert_int_equal(tb_model_qos_hint(&c, 20, buf, sizeof buf), 1);
    assert_string_equal(buf, "a steady state of at least 2520 s (42 min; this one 20 s) would judge every rule that "
                             "saw ops (b needs the most: 30 of 3693 ops in tile 1); 1 rule verdict saw no op in 20 s, "
                             "so no length follows from it (c)");
    /* tile 2 fails a: a failure counts before "not judged", and a judged rule's ops do not enter the hint */
    tiles[3] = row(2, "a", 1, 0, 25, 10);
    tb_model_qos_count(level, 4, tiles, 4, 20, &c);
    assert_int_equal(c.failed, 1);
    assert_int_equal(c.passed, 0);
    assert_int_equal(c.judged, 1);
    assert_string_equal(c.first_failed, "a");
    assert_true(c.steady_s == 2520);
    /* every rule judged: no hint */
    tb_model_qos_count(level, 1, tiles, 1, 20, &c);
    assert_int_equal(c.passed, 1);
    assert_int_equal(c.not_judged, 0);
    assert_int_equal(tb_model_qos_hint(&c, 20, buf, sizeof buf), 0);
    /* only the level's b, over 30 s: 30 x 3693 / 37 = 2994.3 s -> 3000 s (50 min) */
    tb_model_qos_count(&level[1], 1, NULL, 0, 30, &c);
    assert_true(c.steady_s == 3000);
    assert_int_equal(c.worst_tile, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unknown_stays_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_qos_and_ops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary_median_phase, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merged_latency, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_exists_and_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inlet_temperature, setup, teardown),
        cmocka_unit_test(test_qos_word),
        cmocka_unit_test(test_steady_round_up),
        cmocka_unit_test(test_qos_counts_and_hint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
