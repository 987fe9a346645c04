/*
 * meter_uri.c: query-string helpers for meter URIs (see meter_uri.h).
 */
#include "powermeter/meter_uri.h"

#include <stdio.h>
#include <string.h>

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int tb_meter_uri_decode(const char *in, size_t n, char *out, size_t len) {
    size_t i, o = 0;
    for (i = 0; i < n; i++) {
        char c = in[i];
        if (c == '%') {
            int h, l;
            if (i + 2 >= n) return -1;
            h = hexval(in[i + 1]);
            l = hexval(in[i + 2]);
            if (h < 0 || l < 0) return -1;
            c = (char)(h * 16 + l);
            i += 2;
        }
        if (o + 1 >= len) return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

/* Calls fn for each key=value of q; stops when fn returns nonzero. */
typedef int (*param_fn)(const char *k, size_t kl, const char *v, size_t vl, void *arg);
static int walk(const char *q, param_fn fn, void *arg) {
    const char *p = q;
    if (!p) return 0;
    if (*p == '?') p++;
    while (*p && *p != '#') {
        size_t plen = strcspn(p, "&;#");
        size_t klen = strcspn(p, "=&;#");
        if (plen > 0) {
            const char *v = klen < plen ? p + klen + 1 : p + plen;
            size_t vl = klen < plen ? plen - klen - 1 : 0;
            int rc = fn(p, klen, v, vl, arg);
            if (rc) return rc;
        }
        p += plen;
        if (*p == '&' || *p == ';') p++;
    }
    return 0;
}

typedef struct find_arg {
    const char *key;
    char *out;
    size_t len;
    char *err;
    int found;
} find_arg;

static int find_cb(const char *k, size_t kl, const char *v, size_t vl, void *arg) {
    find_arg *a = arg;
    if (strlen(a->key) != kl || strncmp(a->key, k, kl) != 0) return 0;
    if (a->found) {
        tb_seterr(a->err, "'%s': given twice", a->key);
        return -1;
    }
    if (tb_meter_uri_decode(v, vl, a->out, a->len) != 0) {
        tb_seterr(a->err, "'%s': value too long or badly %%-escaped", a->key);
        return -1;
    }
    a->found = 1;
    return 0;
}

int tb_meter_uri_param(const char *q, const char *key, char *out, size_t len, char *err) {
    find_arg a = {key, out, len, err, 0};
    if (len) out[0] = '\0';
    if (walk(q, find_cb, &a) != 0) return -1;
    return a.found;
}

typedef struct keys_arg {
    const char *const *allowed;
    char *err;
} keys_arg;

static int keys_cb(const char *k, size_t kl, const char *v, size_t vl, void *arg) {
    keys_arg *a = arg;
    size_t i, used = 0;
    char known[160] = "";
    (void)v;
    (void)vl;
    for (i = 0; a->allowed[i]; i++)
        if (strlen(a->allowed[i]) == kl && strncmp(a->allowed[i], k, kl) == 0) return 0;
    for (i = 0; a->allowed[i] && used < sizeof known; i++) {
        int w = snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", a->allowed[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
    tb_seterr(a->err, "'%.*s': unknown parameter (keys: %s)", (int)kl, k, known[0] ? known : "none");
    return -1;
}

int tb_meter_uri_check_keys(const char *q, const char *const *allowed, char *err) {
    keys_arg a = {allowed, err};
    return walk(q, keys_cb, &a) != 0 ? -1 : 0;
}

int tb_meter_uri_ms(const char *key, const char *val, uint64_t *out_us, char *err) {
    char perr[TB_ERR_LEN];
    uint64_t v;
    size_t n = strlen(val);
    if (n > 0 && val[n - 1] >= '0' && val[n - 1] <= '9') {
        if (tb_parse_u64(val, &v, perr) != 0) {
            tb_seterr(err, "%s: %s", key, perr);
            return -1;
        }
        v *= 1000u;
    } else if (tb_parse_duration_us(val, &v, perr) != 0) {
        tb_seterr(err, "%s: %s", key, perr);
        return -1;
    }
    if (v < 1000u || v > 3600u * 1000000u) {
        tb_seterr(err, "%s: '%s': must be between 1ms and 1h", key, val);
        return -1;
    }
    *out_us = v;
    return 0;
}

int tb_meter_uri_channels(const char *key, const char *val, int *out, int max, int *n, char *err) {
    const char *p = val;
    *n = 0;
    for (;;) {
        int c, i;
        if (*p < '1' || *p > '9' || (p[1] && p[1] != ',')) {
            tb_seterr(err, "%s: '%s': expected channel numbers 1..9 separated by commas", key, val);
            return -1;
        }
        c = *p - '0';
        for (i = 0; i < *n; i++)
            if (out[i] == c) {
                tb_seterr(err, "%s: '%s': channel %d given twice", key, val, c);
                return -1;
            }
        if (*n == max) {
            tb_seterr(err, "%s: '%s': at most %d channels", key, val, max);
            return -1;
        }
        out[(*n)++] = c;
        if (!p[1]) return 0;
        p += 2;
    }
}
