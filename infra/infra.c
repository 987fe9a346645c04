/*
 * infra.c: the runner of infrastructure operations (infra/infra.h): the
 * infrastructure users (one thread each), what each op did, counted by
 * phase with Faban's rule, and the kinds' checks and per-level state.
 */
#include "infra/infra.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "infra/infra_internal.h"
#include "tiles/ini_text.h"

/* How long after a phase's end tb_infra_collect waits for an op of that
 * phase whose end is not yet recorded (its user is between the op's end and
 * the record): an op still in flight then ended after the phase did. */
#define COLLECT_GRACE_US 1000000u

/* The kinds, by tb_infra_kind. */
static const infra_kind_vt *const kinds[TB_INFRA_NKINDS] = {
    [TB_INFRA_DEPLOY] = &infra_deploy_vt,
    [TB_INFRA_BACKUP] = &infra_backup_vt,
    [TB_INFRA_MIGRATE] = &infra_migrate_vt,
    [TB_INFRA_COMMAND] = &infra_command_vt,
};

typedef struct phase_acc {
    uint64_t ops, errors, err_by_class[TB_OP_NSTATUS];
    uint64_t bytes, busy_us;
    tb_hist *hist; /* NULL until the phase's first op */
} phase_acc;

typedef struct infra_op {
    const tb_infra_def *d;
    const infra_kind_vt *vt;
    void *state; /* level_begin's */
    int users;
    phase_acc ph[TB_MAX_PHASES];
    uint64_t count_all;
    int kept_ok, kept_failed;
} infra_op;

typedef struct infra_user {
    tb_infra *r;
    int op, u;
    pthread_t th;
    int started;
    uint64_t cur_start; /* monotonic µs the op in flight began; 0: none */
} infra_user;

struct tb_infra {
    const tb_tiledef *def;
    const tb_sut_endpoints *ep;
    const char *dir;
    tb_infra_level lv;
    volatile sig_atomic_t stop;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC: stop, and an op's end */
    int n_ops;
    infra_op *ops;
    int n_users;
    infra_user *users;
    tb_infra_op_output *outs; /* ended since the previous collect */
    int n_outs;
    size_t cap_outs;
};

int tb_infra_users(const tb_infra_def *d, int tiles) {
    int per = d->tiles_per_user > 0 ? d->tiles_per_user : 1;
    int n = (tiles + per - 1) / per;
    return n > 0 ? n : 1;
}

/* The kind's vtable, or NULL with err when this build has none. */
static const infra_kind_vt *kind_of(const tb_infra_def *d, char *err) {
    const infra_kind_vt *vt = d->kind >= 0 && d->kind < TB_INFRA_NKINDS ? kinds[d->kind] : NULL;
    if (!vt) {
        const char *k = tb_infra_kind_name(d->kind);
        tb_seterr(err, "[infra.%s] kind: %s: not built into this tilebench", d->name, k ? k : "?");
    }
    return vt;
}

int tb_infra_check(const tb_tiledef *def, const tb_sut_endpoints *ep, char *err) {
    for (int i = 0; i < def->n_infra; i++) {
        const tb_infra_def *d = &def->infra[i];
        const infra_kind_vt *vt = kind_of(d, err);
        char e[TB_ERR_LEN];
        if (!vt) return -1;
        if (vt->check && vt->check(d, ep, e) != 0) {
            if (d->file)
                tb_seterr(err, "%s:%d: [infra.%s] %s", d->file, d->line, d->name, e);
            else
                tb_seterr(err, "[infra.%s] %s", d->name, e);
            return -1;
        }
    }
    return 0;
}

/* Waits until monotonic time t or stop; 1 when stopped. */
static int wait_until(tb_infra *r, uint64_t t) {
    pthread_mutex_lock(&r->mu);
    while (!r->stop && tb_now_us() < t) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t left = t - tb_now_us(), step = left < 200000 ? left : 200000;
        ts.tv_sec += (time_t)(step / 1000000);
        ts.tv_nsec += (long)(step % 1000000) * 1000;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    int stopped = r->stop != 0;
    pthread_mutex_unlock(&r->mu);
    return stopped;
}

/* Keeps what op did among the level's outputs. Under r->mu. */
static void keep_output(tb_infra *r, const infra_user *us, int tile, int64_t wall, uint64_t dur, infra_op_out *out) {
    tb_infra_op_output *o;
    r->outs = tb_grow(r->outs, (size_t)r->n_outs, &r->cap_outs, sizeof *r->outs);
    o = &r->outs[r->n_outs++];
    o->infra = us->op;
    o->user = us->u;
    o->tile = tile;
    o->start_wall_us = wall;
    o->duration_us = dur;
    o->status = out->status;
    o->exit_code = out->exit_code;
    /* what a command printed may hold a password (PGPASSWORD=..., a URI): kept redacted,
     * by the rules of the stored tile text */
    o->text = tb_ini_redact(tb_buf_str(&out->text), out->text.len, NULL);
}

/* Records one op that ran from start to end (monotonic µs). An op cut short
 * by the level's end or by tb_infra_stop is not an op: nothing is counted. */
static void record(tb_infra *r, infra_user *us, int tile, uint64_t start, uint64_t end, int64_t wall, int cut,
                   infra_op_out *out) {
    infra_op *op = &r->ops[us->op];
    int ok = out->status == TB_OP_OK;
    pthread_mutex_lock(&r->mu);
    us->cur_start = 0;
    if (!cut) {
        op->count_all++;
        for (int p = 0; p < r->lv.n_phases; p++) {
            phase_acc *a = &op->ph[p];
            if (start < r->lv.phase_start_us[p] || start >= r->lv.phase_end_us[p]) continue;
            if (end >= r->lv.phase_end_us[p]) break; /* Faban's rule: it must end in the phase too */
            if (!a->hist) a->hist = tb_hist_new();
            tb_hist_record(a->hist, end - start);
            if (ok) {
                a->ops++;
                if (out->bytes) a->bytes += out->bytes, a->busy_us += out->busy_us ? out->busy_us : end - start;
            } else {
                a->errors++;
                a->err_by_class[out->status < TB_OP_NSTATUS ? out->status : TB_OP_ERR_SERVER]++;
            }
            break;
        }
        if (ok ? op->kept_ok < TB_INFRA_KEEP_OK : op->kept_failed < TB_INFRA_KEEP_FAILED) {
            if (ok)
                op->kept_ok++;
            else
                op->kept_failed++;
            keep_output(r, us, tile, wall, end - start, out);
        }
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* One op of user us on tile: its own folder, the kind's run, the record. */
static void run_one(infra_user *us, int tile, uint64_t seq) {
    tb_infra *r = us->r;
    infra_op *op = &r->ops[us->op];
    const tb_infra_def *d = op->d;
    char dir[4096];
    infra_op_out out;
    infra_op_ctx c;
    uint64_t start = tb_now_us(), budget = d->timeout_us, end;
    int64_t wall = tb_wall_us();
    int clipped = 0;
    if (start + budget > r->lv.end_us) budget = r->lv.end_us > start ? r->lv.end_us - start : 1, clipped = 1;
    memset(&out, 0, sizeof out);
    out.exit_code = -1;
    tb_buf_init(&out.text, d->output_cap ? d->output_cap : TB_INFRA_DEFAULT_OUTPUT_CAP);
    pthread_mutex_lock(&r->mu);
    us->cur_start = start;
    pthread_mutex_unlock(&r->mu);
    snprintf(dir, sizeof dir, "%s/%s.u%d.%llu", r->dir, d->name, us->u, (unsigned long long)seq);
    if (mkdir(dir, 0711) != 0) {
        out.status = TB_OP_ERR_IO;
        tb_buf_putf(&out.text, "cannot make the op's folder %s: %s", dir, strerror(errno));
        dir[0] = '\0'; /* not ours: never removed */
    } else {
        memset(&c, 0, sizeof c);
        c.d = d;
        c.ep = r->ep;
        c.lv = &r->lv;
        c.dir = dir;
        c.user = us->u;
        c.tile = tile;
        c.timeout_us = budget;
        c.stop = &r->stop;
        c.state = op->state;
        op->vt->run(&c, &out);
    }
    end = tb_now_us();
    /* the op's end is when its kind is done; removing the folder is the runner's */
    record(r, us, tile, start, end, wall, out.status != TB_OP_OK && (r->stop || (clipped && end >= r->lv.end_us)),
           &out);
    if (dir[0] && infra_remove_tree(dir) != 0) tb_log(TB_LOG_WARN, "infra: cannot remove %s: %s", dir, strerror(errno));
    tb_buf_free(&out.text);
}

static void *user_main(void *arg) {
    infra_user *us = arg;
    tb_infra *r = us->r;
    const tb_infra_def *d = r->ops[us->op].d;
    int tiles = r->lv.tiles > 0 ? r->lv.tiles : 1, per = d->tiles_per_user > 0 ? d->tiles_per_user : 1;
    int lo = us->u * per + 1, hi = (us->u + 1) * per < tiles ? (us->u + 1) * per : tiles, tile;
    uint64_t seq = 0;
    if (lo > tiles) lo = hi = tiles;
    tile = lo;
    if (wait_until(r, r->lv.start_us)) return NULL;
    while (!r->stop && tb_now_us() < r->lv.end_us) {
        run_one(us, tile, seq++);
        tile = tile < hi ? tile + 1 : lo;
        if (d->think_us && wait_until(r, tb_now_us() + d->think_us)) break;
    }
    return NULL;
}

static void free_runner(tb_infra *r) {
    for (int i = 0; i < r->n_ops; i++)
        for (int p = 0; p < TB_MAX_PHASES; p++)
            tb_hist_free(r->ops[i].ph[p].hist);
    tb_infra_outputs_free(r->outs, r->n_outs);
    free(r->ops);
    free(r->users);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

static void init_sync(tb_infra *r) {
    pthread_condattr_t ca;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
}

/* Each operation's kind and per-level state; its users' slots. */
static int begin_ops(tb_infra *r, char *err) {
    int k = 0;
    for (int i = 0; i < r->n_ops; i++) {
        infra_op *op = &r->ops[i];
        char e[TB_ERR_LEN];
        op->d = &r->def->infra[i];
        if (!(op->vt = kind_of(op->d, err))) return -1;
        if (op->vt->level_begin && !(op->state = op->vt->level_begin(op->d, r->ep, &r->lv, r->dir, e))) {
            tb_seterr(err, "[infra.%s] %s", op->d->name, e);
            return -1;
        }
        op->users = tb_infra_users(op->d, r->lv.tiles);
        r->n_users += op->users;
    }
    r->users = xcalloc((size_t)(r->n_users ? r->n_users : 1), sizeof *r->users);
    for (int i = 0; i < r->n_ops; i++)
        for (int u = 0; u < r->ops[i].users; u++, k++)
            r->users[k].r = r, r->users[k].op = i, r->users[k].u = u;
    return 0;
}

tb_infra *tb_infra_start(const tb_tiledef *def, const tb_sut_endpoints *ep, const char *dir, const tb_infra_level *lv,
                         char *err) {
    tb_infra *r = xcalloc(1, sizeof *r);
    if (lv->n_phases < 0 || lv->n_phases > TB_MAX_PHASES) {
        tb_seterr(err, "infra: %d phases (at most %d)", lv->n_phases, TB_MAX_PHASES);
        free(r);
        return NULL;
    }
    r->def = def;
    r->ep = ep;
    r->dir = dir;
    r->lv = *lv;
    init_sync(r);
    r->n_ops = def->n_infra;
    r->ops = xcalloc((size_t)(r->n_ops ? r->n_ops : 1), sizeof *r->ops);
    if (begin_ops(r, err) != 0) {
        tb_infra_stop(r);
        return NULL;
    }
    for (int k = 0; k < r->n_users; k++) {
        int rc = pthread_create(&r->users[k].th, NULL, user_main, &r->users[k]);
        if (rc != 0) {
            tb_seterr(err, "infra: cannot start a user thread: %s", strerror(rc));
            tb_infra_stop(r);
            return NULL;
        }
        r->users[k].started = 1;
    }
    return r;
}

/* 1 while an op that began in [ps, pe) has not recorded its end. Under r->mu. */
static int phase_in_flight(const tb_infra *r, uint64_t ps, uint64_t pe) {
    for (int k = 0; k < r->n_users; k++)
        if (r->users[k].cur_start >= ps && r->users[k].cur_start < pe) return 1;
    return 0;
}

int tb_infra_collect(tb_infra *r, int p, tb_infra_stat **stats, tb_infra_op_output **outs, int *n_outs, char *err) {
    tb_infra_stat *st;
    if (p < 0 || p >= r->lv.n_phases) {
        tb_seterr(err, "infra: no phase %d (the level has %d)", p + 1, r->lv.n_phases);
        return -1;
    }
    pthread_mutex_lock(&r->mu);
    while (!r->stop && phase_in_flight(r, r->lv.phase_start_us[p], r->lv.phase_end_us[p]) &&
           tb_now_us() < r->lv.phase_end_us[p] + COLLECT_GRACE_US) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    st = xcalloc((size_t)(r->n_ops ? r->n_ops : 1), sizeof *st);
    for (int i = 0; i < r->n_ops; i++) {
        const phase_acc *a = &r->ops[i].ph[p];
        st[i].users = r->ops[i].users;
        st[i].ops = a->ops;
        st[i].errors = a->errors;
        memcpy(st[i].err_by_class, a->err_by_class, sizeof st[i].err_by_class);
        st[i].count_all = r->ops[i].count_all;
        st[i].bytes = a->bytes;
        st[i].busy_us = a->busy_us;
        if (a->hist) {
            st[i].hist = tb_hist_new();
            tb_hist_merge(st[i].hist, a->hist);
        }
    }
    *stats = st;
    *outs = r->outs;
    *n_outs = r->n_outs;
    r->outs = NULL;
    r->n_outs = 0;
    r->cap_outs = 0;
    pthread_mutex_unlock(&r->mu);
    return 0;
}

void tb_infra_stats_free(tb_infra_stat *stats, int n) {
    if (!stats) return;
    for (int i = 0; i < n; i++)
        tb_hist_free(stats[i].hist);
    free(stats);
}

void tb_infra_outputs_free(tb_infra_op_output *outs, int n) {
    if (!outs) return;
    for (int i = 0; i < n; i++)
        free(outs[i].text);
    free(outs);
}

void tb_infra_stop(tb_infra *r) {
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    /* each user's op gives up at the stop flag (its children killed) and
     * removes its folder before the thread ends */
    for (int k = 0; k < r->n_users; k++)
        if (r->users[k].started) pthread_join(r->users[k].th, NULL);
    for (int i = 0; i < r->n_ops; i++)
        if (r->ops[i].vt && r->ops[i].vt->level_end && r->ops[i].state)
            r->ops[i].vt->level_end(r->ops[i].state, &r->lv);
    free_runner(r);
}
