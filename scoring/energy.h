/*
 * energy.h: energy per op and the efficiency curve of a load level (issue
 * 23, docs/method.md "Energy per op and the efficiency curve"). Pure
 * computation:
 *   energy of a level      = mean SUT power (W) x steady seconds (J)
 *   J per op (whole SUT)   = that energy / every metric op of the level
 *   share of a workload    = its normalized throughput / the level's sum of them
 *   J per op of a workload = energy x its share / its metric ops
 *   normalized performance = score / the run's peak score
 *   efficiency             = normalized performance / mean power in kW (SERT style)
 */
#ifndef TB_SCORING_ENERGY_H
#define TB_SCORING_ENERGY_H

#include <stddef.h>

/* avg_watts x steady_s in J; NaN when either is unknown (not finite) or negative. */
double tb_energy_joules(double avg_watts, double steady_s);

/* joules / ops; NaN when joules is unknown or ops <= 0. */
double tb_energy_per_op(double joules, double ops);

/* Splits joules over n workloads by their share of normalized throughput:
 * share[i] = normalized[i] / sum, j_per_op[i] = joules x share[i] / ops[i]
 * (NaN when ops[i] <= 0). A normalized value that is not finite or below 0
 * counts as 0. Returns 0, or -1 when the sum is not positive (nothing to
 * split by: every share and J/op NaN). */
int tb_energy_split(double joules, size_t n, const double *ops, const double *normalized, double *share,
                    double *j_per_op);

/* The efficiency curve's point of a level: *norm_perf = score / peak_score
 * and the return value *norm_perf / (avg_watts / 1000), normalized
 * performance per kW; NaN (both) when peak_score or avg_watts is not
 * positive or a value is unknown. */
double tb_energy_efficiency(double score, double peak_score, double avg_watts, double *norm_perf);

#endif
