/*
 * store.h: the SQLite results store. Schema versioned with PRAGMA user_version
 * and migrated forward on open; WAL journal so readers (report, serve) work
 * while a run writes. Only the coordinator writes, and it commits each
 * finished interval (active idle, each phase of each load level) in its own
 * transaction, so a crash or SIGINT never loses a completed interval.
 */
#ifndef TB_RESULTS_STORE_H
#define TB_RESULTS_STORE_H

#include <stdint.h>

#include "common/tb_common.h"
#include "powermeter/meter.h"
#include "powermeter/poller.h"
#include "powermeter/telemetry.h"
#include "powermeter/temperature.h"
#include "qos/hist.h"
#include "qos/qos.h"

#define TB_STORE_SCHEMA_VERSION 19

typedef struct tb_store tb_store;

/* Run status values stored in runs.status. */
#define TB_RUN_RUNNING     "running"
#define TB_RUN_COMPLETE    "complete"
#define TB_RUN_INTERRUPTED "interrupted"
#define TB_RUN_ABORTED     "aborted"

/* One SUT host of a run whose tile file has [host.NAME] sections
 * (docs/tile-file.md): table hosts. */
typedef struct tb_host_info {
    const char *name, *label; /* label may be "" */
    const char *tiles;        /* the tiles it serves as written back: "1..4, 9", "none", "rest" */
    const char *telemetry;    /* "local", "none" or the node_exporter URL, its password redacted */
    const char *host_json;    /* its configuration (hostinfo.h) as JSON object text; NULL: none */
} tb_host_info;

/* What is known about a run when it starts. Strings are copied. */
typedef struct tb_run_info {
    const char *label;         /* user label, may be "" */
    const char *tile_name;     /* e.g. "standard" */
    const char *tile_spec;     /* e.g. "1..2" */
    const char *config_text;   /* the effective tile file text (no passwords) */
    const char *settings_json; /* effective stage settings as a JSON object text */
    const char *host_json;     /* {"hostname","kernel","cpu_model","cpus",...} JSON object text */
    int64_t started_wall_us;
    int n_meters;
    const tb_meter_info *meters; /* uri already redacted */
    int n_hosts;                 /* 0: one SUT (no [host.NAME] sections) */
    const tb_host_info *hosts;
    const char *const *meter_hosts; /* with n_hosts: per meter, its host's name (meters.host) */
    int64_t campaign_id;            /* > 0: the campaign this run belongs to (tb_store_begin_campaign) */
    const char *campaign_config;    /* with campaign_id: the configuration's name */
} tb_run_info;

/*
 * Error classes of a failed op (issue 4), in the order of
 * tb_op_result.errors_by_class and of the ops.err_* columns:
 * connect (could not connect), io (connection lost, read or write failed),
 * timeout (no answer within the op timeout), server (the server answered
 * with an error: HTTP status >= 400, an SQL error, an IMAP NO/BAD ...),
 * content (an answer that is not what was expected: a 200 page without its
 * marker). The loadgen's tb_op_status, without TB_OP_OK.
 */
enum { TB_ERR_CONNECT, TB_ERR_IO, TB_ERR_TIMEOUT, TB_ERR_SERVER, TB_ERR_CONTENT, TB_ERR_NCLASSES };

/* "connect", "io", "timeout", "server", "content" (the JSON keys of
 * errors_by_class); NULL outside 0..TB_ERR_NCLASSES-1. */
const char *tb_store_err_class_name(int cls);

/* One op of one workload of one tile, over one steady-state phase. */
typedef struct tb_op_result {
    char name[32];
    uint64_t count;                            /* successful ops that started and ended in steady state */
    uint64_t errors;                           /* failed ops in steady state */
    uint64_t errors_by_class[TB_ERR_NCLASSES]; /* errors split by class (TB_ERR_*); they add up to
                                                 errors */
    uint64_t count_all;                        /* every op completed during the whole load level, any stage */
    const tb_hist *hist;                       /* corrected latency (from intended start); may be NULL if count==0 */
    const tb_hist *hist_uncorrected;           /* from actual send */
    int metric;                                /* 1: counts toward the workload's throughput (its metric op) */
} tb_op_result;

/* One workload instance (one tile) over one phase. */
typedef struct tb_workload_result {
    char name[32];     /* workload section name, e.g. "oltp" */
    int tile;          /* 1-based tile index */
    uint64_t ops;      /* metric ops completed in steady state */
    uint64_t errors;   /* failed ops (all op kinds) in steady state */
    double throughput; /* in `unit` */
    char unit[16];     /* "OPM", "ops/s", ... */
    double reference;  /* reference throughput in `unit` */
    double normalized; /* throughput / reference */
    int n_ops;
    tb_op_result *op_results; /* n_ops entries (named apart from the `ops` count above) */
} tb_workload_result;

/* One load-generator agent over one phase (a run with agents, docs/agents.md). */
typedef struct tb_agent_result {
    const char *name, *host;
    int tile_lo, tile_hi; /* its tiles; 0/0: none this level */
    int threads, users;
    uint64_t ops, errors;
    double cpu_s;
    uint64_t stall_max_us, stall_p99_us;
    int clock_known;
    int64_t clock_offset_us; /* broker time - its monotonic clock, µs */
    uint64_t clock_bound_us;
    int64_t lost_wall_us; /* 0: not lost */
} tb_agent_result;

/* One SUT host over one phase or over active idle (table level_hosts,
 * hosts' idle columns). */
typedef struct tb_host_result {
    const char *name;
    int tiles;              /* tiles of this level it serves */
    double avg_watts;       /* mean power of its meters summed; -1 when one gave no valid sample */
    uint64_t samples;       /* its meters' power samples inside the window */
    int has_telemetry;      /* its telemetry source is not none */
    tb_telemetry telemetry; /* with has_telemetry: over the window; NaN: not available */
} tb_host_result;

/* One infrastructure operation ([infra.NAME], docs/infra.md) over one
 * phase (table infra). Counted by Faban's rule, as tile ops are: an op
 * counts when it started in the phase and ended before its end. */
typedef struct tb_infra_result {
    char name[32];                             /* section suffix: "backup" */
    char kind[16];                             /* "deploy", "backup", "migrate", "command" */
    int users;                                 /* its infrastructure users this level */
    uint64_t ops;                              /* successful ops in the phase */
    uint64_t errors;                           /* failed ops in the phase */
    uint64_t errors_by_class[TB_ERR_NCLASSES]; /* they add up to errors */
    uint64_t count_all;                        /* ops ended during the whole level, any stage, ok or not */
    uint64_t bytes;                            /* bytes the successful ops moved (backup: its size); 0 none */
    double mb_per_s;                           /* bytes over the successful ops' summed duration, MB/s
                                                  (10^6 bytes); NaN when no op moved bytes */
    double ops_per_hour;                       /* ops / steady seconds * 3600 */
    double reference;                          /* ops per hour that score 1.0; 0: none */
    double normalized;                         /* ops_per_hour / reference; NaN without a reference */
    const tb_hist *hist;                       /* op durations, µs; NULL when no op ended in the phase */
} tb_infra_result;

/* What one infrastructure op did (table infra_outputs): its stdout and
 * stderr (a command, capped) or a line telling what it did. */
typedef struct tb_infra_output {
    char name[32];         /* its [infra.NAME] */
    int user;              /* 0-based infrastructure user */
    int tile;              /* the tile it worked on (1-based) */
    int64_t start_wall_us; /* unix µs */
    uint64_t duration_us;
    int status;       /* 0 ok, else 1 + a TB_ERR_* class (tb_op_status's numbering) */
    int exit_code;    /* a command's exit status; -1: none (killed, or not a command) */
    const char *text; /* never NULL */
} tb_infra_output;

/* Power samples of one stage outside steady state ("ramp-up", "warm-up",
 * "ramp-down"; power_samples.stage), stored with level_id NULL. */
typedef struct tb_stage_samples {
    const char *stage;
    const tb_poll_sample *samples;
    int n;
} tb_stage_samples;

/* Inlet temperature readings of one stage (temperature_samples.stage):
 * "steady" ones are stored with their phase's level_id, "idle", "ramp-up",
 * "warm-up" and "ramp-down" ones with level_id NULL. */
typedef struct tb_temp_stage {
    const char *stage;
    const tb_temp_reading *readings;
    int n;
} tb_temp_stage;

/* One phase of one load level: the unit of commit. */
typedef struct tb_level_result {
    int tiles;  /* load level */
    int phase;  /* 1-based */
    int repeat; /* 1-based repeat of the sweep (--repeat N); 0 is stored as 1 */
    int64_t steady_start_wall_us, steady_end_wall_us;
    uint64_t steady_us;                                /* steady-state duration of this phase */
    uint64_t steady_start_mono_us, steady_end_mono_us; /* the window [start, end) on tb_now_us's clock; 0: unknown */
    double score;       /* the final score: app_score, or 0.8 app + 0.2 infra with has_infra */
    double app_score;   /* the application score: the sum of the tile scores */
    int has_infra;      /* [infra.NAME] operations ran beside the tiles */
    double infra_score; /* with has_infra: geometric mean of their normalized ops/hour; NaN when
                           one has no reference */
    const char *alone;  /* a consolidation-interference level (--interference): the workload it ran
                           alone; NULL or "": the whole tile */
    double avg_watts;   /* -1 when no valid samples */
    double ppkw;        /* of the final score */
    int qos_pass;       /* 1: no judged QoS rule failed (rules not judged do not fail it) */
    int qos_not_judged; /* rules not judged for too few ops, in the level's verdict or a
                           tile's (each rule counted once); qos_pass with 0 here is a full pass */
    int valid;
    char invalid_reason[512]; /* "" when valid; "; "-separated reasons otherwise */
    uint64_t samples_total, samples_bad;
    double other_cpu_pct; /* this host's CPU outside the SUT's and the load generator's processes over
                             steady state, % of all its CPU (coordinator/othercpu.c); NaN: not measured */
    int sut_processes;    /* local SUT server processes found for it (0: none found, all but the
                             load generator counted as other) */
#define TB_OTHER_CPU_WARN_PCT                                                                                          \
    5.0                     /* above it a phase is warned and its run's comparisons flagged: "a few                    \
                               percent" of other load moves an estimate's watts more than the                          \
                               differences a power policy makes */
    tb_telemetry telemetry; /* host telemetry over steady state (telemetry.h); NaN: not available */
    int n_telem_samples;    /* telemetry samples inside steady state, stored per sample */
    const tb_telem_sample *telem_samples;
    int n_workloads;
    tb_workload_result *workloads;
    int n_qos;
    tb_qos_result *qos; /* the level's rules (tile 0) and each tile's (tile N), any order */
    int n_samples;      /* power samples inside steady state */
    const tb_poll_sample *samples;
    /* the level's samples outside steady state stored with this phase
     * (stage "ramp-up" and "warm-up" with its first phase, "ramp-down"
     * with its last), level_id NULL; they feed no figure */
    int n_stage_samples;
    const tb_stage_samples *stage_samples;
    int n_agents; /* load-generator agents; 0: the local load generator */
    const tb_agent_result *agents;
    int n_hosts; /* SUT hosts ([host.NAME]); 0: none. avg_watts is their sum */
    const tb_host_result *hosts;
    int n_infra; /* [infra.NAME] operations, in tile-file order; 0: none */
    const tb_infra_result *infra;
    int n_infra_outputs; /* what their ops did (failed ones and the first few per level) */
    const tb_infra_output *infra_outputs;
    /* inlet temperature over steady state (table inlet_temperatures): has_temp
     * 0 when the run has no temperature source (nothing stored); temp_n
     * readings, their min, mean and max in degrees C (NaN when temp_n is 0) */
    int has_temp;
    int temp_n;
    double temp_min_c, temp_mean_c, temp_max_c;
    /* with has_temp, the readings behind them and those of the level's
     * other stages stored with this phase (as stage_samples) */
    int n_temp_stages;
    const tb_temp_stage *temp_stages;
} tb_level_result;

/* Opens or creates the database at path, migrating it to the current schema.
 * Returns 0 or -1 with err ("open results.db: unable to open database file"). */
int tb_store_open(const char *path, tb_store **out, char *err) TB_WUR;
void tb_store_close(tb_store *s); /* NULL is a no-op */

/* Opens an existing database for reading only (report, runs, serve): never
 * creates or migrates, and never writes (a writable file gets a read-write
 * handle with PRAGMA query_only, so that closing it removes the -wal and -shm
 * files as the writer's close does). Returns 0, or -1 with err: "results database 'x.db'
 * not found", "'x.db' is not a tilebench results database", or a schema
 * version other than TB_STORE_SCHEMA_VERSION (naming both). */
int tb_store_open_readonly(const char *path, tb_store **out, char *err) TB_WUR;
/* The "file:...?immutable=1" URI s reads through, or NULL. A database that
 * cannot be written, in WAL mode, whose -shm file cannot be made (a
 * read-only mount; mode 0444 in a 0555 folder), is opened immutable when it
 * has no -wal file with transactions not yet checkpointed (else the open
 * fails, naming it): a second handle on it must use this URI with
 * SQLITE_OPEN_READONLY | SQLITE_OPEN_URI. */
const char *tb_store_immutable_uri(const tb_store *s);

/*
 * The status a reader should show: the stored one, except that a run still
 * "running" whose writer process is gone (kill -9, power loss) reads as
 * "interrupted". writer_pid and writer_start (the process start time from
 * /proc/PID/stat, so a reused pid is not mistaken for the writer; <= 0 when
 * unknown) come from the runs table. Returns a static string or `stored`.
 */
const char *tb_store_effective_status(const char *stored, int64_t writer_pid, int64_t writer_start);

/* Inserts a run with status "running". *run_id gets its id. 0 or -1. */
int tb_store_begin_run(tb_store *s, const tb_run_info *info, int64_t *run_id, char *err) TB_WUR;

/* Stores active idle power (W, -1 when unknown) and its samples, one transaction. */
int tb_store_put_idle(tb_store *s, int64_t run_id, double watts, const tb_poll_sample *samples, int n,
                      char *err) TB_WUR;

/* Stores each host's active idle (power and telemetry) in its hosts row; one transaction. */
int tb_store_put_idle_hosts(tb_store *s, int64_t run_id, const tb_host_result *hosts, int n, char *err) TB_WUR;

/* Stores the inlet temperature over active idle: n readings, min, mean and
 * max in degrees C (NaN when n is 0), and the readings themselves (stage
 * "idle"; nr of them, r may be NULL when nr is 0). One transaction. 0 or -1
 * with err. */
int tb_store_put_idle_temperature(tb_store *s, int64_t run_id, int n, double min_c, double mean_c, double max_c,
                                  const tb_temp_reading *r, int nr, char *err) TB_WUR;

/* Stores telemetry samples outside any level (active idle: level_id NULL), one transaction. */
int tb_store_put_idle_telemetry(tb_store *s, int64_t run_id, const tb_telem_sample *samples, int n, char *err) TB_WUR;

/* Stores one finished phase of a load level, all in one transaction. */
int tb_store_put_level(tb_store *s, int64_t run_id, const tb_level_result *lr, char *err) TB_WUR;

/* One stage of the run as it begins (table stages): stage is "idle",
 * "ramp-up", "warm-up", "steady" (phase 1..N; 0 for the others) or
 * "ramp-down"; alone the workload an interference level runs by itself
 * (NULL: the whole tile); [start_us, end_us) its planned edges on the clock
 * of the power samples' mono_us. One transaction. 0 or -1 with err (the
 * coordinator only warns: a stage row is for drawing). */
typedef struct tb_stage_row {
    const char *stage;
    int tiles, repeat, phase;
    const char *alone;
    uint64_t start_us, end_us;
} tb_stage_row;
int tb_store_put_stage(tb_store *s, int64_t run_id, const tb_stage_row *row, char *err) TB_WUR;

/* The ranges a level's ranging pass chose for one meter (table
 * level_ranges, store_ranging.c): meter is the index in the run's meters;
 * peak_v and peak_a the largest RMS V and A read while it auto-ranged over
 * [start_us, end_us) (power samples' clock), from samples readings; the
 * fixed ranges set for the measured stages. One row, 0 or -1 with err. */
typedef struct tb_ranging_row {
    int tiles, repeat, meter;
    const char *alone;
    double peak_v, peak_a, volt_range_v, amp_range_a;
    int samples;
    uint64_t start_us, end_us;
} tb_ranging_row;
int tb_store_put_ranging(tb_store *s, int64_t run_id, const tb_ranging_row *row, char *err) TB_WUR;

/* The start of a campaign run's warning event about a file an apply or
 * revert command changed (coordinator/campaign.c): "apply of configuration
 * 'X' changed FILE, read before it; ..."; compare repeats them in its notes. */
#define TB_EVENT_APPLY_CHANGED  "apply of configuration '"
#define TB_EVENT_REVERT_CHANGED "revert of configuration '"

/* Appends an event (kind: "info", "warning", "error") to the run's log. */
int tb_store_event(tb_store *s, int64_t run_id, const char *kind, const char *message, char *err) TB_WUR;

/* Sets the final status (one of TB_RUN_*), finished_at and saturation_tiles
 * (-1 when none passed). */
int tb_store_finish_run(tb_store *s, int64_t run_id, const char *status, int saturation_tiles, char *err) TB_WUR;

/*
 * Calibration: the reference throughput one tile delivered when the SUT kept
 * up (`run --calibrate`), per workload of a tile definition. The definition is
 * named by tile_name plus def_hash (a digest of its workload sections, so a
 * changed tile never uses a stale reference). Stored in one transaction.
 */
int tb_store_put_calibration(tb_store *s, int64_t run_id, const char *tile_name, const char *def_hash,
                             const char *workload, double reference, const char *unit, char *err) TB_WUR;

/* The newest calibration of (tile_name, def_hash, workload): 0 with *reference,
 * *run_id and created_at (ISO 8601, >= 32 bytes) filled; 1 when there is none;
 * -1 with err on a database error. */
int tb_store_get_calibration(tb_store *s, const char *tile_name, const char *def_hash, const char *workload,
                             double *reference, int64_t *run_id, char *created_at, char *err) TB_WUR;

/*
 * Campaigns (coordinator/campaign.c): several runs of one sweep, each under a named
 * SUT configuration applied and reverted by user commands, compared against
 * the baseline configuration. Status values are the TB_RUN_* ones; a campaign
 * still "running" whose writer is gone reads as interrupted
 * (tb_store_effective_status on its writer_pid/writer_start).
 */
typedef struct tb_campaign_info {
    const char *name;        /* the campaign's name */
    const char *baseline;    /* name of the baseline configuration */
    const char *config_path; /* the campaign file, for the record */
    const char *config_text; /* its text */
} tb_campaign_info;

/* Inserts a campaign with status "running"; *campaign_id gets its id. 0 or -1. */
int tb_store_begin_campaign(tb_store *s, const tb_campaign_info *info, int64_t *campaign_id, char *err) TB_WUR;

/* Records one apply or revert command of configuration `config`: the command,
 * its exit status (-1 when it did not exit normally: killed by a signal, or
 * could not start), its combined stdout/stderr (may be NULL) and wall-clock
 * start and end in µs. step is "apply" or "revert". 0 or -1. */
int tb_store_campaign_step(tb_store *s, int64_t campaign_id, const char *config, const char *step, const char *command,
                           int exit_status, const char *output, int64_t started_wall_us, int64_t finished_wall_us,
                           char *err) TB_WUR;

/* Sets the final status (TB_RUN_COMPLETE, _ABORTED or _INTERRUPTED), a message
 * ("" or NULL for none) and finished_at. 0 or -1. */
int tb_store_finish_campaign(tb_store *s, int64_t campaign_id, const char *status, const char *message,
                             char *err) TB_WUR;

/* Resolves "latest" or a decimal id to a run id. 0 or -1 with err ("no runs in results.db"). */
int tb_store_resolve_run(tb_store *s, const char *which, int64_t *run_id, char *err) TB_WUR;

#endif
