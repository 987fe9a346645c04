/*
 * report_infra.c: infrastructure operations in the reports
 * (report_infra.h). VMmark 3 weighs a level's final score as 0.8 x the
 * application score + 0.2 x the infrastructure score (scoring/score.h);
 * the reports show the three side by side, each operation's figures over
 * each phase, and what a failed op printed (escaped: control characters
 * become '?' in text, HTML is escaped; capped).
 */
#include "results/report_infra.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/html.h"
#include "results/report_fmt.h"

#define S tb_fmt_str

/* Bytes and lines of one kept output shown in the text and HTML reports
 * (the store keeps up to the operation's output_cap; JSON gives it all). */
#define SHOW_BYTES 2000
#define SHOW_LINES 40
/* Failed ops shown per operation and phase in text and HTML (the JSON report has every one kept). */
#define SHOW_FAILED 5

int tb_report_run_has_infra(const tb_model_run *r) {
    for (size_t i = 0; i < r->n_levels; i++)
        if (r->levels[i].has_infra) return 1;
    return 0;
}

const char *tb_report_score_basis(const tb_model_run *r) {
    return tb_report_run_has_infra(r) ? "0.8 x application score + 0.2 x infrastructure score (VMmark 3)"
                                      : "application score only (no infrastructure operations)";
}

static const char *num(double v, const char *fmt, char *buf, size_t len) {
    if (!isfinite(v)) return "-";
    snprintf(buf, len, fmt, v);
    return buf;
}

/* "timeout 2, content 1" into buf; "" without errors. */
static void classes(const tb_model_infra *x, char *buf, size_t len) {
    size_t l = 0;
    buf[0] = '\0';
    for (int k = 0; k < TB_ERR_NCLASSES && l < len; k++)
        if (x->errors_by_class[k] > 0)
            l += (size_t)snprintf(buf + l, len - l, "%s%s %lld", l ? ", " : "", tb_store_err_class_name(k),
                                  (long long)x->errors_by_class[k]);
}

static int failed(const tb_model_infra_output *o) { return strcmp(S(o->status), "ok") != 0; }

/* ---- text ------------------------------------------------------------------------------ */

static void text_scores(FILE *f, const tb_model_run *r) {
    char b[3][32];
    if (!tb_report_run_has_infra(r)) {
        fputs("\nScore: application score only (no infrastructure operations)\n", f);
        return;
    }
    fputs("\nScores per level: final = 0.8 x application + 0.2 x infrastructure (VMmark 3); PPKW is of the "
          "final score\n",
          f);
    fprintf(f, "  %5s %5s %12s %15s %10s\n", "tiles", "phase", "application", "infrastructure", "final");
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        fprintf(f, "  %5lld %5lld %12s %15s %10s%s\n", (long long)lv->tiles, (long long)lv->phase,
                num(lv->app_score, "%.3f", b[0], sizeof b[0]), num(lv->infra_score, "%.3f", b[1], sizeof b[1]),
                num(lv->score, "%.3f", b[2], sizeof b[2]),
                !lv->has_infra           ? "  (no operation ran: application score)"
                : isnan(lv->infra_score) ? "  (an operation has no reference: application score)"
                                         : "");
    }
}

static void text_ops(FILE *f, const tb_model_run *r) {
    fputs("\nInfrastructure operations (ops counted as tile ops are; durations in ms)\n", f);
    fprintf(f, "  %5s %5s %-12s %-8s %5s %6s %6s %10s %10s %10s %10s %10s %10s %8s  %s\n", "tiles", "phase",
            "operation", "kind", "users", "ops", "errors", "ops/h", "reference", "normalized", "p50", "p95", "max",
            "MB/s", "errors by class");
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        for (size_t k = 0; k < lv->n_infra; k++) {
            const tb_model_infra *x = &lv->infra[k];
            char b[7][32], cls[160];
            classes(x, cls, sizeof cls);
            fprintf(f, "  %5lld %5lld ", (long long)lv->tiles, (long long)lv->phase);
            tb_fmt_put_safe(f, x->name, 12, 12);
            fputc(' ', f);
            tb_fmt_put_safe(f, x->kind, 8, 8);
            fprintf(f, " %5lld %6lld %6lld %10s %10s %10s %10s %10s %10s %8s  %s\n", (long long)x->users,
                    (long long)x->ops, (long long)x->errors, num(x->ops_per_hour, "%.1f", b[0], sizeof b[0]),
                    num(x->reference, "%.1f", b[1], sizeof b[1]), num(x->normalized, "%.3f", b[2], sizeof b[2]),
                    num(x->p50_ms, "%.1f", b[3], sizeof b[3]), num(x->p95_ms, "%.1f", b[4], sizeof b[4]),
                    num(x->max_ms, "%.1f", b[5], sizeof b[5]), num(x->mb_per_s, "%.1f", b[6], sizeof b[6]), cls);
        }
    }
}

/* One kept output, line by line, control characters as '?', capped. */
static void text_output(FILE *f, const char *s) {
    size_t shown = 0;
    int lines = 0;
    char line[256];
    while (*s && shown < SHOW_BYTES && lines < SHOW_LINES) {
        size_t n = strcspn(s, "\n");
        size_t take = n < sizeof line - 1 ? n : sizeof line - 1;
        memcpy(line, s, take);
        line[take] = '\0';
        fputs("      | ", f);
        tb_fmt_put_safe(f, line, 0, 0);
        fputs(take < n ? " ...\n" : "\n", f);
        shown += n + 1;
        lines++;
        s += n + (s[n] == '\n');
    }
    if (*s) fputs("      | (more kept in the results store)\n", f);
}

/* Failed ops of lv's operation name before output k (for SHOW_FAILED). */
static int failed_before(const tb_model_level *lv, size_t k) {
    int n = 0;
    for (size_t j = 0; j < k; j++)
        n += failed(&lv->infra_outputs[j]) && strcmp(S(lv->infra_outputs[j].name), S(lv->infra_outputs[k].name)) == 0;
    return n;
}

/* After the shown ones: how many more failed ops of each operation the phase kept. */
static void text_more_failed(FILE *f, const tb_model_level *lv) {
    for (size_t k = 0; k < lv->n_infra; k++) {
        int n = 0;
        for (size_t j = 0; j < lv->n_infra_outputs; j++)
            n += failed(&lv->infra_outputs[j]) && strcmp(S(lv->infra_outputs[j].name), S(lv->infra[k].name)) == 0;
        if (n <= SHOW_FAILED) continue;
        fprintf(f, "  %lld tiles phase %lld: ", (long long)lv->tiles, (long long)lv->phase);
        tb_fmt_put_safe(f, lv->infra[k].name, 0, 32);
        fprintf(f, ": %d more failed ops kept (the JSON report has them all)\n", n - SHOW_FAILED);
    }
}

static void text_failed(FILE *f, const tb_model_run *r) {
    int shown = 0;
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        for (size_t k = 0; k < lv->n_infra_outputs; k++) {
            const tb_model_infra_output *o = &lv->infra_outputs[k];
            if (!failed(o) || failed_before(lv, k) >= SHOW_FAILED) continue;
            if (!shown++) fputs("\nFailed infrastructure ops (their output, as kept)\n", f);
            fprintf(f, "  %lld tiles phase %lld: ", (long long)lv->tiles, (long long)lv->phase);
            tb_fmt_put_safe(f, o->name, 0, 32);
            fprintf(f, " user %lld tile %lld at %s: ", (long long)o->user + 1, (long long)o->tile, S(o->started_at));
            tb_fmt_put_safe(f, o->status, 0, 16);
            if (o->exit_code.known) fprintf(f, ", exit %lld", (long long)o->exit_code.v);
            fprintf(f, ", %.1f ms\n", o->duration_ms);
            text_output(f, S(o->output));
        }
        if (shown) text_more_failed(f, lv);
    }
}

void tb_report_text_infra(FILE *f, const tb_model_run *r) {
    if (r->n_levels == 0) return;
    text_scores(f, r);
    if (!tb_report_run_has_infra(r)) return;
    text_ops(f, r);
    text_failed(f, r);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static json_t *jreal(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *jstr(const char *s) {
    json_t *j = s ? json_string(s) : NULL;
    return j ? j : json_null();
}

static json_t *infra_json(const tb_model_infra *x) {
    json_t *o = json_object(), *cls = json_object();
    json_object_set_new(o, "name", jstr(x->name));
    json_object_set_new(o, "kind", jstr(x->kind));
    json_object_set_new(o, "users", json_integer(x->users));
    json_object_set_new(o, "ops", json_integer(x->ops));
    json_object_set_new(o, "errors", json_integer(x->errors));
    for (int k = 0; k < TB_ERR_NCLASSES; k++)
        json_object_set_new(cls, tb_store_err_class_name(k), json_integer(x->errors_by_class[k]));
    json_object_set_new(o, "errors_by_class", cls);
    json_object_set_new(o, "count_all", json_integer(x->count_all));
    json_object_set_new(o, "ops_per_hour", jreal(x->ops_per_hour));
    json_object_set_new(o, "reference", jreal(x->reference));
    json_object_set_new(o, "normalized", jreal(x->normalized));
    json_object_set_new(o, "bytes", json_integer(x->bytes));
    json_object_set_new(o, "mb_per_s", jreal(x->mb_per_s));
    json_object_set_new(o, "mean_ms", jreal(x->mean_ms));
    json_object_set_new(o, "p50_ms", jreal(x->p50_ms));
    json_object_set_new(o, "p95_ms", jreal(x->p95_ms));
    json_object_set_new(o, "p99_ms", jreal(x->p99_ms));
    json_object_set_new(o, "max_ms", jreal(x->max_ms));
    return o;
}

static json_t *output_json(const tb_model_infra_output *x) {
    json_t *o = json_object();
    json_object_set_new(o, "name", jstr(x->name));
    json_object_set_new(o, "user", json_integer(x->user));
    json_object_set_new(o, "tile", json_integer(x->tile));
    json_object_set_new(o, "started_at", jstr(x->started_at));
    json_object_set_new(o, "duration_ms", jreal(x->duration_ms));
    json_object_set_new(o, "status", jstr(x->status));
    json_object_set_new(o, "exit_code", x->exit_code.known ? json_integer(x->exit_code.v) : json_null());
    json_object_set_new(o, "output", jstr(x->output));
    return o;
}

void tb_report_json_infra_level(json_t *o, const tb_model_level *lv) {
    json_t *ops = json_array(), *outs = json_array();
    json_object_set_new(o, "app_score", jreal(lv->app_score));
    json_object_set_new(o, "infra_score", jreal(lv->infra_score));
    for (size_t k = 0; k < lv->n_infra; k++)
        json_array_append_new(ops, infra_json(&lv->infra[k]));
    for (size_t k = 0; k < lv->n_infra_outputs; k++)
        json_array_append_new(outs, output_json(&lv->infra_outputs[k]));
    json_object_set_new(o, "infra", ops);
    json_object_set_new(o, "infra_outputs", outs);
}

static json_t *stats(const tb_score_stats *st) {
    json_t *o = json_object();
    json_object_set_new(o, "mean", st->n > 0 ? json_real(st->mean) : json_null());
    json_object_set_new(o, "min", st->n > 0 ? json_real(st->min) : json_null());
    json_object_set_new(o, "max", st->n > 0 ? json_real(st->max) : json_null());
    return o;
}

void tb_report_json_infra_summary(json_t *o, const tb_model_summary *s) {
    json_object_set_new(o, "app_score", stats(&s->app_score));
    json_object_set_new(o, "infra_score", stats(&s->infra_score));
}

void tb_report_json_infra_run(json_t *run, const tb_model_run *r) {
    json_object_set_new(run, "score_basis", json_string(tb_report_score_basis(r)));
}

/* ---- CSV ------------------------------------------------------------------------------- */

/* One field after its comma, quoted as RFC 4180 asks (report_csv.c's rule). */
static void csv_text(FILE *f, const char *s) {
    fputc(',', f);
    if (!s) return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (const char *p = s; *p; p++) {
        if (*p == '"') fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

static void csv_real(FILE *f, double v) {
    fputc(',', f);
    if (isfinite(v)) fprintf(f, "%.15g", v);
}

static void csv_int(FILE *f, long long v) { fprintf(f, ",%lld", v); }

void tb_report_csv_infra_header(FILE *f, const tb_model_run *r) {
    if (tb_report_run_has_infra(r)) fputs(",app_score,infra_score", f);
}

void tb_report_csv_infra_scores(FILE *f, const tb_model_run *r, const tb_model_level *lv) {
    if (!tb_report_run_has_infra(r)) return;
    csv_real(f, lv->app_score);
    csv_real(f, lv->infra_score);
}

void tb_report_csv_infra_cells(FILE *f, const tb_model_infra *x) {
    char wl[48];
    snprintf(wl, sizeof wl, "infra.%s", S(x->name));
    csv_text(f, wl);
    fputc(',', f); /* tile: an operation belongs to the level, not a tile */
    csv_int(f, x->ops);
    csv_int(f, x->errors);
    csv_real(f, x->ops_per_hour);
    csv_text(f, "ops/h");
    csv_real(f, x->reference);
    csv_real(f, x->normalized);
    csv_text(f, x->kind);
    csv_int(f, x->ops);
    csv_int(f, x->errors);
    for (int k = 0; k < TB_ERR_NCLASSES; k++)
        csv_int(f, x->errors_by_class[k]);
    csv_int(f, x->count_all);
    csv_real(f, x->mean_ms);
    csv_real(f, x->p50_ms);
    csv_real(f, NAN); /* p90: not kept for operations */
    csv_real(f, x->p95_ms);
    csv_real(f, x->p99_ms);
    csv_real(f, NAN); /* p99.9 */
    csv_real(f, x->max_ms);
}

/* ---- HTML ------------------------------------------------------------------------------ */

static void td(FILE *f, const char *s, int n) {
    fputs(n ? "<td class=\"n\">" : "<td>", f);
    tb_html_escape_file(f, s);
    fputs("</td>", f);
}

static void td_num(FILE *f, double v, const char *fmt) {
    char b[32];
    td(f, num(v, fmt, b, sizeof b), 1);
}

static void html_scores(FILE *f, const tb_model_run *r) {
    fputs("<h2 id=\"scores\">Application, infrastructure and final score</h2>\n<table>\n<tr><th class=\"n\">tiles"
          "</th><th class=\"n\">phase</th><th class=\"n\">application</th><th class=\"n\">infrastructure</th><th "
          "class=\"n\">final</th></tr>\n",
          f);
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        fprintf(f, "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td>", (long long)lv->tiles,
                (long long)lv->phase);
        td_num(f, lv->app_score, "%.3f");
        td_num(f, lv->infra_score, "%.3f");
        td_num(f, lv->score, "%.3f");
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<p class=\"note\">The final score is 0.8 &times; the application score (the sum of the tile "
          "scores) + 0.2 &times; the infrastructure score (the geometric mean of each operation's ops per hour "
          "&divide; its reference), as VMmark 3 weighs them; PPKW is of the final score. A level whose operation "
          "has no reference scores its application score alone.</p>\n",
          f);
}

static void html_ops(FILE *f, const tb_model_run *r) {
    fputs("<h2 id=\"infra\">Infrastructure operations</h2>\n<table>\n<tr><th class=\"n\">tiles</th><th class=\"n\">"
          "phase</th><th>operation</th><th>kind</th><th class=\"n\">users</th><th class=\"n\">ops</th><th "
          "class=\"n\">errors</th><th>by class</th><th class=\"n\">ops/h</th><th class=\"n\">reference</th><th "
          "class=\"n\">normalized</th><th class=\"n\">p50 ms</th><th class=\"n\">p95 ms</th><th class=\"n\">max ms"
          "</th><th class=\"n\">MB/s</th></tr>\n",
          f);
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        for (size_t k = 0; k < lv->n_infra; k++) {
            const tb_model_infra *x = &lv->infra[k];
            char cls[160];
            classes(x, cls, sizeof cls);
            fprintf(f, "%s<td class=\"n\">%lld</td><td class=\"n\">%lld</td>",
                    x->errors ? "<tr class=\"bad\">" : "<tr>", (long long)lv->tiles, (long long)lv->phase);
            td(f, S(x->name), 0);
            td(f, S(x->kind), 0);
            fprintf(f, "<td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>",
                    (long long)x->users, (long long)x->ops, (long long)x->errors);
            td(f, cls, 0);
            td_num(f, x->ops_per_hour, "%.1f");
            td_num(f, x->reference, "%.1f");
            td_num(f, x->normalized, "%.3f");
            td_num(f, x->p50_ms, "%.1f");
            td_num(f, x->p95_ms, "%.1f");
            td_num(f, x->max_ms, "%.1f");
            td_num(f, x->mb_per_s, "%.1f");
            fputs("</tr>\n", f);
        }
    }
    fputs("</table>\n", f);
}

/* A kept output, escaped, up to SHOW_BYTES (cut at a UTF-8 boundary). */
static void html_output(FILE *f, const char *s) {
    char buf[SHOW_BYTES + 1];
    size_t n = strlen(s);
    size_t take = n > SHOW_BYTES ? SHOW_BYTES : n;
    while (take < n && take > 0 && ((unsigned char)s[take] & 0xc0) == 0x80)
        take--;
    memcpy(buf, s, take);
    buf[take] = '\0';
    fputs("<pre>", f);
    tb_html_escape_file(f, buf);
    fputs(take < n ? "\n(more kept in the results store)</pre>\n" : "</pre>\n", f);
}

static void html_failed(FILE *f, const tb_model_run *r) {
    int shown = 0;
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        for (size_t k = 0; k < lv->n_infra_outputs; k++) {
            const tb_model_infra_output *o = &lv->infra_outputs[k];
            char b[64];
            if (!failed(o) || failed_before(lv, k) >= SHOW_FAILED) continue;
            if (!shown++) fputs("<h3>Failed infrastructure ops</h3>\n", f);
            fprintf(f, "<p>%lld tiles, phase %lld: ", (long long)lv->tiles, (long long)lv->phase);
            tb_html_escape_file(f, S(o->name));
            fprintf(f, ", user %lld, tile %lld, at ", (long long)o->user + 1, (long long)o->tile);
            tb_html_escape_file(f, S(o->started_at));
            fputs(": ", f);
            tb_html_escape_file(f, S(o->status));
            b[0] = '\0';
            if (o->exit_code.known) snprintf(b, sizeof b, ", exit %lld", (long long)o->exit_code.v);
            fprintf(f, "%s, %.1f ms</p>\n", b, o->duration_ms);
            html_output(f, S(o->output));
        }
    }
}

void tb_report_html_infra(FILE *f, const tb_model_run *r) {
    if (r->n_levels == 0) return;
    if (!tb_report_run_has_infra(r)) {
        fputs("<p class=\"note\">Score: application score only (no infrastructure operations).</p>\n", f);
        return;
    }
    html_scores(f, r);
    html_ops(f, r);
    html_failed(f, r);
}
