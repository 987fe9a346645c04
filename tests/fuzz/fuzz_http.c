/*
 * fuzz_http.c: the HTTP/1.1 response parser (loadgen/http_parse.c) on an
 * arbitrary byte stream, as the web and http workloads read it: responses
 * one after another on a keep-alive connection, then EOF. The first two
 * input bytes choose a split point; the responses found (status, body bytes,
 * keep-alive) and the final outcome must be the same whether the stream
 * arrives whole or in two reads.
 */
#include "loadgen/http_parse.h"
#include "tests/fuzz/fuzz.h"

#define MAX_RESP 1024

typedef struct found {
    int n, outcome; /* outcome: 0 clean end, 1 parse error, 2 cut short at EOF */
    int status[MAX_RESP];
    uint64_t body[MAX_RESP];
    int keep[MAX_RESP];
} found;

/* Feeds one exact-size copy of data[0..len) (so ASan sees reads past it). */
static ssize_t feed(tb_http_parser *p, const uint8_t *data, size_t len, char *err) {
    char *buf = malloc(len ? len : 1);
    ssize_t rc;
    if (!buf) abort();
    if (len) memcpy(buf, data, len);
    rc = tb_http_parse(p, buf, len, err);
    free(buf);
    return rc;
}

static void parse(const uint8_t *s, size_t size, size_t cut, found *out) {
    char err[TB_ERR_LEN];
    tb_http_parser p;
    size_t off = 0, end = cut;
    memset(out, 0, sizeof *out);
    tb_http_parser_init(&p, 256);
    for (;;) {
        ssize_t rc;
        size_t avail;
        if (off == end) {
            if (end < size) {
                end = size; /* the second read arrives */
                continue;
            }
            rc = tb_http_parse_eof(&p, err);
            if (rc < 0) {
                FUZZ_CHECK(err[0] != '\0');
                out->outcome = 2;
            } else if (rc == 0) {
                FUZZ_CHECK(p.done);
                if (out->n < MAX_RESP) {
                    out->status[out->n] = p.status;
                    out->body[out->n] = p.body_bytes;
                    out->keep[out->n++] = p.keep_alive;
                }
            }
            break;
        }
        err[0] = '\0';
        avail = end - off;
        rc = feed(&p, s + off, end - off, err);
        if (rc < 0) {
            FUZZ_CHECK(err[0] != '\0');
            out->outcome = 1;
            break;
        }
        FUZZ_CHECK((size_t)rc <= end - off);
        off += (size_t)rc;
        if (p.done) {
            FUZZ_CHECK(p.status >= 100 && p.status <= 999);
            FUZZ_CHECK(p.body_len <= 256 && p.body_len <= p.body_bytes);
            /* 204 and 304 have no body whatever Content-Length says (RFC 9112 6.3) */
            if (p.content_length >= 0 && !p.chunked && p.status != 204 && p.status != 304)
                FUZZ_CHECK(p.body_bytes == (uint64_t)p.content_length);
            if (out->n == MAX_RESP) break;
            out->status[out->n] = p.status;
            out->body[out->n] = p.body_bytes;
            out->keep[out->n++] = p.keep_alive;
            tb_http_parser_reset(&p);
        } else {
            FUZZ_CHECK((size_t)rc == avail); /* mid-response: every byte given is taken */
        }
    }
    tb_http_parser_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static found whole, split;
    size_t cut;
    if (size < 2) return 0;
    cut = ((size_t)data[0] << 8 | data[1]) % (size - 1);
    data += 2;
    size -= 2;
    parse(data, size, size, &whole);
    parse(data, size, cut, &split);
    FUZZ_CHECK(whole.n == split.n && whole.outcome == split.outcome);
    for (int i = 0; i < whole.n; i++)
        FUZZ_CHECK(whole.status[i] == split.status[i] && whole.body[i] == split.body[i] &&
                   whole.keep[i] == split.keep[i]);
    return 0;
}
