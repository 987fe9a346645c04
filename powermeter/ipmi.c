/*
 * ipmi.c: the IPMI meter driver: the BMC's own power reading, through
 * ipmitool run as a subprocess (one short run per sample).
 *
 *   ipmi://USER:PASS@HOST[:PORT]?method=dcmi|sensor&sensor=NAME[&cipher=3&timeout=5s]
 *       remote, RMCP+ (lanplus); USER and PASS may be %-escaped
 *   ipmi:local[?method=dcmi|sensor&sensor=NAME]   in-band, /dev/ipmi0
 *
 * method=dcmi (default): DCMI Get Power Reading ("ipmitool dcmi power
 * reading"); the sample is the instantaneous reading and the BMC's averaging
 * window (vendor-defined) goes into the meter info, in ms from the raw reply
 * read once at open ("ipmitool raw 0x2c 0x02 0xdc 0x01 0x00 0x00"), since
 * the text rounds it down to whole seconds. A reading whose min, max and
 * average are equal is flagged FLAT; many of them in a run make the BMC
 * "not averaged" in the reports (tb_ipmi_not_averaged). method=sensor: an SDR
 * sensor in Watts by name ("ipmitool sensor reading NAME"), e.g.
 * "Pwr Consumption". Readings of 0 W or 65535 W, and DCMI readings not
 * marked active, are INVALID samples (tb_ipmi_judge).
 *
 * Why a subprocess and not FreeIPMI's library: ipmitool is in every lab, it
 * parses by label (not position, so both of its output layouts work), and a
 * hung BMC session can be killed by the timeout without leaving a library
 * in an unknown state. The password reaches ipmitool through its
 * IPMI_PASSWORD environment variable (-E), never on the command line where
 * ps would show it, and never in an error message.
 *
 * TB_IPMITOOL (environment) names the ipmitool binary (default: PATH).
 */
#include "powermeter/ipmi.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/spawn.h"
#include "powermeter/linesock.h"
#include "powermeter/meter.h"
#include "powermeter/meter_uri.h"

extern char **environ;

#define IPMI_DEFAULT_TIMEOUT_US 5000000u
#define IPMI_OUT_MAX            8192

/* ---- parsers (ipmi.h) ---- */

/* Finds label (case-sensitive) in text; returns the text after the next ':' on that line, or NULL. */
static const char *after_label(const char *text, const char *label) {
    const char *p = text;
    while ((p = strstr(p, label)) != NULL) {
        const char *c = p + strlen(label);
        while (*c == ' ' || *c == '\t')
            c++;
        if (*c == ':') return c + 1;
        p += strlen(label);
    }
    return NULL;
}

static int leading_number(const char *p, double *v) {
    char *end;
    while (*p == ' ' || *p == '\t')
        p++;
    errno = 0;
    *v = strtod(p, &end);
    return end == p || errno == ERANGE ? -1 : 0;
}

/* A reporting period in ms, 0 (unknown) when it does not fit 32 bits: a
 * garbled "Sampling period: 4444...4 Seconds" must not overflow the cast
 * (found by fuzz_ipmi). */
static uint32_t period_ms(double ms) { return ms >= 0 && ms <= (double)UINT32_MAX ? (uint32_t)ms : 0; }

int tb_ipmi_parse_dcmi_text(const char *text, tb_ipmi_dcmi *out) {
    const char *p;
    double v;
    out->cur_w = out->min_w = out->max_w = out->avg_w = NAN;
    out->period_ms = 0;
    out->active = -1;
    /* ipmitool labels, then FreeIPMI's. */
    if ((p = after_label(text, "Instantaneous power reading")) || (p = after_label(text, "Current Power")))
        if (leading_number(p, &v) == 0) out->cur_w = v;
    if ((p = after_label(text, "Minimum during sampling period")) || (p = after_label(text, "Minimum Power")))
        if (leading_number(p, &v) == 0) out->min_w = v;
    if ((p = after_label(text, "Maximum during sampling period")) || (p = after_label(text, "Maximum Power")))
        if (leading_number(p, &v) == 0) out->max_w = v;
    if ((p = after_label(text, "Average power reading over sample period")) || (p = after_label(text, "Average Power")))
        if (leading_number(p, &v) == 0) out->avg_w = v;
    if ((p = after_label(text, "Sampling period")) && leading_number(p, &v) == 0 && v >= 0) {
        /* ipmitool prints seconds ("00000001 Seconds."), some builds ms. */
        const char *u = p;
        while (*u == ' ' || isdigit((unsigned char)*u) || *u == '.')
            u++;
        out->period_ms = period_ms(strncasecmp(u, "milli", 5) == 0 ? v : v * 1000.0);
    } else if ((p = after_label(text, "Statistics reporting time period")) && leading_number(p, &v) == 0 && v >= 0) {
        out->period_ms = period_ms(v); /* FreeIPMI: milliseconds */
    }
    if ((p = strstr(text, "Power reading state is")) != NULL) {
        p += strlen("Power reading state is");
        while (*p == ' ' || *p == ':' || *p == '\t')
            p++;
        out->active = strncasecmp(p, "activated", 9) == 0 ? 1 : 0;
    } else if ((p = after_label(text, "Power Measurement")) != NULL) {
        while (*p == ' ')
            p++;
        out->active = strncasecmp(p, "Active", 6) == 0 ? 1 : 0;
    }
    return isnan(out->cur_w) ? -1 : 0;
}

static uint16_t le16(const uint8_t *b) { return (uint16_t)(b[0] | (b[1] << 8)); }
static uint32_t le32(const uint8_t *b) {
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}

int tb_ipmi_parse_dcmi_raw(const uint8_t *b, size_t n, tb_ipmi_dcmi *out) {
    out->cur_w = out->min_w = out->max_w = out->avg_w = NAN;
    out->period_ms = 0;
    out->active = -1;
    if (n < 1) return -1;
    if (b[0] != 0) return b[0];
    if (n < 19 || b[1] != 0xDC) return -1;
    out->cur_w = le16(b + 2);
    out->min_w = le16(b + 4);
    out->max_w = le16(b + 6);
    out->avg_w = le16(b + 8);
    /* b[10..13]: timestamp */
    out->period_ms = le32(b + 14);
    out->active = (b[18] & 0x40) ? 1 : 0;
    return 0;
}

int tb_ipmi_parse_raw_hex(const char *text, uint8_t *out, size_t cap) {
    size_t n = 0;
    const char *p = text;
    for (;;) {
        unsigned v = 0;
        int digits = 0;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p) return (int)n;
        while (isxdigit((unsigned char)*p) && digits < 3) {
            v = v * 16 + (unsigned)(isdigit((unsigned char)*p) ? *p - '0' : tolower((unsigned char)*p) - 'a' + 10);
            digits++;
            p++;
        }
        if (digits == 0 || digits > 2 || (*p && !isspace((unsigned char)*p))) return -1;
        if (n == cap) return -1;
        out[n++] = (uint8_t)v;
    }
}

int tb_ipmi_dcmi_flat(const tb_ipmi_dcmi *d) {
    return !isnan(d->min_w) && !isnan(d->max_w) && !isnan(d->avg_w) && d->min_w == d->max_w && d->max_w == d->avg_w;
}

int tb_ipmi_not_averaged(long long flat_readings, long long valid_readings) {
    return valid_readings >= TB_IPMI_NOT_AVERAGED_MIN && flat_readings == valid_readings;
}

int tb_ipmi_parse_sensor_text(const char *text, const char *name, double *watts) {
    size_t nl = strlen(name);
    const char *line = text;
    while (*line) {
        const char *eol = line + strcspn(line, "\n");
        const char *p = line;
        while (*p == ' ')
            p++;
        if ((size_t)(eol - p) > nl && strncmp(p, name, nl) == 0) {
            const char *q = p + nl;
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q == '|' || *q == ',') {
                double v;
                if (leading_number(q + 1, &v) == 0) {
                    *watts = v;
                    return 0;
                }
                return -1; /* "na": no reading */
            }
        }
        line = *eol ? eol + 1 : eol;
    }
    return -1;
}

unsigned tb_ipmi_judge(double watts, int active) {
    if (isnan(watts) || watts <= 0 || watts >= 65535) return TB_SAMPLE_INVALID;
    if (active == 0) return TB_SAMPLE_INVALID;
    return 0;
}

/* ---- the driver ---- */

typedef struct ipmi {
    int local;
    int dcmi; /* 1 dcmi, 0 sensor */
    char tool[512];
    char host[256], port[16], user[64], pass[128], cipher[8];
    char sensor[64];
    uint64_t timeout_us;
    uint32_t window_ms;
    char idn[192]; /* "BMC MANU PROD fw FW": 63 + 63 + 31 bytes of mc info fields, 10 of text */
} ipmi;

static const char *const ipmi_keys[] = {"method", "sensor", "cipher", "timeout", NULL};

/* Finds an executable: env override, else each PATH entry. 0 or -1. */
static int find_tool(char *out, size_t len) {
    const char *env = getenv("TB_IPMITOOL"), *path = getenv("PATH");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, X_OK) == 0 ? 0 : -1;
    }
    if (!path) path = "/usr/bin:/bin:/usr/sbin:/sbin";
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(out, len, "%.*s/ipmitool", (int)n, path);
        if (n && access(out, X_OK) == 0) return 0;
        path += n;
        if (*path == ':') path++;
    }
    return -1;
}

/* argv for ipmitool: the connection options, then args (NULL-ended), into
 * argv (cap entries, the last kept for NULL). tmo holds the -N value. */
static void tool_argv(ipmi *m, const char *const *args, const char **argv, int cap, char *tmo, size_t tmolen) {
    int argc = 0;
    argv[argc++] = m->tool;
    if (m->local) {
        argv[argc++] = "-I";
        argv[argc++] = "open";
    } else {
        /* -N/-R: per-try timeout (s) and retries, so a dead BMC fails within our own timeout. */
        snprintf(tmo, tmolen, "%llu", (unsigned long long)(m->timeout_us / 3000000u ? m->timeout_us / 3000000u : 1));
        argv[argc++] = "-I";
        argv[argc++] = "lanplus";
        argv[argc++] = "-H";
        argv[argc++] = m->host;
        argv[argc++] = "-p";
        argv[argc++] = m->port;
        argv[argc++] = "-U";
        argv[argc++] = m->user;
        argv[argc++] = "-E";
        argv[argc++] = "-C";
        argv[argc++] = m->cipher;
        argv[argc++] = "-N";
        argv[argc++] = tmo;
        argv[argc++] = "-R";
        argv[argc++] = "2";
    }
    for (int i = 0; args[i] && argc < cap - 1; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
}

/* The parent's environment without its IPMI_PASSWORD, plus pwenv (the
 * password for -E) when remote; built before the fork, since setenv is not
 * safe in the child of a threaded process. free() the array, not the strings. */
static char **tool_envp(const ipmi *m, char *pwenv, size_t pwlen) {
    char **envp;
    int nenv = 0;
    for (char **e = environ; *e; e++)
        nenv++;
    envp = xcalloc((size_t)nenv + 2, sizeof *envp);
    nenv = 0;
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "IPMI_PASSWORD=", 14) != 0) envp[nenv++] = *e;
    snprintf(pwenv, pwlen, "IPMI_PASSWORD=%s", m->pass);
    if (!m->local) envp[nenv++] = pwenv;
    envp[nenv] = NULL;
    return envp;
}

/*
 * Runs ipmitool with the connection options and then the given arguments,
 * stdout and stderr captured together into r->output (up to IPMI_OUT_MAX
 * bytes; free with tb_spawn_result_free, also after -1). Killed at once when
 * the timeout passes. Returns its exit status (0 ok), or -1 with err.
 */
static int run_tool(ipmi *m, const char *const *args, tb_spawn_result *r, char *err) {
    const char *argv[32];
    char pwenv[160], tmo[16];
    char **envp;
    tb_spawn_opts o;
    int rc;

    tool_argv(m, args, argv, 32, tmo, sizeof tmo);
    envp = tool_envp(m, pwenv, sizeof pwenv);
    memset(&o, 0, sizeof o);
    o.path = m->tool;
    o.argv = argv;
    o.envp = envp;
    o.output_max = IPMI_OUT_MAX;
    o.timeout_us = m->timeout_us;
    o.grace_us = 1; /* SIGKILL at the deadline: a hung BMC session has nothing to save */
    rc = tb_spawn_run(&o, r, err);
    memset(pwenv, 0, sizeof pwenv);
    free(envp);
    if (rc != 0) return -1;
    if (r->timed_out) {
        tb_seterr(err, "ipmitool timed out after %llu ms", (unsigned long long)(m->timeout_us / 1000));
        return -1;
    }
    /* 127: the exec failed (spawn's child says "cannot execute ..."). */
    if (r->exited && r->exit_status == 127 && (r->output_len == 0 || strncmp(r->output, "cannot execute ", 15) == 0)) {
        tb_seterr(err, "cannot run %s", m->tool);
        return -1;
    }
    return r->exited ? r->exit_status : 128;
}

/* The last non-empty line of text, for error messages. */
static void last_line(const char *text, char *buf, size_t len) {
    const char *end = text + strlen(text), *start;
    while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        end--;
    start = end;
    while (start > text && start[-1] != '\n')
        start--;
    snprintf(buf, len, "%.*s", (int)(end - start), start);
}

/* Explains a failed ipmitool run in err. */
static void tool_error(ipmi *m, int rc, const char *out, char *err) {
    char ll[200];
    last_line(out, ll, sizeof ll);
    if (strstr(out, "Unable to establish IPMI v2 / RMCP+ session") || strstr(out, "RAKP"))
        tb_seterr(err, "cannot log in to the BMC at %s:%s as '%s' (wrong user or password, or BMC unreachable): %s",
                  m->host, m->port, m->user, ll);
    else if (strstr(out, "Could not open device"))
        tb_seterr(err, "no in-band BMC: %s (is the ipmi_si/ipmi_devintf module loaded?)", ll);
    else if (strstr(out, "Invalid command") || strstr(out, "not supported") || strstr(out, "Unsupported"))
        tb_seterr(err, "the BMC does not support %s: %s", m->dcmi ? "DCMI power reading (try method=sensor)" : "it",
                  ll);
    else
        tb_seterr(err, "ipmitool exited %d: %s", rc, ll[0] ? ll : "(no output)");
}

/* One DCMI power reading into *d. 0, or -1 with err. */
static int read_dcmi(ipmi *m, tb_ipmi_dcmi *d, char *err) {
    static const char *const args[] = {"dcmi", "power", "reading", NULL};
    tb_spawn_result r;
    char e[TB_ERR_LEN];
    int rc = run_tool(m, args, &r, e), ret = -1;
    if (rc < 0)
        tb_seterr(err, "%s", e);
    else if (rc != 0 || tb_ipmi_parse_dcmi_text(r.output, d) != 0)
        tool_error(m, rc, r.output, err);
    else
        ret = 0;
    tb_spawn_result_free(&r);
    return ret;
}

/* One SDR sensor reading into d->cur_w (NaN when the sensor has no number
 * now: an invalid sample, not a failure). 0, or -1 with err. */
static int read_sensor(ipmi *m, tb_ipmi_dcmi *d, char *err) {
    const char *args[] = {"sensor", "reading", m->sensor, NULL};
    tb_spawn_result r;
    char e[TB_ERR_LEN];
    int rc;
    d->cur_w = d->min_w = d->max_w = d->avg_w = NAN;
    d->period_ms = 0;
    d->active = -1;
    rc = run_tool(m, args, &r, e);
    if (rc < 0) {
        tb_seterr(err, "%s", e);
    } else if (rc != 0) {
        tool_error(m, rc, r.output, err);
        rc = -1;
    } else if (tb_ipmi_parse_sensor_text(r.output, m->sensor, &d->cur_w) != 0) {
        char ll[160];
        last_line(r.output, ll, sizeof ll);
        /* Present but without a number: an invalid sample, not a failure. */
        d->cur_w = NAN;
        if (!strstr(r.output, m->sensor) || strstr(r.output, "Unable to find")) {
            tb_seterr(err, "sensor '%s': %s", m->sensor, ll[0] ? ll : "not found");
            rc = -1;
        }
    }
    tb_spawn_result_free(&r);
    return rc == 0 ? 0 : -1;
}

/* One reading into *d (method=sensor: cur_w only, the rest unknown). 0, or -1 with err. */
static int ipmi_read(ipmi *m, tb_ipmi_dcmi *d, char *err) {
    return m->dcmi ? read_dcmi(m, d, err) : read_sensor(m, d, err);
}

/*
 * The averaging window in ms from the raw DCMI reply (ipmitool's text gives
 * whole seconds: a 250 ms window prints as "00000000 Seconds"). Keeps
 * m->window_ms (the text's value) when the raw command fails or gives 0.
 */
static void raw_window(ipmi *m) {
    static const char *const args[] = {"raw", "0x2c", "0x02", "0xdc", "0x01", "0x00", "0x00", NULL};
    tb_spawn_result r;
    char e[TB_ERR_LEN];
    uint8_t b[64];
    tb_ipmi_dcmi d;
    int n = -1;
    if (run_tool(m, args, &r, e) == 0) n = tb_ipmi_parse_raw_hex(r.output, b + 1, sizeof b - 1);
    tb_spawn_result_free(&r);
    if (n < 0) {
        tb_log(TB_LOG_INFO, "ipmi: raw DCMI power reading failed; averaging window from ipmitool's text (%u ms)",
               m->window_ms);
        return;
    }
    b[0] = 0; /* the completion code, which ipmitool does not print on success */
    if (tb_ipmi_parse_dcmi_raw(b, (size_t)n + 1, &d) == 0 && d.period_ms > 0) m->window_ms = d.period_ms;
}

static int parse_uri(const char *uri, ipmi *m, char *err) {
    const char *q = NULL, *rest;
    char v[64];
    int rc;

    if (strncasecmp(uri, "ipmi:local", 10) == 0 && (uri[10] == '\0' || uri[10] == '?')) {
        m->local = 1;
        q = uri[10] ? uri + 10 : NULL;
    } else if (strncasecmp(uri, "ipmi://", 7) == 0) {
        const char *auth = uri + 7, *end = auth + strcspn(auth, "/?#"), *at = NULL, *colon;
        for (const char *p = auth; p < end; p++)
            if (*p == '@') at = p;
        if (!at) {
            tb_seterr(err, "expected ipmi://USER:PASS@HOST[:PORT] (user and password are required for lanplus)");
            return -1;
        }
        colon = memchr(auth, ':', (size_t)(at - auth));
        if (!colon || colon == auth) {
            tb_seterr(err, "expected USER:PASS@ before the host");
            return -1;
        }
        if (tb_meter_uri_decode(auth, (size_t)(colon - auth), m->user, sizeof m->user) != 0 ||
            tb_meter_uri_decode(colon + 1, (size_t)(at - colon - 1), m->pass, sizeof m->pass) != 0) {
            tb_seterr(err, "user or password too long or badly %%-escaped");
            return -1;
        }
        if (tb_linesock_split_hostport(at + 1, "623", m->host, sizeof m->host, m->port, sizeof m->port, &rest, err) !=
            0)
            return -1;
        q = strchr(rest, '?');
    } else {
        tb_seterr(err, "expected ipmi://USER:PASS@HOST[:PORT][?method=dcmi|sensor&sensor=NAME] or ipmi:local");
        return -1;
    }
    if (q && tb_meter_uri_check_keys(q, ipmi_keys, err) != 0) return -1;
    m->dcmi = 1;
    rc = tb_meter_uri_param(q, "method", v, sizeof v, err);
    if (rc < 0) return -1;
    if (rc == 1) {
        if (strcmp(v, "dcmi") == 0)
            m->dcmi = 1;
        else if (strcmp(v, "sensor") == 0)
            m->dcmi = 0;
        else {
            tb_seterr(err, "method: '%s': expected dcmi or sensor", v);
            return -1;
        }
    }
    rc = tb_meter_uri_param(q, "sensor", m->sensor, sizeof m->sensor, err);
    if (rc < 0) return -1;
    if (!m->dcmi && rc == 0) {
        tb_seterr(err, "method=sensor needs sensor=NAME (e.g. sensor=Pwr%%20Consumption)");
        return -1;
    }
    if (m->dcmi && rc == 1) {
        tb_seterr(err, "sensor= only applies to method=sensor");
        return -1;
    }
    snprintf(m->cipher, sizeof m->cipher, "3");
    rc = tb_meter_uri_param(q, "cipher", v, sizeof v, err);
    if (rc < 0) return -1;
    if (rc == 1) {
        if (strlen(v) > 2 || !isdigit((unsigned char)v[0]) || (v[1] && !isdigit((unsigned char)v[1]))) {
            tb_seterr(err, "cipher: '%s': expected a cipher suite number (e.g. 3, 17)", v);
            return -1;
        }
        memcpy(m->cipher, v, strlen(v) + 1); /* one or two digits: checked above */
    }
    m->timeout_us = IPMI_DEFAULT_TIMEOUT_US;
    rc = tb_meter_uri_param(q, "timeout", v, sizeof v, err);
    if (rc < 0) return -1;
    if (rc == 1 && tb_meter_uri_ms("timeout", v, &m->timeout_us, err) != 0) return -1;
    return 0;
}

/* The BMC's identity from "ipmitool mc info" into m->idn; left empty when that fails. */
static void mc_info(ipmi *m) {
    static const char *const args[] = {"mc", "info", NULL};
    tb_spawn_result r;
    char e[TB_ERR_LEN];
    const char *p;
    char manu[64] = "", fw[32] = "", prod[64] = "";
    if (run_tool(m, args, &r, e) == 0) {
        if ((p = after_label(r.output, "Manufacturer Name"))) sscanf(p, " %63[^\n]", manu);
        if ((p = after_label(r.output, "Product Name"))) sscanf(p, " %63[^\n]", prod);
        if ((p = after_label(r.output, "Firmware Revision"))) sscanf(p, " %31s", fw);
        snprintf(m->idn, sizeof m->idn, "BMC %s%s%s fw %s", manu[0] ? manu : "?", prod[0] ? " " : "", prod,
                 fw[0] ? fw : "?");
    }
    tb_spawn_result_free(&r);
}

static int ipmi_open(const char *uri, void **self, char *err) {
    ipmi *m = xcalloc(1, sizeof *m);
    tb_ipmi_dcmi d;
    int rc = -1;

    if (parse_uri(uri, m, err) != 0) goto fail;
    if (m->local) {
        static const char *const devs[] = {"/dev/ipmi0", "/dev/ipmi/0", "/dev/ipmidev/0"};
        struct stat st;
        size_t i;
        for (i = 0; i < 3; i++)
            if (stat(devs[i], &st) == 0) break;
        if (i == 3) {
            tb_seterr(err, "no in-band BMC: /dev/ipmi0 not found (load ipmi_si and ipmi_devintf, or use ipmi://)");
            rc = TB_METER_EUNREACH; /* the URI is fine; the device is missing (exit 3, as a missing serial device) */
            goto fail;
        }
    }
    if (find_tool(m->tool, sizeof m->tool) != 0) {
        tb_seterr(err, "ipmitool not found (install the ipmitool package, or set TB_IPMITOOL)");
        goto fail;
    }
    /* One reading now, so a wrong password or an unsupported method fails at
     * open, and the averaging window is known. */
    if (ipmi_read(m, &d, err) != 0) {
        rc = TB_METER_EUNREACH; /* the URI is fine; the BMC did not answer or refused us */
        goto fail;
    }
    m->window_ms = d.period_ms;
    if (m->dcmi) raw_window(m);
    mc_info(m);
    *self = m;
    return 0;
fail:
    memset(m->pass, 0, sizeof m->pass);
    free(m);
    return rc;
}

static int ipmi_identify(void *self, tb_meter_info *info, char *err) {
    ipmi *m = self;
    (void)err;
    if (m->dcmi)
        snprintf(info->model, sizeof info->model, "IPMI DCMI power reading");
    else
        (void)tb_fmt_capped(info->model, sizeof info->model, "IPMI sensor '%s'", m->sensor);
    (void)tb_fmt_capped(info->idn, sizeof info->idn, "%s", m->idn[0] ? m->idn : (m->local ? "BMC (in-band)" : m->host));
    snprintf(info->driver, sizeof info->driver, "ipmitool %s %s", m->local ? "open" : "lanplus",
             m->dcmi ? "dcmi power reading" : "sensor reading");
    info->avg_window_ms = m->window_ms;
    info->estimated = 0;
    return 0;
}

static int ipmi_sample(void *self, tb_sample *s, char *err) {
    ipmi *m = self;
    tb_ipmi_dcmi d;
    if (ipmi_read(m, &d, err) != 0) return -1;
    s->mono_us = tb_now_us();
    s->wall_us = tb_wall_us();
    s->flags |= tb_ipmi_judge(d.cur_w, d.active);
    if (m->dcmi && tb_ipmi_dcmi_flat(&d)) s->flags |= TB_SAMPLE_FLAT;
    s->watts = (s->flags & TB_SAMPLE_INVALID) ? NAN : d.cur_w;
    return 0;
}

static void ipmi_close(void *self) {
    ipmi *m = self;
    if (!m) return;
    memset(m->pass, 0, sizeof m->pass);
    free(m);
}

/* Registered in meter.c's driver table. */
extern const tb_meter_driver tb_meter_ipmi_driver;
const tb_meter_driver tb_meter_ipmi_driver = {
    .scheme = "ipmi", .open = ipmi_open, .identify = ipmi_identify, .sample = ipmi_sample, .close = ipmi_close};
