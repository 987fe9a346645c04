/*
 * hdrlog.h: a reader of HdrHistogram interval logs (the text format that
 * HdrHistogram's HistogramLogWriter writes: "#[StartTime: ...]" and
 * "#[BaseTime: ...]" comments, a CSV header, then one line per histogram,
 * "Tag=TAG,START,LENGTH,MAX,BASE64" with the base64 of the compressed V2
 * encoding). It is part of the verifier: written from the format's own
 * description, it shares no code with qos/hist.c, which writes the
 * histograms, so a bug in one is not hidden by the same bug in the other.
 *
 * Values are in the units they were recorded in (µs for tilebench).
 */
#ifndef TB_VERIFY_HDRLOG_H
#define TB_VERIFY_HDRLOG_H

#include <stddef.h>
#include <stdint.h>

/* One histogram of the log, decoded. */
typedef struct tb_vh_hist {
    char *tag;          /* the line's Tag= value ("" when it has none) */
    double start_s;     /* the line's start, seconds after the log's BaseTime */
    double length_s;    /* the interval's length, s */
    double max_field;   /* the line's Interval_Max column, as written */
    int64_t lowest;     /* lowest discernible value, from the encoding */
    int64_t highest;    /* highest trackable value */
    int32_t sig_digits; /* significant value digits */
    uint64_t total;     /* sum of the counts */
    size_t n_counts;    /* length of counts */
    uint64_t *counts;   /* HdrHistogram's counts array, index for index */
} tb_vh_hist;

typedef struct tb_vh_log {
    double start_time_s; /* #[StartTime: ...] in seconds since the epoch; 0 if absent */
    double base_time_s;  /* #[BaseTime: ...]; 0 if absent */
    size_t n;
    tb_vh_hist *h;
} tb_vh_log;

/* Parses a whole log. Returns 0, or -1 with err (at most 256 bytes, naming
 * the line: "hdrlog line 7: base64: bad character"). *out is zeroed first;
 * free it with tb_vh_log_free even after a failure. */
int tb_vh_log_parse(const char *text, size_t len, tb_vh_log *out, char *err);
void tb_vh_log_free(tb_vh_log *log);

/* The first histogram whose tag is TAG, or NULL. */
const tb_vh_hist *tb_vh_log_find(const tb_vh_log *log, const char *tag);

/* The value at percentile p in [0,100], as HdrHistogram's
 * getValueAtPercentile: the highest value equivalent to the smallest recorded
 * value v with at least p% of the counts at or below v. 0 when empty. */
uint64_t tb_vh_value_at_percentile(const tb_vh_hist *h, double p);
/* The mean (µs) from each bucket's highest equivalent value: at most one
 * bucket width above the exact mean; NaN when empty. */
double tb_vh_mean(const tb_vh_hist *h);
/* The highest value equivalent to the largest recorded one; 0 when empty. */
uint64_t tb_vh_max(const tb_vh_hist *h);
/* Fraction in [0,1] of the counts whose bucket lies at or below v. */
double tb_vh_fraction_at_or_below(const tb_vh_hist *h, uint64_t v);

#endif
