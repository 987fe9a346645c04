/*
 * test_vhdrlog.c: the verifier's HdrHistogram log reader (verify/hdrlog.c)
 * on a log written by a third party, hdr-histogram-js's HistogramLogWriter
 * (tests/unit/data/hdr_js.hlog, made by tests/tools/hdr/hlog-write.js from
 * tests/unit/data/hdr_js.json). The expected counts and percentiles follow
 * from the values in hdr_js.json and HdrHistogram's bucket layout (lowest 1,
 * 3 digits: unit buckets below 2048, then buckets 2, 4, 8 ... wide), worked
 * out by hand. Then damaged logs, each refused naming its line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "verify/hdrlog.h"

static char *fixture(size_t *len) {
    const char *dir = getenv("TB_SOURCE_DIR");
    char path[4096];
    FILE *f;
    char *buf;
    long n;
    snprintf(path, sizeof path, "%s/tests/unit/data/hdr_js.hlog", dir ? dir : TB_SOURCE_DIR);
    f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static const tb_vh_hist *find(const tb_vh_log *log, const char *tag) {
    const tb_vh_hist *h = tb_vh_log_find(log, tag);
    if (!h) fail_msg("no histogram tagged '%s'", tag);
    return h;
}

/* HdrHistogram's counts index of v for lowest 1 and 3 digits (v >= 2048:
 * the top 11 bits' value plus 1024 per extra bit). */
static size_t index_of(uint64_t v) {
    unsigned shift = 0;
    while ((v >> shift) >= 2048)
        shift++;
    return (size_t)shift * 1024 + (size_t)(v >> shift);
}

static uint64_t count_at(const tb_vh_hist *h, uint64_t v) {
    size_t i = index_of(v);
    return i < h->n_counts ? h->counts[i] : 0;
}

static void test_js_log(void **state) {
    (void)state;
    size_t len;
    char *text = fixture(&len), err[256] = "";
    tb_vh_log log;
    const tb_vh_hist *h;
    assert_int_equal(tb_vh_log_parse(text, len, &log, err), 0);
    assert_int_equal(log.n, 6);
    assert_true(fabs(log.start_time_s - 1764680521.25) < 1e-6);
    assert_true(log.base_time_s == 0.0); /* the JS writer writes no BaseTime */

    /* 1..100 µs once each */
    h = find(&log, "a");
    assert_int_equal(h->lowest, 1);
    assert_int_equal(h->highest, 100000000);
    assert_int_equal(h->sig_digits, 3);
    assert_int_equal(h->total, 100);
    for (uint64_t v = 1; v <= 100; v++)
        assert_int_equal(count_at(h, v), 1);
    assert_int_equal(h->counts[0], 0);
    assert_true(h->start_s == 0.0 && h->length_s == 3.0);
    assert_true(fabs(h->max_field - 0.1) < 1e-9);
    assert_int_equal(tb_vh_value_at_percentile(h, 50), 50);
    assert_int_equal(tb_vh_value_at_percentile(h, 99), 99);
    assert_int_equal(tb_vh_value_at_percentile(h, 0), 1);
    assert_int_equal(tb_vh_value_at_percentile(h, 100), 100);
    assert_int_equal(tb_vh_max(h), 100);
    assert_true(fabs(tb_vh_fraction_at_or_below(h, 50) - 0.5) < 1e-12);

    /* 1000 x 5000 µs (bucket 5000..5003), 10 x 250 ms (249984..250111),
     * 1 x 3 s (2998272..3000319); p99: rank ceil(0.99 x 1011) = 1001 */
    h = find(&log, "L7/T1/web/get");
    assert_int_equal(h->total, 1011);
    assert_int_equal(count_at(h, 5000), 1000);
    assert_int_equal(count_at(h, 250000), 10);
    assert_int_equal(count_at(h, 3000000), 1);
    assert_true(h->start_s == 10.5 && h->length_s == 3.25);
    assert_int_equal(tb_vh_value_at_percentile(h, 50), 5003);
    assert_int_equal(tb_vh_value_at_percentile(h, 98.9), 5003); /* rank 1000 */
    assert_int_equal(tb_vh_value_at_percentile(h, 99), 250111);
    assert_int_equal(tb_vh_value_at_percentile(h, 99.95), 3000319); /* rank 1011 */
    assert_int_equal(tb_vh_max(h), 3000319);
    assert_true(tb_vh_fraction_at_or_below(h, 4999) == 0.0);
    assert_true(fabs(tb_vh_fraction_at_or_below(h, 5000) - 1000.0 / 1011) < 1e-12);
    assert_true(fabs(tb_vh_fraction_at_or_below(h, 250000) - 1010.0 / 1011) < 1e-12);
    assert_true(tb_vh_fraction_at_or_below(h, 3000000) == 1.0);

    /* a count past 2^32: 5e9 x 1 µs, then 2047 once and 5 x 2048 (2048..2049) */
    h = find(&log, "big");
    assert_int_equal(h->total, 5000000006ull);
    assert_int_equal(h->counts[1], 5000000000ull);
    assert_int_equal(count_at(h, 2047), 1);
    assert_int_equal(count_at(h, 2048), 5);
    assert_int_equal(tb_vh_value_at_percentile(h, 50), 1);
    assert_int_equal(tb_vh_max(h), 2049);

    /* single empty buckets between counts (written as 0, not as a run) */
    h = find(&log, "gaps");
    assert_int_equal(h->total, 4);
    assert_int_equal(h->n_counts, 6);
    assert_int_equal(h->counts[1], 1);
    assert_int_equal(h->counts[2], 0);
    assert_int_equal(h->counts[3], 1);
    assert_int_equal(h->counts[4], 0);
    assert_int_equal(h->counts[5], 2);
    assert_int_equal(tb_vh_value_at_percentile(h, 50), 3);
    assert_int_equal(tb_vh_value_at_percentile(h, 75), 5);

    /* the top bucket of 100 s: 1525 << 16 = 99942400, 65536 wide */
    h = find(&log, "top");
    assert_int_equal(h->total, 3);
    assert_int_equal(h->n_counts, 17910);
    assert_int_equal(h->counts[17909], 3);
    assert_int_equal(tb_vh_max(h), 100007935);
    assert_int_equal(tb_vh_value_at_percentile(h, 50), 100007935);

    h = find(&log, "empty");
    assert_int_equal(h->total, 0);
    assert_int_equal(tb_vh_value_at_percentile(h, 50), 0);
    assert_int_equal(tb_vh_max(h), 0);
    assert_true(tb_vh_fraction_at_or_below(h, 10) == 0.0);
    assert_null(tb_vh_log_find(&log, "nope"));
    tb_vh_log_free(&log);
    free(text);
}

/* ---- damaged logs -------------------------------------------------------- */

/* Parses text, expects a failure whose message holds want. */
static void expect_refused(const char *text, const char *want) {
    tb_vh_log log;
    char err[256] = "";
    int rc = tb_vh_log_parse(text, strlen(text), &log, err);
    tb_vh_log_free(&log);
    if (rc == 0) fail_msg("accepted; expected an error with '%s'", want);
    if (!strstr(err, want)) fail_msg("error '%s' lacks '%s'", err, want);
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64(const uint8_t *b, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) | (i + 2 < n ? b[i + 2] : 0);
        out[o++] = B64[v >> 18 & 63];
        out[o++] = B64[v >> 12 & 63];
        out[o++] = i + 1 < n ? B64[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? B64[v & 63] : '=';
    }
    out[o] = '\0';
}

static void be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* A log of a BaseTime line and the line "Tag=x,0,1,0,BASE64" of the
 * compressed V2 encoding with the given payload (lowest 1, highest 1e8, 3
 * digits: 18432 counts). */
static void v2_line(const uint8_t *payload, size_t n, char *line) {
    uint8_t v2[128] = {0x1c, 0x84, 0x93, 0x13, 0, 0, 0, 0, 0, 0, 0, 0, 0,    0,    0, 3,    0,
                       0,    0,    0,    0,    0, 0, 1, 0, 0, 0, 0, 5, 0xf5, 0xe1, 0, 0x3f, 0xf0};
    uint8_t comp[256];
    uLongf clen = sizeof comp - 8;
    char text[512];
    be32(v2 + 4, (uint32_t)n);
    memcpy(v2 + 40, payload, n);
    assert_int_equal(compress(comp + 8, &clen, v2, 40 + n), Z_OK);
    be32(comp, 0x1c849314);
    be32(comp + 4, (uint32_t)clen);
    b64(comp, 8 + clen, text);
    sprintf(line, "#[BaseTime: 0.000 (seconds since epoch)]\nTag=x,0,1,0,%s\n", text);
}

static void test_damaged(void **state) {
    (void)state;
    size_t len;
    char *text = fixture(&len), *t = malloc(len + 64), line[1024], *p;
    uint8_t raw[16] = {0x1c, 0x84, 0x93, 0x14, 0, 0, 0, 4, 1, 2, 3, 4};
    char enc[64];

    /* a bad base64 character in line 7 (the second histogram) */
    strcpy(t, text);
    p = strstr(t, "Tag=L7/T1/web/get,");
    p = strchr(p, 'H') + 10;
    *p = '*';
    expect_refused(t, "hdrlog line 7: base64: bad character");
    /* another cookie (the first base64 letter changed) */
    strcpy(t, text);
    p = strchr(strstr(t, "Tag=a,"), 'H');
    *p = 'I';
    expect_refused(t, "hdrlog line 6: histogram: cookie");
    /* the last 4 base64 characters gone: fewer bytes than the length says */
    strcpy(t, text);
    p = strchr(strstr(t, "Tag=a,"), '\n');
    memmove(p - 4, p, strlen(p) + 1);
    expect_refused(t, "hdrlog line 6: histogram: length field");
    /* a field missing, a field not a number */
    expect_refused("Tag=x,0,1,HISTFAAAAB54nJNpmSzMwMDACMXMDBAAYjOwfn3IAOcDAEiGAyk=\n", "line 1: 3 fields");
    expect_refused("#c\nTag=x,zero,1,0,HISTFAAAAB54nJNpmSzMwMDACMXMDBAAYjOwfn3IAOcDAEiGAyk=\n",
                   "line 2: start timestamp 'zero' is not a number");
    expect_refused("#[StartTime: soon]\n", "line 1: #[StartTime: without a number");
    /* not zlib inside a compressed form */
    b64(raw, 12, enc);
    sprintf(line, "Tag=x,0,1,0,%s\n", enc);
    expect_refused(line, "line 1: zlib");
    /* counts: a run of empty buckets past the 18432 counts; a count after
     * all 18432; a number cut short */
    /* zigzag(-18432) = 36863: the run itself fits, the count after it does not */
    v2_line((const uint8_t[]){0xff, 0x9f, 0x02, 0x02}, 4, line);
    assert_non_null(strstr(line, "HISTF"));
    expect_refused(line, "line 2: counts: more than the histogram's 18432 counts");
    v2_line((const uint8_t[]){0x81, 0xa0, 0x02}, 3, line); /* zigzag(-18433) = 36865 */
    expect_refused(line, "line 2: counts: a run of 18433 empty buckets");
    v2_line((const uint8_t[]){0x02, 0x80}, 2, line);
    expect_refused(line, "line 2: counts: truncated number");
    /* the same payloads made valid: a count at the last index is accepted */
    v2_line((const uint8_t[]){0xfd, 0x9f, 0x02, 0x02}, 4, line); /* run of 18431, then 1 */
    {
        tb_vh_log log;
        char err[256];
        assert_int_equal(tb_vh_log_parse(line, strlen(line), &log, err), 0);
        assert_int_equal(log.h[0].counts[18431], 1);
        assert_int_equal(log.h[0].total, 1);
        tb_vh_log_free(&log);
    }
    free(t);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_js_log),
        cmocka_unit_test(test_damaged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
