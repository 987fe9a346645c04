/*
 * fuzz_vcsv.c: check's own readers of a bundle's text (verify/): the CSV
 * reader (vcsv.c) and every cell as an integer and a real, and the
 * HdrHistogram log reader (hdrlog.c). The first byte picks which. Checks: a
 * parsed table has n_rows * n_cols cells and distinct column names; a cell
 * read as an integer reads as the same real; a failure says why.
 */
#include <math.h>

#include "tests/fuzz/fuzz.h"
#include "verify/hdrlog.h"
#include "verify/vcsv.h"
#include "verify/verify_int.h"

static void fuzz_csv(const char *text, size_t len) {
    tb_vcsv t;
    char err[TB_ERR_LEN] = "";
    if (tb_vcsv_parse("data/fuzz.csv", text, len, &t, err) != 0) {
        FUZZ_CHECK(err[0] != '\0');
        tb_vcsv_free(&t);
        return;
    }
    FUZZ_CHECK(t.n_cols >= 1 && t.n_cols <= TB_VCSV_COLS_MAX);
    for (size_t i = 0; i < t.n_cols; i++)
        FUZZ_CHECK(tb_vcsv_col(&t, t.cols[i]) == (int)i); /* the first of its name is itself: distinct */
    for (size_t r = 0; r < t.n_rows; r++)
        for (size_t c = 0; c < t.n_cols; c++) {
            int64_t n;
            double d;
            int ri = tb_vcsv_int(&t, r, (int)c, &n), rr = tb_vcsv_real(&t, r, (int)c, &d);
            if (ri == 1) FUZZ_CHECK(rr == 1 && !isnan(d));
            if (!tb_vcsv_get(&t, r, (int)c)) FUZZ_CHECK(ri == 0 && rr == 0);
        }
    tb_vcsv_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text;
    tb_vh_log log;
    char err[TB_ERR_LEN] = "";
    if (size == 0) return 0;
    tb_vmem_reset((size_t)64 << 20);
    text = fuzz_cstr(data + 1, size - 1);
    if (data[0] & 1) {
        fuzz_csv(text, size - 1);
    } else {
        memset(&log, 0, sizeof log);
        if (tb_vh_log_parse(text, size - 1, &log, err) != 0) FUZZ_CHECK(err[0] != '\0');
        tb_vh_log_free(&log);
    }
    free(text);
    return 0;
}
