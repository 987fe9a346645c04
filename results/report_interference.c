/*
 * report_interference.c: the consolidation-interference table of a run made
 * with --interference (coordinator/interference.c), in each report format.
 * For each load level of N tiles (and repeat), every workload ran alone in
 * the N tiles, then the whole tile ran; the table compares them:
 *
 * - throughput ratio: the workload's throughput together (the whole tile's
 *   level) / alone (its own level), each over every tile and phase: its
 *   metric ops / steady-state seconds;
 * - for each percentile rule of the workload, the percentile together /
 *   alone, from the op's latency histograms merged over tiles and phases;
 * - marginal power alone: the alone level's mean power (over its phases,
 *   weighted by their length) - active idle, and its energy per op:
 *   marginal W / ops per second (J/op);
 * - for the tile: its marginal power together against the sum of the
 *   workloads' marginal powers alone; sharing saves that sum - the tile's
 *   (negative: sharing costs power), in W and % of the sum.
 *
 * Without active idle (--idle 0, or a failed measurement) the marginal
 * figures are unknown (null, n/a) rather than guessed. The alone levels are
 * not load levels of the sweep: saturation, the summary and overall
 * efficiency come from the whole tile's levels only (model.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/html.h"
#include "qos/hist.h"
#include "results/report_fmt.h"
#include "results/report_views.h"
#include "results/svg_chart.h"
#include "tiles/tiledef.h"

#define MAX_PCT 16

typedef struct intf_pct {
    char rule[160], op[32];
    double pct, alone_ms, together_ms;
    int judged; /* 0: a phase, together or alone, had fewer ops than the rule needs to be judged */
} intf_pct;

typedef struct intf_wl {
    const char *name;
    double ops_s_alone, ops_s_together, thr_alone, thr_together, watts_alone, marginal_w;
    int n_pct;
    intf_pct pct[MAX_PCT];
} intf_wl;

typedef struct intf_level {
    int64_t tiles, repeat;
    double watts_together, marginal_together, marginal_sum;
    int n_wl;
    intf_wl wl[TB_MAX_WORKLOADS];
} intf_level;

typedef struct intf {
    double idle_w;
    size_t n;
    intf_level *lv;
} intf;

static double ratio(double a, double b) { return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN; }

/* The phases of (tiles, repeat) that ran alone (NULL: the whole tile): ops
 * and throughput of workload w summed over tiles, averaged over the phases'
 * seconds; mean power weighted by them. */
static void level_figures(const tb_model_run *r, int64_t tiles, int64_t rep, const char *alone, const char *w,
                          double *ops_s, double *thr, double *watts) {
    double s = 0, ops = 0, thr_s = 0, ws = 0, wsec = 0;
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        if (lv->tiles != tiles || lv->repeat != rep || (alone ? !lv->alone || strcmp(lv->alone, alone) : !!lv->alone))
            continue;
        if (!isfinite(lv->steady_s) || lv->steady_s <= 0) continue;
        s += lv->steady_s;
        for (size_t k = 0; k < lv->n_workloads; k++) {
            const tb_model_workload *wl = &lv->workloads[k];
            if (strcmp(wl->name, w) != 0) continue;
            if (wl->ops.known) ops += (double)wl->ops.v;
            if (isfinite(wl->throughput)) thr_s += wl->throughput * lv->steady_s;
        }
        if (isfinite(lv->avg_watts) && lv->avg_watts > 0) {
            ws += lv->avg_watts * lv->steady_s;
            wsec += lv->steady_s;
        }
    }
    *ops_s = s > 0 ? ops / s : NAN;
    *thr = s > 0 ? thr_s / s : NAN;
    if (watts) *watts = wsec > 0 ? ws / wsec : NAN;
}

/* Percentile p of workload w's op (or every op: "*") over the phases of
 * (tiles, repeat, alone), from the merged histograms; NaN when none. */
static double level_pct(const tb_model_run *r, int64_t tiles, int64_t rep, const char *alone, const char *w,
                        const char *op, double p) {
    tb_hist *h = tb_hist_new();
    double v;
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        if (lv->tiles != tiles || lv->repeat != rep || (alone ? !lv->alone || strcmp(lv->alone, alone) : !!lv->alone))
            continue;
        for (size_t g = 0; g < lv->n_groups; g++)
            if (strcmp(lv->groups[g].workload, w) == 0 && (strcmp(op, "*") == 0 || strcmp(lv->groups[g].op, op) == 0))
                tb_hist_merge(h, lv->groups[g].hist);
    }
    v = tb_hist_count(h) ? (double)tb_hist_percentile(h, p) / 1000.0 : NAN;
    tb_hist_free(h);
    return v;
}

/* The workload's percentile rules, from the whole tile level's verdict
 * names ("oltp.Order p95 <= 2000 ms", qos/qos.c). */
static void find_pct_rules(const tb_model_level *lv, intf_wl *x) {
    for (size_t q = 0; q < lv->n_qos && x->n_pct < MAX_PCT; q++) {
        char wl[32], op[32], rel[4];
        double p;
        const char *rule = lv->qos[q].rule;
        if (!rule || sscanf(rule, "%31[^.].%31[^ ] p%lf %3s", wl, op, &p, rel) != 4 || strcmp(rel, "<=") != 0 ||
            strcmp(wl, x->name) != 0)
            continue;
        snprintf(x->pct[x->n_pct].rule, sizeof x->pct[x->n_pct].rule, "%s", rule);
        snprintf(x->pct[x->n_pct].op, sizeof x->pct[x->n_pct].op, "%s", op);
        x->pct[x->n_pct++].pct = p;
    }
}

/* Whether rule was judged in every phase of (tiles, repeat, alone) that has it (qos/qos.c: too few ops, not judged). */
static int rule_judged(const tb_model_run *r, int64_t tiles, int64_t rep, const char *alone, const char *rule) {
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        if (lv->tiles != tiles || lv->repeat != rep || (alone ? !lv->alone || strcmp(lv->alone, alone) : !!lv->alone))
            continue;
        for (size_t q = 0; q < lv->n_qos; q++)
            if (lv->qos[q].rule && strcmp(lv->qos[q].rule, rule) == 0 && !lv->qos[q].judged) return 0;
    }
    return 1;
}

/* The whole tile's level row of (tiles, repeat) with the most QoS rows. */
static const tb_model_level *whole_level(const tb_model_run *r, int64_t tiles, int64_t rep) {
    for (size_t i = 0; i < r->n_levels; i++)
        if (r->levels[i].tiles == tiles && r->levels[i].repeat == rep && !r->levels[i].alone) return &r->levels[i];
    return NULL;
}

static void build_level(const tb_model_run *r, double idle, intf_level *o) {
    const tb_model_level *whole = whole_level(r, o->tiles, o->repeat);
    double ops_s, thr;
    level_figures(r, o->tiles, o->repeat, NULL, "", &ops_s, &thr, &o->watts_together);
    o->marginal_together = isfinite(idle) ? o->watts_together - idle : NAN;
    o->marginal_sum = isfinite(idle) ? 0 : NAN;
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        intf_wl *x;
        int seen = 0;
        if (lv->tiles != o->tiles || lv->repeat != o->repeat || !lv->alone) continue;
        for (int k = 0; k < o->n_wl; k++)
            if (strcmp(o->wl[k].name, lv->alone) == 0) seen = 1;
        if (seen || o->n_wl == TB_MAX_WORKLOADS) continue;
        x = &o->wl[o->n_wl++];
        memset(x, 0, sizeof *x);
        x->name = lv->alone;
        level_figures(r, o->tiles, o->repeat, x->name, x->name, &x->ops_s_alone, &x->thr_alone, &x->watts_alone);
        level_figures(r, o->tiles, o->repeat, NULL, x->name, &x->ops_s_together, &x->thr_together, NULL);
        x->marginal_w = isfinite(idle) ? x->watts_alone - idle : NAN;
        o->marginal_sum += x->marginal_w;
        if (whole) find_pct_rules(whole, x);
        for (int k = 0; k < x->n_pct; k++) {
            intf_pct *p = &x->pct[k];
            p->alone_ms = level_pct(r, o->tiles, o->repeat, x->name, x->name, p->op, p->pct);
            p->together_ms = level_pct(r, o->tiles, o->repeat, NULL, x->name, p->op, p->pct);
            p->judged = rule_judged(r, o->tiles, o->repeat, NULL, p->rule) &&
                        rule_judged(r, o->tiles, o->repeat, x->name, p->rule);
        }
    }
}

/* The table of r; n = 0 when the run has no alone level. */
static void build(const tb_model_run *r, intf *t) {
    memset(t, 0, sizeof *t);
    t->idle_w = isfinite(r->active_idle_watts) && r->active_idle_watts > 0 ? r->active_idle_watts : NAN;
    t->lv = xcalloc(r->n_levels + 1, sizeof *t->lv);
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        int seen = 0;
        if (!lv->alone) continue;
        for (size_t k = 0; k < t->n; k++)
            if (t->lv[k].tiles == lv->tiles && t->lv[k].repeat == lv->repeat) seen = 1;
        if (seen) continue;
        t->lv[t->n].tiles = lv->tiles;
        t->lv[t->n].repeat = lv->repeat;
        build_level(r, t->idle_w, &t->lv[t->n++]);
    }
}

static double saved_w(const intf_level *l) { return l->marginal_sum - l->marginal_together; }
static double saved_pct(const intf_level *l) { return 100.0 * ratio(saved_w(l), l->marginal_sum); }
static double j_per_op(const intf_wl *x) { return ratio(x->marginal_w, x->ops_s_alone); }

#define ABOUT                                                                                                          \
    "consolidation interference (--interference): at each load level every workload first ran alone in its tiles "     \
    "(stored levels with 'alone' set; not load levels of the sweep: saturation, the summary and overall efficiency "   \
    "use the whole tile's levels only), then the whole tile"

/* ---- JSON ---------------------------------------------------------------- */

static json_t *jr(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *wl_json(const intf_wl *x) {
    json_t *o = json_object(), *pcts = json_array();
    json_object_set_new(o, "name", json_string(x->name));
    json_object_set_new(o, "throughput_alone", jr(x->thr_alone));
    json_object_set_new(o, "throughput_together", jr(x->thr_together));
    json_object_set_new(o, "throughput_ratio", jr(ratio(x->thr_together, x->thr_alone)));
    json_object_set_new(o, "ops_per_s_alone", jr(x->ops_s_alone));
    json_object_set_new(o, "ops_per_s_together", jr(x->ops_s_together));
    json_object_set_new(o, "avg_watts_alone", jr(x->watts_alone));
    json_object_set_new(o, "marginal_watts_alone", jr(x->marginal_w));
    json_object_set_new(o, "joules_per_op_alone", jr(j_per_op(x)));
    for (int k = 0; k < x->n_pct; k++) {
        const intf_pct *p = &x->pct[k];
        json_array_append_new(pcts, json_pack("{s:s, s:s, s:f, s:o, s:o, s:o, s:b}", "rule", p->rule, "op", p->op,
                                              "percentile", p->pct, "alone_ms", jr(p->alone_ms), "together_ms",
                                              jr(p->together_ms), "ratio", jr(ratio(p->together_ms, p->alone_ms)),
                                              "judged", p->judged));
    }
    json_object_set_new(o, "percentiles", pcts);
    return o;
}

json_t *tb_report_interference_json(const tb_model_run *r) {
    intf t;
    json_t *o, *levels;
    build(r, &t);
    if (t.n == 0) {
        free(t.lv);
        return NULL;
    }
    o = json_object();
    levels = json_array();
    json_object_set_new(o, "about", json_string(ABOUT));
    json_object_set_new(o, "active_idle_watts", jr(t.idle_w));
    if (!isfinite(t.idle_w))
        json_object_set_new(o, "note", json_string("active idle was not measured: marginal power is unknown"));
    for (size_t i = 0; i < t.n; i++) {
        const intf_level *l = &t.lv[i];
        json_t *lo = json_object(), *wls = json_array();
        json_object_set_new(lo, "tiles", json_integer((json_int_t)l->tiles));
        json_object_set_new(lo, "repeat", json_integer((json_int_t)l->repeat));
        json_object_set_new(lo, "avg_watts_together", jr(l->watts_together));
        json_object_set_new(lo, "marginal_watts_together", jr(l->marginal_together));
        json_object_set_new(lo, "marginal_watts_alone_sum", jr(l->marginal_sum));
        json_object_set_new(lo, "sharing_saves_watts", jr(saved_w(l)));
        json_object_set_new(lo, "sharing_saves_pct", jr(saved_pct(l)));
        for (int k = 0; k < l->n_wl; k++)
            json_array_append_new(wls, wl_json(&l->wl[k]));
        json_object_set_new(lo, "workloads", wls);
        json_array_append_new(levels, lo);
    }
    json_object_set_new(o, "levels", levels);
    free(t.lv);
    return o;
}

/* ---- text ---------------------------------------------------------------- */

static const char *fmt(double v, const char *f, char *b, size_t n) {
    if (!isfinite(v)) return "n/a";
    snprintf(b, n, f, v);
    return b;
}

#define NOT_JUDGED_NOTE "*: fewer ops than the rule needs to be judged (a phase together or alone)"

void tb_report_interference_text(const tb_model_run *r, FILE *f) {
    intf t;
    char b[8][32];
    int starred = 0;
    build(r, &t);
    for (size_t i = 0; i < t.n; i++) {
        const intf_level *l = &t.lv[i];
        if (i == 0) {
            fprintf(f, "\nConsolidation interference (together / alone)\n  %s.\n", ABOUT);
            if (!isfinite(t.idle_w)) fputs("  Active idle was not measured: marginal power is n/a.\n", f);
        }
        fprintf(f, "  %lld tiles, repeat %lld\n", (long long)l->tiles, (long long)l->repeat);
        fprintf(f, "    %-10s %10s %10s %11s %9s  %s\n", "workload", "thr ratio", "alone W", "marginal W", "J/op",
                "percentile ratios");
        for (int k = 0; k < l->n_wl; k++) {
            const intf_wl *x = &l->wl[k];
            fputs("    ", f);
            tb_fmt_put_safe(f, x->name, 10, 10);
            fprintf(f, " %10s %10s %11s %9s ", fmt(ratio(x->thr_together, x->thr_alone), "%.3f", b[0], 32),
                    fmt(x->watts_alone, "%.1f", b[1], 32), fmt(x->marginal_w, "%.1f", b[2], 32),
                    fmt(j_per_op(x), "%.4f", b[3], 32));
            for (int p = 0; p < x->n_pct; p++) {
                fprintf(f, " %s p%g %s%s (together/alone %s/%s ms)", x->pct[p].op, x->pct[p].pct,
                        fmt(ratio(x->pct[p].together_ms, x->pct[p].alone_ms), "%.2f", b[4], 32),
                        x->pct[p].judged ? "" : "*", fmt(x->pct[p].together_ms, "%.1f", b[5], 32),
                        fmt(x->pct[p].alone_ms, "%.1f", b[6], 32));
                starred |= !x->pct[p].judged;
            }
            fputc('\n', f);
        }
        fprintf(f, "    tile: marginal %s W together, %s W summed alone: sharing saves %s W (%s)\n",
                fmt(l->marginal_together, "%.1f", b[0], 32), fmt(l->marginal_sum, "%.1f", b[1], 32),
                fmt(saved_w(l), "%.1f", b[2], 32), fmt(saved_pct(l), "%.1f%%", b[3], 32));
    }
    if (starred) fputs("  " NOT_JUDGED_NOTE "\n", f);
    free(t.lv);
}

/* ---- CSV ----------------------------------------------------------------- */

static void csv_num(FILE *f, double v) {
    fputc(',', f);
    if (isfinite(v)) fprintf(f, "%.15g", v);
}

static void csv_text(FILE *f, const char *s) {
    fputs(",\"", f);
    for (; s && *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* One row per load level x workload x percentile rule (a workload without
 * one: one row, its rule fields empty), after the main table and an empty
 * line. */
void tb_report_interference_csv(const tb_model_run *r, FILE *f) {
    intf t;
    build(r, &t);
    if (t.n > 0)
        fputs("\r\ntiles,repeat,workload,throughput_alone,throughput_together,throughput_ratio,ops_per_s_alone,"
              "avg_watts_alone,marginal_watts_alone,joules_per_op_alone,rule,percentile,alone_ms,together_ms,"
              "percentile_ratio,active_idle_watts,marginal_watts_together,marginal_watts_alone_sum,"
              "sharing_saves_watts,sharing_saves_pct\r\n",
              f);
    for (size_t i = 0; i < t.n; i++) {
        const intf_level *l = &t.lv[i];
        for (int k = 0; k < l->n_wl; k++) {
            const intf_wl *x = &l->wl[k];
            for (int p = 0; p < (x->n_pct ? x->n_pct : 1); p++) {
                const intf_pct *q = x->n_pct ? &x->pct[p] : NULL;
                fprintf(f, "%lld,%lld", (long long)l->tiles, (long long)l->repeat);
                csv_text(f, x->name);
                csv_num(f, x->thr_alone);
                csv_num(f, x->thr_together);
                csv_num(f, ratio(x->thr_together, x->thr_alone));
                csv_num(f, x->ops_s_alone);
                csv_num(f, x->watts_alone);
                csv_num(f, x->marginal_w);
                csv_num(f, j_per_op(x));
                if (q)
                    csv_text(f, q->rule);
                else
                    fputc(',', f);
                csv_num(f, q ? q->pct : NAN);
                csv_num(f, q ? q->alone_ms : NAN);
                csv_num(f, q ? q->together_ms : NAN);
                csv_num(f, q ? ratio(q->together_ms, q->alone_ms) : NAN);
                csv_num(f, t.idle_w);
                csv_num(f, l->marginal_together);
                csv_num(f, l->marginal_sum);
                csv_num(f, saved_w(l));
                csv_num(f, saved_pct(l));
                fputs("\r\n", f);
            }
        }
    }
    free(t.lv);
}

/* ---- HTML ---------------------------------------------------------------- */

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                     "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

/* Throughput together / alone per workload, and the tile's marginal power
 * against the sum alone, over the first repeat's load levels. */
static void html_charts(FILE *f, const intf *t) {
    size_t n = 0;
    double *x = xcalloc(t->n + 1, sizeof *x), *y = xcalloc((t->n + 1) * (TB_MAX_WORKLOADS + 2), sizeof *y);
    chart_series s[TB_MAX_WORKLOADS + 2];
    chart_line one = {1.0, "alone = 1", "#888"};
    chart c;
    int nw = t->lv[0].n_wl;
    for (size_t i = 0; i < t->n; i++)
        if (t->lv[i].repeat == t->lv[0].repeat) {
            const intf_level *l = &t->lv[i];
            x[n] = (double)l->tiles;
            for (int k = 0; k < nw && k < l->n_wl; k++)
                y[(size_t)k * t->n + n] = ratio(l->wl[k].thr_together, l->wl[k].thr_alone);
            y[(size_t)nw * t->n + n] = l->marginal_together;
            y[(size_t)(nw + 1) * t->n + n] = l->marginal_sum;
            n++;
        }
    memset(s, 0, sizeof s);
    for (int k = 0; k < nw; k++)
        s[k] = (chart_series){t->lv[0].wl[k].name, colors[k % 8], n, x, y + (size_t)k * t->n, NULL, NULL};
    memset(&c, 0, sizeof c);
    c = (chart){
        "Throughput together / alone", "tiles", "together / alone", "", 3, 0, NAN, NULL, s, (size_t)nw, &one, 1};
    fputs("<figure>", f);
    tb_svg_chart(f, &c);
    fputs("<figcaption>Each workload's throughput with the whole tile running, over its throughput alone (1: its "
          "neighbours cost it nothing).</figcaption></figure>\n",
          f);
    s[0] = (chart_series){"tile together", colors[0], n, x, y + (size_t)nw * t->n, NULL, NULL};
    s[1] = (chart_series){"sum of the workloads alone", colors[1], n, x, y + (size_t)(nw + 1) * t->n, NULL, NULL};
    c = (chart){"Marginal power: together against the sum alone",
                "tiles",
                "power - active idle (W)",
                "W",
                1,
                0,
                NAN,
                NULL,
                s,
                2,
                NULL,
                0};
    if (tb_svg_series_has_points(&s[0])) {
        fputs("<figure>", f);
        tb_svg_chart(f, &c);
        fputs("<figcaption>Above the sum alone: sharing the host costs power; below: it saves power.</figcaption>"
              "</figure>\n",
              f);
    }
    free(x);
    free(y);
}

static void td(FILE *f, double v, const char *format) {
    char b[32];
    fprintf(f, "<td class=\"n\">%s</td>", fmt(v, format, b, sizeof b));
}

void tb_report_interference_html(const tb_model_run *r, FILE *f) {
    intf t;
    int starred = 0;
    build(r, &t);
    if (t.n == 0) {
        free(t.lv);
        return;
    }
    fputs("<h2 id=\"interference\">Consolidation interference</h2>\n<p>", f);
    tb_html_escape_file(f, ABOUT);
    fputs(".", f);
    if (!isfinite(t.idle_w)) fputs(" Active idle was not measured: marginal power is n/a.", f);
    fputs("</p>\n", f);
    html_charts(f, &t);
    fputs(
        "<div class=\"tw\"><table>\n<tr><th>tiles</th><th>repeat</th><th>workload</th><th>throughput together / "
        "alone</th>"
        "<th>mean W alone</th><th>marginal W alone</th><th>J/op alone</th><th>percentiles together / alone</th></tr>\n",
        f);
    for (size_t i = 0; i < t.n; i++) {
        const intf_level *l = &t.lv[i];
        for (int k = 0; k < l->n_wl; k++) {
            const intf_wl *x = &l->wl[k];
            char b[3][32];
            fprintf(f, "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td>", (long long)l->tiles,
                    (long long)l->repeat);
            tb_html_escape_file(f, x->name);
            fputs("</td>", f);
            td(f, ratio(x->thr_together, x->thr_alone), "%.3f");
            td(f, x->watts_alone, "%.1f");
            td(f, x->marginal_w, "%.1f");
            td(f, j_per_op(x), "%.4f");
            fputs("<td>", f);
            for (int p = 0; p < x->n_pct; p++) {
                fprintf(f, "%s", p ? "<br>" : "");
                tb_html_escape_file(f, x->pct[p].op);
                fprintf(f, " p%g: %s%s (together / alone %s / %s ms)", x->pct[p].pct,
                        fmt(ratio(x->pct[p].together_ms, x->pct[p].alone_ms), "%.2f", b[0], 32),
                        x->pct[p].judged ? "" : "*", fmt(x->pct[p].together_ms, "%.1f", b[1], 32),
                        fmt(x->pct[p].alone_ms, "%.1f", b[2], 32));
                starred |= !x->pct[p].judged;
            }
            fputs("</td></tr>\n", f);
        }
        fprintf(f, "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td>whole tile</td><td colspan=\"5\">",
                (long long)l->tiles, (long long)l->repeat);
        {
            char b[4][32];
            fprintf(f, "marginal %s W together against %s W summed alone: sharing saves %s W (%s)</td></tr>\n",
                    fmt(l->marginal_together, "%.1f", b[0], 32), fmt(l->marginal_sum, "%.1f", b[1], 32),
                    fmt(saved_w(l), "%.1f", b[2], 32), fmt(saved_pct(l), "%.1f%%", b[3], 32));
        }
    }
    fputs("</table></div>\n", f);
    if (starred) fputs("<p class=\"note\">" NOT_JUDGED_NOTE ".</p>\n", f);
    free(t.lv);
}
