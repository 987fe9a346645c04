/*
 * compare_data.h: internal to results/. The comparison model every compare
 * renderer reads (compare.c builds it; compare_text.c, compare_json.c and
 * compare_html.c write it), so the three formats can never disagree.
 */
#ifndef TB_RESULTS_COMPARE_DATA_H
#define TB_RESULTS_COMPARE_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/tb_common.h"
#include "results/store.h"

/* The run-level figures compared, in this order; p95 per workload follows.
 * Score is the final score; the application and infrastructure scores are
 * shown when some run ran infrastructure operations ([infra.NAME]). */
enum { TB_CMP_SCORE, TB_CMP_PPKW, TB_CMP_WATTS, TB_CMP_CPU, TB_CMP_FREQ, TB_CMP_APP, TB_CMP_INFRA, TB_CMP_N_FIG };

typedef struct tb_cmp_figure {
    const char *key;   /* JSON key: "score", "ppkw", "avg_watts", "cpu_util_pct", "avg_freq_mhz" */
    const char *title; /* "Score", "PPKW", ... */
    const char *unit;  /* "", "score/kW", "W", "%", "MHz" */
    int dec;           /* decimals shown */
    int better;        /* +1 higher is better, -1 lower is better, 0 neither */
} tb_cmp_figure;

extern const tb_cmp_figure tb_cmp_figures[TB_CMP_N_FIG];

/* One figure of one run at one load level. */
typedef struct tb_cmp_cell {
    double value; /* NaN: not measured / not stored */
    double pct;   /* % change against the baseline run's value; NaN: none */
} tb_cmp_cell;

/* One run at one load level. */
typedef struct tb_cmp_level {
    int present;         /* 0: the run has no row at this level (all cells NaN) */
    int phases, repeats; /* most phases in a repeat; repeats measured */
    int qos_pass, valid; /* every phase of every repeat passed / was valid */
    int qos_not_judged;  /* most QoS rules not judged (too few ops) in one phase; 0: all judged */
    tb_cmp_cell fig[TB_CMP_N_FIG];
    tb_cmp_cell *p95;    /* per model workload, ms */
    tb_cmp_cell *host_w; /* per model host ([host.NAME] runs): its mean power, W; NaN: not this run's */
} tb_cmp_level;

typedef struct tb_cmp_run {
    int64_t id;
    char *label, *status, *tile_name, *tile_spec, *started_at;
    int64_t campaign_id; /* 0: none */
    char *campaign_name, *campaign_config;
    int estimated; /* a meter of the run is an estimate */
    /* the largest share of the host's CPU outside the SUT's and the load
     * generator's processes in a steady state of the run (%; NaN: not
     * measured), and its load level */
    double other_cpu_max_pct;
    int other_cpu_tiles;
    char load_hash[17]; /* digest of the workload sections of the tile text it ran (tiles/tiledef.h
                           tb_tiledef_workload_hash); "": not known (the stored text does not parse) */
    int is_baseline;
    int max_phases, max_repeats;
    tb_cmp_level *lv; /* per model level */
} tb_cmp_run;

typedef struct tb_cmp_model {
    size_t n_runs, baseline; /* baseline: index into runs */
    tb_cmp_run *runs;
    size_t n_levels;
    int *tiles; /* load levels (tiles), ascending: the union over the runs */
    size_t n_workloads;
    char **workloads; /* in order of first appearance */
    size_t n_hosts;
    char **hosts;              /* SUT hosts of the runs with [host.NAME], in order of first appearance */
    int any_fig[TB_CMP_N_FIG]; /* some run stores this figure (CPU and frequency may be absent) */
    int any_infra;             /* some run ran infrastructure operations */
    size_t n_notes;
    char **notes; /* what a reader must know: estimated power, unfinished runs, ... */
} tb_cmp_model;

/* Above this share of the host's CPU outside the SUT and the load
 * generator in a steady state, a run's comparison is flagged (store.h). */
#define TB_CMP_OTHER_CPU_LIMIT_PCT TB_OTHER_CPU_WARN_PCT

/* The explanation of the method, shared by every format. */
extern const char tb_cmp_method_phases[], tb_cmp_method_p95[], tb_cmp_method_pct[];

/* Writes the terminal tables of m to f (compare_text.c). */
void tb_compare_write_text(const tb_cmp_model *m, FILE *f);
/* Writes the JSON of m to f (compare_json.c). 0 or -1 with err. */
int tb_compare_write_json(const tb_cmp_model *m, FILE *f, char *err) TB_WUR;
/* Writes the HTML page of m to f (compare_html.c). 0 or -1 with err. */
int tb_compare_write_html(const tb_cmp_model *m, FILE *f, char *err) TB_WUR;

#endif
