/*
 * score.h: VMmark-style scoring and power arithmetic. Pure computation.
 *   normalized throughput = achieved / reference
 *   tile score            = geometric mean of its workloads' normalized throughputs
 *   score of a level      = sum of its tile scores
 *   mean power            = energy / time, trapezoid rule over samples (SPECpower)
 *   PPKW                  = score / (mean SUT power in kW)
 */
#ifndef TB_SCORING_SCORE_H
#define TB_SCORING_SCORE_H

#include <stdint.h>

/* achieved / reference; 0 when reference <= 0. Same units for both. */
double tb_score_normalize(double achieved, double reference);

/* Geometric mean of n values (VMmark tile score). Any value <= 0 makes the
 * result 0 (a workload that did nothing zeroes its tile). 0 when n == 0. */
double tb_score_geomean(const double *v, int n);

/* Sum of n tile scores. */
double tb_score_sum(const double *v, int n);

/* A power reading: monotonic time in µs, watts, valid flag. */
typedef struct tb_power_point {
    uint64_t t_us;
    double watts;
    int valid;
} tb_power_point;

/*
 * Mean power in W over [t0_us, t1_us) from one meter's points, sorted by time:
 * energy (trapezoid rule over valid points, as SPECpower) divided by the time
 * the valid points span (first to last valid point inside the window; no
 * extrapolation to t0/t1). Invalid points (valid == 0, or non-finite watts)
 * are skipped, and the trapezoid bridges the gap between their valid
 * neighbours; the caller judges validity from the share of invalid samples.
 * A point whose time goes backwards is skipped too. A single valid point (or
 * several at one instant) gives its own value (their average).
 * Returns -1 when no valid point lies in the window.
 */
double tb_score_mean_power_w(const tb_power_point *pts, int n, uint64_t t0_us, uint64_t t1_us);

/* score / (watts / 1000); 0 when watts <= 0. */
double tb_score_ppkw(double score, double watts);

/* Throughput per second: count / (duration_us / 1e6); 0 when duration is 0. */
double tb_score_rate_per_s(uint64_t count, uint64_t duration_us);

#endif
