/*
 * registry.c: the families and series of metrics.h, and their rendering in
 * the Prometheus text format 0.0.4 (the rules are in metrics.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

typedef struct series {
    char *labels; /* rendered: "" or {a="x",b="y"} */
    double value;
} series;

typedef struct family {
    char *name, *help;
    tb_metric_type type;
    series *s;
    size_t n, cap;
} family;

struct tb_metrics {
    pthread_mutex_t mu;
    family *f;
    size_t n, cap;
};

tb_metrics *tb_metrics_new(void) {
    tb_metrics *m = xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

void tb_metrics_free(tb_metrics *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) {
        for (size_t k = 0; k < m->f[i].n; k++)
            free(m->f[i].s[k].labels);
        free(m->f[i].s);
        free(m->f[i].name);
        free(m->f[i].help);
    }
    free(m->f);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static int is_alpha_(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

int tb_metrics_name_ok(const char *name) {
    if (!name || !(is_alpha_(name[0]) || name[0] == ':')) return 0;
    for (const char *p = name + 1; *p; p++)
        if (!is_alpha_(*p) && !is_digit(*p) && *p != ':') return 0;
    return 1;
}

int tb_metrics_label_name_ok(const char *name) {
    if (!name || !is_alpha_(name[0]) || strncmp(name, "__", 2) == 0) return 0;
    for (const char *p = name + 1; *p; p++)
        if (!is_alpha_(*p) && !is_digit(*p)) return 0;
    return 1;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the byte there
 * does not begin one (RFC 3629: no overlong forms, no surrogates, at most
 * U+10FFFF). */
static int utf8_len(const unsigned char *p) {
    unsigned char c = p[0];
    int n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else
        return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

void tb_metrics_escape_label(const char *v, tb_buf *out) {
    const unsigned char *p = (const unsigned char *)v;
    while (*p) {
        int n = utf8_len(p);
        if (*p == '\\')
            tb_buf_put(out, "\\\\");
        else if (*p == '"')
            tb_buf_put(out, "\\\"");
        else if (*p == '\n')
            tb_buf_put(out, "\\n");
        else if (n == 0)
            tb_buf_put(out, "?");
        else
            tb_buf_putn(out, p, (size_t)n);
        p += n ? n : 1;
    }
}

/* The help text escaped: backslash and line feed (the help line's rule). */
static void escape_help(const char *h, tb_buf *out) {
    for (const unsigned char *p = (const unsigned char *)h; *p;) {
        int n = utf8_len(p);
        if (*p == '\\')
            tb_buf_put(out, "\\\\");
        else if (*p == '\n')
            tb_buf_put(out, "\\n");
        else if (n == 0)
            tb_buf_put(out, "?");
        else
            tb_buf_putn(out, p, (size_t)n);
        p += n ? n : 1;
    }
}

void tb_metrics_format_value(double v, char *buf, size_t len) {
    if (isnan(v))
        snprintf(buf, len, "NaN");
    else if (isinf(v))
        snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
    else {
        snprintf(buf, len, "%.15g", v);
        if (strtod(buf, NULL) != v) snprintf(buf, len, "%.17g", v);
    }
}

/* The rendered label set of labels into *key (caller frees): 0, or -1 for a
 * bad label name. */
static int label_key(const char *const *labels, char **key) {
    tb_buf b;
    tb_buf_init(&b, 0);
    for (int i = 0; labels && labels[i]; i += 2) {
        if (!tb_metrics_label_name_ok(labels[i]) || !labels[i + 1]) {
            tb_buf_free(&b);
            return -1;
        }
        tb_buf_put(&b, i ? "," : "{");
        tb_buf_put(&b, labels[i]);
        tb_buf_put(&b, "=\"");
        tb_metrics_escape_label(labels[i + 1], &b);
        tb_buf_put(&b, "\"");
    }
    if (b.len) tb_buf_put(&b, "}");
    *key = tb_buf_take(&b, NULL);
    return 0;
}

static family *find_family(tb_metrics *m, const char *name) {
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->f[i].name, name) == 0) return &m->f[i];
    return NULL;
}

int tb_metrics_declare(tb_metrics *m, const char *name, tb_metric_type type, const char *help, char *err) {
    family *f;
    if (!tb_metrics_name_ok(name)) {
        tb_seterr(err, "metric name '%s': expected [a-zA-Z_:][a-zA-Z0-9_:]*", name ? name : "");
        return -1;
    }
    pthread_mutex_lock(&m->mu);
    if (find_family(m, name)) {
        pthread_mutex_unlock(&m->mu);
        tb_seterr(err, "metric '%s' is declared twice (one family per name)", name);
        return -1;
    }
    m->f = tb_grow(m->f, m->n, &m->cap, sizeof *m->f);
    f = &m->f[m->n++];
    f->name = xstrdup(name);
    f->help = xstrdup(help ? help : "");
    f->type = type;
    pthread_mutex_unlock(&m->mu);
    return 0;
}

/* The series of labels in f, made (value 0) when make is set; NULL when it
 * is not there (or make and the labels are bad: *bad set). Under m->mu. */
static series *find_series(family *f, const char *const *labels, int make, int *bad) {
    char *key;
    series *s;
    *bad = 0;
    if (label_key(labels, &key) != 0) {
        *bad = 1;
        return NULL;
    }
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->s[i].labels, key) == 0) {
            free(key);
            return &f->s[i];
        }
    if (!make) {
        free(key);
        return NULL;
    }
    f->s = tb_grow(f->s, f->n, &f->cap, sizeof *f->s);
    s = &f->s[f->n++];
    s->labels = key;
    s->value = 0;
    return s;
}

/* set (add = 0) or add (add = 1) v to a series. */
static int update(tb_metrics *m, const char *name, const char *const *labels, double v, int add) {
    family *f;
    series *s;
    int bad, rc = -1;
    pthread_mutex_lock(&m->mu);
    f = find_family(m, name);
    if (f && f->type == TB_METRIC_COUNTER && (!isfinite(v) || v < 0)) f = NULL; /* never down, never NaN */
    if (f && (s = find_series(f, labels, 1, &bad))) {
        double nv = add ? s->value + v : v;
        if (f->type != TB_METRIC_COUNTER || nv >= s->value) {
            s->value = nv;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int tb_metrics_set(tb_metrics *m, const char *name, const char *const *labels, double v) {
    return update(m, name, labels, v, 0);
}

int tb_metrics_add(tb_metrics *m, const char *name, const char *const *labels, double delta) {
    return update(m, name, labels, delta, 1);
}

void tb_metrics_clear(tb_metrics *m, const char *name) {
    family *f;
    pthread_mutex_lock(&m->mu);
    if ((f = find_family(m, name))) {
        for (size_t k = 0; k < f->n; k++)
            free(f->s[k].labels);
        f->n = 0;
    }
    pthread_mutex_unlock(&m->mu);
}

int tb_metrics_get(tb_metrics *m, const char *name, const char *const *labels, double *v) {
    family *f;
    series *s = NULL;
    int bad;
    pthread_mutex_lock(&m->mu);
    if ((f = find_family(m, name)) && (s = find_series(f, labels, 0, &bad))) *v = s->value;
    pthread_mutex_unlock(&m->mu);
    return s ? 0 : -1;
}

char *tb_metrics_render(tb_metrics *m, size_t *len) {
    tb_buf b;
    char val[40];
    tb_buf_init(&b, 0);
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++) {
        const family *f = &m->f[i];
        if (f->n == 0) continue;
        tb_buf_putf(&b, "# HELP %s ", f->name);
        escape_help(f->help, &b);
        tb_buf_putf(&b, "\n# TYPE %s %s\n", f->name, f->type == TB_METRIC_COUNTER ? "counter" : "gauge");
        for (size_t k = 0; k < f->n; k++) {
            tb_metrics_format_value(f->s[k].value, val, sizeof val);
            tb_buf_putf(&b, "%s%s %s\n", f->name, f->s[k].labels, val);
        }
    }
    pthread_mutex_unlock(&m->mu);
    return tb_buf_take(&b, len);
}
