/*
 * lg_live.h: a worker's live latency record for live metrics: the
 * corrected latency of the ops counted in one steady-state phase, per
 * (workload, op), since the coordinator last took it (an interval, about a
 * second). It is apart from the phase's measured histograms, which it never
 * touches, and records nothing until the coordinator asks for a phase, so a
 * run without live metrics pays nothing for it. Guarded by the worker's lock.
 */
#ifndef TB_LOADGEN_LG_LIVE_H
#define TB_LOADGEN_LG_LIVE_H

#include <stdint.h>

#include "loadgen/loadgen.h"

typedef struct tb_lg_live {
    int phase; /* the phase (0-based) recorded; -1: none asked */
    tb_hist *h[TB_MAX_WORKLOADS][TB_MAX_OPS];
} tb_lg_live;

/* Empty, recording nothing. */
void tb_lg_live_init(tb_lg_live *l);
/* Frees its histograms; records nothing until the next swap. */
void tb_lg_live_clear(tb_lg_live *l);
/* One op of phase, workload w, op k, that the phase counts: its latency. */
void tb_lg_live_record(tb_lg_live *l, int phase, int w, int k, uint64_t latency_us);
/* Moves l's record into *taken (pointers only: cheap under the lock) and
 * has l record phase from now on. */
void tb_lg_live_swap(tb_lg_live *l, int phase, tb_lg_live *taken);
/* Adds a taken record of phase into out's tile-1 cells (count and hist;
 * a record of another phase is dropped), then frees it. */
void tb_lg_live_drain(tb_lg_live *taken, int phase, tb_lg_stats *out);

#endif
