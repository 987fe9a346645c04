/*
 * ptd.c: the SPEC PTDaemon client driver.
 *
 *   ptd://HOST[:8888][?interval=1s&volts=V|auto&amps=A|auto&timeout=DUR
 *                      &calibrated=YYYY-MM-DD (read by meter.c)]
 *
 * At open: Hello (must answer "Hello, PTDaemon here!"), Identify (device
 * name, interval, version, the analyzer's IDN), SR,V / SR,A when asked, RR
 * (ranges read back), then Go,<interval ms>,0 starts an untimed measurement.
 * Each sample: "RL,1" returns the newest unread sample (PTD waits up to one
 * interval for one), and "Uncertainty" returns the running uncertainty
 * statistics; from the change since the previous poll the driver derives the
 * uncertainty of the samples in between and flags the sample INVALID when it
 * is above 1% or could not be evaluated (SPEC's rule, TB_PTD_UNCERTAINTY_LIMIT).
 * At close: Stop.
 *
 * Replies may be preceded by warning lines ("WARNING: Uncertainty 1.45%, ...",
 * "ERROR: Can't evaluate uncertainty of this sample!"): they are consumed and
 * flag the sample INVALID. Error replies ("Error: ...", "Unknown command",
 * "Meter busy", ...) fail the command with PTD's own words.
 *
 * Each command's whole reply (warning lines and RL's sample lines included)
 * is due within one reply timeout and PTD_MAX_REPLY_LINES lines, so a daemon
 * that streams lines cannot hold a sample. Failure policy as in yokogawa.c:
 * a timeout, a reply too long or a drop fails that sample (MISSING) and the
 * next sample reconnects and starts a new measurement, so a late line is
 * never read as a later reply.
 * Facts: see ptd.h.
 */
#include "powermeter/ptd.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "powermeter/linesock.h"
#include "powermeter/meter.h"
#include "powermeter/meter_uri.h"
#include "powermeter/ranges.h"

#define PTD_DEFAULT_INTERVAL_US 1000000u
#define PTD_CONNECT_TIMEOUT_US  1000000u
#define PTD_SEND_TIMEOUT_US     1000000u
#define PTD_SLACK_US            1500000u /* reply timeout = interval (RL may wait that long) + this */
/* Lines one reply may take, warnings included: RL,1 asks for one sample, so a
 * reply of more (or a stream of warnings) is a daemon out of step. */
#define PTD_MAX_REPLY_LINES 64u

/* ---- pure parsers (ptd.h) ---- */

int tb_ptd_classify(const char *line) {
    static const char *const errors[] = {"Error",
                                         "Invalid number of parameters",
                                         "Unknown command",
                                         "Invalid channel",
                                         "Error in parameter",
                                         "Meter busy",
                                         "No data",
                                         "Invalid"};
    if (strncasecmp(line, "WARNING: Uncertainty", 20) == 0 || strncasecmp(line, "ERROR: Can't evaluate", 21) == 0)
        return TB_PTD_UNCERT_WARN;
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (strncasecmp(line, errors[i], strlen(errors[i])) == 0) return TB_PTD_ERROR;
    return TB_PTD_LINE;
}

/* Splits line at ',' into at most max fields (pointers into buf, a copy). Count of fields. */
static int split(const char *line, char *buf, size_t len, char **f, int max) {
    int n = 0;
    char *p;
    snprintf(buf, len, "%s", line);
    p = buf;
    while (n < max) {
        f[n++] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p++ = '\0';
    }
    return n;
}

static int num(const char *s, double *out) {
    char *end;
    double v;
    while (isspace((unsigned char)*s))
        s++;
    errno = 0;
    v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v)) return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end) return -1;
    *out = v;
    return 0;
}

static int count(const char *s, uint64_t *out) {
    double v;
    if (num(s, &v) != 0 || v < 0 || v > 1e15 || v != floor(v)) return -1;
    *out = (uint64_t)v;
    return 0;
}

int tb_ptd_parse_identify(const char *line, tb_ptd_ident *out) {
    char buf[512], *f[40];
    int n = split(line, buf, sizeof buf, f, 40);
    double iv;
    memset(out, 0, sizeof *out);
    if (n < 2 || !f[0][0] || num(f[1], &iv) != 0 || iv <= 0 || iv > 3.6e6) return -1;
    if (tb_ptd_classify(line) != TB_PTD_LINE) return -1;
    snprintf(out->device, sizeof out->device, "%s", f[0]);
    out->interval_ms = (unsigned)iv;
    if (n > 5) {
        out->can_w = atoi(f[2]) == 1;
        out->can_v = atoi(f[3]) == 1;
        out->can_a = atoi(f[4]) == 1;
        out->can_pf = atoi(f[5]) == 1;
    }
    for (int i = 2; i < n; i++) {
        if (strncmp(f[i], "version=", 8) == 0)
            snprintf(out->version, sizeof out->version, "%s", f[i] + 8);
        else if (strncmp(f[i], "mode=", 5) == 0)
            snprintf(out->mode, sizeof out->mode, "%s", f[i] + 5);
    }
    /* The analyzer's IDN comes last, its commas turned into ';'. */
    if (n > 2 && strchr(f[n - 1], ';')) {
        char *p;
        snprintf(out->idn, sizeof out->idn, "%s", f[n - 1]);
        for (p = out->idn; *p; p++)
            if (*p == ';') *p = ',';
    }
    return 0;
}

int tb_ptd_parse_ranges(const char *line, tb_ptd_ranges *out) {
    char buf[256], *f[16];
    int n = split(line, buf, sizeof buf, f, 16);
    double v[4];
    out->amp_auto = out->volt_auto = -1;
    out->amp_range_a = out->volt_range_v = -1;
    if (n < 5 || strcmp(f[0], "Ranges") != 0) return -1;
    for (int i = 0; i < 4; i++)
        if (num(f[i + 1], &v[i]) != 0) return -1;
    out->amp_auto = v[0] < 0 ? -1 : v[0] > 0;
    out->amp_range_a = v[1];
    out->volt_auto = v[2] < 0 ? -1 : v[2] > 0;
    out->volt_range_v = v[3];
    return 0;
}

int tb_ptd_parse_watts(const char *line, tb_ptd_watts *out) {
    char buf[256], *f[8];
    int n = split(line, buf, sizeof buf, f, 8);
    memset(out, 0, sizeof *out);
    if (n < 7 || strcmp(f[0], "Watts") != 0) return -1;
    if (num(f[1], &out->avg_w) || num(f[2], &out->min_w) || num(f[3], &out->max_w) || count(f[4], &out->samples) ||
        count(f[5], &out->errors) || count(f[6], &out->valid))
        return -1;
    return 0;
}

int tb_ptd_parse_uncertainty(const char *line, tb_ptd_uncertainty *out) {
    char buf[256], *f[9];
    int n = split(line, buf, sizeof buf, f, 9);
    memset(out, 0, sizeof *out);
    if (n < 8 || (strcmp(f[0], "Uncertainty") != 0 && strcmp(f[0], "Accuracy") != 0)) return -1;
    if (num(f[1], &out->avg) || num(f[2], &out->min) || num(f[3], &out->max) || count(f[4], &out->total) ||
        count(f[5], &out->invalid) || count(f[6], &out->valid) || count(f[7], &out->unknown))
        return -1;
    return 0;
}

unsigned tb_ptd_sample_uncertainty(const tb_ptd_uncertainty *prev, const tb_ptd_uncertainty *now, double *pct) {
    uint64_t dt;
    double sum;
    *pct = NAN;
    if (now->total <= prev->total) return TB_SAMPLE_INVALID; /* frozen or reset counters: not evaluated */
    dt = now->total - prev->total;
    sum = now->avg * (double)now->total - prev->avg * (double)prev->total;
    *pct = 100.0 * sum / (double)dt;
    if (!isfinite(*pct) || *pct < 0) {
        *pct = NAN; /* a running average that fell below what the earlier samples hold */
        return TB_SAMPLE_INVALID;
    }
    if (now->invalid > prev->invalid || now->unknown > prev->unknown || *pct > 100.0 * TB_PTD_UNCERTAINTY_LIMIT)
        return TB_SAMPLE_INVALID;
    return 0;
}

int tb_ptd_parse_rl_header(const char *line, unsigned *n) {
    unsigned long v;
    char *end;
    if (strncmp(line, "Last ", 5) != 0 || !isdigit((unsigned char)line[5])) return -1;
    errno = 0;
    v = strtoul(line + 5, &end, 10);
    if (errno || v > 1000000 || (strcmp(end, " sample") != 0 && strcmp(end, " samples") != 0)) return -1;
    *n = (unsigned)v;
    return 0;
}

/* "MM-DD-YYYY HH:MM:SS.mmm" local time -> µs since the epoch, or 0. */
static int64_t ptd_time(const char *s) {
    struct tm tm;
    int mo, d, y, h, mi, sec, ms = 0;
    time_t t;
    if (sscanf(s, "%2d-%2d-%4d %2d:%2d:%2d.%3d", &mo, &d, &y, &h, &mi, &sec, &ms) < 6) return 0;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    tm.tm_isdst = -1;
    t = mktime(&tm);
    if (t == (time_t)-1) return 0;
    return (int64_t)t * 1000000 + (int64_t)ms * 1000;
}

/* 1 when f is a channel group's head "Ch1".."Ch9"; *c gets the number. */
static int channel_head(const char *f, int *c) {
    if (strncmp(f, "Ch", 2) != 0 || f[2] < '1' || f[2] > '9' || f[3]) return 0;
    *c = f[2] - '0';
    return 1;
}

/* Reads the "Watts,x,Volts,x,Amps,x,PF,x" pairs of f[0..n) up to a channel
 * head: W, V, A, PF and the flags of tb_ptd_parse_rl_sample. */
static unsigned rl_values(char **f, int n, double *w, double *v, double *a, double *pf) {
    int have_w = 0, c;
    *w = *v = *a = *pf = NAN;
    for (int i = 0; i + 1 < n && !channel_head(f[i], &c); i += 2) {
        double x, *dst = NULL;
        if (strcmp(f[i], "Watts") == 0)
            dst = w;
        else if (strcmp(f[i], "Volts") == 0)
            dst = v;
        else if (strcmp(f[i], "Amps") == 0)
            dst = a;
        else if (strcmp(f[i], "PF") == 0)
            dst = pf;
        if (!dst) continue;
        if (num(f[i + 1], &x) != 0) {
            if (dst == w) return TB_SAMPLE_INVALID;
            continue;
        }
        if (dst == w) {
            have_w = 1;
            if (x == -2) return TB_SAMPLE_MISSING;
            if (x == -1) {
                *w = NAN;
                return TB_SAMPLE_INVALID;
            }
            /* Any other negative W is a reading, kept as read: the front
             * end's plausibility check (meter.c) flags it IMPLAUSIBLE. */
        } else if ((x == -1 || x == -2) && dst != pf) {
            continue; /* -1/-2 on V or A: unknown, the watts still stand */
        }
        *dst = x;
    }
    return have_w ? 0 : TB_SAMPLE_INVALID;
}

unsigned tb_ptd_parse_rl_sample(const char *line, double *w, double *v, double *a, double *pf, int64_t *wall_us) {
    char buf[512], *f[64];
    int n = split(line, buf, sizeof buf, f, 64);
    *w = *v = *a = *pf = NAN;
    *wall_us = 0;
    if (n < 4 || strcmp(f[0], "Time") != 0) return TB_SAMPLE_INVALID;
    *wall_us = ptd_time(f[1]);
    return rl_values(f + 2, n - 2, w, v, a, pf);
}

int tb_ptd_parse_rl_channels(const char *line, const int *want, int n, tb_channel_sample *out) {
    char buf[512], *f[64];
    int nf = split(line, buf, sizeof buf, f, 64), found = 0;
    for (int k = 0; k < n; k++) {
        tb_channel_sample *o = &out[k];
        int c, i;
        o->channel = want[k];
        o->watts = o->volts = o->amps = o->pf = NAN;
        o->flags = TB_SAMPLE_INVALID;
        o->reason = TB_REASON_NONE;
        if (nf < 2 || strcmp(f[0], "Time") != 0) continue;
        for (i = 2; i < nf; i++)
            if (channel_head(f[i], &c) && c == want[k]) break;
        if (i >= nf) continue;
        o->flags = rl_values(f + i + 1, nf - i - 1, &o->watts, &o->volts, &o->amps, &o->pf);
        found++;
    }
    return found;
}

/* ---- the driver ---- */

typedef struct ptd {
    char host[256], port[16];
    uint64_t interval_us, timeout_us;
    char volts[32], amps[32]; /* "" leave, "Auto", or a value */
    tb_linesock *ls;
    tb_ptd_ident ident;
    tb_ptd_ranges ranges;
    tb_ptd_uncertainty prev; /* running stats at the previous poll */
    int warned;              /* a warning line was seen since the last sample */
    uint64_t deadline_us;    /* the whole reply to the current command is due by then */
    unsigned lines;          /* lines read for the current command */
    unsigned reconnects;
    int nch, ch[TB_METER_MAX_CHANNELS]; /* channels= (PTDaemon multi-channel); nch 0: one */
} ptd;

static const char *const ptd_keys[] = {"interval", "volts", "amps", "timeout", "calibrated", "channels", NULL};

static void ptd_disconnect(ptd *p) {
    tb_linesock_close(p->ls);
    p->ls = NULL;
}

/* One reply line, due by p->deadline_us and counted against
 * PTD_MAX_REPLY_LINES: a daemon that streams lines cannot hold a sample past
 * its deadline. 0, or -1 with e. */
static int ptd_line(ptd *p, char *buf, size_t len, char *e) {
    uint64_t now = tb_now_us();
    if (++p->lines > PTD_MAX_REPLY_LINES) {
        tb_seterr(e, "reply of more than %u lines", PTD_MAX_REPLY_LINES);
        return -1;
    }
    if (now >= p->deadline_us) {
        tb_seterr(e, "reply not complete within %llu ms", (unsigned long long)(p->timeout_us / 1000));
        return -1;
    }
    int rc = tb_linesock_readline(p->ls, buf, len, p->deadline_us - now, e);
    if (rc == TB_LS_TIMEOUT)
        tb_seterr(e, "reply not complete within %llu ms", (unsigned long long)(p->timeout_us / 1000));
    return rc < 0 ? -1 : 0;
}

/* Starts a command: its whole reply is due within one reply timeout. */
static void ptd_begin(ptd *p) {
    p->deadline_us = tb_now_us() + p->timeout_us;
    p->lines = 0;
}

/* Sends cmd and reads its first non-warning reply line into buf (the whole
 * reply within one timeout). Error replies fail with PTD's words (-2); -1
 * with err on a timeout, drop or a reply too long. */
static int ptd_cmd(ptd *p, const char *cmd, char *buf, size_t len, char *err) {
    char e[TB_ERR_LEN];
    ptd_begin(p);
    if (tb_linesock_send(p->ls, cmd, "\r\n", PTD_SEND_TIMEOUT_US, e) != 0) {
        tb_seterr(err, "'%s': %s", cmd, e);
        return -1;
    }
    for (;;) {
        int k;
        if (ptd_line(p, buf, len, e) != 0) {
            tb_seterr(err, "'%s': %s", cmd, e);
            return -1;
        }
        k = tb_ptd_classify(buf);
        if (k == TB_PTD_UNCERT_WARN) {
            p->warned = 1;
            tb_log(TB_LOG_DEBUG, "ptd %s: %s", p->host, buf);
            continue;
        }
        if (k == TB_PTD_ERROR) {
            tb_seterr(err, "'%s': PTDaemon says: %.120s", cmd, buf);
            return -2;
        }
        return 0;
    }
}

static int ptd_setup(ptd *p, char *err) {
    char buf[512], cmd[64];
    int rc;

    if (tb_linesock_connect(p->host, p->port, PTD_CONNECT_TIMEOUT_US, &p->ls, err) != 0) return -1;
    if (ptd_cmd(p, "Hello", buf, sizeof buf, err) != 0) goto fail;
    if (strncmp(buf, "Hello, PTDaemon here", 20) != 0) {
        tb_seterr(err, "'Hello': '%.60s' is not PTDaemon's greeting", buf);
        goto fail;
    }
    if (ptd_cmd(p, "Identify", buf, sizeof buf, err) != 0) goto fail;
    if (tb_ptd_parse_identify(buf, &p->ident) != 0) {
        tb_seterr(err, "'Identify': cannot parse '%.80s'", buf);
        goto fail;
    }
    if (p->ident.mode[0] && strcmp(p->ident.mode, "power") != 0) {
        tb_seterr(err, "PTDaemon runs in mode=%s, not power (a temperature sensor?)", p->ident.mode);
        goto fail;
    }
    /* A measurement left running (our own before a drop, or another client's
     * that died) would refuse Go: stop it. "no measurement to stop" is fine. */
    rc = ptd_cmd(p, "Stop", buf, sizeof buf, err);
    if (rc == -1) goto fail;
    if (p->volts[0]) {
        snprintf(cmd, sizeof cmd, "SR,V,%s", p->volts);
        if (ptd_cmd(p, cmd, buf, sizeof buf, err) != 0) goto fail;
    }
    if (p->amps[0]) {
        snprintf(cmd, sizeof cmd, "SR,A,%s", p->amps);
        if (ptd_cmd(p, cmd, buf, sizeof buf, err) != 0) goto fail;
    }
    if (ptd_cmd(p, "RR", buf, sizeof buf, err) != 0) goto fail;
    if (tb_ptd_parse_ranges(buf, &p->ranges) != 0) {
        tb_seterr(err, "'RR': cannot parse '%.80s'", buf);
        goto fail;
    }
    snprintf(cmd, sizeof cmd, "Go,%llu,0", (unsigned long long)(p->interval_us / 1000));
    if (ptd_cmd(p, cmd, buf, sizeof buf, err) != 0) goto fail;
    if (strncmp(buf, "Starting untimed measurement", 28) != 0) {
        tb_seterr(err, "'%s': unexpected reply '%.80s'", cmd, buf);
        goto fail;
    }
    memset(&p->prev, 0, sizeof p->prev);
    p->warned = 0;
    return 0;
fail:
    ptd_disconnect(p);
    return -1;
}

static int set_range(const char *key, const char *v, char *dst, char *err) {
    double r;
    char e[TB_ERR_LEN];
    if (strcasecmp(v, "auto") == 0) {
        snprintf(dst, 32, "Auto");
        return 0;
    }
    if (tb_parse_double(v, &r, e) != 0 || r <= 0 || r > 1e4) {
        tb_seterr(err, "%s: '%s': expected a range or 'auto'", key, v);
        return -1;
    }
    snprintf(dst, 32, "%g", r);
    return 0;
}

static void ptd_close(void *self);
static int ptd_check_channels(const ptd *p, char *err);

static int ptd_open(const char *uri, void **self, char *err) {
    ptd *p = xcalloc(1, sizeof *p);
    const char *rest, *q;
    char v[64];
    int rc;

    if (strncasecmp(uri, "ptd://", 6) != 0) {
        tb_seterr(err, "expected ptd://HOST[:PORT]");
        goto fail;
    }
    if (tb_linesock_split_hostport(uri + 6, TB_PTD_DEFAULT_PORT, p->host, sizeof p->host, p->port, sizeof p->port,
                                   &rest, err) != 0)
        goto fail;
    q = strchr(rest, '?');
    if (q && tb_meter_uri_check_keys(q, ptd_keys, err) != 0) goto fail;
    p->interval_us = PTD_DEFAULT_INTERVAL_US;
    if ((rc = tb_meter_uri_param(q, "interval", v, sizeof v, err)) < 0) goto fail;
    if (rc == 1 && tb_meter_uri_ms("interval", v, &p->interval_us, err) != 0) goto fail;
    p->timeout_us = p->interval_us + PTD_SLACK_US;
    if ((rc = tb_meter_uri_param(q, "timeout", v, sizeof v, err)) < 0) goto fail;
    if (rc == 1 && tb_meter_uri_ms("timeout", v, &p->timeout_us, err) != 0) goto fail;
    if ((rc = tb_meter_uri_param(q, "volts", v, sizeof v, err)) < 0) goto fail;
    if (rc == 1 && set_range("volts", v, p->volts, err) != 0) goto fail;
    if ((rc = tb_meter_uri_param(q, "amps", v, sizeof v, err)) < 0) goto fail;
    if (rc == 1 && set_range("amps", v, p->amps, err) != 0) goto fail;
    if ((rc = tb_meter_uri_param(q, "channels", v, sizeof v, err)) < 0) goto fail;
    if (rc == 1 && tb_meter_uri_channels("channels", v, p->ch, TB_METER_MAX_CHANNELS, &p->nch, err) != 0) goto fail;
    if (ptd_setup(p, err) != 0) {
        free(p);
        return TB_METER_EUNREACH;
    }
    if (ptd_check_channels(p, err) != 0) {
        ptd_close(p);
        return -1;
    }
    *self = p;
    return 0;
fail:
    free(p);
    return -1;
}

/* The analyzer's IDN fields (e.g. "YOKOGAWA,WT333E,C3VD30030E,F1.04"); "" each when none. */
static void ptd_idn_fields(const ptd *p, char *maker, char *model, char *serial, char *fw) {
    maker[0] = model[0] = serial[0] = fw[0] = '\0';
    if (p->ident.idn[0]) {
        char b[128], *f[4] = {maker, model, serial, fw};
        char *s, *save = NULL;
        int i = 0;
        snprintf(b, sizeof b, "%s", p->ident.idn);
        for (s = strtok_r(b, ",", &save); s && i < 4; s = strtok_r(NULL, ",", &save))
            snprintf(f[i++], 64, "%s", s);
    }
}

/* channels= against the analyzer PTDaemon reads: a channel it does not have
 * is a configuration error (-1 with err naming the parameter). */
static int ptd_check_channels(const ptd *p, char *err) {
    char maker[64], model[64], serial[64], fw[64];
    int have;
    if (p->nch == 0) return 0;
    ptd_idn_fields(p, maker, model, serial, fw);
    have = tb_meter_model_channels(model);
    for (int i = 0; i < p->nch; i++)
        if (have > 0 && p->ch[i] > have) {
            tb_seterr(err, "channels: channel %d: the %s PTDaemon reads has channels 1..%d", p->ch[i], model, have);
            return -1;
        }
    return 0;
}

static int ptd_identify(void *self, tb_meter_info *info, char *err) {
    ptd *p = self;
    char maker[64], model[64], serial[64], fw[64];
    (void)err;
    ptd_idn_fields(p, maker, model, serial, fw);
    info->nchannels = p->nch;
    for (int i = 0; i < p->nch; i++)
        info->channel[i] = p->ch[i];
    if (p->nch > 1) info->elements = p->nch;
    snprintf(info->model, sizeof info->model, "%s", model[0] ? model : p->ident.device);
    snprintf(info->idn, sizeof info->idn, "%s", p->ident.idn[0] ? p->ident.idn : p->ident.device);
    snprintf(info->serial, sizeof info->serial, "%s", serial);
    snprintf(info->firmware, sizeof info->firmware, "%s", fw);
    (void)tb_fmt_capped(info->driver, sizeof info->driver, "ptd %s (%s)", p->ident.version[0] ? p->ident.version : "?",
                        p->ident.device);
    info->volt_range_v = p->ranges.volt_range_v > 0 ? p->ranges.volt_range_v : 0;
    info->amp_range_a = p->ranges.amp_range_a > 0 ? p->ranges.amp_range_a : 0;
    info->volt_mode = p->ranges.volt_auto < 0 ? TB_RANGE_UNKNOWN : p->ranges.volt_auto ? TB_RANGE_AUTO : TB_RANGE_FIXED;
    info->amp_mode = p->ranges.amp_auto < 0 ? TB_RANGE_UNKNOWN : p->ranges.amp_auto ? TB_RANGE_AUTO : TB_RANGE_FIXED;
    info->update_ms = (unsigned)(p->interval_us / 1000);
    info->estimated = 0;
    return 0;
}

static int ptd_sample(void *self, tb_sample *s, char *err) {
    ptd *p = self;
    char buf[512], e[TB_ERR_LEN];
    unsigned n, f;
    tb_ptd_uncertainty u;
    int64_t wall;
    int rc;

    if (!p->ls) {
        if (ptd_setup(p, e) != 0) {
            tb_seterr(err, "reconnect: %s", e);
            return -1;
        }
        p->reconnects++;
        tb_log(TB_LOG_INFO, "meter ptd %s: reconnected (%u so far)", p->host, p->reconnects);
    }
    p->warned = 0;
    rc = ptd_cmd(p, "RL,1", buf, sizeof buf, e);
    if (rc == -2) { /* e.g. "No data": PTD is there but had no sample */
        tb_seterr(err, "%s", e);
        return -1;
    }
    if (rc != 0) goto drop;
    if (tb_ptd_parse_rl_header(buf, &n) != 0) {
        tb_seterr(e, "'RL,1': expected 'Last N samples', got '%.60s'", buf);
        goto drop;
    }
    if (n == 0) {
        tb_seterr(err, "'RL,1': no sample available");
        return -1;
    }
    if (n >= PTD_MAX_REPLY_LINES) {
        tb_seterr(e, "'RL,1': announces %u samples for one asked", n);
        goto drop;
    }
    /* Only the newest line counts; read them all (same deadline, same line
     * bound as the header) to stay in step. */
    for (unsigned i = 0; i < n;) {
        if (ptd_line(p, buf, sizeof buf, e) != 0) {
            char m[TB_ERR_LEN];
            memcpy(m, e, sizeof m);
            tb_seterr(e, "'RL,1': %s", m);
            goto drop;
        }
        if (tb_ptd_classify(buf) == TB_PTD_UNCERT_WARN) {
            p->warned = 1;
            continue;
        }
        i++;
    }
    s->mono_us = tb_now_us();
    s->wall_us = tb_wall_us();
    f = tb_ptd_parse_rl_sample(buf, &s->watts, &s->volts, &s->amps, &s->pf, &wall);
    if (p->nch > 0) { /* the meter's W is the sum of the channels (meter.c) */
        (void)tb_ptd_parse_rl_channels(buf, p->ch, p->nch, s->ch);
        s->nch = p->nch;
    }
    if (f & TB_SAMPLE_MISSING) {
        tb_seterr(err, "PTDaemon marks the sample missed (-2)");
        return -1;
    }
    s->flags |= f;
    rc = ptd_cmd(p, "Uncertainty", buf, sizeof buf, e);
    if (rc == -1) goto drop;
    if (rc == 0 && tb_ptd_parse_uncertainty(buf, &u) == 0) {
        unsigned uf = tb_ptd_sample_uncertainty(&p->prev, &u, &s->uncertainty_pct);
        if (uf)
            tb_log(TB_LOG_DEBUG, "ptd %s: uncertainty not valid: %.80s after total %llu avg %g", p->host, buf,
                   (unsigned long long)p->prev.total, p->prev.avg);
        s->flags |= uf;
        p->prev = u;
    } else {
        /* No uncertainty: SPEC rejects such a result; flag rather than trust. */
        s->flags |= TB_SAMPLE_INVALID;
    }
    if (p->warned) s->flags |= TB_SAMPLE_INVALID;
    if (p->ranges.amp_auto == 1 || p->ranges.volt_auto == 1) s->flags |= TB_SAMPLE_AUTORANGE;
    return 0;
drop:
    ptd_disconnect(p);
    tb_seterr(err, "%s (will reconnect)", e);
    return -1;
}

/*
 * The ranging pass (meter.h set_ranges). PTDaemon takes SR between
 * measurements, as the set-up sends it: the measurement is stopped, the
 * ranges set (SR,V / SR,A with a value or Auto), read back (RR), and an
 * untimed measurement started again; ptd_setup does exactly that on a fresh
 * connection, so the ranges asked for also survive a reconnect.
 */
static int ptd_set_ranges(void *self, double volts, double amps, char *err) {
    ptd *p = self;
    char buf[256], e[TB_ERR_LEN];
    tb_range_setting(p->volts, sizeof p->volts, volts, "Auto");
    tb_range_setting(p->amps, sizeof p->amps, amps, "Auto");
    if (p->ls) (void)ptd_cmd(p, "Stop", buf, sizeof buf, e);
    ptd_disconnect(p);
    return ptd_setup(p, err);
}

static void ptd_close(void *self) {
    ptd *p = self;
    char buf[256], e[TB_ERR_LEN];
    if (!p) return;
    if (p->ls) {
        p->timeout_us = 500000;
        (void)ptd_cmd(p, "Stop", buf, sizeof buf, e);
    }
    ptd_disconnect(p);
    free(p);
}

/* Registered in meter.c's driver table. */
extern const tb_meter_driver tb_meter_ptd_driver;
const tb_meter_driver tb_meter_ptd_driver = {.scheme = "ptd",
                                             .open = ptd_open,
                                             .identify = ptd_identify,
                                             .sample = ptd_sample,
                                             .close = ptd_close,
                                             .set_ranges = ptd_set_ranges};
