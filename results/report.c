/*
 * report.c: the report entry points. Reads a stored run once into the typed
 * read model (model.h) and hands it to the renderer of the chosen format
 * (report_json.c, report_text.c, report_csv.c, report_html.c, report_hlog.c), so every view
 * shows the same snapshot; lists the runs of a database. Reads only.
 */
#include "results/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "results/model.h"
#include "results/report_views.h"

int tb_report_parse_format(const char *s, tb_report_format *out, char *err) {
    if (s && strcmp(s, "text") == 0)
        *out = TB_REPORT_TEXT;
    else if (s && strcmp(s, "json") == 0)
        *out = TB_REPORT_JSON;
    else if (s && strcmp(s, "html") == 0)
        *out = TB_REPORT_HTML;
    else if (s && strcmp(s, "csv") == 0)
        *out = TB_REPORT_CSV;
    else if (s && strcmp(s, "hlog") == 0)
        *out = TB_REPORT_HLOG;
    else {
        tb_seterr(err, "unknown report format '%s' (use text, json, html, csv or hlog)", s ? s : "");
        return -1;
    }
    return 0;
}

/* 1 when name ends in suffix, letters in any case. */
static int ends_with(const char *name, const char *suffix) {
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcasecmp(name + n - k, suffix) == 0;
}

tb_report_format tb_report_format_for_path(const char *path) {
    if (!path) return TB_REPORT_TEXT;
    if (ends_with(path, ".json")) return TB_REPORT_JSON;
    if (ends_with(path, ".html") || ends_with(path, ".htm")) return TB_REPORT_HTML;
    if (ends_with(path, ".csv")) return TB_REPORT_CSV;
    if (ends_with(path, ".hlog")) return TB_REPORT_HLOG;
    return TB_REPORT_TEXT;
}

/* What a format's renderer needs read beyond the run itself. */
static int model_flags(tb_report_format fmt) {
    /* every format but hlog: also the interference table's percentiles; hlog: each op's histograms */
    int flags = fmt == TB_REPORT_HLOG ? TB_MODEL_OP_HISTS : TB_MODEL_MERGED_LATENCY;
    if (fmt == TB_REPORT_HTML) flags |= TB_MODEL_POWER_SERIES; /* the power over time chart */
    return flags;
}

static int render(const tb_model_run *r, tb_report_format fmt, FILE *f, char *err) {
    int rc;
    switch (fmt) {
    case TB_REPORT_JSON: rc = tb_report_write_json(r, f, err); break;
    case TB_REPORT_HTML: rc = tb_report_write_html(r, f, err); break;
    case TB_REPORT_CSV: rc = tb_report_write_csv(r, f, err); break;
    case TB_REPORT_HLOG: rc = tb_report_write_hlog(r, f, err); break;
    case TB_REPORT_TEXT:
    default: rc = tb_report_write_text(r, f, err); break;
    }
    if (rc == 0 && (fflush(f) != 0 || ferror(f))) {
        tb_seterr(err, "write report: %s", strerror(errno));
        rc = -1;
    }
    return rc;
}

int tb_report_write_set(tb_store *s, int64_t run_id, const tb_report_format *fmts, FILE *const *files, size_t n,
                        char *err) {
    tb_model_run *r = NULL;
    int rc = 0, flags = 0;
    for (size_t i = 0; i < n; i++)
        flags |= model_flags(fmts[i]);
    if (tb_model_read_run(s, run_id, flags, &r, err) != 0) return -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = render(r, fmts[i], files[i], err);
    tb_model_run_free(r);
    return rc;
}

int tb_report_write(tb_store *s, int64_t run_id, tb_report_format fmt, FILE *f, char *err) {
    return tb_report_write_set(s, run_id, &fmt, &f, 1, err);
}

int tb_report_list_runs(tb_store *s, FILE *f, char *err) {
    tb_model_run_list *l = NULL;
    int rc;
    if (tb_model_read_run_list(s, &l, err) != 0) return -1;
    rc = tb_report_write_run_list(l, f, err);
    tb_model_run_list_free(l);
    return rc;
}
