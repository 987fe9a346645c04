/*
 * smtp_parse.c: SMTP/LMTP reply parsing and DATA dot-stuffing, pure functions
 * over caller buffers (see smtp_parse.h). Reply grammar from RFC 5321 4.2:
 * Reply-line = *( Reply-code "-" [ textstring ] CRLF )
 *              Reply-code [ SP textstring ] CRLF
 */
#include "loadgen/smtp_parse.h"

#include <string.h>
#include <strings.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* How many of n bytes an error message quotes: at most 20 (a reply is not
 * NUL-terminated, so never past its end; found by fuzz_smtp). */
static int shown(size_t n) { return n < 20 ? (int)n : 20; }

/* Keyword at the start of an EHLO line's text (case-insensitive, whole word). */
static int keyword_is(const char *text, size_t n, const char *kw) {
    size_t k = strlen(kw);
    if (n < k || strncasecmp(text, kw, k) != 0) return 0;
    return n == k || text[k] == ' ' || text[k] == '\r' || text[k] == '\n';
}

int tb_smtp_reply_parse(const char *buf, size_t len, tb_smtp_reply *out, char *err) {
    size_t pos = 0;
    int code = 0, lines = 0;
    unsigned caps = 0;
    for (;;) {
        const char *lf;
        size_t avail = len - pos, linelen;
        int c;
        /* Check the code as soon as its bytes are here: garbage fails fast. */
        for (size_t i = 0; i < 3 && i < avail; i++)
            if (!is_digit(buf[pos + i])) {
                tb_seterr(err, "smtp reply: expected a 3-digit code, got '%.*s'", shown(avail), buf + pos);
                return -1;
            }
        if (avail >= 4 && buf[pos + 3] != '-' && buf[pos + 3] != ' ' && buf[pos + 3] != '\r' && buf[pos + 3] != '\n') {
            tb_seterr(err, "smtp reply: bad separator after code in '%.*s'", shown(avail), buf + pos);
            return -1;
        }
        lf = avail ? memchr(buf + pos, '\n', avail) : NULL;
        if (!lf) {
            if (avail >= TB_SMTP_MAX_LINE) {
                tb_seterr(err, "smtp reply: line longer than %d bytes", TB_SMTP_MAX_LINE);
                return -1;
            }
            return 0;
        }
        linelen = (size_t)(lf - (buf + pos)) + 1;
        if (linelen > TB_SMTP_MAX_LINE) {
            tb_seterr(err, "smtp reply: line longer than %d bytes", TB_SMTP_MAX_LINE);
            return -1;
        }
        if (linelen < 4) {
            tb_seterr(err, "smtp reply: short line '%.*s'", (int)linelen, buf + pos);
            return -1;
        }
        c = (buf[pos] - '0') * 100 + (buf[pos + 1] - '0') * 10 + (buf[pos + 2] - '0');
        if (c < 200 || c > 599) {
            /* 1yz is not used by SMTP; anything else is not a reply code */
            tb_seterr(err, "smtp reply: code %d out of range", c);
            return -1;
        }
        if (lines > 0 && c != code) {
            tb_seterr(err, "smtp reply: code %d on a continuation of a %d reply", c, code);
            return -1;
        }
        code = c;
        if (lines > 0 && linelen > 4) {
            const char *text = buf + pos + 4;
            size_t tn = linelen - 4;
            if (keyword_is(text, tn, "PIPELINING"))
                caps |= TB_SMTP_CAP_PIPELINING;
            else if (keyword_is(text, tn, "8BITMIME"))
                caps |= TB_SMTP_CAP_8BITMIME;
            else if (keyword_is(text, tn, "CHUNKING"))
                caps |= TB_SMTP_CAP_CHUNKING;
        }
        lines++;
        pos += linelen;
        if (buf[pos - linelen + 3] != '-') break; /* ' ', or a bare "250\r\n": the last line */
    }
    out->code = code;
    out->len = pos;
    out->lines = lines;
    out->caps = caps;
    return 1;
}

size_t tb_smtp_stuffed_cap(size_t len) { return 2 * len + 8; }

size_t tb_smtp_dot_stuff(const char *msg, size_t len, char *out) {
    size_t o = 0;
    int bol = 1; /* at the beginning of a line */
    for (size_t i = 0; i < len; i++) {
        char c = msg[i];
        if (bol && c == '.') out[o++] = '.';
        out[o++] = c;
        bol = c == '\n';
    }
    if (len < 2 || msg[len - 2] != '\r' || msg[len - 1] != '\n') {
        if (len > 0 && msg[len - 1] == '\r')
            out[o++] = '\n';
        else if (len > 0) {
            out[o++] = '\r';
            out[o++] = '\n';
        }
    }
    memcpy(out + o, ".\r\n", 3);
    return o + 3;
}
