/*
 * test_ptd.c: unit tests of the SPEC PTDaemon reply parsers (ptd.h) on raw
 * reply lines as PTDaemon sends them (examples as PTDaemon 1.9 prints them):
 * Identify, RR, Watts, Uncertainty (and its old name Accuracy), RL headers
 * and sample lines with -1 (error) and -2 (missed) markers, warnings,
 * errors and garbage.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "powermeter/meter.h"
#include "powermeter/meter_uri.h"
#include "powermeter/ptd.h"

static void test_classify(void **state) {
    (void)state;
    assert_int_equal(tb_ptd_classify("Hello, PTDaemon here!"), TB_PTD_LINE);
    assert_int_equal(tb_ptd_classify("Watts,100.0,99,101,10,0,10"), TB_PTD_LINE);
    assert_int_equal(tb_ptd_classify("Error: no measurement to stop"), TB_PTD_ERROR);
    assert_int_equal(tb_ptd_classify("Invalid number of parameters"), TB_PTD_ERROR);
    assert_int_equal(tb_ptd_classify("Unknown command"), TB_PTD_ERROR);
    assert_int_equal(tb_ptd_classify("Invalid channel"), TB_PTD_ERROR);
    assert_int_equal(tb_ptd_classify("Error in parameter"), TB_PTD_ERROR);
    assert_int_equal(tb_ptd_classify("Meter busy"), TB_PTD_ERROR);
    assert_int_equal(tb_ptd_classify("No data"), TB_PTD_ERROR);
    assert_int_equal(tb_ptd_classify("WARNING: Uncertainty 1.45%, which is above 1.00% limit for the last sample!"),
                     TB_PTD_UNCERT_WARN);
    assert_int_equal(tb_ptd_classify("ERROR: Can't evaluate uncertainty of this sample!"), TB_PTD_UNCERT_WARN);
}

static void test_identify(void **state) {
    tb_ptd_ident id;
    (void)state;
    assert_int_equal(tb_ptd_parse_identify("YokogawaWT330E,1000,1,1,1,1,0,0,1,version=1.9.2-abc,OS=Windows,"
                                           "mode=power,1,1,1,0,0,no_cal_date,YOKOGAWA;WT333E;C3VD30030E;F1.04",
                                           &id),
                     0);
    assert_string_equal(id.device, "YokogawaWT330E");
    assert_int_equal(id.interval_ms, 1000);
    assert_true(id.can_w && id.can_v && id.can_a && id.can_pf);
    assert_string_equal(id.version, "1.9.2-abc");
    assert_string_equal(id.mode, "power");
    assert_string_equal(id.idn, "YOKOGAWA,WT333E,C3VD30030E,F1.04");
    /* a temperature sensor: parses, mode says so, no IDN */
    assert_int_equal(tb_ptd_parse_identify("PCsensor USB9097+DS18B20,5000,1,0,0,0,0,0,1,version=1.9.1,OS=W,"
                                           "mode=temperature,0,0,1,0,0,no_cal_date,na",
                                           &id),
                     0);
    assert_string_equal(id.mode, "temperature");
    assert_string_equal(id.idn, "");
    assert_int_equal(tb_ptd_parse_identify("garbage", &id), -1);
    assert_int_equal(tb_ptd_parse_identify("Unknown command", &id), -1);
    assert_int_equal(tb_ptd_parse_identify("Dev,abc", &id), -1);
}

static void test_ranges_watts_uncertainty(void **state) {
    tb_ptd_ranges r;
    tb_ptd_watts w;
    tb_ptd_uncertainty u;
    (void)state;
    assert_int_equal(tb_ptd_parse_ranges("Ranges,0,20,0,300", &r), 0);
    assert_int_equal(r.amp_auto, 0);
    assert_true(r.amp_range_a == 20);
    assert_true(r.volt_range_v == 300);
    assert_int_equal(tb_ptd_parse_ranges("Ranges,1,-1,-1,-1", &r), 0);
    assert_int_equal(r.amp_auto, 1);
    assert_int_equal(r.volt_auto, -1);
    assert_int_equal(tb_ptd_parse_ranges("Ranges,0,20", &r), -1);
    assert_int_equal(tb_ptd_parse_ranges("Watts,1,2,3,4,5,6", &r), -1);

    assert_int_equal(tb_ptd_parse_watts("Watts,215.5,210.0,220.25,60,1,59", &w), 0);
    assert_true(w.avg_w == 215.5 && w.min_w == 210.0 && w.max_w == 220.25);
    assert_true(w.samples == 60 && w.errors == 1 && w.valid == 59);
    assert_int_equal(tb_ptd_parse_watts("Watts,215.5,210.0", &w), -1);
    assert_int_equal(tb_ptd_parse_watts("Watts,x,1,2,3,4,5", &w), -1);

    assert_int_equal(tb_ptd_parse_uncertainty("Uncertainty,0.002100,0.001900,0.015000,60,1,59,0", &u), 0);
    assert_true(fabs(u.avg - 0.0021) < 1e-12 && fabs(u.max - 0.015) < 1e-12);
    assert_true(u.total == 60 && u.invalid == 1 && u.valid == 59 && u.unknown == 0);
    assert_int_equal(tb_ptd_parse_uncertainty("Accuracy,0.002,0.002,0.002,5,0,5,0", &u), 0); /* PTD < 1.4.3 */
    assert_int_equal(tb_ptd_parse_uncertainty("Uncertainty,0.002,0.002", &u), -1);
    assert_int_equal(tb_ptd_parse_uncertainty("Uncertainty,0.002,0.002,0.002,-5,0,5,0", &u), -1);
}

static tb_ptd_uncertainty unc(double avg, uint64_t total, uint64_t invalid, uint64_t unknown) {
    tb_ptd_uncertainty u;
    memset(&u, 0, sizeof u);
    u.avg = avg;
    u.total = total;
    u.invalid = invalid;
    u.unknown = unknown;
    u.valid = total - invalid - unknown;
    return u;
}

/* Per-sample uncertainty from two polls of PTD's running statistics. */
static void test_sample_uncertainty(void **state) {
    tb_ptd_uncertainty zero = unc(0, 0, 0, 0), a = unc(0.002, 10, 0, 0), b;
    double pct;
    (void)state;
    /* 10 samples at 0.2%, then 10 more at 0.6%: running avg 0.004 over 20 */
    assert_int_equal(tb_ptd_sample_uncertainty(&zero, &a, &pct), 0);
    assert_true(fabs(pct - 0.2) < 1e-9);
    b = unc(0.004, 20, 0, 0);
    assert_int_equal(tb_ptd_sample_uncertainty(&a, &b, &pct), 0);
    assert_true(fabs(pct - 0.6) < 1e-9);
    /* both sides of the 1% limit: new samples at 1.0% and at 1.02% */
    b = unc((0.002 * 10 + 0.0100 * 10) / 20, 20, 0, 0);
    assert_int_equal(tb_ptd_sample_uncertainty(&a, &b, &pct), 0);
    b = unc((0.002 * 10 + 0.0102 * 10) / 20, 20, 0, 0);
    assert_int_equal(tb_ptd_sample_uncertainty(&a, &b, &pct), TB_SAMPLE_INVALID);
    /* the tester's frozen counters: no new sample counted, not evaluated */
    b = unc(0.002, 0, 0, 0);
    assert_int_equal(tb_ptd_sample_uncertainty(&zero, &b, &pct), TB_SAMPLE_INVALID);
    assert_true(isnan(pct));
    assert_int_equal(tb_ptd_sample_uncertainty(&a, &a, &pct), TB_SAMPLE_INVALID);
    assert_true(isnan(pct));
    b = unc(0.002, 5, 0, 0); /* counters went back (a restarted measurement) */
    assert_int_equal(tb_ptd_sample_uncertainty(&a, &b, &pct), TB_SAMPLE_INVALID);
    /* a running average that falls below the earlier samples' sum: negative */
    b = unc(0.0005, 20, 0, 0);
    assert_int_equal(tb_ptd_sample_uncertainty(&a, &b, &pct), TB_SAMPLE_INVALID);
    assert_true(isnan(pct));
    /* exactly the earlier sum: 0% is fine */
    b = unc(0.001, 20, 0, 0);
    assert_int_equal(tb_ptd_sample_uncertainty(&a, &b, &pct), 0);
    assert_true(fabs(pct) < 1e-9);
    /* PTD counted a new invalid or unknown sample */
    b = unc(0.002, 20, 1, 0);
    assert_int_equal(tb_ptd_sample_uncertainty(&a, &b, &pct), TB_SAMPLE_INVALID);
    b = unc(0.002, 20, 0, 1);
    assert_int_equal(tb_ptd_sample_uncertainty(&a, &b, &pct), TB_SAMPLE_INVALID);
}

static void test_rl(void **state) {
    unsigned n = 99;
    double w, v, a, pf;
    int64_t t;
    (void)state;
    assert_int_equal(tb_ptd_parse_rl_header("Last 1 sample", &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(tb_ptd_parse_rl_header("Last 12 samples", &n), 0);
    assert_int_equal(n, 12);
    assert_int_equal(tb_ptd_parse_rl_header("Last 0 samples", &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(tb_ptd_parse_rl_header("Last x samples", &n), -1);
    assert_int_equal(tb_ptd_parse_rl_header("No data", &n), -1);

    assert_int_equal(
        tb_ptd_parse_rl_sample("Time,11-30-2026 16:00:01.250,Watts,215.500000,Volts,230.1,Amps,0.98,PF,0.95", &w, &v,
                               &a, &pf, &t),
        0);
    assert_true(w == 215.5 && fabs(v - 230.1) < 1e-12 && fabs(a - 0.98) < 1e-12 && pf == 0.95);
    assert_true(t > 0 && t % 1000000 == 250000);
    /* fields in another order, and one we do not know */
    assert_int_equal(
        tb_ptd_parse_rl_sample("Time,11-30-2026 16:00:01.000,PF,0.9,Mark,x,Watts,100", &w, &v, &a, &pf, &t), 0);
    assert_true(w == 100 && pf == 0.9 && isnan(v));
    /* -1: the sample is an error; -2: missed */
    assert_int_equal(tb_ptd_parse_rl_sample("Time,11-30-2026 16:00:01.000,Watts,-1.000000,Volts,-1,Amps,-1,PF,-1", &w,
                                            &v, &a, &pf, &t),
                     TB_SAMPLE_INVALID);
    assert_true(isnan(w));
    assert_int_equal(tb_ptd_parse_rl_sample("Time,11-30-2026 16:00:01.000,Watts,-2.000000,Volts,-2,Amps,-2,PF,-2", &w,
                                            &v, &a, &pf, &t),
                     TB_SAMPLE_MISSING);
    /* V/A unknown while W is good: the sample stands */
    assert_int_equal(
        tb_ptd_parse_rl_sample("Time,11-30-2026 16:00:01.000,Watts,50,Volts,-1,Amps,-1", &w, &v, &a, &pf, &t), 0);
    assert_true(w == 50 && isnan(v));
    /* any other negative is a reading, kept as read for meter.c to judge
     * (the WT310E field bug: -27.1 W, -3.199 A) */
    assert_int_equal(
        tb_ptd_parse_rl_sample("Time,11-30-2026 16:00:01.000,Watts,-27.100000,Volts,230,Amps,-3.199000,PF,0.95", &w, &v,
                               &a, &pf, &t),
        0);
    assert_true(w == -27.1 && a == -3.199 && v == 230);
    /* garbage */
    assert_int_equal(tb_ptd_parse_rl_sample("T\x7fime,,,@@garbage4", &w, &v, &a, &pf, &t), TB_SAMPLE_INVALID);
    assert_int_equal(tb_ptd_parse_rl_sample("Time,11-30-2026 16:00:01.000,Volts,230", &w, &v, &a, &pf, &t),
                     TB_SAMPLE_INVALID); /* no watts at all */
    assert_int_equal(tb_ptd_parse_rl_sample("Time,11-30-2026 16:00:01.000,Watts,NaN", &w, &v, &a, &pf, &t),
                     TB_SAMPLE_INVALID);
    assert_int_equal(tb_ptd_parse_rl_sample("", &w, &v, &a, &pf, &t), TB_SAMPLE_INVALID);
}

static void test_uri_errors(void **state) {
    tb_meter *m = (tb_meter *)0x1;
    char err[TB_ERR_LEN];
    (void)state;
    assert_int_equal(tb_meter_open("ptd://127.0.0.1:1?intervl=1s", &m, err), -1);
    assert_non_null(strstr(err, "'intervl': unknown parameter"));
    assert_int_equal(tb_meter_open("ptd://127.0.0.1:1?interval=0", &m, err), -1);
    assert_non_null(strstr(err, "interval"));
    assert_int_equal(tb_meter_open("ptd://127.0.0.1:1?volts=abc", &m, err), -1);
    assert_non_null(strstr(err, "volts"));
    /* a closed port: the URI is fine, the meter does not answer (exit 3, not 2) */
    assert_int_equal(tb_meter_open("ptd://127.0.0.1:1", &m, err), TB_METER_EUNREACH);
    assert_non_null(strstr(err, "connect 127.0.0.1:1"));
    assert_null(m);
}

/* A multi-channel RL line: the total first, then "ChN,Watts,..." per channel. */
static void test_rl_channels(void **state) {
    const char *line = "Time,12-03-2026 14:00:00.000,Watts,200.000000,Volts,230.000000,Amps,0.870000,PF,1.000000,"
                       "Ch1,Watts,120.500000,Volts,230.100000,Amps,0.520000,PF,0.990000,"
                       "Ch2,Watts,-1.000000,Volts,229.900000,Amps,0.350000,PF,0.980000,"
                       "Ch3,Watts,79.500000,Volts,-2.000000,Amps,0.350000,PF,0.980000";
    double w, v, a, pf;
    int64_t wall;
    int want[3] = {1, 3, 2}, two[2] = {1, 4};
    tb_channel_sample ch[3];
    (void)state;
    /* The total stops at the first channel group: its W is not channel 2's or 3's. */
    assert_int_equal(tb_ptd_parse_rl_sample(line, &w, &v, &a, &pf, &wall), 0);
    assert_true(w == 200.0 && v == 230.0 && pf == 1.0);
    assert_int_equal(tb_ptd_parse_rl_channels(line, want, 3, ch), 3);
    assert_int_equal(ch[0].channel, 1);
    assert_int_equal(ch[0].flags, 0);
    assert_true(ch[0].watts == 120.5 && ch[0].volts == 230.1 && ch[0].amps == 0.52 && ch[0].pf == 0.99);
    assert_int_equal(ch[1].channel, 3);
    assert_int_equal(ch[1].flags, 0);
    assert_true(ch[1].watts == 79.5 && isnan(ch[1].volts)); /* -2 on V: unknown, W stands */
    assert_int_equal(ch[2].channel, 2);
    assert_int_equal(ch[2].flags, TB_SAMPLE_INVALID); /* W -1: PTD's error */
    /* A channel the line does not carry is INVALID. */
    assert_int_equal(tb_ptd_parse_rl_channels(line, two, 2, ch), 1);
    assert_int_equal(ch[1].flags, TB_SAMPLE_INVALID);
    assert_true(isnan(ch[1].watts));
    assert_int_equal(tb_ptd_parse_rl_channels("garbage", two, 1, ch), 0);
    assert_int_equal(ch[0].flags, TB_SAMPLE_INVALID);
}

static void test_channels_param(void **state) {
    char err[TB_ERR_LEN];
    int ch[TB_METER_MAX_CHANNELS], n;
    (void)state;
    assert_int_equal(tb_meter_uri_channels("channels", "1,2", ch, TB_METER_MAX_CHANNELS, &n, err), 0);
    assert_int_equal(n, 2);
    assert_true(ch[0] == 1 && ch[1] == 2);
    assert_int_equal(tb_meter_uri_channels("channels", "3", ch, TB_METER_MAX_CHANNELS, &n, err), 0);
    assert_true(n == 1 && ch[0] == 3);
    static const char *const bad[] = {"", "0", "1,", ",1", "1,,2", "12", "a", "1,1", "1,2,3,4", "1;2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(tb_meter_uri_channels("channels", bad[i], ch, TB_METER_MAX_CHANNELS, &n, err), -1);
        assert_non_null(strstr(err, "channels: '"));
    }
    assert_int_equal(tb_meter_model_channels("WT310E"), 1);
    assert_int_equal(tb_meter_model_channels("WT332E"), 2);
    assert_int_equal(tb_meter_model_channels("wt333e"), 3);
    assert_int_equal(tb_meter_model_channels("WT500"), 3);
    assert_int_equal(tb_meter_model_channels("PZ4000"), 0);
}

/* The meter's sample is its channels' sum; one bad channel makes it bad. */
static void test_sum_channels(void **state) {
    tb_meter_info info;
    tb_sample s;
    (void)state;
    memset(&info, 0, sizeof info);
    info.nchannels = 2;
    info.channel[0] = 1, info.channel[1] = 2;
    memset(&s, 0, sizeof s);
    s.nch = 2;
    s.ch[0] = (tb_channel_sample){1, 120.0, 230.0, 0.53, 0.984, 0, 0};
    s.ch[1] = (tb_channel_sample){2, 80.0, NAN, NAN, NAN, TB_SAMPLE_AUTORANGE, 0};
    tb_meter_sum_channels(&info, &s);
    assert_true(s.watts == 200.0 && isnan(s.volts) && isnan(s.amps) && isnan(s.pf));
    assert_int_equal(s.flags, TB_SAMPLE_AUTORANGE);
    assert_int_equal(s.reason, TB_REASON_NONE);
    /* Channel 2 reads the field bug's -27.1 W: implausible, and so is the sum. */
    s.flags = 0;
    s.ch[1] = (tb_channel_sample){2, -27.1, 230.0, -3.199, 1.0, 0, 0};
    tb_meter_sum_channels(&info, &s);
    assert_int_equal(s.ch[0].flags, 0);
    assert_int_equal(s.ch[1].flags, TB_SAMPLE_IMPLAUSIBLE);
    assert_int_equal(s.ch[1].reason, TB_REASON_NEGATIVE);
    assert_true(s.flags & TB_SAMPLE_BAD);
    assert_int_equal(s.reason, TB_REASON_NEGATIVE);
    /* A channel the driver flagged keeps its own reason. */
    s.flags = 0;
    s.reason = 0;
    s.ch[1] = (tb_channel_sample){2, NAN, NAN, NAN, NAN, TB_SAMPLE_INVALID, 0};
    tb_meter_sum_channels(&info, &s);
    assert_int_equal(s.ch[1].reason, TB_REASON_INVALID);
    assert_true(s.flags & TB_SAMPLE_INVALID);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_identify),
        cmocka_unit_test(test_ranges_watts_uncertainty),
        cmocka_unit_test(test_sample_uncertainty),
        cmocka_unit_test(test_rl),
        cmocka_unit_test(test_uri_errors),
        cmocka_unit_test(test_rl_channels),
        cmocka_unit_test(test_channels_param),
        cmocka_unit_test(test_sum_channels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
