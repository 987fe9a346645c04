/*
 * test_metrics.c: the metrics registry and its Prometheus text rendering
 * (metrics/metrics.h) against hand-written expected text: HELP and TYPE once
 * per family, label values with a backslash, a double quote, a line feed and
 * a byte that is not UTF-8, values NaN/+Inf/-Inf and ones %.15g cannot hold;
 * counters that never go down; names the format refuses; the listen address
 * parser; the HTTP server on loopback (200 with the text, 404, 405, a busy
 * port refused) with another thread updating while it renders, and a scrape
 * answered at once while 40 silent clients hold connections; the recent
 * latency window over intervals.
 */
#include <poll.h>
#include <time.h>
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/listen.h"
#include "metrics/metrics.h"
#include "metrics/recent.h"
#include "qos/hist.h"

static void test_render(void **state) {
    tb_metrics *m = tb_metrics_new();
    char err[TB_ERR_LEN] = "", *text;
    size_t len;
    (void)state;
    assert_int_equal(tb_metrics_declare(m, "tb_power_watts", TB_METRIC_GAUGE, "Power, W.", err), 0);
    assert_int_equal(tb_metrics_declare(m, "tb_empty", TB_METRIC_GAUGE, "never set", err), 0);
    assert_int_equal(tb_metrics_declare(m, "tb_ops_total", TB_METRIC_COUNTER, "a \\ help\nof two lines", err), 0);
    assert_int_equal(tb_metrics_set(m, "tb_power_watts", (const char *[]){"meter", "0", NULL}, 123.4), 0);
    assert_int_equal(tb_metrics_set(m, "tb_power_watts", (const char *[]){"meter", "1", NULL}, NAN), 0);
    assert_int_equal(tb_metrics_set(m, "tb_power_watts", (const char *[]){"meter", "0", NULL}, 120.5), 0);
    assert_int_equal(tb_metrics_add(m, "tb_ops_total", (const char *[]){"workload", "kv", "op", "GET", NULL}, 7), 0);
    assert_int_equal(tb_metrics_add(m, "tb_ops_total", NULL, 1e21), 0);
    assert_int_equal(tb_metrics_add(m, "tb_ops_total", (const char *[]){"workload", "kv", "op", "GET", NULL}, 3), 0);
    text = tb_metrics_render(m, &len);
    assert_string_equal(text, "# HELP tb_power_watts Power, W.\n"
                              "# TYPE tb_power_watts gauge\n"
                              "tb_power_watts{meter=\"0\"} 120.5\n"
                              "tb_power_watts{meter=\"1\"} NaN\n"
                              "# HELP tb_ops_total a \\\\ help\\nof two lines\n"
                              "# TYPE tb_ops_total counter\n"
                              "tb_ops_total{workload=\"kv\",op=\"GET\"} 10\n"
                              "tb_ops_total 1e+21\n");
    assert_int_equal(len, strlen(text));
    free(text);
    /* clear drops a family's series; the family stays declared */
    tb_metrics_clear(m, "tb_power_watts");
    assert_int_equal(tb_metrics_set(m, "tb_power_watts", NULL, -1.5), 0);
    text = tb_metrics_render(m, NULL);
    assert_non_null(strstr(text, "# TYPE tb_power_watts gauge\ntb_power_watts -1.5\n# HELP tb_ops_total"));
    free(text);
    tb_metrics_free(m);
}

static void test_escaping(void **state) {
    tb_metrics *m = tb_metrics_new();
    char err[TB_ERR_LEN] = "", *text;
    tb_buf b;
    (void)state;
    assert_int_equal(tb_metrics_declare(m, "tb_meter_info", TB_METRIC_GAUGE, "Identity.", err), 0);
    /* a quote, a backslash, a line feed; "\xff" is no UTF-8; "\xc2\xb0" (a degree sign) is */
    assert_int_equal(tb_metrics_set(m, "tb_meter_info",
                                    (const char *[]){"model", "WT\"310\"", "serial", "C2\\PH\n13", "firmware",
                                                     "F\xff"
                                                     "1 \xc2\xb0",
                                                     NULL},
                                    1),
                     0);
    text = tb_metrics_render(m, NULL);
    assert_string_equal(
        text, "# HELP tb_meter_info Identity.\n"
              "# TYPE tb_meter_info gauge\n"
              "tb_meter_info{model=\"WT\\\"310\\\"\",serial=\"C2\\\\PH\\n13\",firmware=\"F?1 \xc2\xb0\"} 1\n");
    free(text);
    /* an escaped value is one series: the same labels update it */
    assert_int_equal(tb_metrics_set(m, "tb_meter_info",
                                    (const char *[]){"model", "WT\"310\"", "serial", "C2\\PH\n13", "firmware",
                                                     "F\xff"
                                                     "1 \xc2\xb0",
                                                     NULL},
                                    2),
                     0);
    text = tb_metrics_render(m, NULL);
    assert_non_null(strstr(text, "} 2\n"));
    assert_null(strstr(text, "} 1\n"));
    free(text);
    /* a truncated sequence and an overlong form are not UTF-8 either */
    tb_buf_init(&b, 0);
    tb_metrics_escape_label("a\xe2\x82"
                            "b\xc0\xaf"
                            "c",
                            &b);
    assert_string_equal(tb_buf_str(&b), "a??b??c");
    tb_buf_free(&b);
    tb_metrics_free(m);
}

static void test_counter_monotone(void **state) {
    tb_metrics *m = tb_metrics_new();
    char err[TB_ERR_LEN] = "";
    const char *const l[] = {"op", "GET", NULL};
    double v = 0;
    (void)state;
    assert_int_equal(tb_metrics_declare(m, "tb_c_total", TB_METRIC_COUNTER, "c", err), 0);
    assert_int_equal(tb_metrics_declare(m, "tb_g", TB_METRIC_GAUGE, "g", err), 0);
    assert_int_equal(tb_metrics_add(m, "tb_c_total", l, 1), 0);
    assert_int_equal(tb_metrics_add(m, "tb_c_total", l, 2), 0);
    assert_int_equal(tb_metrics_add(m, "tb_c_total", l, -1), -1);
    assert_int_equal(tb_metrics_add(m, "tb_c_total", l, NAN), -1);
    assert_int_equal(tb_metrics_set(m, "tb_c_total", l, 2), -1);
    assert_int_equal(tb_metrics_set(m, "tb_c_total", l, INFINITY), -1);
    assert_int_equal(tb_metrics_get(m, "tb_c_total", l, &v), 0);
    assert_true(v == 3);
    assert_int_equal(tb_metrics_set(m, "tb_c_total", l, 3), 0); /* equal is not down */
    assert_int_equal(tb_metrics_set(m, "tb_c_total", l, 5), 0);
    assert_int_equal(tb_metrics_get(m, "tb_c_total", l, &v), 0);
    assert_true(v == 5);
    /* a refused first value makes no series */
    assert_int_equal(tb_metrics_set(m, "tb_c_total", (const char *[]){"op", "SET", NULL}, -4), -1);
    assert_int_equal(tb_metrics_get(m, "tb_c_total", (const char *[]){"op", "SET", NULL}, &v), -1);
    /* a gauge goes down */
    assert_int_equal(tb_metrics_set(m, "tb_g", NULL, 5), 0);
    assert_int_equal(tb_metrics_set(m, "tb_g", NULL, -2), 0);
    assert_int_equal(tb_metrics_add(m, "tb_g", NULL, -1), 0);
    assert_int_equal(tb_metrics_get(m, "tb_g", NULL, &v), 0);
    assert_true(v == -3);
    tb_metrics_free(m);
}

static void test_names(void **state) {
    tb_metrics *m = tb_metrics_new();
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_true(tb_metrics_name_ok("tilebench_power_watts"));
    assert_true(tb_metrics_name_ok(":job:rate5m"));
    assert_false(tb_metrics_name_ok("1abc"));
    assert_false(tb_metrics_name_ok("a-b"));
    assert_false(tb_metrics_name_ok(""));
    assert_true(tb_metrics_label_name_ok("volt_range"));
    assert_false(tb_metrics_label_name_ok("__name__"));
    assert_false(tb_metrics_label_name_ok("a:b"));
    assert_false(tb_metrics_label_name_ok("9a"));
    assert_int_equal(tb_metrics_declare(m, "a-b", TB_METRIC_GAUGE, "", err), -1);
    assert_non_null(strstr(err, "'a-b'"));
    assert_int_equal(tb_metrics_declare(m, "tb_x", TB_METRIC_GAUGE, "", err), 0);
    assert_int_equal(tb_metrics_declare(m, "tb_x", TB_METRIC_COUNTER, "", err), -1);
    assert_non_null(strstr(err, "twice"));
    assert_int_equal(tb_metrics_set(m, "tb_undeclared", NULL, 1), -1);
    assert_int_equal(tb_metrics_set(m, "tb_x", (const char *[]){"bad label", "v", NULL}, 1), -1);
    assert_int_equal(tb_metrics_set(m, "tb_x", (const char *[]){"__reserved", "v", NULL}, 1), -1);
    tb_metrics_free(m);
}

static void test_values(void **state) {
    char b[40];
    (void)state;
    tb_metrics_format_value(NAN, b, sizeof b);
    assert_string_equal(b, "NaN");
    tb_metrics_format_value(INFINITY, b, sizeof b);
    assert_string_equal(b, "+Inf");
    tb_metrics_format_value(-INFINITY, b, sizeof b);
    assert_string_equal(b, "-Inf");
    tb_metrics_format_value(0, b, sizeof b);
    assert_string_equal(b, "0");
    tb_metrics_format_value(187.5, b, sizeof b);
    assert_string_equal(b, "187.5");
    tb_metrics_format_value(0.1 + 0.2, b, sizeof b); /* needs 17 digits to read back */
    assert_string_equal(b, "0.30000000000000004");
    tb_metrics_format_value(1764690123.123456, b, sizeof b); /* a sample time to the µs */
    assert_true(strtod(b, NULL) == 1764690123.123456);
    tb_metrics_format_value(9007199254740993.0, b, sizeof b); /* 2^53 + 1 rounds to 2^53 */
    assert_string_equal(b, "9007199254740992");
}

static void test_parse_listen(void **state) {
    char host[64], err[TB_ERR_LEN];
    int port = -1;
    (void)state;
    assert_int_equal(tb_listen_parse("127.0.0.1:9464", host, sizeof host, &port, err), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 9464);
    assert_int_equal(tb_listen_parse("[::1]:0", host, sizeof host, &port, err), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 0);
    assert_int_equal(tb_listen_parse("localhost", host, sizeof host, &port, err), -1);
    assert_non_null(strstr(err, "expected ADDR:PORT"));
    assert_int_equal(tb_listen_parse("127.0.0.1:65536", host, sizeof host, &port, err), -1);
    assert_int_equal(tb_listen_parse("127.0.0.1:", host, sizeof host, &port, err), -1);
    assert_int_equal(tb_listen_parse(":9464", host, sizeof host, &port, err), -1);
    assert_non_null(strstr(err, "missing address"));
    assert_int_equal(tb_listen_parse("::1:9464", host, sizeof host, &port, err), -1);
    assert_non_null(strstr(err, "brackets"));
    assert_int_equal(tb_listen_parse("127.0.0.1:94x", host, sizeof host, &port, err), -1);
}

/* One HTTP/1.0 request to 127.0.0.1:port; the whole reply into buf. */
static void http(int port, const char *request, char *buf, size_t len) {
    struct sockaddr_in a;
    size_t got = 0;
    ssize_t r;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
    while (got + 1 < len && (r = read(fd, buf + got, len - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    close(fd);
}

typedef struct adder {
    tb_metrics *m;
    int n;
} adder;

static void *add_many(void *arg) {
    adder *a = arg;
    for (int i = 0; i < a->n; i++)
        (void)tb_metrics_add(a->m, "tb_hits_total", (const char *[]){"k", i % 2 ? "odd" : "even", NULL}, 1);
    return NULL;
}

static void test_server(void **state) {
    tb_metrics *m = tb_metrics_new();
    tb_metrics_server *s = NULL, *s2 = NULL;
    char err[TB_ERR_LEN] = "", listen[64], where[64], reply[8192];
    adder ad = {m, 20000};
    pthread_t th;
    double even = 0, odd = 0;
    int port;
    (void)state;
    assert_int_equal(tb_metrics_declare(m, "tb_hits_total", TB_METRIC_COUNTER, "Hits.", err), 0);
    assert_int_equal(tb_metrics_serve(m, "127.0.0.1:0", &s, err), 0);
    port = tb_metrics_server_port(s);
    assert_true(port > 0);
    tb_metrics_server_address(s, where, sizeof where);
    snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
    assert_string_equal(where, listen);

    /* the same port again: busy, with the system's reason */
    assert_int_equal(tb_metrics_serve(m, listen, &s2, err), -1);
    assert_null(s2);
    assert_non_null(strstr(err, "Address already in use"));
    assert_non_null(strstr(err, listen));
    /* an address of no interface here (TEST-NET-1, RFC 5737) */
    assert_int_equal(tb_metrics_serve(m, "192.0.2.1:0", &s2, err), -1);
    assert_non_null(strstr(err, "listen 192.0.2.1:0: Cannot assign requested address"));

    assert_int_equal(pthread_create(&th, NULL, add_many, &ad), 0);
    for (int i = 0; i < 20; i++) { /* scrapes while the other thread counts */
        http(port, "GET /metrics HTTP/1.0\r\n\r\n", reply, sizeof reply);
        assert_non_null(strstr(reply, " 200 OK\r\n"));
    }
    pthread_join(th, NULL);
    assert_int_equal(tb_metrics_get(m, "tb_hits_total", (const char *[]){"k", "even", NULL}, &even), 0);
    assert_int_equal(tb_metrics_get(m, "tb_hits_total", (const char *[]){"k", "odd", NULL}, &odd), 0);
    assert_true(even == 10000 && odd == 10000);

    http(port, "GET /metrics HTTP/1.0\r\n\r\n", reply, sizeof reply);
    assert_non_null(strstr(reply, " 200 OK\r\n"));
    assert_non_null(strstr(reply, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
    assert_non_null(strstr(reply, "\r\n\r\n# HELP tb_hits_total Hits.\n# TYPE tb_hits_total counter\n"
                                  "tb_hits_total{k=\"even\"} 10000\ntb_hits_total{k=\"odd\"} 10000\n"));
    http(port, "GET /other HTTP/1.0\r\n\r\n", reply, sizeof reply);
    assert_non_null(strstr(reply, " 404 "));
    http(port, "GET /metrics/ HTTP/1.0\r\n\r\n", reply, sizeof reply);
    assert_non_null(strstr(reply, " 404 "));
    http(port, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n", reply, sizeof reply);
    assert_non_null(strstr(reply, " 405 "));
    assert_non_null(strstr(reply, "Allow: GET, HEAD\r\n"));
    http(port, "DELETE /metrics HTTP/1.0\r\n\r\n", reply, sizeof reply);
    assert_non_null(strstr(reply, " 405 "));
    http(port, "HEAD /metrics HTTP/1.0\r\n\r\n", reply, sizeof reply);
    assert_non_null(strstr(reply, " 200 OK\r\n"));
    assert_null(strstr(reply, "# HELP"));

    tb_metrics_server_stop(s);
    /* the port is free again once stopped */
    assert_int_equal(tb_metrics_serve(m, listen, &s2, err), 0);
    tb_metrics_server_stop(s2);
    tb_metrics_free(m);
}

static uint64_t mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Clients that connect and send nothing (a scanner, a stuck proxy) do not
 * delay a scrape: 40 of them (more than the 16 the server once held at
 * most), then a real scrape answers within 1 s. */
static void test_silent_clients(void **state) {
    enum { N_SILENT = 40 };
    tb_metrics *m = tb_metrics_new();
    tb_metrics_server *s = NULL;
    char err[TB_ERR_LEN] = "", reply[4096];
    int fds[N_SILENT], port;
    uint64_t t0, took;
    (void)state;
    assert_int_equal(tb_metrics_declare(m, "tb_up", TB_METRIC_GAUGE, "Up.", err), 0);
    assert_int_equal(tb_metrics_set(m, "tb_up", NULL, 1), 0);
    assert_int_equal(tb_metrics_serve(m, "127.0.0.1:0", &s, err), 0);
    port = tb_metrics_server_port(s);
    for (int i = 0; i < N_SILENT; i++) {
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(fds[i] >= 0);
        assert_int_equal(connect(fds[i], (struct sockaddr *)&a, sizeof a), 0);
    }
    nanosleep(&(struct timespec){0, 200000000}, NULL); /* the server has accepted them */
    t0 = mono_us();
    http(port, "GET /metrics HTTP/1.0\r\n\r\n", reply, sizeof reply);
    took = mono_us() - t0;
    assert_non_null(strstr(reply, " 200 OK\r\n"));
    assert_non_null(strstr(reply, "\ntb_up 1\n"));
    if (took > 1000000) fail_msg("a scrape behind %d silent clients took %.2f s", N_SILENT, (double)took / 1e6);
    for (int i = 0; i < N_SILENT; i++)
        close(fds[i]);
    tb_metrics_server_stop(s);
    tb_metrics_free(m);
}

/* The recent window over intervals of 10 values a second, all (t + 1) ms
 * in second t: after 10 s it holds the last 10 s (100 values, from second
 * t - 9 on), before that the phase so far; a reset starts again. */
static void test_recent_window(void **state) {
    tb_recent *r = tb_recent_new(10000000);
    uint64_t t0 = 5000000, win = 0;
    (void)state;
    for (uint64_t t = 0; t <= 20; t++) {
        tb_hist *iv = tb_hist_new(), *w;
        for (int i = 0; i < 10; i++)
            tb_hist_record(iv, (t + 1) * 1000);
        w = tb_recent_update(r, "kv", "GET", iv, t0 + t * 1000000, &win);
        if (t < 10) {
            assert_int_equal(tb_hist_count(w), (t + 1) * 10);
            assert_int_equal(win, t * 1000000);
            assert_int_equal(tb_hist_min(w), 1000);
        } else {
            assert_int_equal(tb_hist_count(w), 100);
            assert_int_equal(win, 10000000);
            assert_int_equal(tb_hist_min(w), (t - 8) * 1000);
        }
        assert_int_equal(tb_hist_max(w), (t + 1) * 1000);
        tb_hist_free(w);
    }
    assert_int_equal(tb_recent_n(r), 1);
    assert_string_equal(tb_recent_workload(r, 0), "kv");
    assert_string_equal(tb_recent_op(r, 0), "GET");
    tb_recent_reset(r); /* a new phase: nothing of the one before */
    {
        tb_hist *iv = tb_hist_new(), *w;
        tb_hist_record(iv, 777);
        w = tb_recent_update(r, "kv", "GET", iv, t0 + 30000000, &win);
        assert_int_equal(tb_hist_count(w), 1);
        assert_int_equal(win, 0);
        tb_hist_free(w);
        /* an op first seen later in the phase: its window starts at the phase's start */
        iv = tb_hist_new();
        w = tb_recent_update(r, "kv", "SET", iv, t0 + 33000000, &win);
        assert_int_equal(tb_hist_count(w), 0);
        assert_int_equal(win, 3000000);
        tb_hist_free(w);
    }
    tb_recent_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render), cmocka_unit_test(test_escaping),       cmocka_unit_test(test_counter_monotone),
        cmocka_unit_test(test_names),  cmocka_unit_test(test_values),         cmocka_unit_test(test_parse_listen),
        cmocka_unit_test(test_server), cmocka_unit_test(test_silent_clients), cmocka_unit_test(test_recent_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
