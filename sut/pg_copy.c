/*
 * pg_copy.c: schema scripts and COPY FROM STDIN for the data loaders (pg_copy.h).
 */
#include "sut/pg_copy.h"

#include <stdio.h>

#include "common/tb_common.h"

#define COPY_PIECE 65536

static int fail(PGconn *conn, const char *what, char *err) {
    const char *msg = PQerrorMessage(conn);
    tb_seterr_line(err, what, msg && *msg ? msg : "unknown libpq error");
    return -1;
}

int sut_pg_copy_in(PGconn *conn, const char *table_cols, const char *data, size_t len, const char *what, char *err) {
    char sql[640];
    PGresult *res;
    size_t off = 0;
    if (snprintf(sql, sizeof sql, "COPY %s FROM STDIN", table_cols) >= (int)sizeof sql) {
        tb_seterr(err, "%s: COPY target too long", what);
        return -1;
    }
    res = PQexec(conn, sql);
    if (PQresultStatus(res) != PGRES_COPY_IN) {
        PQclear(res);
        return fail(conn, what, err);
    }
    PQclear(res);
    while (off < len) {
        size_t n = len - off > COPY_PIECE ? COPY_PIECE : len - off;
        if (PQputCopyData(conn, data + off, (int)n) != 1) return fail(conn, what, err);
        off += n;
    }
    if (PQputCopyEnd(conn, NULL) != 1) return fail(conn, what, err);
    res = PQgetResult(conn);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        PQclear(res);
        return fail(conn, what, err);
    }
    PQclear(res);
    while ((res = PQgetResult(conn)) != NULL)
        PQclear(res);
    return 0;
}

int sut_pg_exec(PGconn *conn, const char *sql, const char *what, char *err) {
    PGresult *res = PQexec(conn, sql);
    int ok = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK;
    PQclear(res);
    return ok ? 0 : fail(conn, what, err);
}

/* The server's notices and warnings are not ours to print: a failure comes
 * back as an error, and a server stopped under a load (deploy's cluster at
 * the end of its op) would print a bare "WARNING: terminating connection"
 * on stderr. */
static void drop_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}

PGconn *sut_pg_connect(const char *conninfo, const char *what, char *err) {
    PGconn *conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK) {
        fail(conn, what, err);
        PQfinish(conn);
        return NULL;
    }
    PQsetNoticeProcessor(conn, drop_notice, NULL);
    PQclear(PQexec(conn, "SET client_min_messages = warning"));
    return conn;
}
