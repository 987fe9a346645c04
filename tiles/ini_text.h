/*
 * ini_text.h: INI text held in memory (tile and campaign files), read with
 * Debian's libinih one whole line at a time, and the redaction of secrets
 * from such text before it is stored or quoted.
 *
 * Debian's libinih (55) is built with a 200-byte line buffer, and a longer
 * line is handed to the handler in pieces (the rest parsed as further lines,
 * with line numbers off by one per piece). Its build exports the buffer
 * settings as variables (ini_use_stack, ini_initial_alloc, ini_max_line in
 * /usr/include/ini.h), so the limit is lifted at run time: a heap buffer of
 * TB_INI_MAX_LINE + 3 bytes (inih needs room for "\r\n\0"). Our reader hands
 * inih exactly one line per call, so inih's line numbers are ours, and it
 * refuses, before inih sees it, a line that is longer than that or holds a
 * NUL byte (inih would cut the line there).
 */
#ifndef TB_TILES_INI_TEXT_H
#define TB_TILES_INI_TEXT_H

#include <ini.h>
#include <stddef.h>

#include "common/tb_common.h"

#define TB_INI_MAX_LINE 65536 /* bytes per line, without its "\n" or "\r\n" */

typedef struct tb_ini_text {
    const char *name; /* the file, for messages */
    const char *text; /* len bytes, NUL not needed */
    size_t len, off;
    int line;             /* lines handed to inih so far: the handler's current line */
    int bad_line;         /* 0, or the line the reader refused (the parse stops there) */
    char bad[TB_ERR_LEN]; /* why: "name:line: [section] key: why", raw bytes not yet escaped */
    char section[64];     /* the section the current line is in */
} tb_ini_text;

/*
 * Parses text (len bytes) with inih's rules and the handler's contract
 * (handler called with t->line set to the key's line). Returns inih's
 * result: 0, or the first line that inih or the handler found wrong (inih
 * goes on after a syntax error). When the reader refused a line, t->bad_line
 * and t->bad say which and why; lines after it are not read.
 */
int tb_ini_parse(tb_ini_text *t, const char *name, const char *text, size_t len, ini_handler handler, void *user);

/* Line `line` (1-based) of text: a pointer to it and its length without the
 * newline in *n, or NULL when text has fewer lines. */
const char *tb_ini_line(const char *text, size_t len, int line, size_t *n);

/*
 * The text (len bytes) with its secrets replaced by "***", in every line,
 * active or commented out (";" or "#"), in any section: the value of a key
 * whose name ends in "password" (mail_password), a password= or sslpassword=
 * word of a PostgreSQL connection string (an unquoted value ends at a blank
 * not escaped with '\\'), an environment assignment of a command such as
 * PGPASSWORD=..., REDISCLI_AUTH=... or X_TOKEN=..., and the password in a
 * URI's userinfo or query (as tb_redact_uri). Everything else is kept
 * byte for byte.
 * Returns malloc'd text, NUL-terminated; *out_len (may be NULL) its length.
 */
char *tb_ini_redact(const char *text, size_t len, size_t *out_len);

/* Redacts a message in place (s: a NUL-terminated string in a buffer of
 * size bytes) with the rules of tb_ini_redact, line by line. */
void tb_ini_redact_msg(char *s, size_t size);

/* The most bytes tb_ini_read_file reads: a tile or campaign file is a few KiB. */
#define TB_INI_MAX_FILE ((size_t)16 << 20)

/*
 * Reads the whole file at path (a tile file, a campaign file) into a
 * NUL-terminated heap string, its length in *len; what names the file's kind
 * in errors ("config", "campaign"). NULL with err ("config PATH: why") when
 * it cannot be opened, is a folder, cannot be read or is larger than
 * TB_INI_MAX_FILE.
 */
char *tb_ini_read_file(const char *path, const char *what, size_t *len, char *err);
#endif
