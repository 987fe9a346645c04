/*
 * temperature.c: the inlet temperature sources (temperature.h) and their
 * 1 Hz sampler. A file or hwmon source is read whole at each sample; a
 * PTDaemon in temperature mode is asked as for power: Hello, Identify
 * (mode=temperature), Go,1000,0, then RL for the newest sample, whose
 * "Temperature" field is degrees C.
 */
#include "powermeter/temperature.h"
#include "common/redact.h"
#include "common/buf.h"
#include "powermeter/linesock.h"
#include "powermeter/meter.h"
#include "powermeter/ptd.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEMP_PTD_TIMEOUT_US 2000000u
#define TEMP_FILE_MAX       256

enum { SRC_FILE, SRC_PTD };

struct tb_temp_source {
    char uri[256];
    int kind;
    char path[512]; /* SRC_FILE: the file read */
    double scale;   /* SRC_FILE: 1, or 0.001 for hwmon */
    char host[128], port[16];
    tb_linesock *ls; /* SRC_PTD */
};

int tb_temp_parse_text(const char *text, double scale, double *celsius, char *why) {
    char buf[TEMP_FILE_MAX], e[TB_ERR_LEN];
    size_t a = 0, b = strlen(text);
    double v;
    while (text[a] == ' ' || text[a] == '\t' || text[a] == '\n' || text[a] == '\r')
        a++;
    while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\n' || text[b - 1] == '\r'))
        b--;
    if (b == a || b - a >= sizeof buf) {
        tb_seterr(why, b == a ? "empty, expected a number" : "too long for a number");
        return -1;
    }
    memcpy(buf, text + a, b - a);
    buf[b - a] = '\0';
    if (tb_parse_double(buf, &v, e) != 0 || !isfinite(v)) {
        tb_seterr(why, "'%.40s' is not a number", buf);
        return -1;
    }
    v *= scale;
    if (v < TB_TEMP_PLAUSIBLE_MIN_C || v > TB_TEMP_PLAUSIBLE_MAX_C) {
        tb_seterr(why, "%.1f degrees C is no inlet temperature (expected %.0f to %.0f)", v, TB_TEMP_PLAUSIBLE_MIN_C,
                  TB_TEMP_PLAUSIBLE_MAX_C);
        return -1;
    }
    *celsius = v;
    return 0;
}

int tb_temp_parse_ptd_sample(const char *line, double *celsius) {
    const char *p = line;
    while ((p = strstr(p, "Temperature,")) != NULL) {
        if (p == line || p[-1] == ',') {
            char *end;
            double v = strtod(p + 12, &end);
            if (end == p + 12 || (*end && *end != ',' && *end != '\r') || !isfinite(v) || v == -1.0) return -1;
            *celsius = v;
            return 0;
        }
        p += 12;
    }
    return -1;
}

/* hwmon:NAME[/tempK] -> the tempK_input path of the device named NAME. */
static int hwmon_path(const char *spec, char *path, size_t len, char *why) {
    char name[128], want[128], file[32] = "temp1";
    const char *slash = strchr(spec, '/');
    DIR *d;
    struct dirent *de;
    size_t n = slash ? (size_t)(slash - spec) : strlen(spec);
    if (n == 0 || n >= sizeof want) {
        tb_seterr(why, "expected hwmon:NAME[/tempK] or hwmon:/PATH");
        return -1;
    }
    memcpy(want, spec, n);
    want[n] = '\0';
    if (slash && (strncmp(slash + 1, "temp", 4) != 0 || strlen(slash + 1) >= sizeof file ||
                  strspn(slash + 5, "0123456789") != strlen(slash + 5) || !slash[5])) {
        tb_seterr(why, "'%s': expected tempK (K a number)", slash + 1);
        return -1;
    }
    if (slash) snprintf(file, sizeof file, "%s", slash + 1);
    if (!(d = opendir("/sys/class/hwmon"))) {
        tb_seterr(why, "/sys/class/hwmon: %s", strerror(errno));
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        char np[512];
        FILE *f;
        if (de->d_name[0] == '.') continue;
        snprintf(np, sizeof np, "/sys/class/hwmon/%s/name", de->d_name);
        if (!(f = fopen(np, "r"))) continue;
        if (fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = '\0';
        fclose(f);
        if (strcmp(name, want) == 0) {
            snprintf(path, len, "/sys/class/hwmon/%s/%s_input", de->d_name, file);
            closedir(d);
            return 0;
        }
    }
    closedir(d);
    tb_seterr(why, "no hwmon device named '%s' in /sys/class/hwmon", want);
    return -1;
}

static int read_file(tb_temp_source *t, double *c, char *err) {
    char buf[TEMP_FILE_MAX + 1], why[TB_ERR_LEN];
    FILE *f = fopen(t->path, "r");
    size_t n;
    if (!f) {
        tb_seterr(err, "temperature '%s': %s: %s", t->uri, t->path, strerror(errno));
        return -1;
    }
    n = fread(buf, 1, TEMP_FILE_MAX, f);
    fclose(f);
    buf[n] = '\0';
    if (tb_temp_parse_text(buf, t->scale, c, why) != 0) {
        tb_seterr(err, "temperature '%s': %s", t->uri, why);
        return -1;
    }
    return 0;
}

/* Sends cmd and reads its first line into buf. 0, or -1 with e. */
static int ptd_ask(tb_temp_source *t, const char *cmd, char *buf, size_t len, char *e) {
    char why[TB_ERR_LEN];
    if (tb_linesock_send(t->ls, cmd, "\r\n", TEMP_PTD_TIMEOUT_US, why) != 0 ||
        tb_linesock_readline(t->ls, buf, len, TEMP_PTD_TIMEOUT_US, why) < 0) {
        tb_seterr(e, "'%s': %s", cmd, why);
        return -1;
    }
    return 0;
}

/* Connects, checks the daemon is in temperature mode and starts its measurement. */
static int open_ptd(tb_temp_source *t, char *err) {
    char buf[512], e[TB_ERR_LEN];
    tb_ptd_ident id;
    if (tb_linesock_connect(t->host, t->port, TEMP_PTD_TIMEOUT_US, &t->ls, e) != 0) {
        tb_seterr(err, "temperature '%s': %s", t->uri, e);
        return TB_METER_EUNREACH;
    }
    if (ptd_ask(t, "Hello", buf, sizeof buf, e) != 0 || ptd_ask(t, "Identify", buf, sizeof buf, e) != 0) {
        tb_seterr(err, "temperature '%s': %s", t->uri, e);
        return TB_METER_EUNREACH;
    }
    if (tb_ptd_parse_identify(buf, &id) != 0 || strcmp(id.mode, "temperature") != 0) {
        tb_seterr(err, "temperature '%s': PTDaemon is not in temperature mode (Identify: '%.80s')", t->uri, buf);
        return -1;
    }
    /* "Stop" may say there is nothing to stop: either reply will do */
    if (ptd_ask(t, "Stop", buf, sizeof buf, e) != 0 || ptd_ask(t, "Go,1000,0", buf, sizeof buf, e) != 0) {
        tb_seterr(err, "temperature '%s': %s", t->uri, e);
        return TB_METER_EUNREACH;
    }
    if (strncmp(buf, "Starting untimed measurement", 28) != 0) {
        tb_seterr(err, "temperature '%s': 'Go,1000,0': unexpected reply '%.60s'", t->uri, buf);
        return -1;
    }
    return 0;
}

/* One RL: 0, -1 with err for a reply without a reading, -2 with err when
 * the connection failed (the caller drops it). */
static int ptd_rl(tb_temp_source *t, double *c, char *err) {
    char buf[512], e[TB_ERR_LEN];
    unsigned n = 0;
    if (ptd_ask(t, "RL", buf, sizeof buf, e) != 0) {
        tb_seterr(err, "temperature '%s': %s", t->uri, e);
        return -2;
    }
    if (tb_ptd_parse_rl_header(buf, &n) != 0 || n != 1) {
        tb_seterr(err, "temperature '%s': 'RL': unexpected reply '%.60s'", t->uri, buf);
        return -1;
    }
    if (tb_linesock_readline(t->ls, buf, sizeof buf, TEMP_PTD_TIMEOUT_US, e) < 0) {
        tb_seterr(err, "temperature '%s': 'RL': %s", t->uri, e);
        return -2;
    }
    if (tb_temp_parse_ptd_sample(buf, c) != 0) {
        tb_seterr(err, "temperature '%s': no Temperature in '%.80s'", t->uri, buf);
        return -1;
    }
    return 0;
}

/* A reading; a connection that failed is dropped and made again at the
 * next reading (a daemon restarted, a network blip), as for power. */
static int read_ptd(tb_temp_source *t, double *c, char *err) {
    int rc;
    if (!t->ls && open_ptd(t, err) != 0) {
        tb_linesock_close(t->ls);
        t->ls = NULL;
        return -1;
    }
    if ((rc = ptd_rl(t, c, err)) == -2) {
        tb_linesock_close(t->ls);
        t->ls = NULL;
    }
    return rc == 0 ? 0 : -1;
}

static int parse_uri(tb_temp_source *t, const char *uri, char *err) {
    char why[TB_ERR_LEN];
    if (strncmp(uri, "file:", 5) == 0 && uri[5]) {
        t->kind = SRC_FILE;
        t->scale = 1.0;
        snprintf(t->path, sizeof t->path, "%s", uri + 5);
    } else if (strncmp(uri, "hwmon:", 6) == 0 && uri[6]) {
        t->kind = SRC_FILE;
        t->scale = 0.001;
        if (uri[6] == '/')
            snprintf(t->path, sizeof t->path, "%s", uri + 6);
        else if (hwmon_path(uri + 6, t->path, sizeof t->path, why) != 0) {
            tb_seterr(err, "temperature '%s': %s", t->uri, why);
            return -1;
        }
    } else if (strncmp(uri, "ptd+temp://", 11) == 0) {
        t->kind = SRC_PTD;
        const char *rest = NULL;
        if (tb_linesock_split_hostport(uri + 11, TB_TEMP_PTD_DEFAULT_PORT, t->host, sizeof t->host, t->port,
                                       sizeof t->port, &rest, why) != 0) {
            tb_seterr(err, "temperature '%s': %s", t->uri, why);
            return -1;
        }
        if (rest && *rest && strcmp(rest, "/") != 0) {
            tb_seterr(err, "temperature '%s': '%s': ptd+temp takes no path or parameters", t->uri, rest);
            return -1;
        }
    } else {
        tb_seterr(err, "temperature '%s': unknown scheme (expected ptd+temp://HOST:PORT, hwmon:NAME or file:PATH)",
                  t->uri);
        return -1;
    }
    return 0;
}

int tb_temp_open(const char *uri, tb_temp_source **out, char *err) {
    tb_temp_source *t;
    double c;
    int rc;
    *out = NULL;
    if (strlen(uri) >= sizeof t->uri) {
        char shown[64];
        tb_redact_uri(uri, shown, sizeof shown);
        tb_seterr(err, "temperature '%s...': URI too long", shown);
        return -1;
    }
    t = xcalloc(1, sizeof *t);
    tb_redact_uri(uri, t->uri, sizeof t->uri); /* as shown in every message: no password */
    if ((rc = parse_uri(t, uri, err)) == 0 && t->kind == SRC_PTD) rc = open_ptd(t, err);
    if (rc == 0 && tb_temp_read(t, &c, err) != 0) rc = t->kind == SRC_PTD ? TB_METER_EUNREACH : -1;
    if (rc != 0) {
        tb_redact_scrub(err, TB_ERR_LEN, uri); /* a message quoting a part of the URI raw */
        tb_temp_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

int tb_temp_read(tb_temp_source *t, double *celsius, char *err) {
    return t->kind == SRC_PTD ? read_ptd(t, celsius, err) : read_file(t, celsius, err);
}

const char *tb_temp_uri(const tb_temp_source *t) { return t->uri; }

void tb_temp_close(tb_temp_source *t) {
    if (!t) return;
    if (t->ls) {
        char e[TB_ERR_LEN];
        if (tb_linesock_send(t->ls, "Stop", "\r\n", TEMP_PTD_TIMEOUT_US, e) != 0)
            tb_log(TB_LOG_DEBUG, "temperature '%s': Stop: %s", t->uri, e);
        tb_linesock_close(t->ls);
    }
    free(t);
}

/* ---- the sampler ---- */

struct tb_temp_sampler {
    tb_temp_source *srcs[TB_TEMP_MAX_SOURCES];
    int n;
    uint64_t interval_us;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    int stopping;
    tb_temp_reading *buf; /* guarded by mu */
    size_t len, cap;
    uint64_t failures;
};

static void tick(tb_temp_sampler *s, int *failing) {
    for (int i = 0; i < s->n; i++) {
        char err[TB_ERR_LEN];
        double c;
        uint64_t at = tb_now_us();
        int64_t wall = tb_wall_us();
        int rc = tb_temp_read(s->srcs[i], &c, err);
        pthread_mutex_lock(&s->mu);
        if (rc == 0) {
            s->buf = tb_grow(s->buf, s->len, &s->cap, sizeof *s->buf);
            s->buf[s->len++] = (tb_temp_reading){i, at, wall, c};
        } else {
            s->failures++;
        }
        pthread_mutex_unlock(&s->mu);
        if (rc != 0 && !failing[i]) tb_log(TB_LOG_WARN, "%s (reading skipped)", err);
        if (rc == 0 && failing[i]) tb_log(TB_LOG_INFO, "temperature '%s' is back", tb_temp_uri(s->srcs[i]));
        failing[i] = rc != 0;
    }
}

static void *sampler_main(void *arg) {
    tb_temp_sampler *s = arg;
    int failing[TB_TEMP_MAX_SOURCES] = {0};
    uint64_t next = tb_now_us();
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        uint64_t now = tb_now_us();
        if (now < next) {
            struct timespec ts = {(time_t)(next / 1000000u), (long)(next % 1000000u) * 1000L};
            (void)pthread_cond_timedwait(&s->wake, &s->mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&s->mu);
        tick(s, failing);
        pthread_mutex_lock(&s->mu);
        next += s->interval_us;
        if (tb_now_us() > next) next = tb_now_us(); /* a slow source: no burst of catch-up reads */
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int tb_temp_sampler_start(tb_temp_source **srcs, int n, uint64_t interval_us, tb_temp_sampler **out, char *err) {
    pthread_condattr_t ca;
    tb_temp_sampler *s;
    int rc;
    *out = NULL;
    if (n < 1 || n > TB_TEMP_MAX_SOURCES || interval_us == 0) {
        tb_seterr(err, "temperature sampler: 1 to %d sources and an interval > 0", TB_TEMP_MAX_SOURCES);
        return -1;
    }
    s = xcalloc(1, sizeof *s);
    memcpy(s->srcs, srcs, (size_t)n * sizeof *srcs);
    s->n = n;
    s->interval_us = interval_us;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    if ((rc = pthread_create(&s->thread, NULL, sampler_main, s)) != 0) {
        tb_seterr(err, "temperature sampler: pthread_create: %s", strerror(rc));
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void tb_temp_sampler_window(tb_temp_sampler *s, uint64_t t0_us, uint64_t t1_us, tb_temp_stats *out) {
    double sum = 0;
    out->n = 0;
    out->min_c = out->mean_c = out->max_c = NAN;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->len; i++) {
        double c = s->buf[i].celsius;
        if (s->buf[i].mono_us < t0_us || s->buf[i].mono_us >= t1_us) continue;
        if (out->n == 0 || c < out->min_c) out->min_c = c;
        if (out->n == 0 || c > out->max_c) out->max_c = c;
        sum += c;
        out->n++;
    }
    pthread_mutex_unlock(&s->mu);
    if (out->n) out->mean_c = sum / out->n;
}

int tb_temp_sampler_readings(tb_temp_sampler *s, uint64_t t0_us, uint64_t t1_us, tb_temp_reading **out) {
    int n = 0;
    size_t cap = 0;
    *out = NULL;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->len; i++) {
        if (s->buf[i].mono_us < t0_us || s->buf[i].mono_us >= t1_us) continue;
        *out = tb_grow(*out, (size_t)n, &cap, sizeof **out);
        (*out)[n++] = s->buf[i];
    }
    pthread_mutex_unlock(&s->mu);
    return n;
}

uint64_t tb_temp_sampler_failures(tb_temp_sampler *s) {
    uint64_t v;
    pthread_mutex_lock(&s->mu);
    v = s->failures;
    pthread_mutex_unlock(&s->mu);
    return v;
}

void tb_temp_sampler_stop(tb_temp_sampler *s) {
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->mu);
    free(s->buf);
    free(s);
}
