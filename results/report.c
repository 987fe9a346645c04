/*
 * report.c: renders a stored run as JSON (the shape README's "Results and reports" documents) or as a
 * terminal summary, hands the same model to the HTML and CSV renderers
 * (report_html.c, report_csv.c, through report_data.h), and lists the runs of
 * a database. Reads only.
 *
 * One model, four views: the run is read once, inside one read transaction
 * (a consistent snapshot even while the coordinator is committing levels),
 * into a jansson tree. JSON output is that tree; the text, HTML and CSV views
 * walk the same tree, so all of them always agree. Strings reach JSON only through jansson, which
 * escapes them; the text view replaces control characters so a label cannot
 * drive the terminal.
 */
#include "results/report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "powermeter/ipmi.h"
#include "powermeter/meter.h"
#include "qos/hist.h"
#include "results/report_data.h"
#include "scoring/score.h"

/* Real numbers get 15 significant digits: every stored value round-trips
 * (latencies are whole µs / 1000) without the 17-digit noise of %.17g. */
#define JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(15))

int tb_report_parse_format(const char *s, tb_report_format *out, char *err) {
    if (s && strcmp(s, "text") == 0) *out = TB_REPORT_TEXT;
    else if (s && strcmp(s, "json") == 0) *out = TB_REPORT_JSON;
    else if (s && strcmp(s, "html") == 0) *out = TB_REPORT_HTML;
    else if (s && strcmp(s, "csv") == 0) *out = TB_REPORT_CSV;
    else {
        tb_seterr(err, "unknown report format '%s' (use text, json, html or csv)", s ? s : "");
        return -1;
    }
    return 0;
}

/* ---- reading columns into JSON ---------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid.
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_seq(const unsigned char *p, size_t n) {
    unsigned c = p[0], cp;
    size_t len, i;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, cp = c & 0x07;
    else return 0;
    if (n < len) return 0;
    for (i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

/* A JSON string from arbitrary bytes: jansson insists on UTF-8, so bytes
 * that are not (a label typed in Latin-1) become U+FFFD instead of failing
 * the whole report. */
static json_t *json_text(const char *s, size_t n) {
    json_t *j = json_stringn(s, n);
    char *buf;
    size_t i = 0, o = 0;
    if (j) return j;
    buf = xmalloc(n * 3 + 1);
    while (i < n) {
        size_t len = utf8_seq((const unsigned char *)s + i, n - i);
        if (len == 0) {
            memcpy(buf + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        } else {
            memcpy(buf + o, s + i, len);
            o += len;
            i += len;
        }
    }
    j = json_stringn(buf, o);
    free(buf);
    return j ? j : json_null();
}

static json_t *col_str(sqlite3_stmt *st, int i) {
    const char *s;
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return json_null();
    s = (const char *)sqlite3_column_text(st, i);
    return s ? json_text(s, (size_t)sqlite3_column_bytes(st, i)) : json_null();
}

static json_t *col_real(sqlite3_stmt *st, int i) {
    double v;
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return json_null();
    v = sqlite3_column_double(st, i);
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *col_int(sqlite3_stmt *st, int i) {
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return json_null();
    return json_integer((json_int_t)sqlite3_column_int64(st, i));
}

static json_t *col_bool(sqlite3_stmt *st, int i) {
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return json_null();
    return json_boolean(sqlite3_column_int(st, i) != 0);
}

/* A stored JSON object text (host_json, settings_json) as a tree: {} when
 * absent; {} and a warning when it does not parse, since a report is still
 * worth having without it. */
static json_t *col_object(sqlite3_stmt *st, int i, const char *name) {
    json_error_t jerr;
    json_t *j;
    const char *s = (const char *)sqlite3_column_text(st, i);
    if (!s) return json_object();
    j = json_loads(s, JSON_DECODE_ANY, &jerr);
    if (!j || !json_is_object(j)) {
        tb_log(TB_LOG_WARN, "stored %s is not a JSON object (%s); reporting {}", name, j ? "not an object" : jerr.text);
        json_decref(j);
        return json_object();
    }
    return j;
}

/* ---- the model ---------------------------------------------------------------- */

/* What building the model needs besides the tree: the level row ids (for
 * the text view's merged latency query), in the order of run.levels. */
typedef struct model_extra {
    int64_t *level_ids;
    size_t n_levels;
} model_extra;

typedef struct read_ctx {
    tb_store *s;
    sqlite3 *db;
    char *err;
} read_ctx;

static int prep(read_ctx *c, const char *sql, sqlite3_stmt **st) {
    if (sqlite3_prepare_v2(c->db, sql, -1, st, NULL) != SQLITE_OK) {
        tb_seterr(c->err, "report: query: %s", sqlite3_errmsg(c->db));
        return -1;
    }
    return 0;
}

/* Steps st; 1 row, 0 done, -1 error (err set). */
static int next_row(read_ctx *c, sqlite3_stmt *st) {
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    tb_seterr(c->err, "report: read: %s", sqlite3_errmsg(c->db));
    return -1;
}

/* run.meters; *estimated set when any meter is a model (estimate:). */
static int add_meters(read_ctx *c, int64_t run_id, json_t *run, int *estimated) {
    sqlite3_stmt *st = NULL;
    json_t *arr = json_array();
    int rc;
    *estimated = 0;
    json_object_set_new(run, "meters", arr);
    if (prep(c,
             "SELECT uri, model, idn, estimated, serial, firmware, driver, volt_range_v, amp_range_a, volt_mode,"
             " amp_mode, crest_factor, update_ms, avg_window_ms,"
             " (SELECT max(uncertainty_pct) FROM power_samples p WHERE p.run_id = meters.run_id"
             "  AND p.meter_idx = meters.idx),"
             " (SELECT count(*) FROM power_samples p WHERE p.run_id = meters.run_id AND p.meter_idx = meters.idx"
             "  AND (p.flags & ?2) != 0),"
             /* FLAT among the valid readings, and the valid readings (tb_ipmi_not_averaged) */
             " (SELECT count(*) FROM power_samples p WHERE p.run_id = meters.run_id AND p.meter_idx = meters.idx"
             "  AND (p.flags & ?2) = 0 AND (p.flags & ?3) != 0),"
             " (SELECT count(*) FROM power_samples p WHERE p.run_id = meters.run_id AND p.meter_idx = meters.idx"
             "  AND (p.flags & ?2) = 0)"
             " FROM meters WHERE run_id = ?1 ORDER BY idx",
             &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, (int)TB_SAMPLE_BAD);
    sqlite3_bind_int(st, 3, (int)TB_SAMPLE_FLAT);
    while ((rc = next_row(c, st)) == 1) {
        json_t *m = json_object(), *r = json_object();
        json_object_set_new(m, "uri", col_str(st, 0));
        json_object_set_new(m, "model", col_str(st, 1));
        json_object_set_new(m, "idn", col_str(st, 2));
        json_object_set_new(m, "estimated", col_bool(st, 3));
        json_object_set_new(m, "serial", col_str(st, 4));
        json_object_set_new(m, "firmware", col_str(st, 5));
        json_object_set_new(m, "driver", col_str(st, 6));
        json_object_set_new(r, "volts", col_real(st, 7));
        json_object_set_new(r, "amps", col_real(st, 8));
        json_object_set_new(r, "volt_mode", col_str(st, 9));
        json_object_set_new(r, "amp_mode", col_str(st, 10));
        json_object_set_new(m, "ranges", r);
        json_object_set_new(m, "crest_factor", col_real(st, 11));
        json_object_set_new(m, "update_ms", col_int(st, 12));
        json_object_set_new(m, "avg_window_ms", col_int(st, 13));
        json_object_set_new(m, "max_uncertainty_pct", col_real(st, 14));
        json_object_set_new(m, "invalid_samples", col_int(st, 15));
        json_object_set_new(m, "flat_readings", json_integer(sqlite3_column_int64(st, 16)));
        json_object_set_new(m, "valid_readings", json_integer(sqlite3_column_int64(st, 17)));
        json_object_set_new(
            m, "not_averaged",
            json_boolean(tb_ipmi_not_averaged(sqlite3_column_int64(st, 16), sqlite3_column_int64(st, 17))));
        if (sqlite3_column_int(st, 3)) *estimated = 1;
        json_array_append_new(arr, m);
    }
    sqlite3_finalize(st);
    return rc;
}

static int add_events(read_ctx *c, int64_t run_id, json_t *run) {
    sqlite3_stmt *st = NULL;
    json_t *arr = json_array();
    int rc;
    json_object_set_new(run, "events", arr);
    if (prep(c, "SELECT at, kind, message FROM events WHERE run_id = ?1 ORDER BY id", &st) != 0) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    while ((rc = next_row(c, st)) == 1) {
        json_t *e = json_object();
        json_object_set_new(e, "at", col_str(st, 0));
        json_object_set_new(e, "kind", col_str(st, 1));
        json_object_set_new(e, "message", col_str(st, 2));
        json_array_append_new(arr, e);
    }
    sqlite3_finalize(st);
    return rc;
}

/* The statements run once per level, prepared once per report. */
typedef struct level_stmts {
    sqlite3_stmt *qos, *workloads, *ops;
} level_stmts;

/* "qos": the level's rules (all tiles merged); "tile_qos": each tile's own
 * verdict on the same rules, with a "tile" key (VMmark: every tile must pass). */
static int add_level_qos(read_ctx *c, level_stmts *ls, int64_t level_id, json_t *lv) {
    json_t *arr = json_array(), *tiles = json_array();
    int rc;
    json_object_set_new(lv, "qos", arr);
    json_object_set_new(lv, "tile_qos", tiles);
    sqlite3_reset(ls->qos);
    sqlite3_bind_int64(ls->qos, 1, level_id);
    while ((rc = next_row(c, ls->qos)) == 1) {
        json_t *q = json_object();
        int tile = sqlite3_column_int(ls->qos, 5), judged = sqlite3_column_int(ls->qos, 6) != 0;
        int pass = judged && sqlite3_column_int(ls->qos, 3) != 0;
        if (tile > 0) json_object_set_new(q, "tile", json_integer(tile));
        json_object_set_new(q, "rule", col_str(ls->qos, 0));
        json_object_set_new(q, "observed", col_real(ls->qos, 1));
        json_object_set_new(q, "limit", col_real(ls->qos, 2));
        /* a rule not judged (too few ops) is neither: pass is null */
        json_object_set_new(q, "pass", judged ? json_boolean(pass) : json_null());
        json_object_set_new(q, "verdict", json_string(!judged ? "not judged" : pass ? "pass" : "fail"));
        json_object_set_new(q, "judged", json_boolean(judged));
        json_object_set_new(q, "ops", col_int(ls->qos, 7));
        json_object_set_new(q, "min_ops", col_int(ls->qos, 8));
        json_object_set_new(q, "reason", col_str(ls->qos, 4));
        json_array_append_new(tile > 0 ? tiles : arr, q);
    }
    return rc;
}

/* A level's QoS in one word: "pass" (every rule judged and met), "fail" (a
 * judged rule failed) or "incomplete" (none failed, some not judged). */
static const char *qos_verdict_word(int qos_pass, int not_judged) {
    return !qos_pass ? "fail" : not_judged > 0 ? "incomplete" : "pass";
}

/* One stored phase row, for the per-level summary. */
typedef struct phase_row {
    int repeat, tiles, phase, qos_pass, qos_not_judged, valid;
    double score, watts, ppkw; /* NaN when unknown */
} phase_row;

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *stats_json(const double *v, int n) {
    tb_score_stats st;
    json_t *o = json_object();
    tb_score_repeat_stats(v, n, &st);
    json_object_set_new(o, "mean", st.n > 0 ? json_real(st.mean) : json_null());
    json_object_set_new(o, "min", st.n > 0 ? json_real(st.min) : json_null());
    json_object_set_new(o, "max", st.n > 0 ? json_real(st.max) : json_null());
    return o;
}

/*
 * "summary": one entry per load level (tiles). Within each repeat the level's
 * figures are those of its median phase (VMmark; the lower median for an
 * even count, so they come from one real phase); across repeats, mean, min
 * and max. A level passes QoS / is valid only when all its phases in all
 * repeats do. Also sets peak_score, peak_ppkw (over these means) and
 * overall_efficiency: SPECpower's sum of performance / sum of power with
 * active idle counted as zero-score power, in score per kW.
 */
static void add_summary(json_t *run, const phase_row *rows, int n) {
    json_t *arr = json_array();
    double *lvl_score = xcalloc((size_t)n + 1, sizeof(double)), *lvl_watts = xcalloc((size_t)n + 1, sizeof(double));
    double peak_score = NAN, peak_ppkw = NAN, idle = NAN;
    int n_lvl = 0;
    json_t *idle_j = json_object_get(run, "active_idle_watts");
    if (json_is_number(idle_j)) idle = json_number_value(idle_j);
    for (int i = 0; i < n; i++) {
        int tiles = rows[i].tiles, seen = 0, qos = 1, valid = 1, reps = 0, phases = 0, not_judged = 0;
        double sc[256], w[256], pk[256];
        for (int j = 0; j < i; j++)
            if (rows[j].tiles == tiles) seen = 1;
        if (seen) continue;
        /* each repeat of this level: its median phase */
        for (int rep = 1; rep <= 1000 && reps < 256; rep++) {
            double ph[256];
            int idx[256], k = 0, any = 0;
            for (int j = 0; j < n && k < 256; j++) {
                if (rows[j].tiles != tiles || rows[j].repeat != rep) continue;
                any = 1;
                idx[k] = j;
                ph[k++] = rows[j].score;
                if (!rows[j].qos_pass) qos = 0;
                if (rows[j].qos_not_judged > not_judged) not_judged = rows[j].qos_not_judged;
                if (!rows[j].valid) valid = 0;
            }
            if (!any) {
                int later = 0;
                for (int j = 0; j < n; j++)
                    if (rows[j].tiles == tiles && rows[j].repeat > rep) later = 1;
                if (!later) break;
                continue;
            }
            if (k > phases) phases = k;
            {
                int m = idx[tb_score_median_index(ph, k)];
                sc[reps] = rows[m].score;
                w[reps] = rows[m].watts;
                pk[reps] = rows[m].ppkw;
                reps++;
            }
        }
        {
            json_t *o = json_object(), *js = stats_json(sc, reps), *jw = stats_json(w, reps),
                   *jp = stats_json(pk, reps);
            json_object_set_new(o, "tiles", json_integer(tiles));
            json_object_set_new(o, "phases", json_integer(phases));
            json_object_set_new(o, "repeats", json_integer(reps));
            json_object_set_new(o, "qos_pass", json_boolean(qos));
            json_object_set_new(o, "qos_not_judged", json_integer(not_judged));
            json_object_set_new(o, "qos_verdict", json_string(qos_verdict_word(qos, not_judged)));
            json_object_set_new(o, "valid", json_boolean(valid));
            json_object_set_new(o, "score", js);
            json_object_set_new(o, "avg_watts", jw);
            json_object_set_new(o, "ppkw", jp);
            if (json_is_number(json_object_get(js, "mean"))) {
                double m = json_number_value(json_object_get(js, "mean"));
                if (isnan(peak_score) || m > peak_score) peak_score = m;
                lvl_score[n_lvl] = m;
                lvl_watts[n_lvl] = json_is_number(json_object_get(jw, "mean"))
                                       ? json_number_value(json_object_get(jw, "mean"))
                                       : NAN;
                n_lvl++;
            }
            if (json_is_number(json_object_get(jp, "mean"))) {
                double m = json_number_value(json_object_get(jp, "mean"));
                if (isnan(peak_ppkw) || m > peak_ppkw) peak_ppkw = m;
            }
            json_array_append_new(arr, o);
        }
    }
    json_object_set_new(run, "summary", arr);
    json_object_set_new(run, "peak_score", num_or_null(peak_score));
    json_object_set_new(run, "peak_ppkw", num_or_null(peak_ppkw));
    {
        tb_score_efficiency d;
        double eff = tb_score_overall_efficiency(lvl_score, lvl_watts, n_lvl, isfinite(idle) ? idle : -1, &d);
        json_object_set_new(run, "overall_efficiency", d.levels_used > 0 ? json_real(eff) : json_null());
    }
    free(lvl_score);
    free(lvl_watts);
}

/* Column of the ops query where err_connect .. err_content start. */
#define OPS_ERR_COL 11

/* "errors_by_class" of one op from the err_* columns: {"connect": n, "io":
 * n, "timeout": n, "server": n, "content": n}; null on rows stored before
 * schema 5, whose errors were not split. Adds the counts into sum, or
 * clears *sum_known when the row has none. */
static json_t *errors_by_class(sqlite3_stmt *st, uint64_t *sum, int *sum_known) {
    json_t *o;
    if (sqlite3_column_type(st, OPS_ERR_COL) == SQLITE_NULL) {
        *sum_known = 0;
        return json_null();
    }
    o = json_object();
    for (int k = 0; k < TB_ERR_NCLASSES; k++) {
        int64_t v = sqlite3_column_int64(st, OPS_ERR_COL + k);
        json_object_set_new(o, tb_store_err_class_name(k), json_integer(v));
        sum[k] += v > 0 ? (uint64_t)v : 0;
    }
    return o;
}

/* The workload's "errors_by_class": its ops' classes summed (null when an op
 * predates the split). */
static json_t *class_sum_json(const uint64_t *sum, int known) {
    json_t *o;
    if (!known) return json_null();
    o = json_object();
    for (int k = 0; k < TB_ERR_NCLASSES; k++) json_object_set_new(o, tb_store_err_class_name(k), json_integer((json_int_t)sum[k]));
    return o;
}

#define OPS_UNC_COL 16 /* hist_uncorrected */

/* An op's "uncorrected" object: mean and percentiles (ms) of its latency
 * from the actual send (ops.hist_uncorrected), beside the op's own corrected
 * ones (from the intended start); members null when the op has no such
 * histogram or it is empty, null when the blob is unreadable. */
static json_t *uncorrected_json(sqlite3_stmt *st) {
    static const char *const names[] = {"p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms"};
    static const double pcts[] = {50, 90, 95, 99, 99.9};
    const void *blob = sqlite3_column_blob(st, OPS_UNC_COL);
    int blen = sqlite3_column_bytes(st, OPS_UNC_COL);
    tb_hist *h = NULL;
    char herr[TB_ERR_LEN];
    json_t *o;
    int have;
    if (blob && blen > 0 && tb_hist_decode(blob, (size_t)blen, &h, herr) != 0) {
        tb_log(TB_LOG_WARN, "op %s: stored uncorrected histogram unreadable: %s", sqlite3_column_text(st, 0), herr);
        return json_null();
    }
    o = json_object();
    have = h && tb_hist_count(h) > 0;
    json_object_set_new(o, "mean_ms", have ? json_real(tb_hist_mean(h) / 1000.0) : json_null());
    for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++)
        json_object_set_new(o, names[i],
                            have ? json_real((double)tb_hist_percentile(h, pcts[i]) / 1000.0) : json_null());
    json_object_set_new(o, "max_ms", have ? json_real((double)tb_hist_max(h) / 1000.0) : json_null());
    tb_hist_free(h);
    return o;
}

static int add_workload_ops(read_ctx *c, level_stmts *ls, int64_t workload_id, json_t *w) {
    static const char *const cols[] = {"name",   "count",  "errors", "count_all", "mean_ms", "p50_ms",
                                       "p90_ms", "p95_ms", "p99_ms", "p999_ms",   "max_ms"};
    json_t *arr = json_array();
    uint64_t sum[TB_ERR_NCLASSES] = {0};
    int rc, known = 1;
    json_object_set_new(w, "operations", arr);
    sqlite3_reset(ls->ops);
    sqlite3_bind_int64(ls->ops, 1, workload_id);
    while ((rc = next_row(c, ls->ops)) == 1) {
        json_t *op = json_object();
        size_t i;
        json_object_set_new(op, cols[0], col_str(ls->ops, 0));
        for (i = 1; i < 4; i++) json_object_set_new(op, cols[i], col_int(ls->ops, (int)i));
        for (i = 4; i < sizeof cols / sizeof cols[0]; i++) json_object_set_new(op, cols[i], col_real(ls->ops, (int)i));
        json_object_set_new(op, "errors_by_class", errors_by_class(ls->ops, sum, &known));
        json_object_set_new(op, "uncorrected", uncorrected_json(ls->ops));
        json_array_append_new(arr, op);
    }
    json_object_set_new(w, "errors_by_class", class_sum_json(sum, known));
    return rc;
}

static int add_level_workloads(read_ctx *c, level_stmts *ls, int64_t level_id, json_t *lv) {
    json_t *arr = json_array();
    int rc;
    json_object_set_new(lv, "workloads", arr);
    sqlite3_reset(ls->workloads);
    sqlite3_bind_int64(ls->workloads, 1, level_id);
    /* The ops query runs while this one is positioned on a row; both are
     * plain reads of one snapshot, which SQLite allows. */
    while ((rc = next_row(c, ls->workloads)) == 1) {
        sqlite3_stmt *st = ls->workloads;
        json_t *w = json_object();
        json_object_set_new(w, "name", col_str(st, 1));
        json_object_set_new(w, "tile", col_int(st, 2));
        json_object_set_new(w, "ops", col_int(st, 3));
        json_object_set_new(w, "errors", col_int(st, 4));
        json_object_set_new(w, "errors_by_class", json_null()); /* add_workload_ops sums its ops' */
        json_object_set_new(w, "throughput", col_real(st, 5));
        json_object_set_new(w, "unit", col_str(st, 6));
        json_object_set_new(w, "reference", col_real(st, 7));
        json_object_set_new(w, "normalized", col_real(st, 8));
        json_array_append_new(arr, w);
        if (add_workload_ops(c, ls, sqlite3_column_int64(st, 0), w) != 0) return -1;
    }
    return rc;
}

/* A level's "telemetry" object from columns 14-15 and 17-27 of the levels
 * query: null (JSON) where the host did not tell, and {} C-states when
 * cpuidle was not available. */
static void add_level_telemetry(sqlite3_stmt *st, json_t *tel) {
    static const char *const modes[] = {"user_pct",   "nice_pct", "sys_pct",     "idle_pct",
                                        "iowait_pct", "irq_pct",  "softirq_pct", "steal_pct"};
    json_t *cs;
    json_object_set_new(tel, "cpu_util_pct", col_real(st, 14));
    json_object_set_new(tel, "avg_freq_mhz", col_real(st, 15));
    json_object_set_new(tel, "freq_source", col_str(st, 25));
    for (int m = 0; m < 8; m++) json_object_set_new(tel, modes[m], col_real(st, 17 + m));
    json_object_set_new(tel, "samples", col_int(st, 26));
    cs = col_object(st, 27, "cstate_residency_json");
    json_object_set_new(tel, "cstate_residency_pct", cs);
}

/* "active_idle_telemetry": CPU utilization and frequency over the active
 * idle samples (level_id NULL), interval-weighted; null when none. */
static int add_idle_telemetry(read_ctx *c, int64_t run_id, json_t *run) {
    sqlite3_stmt *st = NULL;
    json_t *o = json_object();
    int rc;
    json_object_set_new(run, "active_idle_telemetry", o);
    if (prep(c,
             "SELECT sum(cpu_util_pct * interval_us) / sum(CASE WHEN cpu_util_pct IS NOT NULL THEN interval_us END),"
             " sum(freq_mhz * interval_us) / sum(CASE WHEN freq_mhz IS NOT NULL THEN interval_us END), count(*)"
             " FROM telemetry_samples WHERE run_id = ?1 AND level_id IS NULL",
             &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    rc = next_row(c, st);
    if (rc == 1) {
        json_object_set_new(o, "cpu_util_pct", col_real(st, 0));
        json_object_set_new(o, "avg_freq_mhz", col_real(st, 1));
        json_object_set_new(o, "samples", col_int(st, 2));
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Levels (one entry per phase row), then the per-level summary and the run
 * figures computed over it (add_summary). */
static int add_levels(read_ctx *c, int64_t run_id, json_t *run, model_extra *ex) {
    sqlite3_stmt *st = NULL;
    level_stmts ls = {NULL, NULL, NULL};
    json_t *arr = json_array();
    phase_row *rows = NULL;
    size_t cap = 0;
    int rc = -1;
    json_object_set_new(run, "levels", arr);
    if (prep(c,
             "SELECT id, tiles, phase, score, avg_watts, ppkw, qos_pass, valid, invalid_reason, steady_start,"
             " steady_end, steady_s, samples_total, samples_bad, cpu_util_pct, avg_freq_mhz, repeat,"
             " user_pct, nice_pct, sys_pct, idle_pct, iowait_pct, irq_pct, softirq_pct, steal_pct, freq_source,"
             " telemetry_samples, cstate_residency_json, qos_not_judged"
             " FROM levels WHERE run_id = ?1 ORDER BY repeat, tiles, phase, id",
             &st) != 0 ||
        prep(c,
             "SELECT rule, observed, \"limit\", pass, reason, tile, judged, ops, min_ops FROM qos WHERE level_id = ?1"
             " ORDER BY rowid",
             &ls.qos) != 0 ||
        prep(c,
             "SELECT id, name, tile, ops, errors, throughput, unit, reference, normalized FROM workloads"
             " WHERE level_id = ?1 ORDER BY tile, id",
             &ls.workloads) != 0 ||
        prep(c,
             "SELECT name, count, errors, count_all, mean_ms, p50_ms, p90_ms, p95_ms, p99_ms, p999_ms, max_ms,"
             " err_connect, err_io, err_timeout, err_server, err_content, hist_uncorrected"
             " FROM ops WHERE workload_id = ?1 ORDER BY rowid",
             &ls.ops) != 0)
        goto out;
    sqlite3_bind_int64(st, 1, run_id);
    while ((rc = next_row(c, st)) == 1) {
        json_t *lv = json_object(), *tel = json_object();
        int64_t level_id = sqlite3_column_int64(st, 0);
        phase_row *r;
        if (ex->n_levels == cap) {
            cap = cap ? cap * 2 : 16;
            ex->level_ids = xrealloc(ex->level_ids, cap * sizeof *ex->level_ids);
            rows = xrealloc(rows, cap * sizeof *rows);
        }
        r = &rows[ex->n_levels];
        r->tiles = sqlite3_column_int(st, 1);
        r->phase = sqlite3_column_int(st, 2);
        r->repeat = sqlite3_column_int(st, 16);
        r->score = sqlite3_column_type(st, 3) != SQLITE_NULL ? sqlite3_column_double(st, 3) : NAN;
        r->watts = sqlite3_column_type(st, 4) != SQLITE_NULL ? sqlite3_column_double(st, 4) : NAN;
        r->ppkw = sqlite3_column_type(st, 5) != SQLITE_NULL ? sqlite3_column_double(st, 5) : NAN;
        r->qos_pass = sqlite3_column_int(st, 6);
        r->qos_not_judged = sqlite3_column_int(st, 28);
        r->valid = sqlite3_column_int(st, 7);
        json_object_set_new(lv, "tiles", col_int(st, 1));
        json_object_set_new(lv, "phase", col_int(st, 2));
        json_object_set_new(lv, "repeat", col_int(st, 16));
        json_object_set_new(lv, "score", col_real(st, 3));
        json_object_set_new(lv, "avg_watts", col_real(st, 4));
        json_object_set_new(lv, "ppkw", col_real(st, 5));
        json_object_set_new(lv, "qos_pass", col_bool(st, 6));
        json_object_set_new(lv, "qos_not_judged", json_integer(r->qos_not_judged));
        json_object_set_new(lv, "qos_verdict", json_string(qos_verdict_word(r->qos_pass, r->qos_not_judged)));
        json_object_set_new(lv, "valid", col_bool(st, 7));
        json_object_set_new(lv, "invalid_reason", col_str(st, 8));
        json_object_set_new(lv, "steady_start", col_str(st, 9));
        json_object_set_new(lv, "steady_end", col_str(st, 10));
        json_object_set_new(lv, "steady_s", col_real(st, 11));
        json_object_set_new(lv, "samples_total", col_int(st, 12));
        json_object_set_new(lv, "samples_bad", col_int(st, 13));
        add_level_telemetry(st, tel);
        json_array_append_new(arr, lv);
        if (add_level_qos(c, &ls, level_id, lv) != 0) goto out;
        json_object_set_new(lv, "telemetry", tel);
        ex->level_ids[ex->n_levels++] = level_id; /* counted before the reads that can fail */
        if (add_level_workloads(c, &ls, level_id, lv) != 0) goto out;
    }
    if (rc != 0) goto out;
    add_summary(run, rows, (int)ex->n_levels);
out:
    free(rows);
    sqlite3_finalize(st);
    sqlite3_finalize(ls.qos);
    sqlite3_finalize(ls.workloads);
    sqlite3_finalize(ls.ops);
    return rc == 0 ? 0 : -1;
}

/* Reads run_id into a {"run": {...}} tree (caller decrefs), or NULL with err.
 * The caller holds the read transaction. Keys come in the documented order;
 * extra keys (tile_name, tile_spec, config_text, events, steady_*, samples_*)
 * follow the contract's "fields may be added". */
static json_t *read_model(read_ctx *c, int64_t run_id, model_extra *ex) {
    sqlite3_stmt *st = NULL;
    json_t *root = NULL, *run;
    int rc, estimated = 0;
    if (prep(c,
             "SELECT id, label, status, started_at, finished_at, tilebench_version, host_json, settings_json,"
             " active_idle_watts, saturation_tiles, tile_name, tile_spec, config_text, writer_pid, writer_start"
             " FROM runs WHERE id = ?1",
             &st) != 0)
        return NULL;
    sqlite3_bind_int64(st, 1, run_id);
    rc = next_row(c, st);
    if (rc <= 0) {
        if (rc == 0) tb_seterr(c->err, "run %lld not found", (long long)run_id);
        sqlite3_finalize(st);
        return NULL;
    }
    root = json_object();
    run = json_object();
    json_object_set_new(root, "run", run);
    json_object_set_new(run, "id", col_int(st, 0));
    json_object_set_new(run, "label", col_str(st, 1));
    {
        const char *stored = (const char *)sqlite3_column_text(st, 2);
        const char *shown = tb_store_effective_status(stored, sqlite3_column_int64(st, 13), sqlite3_column_int64(st, 14));
        json_object_set_new(run, "status", shown ? json_text(shown, strlen(shown)) : json_null());
    }
    json_object_set_new(run, "started_at", col_str(st, 3));
    json_object_set_new(run, "finished_at", col_str(st, 4));
    json_object_set_new(run, "tilebench_version", col_str(st, 5));
    json_object_set_new(run, "tile_name", col_str(st, 10));
    json_object_set_new(run, "tile_spec", col_str(st, 11));
    json_object_set_new(run, "host", col_object(st, 6, "host_json"));
    if (add_meters(c, run_id, run, &estimated) != 0) goto fail;
    json_object_set_new(run, "active_idle_watts", col_real(st, 8));
    if (add_idle_telemetry(c, run_id, run) != 0) goto fail;
    json_object_set_new(run, "saturation_tiles", col_int(st, 9));
    /* placeholders keep the contract's key order; add_levels sets them in place */
    json_object_set_new(run, "peak_score", json_null());
    json_object_set_new(run, "peak_ppkw", json_null());
    json_object_set_new(run, "overall_efficiency", json_null());
    json_object_set_new(run, "estimated_power", json_boolean(estimated));
    json_object_set_new(run, "settings", col_object(st, 7, "settings_json"));
    json_object_set_new(run, "config_text", col_str(st, 12));
    if (add_levels(c, run_id, run, ex) != 0) goto fail;
    if (add_events(c, run_id, run) != 0) goto fail;
    sqlite3_finalize(st);
    return root;
fail:
    sqlite3_finalize(st);
    json_decref(root);
    return NULL;
}

/* Opens a read transaction if none is open, so every query of one report
 * sees the same snapshot. Returns 1 when it opened one (caller ends it). */
static int read_begin(sqlite3 *db) {
    if (!sqlite3_get_autocommit(db)) return 0;
    return sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
}

static void read_end(sqlite3 *db, int opened) {
    if (opened) (void)sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

/* ---- text view ---------------------------------------------------------------- */

/* Prints s with control characters (ESC, CR, ...) shown as '?', padded with
 * spaces to `width` display columns (UTF-8 code points) when width > 0, and
 * cut with "..." at `maxw` columns when maxw > 0. */
static void put_safe(FILE *f, const char *s, int width, int maxw) {
    int cols = 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    if (maxw > 3) {
        int total = 0;
        const unsigned char *q;
        for (q = p; *q; q++)
            if ((*q & 0xc0) != 0x80) total++;
        if (total <= maxw) maxw = 0;
        else maxw -= 3;
    }
    for (; *p; p++) {
        int lead = (*p & 0xc0) != 0x80;
        if (lead && maxw > 0 && cols == maxw) {
            fputs("...", f);
            cols += 3;
            break;
        }
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
        cols += lead;
    }
    for (; cols < width; cols++) fputc(' ', f);
}

static const char *jstr(const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* Formats a number member with fmt into buf, or "-" when null/missing. */
static const char *jnum(const json_t *o, const char *key, const char *fmt, char *buf, size_t len) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) return "-";
    snprintf(buf, len, fmt, json_number_value(v));
    return buf;
}

static void text_host_config(FILE *f, const json_t *host);

/* A meter's own averaging, where it tells: its window, and whether its
 * readings' min, max and average were equal (TB_SAMPLE_FLAT, ipmi.h). */
static void text_meter_averaging(FILE *f, const json_t *m) {
    const json_t *win = json_object_get(m, "avg_window_ms");
    long long flat = json_integer_value(json_object_get(m, "flat_readings"));
    long long valid = json_integer_value(json_object_get(m, "valid_readings"));
    if (!json_is_integer(win) && flat == 0) return;
    fputs("               ", f);
    if (json_is_integer(win))
        fprintf(f, "averaging window %lld ms", (long long)json_integer_value(win));
    else
        fputs("averaging window not reported", f);
    if (json_is_true(json_object_get(m, "not_averaged")))
        fprintf(f, "; NOT AVERAGED: min = max = average in all %lld valid readings", valid);
    else if (flat > 0)
        fprintf(f, "; min = max = average in %lld of %lld valid readings", flat, valid);
    fputc('\n', f);
}

static void text_header(FILE *f, const json_t *run) {
    const json_t *host = json_object_get(run, "host"), *meters = json_object_get(run, "meters"), *m;
    char b1[64];
    size_t i;
    fprintf(f, "tilebench run %lld\n", (long long)json_integer_value(json_object_get(run, "id")));
    if (*jstr(run, "label")) {
        fputs("  label        ", f);
        put_safe(f, jstr(run, "label"), 0, 0);
        fputc('\n', f);
    }
    fprintf(f, "  status       %s\n", jstr(run, "status"));
    fputs("  tile         ", f);
    put_safe(f, *jstr(run, "tile_name") ? jstr(run, "tile_name") : "-", 0, 0);
    if (*jstr(run, "tile_spec")) {
        fputs(", load levels ", f);
        put_safe(f, jstr(run, "tile_spec"), 0, 0);
    }
    fputc('\n', f);
    fprintf(f, "  started      %s\n", *jstr(run, "started_at") ? jstr(run, "started_at") : "-");
    fprintf(f, "  finished     %s\n", *jstr(run, "finished_at") ? jstr(run, "finished_at") : "-");
    fprintf(f, "  version      tilebench %s\n", jstr(run, "tilebench_version"));
    if (json_object_size(host) > 0) {
        const char *keys[] = {"hostname", "kernel", "cpu_model"};
        int first = 1;
        fputs("  host        ", f);
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            if (!*jstr(host, keys[i])) continue;
            fputs(first ? " " : ", ", f);
            put_safe(f, jstr(host, keys[i]), 0, 0);
            first = 0;
        }
        if (json_is_integer(json_object_get(host, "cpus")))
            fprintf(f, "%s%lld cpus", first ? " " : ", ", (long long)json_integer_value(json_object_get(host, "cpus")));
        fputc('\n', f);
        text_host_config(f, host);
    }
    json_array_foreach(meters, i, m) {
        fprintf(f, "  meter %-6zu ", i);
        put_safe(f, jstr(m, "uri"), 0, 0);
        if (*jstr(m, "model")) {
            fputs("  ", f);
            put_safe(f, jstr(m, "model"), 0, 0);
        }
        if (*jstr(m, "idn")) {
            fputs("  ", f);
            put_safe(f, jstr(m, "idn"), 0, 0);
        }
        if (json_is_true(json_object_get(m, "estimated"))) fputs("  (ESTIMATED)", f);
        fputc('\n', f);
        text_meter_averaging(f, m);
    }
    if (json_array_size(meters) == 0) fputs("  meters       none recorded\n", f);
    if (json_is_true(json_object_get(run, "estimated_power"))) {
        fputs("\n  *** ESTIMATED POWER: watts come from a model, not a power meter. ***\n"
              "  *** Average watts, PPKW and efficiency below are estimates.      ***\n\n",
              f);
    }
    fprintf(f, "  active idle  %s W\n", jnum(run, "active_idle_watts", "%.1f", b1, sizeof b1));
    if (json_is_integer(json_object_get(run, "saturation_tiles"))) {
        long long sat = (long long)json_integer_value(json_object_get(run, "saturation_tiles"));
        fprintf(f, "  saturation   %lld tile%s (largest load level that passes QoS)\n", sat, sat == 1 ? "" : "s");
    } else if (strcmp(jstr(run, "status"), TB_RUN_COMPLETE) == 0) {
        fputs("  saturation   - (no load level passed QoS)\n", f);
    } else {
        fputs("  saturation   - (not determined: the run did not complete)\n", f);
    }
    {
        /* at the top, so a PASS below is never read without it */
        const json_t *lv;
        char where[256] = "";
        size_t k, l;
        long long last = -1;
        int n = 0;
        json_array_foreach(json_object_get(run, "levels"), k, lv) {
            long long t = (long long)json_integer_value(json_object_get(lv, "tiles"));
            if (json_integer_value(json_object_get(lv, "qos_not_judged")) <= 0 || t == last) continue;
            l = strlen(where);
            if (l + 1 < sizeof where) snprintf(where + l, sizeof where - l, "%s%lld", n ? ", " : "", t);
            last = t;
            n++;
        }
        if (n > 0)
            fprintf(f, "  QoS warning  rules not judged (too few ops) at %s tile%s: QoS there covers the judged rules "
                       "only (see \"QoS not judged\")\n",
                    where, strcmp(where, "1") == 0 ? "" : "s");
    }
    fprintf(f, "  peak score   %s\n", jnum(run, "peak_score", "%.3f", b1, sizeof b1));
    fprintf(f, "  peak PPKW    %s\n", jnum(run, "peak_ppkw", "%.2f", b1, sizeof b1));
    fprintf(f, "  overall      %s score/kW (sum of scores / sum of mean W over levels)\n",
            jnum(run, "overall_efficiency", "%.2f", b1, sizeof b1));
}

/* A level's QoS for the text view: "PASS", "FAIL", or with rules not
 * judged "PASS, 3 not judged" (never a bare PASS then). */
static const char *text_qos(const json_t *lv, char *buf, size_t len) {
    long long nj = (long long)json_integer_value(json_object_get(lv, "qos_not_judged"));
    const char *v = json_is_true(json_object_get(lv, "qos_pass")) ? "PASS" : "FAIL";
    if (nj > 0) snprintf(buf, len, "%s, %lld not judged", v, nj);
    else snprintf(buf, len, "%s", v);
    return buf;
}

static int rule_not_judged(const json_t *q) { return json_is_false(json_object_get(q, "judged")); }

/* The rules of one level phase that went unjudged in its own verdict or a
 * tile's: one line per rule, saying where ("level; tiles 1, 2"), with the
 * level's reason (else the first tile's). Returns shown + lines written. */
static int text_not_judged_level(FILE *f, const json_t *lv, int shown) {
    const json_t *qs = json_object_get(lv, "qos"), *tq = json_object_get(lv, "tile_qos"), *q, *t;
    size_t j, k;
    json_array_foreach(qs, j, q) {
        const char *rule = jstr(q, "rule"), *reason = NULL;
        int level = rule_not_judged(q), n_tiles = 0;
        char tiles[160] = "";
        if (level) reason = jstr(q, "reason");
        json_array_foreach(tq, k, t) {
            size_t l = strlen(tiles);
            if (strcmp(jstr(t, "rule"), rule) != 0 || !rule_not_judged(t)) continue;
            if (!reason) reason = jstr(t, "reason");
            if (l + 1 < sizeof tiles)
                snprintf(tiles + l, sizeof tiles - l, "%s%lld", n_tiles ? ", " : "",
                         (long long)json_integer_value(json_object_get(t, "tile")));
            n_tiles++;
        }
        if (!level && n_tiles == 0) continue;
        if (!shown++)
            fputs("\nQoS not judged (too few ops for the rule to mean anything: neither a pass nor a fail)\n", f);
        fprintf(f, "  %lld tiles phase %lld: ", (long long)json_integer_value(json_object_get(lv, "tiles")),
                (long long)json_integer_value(json_object_get(lv, "phase")));
        put_safe(f, rule, 0, 0);
        fprintf(f, " (%s%s%s%s): ", level ? "level" : "", level && n_tiles ? "; " : "",
                n_tiles == 0 ? "" : n_tiles == 1 ? "tile " : "tiles ", tiles);
        put_safe(f, reason, 0, 0);
        fputc('\n', f);
    }
    return shown;
}

static void text_levels(FILE *f, const json_t *levels) {
    const json_t *lv, *q;
    size_t i, j;
    int failures = 0, not_judged = 0;
    char b1[32], b2[32], b3[32], bq[48];
    fputs("\nLoad levels\n", f);
    if (json_array_size(levels) == 0) {
        fputs("  (no load level stored)\n", f);
        return;
    }
    fprintf(f, "  %5s %5s %10s %9s %10s  %-20s  %s\n", "tiles", "phase", "score", "avg W", "PPKW", "QoS", "valid");
    json_array_foreach(levels, i, lv) {
        fprintf(f, "  %5lld %5lld %10s %9s %10s  %-20s  ", (long long)json_integer_value(json_object_get(lv, "tiles")),
                (long long)json_integer_value(json_object_get(lv, "phase")),
                jnum(lv, "score", "%.3f", b1, sizeof b1), jnum(lv, "avg_watts", "%.1f", b2, sizeof b2),
                jnum(lv, "ppkw", "%.2f", b3, sizeof b3), text_qos(lv, bq, sizeof bq));
        if (json_is_true(json_object_get(lv, "valid"))) fputs("yes", f);
        else {
            fputs("NO", f);
            if (*jstr(lv, "invalid_reason")) {
                fputs(": ", f);
                put_safe(f, jstr(lv, "invalid_reason"), 0, 0);
            }
        }
        fputc('\n', f);
    }
    json_array_foreach(levels, i, lv) {
        json_array_foreach(json_object_get(lv, "qos"), j, q) {
            if (json_is_true(json_object_get(q, "pass")) || rule_not_judged(q)) continue;
            if (!failures++) fputs("\nQoS failures\n", f);
            fprintf(f, "  %lld tiles phase %lld: ", (long long)json_integer_value(json_object_get(lv, "tiles")),
                    (long long)json_integer_value(json_object_get(lv, "phase")));
            put_safe(f, jstr(q, "rule"), 0, 0);
            if (*jstr(q, "reason")) {
                fputs(": ", f);
                put_safe(f, jstr(q, "reason"), 0, 0);
            }
            fputc('\n', f);
        }
    }
    json_array_foreach(levels, i, lv) not_judged = text_not_judged_level(f, lv, not_judged);
}

/* A string member, or "n/a" when null or missing (telemetry's "not available"). */
static const char *jstr_na(const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    return s && *s ? s : "n/a";
}

/* Like jnum, with "n/a" for a figure the host did not provide. */
static const char *jnum_na(const json_t *o, const char *key, const char *fmt, char *buf, size_t len) {
    const char *v = jnum(o, key, fmt, buf, len);
    return strcmp(v, "-") == 0 ? "n/a" : v;
}

/* The SUT host's power configuration, one line each. */
static void text_host_config(FILE *f, const json_t *host) {
    static const char *const rows[][2] = {{"governor", "governor"},
                                          {"scaling_driver", "driver"},
                                          {"energy_performance_preference", "EPP"},
                                          {"energy_perf_bias", "EPB"},
                                          {"turbo", "turbo"},
                                          {"pstate_status", "pstate"},
                                          {"cpuidle_driver", "cpuidle"},
                                          {"tuned_profile", "tuned"}};
    if (json_object_size(host) == 0 || !json_object_get(host, "telemetry")) return; /* runs before telemetry */
    fputs("  power cfg   ", f);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        fprintf(f, "%s%s ", i ? ", " : " ", rows[i][1]);
        put_safe(f, jstr_na(host, rows[i][0]), 0, 0);
    }
    fputs("\n  telemetry    ", f);
    put_safe(f, jstr_na(host, "telemetry"), 0, 0);
    fputc('\n', f);
}

/* CPU utilization by mode, frequency and C-state residency per level; n/a
 * where the host did not tell. */
static void text_telemetry(FILE *f, const json_t *levels) {
    const json_t *lv;
    size_t i;
    char b[6][32];
    if (json_array_size(levels) == 0) return;
    fputs("\nHost telemetry over steady state (% of CPU time; C-states: % of time per CPU)\n", f);
    fprintf(f, "  %5s %5s %6s %6s %6s %6s %6s %7s  %-13s %s\n", "tiles", "phase", "CPU%", "user", "sys", "iowait",
            "idle", "MHz", "freq source", "C-state residency");
    json_array_foreach(levels, i, lv) {
        const json_t *t = json_object_get(lv, "telemetry"), *cs = json_object_get(t, "cstate_residency_pct"), *v;
        const char *name;
        int first = 1;
        fprintf(f, "  %5lld %5lld %6s %6s %6s %6s %6s %7s  %-13s ", (long long)json_integer_value(json_object_get(lv, "tiles")),
                (long long)json_integer_value(json_object_get(lv, "phase")),
                jnum_na(t, "cpu_util_pct", "%.1f", b[0], sizeof b[0]), jnum_na(t, "user_pct", "%.1f", b[1], sizeof b[1]),
                jnum_na(t, "sys_pct", "%.1f", b[2], sizeof b[2]), jnum_na(t, "iowait_pct", "%.1f", b[3], sizeof b[3]),
                jnum_na(t, "idle_pct", "%.1f", b[4], sizeof b[4]), jnum_na(t, "avg_freq_mhz", "%.0f", b[5], sizeof b[5]),
                jstr_na(t, "freq_source"));
        json_object_foreach((json_t *)cs, name, v) {
            if (!json_is_number(v)) continue;
            fputs(first ? "" : " ", f);
            put_safe(f, name, 0, 16);
            fprintf(f, " %.1f", json_number_value(v));
            first = 0;
        }
        fputs(first ? "n/a\n" : "\n", f);
    }
}

/* ---- merged latency of one level (text and HTML views) ------------------- */

void tb_report_op_groups_free(tb_report_op_group *g, size_t n) {
    size_t i;
    if (!g) return;
    for (i = 0; i < n; i++) {
        free(g[i].workload);
        free(g[i].op);
        tb_hist_free(g[i].hist);
    }
    free(g);
}

int tb_report_level_ops(tb_report_data *d, size_t level_index, tb_report_op_group **out, size_t *n_out, char *err) {
    read_ctx c = {NULL, d->db, err};
    tb_report_op_group *g = NULL;
    size_t n = 0, cap = 0, i;
    sqlite3_stmt *st;
    int64_t level_id;
    int rc;
    *out = NULL;
    *n_out = 0;
    if (level_index >= d->n_levels) {
        tb_seterr(err, "report: level %zu of %zu", level_index, d->n_levels);
        return -1;
    }
    level_id = d->level_ids[level_index];
    if (!d->ops_st && prep(&c,
                           "SELECT w.name, o.name, o.count, o.errors, o.hist, o.err_connect, o.err_io, o.err_timeout,"
                           " o.err_server, o.err_content FROM workloads w"
                           " JOIN ops o ON o.workload_id = w.id WHERE w.level_id = ?1 ORDER BY w.id, o.rowid",
                           &d->ops_st) != 0)
        return -1;
    st = d->ops_st;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, level_id);
    while ((rc = next_row(&c, st)) == 1) {
        const char *w = (const char *)sqlite3_column_text(st, 0), *o = (const char *)sqlite3_column_text(st, 1);
        const void *blob = sqlite3_column_blob(st, 4);
        int blen = sqlite3_column_bytes(st, 4);
        tb_report_op_group *x = NULL;
        w = w ? w : "";
        o = o ? o : "";
        for (i = 0; i < n; i++)
            if (strcmp(g[i].workload, w) == 0 && strcmp(g[i].op, o) == 0) x = &g[i];
        if (!x) {
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                g = xrealloc(g, cap * sizeof *g);
            }
            x = &g[n++];
            x->workload = xstrdup(w);
            x->op = xstrdup(o);
            x->count = x->errors = 0;
            memset(x->errors_by_class, 0, sizeof x->errors_by_class);
            x->classes_known = 1;
            x->hist = tb_hist_new();
        }
        x->count += (uint64_t)sqlite3_column_int64(st, 2);
        x->errors += (uint64_t)sqlite3_column_int64(st, 3);
        if (sqlite3_column_type(st, 5) == SQLITE_NULL) x->classes_known = 0;
        else
            for (int k = 0; k < TB_ERR_NCLASSES; k++) x->errors_by_class[k] += (uint64_t)sqlite3_column_int64(st, 5 + k);
        if (blob && blen > 0) {
            tb_hist *h = NULL;
            char herr[TB_ERR_LEN];
            if (tb_hist_decode(blob, (size_t)blen, &h, herr) == 0) {
                tb_hist_merge(x->hist, h);
                tb_hist_free(h);
            } else {
                tb_log(TB_LOG_WARN, "level %lld %s.%s: stored histogram unreadable: %s", (long long)level_id, w, o,
                       herr);
            }
        }
    }
    if (rc != 0) {
        tb_report_op_groups_free(g, n);
        return -1;
    }
    *out = g;
    *n_out = n;
    return 0;
}

void tb_report_error_classes(const tb_report_op_group *g, char *buf, size_t len) {
    size_t l = 0;
    uint64_t sum = 0;
    buf[0] = '\0';
    if (g->errors == 0) return;
    if (!g->classes_known) {
        snprintf(buf, len, "not split");
        return;
    }
    for (int k = 0; k < TB_ERR_NCLASSES; k++) {
        sum += g->errors_by_class[k];
        if (g->errors_by_class[k] == 0 || l >= len) continue;
        l += (size_t)snprintf(buf + l, len - l, "%s%s %llu", l ? ", " : "", tb_store_err_class_name(k),
                              (unsigned long long)g->errors_by_class[k]);
    }
    /* a writer that counted errors without a class: say so, not nothing */
    if (sum < g->errors && l < len)
        snprintf(buf + l, len - l, "%sother %llu", l ? ", " : "", (unsigned long long)(g->errors - sum));
}

/* Latency per workload and op of one level, tiles merged. */
static int text_latency_level(tb_report_data *d, size_t li, FILE *f, const json_t *lv, char *err) {
    tb_report_op_group *g = NULL;
    size_t n = 0, i;
    if (tb_report_level_ops(d, li, &g, &n, err) != 0) return -1;
    if (n > 0) {
        fprintf(f, "  %lld tiles, phase %lld\n", (long long)json_integer_value(json_object_get(lv, "tiles")),
                (long long)json_integer_value(json_object_get(lv, "phase")));
        int any_errors = 0;
        for (i = 0; i < n; i++) any_errors |= g[i].errors > 0;
        fprintf(f, "    %-10s %-16s %10s %8s %10s %10s %10s%s\n", "workload", "op", "count", "errors", "p50", "p95", "p99",
                any_errors ? "  errors by class" : "");
        for (i = 0; i < n; i++) {
            char cls[160];
            fputs("    ", f);
            put_safe(f, g[i].workload, 10, 10);
            fputc(' ', f);
            put_safe(f, g[i].op, 16, 16);
            fprintf(f, " %10llu %8llu", (unsigned long long)g[i].count, (unsigned long long)g[i].errors);
            if (tb_hist_count(g[i].hist) == 0) fprintf(f, " %10s %10s %10s", "-", "-", "-");
            else
                fprintf(f, " %10.1f %10.1f %10.1f", (double)tb_hist_percentile(g[i].hist, 50) / 1000.0,
                        (double)tb_hist_percentile(g[i].hist, 95) / 1000.0,
                        (double)tb_hist_percentile(g[i].hist, 99) / 1000.0);
            tb_report_error_classes(&g[i], cls, sizeof cls);
            fprintf(f, "%s%s\n", *cls ? "  " : "", cls);
        }
    }
    tb_report_op_groups_free(g, n);
    return 0;
}

static int text_latency(tb_report_data *d, FILE *f, const json_t *levels, char *err) {
    size_t i;
    int rc = 0;
    if (d->n_levels == 0) return 0;
    fputs("\nLatency in ms (corrected, from intended start; tiles merged)\n", f);
    for (i = 0; i < d->n_levels && rc == 0; i++) rc = text_latency_level(d, i, f, json_array_get(levels, i), err);
    return rc;
}

static void text_events(FILE *f, const json_t *events) {
    const json_t *e;
    size_t i;
    int shown = 0;
    json_array_foreach(events, i, e) {
        if (strcmp(jstr(e, "kind"), "info") == 0) continue;
        if (!shown++) fputs("\nWarnings and errors\n", f);
        fprintf(f, "  %s %s: ", jstr(e, "at"), jstr(e, "kind"));
        put_safe(f, jstr(e, "message"), 0, 0);
        fputc('\n', f);
    }
}

static int write_text(tb_report_data *d, FILE *f, char *err) {
    const json_t *levels = json_object_get(d->run, "levels");
    text_header(f, d->run);
    text_levels(f, levels);
    text_telemetry(f, levels);
    if (text_latency(d, f, levels, err) != 0) return -1;
    text_events(f, json_object_get(d->run, "events"));
    return 0;
}

/* ---- entry points ---------------------------------------------------------- */

int tb_report_write(tb_store *s, int64_t run_id, tb_report_format fmt, FILE *f, char *err) {
    read_ctx c = {s, tb_store_db(s), err};
    model_extra ex = {NULL, 0};
    json_t *root;
    int rc = -1, opened = read_begin(c.db);
    root = read_model(&c, run_id, &ex);
    if (root) {
        tb_report_data d = {json_object_get(root, "run"), ex.level_ids, ex.n_levels, c.db, NULL};
        switch (fmt) {
        case TB_REPORT_JSON:
            errno = 0;
            rc = json_dumpf(root, f, JSON_FLAGS) == 0 && fputc('\n', f) != EOF ? 0 : -1;
            if (rc != 0) tb_seterr(err, "write report: %s", errno ? strerror(errno) : "output error");
            break;
        case TB_REPORT_HTML: rc = tb_report_write_html(&d, f, err); break;
        case TB_REPORT_CSV: rc = tb_report_write_csv(&d, f, err); break;
        case TB_REPORT_TEXT:
        default: rc = write_text(&d, f, err); break;
        }
        sqlite3_finalize(d.ops_st);
    }
    read_end(c.db, opened);
    if (rc == 0 && (fflush(f) != 0 || ferror(f))) {
        tb_seterr(err, "write report: %s", strerror(errno));
        rc = -1;
    }
    json_decref(root);
    free(ex.level_ids);
    return rc;
}

/* Campaigns (coordinator/campaign.c), after the runs: id, status, name, baseline,
 * and each configuration's run. Nothing when there are none. */
static int list_campaigns(read_ctx *c, FILE *f) {
    sqlite3_stmt *st = NULL, *runs = NULL;
    int rc, n = 0;
    if (prep(c,
             "SELECT id, name, baseline, status, writer_pid, writer_start, started_at, message FROM campaigns"
             " ORDER BY id",
             &st) != 0 ||
        prep(c, "SELECT id, campaign_config FROM runs WHERE campaign_id = ?1 ORDER BY id", &runs) != 0) {
        sqlite3_finalize(st);
        return -1;
    }
    while ((rc = next_row(c, st)) == 1) {
        const char *status = tb_store_effective_status((const char *)sqlite3_column_text(st, 3),
                                                       sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5));
        const char *started = (const char *)sqlite3_column_text(st, 6), *message = (const char *)sqlite3_column_text(st, 7);
        int r2, k = 0;
        if (!n++) fputs("\ncampaigns\n", f);
        fprintf(f, "%6lld  %-20s  %-11s  ", (long long)sqlite3_column_int64(st, 0), started ? started : "-",
                status ? status : "-");
        put_safe(f, (const char *)sqlite3_column_text(st, 1), 0, 40);
        fputs("  baseline ", f);
        put_safe(f, (const char *)sqlite3_column_text(st, 2), 0, 40);
        fputs("; runs:", f);
        sqlite3_reset(runs);
        sqlite3_bind_int64(runs, 1, sqlite3_column_int64(st, 0));
        while ((r2 = next_row(c, runs)) == 1) {
            fprintf(f, "%s %lld ", k++ ? "," : "", (long long)sqlite3_column_int64(runs, 0));
            put_safe(f, (const char *)sqlite3_column_text(runs, 1), 0, 40);
        }
        if (r2 != 0) {
            rc = -1;
            break;
        }
        if (k == 0) fputs(" none", f);
        fputc('\n', f);
        if (message && *message) {
            fputs("        ", f);
            put_safe(f, message, 0, 0);
            fputc('\n', f);
        }
    }
    sqlite3_finalize(st);
    sqlite3_finalize(runs);
    return rc;
}

int tb_report_list_runs(tb_store *s, FILE *f, char *err) {
    read_ctx c = {s, tb_store_db(s), err};
    sqlite3_stmt *st = NULL;
    int rc, n = 0, n_est = 0, opened = read_begin(c.db);
    if (prep(&c,
             "SELECT r.id, r.started_at, r.status, r.writer_pid, r.writer_start, r.label,"
             " (SELECT count(DISTINCT tiles) FROM levels WHERE run_id = r.id),"
             " (SELECT max(score) FROM levels WHERE run_id = r.id),"
             " (SELECT max(ppkw) FROM levels WHERE run_id = r.id),"
             " EXISTS (SELECT 1 FROM meters WHERE run_id = r.id AND estimated)"
             " FROM runs r ORDER BY r.id",
             &st) != 0) {
        read_end(c.db, opened);
        return -1;
    }
    while ((rc = next_row(&c, st)) == 1) {
        const char *started = (const char *)sqlite3_column_text(st, 1);
        const char *status = tb_store_effective_status((const char *)sqlite3_column_text(st, 2),
                                                       sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4));
        char score[32] = "-", ppkw[32] = "-";
        if (!n++)
            fprintf(f, "%6s  %-20s  %-11s  %-30s  %6s  %10s  %10s\n", "id", "started", "status", "label", "levels",
                    "peak score", "peak PPKW ");
        if (sqlite3_column_type(st, 7) != SQLITE_NULL) snprintf(score, sizeof score, "%.3f", sqlite3_column_double(st, 7));
        /* "*": ESTIMATED POWER (an estimate: meter), explained below the table;
         * a space otherwise, so the digits of every row line up */
        if (sqlite3_column_type(st, 8) != SQLITE_NULL)
            snprintf(ppkw, sizeof ppkw, "%.2f%s", sqlite3_column_double(st, 8), sqlite3_column_int(st, 9) ? "*" : " ");
        else
            snprintf(ppkw, sizeof ppkw, "- ");
        if (sqlite3_column_int(st, 9)) n_est++;
        fprintf(f, "%6lld  %-20s  %-11s  ", (long long)sqlite3_column_int64(st, 0), started ? started : "-",
                status ? status : "-");
        put_safe(f, (const char *)sqlite3_column_text(st, 5), 30, 30);
        fprintf(f, "  %6d  %10s  %10s\n", sqlite3_column_int(st, 6), score, ppkw);
    }
    sqlite3_finalize(st);
    if (rc == 0 && n_est > 0)
        fputs("* ESTIMATED POWER: watts (and so PPKW) come from a model (estimate: meter), not a power meter\n", f);
    if (rc == 0) rc = list_campaigns(&c, f);
    read_end(c.db, opened);
    if (rc != 0) return -1;
    if (n == 0) fputs("no runs yet\n", f);
    if (fflush(f) != 0 || ferror(f)) {
        tb_seterr(err, "write run list: %s", strerror(errno));
        return -1;
    }
    return 0;
}
