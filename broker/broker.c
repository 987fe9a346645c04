/*
 * broker.c: the synchronous hiredis connection to the broker.
 *
 * Timeouts: hiredis 0.14 bounds its connect with the timeout given to
 * redisConnectWithTimeout (a non-blocking connect and poll), and
 * redisSetTimeout sets SO_RCVTIMEO and SO_SNDTIMEO on the socket, so no read
 * or write of a command waits longer than the command timeout; a read that
 * times out fails with EAGAIN, which hiredis treats as an I/O error of a
 * blocking context (the connection is then unusable: we mark it broken).
 * A name is resolved with getaddrinfo before that, which the timeout does
 * not bound; a broker given by address does not resolve at all.
 *
 * SIGPIPE: hiredis writes with write(2), which raises SIGPIPE on a socket
 * the peer has reset. Each call that may write blocks SIGPIPE in the calling
 * thread and, when the call made one pending, takes it with sigtimedwait
 * before unblocking (the way libpq does it), so the process survives without
 * having to ignore SIGPIPE globally.
 */
#include "broker/broker.h"
#include "broker/tunnel.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tb_broker {
    redisContext *c; /* NULL after a failed reconnect */
    tb_broker_uri u; /* a copy: host, port, user, pass, db, tls, ca */
    tb_tunnel tun;   /* rediss://: the TLS child of the current connection */
    int connect_ms, cmd_ms;
    int broken;
    char last[TB_ERR_LEN]; /* why it broke */
    char shown[320];
};

/* ---- SIGPIPE kept from the process ---- */

typedef struct {
    sigset_t old;
    int was_pending;
} pipe_guard;

static void pipe_block(pipe_guard *g) {
    sigset_t s, pend;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &s, &g->old);
    sigemptyset(&pend);
    g->was_pending = sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE) == 1;
}

static void pipe_unblock(pipe_guard *g) {
    sigset_t s, pend;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    sigemptyset(&pend);
    if (!g->was_pending && sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE) == 1) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&s, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* ---- errors ---- */

static struct timeval ms_tv(int ms) {
    struct timeval tv;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    return tv;
}

/* hiredis's errstr ("Connection refused") as "connection refused", and a
 * socket timeout (EAGAIN) as what it means here. */
static void io_text(const tb_broker *b, const redisContext *c, char *out, size_t len) {
    if (!c) {
        snprintf(out, len, "out of memory");
        return;
    }
    if (c->err == REDIS_ERR_IO && strcmp(c->errstr, strerror(EAGAIN)) == 0)
        snprintf(out, len, "no reply within %d ms (timed out)", b->cmd_ms);
    else if (c->err == REDIS_ERR_EOF)
        snprintf(out, len, "the server closed the connection");
    else
        snprintf(out, len, "%s", c->errstr[0] ? c->errstr : "I/O error");
    if (out[0] && isupper((unsigned char)out[0]) && !isupper((unsigned char)out[1]))
        out[0] = (char)tolower((unsigned char)out[0]);
}

/* The connection failed in what: marks it broken, err "broker X: what: why". */
static void io_fail(tb_broker *b, const char *what, char *err) {
    char why[160];
    io_text(b, b->c, why, sizeof why);
    b->broken = 1;
    tb_seterr(b->last, "%s%s%s", what ? what : "", what ? ": " : "", why);
    tb_seterr(err, "broker %s: %s", b->shown, b->last);
}

/* An error text from the server is dropped whole if it quotes the password. */
static void keep_secret(const tb_broker *b, char *err) {
    if (err && b->u.pass && strstr(err, b->u.pass))
        tb_seterr(err, "broker %s: the server's error text is withheld (it quotes the password)", b->shown);
}

/* r: a reply or NULL (an I/O error); an error reply becomes NULL with err. */
static redisReply *finish(tb_broker *b, redisReply *r, const char *what, char *err) {
    if (!r) {
        io_fail(b, what, err);
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        tb_seterr(err, "broker %s: %s%s%.*s", b->shown, what ? what : "", what ? ": " : "", (int)r->len, r->str);
        keep_secret(b, err);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

/* 0 when the connection may be used, else -1 with err. */
static int usable(tb_broker *b, char *err) {
    if (!b) {
        tb_seterr(err, "broker: not connected");
        return -1;
    }
    if (b->broken || !b->c) {
        tb_seterr(err, "broker %s: connection broken (%s); reconnect first", b->shown,
                  b->last[0] ? b->last : "not connected");
        return -1;
    }
    return 0;
}

/* The command's name for messages: argv[0], or the leading word of a format. */
static void cmd_name(const char *s, size_t n, char *out, size_t len) {
    size_t k = 0;
    while (k < n && k + 1 < len && isalpha((unsigned char)s[k])) {
        out[k] = (char)toupper((unsigned char)s[k]);
        k++;
    }
    out[k] = '\0';
}

/* ---- commands ---- */

redisReply *tb_broker_cmd(tb_broker *b, char *err, const char *fmt, ...) {
    va_list ap;
    redisReply *r;
    pipe_guard g;
    char name[24];
    if (usable(b, err) != 0) return NULL;
    cmd_name(fmt, strlen(fmt), name, sizeof name);
    pipe_block(&g);
    va_start(ap, fmt);
    r = redisvCommand(b->c, fmt, ap);
    va_end(ap);
    pipe_unblock(&g);
    return finish(b, r, name[0] ? name : NULL, err);
}

redisReply *tb_broker_cmdv(tb_broker *b, int argc, const char **argv, const size_t *lens, char *err) {
    redisReply *r;
    pipe_guard g;
    char name[24];
    if (usable(b, err) != 0) return NULL;
    if (argc < 1) {
        tb_seterr(err, "broker %s: empty command", b->shown);
        return NULL;
    }
    cmd_name(argv[0], lens ? lens[0] : strlen(argv[0]), name, sizeof name);
    pipe_block(&g);
    r = redisCommandArgv(b->c, argc, argv, lens);
    pipe_unblock(&g);
    return finish(b, r, name[0] ? name : NULL, err);
}

int tb_broker_append(tb_broker *b, int argc, const char **argv, const size_t *lens) {
    if (usable(b, NULL) != 0 || argc < 1) return -1;
    return redisAppendCommandArgv(b->c, argc, argv, lens) == REDIS_OK ? 0 : -1;
}

redisReply *tb_broker_reply(tb_broker *b, char *err) {
    void *r = NULL;
    pipe_guard g;
    int rc;
    if (usable(b, err) != 0) return NULL;
    pipe_block(&g);
    rc = redisGetReply(b->c, &r);
    pipe_unblock(&g);
    if (rc != REDIS_OK) {
        if (r) freeReplyObject(r);
        r = NULL;
    }
    return finish(b, r, NULL, err);
}

int tb_broker_broken(const tb_broker *b) { return !b || b->broken || !b->c; }

int tb_broker_set_timeout(tb_broker *b, int timeout_ms) {
    if (!b || timeout_ms <= 0) return -1;
    b->cmd_ms = timeout_ms;
    if (b->c && !b->broken && redisSetTimeout(b->c, ms_tv(timeout_ms)) != REDIS_OK) return -1;
    return 0;
}

const char *tb_broker_shown(const tb_broker *b) { return b ? b->shown : "(none)"; }

/* ---- connecting ---- */

int tb_broker_info_version(const char *info, int *major, int *minor) {
    const char *p = info;
    while (p && *p) {
        if (strncmp(p, "redis_version:", 14) == 0) return sscanf(p + 14, "%d.%d", major, minor) == 2 ? 0 : -1;
        p = strchr(p, '\n');
        if (p) p++;
    }
    return -1;
}

static int auth(tb_broker *b, char *err) {
    const char *argv[3];
    redisReply *r;
    int argc = 0;
    argv[argc++] = "AUTH";
    if (b->u.user) argv[argc++] = b->u.user;
    argv[argc++] = b->u.pass;
    r = tb_broker_cmdv(b, argc, argv, NULL, err);
    if (r) {
        freeReplyObject(r);
        return 0;
    }
    if (!b->broken) {
        /* err is "broker X: AUTH: MESSAGE"; say what it means */
        const char *m = strstr(err, "AUTH: ");
        char msg[TB_ERR_LEN];
        snprintf(msg, sizeof msg, "%s", m ? m + 6 : "");
        tb_seterr(err, "broker %s: authentication failed (%s)", b->shown, msg);
        keep_secret(b, err);
    }
    return -1;
}

static int check_server(tb_broker *b, char *err) {
    redisReply *r;
    int major = 0, minor = 0;
    if (b->u.db != 0) {
        if (!(r = tb_broker_cmd(b, err, "SELECT %d", b->u.db))) return -1;
        freeReplyObject(r);
    }
    if (!(r = tb_broker_cmd(b, err, "INFO server"))) {
        if (!b->broken && strstr(err, "NOAUTH") && !b->u.pass) {
            char was[TB_ERR_LEN];
            snprintf(was, sizeof was, "%s", err);
            tb_seterr(err, "%s (the URI has no password: redis://:PASS@HOST or redis://USER:PASS@HOST)", was);
        }
        return -1;
    }
    if (r->type != REDIS_REPLY_STRING || tb_broker_info_version(r->str, &major, &minor) != 0) {
        tb_seterr(err, "broker %s: INFO server has no redis_version (is it a Redis server?)", b->shown);
        freeReplyObject(r);
        return -1;
    }
    freeReplyObject(r);
    if (major < 5) {
        tb_seterr(err, "broker %s: Redis %d.%d has no streams (5.0 or later is needed)", b->shown, major, minor);
        return -1;
    }
    return 0;
}

/* A TLS connection that failed before its first reply: stunnel's reason
 * (a certificate that does not verify, a refused connect) replaces hiredis's
 * "Server closed the connection". */
static void tls_why(tb_broker *b, char *err) {
    char why[TB_ERR_LEN - 64];
    if (!b->u.tls) return;
    tb_tunnel_why(&b->tun, 1000, why, sizeof why);
    if (why[0]) {
        tb_seterr(err, "broker %s (TLS): %s", b->shown, why);
        snprintf(b->last, sizeof b->last, "%s", err);
    }
}

/* Connects b->c afresh: connect, timeout, AUTH, SELECT, version. */
static int connect_once(tb_broker *b, char *err) {
    pipe_guard g;
    if (b->c) redisFree(b->c);
    b->c = NULL;
    tb_tunnel_close(&b->tun);
    b->broken = 0;
    b->last[0] = '\0';
    pipe_block(&g);
    if (b->u.tls) {
        if (tb_tunnel_open(&b->tun, b->u.host, b->u.port, b->u.ca, err) != 0) {
            pipe_unblock(&g);
            snprintf(b->last, sizeof b->last, "%s", err);
            goto fail;
        }
        /* hiredis owns the descriptor from here, and closes it in redisFree */
        if (!(b->c = redisConnectFd(b->tun.fd))) close(b->tun.fd);
    } else {
        b->c = redisConnectWithTimeout(b->u.host, b->u.port, ms_tv(b->connect_ms));
    }
    pipe_unblock(&g);
    if (!b->c || b->c->err) {
        io_fail(b, NULL, err);
        goto fail;
    }
    if (redisSetTimeout(b->c, ms_tv(b->cmd_ms)) != REDIS_OK) {
        io_fail(b, "setting the timeout", err);
        goto fail;
    }
    if (b->u.pass && auth(b, err) != 0) goto fail_tls;
    if (check_server(b, err) != 0) goto fail_tls;
    return 0;
fail_tls:
    tls_why(b, err);
fail:
    if (b->c) redisFree(b->c);
    b->c = NULL;
    tb_tunnel_close(&b->tun);
    b->broken = 1;
    if (!b->last[0]) snprintf(b->last, sizeof b->last, "the last connect failed");
    return -1;
}

static void make_shown(tb_broker *b) {
    const tb_broker_uri *u = &b->u;
    int v6 = strchr(u->host, ':') != NULL;
    char db[16] = "";
    if (u->db) snprintf(db, sizeof db, "/%d", u->db);
    /* a cut one ends in "...": still fine for messages */
    (void)tb_fmt_capped(b->shown, sizeof b->shown, "%s%s%s%s%s:%d%s", u->user ? u->user : "", u->user ? "@" : "",
                        v6 ? "[" : "", u->host, v6 ? "]" : "", u->port, db);
}

int tb_broker_connect(const tb_broker_uri *u, int timeout_ms, tb_broker **out, char *err) {
    tb_broker *b;
    *out = NULL;
    if (!u || !u->host || u->port <= 0 || u->port > 65535 || u->db < 0) {
        tb_seterr(err, "broker: no valid address to connect to");
        return -1;
    }
    if (timeout_ms <= 0) {
        tb_seterr(err, "broker %s:%d: timeout %d ms is not positive", u->host, u->port, timeout_ms);
        return -1;
    }
    b = xcalloc(1, sizeof *b);
    b->tun.fd = b->tun.log_fd = -1;
    b->u.host = xstrdup(u->host);
    b->u.user = u->user ? xstrdup(u->user) : NULL;
    b->u.pass = u->pass ? xstrdup(u->pass) : NULL;
    b->u.port = u->port;
    b->u.db = u->db;
    b->u.tls = u->tls;
    b->u.ca = u->ca ? xstrdup(u->ca) : NULL;
    b->connect_ms = b->cmd_ms = timeout_ms;
    make_shown(b);
    if (connect_once(b, err) != 0) {
        tb_broker_close(b);
        return -1;
    }
    *out = b;
    return 0;
}

int tb_broker_reconnect(tb_broker *b, char *err) {
    if (!b) {
        tb_seterr(err, "broker: not connected");
        return -1;
    }
    return connect_once(b, err);
}

void tb_broker_close(tb_broker *b) {
    if (!b) return;
    if (b->c) redisFree(b->c);
    tb_tunnel_close(&b->tun);
    tb_broker_uri_free(&b->u);
    free(b);
}

/* ---- clock ---- */

void tb_broker_clock_sample(int64_t broker_us, uint64_t t0, uint64_t t1, tb_broker_clock *out) {
    uint64_t rtt = t1 >= t0 ? t1 - t0 : 0;
    out->offset_us = broker_us - (int64_t)(t0 + rtt / 2);
    out->bound_us = (rtt + 1) / 2;
    out->rtt_us = rtt;
    out->probes = 1;
}

/* TIME's reply (two integer strings: seconds, microseconds) as unix µs. */
static int time_us(const redisReply *r, int64_t *us) {
    long long v[2];
    size_t i;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) return -1;
    for (i = 0; i < 2; i++) {
        const redisReply *e = r->element[i];
        char *end;
        if (e->type != REDIS_REPLY_STRING || e->len == 0 || e->len > 20) return -1;
        errno = 0;
        v[i] = strtoll(e->str, &end, 10);
        if (errno || *end || v[i] < 0) return -1;
    }
    if (v[1] >= 1000000 || v[0] > INT64_MAX / 1000000 - 1) return -1;
    *us = (int64_t)v[0] * 1000000 + v[1];
    return 0;
}

int tb_broker_clock_probe(tb_broker *b, int probes, tb_broker_clock *out, char *err) {
    tb_broker_clock best = {0, 0, UINT64_MAX, 0}, one;
    int i;
    if (probes < 1 || probes > 1000) {
        tb_seterr(err, "broker %s: %d clock probes (1..1000)", tb_broker_shown(b), probes);
        return -1;
    }
    for (i = 0; i < probes; i++) {
        int64_t bus;
        uint64_t t0 = tb_now_us(), t1;
        redisReply *r = tb_broker_cmd(b, err, "TIME");
        t1 = tb_now_us();
        if (!r) return -1;
        if (time_us(r, &bus) != 0) {
            freeReplyObject(r);
            tb_seterr(err, "broker %s: TIME: unexpected reply", b->shown);
            return -1;
        }
        freeReplyObject(r);
        tb_broker_clock_sample(bus, t0, t1, &one);
        if (one.rtt_us < best.rtt_us) best = one;
    }
    best.probes = probes;
    *out = best;
    return 0;
}
