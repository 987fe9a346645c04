/*
 * fuzz_vbundle.c: tilebench check on raw bytes (verify/, tb_verify_bundle_mem):
 * the gzip stream, the tar, the manifest, every table and report of a
 * bundle as a crafted file gives them. The seed is a small real bundle
 * (tests/fuzz/corpus/fuzz_vbundle/). Checks: the verdict is one of the three,
 * an unreadable bundle says why, and a readable one has a line per check.
 * The memory budget is 64 MiB, so an input that inflates to more ends in an
 * error, not in libFuzzer's RSS limit.
 */
#include "tests/fuzz/fuzz.h"
#include "verify/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tb_vresult r = {0};
    char err[TB_ERR_LEN] = "";
    int rc;
    setenv("TILEBENCH_CHECK_MAX_MIB", "64", 1);
    rc = tb_verify_bundle_mem("fuzz.tar.gz", data, size, &r, err);
    FUZZ_CHECK(rc == TB_VERIFY_COMPLIANT || rc == TB_VERIFY_NOT_COMPLIANT || rc == TB_VERIFY_UNREADABLE);
    if (rc == TB_VERIFY_UNREADABLE) FUZZ_CHECK(err[0] != '\0');
    if (rc == TB_VERIFY_COMPLIANT) FUZZ_CHECK(r.failed == 0 && r.n > 0);
    if (rc == TB_VERIFY_NOT_COMPLIANT) FUZZ_CHECK(r.failed > 0);
    tb_vresult_free(&r);
    return 0;
}
