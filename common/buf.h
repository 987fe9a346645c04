/*
 * buf.h: a bounded growable byte buffer, in the spirit of curl's dynbuf.
 * The buffer doubles as it grows, is always NUL-terminated, and refuses to
 * grow past the cap set at init: an append that would pass it fails as a
 * whole (the buffer keeps what it had) and sets b->overflow, so a caller can
 * report "output cut at N KiB" instead of losing memory or data silently.
 */
#ifndef TB_COMMON_BUF_H
#define TB_COMMON_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "common/tb_common.h"

typedef struct {
    char *ptr;    /* NULL until the first append; then NUL-terminated */
    size_t len;   /* bytes held, without the NUL */
    size_t cap;   /* bytes allocated */
    size_t max;   /* most bytes it may hold (without the NUL) */
    int overflow; /* an append was refused because of max */
} tb_buf;

/*
 * Makes room for element n (0-based) of an array of elem-byte elements whose
 * capacity is *cap elements: doubles *cap (from 8) until n fits, zeroes the
 * new elements, and returns the (possibly moved) array. Aborts on overflow,
 * as xrealloc does on out-of-memory. Use: a = tb_grow(a, len, &cap, sizeof *a);
 */
void *tb_grow(void *arr, size_t n, size_t *cap, size_t elem);

/* Default cap for callers without a better one: 64 MiB. */
#define TB_BUF_DEFAULT_MAX ((size_t)64 << 20)

/* An empty buffer that may hold up to max bytes (0: TB_BUF_DEFAULT_MAX). */
void tb_buf_init(tb_buf *b, size_t max);
/* Appends n bytes. Returns 0, or -1 (nothing appended, overflow set) past the cap. */
int tb_buf_add(tb_buf *b, const void *p, size_t n) TB_WUR;
/* Appends a C string. */
int tb_buf_adds(tb_buf *b, const char *s) TB_WUR;
/* Appends printf-formatted text. */
int tb_buf_addf(tb_buf *b, const char *fmt, ...) TB_PRINTF(2, 3) TB_WUR;
int tb_buf_vaddf(tb_buf *b, const char *fmt, va_list ap) TB_WUR;
/*
 * The same appends for code that checks once at the end: a refusal only
 * leaves b->overflow set, which stays set until tb_buf_reset (a generator
 * writing many rows, a page built piece by piece).
 */
void tb_buf_put(tb_buf *b, const char *s);
void tb_buf_putn(tb_buf *b, const void *p, size_t n);
void tb_buf_putf(tb_buf *b, const char *fmt, ...) TB_PRINTF(2, 3);
/* The text so far, "" when empty (never NULL). Valid until the next append. */
const char *tb_buf_str(const tb_buf *b);
/* Empties the buffer, keeping its memory and cap. */
void tb_buf_reset(tb_buf *b);
/* Hands the text to the caller (free() it; never NULL), leaving b empty. */
char *tb_buf_take(tb_buf *b, size_t *len);
void tb_buf_free(tb_buf *b);

#endif
