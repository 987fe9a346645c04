/*
 * fuzz_levels.c: the tile-spec parser (tiles/levels.c, tb_levels_parse):
 * "3", "1..4", "1,2,4,8", "auto". The first input byte picks --max-tiles.
 * Checks: an accepted spec gives 1..TB_MAX_LEVELS levels, ascending, each
 * in 1..TB_MAX_TILES; a rejection says why.
 */
#include "tiles/levels.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static tb_levels lv;
    int max_tiles = size ? data[0] : 8;
    char *spec = fuzz_cstr(size ? data + 1 : data, size ? size - 1 : 0);
    char err[TB_ERR_LEN];
    err[0] = '\0';
    if (tb_levels_parse(spec, max_tiles, &lv, err) == 0) {
        FUZZ_CHECK(lv.n >= 1 && lv.n <= TB_MAX_LEVELS);
        for (int i = 0; i < lv.n; i++) {
            FUZZ_CHECK(lv.tiles[i] >= 1 && lv.tiles[i] <= TB_MAX_TILES);
            if (i) FUZZ_CHECK(lv.tiles[i] > lv.tiles[i - 1]);
        }
    } else {
        FUZZ_CHECK(err[0] != '\0');
    }
    free(spec);
    return 0;
}
