/*
 * test_infra_pg.c: the deploy and backup kinds of infrastructure operation
 * (infra/deploy.c, infra/backup.c) against a real PostgreSQL cluster this
 * test starts in a temporary folder (TCP on loopback, password auth with
 * SCRAM, so a backup that lost the password fails): deploys answer their
 * DS2 order (the order id the data set's size gives), backups are verified
 * by pg_verifybackup (its own words) and are at least as large as the
 * databases the server reports, the password never shows on a command line
 * or in an op's text, and nothing is left behind. Also tb_infra_check's
 * errors for a missing program and a missing endpoint.
 */
#define _DEFAULT_SOURCE /* mkdtemp, setenv */
#include <dirent.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/tb_common.h"
#include "infra/infra.h"
#include "sut/supervisor.h"
#include "tiles/tiledef.h"

#define PASSWORD "s3cr3t-Pw-4711"
#define WL       "[workload.kv]\nkind = kv\nreference = 100\n"
/* tiles/oltp_load.h: 12 months x 1,000 orders, ids 1..12000: the next is 12001 */
#define FIRST_NEW_ORDER "order 12001 read back"

static char base[256], conninfo[512], bindir[256];
static pid_t pg_pid;
static run_as ra;

static void find_bindir(void) {
    const char *env = getenv("TB_PG_BINDIR");
    DIR *d;
    struct dirent *e;
    long best = -1;
    if (env && *env) {
        snprintf(bindir, sizeof bindir, "%s", env);
        return;
    }
    if (!(d = opendir("/usr/lib/postgresql"))) return;
    while ((e = readdir(d)))
        if (atol(e->d_name) > best) best = atol(e->d_name);
    closedir(d);
    snprintf(bindir, sizeof bindir, "/usr/lib/postgresql/%ld/bin", best);
}

/* A cluster of ours: initdb with a password, postgres on a free loopback port. */
static int setup(void **state) {
    char data[300], pwfile[300], log[300], initdb[300], postgres[300], dd[320], pwarg[320], c_port[32], c_sock[320],
        err[TB_ERR_LEN], ping[200];
    int port, fd, rc;
    FILE *f;
    (void)state;
    find_bindir();
    snprintf(base, sizeof base, "/tmp/tb-infra-pg-XXXXXX");
    if (!mkdtemp(base) || chmod(base, 0711) != 0) return -1;
    if (geteuid() == 0 && sut_run_as_lookup("postgres", &ra, err) != 0) return fprintf(stderr, "%s\n", err), -1;
    snprintf(data, sizeof data, "%s/pgdata", base);
    snprintf(pwfile, sizeof pwfile, "%s/pw", base);
    snprintf(log, sizeof log, "%s/pg.log", base);
    if (!(f = fopen(pwfile, "w"))) return -1;
    fputs(PASSWORD "\n", f);
    fclose(f);
    if (mkdir(data, 0700) != 0) return -1;
    if (ra.active && (chown(data, ra.uid, ra.gid) != 0 || chown(pwfile, ra.uid, ra.gid) != 0)) return -1;
    snprintf(initdb, sizeof initdb, "%s/initdb", bindir);
    snprintf(postgres, sizeof postgres, "%s/postgres", bindir);
    snprintf(dd, sizeof dd, "--pgdata=%s", data);
    snprintf(pwarg, sizeof pwarg, "--pwfile=%s", pwfile);
    const char *iargv[] = {initdb,
                           dd,
                           "--username=tilebench",
                           pwarg,
                           "--auth-local=trust",
                           "--auth-host=scram-sha-256",
                           "--no-sync",
                           "--locale=C",
                           NULL};
    if (sut_run_tool(iargv, &ra, "initdb", log, err) != 0) return fprintf(stderr, "%s\n", err), -1;
    if ((fd = sut_port_probe(0, "test postgres", &port, err)) < 0) return fprintf(stderr, "%s\n", err), -1;
    close(fd);
    snprintf(c_port, sizeof c_port, "port=%d", port);
    snprintf(c_sock, sizeof c_sock, "%s/sock", base);
    if (mkdir(c_sock, 0700) != 0 || (ra.active && chown(c_sock, ra.uid, ra.gid) != 0)) return -1;
    snprintf(c_sock, sizeof c_sock, "unix_socket_directories=%s/sock", base);
    char *pargv[] = {postgres, "-D", data, "-c", "listen_addresses=127.0.0.1", "-c", c_port, "-c", c_sock, NULL};
    if ((pg_pid = sut_spawn_logged(pargv, &ra, log, &rc, err)) < 0) return fprintf(stderr, "%s\n", err), -1;
    snprintf(ping, sizeof ping, "host=127.0.0.1 port=%d dbname=postgres user=tilebench connect_timeout=2", port);
    for (int i = 0; i < 1000 && PQping(ping) != PQPING_OK && waitpid(pg_pid, &rc, WNOHANG) == 0; i++)
        usleep(20000);
    if (PQping(ping) != PQPING_OK) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "tail -5 '%s' >&2", log);
        fprintf(stderr, "test postgres did not start:\n");
        (void)!system(cmd);
        return -1;
    }
    snprintf(conninfo, sizeof conninfo,
             "host=127.0.0.1 port=%d dbname=postgres user=tilebench sslpassword=" PASSWORD "-ssl password=" PASSWORD,
             port);
    return 0;
}

static int teardown(void **state) {
    char cmd[400];
    int st;
    (void)state;
    if (pg_pid > 0) {
        kill(pg_pid, SIGINT);
        (void)waitpid(pg_pid, &st, 0);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    return system(cmd) == 0 ? 0 : -1;
}

static tb_tiledef *parse_infra(const char *infra) {
    char text[2048], err[TB_ERR_LEN] = "";
    tb_tiledef *d;
    snprintf(text, sizeof text, WL "%s", infra);
    d = tb_tiledef_parse("pg.ini", text, strlen(text), err);
    if (!d) print_error("%s\n", err);
    assert_non_null(d);
    return d;
}

/* Every process's command line, sampled until *done: a hit of PASSWORD. */
typedef struct watch {
    volatile int done;
    int seen, samples;
} watch;

static void *watch_cmdlines(void *arg) {
    watch *w = arg;
    while (!w->done) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char path[300], buf[4096];
            FILE *f;
            size_t got;
            if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
            snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
            if (!(f = fopen(path, "r"))) continue;
            got = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            for (size_t i = 0; i < got; i++)
                if (!buf[i]) buf[i] = ' ';
            buf[got] = '\0';
            if (strstr(buf, PASSWORD)) w->seen++;
        }
        if (d) closedir(d);
        w->samples++;
        usleep(5000);
    }
    return NULL;
}

/* The databases' size as the server says (pg_database_size). */
static double databases_bytes(void) {
    PGconn *c = PQconnectdb(conninfo);
    PGresult *r;
    double n = -1;
    assert_int_equal(PQstatus(c), CONNECTION_OK);
    r = PQexec(c, "SELECT sum(pg_database_size(oid)) FROM pg_database");
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    n = atof(PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(c);
    return n;
}

static int entries(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void deploy_and_backup(void **state) {
    char dir[300], err[TB_ERR_LEN] = "";
    /* one user of each (a deploy takes 8 s here, up to twice that on a busy machine) */
    tb_tiledef *def = parse_infra("[infra.dep]\nkind = deploy\ntiles_per_user = 2\n"
                                  "[infra.bak]\nkind = backup\nverify = yes\nthink_time = 500ms\n");
    tb_sut_endpoints ep;
    tb_infra_stat *st;
    tb_infra_op_output *outs;
    tb_infra_level lv;
    pthread_t th;
    watch w = {0, 0, 0};
    int n, dep_ok = 0, bak_ok = 0, tiles_seen[3] = {0, 0, 0};
    double db_bytes = databases_bytes();
    (void)state;
    memset(&ep, 0, sizeof ep);
    ep.pg_conninfo = conninfo;
    /* a space and a quote in the folder: the deployed cluster's conninfo quotes its socket folder */
    snprintf(dir, sizeof dir, "%s/run ner's", base);
    assert_int_equal(mkdir(dir, 0711), 0);
    if (tb_infra_check(def, &ep, err) != 0) print_error("%s\n", err);
    assert_int_equal(tb_infra_check(def, &ep, err), 0);
    memset(&lv, 0, sizeof lv);
    lv.tiles = 2;
    lv.level = 1;
    lv.start_us = tb_now_us();
    lv.n_phases = 1;
    lv.phase_start_us[0] = lv.start_us;
    lv.phase_end_us[0] = lv.start_us + 20000000; /* a deploy takes ~8 s here, more under ASan */
    lv.end_us = lv.phase_end_us[0] + 200000;
    assert_int_equal(pthread_create(&th, NULL, watch_cmdlines, &w), 0);
    tb_infra *r = tb_infra_start(def, &ep, dir, &lv, err);
    if (!r) print_error("%s\n", err);
    assert_non_null(r);
    while (tb_now_us() < lv.phase_end_us[0])
        usleep(20000);
    assert_int_equal(tb_infra_collect(r, 0, &st, &outs, &n, err), 0);
    tb_infra_stop(r);
    w.done = 1;
    pthread_join(th, NULL);

    for (int i = 0; i < n; i++) {
        const tb_infra_op_output *o = &outs[i];
        print_message("%s tile %d: %s\n", def->infra[o->infra].name, o->tile, o->text);
        assert_null(strstr(o->text, PASSWORD));
        assert_int_equal(o->status, TB_OP_OK);
        if (o->infra == 0) {
            dep_ok++;
            tiles_seen[o->tile]++;
            assert_non_null(strstr(o->text, FIRST_NEW_ORDER));
        } else {
            bak_ok++;
            assert_non_null(strstr(o->text, "backup successfully verified")); /* pg_verifybackup's words */
        }
    }
    if (dep_ok < 1 || bak_ok < 1)
        print_error("deploys %llu ok, %llu failed; backups %llu ok, %llu failed\n", (unsigned long long)st[0].ops,
                    (unsigned long long)st[0].errors, (unsigned long long)st[1].ops, (unsigned long long)st[1].errors);
    assert_true(dep_ok >= 1 && tiles_seen[1] >= 1); /* the user's first tile first */
    assert_true(bak_ok >= 1);
    assert_int_equal(st[0].users, 1);
    assert_int_equal(st[0].errors, 0);
    assert_true(st[0].ops >= 1);
    assert_int_equal(st[0].bytes, 0);
    assert_int_equal(st[1].users, 1);
    assert_int_equal(st[1].errors, 0);
    assert_true(st[1].ops >= 1);
    /* a backup holds at least the databases (plus WAL and global files) */
    assert_true((double)st[1].bytes >= db_bytes * (double)st[1].ops);
    assert_true(st[1].busy_us > 0 && st[1].busy_us <= tb_hist_max(st[1].hist) * st[1].ops);
    assert_true(w.samples > 100);
    assert_int_equal(w.seen, 0);
    assert_int_equal(entries(dir), 0);
    tb_infra_stats_free(st, def->n_infra);
    tb_infra_outputs_free(outs, n);
    tb_tiledef_free(def);
}

/* A backup without the password it needs fails (server class), its
 * account saying why; the runner still removes everything. */
static void backup_refused(void **state) {
    char dir[300], ci[512], err[TB_ERR_LEN] = "";
    tb_tiledef *def = parse_infra("[infra.bak]\nkind = backup\nthink_time = 5s\n");
    tb_sut_endpoints ep;
    tb_infra_stat *st;
    tb_infra_op_output *outs;
    tb_infra_level lv;
    int n;
    (void)state;
    snprintf(ci, sizeof ci, "%s", conninfo);
    *strstr(ci, " password=") = '\0';
    memset(&ep, 0, sizeof ep);
    ep.pg_conninfo = ci;
    snprintf(dir, sizeof dir, "%s/refused", base);
    assert_int_equal(mkdir(dir, 0711), 0);
    memset(&lv, 0, sizeof lv);
    lv.tiles = 1;
    lv.level = 1;
    lv.start_us = tb_now_us();
    lv.n_phases = 1;
    lv.phase_start_us[0] = lv.start_us;
    lv.phase_end_us[0] = lv.start_us + 1500000;
    lv.end_us = lv.phase_end_us[0];
    tb_infra *r = tb_infra_start(def, &ep, dir, &lv, err);
    assert_non_null(r);
    while (tb_now_us() < lv.phase_end_us[0])
        usleep(20000);
    assert_int_equal(tb_infra_collect(r, 0, &st, &outs, &n, err), 0);
    tb_infra_stop(r);
    assert_int_equal(st[0].errors, 1);
    assert_int_equal(st[0].err_by_class[TB_OP_ERR_SERVER], 1);
    assert_int_equal(n, 1);
    assert_non_null(strstr(outs[0].text, "pg_basebackup: exit status 1"));
    assert_non_null(strstr(outs[0].text, "password"));
    assert_int_equal(entries(dir), 0);
    tb_infra_stats_free(st, 1);
    tb_infra_outputs_free(outs, n);
    tb_tiledef_free(def);
}

/* Processes whose command line holds s. */
static int processes_with(const char *s) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        char path[300], buf[4096];
        FILE *f;
        size_t got;
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        if (!(f = fopen(path, "r"))) continue;
        got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i < got; i++)
            if (!buf[i]) buf[i] = ' ';
        buf[got] = '\0';
        if (strstr(buf, s)) n++;
    }
    if (d) closedir(d);
    return n;
}

/* tb_infra_stop while a deploy loads its data: the deployed server is shut
 * down at once, and neither it nor its folder is left. */
static void deploy_stopped(void **state) {
    char dir[300], pid_file[400], err[TB_ERR_LEN] = "";
    tb_tiledef *def = parse_infra("[infra.dep]\nkind = deploy\n");
    tb_sut_endpoints ep;
    tb_infra_level lv;
    uint64_t t0;
    (void)state;
    memset(&ep, 0, sizeof ep);
    snprintf(dir, sizeof dir, "%s/stopped", base);
    assert_int_equal(mkdir(dir, 0711), 0);
    memset(&lv, 0, sizeof lv);
    lv.tiles = 1;
    lv.level = 1;
    lv.start_us = tb_now_us();
    lv.n_phases = 1;
    lv.phase_start_us[0] = lv.start_us;
    lv.phase_end_us[0] = lv.start_us + 60000000;
    lv.end_us = lv.phase_end_us[0];
    tb_infra *r = tb_infra_start(def, &ep, dir, &lv, err);
    assert_non_null(r);
    /* the socket: the postmaster itself (initdb's bootstrap backend writes postmaster.pid too) */
    snprintf(pid_file, sizeof pid_file, "%s/dep.u0.0/s/.s.PGSQL.5432", dir);
    for (int i = 0; i < 1500 && access(pid_file, F_OK) != 0; i++)
        usleep(10000);
    assert_int_equal(access(pid_file, F_OK), 0);
    usleep(500000); /* into the data load */
    assert_true(processes_with(dir) >= 1);
    t0 = tb_now_us();
    tb_infra_stop(r);
    /* the rest of the load takes 2.5 s or more here: only a shutdown of the server ends it sooner */
    if (tb_now_us() - t0 >= 1500000) print_error("stop took %.1f s\n", (double)(tb_now_us() - t0) / 1e6);
    assert_true(tb_now_us() - t0 < 1500000);
    for (int i = 0; i < 100 && processes_with(dir); i++)
        usleep(10000);
    assert_int_equal(processes_with(dir), 0);
    assert_int_equal(entries(dir), 0);
    tb_tiledef_free(def);
}

/* Under root, a runner folder the postgres account cannot enter is refused
 * at the start, naming the folder. */
static void deploy_folder_not_enterable(void **state) {
    char closed[300], dir[320], err[TB_ERR_LEN] = "";
    tb_tiledef *def = parse_infra("[infra.dep]\nkind = deploy\n");
    tb_sut_endpoints ep;
    tb_infra_level lv;
    (void)state;
    memset(&ep, 0, sizeof ep);
    snprintf(closed, sizeof closed, "%s/closed", base);
    snprintf(dir, sizeof dir, "%s/runner", closed);
    assert_int_equal(mkdir(closed, 0700), 0);
    assert_int_equal(mkdir(dir, 0711), 0);
    memset(&lv, 0, sizeof lv);
    lv.tiles = 1;
    lv.start_us = tb_now_us() + 60000000; /* nothing runs: only the start's checks */
    lv.end_us = lv.start_us + 1;
    tb_infra *r = tb_infra_start(def, &ep, dir, &lv, err);
    if (geteuid() == 0) {
        char want[400];
        assert_null(r);
        snprintf(want, sizeof want,
                 "[infra.dep] deploy: user postgres (PostgreSQL cannot run as root) cannot enter %s;", closed);
        if (!strstr(err, want)) print_error("wanted '%s' in '%s'\n", want, err);
        assert_non_null(strstr(err, want));
    } else {
        assert_non_null(r); /* not root: the servers run as this user, who made the folder */
        tb_infra_stop(r);
    }
    tb_tiledef_free(def);
}

/* A missing program is named with its Debian package; a missing endpoint too. */
static void check_names_program_and_package(void **state) {
    char err[TB_ERR_LEN] = "", ver[16];
    tb_tiledef *def = parse_infra("[infra.bak]\nkind = backup\n[infra.dep]\nkind = deploy\n");
    tb_sut_endpoints ep;
    const char *slash = strrchr(bindir, '/');
    (void)state;
    /* Debian's package of /usr/lib/postgresql/N/bin: postgresql-N, postgresql-client-N (dpkg -S) */
    snprintf(ver, sizeof ver, "%.*s", (int)(slash - bindir - 20), bindir + 20);
    memset(&ep, 0, sizeof ep);
    assert_int_equal(tb_infra_check(def, &ep, err), -1);
    assert_non_null(strstr(err, "[infra.bak] backup: no PostgreSQL to back up: give [sut] pg"));
    ep.pg_conninfo = conninfo;
    setenv("TB_PG_BINDIR", "/nonexistent", 1);
    assert_int_equal(tb_infra_check(def, &ep, err), -1);
    char want[128];
    snprintf(want, sizeof want, "pg_basebackup not found (in TB_PG_BINDIR=/nonexistent): install postgresql-client-%s",
             ver);
    if (!strstr(err, want)) print_error("wanted '%s' in '%s'\n", want, err);
    assert_non_null(strstr(err, want));
    tb_tiledef_free(def);
    def = parse_infra("[infra.dep]\nkind = deploy\n");
    assert_int_equal(tb_infra_check(def, &ep, err), -1);
    snprintf(want, sizeof want,
             "[infra.dep] deploy: initdb not found (in TB_PG_BINDIR=/nonexistent): install postgresql-%s", ver);
    if (!strstr(err, want)) print_error("wanted '%s' in '%s'\n", want, err);
    assert_non_null(strstr(err, want));
    unsetenv("TB_PG_BINDIR");
    assert_int_equal(tb_infra_check(def, &ep, err), 0);
    tb_tiledef_free(def);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_names_program_and_package),
        cmocka_unit_test(backup_refused),
        cmocka_unit_test(deploy_stopped),
        cmocka_unit_test(deploy_folder_not_enterable),
        cmocka_unit_test(deploy_and_backup),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
