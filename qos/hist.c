/*
 * hist.c: the log-linear latency histogram behind every percentile tilebench
 * reports. Bucket layout follows the idea of HdrHistogram (Gil Tene) with 3
 * significant digits: 2048 unit-wide buckets for 0..2047 µs, then for each
 * power of two above, 1024 sub-buckets whose width is 1/1024 of their lower
 * edge (relative width <= 0.0977%). 1 µs .. 100 s needs 17910 buckets.
 *
 * There is one histogram per (tile, workload, op, phase, worker), so counters
 * live in 256-counter chunks allocated on first use: an empty histogram is a
 * ~600 B header, and a latency distribution only pays for the chunks it hits.
 */
#include "qos/hist.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUB_BITS 10u                   /* 1024 sub-buckets per power of two */
#define SUB_HALF (1u << SUB_BITS)      /* 1024 */
#define SUB_COUNT (2u * SUB_HALF)      /* 2048: values below are exact */
#define CHUNK_BITS 8u
#define CHUNK_LEN (1u << CHUNK_BITS)   /* 256 counters = 2 KiB per chunk */
/* index of TB_HIST_MAX_US: shift 16, (1e8 >> 16) = 1525 -> 16*1024 + 1525 */
#define N_BUCKETS 17910u
#define N_CHUNKS ((N_BUCKETS + CHUNK_LEN - 1) / CHUNK_LEN) /* 70 */
#define ENC_VERSION 1u
#define VARINT_MAX 10u /* a uint64_t takes at most 10 LEB128 bytes */

struct tb_hist {
    uint64_t count;   /* values recorded */
    uint64_t clamped; /* of which > TB_HIST_MAX_US */
    uint64_t min;     /* exact; UINT64_MAX while empty */
    uint64_t max;     /* exact; 0 while empty */
    uint64_t sum;     /* exact, saturating */
    uint64_t *chunks[N_CHUNKS];
};

/* Index of the most significant set bit; v != 0. */
static unsigned msb64(uint64_t v) {
#if defined(__GNUC__)
    return 63u - (unsigned)__builtin_clzll(v);
#else
    unsigned n = 0;
    while (v >>= 1) n++;
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

static uint64_t add_sat(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t *chunk_get(tb_hist *h, uint32_t c) {
    if (!h->chunks[c]) h->chunks[c] = xcalloc(CHUNK_LEN, sizeof(uint64_t));
    return h->chunks[c];
}

tb_hist *tb_hist_new(void) {
    tb_hist *h = xcalloc(1, sizeof(*h));
    h->min = UINT64_MAX;
    return h;
}

void tb_hist_free(tb_hist *h) {
    unsigned c;
    if (!h) return;
    for (c = 0; c < N_CHUNKS; c++) free(h->chunks[c]);
    free(h);
}

void tb_hist_reset(tb_hist *h) {
    unsigned c;
    for (c = 0; c < N_CHUNKS; c++)
        if (h->chunks[c]) memset(h->chunks[c], 0, CHUNK_LEN * sizeof(uint64_t));
    h->count = h->clamped = h->max = h->sum = 0;
    h->min = UINT64_MAX;
}

void tb_hist_record(tb_hist *h, uint64_t value_us) {
    uint32_t idx = bucket_of(value_us);
    uint64_t *chunk = h->chunks[idx >> CHUNK_BITS];
    if (!chunk) chunk = chunk_get(h, idx >> CHUNK_BITS);
    chunk[idx & (CHUNK_LEN - 1u)]++;
    h->count++;
    h->sum = add_sat(h->sum, value_us);
    if (value_us < h->min) h->min = value_us;
    if (value_us > h->max) h->max = value_us;
    if (value_us > TB_HIST_MAX_US) h->clamped++;
}

void tb_hist_merge(tb_hist *dst, const tb_hist *src) {
    unsigned c, i;
    if (!src || src->count == 0) return;
    for (c = 0; c < N_CHUNKS; c++) {
        const uint64_t *s = src->chunks[c];
        uint64_t *d;
        if (!s) continue;
        d = chunk_get(dst, c);
        for (i = 0; i < CHUNK_LEN; i++) d[i] += s[i];
    }
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

double tb_hist_mean(const tb_hist *h) {
    return h->count ? (double)h->sum / (double)h->count : 0.0;
}

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

uint64_t tb_hist_percentile(const tb_hist *h, double p) {
    uint64_t rank, cum = 0, v;
    unsigned c, i;
    if (h->count == 0) return 0;
    if (!(p > 0.0)) return h->min; /* also NaN */
    if (p >= 100.0) return h->max;
    rank = rank_of(p, h->count);
    for (c = 0; c < N_CHUNKS; c++) {
        const uint64_t *ch = h->chunks[c];
        if (!ch) continue;
        for (i = 0; i < CHUNK_LEN; i++) {
            cum += ch[i];
            if (cum >= rank) {
                v = bucket_upper(c * CHUNK_LEN + i);
                /* the bucket edge may lie beyond the exact extremes (top
                 * bucket holds clamped values, edge bucket holds max) */
                if (v > h->max) v = h->max;
                if (v < h->min) v = h->min;
                return v;
            }
        }
    }
    return h->max; /* not reached: bucket counts sum to count */
}

double tb_hist_fraction_below(const tb_hist *h, uint64_t limit_us) {
    uint64_t below = 0;
    uint32_t last;
    unsigned c, i;
    if (h->count == 0) return 0.0;
    if (limit_us >= h->max) return 1.0;
    if (limit_us < h->min) return 0.0;
    last = bucket_of(limit_us);
    for (c = 0; c <= (last >> CHUNK_BITS); c++) {
        const uint64_t *ch = h->chunks[c];
        unsigned n = c == (last >> CHUNK_BITS) ? (last & (CHUNK_LEN - 1u)) + 1u : CHUNK_LEN;
        if (!ch) continue;
        for (i = 0; i < n; i++) below += ch[i];
    }
    return (double)below / (double)h->count;
}

size_t tb_hist_memory_bytes(const tb_hist *h) {
    size_t n = sizeof(*h);
    unsigned c;
    for (c = 0; c < N_CHUNKS; c++)
        if (h->chunks[c]) n += CHUNK_LEN * sizeof(uint64_t);
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

int tb_hist_encode(const tb_hist *h, uint8_t **out, size_t *len) {
    uint64_t nonempty = 0;
    uint8_t *buf;
    size_t pos = 0;
    int64_t prev = -1;
    unsigned c, i;

    for (c = 0; c < N_CHUNKS; c++)
        if (h->chunks[c])
            for (i = 0; i < CHUNK_LEN; i++) nonempty += h->chunks[c][i] != 0;

    buf = xmalloc(1 + (6 + 2 * nonempty) * VARINT_MAX);
    buf[pos++] = ENC_VERSION;
    pos += put_varint(buf + pos, h->count);
    pos += put_varint(buf + pos, h->clamped);
    pos += put_varint(buf + pos, tb_hist_min(h));
    pos += put_varint(buf + pos, h->max);
    pos += put_varint(buf + pos, h->sum);
    pos += put_varint(buf + pos, nonempty);
    for (c = 0; c < N_CHUNKS; c++) {
        if (!h->chunks[c]) continue;
        for (i = 0; i < CHUNK_LEN; i++) {
            int64_t idx = (int64_t)(c * CHUNK_LEN + i);
            if (!h->chunks[c][i]) continue;
            pos += put_varint(buf + pos, (uint64_t)(idx - prev - 1));
            pos += put_varint(buf + pos, h->chunks[c][i]);
            prev = idx;
        }
    }
    *out = buf;
    *len = pos;
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
        get_varint(rd, &min, "min", err) || get_varint(rd, &max, "max", err) ||
        get_varint(rd, &sum, "sum", err) || get_varint(rd, &n, "bucket count", err))
        return -1;
    if (count == 0) {
        if (clamped || min || max || sum || n) {
            tb_seterr(err, "hist decode: empty histogram with non-zero fields");
            return -1;
        }
    } else {
        if (min > max || clamped > count || sum < max || n == 0 || n > N_BUCKETS ||
            n > count || (clamped > 0) != (max > TB_HIST_MAX_US) ||
            (min > TB_HIST_MAX_US && clamped != count)) {
            tb_seterr(err, "hist decode: inconsistent header (count %llu, min %llu, max %llu, "
                      "%llu buckets)", (unsigned long long)count, (unsigned long long)min,
                      (unsigned long long)max, (unsigned long long)n);
            return -1;
        }
    }
    for (k = 0; k < n; k++) {
        if (get_varint(rd, &gap, "bucket gap", err) || get_varint(rd, &cnt, "bucket value", err))
            return -1;
        if (gap >= (uint64_t)((int64_t)N_BUCKETS - prev - 1)) {
            tb_seterr(err, "hist decode: bucket %llu beyond the 100 s range",
                      (unsigned long long)k);
            return -1;
        }
        if (cnt == 0 || cnt > count - total) {
            tb_seterr(err, "hist decode: bucket %llu has count %llu (total %llu)",
                      (unsigned long long)k, (unsigned long long)cnt, (unsigned long long)count);
            return -1;
        }
        idx = (uint32_t)(prev + 1 + (int64_t)gap);
        if (k == 0) first = idx;
        chunk_get(h, idx >> CHUNK_BITS)[idx & (CHUNK_LEN - 1u)] = cnt;
        total += cnt;
        prev = idx;
    }
    if (total != count) {
        tb_seterr(err, "hist decode: buckets hold %llu values, header says %llu",
                  (unsigned long long)total, (unsigned long long)count);
        return -1;
    }
    if (count) {
        top_count = idx == N_BUCKETS - 1u ? h->chunks[idx >> CHUNK_BITS][idx & (CHUNK_LEN - 1u)] : 0;
        if (first != bucket_of(min) || idx != bucket_of(max) || clamped > top_count) {
            tb_seterr(err, "hist decode: buckets do not match min %llu / max %llu",
                      (unsigned long long)min, (unsigned long long)max);
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
