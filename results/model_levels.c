/*
 * model_levels.c: the model reader's part for load levels: each stored phase
 * with its QoS verdicts, workloads and their ops (model.h), and on request
 * each level's latency histograms merged over its tiles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/model_sql.h"
#include "common/buf.h"

/* The statements run once per level, prepared once per report. */
typedef struct level_stmts {
    sqlite3_stmt *levels, *qos, *workloads, *ops, *groups, *agents;
} level_stmts;

/* The level's rules (tile 0) and each tile's own verdict on the same rules. */
static int read_level_qos(tb_model_ctx *c, level_stmts *ls, int64_t level_id, tb_model_level *lv) {
    size_t cap = 0, tcap = 0;
    int rc;
    sqlite3_reset(ls->qos);
    sqlite3_bind_int64(ls->qos, 1, level_id);
    while ((rc = tb_model_next(c, ls->qos)) == 1) {
        sqlite3_stmt *st = ls->qos;
        int tile = sqlite3_column_int(st, 5);
        tb_model_qos *q;
        if (tile > 0) {
            lv->tile_qos = tb_grow(lv->tile_qos, lv->n_tile_qos, &tcap, sizeof *lv->tile_qos);
            q = &lv->tile_qos[lv->n_tile_qos++];
        } else {
            lv->qos = tb_grow(lv->qos, lv->n_qos, &cap, sizeof *lv->qos);
            q = &lv->qos[lv->n_qos++];
        }
        q->tile = tile;
        q->rule = tb_model_col_str(c, st, 0);
        q->observed = tb_model_col_real(st, 1);
        q->limit = tb_model_col_real(st, 2);
        q->judged = sqlite3_column_int(st, 6) != 0;
        q->pass = q->judged && sqlite3_column_int(st, 3) != 0;
        q->ops = tb_model_col_int(st, 7);
        q->min_ops = tb_model_col_int(st, 8);
        q->reason = tb_model_col_str(c, st, 4);
    }
    return rc;
}

/* Column of the ops query where err_connect .. err_content start. */
#define OPS_ERR_COL  11
#define OPS_UNC_COL  16 /* hist_uncorrected */
#define OPS_HIST_COL 17 /* hist, then metric */

/* The op's corrected histogram (TB_MODEL_OP_HISTS); an unreadable one is
 * left NULL with its error kept for the caller to report. */
static void read_op_hist(sqlite3_stmt *st, tb_model_op *op) {
    const void *blob = sqlite3_column_blob(st, OPS_HIST_COL);
    int blen = sqlite3_column_bytes(st, OPS_HIST_COL);
    char herr[TB_ERR_LEN];
    if (!blob || blen <= 0) return;
    if (tb_hist_decode(blob, (size_t)blen, &op->hist, herr) != 0) {
        op->hist = NULL;
        op->hist_error = xstrdup(herr);
    }
}

/* An op's latency from the actual send (ops.hist_uncorrected), beside its
 * own corrected figures: NaN where it has no such histogram or it is empty;
 * not readable when the blob does not decode. keep: the histogram stays in
 * op->hist_uncorrected (TB_MODEL_OP_HISTS). */
static void read_uncorrected(sqlite3_stmt *st, tb_model_op *op, int keep) {
    static const double pcts[TB_MODEL_UNC_PCTS] = {50, 90, 95, 99, 99.9};
    const void *blob = sqlite3_column_blob(st, OPS_UNC_COL);
    int blen = sqlite3_column_bytes(st, OPS_UNC_COL), have;
    tb_hist *h = NULL;
    char herr[TB_ERR_LEN];
    op->unc_mean_ms = op->unc_max_ms = NAN;
    for (int i = 0; i < TB_MODEL_UNC_PCTS; i++)
        op->unc_pct_ms[i] = NAN;
    if (blob && blen > 0 && tb_hist_decode(blob, (size_t)blen, &h, herr) != 0) {
        tb_log(TB_LOG_WARN, "op %s: stored uncorrected histogram unreadable: %s", sqlite3_column_text(st, 0), herr);
        op->uncorrected_readable = 0;
        return;
    }
    op->uncorrected_readable = 1;
    have = h && tb_hist_count(h) > 0;
    if (have) {
        op->unc_mean_ms = tb_hist_mean(h) / 1000.0;
        for (int i = 0; i < TB_MODEL_UNC_PCTS; i++)
            op->unc_pct_ms[i] = (double)tb_hist_percentile(h, pcts[i]) / 1000.0;
        op->unc_max_ms = (double)tb_hist_max(h) / 1000.0;
    }
    if (keep)
        op->hist_uncorrected = h;
    else
        tb_hist_free(h);
}

static int read_workload_ops(tb_model_ctx *c, level_stmts *ls, int64_t workload_id, tb_model_workload *w, int flags) {
    size_t cap = 0;
    int rc;
    w->classes_known = 1;
    sqlite3_reset(ls->ops);
    sqlite3_bind_int64(ls->ops, 1, workload_id);
    while ((rc = tb_model_next(c, ls->ops)) == 1) {
        sqlite3_stmt *st = ls->ops;
        tb_model_op *op;
        w->ops_list = tb_grow(w->ops_list, w->n_ops, &cap, sizeof *w->ops_list);
        op = &w->ops_list[w->n_ops++];
        op->name = tb_model_col_str(c, st, 0);
        op->count = tb_model_col_int(st, 1);
        op->errors = tb_model_col_int(st, 2);
        op->count_all = tb_model_col_int(st, 3);
        op->mean_ms = tb_model_col_real(st, 4);
        op->p50_ms = tb_model_col_real(st, 5);
        op->p90_ms = tb_model_col_real(st, 6);
        op->p95_ms = tb_model_col_real(st, 7);
        op->p99_ms = tb_model_col_real(st, 8);
        op->p999_ms = tb_model_col_real(st, 9);
        op->max_ms = tb_model_col_real(st, 10);
        op->classes_known = sqlite3_column_type(st, OPS_ERR_COL) != SQLITE_NULL;
        if (!op->classes_known)
            w->classes_known = 0;
        else
            for (int k = 0; k < TB_ERR_NCLASSES; k++) {
                int64_t v = sqlite3_column_int64(st, OPS_ERR_COL + k);
                op->errors_by_class[k] = v;
                w->errors_by_class[k] += v > 0 ? (uint64_t)v : 0;
            }
        read_uncorrected(st, op, (flags & TB_MODEL_OP_HISTS) != 0);
        op->metric = sqlite3_column_int(st, OPS_HIST_COL + 1) != 0;
        if (flags & TB_MODEL_OP_HISTS) read_op_hist(st, op);
    }
    return rc;
}

static int read_level_workloads(tb_model_ctx *c, level_stmts *ls, int64_t level_id, tb_model_level *lv, int flags) {
    size_t cap = 0;
    int rc;
    sqlite3_reset(ls->workloads);
    sqlite3_bind_int64(ls->workloads, 1, level_id);
    /* The ops query runs while this one is positioned on a row; both are
     * plain reads of one snapshot, which SQLite allows. */
    while ((rc = tb_model_next(c, ls->workloads)) == 1) {
        sqlite3_stmt *st = ls->workloads;
        tb_model_workload *w;
        lv->workloads = tb_grow(lv->workloads, lv->n_workloads, &cap, sizeof *lv->workloads);
        w = &lv->workloads[lv->n_workloads++];
        w->id = sqlite3_column_int64(st, 0);
        w->name = tb_model_col_str(c, st, 1);
        w->tile = sqlite3_column_int64(st, 2);
        w->ops = tb_model_col_int(st, 3);
        w->errors = tb_model_col_int(st, 4);
        w->throughput = tb_model_col_real(st, 5);
        w->unit = tb_model_col_str(c, st, 6);
        w->reference = tb_model_col_real(st, 7);
        w->normalized = tb_model_col_real(st, 8);
        if (read_workload_ops(c, ls, w->id, w, flags) != 0) return -1;
    }
    return rc;
}

/* The group of (workload, op) in lv, added when new. */
static tb_model_op_group *group_of(tb_model_level *lv, size_t *cap, const char *w, const char *o) {
    tb_model_op_group *x;
    for (size_t i = 0; i < lv->n_groups; i++)
        if (strcmp(lv->groups[i].workload, w) == 0 && strcmp(lv->groups[i].op, o) == 0) return &lv->groups[i];
    lv->groups = tb_grow(lv->groups, lv->n_groups, cap, sizeof *lv->groups);
    x = &lv->groups[lv->n_groups++];
    x->workload = xstrdup(w);
    x->op = xstrdup(o);
    x->classes_known = 1;
    x->hist = tb_hist_new();
    return x;
}

/* The level's ops merged over its tiles' stored histograms (a percentile of
 * the union, not an average of percentiles), in the order stored. An
 * unreadable histogram is logged and counted as empty. */
static int read_level_groups(tb_model_ctx *c, level_stmts *ls, int64_t level_id, tb_model_level *lv) {
    sqlite3_stmt *st = ls->groups;
    size_t cap = 0;
    int rc;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, level_id);
    while ((rc = tb_model_next(c, st)) == 1) {
        const char *w = (const char *)sqlite3_column_text(st, 0), *o = (const char *)sqlite3_column_text(st, 1);
        const void *blob = sqlite3_column_blob(st, 4);
        int blen = sqlite3_column_bytes(st, 4);
        tb_model_op_group *x;
        w = w ? w : "";
        o = o ? o : "";
        x = group_of(lv, &cap, w, o);
        x->count += (uint64_t)sqlite3_column_int64(st, 2);
        x->errors += (uint64_t)sqlite3_column_int64(st, 3);
        if (sqlite3_column_type(st, 5) == SQLITE_NULL)
            x->classes_known = 0;
        else
            for (int k = 0; k < TB_ERR_NCLASSES; k++)
                x->errors_by_class[k] += (uint64_t)sqlite3_column_int64(st, 5 + k);
        if (blob && blen > 0) {
            tb_hist *h = NULL;
            char herr[TB_ERR_LEN];
            if (tb_hist_decode(blob, (size_t)blen, &h, herr) == 0) {
                tb_hist_merge(x->hist, h);
                tb_hist_free(h);
            } else {
                tb_log(TB_LOG_WARN, "level %lld %s.%s: stored histogram unreadable: %s", (long long)level_id, w, o,
                       herr);
            }
        }
    }
    return rc;
}

/* The load-generator agents that ran the phase, by name. */
static int read_level_agents(tb_model_ctx *c, level_stmts *ls, int64_t level_id, tb_model_level *lv) {
    size_t cap = 0;
    int rc;
    sqlite3_reset(ls->agents);
    sqlite3_bind_int64(ls->agents, 1, level_id);
    while ((rc = tb_model_next(c, ls->agents)) == 1) {
        sqlite3_stmt *st = ls->agents;
        tb_model_agent *a;
        lv->agents = tb_grow(lv->agents, lv->n_agents, &cap, sizeof *lv->agents);
        a = &lv->agents[lv->n_agents++];
        a->name = tb_model_col_str(c, st, 0);
        a->host = tb_model_col_str(c, st, 1);
        a->tile_lo = tb_model_col_int(st, 2);
        a->tile_hi = tb_model_col_int(st, 3);
        a->threads = sqlite3_column_int64(st, 4);
        a->users = sqlite3_column_int64(st, 5);
        a->ops = tb_model_col_int(st, 6);
        a->errors = tb_model_col_int(st, 7);
        a->cpu_s = tb_model_col_real(st, 8);
        a->stall_max_us = tb_model_col_int(st, 9);
        a->stall_p99_us = tb_model_col_int(st, 10);
        a->clock_offset_us = tb_model_col_int(st, 11);
        a->clock_bound_us = tb_model_col_int(st, 12);
        a->lost_at = tb_model_col_str(c, st, 13);
    }
    return rc;
}

static int prepare_level_stmts(tb_model_ctx *c, level_stmts *ls, int flags) {
    return tb_model_prep(
               c,
               "SELECT id, tiles, phase, score, avg_watts, ppkw, qos_pass, valid, invalid_reason, steady_start,"
               " steady_end, steady_s, samples_total, samples_bad, cpu_util_pct, avg_freq_mhz, repeat,"
               " user_pct, nice_pct, sys_pct, idle_pct, iowait_pct, irq_pct, softirq_pct, steal_pct,"
               " freq_source, telemetry_samples, cstate_residency_json, qos_not_judged, alone,"
               " (SELECT max(uncertainty_pct) FROM power_samples p WHERE p.level_id = levels.id),"
               " (SELECT avg(uncertainty_pct) FROM power_samples p WHERE p.level_id = levels.id),"
               " other_cpu_pct, sut_processes"
               " FROM levels WHERE run_id = ?1 ORDER BY repeat, tiles, alone IS NULL, id",
               &ls->levels) != 0 ||
                   tb_model_prep(c,
                                 "SELECT rule, observed, \"limit\", pass, reason, tile, judged, ops, min_ops FROM qos"
                                 " WHERE level_id = ?1 ORDER BY rowid",
                                 &ls->qos) != 0 ||
                   tb_model_prep(c,
                                 "SELECT id, name, tile, ops, errors, throughput, unit, reference, normalized FROM"
                                 " workloads WHERE level_id = ?1 ORDER BY tile, id",
                                 &ls->workloads) != 0 ||
                   tb_model_prep(c,
                                 "SELECT name, count, errors, count_all, mean_ms, p50_ms, p90_ms, p95_ms, p99_ms,"
                                 " p999_ms, max_ms, err_connect, err_io, err_timeout, err_server, err_content,"
                                 " hist_uncorrected, hist, metric FROM ops WHERE workload_id = ?1 ORDER BY rowid",
                                 &ls->ops) != 0 ||
                   ((flags & TB_MODEL_MERGED_LATENCY) &&
                    tb_model_prep(c,
                                  "SELECT w.name, o.name, o.count, o.errors, o.hist, o.err_connect, o.err_io,"
                                  " o.err_timeout, o.err_server, o.err_content FROM workloads w"
                                  " JOIN ops o ON o.workload_id = w.id WHERE w.level_id = ?1 ORDER BY w.id, o.rowid",
                                  &ls->groups) != 0) ||
                   (!(flags & TB_MODEL_VERDICTS_ONLY) &&
                    tb_model_prep(c,
                                  "SELECT name, host, tile_lo, tile_hi, threads, users, ops, errors, cpu_s,"
                                  " stall_max_us, stall_p99_us, clock_offset_us, clock_bound_us, lost_at"
                                  " FROM level_agents WHERE level_id = ?1 ORDER BY name, rowid",
                                  &ls->agents) != 0)
               ? -1
               : 0;
}

/* The levels row's own columns into lv. */
static void level_from_row(const tb_model_ctx *c, sqlite3_stmt *st, tb_model_level *lv, int flags) {
    lv->id = sqlite3_column_int64(st, 0);
    lv->tiles = sqlite3_column_int64(st, 1);
    lv->phase = sqlite3_column_int64(st, 2);
    lv->repeat = sqlite3_column_int64(st, 16);
    lv->score = tb_model_col_real(st, 3);
    lv->avg_watts = tb_model_col_real(st, 4);
    lv->ppkw = tb_model_col_real(st, 5);
    lv->qos_pass = sqlite3_column_int(st, 6) != 0;
    lv->qos_not_judged = sqlite3_column_int(st, 28);
    lv->valid = sqlite3_column_int(st, 7) != 0;
    lv->invalid_reason = tb_model_col_str(c, st, 8);
    lv->alone = tb_model_col_str(c, st, 29);
    if (lv->alone && !lv->alone[0]) {
        free(lv->alone);
        lv->alone = NULL;
    }
    lv->steady_start = tb_model_col_str(c, st, 9);
    lv->steady_end = tb_model_col_str(c, st, 10);
    lv->steady_s = tb_model_col_real(st, 11);
    lv->samples_total = tb_model_col_int(st, 12);
    lv->samples_bad = tb_model_col_int(st, 13);
    lv->max_uncertainty_pct = tb_model_col_real(st, 30);
    lv->mean_uncertainty_pct = tb_model_col_real(st, 31);
    lv->other_cpu_pct = tb_model_col_real(st, 32);
    lv->sut_processes = sqlite3_column_type(st, 33) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 33);
    if (flags & TB_MODEL_VERDICTS_ONLY) {
        tb_model_telemetry *t = &lv->telemetry;
        t->cpu_util_pct = t->avg_freq_mhz = NAN;
        for (int m = 0; m < TB_MODEL_CPU_MODES; m++)
            t->mode_pct[m] = NAN;
        t->cstate_residency_pct.kv = xcalloc(1, sizeof *t->cstate_residency_pct.kv);
        return;
    }
    tb_model_telemetry_from_levels_row(c, st, &lv->telemetry);
}

int tb_model_read_levels(tb_model_ctx *c, tb_model_run *r, int flags) {
    level_stmts ls = {NULL, NULL, NULL, NULL, NULL, NULL};
    size_t cap = 0;
    int rc = -1;
    if (prepare_level_stmts(c, &ls, flags) != 0) goto out;
    sqlite3_bind_int64(ls.levels, 1, r->id);
    while ((rc = tb_model_next(c, ls.levels)) == 1) {
        int64_t level_id = sqlite3_column_int64(ls.levels, 0);
        tb_model_level *lv;
        r->levels = tb_grow(r->levels, r->n_levels, &cap, sizeof *r->levels);
        lv = &r->levels[r->n_levels++];
        level_from_row(c, ls.levels, lv, flags);
        if (read_level_qos(c, &ls, level_id, lv) != 0 ||
            (!(flags & TB_MODEL_VERDICTS_ONLY) && read_level_workloads(c, &ls, level_id, lv, flags) != 0) ||
            (ls.groups && read_level_groups(c, &ls, level_id, lv) != 0) ||
            (ls.agents && read_level_agents(c, &ls, level_id, lv) != 0) ||
            tb_model_read_level_infra(c, level_id, lv, flags) != 0) {
            rc = -1;
            break;
        }
    }
out:
    sqlite3_finalize(ls.levels);
    sqlite3_finalize(ls.qos);
    sqlite3_finalize(ls.workloads);
    sqlite3_finalize(ls.ops);
    sqlite3_finalize(ls.groups);
    sqlite3_finalize(ls.agents);
    return rc == 0 ? 0 : -1;
}
