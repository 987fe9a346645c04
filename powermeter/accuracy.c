/*
 * accuracy.c: the compiled-in meter tables and the calibration date (see
 * accuracy.h). The tables are the text of the powermeter/data/ files: '#' starts
 * a comment line, fields are separated by '|', blanks around them ignored.
 */
#include "powermeter/accuracy.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* generated/meter_data.c (CMakeLists.txt, tb_embed_text) */
extern const char tb_meter_data_yokogawa_accuracy[], tb_meter_data_spec_accepted[];

#define MAX_FIELDS 6

/* Copies the next line of *p into line (len bytes) and advances *p. 0 at the end. */
static int next_line(const char **p, char *line, size_t len) {
    size_t n;
    if (!**p) return 0;
    n = strcspn(*p, "\n");
    if (n >= len) n = len - 1;
    memcpy(line, *p, n);
    line[n] = '\0';
    *p += strcspn(*p, "\n");
    if (**p == '\n') (*p)++;
    return 1;
}

static char *trim(char *s) {
    char *e;
    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Splits line at '|' into at most MAX_FIELDS trimmed fields; the count. */
static int split(char *line, char **f) {
    int n = 0;
    char *p = line;
    for (;;) {
        char *bar = strchr(p, '|');
        if (bar) *bar = '\0';
        if (n < MAX_FIELDS) f[n++] = trim(p);
        if (!bar) break;
        p = bar + 1;
    }
    return n;
}

static int is_comment(const char *line) {
    while (isspace((unsigned char)*line))
        line++;
    return *line == '#' || *line == '\0';
}

int tb_yoko_accuracy_find(const char *model, tb_yoko_accuracy *out) {
    const char *p = tb_meter_data_yokogawa_accuracy;
    char line[512], *f[MAX_FIELDS];
    size_t best = 0;
    if (!model || !*model) return 0;
    while (next_line(&p, line, sizeof line)) {
        size_t ml;
        if (is_comment(line) || split(line, f) < 5) continue;
        ml = strlen(f[0]);
        if (ml == 0 || ml <= best || strncasecmp(model, f[0], ml) != 0) continue;
        best = ml;
        snprintf(out->model, sizeof out->model, "%s", f[0]);
        out->reading_pct = strtod(f[1], NULL);
        out->range_pct = strtod(f[2], NULL);
        out->cf6_factor = strtod(f[3], NULL);
        snprintf(out->source, sizeof out->source, "%s", f[4]);
    }
    return best > 0;
}

double tb_yoko_uncertainty_pct(const tb_yoko_accuracy *acc, double watts, double volt_range_v, double amp_range_a,
                               double crest_factor, int elements) {
    double range_w, f = crest_factor >= 6 ? acc->cf6_factor : 1.0;
    if (!isfinite(watts) || watts <= 0 || !(volt_range_v > 0) || !(amp_range_a > 0)) return NAN;
    range_w = volt_range_v * amp_range_a * (elements > 1 ? elements : 1);
    return (acc->reading_pct * watts + acc->range_pct * f * range_w) / watts;
}

/* "complete = yes|no" in the accepted list; 0 when absent. */
static int list_complete(void) {
    const char *p = tb_meter_data_spec_accepted;
    char line[512];
    while (next_line(&p, line, sizeof line)) {
        char *s = trim(line);
        if (strncmp(s, "complete", 8) == 0 && strchr(s, '=')) return strcasecmp(trim(strchr(s, '=') + 1), "yes") == 0;
    }
    return 0;
}

int tb_meter_spec_accepted(const char *model) {
    const char *p = tb_meter_data_spec_accepted;
    char line[512], *f[MAX_FIELDS];
    if (!model || !*model) return -1;
    while (next_line(&p, line, sizeof line)) {
        if (is_comment(line) || strchr(line, '|') == NULL || split(line, f) < 2) continue;
        if (strcasecmp(f[1], model) == 0) return 1;
    }
    return list_complete() ? 0 : -1;
}

const char *tb_meter_spec_accepted_text(int accepted) {
    return accepted > 0 ? "yes" : accepted == 0 ? "no" : "unknown";
}

const char *tb_meter_spec_accepted_source(void) {
    return "SPEC PTDaemon list of accepted power analyzers, "
           "https://www.spec.org/power/docs/SPECpower-Device_List.html (read 2026-12-03; incomplete: see "
           "powermeter/data/spec_accepted.txt)";
}

static int leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

/* Days since 1970-01-01 of a Gregorian date from 1970 on (y < 10000). */
static int64_t days_since_epoch(int y, int m, int d) {
    int64_t n = 0;
    for (int i = 1970; i < y; i++)
        n += leap(i) ? 366 : 365;
    for (int i = 1; i < m; i++)
        n += mdays[i - 1] + (i == 2 && leap(y));
    return n + d - 1;
}

int tb_meter_parse_calibrated(const char *val, int64_t today_days, int64_t *days, char *err) {
    int y, m, d;
    if (strlen(val) != 10 || val[4] != '-' || val[7] != '-') goto bad;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && !isdigit((unsigned char)val[i])) goto bad;
    y = atoi(val);
    m = atoi(val + 5);
    d = atoi(val + 8);
    if (y < 1970 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1] + (m == 2 && leap(y))) goto bad;
    *days = days_since_epoch(y, m, d);
    if (*days > today_days) {
        tb_seterr(err, "calibrated: '%s': a date in the future", val);
        return -1;
    }
    return 0;
bad:
    tb_seterr(err, "calibrated: '%.40s': not a date (expected YYYY-MM-DD, e.g. 2026-03-31)", val);
    return -1;
}

int64_t tb_meter_today_days(void) { return (int64_t)(time(NULL) / 86400); }

int tb_meter_calibration_stale(const tb_meter_info *info, int64_t today_days, char *why, size_t len) {
    int64_t days;
    char e[TB_ERR_LEN];
    if (why && len) why[0] = '\0';
    if (!info->lab) return 0;
    if (!info->calibrated[0]) {
        if (why) snprintf(why, len, "meter '%s': no calibrated=YYYY-MM-DD given", info->uri);
        return 1;
    }
    if (tb_meter_parse_calibrated(info->calibrated, today_days, &days, e) != 0) {
        if (why) snprintf(why, len, "meter '%s': %s", info->uri, e);
        return 1;
    }
    if (today_days - days <= TB_METER_CALIBRATION_MAX_DAYS) return 0;
    if (why)
        snprintf(why, len, "meter '%s': calibrated %s, %lld days ago (over %d)", info->uri, info->calibrated,
                 (long long)(today_days - days), TB_METER_CALIBRATION_MAX_DAYS);
    return 1;
}
