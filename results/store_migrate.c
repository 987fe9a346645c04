/*
 * store_migrate.c: how a results database gets the schema of this
 * tilebench. The version is PRAGMA user_version; the migrations
 * (store_schema.c) each take it one step up in their own transaction, and a
 * new database gets the schema they build (tb_store_fresh_schema, made from
 * them at build time) in one.
 */
#include "results/store_internal.h"

#include <stdio.h>

#include <sqlite3.h>

int tb_store_read_version(sqlite3 *db, int *version) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *version = sqlite3_column_int(st, 0);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

int tb_store_check_version(const char *path, int version, char *err) {
    if (version < 0) {
        tb_seterr(err, "open %s: not a tilebench results database (its schema version is %d)", path, version);
        return -1;
    }
    if (version > TB_STORE_SCHEMA_VERSION) {
        tb_seterr(err, "open %s: schema version %d is newer than this tilebench %s knows (%d); use a newer tilebench",
                  path, version, TB_VERSION, TB_STORE_SCHEMA_VERSION);
        return -1;
    }
    return 0;
}

/* The number of objects (tables, indexes) in db, or -1. */
static int count_objects(sqlite3 *db) {
    sqlite3_stmt *st = NULL;
    int n = -1;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* 1 when db has a table of that name, 0 when not, -1 on error. */
static int has_table(sqlite3 *db, const char *name) {
    sqlite3_stmt *st = NULL;
    int r = -1;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        switch (sqlite3_step(st)) {
        case SQLITE_ROW: r = 1; break;
        case SQLITE_DONE: r = 0; break;
        default: break;
        }
    }
    sqlite3_finalize(st);
    return r;
}

int tb_store_check_ours(sqlite3 *db, const char *path, int version, char *err) {
    /* a new file holds nothing; every version from 1 on has the runs table */
    int ok = version == 0 ? count_objects(db) : has_table(db, "runs");
    if (version == 0 ? ok == 0 : ok == 1) return 0;
    if (ok < 0)
        tb_seterr(err, "open %s: its list of tables cannot be read: %s", path, sqlite3_errmsg(db));
    else
        tb_seterr(err, "open %s: not a tilebench results database (%s); give --db a new file", path,
                  version == 0 ? "it holds another program's tables" : "schema version set, but no runs table");
    return -1;
}

static int exec_sql(sqlite3 *db, const char *sql) { return sqlite3_exec(db, sql, NULL, NULL, NULL); }

/* The caller saved the error first; SQLite may have rolled back already. */
static void rollback(sqlite3 *db) {
    if (!sqlite3_get_autocommit(db)) (void)exec_sql(db, "ROLLBACK");
}

/* Fills err for a failed schema change: on a full disk, says that nothing
 * is lost (the file keeps the version it had; the next open goes on). */
static void schema_err(sqlite3 *db, const char *path, char *err, const char *what) {
    if ((sqlite3_errcode(db) & 0xff) == SQLITE_FULL)
        tb_seterr(err,
                  "%s: %s (no space left for %s; it keeps the schema version it had, and the next open goes on "
                  "from there)",
                  what, sqlite3_errmsg(db), path);
    else
        tb_store_db_err(db, path, err, what);
}

/* Sets user_version to version and commits; SQLITE_OK or the error. */
static int commit_version(sqlite3 *db, int version) {
    char pragma[48];
    int rc;
    snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", version);
    rc = exec_sql(db, pragma);
    return rc == SQLITE_OK ? exec_sql(db, "COMMIT") : rc;
}

/* Applies migrations[version..] one transaction each. BEGIN IMMEDIATE takes
 * the write lock before re-reading the version, so two processes opening a
 * new database at once do not both run the same migration. */
static int migrate_steps(sqlite3 *db, const char *path, char *err) {
    for (;;) {
        int version = 0;
        char what[320];
        snprintf(what, sizeof what, "open %s", path);
        if (exec_sql(db, "BEGIN IMMEDIATE") != SQLITE_OK) {
            schema_err(db, path, err, "open: begin migration");
            return -1;
        }
        if (tb_store_read_version(db, &version) != SQLITE_OK) {
            tb_store_db_err(db, path, err, what);
            rollback(db);
            return -1;
        }
        if (tb_store_check_version(path, version, err) != 0) {
            rollback(db);
            return -1;
        }
        if (version == TB_STORE_SCHEMA_VERSION) {
            rollback(db); /* nothing to do: end the read */
            return 0;
        }
        snprintf(what, sizeof what, "migrate %s to schema version %d", path, version + 1);
        if (exec_sql(db, tb_store_migrations[version]) != SQLITE_OK || commit_version(db, version + 1) != SQLITE_OK) {
            schema_err(db, path, err, what);
            rollback(db);
            return -1;
        }
    }
}

/* Gives a new, empty database the schema the migrations build in one
 * transaction. Applying them one by one costs about 20 ms of CPU, most of it
 * SQLite reparsing the whole schema at each ALTER TABLE ... ADD COLUMN, and
 * a commit each. 1 when done; 0 when another tilebench made the schema since
 * the caller looked (it commits the schema and its version together), so
 * migrate_steps goes on from the version it finds; -1 with err when the file
 * is not empty (another program's tables arrived) or on an error. */
static int create_fresh(sqlite3 *db, const char *path, char *err) {
    int version = -1;
    char what[320];
    snprintf(what, sizeof what, "create the schema of %s", path);
    if (exec_sql(db, "BEGIN IMMEDIATE") != SQLITE_OK || tb_store_read_version(db, &version) != SQLITE_OK) {
        schema_err(db, path, err, what);
        rollback(db);
        return -1;
    }
    if (version != 0) {
        rollback(db);
        return 0;
    }
    if (tb_store_check_ours(db, path, 0, err) != 0) {
        rollback(db);
        return -1;
    }
    if (exec_sql(db, tb_store_fresh_schema) != SQLITE_OK || commit_version(db, TB_STORE_SCHEMA_VERSION) != SQLITE_OK) {
        schema_err(db, path, err, what);
        rollback(db);
        return -1;
    }
    return 1;
}

int tb_store_migrate(sqlite3 *db, const char *path, int version, char *err) {
    if (version == 0) {
        int r = create_fresh(db, path, err);
        if (r != 0) return r < 0 ? -1 : 0;
    }
    return migrate_steps(db, path, err);
}
