/*
 * webapps.c: the reference web app in the embedded SUT: its data (schemas
 * web<N> in database tilebench_web, sut/web_load.h) and one `tilebench
 * webapp` process per tile (this very binary) on a free loopback port, each
 * with its log in DIR/web.tileN.log, waited on until it answers /healthz.
 */
#define _DEFAULT_SOURCE /* realpath, mkdtemp */
#include "sut/sut_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include "sut/web_load.h"

/* 1 when GET /healthz on sut_host():port answers 200 within a second. */
int sut_web_healthy(int port) {
    char rq[128], buf[64];
    size_t got = 0;
    int fd = sut_loopback_connect(port), ok = 0,
        n_rq = snprintf(rq, sizeof rq, "GET /healthz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", sut_host());
    if (fd < 0) return 0;
    if (write(fd, rq, (size_t)n_rq) == (ssize_t)n_rq) {
        while (got < 12) {
            ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        buf[got] = '\0';
        ok = got >= 12 && strncmp(buf, "HTTP/1.", 7) == 0 && strncmp(buf + 8, " 200", 4) == 0;
    }
    close(fd);
    return ok;
}

/* Starts `tilebench webapp` (this very binary) for tile on port, its output
 * appended to DIR/web.tileN.log. */
static int web_start(const char *self, const char *dir, int tile, int port, const char *pg_conninfo,
                     const tb_sut_endpoints *ep, svc *out, char *err) {
    char bin[PATH_MAX], logpath[PATH_MAX], listen[32], tilearg[16], redis[160], conninfo[512], name[32];
    int sprc;
    pid_t pid;
    snprintf(name, sizeof name, "web.tile%d.log", tile);
    if (sut_path_join(logpath, sizeof logpath, dir, name) != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return TB_SUT_EUSAGE;
    }
    sut_copy_str(bin, sizeof bin, self);
    sut_copy_str(conninfo, sizeof conninfo, pg_conninfo);
    snprintf(listen, sizeof listen, "%s:%d", sut_host(), port);
    snprintf(tilearg, sizeof tilearg, "%d", tile);
    snprintf(redis, sizeof redis, "%s:%d", tb_ep_str(ep->redis_host), ep->redis_port);
    char *argv[] = {bin, "webapp", "--listen", listen, "--pg", conninfo, "--tile", tilearg, "--redis", redis, NULL};
    pid = sut_spawn_logged(argv, NULL, logpath, &sprc, err);
    if (pid < 0) return sprc;
    sut_svc_record(out, pid, port, self);
    return 0;
}

/* Waits until every web app answers /healthz. */
static int web_healthy_arg(void *arg) { return sut_web_healthy(*(const int *)arg); }

static int web_wait(const sut_state *st, const char *dir, uint64_t deadline, char *err) {
    for (int t = 0; t < st->n_web; t++) {
        char name[32], logpath[PATH_MAX];
        const svc *w = &st->web[t];
        snprintf(name, sizeof name, "web.tile%d", t + 1);
        snprintf(logpath, sizeof logpath, "%s/%s.log", dir, name);
        int rc = sut_wait_ready(name, w, logpath, deadline, web_healthy_arg, (void *)&w->port, err);
        if (rc == 1) {
            tb_seterr(err, "%s on port %d did not answer /healthz within %us, see %s", name, w->port,
                      SUT_START_TIMEOUT_US / 1000000u, logpath);
            return TB_SUT_ESTART;
        }
        if (rc != 0) return rc;
    }
    return 0;
}

/* Loads the web data of tiles 1..n_web (schemas web<N>). */
static int load_web_data(const tb_sut_options *opt, const char *web_conninfo, int n_web, char *err) {
    int web_users = opt->web_users > 0 ? opt->web_users : TB_WEB_DEFAULT_USERS;
    for (int i = 1; i <= n_web; i++) {
        uint64_t t0 = tb_now_us();
        if (sut_interrupted(opt, err)) return TB_SUT_EINTR;
        if (tb_web_load(web_conninfo, i, web_users, err) != 0) return TB_SUT_ESTART;
        tb_log(TB_LOG_DEBUG, "web data for tile %d loaded in %.2fs", i, (double)(tb_now_us() - t0) / 1e6);
    }
    return 0;
}

/* n free loopback ports; every probe socket stays open until all are chosen. */
static int pick_web_ports(int n, int *ports, char *err) {
    int *fds = xcalloc((size_t)n, sizeof *fds), nfd = 0, rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        fds[i] = sut_port_probe(0, "web", &ports[i], err);
        if (fds[i] < 0)
            rc = TB_SUT_EUSAGE;
        else
            nfd++;
    }
    for (int i = 0; i < nfd; i++)
        close(fds[i]);
    free(fds);
    return rc;
}

/* The reference web app: data, then one process per tile on a free port,
 * all started before waiting on any. */
int sut_webapps_up(const tb_sut_options *opt, const char *dir, const char *web_conninfo, sut_state *st,
                   tb_sut_endpoints *ep, char *err) {
    int n_web = opt->tiles < TB_SUT_MAX_WEB_TILES ? opt->tiles : TB_SUT_MAX_WEB_TILES, rc = 0, i;
    char self[PATH_MAX];
    int *wports = xcalloc((size_t)n_web, sizeof *wports);
    if (n_web < opt->tiles)
        tb_log(TB_LOG_WARN, "sut up: the reference web app runs for tiles 1..%d only (of %d)", n_web, opt->tiles);
    if (!realpath("/proc/self/exe", self)) {
        tb_seterr(err, "/proc/self/exe: %s", strerror(errno));
        rc = TB_SUT_EUSAGE;
    }
    if (rc == 0) rc = load_web_data(opt, web_conninfo, n_web, err);
    if (rc == 0) rc = pick_web_ports(n_web, wports, err);
    for (i = 1; rc == 0 && i <= n_web; i++) {
        rc = web_start(self, dir, i, wports[i - 1], web_conninfo, ep, sut_state_web(st, i), err);
        if (rc == 0) rc = sut_write_state(dir, st, err) != 0 ? TB_SUT_ESTART : 0;
    }
    if (rc == 0) rc = web_wait(st, dir, tb_now_us() + SUT_START_TIMEOUT_US, err);
    for (i = 1; rc == 0 && i <= n_web; i++) {
        char url[sizeof "http://:" + INET_ADDRSTRLEN + 11]; /* %d: at most 11 bytes */
        snprintf(url, sizeof url, "http://%s:%d", sut_host(), wports[i - 1]);
        tb_endpoints_add_web_tile(ep, i, url);
    }
    free(wports);
    return rc;
}
