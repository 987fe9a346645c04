/*
 * tunnel.c: one stunnel child per TLS connection to the broker (tunnel.h).
 *
 * The configuration goes to the child on a pipe (stunnel -fd 3), so no file
 * is written; its log (warnings and errors) comes back on another pipe, read
 * only to explain a failed connection. The child gets no descriptor of ours
 * but those, its signal mask cleared.
 */
#define _GNU_SOURCE
#include "broker/tunnel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/spawn.h"
#include "common/tb_common.h"

static int config_text(char *buf, size_t len, const char *host, int port, const char *ca) {
    int v6 = strchr(host, ':') != NULL, ip = v6;
    if (!v6) {
        const char *s = host;
        while (*s && ((*s >= '0' && *s <= '9') || *s == '.'))
            s++;
        ip = *s == '\0';
    }
    int n = snprintf(buf, len,
                     "pid =\ndebug = warning\noutput = /dev/stderr\nclient = yes\nconnect = %s%s%s:%d\n"
                     "verifyChain = yes\n%s = %s\n%s = %s\n",
                     v6 ? "[" : "", host, v6 ? "]" : "", port, ca ? "CAfile" : "CApath", ca ? ca : "/etc/ssl/certs",
                     ip ? "checkIP" : "checkHost", host);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Moves fd to 10 or above (close-on-exec), so the child's dup2 onto 0..3
 * never overwrites another of them. */
static int high(int fd) {
    int h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    return h;
}

static void child(const char *prog, int sock, int logw, int cfgr) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (dup2(sock, 0) < 0 || dup2(sock, 1) < 0 || dup2(logw, 2) < 0 || dup2(cfgr, 3) < 0) _exit(127);
    tb_spawn_close_from(4);
    execl(prog, prog, "-fd", "3", (char *)NULL);
    _exit(127);
}

int tb_tunnel_open(tb_tunnel *t, const char *host, int port, const char *ca, char *err) {
    char prog[512], cfg[2048];
    int sv[2], lp[2], cp[2];
    struct stat st;
    memset(t, 0, sizeof *t);
    t->fd = t->log_fd = -1;
    if (tb_spawn_find("stunnel", prog, sizeof prog) != 0 && tb_spawn_find("stunnel4", prog, sizeof prog) != 0) {
        tb_seterr(err, "rediss:// needs stunnel (Debian package stunnel4): not found in PATH");
        return -1;
    }
    if (ca && access(ca, R_OK) != 0) {
        tb_seterr(err, "rediss:// CA file %s: %s", ca, strerror(errno));
        return -1;
    }
    if (ca && (stat(ca, &st) != 0 || !S_ISREG(st.st_mode))) {
        tb_seterr(err, "rediss:// CA file %s: not a regular file (a PEM file of CA certificates)", ca);
        return -1;
    }
    if (config_text(cfg, sizeof cfg, host, port, ca) != 0) {
        tb_seterr(err, "rediss://: host or CA path too long");
        return -1;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) goto sys;
    if (pipe2(lp, O_CLOEXEC) != 0) goto sys_sv;
    if (pipe2(cp, O_CLOEXEC) != 0) goto sys_lp;
    /* the configuration is far smaller than a pipe's buffer: written whole before the fork */
    if (write(cp[1], cfg, strlen(cfg)) != (ssize_t)strlen(cfg)) goto sys_cp;
    close(cp[1]);
    sv[1] = high(sv[1]), lp[1] = high(lp[1]), cp[0] = high(cp[0]);
    if (sv[1] < 0 || lp[1] < 0 || cp[0] < 0) goto sys_high;
    t->pid = fork();
    if (t->pid == 0) child(prog, sv[1], lp[1], cp[0]);
    close(sv[1]), close(lp[1]), close(cp[0]);
    if (t->pid < 0) {
        t->pid = 0;
        close(sv[0]), close(lp[0]);
        tb_seterr(err, "rediss://: starting stunnel: %s", strerror(errno));
        return -1;
    }
    (void)fcntl(lp[0], F_SETFL, O_NONBLOCK);
    t->fd = sv[0];
    t->log_fd = lp[0];
    return 0;
sys_cp:
    close(cp[0]), close(cp[1]);
sys_lp:
    close(lp[0]), close(lp[1]);
sys_sv:
    close(sv[0]), close(sv[1]);
sys:
    tb_seterr(err, "rediss://: %s", strerror(errno));
    return -1;
sys_high:
    tb_seterr(err, "rediss://: %s", strerror(errno));
    close(sv[0]), close(lp[0]);
    if (sv[1] >= 0) close(sv[1]);
    if (lp[1] >= 0) close(lp[1]);
    if (cp[0] >= 0) close(cp[0]);
    return -1;
}

/* The text after "LOGn[...]: " of the most telling line of log: the first
 * error (LOG3, or "[!] " while stunnel reads its configuration), else the
 * first warning (LOG4), else "". */
static void pick(const char *log, char *buf, size_t len) {
    const char *best = NULL, *p = log;
    int best_level = 9;
    buf[0] = '\0';
    while (*p) {
        const char *e = strchr(p, '\n'), *l = strstr(p, " LOG");
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (l && l < p + n && l[4] >= '0' && l[4] <= '9' && l[4] - '0' < best_level) {
            const char *m = strstr(l, "]: ");
            if (m && m < p + n) best = m + 3, best_level = l[4] - '0';
        } else if (strncmp(p, "[!] ", 4) == 0 && best_level > 3) {
            best = p + 4, best_level = 3; /* before its log is set up: "[!] No trusted certificates found" */
        }
        p += n + (e != NULL);
    }
    if (best) {
        size_t n = strcspn(best, "\n");
        (void)tb_fmt_capped(buf, len, "stunnel: %.*s", (int)n, best);
    }
}

void tb_tunnel_why(tb_tunnel *t, int wait_ms, char *buf, size_t len) {
    char log[8192];
    size_t got = 0;
    struct pollfd pf;
    buf[0] = '\0';
    if (!t || t->log_fd < 0 || len == 0) return;
    pf.fd = t->log_fd;
    pf.events = POLLIN;
    while (got + 1 < sizeof log && poll(&pf, 1, wait_ms) > 0) {
        ssize_t n = read(t->log_fd, log + got, sizeof log - 1 - got);
        if (n <= 0) break;
        got += (size_t)n;
        wait_ms = 50; /* the rest of what it wrote at once */
    }
    log[got] = '\0';
    pick(log, buf, len);
}

void tb_tunnel_close(tb_tunnel *t) {
    if (!t) return;
    if (t->log_fd >= 0) close(t->log_fd);
    t->log_fd = -1;
    if (t->pid > 0) {
        /* its input has ended: it exits at once; a stuck one is ended after 1 s */
        for (int i = 0; i < 100; i++) {
            if (waitpid(t->pid, NULL, WNOHANG) != 0) goto done;
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        kill(t->pid, SIGKILL);
        (void)waitpid(t->pid, NULL, 0);
    }
done:
    t->pid = 0;
}
