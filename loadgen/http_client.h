/*
 * http_client.h: one HTTP/1.1 keep-alive client connection on a libevent
 * event_base (a bufferevent), with a cookie jar: the I/O half of the HTTP
 * client that the web and http workloads share (loadgen/http_parse.h is the
 * parsing half).
 *
 * One request at a time (no pipelining, as browsers). The connection is
 * opened by the first request and reused while the server keeps it alive;
 * after a "Connection: close", an HTTP/1.0 response or an idle close by the
 * server, the next request reconnects. A request sent on a reused
 * connection that the server closed before answering a single byte is sent
 * again once on a fresh connection (RFC 9112 9.3.1: the server may close an
 * idle connection at any time; browsers retry in that case).
 */
#ifndef TB_LOADGEN_HTTP_CLIENT_H
#define TB_LOADGEN_HTTP_CLIENT_H

#include <stddef.h>
#include <sys/socket.h>

#include "common/tb_common.h"
#include "loadgen/http_parse.h"

struct event_base;

/* Where requests go: a resolved origin. */
typedef struct tb_http_target {
    struct sockaddr_storage sa;
    socklen_t sa_len;
    char host[160];   /* the Host header's value: "host" or "host:port" */
    char origin[192]; /* "http://host:port", for same-origin checks and messages */
} tb_http_target;

/*
 * Splits an absolute URL "http://HOST[:PORT][/PATH[?QUERY]]" into its
 * target (HOST resolved with getaddrinfo; PORT defaults to 80) and its path
 * ("/" when absent) written into path (path_len bytes). 0, or -1 with err
 * ("url 'ftp://x': only http:// URLs", "url 'http://nohost': resolve
 * nohost:80: Name or service not known"). https is not supported.
 */
int tb_http_url_parse(const char *url, tb_http_target *t, char *path, size_t path_len, char *err) TB_WUR;

/* How a request ended. */
typedef enum {
    TB_HTTP_OK = 0,   /* a complete response arrived (any status) */
    TB_HTTP_ECONNECT, /* the connection could not be opened */
    TB_HTTP_EIO,      /* the connection failed or closed before the response was complete */
    TB_HTTP_EPROTO    /* the bytes received are not an HTTP/1.x response */
} tb_http_result;

/* Completion of a request. resp is valid only during the call (status,
 * headers, the body when keep_body > 0); NULL unless r is TB_HTTP_OK. why
 * holds a "what: why" message for errors. The callback may send the next
 * request on the same connection, but must not free it. */
typedef void (*tb_http_cb)(void *arg, tb_http_result r, const tb_http_parser *resp, const char *why);

typedef struct tb_http_conn tb_http_conn;

/* A connection (not yet opened) to t, which must outlive it. keep_body:
 * bytes of each response body to keep for the callback (0 = none). */
tb_http_conn *tb_http_conn_new(struct event_base *base, const tb_http_target *t, size_t keep_body);

/*
 * Sends one request: head is the request line and headers, each ending in
 * CRLF, without the empty line that ends them; the connection adds a
 * "Cookie:" header from its jar when the jar is not empty, then the empty
 * line, then body[0..body_len) (head must carry the Content-Length). Both
 * are copied. cb is called exactly once, later (never from inside this
 * call), unless tb_http_conn_drop or _free comes first. 0, or -1 when a
 * request is already in flight.
 */
int tb_http_conn_send(tb_http_conn *c, const char *head, size_t head_len, const char *body, size_t body_len,
                      tb_http_cb cb, void *arg) TB_WUR;

/* Closes the connection; a request in flight is forgotten without its
 * callback (an op timeout: no late answer may be taken for the next
 * request's). The cookie jar is kept. */
void tb_http_conn_drop(tb_http_conn *c);

/* The jar: cookies set by the server (name=value, a later Set-Cookie of the
 * same name replaces the value; attributes such as Path and Expires are not
 * kept: the reference app and its tests need no more). */
int tb_http_conn_has_cookie(const tb_http_conn *c, const char *name);
void tb_http_conn_clear_cookies(tb_http_conn *c);

/*
 * A blocking check for probes (SUT ready), not for load: connects to t
 * within timeout_ms and, when path is not NULL, sends "GET path" with
 * Connection: close and reads the response; *status gets its status (0
 * when path is NULL). 0, or -1 with err ("connect http://127.0.0.1:8080:
 * Connection refused", "http://...: no response within 5000 ms").
 */
int tb_http_probe(const tb_http_target *t, const char *path, int timeout_ms, int *status, char *err) TB_WUR;

/* Closes and frees; NULL is a no-op. No callback is called. */
void tb_http_conn_free(tb_http_conn *c);

#endif
