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
#define LEG_ROW    15.0 /* a legend line */
#define LEG_GAP    4.0  /* between legend rows */
#define LEG_CHAR   7.0  /* estimated width of a legend character (11 px), generous so text is not cut */
#define LOG_SPREAD 50.0
#define MAX_TICKS  40 /* bounds the tick loops whatever the data */

/* Twelve colours a reader tells apart (Tableau 10 order of hues, darkened
 * for contrast on white, plus two), then dash patterns for repeats. */
static const char *const palette[] = {"#2563eb", "#d97706", "#059669", "#dc2626", "#7c3aed", "#0891b2",
                                      "#db2777", "#65a30d", "#92400e", "#475569", "#ca8a04", "#1e3a8a"};
#define N_PALETTE (sizeof palette / sizeof palette[0])
/* none is "6 4" (the reference lines') or "2 3" (the saturation marker's) */
static const char *const dashes[] = {"10 3", "3 3", "10 3 2 3", "1 3"};
#define N_DASHES (sizeof dashes / sizeof dashes[0])

const char *tb_svg_color(size_t i) { return palette[i % N_PALETTE]; }

typedef struct axis {
    double lo, hi, step;
    int log;
} axis;

/* A "nice" step (1, 2, 2.5 or 5 x 10^k) giving about `target` intervals. */
double tb_svg_nice_step(double range, int target) {
    double raw = range / target, mag, r, step;
    if (!(raw > 0) || !isfinite(raw)) return 1;
    mag = pow(10, floor(log10(raw)));
    r = raw / mag;
    step = mag * (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10);
    return step > 0 && isfinite(step) ? step : range; /* denormal ranges */
}

/* Tick label: as many decimals as the step needs. */
void tb_svg_fmt_tick(char *buf, size_t len, double v, double step) {
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
    a->step = tb_svg_nice_step(vmax - a->lo, 5);
    a->lo = floor(a->lo / a->step) * a->step;
    a->hi = ceil(vmax / a->step) * a->step;
    /* room above the highest point for its value label, clear of the title */
    if (c->n_series == 1 && a->hi - vmax < 0.1 * (a->hi - a->lo)) a->hi += a->step;
}

static void x_axis_range(const chart *c, axis *a) {
    double vmax = 1;
    size_t i, j;
    for (i = 0; i < c->n_series; i++)
        for (j = 0; j < c->series[i].n; j++)
            if (isfinite(c->series[i].x[j])) vmax = fmax(vmax, c->series[i].x[j]);
    a->log = 0;
    a->lo = 0;
    a->step = fmax(1, ceil(tb_svg_nice_step(vmax, 8))); /* tiles are whole */
    a->hi = ceil(vmax / a->step) * a->step;
}

/* Legend entries: series with at least one point, reference lines, then
 * the saturation marker. */
typedef struct legend_item {
    const char *text, *color, *dash; /* dash NULL: solid */
    int marker;                      /* a series: a dot on its line */
    double x, y;                     /* y: the first line's baseline */
    double text_w;                   /* the width its text may use */
} legend_item;

int tb_svg_series_has_points(const chart_series *s) {
    size_t i;
    for (i = 0; i < s->n; i++)
        if (isfinite(s->y[i])) return 1;
    return 0;
}

/* The next line of text for at most max_chars code points: *len bytes to
 * show, *skip bytes to step over (the line and the space after it). */
static void wrap_next(const char *t, size_t max_chars, size_t *len, size_t *skip) {
    size_t i = 0, chars = 0, last_space = 0;
    int space_seen = 0;
    if (max_chars < 1) max_chars = 1;
    for (; t[i]; i++) {
        if (((unsigned char)t[i] & 0xC0) == 0x80) continue; /* a UTF-8 continuation byte */
        if (chars == max_chars) break;
        if (t[i] == ' ') last_space = i, space_seen = 1;
        chars++;
    }
    if (!t[i]) {
        *len = *skip = i;
        return;
    }
    if (t[i] == ' ') {
        *len = i;
        *skip = i + 1;
    } else if (space_seen && last_space > 0) {
        *len = last_space;
        *skip = last_space + 1;
    } else {
        *len = *skip = i; /* one word longer than the line: cut it */
    }
}

/* Code points in t. */
static size_t utf8_chars(const char *t) {
    size_t n = 0;
    for (; t && *t; t++)
        n += ((unsigned char)*t & 0xC0) != 0x80;
    return n;
}

static size_t max_chars_for(double max_w, double char_w) {
    double n = floor(max_w / (char_w > 0 ? char_w : 1));
    return n >= 1 ? (size_t)n : 1;
}

int tb_svg_text_lines(const char *text, double max_w, double char_w) {
    size_t mc = max_chars_for(max_w, char_w), len, skip;
    int lines = 0;
    const char *t = text ? text : "";
    do {
        wrap_next(t, mc, &len, &skip);
        t += skip;
        lines++;
    } while (*t && lines < 64);
    return lines;
}

int tb_svg_text_wrapped(FILE *f, const char *cls, double x, double y, const char *text, double max_w, double char_w,
                        double line_h) {
    size_t mc = max_chars_for(max_w, char_w), len, skip;
    int lines = 0;
    const char *t = text ? text : "";
    fprintf(f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\">", cls, x, y);
    do {
        char *part;
        wrap_next(t, mc, &len, &skip);
        part = xmalloc(len + 1);
        memcpy(part, t, len);
        part[len] = 0;
        fprintf(f, "<tspan x=\"%.1f\" dy=\"%.1f\">", x, lines ? line_h : 0.0);
        esc(f, part);
        fputs("</tspan>", f);
        free(part);
        t += skip;
        lines++;
    } while (*t && lines < 64);
    fputs("</text>", f);
    return lines;
}

#define LEG_X0 8.0 /* the legend's left edge */

/* Lays the legend out in rows under the x-axis title, wrapping a long text
 * onto lines of its own within the chart's width; returns its height. */
static double legend_layout(const chart *c, const char **dash, char *sat_text, legend_item *items, size_t *n_items,
                            double top) {
    double x = LEG_X0, y = top, row_lines = 0, right = CW - LEG_X0;
    size_t i, n = 0, total = c->n_series + c->n_lines + (sat_text ? 1 : 0);
    for (i = 0; i < total; i++) {
        legend_item *it = &items[n];
        double want, w;
        int lines;
        memset(it, 0, sizeof *it);
        if (i < c->n_series) {
            if (!tb_svg_series_has_points(&c->series[i])) continue;
            it->text = c->series[i].name;
            it->color = c->series[i].color;
            it->dash = dash[i];
            it->marker = 1;
        } else if (i < c->n_series + c->n_lines) {
            it->text = c->lines[i - c->n_series].label;
            it->color = c->lines[i - c->n_series].color;
            it->dash = "6 4";
        } else {
            it->text = sat_text;
            it->color = "#6b7280";
            it->dash = "2 3";
        }
        want = LEG_CHAR * (double)utf8_chars(it->text) + 2;
        if (x > LEG_X0 && x + 30 + want > right) { /* a new row */
            x = LEG_X0;
            y += row_lines * LEG_ROW + LEG_GAP;
            row_lines = 0;
        }
        it->text_w = fmin(want, right - x - 30);
        lines = tb_svg_text_lines(it->text, it->text_w, LEG_CHAR);
        w = 30 + it->text_w + 14;
        it->x = x;
        it->y = y;
        x += w;
        if (lines > row_lines) row_lines = lines;
        n++;
    }
    *n_items = n;
    return n ? y - top + row_lines * LEG_ROW : 0;
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
            tb_svg_fmt_tick(buf, sizeof buf, v, v);
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
            tb_svg_fmt_tick(buf, sizeof buf, v, ya->step);
            fprintf(f, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", x0 - 6, py + 4, buf);
        }
    }
    n = (int)lround((xa->hi - xa->lo) / xa->step);
    for (i = 0; i <= n && i <= MAX_TICKS; i++) {
        double px;
        v = xa->lo + i * xa->step;
        px = axis_pos(xa, v, x0 + PADX, x1 - PADX);
        fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", px, y0, px, y0 + 5);
        tb_svg_fmt_tick(buf, sizeof buf, v, xa->step);
        fprintf(f, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", px, y0 + 18, buf);
    }
    fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, y0, x1, y0);
    fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, y0, x0, y1);
}

/* The baseline of point i's value label: above the point; with many points
 * every other one below it (when there is room above the axis), so
 * neighbours at one height do not collide. */
static double label_y(const chart_series *s, size_t i, double py, double y0) {
    return s->n > 6 && i % 2 && py + 17 < y0 - 2 ? py + 17 : py - 9;
}

static void marker_line(FILE *f, double px, double ya, double yb, const char *text) {
    fprintf(f,
            "<line class=\"mark\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#6b7280\""
            " stroke-dasharray=\"2 3\"><title>",
            px, ya, px, yb);
    esc(f, text);
    fputs("</title></line>\n", f);
}

/* The vertical marker at px: a dotted line, broken around the value label
 * of the single series' point at that x so it never runs through it. */
static void svg_marker(FILE *f, const chart *c, const axis *ya, double px, double y0, double y1, const char *text) {
    double cut_lo = NAN, cut_hi = NAN;
    if (c->n_series == 1)
        for (size_t i = 0; i < c->series[0].n; i++) {
            const chart_series *s = &c->series[0];
            double ly;
            if (s->x[i] != c->mark_x || !isfinite(s->y[i]) || (ya->log && s->y[i] <= 0)) continue;
            ly = label_y(s, i, axis_pos(ya, s->y[i], y0, y1), y0);
            cut_lo = ly - 12; /* the label's top, with a gap */
            cut_hi = ly + 5;  /* its bottom */
        }
    if (!isfinite(cut_lo)) {
        marker_line(f, px, y0, y1, text);
        return;
    }
    if (y0 - cut_hi >= 1) marker_line(f, px, y0, fmax(cut_hi, y1), text); /* the axis up to the label */
    if (cut_lo - y1 >= 1) marker_line(f, px, fmin(cut_lo, y0), y1, text); /* above the label */
}

/* One series: the line through consecutive points, markers with tooltips,
 * and value labels when the chart has a single series (readable in print).
 * A value label on the saturation marker's x goes to the left of it, so the
 * marker line does not run through it. */
static void svg_series(FILE *f, const chart *c, const chart_series *s, const char *dash, const axis *xa, const axis *ya,
                       double x0, double x1, double y0, double y1) {
    size_t i;
    int pen = 0;
    fprintf(f, "<path class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"", s->color);
    if (dash) fprintf(f, " stroke-dasharray=\"%s\"", dash);
    fputs(" d=\"", f);
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
                py, m == MARK_OK ? s->color : "#fff",
                (m & MARK_FAIL)      ? "#dc2626"
                : (m & MARK_NOT_PCT) ? "#9aa5b1"
                                     : s->color,
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
            fprintf(f, "<text class=\"vl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>", px,
                    label_y(s, i, py, y0), c->y_dec, s->y[i]);
        fputc('\n', f);
    }
}

/* Each series' dash pattern: none, or, when earlier series have the same
 * colour, the next pattern for that colour. */
static void series_dashes(const chart *c, const char **dash) {
    for (size_t i = 0; i < c->n_series; i++) {
        size_t same = 0;
        dash[i] = NULL;
        for (size_t k = 0; k < i; k++)
            same += strcmp(c->series[k].color, c->series[i].color) == 0;
        if (same) dash[i] = dashes[(same - 1) % N_DASHES];
    }
}

static void svg_legend(FILE *f, const legend_item *items, size_t n_items) {
    for (size_t i = 0; i < n_items; i++) {
        const legend_item *it = &items[i];
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"", it->x,
                it->y - 4, it->x + 24, it->y - 4, it->color);
        if (it->dash) fprintf(f, " stroke-dasharray=\"%s\"", it->dash);
        fputs("/>", f);
        if (it->marker)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>", it->x + 12, it->y - 4, it->color);
        tb_svg_text_wrapped(f, "lg", it->x + 30, it->y, it->text, it->text_w, LEG_CHAR, LEG_ROW);
        fputc('\n', f);
    }
}

/* Writes chart c as an inline <svg>. */
void tb_svg_chart(FILE *f, const chart *c) {
    legend_item *items = xmalloc((c->n_series + c->n_lines + 1) * sizeof *items);
    const char **dash = xcalloc(c->n_series + 1, sizeof *dash);
    size_t n_items = 0, i;
    axis xa, ya;
    double x0 = ML, x1 = CW - MR, y1 = MT, y0 = MT + PLOT_H, h;
    char sat_text[96] = "";
    int has_mark;
    x_axis_range(c, &xa);
    y_axis_range(c, &ya);
    series_dashes(c, dash);
    has_mark = isfinite(c->mark_x) && c->mark_x >= xa.lo && c->mark_x <= xa.hi;
    if (has_mark) {
        /* the marker's label sits in the legend, clear of every point's label */
        snprintf(sat_text, sizeof sat_text, "%s: %g tile%s", c->mark_label ? c->mark_label : "marker", c->mark_x,
                 c->mark_x == 1 ? "" : "s");
    }
    h = y0 + MB + 4 + legend_layout(c, dash, has_mark ? sat_text : NULL, items, &n_items, y0 + MB + 4) + 8;
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
    if (has_mark) svg_marker(f, c, &ya, axis_pos(&xa, c->mark_x, x0 + PADX, x1 - PADX), y0, y1, sat_text);
    for (i = 0; i < c->n_series; i++)
        svg_series(f, c, &c->series[i], dash[i], &xa, &ya, x0, x1, y0, y1);
    svg_legend(f, items, n_items);
    fputs("</svg>\n", f);
    free(items);
    free(dash);
}
