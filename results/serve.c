/*
 * serve.c: `tilebench serve`, a read-only HTTP server over a results
 * database, on libmicrohttpd (one thread per connection, capped).
 *
 * Safety model, in the order a request meets it:
 *  - GET and HEAD only (405 with Allow otherwise).
 *  - When bound to loopback, the Host header must name loopback too, so a
 *    web page elsewhere cannot read the results through DNS rebinding (403).
 *  - The URL path is matched against a fixed table of routes; run ids are
 *    strictly parsed digits. Nothing is ever read from the filesystem but the
 *    database, so there is no path to traverse; anything else is 404. Percent
 *    escapes are decoded except %00, which stays literal, so a NUL cannot cut
 *    a path short ("/runs/1%00" is not "/runs/1").
 *  - Every string from the database goes through esc() (common/html.h) or
 *    jansson (JSON); reports come from the report module, which escapes the
 *    same way. The database is read through the typed model (model.h) only.
 *  - Every response carries a Content-Security-Policy that allows no script
 *    and no fetch, X-Content-Type-Options: nosniff, no framing, no caching.
 *
 * The database is opened read-only for each request and closed after it, so
 * a sweep that is running shows its newly committed levels on reload (WAL
 * lets readers work while the coordinator writes), and a database that is
 * missing, locked or not tilebench's gives a 503 page naming the problem.
 */
#include "results/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "results/compare.h"
#include "results/report.h"
#include "results/store.h"
#include "common/html.h"
#include "common/listen.h"
#include "results/model.h"

#define CSP                  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
#define MAX_CONNECTIONS      64
#define CONNECTION_TIMEOUT_S 30

struct tb_serve {
    struct MHD_Daemon *mhd;
    char *db_path;
    struct sockaddr_storage addr;
    int loopback; /* bound to 127/8 or ::1: enforce a loopback Host header */
};

/* ---- pure parsing (unit-tested) ------------------------------------------------ */

/* A run id: 1..INT64_MAX as plain digits, no sign, no leading zero. Reads
 * digits from s up to end (exclusive). */
static int parse_id(const char *s, const char *end, int64_t *out) {
    int64_t v = 0;
    if (end <= s || *s == '0' || end - s > 19) return -1;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9') return -1;
        if (v > (INT64_MAX - (*p - '0')) / 10) return -1;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

static int ends_with(const char *s, size_t n, const char *suffix) {
    size_t m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

tb_serve_route tb_serve_match(const char *path, int64_t *run_id) {
    size_t n;
    if (!path) return TB_ROUTE_NONE;
    if (strcmp(path, "/") == 0) return TB_ROUTE_INDEX;
    if (strcmp(path, "/compare") == 0) return TB_ROUTE_COMPARE;
    if (strcmp(path, "/api/runs") == 0) return TB_ROUTE_API_RUNS;
    if (strncmp(path, "/api/runs/", 10) == 0) {
        const char *id = path + 10;
        return parse_id(id, id + strlen(id), run_id) == 0 ? TB_ROUTE_API_RUN : TB_ROUTE_NONE;
    }
    if (strncmp(path, "/runs/", 6) == 0) {
        const char *id = path + 6;
        n = strlen(id);
        if (ends_with(id, n, ".json")) return parse_id(id, id + n - 5, run_id) == 0 ? TB_ROUTE_RUN_JSON : TB_ROUTE_NONE;
        if (ends_with(id, n, ".csv")) return parse_id(id, id + n - 4, run_id) == 0 ? TB_ROUTE_RUN_CSV : TB_ROUTE_NONE;
        return parse_id(id, id + n, run_id) == 0 ? TB_ROUTE_RUN_HTML : TB_ROUTE_NONE;
    }
    return TB_ROUTE_NONE;
}

int tb_serve_parse_run_list(const char *s, int64_t *ids, int *n, char *err) {
    const char *p = s ? s : "";
    if (!*p) {
        tb_seterr(err, "runs: empty (expected ids such as 1,2,3)");
        return -1;
    }
    for (;;) {
        const char *end = strchr(p, ',');
        int64_t id;
        int dup = 0;
        if (!end) end = p + strlen(p);
        if (parse_id(p, end, &id) != 0) {
            tb_seterr(err, "runs: '%.*s' is not a run id (a positive number)", (int)(end - p > 40 ? 40 : end - p), p);
            return -1;
        }
        for (int i = 0; i < *n; i++)
            if (ids[i] == id) dup = 1;
        if (!dup) {
            if (*n >= TB_SERVE_MAX_COMPARE) {
                tb_seterr(err, "runs: at most %d runs in one comparison", TB_SERVE_MAX_COMPARE);
                return -1;
            }
            ids[(*n)++] = id;
        }
        if (!*end) return 0;
        p = end + 1;
    }
}

/* ---- output helpers --------------------------------------------------------------- */

#define esc tb_html_escape_file

/* A JSON string of stored text: jansson insists on UTF-8, so when the text
 * is not (a Latin-1 label), its non-ASCII bytes become U+FFFD rather than
 * failing the whole list. */
static json_t *json_text(const char *s) {
    json_t *j;
    char *buf;
    size_t o = 0;
    if (!s) return json_null();
    if ((j = json_string(s))) return j;
    buf = xmalloc(strlen(s) * 3 + 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x80)
            buf[o++] = (char)*p;
        else {
            memcpy(buf + o, "\xef\xbf\xbd", 3);
            o += 3;
        }
    }
    j = json_stringn(buf, o);
    free(buf);
    return j ? j : json_null();
}

/* The URL path with control characters shown as '?', for the log. */
static void log_safe(char *dst, size_t len, const char *s) {
    size_t i = 0;
    for (; s && *s && i + 1 < len; s++)
        dst[i++] = ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s;
    dst[i] = '\0';
}

/* A response under construction: a body in a memory stream. */
typedef struct reply {
    int status;
    const char *ctype;
    char filename[64]; /* Content-Disposition filename, "" for none */
    char nav[256];     /* links inserted after <main> once the body is closed, "" for none */
    char *body;
    size_t len;
    FILE *f;
} reply;

static void reply_open(reply *r, int status, const char *ctype) {
    r->status = status;
    r->ctype = ctype;
    r->filename[0] = '\0';
    r->nav[0] = '\0';
    r->body = NULL;
    r->len = 0;
    r->f = open_memstream(&r->body, &r->len);
    if (!r->f) {
        fprintf(stderr, "tilebench: out of memory (open_memstream)\n");
        abort();
    }
}

/* Discards what was written so far and starts over (an error replacing a
 * half-rendered page). */
static void reply_reset(reply *r, int status, const char *ctype) {
    fclose(r->f);
    free(r->body);
    reply_open(r, status, ctype);
}

#define HTML_TYPE "text/html; charset=utf-8"
#define JSON_TYPE "application/json"
#define CSV_TYPE  "text/csv; charset=utf-8"

static const char page_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;background:#f5f7fa;color:#1f2933}"
    "main{max-width:1200px;margin:0 auto;padding:24px}"
    "h1{font-size:24px;margin:0 0 4px}"
    ".note{font-size:13px;color:#52606d}"
    "table{border-collapse:collapse;background:#fff;border:1px solid #d5dbe3;margin:12px 0;font-size:14px}"
    "th,td{padding:6px 10px;border-bottom:1px solid #e4e7eb;text-align:left;vertical-align:top}"
    "th{background:#eef2f7;font-weight:600}td.t{white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-"
    "nums}"
    ".badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}"
    ".st-complete{background:#e3f9e5;color:#1f6f2b}.st-running{background:#e6f0ff;color:#1d4ed8}"
    ".st-interrupted,.st-aborted{background:#ffe3e3;color:#9b1c1c}.est{background:#fff3c4;color:#8a5a00}"
    "a{color:#1d4ed8}button{font-size:14px;padding:6px 14px}"
    ".err{background:#fff;border:1px solid #f0b4b4;border-left:6px solid #c81e1e;padding:12px 16px;margin:12px 0}";

static void html_start(FILE *f, const char *title) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          f);
    esc(f, title);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n", page_css);
}

static void html_end(FILE *f) {
    fprintf(f, "<p class=\"note\">tilebench %s &middot; read-only</p>\n</main>\n</body>\n</html>\n", TB_VERSION);
}

/* An error as a page (HTML routes) or as {"error": ...} (API routes). */
static void reply_error(reply *r, int json, int status, const char *title, const char *detail) {
    reply_reset(r, status, json ? JSON_TYPE : HTML_TYPE);
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "status", json_integer(status));
        json_object_set_new(o, "error", json_text(title));
        if (detail && *detail) json_object_set_new(o, "detail", json_text(detail));
        (void)json_dumpf(o, r->f, JSON_INDENT(2));
        fputc('\n', r->f);
        json_decref(o);
        return;
    }
    html_start(r->f, title);
    fprintf(r->f, "<h1>%d ", status);
    esc(r->f, title);
    fputs("</h1>\n", r->f);
    if (detail && *detail) {
        fputs("<div class=\"err\">", r->f);
        esc(r->f, detail);
        fputs("</div>\n", r->f);
    }
    fputs("<p><a href=\"/\">all runs</a></p>\n", r->f);
    html_end(r->f);
}

/* ---- database reads -------------------------------------------------------------- */

/* The 503 for a database that cannot be read (missing, locked, not ours). */
static void reply_db_error(reply *r, int json, const char *db_path, const char *err) {
    char detail[TB_ERR_LEN + 512];
    snprintf(detail, sizeof detail,
             "%s. The server keeps running and reads %s again on every request: once `tilebench run --db %s` has "
             "stored a run (or the lock is released), reload.",
             err, db_path, db_path);
    reply_error(r, json, 503, "results database unavailable", detail);
}

static json_t *jreal(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/*
 * The run list, newest first, as a JSON array (caller decrefs). Per run: id,
 * label, status (the effective one: a run whose writer died reads
 * "interrupted"), started_at, finished_at, tile_spec, levels (distinct load
 * levels stored), saturation_tiles, peak_score and peak_ppkw (the best
 * stored phase, as `tilebench runs` shows), estimated_power, and links.
 */
static json_t *run_list_json(const tb_model_run_list *l) {
    json_t *arr = json_array();
    for (size_t i = l->n_runs; i-- > 0;) {
        const tb_model_run_row *w = &l->runs[i];
        json_t *o = json_object(), *links = json_object();
        long long id = (long long)w->id;
        char url[64];
        json_object_set_new(o, "id", json_integer(id));
        json_object_set_new(o, "label", json_text(w->label));
        json_object_set_new(o, "status", json_text(w->status));
        json_object_set_new(o, "started_at", json_text(w->started_at));
        json_object_set_new(o, "finished_at", json_text(w->finished_at));
        json_object_set_new(o, "tile_spec", json_text(w->tile_spec));
        json_object_set_new(o, "levels", json_integer(w->levels));
        json_object_set_new(o, "saturation_tiles",
                            w->saturation_tiles.known ? json_integer((json_int_t)w->saturation_tiles.v) : json_null());
        json_object_set_new(o, "peak_score", jreal(w->peak_score));
        json_object_set_new(o, "peak_ppkw", jreal(w->peak_ppkw));
        json_object_set_new(o, "estimated_power", json_boolean(w->estimated));
        snprintf(url, sizeof url, "/runs/%lld", id);
        json_object_set_new(links, "html", json_string(url));
        snprintf(url, sizeof url, "/api/runs/%lld", id);
        json_object_set_new(links, "json", json_string(url));
        snprintf(url, sizeof url, "/runs/%lld.csv", id);
        json_object_set_new(links, "csv", json_string(url));
        json_object_set_new(o, "links", links);
        json_array_append_new(arr, o);
    }
    return arr;
}

/* ---- pages ---------------------------------------------------------------------------- */

static void put_num(FILE *f, double v, int dec) {
    if (isfinite(v))
        fprintf(f, "%.*f", dec, v);
    else
        fputs("&ndash;", f);
}

/* Stored text escaped, made UTF-8 as in the JSON list (json_text). */
static void esc_text(FILE *f, const char *s) {
    json_t *j = json_text(s);
    esc(f, json_string_value(j));
    json_decref(j);
}

/* One run's row of the index table. */
static void index_row(FILE *f, const tb_model_run_row *o) {
    long long id = (long long)o->id;
    const char *status = o->status ? o->status : "";
    fprintf(f,
            "<tr id=\"run-%lld\"><td><input type=\"checkbox\" name=\"runs\" value=\"%lld\" "
            "aria-label=\"compare run %lld\"></td><td><input type=\"radio\" name=\"baseline\" value=\"%lld\" "
            "aria-label=\"run %lld is the baseline\"></td><td class=\"n\">%lld</td><td class=\"label\">",
            id, id, id, id, id, id);
    esc_text(f, o->label);
    fputs("</td><td><span class=\"badge st-", f);
    esc(f, status);
    fputs("\">", f);
    esc(f, status);
    fputs("</span></td><td class=\"t\">", f);
    esc_text(f, o->started_at);
    fprintf(f, "</td><td class=\"n\">%d", o->levels);
    if (o->tile_spec && *o->tile_spec) {
        fputs(" <span class=\"note\">(", f);
        esc_text(f, o->tile_spec);
        fputs(")</span>", f);
    }
    fputs("</td><td class=\"n\">", f);
    if (o->saturation_tiles.known)
        fprintf(f, "%lld tiles", (long long)o->saturation_tiles.v);
    else if (strcmp(status, TB_RUN_COMPLETE) == 0)
        fputs("<span title=\"no load level passed QoS\">none</span>", f);
    else
        fputs("&ndash;", f);
    fputs("</td><td class=\"n\">", f);
    put_num(f, o->peak_score, 3);
    fputs("</td><td class=\"n\">", f);
    put_num(f, o->peak_ppkw, 2);
    if (o->estimated)
        fputs(" <span class=\"badge est\" title=\"watts from a model, not a power meter\">estimated</span>", f);
    fprintf(f,
            "</td><td><a class=\"report\" href=\"/runs/%lld\">report</a> &middot; <a href=\"/runs/%lld.json\">"
            "JSON</a> &middot; <a href=\"/runs/%lld.csv\">CSV</a></td></tr>\n",
            id, id, id);
}

static void page_index(reply *r, const char *db_path, const tb_model_run_list *runs) {
    FILE *f = r->f;
    html_start(f, "tilebench results");
    fputs("<h1>tilebench results</h1>\n<p class=\"note\">", f);
    esc(f, db_path);
    fprintf(f, " &middot; %zu run%s, newest first &middot; JSON: <a href=\"/api/runs\">/api/runs</a></p>\n",
            runs->n_runs, runs->n_runs == 1 ? "" : "s");
    if (runs->n_runs == 0) {
        fputs("<p>No runs stored yet. <code>tilebench run --db ", f);
        esc(f, db_path);
        fputs("</code> stores one; reload this page while it runs.</p>\n", f);
        html_end(f);
        return;
    }
    fputs("<form method=\"get\" action=\"/compare\">\n<table id=\"runs\">\n<thead><tr><th>compare</th>"
          "<th>baseline</th><th>id</th><th>label</th><th>status</th><th>started (UTC)</th><th>load levels</th>"
          "<th>saturation</th><th>peak score</th><th>peak PPKW</th><th>report</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = runs->n_runs; i-- > 0;)
        index_row(f, &runs->runs[i]); /* newest first */
    fputs("</tbody>\n</table>\n<p><button type=\"submit\">Compare selected runs</button> "
          "<span class=\"note\">Tick two or more runs; the baseline (default: the first ticked) is the one the "
          "others are normalized to at each load level.</span></p>\n</form>\n",
          f);
    html_end(f);
}

/* Inserts r->nav (a line of links) after the page's opening <main>, as the
 * report and comparison renderers write it; the page is served unchanged
 * when that is not found. Only after the memory stream is closed: until
 * then the stream owns the buffer. */
static void insert_nav(reply *r) {
    static const char mark[] = "<main>\n";
    char *at = r->body && r->nav[0] ? strstr(r->body, mark) : NULL;
    const char *nav = r->nav;
    size_t off, n = strlen(nav);
    if (!at) return;
    off = (size_t)(at - r->body) + sizeof mark - 1;
    r->body = xrealloc(r->body, r->len + n + 1);
    memmove(r->body + off + n, r->body + off, r->len - off + 1);
    memcpy(r->body + off, nav, n);
    r->len += n;
}

/* One run in one report format; 404 for an unknown id. */
static void page_report(reply *r, tb_store *s, const char *db_path, int64_t id, tb_report_format fmt, int json_err) {
    char err[TB_ERR_LEN];
    int ex = tb_model_run_exists(s, id, err);
    if (ex < 0) {
        reply_db_error(r, json_err, db_path, err);
        return;
    }
    if (ex == 0) {
        snprintf(err, sizeof err, "run %lld is not in this database", (long long)id);
        reply_error(r, json_err, 404, "no such run", err);
        return;
    }
    if (tb_report_write(s, id, fmt, r->f, err) != 0) {
        reply_db_error(r, json_err, db_path, err);
        return;
    }
    r->ctype = fmt == TB_REPORT_JSON ? JSON_TYPE : fmt == TB_REPORT_CSV ? CSV_TYPE : HTML_TYPE;
    if (fmt == TB_REPORT_CSV) snprintf(r->filename, sizeof r->filename, "tilebench-run-%lld.csv", (long long)id);
    if (fmt == TB_REPORT_HTML)
        snprintf(r->nav, sizeof r->nav,
                 "<p class=\"note\"><a href=\"/\">&larr; all runs</a> &middot; <a href=\"/runs/%lld.json\">JSON</a>"
                 " &middot; <a href=\"/runs/%lld.csv\">CSV</a></p>\n",
                 (long long)id, (long long)id);
}

/* ---- /compare --------------------------------------------------------------------- */

typedef struct compare_args {
    int64_t ids[TB_SERVE_MAX_COMPARE];
    int n;
    int64_t baseline;
    int bad; /* set with err on the first bad parameter */
    char err[TB_ERR_LEN];
} compare_args;

static enum MHD_Result collect_compare_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    compare_args *a = cls;
    (void)kind;
    if (a->bad) return MHD_NO;
    if (strcmp(key, "runs") == 0) {
        if (tb_serve_parse_run_list(value, a->ids, &a->n, a->err) != 0) a->bad = 1;
    } else if (strcmp(key, "baseline") == 0) {
        const char *v = value ? value : "";
        if (a->baseline != 0) {
            tb_seterr(a->err, "baseline: given twice");
            a->bad = 1;
        } else if (parse_id(v, v + strlen(v), &a->baseline) != 0) {
            tb_seterr(a->err, "baseline: '%.40s' is not a run id (a positive number)", v);
            a->bad = 1;
        }
    }
    return a->bad ? MHD_NO : MHD_YES;
}

static void page_compare(reply *r, struct MHD_Connection *c, tb_store *s, const char *db_path) {
    compare_args a;
    char err[TB_ERR_LEN];
    int in = 0;
    memset(&a, 0, sizeof a);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_compare_arg, &a);
    if (!a.bad && a.n == 0) {
        tb_seterr(a.err, "runs: choose at least two runs (for example /compare?runs=1,2&baseline=1)");
        a.bad = 1;
    }
    if (a.bad) {
        reply_error(r, 0, 400, "bad comparison request", a.err);
        return;
    }
    if (a.baseline == 0) a.baseline = a.ids[0];
    for (int i = 0; i < a.n; i++)
        if (a.ids[i] == a.baseline) in = 1;
    if (!in) {
        /* a baseline ticked but not among the runs is compared too, first */
        if (a.n >= TB_SERVE_MAX_COMPARE) {
            snprintf(err, sizeof err, "runs: at most %d runs in one comparison", TB_SERVE_MAX_COMPARE);
            reply_error(r, 0, 400, "bad comparison request", err);
            return;
        }
        memmove(a.ids + 1, a.ids, (size_t)a.n * sizeof a.ids[0]);
        a.ids[0] = a.baseline;
        a.n++;
    }
    if (a.n < 2) {
        reply_error(r, 0, 400, "bad comparison request",
                    "runs: choose at least two runs (for example /compare?runs=1,2&baseline=1)");
        return;
    }
    for (int i = 0; i < a.n; i++) {
        int ex = tb_model_run_exists(s, a.ids[i], err);
        if (ex < 0) {
            reply_db_error(r, 0, db_path, err);
            return;
        }
        if (ex == 0) {
            snprintf(err, sizeof err, "run %lld is not in this database", (long long)a.ids[i]);
            reply_error(r, 0, 404, "no such run", err);
            return;
        }
    }
    if (tb_compare_write(s, a.ids, a.n, a.baseline, TB_COMPARE_HTML, r->f, err) != 0) {
        reply_db_error(r, 0, db_path, err);
        return;
    }
    snprintf(r->nav, sizeof r->nav, "<p class=\"note\"><a href=\"/\">&larr; all runs</a></p>\n");
}

/* ---- the request handler ------------------------------------------------------------ */

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes %HH escapes in place, except %00: a NUL would end the C string
 * libmicrohttpd hands over and silently shorten the path. A '%' not
 * followed by two hex digits stays as it is. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s) {
    char *r = s, *w = s;
    (void)cls;
    (void)c;
    while (*r) {
        int hi = r[0] == '%' ? hexval(r[1]) : -1, lo = hi >= 0 ? hexval(r[2]) : -1;
        if (lo >= 0 && (hi | lo) != 0) {
            *w++ = (char)(hi << 4 | lo);
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return (size_t)(w - s);
}

/* The hostname part of a Host header value is loopback: localhost,
 * 127.0.0.0/8 or [::1]. */
static int host_is_loopback(const char *h) {
    char name[TB_SERVE_HOST_LEN];
    size_t n;
    struct in_addr a4;
    if (h[0] == '[') {
        const char *end = strchr(h, ']');
        if (!end) return 0;
        n = (size_t)(end - h - 1);
        if (n >= sizeof name) return 0;
        memcpy(name, h + 1, n);
        name[n] = '\0';
        return strcmp(name, "::1") == 0 || strcasecmp(name, "0:0:0:0:0:0:0:1") == 0;
    }
    n = strcspn(h, ":");
    if (n >= sizeof name) return 0;
    memcpy(name, h, n);
    name[n] = '\0';
    if (strcasecmp(name, "localhost") == 0) return 1;
    return inet_pton(AF_INET, name, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

static void add_headers(struct MHD_Response *resp, const reply *r) {
    char cd[128];
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->ctype);
    MHD_add_response_header(resp, "Content-Security-Policy", CSP);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (r->filename[0]) {
        snprintf(cd, sizeof cd, "inline; filename=\"%s\"", r->filename);
        MHD_add_response_header(resp, "Content-Disposition", cd);
    }
    if (r->status == 405) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
}

/* Fills r for one GET/HEAD of path. */
static void dispatch(tb_serve *sv, struct MHD_Connection *c, const char *path, reply *r) {
    int64_t id = 0;
    tb_serve_route route = tb_serve_match(path, &id);
    int json = route == TB_ROUTE_API_RUNS || route == TB_ROUTE_API_RUN || route == TB_ROUTE_RUN_JSON;
    char err[TB_ERR_LEN];
    tb_store *s = NULL;
    if (route == TB_ROUTE_NONE) {
        reply_error(r, strncmp(path, "/api/", 5) == 0, 404, "not found",
                    "This server answers /, /runs/ID, /runs/ID.json, /runs/ID.csv, /compare?runs=ID,ID&baseline=ID,"
                    " /api/runs and /api/runs/ID.");
        return;
    }
    if (tb_store_open_readonly(sv->db_path, &s, err) != 0) {
        reply_db_error(r, json, sv->db_path, err);
        return;
    }
    switch (route) {
    case TB_ROUTE_INDEX:
    case TB_ROUTE_API_RUNS: {
        tb_model_run_list *runs = NULL;
        if (tb_model_read_run_list(s, &runs, err) != 0)
            reply_db_error(r, json, sv->db_path, err);
        else if (route == TB_ROUTE_INDEX)
            page_index(r, sv->db_path, runs);
        else {
            json_t *o = json_object();
            r->ctype = JSON_TYPE;
            json_object_set_new(o, "database", json_text(sv->db_path));
            json_object_set_new(o, "runs", run_list_json(runs));
            (void)json_dumpf(o, r->f, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
            fputc('\n', r->f);
            json_decref(o);
        }
        tb_model_run_list_free(runs);
        break;
    }
    case TB_ROUTE_RUN_HTML: page_report(r, s, sv->db_path, id, TB_REPORT_HTML, 0); break;
    case TB_ROUTE_RUN_JSON:
    case TB_ROUTE_API_RUN: page_report(r, s, sv->db_path, id, TB_REPORT_JSON, 1); break;
    case TB_ROUTE_RUN_CSV: page_report(r, s, sv->db_path, id, TB_REPORT_CSV, 0); break;
    case TB_ROUTE_COMPARE: page_compare(r, c, s, sv->db_path); break;
    case TB_ROUTE_NONE: break;
    }
    tb_store_close(s);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
    tb_serve *sv = cls;
    struct MHD_Response *resp;
    enum MHD_Result ret;
    uint64_t t0 = tb_now_us();
    const char *host;
    int api = strncmp(url, "/api/", 5) == 0;
    reply r;
    static int seen; /* *con_cls marker: the headers of this request were seen */
    int readonly_method = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    (void)version;
    (void)upload_data;
    if (!*con_cls) {
        /* A GET or HEAD is answered on the next call, once the request is
         * complete: answering now would make libmicrohttpd close the
         * connection. Any other method gets its 405 at once (and the
         * connection closes, so its body is never read). */
        *con_cls = &seen;
        if (readonly_method) return MHD_YES;
    } else if (*upload_data_size != 0) {
        *upload_data_size = 0; /* a GET with a body: ignored */
        return MHD_YES;
    }
    reply_open(&r, 200, HTML_TYPE);
    if (!readonly_method) {
        reply_error(&r, api, 405, "method not allowed", "This server is read-only: GET and HEAD only.");
    } else if (sv->loopback && (host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)) &&
               !host_is_loopback(host)) {
        reply_error(&r, api, 403, "host not allowed",
                    "This server is bound to loopback and answers only requests addressed to localhost, 127.0.0.1 "
                    "or [::1] (a guard against DNS rebinding).");
    } else {
        dispatch(sv, c, url, &r);
    }
    if (fclose(r.f) != 0) {
        fprintf(stderr, "tilebench: out of memory (response)\n");
        abort();
    }
    insert_nav(&r);
    resp = MHD_create_response_from_buffer(r.len, r.body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(r.body);
        return MHD_NO;
    }
    add_headers(resp, &r);
    ret = MHD_queue_response(c, (unsigned)r.status, resp);
    MHD_destroy_response(resp);
    {
        char path[256];
        log_safe(path, sizeof path, url);
        tb_log(TB_LOG_DEBUG, "serve: %s %s -> %d, %zu bytes, %.1f ms", method, path, r.status, r.len,
               (double)(tb_now_us() - t0) / 1000.0);
    }
    return ret;
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
    char msg[512];
    size_t n;
    (void)cls;
    vsnprintf(msg, sizeof msg, fmt, ap);
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    tb_log(TB_LOG_DEBUG, "serve: libmicrohttpd: %s", msg);
}

/* ---- start and stop ----------------------------------------------------------------- */

static int is_loopback(const struct sockaddr_storage *a) {
    if (a->ss_family == AF_INET) return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
    if (a->ss_family == AF_INET6) return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr);
    return 0;
}

int tb_serve_start(const tb_serve_opts *o, tb_serve **out, char *err) {
    tb_serve *sv;
    int fd;
    *out = NULL;
    sv = xcalloc(1, sizeof *sv);
    fd = tb_listen_bind(o->host, o->port, 64, &sv->addr, err);
    if (fd < 0) {
        free(sv);
        return -1;
    }
    sv->db_path = xstrdup(o->db_path);
    sv->loopback = is_loopback(&sv->addr);
    sv->mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
                               NULL, NULL, on_request, sv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                               MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                               MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
                               (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_END);
    if (!sv->mhd) {
        tb_seterr(err, "serve: libmicrohttpd could not start (run with --verbose for its reason)");
        close(fd);
        free(sv->db_path);
        free(sv);
        return -1;
    }
    *out = sv;
    return 0;
}

int tb_serve_port(const tb_serve *s) { return tb_sockaddr_port(&s->addr); }

void tb_serve_address(const tb_serve *s, char *buf, size_t len) { tb_sockaddr_format(&s->addr, buf, len); }

void tb_serve_stop(tb_serve *s) {
    if (!s) return;
    MHD_stop_daemon(s->mhd); /* closes the listening socket; joins the connection threads */
    free(s->db_path);
    free(s);
}
