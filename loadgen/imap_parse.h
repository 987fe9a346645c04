/*
 * imap_parse.h: the pure (no I/O) half of the IMAP4rev1 client (RFC 3501):
 * finding where one server response ends in the bytes received so far,
 * literals {n} included, and reading the parts of a response the mail
 * workload needs (tag and status, "* N EXISTS/EXPUNGE", FETCH attributes,
 * SEARCH results, the APPENDUID response code of RFC 4315).
 *
 * Use: keep received bytes contiguous (loadgen/mail.c pulls up its evbuffer),
 * call tb_imap_scan_next after every read with the same tb_imap_scan (it
 * resumes where it stopped, so a 100 KB literal arriving in 1 KB reads costs
 * O(n), not O(n^2)); when it returns a length, hand that many bytes to
 * tb_imap_resp_parse, drop them and tb_imap_scan_reset.
 */
#ifndef TB_LOADGEN_IMAP_PARSE_H
#define TB_LOADGEN_IMAP_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/tb_common.h"

/* Longest response line outside literals, and largest literal accepted:
 * beyond them the server is taken to be sending garbage. */
#define TB_IMAP_MAX_LINE    65536
#define TB_IMAP_MAX_LITERAL (64u * 1024u * 1024u)

typedef struct tb_imap_scan {
    size_t pos;        /* bytes already scanned (no line end among them) */
    size_t line_start; /* start of the current line (after the last literal) */
    size_t lit_end;    /* in_lit: offset just past the literal's data */
    int in_lit;
} tb_imap_scan;

/* Makes s ready for a new response at offset 0. */
void tb_imap_scan_reset(tb_imap_scan *s);

/*
 * Looks for the end of the first response in buf[0..len): its line, every
 * literal the line announces ("{n}" before CRLF, also "~{n}" of RFC 3516),
 * and the lines after them, up to the CRLF that ends it. buf must hold the
 * same bytes as at the previous call on s, plus any that arrived since.
 * Returns the response's length (> 0), 0 when more bytes are needed, or -1
 * with err (line over TB_IMAP_MAX_LINE, literal over TB_IMAP_MAX_LITERAL).
 * A "{n}" ending resp-text (e.g. an OK's human text) is read as a literal,
 * as RFC 3501's grammar has no other reading at the end of a line.
 */
ssize_t tb_imap_scan_next(tb_imap_scan *s, const char *buf, size_t len, char *err) TB_WUR;

enum { TB_IMAP_UNTAGGED = 0, TB_IMAP_TAGGED, TB_IMAP_CONTINUE };
enum { TB_IMAP_NONE = 0, TB_IMAP_OK, TB_IMAP_NO, TB_IMAP_BAD, TB_IMAP_BYE, TB_IMAP_PREAUTH };

typedef struct tb_imap_resp {
    int kind;     /* TB_IMAP_UNTAGGED ("* ..."), TB_IMAP_TAGGED, TB_IMAP_CONTINUE ("+ ...") */
    char tag[32]; /* tagged: the tag */
    int status;   /* OK/NO/BAD/BYE/PREAUTH, or TB_IMAP_NONE for untagged data */
    int has_num;  /* "* 12 EXISTS": 1, num = 12 */
    uint32_t num;
    char word[24];    /* upper-cased: "EXISTS", "EXPUNGE", "FETCH", "SEARCH", "FLAGS",
                         "CAPABILITY", ...; for a status response the status word */
    const char *rest; /* the bytes after word (and its space), into the response */
    size_t rest_len;  /* up to, not including, the final CRLF */
} tb_imap_resp;

/*
 * Splits one complete response (as delimited by tb_imap_scan_next) into
 * out; pointers in out point into buf. 0, or -1 with err when it is not an
 * IMAP response (no tag, no status where a tagged one needs one, ...).
 */
int tb_imap_resp_parse(const char *buf, size_t len, tb_imap_resp *out, char *err) TB_WUR;

/* What the workload reads from "* N FETCH (...)". */
typedef struct tb_imap_fetch {
    uint32_t seq; /* N */
    int has_uid;
    uint32_t uid;
    int has_flags, seen, deleted;
    int has_size;
    uint32_t size;    /* RFC822.SIZE */
    const char *body; /* the first BODY[...] / BINARY[...] / RFC822* value, NULL when absent or NIL */
    size_t body_len;
    char section[64]; /* its section, e.g. "" for BODY[], "HEADER" for BODY[HEADER]; as long as an item name */
} tb_imap_fetch;

/*
 * Reads the msg-att list of an untagged FETCH (r->word == "FETCH"). Unknown
 * attributes are skipped (atoms, numbers, quoted strings, literals, nested
 * lists). 0, or -1 with err when the list is malformed.
 */
int tb_imap_fetch_parse(const tb_imap_resp *r, tb_imap_fetch *out, char *err) TB_WUR;

/*
 * Reads the numbers of "* SEARCH 3 5 9" into out (at most cap; *n gets the
 * count found, which may exceed cap). 0, or -1 with err on a non-number.
 */
int tb_imap_search_parse(const tb_imap_resp *r, uint32_t *out, size_t cap, size_t *n, char *err) TB_WUR;

/* The UID of "[APPENDUID uidvalidity uid]" in a tagged OK: 1 found, 0 not. */
int tb_imap_appenduid(const tb_imap_resp *r, uint32_t *uid);

/*
 * Writes s as an IMAP quoted string ("a\"b") into out (len bytes). -1 when s
 * holds CR, LF or NUL (they need a literal) or out is too small.
 */
int tb_imap_quote(const char *s, char *out, size_t len) TB_WUR;

#endif
