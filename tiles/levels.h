/*
 * levels.h: tile specs, the load levels of a sweep: "3", "1..4", "1,2,4,8",
 * or "auto" (add one tile at a time until QoS fails, up to --max-tiles).
 */
#ifndef TB_TILES_LEVELS_H
#define TB_TILES_LEVELS_H

#include "common/tb_common.h"

#define TB_MAX_LEVELS 256
#define TB_MAX_TILES  4096

typedef struct tb_levels {
    int n;
    int tiles[TB_MAX_LEVELS]; /* ascending, each >= 1 */
    int is_auto;              /* "auto": tiles = 1..max_tiles, stop at first QoS fail */
} tb_levels;

/* Parses a tile spec. Errors: "tile spec '0': tiles must be >= 1",
 * "tile spec '3..1': range end 1 is below start 3". 0 or -1 with err. */
int tb_levels_parse(const char *spec, int max_tiles, tb_levels *out, char *err) TB_WUR;

#endif
