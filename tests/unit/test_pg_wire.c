/*
 * test_pg_wire.c: unit tests of the PostgreSQL v3 wire halves the oltp
 * workload uses (loadgen/pg_wire.c). Bind/Execute/Sync must be the exact
 * bytes written out here by hand from the protocol's message formats.
 * Backend replies (also written by hand, as a PostgreSQL server sends them)
 * are fed whole, split in two at every byte boundary and byte by byte, each
 * piece an exact-size heap copy: the reply read (rows, the first field, an
 * error's fields, the transaction status) and the bytes taken must not
 * depend on the split, and reading stops at the end of ReadyForQuery. Also:
 * a 30 kB first field, errors cut to fit, a FATAL without ReadyForQuery,
 * asynchronous messages passed over, and streams that cannot be a reply.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "loadgen/pg_wire.h"

/* ---- Bind/Execute/Sync out ---- */

/* Execute of the unnamed portal, every row (max rows 0), then Sync. */
#define EXECUTE_SYNC                                                                                                   \
    "E\0\0\0\x09"                                                                                                      \
    "\0"                                                                                                               \
    "\0\0\0\0"                                                                                                         \
    "S\0\0\0\x04"

/* Checks tb_pgw_exec(stmt, n, vals) against want[0..want_len), and that it
 * writes nothing past tb_pgw_exec_len bytes. */
static void check_exec(const char *stmt, int n, const char *const *vals, const char *want, size_t want_len) {
    char *out = malloc(want_len + 16);
    size_t got;
    assert_int_equal(tb_pgw_exec_len(stmt, n, vals), want_len);
    memset(out, 0x5a, want_len + 16);
    got = tb_pgw_exec(out, stmt, n, vals);
    assert_int_equal(got, want_len);
    assert_memory_equal(out, want, want_len);
    for (size_t i = want_len; i < want_len + 16; i++)
        assert_int_equal((unsigned char)out[i], 0x5a);
    free(out);
}

static void exec_messages(void **state) {
    /* Bind: length 26 = 4 + portal "" 1 + "tb_point" 9 + 2 formats + 2 count + (4 + 2) + 2 result formats */
    static const char one[] = "B\0\0\0\x1a"
                              "\0"
                              "tb_point\0"
                              "\0\0"
                              "\0\x01"
                              "\0\0\0\x02"
                              "42"
                              "\0\0" EXECUTE_SYNC;
    /* length 36 = 4 + 1 + 9 + 2 + 2 + (4 + 1) + (4 + 0) + (4 + 3) + 2 */
    static const char three[] = "B\0\0\0\x24"
                                "\0"
                                "tb_point\0"
                                "\0\0"
                                "\0\x03"
                                "\0\0\0\x01"
                                "7"
                                "\0\0\0\0"
                                "\0\0\0\x03"
                                "abc"
                                "\0\0" EXECUTE_SYNC;
    /* length 18 = 4 + 1 + "tb_now" 7 + 2 + 2 + 2 */
    static const char none[] = "B\0\0\0\x12"
                               "\0"
                               "tb_now\0"
                               "\0\0"
                               "\0\0"
                               "\0\0" EXECUTE_SYNC;
    static const char *const v1[] = {"42"}, *const v3[] = {"7", "", "abc"};
    (void)state;
    assert_int_equal(sizeof one - 1, 1 + 26 + 10 + 5);
    assert_int_equal(sizeof three - 1, 1 + 36 + 10 + 5);
    assert_int_equal(sizeof none - 1, 1 + 18 + 10 + 5);
    check_exec("tb_point", 1, v1, one, sizeof one - 1);
    check_exec("tb_point", 3, v3, three, sizeof three - 1);
    check_exec("tb_now", 0, NULL, none, sizeof none - 1);
}

/* ---- the reply in ---- */

typedef struct outcome {
    long taken; /* bytes taken up to done (all of them if not done); -1 after a protocol error */
    int done;
    tb_pgw_reply rep;
    char err[TB_ERR_LEN];
} outcome;

/* Feeds s[0..len) to a fresh reader: first `first` bytes, then `step` at a
 * time, each piece an exact-size heap copy (a zero-length piece too). Stops
 * at done or at a protocol error. */
static outcome feed(const char *s, size_t len, size_t first, size_t step) {
    tb_pgw_reader r;
    outcome o;
    size_t off = 0, piece = first < len ? first : len;
    memset(&o, 0, sizeof o);
    tb_pgw_reader_reset(&r);
    for (;;) {
        char *buf = malloc(piece ? piece : 1);
        long rc;
        memcpy(buf, s + off, piece);
        rc = tb_pgw_feed(&r, buf, piece, &o.done, o.err);
        free(buf);
        if (rc < 0) {
            assert_int_equal(rc, -1);
            o.taken = -1;
            o.rep = r.reply;
            return o;
        }
        assert_true((size_t)rc <= piece);
        off += (size_t)rc;
        if (o.done) break;
        assert_int_equal(rc, piece); /* all of it while the reply goes on */
        if (off == len) break;
        piece = len - off < step ? len - off : step;
    }
    o.taken = (long)off;
    o.rep = r.reply;
    return o;
}

static void same(const outcome *a, const outcome *b) {
    assert_int_equal(a->taken, b->taken);
    assert_int_equal(a->done, b->done);
    assert_int_equal(a->rep.rows, b->rep.rows);
    assert_int_equal(a->rep.first_len, b->rep.first_len);
    assert_string_equal(a->rep.first, b->rep.first);
    assert_int_equal(a->rep.error, b->rep.error);
    assert_string_equal(a->rep.severity, b->rep.severity);
    assert_string_equal(a->rep.sqlstate, b->rep.sqlstate);
    assert_string_equal(a->rep.message, b->rep.message);
    assert_int_equal(a->rep.status, b->rep.status);
}

/* s[0..len) read whole; asserts the same outcome split in two at every byte
 * boundary, byte by byte and 7 bytes at a time. */
static outcome read_every_split(const char *s, size_t len) {
    outcome whole = feed(s, len, len, len), o;
    for (size_t k = 0; k <= len; k++) {
        o = feed(s, len, k, len);
        same(&o, &whole);
    }
    o = feed(s, len, 0, 1);
    same(&o, &whole);
    o = feed(s, len, 1, 7);
    same(&o, &whole);
    return whole;
}

#define BIND_COMPLETE "2\0\0\0\x04"
/* DataRow: length 27 = 4 + count 2 + (4 + "Title 42" 8) + (4 + "12.99" 5) */
#define ROW_TITLE_42                                                                                                   \
    "D\0\0\0\x1b"                                                                                                      \
    "\0\x02"                                                                                                           \
    "\0\0\0\x08"                                                                                                       \
    "Title 42"                                                                                                         \
    "\0\0\0\x05"                                                                                                       \
    "12.99"
#define SELECT_1                                                                                                       \
    "C\0\0\0\x0d"                                                                                                      \
    "SELECT 1\0"
#define READY_IDLE "Z\0\0\0\x05I"

/* A point lookup's reply, then the start of the next reply. */
static const char point[] = BIND_COMPLETE ROW_TITLE_42 SELECT_1 READY_IDLE BIND_COMPLETE;
#define POINT_LEN (5 + 28 + 14 + 6)

static void point_lookup(void **state) {
    outcome o;
    (void)state;
    assert_int_equal(sizeof point - 1, POINT_LEN + 5);
    o = read_every_split(point, sizeof point - 1);
    assert_int_equal(o.taken, POINT_LEN); /* up to the end of Z, not the next reply's BindComplete */
    assert_int_equal(o.done, 1);
    assert_int_equal(o.rep.rows, 1);
    assert_string_equal(o.rep.first, "Title 42");
    assert_int_equal(o.rep.first_len, 8);
    assert_int_equal(o.rep.status, 'I');
    assert_int_equal(o.rep.error, 0);
    assert_string_equal(o.rep.severity, "");
    /* without what follows: all taken, done on the last byte of Z and not before */
    o = read_every_split(point, POINT_LEN);
    assert_int_equal(o.taken, POINT_LEN);
    assert_int_equal(o.done, 1);
    for (size_t k = 0; k < POINT_LEN; k++) {
        o = feed(point, k, k, k);
        assert_int_equal(o.done, 0);
        assert_int_equal(o.taken, (long)k);
    }
}

/* Two replies in one read: the first ends at its Z, a reset reader takes the rest. */
static void pipelined_replies(void **state) {
    static const char two[] = BIND_COMPLETE ROW_TITLE_42 SELECT_1 READY_IDLE BIND_COMPLETE "C\0\0\0\x0d"
                                                                                           "SELECT 0\0"
                                                                                           "Z\0\0\0\x05T";
    tb_pgw_reader r;
    char err[TB_ERR_LEN] = "";
    int done = -1;
    long n;
    (void)state;
    assert_int_equal(sizeof two - 1, POINT_LEN + 25);
    tb_pgw_reader_reset(&r);
    n = tb_pgw_feed(&r, two, sizeof two - 1, &done, err);
    assert_int_equal(n, POINT_LEN);
    assert_int_equal(done, 1);
    assert_int_equal(r.reply.rows, 1);
    tb_pgw_reader_reset(&r);
    n = tb_pgw_feed(&r, two + POINT_LEN, sizeof two - 1 - POINT_LEN, &done, err);
    assert_int_equal(n, 25);
    assert_int_equal(done, 1);
    assert_int_equal(r.reply.rows, 0);
    assert_int_equal(r.reply.first_len, -1);
    assert_string_equal(r.reply.first, "");
    assert_int_equal(r.reply.status, 'T');
}

static void row_counts_and_nulls(void **state) {
    static const char zero[] = BIND_COMPLETE "C\0\0\0\x0d"
                                             "SELECT 0\0" READY_IDLE;
    /* first field NULL (length -1), second "x": length 15 = 4 + 2 + 4 + (4 + 1) */
    static const char null_first[] = BIND_COMPLETE "D\0\0\0\x0f"
                                                   "\0\x02"
                                                   "\xff\xff\xff\xff"
                                                   "\0\0\0\x01"
                                                   "x" SELECT_1 "Z\0\0\0\x05T";
    static const char three[] = BIND_COMPLETE "D\0\0\0\x0b"
                                              "\0\x01"
                                              "\0\0\0\x01"
                                              "a"
                                              "D\0\0\0\x0c"
                                              "\0\x01"
                                              "\0\0\0\x02"
                                              "bb"
                                              "D\0\0\0\x0b"
                                              "\0\x01"
                                              "\0\0\0\x01"
                                              "c"
                                              "C\0\0\0\x0d"
                                              "SELECT 3\0" READY_IDLE;
    /* a row of no fields, then one with a field: the first row's is the one */
    static const char no_fields[] = BIND_COMPLETE "D\0\0\0\x06"
                                                  "\0\0"
                                                  "D\0\0\0\x0b"
                                                  "\0\x01"
                                                  "\0\0\0\x01"
                                                  "a"
                                                  "C\0\0\0\x0d"
                                                  "SELECT 2\0" READY_IDLE;
    /* an empty (not NULL) first field */
    static const char empty[] = BIND_COMPLETE "D\0\0\0\x0a"
                                              "\0\x01"
                                              "\0\0\0\0" SELECT_1 READY_IDLE;
    /* EmptyQueryResponse and PortalSuspended are replies to Execute too */
    static const char others[] = BIND_COMPLETE "I\0\0\0\x04"
                                               "s\0\0\0\x04"
                                               "Z\0\0\0\x05"
                                               "E";
    outcome o;
    (void)state;

    o = read_every_split(zero, sizeof zero - 1);
    assert_int_equal(o.taken, 25);
    assert_int_equal(o.done, 1);
    assert_int_equal(o.rep.rows, 0);
    assert_int_equal(o.rep.first_len, -1);
    assert_string_equal(o.rep.first, "");

    o = read_every_split(null_first, sizeof null_first - 1);
    assert_int_equal(o.taken, 5 + 16 + 14 + 6);
    assert_int_equal(o.done, 1);
    assert_int_equal(o.rep.rows, 1);
    assert_int_equal(o.rep.first_len, -1);
    assert_string_equal(o.rep.first, "");
    assert_int_equal(o.rep.status, 'T');

    o = read_every_split(three, sizeof three - 1);
    assert_int_equal(o.taken, 5 + 12 + 13 + 12 + 14 + 6);
    assert_int_equal(o.rep.rows, 3);
    assert_int_equal(o.rep.first_len, 1);
    assert_string_equal(o.rep.first, "a");

    o = read_every_split(no_fields, sizeof no_fields - 1);
    assert_int_equal(o.taken, 5 + 7 + 12 + 14 + 6);
    assert_int_equal(o.rep.rows, 2);
    assert_int_equal(o.rep.first_len, -1);
    assert_string_equal(o.rep.first, "");

    o = read_every_split(empty, sizeof empty - 1);
    assert_int_equal(o.taken, 5 + 11 + 14 + 6);
    assert_int_equal(o.rep.rows, 1);
    assert_int_equal(o.rep.first_len, 0);
    assert_string_equal(o.rep.first, "");

    o = read_every_split(others, sizeof others - 1);
    assert_int_equal(o.taken, 5 + 5 + 5 + 6);
    assert_int_equal(o.done, 1);
    assert_int_equal(o.rep.rows, 0);
    assert_int_equal(o.rep.status, 'E');
    assert_int_equal(o.rep.error, 0);
}

/* The first 63 bytes of the 'A'..'Z' pattern the long fields below hold. */
static const char pattern63[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "ABCDEFGHIJK";

/* Writes a reply whose only row's first field is flen pattern bytes after
 * the hand-written row header hdr[0..11) (type, length, count, field
 * length); returns its length. */
static size_t long_field_reply(char *out, const char *hdr, size_t flen, int second) {
    static const char tail[] = SELECT_1 READY_IDLE;
    size_t n = 0;
    memcpy(out, BIND_COMPLETE, 5);
    n += 5;
    memcpy(out + n, hdr, 11);
    n += 11;
    for (size_t i = 0; i < flen; i++)
        out[n++] = (char)('A' + i % 26);
    if (second) {
        memcpy(out + n,
               "\0\0\0\x05"
               "12.99",
               9);
        n += 9;
    }
    memcpy(out + n, tail, sizeof tail - 1);
    return n + sizeof tail - 1;
}

static void long_first_field(void **state) {
    /* a 30000-byte title (0x7530) and "12.99": length 30019 = 0x7543 = 4 + 2 + (4 + 30000) + (4 + 5) */
    static const char hdr30k[] = "D\0\0\x75\x43"
                                 "\0\x02"
                                 "\0\0\x75\x30";
    static const char hdr63[] = "D\0\0\0\x49"
                                "\0\x01"
                                "\0\0\0\x3f"; /* length 73 = 4 + 2 + 4 + 63 */
    static const char hdr64[] = "D\0\0\0\x4a"
                                "\0\x01"
                                "\0\0\0\x40"; /* length 74 = 4 + 2 + 4 + 64 */
    static const size_t steps[] = {1, 2, 7, 63, 64, 255, 256, 257, 1000, 4096, 30000};
    char *buf = malloc(30100);
    size_t len = long_field_reply(buf, hdr30k, 30000, 1);
    outcome whole, o;
    (void)state;
    assert_int_equal(len, 5 + (1 + 30019) + 14 + 6); /* type byte + length 30019 */
    whole = feed(buf, len, len, len);
    assert_int_equal(whole.taken, (long)len);
    assert_int_equal(whole.done, 1);
    assert_int_equal(whole.rep.rows, 1);
    assert_int_equal(whole.rep.first_len, 30000);
    assert_int_equal(strlen(whole.rep.first), 63);
    assert_string_equal(whole.rep.first, pattern63);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        o = feed(buf, len, steps[i], steps[i]);
        same(&o, &whole);
        o = feed(buf, len, 3, steps[i]);
        same(&o, &whole);
    }
    /* two feeds: around the header, the kept 256 bytes and the 63, then sparsely */
    for (size_t k = 0; k < len; k += k < 300 ? 1 : 997) {
        o = feed(buf, len, k, len);
        same(&o, &whole);
    }

    len = long_field_reply(buf, hdr63, 63, 0);
    o = read_every_split(buf, len);
    assert_int_equal(o.done, 1);
    assert_int_equal(o.rep.first_len, 63);
    assert_string_equal(o.rep.first, pattern63);

    len = long_field_reply(buf, hdr64, 64, 0);
    o = read_every_split(buf, len);
    assert_int_equal(o.done, 1);
    assert_int_equal(o.rep.first_len, 64);
    assert_string_equal(o.rep.first, pattern63);
    free(buf);
}

/* ---- errors ---- */

static void error_responses(void **state) {
    /* PostgreSQL 16's ErrorResponse: length 100 = 4 + S 7 + V 7 + C 7 + M 29 + P 4 + F 18 + L 6 + R 17 + 1 */
    static const char undefined_table[] = BIND_COMPLETE "E\0\0\0\x64"
                                                        "SERROR\0"
                                                        "VERROR\0"
                                                        "C42P01\0"
                                                        "Mrelation \"x\" does not exist\0"
                                                        "P15\0"
                                                        "Fparse_relation.c\0"
                                                        "L1392\0"
                                                        "RparserOpenTable\0"
                                                        "\0" READY_IDLE;
    /* localized severity in S, the non-localized one in V: V is the one */
    static const char localized[] = "E\0\0\0\x24"
                                    "SFEHLER\0"
                                    "VERROR\0"
                                    "C23505\0"
                                    "Mdoppelt\0"
                                    "\0"
                                    "Z\0\0\0\x05"
                                    "E";
    /* a server before 9.6: S only */
    static const char old_server[] = "E\0\0\0\x16"
                                     "SERROR\0"
                                     "C40001\0"
                                     "Mx\0"
                                     "\0" READY_IDLE;
    /* the server shutting down: no ReadyForQuery comes.
     * length 116 = 4 + S 7 + V 7 + C 7 + M 53 + F 12 + L 6 + R 19 + 1 */
    static const char fatal[] = "E\0\0\0\x74"
                                "SFATAL\0"
                                "VFATAL\0"
                                "C57P01\0"
                                "Mterminating connection due to administrator command\0"
                                "Fpostgres.c\0"
                                "L3300\0"
                                "RProcessInterrupts\0"
                                "\0";
    outcome o;
    (void)state;
    assert_int_equal(sizeof undefined_table - 1, 5 + 101 + 6);
    assert_int_equal(sizeof localized - 1, 37 + 6);
    assert_int_equal(sizeof old_server - 1, 23 + 6);
    assert_int_equal(sizeof fatal - 1, 117);

    o = read_every_split(undefined_table, sizeof undefined_table - 1);
    assert_int_equal(o.taken, 112);
    assert_int_equal(o.done, 1);
    assert_int_equal(o.rep.error, 1);
    assert_string_equal(o.rep.severity, "ERROR");
    assert_string_equal(o.rep.sqlstate, "42P01");
    assert_string_equal(o.rep.message, "relation \"x\" does not exist");
    assert_int_equal(o.rep.status, 'I');
    assert_int_equal(o.rep.rows, 0);
    assert_int_equal(o.rep.first_len, -1);

    o = read_every_split(localized, sizeof localized - 1);
    assert_int_equal(o.done, 1);
    assert_string_equal(o.rep.severity, "ERROR");
    assert_string_equal(o.rep.sqlstate, "23505");
    assert_string_equal(o.rep.message, "doppelt");
    assert_int_equal(o.rep.status, 'E');

    o = read_every_split(old_server, sizeof old_server - 1);
    assert_int_equal(o.done, 1);
    assert_string_equal(o.rep.severity, "ERROR");
    assert_string_equal(o.rep.sqlstate, "40001");
    assert_string_equal(o.rep.message, "x");

    o = read_every_split(fatal, sizeof fatal - 1);
    assert_int_equal(o.taken, 117);
    assert_int_equal(o.done, 0);
    assert_int_equal(o.rep.error, 1);
    assert_string_equal(o.rep.severity, "FATAL");
    assert_string_equal(o.rep.sqlstate, "57P01");
    assert_string_equal(o.rep.message, "terminating connection due to administrator command");
}

/* An M of mlen 'm's after S, V, C fields, then Z; hdr is the hand-written
 * type and length. Returns the reply's length. */
static size_t long_message_reply(char *out, const char *hdr, size_t mlen) {
    static const char head[] = "SERROR\0"
                               "VERROR\0"
                               "C22023\0"
                               "M";
    size_t n = 0;
    memcpy(out, hdr, 5);
    n += 5;
    memcpy(out + n, head, sizeof head - 1);
    n += sizeof head - 1;
    memset(out + n, 'm', mlen);
    n += mlen;
    out[n++] = '\0'; /* M's */
    out[n++] = '\0'; /* the fields' */
    memcpy(out + n, READY_IDLE, 6);
    return n + 6;
}

static void long_error_message(void **state) {
    char *buf = malloc(1100), want[160];
    size_t len;
    outcome o;
    (void)state;
    memset(want, 'm', 159);
    want[159] = '\0';
    /* 200 bytes of M: length 228 = 4 + 21 + (1 + 200 + 1) + 1 */
    len = long_message_reply(buf, "E\0\0\0\xe4", 200);
    assert_int_equal(len, 229 + 6);
    o = read_every_split(buf, len);
    assert_int_equal(o.taken, (long)len);
    assert_int_equal(o.done, 1);
    assert_int_equal(o.rep.error, 1);
    assert_string_equal(o.rep.sqlstate, "22023");
    assert_int_equal(strlen(o.rep.message), 159);
    assert_string_equal(o.rep.message, want);
    /* 1000 bytes of M, past what the reader keeps of a body: length 1028 = 0x404 */
    len = long_message_reply(buf, "E\0\0\x04\x04", 1000);
    assert_int_equal(len, 1029 + 6);
    o = read_every_split(buf, len);
    assert_int_equal(o.taken, (long)len);
    assert_int_equal(o.done, 1);
    assert_string_equal(o.rep.severity, "ERROR");
    assert_string_equal(o.rep.message, want);
    free(buf);
}

/* Notices, parameter changes and notifications may come at any time and are passed over. */
static void asynchronous_messages(void **state) {
    static const char s[] = BIND_COMPLETE
        /* NoticeResponse, length 39 = 4 + 9 + 9 + 7 + 9 + 1 */
        "N\0\0\0\x27"
        "SWARNING\0"
        "VWARNING\0"
        "C01000\0"
        "Mcareful\0"
        "\0" ROW_TITLE_42
        /* ParameterStatus, length 17 = 4 + 9 + 4 */
        "S\0\0\0\x11"
        "TimeZone\0"
        "UTC\0" SELECT_1
        /* NotificationResponse from pid 12345, length 14 = 4 + 4 + 3 + 3 */
        "A\0\0\0\x0e"
        "\0\0\x30\x39"
        "ch\0"
        "hi\0" READY_IDLE;
    outcome o;
    (void)state;
    assert_int_equal(sizeof s - 1, 5 + 40 + 28 + 18 + 14 + 15 + 6);
    o = read_every_split(s, sizeof s - 1);
    assert_int_equal(o.taken, (long)(sizeof s - 1));
    assert_int_equal(o.done, 1);
    assert_int_equal(o.rep.rows, 1);
    assert_string_equal(o.rep.first, "Title 42");
    assert_int_equal(o.rep.first_len, 8);
    assert_int_equal(o.rep.error, 0);
    assert_string_equal(o.rep.severity, "");
    assert_string_equal(o.rep.sqlstate, "");
    assert_string_equal(o.rep.message, "");
    assert_int_equal(o.rep.status, 'I');
}

/* A reset reader forgets the previous reply. */
static void reset_forgets(void **state) {
    static const char err_then_ok[] = "E\0\0\0\x16"
                                      "SERROR\0"
                                      "C40001\0"
                                      "Mx\0"
                                      "\0" READY_IDLE BIND_COMPLETE ROW_TITLE_42 SELECT_1 READY_IDLE;
    tb_pgw_reader r;
    char err[TB_ERR_LEN] = "";
    int done;
    long n;
    (void)state;
    tb_pgw_reader_reset(&r);
    n = tb_pgw_feed(&r, err_then_ok, sizeof err_then_ok - 1, &done, err);
    assert_int_equal(n, 29);
    assert_int_equal(r.reply.error, 1);
    tb_pgw_reader_reset(&r);
    n = tb_pgw_feed(&r, err_then_ok + 29, sizeof err_then_ok - 1 - 29, &done, err);
    assert_int_equal(n, POINT_LEN);
    assert_int_equal(done, 1);
    assert_int_equal(r.reply.error, 0);
    assert_string_equal(r.reply.severity, "");
    assert_string_equal(r.reply.sqlstate, "");
    assert_string_equal(r.reply.message, "");
    assert_int_equal(r.reply.rows, 1);
    assert_string_equal(r.reply.first, "Title 42");
}

/* Between messages or inside one: the oltp workload refuses to start a
 * statement while part of a message nobody asked for is still to come. */
static void between_messages(void **state) {
    static const char notice[] = "N\0\0\0\x0d"
                                 "SNOTICE\0\0";
    tb_pgw_reader r;
    char err[TB_ERR_LEN] = "";
    int done;
    (void)state;
    tb_pgw_reader_reset(&r);
    assert_true(tb_pgw_reader_between(&r));
    for (size_t k = 1; k < sizeof notice - 1; k++) { /* inside the header, then the body */
        tb_pgw_reader_reset(&r);
        assert_int_equal(tb_pgw_feed(&r, notice, k, &done, err), (long)k);
        if (tb_pgw_reader_between(&r)) fail_msg("between messages after %zu of %zu bytes", k, sizeof notice - 1);
    }
    tb_pgw_reader_reset(&r);
    assert_int_equal(tb_pgw_feed(&r, notice, sizeof notice - 1, &done, err), (long)(sizeof notice - 1));
    assert_int_equal(done, 0);
    assert_true(tb_pgw_reader_between(&r));
}

/* ---- streams that cannot be a reply to Bind/Execute/Sync ---- */

typedef struct bad {
    const char *what, *bytes;
    size_t len;
} bad;
#define BAD(what, s)                                                                                                   \
    { what, s, sizeof s - 1 }

static void protocol_errors(void **state) {
    static const bad cases[] = {
        BAD("length 3", "C\0\0\0\x03"),
        BAD("length 0", "C\0\0\0\0"),
        BAD("length -1", "D\xff\xff\xff\xff"),
        BAD("length TB_PGW_MAX_MSG + 1", "C\x04\0\0\x01"),
        BAD("AuthenticationOk", "R\0\0\0\x08"
                                "\0\0\0\0"),
        BAD("CopyInResponse", "G\0\0\0\x07"
                              "\0\0\0"),
        BAD("CopyOutResponse", "H\0\0\0\x07"
                               "\0\0\0"),
        BAD("RowDescription (comes only for Describe)", "T\0\0\0\x06"
                                                        "\0\0"),
        BAD("NoData", "n\0\0\0\x04"),
        BAD("ParseComplete", "1\0\0\0\x04"),
        BAD("BackendKeyData", "K\0\0\0\x0c"
                              "\0\0\0\x01\0\0\0\x02"),
        BAD("ReadyForQuery of length 6", "Z\0\0\0\x06"
                                         "I\0"),
        BAD("ReadyForQuery of length 4", "Z\0\0\0\x04"),
        BAD("BindComplete of length 5", "2\0\0\0\x05"
                                        "\0"),
        BAD("DataRow of length 5", "D\0\0\0\x05"
                                   "\0"),
        BAD("PortalSuspended of length 5", "s\0\0\0\x05"
                                           "\0"),
        BAD("EmptyQueryResponse of length 8", "I\0\0\0\x08"
                                              "\0\0\0\0"),
        BAD("a DataRow field of length -2", "D\0\0\0\x0a"
                                            "\0\x01\xff\xff\xff\xfe"),
        BAD("a DataRow field longer than its row", "D\0\0\0\x0a"
                                                   "\0\x01\0\0\0\x05"),
        BAD("a DataRow of one field without its length", "D\0\0\0\x06"
                                                         "\0\x01"),
        BAD("ReadyForQuery with status x", "Z\0\0\0\x05"
                                           "x"),
        BAD("an HTTP reply", "HTTP/1.1 400 Bad Request\r\n"),
        BAD("a TLS alert", "\x15\x03\x03\0\x02\x02\x28"),
        BAD("an authentication request after a good message", BIND_COMPLETE "R\0\0\0\x08"
                                                                            "\0\0\0\x05"),
    };
    tb_pgw_reader r;
    char err[TB_ERR_LEN];
    int done;
    (void)state;
    assert_int_equal(TB_PGW_MAX_MSG, 0x04000000); /* as the bytes above take it */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        outcome o = feed(cases[i].bytes, cases[i].len, cases[i].len, cases[i].len);
        if (o.taken != -1) fail_msg("%s: read as a reply (%ld bytes taken, done %d)", cases[i].what, o.taken, o.done);
        if (o.err[0] == '\0') fail_msg("%s: no error message", cases[i].what);
        o = feed(cases[i].bytes, cases[i].len, 0, 1);
        if (o.taken != -1) fail_msg("%s: read as a reply byte by byte", cases[i].what);
        assert_true(o.err[0] != '\0');
        for (size_t k = 0; k <= cases[i].len; k++) {
            o = feed(cases[i].bytes, cases[i].len, k, cases[i].len);
            if (o.taken != -1) fail_msg("%s: read as a reply split at %zu", cases[i].what, k);
        }
    }
    /* the longest message accepted is waited for, not refused */
    tb_pgw_reader_reset(&r);
    err[0] = '\0';
    assert_int_equal(tb_pgw_feed(&r, "C\x04\0\0\0", 5, &done, err), 5);
    assert_int_equal(done, 0);
    assert_string_equal(err, "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exec_messages),      cmocka_unit_test(point_lookup),
        cmocka_unit_test(pipelined_replies),  cmocka_unit_test(row_counts_and_nulls),
        cmocka_unit_test(long_first_field),   cmocka_unit_test(error_responses),
        cmocka_unit_test(long_error_message), cmocka_unit_test(asynchronous_messages),
        cmocka_unit_test(reset_forgets),      cmocka_unit_test(between_messages),
        cmocka_unit_test(protocol_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
