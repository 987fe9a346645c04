/*
 * report_html_power.c: the power over time chart of the HTML report (issue
 * 23): every stored power sample against the time since the run's first
 * stage, one line per meter and their sum when there are several, the
 * stages shaded and labelled with their load level, bad samples marked with
 * their reason and seconds without a sample shown as gaps. The labels of
 * the levels and phases sit in a band above the plot, where no line runs,
 * and the power axis leaves headroom above the highest sample. The chart is
 * 720 units wide, near the width it is shown at (a page 800 px wide shows
 * its 11-unit text at 11 px, as the other charts at their width). A long run is
 * thinned for drawing: per pixel column, each unbroken stretch of a line
 * keeps its lowest and its highest sample, so a one-second glitch stays
 * visible; the caption says how many samples became how many points.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/html.h"
#include "powermeter/meter.h"
#include "results/report_fmt.h"
#include "results/report_html_page.h"
#include "results/svg_chart.h"

#define esc      tb_html_escape_file
#define S        tb_fmt_str

#define PW       720.0 /* SVG width */
#define PML      70.0
#define PMR      20.0
#define LEVEL_Y  44.0 /* baseline of the level labels, under the title */
#define BAND_TOP 49.0 /* the band of the phase labels */
#define BAND_HT  16.0
#define PLOT_TOP 68.0 /* under the title and the label band */
#define PLOT_HT  240.0
#define HEADROOM 0.1     /* at least this part of the power axis above the highest sample */
#define GAP_US   1500000 /* two samples further apart than this: a second without one */
#define LEG_CH   7.0     /* estimated legend character width (11 px) */

/* One drawn series: its points in time order, a new stretch where brk is set. */
typedef struct pline {
    char name[160];
    const char *color;
    size_t n, cap;
    double *t, *w; /* s since t0, W */
    unsigned char *brk;
    size_t drawn; /* points after thinning */
} pline;

typedef struct pchart {
    const tb_model_run *r;
    int64_t t0;
    double span_s, wmax, wstep; /* wmax: the top of the power axis, wstep its tick step */
    double x0, x1, y0, y1;      /* plot area: y0 the bottom */
    size_t n_lines;
    pline *lines; /* meters, then the sum */
} pchart;

static double px_of(const pchart *c, double t) { return c->x0 + (c->x1 - c->x0) * t / c->span_s; }
static double py_of(const pchart *c, double w) { return c->y0 - (c->y0 - c->y1) * w / c->wmax; }

static void pline_add(pline *l, double t, double w, int brk) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->t = xrealloc(l->t, l->cap * sizeof *l->t);
        l->w = xrealloc(l->w, l->cap * sizeof *l->w);
        l->brk = xrealloc(l->brk, l->cap);
    }
    l->t[l->n] = t;
    l->w[l->n] = w;
    l->brk[l->n++] = (unsigned char)brk;
}

static int sample_good(const tb_model_sample *x) { return !(x->flags & TB_SAMPLE_BAD) && isfinite(x->watts); }

/* The run's time span: its first stage or sample to its last. */
static void time_span(pchart *c) {
    const tb_model_run *r = c->r;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < r->n_stages; i++) {
        if (r->stages[i].start_mono_us < lo) lo = r->stages[i].start_mono_us;
        if (r->stages[i].end_mono_us > hi) hi = r->stages[i].end_mono_us;
    }
    for (size_t i = 0; i < r->n_samples; i++) {
        if (r->samples[i].mono_us < lo) lo = r->samples[i].mono_us;
        if (r->samples[i].mono_us + 1000000 > hi) hi = r->samples[i].mono_us + 1000000;
    }
    c->t0 = lo;
    c->span_s = hi > lo ? (double)(hi - lo) / 1e6 : 1;
}

/* Meter m's line: its good samples, a break after a bad one or a gap. */
static void meter_line(pchart *c, int m, pline *l) {
    const tb_model_run *r = c->r;
    int64_t last = INT64_MIN;
    int brk = 1;
    for (size_t i = 0; i < r->n_samples; i++) {
        const tb_model_sample *x = &r->samples[i];
        if (x->meter != m) continue;
        if (!sample_good(x)) {
            brk = 1;
            continue;
        }
        if (last != INT64_MIN && x->mono_us - last > GAP_US) brk = 1;
        pline_add(l, (double)(x->mono_us - c->t0) / 1e6, x->watts, brk);
        c->wmax = fmax(c->wmax, x->watts);
        last = x->mono_us;
        brk = 0;
    }
}

/* The sum over meters, at meter 0's samples: each other meter's nearest
 * sample within half a second; no point when one is bad or absent. */
static void sum_line(pchart *c, int n_meters, pline *l) {
    const tb_model_run *r = c->r;
    int64_t last = INT64_MIN;
    int brk = 1;
    for (size_t i = 0; i < r->n_samples; i++) {
        const tb_model_sample *x = &r->samples[i];
        double sum = 0;
        int ok = 1;
        if (x->meter != 0) continue;
        for (int m = 0; m < n_meters && ok; m++) {
            const tb_model_sample *best = NULL;
            /* samples are ordered by time: look around i */
            for (size_t k = i; k < r->n_samples && r->samples[k].mono_us <= x->mono_us + 500000; k++)
                if (r->samples[k].meter == m &&
                    (!best || llabs(r->samples[k].mono_us - x->mono_us) < llabs(best->mono_us - x->mono_us)))
                    best = &r->samples[k];
            for (size_t k = i; k-- > 0 && r->samples[k].mono_us >= x->mono_us - 500000;)
                if (r->samples[k].meter == m &&
                    (!best || llabs(r->samples[k].mono_us - x->mono_us) < llabs(best->mono_us - x->mono_us)))
                    best = &r->samples[k];
            ok = best && sample_good(best);
            if (ok) sum += best->watts;
        }
        if (!ok) {
            brk = 1;
            continue;
        }
        if (last != INT64_MIN && x->mono_us - last > GAP_US) brk = 1;
        pline_add(l, (double)(x->mono_us - c->t0) / 1e6, sum, brk);
        c->wmax = fmax(c->wmax, sum);
        last = x->mono_us;
        brk = 0;
    }
}

/* Writes l's path; thinned (per pixel column and stretch: its lowest and
 * highest point, in time order) when it has more than two points per column. */
static void draw_line(FILE *f, const pchart *c, pline *l, const char *dash) {
    int thin = (double)l->n > 2.0 * (c->x1 - c->x0);
    size_t i = 0;
    fprintf(f, "<path class=\"pw\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"", l->color);
    if (dash) fprintf(f, " stroke-dasharray=\"%s\"", dash);
    fputs(" d=\"", f);
    l->drawn = 0;
    while (i < l->n) {
        size_t j = i, lo = i, hi = i;
        long col = (long)floor(px_of(c, l->t[i]));
        int brk = l->brk[i];
        if (thin) {
            while (j + 1 < l->n && !l->brk[j + 1] && (long)floor(px_of(c, l->t[j + 1])) == col) {
                j++;
                if (l->w[j] < l->w[lo]) lo = j;
                if (l->w[j] > l->w[hi]) hi = j;
            }
        }
        {
            size_t a = lo < hi ? lo : hi, b = lo < hi ? hi : lo;
            fprintf(f, "%s%.1f %.1f ", brk ? "M" : "L", px_of(c, l->t[a]), py_of(c, l->w[a]));
            l->drawn++;
            if (b != a) {
                fprintf(f, "L%.1f %.1f ", px_of(c, l->t[b]), py_of(c, l->w[b]));
                l->drawn++;
            }
        }
        i = j + 1;
    }
    fprintf(f, "\" data-points=\"%zu\" data-samples=\"%zu\"><title>", l->drawn, l->n);
    esc(f, l->name);
    fputs("</title></path>\n", f);
    /* a sample alone between gaps or bad ones draws no segment: a dot shows it */
    for (i = 0; i < l->n; i++)
        if (l->brk[i] && (i + 1 == l->n || l->brk[i + 1]))
            fprintf(f, "<circle class=\"pw1\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>", px_of(c, l->t[i]),
                    py_of(c, l->w[i]), l->color);
}

static const char *stage_fill(const char *stage, int64_t phase) {
    if (strcmp(stage, "idle") == 0) return "#e5e7eb";
    if (strcmp(stage, "ramp-up") == 0) return "#fef3c7";
    if (strcmp(stage, "warm-up") == 0) return "#ffedd5";
    if (strcmp(stage, "ramp-down") == 0) return "#ede9fe";
    return phase % 2 ? "#dbeafe" : "#d1fae5"; /* steady: phases alternate */
}

/* Whether stages a and b belong to the same load level. */
static int same_level(const tb_model_stage *a, const tb_model_stage *b) {
    return strcmp(a->stage, "idle") != 0 && strcmp(b->stage, "idle") != 0 && a->tiles == b->tiles &&
           a->repeat == b->repeat && strcmp(S(a->alone), S(b->alone)) == 0;
}

/* A label centred over [xa, xb] when it fits: text, else short, else none. */
static void band_label(FILE *f, double xa, double xb, double y, const char *text, const char *shrt) {
    double w = xb - xa;
    const char *t = (double)strlen(text) * 6.6 + 4 <= w ? text : (double)strlen(shrt) * 6.6 + 4 <= w ? shrt : NULL;
    if (!t) return;
    fprintf(f, "<text class=\"tk sl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (xa + xb) / 2, y);
    esc(f, t);
    fputs("</text>", f);
}

static void draw_stages(FILE *f, const pchart *c) {
    const tb_model_run *r = c->r;
    for (size_t i = 0; i < r->n_stages; i++) {
        const tb_model_stage *g = &r->stages[i];
        double xa = px_of(c, (double)(g->start_mono_us - c->t0) / 1e6);
        double xb = px_of(c, (double)(g->end_mono_us - c->t0) / 1e6);
        fprintf(f, "<rect class=\"stage\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>", xa,
                c->y1, fmax(xb - xa, 0.5), c->y0 - c->y1, stage_fill(g->stage, g->phase));
        if (strcmp(g->stage, "idle") == 0)
            fputs("active idle", f);
        else {
            fprintf(f, "%lld tile%s", (long long)g->tiles, g->tiles == 1 ? "" : "s");
            if (g->alone) {
                fputs(" (", f);
                esc(f, g->alone);
                fputs(" alone)", f);
            }
            fprintf(f, ", %s", g->stage);
            if (g->phase > 0) fprintf(f, " phase %lld", (long long)g->phase);
        }
        fprintf(f, ": %.1f to %.1f s</title></rect>\n", (double)(g->start_mono_us - c->t0) / 1e6,
                (double)(g->end_mono_us - c->t0) / 1e6);
        /* the stage's colour in the label band too, its phase written there */
        fprintf(f, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>", xa,
                BAND_TOP, fmax(xb - xa, 0.5), BAND_HT, stage_fill(g->stage, g->phase));
        if (g->phase > 0) {
            char ph[32];
            snprintf(ph, sizeof ph, "p%lld", (long long)g->phase);
            band_label(f, xa, xb, BAND_TOP + BAND_HT - 4, ph, ph);
        }
    }
    /* one label per load level over its stages, and one for active idle */
    for (size_t i = 0; i < r->n_stages;) {
        const tb_model_stage *g = &r->stages[i];
        size_t j = i + 1;
        char text[96], shrt[32];
        while (j < r->n_stages && same_level(g, &r->stages[j]))
            j++;
        if (strcmp(g->stage, "idle") == 0) {
            snprintf(text, sizeof text, "active idle");
            snprintf(shrt, sizeof shrt, "idle");
        } else {
            snprintf(text, sizeof text, "%lld tile%s%s%s%s", (long long)g->tiles, g->tiles == 1 ? "" : "s",
                     g->alone ? " (" : "", g->alone ? g->alone : "", g->alone ? " alone)" : "");
            snprintf(shrt, sizeof shrt, "%lld", (long long)g->tiles);
        }
        band_label(f, px_of(c, (double)(g->start_mono_us - c->t0) / 1e6),
                   px_of(c, (double)(r->stages[j - 1].end_mono_us - c->t0) / 1e6), LEVEL_Y, text, shrt);
        i = j;
    }
}

/* Bad samples (a red cross, its reason in the tooltip; one per pixel column
 * and meter) and seconds without a sample inside one stored window (a red
 * bar on the time axis). Returns the crosses and bars drawn in *n_bad, *n_gap. */
static void draw_marks(FILE *f, const pchart *c, int n_meters, size_t *n_bad, size_t *n_gap) {
    const tb_model_run *r = c->r;
    *n_bad = *n_gap = 0;
    for (int m = 0; m < n_meters; m++) {
        const tb_model_sample *prev = NULL;
        long last_col = -1;
        for (size_t i = 0; i < r->n_samples; i++) {
            const tb_model_sample *x = &r->samples[i];
            double t = (double)(x->mono_us - c->t0) / 1e6, px = px_of(c, t);
            if (x->meter != m) continue;
            if (prev && prev->level_id == x->level_id && prev->stage == x->stage &&
                x->mono_us - prev->mono_us > GAP_US) {
                double xa = px_of(c, (double)(prev->mono_us - c->t0) / 1e6 + 1);
                fprintf(f,
                        "<rect class=\"gap\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"6\" fill=\"#dc2626\">"
                        "<title>meter %d: no sample for %.1f s</title></rect>\n",
                        xa, c->y0 - 6, fmax(px - xa, 1.5), m, (double)(x->mono_us - prev->mono_us) / 1e6 - 1);
                ++*n_gap;
            }
            prev = x;
            if (sample_good(x) || (long)floor(px) == last_col) continue;
            {
                double w = isfinite(x->watts) && x->watts >= 0 ? fmin(x->watts, c->wmax) : 0, py = py_of(c, w);
                last_col = (long)floor(px);
                fprintf(f,
                        "<path class=\"bad\" d=\"M%.1f %.1fl6 6m0 -6l-6 6\" stroke=\"#dc2626\" stroke-width=\"2\">"
                        "<title>meter %d at %.1f s: ",
                        px - 3, py - 3, m, t);
                esc(f, x->reason ? x->reason : (x->flags & TB_SAMPLE_MISSING) ? "missing" : "invalid");
                if (isfinite(x->watts)) fprintf(f, " (reading %.1f W)", x->watts);
                fputs("</title></path>\n", f);
                ++*n_bad;
            }
        }
    }
}

static void draw_axes(FILE *f, const pchart *c) {
    char buf[32];
    double ys = c->wstep, xs = tb_svg_nice_step(c->span_s, 10);
    for (int i = 0; i <= 40 && i * ys <= c->wmax + ys * 1e-9; i++) {
        double py = py_of(c, i * ys);
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", c->x0, py, c->x1, py);
        tb_svg_fmt_tick(buf, sizeof buf, i * ys, ys);
        fprintf(f, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", c->x0 - 6, py + 4, buf);
    }
    for (int i = 0; i <= 40 && i * xs <= c->span_s + xs * 1e-9; i++) {
        double px = px_of(c, i * xs);
        fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", px, c->y0, px, c->y0 + 5);
        tb_svg_fmt_tick(buf, sizeof buf, i * xs, xs);
        fprintf(f, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", px, c->y0 + 18, buf);
    }
    fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", c->x0, c->y0, c->x1, c->y0);
    fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", c->x0, c->y0, c->x0, c->y1);
    fprintf(f,
            "<text class=\"at\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time since the run's first stage (s)"
            "</text><text class=\"at\" transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">power "
            "(W)</text>\n",
            (c->x0 + c->x1) / 2, c->y0 + 38, (c->y0 + c->y1) / 2);
}

/* One legend entry at (x, y): its symbol, then its text wrapped to tw; returns the lines used. */
static int legend_item(FILE *f, int type, const char *color, const char *text, double x, double y, double tw) {
    if (type == 0)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>", x, y - 4,
                x + 24, y - 4, color);
    else if (type == 1)
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"24\" height=\"10\" fill=\"%s\" stroke=\"#9aa5b1\"/>", x, y - 9,
                color);
    else if (type == 2)
        fprintf(f, "<path d=\"M%.1f %.1fl6 6m0 -6l-6 6\" stroke=\"#dc2626\" stroke-width=\"2\"/>", x + 9, y - 7);
    else
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"24\" height=\"6\" fill=\"#dc2626\"/>", x, y - 7);
    return tb_svg_text_wrapped(f, "lg", x + 30, y, text, tw, LEG_CH, 15);
}

/* The legend: lines, stage kinds, marks; flowed in rows within the width.
 * Returns its height; f NULL: only that. */
static double draw_legend(FILE *f, const pchart *c, double top, int n_bad, int n_gap) {
    static const char *const kinds[] = {"idle", "ramp-up", "warm-up", "steady", "ramp-down"};
    const char *texts[32], *colors[32];
    int type[32]; /* 0 line, 1 swatch, 2 cross, 3 bar */
    size_t n = 0;
    double x = 8, y = top, right = PW - 8, row_h = 0;
    for (size_t i = 0; i < c->n_lines && n < 20; i++, n++)
        texts[n] = c->lines[i].name, colors[n] = c->lines[i].color, type[n] = 0;
    for (size_t k = 0; k < 5; k++) {
        int seen = 0;
        for (size_t i = 0; i < c->r->n_stages && !seen; i++)
            seen = strcmp(c->r->stages[i].stage, kinds[k]) == 0;
        if (!seen) continue;
        texts[n] = kinds[k], colors[n] = stage_fill(kinds[k], 1), type[n++] = 1;
    }
    if (n_bad) texts[n] = "bad sample (hover: reason)", colors[n] = "#dc2626", type[n++] = 2;
    if (n_gap) texts[n] = "seconds without a sample", colors[n] = "#dc2626", type[n++] = 3;
    for (size_t i = 0; i < n; i++) {
        double want = LEG_CH * (double)strlen(texts[i]) + 2, tw;
        int lines;
        if (x > 8 && x + 30 + want > right) {
            x = 8;
            y += row_h + 4;
            row_h = 0;
        }
        tw = fmin(want, right - x - 30);
        lines = f ? legend_item(f, type[i], colors[i], texts[i], x, y, tw) : tb_svg_text_lines(texts[i], tw, LEG_CH);
        if (lines * 15.0 > row_h) row_h = lines * 15.0;
        x += 30 + tw + 14;
    }
    if (f) fputc('\n', f);
    return y - top + row_h;
}

static void lines_free(pchart *c) {
    for (size_t i = 0; i < c->n_lines; i++)
        free(c->lines[i].t), free(c->lines[i].w), free(c->lines[i].brk);
    free(c->lines);
}

/* The caption: what is drawn, and the thinning when there was some. */
static void caption(FILE *f, const pchart *c, size_t n_bad, size_t n_gap) {
    size_t samples = 0, drawn = 0;
    for (size_t i = 0; i < c->n_lines; i++)
        samples += c->lines[i].n, drawn += c->lines[i].drawn;
    fprintf(f,
            "<figcaption>Every stored 1 Hz power sample (active idle, and each load level's ramp-up, warm-up, "
            "steady-state phases and ramp-down; the time between stages is not measured, and runs stored before "
            "schema 13 kept only active idle and steady state). Bands: the stages, "
            "labelled with their load level; p1, p2: the phases. %zu bad sample%s marked with a red cross (hover "
            "for the meter's reason), %zu gap%s of a second or more without a sample shown in red on the time axis "
            "and as a break in the line. ",
            n_bad, n_bad == 1 ? "" : "s", n_gap, n_gap == 1 ? "" : "s");
    if (drawn < samples)
        fprintf(f,
                "<b class=\"thin\" data-samples=\"%zu\" data-points=\"%zu\">Thinned for drawing: %zu good samples "
                "drawn as %zu points</b> (in each pixel column, each unbroken stretch of a line keeps its lowest and "
                "its highest sample, so a short spike or dip stays visible).",
                samples, drawn, samples, drawn);
    else
        fprintf(f, "All %zu good samples drawn, one point each.", samples);
    fputs("</figcaption>", f);
}

/* The top of the power axis: a whole number of steps, HEADROOM of it at
 * least above the highest sample, so the line never runs along the frame. */
static void power_axis(pchart *c) {
    double top = c->wmax > 0 ? c->wmax : 1, step = tb_svg_nice_step(top, 5);
    c->wmax = ceil(top / step) * step;
    if (c->wmax - top < HEADROOM * c->wmax) c->wmax += step;
    c->wstep = step;
}

void rh_power_chart(page *p) {
    FILE *f = p->f;
    const tb_model_run *r = p->run;
    int n_meters = (int)r->n_meters;
    size_t n_bad, n_gap;
    double h, leg_top;
    pchart c;
    memset(&c, 0, sizeof c);
    c.r = r;
    fputs("<h3 id=\"power-time\">Power over time</h3>\n", f);
    if (r->n_samples == 0 && r->n_stages == 0) {
        fputs("<p class=\"note\">No power sample stored.</p>\n", f);
        return;
    }
    for (size_t i = 0; i < r->n_samples; i++)
        if (r->samples[i].meter + 1 > n_meters) n_meters = r->samples[i].meter + 1;
    time_span(&c);
    c.n_lines = (size_t)n_meters + (n_meters > 1);
    c.lines = xcalloc(c.n_lines ? c.n_lines : 1, sizeof *c.lines);
    for (int m = 0; m < n_meters; m++) {
        const tb_model_meter *mt = m < (int)r->n_meters ? &r->meters[m] : NULL;
        snprintf(c.lines[m].name, sizeof c.lines[m].name, "meter %d%s%s", m, mt && mt->model ? ": " : "",
                 mt && mt->model ? mt->model : "");
        c.lines[m].color = tb_svg_color((size_t)m);
        meter_line(&c, m, &c.lines[m]);
    }
    if (n_meters > 1) {
        pline *s = &c.lines[n_meters];
        snprintf(s->name, sizeof s->name, "sum of the %d meters", n_meters);
        s->color = "#111827";
        sum_line(&c, n_meters, s);
    }
    power_axis(&c);
    c.x0 = PML;
    c.x1 = PW - PMR;
    c.y1 = PLOT_TOP;
    c.y0 = PLOT_TOP + PLOT_HT;
    leg_top = c.y0 + 62;
    h = leg_top + draw_legend(NULL, &c, leg_top, 1, 1) + 8; /* the viewBox holds the legend */
    fprintf(f,
            "<figure class=\"wide\"><svg id=\"power-chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f "
            "%.0f\" role=\"img\">\n",
            PW, h);
    fputs("<text class=\"ct\" x=\"8\" y=\"22\">", f);
    esc(f, r->estimated_power ? "Power over time (ESTIMATED power)" : "Power over time");
    fputs("</text>\n", f);
    draw_stages(f, &c);
    draw_axes(f, &c);
    for (size_t i = 0; i < c.n_lines; i++)
        draw_line(f, &c, &c.lines[i], NULL);
    draw_marks(f, &c, n_meters, &n_bad, &n_gap);
    draw_legend(f, &c, leg_top, n_bad > 0, n_gap > 0);
    fputs("</svg>", f);
    caption(f, &c, n_bad, n_gap);
    fputs("</figure>\n", f);
    lines_free(&c);
}
