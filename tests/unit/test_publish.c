/*
 * test_publish.c: unit tests of publish/: the CSV writer of a bundle's
 * data files (RFC 4180 quoting, NULL against an empty text, %.17g reals that
 * read back to the same double, BLOB columns left out, rows by rowid and
 * only the run's), the runs.uuid migration of older runs, and bundles of
 * stored runs read back with libarchive: the manifest lists exactly the
 * archive's other files with their sizes, and a run that is still running,
 * one whose stored meter URI or tile text holds a password, and an output in
 * a missing folder are refused with no file left behind and no password in
 * the error; a bundle's gzip deflated in pieces by several threads reads
 * back as one member.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>
#include <sqlite3.h>
#include <zlib.h>

#include "common/buf.h"
#include "publish/csv.h"
#include "publish/gzip.h"
#include "publish/publish.h"
#include "results/store.h"
#include "results/store_internal.h"

#define SECRET "Hunter2-pw-42"

/* ---- fixture: a temporary folder per test ----------------------------------- */

typedef struct fix {
    char dir[64];
    char db[128];
    char out[160];
} fix;

static int setup(void **state) {
    fix *f = calloc(1, sizeof *f);
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/tb-publish-XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->db, sizeof f->db, "%s/results.db", f->dir);
    snprintf(f->out, sizeof f->out, "%s/bundle.tar.gz", f->dir);
    *state = f;
    return 0;
}

/* The names in f->dir other than the database's own files, ", "-separated. */
static void other_files(const fix *f, char *out, size_t len) {
    DIR *d = opendir(f->dir);
    struct dirent *e;
    size_t pos = 0;
    out[0] = '\0';
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, "results.db", 10) == 0) continue;
        pos += (size_t)snprintf(out + pos, len - pos, "%s%s", pos ? ", " : "", e->d_name);
        if (pos >= len) break;
    }
    if (d) closedir(d);
}

static int teardown(void **state) {
    fix *f = *state;
    DIR *d = opendir(f->dir);
    struct dirent *e;
    char path[400];
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", f->dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* ---- the CSV writer ------------------------------------------------------------ */

static void expect_text(const char *in, const char *want) {
    tb_buf b;
    tb_buf_init(&b, 0);
    tb_csv_text(&b, in, strlen(in));
    assert_string_equal(tb_buf_str(&b), want);
    tb_buf_free(&b);
}

static void test_csv_quoting(void **state) {
    (void)state;
    expect_text("plain text", "plain text");
    expect_text("a,b", "\"a,b\"");
    expect_text("say \"hi\"", "\"say \"\"hi\"\"\"");
    expect_text("\"", "\"\"\"\"");
    expect_text("two\nlines", "\"two\nlines\"");
    expect_text("cr\r", "\"cr\r\"");
    expect_text("", "\"\""); /* an empty text is quoted: an empty field is NULL */
    expect_text("semi;colon 'quote' tab\t", "semi;colon 'quote' tab\t");
}

static void test_csv_real(void **state) {
    static const double values[] = {0.1, 1.0 / 3, -2.5, 100, 1e-300, 5e-324, DBL_MAX, DBL_MIN, 123456.789012345678, 0};
    tb_buf b;
    (void)state;
    tb_buf_init(&b, 0);
    tb_csv_real(&b, 0.1);
    assert_string_equal(tb_buf_str(&b), "0.10000000000000001"); /* 17 significant digits */
    tb_buf_reset(&b);
    tb_csv_real(&b, 100);
    assert_string_equal(tb_buf_str(&b), "100");
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        double v = values[i], back;
        tb_buf_reset(&b);
        tb_csv_real(&b, v);
        back = strtod(tb_buf_str(&b), NULL);
        assert_memory_equal(&back, &v, sizeof v); /* bit for bit */
    }
    {
        double v = nextafter(1.0, 2.0), back;
        tb_buf_reset(&b);
        tb_csv_real(&b, v);
        back = strtod(tb_buf_str(&b), NULL);
        assert_true(back == v && back != 1.0);
    }
    tb_buf_free(&b);
}

static void test_csv_dump_table(void **state) {
    sqlite3 *db = NULL;
    tb_buf b;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE t (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, name TEXT,"
                                  " watts REAL, hist BLOB, \"limit\" REAL, note TEXT);"
                                  "INSERT INTO t VALUES (5, 1, 'late, but first by rowid? no', 0.1, x'00ff', 5, '');"
                                  "INSERT INTO t VALUES (2, 1, 'say \"hi\"', NULL, NULL, -1.5e-7, 'a\nb');"
                                  "INSERT INTO t VALUES (3, 2, 'other run', 1, NULL, 1, 'x');"
                                  "INSERT INTO t VALUES (9, 1, NULL, 1e300, x'01', NULL, NULL);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    tb_buf_init(&b, 0);
    assert_int_equal(tb_csv_dump_table(db, "t", "run_id = ?1", 1, &b, err), 3);
    assert_string_equal(tb_buf_str(&b), "id,run_id,name,watts,limit,note\n"
                                        "2,1,\"say \"\"hi\"\"\",,-1.4999999999999999e-07,\"a\nb\"\n"
                                        "5,1,\"late, but first by rowid? no\",0.10000000000000001,5,\"\"\n"
                                        "9,1,,1.0000000000000001e+300,,\n");
    /* the same rows over the run's stretch of rowids, run 2's row 3 inside it */
    {
        char *by_index = tb_buf_take(&b, NULL);
        assert_int_equal(tb_csv_dump_table(db, "t", TB_CSV_BY_RUN_STRETCH("t"), 1, &b, err), 3);
        assert_string_equal(tb_buf_str(&b), by_index);
        tb_buf_reset(&b);
        assert_int_equal(tb_csv_dump_table(db, "t", TB_CSV_BY_RUN_STRETCH("t"), 2, &b, err), 1);
        assert_string_equal(tb_buf_str(&b), "id,run_id,name,watts,limit,note\n3,2,other run,1,1,x\n");
        tb_buf_reset(&b);
        assert_int_equal(tb_csv_dump_table(db, "t", TB_CSV_BY_RUN_STRETCH("t"), 7, &b, err), 0);
        free(by_index);
        tb_buf_reset(&b);
    }
    /* no rows: the header alone */
    tb_buf_reset(&b);
    assert_int_equal(tb_csv_dump_table(db, "t", "run_id = ?1", 7, &b, err), 0);
    assert_string_equal(tb_buf_str(&b), "id,run_id,name,watts,limit,note\n");
    /* a missing table is an error naming it */
    tb_buf_reset(&b);
    assert_int_equal(tb_csv_dump_table(db, "nosuch", "1", 1, &b, err), -1);
    assert_non_null(strstr(err, "nosuch"));
    /* past the buffer's cap: an error, not a cut file */
    tb_buf_free(&b);
    tb_buf_init(&b, 40);
    assert_int_equal(tb_csv_dump_table(db, "t", "run_id = ?1", 1, &b, err), -1);
    assert_non_null(strstr(err, "table t"));
    tb_buf_free(&b);
    sqlite3_close(db);
}

/* ---- gzip: one member from several threads ------------------------------------ */

/* data through tb_pub_gzip_write with parts threads, inflated back (gzip
 * framing): the same bytes, one member ending at the file's end. Returns
 * the compressed size. */
static size_t gzip_round_trip(const unsigned char *data, size_t len, int parts) {
    FILE *tf = tmpfile();
    char err[TB_ERR_LEN] = "";
    unsigned char *gz, *back = malloc(len + 1);
    long glen;
    z_stream z;
    assert_non_null(tf);
    assert_int_equal(tb_pub_gzip_write(fileno(tf), data, len, 6, parts, 1700000000, err), 0);
    glen = lseek(fileno(tf), 0, SEEK_END);
    assert_true(glen > 18);
    gz = malloc((size_t)glen);
    assert_int_equal(pread(fileno(tf), gz, (size_t)glen, 0), glen);
    assert_int_equal(gz[4] | gz[5] << 8 | gz[6] << 16 | (unsigned)gz[7] << 24, 1700000000); /* MTIME */
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
    z.next_in = gz;
    z.avail_in = (uInt)glen;
    z.next_out = back;
    z.avail_out = (uInt)len + 1;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END); /* CRC-32 and ISIZE checked by zlib */
    assert_int_equal(z.avail_in, 0);                       /* one member, nothing after it */
    assert_int_equal(z.total_out, len);
    assert_memory_equal(back, data, len);
    inflateEnd(&z);
    free(gz);
    free(back);
    fclose(tf);
    return (size_t)glen;
}

static void test_gzip_in_pieces(void **state) {
    size_t len = (7u << 20) / 2 + 12345, one, four; /* 3.5 MiB: three pieces of at least 1 MiB */
    unsigned char *d = malloc(len);
    uint64_t x = 88172645463325252ULL;
    (void)state;
    for (size_t i = 0; i < len; i++) { /* CSV-like: digits from a small alphabet, repeats to find */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        d[i] = (unsigned char)("0123456789,.\n"[x % 13]);
        if (i >= 4096 && x % 3 == 0) d[i] = d[i - 4096];
    }
    one = gzip_round_trip(d, len, 1);
    four = gzip_round_trip(d, len, 4);
    assert_true(four < one + one / 100); /* the dictionaries keep it about as small */
    gzip_round_trip(d, 100, 4);          /* small: one piece */
    gzip_round_trip(d, 0, 2);            /* empty */
    gzip_round_trip(d, (2u << 20) + 1, 2);
    free(d);
}

/* ---- stored runs --------------------------------------------------------------- */

#define CONFIG_OK "[tile]\nname = standard\n[sut]\nmail_password = ***\n; meter = ptd://admin:***@10.0.0.7:8888\n"

/* Stores a run with one meter of uri and the given tile text; finished
 * unless running. Returns its id. */
static int64_t store_run(const fix *f, const char *uri, const char *config, int running) {
    tb_store *s = NULL;
    tb_run_info ri;
    tb_meter_info m;
    char err[TB_ERR_LEN] = "";
    int64_t id = 0;
    memset(&ri, 0, sizeof ri);
    memset(&m, 0, sizeof m);
    snprintf(m.uri, sizeof m.uri, "%s", uri);
    snprintf(m.model, sizeof m.model, "WT310");
    ri.label = "unit, \"publish\"";
    ri.tile_name = "standard";
    ri.tile_spec = "1";
    ri.config_text = config;
    ri.settings_json = "{\"steady\": \"60s\"}";
    ri.host_json = "{\"hostname\": \"sut-1\", \"cpus\": 8}";
    ri.n_meters = 1;
    ri.meters = &m;
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_int_equal(tb_store_put_idle(s, id, 85.25, NULL, 0, err), 0);
    assert_int_equal(tb_store_event(s, id, "info", "a, \"quoted\"\nevent", err), 0);
    if (!running) assert_int_equal(tb_store_finish_run(s, id, TB_RUN_COMPLETE, -1, err), 0);
    tb_store_close(s);
    return id;
}

/* 1 when u is lower-case 8-4-4-4-12 hex, version 4, variant 10xx. */
static int is_uuid_v4(const char *u) {
    if (!u || strlen(u) != 36) return 0;
    for (int i = 0; i < 36; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? u[i] != '-' : !strchr("0123456789abcdef", u[i])) return 0;
    }
    return u[14] == '4' && strchr("89ab", u[19]) != NULL;
}

/* The archive's entries, read back with libarchive. */
typedef struct entry {
    char name[200];
    char *data;
    size_t len;
    int regular;
} entry;

static size_t read_tgz(const char *path, entry *e, size_t max) {
    struct archive *a = archive_read_new();
    struct archive_entry *ae;
    size_t n = 0;
    archive_read_support_filter_gzip(a);
    archive_read_support_format_tar(a);
    assert_int_equal(archive_read_open_filename(a, path, 10240), ARCHIVE_OK);
    while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
        la_int64_t size = archive_entry_size(ae);
        assert_true(n < max);
        snprintf(e[n].name, sizeof e[n].name, "%s", archive_entry_pathname(ae));
        e[n].regular = archive_entry_filetype(ae) == AE_IFREG;
        e[n].len = (size_t)size;
        e[n].data = calloc(1, e[n].len + 1);
        assert_int_equal(archive_read_data(a, e[n].data, e[n].len), (la_ssize_t)e[n].len);
        n++;
    }
    archive_read_free(a);
    return n;
}

static const entry *find(const entry *e, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(e[i].name, name) == 0) return &e[i];
    return NULL;
}

static void test_bundle_lists_its_files(void **state) {
    fix *f = *state;
    tb_publish_done d;
    entry e[40];
    char err[TB_ERR_LEN] = "", top[80], name[200];
    json_t *m, *files;
    size_t n, i;
    int64_t id = store_run(f, "wt310://10.0.0.5:10001", CONFIG_OK, 0);
    assert_int_equal(tb_publish_bundle(f->db, "latest", f->out, &d, err), 0);
    assert_int_equal(d.run_id, id);
    assert_true(is_uuid_v4(d.uuid));
    n = read_tgz(f->out, e, 40);
    assert_int_equal(n, d.files);
    snprintf(top, sizeof top, "tilebench-run-%s/", d.uuid);
    snprintf(name, sizeof name, "%smanifest.json", top);
    assert_string_equal(e[0].name, name); /* first, for a streaming reader */
    m = json_loads(e[0].data, 0, NULL);
    assert_non_null(m);
    assert_string_equal(json_string_value(json_object_get(m, "format")), "tilebench-bundle");
    assert_int_equal(json_integer_value(json_object_get(m, "format_version")), 1);
    assert_string_equal(json_string_value(json_object_get(m, "run_uuid")), d.uuid);
    assert_int_equal(json_integer_value(json_object_get(m, "run_id")), id);
    assert_string_equal(json_string_value(json_object_get(m, "status")), "complete");
    assert_string_equal(json_string_value(json_object_get(m, "label")), "unit, \"publish\"");
    assert_string_equal(json_string_value(json_object_get(json_object_get(m, "host"), "hostname")), "sut-1");
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(m, "meters"), 0), "uri")),
                        "wt310://10.0.0.5:10001");
    files = json_object_get(m, "files");
    /* every entry but the manifest is listed once, in path order, with its size */
    assert_int_equal(json_array_size(files), n - 1);
    for (i = 0; i < json_array_size(files); i++) {
        json_t *o = json_array_get(files, i);
        const char *p = json_string_value(json_object_get(o, "path"));
        const entry *x;
        snprintf(name, sizeof name, "%s%s", top, p);
        x = find(e, n, name);
        assert_non_null(x);
        assert_true(x->regular);
        assert_int_equal(json_integer_value(json_object_get(o, "bytes")), x->len);
        assert_int_equal(strlen(json_string_value(json_object_get(o, "sha256"))), 64);
        if (i) assert_true(strcmp(json_string_value(json_object_get(json_array_get(files, i - 1), "path")), p) < 0);
    }
    for (i = 0; i < n; i++)
        assert_memory_equal(e[i].name, top, strlen(top));
    /* tiles.ini is the stored text; the runs row is there once, under its header */
    snprintf(name, sizeof name, "%stiles.ini", top);
    assert_string_equal(find(e, n, name)->data, CONFIG_OK);
    snprintf(name, sizeof name, "%sdata/runs.csv", top);
    assert_non_null(strstr(find(e, n, name)->data, d.uuid));
    assert_memory_equal(find(e, n, name)->data, "id,label,status,", 16);
    snprintf(name, sizeof name, "%sdata/events.csv", top);
    assert_non_null(strstr(find(e, n, name)->data, ",info,\"a, \"\"quoted\"\"\nevent\"\n"));
    snprintf(name, sizeof name, "%sdata/calibrations.csv", top);
    assert_string_equal(find(e, n, name)->data, "id,tile_name,def_hash,workload,reference,unit,run_id,created_at\n");
    json_decref(m);
    for (i = 0; i < n; i++)
        free(e[i].data);
}

/* publish fails with err holding want, without the secret, leaving no file in
 * the folder (not even a temporary one). */
static void expect_refused(const fix *f, const char *which, const char *out, const char *want) {
    tb_publish_done d;
    char err[TB_ERR_LEN] = "", left[400];
    assert_int_equal(tb_publish_bundle(f->db, which, out, &d, err), -1);
    if (!strstr(err, want)) fail_msg("error '%s' lacks '%s'", err, want);
    assert_null(strstr(err, SECRET));
    other_files(f, left, sizeof left);
    assert_string_equal(left, "");
}

static void test_refuses_a_running_run(void **state) {
    fix *f = *state;
    store_run(f, "wt310://10.0.0.5:10001", CONFIG_OK, 1); /* its writer, this process, is alive */
    expect_refused(f, "1", f->out, "run 1 (");
    expect_refused(f, "1", f->out, "still running");
}

static void test_refuses_stored_secrets(void **state) {
    fix *f = *state;
    store_run(f, "ipmi://admin:" SECRET "@10.0.0.9?method=dcmi", CONFIG_OK, 0);
    expect_refused(f, "1", f->out, "run 1: its stored meter 0's URI holds a password");
    store_run(f, "wt310://10.0.0.5:10001", "[sut]\npg = host=127.0.0.1 password=" SECRET "\n", 0);
    expect_refused(f, "2", f->out, "run 2: its stored tile file text holds a password");
    expect_refused(f, "2", NULL, "run 2"); /* with the default name in the current folder too */
}

static void test_bad_run_db_and_output(void **state) {
    fix *f = *state;
    char out[200], missing[200];
    store_run(f, "wt310://10.0.0.5:10001", CONFIG_OK, 0);
    expect_refused(f, "7", f->out, "run 7 not found in");
    expect_refused(f, "seven", f->out, "run 'seven': not a run id");
    snprintf(missing, sizeof missing, "%s/none.db", f->dir);
    {
        tb_publish_done d;
        char err[TB_ERR_LEN] = "";
        assert_int_equal(tb_publish_bundle(missing, "1", f->out, &d, err), -1);
        assert_non_null(strstr(err, "none.db' not found"));
    }
    snprintf(out, sizeof out, "%s/no/such/folder/b.tar.gz", f->dir);
    expect_refused(f, "1", out, "no/such/folder/b.tar.gz: No such file or directory");
    expect_refused(f, "1", out, "publish run 1 (");
    expect_refused(f, "1", f->dir, "is a directory");
}

/* The calibrations a run normalized against are the ones its settings name
 * ("calibration run N (AT): ..." under reference_source, as the coordinator
 * writes them): not a later one, nor one of another workload or tile. */
static void test_bundle_has_the_calibrations_used(void **state) {
    fix *f = *state;
    tb_store *s = NULL;
    tb_run_info ri;
    tb_publish_done d;
    entry e[40];
    char err[TB_ERR_LEN] = "", at[32], settings[256], name[200];
    double ref;
    int64_t cal = 0, id = 0, from = 0;
    size_t n;
    memset(&ri, 0, sizeof ri);
    ri.tile_name = "standard";
    ri.config_text = CONFIG_OK;
    ri.settings_json = "{}";
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(tb_store_begin_run(s, &ri, &cal, err), 0);
    assert_int_equal(tb_store_put_calibration(s, cal, "standard", "h1", "kv", 51.25, "ops/s", err), 0);
    assert_int_equal(tb_store_put_calibration(s, cal, "standard", "h1", "oltp", 700, "OPM", err), 0);
    assert_int_equal(tb_store_put_calibration(s, cal, "other", "h2", "kv", 9, "ops/s", err), 0);
    assert_int_equal(tb_store_finish_run(s, cal, TB_RUN_COMPLETE, -1, err), 0);
    assert_int_equal(tb_store_get_calibration(s, "standard", "h1", "kv", &ref, &from, at, err), 0);
    snprintf(settings, sizeof settings,
             "{\"reference_source\": {\"kv\": \"calibration run %lld (%s): 51.25 ops/s\","
             " \"web\": \"tile file: 20 ops/s\"}}",
             (long long)cal, at);
    ri.settings_json = settings;
    assert_int_equal(tb_store_begin_run(s, &ri, &id, err), 0);
    assert_int_equal(tb_store_finish_run(s, id, TB_RUN_COMPLETE, -1, err), 0);
    /* a later calibration of the same workload is not the one this run used */
    assert_int_equal(tb_store_put_calibration(s, id, "standard", "h1", "kv", 60, "ops/s", err), 0);
    tb_store_close(s);
    assert_int_equal(tb_publish_bundle(f->db, "2", f->out, &d, err), 0);
    n = read_tgz(f->out, e, 40);
    snprintf(name, sizeof name, "tilebench-run-%s/data/calibrations.csv", d.uuid);
    snprintf(settings, sizeof settings,
             "id,tile_name,def_hash,workload,reference,unit,run_id,created_at\n1,standard,h1,kv,51.25,ops/s,%lld,%s\n",
             (long long)cal, at);
    assert_non_null(find(e, n, name));
    assert_string_equal(find(e, n, name)->data, settings);
    for (size_t i = 0; i < n; i++)
        free(e[i].data);
}

/* A database of schema 10 with two runs gets a distinct version 4 UUID for
 * each when a writer opens it. */
static void test_migration_gives_old_runs_a_uuid(void **state) {
    fix *f = *state;
    sqlite3 *raw = NULL;
    sqlite3_stmt *st = NULL;
    tb_store *s = NULL;
    char err[TB_ERR_LEN] = "", first[40] = "";
    int n = 0;
    assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
    for (int v = 0; v < 10; v++)
        assert_int_equal(sqlite3_exec(raw, tb_store_migrations[v], NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw,
                                  "PRAGMA user_version = 10;"
                                  "INSERT INTO runs (status, started_at, tilebench_version) VALUES"
                                  " ('complete', '2026-01-01T00:00:00Z', '0.0.9'),"
                                  " ('aborted', '2026-01-02T00:00:00Z', '0.0.9');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(tb_store_open(f->db, &s, err), 0);
    assert_int_equal(
        sqlite3_prepare_v2(tb_store_db(s), "SELECT uuid, source_revision FROM runs ORDER BY id", -1, &st, NULL),
        SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *u = (const char *)sqlite3_column_text(st, 0);
        assert_true(is_uuid_v4(u));
        assert_int_equal(sqlite3_column_type(st, 1), SQLITE_NULL); /* not known for older runs */
        if (n++ == 0)
            snprintf(first, sizeof first, "%s", u);
        else
            assert_string_not_equal(first, u);
    }
    assert_int_equal(n, 2);
    sqlite3_finalize(st);
    tb_store_close(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_quoting),
        cmocka_unit_test(test_csv_real),
        cmocka_unit_test(test_csv_dump_table),
        cmocka_unit_test(test_gzip_in_pieces),
        cmocka_unit_test_setup_teardown(test_bundle_lists_its_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bundle_has_the_calibrations_used, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_a_running_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_stored_secrets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_run_db_and_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migration_gives_old_runs_a_uuid, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
