/*
 * test_qos.c: unit tests of QoS rule naming and evaluation (qos/qos.c) against
 * hand-computed expectations: percentile, mean, error rate, share within a
 * limit, mix deviation, throughput vs reference, level vs per-tile
 * verdicts, and the least sample each rule needs to be judged at all
 * (boundaries n - 1 / n worked out by hand). Latencies are chosen below
 * 2048 µs (where the histogram is exact) or on bucket edges, so every
 * observed value is known.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "qos/qos.h"

/* One op's figures; the optional fields (tile, mix target) stay 0. */
#define IN(wl_, op_, hist_, ops_, errors_)                                                                             \
    ((tb_qos_input){.workload = (wl_), .op = (op_), .hist = (hist_), .ops = (ops_), .errors = (errors_)})

static tb_qos_rule make_rule(const char *wl, const char *op, tb_qos_kind kind, double pct, double limit) {
    tb_qos_rule r;
    memset(&r, 0, sizeof r);
    strcpy(r.workload, wl);
    strcpy(r.op, op);
    r.kind = kind;
    r.pct = pct;
    r.limit = limit;
    strcpy(r.source, "test");
    return r;
}

/* web.HomePage: 20, 40, ..., 2000 µs (p90 = 1800 µs, mean = 1010 µs).
 * web.Login: 10 x 3000 µs. oltp.HomePage: 1 s each (must never leak into web). */
typedef struct fixture {
    tb_hist *home, *login, *oltp, *empty;
    tb_qos_input in[4];
} fixture;

static int setup(void **state) {
    static fixture f;
    int i;
    f.home = tb_hist_new();
    f.login = tb_hist_new();
    f.oltp = tb_hist_new();
    f.empty = tb_hist_new();
    for (i = 1; i <= 100; i++)
        tb_hist_record(f.home, (uint64_t)i * 20);
    for (i = 0; i < 10; i++)
        tb_hist_record(f.login, 3000);
    for (i = 0; i < 50; i++)
        tb_hist_record(f.oltp, 1000000);
    f.in[0] = IN("web", "HomePage", f.home, 600, 2);
    f.in[1] = IN("web", "Login", f.login, 395, 3);
    f.in[2] = IN("oltp", "HomePage", f.oltp, 50, 100);
    f.in[3] = IN("mail", "FETCH", f.empty, 0, 0);
    *state = &f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    tb_hist_free(f->home);
    tb_hist_free(f->login);
    tb_hist_free(f->oltp);
    tb_hist_free(f->empty);
    return 0;
}

static void test_rule_names(void **state) {
    char buf[96];
    tb_qos_rule r = make_rule("oltp", "Order", TB_QOS_PERCENTILE, 90, 3000);
    (void)state;
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "oltp.Order p90 <= 3000 ms");
    r = make_rule("mail", "FETCH", TB_QOS_PERCENTILE, 99.9, 250.5);
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "mail.FETCH p99.9 <= 250.5 ms");
    r = make_rule("web", "Login", TB_QOS_MEAN, 0, 500);
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "web.Login mean <= 500 ms");
    r = make_rule("web", "*", TB_QOS_ERROR_RATE, 0, 0.5);
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "web.* error rate < 0.5%");
    tb_qos_rule_name(&r, buf, 8); /* truncates, stays terminated */
    assert_string_equal(buf, "web.* e");
}

static void test_percentile_pass_and_fail(void **state) {
    fixture *f = *state;
    tb_qos_result res;
    tb_qos_rule r = make_rule("web", "HomePage", TB_QOS_PERCENTILE, 90, 2);

    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1);
    assert_int_equal(res.pass, 1);
    assert_true(res.observed == 1.8); /* rank 90 of 100 -> 1800 µs */
    assert_true(res.limit == 2.0);
    assert_string_equal(res.rule, "web.HomePage p90 <= 2 ms");
    assert_string_equal(res.reason, "p90 1.800 ms <= 2 ms");

    r.limit = 1.5;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_int_equal(res.pass, 0);
    assert_true(res.observed == 1.8);
    assert_string_equal(res.reason, "p90 1.800 ms > 1.5 ms");

    /* at the limit passes (<=) */
    r.limit = 1.8;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1);

    /* oltp.HomePage is another workload: 1 s, one decimal above 100 ms;
     * its 50 ops are too few for a p99 (needs 100), enough for a p98 (50) */
    r = make_rule("oltp", "HomePage", TB_QOS_PERCENTILE, 99, 500);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), TB_QOS_NOT_JUDGED);
    assert_int_equal(res.pass, 0);
    assert_int_equal(res.not_judged, 1);
    assert_true(res.observed == 1000.0);
    assert_int_equal(res.ops, 50);
    assert_int_equal(res.min_ops, 100);
    assert_string_equal(
        res.reason, "50 ops, p99 needs 100 (with fewer it is the slowest op, not a percentile); observed 1000.0 ms");
    r.pct = 98;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), TB_QOS_FAIL);
    assert_int_equal(res.not_judged, 0);
    assert_int_equal(res.min_ops, 50);
    assert_string_equal(res.reason, "p98 1000.0 ms > 500 ms");
}

/* "*" merges HomePage and Login: 110 values, 100 <= 2000 µs then 10 x 3000. */
static void test_percentile_all_ops(void **state) {
    fixture *f = *state;
    tb_qos_result res;
    tb_qos_rule r = make_rule("web", "*", TB_QOS_PERCENTILE, 95, 2.5);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0); /* rank ceil(104.5) = 105 */
    assert_true(res.observed == 3.0);
    r.pct = 90; /* rank 99 -> 1980 µs */
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1);
    assert_true(res.observed == 1.98);
    /* the inputs are left as they were */
    assert_int_equal(tb_hist_count(f->home), 100);
    assert_int_equal(tb_hist_count(f->login), 10);
}

/* The same op reported once per tile is merged, as one histogram would be. */
static void test_same_op_several_tiles(void **state) {
    tb_hist *t1 = tb_hist_new(), *t2 = tb_hist_new();
    tb_qos_input in[2] = {IN("web", "HomePage", t1, 50, 0), IN("web", "HomePage", t2, 50, 0)};
    tb_qos_rule r = make_rule("web", "HomePage", TB_QOS_PERCENTILE, 50, 1);
    tb_qos_result res;
    int i;
    (void)state;
    for (i = 0; i < 50; i++)
        tb_hist_record(t1, 100); /* tile 1: 0.1 ms */
    for (i = 0; i < 50; i++)
        tb_hist_record(t2, 900); /* tile 2: 0.9 ms */
    assert_int_equal(tb_qos_eval(&r, in, 2, &res), 1);
    assert_true(res.observed == 0.1); /* rank 50 of 100 */
    r.pct = 51;                       /* rank 51 */
    assert_int_equal(tb_qos_eval(&r, in, 2, &res), 1);
    assert_true(res.observed == 0.9);
    r.kind = TB_QOS_MEAN;
    r.limit = 0.4;
    assert_int_equal(tb_qos_eval(&r, in, 2, &res), 0);
    assert_true(res.observed == 0.5);
    assert_string_equal(res.reason, "mean 0.500 ms > 0.4 ms");
    tb_hist_free(t1);
    tb_hist_free(t2);
}

static void test_mean(void **state) {
    fixture *f = *state;
    tb_qos_result res;
    tb_qos_rule r = make_rule("web", "HomePage", TB_QOS_MEAN, 0, 1);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0); /* 1010 µs */
    assert_true(res.observed == 1.01);
    assert_string_equal(res.rule, "web.HomePage mean <= 1 ms");
    assert_string_equal(res.reason, "mean 1.010 ms > 1 ms");
    r.limit = 1.01;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1);
}

static void test_error_rate(void **state) {
    fixture *f = *state;
    tb_qos_result res;
    /* web: (2 + 3) errors / (600 + 395 + 5) = 0.5 %; oltp's 100 errors don't count */
    tb_qos_rule r = make_rule("web", "*", TB_QOS_ERROR_RATE, 0, 0.5);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0); /* not < 0.5 */
    assert_true(fabs(res.observed - 0.5) < 1e-12);
    assert_string_equal(res.reason, "error rate 0.500% >= 0.5% (5 of 1000 ops)");
    r.limit = 0.6;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1);
    assert_string_equal(res.reason, "error rate 0.500% < 0.6% (5 of 1000 ops)");

    /* one op: Login 3 / 398 */
    r = make_rule("web", "Login", TB_QOS_ERROR_RATE, 0, 1);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1);
    assert_true(fabs(res.observed - 300.0 / 398.0) < 1e-12);

    /* oltp: 100 / 150 */
    r = make_rule("oltp", "*", TB_QOS_ERROR_RATE, 0, 0.5);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_true(fabs(res.observed - 200.0 / 3.0) < 1e-12);
}

/*
 * Zero ops. A workload that completed no op at all (successes, any op) in
 * the selection is stalled: its rules FAIL "no ops (W completed no op ...)".
 * An op that did not run while its workload did is a small sample: NOT
 * JUDGED "no ops" (Olio's AddPerson, 0.84% of the mix, in a short run).
 */
static void test_no_ops(void **state) {
    fixture *f = *state;
    tb_qos_result res;
    tb_qos_input only_errors = IN("kv", "GET", NULL, 0, 5);
    tb_qos_input null_hist = IN("kv", "SET", NULL, 10, 0);
    tb_hist *empty = tb_hist_new();
    tb_qos_input web[5] = {f->in[0], f->in[1], IN("web", "AddPerson", empty, 0, 0), f->in[2], f->in[3]};
    /* no matching input at all: kv ran nothing */
    tb_qos_rule r = make_rule("kv", "GET", TB_QOS_PERCENTILE, 99, 1);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), TB_QOS_FAIL);
    assert_string_equal(res.reason, "no ops (kv completed no op in steady state)");
    assert_true(isnan(res.observed)); /* nothing observed: not available, never 0 */
    assert_int_equal(res.not_judged, 0);
    assert_int_equal(tb_qos_eval(&r, NULL, 0, &res), TB_QOS_FAIL);
    assert_string_equal(res.reason, "no ops (kv completed no op in steady state)");
    /* matching input with an empty histogram, its workload idle */
    r = make_rule("mail", "FETCH", TB_QOS_PERCENTILE, 95, 1);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), TB_QOS_FAIL);
    assert_string_equal(res.reason, "no ops (mail completed no op in steady state)");
    r.kind = TB_QOS_MEAN;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), TB_QOS_FAIL);
    /* error rate with zero ops and zero errors of an idle workload fails too */
    r = make_rule("mail", "FETCH", TB_QOS_ERROR_RATE, 0, 0.5);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), TB_QOS_FAIL);
    assert_string_equal(res.reason, "no ops (mail completed no op in steady state)");
    r = make_rule("kv", "*", TB_QOS_ERROR_RATE, 0, 0.5);
    assert_int_equal(tb_qos_eval(&r, NULL, 0, &res), TB_QOS_FAIL);
    /* only errors: 100 %, judged */
    assert_int_equal(tb_qos_eval(&r, &only_errors, 1, &res), TB_QOS_FAIL);
    assert_true(res.observed == 100.0);
    assert_int_equal(res.ops, 5);
    /* web ran (HomePage, Login) but AddPerson did not: not judged, never a pass */
    r = make_rule("web", "AddPerson", TB_QOS_PERCENTILE, 90, 3000);
    assert_int_equal(tb_qos_eval(&r, web, 5, &res), TB_QOS_NOT_JUDGED);
    assert_int_equal(res.pass, 0);
    assert_int_equal(res.not_judged, 1);
    assert_string_equal(res.reason, "no ops");
    assert_true(isnan(res.observed));
    assert_int_equal(res.ops, 0);
    assert_int_equal(res.min_ops, 10);
    r.kind = TB_QOS_MEAN;
    assert_int_equal(tb_qos_eval(&r, web, 5, &res), TB_QOS_NOT_JUDGED);
    assert_int_equal(res.min_ops, 1);
    r = make_rule("web", "AddPerson", TB_QOS_ERROR_RATE, 0, 0.5);
    assert_int_equal(tb_qos_eval(&r, web, 5, &res), TB_QOS_NOT_JUDGED);
    assert_string_equal(res.reason, "no ops");
    assert_true(isnan(res.observed)); /* 0 ops and 0 errors: no rate, not 0% */
    r = make_rule("web", "AddPerson", TB_QOS_WITHIN, 0, 99);
    r.within_ms = 3000;
    assert_int_equal(tb_qos_eval(&r, web, 5, &res), TB_QOS_NOT_JUDGED);
    /* matching input without a histogram, in a workload that ran (SET counted 10) */
    r = make_rule("kv", "SET", TB_QOS_MEAN, 0, 1);
    assert_int_equal(tb_qos_eval(&r, &null_hist, 1, &res), TB_QOS_NOT_JUDGED);
    assert_string_equal(res.reason, "no ops");
    tb_hist_free(empty);
}

/* The least samples, worked out by hand (see qos.h). */
static void test_min_ops_formulas(void **state) {
    (void)state;
    /* ceil(100 / (100 - NN)) */
    assert_int_equal(tb_qos_quantile_min_ops(90), 10); /* 100 / 10 in doubles is 10.000000000000002 */
    assert_int_equal(tb_qos_quantile_min_ops(95), 20);
    assert_int_equal(tb_qos_quantile_min_ops(99), 100);
    assert_int_equal(tb_qos_quantile_min_ops(99.9), 1000);
    assert_int_equal(tb_qos_quantile_min_ops(99.99), 10000);
    assert_int_equal(tb_qos_quantile_min_ops(50), 2);
    assert_int_equal(tb_qos_quantile_min_ops(75), 4);
    assert_int_equal(tb_qos_quantile_min_ops(80), 5);
    assert_int_equal(tb_qos_quantile_min_ops(66.7), 4); /* 100 / 33.3 = 3.003 */
    assert_int_equal(tb_qos_quantile_min_ops(100), 1);  /* the maximum: any op */
    assert_int_equal(tb_qos_quantile_min_ops(0), 1);
    /* ceil(z^2 t (100 - t) / L^2), t and L in %, z^2 = 2.576^2 = 6.635776 */
    assert_int_equal(tb_qos_mix_min_ops(25, 2), 3111);    /* 6.635776 * 25 * 75 / 4 = 3110.52 */
    assert_int_equal(tb_qos_mix_min_ops(50, 2), 4148);    /* 6.635776 * 2500 / 4 = 4147.36 */
    assert_int_equal(tb_qos_mix_min_ops(50, 3), 1844);    /* 6.635776 * 2500 / 9 = 1843.27 */
    assert_int_equal(tb_qos_mix_min_ops(33.45, 2), 3693); /* 6.635776 * 33.45 * 66.55 / 4 = 3692.97: Olio's TagSearch */
    assert_int_equal(tb_qos_mix_min_ops(26.15, 2), 3204); /* 6.635776 * 26.15 * 73.85 / 4 = 3203.72: HomePage */
    assert_int_equal(tb_qos_mix_min_ops(0.84, 2), 139);   /* 6.635776 * 0.84 * 99.16 / 4 = 138.18: AddPerson */
    assert_int_equal(tb_qos_mix_min_ops(20, 1), 10618);   /* 6.635776 * 20 * 80 / 1 = 10617.24 */
    assert_int_equal(tb_qos_mix_min_ops(0, 2), 1);        /* a target of 0% or 100% has no spread */
    assert_int_equal(tb_qos_mix_min_ops(100, 2), 1);
    assert_int_equal(tb_qos_mix_min_ops(25, 0), 1); /* 0 pp: no n makes it likely; judged from the first op */
}

/* p90 needs 10 ops: with 9 (100..900 µs) its rank ceil(8.1) = 9 is the
 * slowest op; with 10 (100..1000 µs) it is rank 9 = 900 µs, below the max. */
static void test_percentile_min_boundary(void **state) {
    tb_hist *h9 = tb_hist_new(), *h10 = tb_hist_new();
    tb_qos_input in9 = IN("web", "Login", h9, 9, 0), in10 = IN("web", "Login", h10, 10, 0);
    tb_qos_rule r = make_rule("web", "Login", TB_QOS_PERCENTILE, 90, 1);
    tb_qos_result res;
    int i;
    (void)state;
    for (i = 1; i <= 9; i++)
        tb_hist_record(h9, (uint64_t)i * 100);
    for (i = 1; i <= 10; i++)
        tb_hist_record(h10, (uint64_t)i * 100);
    assert_int_equal(tb_qos_eval(&r, &in9, 1, &res), TB_QOS_NOT_JUDGED);
    assert_int_equal(res.ops, 9);
    assert_int_equal(res.min_ops, 10);
    assert_true(res.observed == 0.9); /* shown, not judged */
    assert_string_equal(res.reason,
                        "9 ops, p90 needs 10 (with fewer it is the slowest op, not a percentile); observed 0.900 ms");
    assert_int_equal(tb_qos_eval(&r, &in10, 1, &res), TB_QOS_PASS);
    assert_true(res.observed == 0.9);
    assert_string_equal(res.reason, "p90 0.900 ms <= 1 ms");
    r.limit = 0.8; /* a judged miss still fails */
    assert_int_equal(tb_qos_eval(&r, &in10, 1, &res), TB_QOS_FAIL);
    /* WITHIN 90%: the same minimum; 9 of 9 within 1 ms is not judged */
    r = make_rule("web", "Login", TB_QOS_WITHIN, 0, 90);
    r.within_ms = 1;
    assert_int_equal(tb_qos_eval(&r, &in9, 1, &res), TB_QOS_NOT_JUDGED);
    assert_string_equal(res.reason, "9 ops, 90% within needs 10 (with fewer one slow op decides); observed 100.000%");
    assert_int_equal(tb_qos_eval(&r, &in10, 1, &res), TB_QOS_PASS);
    /* a p100 is the maximum: judged from the first op */
    r = make_rule("web", "Login", TB_QOS_PERCENTILE, 100, 1);
    assert_int_equal(tb_qos_eval(&r, &in9, 1, &res), TB_QOS_PASS);
    assert_int_equal(res.min_ops, 1);
    tb_hist_free(h9);
    tb_hist_free(h10);
}

static void test_bad_rule(void **state) {
    fixture *f = *state;
    tb_qos_result res;
    tb_qos_rule r = make_rule("web", "HomePage", TB_QOS_PERCENTILE, 150, 2);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_non_null(strstr(res.reason, "bad percentile"));
    r.kind = (tb_qos_kind)42;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_string_equal(res.reason, "unknown rule kind 42");
}

/* A mix op of one tile: successes, and the target share in %. */
static tb_qos_input mix_in(const char *wl, const char *op, uint64_t ops, double target, int tile) {
    tb_qos_input in = IN(wl, op, NULL, ops, 0);
    in.has_mix_target = 1;
    in.mix_target_pct = target;
    in.tile = tile;
    return in;
}

static void test_rule_names_new_kinds(void **state) {
    char buf[96];
    tb_qos_rule r = make_rule("web", "HomePage", TB_QOS_WITHIN, 0, 99);
    (void)state;
    r.within_ms = 2000;
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "web.HomePage within 2000 ms >= 99%");
    r.within_ms = 0.25;
    r.limit = 99.5;
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "web.HomePage within 0.25 ms >= 99.5%");
    r = make_rule("web", "*", TB_QOS_MIX, 0, 2);
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "web.* mix deviation <= 2 pp");
    r = make_rule("oltp", "*", TB_QOS_THROUGHPUT, 0, 95);
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "oltp.* throughput >= 95% of reference");
}

/* web.HomePage is 20, 40, ..., 2000 µs: 50 of 100 are <= 1 ms. */
static void test_within(void **state) {
    fixture *f = *state;
    tb_qos_result res;
    tb_qos_rule r = make_rule("web", "HomePage", TB_QOS_WITHIN, 0, 50);
    r.within_ms = 1;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1); /* 50% >= 50%: at the limit passes */
    assert_true(res.observed == 50.0);
    assert_true(res.limit == 50.0);
    assert_string_equal(res.rule, "web.HomePage within 1 ms >= 50%");
    assert_string_equal(res.reason, "50.000% within 1 ms >= 50% (50 of 100 ops)");
    r.limit = 50.5;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_string_equal(res.reason, "50.000% within 1 ms < 50.5% (50 of 100 ops)");
    /* 0.5 ms: 20..500 µs = 25 values */
    r.within_ms = 0.5;
    r.limit = 25;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1);
    assert_true(res.observed == 25.0);
    /* "*" merges Login's 10 x 3 ms: within 2 ms 100 of 110; within 3 ms all */
    r = make_rule("web", "*", TB_QOS_WITHIN, 0, 90);
    r.within_ms = 2;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1);
    assert_true(fabs(res.observed - 10000.0 / 110.0) < 1e-12);
    r.limit = 91;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    r.within_ms = 3;
    r.limit = 100;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1);
    assert_true(res.observed == 100.0);
    /* 99 of 100 is exactly 99 (no 98.99999 from fraction * 100) */
    {
        tb_hist *h = tb_hist_new();
        tb_qos_input one = IN("kv", "GET", h, 100, 0);
        int i;
        for (i = 0; i < 99; i++)
            tb_hist_record(h, 100);
        tb_hist_record(h, 5000);
        r = make_rule("kv", "GET", TB_QOS_WITHIN, 0, 99);
        r.within_ms = 1;
        assert_int_equal(tb_qos_eval(&r, &one, 1, &res), 1);
        assert_true(res.observed == 99.0);
        r.limit = 99.9; /* 99.9% would need 999 of 1000: 100 ops cannot tell */
        assert_int_equal(tb_qos_eval(&r, &one, 1, &res), TB_QOS_NOT_JUDGED);
        assert_int_equal(res.min_ops, 1000);
        r.min_ops_given = 1; /* judged from 100 ops: 99% < 99.9% */
        r.min_ops = 100;
        assert_int_equal(tb_qos_eval(&r, &one, 1, &res), TB_QOS_FAIL);
        tb_hist_free(h);
    }
}

static void test_within_edges(void **state) {
    fixture *f = *state;
    tb_qos_result res;
    tb_qos_rule r = make_rule("kv", "GET", TB_QOS_WITHIN, 0, 99);
    r.within_ms = 1;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0); /* no such op, and kv idle */
    assert_string_equal(res.reason, "no ops (kv completed no op in steady state)");
    assert_int_equal(tb_qos_eval(&r, NULL, 0, &res), 0);
    assert_string_equal(res.reason, "no ops (kv completed no op in steady state)");
    r = make_rule("mail", "FETCH", TB_QOS_WITHIN, 0, 99); /* empty histogram */
    r.within_ms = 1;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_string_equal(res.reason, "no ops (mail completed no op in steady state)");
    r = make_rule("web", "HomePage", TB_QOS_WITHIN, 0, 50);
    r.within_ms = -1;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_string_equal(res.reason, "bad latency limit -1 ms");
    r.within_ms = NAN;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    /* a limit of 0 ms: only values of 0 µs (recorded as the 1 µs bucket) */
    r.within_ms = 0;
    r.limit = 1;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_true(res.observed == 0.0);
}

/*
 * Faban mix. Targets A 50%, B 30%, C 20%.
 * tile 1: A 300, B 100, C 100 (500): 60/20/20 -> deviations 10/10/0, worst A (tie, first)
 * tile 2: A 180, B 190, C 130 (500): 36/38/26 -> 14/8/6, worst A
 * level:  A 480, B 290, C 230 (1000): 48/29/23 -> 2/1/3, worst C
 */
typedef struct mix_fixture {
    tb_qos_input in[9];
} mix_fixture;

static void fill_mix(mix_fixture *m) {
    m->in[0] = mix_in("web", "A", 300, 50, 1);
    m->in[1] = mix_in("web", "B", 100, 30, 1);
    m->in[2] = mix_in("web", "C", 100, 20, 1);
    m->in[3] = mix_in("web", "A", 180, 50, 2);
    m->in[4] = mix_in("web", "B", 190, 30, 2);
    m->in[5] = mix_in("web", "C", 130, 20, 2);
    /* not part of the mix: no target (a sub-op), and another workload */
    m->in[6] = IN("web", "Login", NULL, 100000, 0);
    m->in[7] = mix_in("oltp", "A", 5000, 1, 1);
    m->in[8] = IN("web", "A", NULL, 0, 400); /* errors only: Faban's mix counts successes */
    m->in[8].has_mix_target = 1;
    m->in[8].mix_target_pct = 50;
}

/* A mix rule judged from the first op (`mix_deviation = L@0`), so the
 * deviation arithmetic below is checked on small, hand-countable samples;
 * test_mix_min_boundary checks the derived minimum. */
static tb_qos_rule mix_rule(const char *wl, const char *op, double limit) {
    tb_qos_rule r = make_rule(wl, op, TB_QOS_MIX, 0, limit);
    r.min_ops_given = 1;
    r.min_ops = 0;
    return r;
}

static void test_mix(void **state) {
    mix_fixture m;
    tb_qos_inputs set = {m.in, 9, NULL, 0};
    tb_qos_result res;
    tb_qos_rule r = mix_rule("web", "*", 3);
    (void)state;
    fill_mix(&m);
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 0, &res), 1); /* 3 pp <= 3 pp */
    assert_true(fabs(res.observed - 3.0) < 1e-12);
    assert_true(res.limit == 3.0);
    assert_string_equal(res.rule, "web.* mix deviation <= 3 pp");
    assert_string_equal(res.reason, "C share 23.000% (target 20%): 3.000 pp <= 3 pp");
    r.limit = 2;
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 0, &res), 0);
    assert_string_equal(res.reason, "C share 23.000% (target 20%): 3.000 pp > 2 pp");
    /* tb_qos_eval takes every input too */
    assert_int_equal(tb_qos_eval(&r, m.in, 9, &res), 0);
    assert_true(fabs(res.observed - 3.0) < 1e-12);
    /* per tile */
    r.limit = 12;
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 1, &res), 1);
    assert_true(fabs(res.observed - 10.0) < 1e-12);
    assert_string_equal(res.reason, "A share 60.000% (target 50%): 10.000 pp <= 12 pp");
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 2, &res), 0);
    assert_true(fabs(res.observed - 14.0) < 1e-12);
    assert_string_equal(res.reason, "A share 36.000% (target 50%): 14.000 pp > 12 pp");
    /* one named op: B's own deviation at level, 29 vs 30 */
    r = mix_rule("web", "B", 1);
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 0, &res), 1);
    assert_true(fabs(res.observed - 1.0) < 1e-12);
    assert_string_equal(res.reason, "B share 29.000% (target 30%): 1.000 pp <= 1 pp");
    /* ties go to the first op: tile 1 has A and B both 10 pp off */
    r = mix_rule("web", "*", 5);
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 1, &res), 0);
    assert_non_null(strstr(res.reason, "A share"));
}

static void test_mix_edges(void **state) {
    tb_qos_result res;
    tb_qos_rule r = mix_rule("web", "*", 2);
    tb_qos_input none[3], zero[3], missing_op[3];
    (void)state;
    /* an op of the mix that never ran deviates by its whole target */
    missing_op[0] = mix_in("web", "A", 500, 50, 0);
    missing_op[1] = mix_in("web", "B", 500, 30, 0);
    missing_op[2] = mix_in("web", "C", 0, 20, 0);
    assert_int_equal(tb_qos_eval(&r, missing_op, 3, &res), 0);
    assert_true(fabs(res.observed - 20.0) < 1e-12); /* B 50 vs 30 and C 0 vs 20: B first */
    assert_string_equal(res.reason, "B share 50.000% (target 30%): 20.000 pp > 2 pp");
    /* no input carries a target */
    none[0] = IN("web", "A", NULL, 10, 0);
    none[1] = IN("web", "B", NULL, 10, 0);
    none[2] = IN("web", "C", NULL, 10, 0);
    assert_int_equal(tb_qos_eval(&r, none, 3, &res), 0);
    assert_string_equal(res.reason, "no mix target for web");
    assert_true(isnan(res.observed)); /* no target: nothing to observe */
    assert_int_equal(tb_qos_eval(&r, NULL, 0, &res), 0);
    assert_string_equal(res.reason, "no mix target for web");
    /* the mix ops ran 0 times */
    zero[0] = mix_in("web", "A", 0, 50, 0);
    zero[1] = mix_in("web", "B", 0, 30, 0);
    zero[2] = mix_in("web", "C", 0, 20, 0);
    assert_int_equal(tb_qos_eval(&r, zero, 3, &res), TB_QOS_FAIL); /* web completed nothing */
    assert_string_equal(res.reason, "no ops (web completed no op in steady state)");
    /* ... while a sub-op without a target did: not judged */
    {
        tb_qos_input zero_but_requests[4] = {zero[0], zero[1], zero[2], IN("web", "Request", NULL, 40, 0)};
        assert_int_equal(tb_qos_eval(&r, zero_but_requests, 4, &res), TB_QOS_NOT_JUDGED);
        assert_string_equal(res.reason, "no ops");
    }
    /* a named op outside the mix */
    r = mix_rule("web", "Login", 2);
    assert_int_equal(tb_qos_eval(&r, missing_op, 3, &res), 0);
    assert_string_equal(res.reason, "no mix target for web.Login");
    /* a tile with no inputs */
    {
        tb_qos_inputs set = {missing_op, 3, NULL, 0};
        r = mix_rule("web", "*", 2);
        assert_int_equal(tb_qos_eval_inputs(&r, &set, 7, &res), 0);
        assert_string_equal(res.reason, "no mix target for web");
    }
}

/*
 * The derived minimum of a mix rule. Targets A 50%, B 50% at 3 pp: n >=
 * 6.635776 * 50 * 50 / 9 = 1843.27, so 1844 mix ops. 1843 (A 922, B 921) is
 * not judged, 1844 is. With targets 50/30/20 the "*" rule needs the largest
 * of 1844, 1549 (30%: 1548.35) and 1180 (20%: 1179.69); a rule on C alone
 * needs 1180.
 */
static void test_mix_min_boundary(void **state) {
    tb_qos_input in[3] = {mix_in("web", "A", 922, 50, 0), mix_in("web", "B", 921, 50, 0)};
    tb_qos_rule r = make_rule("web", "*", TB_QOS_MIX, 0, 3);
    tb_qos_result res;
    (void)state;
    assert_int_equal(tb_qos_eval(&r, in, 2, &res), TB_QOS_NOT_JUDGED);
    assert_int_equal(res.pass, 0);
    assert_int_equal(res.ops, 1843);
    assert_int_equal(res.min_ops, 1844);
    assert_string_equal(res.reason,
                        "1843 mix ops, needs 1844 (3 pp = 2.576 sd of A's 50% share); observed 0.027 pp (A)");
    in[1].ops = 922;
    assert_int_equal(tb_qos_eval(&r, in, 2, &res), TB_QOS_PASS);
    assert_true(res.observed == 0.0);
    /* judged from the tile file's own minimum */
    in[1].ops = 921;
    r.min_ops_given = 1;
    r.min_ops = 1843;
    assert_int_equal(tb_qos_eval(&r, in, 2, &res), TB_QOS_PASS);
    r.min_ops = 3000;
    assert_int_equal(tb_qos_eval(&r, in, 2, &res), TB_QOS_NOT_JUDGED);
    assert_string_equal(res.reason, "1843 mix ops, needs 3000 (set in the tile file); observed 0.027 pp (A)");
    /* three ops: "*" needs A's 1844; C's own rule needs 1180 */
    in[0] = mix_in("web", "A", 750, 50, 0);
    in[1] = mix_in("web", "B", 450, 30, 0);
    in[2] = mix_in("web", "C", 300, 20, 0); /* 1500 ops */
    r = make_rule("web", "*", TB_QOS_MIX, 0, 3);
    assert_int_equal(tb_qos_eval(&r, in, 3, &res), TB_QOS_NOT_JUDGED);
    assert_int_equal(res.min_ops, 1844);
    r = make_rule("web", "C", TB_QOS_MIX, 0, 3);
    assert_int_equal(tb_qos_eval(&r, in, 3, &res), TB_QOS_PASS);
    assert_int_equal(res.min_ops, 1180);
    /* a deviation far beyond the limit on too few ops is still not judged:
     * 40 ops all of A is chance at this size, not evidence */
    in[0].ops = 40;
    in[1].ops = in[2].ops = 0;
    r = make_rule("web", "*", TB_QOS_MIX, 0, 2);
    assert_int_equal(tb_qos_eval(&r, in, 3, &res), TB_QOS_NOT_JUDGED);
    assert_true(res.observed == 50.0);
}

/* The verdict over several rules: FAIL beats NOT_JUDGED beats PASS. */
static void test_verdict_outcomes(void **state) {
    tb_hist *h = tb_hist_new();
    tb_qos_input in[2] = {IN("web", "HomePage", h, 20, 0), IN("web", "AddPerson", NULL, 0, 0)};
    tb_qos_inputs set = {in, 2, NULL, 0};
    tb_qos_rule rules[3];
    tb_qos_result res[3];
    int i;
    (void)state;
    for (i = 0; i < 20; i++)
        tb_hist_record(h, 500);
    rules[0] = make_rule("web", "HomePage", TB_QOS_PERCENTILE, 90, 1);     /* 0.5 ms: pass */
    rules[1] = make_rule("web", "AddPerson", TB_QOS_PERCENTILE, 90, 3000); /* no ops: not judged */
    rules[2] = make_rule("web", "HomePage", TB_QOS_PERCENTILE, 95, 0.1);   /* 20 ops, p95 needs 20: fails */
    assert_int_equal(tb_qos_verdict(rules, 1, &set, 0, res), TB_QOS_PASS);
    assert_int_equal(tb_qos_verdict(rules, 2, &set, 0, res), TB_QOS_NOT_JUDGED);
    assert_int_equal(res[0].pass, 1);
    assert_int_equal(res[1].pass, 0);
    assert_int_equal(res[1].not_judged, 1);
    assert_int_equal(tb_qos_verdict(rules, 3, &set, 0, res), TB_QOS_FAIL);
    assert_int_equal(res[2].not_judged, 0);
    assert_int_equal(res[2].min_ops, 20);
    tb_hist_free(h);
}

/* oltp: tile 1 950 of 1000 OPM, tile 2 900 of 1000 -> level 1850 / 2000 = 92.5%. */
static void test_throughput(void **state) {
    const tb_qos_wl_input wl[3] = {
        {"oltp", 1, 950.0, 1000.0},
        {"oltp", 2, 900.0, 1000.0},
        {"web", 1, 10.0, 0.0},
    };
    tb_qos_inputs set = {NULL, 0, wl, 3};
    tb_qos_result res;
    tb_qos_rule r = make_rule("oltp", "*", TB_QOS_THROUGHPUT, 0, 90);
    (void)state;
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 0, &res), 1);
    assert_true(fabs(res.observed - 92.5) < 1e-12);
    assert_string_equal(res.reason, "throughput 92.500% of reference >= 90% (1850 of 2000)");
    r.limit = 95;
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 0, &res), 0);
    assert_string_equal(res.reason, "throughput 92.500% of reference < 95% (1850 of 2000)");
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 1, &res), 1); /* 95% at the limit */
    assert_true(res.observed == 95.0);
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 2, &res), 0);
    assert_true(res.observed == 90.0);
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 3, &res), 0); /* no tile 3 */
    assert_string_equal(res.reason, "no throughput for oltp");
    /* no per-workload inputs through tb_qos_eval */
    assert_int_equal(tb_qos_eval(&r, NULL, 0, &res), 0);
    assert_string_equal(res.reason, "no throughput for oltp");
    assert_int_equal(tb_qos_eval_inputs(&r, NULL, 0, &res), 0);
    assert_string_equal(res.reason, "no throughput for oltp");
    /* a reference of 0 */
    r = make_rule("web", "*", TB_QOS_THROUGHPUT, 0, 90);
    assert_int_equal(tb_qos_eval_inputs(&r, &set, 0, &res), 0);
    assert_string_equal(res.reason, "no reference throughput for web");
}

/*
 * Per-tile inputs, as the coordinator would lay them out. Tile 1 is fine;
 * tile 2's HomePage is slow (3 ms) and its oltp falls short of the reference.
 * Level: HomePage p50 over both tiles is 0.1 ms (rank 50 of 100) so the
 * merged latency passes, but throughput 1800 / 2000 = 90% < 95% fails.
 */
static void test_verdict_level_and_tiles(void **state) {
    tb_hist *h1 = tb_hist_new(), *h2 = tb_hist_new();
    tb_qos_input ops[2] = {IN("web", "HomePage", h1, 50, 0), IN("web", "HomePage", h2, 50, 1)};
    const tb_qos_wl_input wl[2] = {{"oltp", 1, 1000.0, 1000.0}, {"oltp", 2, 800.0, 1000.0}};
    tb_qos_inputs set = {ops, 2, wl, 2};
    tb_qos_rule rules[3];
    tb_qos_result res[3];
    int i;
    (void)state;
    for (i = 0; i < 50; i++)
        tb_hist_record(h1, 100);
    for (i = 0; i < 50; i++)
        tb_hist_record(h2, 3000);
    ops[0].tile = 1;
    ops[1].tile = 2;
    rules[0] = make_rule("web", "HomePage", TB_QOS_PERCENTILE, 50, 1);
    rules[1] = make_rule("web", "*", TB_QOS_ERROR_RATE, 0, 5);
    rules[2] = make_rule("oltp", "*", TB_QOS_THROUGHPUT, 0, 95);

    assert_int_equal(tb_qos_verdict(rules, 3, &set, 0, res), 0);
    assert_int_equal(res[0].pass, 1);
    assert_true(res[0].observed == 0.1);
    assert_int_equal(res[1].pass, 1); /* 1 of 101 = 0.99% */
    assert_int_equal(res[2].pass, 0);
    assert_true(fabs(res[2].observed - 90.0) < 1e-12);

    assert_int_equal(tb_qos_verdict(rules, 3, &set, 1, res), 1);
    assert_true(res[0].observed == 0.1);
    assert_true(res[1].observed == 0.0);
    assert_true(res[2].observed == 100.0);

    assert_int_equal(tb_qos_verdict(rules, 3, &set, 2, res), 0);
    assert_int_equal(res[0].pass, 0);
    assert_true(res[0].observed == 3.0);
    assert_int_equal(res[1].pass, 1); /* 1 of 51 = 1.96% */
    assert_true(fabs(res[1].observed - 100.0 / 51.0) < 1e-12);
    assert_int_equal(res[2].pass, 0);
    assert_true(res[2].observed == 80.0);

    assert_int_equal(tb_qos_verdict(rules, 0, &set, 0, res), 1); /* no rules: pass */
    tb_hist_free(h1);
    tb_hist_free(h2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_names),
        cmocka_unit_test(test_percentile_pass_and_fail),
        cmocka_unit_test(test_percentile_all_ops),
        cmocka_unit_test(test_same_op_several_tiles),
        cmocka_unit_test(test_mean),
        cmocka_unit_test(test_error_rate),
        cmocka_unit_test(test_no_ops),
        cmocka_unit_test(test_bad_rule),
        cmocka_unit_test(test_rule_names_new_kinds),
        cmocka_unit_test(test_within),
        cmocka_unit_test(test_within_edges),
        cmocka_unit_test(test_mix),
        cmocka_unit_test(test_mix_edges),
        cmocka_unit_test(test_throughput),
        cmocka_unit_test(test_verdict_level_and_tiles),
        cmocka_unit_test(test_min_ops_formulas),
        cmocka_unit_test(test_percentile_min_boundary),
        cmocka_unit_test(test_mix_min_boundary),
        cmocka_unit_test(test_verdict_outcomes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
