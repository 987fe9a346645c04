/*
 * vmath.h: the verifier's arithmetic, written from docs/method.md ("Scores
 * and PPKW") and tests/tools/recompute.py, not from scoring/: the trapezoid
 * mean, the geometric mean, the median phase, and the comparison tolerance.
 */
#ifndef TB_VERIFY_VMATH_H
#define TB_VERIFY_VMATH_H

#include <stddef.h>
#include <stdint.h>

/*
 * Published figures must agree with the recomputed ones to this relative
 * tolerance. Why 1e-9: report.json writes reals with 15 significant digits
 * (results/report_json.c, JSON_REAL_PRECISION(15)), a relative rounding of
 * at most 5e-15; recomputing a sum of n terms in another order moves it by
 * about n * 1.1e-16 (1e-12 for 10,000 samples). 1e-9 is three orders above
 * both, and far below what an edited number changes: one 1 W edit among
 * 3,600 samples of 100 W moves a mean by 3e-6 of it.
 */
#define TB_V_REL 1e-9

/* 1 when a and b agree to rel (both NaN agree: the report's null). */
int tb_v_close(double a, double b, double rel);

/* Mean power of one meter by the trapezoid rule (SPECpower; docs/method.md):
 * the energy over its n points (t_us ascending, all valid) divided by the
 * time from the first to the last; one point, or all at one instant, give
 * the plain mean. Returns 0, or -1 when n == 0. */
int tb_v_trapezoid_mean(const int64_t *t_us, const double *watts, size_t n, double *out);

/* Geometric mean of n values, 0 when n == 0 or any value is not > 0
 * (a workload with no ops zeroes its tile's score, as VMmark's). */
double tb_v_geomean(const double *v, size_t n);

/* Index of the median of n values (the lower median of an even count, so
 * it is one real value): the value of rank (n - 1) / 2 when NaN ranks first
 * and equal values keep their order. -1 when n == 0. */
int tb_v_median_index(const double *v, size_t n);

#endif
