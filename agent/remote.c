/*
 * remote.c: the remote load generator's methods (remote.h), on the
 * coordinator's thread; remote_link.c's thread files what the agents send.
 * Every wait here is bounded, and whatever did not arrive in time becomes
 * the level's fault (level_fault): an invalid level, never a short one
 * passed off as whole.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/remote_int.h"

#define LEAD_US           1500000 /* a level's plan reaches every agent and its users this far ahead */
#define CLOCK_PROBES      8
#define READY_WAIT_US     30000000
#define PROBE_WAIT_US     60000000
#define COLLECT_WAIT_US   5000000
#define STOP_WAIT_US      10000000
#define RAMP_WAIT_US      1000000
#define RECONNECT_WAIT_US 5000000
#define KV_SWITCH_WAIT_US 5000000 /* an agent answers a kv switch (tilebench choice) */

void tb_remote_deal(int tiles, int n, const int *weights, int *lo, int *hi) {
    long total = 0;
    int given = 0, *share = xcalloc((size_t)n + 1, sizeof *share);
    double *rem = xcalloc((size_t)n + 1, sizeof *rem);
    for (int i = 0; i < n; i++)
        total += weights[i] > 0 ? weights[i] : 0;
    for (int i = 0; i < n && total > 0; i++) {
        double exact = (double)tiles * (weights[i] > 0 ? weights[i] : 0) / (double)total;
        share[i] = (int)floor(exact);
        rem[i] = exact - share[i];
        given += share[i];
    }
    while (given < tiles && total > 0) {
        int best = 0;
        for (int i = 1; i < n; i++)
            if (rem[i] > rem[best]) best = i;
        share[best]++;
        rem[best] = -1;
        given++;
    }
    for (int i = 0, next = 1; i < n; i++) {
        lo[i] = share[i] ? next : 0;
        hi[i] = share[i] ? next + share[i] - 1 : 0;
        next += share[i];
    }
    free(share);
    free(rem);
}

/* Waits on r->cv (r->mu held) until done(r) or the deadline: 1 done, 0 not. */
static int wait_for(remote *r, int (*done)(remote *), uint64_t wait_us) {
    uint64_t end = tb_now_us() + wait_us;
    while (!done(r)) {
        struct timespec ts;
        uint64_t now = tb_now_us();
        if (now >= end || (r->o->stop && *r->o->stop)) return 0;
        clock_gettime(CLOCK_MONOTONIC, &ts); /* r->cv waits on it: a wall-clock step stretches nothing */
        ts.tv_nsec += 100000000L;            /* 100 ms steps: the stop flag is seen */
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    return 1;
}

/* The coordinator thread's connection, connected again if it broke (the
 * broker restarted), trying for up to RECONNECT_WAIT_US. 0 or -1 with err. */
static int cmd_ready(remote *r, char *err) {
    uint64_t end = tb_now_us() + RECONNECT_WAIT_US;
    while (tb_broker_broken(r->cmd)) {
        if (tb_broker_reconnect(r->cmd, err) == 0) return 0;
        if (tb_now_us() >= end || (r->o->stop && *r->o->stop)) return -1;
        tb_nap_us(250000);
    }
    return 0;
}

/* Sends one command to agent a. 0 or -1 with err. */
static int send_to(remote *r, ragent *a, const char *type, json_t *body, char *err) {
    int rc = cmd_ready(r, err) == 0 ? tb_stream_send(r->cmd, a->k_cmd, type, r->coord, body, NULL, 0, err) : -1;
    if (rc != 0 && tb_broker_broken(r->cmd) && cmd_ready(r, err) == 0)
        rc = tb_stream_send(r->cmd, a->k_cmd, type, r->coord, body, NULL, 0, err);
    json_decref(body);
    return rc;
}

/* ---- the level ----------------------------------------------------------- */

static int in_level(const ragent *a) { return a->lo > 0 && !a->lost_wall_us; }

static int all_started(remote *r) {
    for (int i = 0; i < r->n; i++)
        if (in_level(&r->ag[i]) && !r->ag[i].started && !r->ag[i].error[0]) return 0;
    return 1;
}

static void reset_level(remote *r) {
    for (int i = 0; i < r->n; i++) {
        ragent *a = &r->ag[i];
        for (int p = 0; p < TB_MAX_PHASES; p++) {
            tb_lg_stats_free(a->phase[p]);
            a->phase[p] = NULL;
        }
        tb_lg_stats_free(a->all);
        r->cpu_base += a->cpu_last;
        memset(a->have_phase, 0, sizeof a->have_phase);
        memset(a->ph_ops, 0, sizeof a->ph_ops);
        memset(a->ph_errs, 0, sizeof a->ph_errs);
        memset(a->ph_cpu, 0, sizeof a->ph_cpu);
        a->all = NULL;
        a->started = a->stopped = a->have_ramp = a->users = 0;
        a->cpu_last = 0;
        a->live_ops = a->live_errs = 0;
        a->error[0] = 0;
        a->lo = a->hi = 0;
    }
    r->fault[0] = 0;
    r->collected = -1;
    r->stalls_pending = r->ramp_given = 0;
}

/* Deals the level's tiles over the agents still alive; -1 when none is. */
static int deal(remote *r, int tiles, char *err) {
    int n = 0, dealt = 0, w[TB_REMOTE_MAX_AGENTS], lo[TB_REMOTE_MAX_AGENTS], hi[TB_REMOTE_MAX_AGENTS],
        idx[TB_REMOTE_MAX_AGENTS];
    for (int i = 0; i < r->n; i++)
        if (!r->ag[i].lost_wall_us) {
            idx[n] = i;
            w[n++] = r->ag[i].info.threads;
        }
    if (!n) {
        tb_seterr(err, "every agent is lost: no load generator is left to run %d tiles", tiles);
        return -1;
    }
    tb_remote_deal(tiles, n, w, lo, hi);
    for (int k = 0; k < n; k++) {
        r->ag[idx[k]].lo = lo[k];
        r->ag[idx[k]].hi = hi[k];
        dealt += lo[k] ? hi[k] - lo[k] + 1 : 0;
    }
    if (dealt != tiles) { /* never with threads of 1..TB_AGENT_MAX_THREADS: a guard, not a path */
        tb_seterr(err, "%d of %d tiles could be placed on the agents", dealt, tiles);
        return -1;
    }
    return 0;
}

static void wire_plan(remote *r, const tb_level_plan *pl, const tb_broker_clock *clk, tb_wire_plan *wp) {
    memset(wp, 0, sizeof *wp);
    wp->seq = r->seq;
    wp->tiles = pl->tiles;
    wp->start_b = tb_broker_to_broker(clk, pl->start_us);
    wp->ramp_up_us = pl->ramp_up_us;
    wp->n_phases = pl->n_phases;
    for (int p = 0; p < pl->n_phases; p++) {
        wp->phase_start_b[p] = tb_broker_to_broker(clk, pl->phase_start_us[p]);
        wp->phase_end_b[p] = tb_broker_to_broker(clk, pl->phase_end_us[p]);
    }
}

/* Sends every dealt agent its share of the plan. */
static int send_plans(remote *r, const tb_wire_plan *base, char *err) {
    for (int i = 0; i < r->n; i++) {
        ragent *a = &r->ag[i];
        tb_wire_plan wp = *base;
        if (!in_level(a)) continue;
        wp.tile_lo = a->lo;
        wp.tile_hi = a->hi;
        if (send_to(r, a, "level", json_pack("{s:o}", "plan", tb_wire_plan_json(&wp)), err) != 0) return -1;
    }
    return 0;
}

static int rm_start_level(void *self, const tb_level_plan *pl, char *err) {
    remote *r = self;
    tb_broker_clock clk;
    tb_wire_plan wp;
    int rc = 0;
    if (cmd_ready(r, err) != 0 || tb_broker_clock_probe(r->cmd, CLOCK_PROBES, &clk, err) != 0) return -1;
    pthread_mutex_lock(&r->mu);
    reset_level(r);
    r->seq++;
    r->plan = *pl;
    rc = deal(r, pl->tiles, err);
    r->level_on = rc == 0;
    pthread_mutex_unlock(&r->mu);
    if (rc != 0) return -1;
    wire_plan(r, pl, &clk, &wp);
    if (send_plans(r, &wp, err) != 0) return -1;
    pthread_mutex_lock(&r->mu);
    wait_for(r, all_started, pl->start_us > tb_now_us() ? pl->start_us - tb_now_us() : 0);
    for (int i = 0; i < r->n && rc == 0; i++) {
        ragent *a = &r->ag[i];
        if (!in_level(a)) continue;
        if (a->error[0]) {
            tb_seterr(err, "agent %s: %s", a->info.name, a->error);
            rc = -1;
        } else if (!a->started) {
            tb_remote_fault(r, "agent %s did not confirm the level's start in time", a->info.name);
        }
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

static int all_phase(remote *r) {
    for (int i = 0; i < r->n; i++)
        if (in_level(&r->ag[i]) && !r->ag[i].have_phase[r->want_phase]) return 0;
    return 1;
}

static int rm_collect_phase(void *self, int phase, tb_lg_stats **out, char *err) {
    remote *r = self;
    tb_lg_stats *m;
    char wall[64];
    if (!r->level_on || phase < 0 || phase >= r->plan.n_phases) {
        tb_seterr(err, "load generator: no phase %d to collect", phase + 1);
        return -1;
    }
    m = tb_lg_stats_new(r->plan.tiles, r->pub.def->n_workloads);
    pthread_mutex_lock(&r->mu);
    r->want_phase = phase;
    wait_for(r, all_phase, COLLECT_WAIT_US);
    for (int i = 0; i < r->n; i++) {
        ragent *a = &r->ag[i];
        if (!a->lo) continue;
        if (a->phase[phase]) tb_lg_stats_merge(m, a->phase[phase]);
        if (a->have_phase[phase]) continue;
        if (a->lost_wall_us) {
            tb_format_wall(a->lost_wall_us, wall, sizeof wall);
            tb_remote_fault(r, "agent %s (tiles %d..%d): phase %d results missing: lost at %s", a->info.name, a->lo,
                            a->hi, phase + 1, wall);
        } else {
            tb_remote_fault(r, "agent %s (tiles %d..%d): phase %d results did not arrive within %d s", a->info.name,
                            a->lo, a->hi, phase + 1, COLLECT_WAIT_US / 1000000);
        }
    }
    r->collected = phase;
    r->stalls_pending = 1;
    pthread_mutex_unlock(&r->mu);
    *out = m;
    return 0;
}

static void rm_live(void *self, uint64_t *ops, uint64_t *errors) {
    remote *r = self;
    *ops = *errors = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n; i++) {
        *ops += r->ag[i].live_ops;
        *errors += r->ag[i].live_errs;
    }
    pthread_mutex_unlock(&r->mu);
}

static int all_stopped(remote *r) {
    for (int i = 0; i < r->n; i++)
        if (in_level(&r->ag[i]) && !r->ag[i].stopped) return 0;
    return 1;
}

static int rm_stop_level(void *self, tb_lg_stats **all, char *err) {
    remote *r = self;
    tb_lg_stats *m;
    char e[TB_ERR_LEN];
    if (!r->level_on) {
        tb_seterr(err, "load generator: no level running");
        return -1;
    }
    for (int i = 0; i < r->n; i++)
        if (in_level(&r->ag[i]) && send_to(r, &r->ag[i], "stop", json_pack("{s:i}", "seq", r->seq), e) != 0) {
            pthread_mutex_lock(&r->mu);
            tb_remote_fault(r, "agent %s: the stop did not reach it (%s)", r->ag[i].info.name, e);
            pthread_mutex_unlock(&r->mu);
        }
    m = tb_lg_stats_new(r->plan.tiles, r->pub.def->n_workloads);
    pthread_mutex_lock(&r->mu);
    wait_for(r, all_stopped, STOP_WAIT_US);
    for (int i = 0; i < r->n; i++) {
        ragent *a = &r->ag[i];
        if (a->all) tb_lg_stats_merge(m, a->all);
        if (a->lo && !a->all)
            tb_remote_fault(r, "agent %s (tiles %d..%d): the level's counts over every stage never arrived",
                            a->info.name, a->lo, a->hi);
    }
    r->level_on = 0;
    pthread_mutex_unlock(&r->mu);
    if (all)
        *all = m;
    else
        tb_lg_stats_free(m);
    return 0;
}

static int all_ramp(remote *r) {
    for (int i = 0; i < r->n; i++)
        if (in_level(&r->ag[i]) && !r->ag[i].have_ramp) return 0;
    return 1;
}

/* Worst over the agents; the CPU wait is their mean. */
static void merge_stalls(tb_lg_stalls *out, const tb_lg_stalls *s, int *n_wait) {
    if (s->max_us > out->max_us) out->max_us = s->max_us;
    if (s->p99_us > out->p99_us) out->p99_us = s->p99_us;
    if (s->own_max_us > out->own_max_us) out->own_max_us = s->own_max_us;
    if (s->own_p99_us > out->own_p99_us) out->own_p99_us = s->own_p99_us;
    if (!isnan(s->cpu_wait_pct)) {
        out->cpu_wait_pct = (isnan(out->cpu_wait_pct) ? 0 : out->cpu_wait_pct) + s->cpu_wait_pct;
        (*n_wait)++;
    }
}

/* Since the previous call: the phase collected last, or ramp-up's record
 * when phase 1 begins (waiting up to a second for the agents to send it). */
static void rm_stalls(void *self, tb_lg_stalls *out) {
    remote *r = self;
    int n_wait = 0, ramp = 0;
    memset(out, 0, sizeof *out);
    out->cpu_wait_pct = NAN;
    pthread_mutex_lock(&r->mu);
    if (r->level_on && !r->stalls_pending && r->collected < 0 && !r->ramp_given) {
        wait_for(r, all_ramp, RAMP_WAIT_US);
        r->ramp_given = ramp = 1;
    }
    for (int i = 0; i < r->n && (ramp || r->stalls_pending); i++) {
        const ragent *a = &r->ag[i];
        if (!a->lo) continue;
        if (ramp && a->have_ramp) merge_stalls(out, &a->ramp, &n_wait);
        if (!ramp && a->have_phase[r->collected]) merge_stalls(out, &a->ph_stalls[r->collected], &n_wait);
    }
    if (n_wait) out->cpu_wait_pct /= n_wait;
    r->stalls_pending = 0;
    pthread_mutex_unlock(&r->mu);
}

static double rm_cpu_seconds(void *self) {
    remote *r = self;
    double s;
    pthread_mutex_lock(&r->mu);
    s = r->cpu_base;
    for (int i = 0; i < r->n; i++)
        s += r->ag[i].cpu_last;
    pthread_mutex_unlock(&r->mu);
    return s;
}

static int rm_threads(void *self) {
    remote *r = self;
    int t = 0, any = 0;
    for (int i = 0; i < r->n; i++)
        any |= r->ag[i].lo > 0;
    for (int i = 0; i < r->n; i++)
        if (!any || r->ag[i].lo > 0) t += r->ag[i].info.threads;
    return t;
}

static int rm_n_ops(void *self, int w) { return ((remote *)self)->n_ops[w]; }
static const char *rm_op_name(void *self, int w, int k) { return ((remote *)self)->op_name[w][k]; }
static int rm_op_is_metric(void *self, int w, int k) { return ((remote *)self)->metric[w][k]; }
static double rm_mix_target_pct(void *self, int w, int k) { return ((remote *)self)->mix[w][k]; }

static int all_probed(remote *r) {
    for (int i = 0; i < r->n; i++)
        if (!r->ag[i].probed && !r->ag[i].lost_wall_us) return 0;
    return 1;
}

/* Every agent checks the SUT's servers from where its load will come from;
 * the first also that they hold data for every tile. */
static int rm_probe(void *self, int tiles, char *err) {
    remote *r = self;
    int rc = 0;
    for (int i = 0; i < r->n; i++) {
        /* the data of every tile is the SUT's own: one agent checks it; each checks its path to the servers */
        r->ag[i].probed = 0;
        if (send_to(r, &r->ag[i], "probe", json_pack("{s:i}", "tiles", i == 0 ? tiles : 1), err) != 0) return -1;
    }
    pthread_mutex_lock(&r->mu);
    wait_for(r, all_probed, PROBE_WAIT_US);
    for (int i = 0; i < r->n && rc == 0; i++) {
        const ragent *a = &r->ag[i];
        if (a->probed && a->probe_ok) continue;
        rc = -1;
        if (a->probed)
            tb_seterr(err, "agent %s: %s", a->info.name, a->error);
        else
            tb_seterr(err, "agent %s did not answer the SUT check within %d s", a->info.name, PROBE_WAIT_US / 1000000);
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

static int kv_answered(remote *r) {
    const ragent *a = &r->ag[r->kv_agent];
    return a->kv_done == r->kv_want || a->lost_wall_us;
}

/* Sends the switch to the agent that runs tile this level and waits for its
 * answer (KV_SWITCH_WAIT_US). Called from the infrastructure runner's
 * threads, not the coordinator's: it uses a broker connection of its own. */
static int rm_kv_switch(void *self, int tile, const char *host, int port, char *err) {
    remote *r = self;
    tb_broker *b = NULL;
    int i, rc = -1, ok;
    unsigned id;
    json_t *msg = NULL;
    pthread_mutex_lock(&r->kv_mu);
    pthread_mutex_lock(&r->mu);
    for (i = 0; i < r->n && !(in_level(&r->ag[i]) && r->ag[i].lo <= tile && tile <= r->ag[i].hi); i++)
        ;
    id = ++r->kv_seq;
    pthread_mutex_unlock(&r->mu);
    if (i == r->n) {
        tb_seterr(err, "no agent runs tile %d this level", tile);
        goto out;
    }
    msg = json_pack("{s:I, s:i, s:s, s:i}", "id", (json_int_t)id, "tile", tile, "host", host ? host : "", "port", port);
    if (!msg) {
        tb_seterr(err, "kv switch of tile %d: a host that is not UTF-8", tile);
        goto out;
    }
    if (tb_broker_connect(&r->uri, 2000, &b, err) != 0 ||
        tb_stream_send(b, r->ag[i].k_cmd, "kv_switch", r->coord, msg, NULL, 0, err) != 0)
        goto out;
    pthread_mutex_lock(&r->mu);
    r->kv_agent = i;
    r->kv_want = id;
    ok = wait_for(r, kv_answered, KV_SWITCH_WAIT_US);
    if (!ok || r->ag[i].kv_done != id)
        tb_seterr(err, "agent %s: no answer to the kv switch of tile %d%s", r->ag[i].info.name, tile,
                  r->ag[i].lost_wall_us ? " (lost)" : "");
    else if (!r->ag[i].kv_ok)
        tb_seterr(err, "agent %s: %s", r->ag[i].info.name, r->ag[i].kv_error);
    else
        rc = 0;
    pthread_mutex_unlock(&r->mu);
out:
    json_decref(msg);
    tb_broker_close(b);
    pthread_mutex_unlock(&r->kv_mu);
    return rc;
}

static int rm_parts(void *self, tb_lg_part *out, int max) {
    remote *r = self;
    int n = 0, p;
    pthread_mutex_lock(&r->mu);
    p = r->collected;
    for (int i = 0; i < r->n && n < max; i++) {
        const ragent *a = &r->ag[i];
        tb_lg_part *o = &out[n++];
        memset(o, 0, sizeof *o);
        snprintf(o->name, sizeof o->name, "%s", a->info.name);
        snprintf(o->host, sizeof o->host, "%s", a->info.host);
        o->tile_lo = a->lo;
        o->tile_hi = a->hi;
        o->threads = a->info.threads;
        o->users = a->users;
        o->clock_known = a->started;
        o->clock_offset_us = a->offset_us;
        o->clock_bound_us = a->bound_us;
        o->lost_wall_us = a->lost_wall_us;
        o->stalls.cpu_wait_pct = NAN;
        if (p >= 0 && a->have_phase[p]) {
            o->ops = a->ph_ops[p];
            o->errors = a->ph_errs[p];
            o->cpu_s = a->ph_cpu[p] - (p > 0 ? a->ph_cpu[p - 1] : 0);
            o->stalls = a->ph_stalls[p];
        }
    }
    pthread_mutex_unlock(&r->mu);
    return n;
}

static const char *rm_level_fault(void *self) { return ((remote *)self)->fault; }

static const char *rm_gone(void *self) {
    remote *r = self;
    int alive = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n; i++)
        alive += !r->ag[i].lost_wall_us;
    pthread_mutex_unlock(&r->mu);
    return alive ? NULL : "every agent is lost: no load generator is left for another level";
}

static void rm_close(void *self) {
    remote *r = self;
    char err[TB_ERR_LEN];
    tb_remote_link_stop(r);
    for (int i = 0; r->cmd && i < r->n; i++) {
        if (!tb_broker_broken(r->cmd)) send_to(r, &r->ag[i], "release", json_object(), err);
        if (!tb_broker_broken(r->cmd)) tb_remote_release(r->cmd, r->ag[i].k_lease, r->coord);
    }
    if (r->cmd && !tb_broker_broken(r->cmd)) {
        redisReply *x = tb_broker_cmd(r->cmd, err, "DEL %s", r->res_key);
        if (x) freeReplyObject(x);
    }
    for (int i = 0; i < r->n; i++) {
        for (int p = 0; p < TB_MAX_PHASES; p++)
            tb_lg_stats_free(r->ag[i].phase[p]);
        tb_lg_stats_free(r->ag[i].all);
    }
    free(r->ag);
    tb_broker_close(r->cmd);
    tb_broker_close(r->rd);
    tb_broker_uri_free(&r->uri);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->kv_mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

static const tb_loadgen_ops remote_ops = {
    .start_level = rm_start_level,
    .collect_phase = rm_collect_phase,
    .live = rm_live,
    .stop_level = rm_stop_level,
    .stalls = rm_stalls,
    .cpu_seconds = rm_cpu_seconds,
    .threads = rm_threads,
    .n_ops = rm_n_ops,
    .op_name = rm_op_name,
    .op_is_metric = rm_op_is_metric,
    .mix_target_pct = rm_mix_target_pct,
    .probe = rm_probe,
    .close = rm_close,
    .parts = rm_parts,
    .level_fault = rm_level_fault,
    .gone = rm_gone,
    .kv_switch = rm_kv_switch,
};

int tb_loadgen_remote_open(const tb_tiledef *def, const tb_sut_endpoints *ep, const tb_remote_opts *o, tb_loadgen **out,
                           char *err) {
    remote *r = xcalloc(1, sizeof *r);
    char host[64] = "";
    int rc;
    r->pub.ops = &remote_ops;
    r->pub.self = r;
    r->pub.def = def;
    r->pub.lead_us = LEAD_US;
    r->o = o;
    r->ep = ep;
    r->collected = -1;
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->kv_mu, NULL);
    {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&r->cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    gethostname(host, sizeof host - 1);
    snprintf(r->coord, sizeof r->coord, "%s:%ld:%llx", host, (long)getpid(), (unsigned long long)tb_wall_us());
    snprintf(r->res_key, sizeof r->res_key, "tb:res:%s", r->coord);
    if (tb_broker_uri_parse(o->broker_uri, &r->uri, err) != 0 || tb_broker_connect(&r->uri, 2000, &r->cmd, err) != 0 ||
        tb_stream_group(r->cmd, r->res_key, "coord", "$", err) != 0) {
        rm_close(r);
        return -1;
    }
    rc = tb_remote_gather(r, err);
    if (rc == 0 && tb_remote_link_start(r, err) != 0) rc = -1;
    if (rc == 0) rc = tb_remote_hand_out(r, err);
    if (rc != 0) {
        rm_close(r);
        return rc;
    }
    *out = &r->pub;
    return 0;
}
