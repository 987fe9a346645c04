/*
 * describe.c: check 1's second part: what manifest.json says of the run
 * (docs/bundle.md) against the data it describes: the run's UUID (and the
 * bundle's folder, named after it), id, label, times, tile name and spec
 * and host against data/runs.csv; its status against runs.csv and
 * report.json; each meter (identity, URI without password, whether it is an
 * estimate) against data/meters.csv; the tile file it names against
 * runs.config_text; and the version of tilebench that measured the run in
 * runs.csv against the one report.json and report.html state. The
 * manifest's own tilebench_version (the tilebench that published) has no
 * counterpart in the data and is only required to be there.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common/redact.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"

typedef struct dctx {
    tb_vresult *r;
    size_t agree;
} dctx;

/* Member key of m, text or null, against a cell (NULL: SQL NULL); a
 * mismatch is a FAIL line "manifest LABEL". */
static void same_text_of(dctx *c, const char *label, const char *who, const json_t *m, const char *key,
                         const char *cell, const char *source) {
    const json_t *v = json_object_get(m, key);
    const char *mv = json_string_value(v);
    char name[96];
    if ((!mv && !cell && (!v || json_is_null(v))) || (mv && cell && strcmp(mv, cell) == 0)) {
        c->agree++;
        return;
    }
    snprintf(name, sizeof name, "manifest %s", label);
    tb_vresult_add(c->r, 0, name, "as the data says", "%s says %s%.200s%s, %s %s%.200s%s", who, mv ? "'" : "",
                   mv                        ? mv
                   : (!v || json_is_null(v)) ? "null"
                                             : "a non-text value",
                   mv ? "'" : "", source, cell ? "'" : "", cell ? cell : "NULL", cell ? "'" : "");
}

static void same_text(dctx *c, const char *label, const json_t *m, const char *key, const char *cell,
                      const char *source) {
    same_text_of(c, label, "manifest", m, key, cell, source);
}

/* A run's UUID as docs/bundle.md gives it: 8-4-4-4-12 lower-case hex. */
static int uuid_ok(const char *u) {
    if (!u || strlen(u) != 36) return 0;
    for (int i = 0; i < 36; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? u[i] != '-' : !((u[i] >= '0' && u[i] <= '9') || (u[i] >= 'a' && u[i] <= 'f'))) return 0;
    }
    return 1;
}

static void check_run(dctx *c, const json_t *m, const tb_vdata *d, const char *folder) {
    const tb_vcsv *t = &d->runs;
    const char *uuid = tb_vcell(t, 0, "uuid"), *st = tb_vcell(t, 0, "status");
    const char *pub = json_string_value(json_object_get(json_object_get(d->report, "run"), "status"));
    const json_t *id = json_object_get(m, "run_id");
    static const char *const texts[] = {"label", "started_at", "finished_at", "tile_name", "tile_spec"};
    char want[128], what[64];
    same_text(c, "run_uuid", m, "run_uuid", uuid, "runs.csv uuid");
    if (!uuid_ok(uuid))
        tb_vresult_add(c->r, 0, "manifest run_uuid", "8-4-4-4-12 lower-case hex (docs/bundle.md)",
                       "runs.csv uuid '%.64s'", uuid ? uuid : "NULL");
    snprintf(want, sizeof want, "tilebench-run-%.64s", uuid ? uuid : "?");
    if (!folder || !uuid || strcmp(folder, want) != 0)
        tb_vresult_add(c->r, 0, "manifest run_uuid", "the bundle's folder is tilebench-run-UUID",
                       "folder %.100s, runs.csv uuid %.64s", folder ? folder : "?", uuid ? uuid : "NULL");
    if (!json_is_integer(id) || json_integer_value(id) != tb_vcell_int(t, 0, "id", -1))
        tb_vresult_add(c->r, 0, "manifest run_id", "as the data says", "manifest says %lld, runs.csv id %s",
                       (long long)json_integer_value(id), tb_vcell(t, 0, "id") ? tb_vcell(t, 0, "id") : "NULL");
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        snprintf(what, sizeof what, "runs.csv %s", texts[i]);
        same_text(c, texts[i], m, texts[i], tb_vcell(t, 0, texts[i]), what);
    }
    /* a run stored as running whose writer is gone is published as interrupted */
    same_text(c, "status", m, "status", st && strcmp(st, "running") == 0 ? "interrupted" : st, "runs.csv status");
    same_text(c, "status", m, "status", pub, "report.json run.status");
}

static void check_host(dctx *c, const json_t *m, const tb_vdata *d) {
    const char *h = tb_vcell(&d->runs, 0, "host_json");
    json_t *stored = h ? json_loads(h, 0, NULL) : NULL;
    const json_t *v = json_object_get(m, "host");
    if (json_equal(stored, v) || (!stored && (!v || json_is_null(v))))
        c->agree++;
    else
        tb_vresult_add(c->r, 0, "manifest host", "runs.csv host_json", "the manifest's host differs from host_json");
    json_decref(stored);
}

static void check_meters(dctx *c, const json_t *m, const tb_vdata *d) {
    const json_t *arr = json_object_get(m, "meters");
    static const char *const texts[] = {"model", "idn", "serial", "firmware", "driver", "host"};
    size_t i;
    json_t *o;
    if (json_array_size(arr) != d->meters.n_rows) {
        tb_vresult_add(c->r, 0, "manifest meters", "one per meters.csv row", "manifest lists %zu, meters.csv has %zu",
                       json_array_size(arr), d->meters.n_rows);
        return;
    }
    json_array_foreach(arr, i, o) {
        char field[64], src[64], uri[1024];
        const char *cu = tb_vcell(&d->meters, i, "uri");
        const json_t *est = json_object_get(o, "estimated");
        int64_t idx = tb_vcell_int(&d->meters, i, "idx", -1);
        if (json_integer_value(json_object_get(o, "idx")) != idx) {
            tb_vresult_add(c->r, 0, "manifest meters", "in meters.csv's order",
                           "entry %zu is idx %lld, meters.csv row %zu idx %lld", i + 1,
                           (long long)json_integer_value(json_object_get(o, "idx")), i + 1, (long long)idx);
            continue;
        }
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            snprintf(field, sizeof field, "meters[%lld].%s", (long long)idx, texts[k]);
            snprintf(src, sizeof src, "meters.csv %s", texts[k]);
            same_text(c, field, o, texts[k], tb_vcell(&d->meters, i, texts[k]), src);
        }
        tb_redact_uri(cu ? cu : "", uri, sizeof uri);
        snprintf(field, sizeof field, "meters[%lld].uri", (long long)idx);
        same_text(c, field, o, "uri", uri, "meters.csv uri without its password");
        snprintf(field, sizeof field, "manifest meters[%lld].estimated", (long long)idx);
        if (!json_is_boolean(est) || json_is_true(est) != (tb_vcell_int(&d->meters, i, "estimated", 0) != 0))
            tb_vresult_add(c->r, 0, field, "meters.csv estimated", "manifest says %s, meters.csv estimated %s",
                           json_is_boolean(est) ? (json_is_true(est) ? "true" : "false") : "no boolean",
                           tb_vcell(&d->meters, i, "estimated") ? tb_vcell(&d->meters, i, "estimated") : "NULL");
        else
            c->agree++;
    }
}

/* The tile file the manifest names is the one the run ran
 * (runs.config_text, when stored). */
static void check_tile_file(dctx *c, const json_t *m, const tb_vdata *d, const tb_vbundle *b) {
    const char *name = json_string_value(json_object_get(m, "tile_file"));
    const char *text = tb_vcell(&d->runs, 0, "config_text");
    const tb_vfile *f = name ? tb_vbundle_find(b, name) : NULL;
    if (!f) {
        tb_vresult_add(c->r, 0, "manifest tile_file", "a file of the bundle", "%s%.200s%s is not in the bundle",
                       name ? "'" : "", name ? name : "no name", name ? "'" : "");
        return;
    }
    if (text && (f->len != strlen(text) || memcmp(f->data, text, f->len) != 0)) {
        size_t k = 0;
        while (k < f->len && text[k] && f->data[k] == (unsigned char)text[k])
            k++;
        tb_vresult_add(c->r, 0, "manifest tile_file", "runs.csv config_text, byte for byte",
                       "%.200s (%zu bytes) differs from config_text (%zu bytes) from byte %zu", name, f->len,
                       strlen(text), k + 1);
        return;
    }
    c->agree++;
}

/* The tilebench that measured the run: runs.csv's, as report.json and
 * report.html's generator tag state it. */
static void check_version(dctx *c, const json_t *m, const tb_vdata *d, const tb_vbundle *b) {
    const char *v = tb_vcell(&d->runs, 0, "tilebench_version");
    const tb_vfile *html = tb_vbundle_find(b, "report.html");
    const char *tag = "<meta name=\"generator\" content=\"tilebench ";
    const char *at = html ? strstr((const char *)html->data, tag) : NULL;
    const char *js = json_string_value(json_object_get(m, "tilebench_version"));
    if (!js || !*js)
        tb_vresult_add(c->r, 0, "manifest tilebench_version", "the publishing tilebench's version", "missing");
    same_text_of(c, "tilebench_version", "report.json", json_object_get(d->report, "run"), "tilebench_version", v,
                 "runs.csv tilebench_version");
    if (at) {
        const char *s = at + strlen(tag), *e = strchr(s, '"');
        size_t n = e ? (size_t)(e - s) : 0;
        if (!v || !e || n != strlen(v) || strncmp(s, v, n) != 0)
            tb_vresult_add(c->r, 0, "manifest tilebench_version", "as the data says",
                           "report.html says tilebench '%.*s', runs.csv '%.100s'", (int)(n < 100 ? n : 100), s,
                           v ? v : "NULL");
        else
            c->agree++;
    }
}

/* A text of report.json (NULL: null or absent) against a cell (NULL: SQL
 * NULL); a mismatch is a FAIL line "report.json LABEL". */
static void report_text(dctx *c, const char *label, const char *pub, const char *cell, const char *source) {
    char name[96];
    if ((!pub && !cell) || (pub && cell && strcmp(pub, cell) == 0)) {
        c->agree++;
        return;
    }
    snprintf(name, sizeof name, "report.json %s", label);
    tb_vresult_add(c->r, 0, name, "as the data says", "report.json says %s%.200s%s, %s %s%.200s%s", pub ? "'" : "",
                   pub ? pub : "null", pub ? "'" : "", source, cell ? "'" : "", cell ? cell : "NULL", cell ? "'" : "");
}

/* report.json's meters (identity, model, URI without password, whether
 * estimated, calibration) and estimated_power against meters.csv, and its
 * settings.preset against runs.settings_json. */
static void check_report_run(dctx *c, const tb_vdata *d) {
    static const char *const texts[] = {"model", "idn", "serial", "firmware", "driver", "calibrated"};
    const json_t *run = json_object_get(d->report, "run"), *arr = json_object_get(run, "meters"), *o;
    const char *pp = json_string_value(json_object_get(json_object_get(run, "settings"), "preset"));
    const char *sp = json_string_value(json_object_get(d->settings, "preset"));
    const json_t *ep = json_object_get(run, "estimated_power");
    size_t i;
    int any_est = 0;
    if (json_array_size(arr) != d->meters.n_rows)
        tb_vresult_add(c->r, 0, "report.json meters", "one per meters.csv row",
                       "report.json lists %zu, meters.csv has %zu", json_array_size(arr), d->meters.n_rows);
    else
        json_array_foreach(arr, i, o) {
            char field[64], src[64], uri[1024];
            const json_t *est = json_object_get(o, "estimated");
            for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
                if (tb_vcsv_col(&d->meters, texts[k]) < 0) continue; /* older schemas */
                snprintf(field, sizeof field, "meters[%zu].%s", i, texts[k]);
                snprintf(src, sizeof src, "meters.csv %s", texts[k]);
                report_text(c, field, json_string_value(json_object_get(o, texts[k])),
                            tb_vcell(&d->meters, i, texts[k]), src);
            }
            tb_redact_uri(tb_vcell(&d->meters, i, "uri") ? tb_vcell(&d->meters, i, "uri") : "", uri, sizeof uri);
            snprintf(field, sizeof field, "meters[%zu].uri", i);
            report_text(c, field, json_string_value(json_object_get(o, "uri")), uri,
                        "meters.csv uri without its password");
            any_est |= tb_vcell_int(&d->meters, i, "estimated", 0) != 0;
            snprintf(field, sizeof field, "report.json meters[%zu].estimated", i);
            if (!json_is_boolean(est) || json_is_true(est) != (tb_vcell_int(&d->meters, i, "estimated", 0) != 0))
                tb_vresult_add(c->r, 0, field, "meters.csv estimated", "report.json says %s, meters.csv estimated %s",
                               json_is_boolean(est) ? (json_is_true(est) ? "true" : "false") : "no boolean",
                               tb_vcell(&d->meters, i, "estimated") ? tb_vcell(&d->meters, i, "estimated") : "NULL");
            else
                c->agree++;
        }
    if (json_array_size(arr) == d->meters.n_rows && (!json_is_boolean(ep) || json_is_true(ep) != any_est))
        tb_vresult_add(c->r, 0, "report.json estimated_power", "true when a meter of meters.csv is an estimate",
                       "report.json says %s, meters.csv has %s estimated meter",
                       json_is_boolean(ep) ? (json_is_true(ep) ? "true" : "false") : "no boolean",
                       any_est ? "an" : "no");
    else
        c->agree++;
    report_text(c, "settings.preset", pp, sp, "runs.csv settings_json preset");
}

void tb_vcheck_describe(const tb_vbundle *b, const json_t *manifest, const tb_vdata *d, tb_vresult *r) {
    dctx c = {r, 0};
    size_t before = r->failed;
    check_run(&c, manifest, d, b->folder);
    check_host(&c, manifest, d);
    check_meters(&c, manifest, d);
    check_tile_file(&c, manifest, d, b);
    check_version(&c, manifest, d, b);
    if (r->failed == before)
        tb_vresult_add(r, 1, "manifest run", "as runs.csv, meters.csv, tiles.ini and the reports say",
                       "%zu fields agree (run_uuid, status, meters, tile_file, tilebench_version...)", c.agree);
    before = r->failed;
    c.agree = 0;
    check_report_run(&c, d);
    if (r->failed == before)
        tb_vresult_add(
            r, 1, "report.json run", "as meters.csv and runs.csv say",
            "%zu fields agree (each meter's identity, model, uri, estimated and calibration; estimated_power; "
            "settings.preset)",
            c.agree);
}
