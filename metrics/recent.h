/*
 * recent.h: latency over a recent window of a phase in progress, for live
 * metrics. About once a second the load generator gives, per (workload, op),
 * a histogram of the ops that ended since the previous time (an interval);
 * a window keeps those of the last window_us and answers them merged: the
 * ops of the last window_us, or of the phase so far while it is younger.
 * The measured histograms are not involved: the intervals are a record of
 * their own.
 */
#ifndef TB_METRICS_RECENT_H
#define TB_METRICS_RECENT_H

#include <stdint.h>

#include "qos/hist.h"

typedef struct tb_recent tb_recent;

tb_recent *tb_recent_new(uint64_t window_us);
void tb_recent_free(tb_recent *r); /* NULL is a no-op */

/* A new phase begins (or steady state ended): every interval is forgotten;
 * the ops already seen stay known (tb_recent_n). */
void tb_recent_reset(tb_recent *r);

/*
 * Op (workload, op)'s interval ending at now_us (monotonic): its ops since
 * the previous update; iv is taken (freed later by r). Returns a new
 * histogram of the intervals that end in the window (now_us - window_us,
 * now_us], merged (caller frees), and in *window_us the time they span:
 * from the end of the newest interval dropped, or from the first update of
 * any op since the last reset (the phase's start), to now_us.
 */
tb_hist *tb_recent_update(tb_recent *r, const char *workload, const char *op, tb_hist *iv, uint64_t now_us,
                          uint64_t *window_us);

/* The ops seen so far (since tb_recent_new), in the order first seen. */
int tb_recent_n(const tb_recent *r);
const char *tb_recent_workload(const tb_recent *r, int i);
const char *tb_recent_op(const tb_recent *r, int i);

#endif
