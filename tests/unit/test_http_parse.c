/*
 * test_http_parse.c: unit tests of the incremental HTTP/1.1 response parser
 * (loadgen/http_parse.c). A stream of pipelined responses (Content-Length,
 * chunked with extensions and trailers, a 100 Continue before a 204, a 304
 * with a Content-Length, Set-Cookie, Connection: close) is fed split at every
 * byte boundary (first k bytes, then the rest), byte by byte and in 7-byte
 * reads, and must parse exactly as when given whole. Also: HTTP/1.0 bodies
 * read until close, HEAD, EOF cases, body truncation, garbage and oversize.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen/http_parse.h"

static const char stream[] = "HTTP/1.1 200 OK\r\n"
                             "Content-Type: text/html\r\n"
                             "Set-Cookie: tbsid=0123abcd; Path=/; HttpOnly\r\n"
                             "Set-Cookie:  theme=dark \r\n"
                             "content-length: 11\r\n"
                             "\r\n"
                             "hello world"
                             "HTTP/1.1 200 OK\r\n"
                             "Transfer-Encoding: gzip, chunked\r\n"
                             "\r\n"
                             "5;name=value\r\nabcde\r\n"
                             "1A\r\n0123456789abcdefghijklmnop\r\n"
                             "0;last\r\nX-Checksum: 42\r\nX-Other: 1\r\n\r\n"
                             "HTTP/1.1 100 Continue\r\n\r\n"
                             "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n"
                             "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n"
                             "\r\n" /* a stray CRLF between responses is tolerated */
                             "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 3\r\n\r\nnope";

typedef struct got {
    int status, keep_alive, n_cookies;
    char body[64];
    char cookie0[TB_HTTP_COOKIE_LEN], cookie1[TB_HTTP_COOKIE_LEN]; /* as the parser holds them: never cut here */
} got;

/* Parses buf[0..len) feeding growing prefixes: first split bytes, then step
 * more at a time. Fills out[] per response; returns the number of responses;
 * *rest gets the bytes left unparsed at the end (a response still open). */
static size_t run(const char *buf, size_t len, size_t split, size_t step, got *out, size_t cap, size_t *rest) {
    tb_http_parser p;
    char err[TB_ERR_LEN] = "";
    size_t off = 0, avail = split < len ? split : len, n = 0;
    tb_http_parser_init(&p, 64);
    for (;;) {
        while (off < avail) {
            ssize_t r = tb_http_parse(&p, buf + off, avail - off, err);
            if (r < 0) fail_msg("split %zu: %s", split, err);
            off += (size_t)r;
            if (!p.done) {
                assert_int_equal(off, avail); /* an unfinished response takes every byte given */
                break;
            }
            assert_true(n < cap);
            memset(&out[n], 0, sizeof out[n]);
            out[n].status = p.status;
            out[n].keep_alive = p.keep_alive;
            out[n].n_cookies = p.n_cookies;
            snprintf(out[n].body, sizeof out[n].body, "%s", p.body ? p.body : "");
            if (p.n_cookies > 0) snprintf(out[n].cookie0, sizeof out[n].cookie0, "%s", p.cookies[0]);
            if (p.n_cookies > 1) snprintf(out[n].cookie1, sizeof out[n].cookie1, "%s", p.cookies[1]);
            n++;
            tb_http_parser_reset(&p);
        }
        if (avail == len) break;
        avail = avail + step < len ? avail + step : len;
    }
    *rest = tb_http_parser_idle(&p) ? 0 : 1;
    tb_http_parser_free(&p);
    return n;
}

static void check_stream(const got *g, size_t n) {
    assert_int_equal(n, 4);
    assert_int_equal(g[0].status, 200);
    assert_string_equal(g[0].body, "hello world");
    assert_int_equal(g[0].n_cookies, 2);
    assert_string_equal(g[0].cookie0, "tbsid=0123abcd");
    assert_string_equal(g[0].cookie1, "theme=dark");
    assert_true(g[0].keep_alive);
    assert_int_equal(g[1].status, 200);
    assert_string_equal(g[1].body, "abcde0123456789abcdefghijklmnop");
    assert_true(g[1].keep_alive);
    assert_int_equal(g[2].status, 204); /* the 100 Continue before it was skipped */
    assert_string_equal(g[2].body, "");
    assert_int_equal(g[3].status, 304); /* no body despite its Content-Length */
    assert_string_equal(g[3].body, "");
}

static void pipelined_at_every_split(void **state) {
    got whole[8], part[8];
    size_t len = strlen(stream), rest, nw, np;
    (void)state;
    nw = run(stream, len, len, len, whole, 8, &rest);
    /* the 404 with Connection: close is parsed too: 5 responses */
    assert_int_equal(nw, 5);
    assert_int_equal(whole[4].status, 404);
    assert_false(whole[4].keep_alive);
    assert_string_equal(whole[4].body, "nop"); /* Content-Length 3: the extra byte is not its body */
    check_stream(whole, 4);
    for (size_t k = 0; k <= len; k++) {
        np = run(stream, len, k, len, part, 8, &rest);
        assert_int_equal(np, nw);
        assert_memory_equal(part, whole, nw * sizeof whole[0]);
    }
    np = run(stream, len, 0, 1, part, 8, &rest);
    assert_int_equal(np, nw);
    assert_memory_equal(part, whole, nw * sizeof whole[0]);
    np = run(stream, len, 0, 7, part, 8, &rest);
    assert_int_equal(np, nw);
    assert_memory_equal(part, whole, nw * sizeof whole[0]);
}

/* Parses all of s in one call into p (which the caller frees); returns the rc. */
static ssize_t once(tb_http_parser *p, const char *s, size_t keep, char *err) {
    tb_http_parser_init(p, keep);
    return tb_http_parse(p, s, strlen(s), err);
}

static void http10_until_close(void **state) {
    tb_http_parser p;
    char err[TB_ERR_LEN] = "";
    const char *s = "HTTP/1.0 200 OK\r\nServer: old\r\n\r\nbody until close";
    (void)state;
    assert_int_equal(once(&p, s, 1024, err), (ssize_t)strlen(s));
    assert_false(p.done);
    assert_true(p.headers_done);
    assert_false(p.keep_alive);
    assert_int_equal(tb_http_parse_eof(&p, err), 0);
    assert_true(p.done);
    assert_string_equal(p.body, "body until close");
    tb_http_parser_free(&p);

    /* HTTP/1.0 keep-alive with a length: the connection stays usable */
    s = "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok";
    assert_int_equal(once(&p, s, 0, err), (ssize_t)strlen(s));
    assert_true(p.done);
    assert_true(p.keep_alive);
    assert_null(p.body); /* keep_body 0 keeps nothing */
    assert_int_equal(p.body_bytes, 2);
    tb_http_parser_free(&p);

    /* HTTP/1.0 without keep-alive closes even with a length */
    s = "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
    assert_int_equal(once(&p, s, 0, err), (ssize_t)strlen(s));
    assert_true(p.done);
    assert_false(p.keep_alive);
    tb_http_parser_free(&p);

    /* a transfer coding other than chunked: the body ends at close */
    s = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabcdef";
    assert_int_equal(once(&p, s, 64, err), (ssize_t)strlen(s));
    assert_false(p.done);
    assert_int_equal(tb_http_parse_eof(&p, err), 0);
    assert_string_equal(p.body, "abcdef");
    tb_http_parser_free(&p);
}

static void head_and_eof(void **state) {
    tb_http_parser p;
    char err[TB_ERR_LEN] = "";
    const char *s = "HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n";
    (void)state;
    tb_http_parser_init(&p, 0);
    p.no_body = 1; /* the request was HEAD */
    assert_int_equal(tb_http_parse(&p, s, strlen(s), err), (ssize_t)strlen(s));
    assert_true(p.done);
    assert_int_equal(p.content_length, 500);
    tb_http_parser_free(&p);

    /* EOF on an idle connection: 1 (the caller may retry the request) */
    tb_http_parser_init(&p, 0);
    assert_int_equal(tb_http_parse_eof(&p, err), 1);
    /* EOF inside the header block, and inside a body: errors */
    s = "HTTP/1.1 200 OK\r\nContent-Le";
    assert_int_equal(tb_http_parse(&p, s, strlen(s), err), (ssize_t)strlen(s));
    assert_int_equal(tb_http_parse_eof(&p, err), -1);
    assert_non_null(strstr(err, "header block"));
    tb_http_parser_reset(&p);
    s = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
    assert_int_equal(tb_http_parse(&p, s, strlen(s), err), (ssize_t)strlen(s));
    assert_int_equal(tb_http_parse_eof(&p, err), -1);
    assert_non_null(strstr(err, "after 3 body bytes"));
    tb_http_parser_reset(&p);
    s = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nab";
    assert_int_equal(tb_http_parse(&p, s, strlen(s), err), (ssize_t)strlen(s));
    assert_int_equal(tb_http_parse_eof(&p, err), -1);
    tb_http_parser_free(&p);
}

static void body_truncated(void **state) {
    tb_http_parser p;
    char err[TB_ERR_LEN] = "";
    const char *s = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789";
    (void)state;
    assert_int_equal(once(&p, s, 4, err), (ssize_t)strlen(s));
    assert_true(p.done);
    assert_string_equal(p.body, "0123");
    assert_true(p.body_truncated);
    assert_int_equal(p.body_bytes, 10);
    tb_http_parser_free(&p);
}

/* Each bad input must fail with an error naming what is wrong. */
static void expect_error(const char *s, const char *what) {
    tb_http_parser p;
    char err[TB_ERR_LEN] = "";
    ssize_t r = once(&p, s, 0, err);
    tb_http_parser_free(&p);
    if (r != -1) fail_msg("accepted: %s", s);
    if (!strstr(err, what)) fail_msg("error '%s' does not mention '%s'", err, what);
}

static void garbage(void **state) {
    (void)state;
    expect_error("SSH-2.0-OpenSSH_9.2\r\n", "bad status line 'SSH-2.0-OpenSSH_9.2'");
    expect_error("HTTP/2 200\r\n\r\n", "bad status line");
    expect_error("HTTP/1.1 2x0 OK\r\n", "bad status line");
    expect_error("HTTP/1.1 200OK\r\n", "bad status line");
    expect_error("HTTP/1.1 099 Low\r\n", "bad status line");
    expect_error("\x16\x03\x01\x02\x01\x01\x01\x01\xfc\x03\x03\n", "bad status line");
    expect_error("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "bad header line 'no colon here'");
    expect_error("HTTP/1.1 200 OK\r\nContent Length: 5\r\n\r\n", "bad header line");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\n", "bad header line");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n", "bad header line");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "two different Content-Length");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size 'zz'");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1234567890abcdef0\r\n", "bad chunk size");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "chunk data longer");
    expect_error("HTTP/1.1 101 Switching Protocols\r\n\r\n", "101");
}

/* Header names are checked 8 bytes at a time: a space, a control byte, DEL
 * or a non-ASCII byte is refused at every position of names of every length
 * from 1 to 24 bytes, and every visible ASCII byte is taken. */
static void header_name_bytes(void **state) {
    static const unsigned char bad[] = {0, 1, 9, 31, 32, 127, 128, 200, 255};
    char msg[128], err[TB_ERR_LEN];
    tb_http_parser p;
    (void)state;
    for (size_t len = 1; len <= 24; len++) {
        for (size_t pos = 0; pos < len; pos++) {
            for (size_t b = 0; b < sizeof bad; b++) {
                int n = snprintf(msg, sizeof msg, "HTTP/1.1 200 OK\r\n%.*s: v\r\nContent-Length: 0\r\n\r\n", (int)len,
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
                msg[17 + pos] = (char)bad[b];
                if (bad[b] == 9 && pos == 0) continue;  /* a leading tab is an obs-fold line */
                if (bad[b] == 32 && pos == 0) continue; /* as is a leading space */
                tb_http_parser_init(&p, 0);
                if (tb_http_parse(&p, msg, (size_t)n, err) != -1 || !strstr(err, "bad header line"))
                    fail_msg("name of %zu bytes with byte %d at %zu accepted", len, bad[b], pos);
                tb_http_parser_free(&p);
            }
        }
        for (int c = 33; c < 127; c++) {
            int n = snprintf(msg, sizeof msg, "HTTP/1.1 200 OK\r\nX%.*s: v\r\nContent-Length: 0\r\n\r\n", (int)len - 1,
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
            if (c == ':') continue;
            msg[17 + len - 1] = (char)c;
            tb_http_parser_init(&p, 0);
            if (tb_http_parse(&p, msg, (size_t)n, err) != n || !p.done)
                fail_msg("name of %zu bytes ending in byte %d refused: %s", len, c, err);
            tb_http_parser_free(&p);
        }
    }
}

static void oversize(void **state) {
    size_t n = TB_HTTP_MAX_HEADER + 100;
    char *big = malloc(n + 64), err[TB_ERR_LEN] = "";
    tb_http_parser p;
    ssize_t r = 0;
    (void)state;
    /* one endless header line, fed in 1000-byte reads: stops at the limit, not at memory */
    strcpy(big, "HTTP/1.1 200 OK\r\nX-Big: ");
    {
        size_t pre = strlen(big), total = pre + n;
        memset(big + pre, 'a', n);
        tb_http_parser_init(&p, 0);
        for (size_t off = 0; off < total && r >= 0; off += 1000)
            r = tb_http_parse(&p, big + off, total - off < 1000 ? total - off : 1000, err);
    }
    assert_int_equal(r, -1);
    assert_non_null(strstr(err, "header block over 65536 bytes"));
    tb_http_parser_free(&p);

    /* many short headers add up the same way */
    {
        size_t off = 0;
        strcpy(big, "HTTP/1.1 200 OK\r\n");
        off = strlen(big);
        while (off + 12 < n)
            off += (size_t)sprintf(big + off, "X-A: 12345\r\n");
        tb_http_parser_init(&p, 0);
        assert_int_equal(tb_http_parse(&p, big, off, err), -1);
        assert_non_null(strstr(err, "header block over"));
        tb_http_parser_free(&p);
    }
    /* an endless chunk-size line */
    strcpy(big, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;");
    memset(big + strlen(big), 'e', 8000);
    big[strlen("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;") + 8000] = '\0';
    tb_http_parser_init(&p, 0);
    assert_int_equal(tb_http_parse(&p, big, strlen(big), err), -1);
    assert_non_null(strstr(err, "chunk size line over"));
    tb_http_parser_free(&p);
    free(big);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pipelined_at_every_split),
        cmocka_unit_test(http10_until_close),
        cmocka_unit_test(head_and_eof),
        cmocka_unit_test(body_truncated),
        cmocka_unit_test(garbage),
        cmocka_unit_test(header_name_bytes),
        cmocka_unit_test(oversize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
