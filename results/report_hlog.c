/*
 * report_hlog.c: the run's latency histograms as an HdrHistogram interval
 * log (`report --format hlog`), the text format of HdrHistogram's
 * HistogramLogWriter, so HdrHistogram's own tools (HistogramLogProcessor,
 * hdr-histogram-js's HistogramLogReader, HdrHistogram_c's hdr_log_read) read
 * them. docs/results.md, "HdrHistogram interval log", describes it.
 *
 * One line per stored histogram: each op's corrected latency (ops.hist) and,
 * where stored, its latency from the actual send (ops.hist_uncorrected), in
 * the order of the JSON report; then each infrastructure operation's
 * durations (infra.hist). A line is "Tag=TAG,START,LENGTH,MAX,BASE64":
 * the steady state's start in seconds after the log's BaseTime (the run's
 * start), its length, the max (below), and the base64 of the compressed V2
 * encoding (qos/hist.c, tb_hist_encode_hdr).
 *
 * Interval_Max: HdrHistogram's writers print the histogram's max (its
 * highest equivalent value) divided by a "max value unit ratio", "%.3f":
 * Java's HistogramLogWriter divides by 1e6 (nanoseconds to ms),
 * hdr-histogram-js's by 1000, HdrHistogram_c prints it as it is. Values here
 * are µs, so the ratio is 1000 and the column is in ms, as the Java default
 * gives for nanosecond values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/report_views.h"

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Writes b[0..n) as padded base64 (RFC 4648). */
static void put_base64(FILE *f, const uint8_t *b, size_t n) {
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16;
        if (i + 1 < n) v |= (uint32_t)b[i + 1] << 8;
        if (i + 2 < n) v |= b[i + 2];
        fputc(B64[v >> 18 & 63], f);
        fputc(B64[v >> 12 & 63], f);
        fputc(i + 1 < n ? B64[v >> 6 & 63] : '=', f);
        fputc(i + 2 < n ? B64[v & 63] : '=', f);
    }
}

/* Days from 1970-01-01 to y-m-d (the proleptic Gregorian calendar; the
 * "days from civil" method of Howard Hinnant's date algorithms). */
static int64_t days_from_civil(int64_t y, int m, int d) {
    int64_t era, yoe, doy;
    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    return era * 146097 + (yoe * 365 + yoe / 4 - yoe / 100 + doy) - 719468;
}

/* "2026-11-30T15:57:40Z" (the store's wall-clock times) as seconds since
 * the epoch. 0, or -1 when s is not such a time. */
static int iso_seconds(const char *s, double *out) {
    int y, mo, d, h, mi, sec, n = 0;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n == 0 || s[n] != '\0' ||
        mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || h < 0 || mi < 0 || sec < 0)
        return -1;
    *out = (double)(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec);
    return 0;
}

/* A tag's part: HdrHistogram's log readers split a line at ',' (and Java's
 * also at blanks), so those and control characters become '_'. */
static void put_tag_part(FILE *f, const char *s) {
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        fputc(c == ',' || c == ' ' || c < 0x20 || c == 0x7f ? '_' : c, f);
    }
}

typedef struct hlog_line {
    const tb_model_level *lv;
    const tb_model_workload *w;
    const tb_model_op *op;
    double start_s; /* after BaseTime */
} hlog_line;

/* The rest of an interval line after its tag: ",START,LENGTH,MAX,BASE64"
 * of histogram h, compressed as enc[0..len). */
static void put_interval(FILE *f, const tb_hist *h, double start_s, double length_s, const uint8_t *enc, size_t len) {
    uint64_t max = tb_hist_count(h) ? tb_hist_highest_equivalent(tb_hist_max(h)) : 0;
    fprintf(f, ",%.3f,%.3f,%.3f,", start_s, length_s, (double)max / 1000.0);
    put_base64(f, enc, len);
    fputc('\n', f);
}

/* One interval line for histogram h (NULL: not stored, no line). */
static int put_line(FILE *f, const hlog_line *l, const tb_hist *h, int uncorrected, char *err) {
    uint8_t *enc = NULL;
    size_t len = 0;
    if (tb_hist_encode_hdr(h, 1, &enc, &len) != 0) {
        tb_seterr(err, "hlog: level %lld %s.%s: compressing the histogram failed", (long long)l->lv->id, l->w->name,
                  l->op->name);
        return -1;
    }
    fprintf(f, "Tag=L%lld/T%lld/", (long long)l->lv->id, (long long)l->w->tile);
    put_tag_part(f, l->w->name);
    fputc('/', f);
    put_tag_part(f, l->op->name);
    if (uncorrected) fputs("/uncorrected", f);
    put_interval(f, h, l->start_s, l->lv->steady_s, enc, len);
    free(enc);
    return 0;
}

/* The level's infrastructure operations ([infra.NAME]): one line per
 * operation with stored durations, tag "L<level id>/infra/<name>/<kind>".
 * An operation is closed-loop (the next op starts when one ends), so its
 * durations have no intended start to correct from: one histogram. */
static int put_infra(FILE *f, const tb_model_level *lv, double start_s, char *err) {
    for (size_t i = 0; i < lv->n_infra; i++) {
        const tb_model_infra *x = &lv->infra[i];
        uint8_t *enc = NULL;
        size_t len = 0;
        if (x->hist_error) {
            tb_seterr(err, "hlog: level %lld operation %s: stored histogram unreadable: %s", (long long)lv->id,
                      x->name ? x->name : "", x->hist_error);
            return -1;
        }
        if (!x->hist) continue;
        if (tb_hist_encode_hdr(x->hist, 1, &enc, &len) != 0) {
            tb_seterr(err, "hlog: level %lld operation %s: compressing the histogram failed", (long long)lv->id,
                      x->name ? x->name : "");
            return -1;
        }
        fprintf(f, "Tag=L%lld/infra/", (long long)lv->id);
        put_tag_part(f, x->name);
        fputc('/', f);
        put_tag_part(f, x->kind);
        put_interval(f, x->hist, start_s, lv->steady_s, enc, len);
        free(enc);
    }
    return 0;
}

static int put_level(FILE *f, const tb_model_level *lv, double base_s, char *err) {
    hlog_line l = {lv, NULL, NULL, 0};
    double start;
    if (iso_seconds(lv->steady_start, &start) != 0) {
        tb_seterr(err, "hlog: level %lld: steady_start '%s' is not an ISO 8601 UTC time", (long long)lv->id,
                  lv->steady_start ? lv->steady_start : "");
        return -1;
    }
    if (!isfinite(lv->steady_s)) {
        tb_seterr(err, "hlog: level %lld: the steady state's length is not known", (long long)lv->id);
        return -1;
    }
    l.start_s = start - base_s;
    for (size_t i = 0; i < lv->n_workloads; i++) {
        l.w = &lv->workloads[i];
        for (size_t k = 0; k < l.w->n_ops; k++) {
            l.op = &l.w->ops_list[k];
            if (l.op->hist_error || !l.op->uncorrected_readable) {
                tb_seterr(err, "hlog: level %lld tile %lld %s.%s: stored %s histogram unreadable%s%s",
                          (long long)lv->id, (long long)l.w->tile, l.w->name, l.op->name,
                          l.op->hist_error ? "corrected" : "uncorrected", l.op->hist_error ? ": " : "",
                          l.op->hist_error ? l.op->hist_error : "");
                return -1;
            }
            if (l.op->hist && put_line(f, &l, l.op->hist, 0, err) != 0) return -1;
            if (l.op->hist_uncorrected && put_line(f, &l, l.op->hist_uncorrected, 1, err) != 0) return -1;
        }
    }
    return put_infra(f, lv, l.start_s, err);
}

int tb_report_write_hlog(const tb_model_run *r, FILE *f, char *err) {
    double base;
    if (iso_seconds(r->started_at, &base) != 0) {
        tb_seterr(err, "hlog: run %lld: started_at '%s' is not an ISO 8601 UTC time", (long long)r->id,
                  r->started_at ? r->started_at : "");
        return -1;
    }
    fprintf(f, "#[tilebench %s run %lld: latency histograms]\n", r->tilebench_version ? r->tilebench_version : "",
            (long long)r->id);
    fputs("#[Histogram log format version 1.3]\n", f);
    fprintf(f, "#[StartTime: %.3f (seconds since epoch), %s]\n", base, r->started_at);
    fprintf(f, "#[BaseTime: %.3f (seconds since epoch)]\n", base);
    /* HdrHistogram_c's hdr_log_read_header reads a header line in pieces of
     * 128 bytes, and takes a piece that does not start with '#' for the
     * first interval: each comment line stays shorter */
    fputs("#[Values are latencies in µs (microseconds): lowest 1, highest 100000000, 3 significant digits]\n"
          "#[Tag L<level id>/T<tile>/<workload>/<op>: latency from the op's intended start (corrected)]\n"
          "#[Tag L<level id>/T<tile>/<workload>/<op>/uncorrected: latency from the op's actual send]\n"
          "#[Tag L<level id>/infra/<name>/<kind>: durations of an infrastructure operation's ops]\n"
          "#[In the names of tags ',', blanks and control characters are '_']\n"
          "#[StartTimestamp: the steady state's start, s after BaseTime (the run's start); "
          "Interval_Length: its length, s]\n"
          "#[Interval_Max: the highest value equivalent to the max, in ms (µs / 1000, max value unit ratio 1000)]\n",
          f);
    fputs("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n", f);
    for (size_t i = 0; i < r->n_levels; i++)
        if (put_level(f, &r->levels[i], base, err) != 0) return -1;
    return 0;
}
