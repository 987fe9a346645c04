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

/* The operations of lv that completed no op while the others have a
 * reference: their normalized throughput 0 makes the geometric mean 0. */
static int zero_op(const tb_model_level *lv, size_t k) {
    const tb_model_infra *x = &lv->infra[k];
    return lv->has_infra && x->ops == 0 && isfinite(x->reference) && x->reference > 0;
}

static void text_zero_notes(FILE *f, const tb_model_run *r) {
    for (size_t i = 0; i < r->n_levels; i++)
        for (size_t k = 0; k < r->levels[i].n_infra; k++) {
            if (!zero_op(&r->levels[i], k)) continue;
            fprintf(f, "  %lld tiles phase %lld: infra.", (long long)r->levels[i].tiles, (long long)r->levels[i].phase);
            tb_fmt_put_safe(f, r->levels[i].infra[k].name, 0, 32);
            fputs(" completed no op: its normalized throughput is 0, so the infrastructure score is 0\n", f);
        }
}

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
        fprintf(f, "  %5lld %5lld %12s %15s %10s%s", (long long)lv->tiles, (long long)lv->phase,
                num(lv->app_score, "%.3f", b[0], sizeof b[0]), num(lv->infra_score, "%.3f", b[1], sizeof b[1]),
                num(lv->score, "%.3f", b[2], sizeof b[2]),
                !lv->has_infra           ? "  (no operation ran: application score)"
                : isnan(lv->infra_score) ? "  (an operation has no reference: application score)"
                                         : "");
        tb_fmt_put_alone(f, lv);
        fputc('\n', f);
    }
    text_zero_notes(f, r);
}

static void text_ops(FILE *f, const tb_model_run *r) {
    fputs("\nInfrastructure operations (ok: ops that succeeded, counted as tile ops are; QoS judges ok + errors; "
          "durations in ms)\n",
          f);
    fprintf(f, "  %5s %5s %-12s %-8s %5s %6s %6s %10s %10s %10s %10s %10s %10s %8s  %s\n", "tiles", "phase",
            "operation", "kind", "users", "ok", "errors", "ops/h", "reference", "normalized", "p50", "p95", "max",
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

/* Where the last SHOW_LINES lines of s (at most about SHOW_BYTES) begin: a
 * failing script's error and the "[exit status N]" line are at its end.
 * *earlier: the lines before that. */
static const char *tail_start(const char *s, int *earlier) {
    size_t n = strlen(s), i = n;
    int lines = 0;
    const char *start;
    if (i > 0 && s[i - 1] == '\n') i--; /* the last line's own newline */
    while (i > 0 && lines < SHOW_LINES && n - i < SHOW_BYTES) {
        if (s[i - 1] == '\n' && ++lines == SHOW_LINES) break;
        i--;
    }
    start = s + i;
    *earlier = 0;
    for (const char *p = s; p < start; p++)
        *earlier += *p == '\n';
    if (start > s && start[-1] != '\n') (*earlier)++; /* a line cut by the byte cap */
    return start;
}

/* One kept output, its last lines, line by line, control characters as '?'. */
static void text_output(FILE *f, const char *s) {
    int earlier;
    char line[256];
    s = tail_start(s, &earlier);
    if (earlier) fprintf(f, "      | (%d earlier line%s in the results store)\n", earlier, earlier == 1 ? "" : "s");
    while (*s) {
        size_t n = strcspn(s, "\n");
        size_t take = n < sizeof line - 1 ? n : sizeof line - 1;
        memcpy(line, s, take);
        line[take] = '\0';
        fputs("      | ", f);
        tb_fmt_put_safe(f, line, 0, 0);
        fputs(take < n ? " ...\n" : "\n", f);
        s += n + (s[n] == '\n');
    }
}

/* Failed ops of lv's operation name before output k (for SHOW_FAILED). */
static int failed_before(const tb_model_level *lv, size_t k) {
    int n = 0;
    for (size_t j = 0; j < k; j++)
        n += failed(&lv->infra_outputs[j]) && strcmp(S(lv->infra_outputs[j].name), S(lv->infra_outputs[k].name)) == 0;
    return n;
}

/* Failed ops of operation name the phase kept. */
static int n_failed(const tb_model_level *lv, const char *name) {
    int n = 0;
    for (size_t j = 0; j < lv->n_infra_outputs; j++)
        n += failed(&lv->infra_outputs[j]) && strcmp(S(lv->infra_outputs[j].name), name) == 0;
    return n;
}

/* After the shown ones: how many more failed ops of each operation the phase kept. */
static void text_more_failed(FILE *f, const tb_model_level *lv) {
    for (size_t k = 0; k < lv->n_infra; k++) {
        int n = n_failed(lv, S(lv->infra[k].name));
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
            fprintf(f, " user %lld tile %lld at %s: ", (long long)o->user, (long long)o->tile, S(o->started_at));
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
    if (tb_report_run_has_infra(r)) fputs(",app_score,infra_score,infra_bytes,infra_mb_per_s", f);
}

void tb_report_csv_infra_scores(FILE *f, const tb_model_run *r, const tb_model_level *lv, const tb_model_infra *x) {
    if (!tb_report_run_has_infra(r)) return;
    csv_real(f, lv->app_score);
    csv_real(f, lv->infra_score);
    if (x) { /* an operation's row: bytes it moved and MB/s (empty for a kind that moves none) */
        csv_int(f, x->bytes);
        csv_real(f, x->mb_per_s);
    } else {
        fputs(",,", f);
    }
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
    fputs("<h2 id=\"scores\">Application, infrastructure and final score</h2>\n<div class=\"tw\"><table>\n"
          "<tr><th class=\"n\">tiles"
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
    fputs("</table></div>\n<p class=\"note\">The final score is 0.8 &times; the application score (the sum of the tile "
          "scores) + 0.2 &times; the infrastructure score (the geometric mean of each operation's ops per hour "
          "&divide; its reference), as VMmark 3 weighs them; PPKW is of the final score. A level whose operation "
          "has no reference scores its application score alone.</p>\n",
          f);
    for (size_t i = 0; i < r->n_levels; i++)
        for (size_t k = 0; k < r->levels[i].n_infra; k++) {
            if (!zero_op(&r->levels[i], k)) continue;
            fprintf(f, "<p class=\"note bad\">%lld tiles, phase %lld: infra.", (long long)r->levels[i].tiles,
                    (long long)r->levels[i].phase);
            tb_html_escape_file(f, S(r->levels[i].infra[k].name));
            fputs(" completed no op: its normalized throughput is 0, so the infrastructure score is 0.</p>\n", f);
        }
}

static void html_ops(FILE *f, const tb_model_run *r) {
    fputs("<h2 id=\"infra\">Infrastructure operations</h2>\n<div class=\"tw\"><table>\n<tr><th class=\"n\">tiles</th>"
          "<th class=\"n\">"
          "phase</th><th>operation</th><th>kind</th><th class=\"n\">users</th><th class=\"n\">ok</th><th "
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
    fputs("</table></div>\n<p class=\"note\">ok: the ops that succeeded (counted as tile ops are); QoS judges ok + "
          "errors.</p>\n",
          f);
}

/* A kept output, escaped: its last lines (tail_start), cut at a UTF-8 boundary. */
static void html_output(FILE *f, const char *s) {
    int earlier;
    s = tail_start(s, &earlier);
    while (((unsigned char)*s & 0xc0) == 0x80)
        s++;
    fputs("<pre>", f);
    if (earlier) fprintf(f, "(%d earlier line%s in the results store)\n", earlier, earlier == 1 ? "" : "s");
    tb_html_escape_file(f, s);
    fputs("</pre>\n", f);
}

/* After the shown ones: how many more failed ops of each operation the phase kept. */
static void html_more_failed(FILE *f, const tb_model_level *lv) {
    for (size_t k = 0; k < lv->n_infra; k++) {
        int n = n_failed(lv, S(lv->infra[k].name));
        if (n <= SHOW_FAILED) continue;
        fprintf(f, "<p class=\"note\">%lld tiles, phase %lld: ", (long long)lv->tiles, (long long)lv->phase);
        tb_html_escape_file(f, S(lv->infra[k].name));
        fprintf(f, ": %d more failed ops kept (the JSON report has them all)</p>\n", n - SHOW_FAILED);
    }
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
            fprintf(f, ", user %lld, tile %lld, at ", (long long)o->user, (long long)o->tile);
            tb_html_escape_file(f, S(o->started_at));
            fputs(": ", f);
            tb_html_escape_file(f, S(o->status));
            b[0] = '\0';
            if (o->exit_code.known) snprintf(b, sizeof b, ", exit %lld", (long long)o->exit_code.v);
            fprintf(f, "%s, %.1f ms</p>\n", b, o->duration_ms);
            html_output(f, S(o->output));
        }
        if (shown) html_more_failed(f, lv);
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
