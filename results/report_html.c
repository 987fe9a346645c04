/*
 * report_html.c: the HTML report of a run. One self-contained file a lab
 * engineer can mail or attach to a publication: inline CSS, charts drawn here
 * as inline SVG, no JavaScript and nothing fetched (a Content-Security-Policy
 * says so, in case escaping ever failed). Reads the typed read model
 * (model.h) alone, the same as the JSON report, including the merged latency
 * histograms for percentiles the JSON does not carry.
 *
 * Order of the page: what a reader must not miss first (estimated power,
 * an interrupted or aborted run, invalid levels, logged warnings), then the
 * headline numbers and the run's identity, charts, and the tables behind
 * them. Every string that came from the user, the SUT or a meter goes
 * through esc() (common/html.h); numbers are formatted here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/html.h"
#include "common/buf.h"
#include "qos/qos.h"
#include "results/report_fmt.h"
#include "results/report_agents.h"
#include "results/report_infra.h"
#include "results/report_temp.h"
#include "results/report_html_page.h"
#include "results/report_views.h"
#include "results/svg_chart.h"

/* ---- small output helpers ------------------------------------------------------ */

#define esc tb_html_escape_file
#define S   tb_fmt_str

/* Writes v with `dec` decimals, or an en dash when unknown. */
void rh_put_num(FILE *f, double v, int dec) {
    if (isfinite(v))
        fprintf(f, "%.*f", dec, v);
    else
        fputs("&ndash;", f);
}

/* Latency in ms: three decimals below 100 ms so sub-millisecond figures stay
 * readable, one above (the precision of the QoS reasons). */
void rh_put_ms(FILE *f, double ms) { rh_put_num(f, ms, ms >= 100.0 ? 1 : 3); }

/* A stored JSON member (host and settings values) as text, escaped. */
static void put_scalar(FILE *f, const tb_model_kv *v) {
    switch (v->kind) {
    case TB_KV_STRING: esc(f, v->str); break;
    case TB_KV_INT: fprintf(f, "%lld", (long long)v->i); break;
    case TB_KV_REAL: fprintf(f, "%g", v->d); break;
    case TB_KV_BOOL: fputs(v->i ? "true" : "false", f); break;
    case TB_KV_NULL: fputs("&ndash;", f); break;
    case TB_KV_OTHER:
    default: esc(f, v->str); break;
    }
}

/* A known integer as a double for the number cells; NaN when unknown. */
double rh_int_num(tb_model_int v) { return v.known ? (double)v.v : NAN; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of the finite values among v[0..n) (reordered); NaN when none. For
 * an even count the lower of the middle two, as the JSON summary
 * (tb_score_median), so the value is one real phase's. */
static double median(double *v, size_t n) {
    size_t m = 0, i;
    for (i = 0; i < n; i++)
        if (isfinite(v[i])) v[m++] = v[i];
    if (m == 0) return NAN;
    qsort(v, m, sizeof *v, cmp_double);
    return v[(m - 1) / 2];
}

/* ---- the page's model: points per load level ------------------------------------- */

static void build_points(page *p) {
    size_t i;
    p->pts = xcalloc(p->n_rows ? p->n_rows : 1, sizeof *p->pts);
    for (i = 0; i < p->n_rows; i++) {
        const tb_model_level *lv = &p->levels[i];
        double tiles = (double)lv->tiles;
        level_point *pt = p->n_pts ? &p->pts[p->n_pts - 1] : NULL;
        if (lv->alone) continue; /* a workload alone (--interference): its own table */
        if (!pt || pt->tiles != tiles) {
            pt = &p->pts[p->n_pts++];
            pt->tiles = tiles;
            pt->first = i;
        }
        pt->n++;
        if (!lv->qos_pass) pt->mark |= MARK_FAIL;
        if (!lv->valid) pt->mark |= MARK_INVALID;
        if (lv->qos_not_judged > 0) pt->not_judged = 1;
    }
    for (i = 0; i < p->n_pts; i++) {
        level_point *pt = &p->pts[i];
        int len = 0;
        if (pt->n > 1) {
            len = snprintf(pt->note, sizeof pt->note, "median of %zu phases", pt->n);
            p->any_median = 1;
        }
        if (pt->mark & MARK_FAIL)
            len += snprintf(pt->note + len, sizeof pt->note - (size_t)len, "%sQoS fail", len ? "; " : "");
        if (pt->not_judged && !(pt->mark & MARK_FAIL))
            len += snprintf(pt->note + len, sizeof pt->note - (size_t)len, "%sQoS incomplete", len ? "; " : "");
        if (pt->mark & MARK_INVALID)
            snprintf(pt->note + len, sizeof pt->note - (size_t)len, "%sinvalid", len ? "; " : "");
    }
}

/* The level figures a chart plots. */
typedef enum { FIG_SCORE, FIG_PPKW, FIG_WATTS } level_fig;

static double level_figure(const tb_model_level *lv, level_fig fig) {
    return fig == FIG_SCORE ? lv->score : fig == FIG_PPKW ? lv->ppkw : lv->avg_watts;
}

/* Median over a point's rows of a level figure. */
static double point_median(const page *p, const level_point *pt, level_fig fig) {
    double *v = xmalloc(pt->n * sizeof *v), m;
    size_t i;
    for (i = 0; i < pt->n; i++)
        v[i] = level_figure(&p->levels[pt->first + i], fig);
    m = median(v, pt->n);
    free(v);
    return m;
}

/* The telemetry figures a chart plots: CPU utilization, a CPU mode, frequency. */
enum { TEL_UTIL = -1, TEL_FREQ = -2 };

/* A C-state's residency; NaN when the level does not have it. */
static double cstate_pct(const tb_model_telemetry *t, const char *state) {
    const tb_model_kv *v = tb_model_obj_get(&t->cstate_residency_pct, state);
    if (!v) return NAN;
    return v->kind == TB_KV_INT ? (double)v->i : v->kind == TB_KV_REAL ? v->d : NAN;
}

/* Median over a point's rows of a telemetry figure: `which` (TEL_UTIL,
 * TEL_FREQ or a CPU mode index), or the residency of C-state `state` when
 * state is not NULL. NaN: n/a. */
static double tel_median(const page *p, const level_point *pt, int which, const char *state) {
    double *v = xmalloc(pt->n * sizeof *v), m;
    for (size_t i = 0; i < pt->n; i++) {
        const tb_model_telemetry *t = &p->levels[pt->first + i].telemetry;
        v[i] = state               ? cstate_pct(t, state)
               : which == TEL_UTIL ? t->cpu_util_pct
               : which == TEL_FREQ ? t->avg_freq_mhz
                                   : t->mode_pct[which];
    }
    m = median(v, pt->n);
    free(v);
    return m;
}

/* Whether rule names a percentile of workload.op ("oltp.Order p95 <= 2000
 * ms", as tb_qos_rule_name writes it); *pct gets the percentile. */
static int rule_is_percentile_of(const char *rule, const char *workload, const char *op, double *pct) {
    size_t wl = strlen(workload), ol = strlen(op);
    char *end;
    if (strncmp(rule, workload, wl) != 0 || rule[wl] != '.' || strncmp(rule + wl + 1, op, ol) != 0) return 0;
    rule += wl + 1 + ol;
    if (strncmp(rule, " p", 2) != 0) return 0;
    *pct = strtod(rule + 2, &end);
    return end != rule + 2 && strncmp(end, " <=", 3) == 0 && *pct > 0 && *pct <= 100;
}

/* The first percentile rule of workload.op in any level, for s. */
static void find_rule(const page *p, lat_series *s) {
    s->pct = 95;
    s->rule = NULL;
    s->limit_ms = NAN;
    for (size_t i = 0; i < p->n_rows; i++) {
        for (size_t j = 0; j < p->levels[i].n_qos; j++) {
            const tb_model_qos *q = &p->levels[i].qos[j];
            double pct;
            if (!rule_is_percentile_of(S(q->rule), s->workload, s->op, &pct)) continue;
            s->pct = pct;
            s->rule = S(q->rule);
            s->limit_ms = q->limit;
            return;
        }
    }
}

static void build_latency(page *p) {
    size_t cap = 0, r, g, k;
    for (r = 0; r < p->n_rows; r++) {
        for (g = 0; g < p->n_groups[r]; g++) {
            const tb_model_op_group *og = &p->groups[r][g];
            lat_series *s = NULL;
            for (k = 0; k < p->n_lat && !s; k++)
                if (strcmp(p->lat[k].workload, og->workload) == 0 && strcmp(p->lat[k].op, og->op) == 0) s = &p->lat[k];
            if (!s) {
                p->lat = tb_grow(p->lat, p->n_lat, &cap, sizeof *p->lat);
                s = &p->lat[p->n_lat++];
                s->workload = og->workload;
                s->op = og->op;
                s->row = xmalloc(p->n_rows * sizeof *s->row);
                for (k = 0; k < p->n_rows; k++)
                    s->row[k] = NAN;
                find_rule(p, s);
            }
            if (tb_hist_count(og->hist) > 0) s->row[r] = (double)tb_hist_percentile(og->hist, s->pct) / 1000.0;
        }
    }
}

/* Median over a point's rows of an op's latency. */
static double lat_point_median(const lat_series *l, const level_point *pt) {
    double *v = xmalloc(pt->n * sizeof *v), m;
    memcpy(v, l->row + pt->first, pt->n * sizeof *v);
    m = median(v, pt->n);
    free(v);
    return m;
}

/* Whether rule `name` failed on level row r. */
static int rule_failed(const page *p, size_t r, const char *name) {
    const tb_model_level *lv = &p->levels[r];
    for (size_t j = 0; j < lv->n_qos; j++)
        if (strcmp(S(lv->qos[j].rule), name) == 0) return lv->qos[j].judged && !lv->qos[j].pass; /* not judged: no */
    return 0;
}

/* ---- sections ------------------------------------------------------------------------ */

static const char css[] =
    "*{box-sizing:border-box}"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1f2933;"
    "background:#f3f5f8;margin:0}"
    "main{max-width:1200px;margin:0 auto;padding:12px 24px 48px;overflow-wrap:break-word}"
    "h1{font-size:22px;margin:10px 0 4px}h1 .lbl{font-weight:400}"
    "h2{font-size:17px;margin:28px 0 8px;padding-bottom:4px;border-bottom:2px solid #d5dbe3}"
    "h3{font-size:14px;margin:16px 0 6px}"
    "nav{font-size:13px;color:#52606d;margin-bottom:8px}nav a{color:#2563eb;margin-right:12px}"
    ".badge{display:inline-block;padding:2px 10px;border-radius:12px;font-size:13px;font-weight:700;"
    "vertical-align:middle;text-transform:uppercase;letter-spacing:.04em}"
    ".st-complete{background:#d1fae5;color:#065f46}.st-running{background:#dbeafe;color:#1e40af}"
    ".st-interrupted,.st-aborted{background:#b91c1c;color:#fff}"
    ".banner{padding:12px 16px;border-radius:6px;margin:10px 0;font-size:15px}"
    ".banner b{font-size:20px;letter-spacing:.04em;display:block}"
    ".b-est{background:#b91c1c;color:#fff}.b-stop{background:#7c2d12;color:#fff}.b-run{background:#1e40af;color:#fff}"
    ".warn{background:#fff7ed;border:1px solid #f59e0b;border-left:6px solid #f59e0b;border-radius:6px;"
    "padding:8px 14px;margin:10px 0}.warn ul{margin:4px 0;padding-left:20px}"
    ".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:10px;margin:12px 0}"
    ".card{background:#fff;border:1px solid #d5dbe3;border-radius:6px;padding:10px 14px}"
    ".card .k{font-size:12px;color:#52606d;text-transform:uppercase;letter-spacing:.04em}"
    ".card .v{font-size:24px;font-weight:700}.card .u{font-size:12px;color:#52606d}"
    ".est{color:#b91c1c;font-weight:700;font-size:11px;text-transform:uppercase}"
    "table{border-collapse:collapse;background:#fff;width:100%;margin:4px 0 8px;font-size:13px}"
    /* a wide table scrolls inside its own box instead of leaving the page */
    ".tw{overflow-x:auto;max-width:100%;margin:4px 0 8px}.tw>table{margin:0}"
    "th,td{padding:4px 8px;border-bottom:1px solid #e4e7eb;text-align:left;vertical-align:top}"
    "td{overflow-wrap:break-word}td code{overflow-wrap:anywhere}td.uri{min-width:15em}td.ts{white-space:nowrap}"
    "table.lt{font-size:11px;width:auto}table.lt td,table.lt th{padding:1px 6px;white-space:nowrap}"
    "th{background:#eef1f5;font-weight:600}"
    ".n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "table.kv th{width:150px;background:#fff;color:#52606d;font-weight:400}"
    "tr.bad td{background:#fef2f2}tr.grp td{border-top:2px solid #9aa5b1}"
    ".pass{color:#047857;font-weight:700}.fail{color:#b91c1c;font-weight:700}.nj{color:#b45309;font-weight:700}"
    ".charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:12px}"
    "figure{margin:0;background:#fff;border:1px solid #d5dbe3;border-radius:6px;padding:6px 6px 2px}"
    "figcaption{font-size:12px;color:#52606d;padding:0 8px 6px}"
    "svg{width:100%;height:auto;display:block}"
    "svg text{font-family:inherit}.ct{font-size:15px;font-weight:600;fill:#1f2933}"
    ".tk{font-size:11px;fill:#52606d}.at{font-size:12px;fill:#3e4c59}.lg{font-size:11px;fill:#3e4c59}"
    ".vl{font-size:10px;fill:#3e4c59;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}"
    "figure.wide{margin:0 0 12px}.charts>figure{min-width:0}"
    "@media print{body{background:#fff}main{max-width:none;padding:0}.tw{overflow:visible}"
    "figure{break-inside:avoid}.charts{grid-template-columns:1fr}}"
    ".grid{stroke:#e4e7eb}.minor{stroke:#f1f3f5}.ax{stroke:#9aa5b1}"
    ".note{font-size:12px;color:#52606d}"
    "code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}"
    "pre{background:#fff;border:1px solid #d5dbe3;border-radius:6px;padding:10px;overflow:auto;max-height:520px}"
    "details summary{cursor:pointer;font-weight:600;margin:6px 0}"
    "footer{margin-top:32px;font-size:12px;color:#52606d}";

static void html_head(page *p) {
    FILE *f = p->f;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
          "<meta name=\"generator\" content=\"tilebench ",
          f);
    esc(f, S(p->run->tilebench_version));
    fprintf(f, "\">\n<title>tilebench run %lld", (long long)p->run->id);
    if (*S(p->run->label)) {
        fputs(": ", f);
        esc(f, p->run->label);
    }
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n", css);
}

/* Title line, then the banners a reader must not miss. */
/* A run with --interference: some level ran a workload alone. */
static int run_has_alone(const tb_model_run *r) {
    for (size_t i = 0; i < r->n_levels; i++)
        if (r->levels[i].alone) return 1;
    return 0;
}

static void html_banners(page *p) {
    FILE *f = p->f;
    const char *status = S(p->run->status);
    fprintf(f, "<h1>tilebench run %lld", (long long)p->run->id);
    if (*S(p->run->label)) {
        fputs(": <span class=\"lbl\">", f);
        esc(f, p->run->label);
        fputs("</span>", f);
    }
    fputs(" <span class=\"badge st-", f);
    esc(f, status);
    fputs("\">", f);
    esc(f, *status ? status : "unknown");
    fputs("</span></h1>\n", f);
    fputs("<nav><a href=\"#summary\">summary</a><a href=\"#charts\">charts</a><a href=\"#levels\">load levels</a>"
          "<a href=\"#energy\">energy</a>",
          f);
    if (p->run->n_hosts) fputs("<a href=\"#hosts\">SUT hosts</a>", f);
    if (tb_report_run_has_infra(p->run)) fputs("<a href=\"#infra\">infrastructure</a>", f);
    if (run_has_alone(p->run)) fputs("<a href=\"#interference\">interference</a>", f);
    fputs("<a href=\"#host\">host</a><a href=\"#telemetry\">telemetry</a><a href=\"#qos\">QoS</a><a "
          "href=\"#latency\">latency</a><a href=\"#workloads\">workloads</a>"
          "<a href=\"#meters\">meters</a><a href=\"#events\">events</a><a href=\"#config\">configuration</a></nav>\n",
          f);
    if (p->run->estimated_power) {
        int n = 0;
        fputs("<div class=\"banner b-est\" id=\"estimated\"><b>ESTIMATED POWER</b>Watts come from a model, not a "
              "power meter",
              f);
        for (size_t i = 0; i < p->run->n_meters; i++) {
            const tb_model_meter *m = &p->run->meters[i];
            if (!m->estimated) continue;
            fputs(n++ ? "; " : ": ", f);
            esc(f, *S(m->model) ? m->model : S(m->uri));
        }
        fputs(". Average watts, PPKW, active idle and efficiency in this report are estimates: do not compare "
              "them with metered results or publish them as measurements.</div>\n",
              f);
    }
    if (strcmp(status, TB_RUN_INTERRUPTED) == 0)
        fputs("<div class=\"banner b-stop\"><b>RUN INTERRUPTED</b>The run stopped before it completed (signal, or its "
              "writer process died). Only the load levels completed before that are shown; saturation is not "
              "determined.</div>\n",
              f);
    else if (strcmp(status, TB_RUN_ABORTED) == 0)
        fputs("<div class=\"banner b-stop\"><b>RUN ABORTED</b>tilebench stopped the run (for example, the SUT could "
              "not be reached or a meter was lost beyond tolerance; see the events). Everything measured up to then "
              "is shown.</div>\n",
              f);
    else if (strcmp(status, TB_RUN_RUNNING) == 0)
        fputs("<div class=\"banner b-run\"><b>RUN IN PROGRESS</b>This is a snapshot: more load levels may follow."
              "</div>\n",
              f);
}

/* Whether rule q of list l (0: the level's, 1: the tiles') is unjudged and
 * its name came already, unjudged, earlier in the lists. */
static int unjudged_seen_before(const tb_model_level *lv, int l, size_t j) {
    const tb_model_qos *lists[2] = {lv->qos, lv->tile_qos}, *q = &lists[l][j];
    size_t ns[2] = {lv->n_qos, lv->n_tile_qos};
    for (int l2 = 0; l2 <= l; l2++)
        for (size_t k = 0; k < ns[l2]; k++) {
            const tb_model_qos *q2 = &lists[l2][k];
            if (l2 == l && k >= j) break;
            if (!q2->judged && strcmp(S(q2->rule), S(q->rule)) == 0) return 1;
        }
    return 0;
}

/* A level whose QoS was not fully judged: a rule not judged is no pass, so
 * say so where a reader looks first; each rule once, whether unjudged at the
 * level or in a tile. */
/* " (oltp alone)": a level that ran a workload alone (--interference). */
static void put_alone(FILE *f, const tb_model_level *lv) {
    if (!lv->alone) return;
    fputs(" (", f);
    tb_html_escape_file(f, lv->alone);
    fputs(" alone)", f);
}

static void warn_not_judged(FILE *f, const tb_model_level *lv) {
    const tb_model_qos *lists[2] = {lv->qos, lv->tile_qos};
    size_t ns[2] = {lv->n_qos, lv->n_tile_qos};
    int shown = 0;
    tb_model_qos_counts qc;
    char hint[512];
    fprintf(f, "<li><b>%lld tile%s", (long long)lv->tiles, lv->tiles == 1 ? "" : "s");
    put_alone(f, lv);
    fprintf(f, ", phase %lld: %s</b>: %d rule%s had too few ops to be judged (", (long long)lv->phase,
            strcmp(tb_model_qos_verdict(lv->qos_pass, lv->qos_not_judged), "incomplete") == 0 ? "QoS incomplete"
                                                                                              : "rules not judged",
            lv->qos_not_judged, lv->qos_not_judged == 1 ? "" : "s");
    for (int l = 0; l < 2; l++) {
        for (size_t j = 0; j < ns[l]; j++) {
            if (lists[l][j].judged || unjudged_seen_before(lv, l, j)) continue;
            if (shown++) fputs(", ", f);
            esc(f, S(lists[l][j].rule));
        }
    }
    fputs("), neither a pass nor a fail", f);
    tb_model_level_qos_count(lv, &qc);
    if (tb_model_qos_hint(&qc, lv->steady_s, hint, sizeof hint)) {
        fputs("; ", f);
        esc(f, hint);
    }
    fputs(". See <a href=\"#qos\">QoS</a>.</li>\n", f);
}

/* Invalid levels with their reasons, and the warnings and errors logged. */
static void html_warnings(page *p) {
    FILE *f = p->f;
    size_t i;
    int n = 0;
    for (i = 0; i < p->n_rows; i++) {
        const tb_model_level *lv = &p->levels[i];
        if (lv->valid) continue;
        if (!n++) fputs("<div class=\"warn\" id=\"validity\"><b>Validity warnings</b><ul>\n", f);
        fprintf(f, "<li><b>%lld tile%s", (long long)lv->tiles, lv->tiles == 1 ? "" : "s");
        put_alone(f, lv);
        fprintf(f, ", phase %lld is invalid</b>: ", (long long)lv->phase);
        esc(f, *S(lv->invalid_reason) ? lv->invalid_reason : "no reason stored");
        fputs("</li>\n", f);
    }
    for (i = 0; i < p->n_rows; i++) {
        if (p->levels[i].qos_not_judged <= 0) continue;
        if (!n++) fputs("<div class=\"warn\" id=\"validity\"><b>Validity warnings</b><ul>\n", f);
        warn_not_judged(f, &p->levels[i]);
    }
    for (i = 0; i < p->run->n_events; i++) {
        const tb_model_event *e = &p->run->events[i];
        if (strcmp(S(e->kind), "info") == 0) continue;
        if (!n++) fputs("<div class=\"warn\" id=\"validity\"><b>Validity warnings</b><ul>\n", f);
        fputs("<li>", f);
        esc(f, S(e->kind));
        fputs(" at ", f);
        esc(f, S(e->at));
        fputs(": ", f);
        esc(f, S(e->message));
        fputs("</li>\n", f);
    }
    if (n) fputs("</ul></div>\n", f);
}

static void card(FILE *f, const char *key, double v, int dec, const char *unit, int estimated, const char *note) {
    fprintf(f, "<div class=\"card\"><div class=\"k\">%s</div><div class=\"v\">", key);
    rh_put_num(f, v, dec);
    fprintf(f, "</div><div class=\"u\">%s", unit);
    if (estimated) fputs(" <span class=\"est\">estimated</span>", f);
    if (note) fprintf(f, "<br>%s", note);
    fputs("</div></div>\n", f);
}

static void html_summary(page *p) {
    FILE *f = p->f;
    tb_model_int sat = p->run->saturation_tiles;
    int est = p->run->estimated_power;
    fputs("<h2 id=\"summary\">Summary</h2>\n<div class=\"cards\">\n", f);
    fputs("<div class=\"card\"><div class=\"k\">Saturation</div><div class=\"v\">", f);
    if (sat.known)
        fprintf(f, "%lld tile%s</div><div class=\"u\">largest load level whose QoS did not fail", (long long)sat.v,
                sat.v == 1 ? "" : "s");
    else if (strcmp(S(p->run->status), TB_RUN_COMPLETE) == 0)
        fputs("none</div><div class=\"u\">no load level passed QoS", f);
    else
        fputs("&ndash;</div><div class=\"u\">not determined: the run did not complete", f);
    fputs("</div></div>\n", f);
    if (tb_report_run_has_infra(p->run))
        card(f, "Peak score", p->run->peak_score, 3,
             "final score: 0.8 &times; application + 0.2 &times; infrastructure", 0, NULL);
    else
        card(f, "Peak score", p->run->peak_score, 3, "sum of tile scores", 0, NULL);
    card(f, "Peak PPKW", p->run->peak_ppkw, 2, "score per kW", est, NULL);
    card(f, "Overall efficiency", p->run->overall_efficiency, 2, "score per kW", est,
         "&Sigma; scores / (&Sigma; mean kW over levels + active idle kW)");
    card(f, "Active idle", p->run->active_idle_watts, 1, "W", est, NULL);
    fputs("</div>\n", f);
}

/* "key=value, ..." of a JSON object (host, settings). */
static void put_object_inline(FILE *f, const tb_model_obj *o) {
    int first = 1;
    for (size_t i = 0; i < o->n; i++) {
        if (!first) fputs(", ", f);
        first = 0;
        fputs("<code>", f);
        esc(f, o->kv[i].key);
        fputs("</code>=", f);
        put_scalar(f, &o->kv[i]);
    }
    if (first) fputs("&ndash;", f);
}

static void kv_row(FILE *f, const char *key, const char *value) {
    fprintf(f, "<tr><th>%s</th><td>", key);
    esc(f, *value ? value : "\xe2\x80\x93");
    fputs("</td></tr>\n", f);
}

/* The SUT host's configuration, the power policy in force, and the meters. */
static void html_hostcfg(page *p) {
    static const char *const rows[][2] = {{"hostname", "host"},
                                          {"kernel", "kernel"},
                                          {"os", "OS"},
                                          {"cpu_model", "CPU"},
                                          {"scaling_driver", "scaling driver"},
                                          {"governor", "governor"},
                                          {"energy_performance_preference", "EPP"},
                                          {"energy_perf_bias", "EPB"},
                                          {"turbo", "turbo / boost"},
                                          {"pstate_status", "P-state driver status"},
                                          {"cpuidle_driver", "cpuidle driver"},
                                          {"cpuidle_governor", "cpuidle governor"},
                                          {"tuned_profile", "tuned profile"},
                                          {"telemetry", "telemetry source"}};
    FILE *f = p->f;
    const tb_model_obj *h = &p->run->host;
    size_t i;
    char buf[160];
    fputs("<h2 id=\"host\">Host configuration</h2>\n<table class=\"kv\">\n", f);
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *v = tb_model_obj_str(h, rows[i][0]);
        fprintf(f, "<tr><th>%s</th><td>", rows[i][1]);
        if (v && *v)
            esc(f, v);
        else
            fputs("n/a", f);
        fputs("</td></tr>\n", f);
        if (i == 3) {
            const char *k[] = {"sockets", "cores", "cpus", "memory_mib"};
            const char *lbl[] = {"sockets", "cores", "threads", "memory MiB"};
            fputs("<tr><th>sockets / cores / threads / memory</th><td>", f);
            for (size_t j = 0; j < 4; j++) {
                const tb_model_kv *x = tb_model_obj_get(h, k[j]);
                if (x && x->kind == TB_KV_INT)
                    snprintf(buf, sizeof buf, "%s%s %lld", j ? ", " : "", lbl[j], (long long)x->i);
                else
                    snprintf(buf, sizeof buf, "%s%s n/a", j ? ", " : "", lbl[j]);
                esc(f, buf);
            }
            fputs("</td></tr>\n", f);
        }
    }
    fputs("<tr><th>meters</th><td>", f);
    for (i = 0; i < p->run->n_meters; i++) {
        const tb_model_meter *m = &p->run->meters[i];
        fputs(i ? "; " : "", f);
        esc(f, *S(m->model) ? m->model : "unknown model");
        fputs(" <code>", f);
        esc(f, S(m->uri));
        fputs("</code>", f);
        if (m->estimated) fputs(" <span class=\"est\">estimated</span>", f);
    }
    if (p->run->n_meters == 0) fputs("n/a", f);
    fputs("</td></tr>\n</table>\n<p class=\"note\">Captured once at the start of the run from the SUT host "
          "(local sysfs/procfs, or node_exporter, which does not export EPP, turbo, P-state status or tuned). n/a: "
          "not available there.</p>\n",
          f);
}

static void html_run(page *p) {
    FILE *f = p->f;
    char buf[64];
    fputs("<h2 id=\"run\">Run</h2>\n<table class=\"kv\">\n", f);
    snprintf(buf, sizeof buf, "%lld", (long long)p->run->id);
    kv_row(f, "run id", buf);
    kv_row(f, "label", S(p->run->label));
    kv_row(f, "status", S(p->run->status));
    kv_row(f, "started", S(p->run->started_at));
    kv_row(f, "finished", S(p->run->finished_at));
    snprintf(buf, sizeof buf, "tilebench %s", S(p->run->tilebench_version));
    kv_row(f, "version", buf);
    fputs("<tr><th>host</th><td>", f);
    put_object_inline(f, &p->run->host);
    fputs("</td></tr>\n<tr><th>tile</th><td>", f);
    esc(f, *S(p->run->tile_name) ? p->run->tile_name : "\xe2\x80\x93");
    fputs(", load levels <code>", f);
    esc(f, S(p->run->tile_spec));
    fputs("</code></td></tr>\n<tr><th>settings</th><td>", f);
    put_object_inline(f, &p->run->settings);
    fputs("</td></tr>\n</table>\n", f);
}

/* Score, PPKW and power against tiles, then latency per workload. */
static void figure(FILE *f, const chart *c, const char *caption) {
    fputs("<figure>", f);
    tb_svg_chart(f, c);
    fprintf(f, "<figcaption>%s</figcaption></figure>\n", caption);
}

/* The latency chart of the workload of p->lat[first]: one series per op of
 * that workload (p->lat[first..]), its rule's limit as a dashed line. */
static void latency_chart(page *p, size_t first, const double *x) {
    size_t n = p->n_pts, cap = p->n_lat - first, ns = 0, nl = 0, k, j, r;
    const char *workload = p->lat[first].workload;
    chart_series *ss = xcalloc(cap, sizeof *ss);
    chart_line *ls = xcalloc(cap, sizeof *ls);
    char(*names)[96] = xcalloc(cap, sizeof *names), (*lnames)[160] = xcalloc(cap, sizeof *lnames);
    char(*lops)[128] = xcalloc(cap, sizeof *lops);
    double *lpct = xcalloc(cap, sizeof *lpct);
    char(*notes)[112] = xcalloc(cap * n, sizeof *notes), title[96];
    const char **note_ptrs = xcalloc(cap * n, sizeof *note_ptrs);
    double *ys = xmalloc(cap * n * sizeof *ys);
    int *marks = xcalloc(cap * n, sizeof *marks);
    for (k = first; k < p->n_lat; k++) {
        const lat_series *l = &p->lat[k];
        const char *color = tb_svg_color(ns);
        if (strcmp(l->workload, workload) != 0) continue;
        for (j = 0; j < n; j++) {
            const level_point *pt = &p->pts[j];
            size_t at = ns * n + j;
            int len = 0;
            ys[at] = lat_point_median(l, pt);
            uint64_t least = rh_point_least_ops(p, pt, l->workload, l->op);
            for (r = pt->first; l->rule && r < pt->first + pt->n; r++)
                if (rule_failed(p, r, l->rule)) marks[at] = MARK_FAIL;
            if (pt->n > 1) len = snprintf(notes[at], sizeof notes[at], "median of %zu phases", pt->n);
            if (least > 0 && least < tb_qos_quantile_min_ops(l->pct)) { /* the slowest op's, not a percentile */
                marks[at] |= MARK_NOT_PCT;
                len += snprintf(notes[at] + len, sizeof notes[at] - (size_t)len, "%snot a percentile: %llu ops",
                                len ? "; " : "", (unsigned long long)least);
            }
            if (marks[at] & MARK_FAIL)
                snprintf(notes[at] + len, sizeof notes[at] - (size_t)len, "%sQoS rule failed", len ? "; " : "");
            note_ptrs[at] = notes[at];
        }
        snprintf(names[ns], sizeof names[ns], "%s p%g", l->op, l->pct);
        ss[ns] = (chart_series){names[ns], color, n, x, ys + ns * n, marks + ns * n, note_ptrs + ns * n};
        if (l->rule && tb_svg_series_has_points(&ss[ns])) {
            /* Ops under the same limit share one line, drawn neutral, so two
             * coloured dashed lines do not blend into a third colour. */
            for (j = 0; j < nl && !(ls[j].y == l->limit_ms && lpct[j] == l->pct); j++)
                ;
            if (j == nl) {
                snprintf(lops[nl], sizeof lops[nl], "%s", l->op);
                ls[nl] = (chart_line){l->limit_ms, lnames[nl], color};
                lpct[nl++] = l->pct;
            } else {
                size_t used = strlen(lops[j]);
                snprintf(lops[j] + used, sizeof lops[j] - used, ", %s", l->op);
                ls[j].color = "#475569";
            }
        }
        ns++;
    }
    for (j = 0; j < nl; j++)
        snprintf(lnames[j], sizeof lnames[j], "%s limit p%g %g ms", lops[j], lpct[j], ls[j].y);
    snprintf(title, sizeof title, "%s latency against tiles", workload);
    {
        chart c = {title, "load level (tiles)", "latency (ms)", "ms", 3, 1, NAN, NULL, ss, ns, ls, nl};
        fputs("<figure>", p->f);
        tb_svg_chart(p->f, &c);
        rh_latency_values(p, workload);
        fputs("<figcaption>Per op, tiles merged, from intended start (corrected for coordinated omission): p95, or "
              "the percentile of the op's QoS rule. Dashed: the QoS limit. Red ring: that rule failed. Hollow grey "
              "ring: not a percentile (the op ran fewer ops than it needs, p95 20, p99 100: the value is its slowest "
              "op's). The table: p50, p95 and p99 in ms per op and load level (the median phase where a level ran "
              "several; &dagger;: not a percentile).</figcaption>"
              "</figure>\n",
              p->f);
    }
    free(ss);
    free(ls);
    free(names);
    free(lnames);
    free(lops);
    free(lpct);
    free(notes);
    free(note_ptrs);
    free(ys);
    free(marks);
}

/* Host telemetry against tiles: CPU utilization by mode, mean frequency,
 * and C-state residency per state; a chart with nothing to plot is a note
 * saying the figure is not available on this host. */
static void telemetry_charts(page *p, const double *x, const int *mark, const char *const *notes) {
    static const int util_keys[] = {TEL_UTIL, 0, 2, 4}; /* utilization, user, sys, iowait */
    static const char *const util_names[] = {"CPU utilization", "user", "sys", "iowait"};
    size_t n = p->n_pts, i, k, ns = 0;
    const char *states[16];
    size_t n_states = 0;
    double *ys = xmalloc(16 * n * sizeof *ys);
    chart_series ss[16];
    int any;
    FILE *f = p->f;
    /* CPU utilization */
    for (k = 0, any = 0; k < 4; k++) {
        for (i = 0; i < n; i++)
            any |= isfinite(ys[k * n + i] = tel_median(p, &p->pts[i], util_keys[k], NULL));
        ss[k] = (chart_series){util_names[k], tb_svg_color(k), n, x, ys + k * n, mark, notes};
    }
    if (any) {
        chart c = {"Host CPU utilization against tiles",
                   "load level (tiles)",
                   "% of CPU time",
                   "%",
                   1,
                   0,
                   NAN,
                   NULL,
                   ss,
                   4,
                   NULL,
                   0};
        figure(f, &c,
               "SUT host CPU time over steady state (/proc/stat or node_cpu_seconds_total): utilization = "
               "100 &minus; idle &minus; iowait.");
    }
    /* frequency */
    for (i = 0, any = 0; i < n; i++)
        any |= isfinite(ys[i] = tel_median(p, &p->pts[i], TEL_FREQ, NULL));
    if (any) {
        chart_series s = {"mean frequency", tb_svg_color(4), n, x, ys, mark, notes};
        chart c = {
            "Mean CPU frequency against tiles", "load level (tiles)", "MHz", "MHz", 0, 0, NAN, NULL, &s, 1, NULL, 0};
        figure(f, &c,
               "Mean over CPUs and steady state: APERF/MPERF busy frequency (turbostat Bzy_MHz) when the "
               "msr device is readable, else cpufreq scaling_cur_freq, else node_exporter's.");
    }
    /* C-states, by name in the order first seen */
    for (i = 0; i < p->n_rows; i++) {
        const tb_model_obj *cs = &p->levels[i].telemetry.cstate_residency_pct;
        for (size_t c = 0; c < cs->n; c++) {
            const char *name = cs->kv[c].key;
            size_t j;
            for (j = 0; j < n_states && strcmp(states[j], name) != 0; j++) {
            }
            if (j == n_states && n_states < 16) states[n_states++] = name;
        }
    }
    for (k = 0, ns = 0; k < n_states; k++) {
        for (i = 0; i < n; i++)
            ys[ns * n + i] = tel_median(p, &p->pts[i], 0, states[k]);
        ss[ns] = (chart_series){states[k], tb_svg_color(ns), n, x, ys + ns * n, mark, notes};
        ns++;
    }
    if (ns > 0) {
        chart c = {"C-state residency against tiles",
                   "load level (tiles)",
                   "% of time per CPU",
                   "%",
                   1,
                   0,
                   NAN,
                   NULL,
                   ss,
                   ns,
                   NULL,
                   0};
        figure(f, &c,
               "Share of time each CPU spent in each cpuidle state (turbostat's %C1, %C6), averaged over "
               "CPUs; C0 is the rest (running).");
    }
    free(ys);
}

/* Median over a point's rows of an energy figure: workload k's J/op (k >=
 * 0, by name), the whole SUT's J/op (-1) or the efficiency (-2). */
static double energy_median(const page *p, const level_point *pt, int k, const char *name) {
    double *v = xmalloc(pt->n * sizeof *v), m;
    for (size_t i = 0; i < pt->n; i++) {
        tb_model_energy e;
        tb_model_level_energy(&p->levels[pt->first + i], p->run->peak_score, &e);
        v[i] = k == -1 ? e.j_per_op : k == -2 ? e.efficiency : NAN;
        for (size_t w = 0; k >= 0 && w < e.n; w++)
            if (strcmp(e.wl[w].workload, name) == 0) v[i] = e.wl[w].j_per_op;
    }
    m = median(v, pt->n);
    free(v);
    return m;
}

/* The efficiency curve (normalized performance per kW, SERT style) and
 * energy per op against tiles: the whole SUT's and each workload's. */
static void energy_charts(page *p, const double *x, const int *mark, const char *const *notes, double sat) {
    size_t n = p->n_pts, nw = 0, i, k;
    const char *names[TB_MODEL_ENERGY_WL];
    char lbl[TB_MODEL_ENERGY_WL + 1][96];
    double *ys = xmalloc((TB_MODEL_ENERGY_WL + 2) * n * sizeof *ys);
    chart_series ss[TB_MODEL_ENERGY_WL + 1];
    int est = p->run->estimated_power;
    for (i = 0; i < n; i++)
        ys[i] = energy_median(p, &p->pts[i], -2, NULL);
    {
        chart_series s = {"efficiency", tb_svg_color(4), n, x, ys, mark, notes};
        chart c = {est ? "Efficiency curve (ESTIMATED power)" : "Efficiency curve",
                   "load level (tiles)",
                   "normalized performance per kW",
                   "",
                   3,
                   0,
                   sat,
                   "saturation",
                   &s,
                   1,
                   NULL,
                   0};
        figure(p->f, &c,
               "SERT style: normalized performance (score &divide; the run's peak score) &divide; mean SUT power in "
               "kW. Beside PPKW (score per kW), it shows at which load the SUT turns power into work best.");
    }
    for (i = 0; i < p->n_rows; i++) /* workload names in stored order */
        for (k = 0; k < p->levels[i].n_workloads; k++) {
            const char *w = S(p->levels[i].workloads[k].name);
            size_t j;
            for (j = 0; j < nw && strcmp(names[j], w) != 0; j++)
                ;
            if (j == nw && nw < TB_MODEL_ENERGY_WL) names[nw++] = w;
        }
    for (i = 0; i < n; i++)
        ys[n + i] = energy_median(p, &p->pts[i], -1, NULL);
    snprintf(lbl[0], sizeof lbl[0], "whole SUT, every op");
    ss[0] = (chart_series){lbl[0], tb_svg_color(0), n, x, ys + n, mark, notes};
    for (k = 0; k < nw; k++) {
        for (i = 0; i < n; i++)
            ys[(k + 2) * n + i] = energy_median(p, &p->pts[i], (int)k, names[k]);
        snprintf(lbl[k + 1], sizeof lbl[k + 1], "%s", names[k]);
        ss[k + 1] = (chart_series){lbl[k + 1], tb_svg_color(k + 1), n, x, ys + (k + 2) * n, mark, notes};
    }
    {
        chart c = {est ? "Energy per op against tiles (ESTIMATED)" : "Energy per op against tiles",
                   "load level (tiles)",
                   "energy per op (J)",
                   "J",
                   4,
                   1,
                   NAN,
                   NULL,
                   ss,
                   nw + 1,
                   NULL,
                   0};
        figure(p->f, &c,
               "Energy over steady state (mean W &times; seconds) per metric op. Whole SUT: divided by every op of "
               "every workload. Per workload: the energy split by its share of the normalized throughputs, divided "
               "by its ops (docs/method.md).");
    }
    free(ys);
}

/* Score, PPKW and power against tiles, then latency per workload. */
static void html_charts(page *p) {
    FILE *f = p->f;
    size_t i, k, n = p->n_pts;
    double *x, *score, *ppkw, *watts;
    int *mark;
    const char **notes;
    double sat = p->run->saturation_tiles.known ? (double)p->run->saturation_tiles.v : NAN;
    int est = p->run->estimated_power;
    char idle_label[64];
    fputs("<h2 id=\"charts\">Charts</h2>\n", f);
    if (n == 0) {
        fputs("<p class=\"note\">No load level stored: nothing to plot.</p>\n", f);
        return;
    }
    x = xmalloc(n * sizeof *x);
    score = xmalloc(n * sizeof *score);
    ppkw = xmalloc(n * sizeof *ppkw);
    watts = xmalloc(n * sizeof *watts);
    mark = xmalloc(n * sizeof *mark);
    notes = xmalloc(n * sizeof *notes);
    for (i = 0; i < n; i++) {
        x[i] = p->pts[i].tiles;
        score[i] = point_median(p, &p->pts[i], FIG_SCORE);
        ppkw[i] = point_median(p, &p->pts[i], FIG_PPKW);
        watts[i] = point_median(p, &p->pts[i], FIG_WATTS);
        mark[i] = p->pts[i].mark;
        notes[i] = p->pts[i].note;
    }
    rh_power_chart(p);
    fputs("<div class=\"charts\">\n", f);
    {
        chart_series s = {"score", tb_svg_color(0), n, x, score, mark, notes};
        chart c = {"Score against tiles", "load level (tiles)",
                   /* the formula is in the caption: along the axis it ran past the chart */
                   tb_report_run_has_infra(p->run) ? "final score" : "score (sum of tile scores)", "", 3, 0, sat,
                   "saturation", &s, 1, NULL, 0};
        figure(f, &c,
               tb_report_run_has_infra(p->run)
                   ? "Final score = 0.8 &times; application score (sum over tiles of the geometric mean of normalized "
                     "throughputs) + 0.2 &times; infrastructure score. Dotted line: saturation."
                   : "Score = sum over tiles of the geometric mean of normalized throughputs. Dotted line: "
                     "saturation.");
    }
    {
        chart_series s = {"PPKW", tb_svg_color(1), n, x, ppkw, mark, notes};
        chart c = {est ? "PPKW against tiles (ESTIMATED power)" : "PPKW against tiles",
                   "load level (tiles)",
                   "PPKW (score per kW)",
                   "",
                   2,
                   0,
                   sat,
                   "saturation",
                   &s,
                   1,
                   NULL,
                   0};
        figure(f, &c, "Performance per kW: score &divide; mean SUT power in kW over steady state.");
    }
    {
        chart_series s = {"mean power", tb_svg_color(2), n, x, watts, mark, notes};
        chart_line idle = {p->run->active_idle_watts, idle_label, "#475569"};
        chart c = {est ? "Mean power against tiles (ESTIMATED)" : "Mean power against tiles",
                   "load level (tiles)",
                   "mean SUT power (W)",
                   "W",
                   1,
                   0,
                   NAN,
                   NULL,
                   &s,
                   1,
                   &idle,
                   1};
        snprintf(idle_label, sizeof idle_label, "active idle %.1f W", idle.y);
        figure(f, &c,
               "Mean power over steady state (energy &divide; time, summed over meters). Dashed: active "
               "idle, measured before the sweep.");
    }
    energy_charts(p, x, mark, notes, sat);
    telemetry_charts(p, x, mark, notes);
    for (i = 0; i < p->n_lat; i++) {
        int seen = 0;
        for (k = 0; k < i; k++)
            seen |= strcmp(p->lat[k].workload, p->lat[i].workload) == 0;
        if (!seen) latency_chart(p, i, x);
    }
    fputs("</div>\n<p class=\"note\">One point per load level", f);
    if (p->any_median)
        fputs("; <b>where a level ran several phases, the point is the median phase value</b> (VMmark)", f);
    fputs(". Hover a point for its value. Hollow marker with a red ring: the level failed QoS; dashed ring: the level "
          "is invalid.</p>\n",
          f);
    free(x);
    free(score);
    free(ppkw);
    free(watts);
    free(mark);
    free(notes);
}

/* ---- entry point -------------------------------------------------------------------- */

static void page_free(page *p) {
    size_t i;
    for (i = 0; i < p->n_lat; i++)
        free(p->lat[i].row);
    free(p->lat);
    free(p->groups);
    free(p->n_groups);
    free(p->pts);
}

int tb_report_write_html(const tb_model_run *r, FILE *f, char *err) {
    page p;
    size_t i;
    (void)err; /* write errors are caught by the caller's ferror check */
    memset(&p, 0, sizeof p);
    p.f = f;
    p.run = r;
    p.levels = r->levels;
    p.n_rows = r->n_levels;
    p.groups = xcalloc(p.n_rows ? p.n_rows : 1, sizeof *p.groups);
    p.n_groups = xcalloc(p.n_rows ? p.n_rows : 1, sizeof *p.n_groups);
    for (i = 0; i < p.n_rows; i++) {
        p.groups[i] = r->levels[i].groups;
        p.n_groups[i] = r->levels[i].n_groups;
    }
    build_points(&p);
    build_latency(&p);

    html_head(&p);
    html_banners(&p);
    html_warnings(&p);
    html_summary(&p);
    html_run(&p);
    html_hostcfg(&p);
    html_charts(&p);
    rh_levels(&p);
    rh_energy(&p);
    tb_report_html_infra(f, r);
    tb_report_interference_html(r, f);
    rh_hosts(&p);
    tb_report_html_agents(f, r);
    rh_telemetry(&p);
    rh_qos(&p);
    rh_latency(&p);
    rh_workloads(&p);
    rh_meters(&p);
    rh_meter_papers(&p);
    tb_report_html_temp(f, r);
    rh_events(&p);
    rh_config(&p);
    fputs("<footer>Generated by tilebench ", f);
    esc(f, S(r->tilebench_version));
    fputs(". Units: power in W (mean over steady state), PPKW in score per kW, latency in ms. Only ops that started "
          "and finished inside steady state count.</footer>\n</main>\n</body>\n</html>\n",
          f);
    page_free(&p);
    return 0;
}
