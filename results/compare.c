/*
 * compare.c: reads several stored runs through the read model (model.h),
 * inside one read snapshot, into one comparison model (compare_data.h), normalizes each run to the
 * baseline run at every load level, and hands the model to the renderer of
 * the chosen format (compare_text.c, compare_json.c, compare_html.c). Reads only.
 *
 * Per run and load level: the level rows are grouped by repeat; in each
 * repeat the median phase by score is taken (tb_score_median_index, the
 * report summary's rule), and all of that phase's figures (score, mean W,
 * PPKW, CPU utilization, frequency, p95 per workload) are used together;
 * across repeats each figure is averaged over the repeats that have it.
 */
#include "results/compare.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/hist.h"
#include "tiles/tiledef.h"
#include "results/compare_data.h"
#include "results/model.h"
#include "scoring/compare.h"
#include "scoring/score.h"

const tb_cmp_figure tb_cmp_figures[TB_CMP_N_FIG] = {
    [TB_CMP_SCORE] = {"score", "Score", "", 3, +1},
    [TB_CMP_PPKW] = {"ppkw", "PPKW", "score/kW", 2, +1},
    [TB_CMP_WATTS] = {"avg_watts", "Mean power", "W", 1, -1},
    [TB_CMP_CPU] = {"cpu_util_pct", "CPU utilization", "%", 1, 0},
    [TB_CMP_FREQ] = {"avg_freq_mhz", "CPU frequency", "MHz", 0, 0},
    [TB_CMP_APP] = {"app_score", "Application score", "", 3, +1},
    [TB_CMP_INFRA] = {"infra_score", "Infrastructure score", "", 3, +1},
};

const char tb_cmp_method_phases[] =
    "At each load level (matched by tiles), each run's figures are those of its median phase by score in each "
    "repeat (the lower median for an even count), averaged over repeats.";
const char tb_cmp_method_p95[] =
    "p95 per workload: the 95th percentile of the corrected latency (from the intended start) of the workload's "
    "metric ops, the ops that count toward its throughput, all tiles merged, in ms.";
const char tb_cmp_method_pct[] =
    "% change = (run - baseline) / baseline x 100 at the same load level; none when the baseline figure is 0 or "
    "unknown; a level a run did not measure is missing, never 0.";

int tb_compare_parse_format(const char *s, tb_compare_format *out, char *err) {
    if (s && strcmp(s, "text") == 0)
        *out = TB_COMPARE_TEXT;
    else if (s && strcmp(s, "json") == 0)
        *out = TB_COMPARE_JSON;
    else if (s && strcmp(s, "html") == 0)
        *out = TB_COMPARE_HTML;
    else {
        tb_seterr(err, "unknown compare format '%s' (use text, json or html)", s ? s : "");
        return -1;
    }
    return 0;
}

/* ---- reading ------------------------------------------------------------------- */

/* One stored phase row of a run. */
typedef struct row {
    int tiles, repeat;
    int qos_pass, valid, qos_not_judged;
    double fig[TB_CMP_N_FIG];
    double *p95;    /* per model workload known when the row was read, NaN when not measured */
    size_t n_p95;   /* entries in p95: workloads that first appear in later rows are unknown here */
    double *host_w; /* per model host, as p95 */
    size_t n_host_w;
} row;

typedef struct run_rows {
    row *r;
    size_t n;
    int p95_fallback; /* some workload had no op flagged metric: all its ops were used */
} run_rows;

static size_t workload_index(tb_cmp_model *m, const char *name) {
    size_t i;
    for (i = 0; i < m->n_workloads; i++)
        if (strcmp(m->workloads[i], name) == 0) return i;
    m->workloads = xrealloc(m->workloads, (m->n_workloads + 1) * sizeof *m->workloads);
    m->workloads[m->n_workloads] = xstrdup(name);
    return m->n_workloads++;
}

/* Per-workload merged histograms of one level row. */
typedef struct wl_hist {
    const char *name;
    tb_hist *metric, *all;
    int any_metric;
} wl_hist;

static int by_row_id(const void *a, const void *b) {
    const tb_model_workload *x = *(const tb_model_workload *const *)a, *y = *(const tb_model_workload *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The level's workloads in the order stored. */
static const tb_model_workload **workloads_in_order(const tb_model_level *lv) {
    const tb_model_workload **v = xcalloc(lv->n_workloads + 1, sizeof *v);
    for (size_t i = 0; i < lv->n_workloads; i++)
        v[i] = &lv->workloads[i];
    qsort(v, lv->n_workloads, sizeof *v, by_row_id);
    return v;
}

/* The histograms of level lv merged per workload name, over its tiles. */
static wl_hist *merge_workloads(const tb_model_level *lv, size_t *n_out) {
    const tb_model_workload **wl = workloads_in_order(lv);
    wl_hist *w = NULL;
    size_t n = 0;
    for (size_t i = 0; i < lv->n_workloads; i++) {
        const char *name = wl[i]->name ? wl[i]->name : "";
        for (size_t k = 0; k < wl[i]->n_ops; k++) {
            const tb_model_op *op = &wl[i]->ops_list[k];
            wl_hist *x = NULL;
            for (size_t j = 0; j < n && !x; j++)
                if (strcmp(w[j].name, name) == 0) x = &w[j];
            if (!x) {
                w = xrealloc(w, (n + 1) * sizeof *w);
                x = &w[n++];
                x->name = name;
                x->metric = tb_hist_new();
                x->all = tb_hist_new();
                x->any_metric = 0;
            }
            if (op->metric) x->any_metric = 1;
            if (op->hist) {
                if (op->metric) tb_hist_merge(x->metric, op->hist);
                tb_hist_merge(x->all, op->hist);
            } else if (op->hist_error) {
                tb_log(TB_LOG_WARN, "compare: level %lld %s: stored histogram unreadable: %s", (long long)lv->id, name,
                       op->hist_error);
            }
        }
    }
    free(wl);
    *n_out = n;
    return w;
}

/* p95 per workload of level lv into r->p95 (sized to the model's workloads
 * after this call; earlier rows are grown by the caller). */
static void level_p95(const tb_model_level *lv, tb_cmp_model *m, row *r, int *fallback) {
    size_t n, i;
    wl_hist *w = merge_workloads(lv, &n);
    for (i = 0; i < n; i++) {
        size_t k = workload_index(m, w[i].name);
        const tb_hist *h = w[i].any_metric ? w[i].metric : w[i].all;
        if (!w[i].any_metric) *fallback = 1;
        if (k >= r->n_p95) {
            r->p95 = xrealloc(r->p95, m->n_workloads * sizeof *r->p95);
            for (; r->n_p95 < m->n_workloads; r->n_p95++)
                r->p95[r->n_p95] = NAN;
        }
        if (tb_hist_count(h) > 0) r->p95[k] = (double)tb_hist_percentile(h, 95) / 1000.0;
        tb_hist_free(w[i].metric);
        tb_hist_free(w[i].all);
    }
    free(w);
}

static size_t host_index(tb_cmp_model *m, const char *name) {
    for (size_t i = 0; i < m->n_hosts; i++)
        if (strcmp(m->hosts[i], name) == 0) return i;
    m->hosts = xrealloc(m->hosts, (m->n_hosts + 1) * sizeof *m->hosts);
    m->hosts[m->n_hosts] = xstrdup(name);
    return m->n_hosts++;
}

/* Each SUT host's mean power of level lv into r->host_w (grown as p95 is). */
static void level_hosts(const tb_model_level *lv, tb_cmp_model *m, row *r) {
    for (size_t i = 0; i < lv->n_hosts; i++) {
        size_t k = host_index(m, lv->hosts[i].name ? lv->hosts[i].name : "");
        if (k >= r->n_host_w) {
            r->host_w = xrealloc(r->host_w, m->n_hosts * sizeof *r->host_w);
            for (; r->n_host_w < m->n_hosts; r->n_host_w++)
                r->host_w[r->n_host_w] = NAN;
        }
        r->host_w[k] = lv->hosts[i].avg_watts;
    }
}

/* Levels in the compare's order: tiles, repeat, phase, then as stored. */
static int by_tiles_repeat(const void *a, const void *b) {
    const tb_model_level *x = *(const tb_model_level *const *)a, *y = *(const tb_model_level *const *)b;
    if (x->tiles != y->tiles) return x->tiles < y->tiles ? -1 : 1;
    if (x->repeat != y->repeat) return x->repeat < y->repeat ? -1 : 1;
    if (x->phase != y->phase) return x->phase < y->phase ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static char *dup_or_empty(const char *s) { return xstrdup(s ? s : ""); }

/* The run's identity from the read model. */
static void run_from_model(const tb_model_run *mr, tb_cmp_run *run) {
    run->label = dup_or_empty(mr->label);
    run->status = dup_or_empty(mr->status);
    run->tile_name = dup_or_empty(mr->tile_name);
    run->tile_spec = dup_or_empty(mr->tile_spec);
    run->started_at = dup_or_empty(mr->started_at);
    run->campaign_id = mr->campaign_id;
    run->campaign_config = dup_or_empty(mr->campaign_config);
    run->campaign_name = dup_or_empty(mr->campaign_name);
    run->estimated = mr->estimated_power;
    run->load_hash[0] = '\0';
    if (mr->config_text && *mr->config_text) {
        char e[TB_ERR_LEN];
        tb_tiledef *def = tb_tiledef_parse("stored tile text", mr->config_text, strlen(mr->config_text), e);
        if (def) tb_tiledef_workload_hash(def, run->load_hash);
        tb_tiledef_free(def);
    }
}

/* Reads the run and its level rows through the read model. */
static void add_note(tb_cmp_model *m, const char *fmt, ...) TB_PRINTF(2, 3);

/* A campaign run's warnings that an apply or revert command changed a file
 * tilebench had read (coordinator/campaign.c): the reader must know. */
static void file_change_notes(tb_cmp_model *m, const tb_model_run *mr) {
    for (size_t i = 0; i < mr->n_events; i++) {
        const tb_model_event *ev = &mr->events[i];
        if (strcmp(ev->kind, "warning") != 0) continue;
        if (strncmp(ev->message, TB_EVENT_APPLY_CHANGED, strlen(TB_EVENT_APPLY_CHANGED)) == 0 ||
            strncmp(ev->message, TB_EVENT_REVERT_CHANGED, strlen(TB_EVENT_REVERT_CHANGED)) == 0)
            add_note(m, "run %lld: %s", (long long)mr->id, ev->message);
    }
}

static int read_run(tb_store *s, tb_cmp_model *m, tb_cmp_run *run, run_rows *rr, char *err) {
    tb_model_run *mr = NULL;
    const tb_model_level **lv;
    if (tb_model_read_run(s, run->id, TB_MODEL_OP_HISTS | TB_MODEL_RAW_TEXT, &mr, err) != 0) return -1;
    run_from_model(mr, run);
    file_change_notes(m, mr);
    lv = xcalloc(mr->n_levels + 1, sizeof *lv);
    for (size_t i = 0; i < mr->n_levels; i++)
        lv[i] = &mr->levels[i];
    qsort(lv, mr->n_levels, sizeof *lv, by_tiles_repeat);
    rr->r = xcalloc(mr->n_levels + 1, sizeof *rr->r);
    run->other_cpu_max_pct = NAN;
    for (size_t i = 0; i < mr->n_levels; i++) {
        row *r;
        double o = lv[i]->other_cpu_pct;
        if (isfinite(o) && !(o <= run->other_cpu_max_pct)) {
            run->other_cpu_max_pct = o;
            run->other_cpu_tiles = (int)lv[i]->tiles;
        }
        if (lv[i]->alone) continue; /* --interference: a workload alone is not a load level of the sweep */
        r = &rr->r[rr->n++];
        r->tiles = (int)lv[i]->tiles;
        r->repeat = (int)lv[i]->repeat;
        r->qos_pass = lv[i]->qos_pass;
        r->valid = lv[i]->valid;
        r->qos_not_judged = lv[i]->qos_not_judged;
        r->fig[TB_CMP_SCORE] = lv[i]->score;
        r->fig[TB_CMP_PPKW] = lv[i]->ppkw;
        r->fig[TB_CMP_WATTS] = lv[i]->avg_watts;
        r->fig[TB_CMP_CPU] = lv[i]->telemetry.cpu_util_pct;
        r->fig[TB_CMP_FREQ] = lv[i]->telemetry.avg_freq_mhz;
        r->fig[TB_CMP_APP] = lv[i]->app_score;
        r->fig[TB_CMP_INFRA] = lv[i]->infra_score;
        m->any_infra |= lv[i]->has_infra;
        r->p95 = xmalloc((m->n_workloads ? m->n_workloads : 1) * sizeof *r->p95);
        for (size_t k = 0; k < m->n_workloads; k++)
            r->p95[k] = NAN;
        r->n_p95 = m->n_workloads;
        level_p95(lv[i], m, r, &rr->p95_fallback);
        level_hosts(lv[i], m, r);
    }
    free(lv);
    tb_model_run_free(mr);
    return 0;
}

/* ---- aggregation ------------------------------------------------------------------- */

/* The figure of run rows at `tiles`: per repeat the median phase by score,
 * then the mean over repeats. Fills lv (cells' values only). */
static void aggregate(const run_rows *rr, int tiles, size_t n_wl, size_t n_hosts, tb_cmp_level *lv) {
    size_t i, j, k, n_at = 0;
    int reps[256], n_reps = 0;
    double *vals;
    size_t *pick; /* chosen row per repeat */
    memset(lv->fig, 0, sizeof lv->fig);
    for (k = 0; k < TB_CMP_N_FIG; k++)
        lv->fig[k].value = lv->fig[k].pct = NAN;
    for (k = 0; k < n_wl; k++)
        lv->p95[k].value = lv->p95[k].pct = NAN;
    for (k = 0; k < n_hosts; k++)
        lv->host_w[k].value = lv->host_w[k].pct = NAN;
    lv->present = 0;
    lv->phases = lv->repeats = 0;
    lv->qos_pass = lv->valid = 1;
    lv->qos_not_judged = 0;
    for (i = 0; i < rr->n; i++) {
        int seen = 0;
        if (rr->r[i].tiles != tiles) continue;
        n_at++;
        if (!rr->r[i].qos_pass) lv->qos_pass = 0;
        if (rr->r[i].qos_not_judged > lv->qos_not_judged) lv->qos_not_judged = rr->r[i].qos_not_judged;
        if (!rr->r[i].valid) lv->valid = 0;
        for (j = 0; j < (size_t)n_reps; j++)
            if (reps[j] == rr->r[i].repeat) seen = 1;
        if (!seen && n_reps < 256) reps[n_reps++] = rr->r[i].repeat;
    }
    if (n_at == 0) {
        lv->qos_pass = lv->valid = 0;
        return;
    }
    lv->present = 1;
    lv->repeats = n_reps;
    pick = xmalloc((size_t)n_reps * sizeof *pick);
    vals = xmalloc((n_at > (size_t)n_reps ? n_at : (size_t)n_reps) * sizeof *vals);
    for (j = 0; j < (size_t)n_reps; j++) {
        size_t idx[256], m = 0;
        for (i = 0; i < rr->n && m < 256; i++) {
            if (rr->r[i].tiles != tiles || rr->r[i].repeat != reps[j]) continue;
            idx[m] = i;
            vals[m++] = rr->r[i].fig[TB_CMP_SCORE];
        }
        if ((int)m > lv->phases) lv->phases = (int)m;
        pick[j] = idx[tb_score_median_index(vals, (int)m)];
    }
    for (k = 0; k < TB_CMP_N_FIG; k++) {
        tb_score_stats s;
        for (j = 0; j < (size_t)n_reps; j++)
            vals[j] = rr->r[pick[j]].fig[k];
        tb_score_repeat_stats(vals, n_reps, &s);
        lv->fig[k].value = s.n > 0 ? s.mean : NAN;
    }
    for (k = 0; k < n_wl; k++) {
        tb_score_stats s;
        for (j = 0; j < (size_t)n_reps; j++)
            vals[j] = k < rr->r[pick[j]].n_p95 ? rr->r[pick[j]].p95[k] : NAN;
        tb_score_repeat_stats(vals, n_reps, &s);
        lv->p95[k].value = s.n > 0 ? s.mean : NAN;
    }
    for (k = 0; k < n_hosts; k++) {
        tb_score_stats s;
        for (j = 0; j < (size_t)n_reps; j++)
            vals[j] = k < rr->r[pick[j]].n_host_w ? rr->r[pick[j]].host_w[k] : NAN;
        tb_score_repeat_stats(vals, n_reps, &s);
        lv->host_w[k].value = s.n > 0 ? s.mean : NAN;
    }
    free(vals);
    free(pick);
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

static void add_note(tb_cmp_model *m, const char *fmt, ...) {
    char buf[1600]; /* a campaign warning quotes a path */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    m->notes = xrealloc(m->notes, (m->n_notes + 1) * sizeof *m->notes);
    m->notes[m->n_notes++] = xstrdup(buf);
}

static void model_free(tb_cmp_model *m) {
    size_t i, j;
    for (i = 0; i < m->n_runs; i++) {
        tb_cmp_run *r = &m->runs[i];
        free(r->label);
        free(r->status);
        free(r->tile_name);
        free(r->tile_spec);
        free(r->started_at);
        free(r->campaign_name);
        free(r->campaign_config);
        if (r->lv)
            for (j = 0; j < m->n_levels; j++)
                free(r->lv[j].p95), free(r->lv[j].host_w);
        free(r->lv);
    }
    free(m->runs);
    free(m->tiles);
    for (i = 0; i < m->n_workloads; i++)
        free(m->workloads[i]);
    free(m->workloads);
    for (i = 0; i < m->n_hosts; i++)
        free(m->hosts[i]);
    free(m->hosts);
    for (i = 0; i < m->n_notes; i++)
        free(m->notes[i]);
    free(m->notes);
}

/* Builds the model; the caller holds the read transaction. */
static int build_model(tb_store *s, const int64_t *ids, int n, int64_t baseline_id, tb_cmp_model *m, char *err) {
    run_rows *rr = xcalloc((size_t)n, sizeof *rr);
    size_t i, j, k;
    int rc = -1, fallback = 0;
    m->n_runs = (size_t)n;
    m->runs = xcalloc((size_t)n, sizeof *m->runs);
    for (i = 0; i < (size_t)n; i++) {
        m->runs[i].id = ids[i];
        m->runs[i].is_baseline = ids[i] == baseline_id;
        if (m->runs[i].is_baseline) m->baseline = i;
    }
    for (i = 0; i < (size_t)n; i++) {
        if (read_run(s, m, &m->runs[i], &rr[i], err) != 0) goto out;
        if (rr[i].p95_fallback) fallback = 1;
    }
    /* levels: the union of tiles */
    for (i = 0; i < (size_t)n; i++)
        for (j = 0; j < rr[i].n; j++) {
            int t = rr[i].r[j].tiles, seen = 0;
            for (k = 0; k < m->n_levels; k++)
                if (m->tiles[k] == t) seen = 1;
            if (seen) continue;
            m->tiles = xrealloc(m->tiles, (m->n_levels + 1) * sizeof *m->tiles);
            m->tiles[m->n_levels++] = t;
        }
    if (m->n_levels > 1) qsort(m->tiles, m->n_levels, sizeof *m->tiles, cmp_int);
    for (i = 0; i < (size_t)n; i++) {
        tb_cmp_run *run = &m->runs[i];
        run->lv = xcalloc(m->n_levels ? m->n_levels : 1, sizeof *run->lv);
        for (k = 0; k < m->n_levels; k++) {
            run->lv[k].p95 = xcalloc(m->n_workloads ? m->n_workloads : 1, sizeof *run->lv[k].p95);
            run->lv[k].host_w = xcalloc(m->n_hosts ? m->n_hosts : 1, sizeof *run->lv[k].host_w);
            aggregate(&rr[i], m->tiles[k], m->n_workloads, m->n_hosts, &run->lv[k]);
            if (run->lv[k].phases > run->max_phases) run->max_phases = run->lv[k].phases;
            if (run->lv[k].repeats > run->max_repeats) run->max_repeats = run->lv[k].repeats;
            for (j = 0; j < TB_CMP_N_FIG; j++)
                if (isfinite(run->lv[k].fig[j].value)) m->any_fig[j] = 1;
        }
    }
    /* without infrastructure operations the application score is the score */
    if (!m->any_infra) m->any_fig[TB_CMP_APP] = m->any_fig[TB_CMP_INFRA] = 0;
    /* % change against the baseline at each level */
    for (i = 0; i < (size_t)n; i++)
        for (k = 0; k < m->n_levels; k++) {
            tb_cmp_level *lv = &m->runs[i].lv[k], *b = &m->runs[m->baseline].lv[k];
            for (j = 0; j < TB_CMP_N_FIG; j++)
                lv->fig[j].pct = tb_score_pct_change(lv->fig[j].value, b->fig[j].value);
            for (j = 0; j < m->n_workloads; j++)
                lv->p95[j].pct = tb_score_pct_change(lv->p95[j].value, b->p95[j].value);
            for (j = 0; j < m->n_hosts; j++)
                lv->host_w[j].pct = tb_score_pct_change(lv->host_w[j].value, b->host_w[j].value);
        }
    /* what a reader must know */
    for (i = 0; i < (size_t)n; i++) {
        const tb_cmp_run *r = &m->runs[i];
        if (r->estimated)
            add_note(m,
                     "run %lld: ESTIMATED POWER (a model of whole-host CPU, not a power meter): its watts and PPKW "
                     "are estimates, and anything else the host ran counts as the SUT's power",
                     (long long)r->id);
        if (r->other_cpu_max_pct > TB_CMP_OTHER_CPU_LIMIT_PCT)
            add_note(m,
                     "run %lld: %.1f%% of the host's CPU went to processes outside the SUT and the load generator "
                     "in steady state at %d tiles (more than %g%%): its figures include that other load%s",
                     (long long)r->id, r->other_cpu_max_pct, r->other_cpu_tiles, TB_CMP_OTHER_CPU_LIMIT_PCT,
                     r->estimated ? ", and its estimated watts most of all" : "");
        if (strcmp(r->status, TB_RUN_COMPLETE) != 0)
            add_note(m, "run %lld is %s: only the load levels it stored are compared", (long long)r->id, r->status);
        if (rr[i].n == 0) add_note(m, "run %lld stored no load level", (long long)r->id);
        if (strcmp(r->tile_name, m->runs[m->baseline].tile_name) == 0 && r->load_hash[0] &&
            m->runs[m->baseline].load_hash[0] && strcmp(r->load_hash, m->runs[m->baseline].load_hash) != 0)
            add_note(m,
                     "run %lld's tile '%s' has other workload sections (users, think times, ops) than the "
                     "baseline's: its score differences include the change of load, not the SUT's alone",
                     (long long)r->id, r->tile_name);
        if (strcmp(r->tile_name, m->runs[m->baseline].tile_name) != 0)
            add_note(m, "run %lld uses tile '%s', the baseline tile '%s': scores are not comparable", (long long)r->id,
                     r->tile_name, m->runs[m->baseline].tile_name);
        if (r->max_repeats > 1 || r->max_phases > 1)
            add_note(m, "run %lld: %d phase%s per level (median phase), %d repeat%s (mean)", (long long)r->id,
                     r->max_phases, r->max_phases == 1 ? "" : "s", r->max_repeats, r->max_repeats == 1 ? "" : "s");
    }
    if (fallback)
        add_note(m, "some runs were stored without the metric-op flag (before schema 3): their p95 per workload is "
                    "over all of the workload's ops");
    rc = 0;
out:
    for (i = 0; i < (size_t)n; i++) {
        for (j = 0; j < rr[i].n; j++)
            free(rr[i].r[j].p95), free(rr[i].r[j].host_w);
        free(rr[i].r);
    }
    free(rr);
    return rc;
}

/* ---- entry point ------------------------------------------------------------------------- */

/* The arguments, before anything is read: at least 2 runs, none twice,
 * the baseline among them. */
static int check_args(const int64_t *ids, int n, int64_t baseline_id, char *err) {
    int i, j, found = 0;
    if (!ids || n < 2) {
        tb_seterr(err, "%d run%s given: compare needs at least 2", n < 0 ? 0 : n, n == 1 ? "" : "s");
        return -1;
    }
    for (i = 0; i < n; i++) {
        for (j = 0; j < i; j++)
            if (ids[i] == ids[j]) {
                tb_seterr(err, "run %lld is given twice (latest counts as its number)", (long long)ids[i]);
                return -1;
            }
        if (ids[i] == baseline_id) found = 1;
    }
    if (!found) {
        char list[160];
        size_t o = 0;
        for (i = 0; i < n && o + 24 < sizeof list; i++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%lld", i ? ", " : "", (long long)ids[i]);
        if (i < n) snprintf(list + o, sizeof list - o, ", ...");
        tb_seterr(err, "compare: baseline run %lld is not among the runs compared (%s)", (long long)baseline_id, list);
        return -1;
    }
    return 0;
}

int tb_compare_write(tb_store *s, const int64_t *run_ids, int n_runs, int64_t baseline_id, tb_compare_format fmt,
                     FILE *f, char *err) {
    tb_cmp_model m;
    int rc = -1, opened, i;
    if (check_args(run_ids, n_runs, baseline_id, err) != 0) return -1;
    opened = tb_model_snapshot_begin(s);
    /* unknown ids first, with the store's own message naming the database */
    for (i = 0; i < n_runs; i++) {
        char which[32];
        int64_t id;
        snprintf(which, sizeof which, "%lld", (long long)run_ids[i]);
        if (run_ids[i] <= 0 || tb_store_resolve_run(s, which, &id, err) != 0) {
            if (run_ids[i] <= 0) tb_seterr(err, "compare: run %lld is not a run id", (long long)run_ids[i]);
            tb_model_snapshot_end(s, opened);
            return -1;
        }
    }
    memset(&m, 0, sizeof m);
    if (build_model(s, run_ids, n_runs, baseline_id, &m, err) != 0) goto out;
    errno = 0;
    switch (fmt) {
    case TB_COMPARE_JSON: rc = tb_compare_write_json(&m, f, err); break;
    case TB_COMPARE_HTML: rc = tb_compare_write_html(&m, f, err); break;
    case TB_COMPARE_TEXT:
    default:
        tb_compare_write_text(&m, f);
        rc = 0;
        break;
    }
    if (rc == 0 && (fflush(f) != 0 || ferror(f))) {
        tb_seterr(err, "write comparison: %s", errno ? strerror(errno) : "output error");
        rc = -1;
    }
out:
    tb_model_snapshot_end(s, opened);
    model_free(&m);
    return rc;
}
