/*
 * test_energy.c: unit tests of energy per op and the efficiency curve
 * (scoring/energy.c), each against a value worked out by hand in the
 * comment beside it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "scoring/energy.h"

static void near(double got, double want, int line) {
    if (!(fabs(got - want) <= 1e-9 * fmax(1, fabs(want)))) {
        print_error("line %d: got %.12g, want %.12g\n", line, got, want);
        fail();
    }
}
#define assert_near(got, want) near((got), (want), __LINE__)

static void test_joules(void **state) {
    (void)state;
    assert_near(tb_energy_joules(250, 120), 30000); /* 250 W for 2 min */
    assert_near(tb_energy_joules(0, 10), 0);
    assert_true(isnan(tb_energy_joules(NAN, 10)));
    assert_true(isnan(tb_energy_joules(100, NAN)));
    assert_true(isnan(tb_energy_joules(-1, 10))); /* avg_watts -1: unknown */
    assert_true(isnan(tb_energy_joules(100, -1)));
}

static void test_per_op(void **state) {
    (void)state;
    assert_near(tb_energy_per_op(30000, 60000), 0.5);
    assert_near(tb_energy_per_op(1, 3), 1.0 / 3);
    assert_true(isnan(tb_energy_per_op(30000, 0)));
    assert_true(isnan(tb_energy_per_op(30000, -5)));
    assert_true(isnan(tb_energy_per_op(NAN, 10)));
}

static void test_split(void **state) {
    /* 30 kJ over two workloads, normalized 0.9 and 0.3 (sum 1.2): shares
     * 0.75 and 0.25, so 22500 J over 45000 ops = 0.5 J/op and 7500 J over
     * 1500 ops = 5 J/op */
    const double ops[] = {45000, 1500}, norm[] = {0.9, 0.3};
    const double ops3[] = {100, 0, 50}, norm3[] = {1.0, 1.0, NAN};
    const double zero[] = {0, -1};
    double share[3], jpo[3];
    (void)state;
    assert_int_equal(tb_energy_split(30000, 2, ops, norm, share, jpo), 0);
    assert_near(share[0], 0.75);
    assert_near(share[1], 0.25);
    assert_near(jpo[0], 0.5);
    assert_near(jpo[1], 5.0);
    /* NaN normalized counts as 0 (share 0, so 0 J/op); no ops: NaN J/op;
     * 1000 J, shares 0.5/0.5/0: 500 J / 100 ops = 5 J/op */
    assert_int_equal(tb_energy_split(1000, 3, ops3, norm3, share, jpo), 0);
    assert_near(share[0], 0.5);
    assert_near(share[1], 0.5);
    assert_near(share[2], 0.0);
    assert_near(jpo[0], 5.0);
    assert_true(isnan(jpo[1]));
    assert_near(jpo[2], 0.0);
    /* nothing to split by */
    assert_int_equal(tb_energy_split(1000, 2, ops, zero, share, jpo), -1);
    assert_true(isnan(share[0]) && isnan(share[1]) && isnan(jpo[0]) && isnan(jpo[1]));
    /* unknown energy: shares known, J/op not */
    assert_int_equal(tb_energy_split(NAN, 2, ops, norm, share, jpo), 0);
    assert_near(share[0], 0.75);
    assert_true(isnan(jpo[0]));
}

static void test_efficiency(void **state) {
    double np;
    (void)state;
    /* score 3 of a peak of 4 at 200 W: 0.75 of peak, 0.75 / 0.2 kW = 3.75 per kW */
    assert_near(tb_energy_efficiency(3, 4, 200, &np), 3.75);
    assert_near(np, 0.75);
    /* at the peak, 400 W: 1 / 0.4 = 2.5 */
    assert_near(tb_energy_efficiency(4, 4, 400, &np), 2.5);
    assert_near(np, 1.0);
    assert_true(isnan(tb_energy_efficiency(3, 0, 200, &np)) && isnan(np));
    assert_true(isnan(tb_energy_efficiency(3, 4, 0, &np)) && isnan(np));
    assert_true(isnan(tb_energy_efficiency(3, 4, -1, &np)) && isnan(np));
    assert_true(isnan(tb_energy_efficiency(NAN, 4, 200, &np)) && isnan(np));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_joules),
        cmocka_unit_test(test_per_op),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_efficiency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
