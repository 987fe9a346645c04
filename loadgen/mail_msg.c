/*
 * mail_msg.c: building the workload's messages from a shared text corpus,
 * and checking the checksum header on the way back (see mail_msg.h).
 */
#include "loadgen/mail_msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const words[] = {
    "the",   "power",    "meter",      "tile",      "server",     "load",    "watts",  "score", "latency", "mailbox",
    "queue", "report",   "steady",     "state",     "sample",     "policy",  "cstate", "turbo", "budget",  "rack",
    "lab",   "engineer", "efficiency", "benchmark", "percentile", "message", "fetch",  "store", "index",   "disk",
};

static uint64_t next_rand(uint64_t *x) {
    /* splitmix64 (Steele, Lea, Flood; public domain algorithm) */
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void tb_mail_corpus_init(tb_mail_corpus *c, size_t bytes, uint64_t seed) {
    size_t cap_lines, o = 0, n = 0;
    if (bytes < 1024) bytes = 1024;
    c->text = xmalloc(bytes + 128);
    cap_lines = bytes / 2 + 2;
    c->line_off = xmalloc(cap_lines * sizeof *c->line_off);
    while (o + 80 < bytes) {
        uint64_t r = next_rand(&seed);
        size_t target = 20 + (size_t)(r % 57); /* 20..76 chars: RFC 5322 prefers <= 78 */
        c->line_off[n++] = o;
        if (r % 97 == 0) {
            c->text[o++] = '.'; /* a lone dot: the DATA terminator if not stuffed */
        } else {
            size_t start = o;
            if (r % 13 == 0) c->text[o++] = '.';
            while (o - start < target) {
                const char *w = words[next_rand(&seed) % (sizeof words / sizeof words[0])];
                size_t wl = strlen(w);
                if (o > start && c->text[o - 1] != '.') c->text[o++] = ' ';
                memcpy(c->text + o, w, wl);
                o += wl;
            }
        }
        c->text[o++] = '\r';
        c->text[o++] = '\n';
    }
    c->n_lines = n;
    c->line_off[n] = o;
    c->len = o;
}

void tb_mail_corpus_free(tb_mail_corpus *c) {
    free(c->text);
    free(c->line_off);
    memset(c, 0, sizeof *c);
}

uint64_t tb_mail_checksum(const char *buf, size_t len) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)buf[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

char *tb_mail_msg_build(const tb_mail_corpus *c, const char *from, const char *to, const char *msgid, size_t body_bytes,
                        uint64_t r, size_t *len) {
    size_t first = (size_t)(r % c->n_lines), last = first, blen, hcap, o;
    char *m;
    const char *body;
    /* whole lines from `first` until body_bytes, wrapping to line 0 is avoided
     * by starting earlier when the corpus end is near */
    while (last < c->n_lines && c->line_off[last] - c->line_off[first] < body_bytes)
        last++;
    while (first > 0 && c->line_off[last] - c->line_off[first] < body_bytes)
        first--;
    if (last == first) last = first + 1;
    body = c->text + c->line_off[first];
    blen = c->line_off[last] - c->line_off[first];
    hcap = strlen(from) + strlen(to) + 2 * strlen(msgid) + 512;
    m = xmalloc(hcap + blen);
    o = (size_t)snprintf(m, hcap,
                         "From: <%s>\r\n"
                         "To: <%s>\r\n"
                         "Subject: tilebench %s\r\n"
                         "Message-ID: <%s>\r\n"
                         "MIME-Version: 1.0\r\n"
                         "Content-Type: text/plain; charset=us-ascii\r\n" TB_MAIL_CHECKSUM_HEADER
                         ": fnv1a64:%016llx\r\n"
                         "\r\n",
                         from, to, msgid, msgid, (unsigned long long)tb_mail_checksum(body, blen));
    memcpy(m + o, body, blen);
    *len = o + blen;
    return m;
}

/* Position just past the blank line that ends the header, or 0 when none. */
static size_t header_end(const char *msg, size_t len) {
    for (size_t i = 0; i + 1 < len; i++) {
        if (msg[i] != '\n') continue;
        if (msg[i + 1] == '\n') return i + 2;
        if (i + 2 < len && msg[i + 1] == '\r' && msg[i + 2] == '\n') return i + 3;
    }
    return 0;
}

int tb_mail_header_checksum(const char *hdr, size_t len, uint64_t *sum) {
    static const char name[] = TB_MAIL_CHECKSUM_HEADER ":";
    size_t nl = sizeof name - 1;
    for (size_t i = 0; i + nl <= len; i++) {
        if ((i == 0 || hdr[i - 1] == '\n') && strncasecmp(hdr + i, name, nl) == 0) {
            const char *p = hdr + i + nl, *end = hdr + len;
            uint64_t v = 0;
            int digits = 0;
            while (p < end && *p == ' ')
                p++;
            if ((size_t)(end - p) < 8 || strncasecmp(p, "fnv1a64:", 8) != 0) return -1;
            p += 8;
            for (; p < end && digits < 17; p++, digits++) {
                int d;
                if (*p >= '0' && *p <= '9')
                    d = *p - '0';
                else if (*p >= 'a' && *p <= 'f')
                    d = *p - 'a' + 10;
                else if (*p >= 'A' && *p <= 'F')
                    d = *p - 'A' + 10;
                else
                    break;
                v = (v << 4) | (uint64_t)d;
            }
            if (digits != 16) return -1;
            *sum = v;
            return 0;
        }
    }
    return -1;
}

int tb_mail_msg_verify(const char *msg, size_t len, char *err) {
    size_t he = header_end(msg, len);
    uint64_t want, got;
    if (he == 0) {
        tb_seterr(err, "message of %zu bytes has no end of header", len);
        return -1;
    }
    if (tb_mail_header_checksum(msg, he, &want) != 0) {
        tb_seterr(err, "message has no valid " TB_MAIL_CHECKSUM_HEADER " header");
        return -1;
    }
    got = tb_mail_checksum(msg + he, len - he);
    if (got != want) {
        tb_seterr(err, "message body checksum %016llx, header says %016llx", (unsigned long long)got,
                  (unsigned long long)want);
        return -1;
    }
    return 0;
}
