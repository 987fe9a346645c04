/*
 * test_imap_parse.c: unit tests of the IMAP response framing and reading
 * (loadgen/imap_parse.c). The framing is fed real Dovecot-shaped server
 * output split at every byte boundary (first k bytes, then the rest) and
 * byte by byte, and must find the same responses as when it gets it whole.
 * Also: FETCH attribute reading with literals, SEARCH, APPENDUID, quoting,
 * garbage, and the message checksum check on a fetched body.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen/imap_parse.h"
#include "loadgen/mail_msg.h"

/* Server output as Dovecot 2.3 sends it (SELECT, a FETCH with a body
 * literal whose text holds CRLFs, a ')' and a "{3}" inside, APPEND). */
static const char session[] =
    "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n"
    "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft \\*)] Flags permitted.\r\n"
    "* 2 EXISTS\r\n"
    "* 0 RECENT\r\n"
    "* OK [UIDVALIDITY 1796055086] UIDs valid\r\n"
    "t1 OK [READ-WRITE] Select completed (0.001 + 0.000 secs).\r\n"
    "* 2 FETCH (UID 7 FLAGS (\\Seen) BODY[] {37}\r\n"
    "Subject: x\r\n\r\nline one {3}\r\n)\r\n.dot\r\n"
    " RFC822.SIZE 40)\r\n"
    "* SEARCH 3 7 9\r\n"
    "+ OK\r\n"
    "t2 OK [APPENDUID 1796055086 12] Append completed.\r\n"
    "* 1 EXPUNGE\r\n"
    "t3 NO [NONEXISTENT] Mailbox doesn't exist: Nope\r\n";

/* Frames buf[0..len) by feeding the scanner growing prefixes: first `split`
 * bytes, then `step` more at a time. Writes response lengths into out. */
static size_t frame(const char *buf, size_t len, size_t split, size_t step, size_t *out, size_t cap) {
    tb_imap_scan s;
    char err[TB_ERR_LEN];
    size_t off = 0, avail = split < len ? split : len, n = 0;
    tb_imap_scan_reset(&s);
    for (;;) {
        ssize_t r = tb_imap_scan_next(&s, buf + off, avail - off, err);
        assert_true(r >= 0);
        if (r > 0) {
            assert_true(n < cap);
            out[n++] = (size_t)r;
            off += (size_t)r;
            tb_imap_scan_reset(&s);
            continue;
        }
        if (avail == len) break;
        avail = avail + step < len ? avail + step : len;
    }
    assert_int_equal(off, len); /* every byte belongs to a response */
    return n;
}

static void framing_at_every_split(void **state) {
    size_t whole[64], part[64], len = strlen(session), nw, np;
    (void)state;
    nw = frame(session, len, len, len, whole, 64);
    assert_int_equal(nw, 12);
    for (size_t k = 0; k <= len; k++) {
        np = frame(session, len, k, len, part, 64);
        assert_int_equal(np, nw);
        assert_memory_equal(part, whole, nw * sizeof whole[0]);
    }
    np = frame(session, len, 0, 1, part, 64); /* one byte per read */
    assert_int_equal(np, nw);
    assert_memory_equal(part, whole, nw * sizeof whole[0]);
    np = frame(session, len, 0, 7, part, 64);
    assert_int_equal(np, nw);
    assert_memory_equal(part, whole, nw * sizeof whole[0]);
}

/* Returns the i-th response of session (0-based) parsed. */
static tb_imap_resp nth(int i, const char **start, size_t *rlen) {
    size_t lens[64], off = 0;
    tb_imap_resp r;
    char err[TB_ERR_LEN] = "";
    size_t n = frame(session, strlen(session), strlen(session), 1, lens, 64);
    assert_true((size_t)i < n);
    for (int k = 0; k < i; k++)
        off += lens[k];
    if (tb_imap_resp_parse(session + off, lens[i], &r, err) != 0) fail_msg("%s", err);
    if (start) *start = session + off;
    if (rlen) *rlen = lens[i];
    return r;
}

static void responses(void **state) {
    tb_imap_resp r;
    tb_imap_fetch f;
    uint32_t nums[8], uid = 0;
    size_t n = 0;
    char err[TB_ERR_LEN] = "";
    (void)state;

    r = nth(2, NULL, NULL);
    assert_int_equal(r.kind, TB_IMAP_UNTAGGED);
    assert_true(r.has_num);
    assert_int_equal(r.num, 2);
    assert_string_equal(r.word, "EXISTS");

    r = nth(5, NULL, NULL);
    assert_int_equal(r.kind, TB_IMAP_TAGGED);
    assert_string_equal(r.tag, "t1");
    assert_int_equal(r.status, TB_IMAP_OK);

    r = nth(1, NULL, NULL);
    assert_int_equal(r.status, TB_IMAP_OK);
    assert_false(r.has_num);

    r = nth(6, NULL, NULL);
    assert_string_equal(r.word, "FETCH");
    if (tb_imap_fetch_parse(&r, &f, err) != 0) fail_msg("%s", err);
    assert_int_equal(f.seq, 2);
    assert_true(f.has_uid);
    assert_int_equal(f.uid, 7);
    assert_true(f.has_flags);
    assert_true(f.seen);
    assert_false(f.deleted);
    assert_true(f.has_size);
    assert_int_equal(f.size, 40);
    assert_non_null(f.body);
    assert_int_equal(f.body_len, 37);
    assert_memory_equal(f.body, "Subject: x\r\n\r\nline one {3}\r\n)\r\n.dot\r\n", 37);
    assert_string_equal(f.section, "");

    r = nth(7, NULL, NULL);
    assert_string_equal(r.word, "SEARCH");
    if (tb_imap_search_parse(&r, nums, 8, &n, err) != 0) fail_msg("%s", err);
    assert_int_equal(n, 3);
    assert_int_equal(nums[0], 3);
    assert_int_equal(nums[2], 9);
    if (tb_imap_search_parse(&r, nums, 1, &n, err) != 0) fail_msg("%s", err);
    assert_int_equal(n, 3); /* counted beyond cap */

    r = nth(8, NULL, NULL);
    assert_int_equal(r.kind, TB_IMAP_CONTINUE);

    r = nth(9, NULL, NULL);
    assert_int_equal(tb_imap_appenduid(&r, &uid), 1);
    assert_int_equal(uid, 12);

    r = nth(10, NULL, NULL);
    assert_string_equal(r.word, "EXPUNGE");
    assert_int_equal(r.num, 1);

    r = nth(11, NULL, NULL);
    assert_int_equal(r.status, TB_IMAP_NO);
    assert_int_equal(tb_imap_appenduid(&r, &uid), 0);
}

static void fetch_variants(void **state) {
    static const char hdr[] =
        "* 3 FETCH (UID 9 RFC822.SIZE 120 FLAGS (\\Deleted \\Seen) "
        "BODY[HEADER.FIELDS (SUBJECT FROM)]<0> {5}\r\nab\r\nc "
        "INTERNALDATE \"30-Nov-2026 16:11:26 +0000\" ENVELOPE (NIL \"x\" ((NIL NIL \"a\" \"b\")) NIL))\r\n";
    static const char nil[] = "* 4 FETCH (BODY[] NIL UID 10)\r\n";
    static const char quoted[] = "* 5 FETCH (BODY[TEXT] \"hi \\\"there\\\"\" UID 11)\r\n";
    tb_imap_resp r;
    tb_imap_fetch f;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_imap_resp_parse(hdr, strlen(hdr), &r, err), 0);
    if (tb_imap_fetch_parse(&r, &f, err) != 0) fail_msg("%s", err);
    assert_int_equal(f.uid, 9);
    assert_int_equal(f.size, 120);
    assert_true(f.deleted && f.seen);
    assert_int_equal(f.body_len, 5);
    assert_memory_equal(f.body, "ab\r\nc", 5);
    assert_string_equal(f.section, "HEADER.FIELDS (SUBJECT FROM)");

    assert_int_equal(tb_imap_resp_parse(nil, strlen(nil), &r, err), 0);
    assert_int_equal(tb_imap_fetch_parse(&r, &f, err), 0);
    assert_null(f.body);
    assert_int_equal(f.uid, 10);

    assert_int_equal(tb_imap_resp_parse(quoted, strlen(quoted), &r, err), 0);
    assert_int_equal(tb_imap_fetch_parse(&r, &f, err), 0);
    assert_int_equal(f.uid, 11);
    assert_int_equal(f.body_len, strlen("hi \\\"there\\\""));
}

static void garbage_is_an_error(void **state) {
    static const char *const bad_resp[] = {
        "HTTP/1.1 400 Bad Request\r\n", "* \r\n", "*x\r\n", "\r\n", "t1 MAYBE done\r\n", "t1\r\n"};
    static const char *const bad_fetch[] = {"* 1 FETCH UID 5\r\n", "* 1 FETCH (UID x)\r\n",
                                            "* 1 FETCH (BODY[] {10}\r\nabc)\r\n", "* 1 FETCH (FLAGS (\\Seen\r\n",
                                            "* 1 FETCH (BODY[ {1}\r\nx)\r\n"};
    tb_imap_resp r;
    tb_imap_fetch f;
    tb_imap_scan s;
    char err[TB_ERR_LEN], *big;
    (void)state;
    for (size_t i = 0; i < sizeof bad_resp / sizeof bad_resp[0]; i++) {
        err[0] = '\0';
        if (tb_imap_resp_parse(bad_resp[i], strlen(bad_resp[i]), &r, err) == 0)
            fail_msg("'%s' parsed as a response", bad_resp[i]);
        assert_true(strlen(err) > 0);
    }
    for (size_t i = 0; i < sizeof bad_fetch / sizeof bad_fetch[0]; i++) {
        assert_int_equal(tb_imap_resp_parse(bad_fetch[i], strlen(bad_fetch[i]), &r, err), 0);
        if (tb_imap_fetch_parse(&r, &f, err) == 0) fail_msg("'%s' parsed as a FETCH", bad_fetch[i]);
    }
    /* An endless line without LF is garbage once it passes the limit. */
    big = malloc(TB_IMAP_MAX_LINE + 10);
    memset(big, 'x', TB_IMAP_MAX_LINE + 10);
    tb_imap_scan_reset(&s);
    assert_int_equal(tb_imap_scan_next(&s, big, 100, err), 0);
    assert_int_equal(tb_imap_scan_next(&s, big, TB_IMAP_MAX_LINE + 10, err), -1);
    free(big);
    /* An absurd literal size is refused before waiting for it. */
    tb_imap_scan_reset(&s);
    {
        static const char huge[] = "* 1 FETCH (BODY[] {99999999999}\r\n";
        assert_int_equal(tb_imap_scan_next(&s, huge, strlen(huge), err), -1);
    }
    /* A connection that closes mid-literal leaves the scanner waiting: the
     * caller sees EOF with a response incomplete (counted as an I/O error). */
    tb_imap_scan_reset(&s);
    {
        static const char cut[] = "* 1 FETCH (BODY[] {100}\r\nabc";
        assert_int_equal(tb_imap_scan_next(&s, cut, strlen(cut), err), 0);
    }
    assert_int_equal(s.in_lit, 1);
}

static void quoting(void **state) {
    char out[32];
    (void)state;
    assert_int_equal(tb_imap_quote("tile1-user1", out, sizeof out), 0);
    assert_string_equal(out, "\"tile1-user1\"");
    assert_int_equal(tb_imap_quote("a\"b\\c", out, sizeof out), 0);
    assert_string_equal(out, "\"a\\\"b\\\\c\"");
    assert_int_equal(tb_imap_quote("bad\r\n", out, sizeof out), -1);
    assert_int_equal(tb_imap_quote("0123456789", out, 13), 0); /* 10 + 2 quotes + NUL */
    assert_int_equal(tb_imap_quote("0123456789", out, 12), -1);
}

/* A message as built is verified; as Dovecot returns it (with headers added
 * on top) it still verifies; a changed body byte does not. */
static void message_checksum(void **state) {
    tb_mail_corpus c;
    size_t len;
    char err[TB_ERR_LEN] = "", *m, *fetched;
    static const char added[] = "Return-Path: <a@b>\r\nDelivered-To: x@y\r\n";
    (void)state;
    tb_mail_corpus_init(&c, 64 * 1024, 1);
    m = tb_mail_msg_build(&c, "a@b", "x@y", "id1@t", 20000, 12345, &len);
    assert_true(len > 20000 && len < 21000);
    if (tb_mail_msg_verify(m, len, err) != 0) fail_msg("%s", err);
    fetched = malloc(len + sizeof added);
    memcpy(fetched, added, sizeof added - 1);
    memcpy(fetched + sizeof added - 1, m, len);
    assert_int_equal(tb_mail_msg_verify(fetched, len + sizeof added - 1, err), 0);
    fetched[len + sizeof added - 10] ^= 1;
    assert_int_equal(tb_mail_msg_verify(fetched, len + sizeof added - 1, err), -1);
    assert_non_null(strstr(err, "checksum"));
    assert_int_equal(tb_mail_msg_verify("Subject: x\r\n\r\nbody\r\n", 20, err), -1);
    assert_non_null(strstr(err, "X-Tilebench-Checksum"));
    free(fetched);
    free(m);
    tb_mail_corpus_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(framing_at_every_split), cmocka_unit_test(responses), cmocka_unit_test(fetch_variants),
        cmocka_unit_test(garbage_is_an_error),    cmocka_unit_test(quoting),   cmocka_unit_test(message_checksum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
