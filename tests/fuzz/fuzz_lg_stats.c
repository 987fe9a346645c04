/*
 * fuzz_lg_stats.c: the load generator's statistics decoder
 * (loadgen/lg_stats.c) on arbitrary bytes. A refusal must come with a
 * message; a buffer it accepts must re-encode to the same bytes (the
 * encoding is canonical). The header's tiles are cut below 64, so an input
 * allocates under 1 MiB (a large shape costs memory, not code paths; the
 * unit test covers the bounds).
 */
#include "loadgen/loadgen.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[TB_ERR_LEN] = "";
    uint8_t *copy = malloc(size ? size : 1), *again;
    size_t len;
    tb_lg_stats *s;
    FUZZ_CHECK(copy != NULL);
    if (size) memcpy(copy, data, size);
    if (size >= 9) { /* tiles: bytes 5..8, little-endian */
        copy[5] &= 63;
        copy[6] = copy[7] = copy[8] = 0;
    }
    if (tb_lg_stats_decode(copy, size, &s, err) != 0) {
        FUZZ_CHECK(s == NULL && err[0] != '\0');
    } else {
        FUZZ_CHECK(tb_lg_stats_encode(s, &again, &len) == 0);
        FUZZ_CHECK(len == size && memcmp(again, copy, size) == 0);
        free(again);
        tb_lg_stats_free(s);
    }
    free(copy);
    return 0;
}
