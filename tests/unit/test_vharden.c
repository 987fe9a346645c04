/*
 * test_vharden.c: check against crafted bundles (verify/): a CSV reader that
 * agrees with Python's csv module on what it refuses (a column named twice,
 * a NUL byte, numbers strtod would take but the bundle never writes), the
 * model's caps (tiles, levels, meters, a meter_idx past int), levels found
 * by id however many there are, the sample-rate rule on negative clocks
 * and on a window with no interval to judge, and the archive: one gzip
 * member and nothing after it, nothing but zeros after the tar's end, links
 * named as links.
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
#include <time.h>
#include <zlib.h>

#include "common/buf.h"
#include "verify/verify_int.h"

#define S          1000000LL /* µs per second */

#define POWER_HEAD "run_id,level_id,meter_idx,mono_us,wall_us,watts,flags,uncertainty_pct\n"
#define LEVEL_HEAD "id,run_id,tiles,phase,repeat,alone,steady_start_mono_us,steady_end_mono_us\n"

static void expect_csv_error(const char *text, size_t len, const char *want) {
    tb_vcsv t;
    char err[TB_ERR_LEN] = "";
    assert_int_equal(tb_vcsv_parse("data/t.csv", text, len, &t, err), -1);
    if (!strstr(err, want)) {
        print_error("error '%s' lacks '%s'\n", err, want);
        fail();
    }
    tb_vcsv_free(&t);
}

static void test_csv_header_and_nul(void **state) {
    static const char nul_plain[] = "a,b\n1,2\n3,4\0 5\n", nul_quoted[] = "a,b\n1,\"x\0y\"\n";
    (void)state;
    expect_csv_error("id,watts,id\n1,2,3\n", 18, "line 1: column 3 is named id, as column 1 is");
    expect_csv_error(nul_plain, sizeof nul_plain - 1, "data/t.csv line 3, column 2: a NUL byte");
    expect_csv_error(nul_quoted, sizeof nul_quoted - 1, "line 2, column 2: a NUL byte");
}

/* Each cell of column x read as a real (want 1 or -1) and as an integer. */
static void test_csv_numbers(void **state) {
    static const struct {
        const char *cell;
        int real, integer;
    } v[] = {{"12", 1, 1},         {"-7", 1, 1},
             {"0.1", 1, -1},       {"1.0000000000000001e-300", 1, -1},
             {"-1.5E+20", 1, -1},  {"inf", 1, -1},
             {"-inf", 1, -1},      {"nan", -1, -1},
             {"0x10", -1, -1},     {" 12", -1, -1},
             {"12 ", -1, -1},      {"+1", -1, -1},
             {"infinity", -1, -1}, {"1e", -1, -1},
             {"-", -1, -1},        {".", -1, -1},
             {"1e5x", -1, -1},     {"99999999999999999999", 1, -1}};
    (void)state;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char text[128];
        tb_vcsv t;
        char err[TB_ERR_LEN];
        double d;
        int64_t n;
        snprintf(text, sizeof text, "x\n\"%s\"\n", v[i].cell);
        assert_int_equal(tb_vcsv_parse("t.csv", text, strlen(text), &t, err), 0);
        if (tb_vcsv_real(&t, 0, 0, &d) != v[i].real || tb_vcsv_int(&t, 0, 0, &n) != v[i].integer) {
            print_error("'%s': real %d (want %d), integer %d (want %d)\n", v[i].cell, tb_vcsv_real(&t, 0, 0, &d),
                        v[i].real, tb_vcsv_int(&t, 0, 0, &n), v[i].integer);
            fail();
        }
        tb_vcsv_free(&t);
    }
}

/* A model of levels.csv text and power_samples.csv text, one meter; 0 or
 * -1 with err. */
static int build(tb_vdata *d, const char *levels, const char *power, char *err) {
    memset(d, 0, sizeof *d);
    assert_int_equal(tb_vcsv_parse("data/levels.csv", levels, strlen(levels), &d->levels, err), 0);
    assert_int_equal(tb_vcsv_parse("data/power_samples.csv", power, strlen(power), &d->power, err), 0);
    assert_int_equal(tb_vcsv_parse("data/meters.csv", "idx\n0\n", 6, &d->meters, err), 0);
    return tb_vmodel_build(d, err);
}

static void unbuild(tb_vdata *d) {
    tb_vcsv_free(&d->levels);
    tb_vcsv_free(&d->power);
    tb_vcsv_free(&d->meters);
    tb_vmodel_free(d);
}

static void expect_model_error(const char *levels, const char *power, const char *want) {
    tb_vdata d;
    char err[TB_ERR_LEN] = "";
    assert_int_equal(build(&d, levels, power, err), -1);
    if (!strstr(err, want)) {
        print_error("error '%s' lacks '%s'\n", err, want);
        fail();
    }
    unbuild(&d);
}

static void test_model_caps(void **state) {
    const char *one = LEVEL_HEAD "1,1,1,1,1,,0,4000000\n";
    (void)state;
    /* a trillion tiles would be a trillion turns of the figures' loop */
    expect_model_error(LEVEL_HEAD "1,1,1000000000000,1,1,,0,4000000\n", POWER_HEAD,
                       "data/levels.csv row 1: tiles 1000000000000 is out of range (1..100000)");
    expect_model_error(LEVEL_HEAD "1,1,0,1,1,,0,4000000\n", POWER_HEAD, "tiles 0 is out of range");
    /* 2^32 must not wrap to meter 0 */
    expect_model_error(one, POWER_HEAD "1,1,4294967296,500000,0,100,0,\n",
                       "data/power_samples.csv row 1: meter_idx 4294967296 is out of range (0..63)");
    expect_model_error(one, POWER_HEAD "1,1,-1,500000,0,100,0,\n", "meter_idx -1 is out of range");
    /* two levels of one id: which one a sample is of would be a guess */
    expect_model_error(LEVEL_HEAD "1,1,1,1,1,,0,4000000\n2,1,1,1,1,,5000000,9000000\n1,1,2,1,1,,10000000,14000000\n",
                       POWER_HEAD, "data/levels.csv row 3: id 1 is the id of row 1 too");
    expect_model_error(LEVEL_HEAD "1,1,100000,1,1,,0,4000000\n2,1,100000,1,2,,0,4000000\n"
                                  "3,1,100000,1,3,,0,4000000\n4,1,100000,1,4,,0,4000000\n"
                                  "5,1,100000,1,5,,0,4000000\n6,1,100000,1,6,,0,4000000\n"
                                  "7,1,100000,1,7,,0,4000000\n8,1,100000,1,8,,0,4000000\n"
                                  "9,1,100000,1,9,,0,4000000\n10,1,100000,1,10,,0,4000000\n"
                                  "11,1,1,1,11,,0,4000000\n",
                       POWER_HEAD, "row 11: the levels' tiles sum to more than 1000000");
}

/* More levels than check reads is refused by its line; 10000 levels and a
 * sample in each are placed by a binary search, in well under a second. */
static void test_many_levels(void **state) {
    tb_buf lv, pw;
    tb_vdata d;
    char err[TB_ERR_LEN] = "";
    struct timespec a, b;
    (void)state;
    tb_buf_init(&lv, 0);
    tb_buf_init(&pw, 0);
    tb_buf_put(&lv, LEVEL_HEAD);
    tb_buf_put(&pw, POWER_HEAD);
    for (int i = TB_V_LEVELS_MAX; i >= 1; i--) { /* ids descending: a linear search would walk far */
        tb_buf_putf(&lv, "%d,1,1,1,%d,,%lld,%lld\n", i, i, (long long)i * 10 * S, (long long)i * 10 * S + 4 * S);
        for (int k = 0; k < 4; k++)
            tb_buf_putf(&pw, "1,%d,0,%lld,0,100,0,\n", i, (long long)i * 10 * S + k * S + S / 2);
    }
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(build(&d, tb_buf_str(&lv), tb_buf_str(&pw), err), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_int_equal(d.n_lv, TB_V_LEVELS_MAX);
    assert_int_equal(d.lv[0].id, TB_V_LEVELS_MAX);
    assert_int_equal(d.lv[0].n_s, 4);
    assert_int_equal(d.lv[TB_V_LEVELS_MAX - 1].n_s, 4);
    print_message("  %d levels, %d samples placed in %.3f s\n", TB_V_LEVELS_MAX, 4 * TB_V_LEVELS_MAX,
                  (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    unbuild(&d);
    tb_buf_putf(&lv, "%d,1,1,1,1,,0,4000000\n", TB_V_LEVELS_MAX + 1);
    expect_model_error(tb_buf_str(&lv), POWER_HEAD, "data/levels.csv line 10002: more than 10000 levels");
    tb_buf_free(&lv);
    tb_buf_free(&pw);
}

static size_t fill(tb_vsample *s, size_t at, int m, size_t n, int64_t start, int64_t step) {
    for (size_t i = 0; i < n; i++) {
        tb_vsample x = {m, start + (int64_t)i * step, 100.0, 0u, NAN};
        s[at + i] = x;
    }
    return at + n;
}

static void test_rate_negative_clock(void **state) {
    tb_vsample s[20];
    char fig[300];
    size_t n;
    (void)state;
    /* samples 100 ms apart at a clock far below zero: too fast, a FAIL */
    n = fill(s, 0, 0, 10, -((int64_t)1 << 62), S / 10);
    assert_int_equal(tb_vrule_sample_rate(s, n, 1, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "meter 0: intervals 0.100..0.100 s"));
    /* one per second below zero passes */
    n = fill(s, 0, 0, 10, -100 * S, S);
    assert_int_equal(tb_vrule_sample_rate(s, n, 1, fig, sizeof fig), 1);
    /* a window with one sample per meter gives no interval: a FAIL */
    n = fill(s, 0, 0, 1, 0, S);
    n = fill(s, n, 1, 1, S / 2, S);
    assert_int_equal(tb_vrule_sample_rate(s, n, 2, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "fewer than 2 samples"));
    /* and so does a meter with one while another has ten */
    n = fill(s, 0, 0, 10, 0, S);
    n = fill(s, n, 1, 1, S / 2, S);
    assert_int_equal(tb_vrule_sample_rate(s, n, 2, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "meter 1: fewer than 2 samples"));
    assert_int_equal(tb_vrule_sample_rate(s, 0, 1, fig, sizeof fig), 0);
}

/* The edges rule's binary search: the nearest sample on either side, of
 * the right meter, at the array's ends too. */
static void test_edges_search(void **state) {
    tb_vsample s[30];
    char fig[300];
    size_t n;
    (void)state;
    n = fill(s, 0, 0, 10, 0, S);             /* meter 0: 0..9 s */
    n = fill(s, n, 1, 10, 100 * S, S);       /* meter 1: 100..109 s */
    n = fill(s, n, 2, 10, 3 * S + S / 5, S); /* meter 2: 3.2..12.2 s */
    assert_int_equal(tb_vrule_edges(s, 10, 1, 2 * S + S / 5, 7 * S + 4 * S / 5, fig, sizeof fig), 1);
    assert_non_null(strstr(fig, "the start, 200 ms from meter 0"));
    /* meter 1's samples all lie after the window: 90 s from its end */
    assert_int_equal(tb_vrule_edges(s, n, 3, 5 * S, 10 * S, fig, sizeof fig), 0);
    assert_non_null(strstr(fig, "the start, 95000 ms from meter 1"));
    /* past every sample of meter 0, before meter 1's */
    assert_int_equal(tb_vrule_edges(s, 10, 1, 9 * S + S / 10, 9 * S + S / 5, fig, sizeof fig), 1);
    assert_non_null(strstr(fig, "the end, 200 ms from meter 0"));
}

#define F "tilebench-run-00000000-0000-0000-0000-000000000001/"

/* A tar in memory: a file "F/a.csv", and a symbolic or hard link when
 * link is 's' or 'h'. */
static unsigned char *tar_mem(char link, size_t *len) {
    size_t cap = 1 << 16;
    unsigned char *buf = malloc(cap);
    struct archive *a = archive_write_new();
    struct archive_entry *e = archive_entry_new();
    assert_non_null(buf);
    archive_write_set_format_pax_restricted(a);
    assert_int_equal(archive_write_open_memory(a, buf, cap, len), ARCHIVE_OK);
    archive_entry_set_pathname(e, F "a.csv");
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, 4);
    archive_write_header(a, e);
    archive_write_data(a, "x\n1\n", 4);
    if (link) {
        archive_entry_clear(e);
        archive_entry_set_pathname(e, F "b.csv");
        archive_entry_set_perm(e, 0644);
        if (link == 's') {
            archive_entry_set_filetype(e, AE_IFLNK);
            archive_entry_set_symlink(e, "/etc/passwd");
        } else {
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_hardlink(e, F "a.csv");
        }
        archive_write_header(a, e);
    }
    archive_entry_free(e);
    archive_write_close(a);
    archive_write_free(a);
    return buf;
}

/* data gzip-compressed (one member) appended to out at *at. */
static void gz_append(unsigned char *out, size_t cap, size_t *at, const void *data, size_t len) {
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)len;
    z.next_out = out + *at;
    z.avail_out = (uInt)(cap - *at);
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *at = (size_t)(z.next_out - out);
    deflateEnd(&z);
}

static void expect_archive(const unsigned char *data, size_t len, const char *want) {
    tb_vbundle b;
    tb_vresult r = {0};
    char err[TB_ERR_LEN] = "";
    int rc = tb_vbundle_read("x.tar.gz", data, len, &b, err);
    if (!want) {
        if (rc != 0) print_error("refused: %s\n", err);
        assert_int_equal(rc, 0);
        assert_non_null(tb_vbundle_find(&b, "a.csv"));
    } else if (rc == 0) { /* read: then a manifest line must say it */
        int found = 0;
        tb_vcheck_manifest(&b, NULL, &r);
        for (size_t i = 0; i < r.n; i++)
            found |= !r.lines[i].pass && strstr(r.lines[i].figure, want) != NULL;
        if (!found) print_error("read, and no manifest line holds '%s'\n", want);
        assert_true(found);
        tb_vresult_free(&r);
    } else if (!strstr(err, want)) {
        print_error("error '%s' lacks '%s'\n", err, want);
        fail();
    }
    tb_vbundle_free(&b);
}

static void test_archive_tail(void **state) {
    size_t tl, hl, n = 0;
    unsigned char *tar = tar_mem(0, &tl), *hidden = tar_mem('s', &hl), out[1 << 17];
    (void)state;
    gz_append(out, sizeof out, &n, tar, tl);
    expect_archive(out, n, NULL);
    /* trailing bytes after the gzip stream */
    memcpy(out + n, "garbage", 7);
    expect_archive(out, n + 7, "7 bytes after the gzip stream's end");
    /* a second member, holding another tar: tar -xzi would extract it */
    gz_append(out, sizeof out, &n, hidden, hl);
    expect_archive(out, n, "bytes after the gzip stream's end");
    /* a file (header and data) after the tar's end-of-archive marker (two zero blocks) */
    assert_true(tl + 1024 <= 1 << 16);
    memcpy(tar + tl, hidden, 1024);
    n = 0;
    gz_append(out, sizeof out, &n, tar, tl + 1024);
    expect_archive(out, n, "data after the tar's end-of-archive marker");
    /* zero blocks after the end are padding */
    memset(tar + tl, 0, 1024);
    n = 0;
    gz_append(out, sizeof out, &n, tar, tl + 1024);
    expect_archive(out, n, NULL);
    /* a gzip stream cut short */
    n = 0;
    gz_append(out, sizeof out, &n, hidden, hl);
    expect_archive(out, n - 10, "not a readable gzip stream");
    free(tar);
    free(hidden);
}

static void test_archive_links(void **state) {
    size_t tl, n = 0;
    unsigned char *tar = tar_mem('s', &tl), out[1 << 17];
    (void)state;
    gz_append(out, sizeof out, &n, tar, tl);
    expect_archive(out, n, "b.csv' is a symbolic link: a bundle holds regular files only");
    free(tar);
    tar = tar_mem('h', &tl);
    n = 0;
    gz_append(out, sizeof out, &n, tar, tl);
    expect_archive(out, n, "b.csv' is a hard link: a bundle holds regular files only");
    free(tar);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_header_and_nul),  cmocka_unit_test(test_csv_numbers),
        cmocka_unit_test(test_model_caps),          cmocka_unit_test(test_many_levels),
        cmocka_unit_test(test_rate_negative_clock), cmocka_unit_test(test_edges_search),
        cmocka_unit_test(test_archive_tail),        cmocka_unit_test(test_archive_links),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
