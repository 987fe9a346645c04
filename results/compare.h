/*
 * compare.h: `tilebench compare`: several stored runs normalized to a
 * baseline run at each load level, as % change in score, PPKW, mean power,
 * p95 latency per workload, and CPU utilization and frequency when stored.
 * Reads only. Text is an aligned terminal table, JSON is documented in the
 * docs/campaigns.md ("Comparing runs"), HTML is one self-contained page with inline
 * SVG grouped bar charts and no JavaScript. `serve` and campaigns call
 * tb_compare_write.
 *
 * How a run's figure at a load level is taken (the same rule as the report's
 * summary): within each repeat, the median phase by score (the lower median
 * for an even count, so every figure comes from one measured phase); across
 * repeats, the mean. Load levels are matched by their number of tiles. A
 * level one run did not measure is "missing", never 0; a baseline figure that
 * is 0 or unknown gives no % change.
 *
 * p95 per workload: the 95th percentile of the corrected latency (from the
 * intended start) of the workload's metric ops (the ops that count toward its
 * throughput: oltp Order, kv GET and SET, every mail action), all tiles'
 * histograms merged, in ms. Runs stored before the metric flag existed
 * (schema < 3) use all of the workload's ops, and the output says so.
 */
#ifndef TB_RESULTS_COMPARE_H
#define TB_RESULTS_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "results/store.h"

typedef enum { TB_COMPARE_TEXT, TB_COMPARE_JSON, TB_COMPARE_HTML } tb_compare_format;

/* Parses "text" / "json" / "html". 0, or -1 with err naming the value. */
int tb_compare_parse_format(const char *s, tb_compare_format *out, char *err) TB_WUR;

/*
 * Writes the comparison of run_ids[0..n_runs) (shown in that order) against
 * baseline_id to f, reading s inside one read transaction. Nothing is written
 * when an error is found before output starts. Returns 0, or -1 with err:
 * fewer than 2 runs ("compare: 1 run given: compare needs at least 2"), a run
 * given twice, an unknown run id ("run 7 not found in x.db"), a baseline not
 * among the runs, a database read error, or an output error.
 */
int tb_compare_write(tb_store *s, const int64_t *run_ids, int n_runs, int64_t baseline_id, tb_compare_format fmt,
                     FILE *f, char *err) TB_WUR;

#endif
