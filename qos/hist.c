/*
 * hist.c: the log-linear latency histogram behind every percentile tilebench
 * reports. Bucket layout follows the idea of HdrHistogram (Gil Tene) with 3
 * significant digits: 2048 unit-wide buckets for 0..2047 µs, then for each
 * power of two above, 1024 sub-buckets whose width is 1/1024 of their lower
 * edge (relative width <= 0.0977%). 1 µs .. 100 s needs 17910 buckets.
 *
 * There is one histogram per (tile, workload, op, phase, worker), most with a
 * few hundred values, so a histogram starts sparse (8 B per non-empty bucket)
 * and only a wide or busy one turns dense (256-counter chunks allocated on
 * first use). Both layouts are exact; the BLOB format does not depend on it.
 * Besides its own BLOB, a histogram encodes into HdrHistogram's V2 format
 * (tb_hist_encode_hdr), for HdrHistogram's tools.
 */
#include "qos/hist.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define SUB_BITS   10u              /* 1024 sub-buckets per power of two */
#define SUB_HALF   (1u << SUB_BITS) /* 1024 */
#define SUB_COUNT  (2u * SUB_HALF)  /* 2048: values below are exact */
#define CHUNK_BITS 8u
#define CHUNK_LEN  (1u << CHUNK_BITS) /* 256 counters = 2 KiB per chunk */
/* index of TB_HIST_MAX_US: shift 16, (1e8 >> 16) = 1525 -> 16*1024 + 1525 */
#define N_BUCKETS 17910u
#define N_CHUNKS  ((N_BUCKETS + CHUNK_LEN - 1) / CHUNK_LEN) /* 70 */
/* A sparse histogram holds at most this many non-empty buckets (8 B each;
 * bounds the binary search and the insertion's move). */
#define SPARSE_MAX 2048u
#define SPARSE_MIN 8u /* first allocation, in entries */
/* A sparse histogram that has recorded this many values turns dense: a busy
 * one (an op at tens of thousands per second) pays a binary search of up to
 * a few hundred buckets per value while sparse, and one indexed add dense.
 * A second's live histogram of such an op gets there within the second. */
#define SPARSE_BUSY 16384u
#define ENC_VERSION 1u
#define VARINT_MAX  10u /* a uint64_t takes at most 10 LEB128 bytes */

/* One non-empty bucket of a sparse histogram. */
typedef struct sparse_ent {
    uint32_t idx;   /* bucket index, < N_BUCKETS */
    uint32_t count; /* > 0 */
} sparse_ent;

/*
 * Two layouts, both exact. A histogram starts sparse: an array of its
 * non-empty buckets sorted by index (8 B each), which is what the few
 * hundred values of one tile's op in one phase need. It turns dense for
 * good (70 chunk pointers, each chunk 256 uint64_t counters allocated the
 * first time a value lands in it) when the array, grown, would take at least
 * the bytes of the dense layout for the same buckets, when it would hold
 * more than SPARSE_MAX buckets, when a count would not fit 32 bits, or when
 * tb_hist_record adds a value to one that holds SPARSE_BUSY.
 */
struct tb_hist {
    uint64_t count;    /* values recorded */
    uint64_t clamped;  /* of which > TB_HIST_MAX_US */
    uint64_t min;      /* exact; UINT64_MAX while empty */
    uint64_t max;      /* exact; 0 while empty */
    uint64_t sum;      /* exact, saturating */
    uint64_t **chunks; /* dense: N_CHUNKS pointers; NULL while sparse */
    sparse_ent *sp;    /* sparse: n_sp entries sorted by idx, room for cap_sp */
    uint32_t n_sp, cap_sp;
};

/* Index of the most significant set bit; v != 0. */
static unsigned msb64(uint64_t v) {
#if defined(__GNUC__)
    return 63u - (unsigned)__builtin_clzll(v);
#else
    unsigned n = 0;
    while (v >>= 1)
        n++;
    return n;
#endif
}

/*
 * Bucket of a value. Below 2048 the value is its own bucket. Above, with
 * shift = msb - 10 the top 11 bits m = v >> shift lie in [1024, 2048), and
 * the bucket is shift*1024 + m, which continues right after 2047.
 */
static uint32_t bucket_of(uint64_t v) {
    unsigned shift;
    if (v == 0) v = 1;
    if (v > TB_HIST_MAX_US) v = TB_HIST_MAX_US;
    if (v < SUB_COUNT) return (uint32_t)v;
    shift = msb64(v) - SUB_BITS;
    return (uint32_t)(shift * SUB_HALF + (v >> shift));
}

/* Largest value that falls into bucket idx (HdrHistogram's
 * highestEquivalentValue). */
static uint64_t bucket_upper(uint32_t idx) {
    unsigned shift;
    uint64_t m;
    if (idx < SUB_COUNT) return idx;
    shift = idx / SUB_HALF - 1u;
    m = idx - (uint64_t)shift * SUB_HALF;
    return (m << shift) + ((uint64_t)1 << shift) - 1u;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static uint64_t *chunk_get(tb_hist *h, uint32_t c) {
    if (!h->chunks[c]) h->chunks[c] = xcalloc(CHUNK_LEN, sizeof(uint64_t));
    return h->chunks[c];
}

/* Turns a sparse histogram dense, moving its buckets; frees the array. */
static void make_dense(tb_hist *h) {
    uint32_t k;
    h->chunks = xcalloc(N_CHUNKS, sizeof *h->chunks);
    for (k = 0; k < h->n_sp; k++) {
        uint32_t idx = h->sp[k].idx;
        chunk_get(h, idx >> CHUNK_BITS)[idx & (CHUNK_LEN - 1u)] = h->sp[k].count;
    }
    free(h->sp);
    h->sp = NULL;
    h->n_sp = h->cap_sp = 0;
}

/* First sparse position whose idx is >= idx (n_sp if none). */
static uint32_t sparse_find(const tb_hist *h, uint32_t idx) {
    uint32_t lo = 0, hi = h->n_sp;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (h->sp[mid].idx < idx)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return lo;
}

/* Whether the sparse array, grown to new_cap entries, would take at least
 * the dense layout's bytes for the buckets it holds (chunk pointers plus one
 * chunk per 256-bucket span with a non-empty bucket). */
static int dense_is_smaller(const tb_hist *h, uint32_t new_cap) {
    size_t dense = N_CHUNKS * sizeof *h->chunks;
    uint32_t k, last = UINT32_MAX;
    for (k = 0; k < h->n_sp; k++) {
        uint32_t c = h->sp[k].idx >> CHUNK_BITS;
        if (c != last) dense += CHUNK_LEN * sizeof(uint64_t);
        last = c;
    }
    return (size_t)new_cap * sizeof *h->sp >= dense;
}

/* Adds n > 0 to bucket idx's counter, in either layout (may turn dense). */
static void bucket_add(tb_hist *h, uint32_t idx, uint64_t n) {
    if (!h->chunks) {
        uint32_t k = sparse_find(h, idx);
        if (k < h->n_sp && h->sp[k].idx == idx) {
            if (n <= UINT32_MAX - (uint64_t)h->sp[k].count) {
                h->sp[k].count += (uint32_t)n;
                return;
            }
        } else if (h->n_sp < SPARSE_MAX && n <= UINT32_MAX &&
                   (h->n_sp < h->cap_sp || !dense_is_smaller(h, h->cap_sp ? 2u * h->cap_sp : SPARSE_MIN))) {
            if (h->n_sp == h->cap_sp) {
                h->cap_sp = h->cap_sp ? 2u * h->cap_sp : SPARSE_MIN;
                h->sp = xrealloc(h->sp, h->cap_sp * sizeof *h->sp);
            }
            memmove(h->sp + k + 1, h->sp + k, (h->n_sp - k) * sizeof *h->sp);
            h->sp[k].idx = idx;
            h->sp[k].count = (uint32_t)n;
            h->n_sp++;
            return;
        }
        make_dense(h);
    }
    chunk_get(h, idx >> CHUNK_BITS)[idx & (CHUNK_LEN - 1u)] += n;
}

/* Counter of bucket idx, in either layout. */
static uint64_t bucket_get(const tb_hist *h, uint32_t idx) {
    if (h->chunks) {
        const uint64_t *ch = h->chunks[idx >> CHUNK_BITS];
        return ch ? ch[idx & (CHUNK_LEN - 1u)] : 0;
    } else {
        uint32_t k = sparse_find(h, idx);
        return k < h->n_sp && h->sp[k].idx == idx ? h->sp[k].count : 0;
    }
}

/*
 * Walks the non-empty buckets in ascending index order, calling
 * fn(arg, idx, count) until it returns non-zero; returns that value or 0.
 */
static int each_bucket(const tb_hist *h, int (*fn)(void *, uint32_t, uint64_t), void *arg) {
    unsigned c, i;
    int r;
    if (!h->chunks) {
        for (i = 0; i < h->n_sp; i++)
            if ((r = fn(arg, h->sp[i].idx, h->sp[i].count)) != 0) return r;
        return 0;
    }
    for (c = 0; c < N_CHUNKS; c++) {
        const uint64_t *ch = h->chunks[c];
        if (!ch) continue;
        for (i = 0; i < CHUNK_LEN; i++)
            if (ch[i] && (r = fn(arg, c * CHUNK_LEN + i, ch[i])) != 0) return r;
    }
    return 0;
}

tb_hist *tb_hist_new(void) {
    tb_hist *h = xcalloc(1, sizeof(*h));
    h->min = UINT64_MAX;
    return h;
}

void tb_hist_free(tb_hist *h) {
    unsigned c;
    if (!h) return;
    if (h->chunks)
        for (c = 0; c < N_CHUNKS; c++)
            free(h->chunks[c]);
    free(h->chunks);
    free(h->sp);
    free(h);
}

void tb_hist_reset(tb_hist *h) {
    unsigned c;
    if (h->chunks) {
        for (c = 0; c < N_CHUNKS; c++)
            if (h->chunks[c]) memset(h->chunks[c], 0, CHUNK_LEN * sizeof(uint64_t));
    }
    h->n_sp = 0; /* keeps the array's room */
    h->count = h->clamped = h->max = h->sum = 0;
    h->min = UINT64_MAX;
}

void tb_hist_record(tb_hist *h, uint64_t value_us) {
    uint32_t idx = bucket_of(value_us);
    uint64_t *chunk;
    if (!h->chunks && h->count >= SPARSE_BUSY) make_dense(h);
    if (h->chunks && (chunk = h->chunks[idx >> CHUNK_BITS]) != NULL)
        chunk[idx & (CHUNK_LEN - 1u)]++;
    else
        bucket_add(h, idx, 1);
    h->count++;
    h->sum = add_sat(h->sum, value_us);
    if (value_us < h->min) h->min = value_us;
    if (value_us > h->max) h->max = value_us;
    if (value_us > TB_HIST_MAX_US) h->clamped++;
}

static int merge_one(void *dst, uint32_t idx, uint64_t n) {
    bucket_add(dst, idx, n);
    return 0;
}

void tb_hist_merge(tb_hist *dst, const tb_hist *src) {
    if (!src || src->count == 0) return;
    /* a merge that would overflow the sparse array goes dense at once,
     * rather than one insertion at a time */
    if (!dst->chunks && (src->chunks || dst->n_sp + src->n_sp > SPARSE_MAX)) make_dense(dst);
    each_bucket(src, merge_one, dst);
    dst->count += src->count;
    dst->clamped += src->clamped;
    dst->sum = add_sat(dst->sum, src->sum);
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
}

uint64_t tb_hist_count(const tb_hist *h) { return h->count; }
uint64_t tb_hist_clamped(const tb_hist *h) { return h->clamped; }
uint64_t tb_hist_min(const tb_hist *h) { return h->count ? h->min : 0; }
uint64_t tb_hist_max(const tb_hist *h) { return h->max; }

double tb_hist_mean(const tb_hist *h) { return h->count ? (double)h->sum / (double)h->count : 0.0; }

/*
 * Nearest rank: ceil(p/100 * count), at least 1. p*count is formed before
 * dividing by 100 so that e.g. 99.99 * 100000 comes out as 9999000 exactly,
 * and a few ULPs are shaved off so a product that should be an integer is
 * not pushed to the next rank by rounding.
 */
static uint64_t rank_of(double p, uint64_t count) {
    double x = p * (double)count / 100.0;
    double r = ceil(x - x * 4.0 * DBL_EPSILON);
    if (r < 1.0) return 1;
    if (r >= (double)count) return count;
    return (uint64_t)r;
}

typedef struct rank_walk {
    uint64_t rank, cum;
    uint32_t idx;
} rank_walk;

static int rank_step(void *arg, uint32_t idx, uint64_t n) {
    rank_walk *w = arg;
    w->cum += n;
    w->idx = idx;
    return w->cum >= w->rank;
}

uint64_t tb_hist_percentile(const tb_hist *h, double p) {
    rank_walk w = {0, 0, 0};
    uint64_t v;
    if (h->count == 0) return 0;
    if (!(p > 0.0)) return h->min; /* also NaN */
    if (p >= 100.0) return h->max;
    w.rank = rank_of(p, h->count);
    if (!each_bucket(h, rank_step, &w)) return h->max; /* not reached: counts sum to count */
    v = bucket_upper(w.idx);
    /* the bucket edge may lie beyond the exact extremes (top bucket holds
     * clamped values, edge bucket holds max) */
    if (v > h->max) v = h->max;
    if (v < h->min) v = h->min;
    return v;
}

typedef struct below_walk {
    uint32_t last;
    uint64_t below;
} below_walk;

static int below_step(void *arg, uint32_t idx, uint64_t n) {
    below_walk *w = arg;
    if (idx > w->last) return 1;
    w->below += n;
    return 0;
}

double tb_hist_fraction_below(const tb_hist *h, uint64_t limit_us) {
    below_walk w = {0, 0};
    if (h->count == 0) return 0.0;
    if (limit_us >= h->max) return 1.0;
    if (limit_us < h->min) return 0.0;
    w.last = bucket_of(limit_us);
    each_bucket(h, below_step, &w);
    return (double)w.below / (double)h->count;
}

size_t tb_hist_memory_bytes(const tb_hist *h) {
    size_t n = sizeof(*h) + h->cap_sp * sizeof *h->sp;
    unsigned c;
    if (h->chunks) {
        n += N_CHUNKS * sizeof *h->chunks;
        for (c = 0; c < N_CHUNKS; c++)
            if (h->chunks[c]) n += CHUNK_LEN * sizeof(uint64_t);
    }
    return n;
}

/* ---- encoding ---------------------------------------------------------- */

static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80u) {
        p[n++] = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static int count_step(void *arg, uint32_t idx, uint64_t n) {
    (void)idx;
    (void)n;
    (*(uint64_t *)arg)++;
    return 0;
}

typedef struct enc_walk {
    uint8_t *buf;
    size_t pos;
    int64_t prev;
} enc_walk;

static int enc_step(void *arg, uint32_t idx, uint64_t n) {
    enc_walk *w = arg;
    w->pos += put_varint(w->buf + w->pos, (uint64_t)((int64_t)idx - w->prev - 1));
    w->pos += put_varint(w->buf + w->pos, n);
    w->prev = idx;
    return 0;
}

int tb_hist_encode(const tb_hist *h, uint8_t **out, size_t *len) {
    uint64_t nonempty = 0;
    enc_walk w = {NULL, 0, -1};

    each_bucket(h, count_step, &nonempty);
    w.buf = xmalloc(1 + (6 + 2 * nonempty) * VARINT_MAX);
    w.buf[w.pos++] = ENC_VERSION;
    w.pos += put_varint(w.buf + w.pos, h->count);
    w.pos += put_varint(w.buf + w.pos, h->clamped);
    w.pos += put_varint(w.buf + w.pos, tb_hist_min(h));
    w.pos += put_varint(w.buf + w.pos, h->max);
    w.pos += put_varint(w.buf + w.pos, h->sum);
    w.pos += put_varint(w.buf + w.pos, nonempty);
    each_bucket(h, enc_step, &w);
    *out = w.buf;
    *len = w.pos;
    return 0;
}

typedef struct reader {
    const uint8_t *buf;
    size_t len, pos;
} reader;

/* Reads one canonical LEB128 varint; what names the field for err. */
static int get_varint(reader *rd, uint64_t *out, const char *what, char *err) {
    uint64_t v = 0;
    unsigned i;
    size_t start = rd->pos;
    for (i = 0; i < VARINT_MAX; i++) {
        uint8_t b;
        if (rd->pos >= rd->len) {
            tb_seterr(err, "hist decode: truncated in %s at byte %zu", what, rd->pos);
            return -1;
        }
        b = rd->buf[rd->pos++];
        /* the 10th byte may only carry bit 63 */
        if (i == VARINT_MAX - 1u && b > 1u) {
            tb_seterr(err, "hist decode: %s at byte %zu overflows 64 bits", what, start);
            return -1;
        }
        v |= (uint64_t)(b & 0x7fu) << (7u * i);
        if (!(b & 0x80u)) {
            if (i > 0 && b == 0) {
                tb_seterr(err, "hist decode: overlong varint in %s at byte %zu", what, start);
                return -1;
            }
            *out = v;
            return 0;
        }
    }
    tb_seterr(err, "hist decode: %s at byte %zu overflows 64 bits", what, start);
    return -1;
}

static int decode_body(reader *rd, tb_hist *h, char *err) {
    uint64_t count, clamped, min, max, sum, n, k, gap, cnt, total = 0;
    uint64_t top_count = 0;
    int64_t prev = -1;
    uint32_t first = 0, idx = 0;

    if (get_varint(rd, &count, "count", err) || get_varint(rd, &clamped, "clamped", err) ||
        get_varint(rd, &min, "min", err) || get_varint(rd, &max, "max", err) || get_varint(rd, &sum, "sum", err) ||
        get_varint(rd, &n, "bucket count", err))
        return -1;
    if (count == 0) {
        if (clamped || min || max || sum || n) {
            tb_seterr(err, "hist decode: empty histogram with non-zero fields");
            return -1;
        }
    } else {
        if (min > max || clamped > count || sum < max || n == 0 || n > N_BUCKETS || n > count ||
            (clamped > 0) != (max > TB_HIST_MAX_US) || (min > TB_HIST_MAX_US && clamped != count)) {
            tb_seterr(err,
                      "hist decode: inconsistent header (count %llu, min %llu, max %llu, "
                      "%llu buckets)",
                      (unsigned long long)count, (unsigned long long)min, (unsigned long long)max,
                      (unsigned long long)n);
            return -1;
        }
    }
    for (k = 0; k < n; k++) {
        if (get_varint(rd, &gap, "bucket gap", err) || get_varint(rd, &cnt, "bucket value", err)) return -1;
        if (gap >= (uint64_t)((int64_t)N_BUCKETS - prev - 1)) {
            tb_seterr(err, "hist decode: bucket %llu beyond the 100 s range", (unsigned long long)k);
            return -1;
        }
        if (cnt == 0 || cnt > count - total) {
            tb_seterr(err, "hist decode: bucket %llu has count %llu (total %llu)", (unsigned long long)k,
                      (unsigned long long)cnt, (unsigned long long)count);
            return -1;
        }
        idx = (uint32_t)(prev + 1 + (int64_t)gap);
        if (k == 0) first = idx;
        bucket_add(h, idx, cnt); /* ascending and new: an append while sparse */
        total += cnt;
        prev = idx;
    }
    if (total != count) {
        tb_seterr(err, "hist decode: buckets hold %llu values, header says %llu", (unsigned long long)total,
                  (unsigned long long)count);
        return -1;
    }
    if (count) {
        top_count = idx == N_BUCKETS - 1u ? bucket_get(h, idx) : 0;
        if (first != bucket_of(min) || idx != bucket_of(max) || clamped > top_count) {
            tb_seterr(err, "hist decode: buckets do not match min %llu / max %llu", (unsigned long long)min,
                      (unsigned long long)max);
            return -1;
        }
    }
    if (rd->pos != rd->len) {
        tb_seterr(err, "hist decode: %zu trailing bytes", rd->len - rd->pos);
        return -1;
    }
    h->count = count;
    h->clamped = clamped;
    h->min = count ? min : UINT64_MAX;
    h->max = max;
    h->sum = sum;
    return 0;
}

int tb_hist_decode(const uint8_t *buf, size_t len, tb_hist **out, char *err) {
    reader rd = {buf, len, 0};
    tb_hist *h;
    *out = NULL;
    if (!buf || len == 0) {
        tb_seterr(err, "hist decode: empty input");
        return -1;
    }
    if (buf[0] != ENC_VERSION) {
        tb_seterr(err, "hist decode: unsupported version %u (expected %u)", buf[0], ENC_VERSION);
        return -1;
    }
    rd.pos = 1;
    h = tb_hist_new();
    if (decode_body(&rd, h, err) != 0) {
        tb_hist_free(h);
        return -1;
    }
    *out = h;
    return 0;
}

/* ---- HdrHistogram's V2 encoding (hist.h, tb_hist_encode_hdr) ------------ */

#define HDR_V2_COOKIE      0x1c849313u /* V2 encoding base 0x1c849303, | 0x10: ZigZag LEB128 counts */
#define HDR_V2_COMP_COOKIE 0x1c849314u /* V2 compressed base 0x1c849304 | 0x10 */
#define HDR_HEADER_LEN     40u
#define HDR_ZZ_MAX         9u /* LEB128-64b9B: at most 9 bytes */

uint64_t tb_hist_highest_equivalent(uint64_t value_us) { return bucket_upper(bucket_of(value_us)); }

static void put_be32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put_be64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* ZigZag, then LEB128 with a 9th byte of 8 bits (HdrHistogram's ZigZagEncoding). */
static size_t put_zigzag(uint8_t *p, int64_t v) {
    uint64_t z = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
    size_t n = 0;
    while (n < HDR_ZZ_MAX - 1u && z >= 0x80u) {
        p[n++] = (uint8_t)(z | 0x80u);
        z >>= 7;
    }
    p[n++] = (uint8_t)z; /* the 9th byte, if reached, carries bits 56..63 */
    return n;
}

typedef struct hdr_walk {
    uint8_t *buf;
    size_t pos;
    int64_t prev; /* last index written, -1 at the start */
} hdr_walk;

static int hdr_step(void *arg, uint32_t idx, uint64_t n) {
    hdr_walk *w = arg;
    int64_t gap = (int64_t)idx - w->prev - 1;
    if (gap == 1)
        w->pos += put_zigzag(w->buf + w->pos, 0);
    else if (gap > 1)
        w->pos += put_zigzag(w->buf + w->pos, -gap);
    /* counts stay below 2^63: a histogram never holds that many values */
    w->pos += put_zigzag(w->buf + w->pos, (int64_t)n);
    w->prev = idx;
    return 0;
}

/* The V2 encoding, uncompressed, into a new buffer. */
static uint8_t *encode_v2(const tb_hist *h, size_t *len) {
    uint64_t nonempty = 0;
    hdr_walk w = {NULL, HDR_HEADER_LEN, -1};
    union {
        double d;
        uint64_t u;
    } ratio = {1.0};

    each_bucket(h, count_step, &nonempty);
    /* each non-empty bucket: its count, and before it at most one zero run */
    w.buf = xmalloc(HDR_HEADER_LEN + (2 * nonempty + 1) * HDR_ZZ_MAX);
    if (nonempty == 0)
        w.buf[w.pos++] = 0; /* index 0's count, as HdrHistogram encodes an empty one */
    else
        each_bucket(h, hdr_step, &w);
    put_be32(w.buf, HDR_V2_COOKIE);
    put_be32(w.buf + 4, (uint32_t)(w.pos - HDR_HEADER_LEN));
    put_be32(w.buf + 8, 0);  /* normalizing index offset */
    put_be32(w.buf + 12, 3); /* significant value digits */
    put_be64(w.buf + 16, 1); /* lowest discernible value */
    put_be64(w.buf + 24, TB_HIST_MAX_US);
    put_be64(w.buf + 32, ratio.u);
    *len = w.pos;
    return w.buf;
}

int tb_hist_encode_hdr(const tb_hist *h, int compressed, uint8_t **out, size_t *len) {
    size_t raw_len;
    uint8_t *raw = encode_v2(h, &raw_len);
    uLongf clen;
    uint8_t *c;
    if (!compressed) {
        *out = raw;
        *len = raw_len;
        return 0;
    }
    clen = compressBound((uLong)raw_len);
    c = xmalloc(8 + (size_t)clen);
    if (compress2(c + 8, &clen, raw, (uLong)raw_len, Z_BEST_COMPRESSION) != Z_OK || clen > (uLongf)INT32_MAX) {
        free(raw);
        free(c);
        *out = NULL;
        *len = 0;
        return -1;
    }
    free(raw);
    put_be32(c, HDR_V2_COMP_COOKIE);
    put_be32(c + 4, (uint32_t)clen);
    *out = c;
    *len = 8 + (size_t)clen;
    return 0;
}
