/*
 * web_html.h: a growing text buffer with HTML escaping, for the reference web
 * application's pages (sut/webapp/webapp.c). Every value that comes from the
 * database or the request goes through tb_html_esc, so a title such as
 * "<script>" comes out as text.
 */
#ifndef TB_SUT_WEB_HTML_H
#define TB_SUT_WEB_HTML_H

#include <stddef.h>

#include "common/tb_common.h"

typedef struct tb_html {
    char *p;    /* NUL-terminated text; NULL until the first write */
    size_t len; /* bytes, without the NUL */
    size_t cap;
} tb_html;

/* Appends s verbatim (trusted markup). Allocation failure aborts. */
void tb_html_put(tb_html *b, const char *s);
/* Appends n bytes of s verbatim. */
void tb_html_putn(tb_html *b, const char *s, size_t n);
/* Appends printf-formatted trusted markup (numbers, fixed strings). */
void tb_html_putf(tb_html *b, const char *fmt, ...) TB_PRINTF(2, 3);
/* Appends s escaped for HTML text and double- or single-quoted attribute
 * values: & < > " ' become &amp; &lt; &gt; &quot; &#39;. NULL appends nothing. */
void tb_html_esc(tb_html *b, const char *s);
/* Hands the text over: returns b->p (caller frees; never NULL) and empties b. */
char *tb_html_take(tb_html *b, size_t *len);
/* Frees the text; b is empty afterwards. */
void tb_html_free(tb_html *b);

#endif
