/*
 * rules.c: check 3, the run rules (docs/verify.md), each a pass or fail with
 * the figure it rests on: one sample per second per meter; at most 1% of a
 * level's samples bad or missing; meter uncertainty at most 1%; no
 * auto-ranging in steady state; the steady window within 500 ms of a sample
 * at each edge; a load generator that was not CPU-bound; every QoS rule
 * judged, the compliant stages and each lab meter calibrated within a year
 * of the run's start when the run claims the compliant preset.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"

/* Limits (docs/method.md, "Validity"; MLPerf Power for the edges). */
#define RATE_MIN_S    0.5 /* consecutive samples of a meter: 1 s apart, within half a period */
#define RATE_MAX_S    1.5
#define BAD_PCT       1.0 /* bad samples, and missing ones, each at most 1% */
#define UNCERT_PCT    1.0 /* a sample's stated uncertainty */
#define EDGE_US       500000
#define CPU_BOUND_PCT 90.0 /* of the load generator's threads */
#define EVENT_SHOWN   400  /* bytes of an event's text the CPU line shows */
#define CALIB_DAYS    365  /* a lab meter's calibration, before the run's start */
/* The rules only a run claiming the compliant preset is held to: QoS judged,
 * stages, steady windows, calibration. */
#define TB_V_COMPLIANCE_RULES 4

int tb_vrule_sample_rate(const tb_vsample *s, size_t n, int n_meters, char *fig, size_t len) {
    double lo = INFINITY, hi = -INFINITY;
    int worst = -1, pass = 1, few = -1;
    size_t intervals = 0;
    for (int m = 0; m < n_meters; m++) {
        int64_t prev = 0;
        int have_prev = 0; /* a clock may be negative: no value of prev can mean "none" */
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            double d;
            if (s[i].meter != m) continue;
            k++;
            if (have_prev) {
                d = (double)(s[i].mono_us - prev) / 1e6;
                intervals++;
                if (d < lo) lo = d;
                if (d > hi) hi = d;
                if ((d < RATE_MIN_S || d > RATE_MAX_S) && pass) {
                    pass = 0;
                    worst = m;
                }
            }
            prev = s[i].mono_us;
            have_prev = 1;
        }
        if (k < 2 && few < 0) few = m;
    }
    if (few >= 0 || n_meters <= 0) { /* a meter with no interval to judge: the rule cannot pass */
        snprintf(fig, len, "meter %d: fewer than 2 samples, no interval to judge", few < 0 ? 0 : few);
        return 0;
    }
    if (!pass)
        snprintf(fig, len, "meter %d: intervals %.3f..%.3f s", worst, lo, hi);
    else
        snprintf(fig, len, "%zu intervals %.3f..%.3f s", intervals, lo, hi);
    return pass;
}

int tb_vrule_bad_samples(const tb_vsample *s, size_t n, int n_meters, double window_s, char *fig, size_t len) {
    size_t bad = 0, missing = 0, expected_each = (size_t)floor(window_s + 1e-6);
    for (size_t i = 0; i < n; i++)
        bad += !tb_vsample_valid(&s[i]);
    for (int m = 0; m < n_meters; m++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            k += s[i].meter == m;
        if (k < expected_each) missing += expected_each - k;
    }
    snprintf(fig, len, "%zu bad of %zu samples (%.1f%%), %zu of %zu expected missing (%.1f%%)", bad, n,
             n ? 100.0 * (double)bad / (double)n : 0.0, missing, expected_each * (size_t)n_meters,
             expected_each ? 100.0 * (double)missing / (double)(expected_each * (size_t)n_meters) : 0.0);
    return n > 0 && 100.0 * (double)bad <= BAD_PCT * (double)n &&
           100.0 * (double)missing <= BAD_PCT * (double)(expected_each * (size_t)n_meters);
}

int tb_vrule_uncertainty(const tb_vsample *s, size_t n, char *fig, size_t len) {
    double worst = NAN;
    size_t carried = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(s[i].unc_pct)) continue;
        carried++;
        if (isnan(worst) || s[i].unc_pct > worst) worst = s[i].unc_pct;
    }
    if (!carried) {
        snprintf(fig, len, "no sample states an uncertainty");
        return 1;
    }
    snprintf(fig, len, "at most %.3f%% over %zu samples", worst, carried);
    return worst <= UNCERT_PCT;
}

int tb_vrule_autorange(const tb_vsample *s, size_t n, char *fig, size_t len) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (s[i].flags & TB_V_AUTORANGE) != 0;
    snprintf(fig, len, "%zu of %zu samples taken while auto-ranging", k, n);
    return k == 0;
}

/* Sample i of all (by meter, then time) is before key's (meter, time). */
static int sample_before(const void *all, size_t i, const void *key) {
    const tb_vsample *s = &((const tb_vsample *)all)[i], *k = key;
    return s->meter < k->meter || (s->meter == k->meter && s->mono_us < k->mono_us);
}

size_t tb_vsample_first(const tb_vsample *all, size_t n, int m, int64_t t) {
    tb_vsample k = {.meter = m, .mono_us = t};
    return tb_vfirst(all, n, &k, sample_before);
}

/* The distance from t to the nearest sample of meter m in all (by meter,
 * then time: a binary search); INT64_MAX when the meter has none. */
static int64_t nearest(const tb_vsample *all, size_t n, int m, int64_t t) {
    int64_t best = INT64_MAX;
    size_t i = tb_vsample_first(all, n, m, t);
    if (i < n && all[i].meter == m) best = all[i].mono_us - t;
    if (i > 0 && all[i - 1].meter == m && t - all[i - 1].mono_us < best) best = t - all[i - 1].mono_us;
    return best;
}

int tb_vrule_edges(const tb_vsample *all, size_t n_all, int n_meters, int64_t t0, int64_t t1, char *fig, size_t len) {
    int64_t worst = -1;
    int wm = 0, wend = 0;
    for (int m = 0; m < n_meters; m++) {
        int64_t a = nearest(all, n_all, m, t0), b = nearest(all, n_all, m, t1);
        if (a > worst) worst = a, wm = m, wend = 0;
        if (b > worst) worst = b, wm = m, wend = 1;
    }
    if (n_meters <= 0 || worst == INT64_MAX) {
        snprintf(fig, len, "meter %d has no sample", wm);
        return 0;
    }
    snprintf(fig, len, "farthest edge: the %s, %.0f ms from meter %d's nearest sample", wend ? "end" : "start",
             (double)worst / 1000.0, wm);
    return worst <= EDGE_US;
}

int tb_vrule_event_cpu(const char *msg, double *pct, int *threads) {
    const char *p = msg;
    while ((p = strstr(p, "CPU ")) != NULL) {
        double v;
        int t, off = 0;
        if (sscanf(p, "CPU %lf%% of %d thread%n", &v, &t, &off) == 2 && off > 0) {
            *pct = v;
            *threads = t;
            return 1;
        }
        p += 4;
    }
    return 0;
}

/* A duration setting in µs, or -1 when absent or malformed. */
static int64_t setting_us(const json_t *settings, const char *key) {
    const char *s = json_string_value(json_object_get(settings, key));
    uint64_t us;
    char err[TB_ERR_LEN];
    if (!s || tb_parse_duration_us(s, &us, err) != 0) return -1;
    return (int64_t)us;
}

int tb_vrule_stages(const json_t *settings, char *fig, size_t len) {
    /* docs/method.md, "Stages": VMmark 2.x's 30 min ramp-up, three 40 min
     * phases; a 60 s ramp-down; SPECpower's 240 s active idle */
    static const struct {
        const char *key;
        int64_t us;
    } want[] = {{"ramp_up", 1800000000LL},
                {"warm_up", 0},
                {"steady", 2400000000LL},
                {"ramp_down", 60000000LL},
                {"idle", 240000000LL}};
    const char *preset = json_string_value(json_object_get(settings, "preset"));
    json_t *ph = json_object_get(settings, "phases");
    if (!preset || strcmp(preset, "compliant") != 0) {
        snprintf(fig, len, "preset %s: compliant stages not claimed", preset ? preset : "(none)");
        return 1;
    }
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int64_t got = setting_us(settings, want[i].key);
        if (got != want[i].us) {
            snprintf(fig, len, "preset compliant, but %s is %s (compliant: %lld s)", want[i].key,
                     json_string_value(json_object_get(settings, want[i].key))
                         ? json_string_value(json_object_get(settings, want[i].key))
                         : "not stated",
                     (long long)(want[i].us / 1000000));
            return 0;
        }
    }
    if (json_integer_value(ph) != 3) {
        snprintf(fig, len, "preset compliant, but %lld phases (compliant: 3)", (long long)json_integer_value(ph));
        return 0;
    }
    snprintf(fig, len, "preset compliant: 30 min ramp-up, no warm-up, 3 x 40 min, 60 s ramp-down, 240 s idle");
    return 1;
}

static void level_line(tb_vresult *r, int pass, const char *rule, const tb_vlevel *lv, const char *limit,
                       const char *fig) {
    char name[200];
    snprintf(name, sizeof name, "rule %s %s", rule, lv->tag);
    tb_vresult_add(r, pass, name, limit, "%s", fig);
}

/* Auto-ranging as the meters say of themselves (meters.csv volt_mode,
 * amp_mode: "auto" when the range was automatic). */
static void meter_modes(const tb_vdata *d, tb_vresult *r) {
    for (size_t m = 0; m < d->meters.n_rows; m++) {
        /* a model of power (estimate:, meters.estimated) is no measurement:
         * no run on it is compliant, whatever else it passes */
        char what[64];
        snprintf(what, sizeof what, "rule measured power meter %zu", m);
        tb_vresult_add(r, tb_vcell_int(&d->meters, m, "estimated", 0) == 0, what, "a power meter, not an estimate",
                       "%s",
                       tb_vcell_int(&d->meters, m, "estimated", 0) ? "ESTIMATED from CPU utilization" : "measured");
        const char *v = tb_vcell(&d->meters, m, "volt_mode"), *a = tb_vcell(&d->meters, m, "amp_mode");
        int autov = v && strcasecmp(v, "auto") == 0, autoa = a && strcasecmp(a, "auto") == 0;
        char name[64];
        snprintf(name, sizeof name, "rule ranges meter %zu", m);
        tb_vresult_add(r, !autov && !autoa, name,
                       "no auto-ranging: each range fixed, or unknown where the meter does not tell",
                       "volt range %s, amp range %s", v && *v ? v : "unknown", a && *a ? a : "unknown");
    }
}

/* An event's text, whole when it has at most max bytes, else cut at a
 * character's start (UTF-8) before max with "..." (out: max + 4 bytes). */
static const char *cut(const char *msg, size_t max, char *out, size_t len) {
    size_t n = strlen(msg);
    if (n <= max) return msg;
    n = max;
    while (n > 0 && ((unsigned char)msg[n] & 0xC0) == 0x80)
        n--;
    snprintf(out, len, "%.*s...", (int)n, msg);
    return out;
}

/* The load generator's CPU: each phase's health event, each agent's row,
 * and the validity reasons the run stored. */
static void cpu_bound(const tb_vdata *d, tb_vresult *r) {
    double worst = -1.0;
    char where[EVENT_SHOWN + 200] = "", text[EVENT_SHOWN + 8];
    for (size_t e = 0; e < d->events.n_rows; e++) {
        const char *msg = tb_vcell(&d->events, e, "message");
        double pct;
        int threads;
        if (msg && tb_vrule_event_cpu(msg, &pct, &threads) && pct > worst) {
            worst = pct;
            snprintf(where, sizeof where, "%.0f%% of %d threads (event %zu: %s", pct, threads, e + 1,
                     cut(msg, EVENT_SHOWN, text, sizeof text));
            strcat(where, ")");
        }
    }
    for (size_t a = 0; a < d->agents.n_rows; a++) {
        int64_t lid = tb_vcell_int(&d->agents, a, "level_id", -1), threads = tb_vcell_int(&d->agents, a, "threads", 0);
        double cpu = tb_vcell_real(&d->agents, a, "cpu_s"), pct;
        for (size_t i = 0; i < d->n_lv; i++) {
            if (d->lv[i].id != lid || threads <= 0 || !isfinite(cpu)) continue;
            pct = 100.0 * cpu / (d->lv[i].window_s * (double)threads);
            if (pct > worst) {
                worst = pct;
                snprintf(where, sizeof where, "%.0f%% of %lld threads (agent %s, %s)", pct, (long long)threads,
                         tb_vcell(&d->agents, a, "name") ? tb_vcell(&d->agents, a, "name") : "?", d->lv[i].tag);
            }
        }
    }
    for (size_t i = 0; i < d->n_lv; i++) {
        const char *why = tb_vcell(&d->levels, d->lv[i].row, "invalid_reason");
        if (why && strstr(why, "CPU-bound")) {
            tb_vresult_add(r, 0, "rule load generator CPU", "under 90% of its threads", "%s: %s", d->lv[i].tag, why);
            return;
        }
    }
    if (worst < 0)
        tb_vresult_add(r, 1, "rule load generator CPU", "under 90% of its threads", "no CPU share stored");
    else
        tb_vresult_add(r, worst < CPU_BOUND_PCT, "rule load generator CPU", "under 90% of its threads", "at most %s",
                       where);
}

/* Days since 1970-01-01 of the "YYYY-MM-DD" at the start of s: 0, or -1
 * when s does not start with a real date. */
static int civil_days(const char *s, int64_t *out) {
    int y, m, d, n = 0;
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t yy, era, yoe, doy, doe;
    if (!s || sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 || n != 10 || m < 1 || m > 12 || d < 1 ||
        d > mdays[m - 1] || (m == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))))
        return -1;
    yy = m <= 2 ? y - 1 : y;
    era = (yy >= 0 ? yy : yy - 399) / 400;
    yoe = yy - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    *out = era * 146097 + doe - 719468;
    return 0;
}

int tb_vrule_calibration(const char *uri, int estimated, const char *calibrated, const char *started_at, char *fig,
                         size_t len) {
    int64_t cal, start;
    if (estimated || !uri || strncmp(uri, "estimate:", 9) == 0 || strncmp(uri, "rapl:", 5) == 0 ||
        strncmp(uri, "ipmi", 4) == 0) {
        snprintf(fig, len, "no lab meter: exempt");
        return 1;
    }
    if (!calibrated || !*calibrated) {
        snprintf(fig, len, "no calibration date stated");
        return 0;
    }
    if (civil_days(calibrated, &cal) != 0 || strlen(calibrated) != 10) {
        snprintf(fig, len, "calibrated '%.40s': not a date YYYY-MM-DD", calibrated);
        return 0;
    }
    if (civil_days(started_at, &start) != 0) {
        snprintf(fig, len, "calibrated %s, but the run's start '%.40s' is no date", calibrated,
                 started_at ? started_at : "NULL");
        return 0;
    }
    if (cal > start) {
        snprintf(fig, len, "calibrated %s, after the run's start (%.10s)", calibrated, started_at);
        return 0;
    }
    snprintf(fig, len, "calibrated %s, %lld days before the run's start (%.10s)", calibrated, (long long)(start - cal),
             started_at);
    return start - cal <= CALIB_DAYS;
}

/* Each meter's calibration under the compliant preset. */
static void calibration(const tb_vdata *d, const char *preset, int claimed, tb_vresult *r) {
    char fig[300], name[64];
    const char *started = tb_vcell(&d->runs, 0, "started_at");
    if (!claimed) {
        tb_vresult_add(r, 1, "rule calibration", "each lab meter calibrated within 365 days in a compliant run",
                       "preset %s: not required", preset ? preset : "(none)");
        return;
    }
    for (size_t i = 0; i < d->meters.n_rows; i++) {
        int pass =
            tb_vrule_calibration(tb_vcell(&d->meters, i, "uri"), tb_vcell_int(&d->meters, i, "estimated", 0) != 0,
                                 tb_vcell(&d->meters, i, "calibrated"), started, fig, sizeof fig);
        snprintf(name, sizeof name, "rule calibration meter %lld", (long long)tb_vcell_int(&d->meters, i, "idx", -1));
        tb_vresult_add(r, pass, name,
                       "calibrated within 365 days before the run's start (estimate:, rapl:, ipmi exempt)", "%s", fig);
    }
}

/* A compliant run: every QoS rule judged, and each phase 40 min long. */
static void compliant(const tb_vdata *d, tb_vresult *r) {
    const char *preset = json_string_value(json_object_get(d->settings, "preset"));
    int claimed = preset && strcmp(preset, "compliant") == 0;
    size_t unjudged = 0, bad_window = 0;
    char fig[300];
    for (size_t q = 0; q < d->qos.n_rows; q++)
        unjudged += tb_vcell_int(&d->qos, q, "judged", 1) == 0;
    if (!claimed)
        tb_vresult_add(r, 1, "rule QoS judged", "every rule judged in a compliant run",
                       "preset %s: not required (%zu of %zu verdicts not judged)", preset ? preset : "(none)", unjudged,
                       d->qos.n_rows);
    else
        tb_vresult_add(r, unjudged == 0, "rule QoS judged", "every rule judged in a compliant run",
                       "%zu of %zu verdicts not judged", unjudged, d->qos.n_rows);
    tb_vresult_add(r, tb_vrule_stages(d->settings, fig, sizeof fig), "rule stages",
                   "the compliant preset's stages when it is claimed", "%s", fig);
    calibration(d, preset, claimed, r);
    r->preset_claimed = claimed;
    snprintf(r->preset, sizeof r->preset, "%s", preset ? preset : "(none)");
    for (char *c = r->preset; *c; c++) /* the bundle's text reaches a terminal: no control codes */
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr("()_.-", *c)))
            *c = '?';
    r->not_applied = claimed ? 0 : TB_V_COMPLIANCE_RULES;
    if (!claimed) return;
    for (size_t i = 0; i < d->n_lv; i++)
        bad_window += fabs(d->lv[i].window_s - 2400.0) > 1.0;
    tb_vresult_add(r, bad_window == 0, "rule steady windows", "40 min each, within 1 s", "%zu of %zu phases off",
                   bad_window, d->n_lv);
}

void tb_vcheck_rules(const tb_vdata *d, tb_vresult *r) {
    char fig[300];
    for (size_t i = 0; i < d->n_lv; i++) {
        const tb_vlevel *lv = &d->lv[i];
        level_line(r, tb_vrule_sample_rate(lv->s, lv->n_s, d->n_meters, fig, sizeof fig), "sample rate", lv,
                   "one sample per second per meter: 0.5..1.5 s apart", fig);
        level_line(r, tb_vrule_bad_samples(lv->s, lv->n_s, d->n_meters, lv->window_s, fig, sizeof fig), "bad samples",
                   lv, "at most 1% bad, at most 1% missing", fig);
        level_line(r, tb_vrule_uncertainty(lv->s, lv->n_s, fig, sizeof fig), "uncertainty", lv, "at most 1%", fig);
        level_line(r, tb_vrule_autorange(lv->s, lv->n_s, fig, sizeof fig), "auto-ranging", lv,
                   "no sample taken while auto-ranging", fig);
        level_line(r, tb_vrule_edges(d->all, d->n_all, d->n_meters, lv->t0, lv->t1, fig, sizeof fig), "edges", lv,
                   "each steady edge within 500 ms of a sample of every meter (MLPerf Power)", fig);
    }
    if (d->n_idle > 0) /* active idle is a figure too (overall efficiency) */
        tb_vresult_add(r, tb_vrule_sample_rate(d->idle, d->n_idle, d->n_meters, fig, sizeof fig),
                       "rule sample rate active idle", "one sample per second per meter: 0.5..1.5 s apart", "%s", fig);
    meter_modes(d, r);
    cpu_bound(d, r);
    compliant(d, r);
}
