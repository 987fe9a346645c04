/*
 * qos_rule.c: parses the rule syntax of a tile file's [qos.NAME] sections
 * into tb_qos_rule (qos_rule.h).
 */
#include "tiles/qos_rule.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tb_qos_fmt_num(double v, char *buf, size_t len) {
    char *dot, *end;
    snprintf(buf, len, "%.3f", v);
    dot = strchr(buf, '.');
    if (!dot) return;
    end = buf + strlen(buf) - 1;
    while (end > dot && *end == '0')
        *end-- = '\0';
    if (end == dot) *end = '\0';
}

/* Copies s without surrounding blanks into buf (cap len); -1 when too long. */
static int trim_copy(const char *s, size_t n, char *buf, size_t len) {
    while (n > 0 && isspace((unsigned char)*s))
        s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= len) return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return 0;
}

/* A number with an optional unit suffix ("%" or "pp") into *out, within
 * [lo, hi] (lo exclusive when lo_open). Fills why on error. */
static int parse_share(const char *s, size_t n, const char *suffix, double lo, int lo_open, double hi, const char *what,
                       double *out, char *why) {
    char buf[64];
    size_t sl = strlen(suffix);
    if (trim_copy(s, n, buf, sizeof buf) != 0) {
        tb_seterr(why, "'%.*s': not a number", 40, s);
        return -1;
    }
    n = strlen(buf);
    if (n > sl && strcmp(buf + n - sl, suffix) == 0) { /* "0.5%", "0.5 %" */
        n -= sl;
        while (n > 0 && isspace((unsigned char)buf[n - 1]))
            n--;
        buf[n] = '\0';
    }
    if (tb_parse_double(buf, out, why) != 0) return -1;
    if ((lo_open ? !(*out > lo) : !(*out >= lo)) || !(*out <= hi)) {
        char a[32], b[32];
        tb_qos_fmt_num(lo, a, sizeof a);
        tb_qos_fmt_num(hi, b, sizeof b);
        if (hi > 1e300)
            tb_seterr(why, "'%s': %s must be greater than %s", buf, what, a);
        else
            tb_seterr(why, "'%s': %s must be in %s%s,%s]", buf, what, lo_open ? "(" : "[", a, b);
        return -1;
    }
    return 0;
}

/* A latency limit in ms from a duration with unit suffix. */
static int parse_latency_ms(const char *s, size_t n, double *ms, char *why) {
    char buf[64];
    uint64_t us;
    if (trim_copy(s, n, buf, sizeof buf) != 0) {
        tb_seterr(why, "'%.*s': not a duration (examples: 500ms, 30s, 5m)", 40, s);
        return -1;
    }
    if (tb_parse_duration_us(buf, &us, why) != 0) return -1;
    *ms = (double)us / 1000.0;
    return 0;
}

/* "90", "99.9": digits with at most one inner '.', value in (0, 100]. */
static int parse_percentile(const char *s, double *pct) {
    const char *p = s;
    int digits = 0, dots = 0;
    for (; *p; p++) {
        if (isdigit((unsigned char)*p))
            digits++;
        else if (*p == '.' && digits > 0 && dots == 0 && p[1])
            dots++;
        else
            return -1;
    }
    if (digits == 0) return -1;
    *pct = strtod(s, NULL);
    return *pct > 0.0 && *pct <= 100.0 ? 0 : -1;
}

int tb_qos_parse_rule(const char *workload, const char *key, const char *value, tb_qos_rule *out, char *err) {
    char why[TB_ERR_LEN];
    const char *dot, *what;
    const char *v = value ? value : "";
    size_t vl = strlen(v);

    memset(out, 0, sizeof *out);
    if (!workload) workload = "";
    if (!key) key = "";
    if (!*workload || strlen(workload) >= sizeof out->workload) {
        tb_seterr(err, "[qos.%.40s]: workload name must be 1..%d characters", workload, (int)sizeof out->workload - 1);
        return -1;
    }
    snprintf(out->workload, sizeof out->workload, "%s", workload);
    dot = strchr(key, '.'); /* op names have no dots; p99.9 does */
    what = dot ? dot + 1 : key;
    if (dot) {
        size_t n = (size_t)(dot - key);
        if (n == 0 || n >= sizeof out->op) {
            tb_seterr(err, "[qos.%s] %.60s: bad op name (1..%d characters before the '.')", workload, key,
                      (int)sizeof out->op - 1);
            return -1;
        }
        memcpy(out->op, key, n);
        out->op[n] = '\0';
    } else {
        snprintf(out->op, sizeof out->op, "*");
    }

    if (strcmp(what, "error_rate") == 0) {
        out->kind = TB_QOS_ERROR_RATE;
        if (parse_share(v, vl, "%", 0, 0, 100, "error rate", &out->limit, why) != 0) goto bad;
    } else if (strcmp(what, "mix_deviation") == 0) {
        const char *at = strchr(v, '@');
        out->kind = TB_QOS_MIX;
        if (parse_share(v, at ? (size_t)(at - v) : vl, "pp", 0, 0, 100, "mix deviation (percentage points)",
                        &out->limit, why) != 0)
            goto bad;
        if (at) { /* PP@N: judged from N mix ops */
            char buf[32];
            if (trim_copy(at + 1, strlen(at + 1), buf, sizeof buf) != 0 || tb_parse_u64(buf, &out->min_ops, why) != 0) {
                tb_seterr(why,
                          "'%.40s': the least number of mix ops after '@' must be a whole number >= 0 "
                          "(e.g. 2@5000)",
                          at + 1);
                goto bad;
            }
            out->min_ops_given = 1;
        }
    } else if (strcmp(what, "throughput") == 0) {
        out->kind = TB_QOS_THROUGHPUT;
        if (dot) {
            tb_seterr(why, "throughput is a rule of the whole workload: write throughput = PCT");
            goto bad;
        }
        if (parse_share(v, vl, "%", 0, 1, HUGE_VAL, "throughput (% of reference)", &out->limit, why) != 0) goto bad;
    } else if (strcmp(what, "mean") == 0 || strcmp(what, "within") == 0 || (what[0] == 'p' && what[1])) {
        if (!dot) {
            tb_seterr(why, "latency rules are written <Op>.pNN, <Op>.mean or <Op>.within");
            goto bad;
        }
        if (strcmp(what, "mean") == 0) {
            out->kind = TB_QOS_MEAN;
            if (parse_latency_ms(v, vl, &out->limit, why) != 0) goto bad;
        } else if (strcmp(what, "within") == 0) {
            const char *at = strchr(v, '@');
            out->kind = TB_QOS_WITHIN;
            if (!at) {
                tb_seterr(why, "'%.60s': write DUR@PCT, e.g. 2s@99 (99%% of ops within 2 s)", v);
                goto bad;
            }
            if (parse_latency_ms(v, (size_t)(at - v), &out->within_ms, why) != 0) goto bad;
            if (parse_share(at + 1, strlen(at + 1), "%", 0, 1, 100, "share within the limit", &out->limit, why) != 0)
                goto bad;
        } else {
            out->kind = TB_QOS_PERCENTILE;
            if (parse_percentile(what + 1, &out->pct) != 0) {
                tb_seterr(why, "percentile must be p1..p100 (p999 is not p99.9: write p99.9)");
                goto bad;
            }
            if (parse_latency_ms(v, vl, &out->limit, why) != 0) goto bad;
        }
    } else {
        tb_seterr(why, "unknown rule (use <Op>.pNN, <Op>.mean, <Op>.within, error_rate, mix_deviation or "
                       "throughput)");
        goto bad;
    }
    return 0;
bad:
    tb_seterr(err, "[qos.%s] %.60s: %s", workload, key, why);
    return -1;
}
