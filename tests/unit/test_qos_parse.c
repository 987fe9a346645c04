/*
 * test_qos_parse.c: unit tests of the [qos.NAME] rule syntax parser
 * (tb_qos_parse_rule in tiles/qos_rule.c): every rule form with its unit handling,
 * and bad keys and values, whose errors must name the section, the key and
 * why (the tile parser only prefixes file:line).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "qos/qos.h"

/* Parses and expects success. */
static tb_qos_rule ok(const char *wl, const char *key, const char *value) {
    tb_qos_rule r;
    char err[TB_ERR_LEN] = "";
    if (tb_qos_parse_rule(wl, key, value, &r, err) != 0) {
        print_error("%s = %s: unexpected error: %s\n", key, value, err);
        fail();
    }
    assert_string_equal(r.source, ""); /* left for the caller */
    assert_string_equal(r.workload, wl);
    return r;
}

/* Parses and expects the error text err_want. */
static void bad(const char *wl, const char *key, const char *value, const char *err_want) {
    tb_qos_rule r;
    char err[TB_ERR_LEN] = "";
    if (tb_qos_parse_rule(wl, key, value, &r, err) == 0) {
        print_error("%s = %s: parsed, want error '%s'\n", key, value ? value : "(null)", err_want);
        fail();
    }
    assert_string_equal(err, err_want);
}

static void test_percentile(void **state) {
    tb_qos_rule r;
    (void)state;
    r = ok("web", "HomePage.p90", "1s");
    assert_int_equal(r.kind, TB_QOS_PERCENTILE);
    assert_string_equal(r.op, "HomePage");
    assert_true(r.pct == 90.0);
    assert_true(r.limit == 1000.0);
    assert_true(r.within_ms == 0.0);
    r = ok("mail", "FETCH.p99.9", "250ms");
    assert_true(r.pct == 99.9);
    assert_true(r.limit == 250.0);
    r = ok("web", "Login.p100", "1500us");
    assert_true(r.pct == 100.0);
    assert_true(r.limit == 1.5);
    r = ok("web", "Login.p50", "2"); /* bare number: seconds */
    assert_true(r.limit == 2000.0);
    r = ok("web", "Login.p95", "0"); /* an impossible limit is still a limit */
    assert_true(r.limit == 0.0);
}

static void test_mean_and_within(void **state) {
    tb_qos_rule r;
    (void)state;
    r = ok("web", "Login.mean", "500ms");
    assert_int_equal(r.kind, TB_QOS_MEAN);
    assert_string_equal(r.op, "Login");
    assert_true(r.limit == 500.0);
    r = ok("web", "HomePage.within", "2s@99");
    assert_int_equal(r.kind, TB_QOS_WITHIN);
    assert_string_equal(r.op, "HomePage");
    assert_true(r.within_ms == 2000.0);
    assert_true(r.limit == 99.0);
    r = ok("web", "HomePage.within", "1.5s @ 99.5%");
    assert_true(r.within_ms == 1500.0);
    assert_true(r.limit == 99.5);
    r = ok("kv", "GET.within", "250us@100");
    assert_true(r.within_ms == 0.25);
    assert_true(r.limit == 100.0);
}

static void test_workload_rules(void **state) {
    tb_qos_rule r;
    (void)state;
    r = ok("web", "error_rate", "0.5");
    assert_int_equal(r.kind, TB_QOS_ERROR_RATE);
    assert_string_equal(r.op, "*");
    assert_true(r.limit == 0.5);
    r = ok("web", "error_rate", "0.5%");
    assert_true(r.limit == 0.5);
    r = ok("web", "error_rate", "0");
    assert_true(r.limit == 0.0);
    r = ok("web", "Login.error_rate", "1");
    assert_string_equal(r.op, "Login");
    r = ok("web", "mix_deviation", "2");
    assert_int_equal(r.kind, TB_QOS_MIX);
    assert_string_equal(r.op, "*");
    assert_true(r.limit == 2.0);
    r = ok("web", "mix_deviation", "2.5 pp");
    assert_true(r.limit == 2.5);
    assert_int_equal(r.min_ops_given, 0); /* the least sample is derived */
    r = ok("web", "HomePage.mix_deviation", "1pp");
    assert_string_equal(r.op, "HomePage");
    r = ok("web", "mix_deviation", "2@5000"); /* judged from 5000 mix ops */
    assert_true(r.limit == 2.0);
    assert_int_equal(r.min_ops_given, 1);
    assert_int_equal(r.min_ops, 5000);
    r = ok("web", "mix_deviation", "2.5 pp @ 0"); /* from the first op */
    assert_true(r.limit == 2.5);
    assert_int_equal(r.min_ops_given, 1);
    assert_int_equal(r.min_ops, 0);
    r = ok("oltp", "throughput", "95");
    assert_int_equal(r.kind, TB_QOS_THROUGHPUT);
    assert_string_equal(r.op, "*");
    assert_true(r.limit == 95.0);
    r = ok("oltp", "throughput", "95 %");
    assert_true(r.limit == 95.0);
    r = ok("oltp", "throughput", "110"); /* above the reference is allowed */
    assert_true(r.limit == 110.0);
}

static void test_bad_keys(void **state) {
    char wl40[41], op32[40];
    (void)state;
    bad("web", "HomePage.p999", "1s",
        "[qos.web] HomePage.p999: percentile must be p1..p100 (p999 is not p99.9: write p99.9)");
    bad("web", "HomePage.p0", "1s",
        "[qos.web] HomePage.p0: percentile must be p1..p100 (p999 is not p99.9: write p99.9)");
    bad("web", "HomePage.p9x", "1s",
        "[qos.web] HomePage.p9x: percentile must be p1..p100 (p999 is not p99.9: write p99.9)");
    bad("web", "HomePage.p.5", "1s",
        "[qos.web] HomePage.p.5: percentile must be p1..p100 (p999 is not p99.9: write p99.9)");
    bad("web", "HomePage.p99.", "1s",
        "[qos.web] HomePage.p99.: percentile must be p1..p100 (p999 is not p99.9: write p99.9)");
    bad("web", "HomePage.p-5", "1s",
        "[qos.web] HomePage.p-5: percentile must be p1..p100 (p999 is not p99.9: write p99.9)");
    bad("web", "p90", "1s", "[qos.web] p90: latency rules are written <Op>.pNN, <Op>.mean or <Op>.within");
    bad("web", "mean", "1s", "[qos.web] mean: latency rules are written <Op>.pNN, <Op>.mean or <Op>.within");
    bad("web", "within", "1s@99", "[qos.web] within: latency rules are written <Op>.pNN, <Op>.mean or <Op>.within");
    bad("web", "HomePage.p", "1s",
        "[qos.web] HomePage.p: unknown rule (use <Op>.pNN, <Op>.mean, <Op>.within, error_rate, "
        "mix_deviation or throughput)");
    bad("web", "latency", "1s",
        "[qos.web] latency: unknown rule (use <Op>.pNN, <Op>.mean, <Op>.within, error_rate, "
        "mix_deviation or throughput)");
    bad("web", "HomePage.", "1s",
        "[qos.web] HomePage.: unknown rule (use <Op>.pNN, <Op>.mean, <Op>.within, error_rate, "
        "mix_deviation or throughput)");
    bad("web", "", "1s",
        "[qos.web] : unknown rule (use <Op>.pNN, <Op>.mean, <Op>.within, error_rate, "
        "mix_deviation or throughput)");
    bad("web", ".p90", "1s", "[qos.web] .p90: bad op name (1..31 characters before the '.')");
    memset(op32, 'x', 32);
    strcpy(op32 + 32, ".p90");
    bad("web", op32, "1s",
        "[qos.web] xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.p90: bad op name (1..31 characters before the '.')");
    bad("oltp", "Order.throughput", "95",
        "[qos.oltp] Order.throughput: throughput is a rule of the whole workload: write throughput = PCT");
    bad("", "error_rate", "1", "[qos.]: workload name must be 1..31 characters");
    memset(wl40, 'w', 40);
    wl40[40] = '\0';
    bad(wl40, "error_rate", "1",
        "[qos.wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww]: workload name must be 1..31 characters");
}

static void test_bad_values(void **state) {
    (void)state;
    bad("web", "HomePage.p90", "10x", "[qos.web] HomePage.p90: '10x': unknown unit 'x' (use us, ms, s, m, h)");
    bad("web", "HomePage.p90", "-1s", "[qos.web] HomePage.p90: '-1s': duration must not be negative");
    bad("web", "HomePage.p90", "", "[qos.web] HomePage.p90: empty duration");
    bad("web", "HomePage.p90", NULL, "[qos.web] HomePage.p90: empty duration");
    bad("web", "Login.mean", "fast", "[qos.web] Login.mean: 'fast': not a duration (examples: 500ms, 30s, 5m)");
    bad("web", "HomePage.within", "2s",
        "[qos.web] HomePage.within: '2s': write DUR@PCT, e.g. 2s@99 (99% of ops within 2 s)");
    bad("web", "HomePage.within", "2s@0", "[qos.web] HomePage.within: '0': share within the limit must be in (0,100]");
    bad("web", "HomePage.within", "2s@101",
        "[qos.web] HomePage.within: '101': share within the limit must be in (0,100]");
    bad("web", "HomePage.within", "2s@", "[qos.web] HomePage.within: empty number");
    bad("web", "HomePage.within", "@99", "[qos.web] HomePage.within: empty duration");
    bad("web", "HomePage.within", "2x@99", "[qos.web] HomePage.within: '2x': unknown unit 'x' (use us, ms, s, m, h)");
    bad("web", "HomePage.within", "2s@99@1", "[qos.web] HomePage.within: '99@1': not a number");
    bad("web", "error_rate", "abc", "[qos.web] error_rate: 'abc': not a number");
    bad("web", "error_rate", "150", "[qos.web] error_rate: '150': error rate must be in [0,100]");
    bad("web", "error_rate", "-1", "[qos.web] error_rate: '-1': error rate must be in [0,100]");
    bad("web", "error_rate", "nan", "[qos.web] error_rate: 'nan': not a number");
    bad("web", "error_rate", "", "[qos.web] error_rate: empty number");
    bad("web", "error_rate", "%", "[qos.web] error_rate: '%': not a number");
    bad("web", "mix_deviation", "-2",
        "[qos.web] mix_deviation: '-2': mix deviation (percentage points) must be in [0,100]");
    bad("web", "mix_deviation", "2%", "[qos.web] mix_deviation: '2%': not a number");
    bad("web", "mix_deviation", "2@many",
        "[qos.web] mix_deviation: 'many': the least number of mix ops after '@' must be a whole number >= 0 "
        "(e.g. 2@5000)");
    bad("web", "mix_deviation", "2@-5",
        "[qos.web] mix_deviation: '-5': the least number of mix ops after '@' must be a whole number >= 0 "
        "(e.g. 2@5000)");
    bad("web", "mix_deviation", "2@",
        "[qos.web] mix_deviation: '': the least number of mix ops after '@' must be a whole number >= 0 "
        "(e.g. 2@5000)");
    bad("web", "mix_deviation", "x@5", "[qos.web] mix_deviation: 'x': not a number");
    bad("oltp", "throughput", "0", "[qos.oltp] throughput: '0': throughput (% of reference) must be greater than 0");
    bad("oltp", "throughput", "ninety", "[qos.oltp] throughput: 'ninety': not a number");
}

/* What the parser produces evaluates as its name says. */
static void test_parse_then_name(void **state) {
    char buf[96];
    tb_qos_rule r;
    (void)state;
    r = ok("web", "HomePage.within", "2s@99");
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "web.HomePage within 2000 ms >= 99%");
    r = ok("web", "AddEvent.p90", "4s");
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "web.AddEvent p90 <= 4000 ms");
    r = ok("web", "mix_deviation", "2");
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "web.* mix deviation <= 2 pp");
    r = ok("oltp", "throughput", "95");
    tb_qos_rule_name(&r, buf, sizeof buf);
    assert_string_equal(buf, "oltp.* throughput >= 95% of reference");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentile),     cmocka_unit_test(test_mean_and_within),
        cmocka_unit_test(test_workload_rules), cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_bad_values),     cmocka_unit_test(test_parse_then_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
