/*
 * svg_chart.c: the inline SVG line charts of the HTML report (svg_chart.h).
 */
#include "results/svg_chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/html.h"
#include "common/tb_common.h"

#define esc        tb_html_escape_file

#define CW         560.0 /* SVG width */
#define PLOT_H     220.0 /* plot area height */
#define ML         70.0  /* left margin: y tick labels and title */
#define MR         20.0
#define MT         40.0 /* title */
#define MB         48.0 /* x tick labels and title */
#define PADX       16.0 /* inner padding so edge points are not cut */
#define LEG_ROW    18.0
#define LOG_SPREAD 50.0
#define MAX_TICKS  40 /* bounds the tick loops whatever the data */

typedef struct axis {
    double lo, hi, step;
    int log;
} axis;

/* A "nice" step (1, 2, 2.5 or 5 x 10^k) giving about `target` intervals. */
static double nice_step(double range, int target) {
    double raw = range / target, mag, r, step;
    if (!(raw > 0) || !isfinite(raw)) return 1;
    mag = pow(10, floor(log10(raw)));
    r = raw / mag;
    step = mag * (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10);
    return step > 0 && isfinite(step) ? step : range; /* denormal ranges */
}

/* Tick label: as many decimals as the step needs. */
static void fmt_tick(char *buf, size_t len, double v, double step) {
    int d = 0;
    while (d < 6 && fabs(step * pow(10, d) - round(step * pow(10, d))) > 1e-6)
        d++;
    snprintf(buf, len, "%.*f", d, v);
}

static double axis_pos(const axis *a, double v, double p0, double p1) {
    double t = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) : (v - a->lo) / (a->hi - a->lo);
    return p0 + t * (p1 - p0);
}

static void y_axis_range(const chart *c, axis *a) {
    double vmin = INFINITY, vmax = -INFINITY, pmin = INFINITY;
    size_t i, j;
    for (i = 0; i < c->n_series; i++)
        for (j = 0; j < c->series[i].n; j++) {
            double v = c->series[i].y[j];
            if (!isfinite(v)) continue;
            vmin = fmin(vmin, v);
            vmax = fmax(vmax, v);
            if (v > 0) pmin = fmin(pmin, v);
        }
    for (i = 0; i < c->n_lines; i++) {
        if (!isfinite(c->lines[i].y)) continue;
        vmin = fmin(vmin, c->lines[i].y);
        vmax = fmax(vmax, c->lines[i].y);
        if (c->lines[i].y > 0) pmin = fmin(pmin, c->lines[i].y);
    }
    a->log = c->log_ok && isfinite(pmin) && vmin > 0 && vmax / pmin > LOG_SPREAD;
    if (a->log) {
        a->lo = pow(10, floor(log10(pmin)));
        a->hi = pow(10, ceil(log10(vmax)));
        if (a->hi <= a->lo) a->hi = a->lo * 10;
        a->step = 0;
        return;
    }
    if (!isfinite(vmin)) vmin = 0, vmax = 1;
    a->lo = vmin < 0 ? vmin : 0;
    if (vmax <= a->lo) vmax = a->lo + 1;
    a->step = nice_step(vmax - a->lo, 5);
    a->lo = floor(a->lo / a->step) * a->step;
    a->hi = ceil(vmax / a->step) * a->step;
}

static void x_axis_range(const chart *c, axis *a) {
    double vmax = 1;
    size_t i, j;
    for (i = 0; i < c->n_series; i++)
        for (j = 0; j < c->series[i].n; j++)
            if (isfinite(c->series[i].x[j])) vmax = fmax(vmax, c->series[i].x[j]);
    a->log = 0;
    a->lo = 0;
    a->step = fmax(1, ceil(nice_step(vmax, 8))); /* tiles are whole */
    a->hi = ceil(vmax / a->step) * a->step;
}

/* Legend entries: series with at least one point, then reference lines. */
typedef struct legend_item {
    const char *text, *color;
    int dashed;
    double x, y;
} legend_item;

int tb_svg_series_has_points(const chart_series *s) {
    size_t i;
    for (i = 0; i < s->n; i++)
        if (isfinite(s->y[i])) return 1;
    return 0;
}

/* Lays the legend out in rows under the x-axis title; returns the rows used. */
static int legend_layout(const chart *c, legend_item *items, size_t *n_items, double top) {
    double x = ML, y = top;
    size_t i, n = 0;
    int rows = 0;
    for (i = 0; i < c->n_series + c->n_lines; i++) {
        legend_item *it = &items[n];
        double w;
        if (i < c->n_series) {
            if (!tb_svg_series_has_points(&c->series[i])) continue;
            it->text = c->series[i].name;
            it->color = c->series[i].color;
            it->dashed = 0;
        } else {
            it->text = c->lines[i - c->n_series].label;
            it->color = c->lines[i - c->n_series].color;
            it->dashed = 1;
        }
        w = 30 + 6.3 * (double)strlen(it->text) + 14;
        if (rows == 0)
            rows = 1;
        else if (x + w > CW - MR && x > ML) {
            x = ML;
            y += LEG_ROW;
            rows++;
        }
        it->x = x;
        it->y = y;
        x += w;
        n++;
    }
    *n_items = n;
    return rows;
}

static void svg_grid(FILE *f, const axis *xa, const axis *ya, double x0, double x1, double y0, double y1) {
    char buf[32];
    double v;
    int i, n;
    if (ya->log) {
        n = (int)lround(log10(ya->hi / ya->lo));
        for (i = 0, v = ya->lo; i <= n && i <= MAX_TICKS; i++, v *= 10) {
            double py = axis_pos(ya, v, y0, y1);
            int k;
            fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, py, x1, py);
            fmt_tick(buf, sizeof buf, v, v);
            fprintf(f, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", x0 - 6, py + 4, buf);
            for (k = 2; k <= 9 && i < n; k++) {
                double pm = axis_pos(ya, v * k, y0, y1);
                fprintf(f, "<line class=\"grid minor\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, pm, x1,
                        pm);
            }
        }
    } else {
        n = (int)lround((ya->hi - ya->lo) / ya->step);
        for (i = 0; i <= n && i <= MAX_TICKS; i++) {
            double py;
            v = ya->lo + i * ya->step;
            py = axis_pos(ya, v, y0, y1);
            fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, py, x1, py);
            fmt_tick(buf, sizeof buf, v, ya->step);
            fprintf(f, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", x0 - 6, py + 4, buf);
        }
    }
    n = (int)lround((xa->hi - xa->lo) / xa->step);
    for (i = 0; i <= n && i <= MAX_TICKS; i++) {
        double px;
        v = xa->lo + i * xa->step;
        px = axis_pos(xa, v, x0 + PADX, x1 - PADX);
        fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", px, y0, px, y0 + 5);
        fmt_tick(buf, sizeof buf, v, xa->step);
        fprintf(f, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", px, y0 + 18, buf);
    }
    fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, y0, x1, y0);
    fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, y0, x0, y1);
}

/* One series: the line through consecutive points, markers with tooltips,
 * and value labels when the chart has a single series (readable in print). */
static void svg_series(FILE *f, const chart *c, const chart_series *s, const axis *xa, const axis *ya, double x0,
                       double x1, double y0, double y1) {
    size_t i;
    int pen = 0;
    fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"", s->color);
    for (i = 0; i < s->n; i++) {
        if (!isfinite(s->y[i]) || (ya->log && s->y[i] <= 0)) {
            pen = 0;
            continue;
        }
        fprintf(f, "%s%.1f %.1f ", pen ? "L" : "M", axis_pos(xa, s->x[i], x0 + PADX, x1 - PADX),
                axis_pos(ya, s->y[i], y0, y1));
        pen = 1;
    }
    fputs("\"/>\n", f);
    for (i = 0; i < s->n; i++) {
        int m = s->mark ? s->mark[i] : MARK_OK;
        double px, py;
        if (!isfinite(s->y[i]) || (ya->log && s->y[i] <= 0)) continue;
        px = axis_pos(xa, s->x[i], x0 + PADX, x1 - PADX);
        py = axis_pos(ya, s->y[i], y0, y1);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"%s><title>", px,
                py, m == MARK_OK ? s->color : "#fff", (m & MARK_FAIL) ? "#dc2626" : s->color,
                (m & MARK_INVALID) ? " stroke-dasharray=\"2 2\"" : "");
        esc(f, s->name);
        fprintf(f, ": %.*f%s%s at %g tile%s", c->y_dec, s->y[i], *c->y_unit ? " " : "", c->y_unit, s->x[i],
                s->x[i] == 1 ? "" : "s");
        if (s->note && s->note[i] && *s->note[i]) {
            fputs(" (", f);
            esc(f, s->note[i]);
            fputc(')', f);
        }
        fputs("</title></circle>", f);
        if (c->n_series == 1)
            fprintf(f, "<text class=\"vl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>", px, py - 9,
                    c->y_dec, s->y[i]);
        fputc('\n', f);
    }
}

/* Writes chart c as an inline <svg>. */
void tb_svg_chart(FILE *f, const chart *c) {
    legend_item *items = xmalloc((c->n_series + c->n_lines + 1) * sizeof *items);
    size_t n_items = 0, i;
    axis xa, ya;
    double x0 = ML, x1 = CW - MR, y1 = MT, y0 = MT + PLOT_H, h;
    int rows;
    x_axis_range(c, &xa);
    y_axis_range(c, &ya);
    rows = legend_layout(c, items, &n_items, y0 + MB + 4);
    h = y0 + MB + rows * LEG_ROW + 6;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n", CW, h);
    fputs("<text class=\"ct\" x=\"8\" y=\"22\">", f);
    esc(f, c->title);
    fputs("</text>\n", f);
    svg_grid(f, &xa, &ya, x0, x1, y0, y1);
    fprintf(f, "\n<text class=\"at\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (x0 + x1) / 2, y0 + 38);
    esc(f, c->x_title);
    fprintf(f, "</text><text class=\"at\" transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">",
            (y0 + y1) / 2);
    esc(f, c->y_title);
    if (ya.log) fputs(", log scale", f);
    fputs("</text>\n", f);
    for (i = 0; i < c->n_lines; i++) {
        double py;
        if (!isfinite(c->lines[i].y) || (ya.log && c->lines[i].y <= 0)) continue;
        py = axis_pos(&ya, c->lines[i].y, y0, y1);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\""
                " stroke-dasharray=\"6 4\"><title>",
                x0, py, x1, py, c->lines[i].color);
        esc(f, c->lines[i].label);
        fputs("</title></line>\n", f);
    }
    if (isfinite(c->mark_x) && c->mark_x >= xa.lo && c->mark_x <= xa.hi) {
        double px = axis_pos(&xa, c->mark_x, x0 + PADX, x1 - PADX);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#6b7280\" stroke-dasharray=\"2 3\"/>"
                "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                px, y0, px, y1, px - 4, y0 - 6);
        esc(f, c->mark_label);
        fputs("</text>\n", f);
    }
    for (i = 0; i < c->n_series; i++)
        svg_series(f, c, &c->series[i], &xa, &ya, x0, x1, y0, y1);
    for (i = 0; i < n_items; i++) {
        const legend_item *it = &items[i];
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>", it->x,
                it->y - 4, it->x + 24, it->y - 4, it->color, it->dashed ? " stroke-dasharray=\"6 4\"" : "");
        if (!it->dashed)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>", it->x + 12, it->y - 4, it->color);
        fprintf(f, "<text class=\"lg\" x=\"%.1f\" y=\"%.1f\">", it->x + 30, it->y);
        esc(f, it->text);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    free(items);
}
