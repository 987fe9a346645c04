/*
 * test_yokogawa.c: unit tests of the Yokogawa reply parsers (yokogawa.h) on
 * raw reply lines: numbers in NR1/NR2/NR3, the ASCII error words NAN/INF, the
 * 488.2 sentinels 9.91E+37/9.9E+37, garbage, headers, *IDN?, :STAT:ERR?; and
 * of the line transport (linesock.h) over real loopback TCP: a reply split
 * across two segments with a timeout in between, two replies in one
 * segment, a line that is too long, and a peer that closes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "powermeter/linesock.h"
#include "powermeter/meter.h"
#include "powermeter/yokogawa.h"

static unsigned pv(const char *s, double *v) { return tb_yoko_parse_value(s, strlen(s), v); }

static void test_value_numbers(void **state) {
    double v;
    (void)state;
    assert_int_equal(pv("104.75E+00", &v), 0);
    assert_true(fabs(v - 104.75) < 1e-12);
    assert_int_equal(pv(" -0.38E+00 ", &v), 0);
    assert_true(fabs(v + 0.38) < 1e-12);
    assert_int_equal(pv("230", &v), 0); /* NR1 */
    assert_true(v == 230.0);
    assert_int_equal(pv("+1.5", &v), 0); /* NR2 */
    assert_true(v == 1.5);
    assert_int_equal(pv("1.0E-03", &v), 0);
    assert_true(fabs(v - 0.001) < 1e-15);
}

static void test_value_errors(void **state) {
    double v = 1;
    (void)state;
    /* ASCII mode words */
    assert_int_equal(pv("NAN", &v), TB_SAMPLE_INVALID);
    assert_true(isnan(v));
    assert_int_equal(pv("nan", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("INF", &v), TB_SAMPLE_OVERRANGE);
    assert_true(isnan(v));
    assert_int_equal(pv("-INF", &v), TB_SAMPLE_OVERRANGE);
    /* 488.2 / float sentinels */
    assert_int_equal(pv("9.91E+37", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("9.910E+37", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("-9.91E+37", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("9.9E+37", &v), TB_SAMPLE_OVERRANGE);
    assert_int_equal(pv("9.90E+37", &v), TB_SAMPLE_OVERRANGE);
    assert_int_equal(pv("1.0E+38", &v), TB_SAMPLE_OVERRANGE); /* anything >= 9.9E+37 */
    assert_int_equal(pv("1E+400", &v), TB_SAMPLE_OVERRANGE);  /* beyond double */
    /* just below the sentinels is a (silly but) real number */
    assert_int_equal(pv("9.8E+37", &v), 0);
    /* garbage */
    assert_int_equal(pv("", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("   ", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("abc", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("12W", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("0x10", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("infinity", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("1.2.3", &v), TB_SAMPLE_INVALID);
    assert_int_equal(pv("#\x7f%@!garbage~~3", &v), TB_SAMPLE_INVALID);
    assert_true(isnan(v));
}

static void test_values_line(void **state) {
    double v[4];
    unsigned f[4];
    (void)state;
    assert_int_equal(tb_yoko_parse_values("104.75E+00,105.02E+00,-0.38E+00", v, f, 4), 3);
    assert_int_equal(f[0] | f[1] | f[2], 0);
    assert_true(fabs(v[1] - 105.02) < 1e-12);
    /* with a header (COMM:HEAD ON) */
    assert_int_equal(tb_yoko_parse_values(":NUM:NORM:VAL 1.0E+00,2.0E+00", v, f, 4), 2);
    assert_true(v[0] == 1.0 && v[1] == 2.0);
    /* mixed errors keep their positions */
    assert_int_equal(tb_yoko_parse_values("1.0E+00,NAN,INF,9.91E+37", v, f, 4), 4);
    assert_int_equal(f[0], 0);
    assert_int_equal(f[1], TB_SAMPLE_INVALID);
    assert_int_equal(f[2], TB_SAMPLE_OVERRANGE);
    assert_int_equal(f[3], TB_SAMPLE_INVALID);
    /* more fields than asked: counted, not stored */
    assert_int_equal(tb_yoko_parse_values("1,2,3,4,5,6", v, f, 4), 6);
    /* empty fields are invalid, the count still right */
    assert_int_equal(tb_yoko_parse_values("1,,3", v, f, 4), 3);
    assert_int_equal(f[1], TB_SAMPLE_INVALID);
    /* a unit after ';' is not a value of ours */
    assert_int_equal(tb_yoko_parse_values("1.0E+00;W", v, f, 4), 1);
    assert_int_equal(tb_yoko_parse_values("", v, f, 4), -1);
    /* one garbage line = one invalid field */
    assert_int_equal(tb_yoko_parse_values("@@garbage@@", v, f, 4), 1);
    assert_int_equal(f[0], TB_SAMPLE_INVALID);
}

static void test_idn(void **state) {
    char maker[64], model[64], serial[64], fw[64];
    (void)state;
    assert_int_equal(tb_yoko_parse_idn("YOKOGAWA,WT310,C2PH13047V,F1.03", maker, model, serial, fw), 0);
    assert_string_equal(maker, "YOKOGAWA");
    assert_string_equal(model, "WT310");
    assert_string_equal(serial, "C2PH13047V");
    assert_string_equal(fw, "F1.03");
    /* WT210: a model code, not a name */
    assert_int_equal(tb_yoko_parse_idn("YOKOGAWA,760401,91K000001,F3.01", maker, model, serial, fw), 0);
    assert_string_equal(model, "760401");
    /* short but usable */
    assert_int_equal(tb_yoko_parse_idn("YOKOGAWA,WT500", maker, model, serial, fw), 0);
    assert_string_equal(serial, "");
    /* garbage */
    assert_int_equal(tb_yoko_parse_idn("garbage", maker, model, serial, fw), -1);
    assert_int_equal(tb_yoko_parse_idn("", maker, model, serial, fw), -1);
    assert_int_equal(tb_yoko_parse_idn("YOKO\x7f,WT310", maker, model, serial, fw), -1);
}

static void test_error_and_bool(void **state) {
    int code = -1;
    char msg[64];
    (void)state;
    assert_int_equal(tb_yoko_parse_error("0,\"No error\"", &code, msg, sizeof msg), 0);
    assert_int_equal(code, 0);
    assert_string_equal(msg, "No error");
    assert_int_equal(tb_yoko_parse_error("113,\"Undefined header\"", &code, msg, sizeof msg), 0);
    assert_int_equal(code, 113);
    assert_string_equal(msg, "Undefined header");
    assert_int_equal(tb_yoko_parse_error(":STAT:ERR 813,\"Not allowed during integration\"", &code, msg, sizeof msg),
                     0);
    assert_int_equal(code, 813);
    assert_int_equal(tb_yoko_parse_error("oops", &code, msg, sizeof msg), -1);
    assert_int_equal(tb_yoko_parse_bool("1"), 1);
    assert_int_equal(tb_yoko_parse_bool("OFF"), 0);
    assert_int_equal(tb_yoko_parse_bool(":INP:VOLT:AUTO 1"), 1);
    assert_int_equal(tb_yoko_parse_bool("2"), -1);
    assert_string_equal(tb_yoko_strip_header(":INP:VOLT:RANG 300.0E+00"), "300.0E+00");
    assert_string_equal(tb_yoko_strip_header("300.0E+00"), "300.0E+00");
}

/* ---- the transport over real loopback TCP ---- */

/* A listening socket on 127.0.0.1:0; returns its fd and port. */
static int listen_any(int *port) {
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 1), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static void test_linesock_split_reply(void **state) {
    int port, lfd = listen_any(&port), peer;
    char ps[8], buf[128], err[TB_ERR_LEN];
    tb_linesock *ls = NULL;
    double v[4];
    unsigned f[4];
    (void)state;
    snprintf(ps, sizeof ps, "%d", port);
    assert_int_equal(tb_linesock_connect("127.0.0.1", ps, 1000000, &ls, err), 0);
    peer = accept(lfd, NULL, NULL);
    assert_true(peer >= 0);

    /* Half a reply, then nothing: a timeout, and the half is kept. */
    assert_int_equal(write(peer, "104.75E+00,105.0", 16), 16);
    assert_int_equal(tb_linesock_readline(ls, buf, sizeof buf, 50000, err), TB_LS_TIMEOUT);
    assert_non_null(strstr(err, "timeout"));
    assert_int_equal(write(peer, "2E+00,-0.38E+00\r\n", 17), 17);
    assert_int_equal(tb_linesock_readline(ls, buf, sizeof buf, 1000000, err), 31);
    assert_string_equal(buf, "104.75E+00,105.02E+00,-0.38E+00");
    assert_int_equal(tb_yoko_parse_values(buf, v, f, 4), 3);
    assert_true(fabs(v[1] - 105.02) < 1e-12);

    /* Two replies in one segment come out one per call. */
    assert_int_equal(write(peer, "1\n2\n", 4), 4);
    assert_int_equal(tb_linesock_readline(ls, buf, sizeof buf, 1000000, err), 1);
    assert_string_equal(buf, "1");
    assert_int_equal(tb_linesock_readline(ls, buf, sizeof buf, 1000000, err), 1);
    assert_string_equal(buf, "2");

    /* A line longer than the caller's buffer is an error, not a truncation. */
    assert_int_equal(write(peer, "0123456789\n", 11), 11);
    assert_int_equal(tb_linesock_readline(ls, buf, 8, 1000000, err), TB_LS_ERROR);
    assert_non_null(strstr(err, "longer than"));

    /* What we send arrives with the terminator. */
    assert_int_equal(tb_linesock_send(ls, ":NUM:NORM:VAL?", "\n", 1000000, err), 0);
    memset(buf, 0, sizeof buf);
    assert_int_equal(read(peer, buf, sizeof buf - 1), 15);
    assert_string_equal(buf, ":NUM:NORM:VAL?\n");

    /* The peer hangs up: CLOSED, not a timeout. */
    close(peer);
    assert_int_equal(tb_linesock_readline(ls, buf, sizeof buf, 1000000, err), TB_LS_CLOSED);
    assert_non_null(strstr(err, "closed"));
    tb_linesock_close(ls);
    close(lfd);
}

static void test_linesock_connect_refused_and_hostport(void **state) {
    int port, lfd = listen_any(&port);
    char ps[8], err[TB_ERR_LEN], host[64], pt[8];
    const char *rest;
    tb_linesock *ls = (tb_linesock *)0x1;
    (void)state;
    close(lfd); /* nobody listens there now */
    snprintf(ps, sizeof ps, "%d", port);
    assert_int_equal(tb_linesock_connect("127.0.0.1", ps, 1000000, &ls, err), -1);
    assert_null(ls);
    assert_non_null(strstr(err, "connect 127.0.0.1:"));

    assert_int_equal(
        tb_linesock_split_hostport("10.0.0.5:10001?x=1", NULL, host, sizeof host, pt, sizeof pt, &rest, err), 0);
    assert_string_equal(host, "10.0.0.5");
    assert_string_equal(pt, "10001");
    assert_string_equal(rest, "?x=1");
    assert_int_equal(tb_linesock_split_hostport("[::1]:8888", NULL, host, sizeof host, pt, sizeof pt, &rest, err), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(tb_linesock_split_hostport("ptdhost", "8888", host, sizeof host, pt, sizeof pt, &rest, err), 0);
    assert_string_equal(pt, "8888");
    assert_int_equal(tb_linesock_split_hostport("ptdhost", NULL, host, sizeof host, pt, sizeof pt, &rest, err), -1);
    assert_non_null(strstr(err, "missing port"));
    assert_int_equal(tb_linesock_split_hostport("h:99999", NULL, host, sizeof host, pt, sizeof pt, &rest, err), -1);
    assert_int_equal(tb_linesock_split_hostport("h:1x", NULL, host, sizeof host, pt, sizeof pt, &rest, err), -1);
    assert_int_equal(tb_linesock_split_hostport(":80", NULL, host, sizeof host, pt, sizeof pt, &rest, err), -1);
    /* a login is refused, and the error does not echo it (it may hold a password) */
    assert_int_equal(
        tb_linesock_split_hostport("admin:Pw-7@127.0.0.1:1", NULL, host, sizeof host, pt, sizeof pt, &rest, err), -1);
    assert_non_null(strstr(err, "no place in this URI"));
    assert_null(strstr(err, "Pw-7"));
    /* an '@' in the query is not a login */
    assert_int_equal(tb_linesock_split_hostport("h:1?x=a@b", NULL, host, sizeof host, pt, sizeof pt, &rest, err), 0);
}

static void test_uri_errors(void **state) {
    tb_meter *m = (tb_meter *)0x1;
    char err[TB_ERR_LEN];
    (void)state;
    /* Rejected before any connection is tried. */
    assert_int_equal(tb_meter_open("wt310://127.0.0.1", &m, err), -1);
    assert_non_null(strstr(err, "missing port"));
    assert_int_equal(tb_meter_open("wt310://127.0.0.1:1?volt=150", &m, err), -1);
    assert_non_null(strstr(err, "'volt': unknown parameter"));
    assert_int_equal(tb_meter_open("wt310://127.0.0.1:1?element=4", &m, err), -1);
    assert_non_null(strstr(err, "element: '4'"));
    assert_int_equal(tb_meter_open("wt210://127.0.0.1:1?element=sigma", &m, err), -1);
    assert_non_null(strstr(err, "one input element"));
    assert_int_equal(tb_meter_open("wt310://127.0.0.1:1?crest=4", &m, err), -1);
    assert_non_null(strstr(err, "crest"));
    assert_int_equal(tb_meter_open("wt310://127.0.0.1:1?amps=-2", &m, err), -1);
    assert_non_null(strstr(err, "amps"));
    assert_int_equal(tb_meter_open("wt310://127.0.0.1:1?baud=9600", &m, err), -1);
    assert_non_null(strstr(err, "yokogawa+serial"));
    assert_int_equal(tb_meter_open("yokogawa+serial://dev/ttyUSB0", &m, err), -1);
    assert_non_null(strstr(err, "three slashes"));
    assert_int_equal(tb_meter_open("yokogawa+serial:///nonexistent/tty?model=wt9000", &m, err), -1);
    assert_non_null(strstr(err, "model"));
    assert_int_equal(tb_meter_open("yokogawa+serial:///nonexistent/tty", &m, err), TB_METER_EUNREACH);
    assert_non_null(strstr(err, "/nonexistent/tty"));
    assert_null(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_numbers),
        cmocka_unit_test(test_value_errors),
        cmocka_unit_test(test_values_line),
        cmocka_unit_test(test_idn),
        cmocka_unit_test(test_error_and_bool),
        cmocka_unit_test(test_linesock_split_reply),
        cmocka_unit_test(test_linesock_connect_refused_and_hostport),
        cmocka_unit_test(test_uri_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
