/*
 * deploy.c: the deploy kind of infrastructure operation, a fresh server
 * provisioned the way a template deploy does it: a new PostgreSQL cluster
 * (initdb in the op's folder), its postmaster started on a Unix socket in
 * that folder only (no TCP), one tile's data set loaded (tb_oltp_load, the
 * OLTP workload's own schema and data), one DS2 order run against it (the
 * purchase() function the OLTP users call) and read back, the server
 * stopped, and the folder removed (by the runner).
 *
 * PostgreSQL refuses to run as root: as root, initdb and postgres run as
 * Debian's "postgres" account (as the embedded SUT's do), which then owns
 * the cluster's folders.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <errno.h>
#include <libpq-fe.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/spawn.h"
#include "infra/infra_internal.h"
#include "sut/oltp_load.h"
#include "sut/supervisor.h"

#define DEPLOY_OS_USER "postgres"  /* the server's account under root */
#define DEPLOY_DB_USER "tilebench" /* the cluster's superuser (initdb -U) */
#define DEPLOY_PORT    5432        /* only names the socket: no TCP */
#define DEPLOY_STOP_US 10000000u   /* fast shutdown, then SIGKILL */
#define SOCK_PATH_MAX  107         /* sizeof(sun_path) - 1 on Linux */

typedef struct deploy_state {
    char initdb[PATH_MAX], postgres[PATH_MAX];
    run_as ra; /* active under root */
} deploy_state;

static int deploy_check(const tb_infra_def *d, const tb_sut_endpoints *ep, char *err) {
    char path[PATH_MAX], e[TB_ERR_LEN];
    (void)d;
    (void)ep;
    if (infra_find_pg_program("initdb", "postgresql", path, sizeof path, e) != 0 ||
        infra_find_pg_program("postgres", "postgresql", path, sizeof path, e) != 0) {
        tb_seterr(err, "deploy: %s", e);
        return -1;
    }
    return 0;
}

/* Under root: every folder on the way to dir can be entered by the server's
 * account (o+x, or its own). */
static int check_path(const char *dir, const run_as *ra, char *err) {
    char p[PATH_MAX];
    size_t n = strlen(dir);
    if (!ra->active) return 0;
    if (n >= sizeof p) {
        tb_seterr(err, "deploy: %s: path too long", dir);
        return -1;
    }
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        struct stat st;
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (stat(p, &st) != 0 || (!(st.st_mode & S_IXOTH) && st.st_uid != ra->uid)) {
            tb_seterr(err,
                      "deploy: user " DEPLOY_OS_USER " (PostgreSQL cannot run as root) cannot enter %s; chmod o+x it",
                      p);
            return -1;
        }
        p[i] = c;
    }
    return 0;
}

static void *deploy_begin(const tb_infra_def *d, const tb_sut_endpoints *ep, const tb_infra_level *lv, const char *dir,
                          char *err) {
    deploy_state *s = xcalloc(1, sizeof *s);
    char e[TB_ERR_LEN];
    (void)d;
    (void)ep;
    (void)lv;
    if (infra_find_pg_program("initdb", "postgresql", s->initdb, sizeof s->initdb, e) != 0 ||
        infra_find_pg_program("postgres", "postgresql", s->postgres, sizeof s->postgres, e) != 0) {
        tb_seterr(err, "deploy: %s", e);
        free(s);
        return NULL;
    }
    if ((geteuid() == 0 && sut_run_as_lookup(DEPLOY_OS_USER, &s->ra, err) != 0) || check_path(dir, &s->ra, err) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

static void deploy_end(void *state, const tb_infra_level *lv) {
    (void)lv;
    free(state);
}

/* One deploy op's paths and progress. */
typedef struct deploy_op {
    const infra_op_ctx *c;
    const deploy_state *s;
    infra_op_out *out;
    char data[PATH_MAX], sock[PATH_MAX], log[PATH_MAX], conninfo[PATH_MAX + 256];
    int tmp_sock; /* sock is a /tmp folder of ours (the op's folder's path was too long for a socket) */
    pid_t pid;    /* the postmaster, 0 none */
    uint64_t start;
} deploy_op;

static int fail(deploy_op *o, tb_op_status st, const char *fmt, const char *what) {
    o->out->status = st;
    tb_buf_putf(&o->out->text, "%s", o->out->text.len ? "; " : "");
    tb_buf_putf(&o->out->text, fmt, what);
    return -1;
}

static int left_or_fail(deploy_op *o, const char *step, uint64_t *left) {
    if (*o->c->stop) return fail(o, TB_OP_ERR_TIMEOUT, "stopped before %s", step);
    *left = infra_left_us(o->start, o->c->timeout_us);
    if (!*left) return fail(o, TB_OP_ERR_TIMEOUT, "timed out before %s", step);
    return 0;
}

/* The cluster's folders, owned by the server's account. */
static int make_dirs(deploy_op *o) {
    const run_as *ra = &o->s->ra;
    char host[2 * SOCK_PATH_MAX + 3];
    snprintf(o->data, sizeof o->data, "%s/data", o->c->dir);
    snprintf(o->log, sizeof o->log, "%s/postgres.log", o->c->dir);
    if (snprintf(o->sock, sizeof o->sock, "%s/s", o->c->dir) + (int)strlen("/.s.PGSQL.5432") > SOCK_PATH_MAX) {
        snprintf(o->sock, sizeof o->sock, "/tmp/tilebench-deploy-XXXXXX");
        if (!mkdtemp(o->sock)) return fail(o, TB_OP_ERR_IO, "mkdtemp: %s", strerror(errno));
        o->tmp_sock = 1;
    } else if (mkdir(o->sock, 0700) != 0) {
        return fail(o, TB_OP_ERR_IO, "mkdir: %s", strerror(errno));
    }
    if (mkdir(o->data, 0700) != 0) return fail(o, TB_OP_ERR_IO, "mkdir: %s", strerror(errno));
    if (ra->active && (chown(o->data, ra->uid, ra->gid) != 0 || chown(o->sock, ra->uid, ra->gid) != 0))
        return fail(o, TB_OP_ERR_IO, "chown to " DEPLOY_OS_USER ": %s", strerror(errno));
    if (infra_conninfo_quote(o->sock, host, sizeof host) != 0)
        return fail(o, TB_OP_ERR_IO, "socket folder %s: path too long", o->sock);
    snprintf(o->conninfo, sizeof o->conninfo,
             "host=%s port=%d dbname=postgres user=" DEPLOY_DB_USER " connect_timeout=5", host, DEPLOY_PORT);
    return 0;
}

static int run_initdb(deploy_op *o) {
    char dd[PATH_MAX + 16], e[TB_ERR_LEN], how[96];
    const char *argv[] = {
        o->s->initdb, dd,  "--username=" DEPLOY_DB_USER, "--auth=trust", "--encoding=UTF8", "--locale=C",
        "--no-sync",  NULL};
    tb_spawn_opts so;
    tb_spawn_result r;
    uint64_t left, t0 = tb_now_us();
    int rc = 0;
    if (left_or_fail(o, "initdb", &left) != 0) return -1;
    snprintf(dd, sizeof dd, "--pgdata=%s", o->data);
    memset(&so, 0, sizeof so);
    so.path = argv[0];
    so.argv = argv;
    so.output_max = 2048;
    so.timeout_us = left;
    so.new_group = 1;
    so.stop = o->c->stop;
    so.drop = o->s->ra.active;
    so.uid = o->s->ra.uid;
    so.gid = o->s->ra.gid;
    if (tb_spawn_run(&so, &r, e) != 0) {
        rc = fail(o, TB_OP_ERR_IO, "initdb: %s", e);
    } else if (!r.exited || r.exit_status != 0) {
        tb_spawn_describe(&r, &so, how, sizeof how);
        rc = fail(o, r.timed_out || r.stopped ? TB_OP_ERR_TIMEOUT : TB_OP_ERR_SERVER, "initdb: %s", how);
        tb_buf_putf(&o->out->text, ": %s", r.output);
    } else {
        infra_put_secs(&o->out->text, "initdb", tb_now_us() - t0);
    }
    tb_spawn_result_free(&r);
    return rc;
}

/* The postmaster's log, last line, into the op's account. */
static void put_log_tail(deploy_op *o) {
    char tail[512];
    sut_log_tail(o->log, tail, sizeof tail);
    if (tail[0]) tb_buf_putf(&o->out->text, " (server log: %s)", tail);
}

static int start_server(deploy_op *o) {
    char c_sock[PATH_MAX + 32], c_port[32], e[TB_ERR_LEN];
    char *argv[] = {(char *)o->s->postgres,
                    "-D",
                    o->data,
                    "-c",
                    "listen_addresses=",
                    "-c",
                    c_sock,
                    "-c",
                    c_port,
                    "-c",
                    "max_connections=20",
                    "-c",
                    "shared_buffers=32MB",
                    "-c",
                    "logging_collector=off",
                    NULL};
    uint64_t left, t0 = tb_now_us();
    int rc, status;
    if (left_or_fail(o, "start", &left) != 0) return -1;
    snprintf(c_sock, sizeof c_sock, "unix_socket_directories=%s", o->sock);
    snprintf(c_port, sizeof c_port, "port=%d", DEPLOY_PORT);
    if ((o->pid = sut_spawn_logged(argv, &o->s->ra, o->log, &rc, e)) < 0) {
        o->pid = 0;
        return fail(o, TB_OP_ERR_IO, "start postgres: %s", e);
    }
    while (PQping(o->conninfo) != PQPING_OK) {
        if (waitpid(o->pid, &status, WNOHANG) == o->pid) {
            o->pid = 0;
            fail(o, TB_OP_ERR_SERVER, "%s", "postgres exited during startup");
            put_log_tail(o);
            return -1;
        }
        if (left_or_fail(o, "the server answered", &left) != 0) return -1;
        usleep(20000);
    }
    infra_put_secs(&o->out->text, "start", tb_now_us() - t0);
    return 0;
}

/* While the data load runs (libpq, which no flag interrupts): at the stop
 * flag or the op's deadline, the postmaster gets SIGQUIT (immediate
 * shutdown), its connections drop and the load returns at once. */
typedef struct load_watch {
    deploy_op *o;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, fired;
} load_watch;

static void *watch_load(void *arg) {
    load_watch *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (*w->o->c->stop || !infra_left_us(w->o->start, w->o->c->timeout_us)) {
            kill(w->o->pid, SIGQUIT);
            w->fired = 1;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static int load_tile(deploy_op *o) {
    char ci[PATH_MAX + 400], e[TB_ERR_LEN], what[32];
    uint64_t left, t0 = tb_now_us();
    load_watch w = {.o = o};
    pthread_t th;
    int rc, watching;
    if (left_or_fail(o, "the load", &left) != 0) return -1;
    /* no statement may outlast the op's budget */
    snprintf(ci, sizeof ci, "%s options='-c statement_timeout=%llu'", o->conninfo,
             (unsigned long long)(left / 1000 + 1));
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    watching = pthread_create(&th, NULL, watch_load, &w) == 0;
    rc = tb_oltp_load(ci, o->c->tile, e);
    if (watching) {
        pthread_mutex_lock(&w.mu);
        w.done = 1;
        pthread_cond_signal(&w.cv);
        pthread_mutex_unlock(&w.mu);
        pthread_join(th, NULL);
    }
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
    if (w.fired)
        return fail(o, TB_OP_ERR_TIMEOUT, "load: %s", *o->c->stop ? "stopped (server shut down)" : "timed out");
    if (rc != 0) return fail(o, TB_OP_ERR_SERVER, "load: %s", e);
    snprintf(what, sizeof what, "load tile %d", o->c->tile);
    infra_put_secs(&o->out->text, what, tb_now_us() - t0);
    return 0;
}

static void drop_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}

/* One DS2 order (customer 1 buys products 1, 2, 3), then read back. */
static int order(deploy_op *o) {
    PGconn *pc;
    PGresult *r;
    char sql[256];
    long id = 0, lines = -1, cust = -1;
    uint64_t left;
    if (left_or_fail(o, "the order", &left) != 0) return -1;
    pc = PQconnectdb(o->conninfo);
    if (PQstatus(pc) != CONNECTION_OK) {
        fail(o, TB_OP_ERR_CONNECT, "order: connect: %s", PQerrorMessage(pc));
        PQfinish(pc);
        return -1;
    }
    PQsetNoticeProcessor(pc, drop_notice, NULL); /* the server stopped under it warns on stderr */
    snprintf(sql, sizeof sql, "SELECT tile%d.purchase(1, ARRAY[1,2,3], ARRAY[1,1,1])", o->c->tile);
    r = PQexec(pc, sql);
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) id = strtol(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    if (id > 0) {
        snprintf(sql, sizeof sql,
                 "SELECT o.customerid, (SELECT count(*) FROM tile%d.orderlines l WHERE l.orderid = o.orderid) "
                 "FROM tile%d.orders o WHERE o.orderid = %ld",
                 o->c->tile, o->c->tile, id);
        r = PQexec(pc, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
            cust = strtol(PQgetvalue(r, 0, 0), NULL, 10), lines = strtol(PQgetvalue(r, 0, 1), NULL, 10);
        PQclear(r);
    }
    int ok = id > 0 && cust == 1 && lines == 3;
    if (!ok) {
        tb_buf_putf(&o->out->text, "%sorder: purchase() gave %ld, read back customer %ld with %ld lines",
                    o->out->text.len ? "; " : "", id, cust, lines);
        if (PQerrorMessage(pc)[0]) tb_buf_putf(&o->out->text, " (%s)", PQerrorMessage(pc));
        o->out->status = TB_OP_ERR_CONTENT;
    } else {
        tb_buf_putf(&o->out->text, ", order %ld read back (customer 1, 3 lines)", id);
    }
    PQfinish(pc);
    return ok ? 0 : -1;
}

/* Stops the postmaster (fast shutdown, then SIGKILL) and waits for it. */
static void stop_server(deploy_op *o, int report) {
    uint64_t t0 = tb_now_us();
    int status;
    if (!o->pid) return;
    kill(o->pid, SIGINT);
    while (waitpid(o->pid, &status, WNOHANG) == 0) {
        if (tb_now_us() - t0 > DEPLOY_STOP_US) {
            kill(o->pid, SIGKILL);
            (void)waitpid(o->pid, &status, 0);
            if (report) fail(o, TB_OP_ERR_SERVER, "%s", "stop: postgres had to be killed");
            o->pid = 0;
            return;
        }
        usleep(10000);
    }
    o->pid = 0;
    if (report) infra_put_secs(&o->out->text, "stop", tb_now_us() - t0);
}

static void deploy_run(const infra_op_ctx *c, infra_op_out *out) {
    deploy_op o;
    memset(&o, 0, sizeof o);
    o.c = c;
    o.s = c->state;
    o.out = out;
    o.start = tb_now_us();
    out->status = TB_OP_OK;
    int rc = make_dirs(&o);
    if (rc == 0) rc = run_initdb(&o);
    if (rc == 0) rc = start_server(&o);
    if (rc == 0) rc = load_tile(&o);
    if (rc == 0) rc = order(&o);
    stop_server(&o, rc == 0);
    if (rc != 0) put_log_tail(&o);
    if (o.tmp_sock) (void)infra_remove_tree(o.sock);
    (void)infra_remove_tree(o.data);
}

const infra_kind_vt infra_deploy_vt = {
    .kind = TB_INFRA_DEPLOY,
    .check = deploy_check,
    .level_begin = deploy_begin,
    .run = deploy_run,
    .level_end = deploy_end,
};
