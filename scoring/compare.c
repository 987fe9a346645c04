/*
 * compare.c: run comparison arithmetic; see compare.h.
 */
#include "scoring/compare.h"

#include <math.h>

double tb_score_pct_change(double value, double baseline) {
    if (!isfinite(value) || !isfinite(baseline) || baseline == 0) return NAN;
    return (value - baseline) / fabs(baseline) * 100.0;
}
