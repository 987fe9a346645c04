/*
 * interference.c: check 2's consolidation-interference table (report.json
 * run.interference, docs/interference.md), recomputed from the levels: for
 * each load level of N tiles and repeat, and each workload w,
 *  - ops per second alone and together: w's metric ops summed over tiles
 *    and phases of its alone levels (levels.alone = w) and of the whole
 *    tile's (alone NULL), over the sum of their steady windows; the
 *    throughputs the same in w's unit, and their ratio;
 *  - w's alone mean power (its phases' mean powers weighted by their
 *    windows), marginal power (that minus active idle) and energy per op
 *    (marginal power over ops per second alone);
 * and for the tile the mean power together, marginal together, the sum of
 *  the marginal powers alone and what sharing saves (W and %);
 * and each percentile rule of w (a "w.Op pNN <= ..." verdict of the whole
 * tile's first level of N tiles and repeat): the percentile alone and
 * together from the corrected histograms of histograms.hlog merged over the
 * tiles and phases (to the histogram's precision, as the QoS verdicts),
 * their ratio together / alone, and whether the rule was judged in every
 * phase (qos.csv's level rows).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/tb_common.h"
#include "verify/verify_int.h"
#include "verify/vmath.h"

typedef struct span {
    double ops, secs, per, energy; /* metric ops, steady seconds, unit per second, W x s */
    int unknown;                   /* a workload whose kind or unit is unknown, or no power */
} span;

/* Workload w (NULL: every level's power only) over the levels of tiles and
 * repeat that ran alone (NULL: the whole tile). */
static span sum_levels(const tb_vdata *d, const tb_vrefs *f, int64_t tiles, int64_t repeat, const char *alone,
                       const char *w) {
    span s = {0, 0, NAN, 0, 0};
    for (size_t i = 0; i < d->n_lv; i++) {
        const tb_vlevel *lv = &d->lv[i];
        double watts;
        if (lv->tiles != tiles || lv->repeat != repeat || (!alone) != (!lv->alone) ||
            (alone && strcmp(alone, lv->alone) != 0))
            continue;
        watts = tb_vmean_power(lv->s, lv->n_s, d->n_meters);
        s.secs += lv->window_s;
        s.energy += watts * lv->window_s;
        if (isnan(watts)) s.unknown = 1;
        for (size_t r = 0; w && r < d->workloads.n_rows; r++) {
            const char *n = tb_vcell(&d->workloads, r, "name");
            int64_t ops;
            if (tb_vcell_int(&d->workloads, r, "level_id", -1) != lv->id || !n || strcmp(n, w) != 0) continue;
            if ((ops = tb_vworkload_ops(d, f, r, &s.per)) < 0) s.unknown = 1;
            s.ops += (double)ops;
        }
    }
    return s;
}

static double ratio(double a, double b) { return isfinite(a) && isfinite(b) && b != 0.0 ? a / b : NAN; }

/* A number of report.json (NaN for null or absent). */
static double jnum(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

typedef struct ictx {
    tb_vresult *r;
    size_t ok;
    char where[96];
} ictx;

static void cmp(ictx *c, const json_t *o, const char *who, const char *key, double mine) {
    const json_t *v = json_object_get(o, key);
    double pub = json_is_number(v) ? json_number_value(v) : NAN;
    char name[300];
    if ((!isfinite(pub) && !isfinite(mine)) || tb_v_close(pub, mine, TB_V_REL)) {
        c->ok++;
        return;
    }
    snprintf(name, sizeof name, "figure interference %s %s %s", c->where, who, key);
    tb_vresult_add(c->r, 0, name, "relative tolerance 1e-09", "published %.12g, recomputed %.12g", pub, mine);
}

/* As qos_check.c: a percentile is the bucket's highest equivalent value
 * here, the bucket's edge clamped to the max in the report. */
#define HIST_REL    0.001
#define HIST_ABS_MS 0.001

/* Whether levels (tiles, repeat, alone) are lv. */
static int in_set(const tb_vlevel *lv, int64_t tiles, int64_t repeat, const char *alone) {
    return lv->tiles == tiles && lv->repeat == repeat && (!alone) == (!lv->alone) &&
           (!alone || strcmp(alone, lv->alone) == 0);
}

/* Percentile pct of w's op over the levels (tiles, repeat, alone), ms; NaN
 * when no op; -1 in *bad when the histograms cannot be merged. */
static double set_pct(const tb_vdata *d, int64_t tiles, int64_t repeat, const char *alone, const char *w,
                      const char *op, double pct, int *bad) {
    tb_vh_hist m;
    double v = NAN;
    memset(&m, 0, sizeof m);
    for (size_t i = 0; i < d->n_lv; i++)
        if (in_set(&d->lv[i], tiles, repeat, alone) && tb_vlatency_merge(d, d->lv[i].id, w, op, &m) != 0) *bad = 1;
    if (m.total > 0) v = (double)tb_vh_value_at_percentile(&m, pct) / 1000.0;
    free(m.counts);
    return v;
}

/* Whether rule was judged in every phase of (tiles, repeat, alone) that has it. */
static int set_judged(const tb_vdata *d, int64_t tiles, int64_t repeat, const char *alone, const char *rule) {
    for (size_t i = 0; i < d->n_lv; i++) {
        if (!in_set(&d->lv[i], tiles, repeat, alone)) continue;
        for (size_t q = 0; q < d->qos.n_rows; q++) {
            const char *n = tb_vcell(&d->qos, q, "rule");
            if (tb_vcell_int(&d->qos, q, "level_id", -1) == d->lv[i].id && tb_vcell_int(&d->qos, q, "tile", 0) == 0 &&
                n && strcmp(n, rule) == 0 && tb_vcell_int(&d->qos, q, "judged", 1) == 0)
                return 0;
        }
    }
    return 1;
}

/* "w.Op pNN <= LIMIT ms": 1 with op and the percentile, else 0. */
static int pct_rule(const char *rule, const char *w, char *op, size_t oplen, double *pct) {
    size_t wl = strlen(w), ol;
    const char *sp;
    char rel[4];
    if (strncmp(rule, w, wl) != 0 || rule[wl] != '.' || !(sp = strchr(rule + wl + 1, ' '))) return 0;
    ol = (size_t)(sp - rule - wl - 1);
    if (ol == 0 || ol >= oplen || sp[1] != 'p' || sscanf(sp + 2, "%lf %3s", pct, rel) != 2 || strcmp(rel, "<=") != 0)
        return 0;
    memcpy(op, rule + wl + 1, ol);
    op[ol] = '\0';
    return 1;
}

/* The number of w's percentile rules of the first whole-tile level of
 * (tiles, repeat). */
static size_t count_pct_rules(const tb_vdata *d, int64_t tiles, int64_t repeat, const char *w) {
    size_t n = 0;
    for (size_t i = 0; i < d->n_lv; i++) {
        if (!in_set(&d->lv[i], tiles, repeat, NULL)) continue;
        for (size_t q = 0; q < d->qos.n_rows; q++) {
            const char *rule = tb_vcell(&d->qos, q, "rule");
            char op[128];
            double p;
            if (tb_vcell_int(&d->qos, q, "level_id", -1) == d->lv[i].id && tb_vcell_int(&d->qos, q, "tile", 0) == 0 &&
                rule && pct_rule(rule, w, op, sizeof op, &p))
                n++;
        }
        return n;
    }
    return 0;
}

static void cmp_hist(ictx *c, const json_t *o, const char *who, const char *key, double mine) {
    const json_t *v = json_object_get(o, key);
    double pub = json_is_number(v) ? json_number_value(v) : NAN;
    char name[400];
    if ((!isfinite(pub) && !isfinite(mine)) || fabs(pub - mine) <= HIST_REL * fabs(mine) + HIST_ABS_MS) {
        c->ok++;
        return;
    }
    snprintf(name, sizeof name, "figure interference %s %s %s", c->where, who, key);
    tb_vresult_add(c->r, 0, name, "the histogram's precision, 0.1% + 1 us", "published %.12g, recomputed %.12g", pub,
                   mine);
}

/* Workload w's percentile ratios (wo's "percentiles") of (tiles, repeat). */
static void check_pcts(ictx *c, const tb_vdata *d, const json_t *wo, const char *w, int64_t tiles, int64_t repeat) {
    const json_t *arr = json_object_get(wo, "percentiles");
    size_t i, want = count_pct_rules(d, tiles, repeat, w);
    json_t *po;
    char who[400];
    if (json_array_size(arr) != want && want <= 16) { /* the report keeps at most 16 */
        snprintf(who, sizeof who, "figure interference %s %s percentiles", c->where, w);
        tb_vresult_add(c->r, 0, who, "one per percentile rule of the workload", "published %zu, the levels have %zu",
                       json_array_size(arr), want);
    }
    json_array_foreach(arr, i, po) {
        const char *rule = json_string_value(json_object_get(po, "rule"));
        char op[128];
        double pct, a, t;
        int bad = 0, judged;
        snprintf(who, sizeof who, "%s", rule ? rule : "?");
        if (!rule || !pct_rule(rule, w, op, sizeof op, &pct)) {
            tb_vresult_add(c->r, 0, "figure interference", "a percentile rule of the workload", "%s %s: rule %s",
                           c->where, w, rule ? rule : "missing");
            continue;
        }
        a = set_pct(d, tiles, repeat, w, w, op, pct, &bad);
        t = set_pct(d, tiles, repeat, NULL, w, op, pct, &bad);
        if (bad) {
            tb_vresult_add(c->r, 0, "figure interference", "readable histograms",
                           "%s %s: histograms of different "
                           "layouts",
                           c->where, who);
            continue;
        }
        cmp(c, po, who, "percentile", pct);
        cmp_hist(c, po, who, "alone_ms", a);
        cmp_hist(c, po, who, "together_ms", t);
        /* the ratio of the published two, which are checked just above */
        cmp(c, po, who, "ratio", ratio(jnum(po, "together_ms"), jnum(po, "alone_ms")));
        judged = set_judged(d, tiles, repeat, NULL, rule) && set_judged(d, tiles, repeat, w, rule);
        if (json_is_boolean(json_object_get(po, "judged")) &&
            json_boolean_value(json_object_get(po, "judged")) == judged)
            c->ok++;
        else
            tb_vresult_add(c->r, 0, "figure interference", "judged in every phase, as qos.csv says",
                           "%s %s judged: published %s, qos.csv %s", c->where, who,
                           json_is_true(json_object_get(po, "judged")) ? "true" : "false", judged ? "true" : "false");
    }
}

/* One level of the table: its workloads and the tile's figures. */
static void check_level(ictx *c, const tb_vdata *d, const tb_vrefs *f, const json_t *lo, double idle) {
    int64_t tiles = json_integer_value(json_object_get(lo, "tiles"));
    int64_t repeat =
        json_is_integer(json_object_get(lo, "repeat")) ? json_integer_value(json_object_get(lo, "repeat")) : 1;
    span all = sum_levels(d, f, tiles, repeat, NULL, NULL);
    double together = all.unknown ? NAN : ratio(all.energy, all.secs), sum = isfinite(idle) ? 0.0 : NAN;
    size_t i;
    json_t *wo;
    snprintf(c->where, sizeof c->where, "tiles %lld repeat %lld", (long long)tiles, (long long)repeat);
    json_array_foreach(json_object_get(lo, "workloads"), i, wo) {
        const char *w = json_string_value(json_object_get(wo, "name"));
        span a, t;
        double ops_a, ops_t, watts_a, marg;
        if (!w) continue;
        a = sum_levels(d, f, tiles, repeat, w, w);
        t = sum_levels(d, f, tiles, repeat, NULL, w);
        ops_a = ratio(a.ops, a.secs);
        ops_t = ratio(t.ops, t.secs);
        watts_a = a.unknown ? NAN : ratio(a.energy, a.secs);
        marg = isfinite(idle) ? watts_a - idle : NAN;
        sum += marg;
        cmp(c, wo, w, "ops_per_s_alone", ops_a);
        cmp(c, wo, w, "ops_per_s_together", ops_t);
        cmp(c, wo, w, "throughput_alone", ops_a * a.per);
        cmp(c, wo, w, "throughput_together", ops_t * t.per);
        cmp(c, wo, w, "throughput_ratio", ratio(ops_t, ops_a));
        cmp(c, wo, w, "avg_watts_alone", watts_a);
        cmp(c, wo, w, "marginal_watts_alone", marg);
        cmp(c, wo, w, "joules_per_op_alone", ratio(marg, ops_a));
        check_pcts(c, d, wo, w, tiles, repeat);
    }
    cmp(c, lo, "tile", "avg_watts_together", together);
    cmp(c, lo, "tile", "marginal_watts_together", together - idle);
    cmp(c, lo, "tile", "marginal_watts_alone_sum", sum);
    cmp(c, lo, "tile", "sharing_saves_watts", sum - (together - idle));
    cmp(c, lo, "tile", "sharing_saves_pct", sum > 0.0 ? 100.0 * (sum - (together - idle)) / sum : NAN);
}

void tb_vcheck_interference(const tb_vdata *d, tb_vresult *r) {
    const json_t *t = json_object_get(json_object_get(d->report, "run"), "interference");
    double idle = d->n_idle ? tb_vmean_power(d->idle, d->n_idle, d->n_meters) : NAN;
    ictx c = {r, 0, ""};
    size_t before = r->failed, i;
    int parsed;
    tb_vrefs *f;
    json_t *lo;
    if (!json_is_object(t)) return; /* a run without alone levels */
    f = tb_vrefs_load(d, &parsed);
    json_array_foreach(json_object_get(t, "levels"), i, lo) check_level(&c, d, f, lo, idle);
    tb_vrefs_free(f);
    if (r->failed == before)
        tb_vresult_add(r, 1, "figures interference", "each within relative tolerance 1e-09",
                       "%zu figures of %zu levels agree (throughput alone and together, marginal power, energy per "
                       "op, sharing saves, percentiles alone and together and their ratios)",
                       c.ok, json_array_size(json_object_get(t, "levels")));
}
