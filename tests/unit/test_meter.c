/*
 * test_meter.c: unit tests of the meter front end (powermeter/meter.c) and the
 * estimate: driver. The estimate reads a fake /proc/stat (TB_PROC_STAT) that
 * the tests rewrite between samples, so every expected watt value is exact.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "powermeter/meter.h"

static char stat_path[64];

/* Writes an aggregate cpu line (user nice system idle iowait irq softirq steal guest guest_nice). */
static void write_stat(unsigned long long user, unsigned long long nice, unsigned long long sys,
                       unsigned long long idle, unsigned long long iowait, unsigned long long guest) {
    FILE *f = fopen(stat_path, "w");
    assert_non_null(f);
    fprintf(f, "cpu  %llu %llu %llu %llu %llu 0 0 0 %llu 0\n", user, nice, sys, idle, iowait, guest);
    fprintf(f, "cpu0 %llu %llu %llu %llu %llu 0 0 0 %llu 0\nintr 0\n", user, nice, sys, idle, iowait, guest);
    assert_int_equal(fclose(f), 0);
}

static int setup_stat(void **state) {
    int fd;
    (void)state;
    snprintf(stat_path, sizeof stat_path, "/tmp/tb_test_stat_XXXXXX");
    fd = mkstemp(stat_path);
    if (fd < 0) return -1;
    close(fd);
    write_stat(100, 0, 100, 800, 0, 0);
    setenv("TB_PROC_STAT", stat_path, 1);
    return 0;
}

/* Per test: a known baseline (100/0/100/800) and TB_PROC_STAT pointing at it. */
static int reset_stat(void **state) {
    (void)state;
    write_stat(100, 0, 100, 800, 0, 0);
    setenv("TB_PROC_STAT", stat_path, 1);
    return 0;
}

static int teardown_stat(void **state) {
    (void)state;
    unlink(stat_path);
    unsetenv("TB_PROC_STAT");
    return 0;
}

static void assert_watts(double got, double want) {
    if (!(fabs(got - want) < 1e-9)) fail_msg("watts: got %.12g, want %.12g", got, want);
}

static void assert_open_fails(const char *uri, const char *want_err) {
    tb_meter *m = (tb_meter *)0x1;
    char err[TB_ERR_LEN] = "";
    int rc = tb_meter_open(uri, &m, err);
    if (rc != -1) fail_msg("tb_meter_open('%s') succeeded, want error containing \"%s\"", uri, want_err);
    assert_null(m);
    if (!strstr(err, want_err)) fail_msg("tb_meter_open('%s'): err \"%s\" lacks \"%s\"", uri, err, want_err);
}

/* ---- redaction ---- */

static void test_redact_cases(void **state) {
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"ipmi://admin:secret@10.0.0.5:623?method=dcmi", "ipmi://admin:***@10.0.0.5:623?method=dcmi"},
        {"ipmi://admin:s3:cr:et@bmc", "ipmi://admin:***@bmc"},
        {"ipmi://admin:p@ss@bmc/x", "ipmi://admin:***@bmc/x"}, /* unescaped '@' in the password */
        {"ipmi://:secret@bmc", "ipmi://:***@bmc"},
        {"ipmi://admin@bmc", "ipmi://admin@bmc"},   /* no password */
        {"ipmi://admin:@bmc", "ipmi://admin:@bmc"}, /* empty password */
        {"ipmi:admin:secret@bmc", "ipmi:admin:***@bmc"},
        {"admin:secret@bmc", "admin:***@bmc"},
        {"ptd://10.0.0.9:8888", "ptd://10.0.0.9:8888"},
        {"ptd://host/a@b", "ptd://host/a@b"}, /* '@' in the path is not userinfo */
        {"estimate:?idle=50&max=200", "estimate:?idle=50&max=200"},
        {"estimate:?x=a@b:c", "estimate:?x=a@b:c"},
        {"ipmi://bmc?method=dcmi&password=hunter2&sensor=Pwr", "ipmi://bmc?method=dcmi&password=***&sensor=Pwr"},
        {"ipmi://bmc?password=hunter2", "ipmi://bmc?password=***"},
        {"ipmi://bmc?PassWord=hunter2#frag", "ipmi://bmc?PassWord=***#frag"},
        {"ipmi://bmc?pwd=a;passwd=b&pass=c", "ipmi://bmc?pwd=***;passwd=***&pass=***"},
        {"ipmi://bmc?password=", "ipmi://bmc?password="},
        {"ipmi://bmc?mypassword=1&passwordx=2", "ipmi://bmc?mypassword=1&passwordx=2"},
        {"ipmi://u:pw@bmc?password=pw2", "ipmi://u:***@bmc?password=***"},
        {"yokogawa+serial:///dev/ttyUSB0?model=wt310&baud=9600", "yokogawa+serial:///dev/ttyUSB0?model=wt310&baud=9600"},
        {"rapl:", "rapl:"},
        {"auto", "auto"},
        {"", ""},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[256];
        memset(out, 'Z', sizeof out);
        tb_meter_redact_uri(cases[i].in, out, sizeof out);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("redact('%s') = '%s', want '%s'", cases[i].in, out, cases[i].want);
    }
}

static void test_redact_truncates_safely(void **state) {
    char out[16];
    (void)state;
    memset(out, 'Z', sizeof out);
    tb_meter_redact_uri("ipmi://administrator:topsecret@bmc", out, sizeof out);
    assert_string_equal(out, "ipmi://administ"); /* 15 chars + NUL */
    tb_meter_redact_uri("ipmi://a:topsecret@bmc", out, sizeof out);
    assert_string_equal(out, "ipmi://a:***@bm");
    assert_null(strstr(out, "top"));
    out[0] = 'Z';
    tb_meter_redact_uri("ipmi://a:b@c", out, 1);
    assert_int_equal(out[0], '\0');
}

/* ---- estimate: exact watts from a fake /proc/stat ---- */

static void test_estimate_exact_watts(void **state) {
    tb_meter *m = NULL;
    tb_sample s;
    char err[TB_ERR_LEN] = "";
    const tb_meter_info *info;
    uint64_t before;
    (void)state;

    assert_int_equal(tb_meter_open("estimate:?idle=100&max=300", &m, err), 0);
    info = tb_meter_get_info(m);
    assert_string_equal(info->uri, "estimate:?idle=100&max=300");
    assert_string_equal(info->model, "estimate (CPU utilization, linear)");
    assert_int_equal(info->estimated, 1);
    assert_non_null(strstr(info->idn, "idle=100 W"));

    /* baseline 100/0/100/800 -> busy +100 of total +200: util 0.5 */
    write_stat(150, 0, 150, 900, 0, 0);
    before = tb_now_us();
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 200.0);
    assert_int_equal(s.flags, TB_SAMPLE_ESTIMATED);
    assert_true(s.mono_us >= before && s.mono_us <= tb_now_us());
    assert_true(s.wall_us > 0);
    assert_true(isnan(s.volts) && isnan(s.amps) && isnan(s.pf));

    /* all idle: util 0 -> idle watts */
    write_stat(150, 0, 150, 1000, 0, 0);
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 100.0);

    /* all busy (nice counts as busy): util 1 -> max watts */
    write_stat(200, 50, 150, 1000, 0, 0);
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 300.0);

    /* iowait is idle time: busy 25 of 100 -> 150 W */
    write_stat(225, 50, 150, 1050, 25, 0);
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 150.0);

    /* guest is already inside user, so it must not be counted twice:
     * user +100 (of which guest +100), idle +100 -> util 0.5 -> 200 W */
    write_stat(325, 50, 150, 1150, 25, 100);
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 200.0);

    /* no jiffies elapsed: the last utilization holds */
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 200.0);
    assert_int_equal(s.flags, TB_SAMPLE_ESTIMATED);

    /* then the next delta spans the gap: busy +30 of +40 -> 0.75 -> 250 W */
    write_stat(355, 50, 150, 1160, 25, 100);
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 250.0);

    tb_meter_close(m);
}

static void test_estimate_defaults(void **state) {
    tb_meter *m = NULL;
    tb_sample s;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_meter_open("estimate:", &m, err), 0);
    write_stat(150, 0, 150, 900, 0, 0); /* util 0.5 */
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 125.0); /* 50 + (200 - 50) * 0.5 */
    tb_meter_close(m);

    /* case-insensitive scheme, "W" suffix, stray '&' */
    write_stat(100, 0, 100, 800, 0, 0);
    assert_int_equal(tb_meter_open("ESTIMATE:?idle=80W&&max=80w&", &m, err), 0);
    write_stat(150, 0, 150, 900, 0, 0);
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 80.0);
    tb_meter_close(m);
}

static void test_estimate_first_sample_without_cpu_time_is_invalid(void **state) {
    tb_meter *m = NULL;
    tb_sample s;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_meter_open("estimate:", &m, err), 0);
    /* file unchanged since open: no utilization known yet */
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_true(isnan(s.watts));
    assert_int_equal(s.flags, TB_SAMPLE_ESTIMATED | TB_SAMPLE_INVALID);
    tb_meter_close(m);
}

static void test_estimate_read_failure_gives_missing_sample(void **state) {
    tb_meter *m = NULL;
    tb_sample s;
    char err[TB_ERR_LEN] = "";
    uint64_t before;
    (void)state;
    assert_int_equal(tb_meter_open("estimate:", &m, err), 0);
    assert_int_equal(unlink(stat_path), 0);
    before = tb_now_us();
    memset(&s, 0, sizeof s);
    assert_int_equal(tb_meter_sample(m, &s, err), -1);
    assert_true(isnan(s.watts));
    assert_true(s.flags & TB_SAMPLE_MISSING);
    assert_true(s.flags & TB_SAMPLE_ESTIMATED);
    assert_true(s.mono_us >= before && s.mono_us <= tb_now_us());
    assert_true(s.wall_us > 0);
    assert_non_null(strstr(err, "meter 'estimate:'"));
    assert_non_null(strstr(err, stat_path));
    tb_meter_close(m);
}

static void test_estimate_missing_stat_file_fails_open(void **state) {
    (void)state;
    setenv("TB_PROC_STAT", "/nonexistent/tb/stat", 1);
    assert_open_fails("estimate:", "meter 'estimate:': /nonexistent/tb/stat: No such file or directory");
}

static void test_estimate_garbage_stat_file_fails_open(void **state) {
    FILE *f = fopen(stat_path, "w");
    (void)state;
    assert_non_null(f);
    fputs("intr 1 2 3\n", f);
    fclose(f);
    assert_open_fails("estimate:", "not the aggregate 'cpu' line");
    f = fopen(stat_path, "w");
    assert_non_null(f);
    fputs("cpu  1 2 x 4\n", f);
    fclose(f);
    assert_open_fails("estimate:", "'cpu' field 3 is not a number");
}

/* ---- bad URIs name the problem ---- */

static void test_estimate_bad_params(void **state) {
    (void)state;
    assert_open_fails("estimate:?idle=x", "meter 'estimate:?idle=x': idle: 'x': not a number");
    assert_open_fails("estimate:?max=", "meter 'estimate:?max=': max: '': not a number");
    assert_open_fails("estimate:?max=inf", "max: 'inf': not a number");
    assert_open_fails("estimate:?idle=nan", "idle: 'nan': not a number");
    assert_open_fails("estimate:?idle=50x", "idle: '50x': not a number");
    assert_open_fails("estimate:?idle=-5", "idle: '-5': must not be negative");
    assert_open_fails("estimate:?idle=10&max=-1", "max: '-1': must not be negative");
    assert_open_fails("estimate:?idle=300&max=200", "max: 200 W is below idle 300 W");
    assert_open_fails("estimate:?idle=300", "max: 200 W is below idle 300 W"); /* default max */
    assert_open_fails("estimate:?foo=1", "'foo': unknown parameter (keys: idle, max)");
    assert_open_fails("estimate:?Idle=1", "'Idle': unknown parameter");
    assert_open_fails("estimate:?idle", "'idle': expected key=value");
    assert_open_fails("estimate:?idle=1&idle=2", "idle: given twice");
    assert_open_fails("estimate:idle=5", "'idle=5': unexpected text after 'estimate:'");
}

static void test_bad_uris(void **state) {
    char err[TB_ERR_LEN] = "";
    tb_meter *m = NULL;
    (void)state;
    assert_open_fails("", "meter '': empty URI");
    assert_open_fails("bogus:", "meter 'bogus:': unknown scheme 'bogus' (known: estimate, wt310, wt210, yokogawa+serial, ptd, rapl, ipmi, auto)");
    assert_open_fails("wt999://10.0.0.1:10001", "unknown scheme 'wt999'");
    assert_open_fails("estimate", "meter 'estimate': not a meter URI");
    assert_open_fails(":x", "meter ':x': not a meter URI");
    /* the error must not leak a password */
    assert_int_equal(tb_meter_open("nosuch://admin:secret@bmc?password=hunter2", &m, err), -1);
    assert_string_equal(err, "meter 'nosuch://admin:***@bmc?password=***': unknown scheme 'nosuch' "
                             "(known: estimate, wt310, wt210, yokogawa+serial, ptd, rapl, ipmi, auto)");
}

/* ---- auto ---- */

static void test_auto_falls_back_to_estimate(void **state) {
    tb_meter *m = NULL;
    tb_sample s;
    char err[TB_ERR_LEN] = "";
    const tb_meter_info *info;
    (void)state;
    /* no RAPL tree here, whatever the host has: auto must fall through to the estimate */
    setenv("TB_RAPL_ROOT", "/nonexistent", 1);
    assert_int_equal(tb_meter_open("auto", &m, err), 0);
    info = tb_meter_get_info(m);
    assert_string_equal(info->model, "estimate (auto: no real meter found)");
    assert_string_equal(info->uri, "estimate:");
    assert_int_equal(info->estimated, 1);
    write_stat(150, 0, 150, 900, 0, 0);
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 125.0);
    assert_true(s.flags & TB_SAMPLE_ESTIMATED);
    tb_meter_close(m);
}

/* ---- explicit driver (fake meters) ---- */

static int fake_calls;

static int fake_open(const char *uri, void **self, char *err) {
    if (strstr(uri, "fail")) {
        tb_seterr(err, "connect 127.0.0.1:1: Connection refused");
        return -1;
    }
    *self = &fake_calls;
    return 0;
}

static int fake_identify(void *self, tb_meter_info *info, char *err) {
    (void)self;
    (void)err;
    snprintf(info->model, sizeof info->model, "fake");
    return 0;
}

static int fake_sample(void *self, tb_sample *s, char *err) {
    int *calls = self;
    if (++*calls % 2 == 0) {
        tb_seterr(err, "timeout after 500 ms");
        return -1;
    }
    s->watts = 42.5;
    return 0;
}

static void fake_close(void *self) { (void)self; }

static const tb_meter_driver fake_driver = {"fake", fake_open, fake_identify, fake_sample, fake_close};

static void test_open_driver_and_missing_samples(void **state) {
    tb_meter *m = NULL;
    tb_sample s;
    char err[TB_ERR_LEN] = "";
    (void)state;
    fake_calls = 0;
    assert_int_equal(tb_meter_open_driver(&fake_driver, "fake://u:pw@x", &m, err), 0);
    assert_string_equal(tb_meter_get_info(m)->uri, "fake://u:***@x");
    assert_string_equal(tb_meter_get_info(m)->model, "fake");
    assert_int_equal(tb_meter_get_info(m)->estimated, 0);

    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_watts(s.watts, 42.5);
    assert_int_equal(s.flags, 0);
    assert_true(isnan(s.volts)); /* prefilled: the driver did not set it */

    assert_int_equal(tb_meter_sample(m, &s, err), -1);
    assert_string_equal(err, "meter 'fake://u:***@x': timeout after 500 ms");
    assert_int_equal(s.flags, TB_SAMPLE_MISSING);
    assert_true(isnan(s.watts));
    tb_meter_close(m);

    m = (tb_meter *)0x1;
    assert_int_equal(tb_meter_open_driver(&fake_driver, "fake://fail", &m, err), -1);
    assert_null(m);
    assert_string_equal(err, "meter 'fake://fail': connect 127.0.0.1:1: Connection refused");
}

static void test_close_null_is_noop(void **state) {
    (void)state;
    tb_meter_close(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_redact_cases, reset_stat),
        cmocka_unit_test_setup(test_redact_truncates_safely, reset_stat),
        cmocka_unit_test_setup(test_estimate_exact_watts, reset_stat),
        cmocka_unit_test_setup(test_estimate_defaults, reset_stat),
        cmocka_unit_test_setup(test_estimate_first_sample_without_cpu_time_is_invalid, reset_stat),
        cmocka_unit_test_setup(test_estimate_read_failure_gives_missing_sample, reset_stat),
        cmocka_unit_test_setup(test_estimate_missing_stat_file_fails_open, reset_stat),
        cmocka_unit_test_setup(test_estimate_garbage_stat_file_fails_open, reset_stat),
        cmocka_unit_test_setup(test_estimate_bad_params, reset_stat),
        cmocka_unit_test_setup(test_bad_uris, reset_stat),
        cmocka_unit_test_setup(test_auto_falls_back_to_estimate, reset_stat),
        cmocka_unit_test_setup(test_open_driver_and_missing_samples, reset_stat),
        cmocka_unit_test_setup(test_close_null_is_noop, reset_stat),
    };
    return cmocka_run_group_tests(tests, setup_stat, teardown_stat);
}
