/*
 * mail_msg.h: the messages the mail workload sends and appends, and their
 * check on the way back. Every message carries "X-Tilebench-Checksum:
 * fnv1a64:<16 hex digits>" over its body (the bytes after the blank line
 * ending the header, CRLF line ends, as IMAP returns them), so a FETCH of the
 * body proves the store kept the message intact. Pure functions, no I/O.
 */
#ifndef TB_LOADGEN_MAIL_MSG_H
#define TB_LOADGEN_MAIL_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"

#define TB_MAIL_CHECKSUM_HEADER "X-Tilebench-Checksum"

/* A read-only text corpus that message bodies are cut from: lines of words
 * with CRLF ends, some starting with '.' (so DATA dot-stuffing is exercised)
 * and some that are a lone ".". Shared by all users of a workload. */
typedef struct tb_mail_corpus {
    char *text;
    size_t len;
    size_t *line_off; /* start of each line; line_off[n_lines] = len */
    size_t n_lines;
} tb_mail_corpus;

/* Builds a corpus of about bytes bytes (>= 1 KiB), deterministic for a seed. */
void tb_mail_corpus_init(tb_mail_corpus *c, size_t bytes, uint64_t seed);
void tb_mail_corpus_free(tb_mail_corpus *c);

/* FNV-1a 64-bit hash of buf[0..len) (Fowler, Noll, Vo; public domain algorithm). */
uint64_t tb_mail_checksum(const char *buf, size_t len);

/*
 * Writes a complete RFC 5322 message into a new buffer (caller frees):
 * From, To, Subject, Message-ID, MIME headers, the checksum header, a blank
 * line, and a body of about body_bytes cut from the corpus at line start
 * r % n_lines (whole lines, at least one). *len gets the message length.
 */
char *tb_mail_msg_build(const tb_mail_corpus *c, const char *from, const char *to, const char *msgid, size_t body_bytes,
                        uint64_t r, size_t *len);

/*
 * Checks a whole message as fetched (BODY[]): finds the header's end, the
 * checksum header in it (case-insensitive name) and compares with the body's
 * checksum. 0 when they match, -1 with err (no header end, no checksum
 * header, malformed value, mismatch).
 */
int tb_mail_msg_verify(const char *msg, size_t len, char *err) TB_WUR;

/* Reads the checksum header's value out of a header block (BODY[HEADER]).
 * 0 with *sum, -1 when absent or malformed. */
int tb_mail_header_checksum(const char *hdr, size_t len, uint64_t *sum);

#endif
