/*
 * figures.c: check 2, every published figure of report.json recomputed from
 * the raw rows (docs/verify.md): throughput from the metric ops' counts and
 * the steady window, normalized throughput, tile, application,
 * infrastructure and final scores (VMmark 3's 80/20), mean power by the
 * trapezoid rule, PPKW, the per-level summary across repeats, peak score and
 * PPKW, active idle and overall efficiency. The definitions are those of
 * docs/method.md and tests/tools/recompute.py; the code is this file's own.
 */
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"
#include "verify/vmath.h"

typedef struct wdef {
    char name[128], unit[32], kind[32];
    double ref; /* NAN: none */
} wdef;

/* A row of a table by a key: sorted by key, found by a binary search, so
 * a bundle of many rows costs n log n, not n^2. */
typedef struct keyrow {
    int64_t k1, k2;
    size_t row;
} keyrow;

typedef struct tb_vrefs {
    wdef *w; /* [workload.NAME] */
    size_t n_w, cap_w;
    wdef *x; /* [infra.NAME] (kind, unit unused) */
    size_t n_x, cap_x;
    keyrow *ops; /* ops.csv's rows by workload_id */
    size_t n_ops;
    keyrow *wl; /* workloads.csv's rows by level_id, tile */
    size_t n_wl;
    keyrow *ix; /* infra.csv's rows by level_id */
    size_t n_ix;
} refs;

static int by_key(const void *a, const void *b) {
    const keyrow *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* The rows of t by columns c1, c2 (c2 NULL: 0), sorted; *n set. A row
 * whose key is NULL or no integer is of no level or workload: left out. */
static keyrow *key_rows(const tb_vcsv *t, const char *c1, const char *c2, size_t *n) {
    keyrow *v = xcalloc(t->n_rows + 1, sizeof *v);
    int i1 = tb_vcsv_col(t, c1), i2 = c2 ? tb_vcsv_col(t, c2) : -1;
    *n = 0;
    for (size_t r = 0; r < t->n_rows; r++) {
        keyrow k = {0, 0, r};
        if (tb_vcsv_int(t, r, i1, &k.k1) != 1 || (c2 && tb_vcsv_int(t, r, i2, &k.k2) != 1)) continue;
        v[(*n)++] = k;
    }
    qsort(v, *n, sizeof *v, by_key);
    return v;
}

/* Row i of v (sorted by keys) is before key's keys. */
static int key_before(const void *v, size_t i, const void *key) {
    const keyrow *x = &((const keyrow *)v)[i], *k = key;
    return x->k1 < k->k1 || (x->k1 == k->k1 && x->k2 < k->k2);
}

/* The first of v[0..n) whose keys are at or after (k1, k2). */
static size_t key_first(const keyrow *v, size_t n, int64_t k1, int64_t k2) {
    keyrow k = {k1, k2, 0};
    return tb_vfirst(v, n, &k, key_before);
}

/* What each level came to, for the summary. */
typedef struct lres {
    double score, watts, ppkw, app, infra;
} lres;

static wdef *find_def(wdef *v, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0) return &v[i];
    return NULL;
}

static int ini_cb(void *user, const char *section, const char *key, const char *value) {
    refs *f = user;
    int infra = strncmp(section, "infra.", 6) == 0;
    const char *name = section + (infra ? 6 : 9);
    wdef **v = infra ? &f->x : &f->w, *d;
    size_t *n = infra ? &f->n_x : &f->n_w, *cap = infra ? &f->cap_x : &f->cap_w;
    if (!infra && strncmp(section, "workload.", 9) != 0) return 1;
    if (!(d = find_def(*v, *n, name))) {
        *v = tb_grow(*v, *n, cap, sizeof **v);
        d = &(*v)[(*n)++];
        snprintf(d->name, sizeof d->name, "%s", name);
        snprintf(d->unit, sizeof d->unit, "ops/s");
        d->ref = NAN;
    }
    if (strcmp(key, "reference") == 0) {
        char *end;
        d->ref = strtod(value, &end);
        if (end == value) d->ref = NAN;
    } else if (strcmp(key, "unit") == 0) {
        snprintf(d->unit, sizeof d->unit, "%s", value);
    } else if (strcmp(key, "kind") == 0) {
        snprintf(d->kind, sizeof d->kind, "%s", value);
    }
    return 1;
}

/* A calibration's reference: settings.reference_source says "calibration
 * run N (...)" for a workload normalized against run N's calibrations row. */
static void apply_calibrations(const tb_vdata *d, refs *f) {
    const json_t *src = json_object_get(d->settings, "reference_source");
    const char *name;
    json_t *how;
    json_object_foreach((json_t *)src, name, how) {
        const char *s = json_string_value(how);
        long long run;
        int infra = strncmp(name, "infra.", 6) == 0;
        wdef *w = infra ? find_def(f->x, f->n_x, name + 6) : find_def(f->w, f->n_w, name);
        int64_t best = -1;
        if (!s || !w || sscanf(s, "calibration run %lld", &run) != 1) continue;
        w->ref = NAN; /* the calibration's row, or unknown */
        for (size_t r = 0; r < d->calibrations.n_rows; r++) {
            const char *wl = tb_vcell(&d->calibrations, r, "workload");
            int64_t id = tb_vcell_int(&d->calibrations, r, "id", -1);
            if (!wl || strcmp(wl, name) != 0 || tb_vcell_int(&d->calibrations, r, "run_id", -1) != run || id < best)
                continue;
            best = id;
            w->ref = tb_vcell_real(&d->calibrations, r, "reference");
            if (!infra && tb_vcell(&d->calibrations, r, "unit"))
                snprintf(w->unit, sizeof w->unit, "%s", tb_vcell(&d->calibrations, r, "unit"));
        }
    }
}

/* Whether op counts toward a workload of kind's throughput (docs/tile-file.md,
 * "Workloads"): oltp's orders, kv's GET and SET, every mail action, web's
 * Olio ops (not the asset Requests), http's GET. -1: a kind unknown here. */
static int is_metric(const char *kind, const char *op) {
    static const char *const olio[] = {"HomePage",     "Login",     "TagSearch", "EventDetail",
                                       "PersonDetail", "AddPerson", "AddEvent"};
    if (strcmp(kind, "oltp") == 0) return strcmp(op, "Order") == 0 || strcmp(op, "Point") == 0;
    if (strcmp(kind, "kv") == 0) return strcmp(op, "GET") == 0 || strcmp(op, "SET") == 0;
    if (strcmp(kind, "mail") == 0) return 1;
    if (strcmp(kind, "http") == 0) return strcmp(op, "GET") == 0;
    if (strcmp(kind, "web") == 0) {
        for (size_t i = 0; i < sizeof olio / sizeof olio[0]; i++)
            if (strcmp(op, olio[i]) == 0) return 1;
        return 0;
    }
    return -1;
}

/* Ops per unit time: per second for ops/s, per minute for OPM and ops/min. */
static double per_unit(const char *unit) {
    if (strcmp(unit, "ops/s") == 0) return 1.0;
    if (strcmp(unit, "OPM") == 0 || strcmp(unit, "ops/min") == 0) return 60.0;
    return NAN;
}

/* A published number: its value, NAN for null; *absent when the key is not there. */
static double pub_num(const json_t *o, const char *key, int *absent) {
    const json_t *v = json_object_get(o, key);
    *absent = v == NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Compares one figure; a mismatch is a FAIL line naming it, a match counts. */
static void cmp(tb_vresult *r, const char *tag, const char *what, const json_t *o, const char *key, double mine,
                size_t *n_ok) {
    int absent;
    double pub = pub_num(o, key, &absent);
    char name[320], lim[48];
    snprintf(lim, sizeof lim, "relative tolerance %g", TB_V_REL);
    snprintf(name, sizeof name, "figure %s %s", tag, what);
    if (absent)
        tb_vresult_add(r, 0, name, lim, "not in report.json, recomputed %.12g", mine);
    else if (!tb_v_close(pub, mine, TB_V_REL))
        tb_vresult_add(r, 0, name, lim, "published %.12g, recomputed %.12g", pub, mine);
    else
        (*n_ok)++;
}

/* A level's workloads in report.json, by tile then name then position. */
typedef struct jwl {
    int64_t tile;
    const char *name;
    size_t pos;
    const json_t *o;
} jwl;

typedef struct jindex {
    jwl *v;
    size_t n;
} jindex;

static int jwl_cmp(const jwl *x, int64_t tile, const char *name) {
    int c;
    if (x->tile != tile) return x->tile < tile ? -1 : 1;
    c = strcmp(x->name, name);
    return (c > 0) - (c < 0);
}

static int by_jwl(const void *a, const void *b) {
    const jwl *x = a, *y = b;
    int c = jwl_cmp(x, y->tile, y->name);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static jindex report_workloads(const json_t *lvj) {
    const json_t *arr = json_object_get(lvj, "workloads");
    jindex x = {xcalloc(json_array_size(arr) + 1, sizeof(jwl)), 0};
    size_t i;
    json_t *w;
    json_array_foreach(arr, i, w) {
        const char *n = json_string_value(json_object_get(w, "name"));
        if (!n) continue;
        x.v[x.n].tile = json_integer_value(json_object_get(w, "tile"));
        x.v[x.n].name = n;
        x.v[x.n].pos = i;
        x.v[x.n++].o = w;
    }
    qsort(x.v, x.n, sizeof *x.v, by_jwl);
    return x;
}

/* The first entry of the level's report workloads with name and tile. */
static int jwl_before(const void *v, size_t i, const void *key) {
    const jwl *k = key;
    return jwl_cmp(&((const jwl *)v)[i], k->tile, k->name) < 0;
}

static const json_t *report_workload(const jindex *x, const char *name, int64_t tile) {
    jwl k = {.tile = tile, .name = name};
    size_t lo = tb_vfirst(x->v, x->n, &k, jwl_before);
    return lo < x->n && jwl_cmp(&x->v[lo], tile, name) == 0 ? x->v[lo].o : NULL;
}

/* The metric ops of workload row wr, counted from ops.csv; -1 when its kind
 * is unknown. */
static int64_t metric_ops(const tb_vdata *d, const refs *f, size_t wr, const wdef *def) {
    int64_t wid = tb_vcell_int(&d->workloads, wr, "id", -1), sum = 0;
    for (size_t k = key_first(f->ops, f->n_ops, wid, 0); k < f->n_ops && f->ops[k].k1 == wid; k++) {
        size_t o = f->ops[k].row;
        const char *op = tb_vcell(&d->ops, o, "name");
        int m;
        if (!op) continue;
        if ((m = is_metric(def->kind, op)) < 0) return -1;
        if (m) {
            int64_t c = tb_vcell_int(&d->ops, o, "count", 0);
            if (c < 0 || c > ((int64_t)1 << 53)) return -1; /* no count of a real run; the sum would overflow */
            sum += c;
        }
    }
    return sum;
}

/* One tile's score from its workloads; compares each workload's figures. */
static double tile_score(const tb_vdata *d, const refs *f, const tb_vlevel *lv, const jindex *jx, int64_t tile,
                         tb_vresult *r, size_t *n_ok) {
    double norms[64], alone = NAN;
    size_t n = 0;
    for (size_t k = key_first(f->wl, f->n_wl, lv->id, tile);
         k < f->n_wl && f->wl[k].k1 == lv->id && f->wl[k].k2 == tile; k++) {
        size_t w = f->wl[k].row;
        const char *name = tb_vcell(&d->workloads, w, "name");
        const wdef *def;
        const json_t *pj;
        char what[200];
        double thr, norm;
        int64_t ops;
        if (!name) continue;
        if (!(def = find_def(f->w, f->n_w, name))) {
            snprintf(what, sizeof what, "tile %lld %s", (long long)tile, name);
            tb_vresult_add(r, 0, "figure", "a [workload.NAME] section for each workload", "%s %s: not in tiles.ini",
                           lv->tag, what);
            continue;
        }
        if ((ops = metric_ops(d, f, w, def)) < 0 || isnan(per_unit(def->unit))) {
            tb_vresult_add(r, 0, "figure", "a workload kind and unit this check knows",
                           "%s tile %lld %s: kind '%s', unit '%s'", lv->tag, (long long)tile, name, def->kind,
                           def->unit);
            continue;
        }
        thr = (double)ops / lv->window_s * per_unit(def->unit);
        norm = def->ref > 0.0 ? thr / def->ref : 0.0;
        pj = report_workload(jx, name, tile);
        snprintf(what, sizeof what, "tile %lld %s throughput", (long long)tile, name);
        cmp(r, lv->tag, what, pj, "throughput", thr, n_ok);
        snprintf(what, sizeof what, "tile %lld %s normalized", (long long)tile, name);
        cmp(r, lv->tag, what, pj, "normalized", norm, n_ok);
        snprintf(what, sizeof what, "tile %lld %s reference", (long long)tile, name);
        cmp(r, lv->tag, what, pj, "reference", def->ref, n_ok);
        if (n < sizeof norms / sizeof norms[0]) norms[n++] = norm;
        if (lv->alone && strcmp(lv->alone, name) == 0) alone = norm;
    }
    return lv->alone ? (isnan(alone) ? 0.0 : alone) : tb_v_geomean(norms, n);
}

/* An operation's ops per hour and normalized throughput against its entry
 * in the level's "infra" array of report.json. */
static void compare_infra(const tb_vlevel *lv, const json_t *lvj, const char *name, double oph, double norm,
                          tb_vresult *r, size_t *n_ok) {
    size_t i;
    json_t *o, *hit = NULL;
    char what[200];
    json_array_foreach(json_object_get(lvj, "infra"), i, o) {
        const char *n = json_string_value(json_object_get(o, "name"));
        if (n && name && strcmp(n, name) == 0) hit = o;
    }
    snprintf(what, sizeof what, "infra.%s ops_per_hour", name ? name : "?");
    cmp(r, lv->tag, what, hit, "ops_per_hour", oph, n_ok);
    snprintf(what, sizeof what, "infra.%s normalized", name ? name : "?");
    cmp(r, lv->tag, what, hit, "normalized", norm, n_ok);
}

/* The level's infrastructure score (NAN: none ran, or one has no
 * reference); *ran when it has infra rows. */
static double infra_score(const tb_vdata *d, const refs *f, const tb_vlevel *lv, const json_t *lvj, int *ran,
                          tb_vresult *r, size_t *n_ok) {
    double norms[64];
    size_t n = 0;
    int unknown = 0;
    *ran = 0;
    for (size_t k = key_first(f->ix, f->n_ix, lv->id, 0); k < f->n_ix && f->ix[k].k1 == lv->id; k++) {
        size_t i = f->ix[k].row;
        const char *name = tb_vcell(&d->infra, i, "name");
        const wdef *def = name ? find_def(f->x, f->n_x, name) : NULL;
        double oph;
        *ran = 1;
        oph = (double)tb_vcell_int(&d->infra, i, "ops", 0) / lv->window_s * 3600.0;
        compare_infra(lv, lvj, name, oph, def && def->ref > 0.0 ? oph / def->ref : NAN, r, n_ok);
        if (!def || !(def->ref > 0.0))
            unknown = 1;
        else if (n < sizeof norms / sizeof norms[0])
            norms[n++] = oph / def->ref;
    }
    return *ran && !unknown ? tb_v_geomean(norms, n) : NAN;
}

static void check_level(const tb_vdata *d, const refs *f, const tb_vlevel *lv, const json_t *lvj, lres *out,
                        tb_vresult *r) {
    size_t n_ok = 0, before = r->failed, bad = 0, outside = 0;
    double app = 0.0, infra, score, watts, ppkw;
    int ran;
    jindex jx = report_workloads(lvj);
    for (int64_t t = 1; t <= lv->tiles; t++) /* tiles <= 100000 (vmodel.c) */
        app += tile_score(d, f, lv, &jx, t, r, &n_ok);
    free(jx.v);
    infra = infra_score(d, f, lv, lvj, &ran, r, &n_ok);
    score = isnan(infra) ? app : 0.8 * app + 0.2 * infra; /* VMmark 3: 80% applications, 20% infrastructure */
    watts = tb_vmean_power(lv->s, lv->n_s, d->n_meters);
    ppkw = watts > 0.0 ? score / (watts / 1000.0) : NAN;
    for (size_t i = 0; i < lv->n_s; i++) {
        bad += !tb_vsample_valid(&lv->s[i]);
        outside += lv->s[i].mono_us < lv->t0 || lv->s[i].mono_us >= lv->t1;
    }
    if (outside)
        tb_vresult_add(r, 0, "figure", "every sample of a level inside its steady window",
                       "%s: %zu of its %zu samples outside [%lld, %lld) us", lv->tag, outside, lv->n_s,
                       (long long)lv->t0, (long long)lv->t1);
    cmp(r, lv->tag, "steady_s", lvj, "steady_s", lv->window_s, &n_ok);
    cmp(r, lv->tag, "app_score", lvj, "app_score", app, &n_ok);
    cmp(r, lv->tag, "infra_score", lvj, "infra_score", infra, &n_ok);
    cmp(r, lv->tag, "score", lvj, "score", score, &n_ok);
    cmp(r, lv->tag, "avg_watts", lvj, "avg_watts", watts, &n_ok);
    cmp(r, lv->tag, "ppkw", lvj, "ppkw", ppkw, &n_ok);
    cmp(r, lv->tag, "samples_total", lvj, "samples_total", (double)lv->n_s, &n_ok);
    cmp(r, lv->tag, "samples_bad", lvj, "samples_bad", (double)bad, &n_ok);
    if (r->failed == before) {
        char name[160];
        snprintf(name, sizeof name, "figures %s", lv->tag);
        tb_vresult_add(r, 1, name, "each within relative tolerance 1e-09",
                       "%zu agree: score %.6g%s, mean power %.6g W, ppkw %.6g", n_ok, score, ran ? " (80/20)" : "",
                       watts, ppkw);
    }
    out->score = score;
    out->watts = watts;
    out->ppkw = ppkw;
    out->app = app;
    out->infra = infra;
}

typedef struct stat3 {
    double mean, min, max;
    size_t n;
} stat3;

static stat3 stats(const double *v, size_t n) {
    stat3 s = {NAN, NAN, NAN, 0};
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) continue;
        if (s.n == 0 || v[i] < s.min) s.min = v[i];
        if (s.n == 0 || v[i] > s.max) s.max = v[i];
        sum += v[i];
        s.n++;
    }
    if (s.n) s.mean = sum / (double)s.n;
    return s;
}

static void cmp_stats(tb_vresult *r, const char *tag, const char *what, const json_t *o, const stat3 *s, size_t *n_ok) {
    const json_t *st = json_object_get(o, what);
    char w[64];
    snprintf(w, sizeof w, "%s mean", what);
    cmp(r, tag, w, st, "mean", s->mean, n_ok);
    snprintf(w, sizeof w, "%s min", what);
    cmp(r, tag, w, st, "min", s->min, n_ok);
    snprintf(w, sizeof w, "%s max", what);
    cmp(r, tag, w, st, "max", s->max, n_ok);
}

static const tb_vdata *by_repeat_data;
static int by_repeat(const void *a, const void *b) {
    const tb_vlevel *lv = by_repeat_data->lv;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (lv[x].repeat != lv[y].repeat) return lv[x].repeat < lv[y].repeat ? -1 : 1;
    return (x > y) - (x < y);
}

/* One summary entry (a load level of the sweep): within each repeat the
 * median phase by score, then mean, min and max across repeats (docs/method.md,
 * "Several phases and repeats"). */
static void summary_level(const tb_vdata *d, const lres *res, int64_t tiles, stat3 *sc, stat3 *w, stat3 *pk,
                          const json_t *sj, tb_vresult *r, size_t *n_ok) {
    double *v_sc = xcalloc(d->n_lv + 1, sizeof(double)), *v_w = xcalloc(d->n_lv + 1, sizeof(double));
    double *v_pk = xcalloc(d->n_lv + 1, sizeof(double)), *ph = xcalloc(d->n_lv + 1, sizeof(double));
    double *v_app = xcalloc(d->n_lv + 1, sizeof(double)), *v_inf = xcalloc(d->n_lv + 1, sizeof(double));
    stat3 app, inf;
    size_t *idx = xcalloc(d->n_lv + 1, sizeof(size_t)), reps = 0, n = 0;
    char tag[64];
    for (size_t i = 0; i < d->n_lv; i++) /* the load level's levels, by repeat then position: one pass */
        if (d->lv[i].tiles == tiles && !d->lv[i].alone) idx[n++] = i;
    by_repeat_data = d;
    qsort(idx, n, sizeof *idx, by_repeat);
    for (size_t a = 0, b; a < n; a = b) {
        size_t k = 0;
        int m;
        for (b = a; b < n && d->lv[idx[b]].repeat == d->lv[idx[a]].repeat; b++)
            ph[k++] = res[idx[b]].score;
        m = tb_v_median_index(ph, k);
        v_sc[reps] = res[idx[a + (size_t)m]].score;
        v_w[reps] = res[idx[a + (size_t)m]].watts;
        v_app[reps] = res[idx[a + (size_t)m]].app;
        v_inf[reps] = res[idx[a + (size_t)m]].infra;
        v_pk[reps++] = res[idx[a + (size_t)m]].ppkw;
    }
    *sc = stats(v_sc, reps);
    *w = stats(v_w, reps);
    *pk = stats(v_pk, reps);
    app = stats(v_app, reps);
    inf = stats(v_inf, reps);
    snprintf(tag, sizeof tag, "summary (tiles %lld)", (long long)tiles);
    if (!sj) {
        tb_vresult_add(r, 0, "figure", "a summary entry per load level", "%s: not in report.json", tag);
    } else {
        cmp_stats(r, tag, "score", sj, sc, n_ok);
        cmp_stats(r, tag, "avg_watts", sj, w, n_ok);
        cmp_stats(r, tag, "ppkw", sj, pk, n_ok);
        cmp_stats(r, tag, "app_score", sj, &app, n_ok);
        cmp_stats(r, tag, "infra_score", sj, &inf, n_ok);
    }
    free(v_sc);
    free(v_w);
    free(v_pk);
    free(v_app);
    free(v_inf);
    free(ph);
    free(idx);
}

static const json_t *report_summary(const json_t *summary, int64_t tiles) {
    size_t i;
    json_t *o;
    json_array_foreach(summary, i, o) if (json_integer_value(json_object_get(o, "tiles")) == tiles) return o;
    return NULL;
}

/* The summary, peak score and PPKW, active idle and overall efficiency
 * (SPECpower: sum of scores / sum of kW over the levels, active idle's kW
 * in the sum). */
static void check_run(const tb_vdata *d, const lres *res, const json_t *run, tb_vresult *r) {
    double peak_s = NAN, peak_p = NAN, ssum = 0.0, kw = 0.0, idle, eff;
    size_t used = 0, n_ok = 0, before = r->failed;
    for (size_t i = 0; i < d->n_lv; i++) {
        stat3 sc, w, pk;
        int seen = d->lv[i].alone != NULL;
        for (size_t j = 0; j < i && !seen; j++)
            seen = d->lv[j].tiles == d->lv[i].tiles && !d->lv[j].alone;
        if (seen) continue;
        summary_level(d, res, d->lv[i].tiles, &sc, &w, &pk,
                      report_summary(json_object_get(run, "summary"), d->lv[i].tiles), r, &n_ok);
        if (sc.n && (isnan(peak_s) || sc.mean > peak_s)) peak_s = sc.mean;
        if (pk.n && (isnan(peak_p) || pk.mean > peak_p)) peak_p = pk.mean;
        if (sc.n && isfinite(w.mean) && w.mean > 0.0) {
            ssum += sc.mean;
            kw += w.mean / 1000.0;
            used++;
        }
    }
    idle = d->n_idle ? tb_vmean_power(d->idle, d->n_idle, d->n_meters) : NAN;
    if (isfinite(idle) && idle > 0.0) kw += idle / 1000.0;
    eff = used > 0 && kw > 0.0 ? ssum / kw : NAN;
    cmp(r, "run", "peak_score", run, "peak_score", peak_s, &n_ok);
    cmp(r, "run", "peak_ppkw", run, "peak_ppkw", peak_p, &n_ok);
    cmp(r, "run", "active_idle_watts", run, "active_idle_watts", idle, &n_ok);
    cmp(r, "run", "overall_efficiency", run, "overall_efficiency", eff, &n_ok);
    if (r->failed == before)
        tb_vresult_add(
            r, 1, "figures run", "each within relative tolerance 1e-09",
            "%zu agree: summary, peak score %.6g, peak ppkw %.6g, active idle %.6g W, overall efficiency %.6g", n_ok,
            peak_s, peak_p, idle, eff);
}

tb_vrefs *tb_vrefs_load(const tb_vdata *d, int *parsed) {
    refs *f = xcalloc(1, sizeof *f);
    *parsed = ini_parse_string(d->config ? d->config : "", ini_cb, f) >= 0;
    apply_calibrations(d, f);
    f->ops = key_rows(&d->ops, "workload_id", NULL, &f->n_ops);
    f->wl = key_rows(&d->workloads, "level_id", "tile", &f->n_wl);
    f->ix = key_rows(&d->infra, "level_id", NULL, &f->n_ix);
    return f;
}

void tb_vrefs_free(tb_vrefs *f) {
    if (!f) return;
    free(f->w);
    free(f->x);
    free(f->ops);
    free(f->wl);
    free(f->ix);
    free(f);
}

int tb_vworkload_rate(const tb_vdata *d, const tb_vrefs *f, size_t wr, double window_s, double *thr, double *ref) {
    const char *name = tb_vcell(&d->workloads, wr, "name");
    const wdef *def = name ? find_def(f->w, f->n_w, name) : NULL;
    int64_t ops;
    if (!def || (ops = metric_ops(d, f, wr, def)) < 0 || isnan(per_unit(def->unit))) return -1;
    *thr = (double)ops / window_s * per_unit(def->unit);
    *ref = def->ref;
    return 0;
}

int64_t tb_vworkload_ops(const tb_vdata *d, const tb_vrefs *f, size_t wr, double *per) {
    const char *name = tb_vcell(&d->workloads, wr, "name");
    const wdef *def = name ? find_def(f->w, f->n_w, name) : NULL;
    if (!def || isnan(*per = per_unit(def->unit))) return -1;
    return metric_ops(d, f, wr, def);
}

double tb_vinfra_ref(const tb_vrefs *f, const char *name) {
    const wdef *def = name ? find_def(f->x, f->n_x, name) : NULL;
    return def ? def->ref : NAN;
}

void tb_vcheck_figures(const tb_vdata *d, tb_vresult *r) {
    int parsed;
    refs *fp = tb_vrefs_load(d, &parsed), f = *fp;
    const json_t *run = json_object_get(d->report, "run"), *levels = json_object_get(run, "levels");
    lres *res = xcalloc(d->n_lv + 1, sizeof *res);
    if (!parsed) tb_vresult_add(r, 0, "figure", "a readable tile file", "runs.config_text / tiles.ini does not parse");
    if (json_array_size(levels) > TB_V_LEVELS_MAX) {
        tb_vresult_add(r, 0, "figure", "at most 10000 levels in report.json",
                       "report.json has %zu levels: only each one at its levels.csv row's position is read",
                       json_array_size(levels));
    }
    for (size_t i = 0; i < d->n_lv; i++) {
        const json_t *lvj = tb_vreport_level(levels, i, &d->lv[i]);
        if (!lvj) {
            tb_vresult_add(r, 0, "figure", "an entry in report.json for each level", "%s: not in report.json",
                           d->lv[i].tag);
            res[i].score = res[i].watts = res[i].ppkw = NAN;
            continue;
        }
        check_level(d, &f, &d->lv[i], lvj, &res[i], r);
    }
    if (json_array_size(levels) != d->n_lv)
        tb_vresult_add(r, 0, "figure", "one report.json level per levels.csv row",
                       "report.json has %zu levels, levels.csv %zu", json_array_size(levels), d->n_lv);
    check_run(d, res, run, r);
    free(res);
    tb_vrefs_free(fp);
}
