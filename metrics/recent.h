/*
 * recent.h: latency over a recent window of a phase in progress, for live
 * metrics. The load generator shows a phase so far (its histograms from the
 * phase's start, as copies) about once a second; a window keeps, per (workload,
 * op), those snapshots of the last window_us and answers the values recorded
 * since the newest one at least window_us old (tb_hist_since), or since the
 * phase's start while the phase is younger. The measured histograms are
 * never touched: snapshots are copies, and the window's values a new
 * histogram.
 */
#ifndef TB_METRICS_RECENT_H
#define TB_METRICS_RECENT_H

#include <stdint.h>

#include "qos/hist.h"

typedef struct tb_recent tb_recent;

tb_recent *tb_recent_new(uint64_t window_us);
void tb_recent_free(tb_recent *r); /* NULL is a no-op */

/* A new phase begins (or steady state ended): every snapshot is forgotten;
 * the ops already seen stay known (tb_recent_n). */
void tb_recent_reset(tb_recent *r);

/*
 * Op (workload, op)'s histogram of the phase so far, at now_us (monotonic):
 * cum is taken (freed later by r). Returns a new histogram of the values
 * in the window ending now (caller frees), and its length in *window_us:
 * now less the time of the snapshot it starts from, or less the first
 * snapshot's time of any op since the last reset while the phase is younger
 * than the window (a snapshot that comes before the phase's start counts as
 * its start).
 */
tb_hist *tb_recent_update(tb_recent *r, const char *workload, const char *op, tb_hist *cum, uint64_t now_us,
                          uint64_t *window_us);

/* The ops seen so far (since tb_recent_new), in the order first seen. */
int tb_recent_n(const tb_recent *r);
const char *tb_recent_workload(const tb_recent *r, int i);
const char *tb_recent_op(const tb_recent *r, int i);

#endif
