/*
 * bundle.c: `tilebench publish RUN`: one stored run as a result bundle
 * (docs/bundle.md). The reports come from results/' own entry point
 * (tb_report_write), byte for byte what `tilebench report` prints; the rows
 * come from a plain read-only SQLite connection of this folder, dumped by
 * csv.c; manifest.json lists every other file with its SHA-256 and size.
 * Everything is built in memory first, so the tar.gz is written in one go
 * (archive.c) and nothing is left behind when a step fails.
 */
#include "publish/publish.h"
#include "publish/archive.h"
#include "publish/csv.h"
#include "publish/pub_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "common/redact.h"
#include "results/report.h"
#include "tiles/ini_text.h"

/* Copies of the CSV files may be large (a day of 1 Hz samples of several
 * meters is tens of MiB): the data files' cap. */
#define DATA_MAX ((size_t)1 << 30)

/* The run's rows of each table (bundle-format: data/TABLE.csv). */
#define BY_LEVEL "level_id IN (SELECT id FROM levels WHERE run_id = ?1)"
static const struct {
    const char *table, *where;
} tables[] = {
    {"runs", "id = ?1"},
    {"meters", "run_id = ?1"},
    {"hosts", "run_id = ?1"},
    {"levels", "run_id = ?1"},
    {"level_hosts", BY_LEVEL},
    {"level_agents", BY_LEVEL},
    {"workloads", BY_LEVEL},
    {"ops", "workload_id IN (SELECT w.id FROM workloads w JOIN levels l ON l.id = w.level_id WHERE l.run_id = ?1)"},
    {"qos", BY_LEVEL},
    {"infra", BY_LEVEL},
    {"power_samples", TB_CSV_BY_RUN_STRETCH("power_samples")},
    {"telemetry_samples", TB_CSV_BY_RUN_STRETCH("telemetry_samples")},
    {"channel_samples", "run_id = ?1"}, /* a meter read as several channels: each one's reading */
    {"level_ranges", "run_id = ?1"},    /* the ranging pass's peaks and fixed ranges */
    {"inlet_temperatures", "run_id = ?1"},
    {"temperature_samples", TB_CSV_BY_RUN_STRETCH("temperature_samples")}, /* the readings behind them */
    {"events", "run_id = ?1"},
    /* the calibrations the run normalized against: the coordinator names
     * each in settings_json.reference_source as "calibration run N (AT): ..."
     * (coordinator.c load_references, infra_run.c) */
    {"calibrations", "rowid IN (SELECT c.rowid FROM runs r"
                     " JOIN json_each(CASE WHEN json_valid(r.settings_json) THEN r.settings_json ELSE '{}' END,"
                     " '$.reference_source') j"
                     " JOIN calibrations c ON c.tile_name = r.tile_name AND c.workload = j.key"
                     " WHERE r.id = ?1 AND j.type = 'text' AND substr(j.value, 1,"
                     " length('calibration run ' || c.run_id || ' (' || c.created_at || '):')) ="
                     " 'calibration run ' || c.run_id || ' (' || c.created_at || '):')"},
};
#define N_TABLES (sizeof tables / sizeof tables[0])

/* The reports, by the name `report --format` knows them by. */
static const struct {
    const char *path, *format;
} reports[] = {
    {"report.json", "json"},
    {"report.csv", "csv"},
    {"report.html", "html"},
    {"histograms.hlog", "hlog"}, /* HdrHistogram's interval log (results/report_hlog.c) */
};
#define N_REPORTS (sizeof reports / sizeof reports[0])

/* tiles.ini, the reports, the tables; manifest.json is not among them */
#define MAX_FILES (1 + N_REPORTS + N_TABLES)

/* ---- the two handles -------------------------------------------------------- */

int tb_pub_open(tb_pub *p, const char *db_path, char *err) {
    int writable, rc;
    memset(p, 0, sizeof *p);
    p->db_path = db_path;
    if (tb_store_open_readonly(db_path, &p->s, err) != 0) return -1;
    /* as the store's reader does: a writable file gets a read-write handle
     * that refuses to write, so its -wal and -shm files go when it closes */
    writable = access(db_path, W_OK) == 0;
    /* one thread at a time uses it (the reports' thread has the store's
     * connection): no mutex around each of a million sqlite3_column calls */
    if (tb_store_immutable_uri(p->s)) /* a WAL file that cannot be written nor get its -shm: as the store reads it */
        rc = sqlite3_open_v2(tb_store_immutable_uri(p->s), &p->db,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
    else
        rc = sqlite3_open_v2(db_path, &p->db,
                             (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK || sqlite3_exec(p->db, "PRAGMA query_only = ON", NULL, NULL, NULL) != SQLITE_OK) {
        tb_seterr(err, "open %s: %s", db_path, p->db ? sqlite3_errmsg(p->db) : "out of memory");
        tb_pub_close(p);
        return -1;
    }
    sqlite3_busy_timeout(p->db, 5000);
    return 0;
}

void tb_pub_close(tb_pub *p) {
    if (p->db) sqlite3_close(p->db);
    tb_store_close(p->s);
    p->db = NULL;
    p->s = NULL;
}

/* The text of column i, NULL for SQL NULL. */
static const char *col_text(sqlite3_stmt *st, int i) { return (const char *)sqlite3_column_text(st, i); }

/* 8-4-4-4-12 lower-case hex, as the store writes it: the UUID names files
 * and links, so anything else in the database (a crafted "../x" or a quote)
 * is refused, never used. */
static int uuid_ok(const char *u) {
    if (strlen(u) != 36) return 0;
    for (int i = 0; i < 36; i++)
        if (i == 8 || i == 13 || i == 18 || i == 23 ? u[i] != '-' : !strchr("0123456789abcdef", u[i])) return 0;
    return 1;
}

int tb_pub_run_ident(tb_pub *p, int64_t run_id, char *uuid, char *status, char *err) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(p->db, "SELECT uuid, status, writer_pid, writer_start FROM runs WHERE id = ?1", -1, &st,
                                NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        rc = sqlite3_step(st);
    }
    if (rc != SQLITE_ROW || !col_text(st, 0) || !col_text(st, 1)) {
        if (rc == SQLITE_ROW)
            tb_seterr(err, "run %lld in %s has no UUID", (long long)run_id, p->db_path);
        else if (rc == SQLITE_DONE)
            tb_seterr(err, "run %lld not found in %s", (long long)run_id, p->db_path);
        else
            tb_seterr(err, "read run %lld from %s: %s", (long long)run_id, p->db_path, sqlite3_errmsg(p->db));
        sqlite3_finalize(st);
        return -1;
    }
    if (!uuid_ok(col_text(st, 0))) {
        tb_seterr(err, "run %lld in %s: its UUID is not 8-4-4-4-12 lower-case hex; not published", (long long)run_id,
                  p->db_path);
        sqlite3_finalize(st);
        return -1;
    }
    snprintf(uuid, 40, "%s", col_text(st, 0));
    snprintf(status, 16, "%s",
             tb_store_effective_status(col_text(st, 1), sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)));
    sqlite3_finalize(st);
    return 0;
}

/* ---- secrets ------------------------------------------------------------------ */

/* 1 when tb_redact_uri would change uri: it still holds a secret. */
static int uri_has_secret(const char *uri) {
    char shown[2048];
    if (!uri) return 0;
    tb_redact_uri(uri, shown, sizeof shown);
    return strcmp(shown, uri) != 0;
}

/*
 * The store keeps meter URIs, host telemetry URLs and the tile file's text
 * redacted; the reports quote them as stored. A database that holds a
 * secret there anyway (written by another program, or edited) is not
 * published at all rather than half redacted: 0, or -1 with err naming the
 * place, never the secret.
 */
static int check_secrets(tb_pub *p, int64_t run_id, char *err) {
    static const char *const sql[] = {
        "SELECT 'meter ' || idx || '''s URI', uri FROM meters WHERE run_id = ?1",
        "SELECT 'host ' || name || '''s telemetry URL', telemetry FROM hosts WHERE run_id = ?1",
        "SELECT 'tile file text', config_text FROM runs WHERE id = ?1",
    };
    for (size_t q = 0; q < sizeof sql / sizeof sql[0]; q++) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(p->db, sql[q], -1, &st, NULL), bad = 0;
        if (rc == SQLITE_OK) sqlite3_bind_int64(st, 1, run_id);
        while (!bad && rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *v = col_text(st, 1);
            if (q < 2) {
                bad = uri_has_secret(v);
            } else if (v) {
                size_t n = (size_t)sqlite3_column_bytes(st, 1), rn = 0;
                char *red = tb_ini_redact(v, n, &rn);
                bad = rn != n || memcmp(red, v, n) != 0;
                free(red);
            }
            if (bad)
                tb_seterr(err,
                          "run %lld: its stored %s holds a password or token that should have been redacted; "
                          "not publishing it",
                          (long long)run_id, col_text(st, 0));
            rc = SQLITE_OK;
        }
        if (!bad && rc != SQLITE_DONE && rc != SQLITE_OK)
            tb_seterr(err, "read run %lld from %s: %s", (long long)run_id, p->db_path, sqlite3_errmsg(p->db));
        sqlite3_finalize(st);
        if (bad || (rc != SQLITE_DONE && rc != SQLITE_OK)) return -1;
    }
    return 0;
}

/* ---- the files ------------------------------------------------------------------ */

typedef struct bundle {
    tb_pub_file files[MAX_FILES + 1]; /* and manifest.json, last */
    size_t n;
} bundle;

static tb_pub_file *add_file(bundle *b, const char *path) {
    tb_pub_file *f;
    TB_ASSERT(b->n < MAX_FILES + 1);
    f = &b->files[b->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    return f;
}

static void bundle_free(bundle *b) {
    for (size_t i = 0; i < b->n; i++)
        free(b->files[i].data);
    b->n = 0;
}

/* The reports (files[0..N_REPORTS-1], named already), each what `tilebench
 * report RUN --format FMT` writes, from one read of the run. */
static int write_reports(tb_pub *p, int64_t run_id, tb_pub_file *files, char *err) {
    tb_report_format fmts[N_REPORTS];
    FILE *m[N_REPORTS] = {NULL};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < N_REPORTS; i++)
        rc = tb_report_parse_format(reports[i].format, &fmts[i], err);
    for (size_t i = 0; rc == 0 && i < N_REPORTS; i++) {
        if (!(m[i] = open_memstream(&files[i].data, &files[i].len))) {
            tb_seterr(err, "%s: %s", files[i].path, strerror(errno));
            rc = -1;
        }
    }
    if (rc == 0) rc = tb_report_write_set(p->s, run_id, fmts, m, N_REPORTS, err);
    for (size_t i = 0; i < N_REPORTS; i++) {
        if (m[i] && fclose(m[i]) != 0 && rc == 0) {
            tb_seterr(err, "%s: %s", files[i].path, strerror(errno));
            rc = -1;
        }
    }
    return rc;
}

/* The reports, written by a thread of their own through the store's
 * connection while this one dumps the tables through the plain one: the
 * two take about as long, and a machine has two cores or more. */
typedef struct report_job {
    tb_pub *p;
    int64_t run_id;
    tb_pub_file *files;
    int rc;
    char err[TB_ERR_LEN];
} report_job;

static void *report_thread(void *arg) {
    report_job *j = arg;
    j->rc = write_reports(j->p, j->run_id, j->files, j->err);
    return NULL;
}

/* tiles.ini: the stored tile file text (empty when none was stored). */
static int add_tile_file(bundle *b, tb_pub *p, int64_t run_id, char *err) {
    sqlite3_stmt *st = NULL;
    tb_pub_file *f = add_file(b, "tiles.ini");
    int rc = sqlite3_prepare_v2(p->db, "SELECT config_text FROM runs WHERE id = ?1", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        rc = sqlite3_step(st);
    }
    if (rc != SQLITE_ROW) {
        tb_seterr(err, "tiles.ini: %s", sqlite3_errmsg(p->db));
        sqlite3_finalize(st);
        return -1;
    }
    {
        const void *text = sqlite3_column_blob(st, 0); /* its bytes, then their number */
        f->len = (size_t)sqlite3_column_bytes(st, 0);
        f->data = xmalloc(f->len + 1);
        if (f->len) memcpy(f->data, text, f->len);
    }
    sqlite3_finalize(st);
    return 0;
}

static int add_tables(bundle *b, tb_pub *p, int64_t run_id, char *err) {
    for (size_t i = 0; i < N_TABLES; i++) {
        char path[64];
        tb_buf csv;
        tb_pub_file *f;
        snprintf(path, sizeof path, "data/%s.csv", tables[i].table);
        tb_buf_init(&csv, DATA_MAX);
        if (tb_csv_dump_table(p->db, tables[i].table, tables[i].where, run_id, &csv, err) < 0) {
            tb_buf_free(&csv);
            return -1;
        }
        f = add_file(b, path);
        f->data = tb_buf_take(&csv, &f->len);
    }
    return 0;
}

static int by_path(const void *a, const void *b) {
    return strcmp(((const tb_pub_file *)a)->path, ((const tb_pub_file *)b)->path);
}

/* ---- the manifest ---------------------------------------------------------------- */

/* A JSON string of stored text; NULL is null, and bytes that are not UTF-8
 * become '?' (jansson refuses them). */
static json_t *jstr(const char *s) {
    json_t *j;
    char *c;
    if (!s) return json_null();
    if ((j = json_string(s)) != NULL) return j;
    c = xstrdup(s);
    for (char *q = c; *q; q++)
        if ((unsigned char)*q >= 0x80) *q = '?';
    j = json_string(c);
    free(c);
    return j ? j : json_null();
}

static json_t *col_json(sqlite3_stmt *st, int i) { return jstr(col_text(st, i)); }

/* Sets the run's members of the manifest, in the documented order up to
 * "host". 0, or -1 with err. */
static int manifest_run(json_t *m, tb_pub *p, int64_t run_id, const char *status, char *err) {
    sqlite3_stmt *st = NULL;
    char at[32];
    int rc = sqlite3_prepare_v2(p->db,
                                "SELECT uuid, label, started_at, finished_at, tile_name, tile_spec, host_json"
                                " FROM runs WHERE id = ?1",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        rc = sqlite3_step(st);
    }
    if (rc != SQLITE_ROW) {
        tb_seterr(err, "manifest.json: %s", sqlite3_errmsg(p->db));
        sqlite3_finalize(st);
        return -1;
    }
    tb_format_wall(tb_wall_us(), at, sizeof at);
    json_object_set_new(m, "format", json_string("tilebench-bundle"));
    json_object_set_new(m, "format_version", json_integer(1));
    /* the tilebench that wrote this bundle and its reports; data/runs.csv
     * has the one that measured the run */
    json_object_set_new(m, "tilebench_version", json_string(TB_VERSION));
    json_object_set_new(m, "source_revision", json_string(TB_SOURCE_REVISION));
    json_object_set_new(m, "run_uuid", col_json(st, 0));
    json_object_set_new(m, "run_id", json_integer((json_int_t)run_id));
    json_object_set_new(m, "label", col_json(st, 1));
    json_object_set_new(m, "status", json_string(status));
    json_object_set_new(m, "started_at", col_json(st, 2));
    json_object_set_new(m, "finished_at", col_json(st, 3));
    json_object_set_new(m, "published_at", json_string(at));
    json_object_set_new(m, "tile_file", json_string("tiles.ini"));
    json_object_set_new(m, "tile_name", col_json(st, 4));
    json_object_set_new(m, "tile_spec", col_json(st, 5));
    {
        const char *h = col_text(st, 6);
        json_t *host = h ? json_loads(h, 0, NULL) : NULL;
        json_object_set_new(m, "host", host ? host : json_null());
    }
    sqlite3_finalize(st);
    return 0;
}

static int manifest_meters(json_t *m, tb_pub *p, int64_t run_id, char *err) {
    sqlite3_stmt *st = NULL;
    json_t *arr = json_array();
    int rc = sqlite3_prepare_v2(p->db,
                                "SELECT idx, uri, model, idn, serial, firmware, driver, host, estimated"
                                " FROM meters WHERE run_id = ?1 ORDER BY idx",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) sqlite3_bind_int64(st, 1, run_id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_object();
        char uri[1024];
        tb_redact_uri(col_text(st, 1) ? col_text(st, 1) : "", uri, sizeof uri);
        json_object_set_new(o, "idx", json_integer(sqlite3_column_int64(st, 0)));
        json_object_set_new(o, "uri", jstr(uri));
        json_object_set_new(o, "model", col_json(st, 2));
        json_object_set_new(o, "idn", col_json(st, 3));
        json_object_set_new(o, "serial", col_json(st, 4));
        json_object_set_new(o, "firmware", col_json(st, 5));
        json_object_set_new(o, "driver", col_json(st, 6));
        json_object_set_new(o, "host", col_json(st, 7));
        json_object_set_new(o, "estimated", json_boolean(sqlite3_column_int(st, 8) != 0));
        json_array_append_new(arr, o);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        tb_seterr(err, "manifest.json: meters: %s", sqlite3_errmsg(p->db));
        json_decref(arr);
        return -1;
    }
    json_object_set_new(m, "meters", arr);
    return 0;
}

/* manifest.json from the other files (sorted and hashed), appended last. */
static int add_manifest(bundle *b, tb_pub *p, int64_t run_id, const char *status, char *err) {
    json_t *m = json_object(), *files = json_array();
    tb_pub_file *f;
    char *text;
    if (manifest_run(m, p, run_id, status, err) != 0 || manifest_meters(m, p, run_id, err) != 0) {
        json_decref(m);
        json_decref(files);
        return -1;
    }
    for (size_t i = 0; i < b->n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "path", json_string(b->files[i].path));
        json_object_set_new(o, "sha256", json_string(b->files[i].sha256));
        json_object_set_new(o, "bytes", json_integer((json_int_t)b->files[i].len));
        json_array_append_new(files, o);
    }
    json_object_set_new(m, "files", files);
    text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(m);
    if (!text) {
        tb_seterr(err, "manifest.json: jansson cannot write it");
        return -1;
    }
    f = add_file(b, "manifest.json");
    f->len = strlen(text) + 1;
    f->data = xmalloc(f->len + 1);
    snprintf(f->data, f->len + 1, "%s\n", text);
    free(text);
    return 0;
}

/* ---- the bundle ------------------------------------------------------------------- */

/* Every file but the manifest, sorted by path and hashed, then the manifest
 * last. 0, or -1 with err naming the file. */
static int build(bundle *b, tb_pub *p, int64_t run_id, const char *status, char *err) {
    report_job job = {p, run_id, NULL, 0, ""};
    pthread_t th;
    int rc = add_tile_file(b, p, run_id, err), threaded;
    if (rc != 0) return -1;
    job.files = add_file(b, reports[0].path); /* the reports' slots, filled by the thread */
    for (size_t i = 1; i < N_REPORTS; i++)
        add_file(b, reports[i].path);
    threaded = pthread_create(&th, NULL, report_thread, &job) == 0;
    if (!threaded) report_thread(&job); /* no thread to be had: one after the other */
    rc = add_tables(b, p, run_id, err);
    if (threaded) pthread_join(th, NULL);
    if (rc == 0 && job.rc != 0) {
        tb_seterr(err, "%s", job.err);
        rc = -1;
    }
    if (rc != 0) return -1;
    qsort(b->files, b->n, sizeof b->files[0], by_path);
    for (size_t i = 0; i < b->n; i++)
        if (tb_pub_hash(&b->files[i], err) != 0) return -1;
    return add_manifest(b, p, run_id, status, err);
}

int tb_pub_bundle_to(tb_pub *p, int64_t run_id, const char *path, tb_publish_done *done, char *err) {
    bundle *b;
    char uuid[40], status[16], top[64], e[TB_ERR_LEN] = "";
    tb_pub_file *order;
    int rc = 0;
    if (tb_pub_run_ident(p, run_id, uuid, status, err) != 0) return -1;
    if (strcmp(status, TB_RUN_RUNNING) == 0) {
        tb_seterr(err, "run %lld (%s) is still running; publish it once it has finished", (long long)run_id, uuid);
        return -1;
    }
    if (check_secrets(p, run_id, err) != 0) return -1;
    b = xcalloc(1, sizeof *b);
    /* the rows, read in one snapshot of the plain connection */
    if (sqlite3_exec(p->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        tb_seterr(e, "%s", sqlite3_errmsg(p->db));
        rc = -1;
    }
    if (rc == 0) rc = build(b, p, run_id, status, e);
    sqlite3_exec(p->db, "COMMIT", NULL, NULL, NULL);
    if (rc == 0) {
        /* manifest.json first in the archive, so a streaming reader meets the list before the files */
        order = xmalloc(b->n * sizeof *order);
        order[0] = b->files[b->n - 1];
        memcpy(order + 1, b->files, (b->n - 1) * sizeof *order);
        snprintf(top, sizeof top, "tilebench-run-%s", uuid);
        rc = tb_pub_write_tgz(path, top, order, b->n, tb_wall_us() / 1000000, e);
        free(order);
    }
    if (rc != 0) {
        tb_seterr(err, "publish run %lld (%s) to %s: %s", (long long)run_id, uuid, path, e);
    } else if (done) {
        memset(done, 0, sizeof *done);
        snprintf(done->path, sizeof done->path, "%s", path);
        snprintf(done->uuid, sizeof done->uuid, "%s", uuid);
        done->run_id = run_id;
        done->files = b->n;
        for (size_t i = 0; i < b->n; i++)
            done->bytes += b->files[i].len;
    }
    bundle_free(b);
    free(b);
    return rc;
}

int tb_publish_bundle(const char *db, const char *which, const char *out, tb_publish_done *done, char *err) {
    tb_pub p;
    int64_t run_id = 0;
    char uuid[40], status[16], path[4096];
    int rc;
    if (tb_pub_open(&p, db, err) != 0) return -1;
    rc = tb_store_resolve_run(p.s, which, &run_id, err);
    if (rc == 0 && !out) {
        rc = tb_pub_run_ident(&p, run_id, uuid, status, err);
        if (rc == 0 && tb_fmt_capped(path, sizeof path, "tilebench-run-%s.tar.gz", uuid) != 0) rc = -1;
        out = path;
    }
    if (rc == 0) rc = tb_pub_bundle_to(&p, run_id, out, done, err);
    tb_pub_close(&p);
    return rc;
}
