/*
 * report_temp.c: the inlet temperature in the JSON, text and HTML reports
 * (report_temp.h). A level whose minimum is under 20 degrees C is marked: a
 * compliant run's level is invalid for it (its invalid_reason says so), any
 * other run warned.
 */
#include <math.h>
#include <stdio.h>

#include "common/html.h"
#include "results/report_html_page.h"
#include "results/report_temp.h"

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *tb_report_json_temp(const tb_model_temp *t) {
    json_t *o = json_object();
    json_object_set_new(o, "measured", json_boolean(t->measured));
    if (!t->measured) return o;
    json_object_set_new(o, "samples", json_integer((json_int_t)t->samples));
    json_object_set_new(o, "min_c", jnum(t->min_c));
    json_object_set_new(o, "mean_c", jnum(t->mean_c));
    json_object_set_new(o, "max_c", jnum(t->max_c));
    return o;
}

static const char *c1(double v, char *buf, size_t len) {
    if (!isfinite(v)) return "-";
    snprintf(buf, len, "%.1f", v);
    return buf;
}

static int cold(const tb_model_temp *t) { return t->measured && t->min_c < TB_REPORT_MIN_INLET_C; }

static void text_row(FILE *f, const char *what, const tb_model_temp *t) {
    char a[32], b[32], c[32];
    fprintf(f, "  %-14s %7lld %7s %7s %7s%s\n", what, (long long)t->samples, c1(t->min_c, a, sizeof a),
            c1(t->mean_c, b, sizeof b), c1(t->max_c, c, sizeof c), cold(t) ? "  UNDER 20 C" : "");
}

void tb_report_text_temp(FILE *f, const tb_model_run *r) {
    char what[32];
    if (!r->temp_measured) {
        fputs("\nInlet temperature: not measured (no --temperature source)\n", f);
        return;
    }
    fputs("\nInlet temperature (degrees C; SPECpower's minimum is 20 C)\n", f);
    fprintf(f, "  %-14s %7s %7s %7s %7s\n", "level", "samples", "min", "mean", "max");
    if (r->idle_inlet.measured) text_row(f, "active idle", &r->idle_inlet);
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        snprintf(what, sizeof what, "%lld tiles p%lld", (long long)lv->tiles, (long long)lv->phase);
        text_row(f, what, &lv->inlet);
    }
}

static void html_row(FILE *f, const char *what, const tb_model_temp *t) {
    const double v[3] = {t->min_c, t->mean_c, t->max_c};
    fputs("<tr><td>", f);
    tb_html_escape_file(f, what);
    fprintf(f, "</td><td class=\"n\">%lld</td>", (long long)t->samples);
    for (int k = 0; k < 3; k++) {
        fprintf(f, "<td class=\"n%s\">", k == 0 && cold(t) ? " fail" : "");
        rh_put_num(f, v[k], 1);
        fputs("</td>", f);
    }
    fputs("</tr>\n", f);
}

void tb_report_html_temp(FILE *f, const tb_model_run *r) {
    char what[48];
    fputs("<h2 id=\"temperature\">Inlet temperature</h2>\n", f);
    if (!r->temp_measured) {
        fputs("<p class=\"note\">Not measured: the run named no temperature source (--temperature).</p>\n", f);
        return;
    }
    fputs("<div class=\"tw\"><table>\n<tr><th>level</th><th class=\"n\">samples</th><th class=\"n\">min &deg;C</th>"
          "<th class=\"n\">mean &deg;C</th><th class=\"n\">max &deg;C</th></tr>\n",
          f);
    if (r->idle_inlet.measured) html_row(f, "active idle", &r->idle_inlet);
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        snprintf(what, sizeof what, "%lld tiles, phase %lld", (long long)lv->tiles, (long long)lv->phase);
        html_row(f, what, &lv->inlet);
    }
    fputs("</table></div>\n<p class=\"note\">Read once a second. A minimum under 20 &deg;C makes a compliant run's "
          "level invalid, and is a warning otherwise.</p>\n",
          f);
}
