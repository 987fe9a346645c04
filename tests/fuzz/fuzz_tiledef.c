/*
 * fuzz_tiledef.c: the tile definition (config) parser (tiles/tiledef.c,
 * tb_tiledef_parse) on arbitrary file contents: inih's ini syntax, then every
 * section and key of the tile file, the workloads' own keys and the QoS
 * rules. Checks: an accepted definition has 1..TB_MAX_WORKLOADS workloads,
 * each with a kind and a reference, and its arrays within their limits (and
 * no leak or double free: the fuzz build runs ASan); a rejection names where
 * and why.
 */
#include "tiles/tiledef.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tb_tiledef *def;
    char err[TB_ERR_LEN];
    /* an exact-size copy: the parser must not need a terminating NUL */
    char *text = malloc(size ? size : 1);
    if (size) memcpy(text, data, size);
    err[0] = '\0';
    if ((def = tb_tiledef_parse("fuzz.ini", text, size, err))) {
        char hash[17];
        FUZZ_CHECK(def->n_workloads >= 1 && def->n_workloads <= TB_MAX_WORKLOADS);
        FUZZ_CHECK(def->n_rules >= 0 && def->n_rules <= TB_MAX_RULES && (def->n_rules == 0 || def->rules));
        FUZZ_CHECK(def->path && def->telemetry && def->text);
        for (int i = 0; i < def->n_workloads; i++) {
            const tb_workload_def *w = &def->workloads[i];
            FUZZ_CHECK(w->kind[0] && w->reference > 0 && w->file == def->path);
            FUZZ_CHECK(w->n_params >= 0 && w->n_params <= TB_MAX_PARAMS && (w->n_params == 0 || w->params));
        }
        tb_tiledef_workload_hash(def, hash);
        FUZZ_CHECK(strlen(hash) == 16);
        tb_tiledef_free(def);
    } else {
        FUZZ_CHECK(strncmp(err, "fuzz.ini", 8) == 0); /* every error says where */
    }
    free(text);
    return 0;
}
