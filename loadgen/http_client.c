/*
 * http_client.c: an HTTP/1.1 keep-alive client connection on a libevent
 * event_base, with a small cookie jar. See http_client.h.
 *
 * The socket is driven directly (as wrk does), not through a bufferevent:
 * a request is written with one send() as soon as it is given (a write
 * event is armed only when the socket cannot take it all), and responses
 * are read with one read() per readiness into a stack buffer and parsed
 * from there, so a keep-alive request costs a send, a read and the loop's
 * epoll_wait: no FIONREAD ioctl and no write-event churn per request, and no
 * receive buffer per connection. The event is edge-triggered (EV_ET): epoll
 * does not poll the socket again at the next wait, as it does a
 * level-triggered one after each report; while a response is incomplete the
 * socket is read until it is empty, since what is already queued (bytes, a
 * close, a reset) raises no new edge.
 * Memory per idle connection is this struct, one event and the request copy
 * (the jar and the parser's line buffer are allocated on first use): about
 * 3.5 KiB, so ten thousand idle keep-alive connections fit in a few tens of
 * MiB (bench/http).
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loadgen/http_client.h"

#define JAR_MAX        8
#define READ_BUF       65536 /* bytes read per readiness (on the worker thread's stack) */
#define READS_PER_TURN 16    /* reads of one response per callback (1 MiB), then the next loop turn */

struct tb_http_conn {
    struct event_base *base;
    const tb_http_target *t;
    int fd;           /* -1: closed */
    struct event *ev; /* on fd: EV_READ|EV_PERSIST, plus EV_WRITE while connecting or flushing */
    short ev_flags;   /* flags ev is assigned with */
    int connected;    /* the TCP connect completed */
    int reused;       /* this connection already carried a whole response */
    int busy;         /* a request is in flight */
    int retried;      /* the request in flight was already sent again once */
    tb_http_parser p;
    tb_http_cb cb;
    void *arg;
    /* the request in flight (kept for the one retry after an idle close) */
    char *req;
    size_t req_len, req_cap, sent;
    struct event *soon; /* reports a failure that happened inside send */
    int in_send, soon_r, soon_errno;
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
    if (colon && strcmp(ps, "80") != 0)
        snprintf(t->host, sizeof t->host, "%s:%s", host, ps);
    else
        snprintf(t->host, sizeof t->host, "%s", host);
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
    c->fd = -1;
    tb_http_parser_init(&c->p, keep_body);
    return c;
}

static void close_fd(tb_http_conn *c) {
    if (c->ev) event_del(c->ev);
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->connected = 0;
    c->reused = 0;
}

void tb_http_conn_drop(tb_http_conn *c) {
    close_fd(c);
    c->busy = 0;
    c->cb = NULL;
    if (c->soon) event_del(c->soon);
}

static void on_soon(evutil_socket_t fd, short what, void *arg);

/* Ends the request in flight and calls back (the callback may send again). */
static void finish(tb_http_conn *c, tb_http_result r, const char *why) {
    tb_http_cb cb = c->cb;
    void *arg = c->arg;
    if (c->in_send) { /* never call back from inside tb_http_conn_send: report on the next loop turn */
        static const struct timeval zero = {0, 0};
        c->soon_r = r;
        c->soon_errno = errno;
        close_fd(c);
        if (!c->soon) c->soon = evtimer_new(c->base, on_soon, c);
        evtimer_add(c->soon, &zero);
        (void)why;
        return;
    }
    c->busy = 0;
    c->cb = NULL;
    if (r != TB_HTTP_OK) close_fd(c);
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

static void on_io(evutil_socket_t fd, short what, void *arg);

/* (Re)arms the connection's event for EV_READ, plus EV_WRITE when want_write. */
static void arm(tb_http_conn *c, int want_write) {
    short flags = (short)(EV_READ | EV_PERSIST | EV_ET | EV_CLOSED | (want_write ? EV_WRITE : 0));
    if (c->ev && c->ev_flags == flags && event_pending(c->ev, EV_READ, NULL)) return;
    if (c->ev) event_del(c->ev);
    if (!c->ev)
        c->ev = event_new(c->base, c->fd, flags, on_io, c);
    else
        event_assign(c->ev, c->base, c->fd, flags, on_io, c);
    c->ev_flags = flags;
    event_add(c->ev, NULL);
}

static int start(tb_http_conn *c);

/* The connection failed (errno-style e) or closed (e == 0) while a request
 * was in flight: retry once when it was a reused connection that had not
 * begun to answer (the server closed it while idle, RFC 9112 9.3.1), else
 * report. */
static void lost(tb_http_conn *c, int e) {
    char err[TB_ERR_LEN];
    int rc = 1;
    if (e == 0) {
        rc = tb_http_parse_eof(&c->p, err);
        if (rc == 0) { /* a body delimited by the close */
            close_fd(c);
            jar_store(c);
            finish(c, TB_HTTP_OK, "");
            return;
        }
    } else if (!tb_http_parser_idle(&c->p)) {
        rc = -1;
    }
    if (rc == 1 && c->reused && !c->retried) {
        c->retried = 1;
        close_fd(c);
        if (start(c) != 0) {
            snprintf(err, sizeof err, "connect %s: %s", c->t->origin, strerror(errno));
            finish(c, TB_HTTP_ECONNECT, err);
        }
        return;
    }
    if (e)
        snprintf(err, sizeof err, "%s: %s", c->t->origin, strerror(e));
    else if (rc == 1)
        snprintf(err, sizeof err, "%s: connection closed before any response", c->t->origin);
    finish(c, TB_HTTP_EIO, err);
}

/* Writes what is left of the request; arms EV_WRITE when the socket is full. */
static void flush(tb_http_conn *c) {
    while (c->sent < c->req_len) {
        ssize_t n = send(c->fd, c->req + c->sent, c->req_len - c->sent, MSG_NOSIGNAL);
        if (n > 0) {
            c->sent += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            arm(c, 1);
            return;
        }
        lost(c, n < 0 ? errno : EPIPE);
        return;
    }
    arm(c, 0);
}

/* One read of what the socket holds. 1 when the response is still
 * incomplete: the caller reads again until the socket is empty (EAGAIN),
 * since the edge-triggered event fires only for what arrives later, and a
 * close or a reset queued behind the bytes just read raises no edge of its
 * own (a body delimited by the close ends at the read that returns 0); 0
 * when the response is complete or the connection is done with. closed: the
 * server's FIN came with this report (EV_CLOSED), so a complete response
 * does not keep the connection. A response read whole in one read costs one
 * read. */
static int on_readable(tb_http_conn *c, int closed) {
    char buf[READ_BUF], err[TB_ERR_LEN];
    size_t off = 0;
    ssize_t n = read(c->fd, buf, sizeof buf);
    if (n < 0) {
        if (errno == EINTR) return 1;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        if (c->busy)
            lost(c, errno);
        else
            close_fd(c);
        return 0;
    }
    if (n == 0) {
        if (c->busy)
            lost(c, 0);
        else
            close_fd(c); /* an idle keep-alive connection closed by the server */
        return 0;
    }
    if (!c->busy) { /* bytes nobody asked for: the server is confused; start afresh next time */
        close_fd(c);
        return 0;
    }
    while (off < (size_t)n) {
        ssize_t k = tb_http_parse(&c->p, buf + off, (size_t)n - off, err);
        if (k < 0) {
            finish(c, TB_HTTP_EPROTO, err);
            return 0;
        }
        off += (size_t)k;
        if (c->p.done) {
            /* bytes beyond the response are not ours; a closing server's connection is not kept */
            int keep = c->p.keep_alive && off == (size_t)n && !closed;
            jar_store(c);
            c->reused = 1;
            if (!keep) close_fd(c);
            finish(c, TB_HTTP_OK, "");
            return 0;
        }
    }
    return 1;
}

static void on_io(evutil_socket_t fd, short what, void *arg) {
    tb_http_conn *c = arg;
    (void)fd;
    if ((what & EV_WRITE) && c->fd >= 0) {
        if (!c->connected) {
            int e = 0;
            socklen_t sl = sizeof e;
            char err[TB_ERR_LEN];
            if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &sl) != 0) e = errno;
            if (e) {
                snprintf(err, sizeof err, "connect %s: %s", c->t->origin, strerror(e));
                if (c->busy)
                    finish(c, TB_HTTP_ECONNECT, err);
                else
                    close_fd(c);
                return;
            }
            c->connected = 1;
        }
        if (c->busy)
            flush(c);
        else
            arm(c, 0);
    }
    if (what & (EV_READ | EV_CLOSED)) {
        int reads = 0;
        while (c->fd >= 0 && on_readable(c, (what & EV_CLOSED) != 0)) {
            if (++reads == READS_PER_TURN) { /* a large body: the worker's other users go first */
                event_active(c->ev, EV_READ | (what & EV_CLOSED), 1);
                break;
            }
        }
    }
}

/* Opens the connection if needed and starts writing the request. 0, or -1
 * with errno when no socket could be opened or the connect failed at once. */
static int start(tb_http_conn *c) {
    tb_http_parser_reset(&c->p);
    c->sent = 0;
    if (c->fd < 0) {
        int one = 1;
        c->fd = socket(c->t->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->fd < 0) return -1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(c->fd, (const struct sockaddr *)&c->t->sa, c->t->sa_len) != 0 && errno != EINPROGRESS) {
            int e = errno;
            close_fd(c);
            errno = e;
            return -1;
        }
        arm(c, 1); /* writable = connected (or failed) */
        return 0;
    }
    if (c->connected) flush(c);
    return 0;
}

static void on_soon(evutil_socket_t fd, short what, void *arg) {
    tb_http_conn *c = arg;
    char err[TB_ERR_LEN];
    (void)fd;
    (void)what;
    snprintf(err, sizeof err, "%s %s: %s", c->soon_r == TB_HTTP_ECONNECT ? "connect" : "send", c->t->origin,
             strerror(c->soon_errno ? c->soon_errno : EPIPE));
    finish(c, (tb_http_result)c->soon_r, err);
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
    /* a failure inside (no socket, a refused connect, EPIPE on a reused
     * connection that cannot be retried) is reported on the next loop turn */
    c->in_send = 1;
    if (start(c) != 0) finish(c, TB_HTTP_ECONNECT, "");
    c->in_send = 0;
    return 0;
}

int tb_http_conn_has_cookie(const tb_http_conn *c, const char *name) {
    size_t nl = strlen(name);
    for (int i = 0; i < c->n_jar; i++)
        if (strncmp(c->jar[i], name, nl) == 0 && c->jar[i][nl] == '=') return 1;
    return 0;
}

void tb_http_conn_clear_cookies(tb_http_conn *c) { c->n_jar = 0; }

void tb_http_conn_free(tb_http_conn *c) {
    if (!c) return;
    close_fd(c);
    if (c->ev) event_free(c->ev);
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
    do
        rc = poll(&pf, 1, ms);
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
    if (connect(fd, (const struct sockaddr *)&t->sa, t->sa_len) != 0 && errno != EINPROGRESS)
        soerr = errno;
    else if (!wait_fd(fd, POLLOUT, timeout_ms))
        soerr = ETIMEDOUT;
    else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
        soerr = errno;
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
