/*
 * vmath.c: the verifier's arithmetic (vmath.h). Independent of scoring/:
 * the geometric mean here is the n-th root of a running product kept in
 * range by frexp, not a sum of logs.
 */
#include "verify/vmath.h"

#include <math.h>

int tb_v_close(double a, double b, double rel) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (a == b) return 1;
    if (isinf(a) || isinf(b)) return 0; /* inf - x <= rel * inf would hold for any finite x */
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

int tb_v_trapezoid_mean(const int64_t *t_us, const double *watts, size_t n, double *out) {
    double energy = 0.0, plain = 0.0; /* W·µs; sum of watts */
    if (n == 0) return -1;
    for (size_t i = 0; i < n; i++) {
        plain += watts[i];
        if (i > 0) energy += 0.5 * (watts[i - 1] + watts[i]) * (double)(t_us[i] - t_us[i - 1]);
    }
    *out = t_us[n - 1] == t_us[0] ? plain / (double)n : energy / (double)(t_us[n - 1] - t_us[0]);
    return 0;
}

double tb_v_geomean(const double *v, size_t n) {
    double mant = 1.0;
    long e2 = 0;
    if (n == 0) return 0.0;
    for (size_t i = 0; i < n; i++) {
        int e;
        if (!(v[i] > 0.0) || isinf(v[i])) return v[i] > 0.0 ? INFINITY : 0.0;
        mant = frexp(mant * v[i], &e);
        e2 += e;
    }
    /* (mant * 2^e2)^(1/n) = mant^(1/n) * 2^(e2/n) */
    return pow(mant, 1.0 / (double)n) * exp2((double)e2 / (double)n);
}

/* a ranks before b: NaN first, then ascending, ties by position. */
static int before(double a, size_t ia, double b, size_t ib) {
    if (isnan(a) != isnan(b)) return isnan(a);
    if (!isnan(a) && a != b) return a < b;
    return ia < ib;
}

int tb_v_median_index(const double *v, size_t n) {
    size_t want;
    if (n == 0) return -1;
    want = (n - 1) / 2;
    for (size_t i = 0; i < n; i++) {
        size_t rank = 0;
        for (size_t j = 0; j < n; j++)
            if (j != i && before(v[j], j, v[i], i)) rank++;
        if (rank == want) return (int)i;
    }
    return 0;
}
