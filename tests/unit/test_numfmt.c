/*
 * test_numfmt.c: unit tests of common/numfmt.c against glibc's printf: each
 * text must be byte for byte what "%.17g" / "%lld" writes, and strtod of a
 * double's text must give back the same bits. Fixed edge cases (negative
 * zero, subnormals, 1e300, the ends of the exact range, powers of ten and
 * their neighbours, exact ties at the 17th digit) and random doubles: any
 * bit pattern, any value of the exact range, short decimals like a meter's
 * readings, whole numbers, and halves, quarters and eighths (ties).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numfmt.h"

/* A fixed generator (xorshift64*), so a failure repeats. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static int failures;

/* v's text against printf's, and strtod's round trip; prints a mismatch. */
static void check_double(double v) {
    char got[TB_NUMFMT_LEN], want[64];
    size_t n = tb_fmt_double17(v, got);
    double back;
    snprintf(want, sizeof want, "%.17g", v);
    back = strtod(got, NULL);
    if (strcmp(got, want) != 0 || n != strlen(got) || (!isnan(v) && memcmp(&back, &v, sizeof v) != 0)) {
        if (failures++ < 10) print_error("%a: got \"%s\", printf \"%s\"\n", v, got, want);
    }
}

static double from_bits(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void test_double_edges(void **state) {
    static const double fixed[] = {0.0,
                                   1.0,
                                   0.1,
                                   0.5,
                                   100.0,
                                   150.16666635802486,
                                   1e300,
                                   -1e300,
                                   1e-300,
                                   DBL_MAX,
                                   -DBL_MAX,
                                   DBL_MIN,
                                   DBL_TRUE_MIN,
                                   -DBL_TRUE_MIN,
                                   4.9e-320,
                                   9007199254740992.0,
                                   9007199254740991.0,
                                   9007199254740993.0,
                                   4503599627370495.5,
                                   1e-5,
                                   9.9999999999999991e-6,
                                   1.0000000000000001e-5,
                                   123456789012345.125,
                                   123456789012345.375,
                                   999999999999999.875,
                                   99999999999999.9921875,
                                   0.30000000000000004,
                                   2.5e-5,
                                   1e16,
                                   1e17,
                                   86.069651741293228,
                                   0.49751243781092769,
                                   13.432835820895843};
    char out[TB_NUMFMT_LEN];
    (void)state;
    failures = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        check_double(fixed[i]);
        check_double(-fixed[i]);
        check_double(nextafter(fixed[i], 0));
        check_double(nextafter(fixed[i], INFINITY));
    }
    for (int e = -330; e <= 308; e++) { /* powers of ten and their neighbours */
        double p = pow(10, e);
        check_double(p);
        check_double(nextafter(p, 0));
        check_double(nextafter(p, INFINITY));
    }
    check_double(INFINITY);
    check_double(-INFINITY);
    check_double(NAN);
    assert_int_equal(failures, 0);
    /* the texts a bundle's reader sees */
    tb_fmt_double17(-0.0, out);
    assert_string_equal(out, "-0");
    tb_fmt_double17(0.1, out);
    assert_string_equal(out, "0.10000000000000001");
    tb_fmt_double17(150.0, out);
    assert_string_equal(out, "150");
    tb_fmt_double17(1e300, out);
    assert_string_equal(out, "1.0000000000000001e+300");
    tb_fmt_double17(2.5e-5, out);
    assert_string_equal(out, "2.5000000000000001e-05");
    tb_fmt_double17(123456789012345.125, out); /* a tie: to the even digit */
    assert_string_equal(out, "123456789012345.12");
}

static void test_double_random(void **state) {
    (void)state;
    failures = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t r = rnd();
        check_double(from_bits(r));                                     /* any bits: subnormals, nan, inf too */
        check_double(ldexp((double)(r >> 11), (int)(rnd() % 72) - 70)); /* the exact range and past it */
        check_double((double)(int64_t)(r % 100000000) / pow(10, (int)(rnd() % 9))); /* meter-like */
        check_double((double)(int64_t)(r >> (rnd() % 64)) * ((r & 1) ? -1 : 1));    /* whole numbers */
        check_double((double)(r >> (11 + rnd() % 40)) + (double)(rnd() % 8) / 8);   /* ties */
        check_double(from_bits(r & 0x800fffffffffffffULL));                         /* subnormals and zeros */
    }
    assert_int_equal(failures, 0);
}

static void test_int64(void **state) {
    static const int64_t fixed[] = {0, 1, -1, 9, 10, -10, INT64_MAX, INT64_MIN, INT64_MIN + 1, 1700000000000000};
    char got[TB_NUMFMT_LEN], want[32];
    (void)state;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        size_t n = tb_fmt_int64(fixed[i], got);
        assert_int_equal(n, strlen(got));
        snprintf(want, sizeof want, "%" PRId64, fixed[i]);
        assert_string_equal(got, want);
    }
    for (int i = 0; i < 100000; i++) {
        int64_t v = (int64_t)(rnd() >> (rnd() % 64));
        if (i & 1) v = -v;
        tb_fmt_int64(v, got);
        snprintf(want, sizeof want, "%" PRId64, v);
        assert_string_equal(got, want);
    }
}

static void test_uint64(void **state) {
    static const uint64_t fixed[] = {0,         1, 9, 10, 99, 100, INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX - 1,
                                     UINT64_MAX};
    char got[TB_NUMFMT_LEN], want[32];
    (void)state;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        size_t n = tb_fmt_uint64(fixed[i], got);
        assert_int_equal(n, strlen(got));
        snprintf(want, sizeof want, "%" PRIu64, fixed[i]);
        assert_string_equal(got, want);
    }
    for (int i = 0; i < 100000; i++) {
        uint64_t v = rnd() >> (rnd() % 64);
        tb_fmt_uint64(v, got);
        snprintf(want, sizeof want, "%" PRIu64, v);
        assert_string_equal(got, want);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double_edges),
        cmocka_unit_test(test_double_random),
        cmocka_unit_test(test_int64),
        cmocka_unit_test(test_uint64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
