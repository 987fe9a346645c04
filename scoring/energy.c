/*
 * energy.c: energy per op and the efficiency curve (energy.h).
 */
#include "scoring/energy.h"

#include <math.h>

double tb_energy_joules(double avg_watts, double steady_s) {
    if (!isfinite(avg_watts) || !isfinite(steady_s) || avg_watts < 0 || steady_s < 0) return NAN;
    return avg_watts * steady_s;
}

double tb_energy_per_op(double joules, double ops) {
    if (!isfinite(joules) || !isfinite(ops) || ops <= 0) return NAN;
    return joules / ops;
}

int tb_energy_split(double joules, size_t n, const double *ops, const double *normalized, double *share,
                    double *j_per_op) {
    double sum = 0;
    size_t i;
    for (i = 0; i < n; i++)
        if (isfinite(normalized[i]) && normalized[i] > 0) sum += normalized[i];
    for (i = 0; i < n; i++) {
        double v = isfinite(normalized[i]) && normalized[i] > 0 ? normalized[i] : 0;
        share[i] = sum > 0 ? v / sum : NAN;
        j_per_op[i] = sum > 0 ? tb_energy_per_op(isfinite(joules) ? joules * share[i] : NAN, ops[i]) : NAN;
    }
    return sum > 0 ? 0 : -1;
}

double tb_energy_efficiency(double score, double peak_score, double avg_watts, double *norm_perf) {
    *norm_perf = NAN;
    if (!isfinite(score) || !isfinite(peak_score) || !isfinite(avg_watts) || peak_score <= 0 || avg_watts <= 0)
        return NAN;
    *norm_perf = score / peak_score;
    return *norm_perf / (avg_watts / 1000.0);
}
