/*
 * score.c: the VMmark-style arithmetic (normalized throughput, tile score as a
 * geometric mean, level score as a sum), mean power by the trapezoid rule
 * (SPECpower: energy / time), PPKW, overall efficiency with active idle
 * (SPECpower), the median phase (VMmark), repeat statistics and VMmark 3's
 * 80/20 weighting. Pure computation, no I/O.
 */
#include "scoring/score.h"

#include <math.h>

double tb_score_normalize(double achieved, double reference) {
    if (!(reference > 0.0)) return 0.0;
    return achieved / reference;
}

/* Through logs, so a tile with many workloads cannot overflow the product. */
double tb_score_geomean(const double *v, int n) {
    double log_sum = 0.0;
    int i;
    if (n <= 0) return 0.0;
    for (i = 0; i < n; i++) {
        if (!(v[i] > 0.0)) return 0.0; /* also NaN */
        log_sum += log(v[i]);
    }
    return exp(log_sum / n);
}

double tb_score_sum(const double *v, int n) {
    double s = 0.0;
    int i;
    for (i = 0; i < n; i++)
        s += v[i];
    return s;
}

double tb_score_mean_power_w(const tb_power_point *pts, int n, uint64_t t0_us, uint64_t t1_us) {
    double energy = 0.0; /* W·µs */
    double w_sum = 0.0;  /* for points at one instant */
    double prev_w = 0.0;
    uint64_t first_t = 0, prev_t = 0;
    int n_valid = 0, i;

    for (i = 0; i < n; i++) {
        const tb_power_point *p = &pts[i];
        if (!p->valid || !isfinite(p->watts) || p->t_us < t0_us || p->t_us >= t1_us) continue;
        if (n_valid > 0 && p->t_us < prev_t) continue; /* out of order */
        if (n_valid == 0)
            first_t = p->t_us;
        else
            energy += (prev_w + p->watts) / 2.0 * (double)(p->t_us - prev_t);
        w_sum += p->watts;
        prev_w = p->watts;
        prev_t = p->t_us;
        n_valid++;
    }
    if (n_valid == 0) return -1.0;
    if (prev_t == first_t) return w_sum / n_valid;
    return energy / (double)(prev_t - first_t);
}

double tb_score_ppkw(double score, double watts) {
    if (!(watts > 0.0)) return 0.0;
    return score / (watts / 1000.0);
}

double tb_score_rate_per_s(uint64_t count, uint64_t duration_us) {
    if (duration_us == 0) return 0.0;
    return (double)count / ((double)duration_us / 1e6);
}

double tb_score_overall_efficiency(const double *scores, const double *watts, int n, double idle_w,
                                   tb_score_efficiency *detail) {
    tb_score_efficiency d;
    int i;
    d.value = d.score_sum = d.kw_sum = 0.0;
    d.levels_used = d.levels_skipped = d.idle_included = 0;
    for (i = 0; i < n; i++) {
        if (!isfinite(scores[i]) || !isfinite(watts[i]) || !(watts[i] > 0.0)) {
            d.levels_skipped++;
            continue;
        }
        d.score_sum += scores[i];
        d.kw_sum += watts[i] / 1000.0;
        d.levels_used++;
    }
    if (isfinite(idle_w) && idle_w > 0.0) {
        d.kw_sum += idle_w / 1000.0;
        d.idle_included = 1;
    }
    if (d.levels_used > 0 && d.kw_sum > 0.0) d.value = d.score_sum / d.kw_sum;
    if (detail) *detail = d;
    return d.value;
}

/* a ranks before b: NaN first, then ascending; equal values keep input order. */
static int ranks_before(double a, int ia, double b, int ib) {
    if (isnan(a) || isnan(b)) {
        if (isnan(a) && isnan(b)) return ia < ib;
        return isnan(a);
    }
    return a < b || (a == b && ia < ib);
}

/* Rank of each value by counting (phases are few, so O(n^2) without sorting
 * a copy); the lower median has rank (n - 1) / 2. */
int tb_score_median_index(const double *v, int n) {
    int want = (n - 1) / 2, i, j;
    if (n <= 0) return -1;
    for (i = 0; i < n; i++) {
        int rank = 0;
        for (j = 0; j < n; j++)
            if (j != i && ranks_before(v[j], j, v[i], i)) rank++;
        if (rank == want) return i;
    }
    return 0; /* not reached: ranks are a permutation of 0..n-1 */
}

double tb_score_median(const double *v, int n) {
    int i = tb_score_median_index(v, n);
    return i < 0 ? 0.0 : v[i];
}

void tb_score_repeat_stats(const double *v, int n, tb_score_stats *out) {
    double sum = 0.0, sq = 0.0;
    int i;
    out->n = 0;
    out->mean = out->min = out->max = out->stddev = 0.0;
    for (i = 0; i < n; i++) {
        if (!isfinite(v[i])) continue;
        if (out->n == 0 || v[i] < out->min) out->min = v[i];
        if (out->n == 0 || v[i] > out->max) out->max = v[i];
        sum += v[i];
        out->n++;
    }
    if (out->n == 0) return;
    out->mean = sum / out->n;
    /* Two passes: squares of deviations from the mean, not sum of squares
     * minus square of sums, which cancels badly for close values. */
    for (i = 0; i < n; i++)
        if (isfinite(v[i])) sq += (v[i] - out->mean) * (v[i] - out->mean);
    if (out->n > 1) out->stddev = sqrt(sq / (out->n - 1));
}

double tb_score_weighted_final(double app_score, double infra_score) {
    return TB_SCORE_APP_WEIGHT * app_score + TB_SCORE_INFRA_WEIGHT * infra_score;
}
