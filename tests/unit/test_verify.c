/*
 * test_verify.c: unit tests of the verifier's own pieces (verify/): its CSV
 * reader (quoting, NULL against the empty string, malformed rows named by
 * line), the trapezoid mean against a trace computed by hand, the geometric
 * mean and the median phase, SHA-256 against FIPS 180-2's example, each
 * run rule on hand-built rows that pass and rows that fail, and the
 * manifest check on tar.gz archives built here with libarchive (a file
 * unlisted, missing, listed twice, a path escaping the folder, a hash that
 * does not match), a bare tar refused, the memory budget, the target mixes
 * of kv and web, per-host power by hand, and the CPU rule's event text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify_int.h"
#include "verify/vmath.h"

#define S 1000000LL /* µs per second */

static void near(double got, double want, double eps, int line) {
    if (!(fabs(got - want) <= eps)) {
        print_error("line %d: got %.15g, want %.15g\n", line, got, want);
        fail();
    }
}
#define assert_near(got, want) near((got), (want), 1e-9, __LINE__)

static int parse(const char *text, tb_vcsv *t, char *err) {
    return tb_vcsv_parse("data/t.csv", text, strlen(text), t, err);
}

static void test_csv_quoting(void **state) {
    /* RFC 4180: a field with a comma, a quote, CR LF inside quotes; "" for a quote */
    const char *text = "id,text,watts\r\n"
                       "1,\"a, b\",1.5\r\n"
                       "2,\"say \"\"hi\"\"\",\n"
                       "3,\"two\r\nlines\",-0.25\n"
                       "4,\"\",nan";
    tb_vcsv t;
    char err[TB_ERR_LEN];
    double w;
    int64_t id;
    (void)state;
    assert_int_equal(parse(text, &t, err), 0);
    assert_int_equal(t.n_cols, 3);
    assert_int_equal(t.n_rows, 4);
    assert_string_equal(tb_vcsv_get(&t, 0, 1), "a, b");
    assert_string_equal(tb_vcsv_get(&t, 1, 1), "say \"hi\"");
    assert_string_equal(tb_vcsv_get(&t, 2, 1), "two\r\nlines");
    /* NULL is the empty unquoted field; a quoted "" is the empty string */
    assert_null(tb_vcsv_get(&t, 1, 2));
    assert_non_null(tb_vcsv_get(&t, 3, 1));
    assert_string_equal(tb_vcsv_get(&t, 3, 1), "");
    assert_int_equal(tb_vcsv_real(&t, 0, 2, &w), 1);
    assert_near(w, 1.5);
    assert_int_equal(tb_vcsv_real(&t, 1, 2, &w), 0);
    assert_int_equal(tb_vcsv_real(&t, 2, 2, &w), 1);
    assert_near(w, -0.25);
    assert_int_equal(tb_vcsv_real(&t, 3, 2, &w), -1); /* a NaN is stored as NULL: "nan" is no bundle's */
    assert_int_equal(tb_vcsv_int(&t, 3, 0, &id), 1);
    assert_int_equal(id, 4);
    assert_int_equal(tb_vcsv_int(&t, 0, 1, &id), -1); /* "a, b" is no number */
    assert_int_equal(tb_vcsv_col(&t, "watts"), 2);
    assert_int_equal(tb_vcsv_col(&t, "volts"), -1);
    tb_vcsv_free(&t);
}

static void test_csv_doubles_round_trip(void **state) {
    /* %.17g text reads back as the very double (the bundle's REAL rule) */
    const double v[] = {0.1, 1.0 / 3.0, 72.77486910994764, 1e-300, 123456789.123456789};
    char text[512] = "x\n", cell[64];
    tb_vcsv t;
    char err[TB_ERR_LEN];
    (void)state;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        snprintf(cell, sizeof cell, "%.17g\n", v[i]);
        strcat(text, cell);
    }
    assert_int_equal(parse(text, &t, err), 0);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        double got;
        assert_int_equal(tb_vcsv_real(&t, i, 0, &got), 1);
        assert_true(got == v[i]);
    }
    tb_vcsv_free(&t);
}

static void expect_bad(const char *text, const char *want) {
    tb_vcsv t;
    char err[TB_ERR_LEN] = "";
    assert_int_equal(parse(text, &t, err), -1);
    if (!strstr(err, want)) {
        print_error("error '%s' lacks '%s'\n", err, want);
        fail();
    }
    tb_vcsv_free(&t);
}

static void test_csv_bad_rows(void **state) {
    (void)state;
    expect_bad("a,b\n1,2\n3\n", "data/t.csv line 3: 1 field, the header has 2");
    expect_bad("a,b\n1,2,3\n", "line 2: 3 fields, the header has 2");
    expect_bad("a,b\n\"x\ny\",1\n1,2,3\n", "line 4: 3 fields"); /* the quoted line end counts */
    expect_bad("a,b\n1,\"open\n", "line 2: a quoted field never closes");
    expect_bad("a,b\n1,\"x\"y\n", "line 2: 'y' after a closing quote");
    expect_bad("a,b\n1,x\"y\n", "line 2: a quote inside an unquoted field");
    expect_bad("a,,c\n1,2,3\n", "line 1: column 2 has no name");
    expect_bad("", "empty");
}

static void test_trapezoid_by_hand(void **state) {
    /* 0 s 100 W, 1 s 200 W, 2 s 200 W, 3 s 100 W: 150 + 200 + 150 = 500 J over 3 s */
    const int64_t t[] = {0, 1 * S, 2 * S, 3 * S};
    const double w[] = {100, 200, 200, 100};
    /* uneven: 0 s 100 W, 1 s 300 W, 3 s 100 W: 200 J + 400 J over 3 s = 200 W */
    const int64_t tu[] = {10 * S, 11 * S, 13 * S};
    const double wu[] = {100, 300, 100};
    double m;
    (void)state;
    assert_int_equal(tb_v_trapezoid_mean(t, w, 4, &m), 0);
    assert_near(m, 500.0 / 3.0);
    assert_int_equal(tb_v_trapezoid_mean(tu, wu, 3, &m), 0);
    assert_near(m, 200.0);
    assert_int_equal(tb_v_trapezoid_mean(t, w, 1, &m), 0); /* one point: its value */
    assert_near(m, 100.0);
    assert_int_equal(tb_v_trapezoid_mean(t, w, 0, &m), -1);
}

static void test_mean_power_meters(void **state) {
    /* meter 0 as the hand trace above, with a bad sample (implausible) at
     * 1.5 s that must be left out; meter 1 flat 50 W: 500/3 + 50 */
    const tb_vsample s[] = {
        {0, 0, 100, 0, NAN},
        {1, 0, 50, 0, NAN},
        {0, 1 * S, 200, 0, NAN},
        {0, 3 * S / 2, -27.1, TB_V_IMPLAUSIBLE, NAN},
        {1, 1 * S, 50, TB_V_ESTIMATED, NAN},
        {0, 2 * S, 200, 0, NAN},
        {0, 3 * S, 100, 0, NAN},
        {1, 3 * S, 50, TB_V_AUTORANGE, NAN},
        {1, 2 * S, NAN, TB_V_MISSING, NAN},
    };
    (void)state;
    /* samples must be in time order per meter for the trapezoid: sort a copy */
    tb_vsample c[sizeof s / sizeof s[0]];
    memcpy(c, s, sizeof s);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        for (size_t j = i + 1; j < sizeof c / sizeof c[0]; j++)
            if (c[j].mono_us < c[i].mono_us) {
                tb_vsample x = c[i];
                c[i] = c[j];
                c[j] = x;
            }
    assert_near(tb_vmean_power(c, sizeof c / sizeof c[0], 2), 500.0 / 3.0 + 50.0);
    assert_true(isnan(tb_vmean_power(c, sizeof c / sizeof c[0], 3))); /* meter 2: no sample */
}

static void test_geomean(void **state) {
    const double a[] = {2, 8}, b[] = {1, 2, 4}, z[] = {3, 0, 5}, big[] = {1e200, 1e200, 1e200};
    const double tiny[] = {1e-200, 1e-200}, neg[] = {4, -1};
    (void)state;
    assert_near(tb_v_geomean(a, 2), 4.0);
    assert_near(tb_v_geomean(b, 3), 2.0);
    assert_near(tb_v_geomean(z, 3), 0.0);
    assert_near(tb_v_geomean(neg, 2), 0.0);
    assert_near(tb_v_geomean(a, 0), 0.0);
    near(tb_v_geomean(big, 3), 1e200, 1e188, __LINE__); /* no overflow of the product */
    near(tb_v_geomean(tiny, 2), 1e-200, 1e-212, __LINE__);
}

static void test_median(void **state) {
    const double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, ties[] = {5, 5, 5}, with_nan[] = {NAN, 7, 9};
    (void)state;
    assert_int_equal(tb_v_median_index(odd, 3), 2);
    assert_int_equal(tb_v_median_index(even, 4), 3); /* the lower median: 2 */
    assert_int_equal(tb_v_median_index(ties, 3), 1);
    assert_int_equal(tb_v_median_index(with_nan, 3), 1); /* NaN ranks first: NaN, 7, 9 */
    assert_int_equal(tb_v_median_index(odd, 0), -1);
}

static void test_close(void **state) {
    (void)state;
    assert_true(tb_v_close(1.0, 1.0 + 1e-12, TB_V_REL));
    assert_false(tb_v_close(1.0, 1.0 + 1e-6, TB_V_REL));
    assert_true(tb_v_close(NAN, NAN, TB_V_REL));
    assert_false(tb_v_close(INFINITY, 230.0, TB_V_REL)); /* a forged inf is no match for a finite figure */
    assert_false(tb_v_close(230.0, -INFINITY, TB_V_REL));
    assert_true(tb_v_close(INFINITY, INFINITY, TB_V_REL));
    assert_false(tb_v_close(NAN, 0.0, TB_V_REL));
    assert_true(tb_v_close(0.0, 0.0, TB_V_REL));
}

static void test_sha256(void **state) {
    char hex[65];
    (void)state;
    assert_int_equal(tb_vsha256_hex("abc", 3, hex), 0); /* FIPS 180-2, appendix B.1 */
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_int_equal(tb_vsha256_hex("", 0, hex), 0);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

/* n samples of meter m, 1 s apart from start, watts 100, the given flags
 * on sample bad_at (or none: bad_at < 0). */
static size_t fill(tb_vsample *s, size_t at, int m, size_t n, int64_t start, long bad_at, unsigned flags) {
    for (size_t i = 0; i < n; i++) {
        tb_vsample x = {m, start + (int64_t)i * S, 100.0, (long)i == bad_at ? flags : 0u, NAN};
        s[at + i] = x;
    }
    return at + n;
}

static void test_rule_sample_rate(void **state) {
    tb_vsample s[40];
    char fig[300];
    size_t n;
    (void)state;
    n = fill(s, 0, 0, 10, 0, -1, 0);
    n = fill(s, n, 1, 10, S / 3, -1, 0);
    assert_int_equal(tb_vrule_sample_rate(s, n, 2, fig, sizeof fig), 1);
    assert_non_null(strstr(fig, "18 intervals 1.000..1.000 s"));
    /* meter 1 skips a second: one interval of 2 s */
    s[n - 1].mono_us += S;
    assert_int_equal(tb_vrule_sample_rate(s, n, 2, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "meter 1"));
    /* two samples 100 ms apart: faster than one per second */
    n = fill(s, 0, 0, 3, 0, -1, 0);
    s[1].mono_us = S / 10;
    assert_int_equal(tb_vrule_sample_rate(s, n, 1, fig, sizeof fig), 0);
}

static void test_rule_bad_samples(void **state) {
    tb_vsample s[200];
    char fig[300];
    size_t n;
    (void)state;
    /* 100 s, 100 samples, 1 bad: 1% is allowed (docs/method.md: 1 in 100 valid, 2 not) */
    n = fill(s, 0, 0, 100, 0, 40, TB_V_INVALID);
    assert_int_equal(tb_vrule_bad_samples(s, n, 1, 100.0, fig, sizeof fig), 1);
    assert_non_null(strstr(fig, "1 bad of 100 samples (1.0%)"));
    s[41].flags = TB_V_OVERRANGE;
    assert_int_equal(tb_vrule_bad_samples(s, n, 1, 100.0, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "2 bad of 100 samples (2.0%)"));
    /* NaN watts without a flag is bad too */
    s[41].flags = 0;
    s[42].watts = NAN;
    assert_int_equal(tb_vrule_bad_samples(s, n, 1, 100.0, fig, sizeof fig), 0);
    /* auto-ranging and estimated samples are measurements, not bad */
    s[40].flags = TB_V_AUTORANGE | TB_V_ESTIMATED;
    s[42].watts = 100.0;
    assert_int_equal(tb_vrule_bad_samples(s, n, 1, 100.0, fig, sizeof fig), 1);
    /* missing: 98 of 100 expected came */
    assert_int_equal(tb_vrule_bad_samples(s, 98, 1, 100.0, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "2 of 100 expected missing"));
    assert_int_equal(tb_vrule_bad_samples(s, 99, 1, 100.5, fig, sizeof fig), 1); /* whole seconds only */
    /* no sample at all fails */
    assert_int_equal(tb_vrule_bad_samples(s, 0, 1, 3.0, fig, sizeof fig), 0);
}

static void test_rule_uncertainty_autorange(void **state) {
    tb_vsample s[10];
    char fig[300];
    size_t n = fill(s, 0, 0, 10, 0, -1, 0);
    (void)state;
    assert_int_equal(tb_vrule_uncertainty(s, n, fig, sizeof fig), 1);
    assert_non_null(strstr(fig, "no sample states"));
    s[3].unc_pct = 0.4;
    s[4].unc_pct = 1.0;
    assert_int_equal(tb_vrule_uncertainty(s, n, fig, sizeof fig), 1);
    s[5].unc_pct = 1.2;
    assert_int_equal(tb_vrule_uncertainty(s, n, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "at most 1.200% over 3 samples"));
    assert_int_equal(tb_vrule_autorange(s, n, fig, sizeof fig), 1);
    s[7].flags = TB_V_AUTORANGE;
    assert_int_equal(tb_vrule_autorange(s, n, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "1 of 10 samples"));
}

static void test_rule_edges(void **state) {
    tb_vsample s[40];
    char fig[300];
    size_t n;
    (void)state;
    /* window [10 s, 20 s); meter 0 at 10.3, 11.3, ..., 19.3 s: start 300 ms, end 700 ms away */
    n = fill(s, 0, 0, 10, 10 * S + 3 * S / 10, -1, 0);
    assert_int_equal(tb_vrule_edges(s, n, 1, 10 * S, 20 * S, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "the end, 700 ms"));
    /* a sample of the next level at 20.3 s is the end's nearest: 300 ms */
    n = fill(s, n, 0, 1, 20 * S + 3 * S / 10, -1, 0);
    assert_int_equal(tb_vrule_edges(s, n, 1, 10 * S, 20 * S, fig, sizeof fig), 1);
    /* a second meter 800 ms late at the start */
    n = fill(s, n, 1, 11, 10 * S + 8 * S / 10, -1, 0);
    assert_int_equal(tb_vrule_edges(s, n, 2, 10 * S, 20 * S, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "the start, 800 ms from meter 1"));
    /* a meter without samples */
    assert_int_equal(tb_vrule_edges(s, 11, 2, 10 * S, 20 * S, fig, sizeof fig), 0);
}

static void test_rule_cpu_event(void **state) {
    double pct = 0;
    int threads = 0;
    (void)state;
    assert_int_equal(tb_vrule_event_cpu("1 tiles phase 1: load generator loop stall max 3.1 ms, p99 1.0 ms (own work: "
                                        "max 1.0 ms, p99 0.5 ms; workers waited for a CPU 3.0% of the time); CPU 45% "
                                        "of 2 threads; meter poller lateness p50 0.10 ms",
                                        &pct, &threads),
                     1);
    assert_near(pct, 45.0);
    assert_int_equal(threads, 2);
    assert_int_equal(tb_vrule_event_cpu("workers waited for a CPU 3.0% of the time", &pct, &threads), 0);
    assert_int_equal(tb_vrule_event_cpu("run started", &pct, &threads), 0);
}

static void test_rule_stages(void **state) {
    json_t *demo = json_pack("{s:s, s:s, s:i}", "preset", "demo", "steady", "3s", "phases", 1);
    json_t *good = json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:s}", "preset", "compliant", "ramp_up", "30m", "warm_up",
                             "0s", "steady", "40m", "phases", 3, "ramp_down", "1m", "idle", "240s");
    json_t *short_steady = json_deep_copy(good), *two_phases = json_deep_copy(good);
    char fig[300];
    (void)state;
    json_object_set_new(short_steady, "steady", json_string("5s"));
    json_object_set_new(two_phases, "phases", json_integer(2));
    assert_int_equal(tb_vrule_stages(demo, fig, sizeof fig), 1);
    assert_non_null(strstr(fig, "preset demo"));
    assert_int_equal(tb_vrule_stages(good, fig, sizeof fig), 1);
    assert_int_equal(tb_vrule_stages(short_steady, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "steady is 5s (compliant: 2400 s)"));
    assert_int_equal(tb_vrule_stages(two_phases, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "2 phases"));
    json_decref(demo);
    json_decref(good);
    json_decref(short_steady);
    json_decref(two_phases);
}

/* A lab meter's calibration under the compliant preset: within 365 days
 * before the run's start (a leap year counted), never after it; an
 * estimate, RAPL or IPMI exempt. */
static void test_rule_calibration(void **state) {
    const char *start = "2026-12-03T15:09:00Z", *wt = "wt310://10.0.0.5";
    char fig[300];
    (void)state;
    assert_int_equal(tb_vrule_calibration(wt, 0, "2026-03-31", start, fig, sizeof fig), 1);
    assert_non_null(strstr(fig, "calibrated 2026-03-31, 247 days before the run's start (2026-12-03)"));
    assert_int_equal(tb_vrule_calibration(wt, 0, "2025-12-03", start, fig, sizeof fig), 1); /* 365 days */
    assert_int_equal(tb_vrule_calibration(wt, 0, "2025-12-02", start, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "366 days"));
    assert_int_equal(tb_vrule_calibration(wt, 0, "2024-02-29", "2025-02-28T00:00:00Z", fig, sizeof fig), 1);
    assert_int_equal(tb_vrule_calibration(wt, 0, "2024-02-28", "2025-02-28T00:00:00Z", fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "366 days")); /* across 2024-02-29 */
    assert_int_equal(tb_vrule_calibration(wt, 0, "2026-12-04", start, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "after the run's start"));
    assert_int_equal(tb_vrule_calibration(wt, 0, NULL, start, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "no calibration date"));
    assert_int_equal(tb_vrule_calibration(wt, 0, "2026-02-30", start, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "not a date"));
    assert_int_equal(tb_vrule_calibration(wt, 0, "2026-03-31x", start, fig, sizeof fig), 0);
    assert_int_equal(tb_vrule_calibration(wt, 0, "2026-03-31", NULL, fig, sizeof fig), 0);
    assert_int_equal(tb_vrule_calibration("estimate:", 1, NULL, start, fig, sizeof fig), 1);
    assert_int_equal(tb_vrule_calibration("rapl:", 0, NULL, start, fig, sizeof fig), 1);
    assert_int_equal(tb_vrule_calibration("ipmi://bmc", 0, NULL, start, fig, sizeof fig), 1);
    assert_int_equal(tb_vrule_calibration("ptd://10.0.0.5:8888", 0, NULL, start, fig, sizeof fig), 0);
}

static void test_not_a_bundle(void **state) {
    tb_vresult r = {0};
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_verify_bundle_mem("junk.tar.gz", "hello, world\n", 13, &r, err), TB_VERIFY_UNREADABLE);
    assert_non_null(strstr(err, "junk.tar.gz: not a"));
    assert_int_equal(r.n, 0);
    tb_vresult_free(&r);
}

typedef struct entry {
    const char *path, *data;
} entry;

/* A pax tar of the entries, gzip-compressed unless plain, in memory (free() it). */
static void *tar_of(const entry *e, size_t n, size_t *len, int plain) {
    size_t cap = 1 << 20, used = 0;
    void *buf = malloc(cap);
    struct archive *a = archive_write_new();
    assert_non_null(buf);
    if (!plain) assert_int_equal(archive_write_add_filter_gzip(a), ARCHIVE_OK);
    assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_memory(a, buf, cap, &used), ARCHIVE_OK);
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *ae = archive_entry_new();
        archive_entry_set_pathname(ae, e[i].path);
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_perm(ae, 0644);
        archive_entry_set_size(ae, (la_int64_t)strlen(e[i].data));
        assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
        assert_int_equal(archive_write_data(a, e[i].data, strlen(e[i].data)), (la_ssize_t)strlen(e[i].data));
        archive_entry_free(ae);
    }
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    *len = used;
    return buf;
}

static void *tgz(const entry *e, size_t n, size_t *len) { return tar_of(e, n, len, 0); }

/* A manifest entry for path holding data (sha256 as given, or computed). */
static json_t *listed(const char *path, const char *data, const char *sha) {
    char hex[65];
    assert_int_equal(tb_vsha256_hex(data, strlen(data), hex), 0);
    return json_pack("{s:s, s:s, s:I}", "path", path, "sha256", sha ? sha : hex, "bytes", (json_int_t)strlen(data));
}

/* The manifest check's lines for the archive and manifest; the number
 * failed, and whether a line contains want (when want is not NULL). */
static size_t manifest_fails(const entry *e, size_t n, json_t *files, const char *want) {
    size_t len, failed;
    void *buf = tgz(e, n, &len);
    tb_vbundle b;
    tb_vresult r = {0};
    char err[TB_ERR_LEN];
    json_t *m = json_pack("{s:s, s:i, s:o}", "format", "tilebench-bundle", "format_version", 1, "files", files);
    int found = want == NULL;
    assert_int_equal(tb_vbundle_read("t.tar.gz", buf, len, &b, err), 0);
    tb_vcheck_manifest(&b, m, &r);
    for (size_t i = 0; i < r.n; i++) {
        char line[1024];
        snprintf(line, sizeof line, "%s %s: %s", r.lines[i].pass ? "PASS" : "FAIL", r.lines[i].name, r.lines[i].figure);
        if (want && strstr(line, want)) found = 1;
    }
    if (!found) {
        for (size_t i = 0; i < r.n; i++)
            print_error("  %s %s: %s\n", r.lines[i].pass ? "PASS" : "FAIL", r.lines[i].name, r.lines[i].figure);
        print_error("no line holds '%s'\n", want);
        fail();
    }
    failed = r.failed;
    tb_vresult_free(&r);
    tb_vbundle_free(&b);
    json_decref(m);
    free(buf);
    return failed;
}

#define F "tilebench-run-0/"

static void test_manifest(void **state) {
    const entry good[] = {{F "manifest.json", "{}"}, {F "a.txt", "alpha\n"}, {F "data/b.csv", "x\n1\n"}};
    const entry extra[] = {
        {F "manifest.json", "{}"}, {F "a.txt", "alpha\n"}, {F "data/b.csv", "x\n1\n"}, {F "c.txt", "unlisted"}};
    const entry outside[] = {{F "manifest.json", "{}"}, {F "a.txt", "alpha\n"}, {"elsewhere/x", "1"}};
    const entry dup[] = {{F "manifest.json", "{}"}, {F "a.txt", "alpha\n"}, {F "a.txt", "again\n"}};
    (void)state;
    assert_int_equal(
        manifest_fails(good, 3,
                       json_pack("[o, o]", listed("a.txt", "alpha\n", NULL), listed("data/b.csv", "x\n1\n", NULL)),
                       "PASS hashes: 2 of 2 match"),
        0);
    /* an edited file: the hash names it */
    assert_int_equal(
        manifest_fails(good, 3,
                       json_pack("[o, o]", listed("a.txt", "alpha\n", NULL), listed("data/b.csv", "x\n2\n", NULL)),
                       "FAIL hash data/b.csv: sha256 "),
        1);
    assert_int_equal(
        manifest_fails(extra, 4,
                       json_pack("[o, o]", listed("a.txt", "alpha\n", NULL), listed("data/b.csv", "x\n1\n", NULL)),
                       "c.txt is in the bundle but not listed"),
        1);
    assert_int_equal(manifest_fails(good, 3, json_pack("[o]", listed("a.txt", "alpha\n", NULL)),
                                    "data/b.csv is in the bundle but not listed"),
                     1);
    assert_int_equal(manifest_fails(good, 3,
                                    json_pack("[o, o, o]", listed("a.txt", "alpha\n", NULL),
                                              listed("data/b.csv", "x\n1\n", NULL), listed("gone.txt", "g", NULL)),
                                    "gone.txt is listed but missing"),
                     1);
    assert_int_equal(manifest_fails(good, 3,
                                    json_pack("[o, o, o]", listed("a.txt", "alpha\n", NULL),
                                              listed("a.txt", "alpha\n", NULL), listed("data/b.csv", "x\n1\n", NULL)),
                                    "a.txt is listed twice"),
                     1);
    assert_int_equal(manifest_fails(good, 3,
                                    json_pack("[o, o, o]", listed("a.txt", "alpha\n", NULL),
                                              listed("data/b.csv", "x\n1\n", NULL), listed("../etc/passwd", "x", NULL)),
                                    "'../etc/passwd' escapes the folder"),
                     1);
    assert_int_equal(manifest_fails(good, 3,
                                    json_pack("[o, o, o]", listed("a.txt", "alpha\n", NULL),
                                              listed("data/b.csv", "x\n1\n", NULL), listed("/etc/passwd", "x", NULL)),
                                    "'/etc/passwd' escapes the folder"),
                     1);
    assert_int_equal(manifest_fails(outside, 3, json_pack("[o]", listed("a.txt", "alpha\n", NULL)),
                                    "'elsewhere/x' lies outside tilebench-run-0/"),
                     1);
    assert_int_equal(
        manifest_fails(dup, 3, json_pack("[o]", listed("a.txt", "alpha\n", NULL)), "the archive holds a.txt twice"), 1);
}

static void test_unreadable_bundles(void **state) {
    const entry none[] = {{F "report.json", "{}"}};
    tb_vresult r = {0};
    char err[TB_ERR_LEN] = "";
    size_t len;
    void *buf;
    (void)state;
    buf = tgz(none, 0, &len);
    assert_int_equal(tb_verify_bundle_mem("e.tar.gz", buf, len, &r, err), TB_VERIFY_UNREADABLE);
    assert_non_null(strstr(err, "empty archive"));
    free(buf);
    buf = tgz(none, 1, &len);
    assert_int_equal(tb_verify_bundle_mem("n.tar.gz", buf, len, &r, err), TB_VERIFY_UNREADABLE);
    assert_non_null(strstr(err, "no tilebench-run-0/manifest.json"));
    free(buf);
    /* a bundle is a .tar.gz: the same archive without gzip is refused */
    buf = tar_of(none, 1, &len, 1);
    assert_int_equal(tb_verify_bundle_mem("p.tar", buf, len, &r, err), TB_VERIFY_UNREADABLE);
    assert_non_null(strstr(err, "p.tar: not a gzip-compressed tar (no gzip header"));
    free(buf);
    tb_vresult_free(&r);
}

/* The memory budget: a table larger than it is refused with its line, and
 * a bundle's files past it too. */
static void test_memory_budget(void **state) {
    size_t n = 200000, len;
    char *text = malloc(6 * n + 16), err[TB_ERR_LEN] = "";
    entry big[1];
    tb_vcsv t;
    void *buf;
    tb_vbundle b;
    (void)state;
    assert_non_null(text);
    strcpy(text, "a,b\n");
    for (size_t i = 0; i < n; i++)
        strcat(text + 4 + 4 * (i ? i - 1 : 0), "1,2\n");
    tb_vmem_reset((size_t)4 << 20);
    assert_int_equal(tb_vcsv_parse("data/big.csv", text, strlen(text), &t, err), -1);
    assert_non_null(strstr(err, "data/big.csv line "));
    assert_non_null(strstr(err, "more than 4 MiB in memory"));
    tb_vcsv_free(&t);
    /* within the budget it reads */
    tb_vmem_reset((size_t)64 << 20);
    assert_int_equal(tb_vcsv_parse("data/big.csv", text, strlen(text), &t, err), 0);
    assert_int_equal(t.n_rows, n);
    tb_vcsv_free(&t);
    /* the archive's files */
    big[0].path = F "data/big.csv";
    big[0].data = text;
    buf = tgz(big, 1, &len);
    tb_vmem_reset((size_t)1 << 19);
    assert_int_equal(tb_vbundle_read("m.tar.gz", buf, len, &b, err), -1);
    assert_non_null(strstr(err, "data/big.csv: the bundle's files need more than 0 MiB"));
    tb_vbundle_free(&b);
    tb_vmem_reset((size_t)TB_V_MEM_DEFAULT_MIB << 20);
    /* TILEBENCH_CHECK_MAX_MIB that is not 1..1048576: an error naming it, not the default */
    {
        const char *badenv[] = {"abc", "0", "-5", "1048577", "12x", ""};
        tb_vresult r = {0};
        for (size_t i = 0; i < sizeof badenv / sizeof badenv[0]; i++) {
            setenv("TILEBENCH_CHECK_MAX_MIB", badenv[i], 1);
            err[0] = '\0';
            assert_int_equal(tb_verify_bundle_mem("m.tar.gz", buf, len, &r, err), TB_VERIFY_UNREADABLE);
            assert_non_null(strstr(err, "TILEBENCH_CHECK_MAX_MIB: '"));
            tb_vresult_free(&r);
        }
        unsetenv("TILEBENCH_CHECK_MAX_MIB");
    }
    free(buf);
    free(text);
}

/* The target mixes the tile file gives: kv's set_pct, web's matrix. */
static void test_mix_targets(void **state) {
    tb_vmix m;
    (void)state;
    assert_int_equal(tb_vmix_targets("[workload.kv]\nkind = kv\nset_pct = 30\n", "kv", &m), 0);
    assert_int_equal(m.n, 2);
    assert_string_equal(m.op[0], "SET");
    assert_near(m.pct[0], 30.0);
    assert_near(m.pct[1], 70.0);
    assert_int_equal(tb_vmix_targets("[workload.kv]\nkind = kv\n", "kv", &m), 0);
    assert_near(m.pct[0], 50.0); /* the default */
    /* tiles/standard.ini's Olio matrix: its long-run mix as the file's comment gives it */
    assert_int_equal(tb_vmix_targets("[workload.web]\nkind = web\n"
                                     "next.HomePage = Login=11 TagSearch=52 EventDetail=36 AddPerson=1\n"
                                     "next.Login = TagSearch=60 EventDetail=20 AddEvent=20\n"
                                     "next.TagSearch = HomePage=21 Login=6 TagSearch=41 EventDetail=31 AddPerson=1\n"
                                     "next.EventDetail = HomePage=72 Login=21 PersonDetail=6 AddPerson=1\n"
                                     "next.PersonDetail = HomePage=52 Login=6 EventDetail=31 PersonDetail=11\n"
                                     "next.AddPerson = PersonDetail=100\nnext.AddEvent = EventDetail=100\n",
                                     "web", &m),
                     0);
    assert_int_equal(m.n, 7);
    near(m.pct[0], 26.15, 0.005, __LINE__);
    near(m.pct[2], 33.45, 0.005, __LINE__);
    near(m.pct[6], 2.04, 0.005, __LINE__);
    /* a two-op cycle (period 2) still settles: the lazy chain */
    assert_int_equal(tb_vmix_targets("[workload.w]\nkind = web\nnext.HomePage = Login=100\nnext.Login = HomePage=100\n"
                                     "next.TagSearch = HomePage=100\nnext.EventDetail = HomePage=100\n"
                                     "next.PersonDetail = HomePage=100\nnext.AddPerson = HomePage=100\n"
                                     "next.AddEvent = HomePage=100\n",
                                     "w", &m),
                     0);
    assert_near(m.pct[0], 50.0);
    assert_near(m.pct[1], 50.0);
    assert_near(m.pct[2], 0.0);
    /* no mix: another kind, a row missing, no such section */
    assert_int_equal(tb_vmix_targets("[workload.m]\nkind = mail\n", "m", &m), -1);
    assert_int_equal(tb_vmix_targets("[workload.w]\nkind = web\nnext.HomePage = Login=100\n", "w", &m), -1);
    assert_int_equal(tb_vmix_targets("[workload.kv]\nkind = kv\n", "other", &m), -1);
}

/* ---- figures recomputed against a run worked out by hand ---- */

/* One level of 1 tile, steady window [0, 4 s), one meter at 0.5, 1.5, 2.5
 * and 3.5 s reading 100, 200, 200, 100 W: (150 + 200 + 150) / 3 W. kv: 120
 * GET + 80 SET in 4 s = 50 ops/s against 50: normalized 1. mail in OPM: 200
 * actions in 4 s = 3000 OPM against 600: 5. Tile score sqrt(5). Active idle
 * two samples at 80 W. */
#define HAND_W     (500.0 / 3.0)
#define HAND_SCORE 2.23606797749979
#define HAND_IDLE  80.0

static const char *const hand_config = "[tile]\nname = hand\n[workload.kv]\nkind = kv\nreference = 50\n"
                                       "[workload.mail]\nkind = mail\nunit = OPM\nreference = 600\n";

static json_t *stats3(double v) { return json_pack("{s:f, s:f, s:f}", "mean", v, "min", v, "max", v); }

static json_t *hand_report(void) {
    double ppkw = HAND_SCORE / (HAND_W / 1000.0);
    json_t *wls = json_pack("[{s:s, s:i, s:f, s:f, s:f}, {s:s, s:i, s:f, s:f, s:f}]", "name", "kv", "tile", 1,
                            "throughput", 50.0, "normalized", 1.0, "reference", 50.0, "name", "mail", "tile", 1,
                            "throughput", 3000.0, "normalized", 5.0, "reference", 600.0);
    json_t *lv =
        json_pack("{s:i, s:i, s:i, s:n, s:f, s:f, s:f, s:f, s:i, s:i, s:f, s:n, s:o}", "tiles", 1, "phase", 1, "repeat",
                  1, "alone", "score", HAND_SCORE, "avg_watts", HAND_W, "ppkw", ppkw, "steady_s", 4.0, "samples_total",
                  4, "samples_bad", 0, "app_score", HAND_SCORE, "infra_score", "workloads", wls);
    json_t *sum = json_pack("{s:i, s:o, s:o, s:o, s:o, s:{s:n, s:n, s:n}}", "tiles", 1, "score", stats3(HAND_SCORE),
                            "avg_watts", stats3(HAND_W), "ppkw", stats3(ppkw), "app_score", stats3(HAND_SCORE),
                            "infra_score", "mean", "min", "max");
    return json_pack("{s:{s:[o], s:[o], s:f, s:f, s:f, s:f}}", "run", "levels", lv, "summary", sum, "peak_score",
                     HAND_SCORE, "peak_ppkw", ppkw, "active_idle_watts", HAND_IDLE, "overall_efficiency",
                     HAND_SCORE / (HAND_W / 1000.0 + HAND_IDLE / 1000.0));
}

static void hand_tables(tb_vdata *d) {
    char err[TB_ERR_LEN];
    const char *levels = "id,run_id,tiles,phase,repeat,alone,steady_start_mono_us,steady_end_mono_us\n"
                         "1,1,1,1,1,,0,4000000\n";
    const char *power = "run_id,level_id,meter_idx,mono_us,wall_us,watts,flags,uncertainty_pct\n"
                        "1,,0,-10000000,0,80,0,\n1,,0,-9000000,0,80,0,\n"
                        "1,1,0,500000,0,100,0,\n1,1,0,1500000,0,200,0,\n1,1,0,2500000,0,200,0,\n"
                        "1,1,0,3500000,0,100,0,\n";
    const char *workloads = "id,level_id,name,tile,ops\n7,1,kv,1,200\n8,1,mail,1,200\n";
    const char *ops = "workload_id,name,count,errors,metric\n7,GET,120,0,1\n7,SET,80,0,1\n8,Send,100,0,1\n"
                      "8,Login,100,0,1\n";
    memset(d, 0, sizeof *d);
    assert_int_equal(tb_vcsv_parse("levels.csv", levels, strlen(levels), &d->levels, err), 0);
    assert_int_equal(tb_vcsv_parse("power_samples.csv", power, strlen(power), &d->power, err), 0);
    assert_int_equal(tb_vcsv_parse("workloads.csv", workloads, strlen(workloads), &d->workloads, err), 0);
    assert_int_equal(tb_vcsv_parse("ops.csv", ops, strlen(ops), &d->ops, err), 0);
    assert_int_equal(tb_vcsv_parse("meters.csv", "idx\n0\n", 6, &d->meters, err), 0);
    d->config = hand_config;
    d->settings = json_object();
    d->report = hand_report();
    assert_int_equal(tb_vmodel_build(d, err), 0);
}

static void hand_free(tb_vdata *d) {
    tb_vcsv_free(&d->levels);
    tb_vcsv_free(&d->power);
    tb_vcsv_free(&d->workloads);
    tb_vcsv_free(&d->ops);
    tb_vcsv_free(&d->meters);
    tb_vmodel_free(d);
    json_decref(d->report);
    json_decref(d->settings);
}

/* The figures check's lines; the number failed, and whether one holds want. */
static size_t figure_fails(tb_vdata *d, const char *want) {
    tb_vresult r = {0};
    size_t failed;
    int found = want == NULL;
    tb_vcheck_figures(d, &r);
    for (size_t i = 0; i < r.n; i++) {
        char line[1024];
        snprintf(line, sizeof line, "%s %s: %s", r.lines[i].pass ? "PASS" : "FAIL", r.lines[i].name, r.lines[i].figure);
        if (want && strstr(line, want)) found = 1;
        if (!want || !found) print_message("  %s\n", line);
    }
    if (!found) {
        print_error("no line holds '%s'\n", want);
        fail();
    }
    failed = r.failed;
    tb_vresult_free(&r);
    return failed;
}

static void test_figures_by_hand(void **state) {
    tb_vdata d;
    json_t *lv;
    (void)state;
    hand_tables(&d);
    assert_int_equal(figure_fails(&d, "PASS figures level 1 (tiles 1)"), 0);
    /* a published figure off by 1e-6 of itself is named with both values */
    lv = json_array_get(json_object_get(json_object_get(d.report, "run"), "levels"), 0);
    json_object_set_new(lv, "ppkw", json_real(HAND_SCORE / (HAND_W / 1000.0) * (1 + 1e-6)));
    assert_int_equal(figure_fails(&d, "FAIL figure level 1 (tiles 1) ppkw: published 13.41642128"), 1);
    hand_free(&d);
    /* a sample edited: the mean power, PPKW and what rests on them */
    hand_tables(&d);
    d.lv[0].s[1].watts = 210.0;
    assert_true(figure_fails(&d, "FAIL figure level 1 (tiles 1) avg_watts: published 166.666666667, recomputed 170") >=
                2);
    hand_free(&d);
    /* an op count edited: the throughput and everything above it */
    hand_tables(&d);
    json_object_set_new(
        json_array_get(json_object_get(json_array_get(json_object_get(json_object_get(d.report, "run"), "levels"), 0),
                                       "workloads"),
                       1),
        "throughput", json_real(3015.0));
    assert_int_equal(figure_fails(&d, "FAIL figure level 1 (tiles 1) tile 1 mail throughput: published 3015, "
                                      "recomputed 3000"),
                     1);
    hand_free(&d);
}

/* The stage column (schema 13): idle by stage, the ramps in no level and
 * no idle but beside each edge; a stage that contradicts level_id, or is
 * none of the five, does not read. */
static void test_sample_stages(void **state) {
    const char *power = "run_id,level_id,meter_idx,mono_us,wall_us,watts,flags,uncertainty_pct,stage\n"
                        "1,,0,-10000000,0,80,0,,idle\n1,,0,-9000000,0,80,0,,idle\n"
                        "1,,0,-1200000,0,300,0,,ramp-up\n1,,0,-200000,0,300,0,,warm-up\n"
                        "1,1,0,800000,0,100,0,,steady\n1,1,0,1800000,0,200,0,,steady\n"
                        "1,1,0,2800000,0,200,0,,steady\n1,1,0,3800000,0,100,0,,steady\n"
                        "1,,0,4800000,0,300,0,,ramp-down\n";
    const char *bad[] = {"1,,0,1,0,1,0,,steady\n", "1,1,0,1,0,1,0,,idle\n", "1,,0,1,0,1,0,,between\n",
                         "1,1,0,1,0,1,0,,ramp-up\n"};
    char fig[300], err[TB_ERR_LEN];
    tb_vdata d;
    (void)state;
    hand_tables(&d);
    tb_vcsv_free(&d.power);
    tb_vmodel_free(&d);
    assert_int_equal(tb_vcsv_parse("power_samples.csv", power, strlen(power), &d.power, err), 0);
    assert_int_equal(tb_vmodel_build(&d, err), 0);
    assert_int_equal(d.n_idle, 2);
    assert_int_equal(d.lv[0].n_s, 4);
    assert_int_equal(d.n_all, 9);
    assert_int_equal(figure_fails(&d, "PASS figures run"), 0); /* the ramps' 300 W feed no figure */
    /* the steady start is 0.8 s from the first steady sample, 0.2 s from warm-up's last */
    assert_int_equal(tb_vrule_edges(d.all, d.n_all, 1, d.lv[0].t0, d.lv[0].t1, fig, sizeof fig), 1);
    assert_non_null(strstr(fig, "the start, 200 ms"));
    assert_int_equal(tb_vrule_edges(d.lv[0].s, d.lv[0].n_s, 1, d.lv[0].t0, d.lv[0].t1, fig, sizeof fig), 0);
    hand_free(&d);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char csv[256];
        hand_tables(&d);
        tb_vcsv_free(&d.power);
        tb_vmodel_free(&d);
        snprintf(csv, sizeof csv, "run_id,level_id,meter_idx,mono_us,wall_us,watts,flags,uncertainty_pct,stage\n%s",
                 bad[i]);
        assert_int_equal(tb_vcsv_parse("power_samples.csv", csv, strlen(csv), &d.power, err), 0);
        assert_int_equal(tb_vmodel_build(&d, err), -1);
        assert_non_null(strstr(err, "power_samples.csv row 1: stage"));
        hand_free(&d);
    }
}

/* Per-host power: two meters on hosts a and b, the level's samples split
 * between them. */
static void test_hosts_by_hand(void **state) {
    tb_vdata d;
    tb_vresult r = {0};
    json_t *lv, *hosts;
    char err[TB_ERR_LEN];
    const char *power = "run_id,level_id,meter_idx,mono_us,wall_us,watts,flags,uncertainty_pct\n"
                        "1,,0,-10000000,0,80,0,\n1,,0,-9000000,0,80,0,\n1,,1,-10000000,0,20,0,\n"
                        "1,1,0,500000,0,100,0,\n1,1,0,1500000,0,200,0,\n1,1,1,500000,0,50,0,\n"
                        "1,1,1,2500000,0,70,0,\n";
    (void)state;
    hand_tables(&d);
    tb_vcsv_free(&d.meters);
    tb_vcsv_free(&d.power);
    tb_vmodel_free(&d);
    assert_int_equal(tb_vcsv_parse("meters.csv", "idx,host\n0,a\n1,b\n", 16, &d.meters, err), 0);
    assert_int_equal(tb_vcsv_parse("power_samples.csv", power, strlen(power), &d.power, err), 0);
    assert_int_equal(tb_vmodel_build(&d, err), 0);
    /* a: (100 + 200) / 2 = 150 W over 2 samples; b: 60 W over 2; idle a 80 W, b 20 W (one sample) */
    lv = json_array_get(json_object_get(json_object_get(d.report, "run"), "levels"), 0);
    hosts = json_pack("[{s:s, s:f, s:i}, {s:s, s:f, s:i}]", "name", "a", "avg_watts", 150.0, "samples", 2, "name", "b",
                      "avg_watts", 60.0, "samples", 2);
    json_object_set_new(lv, "hosts", hosts);
    json_object_set_new(json_object_get(d.report, "run"), "hosts",
                        json_pack("[{s:s, s:f}, {s:s, s:f}]", "name", "a", "active_idle_watts", 80.0, "name", "b",
                                  "active_idle_watts", 20.0));
    tb_vcheck_hosts(&d, &r);
    assert_int_equal(r.failed, 0);
    assert_int_equal(r.n, 1);
    assert_non_null(strstr(r.lines[0].figure, "6 figures of 4 host entries agree"));
    tb_vresult_free(&r);
    /* host b's mean power edited */
    json_object_set_new(json_array_get(hosts, 1), "avg_watts", json_real(61.0));
    tb_vcheck_hosts(&d, &r);
    assert_int_equal(r.failed, 1);
    assert_string_equal(r.lines[0].name, "figure level 1 (tiles 1) host b avg_watts");
    assert_string_equal(r.lines[0].figure, "published 61, recomputed 60");
    tb_vresult_free(&r);
    hand_free(&d);
}

/* The CPU rule's line shows the event it rests on whole, or cut cleanly. */
static void test_cpu_line_event(void **state) {
    tb_vdata d;
    tb_vresult r = {0};
    char err[TB_ERR_LEN], msg[700], csv[800];
    const char *line = NULL;
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = pass ? 600 : 120;
        hand_tables(&d);
        snprintf(msg, sizeof msg, "1 tiles phase 1: CPU 45%% of 2 threads; ");
        while (strlen(msg) < n)
            strcat(msg, "\xc3\xa9"); /* é: two bytes, never cut between them */
        strcat(msg, "END");
        snprintf(csv, sizeof csv, "message\n%s\n", msg);
        assert_int_equal(tb_vcsv_parse("events.csv", csv, strlen(csv), &d.events, err), 0);
        tb_vcheck_rules(&d, &r);
        for (size_t i = 0; i < r.n; i++)
            if (strcmp(r.lines[i].name, "rule load generator CPU") == 0) line = r.lines[i].figure;
        assert_non_null(line);
        if (!pass) {
            assert_non_null(strstr(line, "END)")); /* whole */
        } else {
            const char *dots = strstr(line, "...)");
            assert_null(strstr(line, "END"));
            assert_non_null(dots);
            assert_true(((unsigned char)dots[-1] & 0xC0) == 0x80 && (unsigned char)dots[-2] == 0xc3);
        }
        tb_vresult_free(&r);
        tb_vcsv_free(&d.events);
        hand_free(&d);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_quoting),
        cmocka_unit_test(test_csv_doubles_round_trip),
        cmocka_unit_test(test_csv_bad_rows),
        cmocka_unit_test(test_trapezoid_by_hand),
        cmocka_unit_test(test_mean_power_meters),
        cmocka_unit_test(test_geomean),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_close),
        cmocka_unit_test(test_sha256),
        cmocka_unit_test(test_rule_sample_rate),
        cmocka_unit_test(test_rule_bad_samples),
        cmocka_unit_test(test_rule_uncertainty_autorange),
        cmocka_unit_test(test_rule_edges),
        cmocka_unit_test(test_rule_cpu_event),
        cmocka_unit_test(test_rule_stages),
        cmocka_unit_test(test_rule_calibration),
        cmocka_unit_test(test_not_a_bundle),
        cmocka_unit_test(test_manifest),
        cmocka_unit_test(test_unreadable_bundles),
        cmocka_unit_test(test_memory_budget),
        cmocka_unit_test(test_mix_targets),
        cmocka_unit_test(test_figures_by_hand),
        cmocka_unit_test(test_sample_stages),
        cmocka_unit_test(test_hosts_by_hand),
        cmocka_unit_test(test_cpu_line_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
