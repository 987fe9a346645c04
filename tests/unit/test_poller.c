/*
 * test_poller.c: unit tests of the meter poller (powermeter/poller.c) over
 * estimate: meters and small fake drivers. Timing checks are structural
 * (an absolute schedule can never produce more than elapsed/interval + 1
 * ticks) or generous lower bounds; no tight wall-clock thresholds.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "powermeter/poller.h"

static void sleep_us(uint64_t us) {
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static tb_meter *open_meter(const char *uri) {
    tb_meter *m = NULL;
    char err[TB_ERR_LEN] = "";
    if (tb_meter_open(uri, &m, err) != 0) fail_msg("open %s: %s", uri, err);
    return m;
}

/* Window is ordered by (time, meter), inside [t0, t1), and meters are in range. */
static void assert_window_sane(const tb_poll_sample *w, int n, uint64_t t0, uint64_t t1, int meters) {
    int i;
    for (i = 0; i < n; i++) {
        assert_true(w[i].s.mono_us >= t0);
        assert_true(w[i].s.mono_us < t1);
        assert_in_range(w[i].meter, 0, meters - 1);
        if (i > 0) {
            assert_true(w[i - 1].s.mono_us <= w[i].s.mono_us);
            if (w[i - 1].s.mono_us == w[i].s.mono_us) assert_true(w[i - 1].meter < w[i].meter);
        }
    }
}

/*
 * The worst lateness the poller reports is bounded by what its samples show:
 * tick k is due at or after t0 + k * interval (t0 taken before the start;
 * skipped ticks only push the due time later), and meter 0's sample of tick
 * k is stamped (tb_meter_sample) after the poller read its clock for that
 * tick; the lateness of a tick not yet in the window, or of the catch-up
 * after the last one, was measured before the figure was read (t_read).
 */
static void assert_max_jitter_bounded(tb_poller *p, uint64_t t0, uint64_t interval) {
    tb_poll_sample *w = NULL;
    uint64_t jitter = tb_poller_max_jitter_us(p), t_read = tb_now_us(), bound, k = 0;
    int n = tb_poller_window(p, t0, t_read + 1, &w);
    bound = 0;
    for (int i = 0; i < n; i++) {
        if (w[i].meter != 0) continue;
        if (w[i].s.mono_us > t0 + k * interval && w[i].s.mono_us - t0 - k * interval > bound)
            bound = w[i].s.mono_us - t0 - k * interval;
        k++;
    }
    if (t_read > t0 + k * interval && t_read - t0 - k * interval > bound) bound = t_read - t0 - k * interval;
    free(w);
    if (jitter > bound)
        fail_msg("max jitter %llu us, but %llu ticks' samples allow at most %llu us", (unsigned long long)jitter,
                 (unsigned long long)k, (unsigned long long)bound);
}

static void test_poller_two_estimate_meters(void **state) {
    const uint64_t interval = 25000;
    tb_meter *m[2];
    tb_poller *p = NULL;
    tb_poll_sample *w = NULL;
    char err[TB_ERR_LEN] = "";
    uint64_t t0, t1, elapsed, max_ticks, mid0, mid1;
    int n, i, per[2] = {0, 0}, nmid;
    double watts;
    (void)state;

    m[0] = open_meter("estimate:?idle=50&max=200");
    m[1] = open_meter("estimate:?idle=10&max=20");
    t0 = tb_now_us();
    assert_int_equal(tb_poller_start(m, 2, interval, &p, err), 0);
    sleep_us(500000);
    t1 = tb_now_us();
    elapsed = t1 - t0;

    n = tb_poller_window(p, t0, t1, &w);
    assert_window_sane(w, n, t0, t1, 2);
    for (i = 0; i < n; i++) {
        per[w[i].meter]++;
        /* the estimate stays inside its model's bounds, and says it is estimated */
        assert_true(w[i].s.flags & TB_SAMPLE_ESTIMATED);
        assert_false(w[i].s.flags & TB_SAMPLE_BAD);
        if (w[i].meter == 0)
            assert_true(w[i].s.watts >= 50 && w[i].s.watts <= 200);
        else
            assert_true(w[i].s.watts >= 10 && w[i].s.watts <= 20);
    }
    /* an absolute schedule never exceeds elapsed/interval + 1 ticks; the lower
     * bound is generous (a quarter of the ticks) for loaded CI hosts */
    max_ticks = elapsed / interval + 1;
    for (i = 0; i < 2; i++) {
        if ((uint64_t)per[i] > max_ticks || (uint64_t)per[i] < max_ticks / 4)
            fail_msg("meter %d: %d samples in %llu us at %llu us, want %llu/4..%llu", i, per[i],
                     (unsigned long long)elapsed, (unsigned long long)interval, (unsigned long long)max_ticks,
                     (unsigned long long)max_ticks);
    }
    /* every tick samples every meter */
    assert_true(abs(per[0] - per[1]) <= 1);

    /* a sub-window holds exactly the samples of the full window inside it */
    mid0 = t0 + elapsed / 4;
    mid1 = t0 + elapsed / 2;
    {
        tb_poll_sample *wm = NULL;
        int want = 0;
        nmid = tb_poller_window(p, mid0, mid1, &wm);
        assert_window_sane(wm, nmid, mid0, mid1, 2);
        for (i = 0; i < n; i++)
            if (w[i].s.mono_us >= mid0 && w[i].s.mono_us < mid1) want++;
        assert_int_equal(nmid, want);
        free(wm);
    }
    free(w);

    /* empty and reversed windows */
    w = (tb_poll_sample *)0x1;
    assert_int_equal(tb_poller_window(p, t0, t0, &w), 0);
    assert_null(w);
    assert_int_equal(tb_poller_window(p, t1, t0, &w), 0);
    assert_int_equal(tb_poller_window(p, 0, t0, &w), 0);

    watts = tb_poller_latest_watts(p);
    assert_true(watts >= 60.0 && watts <= 220.0);
    assert_max_jitter_bounded(p, t0, interval);

    tb_poller_stop(p);
    tb_meter_close(m[1]);
    tb_meter_close(m[0]);
}

static void test_poller_first_sample_immediate_and_stop_prompt(void **state) {
    tb_meter *m = open_meter("estimate:");
    tb_poller *p = NULL;
    tb_poll_sample *w = NULL;
    char err[TB_ERR_LEN] = "";
    uint64_t t0, t_stop;
    int n;
    (void)state;

    t0 = tb_now_us();
    assert_int_equal(tb_poller_start(&m, 1, 10000000, &p, err), 0); /* 10 s interval */
    sleep_us(100000);
    n = tb_poller_window(p, t0, tb_now_us(), &w);
    assert_int_equal(n, 1); /* the first tick is immediate, the second 10 s away */
    assert_int_equal(w[0].meter, 0);
    free(w);
    assert_true(isfinite(tb_poller_latest_watts(p)));

    /* stop must not wait out the 10 s interval */
    t_stop = tb_now_us();
    tb_poller_stop(p);
    t_stop = tb_now_us() - t_stop;
    if (t_stop > 5000000) fail_msg("tb_poller_stop took %llu us with a 10 s interval", (unsigned long long)t_stop);
    tb_meter_close(m);
}

/* ---- fake drivers ---- */

/* A meter that always fails: every tick records a MISSING sample. */
static int dead_open(const char *uri, void **self, char *err) {
    (void)uri;
    (void)err;
    *self = NULL;
    return 0;
}
static int dead_sample(void *self, tb_sample *s, char *err) {
    (void)self;
    (void)s;
    tb_seterr(err, "no reply in 500 ms");
    return -1;
}
static void noop_close(void *self) { (void)self; }
static const tb_meter_driver dead_driver = {"dead", dead_open, NULL, dead_sample, noop_close, NULL};

/* A meter whose 3rd sample stalls for 150 ms; returns 1000 W then, else 100 W. */
#define STALL_US 150000u
static int slow_calls;
static int slow_open(const char *uri, void **self, char *err) {
    (void)uri;
    (void)err;
    slow_calls = 0;
    *self = &slow_calls;
    return 0;
}
static int slow_sample(void *self, tb_sample *s, char *err) {
    int *calls = self;
    (void)err;
    if (++*calls == 3) {
        sleep_us(STALL_US);
        s->mono_us = tb_now_us();
        s->watts = 1000;
        return 0;
    }
    s->watts = 100;
    return 0;
}
static const tb_meter_driver slow_driver = {"slow", slow_open, NULL, slow_sample, noop_close, NULL};

static void test_poller_missing_meter_makes_latest_nan(void **state) {
    tb_meter *m[2];
    tb_poller *p = NULL;
    tb_poll_sample *w = NULL;
    char err[TB_ERR_LEN] = "";
    uint64_t t0;
    int n, i, dead = 0, live = 0;
    (void)state;

    m[0] = open_meter("estimate:");
    assert_int_equal(tb_meter_open_driver(&dead_driver, "dead:", &m[1], err), 0);
    t0 = tb_now_us();
    assert_int_equal(tb_poller_start(m, 2, 20000, &p, err), 0);
    sleep_us(200000);
    assert_true(isnan(tb_poller_latest_watts(p)));
    n = tb_poller_window(p, t0, tb_now_us(), &w);
    for (i = 0; i < n; i++) {
        if (w[i].meter != 1) {
            live++;
            assert_false(w[i].s.flags & TB_SAMPLE_BAD);
            continue;
        }
        dead++;
        assert_true(w[i].s.flags & TB_SAMPLE_MISSING);
        assert_true(isnan(w[i].s.watts));
    }
    assert_true(dead >= 1); /* the failing meter keeps its cadence with MISSING samples */
    /* one per tick, like the live meter (sampled first, so it may lead by one) */
    assert_in_range(live - dead, 0, 1);
    free(w);
    tb_poller_stop(p);
    tb_meter_close(m[1]);
    tb_meter_close(m[0]);
}

static void test_poller_skips_ticks_after_stall_instead_of_bursting(void **state) {
    const uint64_t interval = 20000;
    tb_meter *m = NULL;
    tb_poller *p = NULL;
    tb_poll_sample *w = NULL;
    char err[TB_ERR_LEN] = "";
    uint64_t t0, stall_end = 0;
    int n, i, after = 0;
    (void)state;

    assert_int_equal(tb_meter_open_driver(&slow_driver, "slow:", &m, err), 0);
    t0 = tb_now_us();
    assert_int_equal(tb_poller_start(&m, 1, interval, &p, err), 0);
    sleep_us(400000);
    n = tb_poller_window(p, t0, tb_now_us(), &w);
    assert_window_sane(w, n, t0, tb_now_us(), 1);
    for (i = 0; i < n; i++)
        if (w[i].s.watts == 1000) stall_end = w[i].s.mono_us;
    assert_true(stall_end > 0);
    /* replaying the ~7 missed ticks would put them all right after the stall;
     * skipping allows the stalled sample, one late tick and one on schedule */
    for (i = 0; i < n; i++)
        if (w[i].s.mono_us >= stall_end && w[i].s.mono_us < stall_end + interval) after++;
    if (after > 3) fail_msg("%d samples within one interval after a stall: ticks were replayed", after);
    /* the stall alone is a lower bound on how late the poller fell */
    assert_true(tb_poller_max_jitter_us(p) >= STALL_US - 2 * interval);
    assert_true(tb_poller_skipped_ticks(p) >= 1);
    /* and in total never more samples than the schedule has slots */
    assert_true((uint64_t)n <= (tb_now_us() - t0) / interval + 1);
    free(w);
    tb_poller_stop(p);
    tb_meter_close(m);
}

/* tb_poller_jitter: one lateness per tick, ordered statistics, window by due time. */
static void test_poller_jitter_stats(void **state) {
    tb_meter *m = open_meter("estimate:");
    tb_poller *p = NULL;
    char err[TB_ERR_LEN] = "";
    uint64_t t0 = tb_now_us(), p50, p99, max, mid;
    int n, n_mid;
    (void)state;
    assert_int_equal(tb_poller_start(&m, 1, 20000, &p, err), 0);
    sleep_us(200000);
    mid = tb_now_us();
    sleep_us(200000);
    n = tb_poller_jitter(p, t0, &p50, &p99, &max);
    n_mid = tb_poller_jitter(p, mid, &p50, &p99, &max);
    /* at most one tick per 20 ms since t0 (the schedule cannot run ahead), and most of them */
    assert_true(n >= 5 && n <= 21);
    assert_true(n_mid >= 1 && n_mid < n);
    assert_true(p50 <= p99 && p99 <= max);
    assert_true(max <= tb_poller_max_jitter_us(p));
    assert_int_equal(tb_poller_jitter(p, tb_now_us() + 10000000, &p50, &p99, &max), 0);
    assert_true(p50 == 0 && p99 == 0 && max == 0);
    tb_poller_stop(p);
    tb_meter_close(m);
}

static void test_poller_bad_args(void **state) {
    tb_meter *m = NULL;
    tb_meter *none[1] = {NULL};
    tb_poller *p = (tb_poller *)0x1;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_poller_start(&m, 0, 1000000, &p, err), -1);
    assert_null(p);
    assert_string_equal(err, "poller: no meters to poll");
    assert_int_equal(tb_poller_start(none, 1, 1000000, &p, err), -1);
    assert_string_equal(err, "poller: meter 0 is NULL");
    m = open_meter("estimate:");
    assert_int_equal(tb_poller_start(&m, 1, 0, &p, err), -1);
    assert_string_equal(err, "poller: interval must be > 0 us");
    tb_meter_close(m);
    tb_poller_stop(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poller_two_estimate_meters),
        cmocka_unit_test(test_poller_first_sample_immediate_and_stop_prompt),
        cmocka_unit_test(test_poller_missing_meter_makes_latest_nan),
        cmocka_unit_test(test_poller_skips_ticks_after_stall_instead_of_bursting),
        cmocka_unit_test(test_poller_bad_args),
        cmocka_unit_test(test_poller_jitter_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
