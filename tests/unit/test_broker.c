/*
 * test_broker.c: unit tests of broker/, the connection to the control Redis,
 * against real redis-server processes (Debian's package) that the test starts
 * on free loopback ports in a temporary folder and stops at the end; a server
 * that does not start fails the test. Covered: the URI (good and bad forms,
 * no error quoting the password), AUTH with requirepass and with an ACL user,
 * a wrong or missing password, no server, SELECT, IPv6, a binary stream
 * entry through XADD/XREADGROUP (and a BLOCK beyond the command timeout),
 * pipelining, the clock offset, a server killed mid-session (broken, then
 * reconnected after a restart), CLIENT KILL, SIGPIPE kept from the process,
 * a stopped server that times out, and TLS (rediss://) through stunnel to
 * redis-server's tls-port with certificates the test makes with openssl: a
 * good chain, a wrong CA, a certificate not naming the host, no stunnel.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"

/* The main server's requirepass: it holds '@', ':' and '/' (percent-encoded in URIs). */
#define MAIN_PASS     "S3cr:t@pw/x"
#define MAIN_PASS_ENC "S3cr%%3At%%40pw%%2Fx" /* in a format: %% for % */
#define ACL_PASS      "Ag3ntPw"

typedef struct {
    pid_t pid;
    int port;
    char dir[64];
    char extra[512];
} server;

static server main_srv, side_srv; /* side: no password, killed and restarted */

static void nap_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int free_port(void) {
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;
    assert_true(fd >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static void path_in(const server *s, const char *name, char *out, size_t len) {
    snprintf(out, len, "%s/%s", s->dir, name);
}

/* A reply of any kind to PING (NOAUTH counts): the server is up. */
static int answers(int port) {
    struct timeval tv = {0, 200000};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    int ok = 0;
    if (c && !c->err) {
        redisReply *r;
        redisSetTimeout(c, tv);
        r = redisCommand(c, "PING");
        ok = r != NULL;
        if (r) freeReplyObject(r);
    }
    if (c) redisFree(c);
    return ok;
}

static void dump_log(const server *s) {
    char path[128], line[512];
    FILE *f;
    path_in(s, "redis.log", path, sizeof path);
    if (!(f = fopen(path, "r"))) return;
    while (fgets(line, sizeof line, f))
        fprintf(stderr, "redis.log: %s", line);
    fclose(f);
}

/* Starts redis-server for s (s->dir made on the first start, s->port kept
 * on a restart); fails the test when it does not answer within 5 s. */
static void server_start(server *s) {
    char conf[128], log[128];
    FILE *f;
    int i, status;
    if (!s->dir[0]) {
        snprintf(s->dir, sizeof s->dir, "/tmp/tb_broker_XXXXXX");
        assert_non_null(mkdtemp(s->dir));
        s->port = free_port();
    }
    path_in(s, "redis.conf", conf, sizeof conf);
    path_in(s, "redis.log", log, sizeof log);
    assert_non_null(f = fopen(conf, "w"));
    fprintf(f, "port %d\nbind 127.0.0.1 -::1\nsave \"\"\nappendonly no\ndaemonize no\ndir %s\nlogfile %s\n%s\n",
            s->port, s->dir, log, s->extra);
    fclose(f);
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the test, even when it crashes */
        execlp("redis-server", "redis-server", conf, (char *)NULL);
        _exit(127);
    }
    for (i = 0; i < 100; i++) {
        if (answers(s->port)) return;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            dump_log(s);
            fail_msg("redis-server on port %d exited (status %d) before answering", s->port, status);
        }
        nap_ms(50);
    }
    dump_log(s);
    fail_msg("redis-server on port %d did not answer within 5 s", s->port);
}

/* Stops it with sig (SIGKILL after 5 s) and reaps it. */
static void server_stop(server *s, int sig) {
    int i, status;
    if (s->pid <= 0) return;
    kill(s->pid, SIGCONT);
    kill(s->pid, sig);
    for (i = 0; i < 100; i++) {
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) break;
        nap_ms(50);
    }
    if (i == 100) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, &status, 0);
    }
    s->pid = 0;
}

static void server_remove(server *s) {
    static const char *const files[] = {"redis.conf", "redis.log", "dump.rdb"};
    char path[128];
    size_t i;
    server_stop(s, SIGTERM);
    if (!s->dir[0]) return;
    for (i = 0; i < sizeof files / sizeof files[0]; i++) {
        path_in(s, files[i], path, sizeof path);
        unlink(path);
    }
    rmdir(s->dir);
    s->dir[0] = '\0';
}

static tb_broker *connect_ok(const char *fmt, int port) {
    char uri[256], err[TB_ERR_LEN];
    tb_broker_uri u;
    tb_broker *b = NULL;
    snprintf(uri, sizeof uri, fmt, port);
    if (tb_broker_uri_parse(uri, &u, err) != 0) fail_msg("%s: %s", uri, err);
    if (tb_broker_connect(&u, 2000, &b, err) != 0) fail_msg("%s: %s", uri, err);
    tb_broker_uri_free(&u);
    return b;
}

/* -1 and err of connecting to fmt(port). */
static int connect_err(const char *fmt, int port, int timeout_ms, char *err) {
    char uri[256];
    tb_broker_uri u;
    tb_broker *b = NULL;
    int rc;
    snprintf(uri, sizeof uri, fmt, port);
    if (tb_broker_uri_parse(uri, &u, err) != 0) fail_msg("%s: %s", uri, err);
    rc = tb_broker_connect(&u, timeout_ms, &b, err);
    tb_broker_uri_free(&u);
    tb_broker_close(b);
    assert_int_equal(rc, -1);
    assert_null(b);
    return rc;
}

static void expect_status(tb_broker *b, const char *cmd, const char *want) {
    char err[TB_ERR_LEN];
    redisReply *r = tb_broker_cmd(b, err, cmd);
    if (!r) fail_msg("%s: %s", cmd, err);
    assert_true(r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_STRING);
    assert_string_equal(r->str, want);
    freeReplyObject(r);
}

static int group_setup(void **state) {
    char err[TB_ERR_LEN];
    tb_broker *b;
    redisReply *r;
    (void)state;
    snprintf(main_srv.extra, sizeof main_srv.extra, "requirepass \"%s\"\n", MAIN_PASS);
    server_start(&main_srv);
    server_start(&side_srv);
    b = connect_ok("redis://:" MAIN_PASS_ENC "@127.0.0.1:%d", main_srv.port);
    r = tb_broker_cmd(b, err, "ACL SETUSER agent on >%s ~tb:* +@all", ACL_PASS);
    if (!r) fail_msg("ACL SETUSER: %s", err);
    freeReplyObject(r);
    tb_broker_close(b);
    return 0;
}

static int group_teardown(void **state) {
    (void)state;
    server_remove(&main_srv);
    server_remove(&side_srv);
    return 0;
}

/* ---- the URI ---- */

static void test_uri_good(void **state) {
    static const struct {
        const char *uri, *host, *user, *pass;
        int port, db;
    } t[] = {
        {"redis://localhost", "localhost", NULL, NULL, 6379, 0},
        {"redis://127.0.0.1:6390", "127.0.0.1", NULL, NULL, 6390, 0},
        {"redis://broker.lab:6390/3", "broker.lab", NULL, NULL, 6390, 3},
        {"redis://h/", "h", NULL, NULL, 6379, 0},
        {"REDIS://H_1:7", "H_1", NULL, NULL, 7, 0},
        {"redis://:pw@h", "h", NULL, "pw", 6379, 0},
        {"redis://agent:pw@10.0.0.5:1/15", "10.0.0.5", "agent", "pw", 1, 15},
        {"redis://[::1]:6390/2", "::1", NULL, NULL, 6390, 2},
        {"redis://:x@[fd00::5]", "fd00::5", NULL, "x", 6379, 0},
        {"redis://:p%40ss%3Aw%2Frd@h", "h", NULL, "p@ss:w/rd", 6379, 0},
        {"redis://u%40x:p@ss@h:9", "h", "u@x", "p@ss", 9, 0},
        {"redis://a:b:c@h", "h", "a", "b:c", 6379, 0},
        {"redis://h:65535/2147483647", "h", NULL, NULL, 65535, 2147483647},
    };
    char err[TB_ERR_LEN];
    size_t i;
    (void)state;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        tb_broker_uri u;
        if (tb_broker_uri_parse(t[i].uri, &u, err) != 0) fail_msg("%s: %s", t[i].uri, err);
        assert_string_equal(u.host, t[i].host);
        assert_int_equal(u.port, t[i].port);
        assert_int_equal(u.db, t[i].db);
        if (t[i].user)
            assert_string_equal(u.user, t[i].user);
        else
            assert_null(u.user);
        if (t[i].pass)
            assert_string_equal(u.pass, t[i].pass);
        else
            assert_null(u.pass);
        tb_broker_uri_free(&u);
        assert_null(u.host);
    }
}

static void test_uri_bad(void **state) {
    static const struct {
        const char *uri, *want;
    } t[] = {
        {"", "empty"},
        {"http://:Zq9secret@h", "scheme 'http' is not redis://"},
        {"rediss://:Zq9secret@h?cafile=x", "must be ?ca=FILE"},
        {"rediss://:Zq9secret@h?ca=", "must be ?ca=FILE"},
        {"rediss://:Zq9secret@h?ca=a&b=c", "must be ?ca=FILE"},
        {"rediss://:Zq9secret@h?ca=/x%0Aexec=/bin/sh", "control character"},
        {"redis://:Zq9secret@h?ca=x", "only for rediss://"},
        {"Zq9secret@h", "does not start with redis://"},
        {"redis://:Zq9secret@h:0", "port '0' is not 1..65535"},
        {"redis://:Zq9secret@h:65536", "port '65536'"},
        {"redis://:Zq9secret@h:6a79", "port '6a79'"},
        {"redis://:Zq9secret@h:/1", "port ''"},
        {"redis://:Zq9secret@h/x", "db 'x' is not a number"},
        {"redis://:Zq9secret@h/-1", "db '-1'"},
        {"redis://:Zq9secret@h:1/0/extra", "db '0/extra'"},
        {"redis://:Zq9secret@h/2147483648", "db '2147483648'"},
        {"redis://:Zq9secret@h?timeout=1", "query"},
        {"redis://:Zq9secret@h:1#x", "fragment"},
        {"redis://:Zq9secret@", "no host"},
        {"redis://::1:6379", "brackets"},
        {"redis://:Zq9secret@[::1", "'[' without ']'"},
        {"redis://:Zq9secret@[fe80::zz]", "'fe80::zz' is not an IPv6"},
        {"redis://:Zq9secret@[::1]x", "'x' after the IPv6"},
        {"redis://:Zq9secret@h ost", "host 'h ost' holds"},
        {"redis://Zq9secret@h", "has no ':'"},
        {"redis://user:@h", "empty password"},
        {"redis://:Zq9secret%2@h", "bad percent-escape in the password"},
        {"redis://Zq9%zzsecret:x@h", "bad percent-escape in the user"},
        {"redis://:Zq9secret%00@h", "%00"},
        {"redis://:Zq9/secret@h", "must be percent-encoded"},
    };
    char err[TB_ERR_LEN], shown[256];
    size_t i;
    (void)state;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        tb_broker_uri u;
        err[0] = '\0';
        if (tb_broker_uri_parse(t[i].uri, &u, err) != -1) fail_msg("%s: parsed", t[i].uri);
        if (!strstr(err, t[i].want)) fail_msg("%s: error '%s' lacks '%s'", t[i].uri, err, t[i].want);
        if (strstr(err, "Zq9")) fail_msg("%s: error '%s' quotes the password", t[i].uri, err);
        assert_null(u.host);
        assert_null(u.pass);
        tb_broker_uri_shown(t[i].uri, shown, sizeof shown);
        if (strstr(t[i].uri, ":Zq9") && strstr(shown, "Zq9")) fail_msg("%s: shown as '%s'", t[i].uri, shown);
    }
    assert_int_equal(tb_broker_uri_parse(NULL, &(tb_broker_uri){0}, err), -1);
}

static void test_uri_tls(void **state) {
    char err[TB_ERR_LEN];
    tb_broker_uri u;
    (void)state;
    assert_int_equal(tb_broker_uri_parse("rediss://:p@ss@broker.lab:6390/2?ca=/etc/lab%20ca@1.pem", &u, err), 0);
    assert_int_equal(u.tls, 1);
    assert_string_equal(u.host, "broker.lab");
    assert_string_equal(u.pass, "p@ss");
    assert_int_equal(u.port, 6390);
    assert_int_equal(u.db, 2);
    assert_string_equal(u.ca, "/etc/lab ca@1.pem");
    tb_broker_uri_free(&u);
    assert_null(u.ca);
    assert_int_equal(tb_broker_uri_parse("REDISS://h", &u, err), 0);
    assert_int_equal(u.tls, 1);
    assert_null(u.ca);
    assert_int_equal(u.port, 6379);
    tb_broker_uri_free(&u);
    assert_int_equal(tb_broker_uri_parse("redis://h", &u, err), 0);
    assert_int_equal(u.tls, 0);
    tb_broker_uri_free(&u);
}

static void test_uri_shown(void **state) {
    char shown[128];
    (void)state;
    tb_broker_uri_shown("redis://agent:p%40ss@h:1/2", shown, sizeof shown);
    assert_string_equal(shown, "redis://agent:***@h:1/2");
    tb_broker_uri_shown("redis://:p@ss@h", shown, sizeof shown);
    assert_string_equal(shown, "redis://:***@h");
    tb_broker_uri_shown("redis://h:1", shown, sizeof shown);
    assert_string_equal(shown, "redis://h:1");
}

/* ---- connecting ---- */

static void test_connect_requirepass(void **state) {
    char want[64];
    tb_broker *b;
    (void)state;
    b = connect_ok("redis://:" MAIN_PASS_ENC "@127.0.0.1:%d", main_srv.port);
    expect_status(b, "PING", "PONG");
    snprintf(want, sizeof want, "127.0.0.1:%d", main_srv.port);
    assert_string_equal(tb_broker_shown(b), want);
    assert_int_equal(tb_broker_broken(b), 0);
    tb_broker_close(b);
    tb_broker_close(NULL);
}

static void test_connect_acl_user(void **state) {
    char err[TB_ERR_LEN], want[64];
    redisReply *r;
    tb_broker *b;
    (void)state;
    b = connect_ok("redis://agent:" ACL_PASS "@127.0.0.1:%d/1", main_srv.port);
    expect_status(b, "ACL WHOAMI", "agent");
    expect_status(b, "SET tb:acl 1", "OK");
    /* outside ~tb:*: an error reply, the connection stays usable */
    assert_null(tb_broker_cmd(b, err, "SET other:acl 1"));
    assert_non_null(strstr(err, "SET: NOPERM"));
    assert_int_equal(tb_broker_broken(b), 0);
    r = tb_broker_cmd(b, err, "GET tb:acl");
    assert_non_null(r);
    assert_string_equal(r->str, "1");
    freeReplyObject(r);
    snprintf(want, sizeof want, "agent@127.0.0.1:%d/1", main_srv.port);
    assert_string_equal(tb_broker_shown(b), want);
    tb_broker_close(b);

    connect_err("redis://agent:WrongZq9@127.0.0.1:%d", main_srv.port, 2000, err);
    assert_non_null(strstr(err, "authentication failed (WRONGPASS"));
    assert_non_null(strstr(err, "agent@127.0.0.1:"));
    assert_null(strstr(err, "Zq9"));
}

static void test_connect_wrong_or_no_password(void **state) {
    char err[TB_ERR_LEN], want[64];
    (void)state;
    connect_err("redis://:WrongZq9@127.0.0.1:%d", main_srv.port, 2000, err);
    snprintf(want, sizeof want, "broker 127.0.0.1:%d: authentication failed (WRONGPASS", main_srv.port);
    if (!strstr(err, want)) fail_msg("'%s' lacks '%s'", err, want);
    assert_null(strstr(err, "Zq9"));

    connect_err("redis://127.0.0.1:%d", main_srv.port, 2000, err);
    assert_non_null(strstr(err, "NOAUTH"));
    assert_non_null(strstr(err, "the URI has no password"));

    /* a password for a server that has none */
    connect_err("redis://:Zq9secret@127.0.0.1:%d", side_srv.port, 2000, err);
    assert_non_null(strstr(err, "authentication failed"));
    assert_null(strstr(err, "Zq9"));
}

static void test_connect_refused(void **state) {
    char err[TB_ERR_LEN], want[64];
    uint64_t t0;
    int port = free_port();
    (void)state;
    t0 = tb_now_us();
    connect_err("redis://:Zq9secret@127.0.0.1:%d", port, 1000, err);
    assert_true(tb_now_us() - t0 < 1500000);
    snprintf(want, sizeof want, "broker 127.0.0.1:%d: connection refused", port);
    assert_string_equal(err, want);
}

static void test_select_db(void **state) {
    char err[TB_ERR_LEN];
    redisReply *r;
    tb_broker *b3, *b0;
    (void)state;
    b3 = connect_ok("redis://:" MAIN_PASS_ENC "@127.0.0.1:%d/3", main_srv.port);
    b0 = connect_ok("redis://:" MAIN_PASS_ENC "@127.0.0.1:%d", main_srv.port);
    expect_status(b3, "SET tb:db three", "OK");
    r = tb_broker_cmd(b0, err, "GET tb:db");
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    tb_broker_close(b3);
    b3 = connect_ok("redis://:" MAIN_PASS_ENC "@127.0.0.1:%d/3", main_srv.port);
    expect_status(b3, "GET tb:db", "three");
    tb_broker_close(b3);
    tb_broker_close(b0);

    connect_err("redis://:" MAIN_PASS_ENC "@127.0.0.1:%d/99", main_srv.port, 2000, err);
    assert_non_null(strstr(err, "SELECT: ERR DB index is out of range"));
}

static void test_connect_ipv6(void **state) {
    tb_broker *b;
    char want[64];
    (void)state;
    b = connect_ok("redis://:" MAIN_PASS_ENC "@[::1]:%d", main_srv.port);
    expect_status(b, "PING", "PONG");
    snprintf(want, sizeof want, "[::1]:%d", main_srv.port);
    assert_string_equal(tb_broker_shown(b), want);
    tb_broker_close(b);
}

/* ---- commands ---- */

static void test_stream_binary_roundtrip(void **state) {
    static const char value[] = {'a', '\0', 'b', '\0', '\xff', 'c'};
    const char *xgroup[] = {"XGROUP", "CREATE", "tb:s", "g", "$", "MKSTREAM"};
    const char *xadd[] = {"XADD", "tb:s", "*", "data", value};
    size_t xadd_len[] = {4, 4, 1, 4, sizeof value};
    char err[TB_ERR_LEN];
    redisReply *r, *entry, *fields;
    tb_broker *b;
    (void)state;
    b = connect_ok("redis://agent:" ACL_PASS "@127.0.0.1:%d", main_srv.port);
    r = tb_broker_cmdv(b, 6, xgroup, NULL, err);
    if (!r) fail_msg("XGROUP: %s", err);
    freeReplyObject(r);
    r = tb_broker_cmdv(b, 5, xadd, xadd_len, err);
    if (!r) fail_msg("XADD: %s", err);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    freeReplyObject(r);
    r = tb_broker_cmd(b, err, "XREADGROUP GROUP g c1 COUNT 10 BLOCK 500 STREAMS tb:s >");
    if (!r) fail_msg("XREADGROUP: %s", err);
    /* [[stream, [[id, [field, value]]]]] */
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 1);
    assert_string_equal(r->element[0]->element[0]->str, "tb:s");
    assert_int_equal(r->element[0]->element[1]->elements, 1);
    entry = r->element[0]->element[1]->element[0];
    fields = entry->element[1];
    assert_int_equal(fields->elements, 2);
    assert_string_equal(fields->element[0]->str, "data");
    assert_int_equal(fields->element[1]->len, sizeof value);
    assert_memory_equal(fields->element[1]->str, value, sizeof value);
    freeReplyObject(r);
    /* nothing new: a BLOCK longer than the command timeout times out (and
     * breaks the connection); under it, a nil after the BLOCK */
    assert_int_equal(tb_broker_set_timeout(b, 200), 0);
    assert_null(tb_broker_cmd(b, err, "XREADGROUP GROUP g c1 COUNT 10 BLOCK 600 STREAMS tb:s >"));
    assert_non_null(strstr(err, "XREADGROUP: no reply within 200 ms (timed out)"));
    assert_int_equal(tb_broker_broken(b), 1);
    assert_int_equal(tb_broker_set_timeout(b, 1500), 0);
    assert_int_equal(tb_broker_reconnect(b, err), 0);
    r = tb_broker_cmd(b, err, "XREADGROUP GROUP g c1 COUNT 10 BLOCK 300 STREAMS tb:s >");
    if (!r) fail_msg("XREADGROUP: %s", err);
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    tb_broker_close(b);
}

static void test_pipeline(void **state) {
    const char *set[] = {"SET", "tb:p1", "a"}, *incr[] = {"INCR", "tb:p1"}, *get[] = {"GET", "tb:p1"};
    char err[TB_ERR_LEN];
    redisReply *r;
    tb_broker *b;
    (void)state;
    b = connect_ok("redis://:" MAIN_PASS_ENC "@127.0.0.1:%d", main_srv.port);
    assert_int_equal(tb_broker_append(b, 3, set, NULL), 0);
    assert_int_equal(tb_broker_append(b, 2, incr, NULL), 0);
    assert_int_equal(tb_broker_append(b, 2, get, NULL), 0);
    r = tb_broker_reply(b, err);
    assert_non_null(r);
    assert_string_equal(r->str, "OK");
    freeReplyObject(r);
    /* the middle one fails; the third still comes, in order */
    assert_null(tb_broker_reply(b, err));
    assert_non_null(strstr(err, "not an integer"));
    assert_int_equal(tb_broker_broken(b), 0);
    r = tb_broker_reply(b, err);
    assert_non_null(r);
    assert_string_equal(r->str, "a");
    freeReplyObject(r);
    expect_status(b, "PING", "PONG");
    tb_broker_close(b);
}

/* ---- the clock ---- */

static void test_clock_sample(void **state) {
    tb_broker_clock c;
    (void)state;
    tb_broker_clock_sample(1000500, 100, 300, &c);
    assert_int_equal(c.offset_us, 1000500 - 200);
    assert_int_equal(c.bound_us, 100);
    assert_int_equal(c.rtt_us, 200);
    tb_broker_clock_sample(5000, 100, 101, &c);
    assert_int_equal(c.offset_us, 5000 - 100);
    assert_int_equal(c.bound_us, 1);
    tb_broker_clock_sample(50, 1000, 1000, &c); /* broker behind the local clock */
    assert_int_equal(c.offset_us, -950);
    assert_int_equal(c.bound_us, 0);
    assert_int_equal(tb_broker_to_broker(&c, 2000), 1050);
    assert_int_equal(tb_broker_to_local(&c, 1050), 2000);
}

static void test_clock_probe(void **state) {
    char err[TB_ERR_LEN];
    tb_broker_clock c1, c2;
    int64_t local, d;
    uint64_t m;
    tb_broker *b;
    (void)state;
    b = connect_ok("redis://:" MAIN_PASS_ENC "@127.0.0.1:%d", main_srv.port);
    if (tb_broker_clock_probe(b, 20, &c1, err) != 0) fail_msg("%s", err);
    if (tb_broker_clock_probe(b, 20, &c2, err) != 0) fail_msg("%s", err);
    assert_int_equal(c1.probes, 20);
    assert_true(c1.rtt_us > 0 && c1.rtt_us < 1000000);
    assert_true(c1.bound_us <= c1.rtt_us / 2 + 1);
    assert_true(c2.bound_us <= c2.rtt_us / 2 + 1);
    d = c1.offset_us - c2.offset_us;
    assert_true((uint64_t)(d < 0 ? -d : d) <= c1.bound_us + c2.bound_us + 1000);
    /* the broker runs here: its TIME is this host's wall clock */
    m = tb_now_us();
    local = tb_wall_us() - (int64_t)m;
    d = c1.offset_us - local;
    assert_true((uint64_t)(d < 0 ? -d : d) <= c1.bound_us + 1000);
    assert_int_equal(tb_broker_to_local(&c1, tb_broker_to_broker(&c1, m)), m);
    assert_int_equal(tb_broker_to_local(&c1, 0), 0); /* before the local clock's zero */
    assert_int_equal(tb_broker_clock_probe(b, 0, &c1, err), -1);
    tb_broker_close(b);
}

static void test_info_version(void **state) {
    int major = 0, minor = 0;
    (void)state;
    assert_int_equal(tb_broker_info_version("# Server\r\nredis_version:7.0.15\r\nredis_mode:x\r\n", &major, &minor), 0);
    assert_int_equal(major, 7);
    assert_int_equal(minor, 0);
    assert_int_equal(tb_broker_info_version("redis_version:4.0.9\r\n", &major, &minor), 0);
    assert_int_equal(major, 4);
    assert_int_equal(minor, 0);
    assert_int_equal(tb_broker_info_version("# Server\r\nx_redis_version:7.0\r\n", &major, &minor), -1);
}

/* ---- failures ---- */

static void test_killed_then_reconnect(void **state) {
    char err[TB_ERR_LEN], want[64];
    tb_broker *b;
    (void)state;
    b = connect_ok("redis://127.0.0.1:%d", side_srv.port);
    expect_status(b, "PING", "PONG");
    server_stop(&side_srv, SIGKILL);
    assert_null(tb_broker_cmd(b, err, "PING"));
    snprintf(want, sizeof want, "broker 127.0.0.1:%d: PING: ", side_srv.port);
    if (strncmp(err, want, strlen(want)) != 0) fail_msg("'%s' does not start with '%s'", err, want);
    assert_int_equal(tb_broker_broken(b), 1);
    assert_null(tb_broker_cmd(b, err, "PING"));
    assert_non_null(strstr(err, "reconnect first"));
    assert_int_equal(tb_broker_append(b, 1, (const char *[]){"PING"}, NULL), -1);
    assert_int_equal(tb_broker_reconnect(b, err), -1);
    assert_non_null(strstr(err, "connection refused"));
    assert_int_equal(tb_broker_broken(b), 1);
    server_start(&side_srv);
    if (tb_broker_reconnect(b, err) != 0) fail_msg("reconnect: %s", err);
    assert_int_equal(tb_broker_broken(b), 0);
    expect_status(b, "PING", "PONG");
    tb_broker_close(b);
}

/* CLIENT KILL from another connection: broken, and a reconnect works at once. */
static void test_client_kill(void **state) {
    char err[TB_ERR_LEN];
    redisReply *r;
    tb_broker *a, *b;
    long long id;
    (void)state;
    a = connect_ok("redis://127.0.0.1:%d", side_srv.port);
    b = connect_ok("redis://127.0.0.1:%d", side_srv.port);
    assert_non_null(r = tb_broker_cmd(b, err, "CLIENT ID"));
    id = r->integer;
    freeReplyObject(r);
    assert_non_null(r = tb_broker_cmd(a, err, "CLIENT KILL ID %lld", id));
    assert_int_equal(r->integer, 1);
    freeReplyObject(r);
    assert_null(tb_broker_cmd(b, err, "PING"));
    assert_int_equal(tb_broker_broken(b), 1);
    assert_int_equal(tb_broker_broken(a), 0);
    if (tb_broker_reconnect(b, err) != 0) fail_msg("reconnect: %s", err);
    expect_status(b, "PING", "PONG");
    tb_broker_close(a);
    tb_broker_close(b);
}

/* A write to a reset connection raises SIGPIPE, whose default kills the
 * process: the broker keeps it away (SIGPIPE stays at its default here). */
static void test_sigpipe_kept_away(void **state) {
    const size_t n = 8u << 20;
    char err[TB_ERR_LEN], *big = malloc(n);
    const char *argv[] = {"SET", "tb:big", big};
    size_t lens[] = {3, 6, n};
    sigset_t pend, mask;
    tb_broker *b;
    (void)state;
    assert_non_null(big);
    memset(big, 'x', n);
    signal(SIGPIPE, SIG_DFL);
    b = connect_ok("redis://127.0.0.1:%d", side_srv.port);
    server_stop(&side_srv, SIGKILL);
    assert_null(tb_broker_cmdv(b, 3, argv, lens, err));
    assert_int_equal(tb_broker_broken(b), 1);
    sigemptyset(&pend);
    assert_int_equal(sigpending(&pend), 0);
    assert_int_equal(sigismember(&pend, SIGPIPE), 0);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &mask), 0);
    assert_int_equal(sigismember(&mask, SIGPIPE), 0);
    server_start(&side_srv);
    assert_int_equal(tb_broker_reconnect(b, err), 0);
    tb_broker_close(b);
    free(big);
}

/* A server that stops answering (SIGSTOP): a command fails after the
 * timeout, not later, and so does a connect to it. */
static void test_stopped_server_times_out(void **state) {
    char err[TB_ERR_LEN];
    uint64_t t0, took;
    tb_broker *b;
    (void)state;
    b = connect_ok("redis://127.0.0.1:%d", side_srv.port);
    assert_int_equal(tb_broker_set_timeout(b, 300), 0);
    assert_int_equal(tb_broker_set_timeout(b, 0), -1);
    assert_int_equal(kill(side_srv.pid, SIGSTOP), 0);
    t0 = tb_now_us();
    assert_null(tb_broker_cmd(b, err, "PING"));
    took = tb_now_us() - t0;
    kill(side_srv.pid, SIGCONT);
    if (took < 250000 || took > 900000)
        fail_msg("PING failed after %llu µs (timeout 300 ms)", (unsigned long long)took);
    assert_non_null(strstr(err, "no reply within 300 ms (timed out)"));
    assert_int_equal(tb_broker_broken(b), 1);
    assert_int_equal(tb_broker_reconnect(b, err), 0);
    expect_status(b, "PING", "PONG");
    tb_broker_close(b);

    assert_int_equal(kill(side_srv.pid, SIGSTOP), 0);
    t0 = tb_now_us();
    connect_err("redis://127.0.0.1:%d", side_srv.port, 400, err);
    took = tb_now_us() - t0;
    kill(side_srv.pid, SIGCONT);
    if (took > 1200000) fail_msg("connect failed after %llu µs (timeout 400 ms)", (unsigned long long)took);
    assert_non_null(strstr(err, "timed out"));
}

/* Servers left by a failed setup are stopped on the way out too. */
static void stop_all(void) {
    server_remove(&main_srv);
    server_remove(&side_srv);
}

/* ---- TLS (rediss://, broker/tunnel.c) ---- */

/* Runs a shell command in dir; fails the test when it fails. */
static void sh_in(const char *dir, const char *cmd) {
    char line[1024];
    snprintf(line, sizeof line, "cd '%s' && { %s; } >openssl.log 2>&1", dir, cmd);
    if (system(line) != 0) fail_msg("in %s: '%s' failed (see openssl.log there)", dir, cmd);
}

/* fmt holds ONE %d (the port) and otherwise literal text that may hold '%':
 * into out, the URI as a format again (every '%' doubled, the port in). */
static const char *with_port(char *out, size_t len, const char *pre, int port, const char *post) {
    char whole[512];
    size_t k = 0;
    snprintf(whole, sizeof whole, "%s%d%s", pre, port, post);
    for (const char *c = whole; *c && k + 3 < len; c++) {
        if (*c == '%') out[k++] = '%';
        out[k++] = *c;
    }
    out[k] = '\0';
    return out;
}

/* stunnel children of this process still running. */
static int stunnel_children(void) {
    char cmd[96], out[64] = "";
    FILE *p;
    snprintf(cmd, sizeof cmd, "pgrep -c -P %d stunnel", (int)getpid());
    if (!(p = popen(cmd, "r"))) return -1;
    if (!fgets(out, sizeof out, p)) out[0] = '\0';
    pclose(p);
    return atoi(out);
}

/* A CA, and a server certificate from it naming 127.0.0.1 (only), in dir;
 * and a second CA that signed nothing. */
static void make_certs(const char *dir) {
    sh_in(dir, "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=tb-ca -keyout ca.key -out ca.crt && "
               "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other -keyout o.key -out other.crt && "
               "openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout srv.key -out srv.csr && "
               "printf 'subjectAltName=IP:127.0.0.1\\n' >ext && "
               "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile ext "
               "-out srv.crt");
}

static void test_tls(void **state) {
    static server tls_srv;
    char err[TB_ERR_LEN], uri[512], ca[128];
    int tport;
    tb_broker *b;
    redisReply *r;
    (void)state;
    snprintf(tls_srv.dir, sizeof tls_srv.dir, "/tmp/tb_broker_tls_XXXXXX");
    assert_non_null(mkdtemp(tls_srv.dir));
    tls_srv.port = free_port();
    tport = free_port();
    make_certs(tls_srv.dir);
    snprintf(tls_srv.extra, sizeof tls_srv.extra,
             "requirepass \"%s\"\ntls-port %d\ntls-cert-file %s/srv.crt\ntls-key-file %s/srv.key\n"
             "tls-ca-cert-file %s/ca.crt\ntls-auth-clients no\n",
             MAIN_PASS, tport, tls_srv.dir, tls_srv.dir, tls_srv.dir);
    server_start(&tls_srv);

    /* through the tunnel: AUTH with the password, commands, a reconnect */
    snprintf(ca, sizeof ca, "?ca=%s/ca.crt", tls_srv.dir);
    b = connect_ok(with_port(uri, sizeof uri, "rediss://:S3cr%3At%40pw%2Fx@127.0.0.1:", tport, ca), tport);
    expect_status(b, "PING", "PONG");
    r = tb_broker_cmd(b, err, "SET k %b", "a\0b", (size_t)3);
    if (!r) fail_msg("SET: %s", err);
    freeReplyObject(r);
    assert_int_equal(tb_broker_reconnect(b, err), 0);
    assert_non_null(r = tb_broker_cmd(b, err, "GET k"));
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_int_equal(r->len, 3);
    assert_memory_equal(r->str, "a\0b", 3);
    freeReplyObject(r);
    assert_int_equal(stunnel_children(), 1); /* the reconnect ended the first one */
    tb_broker_close(b);
    assert_int_equal(stunnel_children(), 0);

    /* a certificate from another CA, and one that does not name the host */
    snprintf(ca, sizeof ca, "?ca=%s/other.crt", tls_srv.dir);
    connect_err(with_port(uri, sizeof uri, "rediss://:S3cr%3At%40pw%2Fx@127.0.0.1:", tport, ca), tport, 3000, err);
    if (!strstr(err, "certificate verify failed") || strstr(err, "S3cr")) fail_msg("wrong CA: '%s'", err);
    snprintf(ca, sizeof ca, "?ca=%s/ca.crt", tls_srv.dir);
    connect_err(with_port(uri, sizeof uri, "rediss://:S3cr%3At%40pw%2Fx@localhost:", tport, ca), tport, 3000, err);
    if (!strstr(err, "stunnel:") || strstr(err, "S3cr")) fail_msg("wrong host: '%s'", err);
    /* plain Redis to the TLS port, and a missing CA file */
    connect_err("redis://:" MAIN_PASS_ENC "@127.0.0.1:%d", tport, 1000, err);
    connect_err("rediss://127.0.0.1:%d?ca=/nonexistent/ca.pem", tport, 1000, err);
    assert_non_null(strstr(err, "/nonexistent/ca.pem"));
    /* a CA file that holds no certificate, and a folder as the CA file */
    sh_in(tls_srv.dir, "head -c 300 /dev/urandom >garbage.crt");
    snprintf(ca, sizeof ca, "?ca=%s/garbage.crt", tls_srv.dir);
    connect_err(with_port(uri, sizeof uri, "rediss://127.0.0.1:", tport, ca), tport, 3000, err);
    if (!strstr(err, "stunnel: No trusted certificates found")) fail_msg("garbage CA: '%s'", err);
    snprintf(ca, sizeof ca, "?ca=%s", tls_srv.dir);
    connect_err(with_port(uri, sizeof uri, "rediss://127.0.0.1:", tport, ca), tport, 1000, err);
    assert_non_null(strstr(err, "not a regular file"));
    /* no stunnel to be found */
    {
        char *path = strdup(getenv("PATH"));
        setenv("PATH", "/nonexistent", 1);
        connect_err("rediss://127.0.0.1:%d", tport, 1000, err);
        setenv("PATH", path, 1);
        free(path);
        assert_non_null(strstr(err, "stunnel4"));
    }
    assert_int_equal(stunnel_children(), 0);
    server_stop(&tls_srv, SIGTERM);
    sh_in(tls_srv.dir, "rm -f ca.* o.key other.crt garbage.crt srv.* ext openssl.log redis.conf redis.log dump.rdb");
    rmdir(tls_srv.dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uri_good),
        cmocka_unit_test(test_uri_bad),
        cmocka_unit_test(test_uri_shown),
        cmocka_unit_test(test_uri_tls),
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_connect_requirepass),
        cmocka_unit_test(test_connect_acl_user),
        cmocka_unit_test(test_connect_wrong_or_no_password),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_select_db),
        cmocka_unit_test(test_connect_ipv6),
        cmocka_unit_test(test_stream_binary_roundtrip),
        cmocka_unit_test(test_pipeline),
        cmocka_unit_test(test_clock_sample),
        cmocka_unit_test(test_clock_probe),
        cmocka_unit_test(test_info_version),
        cmocka_unit_test(test_killed_then_reconnect),
        cmocka_unit_test(test_client_kill),
        cmocka_unit_test(test_sigpipe_kept_away),
        cmocka_unit_test(test_stopped_server_times_out),
    };
    atexit(stop_all);
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
