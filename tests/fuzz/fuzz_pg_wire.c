/*
 * fuzz_pg_wire.c: the PostgreSQL reply reader (loadgen/pg_wire.c) on an
 * arbitrary byte stream, as the oltp workload reads it: a reader takes reads
 * until its reply's ReadyForQuery, is reset, and takes the rest for the next
 * reply. The first two input bytes choose where the stream is split into two
 * reads (each an exact-size heap copy, so ASan sees a read past it); the
 * replies read and whether the stream is refused must be the same whether
 * the bytes arrive split or whole. Each reply must end on a ReadyForQuery's
 * last byte and hold NUL-terminated strings.
 */
#include "loadgen/pg_wire.h"
#include "tests/fuzz/fuzz.h"

#define MAX_REPLIES 4096

typedef struct found {
    int n, error;            /* replies, the stream was refused */
    size_t end[MAX_REPLIES]; /* where each ended in the stream */
    tb_pgw_reply rep[MAX_REPLIES];
    tb_pgw_reply last; /* the unfinished reply when the stream ran out or was refused */
} found;

static void check_reply(const tb_pgw_reply *rep) {
    FUZZ_CHECK(memchr(rep->first, '\0', sizeof rep->first) != NULL);
    FUZZ_CHECK(strlen(rep->first) <= 63);
    FUZZ_CHECK(memchr(rep->severity, '\0', sizeof rep->severity) != NULL);
    FUZZ_CHECK(memchr(rep->sqlstate, '\0', sizeof rep->sqlstate) != NULL);
    FUZZ_CHECK(memchr(rep->message, '\0', sizeof rep->message) != NULL);
    FUZZ_CHECK(rep->rows >= 0);
    FUZZ_CHECK(rep->first_len >= -1);
    FUZZ_CHECK(rep->rows > 0 || rep->first_len == -1);
    FUZZ_CHECK(rep->first_len == -1 || strlen(rep->first) <= (size_t)rep->first_len);
    FUZZ_CHECK(rep->first_len >= 0 || rep->first[0] == '\0');
    FUZZ_CHECK(rep->error == 0 || rep->error == 1);
    FUZZ_CHECK(rep->error || (!rep->severity[0] && !rep->sqlstate[0] && !rep->message[0]));
}

static int same_reply(const tb_pgw_reply *a, const tb_pgw_reply *b) {
    return a->rows == b->rows && a->first_len == b->first_len && strcmp(a->first, b->first) == 0 &&
           a->error == b->error && strcmp(a->severity, b->severity) == 0 && strcmp(a->sqlstate, b->sqlstate) == 0 &&
           strcmp(a->message, b->message) == 0 && a->status == b->status;
}

/* Reads stream[0..size) arriving in reads ending at cut and at size. */
static void parse(const uint8_t *stream, size_t size, size_t cut, found *out) {
    static tb_pgw_reader r;
    char err[TB_ERR_LEN];
    size_t from = 0;
    out->n = out->error = 0; /* (not all of *out: it is large) */
    tb_pgw_reader_reset(&r);
    for (int piece = 0; piece < 2; piece++) {
        size_t to = piece == 0 ? cut : size, len = to - from, off = 0;
        char *buf = malloc(len ? len : 1);
        if (!buf) abort();
        memcpy(buf, stream + from, len);
        for (;;) {
            int done = -1;
            long rc;
            err[0] = '\0';
            rc = tb_pgw_feed(&r, buf + off, len - off, &done, err);
            if (rc < 0) {
                FUZZ_CHECK(rc == -1 && err[0] != '\0');
                out->error = 1;
                out->last = r.reply;
                free(buf);
                return;
            }
            FUZZ_CHECK((size_t)rc <= len - off && (done == 0 || done == 1));
            check_reply(&r.reply);
            off += (size_t)rc;
            if (!done) {
                FUZZ_CHECK(off == len); /* all of a read is taken while the reply goes on */
                break;
            }
            /* done on the last byte of a ReadyForQuery: 'Z', length 5, the status */
            size_t end = from + off;
            FUZZ_CHECK(rc > 0 && end >= 6);
            FUZZ_CHECK(memcmp(stream + end - 6, "Z\0\0\0\x05", 5) == 0);
            FUZZ_CHECK(r.reply.status == (char)stream[end - 1]);
            if (out->n < MAX_REPLIES) {
                out->end[out->n] = end;
                out->rep[out->n++] = r.reply;
            }
            tb_pgw_reader_reset(&r);
        }
        free(buf);
        from = to;
    }
    out->last = r.reply;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static found whole, split;
    size_t cut;
    if (size < 2) return 0;
    cut = ((size_t)data[0] << 8 | data[1]) % (size - 1);
    data += 2;
    size -= 2;
    parse(data, size, size, &whole);
    parse(data, size, cut, &split);
    FUZZ_CHECK(whole.n == split.n && whole.error == split.error);
    for (int i = 0; i < whole.n; i++)
        FUZZ_CHECK(whole.end[i] == split.end[i] && same_reply(&whole.rep[i], &split.rep[i]));
    FUZZ_CHECK(same_reply(&whole.last, &split.last));
    return 0;
}
