/*
 * html.c: HTML escaping (html.h).
 */
#include "common/html.h"

#include <string.h>

/* The entity for byte c, or NULL when c is written as it is. */
static const char *entity(unsigned char c) {
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    case '\t':
    case '\n': return NULL;
    default: return (c < 0x20 || c == 0x7f) ? "\xef\xbf\xbd" : NULL;
    }
}

void tb_html_escape_file(FILE *f, const char *s) {
    const unsigned char *p = (const unsigned char *)s, *run = p;
    if (!s) return;
    for (; *p; p++) {
        const char *e = entity(*p);
        if (!e) continue;
        if (p > run) fwrite(run, 1, (size_t)(p - run), f);
        fputs(e, f);
        run = p + 1;
    }
    if (p > run) fwrite(run, 1, (size_t)(p - run), f);
}

int tb_html_escape_buf(tb_buf *b, const char *s) {
    const unsigned char *p = (const unsigned char *)s, *run = p;
    if (!s) return 0;
    for (; *p; p++) {
        const char *e = entity(*p);
        if (!e) continue;
        if (p > run && tb_buf_add(b, run, (size_t)(p - run)) != 0) return -1;
        if (tb_buf_adds(b, e) != 0) return -1;
        run = p + 1;
    }
    if (p > run && tb_buf_add(b, run, (size_t)(p - run)) != 0) return -1;
    return 0;
}
