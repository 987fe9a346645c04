/*
 * redis_fixture.h: a real redis-server for unit tests (test_kv_switch,
 * test_infra_migrate), on loopback at a free port, in a temporary folder,
 * no persistence. The test fails (never skips) when it cannot start.
 * Header-only: each test program includes it once.
 */
#ifndef TB_TESTS_REDIS_FIXTURE_H
#define TB_TESTS_REDIS_FIXTURE_H

#include <dirent.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct fx_redis {
    pid_t pid;
    int port;
    char dir[256];
} fx_redis;

static inline int fx_free_port(void) {
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

static inline const char *fx_redis_binary(void) {
    static const char *const cands[] = {"/usr/bin/redis-server", "/usr/sbin/redis-server",
                                        "/usr/local/bin/redis-server"};
    const char *e = getenv("TB_REDIS_SERVER");
    if (e && *e) return e;
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
        if (access(cands[i], X_OK) == 0) return cands[i];
    return NULL;
}

static inline redisContext *fx_connect(int port) {
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c && !c->err) {
        redisSetTimeout(c, tv);
        return c;
    }
    if (c) redisFree(c);
    return NULL;
}

/* Starts redis-server in the foreground as our child. 0, or -1 with why. */
static inline int fx_redis_start(fx_redis *r, char *why, size_t len) {
    const char *bin = fx_redis_binary();
    char port[16];
    memset(r, 0, sizeof r[0]);
    if (!bin) {
        snprintf(why, len, "redis-server not found (TB_REDIS_SERVER, /usr/bin): install redis-server");
        return -1;
    }
    snprintf(r->dir, sizeof r->dir, "/tmp/tb-fx-redis-XXXXXX");
    if (!mkdtemp(r->dir) || !(r->port = fx_free_port())) {
        snprintf(why, len, "temporary folder or port");
        return -1;
    }
    snprintf(port, sizeof port, "%d", r->port);
    r->pid = fork();
    if (r->pid == 0) {
        int dn = open("/dev/null", O_WRONLY);
        if (dn >= 0) dup2(dn, 1), dup2(dn, 2); /* never hold the test's output pipe open */
        prctl(PR_SET_PDEATHSIG, SIGKILL);      /* and never outlive a test that died */
        execl(bin, bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r->dir,
              "--daemonize", "no", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 250; i++) { /* 5 s */
        redisContext *c = fx_connect(r->port);
        if (c) {
            redisFree(c);
            return 0;
        }
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    snprintf(why, len, "redis-server on port %d did not answer", r->port);
    return -1;
}

static inline void fx_redis_stop(fx_redis *r) {
    DIR *d;
    struct dirent *e;
    char p[600];
    if (r->pid > 0) {
        kill(r->pid, SIGTERM);
        waitpid(r->pid, NULL, 0);
    }
    r->pid = 0;
    if (r->dir[0] && (d = opendir(r->dir))) {
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') {
                snprintf(p, sizeof p, "%s/%s", r->dir, e->d_name);
                unlink(p);
            }
        closedir(d);
        rmdir(r->dir);
    }
}

/* cmdstat_NAME calls in INFO commandstats of the Redis at port (0 when none; -1 unreachable). */
static inline long long fx_calls(int port, const char *name) {
    redisContext *c = fx_connect(port);
    redisReply *rep;
    char key[64];
    long long n = 0;
    const char *p;
    if (!c) return -1;
    rep = redisCommand(c, "INFO commandstats");
    snprintf(key, sizeof key, "cmdstat_%s:calls=", name);
    if (rep && rep->type == REDIS_REPLY_STRING && (p = strstr(rep->str, key))) n = atoll(p + strlen(key));
    if (rep) freeReplyObject(rep);
    redisFree(c);
    return n;
}

/* A live (not zombie) process whose command line (redis-server rewrites it
 * to "redis-server 127.0.0.1:PORT") names port. */
static inline int fx_redis_running_on(int port) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    char want[32], path[300], buf[512];
    int found = 0;
    snprintf(want, sizeof want, "127.0.0.1:%d", port);
    while (d && !found && (e = readdir(d))) {
        FILE *f;
        size_t n;
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        if (!(f = fopen(path, "r"))) continue;
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        for (size_t i = 0; i < n; i++)
            if (!buf[i]) buf[i] = ' ';
        if (strstr(buf, "redis-server") && strstr(buf, want)) {
            snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
            if ((f = fopen(path, "r"))) {
                n = fread(buf, 1, sizeof buf - 1, f);
                buf[n] = '\0';
                fclose(f);
                char *q = strrchr(buf, ')');
                found = q && q[1] == ' ' && q[2] != 'Z';
            }
        }
    }
    if (d) closedir(d);
    return found;
}

#endif
