/*
 * http_parse.h: the pure (no I/O) half of the HTTP/1.1 client (RFC 9112):
 * an incremental response parser. It is fed whatever bytes arrived, in any
 * split (one byte at a time works), and finds the status line, the headers
 * the load generator needs (Content-Length, Transfer-Encoding: chunked,
 * Connection, Set-Cookie), and the body's framing: Content-Length, chunked
 * (extensions and trailers skipped), or read-until-close (HTTP/1.0 style).
 * 1xx interim responses are skipped. Garbage and oversize header blocks are
 * errors with a message, never a crash or an endless wait.
 *
 * Use: tb_http_parser_init once per connection; for each response call
 * tb_http_parse with the bytes received until p->done; drop the bytes it
 * consumed (it stops at the end of a response, so the next pipelined
 * response starts right after), read the result fields, then
 * tb_http_parser_reset before the next response. At EOF call
 * tb_http_parse_eof: it completes a read-until-close body.
 */
#ifndef TB_LOADGEN_HTTP_PARSE_H
#define TB_LOADGEN_HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/tb_common.h"

/* Largest status line + header block accepted (bytes); beyond it the server
 * is taken to be sending garbage. Same order as nginx's and Apache's 8-64 KiB
 * request header limits. */
#define TB_HTTP_MAX_HEADER (64u * 1024u)
/* Set-Cookie headers kept per response, and the longest name=value kept. */
#define TB_HTTP_MAX_COOKIES 4
#define TB_HTTP_COOKIE_LEN  128

typedef struct tb_http_parser {
    /* --- results of the response parsed so far (valid when done, and the
     *     status fields from the end of the header block on) --- */
    int done;               /* 1: one whole response was parsed */
    int headers_done;       /* 1: the header block is complete */
    int status;             /* 200, 404, ... */
    int minor;              /* HTTP/1.<minor> */
    int keep_alive;         /* 1: the connection may carry the next request (HTTP/1.1 without
                               "Connection: close", or HTTP/1.0 with "Connection: keep-alive",
                               and a body not delimited by close) */
    int chunked;            /* Transfer-Encoding: chunked */
    int64_t content_length; /* -1 when absent */
    uint64_t body_bytes;    /* body bytes seen (decoded, without chunk framing) */
    int n_cookies;          /* Set-Cookie name=value pairs (attributes dropped) */
    char cookies[TB_HTTP_MAX_COOKIES][TB_HTTP_COOKIE_LEN];
    /* body kept when keep_body > 0 (at most keep_body bytes; body_truncated
     * says more came); NUL-terminated; owned by the parser */
    char *body;
    size_t body_len;
    int body_truncated;
    /* --- configuration --- */
    size_t keep_body; /* bytes of body to keep; 0 keeps none (cheapest) */
    int no_body;      /* the request was HEAD: a response has no body whatever its headers say */
    /* --- internal state --- */
    int state;
    size_t header_bytes; /* of this response so far */
    char *line;          /* the current header / chunk-size line (grows to TB_HTTP_MAX_HEADER) */
    size_t line_len, line_cap;
    uint64_t remaining; /* body or chunk bytes still due */
    int conn_close, conn_keep, te_other;
    size_t body_cap;
} tb_http_parser;

/* Prepares p for the first response; keep_body as above. No allocation until
 * bytes arrive. */
void tb_http_parser_init(tb_http_parser *p, size_t keep_body);

/* Makes p ready for the next response on the same connection; keeps its
 * buffers and configuration. */
void tb_http_parser_reset(tb_http_parser *p);

/* Frees the parser's buffers (the struct itself is the caller's). */
void tb_http_parser_free(tb_http_parser *p);

/*
 * Parses buf[0..len) as the continuation of the current response. Returns
 * the bytes consumed (<= len; fewer than len only when the response ended
 * inside buf: p->done is then 1 and the rest belongs to the next response),
 * or -1 with err ("http: bad status line 'xyz'", "http: header block over
 * 65536 bytes", "http: bad chunk size 'zz'", ...). After done or an error,
 * call tb_http_parser_reset before parsing more.
 */
ssize_t tb_http_parse(tb_http_parser *p, const char *buf, size_t len, char *err) TB_WUR;

/*
 * The connection closed. 0 when that completes the response (a body read
 * until close: p->done becomes 1), 1 when no byte of a response had arrived
 * (a keep-alive connection the server closed while idle), or -1 with err
 * when the response was cut short.
 */
int tb_http_parse_eof(tb_http_parser *p, char *err) TB_WUR;

/* 1 when nothing of a response has been parsed yet (a fresh or reset parser). */
int tb_http_parser_idle(const tb_http_parser *p);

#endif
