/*
 * vmodel.c: the bundle's tables as the verifier's levels and samples
 * (verify_int.h), and the mean power of a set of samples.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"
#include "verify/vmath.h"

const char *tb_vcell(const tb_vcsv *t, size_t r, const char *col) { return tb_vcsv_get(t, r, tb_vcsv_col(t, col)); }

double tb_vcell_real(const tb_vcsv *t, size_t r, const char *col) {
    double v;
    return tb_vcsv_real(t, r, tb_vcsv_col(t, col), &v) == 1 ? v : NAN;
}

int64_t tb_vcell_int(const tb_vcsv *t, size_t r, const char *col, int64_t def) {
    int64_t v;
    return tb_vcsv_int(t, r, tb_vcsv_col(t, col), &v) == 1 ? v : def;
}

int tb_vsample_valid(const tb_vsample *s) { return isfinite(s->watts) && !(s->flags & TB_V_BAD); }

/* Row r's integer column col, which must be present: -1 with err if not. */
#define V_INT_MAX    ((int64_t)1 << 62)
#define V_REPEAT_MAX 10000 /* repeats, phases: the CLI allows 100 */
/* What a bundle may ask of check's CPU (docs/verify.md, "Limits"): the
 * checks loop over levels x tiles and levels x meters x samples. */
#define V_TILES_MAX     100000   /* a level's tiles; the CLI allows 4096 */
#define V_TILES_SUM_MAX 1000000  /* tiles summed over the levels */
#define V_METERS_MAX    64       /* rows of meters.csv; the CLI allows 16 */
#define V_SAMPLES_MAX   20000000 /* rows of power_samples.csv: 16 meters at 1 Hz for two weeks */

static int need_int(const tb_vcsv *t, size_t r, const char *col, int64_t *out, char *err) {
    int c = tb_vcsv_col(t, col), rc;
    if (c < 0) {
        tb_seterr(err, "%s: no column %s", t->name, col);
        return -1;
    }
    rc = tb_vcsv_int(t, r, c, out);
    if (rc != 1) {
        tb_seterr(err, "%s row %zu: %s is %s (expected a whole number)", t->name, r + 1, col,
                  rc == 0 ? "NULL" : "not a whole number");
        return -1;
    }
    /* ids, tiles, clocks in µs: none comes near 2^62, and differences and
     * sums of such values then cannot overflow */
    if (*out < -V_INT_MAX || *out > V_INT_MAX) {
        tb_seterr(err, "%s row %zu: %s %lld is out of range (|value| <= 2^62)", t->name, r + 1, col, (long long)*out);
        return -1;
    }
    return 0;
}

/* Row r of power_samples.csv as a sample. */
static int read_sample(const tb_vcsv *t, size_t r, tb_vsample *s, char *err) {
    int64_t m, mono, flags;
    int c;
    if (need_int(t, r, "meter_idx", &m, err) != 0 || need_int(t, r, "mono_us", &mono, err) != 0 ||
        need_int(t, r, "flags", &flags, err) != 0)
        return -1;
    if (m < 0 || m >= V_METERS_MAX) { /* before the cast: 2^32 must not read as meter 0 */
        tb_seterr(err, "%s row %zu: meter_idx %lld is out of range (0..%d)", t->name, r + 1, (long long)m,
                  V_METERS_MAX - 1);
        return -1;
    }
    s->meter = (int)m;
    s->mono_us = mono;
    s->flags = (unsigned)flags;
    c = tb_vcsv_col(t, "watts");
    if (c < 0 || tb_vcsv_real(t, r, c, &s->watts) != 1) {
        if (c >= 0 && tb_vcsv_get(t, r, c)) {
            tb_seterr(err, "%s row %zu: watts '%s' is not a number", t->name, r + 1, tb_vcsv_get(t, r, c));
            return -1;
        }
        s->watts = NAN;
    }
    s->unc_pct = tb_vcell_real(t, r, "uncertainty_pct");
    return 0;
}

static int by_time(const void *a, const void *b) {
    const tb_vsample *x = a, *y = b;
    if (x->mono_us != y->mono_us) return x->mono_us < y->mono_us ? -1 : 1;
    return (x->meter > y->meter) - (x->meter < y->meter);
}

static int by_meter(const void *a, const void *b) {
    const tb_vsample *x = a, *y = b;
    if (x->meter != y->meter) return x->meter < y->meter ? -1 : 1;
    return (x->mono_us > y->mono_us) - (x->mono_us < y->mono_us);
}

static int read_level(const tb_vcsv *t, size_t r, tb_vlevel *lv, char *err) {
    lv->row = r;
    if (need_int(t, r, "id", &lv->id, err) != 0 || need_int(t, r, "tiles", &lv->tiles, err) != 0 ||
        need_int(t, r, "phase", &lv->phase, err) != 0)
        return -1;
    if (lv->tiles < 1 || lv->tiles > V_TILES_MAX) {
        tb_seterr(err, "%s row %zu: tiles %lld is out of range (1..%d)", t->name, r + 1, (long long)lv->tiles,
                  V_TILES_MAX);
        return -1;
    }
    lv->repeat = tb_vcell_int(t, r, "repeat", 1);
    if (lv->repeat < 1 || lv->repeat > V_REPEAT_MAX || lv->phase < 0 || lv->phase > V_REPEAT_MAX) {
        tb_seterr(err, "%s row %zu: repeat %lld, phase %lld: out of range (1..%d)", t->name, r + 1,
                  (long long)lv->repeat, (long long)lv->phase, V_REPEAT_MAX);
        return -1;
    }
    lv->alone = tb_vcell(t, r, "alone");
    if (need_int(t, r, "steady_start_mono_us", &lv->t0, err) != 0 ||
        need_int(t, r, "steady_end_mono_us", &lv->t1, err) != 0)
        return -1;
    if (lv->t1 <= lv->t0) {
        tb_seterr(err, "%s row %zu: steady window [%lld, %lld) us is empty", t->name, r + 1, (long long)lv->t0,
                  (long long)lv->t1);
        return -1;
    }
    lv->window_s = (double)(lv->t1 - lv->t0) / 1e6;
    return 0;
}

/* Names each level "level ID (tiles T)", adding phase and repeat when the
 * run has several, and the workload of an interference level. */
static void tag_levels(tb_vdata *d) {
    int phases = 0, repeats = 0;
    for (size_t i = 0; i < d->n_lv; i++) {
        phases |= d->lv[i].phase > 1;
        repeats |= d->lv[i].repeat > 1;
    }
    for (size_t i = 0; i < d->n_lv; i++) {
        tb_vlevel *l = &d->lv[i];
        tb_buf b;
        tb_buf_init(&b, sizeof l->tag - 1);
        tb_buf_putf(&b, "level %lld (tiles %lld", (long long)l->id, (long long)l->tiles);
        if (phases) tb_buf_putf(&b, ", phase %lld", (long long)l->phase);
        if (repeats) tb_buf_putf(&b, ", repeat %lld", (long long)l->repeat);
        if (l->alone) tb_buf_putf(&b, ", %s alone", l->alone);
        tb_buf_put(&b, ")");
        snprintf(l->tag, sizeof l->tag, "%s", tb_buf_str(&b));
        tb_buf_free(&b);
    }
}

/* Where row r's sample belongs by its stage (schema 13; an older bundle
 * has no column, a row of an older run NULL): 1 active idle, 0 a level
 * (steady, level_id set), 2 a ramp (every sample only); -1 with err. */
static int sample_place(const tb_vcsv *t, size_t r, int cs, int has_level, char *err) {
    const char *st = cs >= 0 ? tb_vcsv_get(t, r, cs) : NULL;
    static const char *const ramps[] = {"ramp-up", "warm-up", "ramp-down"};
    if (!st || !*st) return has_level ? 0 : 1; /* before stages were stored: level_id NULL was idle */
    if (strcmp(st, "steady") == 0 || strcmp(st, "idle") == 0) {
        int steady = st[0] == 's';
        if (steady == has_level) return steady ? 0 : 1;
        tb_seterr(err, "%s row %zu: stage %s %s a level_id", t->name, r + 1, st, steady ? "without" : "with");
        return -1;
    }
    for (size_t i = 0; i < sizeof ramps / sizeof ramps[0]; i++)
        if (strcmp(st, ramps[i]) == 0 && !has_level) return 2;
    tb_seterr(err, "%s row %zu: stage '%.40s'%s (expected idle, ramp-up, warm-up, steady or ramp-down)", t->name, r + 1,
              st, has_level ? " with a level_id" : "");
    return -1;
}

/* The levels' positions in d->lv by id, for a binary search. */
static const tb_vdata *by_id_data;
static int by_id(const void *a, const void *b) {
    int64_t x = by_id_data->lv[*(const size_t *)a].id, y = by_id_data->lv[*(const size_t *)b].id;
    return (x > y) - (x < y);
}

/* Sorts the levels' positions by id; -1 with err when two share an id. */
static size_t *level_index(const tb_vdata *d, char *err) {
    size_t *ix = xcalloc(d->n_lv + 1, sizeof *ix);
    for (size_t i = 0; i < d->n_lv; i++)
        ix[i] = i;
    by_id_data = d;
    qsort(ix, d->n_lv, sizeof *ix, by_id);
    for (size_t i = 1; i < d->n_lv; i++)
        if (d->lv[ix[i]].id == d->lv[ix[i - 1]].id) {
            tb_seterr(err, "%s row %zu: id %lld is the id of row %zu too", d->levels.name,
                      (ix[i] > ix[i - 1] ? ix[i] : ix[i - 1]) + 1, (long long)d->lv[ix[i]].id,
                      (ix[i] > ix[i - 1] ? ix[i - 1] : ix[i]) + 1);
            free(ix);
            return NULL;
        }
    return ix;
}

size_t tb_vfirst(const void *base, size_t n, const void *key,
                 int (*before)(const void *base, size_t i, const void *key)) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before(base, mid, key))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Position i of the id index (a tb_vdata's levels by id) is before id. */
typedef struct id_key {
    const tb_vdata *d;
    int64_t id;
} id_key;
static int id_before(const void *ix, size_t i, const void *key) {
    const id_key *k = key;
    return k->d->lv[((const size_t *)ix)[i]].id < k->id;
}

/* The position in d->lv of level id, or d->n_lv. */
static size_t find_level(const tb_vdata *d, const size_t *ix, int64_t id) {
    id_key k = {d, id};
    size_t lo = tb_vfirst(ix, d->n_lv, &k, id_before);
    return lo < d->n_lv && d->lv[ix[lo]].id == id ? ix[lo] : d->n_lv;
}

/* Hands each sample to its level (or active idle); every one to all. */
static int place_samples(tb_vdata *d, char *err) {
    const tb_vcsv *t = &d->power;
    int cl = tb_vcsv_col(t, "level_id"), cs = tb_vcsv_col(t, "stage");
    size_t *cap = xcalloc(d->n_lv + 1, sizeof *cap), cap_idle = 0, *ix = NULL;
    int rc = -1;
    if (t->n_rows > V_SAMPLES_MAX) {
        tb_seterr(err, "%s line %d: %zu samples, more than check reads (%d)", t->name, V_SAMPLES_MAX + 2, t->n_rows,
                  V_SAMPLES_MAX);
        goto done;
    }
    if (!(ix = level_index(d, err))) goto done;
    if (cl < 0) {
        tb_seterr(err, "%s: no column level_id", t->name);
        goto done;
    }
    d->all = xcalloc(t->n_rows + 1, sizeof *d->all);
    for (size_t r = 0; r < t->n_rows; r++) {
        tb_vsample s;
        int64_t lid;
        int has = tb_vcsv_int(t, r, cl, &lid), where;
        size_t i;
        if (read_sample(t, r, &s, err) != 0) goto done;
        if (s.meter < 0 || s.meter >= d->n_meters) {
            tb_seterr(err, "%s row %zu: meter_idx %d, but meters.csv has %d meters", t->name, r + 1, s.meter,
                      d->n_meters);
            goto done;
        }
        d->all[d->n_all++] = s;
        if (has < 0) {
            tb_seterr(err, "%s row %zu: level_id '%s' is not a whole number", t->name, r + 1, tb_vcsv_get(t, r, cl));
            goto done;
        }
        if ((where = sample_place(t, r, cs, has != 0, err)) < 0) goto done;
        if (where == 2) continue;
        if (where == 1) {
            d->idle = tb_grow(d->idle, d->n_idle, &cap_idle, sizeof *d->idle);
            d->idle[d->n_idle++] = s;
            continue;
        }
        if ((i = find_level(d, ix, lid)) == d->n_lv) {
            tb_seterr(err, "%s row %zu: level_id %lld is no level of levels.csv", t->name, r + 1, (long long)lid);
            goto done;
        }
        d->lv[i].s = tb_grow(d->lv[i].s, d->lv[i].n_s, &cap[i], sizeof *d->lv[i].s);
        d->lv[i].s[d->lv[i].n_s++] = s;
    }
    for (size_t i = 0; i < d->n_lv; i++)
        if (d->lv[i].n_s > 1) qsort(d->lv[i].s, d->lv[i].n_s, sizeof *d->lv[i].s, by_time);
    if (d->n_idle > 1) qsort(d->idle, d->n_idle, sizeof *d->idle, by_time);
    if (d->n_all > 1) qsort(d->all, d->n_all, sizeof *d->all, by_meter);
    rc = 0;
done:
    free(cap);
    free(ix);
    return rc;
}

int tb_vmodel_build(tb_vdata *d, char *err) {
    int64_t tiles = 0;
    if (d->meters.n_rows > V_METERS_MAX || d->levels.n_rows > TB_V_LEVELS_MAX) {
        int m = d->meters.n_rows > V_METERS_MAX;
        tb_seterr(err, "%s line %d: more than %d %s, more than check reads", m ? d->meters.name : d->levels.name,
                  (m ? V_METERS_MAX : TB_V_LEVELS_MAX) + 2, m ? V_METERS_MAX : TB_V_LEVELS_MAX,
                  m ? "meters" : "levels");
        return -1;
    }
    d->n_meters = (int)d->meters.n_rows;
    if (d->levels.n_rows == 0) {
        tb_seterr(err, "%s: no level (a run with no stored phase has nothing to check)", d->levels.name);
        return -1;
    }
    d->lv = xcalloc(d->levels.n_rows, sizeof *d->lv);
    for (size_t r = 0; r < d->levels.n_rows; r++) {
        if (read_level(&d->levels, r, &d->lv[r], err) != 0) return -1;
        d->n_lv++;
        if ((tiles += d->lv[r].tiles) > V_TILES_SUM_MAX) {
            tb_seterr(err, "%s row %zu: the levels' tiles sum to more than %d, more than check reads", d->levels.name,
                      r + 1, V_TILES_SUM_MAX);
            return -1;
        }
    }
    tag_levels(d);
    return place_samples(d, err);
}

void tb_vmodel_free(tb_vdata *d) {
    for (size_t i = 0; i < d->n_lv; i++)
        free(d->lv[i].s);
    free(d->lv);
    free(d->idle);
    free(d->all);
    d->lv = NULL;
    d->idle = d->all = NULL;
    d->n_lv = d->n_idle = d->n_all = 0;
}

double tb_vmean_power(const tb_vsample *s, size_t n, int n_meters) {
    int64_t *t = xcalloc(n + 1, sizeof *t);
    double *w = xcalloc(n + 1, sizeof *w), sum = 0.0;
    for (int m = 0; m < n_meters && !isnan(sum); m++) {
        size_t k = 0;
        double mean;
        for (size_t i = 0; i < n; i++) {
            if (s[i].meter != m || !tb_vsample_valid(&s[i])) continue;
            t[k] = s[i].mono_us;
            w[k++] = s[i].watts;
        }
        sum = tb_v_trapezoid_mean(t, w, k, &mean) == 0 ? sum + mean : NAN;
    }
    free(t);
    free(w);
    return n_meters > 0 ? sum : NAN;
}

/* The report's entry for a level: the same position when its keys agree,
 * else the one entry with its tiles, phase, repeat and alone. */
static int same_level(const json_t *o, const tb_vlevel *lv) {
    const char *alone = json_string_value(json_object_get(o, "alone"));
    return json_integer_value(json_object_get(o, "tiles")) == lv->tiles &&
           json_integer_value(json_object_get(o, "phase")) == lv->phase &&
           json_integer_value(json_object_get(o, "repeat")) == lv->repeat &&
           ((!alone && !lv->alone) || (alone && lv->alone && strcmp(alone, lv->alone) == 0));
}

const json_t *tb_vreport_level(const json_t *levels, size_t i, const tb_vlevel *lv) {
    const json_t *o = json_array_get(levels, i);
    size_t k;
    json_t *e;
    if (o && same_level(o, lv)) return o;
    if (json_array_size(levels) > TB_V_LEVELS_MAX) return NULL; /* too many to search once per level */
    json_array_foreach(levels, k, e) if (same_level(e, lv)) return e;
    return NULL;
}
