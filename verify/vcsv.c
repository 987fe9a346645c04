/*
 * vcsv.c: an RFC 4180 reader with NULL as the empty unquoted field
 * (vcsv.h). A small state machine over the bytes: each field is collected
 * into its own buffer, so quoted commas, quotes and line ends stay inside it.
 */
#include "verify/vcsv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"

typedef struct parser {
    const char *name;
    const char *p, *end;
    size_t line;     /* the physical line at p, 1-based */
    size_t row_line; /* the line the current row starts on, for errors */
    char **row;      /* fields of the current row */
    size_t n_row, cap_row;
    char *err;
} parser;

/* A NUL byte: C strings would cut the cell short where Python's csv
 * module refuses the line, so the two readers could disagree. */
static void nul_error(parser *q) {
    tb_seterr(q->err, "%s line %zu, column %zu: a NUL byte (a table is text)", q->name, q->line, q->n_row + 1);
}

/* One field at q->p: returns 0 and the field (malloc'd, NULL for an empty
 * unquoted one) in *out, with *last = 1 when the row ends after it; -1 on
 * a malformed field. */
static int read_field(parser *q, char **out, int *last) {
    tb_buf b;
    tb_buf_init(&b, 0);
    *out = NULL;
    *last = 0;
    if (q->p < q->end && *q->p == '"') {
        q->p++;
        for (;;) {
            if (q->p >= q->end) {
                tb_seterr(q->err, "%s line %zu: a quoted field never closes", q->name, q->row_line);
                tb_buf_free(&b);
                return -1;
            }
            if (*q->p == '"') {
                if (q->p + 1 < q->end && q->p[1] == '"') {
                    tb_buf_putn(&b, "\"", 1);
                    q->p += 2;
                    continue;
                }
                q->p++;
                break;
            }
            if (*q->p == '\0') {
                nul_error(q);
                tb_buf_free(&b);
                return -1;
            }
            if (*q->p == '\n' || (*q->p == '\r' && (q->p + 1 >= q->end || q->p[1] != '\n'))) q->line++;
            tb_buf_putn(&b, q->p, 1);
            q->p++;
        }
        if (q->p < q->end && *q->p != ',' && *q->p != '\n' && *q->p != '\r') {
            tb_seterr(q->err, "%s line %zu: '%c' after a closing quote (expected a comma or a line end)", q->name,
                      q->row_line, *q->p);
            tb_buf_free(&b);
            return -1;
        }
        if (b.overflow) {
            tb_seterr(q->err, "%s line %zu: a field over %zu bytes", q->name, q->row_line, (size_t)TB_BUF_DEFAULT_MAX);
            tb_buf_free(&b);
            return -1;
        }
        *out = b.ptr ? tb_buf_take(&b, NULL) : xstrdup("");
    } else {
        const char *s = q->p;
        while (q->p < q->end && *q->p != ',' && *q->p != '\n' && *q->p != '\r') {
            if (*q->p == '"') {
                tb_seterr(q->err, "%s line %zu: a quote inside an unquoted field", q->name, q->row_line);
                return -1;
            }
            if (*q->p == '\0') {
                nul_error(q);
                return -1;
            }
            q->p++;
        }
        if (q->p > s) {
            *out = xmalloc((size_t)(q->p - s) + 1);
            memcpy(*out, s, (size_t)(q->p - s));
            (*out)[q->p - s] = '\0';
        }
    }
    tb_buf_free(&b);
    if (q->p >= q->end) {
        *last = 1;
    } else if (*q->p == ',') {
        q->p++;
    } else { /* CR LF, LF, or a lone CR */
        if (*q->p == '\r' && q->p + 1 < q->end && q->p[1] == '\n') q->p++;
        q->p++;
        q->line++;
        *last = 1;
    }
    return 0;
}

static void free_row(parser *q) {
    for (size_t i = 0; i < q->n_row; i++)
        free(q->row[i]);
    q->n_row = 0;
}

/* One row into q->row; returns 0, or -1 on a malformed field. */
static int read_row(parser *q) {
    int last = 0;
    free_row(q);
    q->row_line = q->line;
    while (!last) {
        char *f;
        if (read_field(q, &f, &last) != 0) return -1;
        q->row = tb_grow(q->row, q->n_row, &q->cap_row, sizeof *q->row);
        q->row[q->n_row++] = f;
    }
    return 0;
}

/* Charges a row's cells to check's memory budget (verify_int.h): each
 * cell's slot (the array grows by doubling, so two) and its string with
 * malloc's overhead. -1 with the error once the budget is spent. */
static int charge_row(parser *q) {
    size_t n = 0;
    for (size_t i = 0; i < q->n_row; i++)
        n += 2 * sizeof *q->row + (q->row[i] ? strlen(q->row[i]) + 1 + 16 : 0);
    if (tb_vmem_take(n) == 0) return 0;
    tb_seterr(q->err,
              "%s line %zu: the tables need more than %zu MiB in memory (check's limit, "
              "TILEBENCH_CHECK_MAX_MIB)",
              q->name, q->row_line, tb_vmem_max() >> 20);
    return -1;
}

int tb_vcsv_parse(const char *name, const char *text, size_t len, tb_vcsv *out, char *err) {
    parser q = {name, text, text + len, 1, 1, NULL, 0, 0, err};
    size_t cap_cells = 0, n_cells = 0;
    int rc = -1;
    memset(out, 0, sizeof *out);
    out->name = xstrdup(name);
    if (len == 0) {
        tb_seterr(err, "%s: empty (expected a header row of column names)", name);
        return -1;
    }
    if (read_row(&q) != 0) goto done;
    if (q.n_row > TB_VCSV_COLS_MAX) {
        tb_seterr(err, "%s line 1: %zu columns (at most %d)", name, q.n_row, TB_VCSV_COLS_MAX);
        goto done;
    }
    out->n_cols = q.n_row;
    out->cols = xcalloc(q.n_row, sizeof *out->cols);
    for (size_t i = 0; i < q.n_row; i++) {
        if (!q.row[i] || !*q.row[i]) {
            tb_seterr(err, "%s line 1: column %zu has no name", name, i + 1);
            goto done;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(out->cols[j], q.row[i]) == 0) {
                tb_seterr(err, "%s line 1: column %zu is named %.64s, as column %zu is", name, i + 1, q.row[i], j + 1);
                goto done;
            }
        out->cols[i] = q.row[i];
        q.row[i] = NULL;
    }
    q.n_row = 0;
    while (q.p < q.end) {
        if (read_row(&q) != 0) goto done;
        if (q.n_row != out->n_cols) {
            tb_seterr(err, "%s line %zu: %zu field%s, the header has %zu", name, q.row_line, q.n_row,
                      q.n_row == 1 ? "" : "s", out->n_cols);
            goto done;
        }
        if (charge_row(&q) != 0) goto done;
        for (size_t i = 0; i < q.n_row; i++) {
            out->cells = tb_grow(out->cells, n_cells, &cap_cells, sizeof *out->cells);
            out->cells[n_cells++] = q.row[i];
            q.row[i] = NULL;
        }
        q.n_row = 0;
        out->n_rows++;
    }
    rc = 0;
done:
    free_row(&q);
    free(q.row);
    return rc;
}

void tb_vcsv_free(tb_vcsv *t) {
    for (size_t i = 0; i < t->n_cols; i++)
        free(t->cols[i]);
    for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
        free(t->cells[i]);
    free(t->cols);
    free(t->cells);
    free(t->name);
    memset(t, 0, sizeof *t);
}

int tb_vcsv_col(const tb_vcsv *t, const char *name) {
    for (size_t i = 0; i < t->n_cols; i++)
        if (strcmp(t->cols[i], name) == 0) return (int)i;
    return -1;
}

const char *tb_vcsv_get(const tb_vcsv *t, size_t r, int c) {
    if (c < 0 || (size_t)c >= t->n_cols || r >= t->n_rows) return NULL;
    return t->cells[r * t->n_cols + (size_t)c];
}

/* Whether s is a number as the bundle writes one (docs/verify.md, "Numbers"):
 * an optional '-', digits, and (reals only) a '.' with digits and an
 * exponent e[+-]digits; or, for reals, "inf" and "-inf" (%.17g's infinity;
 * a NaN is stored as NULL). No sign '+', no blank, no hex, no "nan". */
static int plain_number(const char *s, int real) {
    const char *p = s + (*s == '-');
    size_t digits = 0;
    if (real && strcmp(p, "inf") == 0) return 1;
    for (; *p >= '0' && *p <= '9'; p++)
        digits++;
    if (real && *p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++)
            digits++;
    }
    if (digits == 0) return 0;
    if (real && (*p == 'e' || *p == 'E')) {
        size_t e = 0;
        p++;
        if (*p == '+' || *p == '-') p++;
        for (; *p >= '0' && *p <= '9'; p++)
            e++;
        if (e == 0) return 0;
    }
    return *p == '\0';
}

int tb_vcsv_real(const tb_vcsv *t, size_t r, int c, double *out) {
    const char *s = tb_vcsv_get(t, r, c);
    char *end;
    if (!s) return 0;
    if (!plain_number(s, 1)) return -1;
    errno = 0;
    *out = strtod(s, &end);
    if (end == s || *end != '\0' || (errno == ERANGE && isfinite(*out) && *out != 0.0)) return -1;
    return 1;
}

int tb_vcsv_int(const tb_vcsv *t, size_t r, int c, int64_t *out) {
    const char *s = tb_vcsv_get(t, r, c);
    char *end;
    long long v;
    if (!s) return 0;
    if (!plain_number(s, 0)) return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE) return -1;
    *out = (int64_t)v;
    return 1;
}
