/*
 * observer.h: what a run and a campaign tell whoever watches them. The
 * coordinator prints nothing: each moment of the run that a person may want
 * to see (a level begun, a phase finished, a warning, the live progress) is a
 * call of one of these callbacks, with the figures as data. The command line
 * implements them (cli/run_console.c) and decides whether, and how, to show
 * them; a NULL observer or callback sees nothing.
 */
#ifndef TB_COORDINATOR_OBSERVER_H
#define TB_COORDINATOR_OBSERVER_H

#include <stdint.h>

#include "powermeter/meter.h"
#include "powermeter/telemetry.h"
#include "qos/hist.h"
#include "results/store.h"
#include "tiles/tiledef.h"

/* The live state of a load level, about five times a second. */
typedef struct tb_run_progress {
    int level, levels_total; /* 1-based level in progress, of every level of every repeat */
    int tiles;
    const char *stage; /* "ramp-up", "warm-up", "steady", "ramp-down" */
    const char *alone; /* --interference: the workload running alone; NULL: the whole tile */
    int phase;         /* 1-based steady-state phase; 0 in the other stages */
    uint64_t left_us;  /* time left in the stage, in whole seconds */
    double ops_per_s;  /* since the previous call of this stage (0 at its first) */
    uint64_t ops;      /* ops completed so far in the level, any stage */
    uint64_t errors;   /* failed ops so far in the level */
    double watts;      /* the latest power reading; NaN when none */
    int estimated;     /* a meter is a model (estimate:), not a measurement */
} tb_run_progress;

/* One op of one workload in one tile over a steady-state phase just
 * collected: the counts the phase's stored result gets. */
typedef struct tb_run_op_count {
    int tile; /* 1-based */
    const char *workload, *op;
    uint64_t count, errors; /* successful and failed ops of the phase (Faban's rule: started and ended in it) */
    const tb_hist *hist;    /* their corrected latency, µs; NULL when none */
} tb_run_op_count;

/* The load generator's health over a phase: the figures of the phase's
 * TB_RUN_MSG_PHASE_HEALTH message, as numbers. */
typedef struct tb_run_health {
    int tiles, phase;
    uint64_t stall_max_us, stall_p99_us; /* loop stall (tb_lg_stalls) */
    uint64_t own_max_us, own_p99_us;     /* the loop's own work's share */
    double cpu_wait_pct;                 /* workers waiting for a CPU, % of the time; NaN unknown */
    double cpu_pct;                      /* CPU used for work, % of its threads' time */
    int threads;
} tb_run_health;

/* What a message is about; each is also a stored event of the run. */
typedef enum tb_run_msg_kind {
    TB_RUN_MSG_INFO,         /* the run's own line: auto's saturation, a calibration */
    TB_RUN_MSG_WARNING,      /* a warning about the whole run (active idle above load) */
    TB_RUN_MSG_STEP_WARNING, /* a warning about active idle or a phase (validity warnings) */
    TB_RUN_MSG_PHASE_HEALTH, /* "N tiles phase P: ..." the load generator's and the poller's health */
    TB_RUN_MSG_PHASE_STALL   /* "N tiles phase P: ..." the load generator loop stalled */
} tb_run_msg_kind;

typedef struct tb_run_observer {
    /* The run row is stored: its id, the tile's name, the tile spec, the database. */
    void (*run_begun)(void *arg, int64_t run_id, const char *tile_name, const char *tile_spec, const char *db_path);
    /* A workload's reference comes from a calibration run (source says which). */
    void (*reference)(void *arg, const char *workload, const char *source);
    /* The run waits up to wait_us for n load-generator agents to register (agent/remote.h). */
    void (*agents_waiting)(void *arg, int n, uint64_t wait_us);
    /* The embedded SUT is starting in dir with data for tiles tiles. */
    void (*sut_starting)(void *arg, const char *dir, int tiles);
    /* Active idle: begun (its length), live (time left, latest W), measured (mean W). */
    void (*idle_begun)(void *arg, uint64_t idle_us);
    void (*idle_progress)(void *arg, uint64_t left_us, double watts);
    void (*idle_done)(void *arg, double watts, int estimated);
    /* A load level begins with these stage lengths. */
    void (*level_begun)(void *arg, int tiles, const tb_stage_def *stages);
    /* --interference, just before level_begun: the level of tiles tiles
     * runs workload alone by itself in each tile, or (alone NULL) the whole
     * tile. */
    void (*level_alone)(void *arg, int tiles, const char *alone);
    void (*progress)(void *arg, const tb_run_progress *p);
    /* The live progress stops (a line follows, or the run ends). */
    void (*progress_end)(void *arg);
    /* A phase is stored: its result; n_rules QoS rules per verdict (the
     * level's, then each tile's in lr->qos). */
    void (*phase_done)(void *arg, const tb_level_result *lr, int n_rules, int estimated);
    /* Host telemetry over active idle or the phase just shown. */
    void (*telemetry)(void *arg, const tb_telemetry *t);
    void (*message)(void *arg, tb_run_msg_kind kind, const char *msg);
    /* The report was written to path. */
    void (*report_written)(void *arg, const char *path);
    /* The run is over with status (complete, aborted, interrupted). */
    void (*run_done)(void *arg, int64_t run_id, const char *status);
    /* With each progress and idle_progress call: the latest sample of each
     * of the run's n meters (info[i] is meter i's; latest[i].mono_us 0: no
     * sample in the last few seconds). */
    void (*meters)(void *arg, int n, const tb_meter_info *info, const tb_sample *latest);
    /* A steady-state phase was collected: its n (tile, workload, op) cells,
     * before it is judged and stored (so a level's last phase comes before
     * its ramp-down, and phase_done after). */
    void (*phase_ops)(void *arg, int tiles, int phase, int n, const tb_run_op_count *ops);
    /* A steady-state phase in progress, about once a second: the latency
     * of its ops (those it counts) that ended since the previous call, in n
     * (workload, op) cells of every tile merged (tiles is 1, each cell's
     * tile 1); the first call of a phase starts the interval. Only with a
     * load generator that keeps such a record (the local one). */
    void (*phase_live)(void *arg, int tiles, int phase, int n, const tb_run_op_count *ops);
    /* The load generator's health over the phase just stored. */
    void (*health)(void *arg, const tb_run_health *h);
    void *arg;
} tb_run_observer;

#endif
