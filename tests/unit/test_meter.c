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
#include "common/redact.h"

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
        {"ipmi://bmc?mypassword=1&passwordx=2", "ipmi://bmc?mypassword=***&passwordx=2"},
        {"ipmi://u:pw@bmc?password=pw2", "ipmi://u:***@bmc?password=***"},
        {"yokogawa+serial:///dev/ttyUSB0?model=wt310&baud=9600",
         "yokogawa+serial:///dev/ttyUSB0?model=wt310&baud=9600"},
        /* an unescaped '/', '?' or '#' in the password: still hidden (the rest may be too) */
        {"ipmi://admin:Ip/Secret-2@127.0.0.1:1", "ipmi://admin:***@127.0.0.1:1"},
        {"ipmi://admin:Ip?Secret-2@127.0.0.1:1?timeout=1s", "ipmi://admin:***@127.0.0.1:1?timeout=1s"},
        {"ipmi://admin:Ip#Sec/ret@bmc#frag", "ipmi://admin:***@bmc#frag"},
        {"ipmi:admin:Ip/Secret@bmc", "ipmi:admin:***@bmc"},
        /* keys ending in password or passwd (libpq's sslpassword) */
        {"ptd://h?sslpassword=s1&db_passwd=s2&x=1", "ptd://h?sslpassword=***&db_passwd=***&x=1"},
        /* a percent-encoded colon in the userinfo still starts the password */
        {"ipmi://admin%3Ahunter2@[::1", "ipmi://admin%3A***@[::1"},
        {"ipmi://admin%3a@bmc", "ipmi://admin%3a@bmc"}, /* empty password */
        /* tokens, secrets and API keys in a query (telemetry URLs) */
        {"http://h:9100/metrics?token=s3cr3t&x=1", "http://h:9100/metrics?token=***&x=1"},
        {"http://h/m?access_token=a&Secret=b&apikey=c&api_key=d&client_secret=e",
         "http://h/m?access_token=***&Secret=***&apikey=***&api_key=***&client_secret=***"},
        {"http://h/m?tokens=2&secretary=x", "http://h/m?tokens=2&secretary=x"},
        {"rapl:", "rapl:"},
        {"auto", "auto"},
        {"", ""},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[256];
        memset(out, 'Z', sizeof out);
        tb_redact_uri(cases[i].in, out, sizeof out);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("redact('%s') = '%s', want '%s'", cases[i].in, out, cases[i].want);
    }
}

static void test_redact_truncates_safely(void **state) {
    char out[16];
    (void)state;
    memset(out, 'Z', sizeof out);
    tb_redact_uri("ipmi://administrator:topsecret@bmc", out, sizeof out);
    assert_string_equal(out, "ipmi://administ"); /* 15 chars + NUL */
    tb_redact_uri("ipmi://a:topsecret@bmc", out, sizeof out);
    assert_string_equal(out, "ipmi://a:***@bm");
    assert_null(strstr(out, "top"));
    out[0] = 'Z';
    tb_redact_uri("ipmi://a:b@c", out, 1);
    assert_int_equal(out[0], '\0');
}

/* tb_redact_scrub: a URI's raw secrets out of error text that quotes them
 * (a driver's "connect admin:PASS@host: ..."), every copy; other text kept. */
static void test_scrub(void **state) {
    char t[128];
    (void)state;
    snprintf(t, sizeof t, "connect admin:IpSecret-11@127.0.0.1:1: no; again IpSecret-11");
    tb_redact_scrub(t, sizeof t, "wt310://admin:IpSecret-11@127.0.0.1:1");
    assert_string_equal(t, "connect admin:***@127.0.0.1:1: no; again ***");
    snprintf(t, sizeof t, "login Ip/Sec?ret with key k9 failed");
    tb_redact_scrub(t, sizeof t, "ipmi://admin:Ip/Sec?ret@h?password=k9&timeout=1s");
    assert_string_equal(t, "login *** with key *** failed");
    snprintf(t, sizeof t, "host h: timeout");
    tb_redact_scrub(t, sizeof t, "ptd://h:8888");
    assert_string_equal(t, "host h: timeout");
    snprintf(t, sizeof t, "x=abcdefgh");
    tb_redact_scrub(t, 6, "ipmi://u:abcdefgh@h"); /* the buffer is 6 bytes: cut, never overrun */
    assert_string_equal(t, "x=***");
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
    assert_open_fails("bogus:", "meter 'bogus:': unknown scheme 'bogus' (known: estimate, wt310, wt210, "
                                "yokogawa+serial, ptd, rapl, ipmi, auto)");
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

static const tb_meter_driver fake_driver = {"fake", fake_open, fake_identify, fake_sample, fake_close, NULL};

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
    /* no set_ranges: the ranging pass is refused, clearly, password redacted */
    assert_int_equal(tb_meter_can_range(m), 0);
    assert_int_equal(tb_meter_set_ranges(m, 300, 2, err), -1);
    assert_non_null(strstr(err, "meter 'fake://u:***@x': its ranges cannot be set at run time"));
    tb_meter_close(m);

    m = (tb_meter *)0x1;
    assert_int_equal(tb_meter_open_driver(&fake_driver, "fake://fail", &m, err), -1);
    assert_null(m);
    assert_string_equal(err, "meter 'fake://fail': connect 127.0.0.1:1: Connection refused");
}

/* ---- plausibility (tb_meter_plausible), both sides of every bound ---- */

/* A WT310 on fixed 300 V / 20 A ranges at crest factor 3, one element. */
static tb_meter_info wt310_info(void) {
    tb_meter_info i;
    memset(&i, 0, sizeof i);
    snprintf(i.model, sizeof i.model, "WT310");
    i.volt_range_v = 300;
    i.amp_range_a = 20;
    i.volt_mode = i.amp_mode = TB_RANGE_FIXED;
    i.crest_factor = 3;
    i.elements = 1;
    return i;
}

static tb_sample sample_w(double w, double v, double a, double pf) {
    tb_sample s;
    memset(&s, 0, sizeof s);
    s.watts = w;
    s.volts = v;
    s.amps = a;
    s.pf = pf;
    s.uncertainty_pct = NAN;
    return s;
}

static void expect_reason(const tb_meter_info *info, tb_sample s, int want, const char *what) {
    char why[256];
    int got = tb_meter_plausible(info, &s, why, sizeof why);
    if (got != want)
        fail_msg("%s: W %.9g V %g A %.9g PF %g: reason %d (%s), want %d", what, s.watts, s.volts, s.amps, s.pf, got,
                 why, want);
    if ((got != TB_REASON_NONE) != (why[0] != '\0')) fail_msg("%s: explanation '%s' for reason %d", what, why, got);
}

static void test_plausible_negative_and_nonfinite(void **state) {
    tb_meter_info info = wt310_info();
    tb_sample s;
    char why[128];
    (void)state;
    expect_reason(&info, sample_w(0, NAN, NAN, NAN), TB_REASON_NONE, "0 W");
    expect_reason(&info, sample_w(-1e-9, NAN, NAN, NAN), TB_REASON_NEGATIVE, "-1e-9 W");
    expect_reason(&info, sample_w(-27.1, 230, -3.199, 0.95), TB_REASON_NEGATIVE, "the WT310E field bug");
    expect_reason(&info, sample_w(NAN, 230, 1, 1), TB_REASON_NONFINITE, "NaN W, unflagged");
    expect_reason(&info, sample_w(INFINITY, NAN, NAN, NAN), TB_REASON_NONFINITE, "+inf W");
    expect_reason(&info, sample_w(-INFINITY, NAN, NAN, NAN), TB_REASON_NONFINITE, "-inf W");
    /* what the driver already flagged is not judged again */
    s = sample_w(NAN, NAN, NAN, NAN);
    s.flags = TB_SAMPLE_INVALID;
    expect_reason(&info, s, TB_REASON_NONE, "NaN W flagged INVALID");
    s = sample_w(-5, NAN, NAN, NAN);
    s.flags = TB_SAMPLE_OVERRANGE;
    expect_reason(&info, s, TB_REASON_NONE, "flagged OVERRANGE");
    s = sample_w(-5, NAN, NAN, NAN);
    s.flags = TB_SAMPLE_MISSING;
    expect_reason(&info, s, TB_REASON_NONE, "flagged MISSING");
    /* the estimate and auto-range flags are not bad: still judged */
    s = sample_w(-5, NAN, NAN, NAN);
    s.flags = TB_SAMPLE_ESTIMATED | TB_SAMPLE_AUTORANGE;
    expect_reason(&info, s, TB_REASON_NEGATIVE, "negative, flagged ESTIMATED|AUTORANGE");
    s = sample_w(-27.1, NAN, NAN, NAN);
    assert_int_equal(tb_meter_plausible(&info, &s, why, sizeof why), TB_REASON_NEGATIVE);
    assert_non_null(strstr(why, "-27.1"));
    assert_int_equal(tb_meter_plausible(&info, &s, NULL, 0), TB_REASON_NEGATIVE);
}

static void test_plausible_range_bound(void **state) {
    tb_meter_info info = wt310_info();
    (void)state;
    /* (3 x 300 V) x (3 x 20 A) = 54 kW */
    assert_true(tb_meter_max_watts(&info) == 54000.0);
    expect_reason(&info, sample_w(54000, NAN, NAN, NAN), TB_REASON_NONE, "at the bound");
    expect_reason(&info, sample_w(54000.01, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "just above");
    /* crest factor 6: (6 x 300) x (6 x 20) */
    info.crest_factor = 6;
    expect_reason(&info, sample_w(216000, NAN, NAN, NAN), TB_REASON_NONE, "CF6 at the bound");
    expect_reason(&info, sample_w(216000.01, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "CF6 just above");
    /* crest factor not reported: 3 */
    info.crest_factor = 0;
    assert_true(tb_meter_max_watts(&info) == 54000.0);
    expect_reason(&info, sample_w(54000.01, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "CF unknown, just above");
    /* SIGMA of up to 3 elements */
    info.elements = 3;
    expect_reason(&info, sample_w(162000, NAN, NAN, NAN), TB_REASON_NONE, "3 elements at the bound");
    expect_reason(&info, sample_w(162000.01, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "3 elements just above");
    /* A range auto-ranging or unknown: 3 x the model's largest (WT310: 600 V, 20 A) */
    info = wt310_info();
    info.volt_mode = info.amp_mode = TB_RANGE_AUTO;
    assert_true(tb_meter_max_watts(&info) == 108000.0);
    expect_reason(&info, sample_w(108000, NAN, NAN, NAN), TB_REASON_NONE, "auto: at the model bound");
    expect_reason(&info, sample_w(108000.01, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "auto: just above");
    expect_reason(&info, sample_w(5e37, 230, 0.5, NAN), TB_REASON_ABOVE_RANGE, "auto: the tester's 5e37 W");
    info.amp_mode = TB_RANGE_FIXED; /* 300 V auto (1800 V peak) x 20 A fixed (60 A peak) */
    assert_true(tb_meter_max_watts(&info) == 108000.0);
    info = wt310_info();
    info.amp_mode = TB_RANGE_AUTO; /* 300 V fixed (900 V peak) x auto (60 A peak) */
    expect_reason(&info, sample_w(54000, NAN, NAN, NAN), TB_REASON_NONE, "A auto: at the bound");
    expect_reason(&info, sample_w(54000.01, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "A auto: just above");
    info = wt310_info();
    info.volt_range_v = 0;
    expect_reason(&info, sample_w(108000, NAN, NAN, NAN), TB_REASON_NONE, "V range unknown: model bound");
    expect_reason(&info, sample_w(108000.01, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "V range unknown: above");
    info.volt_mode = info.amp_mode = TB_RANGE_UNKNOWN;
    expect_reason(&info, sample_w(1e30, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "modes unknown: 1e30 W");
    snprintf(info.model, sizeof info.model, "WT500");
    assert_true(tb_meter_max_watts(&info) == 3000.0 * 120.0);
    snprintf(info.model, sizeof info.model, "WT210 (760401)");
    assert_true(tb_meter_max_watts(&info) == 108000.0);
    snprintf(info.model, sizeof info.model, "WT333E");
    info.elements = 3;
    assert_true(tb_meter_max_watts(&info) == 3 * 108000.0);
    /* neither ranges nor model: the ceiling of one meter feed */
    memset(&info, 0, sizeof info);
    snprintf(info.model, sizeof info.model, "SomeMeter");
    assert_true(tb_meter_max_watts(&info) == TB_PLAUSIBLE_FEED_MAX_W);
    expect_reason(&info, sample_w(90000, NAN, NAN, NAN), TB_REASON_NONE, "no model: at the feed ceiling");
    expect_reason(&info, sample_w(90000.01, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "no model: above the ceiling");
    expect_reason(&info, sample_w(9.8e37, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "no model: PTD's 9.8E+37");
    /* a small range: 0.2 A, 300 V -> 540 W */
    info = wt310_info();
    info.amp_range_a = 0.2;
    expect_reason(&info, sample_w(540, NAN, NAN, NAN), TB_REASON_NONE, "0.2 A range at the bound");
    expect_reason(&info, sample_w(540.001, NAN, NAN, NAN), TB_REASON_ABOVE_RANGE, "0.2 A range just above");
}

static void test_plausible_vapf(void **state) {
    tb_meter_info info = wt310_info(), none;
    (void)state;
    /* good WT310 samples: PF = P / (U x I) rounded to five digits */
    expect_reason(&info, sample_w(199.45, 229.87, 0.91234, 0.95103), TB_REASON_NONE, "a good WT310 sample");
    expect_reason(&info, sample_w(1.2345, 100.02, 0.012345, 0.99980), TB_REASON_NONE, "a small good sample");
    /* PF clipped at 1 while P > U x I by 0.15% (measurement error) */
    expect_reason(&info, sample_w(100.20, 230.00, 0.43500, 1.0000), TB_REASON_NONE, "PF clipped at 1");
    /* 300 V x 20 A ranges: tolerance 1.5% of max(|W|, |VAPF|) + 1.5% of 6000 W = 90 W.
     * At W 1000: VAPF up to 1090 / 0.985 = 1106.599 W passes. */
    expect_reason(&info, sample_w(1000, 230, 1106.5 / 230, 1), TB_REASON_NONE, "VAPF 1106.5 vs W 1000");
    expect_reason(&info, sample_w(1000, 230, 1106.7 / 230, 1), TB_REASON_VAPF, "VAPF 1106.7 vs W 1000");
    /* below W: VAPF down to (1000 - 90 - 15) = 895 passes */
    expect_reason(&info, sample_w(1000, 230, 895.1 / 230, 1), TB_REASON_NONE, "VAPF 895.1 vs W 1000");
    expect_reason(&info, sample_w(1000, 230, 894.9 / 230, 1), TB_REASON_VAPF, "VAPF 894.9 vs W 1000");
    /* crest factor 6 doubles the range term: 180 W + 1.5% of 1000 W = 195 W */
    info.crest_factor = 6;
    expect_reason(&info, sample_w(1000, 230, 805.1 / 230, 1), TB_REASON_NONE, "CF6: VAPF 805.1 vs W 1000");
    expect_reason(&info, sample_w(1000, 230, 804.9 / 230, 1), TB_REASON_VAPF, "CF6: VAPF 804.9 vs W 1000");
    /* ranges unknown: 1.5% of the larger of the two only */
    memset(&none, 0, sizeof none);
    expect_reason(&none, sample_w(100, 230, 101.5 / 230, 1), TB_REASON_NONE, "no ranges: VAPF 101.5 vs W 100");
    expect_reason(&none, sample_w(100, 230, 101.6 / 230, 1), TB_REASON_VAPF, "no ranges: VAPF 101.6 vs W 100");
    expect_reason(&none, sample_w(100, 230, 98.6 / 230, 1), TB_REASON_NONE, "no ranges: VAPF 98.6 vs W 100");
    expect_reason(&none, sample_w(100, 230, 98.4 / 230, 1), TB_REASON_VAPF, "no ranges: VAPF 98.4 vs W 100");
    /* the emulator's inconsistent fault: the current doubled */
    expect_reason(&none, sample_w(200, 230, 2 * 200 / (230 * 0.95), 0.95), TB_REASON_VAPF, "current doubled");
    /* not judged without all of V, A, PF, or on a SIGMA of several elements */
    expect_reason(&none, sample_w(100, 230, NAN, 1), TB_REASON_NONE, "no A");
    expect_reason(&none, sample_w(100, NAN, 1, 1), TB_REASON_NONE, "no V");
    expect_reason(&none, sample_w(100, 230, 1, NAN), TB_REASON_NONE, "no PF");
    /* PF not read: |W| <= V x A + 1.5% of the larger (|PF| <= 1) */
    expect_reason(&none, sample_w(1000, 230, 0.5, NAN), TB_REASON_VAPF, "no PF: the tester's 1000 W > 115 VA");
    expect_reason(&none, sample_w(101.5, 100, 1, NAN), TB_REASON_NONE, "no PF: 101.5 W vs 100 VA");
    expect_reason(&none, sample_w(101.6, 100, 1, NAN), TB_REASON_VAPF, "no PF: 101.6 W vs 100 VA");
    /* 300 V x 20 A at CF 6: + 1.5% of W + 180 W: up to 280 / 0.985 = 284.26 W */
    expect_reason(&info, sample_w(284.2, 100, 1, NAN), TB_REASON_NONE, "no PF, CF6 ranges: 284.2 W vs 100 VA");
    expect_reason(&info, sample_w(284.3, 100, 1, NAN), TB_REASON_VAPF, "no PF, CF6 ranges: 284.3 W vs 100 VA");
    /* RMS V and A are never negative */
    expect_reason(&none, sample_w(100, -230, -0.4577, 0.95), TB_REASON_NEGATIVE_VA, "the tester's -230 V");
    expect_reason(&none, sample_w(100, 230, -0.4577, 0.95), TB_REASON_NEGATIVE_VA, "-0.4577 A");
    expect_reason(&none, sample_w(100, -1e-9, NAN, NAN), TB_REASON_NEGATIVE_VA, "-1e-9 V, A not read");
    expect_reason(&none, sample_w(0, 0, 0, NAN), TB_REASON_NONE, "0 W, 0 V, 0 A");
    info = wt310_info();
    info.elements = 3;
    expect_reason(&info, sample_w(100, 230, 1, 1), TB_REASON_NONE, "SIGMA: V and A are averages");
}

static void test_reason_texts(void **state) {
    (void)state;
    assert_string_equal(tb_meter_reason_text(TB_REASON_NONE), "");
    assert_string_equal(tb_meter_reason_text(TB_REASON_COUNT), "");
    assert_string_equal(tb_meter_reason_text(-1), "");
    for (int r = TB_REASON_NEGATIVE; r <= TB_REASON_NEGATIVE_VA; r++)
        assert_non_null(strstr(tb_meter_reason_text(r), "implausible"));
    for (int r = TB_REASON_MISSING; r <= TB_REASON_OVERRANGE; r++) {
        assert_true(tb_meter_reason_text(r)[0] != '\0');
        assert_null(strstr(tb_meter_reason_text(r), "implausible"));
    }
}

/* The front end applies the check to every driver's samples, after the
 * driver's own flags, and stamps a reason on every bad sample. */
static const double scripted_w[] = {200, -27.1, NAN, 70000, 100, 100};
static const unsigned scripted_flags[] = {0, 0, 0, 0, TB_SAMPLE_INVALID, 0};
static const double scripted_a[] = {NAN, -3.199, NAN, NAN, NAN, 2.0};
static int scripted_i;

static int scripted_open(const char *uri, void **self, char *err) {
    (void)uri;
    (void)err;
    scripted_i = 0;
    *self = &scripted_i;
    return 0;
}

static int scripted_identify(void *self, tb_meter_info *info, char *err) {
    (void)self;
    (void)err;
    *info = wt310_info();
    return 0;
}

static int scripted_sample(void *self, tb_sample *s, char *err) {
    int i = (*(int *)self)++;
    (void)err;
    s->watts = scripted_w[i];
    s->amps = scripted_a[i];
    if (isfinite(scripted_a[i])) {
        s->volts = 230;
        s->pf = 1;
    }
    s->flags |= scripted_flags[i];
    return 0;
}

static const tb_meter_driver scripted_driver = {"scripted",      scripted_open, scripted_identify,
                                                scripted_sample, fake_close,    NULL};

static void test_front_end_flags_implausible(void **state) {
    static const int want_reason[] = {TB_REASON_NONE,        TB_REASON_NEGATIVE, TB_REASON_NONFINITE,
                                      TB_REASON_ABOVE_RANGE, TB_REASON_INVALID,  TB_REASON_VAPF};
    tb_meter *m = NULL;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_meter_open_driver(&scripted_driver, "scripted:", &m, err), 0);
    for (size_t i = 0; i < sizeof want_reason / sizeof want_reason[0]; i++) {
        tb_sample s;
        unsigned want_flags = want_reason[i] >= TB_REASON_NEGATIVE ? TB_SAMPLE_IMPLAUSIBLE : scripted_flags[i];
        assert_int_equal(tb_meter_sample(m, &s, err), 0);
        if (s.reason != want_reason[i] || s.flags != want_flags)
            fail_msg("sample %zu (W %g): reason %d flags 0x%x, want %d 0x%x", i, s.watts, s.reason, s.flags,
                     want_reason[i], want_flags);
        /* the raw reading is kept */
        if (i == 1) assert_true(s.watts == -27.1);
        if (want_reason[i] != TB_REASON_NONE) assert_true(s.flags & TB_SAMPLE_BAD);
    }
    tb_meter_close(m);
}

/* An identity with terminal escapes (a hostile PTD Identify): the front end
 * replaces every byte outside printable ASCII with '?', for every driver. */
static int escapes_identify(void *self, tb_meter_info *info, char *err) {
    (void)self;
    (void)err;
    snprintf(info->model, sizeof info->model, "WT310\x1b]0;pwned\x07");
    snprintf(info->idn, sizeof info->idn, "YOKOGAWA,WT310,\x1b[2J,F1.0\r\n\x7f\xc3\xa9");
    snprintf(info->serial, sizeof info->serial, "\x01S1");
    snprintf(info->firmware, sizeof info->firmware, "F\t1");
    snprintf(info->driver, sizeof info->driver,
             "ptd \x9b"
             "31m");
    return 0;
}

static const tb_meter_driver escapes_driver = {"escapes",       scripted_open, escapes_identify,
                                               scripted_sample, fake_close,    NULL};

static void test_identity_escapes_replaced(void **state) {
    tb_meter *m = NULL;
    const tb_meter_info *i;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_meter_open_driver(&escapes_driver, "escapes:", &m, err), 0);
    i = tb_meter_get_info(m);
    assert_string_equal(i->model, "WT310?]0;pwned?");
    assert_string_equal(i->idn, "YOKOGAWA,WT310,?[2J,F1.0?????");
    assert_string_equal(i->serial, "?S1");
    assert_string_equal(i->firmware, "F?1");
    assert_string_equal(i->driver, "ptd ?31m");
    tb_meter_close(m);
}

static void test_close_null_is_noop(void **state) {
    (void)state;
    tb_meter_close(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_redact_cases, reset_stat),
        cmocka_unit_test_setup(test_redact_truncates_safely, reset_stat),
        cmocka_unit_test_setup(test_scrub, reset_stat),
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
        cmocka_unit_test_setup(test_plausible_negative_and_nonfinite, reset_stat),
        cmocka_unit_test_setup(test_plausible_range_bound, reset_stat),
        cmocka_unit_test_setup(test_plausible_vapf, reset_stat),
        cmocka_unit_test_setup(test_reason_texts, reset_stat),
        cmocka_unit_test_setup(test_front_end_flags_implausible, reset_stat),
        cmocka_unit_test_setup(test_identity_escapes_replaced, reset_stat),
    };
    return cmocka_run_group_tests(tests, setup_stat, teardown_stat);
}
