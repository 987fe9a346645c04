/*
 * test_serve.c: unit tests of serve's pure parts: the --listen syntax, the
 * route table with its strict run ids (what keeps paths from going anywhere
 * else), and /compare's run list. The HTTP side is tested end to end by
 * tests/integration/test_serve.sh and test_serve_browser.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/listen.h"
#include "results/serve.h"

static void test_listen_ok(void **state) {
    char host[TB_SERVE_HOST_LEN], err[TB_ERR_LEN];
    int port = -1;
    (void)state;
    assert_int_equal(tb_listen_parse("127.0.0.1:8080", host, sizeof host, &port, err), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 8080);
    assert_int_equal(tb_listen_parse("[::1]:0", host, sizeof host, &port, err), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 0);
    assert_int_equal(tb_listen_parse("localhost:65535", host, sizeof host, &port, err), 0);
    assert_string_equal(host, "localhost");
    assert_int_equal(port, 65535);
}

static void test_listen_bad(void **state) {
    static const char *const bad[] = {
        "8080",          "127.0.0.1",     "127.0.0.1:", ":8080", "127.0.0.1:65536",
        "127.0.0.1:-1",  "127.0.0.1:80x", "::1:80",     "[]:80", "a b:80",
        "127.0.0.1:+80", "[::1:80",       "",
    };
    char host[TB_SERVE_HOST_LEN], err[TB_ERR_LEN], small[4];
    int port;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (tb_listen_parse(bad[i], host, sizeof host, &port, err) == 0) fail_msg("'%s' accepted", bad[i]);
        if (!strstr(err, bad[i])) fail_msg("error for '%s' does not name it: %s", bad[i], err);
    }
    assert_int_equal(tb_listen_parse("localhost:80", small, sizeof small, &port, err), -1);
}

static void test_routes(void **state) {
    int64_t id = 0;
    (void)state;
    assert_int_equal(tb_serve_match("/", &id), TB_ROUTE_INDEX);
    assert_int_equal(tb_serve_match("/compare", &id), TB_ROUTE_COMPARE);
    assert_int_equal(tb_serve_match("/api/runs", &id), TB_ROUTE_API_RUNS);
    assert_int_equal(tb_serve_match("/runs/1", &id), TB_ROUTE_RUN_HTML);
    assert_int_equal(id, 1);
    assert_int_equal(tb_serve_match("/runs/42.json", &id), TB_ROUTE_RUN_JSON);
    assert_int_equal(id, 42);
    assert_int_equal(tb_serve_match("/runs/7.csv", &id), TB_ROUTE_RUN_CSV);
    assert_int_equal(id, 7);
    assert_int_equal(tb_serve_match("/api/runs/9223372036854775807", &id), TB_ROUTE_API_RUN);
    assert_true(id == INT64_MAX);
}

static void test_routes_strict(void **state) {
    static const char *const none[] = {
        "",
        "/index.html",
        "/runs",
        "/runs/",
        "/runs/0",
        "/runs/01",
        "/runs/-1",
        "/runs/+1",
        "/runs/1/",
        "/runs/1 ",
        "/runs/ 1",
        "/runs/1x",
        "/runs/1.json.json",
        "/runs/.json",
        "/runs/1.JSON",
        "/runs/1.html",
        "/runs/1%00",
        "/runs/1/../../x",
        "/runs/..",
        "/../../etc/passwd",
        "/runs/9223372036854775808",
        "/runs/99999999999999999999",
        "/api/runs/",
        "/api/runs/1.json",
        "/api/runs/1/",
        "/api/runs/abc",
        "//",
        "/compare/",
        "/API/runs",
        "/favicon.ico",
    };
    size_t i;
    int64_t id;
    (void)state;
    for (i = 0; i < sizeof none / sizeof none[0]; i++)
        if (tb_serve_match(none[i], &id) != TB_ROUTE_NONE) fail_msg("'%s' matched a route", none[i]);
    assert_int_equal(tb_serve_match(NULL, &id), TB_ROUTE_NONE);
}

static void test_run_list(void **state) {
    int64_t ids[TB_SERVE_MAX_COMPARE];
    char err[TB_ERR_LEN], many[256] = "";
    int n = 0, i;
    (void)state;
    assert_int_equal(tb_serve_parse_run_list("3,1,2", ids, &n, err), 0);
    assert_int_equal(n, 3);
    assert_true(ids[0] == 3 && ids[1] == 1 && ids[2] == 2);
    /* a second runs= parameter adds; duplicates are dropped */
    assert_int_equal(tb_serve_parse_run_list("2,5", ids, &n, err), 0);
    assert_int_equal(n, 4);
    assert_true(ids[3] == 5);
    n = 0;
    assert_int_equal(tb_serve_parse_run_list("1,,2", ids, &n, err), -1);
    assert_non_null(strstr(err, "''"));
    n = 0;
    assert_int_equal(tb_serve_parse_run_list("1,x", ids, &n, err), -1);
    assert_non_null(strstr(err, "'x'"));
    n = 0;
    assert_int_equal(tb_serve_parse_run_list("", ids, &n, err), -1);
    n = 0;
    assert_int_equal(tb_serve_parse_run_list("1,", ids, &n, err), -1);
    n = 0;
    assert_int_equal(tb_serve_parse_run_list("1%00", ids, &n, err), -1);
    for (i = 1; i <= TB_SERVE_MAX_COMPARE + 1; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", i > 1 ? "," : "", i);
    n = 0;
    assert_int_equal(tb_serve_parse_run_list(many, ids, &n, err), -1);
    assert_non_null(strstr(err, "at most"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen_ok),     cmocka_unit_test(test_listen_bad), cmocka_unit_test(test_routes),
        cmocka_unit_test(test_routes_strict), cmocka_unit_test(test_run_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
