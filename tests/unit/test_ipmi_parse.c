/*
 * test_ipmi_parse.c: unit tests of the IPMI parsers (ipmi.h) on recorded
 * tool output and reply bytes: ipmitool's DCMI power reading in its older
 * one-label-per-line layout and in the newer one where the timestamp and the
 * sampling period share a line, FreeIPMI's ipmi-dcmi layout, "deactivated",
 * raw DCMI Get Power Reading responses (active, inactive, completion codes,
 * short), ipmitool sensor readings, and the 0 W / 65535 W rejections; a
 * sub-second window (0 s in the text, ms in `ipmitool raw`'s hex), flat
 * readings (min = max = average) and the "not averaged" verdict.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "powermeter/ipmi.h"
#include "powermeter/meter.h"

/* ipmitool 1.8.18-style: every label on its own line. */
static const char dcmi_old[] = "\n"
                               "    Instantaneous power reading:                   215 Watts\n"
                               "    Minimum during sampling period:                 98 Watts\n"
                               "    Maximum during sampling period:                342 Watts\n"
                               "    Average power reading over sample period:      201 Watts\n"
                               "    IPMI timestamp:                           Mon Nov 30 16:00:00 2026\n"
                               "    Sampling period:                          00000001 Seconds.\n"
                               "    Power reading state is:                   activated\n\n";

/* Newer ipmitool: the timestamp line runs into the sampling period. */
static const char dcmi_new[] = "\n"
                               "    Instantaneous power reading:              180 Watts\n"
                               "    Minimum during sampling period:           170 Watts\n"
                               "    Maximum during sampling period:           190 Watts\n"
                               "    Average power reading over sample period: 181 Watts\n"
                               "    IPMI timestamp:                           11/30/2026 16:00:00 UTC    Sampling "
                               "period:                          00000005 Seconds.\n"
                               "    Power reading state is:                   deactivated\n";

/* FreeIPMI ipmi-dcmi --get-system-power-statistics */
static const char dcmi_freeipmi[] = "Current Power                        : 250 Watts\n"
                                    "Minimum Power over sampling duration : 240 watts\n"
                                    "Maximum Power over sampling duration : 260 watts\n"
                                    "Average Power over sampling duration : 251 watts\n"
                                    "Time Stamp                           : 11/30/2026 - 16:00:00\n"
                                    "Statistics reporting time period     : 1000 milliseconds\n"
                                    "Power Measurement                    : Active\n";

static void test_dcmi_text(void **state) {
    tb_ipmi_dcmi d;
    (void)state;
    assert_int_equal(tb_ipmi_parse_dcmi_text(dcmi_old, &d), 0);
    assert_true(d.cur_w == 215 && d.min_w == 98 && d.max_w == 342 && d.avg_w == 201);
    assert_int_equal(d.period_ms, 1000);
    assert_int_equal(d.active, 1);

    assert_int_equal(tb_ipmi_parse_dcmi_text(dcmi_new, &d), 0);
    assert_true(d.cur_w == 180 && d.avg_w == 181);
    assert_int_equal(d.period_ms, 5000);
    assert_int_equal(d.active, 0);

    assert_int_equal(tb_ipmi_parse_dcmi_text(dcmi_freeipmi, &d), 0);
    assert_true(d.cur_w == 250);
    assert_int_equal(d.period_ms, 1000);
    assert_int_equal(d.active, 1);

    assert_int_equal(tb_ipmi_parse_dcmi_text("    DCMI request failed because: Invalid command (c1)\n", &d), -1);
    assert_int_equal(tb_ipmi_parse_dcmi_text("", &d), -1);
    assert_int_equal(tb_ipmi_parse_dcmi_text("Instantaneous power reading: n/a\n", &d), -1);
}

static void test_dcmi_raw(void **state) {
    tb_ipmi_dcmi d;
    /* cc, DC, cur=215, min=98, max=342, avg=201, ts, period=1000 ms, state=0x40 */
    const uint8_t ok[] = {0x00, 0xDC, 0xD7, 0x00, 0x62, 0x00, 0x56, 0x01, 0xC9, 0x00,
                          0x10, 0x20, 0x30, 0x40, 0xE8, 0x03, 0x00, 0x00, 0x40};
    uint8_t off[sizeof ok];
    const uint8_t c1[] = {0xC1};
    const uint8_t x89[] = {0x89, 0xDC};
    const uint8_t wrong_ext[] = {0x00, 0xDD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    (void)state;
    assert_int_equal(tb_ipmi_parse_dcmi_raw(ok, sizeof ok, &d), 0);
    assert_true(d.cur_w == 215 && d.min_w == 98 && d.max_w == 342 && d.avg_w == 201);
    assert_int_equal(d.period_ms, 1000);
    assert_int_equal(d.active, 1);
    memcpy(off, ok, sizeof ok);
    off[18] = 0x00;
    assert_int_equal(tb_ipmi_parse_dcmi_raw(off, sizeof off, &d), 0);
    assert_int_equal(d.active, 0);
    assert_int_equal(tb_ipmi_judge(d.cur_w, d.active), TB_SAMPLE_INVALID);
    assert_int_equal(tb_ipmi_parse_dcmi_raw(c1, sizeof c1, &d), 0xC1);
    assert_int_equal(tb_ipmi_parse_dcmi_raw(x89, sizeof x89, &d), 0x89);
    assert_int_equal(tb_ipmi_parse_dcmi_raw(wrong_ext, sizeof wrong_ext, &d), -1);
    assert_int_equal(tb_ipmi_parse_dcmi_raw(ok, 10, &d), -1); /* cut short */
    assert_int_equal(tb_ipmi_parse_dcmi_raw(ok, 0, &d), -1);
}

/* A BMC with a 250 ms window whose min, max and average equal the current
 * reading: ipmitool's text rounds the window down to 0 s; `ipmitool raw 0x2c
 * 0x02 0xdc 0x01 0x00 0x00` prints the reply without its completion code, 16
 * bytes a line, and carries the window in ms. */
static const char dcmi_subsecond[] = "\n"
                                     "    Instantaneous power reading:                   215 Watts\n"
                                     "    Minimum during sampling period:                215 Watts\n"
                                     "    Maximum during sampling period:                215 Watts\n"
                                     "    Average power reading over sample period:      215 Watts\n"
                                     "    IPMI timestamp:                           Tue Dec  1 19:00:00 2026\n"
                                     "    Sampling period:                          00000000 Seconds.\n"
                                     "    Power reading state is:                   activated\n\n";
static const char raw_subsecond[] = " dc d7 00 d7 00 d7 00 d7 00 10 20 30 40 fa 00 00\n 00 40\n";

static void test_subsecond_window(void **state) {
    tb_ipmi_dcmi d;
    uint8_t b[32];
    (void)state;
    assert_int_equal(tb_ipmi_parse_dcmi_text(dcmi_subsecond, &d), 0);
    assert_int_equal(d.period_ms, 0); /* what the text can say: under a second */
    assert_true(tb_ipmi_dcmi_flat(&d));
    assert_int_equal(tb_ipmi_parse_raw_hex(raw_subsecond, b + 1, sizeof b - 1), 18);
    b[0] = 0;
    assert_int_equal(tb_ipmi_parse_dcmi_raw(b, 19, &d), 0);
    assert_int_equal(d.period_ms, 250);
    assert_true(d.cur_w == 215 && d.min_w == 215 && d.max_w == 215 && d.avg_w == 215);
    assert_int_equal(d.active, 1);
    assert_true(tb_ipmi_dcmi_flat(&d));
    /* hex that is not ipmitool's: refused, never half-read */
    assert_int_equal(tb_ipmi_parse_raw_hex(" dc zz\n", b, sizeof b), -1);
    assert_int_equal(tb_ipmi_parse_raw_hex(" dc 123\n", b, sizeof b), -1);
    assert_int_equal(tb_ipmi_parse_raw_hex(" dc 0x12\n", b, sizeof b), -1);
    assert_int_equal(tb_ipmi_parse_raw_hex(raw_subsecond, b, 17), -1); /* more than fits */
    assert_int_equal(tb_ipmi_parse_raw_hex("Unable to send RAW command (rsp=0xc1): Invalid command\n", b, sizeof b),
                     -1);
    assert_int_equal(tb_ipmi_parse_raw_hex(" \n", b, sizeof b), 0);
    assert_int_equal(tb_ipmi_parse_raw_hex("A", b, sizeof b), 1);
    assert_int_equal(b[0], 0x0A);
}

static void test_not_averaged(void **state) {
    tb_ipmi_dcmi d;
    (void)state;
    /* an averaged reading: min < max */
    assert_int_equal(tb_ipmi_parse_dcmi_text(dcmi_old, &d), 0);
    assert_false(tb_ipmi_dcmi_flat(&d));
    d.min_w = d.max_w = 201; /* min = max, average the same: flat */
    assert_true(tb_ipmi_dcmi_flat(&d));
    d.avg_w = 200; /* min = max but a different average: not flat */
    assert_false(tb_ipmi_dcmi_flat(&d));
    d.avg_w = NAN; /* unknown: not flat */
    assert_false(tb_ipmi_dcmi_flat(&d));
    /* the verdict: at least TB_IPMI_NOT_AVERAGED_MIN valid readings, all flat */
    assert_int_equal(TB_IPMI_NOT_AVERAGED_MIN, 10);
    assert_true(tb_ipmi_not_averaged(10, 10));
    assert_true(tb_ipmi_not_averaged(500, 500));
    assert_false(tb_ipmi_not_averaged(9, 9));  /* too few to tell */
    assert_false(tb_ipmi_not_averaged(9, 10)); /* one averaged reading */
    assert_false(tb_ipmi_not_averaged(499, 500));
    assert_false(tb_ipmi_not_averaged(0, 0));
    assert_false(tb_ipmi_not_averaged(0, 100));
}

static void test_sensor_text(void **state) {
    double w = 0;
    (void)state;
    assert_int_equal(tb_ipmi_parse_sensor_text("Pwr Consumption  | 120\n", "Pwr Consumption", &w), 0);
    assert_true(w == 120);
    assert_int_equal(tb_ipmi_parse_sensor_text("Pwr Consumption,126\n", "Pwr Consumption", &w), 0); /* -c */
    assert_true(w == 126);
    assert_int_equal(tb_ipmi_parse_sensor_text("Inlet Temp | 21\nPwr Consumption | 98.5\n", "Pwr Consumption", &w), 0);
    assert_true(w == 98.5);
    assert_int_equal(tb_ipmi_parse_sensor_text("Pwr Consumption  | na\n", "Pwr Consumption", &w), -1);
    assert_int_equal(tb_ipmi_parse_sensor_text("Pwr Consumption 2 | 50\n", "Pwr Consumption", &w), -1);
    assert_int_equal(tb_ipmi_parse_sensor_text("Unable to find sensor 'x'\n", "Pwr Consumption", &w), -1);
}

static void test_judge(void **state) {
    (void)state;
    assert_int_equal(tb_ipmi_judge(215, 1), 0);
    assert_int_equal(tb_ipmi_judge(215, -1), 0); /* a sensor: no state */
    assert_int_equal(tb_ipmi_judge(0, 1), TB_SAMPLE_INVALID);
    assert_int_equal(tb_ipmi_judge(65535, 1), TB_SAMPLE_INVALID);
    assert_int_equal(tb_ipmi_judge(NAN, 1), TB_SAMPLE_INVALID);
    assert_int_equal(tb_ipmi_judge(215, 0), TB_SAMPLE_INVALID);
}

static void test_uri_errors(void **state) {
    tb_meter *m = (tb_meter *)0x1;
    char err[TB_ERR_LEN];
    (void)state;
    assert_int_equal(tb_meter_open("ipmi://bmc.example", &m, err), -1);
    assert_non_null(strstr(err, "USER:PASS@"));
    assert_int_equal(tb_meter_open("ipmi://admin:secret@127.0.0.1?method=sdr", &m, err), -1);
    assert_non_null(strstr(err, "method: 'sdr'"));
    assert_null(strstr(err, "secret"));
    assert_int_equal(tb_meter_open("ipmi://admin:secret@127.0.0.1?method=sensor", &m, err), -1);
    assert_non_null(strstr(err, "sensor=NAME"));
    assert_int_equal(tb_meter_open("ipmi://admin:secret@127.0.0.1?sensor=Pwr", &m, err), -1);
    assert_non_null(strstr(err, "only applies to method=sensor"));
    assert_int_equal(tb_meter_open("ipmi://admin:secret@127.0.0.1?cipher=abc", &m, err), -1);
    assert_non_null(strstr(err, "cipher"));
    assert_null(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dcmi_text),    cmocka_unit_test(test_dcmi_raw),   cmocka_unit_test(test_sensor_text),
        cmocka_unit_test(test_judge),        cmocka_unit_test(test_uri_errors), cmocka_unit_test(test_subsecond_window),
        cmocka_unit_test(test_not_averaged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
