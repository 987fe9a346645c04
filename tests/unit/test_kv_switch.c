/*
 * test_kv_switch.c: the load generator moves a tile's kv users to another
 * Redis while they run (tb_loadgen_kv_switch; loadgen/kv.c, loadgen/worker.c),
 * against two real redis-servers A and B. A local load generator runs 4 kv
 * users of tile 1 against A; switched to B, B's own INFO commandstats count
 * the GETs and SETs from then on and A's stop growing, and the switch costs
 * no error; switched to a port where nothing listens, every op fails and is
 * counted as an error (shown, not hidden) and neither server sees any;
 * switched home to A, A's counts grow again.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <time.h>

#include "loadgen/loadgen.h"
#include "redis_fixture.h"

static long long calls(int port) {
    long long g = fx_calls(port, "get"), s = fx_calls(port, "set");
    return g < 0 || s < 0 ? -1 : g + s;
}

static void ms(int n) { nanosleep(&(struct timespec){n / 1000, (long)(n % 1000) * 1000000L}, NULL); }

static void errors_now(tb_loadgen *lg, uint64_t *ops, uint64_t *errs) { lg->ops->live(lg->self, ops, errs); }

static fx_redis a, b; /* stopped by teardown, also when a check fails */

static int stop_servers(void **state) {
    (void)state;
    fx_redis_stop(&a);
    fx_redis_stop(&b);
    return 0;
}

static void switch_moves_users(void **state) {
    static const char tile[] = "[tile]\nname = sw\n[workload.kv]\nkind = kv\nusers = 4\nthink_time = 5ms\n"
                               "think_dist = fixed\ntimeout = 1s\nunit = ops/s\nreference = 1\nkeyspace = 100\n";
    char err[TB_ERR_LEN] = "", why[256];
    tb_sut_endpoints ep = {0};
    tb_tiledef *d;
    tb_loadgen *lg;
    tb_level_plan pl;
    tb_lg_stats *all = NULL;
    uint64_t ops0, e0, ops1, e1, ops2, e2, ops3, e3;
    long long a0, a1, a2, a3, a4, b0, b1, b2, b3;
    int dead = fx_free_port();
    (void)state;
    if (fx_redis_start(&a, why, sizeof why) != 0) fail_msg("redis A: %s", why);
    if (fx_redis_start(&b, why, sizeof why) != 0) fail_msg("redis B: %s", why);
    if (!(d = tb_tiledef_parse("sw.ini", tile, sizeof tile - 1, err))) fail_msg("%s", err);
    tb_endpoints_set(&ep.redis_host, "127.0.0.1");
    ep.redis_port = a.port;
    if (tb_loadgen_local_open(d, &ep, 2, &lg, err) != 0) fail_msg("%s", err);
    if (tb_loadgen_kv_switch(lg, 0, "127.0.0.1", b.port, err) == 0) fail_msg("tile 0 accepted");
    memset(&pl, 0, sizeof pl);
    pl.tiles = 1;
    pl.n_phases = 1;
    pl.start_us = tb_now_us() + 50000;
    pl.phase_start_us[0] = pl.start_us;
    pl.phase_end_us[0] = pl.start_us + 30000000;
    if (lg->ops->start_level(lg->self, &pl, err) != 0) fail_msg("%s", err);

    /* on A */
    ms(1000);
    a0 = calls(a.port), b0 = calls(b.port);
    errors_now(lg, &ops0, &e0);
    if (a0 < 100 || b0 != 0 || e0 != 0)
        fail_msg("on A: A %lld calls, B %lld, %llu errors", a0, b0, (unsigned long long)e0);

    /* to B: A stops (once the ops in flight, at most 4, are done), B grows, no error */
    if (tb_loadgen_kv_switch(lg, 1, "127.0.0.1", b.port, err) != 0) fail_msg("switch to B: %s", err);
    /* counted from the switch's return: the users' ops before it went to A,
     * however long the call took on a loaded machine */
    a0 = calls(a.port);
    ms(200);
    a1 = calls(a.port);
    ms(1000);
    a2 = calls(a.port), b1 = calls(b.port);
    errors_now(lg, &ops1, &e1);
    if (a1 - a0 > 4 || a2 != a1) fail_msg("A after the switch: %lld, %lld, %lld calls", a0, a1, a2);
    if (b1 < 100) fail_msg("B after the switch: %lld calls", b1);
    if (e1 != e0) fail_msg("the switch to a running B cost %llu errors", (unsigned long long)(e1 - e0));

    /* to a port where nothing listens: every op an error, counted */
    if (tb_loadgen_kv_switch(lg, 1, "127.0.0.1", dead, err) != 0) fail_msg("switch to dead: %s", err);
    ms(200);
    b2 = calls(b.port);
    ms(800);
    errors_now(lg, &ops2, &e2);
    if (e2 - e1 < 4) fail_msg("switched to a dead port: only %llu errors", (unsigned long long)(e2 - e1));
    if (calls(b.port) != b2 || calls(a.port) != a2)
        fail_msg("switched to a dead port, A or B still got calls: A %lld -> %lld, B %lld -> %lld", a2, calls(a.port),
                 b2, calls(b.port));

    /* home to A: A grows again (after the reconnect back-off, at most 5 s) */
    if (tb_loadgen_kv_switch(lg, 1, "127.0.0.1", a.port, err) != 0) fail_msg("switch to A: %s", err);
    a3 = calls(a.port);
    for (int i = 0; i < 70 && calls(a.port) - a3 < 100; i++)
        ms(100);
    a4 = calls(a.port);
    b3 = calls(b.port);
    errors_now(lg, &ops3, &e3);
    if (a4 - a3 < 100) fail_msg("home to A: A %lld -> %lld calls", a3, a4);
    if (b3 != b2) fail_msg("home to A, B still got calls: %lld -> %lld", b2, b3);
    if (lg->ops->stop_level(lg->self, &all, err) != 0) fail_msg("%s", err);
    print_message("A %lld calls before, B %lld while switched, %llu errors on the dead port, A %lld after\n", a0, b1,
                  (unsigned long long)(e2 - e1), a4 - a3);
    tb_lg_stats_free(all);
    tb_loadgen_close(lg);
    tb_tiledef_free(d);
    tb_endpoints_free(&ep);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(switch_moves_users, stop_servers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
