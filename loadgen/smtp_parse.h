/*
 * smtp_parse.h: the pure (no I/O) halves of the SMTP/LMTP client: reading a
 * server reply (one or more "CCC-text" lines ending in "CCC text", RFC 5321
 * 4.2) out of whatever bytes have arrived, and dot-stuffing a message for
 * DATA (RFC 5321 4.5.2). loadgen/mail.c drives them from libevent; the unit
 * test feeds them replies split at every byte boundary.
 */
#ifndef TB_LOADGEN_SMTP_PARSE_H
#define TB_LOADGEN_SMTP_PARSE_H

#include <stddef.h>

#include "common/tb_common.h"

/* Longest reply line accepted, CRLF included. RFC 5321 4.5.3.1.5 says 512;
 * real servers send longer greetings, so we allow more before calling it garbage. */
#define TB_SMTP_MAX_LINE 2048

/* Extensions seen in an EHLO/LHLO reply (bit set). */
enum { TB_SMTP_CAP_PIPELINING = 1u << 0, TB_SMTP_CAP_8BITMIME = 1u << 1, TB_SMTP_CAP_CHUNKING = 1u << 2 };

typedef struct tb_smtp_reply {
    int code;      /* the 3-digit reply code, 200..599 */
    size_t len;    /* bytes of the whole reply, every line with its line end */
    int lines;     /* number of lines */
    unsigned caps; /* TB_SMTP_CAP_* keywords found at the start of lines 2..n */
} tb_smtp_reply;

/*
 * Parses the one reply at the start of buf[0..len). Lines end in CRLF (a
 * bare LF is tolerated). Returns 1 when the reply is complete (out filled;
 * the caller drops out->len bytes), 0 when more bytes are needed, -1 with
 * err when the bytes cannot be an SMTP reply (no 3-digit code, mixed codes
 * in one reply, a line over TB_SMTP_MAX_LINE).
 */
int tb_smtp_reply_parse(const char *buf, size_t len, tb_smtp_reply *out, char *err) TB_WUR;

/* Capacity tb_smtp_dot_stuff needs for a message of len bytes. */
size_t tb_smtp_stuffed_cap(size_t len);

/*
 * Writes msg[0..len) as DATA content into out (tb_smtp_stuffed_cap(len)
 * bytes): a '.' doubled at the start of every line that begins with one,
 * a CRLF added when the message does not end with one, then the ".\r\n"
 * terminator. Returns the bytes written.
 */
size_t tb_smtp_dot_stuff(const char *msg, size_t len, char *out);

#endif
