/*
 * html.h: HTML escaping, once for every page tilebench writes (the reports,
 * the compare page, serve, and the reference web application).
 * & < > " ' become entities, so one function serves text and attribute
 * values alike. Control characters other than tab and newline are invalid in HTML: they become U+FFFD.
 */
#ifndef TB_COMMON_HTML_H
#define TB_COMMON_HTML_H

#include <stdio.h>

#include "common/buf.h"

/* Writes s (NULL: nothing) escaped to f. */
void tb_html_escape_file(FILE *f, const char *s);
/* Appends s (NULL: nothing) escaped to b; -1 past b's cap. */
int tb_html_escape_buf(tb_buf *b, const char *s) TB_WUR;

#endif
