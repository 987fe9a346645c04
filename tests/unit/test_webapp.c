/*
 * test_webapp.c: unit tests of the pure parts of the reference web
 * application: how pages are written (sut/webapp/web_html.h over common/buf.h
 * and common/html.h), the deterministic web data generator (sut/web_load.c)
 * and the in-memory
 * assets, PNGs included (sut/webapp/web_assets.c). The HTTP side is covered by
 * tests/integration/test_webapp.sh against real servers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sut/webapp/web_assets.h"
#include "sut/webapp/web_html.h"
#include "sut/web_load.h"

static void test_escape(void **state) {
    tb_buf b;
    size_t len;
    char *s;
    (void)state;
    tb_buf_init(&b, TB_WEB_PAGE_MAX);
    tb_buf_put(&b, "<p>");
    web_esc(&b, "<script>alert(\"x\") & 'y'</script>");
    web_esc(&b, NULL);
    web_esc(&b, "");
    web_esc(&b, "plain");
    tb_buf_putf(&b, "</p>%d", 42);
    tb_buf_putn(&b, "!?", 1);
    assert_false(b.overflow);
    s = tb_buf_take(&b, &len);
    assert_string_equal(s, "<p>&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;plain</p>42!");
    assert_int_equal(len, strlen(s));
    assert_null(b.ptr);
    free(s);
    /* An empty buffer still hands over a string. */
    s = tb_buf_take(&b, &len);
    assert_non_null(s);
    assert_string_equal(s, "");
    assert_int_equal(len, 0);
    free(s);
}

static void test_buffer_grows(void **state) {
    tb_buf b;
    (void)state;
    tb_buf_init(&b, TB_WEB_PAGE_MAX);
    for (int i = 0; i < 10000; i++)
        web_esc(&b, "a&");
    assert_false(b.overflow);
    assert_int_equal(b.len, 10000 * 6);
    assert_int_equal(strlen(b.ptr), b.len);
    assert_memory_equal(b.ptr + b.len - 6, "a&amp;", 6);
    tb_buf_free(&b);
    assert_null(b.ptr);
}

/* A page past its cap stops growing and says so (the app answers 500). */
static void test_page_cap(void **state) {
    tb_buf b;
    (void)state;
    tb_buf_init(&b, 16);
    tb_buf_put(&b, "0123456789");
    web_esc(&b, "<<"); /* 8 bytes: past 16 */
    assert_true(b.overflow);
    assert_true(b.len <= 16);
    assert_memory_equal(tb_buf_str(&b), "0123456789", 10);
    tb_buf_free(&b);
}

static int count_lines(const char *p, size_t len) {
    int n = 0;
    for (size_t i = 0; i < len; i++)
        n += p[i] == '\n';
    return n;
}

/* Every line of p has exactly `fields` tab-separated fields and no backslash
 * (COPY text escapes). */
static void assert_shape(const char *p, size_t len, int fields) {
    int tabs = 0;
    for (size_t i = 0; i < len; i++) {
        assert_true(p[i] != '\\' && p[i] != '\r');
        if (p[i] == '\t') tabs++;
        if (p[i] == '\n') {
            assert_int_equal(tabs, fields - 1);
            tabs = 0;
        }
    }
    assert_true(len > 0 && p[len - 1] == '\n');
}

static void test_generator_deterministic(void **state) {
    (void)state;
    for (int t = 0; t < TB_WEB_NTABLES; t++) {
        size_t a_len, b_len, c_len;
        char *a = tb_web_generate(1, 10, t, &a_len), *b = tb_web_generate(1, 10, t, &b_len);
        char *c = tb_web_generate(2, 10, t, &c_len);
        assert_non_null(a);
        assert_non_null(c);
        assert_int_equal(a_len, b_len);
        assert_memory_equal(a, b, a_len);
        if (t == TB_WEB_TAGTABLE)
            assert_true(a_len == c_len && memcmp(a, c, a_len) == 0); /* one fixed list */
        else
            assert_true(a_len != c_len || memcmp(a, c, a_len) != 0); /* per-tile data */
        free(a);
        free(b);
        free(c);
    }
}

static void test_generator_sizes(void **state) {
    size_t len;
    char *p;
    (void)state;
    /* Olio: 100 persons per concurrent user; user<k>/password<k>. */
    p = tb_web_generate(3, 10, TB_WEB_PERSONS, &len);
    assert_int_equal(count_lines(p, len), 1000);
    assert_shape(p, len, 8);
    assert_memory_equal(p, "1\tuser1\tpassword1\t", 18);
    assert_non_null(strstr(p, "\n42\tuser42\tpassword42\t"));
    free(p);
    p = tb_web_generate(3, 10, TB_WEB_EVENTS, &len);
    assert_int_equal(count_lines(p, len), 1000 * TB_WEB_EVENTS_PER_PERSON);
    assert_shape(p, len, 9);
    free(p);
    p = tb_web_generate(3, 10, TB_WEB_TAGTABLE, &len);
    assert_int_equal(count_lines(p, len), TB_WEB_TAGS);
    assert_shape(p, len, 2);
    free(p);
    p = tb_web_generate(3, 10, TB_WEB_COMMENTS, &len);
    assert_shape(p, len, 5);
    free(p);
    assert_null(tb_web_generate(0, 10, TB_WEB_PERSONS, &len));
    assert_null(tb_web_generate(1, 0, TB_WEB_PERSONS, &len));
    assert_null(tb_web_generate(1, 10, TB_WEB_NTABLES, &len));
    assert_null(tb_web_generate(1, 10, -1, &len));
}

/* (event, x) pairs are unique (primary keys) and in range; 1..5 tags per event. */
static void test_generator_pairs(void **state) {
    size_t len;
    (void)state;
    for (int table = TB_WEB_EVENT_TAGS; table <= TB_WEB_ATTENDEES; table++) {
        int persons = 2 * TB_WEB_PERSONS_PER_USER, events = persons * TB_WEB_EVENTS_PER_PERSON;
        int limit = table == TB_WEB_EVENT_TAGS ? TB_WEB_TAGS : persons;
        char *p = tb_web_generate(5, 2, table, &len), *line = p, *nl;
        unsigned char *seen = calloc((size_t)(events + 1) * (size_t)(limit + 1), 1);
        int *per_event = calloc((size_t)events + 1, sizeof(int));
        assert_non_null(seen);
        for (; (nl = memchr(line, '\n', len - (size_t)(line - p))) != NULL; line = nl + 1) {
            int e = 0, x = 0;
            assert_int_equal(sscanf(line, "%d\t%d", &e, &x), 2);
            assert_true(e >= 1 && e <= events && x >= 1 && x <= limit);
            assert_int_equal(seen[(size_t)e * (size_t)(limit + 1) + (size_t)x], 0);
            seen[(size_t)e * (size_t)(limit + 1) + (size_t)x] = 1;
            per_event[e]++;
        }
        for (int e = 1; e <= events; e++) {
            if (table == TB_WEB_EVENT_TAGS)
                assert_true(per_event[e] >= 1 && per_event[e] <= 5);
            else
                assert_true(per_event[e] <= 20);
        }
        free(seen);
        free(per_event);
        free(p);
    }
}

static void test_tag_words(void **state) {
    (void)state;
    for (int i = 0; i < TB_WEB_TAGS; i++) {
        const char *w = tb_web_tag(i);
        assert_non_null(w);
        for (const char *c = w; *c; c++)
            assert_true(*c >= 'a' && *c <= 'z');
        for (int j = 0; j < i; j++)
            assert_string_not_equal(w, tb_web_tag(j));
    }
    assert_null(tb_web_tag(TB_WEB_TAGS));
    assert_null(tb_web_tag(-1));
}

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void test_png(void **state) {
    size_t len;
    unsigned char *p = tb_web_png(64, 48, 7, &len);
    (void)state;
    assert_memory_equal(p, "\x89PNG\r\n\x1a\n", 8);
    assert_int_equal(be32(p + 8), 13);
    assert_memory_equal(p + 12, "IHDR", 4);
    assert_int_equal(be32(p + 16), 64);
    assert_int_equal(be32(p + 20), 48);
    assert_int_equal(p[24], 8); /* bit depth */
    assert_int_equal(p[25], 2); /* RGB */
    assert_memory_equal(p + 37, "IDAT", 4);
    /* zlib of stored blocks: header, 5 bytes per block, raw rows, Adler-32. */
    assert_int_equal(be32(p + 33), 2 + 5 + 48 * (64 * 3 + 1) + 4);
    assert_memory_equal(p + len - 8, "IEND", 4);
    free(p);
    /* Bigger than one stored block (64 KiB). */
    p = tb_web_png(200, 200, 1, &len);
    assert_int_equal(be32(p + 33), 2 + 5 * 2 + 200 * (200 * 3 + 1) + 4);
    free(p);
}

static void test_assets(void **state) {
    tb_web_assets as;
    (void)state;
    tb_web_assets_init(&as);
    assert_true(as.n >= 7 + TB_WEB_EVENT_THUMBS + TB_WEB_AVATARS);
    for (int i = 0; i < as.n; i++) {
        assert_true(as.a[i].len > 0);
        assert_non_null(as.a[i].content_type);
        assert_ptr_equal(tb_web_asset_find(&as, as.a[i].path), &as.a[i]);
    }
    for (int i = 0; tb_web_page_css[i]; i++)
        assert_non_null(tb_web_asset_find(&as, tb_web_page_css[i]));
    for (int i = 0; tb_web_page_js[i]; i++)
        assert_non_null(tb_web_asset_find(&as, tb_web_page_js[i]));
    assert_string_equal(tb_web_asset_find(&as, "/static/img/logo.png")->content_type, "image/png");
    assert_non_null(strstr(tb_web_asset_find(&as, "/static/css/base.css")->content_type, "text/css"));
    assert_null(tb_web_asset_find(&as, "/static/css/../css/base.css"));
    assert_null(tb_web_asset_find(&as, "/static/css/base.css/"));
    assert_null(tb_web_asset_find(&as, "/static/../../etc/passwd"));
    assert_null(tb_web_asset_find(&as, "/static/"));
    assert_null(tb_web_asset_find(&as, ""));
    tb_web_assets_free(&as);
    tb_web_assets_free(&as); /* twice is harmless */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),          cmocka_unit_test(test_buffer_grows),
        cmocka_unit_test(test_page_cap),        cmocka_unit_test(test_generator_deterministic),
        cmocka_unit_test(test_generator_sizes), cmocka_unit_test(test_generator_pairs),
        cmocka_unit_test(test_tag_words),       cmocka_unit_test(test_png),
        cmocka_unit_test(test_assets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
