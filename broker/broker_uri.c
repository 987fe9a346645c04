/*
 * broker_uri.c: redis://[[USER]:PASS@]HOST[:PORT][/DB] into its parts, and
 * rediss://...[?ca=FILE] (TLS, broker/tunnel.h) with the CA file.
 *
 * The userinfo ends at the last '@' of the URI, so a raw '@' in the password
 * still works, and so that an error can quote any part after it (host, port,
 * db) knowing it holds nothing of the password. The userinfo itself is never
 * quoted. A raw '/', '?' or '#' in it is refused: common/redact.c would look
 * for the password differently then, and the shown URI could leak it.
 */
#define _GNU_SOURCE
#include "broker/broker.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/redact.h"

#define URI_FORM "redis[s]://[[USER]:PASS@]HOST[:PORT][/DB]"

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..n) into a new string (*out), or -1 with err naming
 * what (never quoting it). */
static int decode(const char *s, size_t n, const char *what, char **out, char *err) {
    char *d = xmalloc(n + 1);
    size_t i, k = 0;
    for (i = 0; i < n; i++) {
        int hi, lo;
        if (s[i] != '%') {
            d[k++] = s[i];
            continue;
        }
        hi = i + 2 < n ? hexval(s[i + 1]) : -1;
        lo = i + 2 < n ? hexval(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) {
            free(d);
            tb_seterr(err, "broker URI: bad percent-escape in the %s (%%XX, two hex digits)", what);
            return -1;
        }
        if (hi == 0 && lo == 0) {
            free(d);
            tb_seterr(err, "broker URI: %%00 (a NUL byte) in the %s", what);
            return -1;
        }
        d[k++] = (char)(hi * 16 + lo);
        i += 2;
    }
    d[k] = '\0';
    *out = d;
    return 0;
}

/* USER:PASS (s[0..n), before the last '@') into out->user/pass. */
static int parse_userinfo(const char *s, size_t n, tb_broker_uri *out, char *err) {
    const char *colon = memchr(s, ':', n);
    size_t i;
    for (i = 0; i < n; i++)
        if (s[i] == '/' || s[i] == '?' || s[i] == '#') {
            tb_seterr(err, "broker URI: a '/', '?' or '#' in the user or password must be percent-encoded "
                           "(%%2F, %%3F, %%23)");
            return -1;
        }
    if (!colon) {
        tb_seterr(err, "broker URI: the part before '@' has no ':' (write redis://:PASS@HOST or "
                       "redis://USER:PASS@HOST)");
        return -1;
    }
    if (colon + 1 == s + n) {
        tb_seterr(err, "broker URI: empty password after ':' (leave out USER:PASS@ for no AUTH)");
        return -1;
    }
    if (colon > s && decode(s, (size_t)(colon - s), "user", &out->user, err) != 0) return -1;
    return decode(colon + 1, (size_t)(s + n - colon - 1), "password", &out->pass, err);
}

/* Digits only, at most 10 of them, value <= max: 0 and *v, or -1. */
static int parse_num(const char *s, size_t n, long max, int *v) {
    long x = 0;
    size_t i;
    if (n == 0 || n > 10) return -1;
    for (i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i])) return -1;
        x = x * 10 + (s[i] - '0');
    }
    if (x > max) return -1;
    *v = (int)x;
    return 0;
}

/* The host and what follows it in h; returns where the host ends (at ':',
 * '/' or the end) or NULL with err. */
static const char *parse_host(const char *h, tb_broker_uri *out, char *err) {
    const char *end;
    size_t i, n;
    if (*h == '[') {
        char buf[64];
        unsigned char addr[16];
        end = strchr(h, ']');
        if (!end) {
            tb_seterr(err, "broker URI: '[' without ']' in the host");
            return NULL;
        }
        n = (size_t)(end - h - 1);
        if (n == 0 || n >= sizeof buf) {
            tb_seterr(err, "broker URI: '%.*s' is not an IPv6 address", (int)(n < 60 ? n : 60), h + 1);
            return NULL;
        }
        memcpy(buf, h + 1, n);
        buf[n] = '\0';
        if (inet_pton(AF_INET6, buf, addr) != 1) {
            tb_seterr(err, "broker URI: '%s' is not an IPv6 address", buf);
            return NULL;
        }
        if (end[1] && end[1] != ':' && end[1] != '/') {
            tb_seterr(err, "broker URI: '%.40s' after the IPv6 address (expected :PORT or /DB)", end + 1);
            return NULL;
        }
        out->host = xstrdup(buf);
        return end + 1;
    }
    n = strcspn(h, ":/");
    if (n == 0) {
        tb_seterr(err, "broker URI: no host (expected %s; an IPv6 address goes in brackets: [::1])", URI_FORM);
        return NULL;
    }
    for (i = 0; i < n; i++)
        if (!isalnum((unsigned char)h[i]) && h[i] != '-' && h[i] != '.' && h[i] != '_') {
            tb_seterr(err, "broker URI: host '%.*s' holds a character other than a letter, digit, '-', '.' or '_'",
                      (int)(n < 64 ? n : 64), h);
            return NULL;
        }
    out->host = xmalloc(n + 1);
    memcpy(out->host, h, n);
    out->host[n] = '\0';
    return h + n;
}

/* HOST[:PORT][/DB] (after the '@', so it may be quoted) into out. */
static int parse_hostonly(const char *h, tb_broker_uri *out, char *err);

/* rediss://'s query: ca=FILE (percent-decoded), the one key there is. */
static int parse_query(const char *q, tb_broker_uri *out, char *err) {
    if (!out->tls) {
        tb_seterr(err, "broker URI: a query ('?') is only for rediss:// (?ca=FILE)");
        return -1;
    }
    if (strncmp(q, "ca=", 3) != 0 || !q[3] || strpbrk(q + 3, "&#")) {
        tb_seterr(err, "broker URI: the query must be ?ca=FILE, the broker's CA certificates (PEM)");
        return -1;
    }
    if (decode(q + 3, strlen(q + 3), "ca", &out->ca, err) != 0) return -1;
    for (const char *c = out->ca; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) {
            /* it goes into stunnel's configuration, one option a line */
            tb_seterr(err, "broker URI: the ca file name holds a control character");
            return -1;
        }
    return 0;
}

static int parse_hostpart(const char *hq, tb_broker_uri *out, char *err) {
    const char *q = strchr(hq, '?');
    char *h;
    int rc;
    if (strchr(hq, '#')) {
        tb_seterr(err, "broker URI: a fragment ('#') is not supported (expected %s)", URI_FORM);
        return -1;
    }
    if (q && parse_query(q + 1, out, err) != 0) return -1;
    if (q) {
        h = xmalloc((size_t)(q - hq) + 1);
        memcpy(h, hq, (size_t)(q - hq));
        h[q - hq] = '\0';
    } else {
        h = xstrdup(hq);
    }
    rc = parse_hostonly(h, out, err);
    free(h);
    return rc;
}

static int parse_hostonly(const char *h, tb_broker_uri *out, char *err) {
    const char *p;
    if (!(p = parse_host(h, out, err))) return -1;
    out->port = 6379;
    if (*p == ':') {
        size_t n = strcspn(p + 1, "/");
        if (parse_num(p + 1, n, 65535, &out->port) != 0 || out->port == 0) {
            tb_seterr(err, "broker URI: port '%.*s' is not 1..65535", (int)(n < 40 ? n : 40), p + 1);
            return -1;
        }
        p += 1 + n;
    }
    if (*p == '/' && p[1]) {
        size_t n = strlen(p + 1);
        if (parse_num(p + 1, n, INT_MAX, &out->db) != 0) {
            tb_seterr(err, "broker URI: db '%.*s' is not a number 0..%d", (int)(n < 40 ? n : 40), p + 1, INT_MAX);
            return -1;
        }
    }
    return 0;
}

/* The length of uri's scheme before "://" when it looks like one (letters,
 * digits, '+', '.', '-'; up to 16), so it may be quoted; else 0. */
static size_t scheme_len(const char *uri) {
    size_t n = 0;
    while (n < 16 && (isalnum((unsigned char)uri[n]) || uri[n] == '+' || uri[n] == '.' || uri[n] == '-'))
        n++;
    return n > 0 && strncmp(uri + n, "://", 3) == 0 ? n : 0;
}

int tb_broker_uri_parse(const char *uri, tb_broker_uri *out, char *err) {
    const char *rest, *at;
    memset(out, 0, sizeof *out);
    if (!uri || !*uri) {
        tb_seterr(err, "broker URI: empty (expected %s)", URI_FORM);
        return -1;
    }
    out->tls = strncasecmp(uri, "rediss://", 9) == 0;
    if (!out->tls && strncasecmp(uri, "redis://", 8) != 0) {
        size_t n = scheme_len(uri);
        if (n)
            tb_seterr(err, "broker URI: scheme '%.*s' is not redis:// (expected %s)", (int)n, uri, URI_FORM);
        else
            tb_seterr(err, "broker URI: does not start with redis:// (expected %s)", URI_FORM);
        return -1;
    }
    rest = uri + (out->tls ? 9 : 8);
    /* the last '@' before the query (a CA file's name may hold one) */
    at = memrchr(rest, '@', strcspn(rest, "?"));
    if (at && parse_userinfo(rest, (size_t)(at - rest), out, err) != 0) goto fail;
    if (parse_hostpart(at ? at + 1 : rest, out, err) != 0) goto fail;
    return 0;
fail:
    tb_broker_uri_free(out);
    return -1;
}

void tb_broker_uri_free(tb_broker_uri *u) {
    if (!u) return;
    free(u->host);
    free(u->user);
    free(u->ca);
    if (u->pass) {
        memset(u->pass, 0, strlen(u->pass));
        free(u->pass);
    }
    memset(u, 0, sizeof *u);
}

void tb_broker_uri_shown(const char *uri, char *buf, size_t len) { tb_redact_uri(uri, buf, len); }
