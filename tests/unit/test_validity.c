/*
 * test_validity.c: unit tests of the level validity rules (qos/validity.c),
 * each at its edge: one case just inside the limit and one just outside.
 * The expected verdicts come from the rules as the run rules state them
 * (SPECpower-style), written out here, not from the implementation's
 * constants:
 * - more than 1% of the power samples bad (missing, invalid, over range,
 *   implausible) invalidates: 1 in 100 is valid, 2 in 100 are not;
 * - more than 1% of the expected samples (one per meter per whole second)
 *   never arriving invalidates;
 * - a meter uncertainty above 1% invalidates (1.00% valid, 1.01% not);
 * - auto-ranging is a warning, never a reason;
 * - the load generator using >= 90% of its threads' CPU invalidates;
 * - a compliant run with a QoS rule not judged is invalid;
 * - a meter with no valid sample invalidates;
 * - each agent of a load generator made of several is judged alone:
 *   CPU-bound at 90% of its own threads, its clock offset known only to
 *   more than 50 ms invalidates and more than 5 ms warns, by name; a fault
 *   of the load generator (an agent lost) invalidates with its text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qos/validity.h"

/* The run rules, as stated (not the implementation's constants). */
#define RULE_MAX_BAD_SHARE   0.01 /* of the samples, and of the expected samples */
#define RULE_MAX_UNC_PCT     1.0
#define RULE_CPU_BOUND_SHARE 0.90
#define RULE_CLOCK_WARN_US   5000  /* an agent's clock offset bound over 5 ms warns */
#define RULE_CLOCK_MAX_US    50000 /* over 50 ms invalidates */

/* A valid level: `meters` meters over `steady_s` s, every expected sample
 * there and good, a precise meter, an idle load generator. */
static tb_validity_input base(int meters, double steady_s) {
    tb_validity_input in;
    memset(&in, 0, sizeof in);
    in.meters = meters;
    in.steady_s = steady_s;
    in.samples_total = (uint64_t)meters * (uint64_t)floor(steady_s);
    in.max_uncertainty_pct = 0.5;
    in.cpu_s = 0.1 * steady_s;
    in.threads = 2;
    return in;
}

static tb_validity judge(const tb_validity_input *in) {
    tb_validity v;
    int rc = tb_validity_judge(in, &v);
    assert_int_equal(rc, v.valid);
    return v;
}

static void expect_valid(const tb_validity_input *in) {
    tb_validity v = judge(in);
    if (!v.valid) print_error("unexpectedly invalid: %s\n", v.reason);
    assert_int_equal(v.valid, 1);
    assert_string_equal(v.reason, "");
}

/* Invalid with exactly this reason. */
static void expect_invalid(const tb_validity_input *in, const char *reason) {
    tb_validity v = judge(in);
    assert_int_equal(v.valid, 0);
    assert_string_equal(v.reason, reason);
}

static void test_all_good(void **state) {
    (void)state;
    tb_validity_input in = base(1, 100);
    tb_validity v = judge(&in);
    assert_int_equal(v.valid, 1);
    assert_string_equal(v.reason, "");
    assert_int_equal(v.n_warnings, 0);
}

static void test_no_valid_meter(void **state) {
    (void)state;
    tb_validity_input in = base(2, 100);
    expect_valid(&in);
    in.no_valid_meter = 1;
    expect_invalid(&in, "no valid power samples from a meter");
    /* no sample at all: no share of bad ones is computed from zero */
    in = base(1, 100);
    in.no_valid_meter = 1;
    in.samples_total = 0;
    expect_invalid(&in, "no valid power samples from a meter; only 0 of 100 expected power samples");
}

/* 1 bad sample in 100 is 1%: valid; 2 in 100 are 2%: invalid, and the
 * reason says how many of each kind. */
static void test_bad_samples_1_vs_2_in_100(void **state) {
    (void)state;
    tb_validity_input in = base(1, 100);
    in.invalid = 1;
    expect_valid(&in);
    in.invalid = 2;
    expect_invalid(&in, "2.0% of power samples missing or invalid (limit 1%; 2 invalid)");
    in.invalid = 0;
    in.missing = 2;
    expect_invalid(&in, "2.0% of power samples missing or invalid (limit 1%; 2 missing)");
    in.missing = 0;
    in.overrange = 2;
    expect_invalid(&in, "2.0% of power samples missing or invalid (limit 1%; 2 over-range)");
    in.overrange = 0;
    in.implausible = 2;
    expect_invalid(&in, "2.0% of power samples missing or invalid (limit 1%; 2 implausible)");
}

/* The kinds add up: 1 missing and 1 implausible are 2 bad samples. */
static void test_bad_kinds_add_up(void **state) {
    (void)state;
    tb_validity_input in = base(1, 100);
    in.missing = 1;
    expect_valid(&in);
    in.implausible = 1;
    expect_invalid(&in, "2.0% of power samples missing or invalid (limit 1%; 1 missing, 1 implausible)");
    in = base(1, 300);
    in.missing = 1;
    in.invalid = 1;
    in.overrange = 1;
    expect_valid(&in); /* 3 of 300: exactly 1% */
    in.implausible = 1;
    expect_invalid(
        &in, "1.3% of power samples missing or invalid (limit 1%; 1 missing, 1 invalid, 1 over-range, 1 implausible)");
}

/* Implausible samples (negative watts and the like) count, and are named
 * with their count. */
static void test_implausible_named(void **state) {
    (void)state;
    tb_validity_input in = base(1, 100);
    tb_validity v;
    in.implausible = 1;
    expect_valid(&in);
    in.implausible = 50; /* the WT310E alternating 200 W and -27.1 W */
    v = judge(&in);
    assert_int_equal(v.valid, 0);
    assert_non_null(strstr(v.reason, "50 implausible"));
    assert_non_null(strstr(v.reason, "50.0% of power samples"));
    in.implausible = 0;
    in.invalid = 50;
    v = judge(&in);
    assert_null(strstr(v.reason, "implausible"));
}

/* Over many totals: the largest bad count within 1% is valid, one more is
 * not. */
static void test_bad_share_edges(void **state) {
    (void)state;
    const struct {
        int meters;
        double steady_s;
    } cases[] = {{1, 100}, {2, 100}, {1, 150}, {1, 250}, {3, 333}, {1, 1000}, {4, 2400}, {1, 99}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tb_validity_input in = base(cases[k].meters, cases[k].steady_s);
        uint64_t total = in.samples_total, inside = 0;
        while ((double)(inside + 1) / (double)total <= RULE_MAX_BAD_SHARE)
            inside++;
        in.invalid = inside;
        expect_valid(&in);
        in.invalid = inside + 1;
        assert_int_equal(judge(&in).valid, 0);
        /* the same count of implausible samples decides the same way */
        in.invalid = 0;
        in.implausible = inside;
        expect_valid(&in);
        in.implausible = inside + 1;
        assert_int_equal(judge(&in).valid, 0);
    }
}

/* One sample per meter per whole second is expected; losing 1% of them is
 * allowed, more is not. */
static void test_expected_count_edges(void **state) {
    (void)state;
    const struct {
        int meters;
        double steady_s;
        uint64_t expected; /* worked out by hand */
    } cases[] = {{1, 100, 100}, {1, 100.999, 100}, {2, 100, 200}, {1, 50, 50}, {1, 150, 150}, {3, 400, 1200}};
    char want[128];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tb_validity_input in = base(cases[k].meters, cases[k].steady_s);
        uint64_t e = cases[k].expected, short_ok = 0;
        while ((double)(short_ok + 1) / (double)e <= RULE_MAX_BAD_SHARE)
            short_ok++;
        in.samples_total = e - short_ok;
        expect_valid(&in);
        in.samples_total = e - short_ok - 1;
        snprintf(want, sizeof want, "only %llu of %llu expected power samples", (unsigned long long)(e - short_ok - 1),
                 (unsigned long long)e);
        expect_invalid(&in, want);
        in.samples_total = e + 5; /* more than expected is fine */
        expect_valid(&in);
    }
    /* by hand: 99 of 100 valid, 98 of 100 not; 50 of 50 only */
    {
        tb_validity_input in = base(1, 100);
        in.samples_total = 99;
        expect_valid(&in);
        in.samples_total = 98;
        expect_invalid(&in, "only 98 of 100 expected power samples");
        in = base(1, 50);
        in.samples_total = 49;
        expect_invalid(&in, "only 49 of 50 expected power samples");
    }
}

static void test_uncertainty_edge(void **state) {
    (void)state;
    tb_validity_input in = base(1, 100);
    in.max_uncertainty_pct = RULE_MAX_UNC_PCT; /* 1.00%: at the limit, not above */
    expect_valid(&in);
    in.max_uncertainty_pct = 1.01;
    expect_invalid(&in, "meter uncertainty up to 1.01% (limit 1%)");
    in.max_uncertainty_pct = NAN; /* not reported (PTD) */
    expect_valid(&in);
}

/* Auto-ranging is a warning: the level stays valid. */
static void test_autorange_warns(void **state) {
    (void)state;
    tb_validity_input in = base(1, 100);
    tb_validity v = judge(&in);
    assert_int_equal(v.n_warnings, 0);
    in.autorange = 1;
    v = judge(&in);
    assert_int_equal(v.valid, 1);
    assert_string_equal(v.reason, "");
    assert_int_equal(v.n_warnings, 1);
    assert_string_equal(v.warnings[0], "1 power sample taken while the meter was auto-ranging");
    in.autorange = 100;
    v = judge(&in);
    assert_int_equal(v.valid, 1);
    assert_string_equal(v.warnings[0], "100 power samples taken while the meter was auto-ranging");
}

static void test_compliant_unjudged(void **state) {
    (void)state;
    tb_validity_input in = base(1, 100);
    in.compliant = 1;
    expect_valid(&in);
    in.qos_not_judged = 1;
    expect_invalid(&in, "1 QoS rule not judged (too few ops); a compliant run must judge every rule");
    in.qos_not_judged = 3;
    expect_invalid(&in, "3 QoS rules not judged (too few ops); a compliant run must judge every rule");
    in.compliant = 0; /* a short run may leave rules unjudged */
    expect_valid(&in);
}

/* A lab meter's calibration in doubt: a warning, invalid when compliant. */
static void test_calibration(void **state) {
    tb_validity v;
    (void)state;
    tb_validity_input in = base(1, 100);
    snprintf(in.calibration, sizeof in.calibration,
             "meter 'wt310://h:1': calibrated 2025-01-01, 701 days ago (over 365)");
    v = judge(&in);
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.n_warnings, 1);
    assert_string_equal(v.warnings[0], "meter 'wt310://h:1': calibrated 2025-01-01, 701 days ago (over 365) (over a "
                                       "year, or none)");
    in.compliant = 1;
    expect_invalid(&in, "meter 'wt310://h:1': calibrated 2025-01-01, 701 days ago (over 365) (a compliant run needs a "
                        "calibration within a year)");
    in.calibration[0] = '\0';
    expect_valid(&in);
}

/* Inlet temperature: a minimum under 20 C invalidates a compliant level
 * and warns otherwise; exactly 20 C passes; no source warns when compliant. */
static void test_temperature(void **state) {
    tb_validity v;
    (void)state;
    tb_validity_input in = base(1, 100);
    v = judge(&in); /* no source, not compliant: nothing said */
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.n_warnings, 0);
    in.compliant = 1;
    v = judge(&in);
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.n_warnings, 1);
    assert_string_equal(v.warnings[0],
                        "inlet temperature not measured (a compliant run should name a --temperature source)");
    in.temp_source = 1;
    in.temp_n = 100;
    in.temp_min_c = 20.0;
    v = judge(&in);
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.n_warnings, 0);
    in.temp_min_c = 18.0;
    expect_invalid(&in, "inlet temperature down to 18.0 C (minimum 20 C)");
    in.temp_min_c = 19.96; /* under 20 even though it prints as 20.0 */
    v = judge(&in);
    assert_int_equal(v.valid, 0);
    in.compliant = 0;
    in.temp_min_c = 18.0;
    v = judge(&in);
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.n_warnings, 1);
    assert_string_equal(v.warnings[0], "inlet temperature down to 18.0 C (minimum 20 C)");
    in.temp_n = 0; /* a source that gave no reading in the window */
    v = judge(&in);
    assert_int_equal(v.valid, 1);
    assert_string_equal(v.warnings[0], "no inlet temperature reading in the steady window");
}

/* CPU-bound at >= 90% of threads x steady seconds. */
static void test_cpu_bound_edge(void **state) {
    (void)state;
    const struct {
        int threads;
        double steady_s;
    } cases[] = {{2, 10}, {1, 100}, {4, 30}, {8, 600}};
    char want[96];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tb_validity_input in = base(1, cases[k].steady_s);
        double capacity = cases[k].threads * cases[k].steady_s, edge = capacity * RULE_CPU_BOUND_SHARE;
        in.threads = cases[k].threads;
        in.cpu_s = edge - 0.01;
        assert_true(in.cpu_s / capacity < RULE_CPU_BOUND_SHARE);
        expect_valid(&in);
        in.cpu_s = edge;
        assert_true(in.cpu_s / capacity >= RULE_CPU_BOUND_SHARE);
        snprintf(want, sizeof want, "load generator CPU-bound (90%% of %d threads)", cases[k].threads);
        expect_invalid(&in, want);
    }
    {
        /* by hand: 2 threads over 10 s can use 20 CPU-s; 18 is 90% */
        tb_validity_input in = base(1, 10);
        in.threads = 2;
        in.cpu_s = 17.99;
        expect_valid(&in);
        in.cpu_s = 18.0;
        expect_invalid(&in, "load generator CPU-bound (90% of 2 threads)");
        in.cpu_s = 20.0;
        expect_invalid(&in, "load generator CPU-bound (100% of 2 threads)");
    }
}

/* Agents: each alone, by name; the whole may be far from CPU-bound while one agent is. */
static void test_agents(void **state) {
    (void)state;
    tb_validity_input in = base(1, 10);
    tb_validity v;
    in.threads = 4; /* 2 agents x 2 threads: 40 CPU-s of capacity, 36 is 90% */
    in.cpu_s = 18.0;
    in.n_parts = 2;
    in.parts[0] = (tb_validity_part){
        .name = "a1", .cpu_s = 17.99, .threads = 2, .clock_known = 1, .clock_bound_us = RULE_CLOCK_WARN_US};
    in.parts[1] =
        (tb_validity_part){.name = "a2", .cpu_s = 0.01, .threads = 2, .clock_known = 1, .clock_bound_us = 100};
    expect_valid(&in);
    assert_int_equal(judge(&in).n_warnings, 0);
    in.parts[0].cpu_s = 18.0; /* 90% of a1's own 2 threads x 10 s */
    expect_invalid(&in, "agent a1 CPU-bound (90% of 2 threads)");
    in.parts[0].cpu_s = 1;
    in.parts[1].clock_bound_us = RULE_CLOCK_WARN_US + 1;
    v = judge(&in);
    assert_true(v.valid);
    assert_int_equal(v.n_warnings, 1);
    assert_non_null(strstr(v.warnings[0], "agent a2 clock offset known only to +/- 5.0 ms"));
    in.parts[1].clock_bound_us = RULE_CLOCK_MAX_US;
    expect_valid(&in);
    in.parts[1].clock_bound_us = RULE_CLOCK_MAX_US + 1;
    expect_invalid(&in, "agent a2 clock offset known only to +/- 50.0 ms (limit 50 ms)");
    in.parts[1].clock_known = 0; /* not measured: no clock rule */
    expect_valid(&in);
    in.lg_fault = "agent a2 lost at 2026-12-02T03:00:00Z (no heartbeat for 3 s)";
    expect_invalid(&in, "agent a2 lost at 2026-12-02T03:00:00Z (no heartbeat for 3 s)");
    in.lg_fault = "";
    expect_valid(&in);
}

/* Every reason at once, in order, "; "-separated; warnings do not leak into
 * the reason. */
static void test_all_reasons(void **state) {
    (void)state;
    tb_validity_input in = base(1, 100);
    in.no_valid_meter = 1;
    in.samples_total = 90;
    in.missing = 90;
    in.max_uncertainty_pct = 2.5;
    in.autorange = 3;
    in.compliant = 1;
    in.qos_not_judged = 2;
    in.cpu_s = 200;
    in.temp_source = 1;
    in.temp_n = 100;
    in.temp_min_c = 18.0;
    expect_invalid(&in, "no valid power samples from a meter; 100.0% of power samples missing or invalid (limit 1%; 90 "
                        "missing); only 90 of 100 expected power samples; meter uncertainty up to 2.50% (limit 1%); "
                        "inlet temperature down to 18.0 C (minimum 20 C); 2 QoS rules not judged (too few ops); a "
                        "compliant run must judge every rule; load generator "
                        "CPU-bound (100% of 2 threads)");
    assert_int_equal(judge(&in).n_warnings, 1);
}

/* A sample flagged several ways counts once, in its most specific kind
 * (implausible, over-range, missing, then invalid); an unreported (NaN)
 * uncertainty is no uncertainty; auto-ranging is counted besides. */
static void test_sample_kinds(void **state) {
    (void)state;
    tb_validity_input in;
    const tb_validity_sample all = {1, 1, 1, 1, 1, 0.4}, over_missing = {1, 1, 1, 0, 0, NAN},
                             missing = {1, 1, 0, 0, 0, 0.2}, invalid = {1, 0, 0, 0, 0, 1.5},
                             good = {0, 0, 0, 0, 1, 0.3};
    memset(&in, 0, sizeof in);
    tb_validity_add_sample(&in, &all);
    tb_validity_add_sample(&in, &over_missing);
    tb_validity_add_sample(&in, &missing);
    tb_validity_add_sample(&in, &invalid);
    tb_validity_add_sample(&in, &good);
    assert_int_equal(in.samples_total, 5);
    assert_int_equal(in.implausible, 1);
    assert_int_equal(in.overrange, 1);
    assert_int_equal(in.missing, 1);
    assert_int_equal(in.invalid, 1);
    assert_int_equal(in.autorange, 2);
    assert_true(in.max_uncertainty_pct == 1.5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_good),
        cmocka_unit_test(test_no_valid_meter),
        cmocka_unit_test(test_bad_samples_1_vs_2_in_100),
        cmocka_unit_test(test_bad_kinds_add_up),
        cmocka_unit_test(test_implausible_named),
        cmocka_unit_test(test_bad_share_edges),
        cmocka_unit_test(test_expected_count_edges),
        cmocka_unit_test(test_uncertainty_edge),
        cmocka_unit_test(test_autorange_warns),
        cmocka_unit_test(test_compliant_unjudged),
        cmocka_unit_test(test_calibration),
        cmocka_unit_test(test_cpu_bound_edge),
        cmocka_unit_test(test_all_reasons),
        cmocka_unit_test(test_agents),
        cmocka_unit_test(test_sample_kinds),
        cmocka_unit_test(test_temperature),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
