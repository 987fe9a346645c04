/*
 * web_html.h: how the reference web application writes its pages: into a
 * tb_buf (common/buf.h) of at most TB_WEB_PAGE_MAX bytes, every value that
 * comes from the database or the request escaped by tb_html_escape_buf
 * (common/html.h), so a title such as "<script>" comes out as text.
 *
 * An append past the cap is refused and leaves b->overflow set; the page is
 * checked once, when it is sent (a 500 instead of a page cut short), so the
 * page code appends without checking every call (tb_buf_put, tb_buf_putn,
 * tb_buf_putf for trusted markup; web_esc for values).
 */
#ifndef TB_SUT_WEB_HTML_H
#define TB_SUT_WEB_HTML_H

#include <stddef.h>

#include "common/buf.h"
#include "common/html.h"
#include "common/tb_common.h"

/* Largest page: TagSearch lists 125 events, EventDetail 20 comments of up to
 * 8 KiB each (up to 6 bytes per byte escaped); 4 MiB holds either with room. */
#define TB_WEB_PAGE_MAX ((size_t)4 << 20)

/* Appends s (NULL: nothing) escaped for HTML text and quoted attribute values. */
static inline void web_esc(tb_buf *b, const char *s) {
    if (tb_html_escape_buf(b, s) != 0) b->overflow = 1;
}

#endif
