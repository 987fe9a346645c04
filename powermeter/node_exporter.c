/*
 * node_exporter.c: the Prometheus text exposition format parser, the
 * /metrics GET (libcurl), and node_exporter's metric names mapped onto a
 * telemetry snapshot and the host configuration (node_exporter.h).
 *
 * Format (prometheus.io/docs/instrumenting/exposition_formats, 0.0.4): one
 * sample per line, `name{label="value",...} value [timestamp_ms]`; label
 * values escape backslash, double quote and newline; values are Go floats
 * (NaN, +Inf, -Inf allowed); '#' starts HELP, TYPE and comment lines.
 * The metric names used below were checked against the prometheus-node-
 * exporter 1.5.0 that Debian 12 ships.
 */
#include "powermeter/node_exporter.h"
#include "powermeter/meter.h"
#include "common/buf.h"
#include "common/redact.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#define MAX_BODY (64u << 20) /* a node_exporter page is ~100 KB; this only stops a runaway server */

/* ---- the parser ------------------------------------------------------------------ */

const char *tb_prom_label(const tb_prom_sample *s, const char *name) {
    for (int i = 0; i < s->n_labels; i++)
        if (strcmp(s->label_name[i], name) == 0) return s->label_value[i];
    return NULL;
}

static int name_start(int c) { return isalpha(c) || c == '_' || c == ':'; }
static int name_char(int c) { return isalnum(c) || c == '_' || c == ':'; }

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* Parses one sample line [p, end) into s, copying strings into scratch
 * (which has room for the line plus a NUL per string). NULL or why not. */
static const char *parse_line(const char *p, const char *end, char *scratch, tb_prom_sample *s) {
    char *o = scratch, numbuf[64];
    const char *q;
    size_t n;
    memset(s, 0, sizeof *s);
    if (!name_start((unsigned char)*p)) return "metric name must start with a letter, '_' or ':'";
    s->name = o;
    while (p < end && name_char((unsigned char)*p))
        *o++ = *p++;
    *o++ = '\0';
    p = skip_ws(p, end);
    if (p < end && *p == '{') {
        p++;
        for (;;) {
            p = skip_ws(p, end);
            if (p < end && *p == '}') {
                p++;
                break;
            }
            if (p >= end || !(isalpha((unsigned char)*p) || *p == '_')) return "bad label name";
            if (s->n_labels == TB_PROM_MAX_LABELS) return "too many labels";
            s->label_name[s->n_labels] = o;
            while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
                *o++ = *p++;
            *o++ = '\0';
            p = skip_ws(p, end);
            if (p >= end || *p != '=') return "expected '=' after a label name";
            p = skip_ws(p + 1, end);
            if (p >= end || *p != '"') return "label value must be in double quotes";
            p++;
            s->label_value[s->n_labels] = o;
            for (;;) {
                if (p >= end) return "unterminated label value";
                if (*p == '"') break;
                if (*p == '\\') {
                    if (p + 1 >= end) return "unterminated escape in a label value";
                    p++;
                    if (*p == 'n')
                        *o++ = '\n';
                    else if (*p == '\\' || *p == '"')
                        *o++ = *p;
                    else
                        return "bad escape in a label value (only \\\\, \\\" and \\n)";
                    p++;
                } else {
                    *o++ = *p++;
                }
            }
            *o++ = '\0';
            p++; /* closing quote */
            s->n_labels++;
            p = skip_ws(p, end);
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            if (p < end && *p == '}') {
                p++;
                break;
            }
            return "expected ',' or '}' after a label";
        }
    }
    p = skip_ws(p, end);
    q = p;
    while (p < end && *p != ' ' && *p != '\t')
        p++;
    n = (size_t)(p - q);
    if (n == 0) return "missing value";
    if (n >= sizeof numbuf) return "value too long";
    memcpy(numbuf, q, n);
    numbuf[n] = '\0';
    {
        char *e;
        /* Go's ParseFloat spellings: NaN, +Inf, -Inf (any case); strtod takes those and hex too */
        if (isalpha((unsigned char)numbuf[0]) && strcasecmp(numbuf, "nan") != 0 && strcasecmp(numbuf, "inf") != 0 &&
            strcasecmp(numbuf, "infinity") != 0)
            return "value is not a number";
        errno = 0;
        s->value = strtod(numbuf, &e);
        if (*e || e == numbuf) return "value is not a number";
    }
    p = skip_ws(p, end);
    if (p < end) {
        char *e;
        q = p;
        while (p < end && *p != ' ' && *p != '\t')
            p++;
        n = (size_t)(p - q);
        if (n >= sizeof numbuf) return "timestamp too long";
        memcpy(numbuf, q, n);
        numbuf[n] = '\0';
        errno = 0;
        s->timestamp_ms = strtoll(numbuf, &e, 10);
        if (*e || e == numbuf || errno) return "timestamp is not an integer (ms)";
        s->has_timestamp = 1;
        if (skip_ws(p, end) != end) return "unexpected text after the timestamp";
    }
    return NULL;
}

int tb_prom_parse(const char *text, size_t len, tb_prom_cb cb, void *ud, char *err) {
    const char *p = text, *end = text + len;
    char *scratch = NULL;
    size_t scap = 0;
    int line = 0, count = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end, *why;
        tb_prom_sample s;
        line++;
        while (le > p && le[-1] == '\r')
            le--;
        p = skip_ws(p, le);
        if (p < le && *p != '#') {
            size_t need = (size_t)(le - p) + 2 * TB_PROM_MAX_LABELS + 2;
            if (memchr(p, '\0', (size_t)(le - p))) {
                free(scratch);
                tb_seterr(err, "line %d: NUL byte", line);
                return -1;
            }
            if (need > scap) {
                scap = need;
                scratch = xrealloc(scratch, scap);
            }
            if ((why = parse_line(p, le, scratch, &s)) != NULL) {
                free(scratch);
                tb_seterr(err, "line %d: %s", line, why);
                return -1;
            }
            count++;
            if (cb && cb(&s, ud) != 0) break;
        }
        p = nl ? nl + 1 : end;
    }
    free(scratch);
    return count;
}

/* ---- the GET ---------------------------------------------------------------------- */

/* curl's write callback: the body into a tb_buf; 0 (curl stops) past MAX_BODY. */
static size_t on_data(char *data, size_t size, size_t nmemb, void *ud) {
    size_t n = size * nmemb;
    return tb_buf_add(ud, data, n) == 0 ? n : 0;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

int tb_node_exporter_fetch(const char *url, long timeout_ms, char **body, size_t *len, char *err) {
    CURL *c;
    CURLcode rc;
    char cerr[CURL_ERROR_SIZE] = "";
    tb_buf b;
    long status = 0;
    char shown[1024]; /* the URL for messages: its password redacted */
    *body = NULL;
    *len = 0;
    tb_buf_init(&b, MAX_BODY - 1); /* with its NUL, the body fits in MAX_BODY bytes */
    tb_redact_uri(url, shown, sizeof shown);
    pthread_once(&curl_once, curl_init);
    if (!(c = curl_easy_init())) {
        tb_seterr(err, "GET %s: curl_easy_init failed", shown);
        return -1;
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* called from the sampler thread */
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "tilebench/" TB_VERSION);
    rc = curl_easy_perform(c);
    if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK) {
        tb_redact_scrub(cerr, sizeof cerr, url);
        tb_seterr(err, "GET %s: %s", shown,
                  b.overflow ? "response larger than 64 MiB"
                  : *cerr    ? cerr
                             : curl_easy_strerror(rc));
        tb_buf_free(&b);
        return -1;
    }
    if (status != 200) {
        tb_seterr(err, "GET %s: HTTP %ld", shown, status);
        tb_buf_free(&b);
        return -1;
    }
    *body = tb_buf_take(&b, len);
    return 0;
}

/* ---- node_exporter's names ---------------------------------------------------------- */

/* Distinct small strings (cpu ids, package/core pairs). */
typedef struct strset {
    char (*v)[48];
    int n, cap;
} strset;

static void strset_add(strset *s, const char *x) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0) return;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->v = xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    snprintf(s->v[s->n++], sizeof s->v[0], "%s", x);
}

typedef struct snap_ctx {
    tb_telem_snap *s;
    strset cpus;
    double scaling_sum, cur_sum;
    int n_scaling, n_cur;
} snap_ctx;

static int on_snap_sample(const tb_prom_sample *x, void *ud) {
    static const char *const modes[TB_CPU_NMODES] = {"user",   "nice", "system",  "idle",
                                                     "iowait", "irq",  "softirq", "steal"};
    snap_ctx *c = ud;
    if (strcmp(x->name, "node_cpu_seconds_total") == 0) {
        const char *mode = tb_prom_label(x, "mode"), *cpu = tb_prom_label(x, "cpu");
        if (!mode || !cpu || !isfinite(x->value)) return 0;
        for (int m = 0; m < TB_CPU_NMODES; m++)
            if (strcmp(mode, modes[m]) == 0) {
                c->s->cpu_s[m] += x->value;
                c->s->have_cpu = 1;
                strset_add(&c->cpus, cpu);
            }
    } else if (strcmp(x->name, "node_cpu_scaling_frequency_hertz") == 0 && isfinite(x->value) && x->value > 0) {
        c->scaling_sum += x->value / 1e6;
        c->n_scaling++;
    } else if (strcmp(x->name, "node_cpu_frequency_hertz") == 0 && isfinite(x->value) && x->value > 0) {
        c->cur_sum += x->value / 1e6;
        c->n_cur++;
    }
    return 0;
}

int tb_node_exporter_snap(const char *text, size_t len, tb_telem_snap *s, char *err) {
    snap_ctx c;
    memset(s, 0, sizeof *s);
    memset(&c, 0, sizeof c);
    c.s = s;
    s->freq_mhz = NAN;
    if (tb_prom_parse(text, len, on_snap_sample, &c, err) < 0) {
        free(c.cpus.v);
        return -1;
    }
    s->n_cpus = c.cpus.n;
    if (c.n_scaling > 0 || c.n_cur > 0) {
        s->freq_mhz = c.n_scaling > 0 ? c.scaling_sum / c.n_scaling : c.cur_sum / c.n_cur;
        s->freq_src = TB_FREQ_NODE_EXPORTER;
    }
    free(c.cpus.v);
    return 0;
}

typedef struct host_ctx {
    tb_hostinfo *h;
    strset cpus, cores, sockets;
    int have_cpu_info;
} host_ctx;

static void copy_label(const tb_prom_sample *x, const char *label, char *dst, size_t len) {
    const char *v = tb_prom_label(x, label);
    if (v && *v) snprintf(dst, len, "%s", v);
}

static int on_host_sample(const tb_prom_sample *x, void *ud) {
    host_ctx *c = ud;
    tb_hostinfo *h = c->h;
    if (strcmp(x->name, "node_uname_info") == 0) {
        const char *sys = tb_prom_label(x, "sysname"), *rel = tb_prom_label(x, "release");
        copy_label(x, "nodename", h->hostname, sizeof h->hostname);
        copy_label(x, "machine", h->arch, sizeof h->arch);
        if (sys && rel && *sys && *rel) snprintf(h->kernel, sizeof h->kernel, "%s %s", sys, rel);
    } else if (strcmp(x->name, "node_os_info") == 0) {
        copy_label(x, "pretty_name", h->os, sizeof h->os);
    } else if (strcmp(x->name, "node_memory_MemTotal_bytes") == 0 && isfinite(x->value) && x->value > 0) {
        h->memory_mib = (long long)(x->value / 1048576.0);
    } else if (strcmp(x->name, "node_cpu_info") == 0) {
        const char *pkg = tb_prom_label(x, "package"), *core = tb_prom_label(x, "core");
        char key[48];
        if (!h->cpu_model[0]) copy_label(x, "model_name", h->cpu_model, sizeof h->cpu_model);
        if (pkg && core) {
            snprintf(key, sizeof key, "%.20s/%.20s", pkg, core);
            strset_add(&c->cores, key);
            strset_add(&c->sockets, pkg);
            c->have_cpu_info = 1;
        }
    } else if (strcmp(x->name, "node_cpu_seconds_total") == 0) {
        const char *cpu = tb_prom_label(x, "cpu");
        if (cpu) strset_add(&c->cpus, cpu);
    } else if (strcmp(x->name, "node_cpu_scaling_governor") == 0 && x->value == 1) {
        const char *g = tb_prom_label(x, "governor");
        if (!g || !*g) return 0;
        if (!h->governor[0])
            snprintf(h->governor, sizeof h->governor, "%s", g);
        else if (!strstr(h->governor, g)) {
            char tmp[sizeof h->governor];
            (void)tb_fmt_capped(tmp, sizeof tmp, "%s%s, %s", strncmp(h->governor, "mixed: ", 7) ? "mixed: " : "",
                                h->governor, g); /* a list past the field ends in "..." */
            memcpy(h->governor, tmp, sizeof tmp);
        }
    }
    return 0;
}

int tb_node_exporter_hostinfo(const char *text, size_t len, tb_hostinfo *h, char *err) {
    host_ctx c;
    int rc;
    memset(&c, 0, sizeof c);
    c.h = h;
    rc = tb_prom_parse(text, len, on_host_sample, &c, err);
    if (rc >= 0) {
        if (c.cpus.n > 0) h->cpus = c.cpus.n;
        if (c.have_cpu_info) {
            h->cores = c.cores.n;
            h->sockets = c.sockets.n;
        }
    }
    free(c.cpus.v);
    free(c.cores.v);
    free(c.sockets.v);
    return rc < 0 ? -1 : 0;
}
