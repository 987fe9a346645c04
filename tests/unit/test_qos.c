/*
 * test_qos.c: unit tests of QoS rule naming and evaluation (qos/qos.c) against
 * hand-computed expectations. Latencies are chosen below 2048 µs (where the
 * histogram is exact) or on bucket edges, so every observed value is known.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "qos/qos.h"

static tb_qos_rule make_rule(const char *wl, const char *op, tb_qos_kind kind, double pct,
                             double limit) {
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
    for (i = 1; i <= 100; i++) tb_hist_record(f.home, (uint64_t)i * 20);
    for (i = 0; i < 10; i++) tb_hist_record(f.login, 3000);
    for (i = 0; i < 50; i++) tb_hist_record(f.oltp, 1000000);
    f.in[0] = (tb_qos_input){"web", "HomePage", f.home, 600, 2};
    f.in[1] = (tb_qos_input){"web", "Login", f.login, 395, 3};
    f.in[2] = (tb_qos_input){"oltp", "HomePage", f.oltp, 50, 100};
    f.in[3] = (tb_qos_input){"mail", "FETCH", f.empty, 0, 0};
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

    /* oltp.HomePage is another workload: 1 s, one decimal above 100 ms */
    r = make_rule("oltp", "HomePage", TB_QOS_PERCENTILE, 99, 500);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_true(res.observed == 1000.0);
    assert_string_equal(res.reason, "p99 1000.0 ms > 500 ms");
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
    tb_qos_input in[2] = {{"web", "HomePage", t1, 50, 0}, {"web", "HomePage", t2, 50, 0}};
    tb_qos_rule r = make_rule("web", "HomePage", TB_QOS_PERCENTILE, 50, 1);
    tb_qos_result res;
    int i;
    (void)state;
    for (i = 0; i < 50; i++) tb_hist_record(t1, 100); /* tile 1: 0.1 ms */
    for (i = 0; i < 50; i++) tb_hist_record(t2, 900); /* tile 2: 0.9 ms */
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

static void test_no_ops(void **state) {
    fixture *f = *state;
    tb_qos_result res;
    tb_qos_input only_errors = {"kv", "GET", NULL, 0, 5};
    tb_qos_input null_hist = {"kv", "SET", NULL, 10, 0};
    /* no matching input at all */
    tb_qos_rule r = make_rule("kv", "GET", TB_QOS_PERCENTILE, 99, 1);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_string_equal(res.reason, "no ops");
    assert_true(res.observed == 0.0);
    assert_int_equal(tb_qos_eval(&r, NULL, 0, &res), 0);
    assert_string_equal(res.reason, "no ops");
    /* matching input with an empty histogram */
    r = make_rule("mail", "FETCH", TB_QOS_PERCENTILE, 95, 1);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_string_equal(res.reason, "no ops");
    r.kind = TB_QOS_MEAN;
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 0);
    assert_string_equal(res.reason, "no ops");
    /* matching input without a histogram */
    r = make_rule("kv", "SET", TB_QOS_MEAN, 0, 1);
    assert_int_equal(tb_qos_eval(&r, &null_hist, 1, &res), 0);
    assert_string_equal(res.reason, "no ops");
    /* error rate with zero ops and zero errors passes with observed 0 */
    r = make_rule("mail", "FETCH", TB_QOS_ERROR_RATE, 0, 0.5);
    assert_int_equal(tb_qos_eval(&r, f->in, 4, &res), 1);
    assert_true(res.observed == 0.0);
    r = make_rule("kv", "*", TB_QOS_ERROR_RATE, 0, 0.5);
    assert_int_equal(tb_qos_eval(&r, NULL, 0, &res), 1);
    assert_true(res.observed == 0.0);
    /* only errors: 100 % */
    assert_int_equal(tb_qos_eval(&r, &only_errors, 1, &res), 0);
    assert_true(res.observed == 100.0);
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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
