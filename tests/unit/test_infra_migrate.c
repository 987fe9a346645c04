/*
 * test_infra_migrate.c: the migrate infrastructure operation (infra/migrate.c)
 * against a real redis-server standing for the SUT's, holding 500 keys. One
 * op makes a new redis-server a master (ROLE) holding the keys and calls the
 * kv switch with its port; a second op moves the tile again, from the first
 * instance (a key written there reaches the second), and the first is gone
 * (no process, no folder); the level's end switches the tile back to the
 * SUT's Redis and leaves no redis-server and no folder, and the SUT's Redis
 * never saw the write made on the copy. An op without a kv switch is an
 * error naming why, and leaves nothing behind, as does a stopped one.
 * check() refuses a SUT without Redis and names a missing redis-server.
 * Under load: a local load generator's kv users of tile 1 follow the
 * migrate op to the new instance (its INFO commandstats grow, the SUT's
 * stop) without an error, and go home at the level's end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include "infra/infra_internal.h"
#include "loadgen/loadgen.h"
#include "redis_fixture.h"

static fx_redis sut;
static char level_dir[64];
static void *st;          /* the level's state: level_end'ed by teardown when a check failed */
static tb_infra_level lv; /* ... with this level */

static struct {
    int calls, tile, port;
    char host[64];
} sw;

static int fake_switch(void *arg, int tile, const char *host, int port, char *err) {
    (void)arg, (void)err;
    sw.calls++;
    sw.tile = tile;
    sw.port = port;
    snprintf(sw.host, sizeof sw.host, "%s", host);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    if (st) infra_migrate_vt.level_end(st, &lv); /* our instances go too */
    st = NULL;
    fx_redis_stop(&sut);
    if (level_dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", level_dir);
        if (system(cmd) != 0) print_message("cannot remove %s\n", level_dir);
    }
    return 0;
}

static long long dbsize(int port) {
    redisContext *c = fx_connect(port);
    redisReply *r;
    long long n = -1;
    if (!c) return -1;
    r = redisCommand(c, "DBSIZE");
    if (r && r->type == REDIS_REPLY_INTEGER) n = r->integer;
    if (r) freeReplyObject(r);
    redisFree(c);
    return n;
}

static int run_cmd(int port, const char *cmd, char *out, size_t len) {
    redisContext *c = fx_connect(port);
    redisReply *r;
    if (!c) return -1;
    r = redisCommand(c, cmd);
    out[0] = '\0';
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 && r->element[0]->type == REDIS_REPLY_STRING)
        snprintf(out, len, "%s", r->element[0]->str);
    else if (r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS))
        snprintf(out, len, "%s", r->str);
    if (r) freeReplyObject(r);
    redisFree(c);
    return 0;
}

/* Entries in dir other than . and .. (-1: no such folder). */
static int entries(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void one_op(const infra_op_ctx *c, infra_op_out *out, const char *name) {
    char dir[128];
    snprintf(dir, sizeof dir, "%s/%s", level_dir, name);
    if (mkdir(dir, 0700) != 0) fail_msg("mkdir %s", dir);
    memset(out, 0, sizeof *out);
    tb_buf_init(&out->text, 4096);
    ((infra_op_ctx *)c)->dir = dir;
    infra_migrate_vt.run(c, out);
    rmdir(dir); /* as the runner does; the instance must not live there */
}

static void migrate_and_back(void **state) {
    char err[TB_ERR_LEN] = "", why[256], role[32], val[64], base[128];
    tb_infra_def d;
    tb_sut_endpoints ep = {0}, none = {0};
    infra_op_ctx c;
    infra_op_out out;
    volatile sig_atomic_t stop = 0;
    int p1, p2;
    (void)state;
    if (fx_redis_start(&sut, why, sizeof why) != 0) fail_msg("SUT redis: %s", why);
    {
        redisContext *rc = fx_connect(sut.port);
        for (int i = 0; i < 500; i++)
            freeReplyObject(redisCommand(rc, "SET t1:k%d v%d", i, i));
        redisFree(rc);
    }
    snprintf(level_dir, sizeof level_dir, "/tmp/tb-migrate-XXXXXX");
    if (!mkdtemp(level_dir)) fail_msg("mkdtemp");
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "mv");
    d.kind = TB_INFRA_MIGRATE;
    tb_endpoints_set(&ep.redis_host, "127.0.0.1");
    ep.redis_port = sut.port;
    if (infra_migrate_vt.check(&d, &none, err) == 0 || !strstr(err, "Redis")) fail_msg("no redis: '%s'", err);
    if (infra_migrate_vt.check(&d, &ep, err) != 0) fail_msg("%s", err);
    {
        const char *was = getenv("TB_REDIS_SERVER");
        char keep[512];
        snprintf(keep, sizeof keep, "%s", was ? was : "");
        setenv("TB_REDIS_SERVER", "/nonexistent/redis-server", 1);
        if (infra_migrate_vt.check(&d, &ep, err) == 0 || !strstr(err, "migrate: redis-server not found"))
            fail_msg("no redis-server: '%s'", err);
        if (was)
            setenv("TB_REDIS_SERVER", keep, 1);
        else
            unsetenv("TB_REDIS_SERVER");
    }
    memset(&lv, 0, sizeof lv);
    lv.tiles = 2;
    lv.level = 1;
    lv.kv_switch = fake_switch;
    if (!(st = infra_migrate_vt.level_begin(&d, &ep, &lv, level_dir, err))) fail_msg("%s", err);
    snprintf(base, sizeof base, "%s/migrate-mv", level_dir);
    memset(&c, 0, sizeof c);
    c.d = &d, c.ep = &ep, c.lv = &lv, c.tile = 1, c.timeout_us = 30000000, c.stop = &stop, c.state = st;

    /* 1: SUT -> instance 1 */
    one_op(&c, &out, "op1");
    if (out.status != TB_OP_OK) fail_msg("op 1: %s", tb_buf_str(&out.text));
    print_message("%s", tb_buf_str(&out.text));
    p1 = sw.port;
    assert_int_equal(sw.calls, 1);
    assert_int_equal(sw.tile, 1);
    assert_string_equal(sw.host, "127.0.0.1");
    if (p1 == sut.port || !fx_redis_running_on(p1)) fail_msg("op 1 switched to port %d: no new redis-server", p1);
    run_cmd(p1, "ROLE", role, sizeof role);
    assert_string_equal(role, "master");
    assert_int_equal(dbsize(p1), 500);
    run_cmd(p1, "GET t1:k123", val, sizeof val);
    assert_string_equal(val, "v123");
    if (out.bytes == 0 || !strstr(tb_buf_str(&out.text), "500 keys")) fail_msg("op 1 out: %s", tb_buf_str(&out.text));
    tb_buf_free(&out.text);
    run_cmd(p1, "SET t1:moved yes", val, sizeof val); /* a kv user's write on the copy */

    /* 2: instance 1 -> instance 2; instance 1 goes */
    one_op(&c, &out, "op2");
    if (out.status != TB_OP_OK) fail_msg("op 2: %s", tb_buf_str(&out.text));
    p2 = sw.port;
    assert_int_equal(sw.calls, 2);
    if (p2 == p1 || p2 == sut.port || !fx_redis_running_on(p2)) fail_msg("op 2 switched to port %d", p2);
    assert_int_equal(dbsize(p2), 501); /* replicated from instance 1, not from the SUT */
    if (fx_redis_running_on(p1) || dbsize(p1) != -1) fail_msg("instance 1 (port %d) still runs", p1);
    assert_int_equal(entries(base), 1);
    tb_buf_free(&out.text);

    /* without a kv switch: an error saying so, nothing left behind */
    lv.kv_switch = NULL;
    c.tile = 2;
    one_op(&c, &out, "op3");
    if (out.status == TB_OP_OK || !strstr(tb_buf_str(&out.text), "cannot switch"))
        fail_msg("op without a switch: %d %s", out.status, tb_buf_str(&out.text));
    assert_int_equal(entries(base), 1);
    tb_buf_free(&out.text);
    lv.kv_switch = fake_switch;

    /* stopped (tb_infra_stop): an error at once, nothing left behind */
    stop = 1;
    c.tile = 2;
    one_op(&c, &out, "op4");
    if (out.status == TB_OP_OK) fail_msg("a stopped op succeeded: %s", tb_buf_str(&out.text));
    assert_int_equal(entries(base), 1);
    assert_int_equal(fx_redis_count_under(base), 1); /* instance 2 alone */
    assert_int_equal(sw.calls, 2);
    tb_buf_free(&out.text);
    stop = 0;

    /* the level's end: tile 1 back on the SUT's Redis, nothing left */
    infra_migrate_vt.level_end(st, &lv);
    st = NULL;
    assert_int_equal(sw.calls, 3);
    assert_int_equal(sw.tile, 1);
    assert_int_equal(sw.port, sut.port);
    if (fx_redis_running_on(p2) || dbsize(p2) != -1) fail_msg("instance 2 (port %d) still runs", p2);
    assert_int_equal(entries(base), -1);
    assert_int_equal(entries(level_dir), 0);
    assert_int_equal(fx_redis_count_under(level_dir), 0);
    assert_int_equal(dbsize(sut.port), 500); /* the write on the copy is dropped */
    tb_endpoints_free(&ep);
}

static long long calls(int port) {
    long long g = fx_calls(port, "get"), s = fx_calls(port, "set");
    return g < 0 || s < 0 ? -1 : g + s;
}

static void ms(int n) { nanosleep(&(struct timespec){n / 1000, (long)(n % 1000) * 1000000L}, NULL); }

static int lg_switch(void *arg, int tile, const char *host, int port, char *err) {
    sw.calls++;
    sw.port = port;
    return tb_loadgen_kv_switch(arg, tile, host, port, err);
}

static void migrate_under_load(void **state) {
    static const char tile[] = "[tile]\nname = mv\n[workload.kv]\nkind = kv\nusers = 4\nthink_time = 5ms\n"
                               "think_dist = fixed\ntimeout = 1s\nunit = ops/s\nreference = 1\nkeyspace = 200\n";
    char err[TB_ERR_LEN] = "", why[256];
    tb_infra_def d;
    tb_sut_endpoints ep = {0};
    tb_tiledef *def;
    tb_loadgen *lg;
    tb_level_plan pl;
    tb_lg_stats *all = NULL;
    infra_op_ctx c;
    infra_op_out out;
    volatile sig_atomic_t stop = 0;
    uint64_t ops0, e0, ops1, e1, ops2, e2;
    long long s0, s1, s2, s3, n1, n2;
    int port;
    (void)state;
    memset(&sw, 0, sizeof sw);
    if (fx_redis_start(&sut, why, sizeof why) != 0) fail_msg("SUT redis: %s", why);
    snprintf(level_dir, sizeof level_dir, "/tmp/tb-migrate-XXXXXX");
    if (!mkdtemp(level_dir)) fail_msg("mkdtemp");
    if (!(def = tb_tiledef_parse("mv.ini", tile, sizeof tile - 1, err))) fail_msg("%s", err);
    tb_endpoints_set(&ep.redis_host, "127.0.0.1");
    ep.redis_port = sut.port;
    if (tb_loadgen_local_open(def, &ep, 2, &lg, err) != 0) fail_msg("%s", err);
    memset(&pl, 0, sizeof pl);
    pl.tiles = 1;
    pl.n_phases = 1;
    pl.start_us = tb_now_us() + 50000;
    pl.phase_start_us[0] = pl.start_us;
    pl.phase_end_us[0] = pl.start_us + 30000000;
    if (lg->ops->start_level(lg->self, &pl, err) != 0) fail_msg("%s", err);
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "mv");
    d.kind = TB_INFRA_MIGRATE;
    memset(&lv, 0, sizeof lv);
    lv.tiles = 1;
    lv.kv_switch = lg_switch;
    lv.kv_switch_arg = lg;
    if (!(st = infra_migrate_vt.level_begin(&d, &ep, &lv, level_dir, err))) fail_msg("%s", err);
    ms(1000);
    lg->ops->live(lg->self, &ops0, &e0);
    s0 = calls(sut.port);
    if (s0 < 100 || e0) fail_msg("before: SUT %lld calls, %llu errors", s0, (unsigned long long)e0);
    memset(&c, 0, sizeof c);
    c.d = &d, c.ep = &ep, c.lv = &lv, c.tile = 1, c.timeout_us = 30000000, c.stop = &stop, c.state = st;
    one_op(&c, &out, "op1");
    if (out.status != TB_OP_OK) fail_msg("op: %s", tb_buf_str(&out.text));
    tb_buf_free(&out.text);
    port = sw.port;
    ms(200);
    s1 = calls(sut.port), n1 = calls(port);
    ms(1000);
    s2 = calls(sut.port), n2 = calls(port);
    lg->ops->live(lg->self, &ops1, &e1);
    if (s2 != s1) fail_msg("the SUT still gets the tile's ops: %lld -> %lld", s1, s2);
    if (n2 - n1 < 100) fail_msg("the new instance got %lld -> %lld calls", n1, n2);
    if (e1 != e0) fail_msg("the move cost %llu errors", (unsigned long long)(e1 - e0));
    infra_migrate_vt.level_end(st, &lv);
    st = NULL;
    ms(1000);
    s3 = calls(sut.port);
    lg->ops->live(lg->self, &ops2, &e2);
    if (s3 - s2 < 100) fail_msg("home again, the SUT got %lld -> %lld calls", s2, s3);
    if (lg->ops->stop_level(lg->self, &all, err) != 0) fail_msg("%s", err);
    print_message("SUT %lld calls before, new instance %lld after the move, SUT %lld after the level; errors %llu\n",
                  s0, n2, s3 - s2, (unsigned long long)e2);
    tb_lg_stats_free(all);
    tb_loadgen_close(lg);
    tb_tiledef_free(def);
    tb_endpoints_free(&ep);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(migrate_and_back, teardown),
        cmocka_unit_test_teardown(migrate_under_load, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
