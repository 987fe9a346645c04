/*
 * level.c: one load level: its timeline (ramp-up, warm-up, N steady-state
 * phases, ramp-down), the waits between its stages with live progress for
 * the observer, each phase collected from the load generator and handed to
 * phase.c, and the load generator's health over each phase as events.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/run_ctx.h"

/* A phase whose load generator loop stalled longer than this gets a warning
 * event: ops due then started late (issue 10's target for worker loops). */
#define STALL_WARN_US 10000

static const char *stage_names[] = {"ramp-up", "warm-up", "steady", "ramp-down"};

/* How far back a meter's latest sample may be for the observer's meters
 * callback: a few poller ticks. */
#define METERS_RECENT_US 3000000

void tb_coord_tell_meters(run_ctx *c) {
    tb_sample latest[TB_MAX_METERS];
    tb_poll_sample *ps = NULL;
    uint64_t now = tb_now_us();
    int n;
    if (!c->obs->meters || !c->poller || c->n_meters <= 0) return;
    memset(latest, 0, sizeof latest);
    n = tb_poller_window(c->poller, now > METERS_RECENT_US ? now - METERS_RECENT_US : 0, UINT64_MAX, &ps);
    for (int i = 0; i < n; i++) /* ordered by time: the last of each meter wins */
        if (ps[i].meter >= 0 && ps[i].meter < c->n_meters) latest[ps[i].meter] = ps[i].s;
    free(ps);
    c->obs->meters(c->obs->arg, c->n_meters, c->infos, latest);
}

/* How often a phase in progress is shown to the observer's phase_live. */
#define PHASE_LIVE_US 1000000

/* A phase's cells, for the observer's phase_ops (as collected) or
 * phase_live (an interval, in tile-1 cells). */
static void tell_cells(run_ctx *c, int p, tb_lg_stats *st, void (*cb)(void *, int, int, int, const tb_run_op_count *)) {
    const tb_loadgen *lg = c->lg;
    tb_run_op_count *oc;
    int n = 0;
    if (!cb || !st) return;
    oc = xcalloc((size_t)st->tiles * (size_t)st->n_workloads * TB_MAX_OPS, sizeof *oc);
    for (int t = 1; t <= st->tiles; t++)
        for (int w = 0; w < st->n_workloads; w++)
            for (int k = 0; k < lg->ops->n_ops(lg->self, w); k++) {
                const tb_opstat *os = tb_lg_cell(st, t, w, k);
                tb_run_op_count *o = &oc[n++];
                o->tile = t;
                o->workload = c->o->def->workloads[w].name;
                o->op = lg->ops->op_name(lg->self, w, k);
                o->count = os->count;
                o->errors = os->errors;
                o->hist = os->hist;
            }
    cb(c->obs->arg, st->tiles, p + 1, n, oc);
    free(oc);
}

static void tell_phase_ops(run_ctx *c, int p, tb_lg_stats *st) { tell_cells(c, p, st, c->obs->phase_ops); }

/* Phase p's latency since the previous call, for live figures: an interval
 * the load generator keeps apart from the phase's statistics. */
static void tell_phase_live(run_ctx *c, int p) {
    tb_lg_stats *st = NULL;
    if (!c->obs->phase_live || !c->lg || !c->lg->ops->take_live) return;
    if (c->lg->ops->take_live(c->lg->self, p, &st) == 0) tell_cells(c, p, st, c->obs->phase_live);
    tb_lg_stats_free(st);
}

/* The live figures of the stage in progress, for the observer. */
static void progress(run_ctx *c, int tiles, const char *stage, int phase, uint64_t stage_end_us, uint64_t *last_ops,
                     uint64_t *last_t) {
    uint64_t now = tb_now_us(), ops = 0, errs = 0;
    tb_run_progress p;
    if (!c->obs->progress) return;
    memset(&p, 0, sizeof p);
    if (c->lg) c->lg->ops->live(c->lg->self, &ops, &errs);
    if (*last_t && now > *last_t) p.ops_per_s = (double)(ops - *last_ops) * 1e6 / (double)(now - *last_t);
    *last_ops = ops;
    *last_t = now;
    p.level = c->levels_done + 1;
    p.levels_total = c->levels_total;
    p.tiles = tiles;
    p.stage = stage;
    p.alone = c->alone ? c->alone->name : NULL;
    p.phase = phase;
    p.left_us = stage_end_us > now ? (stage_end_us - now) / 1000000 * 1000000 : 0;
    p.ops = ops;
    p.errors = errs;
    p.watts = c->poller ? tb_poller_latest_watts(c->poller) : NAN;
    p.estimated = tb_coord_estimated(c);
    c->obs->progress(c->obs->arg, &p);
}

/* Sleeps until the monotonic deadline, showing progress; returns -1 early
 * when the run was interrupted. */
static int wait_until(run_ctx *c, uint64_t deadline_us, int tiles, const char *stage, int phase) {
    uint64_t last_ops = 0, last_t = 0, live_t = 0;
    for (;;) {
        uint64_t now = tb_now_us();
        struct timespec ts;
        uint64_t step;
        if (tb_coord_stopped(c)) return -1;
        if (now >= deadline_us) return 0;
        progress(c, tiles, stage, phase, deadline_us, &last_ops, &last_t);
        tb_coord_tell_meters(c);
        if (phase > 0 && now >= live_t + PHASE_LIVE_US) {
            tell_phase_live(c, phase - 1);
            live_t = now;
        }
        step = deadline_us - now;
        if (step > 200000) step = 200000;
        ts.tv_sec = (time_t)(step / 1000000);
        ts.tv_nsec = (long)(step % 1000000) * 1000;
        nanosleep(&ts, NULL);
    }
}

int tb_coord_wait(run_ctx *c, uint64_t deadline_us, int tiles, const char *stage) {
    return wait_until(c, deadline_us, tiles, stage, 0);
}

/* Stores the stage that begins now, [t0, t1) as planned (stages table), so
 * the report can shade it under the power samples. A stage row is drawing
 * only: when it cannot be stored (a full disk) the run goes on, and the
 * phase's own write says what was lost. */
static void stage_begins(run_ctx *c, const char *stage, int tiles, int phase, uint64_t t0, uint64_t t1) {
    tb_stage_row row = {stage, tiles, c->repeat, phase, c->alone ? c->alone->name : NULL, t0, t1};
    char e[TB_ERR_LEN];
    if (tb_store_put_stage(c->store, c->run_id, &row, e) != 0)
        tb_log(TB_LOG_WARN, "%s (the report's power chart will not shade it)", e);
}

/* The level's timeline, starting shortly from now. */
static void plan_level(const tb_stage_def *sd, int tiles, uint64_t lead_us, tb_level_plan *pl) {
    uint64_t t;
    memset(pl, 0, sizeof *pl);
    pl->tiles = tiles;
    /* time to create the users before the first is due (and, for agents,
     * to get them the plan) */
    pl->start_us = tb_now_us() + (lead_us ? lead_us : 200000);
    pl->ramp_up_us = sd->ramp_up_us;
    pl->n_phases = sd->phases;
    t = pl->start_us + sd->ramp_up_us + sd->warm_up_us;
    for (int p = 0; p < sd->phases; p++) {
        pl->phase_start_us[p] = t;
        pl->phase_end_us[p] = t + sd->steady_us;
        t += sd->steady_us;
    }
}

/* The connect storm of ramp-up shows in the stall record until the first
 * phase begins, apart from steady state. */
static void note_ramp_up_stalls(run_ctx *c, int tiles, const tb_lg_stalls *sl) {
    char msg[256];
    snprintf(msg, sizeof msg,
             "%d tiles ramp-up and warm-up: load generator loop stall max %.1f ms, p99 %.1f ms "
             "(own work: max %.1f ms, p99 %.1f ms)",
             tiles, (double)sl->max_us / 1000.0, (double)sl->p99_us / 1000.0, (double)sl->own_max_us / 1000.0,
             (double)sl->own_p99_us / 1000.0);
    tb_coord_note(c, "info", msg);
}

/* The load generator's own health over phase p, for the reader to judge the
 * numbers; a warning when its loop stalled long (not invalid: intended-start
 * timing puts the delay into the ops' latency, but the reader should know
 * where it came from). */
static void note_phase_health(run_ctx *c, const tb_level_plan *pl, int p, const tb_lg_stalls *sl, double cpu_s) {
    char msg[512], wait[32];
    uint64_t j50, j99, jmax;
    int threads = c->lg->ops->threads(c->lg->self);
    if (isnan(sl->cpu_wait_pct))
        snprintf(wait, sizeof wait, "n/a");
    else
        snprintf(wait, sizeof wait, "%.1f%%", sl->cpu_wait_pct);
    tb_poller_jitter(c->poller, pl->phase_start_us[p], &j50, &j99, &jmax);
    snprintf(msg, sizeof msg,
             "%d tiles phase %d: load generator loop stall max %.1f ms, p99 %.1f ms (own work: "
             "max %.1f ms, p99 %.1f ms; workers waited for a CPU %s of the time); CPU %.0f%% of %d "
             "threads; meter poller lateness p50 %.2f ms, p99 %.2f ms, max %.2f ms",
             pl->tiles, p + 1, (double)sl->max_us / 1000.0, (double)sl->p99_us / 1000.0,
             (double)sl->own_max_us / 1000.0, (double)sl->own_p99_us / 1000.0, wait,
             100.0 * cpu_s / ((double)c->o->stages.steady_us / 1e6 * threads), threads, (double)j50 / 1000.0,
             (double)j99 / 1000.0, (double)jmax / 1000.0);
    tb_coord_say(c, "info", TB_RUN_MSG_PHASE_HEALTH, msg);
    if (c->obs->health) {
        tb_run_health h = {.tiles = pl->tiles,
                           .phase = p + 1,
                           .stall_max_us = sl->max_us,
                           .stall_p99_us = sl->p99_us,
                           .own_max_us = sl->own_max_us,
                           .own_p99_us = sl->own_p99_us,
                           .cpu_wait_pct = sl->cpu_wait_pct,
                           .cpu_pct = 100.0 * cpu_s / ((double)c->o->stages.steady_us / 1e6 * threads),
                           .threads = threads};
        c->obs->health(c->obs->arg, &h);
    }
    /* a load generator of parts warns per part, naming it (parts.c) */
    if (sl->max_us <= STALL_WARN_US || c->lg->ops->parts) return;
    snprintf(msg, sizeof msg,
             "%d tiles phase %d: load generator loop stalled up to %.1f ms (over %d ms; own work %.1f "
             "ms, workers waited for a CPU %s of the time): ops due then started late, and their "
             "latency includes it; on a machine it shares with the SUT, give the load generator "
             "cores of its own (taskset)",
             pl->tiles, p + 1, (double)sl->max_us / 1000.0, STALL_WARN_US / 1000, (double)sl->own_max_us / 1000.0,
             wait);
    tb_coord_say(c, "warning", TB_RUN_MSG_PHASE_STALL, msg);
}

/* Phase p: waits for its end, collects it (the last one after ramp-down,
 * with the whole level's counts) and stores it. 1 passed QoS, 0 failed, -1
 * with err, -2 interrupted before its end, -3 stored but cut short in
 * ramp-down (the level is stopped already). */
static int run_phase(run_ctx *c, const tb_level_plan *pl, int p, char *err) {
    const tb_loadgen *lg = c->lg;
    tb_lg_stats *st = NULL, *all = NULL;
    double cpu0, cpu1;
    uint64_t merged_us;
    tb_lg_stalls sl;
    tb_other_cpu_snap oc;
    int r, cut = 0, last = p == pl->n_phases - 1;
    stage_begins(c, stage_names[2], pl->tiles, p + 1, pl->phase_start_us[p], pl->phase_end_us[p]);
    lg->ops->stalls(lg->self, &sl); /* start the phase's stall record afresh */
    cpu0 = lg->ops->cpu_seconds(lg->self);
    tb_coord_other_cpu_begin(c, &oc);
    if (p == 0) note_ramp_up_stalls(c, pl->tiles, &sl);
    if (wait_until(c, pl->phase_end_us[p] + TB_COORD_COLLECT_GRACE_US, pl->tiles, stage_names[2], p + 1) != 0)
        return -2;
    /* collected first: agents send a phase's statistics, stalls and CPU
     * together at its end */
    if (lg->ops->collect_phase(lg->self, p, &st, err) != 0) return -1;
    tell_phase_ops(c, p, st);
    merged_us = tb_now_us() - pl->phase_end_us[p];
    if (tb_coord_infra_collect(c, p, err) != 0) {
        tb_lg_stats_free(st);
        return -1;
    }
    cpu1 = lg->ops->cpu_seconds(lg->self);
    c->phase_other_cpu_pct = tb_coord_other_cpu_end(c, &oc);
    c->phase_sut_processes = oc.sut_processes;
    lg->ops->stalls(lg->self, &sl);
    if (last)
        stage_begins(c, stage_names[3], pl->tiles, 0, pl->phase_end_us[p],
                     pl->phase_end_us[p] + c->o->stages.ramp_down_us);
    if (last) {
        /* The last phase is stored with the whole level's op counts, after
         * ramp-down. A signal during ramp-down cuts it short, but the phase
         * itself has finished: it is stored before the run ends as
         * interrupted (the counts over every stage then end at the signal). */
        if (wait_until(c, pl->phase_end_us[p] + c->o->stages.ramp_down_us, pl->tiles, stage_names[3], 0) != 0) {
            cut = 1;
            tb_coord_note(c, "info",
                          "interrupted in ramp-down: the finished last phase is stored, and the level's "
                          "counts over every stage end at the signal");
        } else { /* the load stops and the phase is stored: no stage has time left */
            uint64_t lo = 0, lt = 0;
            progress(c, pl->tiles, "stopping", 0, 0, &lo, &lt);
        }
        if (lg->ops->stop_level(lg->self, &all, err) != 0) {
            tb_lg_stats_free(st);
            return -1;
        }
    }
    r = tb_coord_finish_phase(c, pl, p, st, all, cpu1 - cpu0, err);
    if (r >= 0) note_phase_health(c, pl, p, &sl, cpu1 - cpu0);
    if (r >= 0) tb_coord_note_parts_phase(c, pl->tiles, p + 1, merged_us);
    tb_lg_stats_free(st);
    tb_lg_stats_free(all);
    return r >= 0 && cut ? -3 - r : r;
}

static int level_body(run_ctx *c, int tiles, char *err) {
    /* c->repeat says which repeat of the sweep this level belongs to */
    const tb_stage_def *sd = &c->o->stages;
    tb_level_plan pl;
    int all_pass = 1;
    plan_level(sd, tiles, c->lg->lead_us, &pl);
    pl.ramp_up_us = tb_coord_stagger_us(c); /* the users' stagger: all started before a ranging pass in ramp-up */
    if (c->alone) pl.workload_mask = 1u << (c->alone - c->o->def->workloads); /* --interference */
    if (c->obs->level_begun) c->obs->level_begun(c->obs->arg, tiles, sd);
    if (c->lg->ops->start_level(c->lg->self, &pl, err) != 0) return -1;
    if (tb_coord_infra_begin(c, &pl, err) != 0) {
        char e[TB_ERR_LEN];
        c->lg->ops->stop_level(c->lg->self, NULL, e);
        return -1;
    }
    tb_coord_note_placement(c, tiles);
    stage_begins(c, stage_names[0], tiles, 0, pl.start_us, pl.start_us + sd->ramp_up_us);
    if (wait_until(c, pl.start_us + pl.ramp_up_us, tiles, stage_names[0], 0) != 0) goto interrupted;
    /* --ranging: at the start of warm-up, or without one at the end of
     * ramp-up, every user started; the load applied either way */
    if (tb_coord_ranging_in_ramp_up(c)) {
        switch (tb_coord_ranging(c, tiles, stage_names[0], err)) {
        case -1: goto failed;
        case -2: goto interrupted;
        default: break;
        }
    }
    if (wait_until(c, pl.start_us + sd->ramp_up_us, tiles, stage_names[0], 0) != 0) goto interrupted;
    stage_begins(c, stage_names[1], tiles, 0, pl.start_us + sd->ramp_up_us, pl.phase_start_us[0]);
    switch (tb_coord_ranging_in_ramp_up(c) ? 0 : tb_coord_ranging(c, tiles, stage_names[1], err)) {
    case -1: goto failed;
    case -2: goto interrupted;
    default: break;
    }
    if (wait_until(c, pl.phase_start_us[0], tiles, stage_names[1], 0) != 0) goto interrupted;
    for (int p = 0; p < sd->phases; p++) {
        int r = run_phase(c, &pl, p, err);
        if (r == -1) return -1;
        if (r == -2) goto interrupted;
        if (r <= -3) return -2; /* stored, then cut short in ramp-down: the level is stopped already */
        if (r == 0) all_pass = 0;
    }
    return all_pass;
failed : {
    char e[TB_ERR_LEN];
    c->lg->ops->stop_level(c->lg->self, NULL, e);
    return -1;
}
interrupted:
    c->lg->ops->stop_level(c->lg->self, NULL, err);
    return -2;
}

int tb_coord_run_level(run_ctx *c, int tiles, char *err) {
    int r = level_body(c, tiles, err);
    tb_coord_infra_end(c); /* every way out: its ops killed, its clusters and instances removed */
    return r;
}
