/*
 * hdrlog.c: the verifier's reader of HdrHistogram interval logs (hdrlog.h).
 * Written from the format's description alone, not from tilebench's writer:
 * the log (HdrHistogram's HistogramLogReader/HistogramLogWriter, Java, and
 * HistogramLogReader.ts of hdr-histogram-js), base64 (RFC 4648, the standard
 * alphabet with padding), the compressed form (cookie base 0x1c849304, a
 * big-endian length, then zlib), the V2 encoding (cookie 0x1c849303 | 0x10, a
 * 40-byte big-endian header, counts as ZigZag LEB128-64b9B with negative
 * numbers for runs of empty buckets: HdrHistogram's ZigZagEncoding.java), and
 * the bucket layout (AbstractHistogram.java: sub-bucket count from the
 * significant digits, unit magnitude from the lowest discernible value).
 *
 * The header's normalizing index offset and integer-to-double ratio are not
 * used by a plain integer histogram and are not checked (hdr-histogram-js
 * writes 1 and the integer 1 there).
 */
#include "verify/hdrlog.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"

#define COMP_COOKIE_BASE 0x1c849304u
#define V2_COOKIE        0x1c849313u
#define V2_HEADER_LEN    40u
#define MAX_INFLATED     (64u << 20) /* far above any real histogram (18432 counts x 9 bytes) */
#define MAX_COUNTS       (1u << 23)  /* counts-array length a reader accepts (5 digits, 2^63: 6.2M) */

/* ---- base64 -------------------------------------------------------------- */

static int b64_digit(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decodes n characters of padded base64 into a new buffer (*out, *out_len). */
static int b64_decode(const char *s, size_t n, uint8_t **out, size_t *out_len, char *why) {
    size_t pad = 0, o = 0;
    uint8_t *b;
    if (n == 0 || n % 4 != 0) {
        snprintf(why, 96, "base64: length %zu is not a positive multiple of 4", n);
        return -1;
    }
    if (s[n - 1] == '=') pad = s[n - 2] == '=' ? 2 : 1;
    b = xmalloc(n / 4 * 3);
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = 0;
        for (size_t k = 0; k < 4; k++) {
            int d = b64_digit(s[i + k]);
            if (d < 0 && !(s[i + k] == '=' && i + k >= n - pad)) {
                snprintf(why, 96, "base64: bad character at column %zu", i + k + 1);
                free(b);
                return -1;
            }
            v = v << 6 | (uint32_t)(d < 0 ? 0 : d);
        }
        b[o++] = (uint8_t)(v >> 16);
        if (i + 4 < n || pad < 2) b[o++] = (uint8_t)(v >> 8);
        if (i + 4 < n || pad < 1) b[o++] = (uint8_t)v;
    }
    *out = b;
    *out_len = o;
    return 0;
}

/* ---- the encodings ----------------------------------------------------- */

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }

/* Inflates a zlib stream into a new buffer; the stream must end exactly at
 * the end of the input. */
static int inflate_all(const uint8_t *in, size_t n, uint8_t **out, size_t *out_len, char *why) {
    z_stream z;
    size_t cap = 4096;
    uint8_t *b = xmalloc(cap);
    int rc;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) {
        snprintf(why, 96, "zlib: inflateInit failed");
        free(b);
        return -1;
    }
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    do {
        if (z.total_out == cap) {
            if (cap >= MAX_INFLATED) {
                snprintf(why, 96, "zlib: inflates to more than %u bytes", MAX_INFLATED);
                rc = Z_DATA_ERROR;
                break;
            }
            cap *= 2;
            b = xrealloc(b, cap);
        }
        z.next_out = b + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out);
        rc = inflate(&z, Z_NO_FLUSH);
    } while (rc == Z_OK);
    if (rc != Z_STREAM_END || z.avail_in != 0) {
        if (rc == Z_STREAM_END)
            snprintf(why, 96, "zlib: %u bytes after the end of the compressed stream", z.avail_in);
        else if (rc != Z_DATA_ERROR || !why[0])
            snprintf(why, 96, "zlib: %s", rc == Z_BUF_ERROR ? "truncated stream" : z.msg ? z.msg : "bad stream");
        inflateEnd(&z);
        free(b);
        return -1;
    }
    *out_len = z.total_out;
    inflateEnd(&z);
    *out = b;
    return 0;
}

/* HdrHistogram's layout for lowest, highest and digits. */
typedef struct layout {
    int unit_mag;    /* floor(log2(lowest)) */
    int half_mag;    /* log2(sub-bucket half count) */
    uint64_t half;   /* sub-bucket half count */
    size_t n_counts; /* counts-array length */
} layout;

static int layout_of(int64_t lowest, int64_t highest, int32_t digits, layout *l, char *why) {
    uint64_t largest = 2, untrackable;
    int mag = 0, buckets = 1;
    if (digits < 0 || digits > 5 || lowest < 1 || highest / 2 < lowest) {
        snprintf(why, 96, "header: lowest %lld, highest %lld, %d digits is not a histogram", (long long)lowest,
                 (long long)highest, (int)digits);
        return -1;
    }
    for (int i = 0; i < digits; i++)
        largest *= 10; /* the largest value with single-unit resolution: 2 x 10^digits */
    while (((uint64_t)1 << mag) < largest)
        mag++;
    l->half_mag = (mag > 1 ? mag : 1) - 1;
    l->half = (uint64_t)1 << l->half_mag;
    l->unit_mag = 0;
    while (((uint64_t)lowest >> (l->unit_mag + 1)) != 0)
        l->unit_mag++;
    if (l->unit_mag + l->half_mag + 1 > 62) {
        snprintf(why, 96, "header: lowest %lld too large for %d digits", (long long)lowest, (int)digits);
        return -1;
    }
    /* buckets needed so that the last one's top passes highest */
    untrackable = (2 * l->half) << l->unit_mag;
    while (untrackable <= (uint64_t)highest) {
        if (untrackable > (uint64_t)INT64_MAX / 2) {
            buckets++;
            break;
        }
        untrackable <<= 1;
        buckets++;
    }
    l->n_counts = (size_t)(buckets + 1) * (size_t)l->half;
    if (l->n_counts > MAX_COUNTS) {
        snprintf(why, 96, "header: %zu counts is more than this reader takes", l->n_counts);
        return -1;
    }
    return 0;
}

/* One ZigZag LEB128-64b9B number at p (n bytes left). Returns its length, 0
 * when truncated. */
static size_t get_zigzag(const uint8_t *p, size_t n, int64_t *out) {
    uint64_t z = 0;
    size_t i;
    for (i = 0; i < 9; i++) {
        if (i >= n) return 0;
        if (i == 8) {
            z |= (uint64_t)p[i] << 56; /* the 9th byte: 8 bits, no continuation */
            break;
        }
        z |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) break;
    }
    *out = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
    return i + 1;
}

/* Reads the V2 counts in p[0..n) into h, at most max_counts (the layout's
 * array length); h->counts grows as far as the last count. */
static int read_counts(const uint8_t *p, size_t n, size_t max_counts, tb_vh_hist *h, char *why) {
    size_t pos = 0, idx = 0, k, cap = 0;
    while (pos < n) {
        int64_t v;
        if ((k = get_zigzag(p + pos, n - pos, &v)) == 0) {
            snprintf(why, 96, "counts: truncated number at payload byte %zu", pos);
            return -1;
        }
        pos += k;
        if (v < 0) {
            /* a run of -v empty buckets */
            if (v == INT64_MIN || (uint64_t)-v > max_counts - idx) {
                snprintf(why, 96, "counts: a run of %llu empty buckets passes the %zu counts",
                         0ull - (unsigned long long)v, max_counts);
                return -1;
            }
            idx += (size_t)-v;
            continue;
        }
        if (idx >= max_counts) {
            snprintf(why, 96, "counts: more than the histogram's %zu counts", max_counts);
            return -1;
        }
        if ((uint64_t)v > UINT64_MAX - h->total) {
            snprintf(why, 96, "counts: the total passes 2^64");
            return -1;
        }
        if (idx >= cap) {
            size_t old = cap;
            cap = idx + 1 > 2 * cap ? idx + 1 : 2 * cap;
            if (cap > max_counts) cap = max_counts;
            if (tb_vmem_take((cap - old) * sizeof *h->counts) != 0) {
                snprintf(why, 96, "counts: more than check's memory limit of %zu MiB", tb_vmem_max() >> 20);
                return -1;
            }
            h->counts = xrealloc(h->counts, cap * sizeof *h->counts);
            memset(h->counts + old, 0, (cap - old) * sizeof *h->counts);
        }
        h->counts[idx++] = (uint64_t)v;
        h->total += (uint64_t)v;
    }
    /* a trailing run of empty buckets adds nothing to keep */
    h->n_counts = idx < cap ? idx : cap;
    if (!h->counts) h->counts = xcalloc(1, sizeof *h->counts);
    return 0;
}

/* Decodes the compressed histogram c[0..n) into h. */
static int decode_histogram(const uint8_t *c, size_t n, tb_vh_hist *h, char *why) {
    uint8_t *v2 = NULL;
    size_t v2_len = 0;
    uint32_t clen, plen;
    layout l;
    int rc = -1;
    if (n < 8) {
        snprintf(why, 96, "histogram: %zu bytes, shorter than the compressed header", n);
        return -1;
    }
    if ((be32(c) & ~0xf0u) != COMP_COOKIE_BASE) {
        snprintf(why, 96, "histogram: cookie 0x%08x is not V2 compressed (0x1c849314)", (unsigned)be32(c));
        return -1;
    }
    clen = be32(c + 4);
    if (clen != n - 8) {
        snprintf(why, 96, "histogram: length field %u, but %zu compressed bytes follow", (unsigned)clen, n - 8);
        return -1;
    }
    why[0] = '\0';
    if (inflate_all(c + 8, clen, &v2, &v2_len, why) != 0) return -1;
    if (v2_len < V2_HEADER_LEN || be32(v2) != V2_COOKIE) {
        snprintf(why, 96, "histogram: inflated data is not a V2 encoding (cookie 0x%08x)",
                 v2_len >= 4 ? (unsigned)be32(v2) : 0u);
        goto out;
    }
    plen = be32(v2 + 4);
    if (plen != v2_len - V2_HEADER_LEN) {
        snprintf(why, 96, "histogram: payload length %u, but %zu bytes follow the header", (unsigned)plen,
                 v2_len - V2_HEADER_LEN);
        goto out;
    }
    h->sig_digits = (int32_t)be32(v2 + 12);
    h->lowest = (int64_t)be64(v2 + 16);
    h->highest = (int64_t)be64(v2 + 24);
    if (layout_of(h->lowest, h->highest, h->sig_digits, &l, why) != 0) goto out;
    rc = read_counts(v2 + V2_HEADER_LEN, plen, l.n_counts, h, why);
out:
    free(v2);
    return rc;
}

/* ---- the log ------------------------------------------------------------- */

/* Parses a whole field as a finite number. */
static int field_double(const char *s, size_t n, double *out) {
    char buf[64], *end;
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    *out = strtod(buf, &end);
    return *end == '\0' && errno == 0 && isfinite(*out) ? 0 : -1;
}

/* "#[StartTime: 1700000000.000 (seconds since epoch), ...]": the number. */
static int comment_time(const char *line, size_t n, size_t skip, double *out) {
    size_t k = skip;
    while (k < n && line[k] == ' ')
        k++;
    size_t e = k;
    while (e < n && line[e] != ' ' && line[e] != ']')
        e++;
    return field_double(line + k, e - k, out);
}

static int seterr_line(char *err, size_t lineno, const char *why) {
    tb_seterr(err, "hdrlog line %zu: %s", lineno, why);
    return -1;
}

/* One interval line: [Tag=TAG,]START,LENGTH,MAX,BASE64. */
static int parse_interval(const char *line, size_t n, tb_vh_hist *h, char *why) {
    const char *f[5];
    size_t fl[5], nf = 0, start = 0;
    static const char *const names[] = {"start timestamp", "interval length", "interval max"};
    uint8_t *bin = NULL;
    size_t bin_len = 0;
    int rc;
    for (size_t k = 0; k <= n; k++) {
        if (k < n && line[k] != ',') continue;
        if (nf == 5) {
            snprintf(why, 96, "more than 5 comma-separated fields");
            return -1;
        }
        f[nf] = line + start;
        fl[nf++] = k - start;
        start = k + 1;
    }
    if (nf > 0 && fl[0] >= 4 && memcmp(f[0], "Tag=", 4) == 0) {
        h->tag = xmalloc(fl[0] - 3);
        memcpy(h->tag, f[0] + 4, fl[0] - 4);
        h->tag[fl[0] - 4] = '\0';
        memmove(f, f + 1, sizeof f[0] * 4);
        memmove(fl, fl + 1, sizeof fl[0] * 4);
        nf--;
    } else {
        h->tag = xstrdup("");
    }
    if (nf != 4) {
        snprintf(why, 96, "%zu fields after the tag, expected 4 (start, length, max, histogram)", nf);
        return -1;
    }
    double *dst[3] = {&h->start_s, &h->length_s, &h->max_field};
    for (int i = 0; i < 3; i++)
        if (field_double(f[i], fl[i], dst[i]) != 0) {
            snprintf(why, 96, "%s '%.*s' is not a number", names[i], (int)(fl[i] > 32 ? 32 : fl[i]), f[i]);
            return -1;
        }
    if (b64_decode(f[3], fl[3], &bin, &bin_len, why) != 0) return -1;
    rc = decode_histogram(bin, bin_len, h, why);
    free(bin);
    return rc;
}

int tb_vh_log_parse(const char *text, size_t len, tb_vh_log *out, char *err) {
    size_t pos = 0, lineno = 0, cap = 0;
    char why[128];
    memset(out, 0, sizeof *out);
    while (pos < len) {
        const char *line = text + pos;
        size_t n = 0;
        while (pos + n < len && text[pos + n] != '\n')
            n++;
        pos += n + (pos + n < len);
        lineno++;
        if (n > 0 && line[n - 1] == '\r') n--;
        if (memchr(line, '\0', n)) return seterr_line(err, lineno, "a NUL byte");
        if (n == 0) continue;
        if (n >= 12 && memcmp(line, "#[StartTime:", 12) == 0) {
            if (comment_time(line, n, 12, &out->start_time_s) != 0)
                return seterr_line(err, lineno, "#[StartTime: without a number of seconds");
            continue;
        }
        if (n >= 11 && memcmp(line, "#[BaseTime:", 11) == 0) {
            if (comment_time(line, n, 11, &out->base_time_s) != 0)
                return seterr_line(err, lineno, "#[BaseTime: without a number of seconds");
            continue;
        }
        /* comments, and the legend ("StartTimestamp",... or older "Timestamp",...) */
        if (line[0] == '#' || (n >= 10 && memcmp(line, "\"StartTime", 10) == 0) ||
            (n >= 10 && memcmp(line, "\"Timestamp", 10) == 0))
            continue;
        out->h = tb_grow(out->h, out->n, &cap, sizeof *out->h);
        memset(&out->h[out->n], 0, sizeof out->h[out->n]);
        out->n++;
        why[0] = '\0';
        if (parse_interval(line, n, &out->h[out->n - 1], why) != 0) return seterr_line(err, lineno, why);
    }
    return 0;
}

void tb_vh_log_free(tb_vh_log *log) {
    if (!log) return;
    for (size_t i = 0; i < log->n; i++) {
        free(log->h[i].tag);
        free(log->h[i].counts);
    }
    free(log->h);
    memset(log, 0, sizeof *log);
}

const tb_vh_hist *tb_vh_log_find(const tb_vh_log *log, const char *tag) {
    for (size_t i = 0; i < log->n; i++)
        if (strcmp(log->h[i].tag, tag) == 0) return &log->h[i];
    return NULL;
}

/* ---- values of the histogram ------------------------------------------- */

/* The largest value of counts-array index i (HdrHistogram's
 * highestEquivalentValue(valueFromIndex(i))): below 2 x half the first
 * bucket's sub-buckets, then for each bucket b >= 1 the upper half of its
 * sub-buckets, each 2^(b + unit magnitude) wide. */
static uint64_t index_highest(const layout *l, size_t i) {
    uint64_t b = i >> l->half_mag, sub;
    if (b == 0) return (((uint64_t)i + 1) << l->unit_mag) - 1;
    b -= 1;
    sub = (i & (l->half - 1)) + l->half;
    return ((sub + 1) << (b + (uint64_t)l->unit_mag)) - 1;
}

/* The smallest value of index i (its lowest equivalent value). */
static uint64_t index_lowest(const layout *l, size_t i) {
    uint64_t b = i >> l->half_mag, sub;
    if (b == 0) return (uint64_t)i << l->unit_mag;
    b -= 1;
    sub = (i & (l->half - 1)) + l->half;
    return sub << (b + (uint64_t)l->unit_mag);
}

static int layout_of_hist(const tb_vh_hist *h, layout *l) {
    char why[96];
    return layout_of(h->lowest, h->highest, h->sig_digits, l, why);
}

uint64_t tb_vh_value_at_percentile(const tb_vh_hist *h, double p) {
    layout l;
    uint64_t rank, cum = 0;
    double x;
    if (!h || h->total == 0 || layout_of_hist(h, &l) != 0) return 0;
    if (!(p > 0.0)) p = 0.0;
    if (p > 100.0) p = 100.0;
    /* nearest rank: ceil(p% of the total), at least 1; nudged down by a few
     * ULPs so that 99% of 100 counts is rank 99, not 100 after rounding */
    x = p / 100.0 * (double)h->total;
    x = ceil(x - x * 4.0 * DBL_EPSILON);
    rank = x < 1.0 ? 1 : x >= (double)h->total ? h->total : (uint64_t)x;
    for (size_t i = 0; i < h->n_counts; i++) {
        cum += h->counts[i];
        if (cum >= rank) return index_highest(&l, i);
    }
    return 0; /* not reached: the counts add up to total */
}

/* The mean of a histogram from each bucket's highest equivalent value
 * (µs): at most one bucket width above the exact mean. */
double tb_vh_mean(const tb_vh_hist *h) {
    double sum = 0.0;
    uint64_t seen = 0;
    if (h->total == 0) return NAN;
    for (size_t k = 0; k < h->n_counts; k++) {
        if (!h->counts[k]) continue;
        seen += h->counts[k];
        /* the percentile of the bucket's last value, a hair below so that
         * rounding cannot carry it into the next bucket */
        sum += (double)h->counts[k] *
               (double)tb_vh_value_at_percentile(h, 100.0 * ((double)seen - 0.5) / (double)h->total);
    }
    return sum / (double)h->total;
}

uint64_t tb_vh_max(const tb_vh_hist *h) {
    layout l;
    if (!h || h->total == 0 || layout_of_hist(h, &l) != 0) return 0;
    for (size_t i = h->n_counts; i-- > 0;)
        if (h->counts[i]) return index_highest(&l, i);
    return 0;
}

double tb_vh_fraction_at_or_below(const tb_vh_hist *h, uint64_t v) {
    layout l;
    uint64_t below = 0;
    if (!h || h->total == 0 || layout_of_hist(h, &l) != 0) return 0.0;
    for (size_t i = 0; i < h->n_counts && index_lowest(&l, i) <= v; i++)
        below += h->counts[i];
    return (double)below / (double)h->total;
}
