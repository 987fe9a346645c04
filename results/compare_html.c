/*
 * compare_html.c: the HTML page of a comparison (compare_data.h). One
 * self-contained file: inline CSS, grouped bar charts of the % change against
 * the baseline per load level and run drawn here as inline SVG, tables of the
 * values behind them, no JavaScript and nothing fetched (a
 * Content-Security-Policy says so, in case escaping ever failed). Every
 * string from the database goes through esc() (common/html.h); numbers are
 * formatted here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/html.h"
#include "results/compare_data.h"
#include "results/model.h"

#define esc tb_html_escape_file

static void put_num(FILE *f, double v, int dec) {
    if (isfinite(v))
        fprintf(f, "%.*f", dec, v);
    else
        fputs("&ndash;", f);
}

static const char *const palette[] = {"#2563eb", "#d97706", "#059669", "#7c3aed",
                                      "#db2777", "#0891b2", "#65a30d", "#475569"};
#define N_PALETTE (sizeof palette / sizeof palette[0])

/* The colour of run i: by its position among the non-baseline runs. */
static const char *run_color(const tb_cmp_model *m, size_t i) {
    size_t k = i > m->baseline ? i - 1 : i;
    return palette[k % N_PALETTE];
}

/* One chart or table: a run figure (fig >= 0), the p95 of workload wl (fig
 * -1) or the mean power of SUT host wl (fig -2). */
typedef struct series_ref {
    int fig;
    size_t wl;
} series_ref;

static const tb_cmp_cell *cell_of(const tb_cmp_model *m, size_t run, size_t level, series_ref r) {
    const tb_cmp_level *lv = &m->runs[run].lv[level];
    return r.fig >= 0 ? &lv->fig[r.fig] : r.fig == -1 ? &lv->p95[r.wl] : &lv->host_w[r.wl];
}

static int ref_better(series_ref r) { return r.fig >= 0 ? tb_cmp_figures[r.fig].better : -1; }
static int ref_dec(series_ref r) { return r.fig >= 0 ? tb_cmp_figures[r.fig].dec : r.fig == -1 ? 3 : 1; }

static void ref_title(FILE *f, const tb_cmp_model *m, series_ref r) {
    if (r.fig >= 0) {
        esc(f, r.fig == TB_CMP_SCORE && m->any_infra ? "Final score (0.8 x application + 0.2 x infrastructure)"
                                                     : tb_cmp_figures[r.fig].title);
        if (*tb_cmp_figures[r.fig].unit) {
            fputs(" (", f);
            esc(f, tb_cmp_figures[r.fig].unit);
            fputc(')', f);
        }
    } else if (r.fig == -1) {
        fputs("p95 ", f);
        esc(f, m->workloads[r.wl]);
        fputs(" (ms)", f);
    } else {
        fputs("Mean power of host ", f);
        esc(f, m->hosts[r.wl]);
        fputs(" (W)", f);
    }
}

/* A "nice" step (1, 2, 2.5 or 5 x 10^k) giving about `target` intervals. */
static double nice_step(double range, int target) {
    double raw = range / target, mag, q, step;
    if (!(raw > 0) || !isfinite(raw)) return 1;
    mag = pow(10, floor(log10(raw)));
    q = raw / mag;
    step = mag * (q <= 1 ? 1 : q <= 2 ? 2 : q <= 2.5 ? 2.5 : q <= 5 ? 5 : 10);
    return step > 0 && isfinite(step) ? step : range;
}

#define CW        560.0
#define PLOT_H    220.0
#define ML        64.0
#define MR        16.0
#define MT        36.0
#define MB        44.0
#define LEG_ROW   18.0
#define MAX_TICKS 40

/* The plot's geometry: the y range in %, its step, the plot area. */
typedef struct bar_geom {
    double lo, hi, step;
    double x0, x1, y0, y1; /* plot area: y0 bottom, y1 top */
    int any;               /* some % change to draw */
} bar_geom;

static double y_of(const bar_geom *g, double v) { return g->y0 - (v - g->lo) / (g->hi - g->lo) * (g->y0 - g->y1); }

/* The y range over every non-baseline run's % change, with room for the
 * value labels above (and below) the bars, on nice ticks. */
static void bar_range(const tb_cmp_model *m, series_ref r, bar_geom *g) {
    g->lo = g->hi = 0;
    g->any = 0;
    for (size_t i = 0; i < m->n_runs; i++) {
        if (i == m->baseline) continue;
        for (size_t k = 0; k < m->n_levels; k++) {
            double p = cell_of(m, i, k, r)->pct;
            if (!isfinite(p)) continue;
            g->any = 1;
            g->lo = fmin(g->lo, p);
            g->hi = fmax(g->hi, p);
        }
    }
    if (g->hi - g->lo <= 0) g->hi = g->lo + 1;
    if (g->hi > 0) g->hi += (g->hi - g->lo) * 0.08;
    if (g->lo < 0) g->lo -= (g->hi - g->lo) * 0.08;
    g->step = nice_step(g->hi - g->lo, 5);
    g->lo = floor(g->lo / g->step) * g->step;
    g->hi = ceil(g->hi / g->step) * g->step;
    if (g->hi <= g->lo) g->hi = g->lo + g->step;
}

/* Rows the legend takes under the axis title. */
static int legend_rows(const tb_cmp_model *m) {
    double lx = ML;
    int rows = 1;
    for (size_t i = 0; i < m->n_runs; i++) {
        double w;
        if (i == m->baseline) continue;
        w = 30 + 6.3 * (double)(strlen(m->runs[i].label) > 40 ? 40 : strlen(m->runs[i].label)) + 70;
        if (lx + w > CW - MR && lx > ML) {
            lx = ML;
            rows++;
        }
        lx += w;
    }
    return rows;
}

static void y_ticks(FILE *f, const bar_geom *g) {
    int n_ticks = (int)lround((g->hi - g->lo) / g->step);
    for (int t = 0; t <= n_ticks && t <= MAX_TICKS; t++) {
        double v = g->lo + t * g->step, py = y_of(g, v);
        int dec = 0;
        while (dec < 4 && fabs(g->step * pow(10, dec) - round(g->step * pow(10, dec))) > 1e-6)
            dec++;
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", g->x0, py, g->x1, py);
        fprintf(f, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%+.*f%%</text>\n", g->x0 - 6, py + 4,
                dec, fabs(v) < g->step / 1e6 ? 0.0 : v);
    }
}

/* "missing" or "n/a" where run i has no bar at level k, turned up the bar's slot. */
static void bar_missing(FILE *f, const tb_cmp_model *m, size_t i, size_t k, double cx, double pz) {
    int present = m->runs[i].lv[k].present;
    fprintf(f,
            "<text class=\"na\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 %.1f %.1f)\">",
            cx, pz - 4, cx, pz - 4);
    fputs(present ? "n/a" : "missing", f);
    fprintf(f, "<title>run %lld at %d tile%s: %s</title></text>\n", (long long)m->runs[i].id, m->tiles[k],
            m->tiles[k] == 1 ? "" : "s",
            present ? "no % change (baseline figure is 0 or unknown)" : "load level not measured");
}

/* The bar of run i at level k, from the zero line pz, with its tooltip and value. */
static void bar_one(FILE *f, const tb_cmp_model *m, series_ref r, const bar_geom *g, size_t i, size_t k, double bx,
                    double bw, double pz) {
    const tb_cmp_cell *c = cell_of(m, i, k, r);
    double p = c->pct, py = y_of(g, p), top = fmin(py, pz), bh = fabs(py - pz);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>run %lld", bx + 1, top,
            bw > 2 ? bw - 2 : bw, bh < 0.5 ? 0.5 : bh, run_color(m, i), (long long)m->runs[i].id);
    if (*m->runs[i].label) {
        fputs(" (", f);
        esc(f, m->runs[i].label);
        fputc(')', f);
    }
    fprintf(f, " at %d tile%s: %+.1f%% (", m->tiles[k], m->tiles[k] == 1 ? "" : "s", p);
    put_num(f, c->value, ref_dec(r));
    fputs(" vs ", f);
    put_num(f, cell_of(m, m->baseline, k, r)->value, ref_dec(r));
    fputs(")</title></rect>\n", f);
    /* the value at the bar's end, so 0% and small changes read too */
    if (bw >= 16)
        fprintf(f, "<text class=\"vl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%+.1f%%</text>\n", bx + bw / 2,
                p >= 0 ? top - 3 : top + bh + 11, p);
}

/* One group per load level, one bar per non-baseline run, then the zero line. */
static void bar_groups(FILE *f, const tb_cmp_model *m, series_ref r, const bar_geom *g) {
    size_t nb = m->n_runs - 1;
    double pz = y_of(g, 0), gw = (g->x1 - g->x0) / (double)(m->n_levels ? m->n_levels : 1);
    double bw = nb ? gw * 0.7 / (double)nb : gw * 0.7;
    if (bw > 56) bw = 56; /* a lone bar stays a bar, not a wall */
    for (size_t k = 0; k < m->n_levels; k++) {
        double gx = g->x0 + gw * (double)k, cx = gx + gw / 2;
        size_t slot = 0;
        fprintf(f, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", cx, g->y0 + 18,
                m->tiles[k]);
        for (size_t i = 0; i < m->n_runs; i++) {
            double bx;
            if (i == m->baseline) continue;
            bx = gx + (gw - bw * (double)nb) / 2 + bw * (double)slot++; /* the group centred on its tick */
            if (!m->runs[i].lv[k].present || !isfinite(cell_of(m, i, k, r)->pct))
                bar_missing(f, m, i, k, bx + bw / 2, pz);
            else
                bar_one(f, m, r, g, i, k, bx, bw, pz);
        }
    }
    fprintf(f, "<line class=\"zero\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", g->x0, pz, g->x1, pz);
}

static void bar_legend(FILE *f, const tb_cmp_model *m, double y0) {
    double lx = ML, ly = y0 + MB + 4;
    for (size_t i = 0; i < m->n_runs; i++) {
        double w;
        char label[48];
        if (i == m->baseline) continue;
        snprintf(label, sizeof label, "%.40s", m->runs[i].label);
        w = 30 + 6.3 * (double)strlen(label) + 70;
        if (lx + w > CW - MR && lx > ML) {
            lx = ML;
            ly += LEG_ROW;
        }
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>", lx, ly - 9, run_color(m, i));
        fprintf(f, "<text class=\"lg\" x=\"%.1f\" y=\"%.1f\">run %lld", lx + 20, ly, (long long)m->runs[i].id);
        if (*label) {
            fputc(' ', f);
            esc(f, label);
        }
        fputs("</text>\n", f);
        lx += w;
    }
}

/* The grouped bar chart of % change: one group per load level, one bar per
 * non-baseline run; a level a run did not measure is marked "missing", a
 * figure without a % (baseline 0 or unknown) "n/a". */
static void bar_chart(FILE *f, const tb_cmp_model *m, series_ref r) {
    bar_geom g;
    double h;
    g.x0 = ML;
    g.x1 = CW - MR;
    g.y1 = MT;
    g.y0 = MT + PLOT_H;
    bar_range(m, r, &g);
    h = g.y0 + MB + legend_rows(m) * LEG_ROW + 8;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n", CW, h);
    fputs("<text class=\"ct\" x=\"8\" y=\"22\">", f);
    ref_title(f, m, r);
    fputs(": % change vs baseline</text>\n", f);
    y_ticks(f, &g);
    bar_groups(f, m, r, &g);
    fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", g.x0, g.y0, g.x0, g.y1);
    fprintf(f, "<text class=\"at\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">load level (tiles)</text>\n",
            (g.x0 + g.x1) / 2, g.y0 + 36);
    fprintf(f,
            "<text class=\"at\" transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">"
            "%% change vs run %lld</text>\n",
            (g.y0 + g.y1) / 2, (long long)m->runs[m->baseline].id);
    if (!g.any)
        fprintf(f, "<text class=\"na\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">no %% change available</text>\n",
                (g.x0 + g.x1) / 2, (g.y0 + g.y1) / 2);
    bar_legend(f, m, g.y0);
    fputs("</svg>\n", f);
}

/* The values behind a chart: tiles, then per run its value and % change. */
static void value_table(FILE *f, const tb_cmp_model *m, series_ref r) {
    size_t i, k;
    int better = ref_better(r), dec = ref_dec(r);
    fputs("<table><thead><tr><th class=\"n\">tiles</th>", f);
    for (i = 0; i < m->n_runs; i++) {
        fprintf(f, "<th class=\"n\">run %lld%s</th>", (long long)m->runs[i].id,
                m->runs[i].is_baseline ? " (baseline)" : "");
        if (!m->runs[i].is_baseline) fputs("<th class=\"n\">&Delta;%</th>", f);
    }
    fputs("</tr></thead><tbody>\n", f);
    for (k = 0; k < m->n_levels; k++) {
        fprintf(f, "<tr><td class=\"n\">%d</td>", m->tiles[k]);
        for (i = 0; i < m->n_runs; i++) {
            const tb_cmp_cell *c = cell_of(m, i, k, r);
            if (!m->runs[i].lv[k].present) {
                fprintf(f, "<td class=\"n miss\"%s>missing</td>", m->runs[i].is_baseline ? "" : " colspan=\"2\"");
                continue;
            }
            fputs("<td class=\"n\">", f);
            put_num(f, c->value, dec);
            fputs("</td>", f);
            if (m->runs[i].is_baseline) continue;
            if (!isfinite(c->pct)) {
                fputs("<td class=\"n\">&ndash;</td>", f);
            } else {
                const char *cls = better == 0 || fabs(c->pct) < 0.05 ? ""
                                  : (c->pct > 0) == (better > 0)     ? " up"
                                                                     : " down";
                fprintf(f, "<td class=\"n%s\">%+.1f%%</td>", cls, c->pct);
            }
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
}

static const char css[] =
    "*{box-sizing:border-box}"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1f2933;"
    "background:#f3f5f8;margin:0}"
    "main{max-width:1200px;margin:0 auto;padding:12px 24px 48px}"
    "h1{font-size:22px;margin:10px 0 4px}h2{font-size:17px;margin:28px 0 8px;padding-bottom:4px;"
    "border-bottom:2px solid #d5dbe3}h3{font-size:14px;margin:16px 0 6px}"
    ".warn{background:#fff7ed;border:1px solid #f59e0b;border-left:6px solid #f59e0b;border-radius:6px;"
    "padding:8px 14px;margin:10px 0}.warn ul{margin:4px 0;padding-left:20px}"
    "table{border-collapse:collapse;background:#fff;width:100%;margin:4px 0 8px;font-size:13px}"
    "th,td{padding:4px 8px;border-bottom:1px solid #e4e7eb;text-align:left;vertical-align:top}"
    "th{background:#eef1f5;font-weight:600;white-space:nowrap}"
    ".n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".up{color:#047857;font-weight:700}.down{color:#b91c1c;font-weight:700}.miss{color:#9aa5b1;font-style:italic}"
    ".pass{color:#047857;font-weight:700}.fail{color:#b91c1c;font-weight:700}.nj{color:#b45309;font-weight:700}"
    "tr.base td{background:#f0f9ff}"
    ".charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:12px}"
    "figure{margin:0;background:#fff;border:1px solid #d5dbe3;border-radius:6px;padding:6px 6px 2px}"
    "svg{width:100%;height:auto;display:block}"
    "svg text{font-family:inherit}.ct{font-size:15px;font-weight:600;fill:#1f2933}"
    ".tk{font-size:11px;fill:#52606d}.at{font-size:12px;fill:#3e4c59}.lg{font-size:11px;fill:#3e4c59}"
    ".na{font-size:10px;fill:#9aa5b1}.vl{font-size:10px;fill:#3e4c59}"
    ".grid{stroke:#e4e7eb}.ax{stroke:#9aa5b1}.zero{stroke:#3e4c59;stroke-width:1.5}"
    ".note{font-size:12px;color:#52606d}.est{color:#b91c1c;font-weight:700}"
    "footer{margin-top:32px;font-size:12px;color:#52606d}";

static void html_runs(FILE *f, const tb_cmp_model *m) {
    size_t i;
    fputs("<h2 id=\"runs\">Runs</h2>\n<table><thead><tr><th class=\"n\">run</th><th>role</th><th>label</th>"
          "<th>status</th><th>tile</th><th>load levels</th><th>started (UTC)</th><th>campaign</th><th>power</th>"
          "</tr></thead><tbody>\n",
          f);
    for (i = 0; i < m->n_runs; i++) {
        const tb_cmp_run *r = &m->runs[i];
        fprintf(f, "<tr%s><td class=\"n\">%lld</td><td>%s</td><td>", r->is_baseline ? " class=\"base\"" : "",
                (long long)r->id, r->is_baseline ? "baseline" : "");
        esc(f, r->label);
        fputs("</td><td>", f);
        esc(f, r->status);
        fputs("</td><td>", f);
        esc(f, r->tile_name);
        fputs("</td><td>", f);
        esc(f, r->tile_spec);
        if (r->max_phases > 1 || r->max_repeats > 1)
            fprintf(f, " <span class=\"note\">(%d phase%s, %d repeat%s)</span>", r->max_phases,
                    r->max_phases == 1 ? "" : "s", r->max_repeats, r->max_repeats == 1 ? "" : "s");
        fputs("</td><td>", f);
        esc(f, r->started_at);
        fputs("</td><td>", f);
        if (r->campaign_id > 0) {
            fprintf(f, "%lld ", (long long)r->campaign_id);
            esc(f, r->campaign_name);
            fputs(": ", f);
            esc(f, r->campaign_config);
        }
        fprintf(f, "</td><td>%s", r->estimated ? "<span class=\"est\">estimated</span>" : "metered");
        if (r->other_cpu_max_pct > TB_CMP_OTHER_CPU_LIMIT_PCT)
            fprintf(f, "; <span class=\"est\">other CPU %.1f%% at %d tiles</span>", r->other_cpu_max_pct,
                    r->other_cpu_tiles);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
}

static void html_qos(FILE *f, const tb_cmp_model *m) {
    size_t i, k;
    fputs("<h2 id=\"qos\">QoS and validity per load level</h2>\n<p class=\"note\">A % change at a level that fails "
          "QoS or is invalid compares a degraded measurement.</p>\n<table><thead><tr><th class=\"n\">tiles</th>",
          f);
    for (i = 0; i < m->n_runs; i++)
        fprintf(f, "<th>run %lld</th>", (long long)m->runs[i].id);
    fputs("</tr></thead><tbody>\n", f);
    for (k = 0; k < m->n_levels; k++) {
        fprintf(f, "<tr><td class=\"n\">%d</td>", m->tiles[k]);
        for (i = 0; i < m->n_runs; i++) {
            const tb_cmp_level *lv = &m->runs[i].lv[k];
            if (!lv->present)
                fputs("<td class=\"miss\">missing</td>", f);
            else
                fprintf(f, "<td><span class=\"%s\">%s</span>%s%s</td>",
                        !lv->qos_pass            ? "fail"
                        : lv->qos_not_judged > 0 ? "nj"
                                                 : "pass",
                        tb_model_qos_verdict(lv->qos_pass, lv->qos_not_judged),
                        lv->qos_pass && lv->qos_not_judged > 0 ? ": some rules not judged (too few ops)" : "",
                        lv->valid ? "" : " <span class=\"fail\">INVALID</span>");
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
}

int tb_compare_write_html(const tb_cmp_model *m, FILE *f, char *err) {
    size_t i, k, n_refs = 0;
    series_ref *refs = xmalloc((TB_CMP_N_FIG + m->n_workloads + m->n_hosts) * sizeof *refs);
    (void)err;
    for (k = 0; k < TB_CMP_N_FIG; k++)
        if (m->any_fig[k] || k <= TB_CMP_WATTS) refs[n_refs++] = (series_ref){(int)k, 0};
    for (k = 0; k < m->n_workloads; k++)
        refs[n_refs++] = (series_ref){-1, k};
    for (k = 0; k < m->n_hosts; k++)
        refs[n_refs++] = (series_ref){-2, k};

    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
          "<meta name=\"generator\" content=\"tilebench " TB_VERSION "\">\n<title>tilebench compare: runs ",
          f);
    for (i = 0; i < m->n_runs; i++)
        fprintf(f, "%s%lld", i ? ", " : "", (long long)m->runs[i].id);
    fprintf(f, " against run %lld</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n",
            (long long)m->runs[m->baseline].id, css);
    fprintf(f, "<h1>tilebench compare: %zu runs against baseline run %lld", m->n_runs,
            (long long)m->runs[m->baseline].id);
    if (*m->runs[m->baseline].label) {
        fputs(" (", f);
        esc(f, m->runs[m->baseline].label);
        fputc(')', f);
    }
    fputs("</h1>\n", f);
    if (m->n_notes > 0) {
        fputs("<div class=\"warn\" id=\"notes\"><b>Read first</b><ul>\n", f);
        for (i = 0; i < m->n_notes; i++) {
            fputs("<li>", f);
            esc(f, m->notes[i]);
            fputs("</li>\n", f);
        }
        fputs("</ul></div>\n", f);
    }
    html_runs(f, m);
    fputs("<p class=\"note\">", f);
    esc(f, tb_cmp_method_phases);
    fputs(" ", f);
    esc(f, tb_cmp_method_pct);
    fputs(" ", f);
    esc(f, tb_cmp_method_p95);
    fputs(" Green: better than the baseline; red: worse (higher score and PPKW, lower power and latency are "
          "better).</p>\n",
          f);
    if (m->n_levels == 0) {
        fputs("<p>No load level is stored in any of the runs.</p>\n", f);
    } else {
        fputs("<h2 id=\"charts\">% change against the baseline per load level</h2>\n<div class=\"charts\">\n", f);
        for (i = 0; i < n_refs; i++) {
            fputs("<figure>\n", f);
            bar_chart(f, m, refs[i]);
            fputs("</figure>\n", f);
        }
        fputs("</div>\n<h2 id=\"values\">Values</h2>\n", f);
        for (i = 0; i < n_refs; i++) {
            fputs("<h3>", f);
            ref_title(f, m, refs[i]);
            fputs("</h3>\n", f);
            value_table(f, m, refs[i]);
        }
        html_qos(f, m);
    }
    fputs("<footer>Generated by tilebench " TB_VERSION ". Units: power in W (mean over steady state), PPKW in score "
          "per kW, latency in ms, CPU frequency in MHz.</footer>\n</main>\n</body>\n</html>\n",
          f);
    free(refs);
    return 0;
}
