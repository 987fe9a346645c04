/*
 * pub_internal.h: between publish/'s files. A database opened twice: as a
 * results store (the reports, the run list, compare) and as a plain
 * read-only SQLite connection (the run's rows as CSV, its UUID, which
 * calibrations it used), both inside one read transaction each.
 */
#ifndef TB_PUBLISH_PUB_INTERNAL_H
#define TB_PUBLISH_PUB_INTERNAL_H

#include <stdint.h>

#include "publish/publish.h"
#include "results/store.h"

struct sqlite3;

typedef struct tb_pub {
    const char *db_path;
    tb_store *s;
    struct sqlite3 *db;
} tb_pub;

/* Opens both handles. 0, or -1 with err ("results database 'x.db' not found"). */
int tb_pub_open(tb_pub *p, const char *db_path, char *err) TB_WUR;
void tb_pub_close(tb_pub *p);

/* The run's UUID (40 bytes) and effective status (tb_store_effective_status;
 * 16 bytes). 0, or -1 with err. */
int tb_pub_run_ident(tb_pub *p, int64_t run_id, char *uuid, char *status, char *err) TB_WUR;

/* Writes the bundle of run_id to path (bundle.c). 0, or -1 with err naming
 * the run and path. done may be NULL. */
int tb_pub_bundle_to(tb_pub *p, int64_t run_id, const char *path, tb_publish_done *done, char *err) TB_WUR;

#endif
