/*
 * reports.c: check 2's last part: the bundle's other reports against
 * report.json, whose figures the rest of check 2 recomputes. report.csv
 * (one row per level x workload x tile x op, then each operation's row) must
 * hold the level's and the workload's figures of report.json, to the same
 * relative tolerance of 1e-9, and its interference table after a blank line
 * report.json's run.interference (whose figures interference.c recomputes);
 * report.html's table of load levels must show each level's steady time,
 * score, mean power and PPKW as report.json's figures print with the page's
 * decimals (1, 3, 1 and 2; "&ndash;" for none). The HTML is read as text: the
 * rows of the table after <h2 id="levels">, and the headline cards after
 * <h2 id="summary"> (Peak score, Peak PPKW, Overall efficiency, Active idle:
 * 3, 2, 2 and 1 decimals), each the <div class="v"> after its <div class="k">.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"
#include "verify/vmath.h"

/* A number of report.json (NAN for null or absent). */
static double jnum(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The rows report.csv gives a level of report.json: one per op of each
 * workload (one for a workload without ops, one for a level without
 * workloads), then one per operation. */
static size_t level_rows(const json_t *lvj) {
    const json_t *wls = json_object_get(lvj, "workloads");
    size_t n = 0, i;
    json_t *w;
    json_array_foreach(wls, i, w) {
        size_t k = json_array_size(json_object_get(w, "operations"));
        n += k ? k : 1;
    }
    if (json_array_size(wls) == 0) n = 1;
    return n + json_array_size(json_object_get(lvj, "infra"));
}

typedef struct cctx {
    const tb_vcsv *t;
    tb_vresult *r;
    size_t agree, failed;
} cctx;

/* Cell (row, col) against the published value: both empty, or equal to the
 * tolerance. */
static void same_num(cctx *c, size_t row, const char *col, double pub, const char *tag) {
    double v;
    int rc = tb_vcsv_real(c->t, row, tb_vcsv_col(c->t, col), &v);
    char name[200];
    if ((rc == 0 && isnan(pub)) || (rc == 1 && tb_v_close(pub, v, TB_V_REL))) {
        c->agree++;
        return;
    }
    c->failed++;
    if (c->failed > 20) return; /* one edit shows in many rows: the first say it */
    snprintf(name, sizeof name, "report.csv row %zu (%s) %s", row + 1, tag, col);
    tb_vresult_add(
        c->r, 0, name, "report.json's figure, relative tolerance 1e-09", "csv %s, report.json %.12g",
        tb_vcsv_get(c->t, row, tb_vcsv_col(c->t, col)) ? tb_vcsv_get(c->t, row, tb_vcsv_col(c->t, col)) : "empty", pub);
}

/* Parses len bytes of report.csv from text as table what into t: 0, or -1
 * after a FAIL line (t is freed). */
static int parse_part(const char *what, const char *text, size_t len, tb_vcsv *t, tb_vresult *r) {
    char err[TB_ERR_LEN];
    if (tb_vcsv_parse(what, text, len, t, err) == 0) return 0;
    tb_vresult_add(r, 0, what, "a readable CSV", "%s", err);
    tb_vcsv_free(t);
    return -1;
}

/* A table's closing line: its rows against the want report.json gives,
 * then its figures (what failed named up to 20 lines by same_num). */
static void table_verdict(const char *what, const char *rows_limit, const char *pass_limit, size_t want,
                          const cctx *c) {
    if (want != c->t->n_rows)
        tb_vresult_add(c->r, 0, what, rows_limit, "%zu rows, report.json gives %zu", c->t->n_rows, want);
    else if (c->failed == 0)
        tb_vresult_add(c->r, 1, what, pass_limit, "%zu rows, %zu figures agree", c->t->n_rows, c->agree);
    else if (c->failed > 20)
        tb_vresult_add(c->r, 0, what, "report.json's figures", "%zu figures differ in all (the first 20 named)",
                       c->failed);
}

/* The workload (or operation) a row names, in the level's report entry. */
static const json_t *row_workload(const json_t *lvj, const char *name, int64_t tile, int *infra) {
    size_t i;
    json_t *o;
    *infra = strncmp(name, "infra.", 6) == 0;
    json_array_foreach(json_object_get(lvj, *infra ? "infra" : "workloads"), i, o) {
        const char *n = json_string_value(json_object_get(o, "name"));
        if (!n) continue;
        if (*infra && strcmp(n, name + 6) == 0) return o;
        if (!*infra && strcmp(n, name) == 0 && json_integer_value(json_object_get(o, "tile")) == tile) return o;
    }
    return NULL;
}

static void csv_level(cctx *c, size_t row, const json_t *lvj, const char *tag) {
    const char *wl = tb_vcsv_get(c->t, row, tb_vcsv_col(c->t, "workload"));
    int64_t tile = tb_vcell_int(c->t, row, "tile", 0);
    int infra;
    const json_t *w;
    same_num(c, row, "steady_s", jnum(lvj, "steady_s"), tag);
    same_num(c, row, "score", jnum(lvj, "score"), tag);
    same_num(c, row, "avg_watts", jnum(lvj, "avg_watts"), tag);
    same_num(c, row, "ppkw", jnum(lvj, "ppkw"), tag);
    if (!wl) return;
    if (!(w = row_workload(lvj, wl, tile, &infra))) {
        c->failed++;
        tb_vresult_add(c->r, 0, "report.csv", "the workloads of report.json",
                       "row %zu (%s): %.100s tile %lld is not "
                       "in report.json",
                       row + 1, tag, wl, (long long)tile);
        return;
    }
    same_num(c, row, "throughput", jnum(w, infra ? "ops_per_hour" : "throughput"), tag);
    same_num(c, row, "reference", jnum(w, "reference"), tag);
    same_num(c, row, "normalized", jnum(w, "normalized"), tag);
}

/* report.csv's first table: its header and rows, the text up to the blank
 * line before the interference table. */
static void check_csv(const tb_vbundle *b, const tb_vdata *d, tb_vresult *r) {
    const tb_vfile *f = tb_vbundle_find(b, "report.csv");
    const json_t *levels = json_object_get(json_object_get(d->report, "run"), "levels");
    const char *end;
    tb_vcsv t;
    cctx c = {&t, r, 0, 0};
    size_t row = 0, i;
    json_t *lvj;
    if (!f) {
        tb_vresult_add(r, 0, "report.csv", "in every bundle (docs/bundle.md)", "absent");
        return;
    }
    end = strstr((const char *)f->data, "\r\n\r\n");
    if (parse_part("report.csv", (const char *)f->data, end ? (size_t)(end - (const char *)f->data) + 2 : f->len, &t,
                   r) != 0)
        return;
    json_array_foreach(levels, i, lvj) {
        size_t n = level_rows(lvj);
        char tag[64];
        snprintf(tag, sizeof tag, "level %zu: tiles %lld, phase %lld", i + 1,
                 (long long)json_integer_value(json_object_get(lvj, "tiles")),
                 (long long)json_integer_value(json_object_get(lvj, "phase")));
        for (size_t k = 0; k < n && row < t.n_rows; k++, row++) {
            if (tb_vcell_int(&t, row, "tiles", -1) != json_integer_value(json_object_get(lvj, "tiles")) ||
                tb_vcell_int(&t, row, "phase", -1) != json_integer_value(json_object_get(lvj, "phase"))) {
                tb_vresult_add(r, 0, "report.csv", "report.json's levels in order",
                               "row %zu: tiles %s, phase %s; %s "
                               "has tiles %lld, phase %lld",
                               row + 1, tb_vcell(&t, row, "tiles") ? tb_vcell(&t, row, "tiles") : "empty",
                               tb_vcell(&t, row, "phase") ? tb_vcell(&t, row, "phase") : "empty", tag,
                               (long long)json_integer_value(json_object_get(lvj, "tiles")),
                               (long long)json_integer_value(json_object_get(lvj, "phase")));
                tb_vcsv_free(&t);
                return;
            }
            csv_level(&c, row, lvj, tag);
        }
    }
    table_verdict("report.csv", "one row per level, workload, tile and op of report.json",
                  "report.json's figures, relative tolerance 1e-09", row, &c);
    tb_vcsv_free(&t);
}

/* ---- report.csv's interference table ------------------------------------ */

static const char *const INTF_COLS[] = {"tiles",
                                        "repeat",
                                        "workload",
                                        "throughput_alone",
                                        "throughput_together",
                                        "throughput_ratio",
                                        "ops_per_s_alone",
                                        "avg_watts_alone",
                                        "marginal_watts_alone",
                                        "joules_per_op_alone",
                                        "rule",
                                        "percentile",
                                        "alone_ms",
                                        "together_ms",
                                        "percentile_ratio",
                                        "active_idle_watts",
                                        "marginal_watts_together",
                                        "marginal_watts_alone_sum",
                                        "sharing_saves_watts",
                                        "sharing_saves_pct"};
#define N_INTF_COLS (sizeof INTF_COLS / sizeof INTF_COLS[0])

/* Row `row` of the table: level lo's workload wo and its percentile po
 * (NULL: a workload without percentile rules), as report.json gives them. */
static void intf_row(cctx *c, size_t row, const json_t *t, const json_t *lo, const json_t *wo, const json_t *po) {
    static const char *const wl_keys[] = {"throughput_alone",   "throughput_together", "throughput_ratio",
                                          "ops_per_s_alone",    "avg_watts_alone",     "marginal_watts_alone",
                                          "joules_per_op_alone"};
    static const char *const lv_keys[] = {"marginal_watts_together", "marginal_watts_alone_sum", "sharing_saves_watts",
                                          "sharing_saves_pct"};
    const char *w = json_string_value(json_object_get(wo, "name")),
               *rule = json_string_value(json_object_get(po, "rule"));
    const char *cw = tb_vcsv_get(c->t, row, tb_vcsv_col(c->t, "workload"));
    const char *cr = tb_vcsv_get(c->t, row, tb_vcsv_col(c->t, "rule"));
    char tag[200];
    snprintf(tag, sizeof tag, "interference: tiles %lld, repeat %lld, %.60s",
             (long long)json_integer_value(json_object_get(lo, "tiles")),
             (long long)json_integer_value(json_object_get(lo, "repeat")), w ? w : "?");
    same_num(c, row, "tiles", jnum(lo, "tiles"), tag);
    same_num(c, row, "repeat", json_is_integer(json_object_get(lo, "repeat")) ? jnum(lo, "repeat") : 1.0, tag);
    if (!w || !cw || strcmp(w, cw) != 0 || (po ? !rule || !cr || strcmp(rule, cr) != 0 : cr && cr[0])) {
        c->failed++;
        tb_vresult_add(c->r, 0, "report.csv interference", "report.json's workloads and rules in order",
                       "row %zu: %.60s %.100s, report.json %.60s %.100s", row + 1, cw ? cw : "empty", cr ? cr : "",
                       w ? w : "?", rule ? rule : "");
        return;
    }
    for (size_t k = 0; k < sizeof wl_keys / sizeof wl_keys[0]; k++)
        same_num(c, row, wl_keys[k], jnum(wo, wl_keys[k]), tag);
    same_num(c, row, "percentile", po ? jnum(po, "percentile") : NAN, tag);
    same_num(c, row, "alone_ms", po ? jnum(po, "alone_ms") : NAN, tag);
    same_num(c, row, "together_ms", po ? jnum(po, "together_ms") : NAN, tag);
    same_num(c, row, "percentile_ratio", po ? jnum(po, "ratio") : NAN, tag);
    same_num(c, row, "active_idle_watts", jnum(t, "active_idle_watts"), tag);
    for (size_t k = 0; k < sizeof lv_keys / sizeof lv_keys[0]; k++)
        same_num(c, row, lv_keys[k], jnum(lo, lv_keys[k]), tag);
}

/* The rows of report.json's interference table t against the CSV's table:
 * one per level x workload x percentile rule (one for a workload without). */
static size_t intf_rows(cctx *c, const json_t *t) {
    size_t row = 0, i, k, p;
    json_t *lo, *wo, *po;
    json_array_foreach(json_object_get(t, "levels"), i, lo) {
        json_array_foreach(json_object_get(lo, "workloads"), k, wo) {
            const json_t *pcts = json_object_get(wo, "percentiles");
            if (json_array_size(pcts) == 0) {
                if (row < c->t->n_rows) intf_row(c, row, t, lo, wo, NULL);
                row++;
            }
            json_array_foreach(pcts, p, po) {
                if (row < c->t->n_rows) intf_row(c, row, t, lo, wo, po);
                row++;
            }
        }
    }
    return row;
}

/* report.csv's second table, after its blank line, against report.json's
 * run.interference: present exactly when that is, the same columns, rows
 * and figures (relative tolerance 1e-9, an empty cell for null). */
static void check_csv_interference(const tb_vbundle *b, const tb_vdata *d, tb_vresult *r) {
    const tb_vfile *f = tb_vbundle_find(b, "report.csv");
    const json_t *intf = json_object_get(json_object_get(d->report, "run"), "interference");
    const char *text = f ? (const char *)f->data : NULL, *sep = text ? strstr(text, "\r\n\r\n") : NULL;
    tb_vcsv t;
    cctx c = {&t, r, 0, 0};
    size_t want;
    if (!f) return; /* said by check_csv */
    if (!json_is_object(intf)) {
        if (sep && sep[4])
            tb_vresult_add(r, 0, "report.csv interference", "no second table without report.json's interference",
                           "a table after the blank line");
        return;
    }
    if (!sep) {
        tb_vresult_add(r, 0, "report.csv interference", "report.json's interference table after a blank line",
                       "no blank line");
        return;
    }
    sep += 4;
    if (parse_part("report.csv interference", sep, f->len - (size_t)(sep - text), &t, r) != 0) return;
    for (size_t k = 0; k < N_INTF_COLS; k++)
        if (t.n_cols != N_INTF_COLS || strcmp(t.cols[k], INTF_COLS[k]) != 0) {
            tb_vresult_add(r, 0, "report.csv interference", "the columns of docs/interference.md",
                           "column %zu is %.60s, not %s", k + 1, k < t.n_cols ? t.cols[k] : "missing", INTF_COLS[k]);
            tb_vcsv_free(&t);
            return;
        }
    want = intf_rows(&c, intf);
    table_verdict("report.csv interference", "one row per level, workload and percentile rule",
                  "report.json's interference table, relative tolerance 1e-09", want, &c);
    tb_vcsv_free(&t);
}

/* The text of the next <td> cell at or after *p before end (tags inside
 * dropped), into out; 0 when there is none. */
static int next_cell(const char **p, const char *end, char *out, size_t len) {
    const char *s = strstr(*p, "<td"), *e;
    size_t n = 0;
    if (!s || s >= end || !(s = strchr(s, '>')) || !(e = strstr(s, "</td>")) || e > end) return 0;
    for (s++; s < e && n + 1 < len; s++) {
        if (*s == '<') {
            const char *c = memchr(s, '>', (size_t)(e - s));
            if (!c) break;
            s = c;
            continue;
        }
        out[n++] = *s;
    }
    out[n] = '\0';
    *p = e + 5;
    return 1;
}

/* report.json's figure as the page prints it. */
static void as_page(double v, int dec, char *out, size_t len) {
    if (isfinite(v))
        snprintf(out, len, "%.*f", dec, v);
    else
        snprintf(out, len, "&ndash;");
}

static void check_html(const tb_vbundle *b, const tb_vdata *d, tb_vresult *r) {
    static const struct {
        const char *key, *label;
        int dec, cell;
    } figs[] = {{"steady_s", "steady (s)", 1, 2},
                {"score", "score", 3, 3},
                {"avg_watts", "avg W", 1, 4},
                {"ppkw", "PPKW", 2, 5}};
    const tb_vfile *f = tb_vbundle_find(b, "report.html");
    const json_t *levels = json_object_get(json_object_get(d->report, "run"), "levels");
    const char *p = f ? strstr((const char *)f->data, "<h2 id=\"levels\">") : NULL, *end;
    size_t i, shown = 0, before = r->failed;
    json_t *lvj;
    if (!p) {
        tb_vresult_add(r, 0, "report.html", "a table of load levels", f ? "no <h2 id=\"levels\">" : "absent");
        return;
    }
    end = strstr(p, "</table>");
    if (!end) end = p + strlen(p);
    json_array_foreach(levels, i, lvj) {
        char cell[6][96], want[64], name[360];
        const char *tr = strstr(p, "<tr class=\"level");
        if (!tr || tr > end) break;
        p = tr;
        for (int k = 0; k < 6; k++)
            if (!next_cell(&p, end, cell[k], sizeof cell[k])) cell[k][0] = '\0';
        shown++;
        for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++) {
            as_page(jnum(lvj, figs[k].key), figs[k].dec, want, sizeof want);
            if (strcmp(cell[figs[k].cell], want) == 0) continue;
            snprintf(name, sizeof name, "report.html level %zu (tiles %s, phase %s) %s", i + 1, cell[0], cell[1],
                     figs[k].label);
            tb_vresult_add(r, 0, name, "report.json's figure as the page prints it", "page shows %s, report.json %s",
                           cell[figs[k].cell], want);
        }
    }
    if (shown != json_array_size(levels))
        tb_vresult_add(r, 0, "report.html", "one row per level of report.json", "%zu rows, report.json %zu levels",
                       shown, json_array_size(levels));
    else if (r->failed == before)
        tb_vresult_add(r, 1, "report.html", "report.json's figures as the page prints them",
                       "%zu levels: steady time, score, mean power and PPKW agree", shown);
}

/* The value a headline card of the summary shows (the text of its
 * <div class="v">), into out; 0 when the page has no such card. */
static int card_value(const char *sum, const char *end, const char *key, char *out, size_t len) {
    char k[96];
    const char *p, *v, *e;
    snprintf(k, sizeof k, "<div class=\"k\">%s</div>", key);
    if (!(p = strstr(sum, k)) || p > end) return 0;
    p += strlen(k);
    if (strncmp(p, "<div class=\"v\">", 15) != 0) return 0;
    v = p + 15;
    if (!(e = strstr(v, "</div>")) || e > end || (size_t)(e - v) >= len) return 0;
    memcpy(out, v, (size_t)(e - v));
    out[e - v] = '\0';
    return 1;
}

/* The summary's headline cards against report.json's run figures. */
static void check_cards(const tb_vbundle *b, const tb_vdata *d, tb_vresult *r) {
    static const struct {
        const char *key, *label;
        int dec;
    } cards[] = {{"peak_score", "Peak score", 3},
                 {"peak_ppkw", "Peak PPKW", 2},
                 {"overall_efficiency", "Overall efficiency", 2},
                 {"active_idle_watts", "Active idle", 1}};
    const tb_vfile *f = tb_vbundle_find(b, "report.html");
    const json_t *run = json_object_get(d->report, "run");
    const char *p = f ? strstr((const char *)f->data, "<h2 id=\"summary\">") : NULL, *end;
    size_t before = r->failed;
    if (!p) {
        tb_vresult_add(r, 0, "report.html summary", "headline cards", f ? "no <h2 id=\"summary\">" : "absent");
        return;
    }
    end = strstr(p, "<h2 id=\"levels\">");
    if (!end) end = p + strlen(p);
    for (size_t k = 0; k < sizeof cards / sizeof cards[0]; k++) {
        char got[96], want[64], name[128];
        as_page(jnum(run, cards[k].key), cards[k].dec, want, sizeof want);
        snprintf(name, sizeof name, "report.html card %s", cards[k].label);
        if (!card_value(p, end, cards[k].label, got, sizeof got))
            tb_vresult_add(r, 0, name, "report.json's figure as the page prints it", "the page has no such card");
        else if (strcmp(got, want) != 0)
            tb_vresult_add(r, 0, name, "report.json's figure as the page prints it", "page shows %.60s, report.json %s",
                           got, want);
    }
    if (r->failed == before)
        tb_vresult_add(r, 1, "report.html cards", "report.json's figures as the page prints them",
                       "peak score, peak PPKW, overall efficiency and active idle agree");
}

void tb_vcheck_reports(const tb_vbundle *b, const tb_vdata *d, tb_vresult *r) {
    check_csv(b, d, r);
    check_csv_interference(b, d, r);
    check_html(b, d, r);
    check_cards(b, d, r);
}
