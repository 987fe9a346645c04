/*
 * run_metrics.h: `tilebench run --metrics ADDR:PORT`: a run observer
 * (coordinator/observer.h) that keeps the run's live figures in a metrics
 * registry (metrics/metrics.h) for Prometheus to scrape, and passes every
 * callback on to the next observer (the console). The metric names, labels
 * and what each counts are in docs/metrics.md.
 */
#ifndef TB_CLI_RUN_METRICS_H
#define TB_CLI_RUN_METRICS_H

#include <stdint.h>

#include "coordinator/coordinator.h"
#include "coordinator/observer.h"
#include "metrics/metrics.h"
#include "metrics/recent.h"
#include "tiles/tiledef.h"

typedef struct tb_run_metrics {
    tb_metrics *m;
    tb_run_observer next;         /* called after each update */
    uint64_t ops_base, errs_base; /* live counts of the levels before this one */
    uint64_t last_ops, last_errs; /* the level's, as last seen */
    int info_done;                /* the meters' info gauges are set */
    uint64_t last_mono[TB_MAX_METERS];
    int have_w[TB_MAX_METERS]; /* the latest sample of meter i is valid */
    double w[TB_MAX_METERS];
    /* recent latency: each op's snapshots of the phase in progress */
    tb_recent *recent;
    int level_seq;                  /* levels begun */
    int recent_level, recent_phase; /* the phase the snapshots are of (level_seq, phase); phase 0: none */
} tb_run_metrics;

/* Declares the run's metrics in m and fills *obs with callbacks that update
 * them, then call next's (copied; NULL: none). rm and m must outlive the run. */
void tb_run_metrics_init(tb_run_metrics *rm, tb_metrics *m, const tb_run_observer *next, tb_run_observer *obs);
/* The op counters (tilebench_ops_total, tilebench_op_errors_total) at 0
 * for every op of every workload def names, before the first op. */
void tb_run_metrics_ops(tb_run_metrics *rm, const tb_tiledef *def);
/* Frees what rm holds (not m). */
void tb_run_metrics_free(tb_run_metrics *rm);

#endif
