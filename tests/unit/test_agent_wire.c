/*
 * test_agent_wire.c: the agent protocol's pure parts: what an agent says
 * about itself, the SUT endpoints (secrets included) and a level's plan as
 * JSON and back, refusals of malformed ones, the tile text an agent gets
 * (its [sut] section blanked line for line), and how a level's tiles are
 * dealt over agents (whole, contiguous, in proportion to their threads,
 * every tile exactly once). The expected deals are worked out by hand here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/remote.h"
#include "agent/wire.h"

static void test_info_round_trip(void **state) {
    (void)state;
    tb_agent_info a = {.name = "lg-01.lab",
                       .host = "client1",
                       .cores = 16,
                       .threads = 12,
                       .version = "0.1.0",
                       .protocol = TB_AGENT_PROTOCOL,
                       .state = "busy",
                       .coord = "ctl:42:abc"},
                  b;
    char err[TB_ERR_LEN], *text;
    json_t *j = tb_wire_info_json(&a);
    text = json_dumps(j, JSON_COMPACT);
    assert_int_equal(tb_wire_info_parse(text, strlen(text), &b, err), 0);
    assert_string_equal(b.name, "lg-01.lab");
    assert_string_equal(b.host, "client1");
    assert_int_equal(b.cores, 16);
    assert_int_equal(b.threads, 12);
    assert_int_equal(b.protocol, TB_AGENT_PROTOCOL);
    assert_string_equal(b.coord, "ctl:42:abc");
    free(text);
    json_decref(j);
}

static void test_info_refused(void **state) {
    (void)state;
    static const struct {
        const char *json, *why;
    } bad[] = {
        {"[]", "not a JSON object"},
        {"{", "not a JSON object"},
        {"{\"host\":\"h\",\"version\":\"1\",\"state\":\"idle\",\"cores\":1,\"threads\":1,\"protocol\":1}",
         "'name' missing"},
        {"{\"name\":\"a "
         "b\",\"host\":\"h\",\"version\":\"1\",\"state\":\"idle\",\"cores\":1,\"threads\":1,\"protocol\":1}",
         "bad name"},
        {"{\"name\":\"a\",\"host\":\"h\",\"version\":\"1\",\"state\":\"idle\",\"cores\":0,\"threads\":1,\"protocol\":"
         "1}",
         "'cores'"},
        {"{\"name\":\"a\",\"host\":\"h\",\"version\":\"1\",\"state\":\"idle\",\"cores\":1,\"threads\":\"2\","
         "\"protocol\":1}",
         "'threads'"},
        {"{\"name\":\"a\",\"host\":7,\"version\":\"1\",\"state\":\"idle\",\"cores\":1,\"threads\":1,\"protocol\":1}",
         "'host'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb_agent_info a;
        char err[TB_ERR_LEN] = "";
        assert_int_equal(tb_wire_info_parse(bad[i].json, strlen(bad[i].json), &a, err), -1);
        if (!strstr(err, bad[i].why)) fail_msg("case %zu: '%s' does not say %s", i, err, bad[i].why);
    }
}

static void test_names(void **state) {
    (void)state;
    char long_name[80];
    memset(long_name, 'a', 64);
    long_name[64] = 0;
    assert_true(tb_wire_name_ok("a"));
    assert_true(tb_wire_name_ok("lab-7_b.x"));
    assert_false(tb_wire_name_ok(""));
    assert_false(tb_wire_name_ok("a:b")); /* ':' would split a key */
    assert_false(tb_wire_name_ok("a*"));  /* '*' is a key pattern */
    assert_false(tb_wire_name_ok(long_name));
    long_name[63] = 0;
    assert_true(tb_wire_name_ok(long_name));
}

static void test_endpoints_round_trip(void **state) {
    (void)state;
    tb_sut_endpoints a = {0}, b = {0};
    char err[TB_ERR_LEN];
    json_t *j;
    tb_endpoints_set(&a.pg_conninfo, "host=198.18.0.3 port=5432 dbname=tb user=tb password=s3cr3t");
    tb_endpoints_set(&a.redis_host, "198.18.0.3");
    a.redis_port = 6379;
    tb_endpoints_set(&a.imap_host, "198.18.0.3");
    a.imap_port = 143;
    tb_endpoints_set(&a.lmtp_host, "198.18.0.3");
    a.lmtp_port = 24;
    tb_endpoints_set(&a.mail_password, "m@il pw");
    tb_endpoints_set(&a.mail_user, "u%t-%u");
    tb_endpoints_add_pg_tile(&a, 2, "host=198.18.0.4 dbname=t2");
    tb_endpoints_add_web_tile(&a, 1, "http://198.18.0.3:8001");
    tb_endpoints_add_web_tile(&a, 2, "http://198.18.0.3:8002");
    j = tb_wire_endpoints_json(&a);
    assert_int_equal(tb_wire_endpoints_parse(j, &b, err), 0);
    assert_string_equal(b.pg_conninfo, a.pg_conninfo);
    assert_string_equal(b.redis_host, "198.18.0.3");
    assert_int_equal(b.redis_port, 6379);
    assert_int_equal(b.lmtp_port, 24);
    assert_int_equal(b.smtp_port, 0);
    assert_null(b.smtp_host);
    assert_string_equal(b.mail_password, "m@il pw"); /* the secret travels (only through the broker) */
    assert_string_equal(b.mail_user, "u%t-%u");
    assert_int_equal(b.n_pg_tile, 1);
    assert_int_equal(b.pg_tile[0].tile, 2);
    assert_int_equal(b.n_web_tile, 2);
    assert_string_equal(tb_sut_web_url(&b, 2), "http://198.18.0.3:8002");
    json_decref(j);
    tb_endpoints_free(&b);
    j = json_pack("{s:i, s:[], s:[]}", "redis_port", 70000, "pg_tile", "web_tile");
    assert_int_equal(tb_wire_endpoints_parse(j, &b, err), -1);
    assert_non_null(strstr(err, "'redis_port'"));
    json_decref(j);
    tb_endpoints_free(&a);
}

static tb_wire_plan plan3(void) {
    tb_wire_plan p = {.seq = 4,
                      .tiles = 5,
                      .tile_lo = 2,
                      .tile_hi = 4,
                      .start_b = 1700000000000000,
                      .ramp_up_us = 2000000,
                      .workload_mask = 5, /* --interference: workloads 0 and 2 */
                      .n_phases = 3};
    for (int i = 0; i < 3; i++) {
        p.phase_start_b[i] = p.start_b + 3000000 + 10000000 * i;
        p.phase_end_b[i] = p.phase_start_b[i] + 10000000;
    }
    return p;
}

static void test_plan(void **state) {
    (void)state;
    tb_wire_plan a = plan3(), b;
    char err[TB_ERR_LEN];
    json_t *j = tb_wire_plan_json(&a);
    assert_int_equal(tb_wire_plan_parse(j, &b, err), 0);
    assert_memory_equal(&a, &b, sizeof a);
    json_decref(j);
    /* a range outside the level, a phase that ends before it starts, one before the level */
    a.tile_hi = 6;
    j = tb_wire_plan_json(&a);
    assert_int_equal(tb_wire_plan_parse(j, &b, err), -1);
    assert_non_null(strstr(err, "'hi'"));
    json_decref(j);
    a = plan3();
    a.phase_end_b[1] = a.phase_start_b[1];
    j = tb_wire_plan_json(&a);
    assert_int_equal(tb_wire_plan_parse(j, &b, err), -1);
    assert_non_null(strstr(err, "phase 2"));
    json_decref(j);
    a = plan3();
    a.phase_start_b[0] = a.start_b - 1;
    j = tb_wire_plan_json(&a);
    assert_int_equal(tb_wire_plan_parse(j, &b, err), -1);
    assert_non_null(strstr(err, "phase 1"));
    json_decref(j);
    /* a mask naming a workload past TB_MAX_WORKLOADS; none (an older coordinator) runs them all */
    a = plan3();
    a.workload_mask = 1u << TB_MAX_WORKLOADS;
    j = tb_wire_plan_json(&a);
    assert_int_equal(tb_wire_plan_parse(j, &b, err), -1);
    assert_non_null(strstr(err, "'workload_mask'"));
    json_object_del(j, "workload_mask");
    assert_int_equal(tb_wire_plan_parse(j, &b, err), 0);
    assert_int_equal(b.workload_mask, 0);
    json_decref(j);
    a = plan3();
    a.n_phases = 0;
    j = tb_wire_plan_json(&a);
    assert_int_equal(tb_wire_plan_parse(j, &b, err), -1);
    assert_non_null(strstr(err, "'phases'"));
    json_decref(j);
}

/* The [sut] section is blanked line for line (its secrets and files stay
 * home); every other line is the file's, in place. */
static void test_tile_text(void **state) {
    (void)state;
    const char *in = "[tile]\nname = t\n[ sut ]\npg = host=x password=p\nmail_password_file = /etc/pw\n"
                     "[workload.kv]\nkind = kv\n[sut]\nredis = h:1\n[agents]\ncount = 2";
    const char *want = "[tile]\nname = t\n\n\n\n[workload.kv]\nkind = kv\n\n\n[agents]\ncount = 2";
    char *out = tb_wire_tile_text(in);
    assert_string_equal(out, want);
    free(out);
    out = tb_wire_tile_text("");
    assert_string_equal(out, "");
    free(out);
    out = tb_wire_tile_text("[sutx]\na = 1\n[suts]\n");
    assert_string_equal(out, "[sutx]\na = 1\n[suts]\n");
    free(out);
}

/* Deals checked against hand-worked ones; then, for many shapes, that the
 * parts cover 1..tiles once, in order, and each is within one tile of its
 * exact share. */
static void test_deal(void **state) {
    (void)state;
    int lo[8], hi[8];
    {
        int w[2] = {1, 1};
        tb_remote_deal(1, 2, w, lo, hi); /* one tile: the first agent (ties to the lower index) */
        assert_int_equal(lo[0], 1);
        assert_int_equal(hi[0], 1);
        assert_int_equal(lo[1], 0);
        assert_int_equal(hi[1], 0);
        tb_remote_deal(3, 2, w, lo, hi); /* 1.5 each: the remainder to the first */
        assert_int_equal(hi[0], 2);
        assert_int_equal(lo[1], 3);
        assert_int_equal(hi[1], 3);
    }
    {
        int w[3] = {4, 2, 2}; /* 8 tiles: 4, 2, 2 */
        tb_remote_deal(8, 3, w, lo, hi);
        assert_int_equal(lo[0], 1);
        assert_int_equal(hi[0], 4);
        assert_int_equal(lo[1], 5);
        assert_int_equal(hi[1], 6);
        assert_int_equal(lo[2], 7);
        assert_int_equal(hi[2], 8);
        tb_remote_deal(5, 3, w, lo, hi); /* 2.5, 1.25, 1.25: 2 + 1 + 1, then the .5 to the first */
        assert_int_equal(hi[0] - lo[0] + 1, 3);
        assert_int_equal(hi[1] - lo[1] + 1, 1);
        assert_int_equal(hi[2] - lo[2] + 1, 1);
    }
    for (int tiles = 1; tiles <= 40; tiles++)
        for (int n = 1; n <= 8; n++) {
            int w[8], total = 0, next = 1;
            for (int i = 0; i < n; i++)
                total += w[i] = 1 + (i * 7 + tiles) % 5;
            tb_remote_deal(tiles, n, w, lo, hi);
            for (int i = 0; i < n; i++) {
                double exact = (double)tiles * w[i] / total;
                int got = lo[i] ? hi[i] - lo[i] + 1 : 0;
                if (lo[i]) {
                    assert_int_equal(lo[i], next);
                    next = hi[i] + 1;
                }
                assert_true(got >= (int)exact && got <= (int)exact + 1);
            }
            assert_int_equal(next, tiles + 1);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_round_trip),
        cmocka_unit_test(test_info_refused),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_endpoints_round_trip),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_tile_text),
        cmocka_unit_test(test_deal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
