/*
 * vcsv.h: the verifier's own CSV reader for a bundle's data/TABLE.csv files
 * (docs/bundle.md): RFC 4180 (a field holding , " CR or LF is quoted, ""
 * inside stands for one "), a header row of column names, and NULL written
 * as an empty unquoted field, which reads back as NULL (a quoted "" is the
 * empty string). It shares no code with the writer (publish/), so a bug in
 * one is not hidden by the same bug in the other.
 */
#ifndef TB_VERIFY_VCSV_H
#define TB_VERIFY_VCSV_H

#include <stddef.h>
#include <stdint.h>

/* Columns a header may have (the widest table has about 30). */
#define TB_VCSV_COLS_MAX 1000

typedef struct tb_vcsv {
    char *name;    /* the file's name, for errors */
    size_t n_cols; /* columns of the header */
    char **cols;   /* their names */
    size_t n_rows; /* data rows (the header not counted) */
    char **cells;  /* n_rows * n_cols; NULL for a NULL field */
} tb_vcsv;

/* Parses text (len bytes, need not end in a NUL) of file name. Returns 0, or
 * -1 with err (TB_ERR_LEN bytes) naming the file and line: "data/ops.csv
 * line 4: 3 fields, the header has 5". A row must have exactly the header's
 * number of fields; a quote must close; a quoted field must end at a comma
 * or a line end; the header's names are distinct, at most TB_VCSV_COLS_MAX;
 * no byte is NUL. *out is zeroed first; free it with tb_vcsv_free even after a
 * failure. */
int tb_vcsv_parse(const char *name, const char *text, size_t len, tb_vcsv *out, char *err);
void tb_vcsv_free(tb_vcsv *t);

/* The index of column name, or -1. */
int tb_vcsv_col(const tb_vcsv *t, const char *name);
/* The cell of row r, column c (c < 0: NULL); NULL for a NULL field. */
const char *tb_vcsv_get(const tb_vcsv *t, size_t r, int c);
/* Reads cell (r, c) as a number: 1 with *out set, 0 when NULL (or c < 0),
 * -1 when it is not a number as publish writes one: [-]digits for an
 * integer; [-]digits[.digits][e[+-]digits], "inf" or "-inf" (%.17g's
 * infinity) for a real. A NaN is stored as NULL, so "nan" is refused, and so
 * are "+1", " 12", "0x10" and "infinity", which strtod would take. */
int tb_vcsv_real(const tb_vcsv *t, size_t r, int c, double *out);
int tb_vcsv_int(const tb_vcsv *t, size_t r, int c, int64_t *out);

#endif
