/*
 * test_config.c: the tile file parser (tiles/tiledef.c), tile specs
 * (tiles/levels.c) and duration/number parsing (common/tb_common.c),
 * including the bad inputs the CLI must turn into exit 2 with a clear message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/tb_common.h"
#include "tiles/levels.h"
#include "tiles/tiledef.h"

static void durations(void **state) {
    uint64_t us;
    char err[TB_ERR_LEN];
    (void)state;
    assert_int_equal(tb_parse_duration_us("500ms", &us, err), 0);
    assert_int_equal(us, 500000);
    assert_int_equal(tb_parse_duration_us("30s", &us, err), 0);
    assert_int_equal(us, 30000000);
    assert_int_equal(tb_parse_duration_us("5m", &us, err), 0);
    assert_int_equal(us, 300000000);
    assert_int_equal(tb_parse_duration_us("1.5s", &us, err), 0);
    assert_int_equal(us, 1500000);
    assert_int_equal(tb_parse_duration_us("2h", &us, err), 0);
    assert_int_equal(us, 7200000000ull);
    assert_int_equal(tb_parse_duration_us("250us", &us, err), 0);
    assert_int_equal(us, 250);
    assert_int_equal(tb_parse_duration_us("7", &us, err), 0);
    assert_int_equal(us, 7000000);
    assert_int_equal(tb_parse_duration_us("10x", &us, err), -1);
    assert_non_null(strstr(err, "unknown unit 'x'"));
    assert_int_equal(tb_parse_duration_us("-5s", &us, err), -1);
    assert_non_null(strstr(err, "negative"));
    assert_int_equal(tb_parse_duration_us("", &us, err), -1);
    assert_int_equal(tb_parse_duration_us("s", &us, err), -1);
    assert_int_equal(tb_parse_duration_us("nan", &us, err), -1);
    assert_int_equal(tb_parse_duration_us("1e30s", &us, err), -1);
}

static void numbers(void **state) {
    uint64_t v;
    double d;
    char err[TB_ERR_LEN];
    (void)state;
    assert_int_equal(tb_parse_u64("42", &v, err), 0);
    assert_int_equal(v, 42);
    assert_int_equal(tb_parse_u64("-1", &v, err), -1);
    assert_int_equal(tb_parse_u64("4x", &v, err), -1);
    assert_non_null(strstr(err, "'4x'"));
    assert_int_equal(tb_parse_u64("99999999999999999999999", &v, err), -1);
    assert_int_equal(tb_parse_double("2.5", &d, err), 0);
    assert_true(d == 2.5);
    assert_int_equal(tb_parse_double("inf", &d, err), -1);
    assert_int_equal(tb_parse_double("1.0W", &d, err), -1);
}

static void tile_specs(void **state) {
    tb_levels l;
    char err[TB_ERR_LEN];
    (void)state;
    assert_int_equal(tb_levels_parse("3", 8, &l, err), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.tiles[0], 3);
    assert_int_equal(tb_levels_parse("1..4", 8, &l, err), 0);
    assert_int_equal(l.n, 4);
    assert_int_equal(l.tiles[3], 4);
    assert_int_equal(tb_levels_parse("1,2,4,8", 8, &l, err), 0);
    assert_int_equal(l.n, 4);
    assert_int_equal(l.tiles[2], 4);
    assert_int_equal(tb_levels_parse("auto", 5, &l, err), 0);
    assert_int_equal(l.is_auto, 1);
    assert_int_equal(l.n, 5);
    assert_int_equal(tb_levels_parse("0", 8, &l, err), -1);
    assert_non_null(strstr(err, "'0'"));
    assert_non_null(strstr(err, ">= 1"));
    assert_int_equal(tb_levels_parse("3..1", 8, &l, err), -1);
    assert_non_null(strstr(err, "below start 3"));
    assert_int_equal(tb_levels_parse("2,1", 8, &l, err), -1);
    assert_int_equal(tb_levels_parse("1,,2", 8, &l, err), -1);
    assert_int_equal(tb_levels_parse("", 8, &l, err), -1);
    assert_int_equal(tb_levels_parse("x", 8, &l, err), -1);
    assert_int_equal(tb_levels_parse("1..", 8, &l, err), -1);
    assert_int_equal(tb_levels_parse("-1", 8, &l, err), -1);
}

/* Writes text to a temp file; returns its path (static buffer). */
static const char *write_tmp(const char *text) {
    static char path[64];
    int fd;
    snprintf(path, sizeof path, "/tmp/tb_test_cfg_XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void standard_tile_parses(void **state) {
    tb_tiledef def;
    char err[TB_ERR_LEN] = "";
    char path[512];
    (void)state;
    snprintf(path, sizeof path, "%s/tiles/standard.ini", getenv("TB_SOURCE_DIR") ? getenv("TB_SOURCE_DIR") : TB_SOURCE_DIR);
    if (tb_tiledef_load(path, &def, err) != 0) fail_msg("%s", err);
    assert_string_equal(def.name, "standard");
    assert_int_equal(def.n_workloads, 4);
    assert_string_equal(def.workloads[2].name, "mail");
    assert_string_equal(def.workloads[2].kind, "mail");
    assert_string_equal(def.workloads[3].name, "web");
    assert_string_equal(def.workloads[3].kind, "web");
    assert_int_equal(def.workloads[3].think_us, 5000000);
    assert_int_equal(def.workloads[3].cycle, 1);
    assert_string_equal(def.workloads[3].think_dist, "negexp");
    assert_string_equal(def.workloads[0].name, "oltp");
    assert_string_equal(def.workloads[0].kind, "oltp");
    assert_int_equal(def.workloads[0].users, 10);
    assert_int_equal(def.workloads[0].think_us, 1000000);
    assert_string_equal(def.workloads[0].think_dist, "uniform");
    assert_string_equal(def.workloads[0].unit, "OPM");
    assert_non_null(tb_tiledef_param(&def.workloads[0], "new_customer_pct"));
    assert_true(def.n_rules >= 2);
    assert_string_equal(def.rules[0].workload, "oltp");
    assert_string_equal(def.rules[0].op, "Order");
    assert_int_equal(def.rules[0].kind, TB_QOS_PERCENTILE);
    assert_true(def.rules[0].pct == 95);
    assert_true(def.rules[0].limit == 2000);
    assert_int_equal(def.has_sut, 0);
    assert_non_null(def.text);
    tb_tiledef_free(&def);
}

static void sut_section_and_overrides(void **state) {
    tb_tiledef def;
    char err[TB_ERR_LEN] = "";
    const char *p = write_tmp("[tile]\nname = t\n[stages]\nsteady = 90s\nphases = 3\n"
                              "[workload.kv]\nkind = kv\nusers = 7\ncycle_time = 250ms\nreference = 10\n"
                              "[qos.kv]\nGET.p99.9 = 5ms\nSET.mean = 2ms\nerror_rate = 1\n"
                              "[sut]\npg = host=127.0.0.1 port=5 dbname=x\nredis = 127.0.0.1:6380\n");
    (void)state;
    if (tb_tiledef_load(p, &def, err) != 0) fail_msg("%s", err);
    assert_int_equal(def.stages.steady_us, 90000000);
    assert_int_equal(def.stages.phases, 3);
    assert_int_equal(def.workloads[0].users, 7);
    assert_int_equal(def.workloads[0].cycle, 1);
    assert_int_equal(def.workloads[0].think_us, 250000);
    assert_int_equal(def.n_rules, 3);
    assert_true(def.rules[0].pct > 99.89 && def.rules[0].pct < 99.91);
    assert_int_equal(def.rules[1].kind, TB_QOS_MEAN);
    assert_int_equal(def.rules[2].kind, TB_QOS_ERROR_RATE);
    assert_string_equal(def.rules[2].op, "*");
    assert_int_equal(def.has_sut, 1);
    assert_string_equal(def.sut.redis_host, "127.0.0.1");
    assert_int_equal(def.sut.redis_port, 6380);
    assert_string_equal(def.sut.pg_conninfo, "host=127.0.0.1 port=5 dbname=x");
    tb_tiledef_free(&def);
    unlink(p);
}

/* [sut] telemetry: kept, and alone it does not make the SUT external (the
 * embedded SUT still starts); with endpoints beside it, both are taken. */
static void sut_telemetry_key(void **state) {
    tb_tiledef def;
    char err[TB_ERR_LEN] = "";
    const char *p = write_tmp("[workload.kv]\nkind = kv\nreference = 1\n[sut]\ntelemetry = http://10.0.0.7:9100/metrics\n");
    (void)state;
    if (tb_tiledef_load(p, &def, err) != 0) fail_msg("%s", err);
    unlink(p);
    assert_int_equal(def.has_sut, 0);
    assert_string_equal(def.telemetry, "http://10.0.0.7:9100/metrics");
    tb_tiledef_free(&def);
    p = write_tmp("[workload.kv]\nkind = kv\nreference = 1\n[sut]\nredis = 10.0.0.7:6379\ntelemetry = none\n");
    if (tb_tiledef_load(p, &def, err) != 0) fail_msg("%s", err);
    unlink(p);
    assert_int_equal(def.has_sut, 1);
    assert_string_equal(def.telemetry, "none");
    tb_tiledef_free(&def);
}

/* Each bad file must fail with a message naming line and key. */
static void bad_files(void **state) {
    static const struct {
        const char *text;
        const char *want1, *want2;
    } cases[] = {
        {"[workload.kv]\nkind = kv\nusers = ten\nreference = 1\n", ":3:", "users: 'ten'"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[stages]\nsteady = 10x\n", ":5:", "steady: '10x'"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[stages]\nramp_up = -1s\n", ":5:", "negative"},
        {"[workload.kv]\nkind = mystery\n", ":2:", "unknown workload kind 'mystery'"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[qos.kv]\nFOO.p90 = 1s\n", "qos.kv", "no op 'FOO'"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[qos.web]\nX.p90 = 1s\n", "qos.web", "no workload named 'web'"},
        {"[workload.kv]\nkind = kv\n", "reference", "missing"},
        {"[tile]\nname = x\n", "no [workload.NAME]", ""},
        {"[workload.kv]\nkind = kv\nreference = 1\n[bogus]\nx = 1\n", ":5:", "unknown section"},
        {"[workload.kv]\nkind = kv\nreference = 1\nthis line has no equals\n", ":4:", "syntax error"},
        /* a malformed line is named itself, not a later key that landed in the wrong section */
        {"[workload.kv]\nkind = kv\nreference = 1\n[qos.kv]\nGET.p90 = 1s\n[workload.web\nkind = http\n", ":6:",
         "syntax error: unclosed section header (no ']'): '[workload.web'"},
        {"hello world\n\n[bogus]\nx = 1\n", ":1:", "syntax error: expected key = value (or [section]): 'hello world'"},
        /* bytes from a binary file are escaped, never echoed raw to a terminal */
        {"\x7f" "ELF\x02\x01\n", ":1:", "'\\x7f" "ELF\\x02\\x01'"},
        {"[workload.kv]\nkind = k\x1b[2Jv\n", ":2:", "'k\\x1b[2Jv'"},
        {"[workload.kv]\nkind = caf\xc3\xa9\xff\n", ":2:", "'caf\xc3\xa9\\xff'"},
        /* a long malformed line is quoted cut short */
        {"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789\n", ":1:", "'01234567890123456789012345678901234567890123456789012345678901234567...'"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[sut]\nredis = nohostport\n", ":5:", "HOST:PORT"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[stages]\nphases = 0\n", ":5:", "phases"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[sut]\ntelemetry = node1:9100\n", ":5:", "telemetry: use local"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_tiledef def;
        char err[TB_ERR_LEN] = "";
        const char *p = write_tmp(cases[i].text);
        int rc = tb_tiledef_load(p, &def, err);
        unlink(p);
        if (rc == 0) fail_msg("case %zu parsed but should fail", i);
        if (!strstr(err, cases[i].want1) || !strstr(err, cases[i].want2))
            fail_msg("case %zu: message '%s' lacks '%s' / '%s'", i, err, cases[i].want1, cases[i].want2);
        for (const char *c = err; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) fail_msg("case %zu: raw control byte in '%s'", i, err);
        if (!strstr(err, p) && strncmp(cases[i].want1, "qos", 3) != 0)
            fail_msg("case %zu: message '%s' does not name the file", i, err);
    }
}

/* Every shipped example tile parses. */
static void examples_parse(void **state) {
    static const char *const files[] = {"tiles/examples/redis-seed.ini"};
    (void)state;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        tb_tiledef def;
        char err[TB_ERR_LEN] = "", path[512];
        snprintf(path, sizeof path, "%s/%s", getenv("TB_SOURCE_DIR") ? getenv("TB_SOURCE_DIR") : TB_SOURCE_DIR,
                 files[i]);
        if (tb_tiledef_load(path, &def, err) != 0) fail_msg("%s", err);
        assert_int_equal(def.workloads[0].users, 1000);
        assert_string_equal(tb_tiledef_param(&def.workloads[0], "value_size")->value, "1");
        tb_tiledef_free(&def);
    }
}

/* Secrets in [sut] reach the parsed endpoints but not the text stored with
 * the run; everything else of the text is kept byte for byte. Parsed from
 * memory (tb_tiledef_parse), without a terminating NUL. */
static void stored_text_has_no_secrets(void **state) {
    static const char text[] =
        "[tile]\nname = t\n; password = not-a-secret-here\n[workload.kv]\nkind = kv\nreference = 10\n"
        "[sut]\npg = host=127.0.0.1 password = 'Se cr\\'et1' dbname=x\n"
        "pg.tile2 = postgresql://tb:Secret2@127.0.0.1:5432/tb?password=Secret3\n"
        "mail_password: Secret4\nmail_user = tile%t-user%u\n[sutx]\nmail_password = kept\n";
    char buf[sizeof text - 1];
    tb_tiledef def;
    char err[TB_ERR_LEN] = "";
    (void)state;
    memcpy(buf, text, sizeof buf);
    if (tb_tiledef_parse("mem.ini", buf, sizeof buf, &def, err) == 0) fail_msg("[sutx] accepted");
    assert_non_null(strstr(err, "mem.ini:"));
    /* the same without the unknown section */
    if (tb_tiledef_parse("mem.ini", buf, (size_t)(strstr(text, "[sutx]") - text), &def, err) != 0) fail_msg("%s", err);
    assert_string_equal(def.sut.mail_password, "Secret4");
    assert_non_null(strstr(def.sut.pg_conninfo, "Se cr\\'et1"));
    for (int i = 1; i <= 4; i++) {
        char secret[16];
        snprintf(secret, sizeof secret, "Secret%d", i);
        if (strstr(def.text, secret) || strstr(def.text, "cr\\'et1")) fail_msg("stored text holds a secret:\n%s", def.text);
    }
    assert_non_null(strstr(def.text, "pg = host=127.0.0.1 password=*** dbname=x\n"));
    assert_non_null(strstr(def.text, "pg.tile2 = postgresql://tb:***@127.0.0.1:5432/tb?password=***\n"));
    assert_non_null(strstr(def.text, "mail_password: ***\n"));
    assert_non_null(strstr(def.text, "; password = not-a-secret-here\n"));
    assert_non_null(strstr(def.text, "\nmail_user = tile%t-user%u\n"));
    tb_tiledef_free(&def);
}

static void unreadable_file(void **state) {
    tb_tiledef def;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_tiledef_load("/nonexistent/tile.ini", &def, err), -1);
    assert_non_null(strstr(err, "/nonexistent/tile.ini"));
    assert_non_null(strstr(err, "No such file"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations),         cmocka_unit_test(numbers),
        cmocka_unit_test(tile_specs),        cmocka_unit_test(standard_tile_parses),
        cmocka_unit_test(sut_section_and_overrides), cmocka_unit_test(bad_files),
        cmocka_unit_test(sut_telemetry_key),         cmocka_unit_test(stored_text_has_no_secrets),
        cmocka_unit_test(unreadable_file),   cmocka_unit_test(examples_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
