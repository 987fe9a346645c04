/*
 * meter.c: the meter front end. Parses the scheme of a meter URI, picks the
 * driver from one static table, wraps every driver's errors in the redacted
 * URI, turns a driver failure into a MISSING sample so the poller keeps its
 * cadence, and implements "auto" (best real source on this host, else the
 * utilization estimate) and password redaction for anything that gets stored.
 * Every sample then passes one plausibility check (tb_meter_plausible), the
 * same for every driver: no driver repeats it.
 *
 * Adding a meter = one driver file exporting a tb_meter_driver, plus one
 * extern line and one entry in `drivers[]` below. Driver error messages are
 * "what: why" without the URI (meter.c prefixes "meter '<redacted uri>': "),
 * and must never echo a password.
 */
#include "powermeter/meter.h"
#include "common/redact.h"
#include "powermeter/accuracy.h"
#include "powermeter/meter_uri.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One line per driver file. */
extern const tb_meter_driver tb_meter_estimate_driver;
extern const tb_meter_driver tb_meter_wt310_driver, tb_meter_wt210_driver, tb_meter_yokoserial_driver; /* yokogawa.c */
extern const tb_meter_driver tb_meter_ptd_driver;                                                      /* ptd.c */
extern const tb_meter_driver tb_meter_rapl_driver;                                                     /* rapl.c */
extern const tb_meter_driver tb_meter_ipmi_driver;                                                     /* ipmi.c */

/* The scheme table: tb_meter_open looks the URI scheme up here (case-insensitive). */
static const tb_meter_driver *const drivers[] = {
    &tb_meter_estimate_driver, &tb_meter_wt310_driver, &tb_meter_wt210_driver, &tb_meter_yokoserial_driver,
    &tb_meter_ptd_driver,      &tb_meter_rapl_driver,  &tb_meter_ipmi_driver,
};
#define N_DRIVERS (sizeof drivers / sizeof drivers[0])

/*
 * What "auto" tries, best first, before falling back to the estimate: RAPL
 * (host counters; needs root since CVE-2020-8694), then the in-band BMC
 * (DCMI power reading through /dev/ipmi0). A probe whose open fails is
 * skipped, its reason logged at info level, so "auto" says why it fell back.
 */
static const char *const auto_probes[] = {
    "rapl:",
    "ipmi:local",
    NULL,
};
#define AUTO_FALLBACK_URI   "estimate:"
#define AUTO_FALLBACK_MODEL "estimate (auto: no real meter found)"

struct tb_meter {
    const tb_meter_driver *drv;
    void *self;
    tb_meter_info info;
    char *raw_uri; /* the URI as given, only to scrub its secrets from driver errors */
    /* A sample and a change of ranges take turns (the poller thread samples
     * while the coordinator ranges). */
    pthread_mutex_t lock;
};

static const tb_meter_driver *find_driver(const char *scheme, size_t len) {
    size_t i;
    for (i = 0; i < N_DRIVERS; i++) {
        if (strlen(drivers[i]->scheme) == len && strncasecmp(drivers[i]->scheme, scheme, len) == 0) return drivers[i];
    }
    return NULL;
}

/* A meter's identity is the instrument's (or a daemon's) text: replace
 * bytes outside printable ASCII with '?' so that a reply carrying terminal
 * escapes ("\x1b]0;...\x07") reaches no terminal, report or database raw. */
static void printable(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e) *s = '?';
}

static void sanitize_identity(tb_meter_info *info) {
    printable(info->model);
    printable(info->idn);
    printable(info->serial);
    printable(info->firmware);
    printable(info->driver);
}

/* "estimate, auto": for error messages. */
static void known_schemes(char *buf, size_t len) {
    size_t i, used = 0;
    buf[0] = '\0';
    for (i = 0; i < N_DRIVERS && used < len; i++) {
        int k = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", drivers[i]->scheme);
        if (k < 0) break;
        used += (size_t)k;
    }
    if (used < len) snprintf(buf + used, len - used, "%sauto", used ? ", " : "");
}

/*
 * Opens uri with drv into m (m->info.uri already set). Driver errors come
 * back as "meter '<redacted>': <driver's what: why>".
 */
static int open_with(tb_meter *m, const tb_meter_driver *drv, const char *uri, char *err) {
    char derr[TB_ERR_LEN] = "";
    int rc;
    m->drv = drv;
    m->self = NULL;
    if ((rc = drv->open(uri, &m->self, derr)) != 0) {
        tb_redact_scrub(derr, sizeof derr, uri);
        tb_seterr(err, "meter '%s': %s", m->info.uri, derr[0] ? derr : "open failed");
        return rc == TB_METER_EUNREACH ? TB_METER_EUNREACH : -1;
    }
    if (drv->identify && drv->identify(m->self, &m->info, derr) != 0) {
        tb_redact_scrub(derr, sizeof derr, uri);
        tb_seterr(err, "meter '%s': identify: %s", m->info.uri, derr[0] ? derr : "failed");
        drv->close(m->self);
        m->self = NULL;
        return TB_METER_EUNREACH;
    }
    sanitize_identity(&m->info); /* one place for every driver */
    free(m->raw_uri);
    m->raw_uri = xstrdup(uri);
    return 0;
}

static int open_auto(tb_meter *m, char *err) {
    const tb_meter_driver *drv;
    size_t i;
    for (i = 0; auto_probes[i]; i++) {
        char perr[TB_ERR_LEN] = "";
        const char *colon = strchr(auto_probes[i], ':');
        drv = find_driver(auto_probes[i], colon ? (size_t)(colon - auto_probes[i]) : 0);
        if (!drv) continue;
        memset(&m->info, 0, sizeof m->info);
        tb_redact_uri(auto_probes[i], m->info.uri, sizeof m->info.uri);
        if (open_with(m, drv, auto_probes[i], perr) == 0) {
            tb_log(TB_LOG_INFO, "meter 'auto': using %s (%s)", m->info.uri, m->info.model);
            return 0;
        }
        tb_log(TB_LOG_INFO, "meter 'auto': skipped %s", perr);
    }
    drv = find_driver("estimate", strlen("estimate"));
    if (!drv) {
        tb_seterr(err, "meter 'auto': no real meter found and the estimate driver is missing");
        return -1;
    }
    memset(&m->info, 0, sizeof m->info);
    tb_redact_uri(AUTO_FALLBACK_URI, m->info.uri, sizeof m->info.uri);
    if (open_with(m, drv, AUTO_FALLBACK_URI, err) != 0) return -1;
    snprintf(m->info.model, sizeof m->info.model, "%s", AUTO_FALLBACK_MODEL);
    m->info.estimated = 1;
    tb_log(TB_LOG_WARN, "meter 'auto': no real meter found; power is ESTIMATED from CPU utilization");
    return 0;
}

/* The schemes of lab instruments, whose URI may carry calibrated=YYYY-MM-DD
 * (each driver lists "calibrated" among its keys; the others refuse it). */
static int lab_scheme(const tb_meter_driver *drv) {
    static const char *const lab[] = {"wt310", "wt210", "yokogawa+serial", "ptd"};
    for (size_t i = 0; i < sizeof lab / sizeof lab[0]; i++)
        if (strcmp(drv->scheme, lab[i]) == 0) return 1;
    return 0;
}

/* calibrated= of a lab meter's URI into the info: an error for a date that is
 * not one or lies in the future; a warning when it is missing or stale. */
static int lab_calibration(const char *uri, tb_meter_info *info, char *err) {
    const char *q = strchr(uri, '?');
    char v[64], e[TB_ERR_LEN] = "", why[TB_ERR_LEN];
    int64_t days;
    int rc;
    info->lab = 1;
    rc = q ? tb_meter_uri_param(q, "calibrated", v, sizeof v, e) : 0;
    if (rc < 0 || (rc == 1 && tb_meter_parse_calibrated(v, tb_meter_today_days(), &days, e) != 0)) {
        tb_seterr(err, "meter '%s': %s", info->uri, e);
        return -1;
    }
    if (rc == 1) memcpy(info->calibrated, v, sizeof info->calibrated); /* 10 characters and NUL: parsed */
    if (tb_meter_calibration_stale(info, tb_meter_today_days(), why, sizeof why))
        tb_log(TB_LOG_WARN,
               "%s: a lab meter's calibration should be under %d days old (invalid under --preset "
               "compliant)",
               why, TB_METER_CALIBRATION_MAX_DAYS);
    return 0;
}

int tb_meter_open(const char *uri, tb_meter **out, char *err) {
    const tb_meter_driver *drv;
    const char *colon;
    char shown[256];
    tb_meter *m;
    int rc;

    *out = NULL;
    if (!uri || !*uri) {
        tb_seterr(err, "meter '': empty URI (examples: estimate:, auto)");
        return -1;
    }
    tb_redact_uri(uri, shown, sizeof shown);
    m = xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->lock, NULL); /* a default mutex holds nothing to free when m is freed unused */
    if (strcasecmp(uri, "auto") == 0 || strcasecmp(uri, "auto:") == 0) {
        if (open_auto(m, err) != 0) {
            free(m);
            return -1;
        }
        *out = m;
        return 0;
    }
    colon = strchr(uri, ':');
    if (!colon || colon == uri) {
        char known[128];
        known_schemes(known, sizeof known);
        tb_seterr(err, "meter '%s': not a meter URI (expected scheme:..., known schemes: %s)", shown, known);
        free(m);
        return -1;
    }
    drv = find_driver(uri, (size_t)(colon - uri));
    if (!drv) {
        char known[128];
        known_schemes(known, sizeof known);
        tb_seterr(err, "meter '%s': unknown scheme '%.*s' (known: %s)", shown, (int)(colon - uri), uri, known);
        free(m);
        return -1;
    }
    memcpy(m->info.uri, shown, sizeof m->info.uri);
    if (lab_scheme(drv) && lab_calibration(uri, &m->info, err) != 0) {
        free(m);
        return -1;
    }
    if ((rc = open_with(m, drv, uri, err)) != 0) {
        free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int tb_meter_open_driver(const tb_meter_driver *drv, const char *uri, tb_meter **out, char *err) {
    tb_meter *m;
    *out = NULL;
    if (!drv || !drv->open || !drv->sample || !drv->close) {
        tb_seterr(err, "meter '%s': driver lacks open/sample/close", uri ? uri : "");
        return -1;
    }
    m = xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->lock, NULL); /* a default mutex holds nothing to free when m is freed unused */
    tb_redact_uri(uri ? uri : "", m->info.uri, sizeof m->info.uri);
    if (open_with(m, drv, uri ? uri : "", err) != 0) {
        free(m);
        return -1;
    }
    *out = m;
    return 0;
}

const tb_meter_info *tb_meter_get_info(const tb_meter *m) { return &m->info; }

/* A failed sample of a meter read as channels: each channel MISSING too. */
static void missing_channels(const tb_meter_info *info, tb_sample *s) {
    s->nch = info->nchannels > 0 ? info->nchannels : 0;
    for (int i = 0; i < s->nch; i++) {
        tb_channel_sample *c = &s->ch[i];
        c->channel = info->channel[i];
        c->watts = c->volts = c->amps = c->pf = NAN;
        c->flags = TB_SAMPLE_MISSING;
        c->reason = TB_REASON_MISSING;
    }
}

/* The reason a driver's flags give, or 0. */
static int flag_reason(unsigned flags) {
    if (flags & TB_SAMPLE_MISSING) return TB_REASON_MISSING;
    if (flags & TB_SAMPLE_OVERRANGE) return TB_REASON_OVERRANGE;
    if (flags & TB_SAMPLE_INVALID) return TB_REASON_INVALID;
    return TB_REASON_NONE;
}

void tb_meter_sum_channels(const tb_meter_info *info, tb_sample *s) {
    tb_meter_info one = *info;
    double sum = 0;
    int bad_reason = TB_REASON_NONE;
    one.elements = 1;
    for (int i = 0; i < s->nch && i < TB_METER_MAX_CHANNELS; i++) {
        tb_channel_sample *c = &s->ch[i];
        tb_sample x = {0};
        c->reason = flag_reason(c->flags);
        if (c->reason == TB_REASON_NONE) {
            x.watts = c->watts;
            x.volts = c->volts;
            x.amps = c->amps;
            x.pf = c->pf;
            x.flags = c->flags;
            if ((c->reason = tb_meter_plausible(&one, &x, NULL, 0)) != TB_REASON_NONE)
                c->flags |= TB_SAMPLE_IMPLAUSIBLE;
        }
        s->flags |= c->flags & (TB_SAMPLE_BAD | TB_SAMPLE_AUTORANGE);
        if (c->reason != TB_REASON_NONE && bad_reason == TB_REASON_NONE) bad_reason = c->reason;
        sum += c->watts;
    }
    s->watts = sum;
    s->volts = s->amps = s->pf = NAN;
    if (bad_reason != TB_REASON_NONE) {
        s->reason = bad_reason;
        if (!(s->flags & TB_SAMPLE_BAD)) s->flags |= TB_SAMPLE_INVALID;
    }
}

int tb_meter_model_channels(const char *model) {
    static const struct {
        const char *prefix;
        int n;
    } t[] = {{"WT310", 1}, {"WT210", 1}, {"WT332", 2}, {"WT333", 3}, {"WT500", 3}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strncasecmp(model, t[i].prefix, strlen(t[i].prefix)) == 0) return t[i].n;
    return 0;
}

static int sample_locked(tb_meter *m, tb_sample *s, char *err);

int tb_meter_sample(tb_meter *m, tb_sample *s, char *err) {
    int rc;
    pthread_mutex_lock(&m->lock);
    rc = sample_locked(m, s, err);
    pthread_mutex_unlock(&m->lock);
    return rc;
}

int tb_meter_can_range(const tb_meter *m) { return m->drv->set_ranges != NULL; }

int tb_meter_set_ranges(tb_meter *m, double volts, double amps, char *err) {
    char derr[TB_ERR_LEN] = "";
    int rc = 0;
    if (!m->drv->set_ranges) {
        tb_seterr(err,
                  "meter '%s': its ranges cannot be set at run time (ranging needs a wt310:, wt210:, "
                  "yokogawa+serial: or ptd: meter)",
                  m->info.uri);
        return -1;
    }
    pthread_mutex_lock(&m->lock);
    if (m->drv->set_ranges(m->self, volts, amps, derr) != 0) {
        tb_redact_scrub(derr, sizeof derr, m->raw_uri);
        tb_seterr(err, "meter '%s': set ranges: %s", m->info.uri, derr[0] ? derr : "failed");
        rc = -1;
    }
    /* the ranges read back, whatever happened */
    if (m->drv->identify && m->drv->identify(m->self, &m->info, derr) == 0) sanitize_identity(&m->info);
    pthread_mutex_unlock(&m->lock);
    return rc;
}

void tb_meter_info_now(tb_meter *m, tb_meter_info *out) {
    pthread_mutex_lock(&m->lock);
    *out = m->info;
    pthread_mutex_unlock(&m->lock);
}

static int sample_locked(tb_meter *m, tb_sample *s, char *err) {
    char derr[TB_ERR_LEN] = "";
    /* Prefill: drivers only overwrite what they know. */
    s->mono_us = tb_now_us();
    s->wall_us = tb_wall_us();
    s->watts = s->volts = s->amps = s->pf = s->uncertainty_pct = NAN;
    s->flags = 0;
    s->reason = TB_REASON_NONE;
    s->nch = 0;
    if (m->drv->sample(m->self, s, derr) != 0) {
        /* Stamp the failure when it was noticed, not when it was asked for. */
        s->mono_us = tb_now_us();
        s->wall_us = tb_wall_us();
        s->watts = s->volts = s->amps = s->pf = s->uncertainty_pct = NAN;
        s->flags = TB_SAMPLE_MISSING | (m->info.estimated ? TB_SAMPLE_ESTIMATED : 0u);
        s->reason = TB_REASON_MISSING;
        missing_channels(&m->info, s);
        tb_redact_scrub(derr, sizeof derr, m->raw_uri);
        tb_seterr(err, "meter '%s': %s", m->info.uri, derr[0] ? derr : "sample failed");
        return -1;
    }
    if (m->info.estimated) s->flags |= TB_SAMPLE_ESTIMATED;
    if (s->nch > 0) tb_meter_sum_channels(&m->info, s);
    /* The driver's own flags first; then one plausibility check for all. */
    if (s->reason != TB_REASON_NONE) return 0; /* a bad channel's (tb_meter_sum_channels) */
    if ((s->reason = flag_reason(s->flags)) == TB_REASON_NONE &&
        (s->reason = tb_meter_plausible(&m->info, s, NULL, 0)) != TB_REASON_NONE)
        s->flags |= TB_SAMPLE_IMPLAUSIBLE;
    return 0;
}

/* ---- plausibility (meter.h) ---- */

static double crest_of(const tb_meter_info *info) {
    return info->crest_factor > 0 ? info->crest_factor : TB_PLAUSIBLE_DEFAULT_CREST;
}

/*
 * The largest ranges of the meters whose model the info names (matched as a
 * case-insensitive substring, first match wins), at crest factor 3, where
 * they are largest (at CF 6 each range halves, CF x range stays the same).
 * Sources: WT310E/WT310EH/WT332E/WT333E user's manual IM WT310E-01EN (and
 * the WT310/WT310HC/WT330 one), WT210/WT230 IM 760401-01E,
 * WT500 IM 760201-01E, each in its "Specifications" chapter.
 */
static const struct {
    const char *model;
    double volts, amps;
} largest_ranges[] = {
    {"WT310HC", 600, 40}, {"WT310EH", 600, 40}, {"WT310", 600, 20},  {"WT33", 600, 20},
    {"WT210", 600, 20},   {"WT230", 600, 20},   {"WT500", 1000, 40},
};

/* 1 when needle occurs in hay, ignoring case. */
static int has_word(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return 1;
    return 0;
}

static int model_ranges(const tb_meter_info *info, double *v, double *a) {
    for (size_t i = 0; i < sizeof largest_ranges / sizeof largest_ranges[0]; i++)
        if (has_word(info->model, largest_ranges[i].model)) {
            *v = largest_ranges[i].volts;
            *a = largest_ranges[i].amps;
            return 1;
        }
    return 0;
}

static int range_fixed(int mode, double range) { return mode == TB_RANGE_FIXED && range > 0; }

/* The bound of tb_meter_plausible's TB_REASON_ABOVE_RANGE and how it was
 * found (for the explanation). */
static double max_watts(const tb_meter_info *info, char *how, size_t len) {
    double cf = crest_of(info), v, a, n = info->elements > 1 ? info->elements : 1;
    int vf = range_fixed(info->volt_mode, info->volt_range_v), af = range_fixed(info->amp_mode, info->amp_range_a);
    if (vf && af) {
        if (how)
            snprintf(how, len, "(%g x %g V) x (%g x %g A)%s", cf, info->volt_range_v, cf, info->amp_range_a,
                     n > 1 ? " x elements" : "");
        return cf * info->volt_range_v * cf * info->amp_range_a * n;
    }
    if (model_ranges(info, &v, &a)) {
        /* A side on a fixed, known range keeps it; the other may reach the
         * model's largest range (auto-ranging) or is unknown. */
        double pv = vf ? cf * info->volt_range_v : 3 * v, pa = af ? cf * info->amp_range_a : 3 * a;
        if (how)
            (void)tb_fmt_capped(
                how, len, "%g V peak x %g A peak%s (%s's largest ranges at crest factor 3 where a range is %s)", pv, pa,
                n > 1 ? " x elements" : "", info->model,
                info->volt_mode == TB_RANGE_AUTO || info->amp_mode == TB_RANGE_AUTO ? "auto" : "unknown");
        return pv * pa * n;
    }
    if (how) snprintf(how, len, "the ceiling of one meter feed (ranges auto or unknown, model unknown)");
    return TB_PLAUSIBLE_FEED_MAX_W;
}

double tb_meter_max_watts(const tb_meter_info *info) { return max_watts(info, NULL, 0); }

/* W against V x A (PF not read: |PF| <= 1) or V x A x PF, within the tolerance. */
static int judge_vapf(const tb_meter_info *info, const tb_sample *s, char *why, size_t len) {
    double w = s->watts, va = s->volts * s->amps, vapf, tol, range_w = 0;
    int have_pf = isfinite(s->pf);
    if (info->volt_range_v > 0 && info->amp_range_a > 0)
        range_w = info->volt_range_v * info->amp_range_a * (info->crest_factor >= 6 ? 2.0 : 1.0);
    if (!have_pf) {
        tol = TB_PLAUSIBLE_VAPF_READING * fmax(fabs(w), va) + TB_PLAUSIBLE_VAPF_RANGE * range_w;
        if (fabs(w) <= va + tol) return TB_REASON_NONE;
        if (why)
            snprintf(why, len, "W %g > V x A = %g x %g = %g VA (PF not read; tolerance %g W)", w, s->volts, s->amps, va,
                     tol);
        return TB_REASON_VAPF;
    }
    vapf = va * s->pf;
    tol = TB_PLAUSIBLE_VAPF_READING * fmax(fabs(w), fabs(vapf)) + TB_PLAUSIBLE_VAPF_RANGE * range_w;
    if (fabs(w - vapf) <= tol) return TB_REASON_NONE;
    if (why)
        snprintf(why, len, "V x A x PF = %g x %g x %g = %g W, but W %g (tolerance %g W)", s->volts, s->amps, s->pf,
                 vapf, w, tol);
    return TB_REASON_VAPF;
}

int tb_meter_plausible(const tb_meter_info *info, const tb_sample *s, char *why, size_t len) {
    double w = s->watts, max_w;
    char how[160];
    if (why && len) why[0] = '\0';
    if (s->flags & (TB_SAMPLE_MISSING | TB_SAMPLE_INVALID | TB_SAMPLE_OVERRANGE)) return TB_REASON_NONE;
    if (!isfinite(w)) {
        if (why) snprintf(why, len, "W %g is not a finite number", w);
        return TB_REASON_NONFINITE;
    }
    if (w < 0) {
        if (why) snprintf(why, len, "W %g < 0", w);
        return TB_REASON_NEGATIVE;
    }
    max_w = max_watts(info, how, sizeof how);
    if (w > max_w) {
        if (why) snprintf(why, len, "W %g > %g W = %s", w, max_w, how);
        return TB_REASON_ABOVE_RANGE;
    }
    if (s->volts < 0 || s->amps < 0) { /* NaN compares false: unread stays unjudged */
        if (why) snprintf(why, len, "RMS %s %g < 0", s->volts < 0 ? "V" : "A", s->volts < 0 ? s->volts : s->amps);
        return TB_REASON_NEGATIVE_VA;
    }
    if (!isfinite(s->volts) || !isfinite(s->amps) || info->elements > 1) return TB_REASON_NONE;
    return judge_vapf(info, s, why, len);
}

const char *tb_meter_reason_text(int reason) {
    static const char *const text[TB_REASON_COUNT] = {
        [TB_REASON_NONE] = "",
        [TB_REASON_MISSING] = "missing: no reply from the meter",
        [TB_REASON_INVALID] = "invalid: the meter or driver flagged the reading (no data, unparsable, uncertainty)",
        [TB_REASON_OVERRANGE] = "over-range: the meter reports its input above range",
        [TB_REASON_NEGATIVE] = "implausible: negative active power",
        [TB_REASON_NONFINITE] = "implausible: active power not a finite number",
        [TB_REASON_ABOVE_RANGE] = "implausible: active power above what the V and A ranges can measure",
        [TB_REASON_VAPF] = "implausible: V x A x PF disagrees with W beyond the meter's accuracy",
        [TB_REASON_NEGATIVE_VA] = "implausible: negative RMS voltage or current",
    };
    return reason > 0 && reason < TB_REASON_COUNT ? text[reason] : "";
}

void tb_meter_close(tb_meter *m) {
    if (!m) return;
    if (m->drv && m->self) m->drv->close(m->self);
    pthread_mutex_destroy(&m->lock);
    free(m->raw_uri);
    free(m);
}
