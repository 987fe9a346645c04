/*
 * test_smtp_parse.c: unit tests of SMTP/LMTP reply parsing and DATA
 * dot-stuffing (loadgen/smtp_parse.c). A real Dovecot LHLO dialogue is fed
 * split at every byte boundary and must give the same replies as whole; a
 * stuffed message must unstuff (RFC 5321 4.5.2, as a server does) to the
 * original, whatever its dots.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "loadgen/mail_msg.h"
#include "loadgen/smtp_parse.h"

/* Dovecot 2.3 LMTP, pipelined MAIL/RCPT/DATA, then the delivery and QUIT. */
static const char dialogue[] = "220 vm Dovecot (Debian) ready.\r\n"
                               "250-vm\r\n"
                               "250-8BITMIME\r\n"
                               "250-CHUNKING\r\n"
                               "250-ENHANCEDSTATUSCODES\r\n"
                               "250 PIPELINING\r\n"
                               "250 2.1.0 OK\r\n"
                               "250 2.1.5 OK\r\n"
                               "354 OK\r\n"
                               "250 2.0.0 <tile1-user1@tilebench.test> j9sqHy6gDWuAVgAAg+zDdQ Saved\r\n"
                               "221 2.0.0 Bye\r\n";

typedef struct got {
    int code[16], lines[16];
    unsigned caps[16];
    int n;
} got;

/* Parses replies from a buffer that grows from `first` bytes by `step`. */
static got run(size_t first, size_t step) {
    got g;
    size_t len = strlen(dialogue), off = 0, avail = first < len ? first : len;
    char err[TB_ERR_LEN];
    memset(&g, 0, sizeof g);
    for (;;) {
        tb_smtp_reply r;
        int rc = tb_smtp_reply_parse(dialogue + off, avail - off, &r, err);
        assert_true(rc >= 0);
        if (rc == 1) {
            assert_true(g.n < 16);
            g.code[g.n] = r.code;
            g.lines[g.n] = r.lines;
            g.caps[g.n] = r.caps;
            g.n++;
            off += r.len;
            continue;
        }
        if (avail == len) break;
        avail = avail + step < len ? avail + step : len;
    }
    assert_int_equal(off, len);
    return g;
}

static void replies_at_every_split(void **state) {
    got whole = run(strlen(dialogue), 1), g;
    (void)state;
    assert_int_equal(whole.n, 7);
    assert_int_equal(whole.code[0], 220);
    assert_int_equal(whole.code[1], 250);
    assert_int_equal(whole.lines[1], 5);
    assert_true(whole.caps[1] & TB_SMTP_CAP_PIPELINING);
    assert_true(whole.caps[1] & TB_SMTP_CAP_8BITMIME);
    assert_true(whole.caps[1] & TB_SMTP_CAP_CHUNKING);
    assert_int_equal(whole.caps[0], 0);
    assert_int_equal(whole.code[4], 354);
    assert_int_equal(whole.code[6], 221);
    for (size_t k = 0; k <= strlen(dialogue); k++) {
        g = run(k, strlen(dialogue));
        assert_memory_equal(&g, &whole, sizeof g);
    }
    g = run(0, 1);
    assert_memory_equal(&g, &whole, sizeof g);
}

static void no_pipelining_and_bare_lines(void **state) {
    static const char ehlo[] = "250-mx.example\r\n250-SIZE 1000\r\n250-PIPELININGX\r\n250 HELP\r\n";
    static const char bare[] = "250\r\n";
    static const char lf[] = "250-a\n250 b\n";
    tb_smtp_reply r;
    char err[TB_ERR_LEN];
    (void)state;
    assert_int_equal(tb_smtp_reply_parse(ehlo, strlen(ehlo), &r, err), 1);
    assert_int_equal(r.caps & TB_SMTP_CAP_PIPELINING, 0); /* a keyword, not a prefix */
    assert_int_equal(r.lines, 4);
    assert_int_equal(tb_smtp_reply_parse(bare, strlen(bare), &r, err), 1);
    assert_int_equal(r.code, 250);
    assert_int_equal(r.len, 5);
    assert_int_equal(tb_smtp_reply_parse(lf, strlen(lf), &r, err), 1);
    assert_int_equal(r.lines, 2);
}

static void garbage_is_an_error(void **state) {
    static const char *const bad[] = {"HTTP/1.1 200 OK\r\n", "* OK IMAP ready\r\n", "2x0 hi\r\n", "250-a\r\n354 b\r\n",
                                      "250+x\r\n",           "099 low\r\n",         "25\r\n"};
    tb_smtp_reply r;
    char err[TB_ERR_LEN], *big;
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (tb_smtp_reply_parse(bad[i], strlen(bad[i]), &r, err) != -1) fail_msg("'%s' parsed as a reply", bad[i]);
        assert_true(strlen(err) > 0);
    }
    /* garbage is caught on its first bytes, before a line end arrives */
    assert_int_equal(tb_smtp_reply_parse("HT", 2, &r, err), -1);
    assert_int_equal(tb_smtp_reply_parse("25", 2, &r, err), 0);
    big = malloc(TB_SMTP_MAX_LINE + 8);
    memcpy(big, "250 ", 4);
    memset(big + 4, 'x', TB_SMTP_MAX_LINE + 4);
    assert_int_equal(tb_smtp_reply_parse(big, TB_SMTP_MAX_LINE + 8, &r, err), -1);
    free(big);
}

/* Undoes stuffing as a server does: strips the terminator and one leading
 * dot of every line. Returns the length, or -1 when no terminator. */
static long unstuff(const char *in, size_t len, char *out) {
    size_t o = 0, i = 0;
    while (i < len) {
        const char *lf = memchr(in + i, '\n', len - i);
        size_t ll = lf ? (size_t)(lf - (in + i)) + 1 : len - i;
        if (ll == 3 && memcmp(in + i, ".\r\n", 3) == 0) return i + 3 == len ? (long)o : -1;
        if (in[i] == '.') {
            i++;
            ll--;
        }
        memcpy(out + o, in + i, ll);
        o += ll;
        i += ll;
    }
    return -1;
}

static void dot_stuffing(void **state) {
    static const char *const msgs[] = {
        "", ".", "a\r\n", ".\r\n", "..\r\n.x\r\n", "a\r\n.\r\nb", "no crlf", "x\r\n.\r\n.\r\n", "cr at end\r"};
    static const char *const want[] = {".\r\n",
                                       "..\r\n.\r\n",
                                       "a\r\n.\r\n",
                                       "..\r\n.\r\n",
                                       "...\r\n..x\r\n.\r\n",
                                       "a\r\n..\r\nb\r\n.\r\n",
                                       "no crlf\r\n.\r\n",
                                       "x\r\n..\r\n..\r\n.\r\n",
                                       "cr at end\r\n.\r\n"};
    char out[128];
    (void)state;
    for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
        size_t n = tb_smtp_dot_stuff(msgs[i], strlen(msgs[i]), out);
        assert_true(n <= tb_smtp_stuffed_cap(strlen(msgs[i])));
        out[n] = '\0';
        assert_string_equal(out, want[i]);
    }
}

/* A real workload message (the corpus has dot lines and lone dots) survives
 * stuffing and unstuffing byte for byte, checksum included. */
static void message_round_trip(void **state) {
    tb_mail_corpus c;
    size_t len, n;
    long back;
    char *m, *st, *un, err[TB_ERR_LEN] = "";
    int dots = 0;
    (void)state;
    tb_mail_corpus_init(&c, 256 * 1024, 42);
    m = tb_mail_msg_build(&c, "a@b", "c@d", "x@y", 100000, 7, &len);
    for (size_t i = 0; i + 1 < len; i++)
        if (m[i] == '\n' && m[i + 1] == '.') dots++;
    assert_true(dots > 10);
    st = malloc(tb_smtp_stuffed_cap(len));
    un = malloc(len + 1);
    n = tb_smtp_dot_stuff(m, len, st);
    assert_int_equal(n, len + (size_t)dots + 3);
    back = unstuff(st, n, un);
    assert_int_equal(back, (long)len);
    assert_memory_equal(un, m, len);
    if (tb_mail_msg_verify(un, len, err) != 0) fail_msg("%s", err);
    free(st);
    free(un);
    free(m);
    tb_mail_corpus_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replies_at_every_split), cmocka_unit_test(no_pipelining_and_bare_lines),
        cmocka_unit_test(garbage_is_an_error),    cmocka_unit_test(dot_stuffing),
        cmocka_unit_test(message_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
