/*
 * latency.c: check 2's latency figures: each operation's count, mean,
 * percentiles and maximum of report.json (level x workload x tile x op),
 * and its "uncorrected" ones, recomputed from the op's histogram in
 * histograms.hlog (tag L<level id>/T<tile>/<workload>/<op>, the uncorrected
 * one with "/uncorrected" after it).
 *
 * The tolerance, 0.1% of the recomputed figure + 1 µs, is the histogram's
 * precision: tilebench records with 3 significant digits, so a bucket spans
 * at most 0.1% of its values, and a percentile or maximum read from the
 * log's buckets is the highest value of the bucket the run's own figure
 * came from. The mean is recomputed from each bucket's highest value,
 * where the run summed the exact latencies: at most one bucket width
 * above, so within the same tolerance. The count is exact.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/tb_common.h"
#include "verify/verify_int.h"

#define LAT_REL    0.001
#define LAT_ABS_MS 0.001

typedef struct lctx {
    tb_vresult *r;
    size_t figures, failed;
} lctx;

/* A name as the log's tag holds it: ',', ' ' and control characters '_'. */
static void tag_part(char *out, size_t len, const char *s) {
    size_t n = 0;
    for (; s && *s && n + 1 < len; s++) {
        unsigned char c = (unsigned char)*s;
        out[n++] = (char)(c == ',' || c == ' ' || c < 0x20 || c == 0x7f ? '_' : c);
    }
    out[n] = '\0';
}

static double jnum(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One published figure (ms) against the recomputed one. */
static void same_ms(lctx *c, const char *where, const char *key, double pub, double rec) {
    char name[400];
    c->figures++;
    if (isfinite(pub) && isfinite(rec) && fabs(pub - rec) <= LAT_REL * fabs(rec) + LAT_ABS_MS) return;
    if (!isfinite(pub) && !isfinite(rec)) return;
    if (++c->failed > 20) return; /* the first say it */
    snprintf(name, sizeof name, "latency %s %s", where, key);
    tb_vresult_add(c->r, 0, name, "the histogram's figure within 0.1% + 0.001 ms", "published %.6g, recomputed %.6g",
                   pub, rec);
}

/* The figures of object o (an op, or its "uncorrected") against h. */
static void op_figures(lctx *c, const char *where, const json_t *o, const tb_vh_hist *h) {
    static const struct {
        const char *key;
        double pct;
    } pcts[] = {{"p50_ms", 50.0}, {"p90_ms", 90.0}, {"p95_ms", 95.0}, {"p99_ms", 99.0}, {"p999_ms", 99.9}};
    int empty = h->total == 0;
    for (size_t k = 0; k < sizeof pcts / sizeof pcts[0]; k++)
        same_ms(c, where, pcts[k].key, jnum(o, pcts[k].key),
                empty ? NAN : (double)tb_vh_value_at_percentile(h, pcts[k].pct) / 1000.0);
    same_ms(c, where, "max_ms", jnum(o, "max_ms"), empty ? NAN : (double)tb_vh_max(h) / 1000.0);
    same_ms(c, where, "mean_ms", jnum(o, "mean_ms"), tb_vh_mean(h) / 1000.0);
}

/* A histogram the log lacks while report.json gives figures for it. */
static void no_hist(lctx *c, const char *where, const char *tag) {
    char name[400];
    c->failed++;
    snprintf(name, sizeof name, "latency %s", where);
    tb_vresult_add(c->r, 0, name, "its histogram in histograms.hlog", "no histogram tagged %s", tag);
}

static void check_op(lctx *c, const tb_vdata *d, const tb_vlevel *lv, const json_t *w, const json_t *op) {
    char wl[128], on[128], tag[300], where[360];
    const char *wn = json_string_value(json_object_get(w, "name"));
    const char *opn = json_string_value(json_object_get(op, "name"));
    const json_t *unc = json_object_get(op, "uncorrected");
    json_int_t tile = json_integer_value(json_object_get(w, "tile"));
    const tb_vh_hist *h;
    tag_part(wl, sizeof wl, wn);
    tag_part(on, sizeof on, opn);
    snprintf(tag, sizeof tag, "L%lld/T%lld/%s/%s", (long long)lv->id, (long long)tile, wl, on);
    snprintf(where, sizeof where, "%s tile %lld %.100s.%.100s", lv->tag, (long long)tile, wn ? wn : "?",
             opn ? opn : "?");
    if (!(h = tb_vh_log_find(&d->hlog, tag))) {
        if (json_integer_value(json_object_get(op, "count")) > 0) no_hist(c, where, tag);
        return;
    }
    c->figures++;
    if (!json_is_integer(json_object_get(op, "count")) ||
        (uint64_t)json_integer_value(json_object_get(op, "count")) != h->total) {
        char name[400];
        c->failed++;
        snprintf(name, sizeof name, "latency %s count", where);
        tb_vresult_add(c->r, 0, name, "the histogram's count", "published %lld, histogram %llu",
                       (long long)json_integer_value(json_object_get(op, "count")), (unsigned long long)h->total);
    }
    op_figures(c, where, op, h);
    strncat(tag, "/uncorrected", sizeof tag - strlen(tag) - 1);
    strncat(where, " uncorrected", sizeof where - strlen(where) - 1);
    if (!(h = tb_vh_log_find(&d->hlog, tag))) {
        if (json_is_object(unc)) no_hist(c, where, tag);
        return;
    }
    if (!json_is_object(unc)) {
        c->failed++;
        tb_vresult_add(c->r, 0, "latency uncorrected", "report.json's figures of a stored histogram",
                       "%s: null in report.json, histograms.hlog has %s", where, tag);
        return;
    }
    op_figures(c, where, unc, h);
}

void tb_vcheck_latency(const tb_vdata *d, tb_vresult *r) {
    const json_t *levels = json_object_get(json_object_get(d->report, "run"), "levels");
    lctx c = {r, 0, 0};
    size_t before = r->failed;
    for (size_t i = 0; i < d->n_lv; i++) {
        const json_t *lvj = tb_vreport_level(levels, i, &d->lv[i]), *w, *op;
        size_t k, m;
        if (!lvj) continue; /* figures.c names a level report.json lacks */
        json_array_foreach(json_object_get(lvj, "workloads"), k, w) {
            json_array_foreach(json_object_get(w, "operations"), m, op) { check_op(&c, d, &d->lv[i], w, op); }
        }
    }
    if (c.failed > 20)
        tb_vresult_add(r, 0, "latency", "the histograms' figures", "%zu figures differ in all (the first 20 named)",
                       c.failed);
    else if (r->failed == before)
        tb_vresult_add(r, 1, "latency", "the histograms' figures within 0.1% + 0.001 ms",
                       "%zu op figures agree with histograms.hlog", c.figures);
}
