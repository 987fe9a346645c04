/*
 * score.h: VMmark-style scoring and power arithmetic. Pure computation.
 *   normalized throughput = achieved / reference
 *   tile score            = geometric mean of its workloads' normalized throughputs
 *   score of a level      = sum of its tile scores
 *   mean power            = energy / time, trapezoid rule over samples (SPECpower)
 *   PPKW                  = score / (mean SUT power in kW)
 *   overall efficiency    = sum of scores / sum of kW over the levels and
 *                           active idle (SPECpower)
 *   phase median, repeat statistics, VMmark 3's 80/20 weighting.
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

/*
 * Overall efficiency, SPECpower_ssj2008 style: sum of the levels' scores
 * divided by the sum of their mean power in kW, with active idle in the power
 * sum and 0 in the score sum. Source: SPECpower_ssj2008 Result File Fields,
 * 4.4 "sum ssj_ops / sum power", over the target loads and active idle.
 *
 * scores[i], watts[i]: one entry per load level (for a level with several
 * phases, the median phase's score and that same phase's watts: see
 * tb_score_median_index; for repeats, one entry per level and repeat is
 * fine, as both sums scale alike). idle_w: active idle power in W.
 * Missing watts: a level whose watts are not finite or <= 0 (e.g. -1 from
 * tb_score_mean_power_w), or whose score is not finite, is left out of BOTH
 * sums, so a level without power cannot inflate the ratio; it is counted in
 * detail->levels_skipped. An idle_w that is not finite or <= 0 is left out
 * (detail->idle_included = 0): the caller should then say "without active
 * idle". Returns the efficiency in score per kW; 0 when no level was usable
 * (detail->levels_used = 0: report "not available"). detail may be NULL.
 */
typedef struct tb_score_efficiency {
    double value;       /* score / kW, as returned */
    double score_sum;   /* sum of the used levels' scores */
    double kw_sum;      /* sum of the used levels' kW, plus idle when included */
    int levels_used;    /* levels with a finite score and watts > 0 */
    int levels_skipped; /* levels left out for missing watts or score */
    int idle_included;  /* 1 when idle_w was usable */
} tb_score_efficiency;

double tb_score_overall_efficiency(const double *scores, const double *watts, int n, double idle_w,
                                   tb_score_efficiency *detail);

/*
 * Index in v[0..n-1] of the median phase, VMmark style (the reported score is
 * the median of the phases' scores; VMmark runs three). For an even n this is
 * the LOWER median (the smaller of the two middle values, as Python's
 * statistics.median_low), never the mean of the two: the result is then one
 * measured phase, whose score, watts and PPKW belong together, and a tie of
 * two phases never reports a score no phase achieved. Equal values: the
 * earliest phase. A NaN score (a phase without a result) ranks below every
 * number. Returns -1 when n <= 0.
 */
int tb_score_median_index(const double *v, int n);

/* v[tb_score_median_index(v, n)]: the median phase score; 0 when n <= 0. */
double tb_score_median(const double *v, int n);

/* Statistics of a figure across --repeat N runs (mean, min, max
 * across repeats, as VMmark reports them), plus the sample standard deviation. */
typedef struct tb_score_stats {
    int n; /* finite values used */
    double mean;
    double min;
    double max;
    double stddev; /* sample (n - 1) standard deviation; 0 when n < 2 */
} tb_score_stats;

/* Fills *out from v[0..n-1]; non-finite values (a repeat without a result)
 * are skipped and not counted in out->n. All fields 0 when none is finite. */
void tb_score_repeat_stats(const double *v, int n, tb_score_stats *out);

/* VMmark 3 weights of the application and infrastructure scores. */
#define TB_SCORE_APP_WEIGHT   0.8
#define TB_SCORE_INFRA_WEIGHT 0.2

/*
 * VMmark 3 final score: the weighted ARITHMETIC mean 0.8 * app_score + 0.2 *
 * infra_score. app_score is the level score (sum of tile scores); infra_score
 * the geometric mean of the normalized infrastructure throughputs (ops/hour
 * against their reference; tb_score_normalize then tb_score_geomean), not
 * summed over tiles. Source: VMmark 3 results, "VMmark 3 performance score
 * (80% of applications score + 20% of infrastructure score)"; published
 * example: applications 11.18, infrastructure 1.07 -> 9.16 (9.158). With no
 * infrastructure operations configured, report app_score alone instead.
 */
double tb_score_weighted_final(double app_score, double infra_score);

#endif
