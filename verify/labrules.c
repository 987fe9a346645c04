/*
 * labrules.c: the lab-measurement rules check judges again from the raw
 * rows (docs/verify.md, "The lab-measurement rules"):
 *  - a meter read as several channels (meters.csv channels): each of its
 *    power samples is the sum of its channels' rows of channel_samples.csv
 *    (one per listed channel), a bad or auto-ranged channel makes the sample
 *    so too, and a level in which a channel's bad samples pass 1% of the
 *    level's samples is stored invalid;
 *  - the ranging pass (level_ranges.csv): each row's peaks are the largest
 *    V and A of the meter's good samples in its interval (of a meter read
 *    as channels: of their good channels, channel_samples.csv), its ranges the
 *    smallest of the documented list that hold the peaks with 25% headroom,
 *    and no measured sample of a level the run calls valid is over-range or
 *    auto-ranged;
 *  - the inlet temperature (inlet_temperatures.csv): min <= mean <= max,
 *    each figure recomputed from the readings of temperature_samples.csv
 *    (when the bundle has it), and a minimum under 20 C makes the level
 *    invalid under the compliant preset (a warning otherwise), as the stored
 *    verdict must say.
 * Nothing here calls the code that produced the rows (powermeter/,
 * coordinator/): the range list and the headroom are docs/meters.md's.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"
#include "verify/vmath.h"

#define MAX_CH         9    /* channels of one meter (docs/meters.md: 1..9) */
#define BAD_PCT        1.0  /* a level's bad samples, at most 1% */
#define HEADROOM       1.25 /* the ranging pass: the range holds peak x 1.25 */
#define MIN_INLET_C    20.0 /* SPECpower's inlet temperature */
#define ONE_DOUBLE_REL DBL_EPSILON

/* docs/meters.md, "Ranging": the WT310's direct-input ranges at crest
 * factor 3 (halved at crest factor 6). */
static const double VOLT_RANGES[] = {15, 30, 60, 150, 300, 600};
static const double AMP_RANGES[] = {0.5, 1, 2, 5, 10, 20};

/* ---- rows by (meter, time) ---- */

typedef struct trow {
    int64_t meter, mono;
    int64_t channel; /* channel_samples; 0 for power_samples */
    size_t row;
} trow;

static int by_trow(const void *a, const void *b) {
    const trow *x = a, *y = b;
    if (x->meter != y->meter) return x->meter < y->meter ? -1 : 1;
    if (x->mono != y->mono) return x->mono < y->mono ? -1 : 1;
    if (x->channel != y->channel) return x->channel < y->channel ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

static int trow_before(const void *v, size_t i, const void *key) {
    const trow *x = &((const trow *)v)[i], *k = key;
    return x->meter < k->meter || (x->meter == k->meter && x->mono < k->mono);
}

/* Table t's rows by meter_idx, mono_us (and channel when with_ch), sorted;
 * *bad the first row whose keys do not read (t->n_rows when none). */
static trow *index_rows(const tb_vcsv *t, int with_ch, size_t *n, size_t *bad) {
    trow *v = xcalloc(t->n_rows + 1, sizeof *v);
    int cm = tb_vcsv_col(t, "meter_idx"), ct = tb_vcsv_col(t, "mono_us"), cc = tb_vcsv_col(t, "channel");
    *n = 0;
    *bad = t->n_rows;
    for (size_t r = 0; r < t->n_rows; r++) {
        trow k = {0, 0, 0, r};
        if (tb_vcsv_int(t, r, cm, &k.meter) != 1 || tb_vcsv_int(t, r, ct, &k.mono) != 1 ||
            (with_ch && tb_vcsv_int(t, r, cc, &k.channel) != 1)) {
            if (*bad == t->n_rows) *bad = r;
            continue;
        }
        v[(*n)++] = k;
    }
    qsort(v, *n, sizeof *v, by_trow);
    return v;
}

static size_t trow_first(const trow *v, size_t n, int64_t meter, int64_t mono) {
    trow k = {meter, mono, 0, 0};
    return tb_vfirst(v, n, &k, trow_before);
}

/* ---- channels ---- */

/* Meter m's channels (meters.csv channels "1,2"): their count, 0 for a
 * meter of one input, -1 when the list does not read. */
static int meter_channels(const tb_vdata *d, size_t m, int64_t *ch) {
    const char *s = tb_vcell(&d->meters, m, "channels");
    int n = 0;
    if (!s || !*s) return 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > MAX_CH || n == MAX_CH || (*end && *end != ',')) return -1;
        ch[n++] = v;
        s = *end ? end + 1 : end;
    }
    return n;
}

typedef struct chctx {
    const tb_vdata *d;
    const trow *rows; /* channel_samples.csv by meter, time, channel */
    size_t n_rows;
    size_t mrow; /* in meters.csv */
    int64_t meter;
    int64_t ch[MAX_CH];
    int n_ch;
} chctx;

/* Sample s (of meter c->meter) against its channels' rows: 1 when it is
 * their sum and carries their flags; 0 with why. bad[k] counts channel k's
 * bad readings. */
static int one_sum(const chctx *c, const tb_vsample *s, size_t *bad, char *why, size_t len) {
    const tb_vcsv *t = &c->d->channels;
    size_t i = trow_first(c->rows, c->n_rows, c->meter, s->mono_us), n = 0;
    double sum = 0, mag = 0;
    int null = 0;
    unsigned need = 0;
    for (; i < c->n_rows && c->rows[i].meter == c->meter && c->rows[i].mono == s->mono_us; i++)
        n++;
    i -= n;
    if (n != (size_t)c->n_ch) {
        snprintf(why, len, "%zu channel rows at mono_us %lld, meters.csv lists %d channels", n, (long long)s->mono_us,
                 c->n_ch);
        return 0;
    }
    for (int k = 0; k < c->n_ch; k++) { /* in the listed order, as the meter summed them */
        size_t j = i;
        double w;
        int64_t fl;
        while (j < i + n && c->rows[j].channel != c->ch[k])
            j++;
        if (j == i + n) {
            snprintf(why, len, "no row of channel %lld at mono_us %lld", (long long)c->ch[k], (long long)s->mono_us);
            return 0;
        }
        if (tb_vcsv_int(t, c->rows[j].row, tb_vcsv_col(t, "flags"), &fl) != 1) fl = 0;
        need |= (unsigned)fl & (TB_V_BAD | TB_V_AUTORANGE);
        if (fl & TB_V_BAD) bad[k]++;
        if ((w = tb_vcell_real(t, c->rows[j].row, "watts")), isnan(w)) null = 1;
        if (isinf(w) || isinf(tb_vcell_real(t, c->rows[j].row, "volts")) ||
            isinf(tb_vcell_real(t, c->rows[j].row, "amps"))) {
            snprintf(why, len, "channel %lld at mono_us %lld: an infinite reading", (long long)c->ch[k],
                     (long long)s->mono_us);
            return 0;
        }
        sum += w;
        mag += fabs(w);
    }
    if (null != isnan(s->watts) || (!null && (!isfinite(sum) || !isfinite(s->watts))) ||
        (!null && fabs(s->watts - sum) > (double)(c->n_ch + 1) * ONE_DOUBLE_REL * fmax(mag, DBL_MIN))) {
        snprintf(why, len, "sample at mono_us %lld: watts %.17g, its channels sum to %.17g", (long long)s->mono_us,
                 s->watts, sum);
        return 0;
    }
    if (((need & TB_V_BAD) && !(s->flags & TB_V_BAD)) || ((need & TB_V_AUTORANGE) && !(s->flags & TB_V_AUTORANGE))) {
        snprintf(why, len, "sample at mono_us %lld: flags 0x%02x, a channel's 0x%02x", (long long)s->mono_us, s->flags,
                 need);
        return 0;
    }
    return 1;
}

/* Every sample of meter c->meter (d->all) is its channels' sum; the rows of
 * the meter are exactly one per channel and sample. */
static void meter_sums(const chctx *c, tb_vresult *r) {
    size_t i = tb_vsample_first(c->d->all, c->d->n_all, (int)c->meter, INT64_MIN), n = 0, bad[MAX_CH] = {0};
    size_t rows =
        trow_first(c->rows, c->n_rows, c->meter + 1, INT64_MIN) - trow_first(c->rows, c->n_rows, c->meter, INT64_MIN);
    char name[64], why[200];
    snprintf(name, sizeof name, "channels meter %lld", (long long)c->meter);
    for (; i < c->d->n_all && c->d->all[i].meter == c->meter; i++, n++)
        if (!one_sum(c, &c->d->all[i], bad, why, sizeof why)) {
            tb_vresult_add(r, 0, name, "each power sample the sum of its channels (to the CSV's 17 digits)", "%s", why);
            return;
        }
    if (rows != n * (size_t)c->n_ch) {
        tb_vresult_add(r, 0, name, "one channel_samples row per channel and power sample",
                       "%zu rows for %zu samples of %d channels", rows, n, c->n_ch);
        return;
    }
    tb_vresult_add(r, 1, name, "each power sample the sum of its channels (to the CSV's 17 digits)",
                   "%zu samples of every stage, each the sum of channels %s", n,
                   tb_vcell(&c->d->meters, c->mrow, "channels"));
}

/* Level lv's samples of meter c->meter: a channel whose bad readings pass
 * 1% of the level's samples makes the level invalid, as levels.csv must say. */
static void level_channels(const chctx *c, const tb_vlevel *lv, tb_vresult *r) {
    size_t bad[MAX_CH] = {0}, n = 0, worst = 0;
    int wk = 0, stored_valid = tb_vcell_int(&c->d->levels, lv->row, "valid", 1) != 0;
    char name[200], why[200];
    tb_buf b;
    for (size_t i = 0; i < lv->n_s; i++) {
        if (lv->s[i].meter != c->meter) continue;
        n++;
        (void)one_sum(c, &lv->s[i], bad, why, sizeof why); /* sums: meter_sums' line */
    }
    for (int k = 0; k < c->n_ch; k++)
        if (bad[k] > worst) worst = bad[k], wk = k;
    snprintf(name, sizeof name, "channels %s meter %lld", lv->tag, (long long)c->meter);
    tb_buf_init(&b, 400);
    for (int k = 0; k < c->n_ch; k++)
        tb_buf_putf(&b, "%schannel %lld %zu bad of %zu", k ? ", " : "", (long long)c->ch[k], bad[k], n);
    if (100.0 * (double)worst > BAD_PCT * (double)lv->n_s && stored_valid)
        tb_vresult_add(r, 0, name, "a channel's bad samples over 1% make the level invalid",
                       "channel %lld: %zu bad of the level's %zu samples, but levels.csv says valid (%s)",
                       (long long)c->ch[wk], worst, lv->n_s, tb_buf_str(&b));
    else
        tb_vresult_add(r, 1, name, "a channel's bad samples over 1% make the level invalid", "%s; stored %s",
                       tb_buf_str(&b), stored_valid ? "valid" : "invalid");
    tb_buf_free(&b);
}

static void check_channels(const tb_vdata *d, tb_vresult *r) {
    size_t n = 0, bad_row;
    trow *rows = index_rows(&d->channels, 1, &n, &bad_row);
    if (bad_row < d->channels.n_rows)
        tb_vresult_add(r, 0, "channels", "meter_idx, mono_us and channel whole numbers",
                       "data/channel_samples.csv row %zu: a key does not read", bad_row + 1);
    for (size_t m = 0; m < d->meters.n_rows; m++) {
        chctx c = {d, rows, n, m, tb_vcell_int(&d->meters, m, "idx", (int64_t)m), {0}, 0};
        char name[64];
        snprintf(name, sizeof name, "channels meter %lld", (long long)c.meter);
        if ((c.n_ch = meter_channels(d, m, c.ch)) < 0) {
            tb_vresult_add(r, 0, name, "meters.csv channels: a list of channel numbers 1..9", "'%.40s'",
                           tb_vcell(&d->meters, m, "channels"));
            continue;
        }
        if (c.n_ch == 0) {
            if (trow_first(rows, n, c.meter + 1, INT64_MIN) != trow_first(rows, n, c.meter, INT64_MIN))
                tb_vresult_add(r, 0, name, "channel rows only for a meter read as channels",
                               "channel_samples.csv has rows of a meter of one input");
            continue;
        }
        meter_sums(&c, r);
        for (size_t i = 0; i < d->n_lv; i++)
            level_channels(&c, &d->lv[i], r);
    }
    free(rows);
}

/* ---- ranges ---- */

/* The smallest of list[0..n) (x f) that holds peak x HEADROOM; -1 when none. */
static double pick(const double *list, size_t n, double f, double peak) {
    for (size_t i = 0; i < n; i++)
        if (list[i] * f >= peak * HEADROOM * (1 - 1e-9)) return list[i] * f;
    return -1;
}

/* The rows the ranging peaks are taken from: power_samples.csv by meter and
 * time; for a meter read as channels, channel_samples.csv by meter, time and
 * channel too. */
typedef struct pkrows {
    const trow *pw, *ch;
    size_t n_pw, n_ch;
} pkrows;

/* Folds row r of t (its volts and amps) into the peaks: 1 when both are
 * finite and its flags are not bad. */
static int fold(const tb_vcsv *t, size_t r, double *v, double *a) {
    double u = tb_vcell_real(t, r, "volts"), c = tb_vcell_real(t, r, "amps");
    if (((unsigned)tb_vcell_int(t, r, "flags", 0) & TB_V_BAD) || !isfinite(u) || !isfinite(c)) return 0;
    if (u > *v) *v = u;
    if (c > *a) *a = c;
    return 1;
}

/* The largest good V and A of meter m's good samples in [t0, t1), and how
 * many gave both (docs/meters.md, "Ranging"). A meter read as channels
 * (chans) has no V or A of its own: the peaks are its good channels' (the
 * rows of channel_samples.csv at the sample's time), and a sample counts
 * when one of its channels gave both. */
static size_t peaks(const tb_vdata *d, const pkrows *p, int chans, int64_t m, int64_t t0, int64_t t1, double *v,
                    double *a) {
    size_t k = 0;
    *v = *a = 0;
    for (size_t i = trow_first(p->pw, p->n_pw, m, t0); i < p->n_pw && p->pw[i].meter == m && p->pw[i].mono < t1; i++) {
        int got = 0;
        if (!chans) {
            k += (size_t)fold(&d->power, p->pw[i].row, v, a);
            continue;
        }
        if ((unsigned)tb_vcell_int(&d->power, p->pw[i].row, "flags", 0) & TB_V_BAD) continue;
        for (size_t j = trow_first(p->ch, p->n_ch, m, p->pw[i].mono);
             j < p->n_ch && p->ch[j].meter == m && p->ch[j].mono == p->pw[i].mono; j++)
            got |= fold(&d->channels, p->ch[j].row, v, a);
        k += (size_t)got;
    }
    return k;
}

static int same_alone(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

/* The measured phases of ranging row k (its tiles, repeat, alone) on meter
 * m: how many, and their over-range or auto-ranged samples in valid ones. */
static size_t measured(const tb_vdata *d, size_t k, int64_t m, size_t *phases) {
    int64_t tiles = tb_vcell_int(&d->ranges, k, "tiles", -1), rep = tb_vcell_int(&d->ranges, k, "repeat", 1);
    const char *alone = tb_vcell(&d->ranges, k, "alone");
    size_t off = 0;
    *phases = 0;
    for (size_t i = 0; i < d->n_lv; i++) {
        const tb_vlevel *lv = &d->lv[i];
        if (lv->tiles != tiles || lv->repeat != rep || !same_alone(lv->alone, alone)) continue;
        (*phases)++;
        if (tb_vcell_int(&d->levels, lv->row, "valid", 1) == 0) continue;
        for (size_t j = 0; j < lv->n_s; j++)
            off += lv->s[j].meter == m && (lv->s[j].flags & (TB_V_OVERRANGE | TB_V_AUTORANGE));
    }
    return off;
}

/* One row of level_ranges.csv against the samples. */
static void range_row(const tb_vdata *d, const pkrows *p, size_t k, tb_vresult *r) {
    const tb_vcsv *t = &d->ranges;
    int64_t m = tb_vcell_int(t, k, "meter", -1), t0 = tb_vcell_int(t, k, "start_mono_us", 0),
            t1 = tb_vcell_int(t, k, "end_mono_us", 0), stored_n = tb_vcell_int(t, k, "samples", -1);
    double pv = tb_vcell_real(t, k, "peak_v"), pa = tb_vcell_real(t, k, "peak_a"),
           rv = tb_vcell_real(t, k, "volt_range_v"), ra = tb_vcell_real(t, k, "amp_range_a"), v, a, cf = NAN, f, wv, wa;
    size_t got, phases, off;
    int64_t chs[MAX_CH];
    int chans = 0;
    char name[200];
    const char *alone = tb_vcell(t, k, "alone");
    snprintf(name, sizeof name, "ranges tiles %lld%s%s (repeat %lld) meter %lld",
             (long long)tb_vcell_int(t, k, "tiles", -1), alone ? ", alone " : "", alone ? alone : "",
             (long long)tb_vcell_int(t, k, "repeat", 1), (long long)m);
    for (size_t i = 0; i < d->meters.n_rows; i++)
        if (tb_vcell_int(&d->meters, i, "idx", (int64_t)i) == m) {
            cf = tb_vcell_real(&d->meters, i, "crest_factor");
            chans = meter_channels(d, i, chs) > 0; /* a list that does not read: check_channels' line */
        }
    f = cf > 5.5 && cf < 6.5 ? 0.5 : 1.0;
    got = peaks(d, p, chans, m, t0, t1, &v, &a);
    wv = pick(VOLT_RANGES, sizeof VOLT_RANGES / sizeof VOLT_RANGES[0], f, v);
    wa = pick(AMP_RANGES, sizeof AMP_RANGES / sizeof AMP_RANGES[0], f, a);
    off = measured(d, k, m, &phases);
    if ((int64_t)got != stored_n || !tb_v_close(pv, v, TB_V_REL) || !tb_v_close(pa, a, TB_V_REL))
        tb_vresult_add(r, 0, name,
                       chans ? "the peaks of the good channels of the meter's good samples in the ranging interval"
                             : "the peaks of the meter's good samples in the ranging interval",
                       "stored %.6g V, %.6g A over %lld samples; the %s give %.6g V, %.6g A over %zu", pv, pa,
                       (long long)stored_n, chans ? "channels' readings" : "samples", v, a, got);
    else if (!tb_v_close(rv, wv, TB_V_REL) || !tb_v_close(ra, wa, TB_V_REL))
        tb_vresult_add(r, 0, name, "the smallest range holding each peak x 1.25 (docs/meters.md)",
                       "stored %g V, %g A; peaks %.6g V, %.6g A need %g V, %g A", rv, ra, v, a, wv, wa);
    else if (phases == 0)
        tb_vresult_add(r, 0, name, "ranges of a load level the run measured", "no phase of levels.csv has them");
    else
        tb_vresult_add(r, off == 0, name,
                       "the smallest ranges holding the peaks x 1.25; no over-range or auto-ranged sample in a valid "
                       "phase",
                       "peaks %.6g V, %.6g A over %zu samples%s: %g V, %g A; %zu measured phases, %zu over-range or "
                       "auto-ranged samples in valid ones",
                       v, a, got, chans ? " (their channels' largest)" : "", rv, ra, phases, off);
}

static void check_ranges(const tb_vdata *d, tb_vresult *r) {
    size_t bad_row;
    pkrows p = {NULL, NULL, 0, 0};
    trow *pw, *ch;
    if (d->ranges.n_rows == 0) return;
    if (d->ranges.n_rows > TB_V_LEVELS_MAX) { /* each row searches the levels */
        tb_vresult_add(r, 0, "ranges", "at most 10000 rows of level_ranges.csv", "%zu rows", d->ranges.n_rows);
        return;
    }
    p.pw = pw = index_rows(&d->power, 0, &p.n_pw, &bad_row);
    p.ch = ch = index_rows(&d->channels, 1, &p.n_ch, &bad_row); /* a key that does not read: check_channels' line */
    for (size_t k = 0; k < d->ranges.n_rows; k++)
        range_row(d, &p, k, r);
    free(pw);
    free(ch);
}

/* ---- inlet temperature ---- */

/* The readings of one window: count, min, max, sum (temperature_samples.csv). */
typedef struct tagg {
    int64_t n;
    double lo, hi, sum;
} tagg;

#define TEMP_IDLE (-1) /* the key of active idle's readings (stage idle, no level) */
#define TEMP_RAMP (-2) /* the ramps' readings: no figure */

/* temperature_samples.csv's rows by level_id (TEMP_IDLE, TEMP_RAMP), then
 * time; *bad the first row whose keys do not read (n_rows when none). */
static trow *index_temps(const tb_vcsv *t, size_t *n, size_t *bad) {
    trow *v = xcalloc(t->n_rows + 1, sizeof *v);
    int cl = tb_vcsv_col(t, "level_id"), cm = tb_vcsv_col(t, "mono_us");
    *n = 0;
    *bad = t->n_rows;
    for (size_t r = 0; r < t->n_rows; r++) {
        const char *stage = tb_vcell(t, r, "stage"), *lid = tb_vcsv_get(t, r, cl);
        trow k = {TEMP_RAMP, 0, 0, r};
        if (lid && *lid && tb_vcsv_int(t, r, cl, &k.meter) != 1) k.meter = INT64_MIN;
        if (!(lid && *lid) && stage && strcmp(stage, "idle") == 0) k.meter = TEMP_IDLE;
        if (k.meter == INT64_MIN || tb_vcsv_int(t, r, cm, &k.mono) != 1) {
            if (*bad == t->n_rows) *bad = r;
            continue;
        }
        v[(*n)++] = k;
    }
    qsort(v, *n, sizeof *v, by_trow);
    return v;
}

/* The readings with key lid (a level's id, or TEMP_IDLE). */
static tagg readings_of(const tb_vdata *d, const trow *v, size_t n, int64_t lid) {
    tagg a = {0, NAN, NAN, 0};
    for (size_t i = trow_first(v, n, lid, INT64_MIN); i < n && v[i].meter == lid; i++) {
        double c = tb_vcell_real(&d->temps, v[i].row, "celsius");
        if (a.n == 0 || c < a.lo) a.lo = c;
        if (a.n == 0 || c > a.hi) a.hi = c;
        a.sum += c;
        a.n++;
    }
    return a;
}

/* The row's min, mean (the sample mean: the readings' sum over their
 * count, as the run computes it) and max against the readings got. */
static int agrees(const tagg *got, int64_t n, double lo, double mean, double hi) {
    if (got->n != n) return 0;
    if (n == 0) return 1;
    return tb_v_close(lo, got->lo, TB_V_REL) && tb_v_close(hi, got->hi, TB_V_REL) &&
           tb_v_close(mean, got->sum / (double)got->n, TB_V_REL);
}

/* One row of inlet_temperatures.csv (lv NULL: active idle); got its
 * readings, NULL when the bundle has none to recompute from. */
static void inlet_row(const tb_vdata *d, size_t k, const tb_vlevel *lv, int compliant, const tagg *got, tb_vresult *r) {
    const tb_vcsv *t = &d->inlet;
    int64_t n = tb_vcell_int(t, k, "samples", -1);
    double lo = tb_vcell_real(t, k, "min_c"), mean = tb_vcell_real(t, k, "mean_c"), hi = tb_vcell_real(t, k, "max_c");
    const char *why = lv ? tb_vcell(&d->levels, lv->row, "invalid_reason") : NULL;
    const char *how = got ? "recomputed from temperature_samples.csv" : "not recomputed: no temperature_samples.csv";
    int valid = lv ? tb_vcell_int(&d->levels, lv->row, "valid", 1) != 0 : 1, cold = n > 0 && lo < MIN_INLET_C;
    int said = why && strstr(why, "inlet temperature down to") != NULL;
    char name[200];
    snprintf(name, sizeof name, "inlet temperature %s", lv ? lv->tag : "active idle");
    if (n < 0 || (n == 0) != isnan(lo) || (n > 0 && !(lo <= mean && mean <= hi)))
        tb_vresult_add(r, 0, name, "min <= mean <= max over samples > 0 (none: NULL)",
                       "%lld readings: min %.4g, mean %.4g, max %.4g C", (long long)n, lo, mean, hi);
    else if (got && !agrees(got, n, lo, mean, hi))
        tb_vresult_add(r, 0, name, "min, mean (of the readings) and max of the window's readings (relative 1e-09)",
                       "stored min %.6g, mean %.6g, max %.6g C over %lld readings; temperature_samples.csv gives min "
                       "%.6g, mean %.6g, max %.6g C over %lld",
                       lo, mean, hi, (long long)n, got->lo, got->n ? got->sum / (double)got->n : NAN, got->hi,
                       (long long)got->n);
    else if (lv && compliant && cold && (valid || !said))
        tb_vresult_add(r, 0, name, "a minimum under 20 C makes the level invalid under the compliant preset",
                       "min %.1f C, but levels.csv says %s", lo, valid ? "valid" : "invalid for another reason");
    else if (lv && (!compliant || !cold) && said)
        tb_vresult_add(r, 0, name, "invalid for temperature only under 20 C in a compliant run",
                       "min %.1f C (%s), but levels.csv says '%.120s'", lo, compliant ? "compliant" : "not compliant",
                       why);
    else if (n > 0)
        tb_vresult_add(r, 1, name, "at least 20 C, or the level invalid (compliant preset; a warning otherwise)",
                       "min %.1f, mean %.1f, max %.1f C over %lld readings (%s); stored %s", lo, mean, hi, (long long)n,
                       how, valid ? "valid" : "invalid");
    else
        tb_vresult_add(r, 1, name, "at least 20 C, or the level invalid (compliant preset; a warning otherwise)",
                       "no reading in the window (%s); stored %s", how, valid ? "valid" : "invalid");
}

/* Each reading with a level_id is one of a level of levels.csv and inside
 * its steady window [t0, t1) (ids: the levels by id). One line. */
static void readings_in_windows(const tb_vdata *d, const trow *v, size_t n, size_t bad_row, const trow *ids,
                                tb_vresult *r) {
    const char *what = "each steady reading inside its level's steady window";
    size_t in = 0;
    if (bad_row < d->temps.n_rows) {
        tb_vresult_add(r, 0, "inlet temperature readings", "level_id and mono_us whole numbers",
                       "data/temperature_samples.csv row %zu: a key does not read", bad_row + 1);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t j;
        const tb_vlevel *lv;
        if (v[i].meter < 0) continue;
        j = trow_first(ids, d->n_lv, v[i].meter, 0);
        if (j == d->n_lv || ids[j].meter != v[i].meter) {
            tb_vresult_add(r, 0, "inlet temperature readings", what,
                           "data/temperature_samples.csv row %zu: level_id %lld is no level", v[i].row + 1,
                           (long long)v[i].meter);
            return;
        }
        lv = &d->lv[ids[j].row];
        if (v[i].mono < lv->t0 || v[i].mono >= lv->t1) {
            tb_vresult_add(r, 0, "inlet temperature readings", what,
                           "data/temperature_samples.csv row %zu: mono_us %lld outside %s's [%lld, %lld)", v[i].row + 1,
                           (long long)v[i].mono, lv->tag, (long long)lv->t0, (long long)lv->t1);
            return;
        }
        in++;
    }
    tb_vresult_add(r, 1, "inlet temperature readings", what, "%zu readings, %zu of them in steady windows", n, in);
}

static void check_inlet(const tb_vdata *d, tb_vresult *r) {
    const char *preset = json_string_value(json_object_get(d->settings, "preset"));
    int compliant = preset && strcmp(preset, "compliant") == 0, have = d->temps.n_cols > 0;
    size_t *seen, nt = 0, bad_row = 0;
    trow *ids, *tv = NULL;            /* the levels by id (meter: the id, row: the position); the readings */
    if (d->inlet.n_rows == 0) return; /* not measured: the reports say so */
    seen = xcalloc(d->n_lv + 1, sizeof *seen);
    ids = xcalloc(d->n_lv + 1, sizeof *ids);
    for (size_t i = 0; i < d->n_lv; i++)
        ids[i] = (trow){d->lv[i].id, 0, 0, i};
    qsort(ids, d->n_lv, sizeof *ids, by_trow);
    if (have) {
        tv = index_temps(&d->temps, &nt, &bad_row);
        readings_in_windows(d, tv, nt, bad_row, ids, r);
    }
    for (size_t k = 0; k < d->inlet.n_rows; k++) {
        int64_t lid = tb_vcell_int(&d->inlet, k, "level_id", -1);
        size_t i = trow_first(ids, d->n_lv, lid, 0);
        tagg got;
        if (lid >= 0 && (i == d->n_lv || ids[i].meter != lid)) {
            tb_vresult_add(r, 0, "inlet temperature", "rows of levels of levels.csv",
                           "data/inlet_temperatures.csv row %zu: level_id %lld is no level", k + 1, (long long)lid);
            continue;
        }
        if (lid >= 0) seen[ids[i].row]++;
        if (have) got = readings_of(d, tv, nt, lid >= 0 ? lid : TEMP_IDLE);
        inlet_row(d, k, lid >= 0 ? &d->lv[ids[i].row] : NULL, compliant, have ? &got : NULL, r);
    }
    for (size_t i = 0; i < d->n_lv; i++)
        if (seen[i] != 1)
            tb_vresult_add(r, 0, "inlet temperature", "one row per phase when the run measured it", "%s: %zu rows",
                           d->lv[i].tag, seen[i]);
    free(seen);
    free(ids);
    free(tv);
}

void tb_vcheck_lab(const tb_vdata *d, tb_vresult *r) {
    check_channels(d, r);
    check_ranges(d, r);
    check_inlet(d, r);
}
