/*
 * yokogawa.c: the Yokogawa power analyzer drivers.
 *
 *   wt310://HOST:PORT[?params]   WT310/WT310E/WT330/WT500 (:NUMeric group)
 *   wt210://HOST:PORT[?params]   WT210 (:MEASure group, 488.2 style)
 *   yokogawa+serial:///dev/ttyUSB0?model=wt310|wt210&baud=9600[&params]
 *
 * params: element=1|2|3|sigma (which input; sigma = the sum, WT330/WT500),
 *         volts=V|auto, amps=A|auto (set the range; default: leave the meter
 *         as it is), crest=3|6, timeout=DUR (reply timeout, default 800ms so a
 *         silent meter costs less than one 1 Hz poll).
 *
 * Set-up on every (re)connect: header and verbose off (so replies are bare
 * numbers), *IDN?, the ranges asked for, the items to read (W, V, A, PF of
 * the element), then :STAT:ERR? must say 0, then the ranges and auto-range
 * are read back into the meter info. Auto-ranging flags every sample
 * TB_SAMPLE_AUTORANGE (SPEC: no auto-ranging during measurement).
 *
 * Failure policy: a reply timeout or a dropped connection makes that sample
 * fail (the front end records it MISSING) and drops the connection; the next
 * sample reconnects and repeats the set-up, and must find the same *IDN?.
 * A set-up read-back whose reply times out is lost (its value unknown) and
 * the link is resynchronized with *IDN? as a sentinel, or dropped: a late
 * reply is never taken for the answer to a later query.
 * A reply that arrives but does not parse is an INVALID sample, not a failure.
 *
 * Facts (from intel/yoko-tool and the Yokogawa
 * WT310/WT210 manuals). Plain line-based TCP with '\n' is what the emulator
 * (meter_sim.c) serves; the WT1600/WT3000 legacy 4-byte-header framing is not
 * implemented.
 */
#include "powermeter/yokogawa.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "powermeter/accuracy.h"
#include "powermeter/linesock.h"
#include "powermeter/meter.h"
#include "powermeter/meter_uri.h"
#include "powermeter/ranges.h"

#define YOKO_DEFAULT_TIMEOUT_US 800000u
#define YOKO_CONNECT_TIMEOUT_US 1000000u
#define YOKO_SEND_TIMEOUT_US    1000000u
#define YOKO_NITEMS             4  /* W, V, A, PF */
#define YOKO_RESYNC_LINES       16 /* late replies dropped before the *IDN? sentinel, at most */

enum { MODEL_WT310 = 0, MODEL_WT210 = 1 };

/* ---- pure parsers (yokogawa.h) ---- */

unsigned tb_yoko_parse_value(const char *field, size_t len, double *v) {
    char buf[64], *end;
    size_t a = 0, b = len;
    double x;

    while (a < b && isspace((unsigned char)field[a]))
        a++;
    while (b > a && isspace((unsigned char)field[b - 1]))
        b--;
    *v = NAN;
    if (b - a == 0 || b - a >= sizeof buf) return TB_SAMPLE_INVALID;
    memcpy(buf, field + a, b - a);
    buf[b - a] = '\0';
    if (strcasecmp(buf, "NAN") == 0) return TB_SAMPLE_INVALID;
    if (strcasecmp(buf, "INF") == 0 || strcasecmp(buf, "-INF") == 0 || strcasecmp(buf, "+INF") == 0)
        return TB_SAMPLE_OVERRANGE;
    /* Only what an NR1/NR2/NR3 field can hold: strtod alone would also take
     * "0x1p3", "nan(...)" or "infinity". */
    for (size_t i = 0; buf[i]; i++)
        if (!isdigit((unsigned char)buf[i]) && !strchr("+-.eE", buf[i])) return TB_SAMPLE_INVALID;
    errno = 0;
    x = strtod(buf, &end);
    if (end == buf || *end != '\0') return TB_SAMPLE_INVALID;
    if (errno == ERANGE && fabs(x) > 1.0) return TB_SAMPLE_OVERRANGE;
    /* 9.91E+37 = no data; 9.9E+37 and anything at or above = over-range. The
     * two are 1% apart, so compare with a relative tolerance of 0.1%. */
    if (fabs(fabs(x) - TB_YOKO_NODATA) <= TB_YOKO_NODATA * 1e-3) return TB_SAMPLE_INVALID;
    if (fabs(x) >= TB_YOKO_OVERRANGE * (1 - 1e-6)) return TB_SAMPLE_OVERRANGE;
    *v = x;
    return 0;
}

const char *tb_yoko_strip_header(const char *line) {
    const char *p = line;
    while (*p == ' ')
        p++;
    if (*p == ':') {
        const char *sp = strchr(p, ' ');
        if (sp) return sp + 1;
    }
    return p;
}

int tb_yoko_parse_values(const char *line, double *vals, unsigned *flags, int max) {
    const char *p = tb_yoko_strip_header(line);
    int n = 0;
    if (*p == '\0') return -1;
    for (;;) {
        size_t len = strcspn(p, ",;");
        if (n < max) flags[n] = tb_yoko_parse_value(p, len, &vals[n]);
        n++;
        p += len;
        if (*p != ',') break; /* ';' starts a unit or the next reply: not ours */
        p++;
    }
    return n;
}

static void copy_field(char *dst, size_t cap, const char *src, size_t n) {
    while (n > 0 && isspace((unsigned char)*src))
        src++, n--;
    while (n > 0 && isspace((unsigned char)src[n - 1]))
        n--;
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int tb_yoko_parse_idn(const char *line, char maker[64], char model[64], char serial[64], char firmware[64]) {
    char *dst[4] = {maker, model, serial, firmware};
    const char *p = tb_yoko_strip_header(line);
    int i;
    for (i = 0; i < 4; i++)
        dst[i][0] = '\0';
    for (i = 0; i < 4 && *p; i++) {
        size_t n = strcspn(p, ",");
        copy_field(dst[i], 64, p, n);
        p += n;
        if (*p == ',')
            p++;
        else {
            i++;
            break;
        }
    }
    if (i < 2 || !maker[0] || !model[0]) return -1;
    for (const char *c = line; *c; c++)
        if (!isprint((unsigned char)*c)) return -1;
    return 0;
}

int tb_yoko_parse_error(const char *line, int *code, char *msg, size_t len) {
    const char *p = tb_yoko_strip_header(line);
    char *end;
    long c;
    errno = 0;
    c = strtol(p, &end, 10);
    if (end == p || errno == ERANGE) return -1;
    *code = (int)c;
    p = end;
    if (*p == ',') p++;
    if (*p == '"') p++;
    copy_field(msg, len, p, strcspn(p, "\""));
    return 0;
}

int tb_yoko_parse_bool(const char *line) {
    const char *p = tb_yoko_strip_header(line);
    if (strcmp(p, "1") == 0 || strcasecmp(p, "ON") == 0) return 1;
    if (strcmp(p, "0") == 0 || strcasecmp(p, "OFF") == 0) return 0;
    return -1;
}

/* ---- the driver ---- */

typedef struct yoko {
    int model;  /* MODEL_* */
    int serial; /* 1: dev/baud; 0: host/port */
    char host[256], port[16];
    char dev[256];
    unsigned baud;
    int element;                        /* 1..3, or 0 for SIGMA */
    int nch, ch[TB_METER_MAX_CHANNELS]; /* element=1,2: read as channels, summed (nch 0: one element) */
    char volts[32], amps[32];           /* "" leave, "auto", or a range */
    int crest;                          /* 0 leave, 3 or 6 */
    uint64_t timeout_us;
    tb_linesock *ls;   /* NULL while disconnected */
    char idn[128];     /* first *IDN? seen; a reconnect must find the same */
    tb_meter_info got; /* identity and ranges read back at the last set-up */
    unsigned reconnects;
    tb_yoko_accuracy acc; /* the model's published accuracy (accuracy.h) */
    int have_acc;         /* 0: the model is not in the table, samples carry no uncertainty */
} yoko;

static const char *const yoko_keys[] = {"element", "volts", "amps",       "crest", "timeout",
                                        "model",   "baud",  "calibrated", NULL};

static int yoko_send(yoko *y, const char *cmd, char *err) {
    char e[TB_ERR_LEN];
    if (!y->ls) {
        tb_seterr(err, "'%s': not connected (an earlier reply was lost)", cmd);
        return -1;
    }
    if (tb_linesock_send(y->ls, cmd, "\n", YOKO_SEND_TIMEOUT_US, e) != 0) {
        tb_seterr(err, "'%s': %s", cmd, e);
        return -1;
    }
    return 0;
}

static void yoko_disconnect(yoko *y) {
    tb_linesock_close(y->ls);
    y->ls = NULL;
}

/*
 * After a reply timeout the late reply may still come and would answer the
 * next query. Resynchronize with *IDN? as a sentinel: lines before the known
 * identification are late replies and dropped. 0 in step again; -1 (and the
 * connection dropped) when the sentinel does not come back within a timeout.
 */
static int yoko_resync(yoko *y) {
    char buf[256], e[TB_ERR_LEN];
    uint64_t deadline = tb_now_us() + y->timeout_us;
    if (!y->idn[0] || yoko_send(y, "*IDN?", e) != 0) goto drop;
    for (int i = 0; i < YOKO_RESYNC_LINES; i++) {
        uint64_t now = tb_now_us();
        if (now >= deadline || tb_linesock_readline(y->ls, buf, sizeof buf, deadline - now, e) < 0) break;
        if (strcmp(buf, y->idn) == 0) return 0;
        tb_log(TB_LOG_DEBUG, "yokogawa: dropped late reply '%.60s'", buf);
    }
drop:
    yoko_disconnect(y);
    return -1;
}

/* Sends a query and reads its one-line reply into buf. 0, or a TB_LS_* code
 * (or -1) with err. The caller must not go on after a timeout as is. */
static int yoko_query_once(yoko *y, const char *cmd, char *buf, size_t len, char *err) {
    char e[TB_ERR_LEN];
    int n;
    if (yoko_send(y, cmd, err) != 0) return -1;
    n = tb_linesock_readline(y->ls, buf, len, y->timeout_us, e);
    if (n < 0) {
        tb_seterr(err, "'%s': %s", cmd, e);
        return n;
    }
    return 0;
}

/* yoko_query_once, and after a reply timeout the link is resynchronized
 * (yoko_resync) or dropped, so a late reply never answers a later query. */
static int yoko_query(yoko *y, const char *cmd, char *buf, size_t len, char *err) {
    int rc = yoko_query_once(y, cmd, buf, len, err);
    if (rc == TB_LS_TIMEOUT) (void)yoko_resync(y);
    return rc == 0 ? 0 : -1;
}

/* Reads back a range (NR3 in V or A) and its auto flag into the info. */
static void read_range(yoko *y, const char *rq, const char *aq, double *range, int *mode) {
    char buf[128], e[TB_ERR_LEN];
    double v;
    int a;
    *range = 0;
    *mode = TB_RANGE_UNKNOWN;
    if (yoko_query(y, rq, buf, sizeof buf, e) == 0 && tb_yoko_parse_value(buf, strlen(buf), &v) == 0 && v > 0)
        *range = v;
    if (yoko_query(y, aq, buf, sizeof buf, e) == 0 && (a = tb_yoko_parse_bool(buf)) >= 0)
        *mode = a ? TB_RANGE_AUTO : TB_RANGE_FIXED;
}

/* Connects and runs the set-up described in the file comment. 0, or -1 with err. */
/* *IDN?: the identity, which a reconnect must find again, whole or refused. */
static int yoko_read_idn(yoko *y, char *model, char *serial, char *fw, char *err) {
    char buf[256], maker[64];
    if (yoko_query(y, "*IDN?", buf, sizeof buf, err) != 0) return -1;
    if (tb_yoko_parse_idn(buf, maker, model, serial, fw) != 0) {
        tb_seterr(err, "*IDN?: '%.60s' is not an identification (MAKER,MODEL,SERIAL,FIRMWARE)", buf);
        return -1;
    }
    if (y->idn[0] && strcmp(y->idn, buf) != 0) {
        tb_seterr(err, "reconnected to a different instrument: *IDN? was '%s', now '%.60s'", y->idn, buf);
        return -1;
    }
    if (strlen(buf) >= sizeof y->idn) {
        tb_seterr(err, "*IDN?: an identification of %zu bytes, longer than the %zu allowed", strlen(buf),
                  sizeof y->idn - 1);
        return -1;
    }
    memcpy(y->idn, buf, strlen(buf) + 1);
    return 0;
}

/* One range as asked ("auto" or a value; "" leaves it): auto first, so a
 * fixed range is not undone by it. */
static int yoko_set_range(yoko *y, const char *inp, const char *what, const char *asked, char *err) {
    char cmd[96];
    if (!asked[0]) return 0;
    if (strcmp(asked, "auto") == 0)
        snprintf(cmd, sizeof cmd, "%s:%s:AUTO ON", inp, what);
    else
        snprintf(cmd, sizeof cmd, "%s:%s:RANG %s", inp, what, asked);
    return yoko_send(y, cmd, err);
}

/* What to read: V, A, W and PF of the element (or SIGMA). */
static int yoko_set_items(yoko *y, char *err) {
    static const char *const wt310_funcs[YOKO_NITEMS] = {"P", "U", "I", "LAMB"};
    static const char *const wt210_items[YOKO_NITEMS] = {"V", "A", "W", "PF"};
    char cmd[96], el[8];
    if (y->element == 0)
        snprintf(el, sizeof el, "SIGMA");
    else
        snprintf(el, sizeof el, "%d", y->element);
    if (y->model != MODEL_WT310) {
        for (int i = 0; i < YOKO_NITEMS; i++) {
            snprintf(cmd, sizeof cmd, ":MEAS:NORM:ITEM:%s ON", wt210_items[i]);
            if (yoko_send(y, cmd, err) != 0) return -1;
        }
        return 0;
    }
    if (yoko_send(y, ":NUM:FORM ASC", err) != 0) return -1;
    snprintf(cmd, sizeof cmd, ":NUM:NORM:NUM %d", YOKO_NITEMS * (y->nch > 0 ? y->nch : 1));
    if (yoko_send(y, cmd, err) != 0) return -1;
    for (int k = 0; k < (y->nch > 0 ? y->nch : 1); k++) {
        if (y->nch > 0) snprintf(el, sizeof el, "%d", y->ch[k]); /* each element's four, in turn */
        for (int i = 0; i < YOKO_NITEMS; i++) {
            snprintf(cmd, sizeof cmd, ":NUM:NORM:ITEM%d %s,%s", k * YOKO_NITEMS + i + 1, wt310_funcs[i], el);
            if (yoko_send(y, cmd, err) != 0) return -1;
        }
    }
    return 0;
}

/* :STAT:ERR?: -1 with err when the reply is not an error report, or (when
 * reject) when it reports an error. */
static int yoko_check_error(yoko *y, const char *when, int reject, char *err) {
    char buf[256], msg[128];
    int code;
    if (yoko_query(y, ":STAT:ERR?", buf, sizeof buf, err) != 0) return -1;
    if (tb_yoko_parse_error(buf, &code, msg, sizeof msg) != 0) {
        tb_seterr(err, ":STAT:ERR?%s: '%.60s' is not an error report", when, buf);
        return -1;
    }
    if (reject && code != 0) {
        tb_seterr(err, "set-up rejected by the meter: error %d \"%s\"", code, msg);
        return -1;
    }
    return 0;
}

/* Reads back what the meter actually does: ranges, crest factor, update rate. */
static void yoko_read_back(yoko *y) {
    char buf[256], e[TB_ERR_LEN];
    double v;
    memset(&y->got, 0, sizeof y->got);
    if (y->model != MODEL_WT310) {
        read_range(y, ":CONF:VOLT:RANG?", ":CONF:VOLT:AUTO?", &y->got.volt_range_v, &y->got.volt_mode);
        read_range(y, ":CONF:CURR:RANG?", ":CONF:CURR:AUTO?", &y->got.amp_range_a, &y->got.amp_mode);
        return;
    }
    read_range(y, ":INP:VOLT:RANG?", ":INP:VOLT:AUTO?", &y->got.volt_range_v, &y->got.volt_mode);
    read_range(y, ":INP:CURR:RANG?", ":INP:CURR:AUTO?", &y->got.amp_range_a, &y->got.amp_mode);
    if (yoko_query(y, ":INP:CFAC?", buf, sizeof buf, e) == 0 && tb_yoko_parse_value(buf, strlen(buf), &v) == 0)
        y->got.crest_factor = v;
    if (yoko_query(y, ":RATE?", buf, sizeof buf, e) == 0 && tb_yoko_parse_value(buf, strlen(buf), &v) == 0 && v > 0 &&
        v < 3600)
        y->got.update_ms = (unsigned)llround(v * 1000);
}

/* The identity as shown: a WT210 identifies by its model code (760401), not by name. */
static void yoko_set_identity(yoko *y, const char *model, const char *serial, const char *fw) {
    snprintf(y->got.serial, sizeof y->got.serial, "%s", serial);
    snprintf(y->got.firmware, sizeof y->got.firmware, "%s", fw);
    if (y->model == MODEL_WT310 || strncasecmp(model, "WT", 2) == 0)
        snprintf(y->got.model, sizeof y->got.model, "%s", model);
    else
        (void)tb_fmt_capped(y->got.model, sizeof y->got.model, "WT210 (%s)", model);
}

static int check_elements(const yoko *y, const char *model, char *err);

/* 0; -1 with err when the meter did not answer or refused; -2 with err for a
 * configuration error (an element the model lacks). */
static int yoko_setup(yoko *y, char *err) {
    char cmd[96], model[64], serial[64], fw[64];
    const char *inp = y->model == MODEL_WT310 ? ":INP" : ":CONF";

    if (y->serial) {
        if (tb_linesock_open_serial(y->dev, y->baud, &y->ls, err) != 0) return -1;
    } else if (tb_linesock_connect(y->host, y->port, YOKO_CONNECT_TIMEOUT_US, &y->ls, err) != 0) {
        return -1;
    }
    if (y->serial && yoko_send(y, ":COMM:REM ON", err) != 0) goto fail;
    if (yoko_send(y, "*CLS", err) != 0 || yoko_send(y, ":COMM:HEAD OFF", err) != 0 ||
        yoko_send(y, ":COMM:VERB OFF", err) != 0)
        goto fail;
    if (yoko_read_idn(y, model, serial, fw, err) != 0) goto fail;
    if (check_elements(y, model, err) != 0) {
        yoko_disconnect(y);
        return -2; /* a configuration error, not an unreachable meter */
    }
    if (yoko_set_range(y, inp, "VOLT", y->volts, err) != 0 || yoko_set_range(y, inp, "CURR", y->amps, err) != 0)
        goto fail;
    if (y->crest) {
        snprintf(cmd, sizeof cmd, "%s:CFAC %d", inp, y->crest);
        if (yoko_send(y, cmd, err) != 0) goto fail;
    }
    if (yoko_set_items(y, err) != 0 || yoko_check_error(y, "", 1, err) != 0) goto fail;
    yoko_read_back(y);
    /* The read-backs must not have left an error behind either (and a read-back
     * whose reply timed out must not have left the link out of step). */
    if (yoko_check_error(y, " after the read-backs", 0, err) != 0) goto fail;
    yoko_set_identity(y, model, serial, fw);
    y->have_acc = tb_yoko_accuracy_find(y->got.model, &y->acc);
    return 0;
fail:
    yoko_disconnect(y);
    return -1;
}

/* element=1,2: elements read as channels of one meter, each 1..3 (WT330, WT500). */
static int parse_elements(const char *v, yoko *y, char *err) {
    if (tb_meter_uri_channels("element", v, y->ch, TB_METER_MAX_CHANNELS, &y->nch, err) != 0) return -1;
    for (int i = 0; i < y->nch; i++)
        if (y->ch[i] > 3) {
            tb_seterr(err, "element: '%s': elements are 1, 2 or 3", v);
            return -1;
        }
    if (y->model == MODEL_WT210) {
        tb_seterr(err, "element: '%s': a WT210 has one input element", v);
        return -1;
    }
    y->element = y->ch[0];
    return 0;
}

/* element=1,2 against the model *IDN? named: an element it lacks is a
 * configuration error (-1 with err naming the parameter). */
static int check_elements(const yoko *y, const char *model, char *err) {
    int have = tb_meter_model_channels(model);
    for (int i = 0; i < y->nch; i++)
        if (have > 0 && y->ch[i] > have) {
            tb_seterr(err, "element: element %d: the %s has elements 1..%d", y->ch[i], model, have);
            return -1;
        }
    return 0;
}

static int parse_uri(const char *uri, yoko *y, char *err) {
    const char *p, *rest = NULL, *q;
    char v[64];
    int rc;

    if (strncasecmp(uri, "wt310://", 8) == 0 || strncasecmp(uri, "wt210://", 8) == 0) {
        y->model = tolower((unsigned char)uri[2]) == '3' ? MODEL_WT310 : MODEL_WT210;
        if (tb_linesock_split_hostport(uri + 8, NULL, y->host, sizeof y->host, y->port, sizeof y->port, &rest, err) !=
            0)
            return -1;
        if (*rest == '/' && rest[1] && rest[1] != '?') {
            tb_seterr(err, "'%s': unexpected path (expected %.5s://HOST:PORT[?params])", rest, uri);
            return -1;
        }
        q = strchr(rest, '?');
    } else if (strncasecmp(uri, "yokogawa+serial://", 18) == 0) {
        size_t n;
        y->serial = 1;
        p = uri + 18;
        if (*p != '/') {
            tb_seterr(err, "expected yokogawa+serial:///dev/DEVICE (three slashes: no host)");
            return -1;
        }
        n = strcspn(p, "?#");
        if (n >= sizeof y->dev) {
            tb_seterr(err, "device path too long");
            return -1;
        }
        memcpy(y->dev, p, n);
        y->dev[n] = '\0';
        q = p + n;
        rc = tb_meter_uri_param(q, "model", v, sizeof v, err);
        if (rc < 0) return -1;
        if (rc == 0 || strcasecmp(v, "wt310") == 0 || strcasecmp(v, "wt330") == 0 || strcasecmp(v, "wt500") == 0)
            y->model = MODEL_WT310;
        else if (strcasecmp(v, "wt210") == 0)
            y->model = MODEL_WT210;
        else {
            tb_seterr(err, "model: '%s': expected wt310, wt330, wt500 or wt210", v);
            return -1;
        }
        y->baud = 9600; /* the WT310 RS-232 default */
        rc = tb_meter_uri_param(q, "baud", v, sizeof v, err);
        if (rc < 0) return -1;
        if (rc == 1) {
            uint64_t b;
            char e[TB_ERR_LEN];
            if (tb_parse_u64(v, &b, e) != 0 || b == 0 || b > 115200) {
                tb_seterr(err, "baud: '%s': expected 1200..115200", v);
                return -1;
            }
            y->baud = (unsigned)b;
        }
    } else {
        tb_seterr(err, "expected wt310://HOST:PORT, wt210://HOST:PORT or yokogawa+serial:///dev/DEVICE");
        return -1;
    }
    if (q && *q == '?') {
        if (tb_meter_uri_check_keys(q, yoko_keys, err) != 0) return -1;
        if (!y->serial && (tb_meter_uri_param(q, "model", v, sizeof v, err) != 0 ||
                           tb_meter_uri_param(q, "baud", v, sizeof v, err) != 0)) {
            if (!err[0]) tb_seterr(err, "model= and baud= only apply to yokogawa+serial://");
            return -1;
        }
    } else {
        q = NULL;
    }
    y->element = 1;
    rc = tb_meter_uri_param(q, "element", v, sizeof v, err);
    if (rc < 0) return -1;
    if (rc == 1 && strchr(v, ',')) {
        if (parse_elements(v, y, err) != 0) return -1;
    } else if (rc == 1) {
        if (strcasecmp(v, "sigma") == 0)
            y->element = 0;
        else if (strlen(v) == 1 && v[0] >= '1' && v[0] <= '3')
            y->element = v[0] - '0';
        else {
            tb_seterr(err, "element: '%s': expected 1, 2, 3 or sigma", v);
            return -1;
        }
        if (y->model == MODEL_WT210 && y->element != 1) {
            tb_seterr(err, "element: '%s': a WT210 has one input element", v);
            return -1;
        }
    }
    for (int k = 0; k < 2; k++) {
        const char *key = k ? "amps" : "volts";
        char *dst = k ? y->amps : y->volts;
        rc = tb_meter_uri_param(q, key, v, sizeof v, err);
        if (rc < 0) return -1;
        if (rc == 0) continue;
        if (strcasecmp(v, "auto") == 0) {
            snprintf(dst, 32, "auto");
        } else {
            double r;
            char e[TB_ERR_LEN];
            if (tb_parse_double(v, &r, e) != 0 || r <= 0 || r > 1e4) {
                tb_seterr(err, "%s: '%s': expected a range in %s or 'auto'", key, v, k ? "A" : "V");
                return -1;
            }
            snprintf(dst, 32, "%g", r);
        }
    }
    rc = tb_meter_uri_param(q, "crest", v, sizeof v, err);
    if (rc < 0) return -1;
    if (rc == 1) {
        if (strcmp(v, "3") != 0 && strcmp(v, "6") != 0) {
            tb_seterr(err, "crest: '%s': expected 3 or 6", v);
            return -1;
        }
        y->crest = v[0] - '0';
    }
    y->timeout_us = YOKO_DEFAULT_TIMEOUT_US;
    rc = tb_meter_uri_param(q, "timeout", v, sizeof v, err);
    if (rc < 0) return -1;
    if (rc == 1 && tb_meter_uri_ms("timeout", v, &y->timeout_us, err) != 0) return -1;
    return 0;
}

static int yoko_open(const char *uri, void **self, char *err) {
    yoko *y = xcalloc(1, sizeof *y);
    int rc;
    if (parse_uri(uri, y, err) != 0) {
        free(y);
        return -1;
    }
    if ((rc = yoko_setup(y, err)) != 0) {
        free(y);
        return rc == -2 ? -1 : TB_METER_EUNREACH;
    }
    *self = y;
    return 0;
}

static int yoko_identify(void *self, tb_meter_info *info, char *err) {
    yoko *y = self;
    char eln[8];
    (void)err;
    if (y->nch > 1) {
        for (int k = 0, used = 0; k < y->nch && used + 3 < (int)sizeof eln; k++)
            used += snprintf(eln + used, sizeof eln - (size_t)used, "%s%d", k ? "," : "", y->ch[k]);
    } else if (y->element)
        snprintf(eln, sizeof eln, "%d", y->element);
    else
        snprintf(eln, sizeof eln, "SIGMA");
    snprintf(info->model, sizeof info->model, "%s", y->got.model);
    snprintf(info->idn, sizeof info->idn, "%s", y->idn);
    snprintf(info->serial, sizeof info->serial, "%s", y->got.serial);
    snprintf(info->firmware, sizeof info->firmware, "%s", y->got.firmware);
    snprintf(info->driver, sizeof info->driver, "yokogawa %s %s element %s", y->model == MODEL_WT310 ? ":NUM" : ":MEAS",
             y->serial ? "serial" : "tcp", eln);
    info->volt_range_v = y->got.volt_range_v;
    info->amp_range_a = y->got.amp_range_a;
    info->volt_mode = y->got.volt_mode;
    info->amp_mode = y->got.amp_mode;
    info->crest_factor = y->got.crest_factor;
    info->update_ms = y->got.update_ms;
    info->elements = y->element == 0 ? 3 : 1; /* SIGMA sums up to 3 elements (WT333) */
    if (y->nch > 0) {
        info->elements = y->nch;
        info->nchannels = y->nch;
        memcpy(info->channel, y->ch, sizeof info->channel);
    }
    info->estimated = 0;
    if (y->have_acc)
        (void)tb_fmt_capped(info->accuracy, sizeof info->accuracy,
                            "%s: %g%% of reading + %g%% of range (x%g at crest factor 6), 45-66 Hz; %s", y->acc.model,
                            y->acc.reading_pct, y->acc.range_pct, y->acc.cf6_factor, y->acc.source);
    else
        tb_log(TB_LOG_WARN,
               "yokogawa: no published accuracy for model '%s' in the table: its samples carry no "
               "uncertainty",
               y->got.model);
    return 0;
}

/* element=1,2: each element's P, U, I, LAMBDA from the reply, in turn, as
 * the channels of the sample (meter.c sums them); the summed W's uncertainty
 * as for SIGMA over that many elements. */
static void yoko_channels(const yoko *y, const double *v, const unsigned *f, int n, tb_sample *s) {
    double sum = 0;
    s->nch = y->nch;
    for (int k = 0; k < y->nch; k++) {
        tb_channel_sample *c = &s->ch[k];
        const double *x = v + k * YOKO_NITEMS;
        const unsigned *xf = f + k * YOKO_NITEMS;
        c->channel = y->ch[k];
        c->watts = c->volts = c->amps = c->pf = NAN;
        c->flags = TB_SAMPLE_INVALID;
        if (n < (k + 1) * YOKO_NITEMS) continue;
        c->watts = x[0], c->volts = x[1], c->amps = x[2], c->pf = x[3];
        c->flags = xf[0];
        if ((xf[1] | xf[2]) & TB_SAMPLE_OVERRANGE) c->flags |= TB_SAMPLE_OVERRANGE;
        if (c->flags & (TB_SAMPLE_INVALID | TB_SAMPLE_OVERRANGE)) c->watts = NAN;
        sum += c->watts;
    }
    if (y->got.volt_mode == TB_RANGE_AUTO || y->got.amp_mode == TB_RANGE_AUTO) s->flags |= TB_SAMPLE_AUTORANGE;
    if (y->have_acc && isfinite(sum))
        s->uncertainty_pct =
            tb_yoko_uncertainty_pct(&y->acc, sum, y->got.volt_range_v, y->got.amp_range_a, y->got.crest_factor, y->nch);
}

static int yoko_sample(void *self, tb_sample *s, char *err) {
    yoko *y = self;
    char buf[512], e[TB_ERR_LEN];
    double v[YOKO_NITEMS * TB_METER_MAX_CHANNELS];
    unsigned f[YOKO_NITEMS * TB_METER_MAX_CHANNELS];
    int n;
    /* Item order: WT310 as configured (P, U, I, LAMBDA); WT210 in its fixed
     * output order (V, A, W, PF). Index of W, V, A, PF in the reply: */
    static const int idx310[4] = {0, 1, 2, 3}, idx210[4] = {2, 0, 1, 3};
    const int *ix = y->model == MODEL_WT310 ? idx310 : idx210;

    if (!y->ls) {
        if (yoko_setup(y, e) != 0) {
            tb_seterr(err, "reconnect: %s", e);
            return -1;
        }
        y->reconnects++;
        tb_log(TB_LOG_INFO, "meter %s: reconnected (%u so far)", y->serial ? y->dev : y->host, y->reconnects);
    }
    if (yoko_query_once(y, y->model == MODEL_WT310 ? ":NUM:NORM:VAL?" : ":MEAS:NORM:VAL?", buf, sizeof buf, e) != 0) {
        /* A late reply must not answer the next question: start over. */
        yoko_disconnect(y);
        tb_seterr(err, "%s (will reconnect)", e);
        return -1;
    }
    s->mono_us = tb_now_us();
    s->wall_us = tb_wall_us();
    if (y->nch > 0) {
        n = tb_yoko_parse_values(buf, v, f, YOKO_NITEMS * y->nch);
        yoko_channels(y, v, f, n, s);
        return 0;
    }
    n = tb_yoko_parse_values(buf, v, f, YOKO_NITEMS);
    if (n != YOKO_NITEMS) {
        s->flags |= TB_SAMPLE_INVALID;
        tb_log(TB_LOG_DEBUG, "yokogawa: reply '%.80s' has %d fields, expected %d", buf, n, YOKO_NITEMS);
        return 0;
    }
    s->watts = v[ix[0]];
    s->volts = v[ix[1]];
    s->amps = v[ix[2]];
    s->pf = v[ix[3]];
    /* The sample is as good as its watts; an over-range V or A makes the W
     * over-range too (the meter computes W from them). */
    s->flags |= f[ix[0]];
    if ((f[ix[1]] | f[ix[2]]) & TB_SAMPLE_OVERRANGE) s->flags |= TB_SAMPLE_OVERRANGE;
    if (s->flags & (TB_SAMPLE_INVALID | TB_SAMPLE_OVERRANGE)) s->watts = NAN;
    if (y->got.volt_mode == TB_RANGE_AUTO || y->got.amp_mode == TB_RANGE_AUTO) s->flags |= TB_SAMPLE_AUTORANGE;
    /* The published accuracy at the ranges read back at set-up. Under
     * auto-range that is the range the meter was on then, not necessarily
     * the one it took this sample on (an approximation; such samples carry
     * TB_SAMPLE_AUTORANGE too). Above 1% the level's 1% rule invalidates it,
     * as it does for PTDaemon's stated uncertainty. */
    if (y->have_acc)
        s->uncertainty_pct = tb_yoko_uncertainty_pct(&y->acc, s->watts, y->got.volt_range_v, y->got.amp_range_a,
                                                     y->got.crest_factor, y->element == 0 ? 3 : 1);
    return 0;
}

/* The ranging pass (meter.h set_ranges): the ranges asked for become the
 * set-up's (a reconnect sets them again), are sent, and read back. */
static int yoko_set_ranges(void *self, double volts, double amps, char *err) {
    yoko *y = self;
    const char *inp = y->model == MODEL_WT310 ? ":INP" : ":CONF";
    char e[TB_ERR_LEN];
    tb_range_setting(y->volts, sizeof y->volts, volts, "auto");
    tb_range_setting(y->amps, sizeof y->amps, amps, "auto");
    if (!y->ls) return yoko_setup(y, err); /* sets them on the way */
    if (yoko_set_range(y, inp, "VOLT", y->volts, err) != 0 || yoko_set_range(y, inp, "CURR", y->amps, err) != 0 ||
        yoko_check_error(y, " after setting ranges", 1, err) != 0) {
        yoko_disconnect(y); /* the next sample reconnects and sets them again */
        return -1;
    }
    yoko_read_back(y);
    if (yoko_check_error(y, " after the read-backs", 0, e) != 0) yoko_disconnect(y);
    return 0;
}

static void yoko_close(void *self) {
    yoko *y = self;
    if (!y) return;
    yoko_disconnect(y);
    free(y);
}

/* Registered in meter.c's driver table, one entry per scheme. */
extern const tb_meter_driver tb_meter_wt310_driver, tb_meter_wt210_driver, tb_meter_yokoserial_driver;
const tb_meter_driver tb_meter_wt310_driver = {.scheme = "wt310",
                                               .open = yoko_open,
                                               .identify = yoko_identify,
                                               .sample = yoko_sample,
                                               .close = yoko_close,
                                               .set_ranges = yoko_set_ranges};
const tb_meter_driver tb_meter_wt210_driver = {.scheme = "wt210",
                                               .open = yoko_open,
                                               .identify = yoko_identify,
                                               .sample = yoko_sample,
                                               .close = yoko_close,
                                               .set_ranges = yoko_set_ranges};
const tb_meter_driver tb_meter_yokoserial_driver = {.scheme = "yokogawa+serial",
                                                    .open = yoko_open,
                                                    .identify = yoko_identify,
                                                    .sample = yoko_sample,
                                                    .close = yoko_close,
                                                    .set_ranges = yoko_set_ranges};
