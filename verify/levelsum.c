/*
 * levelsum.c: check 2's level summaries: what report.json says of each
 * level beside its figures. Its QoS verdict from the level's rows of
 * qos.csv by docs/method.md ("Two verdicts per level", "Three outcomes per
 * rule"): qos_pass is false when a judged rule (of the level or of one
 * tile) failed; qos_not_judged counts the level's rules left not judged,
 * in the level's verdict or a tile's (one per rule name); qos_verdict is
 * "fail" without qos_pass, else "incomplete" when a rule went unjudged,
 * else "pass". And the meter uncertainty of its samples: the largest and
 * the mean uncertainty_pct of power_samples of the level (samples without
 * one left out), to the figures' relative tolerance.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/tb_common.h"
#include "verify/verify_int.h"
#include "verify/vmath.h"

typedef struct verdict {
    int pass;
    size_t not_judged, rows;
} verdict;

/* Whether an earlier not-judged row of the level named the same rule. */
static int seen_rule(const tb_vcsv *q, size_t upto, int64_t id, const char *rule) {
    for (size_t k = 0; k < upto; k++)
        if (tb_vcell_int(q, k, "level_id", -1) == id && tb_vcell_int(q, k, "judged", 1) == 0 &&
            strcmp(tb_vcell(q, k, "rule") ? tb_vcell(q, k, "rule") : "", rule) == 0)
            return 1;
    return 0;
}

static verdict level_verdict(const tb_vcsv *q, int64_t id) {
    verdict v = {1, 0, 0};
    for (size_t k = 0; k < q->n_rows; k++) {
        const char *rule = tb_vcell(q, k, "rule");
        if (tb_vcell_int(q, k, "level_id", -1) != id) continue;
        v.rows++;
        if (tb_vcell_int(q, k, "judged", 1) == 0) {
            if (!seen_rule(q, k, id, rule ? rule : "")) v.not_judged++;
        } else if (tb_vcell_int(q, k, "pass", 0) == 0) {
            v.pass = 0;
        }
    }
    return v;
}

static void fail_line(tb_vresult *r, const tb_vlevel *lv, const char *key, const char *limit, const char *fig) {
    char name[200];
    snprintf(name, sizeof name, "report.json %s %s", lv->tag, key);
    tb_vresult_add(r, 0, name, limit, "%s", fig);
}

static size_t check_verdict(const tb_vdata *d, const tb_vlevel *lv, const json_t *lvj, tb_vresult *r) {
    verdict v = level_verdict(&d->qos, lv->id);
    const json_t *qp = json_object_get(lvj, "qos_pass"), *nj = json_object_get(lvj, "qos_not_judged");
    const char *pv = json_string_value(json_object_get(lvj, "qos_verdict"));
    const char *want = !v.pass ? "fail" : v.not_judged ? "incomplete" : "pass";
    char fig[200];
    size_t bad = 0;
    if (!json_is_boolean(qp) || json_is_true(qp) != v.pass) {
        snprintf(fig, sizeof fig, "published %s, qos.csv's %zu rows give %s",
                 json_is_boolean(qp) ? (json_is_true(qp) ? "true" : "false") : "no boolean", v.rows,
                 v.pass ? "true" : "false");
        fail_line(r, lv, "qos_pass", "false when a judged rule failed (qos.csv)", fig), bad++;
    }
    if (!json_is_integer(nj) || json_integer_value(nj) != (json_int_t)v.not_judged) {
        snprintf(fig, sizeof fig, "published %lld, qos.csv gives %zu", (long long)json_integer_value(nj), v.not_judged);
        fail_line(r, lv, "qos_not_judged", "the rules not judged (qos.csv judged = 0)", fig), bad++;
    }
    if (!pv || strcmp(pv, want) != 0) {
        snprintf(fig, sizeof fig, "published %.40s, qos.csv gives %s", pv ? pv : "none", want);
        fail_line(r, lv, "qos_verdict", "fail, incomplete or pass (docs/method.md)", fig), bad++;
    }
    return bad;
}

static size_t check_uncertainty(const tb_vlevel *lv, const json_t *lvj, tb_vresult *r) {
    double max = NAN, sum = 0.0, pub;
    size_t n = 0, bad = 0;
    char fig[200];
    for (size_t k = 0; k < lv->n_s; k++) {
        double u = lv->s[k].unc_pct;
        if (!isfinite(u)) continue;
        if (!(u <= max)) max = u;
        sum += u;
        n++;
    }
    pub = json_is_number(json_object_get(lvj, "max_uncertainty_pct"))
              ? json_number_value(json_object_get(lvj, "max_uncertainty_pct"))
              : NAN;
    if (!tb_v_close(pub, max, TB_V_REL)) {
        snprintf(fig, sizeof fig, "published %.12g, recomputed %.12g from %zu samples", pub, max, n);
        fail_line(r, lv, "max_uncertainty_pct", "relative tolerance 1e-09", fig), bad++;
    }
    pub = json_is_number(json_object_get(lvj, "mean_uncertainty_pct"))
              ? json_number_value(json_object_get(lvj, "mean_uncertainty_pct"))
              : NAN;
    if (!tb_v_close(pub, n ? sum / (double)n : NAN, TB_V_REL)) {
        snprintf(fig, sizeof fig, "published %.12g, recomputed %.12g from %zu samples", pub, n ? sum / (double)n : NAN,
                 n);
        fail_line(r, lv, "mean_uncertainty_pct", "relative tolerance 1e-09", fig), bad++;
    }
    return bad;
}

void tb_vcheck_levelsum(const tb_vdata *d, tb_vresult *r) {
    const json_t *levels = json_object_get(json_object_get(d->report, "run"), "levels");
    size_t bad = 0, shown = 0;
    for (size_t i = 0; i < d->n_lv; i++) {
        const json_t *lvj = tb_vreport_level(levels, i, &d->lv[i]);
        if (!lvj) continue; /* figures.c names a level report.json lacks */
        shown++;
        bad += check_verdict(d, &d->lv[i], lvj, r);
        bad += check_uncertainty(&d->lv[i], lvj, r);
    }
    if (!bad)
        tb_vresult_add(r, 1, "report.json levels", "qos.csv's verdicts and the samples' uncertainty",
                       "%zu levels: QoS verdict, rules not judged, max and mean uncertainty agree", shown);
}
