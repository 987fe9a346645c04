/*
 * test_score.c: unit tests of the scoring arithmetic (scoring/score.c):
 * normalization, geometric mean, sums, trapezoid mean power with invalid
 * points, PPKW and rates, each against a value computed by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "scoring/score.h"

#define S 1000000ull /* µs per second */

static void near(double got, double want, double eps, int line) {
    if (!(fabs(got - want) <= eps)) {
        print_error("line %d: got %.12g, want %.12g\n", line, got, want);
        fail();
    }
}
#define assert_near(got, want) near((got), (want), 1e-9, __LINE__)

static void test_normalize(void **state) {
    (void)state;
    assert_near(tb_score_normalize(50, 100), 0.5);
    assert_near(tb_score_normalize(120, 100), 1.2);
    assert_near(tb_score_normalize(0, 100), 0.0);
    assert_near(tb_score_normalize(5, 0), 0.0);
    assert_near(tb_score_normalize(5, -1), 0.0);
}

static void test_geomean(void **state) {
    const double half_two[] = {0.5, 2.0};
    const double two_eight[] = {2.0, 8.0};
    const double three[] = {1.0, 2.0, 4.0};
    const double one[] = {0.7};
    const double with_zero[] = {1.0, 0.0, 3.0};
    const double with_neg[] = {1.0, -2.0};
    const double many[] = {1e300, 1e300, 1e300}; /* product would overflow */
    (void)state;
    assert_near(tb_score_geomean(half_two, 2), 1.0);
    assert_near(tb_score_geomean(two_eight, 2), 4.0);
    assert_near(tb_score_geomean(three, 3), 2.0);
    assert_near(tb_score_geomean(one, 1), 0.7);
    assert_true(tb_score_geomean(with_zero, 3) == 0.0);
    assert_true(tb_score_geomean(with_neg, 2) == 0.0);
    assert_true(tb_score_geomean(half_two, 0) == 0.0);
    assert_true(tb_score_geomean(NULL, 0) == 0.0);
    near(tb_score_geomean(many, 3), 1e300, 1e288, __LINE__);
}

static void test_sum(void **state) {
    const double v[] = {1.0, 0.95, 0.5};
    (void)state;
    assert_near(tb_score_sum(v, 3), 2.45);
    assert_near(tb_score_sum(v, 0), 0.0);
    assert_near(tb_score_sum(NULL, 0), 0.0);
}

/*
 * Window [10 s, 15 s). Points at 9 s (outside), 10 s 100 W, 11 s 300 W
 * (invalid: skipped, bridged), 12 s 200 W, 13 s 200 W, 14 s 400 W, 15 s
 * 1000 W (t1 is exclusive). Energy: (100+200)/2*2 + (200+200)/2*1 +
 * (200+400)/2*1 = 300 + 200 + 300 = 800 J over 4 s = 200 W.
 */
static void test_mean_power_trapezoid(void **state) {
    const tb_power_point pts[] = {
        {9 * S, 5000.0, 1},  {10 * S, 100.0, 1}, {11 * S, 300.0, 0}, {12 * S, 200.0, 1},
        {13 * S, 200.0, 1},  {14 * S, 400.0, 1}, {15 * S, 1000.0, 1},
    };
    tb_power_point nan_pt[] = {{10 * S, 100.0, 1}, {11 * S, NAN, 1}, {12 * S, 300.0, 1}};
    (void)state;
    assert_near(tb_score_mean_power_w(pts, 7, 10 * S, 15 * S), 200.0);
    /* had the 300 W point been valid, it would count: */
    {
        tb_power_point all[7];
        int i;
        for (i = 0; i < 7; i++) all[i] = pts[i];
        all[2].valid = 1;
        /* (100+300)/2 + (300+200)/2 + 200 + 300 = 200 + 250 + 500 = 950 J / 4 s */
        assert_near(tb_score_mean_power_w(all, 7, 10 * S, 15 * S), 237.5);
    }
    /* a NaN reading flagged valid is skipped as well: (100+300)/2*2 / 2 */
    assert_near(tb_score_mean_power_w(nan_pt, 3, 0, 100 * S), 200.0);
    /* constant power gives itself; sub-second spacing */
    {
        const tb_power_point c[] = {{0, 250.0, 1}, {500000, 250.0, 1}, {1500000, 250.0, 1}};
        assert_near(tb_score_mean_power_w(c, 3, 0, 2 * S), 250.0);
    }
    /* uneven spacing: 100 W for 1 s ramping to 200 W over 3 s:
     * (100+100)/2*1 + (100+200)/2*3 = 100 + 450 = 550 J / 4 s */
    {
        const tb_power_point u[] = {{0, 100.0, 1}, {1 * S, 100.0, 1}, {4 * S, 200.0, 1}};
        assert_near(tb_score_mean_power_w(u, 3, 0, 5 * S), 137.5);
    }
}

static void test_mean_power_edges(void **state) {
    const tb_power_point one[] = {{5 * S, 321.0, 1}};
    const tb_power_point none_valid[] = {{1 * S, 100.0, 0}, {2 * S, 200.0, 0}};
    const tb_power_point same_t[] = {{3 * S, 100.0, 1}, {3 * S, 200.0, 1}};
    const tb_power_point back[] = {{1 * S, 100.0, 1}, {3 * S, 300.0, 1}, {2 * S, 9999.0, 1}};
    (void)state;
    assert_near(tb_score_mean_power_w(one, 1, 0, 10 * S), 321.0); /* single point */
    assert_near(tb_score_mean_power_w(one, 1, 6 * S, 10 * S), -1.0); /* outside */
    assert_near(tb_score_mean_power_w(one, 1, 0, 5 * S), -1.0);       /* t1 exclusive */
    assert_near(tb_score_mean_power_w(one, 1, 5 * S, 6 * S), 321.0);  /* t0 inclusive */
    assert_near(tb_score_mean_power_w(none_valid, 2, 0, 10 * S), -1.0);
    assert_near(tb_score_mean_power_w(NULL, 0, 0, 10 * S), -1.0);
    assert_near(tb_score_mean_power_w(same_t, 2, 0, 10 * S), 150.0);
    /* the point going back in time is skipped: (100+300)/2 */
    assert_near(tb_score_mean_power_w(back, 3, 0, 10 * S), 200.0);
}

static void test_ppkw_and_rate(void **state) {
    (void)state;
    assert_near(tb_score_ppkw(2.0, 250.0), 8.0);   /* 2 / 0.25 kW */
    assert_near(tb_score_ppkw(3.3, 1100.0), 3.0);  /* 3.3 / 1.1 kW */
    assert_true(tb_score_ppkw(1.0, 0.0) == 0.0);
    assert_true(tb_score_ppkw(1.0, -5.0) == 0.0);
    assert_near(tb_score_rate_per_s(300, 60 * S), 5.0);
    assert_near(tb_score_rate_per_s(1, 500000), 2.0);
    assert_true(tb_score_rate_per_s(10, 0) == 0.0);
}

/* The whole chain for one level of two tiles, by hand:
 * tile 1 normalized {1.0, 0.9, 1.1} -> geomean 0.996655..., tile 2 {0.5, 2, 1}
 * -> 1.0; score 1.996655...; at 400 W -> PPKW 4.99163... */
static void test_level_chain(void **state) {
    double t1[3], t2[3], tiles[2];
    (void)state;
    t1[0] = tb_score_normalize(100, 100);
    t1[1] = tb_score_normalize(90, 100);
    t1[2] = tb_score_normalize(110, 100);
    t2[0] = 0.5;
    t2[1] = 2.0;
    t2[2] = 1.0;
    tiles[0] = tb_score_geomean(t1, 3);
    tiles[1] = tb_score_geomean(t2, 3);
    assert_near(tiles[0], cbrt(0.99));
    assert_near(tiles[1], 1.0);
    assert_near(tb_score_sum(tiles, 2), cbrt(0.99) + 1.0);
    assert_near(tb_score_ppkw(tb_score_sum(tiles, 2), 400.0), (cbrt(0.99) + 1.0) / 0.4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_geomean),
        cmocka_unit_test(test_sum),
        cmocka_unit_test(test_mean_power_trapezoid),
        cmocka_unit_test(test_mean_power_edges),
        cmocka_unit_test(test_ppkw_and_rate),
        cmocka_unit_test(test_level_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
