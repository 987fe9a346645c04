/*
 * http_client.c: an HTTP/1.1 keep-alive client connection on a libevent
 * bufferevent, with a small cookie jar. See http_client.h.
 *
 * Received bytes are parsed straight out of the bufferevent's input chunks
 * (evbuffer_peek), so a response is never copied unless its body is wanted.
 * Memory per idle connection is the bufferevent and this struct (the jar
 * and the parser's line buffer are allocated on first use), so ten thousand
 * idle keep-alive connections fit in a few tens of MiB (bench/http).
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen/http_client.h"

#define JAR_MAX 8

struct tb_http_conn {
    struct event_base *base;
    const tb_http_target *t;
    struct bufferevent *bev;
    int connected; /* the TCP connect completed */
    int reused;    /* this connection already carried a whole response */
    int busy;      /* a request is in flight */
    int retried;   /* the request in flight was already sent again once */
    tb_http_parser p;
    tb_http_cb cb;
    void *arg;
    /* a copy of the request in flight, for the one retry after an idle close */
    char *req;
    size_t req_len, req_cap;
    struct event *soon; /* reports a connect that failed inside send */
    char (*jar)[TB_HTTP_COOKIE_LEN];
    int n_jar;
};

int tb_http_url_parse(const char *url, tb_http_target *t, char *path, size_t path_len, char *err) {
    const char *h, *slash, *colon;
    char host[128], ps[16] = "80";
    struct addrinfo hints, *res = NULL;
    size_t hl;
    int rc;
    memset(t, 0, sizeof *t);
    if (strncmp(url, "http://", 7) != 0) {
        tb_seterr(err, "url '%s': only http:// URLs", url);
        return -1;
    }
    h = url + 7;
    slash = strchr(h, '/');
    if (!slash) slash = h + strlen(h);
    colon = memchr(h, ':', (size_t)(slash - h));
    hl = (size_t)((colon ? colon : slash) - h);
    if (hl == 0 || hl >= sizeof host || memchr(h, '?', (size_t)(slash - h)) || memchr(h, '@', (size_t)(slash - h))) {
        tb_seterr(err, "url '%s': expected http://HOST[:PORT][/PATH]", url);
        return -1;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    if (colon) {
        size_t pl = (size_t)(slash - colon - 1);
        char *end;
        long port;
        if (pl == 0 || pl >= sizeof ps) goto badport;
        memcpy(ps, colon + 1, pl);
        ps[pl] = '\0';
        port = strtol(ps, &end, 10);
        if (*end || port < 1 || port > 65535) goto badport;
    }
    if (strlen(*slash ? slash : "/") >= path_len) {
        tb_seterr(err, "url '%s': path longer than %zu bytes", url, path_len - 1);
        return -1;
    }
    snprintf(path, path_len, "%s", *slash ? slash : "/");
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0 || !res) {
        tb_seterr(err, "url '%s': resolve %s:%s: %s", url, host, ps, gai_strerror(rc));
        return -1;
    }
    memcpy(&t->sa, res->ai_addr, res->ai_addrlen);
    t->sa_len = (socklen_t)res->ai_addrlen;
    freeaddrinfo(res);
    if (colon && strcmp(ps, "80") != 0) snprintf(t->host, sizeof t->host, "%s:%s", host, ps);
    else snprintf(t->host, sizeof t->host, "%s", host);
    snprintf(t->origin, sizeof t->origin, "http://%s:%s", host, ps);
    return 0;
badport:
    tb_seterr(err, "url '%s': bad port (1..65535)", url);
    return -1;
}

tb_http_conn *tb_http_conn_new(struct event_base *base, const tb_http_target *t, size_t keep_body) {
    tb_http_conn *c = xcalloc(1, sizeof *c);
    c->base = base;
    c->t = t;
    tb_http_parser_init(&c->p, keep_body);
    return c;
}

static void close_bev(tb_http_conn *c) {
    if (c->bev) bufferevent_free(c->bev);
    c->bev = NULL;
    c->connected = 0;
    c->reused = 0;
}

void tb_http_conn_drop(tb_http_conn *c) {
    close_bev(c);
    c->busy = 0;
    c->cb = NULL;
    if (c->soon) event_del(c->soon);
}

/* Ends the request in flight and calls back (the callback may send again). */
static void finish(tb_http_conn *c, tb_http_result r, const char *why) {
    tb_http_cb cb = c->cb;
    void *arg = c->arg;
    c->busy = 0;
    c->cb = NULL;
    if (r != TB_HTTP_OK) close_bev(c);
    if (cb) cb(arg, r, r == TB_HTTP_OK ? &c->p : NULL, why);
}

static void jar_store(tb_http_conn *c) {
    for (int i = 0; i < c->p.n_cookies; i++) {
        const char *ck = c->p.cookies[i], *eq = strchr(ck, '=');
        size_t nl = (size_t)(eq - ck);
        int k;
        if (!c->jar) c->jar = xcalloc(JAR_MAX, sizeof *c->jar);
        for (k = 0; k < c->n_jar; k++)
            if (strncmp(c->jar[k], ck, nl + 1) == 0) break;
        if (k == c->n_jar) {
            if (c->n_jar == JAR_MAX) continue;
            c->n_jar++;
        }
        snprintf(c->jar[k], TB_HTTP_COOKIE_LEN, "%s", ck);
    }
}

static void on_read(struct bufferevent *bev, void *arg) {
    tb_http_conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    char err[TB_ERR_LEN];
    while (evbuffer_get_length(in) > 0) {
        struct evbuffer_iovec v;
        ssize_t n;
        if (!c->busy) { /* bytes nobody asked for: the server is confused; start afresh next time */
            close_bev(c);
            return;
        }
        if (evbuffer_peek(in, -1, NULL, &v, 1) < 1) break;
        n = tb_http_parse(&c->p, v.iov_base, v.iov_len, err);
        if (n < 0) {
            finish(c, TB_HTTP_EPROTO, err);
            return;
        }
        evbuffer_drain(in, (size_t)n);
        if (c->p.done) {
            jar_store(c);
            c->reused = 1;
            if (!c->p.keep_alive) close_bev(c);
            finish(c, TB_HTTP_OK, "");
            if (!c->bev || c->bev != bev) return; /* closed, or the callback reconnected */
        }
    }
}

static int start(tb_http_conn *c);

static void on_event(struct bufferevent *bev, short what, void *arg) {
    tb_http_conn *c = arg;
    char err[TB_ERR_LEN];
    (void)bev;
    if (what & BEV_EVENT_CONNECTED) {
        int one = 1;
        c->connected = 1;
        setsockopt(bufferevent_getfd(c->bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return;
    }
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))) return;
    if (!c->busy) { /* an idle keep-alive connection closed by the server */
        close_bev(c);
        return;
    }
    if (!c->connected) {
        snprintf(err, sizeof err, "connect %s: %s", c->t->origin,
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        finish(c, TB_HTTP_ECONNECT, err);
        return;
    }
    if (what & BEV_EVENT_EOF) {
        int rc = tb_http_parse_eof(&c->p, err);
        if (rc == 0) {
            close_bev(c);
            jar_store(c);
            finish(c, TB_HTTP_OK, "");
            return;
        }
        if (rc == 1 && c->reused && !c->retried) {
            /* closed while idle just as we sent: once more on a fresh connection */
            c->retried = 1;
            close_bev(c);
            if (start(c) != 0) {
                snprintf(err, sizeof err, "connect %s: cannot open a socket", c->t->origin);
                finish(c, TB_HTTP_ECONNECT, err);
            }
            return;
        }
        if (rc == 1) snprintf(err, sizeof err, "%s: connection closed before any response", c->t->origin);
        finish(c, TB_HTTP_EIO, err);
        return;
    }
    snprintf(err, sizeof err, "%s: %s", c->t->origin, evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    finish(c, TB_HTTP_EIO, err);
}

/* Opens the connection if needed and writes the request copy. 0 or -1. */
static int start(tb_http_conn *c) {
    if (!c->bev) {
        c->bev = bufferevent_socket_new(c->base, -1, BEV_OPT_CLOSE_ON_FREE);
        if (!c->bev) return -1;
        bufferevent_setcb(c->bev, on_read, NULL, on_event, c);
        bufferevent_enable(c->bev, EV_READ | EV_WRITE);
        if (bufferevent_socket_connect(c->bev, (const struct sockaddr *)&c->t->sa, (int)c->t->sa_len) != 0) {
            close_bev(c);
            return -1;
        }
    }
    tb_http_parser_reset(&c->p);
    return bufferevent_write(c->bev, c->req, c->req_len);
}

static void on_soon(evutil_socket_t fd, short what, void *arg) {
    tb_http_conn *c = arg;
    char err[TB_ERR_LEN];
    (void)fd;
    (void)what;
    snprintf(err, sizeof err, "connect %s: failed", c->t->origin);
    finish(c, TB_HTTP_ECONNECT, err);
}

int tb_http_conn_send(tb_http_conn *c, const char *head, size_t head_len, const char *body, size_t body_len,
                      tb_http_cb cb, void *arg) {
    size_t need = head_len + body_len + 2 + 16 + (size_t)c->n_jar * (TB_HTTP_COOKIE_LEN + 2);
    char *p;
    if (c->busy) return -1;
    if (need > c->req_cap) {
        c->req_cap = need;
        c->req = xrealloc(c->req, need);
    }
    p = c->req;
    memcpy(p, head, head_len);
    p += head_len;
    if (c->n_jar) {
        memcpy(p, "Cookie: ", 8);
        p += 8;
        for (int i = 0; i < c->n_jar; i++) {
            size_t l = strlen(c->jar[i]);
            if (i) *p++ = ';', *p++ = ' ';
            memcpy(p, c->jar[i], l);
            p += l;
        }
        *p++ = '\r', *p++ = '\n';
    }
    *p++ = '\r', *p++ = '\n';
    if (body_len) memcpy(p, body, body_len);
    p += body_len;
    c->req_len = (size_t)(p - c->req);
    c->busy = 1;
    c->retried = 0;
    c->cb = cb;
    c->arg = arg;
    if (start(c) != 0) {
        static const struct timeval zero = {0, 0};
        close_bev(c);
        if (!c->soon) c->soon = evtimer_new(c->base, on_soon, c);
        evtimer_add(c->soon, &zero);
    }
    return 0;
}

int tb_http_conn_has_cookie(const tb_http_conn *c, const char *name) {
    size_t nl = strlen(name);
    for (int i = 0; i < c->n_jar; i++)
        if (strncmp(c->jar[i], name, nl) == 0 && c->jar[i][nl] == '=') return 1;
    return 0;
}

void tb_http_conn_clear_cookies(tb_http_conn *c) { c->n_jar = 0; }

int tb_http_conn_is_open(const tb_http_conn *c) { return c->bev != NULL; }

void tb_http_conn_free(tb_http_conn *c) {
    if (!c) return;
    close_bev(c);
    if (c->soon) event_free(c->soon);
    tb_http_parser_free(&c->p);
    free(c->req);
    free(c->jar);
    free(c);
}

/* Waits up to ms for fd to become ready for events; 1 ready, 0 timed out. */
static int wait_fd(int fd, short events, int ms) {
    struct pollfd pf = {.fd = fd, .events = events};
    int rc;
    do rc = poll(&pf, 1, ms);
    while (rc < 0 && errno == EINTR);
    return rc > 0;
}

int tb_http_probe(const tb_http_target *t, const char *path, int timeout_ms, int *status, char *err) {
    int fd = socket(t->sa.ss_family, SOCK_STREAM, 0), soerr = 0, rc = -1;
    socklen_t sl = sizeof soerr;
    uint64_t deadline = tb_now_us() + (uint64_t)timeout_ms * 1000;
    tb_http_parser p;
    *status = 0;
    if (fd < 0) {
        tb_seterr(err, "connect %s: %s", t->origin, strerror(errno));
        return -1;
    }
    tb_http_parser_init(&p, 0);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (connect(fd, (const struct sockaddr *)&t->sa, t->sa_len) != 0 && errno != EINPROGRESS) soerr = errno;
    else if (!wait_fd(fd, POLLOUT, timeout_ms)) soerr = ETIMEDOUT;
    else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) soerr = errno;
    if (soerr) {
        tb_seterr(err, "connect %s: %s", t->origin, strerror(soerr));
        goto out;
    }
    if (path) {
        char req[1024], buf[4096], perr[TB_ERR_LEN];
        int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, t->host);
        if (n < 0 || (size_t)n >= sizeof req || write(fd, req, (size_t)n) != n) {
            tb_seterr(err, "%s: cannot send GET %s", t->origin, path);
            goto out;
        }
        while (!p.done) {
            ssize_t r;
            uint64_t now = tb_now_us();
            if (now >= deadline || !wait_fd(fd, POLLIN, (int)((deadline - now) / 1000) + 1)) {
                tb_seterr(err, "%s: GET %s: no response within %d ms", t->origin, path, timeout_ms);
                goto out;
            }
            r = read(fd, buf, sizeof buf);
            if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (r <= 0) {
                if (tb_http_parse_eof(&p, perr) == 0) break;
                tb_seterr(err, "%s: GET %s: connection closed before the response", t->origin, path);
                goto out;
            }
            for (ssize_t off = 0; off < r && !p.done;) {
                ssize_t k = tb_http_parse(&p, buf + off, (size_t)(r - off), perr);
                if (k < 0) {
                    tb_seterr(err, "%s: GET %s: %s", t->origin, path, perr);
                    goto out;
                }
                off += k;
            }
        }
        *status = p.status;
    }
    rc = 0;
out:
    tb_http_parser_free(&p);
    close(fd);
    return rc;
}
