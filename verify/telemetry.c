/*
 * telemetry.c: check 2's telemetry part: each level's telemetry figures of
 * report.json (levels[].telemetry) and those of active idle
 * (run.active_idle_telemetry), recomputed from telemetry_samples.csv by the
 * definition of docs/method.md ("Telemetry of a level"): over the level's
 * samples (level_id; active idle: level_id empty), each figure is the mean
 * of the samples that have it weighted by their interval_us (a sample of
 * interval 0 counts toward none); samples is their number; freq_source the
 * source of the last sample with a frequency (none when the mean frequency
 * is unknown); the CPU modes only beside a utilization; each C-state's
 * residency over the samples that name it. Relative tolerance 1e-9, and 1e-8
 * + 1e-9 pp for C-states: the store writes each sample's residencies and
 * the level's as JSON text of 10 significant digits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/tb_common.h"
#include "verify/verify_int.h"
#include "verify/vmath.h"

#define CSTATE_REL    1e-8
#define CSTATE_ABS_PP 1e-9
#define MAX_CSTATES   32

static const char *const MODES[] = {"user_pct",   "nice_pct", "sys_pct",     "idle_pct",
                                    "iowait_pct", "irq_pct",  "softirq_pct", "steal_pct"};
#define N_MODES (sizeof MODES / sizeof MODES[0])

typedef struct wmean {
    double sum, w;
} wmean;

static void wadd(wmean *m, double w, double x) {
    if (!isfinite(x)) return;
    m->sum += w * x;
    m->w += w;
}
static double wget(const wmean *m) { return m->w > 0 ? m->sum / m->w : NAN; }

typedef struct telem {
    int64_t n;
    wmean util, freq, mode[N_MODES];
    const char *freq_src;
    size_t n_cs;
    char *cs_name[MAX_CSTATES];
    wmean cs[MAX_CSTATES];
    int bad_json; /* a sample's cstate_residency_json does not parse */
} telem;

static void add_cstates(telem *t, double w, const char *text) {
    json_error_t je;
    json_t *o = text ? json_loads(text, 0, &je) : NULL;
    const char *k;
    json_t *v;
    if (text && !json_is_object(o)) t->bad_json = 1;
    json_object_foreach(o, k, v) {
        size_t j;
        for (j = 0; j < t->n_cs; j++)
            if (strcmp(t->cs_name[j], k) == 0) break;
        if (j == t->n_cs) {
            if (j == MAX_CSTATES) continue;
            t->cs_name[t->n_cs++] = xstrdup(k);
        }
        wadd(&t->cs[j], w, json_number_value(v));
    }
    json_decref(o);
}

/* The columns gather reads, looked up once (-1: absent). */
typedef struct tcols {
    int interval, util, freq, freq_src, cstates, mode[N_MODES];
} tcols;

static void find_cols(const tb_vcsv *s, tcols *k) {
    k->interval = tb_vcsv_col(s, "interval_us");
    k->util = tb_vcsv_col(s, "cpu_util_pct");
    k->freq = tb_vcsv_col(s, "freq_mhz");
    k->freq_src = tb_vcsv_col(s, "freq_source");
    k->cstates = tb_vcsv_col(s, "cstate_residency_json");
    for (size_t m = 0; m < N_MODES; m++)
        k->mode[m] = tb_vcsv_col(s, MODES[m]);
}

static double real_at(const tb_vcsv *s, size_t r, int col) {
    double v;
    return tb_vcsv_real(s, r, col, &v) == 1 ? v : NAN;
}

/* The samples of level id (0: active idle, level_id empty); lids[r] is row
 * r's level_id (0 when empty), read once for every level. */
static void gather(const tb_vcsv *s, const tcols *k, const int64_t *lids, int64_t id, telem *t) {
    memset(t, 0, sizeof *t);
    for (size_t r = 0; r < s->n_rows; r++) {
        double w;
        if (lids[r] != id) continue;
        t->n++;
        if (!((w = real_at(s, r, k->interval)) > 0)) continue;
        wadd(&t->util, w, real_at(s, r, k->util));
        for (size_t m = 0; m < N_MODES; m++)
            wadd(&t->mode[m], w, real_at(s, r, k->mode[m]));
        if (isfinite(real_at(s, r, k->freq))) t->freq_src = tb_vcsv_get(s, r, k->freq_src);
        wadd(&t->freq, w, real_at(s, r, k->freq));
        add_cstates(t, w, tb_vcsv_get(s, r, k->cstates));
    }
}

static void telem_free(telem *t) {
    for (size_t j = 0; j < t->n_cs; j++)
        free(t->cs_name[j]);
}

typedef struct tctx {
    tb_vresult *r;
    const char *where;
    size_t ok;
} tctx;

/* A published number (NaN: null or absent) against the recomputed one. */
static void cmp_val(tctx *c, const char *key, const json_t *v, double mine, double rel, double abs_tol) {
    double pub = json_is_number(v) ? json_number_value(v) : NAN;
    char name[300];
    if ((isnan(pub) && isnan(mine)) || fabs(pub - mine) <= rel * fabs(mine) + abs_tol) {
        c->ok++;
        return;
    }
    snprintf(name, sizeof name, "figure telemetry %s %s", c->where, key);
    tb_vresult_add(c->r, 0, name, rel > TB_V_REL ? "relative tolerance 1e-08 + 1e-09 pp" : "relative tolerance 1e-09",
                   "published %.12g, recomputed %.12g", pub, mine);
}

static void cmp(tctx *c, const json_t *o, const char *key, double mine) {
    cmp_val(c, key, json_object_get(o, key), mine, TB_V_REL, 0.0);
}

/* The level's (or idle's, full = 0: utilization, frequency, samples only)
 * published telemetry o against the samples. */
static void check_one(tctx *c, const json_t *o, const telem *t, int full) {
    const json_t *pn = json_object_get(o, "samples"), *cs = json_object_get(o, "cstate_residency_pct");
    double util = wget(&t->util);
    if (!json_is_object(o)) {
        tb_vresult_add(c->r, 0, "figure telemetry", "a telemetry object in report.json", "%s: none", c->where);
        return;
    }
    if (t->bad_json)
        tb_vresult_add(c->r, 0, "figure telemetry", "readable samples",
                       "%s: a cstate_residency_json is not a JSON object", c->where);
    cmp(c, o, "cpu_util_pct", util);
    cmp(c, o, "avg_freq_mhz", wget(&t->freq));
    if (json_is_integer(pn) ? json_integer_value(pn) == t->n : t->n == 0)
        c->ok++;
    else
        tb_vresult_add(c->r, 0, "figure telemetry", "samples: the rows of telemetry_samples.csv",
                       "%s: published %lld, telemetry_samples.csv %lld", c->where, (long long)json_integer_value(pn),
                       (long long)t->n);
    if (!full) return;
    for (size_t m = 0; m < N_MODES; m++) /* the split exists only beside a utilization */
        cmp(c, o, MODES[m], isfinite(util) ? wget(&t->mode[m]) : NAN);
    {
        const char *pub = json_string_value(json_object_get(o, "freq_source"));
        const char *mine = isfinite(wget(&t->freq)) ? t->freq_src : NULL;
        if ((!pub && !mine) || (pub && mine && strcmp(pub, mine) == 0))
            c->ok++;
        else
            tb_vresult_add(c->r, 0, "figure telemetry", "freq_source: the last sample's with a frequency",
                           "%s: published %.40s, samples %.40s", c->where, pub ? pub : "null", mine ? mine : "null");
    }
    if (json_object_size(cs) != t->n_cs)
        tb_vresult_add(c->r, 0, "figure telemetry", "cstate_residency_pct: the states the samples name",
                       "%s: published %zu states, the samples %zu", c->where, json_object_size(cs), t->n_cs);
    for (size_t j = 0; j < t->n_cs; j++) {
        char key[300];
        snprintf(key, sizeof key, "cstate_residency_pct.%.60s", t->cs_name[j]);
        cmp_val(c, key, json_object_get(cs, t->cs_name[j]), wget(&t->cs[j]), CSTATE_REL, CSTATE_ABS_PP);
    }
}

void tb_vcheck_telemetry(const tb_vdata *d, tb_vresult *r) {
    const json_t *run = json_object_get(d->report, "run"), *levels = json_object_get(run, "levels");
    size_t before = r->failed, n = 0;
    tctx c = {r, "", 0};
    telem t;
    tcols k;
    int64_t *lids;
    if (!d->telem.n_cols) return; /* a bundle without the table */
    find_cols(&d->telem, &k);
    lids = xmalloc((d->telem.n_rows ? d->telem.n_rows : 1) * sizeof *lids);
    for (size_t row = 0; row < d->telem.n_rows; row++)
        lids[row] = tb_vcell_int(&d->telem, row, "level_id", 0);
    for (size_t i = 0; i < d->n_lv; i++) {
        const json_t *lvj = tb_vreport_level(levels, i, &d->lv[i]);
        if (!lvj) continue; /* figures.c says so */
        c.where = d->lv[i].tag;
        gather(&d->telem, &k, lids, d->lv[i].id, &t);
        check_one(&c, json_object_get(lvj, "telemetry"), &t, 1);
        telem_free(&t);
        n++;
    }
    c.where = "active idle";
    gather(&d->telem, &k, lids, 0, &t);
    check_one(&c, json_object_get(run, "active_idle_telemetry"), &t, 0);
    telem_free(&t);
    free(lids);
    if (r->failed == before)
        tb_vresult_add(r, 1, "figures telemetry", "each within relative tolerance 1e-09 (C-states 1e-08)",
                       "%zu figures of %zu levels and active idle agree (CPU utilization and modes, frequency, "
                       "C-states, samples)",
                       c.ok, n);
}
