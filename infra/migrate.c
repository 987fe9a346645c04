/*
 * migrate.c: the `migrate` infrastructure operation (docs/infra.md, "kind = migrate"),
 * a live migration of one tile's Redis data set. One op on tile T: start a
 * fresh redis-server (beside the SUT's Redis when it is on this host, else
 * loopback; a free port, its folder under the level's
 * folder), make it a replica of the Redis T is on (the SUT's at first, then
 * the instance T was last moved to), wait for the full sync, promote it
 * (REPLICAOF NO ONE), switch T's kv users to it through the load generator
 * (tb_infra_level.kv_switch), then shut down the instance T was on before
 * when it was one of ours. The level's end switches every moved tile back to
 * the SUT's Redis and removes every instance and folder.
 *
 * Redis's replication copies the whole instance, so the new instance holds
 * every tile's keys, not T's alone; the kv users of T alone go there.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/spawn.h"
#include "infra/infra_internal.h"
#include "sut/tools.h"

#define MIG_LOOPBACK      "127.0.0.1"
#define MIG_START_US      10000000u /* redis-server up and answering PING (tilebench choice) */
#define MIG_SHUTDOWN_US   5000000u  /* SHUTDOWN NOSAVE to gone, before SIGKILL (tilebench choice) */
#define MIG_PIDFILE_US    2000000u  /* a starting instance's pid file appears (tilebench choice) */
#define MIG_DRAIN_US      500000u   /* after the switch, before the old instance goes: ops in flight end */
#define MIG_CMD_TIMEOUT_S 5         /* one Redis command's answer */

/* One of our redis-server instances. port 0: none (the SUT's Redis). */
typedef struct mig_inst {
    char host[INET_ADDRSTRLEN]; /* the address it listens on (mig_state.host) */
    int port;
    pid_t pid;
    char dir[PATH_MAX];
} mig_inst;

typedef struct mig_tile {
    int busy;    /* an op is moving it */
    mig_inst on; /* where its kv users are: port 0 = the SUT's Redis */
} mig_tile;

typedef struct mig_state {
    pthread_mutex_t mu;
    char redis[PATH_MAX]; /* redis-server */
    char base[PATH_MAX];  /* <level folder>/migrate-NAME: the instances' folders */
    char sut_host[TB_SUT_MAX_HOST];
    int sut_port;
    char host[INET_ADDRSTRLEN]; /* where our instances listen: the SUT's Redis address when it is
                                   one of this host's (so agents that reach the SUT reach them),
                                   else loopback */
    const tb_infra_level *lv;
    int n_tiles;
    mig_tile *tiles; /* [tile - 1] */
    unsigned seq;    /* instances made so far (their folders' names) */
} mig_state;

static int mig_check(const tb_infra_def *d, const tb_sut_endpoints *ep, char *err) {
    char path[PATH_MAX], why[TB_ERR_LEN];
    const char *at = "migrate"; /* tb_infra_check puts "FILE:LINE: [infra.NAME]" before it */
    (void)d;
    if (sut_find_redis(path, sizeof path, why) != 0) {
        tb_seterr(err, "%s: %s", at, why);
        return -1;
    }
    if (!tb_ep_has(ep->redis_host) || ep->redis_port <= 0) {
        tb_seterr(err, "%s: the SUT has no Redis endpoint ([sut] redis = HOST:PORT)", at);
        return -1;
    }
    if (strlen(ep->redis_host) >= TB_SUT_MAX_HOST) {
        tb_seterr(err, "%s: the SUT's Redis host is longer than %d bytes", at, TB_SUT_MAX_HOST - 1);
        return -1;
    }
    return 0;
}

/* ---- small pieces ---- */

static void remove_tree(const char *dir) {
    if (dir[0] && infra_remove_tree(dir) != 0)
        tb_log(TB_LOG_WARN, "migrate: cannot remove %s: %s", dir, strerror(errno));
}

/* A port of host (an IPv4 address of this machine) nobody listens on now
 * (the kernel's pick). 0 on failure. */
static int free_port(const char *host) {
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;
    if (fd < 0) return 0;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        close(fd);
        return 0;
    }
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* 1 while pid is a live redis-server (not a zombie, not a reused pid). */
static int redis_alive(pid_t pid) {
    char path[64], buf[256], *p;
    FILE *f;
    size_t n;
    if (pid <= 0) return 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r"))) return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    return strstr(buf, "(redis-server") != NULL && p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static redisContext *connect_to(const char *host, int port) {
    struct timeval tv = {MIG_CMD_TIMEOUT_S, 0};
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (c && !c->err) redisSetTimeout(c, tv);
    return c;
}

/* Runs a command that answers +OK (or any status): 0, or -1 with err. */
static int cmd_ok(redisContext *c, char *err, const char *what, const char *fmt, ...) {
    va_list ap;
    redisReply *r;
    int rc = 0;
    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!r || r->type == REDIS_REPLY_ERROR) {
        tb_seterr(err, "%s: %s", what, r ? r->str : c->errstr);
        rc = -1;
    }
    if (r) freeReplyObject(r);
    return rc;
}

/* INFO SECTION's value of field into out ("" when absent). 0, or -1 with err. */
static int info_field(redisContext *c, const char *section, const char *field, char *out, size_t len, char *err) {
    redisReply *r = redisCommand(c, "INFO %s", section);
    size_t fl = strlen(field);
    out[0] = '\0';
    if (!r || r->type != REDIS_REPLY_STRING) {
        tb_seterr(err, "INFO %s: %s", section, r && r->type == REDIS_REPLY_ERROR ? r->str : c->errstr);
        if (r) freeReplyObject(r);
        return -1;
    }
    for (const char *p = r->str; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, field, fl) == 0 && p[fl] == ':') {
            size_t n = strcspn(p + fl + 1, "\r\n");
            if (n >= len) n = len - 1;
            memcpy(out, p + fl + 1, n);
            out[n] = '\0';
            break;
        }
    }
    freeReplyObject(r);
    return 0;
}

/* Sleeps us, in steps that look at *stop. -1 when stopped. */
static int nap(uint64_t us, volatile sig_atomic_t *stop) {
    uint64_t end = tb_now_us() + us;
    while (tb_now_us() < end) {
        if (stop && *stop) return -1;
        usleep(20000);
    }
    return stop && *stop ? -1 : 0;
}

/* ---- an instance's life ---- */

static int write_conf(const mig_inst *in, char *err) {
    char path[PATH_MAX + 16];
    FILE *f;
    int fd;
    snprintf(path, sizeof path, "%s/redis.conf", in->dir);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    /* the folder's path has no quote or backslash: it is the runner's
     * folder and names made here (checked in level_begin) */
    fprintf(f,
            "# written by tilebench's migrate operation for one instance; removed with it\n"
            "bind %s\nport %d\nprotected-mode no\ndaemonize yes\n"
            "dir \"%s\"\nlogfile \"%s/redis.log\"\npidfile \"%s/redis.pid\"\n"
            "save \"\"\nappendonly no\nmaxclients 10000\n"
            "repl-diskless-sync yes\nrepl-diskless-sync-delay 0\n",
            in->host, in->port, in->dir, in->dir, in->dir);
    if (fclose(f) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static pid_t read_pid(const mig_inst *in) {
    char path[PATH_MAX + 16];
    FILE *f;
    int pid = 0;
    snprintf(path, sizeof path, "%s/redis.pid", in->dir);
    if ((f = fopen(path, "r"))) {
        if (fscanf(f, "%d", &pid) != 1) pid = 0;
        fclose(f);
    }
    return (pid_t)pid;
}

/* SHUTDOWN NOSAVE, then SIGKILL if it is still there; removes its folder. */
static void inst_stop(mig_inst *in) {
    if (in->port > 0) {
        redisContext *c = connect_to(in->host, in->port);
        int asked = c && !c->err;
        if (asked) {
            redisReply *r = redisCommand(c, "SHUTDOWN NOSAVE"); /* no answer when it goes */
            if (r) freeReplyObject(r);
        }
        if (c) redisFree(c);
        /* a daemon that started but does not listen yet writes its pid
         * file once it does (Redis writes it after it binds): wait for it */
        for (uint64_t end = tb_now_us() + MIG_PIDFILE_US; in->pid <= 0 && (in->pid = read_pid(in)) <= 0;) {
            if (asked || tb_now_us() >= end) break;
            usleep(20000);
        }
        if (!asked && redis_alive(in->pid)) kill(in->pid, SIGTERM); /* not listening (yet): Redis ends on SIGTERM */
        for (uint64_t end = tb_now_us() + MIG_SHUTDOWN_US; redis_alive(in->pid) && tb_now_us() < end;)
            usleep(20000);
        if (redis_alive(in->pid)) {
            tb_log(TB_LOG_WARN, "migrate: redis-server on port %d (pid %d) did not shut down: killed", in->port,
                   (int)in->pid);
            kill(in->pid, SIGKILL);
            for (int i = 0; i < 50 && redis_alive(in->pid); i++)
                usleep(20000);
        }
    }
    remove_tree(in->dir);
    memset(in, 0, sizeof *in);
}

/* 1 when the instance's log says its port was taken before it could bind
 * it (another process got the free port between our look and its bind). */
static int port_was_taken(const mig_inst *in) {
    char path[PATH_MAX + 16], line[512];
    int taken = 0;
    FILE *f;
    snprintf(path, sizeof path, "%s/redis.log", in->dir);
    if (!(f = fopen(path, "r"))) return 0;
    while (!taken && fgets(line, sizeof line, f))
        taken = strstr(line, "Address already in use") != NULL;
    fclose(f);
    return taken;
}

/* Folder, config, redis-server (it daemonizes: it outlives the op and the
 * runner's process group), PING. 0, -2 when its port was taken (try another),
 * or -1 with err; nothing left behind on failure. */
static int inst_start_once(mig_state *st, int tile, mig_inst *in, uint64_t deadline, volatile sig_atomic_t *stop,
                           char *err) {
    const char *argv[3];
    char conf[PATH_MAX + 16], why[TB_ERR_LEN];
    tb_spawn_opts o;
    tb_spawn_result r;
    unsigned seq;
    memset(in, 0, sizeof *in);
    pthread_mutex_lock(&st->mu);
    seq = ++st->seq;
    pthread_mutex_unlock(&st->mu);
    if (tb_fmt_capped(in->dir, sizeof in->dir, "%s/t%d-%u", st->base, tile, seq) != 0 || mkdir(in->dir, 0700) != 0) {
        tb_seterr(err, "%s: %s", in->dir, errno ? strerror(errno) : "path too long");
        in->dir[0] = '\0';
        return -1;
    }
    snprintf(in->host, sizeof in->host, "%s", st->host);
    if (!(in->port = free_port(in->host))) {
        tb_seterr(err, "no free port on %s: %s", in->host, strerror(errno));
        inst_stop(in);
        return -1;
    }
    if (write_conf(in, err) != 0) {
        inst_stop(in);
        return -1;
    }
    snprintf(conf, sizeof conf, "%s/redis.conf", in->dir);
    argv[0] = st->redis, argv[1] = conf, argv[2] = NULL;
    memset(&o, 0, sizeof o);
    /* no stop flag here: stopping the parent could leave the daemon it forks
     * running unseen; it exits at once anyway, and the timeout bounds it */
    o.path = st->redis, o.argv = argv, o.output_max = 4096, o.new_group = 1;
    o.timeout_us = MIG_START_US;
    if (tb_spawn_run(&o, &r, why) != 0 || !r.exited || r.exit_status != 0) {
        char how[128];
        tb_spawn_describe(&r, &o, how, sizeof how);
        tb_seterr(err, "redis-server %s: %s%s%.120s", conf, r.output ? how : why, r.output_len ? ": " : "",
                  r.output ? r.output : "");
        tb_spawn_result_free(&r);
        inst_stop(in); /* a daemon it forked before it failed goes too */
        return -1;
    }
    tb_spawn_result_free(&r);
    if (deadline > tb_now_us() + MIG_START_US) deadline = tb_now_us() + MIG_START_US;
    for (;;) {
        redisContext *c = connect_to(in->host, in->port);
        int up = c && !c->err && cmd_ok(c, why, "PING", "PING") == 0;
        if (c) redisFree(c);
        if (up) break;
        if (port_was_taken(in)) {
            tb_seterr(err, "redis-server: port %d was taken before it could listen", in->port);
            inst_stop(in);
            return -2;
        }
        if (tb_now_us() >= deadline || (stop && *stop)) {
            tb_seterr(err, "redis-server on port %d did not answer PING (%s)", in->port,
                      stop && *stop ? "stopped" : "timed out");
            inst_stop(in);
            return -1;
        }
        usleep(20000);
    }
    in->pid = read_pid(in);
    return 0;
}

/* inst_start_once, with another free port when the one picked was taken. */
static int inst_start(mig_state *st, int tile, mig_inst *in, uint64_t deadline, volatile sig_atomic_t *stop,
                      char *err) {
    int rc = -2;
    for (int tries = 0; rc == -2 && tries < 5; tries++)
        rc = inst_start_once(st, tile, in, deadline, stop, err);
    return rc == 0 ? 0 : -1;
}

/* ---- one op ---- */

/* REPLICAOF src, wait for the full sync, REPLICAOF NO ONE; ROLE says master.
 * Fills *keys (DBSIZE) and *bytes (used_memory_dataset). 0, or -1 with err
 * and *st set. */
static int replicate(redisContext *c, const char *src_host, int src_port, uint64_t deadline,
                     volatile sig_atomic_t *stop, long long *keys, uint64_t *bytes, tb_op_status *status, char *err) {
    char link[32], busy[32], why[TB_ERR_LEN], mem[32];
    redisReply *r;
    *status = TB_OP_ERR_SERVER;
    if (cmd_ok(c, err, "REPLICAOF", "REPLICAOF %s %d", src_host, src_port) != 0) return -1;
    for (;;) {
        if (info_field(c, "replication", "master_link_status", link, sizeof link, err) != 0 ||
            info_field(c, "replication", "master_sync_in_progress", busy, sizeof busy, err) != 0)
            return -1;
        if (strcmp(link, "up") == 0 && strcmp(busy, "0") == 0) break;
        if (tb_now_us() >= deadline || (stop && *stop)) {
            *status = TB_OP_ERR_TIMEOUT;
            tb_seterr(err, "the sync from %s:%d did not finish (%s; master_link_status:%s)", src_host, src_port,
                      stop && *stop ? "stopped" : "timed out", link[0] ? link : "?");
            return -1;
        }
        usleep(20000);
    }
    if (cmd_ok(c, err, "REPLICAOF NO ONE", "REPLICAOF NO ONE") != 0) return -1;
    r = redisCommand(c, "ROLE");
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 1 || r->element[0]->type != REDIS_REPLY_STRING ||
        strcmp(r->element[0]->str, "master") != 0) {
        tb_seterr(err, "ROLE after REPLICAOF NO ONE: %s",
                  !r                             ? c->errstr
                  : r->type == REDIS_REPLY_ERROR ? r->str
                                                 : "not master");
        if (r) freeReplyObject(r);
        return -1;
    }
    freeReplyObject(r);
    r = redisCommand(c, "DBSIZE");
    if (!r || r->type != REDIS_REPLY_INTEGER) {
        tb_seterr(err, "DBSIZE: %s", !r ? c->errstr : r->type == REDIS_REPLY_ERROR ? r->str : "not a number");
        if (r) freeReplyObject(r);
        return -1;
    }
    *keys = r->integer;
    freeReplyObject(r);
    if (info_field(c, "memory", "used_memory_dataset", mem, sizeof mem, why) != 0) mem[0] = '\0';
    *bytes = strtoull(mem, NULL, 10);
    return 0;
}

/* Waits until no other op moves tile (bounded by deadline and *stop), then
 * claims it; *from gets where it is now. 0, or -1. */
static int claim(mig_state *st, int tile, mig_inst *from, uint64_t deadline, volatile sig_atomic_t *stop) {
    for (;;) {
        pthread_mutex_lock(&st->mu);
        if (!st->tiles[tile - 1].busy) {
            st->tiles[tile - 1].busy = 1;
            *from = st->tiles[tile - 1].on;
            pthread_mutex_unlock(&st->mu);
            return 0;
        }
        pthread_mutex_unlock(&st->mu);
        if (tb_now_us() >= deadline || (stop && *stop)) return -1;
        usleep(20000);
    }
}

static void release(mig_state *st, int tile, const mig_inst *now_on) {
    pthread_mutex_lock(&st->mu);
    if (now_on) st->tiles[tile - 1].on = *now_on;
    st->tiles[tile - 1].busy = 0;
    pthread_mutex_unlock(&st->mu);
}

static void fail(infra_op_out *out, tb_op_status status, const char *what) {
    out->status = status;
    tb_buf_putf(&out->text, "migrate: %s\n", what);
}

/* Replica, sync, promote, switch: the steps on the new instance in. 0, or -1
 * with err and *status. */
static int move(const infra_op_ctx *c, mig_state *st, const mig_inst *from, const mig_inst *in, uint64_t deadline,
                long long *keys, uint64_t *bytes, tb_op_status *status, char *err) {
    redisContext *rc = connect_to(in->host, in->port);
    const char *src_host = from->port ? from->host : st->sut_host;
    int src_port = from->port ? from->port : st->sut_port, r;
    if (!rc || rc->err) {
        *status = TB_OP_ERR_CONNECT;
        tb_seterr(err, "connect %s:%d: %s", in->host, in->port, rc ? rc->errstr : "out of memory");
        if (rc) redisFree(rc);
        return -1;
    }
    r = replicate(rc, src_host, src_port, deadline, c->stop, keys, bytes, status, err);
    redisFree(rc);
    if (r != 0) return -1;
    *status = TB_OP_ERR_SERVER;
    if (!c->lv->kv_switch) {
        tb_seterr(err, "this load generator cannot switch a tile's kv users to another Redis");
        return -1;
    }
    if (c->lv->kv_switch(c->lv->kv_switch_arg, c->tile, in->host, in->port, err) != 0) return -1;
    return 0;
}

static void mig_run(const infra_op_ctx *c, infra_op_out *out) {
    mig_state *st = c->state;
    mig_inst from, in;
    char err[TB_ERR_LEN];
    uint64_t t0 = tb_now_us(), deadline = t0 + (c->timeout_us ? c->timeout_us : 600000000u), bytes = 0;
    long long keys = 0;
    tb_op_status status = TB_OP_OK;
    out->status = TB_OP_OK;
    out->exit_code = -1;
    if (!st || c->tile < 1 || c->tile > st->n_tiles) {
        fail(out, TB_OP_ERR_SERVER, st ? "no such tile this level" : "no level state (level_begin failed)");
        return;
    }
    if (claim(st, c->tile, &from, deadline, c->stop) != 0) {
        fail(out, TB_OP_ERR_TIMEOUT, "another op kept moving the tile");
        return;
    }
    if (inst_start(st, c->tile, &in, deadline, c->stop, err) != 0) {
        release(st, c->tile, NULL);
        fail(out, TB_OP_ERR_SERVER, err);
        return;
    }
    if (move(c, st, &from, &in, deadline, &keys, &bytes, &status, err) != 0) {
        inst_stop(&in);
        release(st, c->tile, NULL);
        fail(out, status, err);
        return;
    }
    release(st, c->tile, &in);
    out->bytes = bytes;
    tb_buf_putf(&out->text,
                "migrate: tile %d moved from %s:%d to redis-server %s:%d: %lld keys (DBSIZE), "
                "%llu bytes of data set (used_memory_dataset), synced and switched in %.3fs\n",
                c->tile, from.port ? from.host : st->sut_host, from.port ? from.port : st->sut_port, in.host, in.port,
                keys, (unsigned long long)bytes, (double)(tb_now_us() - t0) / 1e6);
    /* the kv users' ops still in flight on the old instance end there first */
    if (from.port) {
        (void)nap(MIG_DRAIN_US, c->stop);
        inst_stop(&from);
    }
}

/* ---- the level ---- */

static void *mig_level_begin(const tb_infra_def *d, const tb_sut_endpoints *ep, const tb_infra_level *lv,
                             const char *dir, char *err) {
    char abs[PATH_MAX];
    mig_state *st;
    if (mig_check(d, ep, err) != 0) return NULL;
    if (strpbrk(dir, "\"\\\n")) {
        tb_seterr(err, "[infra.%s] migrate: the folder %s has a quote, backslash or newline in its name", d->name, dir);
        return NULL;
    }
    st = xcalloc(1, sizeof *st);
    /* absolute: redis-server moves into its `dir` before it opens its log */
    if (!realpath(dir, abs)) {
        tb_seterr(err, "[infra.%s] migrate: %s: %s", d->name, dir, strerror(errno));
        free(st);
        return NULL;
    }
    if (sut_find_redis(st->redis, sizeof st->redis, err) != 0 ||
        tb_fmt_capped(st->base, sizeof st->base, "%s/migrate-%s", abs, d->name) != 0 ||
        strlen(st->base) + 32 >= sizeof st->base) {
        if (!err[0]) tb_seterr(err, "[infra.%s] migrate: %s: path too long", d->name, dir);
        free(st);
        return NULL;
    }
    if (mkdir(st->base, 0700) != 0) {
        tb_seterr(err, "[infra.%s] migrate: %s: %s", d->name, st->base, strerror(errno));
        free(st);
        return NULL;
    }
    pthread_mutex_init(&st->mu, NULL);
    snprintf(st->sut_host, sizeof st->sut_host, "%s", ep->redis_host);
    st->sut_port = ep->redis_port;
    /* beside the SUT's Redis when it listens on an address of this host (sut
     * up --listen), so the kv users that reach it reach the copy too */
    snprintf(st->host, sizeof st->host, "%s", free_port(ep->redis_host) ? ep->redis_host : MIG_LOOPBACK);
    st->lv = lv;
    st->n_tiles = lv->tiles > 0 ? lv->tiles : 1;
    st->tiles = xcalloc((size_t)st->n_tiles, sizeof *st->tiles);
    return st;
}

/* Every moved tile back to the SUT's Redis (writes made on the copy are
 * dropped with it), every instance shut down, every folder removed. */
static void mig_level_end(void *state, const tb_infra_level *lv) {
    mig_state *st = state;
    char err[TB_ERR_LEN];
    if (!st) return;
    if (!lv) lv = st->lv;
    for (int t = 0; t < st->n_tiles; t++) {
        mig_inst *in = &st->tiles[t].on;
        if (!in->port) continue;
        if (!lv->kv_switch || lv->kv_switch(lv->kv_switch_arg, t + 1, st->sut_host, st->sut_port, err) != 0)
            tb_log(TB_LOG_WARN, "migrate: tile %d: cannot switch its kv users back to %s:%d: %s", t + 1, st->sut_host,
                   st->sut_port, lv->kv_switch ? err : "no switch");
    }
    (void)nap(MIG_DRAIN_US, NULL);
    for (int t = 0; t < st->n_tiles; t++)
        if (st->tiles[t].on.port) inst_stop(&st->tiles[t].on);
    remove_tree(st->base);
    pthread_mutex_destroy(&st->mu);
    free(st->tiles);
    free(st);
}

const infra_kind_vt infra_migrate_vt = {
    .kind = TB_INFRA_MIGRATE,
    .check = mig_check,
    .level_begin = mig_level_begin,
    .run = mig_run,
    .level_end = mig_level_end,
};
