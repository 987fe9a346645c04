/*
 * remote_link.c: the remote load generator's link thread (remote_int.h).
 * Its own broker connection; every second it renews the lease on every
 * agent it holds and checks that each agent still heartbeats; between
 * those it reads the results stream, blocking at most 200 ms, and files
 * each message with its agent. An agent unheard of for TB_AGENT_ALIVE_MS
 * (its last heartbeat dated by its key's time left, PTTL) is lost: the
 * level in progress is invalid, with the agent named and the time it was
 * last heard. A broken broker connection is retried every half second; while it
 * is down no agent ages (they cannot reach the broker either), and once it
 * is back a message that never arrived shows as missing results.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/remote_int.h"

#define LINK_BLOCK_MS   200
#define RESULTS_KEEP_MS 60000 /* the results stream outlives a dead coordinator by this much */

static const char renew_lua[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end "
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0";
static const char release_lua[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

int tb_remote_claim(tb_broker *b, const char *key, const char *coord, char *err) {
    redisReply *r = tb_broker_cmd(b, err, "SET %s %s NX PX %d", key, coord, TB_AGENT_LEASE_MS);
    int ok = r && r->type == REDIS_REPLY_STATUS;
    if (r) freeReplyObject(r);
    return ok ? 0 : -1;
}

/* Renews our lease, or takes it again when the broker lost it (a restart);
 * -1 when another coordinator holds it or the broker failed. */
int tb_remote_renew(tb_broker *b, const char *key, const char *coord, char *err) {
    redisReply *r = tb_broker_cmd(b, err, "EVAL %s 1 %s %s %d", renew_lua, key, coord, TB_AGENT_LEASE_MS);
    int ok = r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    if (r) freeReplyObject(r);
    return ok ? 0 : -1;
}

void tb_remote_release(tb_broker *b, const char *key, const char *coord) {
    char err[TB_ERR_LEN];
    redisReply *r = tb_broker_cmd(b, err, "EVAL %s 1 %s %s", release_lua, key, coord);
    if (r) freeReplyObject(r);
}

/* A reason already given is not repeated (a lease found taken every second). */
void tb_remote_fault(remote *r, const char *fmt, ...) {
    size_t n = strlen(r->fault);
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (strstr(r->fault, why) || n + 3 >= sizeof r->fault) return;
    snprintf(r->fault + n, sizeof r->fault - n, "%s%s", n ? "; " : "", why);
}

static ragent *find(remote *r, const char *name) {
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->ag[i].info.name, name) == 0) return &r->ag[i];
    return NULL;
}

static uint64_t ju64(const json_t *o, const char *k) {
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* The ops of every workload, from the first "ready". */
static void take_ops(remote *r, const json_t *ws) {
    const json_t *ops, *op;
    size_t w, k;
    if (r->n_ops[0] || !json_is_array(ws)) return;
    json_array_foreach(ws, w, ops) {
        if (w >= (size_t)r->pub.def->n_workloads) break;
        json_array_foreach(ops, k, op) {
            if (k >= TB_MAX_OPS) break;
            snprintf(r->op_name[w][k], sizeof r->op_name[w][k], "%s",
                     json_string_value(json_object_get(op, "name")) ? json_string_value(json_object_get(op, "name"))
                                                                    : "?");
            r->metric[w][k] = json_is_true(json_object_get(op, "metric"));
            r->mix[w][k] = json_number_value(json_object_get(op, "mix"));
            r->n_ops[w] = (int)k + 1;
        }
    }
}

/* Statistics of a message, or NULL with a fault. */
static tb_lg_stats *take_stats(remote *r, ragent *a, const tb_msg *m) {
    tb_lg_stats *s = NULL;
    char err[TB_ERR_LEN];
    int tiles, nw;
    if (m->stats && tb_lg_stats_peek_shape(m->stats, m->stats_len, &tiles, &nw, err) == 0 &&
        (tiles != r->plan.tiles || nw != r->pub.def->n_workloads)) {
        tb_remote_fault(r, "agent %s: statistics of another shape (%d tiles x %d workloads)", a->info.name, tiles, nw);
        return NULL;
    }
    if (!m->stats || tb_lg_stats_decode(m->stats, m->stats_len, &s, err) != 0) {
        tb_remote_fault(r, "agent %s: unreadable statistics (%s)", a->info.name, m->stats ? err : "none sent");
        return NULL;
    }
    if (s->tiles != r->plan.tiles || s->n_workloads != r->pub.def->n_workloads) {
        tb_remote_fault(r, "agent %s: statistics of another shape", a->info.name);
        tb_lg_stats_free(s);
        return NULL;
    }
    return s;
}

static void on_phase(remote *r, ragent *a, const tb_msg *m) {
    long long p = json_integer_value(json_object_get(m->body, "phase"));
    if (p < 0 || p >= r->plan.n_phases || a->have_phase[p]) return;
    a->phase[p] = take_stats(r, a, m);
    tb_wire_stalls_parse(json_object_get(m->body, "stalls"), &a->ph_stalls[p]);
    a->ph_cpu[p] = a->cpu_last = json_number_value(json_object_get(m->body, "cpu_s"));
    if (a->phase[p]) {
        size_t cells = (size_t)a->phase[p]->tiles * (size_t)a->phase[p]->n_workloads * TB_MAX_OPS;
        for (size_t i = 0; i < cells; i++) {
            a->ph_ops[p] += a->phase[p]->cells[i].count;
            a->ph_errs[p] += a->phase[p]->cells[i].errors;
        }
    }
    a->have_phase[p] = 1;
}

/* Agent a is lost from now (under r->mu): a fault of the level it runs in. */
static void lose(remote *r, ragent *a, const char *why) {
    char wall[64];
    if (a->lost_wall_us) return;
    a->lost_wall_us = tb_wall_us();
    tb_format_wall(a->lost_wall_us, wall, sizeof wall);
    if (r->level_on && a->lo) tb_remote_fault(r, "agent %s %s at %s", a->info.name, why, wall);
    pthread_cond_broadcast(&r->cv);
}

/* One message from an agent (under r->mu). */
static void file_msg(remote *r, const tb_msg *m) {
    ragent *a = find(r, m->from);
    int seq = (int)json_integer_value(json_object_get(m->body, "seq"));
    if (!a) return;
    a->last_seen_us = tb_now_us();
    if (strcmp(m->type, "ready") == 0) {
        uint64_t t = ju64(m->body, "threads");
        if (a->ready) return; /* once per run */
        take_ops(r, json_object_get(m->body, "workloads"));
        if (t >= 1 && t <= TB_AGENT_MAX_THREADS) a->info.threads = (int)t;
        a->ready = 1;
    } else if (strcmp(m->type, "leaving") == 0) {
        lose(r, a, "left the run (stopped on its host)");
    } else if (strcmp(m->type, "probed") == 0) {
        a->probed = 1;
        a->probe_ok = json_is_true(json_object_get(m->body, "ok"));
        snprintf(a->error, sizeof a->error, "%s", json_string_value(json_object_get(m->body, "error")) ?: "");
    } else if (strcmp(m->type, "error") == 0) {
        snprintf(a->error, sizeof a->error, "%s", json_string_value(json_object_get(m->body, "error")) ?: "error");
    } else if (strcmp(m->type, "kv_switched") == 0) {
        a->kv_done = (unsigned)ju64(m->body, "id");
        a->kv_ok = json_is_true(json_object_get(m->body, "ok"));
        snprintf(a->kv_error, sizeof a->kv_error, "%s", json_string_value(json_object_get(m->body, "error")) ?: "");
    } else if (seq != r->seq) {
        return; /* a level before this one */
    } else if (strcmp(m->type, "started") == 0) {
        a->offset_us = (int64_t)json_integer_value(json_object_get(m->body, "offset_us"));
        a->bound_us = ju64(m->body, "bound_us");
        a->users = (int)ju64(m->body, "users");
        a->started = 1;
    } else if (strcmp(m->type, "rampup") == 0) {
        tb_wire_stalls_parse(json_object_get(m->body, "stalls"), &a->ramp);
        a->cpu_last = json_number_value(json_object_get(m->body, "cpu_s"));
        a->have_ramp = 1;
    } else if (strcmp(m->type, "live") == 0) {
        a->live_ops = ju64(m->body, "ops");
        a->live_errs = ju64(m->body, "errors");
    } else if (strcmp(m->type, "phase") == 0) {
        on_phase(r, a, m);
    } else if (strcmp(m->type, "stopped") == 0) {
        if (a->stopped) return; /* once per level */
        if (json_is_true(json_object_get(m->body, "had_level"))) a->all = take_stats(r, a, m);
        a->stopped = 1;
    }
}

/* Leases renewed, heartbeats checked: once a second. */
static void every_second(remote *r, uint64_t now) {
    char err[TB_ERR_LEN], wall[64];
    redisReply *ex = tb_broker_cmd(r->rd, err, "PEXPIRE %s %d", r->res_key, RESULTS_KEEP_MS);
    if (ex) freeReplyObject(ex); /* a coordinator that dies leaves no stream behind for long */
    for (int i = 0; i < r->n; i++) {
        ragent *a = &r->ag[i];
        redisReply *x;
        long long left_ms;
        if (a->lost_wall_us) continue;
        if (tb_remote_renew(r->rd, a->k_lease, r->coord, err) != 0 && !tb_broker_broken(r->rd)) {
            /* the agent drops our run when it sees another holder: it is lost to us */
            pthread_mutex_lock(&r->mu);
            lose(r, a, "lost: its lease was taken by another coordinator");
            pthread_mutex_unlock(&r->mu);
            continue;
        }
        /* the heartbeat key's time left dates the agent's last heartbeat */
        x = tb_broker_cmd(r->rd, err, "PTTL %s", a->k_agent);
        if (!x) return;
        left_ms = x->type == REDIS_REPLY_INTEGER ? x->integer : -2;
        freeReplyObject(x);
        pthread_mutex_lock(&r->mu);
        if (left_ms > 0 && left_ms <= TB_AGENT_ALIVE_MS) {
            uint64_t beat = now - (uint64_t)(TB_AGENT_ALIVE_MS - left_ms) * 1000;
            if (beat > a->last_seen_us) a->last_seen_us = beat;
        }
        if (now - a->last_seen_us > (uint64_t)TB_AGENT_ALIVE_MS * 1000) {
            a->lost_wall_us = tb_wall_us() - (int64_t)(now - a->last_seen_us);
            tb_format_wall(a->lost_wall_us, wall, sizeof wall);
            if (r->level_on && a->lo)
                tb_remote_fault(r, "agent %s lost at %s (no heartbeat for %d s)", a->info.name, wall,
                                TB_AGENT_ALIVE_MS / 1000);
            pthread_cond_broadcast(&r->cv);
        }
        pthread_mutex_unlock(&r->mu);
    }
}

/* Back after the broker was away: no agent is held to the time it could not be heard. */
static void link_back(remote *r) {
    char err[TB_ERR_LEN];
    uint64_t now = tb_now_us();
    if (tb_stream_group(r->rd, r->res_key, "coord", "0", err) != 0) return;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n; i++)
        r->ag[i].last_seen_us = now;
    pthread_mutex_unlock(&r->mu);
}

static void *link_main(void *arg) {
    remote *r = arg;
    uint64_t next = 0;
    tb_msg m[32];
    int n, bad;
    char err[TB_ERR_LEN];
    for (;;) {
        uint64_t now = tb_now_us();
        pthread_mutex_lock(&r->mu);
        if (r->quit) {
            pthread_mutex_unlock(&r->mu);
            break;
        }
        pthread_mutex_unlock(&r->mu);
        if (tb_broker_broken(r->rd)) {
            if (tb_broker_reconnect(r->rd, err) == 0)
                link_back(r);
            else
                tb_nap_us(500000);
            continue;
        }
        if (now >= next) {
            next = now + (uint64_t)TB_AGENT_HEARTBEAT_MS * 1000;
            every_second(r, now);
        }
        if (tb_stream_read(r->rd, r->res_key, "coord", "coordinator", LINK_BLOCK_MS, m, 32, &n, &bad, err) != 0)
            continue;
        pthread_mutex_lock(&r->mu);
        for (int i = 0; i < n; i++)
            if (tb_msg_after(&m[i], r->last_ms, r->last_seq)) { /* a group made again from "0" replays */
                r->last_ms = m[i].id_ms;
                r->last_seq = m[i].id_seq;
                file_msg(r, &m[i]);
            }
        if (n) pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        for (int i = 0; i < n; i++)
            tb_msg_free(&m[i]);
    }
    return NULL;
}

int tb_remote_link_start(remote *r, char *err) {
    if (tb_broker_connect(&r->uri, 2000, &r->rd, err) != 0) return -1;
    tb_broker_set_timeout(r->rd, LINK_BLOCK_MS + 2000);
    if (pthread_create(&r->th, NULL, link_main, r) != 0) {
        tb_seterr(err, "cannot start the broker link thread");
        return -1;
    }
    r->th_on = 1;
    return 0;
}

void tb_remote_link_stop(remote *r) {
    if (!r->th_on) return;
    pthread_mutex_lock(&r->mu);
    r->quit = 1;
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->th, NULL);
    r->th_on = 0;
}
