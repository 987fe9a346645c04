/*
 * fuzz_duration.c: the duration parser (common/tb_common.c,
 * tb_parse_duration_us) and the number parsers next to it. Checks: an
 * accepted duration formats (tb_format_duration) to text that parses back
 * to the same number of microseconds; a rejection always says why.
 */
#include "common/tb_common.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = fuzz_cstr(data, size);
    char err[TB_ERR_LEN], text[64];
    uint64_t us, back, u;
    double d;
    err[0] = '\0';
    if (tb_parse_duration_us(s, &us, err) == 0) {
        tb_format_duration(us, text, sizeof text);
        FUZZ_CHECK(tb_parse_duration_us(text, &back, err) == 0);
        FUZZ_CHECK(back == us);
    } else {
        FUZZ_CHECK(err[0] != '\0');
    }
    err[0] = '\0';
    if (tb_parse_u64(s, &u, err) != 0) FUZZ_CHECK(err[0] != '\0');
    err[0] = '\0';
    if (tb_parse_double(s, &d, err) != 0) FUZZ_CHECK(err[0] != '\0');
    free(s);
    return 0;
}
