/*
 * run_metrics.c: the run's live figures as Prometheus metrics (see
 * run_metrics.h; docs/metrics.md lists them). Each callback updates the
 * registry and then calls the next observer's, so the console shows the run
 * as it does without --metrics.
 */
#include "cli/run_metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/hist.h"
#include "tiles/kinds.h"

/* The window of tilebench_recent_latency_seconds. */
#define RECENT_WINDOW_US 10000000ull

typedef struct family_def {
    const char *name;
    tb_metric_type type;
    const char *help;
} family_def;

static const family_def families[] = {
    {"tilebench_run_info", TB_METRIC_GAUGE, "The run in progress: its id, tile and tile spec (value 1)."},
    {"tilebench_stage", TB_METRIC_GAUGE,
     "1 for the stage the run is in (starting, idle, ramp-up, warm-up, steady, ramp-down, stopping, done), 0 for "
     "the others."},
    {"tilebench_level", TB_METRIC_GAUGE, "The load level in progress, 1-based, of tilebench_levels."},
    {"tilebench_levels", TB_METRIC_GAUGE, "Load levels of the run, over every repeat."},
    {"tilebench_level_tiles", TB_METRIC_GAUGE, "Tiles of the load level in progress."},
    {"tilebench_phase", TB_METRIC_GAUGE, "The steady-state phase in progress, 1-based; 0 in the other stages."},
    {"tilebench_stage_left_seconds", TB_METRIC_GAUGE, "Time left in the stage in progress (whole seconds)."},
    {"tilebench_ops_per_second", TB_METRIC_GAUGE, "Ops completed per second since the previous progress update."},
    {"tilebench_run_ops_total", TB_METRIC_COUNTER,
     "Ops completed in every stage of every level so far, all workloads, as the load generator counts them live "
     "(updated about five times a second)."},
    {"tilebench_run_errors_total", TB_METRIC_COUNTER, "Failed ops in every stage of every level so far, counted live."},
    {"tilebench_meter_info", TB_METRIC_GAUGE,
     "A power meter of the run: its index, URI (passwords redacted), model, serial, firmware, estimated (value 1)."},
    {"tilebench_power_watts", TB_METRIC_GAUGE, "The latest valid power sample of the meter, W."},
    {"tilebench_power_sample_timestamp_seconds", TB_METRIC_GAUGE,
     "Wall-clock time of the meter's latest valid sample, seconds since the epoch."},
    {"tilebench_power_bad_samples_total", TB_METRIC_COUNTER,
     "The meter's samples seen flagged invalid, missing, over range or implausible."},
    {"tilebench_power_sum_watts", TB_METRIC_GAUGE,
     "The latest samples of every meter summed, W; NaN while a meter's latest sample is bad or missing."},
    {"tilebench_idle_watts", TB_METRIC_GAUGE, "Mean power over active idle, W."},
    {"tilebench_ops_total", TB_METRIC_COUNTER,
     "Successful steady-state ops of the workload's op, summed over tiles, phases and levels: the count each stored "
     "phase gets (started and ended in the phase). Advances when a phase ends."},
    {"tilebench_op_errors_total", TB_METRIC_COUNTER,
     "Failed steady-state ops of the workload's op, summed over tiles, phases and levels. Advances when a phase ends."},
    {"tilebench_phase_latency_seconds", TB_METRIC_GAUGE,
     "Latency (from the intended start) of the op over the last finished steady-state phase, all tiles merged, at "
     "quantile 0.5 or 0.99; NaN when the op ran none in it."},
    {"tilebench_recent_latency_seconds", TB_METRIC_GAUGE,
     "Latency (from the intended start) of the op over the last 10 s of the steady-state phase in progress (its "
     "start when it is younger), all tiles merged, at quantile 0.5 or 0.99; NaN outside steady state or when the op "
     "ran none in the window."},
    {"tilebench_recent_ops", TB_METRIC_GAUGE,
     "Successful ops of the op in the window of tilebench_recent_latency_seconds, all tiles."},
    {"tilebench_recent_window_seconds", TB_METRIC_GAUGE,
     "Length of the window of tilebench_recent_latency_seconds (10 s, less at a phase's start; 0 outside steady "
     "state)."},
    {"tilebench_phase_score", TB_METRIC_GAUGE, "Score of the phase stored last; NaN before the first."},
    {"tilebench_phase_watts", TB_METRIC_GAUGE,
     "Mean power of the phase stored last, W; NaN before the first or when it had no valid sample."},
    {"tilebench_phase_ppkw", TB_METRIC_GAUGE,
     "Performance per kilowatt of the phase stored last; NaN before the first."},
    {"tilebench_phases_stored_total", TB_METRIC_COUNTER, "Steady-state phases stored so far."},
    {"tilebench_loadgen_loop_stall_max_seconds", TB_METRIC_GAUGE,
     "Worst lateness of the load generator's loop ticker over the last finished phase."},
    {"tilebench_loadgen_loop_stall_p99_seconds", TB_METRIC_GAUGE,
     "99th percentile lateness of the load generator's loop ticker over the last finished phase."},
    {"tilebench_loadgen_cpu_ratio", TB_METRIC_GAUGE,
     "CPU the load generator used for work over the last finished phase, as a share of its threads' time."},
    {"tilebench_host_cpu_utilization_ratio", TB_METRIC_GAUGE,
     "Host CPU utilization (100% - idle - iowait) over the last finished phase or active idle, 0..1."},
};

static const char *const stages[] = {"starting", "idle",      "ramp-up",  "warm-up",
                                     "steady",   "ramp-down", "stopping", "done"};

static void set(tb_run_metrics *rm, const char *name, double v) { (void)tb_metrics_set(rm->m, name, NULL, v); }

static void set_stage(tb_run_metrics *rm, const char *stage) {
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
        (void)tb_metrics_set(rm->m, "tilebench_stage", (const char *[]){"stage", stages[i], NULL},
                             strcmp(stages[i], stage) == 0);
}

/* One (workload, op) of a phase: its cells over tiles. */
typedef struct op_group {
    const char *workload, *op;
    uint64_t count, errors;
    tb_hist *h;
} op_group;

/* The cells grouped by (workload, op), their histograms merged over tiles
 * (copies: the cells' stay as they are). *ng gets how many; caller frees
 * each h and the array. */
static op_group *group_ops(int n, const tb_run_op_count *ops, int *ng) {
    op_group *g = xcalloc((size_t)(n > 0 ? n : 1), sizeof *g);
    *ng = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < *ng && (strcmp(g[k].workload, ops[i].workload) != 0 || strcmp(g[k].op, ops[i].op) != 0))
            k++;
        if (k == *ng) {
            g[k].workload = ops[i].workload;
            g[k].op = ops[i].op;
            g[k].h = tb_hist_new();
            (*ng)++;
        }
        g[k].count += ops[i].count;
        g[k].errors += ops[i].errors;
        tb_hist_merge(g[k].h, ops[i].hist);
    }
    return g;
}

/* p50 and p99 of h into family name for (workload, op); NaN when h is empty. */
static void set_quantiles(tb_run_metrics *rm, const char *name, const char *workload, const char *op,
                          const tb_hist *h) {
    int none = !h || tb_hist_count(h) == 0;
    (void)tb_metrics_set(rm->m, name, (const char *[]){"workload", workload, "op", op, "quantile", "0.5", NULL},
                         none ? NAN : (double)tb_hist_percentile(h, 50) / 1e6);
    (void)tb_metrics_set(rm->m, name, (const char *[]){"workload", workload, "op", op, "quantile", "0.99", NULL},
                         none ? NAN : (double)tb_hist_percentile(h, 99) / 1e6);
}

static void on_run_begun(void *arg, int64_t run_id, const char *tile_name, const char *tile_spec, const char *db) {
    tb_run_metrics *rm = arg;
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)run_id);
    (void)tb_metrics_set(rm->m, "tilebench_run_info",
                         (const char *[]){"run_id", id, "tile", tile_name, "tiles", tile_spec, NULL}, 1);
    if (rm->next.run_begun) rm->next.run_begun(rm->next.arg, run_id, tile_name, tile_spec, db);
}

static void on_reference(void *arg, const char *workload, const char *source) {
    tb_run_metrics *rm = arg;
    if (rm->next.reference) rm->next.reference(rm->next.arg, workload, source);
}

static void on_agents_waiting(void *arg, int n, uint64_t wait_us) {
    tb_run_metrics *rm = arg;
    if (rm->next.agents_waiting) rm->next.agents_waiting(rm->next.arg, n, wait_us);
}

static void on_sut_starting(void *arg, const char *dir, int tiles) {
    tb_run_metrics *rm = arg;
    set_stage(rm, "starting");
    if (rm->next.sut_starting) rm->next.sut_starting(rm->next.arg, dir, tiles);
}

static void on_idle_begun(void *arg, uint64_t idle_us) {
    tb_run_metrics *rm = arg;
    set_stage(rm, "idle");
    set(rm, "tilebench_stage_left_seconds", (double)idle_us / 1e6);
    if (rm->next.idle_begun) rm->next.idle_begun(rm->next.arg, idle_us);
}

static void on_idle_progress(void *arg, uint64_t left_us, double watts) {
    tb_run_metrics *rm = arg;
    set(rm, "tilebench_stage_left_seconds", (double)left_us / 1e6);
    if (rm->next.idle_progress) rm->next.idle_progress(rm->next.arg, left_us, watts);
}

static void on_idle_done(void *arg, double watts, int estimated) {
    tb_run_metrics *rm = arg;
    set(rm, "tilebench_idle_watts", watts);
    if (rm->next.idle_done) rm->next.idle_done(rm->next.arg, watts, estimated);
}

static void on_level_begun(void *arg, int tiles, const tb_stage_def *sd) {
    tb_run_metrics *rm = arg;
    /* the load generator's live counts start again at 0 in each level */
    rm->ops_base += rm->last_ops;
    rm->errs_base += rm->last_errs;
    rm->last_ops = rm->last_errs = 0;
    rm->level_seq++;
    set(rm, "tilebench_level_tiles", tiles);
    if (rm->next.level_begun) rm->next.level_begun(rm->next.arg, tiles, sd);
}

static void on_level_alone(void *arg, int tiles, const char *alone) {
    tb_run_metrics *rm = arg;
    if (rm->next.level_alone) rm->next.level_alone(rm->next.arg, tiles, alone);
}

/* Out of steady state: no recent latency (NaN), no window; the next phase
 * starts its own. */
static void recent_off(tb_run_metrics *rm) {
    if (!rm->recent_phase) return;
    rm->recent_phase = 0;
    tb_recent_reset(rm->recent);
    set(rm, "tilebench_recent_window_seconds", 0);
    for (int i = 0; i < tb_recent_n(rm->recent); i++) {
        const char *wl = tb_recent_workload(rm->recent, i), *op = tb_recent_op(rm->recent, i);
        set_quantiles(rm, "tilebench_recent_latency_seconds", wl, op, NULL);
        (void)tb_metrics_set(rm->m, "tilebench_recent_ops", (const char *[]){"workload", wl, "op", op, NULL}, 0);
    }
}

static void on_progress(void *arg, const tb_run_progress *p) {
    tb_run_metrics *rm = arg;
    if (p->ops > rm->last_ops) rm->last_ops = p->ops;
    if (p->errors > rm->last_errs) rm->last_errs = p->errors;
    set_stage(rm, p->stage);
    set(rm, "tilebench_level", p->level);
    set(rm, "tilebench_levels", p->levels_total);
    set(rm, "tilebench_level_tiles", p->tiles);
    set(rm, "tilebench_phase", p->phase);
    set(rm, "tilebench_stage_left_seconds", (double)p->left_us / 1e6);
    set(rm, "tilebench_ops_per_second", p->ops_per_s);
    set(rm, "tilebench_run_ops_total", (double)(rm->ops_base + rm->last_ops));
    set(rm, "tilebench_run_errors_total", (double)(rm->errs_base + rm->last_errs));
    if (p->phase == 0) recent_off(rm);
    if (rm->next.progress) rm->next.progress(rm->next.arg, p);
}

static void on_progress_end(void *arg) {
    tb_run_metrics *rm = arg;
    if (rm->next.progress_end) rm->next.progress_end(rm->next.arg);
}

static void on_phase_done(void *arg, const tb_level_result *lr, int n_rules, int estimated) {
    tb_run_metrics *rm = arg;
    set(rm, "tilebench_phase_score", lr->score);
    set(rm, "tilebench_phase_watts", lr->avg_watts >= 0 ? lr->avg_watts : NAN); /* < 0: no valid sample */
    set(rm, "tilebench_phase_ppkw", lr->ppkw);
    (void)tb_metrics_add(rm->m, "tilebench_phases_stored_total", NULL, 1);
    if (rm->next.phase_done) rm->next.phase_done(rm->next.arg, lr, n_rules, estimated);
}

static void on_telemetry(void *arg, const tb_telemetry *t) {
    tb_run_metrics *rm = arg;
    if (isfinite(t->cpu_util_pct)) set(rm, "tilebench_host_cpu_utilization_ratio", t->cpu_util_pct / 100.0);
    if (rm->next.telemetry) rm->next.telemetry(rm->next.arg, t);
}

static void on_message(void *arg, tb_run_msg_kind kind, const char *msg) {
    tb_run_metrics *rm = arg;
    if (rm->next.message) rm->next.message(rm->next.arg, kind, msg);
}

static void on_report_written(void *arg, const char *path) {
    tb_run_metrics *rm = arg;
    if (rm->next.report_written) rm->next.report_written(rm->next.arg, path);
}

static void on_run_done(void *arg, int64_t run_id, const char *status) {
    tb_run_metrics *rm = arg;
    recent_off(rm);
    set_stage(rm, "done");
    if (rm->next.run_done) rm->next.run_done(rm->next.arg, run_id, status);
}

static void meter_info(tb_run_metrics *rm, int n, const tb_meter_info *info) {
    for (int i = 0; i < n; i++) {
        char idx[16];
        snprintf(idx, sizeof idx, "%d", i);
        (void)tb_metrics_set(rm->m, "tilebench_meter_info",
                             (const char *[]){"meter", idx, "uri", info[i].uri, "model", info[i].model, "serial",
                                              info[i].serial, "firmware", info[i].firmware, "estimated",
                                              info[i].estimated ? "1" : "0", NULL},
                             1);
    }
    rm->info_done = 1;
}

static void on_meters(void *arg, int n, const tb_meter_info *info, const tb_sample *latest) {
    tb_run_metrics *rm = arg;
    double sum = 0;
    if (n > TB_MAX_METERS) n = TB_MAX_METERS;
    if (!rm->info_done) meter_info(rm, n, info);
    for (int i = 0; i < n; i++) {
        const tb_sample *s = &latest[i];
        char idx[16];
        const char *const labels[] = {"meter", idx, "uri", info[i].uri, NULL};
        snprintf(idx, sizeof idx, "%d", i);
        if (s->mono_us == 0) { /* no sample lately: the sum is unknown */
            rm->have_w[i] = 0;
        } else if (s->mono_us != rm->last_mono[i]) {
            rm->last_mono[i] = s->mono_us;
            rm->have_w[i] = !(s->flags & TB_SAMPLE_BAD) && isfinite(s->watts);
            if (rm->have_w[i]) {
                rm->w[i] = s->watts;
                (void)tb_metrics_set(rm->m, "tilebench_power_watts", labels, s->watts);
                (void)tb_metrics_set(rm->m, "tilebench_power_sample_timestamp_seconds", labels,
                                     (double)s->wall_us / 1e6);
            }
            (void)tb_metrics_add(rm->m, "tilebench_power_bad_samples_total", labels, rm->have_w[i] ? 0 : 1);
        }
        sum = rm->have_w[i] ? sum + rm->w[i] : NAN;
    }
    set(rm, "tilebench_power_sum_watts", sum);
    if (rm->next.meters) rm->next.meters(rm->next.arg, n, info, latest);
}

static void on_phase_ops(void *arg, int tiles, int phase, int n, const tb_run_op_count *ops) {
    tb_run_metrics *rm = arg;
    int ng;
    op_group *g = group_ops(n, ops, &ng);
    for (int k = 0; k < ng; k++) {
        const char *const labels[] = {"workload", g[k].workload, "op", g[k].op, NULL};
        (void)tb_metrics_add(rm->m, "tilebench_ops_total", labels, (double)g[k].count);
        (void)tb_metrics_add(rm->m, "tilebench_op_errors_total", labels, (double)g[k].errors);
        set_quantiles(rm, "tilebench_phase_latency_seconds", g[k].workload, g[k].op, g[k].h);
        tb_hist_free(g[k].h);
    }
    free(g);
    if (rm->next.phase_ops) rm->next.phase_ops(rm->next.arg, tiles, phase, n, ops);
}

/* The phase in progress so far: each op's latency over the recent window. */
static void on_phase_live(void *arg, int tiles, int phase, int n, const tb_run_op_count *ops) {
    tb_run_metrics *rm = arg;
    uint64_t now = tb_now_us(), window_us = 0;
    int ng;
    op_group *g;
    if (phase != rm->recent_phase || rm->level_seq != rm->recent_level) { /* a new phase: a new window */
        tb_recent_reset(rm->recent);
        rm->recent_phase = phase;
        rm->recent_level = rm->level_seq;
    }
    g = group_ops(n, ops, &ng);
    for (int k = 0; k < ng; k++) {
        tb_hist *w = tb_recent_update(rm->recent, g[k].workload, g[k].op, g[k].h, now, &window_us);
        set_quantiles(rm, "tilebench_recent_latency_seconds", g[k].workload, g[k].op, w);
        (void)tb_metrics_set(rm->m, "tilebench_recent_ops",
                             (const char *[]){"workload", g[k].workload, "op", g[k].op, NULL},
                             (double)tb_hist_count(w));
        tb_hist_free(w);
    }
    if (ng > 0) set(rm, "tilebench_recent_window_seconds", (double)window_us / 1e6);
    free(g);
    if (rm->next.phase_live) rm->next.phase_live(rm->next.arg, tiles, phase, n, ops);
}

static void on_health(void *arg, const tb_run_health *h) {
    tb_run_metrics *rm = arg;
    set(rm, "tilebench_loadgen_loop_stall_max_seconds", (double)h->stall_max_us / 1e6);
    set(rm, "tilebench_loadgen_loop_stall_p99_seconds", (double)h->stall_p99_us / 1e6);
    set(rm, "tilebench_loadgen_cpu_ratio", h->cpu_pct / 100.0);
    if (rm->next.health) rm->next.health(rm->next.arg, h);
}

/* What a scrape has from the run's start: the counters at 0 (so that
 * increase() and rate() see the first phase's step), the level and phase
 * gauges at 0, the per-phase gauges NaN until a phase is stored. */
static void serve_from_start(tb_run_metrics *rm) {
    static const char *const counters[] = {"tilebench_run_ops_total", "tilebench_run_errors_total",
                                           "tilebench_phases_stored_total"};
    static const char *const zero[] = {"tilebench_level", "tilebench_levels", "tilebench_level_tiles",
                                       "tilebench_phase", "tilebench_stage_left_seconds"};
    static const char *const unknown[] = {"tilebench_phase_score",
                                          "tilebench_phase_watts",
                                          "tilebench_phase_ppkw",
                                          "tilebench_loadgen_loop_stall_max_seconds",
                                          "tilebench_loadgen_loop_stall_p99_seconds",
                                          "tilebench_loadgen_cpu_ratio"};
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        (void)tb_metrics_add(rm->m, counters[i], NULL, 0);
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
        set(rm, zero[i], 0);
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        set(rm, unknown[i], NAN);
}

void tb_run_metrics_ops(tb_run_metrics *rm, const tb_tiledef *def) {
    for (int w = 0; def && w < def->n_workloads; w++) {
        const tb_kind *k = tb_kind_find(def->workloads[w].kind);
        for (int i = 0; k && i < k->n_ops; i++) {
            const char *const labels[] = {"workload", def->workloads[w].name, "op", k->op_names[i], NULL};
            (void)tb_metrics_add(rm->m, "tilebench_ops_total", labels, 0);
            (void)tb_metrics_add(rm->m, "tilebench_op_errors_total", labels, 0);
        }
    }
}

void tb_run_metrics_init(tb_run_metrics *rm, tb_metrics *m, const tb_run_observer *next, tb_run_observer *obs) {
    char err[TB_ERR_LEN];
    memset(rm, 0, sizeof *rm);
    rm->m = m;
    rm->recent = tb_recent_new(RECENT_WINDOW_US);
    if (next) rm->next = *next;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (tb_metrics_declare(m, families[i].name, families[i].type, families[i].help, err) != 0)
            tb_log(TB_LOG_ERROR, "run metrics: %s", err); /* a name above is wrong: a bug */
    set_stage(rm, "starting");                            /* instruments, the run row, the SUT */
    serve_from_start(rm);
    memset(obs, 0, sizeof *obs);
    obs->run_begun = on_run_begun;
    obs->reference = on_reference;
    obs->agents_waiting = on_agents_waiting;
    obs->sut_starting = on_sut_starting;
    obs->idle_begun = on_idle_begun;
    obs->idle_progress = on_idle_progress;
    obs->idle_done = on_idle_done;
    obs->level_begun = on_level_begun;
    obs->level_alone = on_level_alone;
    obs->progress = on_progress;
    obs->progress_end = on_progress_end;
    obs->phase_done = on_phase_done;
    obs->telemetry = on_telemetry;
    obs->message = on_message;
    obs->report_written = on_report_written;
    obs->run_done = on_run_done;
    obs->meters = on_meters;
    obs->phase_ops = on_phase_ops;
    obs->phase_live = on_phase_live;
    obs->health = on_health;
    obs->arg = rm;
}

void tb_run_metrics_free(tb_run_metrics *rm) {
    tb_recent_free(rm->recent);
    rm->recent = NULL;
}
