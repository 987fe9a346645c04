/*
 * report_html_tables.c: the tables of the HTML report (report_html.c draws
 * the rest of the page): levels, telemetry, QoS, latency percentiles,
 * workloads, meters, events and the tile file. Reads the page's model
 * (report_html_page.h) and the typed read model alone; every string from the
 * user, the SUT or a meter is escaped (common/html.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/html.h"
#include "powermeter/ipmi.h"
#include "qos/qos.h"
#include "results/report_fmt.h"
#include "results/report_html_page.h"
#include "results/svg_chart.h"

#define esc tb_html_escape_file
#define S   tb_fmt_str

/* ---- tables ---------------------------------------------------------------------------- */

/* Opens a table with its header row. cols is "|"-separated; a leading '#'
 * marks a numeric column (right-aligned). */
static void table_open(FILE *f, const char *cols) {
    const char *c = cols;
    fputs("<div class=\"tw\"><table>\n<tr>", f);
    while (*c) {
        size_t n = strcspn(c, "|");
        int num = *c == '#';
        fprintf(f, "<th%s>%.*s</th>", num ? " class=\"n\"" : "", (int)(n - (size_t)num), c + num);
        c += n + (c[n] == '|');
    }
    fputs("</tr>\n", f);
}

/* Opens a row: class "bad" (tinted) when bad, plus an extra class if any. */
static void row_open(FILE *f, int bad, const char *extra) {
    if (!bad && !extra)
        fputs("<tr>", f);
    else
        fprintf(f, "<tr class=\"%s%s%s\">", extra ? extra : "", extra && bad ? " " : "", bad ? "bad" : "");
}

static void td_text(FILE *f, const char *s) {
    fputs("<td>", f);
    esc(f, s);
    fputs("</td>", f);
}

/* A text cell, "–" when s is empty (as the other tables show a value not known). */
static void td_text_or_dash(FILE *f, const char *s) { td_text(f, *s ? s : "\xe2\x80\x93"); }

static void td_num(FILE *f, double v, int dec) {
    fputs("<td class=\"n\">", f);
    rh_put_num(f, v, dec);
    fputs("</td>", f);
}

static void td_ms(FILE *f, double ms) {
    fputs("<td class=\"n\">", f);
    rh_put_ms(f, ms);
    fputs("</td>", f);
}

/* A verdict cell: PASS/FAIL, yes/NO; detail (escaped)
 * follows after a colon. */
static void td_verdict(FILE *f, int v, const char *yes, const char *no, const char *detail) {
    fputs("<td>", f);
    fprintf(f, "<span class=\"%s\">%s</span>", v ? "pass" : "fail", v ? yes : no);
    if (detail && *detail) {
        fputs(": ", f);
        esc(f, detail);
    }
    fputs("</td>", f);
}

/* A level's QoS cell: its one word (tb_model_qos_verdict), pass, fail or
 * incomplete, with "N not judged" beside incomplete. */
static void td_qos_level(FILE *f, const tb_model_level *lv) {
    const char *word = tb_model_qos_verdict(lv->qos_pass, lv->qos_not_judged);
    if (strcmp(word, "incomplete") != 0) {
        td_verdict(f, lv->qos_pass, word, word, NULL);
        return;
    }
    fprintf(f, "<td><span class=\"nj\">%s</span>: %d not judged</td>", word, lv->qos_not_judged);
}

/* A level's tiles and phase, the first cells of most tables. */
static void td_level(FILE *f, const tb_model_level *lv) {
    fprintf(f, "<td class=\"n\">%lld", (long long)lv->tiles);
    if (lv->alone) { /* --interference: a workload alone */
        fputs(" (", f);
        tb_html_escape_file(f, lv->alone);
        fputs(" alone)", f);
    }
    fprintf(f, "</td><td class=\"n\">%lld</td>", (long long)lv->phase);
}

/* Section heading; when empty, a note instead and 0 (the caller stops). */
static int section(FILE *f, const char *id, const char *title, int empty, const char *empty_note) {
    fprintf(f, "<h2 id=\"%s\">%s</h2>\n", id, title);
    if (empty) fprintf(f, "<p class=\"note\">%s</p>\n", empty_note);
    return !empty;
}

void rh_levels(page *p) {
    FILE *f = p->f;
    size_t i;
    if (!section(f, "levels", "Load levels", p->n_rows == 0, "No load level stored.")) return;
    table_open(f, "#tiles|#phase|#steady (s)|#score|#avg W|#PPKW|QoS|valid|#bad / total samples|#CPU util %|#freq MHz");
    for (i = 0; i < p->n_rows; i++) {
        const tb_model_level *lv = &p->levels[i];
        row_open(f, !lv->qos_pass || !lv->valid, "level");
        td_level(f, lv);
        td_num(f, lv->steady_s, 1);
        td_num(f, lv->score, 3);
        td_num(f, lv->avg_watts, 1);
        td_num(f, lv->ppkw, 2);
        td_qos_level(f, lv);
        td_verdict(f, lv->valid, "yes", "NO", S(lv->invalid_reason));
        fputs("<td class=\"n\">", f);
        rh_put_num(f, rh_int_num(lv->samples_bad), 0);
        fputs(" / ", f);
        rh_put_num(f, rh_int_num(lv->samples_total), 0);
        fputs("</td>", f);
        td_num(f, lv->telemetry.cpu_util_pct, 1);
        td_num(f, lv->telemetry.avg_freq_mhz, 0);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

void rh_energy(page *p) {
    FILE *f = p->f;
    if (!section(f, "energy", "Energy per op and efficiency", p->n_rows == 0, "No load level stored.")) return;
    table_open(f, "#tiles|#phase|#energy (kJ)|#metric ops|#J per op|per workload: share of normalized "
                  "throughput, J per op|#normalized performance|#efficiency (per kW)");
    for (size_t i = 0; i < p->n_rows; i++) {
        const tb_model_level *lv = &p->levels[i];
        tb_model_energy e;
        tb_model_level_energy(lv, p->run->peak_score, &e);
        row_open(f, 0, "energy");
        td_level(f, lv);
        td_num(f, e.joules / 1000.0, 3);
        td_num(f, e.ops, 0);
        td_num(f, e.j_per_op, 4);
        fputs("<td>", f);
        for (size_t k = 0; k < e.n; k++) {
            fputs(k ? "; " : "", f);
            esc(f, e.wl[k].workload);
            fputs(" ", f);
            rh_put_num(f, 100.0 * e.wl[k].share, 1);
            fputs("%, ", f);
            rh_put_num(f, e.wl[k].j_per_op, 4);
            fputs(" J", f);
        }
        fputs("</td>", f);
        td_num(f, e.norm_perf, 3);
        td_num(f, e.efficiency, 3);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n<p class=\"note\">Energy: mean SUT power &times; steady seconds, every meter summed. J "
          "per op: that energy over every metric op of the level. Per workload, the energy is split by each "
          "workload's share of the level's normalized throughput (its tiles summed), then divided by its ops. "
          "Normalized performance: the score over the run's peak score; efficiency: that per kW of mean power "
          "(SERT style). See docs/method.md.</p>\n",
          f);
}

/* A number cell, "n/a" when the host did not provide the figure. */
static void td_na(FILE *f, double v, int dec);

/* The SUT hosts of a run with [host.NAME] sections (nothing otherwise):
 * each host's tiles, meters, telemetry and active idle, then its share of
 * every phase. A level's avg W is the sum of its hosts'. */
void rh_hosts(page *p) {
    FILE *f = p->f;
    const tb_model_run *r = p->run;
    if (r->n_hosts == 0) return;
    section(f, "hosts", "SUT hosts", 0, "");
    table_open(f, "host|label|tiles|meters|telemetry|#active idle W|#idle CPU util %");
    for (size_t h = 0; h < r->n_hosts; h++) {
        const tb_model_host *ho = &r->hosts[h];
        int first = 1;
        row_open(f, 0, NULL);
        td_text(f, S(ho->name));
        td_text(f, S(ho->label));
        td_text(f, S(ho->tiles));
        fputs("<td>", f);
        for (size_t m = 0; m < r->n_meters; m++)
            if (r->meters[m].host && ho->name && strcmp(r->meters[m].host, ho->name) == 0) {
                fprintf(f, "%s%zu", first ? "" : ", ", m);
                first = 0;
            }
        fputs("</td><td><code>", f);
        esc(f, S(ho->telemetry));
        fputs("</code></td>", f);
        td_num(f, ho->active_idle_watts, 1);
        td_na(f, ho->idle_cpu_util_pct, 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
    table_open(f, "#tiles|#phase|host|#its tiles|#avg W|#power samples|#CPU util %|#freq MHz");
    for (size_t i = 0; i < p->n_rows; i++) {
        const tb_model_level *lv = &p->levels[i];
        for (size_t k = 0; k < lv->n_hosts; k++) {
            const tb_model_level_host *lh = &lv->hosts[k];
            row_open(f, 0, NULL);
            td_level(f, lv);
            td_text(f, S(lh->name));
            td_num(f, (double)lh->tiles, 0);
            td_num(f, lh->avg_watts, 1);
            td_num(f, (double)lh->samples, 0);
            td_na(f, lh->cpu_util_pct, 1);
            td_na(f, lh->avg_freq_mhz, 0);
            fputs("</tr>\n", f);
        }
    }
    fputs("</table></div>\n<p class=\"note\">Each host's avg W is the mean power of its meters summed; a level's avg W "
          "(and so its PPKW) is the sum over every host.</p>\n",
          f);
}

/* A number cell, "n/a" when the host did not provide the figure. */
static void td_na(FILE *f, double v, int dec) {
    if (isfinite(v))
        td_num(f, v, dec);
    else
        fputs("<td class=\"n\">n/a</td>", f);
}

void rh_telemetry(page *p) {
    FILE *f = p->f;
    size_t i;
    if (!section(f, "telemetry", "Host telemetry per level", p->n_rows == 0, "No load level stored.")) return;
    table_open(f, "#tiles|#phase|#CPU util %|#user %|#sys %|#iowait %|#idle %|#steal %|#freq MHz|freq source"
                  "|C-state residency %|#samples");
    for (i = 0; i < p->n_rows; i++) {
        const tb_model_level *lv = &p->levels[i];
        const tb_model_telemetry *t = &lv->telemetry;
        const tb_model_obj *cs = &t->cstate_residency_pct;
        int first = 1;
        row_open(f, 0, NULL);
        td_level(f, lv);
        td_na(f, t->cpu_util_pct, 1);
        td_na(f, t->mode_pct[0], 1); /* user */
        td_na(f, t->mode_pct[2], 1); /* sys */
        td_na(f, t->mode_pct[4], 1); /* iowait */
        td_na(f, t->mode_pct[3], 1); /* idle */
        td_na(f, t->mode_pct[7], 1); /* steal */
        td_na(f, t->avg_freq_mhz, 0);
        td_text(f, *S(t->freq_source) ? t->freq_source : "n/a");
        fputs("<td>", f);
        for (size_t k = 0; k < cs->n; k++) {
            const tb_model_kv *v = &cs->kv[k];
            if (v->kind != TB_KV_INT && v->kind != TB_KV_REAL) continue;
            fputs(first ? "" : ", ", f);
            esc(f, v->key);
            fprintf(f, " %.1f", v->kind == TB_KV_INT ? (double)v->i : v->d);
            first = 0;
        }
        fputs(first ? "n/a</td>" : "</td>", f);
        td_na(f, rh_int_num(t->samples), 0);
        fputs("</tr>\n", f);
    }
    fputs(
        "</table></div>\n<p class=\"note\">Sampled at 1 Hz over steady state; samples that straddle its edges are left "
        "out. CPU time by mode as sar reports it; C-states as turbostat's %C-columns (C0: running). n/a: the host "
        "does not expose the figure (no cpufreq or msr for frequency, no cpuidle for C-states, or telemetry off); "
        "nothing is estimated in its place.</p>\n",
        f);
}

void rh_qos(page *p) {
    FILE *f = p->f;
    size_t i, j, n = 0;
    for (i = 0; i < p->n_rows; i++)
        n += p->levels[i].n_qos;
    if (!section(f, "qos", "QoS rules per level", n == 0, "No QoS rule was evaluated.")) return;
    table_open(f, "#tiles|#phase|rule|#observed|#limit|verdict|reason");
    for (i = 0; i < p->n_rows; i++) {
        const tb_model_level *lv = &p->levels[i];
        for (j = 0; j < lv->n_qos; j++) {
            const tb_model_qos *q = &lv->qos[j];
            row_open(f, q->judged && !q->pass, NULL);
            td_level(f, lv);
            td_text(f, S(q->rule));
            if (isfinite(q->observed))
                td_ms(f, q->observed);
            else
                fputs("<td class=\"n\">n/a</td>", f); /* nothing observed (no ops): never 0 */
            td_ms(f, q->limit);
            if (!q->judged)
                fputs("<td><span class=\"nj\">NOT JUDGED</span></td>", f);
            else
                td_verdict(f, q->pass, "PASS", "FAIL", NULL);
            td_text(f, S(q->reason));
            fputs("</tr>\n", f);
        }
    }
    fputs("</table></div>\n<p class=\"note\">Observed and limit are in the rule's unit: ms for latency, % for error "
          "rates, "
          "percentage points for the mix. NOT JUDGED: too few ops for the rule to mean anything (a pNN needs "
          "1/(1&minus;NN/100) ops, or it is the slowest op; a mix of d pp needs d to be 2.576 standard deviations of "
          "each "
          "op's share); neither a pass nor a fail.</p>\n",
          f);
}

static const double lat_pcts[] = {25, 50, 75, 90, 95, 99, 99.9, 99.99};
#define N_LAT_PCTS (sizeof lat_pcts / sizeof lat_pcts[0])

void rh_latency(page *p) {
    FILE *f = p->f;
    size_t r, g, k, n = 0;
    int any_errors = 0;
    for (r = 0; r < p->n_rows; r++)
        n += p->n_groups[r];
    if (!section(f, "latency", "Latency percentiles", n == 0, "No op latency stored.")) return;
    fputs("<p class=\"note\">In ms, per op and load level, tiles merged, from the stored histograms; <b>from intended "
          "start (corrected for coordinated omission)</b>: an op is timed from when it was due, not when it was sent."
          "</p>\n",
          f);
    for (r = 0; r < p->n_rows && !any_errors; r++)
        for (g = 0; g < p->n_groups[r]; g++)
            any_errors |= p->groups[r][g].errors > 0;
    /* errors by class only when there are errors: a column of blanks says nothing */
    table_open(f, any_errors ? "#tiles|#phase|workload|op|#count|#errors|errors by class|#min|#mean|#p25|#p50|#p75|#p90"
                               "|#p95|#p99|#p99.9|#p99.99|#max"
                             : "#tiles|#phase|workload|op|#count|#errors|#min|#mean|#p25|#p50|#p75|#p90|#p95|#p99"
                               "|#p99.9|#p99.99|#max");
    for (r = 0; r < p->n_rows; r++) {
        for (g = 0; g < p->n_groups[r]; g++) {
            const tb_model_op_group *og = &p->groups[r][g];
            int has = tb_hist_count(og->hist) > 0;
            row_open(f, 0, g == 0 && r > 0 ? "grp" : NULL);
            td_level(f, &p->levels[r]);
            td_text(f, og->workload);
            td_text(f, og->op);
            td_num(f, (double)og->count, 0);
            td_num(f, (double)og->errors, 0);
            if (any_errors) {
                char cls[160];
                tb_fmt_error_classes(og, cls, sizeof cls);
                td_text(f, cls);
            }
            td_ms(f, has ? (double)tb_hist_min(og->hist) / 1000.0 : NAN);
            td_ms(f, has ? tb_hist_mean(og->hist) / 1000.0 : NAN);
            for (k = 0; k < N_LAT_PCTS; k++)
                td_ms(f, has ? (double)tb_hist_percentile(og->hist, lat_pcts[k]) / 1000.0 : NAN);
            td_ms(f, has ? (double)tb_hist_max(og->hist) / 1000.0 : NAN);
            fputs("</tr>\n", f);
        }
    }
    fputs("</table></div>\n", f);
}

void rh_workloads(page *p) {
    FILE *f = p->f;
    size_t i, j, n = 0;
    for (i = 0; i < p->n_rows; i++)
        n += p->levels[i].n_workloads;
    if (!section(f, "workloads", "Workloads per tile", n == 0, "No workload results stored.")) return;
    table_open(f, "#tiles|#phase|#tile|workload|#ops|#errors|#throughput|unit|#reference|#normalized");
    for (i = 0; i < p->n_rows; i++) {
        const tb_model_level *lv = &p->levels[i];
        for (j = 0; j < lv->n_workloads; j++) {
            const tb_model_workload *w = &lv->workloads[j];
            row_open(f, 0, NULL);
            td_level(f, lv);
            td_num(f, (double)w->tile, 0);
            td_text(f, S(w->name));
            td_num(f, rh_int_num(w->ops), 0);
            td_num(f, rh_int_num(w->errors), 0);
            td_num(f, w->throughput, 2);
            td_text(f, S(w->unit));
            td_num(f, w->reference, 2);
            td_num(f, w->normalized, 3);
            fputs("</tr>\n", f);
        }
    }
    fputs("</table></div>\n", f);
}

/* The "averaged" cell: NOT AVERAGED when every valid reading had min = max =
 * average (tb_ipmi_not_averaged), else how many did; blank when none did. */
static void html_averaged(FILE *f, const tb_model_meter *m) {
    long long flat = (long long)m->flat_readings, valid = (long long)m->valid_readings;
    if (m->not_averaged)
        fprintf(f, "<td class=\"fail\">NOT AVERAGED: min = max = average in all %lld valid readings</td>", valid);
    else if (flat > 0)
        fprintf(f, "<td>min = max = average in %lld of %lld valid readings</td>", flat, valid);
    else
        fputs("<td></td>", f);
}

void rh_meters(page *p) {
    FILE *f = p->f;
    size_t i;
    if (!section(f, "meters", "Meters", p->run->n_meters == 0, "No meter recorded.")) return;
    table_open(f, "##|URI|model|IDN|driver|V range|A range|crest factor|update ms|averaging window ms|averaged|max "
                  "uncertainty %|invalid samples|estimated");
    for (i = 0; i < p->run->n_meters; i++) {
        const tb_model_meter *m = &p->run->meters[i];
        int est = m->estimated;
        char buf[64];
        row_open(f, est, NULL);
        td_num(f, (double)i, 0);
        fputs("<td class=\"uri\"><code>", f); /* wide enough that a URI wraps in words, not in letters */
        esc(f, S(m->uri));
        fputs("</code></td>", f);
        td_text(f, S(m->model));
        fputs("<td><code>", f); /* an identity without spaces: it may wrap anywhere */
        esc(f, S(m->idn));
        fputs("</code></td>", f);
        td_text_or_dash(f, S(m->driver));
        /* a range with its mode: "300 (fixed)", "20 (auto)"; "–" when the meter does not say */
        snprintf(buf, sizeof buf, "%.4g (%s)", m->volt_range_v, S(m->volt_mode));
        td_text_or_dash(f, isnan(m->volt_range_v) ? S(m->volt_mode) : buf);
        snprintf(buf, sizeof buf, "%.4g (%s)", m->amp_range_a, S(m->amp_mode));
        td_text_or_dash(f, isnan(m->amp_range_a) ? S(m->amp_mode) : buf);
        td_num(f, m->crest_factor, 0);
        td_num(f, rh_int_num(m->update_ms), 0);
        td_num(f, rh_int_num(m->avg_window_ms), 0);
        html_averaged(f, m);
        td_num(f, m->max_uncertainty_pct, 3);
        td_num(f, (double)m->invalid_samples, 0);
        fputs(est ? "<td class=\"fail\">ESTIMATED</td></tr>\n" : "<td>no (measured)</td></tr>\n", f);
    }
    fprintf(f,
            "</table></div>\n<p class=\"note\">URIs are stored with passwords removed. Ranges are as read back from "
            "the meter at the start of the run; auto-ranging during steady state is a validity warning "
            "(SPECpower). Invalid samples: NaN, over-range, missing, above 1%% uncertainty, or implausible (negative "
            "W, W beyond the ranges, V &times; A &times; PF disagreeing with W). Averaging window: "
            "the meter's own (the statistics period of an IPMI DCMI reading). NOT AVERAGED: a BMC whose every "
            "valid reading, at least %d of them, had min = max = average, so its \"average\" is one "
            "instantaneous value.</p>\n",
            TB_IPMI_NOT_AVERAGED_MIN);
}

void rh_events(page *p) {
    FILE *f = p->f;
    size_t i;
    if (!section(f, "events", "Events", p->run->n_events == 0, "No event logged.")) return;
    table_open(f, "time (UTC)|kind|message");
    for (i = 0; i < p->run->n_events; i++) {
        const tb_model_event *e = &p->run->events[i];
        row_open(f, strcmp(S(e->kind), "info") != 0, NULL);
        fputs("<td class=\"ts\">", f); /* a timestamp on one line */
        esc(f, S(e->at));
        fputs("</td>", f);
        td_text(f, S(e->kind));
        td_text(f, S(e->message));
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

void rh_config(page *p) {
    FILE *f = p->f;
    fputs("<h2 id=\"config\">Configuration</h2>\n<p class=\"note\">The effective settings are listed under "
          "<a href=\"#run\">Run</a>. The tile definition below is the file text the run used, passwords removed."
          "</p>\n",
          f);
    fputs("<details><summary>Tile definition", f);
    if (*S(p->run->tile_name)) {
        fputs(" (", f);
        esc(f, p->run->tile_name);
        fputc(')', f);
    }
    fputs(": the effective file text</summary>\n<pre>", f);
    esc(f, *S(p->run->config_text) ? p->run->config_text : "(not stored)");
    fputs("</pre></details>\n", f);
}

/* Median of the finite values of v[0..n) (reordered): the lower middle one,
 * as the charts' points; NaN when none. */
static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) v[m++] = v[i];
    if (!m) return NAN;
    qsort(v, m, sizeof *v, cmp_dbl);
    return v[(m - 1) / 2];
}

/* Percentile pct of workload.op at level point pt, ms: the median over its rows. */
static double point_pct(const page *p, const level_point *pt, const char *workload, const char *op, double pct) {
    double *v = xmalloc((pt->n ? pt->n : 1) * sizeof *v), m;
    for (size_t i = 0; i < pt->n; i++) {
        size_t r = pt->first + i;
        v[i] = NAN;
        for (size_t g = 0; g < p->n_groups[r]; g++) {
            const tb_model_op_group *og = &p->groups[r][g];
            if (strcmp(og->workload, workload) != 0 || strcmp(og->op, op) != 0 || tb_hist_count(og->hist) == 0)
                continue;
            v[i] = (double)tb_hist_percentile(og->hist, pct) / 1000.0;
        }
    }
    m = median_of(v, pt->n);
    free(v);
    return m;
}

uint64_t rh_point_least_ops(const page *p, const level_point *pt, const char *workload, const char *op) {
    uint64_t least = 0;
    for (size_t i = 0; i < pt->n; i++) {
        size_t r = pt->first + i;
        for (size_t g = 0; g < p->n_groups[r]; g++) {
            const tb_model_op_group *og = &p->groups[r][g];
            uint64_t n = tb_hist_count(og->hist);
            if (strcmp(og->workload, workload) != 0 || strcmp(og->op, op) != 0 || n == 0) continue;
            if (least == 0 || n < least) least = n;
        }
    }
    return least;
}

/* A latency cell; a dagger (and a tooltip) when the op ran fewer ops than
 * pct needs, so the value is the slowest op's, not a percentile. 1 when so. */
static int td_pct_ms(FILE *f, double ms, uint64_t ops, double pct) {
    uint64_t need = tb_qos_quantile_min_ops(pct);
    if (ops == 0 || ops >= need) {
        td_ms(f, ms);
        return 0;
    }
    fprintf(f, "<td class=\"n nj\" title=\"not a percentile: %llu ops (p%g needs %llu)\">", (unsigned long long)ops,
            pct, (unsigned long long)need);
    rh_put_ms(f, ms);
    fputs("&dagger;</td>", f);
    return 1;
}

void rh_latency_values(page *p, const char *workload) {
    static const double pcts[] = {50, 95, 99};
    FILE *f = p->f;
    int daggers = 0;
    fputs("<div class=\"tw\"><table class=\"lt\">\n<tr><th>op</th><th></th>", f);
    for (size_t j = 0; j < p->n_pts; j++)
        fprintf(f, "<th class=\"n\">%g tile%s</th>", p->pts[j].tiles, p->pts[j].tiles == 1 ? "" : "s");
    fputs("</tr>\n", f);
    for (size_t k = 0; k < p->n_lat; k++) {
        const lat_series *l = &p->lat[k];
        if (strcmp(l->workload, workload) != 0) continue;
        for (size_t q = 0; q < 3; q++) {
            fputs(q == 0 ? "<tr class=\"grp\">" : "<tr>", f);
            if (q == 0) {
                fputs("<td rowspan=\"3\">", f);
                esc(f, l->op);
                fputs("</td>", f);
            }
            fprintf(f, "<th>p%g</th>", pcts[q]);
            for (size_t j = 0; j < p->n_pts; j++)
                daggers += td_pct_ms(f, point_pct(p, &p->pts[j], l->workload, l->op, pcts[q]),
                                     rh_point_least_ops(p, &p->pts[j], l->workload, l->op), pcts[q]);
            fputs("</tr>\n", f);
        }
    }
    fputs("</table></div>\n", f);
    if (daggers)
        fprintf(f,
                "<p class=\"note\">&dagger; Not a percentile: the op ran fewer ops than it needs (p95: %llu, p99: "
                "%llu), so the value is its slowest op's.</p>\n",
                (unsigned long long)tb_qos_quantile_min_ops(95), (unsigned long long)tb_qos_quantile_min_ops(99));
}
