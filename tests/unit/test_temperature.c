/*
 * test_temperature.c: unit tests of temperature.h: a file's text and a
 * PTDaemon temperature-mode sample line parsed, bad URIs refused at open
 * (unknown scheme, a missing file, a non-number, an implausible reading, a
 * bad hwmon spec), file: and hwmon:/PATH sources read (hwmon in
 * millidegrees), and the sampler's minimum, mean and maximum over a window
 * of readings it took from a file another thread rewrites.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "powermeter/meter.h"
#include "powermeter/temperature.h"

static void close_to(double got, double want) {
    if (!(fabs(got - want) < 1e-9)) fail_msg("got %.12g, want %.12g", got, want);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_parse_text(void **state) {
    char why[TB_ERR_LEN];
    double c = 0;
    (void)state;
    assert_int_equal(tb_temp_parse_text("23.5\n", 1.0, &c, why), 0);
    close_to(c, 23.5);
    assert_int_equal(tb_temp_parse_text("  18 \r\n", 1.0, &c, why), 0);
    close_to(c, 18.0);
    assert_int_equal(tb_temp_parse_text("24125\n", 0.001, &c, why), 0); /* hwmon: millidegrees */
    close_to(c, 24.125);
    assert_int_equal(tb_temp_parse_text("warm\n", 1.0, &c, why), -1);
    assert_non_null(strstr(why, "'warm' is not a number"));
    assert_int_equal(tb_temp_parse_text("23.5 C\n", 1.0, &c, why), -1);
    assert_int_equal(tb_temp_parse_text("\n", 1.0, &c, why), -1);
    assert_non_null(strstr(why, "empty"));
    assert_int_equal(tb_temp_parse_text("nan", 1.0, &c, why), -1);
    assert_int_equal(tb_temp_parse_text("24125", 1.0, &c, why), -1); /* millidegrees read as C */
    assert_non_null(strstr(why, "no inlet temperature"));
    assert_int_equal(tb_temp_parse_text("-41", 1.0, &c, why), -1);
}

static void test_parse_ptd(void **state) {
    double c = 0;
    (void)state;
    assert_int_equal(tb_temp_parse_ptd_sample("Time,11-26-2026 10:00:01.000,Temperature,23.50,Humidity,40.0", &c), 0);
    close_to(c, 23.5);
    assert_int_equal(tb_temp_parse_ptd_sample("Time,11-26-2026 10:00:01.000,Humidity,40.0,Temperature,18.25\r", &c), 0);
    close_to(c, 18.25);
    /* PTD's error value, a power line, garbage, a field that only ends in the name */
    assert_int_equal(tb_temp_parse_ptd_sample("Time,x,Temperature,-1.000000,Humidity,-1.0", &c), -1);
    assert_int_equal(tb_temp_parse_ptd_sample("Time,x,Watts,100.0,Volts,230.0", &c), -1);
    assert_int_equal(tb_temp_parse_ptd_sample("Time,x,Temperature,abc", &c), -1);
    assert_int_equal(tb_temp_parse_ptd_sample("Time,x,AirTemperature,21.0", &c), -1);
}

static void test_open_bad(void **state) {
    char err[TB_ERR_LEN], path[64], nan_path[80];
    tb_temp_source *t = NULL;
    (void)state;
    assert_int_equal(tb_temp_open("thermo://x", &t, err), -1);
    assert_non_null(strstr(err, "temperature 'thermo://x': unknown scheme"));
    assert_null(t);
    assert_int_equal(tb_temp_open("file:/nonexistent/inlet", &t, err), -1);
    assert_non_null(strstr(err, "temperature 'file:/nonexistent/inlet': /nonexistent/inlet: No such file"));
    snprintf(path, sizeof path, "/tmp/test_temperature.%d", (int)getpid());
    snprintf(nan_path, sizeof nan_path, "file:%s", path);
    write_text(path, "hot\n");
    assert_int_equal(tb_temp_open(nan_path, &t, err), -1);
    assert_non_null(strstr(err, "'hot' is not a number"));
    assert_non_null(strstr(err, nan_path));
    unlink(path);
    assert_int_equal(tb_temp_open("hwmon:no-such-sensor-tb", &t, err), -1);
    assert_non_null(strstr(err, "hwmon:no-such-sensor-tb"));
    assert_int_equal(tb_temp_open("hwmon:coretemp/temperature", &t, err), -1);
    assert_non_null(strstr(err, "expected tempK"));
    assert_int_equal(tb_temp_open("ptd+temp://127.0.0.1:8889/x?y=1", &t, err), -1);
    assert_non_null(strstr(err, "takes no path"));
    /* a password in the URI is refused and never quoted back */
    assert_int_equal(tb_temp_open("ptd+temp://u:S3cr3tPW@127.0.0.1:1", &t, err), -1);
    assert_non_null(strstr(err, "a user or password has no place"));
    assert_null(strstr(err, "S3cr3tPW"));
    assert_int_equal(tb_temp_open("ptd+temp://127.0.0.1:1/?password=S3cr3tPW", &t, err), -1);
    assert_null(strstr(err, "S3cr3tPW"));
    /* a well-formed URI whose daemon does not answer */
    assert_int_equal(tb_temp_open("ptd+temp://127.0.0.1:1", &t, err), TB_METER_EUNREACH);
}

static void test_file_and_hwmon(void **state) {
    char err[TB_ERR_LEN], path[64], uri[80];
    tb_temp_source *t = NULL;
    double c = 0;
    (void)state;
    snprintf(path, sizeof path, "/tmp/test_temperature_ok.%d", (int)getpid());
    write_text(path, "22.0\n");
    snprintf(uri, sizeof uri, "file:%s", path);
    assert_int_equal(tb_temp_open(uri, &t, err), 0);
    assert_int_equal(tb_temp_read(t, &c, err), 0);
    close_to(c, 22.0);
    write_text(path, "19.5\n"); /* read again at each sample */
    assert_int_equal(tb_temp_read(t, &c, err), 0);
    close_to(c, 19.5);
    unlink(path);
    assert_int_equal(tb_temp_read(t, &c, err), -1);
    assert_non_null(strstr(err, uri));
    tb_temp_close(t);
    write_text(path, "21500\n");
    snprintf(uri, sizeof uri, "hwmon:%s", path);
    assert_int_equal(tb_temp_open(uri, &t, err), 0);
    assert_int_equal(tb_temp_read(t, &c, err), 0);
    close_to(c, 21.5);
    tb_temp_close(t);
    unlink(path);
}

/* A sampler at 50 ms over a file that reads 22, then 18, then 24 C. */
static void test_sampler_window(void **state) {
    char err[TB_ERR_LEN], path[64], uri[80];
    tb_temp_source *t = NULL;
    tb_temp_sampler *s = NULL;
    tb_temp_stats st;
    uint64_t t0, t1;
    const struct timespec d = {0, 260 * 1000000L};
    (void)state;
    snprintf(path, sizeof path, "/tmp/test_temperature_s.%d", (int)getpid());
    write_text(path, "22\n");
    snprintf(uri, sizeof uri, "file:%s", path);
    assert_int_equal(tb_temp_open(uri, &t, err), 0);
    assert_int_equal(tb_temp_sampler_start(&t, 1, 50000, &s, err), 0);
    nanosleep(&d, NULL);
    t0 = tb_now_us();
    nanosleep(&d, NULL);
    write_text(path, "18\n");
    nanosleep(&d, NULL);
    write_text(path, "24\n");
    nanosleep(&d, NULL);
    t1 = tb_now_us();
    tb_temp_sampler_window(s, t0, t1, &st);
    assert_true(st.n >= 10 && st.n <= 17);
    close_to(st.min_c, 18.0);
    close_to(st.max_c, 24.0);
    assert_true(st.mean_c > 18.0 && st.mean_c < 24.0);
    {
        /* the readings behind the window: the same count, in time order, inside it, summing to n x mean */
        tb_temp_reading *r = NULL;
        int n = tb_temp_sampler_readings(s, t0, t1, &r);
        double sum = 0;
        assert_int_equal(n, st.n);
        for (int i = 0; i < n; i++) {
            assert_true(r[i].mono_us >= t0 && r[i].mono_us < t1);
            assert_true(i == 0 || r[i].mono_us >= r[i - 1].mono_us);
            assert_int_equal(r[i].source, 0);
            assert_true(r[i].wall_us > 0);
            sum += r[i].celsius;
        }
        close_to(sum / n, st.mean_c);
        free(r);
        assert_int_equal(tb_temp_sampler_readings(s, t1 + 10000000, t1 + 20000000, &r), 0);
        assert_null(r);
    }
    tb_temp_sampler_window(s, t1 + 10000000, t1 + 20000000, &st); /* nothing read there yet */
    assert_int_equal(st.n, 0);
    assert_true(isnan(st.min_c) && isnan(st.mean_c) && isnan(st.max_c));
    assert_int_equal((int)tb_temp_sampler_failures(s), 0);
    tb_temp_sampler_stop(s);
    tb_temp_close(t);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_text),     cmocka_unit_test(test_parse_ptd),      cmocka_unit_test(test_open_bad),
        cmocka_unit_test(test_file_and_hwmon), cmocka_unit_test(test_sampler_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
