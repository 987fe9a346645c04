/*
 * report_html_page.h: internal to the HTML report (report_html.c draws the
 * page's head, banners, summary and charts; report_html_tables.c its
 * tables). The page's own model: the run's rows grouped per load level, and
 * the latency series the charts and tables share.
 */
#ifndef TB_RESULTS_REPORT_HTML_PAGE_H
#define TB_RESULTS_REPORT_HTML_PAGE_H

#include <stdint.h>
#include <stdio.h>

#include "results/model.h"

/* One load level (a tiles value) over its stored rows: its phases, and
 * repeats if any. Rows of run.levels come ordered by tiles. */
typedef struct level_point {
    double tiles;
    size_t first, n; /* rows [first, first + n) of run.levels */
    int mark;        /* MARK_* over its rows */
    int not_judged;  /* some row has QoS rules not judged (too few ops) */
    char note[128];  /* tooltip suffix */
} level_point;

/* An op's latency series: one value per level row. */
typedef struct lat_series {
    const char *workload, *op; /* borrowed from the op groups */
    double pct;                /* the percentile plotted: its rule's, else 95 */
    const char *rule;          /* the percentile rule's name, NULL when none */
    double limit_ms;           /* that rule's limit, NaN when none */
    double *row;               /* per level row, NaN when not measured */
} lat_series;

typedef struct page {
    FILE *f;
    const tb_model_run *run;
    const tb_model_level *levels;
    size_t n_rows;
    const tb_model_op_group **groups; /* per level row */
    size_t *n_groups;
    level_point *pts;
    size_t n_pts;
    int any_median; /* some point is a median of several rows */
    lat_series *lat;
    size_t n_lat;
} page;

/* Writes v with `dec` decimals, or an en dash when unknown. */
void rh_put_num(FILE *f, double v, int dec);
/* Latency in ms: three decimals below 100 ms, one above. */
void rh_put_ms(FILE *f, double ms);
/* A known integer as a double for the number cells; NaN when unknown. */
double rh_int_num(tb_model_int v);

/* The page's tables, in page order (report_html_tables.c). */
void rh_levels(page *p);
void rh_energy(page *p); /* energy per op and the efficiency curve's figures */
void rh_hosts(page *p);  /* [host.NAME] runs only */
void rh_telemetry(page *p);
void rh_qos(page *p);
void rh_latency(page *p);
void rh_workloads(page *p);
void rh_meters(page *p);
void rh_events(page *p);
void rh_config(page *p);
/* The p50/p95/p99 table under workload's latency chart (report_html_tables.c). */
void rh_latency_values(page *p, const char *workload);
/* The fewest ops workload.op ran in a row of level point pt (0: none ran):
 * below tb_qos_quantile_min_ops(pct) its pNN is the slowest op, not a
 * percentile. */
uint64_t rh_point_least_ops(const page *p, const level_point *pt, const char *workload, const char *op);
/* Under the meter table: SPEC acceptance, calibration, accuracy and the
 * uncertainty per level (report_html_meters.c). */
void rh_meter_papers(page *p);
/* The power over time chart (report_html_power.c). */
void rh_power_chart(page *p);

#endif
