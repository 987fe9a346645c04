/*
 * run_ctx.h: the state of one run, shared by the coordinator's own files
 * (coordinator.c: the lifecycle; level.c: one load level; phase.c: one
 * phase's result; setup.c: what the run row records). Not for other folders.
 */
#ifndef TB_COORDINATOR_RUN_CTX_H
#define TB_COORDINATOR_RUN_CTX_H

#include <jansson.h>
#include <stdint.h>

#include "common/buf.h"
#include "coordinator/coordinator.h"
#include "coordinator/observer.h"
#include "infra/infra.h"
#include "loadgen/loadgen.h"
#include "powermeter/meter.h"
#include "powermeter/poller.h"
#include "powermeter/telemetry.h"
#include "powermeter/temperature.h"
#include "qos/validity.h"
#include "results/store.h"

/* Grace after a phase end before collecting it, so an op that ended just
 * before the edge but was still being recorded is not lost. */
#define TB_COORD_COLLECT_GRACE_US 50000

/* How far the run got (see the table at the top of coordinator.c). */
typedef enum run_state {
    ST_NONE,
    ST_OPEN,      /* instruments open: meters, telemetry source, store */
    ST_RUN_ROW,   /* the run row is stored */
    ST_SUT_UP,    /* the SUT answers and the load generator is ready */
    ST_SAMPLING,  /* the meter poller (and telemetry sampler) run */
    ST_IDLE,      /* active idle measured (or skipped) */
    ST_SWEEP,     /* every load level run */
    ST_CALIBRATE, /* references stored (a calibration run) */
    ST_FINISHED   /* status and report written */
} run_state;

typedef struct run_ctx {
    const tb_run_opts *o;
    const tb_run_observer *obs; /* never NULL (a silent one when none is given) */
    run_state state;
    const char *status; /* TB_RUN_COMPLETE until the run aborts or is interrupted */
    int saturation;     /* largest passing level; -1 none */
    int max_tiles;
    tb_store *store;
    int64_t run_id;
    int n_meters; /* open: o->meter_uris', or with [host.NAME] sections every host's */
    tb_meter *meters[TB_MAX_METERS];
    tb_meter_info infos[TB_MAX_METERS];
    /* [host.NAME] sections (def->hosts): meter i belongs to host meter_host[i];
     * each host's own telemetry source (NULL: none) */
    int n_hosts;
    int meter_host[TB_MAX_METERS];
    const char *meter_host_name[TB_MAX_METERS];
    tb_telem_source *host_tsrc[TB_MAX_HOSTS];
    tb_telem_sampler *host_tsampler[TB_MAX_HOSTS];
    char host_tiles[TB_MAX_HOSTS][128];
    char host_telem_shown[TB_MAX_HOSTS][256];
    tb_poller *poller;
    int n_temps; /* inlet temperature sources open (o->temp_uris) and their sampler */
    tb_temp_source *temps[TB_MAX_TEMPS];
    tb_temp_sampler *temp_sampler;
    tb_telem_source *tsrc; /* NULL: telemetry is none */
    tb_telem_sampler *tsampler;
    char telem_spec[256];        /* the effective telemetry source: "local", a URL, or "none" */
    char telem_shown[256];       /* telem_spec for messages and the results: a URL's password redacted */
    char telem_note[TB_ERR_LEN]; /* why telemetry is none, for the run's events; "" */
    uint64_t telem_failures;     /* failed telemetry reads already reported in an event */
    tb_loadgen *lg;
    tb_sut_endpoints ep;
    int sut_started;
    char sut_dir[512]; /* the embedded SUT's run folder */
    int sut_dir_temp;  /* we made it: remove it after a clean stop */
    int levels_done, levels_total;
    const tb_workload_def *alone; /* --interference: the workload running alone this level; NULL: the whole tile */
    int repeat;                   /* 1-based repeat of the sweep in progress */
    double idle_w;                /* active idle, W; 0 when not measured */
    double min_level_w;           /* lowest phase mean power so far, W; 0 none */
    int min_level_tiles;
    double reference[TB_MAX_WORKLOADS];            /* per workload: the tile file's, or a calibration's */
    char def_hash[17];                             /* digest of the workload sections (calibration key) */
    int n_calib;                                   /* calibration: phases of tile 1 measured so far */
    double calib[TB_MAX_PHASES][TB_MAX_WORKLOADS]; /* calibration: throughput per phase and workload */
    /* infra_run.c: the infrastructure operations ([infra.NAME]) of the level in progress */
    tb_infra *infra;                /* its runner; NULL: none runs */
    char infra_dir[512];            /* the runner's folder ("" none), removed with it */
    tb_infra_level infra_lv;        /* what the runner was given (outlives it) */
    tb_infra_stat *infra_stats;     /* the phase collected last: def->n_infra; NULL none */
    tb_infra_op_output *infra_outs; /* what its ops did since the collect before */
    int n_infra_outs;
    double infra_ref[TB_MAX_INFRA];  /* ops/hour that score 1.0: the file's or a calibration's; 0 none */
    char infra_wl[TB_MAX_INFRA][40]; /* "infra.NAME": their workload in QoS rules and calibrations */
    int infra_noref_said;            /* the event that an operation has no reference was stored */
    int n_infra_calib;               /* calibration: phases of tile 1 measured so far */
    double infra_calib[TB_MAX_PHASES][TB_MAX_INFRA]; /* calibration: ops/hour per phase and operation */
    double phase_other_cpu_pct; /* the phase being stored: othercpu.c's share (NaN: not measured) */
    int phase_sut_processes;    /* and the SUT server processes it found */
} run_ctx;

/* One phase's infrastructure figures, as the stored result points at them
 * (infra_run.c fills it; phase.c holds it until the phase is stored). */
typedef struct tb_coord_infra_phase {
    tb_infra_result res[TB_MAX_INFRA];
    tb_infra_output *outs;
    int n_outs;
} tb_coord_infra_phase;

/* coordinator.c */
/* othercpu.c: the host's CPU outside the SUT's and the load generator's
 * processes over a phase's steady state. begin at its start; end returns the
 * share, % of all the host's CPU in between (NaN: not measured). */
typedef struct tb_other_cpu_snap {
    int ok, sut_processes;
    double busy_s, all_s, trees_s;
} tb_other_cpu_snap;
void tb_coord_other_cpu_begin(run_ctx *c, tb_other_cpu_snap *s);
double tb_coord_other_cpu_end(run_ctx *c, const tb_other_cpu_snap *s0);

void tb_coord_note(run_ctx *c, const char *kind, const char *msg); /* a stored event of the run */
int tb_coord_stopped(const run_ctx *c);
int tb_coord_estimated(const run_ctx *c); /* some meter is a model */
/* The observer's message and, first, the stored event of kind. */
void tb_coord_say(run_ctx *c, const char *event_kind, tb_run_msg_kind kind, const char *msg);

/* phase.c */
/* Mean power over [t0,t1) summed over meters, -1 when a meter has no valid
 * sample; *samples (caller frees) and counts. */
double tb_coord_window_power(run_ctx *c, uint64_t t0, uint64_t t1, tb_poll_sample **samples, int *n, uint64_t *total,
                             uint64_t *bad);
/* Telemetry samples inside [t0, t1); caller frees. */
int tb_coord_telem_window(run_ctx *c, uint64_t t0, uint64_t t1, tb_telem_sample **out);
/* Each host's figures over [t0, t1) from the window's power samples ps
 * (tb_coord_window_power's) and its own telemetry: out[c->n_hosts]; tiles
 * > 0 counts the level's tiles each serves. */
void tb_coord_host_results(run_ctx *c, const tb_poll_sample *ps, int n, uint64_t t0, uint64_t t1, int tiles,
                           tb_host_result *out);
/* Judges active idle by a level's power rules: a warning when they fail. */
void tb_coord_judge_idle(run_ctx *c, const tb_poll_sample *ps, int n, double w, uint64_t idle_us);
/* Warnings on estimated power (estimate:): a stage whose samples sat at the
 * model's maximum, and (phase 0: active idle) an idle whose CPU, from the
 * model, was above 20%. */
void tb_coord_warn_estimate(run_ctx *c, int tiles, int phase, const tb_poll_sample *ps, int n);
/* Turns phase p of the level's statistics into a stored result: 1 passed
 * QoS, 0 failed, -1 with err. */
int tb_coord_finish_phase(run_ctx *c, const tb_level_plan *pl, int p, tb_lg_stats *st, tb_lg_stats *all, double cpu_s,
                          char *err);

/* interference.c */
/* Runs load level tiles; with --interference first each workload alone in
 * those tiles (stored levels of their own), then the whole tile. As
 * tb_coord_run_level, for the whole tile's level: saturation is judged from
 * it alone. */
int tb_coord_run_level_set(run_ctx *c, int tiles, char *err);
/* The load levels one level of the tile spec becomes (1, or with
 * --interference the workloads + 1). */
int tb_coord_levels_per_level(const tb_run_opts *o);
/* The QoS rules of this level: every rule of the tile file, or with a
 * workload alone only its own (the others ran no op). *own (caller frees)
 * holds them when they are not def->rules. */
const tb_qos_rule *tb_coord_level_rules(const run_ctx *c, int *n, tb_qos_rule **own);

/* level.c */
/* Runs one load level: 1 every phase passed QoS, 0 one failed, -1 with err,
 * -2 interrupted. */
int tb_coord_run_level(run_ctx *c, int tiles, char *err);
/* The observer's meters callback with each meter's latest sample (a no-op without one). */
void tb_coord_tell_meters(run_ctx *c);
/* Waits until the monotonic deadline inside a level's stage, showing
 * progress: 0, or -1 interrupted. */
int tb_coord_wait(run_ctx *c, uint64_t deadline_us, int tiles, const char *stage);

/* ranging.c: the ranging pass (--ranging) */
/* In a level without warm-up the pass ends this long before ramp-up does,
 * so the meters settle on their fixed ranges before the first phase. */
#define TB_RANGING_SETTLE_US 1000000u
/* Before anything runs: the interval fits in the stage it runs in (warm-up,
 * or ramp-up when there is no warm-up) and every meter can set its ranges.
 * An exit code (2 with err naming the option or key). */
int tb_coord_ranging_check(run_ctx *c, char *err);
/* 1 when the pass runs in ramp-up: --ranging and no warm-up. */
int tb_coord_ranging_in_ramp_up(const run_ctx *c);
/* The time over which a level's users start, staggered: the ramp-up, or in
 * a level whose ranging pass runs in ramp-up, the ramp-up less the pass and
 * TB_RANGING_SETTLE_US, so every user has started when the pass begins. */
uint64_t tb_coord_stagger_us(const run_ctx *c);
/* Auto-range for the interval from now (inside stage, "warm-up" or
 * "ramp-up"), then every meter on the smallest fixed ranges that hold its
 * peaks, stored and told. 0 (also without --ranging), -1 with err, -2
 * interrupted. */
int tb_coord_ranging(run_ctx *c, int tiles, const char *stage, char *err);

/* infra_run.c: infrastructure operations ([infra.NAME]) beside the tiles */
/* Before anything runs: the programs and endpoints they need. An exit code (2: missing). */
int tb_coord_infra_check(run_ctx *c, char *err);
/* Each operation's reference: the tile file's, or a calibration's (as the
 * workloads'); where it came from goes into refs under "infra.NAME". */
void tb_coord_infra_references(run_ctx *c, json_t *refs);
/* Once the run row exists: a warning for each operation with no reference
 * (none in a calibration run, which learns them). */
void tb_coord_infra_say_noref(run_ctx *c);
/* After the level's users started: its runner (none for a level that runs
 * one workload alone, or without operations). 0, or -1 with err. */
int tb_coord_infra_begin(run_ctx *c, const tb_level_plan *pl, char *err);
/* After phase p ended: the runner's figures over it (c->infra_stats). 0, or -1 with err. */
int tb_coord_infra_collect(run_ctx *c, int p, char *err);
/* Stops the runner and removes its folder; on every exit path (no runner: no-op). */
void tb_coord_infra_end(run_ctx *c);
/* The phase's infrastructure results into lr (whose score is the
 * application score on entry): lr->score becomes the final score. */
void tb_coord_infra_results(run_ctx *c, tb_level_result *lr, tb_coord_infra_phase *ip);
/* The QoS inputs of the operations (tile 0): up to def->n_infra into q and
 * wl each; returns how many. */
int tb_coord_infra_qos(const run_ctx *c, const tb_level_result *lr, tb_qos_input *q, tb_qos_wl_input *wl);
/* 1 when rule applies to an infrastructure operation (judged for the level, not per tile). */
int tb_coord_infra_rule(const tb_qos_rule *r);
/* A calibration run: each operation's median ops/hour at 1 tile stored as
 * its reference; one with no throughput gets none, and a warning. 0, or -1
 * with err (the first store failure; the others are still tried). */
int tb_coord_infra_calibrate(run_ctx *c, char *err);
void tb_coord_infra_phase_free(tb_coord_infra_phase *ip);

/* parts.c: a load generator of several parts (agents) */
void tb_coord_note_agents(run_ctx *c);               /* who they are, as a run event */
void tb_coord_note_placement(run_ctx *c, int tiles); /* the level's tiles per agent, as an event */
/* The parts' figures over the phase collected last, for its stored result
 * (caller frees with tb_coord_free_agents), and their validity input. */
tb_agent_result *tb_coord_phase_agents(run_ctx *c, tb_validity_input *vin, int *n);
void tb_coord_free_agents(tb_agent_result *a, int n);
/* After a phase: when its parts' results were merged (µs after its end),
 * as an event, and a part's long loop stall as a warning. */
void tb_coord_note_parts_phase(run_ctx *c, int tiles, int phase, uint64_t merged_us);

/* setup.c */
/* 1 when every endpoint of ep is on this machine (loopback, a Unix socket, unset). */
int tb_coord_sut_is_local(const tb_sut_endpoints *ep);
/* The effective telemetry source; *why says why it is none ("" otherwise). */
const char *tb_coord_telemetry_choice(const tb_run_opts *o, char *why, size_t len);
/* The run's host object, NULL with err when the node_exporter cannot be read. */
json_t *tb_coord_host_info(run_ctx *c, char *err);
/* With [host.NAME] sections: every host's meters and telemetry source
 * opened, and no tile of the sweep without a host. An exit code. */
int tb_coord_open_hosts(run_ctx *c, char *err);
/* The hosts for the run row (c->n_hosts entries into out), each with its
 * configuration read from its telemetry source; -1 with err when a host's
 * node_exporter cannot be read. Free with tb_coord_host_rows_free. */
int tb_coord_host_rows(run_ctx *c, tb_host_info *out, char *err);
void tb_coord_host_rows_free(tb_host_info *rows, int n);
/* The run's settings object (takes refs). */
json_t *tb_coord_settings(const run_ctx *c, json_t *refs);

#endif
