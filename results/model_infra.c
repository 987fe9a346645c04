/*
 * model_infra.c: the model reader's part for infrastructure operations
 * (schema 10): each level's application and infrastructure scores, its
 * operations (table infra, with TB_MODEL_OP_HISTS their duration histograms)
 * and the ops it kept (table infra_outputs).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "results/model_sql.h"

static int read_scores(tb_model_ctx *c, int64_t level_id, tb_model_level *lv) {
    sqlite3_stmt *st = NULL;
    int rc;
    lv->app_score = lv->score;
    lv->infra_score = NAN;
    if (tb_model_prep(c, "SELECT app_score, infra_score FROM levels WHERE id = ?1", &st) != 0) return -1;
    sqlite3_bind_int64(st, 1, level_id);
    if ((rc = tb_model_next(c, st)) == 1) {
        /* a run stored before schema 10 has no application score: its score is one */
        if (sqlite3_column_type(st, 0) != SQLITE_NULL) lv->app_score = tb_model_col_real(st, 0);
        lv->infra_score = tb_model_col_real(st, 1);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc < 0 ? -1 : 0;
}

/* The operation's durations (infra.hist, TB_MODEL_OP_HISTS); an unreadable
 * histogram is left NULL with its error kept for the caller to report. */
static void read_infra_hist(sqlite3_stmt *st, int col, tb_model_infra *x) {
    const void *blob = sqlite3_column_blob(st, col);
    int blen = sqlite3_column_bytes(st, col);
    char herr[TB_ERR_LEN];
    if (!blob || blen <= 0) return;
    if (tb_hist_decode(blob, (size_t)blen, &x->hist, herr) != 0) {
        x->hist = NULL;
        x->hist_error = xstrdup(herr);
    }
}

static int read_infra(tb_model_ctx *c, int64_t level_id, tb_model_level *lv, int flags) {
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;
    if (tb_model_prep(c,
                      "SELECT name, kind, users, ops, errors, err_connect, err_io, err_timeout, err_server,"
                      " err_content, count_all, bytes, mb_per_s, ops_per_hour, reference, normalized, mean_ms,"
                      " p50_ms, p95_ms, p99_ms, max_ms, hist FROM infra WHERE level_id = ?1 ORDER BY idx",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, level_id);
    while ((rc = tb_model_next(c, st)) == 1) {
        tb_model_infra *x;
        lv->infra = tb_grow(lv->infra, lv->n_infra, &cap, sizeof *lv->infra);
        x = &lv->infra[lv->n_infra++];
        memset(x, 0, sizeof *x);
        x->name = tb_model_col_str(c, st, 0);
        x->kind = tb_model_col_str(c, st, 1);
        x->users = sqlite3_column_int64(st, 2);
        x->ops = sqlite3_column_int64(st, 3);
        x->errors = sqlite3_column_int64(st, 4);
        for (int k = 0; k < TB_ERR_NCLASSES; k++)
            x->errors_by_class[k] = sqlite3_column_int64(st, 5 + k);
        x->count_all = sqlite3_column_int64(st, 10);
        x->bytes = sqlite3_column_int64(st, 11);
        x->mb_per_s = tb_model_col_real(st, 12);
        x->ops_per_hour = tb_model_col_real(st, 13);
        x->reference = tb_model_col_real(st, 14);
        x->normalized = tb_model_col_real(st, 15);
        x->mean_ms = tb_model_col_real(st, 16);
        x->p50_ms = tb_model_col_real(st, 17);
        x->p95_ms = tb_model_col_real(st, 18);
        x->p99_ms = tb_model_col_real(st, 19);
        x->max_ms = tb_model_col_real(st, 20);
        if (flags & TB_MODEL_OP_HISTS) read_infra_hist(st, 21, x);
    }
    sqlite3_finalize(st);
    lv->has_infra = lv->n_infra > 0;
    return rc;
}

static int read_outputs(tb_model_ctx *c, int64_t level_id, tb_model_level *lv) {
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;
    if (tb_model_prep(c,
                      "SELECT name, user, tile, started_at, duration_ms, status, exit_code, output FROM"
                      " infra_outputs WHERE level_id = ?1 ORDER BY rowid",
                      &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, level_id);
    while ((rc = tb_model_next(c, st)) == 1) {
        tb_model_infra_output *o;
        lv->infra_outputs = tb_grow(lv->infra_outputs, lv->n_infra_outputs, &cap, sizeof *lv->infra_outputs);
        o = &lv->infra_outputs[lv->n_infra_outputs++];
        o->name = tb_model_col_str(c, st, 0);
        o->user = sqlite3_column_int64(st, 1);
        o->tile = sqlite3_column_int64(st, 2);
        o->started_at = tb_model_col_str(c, st, 3);
        o->duration_ms = tb_model_col_real(st, 4);
        o->status = tb_model_col_str(c, st, 5);
        o->exit_code = tb_model_col_int(st, 6);
        o->output = tb_model_col_str(c, st, 7);
        if (!o->output) o->output = xstrdup("");
    }
    sqlite3_finalize(st);
    return rc;
}

int tb_model_read_level_infra(tb_model_ctx *c, int64_t level_id, tb_model_level *lv, int flags) {
    if (read_scores(c, level_id, lv) != 0 || read_infra(c, level_id, lv, flags) != 0 ||
        read_outputs(c, level_id, lv) != 0)
        return -1;
    return 0;
}

void tb_model_free_level_infra(tb_model_level *lv) {
    for (size_t i = 0; i < lv->n_infra; i++) {
        free(lv->infra[i].name), free(lv->infra[i].kind), free(lv->infra[i].hist_error);
        tb_hist_free(lv->infra[i].hist);
    }
    free(lv->infra);
    for (size_t i = 0; i < lv->n_infra_outputs; i++) {
        tb_model_infra_output *o = &lv->infra_outputs[i];
        free(o->name), free(o->started_at), free(o->status), free(o->output);
    }
    free(lv->infra_outputs);
    lv->infra = NULL;
    lv->infra_outputs = NULL;
    lv->n_infra = lv->n_infra_outputs = 0;
}
