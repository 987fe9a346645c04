/*
 * hist.h: the latency histogram. Log-linear buckets covering 1 µs .. 100 s
 * with 3 significant digits (relative bucket width <= 0.1%), in the spirit of
 * HdrHistogram. Values are µs. Mergeable (so each worker thread records into
 * its own and the coordinator adds them up), and serializable to a compact
 * BLOB for SQLite so reports can compute any percentile later.
 */
#ifndef TB_QOS_HIST_H
#define TB_QOS_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"

#define TB_HIST_MAX_US 100000000ull /* 100 s: larger values are clamped and counted */

typedef struct tb_hist tb_hist;

/* A new, empty histogram. Caller frees with tb_hist_free. Aborts on OOM. */
tb_hist *tb_hist_new(void);
void tb_hist_free(tb_hist *h); /* NULL is a no-op */
/* Forgets all values; keeps the allocated chunks (zeroed) for reuse. */
void tb_hist_reset(tb_hist *h);

/* Records one value in µs. 0 counts as 1 µs bucket; > 100 s is clamped to
 * 100 s (and tb_hist_clamped counts it); exact min/max are kept unclamped,
 * and so is the sum behind tb_hist_mean (saturating at UINT64_MAX).
 * Integer math only; may allocate (aborts on OOM): a new bucket of a sparse
 * histogram, or a 2 KiB chunk of a dense one the first time a value lands in
 * that part of the range (see tb_hist_memory_bytes). Not thread-safe: one per
 * thread. */
void tb_hist_record(tb_hist *h, uint64_t value_us);

/* Adds every count of src into dst (min/max/sum/clamped too); src may be NULL. */
void tb_hist_merge(tb_hist *dst, const tb_hist *src);

uint64_t tb_hist_count(const tb_hist *h);
uint64_t tb_hist_clamped(const tb_hist *h);
uint64_t tb_hist_min(const tb_hist *h); /* µs; 0 when empty */
uint64_t tb_hist_max(const tb_hist *h); /* µs; 0 when empty */
double tb_hist_mean(const tb_hist *h);  /* µs; 0 when empty */

/*
 * Value at percentile p in [0,100] in µs: the smallest recorded value v such
 * that at least p% of values are <= v (nearest-rank, as HdrHistogram's
 * getValueAtPercentile), reported as the bucket's upper edge clamped to the
 * exact [min, max], so never below and within 0.1% above the exact sample
 * value (values clamped at 100 s report as ~100 s unless p hits max).
 * p=0 (or NaN) gives min, p>=100 gives max. 0 when empty.
 */
uint64_t tb_hist_percentile(const tb_hist *h, double p);

/* Fraction in [0,1] of recorded values <= limit_us (Weathervane "99% under
 * the limit"); 0 when empty. Exact below 2048 µs; above, the whole bucket
 * holding limit_us counts as below it (values within 0.1% are equal). */
double tb_hist_fraction_below(const tb_hist *h, uint64_t limit_us);

/*
 * Bytes of heap this histogram holds. A histogram starts sparse: a 64 B
 * header plus 8 B per non-empty bucket (an array grown by doubling from 8
 * entries), which is all the few hundred values of one op in one phase need.
 * It turns dense for good (560 B of chunk pointers plus 2 KiB per 256-bucket
 * chunk touched; all ~18k buckets would take ~144 KiB) when the array,
 * doubled, would take at least that, past 2048 non-empty buckets, when a
 * bucket's count passes 2^32 - 1, or when a value is recorded into one that
 * already holds 16,384 (a busy histogram: an indexed add per value instead
 * of a search). tb_hist_reset keeps either storage.
 */
size_t tb_hist_memory_bytes(const tb_hist *h);

/*
 * Serializes to a compact byte string (only non-empty buckets, varint coded).
 * *out is malloc'd, caller frees. Returns 0.
 * Layout, version 1: byte 0x01, then LEB128 varints: count, clamped, min,
 * max, sum, number of non-empty buckets n, then n pairs (index gap, count)
 * where gap = index - previous index - 1 (previous = -1 at the start).
 */
int tb_hist_encode(const tb_hist *h, uint8_t **out, size_t *len);
/*
 * Parses a BLOB made by tb_hist_encode into a new histogram (*out, caller
 * frees). Returns 0, or -1 with err ("hist decode: truncated at byte 12", ...)
 * and *out = NULL on truncated, overlong, inconsistent or trailing input; never
 * reads past buf + len. A blob that decodes re-encodes to the same bytes.
 */
int tb_hist_decode(const uint8_t *buf, size_t len, tb_hist **out, char *err) TB_WUR;

/*
 * HdrHistogram's own encoding of this histogram, for its tools (an interval
 * log's lines, results/report_hlog.c). The bucket layout is HdrHistogram's for
 * lowest discernible value 1, 3 significant digits and highest trackable value
 * TB_HIST_MAX_US, and a bucket index equals its counts-array index, so the
 * counts go over as they are; values are µs.
 *
 * Without compressed, the V2 encoding: a 40-byte big-endian header (cookie
 * 0x1c849313, payload length, normalizing index offset 0, significant digits
 * 3, lowest 1, highest 100000000, integer-to-double ratio 1.0 as an IEEE 754
 * double), then the payload: the counts from index 0 up to the highest
 * non-empty one, each as a ZigZag LEB128 varint (the 9-byte variant: a 9th
 * byte holds 8 bits), a run of two or more empty buckets as one negative
 * number (minus the run's length) and a single empty one as 0, as the Java
 * and JavaScript encoders do. An empty histogram's payload is one 0 (index 0).
 * With compressed, the compressed form: cookie 0x1c849314, the length of what
 * follows, then the V2 encoding deflated in zlib's format.
 *
 * Sources: HdrHistogram's AbstractHistogram.encodeIntoByteBuffer and
 * encodeIntoCompressedByteBuffer (Java), ZigZagEncoding.java, and
 * HdrHistogram_c's hdr_histogram_log.c. The exact min/max/sum and the
 * clamped count are not part of the format (a clamped value is in the top
 * bucket). *out is malloc'd, caller frees. Returns 0, or -1 when zlib fails
 * (*out = NULL).
 */
int tb_hist_encode_hdr(const tb_hist *h, int compressed, uint8_t **out, size_t *len) TB_WUR;
/* The largest value in value_us's bucket (HdrHistogram's
 * highestEquivalentValue); a value above TB_HIST_MAX_US counts as
 * TB_HIST_MAX_US, as tb_hist_record clamps it. */
uint64_t tb_hist_highest_equivalent(uint64_t value_us);

#endif
