/*
 * infra_def.h: internal to tiles/: the [infra.NAME] sections of a tile file
 * (tiles/infra_def.c), for the tile file's parser (tiles/tiledef.c).
 */
#ifndef TB_TILES_INFRA_DEF_H
#define TB_TILES_INFRA_DEF_H

#include <stdint.h>

#include "tiles/tiledef.h"

/* One key = value of [infra.NAME] at line: 0, or -1 with why (the reason
 * only: the caller prefixes "file:line: [infra.NAME] key: "). */
int tb_infradef_set(tb_tiledef *def, const char *name, const char *key, const char *val, int line, char *why);

/* After the whole file: each operation has its kind (and command), no key
 * of another kind, every [qos.infra.NAME] rule names an operation and its
 * kind's op, and an operation without an error-rate rule gets the implicit
 * `error_rate = 1%`. 0, or -1 with err ("file:line: [infra.NAME] key: why"). */
int tb_infradef_check(tb_tiledef *def, char *err);

/* 1 when a QoS rule's workload is an operation's ("infra.NAME"). */
int tb_infradef_is_rule(const char *workload);

/* Folds the operations' defining keys into the workload hash h (FNV-1a,
 * fnv(h, s) adds one string); unchanged when def has no [infra.NAME]. */
uint64_t tb_infradef_hash(const tb_tiledef *def, uint64_t h, uint64_t (*fnv)(uint64_t, const char *));

/* Frees what the operations hold. */
void tb_infradef_free(tb_tiledef *def);

#endif
