/*
 * report_html_meters.c: under the HTML report's meter table, what a lab
 * meter's own papers say: whether SPEC accepts the model, its calibration
 * date, the published accuracy its uncertainty comes from, and the worst and
 * mean uncertainty per load level. Every string is escaped (common/html.h).
 */
#include <math.h>
#include <stdio.h>

#include "common/html.h"
#include "powermeter/accuracy.h"
#include "results/report_fmt.h"
#include "results/report_html_page.h"

static void cell(FILE *f, const char *s) {
    fputs("<td>", f);
    tb_html_escape_file(f, s);
    fputs("</td>", f);
}

static void cell_num(FILE *f, double v, int bad) {
    fprintf(f, "<td class=\"n%s\">", bad ? " fail" : "");
    rh_put_num(f, v, 3);
    fputs("</td>", f);
}

static void meter_papers(FILE *f, const tb_model_run *r) {
    fputs("<div class=\"tw\"><table>\n<tr><th class=\"n\">#</th><th>accepted by SPEC</th><th>calibrated</th>"
          "<th>published accuracy (45-66 Hz)</th></tr>\n",
          f);
    for (size_t i = 0; i < r->n_meters; i++) {
        const tb_model_meter *m = &r->meters[i];
        fprintf(f, "<tr><td class=\"n\">%zu</td>", i);
        cell(f, m->estimated ? "no (an estimate)" : tb_meter_spec_accepted_text(m->spec_accepted));
        cell(f, m->calibrated ? m->calibrated : "not stated");
        cell(f, tb_fmt_str(m->accuracy));
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n<p class=\"note\">Accepted by SPEC: ", f);
    tb_html_escape_file(f, tb_meter_spec_accepted_source());
    fprintf(f,
            ". A lab meter calibrated over %d days ago, or with no calibrated=YYYY-MM-DD in its URI, is a "
            "warning, and makes a compliant run invalid.</p>\n",
            TB_METER_CALIBRATION_MAX_DAYS);
}

static void level_uncertainty(FILE *f, const tb_model_run *r) {
    size_t i;
    for (i = 0; i < r->n_levels && !isfinite(r->levels[i].max_uncertainty_pct); i++)
        ;
    if (i == r->n_levels) return;
    fputs("<div class=\"tw\"><table>\n<tr><th class=\"n\">tiles</th><th class=\"n\">phase</th>"
          "<th class=\"n\">worst uncertainty %</th><th class=\"n\">mean uncertainty %</th></tr>\n",
          f);
    for (i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        fprintf(f, "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td>", (long long)lv->tiles,
                (long long)lv->phase);
        cell_num(f, lv->max_uncertainty_pct, lv->max_uncertainty_pct > 1.0);
        cell_num(f, lv->mean_uncertainty_pct, 0);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n<p class=\"note\">Uncertainty of W as the meters state it over each level's samples "
          "(PTDaemon's, or a Yokogawa's published accuracy at its ranges); above 1% the level is invalid.</p>\n",
          f);
}

/* The ranging pass: the fixed ranges each level measured on. */
static void level_ranging(FILE *f, const tb_model_run *r) {
    if (!r->n_ranging) return;
    fputs("<div class=\"tw\"><table>\n<tr><th class=\"n\">tiles</th><th class=\"n\">repeat</th>"
          "<th class=\"n\">meter</th><th class=\"n\">peak V</th><th class=\"n\">peak A</th>"
          "<th class=\"n\">range V</th><th class=\"n\">range A</th><th>alone</th></tr>\n",
          f);
    for (size_t i = 0; i < r->n_ranging; i++) {
        const tb_model_ranging *g = &r->ranging[i];
        fprintf(f, "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>",
                (long long)g->tiles, (long long)g->repeat, (long long)g->meter);
        cell_num(f, g->peak_v, 0);
        cell_num(f, g->peak_a, 0);
        cell_num(f, g->volt_range_v, 0);
        cell_num(f, g->amp_range_a, 0);
        cell(f, g->alone ? g->alone : "");
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n<p class=\"note\">Ranging pass: each level's peak RMS V and A while the meters "
          "auto-ranged at the start of warm-up (without one, at the end of ramp-up), and the smallest fixed ranges "
          "holding them with 25% headroom, "
          "on which its phases were measured.</p>\n",
          f);
}

/* The meters read as several channels: a row per channel and level. */
static void meter_channels(FILE *f, const tb_model_run *r) {
    int any = 0;
    for (size_t i = 0; i < r->n_meters; i++) {
        const tb_model_meter *m = &r->meters[i];
        for (size_t j = 0; j < m->n_channels; j++) {
            const tb_model_channel *c = &m->channels_by_level[j];
            if (!any++)
                fputs("<div class=\"tw\"><table>\n<tr><th class=\"n\">meter</th><th class=\"n\">channel</th>"
                      "<th class=\"n\">tiles</th><th class=\"n\">mean W</th><th class=\"n\">samples</th>"
                      "<th class=\"n\">bad</th></tr>\n",
                      f);
            fprintf(f, "<tr><td class=\"n\">%zu</td><td class=\"n\">%d</td><td class=\"n\">", i, c->channel);
            for (size_t k = 0; k < r->n_levels; k++)
                if (r->levels[k].id == c->level_id) fprintf(f, "%lld", (long long)r->levels[k].tiles);
            fputs("</td>", f);
            cell_num(f, c->mean_watts, 0);
            fprintf(f, "<td class=\"n\">%lld</td><td class=\"n%s\">%lld</td></tr>\n", (long long)c->samples,
                    c->bad_samples ? " fail" : "", (long long)c->bad_samples);
        }
    }
    if (any)
        fputs("</table></div>\n<p class=\"note\">Each channel of a meter read as several; the meter's W is their sum, "
              "and a sample with a bad channel is bad.</p>\n",
              f);
}

void rh_meter_papers(page *p) {
    if (p->run->n_meters == 0) return;
    meter_papers(p->f, p->run);
    meter_channels(p->f, p->run);
    level_uncertainty(p->f, p->run);
    level_ranging(p->f, p->run);
}
