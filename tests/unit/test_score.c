/*
 * test_score.c: unit tests of the scoring arithmetic (scoring/score.c):
 * normalization, geometric mean, sums, trapezoid mean power with invalid
 * points, PPKW and rates, overall efficiency with active idle (SPECpower),
 * the median phase (VMmark), repeat statistics and the VMmark 3 80/20
 * weighting, each against a value computed by hand.
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
        {9 * S, 5000.0, 1}, {10 * S, 100.0, 1}, {11 * S, 300.0, 0},  {12 * S, 200.0, 1},
        {13 * S, 200.0, 1}, {14 * S, 400.0, 1}, {15 * S, 1000.0, 1},
    };
    tb_power_point nan_pt[] = {{10 * S, 100.0, 1}, {11 * S, NAN, 1}, {12 * S, 300.0, 1}};
    (void)state;
    assert_near(tb_score_mean_power_w(pts, 7, 10 * S, 15 * S), 200.0);
    /* had the 300 W point been valid, it would count: */
    {
        tb_power_point all[7];
        int i;
        for (i = 0; i < 7; i++)
            all[i] = pts[i];
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
    assert_near(tb_score_mean_power_w(one, 1, 0, 10 * S), 321.0);    /* single point */
    assert_near(tb_score_mean_power_w(one, 1, 6 * S, 10 * S), -1.0); /* outside */
    assert_near(tb_score_mean_power_w(one, 1, 0, 5 * S), -1.0);      /* t1 exclusive */
    assert_near(tb_score_mean_power_w(one, 1, 5 * S, 6 * S), 321.0); /* t0 inclusive */
    assert_near(tb_score_mean_power_w(none_valid, 2, 0, 10 * S), -1.0);
    assert_near(tb_score_mean_power_w(NULL, 0, 0, 10 * S), -1.0);
    assert_near(tb_score_mean_power_w(same_t, 2, 0, 10 * S), 150.0);
    /* the point going back in time is skipped: (100+300)/2 */
    assert_near(tb_score_mean_power_w(back, 3, 0, 10 * S), 200.0);
}

static void test_ppkw_and_rate(void **state) {
    (void)state;
    assert_near(tb_score_ppkw(2.0, 250.0), 8.0);  /* 2 / 0.25 kW */
    assert_near(tb_score_ppkw(3.3, 1100.0), 3.0); /* 3.3 / 1.1 kW */
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

/*
 * SPECpower-style overall efficiency. Levels 1..3: scores 1.0, 2.0, 2.5 at
 * 200, 250, 300 W; active idle 250 W (score 0). Sum score 5.5, sum power
 * 0.2 + 0.25 + 0.3 + 0.25 = 1.0 kW -> 5.5 per kW. Without idle: 5.5 / 0.75.
 */
static void test_overall_efficiency(void **state) {
    const double scores[] = {1.0, 2.0, 2.5};
    const double watts[] = {200.0, 250.0, 300.0};
    tb_score_efficiency d;
    (void)state;
    assert_near(tb_score_overall_efficiency(scores, watts, 3, 250.0, &d), 5.5);
    assert_near(d.value, 5.5);
    assert_near(d.score_sum, 5.5);
    assert_near(d.kw_sum, 1.0);
    assert_int_equal(d.levels_used, 3);
    assert_int_equal(d.levels_skipped, 0);
    assert_int_equal(d.idle_included, 1);
    /* idle lowers the figure: it is power without score */
    assert_near(tb_score_overall_efficiency(scores, watts, 3, 0.0, &d), 5.5 / 0.75);
    assert_int_equal(d.idle_included, 0);
    assert_near(tb_score_overall_efficiency(scores, watts, 3, NAN, &d), 5.5 / 0.75);
    assert_int_equal(d.idle_included, 0);
    assert_near(tb_score_overall_efficiency(scores, watts, 3, -1.0, NULL), 5.5 / 0.75);
    /* not the mean of the levels' PPKW (5, 8, 8.33...) */
    assert_true(fabs(tb_score_overall_efficiency(scores, watts, 3, 0.0, NULL) - (5.0 + 8.0 + 2.5 / 0.3) / 3) > 0.1);
}

static void test_overall_efficiency_missing(void **state) {
    /* level 4 has no power (-1 from tb_score_mean_power_w), level 5 NaN watts,
     * level 6 no score: all left out of both sums */
    const double scores[] = {1.0, 2.0, 2.5, 3.0, 3.1, NAN};
    const double watts[] = {200.0, 250.0, 300.0, -1.0, NAN, 320.0};
    const double none_w[] = {-1.0, 0.0};
    tb_score_efficiency d;
    (void)state;
    assert_near(tb_score_overall_efficiency(scores, watts, 6, 250.0, &d), 5.5);
    assert_int_equal(d.levels_used, 3);
    assert_int_equal(d.levels_skipped, 3);
    /* nothing usable: 0 and levels_used 0, idle or not */
    assert_true(tb_score_overall_efficiency(scores, none_w, 2, 250.0, &d) == 0.0);
    assert_int_equal(d.levels_used, 0);
    assert_int_equal(d.levels_skipped, 2);
    assert_int_equal(d.idle_included, 1);
    assert_true(tb_score_overall_efficiency(NULL, NULL, 0, 250.0, &d) == 0.0);
    assert_int_equal(d.levels_used, 0);
}

static void test_median_phase(void **state) {
    const double three[] = {3.1, 2.9, 3.0};
    const double four[] = {5.0, 1.0, 3.0, 4.0};
    const double two[] = {4.0, 2.0};
    const double ties[] = {2.0, 2.0, 2.0};
    const double ties2[] = {1.0, 3.0, 3.0, 5.0, 3.0};
    const double with_nan[] = {NAN, 1.0, 2.0};
    const double one[] = {7.5};
    (void)state;
    assert_int_equal(tb_score_median_index(three, 3), 2); /* 2.9 3.0 3.1 */
    assert_near(tb_score_median(three, 3), 3.0);
    assert_int_equal(tb_score_median_index(four, 4), 2); /* 1 3 4 5: lower middle 3, not 3.5 */
    assert_near(tb_score_median(four, 4), 3.0);
    assert_int_equal(tb_score_median_index(two, 2), 1); /* lower of two */
    assert_near(tb_score_median(two, 2), 2.0);
    assert_int_equal(tb_score_median_index(ties, 3), 1);     /* ranks 0,1,2 in order */
    assert_int_equal(tb_score_median_index(ties2, 5), 2);    /* 1 3(#1) 3(#2) 3(#4) 5 */
    assert_int_equal(tb_score_median_index(with_nan, 3), 1); /* NaN ranks lowest */
    assert_near(tb_score_median(with_nan, 3), 1.0);
    assert_int_equal(tb_score_median_index(one, 1), 0);
    assert_int_equal(tb_score_median_index(one, 0), -1);
    assert_int_equal(tb_score_median_index(NULL, 0), -1);
    assert_true(tb_score_median(NULL, 0) == 0.0);
}

/* 10, 12, 11, 13: mean 11.5, deviations -1.5 .5 -.5 1.5, sum of squares 5,
 * sample sd sqrt(5 / 3). */
static void test_repeat_stats(void **state) {
    const double v[] = {10.0, 12.0, NAN, 11.0, 13.0, INFINITY};
    const double one[] = {4.2};
    const double none[] = {NAN};
    tb_score_stats st;
    (void)state;
    tb_score_repeat_stats(v, 6, &st);
    assert_int_equal(st.n, 4);
    assert_near(st.mean, 11.5);
    assert_near(st.min, 10.0);
    assert_near(st.max, 13.0);
    assert_near(st.stddev, sqrt(5.0 / 3.0));
    tb_score_repeat_stats(one, 1, &st);
    assert_int_equal(st.n, 1);
    assert_near(st.mean, 4.2);
    assert_near(st.min, 4.2);
    assert_near(st.max, 4.2);
    assert_true(st.stddev == 0.0);
    tb_score_repeat_stats(none, 1, &st);
    assert_int_equal(st.n, 0);
    assert_true(st.mean == 0.0 && st.min == 0.0 && st.max == 0.0 && st.stddev == 0.0);
    tb_score_repeat_stats(NULL, 0, &st);
    assert_int_equal(st.n, 0);
    /* close large values: no cancellation */
    {
        const double big[] = {1e9 + 1.0, 1e9 + 2.0, 1e9 + 3.0};
        tb_score_repeat_stats(big, 3, &st);
        assert_near(st.stddev, 1.0);
    }
}

/* VMmark 3 published result: applications 11.18, infrastructure 1.07 ->
 * 0.8 * 11.18 + 0.2 * 1.07 = 8.944 + 0.214 = 9.158, published as 9.16. A
 * weighted geometric mean (11.18^0.8 * 1.07^0.2 = 6.99) would not match. */
static void test_vmmark3_weighting(void **state) {
    double f;
    (void)state;
    f = tb_score_weighted_final(11.18, 1.07);
    assert_near(f, 9.158);
    assert_near(round(f * 100.0) / 100.0, 9.16);
    assert_true(fabs(f - pow(11.18, 0.8) * pow(1.07, 0.2)) > 2.0);
    assert_near(tb_score_weighted_final(1.0, 1.0), 1.0);
    assert_near(tb_score_weighted_final(10.0, 0.0), 8.0);
    /* infrastructure score: geometric mean of normalized ops/hour, e.g.
     * 28/24, 24/24, 20/20, 6.5/6.5 -> (7/6)^(1/4) */
    {
        const double infra[] = {tb_score_normalize(28, 24), tb_score_normalize(24, 24), tb_score_normalize(20, 20),
                                tb_score_normalize(6.5, 6.5)};
        assert_near(tb_score_geomean(infra, 4), pow(7.0 / 6.0, 0.25));
    }
}

/* Two levels with three phases each: the median phase's score and watts go
 * into the overall efficiency together. Level 1 phases (score, W): (0.99,
 * 201) (1.01, 199) (1.00, 200) -> phase 3; level 2: (1.90, 260) (1.80, 250)
 * (2.00, 270) -> phase 1. Idle 140 W: (1.00 + 1.90) / (0.2 + 0.26 + 0.14). */
static void test_phases_into_efficiency(void **state) {
    const double s1[] = {0.99, 1.01, 1.00}, w1[] = {201, 199, 200};
    const double s2[] = {1.90, 1.80, 2.00}, w2[] = {260, 250, 270};
    double scores[2], watts[2];
    int m;
    (void)state;
    m = tb_score_median_index(s1, 3);
    assert_int_equal(m, 2);
    scores[0] = s1[m];
    watts[0] = w1[m];
    m = tb_score_median_index(s2, 3);
    assert_int_equal(m, 0);
    scores[1] = s2[m];
    watts[1] = w2[m];
    assert_near(tb_score_ppkw(scores[1], watts[1]), 1.9 / 0.26);
    assert_near(tb_score_overall_efficiency(scores, watts, 2, 140.0, NULL), 2.9 / 0.6);
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
        cmocka_unit_test(test_overall_efficiency),
        cmocka_unit_test(test_overall_efficiency_missing),
        cmocka_unit_test(test_median_phase),
        cmocka_unit_test(test_repeat_stats),
        cmocka_unit_test(test_vmmark3_weighting),
        cmocka_unit_test(test_phases_into_efficiency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
