/*
 * web_html.c: the growing text buffer and HTML escaping behind the reference
 * web application's pages.
 */
#include "sut/webapp/web_html.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reserve(tb_html *b, size_t more) {
    if (b->p && b->len + more < b->cap) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap <= b->len + more)
        cap *= 2;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
}

void tb_html_putn(tb_html *b, const char *s, size_t n) {
    reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void tb_html_put(tb_html *b, const char *s) { tb_html_putn(b, s, strlen(s)); }

void tb_html_putf(tb_html *b, const char *fmt, ...) {
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0) return;
    reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void tb_html_esc(tb_html *b, const char *s) {
    const char *run = s;
    if (!s) return;
    for (; *s; s++) {
        const char *rep;
        switch (*s) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default: continue;
        }
        if (s > run) tb_html_putn(b, run, (size_t)(s - run));
        tb_html_put(b, rep);
        run = s + 1;
    }
    if (s > run) tb_html_putn(b, run, (size_t)(s - run));
}

char *tb_html_take(tb_html *b, size_t *len) {
    char *p;
    reserve(b, 0);
    b->p[b->len] = '\0';
    p = b->p;
    if (len) *len = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

void tb_html_free(tb_html *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
