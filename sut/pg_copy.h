/*
 * pg_copy.h: internal to sut/. What the data loaders (oltp_load.c,
 * web_load.c) send to PostgreSQL: a schema script, and generated rows with
 * COPY ... FROM STDIN.
 */
#ifndef TB_SUT_PG_COPY_H
#define TB_SUT_PG_COPY_H

#include <libpq-fe.h>
#include <stddef.h>

/* COPY table_cols ("t(a,b)") FROM STDIN with data (len bytes of COPY text),
 * sent in 64 KiB pieces. 0, or -1 with err = "what: <libpq message>". */
int sut_pg_copy_in(PGconn *conn, const char *table_cols, const char *data, size_t len, const char *what, char *err);

/* Connects to conninfo for loading: NULL with err = "what: <libpq message>"
 * when it cannot; drop/create chatter ("schema does not exist, skipping")
 * is turned off, as it is not for the user. */
PGconn *sut_pg_connect(const char *conninfo, const char *what, char *err);

/* Runs sql (several statements: the server stops at the first error) as one
 * simple query. 0, or -1 with err = "what: <libpq message>". */
int sut_pg_exec(PGconn *conn, const char *sql, const char *what, char *err);

#endif
