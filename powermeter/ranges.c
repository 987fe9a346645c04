/*
 * ranges.c: input range lists and the ranging pass's choice (ranges.h).
 */
#include "powermeter/ranges.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const double wt310_volts[] = {15, 30, 60, 150, 300, 600};
static const double wt310_amps[] = {0.5, 1, 2, 5, 10, 20};

void tb_ranges_for(const char *model, double cf, tb_range_list *out) {
    double f = cf > 5.5 && cf < 6.5 ? 0.5 : 1.0;
    (void)model; /* every model tilebench drives has the WT310's direct-input ranges */
    memset(out, 0, sizeof *out);
    out->n_volts = (int)(sizeof wt310_volts / sizeof wt310_volts[0]);
    out->n_amps = (int)(sizeof wt310_amps / sizeof wt310_amps[0]);
    for (int i = 0; i < out->n_volts; i++)
        out->volts[i] = wt310_volts[i] * f;
    for (int i = 0; i < out->n_amps; i++)
        out->amps[i] = wt310_amps[i] * f;
}

double tb_range_pick(const double *list, int n, double peak, double headroom) {
    double need;
    if (!isfinite(peak) || peak < 0 || !(headroom >= 1)) return -1;
    need = peak * headroom;
    for (int i = 0; i < n; i++)
        if (list[i] >= need * (1 - 1e-9)) return list[i];
    return -1;
}

void tb_range_setting(char *out, unsigned long n, double value, const char *auto_word) {
    if (value > 0)
        snprintf(out, n, "%g", value);
    else
        snprintf(out, n, "%s", auto_word);
}
