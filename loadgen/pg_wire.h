/*
 * pg_wire.h: the pure (no I/O) halves of running a prepared statement over
 * PostgreSQL's frontend/backend protocol, version 3 ("extended query"):
 * writing the Bind, Execute and Sync messages that run it, and reading the
 * backend's reply, up to and including its ReadyForQuery, out of whatever
 * bytes have arrived. The oltp workload (loadgen/oltp.c) runs its statements
 * this way once libpq has connected, authenticated and prepared them on a
 * connection without TLS or GSSAPI encryption: libpq's own result objects,
 * built and freed per statement, were most of the client's user-space CPU
 * per point lookup. The unit test feeds replies split at every byte
 * boundary; a fuzz target feeds arbitrary bytes.
 *
 * Messages (PostgreSQL documentation, "Message Formats"): a type byte, then
 * an int32 length in network order that counts itself and the body.
 */
#ifndef TB_LOADGEN_PG_WIRE_H
#define TB_LOADGEN_PG_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"

/* Longest message the reader accepts, length field included: PostgreSQL's
 * own limit on a field value is 1 GiB, and a row holds a few. A longer
 * length is taken as a broken stream, not waited for. */
#define TB_PGW_MAX_MSG (64u << 20)
#define TB_PGW_KEEP    256 /* bytes kept of a body the reader looks into (DataRow, ErrorResponse) */

/* What one statement's reply said. */
typedef struct tb_pgw_reply {
    int rows;          /* DataRow messages */
    long first_len;    /* length of the first row's first field: -1 NULL or no row */
    char first[64];    /* its text, NUL-terminated, cut at 63 bytes */
    int error;         /* an ErrorResponse came */
    char severity[8];  /* its severity (ERROR, FATAL, PANIC; non-localized when the server sends it) */
    char sqlstate[6];  /* its SQLSTATE */
    char message[160]; /* its primary message, cut to fit */
    char status;       /* ReadyForQuery's transaction status: 'I' idle, 'T' in a block, 'E' failed block */
} tb_pgw_reply;

/* A reader's state across reads: a message may arrive in any number of pieces. */
typedef struct tb_pgw_reader {
    unsigned char hdr[5];
    unsigned hdr_len;  /* bytes of the current message's header seen, 0..5 */
    uint32_t left;     /* bytes of its body still to come */
    unsigned keep_len; /* bytes of its body kept (at most TB_PGW_KEEP) */
    unsigned char keep[TB_PGW_KEEP];
    tb_pgw_reply reply;
} tb_pgw_reader;

/* Starts reading a new reply. */
void tb_pgw_reader_reset(tb_pgw_reader *r);

/* Whether r stands between two messages (no message partly read). */
int tb_pgw_reader_between(const tb_pgw_reader *r);

/*
 * Reads buf[0..len) of the backend's stream into r. Returns the bytes taken:
 * all of them while the reply goes on (*done = 0), or those up to the end of
 * its ReadyForQuery (*done = 1: r->reply is whole; what follows is not part
 * of it). -1 with err when the bytes cannot be a reply to Bind/Execute/Sync:
 * a length below 4 or over TB_PGW_MAX_MSG, a message of a type such a reply
 * never holds (authentication, COPY, ...), or a ReadyForQuery, BindComplete
 * or DataRow of the wrong size.
 */
long tb_pgw_feed(tb_pgw_reader *r, const char *buf, size_t len, int *done, char *err) TB_WUR;

/* Bytes tb_pgw_exec writes for statement stmt with n text parameters vals. */
size_t tb_pgw_exec_len(const char *stmt, int n, const char *const *vals);

/*
 * Writes Bind (the unnamed portal, prepared statement stmt, n parameters
 * vals in text format, results in text format), Execute (every row) and Sync
 * into out, which holds tb_pgw_exec_len(stmt, n, vals) bytes. Returns the
 * bytes written.
 */
size_t tb_pgw_exec(char *out, const char *stmt, int n, const char *const *vals);

#endif
