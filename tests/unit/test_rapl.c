/*
 * test_rapl.c: unit tests of the RAPL driver on a fake powercap tree
 * (TB_RAPL_ROOT): counter wraparound told from a reset (a real wrap is a
 * valid sample with the right watts; a reset is INVALID, and the next
 * interval counts from the new value), the first sample right after open
 * (valid, not "too soon"), which zones are summed (package-N and
 * dram; never core/uncore, which are inside the package; never the
 * intel-rapl-mmio duplicate; psys only alone), and the errors. Expected
 * watts are bounded by the test's own clock readings around open and sample,
 * so no timing threshold is involved.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "powermeter/meter.h"
#include "powermeter/rapl.h"

#define MAXR 262143328850ull /* a real max_energy_range_uj (Skylake-SP) */

static char root[64];

static void put_file(const char *zone, const char *file, const char *text) {
    char p[256];
    FILE *f;
    snprintf(p, sizeof p, "%s/%s", root, zone);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/%s/%s", root, zone, file);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void set_energy(const char *zone, unsigned long long uj) {
    char b[32];
    snprintf(b, sizeof b, "%llu\n", uj);
    put_file(zone, "energy_uj", b);
}

static void make_zone(const char *zone, const char *name, unsigned long long uj) {
    char b[32];
    put_file(zone, "name", name);
    snprintf(b, sizeof b, "%llu\n", MAXR);
    put_file(zone, "max_energy_range_uj", b);
    set_energy(zone, uj);
}

/* A 2-socket server with DRAM zones, a client-style MMIO mirror and psys. */
static int setup_tree(void **state) {
    (void)state;
    snprintf(root, sizeof root, "/tmp/tb_test_rapl_XXXXXX");
    if (!mkdtemp(root)) return -1;
    make_zone("intel-rapl:0", "package-0\n", 1000000);
    make_zone("intel-rapl:0:0", "core\n", 500000);
    make_zone("intel-rapl:0:1", "uncore\n", 100000);
    make_zone("intel-rapl:0:2", "dram\n", 200000);
    make_zone("intel-rapl:1", "package-1\n", MAXR - 1000000); /* about to wrap */
    make_zone("intel-rapl:1:0", "dram\n", 300000);
    make_zone("intel-rapl-mmio:0", "package-0\n", 1000000);
    make_zone("intel-rapl:2", "psys\n", 7000000);
    setenv(TB_RAPL_ROOT_ENV, root, 1);
    return 0;
}

static int teardown_tree(void **state) {
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) return -1;
    unsetenv(TB_RAPL_ROOT_ENV);
    return 0;
}

static void test_interval(void **state) {
    uint64_t e = 99;
    (void)state;
    /* forward counts */
    assert_int_equal(tb_rapl_interval(100, 250, 1000, 1000000, TB_RAPL_ZONE_MAX_W, &e), 0);
    assert_true(e == 150);
    assert_int_equal(tb_rapl_interval(5, 5, 1000, 1000000, TB_RAPL_ZONE_MAX_W, &e), 0);
    assert_true(e == 0);
    /* a wrap: prev near the top, cur near 0, energy within the zone's ceiling */
    assert_int_equal(tb_rapl_interval(900, 100, 1000, 1000000, TB_RAPL_ZONE_MAX_W, &e), 1);
    assert_true(e == 200);
    assert_int_equal(tb_rapl_interval(MAXR - 5, 7, MAXR, 1000000, TB_RAPL_ZONE_MAX_W, &e), 1);
    assert_true(e == 12);
    /* 1.9 kJ in 1 s wraps (1.9 kW); 2.1 kJ in 1 s is more than a zone draws: a reset */
    assert_int_equal(tb_rapl_interval(MAXR - 1900000000ull, 0, MAXR, 1000000, 2000.0, &e), 1);
    assert_true(e == 1900000000ull);
    assert_int_equal(tb_rapl_interval(MAXR - 2100000000ull, 0, MAXR, 1000000, 2000.0, &e), -1);
    assert_true(e == 0);
    /* a reset halfway up the range: not a 131 kW wrap */
    assert_int_equal(tb_rapl_interval(MAXR / 2, 1000, MAXR, 1000000, TB_RAPL_ZONE_MAX_W, &e), -1);
    /* no range known: no guess; a counter beyond its range: a bad read */
    assert_int_equal(tb_rapl_interval(900, 100, 0, 1000000, TB_RAPL_ZONE_MAX_W, &e), -1);
    assert_int_equal(tb_rapl_interval(2000, 100, 1000, 1000000, TB_RAPL_ZONE_MAX_W, &e), -1);
    assert_int_equal(tb_rapl_interval(100, 2000, 1000, 1000000, TB_RAPL_ZONE_MAX_W, &e), -1);
    /* a forward jump beyond the ceiling (3 kJ in 1 s) is no energy either */
    assert_int_equal(tb_rapl_interval(0, 3000000000ull, MAXR, 1000000, 2000.0, &e), -1);
}

static void sleep_ms(long ms) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_zones_and_watts(void **state) {
    tb_meter *m = NULL;
    char err[TB_ERR_LEN];
    tb_sample s;
    const tb_meter_info *info;
    uint64_t t0, t1, t2, t3;
    const double e_uj = 5e6 + 1e6 + 3e6 + 0.5e6; /* pkg0 + dram0 + pkg1 (wrapped) + dram1 */
    (void)state;

    t0 = tb_now_us();
    assert_int_equal(tb_meter_open("rapl:", &m, err), 0);
    t1 = tb_now_us();
    info = tb_meter_get_info(m);
    /* package-0, its dram, package-1, its dram; no core/uncore/mmio/psys */
    assert_non_null(strstr(info->idn, ": package-0 dram package-1 dram"));
    assert_null(strstr(info->idn, "core"));
    assert_null(strstr(info->idn, "psys"));
    assert_int_equal(info->estimated, 0);

    set_energy("intel-rapl:0", 1000000 + 5000000);
    set_energy("intel-rapl:0:0", 500000 + 3000000); /* inside package-0: not added */
    set_energy("intel-rapl:0:1", 100000 + 1000000); /* likewise */
    set_energy("intel-rapl:0:2", 200000 + 1000000);
    set_energy("intel-rapl:1", 2000000); /* wrapped: (MAXR - prev) + 2e6 = 3e6 */
    set_energy("intel-rapl:1:0", 300000 + 500000);
    set_energy("intel-rapl-mmio:0", 1000000 + 5000000); /* the mirror: not added */
    set_energy("intel-rapl:2", 7000000 + 20000000);     /* psys: not with package */
    sleep_ms(50);
    t2 = tb_now_us();
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    t3 = tb_now_us();
    assert_int_equal(s.flags, 0);
    /* The driver's interval lies within [t2 - t1, t3 - t0]. */
    if (!(s.watts >= e_uj / (double)(t3 - t0) && s.watts <= e_uj / (double)(t2 - t1)))
        fail_msg("watts %.3f outside [%.3f, %.3f]", s.watts, e_uj / (double)(t3 - t0), e_uj / (double)(t2 - t1));
    tb_meter_close(m);

    /* psys alone */
    assert_int_equal(tb_meter_open("rapl:?zones=psys", &m, err), 0);
    info = tb_meter_get_info(m);
    assert_non_null(strstr(info->idn, ": psys"));
    assert_null(strstr(info->idn, "package"));
    tb_meter_close(m);
    /* package only */
    assert_int_equal(tb_meter_open("rapl:?zones=package", &m, err), 0);
    assert_non_null(strstr(tb_meter_get_info(m)->idn, ": package-0 package-1"));
    /* a counter beyond its range is a bad read: INVALID, not a huge number */
    set_energy("intel-rapl:0", MAXR + 5);
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    assert_true(s.flags & TB_SAMPLE_INVALID);
    set_energy("intel-rapl:0", 6000000);
    tb_meter_close(m);
}

/* The driver's interval lies within [t2 - t1, t3 - t0]: t0/t1 around the
 * previous read (open or sample), t2/t3 around this sample. */
static void check_watts(const char *what, double e_uj, double w, uint64_t t0, uint64_t t1, uint64_t t2, uint64_t t3) {
    double lo = e_uj / (double)(t3 - t0), hi = e_uj / (double)(t2 - t1);
    if (!(w >= lo && w <= hi)) fail_msg("%s: watts %.3f outside [%.3f, %.3f]", what, w, lo, hi);
}

/* The first sample of `meter probe rapl:` comes at once after open: it waits
 * out the counter's minimum interval instead of being INVALID. */
static void test_first_sample(void **state) {
    tb_meter *m = NULL;
    char err[TB_ERR_LEN];
    tb_sample s;
    uint64_t t0, t1, t3;
    (void)state;
    set_energy("intel-rapl:0", 1000000);
    set_energy("intel-rapl:1", 1000000);
    t0 = tb_now_us();
    assert_int_equal(tb_meter_open("rapl:?zones=package", &m, err), 0);
    t1 = tb_now_us();
    assert_int_equal(tb_meter_sample(m, &s, err), 0); /* no sleep, as probe's first sample */
    t3 = tb_now_us();
    if (s.flags != 0) fail_msg("first sample %llu us after open: flags 0x%x", (unsigned long long)(t3 - t1), s.flags);
    assert_true(s.watts == 0.0); /* the counters did not move */
    assert_true(s.mono_us - t1 <= t3 - t1);
    assert_true(t3 - t0 >= TB_RAPL_MIN_INTERVAL_US);
    tb_meter_close(m);
}

/* A real wrap: prev near the top of the range, cur near 0; valid, right watts. */
static void test_real_wrap(void **state) {
    tb_meter *m = NULL;
    char err[TB_ERR_LEN];
    tb_sample s;
    uint64_t t0, t1, t2, t3;
    (void)state;
    set_energy("intel-rapl:0", MAXR - 2000000);
    set_energy("intel-rapl:1", 5000000);
    t0 = tb_now_us();
    assert_int_equal(tb_meter_open("rapl:?zones=package", &m, err), 0);
    t1 = tb_now_us();
    set_energy("intel-rapl:0", 1000000); /* wrapped: 2e6 + 1e6 */
    set_energy("intel-rapl:1", 6000000); /* 1e6 */
    sleep_ms(50);
    t2 = tb_now_us();
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    t3 = tb_now_us();
    assert_int_equal(s.flags, 0);
    check_watts("wrap", 4e6, s.watts, t0, t1, t2, t3); /* 4 J in ~50 ms: about 80 W */
    tb_meter_close(m);
}

/* A reset (the counter dropped from mid-range to near 0): that interval is
 * INVALID, not (MAXR/2) J in 50 ms = 2.6 MW marked ok; the next one counts
 * from the new value. */
static void test_reset(void **state) {
    tb_meter *m = NULL;
    char err[TB_ERR_LEN];
    tb_sample s;
    uint64_t t0, t1, t2, t3;
    (void)state;
    set_energy("intel-rapl:0", MAXR / 2);
    set_energy("intel-rapl:1", 1000000);
    assert_int_equal(tb_meter_open("rapl:?zones=package", &m, err), 0);
    set_energy("intel-rapl:0", 1000); /* reset */
    set_energy("intel-rapl:1", 1500000);
    sleep_ms(50);
    t0 = tb_now_us();
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    t1 = tb_now_us();
    if (!(s.flags & TB_SAMPLE_INVALID)) fail_msg("a reset gave flags 0x%x, %.1f W", s.flags, s.watts);
    assert_true(isnan(s.watts));
    /* the next interval counts from the value after the reset */
    set_energy("intel-rapl:0", 1000 + 3000000);
    set_energy("intel-rapl:1", 1500000 + 1000000);
    sleep_ms(50);
    t2 = tb_now_us();
    assert_int_equal(tb_meter_sample(m, &s, err), 0);
    t3 = tb_now_us();
    assert_int_equal(s.flags, 0);
    check_watts("after the reset", 4e6, s.watts, t0, t1, t2, t3);
    tb_meter_close(m);
}

static void test_errors(void **state) {
    tb_meter *m = (tb_meter *)0x1;
    char err[TB_ERR_LEN], p[128];
    (void)state;
    assert_int_equal(tb_meter_open("rapl:?zones=core", &m, err), -1);
    assert_non_null(strstr(err, "zones: 'core'"));
    assert_int_equal(tb_meter_open("rapl:?zone=psys", &m, err), -1);
    assert_non_null(strstr(err, "unknown parameter"));
    assert_int_equal(tb_meter_open("rapl:x", &m, err), -1);
    /* A valid URI on a host without the zones: unreachable (the CLI exits 3), not a usage error. */
    setenv(TB_RAPL_ROOT_ENV, "/nonexistent/powercap", 1);
    assert_int_equal(tb_meter_open("rapl:", &m, err), TB_METER_EUNREACH);
    assert_non_null(strstr(err, "no RAPL powercap interface"));
    /* A zone whose counter is gone: the error names the file. */
    setenv(TB_RAPL_ROOT_ENV, root, 1);
    snprintf(p, sizeof p, "%s/intel-rapl:1/energy_uj", root);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(tb_meter_open("rapl:", &m, err), TB_METER_EUNREACH);
    assert_non_null(strstr(err, "intel-rapl:1/energy_uj"));
    assert_null(m);
    set_energy("intel-rapl:1", 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interval),  cmocka_unit_test(test_zones_and_watts), cmocka_unit_test(test_first_sample),
        cmocka_unit_test(test_real_wrap), cmocka_unit_test(test_reset),           cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup_tree, teardown_tree);
}
