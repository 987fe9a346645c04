/*
 * test_saturation.c: unit tests of the saturation search behind
 * `--tiles auto` (scoring/saturation.c): the +1 climb, capping at max tiles,
 * doubling with bisection between the last pass and the first fail, repeated
 * levels, bad input, and the plain saturation of a fixed sweep. Each case
 * replays a whole search by hand: levels tried, verdicts, expected next.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "scoring/saturation.h"

/*
 * Runs the search against a SUT that passes up to `capacity` tiles, checking
 * each level it asks for against want[] (terminated by 0), and returns the
 * final step.
 */
static tb_saturation_step replay(const tb_saturation_opts *o, int capacity, const int *want) {
    int tiles[64], pass[64], n = 0, rc;
    tb_saturation_step st;
    char err[TB_ERR_LEN];
    for (;;) {
        rc = tb_saturation_next(tiles, pass, n, o, &st, err);
        assert_int_not_equal(rc, -1);
        if (rc == 0) break;
        assert_int_equal(st.done, 0);
        if (want[n] == 0) {
            print_error("asked for %d tiles after %d levels, want done\n", st.next_tiles, n);
            fail();
        }
        assert_int_equal(st.next_tiles, want[n]);
        tiles[n] = st.next_tiles;
        pass[n] = st.next_tiles <= capacity;
        n++;
        assert_true(n < 64);
    }
    assert_int_equal(want[n], 0); /* every expected level was asked for */
    assert_int_equal(st.done, 1);
    assert_int_equal(st.next_tiles, 0);
    return st;
}

static void test_climb_by_one(void **state) {
    tb_saturation_opts o = {.max_tiles = 16};
    const int want[] = {1, 2, 3, 4, 0};
    tb_saturation_step st;
    (void)state;
    st = replay(&o, 3, want); /* 4 fails */
    assert_int_equal(st.saturation, 3);
    assert_int_equal(st.first_fail, 4);
    assert_int_equal(st.capped, 0);
    /* bisection adds nothing to a +1 climb */
    o.bisect = 1;
    st = replay(&o, 3, want);
    assert_int_equal(st.saturation, 3);
}

static void test_first_level_fails(void **state) {
    tb_saturation_opts o = {.max_tiles = 8, .bisect = 1};
    const int want[] = {1, 0};
    tb_saturation_step st;
    (void)state;
    st = replay(&o, 0, want);
    assert_int_equal(st.saturation, 0);
    assert_int_equal(st.first_fail, 1);
}

static void test_capped(void **state) {
    tb_saturation_opts o = {.max_tiles = 3};
    const int want[] = {1, 2, 3, 0};
    const int want_dbl[] = {1, 2, 4, 6, 0}; /* 8 is clamped to 6 */
    tb_saturation_step st;
    (void)state;
    st = replay(&o, 100, want);
    assert_int_equal(st.saturation, 3);
    assert_int_equal(st.capped, 1);
    assert_int_equal(st.first_fail, 0);
    o.max_tiles = 6;
    o.doubling = 1;
    st = replay(&o, 100, want_dbl);
    assert_int_equal(st.saturation, 6);
    assert_int_equal(st.capped, 1);
}

/* 1, 2, 4, 8 (fails) then bisect 4..8: 6, then 5 or 7. */
static void test_doubling_bisect(void **state) {
    tb_saturation_opts o = {.max_tiles = 64, .doubling = 1, .bisect = 1};
    const int cap6[] = {1, 2, 4, 8, 6, 7, 0};
    const int cap5[] = {1, 2, 4, 8, 6, 5, 0};
    const int cap4[] = {1, 2, 4, 8, 6, 5, 0};
    const int cap7[] = {1, 2, 4, 8, 6, 7, 0};
    const int cap20[] = {1, 2, 4, 8, 16, 32, 24, 20, 22, 21, 0};
    const int nobisect[] = {1, 2, 4, 8, 0};
    tb_saturation_step st;
    (void)state;
    st = replay(&o, 6, cap6);
    assert_int_equal(st.saturation, 6);
    assert_int_equal(st.first_fail, 7);
    st = replay(&o, 5, cap5);
    assert_int_equal(st.saturation, 5);
    assert_int_equal(st.first_fail, 6);
    st = replay(&o, 4, cap4);
    assert_int_equal(st.saturation, 4);
    assert_int_equal(st.first_fail, 5);
    st = replay(&o, 7, cap7);
    assert_int_equal(st.saturation, 7);
    assert_int_equal(st.first_fail, 8);
    st = replay(&o, 20, cap20);
    assert_int_equal(st.saturation, 20);
    assert_int_equal(st.first_fail, 21);
    o.bisect = 0;
    st = replay(&o, 6, nobisect);
    assert_int_equal(st.saturation, 4);
    assert_int_equal(st.first_fail, 8);
}

/* start 1, step 3: 1, 4, 7 (fails), bisect 4..7 -> 5, then 6. */
static void test_step_and_start(void **state) {
    tb_saturation_opts o = {.max_tiles = 20, .step = 3, .bisect = 1};
    const int cap5[] = {1, 4, 7, 5, 6, 0};
    const int start4[] = {4, 2, 1, 0}; /* 4 fails: bisect below it, 0..4 -> 2 -> 1 */
    tb_saturation_step st;
    (void)state;
    st = replay(&o, 5, cap5);
    assert_int_equal(st.saturation, 5);
    assert_int_equal(st.first_fail, 6);
    o.start = 4;
    o.step = 0;
    st = replay(&o, 1, start4);
    assert_int_equal(st.saturation, 1);
    assert_int_equal(st.first_fail, 2);
}

/* One step from a given history: order does not matter, repeats fail if any fails. */
static void test_given_history(void **state) {
    tb_saturation_opts o = {.max_tiles = 16, .doubling = 1, .bisect = 1};
    const int tiles[] = {8, 1, 4, 2};
    const int pass[] = {0, 1, 1, 1};
    const int rtiles[] = {1, 2, 2};
    const int rpass[] = {1, 1, 0};
    tb_saturation_step st;
    char err[TB_ERR_LEN];
    (void)state;
    assert_int_equal(tb_saturation_next(tiles, pass, 4, &o, &st, err), 1);
    assert_int_equal(st.next_tiles, 6);
    assert_int_equal(st.saturation, 4); /* best so far */
    assert_int_equal(st.first_fail, 8);
    assert_int_equal(st.done, 0);
    o.bisect = 0;
    assert_int_equal(tb_saturation_next(rtiles, rpass, 3, &o, &st, err), 0);
    assert_int_equal(st.saturation, 1);
    assert_int_equal(st.first_fail, 2);
    /* nothing tried: the first level */
    assert_int_equal(tb_saturation_next(NULL, NULL, 0, &o, &st, err), 1);
    assert_int_equal(st.next_tiles, 1);
    assert_int_equal(st.saturation, 0);
}

static void test_bad_input(void **state) {
    tb_saturation_opts o = {.max_tiles = 4};
    const int zero[] = {0};
    const int yes[] = {1};
    tb_saturation_step st;
    char err[TB_ERR_LEN];
    (void)state;
    assert_int_equal(tb_saturation_next(zero, yes, 1, &o, &st, err), -1);
    assert_string_equal(err, "saturation search: level 1 has 0 tiles (must be at least 1)");
    assert_int_equal(tb_saturation_next(NULL, NULL, 2, &o, &st, err), -1);
    assert_string_equal(err, "saturation search: bad list of levels tried (n = 2)");
    assert_int_equal(tb_saturation_next(NULL, NULL, -1, &o, &st, err), -1);
    o.max_tiles = 0;
    assert_int_equal(tb_saturation_next(NULL, NULL, 0, &o, &st, err), -1);
    assert_string_equal(err, "saturation search: max tiles must be at least 1");
    assert_int_equal(tb_saturation_next(NULL, NULL, 0, NULL, &st, err), -1);
    o.max_tiles = 4;
    o.start = 5;
    assert_int_equal(tb_saturation_next(NULL, NULL, 0, &o, &st, err), -1);
    assert_string_equal(err, "saturation search: first level 5 outside 1..4");
    o.start = 0;
    o.step = -2;
    assert_int_equal(tb_saturation_next(NULL, NULL, 0, &o, &st, err), -1);
    assert_string_equal(err, "saturation search: step -2 must be at least 1");
}

/* Fixed sweep 1,2,4,8 with 4 failing but 8 passing: the largest pass is 8. */
static void test_largest_pass(void **state) {
    const int tiles[] = {1, 2, 4, 8};
    const int pass[] = {1, 1, 0, 1};
    const int none[] = {0, 0, 0, 0};
    const int rtiles[] = {3, 3, 2};
    const int rpass[] = {1, 0, 1};
    (void)state;
    assert_int_equal(tb_saturation_largest_pass(tiles, pass, 4), 8);
    assert_int_equal(tb_saturation_largest_pass(tiles, none, 4), 0);
    assert_int_equal(tb_saturation_largest_pass(rtiles, rpass, 3), 2); /* 3 failed once */
    assert_int_equal(tb_saturation_largest_pass(NULL, NULL, 0), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_climb_by_one),   cmocka_unit_test(test_first_level_fails),
        cmocka_unit_test(test_capped),         cmocka_unit_test(test_doubling_bisect),
        cmocka_unit_test(test_step_and_start), cmocka_unit_test(test_given_history),
        cmocka_unit_test(test_bad_input),      cmocka_unit_test(test_largest_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
