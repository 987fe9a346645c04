/*
 * imap_parse.c: IMAP4rev1 response framing and reading (see imap_parse.h).
 * Grammar from RFC 3501 section 9 (response, literal, msg-att, mailbox-data)
 * and RFC 4315 (APPENDUID). Everything works on caller buffers, no I/O.
 */
#include "loadgen/imap_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* How many bytes of p[0..end) an error message quotes: at most 20, and never
 * past end (a response is not NUL-terminated; found by fuzz_imap). */
static int shown(const char *p, const char *end) { return p >= end ? 0 : end - p < 20 ? (int)(end - p) : 20; }

void tb_imap_scan_reset(tb_imap_scan *s) { memset(s, 0, sizeof *s); }

/*
 * If the line buf[start..end) ends with "{n}" (or "{n+}", "~{n}"), stores n
 * and returns 1; 0 when it does not end with a literal marker; -1 when n is
 * not a plain decimal or is too large.
 */
static int literal_marker(const char *buf, size_t start, size_t end, uint64_t *n) {
    size_t j, k;
    if (end <= start || buf[end - 1] != '}') return 0;
    j = end - 1; /* at '}' */
    if (j > start && buf[j - 1] == '+') j--;
    k = j;
    while (k > start && is_digit(buf[k - 1]))
        k--;
    if (k == j || k == start || buf[k - 1] != '{') return 0;
    if (j - k > 10) return -1;
    *n = 0;
    for (size_t i = k; i < j; i++)
        *n = *n * 10 + (uint64_t)(buf[i] - '0');
    return *n > TB_IMAP_MAX_LITERAL ? -1 : 1;
}

ssize_t tb_imap_scan_next(tb_imap_scan *s, const char *buf, size_t len, char *err) {
    for (;;) {
        const char *lf;
        size_t eol, end;
        uint64_t n = 0;
        int m;
        if (s->in_lit) {
            if (len < s->lit_end) return 0;
            s->in_lit = 0;
            s->pos = s->line_start = s->lit_end;
        }
        lf = s->pos < len ? memchr(buf + s->pos, '\n', len - s->pos) : NULL;
        if (!lf) {
            if (len - s->line_start > TB_IMAP_MAX_LINE) {
                tb_seterr(err, "imap response: line longer than %d bytes", TB_IMAP_MAX_LINE);
                return -1;
            }
            s->pos = len;
            return 0;
        }
        eol = (size_t)(lf - buf);
        if (eol + 1 - s->line_start > TB_IMAP_MAX_LINE) {
            tb_seterr(err, "imap response: line longer than %d bytes", TB_IMAP_MAX_LINE);
            return -1;
        }
        end = eol;
        if (end > s->line_start && buf[end - 1] == '\r') end--;
        m = literal_marker(buf, s->line_start, end, &n);
        if (m < 0) {
            tb_seterr(err, "imap response: literal size not a number up to %u", TB_IMAP_MAX_LITERAL);
            return -1;
        }
        if (m == 0) return (ssize_t)(eol + 1);
        s->in_lit = 1;
        s->lit_end = eol + 1 + (size_t)n;
        s->line_start = s->lit_end;
    }
}

/* Copies the atom at *p (up to SP, CR, LF or '[') upper-cased into out. */
static size_t take_word(const char **p, const char *end, char *out, size_t cap) {
    size_t n = 0;
    while (*p < end && **p != ' ' && **p != '\r' && **p != '\n' && **p != '[' && **p != '(') {
        if (n + 1 < cap) out[n++] = (char)toupper((unsigned char)**p);
        (*p)++;
    }
    out[n < cap ? n : cap - 1] = '\0';
    return n;
}

static int status_of(const char *w) {
    if (strcmp(w, "OK") == 0) return TB_IMAP_OK;
    if (strcmp(w, "NO") == 0) return TB_IMAP_NO;
    if (strcmp(w, "BAD") == 0) return TB_IMAP_BAD;
    if (strcmp(w, "BYE") == 0) return TB_IMAP_BYE;
    if (strcmp(w, "PREAUTH") == 0) return TB_IMAP_PREAUTH;
    return TB_IMAP_NONE;
}

int tb_imap_resp_parse(const char *buf, size_t len, tb_imap_resp *out, char *err) {
    const char *p = buf, *end = buf + len;
    memset(out, 0, sizeof *out);
    /* the final line end is not part of any field */
    if (end > p && end[-1] == '\n') end--;
    if (end > p && end[-1] == '\r') end--;
    if (p == end) {
        tb_seterr(err, "imap response: empty line");
        return -1;
    }
    if (*p == '+') {
        out->kind = TB_IMAP_CONTINUE;
        p++;
        if (p < end && *p == ' ') p++;
        out->rest = p;
        out->rest_len = (size_t)(end - p);
        return 0;
    }
    if (*p == '*') {
        out->kind = TB_IMAP_UNTAGGED;
        p++;
        if (p >= end || *p != ' ') {
            tb_seterr(err, "imap response: '*' not followed by a space");
            return -1;
        }
        p++;
        if (p < end && is_digit(*p)) {
            uint64_t v = 0;
            while (p < end && is_digit(*p)) {
                v = v * 10 + (uint64_t)(*p - '0');
                if (v > UINT32_MAX) {
                    tb_seterr(err, "imap response: number too large");
                    return -1;
                }
                p++;
            }
            if (p >= end || *p != ' ') {
                tb_seterr(err, "imap response: number not followed by a word");
                return -1;
            }
            p++;
            out->has_num = 1;
            out->num = (uint32_t)v;
        }
        if (take_word(&p, end, out->word, sizeof out->word) == 0) {
            tb_seterr(err, "imap response: untagged response without a word");
            return -1;
        }
        out->status = out->has_num ? TB_IMAP_NONE : status_of(out->word);
    } else {
        size_t n = 0;
        out->kind = TB_IMAP_TAGGED;
        while (p < end && *p != ' ') {
            unsigned char c = (unsigned char)*p;
            if (c <= ' ' || c >= 0x7f || c == '(' || c == ')' || c == '{' || c == '%' || c == '"' || c == '\\' ||
                n + 1 >= sizeof out->tag) {
                tb_seterr(err, "imap response: bad tag in '%.*s'", shown(buf, end), buf);
                return -1;
            }
            out->tag[n++] = (char)c;
            p++;
        }
        out->tag[n] = '\0';
        if (p >= end || n == 0) {
            tb_seterr(err, "imap response: '%.*s' is not '* ...', '+ ...' or 'TAG STATUS ...'", shown(buf, end), buf);
            return -1;
        }
        p++;
        take_word(&p, end, out->word, sizeof out->word);
        out->status = status_of(out->word);
        if (out->status != TB_IMAP_OK && out->status != TB_IMAP_NO && out->status != TB_IMAP_BAD) {
            tb_seterr(err, "imap response: tagged response with status '%.16s'", out->word);
            return -1;
        }
    }
    if (p < end && *p == ' ') p++;
    out->rest = p;
    out->rest_len = (size_t)(end - p);
    return 0;
}

/* ---- msg-att reading ----------------------------------------------------- */

typedef struct cursor {
    const char *p, *end;
    char *err;
} cursor;

static int cfail(cursor *c, const char *what) {
    tb_seterr(c->err, "imap FETCH: %s at '%.*s'", what, shown(c->p, c->end), c->p < c->end ? c->p : "");
    return -1;
}

static void skip_sp(cursor *c) {
    while (c->p < c->end && *c->p == ' ')
        c->p++;
}

static int read_number(cursor *c, uint32_t *out) {
    uint64_t v = 0;
    const char *start = c->p;
    while (c->p < c->end && is_digit(*c->p)) {
        v = v * 10 + (uint64_t)(*c->p - '0');
        if (v > UINT32_MAX) return cfail(c, "number too large");
        c->p++;
    }
    if (c->p == start) return cfail(c, "expected a number");
    *out = (uint32_t)v;
    return 0;
}

/*
 * Reads one value: NIL (*s = NULL), an atom or number, a quoted string
 * (raw, escapes kept), a literal, or a parenthesized list (skipped whole;
 * the span covers it). 0 or -1.
 */
static int read_value(cursor *c, const char **s, size_t *n, int depth) {
    if (c->p >= c->end) return cfail(c, "value expected");
    if (depth > 32) return cfail(c, "lists nested too deep");
    if (*c->p == '"') {
        const char *start = ++c->p;
        while (c->p < c->end && *c->p != '"') {
            if (*c->p == '\\' && c->p + 1 < c->end) c->p++;
            c->p++;
        }
        if (c->p >= c->end) return cfail(c, "unterminated quoted string");
        *s = start;
        *n = (size_t)(c->p - start);
        c->p++;
        return 0;
    }
    if (*c->p == '{' || (*c->p == '~' && c->p + 1 < c->end && c->p[1] == '{')) {
        uint32_t len;
        if (*c->p == '~') c->p++;
        c->p++;
        if (read_number(c, &len) != 0) return -1;
        if (c->p < c->end && *c->p == '+') c->p++;
        if (c->p >= c->end || *c->p != '}') return cfail(c, "bad literal");
        c->p++;
        if (c->p < c->end && *c->p == '\r') c->p++;
        if (c->p >= c->end || *c->p != '\n') return cfail(c, "literal size not followed by CRLF");
        c->p++;
        if ((size_t)(c->end - c->p) < len) return cfail(c, "literal longer than the response");
        *s = c->p;
        *n = len;
        c->p += len;
        return 0;
    }
    if (*c->p == '(') {
        const char *start = c->p++;
        for (;;) {
            const char *es;
            size_t en;
            skip_sp(c);
            if (c->p >= c->end) return cfail(c, "unterminated list");
            if (*c->p == ')') break;
            if (read_value(c, &es, &en, depth + 1) != 0) return -1;
        }
        c->p++;
        *s = start;
        *n = (size_t)(c->p - start);
        return 0;
    }
    {
        const char *start = c->p;
        /* atom, number, NIL, or a flag such as \Seen; brackets belong to the atom (BODY[...]) */
        while (c->p < c->end && *c->p != ' ' && *c->p != ')' && *c->p != '(') {
            if (*c->p == '[') {
                const char *rb = memchr(c->p, ']', (size_t)(c->end - c->p));
                if (!rb) return cfail(c, "unterminated [");
                c->p = rb;
            }
            c->p++;
        }
        if (c->p == start) return cfail(c, "value expected");
        if (c->p - start == 3 && strncasecmp(start, "NIL", 3) == 0)
            *s = NULL;
        else
            *s = start;
        *n = (size_t)(c->p - start);
        return 0;
    }
}

/* Does the flag list text (s, n) hold flag (case-insensitive, whole word)? */
static int has_flag(const char *s, size_t n, const char *flag) {
    size_t k = strlen(flag);
    for (size_t i = 0; i + k <= n; i++) {
        if (strncasecmp(s + i, flag, k) != 0) continue;
        if ((i == 0 || s[i - 1] == '(' || s[i - 1] == ' ') && (i + k == n || s[i + k] == ')' || s[i + k] == ' '))
            return 1;
    }
    return 0;
}

int tb_imap_fetch_parse(const tb_imap_resp *r, tb_imap_fetch *out, char *err) {
    cursor c = {r->rest, r->rest + r->rest_len, err};
    memset(out, 0, sizeof *out);
    out->seq = r->num;
    if (!r->has_num || strcmp(r->word, "FETCH") != 0) {
        tb_seterr(err, "imap FETCH: not a '* N FETCH' response");
        return -1;
    }
    skip_sp(&c);
    if (c.p >= c.end || *c.p != '(') return cfail(&c, "expected '('");
    c.p++;
    for (;;) {
        char name[64];
        size_t nn = 0;
        const char *sec = NULL, *v;
        size_t sec_len = 0, vn;
        skip_sp(&c);
        if (c.p >= c.end) return cfail(&c, "unterminated attribute list");
        if (*c.p == ')') break;
        while (c.p < c.end && *c.p != ' ' && *c.p != '[' && *c.p != ')' && *c.p != '(') {
            if (nn + 1 < sizeof name) name[nn++] = (char)toupper((unsigned char)*c.p);
            c.p++;
        }
        name[nn] = '\0';
        if (nn == 0) return cfail(&c, "attribute name expected");
        if (c.p < c.end && *c.p == '[') {
            const char *rb = memchr(c.p, ']', (size_t)(c.end - c.p));
            if (!rb) return cfail(&c, "unterminated section");
            sec = c.p + 1;
            sec_len = (size_t)(rb - sec);
            c.p = rb + 1;
            if (c.p < c.end && *c.p == '<') {
                const char *gt = memchr(c.p, '>', (size_t)(c.end - c.p));
                if (!gt) return cfail(&c, "unterminated <origin>");
                c.p = gt + 1;
            }
        }
        if (c.p >= c.end || *c.p != ' ') return cfail(&c, "space expected after attribute name");
        c.p++;
        if (strcmp(name, "UID") == 0) {
            if (read_number(&c, &out->uid) != 0) return -1;
            out->has_uid = 1;
        } else if (strcmp(name, "RFC822.SIZE") == 0) {
            if (read_number(&c, &out->size) != 0) return -1;
            out->has_size = 1;
        } else {
            if (read_value(&c, &v, &vn, 0) != 0) return -1;
            if (strcmp(name, "FLAGS") == 0) {
                if (!v || *v != '(') return cfail(&c, "FLAGS is not a list");
                out->has_flags = 1;
                out->seen = has_flag(v, vn, "\\Seen");
                out->deleted = has_flag(v, vn, "\\Deleted");
            } else if (!out->body && (sec || strncmp(name, "RFC822", 6) == 0) &&
                       (strcmp(name, "BODY") == 0 || strcmp(name, "BINARY") == 0 || strncmp(name, "RFC822", 6) == 0)) {
                if (v && (*v == '(')) return cfail(&c, "body section is a list");
                out->body = v;
                out->body_len = v ? vn : 0;
                if (sec) {
                    size_t k = sec_len < sizeof out->section - 1 ? sec_len : sizeof out->section - 1;
                    memcpy(out->section, sec, k);
                    out->section[k] = '\0';
                } else {
                    snprintf(out->section, sizeof out->section, "%s", name);
                }
            }
        }
    }
    return 0;
}

int tb_imap_search_parse(const tb_imap_resp *r, uint32_t *out, size_t cap, size_t *n, char *err) {
    cursor c = {r->rest, r->rest + r->rest_len, err};
    *n = 0;
    for (;;) {
        uint32_t v;
        skip_sp(&c);
        if (c.p >= c.end) return 0;
        if (*c.p == '(') return 0; /* "(MODSEQ n)" of CONDSTORE ends the list */
        if (read_number(&c, &v) != 0) {
            tb_seterr(err, "imap SEARCH: '%.*s' is not a number", shown(c.p, c.end), c.p);
            return -1;
        }
        if (*n < cap) out[*n] = v;
        (*n)++;
    }
}

int tb_imap_appenduid(const tb_imap_resp *r, uint32_t *uid) {
    static const char key[] = "[APPENDUID ";
    const char *p = r->rest, *end = r->rest + r->rest_len;
    uint64_t v = 0;
    if (r->rest_len < sizeof key - 1 || strncasecmp(p, key, sizeof key - 1) != 0) return 0;
    p += sizeof key - 1;
    while (p < end && is_digit(*p))
        p++; /* uidvalidity */
    if (p >= end || *p != ' ') return 0;
    p++;
    if (p >= end || !is_digit(*p)) return 0;
    while (p < end && is_digit(*p)) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX) return 0;
        p++;
    }
    if (p >= end || *p != ']') return 0; /* a set "1:3" (MULTIAPPEND) is not for us */
    *uid = (uint32_t)v;
    return 1;
}

int tb_imap_quote(const char *s, char *out, size_t len) {
    size_t o = 0;
    if (len < 3) return -1;
    out[o++] = '"';
    for (; *s; s++) {
        if (*s == '\r' || *s == '\n') return -1;
        if (*s == '"' || *s == '\\') {
            if (o + 1 >= len) return -1;
            out[o++] = '\\';
        }
        if (o + 1 >= len) return -1;
        out[o++] = *s;
    }
    if (o + 2 > len) return -1;
    out[o++] = '"';
    out[o] = '\0';
    return 0;
}
