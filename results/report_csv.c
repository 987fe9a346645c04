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
 * Values come from the same JSON model as the JSON report, printed with the
 * same 15 significant digits, so a CSV value equals the JSON one.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "results/report_data.h"

/* What one cell is read from: which object of the row, which key, how. */
typedef enum { SRC_RUN, SRC_LEVEL, SRC_WORKLOAD, SRC_OP, SRC_OP_ERR } csv_src;
typedef enum { VAL_TEXT, VAL_NUM, VAL_BOOL } csv_kind;

typedef struct csv_col {
    const char *header; /* column name, units included */
    csv_src src;
    const char *key;    /* key in the model object */
    csv_kind kind;
} csv_col;

/* The columns, in order. Names follow the JSON keys where one exists;
 * workload_ops / workload_errors are the workload's "ops" / "errors", renamed
 * so they do not clash with the op's own count and errors; errors_CLASS are
 * the op's errors_by_class members (empty for runs stored before the split). */
static const csv_col cols[] = {
    {"run_id", SRC_RUN, "id", VAL_NUM},
    {"label", SRC_RUN, "label", VAL_TEXT},
    {"status", SRC_RUN, "status", VAL_TEXT},
    {"estimated_power", SRC_RUN, "estimated_power", VAL_BOOL},
    {"tiles", SRC_LEVEL, "tiles", VAL_NUM},
    {"phase", SRC_LEVEL, "phase", VAL_NUM},
    {"steady_s", SRC_LEVEL, "steady_s", VAL_NUM},
    {"score", SRC_LEVEL, "score", VAL_NUM},
    {"avg_watts", SRC_LEVEL, "avg_watts", VAL_NUM},
    {"ppkw", SRC_LEVEL, "ppkw", VAL_NUM},
    {"qos_pass", SRC_LEVEL, "qos_pass", VAL_BOOL},
    {"qos_not_judged", SRC_LEVEL, "qos_not_judged", VAL_NUM},
    {"qos_verdict", SRC_LEVEL, "qos_verdict", VAL_TEXT},
    {"valid", SRC_LEVEL, "valid", VAL_BOOL},
    {"invalid_reason", SRC_LEVEL, "invalid_reason", VAL_TEXT},
    {"workload", SRC_WORKLOAD, "name", VAL_TEXT},
    {"tile", SRC_WORKLOAD, "tile", VAL_NUM},
    {"workload_ops", SRC_WORKLOAD, "ops", VAL_NUM},
    {"workload_errors", SRC_WORKLOAD, "errors", VAL_NUM},
    {"throughput", SRC_WORKLOAD, "throughput", VAL_NUM},
    {"unit", SRC_WORKLOAD, "unit", VAL_TEXT},
    {"reference", SRC_WORKLOAD, "reference", VAL_NUM},
    {"normalized", SRC_WORKLOAD, "normalized", VAL_NUM},
    {"op", SRC_OP, "name", VAL_TEXT},
    {"count", SRC_OP, "count", VAL_NUM},
    {"errors", SRC_OP, "errors", VAL_NUM},
    {"errors_connect", SRC_OP_ERR, "connect", VAL_NUM},
    {"errors_io", SRC_OP_ERR, "io", VAL_NUM},
    {"errors_timeout", SRC_OP_ERR, "timeout", VAL_NUM},
    {"errors_server", SRC_OP_ERR, "server", VAL_NUM},
    {"errors_content", SRC_OP_ERR, "content", VAL_NUM},
    {"count_all", SRC_OP, "count_all", VAL_NUM},
    {"mean_ms", SRC_OP, "mean_ms", VAL_NUM},
    {"p50_ms", SRC_OP, "p50_ms", VAL_NUM},
    {"p90_ms", SRC_OP, "p90_ms", VAL_NUM},
    {"p95_ms", SRC_OP, "p95_ms", VAL_NUM},
    {"p99_ms", SRC_OP, "p99_ms", VAL_NUM},
    {"p999_ms", SRC_OP, "p999_ms", VAL_NUM},
    {"max_ms", SRC_OP, "max_ms", VAL_NUM},
};

#define N_COLS (sizeof cols / sizeof cols[0])

/* Writes s as one field, quoted only when RFC 4180 requires it. */
static void put_field(FILE *f, const char *s) {
    const char *p;
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

/* One cell; v NULL (object absent on this row) or JSON null is empty. */
static void put_value(FILE *f, const json_t *v, csv_kind kind) {
    if (!v || json_is_null(v)) return;
    switch (kind) {
    case VAL_TEXT:
        if (json_is_string(v)) put_field(f, json_string_value(v));
        return;
    case VAL_BOOL:
        if (json_is_boolean(v)) fputs(json_is_true(v) ? "true" : "false", f);
        return;
    case VAL_NUM:
        if (json_is_integer(v)) fprintf(f, "%lld", (long long)json_integer_value(v));
        else if (json_is_real(v) && isfinite(json_real_value(v))) fprintf(f, "%.15g", json_real_value(v));
        return;
    }
}

/* One row; wl and op may be NULL (a level without workloads, a workload
 * without ops): their columns stay empty so the level is not lost. */
static void put_row(FILE *f, const json_t *run, const json_t *lv, const json_t *wl, const json_t *op) {
    size_t i;
    for (i = 0; i < N_COLS; i++) {
        const json_t *obj = cols[i].src == SRC_RUN        ? run
                            : cols[i].src == SRC_LEVEL    ? lv
                            : cols[i].src == SRC_WORKLOAD ? wl
                            : cols[i].src == SRC_OP       ? op
                                                          : json_object_get(op, "errors_by_class");
        if (i) fputc(',', f);
        if (obj) put_value(f, json_object_get(obj, cols[i].key), cols[i].kind);
    }
    fputs("\r\n", f);
}

int tb_report_write_csv(tb_report_data *d, FILE *f, char *err) {
    const json_t *levels = json_object_get(d->run, "levels"), *lv, *wl, *op;
    size_t i, j, k;
    (void)err; /* write errors are caught by the caller's ferror check */
    for (i = 0; i < N_COLS; i++) {
        if (i) fputc(',', f);
        fputs(cols[i].header, f);
    }
    fputs("\r\n", f);
    json_array_foreach(levels, i, lv) {
        const json_t *wls = json_object_get(lv, "workloads");
        if (json_array_size(wls) == 0) put_row(f, d->run, lv, NULL, NULL);
        json_array_foreach(wls, j, wl) {
            const json_t *ops = json_object_get(wl, "operations");
            if (json_array_size(ops) == 0) put_row(f, d->run, lv, wl, NULL);
            json_array_foreach(ops, k, op) put_row(f, d->run, lv, wl, op);
        }
    }
    return 0;
}
