/*
 * test_config.c: the tile file parser (tiles/tiledef.c), tile specs
 * (tiles/levels.c) and duration/number parsing (common/tb_common.c),
 * including the bad inputs the CLI must turn into exit 2 with a clear message.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/tb_common.h"
#include "tiles/ini_text.h"
#include "tiles/kinds.h"
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
    tb_tiledef *def;
    char err[TB_ERR_LEN] = "";
    char path[512];
    (void)state;
    snprintf(path, sizeof path, "%s/tiles/standard.ini",
             getenv("TB_SOURCE_DIR") ? getenv("TB_SOURCE_DIR") : TB_SOURCE_DIR);
    if (!(def = tb_tiledef_load(path, err))) fail_msg("%s", err);
    assert_string_equal(def->name, "standard");
    assert_int_equal(def->n_workloads, 4);
    assert_string_equal(def->workloads[2].name, "mail");
    assert_string_equal(def->workloads[2].kind, "mail");
    assert_string_equal(def->workloads[3].name, "web");
    assert_string_equal(def->workloads[3].kind, "web");
    assert_int_equal(def->workloads[3].think_us, 5000000);
    assert_int_equal(def->workloads[3].cycle, 1);
    assert_string_equal(def->workloads[3].think_dist, "negexp");
    assert_string_equal(def->workloads[0].name, "oltp");
    assert_string_equal(def->workloads[0].kind, "oltp");
    assert_int_equal(def->workloads[0].users, 10);
    assert_int_equal(def->workloads[0].think_us, 1000000);
    assert_string_equal(def->workloads[0].think_dist, "uniform");
    assert_string_equal(def->workloads[0].unit, "OPM");
    assert_non_null(tb_tiledef_param(&def->workloads[0], "new_customer_pct"));
    assert_true(def->n_rules >= 2);
    assert_string_equal(def->rules[0].workload, "oltp");
    assert_string_equal(def->rules[0].op, "Order");
    assert_int_equal(def->rules[0].kind, TB_QOS_PERCENTILE);
    assert_true(def->rules[0].pct == 95);
    assert_true(def->rules[0].limit == 2000);
    assert_int_equal(def->has_sut, 0);
    assert_non_null(def->text);
    tb_tiledef_free(def);
}

static void sut_section_and_overrides(void **state) {
    tb_tiledef *def;
    char err[TB_ERR_LEN] = "";
    const char *p = write_tmp("[tile]\nname = t\n[stages]\nsteady = 90s\nphases = 3\n"
                              "[workload.kv]\nkind = kv\nusers = 7\ncycle_time = 250ms\nreference = 10\n"
                              "[qos.kv]\nGET.p99.9 = 5ms\nSET.mean = 2ms\nerror_rate = 1\n"
                              "[sut]\npg = host=127.0.0.1 port=5 dbname=x\nredis = 127.0.0.1:6380\n");
    (void)state;
    if (!(def = tb_tiledef_load(p, err))) fail_msg("%s", err);
    assert_int_equal(def->stages.steady_us, 90000000);
    assert_int_equal(def->stages.phases, 3);
    assert_int_equal(def->workloads[0].users, 7);
    assert_int_equal(def->workloads[0].cycle, 1);
    assert_int_equal(def->workloads[0].think_us, 250000);
    assert_int_equal(def->n_rules, 3);
    assert_true(def->rules[0].pct > 99.89 && def->rules[0].pct < 99.91);
    assert_int_equal(def->rules[1].kind, TB_QOS_MEAN);
    assert_int_equal(def->rules[2].kind, TB_QOS_ERROR_RATE);
    assert_string_equal(def->rules[2].op, "*");
    assert_int_equal(def->has_sut, 1);
    assert_string_equal(def->sut.redis_host, "127.0.0.1");
    assert_int_equal(def->sut.redis_port, 6380);
    assert_string_equal(def->sut.pg_conninfo, "host=127.0.0.1 port=5 dbname=x");
    tb_tiledef_free(def);
    unlink(p);
}

/* [sut] telemetry: kept, and alone it does not make the SUT external (the
 * embedded SUT still starts); with endpoints beside it, both are taken. */
static void sut_telemetry_key(void **state) {
    tb_tiledef *def;
    char err[TB_ERR_LEN] = "";
    const char *p =
        write_tmp("[workload.kv]\nkind = kv\nreference = 1\n[sut]\ntelemetry = http://10.0.0.7:9100/metrics\n");
    (void)state;
    if (!(def = tb_tiledef_load(p, err))) fail_msg("%s", err);
    unlink(p);
    assert_int_equal(def->has_sut, 0);
    assert_string_equal(def->telemetry, "http://10.0.0.7:9100/metrics");
    tb_tiledef_free(def);
    p = write_tmp("[workload.kv]\nkind = kv\nreference = 1\n[sut]\nredis = 10.0.0.7:6379\ntelemetry = none\n");
    if (!(def = tb_tiledef_load(p, err))) fail_msg("%s", err);
    unlink(p);
    assert_int_equal(def->has_sut, 1);
    assert_string_equal(def->telemetry, "none");
    tb_tiledef_free(def);
}

/* [run]: metrics and metrics_linger, or none of them. */
static void run_section(void **state) {
    tb_tiledef *def;
    char err[TB_ERR_LEN] = "";
    const char *p = write_tmp("[workload.kv]\nkind = kv\nreference = 1\n[run]\nmetrics = [::1]:9464\n"
                              "metrics_linger = 30s\n");
    (void)state;
    if (!(def = tb_tiledef_load(p, err))) fail_msg("%s", err);
    unlink(p);
    assert_string_equal(def->run.metrics, "[::1]:9464");
    assert_int_equal(def->run.metrics_linger_set, 1);
    assert_int_equal(def->run.metrics_linger_us, 30000000);
    assert_null(def->run.temperature);
    tb_tiledef_free(def);
    p = write_tmp("[workload.kv]\nkind = kv\nreference = 1\n[run]\ntemperature = ptd+temp://127.0.0.1:8889\n");
    if (!(def = tb_tiledef_load(p, err))) fail_msg("%s", err);
    unlink(p);
    assert_string_equal(def->run.temperature, "ptd+temp://127.0.0.1:8889");
    tb_tiledef_free(def);
    p = write_tmp("[workload.kv]\nkind = kv\nreference = 1\n[run]\nmetrics_linger = 0\n");
    if (!(def = tb_tiledef_load(p, err))) fail_msg("%s", err);
    unlink(p);
    assert_null(def->run.metrics);
    assert_int_equal(def->run.metrics_linger_set, 1);
    assert_int_equal(def->run.metrics_linger_us, 0);
    tb_tiledef_free(def);
    p = write_tmp("[workload.kv]\nkind = kv\nreference = 1\n");
    if (!(def = tb_tiledef_load(p, err))) fail_msg("%s", err);
    unlink(p);
    assert_null(def->run.metrics);
    assert_int_equal(def->run.metrics_linger_set, 0);
    tb_tiledef_free(def);
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
        {"[workload.kv]\nkind = kv\nreference = 1\n[qos.kv]\nGET.p90 = 1s\n[workload.web\nkind = http\n",
         ":6:", "syntax error: unclosed section header (no ']'): '[workload.web'"},
        {"hello world\n\n[bogus]\nx = 1\n", ":1:", "syntax error: expected key = value (or [section]): 'hello world'"},
        /* bytes from a binary file are escaped, never echoed raw to a terminal */
        {"\x7f"
         "ELF\x02\x01\n",
         ":1:",
         "'\\x7f"
         "ELF\\x02\\x01'"},
        {"[workload.kv]\nkind = k\x1b[2Jv\n", ":2:", "'k\\x1b[2Jv'"},
        {"[workload.kv]\nkind = caf\xc3\xa9\xff\n", ":2:", "'caf\xc3\xa9\\xff'"},
        /* a long malformed line is quoted cut short */
        {"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789\n",
         ":1:", "'01234567890123456789012345678901234567890123456789012345678901234567...'"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[sut]\nredis = nohostport\n", ":5:", "HOST:PORT"},
        /* a URL or a user and password where HOST:PORT belongs: refused, never quoted back */
        {"[workload.kv]\nkind = kv\nreference = 1\n[sut]\nredis = redis://:RedS3c@127.0.0.1:6379\n",
         ":5:", "without a scheme, a user or a password"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[sut]\nredis = u:RedS3c@127.0.0.1:6379\n",
         ":5:", "without a scheme, a user or a password"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[sut]\nweb.tile1 = http://u:WebS3c@127.0.0.1:1/\n",
         ":5:", "a user or password has no place in the web URL"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[stages]\nphases = 0\n", ":5:", "phases"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[sut]\ntelemetry = node1:9100\n", ":5:", "telemetry: use local"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[run]\nmetrics = localhost\n",
         ":5:", "[run] metrics: must be ADDR:PORT"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[run]\nmetrics = 127.0.0.1:70000\n", ":5:", "metrics: must be"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[run]\nmetrics_linger = 2h\n", ":5:", "metrics_linger: must be"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[run]\nmetrics_linger = soon\n", ":5:", "metrics_linger"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[run]\nranging = 500ms\n",
         ":5:", "[run] ranging: must be a duration"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[run]\nranging = soon\n", ":5:", "[run] ranging: must be"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[run]\ntemperature =\n",
         ":5:", "[run] temperature: must not be empty"},
        {"[workload.kv]\nkind = kv\nreference = 1\n[run]\nmetric = 127.0.0.1:1\n",
         ":5:", "unknown key (known: metrics, metrics_linger, ranging, temperature)"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[TB_ERR_LEN] = "";
        const char *p = write_tmp(cases[i].text);
        tb_tiledef *def = tb_tiledef_load(p, err);
        unlink(p);
        if (def) fail_msg("case %zu parsed but should fail", i);
        if (!strstr(err, cases[i].want1) || !strstr(err, cases[i].want2))
            fail_msg("case %zu: message '%s' lacks '%s' / '%s'", i, err, cases[i].want1, cases[i].want2);
        for (const char *c = err; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) fail_msg("case %zu: raw control byte in '%s'", i, err);
        if (strstr(err, "S3c")) fail_msg("case %zu: the secret is quoted in '%s'", i, err);
        if (!strstr(err, p) && strncmp(cases[i].want1, "qos", 3) != 0)
            fail_msg("case %zu: message '%s' does not name the file", i, err);
    }
}

/* Every shipped example tile parses. */
static void examples_parse(void **state) {
    static const char *const files[] = {"tiles/examples/redis-seed.ini"};
    (void)state;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        tb_tiledef *def;
        char err[TB_ERR_LEN] = "", path[512];
        snprintf(path, sizeof path, "%s/%s", getenv("TB_SOURCE_DIR") ? getenv("TB_SOURCE_DIR") : TB_SOURCE_DIR,
                 files[i]);
        if (!(def = tb_tiledef_load(path, err))) fail_msg("%s", err);
        assert_int_equal(def->workloads[0].users, 1000);
        assert_string_equal(tb_tiledef_param(&def->workloads[0], "value_size")->value, "1");
        tb_tiledef_free(def);
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
        "mail_password: Secret4\nmail_user = tile%t-user%u\npg.tile3 = host=h password=Sec ret5 Secret6 dbname=y\n"
        "[sutx]\nmail_password = kept\n";
    char buf[sizeof text - 1];
    tb_tiledef *def;
    char err[TB_ERR_LEN] = "";
    (void)state;
    memcpy(buf, text, sizeof buf);
    if ((def = tb_tiledef_parse("mem.ini", buf, sizeof buf, err))) fail_msg("[sutx] accepted");
    assert_non_null(strstr(err, "mem.ini:"));
    /* the same without the unknown section */
    if (!(def = tb_tiledef_parse("mem.ini", buf, (size_t)(strstr(text, "[sutx]") - text), err))) fail_msg("%s", err);
    assert_string_equal(def->sut.mail_password, "Secret4");
    assert_non_null(strstr(def->sut.pg_conninfo, "Se cr\\'et1"));
    for (int i = 1; i <= 6; i++) {
        char secret[16];
        snprintf(secret, sizeof secret, "Secret%d", i);
        if (strstr(def->text, secret) || strstr(def->text, "cr\\'et1") || strstr(def->text, "ret5"))
            fail_msg("stored text holds a secret:\n%s", def->text);
    }
    assert_non_null(strstr(def->text, "pg = host=127.0.0.1 password=*** dbname=x\n"));
    assert_non_null(strstr(def->text, "pg.tile2 = postgresql://tb:***@127.0.0.1:5432/tb?password=***\n"));
    assert_non_null(strstr(def->text, "mail_password: ***\n"));
    /* a password with an unquoted blank (libpq refuses it, quoting its rest): hidden to the next option */
    assert_non_null(strstr(def->text, "pg.tile3 = host=h password=*** dbname=y\n"));
    assert_non_null(strstr(def->text, "; password = ***\n")); /* commented out, still a password */
    assert_non_null(strstr(def->text, "\nmail_user = tile%t-user%u\n"));
    tb_tiledef_free(def);
}

/* Parses text (len bytes) from memory: the definition, or NULL with err. */
static tb_tiledef *parse_mem(const char *text, size_t len, char *err) {
    return tb_tiledef_parse("mem.ini", text, len, err);
}

/* Text of a tile with a web workload: "[workload.web]\nkind = http\nreference = 1\n"
 * then a urls line (line 4) of `len` bytes, then "users = ten" (line 5, an
 * error that names its line) unless good. */
static char *web_tile(size_t len, int good, size_t *out) {
    static const char head[] = "[workload.web]\nkind = http\nreference = 1\n";
    static const char tail[] = "\nusers = ten\n";
    char *t = malloc(sizeof head + len + sizeof tail);
    size_t o = sizeof head - 1;
    assert_non_null(t);
    memcpy(t, head, o);
    memcpy(t + o, "urls = /", 8);
    memset(t + o + 8, 'a', len - 8);
    o += len;
    memcpy(t + o, good ? "\n" : tail, good ? 2 : sizeof tail);
    *out = o + (good ? 1 : sizeof tail - 1);
    return t;
}

/* Lines are read whole up to TB_INI_MAX_LINE bytes (Debian's inih reads 199
 * at a time by itself): a 226-byte urls line is a urls value, and the line
 * numbers after a long line are right; a value longer than a key takes, a
 * line longer than the limit (also 10 MB) is an error naming its true line
 * and key. */
static void long_lines(void **state) {
    static const size_t lens[] = {226, 4000, TB_INI_MAX_LINE};
    tb_tiledef *def;
    char err[TB_ERR_LEN];
    size_t n;
    char *t;
    (void)state;
    t = web_tile(226, 1, &n);
    if (!(def = parse_mem(t, n, err))) fail_msg("a 226-byte urls line: %s", err);
    assert_int_equal(strlen(tb_tiledef_param(&def->workloads[0], "urls")->value), 226 - 7);
    tb_tiledef_free(def);
    free(t);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        t = web_tile(lens[i], 0, &n);
        assert_null(parse_mem(t, n, err));
        if (lens[i] < 256 + 7 ? !strstr(err, "mem.ini:5: [workload.web] users: 'ten'")
                              : !strstr(err, "mem.ini:4: [workload.web] urls: value of ") ||
                                    !strstr(err, "longer than the 255 allowed"))
            fail_msg("a %zu-byte line: '%s'", lens[i], err);
        free(t);
    }
    /* a comment line of exactly the limit is fine, with \r\n too; one byte more is not */
    for (int crlf = 0; crlf < 2; crlf++) {
        for (size_t extra = 0; extra < 2; extra++) {
            size_t ll = TB_INI_MAX_LINE + extra;
            char *u = malloc(ll + 64);
            size_t o = (size_t)sprintf(u, "[workload.kv]\nkind = kv\n");
            u[o] = ';';
            memset(u + o + 1, 'c', ll - 1);
            o += ll;
            o += (size_t)sprintf(u + o, "%s%s", crlf ? "\r\n" : "\n", "reference = 1\n");
            int rc = (def = parse_mem(u, o, err)) ? 0 : -1;
            if (extra == 0 && rc != 0) fail_msg("a %zu-byte comment line: %s", ll, err);
            if (extra == 1 && (rc == 0 || !strstr(err, "mem.ini:3: [workload.kv] (a comment): line of 65537 bytes, "
                                                       "longer than the 65536 allowed")))
                fail_msg("a %zu-byte comment line: '%s'", ll, rc ? err : "accepted");
            if (rc == 0) tb_tiledef_free(def);
            free(u);
        }
    }
    t = web_tile(10 * 1024 * 1024, 0, &n);
    assert_null(parse_mem(t, n, err));
    if (!strstr(err, "mem.ini:4: [workload.web] urls: line of 10485760 bytes, longer than the 65536 allowed"))
        fail_msg("a 10 MB line: '%s'", err);
    free(t);
}

/* A NUL byte in a value or at the start of a line is an error naming the
 * line (inih would cut the line there, and the stored text with it). */
static void nul_bytes(void **state) {
    static const struct {
        const char *text;
        size_t len;
        const char *want;
    } cases[] = {
#define C(s, w) {s, sizeof s - 1, w}
        C("[workload.kv]\nkind = kv\nreference = 1\0 0\n", "mem.ini:3: [workload.kv] reference: a NUL byte at byte 14"),
        C("[workload.kv]\nkind = kv\n\0reference = 1\n",
          "mem.ini:3: [workload.kv] (no key = value): a NUL byte at byte 1"),
        C("[workload.kv]\nkind = kv\nreference = 1\n; a comment\0\n", "mem.ini:4: [workload.kv] (a comment): a NUL"),
        C("[tile]\nname = x\n[workload.kv]\nkind = kv\nreference = 1\n\0",
          "mem.ini:6: [workload.kv] (no key = value): a NUL"),
#undef C
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_tiledef *def;
        char err[TB_ERR_LEN] = "";
        if ((def = parse_mem(cases[i].text, cases[i].len, err))) {
            tb_tiledef_free(def);
            fail_msg("case %zu: a NUL byte was accepted", i);
        }
        if (!strstr(err, cases[i].want)) fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].want);
    }
}

/* Secrets in commented-out lines are redacted in the stored text as in
 * active ones, and no error message quotes one: a syntax error on a pg
 * line, a long pg line, a URI longer than 1 KiB. */
static void secrets_in_comments_and_errors(void **state) {
    static const char *const bad[] = {
        "[workload.kv]\nkind = kv\nreference = 1\n[sut]\npg host=127.0.0.1 password=Hidden1 dbname=x\n",
        "[workload.kv]\nkind = kv\nreference = 1\n[sut]\nmail_password Hidden1\n",
        "[workload.kv]\nkind = kv\nreference = 1\n[sut]\npg host=127.0.0.1 user=tilebench_with_a_long_name "
        "application_name=a_long_application_name_that_pushes_the_password_past_the_old_limit_of_inih "
        "dbname=a_long_database_name_too sslmode=disable password=Hidden1\n",
    };
    char text[4096], uri[1500];
    tb_tiledef *def;
    char err[TB_ERR_LEN];
    (void)state;
    memset(uri, 'p', sizeof uri);
    memcpy(uri, "postgresql://tb:Hidden9@h/", 26);
    uri[sizeof uri - 1] = '\0';
    snprintf(text, sizeof text,
             "[tile]\nname = t\n; pg = host=127.0.0.1 password=Hidden2 dbname=x\n"
             "#mail_password = Hidden3\n  ;  pg.tile2 = postgresql://tb:Hidden4@127.0.0.1/tb\n"
             "[workload.kv]\nkind = kv\nreference = 10\n; %s\n[sut]\n; redis = 127.0.0.1:6379\n"
             "; old: mail_password = Hidden5\nredis = 127.0.0.1:6379 ; mail_password = Hidden6\n"
             "; retired: db.passwd: Hidden7 and more\n",
             uri);
    if (!(def = parse_mem(text, strlen(text), err))) fail_msg("%s", err);
    for (int i = 2; i <= 9; i++) {
        char secret[16];
        snprintf(secret, sizeof secret, "Hidden%d", i);
        if (strstr(def->text, secret)) fail_msg("stored text holds %s:\n%s", secret, def->text);
    }
    assert_non_null(strstr(def->text, "\n; pg = host=127.0.0.1 password=*** dbname=x\n"));
    assert_non_null(strstr(def->text, "\n#mail_password = ***\n"));
    assert_non_null(strstr(def->text, "\n  ;  pg.tile2 = postgresql://tb:***@127.0.0.1/tb\n"));
    assert_non_null(strstr(def->text, "\n; postgresql://tb:***@h/ppp"));
    assert_non_null(strstr(def->text, "\n; redis = 127.0.0.1:6379\n"));
    /* a password key after other words, or in an inline comment */
    assert_non_null(strstr(def->text, "\n; old: mail_password = ***\n"));
    assert_non_null(strstr(def->text, "\nredis = 127.0.0.1:6379 ; mail_password = ***\n"));
    assert_non_null(strstr(def->text, "\n; retired: db.passwd: ***\n"));
    tb_tiledef_free(def);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if ((def = parse_mem(bad[i], strlen(bad[i]), err))) fail_msg("case %zu accepted", i);
        if (strstr(err, "Hidden") || !strstr(err, "mem.ini:5:")) fail_msg("case %zu: '%s'", i, err);
    }
    /* a message that quotes a value (a workload's own check) is redacted too */
    snprintf(err, sizeof err,
             "t.ini:4: [workload.web] urls: 'http://u:Hidden1@h/?password=Hidden1' or 'password=Hidden1'");
    tb_tiledef_escape_err(err);
    assert_string_equal(err, "t.ini:4: [workload.web] urls: 'http://u:***@h/?password=***' or 'password=***'");
}

/* The redaction rules on their own: libpq's sslpassword= and a value with a
 * backslash-escaped blank (libpq takes "a\\ b" as one value), environment
 * assignments of commands (PGPASSWORD=, REDISCLI_AUTH=, *_PASSWORD=, *_TOKEN=),
 * in stored text and in messages; words that only look alike are kept. */
static void redaction_rules(void **state) {
    static const char text[] = "pg = host=h password=SecEsc\\ 12tail sslpassword=SslPw-1 dbname=x\n"
                               "apply = REDISCLI_AUTH=Redis-2 redis-cli ping\n"
                               "apply = PGPASSWORD=CampEnv-03 true\n"
                               "; revert = X_TOKEN='Tok 4' DB_PASSWORD=\"Db 5\" true\n"
                               "apply = passwordless=yes AUTH=kept TOKENS=kept\n";
    static const struct {
        const char *in, *want;
    } msgs[] = {
        {"echo host=x password=CampWord-05 ipmi://a:CampUri-06@h; true",
         "echo host=x password=*** ipmi://a:***@h; true"},
        {"PGPASSWORD=CampEnv-03 DB_PASSWORD=\"a b\" true", "PGPASSWORD=*** DB_PASSWORD=*** true"},
        {"REDISCLI_AUTH=r1;x MY_SECRET='s 1'|y", "REDISCLI_AUTH=***;x MY_SECRET=***|y"},
        {"conninfo 'host=h sslpassword=S1 password=a\\ b port=1'",
         "conninfo 'host=h sslpassword=*** password=*** port=1'"},
        {"passwordless=yes AUTH=kept TOKENS=kept", "passwordless=yes AUTH=kept TOKENS=kept"},
    };
    char *r;
    char buf[256];
    (void)state;
    r = tb_ini_redact(text, sizeof text - 1, NULL);
    for (const char *const *p = (const char *const[]){"SslPw", "12tail", "Redis-2", "CampEnv", "Tok 4", "Db 5", NULL};
         *p; p++)
        if (strstr(r, *p)) fail_msg("stored text holds '%s':\n%s", *p, r);
    assert_non_null(strstr(r, "pg = host=h password=*** sslpassword=*** dbname=x\n"));
    assert_non_null(strstr(r, "\napply = REDISCLI_AUTH=*** redis-cli ping\n"));
    assert_non_null(strstr(r, "\napply = passwordless=yes AUTH=kept TOKENS=kept\n"));
    free(r);
    for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
        snprintf(buf, sizeof buf, "%s", msgs[i].in);
        tb_ini_redact_msg(buf, sizeof buf);
        if (strcmp(buf, msgs[i].want) != 0) fail_msg("case %zu: '%s', want '%s'", i, buf, msgs[i].want);
    }
}

static void unreadable_file(void **state) {
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_null(tb_tiledef_load("/nonexistent/tile.ini", err));
    assert_non_null(strstr(err, "/nonexistent/tile.ini"));
    assert_non_null(strstr(err, "No such file"));
}

/* The arrays of a tile definition hold what the file gives, up to the
 * limits of tiledef.h, beyond which the file is refused (NULL);
 * tb_tiledef_free frees the definition and them all (ASan builds catch a
 * leak or a double free), and takes NULL. */
static void sized_to_the_file(void **state) {
    tb_tiledef *def;
    char err[TB_ERR_LEN] = "", *text = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;
    for (int extra = 0; extra <= 1; extra++) {
        /* TB_MAX_WORKLOADS workloads (+1), each with TB_MAX_PARAMS own keys, and TB_MAX_RULES rules */
        for (int part = 0; part < 3; part++) {
            f = open_memstream(&text, &len);
            for (int w = 0; w < TB_MAX_WORKLOADS + (part == 0 ? extra : 0); w++) {
                fprintf(f, "[workload.w%d]\nkind = kv\nreference = 1\n", w);
                for (int k = 0; k < TB_MAX_PARAMS + (part == 1 && w == 3 ? extra : 0); k++)
                    fprintf(f, "k%d = %d\n", k, w);
            }
            fprintf(f, "[qos.w7]\n");
            for (int r = 0; r < TB_MAX_RULES + (part == 2 ? extra : 0); r++)
                fprintf(f, "GET.p%d = 1s\n", r % 100 + 1);
            fclose(f);
            if (!(def = tb_tiledef_parse("many.ini", text, len, err))) {
                if (!extra) fail_msg("%s", err);
                assert_non_null(strstr(err, part == 0   ? "too many workloads"
                                            : part == 1 ? "too many keys"
                                                        : "too many rules"));
            } else {
                if (extra) fail_msg("part %d: one more than the limit parsed", part);
                assert_int_equal(def->n_workloads, TB_MAX_WORKLOADS);
                assert_int_equal(def->n_rules, TB_MAX_RULES);
                assert_string_equal(def->workloads[7].name, "w7");
                assert_int_equal(def->workloads[7].n_params, TB_MAX_PARAMS);
                assert_string_equal(tb_tiledef_param(&def->workloads[7], "k31")->value, "7");
                assert_ptr_equal(def->workloads[7].file, def->path);
                assert_string_equal(def->path, "many.ini");
                assert_string_equal(def->telemetry, "");
                assert_string_equal(def->rules[TB_MAX_RULES - 1].source,
                                    "many.ini:345"); /* 8 x 35 lines, [qos.w7], 64 rules */
            }
            tb_tiledef_free(def); /* NULL when refused: a no-op */
            free(text);
            text = NULL;
        }
    }
}

/* [sut] per-tile servers: the arrays hold what the file gives, up to
 * TB_SUT_MAX_PG_TILES / TB_SUT_MAX_WEB_TILES (one more is refused); a value
 * at its limit is "too long"; tb_endpoints_copy is deep: the copy outlives
 * the definition (ASan builds catch a shared string freed twice). */
static void sut_endpoints_sized_to_the_file(void **state) {
    tb_tiledef *def;
    tb_sut_endpoints copy;
    char err[TB_ERR_LEN] = "", *text = NULL, longv[TB_SUT_MAX_URL + 1];
    size_t len = 0;
    FILE *f;
    (void)state;
    for (int extra = 0; extra <= 1; extra++) {
        f = open_memstream(&text, &len);
        fprintf(f, "[workload.kv]\nkind = kv\nreference = 1\n[sut]\nredis = 127.0.0.1:6379\n");
        for (int t = 1; t <= TB_SUT_MAX_PG_TILES + extra; t++)
            fprintf(f, "pg.tile%d = host=10.0.0.%d\n", t, t);
        for (int t = 1; t <= TB_SUT_MAX_WEB_TILES; t++)
            fprintf(f, "web.tile%d = http://10.0.1.1:%d\n", t, 8000 + t);
        fclose(f);
        if (!(def = tb_tiledef_parse("sut.ini", text, len, err))) {
            if (!extra) fail_msg("%s", err);
            assert_non_null(strstr(err, "pg.tile65: too many per-tile servers"));
        } else {
            if (extra) fail_msg("one pg.tileN more than the limit parsed");
            assert_int_equal(def->sut.n_pg_tile, TB_SUT_MAX_PG_TILES);
            assert_int_equal(def->sut.n_web_tile, TB_SUT_MAX_WEB_TILES);
            assert_null(def->sut.pg_conninfo); /* not given */
            tb_endpoints_copy(&copy, &def->sut);
            tb_tiledef_free(def);
            def = NULL;
            assert_int_equal(copy.pg_tile[63].tile, 64);
            assert_string_equal(copy.pg_tile[63].conninfo, "host=10.0.0.64");
            assert_string_equal(tb_sut_web_url(&copy, 256), "http://10.0.1.1:8256");
            assert_null(tb_sut_web_url(&copy, 257));
            assert_string_equal(copy.redis_host, "127.0.0.1");
            tb_endpoints_free(&copy);
            tb_endpoints_free(&copy);
        }
        tb_tiledef_free(def);
        free(text);
        text = NULL;
    }
    /* a URL of TB_SUT_MAX_URL - 1 bytes fits; one byte more is too long */
    for (int extra = 0; extra <= 1; extra++) {
        char tile[512];
        size_t n = TB_SUT_MAX_URL - 1 + (size_t)extra;
        memcpy(longv, "http://h/", 9);
        memset(longv + 9, 'a', n - 9);
        longv[n] = '\0';
        snprintf(tile, sizeof tile, "[workload.kv]\nkind = kv\nreference = 1\n[sut]\nweb = %s\n", longv);
        if (!(def = tb_tiledef_parse("sut.ini", tile, strlen(tile), err))) {
            if (!extra) fail_msg("%s", err);
            assert_non_null(strstr(err, "[sut] web: too long"));
        } else {
            if (extra) fail_msg("a %zu-byte web URL parsed", n);
            assert_string_equal(def->sut.web_url, longv);
        }
        tb_tiledef_free(def);
    }
}

/* The default tile: $TB_TILE_FILE, else the source tree's for a binary run
 * from its build folder inside that tree (as this test is, unless the build
 * folder was put elsewhere), else the installed one. */
static void default_tile_path(void **state) {
    char exe[4096] = "", src[4096] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    const char *old = getenv("TB_TILE_FILE");
    char *saved = old ? strdup(old) : NULL;
    int inside;
    (void)state;
    assert_true(n > 0 && realpath(TB_SOURCE_DIR, src) != NULL);
    inside = strncmp(exe, src, strlen(src)) == 0 && exe[strlen(src)] == '/';
    unsetenv("TB_TILE_FILE");
    assert_string_equal(tb_tiledef_default_path(),
                        inside ? TB_SOURCE_DIR "/tiles/standard.ini" : TB_DATA_DIR "/standard.ini");
    setenv("TB_TILE_FILE", "/elsewhere/tile.ini", 1);
    assert_string_equal(tb_tiledef_default_path(), "/elsewhere/tile.ini");
    if (saved)
        setenv("TB_TILE_FILE", saved, 1);
    else
        unsetenv("TB_TILE_FILE");
    free(saved);
}

/* The tile model's catalog of kinds: each kind finds its own op names in
 * order, an index past the end or an unknown op is refused, and the names
 * list as the CLI prints them. (That loadgen's workloads are these kinds is
 * tests/unit/test_workloads.c.) */
static void kind_catalog(void **state) {
    char names[64];
    (void)state;
    for (int i = 0; i < tb_kind_count(); i++) {
        const tb_kind *k = tb_kind_at(i);
        assert_ptr_equal(tb_kind_find(k->name), k);
        for (int op = 0; op < k->n_ops; op++)
            assert_int_equal(tb_kind_op(k, k->op_names[op]), op);
    }
    assert_null(tb_kind_at(tb_kind_count()));
    assert_int_equal(tb_kind_op(tb_kind_find("kv"), "DEL"), -1);
    tb_kind_names(names, sizeof names);
    assert_string_equal(names, "oltp, kv, mail, web, http");
    tb_kind_op_list(tb_kind_find("kv"), names, sizeof names);
    assert_string_equal(names, "SET, GET");
}

/* tb_ini_read_file: a file whole, a folder, a missing file, and one byte past
 * the 16 MiB cap, each with the error naming the file. */
static void read_file_whole_or_refused(void **state) {
    char dir[] = "/tmp/tb-readfile.XXXXXX", path[64], err[TB_ERR_LEN];
    size_t len = 0;
    char *text;
    FILE *f;
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/a.ini", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("[tile]\nname = x\n", f);
    fclose(f);
    text = tb_ini_read_file(path, "config", &len, err);
    assert_non_null(text);
    assert_int_equal(len, 16);
    assert_string_equal(text, "[tile]\nname = x\n");
    free(text);
    assert_null(tb_ini_read_file(dir, "campaign", &len, err));
    assert_non_null(strstr(err, "is a directory, not a campaign file"));
    assert_null(tb_ini_read_file("/nonexistent/x.ini", "config", &len, err));
    assert_non_null(strstr(err, "config /nonexistent/x.ini: No such file"));
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)TB_INI_MAX_FILE, SEEK_SET), 0); /* a sparse file of cap + 1 bytes */
    fputc('x', f);
    fclose(f);
    assert_null(tb_ini_read_file(path, "config", &len, err));
    assert_non_null(strstr(err, "larger than 16 MiB"));
    unlink(path);
    rmdir(dir);
}

/* A workload name is at most 31 bytes: 31 is kept whole, 32 is refused on its
 * first key (it was cut to 31 and merged with its 31-byte namesake). */
static void workload_name_limit(void **state) {
    char text[256], err[TB_ERR_LEN], name[40];
    tb_tiledef *def;
    (void)state;
    memset(name, 'n', 31);
    name[31] = '\0';
    snprintf(text, sizeof text, "[workload.%s]\nkind = http\nreference = 10\nurls = http://127.0.0.1:1/\n", name);
    def = parse_mem(text, strlen(text), err);
    if (!def) fail_msg("31 bytes: %s", err);
    assert_string_equal(def->workloads[0].name, name);
    tb_tiledef_free(def);
    snprintf(text, sizeof text, "[workload.%sx]\nkind = http\nreference = 10\nurls = http://127.0.0.1:1/\n", name);
    assert_null(parse_mem(text, strlen(text), err));
    assert_non_null(strstr(err, "mem.ini:2:"));
    assert_non_null(strstr(err, "workload name must be 1..31 characters"));
}

/* mail_password_file names a regular file: a folder or a FIFO is refused at
 * once (a FIFO used to block the parse for ever), a long path keeps the reason. */
static void password_file_regular_only(void **state) {
    char dir[] = "/tmp/tb-pwfile.XXXXXX", fifo[64], text[512], err[TB_ERR_LEN], longp[300];
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(text, sizeof text, "[sut]\nmail_password_file = %s\n", dir);
    assert_null(parse_mem(text, strlen(text), err));
    assert_non_null(strstr(err, "not a regular file"));
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(text, sizeof text, "[sut]\nmail_password_file = %s\n", fifo);
    assert_null(parse_mem(text, strlen(text), err));
    assert_non_null(strstr(err, "not a regular file"));
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    snprintf(text, sizeof text, "[sut]\nmail_password_file = %s\n", longp);
    assert_null(parse_mem(text, strlen(text), err));
    assert_non_null(strstr(err, "File name too long"));
    unlink(fifo);
    rmdir(dir);
}

/* pg.tile1 and pg.tile01 (or web.tile2 and web.tile002) name the same tile:
 * the second is refused, not silently ignored. */
static void per_tile_key_given_twice(void **state) {
    static const char pg[] = "[sut]\npg.tile1 = host=a\npg.tile01 = host=b\n";
    static const char web[] = "[sut]\nweb.tile2 = http://a:1\nweb.tile002 = http://b:1\n";
    char err[TB_ERR_LEN];
    (void)state;
    assert_null(parse_mem(pg, strlen(pg), err));
    assert_non_null(strstr(err, "mem.ini:3:"));
    assert_non_null(strstr(err, "given twice"));
    assert_null(parse_mem(web, strlen(web), err));
    assert_non_null(strstr(err, "mem.ini:3:"));
    assert_non_null(strstr(err, "given twice"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations),
        cmocka_unit_test(numbers),
        cmocka_unit_test(tile_specs),
        cmocka_unit_test(standard_tile_parses),
        cmocka_unit_test(sut_section_and_overrides),
        cmocka_unit_test(bad_files),
        cmocka_unit_test(sut_telemetry_key),
        cmocka_unit_test(run_section),
        cmocka_unit_test(stored_text_has_no_secrets),
        cmocka_unit_test(unreadable_file),
        cmocka_unit_test(examples_parse),
        cmocka_unit_test(long_lines),
        cmocka_unit_test(nul_bytes),
        cmocka_unit_test(secrets_in_comments_and_errors),
        cmocka_unit_test(redaction_rules),
        cmocka_unit_test(kind_catalog),
        cmocka_unit_test(sized_to_the_file),
        cmocka_unit_test(sut_endpoints_sized_to_the_file),
        cmocka_unit_test(default_tile_path),
        cmocka_unit_test(read_file_whole_or_refused),
        cmocka_unit_test(workload_name_limit),
        cmocka_unit_test(password_file_regular_only),
        cmocka_unit_test(per_tile_key_given_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
