/*
 * store_internal.h: internal to results/. The SQLite handle of a store, for
 * the model reader (model_read.c, model_levels.c) and the store's own white-box
 * unit tests only; every other caller reads through the model (model.h). And
 * the schema's migrations, which store_migrate.c applies.
 */
#ifndef TB_RESULTS_STORE_INTERNAL_H
#define TB_RESULTS_STORE_INTERNAL_H

#include <stdint.h>

#include "results/store.h"

struct sqlite3;

struct sqlite3 *tb_store_db(tb_store *s);

/* store_hosts.c: the hosts rows of a run and a level's level_hosts rows,
 * inside the caller's transaction. SQLITE_OK or an SQLite error code. */
int tb_store_insert_hosts(tb_store *s, int64_t run_id, const tb_run_info *info);
int tb_store_insert_level_hosts(tb_store *s, int64_t level_id, const tb_host_result *h, int n);
/* store_infra.c: a level's infra and infra_outputs rows (none without
 * has_infra), inside the caller's transaction. SQLITE_OK or an error code. */
int tb_store_insert_level_infra(tb_store *s, int64_t level_id, const tb_level_result *lr);

/* store_temp.c: a level's inlet_temperatures row (none without has_temp),
 * inside the caller's transaction. SQLITE_OK or an error code. */
int tb_store_insert_level_temperature(tb_store *s, int64_t run_id, int64_t level_id, const tb_level_result *lr);

/* store_writer.c: field 22 (starttime) of /proc/PID/stat and the state
 * letter (state may be NULL); -1 when unreadable. And the marking of every
 * run whose writer is gone as 'interrupted' (best effort, logged). */
int64_t tb_store_proc_starttime(int64_t pid, char *state);
void tb_store_mark_dead_runs(struct sqlite3 *db, const char *path);

/* store.c: fills err with "what: <SQLite's message>", saying what a full
 * disk or a file size limit means for the data. */
void tb_store_db_err(struct sqlite3 *db, const char *path, char *err, const char *what);

/* store_migrate.c: the schema version of db (PRAGMA user_version; an SQLite
 * result code); whether this tilebench knows it (-1 with err naming both
 * when it is newer, or when it is negative); and the upkeep: from version (as read) to TB_STORE_SCHEMA_VERSION, 0 or -1
 * with err. A new database (version 0, empty) gets tb_store_fresh_schema. */
int tb_store_read_version(struct sqlite3 *db, int *version);
int tb_store_check_version(const char *path, int version, char *err);
/* 0 when db, of schema version (as read), is a tilebench results database
 * or a new file: at version 0 it holds nothing, from 1 on it has the runs
 * table. Else -1 with err: another program's database never gets our tables
 * nor a change of journal mode. */
int tb_store_check_ours(struct sqlite3 *db, const char *path, int version, char *err);
int tb_store_migrate(struct sqlite3 *db, const char *path, int version, char *err);

/* The migrations (store_schema.c): entry i takes the schema from version i
 * to i + 1, one SQL text each. */
extern const char *const tb_store_migrations[TB_STORE_SCHEMA_VERSION];
/* The schema all of them build, as the CREATE statements of its tables and
 * indexes (generated at build time by results/gen/store_schema_gen.c): what
 * a new database is given, in one transaction. */
extern const char tb_store_fresh_schema[];

#endif
