/*
 * test_hdr.c: HdrHistogram's V2 encoding of the latency histogram
 * (qos/hist.c, tb_hist_encode_hdr), against byte strings worked out by hand
 * from the format's description (HdrHistogram's encodeIntoByteBuffer and
 * ZigZagEncoding): the 40-byte header, then the counts as ZigZag LEB128 with
 * runs of empty buckets as negative numbers. The compressed form is inflated
 * with zlib here and must give the same bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "qos/hist.h"

/* The header every encoding starts with, its payload length at 4..7. */
static const uint8_t HEADER[40] = {
    0x1c, 0x84, 0x93, 0x13,                         /* V2 cookie 0x1c849303 | 0x10 */
    0,    0,    0,    0,                            /* payload length, filled in */
    0,    0,    0,    0,                            /* normalizing index offset */
    0,    0,    0,    3,                            /* significant digits */
    0,    0,    0,    0,    0,    0,    0,    1,    /* lowest discernible value 1 */
    0,    0,    0,    0,    0x05, 0xf5, 0xe1, 0x00, /* highest trackable 100000000 */
    0x3f, 0xf0, 0,    0,    0,    0,    0,    0,    /* ratio 1.0 (IEEE 754) */
};

/* Encodes h uncompressed and checks it is HEADER then payload[0..n). */
static void expect_encoding(const tb_hist *h, const uint8_t *payload, size_t n) {
    uint8_t *out = NULL, want[40];
    size_t len = 0;
    assert_int_equal(tb_hist_encode_hdr(h, 0, &out, &len), 0);
    memcpy(want, HEADER, sizeof want);
    want[4] = (uint8_t)(n >> 24);
    want[5] = (uint8_t)(n >> 16);
    want[6] = (uint8_t)(n >> 8);
    want[7] = (uint8_t)n;
    assert_int_equal(len, 40 + n);
    assert_memory_equal(out, want, 40);
    assert_memory_equal(out + 40, payload, n);
    free(out);
}

static tb_hist *hist_of(const uint64_t *values, size_t n) {
    tb_hist *h = tb_hist_new();
    for (size_t i = 0; i < n; i++)
        tb_hist_record(h, values[i]);
    return h;
}

static void test_empty(void **state) {
    (void)state;
    /* HdrHistogram encodes index 0's count when nothing was recorded */
    static const uint8_t p[] = {0x00};
    tb_hist *h = tb_hist_new();
    expect_encoding(h, p, sizeof p);
    tb_hist_free(h);
}

static void test_one_value(void **state) {
    (void)state;
    /* 1 µs is index 1: index 0 empty (a single zero: 0), then count 1 (zigzag 2) */
    static const uint8_t p[] = {0x00, 0x02};
    uint64_t v[] = {1};
    tb_hist *h = hist_of(v, 1);
    expect_encoding(h, p, sizeof p);
    tb_hist_free(h);
    v[0] = 0; /* recorded as 1 µs */
    h = hist_of(v, 1);
    expect_encoding(h, p, sizeof p);
    tb_hist_free(h);
}

static void test_two_values(void **state) {
    (void)state;
    /* 1 µs twice, 3 µs once: [0, 2, 0, 1] -> 0, 4, 0, 2 */
    static const uint8_t p[] = {0x00, 0x04, 0x00, 0x02};
    uint64_t v[] = {3, 1, 1};
    tb_hist *h = hist_of(v, 3);
    expect_encoding(h, p, sizeof p);
    tb_hist_free(h);
}

static void test_zero_run(void **state) {
    (void)state;
    /* 5 µs: indices 0..4 empty, a run of 5: zigzag(-5) = 9; then count 1 */
    static const uint8_t p5[] = {0x09, 0x02};
    /* 1 and 5 µs: 0 (index 0), 2, run of 3 (indices 2..4): zigzag(-3) = 5, 2 */
    static const uint8_t p15[] = {0x00, 0x02, 0x05, 0x02};
    uint64_t v[] = {5, 1};
    tb_hist *h = hist_of(v, 1);
    expect_encoding(h, p5, sizeof p5);
    tb_hist_free(h);
    h = hist_of(v, 2);
    expect_encoding(h, p15, sizeof p15);
    tb_hist_free(h);
}

static void test_multibyte(void **state) {
    (void)state;
    /* 3000 µs: bucket width 2 above 2048, index 1024 + 3000/2 = 2524; a run
     * of 2524: zigzag 5047 = 0x13b7 -> b7 27; 300 values: zigzag 600 -> d8 04 */
    static const uint8_t p[] = {0xb7, 0x27, 0xd8, 0x04};
    tb_hist *h = tb_hist_new();
    for (int i = 0; i < 300; i++)
        tb_hist_record(h, 3000 + (uint64_t)(i & 1)); /* 3000 and 3001 share the bucket */
    expect_encoding(h, p, sizeof p);
    tb_hist_free(h);
}

static void test_clamped_top(void **state) {
    (void)state;
    /* above 100 s: the top bucket, index 16 * 1024 + (1e8 >> 16) = 17909;
     * zigzag(-17909) = 35817 = 105 + 23 * 128 + 2 * 16384 -> e9 97 02 */
    static const uint8_t p[] = {0xe9, 0x97, 0x02, 0x02};
    uint64_t v[] = {200000000};
    tb_hist *h = hist_of(v, 1);
    expect_encoding(h, p, sizeof p);
    tb_hist_free(h);
}

/* A histogram of one bucket (index 1, value 1 µs) holding count values,
 * made through the tilebench BLOB (version 1: count, clamped, min, max,
 * sum, 1 bucket, gap 1, count), since recording 2^40 values takes too long. */
static tb_hist *big_count(const uint8_t *varint, size_t vn) {
    uint8_t blob[64];
    size_t n = 0;
    tb_hist *h = NULL;
    char err[256];
    blob[n++] = 1;
    memcpy(blob + n, varint, vn), n += vn; /* count */
    blob[n++] = 0;                         /* clamped */
    blob[n++] = 1;                         /* min */
    blob[n++] = 1;                         /* max */
    memcpy(blob + n, varint, vn), n += vn; /* sum */
    blob[n++] = 1;                         /* one bucket */
    blob[n++] = 1;                         /* gap 1: index 1 */
    memcpy(blob + n, varint, vn), n += vn; /* its count */
    assert_int_equal(tb_hist_decode(blob, n, &h, err), 0);
    return h;
}

static void test_big_counts(void **state) {
    (void)state;
    /* 2^40: zigzag 2^41, 6 LEB128 bytes, the last 2^(41-35) = 0x40 */
    static const uint8_t c40[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x20};
    static const uint8_t p40[] = {0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40};
    /* 2^62: zigzag 2^63; HdrHistogram's 9-byte variant puts bits 56..63 in
     * the 9th byte whole (0x80), where plain LEB128 would take 10 bytes */
    static const uint8_t c62[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40};
    static const uint8_t p62[] = {0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
    tb_hist *h = big_count(c40, sizeof c40);
    assert_int_equal(tb_hist_count(h), 1ull << 40);
    expect_encoding(h, p40, sizeof p40);
    tb_hist_free(h);
    h = big_count(c62, sizeof c62);
    assert_int_equal(tb_hist_count(h), 1ull << 62);
    expect_encoding(h, p62, sizeof p62);
    tb_hist_free(h);
}

static void test_dense(void **state) {
    (void)state;
    /* 1..5000 µs once each (3299 non-empty buckets: the dense layout):
     * index 0 empty (0); 1..2047 one each (2); 1024 buckets of width 2 for
     * 2048..4095 (4); 226 of width 4 for 4096..4999 (8); 5000 alone (2) */
    uint8_t *p = malloc(4000);
    size_t n = 0;
    tb_hist *h = tb_hist_new();
    for (uint64_t v = 1; v <= 5000; v++)
        tb_hist_record(h, v);
    assert_true(tb_hist_memory_bytes(h) > 3299 * 8); /* not the sparse array */
    p[n++] = 0x00;
    for (int i = 0; i < 2047; i++)
        p[n++] = 0x02;
    for (int i = 0; i < 1024; i++)
        p[n++] = 0x04;
    for (int i = 0; i < 226; i++)
        p[n++] = 0x08;
    p[n++] = 0x02;
    expect_encoding(h, p, n);
    free(p);
    tb_hist_free(h);
}

static void test_compressed(void **state) {
    (void)state;
    uint64_t v[] = {1, 5, 3000, 3000, 2500000, 200000000};
    tb_hist *h = hist_of(v, 6);
    uint8_t *raw = NULL, *comp = NULL, back[256];
    size_t raw_len = 0, comp_len = 0;
    uLongf back_len = sizeof back;
    assert_int_equal(tb_hist_encode_hdr(h, 0, &raw, &raw_len), 0);
    assert_int_equal(tb_hist_encode_hdr(h, 1, &comp, &comp_len), 0);
    assert_true(comp_len > 8);
    /* cookie 0x1c849304 | 0x10, then the length of the deflated V2 encoding */
    assert_int_equal(comp[0], 0x1c);
    assert_int_equal(comp[1], 0x84);
    assert_int_equal(comp[2], 0x93);
    assert_int_equal(comp[3], 0x14);
    assert_int_equal(((size_t)comp[4] << 24) | ((size_t)comp[5] << 16) | ((size_t)comp[6] << 8) | comp[7],
                     comp_len - 8);
    assert_int_equal(uncompress(back, &back_len, comp + 8, (uLong)(comp_len - 8)), Z_OK);
    assert_int_equal(back_len, raw_len);
    assert_memory_equal(back, raw, raw_len);
    free(raw);
    free(comp);
    tb_hist_free(h);
}

static void test_highest_equivalent(void **state) {
    (void)state;
    assert_int_equal(tb_hist_highest_equivalent(0), 1); /* recorded as 1 µs */
    assert_int_equal(tb_hist_highest_equivalent(2047), 2047);
    assert_int_equal(tb_hist_highest_equivalent(2048), 2049);
    assert_int_equal(tb_hist_highest_equivalent(3000), 3001);
    assert_int_equal(tb_hist_highest_equivalent(5000), 5003);
    /* top bucket: 1525 << 16 = 99942400, width 65536 */
    assert_int_equal(tb_hist_highest_equivalent(100000000), 100007935);
    assert_int_equal(tb_hist_highest_equivalent(300000000), 100007935);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),      cmocka_unit_test(test_one_value),
        cmocka_unit_test(test_two_values), cmocka_unit_test(test_zero_run),
        cmocka_unit_test(test_multibyte),  cmocka_unit_test(test_clamped_top),
        cmocka_unit_test(test_big_counts), cmocka_unit_test(test_dense),
        cmocka_unit_test(test_compressed), cmocka_unit_test(test_highest_equivalent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
