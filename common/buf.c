/*
 * buf.c: the bounded growable buffer (buf.h).
 */
#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tb_buf_init(tb_buf *b, size_t max) {
    memset(b, 0, sizeof *b);
    b->max = max ? max : TB_BUF_DEFAULT_MAX;
}

/* Makes room for n more bytes plus the NUL; -1 past the cap. */
static int reserve(tb_buf *b, size_t n) {
    size_t need, cap;
    if (n > b->max || b->len > b->max - n) {
        b->overflow = 1;
        return -1;
    }
    need = b->len + n + 1;
    if (need <= b->cap) return 0;
    cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (cap > b->max + 1) cap = b->max + 1;
    b->ptr = xrealloc(b->ptr, cap);
    b->cap = cap;
    return 0;
}

int tb_buf_add(tb_buf *b, const void *p, size_t n) {
    if (reserve(b, n) != 0) return -1;
    if (n) memcpy(b->ptr + b->len, p, n);
    b->len += n;
    b->ptr[b->len] = '\0';
    return 0;
}

int tb_buf_adds(tb_buf *b, const char *s) { return tb_buf_add(b, s ? s : "", s ? strlen(s) : 0); }

int tb_buf_vaddf(tb_buf *b, const char *fmt, va_list ap) {
    va_list cp;
    int n;
    va_copy(cp, ap);
    if (b->ptr && b->cap - b->len > 1) { /* formatted once when it fits the room left, as it mostly does */
        size_t room = b->cap - b->len;
        n = vsnprintf(b->ptr + b->len, room, fmt, cp);
        va_end(cp);
        if (n >= 0 && (size_t)n < room && (size_t)n <= b->max - b->len) {
            b->len += (size_t)n;
            return 0;
        }
        b->ptr[b->len] = '\0'; /* what did not fit is dropped, then measured below */
        va_copy(cp, ap);
    }
    n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0) {
        b->overflow = 1; /* an encoding error: refused like an append past the cap */
        return -1;
    }
    if (reserve(b, (size_t)n) != 0) return -1;
    vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int tb_buf_addf(tb_buf *b, const char *fmt, ...) {
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = tb_buf_vaddf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void tb_buf_put(tb_buf *b, const char *s) { (void)!tb_buf_adds(b, s); }

void tb_buf_putn(tb_buf *b, const void *p, size_t n) { (void)!tb_buf_add(b, p, n); }

void tb_buf_putf(tb_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    (void)!tb_buf_vaddf(b, fmt, ap);
    va_end(ap);
}

const char *tb_buf_str(const tb_buf *b) { return b->ptr ? b->ptr : ""; }

void tb_buf_reset(tb_buf *b) {
    b->len = 0;
    b->overflow = 0;
    if (b->ptr) b->ptr[0] = '\0';
}

char *tb_buf_take(tb_buf *b, size_t *len) {
    char *p = b->ptr ? b->ptr : xstrdup("");
    if (len) *len = b->len;
    b->ptr = NULL;
    b->len = b->cap = 0;
    b->overflow = 0;
    return p;
}

void tb_buf_free(tb_buf *b) {
    free(b->ptr);
    b->ptr = NULL;
    b->len = b->cap = 0;
    b->overflow = 0;
}

void *tb_grow(void *arr, size_t n, size_t *cap, size_t elem) {
    size_t old = *cap, c = old ? old : 8;
    if (n < old) return arr;
    while (c <= n) {
        if (c > SIZE_MAX / 2) abort();
        c *= 2;
    }
    if (elem && c > SIZE_MAX / elem) abort();
    arr = xrealloc(arr, c * elem);
    memset((char *)arr + old * elem, 0, (c - old) * elem);
    *cap = c;
    return arr;
}
