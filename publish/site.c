/*
 * site.c: `tilebench publish --site DIR`: every run of a database as a
 * static site that any web server (or a git pages service) can serve as
 * files: index.html, per finished run runs/<UUID>/report.html (the HTML
 * report, results/' renderer) and its bundle, and compare/<A>-<B>.html
 * (results/' compare page, A the baseline) for each run B against A, the
 * run of the same tile name before it whose power was found the same way:
 * measured by a meter, or estimated by a model; the two are never paired
 * (an estimate's PPKW says nothing about a meter's), and the index says
 * why a run has no comparison. Every page links back to the index. Links
 * are relative, so the folder can be moved or served under any path;
 * database text is HTML-escaped (common/html.h). Each file is written
 * whole (archive.h).
 */
#include "publish/publish.h"
#include "publish/archive.h"
#include "publish/pub_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "common/buf.h"
#include "common/html.h"
#include "results/compare.h"
#include "results/model.h"
#include "results/report.h"

#define PATH_LEN 4096

/* One run of the site: the run list's row and what the site needs besides. */
typedef struct site_run {
    const tb_model_run_row *row;
    char uuid[40], status[16];
    char *tile_name; /* NULL: none stored */
    int published;   /* finished: it has a report and a bundle */
    int64_t prev;    /* index into the runs of the run it is compared with; -1: none */
    int64_t unlike;  /* prev < 0: the run of its tile before it, its power found the other way; -1: none */
} site_run;

/* mkdir -p: path and its missing parents. 0, or -1 with err. */
static int make_dirs(const char *path, char *err) {
    char p[PATH_LEN];
    struct stat sb;
    if (!*path || tb_fmt_capped(p, sizeof p, "%s", path) != 0) {
        tb_seterr(err, "site folder '%.200s': %s", path, *path ? "path too long" : "no name");
        return -1;
    }
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            tb_seterr(err, "make folder %s: %s", p, strerror(errno));
            return -1;
        }
        *s = c;
        if (!c) break;
    }
    if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        tb_seterr(err, "make folder %s: not a folder", p);
        return -1;
    }
    return 0;
}

/* mkdir -p of rel's folders inside dir, none of them a symbolic link: a
 * runs/ or compare/ planted in dir as a link would have the site written
 * outside dir. dir itself may be a link (the user named it). 0, or -1. */
static int make_inside(const char *dir, const char *rel, char *err) {
    char p[PATH_LEN];
    size_t at = strlen(dir) + 1;
    struct stat sb;
    if (tb_fmt_capped(p, sizeof p, "%s/%s", dir, rel) != 0) {
        tb_seterr(err, "%.200s/%s: path too long", dir, rel);
        return -1;
    }
    for (char *s = p + at;; s++) {
        char c = *s;
        if (c != '/' && c != '\0') continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            tb_seterr(err, "make folder %s: %s", p, strerror(errno));
            return -1;
        }
        if (lstat(p, &sb) != 0) {
            tb_seterr(err, "make folder %s: %s", p, strerror(errno));
            return -1;
        }
        if (!S_ISDIR(sb.st_mode)) {
            tb_seterr(err, "%s is %s: publish --site writes only inside %s", p,
                      S_ISLNK(sb.st_mode) ? "a symbolic link" : "not a folder", dir);
            return -1;
        }
        *s = c;
        if (!c) break;
    }
    return 0;
}

/* dir/rel into out; -1 with err when too long. */
static int join(char *out, const char *dir, const char *rel, char *err) {
    if (tb_fmt_capped(out, PATH_LEN, "%s/%s", dir, rel) == 0) return 0;
    tb_seterr(err, "%.200s/%s: path too long", dir, rel);
    return -1;
}

/* Renders with fn into memory, then writes path whole. */
typedef int (*page_fn)(tb_pub *p, const site_run *runs, size_t i, FILE *f, char *err);

/* The page's text with a link to the index (href `index`) put first in its
 * <main>, or at its end when it has none; *len updated. */
static char *with_back_link(char *data, size_t *len, const char *index) {
    static const char main_tag[] = "<main>\n";
    char link[160], *at = strstr(data, main_tag), *out;
    size_t head = at ? (size_t)(at - data) + sizeof main_tag - 1 : *len, n;
    n = (size_t)snprintf(link, sizeof link, "<p class=\"site-nav\"><a href=\"%s\">&larr; all runs</a></p>\n", index);
    out = xmalloc(*len + n + 1);
    memcpy(out, data, head);
    memcpy(out + head, link, n);
    memcpy(out + head + n, data + head, *len - head + 1);
    *len += n;
    free(data);
    return out;
}

/* back: the relative link to index.html, NULL on the index itself. */
static int write_page(tb_pub *p, const site_run *runs, size_t i, page_fn fn, const char *back, const char *path,
                      char *err) {
    char *data = NULL, e[TB_ERR_LEN] = "";
    size_t len = 0;
    FILE *m = open_memstream(&data, &len);
    int rc;
    if (!m) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    rc = fn(p, runs, i, m, e);
    if (fclose(m) != 0 && rc == 0) {
        tb_seterr(e, "%s", strerror(errno));
        rc = -1;
    }
    if (rc == 0 && back) data = with_back_link(data, &len, back);
    if (rc == 0) rc = tb_pub_write_file(path, data, len, e);
    if (rc != 0) tb_seterr(err, "%s: %s", path, e);
    free(data);
    return rc;
}

static int report_page(tb_pub *p, const site_run *runs, size_t i, FILE *f, char *err) {
    return tb_report_write(p->s, runs[i].row->id, TB_REPORT_HTML, f, err);
}

static int compare_page(tb_pub *p, const site_run *runs, size_t i, FILE *f, char *err) {
    int64_t ids[2] = {runs[runs[i].prev].row->id, runs[i].row->id};
    return tb_compare_write(p->s, ids, 2, ids[0], TB_COMPARE_HTML, f, err);
}

static const char *const index_css =
    "body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#1f2937}"
    "table{border-collapse:collapse;width:100%}th,td{padding:.3em .6em;border-bottom:1px solid #e5e7eb;"
    "text-align:left}th{background:#eef1f5}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".muted{color:#6b7280}.unlike{color:#b45309}";

/* One row of the index. */
static void index_row(FILE *f, const site_run *runs, size_t i) {
    const site_run *r = &runs[i];
    const tb_model_run_row *row = r->row;
    fprintf(f, "<tr><td class=\"num\">%lld</td><td>", (long long)row->id);
    tb_html_escape_file(f, row->label && *row->label ? row->label : "");
    fputs("</td><td>", f);
    tb_html_escape_file(f, row->started_at);
    fputs("</td><td>", f);
    tb_html_escape_file(f, r->tile_name ? r->tile_name : "");
    fputs("</td><td>", f);
    tb_html_escape_file(f, r->status);
    fputs("</td><td class=\"num\">", f);
    if (isfinite(row->peak_ppkw))
        fprintf(f, "%.2f%s", row->peak_ppkw, row->estimated ? "*" : "");
    else
        fputs("&ndash;", f);
    fputs("</td><td>", f);
    if (r->published) {
        /* UUIDs are hex and '-': nothing to escape in these links */
        fprintf(f, "<a href=\"runs/%s/report.html\">report</a> &middot; ", r->uuid);
        fprintf(f, "<a href=\"runs/%s/tilebench-run-%s.tar.gz\">bundle</a>", r->uuid, r->uuid);
        if (r->prev >= 0)
            fprintf(f, " &middot; <a href=\"compare/%s-%s.html\">compare with run %lld</a>", runs[r->prev].uuid,
                    r->uuid, (long long)runs[r->prev].row->id);
        else if (r->unlike >= 0)
            fprintf(f,
                    " &middot; <span class=\"unlike\">not compared with run %lld: its power was %s, this run's "
                    "%s</span>",
                    (long long)runs[r->unlike].row->id, runs[r->unlike].row->estimated ? "estimated" : "measured",
                    row->estimated ? "estimated" : "measured");
    } else {
        fputs("<span class=\"muted\">not published until it has finished</span>", f);
    }
    fputs("</td></tr>\n", f);
}

static int index_page(tb_pub *p, const site_run *runs, size_t n, FILE *f, char *err) {
    int estimated = 0;
    (void)err;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
          f);
    fprintf(f, "<meta name=\"generator\" content=\"tilebench %s\">\n<title>tilebench results</title>\n", TB_VERSION);
    fprintf(f, "<style>%s</style>\n</head>\n<body>\n<main>\n<h1>tilebench results</h1>\n", index_css);
    fprintf(f, "<p>%zu run%s of <code>", n, n == 1 ? "" : "s");
    tb_html_escape_file(f, p->db_path);
    fputs("</code>, newest first. Each finished run has its HTML report and its result bundle (a tar.gz of its "
          "reports, its tile file, its stored rows as CSV and a manifest of SHA-256 sums), and is compared "
          "with the run of the same tile before it whose power was found the same way: measured by a meter, or "
          "estimated by a model. A run with estimated power is never compared with one measured by a meter.</p>\n",
          f);
    fputs("<table>\n<thead><tr><th>run</th><th>label</th><th>started (UTC)</th><th>tile</th><th>status</th>"
          "<th>peak PPKW</th><th>published</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = n; i-- > 0;) {
        index_row(f, runs, i);
        estimated |= runs[i].row->estimated && isfinite(runs[i].row->peak_ppkw);
    }
    fputs("</tbody>\n</table>\n", f);
    if (estimated)
        fputs("<p class=\"muted\">* estimated power: a model, not a meter, gave the watts; not comparable with "
              "measured PPKW.</p>\n",
              f);
    fputs("</main>\n</body>\n</html>\n", f);
    return ferror(f) ? -1 : 0;
}

/* index_page through write_page's signature (i is the number of runs). */
static int index_fn(tb_pub *p, const site_run *runs, size_t n, FILE *f, char *err) {
    int rc = index_page(p, runs, n, f, err);
    if (rc != 0) tb_seterr(err, "write error");
    return rc;
}

/* Fills runs[i] (uuid, status, tile name) for the run list's rows, and each
 * finished run's prev: the finished run of the same tile name before it
 * whose power was found the same way (both measured or both estimated);
 * unlike: when there is none, the one before it found the other way. */
static int site_runs(tb_pub *p, const tb_model_run_list *l, site_run *runs, char *err) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(p->db, "SELECT tile_name FROM runs WHERE id = ?1", -1, &st, NULL) != SQLITE_OK) {
        tb_seterr(err, "read %s: %s", p->db_path, sqlite3_errmsg(p->db));
        return -1;
    }
    for (size_t i = 0; i < l->n_runs; i++) {
        site_run *r = &runs[i];
        const char *t;
        r->row = &l->runs[i];
        r->prev = r->unlike = -1;
        if (tb_pub_run_ident(p, r->row->id, r->uuid, r->status, err) != 0) {
            sqlite3_finalize(st);
            return -1;
        }
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, r->row->id);
        if (sqlite3_step(st) == SQLITE_ROW && (t = (const char *)sqlite3_column_text(st, 0)) != NULL)
            r->tile_name = xstrdup(t);
        r->published = strcmp(r->status, TB_RUN_RUNNING) != 0;
        for (size_t k = i; r->published && r->tile_name && k-- > 0;) {
            if (!runs[k].published || !runs[k].tile_name || strcmp(runs[k].tile_name, r->tile_name) != 0) continue;
            if (!runs[k].row->estimated != !r->row->estimated) {
                if (r->unlike < 0) r->unlike = (int64_t)k;
                continue;
            }
            r->prev = (int64_t)k;
            r->unlike = -1;
            break;
        }
    }
    sqlite3_finalize(st);
    return 0;
}

/* One finished run's pages: runs/<UUID>/report.html and its bundle, and its
 * comparison with the run before it. */
static int run_pages(tb_pub *p, const char *dir, const site_run *runs, size_t i, tb_publish_site_done *done,
                     char *err) {
    const site_run *r = &runs[i];
    char rel[160], folder[PATH_LEN], path[PATH_LEN];
    snprintf(rel, sizeof rel, "runs/%s", r->uuid);
    if (join(folder, dir, rel, err) != 0 || make_inside(dir, rel, err) != 0) return -1;
    if (join(path, folder, "report.html", err) != 0 ||
        write_page(p, runs, i, report_page, "../../index.html", path, err) != 0)
        return -1;
    snprintf(rel, sizeof rel, "tilebench-run-%s.tar.gz", r->uuid);
    if (join(path, folder, rel, err) != 0 || tb_pub_bundle_to(p, r->row->id, path, NULL, err) != 0) return -1;
    done->published++;
    if (r->prev < 0) return 0;
    snprintf(rel, sizeof rel, "compare/%s-%s.html", runs[r->prev].uuid, r->uuid);
    if (join(path, dir, rel, err) != 0 || write_page(p, runs, i, compare_page, "../index.html", path, err) != 0)
        return -1;
    done->compares++;
    return 0;
}

int tb_publish_site(const char *db, const char *dir, tb_publish_site_done *done, char *err) {
    tb_pub p;
    tb_model_run_list *l = NULL;
    site_run *runs = NULL;
    char path[PATH_LEN], e[TB_ERR_LEN] = "";
    int rc = 0;
    memset(done, 0, sizeof *done);
    if (tb_pub_open(&p, db, err) != 0) return -1;
    if (tb_model_read_run_list(p.s, &l, e) != 0) {
        tb_seterr(err, "read the runs of %s: %s", db, e);
        tb_pub_close(&p);
        return -1;
    }
    runs = xcalloc(l->n_runs + 1, sizeof *runs);
    rc = site_runs(&p, l, runs, err);
    if (rc == 0 && (make_dirs(dir, err) != 0 || make_inside(dir, "compare", err) != 0)) rc = -1;
    for (size_t i = 0; rc == 0 && i < l->n_runs; i++)
        if (runs[i].published) rc = run_pages(&p, dir, runs, i, done, err);
    if (rc == 0) rc = join(path, dir, "index.html", err);
    if (rc == 0) rc = write_page(&p, runs, l->n_runs, index_fn, NULL, path, err);
    if (rc == 0) done->runs = (int)l->n_runs;
    for (size_t i = 0; i < l->n_runs; i++)
        free(runs[i].tile_name);
    free(runs);
    tb_model_run_list_free(l);
    tb_pub_close(&p);
    return rc;
}
