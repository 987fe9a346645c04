/*
 * model.h: the typed read model of the results store. One reader
 * (model_read.c) loads a stored run, inside one read transaction so it is a
 * consistent snapshot even while the coordinator commits levels, into the
 * structs below; every report renderer (JSON, text, CSV, HTML) reads these
 * structs and nothing else, so the views always agree and never touch SQL.
 *
 * Conventions: a number the store does not know (SQL NULL, or not finite) is
 * NaN; a nullable integer is a tb_model_int with known = 0; a string the
 * store does not have is NULL, and every stored string is valid UTF-8 (bytes
 * that are not become U+FFFD) unless TB_MODEL_RAW_TEXT asks for the bytes. The stored free-form JSON objects (host,
 * settings, C-state residency) are kept as ordered key/value lists.
 */
#ifndef TB_RESULTS_MODEL_H
#define TB_RESULTS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"
#include "qos/hist.h"
#include "results/store.h"
#include "scoring/score.h"

/* An integer that may be unknown (SQL NULL). */
typedef struct tb_model_int {
    int64_t v;
    int known;
} tb_model_int;

/* One member of a stored JSON object. */
typedef enum { TB_KV_STRING, TB_KV_INT, TB_KV_REAL, TB_KV_BOOL, TB_KV_NULL, TB_KV_OTHER } tb_model_kv_kind;

typedef struct tb_model_kv {
    char *key;
    tb_model_kv_kind kind;
    char *str; /* TB_KV_STRING: the value; TB_KV_OTHER: the value as compact JSON text */
    int64_t i; /* TB_KV_INT; TB_KV_BOOL: 0 or 1 */
    double d;  /* TB_KV_REAL */
} tb_model_kv;

/* A stored JSON object, its members in stored order ({} when absent). */
typedef struct tb_model_obj {
    size_t n;
    tb_model_kv *kv;
} tb_model_obj;

/* The member named key, or NULL. */
const tb_model_kv *tb_model_obj_get(const tb_model_obj *o, const char *key);
/* A string member's value; NULL when missing or not a string. */
const char *tb_model_obj_str(const tb_model_obj *o, const char *key);

/* One channel of a meter read as several (channel_samples), over one
 * level's steady samples. */
typedef struct tb_model_channel {
    int channel;         /* its number on the meter */
    int64_t level_id;    /* tb_model_level.id */
    double mean_watts;   /* mean of its good readings; NaN: none */
    int64_t samples;     /* its readings in the level */
    int64_t bad_samples; /* of which bad (TB_SAMPLE_BAD) */
} tb_model_channel;

typedef struct tb_model_meter {
    char *uri, *model, *idn, *serial, *firmware, *driver;
    int estimated;
    double volt_range_v, amp_range_a; /* ranges */
    char *volt_mode, *amp_mode;
    double crest_factor;
    tb_model_int update_ms, avg_window_ms;
    double max_uncertainty_pct;
    char *calibrated;  /* calibrated=YYYY-MM-DD of its URI; NULL: none stated */
    char *accuracy;    /* the published accuracy its uncertainty comes from; NULL: none */
    int spec_accepted; /* SPEC's PTDaemon accepts the model: 1 yes, 0 no, -1 unknown (accuracy.h) */
    int64_t invalid_samples;
    int64_t flat_readings, valid_readings; /* FLAT among the valid readings, and the valid ones */
    int not_averaged;                      /* tb_ipmi_not_averaged */
    char *host;                            /* the SUT host it measures ([host.NAME]); NULL: none */
    char *channels;                        /* "1,2": read as these channels, summed; NULL: one input */
    size_t n_channels;                     /* rows of channels_by_level, by channel then level */
    tb_model_channel *channels_by_level;
} tb_model_meter;

/* One SUT host of a run with [host.NAME] sections (table hosts). */
typedef struct tb_model_host {
    char *name, *label, *tiles, *telemetry; /* label NULL: none */
    tb_model_obj config;                    /* its configuration (as the run's host); {} without telemetry */
    double active_idle_watts;               /* NaN: not measured */
    double idle_cpu_util_pct, idle_avg_freq_mhz;
    tb_model_int idle_telemetry_samples;
} tb_model_host;

/* One SUT host over one phase (table level_hosts). */
typedef struct tb_model_level_host {
    char *name;
    int64_t tiles;    /* the level's tiles it serves */
    double avg_watts; /* its meters' mean power summed; NaN: unknown */
    int64_t samples;  /* its meters' power samples in the phase */
    double cpu_util_pct, avg_freq_mhz;
    char *freq_source;              /* NULL: none */
    tb_model_int telemetry_samples; /* unknown: the host has no telemetry */
} tb_model_level_host;

/* One QoS rule's verdict: the level's (tile 0) or one tile's. */
typedef struct tb_model_qos {
    int tile;
    char *rule;
    double observed, limit;
    int judged; /* 0: too few ops, neither pass nor fail */
    int pass;   /* judged and met */
    tb_model_int ops, min_ops;
    char *reason;
} tb_model_qos;

/* Percentiles of the latency from the actual send, ms. */
#define TB_MODEL_UNC_PCTS 5 /* p50, p90, p95, p99, p99.9 */

typedef struct tb_model_op {
    char *name;
    tb_model_int count, errors, count_all;
    double mean_ms, p50_ms, p90_ms, p95_ms, p99_ms, p999_ms, max_ms;
    int classes_known; /* 0: a row stored before schema 5 (errors not split) */
    int64_t errors_by_class[TB_ERR_NCLASSES];
    int uncorrected_readable; /* 0: the stored uncorrected histogram does not decode */
    double unc_mean_ms, unc_pct_ms[TB_MODEL_UNC_PCTS], unc_max_ms; /* NaN: none */
    int metric;       /* counts toward the workload's throughput (0 also for rows before schema 3) */
    tb_hist *hist;    /* with TB_MODEL_OP_HISTS: corrected latency, µs; NULL when none or unreadable */
    char *hist_error; /* with TB_MODEL_OP_HISTS: why the stored histogram does not decode, else NULL */
    /* with TB_MODEL_OP_HISTS: latency from the actual send, µs; NULL when none or unreadable */
    tb_hist *hist_uncorrected;
} tb_model_op;

typedef struct tb_model_workload {
    int64_t id; /* the store's row id: the order stored */
    char *name;
    int64_t tile;
    tb_model_int ops, errors;
    int classes_known; /* every op's classes known */
    uint64_t errors_by_class[TB_ERR_NCLASSES];
    double throughput;
    char *unit;
    double reference, normalized;
    size_t n_ops;
    tb_model_op *ops_list;
} tb_model_workload;

/* Host telemetry of a level's steady state. */
#define TB_MODEL_CPU_MODES 8 /* user nice sys idle iowait irq softirq steal */
typedef struct tb_model_telemetry {
    double cpu_util_pct, avg_freq_mhz;
    char *freq_source;
    double mode_pct[TB_MODEL_CPU_MODES];
    tb_model_int samples;
    tb_model_obj cstate_residency_pct;
} tb_model_telemetry;

/* One op of one workload of one level phase, merged over its tiles. */
typedef struct tb_model_op_group {
    char *workload, *op;
    uint64_t count, errors; /* summed over tiles */
    uint64_t errors_by_class[TB_ERR_NCLASSES];
    int classes_known;
    tb_hist *hist; /* corrected latency, µs; never NULL, may be empty */
} tb_model_op_group;

/* One load-generator agent over one phase (level_agents). */
typedef struct tb_model_agent {
    char *name, *host;
    tb_model_int tile_lo, tile_hi; /* unknown: no tiles this level */
    int64_t threads, users;
    tb_model_int ops, errors;
    double cpu_s;
    tb_model_int stall_max_us, stall_p99_us;
    tb_model_int clock_offset_us, clock_bound_us; /* unknown: not measured */
    char *lost_at;                                /* NULL: not lost */
} tb_model_agent;

/* One infrastructure operation ([infra.NAME]) over one phase (table infra). */
typedef struct tb_model_infra {
    char *name, *kind;
    int64_t users, ops, errors, count_all, bytes;
    int64_t errors_by_class[TB_ERR_NCLASSES];
    double mb_per_s;                                /* NaN: no op moved bytes */
    double ops_per_hour;                            /* ops / steady seconds x 3600 */
    double reference;                               /* NaN: none */
    double normalized;                              /* NaN: no reference */
    double mean_ms, p50_ms, p95_ms, p99_ms, max_ms; /* op durations; NaN: no op ended */
    tb_hist *hist;    /* with TB_MODEL_OP_HISTS: the op durations, µs; NULL when none stored or unreadable */
    char *hist_error; /* with TB_MODEL_OP_HISTS: why the stored histogram does not decode, else NULL */
} tb_model_infra;

/* What one kept infrastructure op did (table infra_outputs). */
typedef struct tb_model_infra_output {
    char *name, *started_at, *status, *output; /* status "ok" or an error class */
    int64_t user, tile;
    double duration_ms;
    tb_model_int exit_code; /* unknown: killed, or not a command */
} tb_model_infra_output;

/* The inlet temperature over one phase or active idle (table
 * inlet_temperatures): measured 0 when nothing was stored for it (the run had
 * no temperature source: "not measured"); samples readings, their minimum,
 * mean and maximum in degrees C (NaN when samples is 0). */
typedef struct tb_model_temp {
    int measured;
    int64_t samples;
    double min_c, mean_c, max_c;
} tb_model_temp;

/* One stored phase of one load level. */
typedef struct tb_model_level {
    int64_t id; /* the store's row id: levels in the order they were stored sort by it */
    int64_t tiles, phase, repeat;
    double score, avg_watts, ppkw;
    int qos_pass, qos_not_judged, valid;
    char *invalid_reason, *steady_start, *steady_end;
    char *alone; /* a consolidation-interference level: the workload that ran alone; NULL: the whole tile */
    double steady_s;
    tb_model_int samples_total, samples_bad;
    /* The meters' stated uncertainty over the level's samples, % of the
     * reading: the worst and the mean of those that state one (NaN: none). */
    double max_uncertainty_pct, mean_uncertainty_pct;
    /* This host's CPU outside the SUT's and the load generator's processes
     * over steady state, % of all its CPU (NaN: not measured), and the
     * local SUT server processes found for it (-1: not measured). */
    double other_cpu_pct;
    int sut_processes;
    size_t n_qos, n_tile_qos;
    tb_model_qos *qos, *tile_qos; /* the level's rules; each tile's */
    tb_model_telemetry telemetry;
    size_t n_workloads;
    tb_model_workload *workloads;
    size_t n_groups; /* with TB_MODEL_MERGED_LATENCY */
    tb_model_op_group *groups;
    size_t n_agents; /* 0: the local load generator ran it */
    tb_model_agent *agents;
    size_t n_hosts; /* 0: no [host.NAME] sections; else in the run's host order */
    tb_model_level_host *hosts;
    /* infrastructure operations (model_infra.c): score is the final score */
    double app_score;   /* the application score (= score without operations and before schema 10) */
    double infra_score; /* NaN: none ran, or one had no reference */
    int has_infra;      /* operations ran beside the tiles (n_infra > 0) */
    size_t n_infra;
    tb_model_infra *infra;
    size_t n_infra_outputs;
    tb_model_infra_output *infra_outputs;
    tb_model_temp inlet; /* model_temp.c */
} tb_model_level;

/* One load level over its phases and repeats (the median phase of each
 * repeat; mean, min and max over repeats). Only the whole tile's levels:
 * a workload alone (--interference) is not a load level of the sweep. */
typedef struct tb_model_summary {
    int64_t tiles;
    int phases, repeats, qos_pass, qos_not_judged, valid;
    tb_score_stats score, avg_watts, ppkw;
    int has_infra;                         /* a phase ran infrastructure operations */
    tb_score_stats app_score, infra_score; /* of the same median phases as score */
} tb_model_summary;

typedef struct tb_model_event {
    char *at, *kind, *message;
} tb_model_event;

/* One level's ranging pass for one meter (level_ranges): the peaks read
 * while it auto-ranged and the fixed ranges it then measured on. */
typedef struct tb_model_ranging {
    int64_t tiles, repeat, meter, samples;
    char *alone; /* NULL: the whole tile */
    double peak_v, peak_a, volt_range_v, amp_range_a;
} tb_model_ranging;

/* One stored power sample (power_samples), for the power over time chart. */
enum { TB_MODEL_RAMP_UP = 1, TB_MODEL_WARM_UP, TB_MODEL_RAMP_DOWN };
typedef struct tb_model_sample {
    int64_t mono_us;  /* the monotonic clock of the stages */
    int64_t level_id; /* 0: active idle, or a ramp (stage) */
    int stage;        /* power_samples.stage: TB_MODEL_RAMP_UP, _WARM_UP, _RAMP_DOWN; 0 idle or steady */
    int meter;        /* meters[meter] */
    unsigned flags;   /* TB_SAMPLE_* */
    double watts;     /* NaN: none */
    char *reason;     /* why it is bad (schema 6); NULL: none */
} tb_model_sample;

/* One stage of the run (table stages, schema 11; for runs stored before,
 * the steady windows of the levels and the span of the active idle samples). */
typedef struct tb_model_stage {
    char *stage;                  /* "idle", "ramp-up", "warm-up", "steady", "ramp-down" */
    int64_t tiles, repeat, phase; /* phase 1..N for steady, else 0 */
    char *alone;                  /* NULL: the whole tile */
    int64_t start_mono_us, end_mono_us;
} tb_model_stage;

typedef struct tb_model_run {
    int64_t id;
    char *label, *status; /* status: the effective one (tb_store_effective_status) */
    char *started_at, *finished_at, *tilebench_version, *tile_name, *tile_spec, *config_text;
    tb_model_obj host, settings;
    size_t n_meters;
    tb_model_meter *meters;
    size_t n_hosts; /* 0: no [host.NAME] sections (one SUT) */
    tb_model_host *hosts;
    double active_idle_watts;
    double idle_cpu_util_pct, idle_avg_freq_mhz; /* active idle telemetry */
    int64_t idle_telemetry_samples;
    int temp_measured;        /* the run had an inlet temperature source (a row in inlet_temperatures) */
    tb_model_temp idle_inlet; /* over active idle */
    tb_model_int saturation_tiles;
    double peak_score, peak_ppkw, overall_efficiency;
    int estimated_power; /* a meter is a model (estimate:) */
    int64_t campaign_id; /* 0: not part of a campaign */
    char *campaign_name, *campaign_config;
    size_t n_levels;
    tb_model_level *levels; /* ORDER BY repeat, tiles, then alone levels (--interference) before the whole tile's,
                               each in the order stored (phase) */
    size_t n_summary;
    tb_model_summary *summary;
    size_t n_events;
    tb_model_event *events;
    size_t n_ranging; /* 0: no ranging pass (run --ranging) */
    tb_model_ranging *ranging;
    /* with TB_MODEL_POWER_SERIES (model_power.c): every power sample by
     * mono_us, and the stages by start */
    size_t n_samples;
    tb_model_sample *samples;
    size_t n_stages;
    tb_model_stage *stages;
} tb_model_run;

/* Also merge each level's op histograms over tiles (levels[i].groups). */
#define TB_MODEL_MERGED_LATENCY 1
/* Only the run's identity and status and its levels with their QoS
 * verdicts (for validate): no meters, telemetry, workloads, events, host or
 * settings. */
#define TB_MODEL_VERDICTS_ONLY 2
/* Also decode each op's corrected latency histogram (ops_list[k].hist) and
 * keep its uncorrected one (hist_uncorrected). */
#define TB_MODEL_OP_HISTS 4
/* Strings as stored, not made UTF-8 (validate and compare print them so). */
#define TB_MODEL_RAW_TEXT 8
/* Also read every power sample and the stages (the power over time chart). */
#define TB_MODEL_POWER_SERIES 16

/* Reads run_id. *out is malloc'd (tb_model_run_free). 0, or -1 with err
 * ("run 7 not found", a database error). */
int tb_model_read_run(tb_store *s, int64_t run_id, int flags, tb_model_run **out, char *err) TB_WUR;
void tb_model_run_free(tb_model_run *r); /* NULL is a no-op */

/* A level's QoS in one word: "pass" (every rule judged and met), "fail" (a
 * judged rule failed, in the level's verdict or a tile's) or "incomplete"
 * (none failed, some rule not judged: too few ops). THE word: the console,
 * every report format, runs and validate print this and nothing else. */
const char *tb_model_qos_verdict(int qos_pass, int not_judged);

/* A level phase's QoS in counts, each rule once over the level's verdict and
 * its tiles': failed when it failed in any, else not judged when it went
 * unjudged in any, else passed (judged = passed + failed). And the hint over
 * every rule row not judged: the steady state at which its ops would reach
 * the least it needs, steady_s x min_ops / ops (ops grow with the steady
 * state's length), the largest of those rounded up by
 * tb_model_steady_round_up. A row with no op at all gives no length:
 * no_ops counts those. Rule pointers point into the rows given. */
typedef struct tb_model_qos_counts {
    int judged, passed, failed, not_judged;
    const char *first_failed;
    double steady_s;     /* rounded up; NaN: no row not judged saw an op */
    double steady_raw_s; /* before rounding */
    const char *worst;   /* the rule row that needs the most */
    int worst_tile;      /* its tile; 0: the level's verdict */
    int64_t worst_ops, worst_min_ops;
    int no_ops; /* rows not judged that saw no op */
    const char *first_no_ops;
} tb_model_qos_counts;

void tb_model_qos_count(const tb_model_qos *level, size_t n, const tb_model_qos *tiles, size_t nt, double steady_s,
                        tb_model_qos_counts *c);
void tb_model_level_qos_count(const tb_model_level *lv, tb_model_qos_counts *c);
/* Seconds rounded up to a whole step: 10 s up to 10 min, 1 min up to 1 h,
 * 5 min above (179.3 -> 180, 601 -> 660, 3601 -> 3900). */
double tb_model_steady_round_up(double s);
/* "6 judged: 6 passed, 0 failed; 14 not judged" into buf. */
void tb_model_qos_counts_text(const tb_model_qos_counts *c, char *buf, size_t len);
/* The hint line's text into buf ("a steady state of at least 180 s (this
 * one: 20 s) would judge every rule (...)"); 0 (buf untouched) when every
 * rule was judged. steady_s: the phase's steady state. */
int tb_model_qos_hint(const tb_model_qos_counts *c, double steady_s, char *buf, size_t len);

/* A level phase's energy per op (scoring/energy.h, docs/method.md): the
 * SUT's energy over steady state, J per metric op, and per workload (its
 * tiles summed) its share of normalized throughput and its J per op. */
#define TB_MODEL_ENERGY_WL 16
typedef struct tb_model_energy_wl {
    const char *workload; /* borrowed from the level's workloads */
    double ops, normalized, share, j_per_op;
} tb_model_energy_wl;

typedef struct tb_model_energy {
    double joules, ops, j_per_op;
    double norm_perf, efficiency; /* score / peak score, and that per kW (the efficiency curve) */
    size_t n;                     /* workloads, in stored order (at most TB_MODEL_ENERGY_WL) */
    tb_model_energy_wl wl[TB_MODEL_ENERGY_WL];
} tb_model_energy;

/* lv's energy figures; peak_score the run's (r->peak_score) for the efficiency curve. */
void tb_model_level_energy(const tb_model_level *lv, double peak_score, tb_model_energy *e);

/* Fills r->summary, peak_score, peak_ppkw and overall_efficiency from r->levels
 * whose alone is NULL (model.c): the whole tile's levels. */
void tb_model_summarize(tb_model_run *r);

/* Several reads as one snapshot: opens a read transaction unless one is
 * open; returns 1 when it opened one, for tb_model_snapshot_end. */
int tb_model_snapshot_begin(tb_store *s);
void tb_model_snapshot_end(tb_store *s, int opened);

/* ---- the run list ---------------------------------------------------------- */

/* One run of the list, its strings as stored (not made UTF-8). */
typedef struct tb_model_run_row {
    int64_t id;
    char *started_at, *status, *label; /* status effective */
    char *finished_at, *tile_spec;
    tb_model_int saturation_tiles;
    int levels;                   /* distinct load levels */
    double peak_score, peak_ppkw; /* the best stored phase's; NaN: none */
    int estimated;
    const char *qos_verdict; /* tb_model_qos_verdict of its worst level phase (static); NULL: no level */
} tb_model_run_row;

typedef struct tb_model_campaign_run {
    int64_t id;
    char *config;
} tb_model_campaign_run;

typedef struct tb_model_campaign {
    int64_t id;
    char *name, *baseline, *status, *started_at, *message;
    size_t n_runs;
    tb_model_campaign_run *runs;
} tb_model_campaign;

typedef struct tb_model_run_list {
    size_t n_runs;
    tb_model_run_row *runs;
    size_t n_campaigns;
    tb_model_campaign *campaigns;
} tb_model_run_list;

/* Every run, by id, and the campaigns. 0, or -1 with err. */
int tb_model_read_run_list(tb_store *s, tb_model_run_list **out, char *err) TB_WUR;
/* 1 when run id is stored, 0 when not, -1 on a database error (err set). */
int tb_model_run_exists(tb_store *s, int64_t id, char *err) TB_WUR;
void tb_model_run_list_free(tb_model_run_list *l);

#endif
