/*
 * verify_int.h: between the verifier's files (verify.c reads the bundle and
 * runs the checks; bundle.c the archive and manifest; vmodel.c the tables as
 * levels and samples; figures.c the published figures; qos_check.c the QoS
 * verdicts; rules.c the run rules).
 */
#ifndef TB_VERIFY_INT_H
#define TB_VERIFY_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "verify/hdrlog.h"
#include "verify/vcsv.h"
#include "verify/verify.h"

/* ---- verify.c: the memory a bundle may make check take ---- */

/* Everything check holds of a bundle (its files, their table cells, the
 * histograms' counts) is charged to one budget: a crafted bundle of huge
 * tables ends with a clear error instead of exhausting memory. The budget
 * counts what was taken, never what was given back: an upper bound. */
#define TB_V_MEM_DEFAULT_MIB 4096
/* Starts a budget of max bytes (check: TILEBENCH_CHECK_MAX_MIB, or the
 * default). */
void tb_vmem_reset(size_t max);
/* Charges n bytes: 0, or -1 once the budget is spent. */
int tb_vmem_take(size_t n);
/* The budget's size in bytes. */
size_t tb_vmem_max(void);

/* ---- bundle.c ---- */

typedef struct tb_vfile {
    char *path; /* relative to the bundle's folder */
    unsigned char *data;
    size_t len;
} tb_vfile;

typedef struct tb_vbundle {
    char *folder; /* "tilebench-run-<UUID>" */
    tb_vfile *files;
    size_t n, cap;
    char **stray; /* entries outside the folder, absolute, with "..", or not regular files */
    size_t n_stray, cap_stray;
    char **dups; /* paths the archive holds twice */
    size_t n_dups, cap_dups;
} tb_vbundle;

/* Reads a gzip-compressed tar into b. Returns 0, or -1 with err when it is
 * not one (or is empty). */
int tb_vbundle_read(const char *name, const void *data, size_t len, tb_vbundle *b, char *err);
const tb_vfile *tb_vbundle_find(const tb_vbundle *b, const char *path);
void tb_vbundle_free(tb_vbundle *b);
/* Check 1: the manifest's file set and every hash; lines into r. */
void tb_vcheck_manifest(const tb_vbundle *b, const json_t *manifest, tb_vresult *r);
/* ---- describe.c ---- */
struct tb_vdata;
/* Check 1's second part: the manifest's fields of the run against the data. */
void tb_vcheck_describe(const tb_vbundle *b, const json_t *manifest, const struct tb_vdata *d, tb_vresult *r);
/* SHA-256 of data as 64 lower-case hex digits into hex (65 bytes). */
int tb_vsha256_hex(const void *data, size_t len, char *hex);

/* ---- vmodel.c ---- */

/* Flag bits of power_samples.flags (docs/meters.md). */
#define TB_V_INVALID     0x01u
#define TB_V_MISSING     0x02u
#define TB_V_OVERRANGE   0x04u
#define TB_V_ESTIMATED   0x08u
#define TB_V_AUTORANGE   0x10u
#define TB_V_IMPLAUSIBLE 0x20u
#define TB_V_BAD         (TB_V_INVALID | TB_V_MISSING | TB_V_OVERRANGE | TB_V_IMPLAUSIBLE)

typedef struct tb_vsample {
    int meter;
    int64_t mono_us;
    double watts; /* NAN: NULL */
    unsigned flags;
    double unc_pct; /* NAN: the sample carries none */
} tb_vsample;

/* A sample counts toward a mean: finite watts and no bad flag. */
int tb_vsample_valid(const tb_vsample *s);

typedef struct tb_vlevel {
    size_t row; /* in levels.csv */
    int64_t id, tiles, phase, repeat;
    const char *alone; /* NULL: the whole tile */
    int64_t t0, t1;    /* steady window [t0, t1), µs, the samples' clock */
    double window_s;   /* (t1 - t0) / 1e6 */
    tb_vsample *s;     /* its samples, by time then meter */
    size_t n_s;
    char tag[96]; /* "level 3 (tiles 2)" or "level 3 (tiles 2, phase 2)" */
} tb_vlevel;

typedef struct tb_vdata {
    tb_vcsv runs, meters, levels, workloads, ops, qos, infra, power, events, agents, calibrations, telem;
    tb_vcsv channels, ranges, inlet; /* channel_samples, level_ranges, inlet_temperatures (optional) */
    tb_vcsv temps;                   /* temperature_samples (optional: older bundles have none) */
    json_t *report;                  /* report.json */
    json_t *settings;                /* runs.settings_json, {} when NULL */
    const char *config;              /* runs.config_text; tiles.ini's text when NULL */
    tb_vh_log hlog;
    int n_meters;
    tb_vlevel *lv;
    size_t n_lv;
    tb_vsample *idle; /* active idle samples (stage idle; on older rows level_id NULL) */
    size_t n_idle;
    tb_vsample *all; /* every sample of the run (the ramps' too), by meter then time */
    size_t n_all;
} tb_vdata;

/* Rows of levels.csv check reads (and report.json levels it searches):
 * the checks loop over pairs of levels (docs/verify.md, "Limits"). */
#define TB_V_LEVELS_MAX 10000

/* Builds levels and samples from the tables. Returns 0, or -1 with err
 * naming the file, row and column of a value that does not read. */
int tb_vmodel_build(tb_vdata *d, char *err);
void tb_vmodel_free(tb_vdata *d);
/* The column's cell as a number, NAN when NULL or malformed. */
double tb_vcell_real(const tb_vcsv *t, size_t r, const char *col);
/* The column's cell as an integer, def when NULL or malformed. */
int64_t tb_vcell_int(const tb_vcsv *t, size_t r, const char *col, int64_t def);
const char *tb_vcell(const tb_vcsv *t, size_t r, const char *col);

/* The report.json entry (of the array levels) of level lv, the i-th of
 * levels.csv: the one at position i when its tiles, phase, repeat and
 * alone agree, else the first that agrees (searched only when the array has
 * at most TB_V_LEVELS_MAX entries); NULL when none does. */
const json_t *tb_vreport_level(const json_t *levels, size_t i, const tb_vlevel *lv);

/* The first i of [0, n) for which before(base, i, key) is 0, where before
 * is 1 for a prefix of [0, n) and 0 after it: the lower bound of key in an
 * array sorted by it, found by a binary search. */
size_t tb_vfirst(const void *base, size_t n, const void *key,
                 int (*before)(const void *base, size_t i, const void *key));

/* Mean power of a level (or idle) from its samples: per meter the
 * trapezoid over its valid samples, summed over meters; NAN when a meter
 * has none. */
double tb_vmean_power(const tb_vsample *s, size_t n, int n_meters);

/* ---- figures.c, qos_check.c, rules.c ---- */

/* The tile file's references ([workload.NAME] and [infra.NAME] reference,
 * or the calibration settings.reference_source names), with each
 * workload's kind and unit. *parsed is 0 when the tile file does not parse. */
typedef struct tb_vrefs tb_vrefs;
tb_vrefs *tb_vrefs_load(const tb_vdata *d, int *parsed);
void tb_vrefs_free(tb_vrefs *f);
/* Workload row wr's throughput (its metric ops of ops.csv over window_s,
 * in its unit) and its reference (NAN: none). 0, or -1 when the tile file
 * has no section for it or its kind or unit is unknown here. */
int tb_vworkload_rate(const tb_vdata *d, const tb_vrefs *f, size_t wr, double window_s, double *thr, double *ref);
/* Workload row wr's metric ops (ops.csv) and in *per its unit per second
 * (1 for ops/s, 60 for OPM); -1 as tb_vworkload_rate. */
int64_t tb_vworkload_ops(const tb_vdata *d, const tb_vrefs *f, size_t wr, double *per);
/* Operation NAME's reference in ops per hour, NAN when it has none. */
double tb_vinfra_ref(const tb_vrefs *f, const char *name);

/* ---- mix.c ---- */

/* A workload's target mix: each mix op's target share, %. */
typedef struct tb_vmix {
    size_t n;
    char op[8][32];
    double pct[8];
} tb_vmix;
/* The targets of workload NAME ([workload.NAME] of config): 0, or -1 when
 * its kind has no mix (only kv and web have one) or the file does not give
 * it whole. */
int tb_vmix_targets(const char *config, const char *workload, tb_vmix *out);

void tb_vcheck_figures(const tb_vdata *d, tb_vresult *r);
/* Per-host mean power, samples and active idle of report.json (hosts.c). */
void tb_vcheck_hosts(const tb_vdata *d, tb_vresult *r);
/* Each level's and active idle's telemetry of report.json (telemetry.c). */
void tb_vcheck_telemetry(const tb_vdata *d, tb_vresult *r);
/* The interference table of report.json (interference.c). */
void tb_vcheck_interference(const tb_vdata *d, tb_vresult *r);
/* report.csv and report.html against report.json (reports.c). */
void tb_vcheck_reports(const tb_vbundle *b, const tb_vdata *d, tb_vresult *r);
void tb_vcheck_qos(const tb_vdata *d, tb_vresult *r);
/* Adds the corrected latency histograms of histograms.hlog of workload's op
 * ("*": every op) in level level_id, every tile, to *m (zeroed the first
 * time), count by count (qos_check.c). -1 when two layouts differ or a name
 * is too long. */
int tb_vlatency_merge(const tb_vdata *d, int64_t level_id, const char *workload, const char *op, tb_vh_hist *m);
/* Each op's latency figures of report.json against histograms.hlog (latency.c). */
void tb_vcheck_latency(const tb_vdata *d, tb_vresult *r);
/* Each level's QoS verdict and uncertainty of report.json (levelsum.c). */
void tb_vcheck_levelsum(const tb_vdata *d, tb_vresult *r);
void tb_vcheck_rules(const tb_vdata *d, tb_vresult *r);
/* The lab-measurement rules (labrules.c): each multi-channel sample the sum
 * of its channels, and a channel's bad samples against the stored validity;
 * the ranging pass's peaks and ranges; the inlet temperature rule. */
void tb_vcheck_lab(const tb_vdata *d, tb_vresult *r);

/* The run rules as pure functions over rows (each returns 1 pass, 0 fail
 * and writes its figure, at most len bytes). */
int tb_vrule_sample_rate(const tb_vsample *s, size_t n, int n_meters, char *fig, size_t len);
int tb_vrule_bad_samples(const tb_vsample *s, size_t n, int n_meters, double window_s, char *fig, size_t len);
int tb_vrule_uncertainty(const tb_vsample *s, size_t n, char *fig, size_t len);
int tb_vrule_autorange(const tb_vsample *s, size_t n, char *fig, size_t len);
/* all: every sample of the run (any level), by meter then time (d->all), for the
 * nearest sample of each edge by a binary search. */
int tb_vrule_edges(const tb_vsample *all, size_t n_all, int n_meters, int64_t t0, int64_t t1, char *fig, size_t len);
/* The first position in all (by meter, then time: d->all) at or after
 * meter m's time t (rules.c). */
size_t tb_vsample_first(const tb_vsample *all, size_t n, int m, int64_t t);
/* The CPU share (%) a phase-health event states ("...; CPU 45% of 2
 * threads; ..."): 1 with *pct, 0 when the message has none. */
int tb_vrule_event_cpu(const char *msg, double *pct, int *threads);
/* A meter's calibration under the compliant preset: 1 when it is exempt
 * (estimated; estimate:, rapl: or ipmi URI) or calibrated (YYYY-MM-DD) at
 * most 365 days before started_at's date, not after it. */
int tb_vrule_calibration(const char *uri, int estimated, const char *calibrated, const char *started_at, char *fig,
                         size_t len);
/* The stage settings of a compliant run (docs/method.md, "Stages"). */
int tb_vrule_stages(const json_t *settings, char *fig, size_t len);

#endif
