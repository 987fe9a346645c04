/*
 * postgres.c: the embedded SUT's PostgreSQL: initdb into DIR/pg (reused by
 * the next `up`), the postmaster started directly with its settings on the
 * command line, and the two databases (OLTP and the web app's).
 *
 * PostgreSQL refuses to run as root; when tilebench runs as root, initdb and
 * postgres run as Debian's "postgres" user, which then owns DIR/pg.
 */
#define _DEFAULT_SOURCE /* realpath, mkdtemp */
#include "sut/sut_internal.h"

#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void sut_pg_ping_conninfo(char *out, size_t len, int port) {
    snprintf(out, len, "host=%s port=%d dbname=postgres user=" SUT_PG_USER " connect_timeout=2", sut_host(), port);
}

/* Checks, as the server's account, that every folder on the way to dir can
 * be entered; the child exits with the index of the first one that cannot. */
int sut_check_traversable(const char *dir, const run_as *ra, char *err) {
    pid_t pid;
    int st;
    size_t i, len = strlen(dir);
    pid = fork();
    if (pid < 0) {
        tb_seterr(err, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        char buf[PATH_MAX];
        int k = 0;
        if (sut_child_drop(ra) != 0) _exit(255);
        memcpy(buf, dir, len + 1);
        for (i = 1; i <= len; i++) {
            if (buf[i] != '/' && buf[i] != '\0') continue;
            k++;
            char saved = buf[i];
            buf[i] = '\0';
            if (access(buf, X_OK) != 0) _exit(k > 250 ? 250 : k);
            buf[i] = saved;
        }
        _exit(0);
    }
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 255) {
        tb_seterr(err, "cannot switch to user " SUT_OS_PG_USER " to check %s", dir);
        return -1;
    }
    /* Rebuild the prefix that failed, for the message. */
    char bad[PATH_MAX];
    int k = 0, want = WEXITSTATUS(st);
    sut_copy_str(bad, sizeof bad, dir);
    for (i = 1; i <= len; i++) {
        if (bad[i] != '/' && bad[i] != '\0') continue;
        if (++k == want) {
            bad[i] = '\0';
            break;
        }
    }
    tb_seterr(err,
              "%s: user " SUT_OS_PG_USER " (PostgreSQL cannot run as root) cannot enter %s; "
              "chmod o+x it or choose another --dir",
              dir, bad);
    return -1;
}

/* Runs initdb into datadir unless it already holds a cluster. */
int sut_pg_initdb(const char *bindir, const char *datadir, const char *logpath, const run_as *ra, char *err) {
    char pgver[PATH_MAX], initdb[PATH_MAX], dd[PATH_MAX + 16];
    struct stat sb;

    if (sut_path_join(pgver, sizeof pgver, datadir, "PG_VERSION") != 0) {
        tb_seterr(err, "%s: path too long", datadir);
        return TB_SUT_EUSAGE;
    }
    if (stat(pgver, &sb) == 0) return 0; /* reuse: tb_oltp_load recreates the data anyway */
    if (mkdir(datadir, 0700) != 0 && errno != EEXIST) {
        tb_seterr(err, "mkdir %s: %s", datadir, strerror(errno));
        return TB_SUT_EUSAGE;
    }
    if (ra->active && chown(datadir, ra->uid, ra->gid) != 0) {
        tb_seterr(err, "chown %s to " SUT_OS_PG_USER ": %s", datadir, strerror(errno));
        return TB_SUT_EUSAGE;
    }
    if (sut_path_join(initdb, sizeof initdb, bindir, "initdb") != 0) {
        tb_seterr(err, "%s: path too long", bindir);
        return TB_SUT_EUSAGE;
    }
    snprintf(dd, sizeof dd, "--pgdata=%s", datadir);
    /* C locale: identical sort order and plans on every host, whatever LANG says.
     * --no-sync: the cluster is scratch space rebuilt by every `sut up`; the
     * running server itself keeps fsync and synchronous_commit on. */
    const char *const argv[] = {
        initdb, dd, "--username=" SUT_PG_USER, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", NULL};
    return sut_run_tool(argv, ra, "initdb", logpath, err);
}

/*
 * PostgreSQL's max_connections for `tiles` tiles: 100 for tools, probes and
 * the superuser reserve, plus 20 per tile, which holds a tile's web app (4
 * connections) and the standard tile's 10 OLTP users with room for a tile
 * file that gives OLTP more users. A fixed 1000 let only 71 standard tiles
 * connect. Capped at 10000 (each slot costs shared memory: the lock table
 * alone holds max_locks_per_transaction = 64 entries per connection).
 */
int tb_sut_pg_max_connections(int tiles) {
    long n = 100 + 20L * (tiles > 0 ? tiles : 1);
    return n > 10000 ? 10000 : (int)n;
}

/*
 * Writes DATADIR/tilebench_hba.conf, the client authentication the postmaster
 * is started with (hba_file): trust over the socket and from loopback, as
 * initdb --auth=trust writes, for ordinary and replication connections; when the SUT listens on another address (`sut
 * up --listen`), also trust from every subnet the server is directly
 * connected to ("samenet", see pg_hba.conf in the PostgreSQL manual), so load
 * generators on other hosts of the benchmark network can connect.
 */
static int write_hba(const char *datadir, char *path, size_t len, char *err) {
    FILE *f;
    if (sut_path_join(path, len, datadir, "tilebench_hba.conf") != 0) {
        tb_seterr(err, "%s: path too long", datadir);
        return TB_SUT_EUSAGE;
    }
    f = fopen(path, "w");
    if (!f) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return TB_SUT_EUSAGE;
    }
    /* "all" does not match replication connections (pg_hba.conf in the
     * PostgreSQL manual): they get their own lines, for the backup
     * infrastructure operation's pg_basebackup (docs/infra.md) */
    fputs("# Generated by `tilebench sut up` on every start; edits are overwritten.\n"
          "local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n"
          "local replication all trust\nhost replication all 127.0.0.1/32 trust\n"
          "host replication all ::1/128 trust\n",
          f);
    if (strcmp(sut_host(), SUT_DEFAULT_HOST) != 0)
        fprintf(f, "# listening on %s\nhost all all samenet trust\nhost replication all samenet trust\n", sut_host());
    if (fclose(f) != 0 || chmod(path, 0644) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return TB_SUT_EUSAGE;
    }
    return 0;
}

/* Starts the postmaster; settings go on its command line so that they win
 * over whatever postgresql.conf of a reused data folder says. */
int sut_pg_start(const char *bindir, const char *datadir, const char *sockdir, int port, int tiles, const char *logpath,
                 const run_as *ra, svc *out, char *err) {
    char postgres[PATH_MAX], c_port[32], c_sock[PATH_MAX + 32], c_conns[48], c_listen[64], hba[PATH_MAX],
        c_hba[PATH_MAX + 16];
    pid_t pid;
    if (sut_path_join(postgres, sizeof postgres, bindir, "postgres") != 0) {
        tb_seterr(err, "%s: path too long", bindir);
        return TB_SUT_EUSAGE;
    }
    int rc = write_hba(datadir, hba, sizeof hba, err);
    if (rc != 0) return rc;
    snprintf(c_listen, sizeof c_listen, "listen_addresses=%s", sut_host());
    snprintf(c_hba, sizeof c_hba, "hba_file=%s", hba);
    snprintf(c_port, sizeof c_port, "port=%d", port);
    snprintf(c_sock, sizeof c_sock, "unix_socket_directories=%s", sockdir);
    snprintf(c_conns, sizeof c_conns, "max_connections=%d", tb_sut_pg_max_connections(tiles));
    char *argv[] = {postgres,
                    "-D",
                    (char *)datadir,
                    "-c",
                    c_listen,
                    "-c",
                    c_hba,
                    "-c",
                    c_port,
                    "-c",
                    c_sock,
                    "-c",
                    c_conns,
                    "-c",
                    "shared_buffers=128MB",
                    "-c",
                    "logging_collector=off",
                    "-c",
                    "log_destination=stderr",
                    NULL};
    int sprc;
    pid = sut_spawn_logged(argv, ra, logpath, &sprc, err);
    if (pid < 0) return sprc;
    sut_svc_record(out, pid, port, postgres);
    return 0;
}

int sut_pg_answers(int port) {
    char ci[160];
    sut_pg_ping_conninfo(ci, sizeof ci, port);
    return PQping(ci) == PQPING_OK;
}

static int pg_answers_arg(void *arg) { return sut_pg_answers(*(const int *)arg); }

/* Waits until the postmaster accepts connections (PQping). */
int sut_pg_wait(const svc *s, const char *logpath, uint64_t deadline, char *err) {
    int rc = sut_wait_ready("postgresql", s, logpath, deadline, pg_answers_arg, (void *)&s->port, err);
    if (rc == 1) {
        tb_seterr(err, "postgresql on port %d did not answer within %us, see %s", s->port,
                  SUT_START_TIMEOUT_US / 1000000u, logpath);
        return TB_SUT_ESTART;
    }
    return rc;
}

/* Writes "what: <libpq message on one line>" into err. */
static void set_pg_err(char *err, const char *what, const char *msg) { tb_seterr_line(err, what, msg); }

/* Creates database db (a fixed identifier of ours) unless it exists. */
int sut_pg_create_db(int port, const char *db, char *err) {
    char ci[160], sql[128];
    PGconn *c;
    PGresult *r;
    int rc = 0;
    snprintf(ci, sizeof ci, "host=%s port=%d dbname=postgres user=" SUT_PG_USER " connect_timeout=10", sut_host(),
             port);
    c = PQconnectdb(ci);
    if (PQstatus(c) != CONNECTION_OK) {
        set_pg_err(err, "postgresql: connect", PQerrorMessage(c));
        PQfinish(c);
        return -1;
    }
    snprintf(sql, sizeof sql, "SELECT 1 FROM pg_database WHERE datname = '%s'", db);
    r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        set_pg_err(err, "postgresql: list databases", PQerrorMessage(c));
        rc = -1;
    } else if (PQntuples(r) == 0) {
        PQclear(r);
        snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
        r = PQexec(c, sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            snprintf(sql, sizeof sql, "postgresql: create database %s", db);
            set_pg_err(err, sql, PQerrorMessage(c));
            rc = -1;
        }
    }
    PQclear(r);
    PQfinish(c);
    return rc;
}
