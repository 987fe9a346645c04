/*
 * meter_sim.c: the power meter emulator's server (meter_sim.h): one thread,
 * one poll() loop over the listening socket, the clients and an optional
 * pty, handing each line to the dialect served (sim_yokogawa.c for WT310 and
 * WT210, sim_ptd.c for PTDaemon). What it serves comes from sim_source.c.
 */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname are XSI */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "metersim/sim_private.h"

static int bind_listen(tb_msim *m, char *err) {
    struct addrinfo hints, *res = NULL;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int one = 1, rc;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    rc = getaddrinfo(m->o.host, m->o.port, &hints, &res);
    if (rc != 0) {
        tb_seterr(err, "listen %s:%s: %s", m->o.host, m->o.port, gai_strerror(rc));
        return -1;
    }
    m->lfd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (m->lfd < 0 || setsockopt(m->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(m->lfd, res->ai_addr, res->ai_addrlen) != 0 || listen(m->lfd, 16) != 0) {
        tb_seterr(err, "listen %s:%s: %s", m->o.host, m->o.port, strerror(errno));
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    if (getsockname(m->lfd, (struct sockaddr *)&ss, &sl) != 0) {
        tb_seterr(err, "getsockname: %s", strerror(errno));
        return -1;
    }
    m->port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return 0;
}

static int open_pty(tb_msim *m, char *err) {
    struct termios t;
    const char *name;
    int fd = posix_openpt(O_RDWR | O_NOCTTY);
    if (fd < 0 || grantpt(fd) != 0 || unlockpt(fd) != 0 || !(name = ptsname(fd))) {
        tb_seterr(err, "pty: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    snprintf(m->pty_path, sizeof m->pty_path, "%s", name);
    /* Raw on our side too, so '\n' is not turned into "\r\n" on the way out. */
    if (tcgetattr(fd, &t) == 0) {
        t.c_oflag &= ~(tcflag_t)OPOST;
        t.c_lflag &= ~(tcflag_t)(ECHO | ICANON | ISIG | IEXTEN);
        t.c_iflag &= ~(tcflag_t)(ICRNL | INLCR | IGNCR | IXON);
        (void)tcsetattr(fd, TCSANOW, &t);
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    m->pty_fd = fd;
    m->clients[0] = xcalloc(1, sizeof(client));
    m->clients[0]->fd = fd;
    m->clients[0]->is_socket = 0;
    return 0;
}

int tb_msim_open(const tb_msim_opts *o, tb_msim **out, char *err) {
    tb_msim *m = xcalloc(1, sizeof *m);
    *out = NULL;
    m->o = *o;
    m->o.trace = NULL;
    m->o.cpu_model = NULL;
    m->lfd = -1;
    m->pty_fd = -1;
    if (o->elements < 1 || o->elements > 3) {
        tb_seterr(err, "elements: %d: must be 1..3", o->elements);
        goto fail;
    }
    if (o->trace && tb_msim_trace_load(o->trace, &m->trace, err) != 0) goto fail;
    if (o->n_cpu_of > 0) {
        if (sim_tree_open(m, err) != 0) goto fail;
    } else if (o->cpu_model) {
        char e[TB_ERR_LEN];
        if (tb_meter_open(o->cpu_model, &m->cpu, e) != 0) {
            tb_seterr(err, "cpu model: %s", e);
            goto fail;
        }
    }
    sim_yoko_reset(m);
    m->vrange_ptd = 300;
    m->arange_ptd = 20;
    if (bind_listen(m, err) != 0) goto fail;
    if (o->pty && open_pty(m, err) != 0) goto fail;
    m->trace_wait = m->trace && o->trace_from_request;
    m->t0_us = m->trace_wait ? 0 : tb_now_us();
    if (o->n_cpu_of == 0) m->cpu_last_w = 0;
    m->src_v = m->src_a = m->src_pf = NAN;
    *out = m;
    return 0;
fail:
    tb_msim_close(m);
    return -1;
}

int tb_msim_port(const tb_msim *m) { return m->port; }
const char *tb_msim_pty_path(const tb_msim *m) { return m->pty_path; }
uint64_t tb_msim_t0_us(const tb_msim *m) { return m->t0_us; }

static void drop_client(tb_msim *m, int i) {
    client *c = m->clients[i];
    if (!c) return;
    if (!c->is_socket) { /* the pty stays; only its input is forgotten */
        c->have = 0;
        c->rl_pending = 0;
        return;
    }
    close(c->fd);
    free(c);
    m->clients[i] = NULL;
}

void tb_msim_close(tb_msim *m) {
    if (!m) return;
    for (int i = 0; i < SIM_MAX_CLIENTS; i++) {
        if (m->clients[i] && m->clients[i]->is_socket) close(m->clients[i]->fd);
        free(m->clients[i]);
    }
    if (m->pty_fd >= 0) close(m->pty_fd);
    if (m->lfd >= 0) close(m->lfd);
    tb_meter_close(m->cpu);
    tb_msim_trace_free(m->trace);
    free(m);
}

/* Sends text as is (a short reply on a local socket: a blocking write loop is fine). */
void sim_put(client *c, const char *s) {
    size_t n = strlen(s), off = 0;
    int spins = 0;
    while (off < n) {
        ssize_t w = c->is_socket ? send(c->fd, s + off, n - off, MSG_NOSIGNAL) : write(c->fd, s + off, n - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && (errno == EINTR || errno == EAGAIN) && spins++ < 1000) {
            struct pollfd p = {c->fd, POLLOUT, 0};
            (void)poll(&p, 1, 10);
            continue;
        }
        return; /* the peer is gone; its read side will notice */
    }
}

void sim_put_counters(tb_msim *m, client *c, const char *eol) {
    tb_msim_counters k;
    char line[512];
    tb_msim_get_counters(m, &k);
    tb_msim_format_counters(&k, line, sizeof line);
    strncat(line, eol, sizeof line - strlen(line) - 1);
    sim_put(c, line);
}

/* ---- the loop ---- */

static void handle_input(tb_msim *m, int i) {
    client *c = m->clients[i];
    for (;;) {
        char *nl = memchr(c->in, '\n', c->have);
        char line[SIM_LINE];
        size_t n, used;
        int rc;
        if (!nl) {
            if (c->have >= sizeof c->in - 1) c->have = 0; /* a runaway line: forget it */
            return;
        }
        used = (size_t)(nl - c->in) + 1;
        n = used - 1;
        if (n > 0 && c->in[n - 1] == '\r') n--;
        if (n >= sizeof line) n = sizeof line - 1;
        memcpy(line, c->in, n);
        line[n] = '\0';
        memmove(c->in, c->in + used, c->have - used);
        c->have -= used;
        if (c->rl_pending) continue; /* a PTD client talking while it waits: ignore */
        rc = m->o.protocol == TB_MSIM_PTD        ? sim_ptd_line(m, c, line)
             : m->o.protocol == TB_MSIM_PTD_TEMP ? sim_ptd_temp_line(m, c, line)
                                                 : sim_yoko_line(m, c, line);
        if (rc == SIM_DISCONNECT) {
            drop_client(m, i);
            return;
        }
    }
}

/* A new connection into a free client slot (closed when there is none). */
static void accept_client(tb_msim *m) {
    int fd = accept(m->lfd, NULL, NULL);
    int slot;
    if (fd < 0) return;
    for (slot = 0; slot < SIM_MAX_CLIENTS && m->clients[slot]; slot++) {
    }
    if (slot == SIM_MAX_CLIENTS) {
        close(fd);
        return;
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    m->clients[slot] = xcalloc(1, sizeof(client));
    m->clients[slot]->fd = fd;
    m->clients[slot]->is_socket = 1;
    m->c.connections++;
}

/* Reads what client i sent and handles its complete lines. */
static void read_client(tb_msim *m, int i) {
    client *c = m->clients[i];
    ssize_t r;
    if (!c) return;
    r = read(c->fd, c->in + c->have, sizeof c->in - 1 - c->have);
    if (r > 0) {
        c->have += (size_t)r;
        handle_input(m, i);
    } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        if (c->is_socket) {
            drop_client(m, i);
        } else {
            struct timespec ts = {0, 50000000}; /* pty without a reader: do not spin */
            nanosleep(&ts, NULL);
        }
    }
}

/* Prints the counters line to out (on request: SIGUSR1 in the CLI). */
static void dump_counters(const tb_msim *m, FILE *out) {
    tb_msim_counters k;
    char line[512];
    tb_msim_get_counters(m, &k);
    tb_msim_format_counters(&k, line, sizeof line);
    fprintf(out, "counters: %s\n", line);
    fflush(out);
}

int tb_msim_run(tb_msim *m, volatile sig_atomic_t *stop, volatile sig_atomic_t *dump, FILE *out, char *err) {
    struct pollfd pfd[SIM_MAX_CLIENTS + 1];
    int map[SIM_MAX_CLIENTS + 1];

    m->out = out;
    while (!*stop) {
        int n = 0, timeout = 200, rc;
        if (dump && *dump) {
            *dump = 0;
            dump_counters(m, out);
        }
        /* Pending RLs: answer those whose sample has come; sleep until the next. */
        sim_ptd_pending(m, &timeout);
        pfd[n].fd = m->lfd;
        pfd[n].events = POLLIN;
        map[n++] = -1;
        for (int i = 0; i < SIM_MAX_CLIENTS; i++) {
            if (!m->clients[i]) continue;
            pfd[n].fd = m->clients[i]->fd;
            pfd[n].events = POLLIN;
            map[n++] = i;
        }
        rc = poll(pfd, (nfds_t)n, timeout);
        if (rc < 0 && errno == EINTR) continue;
        if (rc < 0) {
            tb_seterr(err, "poll: %s", strerror(errno));
            return -1;
        }
        for (int k = 0; k < n; k++) {
            if (!pfd[k].revents) continue;
            if (map[k] < 0)
                accept_client(m);
            else
                read_client(m, map[k]);
        }
    }
    return 0;
}
