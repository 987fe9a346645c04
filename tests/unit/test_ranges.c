/*
 * test_ranges.c: unit tests of ranges.h: the ranging pass's choice of the
 * smallest range that holds the peak with headroom, checked against ranges
 * picked by hand from the WT310's published list.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "powermeter/ranges.h"

static void test_wt310_lists(void **state) {
    tb_range_list r;
    (void)state;
    tb_ranges_for("WT310", 3, &r);
    assert_int_equal(r.n_volts, 6);
    assert_int_equal(r.n_amps, 6);
    assert_true(r.volts[0] == 15 && r.volts[5] == 600);
    assert_true(r.amps[0] == 0.5 && r.amps[5] == 20);
    tb_ranges_for("WT310", 6, &r); /* crest factor 6: halved */
    assert_true(r.volts[0] == 7.5 && r.volts[5] == 300);
    assert_true(r.amps[0] == 0.25 && r.amps[5] == 10);
}

/* By hand: 230 V x 1.25 = 287.5 V -> 300 V; 0.3 A x 1.25 = 0.375 -> 0.5 A;
 * 0.9 A x 1.25 = 1.125 -> 2 A; 0.8 A x 1.25 = 1.0 exactly -> 1 A. */
static void test_pick_by_hand(void **state) {
    tb_range_list r;
    (void)state;
    tb_ranges_for("WT310", 3, &r);
    assert_true(tb_range_pick(r.volts, r.n_volts, 230, TB_RANGING_HEADROOM) == 300);
    assert_true(tb_range_pick(r.volts, r.n_volts, 120, TB_RANGING_HEADROOM) == 150);
    assert_true(tb_range_pick(r.amps, r.n_amps, 0.3, TB_RANGING_HEADROOM) == 0.5);
    assert_true(tb_range_pick(r.amps, r.n_amps, 0.9, TB_RANGING_HEADROOM) == 2);
    assert_true(tb_range_pick(r.amps, r.n_amps, 0.8, TB_RANGING_HEADROOM) == 1);
    assert_true(tb_range_pick(r.amps, r.n_amps, 0, TB_RANGING_HEADROOM) == 0.5);
}

/* Nothing holds it, or no peak to go by: -1. */
static void test_pick_refused(void **state) {
    tb_range_list r;
    (void)state;
    tb_ranges_for("WT310", 3, &r);
    assert_true(tb_range_pick(r.amps, r.n_amps, 16.1, TB_RANGING_HEADROOM) == -1); /* 20.1 A > 20 A */
    assert_true(tb_range_pick(r.volts, r.n_volts, 500, TB_RANGING_HEADROOM) == -1);
    assert_true(tb_range_pick(r.amps, r.n_amps, NAN, TB_RANGING_HEADROOM) == -1);
    assert_true(tb_range_pick(r.amps, r.n_amps, -1, TB_RANGING_HEADROOM) == -1);
    assert_true(tb_range_pick(r.amps, r.n_amps, 1, 0.5) == -1); /* headroom below 1 */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wt310_lists),
        cmocka_unit_test(test_pick_by_hand),
        cmocka_unit_test(test_pick_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
