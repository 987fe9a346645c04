/*
 * score.c: the VMmark-style arithmetic (normalized throughput, tile score as a
 * geometric mean, level score as a sum), mean power by the trapezoid rule
 * (SPECpower: energy / time) and PPKW. Pure computation, no I/O.
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
    for (i = 0; i < n; i++) s += v[i];
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
        if (n_valid == 0) first_t = p->t_us;
        else energy += (prev_w + p->watts) / 2.0 * (double)(p->t_us - prev_t);
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
