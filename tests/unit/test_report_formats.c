/*
 * test_report_formats.c: unit tests of the HTML and CSV reports. Each test
 * stores a run through the store API in a fresh temporary folder (hostile
 * strings in the label, host, config text, rule names and reasons), renders
 * it, and checks what a reader relies on: escaping, banners, the level table,
 * charts, medians of phases, latency percentiles from the merged histograms;
 * and for CSV that it parses back (RFC 4180), round-trips the label and
 * carries the same numbers as the JSON report and the database.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "qos/hist.h"
#include "results/report.h"
#include "results/store.h"
#include "results/validate.h"

#define LABEL       "<script>alert(1)</script> \"lab, 1\""
#define LABEL_HTML  "&lt;script&gt;alert(1)&lt;/script&gt; &quot;lab, 1&quot;"
#define HOSTNAME    "<img src=x onerror=alert(2)>"
#define CONFIG      "[workload.web]\nusers = 10\n; </pre><script>alert(3)</script>\n"
#define BAD_RULE    "web.HomePage p95 <= 1000 ms <b>"
#define BAD_REASON  "<i>5.0% of samples invalid</i>"
#define N_TILES_MAX 3

/* ---- fixture --------------------------------------------------------------------- */

typedef struct fix {
    char dir[64], db[128];
    tb_hist *home[N_TILES_MAX + 1]; /* web.HomePage latency of tile t (1-based) */
    tb_hist *get;                   /* kv.GET, the same on every tile */
} fix;

static tb_hist *hist_steps(uint64_t first_us, uint64_t step_us, int n) {
    tb_hist *h = tb_hist_new();
    int i;
    for (i = 0; i < n; i++)
        tb_hist_record(h, first_us + step_us * (uint64_t)i);
    return h;
}

static int setup(void **state) {
    fix *f = calloc(1, sizeof *f);
    int t;
    snprintf(f->dir, sizeof f->dir, "/tmp/tb-repfmt-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->db, sizeof f->db, "%s/r.db", f->dir);
    /* tiles differ, so a merged percentile differs from any one tile's */
    for (t = 1; t <= N_TILES_MAX; t++)
        f->home[t] = hist_steps(800 * (uint64_t)t, 53 * (uint64_t)t, 200);
    f->get = hist_steps(150, 3, 300);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fix *f = *state;
    const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[160];
    size_t i;
    int t;
    for (i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        snprintf(p, sizeof p, "%s%s", f->db, suffix[i]);
        unlink(p);
    }
    rmdir(f->dir);
    for (t = 1; t <= N_TILES_MAX; t++)
        tb_hist_free(f->home[t]);
    tb_hist_free(f->get);
    free(f);
    return 0;
}

/* ---- storing a run ------------------------------------------------------------------ */

/* What one stored level looks like. */
typedef struct level_spec {
    int tiles, phase;
    double score, watts;
    int qos_pass, valid;
} level_spec;

/* The sweep of the main run: 1 tile; 2 tiles in two phases (median score
 * 1.8, the lower median); 3 tiles failing QoS and invalid. */
static const level_spec sweep[] = {
    {1, 1, 1.0, 120.5, 1, 1},
    {2, 1, 1.8, 150.0, 1, 1},
    {2, 2, 2.0, 152.0, 1, 1},
    {3, 1, 2.4, 190.0, 0, 0},
};
#define N_SWEEP (sizeof sweep / sizeof sweep[0])

/* Stores one level: per tile a web workload (HomePage measured, Login never)
 * and a kv workload (GET), and two QoS rules. */
static void put_level(const fix *f, tb_store *s, int64_t run_id, const level_spec *ls) {
    tb_op_result web_ops[N_TILES_MAX][2], kv_ops[N_TILES_MAX][1];
    tb_workload_result w[2 * N_TILES_MAX];
    tb_qos_result q[2];
    tb_level_result lr;
    char err[TB_ERR_LEN] = "";
    int t, nw = 0;
    memset(web_ops, 0, sizeof web_ops);
    memset(kv_ops, 0, sizeof kv_ops);
    memset(w, 0, sizeof w);
    memset(q, 0, sizeof q);
    memset(&lr, 0, sizeof lr);
    for (t = 0; t < ls->tiles; t++) {
        tb_workload_result *web = &w[nw++], *kv = &w[nw++];
        snprintf(web_ops[t][0].name, sizeof web_ops[t][0].name, "HomePage");
        web_ops[t][0].count = 200;
        web_ops[t][0].errors = (uint64_t)t; /* tile 2: content 1; tile 3: timeout 1, content 1 */
        web_ops[t][0].errors_by_class[TB_ERR_CONTENT] = t > 0;
        web_ops[t][0].errors_by_class[TB_ERR_TIMEOUT] = t > 1;
        web_ops[t][0].count_all = 260;
        web_ops[t][0].hist = f->home[t + 1];
        snprintf(web_ops[t][1].name, sizeof web_ops[t][1].name, "Login");
        snprintf(web->name, sizeof web->name, "web");
        web->tile = t + 1;
        web->ops = 200;
        web->throughput = 3.25 + t;
        snprintf(web->unit, sizeof web->unit, "ops/s");
        web->reference = 4.0;
        web->normalized = web->throughput / 4.0;
        web->n_ops = 2;
        web->op_results = web_ops[t];
        snprintf(kv_ops[t][0].name, sizeof kv_ops[t][0].name, "GET");
        kv_ops[t][0].count = 300;
        kv_ops[t][0].count_all = 330;
        kv_ops[t][0].hist = f->get;
        snprintf(kv->name, sizeof kv->name, "kv");
        kv->tile = t + 1;
        kv->ops = 300;
        kv->throughput = 50;
        snprintf(kv->unit, sizeof kv->unit, "ops/s");
        kv->reference = 49.9;
        kv->normalized = 50 / 49.9;
        kv->n_ops = 1;
        kv->op_results = kv_ops[t];
    }
    snprintf(q[0].rule, sizeof q[0].rule, "%s", ls->qos_pass ? "web.HomePage p95 <= 1000 ms" : BAD_RULE);
    q[0].limit = 1000;
    q[0].observed = ls->qos_pass ? 12.5 : 1500.0;
    q[0].pass = ls->qos_pass;
    snprintf(q[0].reason, sizeof q[0].reason, "%s",
             ls->qos_pass ? "p95 12.500 ms <= 1000 ms" : "p95 1500.0 ms > 1000 ms");
    snprintf(q[1].rule, sizeof q[1].rule, "kv.GET p99 <= 10 ms");
    q[1].limit = 10;
    q[1].observed = 1.05;
    q[1].pass = 1;
    lr.tiles = ls->tiles;
    lr.phase = ls->phase;
    lr.steady_us = 60000000;
    lr.score = ls->score;
    lr.avg_watts = ls->watts;
    lr.ppkw = ls->score / (ls->watts / 1000.0);
    lr.qos_pass = ls->qos_pass;
    lr.valid = ls->valid;
    if (!ls->valid) snprintf(lr.invalid_reason, sizeof lr.invalid_reason, "%s", BAD_REASON);
    lr.samples_total = 60;
    lr.samples_bad = ls->valid ? 0 : 3;
    lr.telemetry.cpu_util_pct = 20.0 * ls->tiles;
    lr.telemetry.avg_freq_mhz = NAN;
    lr.n_workloads = nw;
    lr.workloads = w;
    lr.n_qos = 2;
    lr.qos = q;
    assert_int_equal(tb_store_put_level(s, run_id, &lr, err), 0);
}

/* Stores a run with the first n_levels of the sweep and the given final
 * status; estimated adds an estimate: meter beside the real one. */
static int64_t store_run(const fix *f, size_t n_levels, const char *status, int estimated) {
    tb_store *s = NULL;
    tb_run_info ri;
    tb_meter_info m[2];
    char err[TB_ERR_LEN] = "", host[128];
    int64_t id = 0;
    size_t i;
    memset(&ri, 0, sizeof ri);
    memset(m, 0, sizeof m);
    snprintf(m[0].uri, sizeof m[0].uri, "wt310://10.0.0.5:10001");
    snprintf(m[0].model, sizeof m[0].model, "WT310");
    snprintf(m[0].idn, sizeof m[0].idn, "YOKOGAWA,WT310,C2QD12345,F1.03");
    snprintf(m[1].uri, sizeof m[1].uri, "estimate:?idle=80&max=300");
    snprintf(m[1].model, sizeof m[1].model, "estimate");
    m[1].estimated = 1;
    snprintf(host, sizeof host, "{\"hostname\": \"%s\", \"cpus\": 8}", HOSTNAME);
    ri.label = LABEL;
    ri.tile_name = "standard";
    ri.tile_spec = "1..3";
    ri.config_text = CONFIG;
    ri.settings_json = "{\"steady\": \"60s\", \"phases\": 2}";
    ri.host_json = host;
    ri.started_wall_us = (int64_t)1780000000 * 1000000;
    ri.n_meters = estimated ? 2 : 1;
    ri.meters = m;
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_int_equal(tb_store_put_idle(s, id, 85.5, NULL, 0, err), 0);
    for (i = 0; i < n_levels; i++)
        put_level(f, s, id, &sweep[i]);
    assert_int_equal(tb_store_event(s, id, "warning", "meter 0: <range> changed", err), 0);
    assert_int_equal(tb_store_finish_run(s, id, status, strcmp(status, TB_RUN_COMPLETE) == 0 ? 2 : -1, err), 0);
    tb_store_close(s);
    return id;
}

/* Renders run id of f's database (caller frees). */
static char *render(const fix *f, int64_t id, tb_report_format fmt) {
    tb_store *s = NULL;
    char *buf = NULL, err[TB_ERR_LEN] = "";
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    int rc;
    assert_non_null(out);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    rc = tb_report_write(s, id, fmt, out, err);
    fclose(out);
    tb_store_close(s);
    if (rc != 0) fprintf(stderr, "report: %s\n", err);
    assert_int_equal(rc, 0);
    return buf;
}

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (hay = strstr(hay, needle); hay; hay = strstr(hay + 1, needle))
        n++;
    return n;
}

static const char *find_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return hay;
    return NULL;
}

/* ---- HTML ----------------------------------------------------------------------------- */

static void test_html_escapes_everything(void **state) {
    fix *f = *state;
    int64_t id = store_run(f, N_SWEEP, TB_RUN_COMPLETE, 1);
    char *html = render(f, id, TB_REPORT_HTML);
    /* nothing active: no script element, no injected tag, no handler */
    assert_null(find_nocase(html, "<script"));
    assert_null(find_nocase(html, "<img"));
    assert_null(strstr(html, "1000 ms <b>"));
    assert_null(strstr(html, "<i>5.0%"));
    assert_int_equal(count_of(html, "</pre>"), 1); /* only ours: the config text did not close it */
    assert_non_null(strstr(html, "Content-Security-Policy"));
    /* the label in the title, the heading and the run table */
    assert_int_equal(count_of(html, LABEL_HTML), 3);
    assert_non_null(strstr(html, "<title>tilebench run 1: " LABEL_HTML "</title>"));
    assert_non_null(strstr(html, "&lt;img src=x onerror=alert(2)&gt;"));
    assert_non_null(strstr(html, "; &lt;/pre&gt;&lt;script&gt;alert(3)&lt;/script&gt;\n</pre></details>"));
    assert_non_null(strstr(html, "web.HomePage p95 &lt;= 1000 ms &lt;b&gt;"));
    assert_non_null(strstr(html, "meter 0: &lt;range&gt; changed"));
    free(html);
}

static void test_html_top_and_tables(void **state) {
    fix *f = *state;
    int64_t id = store_run(f, N_SWEEP, TB_RUN_COMPLETE, 1);
    char *html = render(f, id, TB_REPORT_HTML);
    const char *first_svg = strstr(html, "<svg");
    const char *banner = strstr(html, "<b>ESTIMATED POWER</b>");
    const char *invalid = strstr(html, "<b>3 tiles, phase 1 is invalid</b>: &lt;i&gt;5.0% of samples invalid");
    assert_non_null(first_svg);
    /* banner and validity warnings come before the charts */
    assert_non_null(banner);
    assert_non_null(invalid);
    assert_true(banner < first_svg && invalid < first_svg);
    assert_non_null(strstr(html, "<div class=\"v\">2 tiles</div>"));
    assert_non_null(strstr(html, "<div class=\"k\">Peak score</div><div class=\"v\">2.400</div>"));
    /* one table row per stored level row, with its values */
    assert_int_equal(count_of(html, "<tr class=\"level"), (int)N_SWEEP);
    assert_non_null(strstr(html, "<tr class=\"level\"><td class=\"n\">1</td><td class=\"n\">1</td><td class=\"n\">60.0"
                                 "</td><td class=\"n\">1.000</td><td class=\"n\">120.5</td><td class=\"n\">8.30</td>"
                                 "<td><span class=\"pass\">pass</span></td><td><span class=\"pass\">yes</span></td>"));
    assert_non_null(strstr(html, "<tr class=\"level bad\"><td class=\"n\">3</td><td class=\"n\">1</td>"));
    assert_non_null(strstr(html, "<span class=\"fail\">fail</span></td><td><span class=\"fail\">NO</span>: "
                                 "&lt;i&gt;5.0% of samples invalid&lt;/i&gt;</td>"));
    /* charts: score, PPKW, power, the efficiency curve, energy per op, host CPU utilization (the rows
     * carry cpu_util_pct; frequency and C-states are not available, so no chart for them), and one
     * latency chart per workload; no power sample stored, so no power over time chart */
    assert_int_equal(count_of(html, "<svg"), 8);
    assert_non_null(strstr(html, "No power sample stored."));
    assert_non_null(strstr(html, "Host CPU utilization against tiles"));
    assert_null(strstr(html, "Mean CPU frequency against tiles"));
    assert_null(strstr(html, "C-state residency against tiles"));
    assert_non_null(strstr(html, "web latency against tiles"));
    assert_non_null(strstr(html, "kv latency against tiles"));
    assert_non_null(strstr(html, "HomePage limit p95 1000 ms"));
    assert_non_null(strstr(html, "GET limit p99 10 ms"));
    assert_non_null(strstr(html, "active idle 85.5 W"));
    /* meters, the config text, the corrected-latency statement */
    assert_non_null(strstr(html, "YOKOGAWA,WT310,C2QD12345,F1.03"));
    assert_non_null(strstr(html, "<td class=\"fail\">ESTIMATED</td>"));
    /* the URI wide enough to wrap in words; driver and ranges the estimate has not: "–" as elsewhere */
    assert_non_null(strstr(html,
                           "<td class=\"uri\"><code>estimate:?idle=80&amp;max=300</code></td><td>estimate</td>"
                           "<td><code></code></td><td>\xe2\x80\x93</td><td>\xe2\x80\x93</td><td>\xe2\x80\x93</td>"));
    assert_non_null(strstr(html, "td.uri{min-width:15em}"));
    /* an event's time on one line */
    assert_non_null(strstr(html, "td.ts{white-space:nowrap}"));
    assert_int_equal(count_of(html, "<td class=\"ts\">"), 1);
    assert_non_null(strstr(html, "from intended start (corrected for coordinated omission)"));
    assert_non_null(strstr(html, "<details><summary>Tile definition (standard)"));
    free(html);
}

/* Two phases of 2 tiles (score 1.8 and 2.0) plot as one point at the median
 * (the lower one for an even count: a real phase's value). */
static void test_html_median_of_phases(void **state) {
    fix *f = *state;
    int64_t id = store_run(f, N_SWEEP, TB_RUN_COMPLETE, 0);
    char *html = render(f, id, TB_REPORT_HTML);
    assert_non_null(strstr(html, "<title>score: 1.800 at 2 tiles (median of 2 phases)</title>"));
    assert_non_null(strstr(html, "<title>score: 1.000 at 1 tile</title>"));
    assert_non_null(strstr(html, "<title>score: 2.400 at 3 tiles (QoS fail; invalid)</title>"));
    assert_non_null(strstr(html, "<title>mean power: 150.0 W at 2 tiles (median of 2 phases)</title>"));
    assert_non_null(strstr(html, "the point is the median phase value"));
    /* 3 points on each of the score, PPKW and power charts; web has one
     * measured op (Login never ran), kv one */
    assert_int_equal(count_of(html, "<title>score: "), 3);
    assert_int_equal(count_of(html, "<title>HomePage p95: "), 3);
    assert_int_equal(count_of(html, "<title>Login p95: "), 0);
    assert_int_equal(count_of(html, "<title>GET p99: "), 3);
    /* a metered run has no estimate banner */
    assert_null(strstr(html, "ESTIMATED"));
    free(html);
}

/* The latency table's percentiles come from the tiles' histograms merged. */
static void test_html_latency_from_merged_histograms(void **state) {
    fix *f = *state;
    static const double pcts[] = {25, 50, 75, 90, 95, 99, 99.9, 99.99};
    int64_t id = store_run(f, N_SWEEP, TB_RUN_COMPLETE, 0);
    char *html = render(f, id, TB_REPORT_HTML), row[1024];
    tb_hist *m = tb_hist_new();
    size_t i;
    int t, len;
    for (t = 1; t <= 3; t++)
        tb_hist_merge(m, f->home[t]);
    len = snprintf(row, sizeof row,
                   "<td class=\"n\">3</td><td class=\"n\">1</td><td>web</td><td>HomePage</td><td class=\"n\">600</td>"
                   "<td class=\"n\">3</td><td>timeout 1, content 2</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f",
                   (double)tb_hist_min(m) / 1000.0, tb_hist_mean(m) / 1000.0);
    for (i = 0; i < sizeof pcts / sizeof pcts[0]; i++)
        len += snprintf(row + len, sizeof row - (size_t)len, "</td><td class=\"n\">%.3f",
                        (double)tb_hist_percentile(m, pcts[i]) / 1000.0);
    snprintf(row + len, sizeof row - (size_t)len, "</td><td class=\"n\">%.3f</td></tr>",
             (double)tb_hist_max(m) / 1000.0);
    assert_non_null(strstr(html, row));
    /* the merged p95 is not any single tile's */
    assert_true(tb_hist_percentile(m, 95) != tb_hist_percentile(f->home[1], 95));
    /* an op that never ran shows dashes, not zeros */
    assert_non_null(strstr(html, "<td>web</td><td>Login</td><td class=\"n\">0</td><td class=\"n\">0</td><td></td>"
                                 "<td class=\"n\">&ndash;</td>"));
    tb_hist_free(m);
    free(html);
}

static void test_html_interrupted_and_aborted(void **state) {
    fix *f = *state;
    int64_t a = store_run(f, 2, TB_RUN_INTERRUPTED, 0), b = store_run(f, 0, TB_RUN_ABORTED, 1);
    char *html = render(f, a, TB_REPORT_HTML);
    assert_non_null(strstr(html, "<span class=\"badge st-interrupted\">interrupted</span>"));
    assert_non_null(strstr(html, "<b>RUN INTERRUPTED</b>"));
    assert_non_null(strstr(html, "not determined: the run did not complete"));
    assert_int_equal(count_of(html, "<tr class=\"level"), 2);
    free(html);
    html = render(f, b, TB_REPORT_HTML);
    assert_non_null(strstr(html, "<b>RUN ABORTED</b>"));
    assert_non_null(strstr(html, "<b>ESTIMATED POWER</b>"));
    assert_non_null(strstr(html, "No load level stored: nothing to plot."));
    assert_int_equal(count_of(html, "<svg"), 0);
    assert_non_null(strstr(html, "</html>\n"));
    free(html);
}

/* ---- CSV -------------------------------------------------------------------------------- */

/* A parsed CSV: rows of fields, each a malloc'd string. */
typedef struct csv_table {
    char ***rows;
    size_t *n_fields;
    size_t n_rows;
} csv_table;

static void csv_push_field(csv_table *t, char *buf, size_t len) {
    size_t r = t->n_rows - 1, n = t->n_fields[r];
    t->rows[r] = realloc(t->rows[r], (n + 1) * sizeof *t->rows[r]);
    t->rows[r][n] = strndup(buf, len);
    t->n_fields[r] = n + 1;
}

static void csv_new_row(csv_table *t) {
    t->rows = realloc(t->rows, (t->n_rows + 1) * sizeof *t->rows);
    t->n_fields = realloc(t->n_fields, (t->n_rows + 1) * sizeof *t->n_fields);
    t->rows[t->n_rows] = NULL;
    t->n_fields[t->n_rows++] = 0;
}

/* A strict RFC 4180 reader: CRLF records, quoted fields with doubled quotes.
 * Fails the test on a bare LF or CR outside quotes, a stray quote, or an
 * unterminated quoted field. */
static void csv_parse(const char *s, csv_table *t) {
    char *buf = malloc(strlen(s) + 1);
    size_t len = 0;
    int quoted = 0, field_started = 0;
    memset(t, 0, sizeof *t);
    while (*s) {
        if (!field_started && t->n_rows == 0) csv_new_row(t);
        field_started = 1;
        if (quoted) {
            if (*s == '"' && s[1] == '"') {
                buf[len++] = '"';
                s += 2;
            } else if (*s == '"') {
                quoted = 0;
                s++;
                assert_true(*s == ',' || *s == '\r');
            } else {
                buf[len++] = *s++;
            }
        } else if (*s == '"') {
            assert_int_equal(len, 0);
            quoted = 1;
            s++;
        } else if (*s == ',') {
            csv_push_field(t, buf, len);
            len = 0;
            s++;
        } else if (*s == '\r') {
            assert_int_equal(s[1], '\n');
            csv_push_field(t, buf, len);
            len = 0;
            s += 2;
            if (*s) csv_new_row(t);
        } else {
            assert_true(*s != '\n');
            buf[len++] = *s++;
        }
    }
    assert_false(quoted);
    assert_int_equal(len, 0); /* the last record ends in CRLF */
    free(buf);
}

static void csv_free(csv_table *t) {
    size_t r, i;
    for (r = 0; r < t->n_rows; r++) {
        for (i = 0; i < t->n_fields[r]; i++)
            free(t->rows[r][i]);
        free(t->rows[r]);
    }
    free(t->rows);
    free(t->n_fields);
}

static int csv_col(const csv_table *t, const char *name) {
    size_t i;
    for (i = 0; i < t->n_fields[0]; i++)
        if (strcmp(t->rows[0][i], name) == 0) return (int)i;
    fail_msg("CSV column %s missing", name);
    return -1;
}

/* p95_ms of one op from the database itself. */
static double db_p95(const fix *f, int tiles, int phase, int tile, const char *wl, const char *op) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    double v = NAN;
    assert_int_equal(sqlite3_open_v2(f->db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT o.p95_ms FROM ops o JOIN workloads w ON o.workload_id = w.id"
                                        " JOIN levels l ON w.level_id = l.id WHERE l.tiles = ?1 AND l.phase = ?2"
                                        " AND w.tile = ?3 AND w.name = ?4 AND o.name = ?5",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int(st, 1, tiles);
    sqlite3_bind_int(st, 2, phase);
    sqlite3_bind_int(st, 3, tile);
    sqlite3_bind_text(st, 4, wl, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, op, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void test_csv_round_trip(void **state) {
    fix *f = *state;
    static const char *const required[] = {"run_id", "label",      "tiles",  "phase",    "score",   "avg_watts",
                                           "ppkw",   "qos_pass",   "valid",  "workload", "tile",    "throughput",
                                           "unit",   "normalized", "op",     "count",    "errors",  "mean_ms",
                                           "p50_ms", "p90_ms",     "p95_ms", "p99_ms",   "p999_ms", "max_ms"};
    int64_t id = store_run(f, N_SWEEP, TB_RUN_COMPLETE, 1);
    char *text = render(f, id, TB_REPORT_CSV), *json_text = render(f, id, TB_REPORT_JSON);
    json_t *root = json_loads(json_text, 0, NULL), *lv, *wl, *op;
    csv_table t;
    size_t i, j, k, r = 1, want_rows = 0;
    int c_label, c_p95, c_tiles, c_tile, c_op, c_wl, c_phase;
    assert_non_null(root);
    csv_parse(text, &t);
    for (i = 0; i < sizeof required / sizeof required[0]; i++)
        (void)csv_col(&t, required[i]);
    c_label = csv_col(&t, "label");
    c_p95 = csv_col(&t, "p95_ms");
    c_tiles = csv_col(&t, "tiles");
    c_phase = csv_col(&t, "phase");
    c_tile = csv_col(&t, "tile");
    c_wl = csv_col(&t, "workload");
    c_op = csv_col(&t, "op");
    /* one row per level x phase x workload x tile x op: 3 ops per tile */
    for (i = 0; i < N_SWEEP; i++)
        want_rows += 3 * (size_t)sweep[i].tiles;
    assert_int_equal(t.n_rows, want_rows + 1);
    for (i = 0; i < t.n_rows; i++)
        assert_int_equal(t.n_fields[i], t.n_fields[0]);
    /* the label with a comma, quotes and markup comes back byte for byte */
    for (i = 1; i < t.n_rows; i++)
        assert_string_equal(t.rows[i][c_label], LABEL);
    assert_non_null(strstr(text, ",\"<script>alert(1)</script> \"\"lab, 1\"\"\","));
    /* the same rows, in the same order, with the same p95 as the JSON report */
    json_array_foreach(json_object_get(json_object_get(root, "run"), "levels"), i, lv) {
        json_array_foreach(json_object_get(lv, "workloads"), j, wl) {
            json_array_foreach(json_object_get(wl, "operations"), k, op) {
                const json_t *p95 = json_object_get(op, "p95_ms");
                char **row = t.rows[r++];
                assert_int_equal(strtol(row[c_tiles], NULL, 10), json_integer_value(json_object_get(lv, "tiles")));
                assert_int_equal(strtol(row[c_tile], NULL, 10), json_integer_value(json_object_get(wl, "tile")));
                assert_string_equal(row[c_wl], json_string_value(json_object_get(wl, "name")));
                assert_string_equal(row[c_op], json_string_value(json_object_get(op, "name")));
                if (json_is_null(p95))
                    assert_string_equal(row[c_p95], "");
                else
                    assert_true(strtod(row[c_p95], NULL) == json_real_value(p95));
            }
        }
    }
    assert_int_equal(r, t.n_rows);
    /* and as the database: tiles 3, tile 2, web.HomePage */
    for (i = 1; i < t.n_rows; i++) {
        char **row = t.rows[i];
        if (strcmp(row[c_tiles], "3") || strcmp(row[c_phase], "1") || strcmp(row[c_tile], "2") ||
            strcmp(row[c_op], "HomePage"))
            continue;
        assert_true(strtod(row[c_p95], NULL) == db_p95(f, 3, 1, 2, "web", "HomePage"));
        assert_true(strtod(row[c_p95], NULL) == (double)tb_hist_percentile(f->home[2], 95) / 1000.0);
        assert_string_equal(row[csv_col(&t, "qos_pass")], "false");
        assert_string_equal(row[csv_col(&t, "valid")], "false");
        assert_string_equal(row[csv_col(&t, "invalid_reason")], BAD_REASON);
        assert_string_equal(row[csv_col(&t, "avg_watts")], "190");
        assert_string_equal(row[csv_col(&t, "estimated_power")], "true");
        r = 0;
    }
    assert_int_equal(r, 0); /* the row was found */
    csv_free(&t);
    json_decref(root);
    free(text);
    free(json_text);
}

/* A level stored without workloads (an aborted level) still has its row. */
static void test_csv_level_without_workloads(void **state) {
    fix *f = *state;
    tb_store *s = NULL;
    tb_level_result lr;
    char err[TB_ERR_LEN] = "", *text;
    int64_t id = store_run(f, 1, TB_RUN_ABORTED, 0);
    csv_table t;
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    memset(&lr, 0, sizeof lr);
    lr.tiles = 2;
    lr.phase = 1;
    lr.score = NAN;
    lr.avg_watts = -1;
    lr.telemetry.cpu_util_pct = lr.telemetry.avg_freq_mhz = NAN;
    assert_int_equal(tb_store_put_level(s, id, &lr, err), 0);
    tb_store_close(s);
    text = render(f, id, TB_REPORT_CSV);
    csv_parse(text, &t);
    assert_int_equal(t.n_rows, 1 + 3 + 1);
    assert_string_equal(t.rows[4][csv_col(&t, "tiles")], "2");
    assert_string_equal(t.rows[4][csv_col(&t, "status")], "aborted");
    assert_string_equal(t.rows[4][csv_col(&t, "score")], "");
    assert_string_equal(t.rows[4][csv_col(&t, "avg_watts")], "");
    assert_string_equal(t.rows[4][csv_col(&t, "workload")], "");
    assert_string_equal(t.rows[4][csv_col(&t, "p95_ms")], "");
    csv_free(&t);
    free(text);
}

static void test_parse_formats(void **state) {
    tb_report_format fmt = TB_REPORT_TEXT;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_report_parse_format("html", &fmt, err), 0);
    assert_int_equal(fmt, TB_REPORT_HTML);
    assert_int_equal(tb_report_parse_format("csv", &fmt, err), 0);
    assert_int_equal(fmt, TB_REPORT_CSV);
    assert_int_equal(tb_report_parse_format("hlog", &fmt, err), 0);
    assert_int_equal(fmt, TB_REPORT_HLOG);
    assert_int_equal(tb_report_parse_format("HTML", &fmt, err), -1);
    assert_string_equal(err, "unknown report format 'HTML' (use text, json, html, csv or hlog)");
}

/* ---- errors by class and rules not judged: golden output ----------------------- */

/*
 * One level of 1 tile: web.HomePage 40 ops (all 1 ms) with 5 errors (connect
 * 1, timeout 1, content 3), web.Login 10 ops without errors; QoS: a p90 that
 * passes and a mix rule not judged (50 mix ops, needs 3693) in the level's
 * verdict and tile 1's. with_errors 0 stores the same without errors.
 */
#define NJ_REASON "50 mix ops, needs 3693 (2 pp = 2.576 sd of TagSearch's 33.45% share); observed 9.000 pp (HomePage)"
static int64_t store_golden(const fix *f, int with_errors) {
    tb_store *s = NULL;
    tb_run_info ri;
    tb_op_result ops[2];
    tb_workload_result w;
    tb_qos_result q[4];
    tb_level_result lr;
    tb_hist *h = hist_steps(1000, 0, 40), *hl = hist_steps(2000, 0, 10);
    char err[TB_ERR_LEN] = "";
    int64_t id = 0;
    memset(&ri, 0, sizeof ri);
    memset(ops, 0, sizeof ops);
    memset(&w, 0, sizeof w);
    memset(q, 0, sizeof q);
    memset(&lr, 0, sizeof lr);
    ri.label = "golden";
    ri.tile_name = "standard";
    ri.tile_spec = "1";
    ri.started_wall_us = (int64_t)1780000000 * 1000000;
    snprintf(ops[0].name, sizeof ops[0].name, "HomePage");
    ops[0].count = 40;
    ops[0].hist = h;
    if (with_errors) {
        ops[0].errors = 5;
        ops[0].errors_by_class[TB_ERR_CONNECT] = 1;
        ops[0].errors_by_class[TB_ERR_TIMEOUT] = 1;
        ops[0].errors_by_class[TB_ERR_CONTENT] = 3;
    }
    snprintf(ops[1].name, sizeof ops[1].name, "Login");
    ops[1].count = 10;
    ops[1].hist = hl;
    snprintf(w.name, sizeof w.name, "web");
    w.tile = 1;
    w.ops = 50;
    w.errors = ops[0].errors;
    w.throughput = 2.5;
    snprintf(w.unit, sizeof w.unit, "ops/s");
    w.reference = 2.006;
    w.normalized = 2.5 / 2.006;
    w.n_ops = 2;
    w.op_results = ops;
    snprintf(q[0].rule, sizeof q[0].rule, "web.HomePage p90 <= 1000 ms");
    q[0].observed = 1.0;
    q[0].limit = 1000;
    q[0].pass = 1;
    q[0].ops = 40;
    q[0].min_ops = 10;
    snprintf(q[0].reason, sizeof q[0].reason, "p90 1.000 ms <= 1000 ms");
    for (int i = 1; i < 3; i++) {
        snprintf(q[i].rule, sizeof q[i].rule, "web.* mix deviation <= 2 pp");
        q[i].observed = 9.0;
        q[i].limit = 2;
        q[i].not_judged = 1;
        q[i].ops = 50;
        q[i].min_ops = 3693;
        q[i].tile = i - 1;
        snprintf(q[i].reason, sizeof q[i].reason, "%s", NJ_REASON);
    }
    /* a rule whose op completed nothing: observed not available (NaN), never 0 */
    snprintf(q[3].rule, sizeof q[3].rule, "web.AddEvent p90 <= 3000 ms");
    q[3].observed = NAN;
    q[3].limit = 3000;
    q[3].not_judged = 1;
    q[3].min_ops = 10;
    snprintf(q[3].reason, sizeof q[3].reason, "no ops");
    lr.tiles = 1;
    lr.phase = 1;
    lr.steady_us = 20000000;
    lr.score = 1.0;
    lr.avg_watts = 120.5;
    lr.ppkw = 1.0 / 0.1205;
    lr.qos_pass = 1;
    lr.qos_not_judged = 2;
    lr.valid = 1;
    lr.samples_total = 20;
    lr.telemetry.cpu_util_pct = NAN;
    lr.telemetry.avg_freq_mhz = NAN;
    lr.n_workloads = 1;
    lr.workloads = &w;
    lr.n_qos = 4;
    lr.qos = q;
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_int_equal(tb_store_put_level(s, id, &lr, err), 0);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_COMPLETE, 1, err), 0);
    tb_store_close(s);
    tb_hist_free(h);
    tb_hist_free(hl);
    return id;
}

/* Nothing observed is stored as NULL and shown as n/a by validate, also for a
 * judged failure (the workload completed nothing): never an invented 0. */
static void test_no_ops_observed_null(void **state) {
    fix *f = *state;
    int64_t id = store_golden(f, 1);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    tb_store *s = NULL;
    char *buf = NULL, err[TB_ERR_LEN] = "";
    size_t len = 0;
    FILE *out;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT typeof(observed) FROM qos WHERE rule LIKE 'web.AddEvent%'", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "null");
    sqlite3_finalize(st);
    assert_int_equal(
        sqlite3_exec(db,
                     "UPDATE qos SET judged = 1, pass = 0, reason = 'no ops (web completed no op in steady "
                     "state)' WHERE rule LIKE 'web.AddEvent%'",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    out = open_memstream(&buf, &len);
    assert_non_null(out);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    assert_int_equal(tb_validate_run(s, id, 0, out, err), 0); /* a judged failure: fail */
    fclose(out);
    tb_store_close(s);
    assert_non_null(strstr(buf, "QoS FAIL  web.AddEvent p90 <= 3000 ms: observed n/a, limit 3000.000 (no ops"));
    free(buf);
}

/* Energy per op in JSON and CSV, against the sweep's stored figures worked
 * by hand: 1 tile at 120.5 W for 60 s is 7230 J over 200 web + 300 kv ops,
 * 14.46 J/op; web's normalized throughput 3.25 / 4 = 0.8125 and kv's
 * 50 / 49.9, so web's share is 0.8125 / (0.8125 + 50 / 49.9) and its J/op
 * 7230 x that / 200. The peak score is 2.4 (3 tiles), so 1 tile's
 * normalized performance is 1 / 2.4 and its efficiency that / 0.1205 kW. */
static void test_energy_figures(void **state) {
    fix *f = *state;
    int64_t id = store_run(f, N_SWEEP, TB_RUN_COMPLETE, 0);
    char *json_text = render(f, id, TB_REPORT_JSON), *csv = render(f, id, TB_REPORT_CSV);
    json_t *root = json_loads(json_text, 0, NULL), *lv, *e, *web;
    double share = 0.8125 / (0.8125 + 50 / 49.9);
    csv_table t;
    assert_non_null(root);
    lv = json_array_get(json_object_get(json_object_get(root, "run"), "levels"), 0);
    e = json_object_get(lv, "energy");
    assert_non_null(e);
    assert_true(fabs(json_real_value(json_object_get(e, "joules")) - 7230.0) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(e, "j_per_op")) - 14.46) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(e, "normalized_performance")) - 1 / 2.4) < 1e-12);
    assert_true(fabs(json_real_value(json_object_get(e, "efficiency_per_kw")) - 1 / 2.4 / 0.1205) < 1e-9);
    web = json_array_get(json_object_get(e, "workloads"), 0);
    assert_string_equal(json_string_value(json_object_get(web, "workload")), "web");
    assert_true(fabs(json_real_value(json_object_get(web, "energy_share")) - share) < 1e-12);
    assert_true(fabs(json_real_value(json_object_get(web, "j_per_op")) - 7230.0 * share / 200) < 1e-9);
    csv_parse(csv, &t);
    assert_true(fabs(strtod(t.rows[1][csv_col(&t, "j_per_op")], NULL) - 14.46) < 1e-9);
    assert_string_equal(t.rows[1][csv_col(&t, "workload")], "web");
    assert_true(fabs(strtod(t.rows[1][csv_col(&t, "workload_j_per_op")], NULL) - 7230.0 * share / 200) < 1e-9);
    csv_free(&t);
    json_decref(root);
    free(json_text);
    free(csv);
}

static void test_golden_text(void **state) {
    fix *f = *state;
    int64_t id = store_golden(f, 1);
    char *text = render(f, id, TB_REPORT_TEXT);
    assert_non_null(
        strstr(text, "\n  QoS warning  incomplete at 1 tile: rules not judged (too few ops), neither a pass nor a "
                     "fail (see \"QoS not judged\")\n"));
    assert_non_null(strstr(text, "\n      1     1      1.000     120.5       8.30  incomplete            yes\n"));
    assert_non_null(strstr(text, "\nQoS not judged (too few ops for the rule to mean anything: neither a pass nor a "
                                 "fail)\n  1 tiles phase 1: web.* mix deviation <= 2 pp (level; tile 1): " NJ_REASON
                                 "\n  1 tiles phase 1: web.AddEvent p90 <= 3000 ms (level): no ops\n"));
    /* the hint, by hand: 20 s x 3693 / 50 mix ops = 1477.2 s, up to whole minutes: 25 min */
    assert_non_null(strstr(text, "\n  1 tiles phase 1: web.AddEvent p90 <= 3000 ms (level): no ops\n"
                                 "  1 tiles phase 1: hint: a steady state of at least 1500 s (25 min; this one 20 s) "
                                 "would judge every rule that saw ops (web.* mix deviation <= 2 pp needs the most: 50 "
                                 "of 3693 ops); 1 rule verdict saw no op in 20 s, so no length follows from it "
                                 "(web.AddEvent p90 <= 3000 ms)\n"));
    assert_null(strstr(text, "QoS failures"));
    assert_non_null(strstr(text,
                           "\n    workload   op                    count   errors        p50        p95        p99"
                           "  errors by class\n"
                           "    web        HomePage                 40        5        1.0        1.0        1.0"
                           "  connect 1, timeout 1, content 3\n"
                           "    web        Login                    10        0        2.0        2.0        2.0\n"));
    free(text);
    /* without errors: no class column */
    id = store_golden(f, 0);
    text = render(f, id, TB_REPORT_TEXT);
    assert_non_null(
        strstr(text, "\n    workload   op                    count   errors        p50        p95        p99\n"));
    assert_null(strstr(text, "errors by class"));
    free(text);
}

static void test_golden_json(void **state) {
    fix *f = *state;
    int64_t id = store_golden(f, 1);
    char *text = render(f, id, TB_REPORT_JSON), *dump;
    json_t *root = json_loads(text, 0, NULL), *lv, *q;
    assert_non_null(root);
    lv = json_array_get(json_object_get(json_object_get(root, "run"), "levels"), 0);
    assert_true(json_is_true(json_object_get(lv, "qos_pass")));
    assert_int_equal(json_integer_value(json_object_get(lv, "qos_not_judged")), 2);
    assert_string_equal(json_string_value(json_object_get(lv, "qos_verdict")), "incomplete");
    dump = json_dumps(json_object_get(lv, "qos"), JSON_COMPACT | JSON_REAL_PRECISION(15));
    assert_string_equal(dump,
                        "[{\"rule\":\"web.HomePage p90 <= 1000 ms\",\"observed\":1.0,\"limit\":1000.0,\"pass\":true,"
                        "\"verdict\":\"pass\",\"judged\":true,\"ops\":40,\"min_ops\":10,\"reason\":\"p90 1.000 ms "
                        "<= 1000 ms\"},{\"rule\":\"web.* mix deviation <= 2 pp\",\"observed\":9.0,\"limit\":2.0,"
                        "\"pass\":null,\"verdict\":\"not judged\",\"judged\":false,\"ops\":50,\"min_ops\":3693,"
                        "\"reason\":\"" NJ_REASON "\"},{\"rule\":\"web.AddEvent p90 <= 3000 ms\",\"observed\":null,"
                        "\"limit\":3000.0,\"pass\":null,\"verdict\":\"not judged\",\"judged\":false,\"ops\":0,"
                        "\"min_ops\":10,\"reason\":\"no ops\"}]");
    free(dump);
    q = json_array_get(json_object_get(lv, "tile_qos"), 0);
    assert_int_equal(json_integer_value(json_object_get(q, "tile")), 1);
    assert_true(json_is_null(json_object_get(q, "pass")));
    dump = json_dumps(json_object_get(json_array_get(json_object_get(lv, "workloads"), 0), "errors_by_class"),
                      JSON_COMPACT);
    assert_string_equal(dump, "{\"connect\":1,\"io\":0,\"timeout\":1,\"server\":0,\"content\":3}");
    free(dump);
    dump = json_dumps(
        json_object_get(
            json_array_get(json_object_get(json_array_get(json_object_get(lv, "workloads"), 0), "operations"), 1),
            "errors_by_class"),
        JSON_COMPACT);
    assert_string_equal(dump, "{\"connect\":0,\"io\":0,\"timeout\":0,\"server\":0,\"content\":0}");
    free(dump);
    q = json_array_get(json_object_get(json_object_get(root, "run"), "summary"), 0);
    assert_string_equal(json_string_value(json_object_get(q, "qos_verdict")), "incomplete");
    assert_int_equal(json_integer_value(json_object_get(q, "qos_not_judged")), 2);
    json_decref(root);
    free(text);
}

static void test_golden_csv(void **state) {
    fix *f = *state;
    int64_t id = store_golden(f, 1);
    char *text = render(f, id, TB_REPORT_CSV);
    csv_table t;
    csv_parse(text, &t);
    assert_int_equal(t.n_rows, 3); /* header, HomePage, Login */
    assert_string_equal(t.rows[1][csv_col(&t, "op")], "HomePage");
    assert_string_equal(t.rows[1][csv_col(&t, "errors")], "5");
    assert_string_equal(t.rows[1][csv_col(&t, "errors_connect")], "1");
    assert_string_equal(t.rows[1][csv_col(&t, "errors_io")], "0");
    assert_string_equal(t.rows[1][csv_col(&t, "errors_timeout")], "1");
    assert_string_equal(t.rows[1][csv_col(&t, "errors_server")], "0");
    assert_string_equal(t.rows[1][csv_col(&t, "errors_content")], "3");
    assert_string_equal(t.rows[2][csv_col(&t, "errors_content")], "0");
    assert_string_equal(t.rows[1][csv_col(&t, "qos_pass")], "true");
    assert_string_equal(t.rows[1][csv_col(&t, "qos_not_judged")], "2");
    assert_string_equal(t.rows[1][csv_col(&t, "qos_verdict")], "incomplete");
    assert_non_null(strstr(text, ",errors,errors_connect,errors_io,errors_timeout,errors_server,errors_content,"
                                 "count_all,"));
    csv_free(&t);
    free(text);
}

static void test_golden_html(void **state) {
    fix *f = *state;
    int64_t id = store_golden(f, 1);
    char *html = render(f, id, TB_REPORT_HTML);
    const char *warn = strstr(html, "<li><b>1 tile, phase 1: QoS incomplete</b>: 2 rules had too few ops to be "
                                    "judged (web.* mix deviation &lt;= 2 pp, web.AddEvent p90 &lt;= 3000 ms), neither "
                                    "a pass nor a fail; ");
    assert_non_null(warn);
    assert_true(warn < strstr(html, "<svg")); /* at the top, before the charts */
    assert_non_null(strstr(html, "<td><span class=\"nj\">incomplete</span>: 2 not judged</td>"));
    assert_non_null(strstr(html,
                           "<td>web.* mix deviation &lt;= 2 pp</td><td class=\"n\">9.000</td><td class=\"n\">2.000"
                           "</td><td><span class=\"nj\">NOT JUDGED</span></td>"));
    /* nothing observed: n/a, never 0.000 */
    assert_non_null(strstr(html, "<td>web.AddEvent p90 &lt;= 3000 ms</td><td class=\"n\">n/a</td>"));
    assert_non_null(strstr(html, "<th>errors by class</th>"));
    assert_non_null(strstr(html, "<td>web</td><td>HomePage</td><td class=\"n\">40</td><td class=\"n\">5</td>"
                                 "<td>connect 1, timeout 1, content 3</td>"));
    assert_non_null(strstr(html, "QoS incomplete"));
    /* Login's 10 ops are too few for its p95 (20): the slowest op's, drawn hollow grey, said in the
     * tooltip; HomePage's 40 are enough for its rule's p90 (10), a filled marker */
    assert_non_null(strstr(html, "fill=\"#fff\" stroke=\"#9aa5b1\" stroke-width=\"2\"><title>Login p95: 2.000 ms at 1 "
                                 "tile (not a percentile: 10 ops)</title>"));
    assert_null(strstr(html, "HomePage p90: 1.000 ms at 1 tile (not a percentile"));
    assert_non_null(strstr(html, "Hollow grey ring: not a percentile"));
    /* the table: a dagger where the op ran too few (HomePage p99 of 40, Login p95 and p99 of 10), with its note */
    assert_non_null(
        strstr(html, "<td class=\"n nj\" title=\"not a percentile: 40 ops (p99 needs 100)\">1.000&dagger;</td>"));
    assert_non_null(
        strstr(html, "<td class=\"n nj\" title=\"not a percentile: 10 ops (p95 needs 20)\">2.000&dagger;</td>"));
    assert_int_equal(count_of(html, "&dagger;</td>"), 3);
    assert_non_null(strstr(html, "&dagger; Not a percentile: the op ran fewer ops than it needs (p95: 20, p99: 100)"));
    free(html);
    id = store_golden(f, 0); /* no errors anywhere: no class column */
    html = render(f, id, TB_REPORT_HTML);
    assert_null(strstr(html, "errors by class"));
    free(html);
}

/* The format a file name asks for, the same for `run --report` and `report -o`. */
/* ---- HdrHistogram interval log ----------------------------------------------------- */

/* A run of one level (tile 1) whose steady state starts 65 s after the run
 * and lasts 60 s; workload "we b" with op "Home Page,2" (kv.GET's values as
 * corrected, tile 1's HomePage values as uncorrected latency) and an op
 * "idle" that completed none and has no histogram. */
static int64_t store_hlog_run(const fix *f) {
    tb_store *s = NULL;
    tb_run_info ri;
    tb_op_result ops[2];
    tb_workload_result w;
    tb_level_result lr;
    char err[TB_ERR_LEN] = "";
    int64_t id = 0;
    memset(&ri, 0, sizeof ri);
    memset(ops, 0, sizeof ops);
    memset(&w, 0, sizeof w);
    memset(&lr, 0, sizeof lr);
    ri.label = "hlog";
    ri.tile_name = "t";
    ri.tile_spec = "1";
    ri.config_text = "";
    ri.settings_json = "{}";
    ri.host_json = "{}";
    ri.started_wall_us = (int64_t)1780000000 * 1000000;
    snprintf(ops[0].name, sizeof ops[0].name, "Home Page,2");
    ops[0].count = 300;
    ops[0].hist = f->get;
    ops[0].hist_uncorrected = f->home[1];
    snprintf(ops[1].name, sizeof ops[1].name, "idle");
    snprintf(w.name, sizeof w.name, "we b");
    snprintf(w.unit, sizeof w.unit, "ops/s");
    w.tile = 1;
    w.ops = 300;
    w.n_ops = 2;
    w.op_results = ops;
    lr.tiles = 1;
    lr.phase = 1;
    lr.steady_us = 60000000;
    lr.steady_start_wall_us = ri.started_wall_us + 65000000;
    lr.steady_end_wall_us = lr.steady_start_wall_us + 60000000;
    lr.valid = lr.qos_pass = 1;
    lr.telemetry.cpu_util_pct = lr.telemetry.avg_freq_mhz = NAN;
    lr.n_workloads = 1;
    lr.workloads = &w;
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_int_equal(tb_store_put_level(s, id, &lr, err), 0);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_COMPLETE, 1, err), 0);
    tb_store_close(s);
    return id;
}

static void test_hlog(void **state) {
    fix *f = *state;
    int64_t id = store_hlog_run(f);
    char *log = render(f, id, TB_REPORT_HLOG), *p;
    /* StartTime/BaseTime: the run's start; the legend, then one line per
     * stored histogram: ',' and blanks in names are '_'; start 65 s after
     * BaseTime, 60 s long; Interval_Max in ms: GET's max 1047 µs (exact
     * below 2048), HomePage's 11347 µs in the bucket 11344..11351 */
    assert_non_null(strstr(log, "\n#[StartTime: 1780000000.000 (seconds since epoch), 2026-05-28T20:26:40Z]\n"));
    assert_non_null(strstr(log, "\n#[BaseTime: 1780000000.000 (seconds since epoch)]\n"));
    p = strstr(log, "\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n");
    assert_non_null(p);
    p = strchr(p + 1, '\n') + 1;
    assert_int_equal(strncmp(p, "Tag=L1/T1/we_b/Home_Page_2,65.000,60.000,1.047,HISTF", 52), 0);
    p = strchr(p, '\n') + 1;
    assert_int_equal(strncmp(p, "Tag=L1/T1/we_b/Home_Page_2/uncorrected,65.000,60.000,11.351,HISTF", 65), 0);
    p = strchr(p, '\n') + 1;
    assert_string_equal(p, ""); /* "idle": no histogram stored, no line */
    assert_int_equal(count_of(log, "Tag="), 2);
    free(log);
}

/* A level without a known steady-state start cannot be placed on the log's
 * time line: the report refuses it, naming the level. */
static void test_hlog_needs_steady_start(void **state) {
    fix *f = *state;
    int64_t id = store_run(f, 1, TB_RUN_COMPLETE, 0);
    tb_store *s = NULL;
    char *buf = NULL, err[TB_ERR_LEN] = "";
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_int_equal(tb_store_open_readonly(f->db, &s, err), 0);
    assert_int_equal(tb_report_write(s, id, TB_REPORT_HLOG, out, err), -1);
    assert_string_equal(err, "hlog: level 1: steady_start '' is not an ISO 8601 UTC time");
    fclose(out);
    free(buf);
    tb_store_close(s);
}

static void test_format_for_path(void **state) {
    (void)state;
    assert_int_equal(tb_report_format_for_path("r.json"), TB_REPORT_JSON);
    assert_int_equal(tb_report_format_for_path("R.JSON"), TB_REPORT_JSON);
    assert_int_equal(tb_report_format_for_path("r.html"), TB_REPORT_HTML);
    assert_int_equal(tb_report_format_for_path("/a.b/r.htm"), TB_REPORT_HTML);
    assert_int_equal(tb_report_format_for_path("r.csv"), TB_REPORT_CSV);
    assert_int_equal(tb_report_format_for_path("histograms.HLOG"), TB_REPORT_HLOG);
    assert_int_equal(tb_report_format_for_path("r.txt"), TB_REPORT_TEXT);
    assert_int_equal(tb_report_format_for_path("html"), TB_REPORT_TEXT);
    assert_int_equal(tb_report_format_for_path("r"), TB_REPORT_TEXT);
    assert_int_equal(tb_report_format_for_path(NULL), TB_REPORT_TEXT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_html_escapes_everything, setup, teardown),
        cmocka_unit_test_setup_teardown(test_html_top_and_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_html_median_of_phases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_html_latency_from_merged_histograms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_html_interrupted_and_aborted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_csv_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_csv_level_without_workloads, setup, teardown),
        cmocka_unit_test(test_parse_formats),
        cmocka_unit_test_setup_teardown(test_energy_figures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_golden_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_ops_observed_null, setup, teardown),
        cmocka_unit_test_setup_teardown(test_golden_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_golden_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_golden_html, setup, teardown),
        cmocka_unit_test(test_format_for_path),
        cmocka_unit_test_setup_teardown(test_hlog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hlog_needs_steady_start, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
