/*
 * fuzz_smtp.c: the SMTP/LMTP reply parser (loadgen/smtp_parse.c) on an
 * arbitrary byte stream, as the mail workload reads it: replies are parsed
 * off the front of a buffer that grows read by read. The first two input
 * bytes choose where the stream is split into two reads; the replies found
 * must be the same whether the bytes arrive split or whole.
 */
#include "loadgen/smtp_parse.h"
#include "tests/fuzz/fuzz.h"

#define MAX_REPLIES 4096

typedef struct found {
    int n, error;
    size_t len[MAX_REPLIES];
    int code[MAX_REPLIES];
} found;

/* Parses stream[0..size) arriving in reads ending at cut and at size. */
static void parse(const uint8_t *stream, size_t size, size_t cut, found *out) {
    char err[TB_ERR_LEN];
    size_t have = cut, off = 0;
    memset(out, 0, sizeof *out);
    for (;;) {
        tb_smtp_reply r;
        /* an exact-size copy of what has arrived, so ASan catches a read past it */
        char *buf = malloc(have - off ? have - off : 1);
        int rc;
        memcpy(buf, stream + off, have - off);
        rc = tb_smtp_reply_parse(buf, have - off, &r, err);
        free(buf);
        if (rc < 0) {
            FUZZ_CHECK(err[0] != '\0');
            out->error = 1;
            return;
        }
        if (rc == 0) {
            if (have == size) return;
            have = size; /* the second read arrives */
            continue;
        }
        FUZZ_CHECK(rc == 1 && r.len > 0 && r.len <= have - off && r.lines >= 1);
        FUZZ_CHECK(r.code >= 200 && r.code <= 599);
        if (out->n == MAX_REPLIES) return;
        out->len[out->n] = r.len;
        out->code[out->n++] = r.code;
        off += r.len;
    }
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
        FUZZ_CHECK(whole.len[i] == split.len[i] && whole.code[i] == split.code[i]);
    return 0;
}
