/*
 * model.c: figures the read model derives from the stored levels: the
 * per-level summary over phases and repeats, and the run's peaks and
 * overall efficiency (model.h).
 */
#include "results/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/energy.h"

const char *tb_model_qos_verdict(int qos_pass, int not_judged) {
    return !qos_pass ? "fail" : not_judged > 0 ? "incomplete" : "pass";
}

double tb_model_steady_round_up(double s) {
    double step = s <= 600 ? 10 : s <= 3600 ? 60 : 300;
    if (!isfinite(s) || s <= 0) return s;
    return ceil(ceil(s) / step) * step;
}

/* The hint's part of one rule row not judged: the steady state its ops
 * scale to (steady_s x min_ops / ops), the largest kept in *c. */
static void count_unjudged_row(const tb_model_qos *q, double steady_s, tb_model_qos_counts *c) {
    double need;
    if (!q->ops.known || !q->min_ops.known || q->min_ops.v <= 0 || !(steady_s > 0)) return;
    if (q->ops.v <= 0) {
        if (!c->no_ops++) c->first_no_ops = q->rule;
        return;
    }
    need = steady_s * (double)q->min_ops.v / (double)q->ops.v;
    if (isnan(c->steady_s) || need > c->steady_raw_s) {
        c->steady_raw_s = need;
        c->steady_s = tb_model_steady_round_up(need);
        c->worst = q->rule;
        c->worst_tile = q->tile;
        c->worst_ops = q->ops.v;
        c->worst_min_ops = q->min_ops.v;
    }
}

void tb_model_qos_count(const tb_model_qos *level, size_t n, const tb_model_qos *tiles, size_t nt, double steady_s,
                        tb_model_qos_counts *c) {
    memset(c, 0, sizeof *c);
    c->steady_s = c->steady_raw_s = NAN;
    for (size_t i = 0; i < n; i++) {
        const char *rule = level[i].rule ? level[i].rule : "";
        int failed = level[i].judged && !level[i].pass, unjudged = !level[i].judged;
        for (size_t k = 0; k < nt; k++) {
            if (strcmp(tiles[k].rule ? tiles[k].rule : "", rule) != 0) continue;
            if (tiles[k].judged && !tiles[k].pass) failed = 1;
            if (!tiles[k].judged) unjudged = 1;
        }
        if (failed) {
            if (!c->failed++) c->first_failed = level[i].rule;
        } else if (unjudged) {
            c->not_judged++;
        } else {
            c->passed++;
        }
    }
    c->judged = c->passed + c->failed;
    for (size_t i = 0; i < n; i++)
        if (!level[i].judged) count_unjudged_row(&level[i], steady_s, c);
    for (size_t k = 0; k < nt; k++)
        if (!tiles[k].judged) count_unjudged_row(&tiles[k], steady_s, c);
}

void tb_model_level_qos_count(const tb_model_level *lv, tb_model_qos_counts *c) {
    tb_model_qos_count(lv->qos, lv->n_qos, lv->tile_qos, lv->n_tile_qos, lv->steady_s, c);
}

/* "6 judged: 6 passed, 0 failed; 14 not judged" */
void tb_model_qos_counts_text(const tb_model_qos_counts *c, char *buf, size_t len) {
    snprintf(buf, len, "%d judged: %d passed, %d failed; %d not judged", c->judged, c->passed, c->failed,
             c->not_judged);
}

/* "a steady state of at least 180 s (3 min; this one 20 s) would judge
 * every rule (web.* mix deviation <= 2 pp needs the most: 412 of 3693 ops)" */
int tb_model_qos_hint(const tb_model_qos_counts *c, double steady_s, char *buf, size_t len) {
    size_t l = 0;
    char mins[32] = "";
    if (c->not_judged <= 0 && c->no_ops <= 0) return 0;
    if (isnan(c->steady_s) && c->no_ops <= 0) return 0;
    if (!isnan(c->steady_s)) {
        if (c->steady_s >= 120) snprintf(mins, sizeof mins, "%.0f min; ", c->steady_s / 60);
        l = (size_t)snprintf(buf, len,
                             "a steady state of at least %.0f s (%sthis one %.0f s) would judge every rule%s (%s needs "
                             "the most: %lld of %lld ops",
                             c->steady_s, mins, steady_s, c->no_ops ? " that saw ops" : "", c->worst ? c->worst : "?",
                             (long long)c->worst_ops, (long long)c->worst_min_ops);
        if (l < len && c->worst_tile > 0) l += (size_t)snprintf(buf + l, len - l, " in tile %d", c->worst_tile);
        if (l < len) l += (size_t)snprintf(buf + l, len - l, ")");
    }
    if (l < len && c->no_ops > 0)
        snprintf(buf + l, len - l, "%s%d rule verdict%s saw no op in %.0f s, so no length follows from %s (%s%s)",
                 l ? "; " : "", c->no_ops, c->no_ops == 1 ? "" : "s", steady_s, c->no_ops == 1 ? "it" : "them",
                 c->first_no_ops ? c->first_no_ops : "?", c->no_ops > 1 ? ", ..." : "");
    return 1;
}

#define MAX_REPEATS 256

/* The figures of one load level: within each repeat those of its median
 * phase (the lower median for an even count, so they come from one real
 * phase). It passes QoS / is valid only when all its phases in all repeats
 * do. sc, w, pk get one value per repeat. */
static void summarize_level(const tb_model_run *r, int64_t tiles, tb_model_summary *o, double *sc, double *w,
                            double *pk) {
    const tb_model_level *rows = r->levels;
    double app[MAX_REPEATS], infra[MAX_REPEATS];
    int n = (int)r->n_levels, reps = 0;
    o->tiles = tiles;
    o->qos_pass = o->valid = 1;
    for (int rep = 1; rep <= 1000 && reps < MAX_REPEATS; rep++) {
        double ph[MAX_REPEATS];
        int idx[MAX_REPEATS], k = 0, any = 0;
        for (int j = 0; j < n && k < MAX_REPEATS; j++) {
            if (rows[j].tiles != tiles || rows[j].repeat != rep || rows[j].alone) continue;
            any = 1;
            idx[k] = j;
            ph[k++] = rows[j].score;
            if (!rows[j].qos_pass) o->qos_pass = 0;
            if (rows[j].qos_not_judged > o->qos_not_judged) o->qos_not_judged = rows[j].qos_not_judged;
            if (!rows[j].valid) o->valid = 0;
        }
        if (!any) {
            int later = 0;
            for (int j = 0; j < n; j++)
                if (rows[j].tiles == tiles && rows[j].repeat > rep && !rows[j].alone) later = 1;
            if (!later) break;
            continue;
        }
        if (k > o->phases) o->phases = k;
        int m = idx[tb_score_median_index(ph, k)];
        sc[reps] = rows[m].score;
        w[reps] = rows[m].avg_watts;
        pk[reps] = rows[m].ppkw;
        app[reps] = rows[m].app_score;
        infra[reps] = rows[m].infra_score;
        if (rows[m].has_infra) o->has_infra = 1;
        reps++;
    }
    o->repeats = reps;
    tb_score_repeat_stats(sc, reps, &o->score);
    tb_score_repeat_stats(w, reps, &o->avg_watts);
    tb_score_repeat_stats(pk, reps, &o->ppkw);
    tb_score_repeat_stats(app, reps, &o->app_score);
    tb_score_repeat_stats(infra, reps, &o->infra_score);
}

/*
 * One summary entry per load level (tiles), in order of first appearance;
 * across repeats, mean, min and max. peak_score and peak_ppkw are over these
 * means; overall_efficiency is SPECpower's sum of performance / sum of power
 * with active idle counted as zero-score power, in score per kW.
 */
void tb_model_summarize(tb_model_run *r) {
    size_t n = r->n_levels;
    double *lvl_score = xcalloc(n + 1, sizeof(double)), *lvl_watts = xcalloc(n + 1, sizeof(double));
    double peak_score = NAN, peak_ppkw = NAN, idle = r->active_idle_watts;
    int n_lvl = 0;
    r->summary = xcalloc(n + 1, sizeof *r->summary);
    r->n_summary = 0;
    for (size_t i = 0; i < n; i++) {
        double sc[MAX_REPEATS], w[MAX_REPEATS], pk[MAX_REPEATS];
        tb_model_summary *o;
        int seen = r->levels[i].alone != NULL; /* --interference: not a level of the sweep */
        for (size_t j = 0; j < i; j++)
            if (r->levels[j].tiles == r->levels[i].tiles && !r->levels[j].alone) seen = 1;
        if (seen) continue;
        o = &r->summary[r->n_summary++];
        summarize_level(r, r->levels[i].tiles, o, sc, w, pk);
        if (o->score.n > 0 && isfinite(o->score.mean)) {
            double m = o->score.mean;
            if (isnan(peak_score) || m > peak_score) peak_score = m;
            lvl_score[n_lvl] = m;
            lvl_watts[n_lvl] = o->avg_watts.n > 0 && isfinite(o->avg_watts.mean) ? o->avg_watts.mean : NAN;
            n_lvl++;
        }
        if (o->ppkw.n > 0 && isfinite(o->ppkw.mean)) {
            double m = o->ppkw.mean;
            if (isnan(peak_ppkw) || m > peak_ppkw) peak_ppkw = m;
        }
    }
    r->peak_score = isfinite(peak_score) ? peak_score : NAN;
    r->peak_ppkw = isfinite(peak_ppkw) ? peak_ppkw : NAN;
    {
        tb_score_efficiency d;
        double eff = tb_score_overall_efficiency(lvl_score, lvl_watts, n_lvl, isfinite(idle) ? idle : -1, &d);
        r->overall_efficiency = d.levels_used > 0 && isfinite(eff) ? eff : NAN;
    }
    free(lvl_score);
    free(lvl_watts);
}

void tb_model_level_energy(const tb_model_level *lv, double peak_score, tb_model_energy *e) {
    double ops[TB_MODEL_ENERGY_WL], norm[TB_MODEL_ENERGY_WL], share[TB_MODEL_ENERGY_WL], jpo[TB_MODEL_ENERGY_WL];
    memset(e, 0, sizeof *e);
    for (size_t i = 0; i < lv->n_workloads; i++) {
        const tb_model_workload *w = &lv->workloads[i];
        size_t k;
        for (k = 0; k < e->n && strcmp(e->wl[k].workload, w->name ? w->name : "") != 0; k++)
            ;
        if (k == e->n) {
            if (e->n == TB_MODEL_ENERGY_WL) continue;
            e->wl[e->n++].workload = w->name ? w->name : "";
        }
        if (w->ops.known) e->wl[k].ops += (double)w->ops.v;
        if (isfinite(w->normalized)) e->wl[k].normalized += w->normalized;
    }
    for (size_t k = 0; k < e->n; k++) {
        ops[k] = e->wl[k].ops;
        norm[k] = e->wl[k].normalized;
        e->ops += ops[k];
    }
    e->joules = tb_energy_joules(lv->avg_watts, lv->steady_s);
    e->j_per_op = tb_energy_per_op(e->joules, e->ops);
    (void)tb_energy_split(e->joules, e->n, ops, norm, share, jpo); /* -1: every share NaN, as wanted */
    for (size_t k = 0; k < e->n; k++) {
        e->wl[k].share = share[k];
        e->wl[k].j_per_op = jpo[k];
    }
    e->efficiency = tb_energy_efficiency(lv->score, peak_score, lv->avg_watts, &e->norm_perf);
}
