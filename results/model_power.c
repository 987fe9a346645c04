/*
 * model_power.c: the read model of the power over time chart (issue 23):
 * every stored power sample of a run (with its stage: from schema 13 the
 * ramps' samples are stored too), and the edges of its stages. Runs
 * stored before the stages table (schema 11) get their steady windows from
 * levels.steady_*_mono_us (schema 7) and active idle as the span of its
 * samples, so the chart still shades what the store knows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "results/model_sql.h"

static int read_samples(tb_model_ctx *c, tb_model_run *r) {
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;
    if (tb_model_prep(c,
                      "SELECT mono_us, coalesce(level_id, 0), meter_idx, flags, watts, reason,"
                      " CASE stage WHEN 'ramp-up' THEN 1 WHEN 'warm-up' THEN 2 WHEN 'ramp-down' THEN 3 ELSE 0 END"
                      " FROM power_samples WHERE run_id = ?1 ORDER BY mono_us, meter_idx",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = tb_model_next(c, st)) == 1) {
        tb_model_sample *x;
        r->samples = tb_grow(r->samples, r->n_samples, &cap, sizeof *r->samples);
        x = &r->samples[r->n_samples++];
        x->mono_us = sqlite3_column_int64(st, 0);
        x->level_id = sqlite3_column_int64(st, 1);
        x->meter = sqlite3_column_int(st, 2);
        x->flags = (unsigned)sqlite3_column_int64(st, 3);
        x->watts = tb_model_col_real(st, 4);
        x->reason = tb_model_col_str(c, st, 5);
        x->stage = sqlite3_column_int(st, 6);
    }
    sqlite3_finalize(st);
    return rc;
}

static tb_model_stage *add_stage(tb_model_run *r, size_t *cap, const char *stage) {
    tb_model_stage *g;
    r->stages = tb_grow(r->stages, r->n_stages, cap, sizeof *r->stages);
    g = &r->stages[r->n_stages++];
    memset(g, 0, sizeof *g);
    g->stage = xstrdup(stage);
    return g;
}

static int read_stages(tb_model_ctx *c, tb_model_run *r, size_t *cap) {
    sqlite3_stmt *st = NULL;
    int rc;
    if (tb_model_prep(c,
                      "SELECT stage, tiles, repeat, phase, alone, start_mono_us, end_mono_us FROM stages"
                      " WHERE run_id = ?1 ORDER BY start_mono_us, rowid",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = tb_model_next(c, st)) == 1) {
        char *name = tb_model_col_str(c, st, 0);
        tb_model_stage *g = add_stage(r, cap, name ? name : "");
        free(name);
        g->tiles = sqlite3_column_int64(st, 1);
        g->repeat = sqlite3_column_int64(st, 2);
        g->phase = sqlite3_column_int64(st, 3);
        g->alone = tb_model_col_str(c, st, 4);
        g->start_mono_us = sqlite3_column_int64(st, 5);
        g->end_mono_us = sqlite3_column_int64(st, 6);
    }
    sqlite3_finalize(st);
    return rc;
}

/* A run stored before the stages table: its steady windows, and active idle
 * as the span of its samples (each covers the second after it). */
static int fallback_stages(tb_model_ctx *c, tb_model_run *r, size_t *cap) {
    sqlite3_stmt *st = NULL;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    int rc;
    for (size_t i = 0; i < r->n_samples; i++)
        if (r->samples[i].level_id == 0 && r->samples[i].stage == 0) {
            if (r->samples[i].mono_us < lo) lo = r->samples[i].mono_us;
            if (r->samples[i].mono_us > hi) hi = r->samples[i].mono_us;
        }
    if (lo <= hi) {
        tb_model_stage *g = add_stage(r, cap, "idle");
        g->start_mono_us = lo;
        g->end_mono_us = hi + 1000000;
    }
    if (tb_model_prep(c,
                      "SELECT tiles, repeat, phase, alone, steady_start_mono_us, steady_end_mono_us FROM levels"
                      " WHERE run_id = ?1 AND steady_start_mono_us IS NOT NULL AND steady_end_mono_us IS NOT NULL"
                      " ORDER BY steady_start_mono_us",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, r->id);
    while ((rc = tb_model_next(c, st)) == 1) {
        tb_model_stage *g = add_stage(r, cap, "steady");
        g->tiles = sqlite3_column_int64(st, 0);
        g->repeat = sqlite3_column_int64(st, 1);
        g->phase = sqlite3_column_int64(st, 2);
        g->alone = tb_model_col_str(c, st, 3);
        g->start_mono_us = sqlite3_column_int64(st, 4);
        g->end_mono_us = sqlite3_column_int64(st, 5);
    }
    sqlite3_finalize(st);
    return rc;
}

int tb_model_read_power(tb_model_ctx *c, tb_model_run *r) {
    size_t cap = 0;
    if (read_samples(c, r) != 0) return -1;
    if (read_stages(c, r, &cap) != 0) return -1;
    return r->n_stages ? 0 : fallback_stages(c, r, &cap);
}

void tb_model_free_power(tb_model_run *r) {
    for (size_t i = 0; i < r->n_samples; i++)
        free(r->samples[i].reason);
    free(r->samples);
    for (size_t i = 0; i < r->n_stages; i++)
        free(r->stages[i].stage), free(r->stages[i].alone);
    free(r->stages);
    r->samples = NULL;
    r->stages = NULL;
    r->n_samples = r->n_stages = 0;
}
