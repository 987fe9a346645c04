/*
 * svg_chart.h: internal to results/. The inline SVG line charts of the HTML
 * report (svg_chart.c).
 */
#ifndef TB_RESULTS_SVG_CHART_H
#define TB_RESULTS_SVG_CHART_H

#include <stddef.h>
#include <stdio.h>

/*
 * A line chart over tiles: axes with nice ticks, a title, axis titles with
 * units, series with markers whose <title> is the tooltip, dashed horizontal
 * reference lines (active idle, QoS limits) and an optional vertical marker
 * (saturation). Linear y from 0, or log y when the caller allows it and the
 * values span more than LOG_SPREAD (latency next to a limit 400x higher).
 */

/* MARK_NOT_PCT: a latency "percentile" of fewer ops than it needs (the
 * slowest op's, not a percentile): a hollow grey marker. */
enum { MARK_OK = 0, MARK_FAIL = 1, MARK_INVALID = 2, MARK_NOT_PCT = 4 };

/* A series whose colour an earlier series of the chart has already is drawn
 * with a dash pattern of its own (tb_svg_chart), so no two look alike. */
typedef struct chart_series {
    const char *name; /* legend text */
    const char *color;
    size_t n;
    const double *x, *y;     /* y NaN: no point (the line breaks) */
    const int *mark;         /* MARK_* bits per point; NULL: all MARK_OK */
    const char *const *note; /* tooltip suffix per point, or NULL */
} chart_series;

typedef struct chart_line {
    double y;
    const char *label; /* legend text */
    const char *color;
} chart_line;

typedef struct chart {
    const char *title;
    const char *x_title, *y_title; /* axis titles, units included */
    const char *y_unit;            /* unit in tooltips and value labels */
    int y_dec;                     /* decimals in tooltips and value labels */
    int log_ok;                    /* may use a log y axis */
    double mark_x;                 /* vertical marker at this x, NaN for none */
    const char *mark_label;
    const chart_series *series;
    size_t n_series;
    const chart_line *lines;
    size_t n_lines;
} chart;

/* The i-th colour of the series palette (12 distinct colours; they repeat
 * from i = 12, and tb_svg_chart then gives a repeated colour a dash pattern
 * of its own, so no two series of one chart look alike). */
const char *tb_svg_color(size_t i);
/* A "nice" axis step (1, 2, 2.5 or 5 x 10^k) giving about `target` intervals. */
double tb_svg_nice_step(double range, int target);
/* A tick label with as many decimals as step needs. */
void tb_svg_fmt_tick(char *buf, size_t len, double v, double step);
/* Writes text (escaped) at (x, y) in class cls, wrapped on spaces into lines
 * of at most max_w user units (estimated at char_w per character), each
 * line a <tspan> line_h below the last; returns the lines used. */
int tb_svg_text_wrapped(FILE *f, const char *cls, double x, double y, const char *text, double max_w, double char_w,
                        double line_h);
/* The lines tb_svg_text_wrapped would use. */
int tb_svg_text_lines(const char *text, double max_w, double char_w);

/* Writes chart c as one <svg> element; every text goes through the HTML escaper. */
void tb_svg_chart(FILE *f, const chart *c);
/* Whether s has a point to draw (a finite y). */
int tb_svg_series_has_points(const chart_series *s);

#endif
