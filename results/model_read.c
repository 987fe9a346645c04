/*
 * model_read.c: the one reader of the typed read model (model.h). Besides the
 * store itself, the only code that runs SQL against the results database.
 * A run is read inside one read transaction, so its levels are a consistent
 * snapshot even while the coordinator is committing more.
 */
#include "results/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "common/buf.h"
#include "powermeter/accuracy.h"
#include "powermeter/ipmi.h"
#include "powermeter/meter.h"
#include "results/model_sql.h"
#include "results/store_internal.h"

/* ---- columns ------------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid.
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_seq(const unsigned char *p, size_t n) {
    unsigned c = p[0], cp;
    size_t len, i;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (n < len) return 0;
    for (i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

/* A copy of n bytes as UTF-8: bytes that are not (a label typed in Latin-1)
 * become U+FFFD, so the JSON view never fails on them. An embedded NUL ends
 * the string for the views, as it always did. */
static char *utf8_copy(const char *s, size_t n) {
    char *buf = xmalloc(n * 3 + 1);
    size_t i = 0, o = 0;
    while (i < n) {
        size_t len = utf8_seq((const unsigned char *)s + i, n - i);
        if (len == 0) {
            memcpy(buf + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        } else {
            memcpy(buf + o, s + i, len);
            o += len;
            i += len;
        }
    }
    buf[o] = '\0';
    return buf;
}

char *tb_model_col_str(const tb_model_ctx *c, sqlite3_stmt *st, int i) {
    const char *s;
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return NULL;
    s = (const char *)sqlite3_column_text(st, i);
    if (s && c->raw_text) return xstrdup(s);
    return s ? utf8_copy(s, (size_t)sqlite3_column_bytes(st, i)) : NULL;
}

/* A column's bytes as stored (the run list prints them as they are). */
static char *col_raw(sqlite3_stmt *st, int i) {
    const char *s = (const char *)sqlite3_column_text(st, i);
    return s ? xstrdup(s) : NULL;
}

double tb_model_col_real(sqlite3_stmt *st, int i) {
    double v;
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return NAN;
    v = sqlite3_column_double(st, i);
    return isfinite(v) ? v : NAN;
}

tb_model_int tb_model_col_int(sqlite3_stmt *st, int i) {
    tb_model_int r = {0, 0};
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return r;
    r.v = sqlite3_column_int64(st, i);
    r.known = 1;
    return r;
}

void tb_model_obj_free(tb_model_obj *o) {
    for (size_t i = 0; i < o->n; i++) {
        free(o->kv[i].key);
        free(o->kv[i].str);
    }
    free(o->kv);
    o->kv = NULL;
    o->n = 0;
}

/* The members of a JSON object tree, in order. */
static void obj_from_json(tb_model_obj *o, json_t *j) {
    const char *key;
    json_t *v;
    o->kv = xcalloc(json_object_size(j) + 1, sizeof *o->kv);
    json_object_foreach(j, key, v) {
        tb_model_kv *kv = &o->kv[o->n++];
        kv->key = xstrdup(key);
        if (json_is_string(v))
            kv->kind = TB_KV_STRING, kv->str = xstrdup(json_string_value(v));
        else if (json_is_integer(v))
            kv->kind = TB_KV_INT, kv->i = (int64_t)json_integer_value(v);
        else if (json_is_real(v))
            kv->kind = TB_KV_REAL, kv->d = json_real_value(v);
        else if (json_is_boolean(v))
            kv->kind = TB_KV_BOOL, kv->i = json_is_true(v);
        else if (json_is_null(v))
            kv->kind = TB_KV_NULL;
        else {
            char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            kv->kind = TB_KV_OTHER;
            kv->str = xstrdup(s ? s : "null");
            free(s);
        }
    }
}

/* A stored JSON object text (host_json, settings_json, C-states): {} when
 * absent; {} and a warning when it does not parse, since a report is still
 * worth having without it. */
void tb_model_col_object(sqlite3_stmt *st, int i, const char *name, tb_model_obj *o) {
    json_error_t jerr;
    json_t *j;
    const char *s = (const char *)sqlite3_column_text(st, i);
    o->n = 0;
    o->kv = NULL;
    if (!s) {
        o->kv = xcalloc(1, sizeof *o->kv);
        return;
    }
    j = json_loads(s, JSON_DECODE_ANY, &jerr);
    if (!j || !json_is_object(j)) {
        tb_log(TB_LOG_WARN, "stored %s is not a JSON object (%s); reporting {}", name, j ? "not an object" : jerr.text);
        json_decref(j);
        o->kv = xcalloc(1, sizeof *o->kv);
        return;
    }
    obj_from_json(o, j);
    json_decref(j);
}

const tb_model_kv *tb_model_obj_get(const tb_model_obj *o, const char *key) {
    const tb_model_kv *hit = NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->kv[i].key, key) == 0) hit = &o->kv[i];
    return hit;
}

const char *tb_model_obj_str(const tb_model_obj *o, const char *key) {
    const tb_model_kv *kv = tb_model_obj_get(o, key);
    return kv && kv->kind == TB_KV_STRING ? kv->str : NULL;
}

/* ---- statements ------------------------------------------------------------------ */

int tb_model_prep(tb_model_ctx *c, const char *sql, sqlite3_stmt **st) {
    if (sqlite3_prepare_v2(c->db, sql, -1, st, NULL) != SQLITE_OK) {
        tb_seterr(c->err, "report: query: %s", sqlite3_errmsg(c->db));
        return -1;
    }
    return 0;
}

int tb_model_next(tb_model_ctx *c, sqlite3_stmt *st) {
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    tb_seterr(c->err, "report: read: %s", sqlite3_errmsg(c->db));
    return -1;
}

int tb_model_read_begin(sqlite3 *db) {
    if (!sqlite3_get_autocommit(db)) return 0;
    return sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
}

void tb_model_read_end(sqlite3 *db, int opened) {
    if (opened) (void)sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

int tb_model_snapshot_begin(tb_store *s) { return tb_model_read_begin(tb_store_db(s)); }

void tb_model_snapshot_end(tb_store *s, int opened) { tb_model_read_end(tb_store_db(s), opened); }

/* ---- run header -------------------------------------------------------------- */

/* The channels of the run's meters read as several, per level (channel_samples). */
static int read_channels(tb_model_ctx *c, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (tb_model_prep(c,
                      "SELECT meter_idx, channel, level_id, avg(CASE WHEN (flags & ?2) = 0 THEN watts END), count(*),"
                      " sum((flags & ?2) != 0) FROM channel_samples WHERE run_id = ?1 AND level_id IS NOT NULL"
                      " GROUP BY meter_idx, channel, level_id ORDER BY meter_idx, channel, level_id",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, r->id);
    sqlite3_bind_int(st, 2, (int)TB_SAMPLE_BAD);
    while ((rc = tb_model_next(c, st)) == 1) {
        int64_t idx = sqlite3_column_int64(st, 0);
        tb_model_meter *m;
        tb_model_channel *ch;
        if (idx < 0 || (uint64_t)idx >= r->n_meters) continue;
        m = &r->meters[idx];
        m->channels_by_level = xrealloc(m->channels_by_level, (m->n_channels + 1) * sizeof *m->channels_by_level);
        ch = &m->channels_by_level[m->n_channels++];
        ch->channel = sqlite3_column_int(st, 1);
        ch->level_id = sqlite3_column_int64(st, 2);
        ch->mean_watts = tb_model_col_real(st, 3);
        ch->samples = sqlite3_column_int64(st, 4);
        ch->bad_samples = sqlite3_column_int64(st, 5);
    }
    sqlite3_finalize(st);
    return rc;
}

static int read_meters(tb_model_ctx *c, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;
    if (tb_model_prep(
            c,
            "SELECT uri, model, idn, estimated, serial, firmware, driver, volt_range_v, amp_range_a, volt_mode,"
            " amp_mode, crest_factor, update_ms, avg_window_ms,"
            " (SELECT max(uncertainty_pct) FROM power_samples p WHERE p.run_id = meters.run_id"
            "  AND p.meter_idx = meters.idx),"
            " (SELECT count(*) FROM power_samples p WHERE p.run_id = meters.run_id AND p.meter_idx = meters.idx"
            "  AND (p.flags & ?2) != 0),"
            /* FLAT among the valid readings, and the valid readings (tb_ipmi_not_averaged) */
            " (SELECT count(*) FROM power_samples p WHERE p.run_id = meters.run_id AND p.meter_idx = meters.idx"
            "  AND (p.flags & ?2) = 0 AND (p.flags & ?3) != 0),"
            " (SELECT count(*) FROM power_samples p WHERE p.run_id = meters.run_id AND p.meter_idx = meters.idx"
            "  AND (p.flags & ?2) = 0),"
            " calibrated, accuracy, channels"
            " FROM meters WHERE run_id = ?1 ORDER BY idx",
            &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, r->id);
    sqlite3_bind_int(st, 2, (int)TB_SAMPLE_BAD);
    sqlite3_bind_int(st, 3, (int)TB_SAMPLE_FLAT);
    while ((rc = tb_model_next(c, st)) == 1) {
        tb_model_meter *m;
        r->meters = tb_grow(r->meters, r->n_meters, &cap, sizeof *r->meters);
        m = &r->meters[r->n_meters++];
        m->uri = tb_model_col_str(c, st, 0);
        m->model = tb_model_col_str(c, st, 1);
        m->idn = tb_model_col_str(c, st, 2);
        m->estimated = sqlite3_column_int(st, 3) != 0;
        m->serial = tb_model_col_str(c, st, 4);
        m->firmware = tb_model_col_str(c, st, 5);
        m->driver = tb_model_col_str(c, st, 6);
        m->volt_range_v = tb_model_col_real(st, 7);
        m->amp_range_a = tb_model_col_real(st, 8);
        m->volt_mode = tb_model_col_str(c, st, 9);
        m->amp_mode = tb_model_col_str(c, st, 10);
        m->crest_factor = tb_model_col_real(st, 11);
        m->update_ms = tb_model_col_int(st, 12);
        m->avg_window_ms = tb_model_col_int(st, 13);
        m->max_uncertainty_pct = tb_model_col_real(st, 14);
        m->invalid_samples = sqlite3_column_int64(st, 15);
        m->flat_readings = sqlite3_column_int64(st, 16);
        m->valid_readings = sqlite3_column_int64(st, 17);
        m->not_averaged = tb_ipmi_not_averaged(m->flat_readings, m->valid_readings);
        m->calibrated = tb_model_col_str(c, st, 18);
        m->accuracy = tb_model_col_str(c, st, 19);
        m->channels = tb_model_col_str(c, st, 20);
        m->spec_accepted = m->estimated ? -1 : tb_meter_spec_accepted(m->model);
        if (m->estimated) r->estimated_power = 1;
    }
    sqlite3_finalize(st);
    return rc;
}

static int read_events(tb_model_ctx *c, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;
    if (tb_model_prep(c, "SELECT at, kind, message FROM events WHERE run_id = ?1 ORDER BY id", &st) != 0) return -1;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = tb_model_next(c, st)) == 1) {
        tb_model_event *e;
        r->events = tb_grow(r->events, r->n_events, &cap, sizeof *r->events);
        e = &r->events[r->n_events++];
        e->at = tb_model_col_str(c, st, 0);
        e->kind = tb_model_col_str(c, st, 1);
        e->message = tb_model_col_str(c, st, 2);
    }
    sqlite3_finalize(st);
    return rc;
}

static int read_ranging(tb_model_ctx *c, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;
    if (tb_model_prep(c,
                      "SELECT tiles, repeat, meter, samples, alone, peak_v, peak_a, volt_range_v, amp_range_a"
                      " FROM level_ranges WHERE run_id = ?1 ORDER BY repeat, tiles, alone IS NOT NULL, alone, meter",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = tb_model_next(c, st)) == 1) {
        tb_model_ranging *g;
        r->ranging = tb_grow(r->ranging, r->n_ranging, &cap, sizeof *r->ranging);
        g = &r->ranging[r->n_ranging++];
        g->tiles = sqlite3_column_int64(st, 0);
        g->repeat = sqlite3_column_int64(st, 1);
        g->meter = sqlite3_column_int64(st, 2);
        g->samples = sqlite3_column_int64(st, 3);
        g->alone = tb_model_col_str(c, st, 4);
        g->peak_v = tb_model_col_real(st, 5);
        g->peak_a = tb_model_col_real(st, 6);
        g->volt_range_v = tb_model_col_real(st, 7);
        g->amp_range_a = tb_model_col_real(st, 8);
    }
    sqlite3_finalize(st);
    return rc;
}

/* CPU utilization and frequency over the active idle samples (level_id
 * NULL), interval-weighted. */
static int read_idle_telemetry(tb_model_ctx *c, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    int rc;
    r->idle_cpu_util_pct = r->idle_avg_freq_mhz = NAN;
    if (tb_model_prep(
            c,
            "SELECT sum(cpu_util_pct * interval_us) / sum(CASE WHEN cpu_util_pct IS NOT NULL THEN interval_us END),"
            " sum(freq_mhz * interval_us) / sum(CASE WHEN freq_mhz IS NOT NULL THEN interval_us END), count(*)"
            " FROM telemetry_samples WHERE run_id = ?1 AND level_id IS NULL",
            &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, r->id);
    rc = tb_model_next(c, st);
    if (rc == 1) {
        r->idle_cpu_util_pct = tb_model_col_real(st, 0);
        r->idle_avg_freq_mhz = tb_model_col_real(st, 1);
        r->idle_telemetry_samples = sqlite3_column_int64(st, 2);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The runs row; 0, or -1 with err ("run 7 not found"). Reads the pieces in
 * the order the report always did, so warnings come in the same order. */
static int read_run_row(tb_model_ctx *c, int64_t run_id, int flags, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    const char *shown;
    int rc;
    if (tb_model_prep(c,
                      "SELECT r.id, r.label, r.status, r.started_at, r.finished_at, r.tilebench_version, r.host_json,"
                      " r.settings_json, r.active_idle_watts, r.saturation_tiles, r.tile_name, r.tile_spec,"
                      " r.config_text, r.writer_pid, r.writer_start, r.campaign_id, r.campaign_config, c.name"
                      " FROM runs r LEFT JOIN campaigns c ON c.id = r.campaign_id WHERE r.id = ?1",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    rc = tb_model_next(c, st);
    if (rc <= 0) {
        if (rc == 0) tb_seterr(c->err, "run %lld not found", (long long)run_id);
        sqlite3_finalize(st);
        return -1;
    }
    r->id = sqlite3_column_int64(st, 0);
    r->label = tb_model_col_str(c, st, 1);
    shown = tb_store_effective_status((const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 13),
                                      sqlite3_column_int64(st, 14));
    r->status = shown ? utf8_copy(shown, strlen(shown)) : NULL;
    r->started_at = tb_model_col_str(c, st, 3);
    r->finished_at = tb_model_col_str(c, st, 4);
    r->tilebench_version = tb_model_col_str(c, st, 5);
    r->tile_name = tb_model_col_str(c, st, 10);
    r->tile_spec = tb_model_col_str(c, st, 11);
    r->active_idle_watts = tb_model_col_real(st, 8);
    r->saturation_tiles = tb_model_col_int(st, 9);
    r->config_text = tb_model_col_str(c, st, 12);
    r->campaign_id = sqlite3_column_int64(st, 15);
    r->campaign_config = tb_model_col_str(c, st, 16);
    r->campaign_name = tb_model_col_str(c, st, 17);
    if (flags & TB_MODEL_VERDICTS_ONLY) {
        r->idle_cpu_util_pct = r->idle_avg_freq_mhz = NAN;
        r->host.kv = xcalloc(1, sizeof *r->host.kv);
        r->settings.kv = xcalloc(1, sizeof *r->settings.kv);
        sqlite3_finalize(st);
        return 0;
    }
    tb_model_col_object(st, 6, "host_json", &r->host);
    rc = read_meters(c, r);
    if (rc == 0) rc = read_channels(c, r);
    if (rc == 0) rc = read_idle_telemetry(c, r);
    tb_model_col_object(st, 7, "settings_json", &r->settings);
    sqlite3_finalize(st);
    return rc;
}

void tb_model_telemetry_from_levels_row(const tb_model_ctx *c, sqlite3_stmt *st, tb_model_telemetry *t) {
    t->cpu_util_pct = tb_model_col_real(st, 14);
    t->avg_freq_mhz = tb_model_col_real(st, 15);
    t->freq_source = tb_model_col_str(c, st, 25);
    for (int m = 0; m < TB_MODEL_CPU_MODES; m++)
        t->mode_pct[m] = tb_model_col_real(st, 17 + m);
    t->samples = tb_model_col_int(st, 26);
    tb_model_col_object(st, 27, "cstate_residency_json", &t->cstate_residency_pct);
}

int tb_model_read_run(tb_store *s, int64_t run_id, int flags, tb_model_run **out, char *err) {
    tb_model_ctx c = {tb_store_db(s), err, (flags & TB_MODEL_RAW_TEXT) != 0};
    tb_model_run *r = xcalloc(1, sizeof *r);
    int rc, opened = tb_model_read_begin(c.db);
    *out = NULL;
    r->peak_score = r->peak_ppkw = r->overall_efficiency = NAN;
    rc = read_run_row(&c, run_id, flags, r);
    if (rc == 0) rc = tb_model_read_levels(&c, r, flags);
    if (rc == 0) rc = tb_model_read_temperature(&c, r);
    if (rc == 0 && !(flags & TB_MODEL_VERDICTS_ONLY)) rc = tb_model_read_hosts(&c, r);
    if (rc == 0 && !(flags & TB_MODEL_VERDICTS_ONLY)) rc = read_events(&c, r);
    if (rc == 0 && !(flags & TB_MODEL_VERDICTS_ONLY)) rc = read_ranging(&c, r);
    if (rc == 0 && (flags & TB_MODEL_POWER_SERIES)) rc = tb_model_read_power(&c, r);
    tb_model_read_end(c.db, opened);
    if (rc != 0) {
        tb_model_run_free(r);
        return -1;
    }
    tb_model_summarize(r);
    *out = r;
    return 0;
}

/* ---- freeing ------------------------------------------------------------------ */

static void level_free(tb_model_level *lv) {
    tb_model_free_level_infra(lv);
    for (size_t i = 0; i < lv->n_qos; i++)
        free(lv->qos[i].rule), free(lv->qos[i].reason);
    for (size_t i = 0; i < lv->n_tile_qos; i++)
        free(lv->tile_qos[i].rule), free(lv->tile_qos[i].reason);
    free(lv->qos);
    free(lv->tile_qos);
    for (size_t i = 0; i < lv->n_workloads; i++) {
        tb_model_workload *w = &lv->workloads[i];
        for (size_t k = 0; k < w->n_ops; k++) {
            free(w->ops_list[k].name);
            free(w->ops_list[k].hist_error);
            tb_hist_free(w->ops_list[k].hist);
            tb_hist_free(w->ops_list[k].hist_uncorrected);
        }
        free(w->ops_list);
        free(w->name);
        free(w->unit);
    }
    free(lv->workloads);
    for (size_t i = 0; i < lv->n_groups; i++) {
        free(lv->groups[i].workload);
        free(lv->groups[i].op);
        tb_hist_free(lv->groups[i].hist);
    }
    free(lv->groups);
    for (size_t i = 0; i < lv->n_agents; i++) {
        free(lv->agents[i].name);
        free(lv->agents[i].host);
        free(lv->agents[i].lost_at);
    }
    free(lv->agents);
    free(lv->invalid_reason);
    free(lv->alone);
    free(lv->steady_start);
    free(lv->steady_end);
    free(lv->telemetry.freq_source);
    tb_model_obj_free(&lv->telemetry.cstate_residency_pct);
}

void tb_model_run_free(tb_model_run *r) {
    if (!r) return;
    tb_model_free_hosts(r);
    tb_model_free_power(r);
    free(r->label), free(r->status), free(r->started_at), free(r->finished_at);
    free(r->tilebench_version), free(r->tile_name), free(r->tile_spec), free(r->config_text);
    free(r->campaign_name), free(r->campaign_config);
    tb_model_obj_free(&r->host);
    tb_model_obj_free(&r->settings);
    for (size_t i = 0; i < r->n_meters; i++) {
        tb_model_meter *m = &r->meters[i];
        free(m->uri), free(m->model), free(m->idn), free(m->serial), free(m->firmware), free(m->driver);
        free(m->volt_mode), free(m->amp_mode), free(m->calibrated), free(m->accuracy);
        free(m->channels), free(m->channels_by_level);
    }
    free(r->meters);
    for (size_t i = 0; i < r->n_levels; i++)
        level_free(&r->levels[i]);
    free(r->levels);
    free(r->summary);
    for (size_t i = 0; i < r->n_events; i++)
        free(r->events[i].at), free(r->events[i].kind), free(r->events[i].message);
    free(r->events);
    for (size_t i = 0; i < r->n_ranging; i++)
        free(r->ranging[i].alone);
    free(r->ranging);
    free(r);
}

/* ---- the run list ---------------------------------------------------------------- */

static int read_campaigns(tb_model_ctx *c, tb_model_run_list *l) {
    sqlite3_stmt *st = NULL, *runs = NULL;
    size_t cap = 0;
    int rc;
    if (tb_model_prep(c,
                      "SELECT id, name, baseline, status, writer_pid, writer_start, started_at, message FROM campaigns"
                      " ORDER BY id",
                      &st) != 0 ||
        tb_model_prep(c, "SELECT id, campaign_config FROM runs WHERE campaign_id = ?1 ORDER BY id", &runs) != 0) {
        sqlite3_finalize(st);
        return -1;
    }
    while ((rc = tb_model_next(c, st)) == 1) {
        const char *status = tb_store_effective_status((const char *)sqlite3_column_text(st, 3),
                                                       sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5));
        tb_model_campaign *k;
        size_t rcap = 0;
        int r2;
        l->campaigns = tb_grow(l->campaigns, l->n_campaigns, &cap, sizeof *l->campaigns);
        k = &l->campaigns[l->n_campaigns++];
        k->id = sqlite3_column_int64(st, 0);
        k->name = col_raw(st, 1);
        k->baseline = col_raw(st, 2);
        k->status = status ? xstrdup(status) : NULL;
        k->started_at = col_raw(st, 6);
        k->message = col_raw(st, 7);
        sqlite3_reset(runs);
        sqlite3_bind_int64(runs, 1, k->id);
        while ((r2 = tb_model_next(c, runs)) == 1) {
            k->runs = tb_grow(k->runs, k->n_runs, &rcap, sizeof *k->runs);
            k->runs[k->n_runs].id = sqlite3_column_int64(runs, 0);
            k->runs[k->n_runs++].config = col_raw(runs, 1);
        }
        if (r2 != 0) {
            rc = -1;
            break;
        }
    }
    sqlite3_finalize(st);
    sqlite3_finalize(runs);
    return rc;
}

static int read_run_rows(tb_model_ctx *c, tb_model_run_list *l) {
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;
    if (tb_model_prep(c,
                      "SELECT r.id, r.started_at, r.status, r.writer_pid, r.writer_start, r.label,"
                      " (SELECT count(DISTINCT tiles) FROM levels WHERE run_id = r.id),"
                      " (SELECT max(score) FROM levels WHERE run_id = r.id),"
                      " (SELECT max(ppkw) FROM levels WHERE run_id = r.id),"
                      " EXISTS (SELECT 1 FROM meters WHERE run_id = r.id AND estimated),"
                      " r.finished_at, r.tile_spec, r.saturation_tiles,"
                      " (SELECT min(qos_pass) FROM levels WHERE run_id = r.id AND alone IS NULL),"
                      " (SELECT max(qos_not_judged) FROM levels WHERE run_id = r.id AND alone IS NULL)"
                      " FROM runs r ORDER BY r.id",
                      &st) != 0)
        return -1;
    while ((rc = tb_model_next(c, st)) == 1) {
        const char *status = tb_store_effective_status((const char *)sqlite3_column_text(st, 2),
                                                       sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4));
        tb_model_run_row *w;
        l->runs = tb_grow(l->runs, l->n_runs, &cap, sizeof *l->runs);
        w = &l->runs[l->n_runs++];
        w->id = sqlite3_column_int64(st, 0);
        w->started_at = col_raw(st, 1);
        w->status = status ? xstrdup(status) : NULL;
        w->label = col_raw(st, 5);
        w->levels = sqlite3_column_int(st, 6);
        w->peak_score = sqlite3_column_type(st, 7) != SQLITE_NULL ? sqlite3_column_double(st, 7) : NAN;
        w->peak_ppkw = sqlite3_column_type(st, 8) != SQLITE_NULL ? sqlite3_column_double(st, 8) : NAN;
        w->estimated = sqlite3_column_int(st, 9) != 0;
        w->finished_at = col_raw(st, 10);
        w->tile_spec = col_raw(st, 11);
        w->saturation_tiles = tb_model_col_int(st, 12);
        /* the run's QoS word: its worst level's (fail, else incomplete, else pass); NULL without levels */
        w->qos_verdict = sqlite3_column_type(st, 13) == SQLITE_NULL
                             ? NULL
                             : tb_model_qos_verdict(sqlite3_column_int(st, 13), sqlite3_column_int(st, 14));
    }
    sqlite3_finalize(st);
    return rc;
}

int tb_model_read_run_list(tb_store *s, tb_model_run_list **out, char *err) {
    tb_model_ctx c = {tb_store_db(s), err, 1};
    tb_model_run_list *l = xcalloc(1, sizeof *l);
    int rc, opened = tb_model_read_begin(c.db);
    rc = read_run_rows(&c, l);
    if (rc == 0) rc = read_campaigns(&c, l);
    tb_model_read_end(c.db, opened);
    if (rc != 0) {
        tb_model_run_list_free(l);
        *out = NULL;
        return -1;
    }
    *out = l;
    return 0;
}

int tb_model_run_exists(tb_store *s, int64_t id, char *err) {
    sqlite3 *db = tb_store_db(s);
    sqlite3_stmt *st = NULL;
    int rc;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM runs WHERE id = ?1", -1, &st, NULL) != SQLITE_OK) {
        tb_seterr(err, "read runs: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_int64(st, 1, id);
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) tb_seterr(err, "read runs: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

void tb_model_run_list_free(tb_model_run_list *l) {
    if (!l) return;
    for (size_t i = 0; i < l->n_runs; i++) {
        tb_model_run_row *w = &l->runs[i];
        free(w->started_at), free(w->status), free(w->label), free(w->finished_at), free(w->tile_spec);
    }
    free(l->runs);
    for (size_t i = 0; i < l->n_campaigns; i++) {
        tb_model_campaign *k = &l->campaigns[i];
        free(k->name), free(k->baseline), free(k->status), free(k->started_at), free(k->message);
        for (size_t j = 0; j < k->n_runs; j++)
            free(k->runs[j].config);
        free(k->runs);
    }
    free(l->campaigns);
    free(l);
}
