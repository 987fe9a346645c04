/*
 * lg_stats.c: the per-(tile, workload, op) statistics of a load generator
 * (tb_lg_stats): allocation, cell lookup, exact merge, and a wire encoding
 * that carries them from a load-generator agent to the coordinator.
 *
 * Wire layout, version 1; every integer is little-endian, fixed width:
 *   "TBLS"  magic (4 bytes)
 *   u8      version (1)
 *   u32     tiles, n_workloads, TB_MAX_OPS, TB_OP_NSTATUS of the sender
 *   u32     number of cells that follow
 * then per cell, in strictly increasing cell order (tile, then workload,
 * then op), only cells holding anything (a count, an error or a histogram):
 *   u32     tile (1-based), workload, op
 *   u64     count, errors, err_by_class[TB_OP_NSTATUS]
 *   u32 len + len bytes   corrected histogram (tb_hist_encode), len 0 = NULL
 *   u32 len + len bytes   uncorrected histogram, likewise
 * The encoding is canonical: a buffer that decodes re-encodes to the same
 * bytes (the histogram BLOBs are canonical too, see qos/hist.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "loadgen/loadgen.h"

#define LGS_MAGIC     "TBLS"
#define LGS_VERSION   1
#define LGS_MAX_TILES 100000
/* Largest encoding tb_lg_stats_encode makes; past it, it fails. */
#define LGS_MAX_BYTES ((size_t)1 << 30)
/* Smallest encoded cell: three u32 indices, 2 + TB_OP_NSTATUS u64 counts,
 * two u32 histogram lengths. */
#define CELL_MIN_BYTES (3 * 4 + (2 + TB_OP_NSTATUS) * 8 + 2 * 4)

/* ---- the statistics ------------------------------------------------------ */

tb_lg_stats *tb_lg_stats_new(int tiles, int n_workloads) {
    tb_lg_stats *s = xcalloc(1, sizeof *s);
    s->tiles = tiles;
    s->n_workloads = n_workloads;
    s->cells = xcalloc((size_t)tiles * (size_t)n_workloads * TB_MAX_OPS, sizeof *s->cells);
    return s;
}

tb_opstat *tb_lg_cell(tb_lg_stats *s, int tile, int w, int op) {
    return &s->cells[((size_t)(tile - 1) * (size_t)s->n_workloads + (size_t)w) * TB_MAX_OPS + (size_t)op];
}

int tb_lg_stats_same_shape(const tb_lg_stats *a, const tb_lg_stats *b) {
    return a && b && a->tiles == b->tiles && a->n_workloads == b->n_workloads;
}

void tb_lg_stats_merge(tb_lg_stats *dst, const tb_lg_stats *src) {
    TB_ASSERT(tb_lg_stats_same_shape(dst, src));
    size_t n = (size_t)src->tiles * (size_t)src->n_workloads * TB_MAX_OPS;
    for (size_t i = 0; i < n; i++) {
        tb_opstat *d = &dst->cells[i];
        const tb_opstat *s = &src->cells[i];
        d->count += s->count;
        d->errors += s->errors;
        for (int k = 0; k < TB_OP_NSTATUS; k++)
            d->err_by_class[k] += s->err_by_class[k];
        if (s->hist) {
            if (!d->hist) d->hist = tb_hist_new();
            tb_hist_merge(d->hist, s->hist);
        }
        if (s->hist_unc) {
            if (!d->hist_unc) d->hist_unc = tb_hist_new();
            tb_hist_merge(d->hist_unc, s->hist_unc);
        }
    }
}

void tb_lg_stats_free(tb_lg_stats *s) {
    if (!s) return;
    size_t n = (size_t)s->tiles * (size_t)s->n_workloads * TB_MAX_OPS;
    for (size_t i = 0; i < n; i++) {
        tb_hist_free(s->cells[i].hist);
        tb_hist_free(s->cells[i].hist_unc);
    }
    free(s->cells);
    free(s);
}

/* ---- encoding ------------------------------------------------------------ */

/* 1 when the cell holds anything worth sending. */
static int cell_used(const tb_opstat *c) {
    if (c->count || c->errors || c->hist || c->hist_unc) return 1;
    for (int k = 0; k < TB_OP_NSTATUS; k++)
        if (c->err_by_class[k]) return 1;
    return 0;
}

static void put_le(tb_buf *b, uint64_t v, int bytes) {
    uint8_t p[8];
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    tb_buf_putn(b, p, (size_t)bytes);
}

/* A length-prefixed tb_hist_encode BLOB; length 0 for NULL. -1 when the
 * BLOB does not fit the u32 length. */
static int put_hist(tb_buf *b, const tb_hist *h) {
    uint8_t *blob;
    size_t len;
    if (!h) {
        put_le(b, 0, 4);
        return 0;
    }
    if (tb_hist_encode(h, &blob, &len) != 0) return -1;
    if (len == 0 || len > UINT32_MAX) {
        free(blob);
        return -1;
    }
    put_le(b, len, 4);
    tb_buf_putn(b, blob, len);
    free(blob);
    return 0;
}

int tb_lg_stats_encode(const tb_lg_stats *s, uint8_t **out, size_t *len) {
    tb_buf b;
    size_t n = (size_t)s->tiles * (size_t)s->n_workloads * TB_MAX_OPS, used = 0;
    *out = NULL;
    *len = 0;
    for (size_t i = 0; i < n; i++)
        used += (size_t)cell_used(&s->cells[i]);
    if (used > UINT32_MAX) return -1;
    tb_buf_init(&b, LGS_MAX_BYTES);
    tb_buf_putn(&b, LGS_MAGIC, 4);
    put_le(&b, LGS_VERSION, 1);
    put_le(&b, (uint64_t)s->tiles, 4);
    put_le(&b, (uint64_t)s->n_workloads, 4);
    put_le(&b, TB_MAX_OPS, 4);
    put_le(&b, TB_OP_NSTATUS, 4);
    put_le(&b, used, 4);
    for (size_t i = 0; i < n && !b.overflow; i++) {
        const tb_opstat *c = &s->cells[i];
        if (!cell_used(c)) continue;
        put_le(&b, i / TB_MAX_OPS / (size_t)s->n_workloads + 1, 4);
        put_le(&b, i / TB_MAX_OPS % (size_t)s->n_workloads, 4);
        put_le(&b, i % TB_MAX_OPS, 4);
        put_le(&b, c->count, 8);
        put_le(&b, c->errors, 8);
        for (int k = 0; k < TB_OP_NSTATUS; k++)
            put_le(&b, c->err_by_class[k], 8);
        if (put_hist(&b, c->hist) != 0 || put_hist(&b, c->hist_unc) != 0) {
            tb_buf_free(&b);
            return -1;
        }
    }
    if (b.overflow) {
        tb_buf_free(&b);
        return -1;
    }
    *out = (uint8_t *)tb_buf_take(&b, len);
    return 0;
}

/* ---- decoding ------------------------------------------------------------ */

typedef struct reader {
    const uint8_t *p;
    size_t len, pos;
} reader;

/* Reads a little-endian integer of `bytes` bytes; what names it for err. */
static int get_le(reader *rd, int bytes, uint64_t *v, const char *what, char *err) {
    if (rd->len - rd->pos < (size_t)bytes) {
        tb_seterr(err, "lg stats decode: truncated in %s at byte %zu of %zu", what, rd->pos, rd->len);
        return -1;
    }
    *v = 0;
    for (int i = 0; i < bytes; i++)
        *v |= (uint64_t)rd->p[rd->pos + (size_t)i] << (8 * i);
    rd->pos += (size_t)bytes;
    return 0;
}

/* A u32 that must lie in [lo, hi]. */
static int get_u32_in(reader *rd, long lo, long hi, long *v, const char *what, char *err) {
    uint64_t x;
    if (get_le(rd, 4, &x, what, err) != 0) return -1;
    if (x < (uint64_t)lo || x > (uint64_t)hi) {
        tb_seterr(err, "lg stats decode: %s %llu out of range %ld..%ld", what, (unsigned long long)x, lo, hi);
        return -1;
    }
    *v = (long)x;
    return 0;
}

static int get_hist(reader *rd, tb_hist **h, const char *what, char *err) {
    uint64_t n;
    char herr[TB_ERR_LEN];
    *h = NULL;
    if (get_le(rd, 4, &n, what, err) != 0) return -1;
    if (n == 0) return 0;
    if (n > rd->len - rd->pos) {
        tb_seterr(err, "lg stats decode: truncated in %s (%llu bytes) at byte %zu of %zu", what, (unsigned long long)n,
                  rd->pos, rd->len);
        return -1;
    }
    if (tb_hist_decode(rd->p + rd->pos, (size_t)n, h, herr) != 0) {
        tb_seterr(err, "lg stats decode: %s at byte %zu: %s", what, rd->pos, herr);
        return -1;
    }
    rd->pos += (size_t)n;
    return 0;
}

/* Reads the header; on success *tiles, *nw and *n_cells are within bounds. */
static int get_header(reader *rd, long *tiles, long *nw, long *n_cells, char *err) {
    uint64_t version;
    long ops, nstatus;
    if (rd->len < 4 || memcmp(rd->p, LGS_MAGIC, 4) != 0) {
        tb_seterr(err, "lg stats decode: bad magic (not a TBLS buffer)");
        return -1;
    }
    rd->pos = 4;
    if (get_le(rd, 1, &version, "version", err) != 0) return -1;
    if (version != LGS_VERSION) {
        tb_seterr(err, "lg stats decode: unsupported version %llu (expected %d)", (unsigned long long)version,
                  LGS_VERSION);
        return -1;
    }
    if (get_u32_in(rd, 1, LGS_MAX_TILES, tiles, "tiles", err) != 0 ||
        get_u32_in(rd, 1, TB_MAX_WORKLOADS, nw, "workload count", err) != 0 ||
        get_u32_in(rd, TB_MAX_OPS, TB_MAX_OPS, &ops, "ops per workload (TB_MAX_OPS)", err) != 0 ||
        get_u32_in(rd, TB_OP_NSTATUS, TB_OP_NSTATUS, &nstatus, "error class count (TB_OP_NSTATUS)", err) != 0 ||
        get_u32_in(rd, 0, *tiles * *nw * TB_MAX_OPS, n_cells, "cell count", err) != 0)
        return -1;
    if ((size_t)*n_cells > (rd->len - rd->pos) / CELL_MIN_BYTES) {
        tb_seterr(err, "lg stats decode: truncated: %ld cells cannot fit in the %zu bytes after the header", *n_cells,
                  rd->len - rd->pos);
        return -1;
    }
    return 0;
}

/* Reads one cell into s; *prev is the previous cell's index (-1 at first). */
static int get_cell(reader *rd, tb_lg_stats *s, long *prev, char *err) {
    long tile, w, op, idx;
    uint64_t v;
    tb_opstat *c;
    if (get_u32_in(rd, 1, s->tiles, &tile, "cell tile", err) != 0 ||
        get_u32_in(rd, 0, s->n_workloads - 1, &w, "cell workload", err) != 0 ||
        get_u32_in(rd, 0, TB_MAX_OPS - 1, &op, "cell op", err) != 0)
        return -1;
    idx = ((tile - 1) * s->n_workloads + w) * TB_MAX_OPS + op;
    if (idx <= *prev) {
        tb_seterr(err, "lg stats decode: %s cell (tile %ld, workload %ld, op %ld) at byte %zu",
                  idx == *prev ? "duplicate" : "out-of-order", tile, w, op, rd->pos);
        return -1;
    }
    *prev = idx;
    c = &s->cells[idx];
    if (get_le(rd, 8, &c->count, "cell count", err) != 0 || get_le(rd, 8, &c->errors, "cell errors", err) != 0)
        return -1;
    for (int k = 0; k < TB_OP_NSTATUS; k++) {
        if (get_le(rd, 8, &v, "cell errors by class", err) != 0) return -1;
        c->err_by_class[k] = v;
    }
    if (get_hist(rd, &c->hist, "corrected histogram", err) != 0 ||
        get_hist(rd, &c->hist_unc, "uncorrected histogram", err) != 0)
        return -1;
    if (!cell_used(c)) {
        tb_seterr(err, "lg stats decode: empty cell (tile %ld, workload %ld, op %ld)", tile, w, op);
        return -1;
    }
    return 0;
}

int tb_lg_stats_peek_shape(const uint8_t *buf, size_t len, int *tiles, int *n_workloads, char *err) {
    reader rd = {buf, buf ? len : 0, 0};
    long t, nw, n_cells;
    if (get_header(&rd, &t, &nw, &n_cells, err) != 0) return -1;
    *tiles = (int)t;
    *n_workloads = (int)nw;
    return 0;
}

int tb_lg_stats_decode(const uint8_t *buf, size_t len, tb_lg_stats **out, char *err) {
    reader rd = {buf, len, 0};
    long tiles, nw, n_cells, prev = -1;
    tb_lg_stats *s;
    *out = NULL;
    if (!buf) len = rd.len = 0;
    if (get_header(&rd, &tiles, &nw, &n_cells, err) != 0) return -1;
    /* not tb_lg_stats_new: a shape this big may fail to allocate, and that
     * is the sender's fault, not a reason to abort */
    s = calloc(1, sizeof *s);
    if (s) s->cells = calloc((size_t)tiles * (size_t)nw * TB_MAX_OPS, sizeof *s->cells);
    if (!s || !s->cells) {
        free(s);
        tb_seterr(err, "lg stats decode: cannot allocate %ld tiles x %ld workloads", tiles, nw);
        return -1;
    }
    s->tiles = (int)tiles;
    s->n_workloads = (int)nw;
    for (long i = 0; i < n_cells; i++) {
        if (get_cell(&rd, s, &prev, err) != 0) {
            tb_lg_stats_free(s);
            return -1;
        }
    }
    if (rd.pos != len) {
        tb_seterr(err, "lg stats decode: %zu trailing bytes after %ld cells", len - rd.pos, n_cells);
        tb_lg_stats_free(s);
        return -1;
    }
    *out = s;
    return 0;
}
