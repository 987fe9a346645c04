/*
 * report_csv.c: the CSV export of a run. Tidy data (one observation a row,
 * one variable a column): one row per level x phase x workload x tile x op,
 * with the level and run columns repeated on each row, so pandas.read_csv or
 * R's read.csv gives a frame that groups and plots without reshaping.
 *
 * RFC 4180: CRLF line ends, a header row, fields quoted when they hold a
 * comma, a quote, CR or LF, quotes doubled inside. Units are in the column
 * names (p95_ms, avg_watts); a throughput's unit differs per workload, so it
 * has its own column. Missing values (no power figure, an op that was never
 * measured) are empty fields, which both pandas and R read as NA; booleans are
 * true/false, which both read as logical.
 *
 * A run with SUT hosts ([host.NAME]) has two more columns per host at the
 * end, in the run's host order: watts_NAME (the host's mean power in the
 * phase; avg_watts is their sum) and tiles_NAME (the level's tiles it
 * serves). A run without hosts has exactly the columns above. A run with an
 * inlet temperature source has three more, last: inlet_min_c, inlet_mean_c
 * and inlet_max_c of the phase, in degrees C.
 *
 * Values come from the same read model (model.h) as the JSON report, printed
 * with the same 15 significant digits, so a CSV value equals the JSON one.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "results/report_infra.h"
#include "results/report_views.h"

/* The columns, in order. Names follow the JSON keys where one exists;
 * workload_ops / workload_errors are the workload's "ops" / "errors", renamed
 * so they do not clash with the op's own count and errors; errors_CLASS are
 * the op's errors_by_class members (empty for runs stored before the split). */
static const char *const headers[] = {
    "run_id",
    "label",
    "status",
    "estimated_power",
    "tiles",
    "phase",
    "steady_s",
    "score",
    "avg_watts",
    "ppkw",
    "qos_pass",
    "qos_not_judged",
    "qos_verdict",
    "valid",
    "invalid_reason",
    "workload",
    "tile",
    "workload_ops",
    "workload_errors",
    "throughput",
    "unit",
    "reference",
    "normalized",
    "op",
    "count",
    "errors",
    "errors_connect",
    "errors_io",
    "errors_timeout",
    "errors_server",
    "errors_content",
    "count_all",
    "mean_ms",
    "p50_ms",
    "p90_ms",
    "p95_ms",
    "p99_ms",
    "p999_ms",
    "max_ms",
    /* energy per op (put_energy_cells) */
    "energy_j",
    "j_per_op",
    "normalized_performance",
    "efficiency_per_kw",
    "workload_energy_share",
    "workload_j_per_op",
};

#define N_COLS (sizeof headers / sizeof headers[0])

/* The run has consolidation-interference levels (--interference). */
static int any_alone(const tb_model_run *r) {
    for (size_t i = 0; i < r->n_levels; i++)
        if (r->levels[i].alone) return 1;
    return 0;
}

/* Writes s as one field, quoted only when RFC 4180 requires it; NULL is empty. */
static void put_field(FILE *f, const char *s) {
    const char *p;
    if (!s) return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (p = s; *p; p++) {
        if (*p == '"') fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

/* Each cell is preceded by its comma (the first cell of a row is not). */
static void cell_text(FILE *f, int *first, const char *s) {
    if (!*first) fputc(',', f);
    *first = 0;
    put_field(f, s);
}

static void cell_real(FILE *f, int *first, double v) {
    if (!*first) fputc(',', f);
    *first = 0;
    if (isfinite(v)) fprintf(f, "%.15g", v);
}

static void cell_int(FILE *f, int *first, int known, long long v) {
    if (!*first) fputc(',', f);
    *first = 0;
    if (known) fprintf(f, "%lld", v);
}

static void cell_bool(FILE *f, int *first, int v) {
    if (!*first) fputc(',', f);
    *first = 0;
    fputs(v ? "true" : "false", f);
}

/* Empty cells for a part of the row that is absent. */
static void cells_empty(FILE *f, int *first, int n) {
    for (int i = 0; i < n; i++)
        cell_text(f, first, NULL);
}

static void put_level_cells(FILE *f, int *first, const tb_model_run *r, const tb_model_level *lv) {
    cell_int(f, first, 1, (long long)r->id);
    cell_text(f, first, r->label);
    cell_text(f, first, r->status);
    cell_bool(f, first, r->estimated_power);
    cell_int(f, first, 1, (long long)lv->tiles);
    cell_int(f, first, 1, (long long)lv->phase);
    cell_real(f, first, lv->steady_s);
    cell_real(f, first, lv->score);
    cell_real(f, first, lv->avg_watts);
    cell_real(f, first, lv->ppkw);
    cell_bool(f, first, lv->qos_pass);
    cell_int(f, first, 1, lv->qos_not_judged);
    cell_text(f, first, tb_model_qos_verdict(lv->qos_pass, lv->qos_not_judged));
    cell_bool(f, first, lv->valid);
    cell_text(f, first, lv->invalid_reason);
}

#define WORKLOAD_COLS 8
#define OP_COLS       16

static void put_workload_cells(FILE *f, int *first, const tb_model_workload *w) {
    cell_text(f, first, w->name);
    cell_int(f, first, 1, (long long)w->tile);
    cell_int(f, first, w->ops.known, (long long)w->ops.v);
    cell_int(f, first, w->errors.known, (long long)w->errors.v);
    cell_real(f, first, w->throughput);
    cell_text(f, first, w->unit);
    cell_real(f, first, w->reference);
    cell_real(f, first, w->normalized);
}

static void put_op_cells(FILE *f, int *first, const tb_model_op *op) {
    cell_text(f, first, op->name);
    cell_int(f, first, op->count.known, (long long)op->count.v);
    cell_int(f, first, op->errors.known, (long long)op->errors.v);
    for (int k = 0; k < TB_ERR_NCLASSES; k++)
        cell_int(f, first, op->classes_known, (long long)op->errors_by_class[k]);
    cell_int(f, first, op->count_all.known, (long long)op->count_all.v);
    cell_real(f, first, op->mean_ms);
    cell_real(f, first, op->p50_ms);
    cell_real(f, first, op->p90_ms);
    cell_real(f, first, op->p95_ms);
    cell_real(f, first, op->p99_ms);
    cell_real(f, first, op->p999_ms);
    cell_real(f, first, op->max_ms);
}

/* The energy columns, after the op's (docs/method.md): the level's energy,
 * J per op and efficiency point, and the row's workload's share and J per
 * op (empty without one). */
static void put_energy_cells(FILE *f, const tb_model_run *r, const tb_model_level *lv, const tb_model_workload *w) {
    tb_model_energy e;
    int first = 0;
    double share = NAN, jpo = NAN;
    tb_model_level_energy(lv, r->peak_score, &e);
    for (size_t k = 0; w && k < e.n; k++)
        if (strcmp(e.wl[k].workload, w->name ? w->name : "") == 0) share = e.wl[k].share, jpo = e.wl[k].j_per_op;
    cell_real(f, &first, e.joules);
    cell_real(f, &first, e.j_per_op);
    cell_real(f, &first, e.norm_perf);
    cell_real(f, &first, e.efficiency);
    cell_real(f, &first, share);
    cell_real(f, &first, jpo);
}

/* One row; w and op may be NULL (a level without workloads, a workload
 * without ops): their columns stay empty so the level is not lost. */
static void put_row(FILE *f, const tb_model_run *r, const tb_model_level *lv, const tb_model_workload *w,
                    const tb_model_op *op, const tb_model_infra *x) {
    int first = 1;
    put_level_cells(f, &first, r, lv);
    if (x)
        tb_report_csv_infra_cells(f, x); /* an infrastructure operation's row */
    else if (w)
        put_workload_cells(f, &first, w);
    else
        cells_empty(f, &first, WORKLOAD_COLS);
    if (op)
        put_op_cells(f, &first, op);
    else if (!x)
        cells_empty(f, &first, OP_COLS);
    put_energy_cells(f, r, lv, x ? NULL : w);
    for (size_t h = 0; h < r->n_hosts; h++) {
        const tb_model_level_host *lh = NULL;
        for (size_t k = 0; k < lv->n_hosts; k++)
            if (lv->hosts[k].name && r->hosts[h].name && strcmp(lv->hosts[k].name, r->hosts[h].name) == 0)
                lh = &lv->hosts[k];
        cell_real(f, &first, lh ? lh->avg_watts : NAN);
        cell_int(f, &first, lh != NULL, lh ? (long long)lh->tiles : 0);
    }
    if (any_alone(r)) { /* --interference: the workload a level ran alone, empty for the whole tile */
        fputc(',', f);
        put_field(f, lv->alone);
    }
    tb_report_csv_infra_scores(f, r, lv, x);
    if (r->temp_measured) { /* the inlet temperature of the phase, degrees C */
        cell_real(f, &first, lv->inlet.min_c);
        cell_real(f, &first, lv->inlet.mean_c);
        cell_real(f, &first, lv->inlet.max_c);
    }
    fputs("\r\n", f);
}

int tb_report_write_csv(const tb_model_run *r, FILE *f, char *err) {
    (void)err; /* write errors are caught by the caller's ferror check */
    for (size_t i = 0; i < N_COLS; i++) {
        if (i) fputc(',', f);
        fputs(headers[i], f);
    }
    for (size_t h = 0; h < r->n_hosts; h++) {
        fputs(",watts_", f);
        put_field(f, r->hosts[h].name);
        fputs(",tiles_", f);
        put_field(f, r->hosts[h].name);
    }
    if (any_alone(r)) fputs(",alone", f);
    tb_report_csv_infra_header(f, r);
    if (r->temp_measured) fputs(",inlet_min_c,inlet_mean_c,inlet_max_c", f);
    fputs("\r\n", f);
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        if (lv->n_workloads == 0) put_row(f, r, lv, NULL, NULL, NULL);
        for (size_t j = 0; j < lv->n_workloads; j++) {
            const tb_model_workload *w = &lv->workloads[j];
            if (w->n_ops == 0) put_row(f, r, lv, w, NULL, NULL);
            for (size_t k = 0; k < w->n_ops; k++)
                put_row(f, r, lv, w, &w->ops_list[k], NULL);
        }
        for (size_t k = 0; k < lv->n_infra; k++)
            put_row(f, r, lv, NULL, NULL, &lv->infra[k]);
    }
    tb_report_interference_csv(r, f);
    return 0;
}
