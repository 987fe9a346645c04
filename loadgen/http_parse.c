/*
 * http_parse.c: incremental HTTP/1.1 response parser (RFC 9112 message
 * framing), no I/O. See http_parse.h for the contract.
 *
 * Lines (status, headers, chunk sizes, trailers) are found with memchr and
 * handled in place when they lie whole in the bytes given; only a line split
 * across reads is copied into p->line. Body bytes are counted and, when the
 * caller asked for them, kept.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "loadgen/http_parse.h"

enum { S_STATUS = 0, S_HEADER, S_BODY_LEN, S_BODY_CLOSE, S_CHUNK_SIZE, S_CHUNK_DATA, S_CHUNK_CRLF, S_TRAILER, S_DONE };

/* Longest chunk-size line (hex size plus extensions) accepted. */
#define MAX_CHUNK_LINE 4096

void tb_http_parser_init(tb_http_parser *p, size_t keep_body) {
    memset(p, 0, sizeof *p);
    p->keep_body = keep_body;
    p->content_length = -1;
}

void tb_http_parser_reset(tb_http_parser *p) {
    p->done = p->headers_done = 0;
    p->status = p->minor = 0;
    p->keep_alive = p->chunked = 0;
    p->content_length = -1;
    p->body_bytes = 0;
    p->n_cookies = 0;
    p->body_len = 0;
    if (p->body) p->body[0] = '\0';
    p->body_truncated = 0;
    p->state = S_STATUS;
    p->header_bytes = 0;
    p->line_len = 0;
    p->remaining = 0;
    p->conn_close = p->conn_keep = p->te_other = 0;
}

void tb_http_parser_free(tb_http_parser *p) {
    free(p->line);
    free(p->body);
    p->line = p->body = NULL;
    p->line_cap = p->body_cap = 0;
}

int tb_http_parser_idle(const tb_http_parser *p) { return p->state == S_STATUS && p->header_bytes == 0; }

/* Quotes at most 40 bytes of s for an error message, non-printables as '?'. */
static void snippet(const char *s, size_t n, char *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap && i < 40; i++)
        out[k++] = (s[i] >= 32 && s[i] < 127) ? s[i] : '?';
    out[k] = '\0';
}

static void keep(tb_http_parser *p, const char *b, size_t n) {
    size_t room;
    p->body_bytes += n;
    if (!p->keep_body) return;
    room = p->keep_body - p->body_len;
    if (n > room) {
        n = room;
        p->body_truncated = 1;
    }
    if (!n) return;
    if (p->body_len + n + 1 > p->body_cap) {
        size_t cap = p->body_cap ? p->body_cap : 4096;
        while (cap < p->body_len + n + 1)
            cap *= 2;
        p->body = xrealloc(p->body, cap);
        p->body_cap = cap;
    }
    memcpy(p->body + p->body_len, b, n);
    p->body_len += n;
    p->body[p->body_len] = '\0';
}

/* s[0..n) with leading and trailing spaces and tabs removed. */
static void trim(const char **s, size_t *n) {
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* 1 when the comma-separated list v[0..n) holds token tok (any case). */
static int has_token(const char *v, size_t n, const char *tok, int last_only) {
    size_t tl = strlen(tok);
    int found = 0;
    while (n) {
        const char *c = memchr(v, ',', n);
        size_t len = c ? (size_t)(c - v) : n;
        const char *t = v;
        size_t tn = len;
        trim(&t, &tn);
        found = tn == tl && strncasecmp(t, tok, tl) == 0;
        if (found && !last_only) return 1;
        if (!c) break;
        v = c + 1;
        n -= len + 1;
    }
    return found;
}

static int status_line(tb_http_parser *p, const char *l, size_t n, char *err) {
    char q[48];
    if (n >= 12 && memcmp(l, "HTTP/1.", 7) == 0 && isdigit((unsigned char)l[7]) && l[8] == ' ' &&
        isdigit((unsigned char)l[9]) && isdigit((unsigned char)l[10]) && isdigit((unsigned char)l[11]) &&
        (n == 12 || l[12] == ' ')) {
        p->minor = l[7] - '0';
        p->status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
        if (p->status >= 100) return 0;
    }
    snippet(l, n, q, sizeof q);
    tb_seterr(err, "http: bad status line '%s'", q);
    return -1;
}

/* Nonzero when one of the 8 bytes in x is below 33 or above 126 (the
 * classic word-at-a-time "has less than" / "has more than" tests, exact for
 * whether such a byte exists). */
static uint64_t swar_invisible(uint64_t x) {
    const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
    return (((x - 33 * ones) & ~x) | ((x + ones) | x)) & highs;
}

/* 1 when every byte of s[0..n) is visible ASCII (33..126), 8 bytes at a time. */
static int visible(const char *s, size_t n) {
    uint64_t x, bad = 0;
    size_t i;
    if (n < 8) {
        for (i = 0; i < n; i++)
            if ((unsigned char)(s[i] - 33) > 93) return 0;
        return 1;
    }
    for (i = 0; i + 8 < n; i += 8) {
        memcpy(&x, s + i, 8);
        bad |= swar_invisible(x);
    }
    memcpy(&x, s + n - 8, 8); /* the last 8 bytes, overlapping the loop's */
    return (bad | swar_invisible(x)) == 0;
}

/* 1 when the header name l[0..n) is name (any case); n == strlen(name) is checked first. */
static int name_is(const char *l, size_t n, const char *name, size_t name_len) {
    return n == name_len && strncasecmp(l, name, n) == 0;
}

static int header_line(tb_http_parser *p, const char *l, size_t n, char *err) {
    const char *colon = memchr(l, ':', n), *v;
    size_t nl, vn;
    char q[48];
    if (l[0] == ' ' || l[0] == '\t') return 0; /* obs-fold continuation: only the headers below matter */
    if (!colon || colon == l) goto bad;
    nl = (size_t)(colon - l);
    if (!visible(l, nl)) goto bad; /* no space before the colon (RFC 9112 5.1) */
    v = colon + 1;
    vn = n - nl - 1;
    /* only four headers matter; their names differ in length or first letter,
     * so most lines are passed over without a string compare */
#define IS(name) name_is(l, nl, name, sizeof(name) - 1)
    switch (nl) {
    case 14:
        if (IS("Content-Length")) {
            uint64_t x = 0;
            trim(&v, &vn);
            if (!vn) goto bad;
            for (size_t i = 0; i < vn; i++) {
                if (v[i] < '0' || v[i] > '9' || x > (UINT64_C(1) << 62) / 10) goto bad;
                x = x * 10 + (uint64_t)(v[i] - '0');
            }
            if (p->content_length >= 0 && (uint64_t)p->content_length != x) {
                tb_seterr(err, "http: two different Content-Length headers");
                return -1;
            }
            p->content_length = (int64_t)x;
        }
        break;
    case 17:
        if (IS("Transfer-Encoding")) {
            trim(&v, &vn);
            p->chunked = has_token(v, vn, "chunked", 1);
            p->te_other = !p->chunked; /* another coding: the body ends at close (RFC 9112 6.3) */
        }
        break;
    case 10:
        if (IS("Connection")) {
            trim(&v, &vn);
            if (has_token(v, vn, "close", 0)) p->conn_close = 1;
            if (has_token(v, vn, "keep-alive", 0)) p->conn_keep = 1;
        } else if (IS("Set-Cookie")) {
            const char *semi;
            size_t cn;
            trim(&v, &vn);
            semi = memchr(v, ';', vn);
            cn = semi ? (size_t)(semi - v) : vn;
            trim(&v, &cn);
            if (cn && memchr(v, '=', cn) && cn < TB_HTTP_COOKIE_LEN && p->n_cookies < TB_HTTP_MAX_COOKIES) {
                memcpy(p->cookies[p->n_cookies], v, cn);
                p->cookies[p->n_cookies++][cn] = '\0';
            }
        }
        break;
    default: break;
    }
#undef IS
    return 0;
bad:
    snippet(l, n, q, sizeof q);
    tb_seterr(err, "http: bad header line '%s'", q);
    return -1;
}

/* The empty line after the headers: decide how the body is framed. */
static int end_of_headers(tb_http_parser *p, char *err) {
    int te_other = p->te_other;
    if (p->status < 200) {
        if (p->status == 101) {
            tb_seterr(err, "http: unexpected 101 Switching Protocols");
            return -1;
        }
        /* an interim response (100 Continue, 103 Early Hints): the real one follows */
        tb_http_parser_reset(p);
        return 0;
    }
    p->headers_done = 1;
    p->keep_alive = p->minor >= 1 ? !p->conn_close : (p->conn_keep && !p->conn_close);
    if (p->no_body || p->status == 204 || p->status == 304) {
        p->state = S_DONE;
    } else if (p->chunked) {
        p->content_length = -1;
        p->state = S_CHUNK_SIZE;
    } else if (p->content_length >= 0 && !te_other) {
        p->remaining = (uint64_t)p->content_length;
        p->state = p->remaining ? S_BODY_LEN : S_DONE;
    } else {
        p->keep_alive = 0; /* the body ends when the server closes */
        p->state = S_BODY_CLOSE;
    }
    return 0;
}

static int chunk_size_line(tb_http_parser *p, const char *l, size_t n, char *err) {
    uint64_t x = 0;
    size_t i = 0;
    char q[48];
    for (; i < n && isxdigit((unsigned char)l[i]); i++) {
        int d = isdigit((unsigned char)l[i]) ? l[i] - '0' : (tolower((unsigned char)l[i]) - 'a' + 10);
        if (i >= 15) goto bad;
        x = x * 16 + (uint64_t)d;
    }
    if (i == 0 || (i < n && l[i] != ';' && l[i] != ' ' && l[i] != '\t')) goto bad;
    if (x == 0) {
        p->state = S_TRAILER;
        p->header_bytes = 0; /* the trailer section gets its own size limit */
    } else {
        p->remaining = x;
        p->state = S_CHUNK_DATA;
    }
    return 0;
bad:
    snippet(l, n, q, sizeof q);
    tb_seterr(err, "http: bad chunk size '%s'", q);
    return -1;
}

/* One complete line (without its LF; a trailing CR is dropped here). */
static int on_line(tb_http_parser *p, const char *l, size_t n, char *err) {
    if (n && l[n - 1] == '\r') n--;
    switch (p->state) {
    case S_STATUS:
        if (n == 0) return 0; /* stray CRLF between responses: ignored (RFC 9112 2.2) */
        if (status_line(p, l, n, err) != 0) return -1;
        p->state = S_HEADER;
        return 0;
    case S_HEADER: return n == 0 ? end_of_headers(p, err) : header_line(p, l, n, err);
    case S_CHUNK_SIZE: return chunk_size_line(p, l, n, err);
    case S_CHUNK_CRLF:
        if (n != 0) {
            tb_seterr(err, "http: chunk data longer than its size");
            return -1;
        }
        p->state = S_CHUNK_SIZE;
        return 0;
    case S_TRAILER:
        if (n == 0) p->state = S_DONE; /* trailer fields are read and ignored */
        return 0;
    default: return 0;
    }
}

static int in_line_state(int s) {
    return s == S_STATUS || s == S_HEADER || s == S_CHUNK_SIZE || s == S_CHUNK_CRLF || s == S_TRAILER;
}

ssize_t tb_http_parse(tb_http_parser *p, const char *buf, size_t len, char *err) {
    size_t off = 0;
    if (p->state == S_DONE) {
        p->done = 1;
        return 0;
    }
    while (off < len && p->state != S_DONE) {
        if (in_line_state(p->state)) {
            const char *nl = memchr(buf + off, '\n', len - off);
            size_t seg = nl ? (size_t)(nl - (buf + off)) : len - off;
            size_t limit = p->state == S_CHUNK_SIZE || p->state == S_CHUNK_CRLF ? MAX_CHUNK_LINE : TB_HTTP_MAX_HEADER;
            if (p->state == S_CHUNK_SIZE || p->state == S_CHUNK_CRLF) {
                if (p->line_len + seg + 1 > limit) {
                    tb_seterr(err, "http: chunk size line over %u bytes", (unsigned)MAX_CHUNK_LINE);
                    return -1;
                }
            } else {
                p->header_bytes += seg + (nl ? 1 : 0);
                if (p->header_bytes > limit) {
                    tb_seterr(err, "http: %s over %u bytes", p->state == S_TRAILER ? "trailer section" : "header block",
                              (unsigned)TB_HTTP_MAX_HEADER);
                    return -1;
                }
            }
            if (nl && p->line_len == 0) { /* the whole line is here: no copy */
                if (on_line(p, buf + off, seg, err) != 0) return -1;
            } else {
                if (p->line_len + seg > p->line_cap) {
                    size_t cap = p->line_cap ? p->line_cap : 256;
                    while (cap < p->line_len + seg)
                        cap *= 2;
                    p->line = xrealloc(p->line, cap);
                    p->line_cap = cap;
                }
                memcpy(p->line + p->line_len, buf + off, seg);
                p->line_len += seg;
                if (nl) {
                    size_t n = p->line_len;
                    p->line_len = 0;
                    if (on_line(p, p->line, n, err) != 0) return -1;
                }
            }
            off += seg + (nl ? 1 : 0);
        } else if (p->state == S_BODY_CLOSE) {
            keep(p, buf + off, len - off);
            off = len;
        } else { /* S_BODY_LEN, S_CHUNK_DATA */
            size_t n = len - off;
            if ((uint64_t)n > p->remaining) n = (size_t)p->remaining;
            keep(p, buf + off, n);
            off += n;
            p->remaining -= n;
            if (p->remaining == 0) p->state = p->state == S_BODY_LEN ? S_DONE : S_CHUNK_CRLF;
        }
    }
    if (p->state == S_DONE) p->done = 1;
    return (ssize_t)off;
}

int tb_http_parse_eof(tb_http_parser *p, char *err) {
    if (p->state == S_DONE) return 0;
    if (tb_http_parser_idle(p)) return 1;
    if (p->state == S_BODY_CLOSE) {
        p->state = S_DONE;
        p->done = 1;
        return 0;
    }
    if (p->state == S_STATUS || p->state == S_HEADER)
        tb_seterr(err, "http: connection closed inside the header block");
    else
        tb_seterr(err, "http: connection closed after %llu body bytes of the response",
                  (unsigned long long)p->body_bytes);
    return -1;
}
