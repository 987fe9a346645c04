/*
 * infra_run.c: the infrastructure operations ([infra.NAME], infra/infra.h)
 * in a run: checked before anything runs, one runner per load level beside
 * the tiles (its users start at the end of ramp-up and stop at the end of
 * the last phase), each phase's figures turned into stored results, QoS
 * inputs and the infrastructure score, and the final score VMmark 3 weighs
 * from the two halves (scoring/score.h: 0.8 x application + 0.2 x
 * infrastructure). A level that runs one workload alone (--interference)
 * runs no operation. Nothing here prints.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coordinator/run_ctx.h"
#include "scoring/score.h"

#define INFRA_UNIT "ops/h" /* the unit of an operation's reference, as calibrations store it */

/* The folder the runner's folders go under (make_dir below): it exists and
 * leaves room for their names, before anything runs. */
static int check_tmpdir(run_ctx *c, char *err) {
    const char *tmp = getenv("TMPDIR");
    const char *base = tmp && *tmp ? tmp : "/tmp";
    size_t len = strlen(base);
    struct stat st;
    if (!c->o->def->has_sut && c->o->sut_dir) return 0;                 /* under --sut-dir, which the SUT makes */
    if (!c->o->def->has_sut) len += sizeof "/tilebench-sut.XXXXXX" - 1; /* under the embedded SUT's folder */
    if (len + 24 >= sizeof c->infra_dir) {
        tb_seterr(err,
                  "infrastructure operations: TMPDIR is too long a path for their folders (%zu bytes, at most %zu): %s",
                  strlen(base), sizeof c->infra_dir - 25 - (len - strlen(base)), base);
        return -1;
    }
    if (stat(base, &st) != 0) {
        tb_seterr(err, "infrastructure operations: TMPDIR %s: %s", base, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        tb_seterr(err, "infrastructure operations: TMPDIR %s: not a folder", base);
        return -1;
    }
    return 0;
}

int tb_coord_infra_check(run_ctx *c, char *err) {
    const tb_tiledef *def = c->o->def;
    tb_sut_endpoints ep = {0};
    int rc;
    if (def->n_infra == 0) return TB_EXIT_OK;
    if (check_tmpdir(c, err) != 0) return TB_EXIT_USAGE;
    /* the embedded SUT gives PostgreSQL and Redis once it is up: stand-ins
     * until then (the check is of the programs, not of the servers) */
    if (def->has_sut) {
        tb_endpoints_copy(&ep, &def->sut);
    } else {
        tb_endpoints_set(&ep.pg_conninfo, "host=127.0.0.1 dbname=tilebench");
        tb_endpoints_set(&ep.redis_host, "127.0.0.1");
        ep.redis_port = 6379;
    }
    rc = tb_infra_check(def, &ep, err) == 0 ? TB_EXIT_OK : TB_EXIT_USAGE;
    tb_endpoints_free(&ep);
    return rc;
}

void tb_coord_infra_references(run_ctx *c, json_t *refs) {
    const tb_tiledef *def = c->o->def;
    char e[TB_ERR_LEN];
    for (int i = 0; i < def->n_infra; i++) {
        const tb_infra_def *d = &def->infra[i];
        double ref;
        int64_t cal_run;
        char at[32], src[160];
        int r;
        snprintf(c->infra_wl[i], sizeof c->infra_wl[i], "infra.%s", d->name);
        r = c->o->calibrate
                ? 1
                : tb_store_get_calibration(c->store, def->name, c->def_hash, c->infra_wl[i], &ref, &cal_run, at, e);
        c->infra_ref[i] = d->reference;
        if (d->reference > 0)
            snprintf(src, sizeof src, "tile file: %g %s", d->reference, INFRA_UNIT);
        else
            snprintf(src, sizeof src, "none (give reference = OPS_PER_HOUR, or run --calibrate at 1 tile)");
        if (r < 0) tb_log(TB_LOG_WARN, "%s (using the tile file's reference)", e);
        if (r == 0) {
            c->infra_ref[i] = ref;
            snprintf(src, sizeof src, "calibration run %lld (%s): %.4g %s", (long long)cal_run, at, ref, INFRA_UNIT);
            if (c->obs->reference) c->obs->reference(c->obs->arg, c->infra_wl[i], src);
        }
        json_object_set_new(refs, c->infra_wl[i], json_string(src));
    }
}

/* A migrate op moves a tile's kv users on the run's load generator. */
static int kv_switch(void *arg, int tile, const char *host, int port, char *err) {
    run_ctx *c = arg;
    return tb_loadgen_kv_switch(c->lg, tile, host, port, err);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* The runner's folder: under the embedded SUT's run folder, else TMPDIR. */
static int make_dir(run_ctx *c, char *err) {
    const char *tmp = getenv("TMPDIR");
    const char *base = c->sut_started ? c->sut_dir : tmp && *tmp ? tmp : "/tmp";
    if (strlen(base) + 24 >= sizeof c->infra_dir) {
        tb_seterr(err, "infrastructure operations: folder name under %s too long", base);
        return -1;
    }
    snprintf(c->infra_dir, sizeof c->infra_dir, "%.*s/tilebench-infra.XXXXXX", (int)(sizeof c->infra_dir - 24), base);
    if (!mkdtemp(c->infra_dir)) {
        tb_seterr(err, "infrastructure operations: temporary folder %s: %s", c->infra_dir, strerror(errno));
        c->infra_dir[0] = '\0';
        return -1;
    }
    /* run as root, the temporary clusters run as user postgres, which must enter it */
    if (geteuid() == 0) chmod(c->infra_dir, 0711);
    return 0;
}

int tb_coord_infra_begin(run_ctx *c, const tb_level_plan *pl, char *err) {
    tb_infra_level *lv = &c->infra_lv;
    if (c->o->def->n_infra == 0 || pl->workload_mask != 0) return 0;
    if (make_dir(c, err) != 0) return -1;
    memset(lv, 0, sizeof *lv);
    lv->tiles = pl->tiles;
    lv->level = c->levels_done + 1;
    lv->start_us = pl->phase_start_us[0] - c->o->stages.warm_up_us; /* ramp-up's end (pl->ramp_up_us: the stagger) */
    lv->end_us = pl->phase_end_us[pl->n_phases - 1];
    lv->n_phases = pl->n_phases;
    for (int p = 0; p < pl->n_phases; p++) {
        lv->phase_start_us[p] = pl->phase_start_us[p];
        lv->phase_end_us[p] = pl->phase_end_us[p];
    }
    lv->kv_switch = kv_switch;
    lv->kv_switch_arg = c;
    if (!(c->infra = tb_infra_start(c->o->def, &c->ep, c->infra_dir, lv, err))) {
        tb_coord_infra_end(c);
        return -1;
    }
    return 0;
}

static void drop_collected(run_ctx *c) {
    tb_infra_stats_free(c->infra_stats, c->o->def->n_infra);
    tb_infra_outputs_free(c->infra_outs, c->n_infra_outs);
    c->infra_stats = NULL;
    c->infra_outs = NULL;
    c->n_infra_outs = 0;
}

int tb_coord_infra_collect(run_ctx *c, int p, char *err) {
    char e[TB_ERR_LEN];
    drop_collected(c);
    if (!c->infra) return 0;
    if (tb_infra_collect(c->infra, p, &c->infra_stats, &c->infra_outs, &c->n_infra_outs, e) != 0) {
        tb_seterr(err, "infrastructure operations, phase %d: %s", p + 1, e);
        return -1;
    }
    return 0;
}

void tb_coord_infra_end(run_ctx *c) {
    if (c->infra) tb_infra_stop(c->infra);
    c->infra = NULL;
    drop_collected(c);
    if (c->infra_dir[0] && nftw(c->infra_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
        tb_log(TB_LOG_WARN, "remove %s: %s", c->infra_dir, strerror(errno));
    c->infra_dir[0] = '\0';
}

/* Operation i's figures over the phase of lr. */
static void infra_result(run_ctx *c, const tb_level_result *lr, int i, tb_infra_result *r) {
    const tb_infra_def *d = &c->o->def->infra[i];
    const tb_infra_stat *s = &c->infra_stats[i];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", d->name);
    snprintf(r->kind, sizeof r->kind, "%s", tb_infra_kind_name(d->kind));
    r->users = s->users;
    r->ops = s->ops;
    r->errors = s->errors;
    for (int k = 0; k < TB_ERR_NCLASSES && k + 1 < TB_OP_NSTATUS; k++)
        r->errors_by_class[k] = s->err_by_class[k + 1];
    r->count_all = s->count_all;
    r->bytes = s->bytes;
    r->mb_per_s = s->busy_us > 0 && s->bytes > 0 ? (double)s->bytes / ((double)s->busy_us / 1e6) / 1e6 : NAN;
    r->ops_per_hour = tb_score_rate_per_s(s->ops, lr->steady_us) * 3600.0;
    r->reference = c->infra_ref[i];
    r->normalized = r->reference > 0 ? r->ops_per_hour / r->reference : NAN;
    r->hist = s->hist;
}

/* What the ops ended since the previous collect did, pointing at the runner's texts. */
static void infra_outputs(run_ctx *c, tb_coord_infra_phase *ip) {
    ip->n_outs = c->n_infra_outs;
    ip->outs = xcalloc((size_t)ip->n_outs + 1, sizeof *ip->outs);
    for (int k = 0; k < ip->n_outs; k++) {
        const tb_infra_op_output *o = &c->infra_outs[k];
        tb_infra_output *t = &ip->outs[k];
        snprintf(t->name, sizeof t->name, "%s",
                 o->infra >= 0 && o->infra < c->o->def->n_infra ? c->o->def->infra[o->infra].name : "?");
        t->user = o->user;
        t->tile = o->tile;
        t->start_wall_us = o->start_wall_us;
        t->duration_us = o->duration_us;
        t->status = (int)o->status;
        t->exit_code = o->exit_code;
        t->text = o->text ? o->text : "";
    }
}

/* Before the sweep, once the references are known: each operation with no
 * reference, so each level's score is its application score alone (a
 * calibration learns them, and says so when it cannot). */
void tb_coord_infra_say_noref(run_ctx *c) {
    const tb_tiledef *def = c->o->def;
    char msg[512];
    if (c->o->calibrate) return;
    for (int i = 0; i < def->n_infra; i++) {
        if (c->infra_ref[i] > 0) continue;
        c->infra_noref_said = 1;
        snprintf(msg, sizeof msg,
                 "infrastructure operation %s has no reference: the infrastructure score is not known and each "
                 "level's score is its application score alone; give reference = OPS_PER_HOUR in [infra.%s] of %s, "
                 "or learn it with `tilebench run --calibrate` (at 1 tile)",
                 def->infra[i].name, def->infra[i].name, def->path ? def->path : "the tile file");
        tb_coord_say(c, "warning", TB_RUN_MSG_WARNING, msg);
    }
}

void tb_coord_infra_results(run_ctx *c, tb_level_result *lr, tb_coord_infra_phase *ip) {
    const tb_tiledef *def = c->o->def;
    double norm[TB_MAX_INFRA];
    int noref = -1;
    lr->app_score = lr->score;
    lr->has_infra = 0;
    lr->infra_score = NAN;
    if (!c->infra_stats || def->n_infra == 0) return;
    lr->has_infra = 1;
    for (int i = 0; i < def->n_infra; i++) {
        infra_result(c, lr, i, &ip->res[i]);
        norm[i] = ip->res[i].normalized;
        if (!(ip->res[i].reference > 0) && noref < 0) noref = i;
        if (c->o->calibrate && lr->tiles == 1 && c->n_infra_calib < TB_MAX_PHASES)
            c->infra_calib[c->n_infra_calib][i] = ip->res[i].ops_per_hour;
    }
    if (c->o->calibrate && lr->tiles == 1 && c->n_infra_calib < TB_MAX_PHASES) c->n_infra_calib++;
    lr->n_infra = def->n_infra;
    lr->infra = ip->res;
    infra_outputs(c, ip);
    lr->n_infra_outputs = ip->n_outs;
    lr->infra_outputs = ip->outs;
    /* VMmark 3: the infrastructure score is the geometric mean of the
     * operations' normalized throughputs, not summed over tiles */
    if (noref >= 0) return; /* said before the sweep (tb_coord_infra_say_noref) */
    lr->infra_score = tb_score_geomean(norm, def->n_infra);
    lr->score = tb_score_weighted_final(lr->app_score, lr->infra_score);
}

int tb_coord_infra_qos(const run_ctx *c, const tb_level_result *lr, tb_qos_input *q, tb_qos_wl_input *wl) {
    const tb_tiledef *def = c->o->def;
    if (!lr->has_infra) return 0;
    for (int i = 0; i < lr->n_infra; i++) {
        memset(&q[i], 0, sizeof q[i]);
        q[i].workload = c->infra_wl[i];
        q[i].op = tb_infra_kind_name(def->infra[i].kind);
        q[i].hist = lr->infra[i].hist;
        q[i].ops = lr->infra[i].ops;
        q[i].errors = lr->infra[i].errors;
        memset(&wl[i], 0, sizeof wl[i]);
        wl[i].workload = c->infra_wl[i];
        wl[i].throughput = lr->infra[i].ops_per_hour;
        wl[i].reference = lr->infra[i].reference;
    }
    return lr->n_infra;
}

int tb_coord_infra_rule(const tb_qos_rule *r) { return strncmp(r->workload, "infra.", 6) == 0; }

/* An operation that completed no op at 1 tile has no throughput to learn:
 * it gets no reference, and a warning says how to get one. */
static void say_no_calibration(run_ctx *c, int i) {
    const tb_tiledef *def = c->o->def;
    char msg[768];
    snprintf(msg, sizeof msg,
             "calibration: %s completed no successful operation at 1 tile, so it has no reference (its ops' "
             "output is stored with the run: `tilebench report`); fix its command, then run --calibrate again, "
             "or give reference = OPS_PER_HOUR in [infra.%s] of %s",
             c->infra_wl[i], def->infra[i].name, def->path ? def->path : "the tile file");
    tb_coord_say(c, "warning", TB_RUN_MSG_WARNING, msg);
}

int tb_coord_infra_calibrate(run_ctx *c, char *err) {
    const tb_tiledef *def = c->o->def;
    char msg[TB_ERR_LEN];
    int rc = 0;
    for (int i = 0; c->o->calibrate && i < def->n_infra && c->n_infra_calib > 0; i++) {
        double v[TB_MAX_PHASES], ref;
        char e[TB_ERR_LEN];
        for (int p = 0; p < c->n_infra_calib; p++)
            v[p] = c->infra_calib[p][i];
        ref = tb_score_median(v, c->n_infra_calib);
        if (!(ref > 0) || !isfinite(ref)) {
            say_no_calibration(c, i);
            continue;
        }
        if (tb_store_put_calibration(c->store, c->run_id, def->name, c->def_hash, c->infra_wl[i], ref, INFRA_UNIT, e) !=
            0) {
            if (rc == 0) snprintf(err, TB_ERR_LEN, "%s", e); /* the others are still stored */
            rc = -1;
            continue;
        }
        snprintf(msg, sizeof msg, "calibration: %s reference %.4g %s (tile file: %g) for tile %s [%s]", c->infra_wl[i],
                 ref, INFRA_UNIT, def->infra[i].reference, def->name, c->def_hash);
        tb_coord_say(c, "info", TB_RUN_MSG_INFO, msg);
    }
    return rc;
}

void tb_coord_infra_phase_free(tb_coord_infra_phase *ip) {
    free(ip->outs);
    ip->outs = NULL;
    ip->n_outs = 0;
}
