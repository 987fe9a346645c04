/*
 * coordinator.h: runs a sweep. For each load level: ramp-up (users start
 * staggered), warm-up, N steady-state phases, ramp-down; meanwhile the meter
 * poller samples power at 1 Hz. At each phase end it merges the load
 * generators' statistics, evaluates QoS and validity, scores the phase
 * (tiles/qos/scoring) and commits it to the results store. The coordinator
 * is the only writer of the store.
 */
#ifndef TB_COORDINATOR_COORDINATOR_H
#define TB_COORDINATOR_COORDINATOR_H

#include <signal.h>
#include <stdint.h>

#include "tiles/levels.h"
#include "tiles/tiledef.h"

struct tb_run_observer; /* coordinator/observer.h */
struct tb_remote_opts;  /* agent/remote.h */

#define TB_MAX_METERS 16
#define TB_MAX_TEMPS  4 /* TB_TEMP_MAX_SOURCES */

typedef struct tb_run_opts {
    const tb_tiledef *def;
    tb_levels levels;
    const char *tile_spec; /* as given, for the record */
    tb_stage_def stages;   /* effective stage durations */
    int repeat;            /* sweeps to run (>= 1) */
    const char *db_path;
    const char *label;
    int n_meters;
    const char *meter_uris[TB_MAX_METERS];
    int n_temps; /* inlet temperature sources (powermeter/temperature.h); 0: not measured */
    const char *temp_uris[TB_MAX_TEMPS];
    const char *report_path;                /* NULL: none */
    const char *sut_dir;                    /* run folder for the embedded SUT; NULL = a new temporary
                                               folder, removed after a clean stop */
    int threads;                            /* load generator threads, 0 = online CPUs */
    const struct tb_remote_opts *agents;    /* load generator agents through a broker; NULL: the local one */
    const struct tb_run_observer *observer; /* who is told what happens; NULL: nobody */
    int calibrate;                          /* store each workload's 1-tile throughput as its reference */
    int interference;            /* --interference: before each load level, one level per workload running alone in its
                                    tiles (coordinator/interference.c) */
    int auto_step;               /* --tiles auto: climb by this many tiles (0 = 1) */
    int auto_double;             /* --tiles auto: double the tiles at each step instead */
    int bisect;                  /* --tiles auto: bisect between the last pass and the first fail */
    const char *preset;          /* the preset's name, for the record ("demo" or "compliant") */
    int compliant;               /* judge as a compliant run: every QoS rule must be judged (qos/validity.h) */
    const char *telemetry;       /* --telemetry: local, none or a node_exporter URL; overrides [sut]
                                    telemetry; NULL = the tile file's, else the default (docs/meters.md) */
    volatile sig_atomic_t *stop; /* set by SIGINT/SIGTERM: end the run as interrupted */
    int64_t campaign_id;         /* > 0: the run belongs to this campaign (coordinator/campaign.c) */
    const char *campaign_config; /* with campaign_id: the configuration's name */
    const char *campaign_json;   /* with campaign_id: a JSON object of the configuration as it ran (its own keys,
                                    digests), stored as settings_json's campaign_config; NULL: none */
    int n_notes;                 /* warnings stored as events of the run once its row exists (a campaign's
                                    apply changed a file read before it); the observer is not told */
    const char *const *notes;
    uint64_t ranging_us;     /* > 0: each level's ranging pass this long at the start of warm-up, or
                                without one at the end of ramp-up (coordinator/ranging.c); 0: the
                                meters' ranges are left as they are */
    const char *ranging_key; /* where ranging_us came from, for errors ("--ranging", "[run] ranging") */
} tb_run_opts;

/*
 * Runs the sweep. Returns a process exit code: 0 complete; 2 configuration
 * error found before anything was measured; 3 aborted or interrupted (what
 * was measured is stored, and the run is marked). Prints nothing: the
 * observer is told (coordinator/observer.h). err says why when != 0.
 * *run_id gets the stored run's id (or -1 when none was created).
 */
int tb_coordinator_run(const tb_run_opts *o, int64_t *run_id, char *err);

/* The ranging pass fits in the stage it runs in (o->stages' warm-up, or
 * their ramp-up when there is no warm-up): 0, or -1 with err saying why
 * (without the option's name, which o->ranging_key holds). */
int tb_coord_ranging_fits(const tb_run_opts *o, char *err);

#endif
