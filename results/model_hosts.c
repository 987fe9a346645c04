/*
 * model_hosts.c: the read model of a SUT of several hosts (schema 9): the
 * run's hosts, each meter's host, and each level's per-host power and
 * telemetry. A run without hosts reads none (and its meters' host is NULL).
 */
#include <math.h>
#include <stdlib.h>

#include "common/buf.h"
#include "results/model_sql.h"

static int read_run_hosts(tb_model_ctx *c, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;
    if (tb_model_prep(c,
                      "SELECT name, label, tiles, telemetry, active_idle_watts, idle_cpu_util_pct,"
                      " idle_avg_freq_mhz, idle_telemetry_samples, host_json FROM hosts WHERE run_id = ?1 ORDER BY idx",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = tb_model_next(c, st)) == 1) {
        tb_model_host *h;
        r->hosts = tb_grow(r->hosts, r->n_hosts, &cap, sizeof *r->hosts);
        h = &r->hosts[r->n_hosts++];
        h->name = tb_model_col_str(c, st, 0);
        h->label = tb_model_col_str(c, st, 1);
        h->tiles = tb_model_col_str(c, st, 2);
        h->telemetry = tb_model_col_str(c, st, 3);
        h->active_idle_watts = tb_model_col_real(st, 4);
        h->idle_cpu_util_pct = tb_model_col_real(st, 5);
        h->idle_avg_freq_mhz = tb_model_col_real(st, 6);
        h->idle_telemetry_samples = tb_model_col_int(st, 7);
        tb_model_col_object(st, 8, "hosts.host_json", &h->config);
    }
    sqlite3_finalize(st);
    return rc;
}

static int read_meter_hosts(tb_model_ctx *c, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    size_t i = 0;
    int rc;
    if (tb_model_prep(c, "SELECT host FROM meters WHERE run_id = ?1 ORDER BY idx", &st) != 0) return -1;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = tb_model_next(c, st)) == 1 && i < r->n_meters)
        r->meters[i++].host = tb_model_col_str(c, st, 0);
    sqlite3_finalize(st);
    return rc < 0 ? -1 : 0;
}

/* The level of r with row id, or NULL. Levels are sorted by (repeat, tiles,
 * phase), not by id: a linear search (a run has tens of them). */
static tb_model_level *level_by_id(tb_model_run *r, int64_t id) {
    for (size_t i = 0; i < r->n_levels; i++)
        if (r->levels[i].id == id) return &r->levels[i];
    return NULL;
}

static int read_level_hosts(tb_model_ctx *c, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    int rc;
    if (tb_model_prep(c,
                      "SELECT h.level_id, h.name, h.tiles, h.avg_watts, h.samples, h.cpu_util_pct, h.avg_freq_mhz,"
                      " h.freq_source, h.telemetry_samples FROM level_hosts h JOIN levels l ON l.id = h.level_id"
                      " WHERE l.run_id = ?1 ORDER BY h.rowid",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = tb_model_next(c, st)) == 1) {
        tb_model_level *lv = level_by_id(r, sqlite3_column_int64(st, 0));
        tb_model_level_host *h;
        if (!lv) continue;
        lv->hosts = xrealloc(lv->hosts, (lv->n_hosts + 1) * sizeof *lv->hosts);
        h = &lv->hosts[lv->n_hosts++];
        h->name = tb_model_col_str(c, st, 1);
        h->tiles = sqlite3_column_int64(st, 2);
        h->avg_watts = tb_model_col_real(st, 3);
        h->samples = sqlite3_column_int64(st, 4);
        h->cpu_util_pct = tb_model_col_real(st, 5);
        h->avg_freq_mhz = tb_model_col_real(st, 6);
        h->freq_source = tb_model_col_str(c, st, 7);
        h->telemetry_samples = tb_model_col_int(st, 8);
    }
    sqlite3_finalize(st);
    return rc;
}

int tb_model_read_hosts(tb_model_ctx *c, tb_model_run *r) {
    if (read_run_hosts(c, r) != 0 || read_meter_hosts(c, r) != 0) return -1;
    return r->n_hosts ? read_level_hosts(c, r) : 0;
}

void tb_model_free_hosts(tb_model_run *r) {
    for (size_t i = 0; i < r->n_hosts; i++) {
        tb_model_host *h = &r->hosts[i];
        free(h->name), free(h->label), free(h->tiles), free(h->telemetry);
        tb_model_obj_free(&h->config);
    }
    free(r->hosts);
    r->hosts = NULL;
    r->n_hosts = 0;
    for (size_t i = 0; i < r->n_meters; i++)
        free(r->meters[i].host);
    for (size_t i = 0; i < r->n_levels; i++) {
        tb_model_level *lv = &r->levels[i];
        for (size_t k = 0; k < lv->n_hosts; k++)
            free(lv->hosts[k].name), free(lv->hosts[k].freq_source);
        free(lv->hosts);
    }
}
