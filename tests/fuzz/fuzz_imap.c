/*
 * fuzz_imap.c: the IMAP response framing and readers (loadgen/imap_parse.c)
 * on an arbitrary byte stream, as the mail workload reads it: responses
 * (lines with {n} literals) are framed off the front of a buffer that grows
 * read by read, then parsed, and FETCH / SEARCH / APPENDUID are read from
 * them. The first two input bytes choose where the stream is split into two
 * reads; the responses found must be the same whether the bytes arrive split
 * (e.g. in the middle of a literal) or whole.
 */
#include "loadgen/imap_parse.h"
#include "tests/fuzz/fuzz.h"

#define MAX_RESPONSES 4096

typedef struct found {
    int n, error;
    size_t len[MAX_RESPONSES];
} found;

static void read_response(const char *buf, size_t n) {
    char err[TB_ERR_LEN];
    tb_imap_resp r;
    if (tb_imap_resp_parse(buf, n, &r, err) != 0) {
        FUZZ_CHECK(err[0] != '\0');
        return;
    }
    FUZZ_CHECK(r.rest == NULL || (r.rest >= buf && r.rest + r.rest_len <= buf + n));
    if (r.kind == TB_IMAP_UNTAGGED && strcmp(r.word, "FETCH") == 0) {
        tb_imap_fetch f;
        if (tb_imap_fetch_parse(&r, &f, err) == 0 && f.body)
            FUZZ_CHECK(f.body >= buf && f.body + f.body_len <= buf + n);
    } else if (r.kind == TB_IMAP_UNTAGGED && strcmp(r.word, "SEARCH") == 0) {
        uint32_t uids[16];
        size_t k = 0;
        if (tb_imap_search_parse(&r, uids, 16, &k, err) == 0) FUZZ_CHECK(k <= 16);
    } else if (r.kind == TB_IMAP_TAGGED) {
        uint32_t uid;
        (void)tb_imap_appenduid(&r, &uid);
    }
}

/* Frames stream[0..size) arriving in reads ending at cut and at size. */
static void frame(const uint8_t *stream, size_t size, size_t cut, found *out) {
    char err[TB_ERR_LEN];
    size_t have = cut, off = 0;
    tb_imap_scan s;
    memset(out, 0, sizeof *out);
    tb_imap_scan_reset(&s);
    for (;;) {
        /* an exact-size copy of what has arrived, so ASan catches a read past it */
        size_t avail = have - off;
        char *buf = malloc(avail ? avail : 1);
        ssize_t n;
        memcpy(buf, stream + off, avail);
        n = tb_imap_scan_next(&s, buf, avail, err);
        if (n < 0) {
            FUZZ_CHECK(err[0] != '\0');
            free(buf);
            out->error = 1;
            return;
        }
        if (n == 0) {
            free(buf);
            if (have == size) return;
            have = size; /* the second read arrives */
            continue;
        }
        FUZZ_CHECK((size_t)n <= avail);
        /* the response alone, exact size, as the workload hands it on */
        {
            char *resp = malloc((size_t)n);
            memcpy(resp, buf, (size_t)n);
            read_response(resp, (size_t)n);
            free(resp);
        }
        free(buf);
        if (out->n == MAX_RESPONSES) return;
        out->len[out->n++] = (size_t)n;
        off += (size_t)n;
        tb_imap_scan_reset(&s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static found whole, split;
    size_t cut;
    if (size < 2) return 0;
    cut = ((size_t)data[0] << 8 | data[1]) % (size - 1);
    data += 2;
    size -= 2;
    frame(data, size, size, &whole);
    frame(data, size, cut, &split);
    FUZZ_CHECK(whole.n == split.n && whole.error == split.error);
    for (int i = 0; i < whole.n; i++)
        FUZZ_CHECK(whole.len[i] == split.len[i]);
    return 0;
}
