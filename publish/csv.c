/*
 * csv.c: a table's rows as RFC 4180 CSV (csv.h). The columns come from the
 * table itself (PRAGMA table_info), so a column a later migration adds is
 * in the bundle without a change here.
 */
#include "publish/csv.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "common/numfmt.h"

void tb_csv_text(tb_buf *b, const char *s, size_t n) {
    size_t i, from = 0;
    if (n == 0) {
        tb_buf_put(b, "\"\""); /* an empty text, not NULL */
        return;
    }
    for (i = 0; i < n && !strchr(",\"\r\n", s[i]); i++) {
    }
    if (i == n) { /* nothing to quote (strchr finds the NUL too: a NUL byte is quoted) */
        tb_buf_putn(b, s, n);
        return;
    }
    tb_buf_put(b, "\"");
    for (i = 0; i < n; i++) {
        if (s[i] != '"') continue;
        tb_buf_putn(b, s + from, i + 1 - from); /* up to and with the quote, */
        tb_buf_put(b, "\"");                    /* which is doubled */
        from = i + 1;
    }
    tb_buf_putn(b, s + from, n - from);
    tb_buf_put(b, "\"");
}

void tb_csv_real(tb_buf *b, double v) {
    char s[TB_NUMFMT_LEN];
    tb_buf_putn(b, s, tb_fmt_double17(v, s)); /* %.17g's text, without printf's cost */
}

/* The table's columns without its BLOB ones, as a quoted SQL list and as
 * the header row. 0 or -1 with err. */
static int columns(sqlite3 *db, const char *table, tb_buf *list, tb_buf *header, char *err) {
    sqlite3_stmt *st = NULL;
    char sql[128];
    int n = 0, rc;
    snprintf(sql, sizeof sql, "SELECT name, type FROM pragma_table_info('%s') ORDER BY cid", table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        tb_seterr(err, "table %s: %s", table, sqlite3_errmsg(db));
        return -1;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *type = (const char *)sqlite3_column_text(st, 1);
        if (!name || (type && strcasecmp(type, "BLOB") == 0)) continue;
        if (n++) {
            tb_buf_put(list, ", ");
            tb_buf_put(header, ",");
        }
        tb_buf_putf(list, "\"%s\"", name); /* "limit" is an SQL keyword */
        tb_csv_text(header, name, strlen(name));
    }
    if (rc != SQLITE_DONE || n == 0) {
        tb_seterr(err, "table %s: %s", table, rc != SQLITE_DONE ? sqlite3_errmsg(db) : "no such table");
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    tb_buf_put(header, "\n");
    return 0;
}

/* One value of the current row as SQLite holds it. */
static void put_value(tb_buf *b, sqlite3_stmt *st, int i) {
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL: break;
    case SQLITE_INTEGER: {
        char s[TB_NUMFMT_LEN];
        tb_buf_putn(b, s, tb_fmt_int64(sqlite3_column_int64(st, i), s));
        break;
    }
    case SQLITE_FLOAT: tb_csv_real(b, sqlite3_column_double(st, i)); break;
    default: { /* TEXT (and a BLOB value in a column not declared BLOB, as its bytes) */
        const char *s = (const char *)sqlite3_column_text(st, i);
        tb_csv_text(b, s ? s : "", (size_t)sqlite3_column_bytes(st, i));
        break;
    }
    }
}

int64_t tb_csv_dump_table(sqlite3 *db, const char *table, const char *where, int64_t run_id, tb_buf *out, char *err) {
    tb_buf list, sql;
    sqlite3_stmt *st = NULL;
    int64_t rows = 0;
    int rc, n, i;
    tb_buf_init(&list, 0);
    tb_buf_init(&sql, 0);
    if (columns(db, table, &list, out, err) != 0) {
        tb_buf_free(&list);
        tb_buf_free(&sql);
        return -1;
    }
    tb_buf_putf(&sql, "SELECT %s FROM \"%s\" WHERE %s ORDER BY rowid", tb_buf_str(&list), table, where);
    rc = sqlite3_prepare_v2(db, tb_buf_str(&sql), -1, &st, NULL);
    tb_buf_free(&list);
    tb_buf_free(&sql);
    if (rc != SQLITE_OK) {
        tb_seterr(err, "table %s: %s", table, sqlite3_errmsg(db));
        return -1;
    }
    if (sqlite3_bind_parameter_count(st) >= 1) sqlite3_bind_int64(st, 1, run_id);
    n = sqlite3_column_count(st);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (i = 0; i < n; i++) {
            if (i) tb_buf_put(out, ",");
            put_value(out, st, i);
        }
        tb_buf_put(out, "\n");
        rows++;
    }
    if (rc != SQLITE_DONE) {
        tb_seterr(err, "table %s: %s", table, sqlite3_errmsg(db));
        rows = -1;
    } else if (out->overflow) {
        tb_seterr(err, "table %s: more than %zu MiB of CSV", table, out->max >> 20);
        rows = -1;
    }
    sqlite3_finalize(st);
    return rows;
}
