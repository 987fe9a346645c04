/*
 * test_agent_kv_switch.c: a tile's kv users moved to another Redis while
 * they run on a load-generator agent (agent/remote.c sends "kv_switch",
 * agent/agent.c applies it to its local load generator and answers
 * "kv_switched"). Real servers: a broker Redis, Redis A (the SUT's) and
 * Redis B; the agent serves in a thread of this process. After the switch,
 * B's commandstats grow and A's stop; a switch of a tile no agent runs is
 * refused with the reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/remote.h"
#include "redis_fixture.h"

static fx_redis broker, a, b;
static volatile sig_atomic_t agent_stop;
static pthread_t agent_th;
static int agent_on;
static char uri[64];

static long long calls(int port) {
    long long g = fx_calls(port, "get"), s = fx_calls(port, "set");
    return g < 0 || s < 0 ? -1 : g + s;
}

static void ms(int n) { nanosleep(&(struct timespec){n / 1000, (long)(n % 1000) * 1000000L}, NULL); }

static void *agent_main(void *arg) {
    static tb_agent_opts o;
    static char err[TB_ERR_LEN];
    (void)arg;
    o.broker_uri = uri;
    o.name = "kvsw";
    o.threads = 1;
    o.stop = &agent_stop;
    (void)tb_agent_serve(&o, err);
    return NULL;
}

static int teardown(void **state) {
    (void)state;
    agent_stop = 1;
    if (agent_on) pthread_join(agent_th, NULL);
    agent_on = 0;
    fx_redis_stop(&a);
    fx_redis_stop(&b);
    fx_redis_stop(&broker);
    return 0;
}

static void switch_on_agent(void **state) {
    static const char tile[] = "[tile]\nname = sw\n[workload.kv]\nkind = kv\nusers = 4\nthink_time = 5ms\n"
                               "think_dist = fixed\ntimeout = 1s\nunit = ops/s\nreference = 1\nkeyspace = 100\n";
    char err[TB_ERR_LEN] = "", why[256];
    tb_sut_endpoints ep = {0};
    tb_remote_opts ro;
    tb_tiledef *d;
    tb_loadgen *lg;
    tb_level_plan pl;
    tb_lg_stats *all = NULL;
    long long a0, a1, a2, b0, b1;
    (void)state;
    if (fx_redis_start(&broker, why, sizeof why) != 0) fail_msg("broker: %s", why);
    if (fx_redis_start(&a, why, sizeof why) != 0) fail_msg("redis A: %s", why);
    if (fx_redis_start(&b, why, sizeof why) != 0) fail_msg("redis B: %s", why);
    snprintf(uri, sizeof uri, "redis://127.0.0.1:%d", broker.port);
    if (pthread_create(&agent_th, NULL, agent_main, NULL) != 0) fail_msg("agent thread");
    agent_on = 1;
    if (!(d = tb_tiledef_parse("sw.ini", tile, sizeof tile - 1, err))) fail_msg("%s", err);
    tb_endpoints_set(&ep.redis_host, "127.0.0.1");
    ep.redis_port = a.port;
    memset(&ro, 0, sizeof ro);
    ro.broker_uri = uri;
    ro.agents = 1;
    ro.wait_us = 20000000;
    ro.stop = &agent_stop; /* never set before the end */
    if (tb_loadgen_remote_open(d, &ep, &ro, &lg, err) != 0) fail_msg("remote open: %s", err);
    if (tb_loadgen_kv_switch(lg, 1, "127.0.0.1", b.port, err) == 0) fail_msg("a switch with no level accepted");
    memset(&pl, 0, sizeof pl);
    pl.tiles = 1;
    pl.n_phases = 1;
    pl.start_us = tb_now_us() + lg->lead_us + 200000;
    pl.phase_start_us[0] = pl.start_us;
    pl.phase_end_us[0] = pl.start_us + 30000000;
    if (lg->ops->start_level(lg->self, &pl, err) != 0) fail_msg("start: %s", err);
    while (tb_now_us() < pl.start_us + 1000000)
        ms(50);
    a0 = calls(a.port), b0 = calls(b.port);
    if (a0 < 100 || b0 != 0) fail_msg("on A: A %lld calls, B %lld", a0, b0);
    if (tb_loadgen_kv_switch(lg, 2, "127.0.0.1", b.port, err) == 0 || !strstr(err, "no agent runs tile 2"))
        fail_msg("tile 2: '%s'", err);
    if (tb_loadgen_kv_switch(lg, 1, "127.0.0.1", b.port, err) != 0) fail_msg("switch to B: %s", err);
    /* counted from the switch's return: the users' ops before it went to A,
     * however long the call took on a loaded machine */
    a0 = calls(a.port);
    ms(200);
    a1 = calls(a.port);
    ms(1000);
    a2 = calls(a.port), b1 = calls(b.port);
    if (a1 - a0 > 4 || a2 != a1) fail_msg("A after the switch: %lld, %lld, %lld calls", a0, a1, a2);
    if (b1 < 100) fail_msg("B after the switch: %lld calls", b1);
    if (lg->ops->stop_level(lg->self, &all, err) != 0) fail_msg("stop: %s", err);
    print_message("A %lld calls before, B %lld after the switch on the agent\n", a0, b1);
    tb_lg_stats_free(all);
    tb_loadgen_close(lg);
    tb_tiledef_free(d);
    tb_endpoints_free(&ep);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(switch_on_agent, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
