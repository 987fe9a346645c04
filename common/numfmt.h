/*
 * numfmt.h: numbers as decimal text, faster than printf and byte for byte
 * what printf writes. The CSV files of a result bundle hold about a million
 * of them for a day-long run, and glibc's printf spends most of a bundle's
 * time there (its %.17g works in arbitrary precision for every value).
 */
#ifndef TB_COMMON_NUMFMT_H
#define TB_COMMON_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

/* Room for any of the texts below, with the NUL. */
#define TB_NUMFMT_LEN 32

/* v in decimal, as printf's "%lld" writes it, NUL-terminated in out
 * (TB_NUMFMT_LEN bytes). Returns the length. */
size_t tb_fmt_int64(int64_t v, char *out);

/* v in decimal, as printf's "%llu" writes it; otherwise as tb_fmt_int64.
 * The load generator writes its per-op numbers with these (a key, a
 * length, a primary key): printf parses its format on every call. */
size_t tb_fmt_uint64(uint64_t v, char *out);

/*
 * v as printf's "%.17g" writes it, NUL-terminated in out (TB_NUMFMT_LEN
 * bytes): 17 significant digits, correctly rounded, so strtod gives back v
 * bit for bit. Whole numbers below 2^53 and values from 1e-5 up to 2^53 are
 * computed exactly in 128-bit integers; anything else (subnormals, huge or
 * tiny magnitudes, inf, nan) goes to snprintf. Returns the length.
 */
size_t tb_fmt_double17(double v, char *out);

#endif
