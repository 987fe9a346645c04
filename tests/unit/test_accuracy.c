/*
 * test_accuracy.c: unit tests of accuracy.h: the uncertainty of a Yokogawa
 * sample against figures computed by hand from the published accuracy
 * table (powermeter/data/yokogawa_accuracy.txt), the table's model lookup,
 * SPEC's accepted list, and calibrated=YYYY-MM-DD (bad dates, future dates,
 * stale dates; through tb_meter_open as well).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "powermeter/accuracy.h"
#include "powermeter/meter.h"

static void close_to(double got, double want) {
    if (!(fabs(got - want) < 1e-9)) fail_msg("got %.12g, want %.12g", got, want);
}

/*
 * WT310 (IM WT310-02EN 7.3.2, 45-66 Hz): +-(0.1% of reading + 0.1% of range).
 * A 20 A range measuring 0.3 A at 230 V, PF 1: W = 69 W, on the 300 V range
 * the power range is 300 V x 20 A = 6000 W, so
 *   0.1% x 69 W = 0.069 W, 0.1% x 6000 W = 6 W, (0.069 + 6) / 69 = 8.7957% > 1%.
 * The same 69 W on the 300 V x 0.5 A = 150 W range:
 *   (0.069 + 0.15) / 69 = 0.31739% <= 1%.
 */
static void test_wt310_by_hand(void **state) {
    tb_yoko_accuracy a;
    (void)state;
    assert_int_equal(tb_yoko_accuracy_find("WT310", &a), 1);
    assert_string_equal(a.model, "WT310");
    close_to(a.reading_pct, 0.1);
    close_to(a.range_pct, 0.1);
    close_to(tb_yoko_uncertainty_pct(&a, 69, 300, 20, 3, 1), (0.069 + 6.0) / 69 * 100);
    close_to(tb_yoko_uncertainty_pct(&a, 69, 300, 20, 3, 1), 8.795652173913);
    assert_true(tb_yoko_uncertainty_pct(&a, 69, 300, 20, 3, 1) > 1.0);
    close_to(tb_yoko_uncertainty_pct(&a, 69, 300, 0.5, 3, 1), 0.317391304348);
    assert_true(tb_yoko_uncertainty_pct(&a, 69, 300, 0.5, 3, 1) <= 1.0);
}

/*
 * WT310E (IM WT310E-02EN 7.3.2): +-(0.1% of reading + 0.05% of range); at
 * crest factor 6 the range error doubles. 150 W on 300 V x 1 A = 300 W:
 *   CF3: (0.15 + 0.15) / 150 = 0.2%;  CF6: (0.15 + 0.3) / 150 = 0.3%.
 * SIGMA of 3 elements on the same ranges: range term 3 x 0.15 W:
 *   (0.15 + 0.45) / 150 = 0.4%.
 */
static void test_wt310e_crest_and_sigma(void **state) {
    tb_yoko_accuracy a;
    (void)state;
    assert_int_equal(tb_yoko_accuracy_find("WT310E", &a), 1);
    assert_string_equal(a.model, "WT310E"); /* the longest prefix, not WT310 */
    close_to(tb_yoko_uncertainty_pct(&a, 150, 300, 1, 3, 1), 0.2);
    close_to(tb_yoko_uncertainty_pct(&a, 150, 300, 1, 6, 1), 0.3);
    close_to(tb_yoko_uncertainty_pct(&a, 150, 300, 1, 0, 1), 0.2); /* crest unknown: CF3 */
    close_to(tb_yoko_uncertainty_pct(&a, 150, 300, 1, 3, 3), 0.4);
    /* No uncertainty without a reading or a range. */
    assert_true(isnan(tb_yoko_uncertainty_pct(&a, 0, 300, 1, 3, 1)));
    assert_true(isnan(tb_yoko_uncertainty_pct(&a, -5, 300, 1, 3, 1)));
    assert_true(isnan(tb_yoko_uncertainty_pct(&a, NAN, 300, 1, 3, 1)));
    assert_true(isnan(tb_yoko_uncertainty_pct(&a, 150, 0, 1, 3, 1)));
    assert_true(isnan(tb_yoko_uncertainty_pct(&a, 150, 300, 0, 3, 1)));
}

/*
 * WT210 (IM 760401-01E 16-4): 0.1% of reading + 0.1% of range at 3 months,
 * plus half the reading error at 12 months: 0.15% + 0.1%. 42 W on 150 V x
 * 0.5 A = 75 W: (0.063 + 0.075) / 42 = 0.328571%.
 */
static void test_lookup(void **state) {
    tb_yoko_accuracy a;
    (void)state;
    assert_int_equal(tb_yoko_accuracy_find("WT210 (760401)", &a), 1);
    assert_string_equal(a.model, "WT210");
    close_to(tb_yoko_uncertainty_pct(&a, 42, 150, 0.5, 3, 1), 0.328571428571);
    assert_int_equal(tb_yoko_accuracy_find("wt310eh", &a), 1);
    assert_string_equal(a.model, "WT310EH");
    assert_int_equal(tb_yoko_accuracy_find("WT500", &a), 1);
    assert_non_null(strstr(a.source, "IM 760201-01E"));
    assert_int_equal(tb_yoko_accuracy_find("WT1800", &a), 0); /* not in the table: no uncertainty */
    assert_int_equal(tb_yoko_accuracy_find("", &a), 0);
    assert_int_equal(tb_yoko_accuracy_find(NULL, &a), 0);
}

static void test_spec_accepted(void **state) {
    (void)state;
    assert_int_equal(tb_meter_spec_accepted("PW3335"), 1);
    assert_int_equal(tb_meter_spec_accepted("pw3335"), 1);
    /* The list read is incomplete (it stops before the Yokogawa rows): unknown, never no. */
    assert_int_equal(tb_meter_spec_accepted("WT310"), -1);
    assert_int_equal(tb_meter_spec_accepted(""), -1);
    assert_string_equal(tb_meter_spec_accepted_text(1), "yes");
    assert_string_equal(tb_meter_spec_accepted_text(0), "no");
    assert_string_equal(tb_meter_spec_accepted_text(-1), "unknown");
}

static int64_t day_of(const char *d) {
    int64_t n = -1;
    char err[TB_ERR_LEN];
    assert_int_equal(tb_meter_parse_calibrated(d, INT64_MAX, &n, err), 0);
    return n;
}

static void test_calibrated_parse(void **state) {
    static const char *const bad[] = {
        "",           "yesterday", "2026-13-01", "2026-00-10",  "2026-02-29",  "2026-04-31", "2026-4-01",
        "2026/04/01", "20260401",  "1969-12-31", "2026-04-01x", " 2026-04-01", "+026-04-01", "2026-04-0a"};
    char err[TB_ERR_LEN];
    int64_t d, today = day_of("2026-12-03");
    (void)state;
    assert_int_equal(day_of("1970-01-01"), 0);
    assert_int_equal(day_of("2000-03-01"), 11017); /* 30 years of 365 + 7 leap days, + 31 + 29 */
    assert_int_equal(day_of("2024-02-29"), day_of("2024-03-01") - 1);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (tb_meter_parse_calibrated(bad[i], today, &d, err) != -1) fail_msg("'%s' taken as a date", bad[i]);
        assert_non_null(strstr(err, "not a date (expected YYYY-MM-DD"));
    }
    assert_int_equal(tb_meter_parse_calibrated("2026-12-03", today, &d, err), 0); /* today is fine */
    assert_int_equal(tb_meter_parse_calibrated("2026-12-04", today, &d, err), -1);
    assert_string_equal(err, "calibrated: '2026-12-04': a date in the future");
}

static void test_calibration_stale(void **state) {
    tb_meter_info info;
    char why[256];
    int64_t today = day_of("2026-12-03");
    (void)state;
    memset(&info, 0, sizeof info);
    snprintf(info.uri, sizeof info.uri, "wt310://10.0.0.9:10001");
    assert_int_equal(tb_meter_calibration_stale(&info, today, why, sizeof why), 0); /* not a lab meter */
    info.lab = 1;
    assert_int_equal(tb_meter_calibration_stale(&info, today, why, sizeof why), 1);
    assert_string_equal(why, "meter 'wt310://10.0.0.9:10001': no calibrated=YYYY-MM-DD given");
    snprintf(info.calibrated, sizeof info.calibrated, "2025-12-03"); /* 365 days: still fine */
    assert_int_equal(tb_meter_calibration_stale(&info, today, why, sizeof why), 0);
    snprintf(info.calibrated, sizeof info.calibrated, "2025-12-02"); /* 366 days */
    assert_int_equal(tb_meter_calibration_stale(&info, today, why, sizeof why), 1);
    assert_string_equal(why, "meter 'wt310://10.0.0.9:10001': calibrated 2025-12-02, 366 days ago (over 365)");
}

/* Through the front end: a bad date is an error at open, before any
 * connection (-1, not TB_METER_EUNREACH); meters that are not lab
 * instruments refuse the key. */
static void test_calibrated_open(void **state) {
    tb_meter *m = NULL;
    char err[TB_ERR_LEN];
    (void)state;
    assert_int_equal(tb_meter_open("wt310://127.0.0.1:1?calibrated=2999-01-01", &m, err), -1);
    assert_null(m);
    assert_string_equal(err, "meter 'wt310://127.0.0.1:1?calibrated=2999-01-01': calibrated: '2999-01-01': a date in "
                             "the future");
    assert_int_equal(tb_meter_open("ptd://127.0.0.1:1?calibrated=31.12.2025", &m, err), -1);
    assert_non_null(strstr(err, "calibrated: '31.12.2025': not a date"));
    assert_int_equal(tb_meter_open("wt210://127.0.0.1:1?calibrated=2025-01-01&calibrated=2025-01-02", &m, err), -1);
    assert_non_null(strstr(err, "given twice"));
    assert_int_equal(tb_meter_open("estimate:?calibrated=2025-01-01", &m, err), -1);
    assert_non_null(strstr(err, "'calibrated': unknown parameter"));
    /* A good date goes on to the connection (refused here). */
    assert_int_equal(tb_meter_open("wt310://127.0.0.1:1?calibrated=2025-01-01", &m, err), TB_METER_EUNREACH);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wt310_by_hand),    cmocka_unit_test(test_wt310e_crest_and_sigma),
        cmocka_unit_test(test_lookup),           cmocka_unit_test(test_spec_accepted),
        cmocka_unit_test(test_calibrated_parse), cmocka_unit_test(test_calibration_stale),
        cmocka_unit_test(test_calibrated_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
