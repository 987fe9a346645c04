/*
 * tb_common.c: error buffers, aborting allocators, clocks, duration and number
 * parsing, and the process-wide log (the only global state in tilebench).
 */
#define _POSIX_C_SOURCE 200809L
#include "tb_common.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* vsnprintf that ends a cut text in "..." (when len leaves room for it). */
static int vfmt_capped(char *out, size_t len, const char *fmt, va_list ap) {
    int n;
    if (len == 0) return -1;
    n = vsnprintf(out, len, fmt, ap);
    if (n >= 0 && (size_t)n < len) return 0;
    if (n < 0)
        out[0] = '\0';
    else if (len >= 4)
        memcpy(out + len - 4, "...", 4); /* cut: say so */
    return -1;
}

void tb_seterr(char *err, const char *fmt, ...) {
    va_list ap;
    if (!err) return;
    va_start(ap, fmt);
    (void)vfmt_capped(err, TB_ERR_LEN, fmt, ap);
    va_end(ap);
}

void tb_seterr_line(char *err, const char *what, const char *msg) {
    char buf[TB_ERR_LEN];
    size_t i, len;
    snprintf(buf, sizeof buf, "%s", msg ? msg : "");
    len = strlen(buf);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        buf[--len] = '\0';
    for (i = 0; i < len; i++)
        if (buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t') buf[i] = ' ';
    tb_seterr(err, "%s: %s", what, buf);
}

int tb_fmt_capped(char *out, size_t len, const char *fmt, ...) {
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = vfmt_capped(out, len, fmt, ap);
    va_end(ap);
    return rc;
}

static void oom(size_t n) {
    fprintf(stderr, "tilebench: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) oom(n * sz);
    return p;
}

void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n);
    memcpy(p, s, n);
    return p;
}

uint64_t tb_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int64_t tb_wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void tb_format_wall(int64_t wall_us, char *buf, size_t len) {
    time_t t = (time_t)(wall_us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int tb_parse_duration_us(const char *s, uint64_t *out_us, char *err) {
    char *end;
    double v, mult;
    if (!s || !*s) {
        tb_seterr(err, "empty duration");
        return -1;
    }
    errno = 0;
    v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v)) {
        tb_seterr(err, "'%s': not a duration (examples: 500ms, 30s, 5m)", s);
        return -1;
    }
    if (v < 0 || s[0] == '-') {
        tb_seterr(err, "'%s': duration must not be negative", s);
        return -1;
    }
    if (*end == '\0' || strcmp(end, "s") == 0)
        mult = 1e6;
    else if (strcmp(end, "ms") == 0)
        mult = 1e3;
    else if (strcmp(end, "us") == 0)
        mult = 1;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        mult = 60e6;
    else if (strcmp(end, "h") == 0)
        mult = 3600e6;
    else {
        tb_seterr(err, "'%s': unknown unit '%s' (use us, ms, s, m, h)", s, end);
        return -1;
    }
    v *= mult;
    if (v > 1e15) { /* ~31 years: surely a typo */
        tb_seterr(err, "'%s': duration too large", s);
        return -1;
    }
    *out_us = (uint64_t)llround(v);
    return 0;
}

void tb_format_duration(uint64_t us, char *buf, size_t len) {
    if (us % 3600000000u == 0 && us > 0)
        snprintf(buf, len, "%lluh", (unsigned long long)(us / 3600000000u));
    else if (us % 60000000u == 0 && us > 0)
        snprintf(buf, len, "%llum", (unsigned long long)(us / 60000000u));
    else if (us % 1000000u == 0)
        snprintf(buf, len, "%llus", (unsigned long long)(us / 1000000u));
    else if (us % 1000u == 0)
        snprintf(buf, len, "%llums", (unsigned long long)(us / 1000u));
    else
        snprintf(buf, len, "%lluus", (unsigned long long)us);
}

int tb_parse_u64(const char *s, uint64_t *out, char *err) {
    char *end;
    unsigned long long v;
    if (!s || !*s || s[0] == '-' || s[0] == '+' || s[0] == ' ') {
        tb_seterr(err, "'%s': not a non-negative integer", s ? s : "");
        return -1;
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno == ERANGE || *end != '\0') {
        tb_seterr(err, "'%s': not a non-negative integer", s);
        return -1;
    }
    *out = v;
    return 0;
}

int tb_parse_double(const char *s, double *out, char *err) {
    char *end;
    double v;
    if (!s || !*s) {
        tb_seterr(err, "empty number");
        return -1;
    }
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        tb_seterr(err, "'%s': not a number", s);
        return -1;
    }
    *out = v;
    return 0;
}

static int log_level = TB_LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void tb_log_set_level(int level) { log_level = level; }

void tb_log(int level, const char *fmt, ...) {
    static const char *names[] = {"error", "warn", "info", "debug"};
    va_list ap;
    char ts[32];
    if (level > log_level) return;
    tb_format_wall(tb_wall_us(), ts, sizeof ts);
    pthread_mutex_lock(&log_lock);
    fprintf(stderr, "%s tilebench %s: ", ts, names[level < 0 ? 0 : level > 3 ? 3 : level]);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    pthread_mutex_unlock(&log_lock);
}
