/*
 * fuzz_tiledef.c: the tile definition (config) parser (tiles/tiledef.c,
 * tb_tiledef_parse) on arbitrary file contents: inih's ini syntax, then every
 * section and key of the tile file, the workloads' own keys and the QoS
 * rules. Checks: an accepted definition has at least one workload, each with
 * a kind and a reference; a rejection names where and why.
 */
#include "tiles/tiledef.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static tb_tiledef def;
    char err[TB_ERR_LEN];
    /* an exact-size copy: the parser must not need a terminating NUL */
    char *text = malloc(size ? size : 1);
    if (size) memcpy(text, data, size);
    err[0] = '\0';
    if (tb_tiledef_parse("fuzz.ini", text, size, &def, err) == 0) {
        char hash[17];
        FUZZ_CHECK(def.n_workloads >= 1);
        for (int i = 0; i < def.n_workloads; i++) FUZZ_CHECK(def.workloads[i].kind[0] && def.workloads[i].reference > 0);
        tb_tiledef_workload_hash(&def, hash);
        FUZZ_CHECK(strlen(hash) == 16);
        tb_tiledef_free(&def);
    } else {
        FUZZ_CHECK(strncmp(err, "fuzz.ini", 8) == 0); /* every error says where */
    }
    free(text);
    return 0;
}
