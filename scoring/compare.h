/*
 * compare.h: run comparison arithmetic (pure computation): the percent change
 * of a figure against the baseline run's figure at the same load level.
 */
#ifndef TB_SCORING_COMPARE_H
#define TB_SCORING_COMPARE_H

/*
 * Percent change of value against baseline: (value - baseline) / |baseline|
 * x 100, so +10 means 10% more than the baseline whatever its sign. NaN (no
 * percentage) when baseline is 0 or either figure is missing (not finite):
 * a missing figure is never read as 0.
 */
double tb_score_pct_change(double value, double baseline);

#endif
