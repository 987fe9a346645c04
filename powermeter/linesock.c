/*
 * linesock.c: line transport for the instrument drivers (see linesock.h):
 * TCP with a connect timeout, or a raw termios serial port, plus a buffered
 * reader that returns one line per call within a deadline.
 */
#define _DEFAULT_SOURCE /* B57600/B115200 and CRTSCTS are outside POSIX */
#include "powermeter/linesock.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

struct tb_linesock {
    int fd;
    int is_socket;
    char buf[TB_LS_MAX_LINE * 2];
    size_t have; /* bytes buffered in buf */
};

static tb_linesock *wrap_fd(int fd, int is_socket) {
    tb_linesock *c = xcalloc(1, sizeof *c);
    c->fd = fd;
    c->is_socket = is_socket;
    return c;
}

/* Milliseconds left until deadline_us for poll(); at least 0. */
static int ms_left(uint64_t deadline_us) {
    uint64_t now = tb_now_us();
    if (now >= deadline_us) return 0;
    return (int)((deadline_us - now + 999) / 1000);
}

/* Non-blocking connect of one address, waiting until deadline. fd or -1 with errno set. */
static int connect_one(const struct addrinfo *ai, uint64_t deadline_us) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    int one = 1, soerr = 0, rc;
    socklen_t sl = sizeof soerr;
    struct pollfd pfd;

    if (fd < 0) return -1;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) goto fail;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) goto fail;
    pfd.fd = fd;
    pfd.events = POLLOUT;
    do {
        rc = poll(&pfd, 1, ms_left(deadline_us));
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) {
        errno = ETIMEDOUT;
        goto fail;
    }
    if (rc < 0) goto fail;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) goto fail;
    if (soerr != 0) {
        errno = soerr;
        goto fail;
    }
    /* Queries are tiny and latency-bound: do not let Nagle hold them. */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
fail : {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}
}

int tb_linesock_connect(const char *host, const char *port, uint64_t timeout_us, tb_linesock **out, char *err) {
    struct addrinfo hints, *res = NULL, *ai;
    uint64_t deadline = tb_now_us() + timeout_us;
    int rc, fd = -1, last = ECONNREFUSED;

    *out = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        tb_seterr(err, "connect %s:%s: %s", host, port, gai_strerror(rc));
        return -1;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        fd = connect_one(ai, deadline);
        if (fd >= 0) break;
        last = errno;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        tb_seterr(err, "connect %s:%s: %s", host, port, last == ETIMEDOUT ? "timed out" : strerror(last));
        return -1;
    }
    *out = wrap_fd(fd, 1);
    return 0;
}

static speed_t baud_code(unsigned baud) {
    switch (baud) {
    case 1200: return B1200;
    case 2400: return B2400;
    case 4800: return B4800;
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    default: return (speed_t)0;
    }
}

int tb_linesock_open_serial(const char *path, unsigned baud, tb_linesock **out, char *err) {
    struct termios t;
    speed_t sp = baud_code(baud);
    int fd;

    *out = NULL;
    if (sp == (speed_t)0) {
        tb_seterr(err, "%s: baud %u not supported (1200..115200)", path, baud);
        return -1;
    }
    fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (tcgetattr(fd, &t) != 0) {
        tb_seterr(err, "%s: not a serial port: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    /* Raw mode by hand (cfmakeraw is not POSIX): no echo, no line editing, no
     * CR/NL translation, 8N1, receiver on, modem lines ignored. */
    t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF);
    t.c_oflag &= ~(tcflag_t)OPOST;
    t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB | CSTOPB | CRTSCTS);
    t.c_cflag |= CS8 | CREAD | CLOCAL;
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    if (cfsetispeed(&t, sp) != 0 || cfsetospeed(&t, sp) != 0 || tcsetattr(fd, TCSANOW, &t) != 0) {
        tb_seterr(err, "%s: cannot set %u 8N1: %s", path, baud, strerror(errno));
        close(fd);
        return -1;
    }
    (void)tcflush(fd, TCIOFLUSH);
    *out = wrap_fd(fd, 0);
    return 0;
}

int tb_linesock_send(tb_linesock *c, const char *line, const char *eol, uint64_t timeout_us, char *err) {
    char msg[TB_LS_MAX_LINE + 4];
    size_t n = strlen(line), e = strlen(eol), off = 0;
    uint64_t deadline = tb_now_us() + timeout_us;

    if (n + e >= sizeof msg) {
        tb_seterr(err, "send: line of %zu bytes is too long", n);
        return -1;
    }
    memcpy(msg, line, n);
    memcpy(msg + n, eol, e);
    n += e;
    while (off < n) {
        ssize_t w = c->is_socket ? send(c->fd, msg + off, n - off, MSG_NOSIGNAL) : write(c->fd, msg + off, n - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pfd = {c->fd, POLLOUT, 0};
            int rc = poll(&pfd, 1, ms_left(deadline));
            if (rc == 0) {
                tb_seterr(err, "send: timeout after %llu ms", (unsigned long long)(timeout_us / 1000));
                return -1;
            }
            continue;
        }
        if (w < 0 && (errno == EPIPE || errno == ECONNRESET)) {
            tb_seterr(err, "send: connection closed by peer");
            return -1;
        }
        tb_seterr(err, "send: %s", w < 0 ? strerror(errno) : "nothing written");
        return -1;
    }
    return 0;
}

/* Moves one complete line out of c->buf into buf if there is one. Length, 0 none, -1 too long. */
static int take_line(tb_linesock *c, char *buf, size_t len, int *got) {
    char *nl = memchr(c->buf, '\n', c->have);
    size_t n, used;
    *got = 0;
    if (!nl) {
        if (c->have >= sizeof c->buf - 1) return -1; /* a line without end that fills the buffer */
        return 0;
    }
    used = (size_t)(nl - c->buf) + 1;
    n = used - 1;
    if (n > 0 && c->buf[n - 1] == '\r') n--;
    if (n >= len) {
        memmove(c->buf, c->buf + used, c->have - used);
        c->have -= used;
        return -1;
    }
    memcpy(buf, c->buf, n);
    buf[n] = '\0';
    memmove(c->buf, c->buf + used, c->have - used);
    c->have -= used;
    *got = 1;
    return (int)n;
}

int tb_linesock_readline(tb_linesock *c, char *buf, size_t len, uint64_t timeout_us, char *err) {
    uint64_t deadline = tb_now_us() + timeout_us;
    for (;;) {
        int got, n = take_line(c, buf, len, &got);
        struct pollfd pfd;
        ssize_t r;
        int rc;
        if (n < 0) {
            tb_seterr(err, "reply line longer than %zu bytes", len - 1);
            c->have = 0;
            return TB_LS_ERROR;
        }
        if (got) return n;
        pfd.fd = c->fd;
        pfd.events = POLLIN;
        pfd.revents = 0;
        rc = poll(&pfd, 1, ms_left(deadline));
        if (rc < 0 && errno == EINTR) continue;
        if (rc < 0) {
            tb_seterr(err, "poll: %s", strerror(errno));
            return TB_LS_ERROR;
        }
        if (rc == 0) {
            tb_seterr(err, "reply timeout after %llu ms", (unsigned long long)(timeout_us / 1000));
            return TB_LS_TIMEOUT;
        }
        r = read(c->fd, c->buf + c->have, sizeof c->buf - 1 - c->have);
        if (r > 0) {
            c->have += (size_t)r;
            continue;
        }
        if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (r == 0 || errno == ECONNRESET || errno == EIO) {
            /* EIO: the far side of a pty went away. */
            tb_seterr(err, "connection closed by peer");
            return TB_LS_CLOSED;
        }
        tb_seterr(err, "read: %s", strerror(errno));
        return TB_LS_ERROR;
    }
}

void tb_linesock_close(tb_linesock *c) {
    if (!c) return;
    if (c->fd >= 0) close(c->fd);
    free(c);
}

int tb_linesock_split_hostport(const char *auth, const char *default_port, char *host, size_t hostlen, char *port,
                               size_t portlen, const char **rest, char *err) {
    size_t n = strcspn(auth, "/?#"), hl;
    const char *h = auth, *colon = NULL, *p;
    const char *end = auth + n;

    if (rest) *rest = end;
    if (n == 0) {
        tb_seterr(err, "missing host (expected HOST:PORT)");
        return -1;
    }
    if (memchr(auth, '@', strcspn(auth, "?#"))) {
        /* not echoed: what stands before the '@' may be a password */
        tb_seterr(err, "a user or password has no place in this URI (expected HOST:PORT)");
        if (rest) *rest = auth + strlen(auth);
        return -1;
    }
    if (*h == '[') {
        const char *rb = memchr(h, ']', n);
        if (!rb) {
            tb_seterr(err, "'%.*s': unterminated '[' in IPv6 address", (int)n, auth);
            return -1;
        }
        h = auth + 1;
        hl = (size_t)(rb - h);
        if (rb + 1 < end) {
            if (rb[1] != ':') {
                tb_seterr(err, "'%.*s': expected ':' after ']'", (int)n, auth);
                return -1;
            }
            colon = rb + 1;
        }
    } else {
        for (p = auth; p < end; p++)
            if (*p == ':') colon = p;
        hl = colon ? (size_t)(colon - auth) : n;
    }
    if (hl == 0 || hl >= hostlen) {
        tb_seterr(err, "'%.*s': %s", (int)n, auth, hl ? "host name too long" : "missing host");
        return -1;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    if (colon) {
        size_t pl = (size_t)(end - colon - 1);
        unsigned long v = 0;
        if (pl == 0 || pl >= portlen || pl > 5) {
            tb_seterr(err, "'%.*s': bad port", (int)n, auth);
            return -1;
        }
        for (p = colon + 1; p < end; p++) {
            if (*p < '0' || *p > '9') {
                tb_seterr(err, "'%.*s': bad port", (int)n, auth);
                return -1;
            }
            v = v * 10 + (unsigned long)(*p - '0');
        }
        if (v == 0 || v > 65535) {
            tb_seterr(err, "'%.*s': port must be 1..65535", (int)n, auth);
            return -1;
        }
        memcpy(port, colon + 1, pl);
        port[pl] = '\0';
    } else {
        if (!default_port) {
            tb_seterr(err, "'%.*s': missing port (expected HOST:PORT)", (int)n, auth);
            return -1;
        }
        snprintf(port, portlen, "%s", default_port);
    }
    return 0;
}
