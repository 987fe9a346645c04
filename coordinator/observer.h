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

#include "powermeter/telemetry.h"
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
    uint64_t errors;   /* failed ops so far in the level */
    double watts;      /* the latest power reading; NaN when none */
    int estimated;     /* a meter is a model (estimate:), not a measurement */
} tb_run_progress;

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
    void *arg;
} tb_run_observer;

#endif
